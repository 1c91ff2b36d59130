// +-2^b-descend computations (Hu, section 4; the class PM2B-DESCEND
// of Nassimi): on a[0 .. M-1], for b = log M - 1 down to 0,
//   a[i] <- f(b, i, a[i], a[i + 2^b mod M], a[i - 2^b mod M])   for all i
// (all right-hand sides are values from before iteration b). The "ascend"
// order runs b = 0 up to log M - 1 (the source's conclusion: the same schedules
// carry over); parallel cyclic reduction needs it, its strides grow.
//
// Layout: N = 2^n nodes, n >= 2, M a power of two >= N, L = M / N; logical
// node q = G^-1(physical id) holds a[q L .. q L + L - 1] (block distribution
// over the Gray-code embedding of Hu, section 3). Each element is
// computed once per iteration, by its owner: no redundant computation.
//
// Two stages (section 4). Inter-node: 2^b >= L, the partners of (q, l) are
// (q +- 2^c, l), c = b - log L, an ASPC slot; each column l is independent.
// Local: 2^b < L, partners are local except 2^b of them at each block end,
// which come from logical nodes q +- 1 in one exchange on two links.
//
// Schedules (exact steps, with the source's counts; lib/include/hcube/cost/aspc.hpp):
//   direct     every inter-node iteration fetches both partners of each
//              element, one pair of ASPC routes (plus and minus at once,
//              distinct links) per element: 2 steps, 1 when c = 0:
//              (2n - 1) L + log L                      (source: 2 log N M/N)
//   pipelined  column l does inter-node iteration s in round l + s, so the
//              columns in flight use distinct slots: rounds are ASPCs of
//              4 steps, L + n - 1 of them, the one whose only slot is c = 0
//              taking 2:
//              4 (L + n - 1) - 2 + log L               (source: 4 (log M + M/N - 1))
//
//     round:   0      1      2      3       (n = 3, L = 2, descend order)
//     col 0:  c=2    c=1    c=0
//     col 1:         c=2    c=1    c=0    <- round 3: slot 0 alone, 2 steps
//
// These counts are all-port. Under single-port a node's messages go out one
// at a time and both schedules send the same messages, so both take
// 2 ((2n - 1) L + log L) steps: pipelining needs all-port.
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <hcube/aspc_schedule.hpp>
#include <hcube/collectives/aspc.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/scratch.hpp>
#include <hcube/cost/aspc.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>

namespace hcube {

enum class descend_schedule { direct, pipelined };
enum class descend_order { descend, ascend };

// words: M, the whole array. Under a single port both schedules send the same
// messages one at a time (cost::descend_single_port).
constexpr double descend_cost(const call_shape& s, descend_schedule schedule) {
    const auto M = std::uint64_t(s.words);
    if (!s.policy().several_links_at_once())
        return cost::descend_single_port(s.dim, M, s.t_s, s.t_w);
    return schedule == descend_schedule::direct ? cost::descend_direct(s.dim, M, s.t_s, s.t_w)
                                                : cost::descend_pipelined(s.dim, M, s.t_s, s.t_w);
}
inline constexpr requirements descend_needs{.min_dim = 2, .pow2_words_from_p = true};
inline constexpr algorithm_record descend_records[] = {
    {"descend", "direct", int(descend_schedule::direct),
     "Hu, section 4 (direct: 2 log N M/N steps)",
     "all-port (2 log N - 1) M/N (t_s + t_w) + t_s log(M/N) + t_w (M/N - 1), "
     "M = --words (source: 2 log N M/N steps); single-port twice that",
     [](const call_shape& s) { return descend_cost(s, descend_schedule::direct); }, descend_needs},
    {"descend", "pipelined", int(descend_schedule::pipelined),
     "Hu, section 4 (pipelined ASPC rounds)",
     "all-port (4 (log N + M/N - 1) - 2)(t_s + t_w) + t_s log(M/N) + t_w (M/N - 1), "
     "M = --words (source: 4 (log M + M/N - 1) steps); single-port as direct",
     [](const call_shape& s) { return descend_cost(s, descend_schedule::pipelined); },
     descend_needs},
};

// Where this node's block sits: logical node q holds a[first .. first + L).
struct descend_layout {
    int n = 0;
    std::size_t M = 0, L = 0;
    int log_L = 0;
    node_id q = 0;
    std::size_t first = 0;
};

// The layout for a problem of size M, or a usage_error naming the node and
// the values that do not fit.
inline descend_layout descend_layout_of(const node& me, std::size_t M) {
    const std::string who = "descend on node " + std::to_string(me.id()) + ": ";
    const std::size_t N = std::size_t(me.size());
    if (me.dim() < 2)
        throw usage_error(who + "needs a cube of dimension >= 2, this one has dimension " +
                          std::to_string(me.dim()));
    if (!std::has_single_bit(M))
        throw usage_error(who + "M = " + std::to_string(M) + " is not a power of two");
    if (M < N)
        throw usage_error(who + "M = " + std::to_string(M) +
                          " is smaller than N = " + std::to_string(N) + " nodes");
    descend_layout s;
    s.n = me.dim();
    s.M = M;
    s.L = M / N;
    s.log_L = std::countr_zero(s.L);
    s.q = aspc_schedule::logical_of(node_id(me.id()));
    s.first = std::size_t(s.q) * s.L;
    return s;
}

namespace detail {

// Inter-node iteration number s (0 .. n-1, in execution order) -> ASPC slot c.
constexpr int descend_slot(int n, int s, descend_order o) noexcept {
    return o == descend_order::descend ? n - 1 - s : s;
}

// One local iteration b (2^b < L): the h = 2^b elements at each end of the
// block go to the neighbouring logical nodes (links phi_q(0) to q + 1 and
// phi-bar_q(0) to q - 1, one step), then every element is updated.
template <wire_type T, class F>
void descend_local(node& me, const descend_layout& s, std::span<T> a, int b, F& f) {
    namespace hs = aspc_schedule;
    const std::size_t h = std::size_t{1} << b, L = s.L;
    auto left = scratch_of<T>(me, h), right = scratch_of<T>(me, h), next = scratch_of<T>(me, L);
    const std::span<const T> ca(a);
    const int up = hs::phi(s.n, s.q, 0), down = hs::phi_bar(s.n, s.q, 0);
    // ins[r] is what the peer sends as its outs[r] (single-port order).
    const link_out<T> outs[] = {{up, ca.subspan(L - h, h)}, {down, ca.subspan(0, h)}};
    const link_in<T> ins[] = {{down, std::span<T>(left)}, {up, std::span<T>(right)}};
    link_step<T>(me, outs, ins);
    for (std::size_t l = 0; l < L; ++l) {
        const T& plus = l + h < L ? a[l + h] : right[l + h - L];
        const T& minus = l >= h ? a[l - h] : left[l];
        next[l] = f(b, s.first + l, a[l], plus, minus);
    }
    std::copy(next.begin(), next.end(), a.begin());
}

// Inter-node stage, direct: iteration by iteration, element by element.
template <wire_type T, class F>
void descend_inter_direct(node& me, const descend_layout& s, std::span<T> a, descend_order o,
                          F& f) {
    T from_minus_side, from_plus_side; // a[i - 2^b], a[i + 2^b]
    for (int it = 0; it < s.n; ++it) {
        const int c = descend_slot(s.n, it, o);
        for (std::size_t l = 0; l < s.L; ++l) {
            const std::span<const T> mine(&a[l], 1);
            const aspc_route<T> routes[] = {{c, true, mine, {&from_minus_side, 1}},
                                            {c, false, mine, {&from_plus_side, 1}}};
            aspc_routes<T>(me, routes);
            a[l] = f(c + s.log_L, s.first + l, a[l], from_plus_side, from_minus_side);
        }
    }
}

// Inter-node stage, pipelined: round t runs iteration it = t - l of every
// column l in flight, as one ASPC (plus half, then minus half) over their
// distinct slots.
template <wire_type T, class F>
void descend_inter_pipelined(node& me, const descend_layout& s, std::span<T> a, descend_order o,
                             F& f) {
    const int n = s.n;
    const auto L = std::int64_t(s.L);
    const auto slots = std::size_t(n);
    auto from_minus_side = scratch_of<T>(me, slots), from_plus_side = scratch_of<T>(me, slots);
    std::vector<aspc_route<T>> plus, minus;
    for (std::int64_t t = 0; t < L + n - 1; ++t) {
        const std::int64_t it_lo = std::max<std::int64_t>(0, t - L + 1);
        const std::int64_t it_hi = std::min<std::int64_t>(n - 1, t);
        plus.clear();
        minus.clear();
        for (std::int64_t it = it_lo; it <= it_hi; ++it) {
            const std::size_t l = std::size_t(t - it), k = std::size_t(it - it_lo);
            const int c = descend_slot(n, int(it), o);
            const std::span<const T> mine(&a[l], 1);
            plus.push_back({c, true, mine, {&from_minus_side[k], 1}});
            minus.push_back({c, false, mine, {&from_plus_side[k], 1}});
        }
        aspc_routes<T>(me, plus);
        aspc_routes<T>(me, minus);
        for (std::int64_t it = it_lo; it <= it_hi; ++it) {
            const std::size_t l = std::size_t(t - it), k = std::size_t(it - it_lo);
            const int c = descend_slot(n, int(it), o);
            a[l] = f(c + s.log_L, s.first + l, a[l], from_plus_side[k], from_minus_side[k]);
        }
    }
}

} // namespace detail

// f(int b, std::size_t i, const T& self, const T& plus, const T& minus) -> T:
// the new a[i] in iteration b, given plus = a[i + 2^b mod M] and
// minus = a[i - 2^b mod M].
template <class F, class T>
concept descend_kernel = std::invocable < std::remove_reference_t<F>
&, int, std::size_t, const T&, const T&,
    const T& >
        &&std::convertible_to<std::invoke_result_t<std::remove_reference_t<F>&, int, std::size_t,
                                                   const T&, const T&, const T&>,
                              T>;

// Runs the computation on this node's block `a` (L = M / N elements) of a
// problem of size M with kernel f (descend_kernel above).
template <class T = deduce_element, output_buffer<T> R, descend_kernel<element_t<T, R>> F>
void descend(node& me, R&& block, std::size_t M, F&& f,
             descend_schedule schedule = descend_schedule::pipelined,
             descend_order order = descend_order::descend) {
    const auto a = output_span<T>(block);
    const descend_layout s = descend_layout_of(me, M);
    if (a.size() != s.L)
        throw usage_error("descend on node " + std::to_string(me.id()) + ": block has " +
                          std::to_string(a.size()) + " elements, expected M / N = " +
                          std::to_string(s.L) + " (M = " + std::to_string(M) + ")");
    const auto local_stage = [&] {
        for (int k = 0; k < s.log_L; ++k) {
            const int b = order == descend_order::descend ? s.log_L - 1 - k : k;
            detail::descend_local(me, s, a, b, f);
        }
    };
    if (order == descend_order::ascend) local_stage();
    if (schedule == descend_schedule::direct)
        detail::descend_inter_direct(me, s, a, order, f);
    else
        detail::descend_inter_pipelined(me, s, a, order, f);
    if (order == descend_order::descend) local_stage();
}

// The same computation serially, on the whole array: the reference.
template <class T = deduce_element, output_buffer<T> R, descend_kernel<element_t<T, R>> F>
void descend_serial(R&& array, F&& f, descend_order order = descend_order::descend) {
    const auto a = output_span<T>(array);
    const std::size_t M = a.size();
    const int log_M = std::countr_zero(M);
    std::vector<element_t<T, R>> next(M);
    for (int k = 0; k < log_M; ++k) {
        const int b = order == descend_order::descend ? log_M - 1 - k : k;
        const std::size_t h = std::size_t{1} << b;
        for (std::size_t i = 0; i < M; ++i)
            next[i] = f(b, i, a[i], a[(i + h) % M], a[(i + M - h) % M]);
        std::copy(next.begin(), next.end(), a.begin());
    }
}

// --- Applications -------------------------------------------------------------

// Cyclic shift by q: a[i] <- a[i - q mod M]; iteration b moves by 2^b when
// bit b of q is set (any order of b works).
struct shift_kernel {
    std::uint64_t q = 1; // already reduced mod M
    template <class T>
    T operator()(int b, std::size_t, const T& self, const T&, const T& minus) const {
        return (q >> b & 1) ? minus : self;
    }
};

// Inclusive prefix sums: a[i] <- a[i - 2^b] + a[i] when i >= 2^b, strides
// descending. Every a[i - k], 0 <= k <= i, is added once (k's binary digits),
// but in an interleaved order, so the operator must be commutative (as in
// Nassimi's class); + is.
struct prefix_kernel {
    template <class T>
    T operator()(int b, std::size_t i, const T& self, const T&, const T& minus) const {
        return i >= (std::size_t{1} << b) ? T(minus + self) : self;
    }
};

// One row of a tridiagonal system: a x[i-1] + b x[i] + c x[i+1] = d.
struct tridiag_row {
    double a = 0, b = 1, c = 0, d = 0;
    friend bool operator==(const tridiag_row&, const tridiag_row&) = default;
    friend std::ostream& operator<<(std::ostream& os, const tridiag_row& r) {
        return os << "(" << r.a << ", " << r.b << ", " << r.c << " | " << r.d << ")";
    }
};

// Parallel cyclic reduction (Hockney and Jesshope), a +-2^b-ascend: with
// stride h = 2^b, row i eliminates x[i-h] and x[i+h] using rows i -+ h, and
// then couples x[i -+ 2h]. Rows outside 0 .. M-1 (the wrapped partners) act
// as the identity row, since the system is not periodic. After log M
// iterations row i reads b x[i] = d.
struct pcr_kernel {
    std::size_t M = 0;
    tridiag_row operator()(int b, std::size_t i, const tridiag_row& r, const tridiag_row& up,
                           const tridiag_row& down) const {
        const std::size_t h = std::size_t{1} << b;
        const tridiag_row lo = i >= h ? down : tridiag_row{};
        const tridiag_row hi = i + h < M ? up : tridiag_row{};
        const double alpha = -r.a / lo.b, gamma = -r.c / hi.b;
        return {alpha * lo.a, r.b + alpha * lo.c + gamma * hi.a, gamma * hi.c,
                r.d + alpha * lo.d + gamma * hi.d};
    }
};

// x from rows reduced by pcr_kernel.
inline std::vector<double> pcr_solution(std::span<const tridiag_row> rows) {
    std::vector<double> x(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
        x[i] = rows[i].d / rows[i].b;
    return x;
}

} // namespace hcube
