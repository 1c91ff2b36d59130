// The routed primitives' hooks into the rest of the runtime (routed.cpp).
// Private to emu/src.
#pragma once

#include <map>

#include "state.hpp"

namespace hcube::detail {

// When every local node is parked: copies each lent routed payload into its
// message and returns the loan; true if there was one.
bool release_loans(machine_state& m);

// Whether routed traffic has begun in this run, as far as this process knows.
// Asked at every park: the router's own flag where it began here, the backend
// only where nodes move its messages (a backend of several processes).
inline bool routed_in_use(const machine_state& m) {
    return m.routes.used() || (m.polls && m.world->routed_used());
}

// Tells the router node s's least next key (horizon.hpp, next_send_bound), or,
// while it waits for `awaited` not yet placed, no less than its arrival.
void publish_routed_bound(machine_state& m, node_state& s, const routed_message* awaited);

// A node's unread routed messages and bytes by source, in source order.
std::map<int, link_backlog> routed_backlog(node_state& s);

} // namespace hcube::detail
