// The threads executor: every node its own OS thread, created once per machine
// and reused by every run; a parked node sleeps on its doorbell (a futex).
#include <climits>
#include <system_error>

#include <pthread.h>
#include <sched.h>

#include <hcube/error.hpp>
#include <hcube/node.hpp>

#include "executor.hpp"
#include "state.hpp"

namespace hcube::detail {

namespace {

// After a run, node threads poll for the next one this long before they sleep.
constexpr auto block_time = std::chrono::microseconds(200);
constexpr std::size_t block_time_nodes_per_cpu = 4;

class thread_executor final : public executor {
public:
    explicit thread_executor(machine_state& m)
        : m_(m) {
        const std::vector<int> cpus = usable_cpus();
        const auto nodes = std::size_t(m.local_end - m.local_begin); // this process's
        // Over MPI the ranks' nodes and pollers share the cores with each
        // other: no spinning (docs/mpi.md).
        spin_ = nodes <= cpus.size() && !m.net;
        // Poll for the next run only while a yield reaches every node soon;
        // thousands of polling threads would keep the caller off the cores.
        if (nodes <= block_time_nodes_per_cpu * cpus.size()) block_time_ = block_time;
        if (spin_ && m.cfg.bind_to_cores)
            cpu_of_.assign(cpus.begin(), cpus.begin() + std::ptrdiff_t(nodes));
        threads_.reserve(nodes);
        try {
            for (int i = m.local_begin; i < m.local_end && !m.inline_node; ++i)
                threads_.emplace_back([this, i] { serve(i); });
        } catch (const std::system_error& e) {
            const std::size_t started = threads_.size();
            stop();
            throw error("machine: could not start node thread " + std::to_string(started) + " of " +
                        std::to_string(nodes) + " (" + e.what() + "); try a smaller dimension");
        }
    }
    ~thread_executor() override { stop(); }

    void launch() override { gate_.open(); }
    void park(node_state& n, std::uint32_t seq) noexcept override { futex_wait(n.bell, seq); }
    void unpark(node_state& n) noexcept override { futex_wake(n.bell); }
    void yield() noexcept override { std::this_thread::yield(); }
    bool spins() const noexcept override { return spin_; }
    // A yield hands the core to a peer that may be about to answer; after a
    // short burst, parking is cheaper than spinning the run queue.
    int yields() const noexcept override { return spin_ ? 16 : 8; }
    const char* name() const noexcept override { return "threads"; }

private:
    void serve(int i) {
        if (!cpu_of_.empty()) {
            cpu_set_t cpu;
            CPU_ZERO(&cpu);
            CPU_SET(cpu_of_[std::size_t(i - m_.local_begin)], &cpu);
            pthread_setaffinity_np(pthread_self(), sizeof cpu, &cpu);
        }
        enter_node_thread();
        for (std::uint32_t seen = 0;;) {
            seen = gate_.wait(seen, block_time_);
            if (stopping_.load(std::memory_order_acquire)) return;
            run_node(m_, i);
        }
    }

    void stop() noexcept {
        stopping_.store(true, std::memory_order_release);
        launch();
        for (auto& t : threads_)
            t.join();
        threads_.clear();
    }

    machine_state& m_;
    bool spin_ = false;
    std::vector<int> cpu_of_; // node i's CPU when bound (config::bind_to_cores)
    std::chrono::nanoseconds block_time_{0};
    run_gate gate_;
    std::atomic<bool> stopping_{false};
    std::vector<std::thread> threads_;
};

} // namespace

std::unique_ptr<executor> make_thread_executor(machine_state& m) {
    return std::make_unique<thread_executor>(m);
}

} // namespace hcube::detail
