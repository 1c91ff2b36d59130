// critical_path: the chain of sends, arrivals, receives and local work that
// set the latest clock, whose stretches add up to the run's virtual time; for
// rooted operations (a root that only sends), for routed messages, for local
// work, and for every algorithm of the catalog on 2- to 4-cubes.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <hcube/collectives/scatter.hpp>
#include <hcube/draw.hpp>
#include <hcube/hcube.hpp>

#include "traced_runs.hpp"

using namespace hcube;

namespace {

// The stretches meet end to begin, from the virtual time down to 0, each
// message stretch at its receiver or sender; returns their total.
double checked_total(const run_report& r, const std::vector<critical_step>& path) {
    REQUIRE(!path.empty());
    CHECK(path.front().end == doctest::Approx(r.virtual_time));
    CHECK(path.back().begin == doctest::Approx(0));
    double total = 0;
    for (std::size_t i = 0; i < path.size(); ++i) {
        const critical_step& c = path[i];
        CHECK(c.begin < c.end);
        if (i + 1 < path.size()) CHECK(path[i + 1].end == doctest::Approx(c.begin));
        if (c.message >= 0) {
            const trace_record& m = r.trace[std::size_t(c.message)];
            CHECK((c.node == m.from || c.node == m.to));
        }
        total += c.end - c.begin;
    }
    return total;
}

std::size_t messages_on(const std::vector<critical_step>& path) {
    return std::size_t(std::count_if(path.begin(), path.end(),
                                     [](const critical_step& c) { return c.message >= 0; }));
}

} // namespace

TEST_CASE("critical path of a binomial broadcast: log p messages adding up to log p") {
    for (const port_model ports : {port_model::single_port, port_model::all_port}) {
        const run_report r = test::traced_broadcast(ports);
        REQUIRE(r.virtual_time == 3);
        const auto path = critical_path(r);
        CHECK(checked_total(r, path) == doctest::Approx(3));
        CHECK((messages_on(path) == 3 && path.size() == 3));
        std::ostringstream os;
        write_timeline_svg(r, os);
        CHECK(os.str().find("critical path: 3 messages, adding up to the virtual time 3") !=
              std::string::npos);
    }
}

TEST_CASE("critical path of a scatter runs through the root's send port") {
    // Grama et al. 4.4 (Eq. 4.6): the root sends 4, 2, 1 blocks one after
    // another; with t_w = 1 and m = 1 the last send ends at 3 t_s + 7 t_w.
    machine m({.dim = 3, .cost = {.t_s = 1, .t_w = 1}, .trace = true});
    const run_report r = m.run([](node& me) {
        std::vector<int> all(me.id() == 0 ? 8 : 0), mine(1);
        for (std::size_t i = 0; i < all.size(); ++i)
            all[i] = int(i);
        scatter(me, std::span<const int>(all), std::span<int>(mine), 0);
    });
    REQUIRE(r.virtual_time == 10);
    const auto path = critical_path(r);
    CHECK(checked_total(r, path) == doctest::Approx(10));
    CHECK(messages_on(path) == path.size());
}

TEST_CASE("critical path of a root that sends routed messages itself: p - 1 sends") {
    const run_report r = test::traced_routed_broadcast();
    const auto path = critical_path(r);
    CHECK(checked_total(r, path) == doctest::Approx(r.virtual_time));
    // The root's port sends one message after another.
    CHECK((messages_on(path) >= 7 && messages_on(path) == path.size()));
}

TEST_CASE("critical path with local work: compute, a message, compute") {
    machine m({.dim = 1, .trace = true});
    const run_report r = m.run([](node& me) {
        int v[1] = {1};
        if (me.id() == 0) {
            me.compute(2);
            me.send(0, v);
        } else {
            me.recv(0, v);
            me.compute(1);
        }
    });
    REQUIRE(r.virtual_time == 4);
    const auto path = critical_path(r);
    REQUIRE(path.size() == 3);
    CHECK(checked_total(r, path) == doctest::Approx(4));
    CHECK((path[0].message < 0 && path[0].node == 1 && path[0].begin == 3));
    CHECK((path[1].message == 0 && path[1].begin == 2 && path[1].end == 3));
    CHECK((path[2].message < 0 && path[2].node == 0 && path[2].end == 2));
}

TEST_CASE("the critical path of every catalog algorithm adds up to its virtual time") {
    int drawn = 0;
    for (const algorithm_entry& e : builtin_catalog().entries())
        for (int d = 2; d <= 4; ++d) {
            run_params p;
            p.op = e.op;
            p.algo = e.algo;
            p.dim = d;
            p.words = e.op == "descend" ? std::size_t(2) << d : 3;
            p.cost = {.t_s = 1, .t_w = 0.25};
            if (!e.unfit(p).empty()) p.ports = port_model::all_port;
            if (!e.unfit(p).empty()) continue;
            algorithm_steps s;
            try {
                s = record_steps(p);
            } catch (const usage_error&) {
                continue; // no symbolic driver
            }
            CAPTURE(e.op);
            CAPTURE(e.algo);
            CAPTURE(d);
            // The collectives do no local work: messages set every clock.
            const auto path = critical_path(s.report);
            CHECK(checked_total(s.report, path) == doctest::Approx(s.report.virtual_time));
            CHECK(messages_on(path) == path.size());
            ++drawn;
        }
    CHECK(drawn > 100);
}
