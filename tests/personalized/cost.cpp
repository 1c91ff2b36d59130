// The closed forms of lib/include/hcube/cost/personalized.hpp: the source's
// equations at worked values, Table 4.1, and the shift plans and link loads
// checked against explicit enumeration.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <hcube/cost/personalized.hpp>
#include <hcube/topology.hpp>

using namespace hcube;

TEST_CASE("Eq. 4.7, 4.9, 4.10 at worked values") {
    // p = 8, m = 2, t_s = 10, t_w = 1.
    CHECK(cost::alltoall_ring(10, 1, 3, 2) == (10 + 2 * 8 / 2) * 7);               // 126
    CHECK(cost::alltoall_dimension_exchange(10, 1, 3, 2) == (10 + 2 * 8 / 2) * 3); // 54
    CHECK(cost::alltoall_pairwise(10, 1, 3, 2) == (10 + 2) * 7);                   // 84
    // Eq. 4.7 is the sum of its p - 1 ring steps.
    double sum = 0;
    for (int i = 1; i < 8; ++i)
        sum += 10 + 1 * 2 * (8 - i);
    CHECK(cost::alltoall_ring(10, 1, 3, 2) == sum);
    // One node: nothing to do.
    CHECK(cost::alltoall_dimension_exchange(10, 1, 0, 5) == 0);
    CHECK(cost::alltoall_pairwise(10, 1, 0, 5) == 0);
    CHECK(cost::alltoall_ring(10, 1, 0, 5) == 0);
}

TEST_CASE("4.5.3: t_s favours dimension exchange, t_w favours pairwise") {
    for (int d = 2; d <= 10; ++d) {
        CHECK(cost::alltoall_dimension_exchange(100, 1, d, 1) <
              cost::alltoall_pairwise(100, 1, d, 1));
        CHECK(cost::alltoall_pairwise(1, 1, d, 1000) <
              cost::alltoall_dimension_exchange(1, 1, d, 1000));
        // The ring is never cheaper than dimension exchange on a hypercube.
        CHECK(cost::alltoall_ring(1, 1, d, 7) >= cost::alltoall_dimension_exchange(1, 1, d, 7));
    }
}

TEST_CASE("Table 4.1: all-to-all personalized (t_s + t_w m)(p-1), circular shift t_s + t_w m") {
    CHECK(cost::alltoall_pairwise(3, 2, 5, 7) == (3 + 2 * 7) * 31);
    for (long long q = 1; q < 32; ++q)
        CHECK(cost::shift_ecube(3, 2, 5, 7, q) == 3 + 2 * 7);
    CHECK(cost::shift_ecube(3, 2, 5, 7, 0) == 0);
    CHECK(cost::shift_ecube(3, 2, 5, 7, 32) == 0);
}

TEST_CASE("shift_mod: negative q and q >= p wrap") {
    CHECK(cost::shift_mod(3, -1) == 7);
    CHECK(cost::shift_mod(3, 13) == 5);
    CHECK(cost::shift_mod(3, -16) == 0);
    CHECK(cost::shift_mod(0, 5) == 0);
}

TEST_CASE("shift phases add up to q mod p; their steps match the step counts") {
    for (int d = 0; d <= 10; ++d) {
        const long long p = 1LL << d;
        int worst_fwd = 0, worst_bi = 0;
        for (long long q = -3; q < p + 3; ++q) {
            for (bool bi : {false, true}) {
                const std::vector<long long> ph = cost::shift_phases(d, q, bi);
                long long sum = 0;
                int steps = 0;
                for (long long o : ph) {
                    CHECK(std::has_single_bit(std::uint64_t(o < 0 ? -o : o)));
                    sum += o, steps += cost::shift_phase_steps(o);
                }
                INFO("d=", d, " q=", q, " bidirectional=", bi);
                CHECK(cost::shift_mod(d, sum) == cost::shift_mod(d, q));
                CHECK(steps == (bi ? cost::shift_gray_bidirectional_steps(d, q)
                                   : cost::shift_gray_steps(d, q)));
                // Highest phase first, every power used once.
                for (std::size_t i = 1; i < ph.size(); ++i)
                    CHECK(std::abs(ph[i]) < std::abs(ph[i - 1]));
            }
            worst_fwd = std::max(worst_fwd, cost::shift_gray_steps(d, q));
            worst_bi = std::max(worst_bi, cost::shift_gray_bidirectional_steps(d, q));
        }
        // Eq. 4.11's 2 log p - 1 and the text's log p are both reached.
        CHECK(worst_fwd == cost::shift_gray_bound_steps(d));
        CHECK(worst_bi == cost::shift_gray_bidirectional_bound_steps(d));
    }
}

TEST_CASE("shift gray-bidirectional is optimal among signed-digit plans") {
    // Brute force over every digit vector in {-1, 0, 1}^d for small d.
    for (int d = 1; d <= 6; ++d) {
        const long long p = 1LL << d;
        std::vector<int> best(p, 1 << 20);
        std::vector<int> digits(d, -1);
        for (;;) {
            long long v = 0;
            int steps = 0;
            for (int b = 0; b < d; ++b) {
                v += digits[b] * (1LL << b);
                steps += digits[b] != 0 ? (b == 0 ? 1 : 2) : 0;
            }
            int& slot = best[cost::shift_mod(d, v)];
            slot = std::min(slot, steps);
            int b = 0;
            while (b < d && digits[b] == 1)
                digits[b++] = -1;
            if (b == d) break;
            ++digits[b];
        }
        for (long long q = 0; q < p; ++q) {
            INFO("d=", d, " q=", q);
            CHECK(cost::shift_gray_bidirectional_steps(d, q) == best[q]);
        }
    }
}

TEST_CASE("4.6.2: array positions 2^b apart are 2 links apart (1 for b = 0)") {
    for (int d = 1; d <= 10; ++d) {
        const node_id p = node_id(1) << d;
        for (node_id r = 0; r < p; ++r)
            for (int b = 0; b < d; ++b) {
                const node_id a = gray(r), c = gray((r + (node_id(1) << b)) % p);
                CHECK(hamming(a, c) == (b == 0 ? 1 : 2));
                // ... and one of the two is dimension b - 1, which the gray
                // algorithm crosses first.
                if (b > 0) CHECK(((a ^ c) >> (b - 1) & 1) == 1);
            }
    }
}

TEST_CASE("E-cube link load of a q-shift, counted path by path") {
    for (int d = 1; d <= 8; ++d) {
        const long long p = 1LL << d;
        for (long long q = 0; q < p; ++q)
            for (bool gray_ring : {false, true}) {
                std::map<std::pair<node_id, int>, int> load;
                for (long long r = 0; r < p; ++r) {
                    const node_id from = gray_ring ? gray(node_id(r)) : node_id(r);
                    const node_id to =
                        gray_ring ? gray(node_id((r + q) % p)) : node_id((r + q) % p);
                    node_id x = from;
                    for (int k : ecube_path(from, to))
                        ++load[{x, k}], x = neighbor(x, k);
                }
                int worst = 0;
                for (const auto& [link, n] : load)
                    worst = std::max(worst, n);
                INFO("d=", d, " q=", q, " gray ring=", gray_ring);
                CHECK(worst == cost::shift_ecube_link_load(d, q, gray_ring));
            }
    }
}
