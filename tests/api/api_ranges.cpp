// Every public collective called with the buffers students write:
// std::span<T>, std::span<const T>, std::vector<T> and std::array<T, N>
// inputs, span, vector and array outputs, the element type deduced; results
// checked against serial references written here from the definitions. Before
// ranges.hpp none of these calls compiled except the span<const T>/span<T>
// ones, e.g. allgather(me, std::span(mine), std::span(all)) failed with
// "types 'const T' and 'int' have incompatible cv-qualifiers". The concept
// checks at the top pin which calls compile and which are refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <ostream>
#include <ranges>
#include <span>
#include <utility>
#include <vector>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/aspc.hpp>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/cm200.hpp>
#include <hcube/collectives/descend.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scan.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/collectives/shift.hpp>
#include <hcube/machine.hpp>

#include <test_support.hpp>

using namespace hcube;

namespace {

// ---- which calls compile -------------------------------------------------

template <class In, class Out>
concept can_allgather = requires(node& me, In&& in, Out&& out) {
    allgather(me, std::forward<In>(in), std::forward<Out>(out));
};
template <class T, class In, class Out>
concept can_allgather_as = requires(node& me, In&& in, Out&& out) {
    allgather<T>(me, std::forward<In>(in), std::forward<Out>(out));
};
template <class R, class Op>
concept can_allreduce = requires(node& me, R&& r, Op op) {
    allreduce(me, std::forward<R>(r), op);
};

using ints = std::vector<int>;
// The call of the issue, and every other buffer kind, with the type deduced.
static_assert(can_allgather<std::span<int>, std::span<int>>);
static_assert(can_allgather<std::span<const int>, std::span<int>>);
static_assert(can_allgather<ints&, ints&>);
static_assert(can_allgather<const ints&, std::span<int>>);
static_assert(can_allgather<ints, ints&>); // a temporary input is fine
static_assert(can_allgather<std::array<int, 2>&, std::array<int, 8>&>);
static_assert(can_allgather<int (&)[2], int (&)[8]>);
// Explicit element types, as code written for the span signatures has them.
static_assert(can_allgather_as<int, std::span<const int>, std::span<int>>);
static_assert(can_allgather_as<int, ints&, ints&>);
static_assert(!can_allgather_as<long, ints&, ints&>);
// Refused by the concepts.
static_assert(!can_allgather<ints&, std::vector<long>&>); // element types differ
static_assert(!can_allgather<ints&, const ints&>);        // output is const
static_assert(!can_allgather<ints&, std::span<const int>>);
static_assert(!can_allgather<ints&, ints>);            // output is a temporary container
static_assert(!can_allgather<std::list<int>&, ints&>); // not contiguous
static_assert(!can_allgather<ints&, std::list<int>&>);
static_assert(!can_allgather<std::vector<std::vector<int>>&, std::vector<std::vector<int>>&>);
static_assert(can_allreduce<ints&, std::plus<>>);
static_assert(can_allreduce<std::span<int>, std::plus<>>);
static_assert(!can_allreduce<const ints&, std::plus<>>);
static_assert(!can_allreduce<ints&, int>); // not an operator
static_assert(!can_allreduce<ints&, std::function<int(int)>>);

// ---- the buffer kinds ------------------------------------------------------

// Kind K of the run: the input is a span<T>, span<const T>, vector or array
// (K = 0..3), always as a const lvalue; the output a span, vector, array or
// span (K % 3) as a mutable lvalue.
constexpr int kinds = 4;
constexpr const char* kind_names[kinds] = {"span<T> in, span<T> out",
                                           "span<const T> in, vector out", "vector in, array out",
                                           "array in, span out"};

template <int K, std::size_t N, class T>
auto input_as(std::vector<T>& v) {
    REQUIRE(v.size() == N);
    if constexpr (K == 0)
        return std::span<T>(v);
    else if constexpr (K == 1)
        return std::span<const T>(v);
    else if constexpr (K == 2)
        return std::vector<T>(v);
    else {
        std::array<T, N> a;
        std::copy(v.begin(), v.end(), a.begin());
        return a;
    }
}

template <int K, std::size_t N, class T>
auto output_as(std::vector<T>& v) {
    REQUIRE(v.size() == N);
    if constexpr (K % 3 == 0)
        return std::span<T>(v);
    else if constexpr (K % 3 == 1)
        return std::vector<T>(v);
    else {
        std::array<T, N> a;
        std::copy(v.begin(), v.end(), a.begin());
        return a;
    }
}

template <class R>
auto contents(const R& r) {
    return std::vector<std::ranges::range_value_t<R>>(std::ranges::begin(r), std::ranges::end(r));
}

template <class F>
void for_each_kind(F f) {
    [&]<int... K>(std::integer_sequence<int, K...>) {
        (..., [&] {
            INFO("buffers: " << kind_names[K]);
            f.template operator()<K>();
        }());
    }
    (std::make_integer_sequence<int, kinds>{});
}

// ---- the machine and the data ----------------------------------------------

constexpr int d = 2;
constexpr std::size_t p = 4, m = 3; // m not a multiple of p: uneven blocks

// Element i of node k's input.
std::int64_t x(int k, std::size_t i) {
    return std::int64_t(k) * 100 + std::int64_t(i) * 7 + 1;
}
std::vector<std::int64_t> inputs(int k, std::size_t n) {
    std::vector<std::int64_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = x(k, i);
    return v;
}

// An associative operator that does not commute: composition of affine maps
// y -> scale y + offset, so a result shows the order its operands were combined in.
struct affine {
    std::int64_t scale = 1, offset = 0;
    friend bool operator==(const affine&, const affine&) = default;
    friend std::ostream& operator<<(std::ostream& os, const affine& a) {
        return os << "(" << a.scale << ", " << a.offset << ")";
    }
};
struct compose { // (f o g)(y) = f(g(y))
    affine operator()(const affine& f, const affine& g) const noexcept {
        return {f.scale * g.scale, f.scale * g.offset + f.offset};
    }
};
affine ax(int k, std::size_t i) {
    return {3 + std::int64_t(i % 2), x(k, i)};
}
std::vector<affine> affine_inputs(int k, std::size_t n) {
    std::vector<affine> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = ax(k, i);
    return v;
}
// x_lo o ... o x_hi of element i, in node order.
affine affine_fold(int lo, int hi, std::size_t i) {
    affine acc = ax(lo, i);
    for (int k = lo + 1; k <= hi; ++k)
        acc = compose{}(acc, ax(k, i));
    return acc;
}

// Runs program(me) -> that node's result on a d-cube and returns the results.
template <class Program>
auto results(Program program, port_model ports = port_model::single_port) {
    machine mc(test::cfg(d, ports));
    std::vector<decltype(program(std::declval<node&>()))> got(p);
    mc.run([&](node& me) { got[std::size_t(me.id())] = program(me); });
    return got;
}

} // namespace

// ---- Grama et al. collectives --------------------------------------------------

TEST_CASE("allgather, scatter, gather and alltoall take any contiguous range") {
    for_each_kind([]<int K>() {
        const auto gathered = [] {
            std::vector<std::int64_t> all;
            for (int k = 0; k < int(p); ++k)
                for (std::size_t i = 0; i < m; ++i)
                    all.push_back(x(k, i));
            return all;
        }();
        for (const auto& got : results([](node& me) {
                 auto mine = inputs(me.id(), m);
                 std::vector<std::int64_t> all(p * m);
                 const auto in = input_as<K, m>(mine);
                 auto out = output_as<K, p * m>(all);
                 allgather(me, in, out);
                 return contents(out);
             }))
            CHECK(got == gathered);

        constexpr int root = 2;
        const auto scattered = results([](node& me) {
            auto all = inputs(root, p * m); // read at the root only
            std::vector<std::int64_t> mine(m);
            const auto in = input_as<K, p * m>(all);
            auto out = output_as<K, m>(mine);
            scatter(me, in, out, root);
            return contents(out);
        });
        for (int k = 0; k < int(p); ++k)
            for (std::size_t i = 0; i < m; ++i)
                CHECK(scattered[std::size_t(k)][i] == x(root, std::size_t(k) * m + i));

        const auto at_root = results([](node& me) {
            auto mine = inputs(me.id(), m);
            std::vector<std::int64_t> all(p * m);
            const auto in = input_as<K, m>(mine);
            auto out = output_as<K, p * m>(all);
            gather(me, in, out, root);
            return contents(out);
        })[root];
        CHECK(at_root == gathered);

        // Node k's block j is for node j; node j's block k comes from node k.
        const auto exchanged = results([](node& me) {
            auto mine = inputs(me.id(), p * m);
            std::vector<std::int64_t> got(p * m);
            const auto in = input_as<K, p * m>(mine);
            auto out = output_as<K, p * m>(got);
            alltoall(me, in, out);
            return contents(out);
        });
        for (std::size_t j = 0; j < p; ++j)
            for (std::size_t k = 0; k < p; ++k)
                for (std::size_t i = 0; i < m; ++i)
                    CHECK(exchanged[j][k * m + i] == x(int(k), j * m + i));
    });
}

TEST_CASE("in-place collectives take a span, a vector or an array") {
    for_each_kind([]<int K>() {
        constexpr int root = 1;
        // The whole-buffer forms and each algorithm's own entry point.
        const auto broadcast_with = [](auto call) {
            return results([&](node& me) {
                auto v = me.id() == root ? inputs(root, m) : std::vector<std::int64_t>(m, -1);
                auto buf = output_as<K, m>(v);
                call(me, buf);
                return contents(buf);
            });
        };
        for (const auto& got :
             {broadcast_with([](node&me, auto&b) { broadcast(me, b, root); }),
              broadcast_with([](node&me, auto&b) { broadcast_binomial(me, b, root); }),
              broadcast_with([](node&me, auto&b) { broadcast_scatter_allgather(me, b, root); })})
            for (const auto& v : got)
                CHECK(v == inputs(root, m));

        const auto reduce_with = [](auto call) {
            return results([&](node& me) {
                auto v = affine_inputs(me.id(), m);
                auto buf = output_as<K, m>(v);
                call(me, buf);
                return contents(buf);
            });
        };
        std::vector<affine> total(m);
        for (std::size_t i = 0; i < m; ++i)
            total[i] = affine_fold(0, int(p) - 1, i);
        for (const auto& got :
             {reduce_with([](node&me, auto&b) { reduce(me, b, root, compose{}); }),
              reduce_with([](node&me, auto&b) { reduce_binomial(me, b, root, compose{}); }),
              reduce_with(
                  [](node&me, auto&b) { reduce_reduce_scatter_gather(me, b, root, compose{}); })})
            CHECK(got[root] == total);
        for (const auto& v : reduce_with([](node&me, auto&b) { allreduce(me, b, compose{}); }))
            CHECK(v == total);

        const auto inclusive =
            reduce_with([](node& me, auto& b) { inclusive_scan(me, b, compose{}); });
        const auto exclusive =
            reduce_with([](node& me, auto& b) { exclusive_scan(me, b, compose{}); });
        for (int k = 0; k < int(p); ++k)
            for (std::size_t i = 0; i < m; ++i) {
                CHECK(inclusive[std::size_t(k)][i] == affine_fold(0, k, i));
                if (k > 0) CHECK(exclusive[std::size_t(k)][i] == affine_fold(0, k - 1, i));
            }

        // Blocks of m elements split over p nodes as evenly as possible: with
        // m = 3, p = 4 node k owns element k (k < 3), node 3 nothing.
        for (const auto& got : results([](node& me) {
                 std::vector<std::int64_t> v(m, -1);
                 if (std::size_t(me.id()) < m) v[std::size_t(me.id())] = x(me.id(), 0);
                 auto buf = output_as<K, m>(v);
                 allgather_blocks(me, buf);
                 return contents(buf);
             }))
            CHECK(got == std::vector<std::int64_t>{x(0, 0), x(1, 0), x(2, 0)});
        const auto blocks =
            reduce_with([](node& me, auto& b) { reduce_scatter_blocks(me, b, compose{}); });
        for (std::size_t k = 0; k < m; ++k)
            CHECK(blocks[k][k] == total[k]);
    });
}

TEST_CASE("reduce_scatter and circular_shift take any contiguous range") {
    for_each_kind([]<int K>() {
        const auto scattered = results([](node& me) {
            auto mine = affine_inputs(me.id(), p * m);
            std::vector<affine> got(m);
            const auto in = input_as<K, p * m>(mine);
            auto out = output_as<K, m>(got);
            reduce_scatter(me, in, out, compose{});
            return contents(out);
        });
        for (std::size_t k = 0; k < p; ++k)
            for (std::size_t i = 0; i < m; ++i)
                CHECK(scattered[k][i] == affine_fold(0, int(p) - 1, k * m + i));

        // Node k's packet goes to node k + q (mod p) for every algorithm on
        // its own array: id order for ecube, Gray order for the Gray shifts.
        constexpr long long q = 3;
        const auto shifted_with = [](shift_algo a) {
            return results([&](node& me) {
                auto mine = inputs(me.id(), m);
                std::vector<std::int64_t> got(m);
                const auto in = input_as<K, m>(mine);
                auto out = output_as<K, m>(got);
                circular_shift(me, in, out, q, a);
                return contents(out);
            });
        };
        const auto by_id = shifted_with(shift_algo::ecube);
        for (std::size_t k = 0; k < p; ++k)
            CHECK(by_id[(k + q) % p] == inputs(int(k), m));
        const auto by_gray = shifted_with(shift_algo::gray);
        for (std::uint64_t r = 0; r < p; ++r)
            CHECK(by_gray[test::gray_code((r + q) % p)] == inputs(int(test::gray_code(r)), m));
    });
}

// ---- Hu: ASPC and descend --------------------------------------------

TEST_CASE("aspc, descend and descend_serial take any contiguous range") {
    for_each_kind([]<int K>() {
        // n = d blocks of w elements; logical node i = G^-1(physical id).
        constexpr std::size_t w = 2, n = std::size_t(d), size = n * w;
        const auto both = results(
            [](node& me) {
                auto mine = inputs(me.id(), size);
                std::vector<std::int64_t> plus(size), minus(size);
                const auto in = input_as<K, size>(mine);
                auto po = output_as<K, size>(plus);
                auto mo = output_as<K, size>(minus);
                aspc(me, in, po, mo);
                return std::pair(contents(po), contents(mo));
            },
            port_model::all_port);
        for (std::uint64_t i = 0; i < p; ++i)
            for (std::size_t j = 0; j < n; ++j)
                for (std::size_t e = 0; e < w; ++e) {
                    const auto& [plus, minus] = both[test::gray_code(i)];
                    const auto from = [&](std::uint64_t l) {
                        return x(int(test::gray_code(l % p)), j * w + e);
                    };
                    CHECK(plus[j * w + e] == from(i + p - (1u << j)));
                    CHECK(minus[j * w + e] == from(i + (1u << j)));
                }

        // M = 8 over N = 4 nodes, L = 2; logical node q holds a[qL, qL + L).
        constexpr std::size_t M = 8, L = M / p;
        const auto kernel = [](int b, std::size_t i, const std::int64_t& self,
                               const std::int64_t& plus, const std::int64_t& minus) {
            return self * 3 + plus * 5 - minus + b + std::int64_t(i);
        };
        std::vector<std::int64_t> want = inputs(0, M);
        for (int b = 2; b >= 0; --b) { // the definition, written out
            const std::size_t h = std::size_t{1} << b;
            std::vector<std::int64_t> next(M);
            for (std::size_t i = 0; i < M; ++i)
                next[i] = kernel(b, i, want[i], want[(i + h) % M], want[(i + M - h) % M]);
            want = next;
        }
        const auto blocks = results(
            [&](node& me) {
                const std::size_t first = test::gray_code_inverse(std::uint64_t(me.id())) * L;
                std::vector<std::int64_t> mine(L);
                for (std::size_t l = 0; l < L; ++l)
                    mine[l] = x(0, first + l);
                auto a = output_as<K, L>(mine);
                descend(me, a, M, kernel);
                return contents(a);
            },
            port_model::all_port);
        for (std::uint64_t q = 0; q < p; ++q)
            for (std::size_t l = 0; l < L; ++l)
                CHECK(blocks[test::gray_code(q)][l] == want[q * L + l]);
        std::vector<std::int64_t> serial = inputs(0, M);
        auto a = output_as<K, M>(serial);
        descend_serial(a, kernel);
        CHECK(contents(a) == want);
    });
}

// ---- Mathur & Johnsson: the CM-200 algorithms ----------------------------------------

TEST_CASE("cm200 allgather and reduce_scatter take any contiguous range") {
    for_each_kind([]<int K>() {
        std::vector<std::int64_t> gathered;
        for (int k = 0; k < int(p); ++k)
            for (std::size_t i = 0; i < m; ++i)
                gathered.push_back(x(k, i));
        const auto allgather_with = [](auto call) {
            return results(
                [&](node& me) {
                    auto mine = inputs(me.id(), m);
                    std::vector<std::int64_t> all(p * m);
                    const auto in = input_as<K, m>(mine);
                    auto out = output_as<K, p * m>(all);
                    call(me, in, out);
                    return contents(out);
                },
                port_model::all_port);
        };
        for (const auto& got : {
                 allgather_with([](node&me, const auto&in, auto&out) {
                     cm200::allgather_one_cycle(me, in, out);
                 }),
                 allgather_with([](node&me, const auto&in, auto&out) {
                     cm200::allgather_d_cycles(me, in, out);
                 }),
                 allgather_with([](node&me, const auto&in, auto&out) {
                     cm200::allgather_send_and_spread(me, in, out);
                 }),
                 allgather_with([](node&me, const auto&in, auto&out) {
                     cm200::allgather_one_source_at_a_time(me, in, out);
                 }),
                 allgather_with([](node&me, const auto&in, auto&out) {
                     cm200::allgather(me, in, out, cm200::allgather_algo::d_cycles);
                 }),
             })
            for (const auto& v : got)
                CHECK(v == gathered);

        // M = p m elements per node: m to each rank (4.2.4's allocation).
        const auto reduce_with = [](auto call) {
            return results(
                [&](node& me) {
                    auto mine = affine_inputs(me.id(), p * m);
                    std::vector<affine> block(m);
                    const auto in = input_as<K, p * m>(mine);
                    auto out = output_as<K, m>(block);
                    call(me, in, out);
                    return contents(out);
                },
                port_model::all_port);
        };
        for (const auto& got : {
                 reduce_with([](node&me, const auto&in, auto&out) {
                     cm200::reduce_scatter_one_cycle(me, in, out, compose{});
                 }),
                 reduce_with([](node&me, const auto&in, auto&out) {
                     cm200::reduce_scatter_d_cycles(me, in, out, compose{});
                 }),
                 reduce_with([](node&me, const auto&in, auto&out) {
                     cm200::reduce_scatter_reduce_and_spread(me, in, out, compose{});
                 }),
                 reduce_with([](node&me, const auto&in, auto&out) {
                     cm200::reduce_scatter(me, in, out, compose{},
                                           cm200::reduce_scatter_algo::one_cycle);
                 }),
             })
            for (std::size_t k = 0; k < p; ++k)
                for (std::size_t i = 0; i < m; ++i)
                    CHECK(got[k][i] == affine_fold(0, int(p) - 1, k * m + i));
    });
}
