// The runtime's data: what each node owns and what the machine shares. The
// operations on it live with their concern (park.hpp waits and wakes,
// link_ops.hpp moves messages, routed.cpp routes). Private to emu/src; node.hpp
// only forward-declares these.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <hcube/config.hpp>
#include <hcube/report.hpp>

#include "alloc.hpp"
#include "backend.hpp"
#include "executor.hpp"
#include "huge_pages.hpp"
#include "links/link.hpp"
#include "router.hpp"
#include "sys/barrier.hpp"
#include "sys/futex.hpp"
#include "wait_info.hpp"

namespace hcube::detail {

// Where a message of a size known only on arrival is copied to.
struct byte_sink {
    void* ctx;
    void* (*alloc)(void* ctx, std::size_t bytes);
    std::size_t elem;
    std::uint32_t type; // wire_type_id (node.hpp)
};

struct machine_state;

// The active nodes (neither parked nor finished) of a group that usually runs
// on one core: a fiber worker's nodes, or all of them under threads
// (executor::group_of). See machine_state::active.
struct alignas(cache_line) active_group {
    std::atomic<int> count{0};
    int members = 0; // local nodes in the group
};

// Everything one node owns. What a wait touches first, on one line: the
// doorbell and `waiting`, which wakers read and write, and what the node
// publishes when it parks. At d = 12 with fibers a node parks at nearly every
// step, and that line has left the caches since its last; two lines were a
// miss more per node-step. Nodes spinning on cores of their own park rarely.
struct alignas(cache_line) node_state {
    // Doorbell: bumped by whoever makes something this node may wait for true.
    std::atomic<std::uint32_t> bell{0};
    // Set (then the park barrier) before the final re-check and park; wakers
    // ring only when they see it, so an idle receiver costs no syscall. Its
    // value is the events that can end the wait (wake_event bits; 0: not
    // waiting): a waker whose event cannot end it leaves it parked.
    std::atomic<std::uint8_t> waiting{0};
    // For the deadlock watchdog: `parked` is published (release) after the last
    // re-check failed, with the bell value it sleeps on and an epoch that changes
    // with every park, so two equal samples prove the node never moved.
    std::atomic<bool> parked{false};
    std::atomic<bool> done{true};
    std::atomic<std::uint32_t> parked_bell{0};
    active_group* group = nullptr; // its executor's group (set once)
    std::atomic<std::uint64_t> park_epoch{0};
    wait_info waiting_for;
    // The horizon (horizon.hpp): a lower bound on the virtual start of this
    // node's next send, published (release) as it parks.
    std::atomic<double> next_send{0};
    // Payloads this node lent to routed messages (sendrecv_routed) that came
    // back: their receivers copied them out, or someone copied them into the
    // message (node.cpp, routed_loan). Written by those, release.
    std::atomic<std::uint64_t> loans_returned{0};

    // Parked, and nobody rang since the last re-check failed.
    bool parked_unrung() const noexcept {
        return parked.load(std::memory_order_acquire) &&
               bell.load(std::memory_order_acquire) == parked_bell.load(std::memory_order_relaxed);
    }

    // Owner-only from here on.
    alignas(cache_line) vclock clock;
    std::span<vclock> send_port; // one per port (port_policy::send_ports), in machine_state
    vclock recv_port;            // a node's one receive port (see charge_receive)
    // Per dimension k, on one line with k's neighbour (a hop touches each once;
    // at d = 12 separate vectors cost two more cache misses per node-step).
    struct link_ends {
        void* out = nullptr; // this -> this ^ 2^k, a config::links link
        void* in = nullptr;  // this ^ 2^k -> this
        link_stats sent;     // direct traffic on `out`
    };
    std::span<link_ends> ends; // d of them, in machine_state
    template <spsc_link L>
    L& out_link(int k) const {
        return *static_cast<L*>(ends[k].out);
    }
    template <spsc_link L>
    L& in_link(int k) const {
        return *static_cast<L*>(ends[k].in);
    }
    owned<trace_record> trace;
    owned<call_record> calls; // config::trace: this node's primitive calls
    // config::trace: each message taken, in order (dim -1: routed), with the
    // index in `calls` of the call that took it.
    struct receipt {
        int from, dim;
        std::int64_t call;
    };
    owned<receipt> receipts;
    std::exception_ptr error;
    std::uint64_t digest = 0;     // config::digest: what this node took (digest.hpp)
    std::uint64_t routed_seq = 0; // routed messages sent this run: the next one's tie-break
    std::uint64_t loans = 0;      // payloads lent this run (loans_returned counts them back)
    // The least bound the router holds for this node (it only rises), so that
    // a publish that cannot raise it skips the router's lock.
    vclock routed_told{-1, -1};
    std::uint64_t routed_told_seq = 0;

    // While it waits to choose among sources (recv_any, recv_routed from
    // any_source): the message it would take now, published before it parks,
    // and whether the last node to park told it to take that one (horizon.hpp).
    published_choice pending_choice;

    // Routed messages addressed to this node, by source, in send order.
    std::mutex routed_mu;
    routed_inbox routed_in;
};

class run_watchdog;

struct machine_state {
    config cfg;
    int p = 1;
    bool spin = false;         // nodes have a core each: spin briefly before parking
    bool caller_spins = false; // and the caller of run() one more: it spins, else yields
    int yields = 0;            // then yield this often (executor.hpp)
    bool asymmetric = false;   // the parking protocol's barrier is all on the parker
    bool group_thread = false; // a group's nodes share one thread (executor.hpp)

    link_table links; // of the implementation cfg.links names (resolved)
    // Its rings keep both ends' indices on one line (packed_ring): unless
    // the nodes spin, most links join nodes that share a core. Set once,
    // before the links are built.
    bool packed_rings = false;
    huge_array<node_state> nodes;
    // What each node_state's spans hold, every node's in one array (a heap
    // block per node cost a page fault and a TLB miss each at large p).
    huge_array<node_state::link_ends> ends;
    huge_array<vclock> send_ports;
    router routes;
    // The nodes this process runs (all of them, or its share of a job that
    // spans processes) and where the others are (backend.hpp).
    int local_begin = 0, local_end = 1;
    bool is_local(int node) const noexcept { return node >= local_begin && node < local_end; }
    std::unique_ptr<backend> world;
    bool polls = false; // world's traits: nodes move its messages
    // Some node chose among sources this run: the last to park may decide a
    // choice (horizon.hpp).
    std::atomic<bool> choosing{false};
    // One last_parked at a time: a node its decision wakes can park again and
    // be last too, while the first still reads the choosers' candidates (and a
    // chooser told twice for one candidate would take its next one unproved).
    std::mutex deciding;
    // Lent payloads not yet returned, of all local nodes (release_loans).
    std::atomic<std::int64_t> loans_out{0};
    // Nodes neither parked nor finished (a woken one counts from its wake-up;
    // wake), counted per group (active_group), and `active`: the groups with
    // an active node. The node that brings it to 0 checks whether the whole
    // machine is parked (router.hpp: force). With one counter for all, every
    // park and wake of a p = 64 fibers allreduce took a cross-core miss on it
    // (55-96 us per call, now 37-68: docs/runtime.md). A group changes
    // `active` only at its first wake and its last park; RMWs on one atomic
    // form a release sequence, so the last node's acq_rel on `active` still
    // sees every earlier park.
    std::vector<active_group> groups; // built once, never resized
    // A line of its own: the fields around it are read by every wait.
    alignas(cache_line) mutable std::atomic<int> active{0};
    // Run control.
    alignas(cache_line) const std::function<void(node&)>* program = nullptr;
    std::atomic<bool> cancelled{false};
    std::atomic<int> first_failure{-1};
    std::atomic<int> remaining{0};
    std::atomic<std::uint32_t> finished{0}; // set by the last node; the caller futex-waits on it
    std::atomic<bool> caller_sleeps{false}; // it does: the last node must wake it
    run_watchdog* watchdog = nullptr;       // in-process runs (machine.cpp)

    // Runs, parks and wakes the nodes (executor.hpp); last member, so it stops
    // before the state its nodes use goes away.
    std::unique_ptr<executor> exec;

    template <spsc_link L>
    L& out_link(int from, int k) const {
        return links.at<L>(std::size_t(from) * cfg.dim + k);
    }
    // Calls f(std::type_identity<L>{}) with the machine's link type L.
    template <class F>
    decltype(auto) with_links(F&& f) const {
        return with_link_type(cfg.links, packed_rings, std::forward<F>(f));
    }
    std::size_t port_index(int k) const { return port_policy_of(cfg.ports).port_of(k); }
    vclock message_duration(std::size_t bytes, std::size_t elem) const {
        // t_w = 0 (the default: virtual time counts steps): skip the division.
        if (cfg.cost.t_w == 0) return {cfg.cost.t_s, 1};
        return {cfg.cost.message_time(cfg.cost.words(bytes, elem)), 1};
    }

    void cancel(int failed_node) noexcept;
};

// Thrown inside a node program when its run was cancelled; never escapes run().
struct run_cancelled {};

} // namespace hcube::detail
