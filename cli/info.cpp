// hcube info --dim D [--json]: the size of a D-cube machine (nodes, links,
// threads, an estimate of its memory, whether this system lets it start) and
// its binary-reflected Gray code. Exit status 2 on a usage error, as run's.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <hcube/catalog.hpp>
#include <hcube/config.hpp>
#include <hcube/error.hpp>
#include <hcube/machine.hpp>
#include <hcube/topology.hpp>

#include "commands.hpp"
#include "suggest.hpp"

namespace hcube::cli {

namespace {

constexpr std::string_view info_usage = "usage: hcube info --dim D [--json]";

// Gray code rows printed in full up to this dimension, else only the first
// `rows_when_large` (a 16-cube has 65,536 rows).
constexpr int full_table_dim = 6;
constexpr std::uint64_t rows_when_large = 16;

struct options {
    int dim = -1;
    bool json = false;
    bool help = false;
};

std::string range_text() {
    return "0.." + std::to_string(max_dim);
}

int parse_dim(std::string_view text) {
    int d = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
        throw usage_error("--dim '" + std::string(text) + "' is not a number (expected " +
                          range_text() + ")");
    if (ec == std::errc::result_out_of_range || d < 0 || d > max_dim)
        throw usage_error("--dim " + std::string(text) + " is out of range " + range_text());
    return d;
}

options parse(args a) {
    options o;
    bool have_dim = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string_view arg = a[i];
        std::string_view value;
        if (arg == "--json") {
            o.json = true;
            continue;
        } else if (arg == "--help" || arg == "-h") {
            o.help = true;
            continue;
        } else if (arg == "--dim") {
            if (i + 1 == a.size()) throw usage_error("--dim needs a value (" + range_text() + ")");
            value = a[++i];
        } else if (arg.starts_with("--dim=")) {
            value = arg.substr(6);
        } else {
            static const std::vector<std::string> known = {"dim", "json", "help"};
            const std::string_view name = arg.substr(arg.starts_with("--") ? 2 : 0);
            throw usage_error(unknown_option(arg, name.substr(0, name.find('=')), known) + " (" +
                              std::string(info_usage) + ")");
        }
        if (have_dim) throw usage_error("--dim given twice");
        o.dim = parse_dim(value);
        have_dim = true;
    }
    if (!have_dim && !o.help)
        throw usage_error("missing --dim D (" + std::string(info_usage) + ")");
    return o;
}

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
    std::ostringstream os;
    os << std::fixed << std::setprecision(u == 0 ? 0 : 1) << v << ' ' << units[u];
    return os.str();
}

void print_text(const machine_facts& f, const std::vector<gray_row>& rows) {
    std::cout << "hypercube of dimension " << f.dim << "\n"
              << "nodes              " << f.nodes << "\n"
              << "directed links     " << f.links << "  (p x d = " << f.nodes << " x " << f.dim
              << ")\n"
              << "threads            " << f.nodes << "  (one per node)\n"
              << "can start here     " << (f.refusal.empty() ? "yes" : "no: " + f.refusal) << "\n"
              << "largest D here     " << f.largest_dim << "  (of 0.." << max_dim
              << "; the system's thread limits decide)\n"
              << "link capacity      " << f.capacity << " messages (default)\n"
              << "diameter           " << f.dim << " links\n"
              << "memory (estimate)  " << human_bytes(f.memory()) << "\n"
              << "  links            " << f.links << " x (" << f.capacity << " x "
              << link_descriptor_bytes << " B descriptors + " << link_index_bytes
              << " B indices) = " << human_bytes(f.link_bytes) << "\n"
              << "  nodes            " << f.nodes << " x "
              << human_bytes(std::uint64_t(node_resident_bytes))
              << " (thread stack and state, resident) = " << human_bytes(f.node_bytes) << "\n\n"
              << "binary-reflected Gray code G(i) = i XOR (i >> 1) (seed 002 Table 1, seed 000 "
                 "4.6.2);\n"
              << "t(i) is the dimension from G(i) to G(i+1); the last row closes the cycle\n";
    if (rows.size() < f.nodes)
        std::cout << "(first " << rows.size() << " of " << f.nodes << " rows)\n";
    const int width = std::max(f.dim, 4);
    std::cout << std::setw(8) << "i"
              << "  " << std::setw(width) << "G(i)"
              << "  t(i)\n";
    for (const gray_row& r : rows) {
        std::cout << std::setw(8) << r.i << "  " << std::setw(width) << r.code << "  "
                  << std::setw(4);
        if (r.transition < 0)
            std::cout << "-";
        else
            std::cout << r.transition;
        std::cout << "\n";
    }
}

void print_json(const machine_facts& f, const std::vector<gray_row>& rows) {
    std::cout << "{\"dim\": " << f.dim << ", \"nodes\": " << f.nodes
              << ", \"directed_links\": " << f.links << ", \"threads\": " << f.nodes
              << ", \"link_capacity\": " << f.capacity << ", \"diameter\": " << f.dim
              << ", \"can_start\": " << (f.refusal.empty() ? "true" : "false")
              << ", \"largest_dim_here\": " << f.largest_dim
              << ",\n \"memory_estimate\": {\"bytes\": " << f.memory()
              << ", \"link_bytes\": " << f.link_bytes << ", \"node_bytes\": " << f.node_bytes
              << ", \"note\": \"estimate: per link capacity x " << link_descriptor_bytes << " B + "
              << link_index_bytes << " B, per node " << node_resident_bytes << " B\"},\n"
              << " \"gray_code\": {\"total_rows\": " << f.nodes << ", \"rows\": [";
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const gray_row& r = rows[k];
        std::cout << (k ? ",\n   " : "\n   ") << "{\"i\": " << r.i << ", \"gray\": \"" << r.code
                  << "\", \"transition\": ";
        if (r.transition < 0)
            std::cout << "null}";
        else
            std::cout << r.transition << "}";
    }
    std::cout << "]}}\n";
}

} // namespace

int info(args a) {
    options o;
    try {
        o = parse(a);
    } catch (const usage_error& e) {
        std::cerr << "hcube info: " << e.what() << '\n';
        return 2;
    }
    if (o.help) {
        std::cout << info_usage << "\n";
        return 0;
    }
    const machine_facts f = facts(o.dim);
    const std::uint64_t shown = o.dim <= full_table_dim ? f.nodes : rows_when_large;
    const std::vector<gray_row> rows = gray_rows(o.dim, shown);
    if (o.json)
        print_json(f, rows);
    else
        print_text(f, rows);
    return 0;
}

} // namespace hcube::cli
