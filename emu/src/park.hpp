// Waiting: the doorbell protocol every blocking primitive goes through, and
// the two points where the rest of the runtime joins it (the hooks below,
// horizon.cpp): a node about to park, and the node whose park or finish left
// no node active. Private to emu/src.
#pragma once

#include <vector>

#include "state.hpp"

namespace hcube::detail {

// Spin budget when every thread has a core (then the executor's yields,
// executor.hpp, before parking).
constexpr int spin_rounds = 4000;

inline void throw_if_cancelled(const machine_state& m) {
    if (m.cancelled.load(std::memory_order_acquire)) throw run_cancelled{};
}

// n parks or finishes: true if it was the last active node.
inline bool deactivate(const machine_state& m, const node_state& n) noexcept {
    return n.group->count.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
           m.active.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

// n is active again (woken, or back from a spurious park).
inline void activate(const machine_state& m, const node_state& n) noexcept {
    if (n.group->count.fetch_add(1, std::memory_order_relaxed) == 0)
        m.active.fetch_add(1, std::memory_order_relaxed);
}

// Wakes `n` if it is about to park or parked on a wait that `event` can end.
// Call after publishing whatever it waits for; the barrier pairs with
// park_barrier in wait_until. `by`: the waking node, if a node wakes; when
// it shares n's thread, program order already makes the pair, and the fence
// (tens of cycles, most wakes of a fibers run) is left out.
inline void wake(const machine_state& m, node_state& n, wake_event event = wake_event::any,
                 const node_state* by = nullptr) noexcept {
    if (m.asymmetric || (m.group_thread && by && by->group == n.group))
        std::atomic_signal_fence(std::memory_order_seq_cst);
    else
        std::atomic_thread_fence(std::memory_order_seq_cst);
    // The waker that claims the wait (exchange) counts the node active again
    // before it rings, so the machine never looks all parked while a woken
    // node has yet to run (horizon.cpp, last_parked); others need not ring,
    // the bell has changed. It counts the node before it claims: a node that
    // finds its wait claimed takes that count as its own (wait_until) and may
    // park again at once, so the count must already be there, or its group
    // could drop to zero under it and `active` drift for good.
    if (!(n.waiting.load(std::memory_order_relaxed) & std::uint8_t(event))) return;
    activate(m, n);
    if (n.waiting.exchange(0, std::memory_order_acq_rel)) {
        n.bell.fetch_add(1, std::memory_order_seq_cst);
        m.exec->unpark(n);
    } else {
        // Claimed by another waker, or ended by the node itself: the count
        // goes back, as activate's exact inverse (the node counts itself).
        (void)deactivate(m, n);
    }
}

// Wakes every node in `ids` (the destinations of routed messages the router
// just placed; those in other processes through the backend) and empties it.
inline void wake_each(const machine_state& m, std::vector<int>& ids) noexcept {
    for (const int n : ids)
        if (m.is_local(n))
            wake(m, m.nodes[n]);
        else
            m.world->placed_remote(n);
    ids.clear();
}

// The parker's half of the barrier pair, between waiting = true and the final
// re-check.
inline void park_barrier(const machine_state& m) noexcept {
    if (m.asymmetric)
        heavy_barrier();
    else
        std::atomic_thread_fence(std::memory_order_seq_cst);
}

// A node that failed its last re-check and is about to park publishes what
// others may need while it sleeps: its horizon bound, its routed bound.
void about_to_park(machine_state& m, node_state& s);
// Called by the node whose park or finish left no local node active: when all
// of them really are parked, a decision nobody can make alone is made here
// (lent payloads buffered, a choice or a routed placement forced); true if one
// was. The deadlock watchdog calls it too (watchdog.hpp).
bool last_parked(machine_state& m);
// Run by last_parked before it decides (set_decider_hook, node.hpp).
extern std::atomic<void (*)()> decider_hook;

// Blocks until ready() holds: a bounded spin (only when nodes have a core
// each), a few yields, then park on the doorbell (the executor's park).
//
// Parking protocol (a Dekker pair with wake): the waiter stores
// waiting = the events that can end its wait (ended_by), passes the park
// barrier, re-checks ready(); a waker publishes its data, passes its barrier,
// loads waiting (sys/barrier.hpp: both barriers are fences, or the parker's is a
// membarrier and the waker's free). At least one of them sees the other's
// store, so either the re-check succeeds or the waker rings the bell, if its
// event is one of those: no other can make this ready() true. The bell value
// is read before the re-check, so a ring between re-check and futex wait makes
// the wait return. A chooser's ready() (horizon.hpp) can also turn true when
// another node's bound rises, which rings nothing: the last node to park
// decides for it instead.
//
// `info` travels by value (two words, in registers): a parked fiber keeps
// every frame of its wait on its stack, and with thousands of fibers those
// lines have left the caches by its next step.
template <class Ready>
inline void wait_until(machine_state& m, node_state& s, Ready ready, wait_info info) {
    if (ready()) return;
    if (m.polls && m.world->wait_polling(s, ready_ref(ready), info)) return;
    if (m.spin) {
        for (int i = 0; i < spin_rounds; ++i) {
            cpu_relax();
            if (ready()) return;
        }
    }
    for (int i = 0; i < m.yields; ++i) {
        throw_if_cancelled(m);
        m.exec->yield();
        if (ready()) return;
    }
    for (;;) {
        // The bell before the cancel flag: cancel() raises the flag and then
        // rings. Checked the other way round, a cancel between the two loads
        // went unseen and its ring was already in seq, so the park below slept
        // through it and the run hung (one in ~50000 failing runs of a 1-cube
        // with fibers). Now either seq predates the ring (the park returns at
        // once) or this acquire load synchronizes with it and sees the flag.
        const std::uint32_t seq = s.bell.load(std::memory_order_acquire);
        throw_if_cancelled(m);
        s.waiting.store(std::uint8_t(ended_by(info.kind)), std::memory_order_relaxed);
        park_barrier(m);
        if (ready()) {
            // A waker that claimed this wait counted us active a second time
            // (before its claim, which this acquire sees). Not its group's
            // last: we count ourselves too.
            if (!s.waiting.exchange(0, std::memory_order_acquire))
                s.group->count.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        // Published for the deadlock watchdog only after the re-check failed:
        // from here on, only a ring (which changes the bell) can wake us.
        s.waiting_for = info;
        s.parked_bell.store(seq, std::memory_order_relaxed);
        s.park_epoch.fetch_add(1, std::memory_order_relaxed);
        s.parked.store(true, std::memory_order_release);
        about_to_park(m, s);
        if (deactivate(m, s)) last_parked(m);
        m.exec->park(s, seq);
        // Unless a waker claimed the wait and counted us (cancel and spurious
        // wake-ups do not).
        if (s.waiting.exchange(0, std::memory_order_acquire)) activate(m, s);
        s.parked.store(false, std::memory_order_relaxed);
        if (ready()) return;
    }
}

} // namespace hcube::detail
