// Node threads and CPUs: with no more nodes than usable CPUs each node is
// bound to its own CPU (config::bind_to_cores); otherwise, or when switched
// off, nodes keep the constructing thread's CPUs. Fiber workers are never bound
// (fibers.cpp says why).
#include <doctest/doctest.h>

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

TEST_CASE("nodes get one CPU each when there are enough CPUs") {
    const std::vector<int> usable = cpus_of_this_thread();
    for (int d = 0; d <= largest_bound_dim(usable.size()); ++d) {
        machine m(on(executor_kind::threads, d));
        const auto seen = node_cpus(m);
        for (std::size_t i = 0; i < seen.size(); ++i)
            CHECK_MESSAGE(seen[i] == std::vector<int>{usable[i]}, "d = " << d << ", node " << i);
    }
}

TEST_CASE("nodes are not bound when they outnumber the CPUs or binding is off") {
    const std::vector<int> usable = cpus_of_this_thread();
    config oversubscribed = on(executor_kind::threads, largest_bound_dim(usable.size()) + 1);
    config off = on(executor_kind::threads, 0);
    off.bind_to_cores = false;
    for (const config& c : {oversubscribed, off}) {
        machine m(c);
        for (const auto& cpus : node_cpus(m))
            CHECK(cpus == usable);
    }
}

TEST_CASE("fibers: workers are not bound, whatever bind_to_cores says") {
    const std::vector<int> usable = cpus_of_this_thread();
    for (bool bind : {true, false}) {
        config c = on(executor_kind::fibers, 3);
        c.bind_to_cores = bind;
        machine m(c);
        for (const auto& cpus : node_cpus(m))
            CHECK(cpus == usable);
    }
}
