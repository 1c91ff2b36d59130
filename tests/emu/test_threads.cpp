// Node threads and CPUs: node i is bound to the (i mod c)-th of the c CPUs
// the constructing thread may use (config::bind_to_cores); with more nodes
// than CPUs the caller of run() runs node 0 itself, moved to node 0's CPU but
// with its own mask. Switched off, nodes keep the constructing thread's CPUs.
// Fiber workers are never bound (fibers.cpp says why).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>

#include <hcube/machine.hpp>

#include "test_support.hpp"

using namespace hcube;

namespace {

config on(executor_kind e, int dim) {
    config c = hcube::test::cfg(dim);
    c.executor = e;
    return c;
}

} // namespace

namespace {

std::vector<int> cpus_of_this_thread() {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

// Each node's CPU set, as seen from inside its own thread.
std::vector<std::vector<int>> node_cpus(machine& m) {
    std::vector<std::vector<int>> seen(std::size_t(1) << m.cfg().dim);
    m.run([&](node& me) { seen[std::size_t(me.id())] = cpus_of_this_thread(); });
    return seen;
}

int largest_bound_dim(std::size_t cpus) {
    int d = 0;
    while ((std::size_t(2) << d) <= cpus)
        ++d;
    return d;
}

} // namespace

TEST_CASE("node i is bound to the (i mod c)-th of the c usable CPUs, but for the caller's node") {
    const std::vector<int> usable = cpus_of_this_thread();
    const int bound = largest_bound_dim(usable.size());
    for (int d = 0; d <= bound + 2; ++d) {
        machine m(on(executor_kind::threads, d));
        const auto seen = node_cpus(m);
        for (std::size_t i = 0; i < seen.size(); ++i) {
            // With more nodes than CPUs the caller runs node 0 on its own thread.
            const std::vector<int> expected =
                d > bound && i == 0 ? usable : std::vector<int>{usable[i % usable.size()]};
            CHECK_MESSAGE(seen[i] == expected, "d = " << d << ", node " << i);
        }
    }
}

namespace {

void set_cpus_of_this_thread(const std::vector<int>& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int c : cpus)
        CPU_SET(c, &set);
    REQUIRE(sched_setaffinity(0, sizeof set, &set) == 0);
}

} // namespace

TEST_CASE("the caller of run() runs node 0 on node 0's CPU, and keeps its own mask") {
    const std::vector<int> usable = cpus_of_this_thread();
    if (usable.size() < 2) return; // one CPU: nowhere else to be
    const int d = largest_bound_dim(usable.size()) + 1;
    machine m(on(executor_kind::threads, d));
    int home = 0;
    for (int rep = 0; rep < 5; ++rep) {
        // Start on another CPU than node 0's (bound a moment, mask restored).
        set_cpus_of_this_thread({usable[1]});
        set_cpus_of_this_thread(usable);
        int cpu = -1;
        std::vector<int> mask;
        m.run([&](node& me) {
            if (me.id() != 0) return;
            cpu = sched_getcpu();
            mask = cpus_of_this_thread();
        });
        home += cpu == usable[0];
        CHECK(mask == usable);
        CHECK(cpus_of_this_thread() == usable);
    }
    // The kernel may move an unbound thread at any moment; it hardly ever does.
    CHECK_MESSAGE(home >= 4, home << " of 5 runs had node 0 on CPU " << usable[0]);

    // A caller whose mask leaves out node 0's CPU stays where its mask says.
    set_cpus_of_this_thread({usable[1]});
    std::vector<int> mask;
    m.run([&](node& me) {
        if (me.id() == 0) mask = cpus_of_this_thread();
    });
    CHECK(mask == std::vector<int>{usable[1]});
    CHECK(cpus_of_this_thread() == std::vector<int>{usable[1]});
    set_cpus_of_this_thread(usable);
}

TEST_CASE("nodes are not bound when binding is off") {
    const std::vector<int> usable = cpus_of_this_thread();
    for (int d : {0, largest_bound_dim(usable.size()) + 1}) {
        config off = on(executor_kind::threads, d);
        off.bind_to_cores = false;
        machine m(off);
        for (const auto& cpus : node_cpus(m))
            CHECK_MESSAGE(cpus == usable, "d = " << d);
    }
}

TEST_CASE("fibers: workers are not bound, whatever bind_to_cores says") {
    // Also after a worker moved off another's CPU (fibers.cpp, spread), which
    // binds it a moment and then restores its mask.
    const std::vector<int> usable = cpus_of_this_thread();
    for (bool bind : {true, false}) {
        config c = on(executor_kind::fibers, 3);
        c.bind_to_cores = bind;
        machine m(c);
        for (const auto& cpus : node_cpus(m))
            CHECK(cpus == usable);
    }
}

namespace {

// Each node's thread, as seen from inside its program.
std::vector<std::thread::id> node_threads(machine& m) {
    std::vector<std::thread::id> seen(std::size_t(1) << m.cfg().dim);
    m.run([&](node& me) { seen[std::size_t(me.id())] = std::this_thread::get_id(); });
    return seen;
}

} // namespace

TEST_CASE("with more nodes than CPUs the caller of run() runs node 0, else every node has a "
          "thread") {
    const int bound = largest_bound_dim(cpus_of_this_thread().size());
    for (int d : {bound, bound + 1}) {
        machine m(on(executor_kind::threads, d));
        for (int rep = 0; rep < 2; ++rep) { // the same threads every run
            const auto seen = node_threads(m);
            CHECK_MESSAGE((seen[0] == std::this_thread::get_id()) == (d > bound), "d = " << d);
            for (std::size_t i = 1; i < seen.size(); ++i) {
                CHECK(seen[i] != std::this_thread::get_id());
                CHECK(std::count(seen.begin(), seen.end(), seen[i]) == 1);
            }
        }
    }
}

TEST_CASE("node 0 on the caller's thread: a deadlock is still reported, a nested run refused") {
    const int d = largest_bound_dim(cpus_of_this_thread().size()) + 1;
    machine m(on(executor_kind::threads, d));
    // Everyone receives first; node 0 sleeps in the caller's thread, which is
    // also the watchdog.
    const std::vector<blocked_wait> waits = test::waits_when_all_receive(m);
    REQUIRE(waits.size() == std::size_t(1) << d);
    for (std::size_t i = 0; i < waits.size(); ++i) {
        CHECK(waits[i].node == int(i));
        CHECK(waits[i].dim == 0);
        CHECK(waits[i].peer == int(i ^ 1));
    }
    try {
        m.run([&](node& me) {
            if (me.id() == 0) m.run([](node&) {});
        });
        FAIL("run returned");
    } catch (const run_error& e) {
        CHECK(std::string(e.what()) == "node 0: machine::run called from inside a node program");
    }
    // Usable afterwards, and the caller is no node program any more.
    int sum = 0;
    m.run([&](node& me) {
        if (me.id() == 0) sum = 1;
    });
    CHECK(sum == 1);
}
