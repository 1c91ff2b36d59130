// Links: FIFO order, payload paths (inline, heap, borrowed), back-pressure,
// synchronous links, any-size receives, exchange and exchange_all.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <fstream>
#include <numeric>

#include <unistd.h>

#include <hcube/machine.hpp>

#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

std::vector<std::int64_t> payload(int from, int seq, std::size_t n) {
    std::vector<std::int64_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = std::int64_t(from) << 40 | std::int64_t(seq) << 20 | std::int64_t(i);
    return v;
}

// An element type of N bytes whose every byte depends on (seed, i, byte).
template <std::size_t N>
struct blob {
    unsigned char b[N];
    friend bool operator==(const blob&, const blob&) = default;
};

template <std::size_t N>
std::vector<blob<N>> blobs(std::size_t n, int seed) {
    std::vector<blob<N>> v(n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < N; ++j)
            v[i].b[j] = static_cast<unsigned char>(seed * 31 + int(i) * 7 + int(j % 251));
    return v;
}

// Every way a message of three N-byte elements can travel in a 2-cube at
// t_s = 1, t_w = 1 (each element one word): send/recv, any-size recv,
// exchange, recv_any, routed exact and any-size. Returns the number of wrong
// payloads or receive times.
template <std::size_t N>
int big_elements_round_trip() {
    machine m(cfg(2, port_model::single_port, 1, 1));
    std::atomic<int> bad{0};
    const auto expect = [&](bool ok) {
        if (!ok) ++bad;
    };
    const run_report r = m.run([&](node& me) {
        const auto mine = blobs<N>(3, me.id());
        const auto theirs = [&](int k) { return blobs<N>(3, me.neighbor(k)); };
        std::vector<blob<N>> in(3);
        if (me.id() == 0) me.send(0, mine);
        if (me.id() == 1) {
            me.recv(0, in);
            expect(in == theirs(0) && me.clock() == 4); // 1 + 3 words
        }
        if (me.id() == 2) me.send(0, mine);
        if (me.id() == 3) expect(me.recv<blob<N>>(0) == theirs(0) && me.clock() == 4);
        // exchange (above eager_limit: the receiver copies from the sender).
        me.exchange(0, mine, in);
        expect(in == theirs(0));
        expect(me.exchange(1, mine) == theirs(1));
        me.send(0, mine);
        const auto any = me.recv_any<blob<N>>();
        expect(any.dim == 0 && any.data == theirs(0));
        if (me.id() == 0) {
            me.send_routed(3, mine);
            me.send_routed(3, mine);
        }
        if (me.id() == 3) {
            me.recv_routed(0, in);
            expect(in == blobs<N>(3, 0));
            expect(me.recv_routed<blob<N>>(0) == blobs<N>(3, 0));
        }
    });
    CHECK(r.bytes > 0);
    return bad;
}

} // namespace

TEST_CASE("elements of any size travel and are counted as one word each") {
    // 65536 and 70000 bytes once wrapped in a 16-bit element size (to 0 and
    // 4464) and every receive failed.
    CHECK(big_elements_round_trip<1>() == 0);
    CHECK(big_elements_round_trip<65536>() == 0);
    CHECK(big_elements_round_trip<70000>() == 0);
}

TEST_CASE("exchange_all deduces the element type of a braced list") {
    machine m(cfg(2, port_model::all_port));
    std::atomic<int> bad{0};
    m.run([&](node& me) {
        const std::vector<int> a{me.id(), 10}, b{me.id(), 20, 30};
        std::vector<int> ra(2), rb(3);
        me.exchange_all({{0, a, ra}, {1, b, rb}}); // vectors
        if (ra != std::vector<int>{me.neighbor(0), 10} ||
            rb != std::vector<int>{me.neighbor(1), 20, 30})
            ++bad;
        double x = me.id() + 0.5, y = -1;
        me.exchange_all({{1, std::span(&x, 1), std::span(&y, 1)}}); // spans
        if (y != me.neighbor(1) + 0.5) ++bad;
    });
    CHECK(bad == 0);
}

TEST_CASE("messages on one link arrive complete and in FIFO order, for every payload size") {
    // 0..4 elements travel inline (32 bytes), 5 and up on the heap; 16 messages
    // per link exceed capacities 1, 3 (a ring of 4 slots, 3 usable) and 4, so
    // the sender also meets back-pressure.
    for (std::size_t capacity : {std::size_t(1), std::size_t(3), std::size_t(4), std::size_t(64)}) {
        config c = cfg(2);
        c.link_capacity = capacity;
        machine m(c);
        const std::vector<std::size_t> sizes{0, 1, 4, 5, 1000, 3, 20000, 2};
        std::atomic<int> bad{0};
        m.run([&](node& me) {
            for (int k = 0; k < me.dim(); ++k) {
                const bool sender = (me.id() >> k & 1) == 0;
                for (int rep = 0; rep < 2; ++rep)
                    for (std::size_t s = 0; s < sizes.size(); ++s) {
                        const int seq = rep * 100 + int(s);
                        if (sender) {
                            me.send(k, payload(me.id(), seq, sizes[s]));
                        } else {
                            const auto got = me.recv<std::int64_t>(k);
                            if (got != payload(me.neighbor(k), seq, sizes[s])) ++bad;
                        }
                    }
            }
        });
        CHECK(bad == 0);
    }
}

TEST_CASE("recv into an exact-size span, and exchange in both payload paths") {
    machine m(cfg(3, port_model::all_port));
    for (std::size_t n : {std::size_t(0), std::size_t(3), std::size_t(4096), std::size_t(100000)}) {
        std::atomic<int> bad{0};
        m.run([&](node& me) {
            for (int k = 0; k < me.dim(); ++k) {
                const auto out = payload(me.id(), k, n);
                std::vector<std::int64_t> in(n, -1);
                me.exchange(k, out, in);
                if (in != payload(me.neighbor(k), k, n)) ++bad;
                // The any-size reply form.
                if (me.exchange(k, out) != payload(me.neighbor(k), k, n)) ++bad;
            }
        });
        CHECK_MESSAGE(bad == 0, "n = " << n);
    }
}

TEST_CASE("exchange_all moves one message each way on every listed link") {
    machine m(cfg(4, port_model::all_port));
    for (std::size_t n : {std::size_t(1), std::size_t(700)}) {
        std::atomic<int> bad{0};
        const run_report r = m.run([&](node& me) {
            std::vector<std::vector<std::int64_t>> out, in;
            std::vector<transfer<std::int64_t>> ops;
            for (int k = 0; k < me.dim(); ++k) {
                out.push_back(payload(me.id(), k, n + std::size_t(k)));
                in.emplace_back(n + std::size_t(k));
            }
            for (int k = me.dim() - 1; k >= 0; --k)
                ops.push_back({k, out[k], in[k]});
            me.exchange_all(ops);
            for (int k = 0; k < me.dim(); ++k)
                if (in[k] != payload(me.neighbor(k), k, n + std::size_t(k))) ++bad;
        });
        CHECK(bad == 0);
        CHECK(r.messages == 16u * 4u);
        CHECK(r.steps == 1);
        for (const auto& l : r.links)
            CHECK(l.messages == 1);
    }
}

// One-sided transfers around the Gray-code cycle 0 1 3 2 6 7 5 4 of a 3-cube:
// each node only sends to its successor and only receives from its
// predecessor. With blocking sends before the receives this cycle deadlocks
// on unbuffered links; exchange_all posts every send first. Sizes differ per
// node (node 7's is above eager_limit, borrowed), so the charging is checked
// link by link: a send holds its port t_s + t_w m, a receive ends at arrival.
TEST_CASE("exchange_all with one-sided transfers: a cycle at capacity 0, no empty messages") {
    constexpr int cycle[] = {0, 1, 3, 2, 6, 7, 5, 4};
    const auto words = [](int x) { return std::size_t(1 + 100 * x); };
    for (std::size_t capacity : {std::size_t(0), std::size_t(16)}) {
        CAPTURE(capacity);
        config c = cfg(3, port_model::all_port, 5, 2);
        c.link_capacity = capacity;
        machine m(c);
        std::atomic<int> bad{0};
        int succ[8], pred[8];
        for (int i = 0; i < 8; ++i) {
            succ[cycle[i]] = cycle[(i + 1) % 8];
            pred[cycle[(i + 1) % 8]] = cycle[i];
        }
        const run_report r = m.run([&](node& me) {
            const int x = me.id();
            const auto out = payload(x, 0, words(x));
            std::vector<std::int64_t> in(words(pred[x]));
            const int to = std::countr_zero(unsigned(x ^ succ[x]));
            const int from = std::countr_zero(unsigned(x ^ pred[x]));
            me.exchange_all<std::int64_t>({transfer<std::int64_t>::recv_only(from, in),
                                           transfer<std::int64_t>::send_only(to, out)});
            if (in != payload(pred[x], 0, words(pred[x]))) ++bad;
        });
        CHECK(bad == 0);
        CHECK(r.messages == 8u);
        CHECK(r.steps == 1);
        for (int x = 0; x < 8; ++x) {
            CAPTURE(x);
            CHECK(r.node_time[std::size_t(x)] ==
                  std::max(5.0 + 2.0 * double(words(pred[x])), 5.0 + 2.0 * double(words(x))));
        }
    }
}

TEST_CASE("recv_any returns every message once, with the link it came on") {
    machine m(cfg(3));
    std::atomic<int> bad{0};
    m.run([&](node& me) {
        for (int k = 0; k < me.dim(); ++k)
            me.send(k, payload(me.id(), k, std::size_t(k) + 1));
        unsigned seen = 0;
        for (int i = 0; i < me.dim(); ++i) {
            const auto r = me.recv_any<std::int64_t>();
            if (seen & (1u << r.dim)) ++bad;
            seen |= 1u << r.dim;
            if (r.data != payload(me.neighbor(r.dim), r.dim, std::size_t(r.dim) + 1)) ++bad;
        }
    });
    CHECK(bad == 0);
}

TEST_CASE("capacity 0 makes sends synchronous but correct programs still run") {
    config c = cfg(3);
    c.link_capacity = 0;
    machine m(c);
    std::atomic<int> bad{0};
    m.run([&](node& me) {
        for (int k = 0; k < me.dim(); ++k) {
            // Safe ordering: the lower end sends first.
            const std::int64_t mine = me.id();
            std::int64_t theirs = -1;
            if ((me.id() >> k & 1) == 0) {
                me.send(k, std::span(&mine, 1));
                me.recv(k, std::span(&theirs, 1));
            } else {
                me.recv(k, std::span(&theirs, 1));
                me.send(k, std::span(&mine, 1));
            }
            if (theirs != me.neighbor(k)) ++bad;
            // exchange is safe on synchronous links too.
            theirs = -1;
            me.exchange(k, std::span(&mine, 1), std::span(&theirs, 1));
            if (theirs != me.neighbor(k)) ++bad;
        }
    });
    CHECK(bad == 0);
}

TEST_CASE("a ring's slots take memory only once messages use them") {
    // At the maximum capacity a 2-cube's 8 rings hold 512 MiB of slots; a run
    // that sends a few messages on each touches a few pages of them.
    const auto resident = [] {
        long pages = 0, in_memory = 0;
        std::ifstream("/proc/self/statm") >> pages >> in_memory;
        return double(in_memory) * double(sysconf(_SC_PAGESIZE));
    };
    const double before = resident();
    config c = cfg(2);
    c.links = link_impl::ring;
    c.link_capacity = max_link_capacity;
    machine m(c);
    for (int run = 0; run < 3; ++run)
        m.run([](node& me) {
            for (int k = 0; k < me.dim(); ++k)
                CHECK(me.exchange(k, std::vector<int>(3, me.id()))[0] == me.neighbor(k));
        });
    CHECK(resident() - before < 64.0 * (1 << 20));
}

TEST_CASE("a machine runs many programs and keeps its threads") {
    machine m(cfg(5));
    for (int run = 0; run < 20; ++run) {
        std::vector<int> seen(32, -1);
        m.run([&](node& me) { seen[me.id()] = me.id() * run; });
        for (int i = 0; i < 32; ++i)
            REQUIRE(seen[i] == i * run);
    }
}

TEST_CASE("a 10-cube runs a full exchange on every link") {
    machine m(cfg(10, port_model::all_port));
    int wrong = -1;
    const run_report r = test::neighbor_exchange(m, wrong);
    CHECK(wrong == 0);
    CHECK(r.messages == 1024u * 10u);
    CHECK(r.virtual_time == 10);
}
