// Stress: thousands of random exchange patterns on a 6-cube; every message is
// delivered exactly once, intact and in order. The pattern's seed is printed on
// failure with the first bad message's round, link and kind; set
// HCUBE_STRESS_SEED=<n> to replay it or to try another pattern.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <string>

#include <hcube/machine.hpp>

#include "sanitizers.hpp"
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

std::uint32_t stress_seed(std::uint32_t fallback) {
    const char* s = std::getenv("HCUBE_STRESS_SEED");
    return s && *s ? std::uint32_t(std::strtoul(s, nullptr, 0)) : fallback;
}

const char* const kind_names[] = {"exchange on one link", "bursts both ways",
                                  "send on every link, receive shuffled",
                                  "every link at once (exchange_all or one exchange per link)"};

// The first wrong message any node saw, and how many were wrong.
class failures {
public:
    void report(int node, int round, int kind, int k, int seq, std::size_t got_len,
                std::size_t want_len) {
        std::lock_guard lock(mu_);
        if (bad_++ > 0) return;
        std::ostringstream os;
        os << "node " << node << ", round " << round << ", kind " << kind << " ("
           << kind_names[kind] << "), link " << k << " (from node " << (node ^ (1 << k))
           << "), message " << seq << ": got " << got_len << " elements, expected " << want_len
           << (got_len == want_len ? " with different contents" : "");
        first_ = os.str();
    }
    long count() const { return bad_; }
    const std::string& first() const { return first_; }

private:
    std::mutex mu_;
    long bad_ = 0;
    std::string first_;
};

} // namespace

// One round of the pattern, drawn identically on every node.
struct round_plan {
    int kind; // index into kind_names
    int k;    // the link of kinds 0 and 1
    int burst;
    std::vector<int> order; // a permutation of the links, for kinds 2 and 3

    // Messages every node receives in this round.
    int receives(int d) const { return kind == 0 ? 1 : kind == 1 ? burst : d; }
};

round_plan draw_round(std::mt19937& pattern, int d) {
    round_plan r;
    r.kind = int(pattern() % 4);
    r.k = int(pattern() % unsigned(d));
    r.burst = 1 + int(pattern() % 3); // at most the link capacity
    r.order.resize(std::size_t(d));
    std::iota(r.order.begin(), r.order.end(), 0);
    std::shuffle(r.order.begin(), r.order.end(), pattern);
    return r;
}

TEST_CASE("random exchange patterns on a 6-cube: no loss, duplication or reordering") {
    // 3000 rounds; 500 under the sanitizers, which run them 5-15x slower.
    const int d = 6, p = 64, rounds = test::sanitized ? 500 : 3000;
    const std::uint32_t seed = stress_seed(12345);
    INFO("HCUBE_STRESS_SEED=" << seed);
    long expected = 0; // messages received over the run, by replaying the pattern
    {
        std::mt19937 pattern(seed);
        for (int r = 0; r < rounds; ++r)
            expected += p * draw_round(pattern, d).receives(d);
    }
    for (port_model ports : {port_model::single_port, port_model::all_port}) {
        INFO("ports: " << to_string(ports));
        config c = cfg(d, ports);
        c.link_capacity = 3;
        c.eager_limit = 256; // mix borrowed and buffered exchanges
        machine m(c);
        std::atomic<long> received{0};
        failures bad;
        m.run([&](node& me) {
            std::mt19937 pattern(seed); // same sequence on every node
            std::vector<int> seq_out(d, 0), seq_in(d, 0);
            round_plan plan;
            int round = 0;
            const auto expect = [&](int k, const std::vector<std::uint32_t>& got) {
                const int seq = seq_in[k]++;
                const auto want = message(me.neighbor(k), seq);
                if (got != want)
                    bad.report(me.id(), round, plan.kind, k, seq, got.size(), want.size());
                ++received;
            };
            for (; round < rounds; ++round) {
                plan = draw_round(pattern, d);
                const int k = plan.k;
                const bool low = (me.id() >> k & 1) == 0;
                switch (plan.kind) {
                case 0: // exchange on one link
                    expect(k, me.exchange(k, message(me.id(), seq_out[k]++)));
                    break;
                case 1: // a burst one way, then a burst back
                    for (int b = 0; b < plan.burst; ++b) {
                        if (low)
                            me.send(k, message(me.id(), seq_out[k]++));
                        else
                            expect(k, me.recv<std::uint32_t>(k));
                    }
                    for (int b = 0; b < plan.burst; ++b) {
                        if (!low)
                            me.send(k, message(me.id(), seq_out[k]++));
                        else
                            expect(k, me.recv<std::uint32_t>(k));
                    }
                    break;
                case 2: // everyone sends on every link, then receives in a shuffled order
                    // (not recv_any: a faster neighbour's next-round message could be taken)
                    for (int j = 0; j < d; ++j)
                        me.send(j, message(me.id(), seq_out[j]++));
                    for (int j : plan.order)
                        expect(j, me.recv<std::uint32_t>(j));
                    break;
                default:
                    if (port_policy_of(ports).several_links_at_once()) {
                        std::vector<std::vector<std::uint32_t>> out(d), in(d);
                        std::vector<transfer<std::uint32_t>> ops;
                        for (int j : plan.order) {
                            out[j] = message(me.id(), seq_out[j]++);
                            in[j].resize(length_of(me.neighbor(j), seq_in[j]));
                            ops.push_back({j, out[j], in[j]});
                        }
                        me.exchange_all(ops);
                        for (int j = 0; j < d; ++j)
                            expect(j, in[j]);
                    } else { // single-port: one exchange per link, in the same order everywhere
                        for (int j : plan.order)
                            expect(j, me.exchange(j, message(me.id(), seq_out[j]++)));
                    }
                }
            }
        });
        CHECK_MESSAGE(bad.count() == 0, bad.count() << " bad messages; first: " << bad.first());
        CHECK(received == expected);
    }
}

TEST_CASE("random routed traffic: every pair's messages arrive in order") {
    const int d = 5, p = 32, rounds = 200;
    const std::uint32_t seed = stress_seed(777);
    INFO("HCUBE_STRESS_SEED=" << seed);
    machine m(cfg(d, port_model::all_port, 1, 1));
    std::atomic<long> bad{0};
    m.run([&](node& me) {
        std::mt19937 pattern(seed);
        for (int r = 0; r < rounds; ++r) {
            const int shift = 1 + int(pattern() % unsigned(p - 1));
            const int to = (me.id() + shift) % p, from = (me.id() - shift + p) % p;
            me.send_routed(to, message(me.id(), r));
            if (me.recv_routed<std::uint32_t>(from) != message(from, r)) ++bad;
        }
    });
    CHECK(bad == 0);
}
