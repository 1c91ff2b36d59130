// The calibrated cost model: t_s (seconds per message) and t_w
// (seconds per word) of this machine's links, fitted to `hcube bench latency`
// (a one-way message of m words takes t_s + t_w m), saved per executor and
// link implementation, and loaded by `hcube run --cost calibrated` and
// calibrated(). With it, virtual time is a prediction of wall time in seconds
// and `auto` picks by this machine's costs (docs/cost-model.md).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <hcube/config.hpp>
#include <hcube/driver/catalog.hpp>

namespace hcube::calibration {

// A word is an int32, the catalog's default element type; a run with 8-byte
// elements pays t_w * 8 / word_bytes per element.
inline constexpr std::size_t word_bytes = 4;

// One measurement: a message of `words` words took `seconds`.
struct point {
    double words = 0, seconds = 0;
};

// t_s + t_w m fitted by least squares on the relative residuals (weights
// 1 / seconds^2, so small messages count as much as large ones) with
// t_s, t_w >= 0, and its quality: R^2 of the seconds, and the worst
// |fit - measured| / measured (a noisy measurement shows there).
struct fit {
    double t_s = 0, t_w = 0;
    double r2 = 0, worst_residual = 0;
    std::size_t points = 0;
};

// Throws error, naming the values, for fewer than two distinct sizes or a
// time that is not a finite number > 0.
fit fit_points(std::span<const point> points);

// Why a fit predicts poorly, with its numbers: a worst relative residual
// above 25% or R^2 below 0.9 (the machine was busy, or the links do not
// follow t_s + t_w m); empty for a good fit.
std::string poor_fit(const fit& f);

// A machine's calibration: which links it measured, the fit, and the
// collectives' measured fastest algorithms (empty: not measured).
struct entry {
    executor_kind executor = executor_kind::threads;
    link_impl links = link_impl::ring;
    fit costs;
    std::string measured; // UTC date and time, e.g. "2026-11-23 01:02:03"
    measured_table fastest;
};

// "threads+ring": the key of a calibration in the file.
std::string key(executor_kind e, link_impl l);

// The calibration file: HCUBE_CALIBRATION if set, else
// $XDG_CACHE_HOME/hcube/calibration.json, else ~/.cache/hcube/calibration.json.
std::string default_path();

// Adds or replaces e's key in the file at `path` (creating it and its
// directory); throws error when it cannot be read or written.
void save(const entry& e, const std::string& path);

// What save would refuse, found before a survey of minutes: a file that is not
// a calibration file, or a path that cannot be written (usage_error naming it
// and the reason). Creates the directory, not the file.
void check_destination(const std::string& path);

// The calibration of (executor, links) in the file at `path`; nullopt when the
// file or the key is missing; error when the file is not a calibration file.
std::optional<entry> load(const std::string& path, executor_kind e, link_impl l);

// The executor and link implementation a machine configured with these
// (automatic included: HCUBE_EXECUTOR, HCUBE_LINKS) runs.
std::pair<executor_kind, link_impl> resolve(executor_kind e, link_impl l);

// The cost model of (executor, links) from the file, t_w per element of
// elem_bytes; a usage_error saying to run `hcube calibrate` when there is none.
cost_model calibrated(executor_kind e, link_impl l, std::size_t elem_bytes,
                      const std::string& path = default_path());

// The measured table of (executor, links) from the file, for
// run_params::measured; null when the file, the key or the table is missing.
std::shared_ptr<const measured_table>
measured_fastest_table(executor_kind e, link_impl l, const std::string& path = default_path());

// The CPUs this process may run on: run_params::cores under --cost calibrated.
int usable_cores();

// Measures one-way latency (microbench latency on link 0 of a 1-cube) at
// `words` (int32 words per message) and fits it.
struct measurement {
    entry result;
    std::vector<point> points;
};
measurement measure(const config& machine, const std::vector<std::size_t>& words, long iterations,
                    double seconds, int samples);

// Default sizes: 1, 4, 16, ..., 65536 words.
std::vector<std::size_t> default_words();

} // namespace hcube::calibration
