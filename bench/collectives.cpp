// bench-collectives: wall time per call of every catalog algorithm for a sweep
// of dimensions and message sizes, with the effective data rate. CSV on stdout
// (or --csv FILE), skipped points and a summary table on stderr.
//
// Each point reuses one machine per (dimension, port model) and takes the
// median of several runs of the catalog's driver (report.wall_seconds: the
// node programs only, not the input fill or the verification).
//
// Effective data rate = bytes that had to move / median wall time, where "had
// to move" is the operation's lower bound on words crossing links, times the
// element size (m words, p nodes):
//   broadcast, reduce, scatter, gather, scan, exscan  m (p-1)
//   allreduce                                         2 m (p-1)  (reduce-scatter + allgather)
//   allgather, reduce-scatter, alltoall               m p (p-1)
//   shift                                             m p        (0 for q = 0 mod p)
//   any other operation                               the bytes it actually moved on links
// The CSV also has the bytes actually moved on links and their rate.
//
// Algorithms that need all ports (Grama et al. 4.7.2; Mathur & Johnsson's d cycles) run
// all-port, the others single-port; a last table sets them side by side per
// operation, virtual time (--ts, --tw) and wall time at the largest d.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <hcube/cost/personalized.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

#include <hcube/args.hpp>
#include <hcube/driver/microbench.hpp>

using namespace hcube;

namespace {

struct options {
    std::vector<int> dims = {2, 3, 4, 5, 6, 7, 8, 9, 10};
    std::vector<std::size_t> words = {1, 64, 4096, 65536};
    std::set<std::string> ops;
    int runs = 5;
    double max_seconds = 2;
    double max_mib = 256;
    elem_type type = elem_type::int64;
    long long shift = 3;
    double t_s = 1, t_w = 0;
    std::string csv;
};

// Options given explicitly win over --quick, whatever their order.
options parse(int argc, char** argv) {
    options o, given;
    bool quick = false;
    CLI::App app{"Every catalog algorithm over a sweep of dimensions and message sizes: wall "
                 "time, virtual time and effective data rate.",
                 "bench-collectives"};
    auto* dims = cli::add_value(
        app, "--dims",
        [&](const std::string& v) { given.dims = cli::parse_dims("--dims", v, max_dim); },
        "dimensions, e.g. 2,4,6 or 2-10 (default 2-10)");
    auto* words = cli::add_numbers(app, "--words", given.words, std::size_t{0},
                                   std::size_t{1} << 40, "non-negative integers",
                                   "words per message (the catalog's m), default 1,64,4096,65536");
    cli::add_value(
        app, "--ops",
        [&](const std::string& v) {
            const auto ops = cli::split(v);
            o.ops = {ops.begin(), ops.end()};
        },
        "operations to run (default: every catalog operation)");
    auto* runs = cli::add_number(app, "--runs", given.runs, 1, 1000000, "an integer >= 1",
                                 "runs per point, median taken (default 5)");
    auto* max_seconds = cli::add_number(
        app, "--max-seconds", given.max_seconds, 0.0, 1e9, "a number >= 0",
        "a run slower than S is not repeated, and larger m and d of that algorithm are skipped "
        "(default 2)");
    cli::add_number(app, "--max-mib", o.max_mib, 0.0, 1e12, "a number >= 0",
                    "skip points whose inputs and outputs exceed N MiB (default 256)");
    cli::add_choice(
        app, "--type", {"int32", "int64", "double"},
        [&](std::size_t i) {
            o.type = std::array{elem_type::int32, elem_type::int64, elem_type::float64}[i];
        },
        "element type (default int64)");
    cli::add_number(app, "--shift", o.shift, std::numeric_limits<long long>::min(),
                    std::numeric_limits<long long>::max(), "an integer",
                    "q of the shift operation (default 3)");
    cli::add_number(app, "--ts", o.t_s, 0.0, 1e300, "a number >= 0",
                    "t_s of the cost model for the virtual times (default 1)");
    cli::add_number(app, "--tw", o.t_w, 0.0, 1e300, "a number >= 0",
                    "t_w of the cost model for the virtual times (default 0: steps)");
    app.add_option("--csv", o.csv, "CSV to FILE instead of stdout");
    app.add_flag("--quick", quick, "dims 2-6, words 1,64,4096, 3 runs, max-seconds 0.5");
    cli::parse_or_exit(app, argc, argv);
    if (quick) {
        o.dims = {2, 3, 4, 5, 6};
        o.words = {1, 64, 4096};
        o.runs = 3;
        o.max_seconds = 0.5;
    }
    if (*dims) o.dims = given.dims;
    if (*words) o.words = given.words;
    if (*runs) o.runs = given.runs;
    if (*max_seconds) o.max_seconds = given.max_seconds;
    return o;
}

std::size_t elem_size(elem_type t) {
    return t == elem_type::int32 ? 4 : 8;
}

bool all_to_all_like(const std::string& op) {
    return op == "allgather" || op == "reduce-scatter" || op == "alltoall";
}

// Inputs plus outputs of all nodes, in elements: m per node each way for the
// operations on one message, the root's p blocks for scatter and gather, p
// blocks per node for the all-to-all-like ones and any operation unknown here.
double footprint(const std::string& op, double p, double m) {
    if (op == "broadcast" || op == "reduce" || op == "allreduce" || op == "scan" ||
        op == "exscan" || op == "shift")
        return 2 * p * m;
    if (op == "scatter" || op == "gather") return 4 * p * m;
    return 2 * p * p * m;
}

// Bytes that had to move (see the top of this file); -1 when the operation has
// no definition here and the moved bytes are used.
double needed_bytes(const std::string& op, double p, double m, double elem, long long q, int d) {
    if (op == "broadcast" || op == "reduce" || op == "scatter" || op == "gather" || op == "scan" ||
        op == "exscan")
        return m * (p - 1) * elem;
    if (op == "allreduce") return 2 * m * (p - 1) * elem;
    if (all_to_all_like(op)) return m * p * (p - 1) * elem;
    if (op == "shift") return cost::shift_mod(d, q) == 0 ? 0 : m * p * elem;
    return -1;
}

struct point_result {
    double median = 0, best = 0, worst = 0;
    int runs = 0;
    run_outcome last;
};

// Runs the entry up to `runs` times on `m` (once if a run exceeds max_seconds).
point_result measure(machine& mach, const algorithm_entry& e, const run_params& p, int runs,
                     double max_seconds) {
    std::vector<double> walls;
    point_result r;
    for (int i = 0; i < runs; ++i) {
        r.last = e.run(mach, p);
        walls.push_back(r.last.report.wall_seconds);
        if (!r.last.verified || walls.back() > max_seconds) break;
    }
    std::sort(walls.begin(), walls.end());
    r.runs = int(walls.size());
    r.median = walls[walls.size() / 2];
    r.best = walls.front();
    r.worst = walls.back();
    return r;
}

std::string rate_text(double bytes, double seconds) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << bytes / seconds / 1e6;
    return os.str();
}

// Median wall time and rate of every measured point, for the summary.
using point_key = std::tuple<std::string, std::string, int, std::size_t>; // op, algo, d, m
struct point_figures {
    double wall, rate, virtual_time;
    port_model ports;
};

// One row per algorithm: milliseconds per call at m = `m` for each dimension,
// and the rate at the largest dimension measured.
void print_summary(std::ostream& os, const std::map<point_key, point_figures>& points,
                   const std::vector<int>& dims, std::size_t m) {
    os << "median wall time per call (ms) at m = " << m
       << " words; MB/s = bytes that had to move / wall time at the largest d measured\n"
       << std::left << std::setw(15) << "op" << std::setw(26) << "algo" << std::right;
    for (int d : dims)
        os << std::setw(9) << ("d=" + std::to_string(d));
    os << std::setw(10) << "MB/s"
       << "\n";
    std::set<std::pair<std::string, std::string>> algos;
    for (const auto& [key, f] : points)
        algos.insert({std::get<0>(key), std::get<1>(key)});
    for (const auto& [op, algo] : algos) {
        os << std::left << std::setw(15) << op << std::setw(26) << algo << std::right << std::fixed;
        double rate = -1;
        for (int d : dims) {
            const auto it = points.find({op, algo, d, m});
            if (it == points.end()) {
                os << std::setw(9) << "-";
                continue;
            }
            os << std::setw(9) << std::setprecision(3) << it->second.wall * 1e3;
            rate = it->second.rate;
        }
        if (rate < 0)
            os << std::setw(10) << "-";
        else
            os << std::setw(10) << std::setprecision(1) << rate;
        os << "\n";
    }
}

// Every operation with an all-port algorithm at (d, m): each algorithm's port
// model, virtual time and median wall time, and both against the operation's
// best single-port algorithm.
void print_ports_side_by_side(std::ostream& os, const std::map<point_key, point_figures>& points,
                              int d, std::size_t m) {
    std::map<std::string, std::vector<std::pair<std::string, point_figures>>> ops;
    for (const auto& [key, f] : points)
        if (std::get<2>(key) == d && std::get<3>(key) == m)
            ops[std::get<0>(key)].push_back({std::get<1>(key), f});
    os << "all-port vs single-port at d = " << d << ", m = " << m
       << " words: virtual time, median wall time (ms), and their ratio to the best single-port "
          "algorithm's\n"
       << std::left << std::setw(15) << "op" << std::setw(26) << "algo" << std::setw(8) << "ports"
       << std::right << std::setw(14) << "virtual" << std::setw(10) << "ratio" << std::setw(10)
       << "wall ms" << std::setw(10) << "ratio"
       << "\n";
    for (const auto& [op, algos] : ops) {
        double best_virtual = -1, best_wall = -1;
        bool any_all_port = false;
        for (const auto& [algo, f] : algos) {
            if (port_policy_of(f.ports).several_links_at_once()) {
                any_all_port = true;
                continue;
            }
            if (best_virtual < 0 || f.virtual_time < best_virtual) best_virtual = f.virtual_time;
            if (best_wall < 0 || f.wall < best_wall) best_wall = f.wall;
        }
        if (!any_all_port || best_virtual < 0) continue;
        for (const auto& [algo, f] : algos)
            os << std::left << std::setw(15) << op << std::setw(26) << algo << std::setw(8)
               << port_policy_of(f.ports).option << std::right << std::fixed << std::setprecision(0)
               << std::setw(14) << f.virtual_time << std::setprecision(2) << std::setw(10)
               << (best_virtual > 0 ? f.virtual_time / best_virtual : 0) << std::setprecision(3)
               << std::setw(10) << f.wall * 1e3 << std::setprecision(2) << std::setw(10)
               << f.wall / best_wall << "\n";
    }
}

} // namespace

int main(int argc, char** argv) {
    hcube::keep_freed_memory(); // no page faults of recycled buffers in the timings
    const options o = parse(argc, argv);
    std::ofstream file;
    if (!o.csv.empty()) file.open(o.csv);
    std::ostream& csv = o.csv.empty() ? std::cout : file;
    csv << "op,algo,ports,dim,nodes,words,type,runs,wall_median_s,wall_min_s,wall_max_s,"
           "virtual_time,"
           "formula_time,verified,needed_bytes,needed_MBps,link_bytes,link_MBps,status\n";

    const catalog& cat = builtin_catalog();
    std::vector<const algorithm_entry*> entries;
    for (const auto& e : cat.entries())
        if (o.ops.empty() || o.ops.count(e.op)) entries.push_back(&e);
    // (entry, m) too slow at some d: skip larger d; (entry, d) too slow at some
    // m: skip larger m.
    std::set<std::pair<const algorithm_entry*, std::size_t>> slow_words;
    std::set<std::pair<const algorithm_entry*, int>> slow_dims;
    std::map<point_key, point_figures> figures;
    int points = 0, skipped = 0;

    for (int d : o.dims) {
        std::map<port_model, std::unique_ptr<machine>> machines; // one per port model
        const double p = double(1 << d);
        for (const algorithm_entry* e : entries) {
            for (std::size_t m : o.words) {
                run_params prm;
                prm.op = e->op;
                prm.algo = e->algo;
                prm.dim = d;
                prm.words = m;
                prm.shift = o.shift;
                prm.type = o.type;
                prm.cost = {o.t_s, o.t_w, 0};
                for (const auto& spec : e->options)
                    prm.options[spec.name] = spec.fallback;
                const auto skip = [&](const std::string& why) {
                    ++skipped;
                    std::cerr << "skipped " << e->op << " " << e->algo << " d=" << d << " m=" << m
                              << ": " << why << "\n";
                    csv << e->op << ',' << e->algo << ",," << d << ',' << (1 << d) << ',' << m
                        << ',' << to_string(o.type) << ",0,,,,,,,,,,,"
                        << hcube::microbench::csv_field("skipped: " + why) << "\n";
                };
                // Single-port unless the algorithm needs all ports.
                std::string why = e->unfit(prm);
                if (!why.empty()) {
                    prm.ports = port_model::all_port;
                    if (!e->unfit(prm).empty()) {
                        skip(why);
                        continue;
                    }
                }
                const double mib =
                    footprint(e->op, p, double(m)) * double(elem_size(o.type)) / (1 << 20);
                if (mib > o.max_mib) {
                    skip("data " + std::to_string(int(mib)) + " MiB > " +
                         std::to_string(int(o.max_mib)) + " MiB");
                    continue;
                }
                if (slow_words.count({e, m}) || slow_dims.count({e, d})) {
                    skip("a smaller point took more than --max-seconds");
                    continue;
                }
                auto& mach = machines[prm.ports];
                if (!mach) mach = std::make_unique<machine>(machine_config(prm));
                point_result r;
                try {
                    r = measure(*mach, *e, prm, o.runs, o.max_seconds);
                } catch (const std::exception& ex) {
                    skip(std::string("error: ") + ex.what());
                    continue;
                }
                ++points;
                if (r.median > o.max_seconds) slow_words.insert({e, m}), slow_dims.insert({e, d});
                const run_report& rep = r.last.report;
                double needed =
                    needed_bytes(e->op, p, double(m), double(elem_size(o.type)), o.shift, d);
                if (needed < 0) needed = double(rep.bytes);
                csv << e->op << ',' << e->algo << ',' << port_policy_of(prm.ports).option << ','
                    << d << ',' << (1 << d) << ',' << m << ',' << to_string(o.type) << ',' << r.runs
                    << ',' << r.median << ',' << r.best << ',' << r.worst << ',' << rep.virtual_time
                    << ',' << r.last.formula_time << ',' << (r.last.verified ? "yes" : "no") << ','
                    << needed << ',' << rate_text(needed, r.median) << ',' << rep.bytes << ','
                    << rate_text(double(rep.bytes), r.median) << ','
                    << (r.last.verified ? "ok" : "NOT VERIFIED") << "\n";
                figures[{e->op, e->algo, d, m}] = {r.median, needed / r.median / 1e6,
                                                   rep.virtual_time, prm.ports};
            }
        }
    }

    std::cerr << "\n" << points << " points measured, " << skipped << " skipped\n";
    for (std::size_t m : o.words)
        if (m == 1 || m == 4096 || m == o.words.back()) {
            std::cerr << "\n";
            print_summary(std::cerr, figures, o.dims, m);
        }
    for (std::size_t m : o.words)
        if (m == 4096 || m == o.words.back()) {
            std::cerr << "\n";
            print_ports_side_by_side(std::cerr, figures, o.dims.back(), m);
        }
    return 0;
}
