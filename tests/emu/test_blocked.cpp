// Nodes blocked in exchange_all or recv_any when the run is cancelled or
// deadlocks, and config::deadlock_grace.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hcube/machine.hpp>

#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

using clock_type = std::chrono::steady_clock;

void check_usable(machine& m) {
    int wrong = -1;
    test::neighbor_exchange(m, wrong);
    CHECK(wrong == 0);
}

// Every node but 3 exchanges `words` ints with both neighbours at once; node 3
// instead waits a moment (so the others are blocked on it) and throws.
// Above eager_limit (1024 ints = 4 KiB) the exchanges are rendezvous ones.
void exchange_all_then_throw(machine& m, std::size_t words) {
    m.run([&](node& me) {
        if (me.id() == 3) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            throw std::logic_error("node 3 gave up");
        }
        const std::vector<int> a(words, me.id()), b(words, -me.id());
        std::vector<int> ra(words), rb(words);
        me.exchange_all<int>({{0, a, ra}, {1, b, rb}});
    });
}

// The nodes a deadlock report lists, in its order.
std::vector<int> blocked_nodes(const deadlock_error& e) {
    std::vector<int> ids;
    for (const auto& w : e.waits())
        ids.push_back(w.node);
    return ids;
}

} // namespace

TEST_CASE("a node that throws cancels nodes blocked in exchange_all, buffered or rendezvous") {
    machine m(cfg(2, port_model::all_port));
    for (std::size_t words : {std::size_t{4}, std::size_t{4096}}) {
        CAPTURE(words);
        try {
            exchange_all_then_throw(m, words);
            FAIL("run returned");
        } catch (const run_error& e) {
            CHECK(e.node() == 3);
            CHECK(std::string(e.what()) == "node 3: node 3 gave up");
        }
        check_usable(m);
    }
}

TEST_CASE("a node that throws cancels nodes blocked in recv_any") {
    machine m(cfg(3));
    try {
        m.run([](node& me) {
            if (me.id() == 6) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                throw std::runtime_error("bad input on node 6");
            }
            (void)me.recv_any<int>(); // nobody sends
        });
        FAIL("run returned");
    } catch (const run_error& e) {
        CHECK(e.node() == 6);
        CHECK(std::string(e.what()) == "node 6: bad input on node 6");
    }
    check_usable(m);
}

TEST_CASE("deadlock while blocked in exchange_all: the nodes waiting on the missing one") {
    machine m(cfg(2, port_model::all_port));
    try {
        m.run([](node& me) {
            if (me.id() == 3) return; // never takes part
            const std::vector<int> a{me.id()}, b{me.id()};
            std::vector<int> ra(1), rb(1);
            me.exchange_all<int>({{0, a, ra}, {1, b, rb}});
        });
        FAIL("run returned");
    } catch (const deadlock_error& e) {
        // 0 exchanges with 1 and 2, which both sent to it: only 1 and 2 wait, on 3.
        CHECK(blocked_nodes(e) == std::vector<int>{1, 2});
        for (const auto& w : e.waits()) {
            CAPTURE(w.what);
            CHECK(w.what.find("recv on dim " + std::to_string(w.node == 1 ? 1 : 0) +
                              " from node 3") != std::string::npos);
        }
    }
    check_usable(m);
}

TEST_CASE("deadlock while blocked in recv_any lists every waiting node") {
    machine m(cfg(2));
    try {
        m.run([](node& me) {
            if (me.id() != 0) (void)me.recv_any<double>(); // node 0 never sends
        });
        FAIL("run returned");
    } catch (const deadlock_error& e) {
        CHECK(blocked_nodes(e) == std::vector<int>{1, 2, 3});
        for (const auto& w : e.waits())
            CHECK(w.what == "recv_any on any of its 2 links");
    }
    check_usable(m);
}

TEST_CASE("a decider kept off its core is no deadlock: the watchdog makes the decision it owes") {
    // Node 0 chooses between node 1's message (arriving at 3) and node 2's
    // link, whose sender waits at clock 0 for a chain that node 0's choice
    // starts (0 -> 1 -> 3 -> 2 -> 0), so its bound proves nothing: the choice
    // is made once all have parked, by the last of them. That node is
    // stalled for three graces first, as on a loaded machine: the watchdog
    // must make the decision, not report a deadlock. Under fibers every
    // node parks on a worker and the caller's thread ticks the watchdog, so
    // whichever node parks last, the stall and the tick are on two threads.
    static std::atomic<int> stalls{0};
    stalls = 0;
    detail::set_decider_hook([] {
        if (stalls++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    });
    config c = cfg(2);
    c.executor = executor_kind::fibers;
    c.deadlock_grace = std::chrono::milliseconds(50);
    machine m(c);
    int first = -1;
    const run_report r = m.run([&](node& me) {
        const int one[1] = {me.id()};
        const auto pass = [&](int from, int to) {
            (void)me.recv<int>(from);
            me.send(to, std::span<const int>(one));
        };
        switch (me.id()) {
        case 0:
            first = me.recv_any<int>().dim;
            me.send(0, std::span<const int>(one));
            (void)me.recv<int>(1);
            break;
        case 1:
            me.compute(2);
            me.send(0, std::span<const int>(one));
            pass(0, 1);
            break;
        case 2:
            pass(0, 1);
            break;
        case 3:
            pass(1, 0);
            break;
        }
    });
    detail::set_decider_hook(nullptr);
    CHECK(stalls.load() > 0);
    CHECK(first == 0);          // node 1's message
    CHECK(r.virtual_time == 7); // taken at 3, then four messages in turn
}

// The report cannot come before the grace period has passed, and a short grace
// reports sooner than a long one. Only lower bounds and an ordering: upper
// bounds on wall time would flake on a loaded machine.
TEST_CASE("config::deadlock_grace: a longer grace delays the report, a shorter one shortens it") {
    const auto time_to_report = [](std::chrono::milliseconds grace) {
        config c = cfg(1);
        c.deadlock_grace = grace;
        machine m(c);
        const auto t0 = clock_type::now();
        CHECK_THROWS_AS(m.run([](node& me) { (void)me.recv<int>(0); }), deadlock_error);
        return clock_type::now() - t0;
    };
    const auto long_grace = std::chrono::milliseconds(1200);
    const auto slow = time_to_report(long_grace);
    const auto fast = time_to_report(std::chrono::milliseconds(10));
    CHECK(slow >= long_grace);
    CHECK(fast < slow);
}
