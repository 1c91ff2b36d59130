// The step pictures and the wait-for graph: the hypercube drawn as seed 000
// draws it (a square, a cube, two cubes side by side; d = 5, 6 as 4-cubes in a
// grid), each step's messages as arrows, every node's label; the CM-200 memory
// tables of seed 002 beside the cube; and the HTML page that steps through them.
#include <hcube/draw.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
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
// right, the cube's depth), bit 3 a second cube to the right (and lower, so
// that its links pass beside the nodes between), bit 4 a second
// row of 4-cubes below, bit 5 a second column of them.
struct cube_layout {
    double unit;
    std::vector<point> at;
    double width, height;

    explicit cube_layout(int d, double margin_x = 150, double top = 75, double bottom = 40)
        : unit(d <= 3   ? 170
               : d == 4 ? 130
                        : 95) {
        const int p = 1 << d;
        const point offset[6] = {{1, 0}, {0, -1}, {0.62, -0.5}, {2.4, 0.5}, {0, 2.8}, {5.4, 0}};
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

constexpr double node_radius = 15;

std::string binary(int v, int d) {
    std::string s;
    for (int b = d - 1; b >= 0; --b)
        s += (v >> b & 1) ? '1' : '0';
    return s;
}

// The cube's links, light, under everything (for d >= 5 only those inside a
// 4-cube: the others appear when a step uses them).
void draw_edges(std::ostream& os, const cube_layout& L, int d) {
    for (int i = 0; i < (1 << d); ++i)
        for (int k = 0; k < std::min(d, 4); ++k)
            if (const int j = i ^ (1 << k); i < j)
                os << fmt::format(R"(<line class="edge" x1="{}" y1="{}" x2="{}" y2="{}" )"
                                  R"(stroke="#d0d0d0" stroke-width="2"/>)",
                                  num(L.at[i].x), num(L.at[i].y), num(L.at[j].x), num(L.at[j].y));
    os << '\n';
}

void draw_nodes(std::ostream& os, const cube_layout& L, int d,
                const std::vector<std::string>& labels, const std::vector<bool>& hot) {
    for (int i = 0; i < (1 << d); ++i) {
        const point q = L.at[std::size_t(i)];
        os << fmt::format(
            R"(<circle cx="{}" cy="{}" r="{}" fill="{}" stroke="#333" stroke-width="1.5"/>)"
            R"(<text x="{}" y="{}" text-anchor="middle" font-weight="bold">{}</text>)"
            R"(<text x="{}" y="{}" text-anchor="middle" font-size="10" fill="#666">{}</text>)",
            num(q.x), num(q.y), num(node_radius),
            i < int(hot.size()) && hot[std::size_t(i)] ? "#fde9e7" : "#f4f7fb", num(q.x),
            num(q.y + 4), i, num(q.x), num(q.y - node_radius - 4), binary(i, d));
        // Outside the square: left of the nodes with bit 0 clear, right of
        // the others, clear of the vertical links and their arrowheads.
        const bool right = d > 0 && (i & 1);
        if (i < int(labels.size()) && !labels[std::size_t(i)].empty())
            os << fmt::format(R"(<text class="label" data-node="{}" x="{}" y="{}" )"
                              R"(text-anchor="{}" font-size="{}" fill="#111" stroke="white" )"
                              R"(stroke-width="4" paint-order="stroke">{}</text>)",
                              i, num(q.x + (right ? 1 : -1) * (node_radius + 5)), num(q.y + 4),
                              right ? "start" : "end", d <= 3 ? 13 : 11,
                              xml(labels[std::size_t(i)]));
        os << '\n';
    }
}

// An arrow from a to b between the circles, moved `side` px to its left so
// that the two directions of an exchange show as two arrows.
void arrow(std::ostream& os, point a, point b, double side, std::string_view colour,
           std::string_view marker, bool dashed, const std::string& cls, const std::string& tip,
           const std::string& text) {
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
    if (len < 1) return;
    const double ux = dx / len, uy = dy / len, nx = uy, ny = -ux;
    const point s{a.x + ux * (node_radius + 2) + nx * side,
                  a.y + uy * (node_radius + 2) + ny * side};
    const point e{b.x - ux * (node_radius + 4) + nx * side,
                  b.y - uy * (node_radius + 4) + ny * side};
    os << fmt::format(R"(<line class="{}" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" )"
                      R"(stroke-width="2.5" {}marker-end="{}"><title>{}</title></line>)",
                      cls, num(s.x), num(s.y), num(e.x), num(e.y), colour,
                      dashed ? R"(stroke-dasharray="6 4" )" : "", marker, xml(tip));
    if (!text.empty()) {
        // The cargo beside the arrow's middle, on its left (the other
        // direction of an exchange has its own on the other side).
        const point m{(s.x + e.x) / 2 + nx * 8, (s.y + e.y) / 2 + ny * 8};
        const std::string_view anchor = nx > 0.3 ? "start" : nx < -0.3 ? "end" : "middle";
        os << fmt::format(R"(<text class="cargo" x="{}" y="{}" text-anchor="{}" )"
                          R"(font-size="10" fill="{}" stroke="white" stroke-width="3" )"
                          R"(paint-order="stroke">{}</text>)",
                          num(m.x), num(m.y + 3), anchor, colour, xml(text));
    }
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

// Seed 002's "Dim" column: the link location j's element came over, found
// from the data (the neighbour that held it one step before).
std::string table_dim(const algorithm_steps& s, std::size_t k, std::size_t j) {
    if (k == 0) return "";
    const auto &now = s.steps[k].memory, &prev = s.steps[k - 1].memory;
    for (int b = 0; b < s.params.dim; ++b)
        if (!now[0][j].empty() && prev[std::size_t(1 << b)][j] == now[0][j])
            return std::to_string(b);
    return "";
}

// The memory table of every node up to step k (rows of later steps empty), as
// in seed 002's Figures 8-11; cells have class "cell" and data-step/mem/node.
double draw_table(std::ostream& os, const algorithm_steps& s, std::size_t k, double x0, double y0) {
    const int p = 1 << s.params.dim;
    const std::size_t words = s.params.words;
    const double cw = 34, rh = 17, first = 46;
    os << fmt::format(R"(<g class="memory" font-size="12" font-family="monospace">)");
    const auto col = [&](int c) { return x0 + 2 * first + cw * c; };
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Step</text>)"
                      R"(<text x="{}" y="{}" font-weight="bold">Mem</text>)",
                      num(x0), num(y0), num(x0 + first), num(y0));
    for (int i = 0; i < p; ++i)
        os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">P{}</text>)", num(col(i)),
                          num(y0), i);
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Dim</text>)", num(col(p)), num(y0));
    double y = y0 + rh;
    for (std::size_t st = 0; st < s.steps.size(); ++st) {
        if (st == k)
            os << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#fff3b0"/>)",
                              num(x0 - 4), num(y - rh + 4), num(col(p) + cw - x0),
                              num(rh * double(words)));
        for (std::size_t j = 0; j < words; ++j, y += rh) {
            if (j == 0)
                os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0), num(y),
                                  st == 0 ? "Init." : std::to_string(st - 1));
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0 + first), num(y), j);
            if (st > k) continue;
            for (int i = 0; i < p; ++i)
                os << fmt::format(R"(<text class="cell" data-step="{}" data-mem="{}" )"
                                  R"(data-node="{}" x="{}" y="{}">{}</text>)",
                                  st, j, i, num(col(i)), num(y),
                                  xml(s.steps[st].memory[std::size_t(i)][j]));
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(col(p)), num(y),
                              table_dim(s, st, j));
        }
        y += 4;
    }
    os << "</g>\n";
    return col(p) + cw - x0;
}

std::string step_caption(const algorithm_steps& s, std::size_t k) {
    const std::size_t total = s.steps.size() - 1;
    if (k == 0)
        return fmt::format("before the first step: what every node starts with ({} steps in all)",
                           total);
    std::vector<int> dims;
    for (const std::size_t m : s.steps[k].messages)
        if (const int d = s.report.trace[m].dim;
            std::find(dims.begin(), dims.end(), d) == dims.end())
            dims.push_back(d);
    std::sort(dims.begin(), dims.end());
    std::string on;
    for (const int d : dims)
        on +=
            (on.empty() ? "" : ", ") + (d < 0 ? std::string("routed") : "dim " + std::to_string(d));
    return fmt::format(
        "step {} of {}: {} message{} on {}; labels: what each node holds after the step", k, total,
        s.steps[k].messages.size(), s.steps[k].messages.size() == 1 ? "" : "s",
        on.empty() ? "no link" : on);
}

std::string svg_open(double w, double h) {
    return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
                       R"(viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)"
                       R"(<rect width="100%" height="100%" fill="white"/>)",
                       num(w), num(h));
}

std::string step_svg(const algorithm_steps& s, std::size_t k) {
    const int d = s.params.dim;
    const cube_layout L(d);
    std::ostringstream body;
    body << arrow_markers(d);
    body << fmt::format(R"(<text x="16" y="24" font-size="16" font-weight="bold">{}</text>)"
                        R"(<text x="16" y="44" font-size="13" fill="#333">{}</text>)",
                        xml(s.title), xml(step_caption(s, k)))
         << '\n';
    draw_edges(body, L, d);
    const step_state& st = s.steps[k];
    for (std::size_t i = 0; i < st.messages.size(); ++i) {
        const trace_record& t = s.report.trace[st.messages[i]];
        const std::string tip =
            fmt::format("node {} -> node {}{}: {} bytes, t = {} .. {}", t.from, t.to,
                        t.dim < 0 ? std::string(" (routed)") : " on dim " + std::to_string(t.dim),
                        t.bytes, num(t.start), num(t.arrival));
        arrow(body, L.at[std::size_t(t.from)], L.at[std::size_t(t.to)], 4, dim_colour(t.dim),
              marker_ref(t.dim), t.dim < 0, "msg", tip, d <= 4 ? st.carried[i] : "");
    }
    std::vector<bool> hot(std::size_t(1) << d);
    for (const std::size_t m : st.messages)
        hot[std::size_t(s.report.trace[m].to)] = true;
    draw_nodes(body, L, d, st.labels, hot);
    double width = L.width, height = L.height + 40;
    legend(body, 16, L.height + 10, d,
           "arrows: the messages of this step, with what they bring; red nodes received one");
    if (s.table) {
        const double tw = draw_table(body, s, k, L.width + 10, 70);
        width += tw + 30;
        height = std::max(height, 70 + 17.0 * double(s.steps.size() * (s.params.words) + 2) +
                                      4.0 * double(s.steps.size()));
    }
    return svg_open(std::max(width, 640.0), height) + "\n" + body.str() + "</svg>\n";
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
pre { background: #f6f6f6; padding: 8px; }
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
    std::vector<std::string> out;
    for (std::size_t k = 0; k < s.steps.size(); ++k)
        out.push_back(step_svg(s, k));
    return out;
}

void write_steps_html(const algorithm_steps& s, std::ostream& os) {
    const run_report& r = s.report;
    const std::string facts = xml(fmt::format(
        "{} [{}]. This run: virtual time {} (t_s = {}, t_w = {}), {} steps, {} messages, {} "
        "congestion events. Labels come from the run's own buffers: (0,1) = the blocks of "
        "nodes 0 and 1, [0..3] = a partial sum of nodes 0 to 3, {{0,5}} = node 0's block for "
        "node 5.",
        s.formula, s.source, num(r.virtual_time), num(r.cost.t_s), num(r.cost.t_w), r.steps,
        r.trace.size(), r.congestion.size()));
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
        if (w.peer >= 0 && w.peer < (1 << dim))
            arrow(body, L.at[std::size_t(w.node)], L.at[std::size_t(w.peer)], 4, dim_colour(w.dim),
                  marker_ref(w.dim), w.dim < 0, "wait",
                  "node " + std::to_string(w.node) + ": " + w.what, "");
    }
    draw_nodes(body, L, dim, labels, blocked);
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
