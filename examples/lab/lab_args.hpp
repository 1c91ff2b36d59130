// The lab programs' command-line numbers.
#pragma once

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace lab {

// `text` as a number in lo..hi, or exit 2 with a line naming the program,
// what was wrong and the range.
template <class T>
T number(std::string_view program, std::string_view what, std::string_view text, T lo, T hi) {
    T v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
        std::cerr << program << ": " << what << " '" << text << "' is not a number from " << lo
                  << " to " << hi << "\n";
        std::exit(2);
    }
    return v;
}

} // namespace lab
