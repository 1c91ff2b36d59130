// The fibers executor: every node a user-level context (Boost.Context's
// fcontext fiber) with its own stack, run by a few worker OS threads.
//
//   worker w: nodes [first, last) --- a contiguous block, so the low dimensions'
//             partners share a worker and hand off by a context switch
//   local    FIFO of runnable fibers (owner only: launch, yields, own wakes)
//   inbox    Vyukov's intrusive MPSC queue: wakes from other workers and from
//            the caller of run() (cancel)
//
// A fiber never migrates: thread-local data (the C++ runtime's exception
// state, libc's errno) stays valid across its switches, and its memory is
// touched by one worker only. Parking (docs/design.md, "How fibers park"):
// the fiber switches to its worker saying "park on seq"; the worker, now off
// the fiber's stack, sets `parked` and re-reads the bell; a waker changes the
// bell and then takes `parked`. Both sides are seq_cst read-modify-writes or
// loads, so either the worker sees the new bell or the waker sees `parked`;
// whoever takes `parked` (exchange, so only one does) queues the fiber.
#include <hcube/error.hpp>
#include <hcube/node.hpp>

#include <algorithm>
#include <cstring>

#include <sched.h>
#include <sys/mman.h>

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>

#include "executor.hpp"
#include "fiber_notes.hpp"
#include "fiber_stacks.hpp"
#include "huge_pages.hpp"
#include "run_gate.hpp"
#include "state.hpp"
#include "sys/cpus.hpp"

// The C++ runtime's per-thread exception state (libstdc++ and libc++abi:
// the stack of caught exceptions and the count of uncaught ones). A fiber
// that parks inside a catch block, or while unwinding, must take it along,
// or another fiber's catch on the same worker would pop the wrong exception.
namespace __cxxabiv1 {
struct __cxa_eh_globals;
extern "C" __cxa_eh_globals* __cxa_get_globals() noexcept;
} // namespace __cxxabiv1

namespace hcube::detail {

namespace {

namespace ctx = boost::context;

struct eh_state {
    void* caught = nullptr;
    unsigned int uncaught = 0;
};

eh_state& eh_globals() noexcept {
    return *reinterpret_cast<eh_state*>(__cxxabiv1::__cxa_get_globals());
}

// After a run, workers poll for the next one this long before they sleep; an
// idle worker in a run polls its inbox this long.
constexpr auto block_time = std::chrono::microseconds(200);
constexpr auto idle_poll = std::chrono::microseconds(50);

struct worker;

// One line (without sanitizers): a worker touches it at every switch of its
// fiber, and with thousands of fibers it has left the caches since the last.
// Wakers on other workers write `parked` and `inbox_next` too, but only
// across the dimensions that join two workers' blocks, and only while the
// fiber is parked, when its worker has no use for the line.
struct alignas(cache_line) fiber_node {
    enum class action : std::uint8_t { park, yield, done };

    ctx::fiber self; // the node's suspended context (worker only)
    action next_action = action::done;
    std::atomic<bool> parked{false};
    std::uint32_t seq = 0; // the bell value it parks on
    eh_state eh;           // its exception state while switched out
    worker* owner = nullptr;
    fiber_node* local_next = nullptr;
    const char* frame = nullptr; // switch_out's frame when it last switched out
    std::atomic<fiber_node*> inbox_next{nullptr};
    [[no_unique_address]] context_note note; // empty without sanitizers
};
#if !defined(HCUBE_TSAN_FIBERS) && !defined(HCUBE_ASAN_FIBERS)
static_assert(sizeof(fiber_node) == cache_line, "a fiber's own state is one cache line");
#endif

struct alignas(cache_line) worker {
    int index = 0;
    int first = 0, last = 0;              // its nodes
    int unstarted = 0;                    // the first of them not started in this run
    int unfinished = 0;                   // of them in this run
    bool stacks_mapped = false;           // its nodes' top stack pages, after a first run
    std::vector<unsigned char> residency; // for the red-zone check (stack_pool)
    std::thread thread;
    fiber_node* current = nullptr;
    ctx::fiber back; // the worker's own context while `current` runs
    fiber_node* local_head = nullptr;
    fiber_node* local_tail = nullptr;
    fiber_node* inbox_tail = nullptr; // consumer's end
    fiber_node stub;
    context_note note; // the worker's own stack

    // Producers' end, and the worker's own doorbell for when it sleeps.
    alignas(cache_line) std::atomic<fiber_node*> inbox_head{nullptr};
    alignas(cache_line) std::atomic<std::uint32_t> bell{0};
    std::atomic<bool> sleeping{false};
    std::atomic<int> cpu{-1}; // where it last looked (spread)

    worker() {
        inbox_head.store(&stub, std::memory_order_relaxed);
        inbox_tail = &stub;
    }

    void push_local(fiber_node* f) noexcept {
        f->local_next = nullptr;
        if (local_tail)
            local_tail->local_next = f;
        else
            local_head = f;
        local_tail = f;
    }
    fiber_node* pop_local() noexcept {
        fiber_node* f = local_head;
        if (f) {
            local_head = f->local_next;
            if (!local_head) local_tail = nullptr;
        }
        return f;
    }

    // Vyukov's MPSC queue: a push is one exchange and one store.
    void push_inbox(fiber_node* f) noexcept {
        f->inbox_next.store(nullptr, std::memory_order_relaxed);
        fiber_node* prev = inbox_head.exchange(f, std::memory_order_acq_rel);
        prev->inbox_next.store(f, std::memory_order_release);
    }
    // Null when empty or when a push is half done (its pusher then checks
    // `sleeping` after finishing, so a sleeping worker is woken).
    fiber_node* pop_inbox() noexcept {
        fiber_node* tail = inbox_tail;
        fiber_node* next = tail->inbox_next.load(std::memory_order_acquire);
        if (tail == &stub) {
            if (!next) return nullptr;
            inbox_tail = tail = next;
            next = next->inbox_next.load(std::memory_order_acquire);
        }
        if (next) {
            inbox_tail = next;
            return tail;
        }
        if (tail != inbox_head.load(std::memory_order_acquire)) return nullptr;
        push_inbox(&stub);
        next = tail->inbox_next.load(std::memory_order_acquire);
        if (next) {
            inbox_tail = next;
            return tail;
        }
        return nullptr;
    }
};

// Initial-exec: read on every wake, and the default model for a shared library
// made each read a call into the dynamic linker (__tls_get_addr).
[[gnu::tls_model("initial-exec")]] thread_local worker* this_worker = nullptr;

class fiber_executor final : public executor {
public:
    fiber_executor(machine_state& m, int workers, long long guards)
        : m_(m)
        , stacks_(m.p, m.cfg.stack_bytes, guards)
        , fibers_(std::size_t(m.p), "the fibers")
        , workers_(std::make_unique<worker[]>(std::size_t(workers)))
        , count_(workers)
        , cpus_(usable_cpus()) {
        // The nodes this process runs (backend.hpp).
        const std::int64_t first = m.local_begin, nodes = m.local_end - m.local_begin;
        for (int w = 0; w < count_; ++w) {
            worker& wk = workers_[w];
            wk.index = w;
            wk.first = int(first + nodes * w / count_);
            wk.last = int(first + nodes * (w + 1) / count_);
            wk.residency.resize(stacks_.residency_pages(residency_pages));
            for (int i = wk.first; i < wk.last; ++i) {
                fibers_[i].owner = &wk;
                fibers_[i].note.set_stack(stacks_.stack(i));
            }
        }
        int started = 0;
        try {
            for (; started < count_; ++started)
                workers_[started].thread = std::thread([this, w = started] { serve(workers_[w]); });
        } catch (const std::system_error& e) {
            stop();
            throw error("machine: could not start fiber worker " + std::to_string(started) + " (" +
                        e.what() + ")");
        }
    }
    ~fiber_executor() override { stop(); }

    void launch() override { gate_.open(); }

    void park(node_state& n, std::uint32_t seq) noexcept override {
        fiber_node& f = fibers_[index(n)];
        f.next_action = fiber_node::action::park;
        f.seq = seq;
        switch_out(f);
    }

    void unpark(node_state& n) noexcept override {
        fiber_node& f = fibers_[index(n)];
        if (!f.parked.load(std::memory_order_seq_cst) ||
            !f.parked.exchange(false, std::memory_order_seq_cst))
            return;
        worker& w = *f.owner;
        if (this_worker == &w) {
            w.push_local(&f);
            return;
        }
        w.push_inbox(&f);
        // The pair of the worker's sleeping = true, re-check of the inbox.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (w.sleeping.load(std::memory_order_relaxed) &&
            w.sleeping.exchange(false, std::memory_order_relaxed)) {
            w.bell.fetch_add(1, std::memory_order_release);
            futex_wake(w.bell);
        }
    }

    void yield() noexcept override {
        fiber_node* f = this_worker ? this_worker->current : nullptr;
        if (!f) return;
        f->next_action = fiber_node::action::yield;
        switch_out(*f);
    }

    bool spins() const noexcept override { return false; }
    // Parking costs a fiber no more than a yield, and its worker then runs
    // only nodes that can go on: at p = 64 yielding 8 times first made a
    // back-to-back allreduce ~25% slower (3 resumes per node and step).
    int yields() const noexcept override { return 0; }
    const char* name() const noexcept override { return "fibers"; }
    // A worker's nodes: a group of its own.
    int groups() const noexcept override { return count_; }
    int group_of(int node) const noexcept override { return fibers_[node].owner->index; }
    bool group_is_one_thread() const noexcept override { return true; }

private:
    int index(const node_state& n) const noexcept { return int(&n - m_.nodes.data()); }

    // Node side: back to the worker, which runs f's next_action.
    void switch_out(fiber_node& f) noexcept {
        f.frame = static_cast<const char*>(__builtin_frame_address(0));
        worker& w = *f.owner;
        leaving(&f.note, w.note);
        w.back = std::move(w.back).resume();
        arrived(&f.note, &w.note);
    }

    // Worker side: runs f until it parks, yields or finishes.
    void resume(worker& w, fiber_node& f) noexcept {
        w.current = &f;
        eh_state& eh = eh_globals();
        const eh_state own = eh;
        eh = f.eh;
        leaving(&w.note, f.note);
        f.self = std::move(f.self).resume();
        arrived(&w.note, nullptr);
        f.eh = eh;
        eh = own;
        w.current = nullptr;
    }

    void start(fiber_node& f, int i) {
        if (!f.owner->stacks_mapped) stacks_.prefault_top(i);
        f.self = ctx::fiber(std::allocator_arg, pooled_stack{stacks_.stack(i)},
                            [this, &f, i](ctx::fiber&& back) {
                                worker& w = *f.owner;
                                arrived(nullptr, &w.note);
                                w.back = std::move(back);
                                run_node_here(i);
                                f.next_action = fiber_node::action::done;
                                leaving(nullptr, w.note);
                                return std::move(w.back);
                            });
        f.eh = {};
    }

    fiber_node* start_next(worker& w) {
        const int i = w.unstarted++;
        start(fibers_[i], i);
        return &fibers_[i];
    }

    // run_node, with the red-zone check of the worker's unguarded stacks
    // between its last node's program and that node's bookkeeping (the run
    // cannot end before it).
    void run_node_here(int i) {
        run_program(m_, i);
        worker& w = *fibers_[i].owner;
        if (--w.unfinished == 0)
            for (const int j : stacks_.red_zones_touched(w.first, w.last, w.residency)) {
                node_state& s = m_.nodes[j];
                if (!s.error)
                    s.error = std::make_exception_ptr(
                        error("node " + std::to_string(j) + ": overflowed its fiber stack of " +
                              std::to_string(m_.cfg.stack_bytes) +
                              " bytes (config::stack_bytes); its red zone was written, so node " +
                              std::to_string(j - 1) + "'s stack may be damaged too"));
                m_.cancel(j);
            }
        finish_node(m_, i);
    }

    // Workers are not bound to CPUs: on a shared machine a bound worker that
    // was woken waits for its one CPU (25 ms per empty run here, against 5 us
    // unbound), and a fiber never migrates between workers anyway. But the
    // kernel often wakes them onto one CPU (near their waker) and lets them
    // share it until its load balancer moves one: a 1-link exchange of 4 MiB
    // ran at 17-23 GB/s for its first 0.1-0.2 s, against 40-65 apart.
    // So a worker that finds a lower-numbered one on its CPU, at the start
    // of a run or when it runs out of work, moves to a CPU no worker reports
    // (move_to_cpu).
    void spread(worker& w) noexcept {
        const int here = sched_getcpu();
        // Written only when it changed: the other workers read it at every
        // idle moment, and an unchanged line stays in their caches.
        if (w.cpu.load(std::memory_order_relaxed) != here)
            w.cpu.store(here, std::memory_order_relaxed);
        if (here < 0 || count_ > int(cpus_.size())) return;
        const auto taken = [&](int cpu, int below) {
            for (int o = 0; o < below; ++o)
                if (workers_[o].cpu.load(std::memory_order_relaxed) == cpu) return true;
            return false;
        };
        if (!taken(here, w.index)) return;
        for (const int cpu : cpus_)
            if (!taken(cpu, count_)) {
                if (move_to_cpu(cpu)) w.cpu.store(cpu, std::memory_order_relaxed);
                return;
            }
    }

    void serve(worker& w) {
        this_worker = &w;
        enter_node_thread();
#ifdef HCUBE_TSAN_FIBERS
        w.note.tsan = __tsan_get_current_fiber();
        for (int i = w.first; i < w.last; ++i)
            fibers_[i].note.tsan = __tsan_create_fiber(0);
#endif
        for (std::uint32_t seen = 0;;) {
            seen = gate_.wait(seen, block_time);
            if (stopping_.load(std::memory_order_acquire)) break;
            // A run is a batch of context starts on the nodes' own stacks,
            // made one at a time by next_runnable.
            stacks_.unpoison(w.first, w.last);
            spread(w);
            w.unstarted = w.first;
            w.unfinished = w.last - w.first;
            for (int left = w.last - w.first; left > 0;) {
                fiber_node* f = next_runnable(w);
                prefetch_stack(w.local_head);
                resume(w, *f);
                switch (f->next_action) {
                case fiber_node::action::done:
                    --left;
                    break;
                case fiber_node::action::yield:
                    // Others first, a node not yet started included.
                    if (w.unstarted < w.last) w.push_local(start_next(w));
                    w.push_local(f);
                    break;
                case fiber_node::action::park:
                    // Off the fiber's stack now: it may be queued by anyone.
                    f->parked.store(true, std::memory_order_seq_cst);
                    if (m_.nodes[f - fibers_.data()].bell.load(std::memory_order_seq_cst) !=
                            f->seq &&
                        f->parked.exchange(false, std::memory_order_seq_cst))
                        w.push_local(f);
                    break;
                }
            }
            w.stacks_mapped = true;
        }
#ifdef HCUBE_TSAN_FIBERS
        for (int i = w.first; i < w.last; ++i)
            __tsan_destroy_fiber(fibers_[i].note.tsan);
#endif
    }

    // The stack lines the fiber after this one reads first when it resumes
    // (its saved registers just below the frame it switched out from, the
    // frames of its wait above), fetched while this one runs: with thousands
    // of fibers they have left the caches since it parked. The d = 12 step
    // pattern took 6-23% less time (eight alternating A/B pairs).
    static void prefetch_stack(const fiber_node* next) noexcept {
        if (!next || !next->frame) return;
        for (int line = -2; line < 6; ++line)
            __builtin_prefetch(next->frame + line * std::ptrdiff_t(cache_line));
    }

    // The next fiber to run: a woken or yielding one, else the next node not
    // started yet (so the nodes at work stay few and their stacks, states and
    // links in cache: at d = 12 the step pattern took ~25% less CPU than with
    // every node started at once), else it polls the inbox a moment and then
    // sleeps on the worker's bell until a waker queues one.
    fiber_node* next_runnable(worker& w) noexcept {
        if (fiber_node* f = w.pop_local()) return f;
        if (fiber_node* f = w.pop_inbox()) return f;
        if (w.unstarted < w.last) return start_next(w);
        spread(w);
        const auto until = std::chrono::steady_clock::now() + idle_poll;
        for (int i = 0;; ++i) {
            if (fiber_node* f = w.pop_inbox()) return f;
            std::this_thread::yield();
            if (i % 16 == 15 && std::chrono::steady_clock::now() > until) break;
        }
        for (;;) {
            const std::uint32_t seq = w.bell.load(std::memory_order_acquire);
            w.sleeping.store(true, std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (fiber_node* f = w.pop_inbox()) {
                w.sleeping.store(false, std::memory_order_relaxed);
                return f;
            }
            futex_wait(w.bell, seq);
            w.sleeping.store(false, std::memory_order_relaxed);
            if (fiber_node* f = w.pop_inbox()) return f;
        }
    }

    void stop() noexcept {
        stopping_.store(true, std::memory_order_release);
        gate_.open();
        for (int w = 0; w < count_; ++w)
            if (workers_[w].thread.joinable()) workers_[w].thread.join();
    }

    machine_state& m_;
    stack_pool stacks_;
    huge_array<fiber_node> fibers_;
    std::unique_ptr<worker[]> workers_;
    int count_;
    std::vector<int> cpus_; // usable ones
    run_gate gate_;
    std::atomic<bool> stopping_{false};
};

} // namespace

std::unique_ptr<executor> make_fiber_executor(machine_state& m, int workers, long long guards) {
    return std::make_unique<fiber_executor>(m, workers, guards);
}

} // namespace hcube::detail
