// The d spanning trees of the all-port rooted collectives (Grama et al. 4.7.2,
// after Johnsson and Ho, "Optimum broadcasting and personalized communication
// in hypercubes", IEEE Trans. Computers 38(9), 1989): for a d-cube rooted at
// node 0 (other roots: relabel v = id ^ root), tree j carries part j of the
// message, and every node knows from (j, v) alone across which dimension and
// in which step it hears from its parent. All d trees run at once.
//
// rotated: the spanning binomial tree whose dimensions are crossed in the
//   order j, j+1, ..., j+d-1 (mod d): in step u tree j crosses dimension
//   (j+u) mod d, so the d trees use d distinct dimensions in every step (no
//   link carries two parts in one step), but not distinct edges: all d trees
//   leave the root on every link. d steps.
//
//   d = 3, tree 0 (dims 0,1,2)   tree 1 (dims 1,2,0)   tree 2 (dims 2,0,1)
//   step 0: 0->1                 0->2                  0->4
//   step 1: 0->2 1->3            0->4 2->6             0->1 4->5
//   step 2: 0->4 1->5 2->6 3->7  0->1 2->3 4->5 6->7   0->2 1->3 4->6 5->7
//
// edge_disjoint (Johnsson and Ho's nESBT): tree j leaves the root only across
//   dimension j, to e_j = 2^j; e_j spans the half with bit j set by a binomial
//   tree over the dimensions j+1, ..., j+d-1 (mod d) in steps 1..d-1, and in
//   step d every node of that half but e_j passes the part across dimension j
//   to the other half. No directed edge belongs to two trees: an edge across
//   k != j into x (bit k of x set) is used by tree j only if j is the next set
//   bit of x after k (cyclically); dimension-j edges from the bit-j half down
//   are tree j's alone. d + 1 steps (1 for d = 1).
//
//   d = 3, tree 0                 tree 1                tree 2
//   step 0: 0->1                  0->2                  0->4
//   step 1: 1->3                  2->6                  4->5
//   step 2: 1->5 3->7             2->3 6->7             4->6 5->7
//   step 3: 3->2 5->4 7->6        3->1 6->4 7->5        5->1 6->2 7->3
//
// Neither family keeps every subtree a run of consecutive ids, which is what a
// reduction with an operator that does not commute needs (the binomial tree
// of Alg. 4.3 does). No edge-disjoint family can: the tree that leaves the
// root across dimension d-1 has e_(d-1) = p/2 below the root, and the ids
// 1 .. p/2 - 1 hang below neighbours of p/2 that are all larger than p/2.
#pragma once

#include <cstdint>

#include <hcube/topology.hpp>

namespace hcube {

enum class tree_family { rotated, edge_disjoint };

// How node v != 0 (relabelled) hears from its parent in tree j: across `dim`
// in step `step` (steps count from 0).
struct tree_edge {
    int dim;
    int step;
    friend constexpr bool operator==(tree_edge, tree_edge) = default;
};

// Steps one tree takes (all trees together take the same).
constexpr int tree_steps(tree_family f, int d) noexcept {
    if (f == tree_family::rotated || d <= 1) return d;
    return d + 1;
}

// The largest (b - first) mod d over the set bits b of v other than `skip`
// (-1 when there is none).
constexpr int last_offset(node_id v, int first, int skip, int d) noexcept {
    int best = -1;
    for (int b = 0; b < d; ++b)
        if (b != skip && (v >> b & 1)) {
            const int off = ((b - first) % d + d) % d;
            if (off > best) best = off;
        }
    return best;
}

// v != 0, 0 <= j < d.
constexpr tree_edge tree_parent(tree_family f, int d, int j, node_id v) noexcept {
    if (f == tree_family::rotated) {
        const int u = last_offset(v, j, -1, d);
        return {(j + u) % d, u};
    }
    const node_id ej = node_id{1} << j;
    if (v == ej) return {j, 0};
    if (!(v & ej)) return {j, d};
    const int u = last_offset(v, j, j, d);
    return {(j + u) % d, u};
}

// Whether relabelled node v sends part j across dim k in step u: its
// neighbour there is a child of v in tree j that hears in step u.
constexpr bool tree_child(tree_family f, int d, int j, node_id v, int k, int u) noexcept {
    const node_id c = neighbor(v, k);
    return c != 0 && tree_parent(f, d, j, c) == tree_edge{k, u};
}

} // namespace hcube
