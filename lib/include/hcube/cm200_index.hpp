// Index formulas and memory partitioning of the CM-200 all-to-all algorithms
// (Mathur & Johnsson, sections 4.1-4.2.4). Pure functions of node
// addresses, steps and local memory locations; no threads.
//
// Words used below (those of the source):
//   N = 2^d nodes; PA = a node's (binary) address.
//   rank: the index of the array block a node holds. Binary order: rank = PA.
//         Gray-code order (the CM-200 default): rank = G^-1(PA), i.e. array
//         block r lives on node G(r) (4.2.1, Figure 9).
//   location i (0 <= i < d): local address s of a block belongs to location
//         s mod d; location i follows the exchange sequence (t_u + i) mod d.
//   sh^i(x): left cyclic shift of the d-bit string x by i.
#pragma once

#include <cstddef>
#include <cstdint>

#include <hcube/topology.hpp>

namespace hcube::cm200 {

enum class node_order { binary, gray };

constexpr node_id rank_of(node_id pa, node_order o) noexcept {
    return o == node_order::binary ? pa : gray_inverse(pa);
}
constexpr node_id node_of_rank(node_id r, node_order o) noexcept {
    return o == node_order::binary ? r : gray(r);
}

// sh^i(x) on d bits.
constexpr node_id sh(node_id x, int i, int d) noexcept {
    if (d == 0) return x;
    i %= d;
    const node_id mask = (node_id{1} << d) - 1;
    return i == 0 ? x : ((x << i) | (x >> (d - i))) & mask;
}

// Dimension used by location i in step u (0 <= u < 2^d - 1) of the d-cycles
// algorithms: (t_u + i) mod d (4.2.1). No two locations share a dimension.
constexpr int exchange_dim(int u, int i, int d) noexcept {
    return (gray_transition(node_id(u), d) + i) % d;
}

// ---- d-cycles broadcast (4.2.1, Figures 8-11) ----

// Node whose location-i element node `pa` holds after step u: the XOR of the
// dimensions used so far is sh^i(G(u + 1)).
constexpr node_id dc_bcast_origin(node_id pa, int u, int i, int d) noexcept {
    return pa ^ sh(gray(node_id(u + 1)), i, d);
}

// Index computation: the array index held, after the broadcast, in local
// address s = j M' + k d + i of node pa, j = number of steps done (0: own data).
//   binary: (PA xor sh^i(G(j))) M' + k d + i
//   Gray:   (G^-1(PA) xor G^-1(sh^i(G(j)))) M' + k d + i
constexpr std::size_t dc_bcast_index(node_id pa, std::size_t j, std::size_t k, int i, int d,
                                     std::size_t m, node_order o) noexcept {
    const node_id x = sh(gray(node_id(j)), i, d);
    const node_id r = o == node_order::binary ? (pa ^ x) : (gray_inverse(pa) ^ gray_inverse(x));
    return std::size_t(r) * m + k * std::size_t(d) + std::size_t(i);
}

// The same for the whole of a node's memory when the data stay where they
// arrive (no reordering): local address j M' + s, s = k d + i.
constexpr std::size_t dc_arrival_index(node_id pa, std::size_t j, std::size_t s, int d,
                                       std::size_t m, node_order o) noexcept {
    return d == 0 ? s : dc_bcast_index(pa, j, s / std::size_t(d), int(s % std::size_t(d)), d, m, o);
}

// ---- d-cycles reduction (4.2.2-4.2.3, Figures 12-19) ----
//
// The partial result for block j, location i, starts at j xor 2^((d-1+i) mod d)
// and is sent in step u by node j xor sh^i(G(2^d - 1 - u)) to node
// j xor sh^i(G(2^d - 2 - u)). (The source prints the receiver as
// j xor sh^i(G(2^d - u)), one off against its own sender formula and its item 3;
// the receiver of step u is the sender of step u + 1, as Figure 12 shows.)

// Path position p = 0 .. 2^d - 1 of the partial for block j, location i (p = u
// is the sender of step u; p = 2^d - 1 is j itself).
constexpr node_id dc_reduce_path(node_id j, int p, int i, int d) noexcept {
    const node_id n = node_id{1} << d;
    return j ^ sh(gray(n - 1 - node_id(p)), i, d);
}
// The block (destination node) whose location-i partial node pa sends in step u.
constexpr node_id dc_reduce_send_block(node_id pa, int u, int i, int d) noexcept {
    return dc_reduce_path(pa, u, i, d);
}
// The block whose location-i partial node pa receives (and adds to) in step u.
constexpr node_id dc_reduce_recv_block(node_id pa, int u, int i, int d) noexcept {
    return dc_reduce_path(pa, u + 1, i, d);
}

// ---- one cycle (4.1, Figures 5-7) ----
//
// The cycle is the Gray code: position q is node G(q). Broadcast shifts left
// (position q sends to q - 1), so after step u position q holds the block that
// started at position q + u + 1.

constexpr node_id oc_position(node_id pa) noexcept {
    return gray_inverse(pa);
}
constexpr node_id oc_node(node_id q, int d) noexcept {
    return gray(q & ((node_id{1} << d) - 1));
}
// Dimension between positions q and q + 1 (mod 2^d).
constexpr int oc_dim(node_id q, int d) noexcept {
    return gray_transition(q & ((node_id{1} << d) - 1), d);
}
// Array index in local address s of node pa after the full rotation
// (Figure 7: G((s + G^-1(PA)) mod N) in binary order; in Gray order simply
// (s + G^-1(PA)) mod N, a cyclic shift).
constexpr node_id oc_bcast_index(node_id pa, node_id s, int d, node_order o) noexcept {
    const node_id q = (s + oc_position(pa)) & ((node_id{1} << d) - 1);
    return o == node_order::binary ? gray(q) : q;
}

constexpr std::size_t oc_arrival_index(node_id pa, std::size_t j, std::size_t s, int d,
                                       std::size_t m, node_order o) noexcept {
    return std::size_t(oc_bcast_index(pa, node_id(j), d, o)) * m + s;
}

// ---- memory partitioning for arbitrary sizes (4.2.4, Figure 20) ----

// M elements on N nodes, CM-200 style: the first alpha nodes get ceil(M/N)
// elements each, node alpha the rest (possibly none), the others nothing.
struct cm_allocation {
    std::size_t m = 0;     // total elements
    std::size_t nodes = 1; // N
    std::size_t block = 0; // ceil(M/N)
    std::size_t alpha = 0; // floor(M / block): number of full blocks
    std::size_t last = 0;  // M - alpha * block: the short block (node alpha)

    constexpr cm_allocation(std::size_t m_, std::size_t nodes_) noexcept
        : m(m_)
        , nodes(nodes_)
        , block((m_ + nodes_ - 1) / nodes_)
        , alpha(block ? m_ / block : 0)
        , last(m_ - alpha * block) {}

    // Size and offset of the block of rank r.
    constexpr std::size_t size(std::size_t r) const noexcept {
        return r < alpha ? block : r == alpha ? last : 0;
    }
    constexpr std::size_t offset(std::size_t r) const noexcept {
        return r <= alpha ? r * block : m;
    }
};

// A block of `size` elements cut into d subblocks, subblock i = the local
// addresses s with s mod d = i: gamma subblocks of beta = ceil(size/d)
// elements, the others beta - 1 (Figure 20; delta and epsilon are the same
// numbers for the short block). d = 0 means one subblock (no links).
struct subblocks {
    std::size_t size = 0;
    int d = 1;
    std::size_t beta = 0;  // ceil(size / d)
    std::size_t gamma = 0; // size - d (beta - 1): subblocks with beta elements

    constexpr subblocks(std::size_t size_, int d_) noexcept
        : size(size_)
        , d(d_ < 1 ? 1 : d_)
        , beta((size_ + std::size_t(d) - 1) / std::size_t(d))
        , gamma(beta ? size_ - std::size_t(d) * (beta - 1) : 0) {}

    constexpr std::size_t count(int i) const noexcept {
        return std::size_t(i) < gamma ? beta : beta ? beta - 1 : 0;
    }
};

} // namespace hcube::cm200
