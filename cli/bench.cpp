// hcube bench KIND: OSU-style microbenchmarks of hcube's links
// (hcube_driver's microbench.hpp), one line per size with its limit, as a
// table, CSV or JSON, and a log-log SVG plot.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <hcube/args.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/driver/collective_bench.hpp>
#include <hcube/driver/microbench.hpp>
#include <hcube/error.hpp>
#include <hcube/plot.hpp>
#include <hcube/system.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "output.hpp"

namespace hcube::cli {

namespace {

namespace mb = microbench;

// Largest message --sizes takes.
constexpr std::size_t max_size = std::size_t(64) << 20;

struct bench_command {
    run_params params;
    std::string kind, op, algo, svg;  // op and algo: collective only
    std::optional<std::string> sizes; // --sizes as given: bytes, or words for collective
    timing_params timing;
    int window = 64;
    bool csv = false, json = false;
};

// "4K" is 4096 bytes (or words: `counted_in`), "1M" 2^20. Errors name the item
// as given, suffix and all.
std::size_t parse_size(std::string_view flag, std::string_view text, std::string_view counted_in) {
    const std::string expected =
        fmt::format("a size in {} (0..64M, e.g. 0,64,4K or 1-4M)", counted_in);
    const std::string shown = std::string(flag) + " '" + std::string(text) + "'";
    std::string_view digits = text;
    std::size_t unit = 1;
    if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'M')) {
        unit = digits.back() == 'K' ? std::size_t(1) << 10 : std::size_t(1) << 20;
        digits.remove_suffix(1);
    }
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec == std::errc::invalid_argument || end != digits.data() + digits.size())
        throw usage_error(shown + " is not " + expected);
    if (ec == std::errc::result_out_of_range || v > max_size / unit)
        throw usage_error(shown + " is out of range (expected " + expected + ")");
    return v * unit;
}

// "0,64,4K" and "1-4M" (the powers of two from 1 to 4M), or a mix.
std::vector<std::size_t> parse_sizes(std::string_view flag, std::string_view text,
                                     std::string_view counted_in) {
    std::vector<std::size_t> sizes;
    for (const std::string& item : split(text)) {
        const auto dash = item.find('-', 1);
        if (dash == std::string::npos) {
            sizes.push_back(parse_size(flag, item, counted_in));
            continue;
        }
        const std::string_view s(item);
        const std::size_t lo = parse_size(flag, s.substr(0, dash), counted_in);
        const std::size_t hi = parse_size(flag, s.substr(dash + 1), counted_in);
        if (lo == 0 || hi < lo)
            throw usage_error(std::string(flag) + " '" + item +
                              "' is not a range of sizes from 1 up (e.g. 1-4M)");
        for (std::size_t b = lo; b <= hi; b *= 2)
            sizes.push_back(b);
    }
    if (sizes.empty())
        throw usage_error(std::string(flag) + " '" + std::string(text) + "' names no size");
    return sizes;
}

// Integral columns (sizes, links, iterations) exactly, measurements with 4
// significant digits and no exponent (1234567 and 0.01234, never 1.235e+06).
std::string cell(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return number(v, 15);
    const int lead = v == 0 ? 0 : int(std::floor(std::log10(std::fabs(v))));
    return fmt::format("{:.{}f}", v, std::max(0, 3 - lead));
}

// allport's answer: for k = 1..d links per node, the best aggregate bandwidth
// and message rate over the sizes, each with its size and its speed-up over
// one link.
struct allport_best {
    int links;
    double bandwidth, bandwidth_bytes, rate, rate_bytes;
};

std::vector<allport_best> allport_summary(const mb::table& t) {
    const auto col = [&t](std::string_view name) {
        return std::size_t(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
    };
    const std::size_t links = col("links"), size = col("size_bytes"),
                      bandwidth = col("bandwidth_MBps"), rate = col("rate_per_s");
    std::vector<allport_best> out;
    for (const auto& row : t.rows) {
        if (out.empty() || out.back().links != int(row[links]))
            out.push_back({int(row[links]), 0, 0, 0, 0});
        allport_best& b = out.back();
        if (row[bandwidth] > b.bandwidth)
            b.bandwidth = row[bandwidth], b.bandwidth_bytes = row[size];
        if (row[rate] > b.rate) b.rate = row[rate], b.rate_bytes = row[size];
    }
    return out;
}

void print_allport_summary(const std::vector<allport_best>& best) {
    if (best.empty()) return;
    const allport_best& one = best.front();
    fmt::print("# summary: every node drives k links at once; the best over the sizes, and the "
               "speed-up over one link\n#  {:>5} {:>16} {:>10} {:>9} {:>14} {:>10} {:>9}\n",
               "links", "bandwidth_MBps", "at_bytes", "speed-up", "rate_per_s", "at_bytes",
               "speed-up");
    for (const allport_best& b : best)
        fmt::print("   {:>5} {:>16} {:>10} {:>8.2f}x {:>14} {:>10} {:>8.2f}x\n", b.links,
                   cell(b.bandwidth), cell(b.bandwidth_bytes), b.bandwidth / one.bandwidth,
                   cell(b.rate), cell(b.rate_bytes), b.rate / one.rate);
}

json allport_summary_json(const std::vector<allport_best>& best) {
    json out = json::array();
    for (const allport_best& b : best)
        out.push_back({{"links", b.links},
                       {"bandwidth_MBps", json_number(b.bandwidth)},
                       {"bandwidth_at_bytes", json_number(b.bandwidth_bytes)},
                       {"bandwidth_speedup", json_number(b.bandwidth / best.front().bandwidth)},
                       {"rate_per_s", json_number(b.rate)},
                       {"rate_at_bytes", json_number(b.rate_bytes)},
                       {"rate_speedup", json_number(b.rate / best.front().rate)}});
    return out;
}

// A table as printed: the machine, what was measured, columns and cells.
struct grid {
    config machine;
    std::string method;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
};

grid grid_of(const mb::table& t) {
    grid g{t.machine, t.method, t.columns, {}};
    for (const auto& row : t.rows) {
        std::vector<std::string> cells;
        for (const double v : row)
            cells.push_back(cell(v));
        g.rows.push_back(std::move(cells));
    }
    return g;
}

// One row per algorithm and size; auto and fastest are 1 or 0.
grid grid_of(const mb::collective_table& t) {
    grid g{t.machine,
           t.method,
           {"algo", "words", "time_us", "min_us", "max_us", "predicted_us", "calls", "auto",
            "fastest"},
           {}};
    for (const mb::collective_row& r : t.rows)
        g.rows.push_back({r.algo, cell(double(r.words)), cell(r.seconds.median * 1e6),
                          cell(r.seconds.min * 1e6), cell(r.seconds.max * 1e6),
                          cell(r.predicted * 1e6), cell(double(r.calls)), cell(r.chosen),
                          cell(r.fastest)});
    return g;
}

std::string machine_line(const config& c) {
    return fmt::format("d = {} ({} nodes), {}, {} links, link capacity {}", c.dim, 1 << c.dim,
                       to_string(c.executor), to_string(c.links), c.link_capacity);
}

void print_text(const bench_command& c, const grid& g) {
    fmt::print("# hcube bench {}: {}\n# {}\n# median of {} samples (min and max beside it), "
               "each of `iterations` repetitions after a warm-up\n",
               c.kind, machine_line(g.machine), g.method, c.timing.samples);
    std::vector<std::size_t> width(g.columns.size(), 14);
    for (const auto& row : g.rows)
        for (std::size_t i = 0; i < row.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    std::string line = "#";
    for (std::size_t i = 0; i < g.columns.size(); ++i)
        line += fmt::format(" {:>{}}", g.columns[i], width[i]);
    fmt::print("{}\n", line);
    for (const auto& row : g.rows) {
        line = " ";
        for (std::size_t i = 0; i < row.size(); ++i)
            line += fmt::format(" {:>{}}", row[i], width[i]);
        fmt::print("{}\n", line);
    }
}

void print_csv(const grid& g) {
    fmt::print("{}\n", fmt::join(g.columns, ","));
    for (const auto& row : g.rows)
        fmt::print("{}\n", fmt::join(row, ","));
}

// The machine, `before` (the kind's own keys), the method, the rows (numbers
// as numbers), then `after`.
void print_json(const bench_command& c, const grid& g, const json& before, const json& after) {
    json j;
    j["kind"] = c.kind;
    j["dim"] = g.machine.dim;
    j["nodes"] = 1 << g.machine.dim;
    j["executor"] = std::string(to_string(g.machine.executor));
    j["links"] = std::string(to_string(g.machine.links));
    j["link_capacity"] = g.machine.link_capacity;
    j["samples"] = c.timing.samples;
    j.update(before);
    j["method"] = g.method;
    j["rows"] = json::array();
    for (const auto& row : g.rows) {
        json r;
        for (std::size_t i = 0; i < row.size(); ++i) {
            char* end = nullptr;
            const double v = std::strtod(row[i].c_str(), &end);
            r[g.columns[i]] = *end == 0 ? json_number(v) : json(row[i]);
        }
        j["rows"].push_back(r);
    }
    j.update(after);
    fmt::print("{}\n", json_line(j));
}

// The plot: the measured median and its limit over the sizes (sizes above 0:
// the axes are logarithmic); allport one curve per k and the memcpy limit at
// k = d.
std::string svg_of(const bench_command& c, const mb::table& t) {
    const auto col = [&t](std::string_view name) {
        return std::size_t(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
    };
    const std::size_t size = col("size_bytes"), value = 1 + (t.what == mb::kind::allport);
    const std::size_t limit = t.what == mb::kind::allport ? col("memcpy_MBps") : 4;
    const std::size_t links = col("links");
    const auto curve_of = [&](std::string label, std::size_t y, int k) {
        plot_curve curve{std::move(label), {}};
        for (const auto& row : t.rows)
            if (row[size] > 0 && row[y] > 0 && (k == 0 || int(row[links]) == k))
                curve.points.push_back({row[size], row[y]});
        return curve;
    };
    std::vector<plot_curve> curves;
    if (t.what == mb::kind::allport) {
        for (int k = 1; k <= t.machine.dim; ++k)
            curves.push_back(
                curve_of(fmt::format("hcube, {} link{} per node", k, k > 1 ? "s" : ""), value, k));
        curves.push_back(curve_of(fmt::format("memcpy, {} links' bytes (limit)", t.machine.dim),
                                  limit, t.machine.dim));
    } else {
        const std::string limit_name = t.what == mb::kind::latency
                                           ? "raw ping-pong + memcpy (reference)"
                                       : t.what == mb::kind::rate ? "raw cache-line stream (limit)"
                                                                  : "memcpy (limit)";
        curves.push_back(curve_of("hcube " + c.kind, value, 0));
        curves.push_back(curve_of(limit_name, limit, 0));
    }
    const std::string y_label = t.what == mb::kind::latency ? "one-way latency (us)"
                                : t.what == mb::kind::rate  ? "messages per second"
                                                            : "bandwidth (MB/s)";
    return log_log_svg(fmt::format("hcube bench {}: {}", c.kind, machine_line(t.machine)),
                       "message size (bytes)", y_label, curves);
}

// hcube bench collective OP: --sizes are words (the catalog's m).
int bench_collective(const bench_command& c) {
    if (!c.svg.empty()) throw usage_error("--svg plots the link benchmarks, not collective");
    if (c.op.empty()) throw usage_error("missing operation: hcube bench collective OP");
    mb::collective_setup s;
    s.params = c.params;
    s.params.op = c.op;
    s.params.algo = c.algo.empty() ? "all" : c.algo;
    s.words =
        c.sizes ? parse_sizes("--sizes", *c.sizes, "words") : std::vector<std::size_t>{1, 64, 4096};
    s.iterations = c.timing.iterations;
    if (c.timing.seconds > 0) s.seconds = c.timing.seconds;
    s.samples = c.timing.samples;
    const mb::collective_table t = mb::run_collective(s);
    const grid g = grid_of(t);
    const json agreement = std::isnan(t.agreement) ? json(nullptr) : json_number(t.agreement);
    if (c.csv) {
        print_csv(g);
    } else if (c.json) {
        print_json(
            c, g,
            {{"op", c.op},
             {"t_s", json_number(t.machine.cost.t_s)},
             {"t_w", json_number(t.machine.cost.t_w)}},
            {{"compared_sizes", t.compared_sizes}, {"agreement", agreement}, {"notes", t.notes}});
    } else {
        print_text(c, g);
        for (const std::string& note : t.notes)
            fmt::print("# {}\n", note);
        fmt::print("# t_s = {} s, t_w = {} s per word; auto --cost calibrated chose the fastest "
                   "at {} of {} sizes with two or more algorithms\n",
                   number(t.machine.cost.t_s, 4), number(t.machine.cost.t_w, 4),
                   std::isnan(t.agreement) ? 0 : std::lround(t.agreement * t.compared_sizes),
                   t.compared_sizes);
    }
    return exit_ok;
}

int bench(bench_command& c) {
    std::vector<std::string> names;
    for (const mb::kind k : mb::kinds)
        names.emplace_back(mb::to_string(k));
    names.emplace_back("collective");
    const auto it = std::find(names.begin(), names.end(), c.kind);
    if (c.kind.empty()) throw usage_error("missing benchmark: " + one_of(names));
    if (it == names.end()) {
        std::string what = "KIND '" + c.kind + "' is not " + one_of(names);
        if (const std::string near = closest(c.kind, names); !near.empty())
            what += " (did you mean " + near + "?)";
        throw usage_error(what);
    }
    if (c.csv && c.json) throw usage_error("give --csv or --json, not both");
    check_timing(c.timing);
    if (c.kind == "collective") return bench_collective(c);
    if (!c.op.empty()) throw usage_error(c.kind + " takes no operation ('" + c.op + "')");
    if (!c.algo.empty()) throw usage_error("--algo applies to bench collective, not " + c.kind);
    mb::setup s;
    s.what = mb::kinds[it - names.begin()];
    s.machine = machine_config(c.params);
    // A machine this system cannot start is a usage error, as for hcube run.
    if (const std::string why = os_limit_problems(s.machine, read_os_limits()); !why.empty())
        throw usage_error(why);
    s.sizes = c.sizes ? parse_sizes("--sizes", *c.sizes, "bytes") : mb::default_sizes(s.what);
    s.iterations = c.timing.iterations;
    if (c.timing.seconds > 0) s.seconds = c.timing.seconds;
    s.samples = c.timing.samples;
    s.window = c.window;
    std::ofstream svg; // opened first: a bad path is found before the measurements
    if (!c.svg.empty()) svg = open_output(c.svg);
    const mb::table t = mb::run(s);
    if (!c.svg.empty()) svg << svg_of(c, t);
    const grid g = grid_of(t);
    const bool all_port = s.what == mb::kind::allport;
    if (c.csv) {
        print_csv(g);
    } else if (c.json) {
        print_json(c, g, {{"window", c.window}},
                   all_port ? json{{"summary", allport_summary_json(allport_summary(t))}}
                            : json::object());
    } else {
        print_text(c, g);
        if (all_port) print_allport_summary(allport_summary(t));
    }
    return exit_ok;
}

} // namespace

action add_bench(CLI::App& hcube) {
    CLI::App& app = *hcube.add_subcommand(
        "bench", "Microbenchmarks of the links, as the OSU micro-benchmarks measure MPI: one "
                 "line per message size with the median (min, max) and the limit that bounds "
                 "it, measured in the same run: latency (ping-pong), bw and bibw (windows of "
                 "messages one way and both ways), rate (messages per second), allport "
                 "(every node driving 1..d links at once) and collective OP (time per call of "
                 "an operation's algorithms, the calibrated model's prediction, auto's choice "
                 "and the fastest).");
    auto c = std::make_shared<bench_command>();
    run_params& p = c->params;
    p.dim = 1;
    app.add_option("KIND", c->kind, "latency, bw, bibw, rate, allport or collective")
        ->type_name("");
    app.add_option("OP", c->op, "collective: an operation of `hcube list`")->type_name("");
    add_machine_options(app, p);
    // Virtual time is the emulator's; a benchmark measures wall time on one
    // link (allport: all-port on all of them), collective under --ports.
    for (const char* flag : {"--ts", "--tw"})
        app.remove_option(app.get_option(flag));
    app.get_option("--dim")->description(
        "hypercube dimension (default 1: two nodes); latency, bw, bibw and rate use link 0 "
        "between nodes 0 and 1, allport every link of every node; collective: default 4");
    add_value(
        app, "--sizes", [c](const std::string& v) { c->sizes = v; },
        "message sizes in bytes, e.g. 0,64,4K or 1-4M (powers of two); default 0-4M for "
        "latency (0 and 1..4M), 1-4M for bw, bibw and allport, 1-8K for rate; collective: "
        "words (the catalog's m), default 1,64,4096")
        ->type_name("LIST");
    add_value(
        app, "--algo", [c](const std::string& v) { c->algo = v; },
        "collective: an algorithm of OP, auto, or all (default: every algorithm that fits, "
        "with auto's choice and the fastest marked)")
        ->type_name("NAME");
    add_timing_options(app, c->timing, "round trips, windows, exchanges");
    add_number(app, "--window", c->window, 1, 4096, "an integer in 1..4096",
               "bw, bibw, rate: messages sent back to back per repetition (default 64)")
        ->type_name("W");
    app.add_flag("--csv", c->csv, "CSV on stdout: a header of the columns, one line per size");
    app.add_flag("--json", c->json, "JSON on stdout, one line: the machine, the method, rows");
    add_value(
        app, "--svg", [c](const std::string& v) { c->svg = v; },
        "also write a log-log plot of the medians and their limits to FILE")
        ->type_name("FILE");
    app.footer("Times are wall time on a machine that may be shared: compare a line with its "
               "limit, measured in turns with it, rather than with another run.");
    return [c, &app] {
        if (c->kind == "collective" && app.count("--dim") == 0) c->params.dim = 4;
        return bench(*c);
    };
}

} // namespace hcube::cli
