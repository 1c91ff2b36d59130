// collectives/all_port.hpp: all-to-all personalized exchange on all links at
// once against the serial reference (block j of node i lands at node j as
// block i) for d = 0..8, m not divisible by d; virtual time equal to
// cost::alltoall_all_port; from the trace, one message per link and step; the
// t_w coefficient against Eq. 4.9 and Eq. 4.10; single-port refused.
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/cost/all_port.hpp>
#include <hcube/cost/personalized.hpp>
#include <hcube/machine.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr double t_s = 5, t_w = 2;

// Element k of the block node `from` sends to node `to`.
std::int32_t value(int from, int to, std::size_t k) {
    return std::int32_t(from * 100000 + to * 100 + int(k));
}

} // namespace

TEST_CASE("alltoall all-port: serial reference, exact cost, one message per link and step") {
    for (int d = 0; d <= 8; ++d) {
        config c = test::cfg(d, port_model::all_port, t_s, t_w);
        c.trace = true;
        machine mc(c);
        const int p = mc.size();
        const std::vector<std::size_t> sizes =
            d == 8 ? std::vector<std::size_t>{3}
                   : std::vector<std::size_t>{0, 1, std::size_t(d + 1), std::size_t(2 * d + 3)};
        for (std::size_t m : sizes) {
            CAPTURE(d);
            CAPTURE(m);
            auto got = std::vector<std::vector<std::int32_t>>(std::size_t(p));
            const run_report r = mc.run([&](node& me) {
                std::vector<std::int32_t> in(std::size_t(p) * m), out(in.size());
                for (int to = 0; to < p; ++to)
                    for (std::size_t k = 0; k < m; ++k)
                        in[std::size_t(to) * m + k] = value(me.id(), to, k);
                alltoall_all_port(me, in, out);
                got[std::size_t(me.id())] = std::move(out);
            });
            for (int x = 0; x < p; ++x)
                for (int from = 0; from < p; ++from)
                    for (std::size_t k = 0; k < m; ++k) {
                        CAPTURE(x);
                        CAPTURE(from);
                        REQUIRE(got[std::size_t(x)][std::size_t(from) * m + k] ==
                                value(from, x, k));
                    }
            CHECK(r.virtual_time == cost::alltoall_all_port(d, double(m), t_s, t_w));
            std::map<std::tuple<int, int, std::int64_t>, int> per_step;
            int most = 0;
            for (const auto& t : r.trace)
                most = std::max(most, ++per_step[{t.from, t.dim, t.step}]);
            CHECK(most <= 1);
        }
    }
}

TEST_CASE("alltoall all-port: t_w m p/2, log p below Eq. 4.9 and 2 (p-1)/p below Eq. 4.10") {
    for (int d = 1; d <= 12; ++d) {
        const double p = double(1 << d), m = 27720; // divisible by 1..12
        CHECK(cost::alltoall_all_port(d, m, 0, 1) == m * p / 2);
        CHECK(cost::alltoall_dimension_exchange(0, 1, d, m) ==
              d * cost::alltoall_all_port(d, m, 0, 1));
        CHECK(cost::alltoall_pairwise(0, 1, d, m) ==
              cost::alltoall_all_port(d, m, 0, 1) * 2 * (p - 1) / p);
        CHECK(cost::alltoall_all_port(d, m, 1, 0) == d);
    }
}

TEST_CASE("alltoall all-port refuses single-port and bad sizes") {
    machine mc(test::cfg(2));
    std::vector<int> in(8), out(8);
    CHECK_THROWS_WITH_AS(mc.run([&](node& me) { alltoall_all_port(me, in, out); }),
                         doctest::Contains("node 0: alltoall all-port exchanges on all 2 links at "
                                           "once; run with --ports all (all-port model), not "
                                           "single-port"),
                         run_error);
    machine ap(test::cfg(2, port_model::all_port));
    std::vector<int> odd(7);
    CHECK_THROWS_WITH_AS(ap.run([&](node& me) { alltoall_all_port(me, odd, out); }),
                         doctest::Contains("in has 7 elements and out has 8"), run_error);
    // A 1-cube has one link: single-port runs it (one exchange per step).
    machine one(test::cfg(1));
    CHECK_NOTHROW(one.run([](node& me) {
        std::vector<int> a(2, me.id()), b(2); // each node its own buffers
        alltoall_all_port(me, a, b);
    }));
}
