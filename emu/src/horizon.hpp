// The virtual-time horizon: how a node that may take one of several messages
// (recv_any; recv_routed from any_source) chooses by virtual time alone,
// whatever order the OS scheduler delivered them in. Private to emu/src.
//
// A choosing node takes the message with the least virtual arrival, the lower
// link (or source) on a tie, and commits only when no other source can still
// deliver an earlier one. This is a conservative simulation, as the router's
// (router.hpp), and the two share one lower bound per node:
//
//   next_send   no send of this node starts before it: max(clock, earliest
//               free send port), published whenever the node parks, so all
//               are current once all are parked; +infinity once it finished.
//               Clocks only grow, so a stale bound is a bound.
//
// A message on an empty link j can arrive no earlier than next_send of j's
// sender plus t_s (the least duration of any message), and a routed message
// no earlier than the least bound or queued key anywhere else in the router
// plus t_s. When those pass the candidate, the node takes it at once.
//
// Otherwise it parks with its candidate published. A rising bound does not
// wake it: when every local node is parked, no bound can rise any more, and
// the node that parked last (last_parked) first tells a chooser whose
// candidate the bounds now prove least to take it. Only when none is proved
// does it decide for the chooser with the least candidate (then the lower
// node id), unless a routed message that wants to start earlier is still
// unplaced (the router places that first). Proved choices are the program's
// own whenever they are made, so every run reaches the same all-parked
// states; a forced choice is made only there, so the decisions are those of
// the program alone, even when a sender blocked on a full link could still
// send an earlier message (then the forced one is not least, but the same in
// every run).
//
//   choose: bounds, then links --safe--> take
//                              \--not yet--> publish candidate, park
//   last_parked: all parked --> one proved now? --> it takes its own
//                                        \--none--> least forced --> it takes it
#pragma once

#include <bit>
#include <limits>

#include "state.hpp"

namespace hcube::detail {

// A node's least next send start: max(clock, its earliest free send port).
// Under the all-port model a send on one port leaves the others as they were,
// so the bound after it is not that port's new time.
inline vclock next_send_bound(const node_state& s) noexcept {
    vclock port = s.send_port.front();
    for (const vclock& q : s.send_port)
        port = {std::min(port.time, q.time), std::min(port.steps, q.steps)};
    return max(s.clock, port);
}

// The first choice of a run: from now on the last node to park decides for
// choosers (and a backend of several processes decides for the job's
// choosers when all are idle).
inline void begin_choosing(machine_state& m) {
    if (m.choosing.load(std::memory_order_relaxed)) return;
    m.choosing.store(true, std::memory_order_relaxed);
    m.world->start_choosing();
}

// The local choosers' least candidate (then the lower node), or -1. Only
// while every local node is parked, finished or waiting in the backend
// (backend::caller_runs_node).
int least_chooser(const machine_state& m);
// Tells node n to take its candidate of choice `number` (it is waiting to
// choose; a word for a choice it has made by itself meanwhile is ignored).
void force_choice(machine_state& m, node_state& n, std::uint64_t number);
inline void force_choice(machine_state& m, node_state& n) {
    force_choice(m, n, n.pending_choice.number());
}

// The least virtual duration of any message: a lookahead of t_s.
inline double least_duration(const machine_state& m) noexcept {
    return m.message_duration(0, 1).time;
}

// Node n sends nothing before this: its bound, +infinity once it is done
// (another rank's node: the bound its rank last told, else 0).
inline double send_bound(const node_state& n) noexcept {
    const double bound = n.next_send.load(std::memory_order_acquire);
    if (n.done.load(std::memory_order_acquire)) return std::numeric_limits<double>::infinity();
    return bound;
}

// No message from node `from` arrives before this.
inline double earliest_from(const machine_state& m, int from) noexcept {
    return send_bound(m.nodes[from]) + least_duration(m);
}

// A choice is made: no candidate is left published, so a published one
// always belongs to a node still choosing (least_chooser reads no other
// state of a node that may be running), and a late word names a past choice.
inline int decided(node_state& s, int from) {
    s.pending_choice.next();
    return from;
}

// Whether `best` is the least message a recv_any can still get: no link in
// `open` (bit j: link j was empty, later messages on the others come after
// their first) can bring an earlier one. `earliest(j)`: no message on link j
// arrives before it (earliest_from).
template <class Earliest>
bool least_of_open(choice best, std::uint32_t open, Earliest earliest) {
    static_assert(max_dim <= 32);
    for (; open != 0; open &= open - 1) {
        const int j = std::countr_zero(open);
        if (!(best < choice{earliest(j), j})) return false;
    }
    return true;
}

// recv_any's decision: the link to take from now, or -1 (then its candidate
// and open links are published in s.pending_choice). `arrival_on(j)`: the
// virtual arrival time of link j's first message, +infinity while it is empty.
template <class ArrivalOn>
int choose_link(machine_state& m, node_state& s, int id, ArrivalOn arrival_on) {
    const int d = m.cfg.dim;
    // Bounds before links: a message sent before its sender published the
    // bound read here is then seen on its link.
    double earliest[max_dim];
    for (int j = 0; j < d; ++j)
        earliest[j] = earliest_from(m, id ^ (1 << j));
    choice best;
    std::uint32_t open = 0;
    for (int j = 0; j < d; ++j) {
        const double a = arrival_on(j);
        if (a != std::numeric_limits<double>::infinity())
            best = std::min(best, choice{a, j});
        else
            open |= 1u << j;
    }
    s.pending_choice.store_link(best, open);
    if (best.from < 0) return -1;
    if (!s.pending_choice.told() && !least_of_open(best, open, [&](int j) { return earliest[j]; }))
        return -1;
    return decided(s, best.from);
}

// recv_routed from any_source's decision: the source to take from now, or -1
// (then its candidate is published in s.pending_choice).
int choose_source(machine_state& m, node_state& s, int id);

// Tells the first local chooser whose candidate the bounds now prove least to
// take it; false if none is. Only while every local node is parked
// (last_parked; a backend of several processes, at its quiescence waves).
bool release_proved_choices(machine_state& m);

} // namespace hcube::detail
