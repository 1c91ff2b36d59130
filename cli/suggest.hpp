// "unknown option" messages that suggest the closest known option, shared by
// the sub-commands.
#pragma once

#include <algorithm>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hcube::cli {

// Levenshtein distance: insertions, deletions and substitutions.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
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

// The candidate closest to `word`, or "" when none is close enough to be a
// typo (at most 1 + |word| / 3 edits; the first of equally close ones).
inline std::string closest(std::string_view word, std::span<const std::string> candidates) {
    std::string best;
    std::size_t best_distance = 1 + word.size() / 3 + 1;
    for (const std::string& c : candidates)
        if (const std::size_t d = edit_distance(word, c); d < best_distance)
            best = c, best_distance = d;
    return best;
}

// "unknown option '--jsn' (did you mean --json?)"; `names` without dashes.
inline std::string unknown_option(std::string_view flag, std::string_view name,
                                  std::span<const std::string> names) {
    std::string s = "unknown option '" + std::string(flag) + "'";
    if (const std::string c = closest(name, names); !c.empty()) s += " (did you mean --" + c + "?)";
    return s;
}

} // namespace hcube::cli
