// When a traced message used its sender's port and its links: what the
// timeline, the trace and the critical path read from a run_report.
#pragma once

#include <hcube/report.hpp>

namespace hcube::draw_detail {

// When the message got its links: its start, or for a routed message that
// waited for busy links, the time it was granted them (the congestion event).
inline double leaves(const run_report& r, const trace_record& m) {
    if (m.dim < 0)
        for (const auto& c : r.congestion)
            if (c.source == m.from && c.dest == m.to && c.wanted == m.start) return c.granted;
    return m.start;
}

// t_s + t_w m: how long it held each link (cut-through: arrival - leaves).
inline double duration(const run_report& r, const trace_record& m) {
    return m.arrival - leaves(r, m);
}

// When the sender's port was free again: start + duration, whatever
// congestion did to the arrival.
inline double port_free(const run_report& r, const trace_record& m) {
    return m.start + duration(r, m);
}

} // namespace hcube::draw_detail
