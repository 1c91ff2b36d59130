// All-to-all reduction (collectives/reduce_scatter.hpp): serial reference with
// plus (three types) and the non-commutative 2x2 matrix product, d = 0..8;
// exact costs; the failure path.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/machine.hpp>

#include <collective_checks.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr test::named<reduce_scatter_algo> algos[] = {
    {reduce_scatter_algo::hypercube, "hypercube"},
    {reduce_scatter_algo::ring, "ring"},
    {reduce_scatter_algo::automatic, "automatic"}};

// Runs reduce_scatter with plus or the matrix product (test::op_for<T>) on
// result blocks of m and counts the nodes whose block differs from the serial
// fold.
constexpr auto wrong_nodes = []<class T>(machine& mach, reduce_scatter_algo a, std::size_t m) {
    const test::op_for<T> op;
    return test::count_wrong_nodes(mach, [&](node& me) {
        const std::size_t p = std::size_t(me.size());
        std::vector<T> in(p * m), out(m);
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = test::input<T>(me.id(), i);
        reduce_scatter(me, std::span<const T>(in), std::span<T>(out), op, a);
        for (std::size_t e = 0; e < m; ++e)
            if (!(out[e] == test::serial_fold<T>(me.size(), std::size_t(me.id()) * m + e, op)))
                return false;
        return true;
    });
};

} // namespace

TEST_CASE("reduce_scatter equals the serial reference: plus and matrix product, d = 0..8") {
    // Result blocks of test::bounded_sizes: the p * m inputs of all p nodes stay small.
    test::check_every_cube<test::mat2>(algos, test::bounded_sizes, wrong_nodes);
}

TEST_CASE("reduce_scatter_blocks reduces uneven blocks in place, in node order") {
    test::for_every_cube(
        6, algos, test::uneven_sizes,
        [](machine& mach, int d, reduce_scatter_algo a, std::size_t n) {
            const std::size_t p = std::size_t{1} << d;
            CHECK(test::count_wrong_nodes(mach, [&](node& me) {
                      std::vector<test::mat2> data(n);
                      for (std::size_t i = 0; i < n; ++i)
                          data[i] = test::mat2_for(me.id(), i);
                      reduce_scatter_blocks(me, std::span<test::mat2>(data), test::mat2_product{},
                                            a);
                      const block b = block_of(n, p, std::size_t(me.id()));
                      for (std::size_t i = b.begin; i < b.end(); ++i)
                          if (!(data[i] ==
                                test::serial_fold<test::mat2>(me.size(), i, test::mat2_product{})))
                              return false;
                      return true;
                  }) == 0);
        });
}

TEST_CASE("reduce_scatter costs exactly the allgather forms (t_s = 3, t_w = 2)") {
    constexpr double t_s = 3, t_w = 2;
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        for (std::size_t m :
             d >= 7 ? std::vector<std::size_t>{5} : std::vector<std::size_t>{0, 1, 5, 16}) {
            CAPTURE(d);
            CAPTURE(m);
            const auto time = [&]<class T, class Op>(reduce_scatter_algo a, T, Op op) {
                return mach
                    .run([&](node& me) {
                        std::vector<T> in(m * std::size_t(me.size())), out(m);
                        reduce_scatter(me, std::span<const T>(in), std::span<T>(out), op, a);
                    })
                    .virtual_time;
            };
            const double hypercube = cost::reduce_scatter_hypercube(d, double(m), t_s, t_w);
            CHECK(time(reduce_scatter_algo::hypercube, 0, std::plus<>{}) == hypercube);
            CHECK(time(reduce_scatter_algo::hypercube, test::mat2{}, test::mat2_product{}) ==
                  hypercube);
            // Alg. 4.5 as printed with a commutative operator (Eq. 4.2) ...
            CHECK(time(reduce_scatter_algo::ring, 0, std::plus<>{}) ==
                  cost::reduce_scatter_ring(d, double(m), t_s, t_w));
            // ... and with left and right partials when the operator may not commute.
            CHECK(time(reduce_scatter_algo::ring, test::mat2{}, test::mat2_product{}) ==
                  cost::reduce_scatter_ring_ordered(d, double(m), t_s, t_w));
            CHECK(time(reduce_scatter_algo::automatic, 0, std::plus<>{}) == hypercube);
        }
    }
}

TEST_CASE("reduce_scatter_blocks (hypercube) costs exactly its form for any total size") {
    test::check_blocks_cost(
        [](node& me, std::size_t n) {
            std::vector<test::mat2> data(n);
            reduce_scatter_blocks(me, std::span<test::mat2>(data), test::mat2_product{});
        },
        cost::reduce_scatter_hypercube_blocks, cost::reduce_scatter_hypercube);
}

TEST_CASE("reduce_scatter ring: Gray-code links for a commutative operator, routed otherwise") {
    machine mach(test::cfg(4));
    mach.set_trace(true);
    const auto run = [&]<class T, class Op>(T, Op op) {
        return mach.run([&](node& me) {
            std::vector<T> in(16), out(1);
            reduce_scatter(me, std::span<const T>(in), std::span<T>(out), op,
                           reduce_scatter_algo::ring);
        });
    };
    const run_report plus = run(0, std::plus<>{});
    CHECK(plus.routed_messages == 0);
    CHECK(plus.steps == 15);
    for (const trace_record& t : plus.trace) // to ring position r - 1
        CHECK(node_id(t.to) == gray((gray_inverse(node_id(t.from)) + 15) % 16));
    const run_report product = run(test::mat2{}, test::mat2_product{});
    CHECK(product.routed_messages == 16 * 15);
    CHECK(product.congestion.empty());
    for (const trace_record& t : product.trace)
        CHECK(t.to == (t.from + 15) % 16);
}

TEST_CASE("reduce_scatter cost formulas: hand-computed values") {
    CHECK(cost::reduce_scatter_hypercube(3, 4, 3, 2) == 3 * 3 + 2 * 4 * 7);
    CHECK(cost::reduce_scatter_ring(3, 4, 3, 2) == (3 + 2 * 4) * 7);
    CHECK(cost::reduce_scatter_ring_ordered(3, 4, 3, 2) == (3 + 2 * 2 * 4) * 7);
    // 11 elements on 8 nodes, blocks 2, 2, 2, 1, 1, 1, 1, 1: node 0 receives the
    // largest messages, blocks 0, 2, 4, 6 (6 words), then 0, 4 (3), then 0 (2).
    CHECK(cost::reduce_scatter_hypercube_blocks(3, 11, 3, 2) == 3 * 3 + 2 * (6 + 3 + 2));
}

TEST_CASE("is_commutative knows the standard arithmetic operators only") {
    static_assert(is_commutative_v<std::plus<>>);
    static_assert(is_commutative_v<const std::plus<int>&>);
    static_assert(is_commutative_v<std::bit_xor<>>);
    static_assert(!is_commutative_v<std::minus<>>);
    static_assert(!is_commutative_v<test::mat2_product>);
}

TEST_CASE("reduce_scatter rejects an input of the wrong size, naming node and sizes") {
    machine mach(test::cfg(2));
    try {
        mach.run([](node& me) {
            std::vector<int> in(me.id() == 2 ? 7 : 8), out(2);
            reduce_scatter(me, std::span<const int>(in), std::span<int>(out), std::plus<>{});
        });
        FAIL("no error");
    } catch (const run_error& e) {
        const std::string what = e.what();
        CAPTURE(what);
        CHECK(e.node() == 2);
        CHECK(what.find("node 2") != std::string::npos);
        CHECK(what.find("in.size() = 7") != std::string::npos);
        CHECK(what.find("4 * 2 = 8") != std::string::npos);
    }
}
