// collectives/include/hcube/collectives/descend.hpp: the +-2^b-descend driver, its two
// schedules against a serial run, their exact step counts next to the source's,
// no redundant computation, and the applications (PCR vs Thomas, prefix sums,
// cyclic shift).
#include <doctest/doctest.h>

#include <hcube/collectives/descend.hpp>
#include <hcube/cost/aspc.hpp>
#include <hcube/driver/tridiag.hpp>
#include <hcube/machine.hpp>

#include <test_support.hpp>

#include <atomic>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

using namespace hcube;

namespace {

// Runs `f` with the schedule over a copy of x (indexed globally).
template <class T, class F>
std::vector<T> run_descend(machine& m, std::vector<T> x, F f, descend_schedule s, descend_order o,
                           run_report* report = nullptr) {
    const run_report r = m.run([&](node& me) {
        const descend_layout lay = descend_layout_of(me, x.size());
        descend<T>(me, std::span<T>(x).subspan(lay.first, lay.L), x.size(), f, s, o);
    });
    if (report) *report = r;
    return x;
}

// A kernel whose result depends on everything it sees (b, i, and the three
// values, in order), so any wrong partner or iteration shows.
struct mixing_kernel {
    std::uint64_t operator()(int b, std::size_t i, std::uint64_t self, std::uint64_t plus,
                             std::uint64_t minus) const {
        return (self * 31 + plus * 7 + minus * 3 + i * 5 + std::uint64_t(b)) % 1000003;
    }
};

std::vector<std::uint64_t> iota_input(std::size_t M) {
    std::vector<std::uint64_t> x(M);
    std::iota(x.begin(), x.end(), 1);
    return x;
}

constexpr descend_schedule schedules[] = {descend_schedule::direct, descend_schedule::pipelined};

} // namespace

TEST_CASE("descend: both schedules and both orders equal the serial computation") {
    for (int n : {2, 3, 4}) {
        machine m(test::cfg(n, port_model::all_port));
        for (std::size_t L : {1u, 2u, 8u}) {
            const std::size_t M = L << n;
            for (descend_order o : {descend_order::descend, descend_order::ascend}) {
                std::vector<std::uint64_t> want = iota_input(M);
                descend_serial<std::uint64_t>(want, mixing_kernel{}, o);
                for (descend_schedule s : schedules) {
                    CAPTURE(n);
                    CAPTURE(M);
                    CAPTURE(int(o));
                    CAPTURE(int(s));
                    CHECK(run_descend(m, iota_input(M), mixing_kernel{}, s, o) == want);
                }
            }
        }
    }
}

TEST_CASE("descend: exact step counts next to the source's (t_s = 1, t_w = 0)") {
    // The source counts the inter-node stage only: 2 log N M/N (direct) and
    // 4 (log M + M/N - 1) (pipelined, with a full ASPC per local iteration).
    // Exact counts (cost/aspc.hpp): the direct schedule's c = 0 iteration has
    // one-link partners (1 step, not 2), and the local stage takes one step per
    // iteration (one exchange with both neighbouring nodes), so
    //   direct     (2n - 1) L + log L
    //   pipelined  4 (L + n - 1) - 2 + log L  (the round whose only slot is c = 0
    //                                          needs step 1 of each half only)
    for (int n : {2, 3, 5}) {
        machine m(test::cfg(n, port_model::all_port));
        for (std::size_t L : {1u, 2u, 4u, 16u}) {
            const std::size_t M = L << n;
            run_report rd, rp;
            run_descend(m, iota_input(M), mixing_kernel{}, descend_schedule::direct,
                        descend_order::descend, &rd);
            run_descend(m, iota_input(M), mixing_kernel{}, descend_schedule::pipelined,
                        descend_order::descend, &rp);
            const int log_L = std::countr_zero(L);
            MESSAGE("N = " << (1 << n) << ", M = " << M << ": direct " << rd.steps
                           << " steps (source: 2 log N M/N = "
                           << cost::descend_direct_paper_steps(n, M) << "), pipelined " << rp.steps
                           << " (source: 4 (log M + M/N - 1) = "
                           << cost::descend_pipelined_paper_steps(n, M) << ")");
            CHECK(rd.steps == (2 * n - 1) * std::int64_t(L) + log_L);
            CHECK(rp.steps == 4 * (std::int64_t(L) + n - 1) - 2 + log_L);
            CHECK(rd.steps == cost::descend_direct_steps(n, M));
            CHECK(rp.steps == cost::descend_pipelined_steps(n, M));
            // The differences from the source are exactly the boundary effects.
            CHECK(cost::descend_direct_paper_steps(n, M) - rd.steps == std::int64_t(L) - log_L);
            CHECK(cost::descend_pipelined_paper_steps(n, M) - rp.steps == 2 + 3 * log_L);
        }
    }
}

TEST_CASE("descend: virtual time is the closed form with integer t_s, t_w") {
    machine m(test::cfg(3, port_model::all_port, 5, 2));
    for (std::size_t M : {8u, 32u, 128u}) {
        run_report rd, rp;
        run_descend(m, iota_input(M), mixing_kernel{}, descend_schedule::direct,
                    descend_order::descend, &rd);
        run_descend(m, iota_input(M), mixing_kernel{}, descend_schedule::pipelined,
                    descend_order::ascend, &rp);
        CHECK(rd.virtual_time == cost::descend_direct(3, M, 5, 2));
        CHECK(rp.virtual_time == cost::descend_pipelined(3, M, 5, 2));
    }
}

TEST_CASE("descend single-port: both schedules take 2 ((2n - 1) L + log L) steps") {
    for (int n : {2, 3, 4}) {
        machine m(test::cfg(n, port_model::single_port, 3, 2));
        for (std::size_t L : {1u, 4u, 16u}) {
            const std::size_t M = L << n;
            std::vector<std::uint64_t> want = iota_input(M);
            descend_serial<std::uint64_t>(want, mixing_kernel{});
            for (descend_schedule s : schedules) {
                run_report r;
                CHECK(run_descend(m, iota_input(M), mixing_kernel{}, s, descend_order::descend,
                                  &r) == want);
                CHECK(r.virtual_time == cost::descend_single_port(n, M, 3, 2));
                m.set_cost({1, 0, 0});
                run_descend(m, iota_input(M), mixing_kernel{}, s, descend_order::ascend, &r);
                CHECK(r.steps == cost::descend_single_port_steps(n, M));
                CHECK(r.steps == 2 * ((2 * n - 1) * std::int64_t(L) + std::countr_zero(L)));
                m.set_cost({3, 2, 0});
            }
        }
    }
}

TEST_CASE("descend: pipelined rounds are ASPCs: no link twice in a step") {
    config c = test::cfg(4, port_model::all_port);
    c.trace = true;
    machine m(c);
    for (descend_schedule s : schedules) {
        run_report r;
        run_descend(m, iota_input(64), mixing_kernel{}, s, descend_order::descend, &r);
        std::set<std::tuple<std::int64_t, int, int>> used;
        for (const auto& t : r.trace)
            CHECK(used.insert({t.step, t.from, t.dim}).second);
        CHECK(!r.trace.empty());
    }
}

TEST_CASE("descend: no redundant computation (M log M kernel calls)") {
    machine m(test::cfg(3, port_model::all_port));
    for (descend_schedule s : schedules) {
        std::atomic<long> calls{0};
        const auto counting = [&](int b, std::size_t i, std::uint64_t x, std::uint64_t p,
                                  std::uint64_t q) {
            calls.fetch_add(1, std::memory_order_relaxed);
            return mixing_kernel{}(b, i, x, p, q);
        };
        run_descend(m, iota_input(64), counting, s, descend_order::descend);
        CHECK(calls.load() == 64 * 6);
    }
}

TEST_CASE("descend application: parallel cyclic reduction vs the Thomas algorithm") {
    const auto solve = [](machine& m, std::size_t M, descend_schedule s) {
        std::vector<tridiag_row> rows(M);
        for (std::size_t i = 0; i < M; ++i)
            rows[i] = tridiag_test_row(M, i);
        const auto reduced = run_descend(m, rows, pcr_kernel{M}, s, descend_order::ascend);
        std::vector<tridiag_row> serial = rows;
        descend_serial<tridiag_row>(serial, pcr_kernel{M}, descend_order::ascend);
        CHECK(reduced == serial);
        const std::vector<double> x = pcr_solution(reduced), ref = thomas_solve(rows);
        double diff = 0;
        for (std::size_t i = 0; i < M; ++i)
            diff = std::max(diff, std::abs(x[i] - ref[i]));
        const double res = tridiag_residual(rows, x);
        MESSAGE("PCR M = " << M << ": residual " << res << ", max |x - Thomas| " << diff);
        CHECK(res < 1e-10);
        CHECK(diff < 1e-10);
        CHECK(tridiag_residual(rows, ref) < 1e-10);
    };
    machine m3(test::cfg(3, port_model::all_port));
    for (std::size_t M : {8u, 64u, 1024u})
        for (descend_schedule s : schedules)
            solve(m3, M, s);
    machine m2(test::cfg(2, port_model::all_port));
    solve(m2, std::size_t{1} << 16, descend_schedule::pipelined);
}

TEST_CASE("descend application: prefix sums and cyclic shifts") {
    machine m(test::cfg(3, port_model::all_port));
    for (std::size_t M : {8u, 16u, 256u}) {
        std::vector<std::int64_t> x(M);
        for (std::size_t i = 0; i < M; ++i)
            x[i] = test::value_for<std::int64_t>(1, i * 13);
        std::vector<std::int64_t> prefix(M);
        std::inclusive_scan(x.begin(), x.end(), prefix.begin());
        for (descend_schedule s : schedules) {
            CHECK(run_descend(m, x, prefix_kernel{}, s, descend_order::descend) == prefix);
            for (std::uint64_t q : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5},
                                    std::uint64_t(M - 1), std::uint64_t(M / 2 + 3)}) {
                std::vector<std::int64_t> shifted(M);
                for (std::size_t i = 0; i < M; ++i)
                    shifted[(i + q) % M] = x[i];
                CHECK(run_descend(m, x, shift_kernel{q}, s, descend_order::descend) == shifted);
            }
        }
    }
}

TEST_CASE("descend: bad arguments are usage errors naming the node and the values") {
    machine m(test::cfg(3, port_model::all_port));
    const auto run_with = [&](std::size_t M, std::size_t block) {
        m.run([&](node& me) {
            std::vector<std::uint64_t> a(block);
            descend<std::uint64_t>(me, a, M, mixing_kernel{});
        });
    };
    CHECK_THROWS_WITH_AS(run_with(24, 3), doctest::Contains("M = 24 is not a power of two"),
                         run_error);
    CHECK_THROWS_WITH_AS(run_with(4, 1), doctest::Contains("M = 4 is smaller than N = 8"),
                         run_error);
    CHECK_THROWS_WITH_AS(run_with(32, 3),
                         doctest::Contains("block has 3 elements, expected M / N = 4"), run_error);
    try {
        run_with(24, 3);
        FAIL("no error");
    } catch (const run_error& e) {
        CHECK(std::string(e.what()).find("descend on node " + std::to_string(e.node())) !=
              std::string::npos);
    }
    machine m1(test::cfg(1, port_model::all_port));
    CHECK_THROWS_WITH_AS(m1.run([](node& me) {
        std::vector<std::uint64_t> a(4);
        descend<std::uint64_t>(me, a, 8, mixing_kernel{});
    }),
                         doctest::Contains("dimension >= 2, this one has dimension 1"), run_error);
}
