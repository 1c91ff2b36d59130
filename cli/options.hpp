// Option groups shared by subcommands: each adds its options to a CLI11 app
// and fills the parameters they describe. A new machine option (a link
// implementation, an executor, ...) is a few lines in add_machine_options.
#pragma once

#include <CLI/CLI.hpp>

#include <hcube/driver/catalog.hpp>

namespace hcube::cli {

// The machine a run starts (machine_config(p) turns it into a config):
// --dim D, --ports all|single, --ts X, --tw Y, --link-capacity C,
// --links ring|boost, --executor threads|fibers, --workers W, --stack-bytes B.
void add_machine_options(CLI::App& app, run_params& p);

// What a run moves: --words M, --type int32|int64|double, --root R, --shift Q.
void add_data_options(CLI::App& app, run_params& p);

// Every option a catalog entry declares (--order, --kernel, --ring, ...),
// once each, into p.options; run_algorithm checks them against the entry.
void add_catalog_options(CLI::App& app, const catalog& c, run_params& p);

// How long a measurement runs (hcube bench, hcube calibrate).
struct timing_params {
    long iterations = 0; // repetitions per sample; 0: as many as fill `seconds`
    double seconds = 0;  // per size; 0: the benchmark's default
    int samples = 5;
};

// --iterations N, --seconds S, --samples N; `repeated` says what one
// repetition is, e.g. "round trips, windows, exchanges".
void add_timing_options(CLI::App& app, timing_params& t, const std::string& repeated);

// A usage_error when --iterations and --seconds are both given.
void check_timing(const timing_params& t);

} // namespace hcube::cli
