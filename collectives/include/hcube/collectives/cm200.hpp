// All-to-all broadcast (allgather) and all-to-all reduction (reduce-scatter)
// along Hamiltonian cycles, as on the Connection Machine CM-200 (seed 002,
// Mathur & Johnsson, sections 4-5), plus the seed's alternatives as baselines.
//
//   one-cycle             4.1, Figs 5-7    (2^d - 1)(t_s + t_w M')
//   d-cycles              4.2, Figs 8-20   (2^d - 1)(t_s + t_w ceil(M'/d))  all-port
//   send-and-spread       5, alt. 3        d t_s + t_w (N-1) M' + d (t_s + t_w ceil(N M'/P))
//   one-source-at-a-time  5, alt. 1        N d (t_s + t_w ceil(M'/P))
//   reduce-and-spread     5, alt. 4, Fig 21  d (t_s + t_w ceil(N B / d))
// (P = d parts under all-port, 1 under single-port; see hcube/cost/cm200.hpp.)
//
// Layouts. Array block r (M' elements) belongs to the node of rank r: node r in
// binary order, node G(r) in Gray-code order (options::order). allgather leaves
// all N M' elements in block (rank) order on every node. reduce_scatter takes
// M elements per node, split over the ranks as the CM-200 allocates arrays
// (4.2.4: ceil(M/N) to each of the first alpha ranks, the rest to rank alpha,
// nothing to the others) and leaves on every node its block of
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
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <hcube/cm200_index.hpp>
#include <hcube/collectives/blocks.hpp>
#include <hcube/collectives/detail/link_step.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

namespace hcube::cm200 {

enum class algorithm {
    one_cycle,
    d_cycles,
    send_and_spread,
    one_source_at_a_time,
    reduce_and_spread
};

// Index computation: every node computes where a received element belongs with
// the formulas of 4.2.1/4.2.3. Index motion: each element travels with its
// 32-bit array index (the seed's faster choice for 32 or more nodes). Both end
// in block order. Arrival: no reordering; local address j M' + s keeps what
// arrived in step j - 1 (j = 0: own data), the layout whose indices 4.2.1 and
// Figure 7 give (dc_arrival_index, oc_arrival_index): the seed's "AABC" time,
// whose peak rate it quotes next to the rate with reordering.
enum class index_mode { computation, motion, arrival };

struct options {
    node_order order = node_order::binary;
    index_mode index = index_mode::computation;
};

constexpr std::string_view to_string(algorithm a) noexcept {
    switch (a) {
    case algorithm::one_cycle:
        return "one-cycle";
    case algorithm::d_cycles:
        return "d-cycles";
    case algorithm::send_and_spread:
        return "send-and-spread";
    case algorithm::one_source_at_a_time:
        return "one-source-at-a-time";
    case algorithm::reduce_and_spread:
        return "reduce-and-spread";
    }
    return "?";
}
constexpr std::optional<algorithm> parse_algorithm(std::string_view s) noexcept {
    for (auto a : {algorithm::one_cycle, algorithm::d_cycles, algorithm::send_and_spread,
                   algorithm::one_source_at_a_time, algorithm::reduce_and_spread})
        if (to_string(a) == s) return a;
    return std::nullopt;
}
constexpr std::string_view to_string(node_order o) noexcept {
    return o == node_order::binary ? "binary" : "gray";
}
constexpr std::string_view to_string(index_mode i) noexcept {
    return i == index_mode::computation ? "computation"
           : i == index_mode::motion    ? "motion"
                                        : "arrival";
}

// ---- observing a run step by step (the figure replays use it) ----

// After step `step`, on `channel` (the location i of the d-cycles; 0 for one
// cycle) a node sent the data of (broadcast) / partial for (reduction) rank
// block_out and received that of block_in; data_in is what it now holds for
// block_in (for a reduction: after adding its own contribution).
template <class T>
struct step_event {
    int step;
    int channel;
    int block_out;
    int block_in;
    std::span<const T> data_in;
};

struct no_hook {
    template <class E>
    void operator()(const E&) const noexcept {}
};

namespace detail {

[[noreturn]] inline void fail(const node& me, const std::string& what) {
    throw usage_error("node " + std::to_string(me.id()) + ": " + what);
}

inline std::string single_port_refusal(int d) {
    return "d-cycles exchanges on all " + std::to_string(d) +
           " links at once; run with --ports all (all-port model)";
}

inline void require_all_port(const node& me) {
    if (me.dim() >= 2 && me.cfg().ports != port_model::all_port)
        fail(me, single_port_refusal(me.dim()) + ", not " + std::string(to_string(me.cfg().ports)));
}

// One step's traffic on one channel.
template <class W>
struct channel_io {
    int send_dim;
    int recv_dim;
    std::span<const W> out;
    std::span<W> in;
};

// Runs one step (detail/link_step.hpp). The d-cycles send and receive every
// channel on one link, so the step is one exchange per link, all at once (the
// CM-200's primitive); the one cycle sends to one neighbour and receives from
// the other. An empty side leaves its link idle.
template <class W>
void run_step(node& me, const std::vector<channel_io<W>>& ios) {
    std::vector<hcube::detail::link_out<W>> outs;
    std::vector<hcube::detail::link_in<W>> ins;
    for (const auto& c : ios) {
        if (!c.out.empty()) outs.push_back({c.send_dim, c.out});
        if (!c.in.empty()) ins.push_back({c.recv_dim, c.in});
    }
    hcube::detail::link_step<W>(me, outs, ins);
}

// Who talks to whom in the two cycle algorithms. Channel c of the d-cycles is
// location c (local addresses s with s mod d = c); the one cycle has a single
// channel that carries whole blocks.
struct cycle_schedule {
    int d;
    bool multi; // d cycles, or the one Gray-code cycle
    node_id me;
    node_id q; // position of `me` on the one cycle

    cycle_schedule(const node& n, bool multi_)
        : d(n.dim())
        , multi(multi_)
        , me(node_id(n.id()))
        , q(oc_position(node_id(n.id()))) {}

    int channels() const noexcept { return d == 0 ? 1 : multi ? d : 1; }
    int steps() const noexcept { return (1 << d) - 1; }

    // Broadcast: d-cycles exchange on (t_u + c) mod d; the one cycle shifts left.
    int bcast_send_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q - 1, d);
    }
    int bcast_recv_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q, d);
    }
    // The node whose data `me` holds on channel c after step u (own data: u = -1).
    node_id bcast_origin(int u, int c) const noexcept {
        return multi ? dc_bcast_origin(me, u, c, d) : oc_node(q + node_id(u + 1), d);
    }
    // Index computation (4.1, 4.2.1): array index of element k of channel c
    // received in step u, for blocks of m elements.
    std::size_t bcast_index(int u, int c, std::size_t k, std::size_t m,
                            node_order o) const noexcept {
        if (multi) return dc_bcast_index(me, std::size_t(u + 1), k, c, d, m, o);
        return std::size_t(oc_bcast_index(me, node_id(u + 1), d, o)) * m + k;
    }

    // Reduction: the reverse motion. The partial for block (destination node) b
    // visits path(b, 0), ..., path(b, 2^d - 1) = b, combining as it goes.
    int reduce_send_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q, d);
    }
    int reduce_recv_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q - 1, d);
    }
    node_id path(node_id b, int p, int c) const noexcept {
        return multi ? dc_reduce_path(b, p, c, d) : oc_node(oc_position(b) + 1 + node_id(p), d);
    }
    // The block whose path has `me` at position p: sent in step p, received in step p - 1.
    node_id block_at(int p, int c) const noexcept {
        return multi ? dc_reduce_path(me, p, c, d) : oc_node(q - 1 - node_id(p), d);
    }
};

// ---- partial results over sets of ranks ----

struct rank_run {
    node_id lo, hi; // inclusive
};

// A partial reduction of `width` elements. Commutative operator: one value
// block (runs unused). Otherwise one block per maximal run of consecutive
// ranks, in rank order.
template <class T>
struct partial {
    std::vector<rank_run> runs;
    std::vector<T> vals;
};

// Maximal runs of the marked ranks; clears the marks it read.
inline std::vector<rank_run> take_runs(std::vector<char>& marked) {
    std::vector<rank_run> runs;
    for (node_id r = 0; r < marked.size(); ++r) {
        if (!marked[r]) continue;
        marked[r] = 0;
        if (!runs.empty() && runs.back().hi + 1 == r)
            runs.back().hi = r;
        else
            runs.push_back({r, r});
    }
    return runs;
}

// a and b cover disjoint rank sets; the result covers their union, combining
// adjacent runs lower-ranks-first with comb(lower, higher).
template <bool OneValue, class W, class Comb>
partial<W> merge(const partial<W>& a, const partial<W>& b, std::size_t w, const Comb& comb) {
    partial<W> out;
    if constexpr (OneValue) {
        out.vals.resize(w);
        for (std::size_t k = 0; k < w; ++k)
            out.vals[k] = comb(a.vals[k], b.vals[k]);
    } else {
        std::size_t ia = 0, ib = 0;
        out.vals.reserve(a.vals.size() + b.vals.size());
        while (ia < a.runs.size() || ib < b.runs.size()) {
            const bool from_a =
                ib == b.runs.size() || (ia < a.runs.size() && a.runs[ia].lo < b.runs[ib].lo);
            const rank_run r = from_a ? a.runs[ia] : b.runs[ib];
            const W* v = from_a ? &a.vals[ia++ * w] : &b.vals[ib++ * w];
            if (!out.runs.empty() && out.runs.back().hi + 1 == r.lo) {
                out.runs.back().hi = r.hi;
                W* last = &out.vals[out.vals.size() - w];
                for (std::size_t k = 0; k < w; ++k)
                    last[k] = comb(last[k], v[k]);
            } else {
                out.runs.push_back(r);
                out.vals.insert(out.vals.end(), v, v + w);
            }
        }
    }
    return out;
}

// Channel c's elements of a block of `size` elements: addresses c, c + C, ...
template <class T>
void gather_channel(std::span<const T> block, int c, int channels, std::vector<T>& into) {
    into.clear();
    for (std::size_t s = std::size_t(c); s < block.size(); s += std::size_t(channels))
        into.push_back(block[s]);
}

// Index motion: an element and its 32-bit array index travel together.
template <class T>
struct indexed {
    std::uint32_t index;
    T value;
};

// The values of a received subblock, for a hook.
template <class T>
std::span<const T> values_of(const std::vector<T>& v, std::vector<T>&) {
    return v;
}
template <class T>
std::span<const T> values_of(const std::vector<indexed<T>>& v, std::vector<T>& tmp) {
    tmp.clear();
    for (const auto& w : v)
        tmp.push_back(w.value);
    return tmp;
}

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
        partial<W> p;
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
    std::vector<partial<W>> cur{std::size_t(ch)}, got{std::size_t(ch)};
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

// Broadcast of `data` from `root` over `parts` rotated spanning binomial trees:
// part p uses dimension (p + u) mod d in step u (all-port: the parts travel on
// distinct links; single-port: parts = 1, the binomial tree). Seed 002 section
// 5, alternatives 1-3 (the "spread").   d (t_s + t_w ceil(n / parts))
template <class T>
void spread(node& me, node_id root, std::span<T> data, int parts) {
    const int d = me.dim();
    if (d == 0 || data.empty()) return;
    const node_id rel = node_id(me.id()) ^ root;
    std::vector<std::pair<int, block>> sends, recvs;
    for (int u = 0; u < d; ++u) {
        sends.clear();
        recvs.clear();
        for (int p = 0; p < parts; ++p) {
            const block b = block_of(data.size(), std::size_t(parts), std::size_t(p));
            if (b.size == 0) continue;
            node_id used = 0; // dimensions part p has crossed before step u
            for (int t = 0; t < u; ++t)
                used |= node_id{1} << ((p + t) % d);
            const int dim = (p + u) % d;
            if ((rel & ~used) == 0)
                sends.push_back({dim, b});
            else if ((rel & ~(used | (node_id{1} << dim))) == 0)
                recvs.push_back({dim, b});
        }
        for (const auto& [dim, b] : sends)
            me.send(dim, data.subspan(b.begin, b.size));
        for (const auto& [dim, b] : recvs)
            me.recv(dim, data.subspan(b.begin, b.size));
    }
}

inline int spread_parts(const node& me) {
    return me.cfg().ports == port_model::all_port ? std::max(me.dim(), 1) : 1;
}

// All-to-one personalized communication ("send") to node 0 along the binomial
// tree of ascending dimensions; node 0 ends with every block in rank order.
// The blocks a node holds after step u are those of its subcube over
// dimensions 0..u-1: an aligned rank interval in both orders, since G^-1 maps
// [0, 2^u) onto itself.   d t_s + t_w (N-1) M'
template <class T>
void gather_to_zero(node& me, std::span<const T> in, std::span<T> out, node_order order) {
    const std::size_t m = in.size();
    const node_id self = node_id(me.id());
    std::vector<T> have(in.begin(), in.end()), next;
    for (int u = 0; u < me.dim(); ++u) {
        const node_id bit = node_id{1} << u;
        if (self & bit) {
            me.send(u, have);
            return;
        }
        const node_id low = bit - 1;
        const node_id mine = rank_of(self, order) & ~low;
        const node_id theirs = rank_of(self ^ bit, order) & ~low;
        const node_id base = std::min(mine, theirs);
        next.resize(2 * have.size());
        std::copy(have.begin(), have.end(), next.begin() + std::ptrdiff_t((mine - base) * m));
        me.recv(u, std::span<T>(next).subspan((theirs - base) * m, have.size()));
        std::swap(have, next);
    }
    std::copy(have.begin(), have.end(), out.begin());
}

} // namespace detail

// ---- all-to-all broadcast: `in` holds M' elements, `out` N M' ----

namespace detail {
template <class T>
void check_allgather(const node& me, std::span<const T> in, std::span<T> out) {
    if (out.size() != in.size() * std::size_t(me.size()))
        fail(me, "allgather output holds " + std::to_string(out.size()) + " elements, needs " +
                     std::to_string(me.size()) + " x " + std::to_string(in.size()) + " = " +
                     std::to_string(in.size() * std::size_t(me.size())));
}

inline void check_index_range(const node& me, std::size_t n, options o) {
    if (o.index == index_mode::motion && n > std::size_t(UINT32_MAX))
        fail(me, std::to_string(n) + " elements exceed the 32-bit array indices of index motion");
}

template <class T, class Hook>
void cycle_allgather_any(node& me, std::span<const T> in, std::span<T> out, bool multi, options o,
                         Hook& hook) {
    check_allgather(me, in, out);
    check_index_range(me, out.size(), o);
    if (multi) require_all_port(me);
    const cycle_schedule cs(me, multi);
    if (o.index == index_mode::motion)
        cycle_allgather<indexed<T>>(me, in, out, cs, o.order, o.index, hook);
    else
        cycle_allgather<T>(me, in, out, cs, o.order, o.index, hook);
}
} // namespace detail

// Seed 002, 4.1, Figure 5: left rotation along the Gray-code cycle, then each
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

// Seed 002, 4.2.1, Figures 8-11: location i of every block follows the
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

// Seed 002, 5, alternative 3: gather everything to node 0, then one spread of
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

// Seed 002, 5, alternative 1: each node spreads its block in turn, in rank order.
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
void allgather(node& me, const In& in_range, Out&& out_range, algorithm a, options o = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    switch (a) {
    case algorithm::one_cycle:
        return allgather_one_cycle(me, in, out, o);
    case algorithm::d_cycles:
        return allgather_d_cycles(me, in, out, o);
    case algorithm::send_and_spread:
        return allgather_send_and_spread(me, in, out, o);
    case algorithm::one_source_at_a_time:
        return allgather_one_source_at_a_time(me, in, out, o);
    case algorithm::reduce_and_spread:
        break;
    }
    detail::fail(me, std::string(to_string(a)) + " is not an all-to-all broadcast algorithm");
}

// ---- all-to-all reduction: `in` holds M elements, `out` this node's block ----

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
    if (multi) require_all_port(me);
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

// Seed 002, 4.1, Figure 6: right rotation of partial results along the
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

// Seed 002, 4.2.2-4.2.4, Figures 12-20: the reverse of the d-cycles broadcast.
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

// Seed 002, 5, alternative 4, Figure 21: butterfly allreduce of all M elements
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
    std::vector<detail::partial<E>> cur{std::size_t(vars)}, got{std::size_t(vars)};
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
void reduce_scatter(node& me, const In& in_range, Out&& out_range, Op op, algorithm a,
                    options o = {}) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    switch (a) {
    case algorithm::one_cycle:
        return reduce_scatter_one_cycle(me, in, out, op, o);
    case algorithm::d_cycles:
        return reduce_scatter_d_cycles(me, in, out, op, o);
    case algorithm::reduce_and_spread:
        return reduce_scatter_reduce_and_spread(me, in, out, op, o);
    case algorithm::send_and_spread:
    case algorithm::one_source_at_a_time:
        break;
    }
    detail::fail(me, std::string(to_string(a)) + " is not an all-to-all reduction algorithm");
}

} // namespace hcube::cm200
