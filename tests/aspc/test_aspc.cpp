// collectives/include/hcube/collectives/aspc.hpp: results for n = 3..10, the exact
// all-port time 4 (t_s + t_w w), conflict-free links per step from the trace,
// the single-port baseline, Theorem 2's bound next to the measured steps.
#include <doctest/doctest.h>

#include <hcube/collectives/aspc.hpp>
#include <hcube/cost/aspc.hpp>
#include <hcube/machine.hpp>

#include <test_support.hpp>

#include <map>
#include <set>
#include <tuple>
#include <vector>

using namespace hcube;
namespace hs = hcube::aspc_schedule;

namespace {

// Element k of block j of logical node i.
template <class T>
T value(node_id i, int j, std::size_t k) {
    return test::value_for<T>(int(i), std::size_t(j) * 100 + k);
}

// Runs ASPC with blocks of w elements and checks every node's result against
// the pattern (i|j) -> (i +- 2^j | j).
template <class T>
run_report run_and_check(machine& m, std::size_t w) {
    const int n = m.cfg().dim;
    const node_id P = node_id{1} << n;
    const std::size_t nw = std::size_t(n) * w;
    std::vector<T> plus(P * nw), minus(P * nw);
    const run_report r = m.run([&](node& me) {
        const node_id i = hs::logical_of(node_id(me.id()));
        std::vector<T> in(nw);
        for (int j = 0; j < n; ++j)
            for (std::size_t k = 0; k < w; ++k)
                in[j * w + k] = value<T>(i, j, k);
        aspc<T>(me, in, std::span<T>(plus).subspan(i * nw, nw),
                std::span<T>(minus).subspan(i * nw, nw));
    });
    bool ok = true;
    for (node_id i = 0; i < P; ++i)
        for (int j = 0; j < n; ++j)
            for (std::size_t k = 0; k < w; ++k) {
                ok &= plus[i * nw + j * w + k] == value<T>((i - (node_id{1} << j)) % P, j, k);
                ok &= minus[i * nw + j * w + k] == value<T>((i + (node_id{1} << j)) % P, j, k);
            }
    CHECK_MESSAGE(ok, "n = " << n << ", w = " << w);
    return r;
}

// Every (step, sender, link) carries at most one message; returns the number
// of messages each node sent in each step.
std::map<std::int64_t, std::map<int, int>> check_links_once_per_step(const run_report& r) {
    std::set<std::tuple<std::int64_t, int, int>> used;
    std::map<std::int64_t, std::map<int, int>> per_step;
    for (const auto& t : r.trace) {
        CHECK_MESSAGE(used.insert({t.step, t.from, t.dim}).second,
                      "link " << t.from << " dim " << t.dim << " used twice in step " << t.step);
        ++per_step[t.step][t.from];
    }
    return per_step;
}

} // namespace

TEST_CASE("ASPC all-port: n = 3..10 correct, 4 steps, Theorem 2's bound") {
    for (int n = 3; n <= 10; ++n) {
        machine m(test::cfg(n, port_model::all_port));
        const run_report r = run_and_check<std::int64_t>(m, 1);
        MESSAGE("n = " << n << ": " << r.steps << " steps, Theorem 2 lower bound "
                       << hs::lower_bound_steps(n));
        CHECK(r.steps == 4);
        CHECK(r.steps == hs::lower_bound_steps(n));
    }
}

TEST_CASE("ASPC all-port: virtual time is exactly 4 (t_s + t_w w)") {
    machine m(test::cfg(4, port_model::all_port));
    for (auto [t_s, t_w] : {std::pair{1.0, 0.0}, {3.0, 2.0}, {10.0, 1.0}})
        for (std::size_t w : {1u, 5u, 64u}) {
            m.set_cost({t_s, t_w, 0});
            const run_report r = run_and_check<std::int32_t>(m, w);
            CHECK(r.virtual_time == 4 * (t_s + t_w * double(w)));
            CHECK(r.virtual_time == cost::aspc_all_port(4, double(w), t_s, t_w));
        }
    // Blocks above the eager limit (rendezvous exchanges) and a struct type.
    m.set_cost({2, 1, 0});
    const run_report r = run_and_check<test::point>(m, 700);
    CHECK(r.virtual_time == 4 * (2 + 700));
}

TEST_CASE("ASPC all-port: n = 1 and 2 (below the theorem's n > 2)") {
    for (int n = 1; n <= 2; ++n) {
        machine m(test::cfg(n, port_model::all_port, 2, 1));
        const run_report r = run_and_check<std::int32_t>(m, 3);
        CHECK(r.steps == cost::aspc_all_port_steps(n));
        CHECK(r.virtual_time == cost::aspc_all_port(n, 3, 2, 1));
        MESSAGE("n = " << n << ": " << r.steps << " steps, lower bound "
                       << hs::lower_bound_steps(n));
    }
}

TEST_CASE("ASPC all-port: no link used twice in one step; every link busy in steps 1 and 3") {
    for (int n : {3, 5, 7}) {
        config c = test::cfg(n, port_model::all_port);
        c.trace = true;
        machine m(c);
        const run_report r = run_and_check<std::int32_t>(m, 2);
        const auto per_step = check_links_once_per_step(r);
        REQUIRE(per_step.size() == 4);
        // Steps 0 and 2 start the halves: n messages per node (all links);
        // steps 1 and 3 forward the n - 1 blocks with j > 0.
        const int want[] = {n, n - 1, n, n - 1};
        for (int s = 0; s < 4; ++s) {
            REQUIRE(per_step.count(s) == 1);
            CHECK(per_step.at(s).size() == std::size_t(1) << n);
            for (const auto& [node, count] : per_step.at(s))
                CHECK(count == want[s]);
        }
        CHECK(r.messages == std::uint64_t(4 * n - 2) << n);
    }
}

TEST_CASE("ASPC single-port baseline: (4n - 2) steps, one link at a time") {
    for (int n = 3; n <= 8; ++n) {
        config c = test::cfg(n, port_model::single_port, 3, 1);
        c.trace = n == 3;
        machine m(c);
        const run_report r = run_and_check<std::int32_t>(m, 4);
        MESSAGE("n = " << n << ": single-port " << r.steps << " steps vs all-port "
                       << cost::aspc_all_port_steps(n));
        CHECK(r.steps == 4 * n - 2);
        CHECK(r.steps == hs::single_port_lower_bound_steps(n));
        CHECK(r.virtual_time == cost::aspc_single_port(n, 4, 3, 1));
        if (n == 3)
            for (const auto& [step, senders] : check_links_once_per_step(r))
                for (const auto& [node, count] : senders)
                    CHECK(count == 1);
    }
}

TEST_CASE("ASPC: bad sizes are usage errors naming the node and the sizes") {
    machine m(test::cfg(3, port_model::all_port));
    const auto run_with = [&](std::size_t in, std::size_t out) {
        m.run([&](node& me) {
            std::vector<int> a(in), b(out), c(out);
            aspc<int>(me, a, b, c);
        });
    };
    CHECK_THROWS_WITH_AS(run_with(4, 4), doctest::Contains("in has 4 elements"), run_error);
    CHECK_THROWS_WITH_AS(run_with(6, 3), doctest::Contains("plus_out 3"), run_error);
    try {
        run_with(7, 7);
        FAIL("no error");
    } catch (const run_error& e) {
        CHECK(std::string(e.what()).find("aspc on node " + std::to_string(e.node())) !=
              std::string::npos);
        CHECK(std::string(e.what()).find("n = 3") != std::string::npos);
    }
}
