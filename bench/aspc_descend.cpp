// Hu side by side, through the catalog only:
//   - ASPC, four-step (all-port) vs single-port, n = 2 .. 10;
//   - +-2^b-descend, direct vs pipelined, N = 2^2 .. 2^10, M/N = 1 .. 1024
//     (powers of two, M capped so the whole run takes a few minutes).
// Writes CSV (stdout, or --csv FILE) and a summary on stderr.
//
//   bench-aspc [--quick] [--csv FILE] [--max-m M] [--reps R] [--kernel pcr|prefix|shift]
//
// --quick: N <= 2^8, M <= 2^12 (under a minute); default M <= 2^16 (a few
// minutes). Wall time is the median of R runs (default 1); step counts are
// deterministic.
#include <hcube/args.hpp>
#include <hcube/cost/aspc.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace hcube;

namespace {

struct options {
    bool quick = false;
    std::string csv;
    std::size_t max_m = std::size_t{1} << 16;
    std::string kernel = "prefix";
    int reps = 1;
};

options parse(int argc, char** argv) {
    options o;
    CLI::App app{"Hu side by side through the catalog: ASPC four-step vs "
                 "single-port, and +-2^b-descend direct vs pipelined.",
                 "bench-aspc"};
    app.add_flag("--quick", o.quick, "N <= 2^8, M <= 2^12 (under a minute)");
    app.add_option("--csv", o.csv, "CSV to FILE instead of stdout");
    cli::add_number(app, "--max-m", o.max_m, std::size_t{1}, std::size_t{1} << 40,
                    "a positive integer", "largest M (default 2^16)");
    cli::add_choice(
        app, "--kernel", {"pcr", "prefix", "shift"},
        [&o](std::size_t i) {
            o.kernel = std::array{"pcr", "prefix", "shift"}[i];
        },
        "descend's kernel (default prefix)");
    cli::add_number(app, "--reps", o.reps, 1, 1000000, "an integer >= 1",
                    "runs per point, median wall time taken (default 1)");
    cli::parse_or_exit(app, argc, argv);
    if (o.quick) o.max_m = std::min<std::size_t>(o.max_m, std::size_t{1} << 12);
    return o;
}

// Runs a catalog entry `reps` times on a machine that is reused across runs;
// the outcome of the run with the median wall time.
run_outcome run_entry(machine& m, const std::string& op, const std::string& algo, run_params p,
                      int reps) {
    const algorithm_entry* e = builtin_catalog().find(op, algo);
    if (!e) {
        std::cerr << "no catalog entry " << op << " " << algo << "\n";
        std::exit(1);
    }
    p.op = op;
    p.algo = algo;
    for (const auto& s : e->options)
        p.options.try_emplace(s.name, s.fallback);
    if (const std::string why = e->unfit(p); !why.empty()) {
        std::cerr << op << " " << algo << ": " << why << "\n";
        std::exit(1);
    }
    std::vector<run_outcome> runs;
    for (int r = 0; r < reps; ++r)
        runs.push_back(e->run(m, p));
    std::sort(runs.begin(), runs.end(), [](const run_outcome& a, const run_outcome& b) {
        return a.report.wall_seconds < b.report.wall_seconds;
    });
    return runs[runs.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    hcube::keep_freed_memory(); // no page faults of recycled buffers in the timings
    const options o = parse(argc, argv);
    std::ofstream file;
    if (!o.csv.empty()) file.open(o.csv);
    std::ostream& csv = o.csv.empty() ? std::cout : file;
    csv << "op,algo,N,words,steps,exact_steps,seed_steps,wall_seconds,verified\n";
    const int max_n = o.quick ? 8 : 10;
    bool all_verified = true;

    // ASPC: one element per slot, both port models.
    std::cerr << "ASPC (w = 1): steps and wall time\n";
    for (int n = 2; n <= max_n; ++n) {
        run_params p;
        p.dim = n;
        p.words = 1;
        std::map<std::string, run_outcome> got;
        for (const auto& [algo, ports] : {std::pair{"four-step", port_model::all_port},
                                          std::pair{"single-port", port_model::single_port}}) {
            p.ports = ports;
            config c;
            c.dim = n;
            c.ports = ports;
            machine m(c);
            const run_outcome r = run_entry(m, "aspc", algo, p, o.reps);
            all_verified &= r.verified;
            const long exact = port_policy_of(ports).several_links_at_once()
                                   ? cost::aspc_all_port_steps(n)
                                   : cost::aspc_single_port_steps(n);
            csv << "aspc," << algo << "," << (1 << n) << ",1," << r.report.steps << "," << exact
                << "," << exact << "," << r.report.wall_seconds << "," << r.verified << "\n";
            got[algo] = r;
        }
        std::cerr << "  N = " << (1 << n) << ": four-step " << got["four-step"].report.steps
                  << " steps " << got["four-step"].report.wall_seconds * 1e3 << " ms, single-port "
                  << got["single-port"].report.steps << " steps "
                  << got["single-port"].report.wall_seconds * 1e3 << " ms\n";
    }

    // +-2^b-descend: the crossover M/N where pipelined wins, in steps and wall time.
    std::cerr << "descend (kernel " << o.kernel << ", M <= " << o.max_m
              << "): pipelined vs direct\n";
    for (int n = 2; n <= max_n; ++n) {
        config c;
        c.dim = n;
        c.ports = port_model::all_port;
        machine m(c);
        std::size_t first_steps_win = 0, first_wall_win = 0;
        double last_wall_ratio = 0, last_steps_ratio = 0;
        std::size_t last_L = 0;
        for (std::size_t L = 1; L <= 1024 && (L << n) <= o.max_m; L *= 2) {
            const std::size_t M = L << n;
            run_params p;
            p.dim = n;
            p.words = M;
            p.ports = port_model::all_port;
            p.options["kernel"] = o.kernel;
            const run_outcome d = run_entry(m, "descend", "direct", p, o.reps);
            const run_outcome q = run_entry(m, "descend", "pipelined", p, o.reps);
            all_verified &= d.verified && q.verified;
            csv << "descend,direct," << (1 << n) << "," << M << "," << d.report.steps << ","
                << cost::descend_direct_steps(n, M) << "," << cost::descend_direct_paper_steps(n, M)
                << "," << d.report.wall_seconds << "," << d.verified << "\n";
            csv << "descend,pipelined," << (1 << n) << "," << M << "," << q.report.steps << ","
                << cost::descend_pipelined_steps(n, M) << ","
                << cost::descend_pipelined_paper_steps(n, M) << "," << q.report.wall_seconds << ","
                << q.verified << "\n";
            if (!first_steps_win && q.report.steps < d.report.steps) first_steps_win = L;
            if (!first_wall_win && q.report.wall_seconds < d.report.wall_seconds)
                first_wall_win = L;
            last_steps_ratio = double(d.report.steps) / double(q.report.steps);
            last_wall_ratio = d.report.wall_seconds / q.report.wall_seconds;
            last_L = L;
        }
        std::cerr << "  N = " << (1 << n) << ": pipelined fewer steps from M/N = "
                  << (first_steps_win ? std::to_string(first_steps_win) : "-")
                  << ", faster wall from M/N = "
                  << (first_wall_win ? std::to_string(first_wall_win) : "-")
                  << "; at M/N = " << last_L << " direct/pipelined steps " << last_steps_ratio
                  << ", wall " << last_wall_ratio << "\n";
    }
    if (!all_verified) std::cerr << "SOME RUNS FAILED VERIFICATION\n";
    return all_verified ? 0 : 1;
}
