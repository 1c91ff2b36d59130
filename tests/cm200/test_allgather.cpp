// The Mathur & Johnsson all-to-all broadcasts against a serial reference, their virtual
// time against the closed forms, and the d-cycles link usage.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <map>

#include <hcube/cost/cm200.hpp>

#include "cm200_test.hpp"

using namespace hcube;
using namespace hcube::test;

namespace {

const ag_algo all_broadcasts[] = {ag_algo::one_cycle, ag_algo::d_cycles, ag_algo::send_and_spread,
                                  ag_algo::one_source_at_a_time};

// The rank whose element s arrives in slot j of node v when data stay where
// they arrive, from the source's description of the data motion rather than its
// closed forms. One cycle (4.1, Figures 5 and 7): position q = G^-1(v) of the
// Gray-code cycle receives, in step j - 1, the block that started at position
// q + j. d cycles (4.2.1): location i = s mod d takes the exchange sequence
// (t_u + i) mod d, t_u the Gray code's transition sequence (0 1 0 2 0 1 0 for
// d = 3), so after j steps it holds the element of v xor the dimensions used.
std::uint64_t arrival_rank(std::uint64_t v, std::size_t j, std::size_t s, int d, ag_algo a,
                           node_order ord) {
    std::uint64_t origin = v;
    if (a == ag_algo::one_cycle) {
        const std::uint64_t q = (gray_code_inverse(v) + j) % (std::uint64_t(1) << d);
        origin = gray_code(q);
    } else {
        for (std::size_t u = 0; u < j; ++u) {
            const int t_u = std::countr_zero(u + 1); // G(u) and G(u + 1) differ in this bit
            origin ^= std::uint64_t(1) << ((t_u + int(s % std::size_t(d))) % d);
        }
    }
    return ord == node_order::binary ? origin : gray_code_inverse(origin);
}

// At d = 8 each size runs two of the four (order, index) pairs; sizes 8 and 9
// together cover all four.
node_order ix_order(index_mode ix) {
    return ix == index_mode::motion ? node_order::gray : node_order::binary;
}

} // namespace

TEST_CASE("allgather: every algorithm, order and index option equals the serial reference") {
    for (int d = 0; d <= test::sweep_dim(8); ++d) {
        machine mach(cfg(d, port_model::all_port));
        // Large machines take fewer cases (about 3.5 us per message on 2 cores).
        const std::size_t largest = d <= 5 ? 1000 : d <= 6 ? 64 : d == 7 ? 8 : 9;
        for (std::size_t m : sizes_for(d, largest))
            for (ag_algo a : all_broadcasts)
                for (node_order ord : {node_order::binary, node_order::gray})
                    for (index_mode ix : {index_mode::computation, index_mode::motion}) {
                        if (ix == index_mode::motion && a != ag_algo::d_cycles &&
                            a != ag_algo::one_cycle)
                            continue;
                        if (d >= 7 && a != ag_algo::d_cycles && (m > 1 || d == 8)) continue;
                        if (d == 8 && (m == 7 || (m == 9) != (ord == ix_order(ix)))) continue;
                        const cm200::options o{ord, ix};
                        CAPTURE(describe(d, m, a, o));
                        const auto out = run_allgather(mach, m, a, o);
                        const auto want = allgather_reference(mach.size(), m);
                        for (int v = 0; v < mach.size(); ++v) {
                            CAPTURE(v);
                            REQUIRE(out[v] == want);
                        }
                    }
    }
}

TEST_CASE("allgather: virtual time equals the closed forms (integer t_s, t_w)") {
    const double ts = 7, tw = 3;
    for (int d = 1; d <= 6; ++d) {
        machine mach(cfg(d, port_model::all_port, ts, tw));
        const auto parts = std::size_t(d);
        for (std::size_t m : sizes_for(d, 100)) {
            CAPTURE(d);
            CAPTURE(m);
            run_report r;
            for (node_order ord : {node_order::binary, node_order::gray}) {
                // d-cycles: (2^d - 1)(t_s + t_w ceil(M'/d)), both index options
                // (an index travels inside its element, one word with word_bytes 0).
                for (index_mode ix : {index_mode::computation, index_mode::motion}) {
                    run_allgather(mach, m, ag_algo::d_cycles, {ord, ix}, &r);
                    CHECK(r.virtual_time == cost::cm200::d_cycles(d, m, ts, tw));
                    CHECK(r.virtual_time == ((1 << d) - 1) * (ts + tw * double((m + d - 1) / d)));
                    CHECK(r.steps == (1 << d) - 1);
                }
                run_allgather(mach, m, ag_algo::one_cycle, {ord, {}}, &r);
                CHECK(r.virtual_time == ((1 << d) - 1) * (ts + tw * double(m)));
                CHECK(r.virtual_time == cost::cm200::one_cycle(d, m, ts, tw));
                run_allgather(mach, m, ag_algo::send_and_spread, {ord, {}}, &r);
                CHECK(r.virtual_time == cost::cm200::send_and_spread(d, m, parts, ts, tw));
                // All-port: a source's spread starts as soon as its node is done with
                // the previous ones, so consecutive spreads overlap and the source's
                // "one source at a time" sum is an upper bound (exact under
                // single-port, next test case).
                run_allgather(mach, m, ag_algo::one_source_at_a_time, {ord, {}}, &r);
                CHECK(r.virtual_time <= cost::cm200::one_source_at_a_time(d, m, parts, ts, tw));
                CHECK(r.virtual_time > cost::cm200::spread(d, m, parts, ts, tw));
            }
        }
    }
}

TEST_CASE("allgather: one-cycle and the alternatives under single-port") {
    const double ts = 5, tw = 2;
    for (int d = 1; d <= 5; ++d) {
        machine mach(cfg(d, port_model::single_port, ts, tw));
        for (std::size_t m : {std::size_t(1), std::size_t(13)}) {
            CAPTURE(d);
            CAPTURE(m);
            run_report r;
            const auto want = allgather_reference(mach.size(), m);
            for (ag_algo a :
                 {ag_algo::one_cycle, ag_algo::send_and_spread, ag_algo::one_source_at_a_time}) {
                const auto out = run_allgather(mach, m, a, {node_order::gray, {}}, &r);
                for (const auto& o : out)
                    REQUIRE(o == want);
            }
            run_allgather(mach, m, ag_algo::one_cycle, {}, &r);
            CHECK(r.virtual_time == cost::cm200::one_cycle(d, m, ts, tw));
            run_allgather(mach, m, ag_algo::send_and_spread, {}, &r);
            CHECK(r.virtual_time == cost::cm200::send_and_spread(d, m, 1, ts, tw));
            run_allgather(mach, m, ag_algo::one_source_at_a_time, {}, &r);
            CHECK(r.virtual_time == cost::cm200::one_source_at_a_time(d, m, 1, ts, tw));
        }
    }
}

TEST_CASE("allgather: index motion costs its 32-bit index when words are bytes") {
    // With 4-byte words an int32 element is one word, and an element plus its
    // index two: motion doubles the t_w term (the source's b_11, b_12 of 6.1).
    const int d = 4;
    auto c = cfg(d, port_model::all_port, 10, 1);
    c.cost.word_bytes = 4;
    machine mach(c);
    const std::size_t m = 12;
    std::vector<std::vector<std::int32_t>> in(16, std::vector<std::int32_t>(m, 1)),
        out(16, std::vector<std::int32_t>(16 * m));
    for (index_mode ix : {index_mode::computation, index_mode::motion}) {
        const auto r = mach.run([&](node& me) {
            cm200::allgather_d_cycles<std::int32_t>(me, in[me.id()], out[me.id()],
                                                    {node_order::binary, ix});
        });
        const double words = ix == index_mode::motion ? 2.0 * 3 : 3.0;
        CHECK(r.virtual_time == 15 * (10 + words));
    }
}

TEST_CASE("allgather d-cycles: every link carries one message each way in every step") {
    for (int d = 1; d <= 6; ++d) {
        auto c = cfg(d, port_model::all_port, 1, 1);
        c.trace = true;
        machine mach(c);
        for (std::size_t m : {std::size_t(d), std::size_t(3 * d)}) {
            CAPTURE(d);
            CAPTURE(m);
            run_report r;
            run_allgather(mach, m, ag_algo::d_cycles, {}, &r);
            // (step, from, dim) -> messages
            std::map<std::tuple<std::int64_t, int, int>, int> per_link;
            for (const auto& t : r.trace) {
                CHECK(t.to == (t.from ^ (1 << t.dim)));
                CHECK(t.bytes == m / std::size_t(d) * sizeof(std::int64_t));
                ++per_link[{t.step, t.from, t.dim}];
            }
            const std::size_t steps = (std::size_t(1) << d) - 1;
            CHECK(per_link.size() == steps * std::size_t(mach.size()) * std::size_t(d));
            for (const auto& [key, count] : per_link)
                CHECK(count == 1);
            for (std::int64_t u = 0; u < std::int64_t(steps); ++u)
                for (int v = 0; v < mach.size(); ++v)
                    for (int k = 0; k < d; ++k)
                        CHECK(per_link.count({u, v, k}) == 1);
            for (const auto& l : r.links)
                CHECK(l.messages == steps);
        }
    }
}

TEST_CASE("allgather d-cycles: with M' < d the empty subblocks leave their links idle") {
    const int d = 5;
    auto c = cfg(d, port_model::all_port, 1, 1);
    machine mach(c);
    run_report r;
    const std::size_t m = 2; // locations 2, 3, 4 are empty
    const auto out = run_allgather(mach, m, ag_algo::d_cycles, {}, &r);
    for (const auto& o : out)
        REQUIRE(o == allgather_reference(mach.size(), m));
    // Location i crosses dimension (t_u + i) mod d: the busy links of a step
    // are those of locations 0 and 1 only.
    std::uint64_t total = 0;
    for (const auto& l : r.links)
        total += l.messages;
    CHECK(total == std::uint64_t(mach.size()) * 31 * m);
    CHECK(r.virtual_time == 31 * (1 + 1));
}

TEST_CASE("allgather: failure paths name the node and the values") {
    machine mach(cfg(3, port_model::single_port));
    SUBCASE("d-cycles refuses single-port") {
        try {
            run_allgather(mach, 3, ag_algo::d_cycles, {});
            FAIL("d-cycles ran under single-port");
        } catch (const run_error& e) {
            const std::string what = e.what();
            CHECK(what.find("d-cycles exchanges on all 3 links at once") != std::string::npos);
            CHECK(what.find("--ports all") != std::string::npos);
            CHECK(what.find("node " + std::to_string(e.node())) != std::string::npos);
        }
    }
    SUBCASE("an output of the wrong size") {
        std::vector<int> in(2), out(15);
        try {
            mach.run(
                [&](node& me) { cm200::allgather_one_cycle<int>(me, in, std::span<int>(out)); });
            FAIL("ran with a short output");
        } catch (const run_error& e) {
            CHECK(std::string(e.what()).find(
                      "allgather output holds 15 elements, needs 8 x 2 = 16") != std::string::npos);
        }
    }
    SUBCASE("an algorithm value outside the enumeration") {
        CHECK_THROWS_WITH_AS(run_allgather(mach, 1, ag_algo(7), {}),
                             doctest::Contains("unknown all-to-all broadcast algorithm 7"),
                             run_error);
    }
    // The machine is still usable.
    const auto out = run_allgather(mach, 2, ag_algo::one_cycle, {});
    CHECK(out[5] == allgather_reference(8, 2));
}

TEST_CASE("allgather: index arrival leaves the layout of 4.1 and 4.2.1 (no reordering)") {
    for (int d = 0; d <= 5; ++d) {
        machine mach(cfg(d, port_model::all_port));
        for (std::size_t m : sizes_for(d, 40))
            for (node_order ord : {node_order::binary, node_order::gray})
                for (ag_algo a : {ag_algo::one_cycle, ag_algo::d_cycles}) {
                    const cm200::options o{ord, index_mode::arrival};
                    CAPTURE(describe(d, m, a, o));
                    const auto out = run_allgather(mach, m, a, o);
                    const auto want = allgather_reference(mach.size(), m);
                    for (int v = 0; v < mach.size(); ++v)
                        for (std::size_t j = 0; j < std::size_t(mach.size()); ++j)
                            for (std::size_t s = 0; s < m; ++s) {
                                const auto r = arrival_rank(std::uint64_t(v), j, s, d, a, ord);
                                REQUIRE(out[v][j * m + s] == want[r * m + s]);
                            }
                }
    }
}
