// The E-cube router (seed 000, 4.5.3 and 4.6): routed messages, their
// congestion, resolved in virtual-time order. Private to emu/src.
//
// A routed message from src wants to start at w = max(clock, port) and holds
// every link of its E-cube path for t_s + t_w m from the earliest g >= w at
// which all of them are free (cut-through). Which of two messages that want one
// link at overlapping times goes first must depend on the program only, so
// messages are placed in the order of their key (w, src, seq), seq counting the
// source's routed sends: earlier virtual start first, the lower source on a tie.
// This is a conservative simulation. A message may be placed only when no node
// can still send one with a smaller key, and each node publishes a lower bound
// on the keys it can still send:
//
//   running or parked   max(clock, earliest free send port)   clocks only grow
//   waiting in recv_routed for a message m not yet placed
//                       m.w + m.duration: it cannot send before m arrives
//   finished            +infinity
//
// A stale bound is still a bound, so nodes publish only when it is cheap: when
// they send routed, start waiting for a routed message, park, or finish. The
// bounds sit in a min-tree; the pending messages in a heap; every publish
// places the heap's head while its key is below the tree's minimum.
//
// When every node is parked and something is still pending, no bound can rise
// any more: the node that parked last places the head anyway (force()), and
// again until a placement wakes someone. The result is still a function of the
// program (the parked state is), but a node that was blocked on a full link,
// not on a message, might later send with a smaller key; with the default link
// capacity only programs that fill a link hit this.
//
// Both clocks of a vclock run this independently (domain 0: time under the cost
// model; domain 1: steps, every message one step), so the report's steps are
// the same critical path as its virtual time at t_s = 1, t_w = 0, congestion
// included.
//
// Placed intervals that end before the last placed start can never matter
// again and are dropped, so memory follows the messages in flight, not the
// history. One lock guards it all: routed traffic is for teaching and
// correctness, not the fast path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <queue>
#include <vector>

#include <hcube/report.hpp>

#include "link.hpp"

namespace hcube::detail {

// A routed message from send_routed until recv_routed takes it. It lives in its
// destination's inbox (a deque: the address is stable while it is pending).
struct routed_message {
    int source = 0;
    int dest = 0;
    std::uint64_t seq = 0;          // the source's routed sends before this one
    vclock wanted;                  // start before congestion
    vclock duration;                // t_s + t_w m on both clocks
    vclock arrival;                 // set when placed in both domains
    std::size_t trace = 0;          // index of the sender's trace record, if tracing
    int unplaced = 2;               // domains still to place it (router lock)
    std::atomic<bool> ready{false}; // placed in both: arrival is final (release)
    std::size_t elem = 0;
    std::vector<unsigned char> data;
};

class router {
public:
    // A run starts: nothing pending, every bound (0, node, 0).
    void reset(int p, int dim, bool trace);

    // The calls below take the lock. Those that place messages append the
    // destinations to wake to `woken`.

    // Counts a new message on its path and queues it; `bound` is the sender's
    // new lower bound (its next seq is msg.seq + 1).
    void submit(routed_message& msg, vclock bound, std::vector<int>& woken);
    // Node `id` (next seq `seq`) can send nothing below `bound` from now on.
    void publish(int id, std::uint64_t seq, vclock bound, std::vector<int>& woken);
    // Node `id` finished: it sends nothing more.
    void finish(int id, std::vector<int>& woken);
    // Every unfinished node is parked: place the head of each domain's queue.
    // False when nothing was pending.
    bool force(std::vector<int>& woken);

    // After the run (no lock needed then).
    std::uint64_t messages() const noexcept { return messages_; }
    const std::vector<link_stats>& traffic() const noexcept { return traffic_; }
    const std::vector<congestion_event>& congestion() const noexcept { return congestion_; }
    // (sender, trace index, arrival time) of every placed message, for the trace.
    struct trace_fix {
        int node;
        std::size_t index;
        double arrival;
    };
    const std::vector<trace_fix>& trace_fixes() const noexcept { return fixes_; }
    bool used() const noexcept { return used_.load(std::memory_order_relaxed); }

private:
    struct key {
        double t;
        int node;
        std::uint64_t seq;
        friend bool operator<(const key& a, const key& b) noexcept {
            if (a.t != b.t) return a.t < b.t;
            if (a.node != b.node) return a.node < b.node;
            return a.seq < b.seq;
        }
    };
    struct interval {
        double begin, end;
    };
    struct pending {
        key k;
        routed_message* msg;
        friend bool operator<(const pending& a, const pending& b) noexcept {
            return b.k < a.k; // std::priority_queue is a max-heap
        }
    };
    struct domain {
        std::priority_queue<pending> queue;
        std::vector<key> bounds;                 // min-tree: leaves at [p, 2p)
        std::vector<std::vector<interval>> busy; // per link, sorted, disjoint
        double frontier = 0;                     // start of the last placed message
    };

    void raise(domain& dm, int id, key k);
    void drain(std::vector<int>& woken);
    void place(int which, routed_message& msg, std::vector<int>& woken);

    std::mutex mu_;
    int p_ = 1, dim_ = 0;
    bool trace_ = false;
    domain dom_[2];
    std::atomic<bool> used_{false};
    std::uint64_t messages_ = 0;
    std::vector<link_stats> traffic_;
    std::vector<congestion_event> congestion_;
    std::vector<trace_fix> fixes_;
};

} // namespace hcube::detail
