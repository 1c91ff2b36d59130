// All-to-all broadcast (allgather): every node ends with every node's block, in
// node order. Grama et al. 4.2: Alg. 4.7 on the hypercube, Alg. 4.4 on the Gray-code
// ring and Alg. 4.6 on the Gray-code embedded 2-D torus (4.6.2); all-port, the
// d rotated Hamiltonian cycles of Mathur & Johnsson 4.2 (cm200/allgather.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/blocks.hpp>
#include <hcube/collectives/cm200/allgather.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

namespace hcube {

enum class allgather_algo { automatic, hypercube, ring, mesh, d_cycles };

// words: each node's contribution m.
inline constexpr algorithm_record allgather_records[] = {
    {"allgather", "hypercube", int(allgather_algo::hypercube), "Grama et al. Alg. 4.7, Eq. 4.4",
     "t_s log p + t_w m (p-1)", cost_of<cost::allgather_hypercube>},
    {"allgather", "ring", int(allgather_algo::ring),
     "Grama et al. Alg. 4.4 on the Gray-code ring (4.6.2), Eq. 4.2", "(t_s + t_w m)(p-1)",
     cost_of<cost::allgather_ring>},
    {"allgather",
     "mesh",
     int(allgather_algo::mesh),
     "Grama et al. Alg. 4.6 on the Gray-code embedded mesh (4.6.2), Eq. 4.3",
     "2 t_s (sqrt p - 1) + t_w m (p-1)",
     cost_of<cost::allgather_mesh>,
     {.even_dim = true}},
    {"allgather", "d-cycles", int(allgather_algo::d_cycles),
     "Mathur & Johnsson 4.2.1, Figures 8-11, 20", "(2^d - 1)(t_s + t_w ceil(M'/d)), all-port",
     [](const call_shape& s) {
         return cost::cm200::d_cycles(s.dim, std::size_t(s.words), s.t_s, s.t_w);
     },
     cm200::detail::d_cycles_needs},
};

namespace detail {

// One ring all-to-all broadcast (Alg. 4.4) among the 2^h nodes that differ from
// me only in dimensions lo .. lo+h-1, arranged on the h-bit Gray-code cycle:
// ring position r is the node whose bits lo.. lo+h-1 are gray(r), so ring
// neighbours are hypercube neighbours. It assumes dimensions 0 .. lo-1 are
// already gathered: each ring member then holds one "chunk", the 2^lo blocks of
// its aligned 2^lo-node subcube, which is contiguous in `data`. Each of the
// 2^h - 1 steps sends the chunk received last to the right and receives the
// next one from the left: cost (t_s + t_w |chunk|)(2^h - 1).
//
//   h = d, lo = 0:           the ring algorithm (Eq. 4.2)
//   h = d/2 twice:           rows then columns of the torus (Eq. 4.3)
//   h = 1, lo = 0 .. d-1:    Alg. 4.7, a 2-node "ring" per dimension (Eq. 4.4)
//
//   ring, d = 3:   position  0 1 2 3 4 5 6 7       torus, d = 4 (rows: bits 0-1,
//                  node      0 1 3 2 6 7 5 4       columns: bits 2-3)
//                  (node 4 closes the cycle to 0)      0  1  3  2
//                                                      4  5  7  6
//                                                     12 13 15 14
//                                                      8  9 11 10
//
// Blocks are block_of(data.size(), p, node), so sizes need not divide by p.
template <wire_type T>
void ring_allgather_phase(node& me, std::span<T> data, int lo, int h) {
    if (h == 0) return;
    const std::size_t n = data.size(), p = std::size_t(me.size());
    const node_id id = node_id(me.id()), q = node_id{1} << h, mask = q - 1;
    const node_id r = gray_inverse((id >> lo) & mask);
    const node_id high = (id >> (lo + h)) << h; // the bits above the ring, shifted into place
    const auto chunk = [&](node_id pos) {
        const block b =
            blocks_of(n, p, std::size_t(high | gray(pos & mask)) << lo, std::size_t{1} << lo);
        return data.subspan(b.begin, b.size);
    };
    const int right = lo + gray_transition(r, h);             // to position r + 1
    const int left = lo + gray_transition((r - 1) & mask, h); // from position r - 1
    for (node_id i = 1; i < q; ++i) {
        const std::span<const T> out = chunk(r - i + 1);
        if (h == 1) { // a 2-node ring: one exchange, also over unbuffered links
            me.exchange(right, out, chunk(r - i));
            continue;
        }
        // Send before receiving, as Alg. 4.4 does: the ring needs links that
        // buffer a message (config::link_capacity >= 1); with unbuffered links
        // every node waits in its send and the run reports a deadlock.
        me.send(right, out);
        me.recv(left, chunk(r - i));
    }
}

inline int mesh_side_dims(const node& me) {
    if (me.dim() % 2 != 0)
        throw usage_error("allgather mesh on node " + std::to_string(me.id()) +
                          ": needs an even dimension (a sqrt(p) x sqrt(p) mesh), got dimension " +
                          std::to_string(me.dim()));
    return me.dim() / 2;
}

} // namespace detail

// In place over uneven blocks: node i owns block_of(data.size(), p, i) on entry;
// on exit every block is filled everywhere. `automatic` sizes m as the largest
// block.
template <class T = deduce_element, output_buffer<T> R>
void allgather_blocks(node& me, R&& buffer, allgather_algo a = allgather_algo::hypercube) {
    const auto data = output_span<T>(buffer);
    const int d = me.dim();
    if (a == allgather_algo::automatic)
        a = choose_algorithm<allgather_algo>(
            allgather_records, shape_of(me, block_of(data.size(), std::size_t(me.size()), 0).size,
                                        sizeof(element_t<T, R>)));
    switch (a) {
    case allgather_algo::hypercube:
        // Alg. 4.7, Eq. 4.4: t_s log p + t_w m (p-1).
        for (int i = 0; i < d; ++i)
            detail::ring_allgather_phase(me, data, i, 1);
        return;
    case allgather_algo::ring:
        // Alg. 4.4 on the Gray-code ring, Eq. 4.2: (t_s + t_w m)(p-1).
        detail::ring_allgather_phase(me, data, 0, d);
        return;
    case allgather_algo::mesh: {
        // Alg. 4.6, Eq. 4.3: 2 t_s (sqrt p - 1) + t_w m (p-1). Rows are the low
        // d/2 dimensions, columns the high ones, each a Gray-code ring.
        const int h = detail::mesh_side_dims(me);
        detail::ring_allgather_phase(me, data, 0, h);
        detail::ring_allgather_phase(me, data, h, h);
        return;
    }
    case allgather_algo::d_cycles: {
        // Mathur & Johnsson 4.2.1, the d cycles on blocks padded to the largest, B:
        // (2^d - 1)(t_s + t_w ceil(B/d)).
        using E = element_t<T, R>;
        const std::size_t p = std::size_t(me.size()), big = block_of(data.size(), p, 0).size;
        const block own = block_of(data.size(), p, std::size_t(me.id()));
        std::vector<E> mine(big), all(big * p);
        std::copy_n(data.begin() + std::ptrdiff_t(own.begin), own.size, mine.begin());
        cm200::allgather_d_cycles(me, std::span<const E>(mine), std::span(all));
        for (std::size_t r = 0; r < p; ++r) {
            const block b = block_of(data.size(), p, r);
            std::copy_n(all.begin() + std::ptrdiff_t(r * big), b.size,
                        data.begin() + std::ptrdiff_t(b.begin));
        }
        return;
    }
    case allgather_algo::automatic:
        break;
    }
}

// allgather(me, mine, all): all.size() == p * mine.size(); on exit all = the
// blocks of nodes 0..p-1 in node order.
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void allgather(node& me, const In& mine_range, Out&& all_range,
               allgather_algo a = allgather_algo::automatic) {
    const auto mine = input_span<T>(mine_range);
    const auto all = output_span<T>(all_range);
    const std::size_t p = std::size_t(me.size()), m = mine.size();
    if (all.size() != p * m)
        throw usage_error("allgather on node " + std::to_string(me.id()) +
                          ": all.size() = " + std::to_string(all.size()) +
                          ", expected p * mine.size() = " + std::to_string(p) + " * " +
                          std::to_string(m) + " = " + std::to_string(p * m));
    std::copy(mine.begin(), mine.end(), all.begin() + std::ptrdiff_t(std::size_t(me.id()) * m));
    allgather_blocks(me, all, a);
}

} // namespace hcube
