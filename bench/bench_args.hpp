// Command-line pieces shared by the benchmark programs: numbers, comma lists,
// dimension ranges ("2,4,6" or "2-10"), and the median of repeated runs.
#pragma once

#include <algorithm>
#include <charconv>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/error.hpp>

namespace hcube::bench {

template <class T>
T number(const std::string& flag, std::string_view s) {
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
        throw usage_error(flag + ": '" + std::string(s) + "' is not a number");
    return v;
}

inline std::vector<std::string> split(std::string_view s) {
    std::vector<std::string> out;
    std::stringstream ss{std::string(s)};
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

// "2,4,6" or "2-10" (or a mix) as a list of dimensions in 0..max.
inline std::vector<int> parse_dims(std::string_view s, int max) {
    std::vector<int> dims;
    for (const std::string& item : split(s)) {
        const auto dash = item.find('-');
        const int lo = number<int>("--dims", std::string_view(item).substr(0, dash));
        const int hi = dash == std::string::npos
                           ? lo
                           : number<int>("--dims", std::string_view(item).substr(dash + 1));
        for (int d = lo; d <= hi; ++d) {
            if (d < 0 || d > max)
                throw usage_error("--dims: " + std::to_string(d) + " is out of range 0.." +
                                  std::to_string(max));
            dims.push_back(d);
        }
    }
    return dims;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace hcube::bench
