// All-to-all broadcast (allgather) on the CM-200 (Mathur & Johnsson): along one and d
// Hamiltonian cycles (4.1, 4.2.1) and the source's alternatives (5).
//
//   one-cycle             4.1, Figs 5-7    (2^d - 1)(t_s + t_w M')
//   d-cycles              4.2, Figs 8-20   (2^d - 1)(t_s + t_w ceil(M'/d))  all-port
//   send-and-spread       5, alt. 3        d t_s + t_w (N-1) M' + d (t_s + t_w ceil(N M'/P))
//   one-source-at-a-time  5, alt. 1        N d (t_s + t_w ceil(M'/P))
// (P = d parts under all-port, 1 under single-port; see hcube/cost/cm200.hpp.)
//
// `in` holds M' elements, `out` N M': array block r belongs to the node of
// rank r (node r in binary order, node G(r) in Gray-code order,
// options::order), and every node ends with all blocks in rank order.
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

namespace hcube::cm200 {

enum class allgather_algo { one_cycle, d_cycles, send_and_spread, one_source_at_a_time };

// words: M', each node's contribution.
inline constexpr algorithm_record allgather_records[] = {
    {"allgather", "one-cycle", int(allgather_algo::one_cycle),
     "Mathur & Johnsson 4.1, Figures 5 and 7", "(2^d - 1)(t_s + t_w M')",
     [](const call_shape& s) {
         return cost::cm200::one_cycle(s.dim, std::size_t(s.words), s.t_s, s.t_w);
     }},
    {"allgather", "d-cycles", int(allgather_algo::d_cycles),
     "Mathur & Johnsson 4.2.1, Figures 8-11, 20", "(2^d - 1)(t_s + t_w ceil(M'/d)), all-port",
     [](const call_shape& s) {
         return cost::cm200::d_cycles(s.dim, std::size_t(s.words), s.t_s, s.t_w);
     },
     detail::d_cycles_needs},
    {"allgather", "send-and-spread", int(allgather_algo::send_and_spread),
     "Mathur & Johnsson section 5, alternative 3",
     "d t_s + t_w (N-1) M' + d (t_s + t_w ceil(N M'/P)); P = d parts all-port, 1 single-port",
     [](const call_shape& s) {
         return cost::cm200::send_and_spread(s.dim, std::size_t(s.words), detail::parts(s), s.t_s,
                                             s.t_w);
     }},
    {"allgather", "one-source-at-a-time", int(allgather_algo::one_source_at_a_time),
     "Mathur & Johnsson section 5, alternative 1",
     "N d (t_s + t_w ceil(M'/P)) (an upper bound all-port); P = d parts all-port, 1 single-port",
     [](const call_shape& s) {
         return cost::cm200::one_source_at_a_time(s.dim, std::size_t(s.words), detail::parts(s),
                                                  s.t_s, s.t_w);
     }},
};

constexpr std::string_view to_string(allgather_algo a) noexcept {
    return name_of(allgather_records, int(a));
}

namespace detail {

// The cycle broadcast: W is T (index computation, arrival) or indexed<T>
// (index motion).
template <class W, class T, class Hook>
void cycle_allgather(node& me, std::span<const T> in, std::span<T> out, const cycle_schedule& cs,
                     node_order order, index_mode ix, Hook& hook) {
    constexpr bool motion = std::is_same_v<W, indexed<T>>;
    const bool arrival = ix == index_mode::arrival;
    const std::size_t m = in.size();
    const int ch = cs.channels();
    const node_id rank = rank_of(cs.me, order);
    std::copy(in.begin(), in.end(), out.begin() + std::ptrdiff_t(arrival ? 0 : rank * m));
    if (cs.d == 0) return;
    const subblocks sb(m, ch);
    std::vector<std::vector<W>> cur{std::size_t(ch)}, nxt{std::size_t(ch)};
    for (int c = 0; c < ch; ++c) {
        for (std::size_t k = 0; k < sb.count(c); ++k) {
            const std::size_t s = k * std::size_t(ch) + std::size_t(c);
            if constexpr (motion)
                cur[c].push_back({std::uint32_t(rank * m + s), in[s]});
            else
                cur[c].push_back(in[s]);
        }
        nxt[c].resize(sb.count(c));
    }
    std::vector<channel_io<W>> ios;
    std::vector<T> seen; // values of a received subblock, for the hook
    for (int u = 0; u < cs.steps(); ++u) {
        ios.clear();
        for (int c = 0; c < ch; ++c)
            ios.push_back({cs.bcast_send_dim(u, c), cs.bcast_recv_dim(u, c), cur[c], nxt[c]});
        run_step(me, ios);
        for (int c = 0; c < ch; ++c) {
            for (std::size_t k = 0; k < nxt[c].size(); ++k) {
                if constexpr (motion)
                    out[nxt[c][k].index] = nxt[c][k].value;
                else if (arrival)
                    out[std::size_t(u + 1) * m + k * std::size_t(ch) + std::size_t(c)] = nxt[c][k];
                else
                    out[cs.bcast_index(u, c, k, m, order)] = nxt[c][k];
            }
            if constexpr (!std::is_same_v<Hook, no_hook>) {
                if (nxt[c].empty()) continue;
                hook(step_event<T>{u, c, int(rank_of(cs.bcast_origin(u - 1, c), order)),
                                   int(rank_of(cs.bcast_origin(u, c), order)),
                                   values_of(nxt[c], seen)});
            }
        }
        std::swap(cur, nxt);
    }
}

} // namespace detail

namespace detail {
template <class T>
void check_allgather(const node& me, std::span<const T> in, std::span<T> out) {
    if (out.size() != in.size() * std::size_t(me.size()))
        fail(me, "allgather output holds " + std::to_string(out.size()) + " elements, needs " +
                     std::to_string(me.size()) + " x " + std::to_string(in.size()) + " = " +
                     std::to_string(in.size() * std::size_t(me.size())));
}

template <class T, class Hook>
void cycle_allgather_any(node& me, std::span<const T> in, std::span<T> out, bool multi, options o,
                         Hook& hook) {
    check_allgather(me, in, out);
    check_index_range(me, out.size(), o);
    if (multi) require_links_at_once(me);
    const cycle_schedule cs(me, multi);
    if (o.index == index_mode::motion)
        cycle_allgather<indexed<T>>(me, in, out, cs, o.order, o.index, hook);
    else
        cycle_allgather<T>(me, in, out, cs, o.order, o.index, hook);
}
} // namespace detail

// Mathur & Johnsson 4.1, Figure 5: left rotation along the Gray-code cycle, then each
// node's blocks are placed by G((s + G^-1(PA)) mod N) (binary order, Figure 7)
// or the cyclic shift (s + G^-1(PA)) mod N (Gray order).
//   (2^d - 1)(t_s + t_w M')
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out,
          class Hook = no_hook>
void allgather_one_cycle(node& me, const In& in_range, Out&& out_range, options o = {},
                         Hook hook = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    detail::cycle_allgather_any(me, in, out, false, o, hook);
}

// Mathur & Johnsson 4.2.1, Figures 8-11: location i of every block follows the
// exchange sequence (t_u + i) mod d, so every step exchanges one subblock on
// each of the d links (all-port). M' of any size: subblock i holds the local
// addresses s = k d + i (4.2.4, Figure 20); an empty subblock leaves its link idle.
//   (2^d - 1)(t_s + t_w ceil(M'/d))
//
//   step u, d = 3:   location 0 --dim (t_u)%3-->   location 1 --dim (t_u+1)%3-->
//                    location 2 --dim (t_u+2)%3-->   (t = 0 1 0 2 0 1 0)
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out,
          class Hook = no_hook>
void allgather_d_cycles(node& me, const In& in_range, Out&& out_range, options o = {},
                        Hook hook = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    detail::cycle_allgather_any(me, in, out, true, o, hook);
}

// Mathur & Johnsson section 5, alternative 3: gather everything to node 0, then one spread of
// all N M' elements from node 0.
//   d t_s + t_w (N-1) M' + d (t_s + t_w ceil(N M' / P))
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void allgather_send_and_spread(node& me, const In& in_range, Out&& out_range, options o = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    detail::check_allgather(me, in, out);
    detail::gather_to_zero(me, in, out, o.order);
    detail::spread(me, 0, out, detail::spread_parts(me));
}

// Mathur & Johnsson section 5, alternative 1: each node spreads its block in turn, in rank order.
//   N d (t_s + t_w ceil(M' / P))
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void allgather_one_source_at_a_time(node& me, const In& in_range, Out&& out_range, options o = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    detail::check_allgather(me, in, out);
    const std::size_t m = in.size();
    const node_id rank = rank_of(node_id(me.id()), o.order);
    std::copy(in.begin(), in.end(), out.begin() + std::ptrdiff_t(rank * m));
    for (node_id r = 0; r < node_id(me.size()); ++r)
        detail::spread(me, node_of_rank(r, o.order), out.subspan(r * m, m),
                       detail::spread_parts(me));
}

template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void allgather(node& me, const In& in_range, Out&& out_range, allgather_algo a, options o = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    switch (a) {
    case allgather_algo::one_cycle:
        return allgather_one_cycle(me, in, out, o);
    case allgather_algo::d_cycles:
        return allgather_d_cycles(me, in, out, o);
    case allgather_algo::send_and_spread:
        return allgather_send_and_spread(me, in, out, o);
    case allgather_algo::one_source_at_a_time:
        return allgather_one_source_at_a_time(me, in, out, o);
    }
    detail::fail(me, "unknown all-to-all broadcast algorithm " + std::to_string(int(a)));
}

} // namespace hcube::cm200
