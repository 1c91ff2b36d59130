// sendrecv_routed: a routed send and receive in one call, whose large payload
// is lent to the receiver (copied once, straight from the sender's buffer)
// instead of buffered. Everything the router decides must be what
// send_routed and recv_routed give; only who copies the bytes changes.
#include <doctest/doctest.h>

#include <hcube/error.hpp>
#include <hcube/machine.hpp>

#include <atomic>
#include <chrono>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

// Above config::eager_limit (4 KiB): lent. Below: buffered as by send_routed.
constexpr std::size_t large = 3000, small = 5;

std::vector<int> payload(int from, int to, std::size_t n) {
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), from * 100000 + to * 1000);
    return v;
}

// Sends to `dest` and receives from `source`, with one call or with two.
void send_recv(node& me, bool one_call, int dest, const std::vector<int>& out, int source,
               std::vector<int>& in) {
    if (one_call) return me.sendrecv_routed(dest, out, source, in);
    me.send_routed(dest, out);
    me.recv_routed(source, in);
}

// Everything a report says that does not depend on the scheduler.
auto observable(const run_report& r) {
    std::vector<std::tuple<int, int, int, double, double, int, int>> events;
    for (const congestion_event& e : r.congestion)
        events.emplace_back(e.from, e.dim, e.source, e.wanted, e.granted, e.dest, 0);
    std::vector<std::tuple<int, int, int, std::int64_t, double, double, std::uint64_t, std::int64_t,
                           std::int64_t>>
        trace;
    for (const trace_record& t : r.trace)
        trace.emplace_back(t.from, t.to, t.dim, t.step, t.start, t.arrival, t.bytes, t.send_call,
                           t.recv_call);
    std::vector<std::tuple<int, call_kind, int, int, std::int64_t, double, double>> calls;
    for (const call_record& c : r.calls)
        calls.emplace_back(c.node, c.kind, c.dim, c.peer, c.step, c.start, c.end);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> links;
    for (const link_stats& l : r.links)
        links.emplace_back(l.messages, l.bytes);
    return std::tuple(r.virtual_time, r.steps, r.node_time, r.node_steps, r.routed_messages, events,
                      trace, calls, links);
}

// Round j's destination: 4-bit reversal plus 1 or 3, no fixed points, and
// E-cube paths that meet (2 -> 5 and 3 -> 13 both take 3 -> 1 -> 5).
int reversal_target(int id, int offset) {
    int r = 0;
    for (int b = 0; b < 4; ++b)
        r |= (id >> b & 1) << (3 - b);
    return (r + offset) % 16;
}

int reversal_source(int id, int offset) {
    int x = 0;
    while (reversal_target(x, offset) != id)
        ++x;
    return x;
}

} // namespace

TEST_CASE("sendrecv_routed: the same times, congestion, traffic and trace as send and recv") {
    // Three rounds of permutations with large and small payloads and random
    // real-time delays: congested, and every lender waits for a receiver that
    // may still be busy elsewhere.
    const int d = 4, p = 16;
    for (const auto ports : {port_model::single_port, port_model::all_port}) {
        CAPTURE(to_string(ports));
        machine mach(cfg(d, ports, 2, 0.01));
        mach.set_trace(true);
        std::vector<decltype(observable(run_report{}))> seen;
        for (int run = 0; run < 8; ++run) {
            const bool one_call = run % 2 == 1;
            std::atomic<int> wrong{0};
            const run_report r = mach.run([&](node& me) {
                std::minstd_rand rng(unsigned(run * p + me.id() + 1));
                for (int j = 1; j <= 3; ++j) {
                    for (int spin = int(rng() % 2000); spin > 0; --spin)
                        if (spin % 500 == 0) std::this_thread::yield();
                    const int offset = j == 2 ? 3 : 1;
                    const int dest = reversal_target(me.id(), offset),
                              source = reversal_source(me.id(), offset);
                    const std::size_t n = j == 2 ? small : large;
                    std::vector<int> in(n);
                    send_recv(me, one_call, dest, payload(me.id(), dest, n), source, in);
                    if (in != payload(source, me.id(), n)) ++wrong;
                }
            });
            CHECK(wrong == 0);
            CHECK(!r.congestion.empty());
            seen.push_back(observable(r));
        }
        CHECK(std::count(seen.begin(), seen.end(), seen.front()) == std::ptrdiff_t(seen.size()));
    }
}

TEST_CASE("a large sendrecv_routed returns once its receiver has the data") {
    machine mach(cfg(2));
    std::atomic<bool> receiving{false}, returned{false};
    mach.run([&](node& me) {
        if (me.id() == 0) {
            std::vector<int> out = payload(0, 1, large), in(1);
            me.sendrecv_routed(1, out, 2, in);
            returned = true;
            CHECK(receiving);
            std::fill(out.begin(), out.end(), -1); // node 1 has its copy
        }
        if (me.id() == 2) me.send_routed(0, std::vector<int>{2});
        if (me.id() == 1) {
            // Busy, not waiting: node 0 waits for this node, not as if buffered.
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            receiving = true;
            CHECK(me.recv_routed<int>(0) == payload(0, 1, large));
        }
    });
    CHECK(returned);
}

TEST_CASE("sendrecv_routed in place: a payload received over is buffered, not lent") {
    machine mach(cfg(3));
    std::atomic<int> wrong{0};
    for (int run = 0; run < 5; ++run)
        mach.run([&](node& me) {
            const int peer = me.id() ^ 5;
            std::vector<int> v = payload(me.id(), peer, large);
            me.sendrecv_routed(peer, v, peer, v);
            if (v != payload(peer, me.id(), large)) ++wrong;
        });
    CHECK(wrong == 0);
}

TEST_CASE("lenders go on as if buffered when every node would wait otherwise") {
    // Node 1 takes node 0's message only after node 3's, which node 3 sends
    // only after node 0's second message: node 0 must go on before its
    // first message was received, as it would after send_routed.
    for (const auto ports : {port_model::single_port, port_model::all_port}) {
        CAPTURE(to_string(ports));
        machine mach(cfg(2, ports, 1, 0.01));
        std::vector<decltype(observable(run_report{}))> seen;
        for (const bool one_call : {false, true, false, true}) {
            const run_report r = mach.run([&](node& me) {
                if (me.id() == 0) {
                    std::vector<int> in(1);
                    send_recv(me, one_call, 1, payload(0, 1, large), 2, in);
                    CHECK(in == std::vector<int>{2});
                    me.send_routed(3, std::vector<int>{0});
                }
                if (me.id() == 2) me.send_routed(0, std::vector<int>{2});
                if (me.id() == 3) {
                    CHECK(me.recv_routed<int>(0) == std::vector<int>{0});
                    me.send_routed(1, std::vector<int>{3});
                }
                if (me.id() == 1) {
                    CHECK(me.recv_routed<int>(3) == std::vector<int>{3});
                    CHECK(me.recv_routed<int>(0) == payload(0, 1, large));
                }
            });
            seen.push_back(observable(r));
        }
        CHECK(std::count(seen.begin(), seen.end(), seen.front()) == std::ptrdiff_t(seen.size()));
    }
}

TEST_CASE("a failure releases a waiting lender, and a lender that fails takes its loan back") {
    machine mach(cfg(2));
    std::string what;
    for (int rep = 0; rep < 10; ++rep) {
        // Node 0 waits for node 1 to take its payload; node 1 throws instead.
        try {
            mach.run([rep](node& me) {
                if (me.id() == 0) {
                    std::vector<int> in(1);
                    me.sendrecv_routed(1, payload(0, 1, large), 2, in);
                }
                if (me.id() == 2) me.send_routed(0, std::vector<int>{2});
                if (me.id() == 1) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(rep % 3));
                    throw std::runtime_error("node 1 gives up");
                }
            });
            FAIL("run returned");
        } catch (const run_error& e) {
            CHECK(std::string(e.what()) == "node 1: node 1 gives up");
        }
        // Node 0's receive fails while node 1 may be copying from its buffer,
        // which goes away as node 0 unwinds.
        try {
            mach.run([](node& me) {
                if (me.id() > 1) return;
                const int peer = 1 - me.id();
                std::vector<int> in(me.id() == 0 ? 7 : large);
                me.sendrecv_routed(peer, payload(me.id(), peer, me.id() == 0 ? large : small), peer,
                                   in);
            });
            FAIL("run returned");
        } catch (const run_error& e) {
            what = e.what();
        }
        CHECK(what == "node 0: recv_routed from node 1: expected 7 elements of 4 bytes, message "
                      "has 5 elements of 4 bytes");
    }
    // The machine runs again, lending.
    std::atomic<int> wrong{0};
    mach.run([&](node& me) {
        const int peer = me.id() ^ 3;
        std::vector<int> in(large);
        me.sendrecv_routed(peer, payload(me.id(), peer, large), peer, in);
        if (in != payload(peer, me.id(), large)) ++wrong;
    });
    CHECK(wrong == 0);
}
