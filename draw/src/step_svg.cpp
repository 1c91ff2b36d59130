// One SVG per step of an algorithm: the title and caption, the cube with
// the step's arrows and every node's label, the key table of what found no
// room, and the tables beside or below.
#include <algorithm>
#include <sstream>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube {

using namespace draw_detail;

namespace {

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

// The cube's layout for every step of s, with room beside it for the widest
// label. 5- and 6-cubes keep to a screen's width: their widest labels take
// more lines or a key.
cube_layout step_layout(const algorithm_steps& s) {
    const int d = s.params.dim;
    double margin = side_margin(s);
    cube_layout L(d, margin, widest_label(s, narrowest_label));
    while (d >= 5 && L.width > screen_width && margin > 60)
        L = cube_layout(d, margin -= 10, widest_label(s, narrowest_label));
    return L;
}

// Step k's arrows with their labels and the nodes with theirs; returns the
// key table's entries, the labels that found no room, with their full lists.
std::vector<std::pair<std::string, std::string>> draw_step_cube(std::ostream& body,
                                                                const algorithm_steps& s,
                                                                std::size_t k, const cube_layout& L,
                                                                const std::string& markers) {
    const int d = s.params.dim;
    const step_state& st = s.steps[k];
    std::vector<std::pair<point, point>> arrows;
    for (const std::size_t m : st.messages)
        arrows.emplace_back(L.at[std::size_t(s.report.trace[m].from)],
                            L.at[std::size_t(s.report.trace[m].to)]);
    node_plan plan = plan_nodes(L, d, st.labels, arrows, st.lists);
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
    const auto labels = place_arrow_labels(plan.pl, arrows, cargo);
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
    return keys;
}

// Step k's tables at (tx, ty), and their width and height. Split: below the
// cube, each in as many parts (of the nodes, one below the other, 10 px
// apart) as a screen's width needs; a table's height is in rows.
std::pair<double, double> draw_tables(std::ostream& os, const algorithm_steps& s, std::size_t k,
                                      double tx, double ty, bool split) {
    std::pair<double, double> size{0, 0};
    const auto place = [&](const auto& draw, double rows) {
        const int p = 1 << s.params.dim;
        for (int parts = 1;; parts *= 2) {
            std::ostringstream part_os;
            double y = ty, w = 0;
            for (int part = 0; part < parts; ++part, y += 17.0 * rows + 10)
                w = std::max(w, draw(part_os, y, nodes{part * p / parts, (part + 1) * p / parts}));
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
}

picture step_svg(const algorithm_steps& s, std::size_t k) {
    const int d = s.params.dim;
    const cube_layout L = step_layout(s);
    std::ostringstream body;
    const std::string markers = fmt::format("s{}-", k); // the page holds every step
    body << arrow_markers(d, markers);
    body << fmt::format(R"(<text x="16" y="24" font-size="16" font-weight="bold">{}</text>)"
                        R"(<text x="16" y="44" font-size="13" fill="#333">{}</text>)",
                        xml(s.title), xml(step_caption(s, k)))
         << '\n';
    draw_edges(body, L, d);
    const auto keys = draw_step_cube(body, s, k, L, markers);
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
    // screen's width does not hold both.
    std::ostringstream beside;
    const auto [w, h] = draw_tables(beside, s, k, L.width + 10, 70, false);
    if (w > 0 && d <= 3 && L.width + w + 30 <= screen_width) {
        body << beside.str();
        width = std::max(width, L.width + w + 30), height = std::max(height, 70 + h);
    } else if (w > 0) {
        const double ty = height + 30;
        const auto [bw, bh] = draw_tables(body, s, k, 16, ty, true);
        width = std::max(width, 16 + bw + 30), height = ty + bh;
    }
    return {body.str(), width, height};
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

} // namespace hcube
