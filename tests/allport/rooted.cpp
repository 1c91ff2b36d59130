// collectives/all_port.hpp, rooted: broadcast and reduce over both tree
// families, scatter and gather over the rotated trees, against serial
// references for d = 0..8, several roots, m not divisible by d; virtual time
// equal to cost/all_port.hpp; from the trace, one message per directed link
// and step (and, for the edge-disjoint trees, per link in the whole run);
// refusals: single-port, an operator that does not commute.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <collective_checks.hpp>
#include <doctest/doctest.h>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/cost/all_port.hpp>
#include <hcube/machine.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

int dim_of(const machine& mc) {
    return std::countr_zero(unsigned(mc.size()));
}

constexpr double t_s = 7, t_w = 3;

config all_port_cfg(int d, bool trace = false) {
    config c = test::cfg(d, port_model::all_port, t_s, t_w);
    c.trace = trace;
    return c;
}

// m: 0, 1, below d, not divisible by d, larger.
std::vector<std::size_t> sizes(int d) {
    if (d == 8) return {13};
    return {0, 1, std::size_t(d > 1 ? d - 1 : 2), std::size_t(3 * d + 1), 37};
}
std::vector<int> roots(int d) {
    const int p = 1 << d;
    if (d == 0) return {0};
    return {0, p - 1, p / 3};
}

// Messages per (from, dim, start step) and per (from, dim): steps are the
// report's step counts (t_s = 1, t_w = 0), so a message's step is its
// schedule step when the schedule is tight.
struct link_use {
    std::size_t most_per_step = 0, most_per_link = 0;
};
link_use link_use_of(const run_report& r) {
    std::map<std::tuple<int, int, std::int64_t>, std::size_t> per_step;
    std::map<std::pair<int, int>, std::size_t> per_link;
    link_use u;
    for (const auto& t : r.trace) {
        u.most_per_step = std::max(u.most_per_step, ++per_step[{t.from, t.dim, t.step}]);
        u.most_per_link = std::max(u.most_per_link, ++per_link[{t.from, t.dim}]);
    }
    return u;
}

template <class T>
void broadcast_case(machine& mc, tree_family f, std::size_t m, int root) {
    auto got = std::vector<std::vector<T>>(std::size_t(mc.size()));
    const run_report r = mc.run([&](node& me) {
        std::vector<T> data(m);
        for (std::size_t i = 0; i < m; ++i)
            data[i] = test::value_for<T>(me.id(), i);
        broadcast_trees(me, std::span(data), root, f);
        got[std::size_t(me.id())] = std::move(data);
    });
    std::vector<T> want(m);
    for (std::size_t i = 0; i < m; ++i)
        want[i] = test::value_for<T>(root, i);
    for (int x = 0; x < mc.size(); ++x) {
        CAPTURE(x);
        REQUIRE(got[std::size_t(x)] == want);
    }
    CHECK(r.virtual_time == cost::rooted_trees(f, dim_of(mc), double(m), t_s, t_w));
    CHECK(r.steps == std::int64_t(cost::rooted_trees(f, dim_of(mc), double(m), 1, 0)));
    const link_use u = link_use_of(r);
    CHECK(u.most_per_step <= 1);
    if (f == tree_family::edge_disjoint) CHECK(u.most_per_link <= 1);
}

template <class T>
void reduce_case(machine& mc, tree_family f, std::size_t m, int root) {
    std::vector<T> at_root;
    const run_report r = mc.run([&](node& me) {
        std::vector<T> data(m);
        for (std::size_t i = 0; i < m; ++i)
            data[i] = test::input<T>(me.id(), i);
        reduce_trees(me, std::span(data), root, std::plus<>{}, f);
        if (me.id() == root) at_root = std::move(data);
    });
    for (std::size_t i = 0; i < m; ++i) {
        CAPTURE(i);
        REQUIRE(at_root[i] == test::serial_fold<T>(mc.size(), i, std::plus<>{}));
    }
    CHECK(r.virtual_time == cost::rooted_trees(f, dim_of(mc), double(m), t_s, t_w));
    const link_use u = link_use_of(r);
    CHECK(u.most_per_step <= 1);
    if (f == tree_family::edge_disjoint) CHECK(u.most_per_link <= 1);
}

template <class T>
void scatter_gather_case(machine& mc, std::size_t m, int root) {
    const int p = mc.size();
    std::vector<T> all(std::size_t(p) * m);
    for (int x = 0; x < p; ++x)
        for (std::size_t i = 0; i < m; ++i)
            all[std::size_t(x) * m + i] = test::value_for<T>(x, i);
    auto got = std::vector<std::vector<T>>(std::size_t(p));
    run_report r = mc.run([&](node& me) {
        std::vector<T> mine(m);
        scatter_trees(me, me.id() == root ? std::span<const T>(all) : std::span<const T>(), mine,
                      root);
        got[std::size_t(me.id())] = std::move(mine);
    });
    for (int x = 0; x < p; ++x) {
        CAPTURE(x);
        REQUIRE(got[std::size_t(x)] ==
                std::vector<T>(all.begin() + std::ptrdiff_t(std::size_t(x) * m),
                               all.begin() + std::ptrdiff_t(std::size_t(x + 1) * m)));
    }
    const double want = cost::scatter_trees(dim_of(mc), double(m), t_s, t_w);
    CHECK(r.virtual_time == want);
    CHECK(link_use_of(r).most_per_step <= 1);

    std::vector<T> gathered;
    r = mc.run([&](node& me) {
        std::vector<T> out(me.id() == root ? all.size() : 0);
        gather_trees(me, got[std::size_t(me.id())], out, root);
        if (me.id() == root) gathered = std::move(out);
    });
    CHECK(gathered == all);
    CHECK(r.virtual_time == want);
    CHECK(link_use_of(r).most_per_step <= 1);
}

} // namespace

TEST_CASE("rooted all-port collectives: serial reference, exact cost, one message per link "
          "and step, d = 0..8") {
    for (int d = 0; d <= 8; ++d) {
        machine mc(all_port_cfg(d, true));
        for (std::size_t m : sizes(d))
            for (int root : roots(d)) {
                CAPTURE(d);
                CAPTURE(m);
                CAPTURE(root);
                for (auto f : {tree_family::rotated, tree_family::edge_disjoint}) {
                    CAPTURE(int(f));
                    broadcast_case<std::int64_t>(mc, f, m, root);
                    reduce_case<std::int64_t>(mc, f, m, root);
                }
                scatter_gather_case<std::int32_t>(mc, m, root);
            }
    }
}

TEST_CASE("rooted all-port collectives carry other element types") {
    machine mc(all_port_cfg(3));
    broadcast_case<test::point>(mc, tree_family::edge_disjoint, 10, 5);
    reduce_case<double>(mc, tree_family::rotated, 10, 6);
    scatter_gather_case<test::point>(mc, 5, 3);
}

TEST_CASE("the source's claim: t_w coefficient m log p single-port, m (rotated trees) all-port") {
    for (int d = 2; d <= 10; ++d) {
        const double m = 720 * d; // divisible by d
        CHECK(cost::rooted_trees(tree_family::rotated, d, m, 0, 1) == m);
        CHECK(cost::rooted_trees(tree_family::edge_disjoint, d, m, 0, 1) == m + m / d);
        const double p = double(1 << d);
        CHECK(cost::scatter_trees(d, m, 0, 1) == m * (p - 1) / d);
        CHECK(cost::scatter_trees(d, m, 1, 0) == d);
    }
}

TEST_CASE("single-port is refused with the port model named") {
    machine mc(test::cfg(2));
    std::vector<int> data(4);
    CHECK_THROWS_WITH_AS(
        mc.run([&](node& me) { broadcast_trees(me, data, 0, tree_family::edge_disjoint); }),
        doctest::Contains("node 0: broadcast edge-disjoint-trees exchanges on all 2 links at "
                          "once; run with --ports all (all-port model), not single-port"),
        run_error);
    CHECK_THROWS_WITH_AS(mc.run([&](node& me) {
        std::vector<int> mine(1);
        gather_trees(me, mine, data, 0);
    }),
                         doctest::Contains("gather rotated-trees exchanges on all 2 links"),
                         run_error);
    // A 1-cube has one link: both port models are the same.
    machine one(test::cfg(1));
    CHECK_NOTHROW(one.run([](node& me) {
        std::vector<int> own(4, me.id()); // each node its own buffer
        broadcast_trees(me, own, 1, tree_family::rotated);
    }));
}

TEST_CASE("reduce over the trees refuses an operator that does not commute") {
    machine mc(all_port_cfg(2));
    CHECK_THROWS_WITH_AS(mc.run([&](node& me) {
        std::vector<test::mat2> v(3);
        reduce_trees(me, v, 0, test::mat2_product{}, tree_family::rotated);
    }),
                         doctest::Contains("needs an operator that commutes"), run_error);
}

TEST_CASE("bad roots and sizes name the node and the values") {
    machine mc(all_port_cfg(2));
    std::vector<int> data(4);
    CHECK_THROWS_WITH_AS(
        mc.run([&](node& me) { broadcast_trees(me, data, 4, tree_family::rotated); }),
        doctest::Contains("broadcast root 4 is outside 0..3"), run_error);
    CHECK_THROWS_WITH_AS(
        mc.run([&](node& me) {
            std::vector<int> mine(2);
            scatter_trees(me, data, mine, 0);
        }),
        doctest::Contains("node 0: scatter needs 4 x 2 elements at the root, got 4"), run_error);
}
