// The threads executor: every node its own OS thread, created once per machine
// and reused by every run; a parked node sleeps on its doorbell (a futex).
#include <climits>
#include <system_error>

#include <pthread.h>
#include <sched.h>

#include <hcube/error.hpp>
#include <hcube/node.hpp>

#include "executor.hpp"
#include "run_gate.hpp"
#include "state.hpp"
#include "sys/cpus.hpp"

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
        spin_ = thread_nodes_spin(m);
        // Poll for the next run only while a yield reaches every node soon;
        // thousands of polling threads would keep the caller off the cores.
        if (nodes <= block_time_nodes_per_cpu * cpus.size()) block_time_ = block_time;
        // Node i on CPU i mod c, as a hypercube of 2^d nodes maps onto c
        // processors: with c = 2^b, every CPU holds a subcube and only the b
        // lowest dimensions cross CPUs. Left to the kernel, each dimension's
        // partners shared a CPU about half the time and threads migrated: the
        // d = 12 step pattern took 1.2-1.9x its bound in bench-runtime, and
        // 1.05-1.4x bound this way.
        if (m.cfg.bind_to_cores && !m.polls) bind_cpus_ = cpus;
        // The caller of run() runs the first node itself when the nodes
        // outnumber the cores, as an OpenMP master thread runs its share:
        // waiting for them it would only be one more thread for the cores to
        // take turns with (an empty run at d = 2 on 2 CPUs: 7.2-7.6 us with 5
        // threads yielding in turn, 4.8-5.0 us with 4). A backend may have it
        // run the process's only node (backend::caller_runs_node).
        const backend::traits& t = m.world->traits_of();
        if (t.caller_runs_node || (!spin_ && !t.polls)) caller_node_ = m.local_begin;
        threads_.reserve(nodes);
        try {
            for (int i = m.local_begin; i < m.local_end; ++i)
                if (i != caller_node_) threads_.emplace_back([this, i] { serve(i); });
        } catch (const std::system_error& e) {
            const std::size_t started = threads_.size();
            stop();
            throw error("machine: could not start node thread " + std::to_string(started) + " of " +
                        std::to_string(nodes) + " (" + e.what() + "); try a smaller dimension");
        }
    }
    ~thread_executor() override { stop(); }

    void launch() override {
        if (caller_node_ >= 0 && !bind_cpus_.empty()) keep_caller_home();
        gate_.open();
    }
    void park(node_state& n, std::uint32_t seq) noexcept override {
        if (int(&n - m_.nodes.data()) != caller_node_) return futex_wait(n.bell, seq);
        // Returns only for a ring (or a signal): a timeout that returned would
        // park again on a new epoch, and the watchdog would never see the
        // machine stay still.
        while (!futex_wait_for(n.bell, seq, watchdog_period))
            watchdog_tick(m_);
    }
    void unpark(node_state& n) noexcept override { futex_wake(n.bell); }
    void yield() noexcept override { std::this_thread::yield(); }
    bool spins() const noexcept override { return spin_; }
    // A yield hands the core to a peer that may be about to answer; after a
    // short burst, parking is cheaper than spinning the run queue.
    int yields() const noexcept override { return spin_ ? 16 : 8; }
    const char* name() const noexcept override { return "threads"; }
    int caller_node() const noexcept override { return caller_node_; }

private:
    void serve(int i) {
        if (!bind_cpus_.empty()) {
            cpu_set_t cpu;
            CPU_ZERO(&cpu);
            CPU_SET(cpu_of(i), &cpu);
            pthread_setaffinity_np(pthread_self(), sizeof cpu, &cpu);
        }
        enter_node_thread();
        for (std::uint32_t seen = 0;;) {
            seen = gate_.wait(seen, block_time_);
            if (stopping_.load(std::memory_order_acquire)) return;
            run_node(m_, i);
        }
    }

    // The caller of run() runs its node on that node's CPU. It is the user's
    // thread and not bound, and the kernel left it where it was: at d = 2 on
    // 2 CPUs it often shared one with the two node threads bound there, the
    // other CPU ran one, and an empty run took 5.9 us against 4.1-4.3 with
    // two threads on each (20000 runs each).
    void keep_caller_home() noexcept {
        const int home = cpu_of(caller_node_);
        if (sched_getcpu() != home) move_to_cpu(home);
    }

    // Node i's CPU when binding is on (bind_cpus_ not empty).
    int cpu_of(int i) const noexcept { return bind_cpus_[std::size_t(i) % bind_cpus_.size()]; }

    void stop() noexcept {
        stopping_.store(true, std::memory_order_release);
        gate_.open(); // not launch(): the thread that stops the machine stays where it is
        for (auto& t : threads_)
            t.join();
        threads_.clear();
    }

    machine_state& m_;
    bool spin_ = false;
    int caller_node_ = -1;
    std::vector<int> bind_cpus_; // node i's is [i mod size] (config::bind_to_cores)
    std::chrono::nanoseconds block_time_{0};
    run_gate gate_;
    std::atomic<bool> stopping_{false};
    std::vector<std::thread> threads_;
};

} // namespace

bool thread_nodes_spin(const machine_state& m) {
    // A backend that polls shares the cores with other processes: no
    // spinning.
    return std::size_t(m.local_end - m.local_begin) <= usable_cpus().size() && !m.polls;
}

std::unique_ptr<executor> make_thread_executor(machine_state& m) {
    return std::make_unique<thread_executor>(m);
}

} // namespace hcube::detail
