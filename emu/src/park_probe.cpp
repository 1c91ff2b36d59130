// detail::parks_of and detail::set_decider_hook (node.hpp): the parking
// protocol's own count, for tests that check who wakes a node without asking
// the kernel, and a stall before a decision for the parked.
#include <hcube/node.hpp>

#include "park.hpp"
#include "state.hpp"

std::atomic<void (*)()> hcube::detail::decider_hook{nullptr};

void hcube::detail::set_decider_hook(void (*hook)()) noexcept {
    decider_hook.store(hook, std::memory_order_relaxed);
}

hcube::detail::park_count hcube::detail::parks_of(const node& me, int id) noexcept {
    const node_state& s = me.m_->nodes[id];
    return {s.park_epoch.load(std::memory_order_relaxed), s.parked_unrung()};
}
