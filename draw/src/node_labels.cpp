// Node labels: where each node's id and label go (clear of everything
// placed before, else a key), and the nodes drawn with them.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <ostream>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube::draw_detail {

double label_size(int d) {
    return d <= 3 ? 13 : 11;
}

namespace {

// "A".."Z", "a".."z", then "Z1", "Z2", ...: up to 64 nodes.
std::string key_name(std::size_t n) {
    return n < 26   ? std::string(1, char('A' + n))
           : n < 52 ? std::string(1, char('a' + n - 26))
                    : "Z" + std::to_string(n - 51);
}

// The room node texts may take: inside the picture, below the title and
// caption, clear of the links, the step's arrows and the nodes' circles.
placer node_placer(const cube_layout& L, int d,
                   const std::vector<std::pair<point, point>>& arrows) {
    placer pl;
    pl.page = {2, 52, L.width - 2, L.height - 2};
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
    return pl;
}

// Node i's id (at q): above or below, away from the vertical link, moved
// aside when a line passes there, else on the other side beside the link.
// Where no place is free, x is NaN: the node's tooltip has its id.
point place_id(placer& pl, point q, int i, int d) {
    const bool above = d > 1 && (i & 2);
    const double over = q.y - node_radius - 5, under = q.y + node_radius + 13;
    // Then the corners and beside it, near the links and arrows: with 3 px
    // more room.
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
    const auto found = pl.first_free(at, room);
    if (found == at.end()) return {std::nan(""), 0};
    pl.taken.push_back(text_box(found->at.x, found->at.y, "middle", 10, std::size_t(d)));
    return found->at;
}

// The box a node label (or key) takes.
box label_room(const node_texts& c, double size, bool exact) {
    return text_box(c.label.x, c.label.y, c.anchor, size, c.lines, exact);
}

// Where node i's label (at q) may go, best first: wide labels first, then
// narrower ones in more lines; on 4-cubes and up, places more than 18 px off
// the node's height after all others (among 16 nodes they read as another
// node's).
std::vector<node_texts> label_candidates(point q, int i, int d, const std::string& label) {
    const double size = label_size(d);
    const bool right = d > 0 && (i & 1), above = d > 1 && (i & 2);
    std::vector<node_texts> at, far;
    for (const std::size_t width :
         {label_width, std::size_t(16), narrowest_label, std::size_t(8)}) {
        const auto lines = wrap(label, width);
        // Several lines are centred on the node's height.
        const double tall = 1.2 * size * double(lines.size() - 1);
        for (const bool side : {right, !right})
            for (const double dx : {0., 14.})
                for (const double dy : {0., -9., 9., -18., 18., -27., 27., -36., 36., -45., 45.})
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
    return at;
}

// The first free of a label's candidates (at, around the node at q); but
// right beside the node (at its height or 9 px off), across a light link if
// need be, before anywhere farther. None when no candidate is free.
std::optional<node_texts> label_place(const placer& pl, const std::vector<node_texts>& at, point q,
                                      double size) {
    const auto room = [&](const node_texts& c, bool exact) { return label_room(c, size, exact); };
    std::vector<node_texts> close;
    std::copy_if(at.begin(), at.end(), std::back_inserter(close), [&](const node_texts& c) {
        const double middle = q.y + 4 - 0.6 * size * double(c.lines.size() - 1);
        return c.anchor != "middle" && std::abs(c.label.x - q.x) < node_radius + 7 &&
               std::abs(c.label.y - middle) <= 9;
    });
    const auto chosen = std::find_if(at.cbegin(), at.cend(),
                                     [&](const node_texts& c) { return pl.free(room(c, false)); });
    if (chosen == at.end() || std::find_if(close.begin(), close.end(), [&](const node_texts& c) {
                                  return c.label.x == chosen->label.x &&
                                         c.label.y == chosen->label.y && c.lines == chosen->lines;
                              }) == close.end())
        if (const auto beside = std::find_if(
                close.begin(), close.end(),
                [&](const node_texts& c) { return pl.free(room(c, false), false, true); });
            beside != close.end())
            return *beside;
    if (chosen != at.end()) return *chosen;
    if (const auto tight = pl.first_free(at, room); tight != at.end()) return *tight;
    return std::nullopt;
}

// Where the key of a label with no free place goes: beside, above or below the
// node at q, or a corner. None when no place is free.
std::optional<node_texts> key_place(const placer& pl, point q, const std::string& key,
                                    double size) {
    std::vector<node_texts> at;
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
    // With 3 px more room: it may come close to the node's id, and DejaVu's
    // digits are wider than text_box's 0.6 em.
    const auto wider = [&](const node_texts& c, bool exact) {
        const box b = label_room(c, size, exact);
        return box{b.x0 - 3, b.y0 - 3, b.x1 + 3, b.y1 + 3};
    };
    if (const auto found = pl.first_free(at, wider); found != at.end()) return *found;
    return std::nullopt;
}

// Node i's label (at q): at its place, else a key (keyed_label); the room it
// takes is added to plan.pl.
void place_label(node_plan& plan, point q, int i, int d, const std::vector<std::string>& labels,
                 const std::vector<std::string>& lists) {
    node_texts& t = plan.texts[std::size_t(i)];
    const bool right = d > 0 && (i & 1);
    t.label = {q.x + (right ? 1 : -1) * (node_radius + 6), q.y + 4};
    t.anchor = right ? "start" : "end";
    if (i >= int(labels.size()) || labels[std::size_t(i)].empty()) return;
    const double size = label_size(d);
    std::optional<node_texts> chosen =
        label_place(plan.pl, label_candidates(q, i, d, labels[std::size_t(i)]), q, size);
    if (!chosen) {
        plan.keyed.push_back({i, key_name(plan.keyed.size()), labels[std::size_t(i)],
                              i < int(lists.size()) ? lists[std::size_t(i)] : ""});
        chosen = key_place(plan.pl, q, plan.keyed.back().key, size);
        if (!chosen) {
            plan.keyed.back().key.clear();
            return;
        }
    }
    t.label = chosen->label, t.anchor = chosen->anchor, t.lines = chosen->lines;
    plan.pl.taken.push_back(label_room(t, size, false));
}

} // namespace

node_plan plan_nodes(const cube_layout& L, int d, const std::vector<std::string>& labels,
                     const std::vector<std::pair<point, point>>& arrows,
                     const std::vector<std::string>& lists) {
    node_plan plan{{}, node_placer(L, d, arrows), {}};
    for (int i = 0; i < (1 << d); ++i)
        plan.texts.push_back({{}, "", place_id(plan.pl, L.at[std::size_t(i)], i, d), {}});
    for (int i = 0; i < (1 << d); ++i)
        place_label(plan, L.at[std::size_t(i)], i, d, labels, lists);
    return plan;
}

void draw_nodes(std::ostream& os, const cube_layout& L, int d, const std::vector<bool>& hot,
                const std::vector<node_texts>& texts, const std::vector<std::string>& lists) {
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

} // namespace hcube::draw_detail
