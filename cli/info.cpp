// hcube info --dim D [--json]: the size of a D-cube machine (nodes, links,
// threads, an estimate of its memory, whether this system lets it start) and
// its binary-reflected Gray code.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <hcube/catalog.hpp>
#include <hcube/cli/args.hpp>
#include <hcube/config.hpp>
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

// What a D-cube machine consists of, with the estimate spelled out (the
// model hcube run checks against physical memory, catalog.hpp), and why this
// system would refuse to start its threads ("" when it would not).
struct machine_facts {
    int dim;
    std::uint64_t nodes, links, capacity, link_bytes, node_bytes;
    std::string refusal;
    int largest_dim; // the largest dimension this system can start
    std::uint64_t memory() const { return link_bytes + node_bytes; }
};

machine_facts facts(int d) {
    const std::uint64_t p = std::uint64_t{1} << d;
    const std::uint64_t links = p * std::uint64_t(d);
    config c;
    const detail::os_limits lim = detail::read_os_limits();
    const auto refusal = [&](int dim) {
        c.dim = dim;
        return detail::os_limit_problems(c, lim);
    };
    int largest = max_dim;
    while (largest > 0 && !refusal(largest).empty())
        --largest;
    return {d,
            p,
            links,
            c.link_capacity,
            std::uint64_t(double(links) *
                          (double(c.link_capacity) * link_descriptor_bytes + link_index_bytes)),
            std::uint64_t(double(p) * node_resident_bytes),
            refusal(d),
            largest};
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

void print_text(const machine_facts& f, const std::vector<gray_row>& rows) {
    fmt::print("hypercube of dimension {}\n", f.dim);
    fmt::print("nodes              {}\n", f.nodes);
    fmt::print("directed links     {}  (p x d = {} x {})\n", f.links, f.nodes, f.dim);
    fmt::print("threads            {}  (one per node)\n", f.nodes);
    fmt::print("can start here     {}\n", f.refusal.empty() ? "yes" : "no: " + f.refusal);
    fmt::print("largest D here     {}  (of 0..{}; the system's thread limits decide)\n",
               f.largest_dim, max_dim);
    fmt::print("link capacity      {} messages (default)\n", f.capacity);
    fmt::print("diameter           {} links\n", f.dim);
    fmt::print("memory (estimate)  {}\n", human_bytes(f.memory()));
    fmt::print("  links            {} x ({} x {} B descriptors + {} B indices) = {}\n", f.links,
               f.capacity, link_descriptor_bytes, link_index_bytes, human_bytes(f.link_bytes));
    fmt::print("  nodes            {} x {} (thread stack and state, resident) = {}\n\n", f.nodes,
               human_bytes(std::uint64_t(node_resident_bytes)), human_bytes(f.node_bytes));
    fmt::print("binary-reflected Gray code G(i) = i XOR (i >> 1) (seed 002 Table 1, seed 000 "
               "4.6.2);\nt(i) is the dimension from G(i) to G(i+1); the last row closes the "
               "cycle\n");
    if (rows.size() < f.nodes) fmt::print("(first {} of {} rows)\n", rows.size(), f.nodes);
    const int width = std::max(f.dim, 4);
    fmt::print("{:>8}  {:>{}}  t(i)\n", "i", "G(i)", width);
    for (const gray_row& r : rows)
        fmt::print("{:>8}  {:>{}}  {:>4}\n", r.i, r.code, width,
                   r.transition < 0 ? "-" : std::to_string(r.transition));
}

// The keys and their order are part of the interface (tests/lib/cli_info.sh).
json info_json(const machine_facts& f, const std::vector<gray_row>& rows) {
    json gray = json::array();
    for (const gray_row& r : rows)
        gray.push_back({{"i", r.i},
                        {"gray", r.code},
                        {"transition", r.transition < 0 ? json(nullptr) : json(r.transition)}});
    return {{"dim", f.dim},
            {"nodes", f.nodes},
            {"directed_links", f.links},
            {"threads", f.nodes},
            {"link_capacity", f.capacity},
            {"diameter", f.dim},
            {"can_start", f.refusal.empty()},
            {"largest_dim_here", f.largest_dim},
            {"memory_estimate",
             {{"bytes", f.memory()},
              {"link_bytes", f.link_bytes},
              {"node_bytes", f.node_bytes},
              {"note", fmt::format("estimate: per link capacity x {} B + {} B, per node {} B",
                                   link_descriptor_bytes, link_index_bytes, node_resident_bytes)}}},
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
