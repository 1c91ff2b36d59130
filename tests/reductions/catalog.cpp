// The catalog entries of driver/src/catalog_reductions.cpp: every
// algorithm runs, verifies and meets its formula; `auto` takes the cheapest;
// `mesh` with an odd dimension is refused with one clear line.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <hcube/driver/catalog.hpp>

#include <catalog_params.hpp>

using namespace hcube;

namespace {

const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
    {"allgather", {"hypercube", "ring", "mesh"}},
    {"reduce-scatter", {"hypercube", "ring"}},
    {"allreduce", {"hypercube", "reduce-scatter-allgather", "reduce-broadcast"}},
    {"scan", {"hypercube"}},
    {"exscan", {"hypercube"}},
};

run_params params(std::string op, std::string algo, int dim, std::size_t words, elem_type t) {
    run_params p = test::catalog_params(std::move(op), std::move(algo), dim, words, 3, 2);
    p.type = t;
    return p;
}

} // namespace

TEST_CASE("the catalog lists every all-to-all algorithm with its source and formula") {
    const catalog& c = builtin_catalog();
    for (const auto& [op, algos] : expected) {
        CAPTURE(op);
        // Grama et al.'s algorithms, in order; other sources may add their own.
        std::vector<std::string> got;
        for (const algorithm_entry* e : c.algorithms(op))
            if (e->source.starts_with("Grama et al.")) {
                got.push_back(e->algo);
                CHECK(!e->formula.empty());
            }
        CHECK(got == algos);
    }
    CHECK(c.find("allgather", "hypercube")->source == "Grama et al. Alg. 4.7, Eq. 4.4");
    CHECK(c.find("allgather", "hypercube")->formula == "t_s log p + t_w m (p-1)");
}

TEST_CASE("every catalog algorithm verifies and takes exactly its formula time") {
    for (const auto& [op, algos] : expected)
        for (const std::string& algo : algos)
            for (int dim : {0, 1, 4, 5})
                for (std::size_t words : {std::size_t{0}, std::size_t{1}, std::size_t{7}})
                    for (elem_type t : {elem_type::int32, elem_type::int64, elem_type::float64}) {
                        if (algo == "mesh" && dim % 2 != 0) continue;
                        CAPTURE(op);
                        CAPTURE(algo);
                        CAPTURE(dim);
                        CAPTURE(words);
                        CAPTURE(to_string(t));
                        const run_outcome o = run_algorithm(params(op, algo, dim, words, t));
                        CHECK(o.verified);
                        CHECK(o.note == "");
                        CHECK(o.report.virtual_time == o.formula_time);
                    }
}

TEST_CASE("every catalog algorithm is right under the all-port model too") {
    for (const auto& [op, algos] : expected)
        for (const std::string& algo : algos) {
            CAPTURE(op);
            CAPTURE(algo);
            run_params p = params(op, algo, 4, 5, elem_type::int64);
            p.ports = port_model::all_port;
            const run_outcome o = run_algorithm(p);
            CHECK(o.verified);
            CHECK(o.note == "the formula assumes single-port");
        }
}

TEST_CASE("auto takes the cheapest formula, as Table 4.1 does for all-reduce") {
    const catalog& c = builtin_catalog();
    run_params p = params("allreduce", "auto", 4, 1, elem_type::int32);
    CHECK(c.choose(p)->algo == "hypercube"); // short message: Eq. 4.5
    p.words = 4096;
    CHECK(c.choose(p)->algo == "reduce-scatter-allgather"); // long message: Eq. 4.14
    const run_outcome o = run_algorithm(p);
    CHECK(o.verified);
    CHECK(o.report.virtual_time == o.formula_time);
    CHECK(c.choose(params("allgather", "auto", 4, 100, elem_type::int32))->algo == "hypercube");
    CHECK(c.choose(params("reduce-scatter", "auto", 3, 100, elem_type::int32))->algo ==
          "hypercube");
}

TEST_CASE("allgather mesh with an odd dimension is refused with one clear line") {
    CHECK(!builtin_catalog()
               .find("allgather", "mesh")
               ->unfit(params("allgather", "mesh", 3, 1, elem_type::int32))
               .empty());
    try {
        run_algorithm(params("allgather", "mesh", 3, 1, elem_type::int32));
        FAIL("no error");
    } catch (const usage_error& e) {
        const std::string what = e.what();
        CAPTURE(what);
        CHECK(what.find("allgather mesh") != std::string::npos);
        CHECK(what.find("dimension 3 is odd") != std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
    }
}
