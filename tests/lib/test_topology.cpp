// lib/topology: the sources' Gray code table and transition sequences, then
// property checks for d = 0..20 (O(2^d) checks) and smaller d where a check
// costs O(d 2^d) or more.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include <doctest/doctest.h>
#include <hcube/topology.hpp>

using hcube::node_id;

namespace {

constexpr int max_d = 20;

// The first i in 0..n-1 for which ok(i) is false, or n: the loops below check
// millions of values and report only the first offender, with its index.
std::uint64_t first_failure(std::uint64_t n, const std::function<bool(std::uint64_t)>& ok) {
    for (std::uint64_t i = 0; i < n; ++i)
        if (!ok(i)) return i;
    return n;
}

node_id nodes(int d) {
    return node_id{1} << d;
}

} // namespace

TEST_CASE("3-bit Gray code: Mathur & Johnsson Table 1 and Grama et al. Figure 4.23") {
    // Mathur & Johnsson Table 1 lists G(0..7) = 000 001 011 010 110 111 101 100;
    // Grama et al. (4.6.2, Figure 4.23) maps ring node i to hypercube node G(i).
    const std::vector<node_id> table{0b000, 0b001, 0b011, 0b010, 0b110, 0b111, 0b101, 0b100};
    for (node_id i = 0; i < 8; ++i) {
        CAPTURE(i);
        CHECK(hcube::gray(i) == table[i]);
        CHECK(hcube::gray_inverse(table[i]) == i);
    }
    // The cycle starting at node 0 along rotation 0 visits the table in order.
    CHECK(hcube::hamiltonian_cycle(3, 0) == table);
}

TEST_CASE("3-bit transition sequence and its rotations: Mathur & Johnsson sections 3 and 4.2") {
    // "the transition sequence is 0, 1, 0, 2, 0, 1, 0 and 2" (Mathur & Johnsson).
    CHECK(hcube::transition_sequence(3) == std::vector<int>{0, 1, 0, 2, 0, 1, 0, 2});
    // The exchange sequences for locations 1 and 2 (Mathur & Johnsson 4.2) are the
    // rotations (t + i) mod d: "1, 2, 1, 0, 1, 2, 1" and "2, 0, 2, 1, 2, 0, 2".
    // The source lists the 2^d - 1 exchanges; the last entry closes the cycle.
    CHECK(hcube::rotated_transition_sequence(3, 1) == std::vector<int>{1, 2, 1, 0, 1, 2, 1, 0});
    CHECK(hcube::rotated_transition_sequence(3, 2) == std::vector<int>{2, 0, 2, 1, 2, 0, 2, 1});
    CHECK(hcube::rotated_transition_sequence(3, 0) == hcube::transition_sequence(3));
}

TEST_CASE("neighbours and Hamming distance") {
    CHECK(hcube::neighbor(0b101, 1) == 0b111);
    CHECK(hcube::neighbor(0b101, 2) == 0b001);
    CHECK(hcube::hamming(0b000, 0b111) == 3);
    CHECK(hcube::hamming(0b1010, 0b1010) == 0);
    for (int d = 0; d <= 12; ++d) {
        CAPTURE(d);
        const auto bad = first_failure(nodes(d), [d](std::uint64_t x) {
            for (int k = 0; k < d; ++k) {
                const node_id y = hcube::neighbor(node_id(x), k);
                if (y >= nodes(d) || hcube::neighbor(y, k) != x ||
                    hcube::hamming(node_id(x), y) != 1)
                    return false;
            }
            return true;
        });
        CHECK(bad == nodes(d));
    }
}

TEST_CASE("Gray code is a bijection on 0..2^d-1 and gray_inverse inverts it, d = 0..20") {
    for (int d = 0; d <= max_d; ++d) {
        CAPTURE(d);
        const node_id n = nodes(d);
        std::vector<bool> seen(n);
        const auto bad = first_failure(n, [&](std::uint64_t i) {
            const node_id g = hcube::gray(node_id(i));
            if (g >= n || seen[g]) return false;
            seen[g] = true;
            return hcube::gray_inverse(g) == i;
        });
        CHECK(bad == n);
    }
    // gray_inverse works on the full 32-bit range, not just small ids.
    std::mt19937 rng(42);
    for (int s = 0; s < 1000; ++s) {
        const node_id x = rng();
        CAPTURE(x);
        CHECK(hcube::gray_inverse(hcube::gray(x)) == x);
        CHECK(hcube::gray(hcube::gray_inverse(x)) == x);
    }
}

TEST_CASE("Gray code follows the recursive reflection of Mathur & Johnsson d = 1..20") {
    // G_{d}(i) = 0 || G_{d-1}(i) for i < 2^(d-1), 1 || G_{d-1}(2^d - 1 - i) after.
    for (int d = 1; d <= max_d; ++d) {
        CAPTURE(d);
        const node_id n = nodes(d), half = n / 2;
        const auto bad = first_failure(n, [&](std::uint64_t i) {
            const node_id expect =
                i < half ? hcube::gray(node_id(i)) : half | hcube::gray(node_id(n - 1 - i));
            return hcube::gray(node_id(i)) == expect;
        });
        CHECK(bad == n);
    }
}

TEST_CASE("consecutive Gray codes differ in one bit and the cycle closes, d = 1..20") {
    for (int d = 1; d <= max_d; ++d) {
        CAPTURE(d);
        const node_id n = nodes(d);
        const auto bad = first_failure(n, [&](std::uint64_t i) {
            const node_id next = node_id((i + 1) % n); // i = n - 1 closes the cycle
            return hcube::hamming(hcube::gray(node_id(i)), hcube::gray(next)) == 1;
        });
        CHECK(bad == n);
    }
}

TEST_CASE("transition sequence: the dimension between consecutive codes, d = 0..20") {
    CHECK(hcube::transition_sequence(0).empty());
    for (int d = 1; d <= max_d; ++d) {
        CAPTURE(d);
        const node_id n = nodes(d);
        const std::vector<int> t = hcube::transition_sequence(d);
        REQUIRE(t.size() == n);
        const auto bad = first_failure(n, [&](std::uint64_t i) {
            const node_id next = node_id((i + 1) % n);
            const node_id diff = hcube::gray(node_id(i)) ^ hcube::gray(next);
            // Independently: the ruler sequence, then d - 1 to close the cycle.
            const int ruler = i + 1 < n ? std::countr_zero(node_id(i + 1)) : d - 1;
            return t[i] >= 0 && t[i] < d && diff == node_id{1} << t[i] && t[i] == ruler &&
                   hcube::gray_transition(node_id(i), d) == t[i];
        });
        CHECK(bad == n);
    }
}

TEST_CASE("the d rotations use distinct dimensions at every step and are Hamiltonian cycles") {
    // O(d 2^d) per dimension: d up to 16.
    for (int d = 1; d <= 16; ++d) {
        CAPTURE(d);
        const node_id n = nodes(d);
        const std::vector<int> t = hcube::transition_sequence(d);
        std::vector<std::vector<int>> rot(d);
        for (int r = 0; r < d; ++r) {
            CAPTURE(r);
            rot[r] = hcube::rotated_transition_sequence(d, r);
            REQUIRE(rot[r].size() == n);
            const auto bad =
                first_failure(n, [&](std::uint64_t i) { return rot[r][i] == (t[i] + r) % d; });
            CHECK(bad == n);
        }
        const auto clash = first_failure(n, [&](std::uint64_t i) {
            node_id used = 0;
            for (int r = 0; r < d; ++r)
                used |= node_id{1} << rot[r][i];
            return std::popcount(used) == d;
        });
        CHECK(clash == n);
    }
}

TEST_CASE("hamiltonian_cycle visits every node once and closes, d = 0..14") {
    CHECK(hcube::hamiltonian_cycle(0, 0) == std::vector<node_id>{0});
    for (int d = 1; d <= 14; ++d) {
        const node_id n = nodes(d);
        for (int r = 0; r < d; ++r) {
            for (node_id start : {node_id{0}, n - 1, n / 3}) {
                CAPTURE(d);
                CAPTURE(r);
                CAPTURE(start);
                const std::vector<int> t = hcube::rotated_transition_sequence(d, r);
                const std::vector<node_id> c = hcube::hamiltonian_cycle(d, r, start);
                REQUIRE(c.size() == n);
                CHECK(c.front() == start);
                std::vector<bool> seen(n);
                const auto bad = first_failure(n, [&](std::uint64_t i) {
                    if (c[i] >= n || seen[c[i]]) return false;
                    seen[c[i]] = true;
                    // Step i follows dimension t[i]; the last step returns to the start.
                    return hcube::neighbor(c[i], t[i]) == c[(i + 1) % n];
                });
                CHECK(bad == n);
            }
        }
    }
}

namespace {

// Everything an E-cube path from `from` to `to` must satisfy (Grama et al. 4.5.3):
// one hop per differing bit, dimensions ascending, ending at the destination.
bool ecube_ok(node_id from, node_id to) {
    const std::vector<int> path = hcube::ecube_path(from, to);
    const std::vector<node_id> route = hcube::ecube_route(from, to);
    if (int(path.size()) != hcube::hamming(from, to) || route.size() != path.size() + 1)
        return false;
    if (route.front() != from || route.back() != to) return false;
    for (std::size_t h = 0; h < path.size(); ++h) {
        if (h > 0 && path[h] <= path[h - 1]) return false;
        if (((from ^ to) >> path[h] & 1) == 0) return false;
        if (route[h + 1] != hcube::neighbor(route[h], path[h])) return false;
    }
    return true;
}

} // namespace

TEST_CASE("E-cube paths: length = Hamming distance, ascending dimensions, reach the destination") {
    // Grama et al. 4.5.3: the first link is in the dimension of the least
    // significant bit of i XOR j, and so on upwards.
    CHECK(hcube::ecube_path(0b010, 0b111) == std::vector<int>{0, 2});
    CHECK(hcube::ecube_route(0b010, 0b111) == std::vector<node_id>{0b010, 0b011, 0b111});
    CHECK(hcube::ecube_path(5, 5).empty());
    CHECK(hcube::ecube_route(5, 5) == std::vector<node_id>{5});

    // Every pair for d <= 8, random pairs up to d = 20.
    for (int d = 0; d <= 8; ++d) {
        CAPTURE(d);
        const node_id n = nodes(d);
        const auto bad = first_failure(std::uint64_t(n) * n, [n](std::uint64_t ij) {
            return ecube_ok(node_id(ij / n), node_id(ij % n));
        });
        CHECK(bad == std::uint64_t(n) * n);
    }
    std::mt19937 rng(7);
    for (int d = 9; d <= max_d; ++d) {
        CAPTURE(d);
        std::uniform_int_distribution<node_id> id(0, nodes(d) - 1);
        const auto bad =
            first_failure(2000, [&](std::uint64_t) { return ecube_ok(id(rng), id(rng)); });
        CHECK(bad == 2000);
    }
}

TEST_CASE("Gray-code ring embedding: ring distance 2^i is 2 hypercube links, 1 for i = 0") {
    // Grama et al. 4.6.2: the property the hypercube circular shift relies on.
    for (int d = 2; d <= 12; ++d) {
        CAPTURE(d);
        const node_id n = nodes(d);
        const auto bad = first_failure(n, [&](std::uint64_t x) {
            for (int i = 0; i < d; ++i) {
                const node_id y = node_id((x + (node_id{1} << i)) % n);
                const int links = hcube::hamming(hcube::gray(node_id(x)), hcube::gray(y));
                if (links != (i == 0 ? 1 : 2)) return false;
            }
            return true;
        });
        CHECK(bad == n);
    }
}

TEST_CASE("E-cube routes of a circular q-shift are congestion-free (Grama et al. Problem 4.22)") {
    // Node i sends to (i + q) mod p in binary labels; no directed link may carry
    // two of the p paths. d <= 8, every q.
    for (int d = 0; d <= 8; ++d) {
        const node_id n = nodes(d);
        for (node_id q = 0; q < n; ++q) {
            CAPTURE(d);
            CAPTURE(q);
            std::vector<bool> used(std::size_t(n) *
                                   std::max(d, 1)); // link x -> x ^ 2^k at x * d + k
            const auto bad = first_failure(n, [&](std::uint64_t i) {
                const auto route = hcube::ecube_route(node_id(i), node_id((i + q) % n));
                const auto path = hcube::ecube_path(node_id(i), node_id((i + q) % n));
                for (std::size_t h = 0; h < path.size(); ++h) {
                    const std::size_t link = std::size_t(route[h]) * d + path[h];
                    if (used[link]) return false;
                    used[link] = true;
                }
                return true;
            });
            CHECK(bad == n);
        }
    }
}
