// The whole catalog at its limits: which algorithms need buffered links (each
// run with link capacity 0), the exact formula forms printed when the source's
// form is not exact (numbers by hand), `auto` with huge costs or nothing that
// fits, and runs too large for memory refused before allocating.
#include <doctest/doctest.h>

#include <string>

#include <hcube/driver/catalog.hpp>
#include <hcube/system.hpp>

#include <catalog_params.hpp>

using namespace hcube;

namespace {

run_params params(std::string op, std::string algo, int dim, std::size_t words, double t_s,
                  double t_w) {
    return test::catalog_params(std::move(op), std::move(algo), dim, words, t_s, t_w);
}

// The usage_error message run_algorithm throws for p ("" if it runs).
std::string refusal(const run_params& p) {
    try {
        run_algorithm(p);
    } catch (const usage_error& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("catalog: exactly the entries that declare needs_buffered_links deadlock with link "
          "capacity 0") {
    const catalog& c = builtin_catalog();
    std::string flagged;
    for (const auto& e : c.entries())
        for (port_model ports : {port_model::single_port, port_model::all_port})
            for (int d : {1, 2, 3, 4}) {
                // descend needs M >= N, a power of two; prefix is its quickest kernel.
                run_params p = params(e.op, e.algo, d, e.op == "descend" ? 32 : 3, 1, 0);
                p.ports = ports;
                p.link_capacity = 0;
                if (e.op == "descend") p.options["kernel"] = "prefix";
                for (const auto& o : e.options)
                    p.options.try_emplace(o.name, o.fallback);
                if (!e.unfit(p).empty()) continue;
                const std::string need = buffered_links_need(e, p);
                INFO(e.op, " ", e.algo, " ", to_string(ports), " d=", d, " declared: '", need, "'");
                if (need.empty()) {
                    CHECK(run_algorithm(p).verified);
                } else {
                    CHECK_THROWS_AS(run_algorithm(p), deadlock_error);
                    if (d == 4)
                        flagged += " " + e.op + "/" + e.algo + "/" + std::string(to_string(ports));
                    // With the default capacity the same run completes.
                    p.link_capacity = config{}.link_capacity;
                    CHECK(run_algorithm(p).verified);
                }
            }
    // The issue names ASPC, the CM-200 one-cycle, d-cycles and
    // reduce-and-spread, and descend; the rings deadlock too. Under all-port
    // a step's one-sided sends are posted with its receives (link_step), so
    // ASPC, the cycles and descend complete there.
    for (const char* name :
         {" aspc/single-port/single-port", " allgather/one-cycle/single-port",
          " reduce-scatter/one-cycle/single-port", " reduce-scatter/reduce-and-spread/single-port",
          " descend/direct/single-port", " descend/pipelined/single-port",
          " allgather/ring/all-port", " alltoall/ring/single-port", " shift/gray/single-port"})
        CHECK_MESSAGE(contains(flagged, name), name, " not flagged at d = 4:", flagged);
    for (const char* name : {"d-cycles", "hypercube", "binomial", "pairwise", "ecube", "four-step"})
        CHECK_MESSAGE(!contains(flagged, std::string("/") + name + "/"), name, ":", flagged);
    for (const char* name : {"/one-cycle/all-port", "descend/pipelined/all-port"})
        CHECK_MESSAGE(!contains(flagged, name), name, ":", flagged);
}

TEST_CASE("catalog: when p does not divide m the exact form is given beside the source's") {
    const catalog& c = builtin_catalog();
    SUBCASE("allreduce reduce-scatter-allgather, p = 16, m = 8, t_s = 10, t_w = 1") {
        // Blocks of 1 word for nodes 0..7, empty for 8..15. Reduce-scatter step
        // i sends p / 2^(i+1) blocks, at most 4, 2, 1, 1 full ones; allgather
        // step i sends 2^i blocks, at most 1, 2, 4, 8 full ones: 23 words in
        // 8 messages, 8 * 10 + 23 = 103. Eq. 4.14: 2 (40 + 15 * 8/16) = 95.
        const run_params p = params("allreduce", "reduce-scatter-allgather", 4, 8, 10, 1);
        const algorithm_entry& e = *c.find(p.op, p.algo);
        const auto f = exact_formula(e, p);
        REQUIRE(f);
        CHECK(f->text == "8 t_s + 23 t_w");
        CHECK(e.formula_time(p) == 103);
        CHECK(f->seed_time == 95);
        CHECK(contains(f->why, "p = 16 does not divide m = 8"));
        const run_outcome o = run_algorithm(p);
        CHECK(o.report.virtual_time == 103);
    }
    SUBCASE("allreduce reduce-scatter-allgather, p = 8, m = 5") {
        // Blocks 0..4 hold 1 word. Reduce-scatter: the even blocks {0,2,4} = 3,
        // then {0,4} = 2, then 1; allgather 1, 2, 4: 13 words in 6 messages.
        const run_params p = params("allreduce", "reduce-scatter-allgather", 3, 5, 1, 1);
        const auto f = exact_formula(*c.find(p.op, p.algo), p);
        REQUIRE(f);
        CHECK(f->text == "6 t_s + 13 t_w");
        CHECK(f->seed_time == 6 + 2 * 7 * 5 / 8.0);
        CHECK(run_algorithm(p).report.virtual_time == 19);
    }
    SUBCASE("broadcast scatter-allgather, p = 32, m = 63, t_s = 1, t_w = 2") {
        // 31 blocks of 2 words and one of 1 (block 31). Scatter from node 0:
        // the step on dimension j sends ids [2^j, 2^(j+1)), whose extra words
        // are 1, 2, 4, 8, 15 (block 31 has none); the allgather's longest
        // steps send blocks [0, 2^j): 1 + 2 + 4 + 8 + 16. W = 2 * 31 * 1 + 30
        // + 31 = 123 words in 10 messages: 10 + 246 = 256.
        const run_params p = params("broadcast", "scatter-allgather", 5, 63, 1, 2);
        const auto f = exact_formula(*c.find(p.op, p.algo), p);
        REQUIRE(f);
        CHECK(f->text == "10 t_s + 123 t_w");
        CHECK(f->seed_time == 10 + 4 * 31 * 63 / 32.0);
        CHECK(run_algorithm(p).report.virtual_time == 256);
    }
    SUBCASE("reduce reduce-scatter-gather, p = 2, m = 1") {
        // Node 1 sends block 0 (1 word) to node 0 while node 0 sends block 1
        // (empty); then node 1 sends its empty gather block to the root: the
        // last chain is 2 messages and 1 word, 2 t_s + t_w = 3 at t_s = t_w = 1.
        const run_params p = params("reduce", "reduce-scatter-gather", 1, 1, 1, 1);
        const auto f = exact_formula(*c.find(p.op, p.algo), p);
        REQUIRE(f);
        CHECK(f->text == "2 t_s + 1 t_w");
        CHECK(run_algorithm(p).report.virtual_time == 3);
    }
    SUBCASE("p | m: the source's form is exact, nothing else is printed") {
        for (const char* op : {"broadcast", "reduce", "allreduce"})
            for (const auto* e : c.algorithms(op)) {
                INFO(op, " ", e->algo);
                CHECK(!exact_formula(*e, params(op, e->algo, 3, 16, 1, 1)));
                CHECK(!exact_formula(*e, params(op, e->algo, 0, 5, 1, 1)));
            }
    }
}

TEST_CASE("catalog: auto lists why each candidate does not fit") {
    const std::string why = refusal(params("descend", "auto", 4, 100, 1, 0));
    CHECK(why == "no algorithm for descend fits these parameters (single-port, dim 4): direct: "
                 "--words M = 100 is not a power of two; pipelined: --words M = 100 is not a "
                 "power of two");
}

TEST_CASE("catalog: huge costs pick the same algorithm and are refused as overflowing") {
    const catalog& c = builtin_catalog();
    // (1e308 + 0) * 4 overflows: both broadcast formulas are inf at face value.
    run_params p = params("broadcast", "auto", 4, 1, 1e308, 0);
    REQUIRE(c.choose(p));
    CHECK(c.choose(p)->algo == "binomial");
    // Large m: Table 4.1's choice at t_s = t_w = 1 is kept at 1e308.
    run_params big = params("alltoall", "auto", 4, 1000, 1, 1);
    const std::string at_one = c.choose(big)->algo;
    big.cost = {1e308, 1e308, 0};
    CHECK(c.choose(big)->algo == at_one);
    const std::string why = refusal(p);
    CHECK(contains(why, "formula time of broadcast binomial inf"));
    p.algo = "binomial";
    CHECK(refusal(p) == why);
    p.cost.t_s = 1e300; // finite: runs
    CHECK(run_algorithm(p).verified);
}

TEST_CASE("catalog: a run larger than physical memory is refused before allocating") {
    const double have = read_os_limits().memory;
    REQUIRE(have > 0);
    // allgather holds about 2 p^2 m elements: 2 * 256 * 1e11 * 4 bytes.
    const run_params p = params("allgather", "hypercube", 4, 99999999999, 1, 0);
    const algorithm_entry& e = *builtin_catalog().find(p.op, p.algo);
    CHECK(estimated_bytes(e, p) >= 2.0 * 256 * 99999999999 * 4);
    CHECK(estimated_bytes(e, p) > have);
    const std::string why = refusal(p);
    CHECK(contains(why, "allgather hypercube with m = 99999999999 on 16 nodes needs about"));
    CHECK(contains(why, "of physical memory"));
    // A small run's estimate is far below.
    CHECK(estimated_bytes(e, params("allgather", "hypercube", 4, 1000, 1, 0)) < 1e8);
}
