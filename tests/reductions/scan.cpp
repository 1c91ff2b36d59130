// Prefix sums (collectives/scan.hpp): inclusive and exclusive scans against a
// serial reference with plus (three types) and the 2x2 matrix product,
// d = 0..8; exact cost (t_s + t_w m) log p; Figure 4.13 replayed step by step.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <hcube/collectives/scan.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/machine.hpp>

#include <collective_checks.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr test::named<bool> scans[] = {{true, "inclusive"}, {false, "exclusive"}};

// Runs the scan with plus or the matrix product (test::op_for<T>) and counts
// the nodes whose data differs from the serial prefix; an exclusive scan must
// leave node 0's data as it was.
constexpr auto wrong_nodes = []<class T>(machine& mach, bool inclusive, std::size_t m) {
    const test::op_for<T> op;
    const int p = mach.size();
    // prefix[k] = x_0 op ... op x_k
    std::vector<std::vector<T>> prefix(static_cast<std::size_t>(p), std::vector<T>(m));
    for (std::size_t i = 0; i < m; ++i) {
        prefix[0][i] = test::input<T>(0, i);
        for (int k = 1; k < p; ++k)
            prefix[std::size_t(k)][i] = op(prefix[std::size_t(k) - 1][i], test::input<T>(k, i));
    }
    return test::count_wrong_nodes(mach, [&](node& me) {
        std::vector<T> data(m);
        for (std::size_t i = 0; i < m; ++i)
            data[i] = test::input<T>(me.id(), i);
        const std::vector<T> original = data;
        if (inclusive)
            inclusive_scan(me, std::span<T>(data), op);
        else
            exclusive_scan(me, std::span<T>(data), op);
        const std::size_t k = std::size_t(me.id());
        const std::vector<T>& want = inclusive ? prefix[k] : (k == 0 ? original : prefix[k - 1]);
        return data == want;
    });
};

// A contiguous range of node ids [lo, hi]: combining two adjacent ranges in
// order gives their union; anything else (wrong order, a gap) gives {-1, -1}.
// Non-commutative, so the replay below also checks node order.
struct range {
    int lo = -1, hi = -1;
    friend bool operator==(const range&, const range&) = default;
};
struct join {
    range operator()(range a, range b) const {
        return a.lo >= 0 && b.lo == a.hi + 1 ? range{a.lo, b.hi} : range{};
    }
};

// "0+1+2" for [0, 2], as Figure 4.13 writes its sums.
std::string terms(range r) {
    if (r.lo < 0) return "?";
    std::string s;
    for (int k = r.lo; k <= r.hi; ++k)
        s += (s.empty() ? "" : "+") + std::to_string(k);
    return s;
}

} // namespace

TEST_CASE("inclusive and exclusive scans equal the serial prefixes, d = 0..8") {
    test::check_every_cube<test::mat2>(scans, test::sizes_to_1000, wrong_nodes);
}

TEST_CASE("scans cost exactly (t_s + t_w m) log p (Alg. 4.9, t_s = 3, t_w = 2)") {
    constexpr double t_s = 3, t_w = 2;
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        for (std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}})
            for (bool inclusive : {true, false}) {
                CAPTURE(d);
                CAPTURE(m);
                CAPTURE(inclusive);
                const run_report r = mach.run([&](node& me) {
                    std::vector<test::mat2> data(m);
                    if (inclusive)
                        inclusive_scan(me, std::span<test::mat2>(data), test::mat2_product{});
                    else
                        exclusive_scan(me, std::span<test::mat2>(data), test::mat2_product{});
                });
                CHECK(r.virtual_time == cost::scan_hypercube(d, double(m), t_s, t_w));
                CHECK(r.steps == d);
            }
    }
    CHECK(cost::scan_hypercube(3, 10, 3, 2) == (3 + 2 * 10) * 3);
}

TEST_CASE("Figure 4.13: prefix sums on eight nodes, result and outgoing buffer after each step") {
    // [result] and (outgoing message) of every node before steps 1, 2, 3 and at
    // the end: Figure 4.13 (a)-(d).
    const std::vector<std::vector<std::string>> figure = {
        {"[0] (0)", "[1] (1)", "[2] (2)", "[3] (3)", "[4] (4)", "[5] (5)", "[6] (6)", "[7] (7)"},
        {"[0] (0+1)", "[0+1] (0+1)", "[2] (2+3)", "[2+3] (2+3)", "[4] (4+5)", "[4+5] (4+5)",
         "[6] (6+7)", "[6+7] (6+7)"},
        {"[0] (0+1+2+3)", "[0+1] (0+1+2+3)", "[0+1+2] (0+1+2+3)", "[0+1+2+3] (0+1+2+3)",
         "[4] (4+5+6+7)", "[4+5] (4+5+6+7)", "[4+5+6] (4+5+6+7)", "[4+5+6+7] (4+5+6+7)"},
        {"[0] (0+1+2+3+4+5+6+7)", "[0+1] (0+1+2+3+4+5+6+7)", "[0+1+2] (0+1+2+3+4+5+6+7)",
         "[0+1+2+3] (0+1+2+3+4+5+6+7)", "[0+1+2+3+4] (0+1+2+3+4+5+6+7)",
         "[0+1+2+3+4+5] (0+1+2+3+4+5+6+7)", "[0+1+2+3+4+5+6] (0+1+2+3+4+5+6+7)",
         "[0+1+2+3+4+5+6+7] (0+1+2+3+4+5+6+7)"},
    };
    machine mach(test::cfg(3));
    std::vector<std::vector<std::string>> state(4, std::vector<std::string>(8));
    std::vector<range> public_result(8);
    mach.run([&](node& me) {
        std::vector<range> data{{me.id(), me.id()}};
        join op;
        detail::scan_state<range> s = detail::make_scan_state(me, std::span<range>(data), true);
        const auto snapshot = [&](std::size_t step) {
            state[step][std::size_t(me.id())] =
                "[" + terms(s.result[0]) + "] (" + terms(s.msg[0]) + ")";
        };
        snapshot(0);
        for (int i = 0; i < 3; ++i) {
            detail::scan_step(me, i, s, op);
            snapshot(std::size_t(i) + 1);
        }
        // The public entry point ends in the same state.
        std::vector<range> again{{me.id(), me.id()}};
        inclusive_scan(me, std::span<range>(again), op);
        public_result[std::size_t(me.id())] = again[0];
    });
    for (std::size_t step = 0; step < 4; ++step)
        for (std::size_t x = 0; x < 8; ++x) {
            CAPTURE(step);
            CAPTURE(x);
            CHECK(state[step][x] == figure[step][x]);
        }
    for (int x = 0; x < 8; ++x)
        CHECK(public_result[std::size_t(x)] == range{0, x});
}

TEST_CASE("exclusive scan: node k gets x_0 .. x_(k-1), node 0 keeps its input") {
    machine mach(test::cfg(3));
    std::vector<range> got(8);
    mach.run([&](node& me) {
        std::vector<range> data{{me.id(), me.id()}};
        exclusive_scan(me, std::span<range>(data), join{});
        got[std::size_t(me.id())] = data[0];
    });
    CHECK(got[0] == range{0, 0});
    for (int x = 1; x < 8; ++x)
        CHECK(got[std::size_t(x)] == range{0, x - 1});
}
