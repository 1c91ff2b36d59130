// collectives/all_port.hpp: all-reduce as reduce-scatter then allgather along
// the d rotated Hamiltonian cycles of Mathur & Johnsson against the serial fold (plus
// and the non-commutative matrix product), d = 0..7, n not divisible by p or
// d; virtual time equal to cost::allreduce_d_cycles for the commutative
// operator, on buffered and on unbuffered links; the t_w coefficient log p
// below Eq. 4.14; single-port refused.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <collective_checks.hpp>
#include <doctest/doctest.h>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/cost/all_port.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/machine.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

int dim_of(const machine& mc) {
    return std::countr_zero(unsigned(mc.size()));
}

constexpr double t_s = 5, t_w = 2;

template <class T>
void allreduce_case(machine& mc, std::size_t n) {
    using Op = test::op_for<T>;
    auto got = std::vector<std::vector<T>>(std::size_t(mc.size()));
    const run_report r = mc.run([&](node& me) {
        std::vector<T> v(n);
        for (std::size_t i = 0; i < n; ++i)
            v[i] = test::input<T>(me.id(), i);
        allreduce_d_cycles(me, v, Op{});
        got[std::size_t(me.id())] = std::move(v);
    });
    std::vector<T> want(n);
    for (std::size_t i = 0; i < n; ++i)
        want[i] = test::serial_fold<T>(mc.size(), i, Op{});
    for (int x = 0; x < mc.size(); ++x) {
        CAPTURE(x);
        REQUIRE(got[std::size_t(x)] == want);
    }
    if constexpr (is_commutative_v<Op>)
        CHECK(r.virtual_time == cost::allreduce_d_cycles(dim_of(mc), double(n), t_s, t_w));
}

} // namespace

TEST_CASE("allreduce d-cycles: serial fold, exact cost for a commutative operator, d = 0..7") {
    for (int d = 0; d <= 7; ++d) {
        machine mc(test::cfg(d, port_model::all_port, t_s, t_w));
        const std::size_t p = std::size_t(mc.size());
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, p - 1 + std::size_t(d), 3 * p + 2}) {
            CAPTURE(d);
            CAPTURE(n);
            allreduce_case<std::int64_t>(mc, n);
            if (d <= 5) allreduce_case<test::mat2>(mc, n);
        }
    }
}

// m not a multiple of p leaves blocks short or empty, so some links only send
// or only receive in a step; on unbuffered links such one-sided links once
// formed cycles of blocking sends (a deadlock at d = 3, m = 27).
TEST_CASE("allreduce d-cycles on unbuffered links, short and empty blocks, d = 1..6") {
    for (int d = 1; d <= 6; ++d) {
        config c = test::cfg(d, port_model::all_port, t_s, t_w);
        c.link_capacity = 0;
        machine mc(c);
        const std::size_t p = std::size_t(mc.size());
        for (std::size_t n : {std::size_t{1}, p - 1, p + 3, 3 * p + 3, std::size_t{27}}) {
            CAPTURE(d);
            CAPTURE(n);
            allreduce_case<std::int64_t>(mc, n);
            if (d <= 3) allreduce_case<test::mat2>(mc, n);
        }
    }
}

TEST_CASE("allreduce d-cycles: t_w coefficient log p below Eq. 4.14") {
    for (int d = 1; d <= 10; ++d) {
        const double p = double(1 << d), n = p * 2520; // B divisible by 1..10
        CHECK(cost::allreduce_d_cycles(d, n, 0, 1) * d ==
              cost::allreduce_reduce_scatter_allgather(d, n, 0, 1));
        CHECK(cost::allreduce_d_cycles(d, n, 1, 0) == 2 * (p - 1));
    }
}

TEST_CASE("allreduce d-cycles refuses single-port") {
    machine mc(test::cfg(2));
    CHECK_THROWS_WITH_AS(mc.run([&](node& me) {
        std::vector<int> v(8);
        allreduce_d_cycles(me, v, std::plus<>{});
    }),
                         doctest::Contains("run with --ports all"), run_error);
}
