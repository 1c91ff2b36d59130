// Virtual time: exact values for small patterns under both port models.
// Cost of one message of m words: t_s + t_w m (Grama et al. chapter 4 intro).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <thread>

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

TEST_CASE("recursive doubling: t_s log p + t_w m (p - 1) exactly (Grama et al. Eq. 4.4)") {
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

namespace {

// Nodes 1 and 2 each send node 0 four ints (t_s = 2, t_w = 3: 14 per message),
// node 1 after computing for `delay_1`; node 0 takes both with recv_any only
// once both are on its links, so it has a real choice. Returns the links in
// the order node 0 got them and node 0's clock after each.
struct recv_any_result {
    std::vector<int> dims;
    std::vector<double> clocks;
};
recv_any_result recv_any_from_two(port_model ports, double delay_1) {
    // Node 0 waits for the others outside the node interface (an atomic), which
    // only preemptive threads allow: fibers switch only inside node calls.
    config c = cfg(2, ports, 2, 3);
    c.executor = executor_kind::threads;
    machine m(c);
    std::atomic<int> sent{0};
    recv_any_result got;
    m.run([&](node& me) {
        const std::vector<int> four(4, me.id());
        if (me.id() == 1 || me.id() == 2) {
            if (me.id() == 1) me.compute(delay_1);
            me.send(me.id() == 1 ? 0 : 1, four); // buffered: on the link when it returns
            ++sent;
        } else if (me.id() == 0) {
            while (sent.load() < 2)
                std::this_thread::yield();
            for (int i = 0; i < 2; ++i) {
                const received<int> r = me.recv_any<int>();
                CHECK(r.data == std::vector<int>(4, me.neighbor(r.dim)));
                got.dims.push_back(r.dim);
                got.clocks.push_back(me.clock());
            }
        }
    });
    return got;
}

} // namespace

TEST_CASE("recv_any takes the earliest message in virtual time, not the lowest link") {
    for (port_model ports : {port_model::single_port, port_model::all_port}) {
        INFO("ports: " << to_string(ports));
        // Node 1's message (dim 0) leaves at 50 and arrives at 64; node 2's
        // (dim 1) arrives at 14.
        const recv_any_result r = recv_any_from_two(ports, 50);
        CHECK(r.dims == std::vector<int>{1, 0});
        CHECK(r.clocks == std::vector<double>{14, 64});
    }
}

TEST_CASE("recv_any's clock: the single-port receive port serializes two simultaneous arrivals") {
    // Both arrive at 14: single-port receives the second in 14..28, all-port
    // has a port per link.
    const recv_any_result single = recv_any_from_two(port_model::single_port, 0);
    CHECK(single.clocks == std::vector<double>{14, 28});
    const recv_any_result all = recv_any_from_two(port_model::all_port, 0);
    CHECK(all.clocks == std::vector<double>{14, 14});
    for (const auto& r : {single, all}) {
        std::vector<int> dims = r.dims;
        std::sort(dims.begin(), dims.end());
        CHECK(dims == std::vector<int>{0, 1});
    }
}

// A small single-port program on a 2-cube, t_s = 2, t_w = 1 (message of m
// ints: 2 + m), worked out by hand:
//   node 0: sends 3 ints to 1 at 0 (arrives 5; its port is busy to 5, 1 step),
//           then receives node 2's message: arrived 9, duration 4, so 5..9.
//   node 1: receives at 5 (1 step), sends 1 int to 3 at 5, arriving 8 (2 steps).
//   node 2: computes 5 (no step), sends 2 ints to 0 at 5, arriving 9 (1 step).
//   node 3: receives at 8 (2 steps).
TEST_CASE("the report's per-node times and steps and the trace's times, computed by hand") {
    machine m(cfg(2, port_model::single_port, 2, 1));
    m.set_trace(true);
    const run_report r = m.run([](node& me) {
        switch (me.id()) {
        case 0:
            me.send(0, std::vector<int>(3, 1));
            (void)me.recv<int>(1);
            break;
        case 1:
            (void)me.recv<int>(0);
            me.send(1, std::vector<int>{2});
            break;
        case 2:
            me.compute(5);
            me.send(1, std::vector<int>(2, 3));
            break;
        default:
            (void)me.recv<int>(1);
        }
    });
    CHECK(r.node_time == std::vector<double>{9, 8, 9, 8});
    CHECK(r.node_steps == std::vector<std::int64_t>{1, 2, 1, 2});
    CHECK(r.virtual_time == 9);
    CHECK(r.steps == 2);
    REQUIRE(r.trace.size() == 3);
    const auto check = [&](const trace_record& t, int from, int to, int dim, std::int64_t step,
                           double start, double arrival, std::uint64_t bytes) {
        CAPTURE(from);
        CHECK(t.from == from);
        CHECK(t.to == to);
        CHECK(t.dim == dim);
        CHECK(t.step == step);
        CHECK(t.start == start);
        CHECK(t.arrival == arrival);
        CHECK(t.bytes == bytes);
    };
    // In (from, send order).
    check(r.trace[0], 0, 1, 0, 0, 0, 5, 12);
    check(r.trace[1], 1, 3, 1, 1, 5, 8, 4);
    check(r.trace[2], 2, 0, 1, 0, 5, 9, 8);
}
