#include <hcube/args.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <sstream>

#include <fmt/format.h>

namespace hcube::cli {

std::string one_of(std::span<const std::string> values) {
    std::string s;
    for (std::size_t i = 0; i < values.size(); ++i)
        s += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
    return s;
}

CLI::Option* add_value(CLI::App& app, const std::string& flag,
                       std::function<void(const std::string&)> set, const std::string& help) {
    // The last value counts; check_parsed refuses a second one by its count.
    return app.add_option_function<std::string>(flag, std::move(set), help)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->type_name("VALUE");
}

CLI::Option* add_choice(CLI::App& app, const std::string& flag, std::vector<std::string> values,
                        std::function<void(std::size_t)> set, const std::string& help) {
    return add_value(
               app, flag,
               [flag, values, set = std::move(set)](const std::string& v) {
                   const auto it = std::find(values.begin(), values.end(), v);
                   if (it == values.end())
                       throw usage_error(flag + " '" + v + "' is not " + one_of(values));
                   set(std::size_t(it - values.begin()));
               },
               help)
        ->type_name(fmt::format("{}", fmt::join(values, "|")));
}

std::vector<std::string> split(std::string_view text) {
    std::vector<std::string> out;
    std::stringstream ss{std::string(text)};
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

std::vector<int> parse_dims(std::string_view flag, std::string_view text, int max) {
    const std::string expected = "dimensions in 0.." + std::to_string(max) + ", e.g. 2,4 or 2-10";
    std::vector<int> dims;
    for (const std::string& item : split(text)) {
        const auto dash = item.find('-', 1);
        const std::string_view s(item);
        const int lo = parse_number<int>(flag, s.substr(0, dash), 0, max, expected);
        const int hi = dash == std::string::npos
                           ? lo
                           : parse_number<int>(flag, s.substr(dash + 1), 0, max, expected);
        for (int d = lo; d <= hi; ++d)
            dims.push_back(d);
    }
    if (dims.empty())
        throw usage_error(std::string(flag) + " '" + std::string(text) + "' names no dimension");
    return dims;
}

void prepare(CLI::App& app) {
    app.allow_extras();
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = up;
        }
    }
    return row[b.size()];
}

} // namespace

std::string closest(std::string_view word, std::span<const std::string> candidates) {
    std::string best;
    std::size_t best_distance = 1 + word.size() / 3 + 1;
    for (const std::string& c : candidates)
        if (const std::size_t d = edit_distance(word, c); d < best_distance)
            best = c, best_distance = d;
    return best;
}

void check_arguments(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg.starts_with('-') &&
            arg.substr(0, arg.find('=')).find_first_not_of('-') == std::string_view::npos)
            throw usage_error("'" + std::string(arg) +
                              "' is not an option: options are --NAME or --NAME VALUE");
    }
}

void check_parsed(const CLI::App& app) {
    for (const CLI::Option* o : app.get_options())
        if (o->count() > 1 && !o->get_lnames().empty() && o->get_expected_min() > 0)
            throw usage_error("--" + o->get_lnames().front() + " given twice");
    const std::vector<std::string> rest = app.remaining();
    if (rest.empty()) return;
    const std::string& arg = rest.front();
    if (!arg.starts_with("-")) throw usage_error("unexpected argument '" + arg + "'");
    std::vector<std::string> names;
    for (const CLI::Option* o : app.get_options())
        for (const std::string& n : o->get_lnames())
            names.push_back(n);
    const std::string flag = arg.substr(0, arg.find('='));
    std::string what = "unknown option '" + flag + "'";
    if (const std::string c = closest(flag.substr(flag.find_first_not_of('-')), names); !c.empty())
        what += " (did you mean --" + c + "?)";
    throw usage_error(what);
}

std::string message(const CLI::ParseError& e) {
    const std::string what = e.what();
    // "--dim: 1 required TEXT missing": a value option given without its value.
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && what.starts_with("--") &&
        what.ends_with(" missing"))
        return what.substr(0, what.find(':')) + " needs a value";
    return what;
}

void parse_or_exit(CLI::App& app, int argc, char** argv) {
    prepare(app);
    try {
        check_arguments(argc, argv);
        app.parse(argc, argv);
        check_parsed(app);
        return;
    } catch (const CLI::Success& e) {
        std::exit(app.exit(e));
    } catch (const CLI::ParseError& e) {
        std::cerr << app.get_name() << ": " << message(e) << '\n';
    } catch (const usage_error& e) {
        std::cerr << app.get_name() << ": " << e.what() << '\n';
    }
    std::exit(exit_usage);
}

} // namespace hcube::cli
