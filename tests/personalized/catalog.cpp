// The catalog entries of alltoall and shift: registered with their
// sources, runnable through run_algorithm for every element type, verified,
// formula equal to the measured virtual time, `auto` and unfit choices.
#include <doctest/doctest.h>

#include <string>

#include <hcube/cost/personalized.hpp>
#include <hcube/driver/catalog.hpp>

#include <catalog_params.hpp>

using namespace hcube;

namespace {

run_params params(std::string op, std::string algo, int dim, std::size_t words) {
    return test::catalog_params(std::move(op), std::move(algo), dim, words, 6, 2);
}

} // namespace

TEST_CASE("catalog: alltoall and shift list their algorithms with sources and formulas") {
    const catalog& c = builtin_catalog();
    const auto names = [&](std::string_view op) {
        std::string s;
        for (const auto* e : c.algorithms(op)) {
            s += (s.empty() ? "" : " ") + e->algo;
            CHECK(e->source.find("Grama et al.") == 0);
            CHECK(!e->formula.empty());
        }
        return s;
    };
    CHECK(names("alltoall") == "dimension-exchange pairwise ring all-port"); // tests/allport
    CHECK(names("shift") == "gray gray-bidirectional ecube");
    CHECK(c.find("alltoall", "pairwise")->formula == "(t_s + t_w m)(p-1)");
}

TEST_CASE("catalog: every alltoall and shift entry verifies and meets its formula") {
    for (elem_type t : {elem_type::int32, elem_type::int64, elem_type::float64})
        for (const char* algo : {"dimension-exchange", "pairwise", "ring"})
            for (int d : {0, 1, 3, 5}) {
                run_params p = params("alltoall", algo, d, 3);
                p.type = t;
                const run_outcome o = run_algorithm(p);
                INFO(algo, " d=", d, " ", to_string(t), " note: ", o.note);
                CHECK(o.verified);
                CHECK(o.report.virtual_time == o.formula_time);
            }
    for (const char* algo : {"gray", "gray-bidirectional", "ecube"})
        for (long long q : {0LL, 1LL, 5LL, 6LL, -1LL, 19LL}) {
            run_params p = params("shift", algo, 4, 5);
            p.shift = q;
            p.type = elem_type::float64;
            const run_outcome o = run_algorithm(p);
            INFO(algo, " q=", q, " note: ", o.note);
            CHECK(o.verified);
            CHECK(o.report.virtual_time == o.formula_time);
            CHECK(o.note.find("q mod p = " + std::to_string(cost::shift_mod(4, q))) !=
                  std::string::npos);
        }
}

TEST_CASE("catalog shift: the note shows the exact steps next to the bound") {
    run_params p = params("shift", "gray", 3, 1);
    p.shift = 5;
    const run_outcome o = run_algorithm(p);
    CHECK(o.note.find("phases +4 +1: 3 steps (2 popcount(q) - q_0), Eq. 4.11 bound 5 steps") !=
          std::string::npos);
    p.algo = "gray-bidirectional";
    p.shift = 6;
    CHECK(run_algorithm(p).note.find("phases -2: 2 steps, bound 3 steps (log p)") !=
          std::string::npos);
}

TEST_CASE("catalog shift: default arrays, ring option and unfit choices") {
    run_params p = params("shift", "gray", 3, 1);
    p.shift = 3;
    CHECK(run_algorithm(p).note.find("ring gray") != std::string::npos);
    p.algo = "ecube";
    CHECK(run_algorithm(p).note.find("ring id") != std::string::npos);
    // ecube on the Gray-code array: verified, but congested (q = 3 is not +-2^b).
    p.options["ring"] = "gray";
    const run_outcome o = run_algorithm(p);
    CHECK(o.verified);
    CHECK(!o.report.congestion.empty());
    CHECK(o.report.virtual_time == 2 * (6 + 2));
    // The Gray-code algorithms cannot shift node ids.
    p.algo = "gray";
    p.options["ring"] = "id";
    CHECK_THROWS_WITH_AS(run_algorithm(p),
                         doctest::Contains("shift gray: moves along the Gray-code"), usage_error);
    p.options["ring"] = "diagonal";
    CHECK_THROWS_WITH_AS(run_algorithm(p),
                         doctest::Contains("--ring diagonal is not one of gray|id"), usage_error);
    p.options.clear();
    p.op = "alltoall";
    p.algo = "ring";
    p.options["ring"] = "gray";
    CHECK_THROWS_WITH_AS(run_algorithm(p),
                         doctest::Contains("alltoall ring takes no option --ring"), usage_error);
}

TEST_CASE("catalog auto: Table 4.1 picks the cheaper alltoall for m, t_s and t_w") {
    run_params p = params("alltoall", "auto", 4, 1);
    p.cost = {.t_s = 100, .t_w = 1, .word_bytes = 0};
    run_outcome o = run_algorithm(p);
    CHECK(o.formula_time == cost::alltoall_dimension_exchange(100, 1, 4, 1));
    CHECK(o.report.virtual_time == o.formula_time);
    p.words = 1000;
    o = run_algorithm(p);
    CHECK(o.formula_time == cost::alltoall_pairwise(100, 1, 4, 1000));
    CHECK(o.report.virtual_time == o.formula_time);
    // Shift: ecube on node ids by default.
    p = params("shift", "auto", 4, 8);
    p.shift = 7;
    o = run_algorithm(p);
    CHECK(o.formula_time == 6 + 2 * 8);
    CHECK(o.report.routed_messages == 16);
}
