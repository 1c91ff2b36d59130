// All-reduce (collectives/allreduce.hpp): serial reference with plus (three
// types) and the non-commutative 2x2 matrix product, d = 0..8; exact costs
// (Eq. 4.5, Eq. 4.14 and its exact form for any m, reduce then broadcast).
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include <hcube/collectives/allreduce.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/machine.hpp>

#include <collective_checks.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr test::named<allreduce_algo> algos[] = {
    {allreduce_algo::hypercube, "hypercube"},
    {allreduce_algo::reduce_scatter_allgather, "reduce-scatter-allgather"},
    {allreduce_algo::reduce_broadcast, "reduce-broadcast"},
    {allreduce_algo::automatic, "automatic"}};

// Runs allreduce with plus or the matrix product (test::op_for<T>) and counts
// the nodes whose data differs from the serial fold.
constexpr auto wrong_nodes = []<class T>(machine& mach, allreduce_algo a, std::size_t m) {
    const test::op_for<T> op;
    std::vector<T> want(m);
    for (std::size_t i = 0; i < m; ++i)
        want[i] = test::serial_fold<T>(mach.size(), i, op);
    return test::count_wrong_nodes(mach, [&](node& me) {
        std::vector<T> data(m);
        for (std::size_t i = 0; i < m; ++i)
            data[i] = test::input<T>(me.id(), i);
        allreduce(me, std::span<T>(data), op, a);
        return data == want;
    });
};

} // namespace

TEST_CASE("allreduce equals the serial reference: plus and matrix product, d = 0..8") {
    test::check_every_cube<test::mat2>(algos, test::sizes_to_1000, wrong_nodes);
}

TEST_CASE("allreduce costs exactly Eq. 4.5, Eq. 4.14 and 2 (t_s + t_w m) log p") {
    constexpr double t_s = 3, t_w = 2;
    for (int d = 0; d <= 8; ++d) {
        const std::size_t p = std::size_t{1} << d;
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        // Multiples of p (Eq. 4.14 as printed) and sizes that leave remainders.
        for (std::size_t m :
             {std::size_t{0}, std::size_t{1}, std::size_t{3}, p, 3 * p, 5 * p + 3, p + p / 2 + 1}) {
            CAPTURE(d);
            CAPTURE(m);
            const auto time = [&](allreduce_algo a) {
                return mach
                    .run([&](node& me) {
                        std::vector<test::mat2> data(m);
                        allreduce(me, std::span<test::mat2>(data), test::mat2_product{}, a);
                    })
                    .virtual_time;
            };
            const double hypercube = cost::allreduce_hypercube(d, double(m), t_s, t_w);
            const double split = cost::allreduce_reduce_scatter_allgather(d, double(m), t_s, t_w);
            CHECK(time(allreduce_algo::hypercube) == hypercube);
            CHECK(time(allreduce_algo::reduce_scatter_allgather) == split);
            if (m % p == 0) // Eq. 4.14 exactly when p divides m
                CHECK(split == 2 * (t_s * d + t_w * double(p - 1) * double(m / p)));
            CHECK(time(allreduce_algo::reduce_broadcast) ==
                  cost::allreduce_reduce_broadcast(d, double(m), t_s, t_w));
            // Table 4.1: the minimum of the two expressions.
            CHECK(time(allreduce_algo::automatic) == std::min(hypercube, split));
        }
    }
}

TEST_CASE("allreduce cost formulas: hand-computed values") {
    // d = 3, t_s = 3, t_w = 2.
    CHECK(cost::allreduce_hypercube(3, 10, 3, 2) == (3 + 2 * 10) * 3);
    CHECK(cost::allreduce_reduce_broadcast(3, 10, 3, 2) == 2 * (3 + 2 * 10) * 3);
    // p | m: Eq. 4.14, 2 (t_s log p + t_w (p-1) m/p).
    CHECK(cost::allreduce_reduce_scatter_allgather(3, 16, 3, 2) == 2 * (3 * 3 + 2 * 7 * 2));
    // m = 11 on 8 nodes: blocks of 2, 2, 2, 1, 1, 1, 1, 1. The largest message
    // of each reduce-scatter step goes to node 0: blocks 0, 2, 4, 6 (6 words),
    // then 0, 4 (3), then 0 (2). Allgather steps: block 0 or 1 (2 words),
    // blocks 0, 1 to node 2 (4), blocks 0..3 to nodes 4..7 (7).
    CHECK(cost::allreduce_reduce_scatter_allgather(3, 11, 3, 2) ==
          6 * 3 + 2 * (6 + 3 + 2) + 2 * (2 + 4 + 7));
}
