// All-to-all reduction (reduce-scatter): node i ends with the reduction, in node
// order, of block i of everyone's input. Grama et al. 4.2: Alg. 4.8 on the
// hypercube, Alg. 4.5 on a ring.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <hcube/collectives/blocks.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

namespace hcube {

enum class reduce_scatter_algo { automatic, hypercube, ring };

// words: each node's result block m. The ring costs twice the words for an
// operator that does not commute (ordered_ring_reduce_scatter below).
inline constexpr algorithm_record reduce_scatter_records[] = {
    {"reduce-scatter", "hypercube", int(reduce_scatter_algo::hypercube),
     "Grama et al. Alg. 4.8 (ascending dimensions), Eq. 4.4", "t_s log p + t_w m (p-1)",
     cost_of<cost::reduce_scatter_hypercube>},
    {"reduce-scatter", "ring", int(reduce_scatter_algo::ring),
     "Grama et al. Alg. 4.5 on the Gray-code ring (4.6.2), Eq. 4.2", "(t_s + t_w m)(p-1)",
     [](const call_shape& s) {
         return s.commutative ? cost::reduce_scatter_ring(s.dim, s.words, s.t_s, s.t_w)
                              : cost::reduce_scatter_ring_ordered(s.dim, s.words, s.t_s, s.t_w);
     }},
};

// Whether an operator commutes, like MPI_Op_create's `commute` flag. Only the
// ring reduce-scatter looks at it (a commuting operator lets it run Alg. 4.5 as
// printed); every algorithm is right either way. Specialize it for your own
// commuting operators.
template <class Op>
struct is_commutative : std::false_type {};
template <class T>
struct is_commutative<std::plus<T>> : std::true_type {};
template <class T>
struct is_commutative<std::multiplies<T>> : std::true_type {};
template <class T>
struct is_commutative<std::bit_and<T>> : std::true_type {};
template <class T>
struct is_commutative<std::bit_or<T>> : std::true_type {};
template <class T>
struct is_commutative<std::bit_xor<T>> : std::true_type {};
template <class Op>
inline constexpr bool is_commutative_v = is_commutative<std::remove_cvref_t<Op>>::value;

namespace detail {

// acc := other op acc when `other_first`, else acc := acc op other, elementwise:
// keeps node order when partials of adjacent id ranges meet.
template <class T, class Op>
void combine_into(std::span<T> acc, std::span<const T> other, bool other_first, Op& op) {
    for (std::size_t e = 0; e < acc.size(); ++e)
        acc[e] = other_first ? op(other[e], acc[e]) : op(acc[e], other[e]);
}

// Alg. 4.8 with the dimensions in ascending order: t_s log p + t_w m (p-1).
// The source goes from the highest dimension down, which makes the partial of
// block j on node x cover ids {x, x ^ 2^(d-1), ...}: not a contiguous range, so
// a non-commutative operator could not be applied in node order. Ascending,
// after the step on dimension i every partial covers the aligned 2^(i+1)-node
// subcube around its holder, and the partner's half lies wholly below or above.
// The price: the blocks still held (index = id mod 2^i) are strided, so each
// step packs the half that leaves into one message.
//
//   d = 2, blocks b0..b3 on every node          node 1 after dim 0: b1, b3
//   dim 0: send the blocks of the other parity   after dim 1: b1 (of 0..3)
template <wire_type T, class Op>
void hypercube_reduce_scatter(node& me, std::span<T> data, Op& op) {
    const std::size_t n = data.size(), p = std::size_t(me.size()), id = std::size_t(me.id());
    std::vector<T> out, in;
    for (int i = 0; i < me.dim(); ++i) {
        const std::size_t partner = id ^ (std::size_t{1} << i), stride = std::size_t{2} << i;
        const std::size_t low = id & ((std::size_t{1} << i) - 1);
        out.clear();
        std::size_t keep_words = 0;
        for (std::size_t j = low | (partner & (stride >> 1)); j < p; j += stride) {
            const block b = block_of(n, p, j);
            out.insert(out.end(), data.begin() + std::ptrdiff_t(b.begin),
                       data.begin() + std::ptrdiff_t(b.end()));
        }
        for (std::size_t j = id & (stride - 1); j < p; j += stride)
            keep_words += block_of(n, p, j).size;
        in.resize(keep_words);
        me.exchange(i, out, in);
        std::size_t at = 0;
        for (std::size_t j = id & (stride - 1); j < p; j += stride) {
            const block b = block_of(n, p, j);
            combine_into(data.subspan(b.begin, b.size), std::span<const T>(in).subspan(at, b.size),
                         partner < id, op);
            at += b.size;
        }
    }
}

// Alg. 4.5 on the Gray-code ring (ring position r is node gray(r)) for a
// commutative operator: (t_s + t_w m)(p-1). At step i the node at position r
// adds its own piece of the block of position r + i to the partial received
// from the right and passes it left; after p - 1 steps the partial of its own
// block arrives. The partials visit nodes in Gray order, which is why the
// operator must commute. Like Alg. 4.4 it sends before it receives, so it needs
// buffered links (config::link_capacity >= 1).
template <wire_type T, class Op>
void gray_ring_reduce_scatter(node& me, std::span<T> data, Op& op) {
    const int d = me.dim();
    const std::size_t n = data.size(), p = std::size_t(me.size());
    const node_id mask = node_id(p - 1), r = gray_inverse(node_id(me.id()));
    const auto piece = [&](node_id pos) {
        const block b = block_of(n, p, gray(pos & mask));
        return data.subspan(b.begin, b.size);
    };
    const int left = gray_transition((r - 1) & mask, d); // to position r - 1
    const int right = gray_transition(r, d);             // from position r + 1
    std::vector<T> in;
    for (node_id i = 1; i < p; ++i) {
        const auto mine = piece(r + i);
        if (i > 1) combine_into(mine, std::span<const T>(in), false, op);
        me.send(left, std::span<const T>(mine));
        in.resize(piece(r + i + 1).size());
        me.recv(right, in);
    }
    if (p > 1) combine_into(piece(r), std::span<const T>(in), false, op);
}

// Alg. 4.5 for an operator that may not commute: (t_s + 2 t_w m)(p-1). Why not
// (t_s + t_w m)(p-1): with p - 1 one-block messages per node, each node's piece
// of block t leaves it exactly once, so block t's messages form a tree into
// node t whose branches are ring arcs, and node order needs every branch to
// grow one contiguous id range an id at a time. The Gray ring has no such
// split (d = 3, t = 3: the ring without node 3 is 2 6 7 5 4 0 1, and {0, 1, 2}
// is neither end of it); the id-order ring has one, but its middle nodes would
// then receive p + 1 blocks, not p - 1.
//
// So this ring runs in node-id order (left = id - 1, reached by E-cube routed
// messages that never share a link, 4.6.2), and the partial of
// block t starts at node t - 1 and walks down to 0, wraps to p - 1 and walks
// down to t + 1: its ids below t form the left partial L = x_u op ... op x_(t-1),
// those above the right partial R = x_u op ... op x_(p-1); both grow by
// prepending, and node t finishes L op x_t op R. Every message carries both
// halves (2m words); a half that is still empty is sent but ignored.
template <wire_type T, class Op>
void ordered_ring_reduce_scatter(node& me, std::span<T> data, Op& op) {
    const std::size_t n = data.size(), p = std::size_t(me.size()), j = std::size_t(me.id());
    if (p == 1) return;
    const int left = int((j + p - 1) % p), right = int((j + 1) % p);
    const auto piece = [&](std::size_t t) {
        const block b = block_of(n, p, t);
        return std::span<const T>(data.subspan(b.begin, b.size));
    };
    std::vector<T> msg, in;
    for (std::size_t s = 1; s < p; ++s) {
        // The partial of block t, received from u = j + 1 after u added x_u.
        const std::size_t t = (j + s) % p, u = (j + 1) % p, size = piece(t).size();
        const bool had_left = s > 1 && t >= 1, had_right = s > 1 && u > t;
        msg.resize(2 * size);
        const std::span<T> l(msg.data(), size), rr(msg.data() + size, size);
        if (s > 1) std::copy(in.begin(), in.end(), msg.begin());
        const std::span<T> half = j < t ? l : rr;
        if (j < t ? had_left : had_right)
            combine_into(half, piece(t), true, op);
        else
            std::copy(piece(t).begin(), piece(t).end(), half.begin());
        in.resize(2 * piece((j + s + 1) % p).size());
        me.sendrecv_routed(left, msg, right, in);
    }
    // The partial of my own block, covering every other id.
    const std::size_t size = piece(j).size();
    std::vector<T> result(piece(j).begin(), piece(j).end());
    if (j >= 1) combine_into(std::span<T>(result), std::span<const T>(in).first(size), true, op);
    if (j + 1 < p)
        combine_into(std::span<T>(result), std::span<const T>(in).subspan(size, size), false, op);
    const block b = block_of(n, p, j);
    std::copy(result.begin(), result.end(), data.begin() + std::ptrdiff_t(b.begin));
}

} // namespace detail

// In place over uneven blocks: on exit block_of(data.size(), p, id) of data holds
// the reduction of that block; the rest is unspecified.
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void reduce_scatter_blocks(node& me, R&& buffer, Op op,
                           reduce_scatter_algo a = reduce_scatter_algo::hypercube) {
    const auto data = output_span<T>(buffer);
    constexpr bool commutative = is_commutative_v<Op>;
    if (a == reduce_scatter_algo::automatic) {
        call_shape shape = shape_of(me, block_of(data.size(), std::size_t(me.size()), 0).size,
                                    sizeof(element_t<T, R>));
        shape.commutative = commutative;
        a = choose_algorithm<reduce_scatter_algo>(reduce_scatter_records, shape);
    }
    if (a == reduce_scatter_algo::hypercube)
        detail::hypercube_reduce_scatter(me, data, op);
    else if constexpr (commutative)
        detail::gray_ring_reduce_scatter(me, data, op);
    else
        detail::ordered_ring_reduce_scatter(me, data, op);
}

// reduce_scatter(me, in, out, op): in.size() == p * out.size(); out = node-order
// reduction of block id() of everyone's `in`.
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out,
          reduction_op<element_t<T, In>> Op>
void reduce_scatter(node& me, const In& in_range, Out&& out_range, Op op,
                    reduce_scatter_algo a = reduce_scatter_algo::automatic) {
    using E = element_t<T, In>;
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    const std::size_t p = std::size_t(me.size()), m = out.size();
    if (in.size() != p * m)
        throw usage_error("reduce_scatter on node " + std::to_string(me.id()) +
                          ": in.size() = " + std::to_string(in.size()) +
                          ", expected p * out.size() = " + std::to_string(p) + " * " +
                          std::to_string(m) + " = " + std::to_string(p * m));
    std::vector<E> work(in.begin(), in.end());
    reduce_scatter_blocks(me, work, op, a);
    const auto mine = std::span<const E>(work).subspan(std::size_t(me.id()) * m, m);
    std::copy(mine.begin(), mine.end(), out.begin());
}

} // namespace hcube
