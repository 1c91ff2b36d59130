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

class thread_executor final : public executor {
public:
    explicit thread_executor(machine_state& m)
        : m_(m) {
        const std::vector<int> cpus = usable_cpus();
        spin_ = std::size_t(m.p) <= cpus.size();
        if (spin_ && m.cfg.bind_to_cores) cpu_of_.assign(cpus.begin(), cpus.begin() + m.p);
        threads_.reserve(std::size_t(m.p));
        try {
            for (int i = 0; i < m.p; ++i)
                threads_.emplace_back([this, i] { serve(i); });
        } catch (const std::system_error& e) {
            const std::size_t started = threads_.size();
            stop();
            throw error("machine: could not start node thread " + std::to_string(started) + " of " +
                        std::to_string(m.p) + " (" + e.what() + "); try a smaller dimension");
        }
    }
    ~thread_executor() override { stop(); }

    void launch() override {
        generation_.fetch_add(1, std::memory_order_release);
        futex_wake(generation_, INT_MAX);
    }
    void park(node_state& n, std::uint32_t seq) noexcept override { futex_wait(n.bell, seq); }
    void unpark(node_state& n) noexcept override { futex_wake(n.bell); }
    void yield() noexcept override { std::this_thread::yield(); }
    bool spins() const noexcept override { return spin_; }
    const char* name() const noexcept override { return "threads"; }

private:
    void serve(int i) {
        if (!cpu_of_.empty()) {
            cpu_set_t cpu;
            CPU_ZERO(&cpu);
            CPU_SET(cpu_of_[std::size_t(i)], &cpu);
            pthread_setaffinity_np(pthread_self(), sizeof cpu, &cpu);
        }
        enter_node_thread();
        std::uint32_t seen = 0;
        for (;;) {
            while (generation_.load(std::memory_order_acquire) == seen)
                futex_wait(generation_, seen);
            seen = generation_.load(std::memory_order_acquire);
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
    std::atomic<std::uint32_t> generation_{0};
    std::atomic<bool> stopping_{false};
    std::vector<std::thread> threads_;
};

} // namespace

std::unique_ptr<executor> make_thread_executor(machine_state& m) {
    return std::make_unique<thread_executor>(m);
}

} // namespace hcube::detail
