// All-to-all personalized communication (Grama et al. 4.5): every algorithm
// against a serial reference (the transpose of the p x p block matrix), its
// closed form exactly, its traffic pattern, and bad sizes.
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/alltoall.hpp>
#include <hcube/cost/personalized.hpp>
#include <hcube/machine.hpp>

#include "test_support.hpp"

using namespace hcube;

namespace {

constexpr alltoall_algo algos[] = {alltoall_algo::dimension_exchange, alltoall_algo::pairwise,
                                   alltoall_algo::ring};

const char* name(alltoall_algo a) {
    switch (a) {
    case alltoall_algo::dimension_exchange:
        return "dimension-exchange";
    case alltoall_algo::pairwise:
        return "pairwise";
    case alltoall_algo::ring:
        return "ring";
    case alltoall_algo::all_port:
        return "all-port";
    case alltoall_algo::automatic:
        break;
    }
    return "automatic";
}

// Element i of the block from node `from` to node `to`: distinct for p <= 256
// and m < 1024 (so a misplaced block cannot go unnoticed), exact in int32.
template <class T>
T value(std::size_t from, std::size_t to, std::size_t i) {
    const auto v = std::int32_t(((from * 256 + to) * 1024 + i) % 2000000011);
    if constexpr (std::is_same_v<T, test::point>)
        return {v, double(from) + double(to) / 512};
    else
        return T(v);
}

// Runs the algorithm on `mach` with blocks of m and checks every node's output
// against the transpose; returns the report.
template <class T>
run_report check(machine& mach, std::size_t m, alltoall_algo a) {
    const std::size_t p = mach.size(), row = p * m;
    std::vector<T> in(p * row), out(p * row);
    for (std::size_t from = 0; from < p; ++from)
        for (std::size_t to = 0; to < p; ++to)
            for (std::size_t i = 0; i < m; ++i)
                in[from * row + to * m + i] = value<T>(from, to, i);
    const run_report r = mach.run([&](node& me) {
        const std::size_t base = me.id() * row;
        alltoall(me, std::span<const T>(in).subspan(base, row),
                 std::span<T>(out).subspan(base, row), a);
    });
    std::size_t wrong = 0;
    for (std::size_t to = 0; to < p; ++to)
        for (std::size_t from = 0; from < p; ++from)
            for (std::size_t i = 0; i < m; ++i)
                wrong += !(out[to * row + from * m + i] == value<T>(from, to, i));
    INFO(name(a), " d=", mach.cfg().dim, " m=", m);
    CHECK(wrong == 0);
    return r;
}

double closed_form(alltoall_algo a, double t_s, double t_w, int d, double m) {
    switch (a) {
    case alltoall_algo::pairwise:
        return cost::alltoall_pairwise(t_s, t_w, d, m);
    case alltoall_algo::ring:
        return cost::alltoall_ring(t_s, t_w, d, m);
    default:
        return cost::alltoall_dimension_exchange(t_s, t_w, d, m);
    }
}

} // namespace

TEST_CASE("alltoall: every algorithm equals the transpose, d = 0..8, int32") {
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d));
        const std::size_t p = mach.size();
        std::vector<std::size_t> sizes = {0, 1, 3, p, 1000};
        if (d >= 5) sizes = {0, 3, p};
        if (d >= 7) sizes = {1, 3};
        for (alltoall_algo a : algos)
            for (std::size_t m : sizes)
                check<std::int32_t>(mach, m, a);
    }
}

TEST_CASE_TEMPLATE("alltoall: other element types", T, std::int64_t, double, test::point) {
    for (int d : {0, 1, 3, 5}) {
        machine mach(test::cfg(d));
        for (alltoall_algo a : algos)
            for (std::size_t m : {std::size_t(1), std::size_t(3)})
                check<T>(mach, m, a);
    }
}

TEST_CASE("alltoall: virtual time equals Eq. 4.7, 4.9 and 4.10 exactly, d = 0..8") {
    const double t_s = 7, t_w = 3;
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        const std::size_t p = mach.size();
        for (port_model ports : {port_model::single_port, port_model::all_port}) {
            if (d > 5 && ports == port_model::all_port) continue;
            mach.set_ports(ports);
            for (alltoall_algo a : algos)
                for (std::size_t m : {std::size_t(0), std::size_t(1), std::size_t(5)}) {
                    if (d >= 7 && m == 0) continue;
                    const run_report r = check<std::int32_t>(mach, m, a);
                    INFO(name(a), " d=", d, " m=", m, " ", to_string(ports));
                    CHECK(r.virtual_time == closed_form(a, t_s, t_w, d, double(m)));
                    // Steps: log p exchanges, or p - 1 ring/pairwise steps.
                    CHECK(r.steps == (a == alltoall_algo::dimension_exchange ? d : int(p) - 1));
                }
        }
    }
}

TEST_CASE("alltoall dimension-exchange: each link carries one message of m p/2 words") {
    for (int d : {1, 3, 6}) {
        machine mach(test::cfg(d));
        const std::size_t m = 3, p = mach.size();
        const run_report r = check<std::int64_t>(mach, m, alltoall_algo::dimension_exchange);
        for (int x = 0; x < int(p); ++x)
            for (int k = 0; k < d; ++k) {
                CHECK(r.link(x, k).messages == 1);
                CHECK(r.link(x, k).bytes == m * p / 2 * sizeof(std::int64_t));
            }
    }
}

TEST_CASE("alltoall pairwise (Alg. 4.10): p(p-1) routed messages, E-cube, no congestion") {
    for (int d = 1; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, 2, 1));
        const std::size_t p = mach.size();
        const run_report r = check<std::int32_t>(mach, 4, alltoall_algo::pairwise);
        INFO("d=", d);
        CHECK(r.congestion.empty());
        CHECK(r.routed_messages == p * (p - 1));
        // A routed message is counted on each of its hamming(i, j) links: over all
        // pairs that is p * sum_j popcount(j) = p * d 2^(d-1) hops.
        CHECK(r.messages == p * std::uint64_t(d) * (p / 2));
        // Every directed link carries exactly p/2 messages: the traffic is even.
        CHECK(r.max_link_messages() == p / 2);
    }
}

TEST_CASE("alltoall ring (4.5.1): runs on the Gray-code cycle, m(p-s) words in step s") {
    const int d = 3;
    machine mach(test::cfg(d));
    mach.set_trace(true);
    const std::size_t m = 2, p = mach.size();
    const run_report r = check<std::int32_t>(mach, m, alltoall_algo::ring);
    REQUIRE(r.trace.size() == p * (p - 1));
    for (const trace_record& t : r.trace) {
        // Every message goes from gray(r) to gray(r + 1).
        CHECK(gray((gray_inverse(node_id(t.from)) + 1) % p) == node_id(t.to));
        CHECK(t.bytes == m * (p - 1 - std::size_t(t.step)) * sizeof(std::int32_t));
    }
}

TEST_CASE("alltoall automatic picks the cheaper of Eq. 4.9 and Eq. 4.10") {
    const int d = 4;
    machine mach(test::cfg(d, port_model::single_port, 100, 1));
    // Large t_s, small m: log p start-ups win.
    CHECK(check<std::int32_t>(mach, 1, alltoall_algo::automatic).virtual_time ==
          cost::alltoall_dimension_exchange(100, 1, d, 1));
    // Large messages: (p-1) m words beat log p * m p/2.
    CHECK(check<std::int32_t>(mach, 1000, alltoall_algo::automatic).virtual_time ==
          cost::alltoall_pairwise(100, 1, d, 1000));
}

TEST_CASE("alltoall: wrong in/out sizes are a usage_error naming the node and sizes") {
    machine mach(test::cfg(2));
    for (alltoall_algo a : algos) {
        try {
            mach.run([&](node& me) {
                const std::vector<int> in(8);
                std::vector<int> out(me.id() == 2 ? 6 : 8); // node 2's is too short
                alltoall(me, std::span<const int>(in), std::span<int>(out), a);
            });
            FAIL("no error for ", name(a));
        } catch (const run_error& e) {
            CHECK(e.node() == 2);
            const std::string what = e.what();
            CHECK(what.find("alltoall on node 2: in has 8 elements and out has 6") !=
                  std::string::npos);
            CHECK(what.find("p = 4") != std::string::npos);
        }
    }
    // Sizes that agree but do not divide by p.
    std::vector<int> seven(7), seven_out(7);
    CHECK_THROWS_WITH_AS(mach.run([&](node& me) {
        alltoall(me, std::span<const int>(seven), std::span<int>(seven_out));
    }),
                         doctest::Contains("in has 7 elements and out has 7"), run_error);
}
