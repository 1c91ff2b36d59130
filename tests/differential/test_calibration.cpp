// The calibrated cost model (driver/.../calibration.hpp): the fit recovers a
// known t_s and t_w from noisy synthetic timings and refuses degenerate ones;
// the file round-trips; and `auto` under a calibrated model chooses as the
// sources' closed forms say (the argmin of Eq. 4.7, 4.9, 4.10 for alltoall).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <hcube/cost/personalized.hpp>
#include <hcube/driver/calibration.hpp>
#include <hcube/driver/catalog.hpp>

#include "catalog_params.hpp"

using namespace hcube;
namespace cal = hcube::calibration;

namespace {

constexpr double t_s = 2e-6, t_w = 1e-9; // seconds per message, per int32 word

// Timings of t_s + t_w m at m = 1, 2, 4, ..., 65536, each off by up to
// `noise` (relative), deterministically.
std::vector<cal::point> synthetic(double noise) {
    std::vector<cal::point> v;
    for (int i = 0; i <= 16; ++i) {
        const double m = std::ldexp(1.0, i);
        v.push_back({m, (t_s + t_w * m) * (1 + noise * std::sin(7.0 * i + 1))});
    }
    return v;
}

// A calibration file of its own, removed afterwards.
struct temp_file {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("hcube-calibration-" + std::to_string(::getpid()) + ".json"))
                           .string();
    ~temp_file() { std::filesystem::remove(path); }
};

cal::entry known_entry() {
    cal::entry e;
    e.executor = executor_kind::threads;
    e.links = link_impl::ring;
    e.costs.t_s = t_s;
    e.costs.t_w = t_w;
    e.costs.points = 9;
    e.measured = "test";
    return e;
}

} // namespace

TEST_CASE("the fit recovers t_s and t_w from timings with noise") {
    const cal::fit exact = cal::fit_points(synthetic(0));
    CHECK(exact.t_s == doctest::Approx(t_s).epsilon(1e-9));
    CHECK(exact.t_w == doctest::Approx(t_w).epsilon(1e-9));
    CHECK(exact.r2 == doctest::Approx(1));
    CHECK(exact.worst_residual < 1e-9);
    CHECK(exact.points == 17);

    const cal::fit noisy = cal::fit_points(synthetic(0.03));
    CHECK(noisy.t_s == doctest::Approx(t_s).epsilon(0.05));
    CHECK(noisy.t_w == doctest::Approx(t_w).epsilon(0.05));
    CHECK(noisy.r2 > 0.99);
    CHECK(noisy.worst_residual > 0.01);
    CHECK(noisy.worst_residual < 0.07);
}

TEST_CASE("the fit keeps t_s and t_w >= 0") {
    // Times that fall with the size: the best fit with t_w >= 0 is flat.
    const std::vector<cal::point> falling = {{1, 3e-6}, {1000, 2e-6}, {2000, 1e-6}};
    const cal::fit f = cal::fit_points(falling);
    CHECK(f.t_w == 0);
    CHECK(f.t_s > 1e-6);
    CHECK(f.t_s < 3e-6);
    CHECK(f.worst_residual > 0.3);
    // Proportional to the size: no start-up.
    const std::vector<cal::point> proportional = {{1, 1e-9}, {1000, 1.2e-6}, {4000, 4e-6}};
    CHECK(cal::fit_points(proportional).t_s == 0);
}

TEST_CASE("a poor fit is named with its numbers, a good one is not") {
    CHECK(cal::poor_fit(cal::fit_points(synthetic(0.03))).empty());
    cal::fit busy{.t_s = 1.6e-6, .t_w = 8e-10, .r2 = 0.853, .worst_residual = 0.868, .points = 9};
    CHECK(cal::poor_fit(busy) ==
          "R^2 = 0.853, worst relative residual 86.8% (a good fit has R^2 >= 0.9 and every "
          "residual within 25%)");
    busy.worst_residual = 0.1;
    CHECK(!cal::poor_fit(busy).empty()); // R^2 below 0.9 alone
}

TEST_CASE("degenerate timings are refused with the values") {
    const std::vector<cal::point> one_size = {{64, 1e-6}, {64, 1.1e-6}, {64, 0.9e-6}};
    CHECK_THROWS_WITH_AS(cal::fit_points(one_size),
                         doctest::Contains("3 measurements of one size cannot separate t_s from "
                                           "t_w"),
                         error);
    CHECK_THROWS_AS(cal::fit_points({}), error);
    const std::vector<cal::point> zero = {{1, 1e-6}, {16, 0}};
    CHECK_THROWS_WITH_AS(cal::fit_points(zero),
                         "calibration: the time of 16 words is not a finite number > 0 (0 s)",
                         error);
    const std::vector<cal::point> nan = {{1, std::nan("")}, {16, 1e-6}};
    CHECK_THROWS_AS(cal::fit_points(nan), error);
}

TEST_CASE("a calibration file round-trips and names what is missing") {
    const temp_file f;
    CHECK_FALSE(cal::load(f.path, executor_kind::threads, link_impl::ring));
    CHECK_THROWS_WITH_AS(cal::calibrated(executor_kind::threads, link_impl::ring, 4, f.path),
                         ("no calibration for threads+ring in " + f.path +
                          ": run `hcube calibrate --executor threads --links ring` first")
                             .c_str(),
                         usage_error);
    cal::save(known_entry(), f.path);
    cal::entry other = known_entry();
    other.links = link_impl::boost_spsc;
    other.costs.t_s = 5e-6;
    cal::save(other, f.path); // a second key keeps the first
    const auto back = cal::load(f.path, executor_kind::threads, link_impl::ring);
    REQUIRE(back);
    CHECK(back->costs.t_s == t_s);
    CHECK(back->costs.t_w == t_w);
    CHECK(back->measured == "test");
    CHECK(cal::load(f.path, executor_kind::threads, link_impl::boost_spsc)->costs.t_s == 5e-6);
    CHECK_FALSE(cal::load(f.path, executor_kind::fibers, link_impl::ring));
    // t_w is per int32 word: an 8-byte element costs twice as much.
    const cost_model c8 = cal::calibrated(executor_kind::threads, link_impl::ring, 8, f.path);
    CHECK(c8.t_s == t_s);
    CHECK(c8.t_w == 2 * t_w);

    std::ofstream(f.path) << "[1, 2]";
    CHECK_THROWS_WITH_AS(cal::load(f.path, executor_kind::threads, link_impl::ring),
                         doctest::Contains("is not a JSON object"), error);
    std::ofstream(f.path) << R"({"threads+ring": {"t_s": 1}})";
    CHECK_THROWS_WITH_AS(cal::load(f.path, executor_kind::threads, link_impl::ring),
                         doctest::Contains("threads+ring"), error);
}

TEST_CASE("a calibration file's word_bytes is a positive integer") {
    const temp_file f;
    cal::save(known_entry(), f.path);
    std::ifstream in(f.path);
    const std::string saved((std::istreambuf_iterator<char>(in)), {});
    const std::string four = "\"word_bytes\": 4";
    REQUIRE(saved.find(four) != std::string::npos);
    for (const std::string bad : {"-4", "0", "1e30", "4.5", "\"4\"", "2097152"}) {
        CAPTURE(bad);
        std::string text = saved;
        text.replace(text.find(four), four.size(), "\"word_bytes\": " + bad);
        std::ofstream(f.path) << text;
        const std::string shown = bad == "1e30" ? "1e+30" : bad; // as JSON prints it
        CHECK_THROWS_WITH_AS(
            cal::load(f.path, executor_kind::threads, link_impl::ring),
            doctest::Contains(
                ("word_bytes must be an integer in 1..1048576, not " + shown).c_str()),
            error);
    }
    // Another word size is taken as given: t_w per 8-byte word is half per 4.
    std::string text = saved;
    text.replace(text.find(four), four.size(), "\"word_bytes\": 8");
    std::ofstream(f.path) << text;
    CHECK(cal::load(f.path, executor_kind::threads, link_impl::ring)->costs.t_w == t_w / 2);
}

TEST_CASE("hcube calibrate's destination is checked before anything is measured") {
    const temp_file f;
    CHECK_NOTHROW(cal::check_destination(f.path));
    CHECK_FALSE(std::filesystem::exists(f.path)); // checked, not created
    CHECK_THROWS_WITH_AS(cal::check_destination("/proc/nope/calibration.json"),
                         doctest::Contains("cannot write the calibration file "
                                           "/proc/nope/calibration.json ("),
                         usage_error);
    std::ofstream(f.path) << "not json";
    CHECK_THROWS_WITH_AS(cal::check_destination(f.path), doctest::Contains("is not a JSON object"),
                         error);
}

TEST_CASE("auto with a calibrated model chooses the argmin of the sources' closed forms") {
    const temp_file f;
    cal::save(known_entry(), f.path);
    const cost_model c = cal::calibrated(executor_kind::threads, link_impl::ring, 4, f.path);
    // Single-port alltoall: Eq. 4.9, 4.10, 4.7, the first on a tie.
    struct form {
        const char* algo;
        double (*time)(double, double, int, double);
    };
    const form forms[] = {{"dimension-exchange", cost::alltoall_dimension_exchange},
                          {"pairwise", cost::alltoall_pairwise},
                          {"ring", cost::alltoall_ring}};
    int pairwise = 0, exchange = 0;
    for (int d = 2; d <= 6; ++d)
        for (std::size_t m = 1; m <= 65536; m *= 2) {
            run_params p = test::catalog_params("alltoall", "auto", d, m, c.t_s, c.t_w);
            const form* best = &forms[0];
            for (const form& x : forms)
                if (x.time(c.t_s, c.t_w, d, double(m)) < best->time(c.t_s, c.t_w, d, double(m)))
                    best = &x;
            const algorithm_entry* e = builtin_catalog().choose(p);
            REQUIRE(e != nullptr);
            CAPTURE(d);
            CAPTURE(m);
            CHECK(e->algo == best->algo);
            pairwise += e->algo == "pairwise";
            exchange += e->algo == "dimension-exchange";
        }
    // Both regimes occur: few start-ups for tiny blocks, few words for large.
    CHECK(pairwise > 0);
    CHECK(exchange > 0);
    const auto choice = [&](int d, std::size_t m, cost_model cost) {
        return builtin_catalog()
            .choose(test::catalog_params("alltoall", "auto", d, m, cost.t_s, cost.t_w))
            ->algo;
    };
    // d = 4, 64 KiB per pair (16384 words): the issue's case. The virtual
    // model (t_s = 1, t_w = 0) counts steps; the calibrated one moves fewer
    // words: (p-1) m against (p/2) log p m.
    CHECK(choice(4, 16384, cost_model{}) == "dimension-exchange");
    CHECK(choice(4, 16384, c) == "pairwise");
    CHECK(choice(4, 1, c) == "dimension-exchange");
}

TEST_CASE("auto --cost calibrated follows the measured table where it fits, the model elsewhere") {
    const temp_file f;
    cal::entry e = known_entry();
    // Measured at d = 3 single-port: ring for small blocks (4 bytes),
    // pairwise for large (65536 bytes); the model prefers others there.
    const std::map<std::string, double> small = {
        {"ring", 1e-5}, {"pairwise", 4e-5}, {"dimension-exchange", 2e-5}};
    const std::map<std::string, double> large = {
        {"ring", 1e-2}, {"pairwise", 2e-4}, {"dimension-exchange", 4e-3}};
    e.fastest = {{"alltoall", port_model::single_port, 3, 4, "ring", small},
                 {"alltoall", port_model::single_port, 3, 65536, "pairwise", large},
                 {"allgather", port_model::single_port, 3, 4, "mesh", {{"mesh", 3e-5}}}};
    cal::save(e, f.path);
    const auto back = cal::load(f.path, executor_kind::threads, link_impl::ring);
    REQUIRE(back);
    REQUIRE(back->fastest.size() == 3);
    CHECK(back->fastest[1].algo == "pairwise");
    CHECK(back->fastest[1].bytes == 65536);
    CHECK(back->fastest[1].median_seconds.at("pairwise") == 2e-4);
    const auto table = cal::measured_fastest_table(executor_kind::threads, link_impl::ring, f.path);
    REQUIRE(table);
    CHECK(!cal::measured_fastest_table(executor_kind::threads, link_impl::boost_spsc, f.path));

    const auto chosen = [&](std::string op, int d, std::size_t m, port_model ports, bool measured) {
        run_params p = test::catalog_params(std::move(op), "auto", d, m, t_s, t_w);
        p.ports = ports;
        p.cores = 2;
        if (measured) p.measured = table;
        const algorithm_entry* a = builtin_catalog().choose(p);
        REQUIRE(a != nullptr);
        return std::pair{a->algo, builtin_catalog().choice_basis(p)};
    };
    const auto sp = port_model::single_port;
    // Between the points each median follows a power law: at 8 words (32
    // bytes, 3/14 of the way in log size) ring 4.4e-5 s, pairwise 5.6e-5,
    // dimension exchange 6.2e-5; at 128 words (512 bytes, halfway) pairwise
    // 8.9e-5, dimension exchange 2.8e-4, ring 3.2e-4. Beyond the grid, the
    // nearest point.
    for (std::size_t m : {1, 8})
        CHECK(chosen("alltoall", 3, m, sp, true).first == "ring");
    CHECK(chosen("alltoall", 3, 128, sp, true).first == "pairwise");
    CHECK(chosen("alltoall", 3, 1 << 20, sp, true).first == "pairwise");
    CHECK(chosen("alltoall", 3, 1, sp, true).second ==
          "measured fastest here at dim 3, m = 4 bytes (hcube calibrate)");
    CHECK(chosen("alltoall", 3, 8, sp, true).second ==
          "interpolated between the times measured here at dim 3, m = 4 and 65536 bytes "
          "(hcube calibrate)");
    // The model decides at another dimension, another port model, and
    // without the table; it does not pick ring for 1 word at d = 3.
    const auto model = chosen("alltoall", 3, 1, sp, false);
    CHECK(model.first != "ring");
    CHECK(model.second ==
          "the least predicted wall time on 2 cores (calibrated t_s, t_w; docs/cost-model.md)");
    CHECK(chosen("alltoall", 4, 1, sp, true) == chosen("alltoall", 4, 1, sp, false));
    CHECK(chosen("alltoall", 3, 1, port_model::all_port, true) ==
          chosen("alltoall", 3, 1, port_model::all_port, false));
    // A measured algorithm that does not fit the run is passed over: the
    // mesh needs a square p (d = 3 is not; nothing else was measured, so
    // the model decides), the ring buffered links (the next measured,
    // dimension exchange, is taken).
    run_params p = test::catalog_params("alltoall", "auto", 3, 1, t_s, t_w);
    p.cores = 2;
    p.measured = table;
    p.link_capacity = 0;
    const algorithm_entry* a = builtin_catalog().choose(p);
    REQUIRE(a != nullptr);
    CHECK(a->algo == "dimension-exchange");
    CHECK(builtin_catalog().choice_basis(p).starts_with("measured fastest here"));
    CHECK(chosen("allgather", 3, 1, sp, true) == chosen("allgather", 3, 1, sp, false));

    std::ofstream(f.path) << R"({"threads+ring": {"t_s": 1e-6, "t_w": 1e-9, "word_bytes": 4,
        "r2": 1, "worst_residual": 0, "points": 2, "measured": "x",
        "fastest": [{"op": "alltoall", "ports": "three-port", "dim": 3, "bytes": 4,
                     "algo": "ring", "median_seconds": {}}]}})";
    CHECK_THROWS_WITH_AS(cal::load(f.path, executor_kind::threads, link_impl::ring),
                         doctest::Contains("fastest: unknown port model \"three-port\""), error);
}

TEST_CASE("an algorithm that runs another's plan is no choice of its own (same_plan)") {
    const catalog& c = builtin_catalog();
    const algorithm_entry* gray = c.find("shift", "gray");
    const algorithm_entry* bidirectional = c.find("shift", "gray-bidirectional");
    REQUIRE(gray);
    REQUIRE(bidirectional);
    run_params p = test::catalog_params("shift", "auto", 3, 1, t_s, t_w);
    // q = 1, 2, 4 (and 9 = 1 mod 8): one forward phase either way; q = 7 =
    // 8 - 1 one backward step against gray's three phases, q = 6 = 8 - 2 one
    // backward phase against two, q = -1 the same as 7.
    for (const long long q : {1, 2, 4, 9}) {
        p.shift = q;
        CAPTURE(q);
        CHECK(c.same_plan(*bidirectional, p) == gray);
        CHECK(c.same_plan(*gray, p) == nullptr);
    }
    for (const long long q : {7, 6, -1}) {
        p.shift = q;
        CAPTURE(q);
        CHECK(c.same_plan(*bidirectional, p) == nullptr);
    }
    // gray does not fit ring id, so nothing stands in for the other.
    p.shift = 1;
    p.options["ring"] = "id";
    CHECK(c.same_plan(*bidirectional, p) == nullptr);

    // A survey where gray-bidirectional beat gray at q = 1 by noise alone:
    // auto takes gray, the same plan. At q = 7 the survey (made with q = 1)
    // says nothing; the model takes the one backward step.
    p = test::catalog_params("shift", "auto", 3, 1, t_s, t_w);
    p.cores = 2;
    p.measured = std::make_shared<const measured_table>(
        measured_table{{"shift",
                        port_model::single_port,
                        3,
                        4,
                        "gray-bidirectional",
                        {{"gray", 2.0e-6}, {"gray-bidirectional", 1.9e-6}, {"ecube", 9e-6}}}});
    const algorithm_entry* a = c.choose(p);
    REQUIRE(a);
    CHECK(a->algo == "gray");
    CHECK(c.choice_basis(p) == "measured fastest here at dim 3, m = 4 bytes (hcube calibrate)");
    p.shift = 7;
    a = c.choose(p);
    REQUIRE(a);
    CHECK(a->algo == "gray-bidirectional");
    CHECK(c.choice_basis(p).starts_with("the least predicted wall time"));
}

TEST_CASE("auto on a few cores compares the work of all nodes (predicted_wall_time)") {
    // t_s = 2 us, t_w = 1 ns: a message costs as much as 2000 words.
    const auto chosen = [](std::string op, int d, std::size_t m, int cores) {
        run_params p = test::catalog_params(std::move(op), "auto", d, m, t_s, t_w);
        p.cores = cores;
        const algorithm_entry* e = builtin_catalog().choose(p);
        REQUIRE(e != nullptr);
        return e->algo;
    };
    for (int d = 2; d <= 6; ++d)
        for (std::size_t m = 1; m <= 65536; m *= 4) {
            CAPTURE(d);
            CAPTURE(m);
            const double p = std::ldexp(1.0, d), w = double(m);
            // Two cores: broadcast by scatter + allgather sends p - 1 + p log p
            // messages and (p - 1 + log p / 2) m words in all, the binomial
            // tree p - 1 and (p - 1) m.
            CHECK(chosen("broadcast", d, m, 2) == "binomial");
            // A core per node: the critical chains, Eq. 4.1 against Eq. 4.13
            // (p divides m from m = 64 on), as under the virtual model.
            const double eq_4_1 = (t_s + t_w * w) * d,
                         eq_4_13 = 2 * (t_s * d + t_w * (p - 1) * w / p);
            if (m >= 64)
                CHECK(chosen("broadcast", d, m, 1 << d) ==
                      (eq_4_13 < eq_4_1 ? "scatter-allgather" : "binomial"));
            // Two cores, all-to-all: the nodes' start-ups (routed ones three
            // times), words sent, and local words at half a word.
            const double exchange =
                             p * d * t_s + t_w * (p * d * p / 2 * w + p * (p + d * p) * w / 2),
                         pairwise = 3 * p * (p - 1) * t_s + t_w * (p * (p - 1) * w + p * w / 2),
                         ring =
                             p * (p - 1) * t_s + t_w * (p * (p - 1) * p / 2 * w + p * (p - 1) * w);
            const double least = std::min({exchange, pairwise, ring});
            CHECK(chosen("alltoall", d, m, 2) == (least == exchange   ? "dimension-exchange"
                                                  : least == pairwise ? "pairwise"
                                                                      : "ring"));
        }
    // Both all-to-all regimes occur on two cores. Pairwise's routed start-ups
    // move the crossover above the closed forms' (Eq. 4.9 = Eq. 4.10 at
    // m = 11 t_s / 17 t_w = 1294 words on a 4-cube); without cores, auto
    // compares the closed forms.
    CHECK(chosen("alltoall", 4, 64, 2) == "dimension-exchange");
    CHECK(chosen("alltoall", 4, 1400, 2) == "dimension-exchange");
    CHECK(chosen("alltoall", 4, 1400, 0) == "pairwise");
    CHECK(chosen("alltoall", 4, 4096, 2) == "pairwise");
    CHECK(chosen("broadcast", 4, 65536, 0) == "scatter-allgather");
}
