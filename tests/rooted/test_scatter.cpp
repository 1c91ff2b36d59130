// collectives/scatter.hpp: scatter and gather against the serial reference for
// d = 0..8, m in {0, 1, 3, p, 1000}, several roots and four element types;
// virtual time equal to Eq. 4.6; Figure 4.15 (the distribution after every
// step of a scatter on 8 nodes) and the gather order the text of 4.4 gives;
// bad roots and sizes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <collective_checks.hpp>
#include <doctest/doctest.h>
#include <hcube/collectives/scatter.hpp>
#include <hcube/cost/rooted.hpp>
#include <hcube/machine.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr double t_s = 7, t_w = 3;

// Scatters blocks (block j = value_for(j, .)) from `root`; -1 when every node got its block.
template <class T>
int scatter_once(machine& mc, std::size_t m, int root, run_report& r) {
    const int p = mc.size();
    std::vector<T> all;
    for (int j = 0; j < p; ++j)
        for (std::size_t i = 0; i < m; ++i)
            all.push_back(test::value_for<T>(j, i));
    std::vector<std::vector<T>> got(static_cast<std::size_t>(p));
    r = mc.run([&](node& me) {
        std::vector<T> mine(m);
        // Only the root's `all` may be read: the others pass an empty span.
        const std::span<const T> src =
            me.id() == root ? std::span<const T>(all) : std::span<const T>();
        scatter(me, src, std::span(mine), root);
        got[std::size_t(me.id())] = std::move(mine);
    });
    for (int x = 0; x < p; ++x)
        if (!std::equal(got[std::size_t(x)].begin(), got[std::size_t(x)].end(),
                        all.begin() + std::ptrdiff_t(std::size_t(x) * m)))
            return x;
    return -1;
}

// Gathers every node's block at `root`; true when the root holds them in node order.
template <class T>
bool gather_once(machine& mc, std::size_t m, int root, run_report& r) {
    const int p = mc.size();
    std::vector<T> got;
    r = mc.run([&](node& me) {
        std::vector<T> mine(m);
        for (std::size_t i = 0; i < m; ++i)
            mine[i] = test::value_for<T>(me.id(), i);
        std::vector<T> all(me.id() == root ? std::size_t(p) * m : 0);
        gather(me, std::span<const T>(mine), std::span(all), root);
        if (me.id() == root) got = std::move(all);
    });
    std::vector<T> want;
    for (int j = 0; j < p; ++j)
        for (std::size_t i = 0; i < m; ++i)
            want.push_back(test::value_for<T>(j, i));
    return got == want;
}

template <class T>
void check_cube(int d, bool all_cases) {
    const std::size_t p = std::size_t{1} << d;
    test::for_rooted_cases(test::cfg(d, port_model::single_port, t_s, t_w), all_cases,
                           {0, 1, 3, p, 1000}, [&](machine& mc, std::size_t m, int root) {
                               const double eq_4_6 = cost::scatter_binomial(d, double(m), t_s, t_w);
                               run_report r;
                               CHECK(scatter_once<T>(mc, m, root, r) == -1);
                               CHECK(r.virtual_time == eq_4_6);
                               CHECK(r.steps == d);
                               CHECK(gather_once<T>(mc, m, root, r));
                               CHECK(r.virtual_time ==
                                     cost::gather_binomial(d, double(m), t_s, t_w));
                               CHECK(r.steps == d);
                           });
}

using message = std::tuple<int, int, std::int64_t, std::uint64_t>; // from, to, step, bytes

std::vector<message> messages(const run_report& r) {
    std::vector<message> out;
    for (const auto& t : r.trace)
        out.emplace_back(t.from, t.to, t.step, t.bytes);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE_TEMPLATE("scatter and gather: every block reaches its node, in the time of Eq. 4.6", T,
                   std::int32_t, std::int64_t, double, test::point) {
    for (int d = 0; d <= 6; ++d)
        check_cube<T>(d, true);
}

TEST_CASE("scatter and gather on 128 and 256 nodes") {
    check_cube<test::point>(7, true);
    check_cube<std::int64_t>(8, false);
}

TEST_CASE("Figure 4.15: the scatter on an eight-node hypercube, step by step") {
    // The figure's panels: which node holds which messages (labelled by their
    // destination) before steps 1, 2, 3 and at the end.
    using holdings = std::vector<std::set<int>>;
    const std::vector<holdings> figure{
        {{0, 1, 2, 3, 4, 5, 6, 7}, {}, {}, {}, {}, {}, {}, {}}, // (a) initial
        {{0, 1, 2, 3}, {}, {}, {}, {4, 5, 6, 7}, {}, {}, {}},   // (b) before step 2
        {{0, 1}, {}, {2, 3}, {}, {4, 5}, {}, {6, 7}, {}},       // (c) before step 3
        {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}},               // (d) final
    };

    machine mc(test::cfg(3));
    mc.set_trace(true);
    // The scatter itself, one element per node: every node ends with its own.
    run_report r;
    REQUIRE(scatter_once<std::int32_t>(mc, 1, 0, r) == -1);
    REQUIRE(r.trace.size() == 7);

    // What each message carried, from the trace alone: a block reaches its
    // node along the messages of the run, so the message to y carries y's
    // block and those of every node y sends to in a later step.
    const auto carried = [&](const auto& self, int y, std::int64_t after) -> std::set<int> {
        std::set<int> out{y};
        for (const auto& t : r.trace)
            if (t.from == y && t.step > after) out.merge(self(self, t.to, t.step));
        return out;
    };
    holdings now = figure[0];
    for (std::size_t panel = 1; panel < figure.size(); ++panel) {
        const auto step = std::int64_t(panel - 1);
        CAPTURE(panel);
        for (const auto& t : r.trace) {
            if (t.step != step) continue;
            const std::set<int> blocks = carried(carried, t.to, t.step);
            CAPTURE(t.from);
            CAPTURE(t.to);
            CHECK(t.bytes == blocks.size() * sizeof(std::int32_t));
            for (int j : blocks) {
                CHECK(now[std::size_t(t.from)].erase(j) == 1); // the sender held it
                now[std::size_t(t.to)].insert(j);
            }
        }
        CHECK(now == figure[panel]);
    }
}

TEST_CASE("gather on eight nodes: odd nodes first, then multiples of two, then four (4.4)") {
    machine mc(test::cfg(3));
    mc.set_trace(true);
    run_report r;
    REQUIRE(gather_once<std::int64_t>(mc, 2, 0, r));
    const std::uint64_t m = 2 * sizeof(std::int64_t);
    CHECK(messages(r) == std::vector<message>{{1, 0, 0, m},
                                              {2, 0, 1, 2 * m},
                                              {3, 2, 0, m},
                                              {4, 0, 2, 4 * m},
                                              {5, 4, 0, m},
                                              {6, 4, 1, 2 * m},
                                              {7, 6, 0, m}});
}

TEST_CASE(
    "scatter and gather with a bad root or size are usage errors naming the node and values") {
    machine mc(test::cfg(3));
    const auto message_of = [&](const std::function<void(node&)>& program) -> std::string {
        try {
            mc.run(program);
        } catch (const run_error& e) {
            const std::string prefix = "node " + std::to_string(e.node()) + ": ";
            const std::string what = e.failures().front().what; // the lowest failing node's
            CHECK(what.rfind(prefix, 0) == 0);
            return what.substr(prefix.size());
        }
        return "no error";
    };
    std::vector<int> all(16);
    for (int root : {-1, 8}) {
        CHECK(message_of([&](node& me) {
                  std::vector<int> mine(2);
                  scatter(me, std::span<const int>(all), std::span(mine), root);
              }) == "scatter root " + std::to_string(root) + " is outside 0..7");
        CHECK(message_of([&](node& me) {
                  std::vector<int> mine(2);
                  gather(me, std::span<const int>(mine), std::span(all), root);
              }) == "gather root " + std::to_string(root) + " is outside 0..7");
    }
    CHECK(message_of([&](node& me) {
              std::vector<int> mine(2);
              scatter(me, std::span<const int>(all).first(15), std::span(mine), 3);
          }) == "scatter needs 8 x 2 elements at the root, got 15");
    CHECK(message_of([&](node& me) {
              std::vector<int> mine(2), out(me.id() == 3 ? 17 : 0);
              gather(me, std::span<const int>(mine), std::span(out), 3);
          }) == "gather needs 8 x 2 elements at the root, got 17");
}

TEST_CASE("scatter and gather need no buffering in the links (link_capacity 0)") {
    config c = test::cfg(4, port_model::single_port, t_s, t_w);
    c.link_capacity = 0;
    machine mc(c);
    for (int root : {0, 13}) {
        run_report r;
        CHECK(scatter_once<std::int32_t>(mc, 5, root, r) == -1);
        CHECK(r.virtual_time == cost::scatter_binomial(4, 5, t_s, t_w));
        CHECK(gather_once<std::int32_t>(mc, 5, root, r));
        CHECK(r.virtual_time == cost::gather_binomial(4, 5, t_s, t_w));
    }
}
