// The in-process backend: every node and the router in this process, so
// there is nothing to move, combine or gather; the caller of run() waits for
// the nodes and ticks the deadlock watchdog.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <hcube/error.hpp>

#include "backend.hpp"
#include "park.hpp"
#include "settle.hpp"
#include "state.hpp"
#include "watchdog.hpp"

namespace hcube::detail {

namespace {

// The caller's wait for a run: ~5 us of spinning, then ~50 us of polling with
// yields, then a futex sleep.
constexpr int caller_spin_rounds = 128;
constexpr auto caller_poll = std::chrono::microseconds(50);

class in_process final : public backend {
public:
    explicit in_process(machine_state& m)
        : m_(m) {
        m.local_begin = 0;
        m.local_end = m.p;
    }

    int rank() const noexcept override { return 0; }
    int ranks() const noexcept override { return 1; }
    bool all(bool b) override { return b; }
    void connect() override {}
    void begin_run() override {}
    bool progress() override { return false; }
    void took(int, int) override {}
    bool wait_polling(node_state&, ready_ref ready, const wait_info&) override { return ready(); }

    bool routed_used() const noexcept override { return m_.routes.used(); }

    void submit_routed(routed_message& msg, vclock bound) override {
        const int dest = msg.dest; // once placed, msg may be taken and gone
        thread_local std::vector<int> woken;
        if (m_.routes.begin()) {
            // Nodes that finished before this send's traffic began (finish_routed).
            std::atomic_thread_fence(std::memory_order_seq_cst);
            for (int i = 0; i < m_.p; ++i)
                if (m_.nodes[i].done.load(std::memory_order_relaxed)) m_.routes.finish(i, woken);
        }
        m_.routes.submit(msg, bound, woken);
        // The destination sees the message now, placed or not (if not, it
        // tells the router it waits for it).
        if (std::find(woken.begin(), woken.end(), dest) == woken.end()) woken.push_back(dest);
        wake_each(m_, woken);
    }

    void publish_routed(int id, std::uint64_t seq, vclock bound) override {
        thread_local std::vector<int> woken;
        m_.routes.publish(id, seq, bound, woken);
        wake_each(m_, woken);
    }

    void finish_routed(int id) override {
        // Pairs with the fence in submit_routed: a node that finishes as
        // routed traffic begins is told to the router by it, by this, or by
        // both (finishing twice changes nothing). Until then a run pays no
        // router lock per node.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (!m_.routes.used()) return;
        thread_local std::vector<int> woken;
        m_.routes.finish(id, woken);
        wake_each(m_, woken);
    }

    double least_other_bound(int id, int& node) override {
        const router::bound b = m_.routes.least_other(id);
        node = b.node;
        return b.time;
    }

    void start_choosing() override {}
    void placed_remote(int) noexcept override {}

    void await_nodes(run_watchdog& watchdog) override {
        // Short runs end without a sleep and a wake-up: with a core to spare
        // the caller spins a moment first, then polls with yields a moment.
        // Only a moment: the scheduler may have put a node thread on the
        // caller's CPU, and a long spin held it off for the whole spin.
        for (int i = 0; m_.caller_spins && i < caller_spin_rounds &&
                        !m_.finished.load(std::memory_order_acquire);
             ++i)
            cpu_relax();
        for (const auto until = std::chrono::steady_clock::now() + caller_poll;
             !m_.finished.load(std::memory_order_acquire) &&
             std::chrono::steady_clock::now() < until;)
            std::this_thread::yield();
        while (m_.finished.load(std::memory_order_acquire) == 0) {
            m_.caller_sleeps.store(true, std::memory_order_seq_cst);
            const bool woken = m_.finished.load(std::memory_order_seq_cst) != 0 ||
                               futex_wait_for(m_.finished, 0, watchdog_period);
            m_.caller_sleeps.store(false, std::memory_order_relaxed);
            if (!woken) watchdog.tick();
        }
    }

    void finish() override {}

    void combine(run_report&, const std::vector<undelivered>& left) override {
        if (!left.empty()) throw error(undelivered_message(left));
    }

    void combine_failures(std::vector<node_failure>&, std::vector<blocked_wait>&) override {}

    void settle_trace(std::int64_t) override {
        for (const auto& fix : m_.routes.trace_fixes())
            m_.nodes[fix.node].trace[fix.index].arrival = fix.arrival;
    }

private:
    machine_state& m_;
};

} // namespace

std::unique_ptr<backend> make_in_process_backend(machine_state& m) {
    return std::make_unique<in_process>(m);
}

} // namespace hcube::detail
