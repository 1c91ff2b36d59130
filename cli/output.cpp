#include "output.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

#include <hcube/error.hpp>

namespace hcube::cli {

std::string number(double v, int digits) {
    return fmt::format("{:.{}g}", v, digits);
}

json json_number(double v, int digits) {
    // As the text prints it: 185.5, not 185.49999999999997.
    v = std::strtod(number(v, digits).c_str(), nullptr);
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 0x1p53)
        return static_cast<std::int64_t>(v);
    return v;
}

std::string json_line(const json& j) {
    std::string s;
    const auto items = [&](char open, char close, auto&& each) {
        s += open;
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it, first = false) {
            if (!first) s += ", ";
            each(it);
        }
        s += close;
    };
    if (j.is_object())
        items('{', '}', [&](auto it) { s += json(it.key()).dump() + ": " + json_line(*it); });
    else if (j.is_array())
        items('[', ']', [&](auto it) { s += json_line(*it); });
    else if (j.is_number_float() && std::isfinite(j.get<double>()))
        // The shortest text that reads back as the same double (fmt's), so a
        // value json_number rounded prints as the text does: nlohmann's
        // Grisu2 gives 1.9639999999999998e-05 for 1.964e-05.
        s += fmt::format("{}", j.get<double>());
    else
        s += j.dump();
    return s;
}

void print_json_error(const std::string& command, const std::string& what, int status) {
    fmt::print("{}\n", json_line({{"command", command}, {"error", what}, {"exit_status", status}}));
    std::fflush(stdout);
}

void check_output(const std::string& option, const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path file(path);
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    std::string why;
    if (fs::is_directory(st))
        why = "it is a directory";
    else if (fs::exists(st))
        why = ::access(path.c_str(), W_OK) == 0 ? "" : "no permission to write it";
    else if (!fs::is_directory(dir, ec))
        why = "no directory " + dir.string();
    else if (::access(dir.c_str(), W_OK | X_OK) != 0)
        why = "no permission to write in " + dir.string();
    if (!why.empty()) throw usage_error(option + " " + path + ": cannot write it (" + why + ")");
}

std::ofstream open_output(const std::string& path) {
    std::ofstream f(path);
    if (!f) throw usage_error("cannot write " + path);
    return f;
}

} // namespace hcube::cli
