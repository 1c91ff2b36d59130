// Closed-form costs of all-to-some personalized communication and of the
// +-2^b-descend schedules (Hu), on an n-cube, N = 2^n nodes. Times
// under the t_s + t_w m model; "steps" are the same with t_s = 1, t_w = 0.
// Standard library only: the catalog, the collectives and the tests read the
// same numbers.
//
// Units: w is an ASPC element's size in words; a descend element is one word
// (a message of k elements has k words); M is the descend problem size and
// L = M / N the elements per node.
#pragma once

#include <bit>
#include <cstdint>

namespace hcube::cost {

// --- ASPC -------------------------------------------------------------------

// All-port, Theorem 5: each half takes 2 steps (1 for n = 1, where j = 0 only).
constexpr int aspc_all_port_steps(int n) noexcept {
    return n <= 0 ? 0 : n == 1 ? 2 : 4;
}
// 4 (t_s + t_w w) for n >= 2.
constexpr double aspc_all_port(int n, double w, double t_s, double t_w) noexcept {
    return aspc_all_port_steps(n) * (t_s + t_w * w);
}

// Single-port: the same routes one link per step, n + (n - 1) steps per half.
constexpr int aspc_single_port_steps(int n) noexcept {
    return n <= 0 ? 0 : 4 * n - 2;
}
// (4n - 2)(t_s + t_w w).
constexpr double aspc_single_port(int n, double w, double t_s, double t_w) noexcept {
    return aspc_single_port_steps(n) * (t_s + t_w * w);
}

// --- +-2^b-descend ----------------------------------------------------------

constexpr int log2_exact(std::uint64_t x) noexcept {
    return std::countr_zero(x);
}

// The source's counts (section 4), inter-node communication steps:
//   direct     2 log N M/N
//   pipelined  4 (log M + M/N - 1)
constexpr std::int64_t descend_direct_paper_steps(int n, std::uint64_t M) noexcept {
    return 2 * std::int64_t(n) * std::int64_t(M >> n);
}
constexpr std::int64_t descend_pipelined_paper_steps(int n, std::uint64_t M) noexcept {
    return 4 * (log2_exact(M) + std::int64_t(M >> n) - 1);
}

// The exact counts of collectives/descend.hpp (n >= 2, M >= N, L = M / N):
//   local stage (both schedules): log L boundary exchanges with the two
//     neighbouring logical nodes, one step each (two links at once);
//   direct: each inter-node iteration fetches both partners of each of the L
//     elements in one ASPC route pair, 2 steps, but 1 step in the iteration
//     whose partners are adjacent nodes (c = 0: one link, Theorem 1):
//       (2n - 1) L + log L               (the source: 2 n L, local stage not counted)
//   pipelined: L + n - 1 ASPC rounds of 4 steps, except the last round, whose
//     only slot is c = 0 (1 step per half):
//       4 (L + n - 1) - 2 + log L        (the source: 4 (L + n - 1) + 4 log L,
//                                         a full ASPC per local iteration)
constexpr std::int64_t descend_local_steps(int n, std::uint64_t M) noexcept {
    return log2_exact(M >> n);
}
constexpr std::int64_t descend_direct_steps(int n, std::uint64_t M) noexcept {
    return (2 * std::int64_t(n) - 1) * std::int64_t(M >> n) + descend_local_steps(n, M);
}
constexpr std::int64_t descend_pipelined_steps(int n, std::uint64_t M) noexcept {
    return 4 * (std::int64_t(M >> n) + n - 1) - 2 + descend_local_steps(n, M);
}

// Times: inter-node messages carry one element; the local exchange of
// iteration b carries 2^b, so the local stage adds t_s log L + t_w (L - 1).
constexpr double descend_local_time(int n, std::uint64_t M, double t_s, double t_w) noexcept {
    return t_s * double(descend_local_steps(n, M)) + t_w * double((M >> n) - 1);
}
constexpr double descend_direct(int n, std::uint64_t M, double t_s, double t_w) noexcept {
    return double(descend_direct_steps(n, M) - descend_local_steps(n, M)) * (t_s + t_w) +
           descend_local_time(n, M, t_s, t_w);
}
constexpr double descend_pipelined(int n, std::uint64_t M, double t_s, double t_w) noexcept {
    return double(descend_pipelined_steps(n, M) - descend_local_steps(n, M)) * (t_s + t_w) +
           descend_local_time(n, M, t_s, t_w);
}

// Single-port (one send and one receive per node at a time): every message
// of a step goes out one after the other, and both schedules send the same
// messages (each element's two partners over two links, one link when c = 0;
// two boundary messages per local iteration), so pipelining gains nothing and
// both take twice the direct all-port time:
//   2 ((2n - 1) L (t_s + t_w) + t_s log L + t_w (L - 1))
constexpr std::int64_t descend_single_port_steps(int n, std::uint64_t M) noexcept {
    return 2 * descend_direct_steps(n, M);
}
constexpr double descend_single_port(int n, std::uint64_t M, double t_s, double t_w) noexcept {
    return 2 * descend_direct(n, M, t_s, t_w);
}

} // namespace hcube::cost
