// The E-cube router (seed 000, 4.5.3): delivery, per-pair order, cut-through
// cost, traffic on every link of the path, congestion.
#include <doctest/doctest.h>

#include <hcube/machine.hpp>
#include <hcube/topology.hpp>

#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

TEST_CASE("routed messages reach any node, in order per pair, at cut-through cost") {
    machine m(cfg(3, port_model::single_port, 4, 1));
    const run_report r = m.run([](node& me) {
        if (me.id() == 1) {
            me.send_routed(6, std::vector<int>{1, 2, 3});
            me.send_routed(6, std::vector<int>{4});
        }
        if (me.id() == 6) {
            std::vector<int> first(3);
            me.recv_routed(1, first);
            CHECK(first == std::vector<int>{1, 2, 3});
            CHECK(me.recv_routed<int>(1) == std::vector<int>{4});
        }
    });
    // 1 -> 6 differ in dims 0, 1, 2: path 1 -> 0 -> 2 -> 6.
    CHECK(r.routed_messages == 2);
    for (auto [from, k] : {std::pair{1, 0}, std::pair{0, 1}, std::pair{2, 2}}) {
        CHECK(r.link(from, k).messages == 2);
        CHECK(r.link(from, k).bytes == 16);
    }
    CHECK(r.messages == 6);
    CHECK(r.node_time[6] == (4 + 3) + (4 + 1)); // the second waits for the sender's port
    CHECK(r.congestion.empty());
}

TEST_CASE("two messages on one directed link at once: one congestion event, one delay") {
    // 0 -> 3 uses links 0->1 (dim 0) and 1->3 (dim 1); 1 -> 3 uses 1->3 too.
    machine m(cfg(2, port_model::all_port, 1, 1));
    const run_report r = m.run([](node& me) {
        const std::vector<int> five(5, me.id());
        if (me.id() == 0 || me.id() == 1) me.send_routed(3, five);
        if (me.id() == 3) {
            CHECK(me.recv_routed<int>(0) == std::vector<int>(5, 0));
            CHECK(me.recv_routed<int>(1) == std::vector<int>(5, 1));
        }
    });
    REQUIRE(r.congestion.size() == 1);
    CHECK(r.congestion[0].from == 1);
    CHECK(r.congestion[0].dim == 1);
    CHECK(r.congestion[0].wanted == 0);
    CHECK(r.congestion[0].granted == 6);
    CHECK(r.virtual_time == 12);
    CHECK(r.link(1, 1).messages == 2);
}

TEST_CASE("Algorithm 4.10 pattern: p - 1 routed steps without congestion") {
    const int d = 4, p = 16;
    machine m(cfg(d, port_model::single_port, 2, 1));
    std::atomic<int> bad{0};
    const run_report r = m.run([&](node& me) {
        for (int j = 1; j < p; ++j) {
            const int partner = me.id() ^ j;
            me.send_routed(partner, std::vector<int>(3, me.id()));
            if (me.recv_routed<int>(partner) != std::vector<int>(3, partner)) ++bad;
        }
    });
    CHECK(bad == 0);
    CHECK(r.congestion.empty());
    CHECK(r.virtual_time == (p - 1) * (2 + 3)); // Eq. 4.10
    std::uint64_t hops = 0;
    for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j)
            hops += std::uint64_t(hamming(node_id(i), node_id(j)));
    CHECK(r.messages == hops);
}

TEST_CASE("router errors name the node and the values") {
    machine m(cfg(2));
    const auto failure = [&](const std::function<void(node&)>& f) {
        try {
            m.run(f);
        } catch (const run_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(failure([](node& me) {
              if (me.id() == 1) me.send_routed(4, std::vector<int>{1});
          }) == "node 1: send_routed to node 4, outside 0..3");
    CHECK(failure([](node& me) {
              if (me.id() == 2) me.send_routed(2, std::vector<int>{1});
          }) == "node 2: send_routed to itself; routed messages go to other nodes");
    CHECK(failure([](node& me) {
              if (me.id() == 0) me.send_routed(3, std::vector<int>{1, 2});
              if (me.id() == 3) {
                  std::vector<int> one(1);
                  me.recv_routed(0, one);
              }
          }) == "node 3: recv_routed from node 0: expected 1 elements of 4 bytes, message has 2 "
                "elements of 4 bytes");
    CHECK_THROWS_WITH_AS(m.run([](node& me) {
        if (me.id() == 0) (void)me.recv_routed<int>(3);
    }),
                         doctest::Contains("node 0: recv_routed from node 3"), deadlock_error);
}
