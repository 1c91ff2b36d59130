// write_timeline_svg: the space-time diagram of a run (one line per node,
// virtual time to the right, an arrow per message).
#include <hcube/draw.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>

#include "message_times.hpp"
#include "svg.hpp"

namespace hcube {

using namespace draw_detail;

namespace {

// Two clocks that are one value reached by different sums.
bool same_time(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

// Each node's received messages (in the order it took them) and sent ones,
// as indices into r.trace, and when each received message's receive ended
// (-1 for a message never received).
struct node_messages {
    std::vector<std::vector<std::size_t>> into, out_of;
    std::vector<double> taken;
};

// r's messages by node. A receive ended at the message's arrival, or on a
// single-port node's one receive port, after the receive before it
// (charge_receive in the emulator).
node_messages messages_of(const run_report& r) {
    const bool port_per_link = port_policy_of(r.ports).port_per_link;
    node_messages ms{std::vector<std::vector<std::size_t>>(r.node_time.size()),
                     std::vector<std::vector<std::size_t>>(r.node_time.size()),
                     std::vector<double>(r.trace.size(), -1)};
    for (std::size_t i = 0; i < r.trace.size(); ++i) {
        if (r.trace[i].recv_call >= 0) ms.into[std::size_t(r.trace[i].to)].push_back(i);
        ms.out_of[std::size_t(r.trace[i].from)].push_back(i);
    }
    for (auto& in : ms.into) {
        std::sort(in.begin(), in.end(), [&](std::size_t a, std::size_t b) {
            return r.trace[a].recv_call < r.trace[b].recv_call;
        });
        double port = 0;
        for (const std::size_t i : in) {
            const trace_record& m = r.trace[i];
            port = port_per_link ? m.arrival
                                 : std::max(m.arrival - duration(r, m), port) + duration(r, m);
            ms.taken[i] = port;
        }
    }
    return ms;
}

// A stretch of the critical path and the node the walk goes on at.
struct stretch {
    critical_step step;
    int next;
};

// A receive on node n that ended at t, continued at its sender when the
// arrival set t, else at the receive before it; none when there is none.
std::optional<stretch> receive_ending(const run_report& r, const node_messages& ms, int n,
                                      double t) {
    for (const std::size_t i : ms.into[std::size_t(n)]) {
        const trace_record& m = r.trace[i];
        if (!same_time(ms.taken[i], t)) continue;
        const bool arrived = same_time(m.arrival, t);
        const double from = arrived ? m.start : t - duration(r, m);
        if (from < t && !same_time(from, t))
            return stretch{{std::ptrdiff_t(i), n, from, t}, arrived ? m.from : n};
    }
    return std::nullopt;
}

// A send from node n whose port came free at t, continued at its start.
std::optional<stretch> send_ending(const run_report& r, const node_messages& ms, int n, double t) {
    for (const std::size_t i : ms.out_of[std::size_t(n)]) {
        const trace_record& m = r.trace[i];
        if (same_time(port_free(r, m), t) && m.start < t && !same_time(m.start, t))
            return stretch{{std::ptrdiff_t(i), n, m.start, t}, n};
    }
    return std::nullopt;
}

// Local work on node n up to t: from its latest receive or send before t.
stretch local_work(const run_report& r, const node_messages& ms, int n, double t) {
    double before = 0;
    for (const std::size_t i : ms.into[std::size_t(n)])
        if (ms.taken[i] < t && !same_time(ms.taken[i], t)) before = std::max(before, ms.taken[i]);
    for (const std::size_t i : ms.out_of[std::size_t(n)])
        if (const double f = port_free(r, r.trace[i]); f < t && !same_time(f, t))
            before = std::max(before, f);
    return {{-1, n, before, t}, n};
}

} // namespace

std::vector<critical_step> critical_path(const run_report& r) {
    std::vector<critical_step> path;
    if (r.node_time.empty()) return path;
    const node_messages ms = messages_of(r);
    int n = int(std::max_element(r.node_time.begin(), r.node_time.end()) - r.node_time.begin());
    double t = r.node_time[std::size_t(n)];
    // Walk back from (n, t): a receive that ended at t, or a send whose port
    // came free at t, or local work since the node's last such event. Every
    // stretch is longer than zero.
    while (t > 0 && !same_time(t, 0)) {
        std::optional<stretch> s = receive_ending(r, ms, n, t);
        if (!s) s = send_ending(r, ms, n, t);
        if (!s) s = local_work(r, ms, n, t);
        path.push_back(s->step);
        n = s->next;
        t = s->step.begin;
    }
    return path;
}

namespace {

// A "nice" tick spacing near span/8: 1, 2 or 5 times a power of ten.
double tick_step(double span) {
    const double raw = span / 8, mag = std::pow(10, std::floor(std::log10(raw)));
    for (const double f : {1.0, 2.0, 5.0})
        if (raw <= f * mag) return f * mag;
    return 10 * mag;
}

// Where a timeline draws: a row per node, virtual time along x from left to
// left + plot_width, the time axis below the rows.
struct timeline_frame {
    int p;
    double end, plot_width;
    double row, left, top, axis_y, width, height;
    double x(double t) const { return left + t / end * plot_width; }
    double y(int node) const { return top + row * node; }
};

timeline_frame frame_of(const run_report& r, const timeline_options& o) {
    timeline_frame f{};
    f.p = 1 << r.dim;
    f.end = r.virtual_time;
    for (const auto& m : r.trace)
        f.end = std::max(f.end, m.arrival);
    if (f.end <= 0) f.end = 1;
    f.plot_width = o.width;
    f.row = f.p <= 16 ? 28 : f.p <= 32 ? 18 : 12;
    f.left = 70, f.top = o.title.empty() ? 20 : 44;
    const double right = 30;
    const double plot_h = f.row * (f.p - 1);
    f.axis_y = f.top + plot_h + 18;
    const int legend_rows = 2;
    f.height = f.axis_y + 62 + legend_rows * 18;
    f.width = f.left + o.width + right;
    return f;
}

// Node lines and names, and the time axis with a scale.
void draw_axes(std::ostream& os, const run_report& r, const timeline_frame& f) {
    const double label_size = f.p <= 32 ? 12 : 9;
    const double left = f.left, axis_y = f.axis_y, right_end = f.left + f.plot_width;
    for (int i = 0; i < f.p; ++i)
        os << fmt::format(R"(<line class="node" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#bbb"/>)"
                          R"(<text x="{}" y="{}" text-anchor="end" font-size="{}">node {}</text>)",
                          num(left), num(f.y(i)), num(right_end), num(f.y(i)), num(left - 8),
                          num(f.y(i) + 4), num(label_size), i)
           << '\n';
    const double step = tick_step(f.end);
    os << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="black"/>)", num(left),
                      num(axis_y), num(right_end), num(axis_y))
       << '\n';
    for (double t = 0; t <= f.end * (1 + 1e-9); t += step)
        os << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="black"/>)"
                          R"(<text x="{0}" y="{3}" text-anchor="middle">{4}</text>)",
                          num(f.x(t)), num(axis_y), num(axis_y + 5), num(axis_y + 18), num(t))
           << '\n';
    os << fmt::format(R"(<text x="{}" y="{}" text-anchor="end">virtual time (t_s = {}, )"
                      R"(t_w = {})</text>)",
                      num(right_end), num(axis_y + 34), num(r.cost.t_s), num(r.cost.t_w))
       << '\n';
}

// Congestion delays: a red bar on the sender's line from the time the
// message wanted to leave to the time it got its links.
void draw_congestion(std::ostream& os, const run_report& r, const timeline_frame& f) {
    for (const auto& c : r.congestion)
        os << fmt::format(R"(<rect class="congestion" x="{}" y="{}" width="{}" height="6" )"
                          R"(fill="#e41a1c" opacity="0.6"><title>message {} -> {} delayed on )"
                          R"(link {} -> {}: wanted t = {}, got t = {}</title></rect>)",
                          num(f.x(c.wanted)), num(f.y(c.source) - 3),
                          num(std::max(1.0, f.x(c.granted) - f.x(c.wanted))), c.source, c.dest,
                          c.from, c.from ^ (1 << c.dim), num(c.wanted), num(c.granted))
           << '\n';
}

// The critical path, wide and pale (local work along its node's line), each
// stretch with the virtual time it accounts for; how many of its stretches
// are messages.
std::size_t draw_critical_path(std::ostream& os, const run_report& r, const timeline_frame& f,
                               const std::vector<critical_step>& crit) {
    std::size_t crit_messages = 0;
    for (const critical_step& c : crit) {
        double x1 = f.x(c.begin), y1 = f.y(c.node), x2 = f.x(c.end), y2 = f.y(c.node);
        if (c.message >= 0) {
            const trace_record& m = r.trace[std::size_t(c.message)];
            x1 = f.x(leaves(r, m)), y1 = f.y(m.from), x2 = f.x(m.arrival), y2 = f.y(m.to);
            ++crit_messages;
        }
        os << fmt::format(R"(<line class="critical" data-begin="{}" data-end="{}" x1="{}" )"
                          R"(y1="{}" x2="{}" y2="{}" stroke="#ffd400" stroke-width="9" )"
                          R"(stroke-linecap="round" opacity="0.7"/>)",
                          num(c.begin), num(c.end), num(x1), num(y1), num(x2), num(y2))
           << '\n';
    }
    return crit_messages;
}

void draw_messages(std::ostream& os, const run_report& r, const timeline_frame& f) {
    for (const auto& m : r.trace)
        os << fmt::format(R"(<line class="msg" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" )"
                          R"(stroke-width="1.6" {}marker-end="{}"><title>{} -> {}{}, step {}, )"
                          R"({} bytes, t = {} .. {}</title></line>)",
                          num(f.x(leaves(r, m))), num(f.y(m.from)), num(f.x(m.arrival)),
                          num(f.y(m.to)), dim_colour(m.dim),
                          m.dim < 0 ? R"(stroke-dasharray="4 3" )" : "", marker_ref(m.dim), m.from,
                          m.to,
                          m.dim < 0 ? std::string(" (routed)") : " on dim " + std::to_string(m.dim),
                          m.step + 1, m.bytes, num(m.start), num(m.arrival))
           << '\n';
}

// The dimensions' colours, routed messages, the critical path of
// crit_messages messages (and local work) and the congestion delays.
void draw_timeline_legend(std::ostream& os, const run_report& r, const timeline_frame& f,
                          std::size_t crit_messages, bool local) {
    double lx = f.left, ly = f.axis_y + 52;
    for (int k = 0; k < r.dim; ++k) {
        os << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" )"
                          R"(stroke-width="2"/><text x="{}" y="{}">dim {}</text>)",
                          num(lx), num(ly), num(lx + 22), num(ly), dim_colour(k), num(lx + 26),
                          num(ly + 4), k);
        lx += 80;
    }
    if (!r.congestion.empty() || r.routed_messages) {
        os << fmt::format(
            R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" )"
            R"(stroke-dasharray="4 3" stroke-width="2"/><text x="{}" y="{}">routed</text>)",
            num(lx), num(ly), num(lx + 22), num(ly), dim_colour(-1), num(lx + 26), num(ly + 4));
        lx += 80;
    }
    ly += 18;
    lx = f.left;
    os << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ffd400" )"
                      R"(stroke-width="9" opacity="0.7"/><text x="{}" y="{}">critical path: )"
                      R"({} message{}{}, adding up to the virtual time {}</text>)",
                      num(lx), num(ly), num(lx + 22), num(ly), num(lx + 30), num(ly + 4),
                      crit_messages, crit_messages == 1 ? "" : "s", local ? " and local work" : "",
                      num(r.virtual_time))
       << '\n';
    const double cx = lx + (local ? 540 : 450);
    os << fmt::format(R"(<rect x="{}" y="{}" width="22" height="6" fill="#e41a1c" )"
                      R"(opacity="0.6"/><text x="{}" y="{}">congestion delay ({} event{})</text>)",
                      num(cx), num(ly - 3), num(cx + 28), num(ly + 4), r.congestion.size(),
                      r.congestion.size() == 1 ? "" : "s")
       << '\n';
}

} // namespace

void write_timeline_svg(const run_report& r, std::ostream& os, timeline_options o) {
    const int p = 1 << r.dim;
    if (p > o.max_nodes)
        throw usage_error("timeline: " + std::to_string(p) +
                          " nodes (d = " + std::to_string(r.dim) + ") are more than the " +
                          std::to_string(o.max_nodes) +
                          " a space-time diagram shows readably; write a trace (--trace "
                          "FILE.json) and open it in Perfetto instead");
    const timeline_frame f = frame_of(r, o);
    os << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" )"
                      R"(viewBox="0 0 {} {}" font-family="sans-serif" font-size="12">)",
                      num(f.width), num(f.height), num(f.width), num(f.height))
       << '\n';
    os << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n';
    os << arrow_markers(r.dim) << '\n';
    if (!o.title.empty())
        os << fmt::format(R"(<text x="{}" y="22" font-size="15" font-weight="bold">{}</text>)",
                          num(f.left), xml(o.title))
           << '\n';
    draw_axes(os, r, f);
    draw_congestion(os, r, f);
    // The critical path under the messages.
    const std::vector<critical_step> crit = critical_path(r);
    const std::size_t crit_messages = draw_critical_path(os, r, f, crit);
    draw_messages(os, r, f);
    draw_timeline_legend(os, r, f, crit_messages, crit_messages < crit.size());
    os << "</svg>\n";
}

} // namespace hcube
