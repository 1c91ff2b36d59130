// collectives/reduce.hpp: both algorithms against a serial left-to-right fold
// x_0 op x_1 op ... op x_{p-1} at the root, for d = 0..8, m in {0, 1, 3, p,
// 1000} and remainders, several roots, plus on three types and the
// non-commutative 2x2 matrix product; virtual time equal to Eq. 4.1 and to the
// exact Eq. 4.13 (Problem 4.17); `automatic`; bad roots.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <collective_checks.hpp>
#include <doctest/doctest.h>
#include <hcube/collectives/reduce.hpp>
#include <hcube/cost/rooted.hpp>
#include <hcube/machine.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr double t_s = 7, t_w = 3;

// Reduces every node's values to `root`; true when the root holds the serial fold.
template <class T>
bool reduce_once(machine& mc, std::size_t m, int root, reduce_algo a, run_report& r) {
    std::vector<T> got;
    r = mc.run([&](node& me) {
        std::vector<T> data(m);
        for (std::size_t i = 0; i < m; ++i)
            data[i] = test::input<T>(me.id(), i);
        reduce(me, std::span(data), root, test::op_for<T>{}, a);
        if (me.id() == root) got = std::move(data);
    });
    std::vector<T> want(m);
    for (std::size_t i = 0; i < m; ++i)
        want[i] = test::serial_fold<T>(mc.size(), i, test::op_for<T>{});
    return got == want;
}

double formula(reduce_algo a, int d, std::size_t m, int root) {
    return a == reduce_algo::binomial ? cost::reduce_binomial(d, double(m), t_s, t_w)
                                      : cost::reduce_reduce_scatter_gather(d, m, root, t_s, t_w);
}

// Every algorithm, size and root on a d-cube: result, virtual time, steps.
template <class T>
void check_cube(int d, bool all_cases) {
    test::check_binomial_and_split(
        d, all_cases, t_s, t_w, reduce_algo::binomial, reduce_algo::reduce_scatter_gather,
        [](machine& mc, std::size_t m, int root, reduce_algo a, run_report& r) {
            CHECK(reduce_once<T>(mc, m, root, a, r));
        },
        formula);
}

} // namespace

TEST_CASE_TEMPLATE("reduce: the root gets x_0 op ... op x_{p-1}, in the time of Eq. 4.1 / 4.13", T,
                   std::int32_t, std::int64_t, double, test::mat2) {
    for (int d = 0; d <= 6; ++d)
        check_cube<T>(d, true);
}

TEST_CASE("reduce on 128 and 256 nodes") {
    check_cube<test::mat2>(7, true);
    check_cube<std::int32_t>(8, false);
    check_cube<test::mat2>(8, false);
}

TEST_CASE("reduce binomial follows Alg. 4.3: lowest dimension first, towards the root") {
    machine mc(test::cfg(3));
    mc.set_trace(true);
    run_report r;
    REQUIRE(reduce_once<test::mat2>(mc, 2, 6, reduce_algo::binomial, r));
    // Relabelled ids v = id ^ 6: step 1 odd v -> v - 1, step 2 v2 -> v0, v6 -> v4, step 3 v4 -> v0.
    std::vector<std::vector<std::pair<int, int>>> by_step(3);
    for (const auto& t : r.trace) {
        REQUIRE(t.step < 3);
        by_step[std::size_t(t.step)].push_back({t.from ^ 6, t.to ^ 6});
    }
    for (auto& s : by_step)
        std::sort(s.begin(), s.end());
    CHECK(by_step[0] == std::vector<std::pair<int, int>>{{1, 0}, {3, 2}, {5, 4}, {7, 6}});
    CHECK(by_step[1] == std::vector<std::pair<int, int>>{{2, 0}, {6, 4}});
    CHECK(by_step[2] == std::vector<std::pair<int, int>>{{4, 0}});
}

TEST_CASE("reduce automatic takes the cheaper of Eq. 4.1 and Eq. 4.13 (Table 4.1)") {
    // automatic weighs Eq. 4.1, 4 (7 + 3 m) on 16 nodes, against the bound
    // 56 + 3 W of the split algorithm (cost::split_rooted), W its words on the
    // critical chain. Worked by hand for m < 16 (every block 0 or 1 word):
    // W = sum over dimensions j of min(m, 2^j) plus the words of the half the
    // root's side sends, [2^j, 2^(j+1)) & [0, m) when bit j of the root is 0,
    // [0, 2^j) & [0, m) when it is 1. Root 0: W = (m - 1) + sum min(m, 2^j), so
    // m = 7: 6 + 14 = 20, 116 > 112, binomial; m = 8: 7 + 15, 122 < 124, split.
    // Root 9 = 1001b, m = 8: (1 + 2 + 4 + 8) + 15 = 30, 146 > 124, binomial.
    // m = 100 (blocks of 6 and 7 words): W = 180 + 11 + 3 (root 0) or + 7
    // (root 9), 638 and 650 against 1228: split.
    struct case_ {
        std::size_t m;
        int root;
        bool split;
    };
    const case_ cases[] = {{1, 0, false},   {1, 9, false},  {2, 0, false},  {7, 0, false},
                           {8, 0, true},    {8, 9, false},  {100, 0, true}, {100, 9, true},
                           {1000, 0, true}, {1000, 9, true}};
    machine mc(test::cfg(4, port_model::single_port, t_s, t_w));
    for (const auto& [m, root, split] : cases) {
        CAPTURE(m);
        CAPTURE(root);
        run_report r;
        CHECK(reduce_once<test::mat2>(mc, m, root, reduce_algo::automatic, r));
        CHECK(r.virtual_time == (split ? formula(reduce_algo::reduce_scatter_gather, 4, m, root)
                                       : 4 * (t_s + t_w * double(m))));
        CHECK(r.steps == (split ? 8 : 4));
    }
}

TEST_CASE("reduce with a root outside 0..p-1 is a usage error naming the node and the root") {
    machine mc(test::cfg(2));
    for (auto a :
         {reduce_algo::binomial, reduce_algo::reduce_scatter_gather, reduce_algo::automatic})
        for (int root : {-1, 4}) {
            CAPTURE(root);
            try {
                mc.run([&](node& me) {
                    std::vector<int> v(4, 1);
                    reduce(me, std::span(v), root, std::plus<>{}, a);
                });
                FAIL("no error");
            } catch (const run_error& e) {
                CHECK(std::string(e.what()) == "node " + std::to_string(e.node()) +
                                                   ": reduce root " + std::to_string(root) +
                                                   " is outside 0..3 (and 3 more nodes the same)");
            }
        }
}

TEST_CASE("reduce needs no buffering in the links (link_capacity 0)") {
    config c = test::cfg(4, port_model::single_port, t_s, t_w);
    c.link_capacity = 0;
    machine mc(c);
    for (auto a : {reduce_algo::binomial, reduce_algo::reduce_scatter_gather})
        for (int root : {0, 13}) {
            run_report r;
            CHECK(reduce_once<test::mat2>(mc, 37, root, a, r));
            CHECK(r.virtual_time == formula(a, 4, 37, root));
        }
}
