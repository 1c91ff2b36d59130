// The E-cube router (Grama et al. 4.5.3 and 4.6): routed messages, their
// congestion, resolved in virtual-time order. Private to emu/src.
//
// A routed message from src wants to start at w = max(clock, port) and holds
// every link of its E-cube path for t_s + t_w m from the earliest g >= w at
// which all of them are free (cut-through). Which of two messages that want one
// link at overlapping times goes first must depend on the program only, so
// messages are placed in the order of their key (w, src, seq), seq counting the
// source's routed sends: earlier virtual start first, the lower source on a tie.
//
// This is a conservative simulation. A message may be placed only when no
// message with a smaller key can still want one of its links. On its way from
// src, a message crosses dimension k at a node that still has src's bits k and
// up, so only sources in src's block of the highest dimension k_h it crosses
// (the 2^k_h nodes that share its bits k_h and up) can ever use its links.
// Each node publishes a lower bound on the keys it can still send:
//
//   running or parked   max(clock, earliest free send port)   clocks only grow
//   waiting in recv_routed for a message m not yet placed
//                       m.w + m.duration: it cannot send before m arrives
//   finished            +infinity
//
// and a message is placed once it is the smallest key, pending or bound, of its
// block. The blocks are the subtrees of a min-tree over node ids, so a publish
// costs O(d) and a message waits only for the nodes that could delay it: a
// step across dimension 0 for no one but its sender, one across the top
// dimension for half the machine. A stale bound is still a bound, so nodes
// publish only when it is cheap: when they send routed, start waiting for a
// routed message, park, or finish.
//
// When every node is parked and something is still pending, no bound can rise
// any more: the node that parked last places the smallest pending message
// anyway (force()), and again until a placement wakes someone. The result is
// still a function of the program (the parked state is), but a node that was
// blocked on a full link, not on a message, might later send with a smaller
// key; with the default link capacity only programs that fill a link hit this.
// A message placed on one clock but not yet on the other is not ready, and
// its receiver's bound rises once it is: force() completes the steps clock
// before it forces the time clock.
//
// Both clocks of a vclock run this independently (domain 0: time under the cost
// model; domain 1: steps, every message one step), so the report's steps are
// the same critical path as its virtual time at t_s = 1, t_w = 0, congestion
// included. While every key and duration the router has been given is the same
// on both clocks (t_s = 1, t_w = 0 and no compute charged: the CLI's default),
// domain 1 would repeat domain 0's placements exactly, so domain 0 serves both
// and domain 1 is made a copy of it when an input first differs.
//
// A link's reservations that end before the start of a message placed on it
// can never matter again (later ones on it have larger keys) and are dropped,
// so memory follows the messages in flight, not the history. One lock guards
// it all: routed traffic is for teaching and correctness, not the fast path.
//
//   send_routed --submit--> queued[src] --least key of its block--> place()
//   publish     --bound---> bound[n]                                  |
//   recv_routed <--ready--- arrival <-- reserve [g, g + dur) on every link
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <vector>

#include <hcube/report.hpp>

#include "links/message.hpp"

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
    std::uint32_t type = 0; // wire_type_id of the elements (node.hpp)
    std::vector<unsigned char> data;
    // Or, lent (node::sendrecv_routed): the sender's own buffer, valid until
    // the receiver copied it out or someone copied it into `data` (both under
    // the destination's inbox lock; node.cpp, routed_loan).
    const unsigned char* lent = nullptr;
    std::size_t bytes = 0;          // the payload's size, also where it went to another rank
    routed_message* next = nullptr; // the source's next one in the inbox

    const unsigned char* payload() const noexcept { return lent ? lent : data.data(); }
};

// The routed messages addressed to one node: a FIFO for each source that has
// some in flight. One queue per pair would be p^2 queues in all, and one list
// of all sources gets long when senders run ahead (alltoall pairwise). A
// message's address is stable until it is taken. Guarded by its node's mutex.
class routed_inbox {
public:
    routed_inbox() = default;
    routed_inbox(const routed_inbox&) = delete;
    routed_inbox& operator=(const routed_inbox&) = delete;
    ~routed_inbox() { clear(); }

    // A new message at the tail of `source`'s queue.
    routed_message& push(int source) {
        auto* msg = new routed_message;
        queue& q = by_source_[source];
        (q.head ? q.tail->next : q.head) = msg;
        q.tail = msg;
        ++pushed_;
        return *msg;
    }
    routed_message* front(int source) const {
        const auto it = by_source_.find(source);
        return it == by_source_.end() ? nullptr : it->second.head;
    }
    // Messages pushed so far (a waiter for any source sees new ones by it).
    std::size_t pushed() const noexcept { return pushed_; }
    // `source`'s message number `seq` (routed_message::seq), if here.
    routed_message* find(int source, std::uint64_t seq) const {
        for (routed_message* msg = front(source); msg; msg = msg->next)
            if (msg->seq == seq) return msg;
        return nullptr;
    }
    // Frees `source`'s first message.
    void pop(int source) {
        const auto it = by_source_.find(source);
        routed_message* msg = it->second.head;
        it->second.head = msg->next;
        if (!msg->next) by_source_.erase(it);
        delete msg;
    }
    // f(msg) for each source's first message.
    template <class F>
    void for_each_head(F f) const {
        for (const auto& [source, q] : by_source_)
            f(*q.head);
    }
    template <class F>
    void for_each(F f) {
        for (const auto& [source, q] : by_source_)
            for (routed_message* msg = q.head; msg; msg = msg->next)
                f(*msg);
    }
    void clear() {
        for (auto& [source, q] : by_source_)
            while (routed_message* msg = q.head) {
                q.head = msg->next;
                delete msg;
            }
        by_source_.clear();
    }

private:
    struct queue {
        routed_message* head = nullptr;
        routed_message* tail = nullptr;
    };
    std::unordered_map<int, queue> by_source_;
    std::size_t pushed_ = 0;
};

class router {
public:
    // A run starts: nothing pending, every bound (0, node, 0). The state
    // behind it is built when routed traffic begins (prepare): a run without
    // routed messages touches none of it, at d = 16 some 80 MB.
    void reset(int p, int dim, bool trace);

    // The first routed send of a run, in this process: true for the one
    // caller that began routed traffic. Nodes that finish before it are not
    // told to the router (a mutex per node per run); that caller tells it
    // which had, and each node that finishes after checks used() (a Dekker
    // pair of seq_cst fences; node.cpp, route_finish).
    bool begin() noexcept {
        return !used_.load(std::memory_order_acquire) && !used_.exchange(true);
    }

    // The calls below take the lock. Those that place messages append the
    // destinations to wake to `woken`.

    // Counts a new message on its path and queues it; `bound` is the sender's
    // new lower bound (its next seq is msg.seq + 1).
    void submit(routed_message& msg, vclock bound, std::vector<int>& woken);
    // Node `id` (next seq `seq`) can send nothing below `bound` from now on.
    void publish(int id, std::uint64_t seq, vclock bound, std::vector<int>& woken);
    // Node `id` finished: it sends nothing more.
    void finish(int id, std::vector<int>& woken);
    // Every unfinished node is parked: place the head of one domain's queue
    // (the steps clock's while it has one). False when nothing was pending.
    bool force(std::vector<int>& woken);
    // Whether a submitted message is still unplaced.
    bool has_pending();
    // Whether an unplaced message wants to start before virtual time t, or
    // waits for the steps clock only (then it is not ready either).
    bool pending_before(double t);
    // The least bound or queued key of every node but `id` (time clock): no
    // routed message from them starts before `time` (horizon.hpp).
    struct bound {
        double time;
        int node;
    };
    bound least_other(int id);

    // After the run (no lock needed then).
    std::uint64_t messages() const noexcept { return messages_; }
    // Per link (from * dim + k), or empty when no routed message was sent.
    const std::vector<link_stats>& traffic() const noexcept { return traffic_; }
    // One event per delayed message, in key order (messages of different
    // blocks are placed in whatever order their blocks settle).
    std::vector<congestion_event> congestion() const;
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
        friend bool operator==(const key&, const key&) = default;
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
    // One clock's placement state. Tree nodes 1 .. 2p-1, leaf of node n at
    // p + n; the node at height h above a leaf is the block of 2^h ids that
    // share their bits h and up.
    struct domain {
        std::vector<key> bound;                           // per node
        std::vector<std::priority_queue<pending>> queued; // per source, unplaced
        std::vector<key> low;                    // per tree node: least bound or queued key below
        std::vector<key> low_queued;             // per tree node: least queued key below
        std::vector<std::vector<interval>> busy; // per link, sorted, disjoint
    };

    void prepare(); // under the lock
    void update(domain& dm, int n);
    void settle(int which, int n, std::vector<int>& woken);
    void raise(int which, int n, key k, std::vector<int>& woken);
    void place(int which, routed_message& msg, std::vector<int>& woken);
    // Domains in use: 1 while both clocks agree, then 2 (split() copies).
    int domains() const noexcept { return shared_ ? 1 : 2; }
    void split_unless_equal(vclock a, vclock b = {}, vclock c = {});

    std::mutex mu_;
    int p_ = 1, dim_ = 0;
    bool trace_ = false;
    bool ready_ = false; // dom_[0] and traffic_ built for this run (prepare)
    domain dom_[2];
    bool shared_ = true; // domain 0 stands for both clocks
    std::atomic<bool> used_{false};
    std::uint64_t messages_ = 0;
    std::vector<link_stats> traffic_;
    std::vector<congestion_event> congestion_;
    std::vector<trace_fix> fixes_;
};

} // namespace hcube::detail
