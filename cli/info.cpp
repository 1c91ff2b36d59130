// hcube info --dim D [--json]: the size of a D-cube machine (nodes, links,
// threads, an estimate of its memory, whether this system lets it start) and
// its binary-reflected Gray code.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pthread.h>

#include <fmt/format.h>

#include <hcube/catalog.hpp>
#include <hcube/cli/args.hpp>
#include <hcube/config.hpp>
#include <hcube/driver/calibration.hpp>
#include <hcube/error.hpp>
#include <hcube/machine.hpp>
#include <hcube/topology.hpp>

#include "commands.hpp"
#include "output.hpp"

namespace hcube::cli {

namespace {

// Gray code rows printed in full up to this dimension, else only the first
// `rows_when_large` (a 16-cube has 65,536 rows).
constexpr int full_table_dim = 6;
constexpr std::uint64_t rows_when_large = 16;

// Memory a node typically makes resident under either executor: its stack
// pages in use and its state. Measured (max RSS less the links, one-word
// allreduce): 11 KiB with fibers and 16 KiB with threads at d = 12, 13 KiB
// with fibers at d = 16. The estimate above counts 64 KiB, to be safe.
constexpr std::uint64_t node_touched_bytes = 16 << 10;

// The memory an executor takes for a D-cube: address space its mappings
// reserve, memory its nodes typically touch (resident), the mappings it needs
// against vm.max_map_count, and whether this system would start it.
struct executor_facts {
    executor_kind kind;
    std::uint64_t stack, guard; // per node: stack and guard (page or zone) bytes
    std::uint64_t reserved, touched;
    std::uint64_t mappings; // threads: 2 per node; fibers: 1 + 2 per guard page
    std::uint64_t guarded;  // fibers: stacks with a guard page (the rest: red zones)
    int workers;            // fibers: worker threads (one per usable CPU, at most p)
    std::string refusal;    // "" when it would start
    int largest_dim;        // the largest dimension this system can start
};

// What a D-cube machine consists of, with the estimate spelled out (the
// model hcube run checks against physical memory, catalog.hpp), and what each
// executor costs.
struct machine_facts {
    int dim;
    std::uint64_t nodes, links, capacity, link_bytes, node_bytes;
    executor_facts threads, fibers;
    executor_kind chosen; // what hcube run uses without --executor (HCUBE_EXECUTOR)
    long long maps_in_use, max_map_count;
    std::uint64_t memory() const { return link_bytes + node_bytes; }
    const executor_facts& by_default() const {
        return chosen == executor_kind::fibers ? fibers : threads;
    }
};

// A thread's stack and guard page as std::thread makes them (glibc's
// defaults: the stack is `ulimit -s`, 8 MiB unless changed).
std::pair<std::uint64_t, std::uint64_t> default_thread_stack() {
    std::uint64_t stack = 8 << 20, guard = 4096;
    pthread_attr_t a;
    if (pthread_getattr_default_np(&a) == 0) {
        std::size_t s = 0, g = 0;
        if (pthread_attr_getstacksize(&a, &s) == 0 && s) stack = s;
        if (pthread_attr_getguardsize(&a, &g) == 0) guard = g;
        pthread_attr_destroy(&a);
    }
    return {stack, guard};
}

executor_facts executor_cost(executor_kind kind, int d, const detail::os_limits& lim) {
    const std::uint64_t p = std::uint64_t{1} << d;
    const auto [thread_stack, thread_guard] = default_thread_stack();
    const auto refusal = [&](int dim) {
        if (dim > max_dim_of(kind))
            return fmt::format("dimension {} is above the {} limit {}", dim, to_string(kind),
                               max_dim_of(kind));
        config c;
        c.dim = dim;
        c.executor = kind;
        return detail::os_limit_problems(c, lim);
    };
    int largest = max_dim_of(kind);
    while (largest > 0 && !refusal(largest).empty())
        --largest;
    executor_facts f{kind, 0, 0, 0, 0, 0, 0, 0, refusal(d), largest};
    if (kind == executor_kind::threads) {
        f.stack = thread_stack;
        f.guard = thread_guard;
        f.reserved = p * (thread_stack + thread_guard);
        f.touched = p * node_touched_bytes;
        f.mappings = 2 * p;
        return f;
    }
    const std::uint64_t stride = detail::fiber_stack_stride(default_stack_bytes);
    f.stack = default_stack_bytes;
    f.guard = stride - default_stack_bytes;
    f.workers = int(std::min<std::uint64_t>(std::uint64_t(calibration::usable_cores()), p));
    f.guarded = std::uint64_t(detail::fiber_guard_pages(int(p), lim));
    f.reserved = p * stride + std::uint64_t(f.workers) * (thread_stack + thread_guard);
    f.touched = p * node_touched_bytes;
    f.mappings = 1 + 2 * f.guarded + 2 * std::uint64_t(f.workers);
    return f;
}

machine_facts facts(int d) {
    const std::uint64_t p = std::uint64_t{1} << d;
    const std::uint64_t links = p * std::uint64_t(d);
    const config c;
    const detail::os_limits lim = detail::read_os_limits();
    return {d,
            p,
            links,
            c.link_capacity,
            std::uint64_t(double(links) *
                          (double(c.link_capacity) * link_descriptor_bytes + link_index_bytes)),
            std::uint64_t(double(p) * node_resident_bytes),
            executor_cost(executor_kind::threads, d, lim),
            executor_cost(executor_kind::fibers, d, lim),
            detail::resolve_executor(executor_kind::automatic),
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

void print_executors(const machine_facts& f) {
    const executor_facts &t = f.threads, &b = f.fibers;
    const auto row = [](std::string_view label, std::string_view text) {
        fmt::print("{:<19}{}\n", label, text);
    };
    fmt::print("memory by executor (reserved: address space its mappings take; touched: memory "
               "the nodes typically make resident)\n");
    row("  threads",
        fmt::format("reserved {} = {} x ({} stack + {} guard page; ulimit -s)",
                    human_bytes(t.reserved), f.nodes, human_bytes(t.stack), human_bytes(t.guard)));
    row("", fmt::format("touched  about {} = {} x {} (the stack pages in use and the node's "
                        "state), plus the kernel's stack and task of every thread (outside RSS)",
                        human_bytes(t.touched), f.nodes, human_bytes(node_touched_bytes)));
    const bool fit = f.max_map_count < 0 ||
                     std::uint64_t(f.maps_in_use) + t.mappings <= std::uint64_t(f.max_map_count);
    row("", fmt::format("mappings {} (a stack and its guard page per thread) + {} in use, "
                        "vm.max_map_count {}: {}",
                        t.mappings, f.maps_in_use, f.max_map_count,
                        fit ? "they fit"
                            : fmt::format("too many; threads stop at d = {} here", t.largest_dim)));
    row("  fibers",
        fmt::format("reserved {} = {} x ({} stack + {} guard zone) in one mapping + "
                    "{} worker thread{} x {}",
                    human_bytes(b.reserved), f.nodes, human_bytes(b.stack), human_bytes(b.guard),
                    b.workers, b.workers == 1 ? "" : "s", human_bytes(t.stack + t.guard)));
    row("", fmt::format("touched  about {} = {} x {} (the stack pages in use and the node's "
                        "state)",
                        human_bytes(b.touched), f.nodes, human_bytes(node_touched_bytes)));
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

void print_text(const machine_facts& f, const std::vector<gray_row>& rows) {
    fmt::print("hypercube of dimension {}\n", f.dim);
    fmt::print("nodes              {}\n", f.nodes);
    fmt::print("directed links     {}  (p x d = {} x {})\n", f.links, f.nodes, f.dim);
    fmt::print("threads            {}  (one per node, node 0 on the caller's when the nodes "
               "outnumber the CPUs; with fibers {} worker threads)\n",
               f.nodes, f.fibers.workers);
    fmt::print("can start here     {}; {}\n", can_start_text(f.threads), can_start_text(f.fibers));
    fmt::print("largest D here     {} with threads, {} with fibers  (of 0..{}; the system's "
               "limits decide)\n",
               f.threads.largest_dim, f.fibers.largest_dim, max_dim);
    fmt::print("link capacity      {} messages (default)\n", f.capacity);
    fmt::print("diameter           {} links\n", f.dim);
    fmt::print("memory (bound)     {}  (what a run is checked against; the nodes typically "
               "touch less, below)\n",
               human_bytes(f.memory()));
    fmt::print("  links            {} x ({} x {} B descriptors + {} B indices) = {}\n", f.links,
               f.capacity, link_descriptor_bytes, link_index_bytes, human_bytes(f.link_bytes));
    fmt::print("  nodes            {} x {} (thread stack and state, a safe bound) = {}\n", f.nodes,
               human_bytes(std::uint64_t(node_resident_bytes)), human_bytes(f.node_bytes));
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
    json j = {{"stack_bytes", e.stack},
              {"guard_bytes", e.guard},
              {"reserved_bytes", e.reserved},
              {"touched_bytes", e.touched},
              {"mappings", e.mappings}};
    if (e.kind == executor_kind::fibers) {
        j["guarded_stacks"] = e.guarded;
        j["workers"] = e.workers;
    }
    j["can_start"] = e.refusal.empty();
    j["largest_dim_here"] = e.largest_dim;
    return j;
}

// The keys and their order are part of the interface (tests/lib/cli_info.sh).
json info_json(const machine_facts& f, const std::vector<gray_row>& rows) {
    json gray = json::array();
    for (const gray_row& r : rows)
        gray.push_back({{"i", r.i},
                        {"gray", r.code},
                        {"transition", r.transition < 0 ? json(nullptr) : json(r.transition)}});
    return {
        {"dim", f.dim},
        {"nodes", f.nodes},
        {"directed_links", f.links},
        {"threads", f.nodes},
        {"link_capacity", f.capacity},
        {"diameter", f.dim},
        {"can_start", f.by_default().refusal.empty()},
        {"largest_dim_here", f.by_default().largest_dim},
        {"memory_estimate",
         {{"bytes", f.memory()},
          {"link_bytes", f.link_bytes},
          {"node_bytes", f.node_bytes},
          {"note", fmt::format("estimate: per link capacity x {} B + {} B, per node {} B",
                               link_descriptor_bytes, link_index_bytes, node_resident_bytes)}}},
        {"executors", {{"threads", executor_json(f.threads)}, {"fibers", executor_json(f.fibers)}}},
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
