// The catalog of runnable algorithms: what `hcube run`, `hcube list` and the
// benchmarks use to find an operation's algorithms, their source formulas and a
// self-checking driver (deterministic input, serial reference, verification).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/collectives/record.hpp>
#include <hcube/machine.hpp>

namespace hcube {

enum class elem_type { int32, int64, float64 };
std::string_view to_string(elem_type t) noexcept;
std::optional<elem_type> parse_elem_type(std::string_view s) noexcept;
// Bytes of one element: 4 for int32, 8 for int64 and double.
constexpr std::size_t elem_bytes(elem_type t) noexcept {
    return t == elem_type::int32 ? 4 : 8;
}

// What `hcube calibrate` measured on this machine: at one
// operation, port model, dimension and message size, the algorithm whose
// median wall time per call was the least, and every measured median.
struct measured_fastest {
    std::string op;
    port_model ports = port_model::single_port;
    int dim = 0;
    std::size_t bytes = 0; // the catalog's m in bytes
    std::string algo;
    std::map<std::string, double> median_seconds; // by algorithm
};
using measured_table = std::vector<measured_fastest>;

// One `hcube run` invocation. `words` is the textbook's m for the operation
// (see README: the whole message, a node's contribution, a block, a packet).
struct run_params {
    std::string op;
    std::string algo;
    int dim = 4;
    std::size_t words = 1;
    int root = 0;
    long long shift = 1;
    port_model ports = port_model::single_port;
    cost_model cost{};
    // Messages a directed link buffers (config::link_capacity); 0 makes every
    // send synchronous.
    std::size_t link_capacity = config{}.link_capacity;
    // The link implementation (config::links; automatic: HCUBE_LINKS, else ring).
    link_impl links = link_impl::automatic;
    // What runs the nodes (config::executor; automatic: HCUBE_EXECUTOR, else
    // threads) and, for fibers only, their worker threads (0: one per usable
    // CPU) and each node's stack (0: default_stack_bytes). machine_config
    // refuses workers or stack_bytes with threads.
    executor_kind executor = executor_kind::automatic;
    // In-process or over the ranks of an MPI job (config::backend; automatic:
    // HCUBE_BACKEND, else in-process).
    backend_kind backend = backend_kind::automatic;
    int workers = 0;
    std::size_t stack_bytes = 0;
    elem_type type = elem_type::int32;
    // Record every message and primitive call (config::trace) in the report.
    bool trace = false;
    // --cost calibrated: the cores that run the nodes, and `auto` compares
    // predicted wall times (predicted_wall_time); 0: `auto` compares the
    // sources' closed forms (virtual time, Table 4.1).
    int cores = 0;
    // --cost calibrated with a measured table: `auto` picks the algorithm
    // measured fastest at this operation, port model and dimension and the
    // nearest measured size (in log scale), when it fits; the model decides
    // elsewhere.
    std::shared_ptr<const measured_table> measured;
    // Operation-specific choices (--order, --index, --kernel, --schedule, ...),
    // validated against the entry's option_specs, defaults filled in.
    std::map<std::string, std::string> options;

    const std::string& option(const std::string& name) const;
};

struct option_spec {
    std::string name;                // flag without dashes, e.g. "order"
    std::vector<std::string> values; // allowed values
    std::string fallback;            // used when the flag is absent
    std::string help;
};

struct run_outcome {
    bool verified = false;   // over MPI: on every rank, each checking its own nodes
    int rank = 0;            // the MPI rank that returned it (0 in-process)
    int workers = 0;         // fibers: the worker threads that ran the nodes
    double formula_time = 0; // the source's closed form for these parameters
    run_report report;
    std::string note; // what a failed verification found, or extra facts
};

// The form a formula time was computed with, for parameters where the source's
// formula (algorithm_entry::formula) does not give it exactly.
struct exact_form {
    std::string text;     // e.g. "8 t_s + 23 t_w"
    double seed_time = 0; // the source's formula evaluated as printed
    std::string why;      // why the two differ, with the numbers
};

// The work of one call summed over its nodes (docs/cost-model.md): messages,
// of which `routed` go through the E-cube router, words sent, and words
// copied or combined in place (packing, unpacking, a reduction's operator).
struct call_work {
    double messages = 0, routed = 0, words = 0, local_words = 0;
};

struct algorithm_entry {
    // The algorithm's record (collectives/: name, source section, formula, cost,
    // requirements); entry_of fills the fields below from it.
    const algorithm_record* record = nullptr;
    std::string op;      // e.g. "allgather"
    std::string algo;    // e.g. "hypercube"
    std::string source;  // e.g. "Grama et al. Alg. 4.7, Eq. 4.4"
    std::string formula; // e.g. "t_s log p + t_w m (p-1)"
    std::vector<option_spec> options;
    // Why the algorithm cannot run with these parameters; empty when it can.
    std::function<std::string(const run_params&)> unfit;
    std::function<double(const run_params&)> formula_time;
    // Runs once on `m`, whose config matches the parameters (see make_machine).
    std::function<run_outcome(machine&, const run_params&)> run;
    // Empty, or for a reduction whose algorithm combines in node order with any
    // associative operator: runs again with 2x2 matrices and their product,
    // which does not commute, and returns the first mismatch ("" if none).
    std::function<std::string(machine&, const run_params&)> run_ordered;
    // Empty, or nullopt, when `formula` evaluates to formula_time exactly.
    std::function<std::optional<exact_form>(const run_params&)> exact;
    // Why the algorithm deadlocks with link_capacity 0 (synchronous sends)
    // under these parameters; empty when it does not need buffered links.
    std::function<std::string(const run_params&)> needs_buffered_links;
    // Empty, or the name of an algorithm of the operation whose very schedule
    // this one runs under these parameters (the same code sends the same
    // messages on the same links), e.g. gray-bidirectional is gray's plan for
    // q = 1. Timing both would race a plan against itself, so where that one
    // fits too, `hcube bench collective --algo all`, the survey and `auto
    // --cost calibrated` take only that one (catalog::same_plan).
    std::function<std::string(const run_params&)> same_plan_as;
    // Empty, or the words `hcube draw` uses on a dim-cube when --words is not
    // given, so that the picture shows all the algorithm does.
    std::function<std::size_t(int dim)> drawn_words;
    // Empty, or the call's work for p's dimension and words, for an algorithm
    // whose nodes do unequal shares or copy and combine words its closed form
    // leaves out; predicted_wall_time reads it.
    std::function<call_work(const run_params&)> work;
};

class catalog {
public:
    void add(algorithm_entry e);
    // The records `auto` chooses among for `op`: the table the operation's
    // C++ `automatic` uses, so both pick the same algorithm.
    void set_auto(std::string_view op, std::span<const algorithm_record> table);
    const std::vector<algorithm_entry>& entries() const noexcept { return entries_; }
    std::vector<std::string> ops() const; // in registration order, no repeats
    std::vector<const algorithm_entry*> algorithms(std::string_view op) const;
    const algorithm_entry* find(std::string_view op, std::string_view algo) const;
    // The entry whose schedule e runs under p (e.same_plan_as, e's option
    // defaults filled in) when that entry fits p too; null otherwise.
    const algorithm_entry* same_plan(const algorithm_entry& e, const run_params& p) const;
    // `auto`: cheapest() over the operation's auto table (the fitting record
    // with the smallest cost, the first on a tie), as the C++ `automatic`;
    // with p.cores > 0 the measured fastest (run_params::measured) when it
    // fits, else the fitting entry of the operation (CM-200 ones too) with
    // the least predicted_wall_time, the first on a tie; never an entry that
    // runs another fitting one's plan (same_plan).
    const algorithm_entry* choose(const run_params& p) const;
    // Why choose(p) picked what it picked, for the run report, e.g.
    // "measured fastest here at dim 4, m = 65536 bytes (hcube calibrate)".
    std::string choice_basis(const run_params& p) const;
    // Why each algorithm of p.op does not fit, "algo: reason; ...": what `auto`
    // reports when choose finds nothing.
    std::string unfit_reasons(const run_params& p) const;

private:
    std::vector<algorithm_entry> entries_;
    std::map<std::string, std::span<const algorithm_record>, std::less<>> auto_;
};

// What a record's cost and requirements see of a run: words = --words, the
// root, the shift, the array of --ring (a node program's natural one, id,
// when not given), a commuting operator (the catalog reduces with plus).
call_shape shape_of(const run_params& p);

// An entry with the record's name, source, formula, requirements (unfit) and
// cost (formula_time); the caller adds run and whatever else it has.
algorithm_entry entry_of(const algorithm_record& r);

const catalog& builtin_catalog();

// A routed message's cost in start-ups: t_s for the message, and about as
// much again for each of the router's lock and its receiver's park and wake.
inline constexpr double routed_start_ups = 3;
// What `auto` compares under --cost calibrated: wall time on c = min(p.cores,
// p) cores is at least the closed form (the critical chain) and at least the
// work of all nodes shared out over the cores,
//   max(formula, (t_s (messages + (routed_start_ups - 1) routed) + t_w words
//                 + t_w/2 local_words) / c)
// with p times the formula as the work when the entry has no `work`. A local word
// costs t_w/2: a message word is copied twice (into and out of the link).
double predicted_wall_time(const algorithm_entry& e, const run_params& p);

// A machine configured for `p` (dim, ports, cost, links, executor). Throws
// usage_error when the dimension is beyond what the executor runs
// (max_dim_of), or when p gives workers or stack_bytes and the executor
// resolves to threads (each node is then its own OS thread with the system's
// stack).
config machine_config(const run_params& p);

// The entry's exact form for `p` (nullopt: `formula` itself is exact).
std::optional<exact_form> exact_formula(const algorithm_entry& e, const run_params& p);

// What the entry says about buffered links for `p` ("" when it needs none).
std::string buffered_links_need(const algorithm_entry& e, const run_params& p);

// The data a run holds at once over all nodes, inputs, results, copies in
// flight and the serial reference (a small multiple of the operation's inputs
// and outputs): `elements` of `bytes` each, counted as `counted` ("2 p^2 m").
struct data_estimate {
    double elements = 0;
    double bytes = 0;
    std::string counted;
};
data_estimate estimated_data(const algorithm_entry& e, const run_params& p);

// An estimate of the memory a run needs: the machine (memory_estimate, the model
// `hcube info` prints) plus estimated_data.
// `what` receives how it was counted.
double estimated_bytes(const algorithm_entry& e, const run_params& p, std::string* what = nullptr);

// usage_error "WHAT needs about N (COUNTED), more than ..." when `need` bytes
// exceed this computer's physical memory or what its address-space limit
// (RLIMIT_AS, ulimit -v) leaves the process: refused before allocating, as
// std::bad_alloc halfway through says nothing.
void check_memory(const std::string& what, double need, const std::string& counted);

// The parameters of the node-order check (algorithm_entry::run_ordered): p on
// its first 12 dimensions (the root kept within them), or p itself where the
// algorithm or the machine's `ranks` need the whole cube.
run_params ordered_check_params(const algorithm_entry& e, const run_params& p, int ranks);
// Whether the node-order check finds e's results out of order, on m (p's
// machine) or a smaller one (ordered_check_params): the mismatch, or empty if
// none (or if e promises no order, or its data exceed 2^20 elements).
std::string ordered_mismatch(const algorithm_entry& e, const run_params& p, machine& m);

// Resolves `auto`, validates options and fit, refuses runs whose estimated
// memory exceeds physical memory or whose formula time overflows, runs on a
// fresh machine. Throws usage_error with one clear line for anything that
// does not fit.
run_outcome run_algorithm(run_params p);

// The entry run_algorithm runs for `p`: `auto` resolved (throwing usage_error,
// with every candidate's reason, when nothing fits).
const algorithm_entry& resolve_algorithm(const run_params& p);

namespace cm200 {
struct options;
}
// The CM-200 entries' --order and --index options (Mathur & Johnsson), for every
// program that runs those algorithms from run_params (the catalog, hcube draw).
cm200::options cm200_options_of(const run_params& p);

namespace detail {
// Each family of algorithms registers itself from its own source file.
void register_rooted(catalog& c);     // Grama et al.: broadcast, reduce, scatter, gather
void register_reductions(catalog& c); // Grama et al.: allgather, reduce-scatter, allreduce, scans
void register_personalized(
    catalog& c); // Grama et al.: scatter, gather, all-to-all personalized, shift
void register_cm200(
    catalog& c); // Mathur & Johnsson: Hamiltonian-cycle all-to-all broadcast/reduction
void register_aspc(catalog& c); // Hu: all-to-some personalized, +-2^b-descend
// Grama et al. 4.7.2: the all-port algorithms.
void register_all_port(catalog& c);

// The exact form of an algorithm that splits m words into p blocks (Eq. 4.13,
// 4.14: 2 (t_s log p + t_w (p-1) m/p)) when p does not divide m: its critical
// chain of `messages` messages carrying `words` words.
std::optional<exact_form> uneven_blocks_form(const run_params& p, std::size_t messages,
                                             std::size_t words);

// `e` marked as deadlocking with link_capacity 0, for `why`, on cubes of
// dimension >= min_dim.
algorithm_entry needs_buffers(algorithm_entry e, int min_dim, std::string why);
// Why ring algorithms need buffered links.
inline constexpr std::string_view ring_sends_first =
    "every node sends to its successor on a ring before it receives from its predecessor";
} // namespace detail

} // namespace hcube
