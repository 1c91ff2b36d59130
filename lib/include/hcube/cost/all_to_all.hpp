// Closed-form costs of all-to-all broadcast (allgather), all-to-all reduction
// (reduce-scatter), all-reduce and prefix sums on a p = 2^d node hypercube
// under the single-port model (Grama et al. 4.2, 4.3, 4.7.1 and Table 4.1).
// Standard library only: the CLI, the catalog, the collectives (for `automatic`)
// and the tests all read the same numbers.
//
// Units: t_s and t_w are the cost model's start-up and per-word times; m is in
// words: a node's contribution for allgather, a node's result block for
// reduce-scatter, the whole message for all-reduce and the scans.
// Every form below is the exact virtual time of the matching algorithm in
// collectives/ (tests/reductions assert equality for d = 0..8).
#pragma once

#include <cstdint>

namespace hcube::cost {

// p as a double.
constexpr double all_to_all_nodes(int d) noexcept {
    return double(std::int64_t{1} << d);
}

// Alg. 4.7, Eq. 4.4: log p exchanges of m, 2m, 4m, ... words.
constexpr double allgather_hypercube(int d, double m, double t_s, double t_w) noexcept {
    return t_s * d + t_w * m * (all_to_all_nodes(d) - 1);
}

// Alg. 4.4 on the Gray-code ring, Eq. 4.2: p - 1 steps of m words.
constexpr double allgather_ring(int d, double m, double t_s, double t_w) noexcept {
    return (t_s + t_w * m) * (all_to_all_nodes(d) - 1);
}

// Alg. 4.6 on the Gray-code embedded sqrt(p) x sqrt(p) torus (d even), Eq. 4.3:
// sqrt(p) - 1 row steps of m words, then sqrt(p) - 1 column steps of m sqrt(p).
constexpr double allgather_mesh(int d, double m, double t_s, double t_w) noexcept {
    const double side = double(std::int64_t{1} << (d / 2));
    return 2 * t_s * (side - 1) + t_w * m * (all_to_all_nodes(d) - 1);
}

// Alg. 4.8 (dimensions in ascending order): the dual of Alg. 4.7, same cost.
constexpr double reduce_scatter_hypercube(int d, double m, double t_s, double t_w) noexcept {
    return allgather_hypercube(d, m, t_s, t_w);
}

// Alg. 4.5 on the Gray-code ring with a commutative operator: the dual of
// Alg. 4.4, same cost (Eq. 4.2).
constexpr double reduce_scatter_ring(int d, double m, double t_s, double t_w) noexcept {
    return allgather_ring(d, m, t_s, t_w);
}

// Alg. 4.5 with an operator that is not known to commute: no ring schedule of
// p - 1 one-block messages can keep node order (the partial that reaches node
// t must cover ids 0..t-1 and t+1..p-1 at once), so each message carries a
// left and a right partial (2m words) around the ring in node-id order, whose
// neighbours id - 1 are reached by congestion-free E-cube routed messages
// (4.6.2, Problem 4.22): p - 1 steps of 2m words.
constexpr double reduce_scatter_ring_ordered(int d, double m, double t_s, double t_w) noexcept {
    return (t_s + 2 * t_w * m) * (all_to_all_nodes(d) - 1);
}

// 4.3, Eq. 4.5: Alg. 4.7's pattern with the whole m-word message each step.
constexpr double allreduce_hypercube(int d, double m, double t_s, double t_w) noexcept {
    return (t_s + t_w * m) * d;
}

// allgather_blocks and reduce_scatter_blocks (hypercube) over n elements in
// total, split by block_of (blocks.hpp): the first r = n mod p blocks hold
// q + 1 elements, the rest q = n / p. The exchanges are pairwise and each
// step's largest one waits for the previous step's, so the time is the sum
// over the log p steps of t_s + t_w (the step's largest message); tests check
// the equality for d = 0..8. Allgather step i (dimension i) moves 2^i
// consecutive blocks; blocks 0 .. 2^i - 1 hold the most long ones, min(r, 2^i).
// Reduce-scatter step i moves the p/2^(i+1) blocks whose index agrees with the
// receiver's in bits 0..i; node 0 gets the most long ones, ceil(r / 2^(i+1)).
// Both equal Eq. 4.4 with m = n/p when p divides n.
constexpr double allgather_hypercube_blocks(int d, double n, double t_s, double t_w) noexcept {
    const std::int64_t p = std::int64_t{1} << d, q = std::int64_t(n) / p, r = std::int64_t(n) % p;
    double t = 0;
    for (int i = 0; i < d; ++i) {
        const std::int64_t held = std::int64_t{1} << i;
        t += t_s + t_w * double(held * q + (r < held ? r : held));
    }
    return t;
}
constexpr double reduce_scatter_hypercube_blocks(int d, double n, double t_s, double t_w) noexcept {
    const std::int64_t p = std::int64_t{1} << d, q = std::int64_t(n) / p, r = std::int64_t(n) % p;
    double t = 0;
    for (int i = 0; i < d; ++i) {
        const std::int64_t span = std::int64_t{2} << i;
        t += t_s + t_w * double((p / span) * q + (r + span - 1) / span);
    }
    return t;
}

// 4.7.1, Eq. 4.14: reduce-scatter then allgather (both hypercube) of blocks of
// m/p words: 2(t_s log p + t_w (p-1) m/p) when p divides m; exact for any m.
constexpr double allreduce_reduce_scatter_allgather(int d, double m, double t_s,
                                                    double t_w) noexcept {
    return reduce_scatter_hypercube_blocks(d, m, t_s, t_w) +
           allgather_hypercube_blocks(d, m, t_s, t_w);
}

// All-to-one reduction then one-to-all broadcast, both binomial (Alg. 4.3 and
// Alg. 4.1): 2 (t_s + t_w m) log p.
constexpr double allreduce_reduce_broadcast(int d, double m, double t_s, double t_w) noexcept {
    return 2 * (t_s + t_w * m) * d;
}

// Alg. 4.9: log p exchanges of the m-word outgoing buffer (inclusive and
// exclusive alike).
constexpr double scan_hypercube(int d, double m, double t_s, double t_w) noexcept {
    return (t_s + t_w * m) * d;
}

} // namespace hcube::cost
