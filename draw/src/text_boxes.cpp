// The room text takes in a picture: boxes estimated from characters or
// measured per glyph, lines wrapped to a width, and whether a line crosses a
// box.
#include <algorithm>
#include <cctype>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube::draw_detail {

std::size_t length(std::string_view s) {
    return std::size_t(
        std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xc0) != 0x80; }));
}

box text_box(double x, double y, std::string_view anchor, double size, std::size_t chars,
             std::size_t lines) {
    const double w = 0.6 * size * double(chars);
    const double x0 = anchor == "start" ? x : anchor == "end" ? x - w : x - w / 2;
    return {x0, y - 0.8 * size, x0 + w, y + 0.25 * size + 1.2 * size * double(lines - 1)};
}

namespace {

// Where nothing is free with text_box's estimate: the advance of each
// character in DejaVu Sans (Debian's sans-serif: digits 0.64 em, brackets
// and dots much less), and 1 px.
double text_width(std::string_view s, double size) {
    double em = 0;
    for (const char c : s) {
        if ((c & 0xc0) == 0x80) continue; // inside a UTF-8 character ("→": 0.84 em)
        em += std::isdigit(static_cast<unsigned char>(c))                        ? 0.64
              : std::string_view("()[].,: |!").find(c) != std::string_view::npos ? 0.4
              : (c & 0x80)                                                       ? 0.84
              : std::isupper(static_cast<unsigned char>(c))                      ? 0.75
                                                                                 : 0.64;
    }
    return em * size + 1;
}

} // namespace

box text_box(double x, double y, std::string_view anchor, double size,
             const std::vector<std::string>& lines, bool exact) {
    double w = 0;
    for (const auto& l : lines)
        w = std::max(w, exact ? text_width(l, size) : 0.6 * size * double(length(l)));
    const double x0 = anchor == "start" ? x : anchor == "end" ? x - w : x - w / 2;
    return {x0, y - 0.8 * size, x0 + w, y + 0.25 * size + 1.2 * size * double(lines.size() - 1)};
}

bool crosses(point p, point q, const box& b) {
    double t0 = 0, t1 = 1;
    const double dx = q.x - p.x, dy = q.y - p.y;
    const double edges[4][2] = {
        {-dx, p.x - b.x0}, {dx, b.x1 - p.x}, {-dy, p.y - b.y0}, {dy, b.y1 - p.y}};
    for (const auto& [den, gap] : edges) {
        if (den == 0) {
            if (gap < 0) return false;
            continue;
        }
        const double t = gap / den;
        if (den < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1) return false;
    }
    return true;
}

std::vector<std::string> wrap(const std::string& text, std::size_t width) {
    constexpr std::string_view to_set = "→";
    std::vector<std::string> lines{""};
    std::size_t at = 0;
    const auto add = [&](const std::string& word, std::string_view gap) {
        if (!lines.back().empty() && length(lines.back()) + gap.size() + length(word) > width)
            lines.emplace_back();
        lines.back() += (lines.back().empty() ? "" : std::string(gap)) + word;
    };
    while (at < text.size()) {
        std::size_t end = text.find(' ', at);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(at, end - at);
        if (length(word) <= width) {
            add(word, " ");
        } else {
            if (!lines.back().empty()) lines.emplace_back();
            for (std::size_t from = 0; from < word.size();) {
                const std::size_t comma = word.find(',', from), arrow = word.find(to_set, from);
                const bool product = arrow < comma;
                const std::size_t to = product                      ? arrow + to_set.size()
                                       : comma == std::string::npos ? word.size()
                                                                    : comma + 1;
                add(word.substr(from, to - from), "");
                if (product) lines.emplace_back();
                from = to;
            }
        }
        at = end + 1;
    }
    return lines;
}

std::string text_lines(const std::vector<std::string>& lines, double x, double size) {
    if (lines.size() == 1) return xml(lines[0]);
    std::string out;
    for (std::size_t l = 0; l < lines.size(); ++l)
        out += fmt::format(R"(<tspan x="{}" dy="{}">{}</tspan>)", num(x), l ? num(1.2 * size) : "0",
                           xml(lines[l]));
    return out;
}

} // namespace hcube::draw_detail
