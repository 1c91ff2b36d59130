// The subcommands of the `hcube` program. Each add_* registers its CLI11
// subcommand with its options and returns what to do once the command line
// is parsed; main parses, checks, runs the chosen action and maps errors to
// exit statuses (args.hpp: 0 ok, 1 failed or not verified, 2 usage error).
// A new subcommand: a source file with its add_* and one line in main.cpp.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace hcube::cli {

// Runs a parsed subcommand; returns its exit status. Throws usage_error for a
// usage error found after parsing (status 2); any other exception is a
// failed run (status 1).
using action = std::function<int()>;

action add_info(CLI::App& hcube);      // hcube info --dim D [--json]
action add_list(CLI::App& hcube);      // hcube list
action add_run(CLI::App& hcube);       // hcube run OP --algo NAME ...
action add_draw(CLI::App& hcube);      // hcube draw OP --algo NAME ... --out FILE.html
action add_bench(CLI::App& hcube);     // hcube bench latency|bw|bibw|rate|allport ...
action add_calibrate(CLI::App& hcube); // hcube calibrate [--executor E] [--links L] ...

} // namespace hcube::cli
