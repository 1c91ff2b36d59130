// Stress: thousands of random exchange patterns on a 6-cube; every message is
// delivered exactly once, intact and in order.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include <hcube/machine.hpp>

#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

// Message `seq` from `from`: its length and contents follow from both, so the
// receiver can check it without being told.
std::size_t length_of(int from, int seq) {
    return std::size_t((from * 31 + seq * 17) % 23) * (seq % 7 == 0 ? 400 : 1);
}

std::vector<std::uint32_t> message(int from, int seq) {
    std::vector<std::uint32_t> v(length_of(from, seq));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = std::uint32_t(from * 1000003 + seq * 7919) ^ std::uint32_t(i);
    return v;
}

} // namespace

TEST_CASE("random exchange patterns on a 6-cube: no loss, duplication or reordering") {
    const int d = 6, rounds = 3000;
    for (port_model ports : {port_model::single_port, port_model::all_port}) {
        config c = cfg(d, ports);
        c.link_capacity = 3;
        c.eager_limit = 256; // mix borrowed and buffered exchanges
        machine m(c);
        std::atomic<long> received{0}, bad{0};
        m.run([&](node& me) {
            std::mt19937 pattern(12345); // same sequence on every node
            std::vector<int> seq_out(d, 0), seq_in(d, 0);
            const auto expect = [&](int k, const std::vector<std::uint32_t>& got) {
                if (got != message(me.neighbor(k), seq_in[k]++)) ++bad;
                ++received;
            };
            for (int r = 0; r < rounds; ++r) {
                const int kind = int(pattern() % 4);
                const int k = int(pattern() % unsigned(d));
                const int burst = 1 + int(pattern() % 3); // at most the link capacity
                const bool low = (me.id() >> k & 1) == 0;
                switch (kind) {
                case 0: // exchange on one link
                    expect(k, me.exchange(k, message(me.id(), seq_out[k]++)));
                    break;
                case 1: // a burst one way, then a burst back
                    for (int b = 0; b < burst; ++b) {
                        if (low)
                            me.send(k, message(me.id(), seq_out[k]++));
                        else
                            expect(k, me.recv<std::uint32_t>(k));
                    }
                    for (int b = 0; b < burst; ++b) {
                        if (!low)
                            me.send(k, message(me.id(), seq_out[k]++));
                        else
                            expect(k, me.recv<std::uint32_t>(k));
                    }
                    break;
                case 2: { // everyone sends on every link, then receives in a shuffled order
                    // (not recv_any: a faster neighbour's next-round message could be taken)
                    for (int j = 0; j < d; ++j)
                        me.send(j, message(me.id(), seq_out[j]++));
                    std::vector<int> order(d);
                    std::iota(order.begin(), order.end(), 0);
                    std::shuffle(order.begin(), order.end(), pattern);
                    for (int j : order)
                        expect(j, me.recv<std::uint32_t>(j));
                    break;
                }
                default: // all links at once where allowed
                    if (ports == port_model::all_port) {
                        std::vector<std::vector<std::uint32_t>> out(d), in(d);
                        std::vector<transfer<std::uint32_t>> ops;
                        for (int j = 0; j < d; ++j) {
                            out[j] = message(me.id(), seq_out[j]++);
                            in[j].resize(length_of(me.neighbor(j), seq_in[j]));
                            ops.push_back({j, out[j], in[j]});
                        }
                        me.exchange_all(ops);
                        for (int j = 0; j < d; ++j)
                            expect(j, in[j]);
                    }
                }
            }
        });
        CHECK(bad == 0);
        CHECK(received > 64L * rounds);
    }
}

TEST_CASE("random routed traffic: every pair's messages arrive in order") {
    const int d = 5, p = 32, rounds = 200;
    machine m(cfg(d, port_model::all_port, 1, 1));
    std::atomic<long> bad{0};
    m.run([&](node& me) {
        std::mt19937 pattern(777);
        for (int r = 0; r < rounds; ++r) {
            const int shift = 1 + int(pattern() % unsigned(p - 1));
            const int to = (me.id() + shift) % p, from = (me.id() - shift + p) % p;
            me.send_routed(to, message(me.id(), r));
            if (me.recv_routed<std::uint32_t>(from) != message(from, r)) ++bad;
        }
    });
    CHECK(bad == 0);
}
