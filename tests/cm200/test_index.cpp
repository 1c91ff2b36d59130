// The index formulas of Mathur & Johnsson (4.1, 4.2.1, 4.2.3) against the source's
// Figure 7 and Figures 13-19, the CM-200 allocation and subblocks of 4.2.4
// (Figure 20), and the closed-form costs.
#include <doctest/doctest.h>

#include <algorithm>
#include <bitset>
#include <sstream>
#include <string>
#include <vector>

#include <hcube/cm200_index.hpp>
#include <hcube/cost/cm200.hpp>

using namespace hcube;
using namespace hcube::cm200;

namespace {

// Figure 7 as printed (row s = local address, columns = nodes 0..7 in binary).
const char* const figure7 = R"fig(000	001	010	011	100	101	110	111
001	011	110	010	000	100	111	101
011	010	111	110	001	000	101	100
010	110	101	111	011	001	100	000
110	111	100	101	010	011	000	001
111	101	000	100	110	010	001	011
101	100	001	000	111	110	011	010
100	000	011	001	101	111	010	110)fig";

// Figure 13 as printed (Mem = j d + i, P0..P7, Dim).
const char* const figure13 =
    R"fig(0					●	+			0
1		●		+					1
2			●				+		2
3					+	●			0
4	●		+						1
5				●				+	2
6							●	+	0
7		+		●					1
8	●				+				2
9							+	●	0
10	+		●						1
11		●				+			2
12	●	+							0
13						●		+	1
14			+				●		2
15	+	●							0
16					●		+		1
17				+				●	2
18			●	+					0
19						+		●	1
20	+				●				2
21			+	●					0
22					+		●		1
23		+				●			2)fig";

// Figure 14 as printed (Mem = j d + i, P0..P7, Dim).
const char* const figure14 =
    R"fig(0					○	●		+	1
1		○		●				+	2
2			○				●	+	0
3					●	○	+		1
4	○		●				+		2
5				○			+	●	0
6						+	○	●	1
7		●		○		+			2
8	○				●	+			0
9					+		●	○	1
10	●		○		+				2
11		○			+	●			0
12	○	●		+					1
13				+		○		●	2
14			●	+			○		0
15	●	○	+						1
16			+		○		●		2
17			+	●				○	0
18		+	○	●					1
19		+				●		○	2
20	●	+			○				0
21	+		●	○					1
22	+				●		○		2
23	+	●				○			0)fig";

// Figure 15 as printed (Mem = j d + i, P0..P7, Dim).
const char* const figure15 =
    R"fig(0					○	○	+	●	0
1		○		○		+		●	1
2			○	+			○	●	2
3					○	○	●	+	0
4	○		○		+		●		1
5			+	○			●	○	2
6					+	●	○	○	0
7		○		○		●		+	1
8	○	+			○	●			2
9					●	+	○	○	0
10	○		○		●		+		1
11	+	○			●	○			2
12	○	○	+	●					0
13		+		●		○		○	1
14			○	●			○	+	2
15	○	○	●	+					0
16	+		●		○		○		1
17			●	○			+	○	2
18	+	●	○	○					0
19		●		+		○		○	1
20	○	●			○	+			2
21	●	+	○	○					0
22	●		+		○		○		1
23	●	○			+	○			2)fig";

// Figure 16 as printed (Mem = j d + i, P0..P7, Dim).
const char* const figure16 =
    R"fig(0			+		○	○	●	○	2
1		○		○	+	●		○	0
2		+	○	●			○	○	1
3				+	○	○	○	●	2
4	○		○		●	+	○		0
5	+		●	○			○	○	1
6	+				●	○	○	○	2
7		○		○		○	+	●	0
8	○	●		+	○	○			1
9		+			○	●	○	○	2
10	○		○		○		●	+	0
11	●	○	+		○	○			1
12	○	○	●	○			+		2
13	+	●		○		○		○	0
14			○	○		+	○	●	1
15	○	○	○	●				+	2
16	●	+	○		○		○		0
17			○	○	+		●	○	1
18	●	○	○	○	+				2
19		○	+	●		○		○	0
20	○	○			○	●		+	1
21	○	●	○	○		+			2
22	○		●	+	○		○		0
23	○	○			●	○	+		1)fig";

// Figure 17 as printed (Mem = j d + i, P0..P7, Dim).
const char* const figure17 =
    R"fig(0			●	+	○	○	○	○	0
1		○		○	●	○	+	○	1
2		●	○	○		+	○	○	2
3			+	●	○	○	○	○	0
4	○		○		○	●	○	+	1
5	●		○	○	+		○	○	2
6	●	+			○	○	○	○	0
7		○		○	+	○	●	○	1
8	○	○		●	○	○		+	2
9	+	●			○	○	○	○	0
10	○		○		○	+	○	●	1
11	○	○	●		○	○	+	○	2
12	○	○	○	○			●	+	0
13	●	○	+	○		○		○	1
14		+	○	○		●	○	○	2
15	○	○	○	○			+	●	0
16	○	●	○	+	○		○		1
17	+		○	○	●		○	○	2
18	○	○	○	○	●	+			0
19	+	○	●	○		○		○	1
20	○	○		+	○	○		●	2
21	○	○	○	○	+	●			0
22	○	+	○	●		○		○	1
23	○	○	+		○	○	●		2)fig";

// Figure 18 as printed (Mem = j d + i, P0..P7, Dim).
const char* const figure18 =
    R"fig(0		+	○	●	○	○	○	○	1
1		○	+	○	○	○	●	○	2
2		○	○	○	+	●	○	○	0
3	+		●	○	○	○	○	○	1
4	○		○	+	○	○	○	●	2
5	○		○	○	●	+	○	○	0
6	○	●		+	○	○	○	○	1
7	+	○		○	●	○	○	○	2
8	○	○		○	○	○	+	●	0
9	●	○	+		○	○	○	○	1
10	○	+	○		○	●	○	○	2
11	○	○	○		○	○	●	+	0
12	○	○	○	○		+	○	●	1
13	○	○	●	○		○	+	○	2
14	+	●	○	○		○	○	○	0
15	○	○	○	○	+		●	○	1
16	○	○	○	●	○		○	+	2
17	●	+	○	○	○		○	○	0
18	○	○	○	○	○	●		+	1
19	●	○	○	○	+	○		○	2
20	○	○	+	●	○			○	0
21	○	○	○	○	●	○	+		1
22	○	●	○	○	○	+	○		2
23	○	○	●	+	○	○	○		0)fig";

// Figure 19 as printed (Mem = j d + i, P0..P7, Dim).
const char* const figure19 =
    R"fig(0	+	●	○	○	○	○	○	○	0
1	+	○	●	○	○	○	○	○	1
2	+	○	○	○	●	○	○	○	2
3	●	+	○	○	○	○	○	○	0
4	○	+	○	●	○	○	○	○	1
5	○	+	○	○	○	●	○	○	2
6	○	○	+	●	○	○	○	○	0
7	●	○	+	○	○	○	○	○	1
8	○	○	+	○	○	○	●	○	2
9	○	○	●	+	○	○	○	○	0
10	○	●	○	+	○	○	○	○	1
11	○	○	○	+	○	○	○	●	2
12	○	○	○	○	+	●	○	○	0
13	○	○	○	○	+	○	●	○	1
14	●	○	○	○	+	○	○	○	2
15	○	○	○	○	○	●	+	○	0
16	○	○	○	○	○	+	○	●	1
17	○	●	○	○	○	+	○	○	2
18	○	○	○	○	○	○	+	●	0
19	○	○	○	○	○	○	+	○	1
20	○	○	●	○	○	○	+	○	2
21	○	○	○	○	○	○	○	+	0
22	○	○	○	○	○	○	○	+	1
23	○	○	○	○	○	○	○	+	2)fig";

std::vector<std::vector<std::string>> cells(const char* text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream is(text);
    std::string line, cell;
    while (std::getline(is, line)) {
        std::vector<std::string> row;
        std::istringstream ls(line);
        while (std::getline(ls, cell, '\t'))
            row.push_back(cell);
        rows.push_back(row);
    }
    return rows;
}

} // namespace

TEST_CASE("sh, exchange sequences and the starting addresses of 4.2.3") {
    CHECK(sh(0b001, 1, 3) == 0b010);
    CHECK(sh(0b100, 1, 3) == 0b001);
    CHECK(sh(0b110, 2, 3) == 0b011);
    CHECK(sh(5, 0, 0) == 5);
    // "the exchange sequence for location zero is 0, 1, 0, 2, 0, 1, 0 ...
    // location one 1, 2, 1, 0, 1, 2, 1; location two 2, 0, 2, 1, 2, 0, 2"
    const int want[3][7] = {{0, 1, 0, 2, 0, 1, 0}, {1, 2, 1, 0, 1, 2, 1}, {2, 0, 2, 1, 2, 0, 2}};
    for (int i = 0; i < 3; ++i)
        for (int u = 0; u < 7; ++u)
            CHECK(exchange_dim(u, i, 3) == want[i][u]);
    // No two locations share a dimension in any step (d = 1..10).
    for (int d = 1; d <= 10; ++d)
        for (int u = 0; u < (1 << d) - 1; ++u) {
            unsigned used = 0;
            for (int i = 0; i < d; ++i)
                used |= 1u << exchange_dim(u, i, d);
            CHECK(used == (1u << d) - 1);
        }
    // "the last destination of ... location zero in node zero is node four, of
    // location one it is node one, and of location two it is node two"; the
    // reduction starts there: 2^((d-1+i) mod d).
    CHECK(dc_bcast_origin(4, 6, 0, 3) == 0);
    CHECK(dc_bcast_origin(1, 6, 1, 3) == 0);
    CHECK(dc_bcast_origin(2, 6, 2, 3) == 0);
    for (int d = 1; d <= 8; ++d)
        for (int i = 0; i < d; ++i)
            CHECK(dc_reduce_path(0, 0, i, d) == node_id{1} << ((d - 1 + i) % d));
}

TEST_CASE("Figure 7: one cycle, binary node addresses: G((s + G^-1(PA)) mod N)") {
    const auto rows = cells(figure7);
    REQUIRE(rows.size() == 8);
    for (node_id s = 0; s < 8; ++s)
        for (node_id pa = 0; pa < 8; ++pa) {
            CAPTURE(s);
            CAPTURE(pa);
            CHECK(std::bitset<3>(oc_bcast_index(pa, s, 3, node_order::binary)).to_string() ==
                  rows[s][pa]);
        }
    // "consider PA = 101 and s = 1 ... The Gray code of 1+6=7 is 100"
    CHECK(oc_bcast_index(0b101, 1, 3, node_order::binary) == 0b100);
    CHECK(oc_bcast_index(0b101, 1, 3, node_order::gray) == 7);
}

namespace {

struct marks {
    std::vector<node_id> done, sent, added; // open circles, filled circles, +
};

marks marks_of(const std::vector<std::string>& row) {
    marks m;
    for (node_id v = 0; v < 8; ++v) {
        const std::string& c = row[1 + v];
        if (c == "○") m.done.push_back(v);
        if (c == "●") m.sent.push_back(v);
        if (c == "+") m.added.push_back(v);
    }
    return m;
}

} // namespace

TEST_CASE("Figures 13-19: all-to-all reduction steps 0-6 on a 3-cube, from the formulas") {
    // Row j d + i: the partial for block j, location i, is sent (filled circle)
    // by path(j, u) = j xor sh^i(G(7 - u)) and added (+) at path(j, u + 1);
    // the nodes before it on the path are already added in (open circle).
    const char* const figures[] = {figure13, figure14, figure15, figure16,
                                   figure17, figure18, figure19};
    std::vector<std::vector<std::vector<std::string>>> fig;
    for (const char* f : figures) {
        fig.push_back(cells(f));
        REQUIRE(fig.back().size() == 24);
        for (auto& r : fig.back())
            r.resize(10);
    }
    // Rows damaged in the source's text (step, row). Each breaks the figures' own
    // rules: in step u a partial has u open circles, one sender and one
    // receiver; the receiver of step u sends in step u + 1 and the sender joins
    // the open circles; the last receiver is node j. They are derived from the
    // definition instead of compared with the text.
    const std::vector<std::pair<int, std::size_t>> damaged = {{4, 11}, {4, 22}, {5, 20}, {6, 15},
                                                              {6, 19}, {6, 21}, {6, 22}, {6, 23}};
    auto breaks_rules = [&](int u, std::size_t row) {
        const marks m = marks_of(fig[u][row]);
        if (m.done.size() != std::size_t(u) || m.sent.size() != 1 || m.added.size() != 1)
            return true;
        if (u == 6 && m.added[0] != row / 3) return true;
        const marks before = marks_of(fig[u - 1][row]);
        auto grown = before.done;
        grown.insert(grown.end(), before.sent.begin(), before.sent.end());
        std::sort(grown.begin(), grown.end());
        return before.added != m.sent || grown != m.done;
    };
    for (int u = 0; u < 7; ++u)
        for (std::size_t row = 0; row < 24; ++row) {
            const auto& r = fig[u][row];
            const node_id j = node_id(row / 3);
            const int i = int(row % 3);
            CAPTURE(u);
            CAPTURE(row);
            CHECK(std::stoi(r[0]) == int(row));
            CHECK(std::stoi(r[9]) == exchange_dim(u, i, 3));
            CHECK(dc_reduce_send_block(dc_reduce_path(j, u, i, 3), u, i, 3) == j);
            CHECK(dc_reduce_recv_block(dc_reduce_path(j, u + 1, i, 3), u, i, 3) == j);
            const bool is_damaged =
                std::find(damaged.begin(), damaged.end(), std::pair{u, row}) != damaged.end();
            if (is_damaged) {
                CHECK(breaks_rules(u, row));
                continue;
            }
            for (node_id v = 0; v < 8; ++v) {
                std::string want;
                if (v == dc_reduce_path(j, u, i, 3)) want = "●";
                if (v == dc_reduce_path(j, u + 1, i, 3)) want = "+";
                for (int p = 0; p < u; ++p)
                    if (v == dc_reduce_path(j, p, i, 3)) want = "○";
                CAPTURE(v);
                CHECK(r[1 + v] == want);
            }
        }
}

TEST_CASE("4.2.4 and Figure 20: CM-200 allocation and subblocks") {
    const cm_allocation a(37, 8); // ceil(37/8) = 5; alpha = 7; the short block has 2
    CHECK(a.block == 5);
    CHECK(a.alpha == 7);
    CHECK(a.last == 2);
    CHECK(a.size(0) == 5);
    CHECK(a.size(7) == 2);
    CHECK(a.offset(7) == 35);
    const cm_allocation b(13, 16); // 13 blocks of 1, 3 nodes without data
    CHECK(b.alpha == 13);
    CHECK(b.size(12) == 1);
    CHECK(b.size(13) == 0);
    CHECK(b.size(15) == 0);
    CHECK(b.offset(15) == 13);
    std::size_t sum = 0;
    for (std::size_t r = 0; r < 16; ++r)
        sum += b.size(r);
    CHECK(sum == 13);

    const subblocks s(37, 3); // beta = 13; gamma = 37 - 3 * 12 = 1
    CHECK(s.beta == 13);
    CHECK(s.gamma == 1);
    CHECK(s.count(0) == 13);
    CHECK(s.count(1) == 12);
    CHECK(s.count(2) == 12);
    const subblocks t(2, 5); // M' < d: three empty subblocks, their links idle
    CHECK(t.beta == 1);
    CHECK(t.gamma == 2);
    CHECK(t.count(1) == 1);
    CHECK(t.count(2) == 0);
    const subblocks e(12, 4);
    CHECK(e.gamma == 4);
    CHECK(e.count(3) == 3);
}

TEST_CASE("closed forms") {
    namespace c = hcube::cost::cm200;
    CHECK(c::one_cycle(3, 10, 2, 1) == 7 * 12);
    CHECK(c::d_cycles(3, 10, 2, 1) == 7 * (2 + 4));
    CHECK(c::d_cycles(0, 10, 2, 1) == 0);
    CHECK(c::gather(3, 4, 1, 1) == 3 + 28);
    CHECK(c::spread(3, 32, 3, 1, 1) == 3 * (1 + 11));
    CHECK(c::send_and_spread(3, 4, 1, 1, 1) == 31 + 3 * 33);
    CHECK(c::one_source_at_a_time(3, 4, 3, 1, 1) == 8 * 3 * 3);
    CHECK(c::reduce_and_spread(3, 24, 3, 1, 1) == 3 * 9);
    CHECK(c::bytes_delivered(11, 128, 8) == 2048.0 * 2047 * 128 * 8);
    // d-cycles beats one cycle as soon as its t_w term saves more than... never
    // loses: for d >= 1 its time is at most the one-cycle time.
    for (int d = 1; d <= 10; ++d)
        for (std::size_t m : {1, 7, 64, 1000})
            CHECK(c::d_cycles(d, m, 5, 1) <= c::one_cycle(d, m, 5, 1));
}
