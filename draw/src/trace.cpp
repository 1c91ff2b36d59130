// write_chrome_trace: the Trace Event Format (the JSON Perfetto and
// chrome://tracing read): "X" slices on one thread per node, "s"/"f" flow
// events for the messages, metadata naming the time axis.
#include <hcube/draw.hpp>

#include <algorithm>
#include <ostream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "message_times.hpp"

namespace hcube {

namespace {

using json = nlohmann::json;

// Virtual time unit drawn as 1 ms (ts is in microseconds), so that t_s = 1
// shows as "1 ms" and the shortest slice (kept visible) as 1 us.
constexpr double virtual_scale = 1000;
constexpr double min_slice_us = 1;

struct slice {
    double begin = 0, end = 0; // microseconds on the trace's axis
    double virtual_begin = 0, virtual_end = 0;
    int lane = 0; // 0: the node's track; more: a track beside it for overlapping calls
};

bool sends(call_kind k) {
    return k == call_kind::send || k == call_kind::send_routed;
}

// Each call's slice: a send from its message's start to when its port was
// free again (draw_detail::port_free), any other call from the node's clock
// when it began to when it returned (and its sends' ports were free). On the
// virtual axis calls can overlap (a send's port is busy while the node goes
// on to its next call; all-port sends at once): a slice that would overlap
// its track's last goes to a track beside it, unless the overlap is less
// than the shortest slice (zero-length calls), which moves it right.
std::vector<slice> slices(const run_report& r, trace_clock clock) {
    std::vector<slice> out(r.calls.size());
    std::vector<bool> sent(r.calls.size());
    for (std::size_t i = 0; i < r.calls.size(); ++i)
        out[i].virtual_begin = r.calls[i].start, out[i].virtual_end = r.calls[i].end;
    for (const auto& t : r.trace) {
        if (t.send_call < 0) continue;
        slice& s = out[std::size_t(t.send_call)];
        const double free = draw_detail::port_free(r, t);
        if (sends(r.calls[std::size_t(t.send_call)].kind)) {
            s.virtual_begin =
                sent[std::size_t(t.send_call)] ? std::min(s.virtual_begin, t.start) : t.start;
            s.virtual_end = sent[std::size_t(t.send_call)] ? std::max(s.virtual_end, free) : free;
            sent[std::size_t(t.send_call)] = true;
        } else {
            s.virtual_end = std::max(s.virtual_end, free);
        }
    }
    std::vector<std::size_t> order(r.calls.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    const auto begin_of = [&](std::size_t i) {
        return clock == trace_clock::virtual_time ? out[i].virtual_begin * virtual_scale
                                                  : double(r.calls[i].wall_start) / 1000;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::pair(r.calls[a].node, begin_of(a)) < std::pair(r.calls[b].node, begin_of(b));
    });
    std::vector<double> lanes; // per track of the current node: where its last slice ends
    for (std::size_t n = 0; n < order.size(); ++n) {
        const std::size_t i = order[n];
        if (n == 0 || r.calls[i].node != r.calls[order[n - 1]].node) lanes.clear();
        slice& s = out[i];
        double b = begin_of(i);
        double e = clock == trace_clock::virtual_time ? s.virtual_end * virtual_scale
                                                      : double(r.calls[i].wall_end) / 1000;
        std::size_t lane = 0;
        while (lane < lanes.size() && lanes[lane] > b + min_slice_us)
            ++lane;
        if (lane == lanes.size()) lanes.push_back(b);
        const double shift = std::max(0.0, lanes[lane] - b);
        b += shift, e = std::max(e + shift, b + min_slice_us);
        s.begin = b, s.end = e, s.lane = int(lane);
        lanes[lane] = e;
    }
    return out;
}

std::string call_name(const call_record& c) {
    std::string name(to_string(c.kind));
    if (c.dim >= 0) name += " dim " + std::to_string(c.dim);
    if (c.peer >= 0)
        name += (c.kind == call_kind::send || c.kind == call_kind::send_routed)
                    ? " to " + std::to_string(c.peer)
                    : " with " + std::to_string(c.peer);
    return name;
}

// The trace's tracks: a track per node, and beside it the tracks its
// overlapping calls need (tid lane * p + node).
struct tracks {
    int p, lanes;
    const std::vector<slice>& sl;
    const run_report& r;
    int tid(std::size_t call) const { return sl[call].lane * p + r.calls[call].node; }
};

// The process's name and every used track's name and order.
void add_track_names(json& events, const tracks& t) {
    const run_report& r = t.r;
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", 0},
                      {"args",
                       {{"name", "hcube " + std::to_string(r.dim) + "-cube, " +
                                     std::string(to_string(r.ports))}}}});
    std::vector<bool> used(std::size_t(t.lanes * t.p));
    for (int i = 0; i < t.p; ++i)
        used[std::size_t(i)] = true;
    for (std::size_t i = 0; i < r.calls.size(); ++i)
        used[std::size_t(t.tid(i))] = true;
    for (int tid = 0; tid < t.lanes * t.p; ++tid) {
        if (!used[std::size_t(tid)]) continue;
        const int node = tid % t.p, lane = tid / t.p;
        events.push_back(
            {{"ph", "M"},
             {"name", "thread_name"},
             {"pid", 0},
             {"tid", tid},
             {"args",
              {{"name", "node " + std::to_string(node) + (lane ? " (overlapping calls)" : "")}}}});
        events.push_back({{"ph", "M"},
                          {"name", "thread_sort_index"},
                          {"pid", 0},
                          {"tid", tid},
                          {"args", {{"sort_index", node * t.lanes + lane}}}});
    }
}

// A slice per call, with its link, peer, bytes, step and virtual times.
void add_call_slices(json& events, const tracks& t) {
    const run_report& r = t.r;
    std::vector<std::uint64_t> sent(r.calls.size()), received(r.calls.size());
    for (const auto& m : r.trace) {
        if (m.send_call >= 0) sent[std::size_t(m.send_call)] += m.bytes;
        if (m.recv_call >= 0) received[std::size_t(m.recv_call)] += m.bytes;
    }
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
        const call_record& c = r.calls[i];
        json args = {{"step", c.step},
                     {"bytes_sent", sent[i]},
                     {"bytes_received", received[i]},
                     {"virtual_start", t.sl[i].virtual_begin},
                     {"virtual_end", t.sl[i].virtual_end}};
        if (c.dim >= 0) args["link"] = c.dim;
        if (c.peer >= 0) args["peer"] = c.peer;
        events.push_back({{"ph", "X"},
                          {"cat", "primitive"},
                          {"name", call_name(c)},
                          {"pid", 0},
                          {"tid", t.tid(i)},
                          {"ts", t.sl[i].begin},
                          {"dur", t.sl[i].end - t.sl[i].begin},
                          {"args", std::move(args)}});
    }
}

// One flow per message, forward in time: from the start of the sending
// call's slice to the end of the receiving call's, where the message has
// arrived (a little inside it: a flow binds to the slice enclosing it).
void add_message_flows(json& events, const tracks& tr) {
    const run_report& r = tr.r;
    for (std::size_t id = 0; id < r.trace.size(); ++id) {
        const trace_record& t = r.trace[id];
        if (t.send_call < 0 || t.recv_call < 0) continue;
        const slice& a = tr.sl[std::size_t(t.send_call)];
        const slice& b = tr.sl[std::size_t(t.recv_call)];
        const std::string name =
            t.dim < 0 ? "routed message" : "message on dim " + std::to_string(t.dim);
        json args = {{"from", t.from},           {"to", t.to},
                     {"bytes", t.bytes},         {"step", t.step},
                     {"virtual_start", t.start}, {"virtual_arrival", t.arrival}};
        events.push_back({{"ph", "s"},
                          {"cat", "message"},
                          {"name", name},
                          {"id", id},
                          {"pid", 0},
                          {"tid", tr.tid(std::size_t(t.send_call))},
                          {"ts", a.begin},
                          {"args", args}});
        events.push_back({{"ph", "f"},
                          {"bp", "e"},
                          {"cat", "message"},
                          {"name", name},
                          {"id", id},
                          {"pid", 0},
                          {"tid", tr.tid(std::size_t(t.recv_call))},
                          {"ts", std::max(a.begin, b.end - std::min(0.5, (b.end - b.begin) / 2))},
                          {"args", std::move(args)}});
    }
}

// What the trace's time axis is, and the run's figures.
json run_facts(const run_report& r, trace_clock clock) {
    const bool virt = clock == trace_clock::virtual_time;
    return {{"time_axis", virt ? "virtual" : "wall"},
            {"time_unit",
             virt ? fmt::format("1 virtual time unit (t_s = {:g}, t_w = {:g}) is drawn as 1 ms; a "
                                "send lasts while its port is busy, so calls of one node can "
                                "overlap and go to a track beside it",
                                r.cost.t_s, r.cost.t_w)
                  : "wall clock of the emulation, from the run's start"},
            {"dim", r.dim},
            {"ports", std::string(to_string(r.ports))},
            {"virtual_time", r.virtual_time},
            {"steps", r.steps},
            {"wall_seconds", r.wall_seconds},
            {"messages", r.trace.size()}};
}

} // namespace

void write_chrome_trace(const run_report& r, std::ostream& os, trace_options o) {
    if (r.calls.empty() && !r.trace.empty())
        throw usage_error("write_chrome_trace: the report has messages but no calls; run "
                          "with config::trace set");
    const std::vector<slice> sl = slices(r, o.clock);
    int lanes = 1;
    for (const slice& s : sl)
        lanes = std::max(lanes, s.lane + 1);
    const tracks t{1 << r.dim, lanes, sl, r};
    json events = json::array();
    add_track_names(events, t);
    add_call_slices(events, t);
    add_message_flows(events, t);
    json doc = {{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData", run_facts(r, o.clock)}};
    os << doc.dump(1) << '\n';
}

} // namespace hcube
