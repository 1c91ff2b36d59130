// collectives/broadcast.hpp: both algorithms against the serial reference
// (every node ends with the root's message) for d = 0..8, m in {0, 1, 3, p,
// 1000} and remainders, several roots and four element types; virtual time
// equal to Eq. 4.1 and to the exact Eq. 4.13 (cost/rooted.hpp); `automatic`
// takes the cheaper (Table 4.1); bad roots.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <collective_checks.hpp>
#include <doctest/doctest.h>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/cost/rooted.hpp>
#include <hcube/machine.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr double t_s = 7, t_w = 3;

// Broadcasts node `root`'s values; every other node starts with its own values,
// which must all be overwritten. Returns the first node whose result is wrong, or -1.
template <class T>
int broadcast_once(machine& mc, std::size_t m, int root, broadcast_algo a, run_report& r) {
    std::vector<std::vector<T>> got(std::size_t(mc.size()));
    r = mc.run([&](node& me) {
        std::vector<T> data(m);
        for (std::size_t i = 0; i < m; ++i)
            data[i] = test::value_for<T>(me.id(), i);
        broadcast(me, std::span(data), root, a);
        got[std::size_t(me.id())] = std::move(data);
    });
    std::vector<T> want(m);
    for (std::size_t i = 0; i < m; ++i)
        want[i] = test::value_for<T>(root, i);
    for (int x = 0; x < mc.size(); ++x)
        if (got[std::size_t(x)] != want) return x;
    return -1;
}

double formula(broadcast_algo a, int d, std::size_t m, int root) {
    return a == broadcast_algo::binomial ? cost::broadcast_binomial(d, double(m), t_s, t_w)
                                         : cost::broadcast_scatter_allgather(d, m, root, t_s, t_w);
}

// Every algorithm, size and root on a d-cube: result, virtual time, steps.
template <class T>
void check_cube(int d, bool all_cases) {
    test::check_binomial_and_split(
        d, all_cases, t_s, t_w, broadcast_algo::binomial, broadcast_algo::scatter_allgather,
        [](machine& mc, std::size_t m, int root, broadcast_algo a, run_report& r) {
            CHECK(broadcast_once<T>(mc, m, root, a, r) == -1);
        },
        formula);
}

} // namespace

TEST_CASE_TEMPLATE("broadcast: every node gets the root's message, in the time of Eq. 4.1 / 4.13",
                   T, std::int32_t, std::int64_t, double, test::point) {
    for (int d = 0; d <= 6; ++d)
        check_cube<T>(d, true);
}

TEST_CASE("broadcast on 128 and 256 nodes") {
    check_cube<std::int32_t>(7, true);
    check_cube<double>(8, false);
}

TEST_CASE("broadcast binomial follows Alg. 4.2: highest dimension first, relabelled by the root") {
    machine mc(test::cfg(3));
    mc.set_trace(true);
    run_report r;
    REQUIRE(broadcast_once<std::int32_t>(mc, 4, 5, broadcast_algo::binomial, r) == -1);
    // Relabelled ids v = id ^ 5: step 1 v0 -> v4, step 2 v0 -> v2, v4 -> v6, step 3 odd v.
    std::vector<std::vector<std::pair<int, int>>> by_step(3);
    for (const auto& t : r.trace) {
        REQUIRE(t.step < 3);
        CHECK(t.bytes == 4 * sizeof(std::int32_t));
        by_step[std::size_t(t.step)].push_back({t.from ^ 5, t.to ^ 5});
    }
    for (auto& s : by_step)
        std::sort(s.begin(), s.end());
    CHECK(by_step[0] == std::vector<std::pair<int, int>>{{0, 4}});
    CHECK(by_step[1] == std::vector<std::pair<int, int>>{{0, 2}, {4, 6}});
    CHECK(by_step[2] == std::vector<std::pair<int, int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
}

TEST_CASE("broadcast automatic takes the cheaper of Eq. 4.1 and Eq. 4.13 (Table 4.1)") {
    machine mc(test::cfg(4, port_model::single_port, t_s, t_w));
    for (std::size_t m : {std::size_t(1), std::size_t(16), std::size_t(100), std::size_t(1000)})
        for (int root : {0, 11}) {
            CAPTURE(m);
            CAPTURE(root);
            const double bin = formula(broadcast_algo::binomial, 4, m, root);
            const double split = formula(broadcast_algo::scatter_allgather, 4, m, root);
            run_report r;
            CHECK(broadcast_once<std::int64_t>(mc, m, root, broadcast_algo::automatic, r) == -1);
            CHECK(r.virtual_time == std::min(bin, split));
            CHECK(r.steps == (split < bin ? 8 : 4));
        }
    // Both sides of the cut-off occur above: (7 + 3m) 4 vs 8*7 + 2*15*3 m/16.
    CHECK(formula(broadcast_algo::binomial, 4, 1, 0) <
          formula(broadcast_algo::scatter_allgather, 4, 1, 0));
    CHECK(formula(broadcast_algo::binomial, 4, 1000, 0) >
          formula(broadcast_algo::scatter_allgather, 4, 1000, 0));
}

TEST_CASE("broadcast with a root outside 0..p-1 is a usage error naming the node and the root") {
    machine mc(test::cfg(3));
    for (auto a :
         {broadcast_algo::binomial, broadcast_algo::scatter_allgather, broadcast_algo::automatic})
        for (int root : {-1, 8}) {
            CAPTURE(root);
            try {
                mc.run([&](node& me) {
                    std::vector<int> v(4);
                    broadcast(me, std::span(v), root, a);
                });
                FAIL("no error");
            } catch (const run_error& e) {
                CHECK(std::string(e.what()) == "node " + std::to_string(e.node()) +
                                                   ": broadcast root " + std::to_string(root) +
                                                   " is outside 0..7 (and 7 more nodes the same)");
                CHECK_THROWS_AS(std::rethrow_exception(e.original()), usage_error);
            }
        }
    // The machine is still usable.
    run_report r;
    CHECK(broadcast_once<int>(mc, 2, 3, broadcast_algo::binomial, r) == -1);
}

TEST_CASE("broadcast needs no buffering in the links (link_capacity 0)") {
    config c = test::cfg(4, port_model::single_port, t_s, t_w);
    c.link_capacity = 0;
    machine mc(c);
    for (auto a : {broadcast_algo::binomial, broadcast_algo::scatter_allgather})
        for (int root : {0, 13}) {
            run_report r;
            CHECK(broadcast_once<std::int32_t>(mc, 37, root, a, r) == -1);
            CHECK(r.virtual_time == formula(a, 4, 37, root));
        }
}
