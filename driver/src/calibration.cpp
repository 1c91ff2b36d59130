#include <hcube/driver/calibration.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <sched.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <hcube/driver/microbench.hpp>
#include <hcube/error.hpp>
#include <hcube/machine.hpp>

namespace hcube::calibration {

namespace {

std::string text(double v) {
    std::ostringstream os;
    os.precision(6);
    os << v;
    return os.str();
}

} // namespace

std::string poor_fit(const fit& f) {
    constexpr double worst = 0.25, r2 = 0.9;
    if (f.worst_residual <= worst && f.r2 >= r2) return "";
    std::ostringstream os;
    os << std::setprecision(3) << "R^2 = " << f.r2 << ", worst relative residual "
       << f.worst_residual * 100 << "% (a good fit has R^2 >= " << r2
       << " and every residual within " << worst * 100 << "%)";
    return os.str();
}

fit fit_points(std::span<const point> points) {
    // Weighted normal equations of y = t_s + t_w x, w = 1 / y^2.
    double s0 = 0, s1 = 0, s2 = 0, sy = 0, sxy = 0;
    for (const point& p : points) {
        if (!(p.seconds > 0) || !std::isfinite(p.seconds))
            throw error("calibration: the time of " + text(p.words) +
                        " words is not a finite number > 0 (" + text(p.seconds) + " s)");
        const double w = 1 / (p.seconds * p.seconds);
        s0 += w, s1 += w * p.words, s2 += w * p.words * p.words;
        sy += w * p.seconds, sxy += w * p.words * p.seconds;
    }
    bool distinct = false;
    for (const point& p : points)
        distinct = distinct || p.words != points.front().words;
    if (!distinct)
        throw error("calibration: " + std::to_string(points.size()) +
                    " measurements of one size cannot separate t_s from t_w; measure at least "
                    "two distinct sizes");
    const double det = s0 * s2 - s1 * s1;
    fit f;
    f.points = points.size();
    f.t_w = (s0 * sxy - s1 * sy) / det;
    f.t_s = (s2 * sy - s1 * sxy) / det;
    if (f.t_s < 0 || f.t_w < 0) {
        // The best fit with t_s, t_w >= 0 lies on a boundary: through the
        // origin (t_s = 0) or flat (t_w = 0), whichever leaves less.
        const auto weighted_residual = [&](double ts, double tw) {
            double r = 0;
            for (const point& p : points)
                r += std::pow((ts + tw * p.words - p.seconds) / p.seconds, 2);
            return r;
        };
        const double through_origin = sxy / s2, flat = sy / s0;
        if (weighted_residual(0, through_origin) <= weighted_residual(flat, 0))
            f.t_s = 0, f.t_w = through_origin;
        else
            f.t_s = flat, f.t_w = 0;
    }
    double mean = 0;
    for (const point& p : points)
        mean += p.seconds / double(points.size());
    double res = 0, tot = 0;
    for (const point& p : points) {
        const double e = f.t_s + f.t_w * p.words - p.seconds;
        res += e * e, tot += (p.seconds - mean) * (p.seconds - mean);
        f.worst_residual = std::max(f.worst_residual, std::fabs(e) / p.seconds);
    }
    f.r2 = tot > 0 ? 1 - res / tot : 1;
    return f;
}

std::string key(executor_kind e, link_impl l) {
    return std::string(to_string(e)) + "+" + std::string(to_string(l));
}

std::string default_path() {
    if (const char* p = std::getenv("HCUBE_CALIBRATION"); p && *p) return p;
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg) return std::string(xdg) + "/hcube/calibration.json";
    if (home && *home) return std::string(home) + "/.cache/hcube/calibration.json";
    throw usage_error("no calibration file: neither HCUBE_CALIBRATION, XDG_CACHE_HOME nor HOME "
                      "is set (give --file PATH)");
}

namespace {

using json = nlohmann::ordered_json;

// hcube calibrate writes word_bytes (4); a file's may differ, but a word of
// more than 1 MiB is a damaged file, not a measurement.
constexpr std::uint64_t max_word_bytes = std::uint64_t(1) << 20;

// The file's object, {} when it does not exist.
json read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return json::object();
    json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw error("calibration file " + path +
                    " is not a JSON object (delete it and run "
                    "`hcube calibrate` again)");
    return j;
}

} // namespace

void save(const entry& e, const std::string& path) {
    json all = read_file(path);
    all[key(e.executor, e.links)] = {
        {"t_s", e.costs.t_s},
        {"t_w", e.costs.t_w},
        {"word_bytes", word_bytes},
        {"r2", e.costs.r2},
        {"worst_residual", e.costs.worst_residual},
        {"points", e.costs.points},
        {"measured", e.measured},
    };
    if (!e.fastest.empty()) {
        json& table = all[key(e.executor, e.links)]["fastest"] = json::array();
        for (const measured_fastest& f : e.fastest)
            table.push_back({{"op", f.op},
                             {"ports", to_string(f.ports)},
                             {"dim", f.dim},
                             {"bytes", f.bytes},
                             {"algo", f.algo},
                             {"median_seconds", f.median_seconds}});
    }
    const std::filesystem::path file(path);
    std::error_code ec;
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
    std::ofstream out(path);
    if (!(out << all.dump(2) << '\n'))
        throw error("cannot write the calibration file " + path +
                    (ec ? " (" + ec.message() + ")" : ""));
}

void check_destination(const std::string& path) {
    read_file(path);
    const std::filesystem::path file(path);
    const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::string why = ec.message();
    if (!ec) {
        const bool exists = std::filesystem::exists(file, ec);
        if (access((exists ? file : dir).c_str(), W_OK) == 0) return;
        why = std::strerror(errno);
    }
    throw usage_error("cannot write the calibration file " + path + " (" + why + ")");
}

std::optional<entry> load(const std::string& path, executor_kind e, link_impl l) {
    const json all = read_file(path);
    const auto it = all.find(key(e, l));
    if (it == all.end()) return std::nullopt;
    try {
        entry c{e, l, {}, it->at("measured").get<std::string>(), {}};
        c.costs.t_s = it->at("t_s").get<double>();
        // The bytes of the word t_w was measured per: a positive integer.
        const json& per = it->at("word_bytes");
        if (!per.is_number_unsigned() || per.get<std::uint64_t>() == 0 ||
            per.get<std::uint64_t>() > max_word_bytes)
            throw error("word_bytes must be an integer in 1.." + std::to_string(max_word_bytes) +
                        ", not " + per.dump());
        c.costs.t_w =
            it->at("t_w").get<double>() * double(word_bytes) / double(per.get<std::uint64_t>());
        c.costs.r2 = it->at("r2").get<double>();
        c.costs.worst_residual = it->at("worst_residual").get<double>();
        c.costs.points = it->at("points").get<std::size_t>();
        if (!(c.costs.t_s >= 0) || !(c.costs.t_w >= 0) || !std::isfinite(c.costs.t_s + c.costs.t_w))
            throw error("t_s and t_w must be finite numbers >= 0");
        if (const auto table = it->find("fastest"); table != it->end())
            for (const json& f : *table) {
                const auto ports = parse_port_model(f.at("ports").get<std::string>());
                if (!ports) throw error("fastest: unknown port model " + f.at("ports").dump());
                c.fastest.push_back({f.at("op").get<std::string>(), *ports, f.at("dim").get<int>(),
                                     f.at("bytes").get<std::size_t>(),
                                     f.at("algo").get<std::string>(),
                                     f.at("median_seconds").get<std::map<std::string, double>>()});
            }
        return c;
    } catch (const std::exception& x) {
        throw error("calibration file " + path + ", " + key(e, l) + ": " + x.what() +
                    " (run `hcube calibrate` again)");
    }
}

std::pair<executor_kind, link_impl> resolve(executor_kind e, link_impl l) {
    config c;
    c.executor = e;
    c.links = l;
    const machine m(c); // a 0-cube: resolves `automatic` as every machine does
    return {m.cfg().executor, m.cfg().links};
}

cost_model calibrated(executor_kind e, link_impl l, std::size_t elem_bytes,
                      const std::string& path) {
    const auto [exec, links] = resolve(e, l);
    const std::optional<entry> c = load(path, exec, links);
    if (!c)
        throw usage_error("no calibration for " + key(exec, links) + " in " + path +
                          ": run `hcube calibrate --executor " + std::string(to_string(exec)) +
                          " --links " + std::string(to_string(links)) + "` first");
    return {c->costs.t_s, c->costs.t_w * double(elem_bytes) / double(word_bytes), 0};
}

std::shared_ptr<const measured_table> measured_fastest_table(executor_kind e, link_impl l,
                                                             const std::string& path) {
    const auto [exec, links] = resolve(e, l);
    std::optional<entry> c = load(path, exec, links);
    if (!c || c->fastest.empty()) return nullptr;
    return std::make_shared<const measured_table>(std::move(c->fastest));
}

int usable_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
}

std::vector<std::size_t> default_words() {
    std::vector<std::size_t> w;
    for (std::size_t m = 1; m <= 65536; m *= 4)
        w.push_back(m);
    return w;
}

measurement measure(const config& machine, const std::vector<std::size_t>& words, long iterations,
                    double seconds, int samples) {
    microbench::setup s;
    s.what = microbench::kind::latency;
    s.machine = machine;
    s.machine.dim = 1;
    for (const std::size_t w : words)
        s.sizes.push_back(w * word_bytes);
    s.iterations = iterations;
    if (seconds > 0) s.seconds = seconds;
    s.samples = samples;
    const microbench::table t = microbench::run(s);
    measurement out;
    // latency's columns: size_bytes, latency_us (the median), ...
    for (const auto& row : t.rows)
        out.points.push_back({row[0] / double(word_bytes), row[1] * 1e-6});
    out.result.executor = t.machine.executor;
    out.result.links = t.machine.links;
    out.result.costs = fit_points(out.points);
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
    out.result.measured = stamp;
    return out;
}

} // namespace hcube::calibration
