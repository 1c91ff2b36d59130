// detail::parks_of (node.hpp): the parking protocol's own count, for tests
// that check who wakes a node without asking the kernel.
#include <hcube/node.hpp>

#include "state.hpp"

hcube::detail::park_count hcube::detail::parks_of(const node& me, int id) noexcept {
    const node_state& s = me.m_->nodes[id];
    return {s.park_epoch.load(std::memory_order_relaxed), s.parked_unrung()};
}
