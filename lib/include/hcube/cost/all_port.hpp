// Closed-form virtual times of the all-port collectives of Grama et al. 4.7.2
// (collectives/all_port.hpp), exact for any m (tests/allport assert equality).
// 4.7.2: under all-port "the coefficients of t_w ... of one-to-all and
// all-to-all broadcast and personalized communication are all smaller than
// their single-port counterparts by a factor of log p" (Johnsson and Ho 1989).
//
// A message of m words is split into d = log p parts of ceil(m/d) or
// floor(m/d) words (blocks.hpp's block_of: the first m mod d parts are the
// longer). Every form below is the tree or exchange of part 0, the longest,
// step after step: no chain of messages is longer (each step's messages wait
// only for earlier steps', and part 0 is on the critical path in every step).
#pragma once

#include <cstddef>
#include <cstdint>

#include <hcube/spanning_trees.hpp>

namespace hcube::cost {

// Words of the longest of d parts of m words: ceil(m / d).
constexpr double longest_part(int d, double m) noexcept {
    const auto words = std::uint64_t(m), parts = std::uint64_t(d);
    return double((words + parts - 1) / parts);
}

// Broadcast, or a reduction with a commutative operator, over the d trees of
// `f` (spanning_trees.hpp): one step per level of the trees, each moving one
// part on every link in use.
//   rotated:        d (t_s + t_w ceil(m/d))          = d t_s + t_w m when d | m
//   edge-disjoint:  (d+1)(t_s + t_w ceil(m/d))       (d >= 2; d = 1: t_s + t_w m)
// Single-port (Eq. 4.1): (t_s + t_w m) log p. The source's claim, t_w m, is
// reached by the rotated trees; the edge-disjoint ones pay one more step,
// t_w m (1 + 1/log p), for the edges they never share (they are what a
// pipelined broadcast of many packets needs).
constexpr double rooted_trees(tree_family f, int d, double m, double t_s, double t_w) noexcept {
    if (d == 0 || m == 0) return 0;
    return tree_steps(f, d) * (t_s + t_w * longest_part(d, m));
}

// Scatter or gather of m words per node over the d rotated trees: part j of
// every block travels in tree j, whose step-u messages carry the parts of a
// 2^(d-1-u)-node subtree.
//   d t_s + t_w (p-1) ceil(m/d)                      = d t_s + t_w m (p-1)/log p when d | m
// Single-port (Eq. 4.6): t_s log p + t_w m (p-1).
constexpr double scatter_trees(int d, double m, double t_s, double t_w) noexcept {
    if (d == 0 || m == 0) return 0;
    const double p = double(std::int64_t{1} << d);
    return d * t_s + t_w * (p - 1) * longest_part(d, m);
}

// All-to-all personalized communication, dimension exchange on all links at
// once: part j of every block follows Eq. 4.9's exchanges in the dimension
// order j, j+1, ..., j+d-1 (mod d), so every step exchanges p/2 part-blocks on
// each of the d links.
//   d (t_s + t_w (p/2) ceil(m/d))                    = d t_s + t_w m p/2 when d | m
// Single-port: Eq. 4.9 (t_s + t_w m p/2) log p, Eq. 4.10 (t_s + t_w m)(p-1).
// t_w m p/2 is the least any all-port schedule can reach: a node's distances
// to the others sum to d p/2, so the p d links carry p m d p/2 word-hops in
// all, m p/2 per link. Against
// pairwise exchange's m (p-1) that is a factor 2 (p-1)/p, not log p / 2.
constexpr double alltoall_all_port(int d, double m, double t_s, double t_w) noexcept {
    if (d == 0 || m == 0) return 0;
    const double p = double(std::int64_t{1} << d);
    return d * (t_s + t_w * (p / 2) * longest_part(d, m));
}

// All-reduce of n words by reduce-scatter then allgather along the d
// rotated Hamiltonian cycles (Mathur & Johnsson 4.2), blocks of B = ceil(n/p):
//   2 (p-1)(t_s + t_w ceil(B/d))   (commutative op)
// Single-port Eq. 4.14: 2 (t_s log p + t_w (p-1) n/p). The t_w coefficient
// is log p smaller (2 (p-1) n/(p log p) when p log p divides n), the t_s
// term grows from 2 log p to 2 (p-1): it wins for large n.
constexpr double allreduce_d_cycles(int d, double n, double t_s, double t_w) noexcept {
    if (d == 0 || n == 0) return 0;
    const auto p = std::uint64_t(1) << d, block = (std::uint64_t(n) + p - 1) / p;
    return 2 * double(p - 1) * (t_s + t_w * longest_part(d, double(block)));
}

} // namespace hcube::cost
