// Facts about the public collectives that the per-family suites do not pin
// down: exact all-port virtual times of the chapter-4 algorithms,
// circular_shift's default ring, is_commutative, and the largest tested cubes.
#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <hcube/hcube.hpp>

#include "sanitizers.hpp"
#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

namespace {

constexpr double t_s = 3, t_w = 2;

// One chapter-4 algorithm, run with m elements per node (a node's block for
// the all-to-all operations), and its time under the source's cost model worked
// out by hand (Grama et al.: one message of w words costs t_s + t_w w; every node
// uses one link per step, so the all-port model gives no speed-up).
struct timed_algorithm {
    const char* name;
    std::function<void(node&, std::size_t)> program;
    std::function<double(int d, double p, double m)> time;
    bool even_dim_only = false;
};

double msg(double words) {
    return t_s + t_w * words;
}

std::vector<std::int64_t> ids(const node& me, std::size_t n) {
    return std::vector<std::int64_t>(n, me.id());
}

std::vector<timed_algorithm> chapter4() {
    using V = std::vector<std::int64_t>;
    using S = std::span<std::int64_t>;
    using C = std::span<const std::int64_t>;
    const std::plus<> plus;
    const int root = 1;
    return {
        {"broadcast binomial",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             broadcast(me, S(v), root % me.size(), broadcast_algo::binomial);
         },
         [](int d, double, double m) { return d * msg(m); }},
        {"broadcast scatter-allgather",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             broadcast(me, S(v), root % me.size(), broadcast_algo::scatter_allgather);
         },
         [](int d, double p, double m) { return 2 * (d * t_s + t_w * (p - 1) * m / p); }},
        {"reduce binomial",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             reduce(me, S(v), root % me.size(), plus, reduce_algo::binomial);
         },
         [](int d, double, double m) { return d * msg(m); }},
        {"reduce reduce-scatter-gather",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             reduce(me, S(v), root % me.size(), plus, reduce_algo::reduce_scatter_gather);
         },
         [](int d, double p, double m) { return 2 * (d * t_s + t_w * (p - 1) * m / p); }},
        {"allreduce hypercube",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             allreduce(me, S(v), plus, allreduce_algo::hypercube);
         },
         [](int d, double, double m) { return d * msg(m); }},
        {"allreduce reduce-scatter-allgather",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             allreduce(me, S(v), plus, allreduce_algo::reduce_scatter_allgather);
         },
         [](int d, double p, double m) { return 2 * (d * t_s + t_w * (p - 1) * m / p); }},
        {"allreduce reduce-broadcast",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             allreduce(me, S(v), plus, allreduce_algo::reduce_broadcast);
         },
         [](int d, double, double m) { return 2 * d * msg(m); }},
        {"inclusive scan",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             inclusive_scan(me, S(v), plus);
         },
         [](int d, double, double m) { return d * msg(m); }},
        {"exclusive scan",
         [=](node& me, std::size_t m) {
             V v = ids(me, m);
             exclusive_scan(me, S(v), plus);
         },
         [](int d, double, double m) { return d * msg(m); }},
        {"allgather hypercube",
         [](node& me, std::size_t m) {
             V v = ids(me, m), all(m * std::size_t(me.size()));
             allgather(me, C(v), S(all), allgather_algo::hypercube);
         },
         [](int d, double p, double m) { return d * t_s + t_w * m * (p - 1); }},
        {"allgather ring",
         [](node& me, std::size_t m) {
             V v = ids(me, m), all(m * std::size_t(me.size()));
             allgather(me, C(v), S(all), allgather_algo::ring);
         },
         [](int, double p, double m) { return (p - 1) * msg(m); }},
        {"allgather mesh",
         [](node& me, std::size_t m) {
             V v = ids(me, m), all(m * std::size_t(me.size()));
             allgather(me, C(v), S(all), allgather_algo::mesh);
         },
         [](int, double p, double m) { return 2 * t_s * (std::sqrt(p) - 1) + t_w * m * (p - 1); },
         true},
        {"reduce-scatter hypercube",
         [=](node& me, std::size_t m) {
             V in = ids(me, m * std::size_t(me.size())), out(m);
             reduce_scatter(me, C(in), S(out), plus, reduce_scatter_algo::hypercube);
         },
         [](int d, double p, double m) { return d * t_s + t_w * m * (p - 1); }},
        {"reduce-scatter ring (commutative)",
         [=](node& me, std::size_t m) {
             V in = ids(me, m * std::size_t(me.size())), out(m);
             reduce_scatter(me, C(in), S(out), plus, reduce_scatter_algo::ring);
         },
         [](int, double p, double m) { return (p - 1) * msg(m); }},
        {"scatter",
         [=](node& me, std::size_t m) {
             V all = ids(me, m * std::size_t(me.size())), mine(m);
             scatter(me, C(all), S(mine), root % me.size());
         },
         [](int d, double p, double m) { return d * t_s + t_w * m * (p - 1); }},
        {"gather",
         [=](node& me, std::size_t m) {
             V mine = ids(me, m), all(m * std::size_t(me.size()));
             gather(me, C(mine), S(all), root % me.size());
         },
         [](int d, double p, double m) { return d * t_s + t_w * m * (p - 1); }},
        {"alltoall dimension exchange",
         [](node& me, std::size_t m) {
             V in = ids(me, m * std::size_t(me.size())), out(in.size());
             alltoall(me, C(in), S(out), alltoall_algo::dimension_exchange);
         },
         [](int d, double p, double m) { return d * msg(m * p / 2); }},
        {"alltoall ring",
         [](node& me, std::size_t m) {
             V in = ids(me, m * std::size_t(me.size())), out(in.size());
             alltoall(me, C(in), S(out), alltoall_algo::ring);
         },
         // Step s sends the m (p - s) words not yet delivered.
         [](int, double p, double m) { return (p - 1) * t_s + t_w * m * p * (p - 1) / 2; }},
    };
}

} // namespace

TEST_CASE("chapter-4 collectives: exact virtual times, the same under all-port as single-port") {
    for (const timed_algorithm& a : chapter4()) {
        for (int d = 1; d <= 4; ++d) {
            if (a.even_dim_only && d % 2 != 0) continue;
            const std::size_t p = std::size_t{1} << d;
            for (port_model ports : {port_model::single_port, port_model::all_port}) {
                machine mach(cfg(d, ports, t_s, t_w));
                for (std::size_t m : {p, 3 * p}) { // p | m for the splitting algorithms
                    INFO(a.name << ", d = " << d << ", m = " << m << ", " << to_string(ports));
                    const run_report r = mach.run([&](node& me) { a.program(me, m); });
                    CHECK(r.virtual_time == a.time(d, double(p), double(m)));
                }
            }
        }
    }
}

namespace {

// Node i's packet is m copies of 100 i + j, j = 0 .. m-1; returns every node's
// output and the run's virtual time.
template <class Shift>
std::pair<std::vector<std::vector<int>>, double> shift_run(machine& mach, std::size_t m,
                                                           Shift shift) {
    std::vector<std::vector<int>> out(std::size_t(mach.size()));
    const run_report r = mach.run([&](node& me) {
        std::vector<int> in(m), o(m);
        std::iota(in.begin(), in.end(), 100 * me.id());
        shift(me, std::span<const int>(in), std::span<int>(o));
        out[std::size_t(me.id())] = o;
    });
    return {out, r.virtual_time};
}

unsigned gray_code(unsigned r) {
    return r ^ (r >> 1);
}

// The packet each node must end with when position r moves to r + q on the
// array that puts position r on node place(r).
template <class Place>
std::vector<std::vector<int>> shifted(int p, std::size_t m, long long q, Place place) {
    std::vector<std::vector<int>> want(std::size_t(p), std::vector<int>(m, 0));
    for (int r = 0; r < p; ++r) {
        const int to = int(place(unsigned(((r + q) % p + p) % p)));
        std::iota(want[std::size_t(to)].begin(), want[std::size_t(to)].end(),
                  100 * int(place(unsigned(r))));
    }
    return want;
}

} // namespace

TEST_CASE("circular_shift's default ring is the id ring, and the Gray algorithms' is Gray") {
    const int d = 3, p = 8;
    const std::size_t m = 4;
    for (port_model ports : {port_model::single_port, port_model::all_port}) {
        machine mach(cfg(d, ports, t_s, t_w));
        for (long long q : {1LL, 3LL, -2LL, 13LL}) {
            INFO("q = " << q << ", " << to_string(ports));
            const auto by_default = shift_run(
                mach, m, [&](node& me, auto in, auto out) { circular_shift(me, in, out, q); });
            const auto named = shift_run(mach, m, [&](node& me, auto in, auto out) {
                circular_shift(me, in, out, q, shift_algo::automatic, shift_ring::id);
            });
            CHECK(by_default.first == shifted(p, m, q, [](unsigned r) { return r; }));
            CHECK(by_default.first == named.first);
            // One E-cube routed step without congestion (Eq. 4.12, Problem 4.22).
            CHECK(by_default.second == msg(double(m)));
            CHECK(by_default.second == named.second);

            const auto gray_default = shift_run(mach, m, [&](node& me, auto in, auto out) {
                circular_shift(me, in, out, q, shift_algo::gray);
            });
            const auto gray_named = shift_run(mach, m, [&](node& me, auto in, auto out) {
                circular_shift(me, in, out, q, shift_algo::gray, shift_ring::gray);
            });
            CHECK(gray_default.first == shifted(p, m, q, gray_code));
            CHECK(gray_default.first == gray_named.first);
            // Eq. 4.11: a phase per set bit of q mod p, two steps each except 2^0.
            const auto qm = unsigned(((q % p) + p) % p);
            CHECK(gray_default.second == msg(double(m)) * (2 * std::popcount(qm) - (qm & 1)));
            CHECK(gray_default.second == gray_named.second);
        }
    }
}

// The ring reduce-scatter runs Alg. 4.5 as printed, (t_s + t_w m)(p - 1), only
// for operators flagged commutative; any other operator takes the ordered ring,
// (t_s + 2 t_w m)(p - 1). A lambda computing the same thing is not flagged.
TEST_CASE("is_commutative: multiplies, bit_and and bit_or take the commutative ring") {
    static_assert(is_commutative_v<std::multiplies<std::uint32_t>>);
    static_assert(is_commutative_v<std::multiplies<>>);
    static_assert(is_commutative_v<const std::bit_and<std::uint32_t>&>);
    static_assert(is_commutative_v<std::bit_and<>>);
    static_assert(is_commutative_v<std::bit_or<std::uint32_t>>);
    static_assert(is_commutative_v<std::bit_or<>>);
    static_assert(!is_commutative_v<std::minus<>>);
    static_assert(!is_commutative_v<test::mat2_product>);

    const int d = 3, p = 8;
    const std::size_t m = 2;
    machine mach(cfg(d, port_model::single_port, t_s, t_w));
    // Element e of node k's input block j: odd, so products stay informative,
    // and with bits that differ between nodes.
    const auto input = [](int k, std::size_t j, std::size_t e) {
        return std::uint32_t(2 * (k * 37 + j * 11 + e) + 1) | (1u << (k + 8));
    };
    const auto run = [&](auto op, std::uint32_t identity) {
        std::vector<std::vector<std::uint32_t>> got(p);
        const run_report r = mach.run([&](node& me) {
            std::vector<std::uint32_t> in(m * p), out(m);
            for (std::size_t j = 0; j < p; ++j)
                for (std::size_t e = 0; e < m; ++e)
                    in[j * m + e] = input(me.id(), j, e);
            reduce_scatter(me, std::span<const std::uint32_t>(in), std::span<std::uint32_t>(out),
                           op, reduce_scatter_algo::ring);
            got[std::size_t(me.id())] = out;
        });
        for (int j = 0; j < p; ++j) {
            std::vector<std::uint32_t> want(m, identity);
            for (std::size_t e = 0; e < m; ++e)
                for (int k = 0; k < p; ++k)
                    want[e] = op(want[e], input(k, std::size_t(j), e));
            CHECK_MESSAGE(got[std::size_t(j)] == want, "node " << j);
        }
        return r.virtual_time;
    };
    const double commutative = double(p - 1) * msg(double(m));
    CHECK(run(std::multiplies<std::uint32_t>{}, 1u) == commutative);
    CHECK(run(std::bit_and<std::uint32_t>{}, ~0u) == commutative);
    CHECK(run(std::bit_or<std::uint32_t>{}, 0u) == commutative);
    CHECK(run([](std::uint32_t a, std::uint32_t b) { return a * b; }, 1u) ==
          double(p - 1) * msg(2.0 * double(m)));
}

// 12 is the tested ceiling (config.hpp): one small collective on each of the
// two largest cubes, against the serial sum.
TEST_CASE("d = 11 and d = 12: allreduce of one value per node") {
    // Under ThreadSanitizer, 6,144 threads take minutes for no race that 768
    // would not show; d = 8 and 9 there.
    const int large = test::thread_sanitized ? 8 : 11;
    for (int d : {large, large + 1}) {
        CAPTURE(d);
        machine mach(cfg(d));
        const std::int64_t p = std::int64_t{1} << d;
        std::atomic<int> wrong{0};
        const run_report r = mach.run([&](node& me) {
            std::int64_t v = 3 * std::int64_t(me.id()) + 1;
            allreduce(me, std::span(&v, 1), std::plus<>{});
            if (v != 3 * p * (p - 1) / 2 + p) ++wrong;
        });
        CHECK(wrong == 0);
        CHECK(r.steps == d); // Eq. 4.5 with t_s = 1, t_w = 0
    }
}
