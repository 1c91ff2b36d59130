// What a receive costs in virtual time, direct or routed (docs/runtime.md).
// Private to emu/src.
#pragma once

#include <hcube/config.hpp>

#include "state.hpp"

namespace hcube::detail {

// Charges the receive of a message that arrived at `arrival`. One receive
// port (single-port): it takes messages one at a time, in program order.
// A port per link (all-port): the link's messages were already serialized
// where they entered it (sender's port, or router reservation).
// Forced inline, as are post and take: compiled once per link type, GCC kept
// them out of line and a receive cost ~15% more than when access was one type.
[[gnu::always_inline]] inline void charge_receive(const machine_state& m, node_state& s,
                                                  vclock arrival, vclock dur) {
    if (port_policy_of(m.cfg.ports).port_per_link) {
        s.clock = max(s.clock, arrival);
        return;
    }
    const vclock end = max(arrival - dur, s.recv_port) + dur;
    s.recv_port = end;
    s.clock = max(s.clock, end);
}

} // namespace hcube::detail
