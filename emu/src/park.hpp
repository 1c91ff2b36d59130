// Waiting: the doorbell protocol every blocking primitive goes through, and
// the two points where the rest of the runtime joins it (the hooks below,
// horizon.cpp): a node about to park, and the node whose park or finish left
// no node active. Private to emu/src.
#pragma once

#include <chrono>
#include <string>

#include "state.hpp"

namespace hcube::detail {

// Spin budget when every thread has a core (then the executor's yields,
// executor.hpp, before parking).
constexpr int spin_rounds = 4000;
// Over MPI a waiting node first moves messages between ranks itself (each
// round one MPI probe, or a yield while another thread is at it): in a
// one-node-per-rank job the caller of run() would otherwise relay every
// message with a thread hand-off on each side.
constexpr int network_rounds = 2000;

inline void throw_if_cancelled(const machine_state& m) {
    if (m.cancelled.load(std::memory_order_acquire)) throw run_cancelled{};
}

// A node that failed its last re-check and is about to park publishes what
// others may need while it sleeps: its horizon bound, its routed bound.
void about_to_park(machine_state& m, node_state& s);
// Called by the node whose park or finish left no local node active: when all
// of them really are parked, a decision nobody can make alone is made here
// (lent payloads buffered, a choice or a routed placement forced).
void last_parked(machine_state& m);

// A rank's only node, run by the caller of run() (state.hpp, inline_node):
// nobody else moves its messages, so it never parks; after
// config::mpi_quiet_limit with nothing moving it ends the job, as the caller's
// watchdog does for parked nodes (machine.cpp).
template <class Ready>
inline void wait_moving(machine_state& m, node_state& s, Ready ready, wait_info info) {
    struct waiting_flag { // the backend's forced placements ask (mpi.cpp)
        bool& on;
        explicit waiting_flag(bool& b)
            : on(b) {
            on = true;
        }
        ~waiting_flag() { on = false; }
    } flag(m.inline_waiting);
    s.waiting_for = info; // for the backend's statuses (a chooser's candidate)
    auto quiet_since = std::chrono::steady_clock::now();
    for (idle_backoff idle; !ready();) {
        throw_if_cancelled(m);
        if (m.net->progress()) {
            idle.reset();
            quiet_since = std::chrono::steady_clock::now();
            continue;
        }
        idle.pause();
        if (std::chrono::steady_clock::now() - quiet_since >= m.cfg.mpi_quiet_limit)
            m.net->abort("every node of this rank stayed blocked for " +
                         std::to_string(m.cfg.mpi_quiet_limit.count()) +
                         " ms with no message moving (config::mpi_quiet_limit); a deadlock "
                         "across ranks?\n  node " +
                         std::to_string(&s - m.nodes.get()) + ": " +
                         describe_wait(m.cfg.dim, info));
    }
}

// Blocks until ready() holds: a bounded spin (only when nodes have a core
// each), a few yields, then park on the doorbell (the executor's park).
//
// Parking protocol (a Dekker pair with machine_state::wake): the waiter stores
// waiting = the events that can end its wait (ended_by), passes the park
// barrier, re-checks ready(); a waker publishes its data, passes its barrier,
// loads waiting (state.hpp: both barriers are fences, or the parker's is a
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
    if (m.net) {
        if (m.inline_node) return wait_moving(m, s, ready, info);
        for (int i = 0; i < network_rounds; ++i) {
            throw_if_cancelled(m);
            if (!m.net->progress()) m.exec->yield();
            if (ready()) return;
        }
    }
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
        m.park_barrier();
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
        if (m.deactivate(s)) last_parked(m);
        m.exec->park(s, seq);
        // Unless a waker claimed the wait and counted us (cancel and spurious
        // wake-ups do not).
        if (s.waiting.exchange(0, std::memory_order_acquire)) m.activate(s);
        s.parked.store(false, std::memory_order_relaxed);
        if (ready()) return;
    }
}

} // namespace hcube::detail
