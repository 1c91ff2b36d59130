// The Mathur & Johnsson all-to-all reductions against a serial reference (plus and the
// non-commutative 2x2 matrix product), their virtual time against the closed
// forms, the CM-200 allocation of arbitrary sizes (4.2.4), and failures.
#include <doctest/doctest.h>

#include <functional>

#include <hcube/cost/cm200.hpp>

#include "cm200_test.hpp"

using namespace hcube;
using namespace hcube::test;

namespace {

const rs_algo all_reductions[] = {rs_algo::one_cycle, rs_algo::d_cycles,
                                  rs_algo::reduce_and_spread};

// Unique per (node, index), so the sums differ from element to element and an
// element in the wrong place shows.
std::int64_t unique_value(int v, std::size_t s) {
    return value_for<std::int64_t>(v, s);
}

template <class T, class Op, class Make>
void check_against_reference(machine& mach, std::size_t total, rs_algo a, cm200::options o, Op op,
                             Make make) {
    std::vector<std::vector<T>> in;
    const auto out = run_reduce_scatter<T>(mach, total, a, o, op, make, &in);
    for (int v = 0; v < mach.size(); ++v) {
        CAPTURE(v);
        REQUIRE(out[v] ==
                reduce_scatter_reference(in, cm200::rank_of(node_id(v), o.order), o.order, op));
    }
}

} // namespace

TEST_CASE("reduce-scatter: every algorithm and order equals the serial reference, plus and "
          "matrix product") {
    for (int d = 0; d <= test::sweep_dim(8); ++d) {
        machine mach(cfg(d, port_model::all_port));
        const std::size_t n = std::size_t(1) << d;
        // Block sizes B (M = N B); large machines take fewer cases.
        const std::size_t largest = d <= 4 ? 1000 : d <= 6 ? 37 : 1;
        for (std::size_t b : sizes_for(d, largest))
            for (rs_algo a : all_reductions)
                for (node_order ord : {node_order::binary, node_order::gray})
                    for (index_mode ix : {index_mode::computation, index_mode::motion}) {
                        // Index motion is an option of the cycle algorithms only; at
                        // d = 8 binary order computes, Gray order moves indices.
                        if (ix == index_mode::motion && a == rs_algo::reduce_and_spread) continue;
                        if (d == 8 && (a != rs_algo::d_cycles ||
                                       (ord == node_order::gray) != (ix == index_mode::motion)))
                            continue;
                        const cm200::options o{ord, ix};
                        CAPTURE(describe(d, b, a, o));
                        check_against_reference<std::int64_t>(mach, n * b, a, o, std::plus<>{},
                                                              unique_value);
                        check_against_reference<mat2>(mach, n * b, a, o, mat2_product{}, mat2_for);
                    }
    }
}

TEST_CASE("reduce-scatter: any M per node, allocated as on the CM-200 (4.2.4)") {
    // M = 37 on 8 nodes: ceil(37/8) = 5 to ranks 0..6 (alpha = 7), 2 to rank 7.
    // M = 13 on 16 nodes: 1 to ranks 0..12, nothing to ranks 13..15.
    for (auto [d, total] : {std::pair{3, std::size_t(37)}, std::pair{4, std::size_t(13)},
                            std::pair{5, std::size_t(1000)}, std::pair{2, std::size_t(1)}}) {
        machine mach(cfg(d, port_model::all_port));
        for (rs_algo a : all_reductions)
            for (node_order ord : {node_order::binary, node_order::gray}) {
                const index_mode ix = a == rs_algo::reduce_and_spread || d % 2 == 0
                                          ? index_mode::computation
                                          : index_mode::motion;
                const cm200::options o{ord, ix};
                CAPTURE(describe(d, total, a, o));
                check_against_reference<std::int64_t>(mach, total, a, o, std::plus<>{},
                                                      unique_value);
                check_against_reference<mat2>(mach, total, a, o, mat2_product{}, mat2_for);
            }
    }
}

TEST_CASE("reduce-scatter: virtual time equals the closed forms (commutative operator)") {
    const double ts = 11, tw = 2;
    for (int d = 1; d <= 6; ++d) {
        machine mach(cfg(d, port_model::all_port, ts, tw));
        const std::size_t n = std::size_t(1) << d;
        for (std::size_t b : sizes_for(d, 100)) {
            CAPTURE(d);
            CAPTURE(b);
            for (node_order ord : {node_order::binary, node_order::gray}) {
                run_report r;
                const cm200::options o{ord, index_mode::computation};
                for (index_mode ix : {index_mode::computation, index_mode::motion}) {
                    run_reduce_scatter<std::int64_t>(mach, n * b, rs_algo::d_cycles, {ord, ix},
                                                     std::plus<>{}, unique_value, nullptr, &r);
                    CHECK(r.virtual_time == ((1 << d) - 1) * (ts + tw * double((b + d - 1) / d)));
                    CHECK(r.virtual_time == cost::cm200::d_cycles(d, b, ts, tw));
                }
                run_reduce_scatter<std::int64_t>(mach, n * b, rs_algo::one_cycle, o, std::plus<>{},
                                                 unique_value, nullptr, &r);
                CHECK(r.virtual_time == ((1 << d) - 1) * (ts + tw * double(b)));
                run_reduce_scatter<std::int64_t>(mach, n * b, rs_algo::reduce_and_spread, o,
                                                 std::plus<>{}, unique_value, nullptr, &r);
                CHECK(r.virtual_time ==
                      cost::cm200::reduce_and_spread(d, n * b, std::size_t(d), ts, tw));
            }
        }
        // Arbitrary M: the critical path is block 0's, ceil(M/N) elements.
        run_report r;
        run_reduce_scatter<std::int64_t>(mach, 3 * n + 1, rs_algo::d_cycles, {}, std::plus<>{},
                                         unique_value, nullptr, &r);
        CHECK(r.virtual_time == cost::cm200::d_cycles(d, 4, ts, tw));
    }
}

TEST_CASE("reduce-scatter: single-port runs one-cycle and reduce-and-spread, refuses d-cycles") {
    const double ts = 3, tw = 1;
    machine mach(cfg(4, port_model::single_port, ts, tw));
    run_report r;
    check_against_reference<mat2>(mach, 16 * 5, rs_algo::one_cycle, {}, mat2_product{}, mat2_for);
    check_against_reference<mat2>(mach, 16 * 5, rs_algo::reduce_and_spread, {}, mat2_product{},
                                  mat2_for);
    run_reduce_scatter<std::int64_t>(mach, 16 * 5, rs_algo::one_cycle, {}, std::plus<>{},
                                     unique_value, nullptr, &r);
    CHECK(r.virtual_time == cost::cm200::one_cycle(4, 5, ts, tw));
    run_reduce_scatter<std::int64_t>(mach, 16 * 5, rs_algo::reduce_and_spread, {}, std::plus<>{},
                                     unique_value, nullptr, &r);
    CHECK(r.virtual_time == cost::cm200::reduce_and_spread(4, 80, 1, ts, tw));
    try {
        run_reduce_scatter<std::int64_t>(mach, 16 * 5, rs_algo::d_cycles, {}, std::plus<>{},
                                         unique_value);
        FAIL("d-cycles ran under single-port");
    } catch (const run_error& e) {
        const std::string what = e.what();
        CHECK(what.find("node " + std::to_string(e.node()) +
                        ": d-cycles exchanges on all 4 links at once; run with --ports all") !=
              std::string::npos);
    }
}

TEST_CASE("reduce-scatter: a non-commutative operator costs longer messages, never a wrong "
          "result") {
    // The d-cycles partials are combined along Hamiltonian paths, not in rank
    // order; the matrix product keeps one value per run of consecutive ranks.
    const int d = 4;
    machine mach(cfg(d, port_model::all_port, 1, 1));
    run_report sum, prod;
    run_reduce_scatter<std::int64_t>(mach, 16 * 4, rs_algo::d_cycles, {}, std::plus<>{},
                                     unique_value, nullptr, &sum);
    run_reduce_scatter<mat2>(mach, 16 * 4, rs_algo::d_cycles, {}, mat2_product{}, mat2_for, nullptr,
                             &prod);
    CHECK(sum.steps == prod.steps);
    CHECK(prod.virtual_time > sum.virtual_time);
    CHECK(prod.messages == sum.messages);
}

TEST_CASE("reduce-scatter: failure paths name the node and the values") {
    machine mach(cfg(3, port_model::all_port));
    std::vector<int> in(37), out(4);
    try {
        mach.run([&](node& me) {
            cm200::reduce_scatter_d_cycles<int>(me, in, std::span<int>(out), std::plus<>{});
        });
        FAIL("ran with a wrong output size");
    } catch (const run_error& e) {
        const std::string what = e.what();
        // Ranks 0..6 get 5 elements of 37, rank 7 gets 2.
        CHECK(what.find("node " + std::to_string(e.node()) +
                        ": reduce-scatter output holds 4 "
                        "elements, but rank " +
                        std::to_string(e.node()) +
                        "'s block of 37 "
                        "inputs has " +
                        (e.node() == 7 ? "2" : "5")) != std::string::npos);
    }
    CHECK_THROWS_WITH_AS(run_reduce_scatter<int>(mach, 8, rs_algo::d_cycles,
                                                 {node_order::binary, index_mode::arrival},
                                                 std::plus<>{}, [](int, std::size_t) { return 1; }),
                         doctest::Contains("index arrival leaves a broadcast unordered"),
                         run_error);
    CHECK_THROWS_WITH_AS(run_reduce_scatter<int>(mach, 8, rs_algo(7), {}, std::plus<>{},
                                                 [](int, std::size_t) { return 1; }),
                         doctest::Contains("unknown all-to-all reduction algorithm 7"), run_error);
}
