// lib/include/hcube/aspc_schedule.hpp: H_n, the tables of Definitions 1-3, the Gray
// embedding, and Hu's Tables 1 and 2, Lemmas 5, 8, 9, Theorems 1-5.
#include <doctest/doctest.h>

#include <hcube/aspc_schedule.hpp>
#include <hcube/topology.hpp>

#include <bit>
#include <cstdint>
#include <set>
#include <vector>

namespace hs = hcube::aspc_schedule;
using hcube::node_id;

namespace {

// Table 1 of the source, schedule phi_i(j) for n = 3 (row j, column i).
const std::vector<std::vector<int>> table1 = {
    {0, 1, 0, 2, 0, 1, 0, 2},
    {1, 0, 2, 0, 1, 0, 2, 0},
    {2, 2, 1, 1, 2, 2, 1, 1},
};

// Table 2 of the source (n = 5) as its text transcribes it. Rows 1-3 lost their
// last entry (31 of 32 columns); row 4 lost two entries and is garbled: the
// text reads 8 x 4, 7 x 3, 9 x 4, 6 x 3, which is not a prefix of any row of
// the form Definition 1 gives (the period of row j is 2^(j+1), Lemma 2).
const std::vector<std::vector<int>> table2_text = {
    {0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0, 4,
     0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0, 4},
    {1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0, 4},
    {2, 2, 1, 1, 3, 3, 1, 1, 2, 2, 1, 1, 4, 4, 1, 1, 2, 2, 1, 1, 3, 3, 1, 1, 2, 2, 1, 1, 4, 4, 1},
    {3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4, 2, 2, 2, 2, 3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4, 2, 2, 2},
    {4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3},
};

node_id mod(std::int64_t x, int n) {
    return node_id(x & ((std::int64_t{1} << n) - 1));
}

} // namespace

TEST_CASE("H_n is the circular Gray-code transition sequence (2.2, Lemma 1)") {
    for (int n = 1; n <= 10; ++n)
        for (node_id i = 0; i < (node_id{1} << n); ++i) {
            const node_id next = mod(i + 1, n);
            CHECK((hcube::gray(i) ^ hcube::gray(next)) == (node_id{1} << hs::H(n, i)));
        }
    CHECK(hs::H(3, 7) == 2);  // the wrap-around entry is n - 1, not 3 trailing ones
    CHECK(hs::H(3, -1) == 2); // arguments are taken mod 2^n
    CHECK(hs::H(5, 15) == 4);
}

TEST_CASE("Table 1 (n = 3) entry by entry") {
    CHECK(hs::table(3, true) == table1);
}

TEST_CASE("Table 2 (n = 5) entry by entry; lost entries derived from Definition 1") {
    const auto t = hs::table(5, true);
    // The entries the text kept, rows 0-3.
    for (int j = 0; j < 4; ++j) {
        CAPTURE(j);
        for (std::size_t i = 0; i < table2_text[j].size(); ++i) {
            CAPTURE(i);
            CHECK(t[j][i] == table2_text[j][i]);
        }
    }
    // Column 31, lost from rows 1-4, from Definition 1: H_5(32 mod 32),
    // H_5(33 mod 32), H_5(35 mod 32), H_5(39 mod 32).
    CHECK(t[1][31] == 0);
    CHECK(t[2][31] == 1);
    CHECK(t[3][31] == 2);
    CHECK(t[4][31] == 3);
    // Row 4 by Definition 1: H_5(15) = 4, H_5(23) = 3, H_5(31) = 4, H_5(7) = 3,
    // each for 8 columns. The text's row agrees on the first 15 entries and then
    // disagrees (column 15 reads 4); we trust the definition, which the route
    // tests below prove correct.
    std::vector<int> row4;
    for (int v : {4, 3, 4, 3})
        row4.insert(row4.end(), 8, v);
    CHECK(t[4] == row4);
    for (std::size_t i = 0; i < 15; ++i)
        CHECK(t[4][i] == table2_text[4][i]);
    CHECK(t[4][15] != table2_text[4][15]);
}

TEST_CASE("Lemma 8: i^k reflects i within its block of 2^(k+1); the Gray embedding") {
    for (int n = 1; n <= 8; ++n)
        for (node_id i = 0; i < (node_id{1} << n); ++i) {
            CHECK(hs::logical_of(hs::physical_of(i)) == i);
            for (int k = 0; k < n; ++k)
                CHECK(hs::across(i, k) == hs::logical_of(hcube::neighbor(hs::physical_of(i), k)));
        }
}

TEST_CASE("Lemma 5: a node's n outgoing links are distinct, in both tables") {
    for (int n = 1; n <= 10; ++n)
        for (node_id i = 0; i < (node_id{1} << n); ++i) {
            std::set<int> plus, minus;
            for (int j = 0; j < n; ++j) {
                plus.insert(hs::phi(n, i, j));
                minus.insert(hs::phi_bar(n, i, j));
            }
            CHECK(plus.size() == std::size_t(n));
            CHECK(minus.size() == std::size_t(n));
        }
}

TEST_CASE("Lemma 9: phi-bar_i(j) = phi_(2^n - 1 - i)(j)") {
    for (int n = 1; n <= 10; ++n)
        for (node_id i = 0; i < (node_id{1} << n); ++i)
            for (int j = 0; j < n; ++j)
                CHECK(hs::phi_bar(n, i, j) == hs::phi(n, (node_id{1} << n) - 1 - i, j));
}

TEST_CASE("Theorem 3: location j of node i arrives on link phi-bar_i(j)") {
    for (int n = 1; n <= 10; ++n)
        for (node_id i = 0; i < (node_id{1} << n); ++i)
            for (int j = 0; j < n; ++j) {
                // The node across the incoming link sends its element j to i.
                const node_id src = hs::across(i, hs::phi_in(n, i, j));
                CHECK(hs::phi(n, src, j) == hs::phi_in(n, i, j));
                // And for the minus half, the incoming table is phi.
                const node_id src_minus = hs::across(i, hs::in_link(n, i, j, false));
                CHECK(hs::phi_bar(n, src_minus, j) == hs::in_link(n, i, j, false));
            }
}

TEST_CASE("Theorems 1, 4, 5: the two-step routes reach i +- 2^j, Theorem 1's bits") {
    for (int n = 1; n <= 10; ++n) {
        const std::int64_t N = std::int64_t{1} << n;
        for (node_id i = 0; i < node_id(N); ++i)
            for (int j = 0; j < n; ++j)
                for (bool plus : {true, false}) {
                    const auto r = hs::route(n, i, j, plus);
                    const node_id dest = mod(i + (plus ? 1 : -1) * (std::int64_t{1} << j), n);
                    CHECK(r.size() == (j == 0 ? 2u : 3u));
                    CHECK(r.back() == dest);
                    // Theorem 1: G(i) and G(i +- 2^j) differ in one bit (j = 0)
                    // or two, the smaller being j - 1 (Lemma 6).
                    const node_id diff = hcube::gray(i) ^ hcube::gray(dest);
                    CHECK(std::popcount(diff) == (j == 0 ? 1 : 2));
                    if (j > 0) CHECK(std::countr_zero(diff) == j - 1);
                }
    }
}

TEST_CASE("Theorem 5: step 2's links are distinct too (conflict-free second hops)") {
    for (int n = 2; n <= 10; ++n)
        for (bool plus : {true, false})
            for (node_id m = 0; m < (node_id{1} << n); ++m) {
                // What node m forwards in step 2: location j (j >= 1) arrived
                // on in_link, leaves on out_link; both sets are distinct.
                std::set<int> out, in;
                for (int j = 1; j < n; ++j) {
                    out.insert(hs::out_link(n, m, j, plus));
                    in.insert(hs::in_link(n, m, j, plus));
                }
                CHECK(out.size() == std::size_t(n - 1));
                CHECK(in.size() == std::size_t(n - 1));
            }
}

TEST_CASE("One slot's plus and minus routes use distinct links (the direct descend)") {
    // phi_i(j) = c-1 + tz(u + 2), phi-bar_i(j) = c-1 + tz(u - 1) (j = c > 0,
    // u = floor(i / 2^(c-1))): u + 2 and u - 1 differ by 3, so never both even
    // or both odd; for j = 0, H(i) and H(i-1), one of i, i-1 is even. So both
    // halves of one slot can run in the same two steps when n >= 2.
    for (int n = 2; n <= 10; ++n)
        for (node_id i = 0; i < (node_id{1} << n); ++i)
            for (int j = 0; j < n; ++j) {
                CHECK(hs::out_link(n, i, j, true) != hs::out_link(n, i, j, false));
                CHECK(hs::in_link(n, i, j, true) != hs::in_link(n, i, j, false));
            }
    CHECK(hs::phi(1, 0, 0) == hs::phi_bar(1, 0, 0)); // n = 1: one link only
}

TEST_CASE("Theorem 2: the lower bound is 4 steps for n > 2") {
    CHECK(hs::lower_bound_steps(1) == 2);
    CHECK(hs::lower_bound_steps(2) == 3);
    for (int n = 3; n <= 16; ++n)
        CHECK(hs::lower_bound_steps(n) == 4);
    CHECK(hs::link_crossings(3) == 2 * (1 + 2 * 2) * 8);
    for (int n = 1; n <= 16; ++n)
        CHECK(hs::single_port_lower_bound_steps(n) == 4 * n - 2);
}
