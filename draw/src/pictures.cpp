// The step pictures and the wait-for graph: the hypercube drawn as Grama et al.
// draws it (a square, a cube, two cubes side by side; d = 5, 6 as 4-cubes in
// rows), each step's messages as arrows, every node's label (or a key to the
// key table below); the CM-200 memory tables of Mathur & Johnsson beside or below the
// cube; and the HTML page that steps through them.
#include <hcube/draw.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <iterator>
#include <optional>
#include <ostream>
#include <sstream>

#include "svg.hpp"

namespace hcube {

using namespace draw_detail;

namespace {

struct point {
    double x, y;
};

// Node positions: bit 0 to the right, bit 1 up, bit 2 back (up and to the
// right, the cube's depth), bit 3 a second cube to the right and lower: on a
// 4-cube by 0.55 of the way across, so that the long links of dimension 3
// pass 0.55 units below node 1 and above node 10 and their ids, and clear of
// nodes 5 and 10 (which a slope of 0.31 would cross); on 4-cubes in rows
// (d = 5, 6: bit 4 a second row of them below, bit 5 two rows further down,
// a screen's width) by 0.5 units, which keeps them in their row. Bit 5's
// links pass the row between 0.19 units beside its nodes, the most the
// 4-cube's columns leave (0.38 units apart at the least).
struct cube_layout {
    double unit;
    std::vector<point> at;
    double width, height;

    // inner: the width of the widest label in its narrowest lines. The labels
    // of the inner nodes of a 3-cube (3 and 4) have 0.62 units, less the
    // circle, between their node and the links around it.
    explicit cube_layout(int d, double margin_x = 150, double inner = 0, double top = 95,
                         double bottom = 40)
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
};

std::string binary(int v, int d) {
    std::string s;
    for (int b = d - 1; b >= 0; --b)
        s += (v >> b & 1) ? '1' : '0';
    return s;
}

// The cube's links, light, under everything (for d >= 5 only those inside a
// 4-cube: the others appear when a step uses them).
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

// The characters of UTF-8 text (a product's "→" is one).
std::size_t length(std::string_view s) {
    return std::size_t(
        std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xc0) != 0x80; }));
}

// The text of the picture keeps clear of itself: every label's box (estimated
// from its characters, 0.6 em each: DejaVu's digits are 0.64 em, its brackets,
// commas and dots much less) is placed where it overlaps no box placed before
// it.
struct box {
    double x0, y0, x1, y1;
    bool overlaps(const box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// The box of `lines` lines of at most `chars` characters drawn at (x, y), the
// first baseline, anchored at start, end or middle.
box text_box(double x, double y, std::string_view anchor, double size, std::size_t chars,
             std::size_t lines = 1) {
    const double w = 0.6 * size * double(chars);
    const double x0 = anchor == "start" ? x : anchor == "end" ? x - w : x - w / 2;
    return {x0, y - 0.8 * size, x0 + w, y + 0.25 * size + 1.2 * size * double(lines - 1)};
}

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

// The box of `lines` at (x, y) (text_box), or with their exact widths.
box text_box(double x, double y, std::string_view anchor, double size,
             const std::vector<std::string>& lines, bool exact) {
    double w = 0;
    for (const auto& l : lines)
        w = std::max(w, exact ? text_width(l, size) : 0.6 * size * double(length(l)));
    const double x0 = anchor == "start" ? x : anchor == "end" ? x - w : x - w / 2;
    return {x0, y - 0.8 * size, x0 + w, y + 0.25 * size + 1.2 * size * double(lines.size() - 1)};
}

// A line text keeps off: a link, an arrow's shaft or head, with `pad` px on
// either side (half its width and a gap), or only `tight` (half its width)
// where nothing else is free. A node's label may cross a light link of the
// cube (link: its white halo covers it) rather than sit away from the node.
struct segment {
    point p, q;
    double pad, tight;
    bool link = false;
    bool shaft = false; // an arrow's shaft: its label keeps nearer to it than to others
};

// Whether the segment p-q crosses box b (clipped to b's slabs, Liang-Barsky).
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

constexpr double node_radius = 15;

// Where an arrow from a to b starts and ends: between the circles, moved
// arrow_side px to its left (the two directions of an exchange show as two
// arrows).
constexpr double arrow_side = 5;
std::pair<point, point> arrow_ends(point a, point b) {
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::max(1.0, std::hypot(dx, dy));
    const double ux = dx / len, uy = dy / len, nx = uy, ny = -ux;
    return {{a.x + ux * (node_radius + 2) + nx * arrow_side,
             a.y + uy * (node_radius + 2) + ny * arrow_side},
            {b.x - ux * (node_radius + 4) + nx * arrow_side,
             b.y - uy * (node_radius + 4) + ny * arrow_side}};
}

struct placer {
    box page{-1e9, -1e9, 1e9, 1e9}; // text stays inside
    std::vector<box> taken;
    std::vector<segment> lines; // links and the step's arrows: text keeps off them
    double shaft = 3;           // px either side of an arrow's shaft
    // How many texts and lines b meets (the page's edge counts as many).
    std::size_t conflicts(const box& b, bool tight = false, bool over_links = false) const {
        if (b.x0 < page.x0 || b.y0 < page.y0 || b.x1 > page.x1 || b.y1 > page.y1) return 1000;
        return std::size_t(
            std::count_if(taken.begin(), taken.end(), [&](const box& o) { return b.overlaps(o); }) +
            std::count_if(lines.begin(), lines.end(), [&](const segment& l) {
                const double pad = tight ? l.tight : l.pad;
                return !(over_links && l.link) &&
                       crosses(l.p, l.q, {b.x0 - pad, b.y0 - pad, b.x1 + pad, b.y1 + pad});
            }));
    }
    bool free(const box& b, bool tight = false, bool over_links = false) const {
        return conflicts(b, tight, over_links) == 0;
    }
    // The first of the candidates whose room(c, false) is free; else the
    // first if it is free with tight gaps and room(c, true) (exact widths),
    // else the first that is; else end.
    template <class C, class Room>
    auto first_free(const std::vector<C>& at, const Room& room) const {
        const auto tight = [&](const C& c) { return free(room(c, true), true); };
        auto c =
            std::find_if(at.begin(), at.end(), [&](const C& c) { return free(room(c, false)); });
        if (c == at.end() && !at.empty() && tight(at.front())) return at.begin();
        if (c == at.end()) c = std::find_if(at.begin(), at.end(), tight);
        return c;
    }
    // The arrow from node a to node b: its shaft (2.5 px wide) and its head
    // (svg.hpp's marker: 17.5 px long, 17.5 px wide at its base, its tip 1.75
    // px past the shaft's end), kept off as a segment 6 px either side.
    void arrow(point a, point b) {
        const auto [s, e] = arrow_ends(a, b);
        const double len = std::max(1.0, std::hypot(e.x - s.x, e.y - s.y));
        const double ux = (e.x - s.x) / len, uy = (e.y - s.y) / len;
        lines.push_back({s, e, shaft, 1.5, false, true});
        lines.push_back(
            {{e.x - 15.75 * ux, e.y - 15.75 * uy}, {e.x + 1.75 * ux, e.y + 1.75 * uy}, 7, 4.5});
    }
};

// A node's label split into lines of at most `width` characters at spaces
// ("{0,0} {0,2} ..." lists of the personalized operations).
// A word longer than a line breaks after its commas ("(0,1,2,3," "4,5,6,7)"),
// and a product's second set starts a line ("{0,1→" "0,2,4..14}").
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

// A text's lines: one as it is, several as tspans a line apart.
std::string text_lines(const std::vector<std::string>& lines, double x, double size) {
    if (lines.size() == 1) return xml(lines[0]);
    std::string out;
    for (std::size_t l = 0; l < lines.size(); ++l)
        out += fmt::format(R"(<tspan x="{}" dy="{}">{}</tspan>)", num(x), l ? num(1.2 * size) : "0",
                           xml(lines[l]));
    return out;
}

constexpr std::size_t label_width = 24;     // characters per line of a node label
constexpr std::size_t narrowest_label = 12; // and the fewest it is squeezed to

double label_size(int d) {
    return d <= 3 ? 13 : 11;
}

// Where node i's texts go: the label's first baseline and anchor, the id's
// centre.
struct node_texts {
    point label;
    std::string_view anchor;
    point id;
    std::vector<std::string> lines; // the label's
};

// A label with no free place near its node: a short key there ("A"; none
// when even that has no room) and the label in the key table under the cube.
struct keyed_label {
    int node;
    std::string key, text, tip; // tip: the full list where text abbreviates
};

// The nodes' texts and the room they take: what arrow labels keep clear of.
struct node_plan {
    std::vector<node_texts> texts;
    placer pl;
    std::vector<keyed_label> keyed;
};

// "A".."Z", "a".."z", then "Z1", "Z2", ...: up to 64 nodes.
std::string key_name(std::size_t n) {
    return n < 26   ? std::string(1, char('A' + n))
           : n < 52 ? std::string(1, char('a' + n - 26))
                    : "Z" + std::to_string(n - 51);
}

// A node's binary id sits above or below it, away from its vertical link
// (bit 1). Its label goes to the first free place of: beside the node, left of
// the nodes with bit 0 clear and right of the others, then a little higher or
// lower, then on the other side, then below or above; free means clear of
// every circle, id and label placed before, every link and every arrow of the
// step, and inside the picture. When none is, a key goes there instead
// (keyed_label).
node_plan plan_nodes(const cube_layout& L, int d, const std::vector<std::string>& labels,
                     const std::vector<std::pair<point, point>>& arrows,
                     const std::vector<std::string>& lists = {}) {
    node_plan plan;
    placer& pl = plan.pl;
    pl.page = {2, 52, L.width - 2, L.height - 2}; // below the title and caption
    pl.shaft = d >= 4 ? 4 : 3; // a 4-cube's labels start closer to the long arrows
    for (const auto& [a, b] : edges(L, d))
        pl.lines.push_back({a, b, 2, 1.25, true});
    for (const auto& [a, b] : arrows)
        pl.arrow(a, b);
    for (int i = 0; i < (1 << d); ++i) {
        const point q = L.at[std::size_t(i)];
        pl.taken.push_back(
            {q.x - node_radius, q.y - node_radius, q.x + node_radius, q.y + node_radius});
    }
    // The id: above or below, away from the vertical link, moved aside when a
    // line passes there, else on the other side beside the link.
    for (int i = 0; i < (1 << d); ++i) {
        const point q = L.at[std::size_t(i)];
        const bool above = d > 1 && (i & 2);
        const double over = q.y - node_radius - 5, under = q.y + node_radius + 13;
        // Then the corners and beside it, near the links and arrows: with
        // 3 px more room.
        struct place {
            point at;
            double more; // px of room beyond the text's box
        };
        std::vector<place> at = {{{q.x, above ? over : under}, 0},
                                 {{q.x - 14, above ? over : under}, 0},
                                 {{q.x + 14, above ? over : under}, 0},
                                 {{q.x - 16, above ? under : over}, 0},
                                 {{q.x + 16, above ? under : over}, 0}};
        for (const double r = 3.0 * d + node_radius;
             const point c : {point{-1, -1}, point{1, -1}, point{-1, 1}, point{1, 1}, point{-1, 0},
                              point{1, 0}, point{0, -1}, point{0, 1}})
            at.push_back({{q.x + c.x * (r + 2), q.y + 4 + c.y * (r - 4)}, 3});
        const auto room = [&](const place& c, bool exact) {
            const box b = text_box(c.at.x, c.at.y, "middle", 10, {binary(i, d)}, exact);
            return box{b.x0 - c.more, b.y0 - c.more, b.x1 + c.more, b.y1 + c.more};
        };
        // Where no place is free, the node's tooltip has its id.
        const auto found = pl.first_free(at, room);
        const point id = found == at.end() ? point{std::nan(""), 0} : found->at;
        plan.texts.push_back({{}, "", id, {}});
        if (found != at.end())
            pl.taken.push_back(text_box(id.x, id.y, "middle", 10, std::size_t(d)));
    }
    const double size = label_size(d);
    for (int i = 0; i < (1 << d); ++i) {
        const point q = L.at[std::size_t(i)];
        node_texts& t = plan.texts[std::size_t(i)];
        const bool right = d > 0 && (i & 1), above = d > 1 && (i & 2);
        t.label = {q.x + (right ? 1 : -1) * (node_radius + 6), q.y + 4};
        t.anchor = right ? "start" : "end";
        if (i >= int(labels.size()) || labels[std::size_t(i)].empty()) continue;
        // Wide labels first, then narrower ones in more lines; on 4-cubes
        // and up, places more than 18 px off the node's height after all
        // others (among 16 nodes they read as another node's).
        std::vector<node_texts> at, far;
        for (const std::size_t width :
             {label_width, std::size_t(16), narrowest_label, std::size_t(8)}) {
            const auto lines = wrap(labels[std::size_t(i)], width);
            // Several lines are centred on the node's height.
            const double tall = 1.2 * size * double(lines.size() - 1);
            for (const bool side : {right, !right})
                for (const double dx : {0., 14.})
                    for (const double dy :
                         {0., -9., 9., -18., 18., -27., 27., -36., 36., -45., 45.})
                        (d <= 3 || std::abs(dy) <= 18 ? at : far)
                            .push_back({{q.x + (side ? 1 : -1) * (node_radius + 6 + dx),
                                         q.y + 4 - tall / 2 + dy},
                                        side ? "start" : "end",
                                        {},
                                        lines});
            const double below = q.y + node_radius + (above ? 13 : 26),
                         over = q.y - node_radius - (above ? 18 : 6) - tall;
            for (const double y : {above ? below : over, above ? over : below})
                at.push_back({{q.x, y}, "middle", {}, lines});
        }
        at.insert(at.end(), far.begin(), far.end());
        const auto room = [&](const node_texts& c, bool exact) {
            return text_box(c.label.x, c.label.y, c.anchor, size, c.lines, exact);
        };
        // Right beside the node (at its height or 9 px off), across a light
        // link if need be, before anywhere farther.
        std::vector<node_texts> close;
        std::copy_if(at.begin(), at.end(), std::back_inserter(close), [&](const node_texts& c) {
            const double middle = q.y + 4 - 0.6 * size * double(c.lines.size() - 1);
            return c.anchor != "middle" && std::abs(c.label.x - q.x) < node_radius + 7 &&
                   std::abs(c.label.y - middle) <= 9;
        });
        auto chosen = std::find_if(at.cbegin(), at.cend(),
                                   [&](const node_texts& c) { return pl.free(room(c, false)); });
        if (chosen == at.end() ||
            std::find_if(close.begin(), close.end(), [&](const node_texts& c) {
                return c.label.x == chosen->label.x && c.label.y == chosen->label.y &&
                       c.lines == chosen->lines;
            }) == close.end())
            if (const auto beside = std::find_if(
                    close.begin(), close.end(),
                    [&](const node_texts& c) { return pl.free(room(c, false), false, true); });
                beside != close.end())
                chosen = at.insert(at.begin(), *beside);
        if (chosen == at.end()) chosen = pl.first_free(at, room);
        if (chosen == at.end()) {
            // The key goes beside, above or below the node, or a corner.
            const std::string key = key_name(plan.keyed.size());
            plan.keyed.push_back({i, key, labels[std::size_t(i)],
                                  i < int(lists.size()) ? lists[std::size_t(i)] : ""});
            at.clear();
            for (const double r : {node_radius + 4, node_radius + 14})
                for (const point c :
                     {point{1, 0}, point{-1, 0}, point{0, -1}, point{0, 1}, point{0.8, -0.8},
                      point{-0.8, -0.8}, point{0.8, 0.8}, point{-0.8, 0.8}})
                    at.push_back({{q.x + c.x * r, q.y + 4 + c.y * (r + 4)},
                                  c.x > 0.1    ? "start"
                                  : c.x < -0.1 ? "end"
                                               : "middle",
                                  {},
                                  {key}});
            // With 3 px more room: it may come close to the node's id, and
            // DejaVu's digits are wider than text_box's 0.6 em.
            const auto wider = [&](const node_texts& c, bool exact) {
                const box b = room(c, exact);
                return box{b.x0 - 3, b.y0 - 3, b.x1 + 3, b.y1 + 3};
            };
            chosen = pl.first_free(at, wider);
            if (chosen == at.end()) {
                plan.keyed.back().key.clear();
                continue;
            }
        }
        t.label = chosen->label, t.anchor = chosen->anchor, t.lines = chosen->lines;
        pl.taken.push_back(room(t, false));
    }
    return plan;
}

// lists: the labels in full where they abbreviate, as their tooltips.
void draw_nodes(std::ostream& os, const cube_layout& L, int d, const std::vector<bool>& hot,
                const std::vector<node_texts>& texts, const std::vector<std::string>& lists = {}) {
    for (int i = 0; i < (1 << d); ++i) {
        const point q = L.at[std::size_t(i)];
        const node_texts& t = texts[std::size_t(i)];
        // An id with no room near its node is the circle's tooltip.
        const bool id = !std::isnan(t.id.x);
        os << fmt::format(
            R"(<circle class="node" data-node="{}" cx="{}" cy="{}" r="{}" fill="{}" stroke="#333" )"
            R"(stroke-width="1.5"{})"
            R"(<text x="{}" y="{}" text-anchor="middle" font-weight="bold">{}</text>)",
            i, num(q.x), num(q.y), num(node_radius),
            i < int(hot.size()) && hot[std::size_t(i)] ? "#fde9e7" : "#f4f7fb",
            id ? "/>" : "><title>" + binary(i, d) + "</title></circle>", num(q.x), num(q.y + 4), i);
        if (id)
            os << fmt::format(R"(<text class="id" x="{}" y="{}" text-anchor="middle" )"
                              R"(font-size="10" fill="#666">{}</text>)",
                              num(t.id.x), num(t.id.y), binary(i, d));
        if (!t.lines.empty()) {
            const auto& lines = t.lines;
            const double size = label_size(d);
            const double y0 = t.label.y;
            os << fmt::format(R"(<text class="label" data-node="{}" x="{}" y="{}" )"
                              R"(text-anchor="{}" font-size="{}" fill="#111" stroke="white" )"
                              R"(stroke-width="4" paint-order="stroke">)",
                              i, num(t.label.x), num(y0), t.anchor, size);
            if (std::size_t(i) < lists.size() && !lists[std::size_t(i)].empty())
                os << "<title>" << xml(lists[std::size_t(i)]) << "</title>";
            os << text_lines(lines, t.label.x, size) << "</text>";
        }
        os << '\n';
    }
}

// An arrow's label: its first baseline, anchor and lines.
struct arrow_label {
    point at;
    std::string_view anchor;
    std::vector<std::string> lines;
};

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

// The labels of a step's arrows (texts[i] of arrows[i]), placed by
// label_places: the label with the fewest places left first, at the one of
// its first few places that takes the fewest places of others (none of the
// last); then a label left with none takes a place whose one occupant can
// move to another. None where no place is left.
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

// An arrow from a to b (arrow_ends) and its label, if it has one.
void arrow(std::ostream& os, point a, point b, std::string_view colour, std::string_view marker,
           bool dashed, const std::string& cls, const std::string& tip,
           const std::optional<arrow_label>& label = {}) {
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

// Mathur & Johnsson's "Dim" column: the link location j's element came over, found
// from the data (the neighbour that held it one step before).
std::string table_dim(const algorithm_steps& s, std::size_t k, std::size_t j) {
    if (k == 0) return "";
    const auto &now = s.steps[k].memory, &prev = s.steps[k - 1].memory;
    for (int b = 0; b < s.params.dim; ++b)
        if (!now[0][j].empty() && prev[std::size_t(1 << b)][j] == now[0][j])
            return std::to_string(b);
    return "";
}

// The node columns a table shows, [lo, hi): a screen's width holds 16 to 32
// of them, so larger cubes get their tables in parts, one below another.
struct nodes {
    int lo, hi;
};

// The memory table of every node up to step k (rows of later steps empty), as
// in Mathur & Johnsson's Figures 8-11; cells have class "cell" and data-step/mem/node.
double draw_table(std::ostream& os, const algorithm_steps& s, std::size_t k, double x0, double y0,
                  nodes n) {
    const std::size_t words = s.params.words;
    const double cw = 34, rh = 17, first = 46;
    os << fmt::format(R"(<g class="memory" font-size="12" font-family="monospace">)");
    const auto col = [&](int c) { return x0 + 2 * first + cw * (c - n.lo); };
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Step</text>)"
                      R"(<text x="{}" y="{}" font-weight="bold">Mem</text>)",
                      num(x0), num(y0), num(x0 + first), num(y0));
    for (int i = n.lo; i < n.hi; ++i)
        os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">P{}</text>)", num(col(i)),
                          num(y0), i);
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Dim</text>)", num(col(n.hi)),
                      num(y0));
    double y = y0 + rh;
    for (std::size_t st = 0; st < s.steps.size(); ++st) {
        if (st == k)
            os << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#fff3b0"/>)",
                              num(x0 - 4), num(y - rh + 4), num(col(n.hi) + cw - x0),
                              num(rh * double(words)));
        for (std::size_t j = 0; j < words; ++j, y += rh) {
            if (j == 0)
                os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0), num(y),
                                  st == 0 ? "Init." : std::to_string(st - 1));
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0 + first), num(y), j);
            if (st > k) continue;
            for (int i = n.lo; i < n.hi; ++i)
                os << fmt::format(R"(<text class="cell" data-step="{}" data-mem="{}" )"
                                  R"(data-node="{}" x="{}" y="{}">{}</text>)",
                                  st, j, i, num(col(i)), num(y),
                                  xml(s.steps[st].memory[std::size_t(i)][j]));
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(col(n.hi)), num(y),
                              table_dim(s, st, j));
        }
        y += 4;
    }
    os << "</g>\n";
    return col(n.hi) + cw - x0;
}

// Mathur & Johnsson's Figures 13-19 for step k: every memory address of every node,
// "●" sending its partial sum, "+" receiving and adding, "○" added before,
// and the dimension the sum crossed. Cells have class "cell".
double draw_reduction_table(std::ostream& os, const algorithm_steps& s, std::size_t k, double x0,
                            double y0, nodes n) {
    const int p = 1 << s.params.dim;
    const auto& cells = s.steps[k].memory;
    const std::size_t addresses = cells.empty() ? 0 : cells[0].size();
    const double cw = 30, rh = 17, first = 40;
    const auto col = [&](int c) { return x0 + first + cw * (c - n.lo); };
    os << fmt::format(R"(<g class="memory" font-size="12" font-family="monospace">)")
       << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Mem</text>)", num(x0), num(y0));
    for (int i = n.lo; i < n.hi; ++i)
        os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">P{}</text>)", num(col(i)),
                          num(y0), i);
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Dim</text>)", num(col(n.hi)),
                      num(y0));
    for (std::size_t x = 0; x < addresses; ++x) {
        const double y = y0 + rh * double(x + 1);
        os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0), num(y), x);
        int plus = -1, dot = -1;
        for (int i = 0; i < p; ++i) {
            const std::string& c = cells[std::size_t(i)][x];
            plus = c == "+" ? i : plus;
            dot = c == "●" ? i : dot;
            if (i >= n.lo && i < n.hi)
                os << fmt::format(
                    R"(<text class="cell" data-step="{}" data-mem="{}" data-node="{}" )"
                    R"(x="{}" y="{}">{}</text>)",
                    k, x, i, num(col(i) + 6), num(y), c);
        }
        if (plus >= 0 && dot >= 0)
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(col(n.hi)), num(y),
                              std::countr_zero(unsigned(plus ^ dot)));
    }
    // The key to the marks, in two lines under the table.
    const double key_y = y0 + rh * double(addresses + 1) + 4;
    for (const auto& [line, text] :
         {std::pair{0, "● sends the partial sum of the address,"},
          std::pair{1, "+ receives it and adds its own, ○ added its own before"}})
        os << fmt::format(R"(<text class="marks" x="{}" y="{}" fill="#444">{}</text>)", num(x0),
                          num(key_y + rh * line), text);
    os << "</g>\n";
    return std::max(col(n.hi) + cw + 10 - x0, 0.6 * 12 * 55);
}

// Hu's Table 1 from the run: the link element j of logical node i
// left on in step 1 (cells of class "sched", data-elem j, data-proc i).
double draw_schedule(std::ostream& os, const algorithm_steps& s, double x0, double y0, nodes n) {
    const double cw = 24, rh = 17, first = 70;
    os << fmt::format(R"(<g class="schedule" font-size="12" font-family="monospace">)"
                      R"(<text x="{}" y="{}" font-weight="bold">Schedule phi_i(j), read from )"
                      R"(step 1 (Hu, Table 1)</text>)"
                      R"(<text x="{}" y="{}" font-weight="bold">j \ i</text>)",
                      num(x0), num(y0), num(x0), num(y0 + rh));
    for (int i = n.lo; i < n.hi; ++i)
        os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">{}</text>)",
                          num(x0 + first + cw * (i - n.lo)), num(y0 + rh), i);
    for (std::size_t j = 0; j < s.schedule.size(); ++j) {
        const double y = y0 + rh * double(j + 2);
        os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0), num(y), j);
        for (int i = n.lo; i < n.hi; ++i)
            os << fmt::format(R"(<text class="sched" data-elem="{}" data-proc="{}" x="{}" )"
                              R"(y="{}">{}</text>)",
                              j, i, num(x0 + first + cw * (i - n.lo)), num(y),
                              s.schedule[j][std::size_t(i)]);
    }
    os << "</g>\n";
    return std::max(first + cw * (n.hi - n.lo), 450.0);
}

std::string step_caption(const algorithm_steps& s, std::size_t k) {
    const std::size_t total = s.steps.size() - 1;
    if (k == 0)
        return fmt::format("before the first step: what every node starts with ({} steps in all)",
                           total);
    // "4 messages on dim 0, 1", "4 routed messages", "4 messages, routed and
    // on dim 2" (routed messages have no one link: trace dim -1).
    std::vector<int> dims;
    bool routed = false;
    for (const std::size_t m : s.steps[k].messages) {
        const int d = s.report.trace[m].dim;
        routed |= d < 0;
        if (d >= 0 && std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
    }
    std::sort(dims.begin(), dims.end());
    std::string on = dims.empty() ? "" : "on dim " + std::to_string(dims.front());
    for (std::size_t i = 1; i < dims.size(); ++i)
        on += ", " + std::to_string(dims[i]);
    const std::size_t n = s.steps[k].messages.size();
    const std::string what =
        routed && dims.empty() ? fmt::format("{} routed message{}", n, n == 1 ? "" : "s")
        : routed
            ? fmt::format("{} messages, routed and {}", n, on)
            : fmt::format("{} message{} {}", n, n == 1 ? "" : "s", on.empty() ? "on no link" : on);
    return fmt::format("step {} of {}: {}; labels: what each node holds after the step", k, total,
                       what);
}

std::string svg_open(double w, double h) {
    return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
                       R"(viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)"
                       R"(<rect width="100%" height="100%" fill="white"/>)",
                       num(w), num(h));
}

// The widest label of any step in lines of `width` characters, in px.
double widest_label(const algorithm_steps& s, std::size_t width) {
    std::size_t chars = 0;
    for (const auto& st : s.steps)
        for (const auto& l : st.labels)
            for (const auto& line : wrap(l, width))
                chars = std::max(chars, length(line));
    return 0.6 * label_size(s.params.dim) * double(chars);
}

// Room beside the cube for the widest label of any step, so that every step
// of a picture has the same size and no label leaves it.
double side_margin(const algorithm_steps& s) {
    return std::max(150.0, node_radius + 6 + widest_label(s, label_width) + 16);
}

// What a step's picture needs: its body and size (step_svgs gives every step
// of a run the largest).
struct picture {
    std::string body;
    double width, height;
};

// A laptop's screen (tests/draw/layout.py): wider tables go below the cube.
constexpr double screen_width = 1100;

// The key table under the cube: the labels keyed in the picture and the arrow
// labels left out of it, in columns as wide as the widest entry (wrapped to
// `width`), down the first column first; its height. Entries have class
// "key" and their full list as tooltip.
double draw_keys(std::ostream& os, const std::vector<std::pair<std::string, std::string>>& entries,
                 double x0, double y0, double width) {
    if (entries.empty()) return 0;
    constexpr double size = 11, gap = 24;
    const auto fit = std::size_t(width / (0.6 * size));
    std::vector<std::vector<std::string>> wrapped;
    std::size_t chars = 0;
    for (const auto& e : entries) {
        wrapped.push_back(wrap(e.first, fit));
        for (const auto& l : wrapped.back())
            chars = std::max(chars, length(l));
    }
    const double column = 0.6 * size * double(chars) + gap;
    const auto columns = std::max<std::size_t>(1, std::size_t((width + gap) / column));
    const std::size_t rows = (entries.size() + columns - 1) / columns;
    double y = y0;
    for (std::size_t r = 0; r < rows; ++r) {
        std::size_t tall = 1;
        for (std::size_t c = 0; c < columns && c * rows + r < entries.size(); ++c) {
            const std::size_t e = c * rows + r;
            const double x = x0 + column * double(c);
            tall = std::max(tall, wrapped[e].size());
            os << fmt::format(R"(<text class="key" x="{}" y="{}" font-size="{}" fill="#111">)",
                              num(x), num(y + size), size);
            if (!entries[e].second.empty()) os << "<title>" << xml(entries[e].second) << "</title>";
            os << text_lines(wrapped[e], x, size) << "</text>";
        }
        y += 1.2 * size * double(tall) + 3;
    }
    os << '\n';
    return y - y0;
}

picture step_svg(const algorithm_steps& s, std::size_t k) {
    const int d = s.params.dim;
    double margin = side_margin(s);
    cube_layout L(d, margin, widest_label(s, narrowest_label));
    // 5- and 6-cubes keep to a screen's width: their widest labels take more
    // lines or a key.
    while (d >= 5 && L.width > screen_width && margin > 60)
        L = cube_layout(d, margin -= 10, widest_label(s, narrowest_label));
    std::ostringstream body;
    const std::string markers = fmt::format("s{}-", k); // the page holds every step
    body << arrow_markers(d, markers);
    body << fmt::format(R"(<text x="16" y="24" font-size="16" font-weight="bold">{}</text>)"
                        R"(<text x="16" y="44" font-size="13" fill="#333">{}</text>)",
                        xml(s.title), xml(step_caption(s, k)))
         << '\n';
    draw_edges(body, L, d);
    const step_state& st = s.steps[k];
    std::vector<std::pair<point, point>> arrows;
    for (const std::size_t m : st.messages)
        arrows.emplace_back(L.at[std::size_t(s.report.trace[m].from)],
                            L.at[std::size_t(s.report.trace[m].to)]);
    node_plan plan = plan_nodes(L, d, st.labels, arrows, st.lists);
    placer& pl = plan.pl;
    std::vector<std::pair<std::string, std::string>> keys;
    std::vector<std::string> tips = st.lists;
    tips.resize(std::size_t(1) << d);
    for (const keyed_label& e : plan.keyed) {
        keys.emplace_back(
            fmt::format("{}node {}: {}", e.key.empty() ? "" : e.key + " = ", e.node, e.text),
            e.tip);
        if (tips[std::size_t(e.node)].empty()) tips[std::size_t(e.node)] = e.text;
    }
    // From 4-cubes on, whose steps may use 64 links, an arrow label with no
    // room is only in the tooltip; on smaller cubes in the key table.
    std::vector<std::string> cargo;
    for (std::size_t i = 0; i < st.messages.size(); ++i)
        cargo.push_back(d <= 4 ? st.carried[i] : "");
    const auto labels = place_arrow_labels(pl, arrows, cargo);
    for (std::size_t i = 0; i < st.messages.size(); ++i) {
        const trace_record& t = s.report.trace[st.messages[i]];
        const std::string tip =
            fmt::format("node {} -> node {}{}: {} bytes, t = {} .. {}", t.from, t.to,
                        t.dim < 0 ? std::string(" (routed)") : " on dim " + std::to_string(t.dim),
                        t.bytes, num(t.start), num(t.arrival));
        arrow(body, L.at[std::size_t(t.from)], L.at[std::size_t(t.to)], dim_colour(t.dim),
              marker_ref(t.dim, markers), t.dim < 0, "msg",
              tip + "; it brings " +
                  (st.carried_lists[i].empty() ? st.carried[i] : st.carried_lists[i]),
              labels[i]);
        if (!labels[i] && !cargo[i].empty() && d <= 3)
            keys.emplace_back(fmt::format("arrow {}→{} brings {}", t.from, t.to, st.carried[i]),
                              st.carried_lists[i]);
    }
    std::vector<bool> hot(std::size_t(1) << d);
    for (const std::size_t m : st.messages)
        hot[std::size_t(s.report.trace[m].to)] = true;
    draw_nodes(body, L, d, hot, plan.texts, tips);
    // Wide enough for the title too (16 px bold, about 0.62 em a character).
    const double title = 32 + 0.62 * 16 * double(s.title.size());
    double width = std::max({L.width, 640.0, title}), height = L.height + 40;
    legend(body, 16, L.height + 10, d,
           "arrows: the messages of this step, with what they bring; red nodes received one");
    if (!keys.empty()) {
        body << fmt::format(R"(<text x="16" y="{}" font-size="12" fill="#444">labels with no )"
                            R"(room beside their node or arrow:</text>)",
                            num(L.height + 58));
        height = L.height + 64 + draw_keys(body, keys, 16, L.height + 64, width - 32) + 10;
    }
    // The tables go beside the cube, or below it from 4-cubes on or where a
    // screen's width does not hold both; a table's height is in rows.
    const auto tables = [&](std::ostream& os, double tx, double ty, bool split) {
        std::pair<double, double> size{0, 0};
        // A table below the cube in as many parts (of the nodes, one below
        // the other, 10 px apart) as a screen's width needs; each part is
        // `rows` rows high.
        const auto place = [&](const auto& draw, double rows) {
            const int p = 1 << d;
            for (int parts = 1;; parts *= 2) {
                std::ostringstream part_os;
                double y = ty, w = 0;
                for (int part = 0; part < parts; ++part, y += 17.0 * rows + 10)
                    w = std::max(w,
                                 draw(part_os, y, nodes{part * p / parts, (part + 1) * p / parts}));
                if (!split || parts == p || tx + w + 30 <= screen_width) {
                    os << part_os.str();
                    size = {std::max(size.first, w), std::max(size.second, y - 10 - ty)};
                    return;
                }
            }
        };
        if (!s.schedule.empty())
            place([&](std::ostream& o, double y, nodes n) { return draw_schedule(o, s, tx, y, n); },
                  double(s.schedule.size() + 3));
        if (s.reduction_table && k > 0) {
            const std::size_t rows = s.steps[k].memory.empty() ? 0 : s.steps[k].memory[0].size();
            place([&](std::ostream& o, double y,
                      nodes n) { return draw_reduction_table(o, s, k, tx, y, n); },
                  double(rows + 4));
        }
        if (s.table)
            place([&](std::ostream& o, double y, nodes n) { return draw_table(o, s, k, tx, y, n); },
                  double(s.steps.size() * s.params.words + 2) + 4.0 / 17 * double(s.steps.size()));
        return size;
    };
    std::ostringstream beside;
    const auto [w, h] = tables(beside, L.width + 10, 70, false);
    if (w > 0 && d <= 3 && L.width + w + 30 <= screen_width) {
        body << beside.str();
        width = std::max(width, L.width + w + 30), height = std::max(height, 70 + h);
    } else if (w > 0) {
        const double ty = height + 30;
        const auto [bw, bh] = tables(body, 16, ty, true);
        width = std::max(width, 16 + bw + 30), height = ty + bh;
    }
    return {body.str(), width, height};
}

constexpr std::string_view page_style = R"(
body { font-family: sans-serif; margin: 16px 24px; color: #111; }
h1 { font-size: 20px; margin: 0 0 4px; }
p.facts { margin: 2px 0 10px; color: #333; }
#controls { display: flex; gap: 10px; align-items: center; margin: 8px 0; }
#controls button { font-size: 15px; padding: 4px 12px; }
#slider { width: 320px; }
#caption { font-size: 14px; }
.step[hidden] { display: none; }
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 1100px; }
)";

// The controls: previous/next, a slider, the arrow keys; "#next=N" in the
// address presses next N times (how the tests and links pick a step).
constexpr std::string_view page_script = R"(
(function () {
  var steps = Array.prototype.slice.call(document.querySelectorAll('.step'));
  var slider = document.getElementById('slider');
  var caption = document.getElementById('caption');
  var prev = document.getElementById('prev'), next = document.getElementById('next');
  var current = 0;
  function show(k) {
    current = Math.max(0, Math.min(steps.length - 1, k));
    steps.forEach(function (s, i) { s.hidden = i !== current; });
    slider.value = String(current);
    caption.textContent = (current + 1) + ' / ' + steps.length;
    prev.disabled = current === 0;
    next.disabled = current === steps.length - 1;
    document.body.setAttribute('data-current', String(current));
  }
  prev.addEventListener('click', function () { show(current - 1); });
  next.addEventListener('click', function () { show(current + 1); });
  slider.addEventListener('input', function () { show(Number(slider.value)); });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowLeft') { show(current - 1); e.preventDefault(); }
    if (e.key === 'ArrowRight') { show(current + 1); e.preventDefault(); }
  });
  show(0);
  var m = /next=(\d+)/.exec(location.hash);
  for (var i = 0; m && i < Number(m[1]); ++i) next.click();
})();
)";

void page(std::ostream& os, const std::string& title, const std::string& facts,
          const std::vector<std::string>& svgs, const std::string& extra) {
    os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << xml(title)
       << "</title><style>" << page_style << "</style></head><body>\n<h1>" << xml(title)
       << "</h1>\n<p class=\"facts\">" << facts << "</p>\n";
    os << "<div id=\"controls\"><button id=\"prev\" type=\"button\">&#9664; previous</button>"
          "<input id=\"slider\" type=\"range\" min=\"0\" max=\""
       << svgs.size() - 1
       << "\" value=\"0\" aria-label=\"step\"><button id=\"next\" type=\"button\">next "
          "&#9654;</button><span id=\"caption\"></span><span style=\"color:#666\">(arrow keys "
          "step too)</span></div>\n";
    for (std::size_t k = 0; k < svgs.size(); ++k)
        os << "<div class=\"step\" data-step=\"" << k << "\">\n" << svgs[k] << "</div>\n";
    os << extra << "<script>" << page_script << "</script>\n</body></html>\n";
}

} // namespace

std::vector<std::string> step_svgs(const algorithm_steps& s) {
    std::vector<picture> steps;
    double width = 0, height = 0;
    for (std::size_t k = 0; k < s.steps.size(); ++k) {
        steps.push_back(step_svg(s, k));
        width = std::max(width, steps.back().width), height = std::max(height, steps.back().height);
    }
    std::vector<std::string> out;
    for (const picture& p : steps)
        out.push_back(svg_open(width, height) + "\n" + p.body + "</svg>\n");
    return out;
}

void write_steps_html(const algorithm_steps& s, std::ostream& os) {
    const run_report& r = s.report;
    const std::string facts = xml(fmt::format(
        "{} [{}]. This run: virtual time {} (t_s = {}, t_w = {}), {} step{}, {} message{}, {} "
        "congestion event{}. {} Everything shown is read from the run's own buffers.",
        s.formula, s.source, num(r.virtual_time), num(r.cost.t_s), num(r.cost.t_w), r.steps,
        r.steps == 1 ? "" : "s", r.trace.size(), r.trace.size() == 1 ? "" : "s",
        r.congestion.size(), r.congestion.size() == 1 ? "" : "s", s.notation));
    page(os, s.title, facts, step_svgs(s), "");
}

std::string wait_for_svg(const deadlock_error& e, int dim) {
    if (dim > 6)
        throw usage_error("the wait-for graph is drawn up to d = 6 (64 nodes); the report's text "
                          "lists every blocked node");
    const cube_layout L(dim);
    std::ostringstream body;
    body << arrow_markers(dim);
    body << fmt::format(R"(<text x="16" y="24" font-size="16" font-weight="bold">deadlock: {} )"
                        R"(blocked node{}</text><text x="16" y="44" font-size="13" fill="#333">)"
                        R"(an arrow from a node to the node it waits for, coloured by the link )"
                        R"(it waits on</text>)",
                        e.waits().size(), e.waits().size() == 1 ? "" : "s")
         << '\n';
    draw_edges(body, L, dim);
    std::vector<bool> blocked(std::size_t(1) << dim);
    std::vector<std::string> labels(std::size_t(1) << dim);
    for (const auto& w : e.waits()) {
        blocked[std::size_t(w.node)] = true;
        const std::string what = w.what.substr(0, w.what.find(' '));
        labels[std::size_t(w.node)] = w.dim >= 0 ? fmt::format("{} dim {}", what, w.dim) : what;
    }
    std::vector<std::pair<point, point>> arrows;
    for (const auto& w : e.waits())
        if (w.peer >= 0 && w.peer < (1 << dim))
            arrows.emplace_back(L.at[std::size_t(w.node)], L.at[std::size_t(w.peer)]);
    node_plan plan = plan_nodes(L, dim, labels, arrows);
    for (const auto& w : e.waits()) {
        if (w.peer >= 0 && w.peer < (1 << dim))
            arrow(body, L.at[std::size_t(w.node)], L.at[std::size_t(w.peer)], dim_colour(w.dim),
                  marker_ref(w.dim), w.dim < 0, "wait",
                  "node " + std::to_string(w.node) + ": " + w.what);
    }
    draw_nodes(body, L, dim, blocked, plan.texts);
    legend(body, 16, L.height + 10, dim,
           "red: blocked; label: what it waits in (recv, send, delivery)");
    return svg_open(std::max(L.width, 640.0), L.height + 40) + "\n" + body.str() + "</svg>\n";
}

void write_wait_for_html(const deadlock_error& e, const run_params& p, std::ostream& os) {
    const std::string title = fmt::format("{} {} on a {}-cube deadlocks", p.op, p.algo, p.dim);
    page(os, title,
         xml(fmt::format("link capacity {}, {}-port. The wait-for graph of the deadlock report "
                         "(below): follow the arrows to find the cycle.",
                         p.link_capacity, port_policy_of(p.ports).option)),
         {wait_for_svg(e, p.dim)}, "<pre>" + xml(e.what()) + "</pre>\n");
}

} // namespace hcube
