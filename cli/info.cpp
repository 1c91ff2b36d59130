// hcube info --dim D [--json]: the size of a D-cube machine (nodes, links,
// threads, an estimate of its memory, whether this system lets it start) and
// its binary-reflected Gray code.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <hcube/args.hpp>
#include <hcube/config.hpp>
#include <hcube/driver/calibration.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/error.hpp>
#include <hcube/system.hpp>
#include <hcube/topology.hpp>

#include "commands.hpp"
#include "output.hpp"

namespace hcube::cli {

namespace {

// Gray code rows printed in full up to this dimension, else only the first
// `rows_when_large` (a 16-cube has 65,536 rows).
constexpr int full_table_dim = 6;
constexpr std::uint64_t rows_when_large = 16;

// What an executor takes for a D-cube (hcube/system.hpp's footprint), and
// whether this system would start it.
struct executor_facts {
    executor_kind kind;
    executor_footprint use;
    std::string refusal;   // "" when it would start
    int largest_dim;       // the largest dimension this system can start
    std::uint64_t machine; // memory_estimate's total under this executor
};

// What a D-cube machine consists of, with the estimate spelled out (the
// model hcube run checks against physical memory, catalog.hpp), and what each
// executor costs.
struct machine_facts {
    int dim;
    std::uint64_t nodes, links, capacity;
    machine_memory memory;                 // under the default executor
    std::vector<executor_facts> executors; // in executor_policies' order
    executor_kind chosen; // what hcube run uses without --executor (HCUBE_EXECUTOR)
    long long maps_in_use, max_map_count;
    const executor_facts& of(executor_kind e) const {
        return *std::ranges::find(executors, e, &executor_facts::kind);
    }
    const executor_facts& by_default() const { return of(chosen); }
};

executor_facts executor_cost(executor_kind kind, int d, const os_limits& lim) {
    config c;
    c.dim = d;
    c.executor = kind;
    std::string refusal = os_limit_problems(c, lim);
    if (d > max_dim_of(kind))
        refusal = fmt::format("dimension {} is above the {} limit {}", d, to_string(kind),
                              max_dim_of(kind));
    return {kind, footprint_of(c, lim), refusal, largest_dim_within(config{}, kind, lim),
            memory_estimate(c).total()};
}

machine_facts facts(int d) {
    config c;
    c.dim = d;
    c.executor = resolve_executor(executor_kind::automatic);
    const os_limits lim = read_os_limits();
    std::vector<executor_facts> executors;
    for (const executor_policy& e : executor_policies)
        executors.push_back(executor_cost(e.kind, d, lim));
    const machine_memory memory = memory_estimate(c);
    return {d,
            memory.nodes,
            memory.links,
            c.link_capacity,
            memory,
            std::move(executors),
            c.executor,
            lim.maps_in_use,
            lim.max_map_count};
}

struct gray_row {
    std::uint64_t i;
    std::string code; // G(i) in binary, d digits (one "0" for d = 0)
    int transition;   // dimension from G(i) to G(i+1), -1 for d = 0
};

std::vector<gray_row> gray_rows(int d, std::uint64_t count) {
    std::vector<gray_row> rows;
    for (std::uint64_t i = 0; i < count; ++i) {
        const node_id g = gray(node_id(i));
        std::string code;
        for (int b = d - 1; b >= 0; --b)
            code += (g >> b & 1) ? '1' : '0';
        if (d == 0) code = "0";
        rows.push_back({i, code, d == 0 ? -1 : gray_transition(node_id(i), d)});
    }
    return rows;
}

std::string human_bytes(std::uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024 && u < 3)
        v /= 1024, ++u;
    return fmt::format("{:.{}f} {}", v, u == 0 ? 0 : 1, units[u]);
}

std::string can_start_text(const executor_facts& e) {
    return fmt::format("{} {}", to_string(e.kind), e.refusal.empty() ? "yes" : "no: " + e.refusal);
}

const auto row = [](std::string_view label, std::string_view text) {
    fmt::print("{:<19}{}\n", label, text);
};

// An executor with a thread per node: its stacks, and its mappings against
// vm.max_map_count.
void print_threads(const machine_facts& f, const executor_facts& e) {
    const executor_footprint& t = e.use;
    row(fmt::format("  {}", to_string(e.kind)),
        fmt::format("reserved {} = {} x ({} stack + {} guard page; ulimit -s)",
                    human_bytes(t.reserved), f.nodes, human_bytes(t.stack), human_bytes(t.guard)));
    row("", fmt::format("touched  about {} = {} x {} (the stack pages in use and the node's "
                        "state), plus the kernel's stack and task of every thread (outside RSS)",
                        human_bytes(t.touched), f.nodes,
                        human_bytes(executor_policy_of(e.kind).touched_per_node)));
    const bool fit = f.max_map_count < 0 ||
                     std::uint64_t(f.maps_in_use) + t.mappings <= std::uint64_t(f.max_map_count);
    row("", fmt::format("mappings {} (a stack and its guard page per thread) + {} in use, "
                        "vm.max_map_count {}: {}",
                        t.mappings, f.maps_in_use, f.max_map_count,
                        fit ? "they fit"
                            : fmt::format("too many; {} stop at d = {} here", to_string(e.kind),
                                          e.largest_dim)));
}

// An executor of fibers: their stacks in one mapping, the worker threads, and
// how many stacks get a guard page.
void print_fibers(const machine_facts& f, const executor_facts& e) {
    const executor_footprint& b = e.use;
    row(fmt::format("  {}", to_string(e.kind)),
        fmt::format("reserved {} = {} x ({} stack + {} guard zone) in one mapping + "
                    "{} worker thread{} x {}",
                    human_bytes(b.reserved), f.nodes, human_bytes(b.stack), human_bytes(b.guard),
                    b.workers, b.workers == 1 ? "" : "s", human_bytes(b.thread_stack)));
    row("", fmt::format("touched  about {} = {} x {} (the stack pages in use and the node's "
                        "state)",
                        human_bytes(b.touched), f.nodes,
                        human_bytes(executor_policy_of(e.kind).touched_per_node)));
    if (b.guarded == f.nodes)
        row("", fmt::format("guards   a guard page under every stack ({} mappings in all)",
                            b.mappings));
    else
        row("", fmt::format("guards   guard pages under {} of the {} stacks (2 mappings each, "
                            "as many as vm.max_map_count allows); the other {} get a {} red "
                            "zone, checked after every run (a touched zone fails the run "
                            "naming the node)",
                            b.guarded, f.nodes, f.nodes - b.guarded, human_bytes(b.guard)));
}

void print_executors(const machine_facts& f) {
    fmt::print("memory by executor (reserved: address space its mappings take; touched: memory "
               "the nodes typically make resident)\n");
    for (const executor_facts& e : f.executors) {
        (executor_policy_of(e.kind).thread_per_node ? print_threads : print_fibers)(f, e);
        row("", fmt::format("machine  about {} with the links' {} (the estimate hcube run "
                            "--executor {} is checked against)",
                            human_bytes(e.machine), human_bytes(f.memory.link_bytes),
                            to_string(e.kind)));
    }
}

// "with fibers 2 worker threads" for each executor that has workers.
std::string workers_text(const machine_facts& f) {
    std::vector<std::string> parts;
    for (const executor_facts& e : f.executors)
        if (!executor_policy_of(e.kind).thread_per_node)
            parts.push_back(
                fmt::format("with {} {} worker threads", to_string(e.kind), e.use.workers));
    return fmt::format("{}", fmt::join(parts, ", "));
}

void print_text(const machine_facts& f, const std::vector<gray_row>& rows) {
    std::vector<std::string> can_start, largest;
    for (const executor_facts& e : f.executors) {
        can_start.push_back(can_start_text(e));
        largest.push_back(fmt::format("{} with {}", e.largest_dim, to_string(e.kind)));
    }
    fmt::print("hypercube of dimension {}\n", f.dim);
    fmt::print("nodes              {}\n", f.nodes);
    fmt::print("directed links     {}  (p x d = {} x {})\n", f.links, f.nodes, f.dim);
    fmt::print("threads            {}  (one per node, node 0 on the caller's when the nodes "
               "outnumber the CPUs; {})\n",
               f.nodes, workers_text(f));
    fmt::print("can start here     {}\n", fmt::join(can_start, "; "));
    fmt::print("largest D here     {}  (of 0..{}; the system's limits decide)\n",
               fmt::join(largest, ", "), max_dim);
    fmt::print("link capacity      {} messages (default)\n", f.capacity);
    fmt::print("diameter           {} links\n", f.dim);
    const machine_memory& mem = f.memory;
    fmt::print("memory (estimate)  {}  (what a run is checked against, with its data)\n",
               human_bytes(mem.total()));
    fmt::print("  links            {} x {} B (a line and one slot; a slot more per further "
               "message waiting) = {}\n",
               mem.links, link_touched_bytes, human_bytes(mem.link_bytes));
    fmt::print("  nodes            {} x {} (with {}: state and stack pages in use) = {}\n",
               mem.nodes, human_bytes(mem.per_node), to_string(f.chosen),
               human_bytes(mem.node_bytes));
    print_executors(f);
    fmt::print("\nbinary-reflected Gray code G(i) = i XOR (i >> 1) (Mathur & Johnsson Table 1, "
               "Grama et al. "
               "4.6.2);\nt(i) is the dimension from G(i) to G(i+1); the last row closes the "
               "cycle\n");
    if (rows.size() < f.nodes) fmt::print("(first {} of {} rows)\n", rows.size(), f.nodes);
    const int width = std::max(f.dim, 4);
    fmt::print("{:>8}  {:>{}}  t(i)\n", "i", "G(i)", width);
    for (const gray_row& r : rows)
        fmt::print("{:>8}  {:>{}}  {:>4}\n", r.i, r.code, width,
                   r.transition < 0 ? "-" : std::to_string(r.transition));
}

json executor_json(const executor_facts& e) {
    const executor_footprint& u = e.use;
    json j = {{"stack_bytes", u.stack},
              {"guard_bytes", u.guard},
              {"reserved_bytes", u.reserved},
              {"touched_bytes", u.touched},
              {"mappings", u.mappings}};
    if (!executor_policy_of(e.kind).thread_per_node) {
        j["guarded_stacks"] = u.guarded;
        j["workers"] = u.workers;
    }
    j["can_start"] = e.refusal.empty();
    j["largest_dim_here"] = e.largest_dim;
    j["memory_estimate_bytes"] = e.machine;
    return j;
}

// The keys and their order are part of the interface (tests/lib/cli_info.sh).
json info_json(const machine_facts& f, const std::vector<gray_row>& rows) {
    json gray = json::array();
    for (const gray_row& r : rows)
        gray.push_back({{"i", r.i},
                        {"gray", r.code},
                        {"transition", r.transition < 0 ? json(nullptr) : json(r.transition)}});
    json executors = json::object();
    for (const executor_facts& e : f.executors)
        executors[std::string(to_string(e.kind))] = executor_json(e);
    return {{"dim", f.dim},
            {"nodes", f.nodes},
            {"directed_links", f.links},
            {"threads", f.nodes},
            {"link_capacity", f.capacity},
            {"diameter", f.dim},
            {"can_start", f.by_default().refusal.empty()},
            {"largest_dim_here", f.by_default().largest_dim},
            {"memory_estimate",
             {{"bytes", f.memory.total()},
              {"link_bytes", f.memory.link_bytes},
              {"node_bytes", f.memory.node_bytes},
              {"note", fmt::format("estimate: per link {} B (a line and one slot), per node {} B "
                                   "({})",
                                   link_touched_bytes, f.memory.per_node, to_string(f.chosen))}}},
            {"executors", executors},
            {"gray_code", {{"total_rows", f.nodes}, {"rows", gray}}}};
}

struct info_command {
    int dim = 0;
    bool json = false;
};

} // namespace

action add_info(CLI::App& hcube) {
    CLI::App& app = *hcube.add_subcommand(
        "info", "The size of a D-cube machine (nodes, links, threads, memory), whether this "
                "system can start it, and its binary-reflected Gray code.");
    auto c = std::make_shared<info_command>();
    CLI::Option* dim =
        add_number(app, "--dim", c->dim, 0, max_dim, "an integer in 0.." + std::to_string(max_dim),
                   "hypercube dimension (required)")
            ->type_name("D");
    app.add_flag("--json", c->json, "one JSON object instead of text");
    return [c, dim] {
        if (!*dim) throw usage_error("missing --dim D (usage: hcube info --dim D [--json])");
        const machine_facts f = facts(c->dim);
        const std::uint64_t shown = c->dim <= full_table_dim ? f.nodes : rows_when_large;
        const std::vector<gray_row> rows = gray_rows(c->dim, shown);
        if (c->json)
            fmt::print("{}\n", json_line(info_json(f, rows)));
        else
            print_text(f, rows);
        return exit_ok;
    };
}

} // namespace hcube::cli
