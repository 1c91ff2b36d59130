// The executors (docs/design.md, "The executor seam"): choosing one, their
// configuration errors, and what only fibers must take care of (exception
// state across switches, stack overflow). Every other suite runs under both
// executors (tests/meson.build), which is where identical semantics are tested.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hcube/machine.hpp>
#include <hcube/system.hpp>

#include "sanitizers.hpp"
#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

config with(executor_kind e, int dim) {
    config c = cfg(dim);
    c.executor = e;
    return c;
}

// Sets HCUBE_EXECUTOR for one scope (the suite itself may run with it set).
class executor_env {
public:
    explicit executor_env(const char* value) {
        if (const char* old = std::getenv("HCUBE_EXECUTOR")) old_ = old, had_ = true;
        if (value)
            setenv("HCUBE_EXECUTOR", value, 1);
        else
            unsetenv("HCUBE_EXECUTOR");
    }
    ~executor_env() {
        if (had_)
            setenv("HCUBE_EXECUTOR", old_.c_str(), 1);
        else
            unsetenv("HCUBE_EXECUTOR");
    }

private:
    std::string old_;
    bool had_ = false;
};

// A 2-cube allreduce of ids: every node must see 0 + 1 + 2 + 3.
run_report sum_of_ids(machine& m) {
    return m.run([](node& me) {
        int sum = me.id();
        for (int k = 0; k < me.dim(); ++k) {
            int in = 0;
            me.exchange(k, std::span(&sum, 1), std::span(&in, 1));
            sum += in;
        }
        if (sum != 6) throw std::runtime_error("sum " + std::to_string(sum));
    });
}

} // namespace

TEST_CASE("the executor is the configured one, or HCUBE_EXECUTOR's, or threads") {
    {
        executor_env env(nullptr);
        machine m(cfg(2));
        CHECK(m.cfg().executor == executor_kind::threads);
        CHECK(sum_of_ids(m).executor == executor_kind::threads);
    }
    {
        executor_env env("fibers");
        machine m(cfg(2));
        CHECK(sum_of_ids(m).executor == executor_kind::fibers);
        machine t(with(executor_kind::threads, 2)); // the configuration wins
        CHECK(sum_of_ids(t).executor == executor_kind::threads);
    }
    {
        executor_env env("threads");
        machine m(cfg(2));
        CHECK(sum_of_ids(m).executor == executor_kind::threads);
    }
    executor_env env("green");
    CHECK_THROWS_WITH_AS(machine(cfg(2)),
                         "machine: HCUBE_EXECUTOR=green names no executor; use threads or "
                         "fibers (or unset it: threads)",
                         usage_error);
    CHECK(to_string(executor_kind::fibers) == "fibers");
    CHECK(to_string(executor_kind::threads) == "threads");
}

TEST_CASE("workers and stack sizes out of range are refused by name") {
    config c = with(executor_kind::fibers, 2);
    c.workers = -1;
    CHECK_THROWS_WITH_AS(
        machine{c}, "machine: workers -1 is outside 0..1024 (0: one per usable CPU)", usage_error);
    c.workers = max_workers + 1;
    CHECK_THROWS_WITH_AS(machine{c}, doctest::Contains("workers 1025 is outside"), usage_error);
    c.workers = 0;
    for (std::size_t bytes : {std::size_t(0), min_stack_bytes - 1, max_stack_bytes + 1}) {
        c.stack_bytes = bytes;
        CHECK_THROWS_WITH_AS(
            machine{c},
            ("machine: stack_bytes " + std::to_string(bytes) + " is outside 16384..1073741824")
                .c_str(),
            usage_error);
    }
}

TEST_CASE("fibers: more workers than nodes, one worker, default workers: same results") {
    for (int workers : {0, 1, 3, 8}) {
        config c = with(executor_kind::fibers, 2);
        c.workers = workers;
        machine m(c);
        CHECK(m.cfg().workers >= 1);
        CHECK(m.cfg().workers <= 4);
        const run_report r = sum_of_ids(m);
        CHECK(r.virtual_time == 2);
    }
}

TEST_CASE("fibers: any number of workers, the machine knows when every node is parked") {
    // Active nodes are counted per worker (docs/runtime.md). Node 1 waits on a
    // routed message that node 6 sends only after one from node 0, which
    // starts at time 5, so the router places it only once every node of every
    // worker is parked; had the workers' counts not added up, the watchdog
    // would report a deadlock instead. Then a real deadlock of all 8 nodes.
    for (int workers : {1, 2, 3, 5}) {
        CAPTURE(workers);
        config c = with(executor_kind::fibers, 3);
        c.ports = port_model::all_port;
        c.workers = workers;
        machine m(c);
        for (int run = 0; run < 20; ++run) {
            const run_report r = m.run([](node& me) {
                if (me.id() == 0) {
                    me.compute(5);
                    me.send_routed(6, std::vector<int>{7});
                }
                if (me.id() == 6) {
                    CHECK(me.recv_routed<int>(0) == std::vector<int>{7});
                    me.send_routed(1, std::vector<int>{8});
                }
                if (me.id() == 1) CHECK(me.recv_routed<int>(6) == std::vector<int>{8});
            });
            CHECK(r.node_time[1] > 5);
        }
        CHECK(test::waits_when_all_receive(m).size() == 8);
    }
}

TEST_CASE("fibers: a node parked inside a catch block keeps its own exception") {
    // One worker runs both nodes: node 0 parks in its catch block while node 1
    // throws, catches and parks in its own. Each must still see its own
    // exception when it resumes (the C++ runtime's caught-exception stack is
    // per thread; the executor keeps one per fiber).
    config c = with(executor_kind::fibers, 1);
    c.workers = 1;
    machine m(c);
    std::vector<std::string> seen(2);
    m.run([&](node& me) {
        try {
            throw std::runtime_error("thrown by node " + std::to_string(me.id()));
        } catch (const std::exception&) {
            int out = me.id(), in = -1;
            me.exchange(0, std::span(&out, 1), std::span(&in, 1));
            try {
                throw;
            } catch (const std::exception& again) {
                seen[std::size_t(me.id())] = again.what();
            }
        }
    });
    CHECK(seen == std::vector<std::string>{"thrown by node 0", "thrown by node 1"});
    CHECK(std::uncaught_exceptions() == 0);
}

namespace {

// Runs `program` on a 2-node fiber machine of one worker with stacks of
// `stack_bytes` in a child process, which must die of SIGSEGV at the guard
// below node 1's stack (under ASan: its report of it) rather than finish.
void stops_at_the_guard(std::size_t stack_bytes, const std::function<void(node&)>& program) {
    if (test::thread_sanitized) {
        MESSAGE("not under ThreadSanitizer: the child cannot start its worker thread");
        return;
    }
#if defined(__SANITIZE_ADDRESS__)
    // ASan catches that SIGSEGV and reports it on stderr before it dies: as a
    // stack overflow, or as a SEGV when doctest's handler saw it first and
    // raised it again.
    int err[2];
    REQUIRE(pipe(err) == 0);
#endif
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
#if defined(__SANITIZE_ADDRESS__)
        dup2(err[1], STDERR_FILENO);
#endif
        config c = with(executor_kind::fibers, 1);
        c.stack_bytes = stack_bytes;
        machine m(c);
        try {
            m.run(program);
        } catch (const error&) {
            std::_Exit(1); // found after the fact (an unguarded stack's red zone): not a stop
        }
        std::_Exit(0);
    }
#if defined(__SANITIZE_ADDRESS__)
    close(err[1]);
    std::string report;
    char buf[4096];
    for (ssize_t got; (got = read(err[0], buf, sizeof buf)) > 0;)
        report.append(buf, std::size_t(got));
    close(err[0]);
#endif
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
#if defined(__SANITIZE_ADDRESS__)
    // It dies with exit code 1, or SIGABRT under abort_on_error=1 (which meson
    // test sets), or of the SIGSEGV itself under handle_segv=0.
    INFO(report);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) return;
    CHECK((report.find("ERROR: AddressSanitizer: stack-overflow") != std::string::npos ||
           report.find("ERROR: AddressSanitizer: SEGV") != std::string::npos));
    CHECK(((WIFEXITED(status) && WEXITSTATUS(status) == 1) ||
           (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)));
#else
    INFO("the child ", WIFEXITED(status) ? "exited with status " : "died of signal ",
         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGSEGV);
#endif
}

} // namespace

TEST_CASE("fibers: a node that overflows its stack stops the process, it corrupts nobody") {
    // A recursion far deeper than the smallest stack.
    struct deep {
        static int down(int n) {
            volatile char frame[512];
            frame[0] = char(n);
            return n == 0 ? frame[0] : down(n - 1) + frame[0];
        }
    };
    stops_at_the_guard(min_stack_bytes, [](node& me) {
        if (me.id() == 1) std::exit(deep::down(1 << 20) == 0 ? 3 : 4);
    });
}

TEST_CASE("fibers: a frame larger than the guard zone stops there too (stack-clash protection)") {
    // One frame of 72 KiB on a 32 KiB stack: its low end lies below the 16
    // KiB guard zone, in node 0's stack. Without the probes of
    // -fstack-clash-protection (which the hcube dependency gives every node
    // program) the write lands there unseen and the run succeeds.
    stops_at_the_guard(std::size_t(32) << 10, [](node& me) {
        if (me.id() != 1) return;
        volatile char frame[72 << 10];
        frame[0] = 1;
        if (frame[0] != 1) std::_Exit(5);
    });
}

TEST_CASE("fibers: guard pages for as many stacks as vm.max_map_count leaves room for") {
    os_limits lim;
    lim.max_map_count = 65530;
    lim.maps_in_use = 130;
    const auto guarded = [&](int dim) {
        config c;
        c.dim = dim;
        c.executor = executor_kind::fibers;
        return footprint_of(c, lim).guarded;
    };
    CHECK(guarded(12) == 1 << 12);
    // (65530 - 130 - 8192 left for the rest of the process) / 2 mappings each.
    CHECK(guarded(16) == 28604);
    lim.max_map_count = -1;
    CHECK(guarded(16) == 1 << 16);
}

TEST_CASE("fibers: a node that writes into the red zone of an unguarded stack fails the run") {
    // Guard pages for the first stacks only (vm.max_map_count): the others
    // have a red zone, checked when a worker's last node finishes.
    if (test::thread_sanitized) {
        MESSAGE("not under ThreadSanitizer: 65536 fibers exhaust its allocator");
        return;
    }
    config c = with(executor_kind::fibers, 16);
    c.stack_bytes = min_stack_bytes;
    // The stacks are the subject: Boost's queues, allocated whole, would add
    // a GiB of fresh pages at d = 16.
    c.links = link_impl::ring;
    const auto guarded = int(footprint_of(c, read_os_limits()).guarded);
    if (guarded >= 1 << c.dim) {
        MESSAGE("every stack has a guard page here (vm.max_map_count): no red zone to test");
        return;
    }
    // A few KiB past the stack's end, within its 16 KiB zone: two nodes far
    // apart (other workers, other stretches of the check) and the last one.
    struct deep {
        static int down(int n) {
            volatile char frame[512];
            frame[0] = char(n);
            return n == 0 ? frame[0] : down(n - 1) + frame[0];
        }
    };
    const std::vector<int> overflowing{guarded + 1, (guarded + (1 << c.dim)) / 2, (1 << c.dim) - 1};
    machine m(c);
    std::vector<int> failed;
    try {
        m.run([&](node& me) {
            if (std::find(overflowing.begin(), overflowing.end(), me.id()) != overflowing.end())
                (void)deep::down(40); // 40 frames of 512 bytes: 20 KiB
        });
    } catch (const run_error& e) {
        for (const auto& f : e.failures())
            failed.push_back(f.node);
        CHECK(std::string(e.what()).find("node " + std::to_string(overflowing[0]) +
                                         ": overflowed its fiber stack of 16384 bytes") !=
              std::string::npos);
    }
    CHECK(failed == overflowing);
    // The zones were cleaned: the next run succeeds.
    CHECK_NOTHROW(m.run([](node&) {}));
}

TEST_CASE("memory_estimate: a line and a slot per link, each executor's touched bytes per node") {
    config c;
    c.dim = 16;
    c.executor = executor_kind::fibers;
    const machine_memory f = memory_estimate(c);
    CHECK(f.links == 16 << 16);
    CHECK(f.link_bytes == (16ull << 16) * 128); // 128 MiB
    CHECK(f.per_node == 6 << 10);
    CHECK(f.total() == (16ull << 16) * 128 + (6ull << 10 << 16)); // 512 MiB
    c.dim = 12;
    c.executor = executor_kind::threads;
    CHECK(memory_estimate(c).total() == 49152ull * 128 + (16ull << 10 << 12));
}

TEST_CASE("footprints: a thread per node takes a stack and a guard page, two mappings each") {
    const os_limits lim;
    config c;
    c.dim = 10;
    c.executor = executor_kind::threads;
    const executor_footprint t = footprint_of(c, lim);
    CHECK(t.mappings == 2 << 10);
    CHECK(t.workers == 0);
    CHECK(t.reserved == (1 << 10) * (t.stack + t.guard));
    CHECK(t.touched == (1 << 10) * (16 << 10));
    c.executor = executor_kind::fibers;
    c.workers = 3;
    c.stack_bytes = 64 << 10;
    const executor_footprint f = footprint_of(c, lim);
    CHECK(f.workers == 3);
    CHECK(f.stack == 64 << 10);
    CHECK(f.guard > 0);
    CHECK(f.reserved == (1 << 10) * (f.stack + f.guard) + 3 * f.thread_stack);
    CHECK(f.mappings == 1 + 2 * (1 << 10) + 2 * 3);
}

TEST_CASE("the system's limits refuse a thread per node past vm.max_map_count, not fibers") {
    os_limits lim;
    lim.max_map_count = 1000;
    lim.maps_in_use = 100;
    config c;
    c.dim = 9; // 1024 mappings
    c.executor = executor_kind::threads;
    CHECK(os_limit_problems(c, lim).find("vm.max_map_count is 1000") != std::string::npos);
    CHECK(largest_dim_within(config{}, executor_kind::threads, lim) == 8);
    c.executor = executor_kind::fibers;
    CHECK(os_limit_problems(c, lim) == "");
    CHECK(largest_dim_within(config{}, executor_kind::fibers, lim) ==
          max_dim_of(executor_kind::fibers));
}

TEST_CASE("executor_policies: names, limits and what the program offers") {
    for (const executor_policy& e : executor_policies) {
        CHECK(parse_executor(e.name) == e.kind);
        CHECK(to_string(e.kind) == e.name);
        CHECK(max_dim_of(e.kind) == e.dim_limit);
        CHECK(e.dim_limit <= max_dim);
    }
    CHECK(max_dim_of(executor_kind::automatic) == max_dim_of(executor_kind::threads));
    CHECK(widest_executor().dim_limit == max_dim);
    CHECK_FALSE(parse_executor("automatic"));
    CHECK_FALSE(parse_executor("Threads"));
}
