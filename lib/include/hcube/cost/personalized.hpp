// Closed-form costs of all-to-all personalized communication and circular
// shift on a p = 2^d node hypercube (Grama et al. 4.5 and 4.6), plus the shift
// plans whose step counts those forms count. Standard library only: the CLI,
// the catalog, the collectives and the tests all read the same numbers.
//
// Units: t_s and t_w are the cost model's start-up and per-word times, m is a
// message size in words (an alltoall block, a shift packet).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace hcube::cost {

// 4.5.3, Eq. 4.9: log p exchanges of m p/2 words.
constexpr double alltoall_dimension_exchange(double t_s, double t_w, int d, double m) {
    const double p = double(std::int64_t{1} << d);
    return (t_s + t_w * m * p / 2) * d;
}

// 4.5.3, Alg. 4.10, Eq. 4.10: p - 1 congestion-free E-cube routed exchanges.
constexpr double alltoall_pairwise(double t_s, double t_w, int d, double m) {
    const double p = double(std::int64_t{1} << d);
    return (t_s + t_w * m) * (p - 1);
}

// 4.5.1, Eq. 4.7: p - 1 ring steps of m(p-1), m(p-2), ..., m words.
constexpr double alltoall_ring(double t_s, double t_w, int d, double m) {
    const double p = double(std::int64_t{1} << d);
    return (t_s + t_w * m * p / 2) * (p - 1);
}

// q reduced to 0 .. p-1 (negative shifts and q >= p wrap around).
constexpr std::int64_t shift_mod(int d, long long q) {
    const std::int64_t p = std::int64_t{1} << d;
    return ((q % p) + p) % p;
}

// Steps of one phase of the Gray-code shift (4.6.2): array positions 2^b
// apart sit two hypercube links apart, except neighbours (b = 0), one link.
constexpr int shift_phase_steps(long long offset) {
    return offset == 1 || offset == -1 ? 1 : 2;
}

// The phases (signed powers of two, in execution order) that the 4.6.2 shift
// performs for a q-shift.
//  forward only (`gray`): the set bits of q, highest first (Figure 4.23 does
//    a 5-shift as a 4-shift then a 1-shift);
//  bidirectional (`gray-bidirectional`): a signed-digit form of q mod p with
//    the fewest steps (a digit at 2^0 costs 1 step, any other 2), e.g. a
//    6-shift on 8 nodes is one backward 2-shift. Ties keep the forward digit.
inline std::vector<long long> shift_phases(int d, long long q, bool bidirectional) {
    const std::int64_t r = shift_mod(d, q);
    std::vector<long long> out;
    if (!bidirectional) {
        for (int b = d - 1; b >= 0; --b)
            if (r >> b & 1) out.push_back(1LL << b);
        return out;
    }
    // best[b][c]: fewest steps for bits b.. of r plus an incoming carry c
    // (a carry out of bit d - 1 vanishes mod p); digit[b][c]: the digit taken.
    std::vector<std::array<int, 2>> best(d + 1, {0, 0}), digit(d + 1, {0, 0});
    for (int b = d - 1; b >= 0; --b)
        for (int c = 0; c < 2; ++c) {
            const int t = int(r >> b & 1) + c, cost = b == 0 ? 1 : 2;
            const auto& next = best[b + 1];
            if (t != 1) // nothing to send at this bit; 2 carries on
                best[b][c] = next[t == 2], digit[b][c] = 0;
            else if (next[0] <= next[1]) // forward 2^b clears the bit
                best[b][c] = cost + next[0], digit[b][c] = 1;
            else // backward 2^b turns the bit into a carry
                best[b][c] = cost + next[1], digit[b][c] = -1;
        }
    for (int b = 0, c = 0; b < d; ++b) {
        const int t = int(r >> b & 1) + c, dig = digit[b][c];
        if (dig != 0) out.push_back(dig * (1LL << b));
        c = t - dig == 2;
    }
    // Highest phase first, as in the forward plan.
    return {out.rbegin(), out.rend()};
}

constexpr int shift_gray_steps(int d, long long q) {
    const std::int64_t r = shift_mod(d, q);
    return 2 * std::popcount(std::uint64_t(r)) - int(r & 1);
}

inline int shift_gray_bidirectional_steps(int d, long long q) {
    int steps = 0;
    for (long long off : shift_phases(d, q, true))
        steps += shift_phase_steps(off);
    return steps;
}

// Eq. 4.11's bound, 2 log p - 1 steps (0 for the one-node cube), and the
// bidirectional bound log p.
constexpr int shift_gray_bound_steps(int d) {
    return d == 0 ? 0 : 2 * d - 1;
}
constexpr int shift_gray_bidirectional_bound_steps(int d) {
    return d;
}

// Eq. 4.11 for the steps actually taken, and the bound itself.
constexpr double shift_gray(double t_s, double t_w, int d, double m, long long q) {
    return (t_s + t_w * m) * shift_gray_steps(d, q);
}
inline double shift_gray_bidirectional(double t_s, double t_w, int d, double m, long long q) {
    return (t_s + t_w * m) * shift_gray_bidirectional_steps(d, q);
}

// Largest number of E-cube paths of one q-shift that share a directed link.
//  Node ids (i -> i + q mod p): 1, Problem 4.22 (congestion-free), 0 for q = 0.
//  Gray-code array (node gray(r) -> gray(r + q)): 1 when q = +-2^b mod p (the
//  two-link Gray paths of 4.6.2 are disjoint), otherwise 2 (checked against
//  an explicit path count for d <= 8 in tests/personalized/cost.cpp).
constexpr int shift_ecube_link_load(int d, long long q, bool gray_ring) {
    const std::int64_t r = shift_mod(d, q);
    if (r == 0) return 0;
    if (!gray_ring) return 1;
    const std::int64_t back = (std::int64_t{1} << d) - r;
    return std::has_single_bit(std::uint64_t(r)) || std::has_single_bit(std::uint64_t(back)) ? 1
                                                                                             : 2;
}

// Eq. 4.12: one routed step, t_s + t_w m, when the paths are congestion-free
// (0 for a 0-shift).
constexpr double shift_ecube(double t_s, double t_w, int d, double m, long long q) {
    return shift_mod(d, q) == 0 ? 0.0 : t_s + t_w * m;
}

// What the emulator's router makes of it, at least: the L paths that want one
// link are served one after the other, L(t_s + t_w m). Ring id: Eq. 4.12.
// (Ring gray: a delayed path can delay another one in turn, up to 4 times
// t_s + t_w m for d <= 10; exactly L when each conflict involves two paths.)
constexpr double shift_ecube_time(double t_s, double t_w, int d, double m, long long q,
                                  bool gray_ring) {
    return shift_ecube_link_load(d, q, gray_ring) * (t_s + t_w * m);
}

} // namespace hcube::cost
