// The non-commutative test data must tell combine orders apart. The
// suites check every reduction with the 2x2 matrix product against a serial
// left-to-right fold. The matrices they used until then had an even
// determinant for most inputs, so mod 2^32 the product of all p inputs was the
// zero matrix for every element at p = 128 and 256 (for 467 of 1000 elements
// at p = 64), whatever the order: a reduction combining in the wrong order
// passed every check at d = 7 and 8. Here, reductions that are wrong on
// purpose are run at d = 7 and 8 against mat2_for (unimodular, determinant 1)
// and against the old data, which is kept below only to show that it could
// not catch them.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <hcube/collectives/allreduce.hpp>
#include <hcube/machine.hpp>

#include <collective_checks.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

using test::mat2;
using input_fn = mat2 (*)(int, std::size_t);

// The inputs the suites used before the non-commutative data (they could not tell orders apart).
mat2 old_mat2_for(int node, std::size_t i) {
    const auto s = std::uint32_t(node * 7919 + i * 104729 + 1);
    return {s % 5 + 1, (s / 5) % 3, (s / 15) % 3, (s / 45) % 5 + 1};
}

// x_0 x_1 ... x_(p-1) for element i of everyone's input, in node order.
mat2 fold(input_fn input, int p, std::size_t i) {
    mat2 acc = input(0, i);
    for (int k = 1; k < p; ++k)
        acc = test::mat2_product{}(acc, input(k, i));
    return acc;
}

// Recursive doubling with the classic ordering bug: a node always puts its
// own partial first, even when the partner's nodes come before its own.
void allreduce_own_first(node& me, std::span<mat2> data) {
    std::vector<mat2> theirs(data.size());
    for (int k = 0; k < me.dim(); ++k) {
        me.exchange(k, std::span<const mat2>(data), std::span(theirs));
        for (std::size_t i = 0; i < data.size(); ++i)
            data[i] = test::mat2_product{}(data[i], theirs[i]);
    }
}

// The library's allreduce handed a combine with its operands swapped: it
// computes x_(p-1) ... x_1 x_0.
void allreduce_swapped(node& me, std::span<mat2> data) {
    allreduce(me, data, [](const mat2& x, const mat2& y) { return test::mat2_product{}(y, x); });
}

// Runs `reduction` on m elements of `input` per node, as the suites' checks do,
// and counts the nodes whose result differs from the serial fold.
template <class Reduction>
int wrong_nodes(machine& mach, input_fn input, std::size_t m, Reduction reduction) {
    std::vector<mat2> want(m);
    for (std::size_t i = 0; i < m; ++i)
        want[i] = fold(input, mach.size(), i);
    return test::count_wrong_nodes(mach, [&](node& me) {
        std::vector<mat2> data(m);
        for (std::size_t i = 0; i < m; ++i)
            data[i] = input(me.id(), i);
        reduction(me, std::span(data));
        return data == want;
    });
}

} // namespace

TEST_CASE("mat2_for: determinant 1, so products of inputs are never zero") {
    const mat2 zero{0, 0, 0, 0};
    for (int node = 0; node < 256; ++node)
        for (std::size_t i = 0; i < 1000; i += 37) {
            const mat2 x = test::mat2_for(node, i);
            CHECK(x.a * x.d - x.b * x.c == 1u);
            CHECK(x != mat2{});
        }
    // Old data, measured: the full product is zero for every element at p = 128.
    int old_zero = 0, new_zero = 0;
    for (std::size_t i = 0; i < 1000; ++i) {
        old_zero += fold(old_mat2_for, 128, i) == zero;
        new_zero += fold(test::mat2_for, 256, i) == zero;
    }
    CHECK(old_zero == 1000);
    CHECK(new_zero == 0);
}

TEST_CASE("a mis-ordered reduction fails the check at d = 7 and 8 with mat2_for, not with the "
          "old data") {
    // m = 1000: the size the suites check at d = 8 (test::sizes_to_1000).
    constexpr std::size_t m = 1000;
    for (int d : {7, 8}) {
        machine mach(test::cfg(d));
        const int p = mach.size();
        CAPTURE(d);
        // Sanity: the correct allreduce passes with both inputs.
        const auto correct = [](node& me, std::span<mat2> data) {
            allreduce(me, data, test::mat2_product{});
        };
        CHECK(wrong_nodes(mach, test::mat2_for, m, correct) == 0);
        CHECK(wrong_nodes(mach, old_mat2_for, m, correct) == 0);
        // Every node's result is wrong (but node 0's under own-first, whose own
        // nodes always do come first), and the check sees it with the new data only.
        CHECK(wrong_nodes(mach, test::mat2_for, m, allreduce_own_first) == p - 1);
        CHECK(wrong_nodes(mach, test::mat2_for, m, allreduce_swapped) == p);
        CHECK(wrong_nodes(mach, old_mat2_for, m, allreduce_own_first) == 0);
        CHECK(wrong_nodes(mach, old_mat2_for, m, allreduce_swapped) == 0);
    }
}

TEST_CASE("the mis-ordered reductions are caught on small cubes with either data") {
    // Where the old data still worked (d = 2..5), it caught them too: the
    // failure at d = 7 and 8 above is the data's, not the reductions'.
    for (int d = 2; d <= 5; ++d) {
        machine mach(test::cfg(d));
        CAPTURE(d);
        for (input_fn input : {input_fn(test::mat2_for), input_fn(old_mat2_for)}) {
            CHECK(wrong_nodes(mach, input, 100, allreduce_own_first) > 0);
            CHECK(wrong_nodes(mach, input, 100, allreduce_swapped) > 0);
        }
    }
}
