// All-to-all reduction (reduce-scatter) on the CM-200 (Mathur & Johnsson): along one
// and d Hamiltonian cycles (4.1, 4.2.2-4.2.4) and the butterfly of
// alternative 4 (5).
//
//   one-cycle             4.1, Fig 6            (2^d - 1)(t_s + t_w ceil(M/N))
//   d-cycles              4.2.2-4.2.4, Figs 12-20  (2^d - 1)(t_s + t_w ceil(ceil(M/N)/d))
//   reduce-and-spread     5, alt. 4, Fig 21     d (t_s + t_w ceil(M / P))
// (costs for a commuting operator; P = d parts all-port, 1 single-port.)
//
// `in` holds M elements, split over the ranks as the CM-200 allocates arrays
// (4.2.4: ceil(M/N) to each of the first alpha ranks, the rest to rank alpha,
// nothing to the others); `out` receives this node's block of
// x_0 op x_1 op ... op x_{N-1} (x_r = the input of the node of rank r).
//
// Operators. The cycle and butterfly algorithms combine partial results in the
// order the data travels, which is not rank order. For an operator known to
// commute (hcube::is_commutative, reduce_scatter.hpp: std::plus, multiplies,
// bit_and/or/xor, or your own specialization) a partial is one value, as on
// the CM-200, and the costs above hold. For any other associative operator a
// partial keeps one value per maximal run of consecutive ranks it covers (both
// ends know the runs, only values travel): right for non-commutative operators,
// at the price of longer messages (docs/cm200.md gives the factors).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <hcube/collectives/cm200/partial.hpp>
#include <hcube/collectives/cm200/schedule.hpp>
#include <hcube/collectives/cm200/spread.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/reduce_scatter.hpp>

namespace hcube::cm200 {

enum class reduce_scatter_algo { one_cycle, d_cycles, reduce_and_spread };

// words: m, each node's result block (M = N m inputs per node).
inline constexpr algorithm_record reduce_scatter_records[] = {
    {"reduce-scatter", "one-cycle", int(reduce_scatter_algo::one_cycle),
     "Mathur & Johnsson 4.1, Figure 6", "(2^d - 1)(t_s + t_w m)",
     [](const call_shape& s) {
         return cost::cm200::one_cycle(s.dim, std::size_t(s.words), s.t_s, s.t_w);
     }},
    {"reduce-scatter", "d-cycles", int(reduce_scatter_algo::d_cycles),
     "Mathur & Johnsson 4.2.2-4.2.4, Figures 12-20", "(2^d - 1)(t_s + t_w ceil(m/d)), all-port",
     [](const call_shape& s) {
         return cost::cm200::d_cycles(s.dim, std::size_t(s.words), s.t_s, s.t_w);
     },
     detail::d_cycles_needs},
    {"reduce-scatter", "reduce-and-spread", int(reduce_scatter_algo::reduce_and_spread),
     "Mathur & Johnsson section 5, alternative 4, Figure 21",
     "d (t_s + t_w ceil(N m/P)); P = d parts all-port, 1 single-port",
     [](const call_shape& s) {
         return cost::cm200::reduce_and_spread(s.dim, s.nodes() * std::size_t(s.words),
                                               detail::parts(s), s.t_s, s.t_w);
     }},
};

constexpr std::string_view to_string(reduce_scatter_algo a) noexcept {
    return name_of(reduce_scatter_records, int(a));
}

namespace detail {

// The cycle reduction (4.1 Figure 6; 4.2.2-4.2.4, Figures 12-20). W is T
// (index computation: the block a partial belongs to follows from the step,
// 4.2.3) or indexed<T> (index motion: every partial element carries its array
// index, and the receiver adds its own element of that index).
template <class W, class T, class Op, class Hook>
void cycle_reduce_scatter(node& me, std::span<const T> in, std::span<T> out, const Op& op,
                          const cycle_schedule& cs, node_order order, Hook& hook) {
    constexpr bool one_value = is_commutative_v<Op>;
    constexpr bool motion = std::is_same_v<W, indexed<T>>;
    const cm_allocation alloc(in.size(), std::size_t(1) << cs.d);
    const node_id my_rank = rank_of(cs.me, order);
    const int ch = cs.channels();
    auto width = [&](node_id b, int c) {
        return subblocks(alloc.size(rank_of(b, order)), ch).count(c);
    };
    auto comb = [&op](const W& x, const W& y) -> W {
        if constexpr (motion)
            return {x.index, op(x.value, y.value)};
        else
            return op(x, y);
    };
    if (cs.d == 0) {
        std::copy(in.begin(), in.end(), out.begin());
        return;
    }
    // Own contribution to block b on channel c, as a partial over {my_rank}:
    // by the formulas, or (index motion) at the indices the partial `like` carries.
    auto own = [&](node_id b, int c, const partial<W>* like) {
        partial<W> p{{}, scratch_of<W>(me)};
        if constexpr (!one_value) p.runs.push_back({my_rank, my_rank});
        const std::size_t begin = alloc.offset(rank_of(b, order)), w = width(b, c);
        for (std::size_t k = 0; k < w; ++k) {
            const std::size_t s = k * std::size_t(ch) + std::size_t(c);
            if constexpr (motion) {
                const std::uint32_t i = like ? like->vals[k].index : std::uint32_t(begin + s);
                p.vals.push_back({i, in[i]});
            } else {
                p.vals.push_back(in[begin + s]);
            }
        }
        return p;
    };
    std::vector<partial<W>> cur(std::size_t(ch), {{}, scratch_of<W>(me)}), got = cur;
    for (int c = 0; c < ch; ++c)
        cur[c] = own(cs.block_at(0, c), c, nullptr);
    std::vector<char> marked(std::size_t(1) << cs.d, 0);
    std::vector<channel_io<W>> ios;
    std::vector<T> seen;
    for (int u = 0; u < cs.steps(); ++u) {
        ios.clear();
        for (int c = 0; c < ch; ++c) {
            // The incoming partial covers the first u + 1 nodes of its path.
            const node_id b = cs.block_at(u + 1, c);
            std::size_t blocks = 1;
            if constexpr (!one_value) {
                for (int p = 0; p <= u; ++p)
                    marked[rank_of(cs.path(b, p, c), order)] = 1;
                got[c].runs = take_runs(marked);
                blocks = got[c].runs.size();
            }
            got[c].vals.resize(blocks * width(b, c));
            ios.push_back(
                {cs.reduce_send_dim(u, c), cs.reduce_recv_dim(u, c), cur[c].vals, got[c].vals});
        }
        run_step(me, ios);
        for (int c = 0; c < ch; ++c) {
            const node_id b = cs.block_at(u + 1, c);
            const std::size_t w = width(b, c);
            if (w == 0) {
                cur[c] = {};
                continue;
            }
            cur[c] = merge<one_value>(got[c], own(b, c, motion ? &got[c] : nullptr), w, comb);
            if constexpr (!std::is_same_v<Hook, no_hook>)
                hook(step_event<T>{u, c, int(rank_of(cs.block_at(u, c), order)),
                                   int(rank_of(b, order)), values_of(cur[c].vals, seen)});
        }
    }
    // After the last step every channel holds the complete result for `me`.
    const std::size_t begin = alloc.offset(my_rank);
    for (int c = 0; c < ch; ++c)
        for (std::size_t k = 0; k < cur[c].vals.size(); ++k) {
            if constexpr (motion)
                out[cur[c].vals[k].index - begin] = cur[c].vals[k].value;
            else
                out[k * std::size_t(ch) + std::size_t(c)] = cur[c].vals[k];
        }
}

} // namespace detail

namespace detail {
template <class T>
void check_reduce_scatter(const node& me, std::span<const T> in, std::span<T> out,
                          node_order order) {
    const cm_allocation alloc(in.size(), std::size_t(me.size()));
    const node_id r = rank_of(node_id(me.id()), order);
    if (out.size() != alloc.size(r))
        fail(me, "reduce-scatter output holds " + std::to_string(out.size()) +
                     " elements, but rank " + std::to_string(r) + "'s block of " +
                     std::to_string(in.size()) + " inputs has " + std::to_string(alloc.size(r)));
}

template <class T, class Op, class Hook>
void cycle_reduce_any(node& me, std::span<const T> in, std::span<T> out, const Op& op, bool multi,
                      options o, Hook& hook) {
    check_reduce_scatter(me, in, out, o.order);
    if (multi) require_links_at_once(me);
    if (o.index == index_mode::arrival)
        fail(me, "index arrival leaves a broadcast unordered; a reduction has no such layout "
                 "(use computation or motion)");
    check_index_range(me, in.size(), o);
    const cycle_schedule cs(me, multi);
    if (o.index == index_mode::motion)
        cycle_reduce_scatter<indexed<T>>(me, in, out, op, cs, o.order, hook);
    else
        cycle_reduce_scatter<T>(me, in, out, op, cs, o.order, hook);
}
} // namespace detail

// Mathur & Johnsson 4.1, Figure 6: right rotation of partial results along the
// Gray-code cycle; the partial for node b starts at b's successor.
//   (2^d - 1)(t_s + t_w ceil(M/N))        (commutative op)
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out,
          reduction_op<element_t<T, In>> Op, class Hook = no_hook>
void reduce_scatter_one_cycle(node& me, const In& in_range, Out&& out_range, Op op, options o = {},
                              Hook hook = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    detail::cycle_reduce_any(me, in, out, op, false, o, hook);
}

// Mathur & Johnsson 4.2.2-4.2.4, Figures 12-20: the reverse of the d-cycles broadcast.
// Location i of block j starts at j xor 2^((d-1+i) mod d) and follows
// (t_u + i) mod d, each node adding its contribution as the partial passes.
//   (2^d - 1)(t_s + t_w ceil(ceil(M/N)/d))  (commutative op, all-port)
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out,
          reduction_op<element_t<T, In>> Op, class Hook = no_hook>
void reduce_scatter_d_cycles(node& me, const In& in_range, Out&& out_range, Op op, options o = {},
                             Hook hook = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    detail::cycle_reduce_any(me, in, out, op, true, o, hook);
}

// Mathur & Johnsson section 5, alternative 4, Figure 21: butterfly allreduce of all M elements
// split into P variables (variable i = addresses s with s mod P = i, crossing
// dimension (u + i) mod d in step u; P = d all-port, 1 single-port), then the
// local subselection of this node's block.
//   d (t_s + t_w ceil(M / P))  (commutative op)
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out,
          reduction_op<element_t<T, In>> Op>
void reduce_scatter_reduce_and_spread(node& me, const In& in_range, Out&& out_range, Op op,
                                      options o = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    detail::check_reduce_scatter(me, in, out, o.order);
    constexpr bool one_value = is_commutative_v<Op>;
    const int d = me.dim();
    const node_id self = node_id(me.id());
    const cm_allocation alloc(in.size(), std::size_t(me.size()));
    const node_id rank = rank_of(self, o.order);
    if (d == 0) {
        std::copy(in.begin(), in.end(), out.begin());
        return;
    }
    const int vars = detail::spread_parts(me);
    const subblocks sb(in.size(), vars);
    using E = element_t<T, In>;
    std::vector<detail::partial<E>> cur(std::size_t(vars), {{}, scratch_of<E>(me)}), got = cur;
    for (int v = 0; v < vars; ++v) {
        detail::gather_channel(in, v, vars, cur[v].vals);
        if constexpr (!one_value) cur[v].runs.push_back({rank, rank});
    }
    std::vector<char> marked(std::size_t(me.size()), 0);
    std::vector<detail::channel_io<E>> ios;
    for (int u = 0; u < d; ++u) {
        ios.clear();
        for (int v = 0; v < vars; ++v) {
            const int dim = (u + v) % d;
            std::size_t blocks = 1;
            if constexpr (!one_value) {
                // The partner holds its subcube over the dimensions crossed so far.
                node_id crossed = 0;
                for (int t = 0; t < u; ++t)
                    crossed |= node_id{1} << ((v + t) % d);
                const node_id partner = self ^ (node_id{1} << dim);
                for (node_id x = crossed;; x = (x - 1) & crossed) {
                    marked[rank_of(partner ^ x, o.order)] = 1;
                    if (x == 0) break;
                }
                got[v].runs = detail::take_runs(marked);
                blocks = got[v].runs.size();
            }
            got[v].vals.resize(blocks * sb.count(v));
            ios.push_back({dim, dim, cur[v].vals, got[v].vals});
        }
        detail::run_step(me, ios);
        for (int v = 0; v < vars; ++v)
            if (sb.count(v)) cur[v] = detail::merge<one_value>(cur[v], got[v], sb.count(v), op);
    }
    const std::size_t begin = alloc.offset(rank);
    for (std::size_t s = begin; s < begin + out.size(); ++s)
        out[s - begin] = cur[s % std::size_t(vars)].vals[s / std::size_t(vars)];
}

template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out,
          reduction_op<element_t<T, In>> Op>
void reduce_scatter(node& me, const In& in_range, Out&& out_range, Op op, reduce_scatter_algo a,
                    options o = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    switch (a) {
    case reduce_scatter_algo::one_cycle:
        return reduce_scatter_one_cycle(me, in, out, op, o);
    case reduce_scatter_algo::d_cycles:
        return reduce_scatter_d_cycles(me, in, out, op, o);
    case reduce_scatter_algo::reduce_and_spread:
        return reduce_scatter_reduce_and_spread(me, in, out, op, o);
    }
    detail::fail(me, "unknown all-to-all reduction algorithm " + std::to_string(int(a)));
}

} // namespace hcube::cm200
