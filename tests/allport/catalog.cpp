// collectives/src/catalog_all_port.cpp: every all-port entry verifies under
// --ports all with its exact formula time and no single-port note; under
// single-port (d >= 2) it does not fit and says why; `auto` weighs the
// all-port entries under all-port only, by cost.
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

using namespace hcube;

namespace {

struct op_algo {
    const char* op;
    const char* algo;
};
const std::vector<op_algo> all_port_entries = {
    {"broadcast", "rotated-trees"}, {"broadcast", "edge-disjoint-trees"},
    {"reduce", "rotated-trees"},    {"reduce", "edge-disjoint-trees"},
    {"scatter", "rotated-trees"},   {"gather", "rotated-trees"},
    {"alltoall", "all-port"},       {"allreduce", "d-cycles"}};

} // namespace

TEST_CASE("all-port entries: verified, virtual time = formula time, an all-port formula") {
    for (int d : {0, 1, 3, 5}) {
        run_params p;
        p.dim = d;
        p.ports = port_model::all_port;
        p.cost = {5, 2, 0};
        machine mc(machine_config(p));
        for (const auto& [op, algo] : all_port_entries) {
            const algorithm_entry* e = builtin_catalog().find(op, algo);
            REQUIRE(e);
            CHECK(e->formula.ends_with(", all-port"));
            for (std::size_t words : {std::size_t(0), std::size_t(3), std::size_t(37)})
                for (int root : {0, (1 << d) - 1}) {
                    p.op = op;
                    p.algo = algo;
                    p.words = words;
                    p.root = root;
                    CAPTURE(d);
                    CAPTURE(op);
                    CAPTURE(algo);
                    CAPTURE(words);
                    CAPTURE(root);
                    REQUIRE(e->unfit(p).empty());
                    const run_outcome o = e->run(mc, p);
                    CHECK(o.verified);
                    CHECK(o.note.empty());
                    CHECK(o.report.virtual_time == o.formula_time);
                }
        }
    }
}

TEST_CASE("all-port entries do not fit single-port from d = 2, and say so") {
    run_params p;
    p.dim = 3;
    for (const auto& [op, algo] : all_port_entries) {
        CAPTURE(op);
        CAPTURE(algo);
        p.op = op;
        p.algo = algo;
        const std::string why = std::string(algo) +
                                " exchanges on all 3 links at once; run with --ports all "
                                "(all-port model)";
        CHECK(builtin_catalog().find(op, algo)->unfit(p) == why);
        CHECK_THROWS_WITH_AS(run_algorithm(p), (std::string(op) + " " + algo + ": " + why).c_str(),
                             usage_error);
    }
}

TEST_CASE("auto: the all-port algorithms under all-port when cheaper, never under single-port") {
    run_params p;
    p.dim = 5;
    p.cost = {5, 2, 0};
    p.algo = "auto";
    const std::vector<op_algo> large_m = {
        {"broadcast", "rotated-trees"}, {"reduce", "rotated-trees"}, {"scatter", "rotated-trees"},
        {"gather", "rotated-trees"},    {"alltoall", "all-port"},    {"allreduce", "d-cycles"}};
    for (const auto& [op, algo] : large_m) {
        CAPTURE(op);
        p.op = op;
        p.words = 1000;
        p.ports = port_model::all_port;
        CHECK(builtin_catalog().choose(p)->algo == algo);
        p.ports = port_model::single_port;
        CHECK(!builtin_catalog().choose(p)->formula.ends_with("all-port"));
    }
    // One word: allreduce on the single hypercube (log p steps, not 2 (p-1));
    // broadcast takes log p steps of one word either way.
    p.ports = port_model::all_port;
    p.words = 1;
    p.op = "allreduce";
    CHECK(builtin_catalog().choose(p)->algo == "hypercube");
    p.op = "broadcast";
    const run_outcome o = run_algorithm(p);
    CHECK(o.verified);
    CHECK(o.report.virtual_time == 5 * (5 + 2));
}
