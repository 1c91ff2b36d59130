// Sub-commands of the `hcube` program; each returns the process exit status.
#pragma once

#include <span>
#include <string_view>

namespace hcube::cli {

using args = std::span<const std::string_view>;

int info(args a); // hcube info --dim D
int list(args a); // hcube list
int run(args a);  // hcube run OP --algo NAME ...
int draw(args a); // hcube draw OP --algo NAME ... --out FILE.html

} // namespace hcube::cli
