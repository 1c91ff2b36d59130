// driver/src/catalog_aspc.cpp: the catalog entries of Hu run,
// verify, report their closed forms exactly, and refuse what does not fit.
#include <doctest/doctest.h>

#include <hcube/cost/aspc.hpp>
#include <hcube/driver/catalog.hpp>

#include <string>

#include <catalog_params.hpp>

using namespace hcube;

namespace {

run_params params(std::string op, std::string algo, int dim, std::size_t words, port_model ports,
                  double t_s = 3, double t_w = 2) {
    run_params p = test::catalog_params(std::move(op), std::move(algo), dim, words, t_s, t_w);
    p.ports = ports;
    return p;
}

} // namespace

TEST_CASE("catalog aspc: both algorithms verify and match their closed forms") {
    for (elem_type t : {elem_type::int32, elem_type::int64, elem_type::float64}) {
        run_params p = params("aspc", "four-step", 4, 3, port_model::all_port);
        p.type = t;
        const run_outcome a = run_algorithm(p);
        CHECK_MESSAGE(a.verified, a.note);
        CHECK(a.report.virtual_time == a.formula_time);
        CHECK(a.formula_time == 4 * (3 + 2 * 3));
        CHECK(a.note.find("Theorem 2 lower bound 4") != std::string::npos);

        p = params("aspc", "single-port", 4, 3, port_model::single_port);
        p.type = t;
        const run_outcome s = run_algorithm(p);
        CHECK_MESSAGE(s.verified, s.note);
        CHECK(s.report.virtual_time == s.formula_time);
        CHECK(s.report.steps == 14);
    }
    // auto follows the port model.
    CHECK(run_algorithm(params("aspc", "auto", 3, 1, port_model::single_port)).report.steps == 10);
    CHECK(run_algorithm(params("aspc", "auto", 3, 1, port_model::all_port)).report.steps == 4);
}

TEST_CASE("catalog descend: every kernel and schedule verifies, closed forms exact") {
    for (const char* algo : {"direct", "pipelined"})
        for (const char* kernel : {"pcr", "prefix", "shift"}) {
            run_params p = params("descend", algo, 3, 64, port_model::all_port);
            p.options["kernel"] = kernel;
            p.shift = 13;
            const run_outcome o = run_algorithm(p);
            CAPTURE(algo);
            CAPTURE(kernel);
            CHECK_MESSAGE(o.verified, o.note);
            CHECK(o.report.virtual_time == o.formula_time);
            CHECK(o.note.find("the source's (all-port) count") != std::string::npos);
            // Single-port runs too, at twice the direct all-port time.
            p.ports = port_model::single_port;
            const run_outcome s = run_algorithm(p);
            CHECK_MESSAGE(s.verified, s.note);
            CHECK(s.report.virtual_time == s.formula_time);
            CHECK(s.formula_time == 2 * cost::descend_direct(3, 64, 3, 2));
        }
    // auto picks the cheaper schedule: direct when M/N is small, pipelined when large.
    run_params p = params("descend", "auto", 4, 16, port_model::all_port, 1, 0);
    CHECK(run_algorithm(p).report.steps == cost::descend_direct_steps(4, 16));
    p.words = 1024;
    CHECK(run_algorithm(p).report.steps == cost::descend_pipelined_steps(4, 1024));
}

TEST_CASE("catalog aspc/descend: what does not fit is refused with the values") {
    CHECK_THROWS_WITH_AS(run_algorithm(params("aspc", "four-step", 3, 1, port_model::single_port)),
                         doctest::Contains("needs the all-port model"), usage_error);
    CHECK_THROWS_WITH_AS(run_algorithm(params("descend", "direct", 3, 24, port_model::all_port)),
                         doctest::Contains("--words M = 24 is not a power of two"), usage_error);
    CHECK_THROWS_WITH_AS(run_algorithm(params("descend", "pipelined", 4, 8, port_model::all_port)),
                         doctest::Contains("--words M = 8 is smaller than N = 16"), usage_error);
    CHECK_THROWS_WITH_AS(run_algorithm(params("descend", "direct", 1, 8, port_model::all_port)),
                         doctest::Contains("needs dimension >= 2"), usage_error);
    run_params p = params("descend", "direct", 3, 64, port_model::all_port);
    p.options["kernel"] = "fft";
    CHECK_THROWS_WITH_AS(run_algorithm(p), doctest::Contains("--kernel fft is not one of"),
                         usage_error);
}
