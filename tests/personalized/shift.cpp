// Circular q-shift (Grama et al. 4.6.2): every algorithm on both linear arrays
// against a serial reference, exact step counts within the source's bounds,
// Figures 4.23 and 4.24, E-cube congestion on the Gray-code array, bad calls.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/shift.hpp>
#include <hcube/cost/personalized.hpp>
#include <hcube/machine.hpp>
#include <hcube/topology.hpp>

#include "test_support.hpp"

using namespace hcube;

namespace {

const char* name(shift_algo a) {
    switch (a) {
    case shift_algo::gray:
        return "gray";
    case shift_algo::gray_bidirectional:
        return "gray-bidirectional";
    case shift_algo::ecube:
        return "ecube";
    case shift_algo::automatic:
        break;
    }
    return "automatic";
}

struct variant {
    shift_algo algo;
    bool gray_ring;
};
constexpr variant variants[] = {{shift_algo::gray, true},
                                {shift_algo::gray_bidirectional, true},
                                {shift_algo::ecube, true},
                                {shift_algo::ecube, false}};

// The node that holds array position `pos` (taken mod p) on the chosen array.
std::size_t node_at(std::size_t p, long long pos, bool gray_ring) {
    const auto r = std::size_t(((pos % (long long)p) + (long long)p) % (long long)p);
    return gray_ring ? gray(node_id(r)) : r;
}

// Shifts packets of m elements by q and checks out[node_at(pos + q)] ==
// in[node_at(pos)] for every position; returns the report.
template <class T>
run_report check(machine& mach, std::size_t m, long long q, variant v) {
    const std::size_t p = mach.size();
    std::vector<T> in(p * m), out(p * m);
    for (std::size_t n = 0; n < p; ++n)
        for (std::size_t i = 0; i < m; ++i)
            in[n * m + i] = test::value_for<T>(int(n), i);
    const run_report r = mach.run([&](node& me) {
        const std::size_t base = me.id() * m;
        circular_shift(me, std::span<const T>(in).subspan(base, m),
                       std::span<T>(out).subspan(base, m), q, v.algo,
                       v.gray_ring ? shift_ring::gray : shift_ring::id);
    });
    std::size_t wrong = 0;
    for (long long pos = 0; pos < (long long)p; ++pos) {
        const std::size_t from = node_at(p, pos, v.gray_ring),
                          to = node_at(p, pos + q, v.gray_ring);
        for (std::size_t i = 0; i < m; ++i)
            wrong += !(out[to * m + i] == in[from * m + i]);
    }
    INFO(name(v.algo), " ring ", v.gray_ring ? "gray" : "id", " d=", mach.cfg().dim, " m=", m,
         " q=", q);
    CHECK(wrong == 0);
    return r;
}

// The shifts to try: all of 0..p-1 for small cubes, else a spread including
// the extremes; plus a negative one and one past p.
std::vector<long long> shifts(int d) {
    const long long p = 1LL << d;
    std::vector<long long> q;
    if (d <= 4) {
        for (long long s = 0; s < p; ++s)
            q.push_back(s);
    } else {
        q = {0, 1, 2, 3, p / 2, p / 2 + 1, p - 2, p - 1, 5 * p / 8 + 3};
    }
    q.push_back(-3);
    q.push_back(p + 5);
    return q;
}

} // namespace

TEST_CASE("shift: every algorithm and array equals the serial reference, d = 0..8") {
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d));
        const std::size_t p = mach.size();
        std::vector<std::size_t> sizes = {0, 1, 3, p, 1000};
        if (d >= 5) sizes = {1, p};
        for (const variant& v : variants)
            for (long long q : shifts(d))
                for (std::size_t m : sizes)
                    if (d <= 2 || m == 1 || q == 5) check<std::int32_t>(mach, m, q, v);
    }
}

TEST_CASE_TEMPLATE("shift: other element types", T, std::int64_t, double, test::point) {
    for (int d : {0, 1, 3, 5}) {
        machine mach(test::cfg(d));
        for (const variant& v : variants)
            for (long long q : {1LL, 3LL, -1LL, 6LL})
                check<T>(mach, 3, q, v);
    }
}

TEST_CASE("shift gray: exactly 2 popcount(q) - q_0 steps, within Eq. 4.11's 2 log p - 1") {
    const double t_s = 5, t_w = 2;
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        const long long p = mach.size();
        int worst = 0;
        for (long long q = 0; q < p; q += d <= 5 ? 1 : 7) {
            const std::size_t m = q % 3;
            const run_report r = check<std::int32_t>(mach, m, q, {shift_algo::gray, true});
            const int steps = 2 * std::popcount(std::uint64_t(q)) - int(q & 1);
            INFO("d=", d, " q=", q);
            CHECK(r.steps == steps);
            CHECK(r.virtual_time == (t_s + t_w * double(m)) * steps);
            CHECK(r.virtual_time == cost::shift_gray(t_s, t_w, d, double(m), q));
            CHECK(steps <= cost::shift_gray_bound_steps(d));
            worst = std::max(worst, steps);
        }
        // q = p - 1 (all bits set) meets the bound.
        const run_report r = check<std::int32_t>(mach, 1, p - 1, {shift_algo::gray, true});
        CHECK(r.steps == cost::shift_gray_bound_steps(d));
        CHECK(worst <= cost::shift_gray_bound_steps(d));
    }
}

TEST_CASE("shift gray-bidirectional: never more steps than gray, at most log p") {
    const double t_s = 3, t_w = 1;
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        const long long p = mach.size();
        int worst = 0;
        for (long long q = 0; q < p; q += d <= 5 ? 1 : 5) {
            const run_report r =
                check<std::int32_t>(mach, 2, q, {shift_algo::gray_bidirectional, true});
            const int steps = cost::shift_gray_bidirectional_steps(d, q);
            INFO("d=", d, " q=", q);
            CHECK(r.steps == steps);
            CHECK(r.virtual_time == (t_s + 2 * t_w) * steps);
            CHECK(steps <= cost::shift_gray_steps(d, q));
            CHECK(steps <= d);
            worst = std::max(worst, steps);
        }
        if (d <= 5) CHECK(worst == d); // the log p bound is reached
    }
}

TEST_CASE("shift ecube, node ids (Eq. 4.12, Problem 4.22): t_s + t_w m, congestion-free") {
    const double t_s = 4, t_w = 3;
    for (int d = 1; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        const long long p = mach.size();
        for (long long q = 1; q < p; q += d <= 6 ? 1 : 9) {
            const run_report r = check<std::int32_t>(mach, 5, q, {shift_algo::ecube, false});
            INFO("d=", d, " q=", q);
            CHECK(r.congestion.empty());
            CHECK(r.virtual_time == t_s + 5 * t_w);
            CHECK(r.virtual_time == cost::shift_ecube(t_s, t_w, d, 5, q));
            // Problem 4.23: the longest path has log p - gamma(q) links.
            std::uint64_t longest = 0, hops = 0;
            for (long long i = 0; i < p; ++i) {
                const auto len = std::uint64_t(hamming(node_id(i), node_id((i + q) % p)));
                longest = std::max(longest, len), hops += len;
            }
            CHECK(longest == std::uint64_t(d - std::countr_zero(std::uint64_t(q))));
            CHECK(r.messages == hops);
            CHECK(r.max_link_messages() == 1);
        }
    }
}

namespace {

// The router's rule replayed by brute force for one step in which every node
// sends one message at t = 0: messages are placed in source order, each at the
// earliest time its whole E-cube path is free for `once` (no pruning, no
// queues: an independent reference). Returns the latest arrival.
double ecube_gray_reference(int d, long long q, double once) {
    const long long p = 1LL << d;
    std::vector<std::vector<std::pair<double, double>>> busy(std::size_t(p) * d);
    double latest = 0;
    for (long long src = 0; src < p; ++src) {
        const auto dest =
            (long long)node_at(std::size_t(p), (long long)gray_inverse(node_id(src)) + q, true);
        if (dest == src) continue;
        std::vector<std::size_t> path;
        for (int k = 0, x = int(src); k < d; ++k)
            if (((src ^ dest) >> k) & 1) path.push_back(std::size_t(x) * d + k), x ^= 1 << k;
        double g = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (std::size_t l : path)
                for (auto [b, e] : busy[l])
                    if (b < g + once && g < e) g = e, moved = true;
        }
        for (std::size_t l : path)
            busy[l].push_back({g, g + once});
        latest = std::max(latest, g + once);
    }
    return latest;
}

} // namespace

TEST_CASE("shift ecube on the Gray-code array: two paths share a link unless q = +-2^b") {
    // gray(r) -> gray(r + q) is not a q-shift of node ids, so Problem 4.22 does
    // not apply. q = 3 on 8 nodes: position 0 (000 -> 010) and position 1
    // (001 -> 000 -> 010 -> 110 by E-cube) both cross the link 000 -> 010.
    // Paths that meet on a link are served in virtual-time order, the lower
    // source first (all start at 0 here), so each (d, q) has one virtual time:
    // the reference's, 2 message times when paths meet. Steps are the same
    // critical path in messages.
    const double t_s = 4, t_w = 1, once = t_s + 2 * t_w;
    for (int d = 1; d <= 6; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        const long long p = mach.size();
        for (long long q = 1; q < p; ++q) {
            const run_report r = check<std::int32_t>(mach, 2, q, {shift_algo::ecube, true});
            const int load = cost::shift_ecube_link_load(d, q, true);
            INFO("d=", d, " q=", q, " load=", load);
            CHECK(r.max_link_messages() == std::uint64_t(load));
            CHECK(r.congestion.empty() == (load == 1));
            CHECK(r.virtual_time == ecube_gray_reference(d, q, once));
            CHECK(double(r.steps) == r.virtual_time / once);
            // Lower source first, two message times whenever paths meet: the
            // catalog's value is exact (checked by the reference to d = 10).
            CHECK(r.virtual_time == cost::shift_ecube_time(t_s, t_w, d, 2, q, true));
        }
    }
    // The example above: two disjoint conflicting pairs, so exactly 2 message
    // times and 2 steps (`hcube run shift --algo ecube --ring gray --dim 3
    // --shift 3`), one delayed message per pair.
    machine mach(test::cfg(3, port_model::single_port, t_s, t_w));
    const run_report r = check<std::int32_t>(mach, 2, 3, {shift_algo::ecube, true});
    CHECK(r.congestion.size() == 2);
    CHECK(r.virtual_time == 2 * once);
    CHECK(r.steps == 2);
}

TEST_CASE("shift gray, Figure 4.23: a 5-shift on 8 nodes is a 4-shift then a 1-shift") {
    CHECK(cost::shift_phases(3, 5, false) == std::vector<long long>{4, 1});
    machine mach(test::cfg(3));
    mach.set_trace(true);
    const run_report r = check<std::int32_t>(mach, 1, 5, {shift_algo::gray, true});
    CHECK(r.steps == 3);
    // The two steps of the 4-shift stay inside the subarrays {0, 3, 4, 7} and
    // {1, 2, 5, 6} of array positions, as the figure's caption says.
    const auto subarray = [](int node) {
        const node_id pos = gray_inverse(node_id(node));
        return pos == 0 || pos == 3 || pos == 4 || pos == 7;
    };
    std::vector<int> node0_dims;
    for (const trace_record& t : r.trace) {
        if (t.step < 2) CHECK(subarray(t.from) == subarray(t.to));
        if (t.from == 0) node0_dims.push_back(t.dim);
    }
    // Node 000: across dimension 1 (the pivot), then position 3's packet on to
    // position 7 (node 100) across dimension 2, then the 1-shift to node 001.
    CHECK(node0_dims == std::vector<int>{1, 2, 0});
}

TEST_CASE("shift gray-bidirectional: a 6-shift on 8 nodes is one backward 2-shift") {
    CHECK(cost::shift_phases(3, 6, true) == std::vector<long long>{-2});
    machine mach(test::cfg(3));
    CHECK(check<std::int32_t>(mach, 1, 6, {shift_algo::gray_bidirectional, true}).steps == 2);
    CHECK(check<std::int32_t>(mach, 1, 6, {shift_algo::gray, true}).steps == 4);
}

TEST_CASE("shift automatic: the cheapest closed form, as the catalog's auto") {
    machine mach(test::cfg(4, port_model::single_port, 1, 0));
    // Node ids: ecube, one routed message per node.
    const run_report by_id = check<std::int32_t>(mach, 1, 7, {shift_algo::automatic, false});
    CHECK(by_id.routed_messages == 16);
    CHECK(by_id.virtual_time == 1);
    // Gray-code array, q = 1: one Gray step ties with one routed step; gray wins.
    const run_report one = check<std::int32_t>(mach, 1, 1, {shift_algo::automatic, true});
    CHECK(one.routed_messages == 0);
    CHECK(one.steps == 1);
    // q = 7 = 8 - 1: 3 bidirectional steps lose to ecube's 2 message times.
    const run_report seven = check<std::int32_t>(mach, 1, 7, {shift_algo::automatic, true});
    CHECK(seven.routed_messages == 16);
    CHECK(seven.virtual_time >= 2);
}

TEST_CASE("shift: bad calls are usage_errors naming the node and values") {
    machine mach(test::cfg(2));
    CHECK_THROWS_WITH_AS(
        mach.run([&](node& me) {
            const std::vector<int> in(3);
            std::vector<int> out(me.id() == 1 ? 4 : 3); // node 1's is too long
            circular_shift(me, std::span<const int>(in), std::span<int>(out), 1);
        }),
        doctest::Contains("circular_shift on node 1: in has 3 elements and out has 4"), run_error);
    for (shift_algo a : {shift_algo::gray, shift_algo::gray_bidirectional})
        CHECK_THROWS_WITH_AS(mach.run([&](node& me) {
            const std::vector<int> in(3);
            std::vector<int> out(3);
            circular_shift(me, std::span<const int>(in), std::span<int>(out), 1, a, shift_ring::id);
        }),
                             doctest::Contains("ring id (node i -> i + q) needs ecube"), run_error);
}
