// hcube_draw: traces (one flow per message), the space-time diagram, and the
// step pictures' labels against the sources' figures (Grama et al. Figures 4.6,
// 4.11, 4.13; Mathur & Johnsson Figure 8), from real runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <hcube/aspc_schedule.hpp>
#include <hcube/collectives/allgather.hpp>
#include <hcube/draw.hpp>
#include <hcube/hcube.hpp>

using namespace hcube;
using json = nlohmann::json;

namespace {

run_report traced_allgather(int d) {
    machine m({.dim = d, .trace = true});
    std::vector<std::vector<int>> all(std::size_t(1) << d, std::vector<int>(std::size_t(1) << d));
    return m.run([&](node& me) {
        const int mine[1] = {me.id()};
        allgather(me, std::span<const int>(mine), std::span<int>(all[std::size_t(me.id())]),
                  allgather_algo::hypercube);
    });
}

std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
        ++n;
    return n;
}

run_params params(std::string op, std::string algo, int dim, std::size_t words = 1) {
    run_params p;
    p.op = std::move(op);
    p.algo = std::move(algo);
    p.dim = dim;
    p.words = words;
    return p;
}

std::vector<std::string> repeat(std::vector<std::string> v, int times) {
    std::vector<std::string> out;
    for (const auto& s : v)
        for (int i = 0; i < times; ++i)
            out.push_back(s);
    return out;
}

} // namespace

TEST_CASE("config::trace records every primitive call and links each message to its calls") {
    const run_report r = traced_allgather(3);
    REQUIRE(r.trace.size() == 24);
    REQUIRE(r.calls.size() == 24); // 8 nodes x 3 exchanges
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
        const call_record& c = r.calls[i];
        CHECK(c.kind == call_kind::exchange);
        CHECK(c.node == int(i / 3));
        CHECK(c.dim == int(i % 3)); // Alg. 4.7: dimension i in step i
        CHECK(c.step == c.dim);
        CHECK(c.peer == (c.node ^ (1 << c.dim)));
        CHECK(c.end == c.start + 1);
        CHECK(c.wall_end >= c.wall_start);
    }
    for (const auto& t : r.trace) {
        REQUIRE(t.send_call >= 0);
        REQUIRE(t.recv_call >= 0);
        const call_record& s = r.calls[std::size_t(t.send_call)];
        const call_record& g = r.calls[std::size_t(t.recv_call)];
        CHECK(s.node == t.from);
        CHECK(g.node == t.to);
        CHECK(s.dim == t.dim);
        CHECK(g.dim == t.dim);
    }
}

TEST_CASE("without config::trace nothing is recorded") {
    machine m({.dim = 2});
    const run_report r =
        m.run([](node& me) { me.exchange(0, std::vector<int>{1}, std::vector<int>(1)); });
    CHECK(r.calls.empty());
    CHECK(r.trace.empty());
}

TEST_CASE("config::on_call sees the node before each primitive moves data") {
    std::vector<std::vector<std::int64_t>> seen(4);
    config c{.dim = 2};
    c.on_call = [&](node& me) { seen[std::size_t(me.id())].push_back(me.steps()); };
    machine m(c);
    m.run([](node& me) {
        for (int k = 0; k < 2; ++k)
            me.exchange(k, std::vector<int>{me.id()}, std::vector<int>(1));
    });
    for (const auto& s : seen)
        CHECK(s == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("chrome trace: valid JSON, a slice per call, exactly one flow per message") {
    const run_report r = traced_allgather(3);
    for (const trace_clock clock : {trace_clock::virtual_time, trace_clock::wall_time}) {
        std::ostringstream os;
        write_chrome_trace(r, os, {clock});
        const json doc = json::parse(os.str());
        CHECK(doc["otherData"]["time_axis"] ==
              (clock == trace_clock::virtual_time ? "virtual" : "wall"));
        std::map<std::uint64_t, int> starts, finishes;
        std::size_t slices = 0;
        std::map<int, double> track_end;
        for (const auto& e : doc["traceEvents"]) {
            if (e["ph"] == "X") {
                ++slices;
                CHECK(e["args"].contains("step"));
                CHECK(e["args"].contains("link"));
                // Alg. 4.7 doubles the message every step: 4, 8, 16 bytes.
                CHECK(e["args"]["bytes_sent"] == 4 << e["args"]["step"].get<int>());
                // Slices of one track follow each other (they must nest).
                const int tid = e["tid"];
                CHECK(e["ts"].get<double>() >= track_end[tid]);
                track_end[tid] = e["ts"].get<double>() + e["dur"].get<double>();
            }
            if (e["ph"] == "s") ++starts[e["id"]];
            if (e["ph"] == "f") ++finishes[e["id"]];
        }
        CHECK(slices == r.calls.size());
        CHECK(starts.size() == r.trace.size());
        CHECK(finishes.size() == r.trace.size());
        for (const auto& [id, n] : starts)
            CHECK((n == 1 && finishes[id] == 1));
    }
}

TEST_CASE("chrome trace of routed messages, and of a report without calls") {
    machine m({.dim = 2, .trace = true});
    const run_report r = m.run([](node& me) {
        if (me.id() == 0) me.send_routed(3, std::vector<int>{7});
        if (me.id() == 3) (void)me.recv_routed<int>(0);
    });
    REQUIRE(r.trace.size() == 1);
    CHECK(r.calls[std::size_t(r.trace[0].recv_call)].kind == call_kind::recv_routed);
    std::ostringstream os;
    write_chrome_trace(r, os);
    const json doc = json::parse(os.str());
    CHECK(std::count_if(doc["traceEvents"].begin(), doc["traceEvents"].end(),
                        [](const json& e) { return e["ph"] == "f"; }) == 1);

    run_report bare = r;
    bare.calls.clear();
    CHECK_THROWS_WITH_AS(write_chrome_trace(bare, os), doctest::Contains("config::trace"),
                         usage_error);
}

TEST_CASE("timeline: an arrow per message, the critical path, a refusal above 64 nodes") {
    const run_report r = traced_allgather(3);
    std::ostringstream os;
    write_timeline_svg(r, os);
    const std::string svg = os.str();
    CHECK(count(svg, "class=\"msg\"") == r.trace.size());
    CHECK(count(svg, "class=\"node\"") == 8);
    // Alg. 4.7: three exchanges in a chain, one per dimension.
    const auto path = critical_path(r);
    REQUIRE(path.size() == 3);
    CHECK(count(svg, "class=\"critical\"") == 3);
    for (std::size_t i = 0; i < path.size(); ++i)
        CHECK(r.trace[std::size_t(path[i].message)].dim == 2 - int(i));

    run_report big;
    big.dim = 7;
    CHECK_THROWS_WITH_AS(write_timeline_svg(big, os), doctest::Contains("128 nodes"), usage_error);
}

TEST_CASE("steps of allgather on a 3-cube are Grama et al.'s Figure 4.11") {
    const algorithm_steps s = record_steps(params("allgather", "hypercube", 3));
    REQUIRE(s.steps.size() == 4);
    CHECK(s.steps[0].labels ==
          std::vector<std::string>{"(0)", "(1)", "(2)", "(3)", "(4)", "(5)", "(6)", "(7)"});
    CHECK(s.steps[1].labels == repeat({"(0,1)", "(2,3)", "(4,5)", "(6,7)"}, 2));
    CHECK(s.steps[2].labels == repeat({"(0,1,2,3)", "(4,5,6,7)"}, 4));
    CHECK(s.steps[3].labels == repeat({"(0,1,2,3,4,5,6,7)"}, 8));
    for (std::size_t k = 1; k < 4; ++k) {
        CHECK(s.steps[k].messages.size() == 8);
        CHECK(s.steps[k].carried.size() == 8);
    }
    // In step 2 node 0 receives node 2's pair.
    const auto& st = s.steps[2];
    for (std::size_t i = 0; i < st.messages.size(); ++i)
        if (s.report.trace[st.messages[i]].to == 0) CHECK(st.carried[i] == "(2,3)");
}

TEST_CASE("steps of broadcast (Figure 4.6) and prefix sums (Figure 4.13)") {
    const algorithm_steps b = record_steps(params("broadcast", "binomial", 3));
    REQUIRE(b.steps.size() == 4);
    const auto holders = [&](std::size_t k) {
        std::vector<int> v;
        for (int i = 0; i < 8; ++i)
            if (b.steps[k].labels[std::size_t(i)] == "(0)") v.push_back(i);
        return v;
    };
    CHECK(holders(0) == std::vector<int>{0});
    CHECK(holders(1) == std::vector<int>{0, 4});
    CHECK(holders(2) == std::vector<int>{0, 2, 4, 6});
    CHECK(holders(3) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});

    // Figure 4.13 (a)-(d), by hand: every node's result buffer [..] and
    // outgoing buffer (..) before steps 1, 2, 3 and at the end; node k's
    // input is k, so [0..2] is 0 + 1 + 2 = 3.
    const algorithm_steps s = record_steps(params("scan", "hypercube", 3));
    const std::vector<std::vector<std::string>> fig_4_13 = {
        {"[0] (0)", "[1] (1)", "[2] (2)", "[3] (3)", "[4] (4)", "[5] (5)", "[6] (6)", "[7] (7)"},
        {"[0] (0,1)", "[0,1] (0,1)", "[2] (2,3)", "[2,3] (2,3)", "[4] (4,5)", "[4,5] (4,5)",
         "[6] (6,7)", "[6,7] (6,7)"},
        {"[0] (0..3)", "[0,1] (0..3)", "[0..2] (0..3)", "[0..3] (0..3)", "[4] (4..7)",
         "[4,5] (4..7)", "[4..6] (4..7)", "[4..7] (4..7)"},
        {"[0] (0..7)", "[0,1] (0..7)", "[0..2] (0..7)", "[0..3] (0..7)", "[0..4] (0..7)",
         "[0..5] (0..7)", "[0..6] (0..7)", "[0..7] (0..7)"},
    };
    REQUIRE(s.steps.size() == 4);
    for (std::size_t k = 0; k < 4; ++k)
        CHECK(s.steps[k].labels == fig_4_13[k]);
    // An arrow carries its sender's outgoing buffer: node 2 sends (2,3) to node 0 in step 2.
    for (std::size_t m = 0; m < s.steps[2].messages.size(); ++m)
        if (s.report.trace[s.steps[2].messages[m]].from == 2)
            CHECK(s.steps[2].carried[m] == "(2,3)");
}

TEST_CASE("shift labels every step: the packet each node holds, between the phases too") {
    // Grama et al. 4.6.2 on a 3-cube, q = 3 = 2 + 1: array position r on node
    // gray(r) (positions 0..7 on nodes 0 1 3 2 6 7 5 4). The 2-phase crosses
    // dim 0 first (step 1), then reaches r + 2 (step 2); the 1-phase moves on
    // to r + 3 (step 3). By hand: node 0 (position 0) holds position 6's
    // packet (node 5) after step 2 and position 5's (node 7) after step 3.
    run_params p = params("shift", "gray", 3);
    p.shift = 3;
    const algorithm_steps s = record_steps(p);
    const std::vector<std::vector<std::string>> held = {
        {"(0)", "(1)", "(2)", "(3)", "(4)", "(5)", "(6)", "(7)"},
        {"(1)", "(0)", "(3)", "(2)", "(5)", "(4)", "(7)", "(6)"},
        {"(5)", "(4)", "(1)", "(0)", "(7)", "(6)", "(3)", "(2)"},
        {"(7)", "(5)", "(0)", "(4)", "(6)", "(2)", "(1)", "(3)"},
    };
    REQUIRE(s.steps.size() == 4);
    for (std::size_t k = 0; k < 4; ++k) {
        CHECK(s.steps[k].labels == held[k]);
        // Every arrow brings the packet its receiver holds after the step.
        for (std::size_t m = 0; m < s.steps[k].messages.size(); ++m)
            CHECK(s.steps[k].carried[m] ==
                  held[k][std::size_t(s.report.trace[s.steps[k].messages[m]].to)]);
    }
    // One routed step: before it, every node its own packet.
    p.algo = "ecube";
    const algorithm_steps e = record_steps(p);
    REQUIRE(e.steps.size() == 2);
    CHECK(e.steps[0].labels == held[0]);
    CHECK(e.steps[1].labels ==
          std::vector<std::string>{"(5)", "(6)", "(7)", "(0)", "(1)", "(2)", "(3)", "(4)"});
}

TEST_CASE("scatter and gather show the blocks held for others (Figure 4.15)") {
    // Figure 4.15 (a)-(d): the blocks are named by their destination; a node
    // keeps those of its subcube until it passes them on.
    const std::vector<std::vector<std::string>> fig_4_15 = {
        {"(0,1,2,3,4,5,6,7)", "", "", "", "", "", "", ""},
        {"(0,1,2,3)", "", "", "", "(4,5,6,7)", "", "", ""},
        {"(0,1)", "", "(2,3)", "", "(4,5)", "", "(6,7)", ""},
        {"(0)", "(1)", "(2)", "(3)", "(4)", "(5)", "(6)", "(7)"}};
    const algorithm_steps s = record_steps(params("scatter", "binomial", 3, 2));
    REQUIRE(s.steps.size() == 4);
    for (std::size_t k = 0; k < 4; ++k)
        CHECK(s.steps[k].labels == fig_4_15[k]);
    // The first message carries half of the root's blocks.
    CHECK(s.steps[1].carried == std::vector<std::string>{"(4,5,6,7)"});
    // Gather is the same picture backwards.
    const algorithm_steps g = record_steps(params("gather", "binomial", 3));
    for (std::size_t k = 0; k < 4; ++k)
        CHECK(g.steps[k].labels == fig_4_15[3 - k]);
}

TEST_CASE("alltoall shows every block a node holds in the middle steps (Figures 4.20, 4.21)") {
    // Figure 4.20: after the exchanges on dimensions 0..k-1 node i holds the
    // blocks {s,t} from the s that agree with i from bit k up, for the t that
    // agree with i below bit k; (b) node 0: {0,0} {0,2} {0,4} {0,6} {1,0} ...
    const algorithm_steps s = record_steps(params("alltoall", "dimension-exchange", 3));
    REQUIRE(s.steps.size() == 4);
    CHECK(s.steps[1].labels[0] == "{0,0} {0,2} {0,4} {0,6} {1,0} {1,2} {1,4} {1,6}");
    CHECK(s.steps[2].labels[5] == "{4,1} {4,5} {5,1} {5,5} {6,1} {6,5} {7,1} {7,5}");
    for (int k = 0; k <= 3; ++k)
        for (int i = 0; i < 8; ++i) {
            std::string want;
            const int low = (1 << k) - 1;
            for (int src = 0; src < 8; ++src)
                for (int dst = 0; dst < 8; ++dst)
                    if ((src & ~low) == (i & ~low) && (dst & low) == (i & low))
                        want += (want.empty() ? "" : " ") + fmt::format("{{{},{}}}", src, dst);
            CHECK(s.steps[std::size_t(k)].labels[std::size_t(i)] == want);
        }
    // A message carries the half meant for the other subcube: node 0's first.
    for (std::size_t m = 0; m < s.steps[1].messages.size(); ++m)
        if (s.report.trace[s.steps[1].messages[m]].from == 0)
            CHECK(s.steps[1].carried[m] == "{0,1} {0,3} {0,5} {0,7}");
    // Figure 4.21 (pairwise): in step j node i gives {i, i^j} to i^j and
    // keeps the blocks it has not sent yet.
    const algorithm_steps w = record_steps(params("alltoall", "pairwise", 2));
    CHECK(w.steps[1].labels[0] == "{0,0} {0,2} {0,3} {1,0}");
    CHECK(w.steps[2].labels[0] == "{0,0} {0,3} {1,0} {2,0}");
    CHECK(w.steps[3].labels[0] == "{0,0} {1,0} {2,0} {3,0}");
    // The captions say how the step's messages travel.
    CHECK(step_svgs(s)[1].find("step 1 of 3: 8 messages on dim 0;") != std::string::npos);
    CHECK(step_svgs(w)[1].find("step 1 of 3: 4 routed messages;") != std::string::npos);
}

TEST_CASE("4-cube labels write runs, progressions and products; the lists have them in full") {
    // Figure 4.20's states on a 4-cube: after step k node i holds {s,t} for
    // the s that agree with i from bit k up (a run) and the t that agree with
    // i below bit k (a progression of step 2^k).
    const algorithm_steps s = record_steps(params("alltoall", "dimension-exchange", 4));
    REQUIRE(s.steps.size() == 5);
    CHECK(s.steps[0].labels[5] == "{5→0..15}");
    CHECK(s.steps[1].labels[0] == "{0,1→0,2,4..14}");
    CHECK(s.steps[2].labels[6] == "{4..7→2,6,10,14}");
    CHECK(s.steps[4].labels[5] == "{0..15→5}");
    std::string full;
    for (const int src : {0, 1})
        for (int dst = 0; dst < 16; dst += 2)
            full += (full.empty() ? "" : " ") + fmt::format("{{{},{}}}", src, dst);
    CHECK(s.steps[1].lists[0] == full);
    // What an arrow brings: the half for the other subcube, in full in the list.
    for (std::size_t m = 0; m < s.steps[1].messages.size(); ++m)
        if (s.report.trace[s.steps[1].messages[m]].from == 0) {
            CHECK(s.steps[1].carried[m] == "{0→1,3,5..15}");
            CHECK(s.steps[1].carried_lists[m] ==
                  "{0,1} {0,3} {0,5} {0,7} {0,9} {0,11} {0,13} {0,15}");
        }
    const algorithm_steps a = record_steps(params("allgather", "hypercube", 4));
    CHECK(a.steps[1].labels[2] == "(2,3)");
    CHECK(a.steps[1].lists[2].empty()); // nothing abbreviated
    CHECK(a.steps[2].labels[2] == "(0..3)");
    CHECK(a.steps[4].labels[9] == "(0..15)");
    CHECK(a.steps[4].lists[9] == "(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15)");
    CHECK(record_steps(params("scan", "hypercube", 4)).steps[4].labels[15] == "[0..15] (0..15)");
}

TEST_CASE("memory tables of d-cycles allgather are Mathur & Johnsson's Figure 8") {
    run_params p = params("allgather", "d-cycles", 3, 3);
    p.ports = port_model::all_port;
    const algorithm_steps s = record_steps(p);
    REQUIRE(s.table);
    REQUIRE(s.steps.size() == 8);
    // Figure 8, rows Init. and steps 0..6, memory locations 0..2, nodes P0..P7.
    const char* fig8[8][3] = {
        {"00 01 02 03 04 05 06 07", "10 11 12 13 14 15 16 17", "20 21 22 23 24 25 26 27"},
        {"01 00 03 02 05 04 07 06", "12 13 10 11 16 17 14 15", "24 25 26 27 20 21 22 23"},
        {"03 02 01 00 07 06 05 04", "16 17 14 15 12 13 10 11", "25 24 27 26 21 20 23 22"},
        {"02 03 00 01 06 07 04 05", "14 15 16 17 10 11 12 13", "21 20 23 22 25 24 27 26"},
        {"06 07 04 05 02 03 00 01", "15 14 17 16 11 10 13 12", "23 22 21 20 27 26 25 24"},
        {"07 06 05 04 03 02 01 00", "17 16 15 14 13 12 11 10", "27 26 25 24 23 22 21 20"},
        {"05 04 07 06 01 00 03 02", "13 12 11 10 17 16 15 14", "26 27 24 25 22 23 20 21"},
        {"04 05 06 07 00 01 02 03", "11 10 13 12 15 14 17 16", "22 23 20 21 26 27 24 25"}};
    for (std::size_t k = 0; k < 8; ++k)
        for (std::size_t j = 0; j < 3; ++j) {
            std::string row;
            for (std::size_t i = 0; i < 8; ++i)
                row += (i ? " " : "") + s.steps[k].memory[i][j];
            CHECK(row == fig8[k][j]);
        }
}

TEST_CASE("the d-cycles reduction draws Mathur & Johnsson's Figures 12-19") {
    run_params p = params("reduce-scatter", "d-cycles", 3, 3);
    p.ports = port_model::all_port;
    const algorithm_steps s = record_steps(p);
    REQUIRE(s.reduction_table);
    REQUIRE(s.steps.size() == 8);
    // Figures 13-19, one per step: per memory address 0..23, P0..P7, with
    // * = sends its partial sum (filled circle), + = receives and adds,
    // o = added before (unfilled circle), . = empty. Addresses 0..2 of every
    // step are Figure 12. The source's text lost or moved a mark in 8 rows;
    // these follow its definition (one sender and one receiver per address
    // and step; step u's sum covers u + 2 nodes; address x ends at node x/3):
    // step 4 rows 11 (source: oo*.oo+o) and 22 (o+o*.o.o), step 5 row 20
    // (oo+*o..o), step 6 rows 15 (ooooo*+o), 19 (oooooo+o), 21-23 (ooooooo+).
    const std::vector<std::vector<std::string>> figs = {
        {"....*+..", ".*.+....", "..*...+.", "....+*..", "*.+.....", "...*...+",
         "......*+", ".+.*....", "*...+...", "......+*", "+.*.....", ".*...+..",
         "*+......", ".....*.+", "..+...*.", "+*......", "....*.+.", "...+...*",
         "..*+....", ".....+.*", "+...*...", "..+*....", "....+.*.", ".+...*.."},
        {"....o*.+", ".o.*...+", "..o...*+", "....*o+.", "o.*...+.", "...o..+*",
         ".....+o*", ".*.o.+..", "o...*+..", "....+.*o", "*.o.+...", ".o..+*..",
         "o*.+....", "...+.o.*", "..*+..o.", "*o+.....", "..+.o.*.", "..+*...o",
         ".+o*....", ".+...*.o", "*+..o...", "+.*o....", "+...*.o.", "+*...o.."},
        {"....oo+*", ".o.o.+.*", "..o+..o*", "....oo*+", "o.o.+.*.", "..+o..*o",
         "....+*oo", ".o.o.*.+", "o+..o*..", "....*+oo", "o.o.*.+.", "+o..*o..",
         "oo+*....", ".+.*.o.o", "..o*..o+", "oo*+....", "+.*.o.o.", "..*o..+o",
         "+*oo....", ".*.+.o.o", "o*..o+..", "*+oo....", "*.+.o.o.", "*o..+o.."},
        {"..+.oo*o", ".o.o+*.o", ".+o*..oo", "...+ooo*", "o.o.*+o.", "+.*o..oo",
         "+...*ooo", ".o.o.o+*", "o*.+oo..", ".+..o*oo", "o.o.o.*+", "*o+.oo..",
         "oo*o..+.", "+*.o.o.o", "..oo.+o*", "ooo*...+", "*+o.o.o.", "..oo+.*o",
         "*ooo+...", ".o+*.o.o", "oo..o*.+", "o*oo.+..", "o.*+o.o.", "oo..*o+."},
        {"..*+oooo", ".o.o*o+o", ".*oo.+oo", "..+*oooo", "o.o.o*o+", "*.oo+.oo",
         "*+..oooo", ".o.o+o*o", "oo.*oo.+", "+*..oooo", "o.o.o+o*", "oo*.oo+.",
         "oooo..*+", "*o+o.o.o", ".+oo.*oo", "oooo..+*", "o*o+o.o.", "+.oo*.oo",
         "oooo*+..", "+o*o.o.o", "oo.+oo.*", "oooo+*..", "o+o*o.o.", "oo+.oo*."},
        {".+o*oooo", ".o+ooo*o", ".ooo+*oo", "+.*ooooo", "o.o+ooo*", "o.oo*+oo",
         "o*.+oooo", "+o.o*ooo", "oo.ooo+*", "*o+.oooo", "o+o.o*oo", "ooo.oo*+",
         "oooo.+o*", "oo*o.o+o", "+*oo.ooo", "oooo+.*o", "ooo*o.o+", "*+ooo.oo",
         "ooooo*.+", "*ooo+o.o", "oo+*oo.o", "oooo*o+.", "o*ooo+o.", "oo*+ooo."},
        {"+*oooooo", "+o*ooooo", "+ooo*ooo", "*+oooooo", "o+o*oooo", "o+ooo*oo",
         "oo+*oooo", "*o+ooooo", "oo+ooo*o", "oo*+oooo", "o*o+oooo", "ooo+ooo*",
         "oooo+*oo", "oooo+o*o", "*ooo+ooo", "oooo*+oo", "ooooo+o*", "o*ooo+oo",
         "oooooo+*", "oooo*o+o", "oo*ooo+o", "oooooo*+", "ooooo*o+", "ooo*ooo+"},
    };
    const std::map<std::string, std::string> mark = {{"", "."}, {"●", "*"}, {"+", "+"}, {"○", "o"}};
    for (std::size_t k = 1; k < 8; ++k)
        for (std::size_t x = 0; x < 24; ++x) {
            std::string row;
            for (std::size_t i = 0; i < 8; ++i)
                row += mark.at(s.steps[k].memory[i][x]);
            CHECK_MESSAGE(row == figs[k - 1][x], "step " << k - 1 << " address " << x);
        }
    // The arrows say which sums they carry: node 4 sends address 0's to node 5 first.
    for (std::size_t m = 0; m < s.steps[1].messages.size(); ++m)
        if (s.report.trace[s.steps[1].messages[m]].from == 4 &&
            s.report.trace[s.steps[1].messages[m]].to == 5)
            CHECK(s.steps[1].carried[m] == "Σ0");
}

TEST_CASE("ASPC draws Hu's Table 1 from the run") {
    run_params p = params("aspc", "four-step", 3);
    p.ports = port_model::all_port;
    const algorithm_steps s = record_steps(p);
    REQUIRE(s.steps.size() == 5); // Theorem 5: four steps
    // Table 1, phi_i(j) for n = 3: rows j = 0..2, columns logical i = 0..7.
    CHECK(s.schedule == std::vector<std::vector<int>>{{0, 1, 0, 2, 0, 1, 0, 2},
                                                      {1, 0, 2, 0, 1, 0, 2, 0},
                                                      {2, 2, 1, 1, 2, 2, 1, 1}});
    // After the plus half (step 2) logical node i holds (i - 2^j | j) in
    // slot j: physical node 0 is logical 0 and holds (7|0) (6|1) (4|2).
    CHECK(s.steps[2].labels[0] == "(7|0) (6|1) (4|2)");
    // n = 5 (Table 2, whose text lost entries): the definition's table.
    p.dim = 5;
    const algorithm_steps t = record_steps(p);
    for (int j = 0; j < 5; ++j)
        for (node_id i = 0; i < 32; ++i)
            CHECK(t.schedule[std::size_t(j)][i] == aspc_schedule::phi(5, i, j));
}

// Hu, section 4: in pipelined round t, element l of every node does
// inter-node iteration t - l ("the communication for the third, second, and
// first iterations for the first, second, and third elements ... can be
// overlapped"); a round is one ASPC of 4 steps (2 for the last, slot 0 alone),
// then the local stage takes a step per iteration.
TEST_CASE("descend draws Hu's pipelined rounds from the run") {
    const int n = 3;
    const std::size_t M = 16, L = M >> n;
    run_params p = params("descend", "pipelined", n, M);
    p.ports = port_model::all_port;
    p.options["kernel"] = "prefix"; // descend order, as the source
    const algorithm_steps s = record_steps(p);
    const int rounds = int(L) + n - 1, inter = 4 * rounds - 2;
    REQUIRE(s.steps.size() == std::size_t(inter + 1 + 1)); // + log L = 1 local step
    const auto labels_after = [&](const std::function<int(std::size_t)>& done) {
        std::vector<std::string> v;
        for (int i = 0; i < 1 << n; ++i) {
            const std::size_t first = aspc_schedule::logical_of(node_id(i)) * L;
            std::string l;
            for (std::size_t c = 0; c < L; ++c)
                l += fmt::format("{}a{}:{}", c ? " " : "", first + c, done(c));
            v.push_back(l);
        }
        return v;
    };
    CHECK(s.steps[0].labels == labels_after([](std::size_t) { return 0; }));
    CHECK(s.steps.back().labels == labels_after([](std::size_t) { return 4; }));
    // The elements the arrows carry, "aJ:K" (a[J] after K iterations), by
    // round: column J mod L at iteration K belongs to round J mod L + K.
    std::vector<std::set<std::pair<std::size_t, int>>> carried(std::size_t(rounds) + 1);
    for (std::size_t k = 1; k < s.steps.size(); ++k)
        for (const std::string& c : s.steps[k].carried) {
            std::istringstream words(c);
            for (std::string w; words >> w;) {
                std::size_t j = 0;
                int it = 0;
                if (std::sscanf(w.c_str(), "a%zu:%d", &j, &it) != 2) continue;
                const auto round = std::size_t(int(k) <= inter ? int(k - 1) / 4 : rounds);
                carried[round].insert({j % L, it});
            }
        }
    for (int t = 0; t < rounds; ++t) {
        std::set<std::pair<std::size_t, int>> want;
        for (int it = std::max(0, t - int(L) + 1); it <= std::min(n - 1, t); ++it)
            want.insert({std::size_t(t - it), it});
        CHECK_MESSAGE(carried[std::size_t(t)] == want, "round ", t);
        // After the round, element l has done min(n, t - l + 1) iterations.
        const std::size_t end = std::size_t(std::min(4 * (t + 1), inter));
        CHECK(s.steps[end].labels ==
              labels_after([&](std::size_t l) { return std::clamp(t - int(l) + 1, 0, n); }));
    }
    // The local stage (b = 0): the block ends, after the n inter-node iterations.
    CHECK(carried.back() == std::set<std::pair<std::size_t, int>>{{0, n}, {L - 1, n}});
    // The direct schedule reaches the same result.
    p.algo = "direct";
    CHECK(record_steps(p).steps.back().labels == s.steps.back().labels);
}

// The collectives' working buffers reach the picture through scratch_watch
// (collectives/scratch.hpp), which names the node: fibers, several nodes to
// an OS thread, draw what threads draw.
TEST_CASE("fibers and threads draw the same pictures") {
    std::vector<run_params> runs = {params("alltoall", "dimension-exchange", 3),
                                    params("alltoall", "ring", 3),
                                    params("scatter", "binomial", 3),
                                    params("gather", "binomial", 3),
                                    params("aspc", "four-step", 3),
                                    params("descend", "pipelined", 3, 16),
                                    params("reduce-scatter", "d-cycles", 3, 3),
                                    params("allgather", "hypercube", 3)};
    for (run_params& p : runs) {
        if (p.op != "alltoall") p.ports = port_model::all_port;
        p.executor = executor_kind::threads;
        const algorithm_steps t = record_steps(p);
        p.executor = executor_kind::fibers;
        p.workers = 2;
        const algorithm_steps f = record_steps(p);
        REQUIRE(f.steps.size() == t.steps.size());
        for (std::size_t k = 0; k < t.steps.size(); ++k) {
            CAPTURE(p.op);
            CAPTURE(k);
            CHECK(f.steps[k].labels == t.steps[k].labels);
            CHECK(f.steps[k].carried == t.steps[k].carried);
            CHECK(f.steps[k].memory == t.steps[k].memory);
        }
        CHECK(f.schedule == t.schedule);
        CHECK(step_svgs(f) == step_svgs(t));
    }
}

TEST_CASE("record_steps refuses what it cannot draw") {
    CHECK_THROWS_WITH_AS(record_steps(params("allgather", "hypercube", 7)),
                         doctest::Contains("up to d = 6"), usage_error);
    CHECK_THROWS_WITH_AS(record_steps(params("descend", "pipelined", 3, 128)),
                         doctest::Contains("up to M = 64 elements"), usage_error);
    CHECK_THROWS_WITH_AS(record_steps(params("allgather", "nonesuch", 3)),
                         doctest::Contains("unknown algorithm"), usage_error);
}

// Every catalog entry of an operation draw draws, at the first of a few
// cubes, port models and sizes that it fits: a new record of such an
// operation is drawn as soon as the catalog runs it.
TEST_CASE("every catalog algorithm of the operations draw draws is drawn") {
    const std::vector<std::string> ops = drawn_operations();
    REQUIRE(ops.size() >= 13);
    std::size_t drawn = 0;
    for (const algorithm_entry& e : builtin_catalog().entries()) {
        if (std::find(ops.begin(), ops.end(), e.op) == ops.end()) continue;
        INFO(e.op, " ", e.algo);
        CHECK(draws(e));
        std::optional<run_params> fit;
        for (const int dim : {3, 2, 4})
            for (const auto& policy : port_policies)
                for (const std::size_t words : {std::size_t(dim), std::size_t(1) << dim})
                    if (run_params p = params(e.op, e.algo, dim, words); !fit) {
                        p.ports = policy.model;
                        for (const auto& o : e.options)
                            p.options.try_emplace(o.name, o.fallback);
                        if (e.unfit(p).empty()) fit = p;
                    }
        REQUIRE(fit);
        const algorithm_steps s = record_steps(*fit);
        CHECK(s.params.algo == e.algo);
        CHECK(s.steps.size() == std::size_t(s.report.steps) + 1);
        CHECK(s.report.trace.size() > 0);
        for (const step_state& st : s.steps)
            CHECK(st.labels.size() == std::size_t(1) << fit->dim);
        // After the last step some node holds a result.
        CHECK(std::any_of(s.steps.back().labels.begin(), s.steps.back().labels.end(),
                          [](const std::string& l) { return !l.empty(); }));
        ++drawn;
    }
    CHECK(drawn >= 30);
    // A record outside the tables draw knows has no picture.
    static constexpr algorithm_record elsewhere{
        "allgather", "elsewhere", 0, "", "", [](const call_shape&) { return 0.0; }};
    CHECK_FALSE(draws(entry_of(elsewhere)));
}

TEST_CASE("all-port alltoall: a node holds a block while it holds any of its words") {
    // Word j of every block goes over dimension (j + u) % 3 in step u
    // (alltoall.hpp): once the dimensions in D_j are done, node i holds word
    // j of {s,t} for the s that agree with i outside D_j and the t that agree
    // with i in D_j (Figure 4.20 per word).
    run_params p = params("alltoall", "all-port", 3, 3);
    p.ports = port_model::all_port;
    const algorithm_steps s = record_steps(p);
    REQUIRE(s.steps.size() == 4);
    for (int k = 0; k <= 3; ++k)
        for (int i = 0; i < 8; ++i) {
            std::string want;
            for (int src = 0; src < 8; ++src)
                for (int dst = 0; dst < 8; ++dst) {
                    bool held = false;
                    for (int j = 0; j < 3; ++j) {
                        int done = 0;
                        for (int u = 0; u < k; ++u)
                            done |= 1 << ((j + u) % 3);
                        held = held || ((src & ~done) == (i & ~done) && (dst & done) == (i & done));
                    }
                    if (held)
                        want += (want.empty() ? "" : " ") + fmt::format("{{{},{}}}", src, dst);
                }
            CAPTURE(k);
            CAPTURE(i);
            CHECK(s.steps[std::size_t(k)].labels[std::size_t(i)] == want);
        }
    // Step 1: node 0 sends word k of its blocks for the t with bit k set on dim k.
    REQUIRE(s.steps[1].messages.size() == 24);
    for (std::size_t m = 0; m < 24; ++m)
        if (const trace_record& t = s.report.trace[s.steps[1].messages[m]]; t.from == 0) {
            std::string want;
            for (int dst = 0; dst < 8; ++dst)
                if (dst >> t.dim & 1)
                    want += (want.empty() ? "" : " ") + fmt::format("{{0,{}}}", dst);
            CHECK(s.steps[1].carried[m] == want);
        }
}

TEST_CASE("the all-port trees and the d-cycles allreduce are drawn, their results from the run") {
    const auto last = [](std::string op, std::string algo) {
        run_params p = params(op, algo, 3, 3);
        p.ports = port_model::all_port;
        return record_steps(p).steps.back().labels;
    };
    const auto all = [](const std::string& l) { return std::vector<std::string>(8, l); };
    std::vector<std::string> own;
    for (int i = 0; i < 8; ++i)
        own.push_back(fmt::format("({})", i));
    for (const std::string trees : {"rotated-trees", "edge-disjoint-trees"}) {
        CHECK(last("broadcast", trees) == all("(0)"));
        CHECK(last("reduce", trees)[0] == "[0..7]");
    }
    CHECK(last("scatter", "rotated-trees") == own);
    // The rotated trees start on all three links of the root at once.
    run_params b = params("broadcast", "rotated-trees", 3, 3);
    b.ports = port_model::all_port;
    CHECK(record_steps(b).steps[1].messages.size() == 3);
    CHECK(last("gather", "rotated-trees")[0] == "(0,1,2,3,4,5,6,7)");
    CHECK(last("allreduce", "d-cycles") == all("[0..7]"));
}

TEST_CASE("a deadlock gives a wait-for graph: one arrow per blocked node, on its link") {
    run_params p = params("allgather", "ring", 2);
    p.link_capacity = 0;
    try {
        (void)record_steps(p);
        FAIL("the ring with unbuffered links should deadlock");
    } catch (const deadlock_error& e) {
        REQUIRE(e.waits().size() == 4);
        for (const auto& w : e.waits()) {
            CHECK(w.dim >= 0);
            CHECK(w.peer == (w.node ^ (1 << w.dim)));
        }
        const std::string svg = wait_for_svg(e, 2);
        CHECK(count(svg, "class=\"wait\"") == 4);
        std::ostringstream os;
        write_wait_for_html(e, p, os);
        CHECK(os.str().find("deadlock: 4 nodes are blocked") != std::string::npos);
    }
}

// The header explains the notation of the pictures it heads and no other:
// each key below names one notation by a phrase only its explanation has.
TEST_CASE("a page's header explains only the notation its own pictures use") {
    const std::map<std::string, std::string> notation = {
        {"blocks", "(0,1) = the blocks of nodes 0 and 1"},
        {"packet", "= node 5's packet"},
        {"sums", "[0..3] = the sum of the elements of nodes 0 to 3"},
        {"pairs", "{0,5} = node 0's block for node 5"},
        {"slots", "(3|1) = element 1 of logical node 3"},
        {"rounds", "a5:2 = element a[5]"},
        {"outgoing", "outgoing message buffer in parentheses"},
        {"table", "cell ij = element i of node j's data"},
        {"marks", "● sends the partial sum"},
        {"split", "d-cycles cuts each node's M'"}};
    struct page {
        std::string op, algo;
        bool all_port;
        std::set<std::string> uses;
    };
    for (const page& pg :
         std::vector<page>{{"allgather", "hypercube", false, {"blocks"}},
                           {"allgather", "d-cycles", true, {"blocks", "table", "split"}},
                           {"shift", "auto", false, {"packet"}},
                           {"reduce", "auto", false, {"sums"}},
                           {"reduce-scatter", "d-cycles", true, {"sums", "marks", "split"}},
                           {"allreduce", "d-cycles", true, {"sums", "split"}},
                           {"scan", "hypercube", false, {"outgoing"}},
                           {"alltoall", "dimension-exchange", false, {"pairs"}},
                           {"aspc", "four-step", true, {"slots"}},
                           {"descend", "pipelined", true, {"rounds"}}}) {
        run_params p = params(pg.op, pg.algo, 3, pg.op == "descend" ? 16 : 3);
        if (pg.all_port) p.ports = port_model::all_port;
        const std::string header = record_steps(p).notation;
        for (const auto& [name, phrase] : notation) {
            INFO(pg.op, " ", pg.algo, ": ", header);
            CHECK((header.find(phrase) != std::string::npos) == pg.uses.contains(name));
        }
    }
}
