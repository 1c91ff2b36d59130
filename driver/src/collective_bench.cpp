#include <hcube/driver/collective_bench.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>

#include <hcube/driver/calibration.hpp>
#include <hcube/error.hpp>
#include <hcube/machine.hpp>

namespace hcube::microbench {

namespace {

// p for `e` at m = words, its option defaults filled in.
run_params params_of(const algorithm_entry& e, run_params p, std::size_t words) {
    p.algo = e.algo;
    p.words = words;
    for (const option_spec& o : e.options)
        p.options.try_emplace(o.name, o.fallback);
    return p;
}

// One algorithm's runs at one size: `calls` verified runs per sample.
struct contender {
    const algorithm_entry* entry;
    run_params params;
    collective_row row;
    std::vector<double> per_call;

    double sample(machine& m, long n) {
        double total = 0;
        for (long i = 0; i < n; ++i) {
            const run_outcome o = entry->run(m, params);
            if (!o.verified)
                throw error(params.op + " " + entry->algo + " with m = " +
                            std::to_string(params.words) + " did not verify: " + o.note);
            total += o.report.wall_seconds;
            row.predicted = o.report.virtual_time;
        }
        return total;
    }
};

// The rows of every contender at one size. Each is warmed up and given its
// calls per sample first; then their samples are taken in turns (A B C A B C
// ...), so a slow moment of the machine (another process, a page-cache flush)
// falls on all of them alike rather than on whichever was being timed, and
// which one is fastest does not depend on when each ran.
std::vector<collective_row> measure(machine& m, std::vector<contender> cs,
                                    const collective_setup& s) {
    for (contender& c : cs) {
        c.row.algo = c.entry->algo;
        c.row.words = c.params.words;
        c.row.calls =
            repetitions(s.iterations, s.seconds, s.samples, [&](long n) { return c.sample(m, n); });
    }
    for (int i = 0; i < s.samples; ++i)
        for (contender& c : cs)
            c.per_call.push_back(c.sample(m, c.row.calls) / double(c.row.calls));
    std::vector<collective_row> rows;
    for (contender& c : cs) {
        c.row.seconds = spread_of(std::move(c.per_call));
        rows.push_back(c.row);
    }
    return rows;
}

} // namespace

collective_table run_collective(const collective_setup& s) {
    if (s.words.empty()) throw usage_error("no message sizes to measure");
    const catalog& c = builtin_catalog();
    run_params base = s.params;
    const bool all = base.algo == "all";
    std::vector<const algorithm_entry*> algos;
    if (all) {
        if (c.algorithms(base.op).empty()) resolve_algorithm(base); // names the operations
        algos = c.algorithms(base.op);
    } else {
        algos = {&resolve_algorithm(base)};
    }
    const std::string file =
        s.calibration_file.empty() ? calibration::default_path() : s.calibration_file;
    base.cost = calibration::calibrated(base.executor, base.links, elem_bytes(base.type), file);
    base.cores = calibration::usable_cores();
    base.measured = calibration::measured_fastest_table(base.executor, base.links, file);
    machine m(machine_config(base));
    collective_table t;
    t.machine = m.cfg();
    t.method = "wall time per call: the node programs of one run of the catalog's driver (each "
               "node allocates its result inside it; the input is filled before and verified "
               "after, untimed), after a warm-up; predicted: virtual time with the calibrated "
               "t_s and t_w of " +
               calibration::key(t.machine.executor, t.machine.links) + " (" + file + ")";
    int agreed = 0;
    for (const std::size_t words : s.words) {
        std::vector<contender> contenders;
        for (const algorithm_entry* e : algos) {
            const run_params p = params_of(*e, base, words);
            if (const std::string why = e->unfit(p); !why.empty()) {
                if (all) continue;
                throw usage_error(p.op + " " + p.algo + ": " + why);
            }
            if (const algorithm_entry* same = c.same_plan(*e, p); all && same) {
                t.notes.push_back("m = " + std::to_string(words) + ": " + e->algo + " runs " +
                                  same->algo + "'s plan here; timed once, as " + same->algo);
                continue;
            }
            if (const double need = estimated_bytes(*e, p); need > double(max_buffer_bytes))
                throw usage_error(p.op + " " + p.algo + " with m = " + std::to_string(words) +
                                  " on " + std::to_string(m.size()) + " nodes needs about " +
                                  std::to_string(std::llround(need / (1 << 20))) +
                                  " MiB (at most " + std::to_string(max_buffer_bytes >> 20) +
                                  " MiB): a smaller --dim or --sizes");
            contenders.push_back({e, p, {}, {}});
        }
        const std::size_t first = t.rows.size();
        std::ranges::copy(measure(m, std::move(contenders), s), std::back_inserter(t.rows));
        const auto rows = std::span(t.rows).subspan(first);
        if (rows.empty()) continue;
        run_params q = base;
        q.words = words;
        const algorithm_entry* chosen = c.choose(q);
        auto fastest = std::min_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
            return a.seconds.median < b.seconds.median;
        });
        fastest->fastest = true;
        for (collective_row& r : rows)
            r.chosen = chosen && r.algo == chosen->algo;
        if (rows.size() >= 2) {
            ++t.compared_sizes;
            agreed += fastest->chosen;
        }
    }
    t.agreement = t.compared_sizes ? double(agreed) / t.compared_sizes
                                   : std::numeric_limits<double>::quiet_NaN();
    return t;
}

survey survey_fastest(collective_setup s, const std::vector<std::string>& ops,
                      const std::vector<int>& dims,
                      const std::function<void(const measured_fastest&)>& measured) {
    const std::vector<std::size_t> sizes = s.words;
    s.params.algo = "all";
    survey out;
    for (const std::string& op : ops)
        for (const int dim : dims)
            for (const std::size_t words : sizes) {
                s.params.op = op;
                s.params.dim = dim;
                s.words = {words};
                // Time only where auto has a choice.
                const auto fitting = std::ranges::count_if(
                    builtin_catalog().algorithms(op), [&](const algorithm_entry* e) {
                        return e->unfit(params_of(*e, s.params, words)).empty();
                    });
                if (fitting < 2) continue;
                collective_table t;
                try {
                    t = run_collective(s);
                } catch (const usage_error& e) {
                    out.skipped.push_back(op + " at dim " + std::to_string(dim) +
                                          ", m = " + std::to_string(words) + ": " + e.what());
                    continue;
                }
                if (t.rows.size() < 2) continue;
                measured_fastest f{op, s.params.ports, dim, words * elem_bytes(s.params.type), "",
                                   {}};
                for (const collective_row& r : t.rows) {
                    f.median_seconds[r.algo] = r.seconds.median;
                    if (r.fastest) f.algo = r.algo;
                }
                if (measured) measured(f);
                out.fastest.push_back(std::move(f));
            }
    return out;
}

} // namespace hcube::microbench
