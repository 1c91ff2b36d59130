// The catalog of runnable algorithms: what `hcube run`, `hcube list` and the
// benchmarks use to find an operation's algorithms, their seed formulas and a
// self-checking driver (deterministic input, serial reference, verification).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/machine.hpp>

namespace hcube {

enum class elem_type { int32, int64, float64 };
std::string_view to_string(elem_type t) noexcept;
std::optional<elem_type> parse_elem_type(std::string_view s) noexcept;

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
    elem_type type = elem_type::int32;
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
    bool verified = false;
    double formula_time = 0; // the seed's closed form for these parameters
    run_report report;
    std::string note; // what a failed verification found, or extra facts
};

struct algorithm_entry {
    std::string op;      // e.g. "allgather"
    std::string algo;    // e.g. "hypercube"
    std::string source;  // e.g. "seed 000, Alg. 4.7, Eq. 4.4"
    std::string formula; // e.g. "t_s log p + t_w m (p-1)"
    std::vector<option_spec> options;
    // Why the algorithm cannot run with these parameters; empty when it can.
    std::function<std::string(const run_params&)> unfit;
    std::function<double(const run_params&)> formula_time;
    // Runs once on `m`, whose config matches the parameters (see make_machine).
    std::function<run_outcome(machine&, const run_params&)> run;
};

class catalog {
public:
    void add(algorithm_entry e);
    const std::vector<algorithm_entry>& entries() const noexcept { return entries_; }
    std::vector<std::string> ops() const; // in registration order, no repeats
    std::vector<const algorithm_entry*> algorithms(std::string_view op) const;
    const algorithm_entry* find(std::string_view op, std::string_view algo) const;
    // `auto`: the fitting algorithm with the smallest formula time (Table 4.1
    // takes the minimum of its expressions the same way).
    const algorithm_entry* choose(const run_params& p) const;

private:
    std::vector<algorithm_entry> entries_;
};

const catalog& builtin_catalog();

// A machine configured for `p` (dim, ports, cost).
config machine_config(const run_params& p);

// Resolves `auto`, validates options and fit, runs on a fresh machine.
// Throws usage_error with one clear line for anything that does not fit.
run_outcome run_algorithm(run_params p);

namespace detail {
// Each family of algorithms registers itself from its own source file.
void register_rooted(catalog& c);       // seed 000: broadcast, reduce, scatter, gather
void register_reductions(catalog& c);   // seed 000: allgather, reduce-scatter, allreduce, scans
void register_personalized(catalog& c); // seed 000: scatter, gather, all-to-all personalized, shift
void register_cm200(catalog& c); // seed 002: Hamiltonian-cycle all-to-all broadcast/reduction
void register_aspc(catalog& c);  // seed 001: all-to-some personalized, +-2^b-descend
} // namespace detail

} // namespace hcube
