// All-to-all reduction (collectives/reduce_scatter.hpp): serial reference with
// plus (three types) and the non-commutative 2x2 matrix product, d = 0..8;
// exact costs; the failure path.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/machine.hpp>

#include <test_support.hpp>

using namespace hcube;

namespace {

struct named_algo {
    reduce_scatter_algo algo;
    const char* name;
};
constexpr named_algo algos[] = {{reduce_scatter_algo::hypercube, "hypercube"},
                                {reduce_scatter_algo::ring, "ring"},
                                {reduce_scatter_algo::automatic, "automatic"}};

// Result blocks m in {0, 1, 3, p, 1000}: only 3 at d = 8, and none where the
// p * m inputs of all p nodes would get large.
std::vector<std::size_t> sizes(int d) {
    const std::size_t p = std::size_t{1} << d;
    std::vector<std::size_t> out;
    for (std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{3}, p, std::size_t{1000}})
        if (d == 8 ? m == 3 : p * p * m <= (std::size_t{1} << 20) || m <= 3) out.push_back(m);
    return out;
}

// Element i of node k's input, for plus (value_for) or the matrix product.
template <class T>
T input(int k, std::size_t i) {
    if constexpr (std::is_same_v<T, test::mat2>)
        return test::mat2_for(k, i);
    else
        return test::value_for<T>(k, i);
}

// x_0 op x_1 op ... op x_(p-1) for element i of everyone's input.
template <class T, class Op>
T reference(int p, std::size_t i, Op op) {
    T acc = input<T>(0, i);
    for (int k = 1; k < p; ++k)
        acc = op(acc, input<T>(k, i));
    return acc;
}

template <class T, class Op>
int wrong_nodes(machine& mach, reduce_scatter_algo a, std::size_t m, Op op) {
    std::atomic<int> wrong{0};
    mach.run([&](node& me) {
        const std::size_t p = std::size_t(me.size());
        std::vector<T> in(p * m), out(m);
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = input<T>(me.id(), i);
        reduce_scatter(me, std::span<const T>(in), std::span<T>(out), op, a);
        for (std::size_t e = 0; e < m; ++e)
            if (!(out[e] == reference<T>(me.size(), std::size_t(me.id()) * m + e, op)))
                return void(++wrong);
    });
    return wrong.load();
}

} // namespace

TEST_CASE("reduce_scatter equals the serial reference: plus and matrix product, d = 0..8") {
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d));
        for (const auto& [a, name] : algos)
            for (std::size_t m : sizes(d)) {
                CAPTURE(d);
                CAPTURE(name);
                CAPTURE(m);
                CHECK(wrong_nodes<std::int32_t>(mach, a, m, std::plus<>{}) == 0);
                CHECK(wrong_nodes<test::mat2>(mach, a, m, test::mat2_product{}) == 0);
                if (d >= 6) continue; // two types suffice where runs get slow
                CHECK(wrong_nodes<std::int64_t>(mach, a, m, std::plus<std::int64_t>{}) == 0);
                CHECK(wrong_nodes<double>(mach, a, m, std::plus<>{}) == 0);
            }
    }
}

TEST_CASE("reduce_scatter_blocks reduces uneven blocks in place, in node order") {
    for (int d = 0; d <= 6; ++d) {
        const std::size_t p = std::size_t{1} << d;
        machine mach(test::cfg(d));
        for (const auto& [a, name] : algos)
            for (std::size_t n : {std::size_t{0}, std::size_t{1}, p - 1, p + 1, 3 * p + 2}) {
                CAPTURE(d);
                CAPTURE(name);
                CAPTURE(n);
                std::atomic<int> wrong{0};
                mach.run([&](node& me) {
                    std::vector<test::mat2> data(n);
                    for (std::size_t i = 0; i < n; ++i)
                        data[i] = test::mat2_for(me.id(), i);
                    reduce_scatter_blocks(me, std::span<test::mat2>(data), test::mat2_product{}, a);
                    const block b = block_of(n, p, std::size_t(me.id()));
                    for (std::size_t i = b.begin; i < b.end(); ++i)
                        if (!(data[i] == reference<test::mat2>(me.size(), i, test::mat2_product{})))
                            return void(++wrong);
                });
                CHECK(wrong.load() == 0);
            }
    }
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
    constexpr double t_s = 3, t_w = 2;
    for (int d = 0; d <= 8; ++d) {
        const std::size_t p = std::size_t{1} << d;
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        for (std::size_t n : {std::size_t{0}, std::size_t{5}, p - 1, 2 * p, 3 * p + p / 2 + 1}) {
            CAPTURE(d);
            CAPTURE(n);
            const run_report r = mach.run([&](node& me) {
                std::vector<test::mat2> data(n);
                reduce_scatter_blocks(me, std::span<test::mat2>(data), test::mat2_product{});
            });
            CHECK(r.virtual_time == cost::reduce_scatter_hypercube_blocks(d, double(n), t_s, t_w));
            if (n % p == 0)
                CHECK(r.virtual_time == cost::reduce_scatter_hypercube(d, double(n / p), t_s, t_w));
        }
    }
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
