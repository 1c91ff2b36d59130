// hcube run OP ... and hcube list: every catalog algorithm from the command
// line, verified against its serial reference, its virtual time printed next to
// the source's formula (docs/cli.md).
//
// Exit status: 0 verified, 1 not verified (or the run failed), 2 usage error
// (unknown op, algorithm or option, an algorithm that does not fit, a bad
// number, a run too large for this computer); a usage error prints one line on
// stderr.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <hcube/args.hpp>
#include <hcube/draw.hpp>
#include <hcube/driver/calibration.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/error.hpp>

#include "commands.hpp"
#include "launcher.hpp"
#include "options.hpp"
#include "output.hpp"

namespace hcube::cli {

namespace {

// What the formula line prints: the form that gave formula_time, and the
// source's form beside it when that is not exact for these parameters.
struct formula_text {
    std::string form;               // the printed form of formula_time
    std::optional<exact_form> seed; // set when the source's form differs
};

// The work an algorithm's source cites, by its key in docs/references.md
// ("grama", "mathur-johnsson", "hu"), and the place in it: `source` and
// `source_section` of the JSON, for scripts.
std::pair<std::string_view, std::string_view> cited_work(std::string_view source) {
    static constexpr std::pair<std::string_view, std::string_view> works[] = {
        {"Grama et al.", "grama"}, {"Mathur & Johnsson", "mathur-johnsson"}, {"Hu", "hu"}};
    for (const auto& [author, key] : works)
        if (source.starts_with(author)) {
            std::string_view place = source.substr(author.size());
            while (place.starts_with(',') || place.starts_with(' '))
                place.remove_prefix(1);
            return {key, place};
        }
    return {"", source};
}

formula_text formula_of(const run_params& p, const algorithm_entry& e) {
    const std::optional<exact_form> gap = exact_formula(e, p);
    return {gap ? gap->text : e.formula, gap};
}

// The keys and their order are part of the interface (tests/personalized/
// cli_run.sh and docs/cli.md list them).
json run_json(const run_params& p, const algorithm_entry& e, const run_outcome& o) {
    const run_report& r = o.report;
    const formula_text f = formula_of(p, e);
    const auto [work, section] = cited_work(e.source);
    json j = {
        {"op", p.op},
        {"algo", e.algo},
        {"dim", p.dim},
        {"nodes", 1 << p.dim},
        {"words", p.words},
        {"ports", port_policy_of(p.ports).option},
        {"ts", json_number(p.cost.t_s)},
        {"tw", json_number(p.cost.t_w)},
        {"verified", o.verified},
        {"virtual_time", json_number(r.virtual_time)},
        {"formula_time", json_number(o.formula_time)},
        {"wall_seconds", json_number(r.wall_seconds)},
        {"messages_per_second", json_number(r.messages_per_second())},
        {"virtual_time_per_second", json_number(r.virtual_time_per_second())},
        {"messages", r.messages},
        {"bytes", r.bytes},
        {"max_link_bytes", r.max_link_bytes()},
        {"congestion_events", r.congestion.size()},
        {"steps", r.steps},
        {"formula", f.form},
        {"note", o.note},
        {"seed_formula", e.formula},
        {"seed_formula_time", json_number(f.seed ? f.seed->seed_time : o.formula_time)},
        {"formula_differs", f.seed ? f.seed->why : ""},
        {"source", work},
        {"source_section", section},
        {"link_capacity", p.link_capacity},
        {"links", to_string(r.link_implementation)},
        {"executor", to_string(r.executor)},
        {"backend", to_string(r.backend)},
        {"ranks", r.ranks},
        {"rank_wall_seconds", r.rank_wall_seconds},
        {"oversubscribed", r.oversubscribed},
        {"messages_to_router", r.messages_to_router},
        // Hex: a 64-bit number does not survive JSON readers that use doubles.
        {"fingerprint", fmt::format("{:016x}", r.fingerprint())},
    };
    if (!executor_policy_of(r.executor).thread_per_node) j["workers"] = o.workers;
    return j;
}

// "threads (one OS thread per node)" or "fibers on 2 worker threads, 256 KiB
// stacks".
std::string executor_text(const run_params& p, const run_outcome& o) {
    const std::string_view name = to_string(o.report.executor);
    if (executor_policy_of(o.report.executor).thread_per_node)
        return fmt::format("{} (one OS thread per node)", name);
    const std::size_t stack = p.stack_bytes ? p.stack_bytes : default_stack_bytes;
    return fmt::format(
        "{} on {} worker thread{}, {} stacks", name, o.workers, o.workers == 1 ? "" : "s",
        stack % 1024 ? fmt::format("{}-byte", stack) : fmt::format("{} KiB", stack >> 10));
}

// basis: why auto chose e (catalog::choice_basis), empty when named.
void print_text(const run_params& p, const algorithm_entry& e, const run_outcome& o,
                const std::string& basis) {
    const run_report& r = o.report;
    const auto row = [](std::string_view label, std::string_view text) {
        fmt::print("  {:<20}{}\n", label, text);
    };
    std::string header =
        fmt::format("{} {}: dim {} ({} nodes), m = {} words of {}, {}, t_s = {}, t_w = {}", p.op,
                    e.algo, p.dim, 1 << p.dim, p.words, to_string(p.type), to_string(p.ports),
                    number(p.cost.t_s), number(p.cost.t_w));
    if (p.link_capacity != config{}.link_capacity)
        header += fmt::format(", link capacity {}", p.link_capacity);
    for (const auto& [name, value] : p.options)
        header += fmt::format(", --{} {}", name, value);
    fmt::print("{}\n", header);
    if (!basis.empty()) row("auto chose", fmt::format("{}: {}", e.algo, basis));
    row("verified", o.verified ? "yes" : "no");
    row("virtual time", number(r.virtual_time));
    if (p.cost.t_w == 0)
        row("", fmt::format("t_w = 0: virtual time counts steps (t_s = {} each, t_w = 0), "
                            "whatever --words; give --tw Y to charge Y per word",
                            number(p.cost.t_s)));
    const formula_text f = formula_of(p, e);
    if (!f.seed) {
        row("formula", fmt::format("{} = {}  [{}]", number(o.formula_time), f.form, e.source));
    } else {
        row("formula",
            fmt::format("{} = {}  [exact for this m, p]", number(o.formula_time), f.form));
        row("source's formula",
            fmt::format("{} = {}  [{}]", number(f.seed->seed_time), e.formula, e.source));
        row("why they differ", f.seed->why);
    }
    row("steps", fmt::format("{}", r.steps));
    row("wall time", fmt::format("{} s (the emulation's; link implementation {})",
                                 number(r.wall_seconds, 3), to_string(r.link_implementation)));
    // Rates of thousands and more as whole numbers: no exponents.
    const auto rate = [](double v) { return v >= 1000 ? fmt::format("{:.0f}", v) : number(v, 4); };
    row("speed", fmt::format("{} messages/s, {} virtual time/s (wall)",
                             rate(r.messages_per_second()), rate(r.virtual_time_per_second())));
    row("executor", executor_text(p, o));
    if (o.report.backend == backend_kind::mpi)
        row("backend",
            fmt::format("mpi, {} ranks of {} nodes each; wall time per rank {} .. {} s{}",
                        o.report.ranks, (1 << p.dim) / o.report.ranks,
                        number(*std::ranges::min_element(r.rank_wall_seconds), 3),
                        number(*std::ranges::max_element(r.rank_wall_seconds), 3),
                        r.oversubscribed
                            ? "; oversubscribed: a host ran more ranks than it has "
                              "CPUs, so its ranks took turns and wall times mean little"
                            : ""));
    row("messages",
        fmt::format("{} total, {} on the busiest link", r.messages, r.max_link_messages()));
    row("bytes", fmt::format("{} total, {} on the busiest link", r.bytes, r.max_link_bytes()));
    if (r.messages_to_router && r.routed_messages)
        row("router",
            fmt::format("{} messages from other ranks to rank 0's router, {} per routed "
                        "message (it places every routed message)",
                        r.messages_to_router,
                        number(double(r.messages_to_router) / double(r.routed_messages), 3)));
    row("congestion events", fmt::format("{}", r.congestion.size()));
    row("fingerprint",
        fmt::format("{:016x} (the same for every run of these parameters)", r.fingerprint()));
    if (!o.note.empty()) row("note", o.note);
}

// p as the entry sees it: `auto` resolved, option defaults filled in.
run_params resolved(run_params p) {
    p.algo = resolve_algorithm(p).algo;
    for (const auto& spec : resolve_algorithm(p).options)
        p.options.try_emplace(spec.name, spec.fallback);
    return p;
}

// A deadlock under link capacity 0 of an algorithm that needs buffered links
// is expected: say so after the report.
void print_deadlock(const run_params& p, const deadlock_error& d) {
    fmt::print(stderr, "hcube run: {}\n", d.what());
    const run_params q = resolved(p);
    const std::string need = buffered_links_need(resolve_algorithm(q), q);
    if (p.link_capacity == 0 && !need.empty())
        fmt::print(stderr,
                   "hint: {} {} needs buffered links ({}), so it deadlocks with --link-capacity "
                   "0; give --link-capacity 1 or more (the default is {})\n",
                   q.op, q.algo, need, config{}.link_capacity);
}

struct run_command {
    run_params params;
    bool json = false;
    std::string trace, svg;  // --trace FILE.json, --svg FILE.svg
    bool wall_clock = false; // --trace-clock wall
    bool calibrated = false; // --cost calibrated
};

// --trace and --svg: the run's Chrome trace and space-time diagram.
void write_pictures(const run_command& c, const algorithm_entry& e, const run_report& r) {
    if (!c.trace.empty()) {
        std::ofstream f = open_output(c.trace);
        write_chrome_trace(r, f,
                           {c.wall_clock ? trace_clock::wall_time : trace_clock::virtual_time});
    }
    if (!c.svg.empty()) {
        std::ofstream f = open_output(c.svg);
        timeline_options o;
        o.title = fmt::format("{} {} on a {}-cube: virtual time {}", c.params.op, e.algo,
                              c.params.dim, number(r.virtual_time));
        write_timeline_svg(r, f, o);
    }
}

// --trace and --svg are checked before the run, which may take long: a path
// that cannot be written or a diagram with too many nodes is a usage error.
void check_pictures(const run_command& c) {
    if (!c.trace.empty()) check_output("--trace", c.trace);
    if (c.svg.empty()) return;
    check_output("--svg", c.svg);
    const int most = timeline_options{}.max_nodes, p = 1 << c.params.dim;
    if (p > most)
        throw usage_error(fmt::format(
            "--svg {}: a space-time diagram shows up to {} nodes, d = {} has {}; write a trace "
            "(--trace FILE.json) and open it in Perfetto instead",
            c.svg, most, c.params.dim, p));
}

// Under mpirun every process runs this command; with the in-process backend
// each would emulate the whole machine alone and print its own report.
void check_launcher(const run_params& p) {
    const int processes = launched_processes();
    if (processes <= 1) return;
    const char* env = std::getenv("HCUBE_BACKEND");
    const bool mpi = p.backend == backend_kind::mpi ||
                     (p.backend == backend_kind::automatic && env && std::string(env) == "mpi");
    if (mpi) return;
    throw usage_error(fmt::format(
        "this is one of {} processes mpirun started, and the backend is in-process: each "
        "would emulate the whole machine alone; add --backend mpi (or HCUBE_BACKEND=mpi) to "
        "spread the nodes over the ranks",
        processes));
}

int run(run_command& c) {
    run_params& p = c.params;
    if (p.op.empty()) throw usage_error("missing operation (hcube run --help)");
    check_launcher(p);
    if (p.root >= (1 << p.dim))
        throw usage_error(fmt::format("--root {} is outside 0..{} for --dim {}", p.root,
                                      (1 << p.dim) - 1, p.dim));
    check_pictures(c);
    p.trace = !c.trace.empty() || !c.svg.empty();
    run_outcome o;
    try {
        o = run_algorithm(p);
    } catch (const deadlock_error& e) {
        if (launched_rank() != 0) return exit_failed; // every rank has it: rank 0 tells
        print_deadlock(p, e);
        if (c.json) print_json_error("hcube run", e.what(), exit_failed);
        return exit_failed;
    } catch (const run_error& e) {
        // A node rejected its arguments (e.g. exchange_all under single-port):
        // still a usage error; anything else is a failed run.
        try {
            std::rethrow_exception(e.original());
        } catch (const usage_error&) {
            throw usage_error(e.what());
        } catch (...) {
        }
        throw;
    } catch (const usage_error&) {
        throw;
    } catch (const error& e) {
        // Neither a failed run nor a deadlock: the machine refused the
        // configuration (e.g. more threads than the OS allows).
        throw usage_error(e.what());
    }
    // run_algorithm resolved `auto` and filled the option defaults; redo that
    // here (cheap, deterministic) to print what ran.
    const std::string basis = p.algo == "auto" ? builtin_catalog().choice_basis(p) : "";
    p = resolved(p);
    const algorithm_entry& e = resolve_algorithm(p);
    if (o.rank != 0) return o.verified ? exit_ok : exit_failed; // rank 0 speaks for the job
    write_pictures(c, e, o.report);
    if (c.json)
        fmt::print("{}\n", json_line(run_json(p, e, o)));
    else
        print_text(p, e, o, basis);
    return o.verified ? exit_ok : exit_failed;
}

} // namespace

action add_run(CLI::App& hcube) {
    CLI::App& app = *hcube.add_subcommand(
        "run", "Runs one collective on an emulated D-cube, checks the result against a serial "
               "reference and prints the virtual time next to the source's formula.");
    auto c = std::make_shared<run_command>();
    run_params& p = c->params;
    p.algo = "auto";
    p.type = elem_type::int32;
    const catalog& cat = builtin_catalog();
    app.add_option("OP", p.op, "an operation of `hcube list`")->type_name("");
    // --schedule names descend's algorithm (Hu speaks of schedules).
    const auto algo = [&p](const std::string& v) { p.algo = v; };
    CLI::Option* by_algo = add_value(app, "--algo", algo,
                                     "an algorithm of OP, or auto (default): the fitting algorithm "
                                     "whose formula is cheapest for these parameters");
    CLI::Option* by_schedule =
        add_value(app, "--schedule", algo, "the same as --algo (descend's direct|pipelined)");
    add_machine_options(app, p);
    add_choice(
        app, "--cost", {"virtual", "calibrated"}, [c](std::size_t i) { c->calibrated = i == 1; },
        "the cost model: virtual (default: --ts and --tw) or calibrated (this machine's t_s and "
        "t_w in seconds for the run's executor and links, from hcube calibrate: virtual time "
        "then predicts wall time, and auto picks by this machine's costs)");
    add_data_options(app, p);
    app.add_flag("--json", c->json, "one JSON object instead of text");
    add_value(
        app, "--trace", [c](const std::string& v) { c->trace = v; },
        "write a Chrome/Perfetto trace (Trace Event Format JSON): a track per node, a "
        "slice per primitive call, a flow per message");
    add_choice(
        app, "--trace-clock", {"virtual", "wall"}, [c](std::size_t i) { c->wall_clock = i == 1; },
        "the trace's time axis: virtual (default) or the emulation's wall clock");
    add_value(
        app, "--svg", [c](const std::string& v) { c->svg = v; },
        "write the space-time diagram (up to 64 nodes)");
    add_catalog_options(app, cat, p);

    std::string ops;
    for (const auto& op : cat.ops())
        ops += " " + op;
    app.footer("A run whose memory estimate exceeds this computer's physical memory (or its "
               "address-space limit) is refused.\n"
               "Exit status: 0 verified, 1 verification failed or the run failed (a deadlock), 2 "
               "usage error.\n\noperations:" +
               ops);
    const auto by_cost = [&app] { return app.count("--ts") + app.count("--tw") > 0; };
    const auto by_words = [&app] { return app.count("--words") > 0; };
    return [c, by_algo, by_schedule, by_cost, by_words] {
        if (*by_algo && *by_schedule)
            throw usage_error("--algo and --schedule name the same choice; give one");
        // descend spreads M >= N elements over the nodes: M = N by default.
        if (c->params.op == "descend" && !by_words())
            c->params.words = std::size_t(1) << c->params.dim;
        if (c->calibrated) {
            if (by_cost())
                throw usage_error("--cost calibrated sets t_s and t_w; give it or --ts/--tw, not "
                                  "both");
            run_params& p = c->params;
            p.cost = calibration::calibrated(p.executor, p.links, elem_bytes(p.type));
            p.cores = calibration::usable_cores();
            p.measured = calibration::measured_fastest_table(p.executor, p.links);
        }
        return run(*c);
    };
}

namespace {

// When `e` needs buffered links, for `hcube list`: from which dimension under
// each port model, and why (with default options and --shift 1).
std::string buffered_links_text(const algorithm_entry& e) {
    std::string when, why;
    for (const port_policy& ports : port_policies) {
        run_params p;
        p.op = e.op;
        p.ports = ports.model;
        for (const auto& o : e.options)
            p.options.try_emplace(o.name, o.fallback);
        for (p.dim = 1; p.dim <= max_dim; ++p.dim)
            if (const std::string w = buffered_links_need(e, p); !w.empty()) {
                when +=
                    fmt::format("{}{} from d = {}", when.empty() ? "" : ", ", ports.name, p.dim);
                if (why.empty()) why = w;
                break;
            }
    }
    return when.empty() ? "" : fmt::format("deadlocks with --link-capacity 0 ({}): {}", when, why);
}

void list() {
    const catalog& c = builtin_catalog();
    fmt::print("operations and algorithms (hcube run OP --algo NAME; auto picks the fitting\n"
               "algorithm with the cheapest formula for the given m, t_s, t_w):\n");
    for (const auto& op : c.ops()) {
        fmt::print("\n{}\n", op);
        for (const auto* e : c.algorithms(op)) {
            fmt::print("  {:<26}{}\n  {:<26}{}\n", e->algo, e->formula, "", e->source);
            if (const std::string b = buffered_links_text(*e); !b.empty())
                fmt::print("  {:<26}needs buffered links: {}\n", "", b);
            for (const auto& o : e->options)
                fmt::print("  {:<26}--{} {} (default {}): {}\n", "", o.name,
                           fmt::join(o.values, "|"), o.fallback, o.help);
        }
    }
}

} // namespace

action add_list(CLI::App& hcube) {
    hcube.add_subcommand("list", "Every operation with its algorithms, source sections and cost "
                                 "formulas, and the options each algorithm takes.");
    return [] {
        list();
        return exit_ok;
    };
}

} // namespace hcube::cli
