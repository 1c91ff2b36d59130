// write_chrome_trace: the Trace Event Format (the JSON Perfetto and
// chrome://tracing read): "X" slices on one thread per node, "s"/"f" flow
// events for the messages, metadata naming the time axis.
#include <hcube/draw.hpp>

#include <algorithm>
#include <ostream>

#include <nlohmann/json.hpp>

namespace hcube {

namespace {

using json = nlohmann::json;

// Virtual time unit drawn as 1 ms (ts is in microseconds), so that t_s = 1
// shows as "1 ms" and the shortest slice (kept visible) as 1 us.
constexpr double virtual_scale = 1000;
constexpr double min_slice_us = 1;

struct slice {
    double begin = 0, end = 0; // microseconds on the trace's axis
};

// Each node's calls laid end to end in call order: a call's slice starts no
// earlier than the previous one ended (single-port sends queue on the port),
// so the slices of a track nest, as the format needs.
std::vector<slice> slices(const run_report& r, trace_clock clock) {
    std::vector<double> sent_until(r.calls.size(), 0);
    for (const auto& t : r.trace)
        if (t.send_call >= 0)
            sent_until[std::size_t(t.send_call)] =
                std::max(sent_until[std::size_t(t.send_call)], t.dim < 0 ? t.start : t.arrival);
    std::vector<slice> out(r.calls.size());
    double cursor = 0;
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
        const call_record& c = r.calls[i];
        if (i == 0 || c.node != r.calls[i - 1].node) cursor = 0;
        double b, e;
        if (clock == trace_clock::virtual_time) {
            b = c.start * virtual_scale;
            e = std::max(c.end, sent_until[i]) * virtual_scale;
        } else {
            b = double(c.wall_start) / 1000;
            e = double(c.wall_end) / 1000;
        }
        b = std::max(b, cursor);
        e = std::max(e, b + min_slice_us);
        out[i] = {b, e};
        cursor = e;
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

} // namespace

void write_chrome_trace(const run_report& r, std::ostream& os, trace_options o) {
    if (r.calls.empty() && !r.trace.empty())
        throw usage_error("write_chrome_trace: the report has messages but no calls; run "
                          "with config::trace set");
    const int p = 1 << r.dim;
    const bool virt = o.clock == trace_clock::virtual_time;
    const std::vector<slice> sl = slices(r, o.clock);

    std::vector<std::uint64_t> sent(r.calls.size()), received(r.calls.size());
    std::vector<std::int64_t> messages(r.calls.size());
    for (const auto& t : r.trace) {
        if (t.send_call >= 0) sent[std::size_t(t.send_call)] += t.bytes;
        if (t.recv_call >= 0) received[std::size_t(t.recv_call)] += t.bytes;
    }

    json events = json::array();
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", 0},
                      {"args",
                       {{"name", "hcube " + std::to_string(r.dim) + "-cube, " +
                                     std::string(to_string(r.ports))}}}});
    for (int i = 0; i < p; ++i) {
        events.push_back({{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", 0},
                          {"tid", i},
                          {"args", {{"name", "node " + std::to_string(i)}}}});
        events.push_back({{"ph", "M"},
                          {"name", "thread_sort_index"},
                          {"pid", 0},
                          {"tid", i},
                          {"args", {{"sort_index", i}}}});
    }
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
        const call_record& c = r.calls[i];
        json args = {{"step", c.step},
                     {"bytes_sent", sent[i]},
                     {"bytes_received", received[i]},
                     {"virtual_start", c.start},
                     {"virtual_end", c.end}};
        if (c.dim >= 0) args["link"] = c.dim;
        if (c.peer >= 0) args["peer"] = c.peer;
        events.push_back({{"ph", "X"},
                          {"cat", "primitive"},
                          {"name", call_name(c)},
                          {"pid", 0},
                          {"tid", c.node},
                          {"ts", sl[i].begin},
                          {"dur", sl[i].end - sl[i].begin},
                          {"args", std::move(args)}});
    }
    // One flow per message: from the middle of the sending call's slice to the
    // middle of the receiving call's (a flow binds to the slice enclosing it).
    for (std::size_t id = 0; id < r.trace.size(); ++id) {
        const trace_record& t = r.trace[id];
        if (t.send_call < 0 || t.recv_call < 0) continue;
        const slice& a = sl[std::size_t(t.send_call)];
        const slice& b = sl[std::size_t(t.recv_call)];
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
                          {"tid", t.from},
                          {"ts", (a.begin + a.end) / 2},
                          {"args", args}});
        events.push_back({{"ph", "f"},
                          {"bp", "e"},
                          {"cat", "message"},
                          {"name", name},
                          {"id", id},
                          {"pid", 0},
                          {"tid", t.to},
                          {"ts", (b.begin + b.end) / 2},
                          {"args", std::move(args)}});
    }
    json doc = {
        {"traceEvents", std::move(events)},
        {"displayTimeUnit", "ms"},
        {"otherData",
         {{"time_axis", virt ? "virtual" : "wall"},
          {"time_unit", virt ? "1 virtual time unit (t_s = " + std::to_string(r.cost.t_s) +
                                   ", t_w = " + std::to_string(r.cost.t_w) +
                                   ") is drawn as 1 ms; slices of one node are laid end to end"
                             : "wall clock of the emulation, from the run's start"},
          {"dim", r.dim},
          {"ports", std::string(to_string(r.ports))},
          {"virtual_time", r.virtual_time},
          {"steps", r.steps},
          {"wall_seconds", r.wall_seconds},
          {"messages", r.trace.size()}}}};
    os << doc.dump(1) << '\n';
}

} // namespace hcube
