// bench-cm200: the shape of Mathur & Johnsson's measurements (Mathur & Johnsson,
// section 6) on this multicore: wall time of all-to-all broadcast and reduction
// with one cycle, d cycles (index computation, index motion, no reordering)
// and the alternatives, for a sweep of dimensions and M' (Tables 4, 5, 13, 14),
// the data motion rate (Table 18) and the M' from which d-cycles beats one
// cycle (Table 9). CSV on stdout (or --csv FILE); the summary on stderr.
//
// Every point runs the catalog's driver (deterministic input, verification
// outside the timed part) on one machine per dimension, all-port, 64-bit
// elements as in the source's tables, node addresses in Gray code. The time is
// the median of report.wall_seconds over --runs runs.
//
// Data motion rate = bytes delivered / wall time, bytes delivered = N (N-1) M'
// x 8 (every node receives every other node's M' elements; Table 18 divides by
// N and quotes Mbytes/s per node).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <hcube/cost/cm200.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

#include <hcube/args.hpp>

#include <hcube/driver/microbench.hpp>

using namespace hcube;
using hcube::microbench::median;

namespace {

struct options {
    std::vector<int> dims = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    std::vector<std::size_t> words = {4, 16, 64, 128, 256, 1024};
    std::vector<std::string> ops = {"allgather", "reduce-scatter"};
    int runs = 3;
    double max_seconds = 5;
    int rate_dim = -1;
    std::string csv;
};

// Options given explicitly win over --quick and --rate, whatever their order.
options parse(int argc, char** argv) {
    options o, given;
    bool quick = false;
    CLI::App app{
        "The shape of Mathur & Johnsson's measurements (section 6): wall time of all-to-all "
        "broadcast and reduction along one and d Hamiltonian cycles.",
        "bench-cm200"};
    const std::size_t huge = std::size_t{1} << 40;
    auto* dims = cli::add_value(
        app, "--dims", [&](const std::string& v) { given.dims = cli::parse_dims("--dims", v, 12); },
        "dimensions, e.g. 1-10 or 2,4,8 (default 1-10)");
    auto* words =
        cli::add_numbers(app, "--words", given.words, std::size_t{0}, huge, "non-negative integers",
                         "M' per node (default 4,16,64,128,256,1024)");
    auto* ops = cli::add_value(
        app, "--ops",
        [&](const std::string& v) {
            given.ops = cli::split(v);
            for (const auto& op : given.ops)
                if (op != "allgather" && op != "reduce-scatter")
                    throw usage_error("--ops '" + op + "' is not allgather or reduce-scatter");
        },
        "allgather, reduce-scatter (default both)");
    auto* runs = cli::add_number(app, "--runs", given.runs, 1, 1000000, "an integer >= 1",
                                 "runs per point, median taken (default 3)");
    auto* max_seconds =
        cli::add_number(app, "--max-seconds", given.max_seconds, 0.0, 1e9, "a number >= 0",
                        "a point slower than S skips larger M' and d of its variant (default 5)");
    cli::add_number(app, "--rate", o.rate_dim, 0, 12, "a dimension in 0..12",
                    "only the Table 18 point: allgather at dimension D with M' = 128 (or "
                    "--words), every cycle variant, 1 run");
    app.add_option("--csv", o.csv, "CSV to FILE instead of stdout");
    app.add_flag("--quick", quick, "dims 1-6, words 4,64,128,1024, 1 run, max-seconds 1");
    cli::parse_or_exit(app, argc, argv);
    if (quick) {
        o.dims = {1, 2, 3, 4, 5, 6};
        o.words = {4, 64, 128, 1024};
        o.runs = 1;
        o.max_seconds = 1;
    }
    if (o.rate_dim >= 0) {
        o.dims = {o.rate_dim};
        o.ops = {"allgather"};
        o.runs = 1;
        o.words = {128};
    }
    if (*dims) o.dims = given.dims;
    if (*words) o.words = given.words;
    if (*ops) o.ops = given.ops;
    if (*runs) o.runs = given.runs;
    if (*max_seconds) o.max_seconds = given.max_seconds;
    return o;
}

// One measured configuration of an algorithm.
struct variant {
    std::string op, algo, index; // index empty: the entry takes no --index
    std::string label() const { return algo + (index.empty() ? "" : "/" + index); }
};

std::vector<variant> variants(const std::string& op, bool rate_only) {
    if (op == "reduce-scatter")
        return {{op, "one-cycle", ""}, {op, "d-cycles", ""}, {op, "reduce-and-spread", ""}};
    std::vector<variant> v = {{op, "one-cycle", "arrival"},
                              {op, "one-cycle", "computation"},
                              {op, "d-cycles", "arrival"},
                              {op, "d-cycles", "computation"},
                              {op, "d-cycles", "motion"}};
    if (!rate_only) {
        v.push_back({op, "send-and-spread", ""});
        v.push_back({op, "one-source-at-a-time", ""});
    }
    return v;
}

struct point {
    variant var;
    int dim;
    std::size_t words;
    double wall; // median seconds
    double rate; // bytes delivered per second
};

// The source's Table 18 (Mbytes/s per node, 128 64-bit elements per node):
// one cycle and d cycles without and with index and reorder, and move index.
struct table18_row {
    int nodes;
    double one_plain, d_plain, one_reorder, d_reorder, move_index;
};
constexpr table18_row table18[] = {
    {2, 0.66, 0.33, 0.52, 0.20, 0.18},   {4, 0.66, 0.61, 0.57, 0.39, 0.34},
    {8, 0.66, 0.86, 0.59, 0.52, 0.48},   {16, 0.66, 1.16, 0.60, 0.68, 0.63},
    {32, 0.66, 1.40, 0.60, 0.66, 0.75},  {64, 0.66, 1.62, 0.60, 0.70, 0.85},
    {128, 0.66, 1.77, 0.60, 0.78, 0.92}, {256, 0.66, 2.13, 0.60, 0.85, 1.07},
    {512, 0.66, 2.14, 0.60, 0.79, 1.07}, {1024, 0.66, 2.40, 0.60, 0.73, 1.16},
    {2048, 0.66, 2.70, 0.60, 0.63, 1.27}};

const point* find(const std::vector<point>& pts, const std::string& op, const std::string& label,
                  int d, std::size_t m) {
    for (const auto& p : pts)
        if (p.var.op == op && p.var.label() == label && p.dim == d && p.words == m) return &p;
    return nullptr;
}

void print_table(std::ostream& os, const std::vector<point>& pts, const std::string& op,
                 const std::vector<std::string>& labels, const std::vector<int>& dims,
                 const std::vector<std::size_t>& words, bool by_words, int fixed_d,
                 std::size_t fixed_m) {
    os << std::setw(8) << (by_words ? "M'" : "nodes");
    for (const auto& l : labels)
        os << std::setw(std::max<int>(int(l.size()) + 2, 12)) << l;
    os << "\n";
    const std::size_t rows = by_words ? words.size() : dims.size();
    for (std::size_t r = 0; r < rows; ++r) {
        const int d = by_words ? fixed_d : dims[r];
        const std::size_t m = by_words ? words[r] : fixed_m;
        os << std::setw(8) << (by_words ? m : std::size_t(1) << d);
        for (const auto& l : labels) {
            const point* p = find(pts, op, l, d, m);
            os << std::setw(std::max<int>(int(l.size()) + 2, 12));
            if (p)
                os << std::fixed << std::setprecision(3) << p->wall * 1e3;
            else
                os << "-";
        }
        os << "\n";
    }
}

// One variant at dimension d and M' = m: o.runs runs (fewer once one takes
// longer than o.max_seconds), one CSV line, one progress line.
point measure(const options& o, machine& mach, std::ostream& csv, const std::string& op,
              const variant& var, int d, std::size_t m) {
    const std::string key = op + " " + var.label();
    run_params p;
    p.op = op;
    p.algo = var.algo;
    p.dim = d;
    p.words = m;
    p.ports = port_model::all_port;
    p.cost = mach.cfg().cost;
    p.type = elem_type::float64;
    p.options["order"] = "gray";
    if (!var.index.empty()) p.options["index"] = var.index;
    const algorithm_entry* e = builtin_catalog().find(op, var.algo);
    if (!e) throw usage_error("the catalog has no " + key);
    std::vector<double> walls;
    run_outcome out;
    for (int r = 0; r < o.runs; ++r) {
        out = e->run(mach, p);
        walls.push_back(out.report.wall_seconds);
        if (!out.verified)
            throw error(key + " d=" + std::to_string(d) + " M'=" + std::to_string(m) +
                        " failed: " + out.note);
        if (out.report.wall_seconds > o.max_seconds) break;
    }
    const double wall = median(walls);
    const double delivered = cost::cm200::bytes_delivered(d, m, 8);
    const double rate = wall > 0 ? delivered / wall : 0;
    csv << op << ',' << var.algo << ',' << var.index << ",gray," << d << ',' << (1 << d) << ',' << m
        << ",8," << walls.size() << ',' << wall << ',' << *std::ranges::min_element(walls) << ','
        << *std::ranges::max_element(walls) << ',' << out.report.virtual_time << ','
        << out.formula_time << ',' << out.report.steps << ',' << out.report.messages << ','
        << out.report.bytes << ',' << delivered << ',' << rate << ',' << rate / double(1 << d) / 1e6
        << ",1\n";
    csv.flush();
    std::cerr << "  " << key << " d=" << d << " M'=" << m << ": " << wall * 1e3 << " ms\n";
    return {var, d, m, wall, rate};
}

// Every variant at every dimension and size, a variant given up at a
// dimension once it took longer than o.max_seconds.
std::vector<point> measure_all(const options& o, std::ostream& csv) {
    csv << "op,algo,index,order,dim,nodes,words,elem_bytes,runs,wall_median_s,wall_min_s,"
           "wall_max_s,virtual_time,formula_time,steps,messages,link_bytes,delivered_bytes,"
           "rate_bytes_per_s,rate_mb_per_s_per_node,verified\n";
    std::vector<point> pts;
    std::set<std::string> given_up; // variants that got too slow
    for (int d : o.dims) {
        config cfg;
        cfg.dim = d;
        cfg.ports = port_model::all_port;
        machine mach(cfg);
        for (const auto& op : o.ops)
            for (const auto& var : variants(op, o.rate_dim >= 0)) {
                const std::string key = op + " " + var.label();
                for (std::size_t m : o.words) {
                    if (given_up.count(key)) break;
                    pts.push_back(measure(o, mach, csv, op, var, d, m));
                    if (pts.back().wall > o.max_seconds) given_up.insert(key);
                }
            }
    }
    return pts;
}

// The value `want` if `among` has it, else `otherwise`.
template <class T>
T if_run(const std::vector<T>& among, T want, T otherwise) {
    return std::find(among.begin(), among.end(), want) != among.end() ? want : otherwise;
}

// Tables 4, 5, 13 and 14: wall time as M' varies and as the nodes vary.
void print_wall_tables(std::ostream& os, const options& o, const std::vector<point>& pts) {
    os << "\n== wall time in ms (median of " << o.runs
       << " runs), all-port, 64-bit elements, Gray-code node order ==\n";
    const std::vector<std::string> bl = {
        "one-cycle/arrival", "one-cycle/computation", "d-cycles/arrival",    "d-cycles/computation",
        "d-cycles/motion",   "send-and-spread",       "one-source-at-a-time"};
    const std::vector<std::string> rl = {"one-cycle", "d-cycles", "reduce-and-spread"};
    const int d16 = if_run(o.dims, 4, o.dims.back());
    const std::size_t m_fixed = if_run(o.words, std::size_t{256}, o.words.back());
    for (const auto& op : o.ops) {
        const bool b = op == "allgather";
        os << "\n"
           << op << ", " << (1 << d16) << " nodes, M' varies (Table " << (b ? "4" : "13") << "):\n";
        print_table(os, pts, op, b ? bl : rl, o.dims, o.words, true, d16, 0);
        os << "\n"
           << op << ", M' = " << m_fixed << ", nodes vary (Table " << (b ? "5" : "14") << "):\n";
        print_table(os, pts, op, b ? bl : rl, o.dims, o.words, false, 0, m_fixed);
    }
}

// Table 18: the all-to-all broadcast's data motion rate beside the source's.
void print_rate_table(std::ostream& os, const options& o, const std::vector<point>& pts) {
    os << "\n== data motion rate, all-to-all broadcast (Table 18), Mbytes/s per node"
          " (total Gbytes/s) ==\n";
    const std::size_t m_rate =
        if_run(o.words, std::size_t{128}, if_run(o.words, std::size_t{256}, o.words.back()));
    os << "M' = " << m_rate << " (the source: 128); source's CM-200 figures in brackets\n";
    os << std::setw(6) << "nodes" << std::setw(24) << "one cycle" << std::setw(24) << "d cycles"
       << std::setw(24) << "one cycle+reorder" << std::setw(24) << "d cycles+reorder"
       << std::setw(24) << "d cycles, move index"
       << "\n";
    const std::string cols[] = {"one-cycle/arrival", "d-cycles/arrival", "one-cycle/computation",
                                "d-cycles/computation", "d-cycles/motion"};
    for (int d : o.dims) {
        const table18_row* seed = nullptr;
        for (const auto& r : table18)
            if (r.nodes == (1 << d)) seed = &r;
        const double seeds[] = {seed ? seed->one_plain : 0, seed ? seed->d_plain : 0,
                                seed ? seed->one_reorder : 0, seed ? seed->d_reorder : 0,
                                seed ? seed->move_index : 0};
        os << std::setw(6) << (1 << d);
        for (int c = 0; c < 5; ++c) {
            const point* p = find(pts, "allgather", cols[c], d, m_rate);
            std::ostringstream cell;
            cell << std::fixed;
            if (p)
                cell << std::fixed << std::setprecision(2) << p->rate / (1 << d) / 1e6 << " ("
                     << std::setprecision(3) << p->rate / 1e9 << ")";
            else
                cell << "-";
            if (seed) cell << " [" << std::setprecision(2) << seeds[c] << "]";
            os << std::setw(24) << cell.str();
        }
        os << "\n";
    }
    os << "Mathur & Johnsson, 2048-node CM-200: 5.4 Gbytes/s without reordering, 2.5 with"
          " (index motion)\n";
}

// Table 9: from which M' the d cycles beat one cycle.
void print_crossover_table(std::ostream& os, const options& o, const std::vector<point>& pts) {
    os << "\n== smallest M' (of those run) from which d-cycles beats one cycle, both"
          " with reordering (Table 9) ==\n";
    os << std::setw(6) << "nodes" << std::setw(16) << "d-H, c" << std::setw(16) << "d-H, m"
       << "\n";
    for (int d : o.dims) {
        os << std::setw(6) << (1 << d);
        for (const char* dc : {"d-cycles/computation", "d-cycles/motion"}) {
            std::string cell = "never";
            for (std::size_t m : o.words) {
                const point* a = find(pts, "allgather", dc, d, m);
                const point* b = find(pts, "allgather", "one-cycle/computation", d, m);
                if (a && b && a->wall < b->wall) {
                    cell = "M' >= " + std::to_string(m);
                    break;
                }
            }
            os << std::setw(16) << cell;
        }
        os << "\n";
    }
}

} // namespace

int main(int argc, char** argv) {
    hcube::keep_freed_memory(); // no page faults of recycled buffers in the timings
    try {
        const options o = parse(argc, argv);
        std::ofstream file;
        if (!o.csv.empty()) {
            file.open(o.csv);
            if (!file) throw usage_error("--csv: cannot write " + o.csv);
        }
        const std::vector<point> pts = measure_all(o, o.csv.empty() ? std::cout : file);
        print_wall_tables(std::cerr, o, pts);
        if (std::find(o.ops.begin(), o.ops.end(), "allgather") != o.ops.end()) {
            print_rate_table(std::cerr, o, pts);
            print_crossover_table(std::cerr, o, pts);
        }
        return 0;
    } catch (const hcube::error& e) {
        std::cerr << "bench-cm200: " << e.what() << '\n';
        return 1;
    }
}
