// Arrows: a message or a wait drawn between two nodes, and the places of
// their labels, clear of each other and nearest their own arrow.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube::draw_detail {

std::pair<point, point> arrow_ends(point a, point b) {
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::max(1.0, std::hypot(dx, dy));
    const double ux = dx / len, uy = dy / len, nx = uy, ny = -ux;
    return {{a.x + ux * (node_radius + 2) + nx * arrow_side,
             a.y + uy * (node_radius + 2) + ny * arrow_side},
            {b.x - ux * (node_radius + 4) + nx * arrow_side,
             b.y - uy * (node_radius + 4) + ny * arrow_side}};
}

void placer::arrow(point a, point b) {
    const auto [s, e] = arrow_ends(a, b);
    const double len = std::max(1.0, std::hypot(e.x - s.x, e.y - s.y));
    const double ux = (e.x - s.x) / len, uy = (e.y - s.y) / len;
    lines.push_back({s, e, shaft, 1.5, false, true});
    lines.push_back(
        {{e.x - 15.75 * ux, e.y - 15.75 * uy}, {e.x + 1.75 * ux, e.y + 1.75 * uy}, 7, 4.5});
}

namespace {

// How far box b is from the segment p-q (sampled, as tests/draw/layout.py measures).
double gap(const box& b, point p, point q) {
    double best = 1e9;
    for (int i = 0; i <= 32; ++i) {
        const double x = p.x + (q.x - p.x) * i / 32, y = p.y + (q.y - p.y) * i / 32;
        const double dx = std::max({b.x0 - x, 0.0, x - b.x1}),
                     dy = std::max({b.y0 - y, 0.0, y - b.y1});
        best = std::min(best, std::hypot(dx, dy));
    }
    return best;
}

// How far at most an arrow's label is from its arrow (tests/draw/layout.py
// allows 36 px as Chromium measures the text).
constexpr double near_arrow = 33;

// The places the label of the arrow from a to b may take, best first: on its
// left, then its right beyond an exchange's other arrow; in lines of two or
// three blocks, then one; 7, 10.5, 14 or 21 px away; at the middle, then towards
// either end. A place must overlap no text (2 px clear, so that two labels do
// not read as one), cross no line `pl` holds (its own arrow's head it may
// come closer to) and lie within near_arrow of this arrow and nearer to it
// than to any other (by 1.5 px).
std::vector<std::pair<arrow_label, box>> label_places(placer pl, point a, point b,
                                                      const std::string& text) {
    std::vector<std::pair<arrow_label, box>> out;
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
    if (len < 1 || text.empty()) return out;
    const double nx = dy / len, ny = -dx / len;
    const auto [s, e] = arrow_ends(a, b);
    // Its own head it may come as close to as nothing else would.
    for (auto l = pl.lines.begin(); l + 1 < pl.lines.end(); ++l)
        if (l->shaft && l->p.x == s.x && l->p.y == s.y && l->q.x == e.x && l->q.y == e.y)
            l[1].pad = l[1].tight;
    constexpr double size = 10, near = 7;
    const auto own = [&](const box& r) {
        const double mine = gap(r, s, e);
        return mine <= near_arrow &&
               std::none_of(pl.lines.begin(), pl.lines.end(), [&](const segment& l) {
                   // Far off in x or y it is not nearer (the quick test first).
                   const double dx = std::max({std::min(l.p.x, l.q.x) - r.x1,
                                               r.x0 - std::max(l.p.x, l.q.x), 0.0}),
                                dy = std::max({std::min(l.p.y, l.q.y) - r.y1,
                                               r.y0 - std::max(l.p.y, l.q.y), 0.0});
                   return l.shaft && std::max(dx, dy) < mine + 1.5 &&
                          !(l.p.x == s.x && l.p.y == s.y && l.q.x == e.x && l.q.y == e.y) &&
                          gap(r, l.p, l.q) < mine + 1.5;
               });
    };
    for (const double side : {1, -1})
        for (const std::size_t width : {12, 6}) {
            const auto lines = wrap(text, width);
            if (width < 12 && lines == wrap(text, 12)) continue;
            const double tall = 1.2 * size * double(lines.size() - 1);
            const double sx = side * nx, sy = side * ny;
            const std::string_view anchor = sx > 0.3 ? "start" : sx < -0.3 ? "end" : "middle";
            for (const double away : {near, 1.5 * near, 2 * near, 3 * near})
                for (const double f :
                     {0.5, 0.42, 0.58, 0.35, 0.65, 0.28, 0.72, 0.2, 0.8, 0.15, 0.85, 0.1, 0.9}) {
                    // A slanting arrow keeps as clear of the box's corner.
                    const double off = (side < 0 ? away + 2 * arrow_side : away) /
                                       std::max(std::abs(sx), std::abs(sy));
                    const point m{s.x + (e.x - s.x) * f + sx * off,
                                  s.y + (e.y - s.y) * f + sy * off};
                    // Above or below the arrow, the box's edge is `away` from it.
                    const double y = sy < -0.3  ? m.y - tall - 0.25 * size
                                     : sy > 0.3 ? m.y + 0.8 * size
                                                : m.y + 0.35 * size - tall / 2;
                    const box r = text_box(m.x, y, anchor, size, lines, false);
                    // Nearer its own arrow as Chromium measures the text (0.9 em
                    // above the baseline, 0.2 below, less layout.py's 1.5 px each
                    // side), with its exact width and a fifth less (letters vary).
                    const box w = text_box(m.x, y, anchor, size, lines, true);
                    const double cut = 0.2 * (w.x1 - w.x0), y0 = y - 0.9 * size + 1.5,
                                 y1 = w.y1 - 0.05 * size - 1.5;
                    const double left = anchor == "start" ? 0 : anchor == "end" ? cut : cut / 2;
                    if (pl.free({r.x0 - 2, r.y0 - 2, r.x1 + 2, r.y1 + 2}) &&
                        own({w.x0 + 1.5, y0, w.x1 - 1.5, y1}) &&
                        own({w.x0 + 1.5 + left, y0, w.x1 - 1.5 - (cut - left), y1}))
                        out.push_back({{{m.x, y}, anchor, lines}, r});
                }
        }
    return out;
}

} // namespace

std::vector<std::optional<arrow_label>>
place_arrow_labels(placer& pl, const std::vector<std::pair<point, point>>& arrows,
                   const std::vector<std::string>& texts) {
    using place = std::pair<arrow_label, box>;
    std::vector<std::vector<place>> all;
    for (std::size_t i = 0; i < arrows.size(); ++i)
        all.push_back(label_places(pl, arrows[i].first, arrows[i].second, texts[i]));
    const auto clear = [](const box& r) { return box{r.x0 - 2, r.y0 - 2, r.x1 + 2, r.y1 + 2}; };
    std::vector<std::optional<place>> at(arrows.size());
    for (auto left = all;;) {
        std::size_t next = arrows.size();
        for (std::size_t i = 0; i < arrows.size(); ++i)
            if (!at[i] && !left[i].empty() &&
                (next == arrows.size() || left[i].size() < left[next].size()))
                next = i;
        if (next == arrows.size()) break;
        std::size_t best = 0, best_cost = SIZE_MAX;
        for (std::size_t c = 0; c < std::min<std::size_t>(left[next].size(), 12); ++c) {
            const box b = clear(left[next][c].second);
            std::size_t cost = 0;
            for (std::size_t i = 0; i < arrows.size(); ++i) {
                if (i == next || at[i] || left[i].empty()) continue;
                const auto taken =
                    std::size_t(std::count_if(left[i].begin(), left[i].end(), [&](const place& o) {
                        return o.second.overlaps(b);
                    }));
                cost += taken + (taken == left[i].size() ? 1000 : 0);
            }
            if (cost < best_cost) best = c, best_cost = cost;
        }
        at[next] = left[next][best];
        for (auto& p : left)
            std::erase_if(
                p, [&](const place& c) { return c.second.overlaps(clear(at[next]->second)); });
    }
    // Whether box b is clear of every label placed but those of i and j.
    const auto open = [&](const box& b, std::size_t i, std::size_t j) {
        return std::none_of(at.begin(), at.end(), [&](const std::optional<place>& o) {
            return o && &o != &at[i] && &o != &at[j] && o->second.overlaps(clear(b));
        });
    };
    for (std::size_t u = 0; u < arrows.size(); ++u)
        for (std::size_t c = 0; !at[u] && c < all[u].size(); ++c) {
            const box b = clear(all[u][c].second);
            std::vector<std::size_t> in;
            for (std::size_t j = 0; j < arrows.size(); ++j)
                if (at[j] && at[j]->second.overlaps(b)) in.push_back(j);
            if (in.size() != 1) continue;
            const auto moved =
                std::find_if(all[in[0]].begin(), all[in[0]].end(), [&](const place& o) {
                    return !o.second.overlaps(b) && open(o.second, u, in[0]);
                });
            if (moved != all[in[0]].end()) at[in[0]] = *moved, at[u] = all[u][c];
        }
    std::vector<std::optional<arrow_label>> out;
    for (const auto& a : at) {
        if (a) pl.taken.push_back(a->second);
        out.push_back(a ? std::optional(a->first) : std::nullopt);
    }
    return out;
}

void arrow(std::ostream& os, point a, point b, std::string_view colour, std::string_view marker,
           bool dashed, const std::string& cls, const std::string& tip,
           const std::optional<arrow_label>& label) {
    if (std::hypot(b.x - a.x, b.y - a.y) < 1) return;
    const auto [s, e] = arrow_ends(a, b);
    os << fmt::format(R"(<line class="{}" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" )"
                      R"(stroke-width="2.5" {}marker-end="{}"><title>{}</title></line>)",
                      cls, num(s.x), num(s.y), num(e.x), num(e.y), colour,
                      dashed ? R"(stroke-dasharray="6 4" )" : "", marker, xml(tip));
    if (label)
        os << fmt::format(R"(<text class="cargo" x="{}" y="{}" text-anchor="{}" )"
                          R"(font-size="10" fill="{}" stroke="white" stroke-width="3" )"
                          R"(paint-order="stroke">)",
                          num(label->at.x), num(label->at.y), label->anchor, colour)
           << text_lines(label->lines, label->at.x, 10) << "</text>";
    os << '\n';
}

} // namespace hcube::draw_detail
