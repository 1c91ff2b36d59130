// Virtual time: exact values for small patterns under both port models.
// Cost of one message of m words: t_s + t_w m (seed 000, chapter 4 intro).
#include <doctest/doctest.h>

#include <hcube/machine.hpp>
#include <hcube/topology.hpp>

#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

// Node 0 sends 4 words on each of its 3 links in turn; the others receive.
run_report fan_out(port_model ports) {
    machine m(cfg(3, ports, 2, 3)); // one message: 2 + 3 * 4 = 14
    return m.run([](node& me) {
        const std::vector<int> four(4, 7);
        if (me.id() == 0)
            for (int k = 0; k < 3; ++k)
                me.send(k, four);
        else if (std::has_single_bit(unsigned(me.id())))
            (void)me.recv<int>(std::countr_zero(unsigned(me.id())));
    });
}

} // namespace

TEST_CASE("single-port: one send at a time, so the three sends follow each other") {
    const run_report r = fan_out(port_model::single_port);
    CHECK(r.node_time[1] == 14);
    CHECK(r.node_time[2] == 28);
    CHECK(r.node_time[4] == 42);
    CHECK(r.node_time[0] == 42); // its port was busy until then
    CHECK(r.node_time[3] == 0);
    CHECK(r.virtual_time == 42);
    CHECK(r.steps == 3);
}

TEST_CASE("all-port: the three sends overlap") {
    const run_report r = fan_out(port_model::all_port);
    CHECK(r.node_time[1] == 14);
    CHECK(r.node_time[2] == 14);
    CHECK(r.node_time[4] == 14);
    CHECK(r.virtual_time == 14);
    CHECK(r.steps == 1);
}

TEST_CASE("single-port: one receive at a time; all-port: one per link") {
    for (auto [ports, expect] :
         {std::pair{port_model::single_port, 28.0}, std::pair{port_model::all_port, 14.0}}) {
        machine m(cfg(2, ports, 2, 3));
        const run_report r = m.run([](node& me) {
            const std::vector<int> four(4, 1);
            if (me.id() == 1 || me.id() == 2) me.send(me.id() == 1 ? 0 : 1, four);
            if (me.id() == 0) {
                (void)me.recv<int>(0);
                (void)me.recv<int>(1);
            }
        });
        CHECK(r.node_time[0] == expect);
        CHECK(r.virtual_time == expect);
    }
}

TEST_CASE("a send and a receive overlap: an exchange costs one message time") {
    machine m(cfg(1, port_model::single_port, 3, 2));
    const run_report r = m.run([](node& me) {
        const std::vector<double> out(5, 1.0);
        std::vector<double> in(5);
        me.exchange(0, out, in);
    });
    CHECK(r.virtual_time == 3 + 2 * 5);
    CHECK(r.node_time[0] == r.node_time[1]);
}

TEST_CASE("recursive doubling: t_s log p + t_w m (p - 1) exactly (seed 000, Eq. 4.4)") {
    for (int d = 0; d <= 6; ++d) {
        const int p = 1 << d;
        for (int mw : {1, 3}) {
            machine m(cfg(d, port_model::single_port, 5, 2));
            const run_report r = m.run([&](node& me) {
                std::vector<int> data(std::size_t(mw), me.id());
                for (int k = 0; k < d; ++k) {
                    std::vector<int> theirs(data.size());
                    me.exchange(k, data, theirs);
                    data.insert(data.end(), theirs.begin(), theirs.end());
                }
            });
            CHECK(r.virtual_time == 5 * d + 2 * mw * (p - 1));
            CHECK(r.steps == d);
        }
    }
}

TEST_CASE("a token around the Gray-code ring takes p - 1 message times") {
    const int d = 4, p = 16;
    machine m(cfg(d, port_model::single_port, 1, 1));
    const run_report r = m.run([&](node& me) {
        const auto pos = gray_inverse(node_id(me.id()));
        std::vector<int> token(2, 0);
        if (pos > 0) me.recv(gray_transition(pos - 1, d), token);
        if (pos + 1 < node_id(p)) me.send(gray_transition(pos, d), token);
    });
    CHECK(r.virtual_time == (p - 1) * (1 + 2));
    CHECK(r.steps == p - 1);
}

TEST_CASE("compute() adds local work to the clock") {
    machine m(cfg(1, port_model::single_port, 1, 1));
    const run_report r = m.run([](node& me) {
        if (me.id() == 0) {
            me.compute(10);
            me.send(0, std::vector<int>{1, 2});
        } else {
            (void)me.recv<int>(0);
            CHECK(me.clock() == 13);
            CHECK(me.steps() == 1);
        }
    });
    CHECK(r.virtual_time == 13);
}

TEST_CASE("word size: bytes per word rounds messages up to whole words") {
    config c = cfg(1, port_model::single_port, 0, 1);
    c.cost.word_bytes = 8;
    machine m(c);
    const run_report r = m.run([](node& me) {
        if (me.id() == 0)
            me.send(0, std::vector<std::int32_t>(3)); // 12 bytes: 2 words
        else
            (void)me.recv<std::int32_t>(0);
    });
    CHECK(r.virtual_time == 2);
}

TEST_CASE("virtual time does not depend on the OS scheduler") {
    machine m(cfg(5, port_model::single_port, 3, 1));
    std::vector<std::vector<double>> times;
    for (int rep = 0; rep < 5; ++rep) {
        const run_report r = m.run([](node& me) {
            // Irregular pattern: sizes depend on the node and the dimension.
            for (int k = 0; k < me.dim(); ++k) {
                const std::vector<int> out(std::size_t(me.id() % 5 + k), 1);
                (void)me.exchange(k, out);
            }
        });
        times.push_back(r.node_time);
    }
    for (const auto& t : times)
        CHECK(t == times.front());
}

TEST_CASE("the run report counts messages and bytes per directed link, and traces them") {
    machine m(cfg(2));
    m.set_trace(true);
    const run_report r = m.run([](node& me) {
        if (me.id() == 0) {
            me.send(1, std::vector<std::int64_t>(3));
            me.send(1, std::vector<std::int64_t>(1));
        }
        if (me.id() == 2) {
            (void)me.recv<std::int64_t>(1);
            (void)me.recv<std::int64_t>(1);
        }
    });
    CHECK(r.link(0, 1).messages == 2);
    CHECK(r.link(0, 1).bytes == 32);
    CHECK(r.messages == 2);
    CHECK(r.bytes == 32);
    CHECK(r.max_link_bytes() == 32);
    REQUIRE(r.trace.size() == 2);
    CHECK(r.trace[0].from == 0);
    CHECK(r.trace[0].to == 2);
    CHECK(r.trace[0].dim == 1);
    CHECK(r.trace[0].step == 0);
    CHECK(r.trace[1].step == 1);
    CHECK(r.trace[1].start == 1);
    CHECK(r.summary().find("busiest link  0 -> 2 (dim 1): 2 messages, 32 bytes") !=
          std::string::npos);
}
