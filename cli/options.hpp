// Option groups shared by subcommands: each adds its options to a CLI11 app
// and fills the parameters they describe. A new machine option (a link
// implementation, an executor, ...) is a few lines in add_machine_options.
#pragma once

#include <CLI/CLI.hpp>

#include <hcube/catalog.hpp>

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

} // namespace hcube::cli
