// The cube as Grama et al. draws it: node positions (a square, a cube, two
// cubes side by side; d = 5, 6 as 4-cubes in rows), its links, and the key
// to the dimensions' colours.
#include <algorithm>
#include <ostream>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube::draw_detail {

cube_layout::cube_layout(int d, double margin_x, double inner, double top, double bottom)
    : unit(d <= 3   ? std::max(170.0, (inner + 32) / 0.62)
           : d == 4 ? 170
                    : 95) {
    const int p = 1 << d;
    // In rows, the labels right of node 5 and left of node 10 share a
    // height and the 0.78 units between them: wider labels push the
    // second cube to the right.
    const double room = d >= 5 ? std::max(0.0, 2 * margin_x - 0.78 * unit - 20) / unit : 0;
    const point offset[6] = {{1, 0},       {0, -1},
                             {0.62, -0.5}, {2.4 + room, d == 4 ? 0.55 * 2.4 : 0.5},
                             {0, 2.8},     {0.38, 5.6}};
    double min_x = 0, min_y = 0, max_x = 0, max_y = 0;
    for (int i = 0; i < p; ++i) {
        point q{0, 0};
        for (int b = 0; b < d; ++b)
            if (i >> b & 1) q.x += offset[b].x * unit, q.y += offset[b].y * unit;
        at.push_back(q);
        min_x = std::min(min_x, q.x), max_x = std::max(max_x, q.x);
        min_y = std::min(min_y, q.y), max_y = std::max(max_y, q.y);
    }
    for (auto& q : at)
        q.x += margin_x - min_x, q.y += top - min_y;
    width = max_x - min_x + 2 * margin_x;
    height = max_y - min_y + top + bottom;
}

std::string binary(int v, int d) {
    std::string s;
    for (int b = d - 1; b >= 0; --b)
        s += (v >> b & 1) ? '1' : '0';
    return s;
}

std::vector<std::pair<point, point>> edges(const cube_layout& L, int d) {
    std::vector<std::pair<point, point>> out;
    for (int i = 0; i < (1 << d); ++i)
        for (int k = 0; k < std::min(d, 4); ++k)
            if (const int j = i ^ (1 << k); i < j) out.emplace_back(L.at[i], L.at[j]);
    return out;
}

void draw_edges(std::ostream& os, const cube_layout& L, int d) {
    for (const auto& [a, b] : edges(L, d))
        os << fmt::format(R"(<line class="edge" x1="{}" y1="{}" x2="{}" y2="{}" )"
                          R"(stroke="#d0d0d0" stroke-width="2"/>)",
                          num(a.x), num(a.y), num(b.x), num(b.y));
    os << '\n';
}

void legend(std::ostream& os, double x, double y, int d, const std::string& note) {
    for (int k = 0; k < d; ++k)
        os << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="3"/>)"
                          R"(<text x="{}" y="{}" font-size="12">dim {}</text>)",
                          num(x + 70 * k), num(y), num(x + 70 * k + 20), num(y), dim_colour(k),
                          num(x + 70 * k + 24), num(y + 4), k);
    if (!note.empty())
        os << fmt::format(R"(<text x="{}" y="{}" font-size="12" fill="#444">{}</text>)", num(x),
                          num(y + 20), xml(note));
    os << '\n';
}

} // namespace hcube::draw_detail
