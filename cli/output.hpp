// Output shared by the subcommands: numbers as the text output prints them,
// files to write,
// and JSON on one line with a space after ':' and ',' (readable and greppable,
// the form scripts have parsed since the first `hcube run --json`).
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace hcube::cli {

using json = nlohmann::ordered_json;

// `v` with up to `digits` significant digits, as printf's %g: 77, 254.125.
std::string number(double v, int digits = 15);

// `path` opened for writing, or a usage_error naming it.
std::ofstream open_output(const std::string& path);

// A usage_error naming `option` and `path` unless `path` could be written:
// an existing file we may write, or a new one in a directory we may write.
// Creates nothing, so a run that fails leaves an older file as it was.
void check_output(const std::string& option, const std::string& path);

// A double as a JSON number with `digits` significant digits (by default the
// text's 15), integral values as integers (77, not 77.0).
json json_number(double v, int digits = 15);

// `j` on one line: {"key": value, "key": [1, 2]}.
std::string json_line(const json& j);

// With --json, a failure on stdout too: {"command": "hcube run", "error":
// "...", "exit_status": 2}.
void print_json_error(const std::string& command, const std::string& what, int status);

} // namespace hcube::cli
