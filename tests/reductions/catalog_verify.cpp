// The catalog's verification (hcube/driver/dispatch.hpp) on results that
// are wrong on purpose. Every catalog and CLI test asserts `verified`; these
// show that a wrong result is not verified and that the note names the node,
// the element and both values. Every catalog entry reaches its verdict
// through first_mismatch and make_outcome (the one verification harness); the
// rooted, reduction and personalized entries run through run_verified, the
// rooted and reduction ones through typed_entry, all exercised here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/driver/dispatch.hpp>
#include <hcube/machine.hpp>

#include <test_support.hpp>

using namespace hcube;
using detail::first_mismatch;

namespace {

// Element i of node k's catalog input of 2 elements, written out: 2 k + i.
// On 4 nodes element 0 is 0, 2, 4, 6 (sum 12) and element 1 is 1, 3, 5, 7
// (sum 16).
constexpr int p4_sum[] = {12, 16};
constexpr int p4_max[] = {6, 7};

struct max_op {
    template <class T>
    T operator()(const T& x, const T& y) const {
        return std::max(x, y);
    }
};

// An all-reduce of every node's first m catalog inputs with `op`, verified
// against the sum on every node.
template <class T, class Op>
run_outcome allreduce_verified(machine& mc, std::size_t m, Op op) {
    const detail::inputs<T> in(m, std::uint64_t(mc.size()));
    const std::vector<T> sum = in.fold(0, mc.size(), 0, m);
    return detail::run_verified<T>(
        mc, 0, [&](int k) { return in.block(std::uint64_t(k)); },
        [&](node& me, std::vector<T>& v) { allreduce(me, std::span(v), op); },
        [&](int) { return std::optional(sum); });
}

// The matrix product with its operands swapped: x y gives y x.
struct swapped_product {
    test::mat2 operator()(const test::mat2& x, const test::mat2& y) const {
        return test::mat2_product{}(y, x);
    }
};

// A catalog entry made the way the rooted entries are (typed_entry +
// run_verified, ordered): a reduction to p.root checked against the serial
// fold, computed with `Op` (std::plus: right; max_op: wrong on purpose) and on
// matrices with `MatOp` (swapped_product: wrong on purpose).
template <class Op, class MatOp = test::mat2_product>
algorithm_entry reduce_entry() {
    const auto runner = []<class T>(machine& mc, const run_params& p, double formula) {
        using O = std::conditional_t<std::is_same_v<T, test::mat2>, MatOp, Op>;
        const detail::inputs<T> in(p.words, std::uint64_t(mc.size()));
        const std::vector<T> sum = in.fold(0, mc.size(), 0, p.words);
        return detail::run_verified<T>(
            mc, formula, [&](int k) { return in.block(std::uint64_t(k)); },
            [&](node& me, std::vector<T>& v) { reduce(me, std::span(v), p.root, O{}); },
            [&](int k) { return k == p.root ? std::optional(sum) : std::nullopt; });
    };
    static constexpr algorithm_record record{
        "reduce", "test", 0, "test", "0", [](const call_shape&) { return 0.0; }};
    return detail::ordered(detail::typed_entry(record, runner), runner);
}

} // namespace

TEST_CASE("first_mismatch names the node, the element and both values, or the sizes") {
    const std::vector<int> want{1, 9, 3};
    CHECK(first_mismatch<int>(3, std::vector<int>{1, 9, 3}, want) == "");
    CHECK(first_mismatch<int>(3, std::vector<int>{1, 7, 4}, want) ==
          "node 3, element 1: got 7, expected 9");
    CHECK(first_mismatch<int>(2, std::vector<int>{1, 9}, want) ==
          "node 2: got 2 elements, expected 3");
    CHECK(first_mismatch<int>(0, std::vector<int>{}, std::vector<int>{}) == "");
    CHECK(first_mismatch<double>(5, std::vector<double>{0.5}, std::vector<double>{0.25}) ==
          "node 5, element 0: got 0.5, expected 0.25");
}

TEST_CASE("make_outcome is verified exactly when there is no mismatch") {
    const run_outcome good = detail::make_outcome({}, 12, "");
    CHECK(good.verified);
    CHECK(good.note == "");
    CHECK(good.formula_time == 12);
    const run_outcome bad = detail::make_outcome({}, 12, "node 1, element 0: got 2, expected 3");
    CHECK_FALSE(bad.verified);
    CHECK(bad.note == "node 1, element 0: got 2, expected 3");
}

TEST_CASE("run_verified: a wrong operator is not verified, the first wrong node is named") {
    machine mc(test::cfg(2));
    const run_outcome right = allreduce_verified<std::int32_t>(mc, 2, std::plus<>{});
    CHECK(right.verified);
    CHECK(right.note == "");
    // max instead of plus: every node holds 6 where 12 was expected.
    const run_outcome wrong = allreduce_verified<std::int32_t>(mc, 2, max_op{});
    CHECK_FALSE(wrong.verified);
    CHECK(wrong.note == "node 0, element 0: got " + std::to_string(p4_max[0]) + ", expected " +
                            std::to_string(p4_sum[0]));
}

TEST_CASE("run_verified: a result of the wrong length on one node is not verified") {
    machine mc(test::cfg(2));
    const detail::inputs<std::int64_t> in(2);
    const run_outcome o = detail::run_verified<std::int64_t>(
        mc, 0, [&](int k) { return in.block(std::uint64_t(k)); },
        [](node& me, std::vector<std::int64_t>& v) {
            if (me.id() == 1) v.pop_back();
        },
        [&](int k) { return std::optional(in.block(std::uint64_t(k))); });
    CHECK_FALSE(o.verified);
    CHECK(o.note == "node 1: got 1 elements, expected 2");
}

TEST_CASE("a catalog entry whose driver reduces with the wrong operator is not verified") {
    const algorithm_entry right = reduce_entry<std::plus<>>();
    const algorithm_entry wrong = reduce_entry<max_op>();
    for (port_model ports : {port_model::single_port, port_model::all_port})
        for (elem_type type : {elem_type::int32, elem_type::int64, elem_type::float64}) {
            run_params p;
            p.op = "reduce";
            p.dim = 2;
            p.words = 2;
            p.root = 2;
            p.ports = ports;
            p.type = type;
            CAPTURE(to_string(type));
            CAPTURE(int(ports));
            machine mc(machine_config(p));
            CHECK(right.run(mc, p).verified);
            const run_outcome o = wrong.run(mc, p);
            CHECK_FALSE(o.verified);
            // The root is the only node checked; an all-port run keeps the
            // mismatch as its note rather than the single-port remark.
            CHECK(o.note == "node 2, element 0: got " + std::to_string(p4_max[0]) + ", expected " +
                                std::to_string(p4_sum[0]));
        }
}

TEST_CASE("run_ordered: a reduction that swaps its operands is caught by the matrix product") {
    run_params p;
    p.op = "reduce";
    p.dim = 2;
    p.words = 2;
    p.root = 2;
    machine mc(machine_config(p));
    const algorithm_entry right = reduce_entry<std::plus<>>();
    const algorithm_entry wrong = reduce_entry<std::plus<>, swapped_product>();
    REQUIRE(right.run_ordered);
    CHECK(right.run_ordered(mc, p) == "");
    CHECK(wrong.run(mc, p).verified); // plus cannot tell
    // Element 0 of node k is [k+2 k+1; 1 1]: in node order the four multiply to
    // [191 158; 110 91], swapped to [249 158; 52 33].
    CHECK(wrong.run_ordered(mc, p) ==
          "node 2, element 0: got [249 158; 52 33], expected [191 158; 110 91]");
}

TEST_CASE("the node-order check runs on at most a 12-cube, and still catches a swap there") {
    run_params p;
    p.op = "reduce";
    p.dim = 13;
    p.words = 2;
    p.root = 4097;
    p.executor = executor_kind::fibers;
    const algorithm_entry wrong = reduce_entry<std::plus<>, swapped_product>();
    const run_params q = ordered_check_params(wrong, p, 1);
    CHECK(q.dim == 12);
    CHECK(q.root == 1); // 4097 on the first 12 dimensions
    CHECK(q.words == 2);
    CHECK(ordered_check_params(wrong, q, 1).dim == 12);    // small enough already
    CHECK(ordered_check_params(wrong, p, 8192).dim == 13); // the ranks need the whole cube
    machine mc(machine_config(p));
    CHECK(wrong.run(mc, p).verified); // plus cannot tell
    const std::string mismatch = ordered_mismatch(wrong, p, mc);
    CHECK(mismatch.rfind("node 1, element 0: got [", 0) == 0);
    CHECK(ordered_mismatch(reduce_entry<std::plus<>>(), p, mc).empty());
}

TEST_CASE("the catalog checks node order with the matrix product where the algorithm promises it") {
    // Algorithms that combine partials of ids that are not consecutive (the
    // all-port trees, allreduce d-cycles) take only commutative operators; the
    // CM-200 reduce-scatters are checked with the matrix product in tests/cm200.
    int ordered = 0;
    for (const algorithm_entry& e : builtin_catalog().entries()) {
        CAPTURE(e.op);
        CAPTURE(e.algo);
        const bool reduction = e.op == "reduce" || e.op == "allreduce" ||
                               e.op == "reduce-scatter" || e.op == "scan" || e.op == "exscan";
        const bool commutative_only = e.record && e.record->needs.commutative_op;
        const bool cm200 = e.op == "reduce-scatter" && e.algo != "hypercube" && e.algo != "ring";
        CHECK(bool(e.run_ordered) == (reduction && !commutative_only && !cm200));
        ordered += bool(e.run_ordered);
    }
    CHECK(ordered == 9);
}
