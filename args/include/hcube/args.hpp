// Command-line pieces shared by the `hcube` program and the benchmarks, on
// CLI11. CLI11 finds the options; our own parsers read their values, so that
// every error names the flag and the value ("--dim 'x' is not an integer in
// 0..16") and is one line. Everything here throws usage_error; main turns it
// into exit status 2.
#pragma once

#include <charconv>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <hcube/error.hpp>

namespace hcube::cli {

// Exit status of every subcommand and benchmark.
enum exit_status : int {
    exit_ok = 0,     // success, verified
    exit_failed = 1, // a run that failed (a deadlock, a node's error) or did not verify
    exit_usage = 2,  // a usage error: one line on stderr
};

// `text` as a T in lo..hi: "FLAG 'TEXT' is not EXPECTED" or "FLAG 'TEXT' is
// out of range (expected EXPECTED)".
template <class T>
T parse_number(std::string_view flag, std::string_view text, T lo, T hi,
               std::string_view expected) {
    T v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const std::string shown = std::string(flag) + " '" + std::string(text) + "'";
    if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
        throw usage_error(shown + " is not " + std::string(expected));
    if (ec == std::errc::result_out_of_range || v < lo || v > hi || v != v)
        throw usage_error(shown + " is out of range (expected " + std::string(expected) + ")");
    return v;
}

// "a, b or c".
std::string one_of(std::span<const std::string> values);

// --NAME VALUE (also --NAME=VALUE), VALUE handed to `set`, which throws
// usage_error when it is bad. Given twice is an error (check_parsed).
CLI::Option* add_value(CLI::App& app, const std::string& flag,
                       std::function<void(const std::string&)> set, const std::string& help);

// --NAME N for a number in lo..hi; `expected` describes the range.
template <class T>
CLI::Option* add_number(CLI::App& app, const std::string& flag, T& target, T lo, T hi,
                        const std::string& expected, const std::string& help) {
    return add_value(
        app, flag,
        [&target, flag, lo, hi, expected](const std::string& v) {
            target = parse_number<T>(flag, v, lo, hi, expected);
        },
        help);
}

// --NAME V for V one of `values`; set receives its index.
CLI::Option* add_choice(CLI::App& app, const std::string& flag, std::vector<std::string> values,
                        std::function<void(std::size_t)> set, const std::string& help);

// "a,b,c" as its non-empty items.
std::vector<std::string> split(std::string_view text);
// "2,4,6" or "2-10" (or a mix): dimensions in 0..max.
std::vector<int> parse_dims(std::string_view flag, std::string_view text, int max);

// --NAME A,B,C: a list of numbers in lo..hi.
template <class T>
CLI::Option* add_numbers(CLI::App& app, const std::string& flag, std::vector<T>& target, T lo, T hi,
                         const std::string& expected, const std::string& help) {
    return add_value(
        app, flag,
        [&target, flag, lo, hi, expected](const std::string& v) {
            target.clear();
            for (const std::string& item : split(v))
                target.push_back(parse_number<T>(flag, item, lo, hi, expected));
        },
        help);
}

// What CLI11 lets through, checked after app.parse: an option given twice,
// an unknown option (the closest known name suggested) or an argument nobody
// takes. Apps are set up to let these through (prepare) so that the message
// is ours.
void prepare(CLI::App& app);
// Before CLI11 sees them: an argument of dashes alone ("--", "-=3", "--=3")
// names no option.
void check_arguments(int argc, char** argv);
void check_parsed(const CLI::App& app);

// A CLI11 parse error as one line (e.g. a missing value: "--dim needs a value").
std::string message(const CLI::ParseError& e);

// The closest of `candidates` to `word`, or "" when none is close enough to be
// a typo (at most 1 + |word| / 3 edits).
std::string closest(std::string_view word, std::span<const std::string> candidates);

// Parses a program without subcommands (the benchmarks): prints help and
// exits 0 on --help, prints "PROGRAM: message" and exits 2 on a usage error.
void parse_or_exit(CLI::App& app, int argc, char** argv);

} // namespace hcube::cli
