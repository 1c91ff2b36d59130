// Hypercube mathematics, no threads: node ids, neighbours, the binary-reflected
// Gray code, its transition sequence and the d rotated Hamiltonian cycles, and
// E-cube paths. Grama et al. (4.5.3 E-cube routing, 4.6.2 Gray-code embedding) and
// Mathur & Johnsson (4.2: the d Hamiltonian cycles of Johnsson and Ho).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace hcube {

using node_id = std::uint32_t;

constexpr node_id neighbor(node_id x, int k) noexcept {
    return x ^ (node_id{1} << k);
}
constexpr int hamming(node_id a, node_id b) noexcept {
    return std::popcount(a ^ b);
}

// Binary-reflected Gray code G(i) = i ^ (i >> 1) and its inverse.
constexpr node_id gray(node_id i) noexcept {
    return i ^ (i >> 1);
}
constexpr node_id gray_inverse(node_id g) noexcept {
    for (node_id shift = 1; shift < 32; shift <<= 1)
        g ^= g >> shift;
    return g;
}

// The dimension in which G(i) and G(i+1) differ, for i = 0 .. 2^d - 1; the last
// step (i = 2^d - 1) closes the cycle back to G(0) across dimension d - 1.
constexpr int gray_transition(node_id i, int d) noexcept {
    const node_id next = (i + 1) & ((node_id{1} << d) - 1);
    return std::countr_zero(gray(i) ^ gray(next));
}

// The transition sequence t_0 .. t_{2^d - 1} of the d-bit Gray code cycle.
std::vector<int> transition_sequence(int d);

// Rotation r of the transition sequence: every entry t becomes (t + r) mod d.
// The d rotations are d Hamiltonian cycles that use distinct dimensions at
// every step (Mathur & Johnsson section 4.2).
std::vector<int> rotated_transition_sequence(int d, int r);

// The nodes of the Hamiltonian cycle that starts at `start` and follows the
// rotation r of the transition sequence.
std::vector<node_id> hamiltonian_cycle(int d, int r, node_id start = 0);

// E-cube path from i to j: the dimensions in which they differ, ascending.
std::vector<int> ecube_path(node_id from, node_id to);

// The nodes visited along the E-cube path, from `from` to `to` inclusive.
std::vector<node_id> ecube_route(node_id from, node_id to);

} // namespace hcube
