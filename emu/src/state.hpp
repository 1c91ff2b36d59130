// Runtime internals: message descriptors, links, per-node and per-machine state.
// Private to emu/src; node.hpp only forward-declares these.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cerrno>
#include <chrono>
#include <climits>
#include <ctime>

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tbb/cache_aligned_allocator.h>
#include <tbb/scalable_allocator.h>

#include <hcube/config.hpp>
#include <hcube/report.hpp>

#include "executor.hpp"
#include "links/link.hpp"
#include "remote.hpp"
#include "router.hpp"

namespace hcube::detail {

// Heap payloads and a node's own vectors come from oneTBB's allocators:
// per-thread pools, no global lock across thousands of node threads, and
// vectors on cache lines of their own (owned<T>: neighbouring nodes' small
// vectors would otherwise share lines, and every send writes them). oneTBB is
// not instrumented, so a sanitizer sees neither its cross-thread block reuse
// (false races under TSan) nor its block bounds (ASan); sanitized builds use
// the system allocator.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline void* payload_alloc(std::size_t bytes) noexcept {
    return std::malloc(bytes);
}
inline void payload_free(void* p) noexcept {
    std::free(p);
}
template <class T>
struct line_allocator {
    using value_type = T;
    line_allocator() = default;
    template <class U>
    line_allocator(const line_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{cache_line}));
    }
    void deallocate(T* p, std::size_t) noexcept {
        ::operator delete (p, std::align_val_t{cache_line});
    }
    friend bool operator==(const line_allocator&, const line_allocator&) = default;
};
#else
inline void* payload_alloc(std::size_t bytes) noexcept {
    return scalable_malloc(bytes);
}
inline void payload_free(void* p) noexcept {
    scalable_free(p);
}
template <class T>
using line_allocator = tbb::cache_aligned_allocator<T>;
#endif

template <class T>
using owned = std::vector<T, line_allocator<T>>;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Parking is a raw Linux futex rather than std::atomic::wait: libstdc++'s wait
// spins and yields before it blocks (our own policy in wait_until already did)
// and counts waiters in 16 global buckets, one shared cache line per 256 of
// 4096 threads; and the caller of run() needs a timed wait (the watchdog tick).
// Wake-ups may be spurious; every caller re-checks its condition.
inline long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value,
                  const timespec* timeout) noexcept {
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr,
                   0);
}

// Sleeps while word == old.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t old) noexcept {
    futex(word, FUTEX_WAIT_PRIVATE, old, nullptr);
}

// The same with a timeout; false when it expired.
inline bool futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t old,
                           std::chrono::nanoseconds timeout) noexcept {
    const auto ns = timeout.count();
    const timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
    return !(futex(word, FUTEX_WAIT_PRIVATE, old, &ts) == -1 && errno == ETIMEDOUT);
}

inline void futex_wake(std::atomic<std::uint32_t>& word, int waiters = 1) noexcept {
    futex(word, FUTEX_WAKE_PRIVATE, std::uint32_t(waiters), nullptr);
}

// The start of every run: a generation counter that the caller of run() bumps
// and the executor's OS threads wait on. After a run they poll it a moment
// (with yields, so they never keep the caller off a core) before they sleep, as
// OpenMP runtimes do for their block time: back-to-back runs then pay no
// futex wake, and the caller makes the system call only when someone sleeps
// (a Dekker pair of `generation` and `sleepers`, seq_cst on both sides).
struct run_gate {
    std::atomic<std::uint32_t> generation{0};
    std::atomic<int> sleepers{0};

    void open() noexcept {
        generation.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers.load(std::memory_order_seq_cst) > 0) futex_wake(generation, INT_MAX);
    }

    // Returns the generation once it differs from `seen`.
    std::uint32_t wait(std::uint32_t seen, std::chrono::nanoseconds poll) noexcept {
        if (poll.count() > 0) {
            const auto until = std::chrono::steady_clock::now() + poll;
            for (int i = 0;; ++i) {
                if (const auto g = generation.load(std::memory_order_acquire); g != seen) return g;
                std::this_thread::yield();
                if (i % 16 == 15 && std::chrono::steady_clock::now() > until) break;
            }
        }
        for (;;) {
            sleepers.fetch_add(1, std::memory_order_seq_cst);
            if (generation.load(std::memory_order_seq_cst) == seen) futex_wait(generation, seen);
            sleepers.fetch_sub(1, std::memory_order_relaxed);
            if (const auto g = generation.load(std::memory_order_acquire); g != seen) return g;
        }
    }
};

// The parking protocol (node.cpp, wait_until) is a Dekker pair: the waker
// publishes and then reads `waiting`, the parker stores `waiting` and then
// re-reads what it waits for; each needs a full barrier between its store and
// its load. When threads <= cores, a message's waker is on the critical path of
// a spinning peer and parks are rare, so the whole barrier can move to the
// parker: membarrier(2) makes every running thread of the process execute a
// full barrier (a descheduled one had one at its context switch). Each waker's
// barrier then falls either before its load of `waiting`, which so sees true,
// or after its publish, which the parker's re-check so sees. Wakers keep only a
// compiler barrier. Used when the kernel offers it (Linux >= 4.14).
inline bool heavy_barrier_available() noexcept {
    static const bool available = [] {
        const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
               syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    }();
    return available;
}

inline void heavy_barrier() noexcept {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

// What a parked node waits for, kept for the deadlock report. Two words, so
// that it shares a line with the rest of a parking node's state (node_state).
struct wait_info {
    enum kind_t : std::uint8_t {
        none,
        recv,
        send_full,
        delivery,
        recv_any,
        routed,
        routed_any,
        routed_loan
    };
    std::size_t bytes = 0;  // expected bytes for an exact receive, or 0
    std::int32_t peer = -1; // node at the other end (or routed source)
    std::int16_t dim = -1;  // link, or -1
    kind_t kind = none;
    bool exact = false;

    constexpr wait_info() noexcept = default;
    constexpr wait_info(kind_t what, int link, int other, std::size_t expect,
                        bool is_exact) noexcept
        : bytes(expect)
        , peer(other)
        , dim(std::int16_t(link))
        , kind(what)
        , exact(is_exact) {}
};
static_assert(sizeof(wait_info) == 16 && max_dim < 32768);

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

// What a waker made happen, as bits of node_state::waiting: a message
// arrived on a link, a message was taken off one (room, or a delivery), or
// anything else (routed messages placed, loans returned, MPI traffic).
// A node that waits to receive on link k+1 is then not woken when its
// partner on link k takes its last message: in the d = 12 step pattern with
// fibers, those wakes were a quarter of all resumes (docs/runtime.md).
enum class wake_event : std::uint8_t { arrival = 1, take = 2, any = 3 };

// The events that can make a wait of kind k ready (node.cpp, wait_until).
constexpr wake_event ended_by(wait_info::kind_t k) noexcept {
    switch (k) {
    case wait_info::recv:
    case wait_info::recv_any:
        return wake_event::arrival;
    case wait_info::send_full:
    case wait_info::delivery:
        return wake_event::take;
    default:
        return wake_event::any;
    }
}

// A choosing node's best message so far: the least virtual arrival, then the
// lower link (recv_any) or source (recv_routed from any_source).
struct choice {
    double arrival = std::numeric_limits<double>::infinity();
    int from = -1; // none while arrival is infinite
    friend bool operator<(const choice& a, const choice& b) noexcept {
        return a.arrival < b.arrival || (a.arrival == b.arrival && a.from < b.from);
    }
};

// A chooser's candidate as others read it: written by its node only, read by
// the last node to park while the chooser is parked (its parked flag orders
// the two), or while a cancelled run wakes it, when the reading no longer
// matters. So relaxed atomics suffice, and a torn pair is never used.
class published_choice {
public:
    void store(choice c) noexcept {
        arrival_.store(c.arrival, std::memory_order_relaxed);
        from_.store(c.from, std::memory_order_relaxed);
    }
    choice load() const noexcept {
        return {arrival_.load(std::memory_order_relaxed), from_.load(std::memory_order_relaxed)};
    }

private:
    std::atomic<double> arrival_{std::numeric_limits<double>::infinity()};
    std::atomic<int> from_{-1};
};

// What a blocked node waits for, in words ("recv on dim 2 from node 4, ...").
std::string describe_wait(int dim, const wait_info& w);

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
    owned<vclock> send_port; // one per port: port_policy::send_ports
    vclock recv_port;        // a node's one receive port (see charge_receive)
    // Per dimension k, on one line with k's neighbour (a hop touches each once;
    // at d = 12 separate vectors cost two more cache misses per node-step).
    struct link_ends {
        void* out = nullptr; // this -> this ^ 2^k, a config::links link
        void* in = nullptr;  // this ^ 2^k -> this
        link_stats sent;     // direct traffic on `out`
    };
    owned<link_ends> ends;
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
    std::atomic<bool> forced{false};

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

    link_table links; // of the implementation cfg.links names (resolved)
    // Its rings keep both ends' indices on one line (packed_ring): unless
    // the nodes spin, most links join nodes that share a core. Set once,
    // before the links are built.
    bool packed_rings = false;
    std::unique_ptr<node_state[]> nodes;
    router routes;
    // The nodes this process runs: all of them, or with the MPI backend this
    // rank's subcube; `net` carries the links to the others (remote.hpp).
    int local_begin = 0, local_end = 1;
    bool is_local(int node) const noexcept { return node >= local_begin && node < local_end; }
    std::unique_ptr<remote> net;
    // Over MPI with one node per rank and threads: the caller of run() runs
    // that node itself, which then moves its own messages and never parks
    // (no second thread, no hand-off; docs/mpi.md).
    bool inline_node = false;
    bool inline_waiting = false; // that node waits (in park.hpp's wait_moving)
    // Some node chose among sources this run: parking nodes publish their
    // next_send, and the last to park may decide a choice (horizon.hpp).
    std::atomic<bool> choosing{false};
    // One last_parked at a time: a node its decision wakes can park again and
    // be last too, while the first still reads the choosers' candidates.
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
    // n parks or finishes: true if it was the last active node.
    bool deactivate(const node_state& n) const noexcept {
        return n.group->count.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
               active.fetch_sub(1, std::memory_order_acq_rel) == 1;
    }
    // n is active again (woken, or back from a spurious park).
    void activate(const node_state& n) const noexcept {
        if (n.group->count.fetch_add(1, std::memory_order_relaxed) == 0)
            active.fetch_add(1, std::memory_order_relaxed);
    }

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

    // Wakes `n` if it is about to park or parked on a wait that `event` can
    // end. Call after publishing whatever it waits for; the barrier pairs with
    // park_barrier() in wait_until.
    void wake(node_state& n, wake_event event = wake_event::any) const noexcept {
        if (asymmetric)
            std::atomic_signal_fence(std::memory_order_seq_cst);
        else
            std::atomic_thread_fence(std::memory_order_seq_cst);
        // The waker that claims the wait (exchange) counts the node active
        // again before it rings, so the machine never looks all parked while a
        // woken node has yet to run (horizon.cpp, last_parked); others need not
        // ring, the bell has changed. It counts the node before it claims: a
        // node that finds its wait claimed takes that count as its own (park.hpp)
        // and may park again at once, so the count must already be there, or
        // its group could drop to zero under it and `active` drift for good.
        if (!(n.waiting.load(std::memory_order_relaxed) & std::uint8_t(event))) return;
        activate(n);
        if (n.waiting.exchange(0, std::memory_order_acq_rel)) {
            n.bell.fetch_add(1, std::memory_order_seq_cst);
            exec->unpark(n);
        } else {
            // Claimed by another waker, or ended by the node itself: the count
            // goes back, as activate's exact inverse (the node counts itself).
            (void)deactivate(n);
        }
    }
    // Wakes every node in `ids` (the destinations of routed messages the router
    // just placed; over MPI, rank 0's router tells other ranks of theirs) and
    // empties it.
    void wake_each(std::vector<int>& ids) const noexcept {
        for (const int n : ids)
            if (is_local(n))
                wake(nodes[n]);
            else
                net->placed_remote(n);
        ids.clear();
    }
    // The parker's half of the barrier pair, between waiting = true and the
    // final re-check.
    void park_barrier() const noexcept {
        if (asymmetric)
            heavy_barrier();
        else
            std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    void cancel(int failed_node) noexcept;
};

// When every local node is parked: copies each lent routed payload into its
// message and returns the loan (node.cpp); true if there was one.
bool release_loans(machine_state& m);
// Whether routed traffic has begun in this run (over MPI: as this rank knows).
inline bool routed_in_use(const machine_state& m) {
    return m.net ? m.net->routed_used() : m.routes.used();
}
// Tells the router node s's least next key (horizon.hpp, next_send_bound), or,
// while it waits for `awaited` not yet placed, no less than its arrival
// (node.cpp).
void publish_routed_bound(machine_state& m, node_state& s, const routed_message* awaited);
// Tells the machine's router that node `id` finished (node.cpp).
void route_finish(machine_state& m, int id);

// Thrown inside a node program when its run was cancelled; never escapes run().
struct run_cancelled {};

} // namespace hcube::detail
