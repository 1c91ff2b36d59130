// The Mathur & Johnsson catalog entries: found by name, options validated, every
// element type verified against its serial reference, formula time equal to
// the virtual time, d-cycles refused under single-port with a clear reason.
#include <doctest/doctest.h>

#include <hcube/driver/catalog.hpp>

#include "test_support.hpp"

using namespace hcube;

namespace {

run_params params(std::string op, std::string algo, int dim, std::size_t words, port_model ports) {
    run_params p;
    p.op = std::move(op);
    p.algo = std::move(algo);
    p.dim = dim;
    p.words = words;
    p.ports = ports;
    p.cost.t_s = 9;
    p.cost.t_w = 2;
    return p;
}

const char* const broadcasts[] = {"one-cycle", "d-cycles", "send-and-spread",
                                  "one-source-at-a-time"};
const char* const reductions[] = {"one-cycle", "d-cycles", "reduce-and-spread"};

} // namespace

TEST_CASE("catalog: every Mathur & Johnsson entry runs, verifies and meets its formula") {
    const catalog& c = builtin_catalog();
    for (const char* op : {"allgather", "reduce-scatter"}) {
        const bool bcast = std::string(op) == "allgather";
        for (const char* algo : bcast ? std::span<const char* const>(broadcasts)
                                      : std::span<const char* const>(reductions)) {
            const algorithm_entry* e = c.find(op, algo);
            REQUIRE(e != nullptr);
            CHECK(e->source.find("Mathur & Johnsson") == 0);
            for (elem_type t : {elem_type::int32, elem_type::int64, elem_type::float64})
                for (const char* order : {"binary", "gray"})
                    for (std::size_t words : {std::size_t(1), std::size_t(5), std::size_t(16)}) {
                        auto p = params(op, algo, 4, words, port_model::all_port);
                        p.type = t;
                        p.options["order"] = order;
                        CAPTURE(op);
                        CAPTURE(algo);
                        CAPTURE(order);
                        CAPTURE(words);
                        const run_outcome o = run_algorithm(p);
                        CHECK_MESSAGE(o.verified, o.note);
                        if (std::string(algo) == "one-source-at-a-time")
                            CHECK(o.report.virtual_time <= o.formula_time);
                        else
                            CHECK(o.report.virtual_time == o.formula_time);
                    }
        }
    }
}

TEST_CASE("catalog: with no words the cycles and spreads move nothing and take no time") {
    // Worked out by hand: only send-and-spread's gather sends (d empty
    // messages on node 0's chain, t_s = 9 each).
    const catalog& c = builtin_catalog();
    for (int d = 1; d <= 4; ++d)
        for (port_model ports : {port_model::single_port, port_model::all_port})
            for (const char* op : {"allgather", "reduce-scatter"})
                for (const algorithm_entry* e : c.algorithms(op)) {
                    if (e->source.find("Mathur & Johnsson") != 0) continue;
                    const run_params p = params(op, e->algo, d, 0, ports);
                    if (!e->unfit(p).empty()) continue;
                    CAPTURE(d);
                    CAPTURE(op);
                    CAPTURE(e->algo);
                    CAPTURE(to_string(ports));
                    const double want = e->algo == "send-and-spread" ? 9.0 * d : 0.0;
                    const run_outcome o = run_algorithm(p);
                    CHECK_MESSAGE(o.verified, o.note);
                    CHECK(o.report.virtual_time == want);
                    CHECK(o.formula_time == want);
                }
}

TEST_CASE("catalog: index options of the cycle algorithms") {
    auto p = params("allgather", "d-cycles", 5, 10, port_model::all_port);
    p.options["index"] = "motion";
    p.options["order"] = "gray";
    const run_outcome o = run_algorithm(p);
    CHECK(o.verified);
    CHECK(o.report.virtual_time == 31 * (9 + 2 * 2));
    p.cost.word_bytes = 4; // int32 + its index: two words per element
    CHECK(run_algorithm(p).report.virtual_time == 31 * (9 + 2 * 2 * 2));
    CHECK(builtin_catalog().find("allgather", "d-cycles")->formula_time(p) == 31 * (9 + 2 * 2 * 2));
    p.options["index"] = "arrival";
    CHECK(run_algorithm(p).verified);
    p.algo = "one-cycle";
    CHECK(run_algorithm(p).verified);
    p.options["index"] = "guess";
    CHECK_THROWS_WITH_AS(run_algorithm(p), "--index guess is not one of computation|motion|arrival",
                         usage_error);
    auto q = params("reduce-scatter", "d-cycles", 3, 3, port_model::all_port);
    q.options["index"] = "motion";
    const run_outcome r = run_algorithm(q);
    CHECK(r.verified);
    CHECK(r.report.virtual_time == 7 * (9 + 2 * 1));
    q.options["index"] = "arrival";
    CHECK_THROWS_WITH_AS(run_algorithm(q), "--index arrival is not one of computation|motion",
                         usage_error);
    q.algo = "reduce-and-spread";
    q.options["index"] = "motion";
    CHECK_THROWS_WITH_AS(run_algorithm(q),
                         "reduce-scatter reduce-and-spread takes no option --index", usage_error);
}

TEST_CASE("catalog: d-cycles does not fit single-port; auto picks another algorithm") {
    const catalog& c = builtin_catalog();
    for (const char* op : {"allgather", "reduce-scatter"}) {
        auto p = params(op, "d-cycles", 4, 8, port_model::single_port);
        p.options["order"] = "binary";
        CHECK(c.find(op, "d-cycles")->unfit(p) ==
              "d-cycles exchanges on all 4 links at once; run with --ports all (all-port model)");
        CHECK_THROWS_WITH_AS(run_algorithm(p),
                             (std::string(op) + " d-cycles: d-cycles exchanges on all 4 links at "
                                                "once; run with --ports all (all-port model)")
                                 .c_str(),
                             usage_error);
        p.ports = port_model::all_port;
        CHECK(c.find(op, "d-cycles")->unfit(p).empty());
        p.ports = port_model::single_port;
        p.algo = "auto";
        const algorithm_entry* chosen = c.choose(p);
        REQUIRE(chosen != nullptr);
        CHECK(chosen->algo != "d-cycles");
    }
}
