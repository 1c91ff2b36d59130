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

// Element i of node k's catalog input, written out: (131 k + 17 i) mod 1021.
// On 4 nodes element 0 is 0, 131, 262, 393 (sum 786) and element 1 is 17, 148,
// 279, 410 (sum 854).
constexpr int p4_sum[] = {786, 854};
constexpr int p4_max[] = {393, 410};

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
    std::vector<T> sum(m, T(0));
    for (int k = 0; k < mc.size(); ++k)
        for (std::size_t i = 0; i < m; ++i)
            sum[i] += detail::input_value<T>(k, i);
    return detail::run_verified<T>(
        mc, 0, [&](int k) { return detail::input_vector<T>(k, m); },
        [&](node& me, std::vector<T>& v) { allreduce(me, std::span(v), op); },
        [&](int) { return std::optional(sum); });
}

// A catalog entry made the way the rooted entries are (typed_entry +
// run_verified): a reduction to p.root checked against the sum, computed with
// `Op` (std::plus: right; max_op: wrong on purpose).
template <class Op>
algorithm_entry reduce_entry() {
    const auto runner = []<class T>(machine& mc, const run_params& p, double formula) {
        std::vector<T> sum(p.words, T(0));
        for (int k = 0; k < mc.size(); ++k)
            for (std::size_t i = 0; i < p.words; ++i)
                sum[i] += detail::input_value<T>(k, i);
        return detail::run_verified<T>(
            mc, formula, [&](int k) { return detail::input_vector<T>(k, p.words); },
            [&](node& me, std::vector<T>& v) { reduce(me, std::span(v), p.root, Op{}); },
            [&](int k) { return k == p.root ? std::optional(sum) : std::nullopt; });
    };
    static constexpr algorithm_record record{
        "reduce", "test", 0, "test", "0", [](const call_shape&) { return 0.0; }};
    return detail::typed_entry(record, runner);
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
    // max instead of plus: every node holds 393 where 786 was expected.
    const run_outcome wrong = allreduce_verified<std::int32_t>(mc, 2, max_op{});
    CHECK_FALSE(wrong.verified);
    CHECK(wrong.note == "node 0, element 0: got " + std::to_string(p4_max[0]) + ", expected " +
                            std::to_string(p4_sum[0]));
}

TEST_CASE("run_verified: a result of the wrong length on one node is not verified") {
    machine mc(test::cfg(2));
    const run_outcome o = detail::run_verified<std::int64_t>(
        mc, 0, [](int k) { return detail::input_vector<std::int64_t>(k, 2); },
        [](node& me, std::vector<std::int64_t>& v) {
            if (me.id() == 1) v.pop_back();
        },
        [](int k) { return std::optional(detail::input_vector<std::int64_t>(k, 2)); });
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
