// What the step pictures and the wait-for graph share: the cube's layout
// (layout.cpp), the room text takes (text_boxes.cpp), the placing and
// drawing of node labels (node_labels.cpp) and of arrows with their labels
// (arrows.cpp), the tables beside a step's cube (step_tables.cpp) and the
// HTML page (page.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hcube/draw.hpp>

namespace hcube::draw_detail {

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
                         double bottom = 40);
};

// Node v's id as d binary digits.
std::string binary(int v, int d);

// The cube's links, light, under everything (for d >= 5 only those inside a
// 4-cube: the others appear when a step uses them).
std::vector<std::pair<point, point>> edges(const cube_layout& L, int d);

// The links of edges(L, d), light grey.
void draw_edges(std::ostream& os, const cube_layout& L, int d);

// The dimensions' colours at (x, y), and a note below them.
void legend(std::ostream& os, double x, double y, int d, const std::string& note);

// The text of the picture keeps clear of itself: every label's box (estimated
// from its characters, 0.6 em each: DejaVu's digits are 0.64 em, its brackets,
// commas and dots much less) is placed where it overlaps no box placed before
// it.
struct box {
    double x0, y0, x1, y1;
    bool overlaps(const box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// The characters of UTF-8 text (a product's "→" is one).
std::size_t length(std::string_view s);

// The box of `lines` lines of at most `chars` characters drawn at (x, y), the
// first baseline, anchored at start, end or middle.
box text_box(double x, double y, std::string_view anchor, double size, std::size_t chars,
             std::size_t lines = 1);

// The box of `lines` at (x, y) (text_box), or with their exact widths.
box text_box(double x, double y, std::string_view anchor, double size,
             const std::vector<std::string>& lines, bool exact);

// A node's label split into lines of at most `width` characters at spaces
// ("{0,0} {0,2} ..." lists of the personalized operations).
// A word longer than a line breaks after its commas ("(0,1,2,3," "4,5,6,7)"),
// and a product's second set starts a line ("{0,1→" "0,2,4..14}").
std::vector<std::string> wrap(const std::string& text, std::size_t width);

// A text's lines: one as it is, several as tspans a line apart.
std::string text_lines(const std::vector<std::string>& lines, double x, double size);

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
bool crosses(point p, point q, const box& b);

constexpr double node_radius = 15;

// Where an arrow from a to b starts and ends: between the circles, moved
// arrow_side px to its left (the two directions of an exchange show as two
// arrows).
constexpr double arrow_side = 5;
std::pair<point, point> arrow_ends(point a, point b);

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
    void arrow(point a, point b);
};

constexpr std::size_t label_width = 24;     // characters per line of a node label
constexpr std::size_t narrowest_label = 12; // and the fewest it is squeezed to

// The font size of node labels on a d-cube.
double label_size(int d);

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

// A node's binary id sits above or below it, away from its vertical link
// (bit 1). Its label goes to the first free place of: beside the node, left of
// the nodes with bit 0 clear and right of the others, then a little higher or
// lower, then on the other side, then below or above; free means clear of
// every circle, id and label placed before, every link and every arrow of the
// step, and inside the picture. When none is, a key goes there instead
// (keyed_label).
node_plan plan_nodes(const cube_layout& L, int d, const std::vector<std::string>& labels,
                     const std::vector<std::pair<point, point>>& arrows,
                     const std::vector<std::string>& lists = {});

// lists: the labels in full where they abbreviate, as their tooltips.
void draw_nodes(std::ostream& os, const cube_layout& L, int d, const std::vector<bool>& hot,
                const std::vector<node_texts>& texts, const std::vector<std::string>& lists = {});

// An arrow's label: its first baseline, anchor and lines.
struct arrow_label {
    point at;
    std::string_view anchor;
    std::vector<std::string> lines;
};

// The labels of a step's arrows (texts[i] of arrows[i]), placed by
// label_places: the label with the fewest places left first, at the one of
// its first few places that takes the fewest places of others (none of the
// last); then a label left with none takes a place whose one occupant can
// move to another. None where no place is left.
std::vector<std::optional<arrow_label>>
place_arrow_labels(placer& pl, const std::vector<std::pair<point, point>>& arrows,
                   const std::vector<std::string>& texts);

// An arrow from a to b (arrow_ends) and its label, if it has one.
void arrow(std::ostream& os, point a, point b, std::string_view colour, std::string_view marker,
           bool dashed, const std::string& cls, const std::string& tip,
           const std::optional<arrow_label>& label = {});

// The node columns a table shows, [lo, hi): a screen's width holds 16 to 32
// of them, so larger cubes get their tables in parts, one below another.
struct nodes {
    int lo, hi;
};

// The memory table of every node up to step k (rows of later steps empty), as
// in Mathur & Johnsson's Figures 8-11; cells have class "cell" and data-step/mem/node.
double draw_table(std::ostream& os, const algorithm_steps& s, std::size_t k, double x0, double y0,
                  nodes n);

// Mathur & Johnsson's Figures 13-19 for step k: every memory address of every node,
// "●" sending its partial sum, "+" receiving and adding, "○" added before,
// and the dimension the sum crossed. Cells have class "cell".
double draw_reduction_table(std::ostream& os, const algorithm_steps& s, std::size_t k, double x0,
                            double y0, nodes n);

// Hu's Table 1 from the run: the link element j of logical node i
// left on in step 1 (cells of class "sched", data-elem j, data-proc i).
double draw_schedule(std::ostream& os, const algorithm_steps& s, double x0, double y0, nodes n);

// A self-contained HTML page: the title, the facts (HTML), one step per SVG
// with the controls that step through them, and `extra` HTML below.
void page(std::ostream& os, const std::string& title, const std::string& facts,
          const std::vector<std::string>& svgs, const std::string& extra);

} // namespace hcube::draw_detail
