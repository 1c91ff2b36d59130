// hcube calibrate: this machine's t_s and t_w for an executor and a link
// implementation (hcube_driver's calibration.hpp), printed with the fit's
// quality and saved for `hcube run --cost calibrated`.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <hcube/args.hpp>
#include <hcube/driver/calibration.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/driver/collective_bench.hpp>
#include <hcube/error.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "output.hpp"

namespace hcube::cli {

namespace {

namespace cal = calibration;

struct calibrate_command {
    run_params params;
    timing_params timing;
    std::vector<std::size_t> words = cal::default_words();
    std::string file;
    bool json = false;
    // The collectives' table (microbench::survey_fastest); no ops: none.
    std::vector<std::string> ops;
    std::vector<int> dims{2, 3, 4, 5, 6};
    std::vector<std::size_t> op_words{1, 16, 256, 4096, 65536};
    double op_seconds = 0.05;
    bool quick = false;
};

// Significant digits of every time printed, text and JSON alike: the
// medians vary more than that from run to run.
constexpr int time_digits = 4;

// Every operation with two or more algorithms: those `auto` chooses among.
std::vector<std::string> default_ops() {
    std::vector<std::string> ops;
    const catalog& c = builtin_catalog();
    for (const std::string& op : c.ops())
        if (c.algorithms(op).size() >= 2) ops.push_back(op);
    return ops;
}

// The runner-up's name and median: what the fastest won against (a point is
// surveyed only where two algorithms or more fit).
std::optional<std::pair<std::string, double>> runner_up(const measured_fastest& f) {
    std::optional<std::pair<std::string, double>> r;
    for (const auto& [algo, s] : f.median_seconds)
        if (algo != f.algo && (!r || s < r->second)) r = {algo, s};
    return r;
}

void print_text(const cal::measurement& m, const std::string& file, int samples) {
    const cal::fit& f = m.result.costs;
    fmt::print("# hcube calibrate: {} executor, {} links; one-way latency on link 0 of a 1-cube, "
               "median of {} samples\n# {:>10} {:>14} {:>14} {:>10}\n",
               to_string(m.result.executor), to_string(m.result.links), samples, "words",
               "measured_us", "fitted_us", "residual");
    for (const cal::point& p : m.points) {
        const double fitted = f.t_s + f.t_w * p.words;
        fmt::print("  {:>10} {:>14} {:>14} {:>9}%\n", number(p.words),
                   number(p.seconds * 1e6, time_digits), number(fitted * 1e6, time_digits),
                   number((fitted - p.seconds) / p.seconds * 100, 3));
    }
    fmt::print("t_s = {} s per message\n", number(f.t_s, time_digits));
    fmt::print("t_w = {} s per word (a word: int32, {} bytes; {} GB/s)\n",
               number(f.t_w, time_digits), cal::word_bytes,
               number(f.t_w > 0 ? double(cal::word_bytes) / f.t_w / 1e9 : 0, 3));
    fmt::print("fit: R^2 = {}, worst relative residual {}% over {} sizes\n", number(f.r2, 3),
               number(f.worst_residual * 100, 3), f.points);
    fmt::print("saved to {} as {}\n", file, cal::key(m.result.executor, m.result.links));
    fmt::print("# these are one message's costs between two threads on two cores; a collective "
               "runs p nodes on the machine's cores, with its other load, and takes longer than "
               "they predict (docs/cost-model.md says by how much and why)\n");
}

void print_point(const measured_fastest& f) {
    const auto second = runner_up(f);
    fmt::print("  {:<15} {:>3} {:>9} {:<26} {:>11} {:<26} {:>11}\n", f.op, f.dim, f.bytes, f.algo,
               number(f.median_seconds.at(f.algo) * 1e6, time_digits), second ? second->first : "-",
               second ? number(second->second * 1e6, time_digits) : "-");
}

void print_json(const cal::measurement& m, const std::string& file, int samples) {
    const cal::fit& f = m.result.costs;
    json j = {
        {"executor", to_string(m.result.executor)},
        {"links", to_string(m.result.links)},
        {"t_s", json_number(f.t_s, time_digits)},
        {"t_w", json_number(f.t_w, time_digits)},
        {"word_bytes", cal::word_bytes},
        {"r2", json_number(f.r2, 3)},
        {"worst_residual", json_number(f.worst_residual, 3)},
        {"samples", samples},
        {"file", file},
        {"points", json::array()},
        {"fastest", json::array()},
    };
    for (const cal::point& p : m.points)
        j["points"].push_back({{"words", json_number(p.words)},
                               {"seconds", json_number(p.seconds, time_digits)},
                               {"fitted", json_number(f.t_s + f.t_w * p.words, time_digits)}});
    for (const measured_fastest& p : m.result.fastest) {
        json medians = json::object();
        for (const auto& [algo, s] : p.median_seconds)
            medians[algo] = json_number(s, time_digits);
        j["fastest"].push_back({{"op", p.op},
                                {"ports", to_string(p.ports)},
                                {"dim", p.dim},
                                {"bytes", p.bytes},
                                {"algo", p.algo},
                                {"median_seconds", medians}});
    }
    fmt::print("{}\n", json_line(j));
}

int calibrate(const calibrate_command& c) {
    check_timing(c.timing);
    if (c.words.size() < 2)
        throw usage_error("--words needs at least two sizes to separate t_s from t_w");
    const std::string file = c.file.empty() ? cal::default_path() : c.file;
    cal::check_destination(file);
    cal::measurement m = cal::measure(machine_config(c.params), c.words, c.timing.iterations,
                                      c.timing.seconds, c.timing.samples);
    // The survey's runs predict with the new t_s and t_w: save them first.
    cal::save(m.result, file);
    if (!c.json) print_text(m, file, c.timing.samples);
    if (const std::string why = cal::poor_fit(m.result.costs); !why.empty())
        fmt::print(stderr,
                   "hcube calibrate: warning: a poor fit, {}: the machine was busy or the "
                   "messages do not follow t_s + t_w m here; it was saved, but calibrate again "
                   "on a quiet machine (more --samples and --seconds) before trusting --cost "
                   "calibrated\n",
                   why);
    if (!c.ops.empty()) {
        microbench::collective_setup s;
        s.params = c.params;
        s.params.executor = m.result.executor;
        s.params.links = m.result.links;
        s.words = c.op_words;
        s.seconds = c.op_seconds;
        s.samples = c.timing.samples;
        s.calibration_file = file;
        if (!c.json)
            fmt::print(
                "# auto --cost calibrated follows these: the algorithm with the least median "
                "wall time per call at each point (--ops none skips them)\n# {:<15} {:>3} "
                "{:>9} {:<26} {:>11} {:<26} {:>11}\n",
                "op", "dim", "bytes", "fastest", "median_us", "runner-up", "median_us");
        microbench::survey found = microbench::survey_fastest(
            s, c.ops, c.dims,
            c.json ? std::function<void(const measured_fastest&)>{} : print_point);
        m.result.fastest = std::move(found.fastest);
        cal::save(m.result, file);
        if (!c.json) {
            for (const std::string& why : found.skipped)
                fmt::print("# skipped {}\n", why);
            fmt::print("saved {} points to {}\n", m.result.fastest.size(), file);
        }
    }
    if (c.json) print_json(m, file, c.timing.samples);
    return exit_ok;
}

} // namespace

action add_calibrate(CLI::App& hcube) {
    CLI::App& app = *hcube.add_subcommand(
        "calibrate",
        "Measures this machine's cost model for an executor and a link implementation: the "
        "one-way time of a message of m words (hcube bench latency) fitted to t_s + t_w m by "
        "least squares on the relative residuals, printed with R^2 and the worst residual, "
        "and saved for hcube run --cost calibrated.");
    auto c = std::make_shared<calibrate_command>();
    add_machine_options(app, c->params);
    // One link of a 1-cube measures a message; virtual time is not involved.
    for (const char* flag : {"--dim", "--ts", "--tw", "--ports"})
        app.remove_option(app.get_option(flag));
    add_numbers(app, "--words", c->words, std::size_t{1}, std::size_t{1} << 24,
                "integers in 1..2^24", "message sizes in int32 words (default 1,4,16,..,65536)")
        ->type_name("LIST");
    add_timing_options(app, c->timing, "round trips");
    add_value(
        app, "--file", [c](const std::string& v) { c->file = v; },
        "the calibration file (default: HCUBE_CALIBRATION if set, else "
        "$XDG_CACHE_HOME/hcube/calibration.json, else ~/.cache/hcube/calibration.json); one "
        "entry per executor and links, others kept")
        ->type_name("PATH");
    app.add_flag("--json", c->json, "one JSON object: the fit, every point and the fastest table");
    c->ops = default_ops();
    add_value(
        app, "--ops",
        [c](const std::string& v) {
            c->ops = v == "none" ? std::vector<std::string>{} : split(v);
            for (const std::string& op : c->ops)
                if (builtin_catalog().algorithms(op).empty())
                    throw usage_error("--ops: unknown operation '" + op + "'");
        },
        "the operations whose algorithms are timed against each other for auto --cost "
        "calibrated (default: every operation with two or more; none: only t_s and t_w)")
        ->type_name("LIST");
    add_value(
        app, "--dims", [c](const std::string& v) { c->dims = parse_dims("--dims", v, max_dim); },
        "their dimensions, e.g. 2-6 (default) or 3,5")
        ->type_name("LIST");
    add_numbers(app, "--op-words", c->op_words, std::size_t{1}, std::size_t{1} << 24,
                "integers in 1..2^24",
                "their sizes, the catalog's m in int32 words (default "
                "1,16,256,4096,65536)")
        ->type_name("LIST");
    add_number(app, "--op-seconds", c->op_seconds, 1e-6, 3600.0,
               "a number of seconds in 1e-6..3600",
               "time per algorithm and point, over --samples samples (default 0.05)")
        ->type_name("S");
    app.add_flag("--quick", c->quick,
                 "t_s and t_w only, in a few seconds: --ops none --seconds 0.02 --samples 3 "
                 "(options given too win)");
    app.footer("The machine may be shared: calibrate on a quiet one, or the fit says so (a "
               "low R^2, large residuals, and a warning).");
    return [c, &app] {
        if (c->quick) {
            if (app.count("--ops") == 0) c->ops.clear();
            if (app.count("--seconds") + app.count("--iterations") == 0) c->timing.seconds = 0.02;
            if (app.count("--samples") == 0) c->timing.samples = 3;
        }
        return calibrate(*c);
    };
}

} // namespace hcube::cli
