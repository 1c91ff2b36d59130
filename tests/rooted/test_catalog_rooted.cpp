// driver/src/catalog_rooted.cpp: the entries of broadcast, reduce, scatter
// and gather: names, sources and formulas; run() verifies against the serial
// reference for every element type; formula_time and the virtual time equal the
// source's formulas, written out here; `auto` picks the cheaper; a bad root does
// not fit.
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <hcube/cost/rooted.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

using namespace hcube;

namespace {

// The entries of 4.1, 4.4 and 4.7.1 (tests/allport has the all-port ones).
std::vector<const algorithm_entry*> single_port_entries(const char* op) {
    std::vector<const algorithm_entry*> out;
    for (const auto* e : builtin_catalog().algorithms(op))
        if (!e->formula.ends_with("all-port")) out.push_back(e);
    return out;
}

// The time the source gives for a rooted run, written out here rather than taken
// from the catalog: Eq. 4.1 (t_s + t_w m) log p for the binomial broadcast and
// reduction, Eq. 4.6 t_s log p + t_w m (p-1) for scatter and gather, Eq. 4.13
// 2 (t_s log p + t_w (p-1) m/p) for the split algorithms when p divides m.
// When it does not, the exact split times of cost/rooted.hpp, which
// test_cost_rooted.cpp checks against schedules worked out by hand.
double seed_time(const run_params& p) {
    const double d = p.dim, nodes = double(1 << p.dim), m = double(p.words);
    const double t_s = p.cost.t_s, t_w = p.cost.t_w;
    const bool one_message = p.op == "broadcast" || p.op == "reduce";
    if (p.algo == "binomial")
        return one_message ? (t_s + t_w * m) * d : t_s * d + t_w * m * (nodes - 1);
    REQUIRE(one_message);
    if (p.words % (std::size_t(1) << p.dim) == 0)
        return 2 * (t_s * d + t_w * (nodes - 1) * m / nodes);
    return p.op == "broadcast"
               ? cost::broadcast_scatter_allgather(p.dim, p.words, p.root, t_s, t_w)
               : cost::reduce_reduce_scatter_gather(p.dim, p.words, p.root, t_s, t_w);
}

} // namespace

TEST_CASE("the rooted operations and their algorithms are in the catalog") {
    const catalog& c = builtin_catalog();
    const auto names = [&](const char* op) {
        std::string s;
        for (const auto* e : c.algorithms(op))
            s += (s.empty() ? "" : " ") + e->algo;
        return s;
    };
    // The all-port ones are tested in tests/allport.
    CHECK(names("broadcast") == "binomial scatter-allgather rotated-trees edge-disjoint-trees");
    CHECK(names("reduce") == "binomial reduce-scatter-gather rotated-trees edge-disjoint-trees");
    CHECK(names("scatter") == "binomial rotated-trees");
    CHECK(names("gather") == "binomial rotated-trees");
    const auto* e = c.find("broadcast", "scatter-allgather");
    REQUIRE(e);
    CHECK(e->source == "Grama et al. 4.7.1, Eq. 4.13");
    CHECK(e->formula == "2 (t_s log p + t_w (p-1) m/p) if p | m");
    REQUIRE(c.find("scatter", "binomial"));
    CHECK(c.find("scatter", "binomial")->formula == "t_s log p + t_w m (p-1)");
}

TEST_CASE("every rooted entry verifies and meets its formula, for every element type") {
    for (int d : {0, 1, 3, 5}) {
        run_params p;
        p.dim = d;
        p.cost = {5, 2, 0};
        machine mc(machine_config(p));
        for (const char* op : {"broadcast", "reduce", "scatter", "gather"})
            for (const auto* e : single_port_entries(op))
                for (auto type : {elem_type::int32, elem_type::int64, elem_type::float64})
                    for (std::size_t words :
                         {std::size_t(0), std::size_t(3), std::size_t(100), std::size_t(4) << d})
                        for (int root : {0, (1 << d) - 1}) {
                            p.op = op;
                            p.algo = e->algo;
                            p.type = type;
                            p.words = words;
                            p.root = root;
                            CAPTURE(d);
                            CAPTURE(p.op);
                            CAPTURE(p.algo);
                            CAPTURE(to_string(type));
                            CAPTURE(words);
                            CAPTURE(root);
                            REQUIRE(e->unfit(p).empty());
                            const run_outcome o = e->run(mc, p);
                            CHECK(o.verified);
                            CHECK(o.note.empty());
                            CHECK(o.formula_time == seed_time(p));
                            CHECK(o.report.virtual_time == seed_time(p));
                        }
    }
}

TEST_CASE("the catalog's formula times are the cost/rooted.hpp functions") {
    const catalog& c = builtin_catalog();
    run_params p;
    p.dim = 4;
    p.words = 1001;
    p.root = 6;
    p.cost = {5, 2, 0};
    CHECK(c.find("broadcast", "binomial")->formula_time(p) ==
          cost::broadcast_binomial(4, 1001, 5, 2));
    CHECK(c.find("reduce", "reduce-scatter-gather")->formula_time(p) ==
          cost::reduce_reduce_scatter_gather(4, 1001, 6, 5, 2));
    CHECK(c.find("gather", "binomial")->formula_time(p) == cost::gather_binomial(4, 1001, 5, 2));
}

TEST_CASE("auto picks the cheaper broadcast and reduction (Table 4.1)") {
    run_params p;
    p.dim = 4;
    p.cost = {5, 2, 0};
    for (const char* op : {"broadcast", "reduce"}) {
        p.op = op;
        p.algo = "auto";
        p.words = 1;
        CHECK(builtin_catalog().choose(p)->algo == "binomial");
        p.words = 1000;
        const run_outcome o = run_algorithm(p);
        CHECK(o.verified);
        CHECK(o.report.steps == 8); // the split algorithm: 2 log p messages on the critical path
        CHECK(o.report.virtual_time ==
              (p.op == std::string("broadcast")
                   ? cost::broadcast_scatter_allgather(4, 1000, 0, 5, 2)
                   : cost::reduce_reduce_scatter_gather(4, 1000, 0, 5, 2)));
    }
}

TEST_CASE("a root outside 0..p-1 does not fit") {
    run_params p;
    p.dim = 3;
    p.op = "scatter";
    p.algo = "binomial";
    p.root = 8;
    CHECK(builtin_catalog().find("scatter", "binomial")->unfit(p) == "root 8 is outside 0..7");
    CHECK_THROWS_WITH_AS(run_algorithm(p), "scatter binomial: root 8 is outside 0..7", usage_error);
    p.op = "broadcast";
    p.algo = "auto";
    p.root = -1;
    CHECK_THROWS_AS(run_algorithm(p), usage_error);
}

TEST_CASE("all-port: every rooted entry verifies; the tree algorithms keep their time") {
    // The binomial trees' critical path is a chain of messages that all-port
    // does not shorten; the split algorithms' root-side ports overlap and finish
    // sooner than the single-port formula.
    run_params p;
    p.dim = 5;
    p.ports = port_model::all_port;
    p.cost = {10, 1, 0};
    p.words = 37;
    p.root = 3;
    machine mc(machine_config(p));
    for (const char* op : {"broadcast", "reduce", "scatter", "gather"})
        for (const auto* e : single_port_entries(op)) {
            p.op = op;
            p.algo = e->algo;
            CAPTURE(p.op);
            CAPTURE(p.algo);
            const run_outcome o = e->run(mc, p);
            CHECK(o.verified);
            CHECK(o.note == "the formula assumes single-port");
            CHECK(o.formula_time == seed_time(p));
            if (e->algo == "binomial")
                CHECK(o.report.virtual_time == seed_time(p));
            else
                CHECK(o.report.virtual_time < seed_time(p));
        }
}
