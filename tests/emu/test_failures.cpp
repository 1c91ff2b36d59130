// Failure behaviour: exceptions cancel the run, deadlocks are reported, bad
// arguments name the node and the values, and the machine stays usable.
#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include <hcube/machine.hpp>

#include "sanitizers.hpp"
#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

// The message of the run_error that `program` raises on `m`.
std::string run_failure(machine& m, const std::function<void(node&)>& program) {
    try {
        m.run(program);
    } catch (const run_error& e) {
        return e.what();
    }
    return "no run_error";
}

// The machine still runs a full exchange correctly.
void check_usable(machine& m) {
    int wrong = -1;
    test::neighbor_exchange(m, wrong);
    CHECK(wrong == 0);
}

} // namespace

TEST_CASE("a throwing node program cancels the run, names the node and keeps the original") {
    machine m(cfg(4));
    try {
        m.run([](node& me) {
            if (me.id() == 5) throw std::out_of_range("index 7 past the end");
            int x = 0;
            me.recv(0, std::span(&x, 1)); // everyone else blocks forever without cancel
        });
        FAIL("run returned");
    } catch (const run_error& e) {
        CHECK(e.node() == 5);
        CHECK(std::string(e.what()) == "node 5: index 7 past the end");
        CHECK_THROWS_AS(std::rethrow_exception(e.original()), std::out_of_range);
    }
    check_usable(m);
}

TEST_CASE("two nodes that both receive first: deadlock reported quickly, never a hang") {
    machine m(cfg(1));
    const auto t0 = std::chrono::steady_clock::now();
    try {
        m.run([](node& me) {
            int x = 0;
            me.recv(0, std::span(&x, 1));
            me.send(0, std::span(&x, 1));
        });
        FAIL("run returned");
    } catch (const deadlock_error& e) {
        CHECK(e.waits().size() == 2);
        const std::string what = e.what();
        CHECK(what.find("node 0: recv on dim 0 from node 1, expecting 4 bytes") !=
              std::string::npos);
        CHECK(what.find("node 1: recv on dim 0 from node 0, expecting 4 bytes") !=
              std::string::npos);
    }
    CHECK(std::chrono::steady_clock::now() - t0 <
          std::chrono::seconds(1) * test::sanitizer_slowdown);
    check_usable(m);
}

TEST_CASE("deadlock with some nodes finished lists only the blocked ones") {
    machine m(cfg(2));
    try {
        m.run([](node& me) {
            if (me.id() == 3) {
                std::vector<double> v;
                v = me.recv<double>(1); // node 1 never sends
            }
        });
        FAIL("run returned");
    } catch (const deadlock_error& e) {
        REQUIRE(e.waits().size() == 1);
        CHECK(e.waits()[0].node == 3);
        CHECK(e.waits()[0].what == "recv on dim 1 from node 1");
    }
}

TEST_CASE("synchronous links expose a program that relies on eager buffering") {
    config c = cfg(1);
    c.link_capacity = 0;
    machine m(c);
    const auto unsafe = [](node& me) {
        const int x = me.id();
        int y = -1;
        me.send(0, std::span(&x, 1)); // both send first: fine only with buffering
        me.recv(0, std::span(&y, 1));
    };
    CHECK_THROWS_WITH_AS(m.run(unsafe), doctest::Contains("delivery on dim 0 to node"),
                         deadlock_error);
    c.link_capacity = 1;
    machine buffered(c);
    CHECK_NOTHROW(buffered.run(unsafe));
}

TEST_CASE("a link holds exactly link_capacity messages; one more blocks the sender") {
    // Both ends send n, then receive n: fine while n <= capacity (the ring
    // rounds its slots up to a power of two but must not use the extra ones).
    for (std::size_t capacity : {1, 2, 3, 5}) {
        config c = cfg(1);
        c.link_capacity = capacity;
        machine m(c);
        const auto send_then_recv = [](int n) {
            return [n](node& me) {
                for (int i = 0; i < n; ++i)
                    me.send(0, std::span(&i, 1));
                for (int i = 0; i < n; ++i) {
                    int got = -1;
                    me.recv(0, std::span(&got, 1));
                    if (got != i) throw std::runtime_error("out of order");
                }
            };
        };
        CHECK_NOTHROW(m.run(send_then_recv(int(capacity))));
        CHECK_THROWS_WITH_AS(
            m.run(send_then_recv(int(capacity) + 1)),
            doctest::Contains("send on dim 0 to node 1 (4 bytes): the link is full"),
            deadlock_error);
    }
}

TEST_CASE("a full link blocks the sender; a receiver that never comes is a deadlock") {
    config c = cfg(1);
    c.link_capacity = 2;
    machine m(c);
    CHECK_THROWS_WITH_AS(
        m.run([](node& me) {
            if (me.id() == 0)
                for (int i = 0; i < 3; ++i)
                    me.send(0, std::span(&i, 1));
        }),
        doctest::Contains("node 0: send on dim 0 to node 1 (4 bytes): the link is full"),
        deadlock_error);
}

TEST_CASE("messages nobody received are an error, not silently lost") {
    machine m(cfg(2));
    CHECK_THROWS_WITH_AS(m.run([](node& me) {
        if (me.id() == 2) me.send(1, std::vector<int>{1, 2, 3});
    }),
                         doctest::Contains("node 2 -> node 0 on dim 1: 1 message, 12 bytes"),
                         error);
    check_usable(m); // the leftover message was drained
}

TEST_CASE("receive size mismatch names the node and both sizes") {
    machine m(cfg(1));
    const std::string what = run_failure(m, [](node& me) {
        if (me.id() == 0)
            me.send(0, std::vector<double>(3));
        else {
            std::vector<double> two(2);
            me.recv(0, two);
        }
    });
    CHECK(what == "node 1: recv from node 0 on dimension 0: expected 2 elements of 8 bytes, "
                  "message has 3 elements of 8 bytes");
    check_usable(m);
}

TEST_CASE("element type mismatch is reported") {
    machine m(cfg(1));
    CHECK(run_failure(m,
                      [](node& me) {
                          if (me.id() == 0)
                              me.send(0, std::vector<double>(2));
                          else
                              (void)me.recv<float>(0);
                      }) ==
          "node 1: recv from node 0 on dimension 0: message was sent as 8-byte elements, "
          "received as 4-byte elements");
}

TEST_CASE("dimension out of range names the node, the operation and the dimension") {
    machine m(cfg(3));
    CHECK(run_failure(m, [](node& me) {
              if (me.id() == 6) me.send(3, std::vector<int>{1});
          }) == "node 6: send on dimension 3, outside 0..2 of a 3-cube");
    CHECK(run_failure(m, [](node& me) {
              if (me.id() == 2) (void)me.recv<int>(-1);
          }) == "node 2: recv on dimension -1, outside 0..2 of a 3-cube");
    CHECK(run_failure(m, [](node& me) {
              if (me.id() == 1) (void)me.neighbor(7);
          }) == "node 1: neighbor(7): dimension outside 0..2 of a 3-cube");
    check_usable(m);
}

TEST_CASE("exchange_all is refused under single-port and with a dimension given twice") {
    machine single(cfg(2));
    CHECK(run_failure(single, [](node& me) {
              int a = 0, b = 0;
              me.exchange_all<int>({{0, std::span(&a, 1), std::span(&b, 1)}});
          }).find("exchange_all needs the all-port model") != std::string::npos);

    machine all(cfg(2, port_model::all_port));
    CHECK(run_failure(all, [](node& me) {
              int a = 0, b = 0, c = 0;
              me.exchange_all<int>({{1, std::span(&a, 1), std::span(&b, 1)},
                                    {1, std::span(&a, 1), std::span(&c, 1)}});
          }).find("exchange_all lists dimension 1 twice") != std::string::npos);
    check_usable(all);
}

TEST_CASE("machine configuration errors") {
    CHECK_THROWS_WITH_AS(machine(cfg(-1)), "machine: dimension -1 is outside 0..16", usage_error);
    CHECK_THROWS_WITH_AS(machine(cfg(17)), "machine: dimension 17 is outside 0..16", usage_error);
    CHECK_THROWS_AS(machine(cfg(1, port_model::single_port, -1, 0)), usage_error);
    machine m(cfg(1));
    CHECK_THROWS_AS(m.set_cost({1, std::numeric_limits<double>::infinity(), 0}), usage_error);
}

TEST_CASE("run from inside a node program is refused") {
    machine m(cfg(0));
    CHECK(run_failure(m, [&](node&) { m.run([](node&) {}); }) ==
          "node 0: machine::run called from inside a node program");
}

TEST_CASE("a rendezvous exchange whose peer fails does not leave a dangling buffer") {
    config c = cfg(1);
    c.eager_limit = 16; // every exchange below borrows the sender's buffer
    machine m(c);
    for (int rep = 0; rep < 20; ++rep) {
        CHECK(run_failure(m, [](node& me) {
                  std::vector<int> out(1000, me.id()), in(1000);
                  if (me.id() == 1) throw std::runtime_error("peer failed");
                  me.exchange(0, out, in);
              }) == "node 1: peer failed");
    }
    check_usable(m);
}
