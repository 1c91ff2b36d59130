// Shared by the catalog sources (driver/src/catalog_*.cpp): run a function
// template on the C++ type an elem_type names, deterministic inputs, the
// comparison with a serial reference that becomes a run_outcome, and entries
// whose run() does all of that.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

namespace hcube::detail {

// Calls f.template operator()<T>() with T the element type `t` names.
template <class F>
decltype(auto) with_elem_type(elem_type t, F&& f) {
    switch (t) {
    case elem_type::int32:
        return std::forward<F>(f).template operator()<std::int32_t>();
    case elem_type::int64:
        return std::forward<F>(f).template operator()<std::int64_t>();
    case elem_type::float64:
        return std::forward<F>(f).template operator()<double>();
    }
    throw usage_error("unknown element type");
}

// 2x2 matrices over the integers modulo 2^32 and their product: associative,
// not commutative, so a reduction that combines out of node order shows.
struct mat2 {
    std::uint32_t a = 1, b = 0, c = 0, d = 1;
    friend bool operator==(const mat2&, const mat2&) = default;
    friend std::ostream& operator<<(std::ostream& os, const mat2& m) {
        return os << "[" << m.a << " " << m.b << "; " << m.c << " " << m.d << "]";
    }
};

struct mat2_product {
    mat2 operator()(const mat2& x, const mat2& y) const noexcept {
        return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
                x.c * y.b + x.d * y.d};
    }
};

// A distinct, non-trivial matrix for (node, index): U^a L^b with the shears
// U = [1 1; 0 1], L = [1 0; 1 1], a = node + 1, b = i + 1, i.e. [1+ab a; b 1].
// Its determinant is 1, so every product of inputs is invertible mod 2^32 and
// never zero, and products in different orders stay different on every cube
// the suites run (tests/reductions/misordered.cpp). Matrices with even
// determinants multiply to the zero matrix at p = 128.
inline mat2 mat2_for(int node, std::size_t i) {
    const auto a = std::uint32_t(node) + 1, b = std::uint32_t(i) + 1;
    return {1 + a * b, a, b, 1};
}

// The operator the catalog reduces T with: plus, or for mat2 the product.
template <class T>
using reduction_op = std::conditional_t<std::is_same_v<T, mat2>, mat2_product, std::plus<>>;

// Below this bound T holds every integer and sums of them exactly: 2^31 - 1
// for int32, 2^63 - 1 for int64, 2^53 for float64.
template <class T>
constexpr std::uint64_t exact_integers =
    std::is_floating_point_v<T> ? std::uint64_t{1} << std::numeric_limits<T>::digits
                                : std::uint64_t(std::numeric_limits<T>::max());

// A run's deterministic inputs in blocks of n elements (a node's input, or one
// of its blocks): element i of block b is b n + i (mat2_for(b, i) for mat2),
// so no two elements of a run are equal and one in the wrong place shows. The values wrap at
// exact_integers<T> / summed, so a sum of `summed` of them stays exact in T
// whatever the order of the additions; they stay distinct while blocks * n *
// summed does not reach exact_integers<T> (int32: 256 nodes summing inputs of
// 32768 elements).
template <class T>
class inputs {
public:
    explicit inputs(std::size_t n, std::uint64_t summed = 1)
        : n_(n) {
        if constexpr (!std::is_same_v<T, mat2>)
            wrap_ = exact_integers<T> / std::max<std::uint64_t>(summed, 1);
    }

    T operator()(std::uint64_t b, std::size_t i) const {
        if constexpr (std::is_same_v<T, mat2>)
            return mat2_for(int(b), i);
        else
            return T((b * n_ + i) % wrap_);
    }

    // Block b's n values.
    std::vector<T> block(std::uint64_t b) const {
        std::vector<T> v(n_);
        for (std::size_t i = 0; i < n_; ++i)
            v[i] = (*this)(b, i);
        return v;
    }

    // Blocks 0 .. count - 1, one after another.
    std::vector<T> blocks(std::uint64_t count) const {
        std::vector<T> all;
        all.reserve(count * n_);
        for (std::uint64_t b = 0; b < count; ++b)
            for (std::size_t i = 0; i < n_; ++i)
                all.push_back((*this)(b, i));
        return all;
    }

    // Elements offset .. offset + len - 1 combined with reduction_op<T> over
    // blocks first .. last - 1 in order: the serial reference of a reduction.
    std::vector<T> fold(int first, int last, std::size_t offset, std::size_t len) const {
        std::vector<T> s(len, T{}); // 0, or the identity matrix
        for (int b = first; b < last; ++b)
            for (std::size_t j = 0; j < len; ++j)
                s[j] = reduction_op<T>{}(s[j], (*this)(std::uint64_t(b), offset + j));
        return s;
    }

private:
    std::size_t n_;
    std::uint64_t wrap_ = 1;
};

// "" when got == want, else where they first differ, e.g.
// "node 3, element 5: got 7, expected 9".
template <class T>
std::string first_mismatch(int node, std::span<const T> got, std::span<const T> want) {
    std::ostringstream os;
    if (got.size() != want.size()) {
        os << "node " << node << ": got " << got.size() << " elements, expected " << want.size();
        return os.str();
    }
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!(got[i] == want[i])) {
            os << "node " << node << ", element " << i << ": got " << got[i] << ", expected "
               << want[i];
            return os.str();
        }
    return {};
}

// A run's outcome: verified when `mismatch` (from first_mismatch) is empty.
inline run_outcome make_outcome(run_report report, double formula_time, std::string mismatch) {
    run_outcome o;
    o.verified = mismatch.empty();
    o.formula_time = formula_time;
    o.report = std::move(report);
    o.note = std::move(mismatch);
    return o;
}

// Runs `body` on every node with its vector from `input` (the body leaves the
// node's result in it), then compares each node's result with `expect(node)`
// (nullopt: that node's result is unspecified) outside the timed run.
template <class T>
run_outcome run_verified(machine& mc, double formula_time,
                         const std::function<std::vector<T>(int)>& input,
                         const std::function<void(node&, std::vector<T>&)>& body,
                         const std::function<std::optional<std::vector<T>>(int)>& expect) {
    std::vector<std::vector<T>> data(std::size_t(mc.size()));
    for (int i = 0; i < mc.size(); ++i)
        data[std::size_t(i)] = input(i);
    run_report report = mc.run([&](node& me) { body(me, data[std::size_t(me.id())]); });
    std::string mismatch;
    for (int i = 0; i < mc.size() && mismatch.empty(); ++i)
        if (const auto want = mc.is_local(i) ? expect(i) : std::nullopt) // MPI: this rank's
            mismatch = first_mismatch<T>(i, data[std::size_t(i)], *want);
    return make_outcome(std::move(report), formula_time, std::move(mismatch));
}

// A call's p, log p and m as its work counts (call_work) use them.
struct call_sizes {
    double p, d, m;
};
inline call_sizes sizes_of(const run_params& r) {
    return {std::ldexp(1.0, r.dim), double(r.dim), double(r.words)};
}

// e with its work counted by w (algorithm_entry::work).
inline algorithm_entry with_work(algorithm_entry e, call_work (*w)(const run_params&)) {
    e.work = w;
    return e;
}

// A reduce-scatter of blocks of m words around a ring of p nodes (Grama et
// al.'s ring, Mathur & Johnsson's one cycle): each node sends and combines
// p - 1 blocks.
inline call_work ring_reduce_scatter_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p * (p - 1), 0, p * (p - 1) * m, p * (p - 1) * m};
}

// The record's entry (entry_of) whose run() dispatches on the element type,
// runner.template operator()<T>(machine, params, formula_time(params)), and
// notes that the formula assumes single-port when a run whose nodes may use
// several links at once noted nothing else. `formula_time` replaces the
// record's cost where the catalog prints a more exact form.
template <class Runner>
algorithm_entry typed_entry(const algorithm_record& r, Runner runner,
                            std::function<double(const run_params&)> formula_time = {}) {
    algorithm_entry e = entry_of(r);
    if (formula_time) e.formula_time = std::move(formula_time);
    e.run = [time = e.formula_time, runner](machine& mc, const run_params& p) {
        run_outcome o = with_elem_type(
            p.type, [&]<class T>() { return runner.template operator()<T>(mc, p, time(p)); });
        if (port_policy_of(p.ports).several_links_at_once() && o.note.empty())
            o.note = "the formula assumes single-port";
        return o;
    };
    return e;
}

// e with run_ordered running runner.template operator()<mat2>, when e's record
// promises node order for any associative operator (no needs.commutative_op).
template <class Runner>
algorithm_entry ordered(algorithm_entry e, Runner runner) {
    if (e.record && e.record->needs.commutative_op) return e;
    e.run_ordered = [runner](machine& mc, const run_params& p) {
        const run_outcome o = runner.template operator()<mat2>(mc, p, 0.0);
        return o.verified ? std::string() : o.note;
    };
    return e;
}

} // namespace hcube::detail
