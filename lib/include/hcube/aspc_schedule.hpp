// Hu's all-to-some personalized communication (ASPC) schedule, Hu: the
// pattern (i|j) -> (i +- 2^j | j) on a Boolean n-cube, element j of logical
// node i moving to logical node i +- 2^j (mod 2^n), where logical node i lives
// on physical node G(i), the binary-reflected Gray code of i (section 3).
//
// Every element then crosses two links (one when j = 0, Theorem 1), and the
// tables below route all of them in 2 all-port steps per half:
//
//   plus half   step 1: node i sends element j on link phi_i(j), j = 0..n-1
//               step 2: node i forwards what came for location j, j = 1..n-1,
//                       on link phi_i(j)
//   minus half  the same with phi-bar; receives come from the other table
//               (Theorem 3: the incoming table of phi is phi-bar, and the
//               incoming table of phi-bar is phi).
//
// Standard library only; "logical" and "physical" ids are both node_id.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include <hcube/topology.hpp>

namespace hcube::aspc_schedule {

// Logical node i sits on physical node G(i) (section 3), and back.
constexpr node_id physical_of(node_id logical) noexcept {
    return gray(logical);
}
constexpr node_id logical_of(node_id physical) noexcept {
    return gray_inverse(physical);
}

// H_n(i), the circular transition sequence of the n-bit Gray code (2.2,
// H_n = T_n o (n-1)): the bit in which G(i) and G(i+1) differ. Lemma 1: the
// number of trailing ones of i; the wrap-around entry H_n(2^n - 1) is n - 1.
// i is taken modulo 2^n, so negative arguments of Definition 2 work.
constexpr int H(int n, std::int64_t i) noexcept {
    if (n <= 0) return 0;
    const std::uint64_t r = std::uint64_t(i) & ((std::uint64_t{1} << n) - 1);
    const int ones = std::countr_one(r);
    return ones < n ? ones : n - 1;
}

// Definition 1: the outgoing table of the plus half, (i|j) -> (i + 2^j | j):
//   phi_i(j) = H_n(floor(i / 2^(j-1)) 2^(j-1) + 2^j - 1),  j > 0
//   phi_i(0) = H_n(i)                                      (Theorem 1, j = 0)
// phi_i(j) is the second of the two Gray-code bits between i and i + 2^j; for
// fixed i the n entries are distinct (Lemma 5).
constexpr int phi(int n, node_id i, int j) noexcept {
    if (j == 0) return H(n, i);
    const std::int64_t h = std::int64_t{1} << (j - 1);
    return H(n, std::int64_t(i) / h * h + 2 * h - 1);
}

// Definition 2: the outgoing table of the minus half, (i|j) -> (i - 2^j | j):
//   phi-bar_i(j) = H_n(floor(i / 2^(j-1)) 2^(j-1) - 2^(j-1) - 1),  j > 0
//   phi-bar_i(0) = H_n(i - 1)
// Lemma 9: phi-bar_i(j) = phi_(2^n - 1 - i)(j) (the source's text garbles the
// index; tests/aspc checks this form for every i, j, n <= 10).
constexpr int phi_bar(int n, node_id i, int j) noexcept {
    if (j == 0) return H(n, std::int64_t(i) - 1);
    const std::int64_t h = std::int64_t{1} << (j - 1);
    return H(n, std::int64_t(i) / h * h - h - 1);
}

// Definition 3 and Theorem 3: the incoming table of the plus half, the link on
// which location j of node i arrives (in both steps); it equals phi-bar.
constexpr int phi_in(int n, node_id i, int j) noexcept {
    return phi_bar(n, i, j);
}

// Links of one half: `plus` selects (i|j) -> (i + 2^j | j).
constexpr int out_link(int n, node_id i, int j, bool plus) noexcept {
    return plus ? phi(n, i, j) : phi_bar(n, i, j);
}
constexpr int in_link(int n, node_id i, int j, bool plus) noexcept {
    return plus ? phi_bar(n, i, j) : phi(n, i, j);
}

// i^k: the logical node across physical link k from logical node i,
// gray_inverse(G(i) xor 2^k). Lemma 8's closed form: i reflected within its
// aligned block of 2^(k+1) logical nodes.
constexpr node_id across(node_id i, int k) noexcept {
    const node_id size = node_id{2} << k;
    return i / size * size + size - 1 - i % size;
}

// The logical nodes element (i|j) visits in its half (Theorem 5's route):
// i, i^phi_i(j), and for j > 0 the second hop; the last one is i +- 2^j.
inline std::vector<node_id> route(int n, node_id i, int j, bool plus) {
    std::vector<node_id> r{i, across(i, out_link(n, i, j, plus))};
    if (j > 0) r.push_back(across(r[1], out_link(n, r[1], j, plus)));
    return r;
}

// The table as printed in the source (Tables 1 and 2): row j, column i.
inline std::vector<std::vector<int>> table(int n, bool plus) {
    std::vector<std::vector<int>> t(std::size_t(n), std::vector<int>(std::size_t(1) << n));
    for (int j = 0; j < n; ++j)
        for (node_id i = 0; i < (node_id{1} << n); ++i)
            t[j][i] = out_link(n, i, j, plus);
    return t;
}

// Links all 2 n 2^n elements must cross: one for j = 0, two for j > 0, twice
// (both halves): 2 (1 + 2 (n - 1)) 2^n.
constexpr std::int64_t link_crossings(int n) noexcept {
    return n <= 0 ? 0 : 2 * (1 + 2 * std::int64_t(n - 1)) << n;
}

// Theorem 2: all-port ASPC needs at least ceil(crossings / (n 2^n)) steps,
// which is 4 for n > 2 (3 for n = 2, 2 for n = 1).
constexpr int lower_bound_steps(int n) noexcept {
    if (n <= 0) return 0;
    const std::int64_t links = std::int64_t(n) << n;
    return int((link_crossings(n) + links - 1) / links);
}

// The same count when a node sends on one link per step (single-port): every
// node starts 2 (1 + 2 (n - 1)) = 4n - 2 link crossings, one per step.
constexpr int single_port_lower_bound_steps(int n) noexcept {
    return n <= 0 ? 0 : 2 * (1 + 2 * (n - 1));
}

} // namespace hcube::aspc_schedule
