// Replays the source's figures step by step: the memory of every node after every
// step of the d-cycles all-to-all broadcast (Figures 8-11) and the data motion
// of the d-cycles reduction into node 0 (Figure 12), from real runs observed
// through the step hook. The figures are the source's text, parsed here.
#include <doctest/doctest.h>

#include <functional>
#include <set>
#include <sstream>

#include "cm200_test.hpp"

using namespace hcube;
using namespace hcube::test;

namespace {

// Figure 8 as printed in the source (tab-separated: step, Mem, P0..P7, Dim).
const char* const figure8 =
    R"fig(Init.	0	00	01	02	03	04	05	06	07	
	1	10	11	12	13	14	15	16	17	
	2	20	21	22	23	24	25	26	27	
0	0	01	00	03	02	05	04	07	06	0
	1	12	13	10	11	16	17	14	15	1
	2	24	25	26	27	20	21	22	23	2
1	0	03	02	01	00	07	06	05	04	1
	1	16	17	14	15	12	13	10	11	2
	2	25	24	27	26	21	20	23	22	0
2	0	02	03	00	01	06	07	04	05	0
	1	14	15	16	17	10	11	12	13	1
	2	21	20	23	22	25	24	27	26	2
3	0	06	07	04	05	02	03	00	01	2
	1	15	14	17	16	11	10	13	12	0
	2	23	22	21	20	27	26	25	24	1
4	0	07	06	05	04	03	02	01	00	0
	1	17	16	15	14	13	12	11	10	1
	2	27	26	25	24	23	22	21	20	2
5	0	05	04	07	06	01	00	03	02	1
	1	13	12	11	10	17	16	15	14	2
	2	26	27	24	25	22	23	20	21	0
6	0	04	05	06	07	00	01	02	03	0
	1	11	10	13	12	15	14	17	16	1
	2	22	23	20	21	26	27	24	25	2)fig";

// Figure 9 as printed in the source (tab-separated: step, Mem, P0..P7, Dim).
const char* const figure9 =
    R"fig(Init.	0	00	01	03	02	07	06	04	05	
	1	10	11	13	12	17	16	14	15	
	2	20	21	23	22	27	26	24	25	
0	0	01	00	02	03	06	07	05	04	0
	1	13	12	10	11	14	15	17	16	1
	2	27	26	24	25	20	21	23	22	2
1	0	02	03	01	00	05	04	06	07	1
	1	14	15	17	16	13	12	10	11	2
	2	26	27	25	24	21	20	22	23	0
2	0	03	02	00	01	04	05	07	06	0
	1	17	16	14	15	10	11	13	12	1
	2	21	20	22	23	26	27	25	24	2
3	0	04	05	07	06	03	02	00	01	2
	1	16	17	15	14	11	10	12	13	0
	2	22	23	21	20	25	24	26	27	1
4	0	05	04	06	07	02	03	01	00	0
	1	15	14	16	17	12	13	11	10	1
	2	25	24	26	27	22	23	21	20	2
5	0	06	07	05	04	01	00	02	03	1
	1	12	13	11	10	15	14	16	17	2
	2	24	25	27	26	23	22	20	21	0
6	0	07	06	04	05	00	01	03	02	0
	1	11	10	12	13	16	17	15	14	1
	2	23	22	20	21	24	25	27	26	2)fig";

// Figure 10 as printed in the source (tab-separated: step, Mem, P0..P7, Dim).
const char* const figure10 =
    R"fig(Init.	0	000	001	002	003	004	005	006	007	
	1	100	101	102	103	104	105	106	107	
	2	200	201	202	203	204	205	206	207	
	3	010	011	012	013	014	015	016	017	
	4	110	111	112	113	114	115	116	117	
	5	210	211	212	213	214	215	216	217	
0	0	001	000	003	002	005	004	007	006	0
	1	102	103	100	101	106	107	104	105	1
	2	204	205	206	207	200	201	202	203	2
	3	011	010	013	012	015	014	017	016	0
	4	112	113	110	111	116	117	114	115	1
	5	214	215	216	217	210	211	212	213	2
1	0	003	002	001	000	007	006	005	004	1
	1	106	107	104	105	102	103	100	101	2
	2	205	204	207	206	201	200	203	202	0
	3	013	012	011	010	017	016	015	014	1
	4	116	117	114	115	112	113	110	111	2
	5	215	214	217	216	211	210	213	212	0
2	0	002	003	000	001	006	007	004	005	0
	1	104	105	106	107	100	101	102	103	1
	2	201	200	203	202	205	204	207	206	2
	3	012	013	010	011	016	017	014	015	0
	4	114	115	116	117	110	111	112	113	1
	5	211	210	213	212	215	214	217	216	2
3	0	006	007	004	005	002	003	000	001	2
	1	105	104	107	106	101	100	103	102	0
	2	203	202	201	200	207	206	205	204	1
	4	016	017	014	015	012	013	010	011	2
	5	115	114	117	116	111	110	113	112	0
	6	213	212	211	210	217	216	215	214	1
4	0	007	006	005	004	003	002	001	000	0
	1	107	106	105	104	103	102	101	100	1
	2	207	206	205	204	203	202	201	200	2
	3	017	016	015	014	013	012	011	010	0
	4	117	116	115	114	113	112	111	110	1
	5	217	216	215	214	213	212	211	210	2
5	0	005	004	007	006	001	000	003	002	1
	1	103	102	101	100	107	106	105	104	2
	2	206	207	204	205	202	203	200	201	0
	3	015	014	017	016	011	010	013	012	1
	4	113	112	111	110	117	116	115	114	2
	5	216	217	214	215	212	213	210	211	0
6	0	004	005	006	007	000	001	002	003	0
	1	101	100	103	102	105	104	107	106	1
	2	202	203	200	201	206	207	204	205	2
	3	014	015	016	017	010	011	012	013	0
	4	111	110	113	112	115	114	117	116	1
	5	212	213	210	211	216	217	214	215	2)fig";

// Figure 11 as printed in the source (tab-separated: step, Mem, P0..P7, Dim).
const char* const figure11 =
    R"fig(Init.	0	000	001	003	002	007	006	004	005	
	1	100	101	103	102	107	106	104	105	
	2	200	201	203	202	207	206	204	205	
	3	010	011	013	012	017	016	014	015	
	4	110	111	113	112	117	116	114	115	
	5	210	211	213	212	217	216	214	215	
0	0	001	000	002	003	006	007	005	004	0
	1	103	102	100	101	104	105	107	106	1
	2	207	206	204	205	200	201	203	202	2
	3	011	010	012	013	016	017	015	014	0
	4	113	112	110	111	114	115	117	116	1
	5	217	216	214	215	210	211	213	212	2
1	0	002	003	001	000	005	004	006	007	1
	1	104	105	107	106	103	102	100	101	2
	2	206	207	205	204	201	200	202	203	0
	3	012	013	011	010	015	014	016	017	1
	4	114	115	117	116	113	112	110	111	2
	5	216	217	215	214	211	210	212	213	0
2	0	003	002	000	001	004	005	007	006	0
	1	107	106	104	105	100	101	103	102	1
	2	201	200	202	203	206	207	205	204	2
	3	013	012	010	011	014	015	017	016	0
	4	117	116	114	115	110	111	113	112	1
	5	211	210	212	213	216	217	215	214	2
3	0	04	05	07	06	03	02	00	01	2
	1	16	17	15	14	11	10	12	13	0
	2	22	23	21	20	25	24	26	27	1
	3	04	05	07	06	03	02	00	01	2
	4	16	17	15	14	11	10	12	13	0
	5	22	23	21	20	25	24	26	27	1
4	0	005	004	006	007	002	003	001	000	0
	1	105	104	106	107	102	103	101	100	1
	2	205	204	206	207	202	203	201	200	2
	3	015	014	016	017	012	013	011	010	0
	4	115	114	116	117	112	113	111	110	1
	5	215	214	216	217	212	213	211	210	2
5	0	006	007	005	004	001	000	002	003	1
	1	102	103	101	100	105	104	106	107	2
	2	204	205	207	206	203	202	200	201	0
	3	016	017	015	014	011	010	012	013	1
	4	112	113	111	110	115	114	116	117	2
	5	214	215	217	216	213	212	210	211	0
6	0	007	006	004	005	000	001	003	002	0
	1	101	100	102	103	106	107	105	104	1
	2	203	202	200	201	204	205	207	206	2
	3	017	016	014	015	010	011	013	012	0
	4	111	110	112	113	116	117	115	114	1
	5	213	212	210	211	214	215	217	216	2)fig";

// Figure 12 as printed in the source (tab-separated: step, Mem, P0..P7, Dim).
const char* const figure12 =
    R"fig(0	0					●	+			0
	1		●		+					1
	2			●				+		2
1	0					○	●		+	1
	1		○		●				+	2
	2			○				●	+	0
2	0					○	○	+	●	0
	1		○		○		+		●	1
	2			○	+			○	●	2
3	0			+		○	○	●	○	2
	1		○		○	+	●		○	0
	2		+	○	●			○	○	1
4	0			●	+	○	○	○	○	0
	1		○		○	●	○	+	○	1
	2		●	○	○		+	○	○	2
5	0		+	○	●	○	○	○	○	1
	1		○	+	○	○	○	●	○	2
	2		○	○	○	+	●	○	○	0
6	0	+	●	○	○	○	○	○	○	0
	1	+	○	●	○	○	○	○	○	1
	2	+	○	○	○	●	○	○	○	2)fig";

struct figure_row {
    int step; // -1: the initial memory
    int mem;
    std::vector<std::string> cells; // P0 .. P7
    int dim;                        // -1 when not printed
};

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream is(line);
    while (std::getline(is, cell, '\t'))
        out.push_back(cell);
    if (!line.empty() && line.back() == '\t') out.push_back("");
    return out;
}

std::vector<figure_row> parse(const char* text) {
    std::vector<figure_row> rows;
    std::istringstream is(text);
    std::string line;
    int step = -1;
    while (std::getline(is, line)) {
        auto f = split_tabs(line);
        f.resize(11);
        if (!f[0].empty()) step = f[0] == "Init." ? -1 : std::stoi(f[0]);
        rows.push_back({step,
                        std::stoi(f[1]),
                        {f.begin() + 2, f.begin() + 10},
                        f[10].empty() ? -1 : std::stoi(f[10])});
    }
    return rows;
}

constexpr int d = 3, n = 8;

// memory[node][step + 1][s] after a d-cycles broadcast of M' elements per node,
// element s = k d + i of rank r being `label(i, k, r)`.
template <class Label>
std::vector<std::vector<std::vector<int>>> observe_broadcast(std::size_t m, node_order order,
                                                             index_mode ix, Label label) {
    machine mach(cfg(d, port_model::all_port));
    std::vector<std::vector<std::vector<int>>> memory(
        n, std::vector<std::vector<int>>(n, std::vector<int>(m, -1)));
    std::vector<std::vector<int>> in(n), out(n, std::vector<int>(n * m));
    for (int v = 0; v < n; ++v)
        for (std::size_t s = 0; s < m; ++s)
            in[v].push_back(label(int(s % d), int(s / d), int(cm200::rank_of(node_id(v), order))));
    mach.run([&](node& me) {
        auto& mine = memory[me.id()];
        mine[0] = in[me.id()];
        cm200::allgather_d_cycles<int>(me, in[me.id()], out[me.id()], {order, ix},
                                       [&](const cm200::step_event<int>& e) {
                                           for (std::size_t k = 0; k < e.data_in.size(); ++k)
                                               mine[e.step + 1][k * d + e.channel] = e.data_in[k];
                                       });
    });
    return memory;
}

// The source's sh^i: left cyclic shift of d bits, written out here.
int sh(int x, int i) {
    return ((x << i) | (x >> (d - i))) & (n - 1);
}

// The rank whose location-i element node `pa` holds after step u, from the
// text of 4.2.1: when the broadcast is done, block j of node PA holds index
// PA xor sh^i(G(j)) (binary order) or G^-1(PA) xor G^-1(sh^i(G(j))) (Gray
// order), block j being the one that arrived in step j - 1.
int text_rank(int pa, int u, int i, node_order order) {
    const int x = sh(int(gray_code(std::uint64_t(u + 1))), i);
    return order == node_order::binary
               ? pa ^ x
               : int(gray_code_inverse(std::uint64_t(pa)) ^ gray_code_inverse(std::uint64_t(x)));
}

std::string digits(int value, int width) {
    std::string s = std::to_string(value);
    return std::string(std::size_t(width) - s.size(), '0') + s;
}

// Checks every printed row of a broadcast figure against the observed memory.
// Rows are matched by their position within the step (s = 0, 1, ...), not by
// the printed Mem label. `derived_step` (if >= 0) is a step whose printed rows
// are damaged: it is checked against the definition instead.
void replay(const char* figure, std::size_t m, node_order order, int width, int derived_step) {
    const auto rows = parse(figure);
    REQUIRE(rows.size() == std::size_t(n) * m);
    auto label = [width](int i, int k, int r) {
        return width == 2 ? i * 10 + r : i * 100 + k * 10 + r;
    };
    for (index_mode ix : {index_mode::computation, index_mode::motion}) {
        const auto memory = observe_broadcast(m, order, ix, label);
        for (std::size_t row = 0; row < rows.size(); ++row) {
            const figure_row& f = rows[row];
            const std::size_t s = row % m;
            const int i = int(s % d), k = int(s / d);
            CAPTURE(f.step);
            CAPTURE(s);
            if (f.step >= 0) CHECK(f.dim == cm200::exchange_dim(f.step, i, d));
            for (int v = 0; v < n; ++v) {
                CAPTURE(v);
                const int got = memory[v][std::size_t(f.step + 1)][s];
                if (derived_step >= 0 && f.step == derived_step) {
                    CHECK(got == label(i, k, text_rank(v, f.step, i, order)));
                    // What is left of the printed cell: the label without its
                    // middle digit (the block k).
                    const std::string full = digits(got, width);
                    CHECK(f.cells[std::size_t(v)] == full.substr(0, 1) + full.substr(2));
                } else {
                    CHECK(digits(got, width) == f.cells[std::size_t(v)]);
                }
            }
        }
    }
}

} // namespace

TEST_CASE("Figure 8: d-cycles broadcast, binary order, one element per location") {
    replay(figure8, 3, node_order::binary, 2, -1);
}

TEST_CASE("Figure 9: d-cycles broadcast, Gray-code order") {
    // Node P holds rank G^-1(P): the same exchanges as Figure 8, relabelled.
    replay(figure9, 3, node_order::gray, 2, -1);
}

TEST_CASE("Figure 10: d-cycles broadcast, binary order, 2d elements per node") {
    // Labels: location i, block k, rank r as "ikr". The source prints the Mem
    // labels of step 3 as 0 1 2 4 5 6 (damaged); the rows are s = 0..5 in order.
    const auto rows = parse(figure10);
    CHECK(rows[4 * 6 + 3].mem == 4); // step 3 starts after Init and steps 0-2
    replay(figure10, 6, node_order::binary, 3, -1);
}

TEST_CASE("Figure 11: d-cycles broadcast, Gray-code order, 2d elements; step 3 derived") {
    // Step 3 of Figure 11 is garbled in the source: two-digit labels, and rows
    // 3-5 repeat rows 0-2. Show the damage, then check that step against the
    // definition in the text of 4.2.1 (text_rank) and every other step against
    // the printed figure. The damage is a lost middle digit: what is printed
    // is the first and last digit of the label the definition gives.
    const auto rows = parse(figure11);
    const std::size_t step3 = 4 * 6;
    CHECK(rows[step3].step == 3);
    CHECK(rows[step3].cells[0].size() == 2);
    CHECK(rows[step3].cells == rows[step3 + 3].cells);
    replay(figure11, 6, node_order::gray, 3, 3);
}

TEST_CASE("Figure 12: d-cycles reduction of d variables into node 0") {
    // The set of contributors travels as a bit mask (op = bitwise or), so the
    // partial a node receives shows which nodes are already added in.
    machine mach(cfg(d, port_model::all_port));
    for (index_mode ix : {index_mode::computation, index_mode::motion}) {
        struct seen {
            int step, channel, block_out, block_in;
            std::uint32_t mask;
        };
        std::vector<std::vector<seen>> events(n);
        std::vector<std::vector<std::uint32_t>> in(n), out(n, std::vector<std::uint32_t>(d));
        for (int v = 0; v < n; ++v)
            in[v].assign(n * d, std::uint32_t(1) << v);
        CAPTURE(cm200::to_string(ix));
        mach.run([&](node& me) {
            cm200::reduce_scatter_d_cycles<std::uint32_t>(
                me, in[me.id()], out[me.id()], std::bit_or<>{}, {node_order::binary, ix},
                [&](const cm200::step_event<std::uint32_t>& e) {
                    events[me.id()].push_back(
                        {e.step, e.channel, e.block_out, e.block_in, e.data_in[0]});
                });
        });
        for (int v = 0; v < n; ++v)
            CHECK(out[v] == std::vector<std::uint32_t>(d, 0xff));

        const auto rows = parse(figure12);
        REQUIRE(rows.size() == 7 * 3);
        for (const auto& f : rows) {
            CAPTURE(f.step);
            CAPTURE(f.mem);
            CHECK(f.dim == cm200::exchange_dim(f.step, f.mem, d));
            int sender = -1, receiver = -1;
            std::uint32_t mask = 0;
            for (int v = 0; v < n; ++v)
                for (const auto& e : events[v]) {
                    if (e.step != f.step || e.channel != f.mem) continue;
                    if (e.block_out == 0) sender = v;
                    if (e.block_in == 0) receiver = v, mask = e.mask;
                }
            for (int v = 0; v < n; ++v) {
                CAPTURE(v);
                const std::string& cell = f.cells[std::size_t(v)];
                const std::string want = v == sender      ? "●"
                                         : v == receiver  ? "+"
                                         : mask >> v & 1u ? "○"
                                                          : "";
                CHECK(cell == want);
            }
        }
    }
}
