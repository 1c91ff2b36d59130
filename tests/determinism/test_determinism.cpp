// The determinism contract (docs/runtime.md, "What is deterministic"): a
// run's results, virtual time, steps, traffic, congestion and trace depend on
// the program alone, not on the executor, the number of workers, the link
// type or the run. Programs that choose among sources (recv_any,
// recv_routed from any_source) are the ones the OS scheduler could sway, so
// each user-style program here chooses, and each has a small case whose
// virtual time and choices are worked out by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

#include "deadline.hpp"
#include "sanitizers.hpp"
#include "user_programs.hpp"

using namespace hcube;
using namespace hcube::test;

namespace {

struct outcome {
    std::uint64_t fingerprint = 0; // the report's and the logs'
    run_report report;
    node_logs logs;
};

std::uint64_t hash_logs(const node_logs& logs) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const auto& log : logs) {
        h = (h ^ log.size()) * 0x100000001b3ull;
        for (const double v : log) {
            std::uint64_t bits;
            std::memcpy(&bits, &v, sizeof bits);
            h = (h ^ bits) * 0x100000001b3ull;
        }
    }
    return h;
}

template <class Body>
outcome run_once(config c, int dim, Body body) {
    c.dim = dim;
    c.trace = true;
    c.digest = true;
    machine m(c);
    outcome o;
    o.logs.assign(std::size_t(m.size()), {});
    o.report = m.run([&](node& me) { body(me, o.logs); });
    o.fingerprint = o.report.fingerprint() ^ (hash_logs(o.logs) * 0x9e3779b97f4a7c15ull);
    return o;
}

outcome run_once(const user_program& u, const config& c) {
    return run_once(c, u.dim, u.body);
}

config base(port_model ports, double t_s, double t_w) {
    config c;
    c.ports = ports;
    c.cost = {.t_s = t_s, .t_w = t_w};
    return c;
}

// What runs the nodes, and how they talk: every variant the contract covers
// within one process.
struct variant {
    std::string name;
    executor_kind executor;
    int workers;
    link_impl links;
};
const std::vector<variant>& variants() {
    static const std::vector<variant> all{
        {"threads, ring links", executor_kind::threads, 0, link_impl::ring},
        {"threads, boost links", executor_kind::threads, 0, link_impl::boost_spsc},
        {"fibers on 1 worker", executor_kind::fibers, 1, link_impl::ring},
        {"fibers on 2 workers", executor_kind::fibers, 2, link_impl::ring},
        {"fibers on 7 workers", executor_kind::fibers, 7, link_impl::ring},
        {"fibers on 2 workers, boost links", executor_kind::fibers, 2, link_impl::boost_spsc},
    };
    return all;
}

config with(config c, const variant& v) {
    c.executor = v.executor;
    c.workers = v.workers;
    c.links = v.links;
    return c;
}

std::vector<double> costs(std::initializer_list<double> list) {
    return list;
}

// The time budget of the catalog sweep: HCUBE_DETERMINISM_SECONDS, else 15 s
// (docs/testing.md: the soak mode sets it high).
double sweep_seconds() {
    const char* env = std::getenv("HCUBE_DETERMINISM_SECONDS");
    return env && *env ? std::atof(env) : 15.0;
}

} // namespace

TEST_CASE("master/worker with recv_any on a 2-cube, worked out by hand") {
    // t_s = 1, t_w = 0, single-port; tasks cost 5, 1, 1, 1. Node 0 sends task
    // 0 to node 1 (0..1) and task 1 to node 2 (1..2). Node 2 answers at 4,
    // node 1 at 7: node 0 takes node 2's first (clock 4) and sends it task 2
    // (4..5); node 2 answers at 7 again. At 7 both answers tie: the lower
    // link (node 1) first, clock 7, task 3 to node 1 (7..8); then node 2's
    // (receive port 7..8), its stop 8..9; node 1 answers at 10, clock 10,
    // its stop 10..11. Tasks went to nodes 1, 2, 2, 1; virtual time 11.
    const std::vector<double> cost = costs({5, 1, 1, 1});
    for (const variant& v : variants()) {
        CAPTURE(v.name);
        const outcome o = run_once(
            with(base(port_model::single_port, 1, 0), v), 2, [&](node& me, node_logs& log) {
                master_worker_links(me, log, 4, [&](int i) { return cost[std::size_t(i)]; });
            });
        CHECK(o.logs[0] == std::vector<double>{1, 2, 2, 1});
        CHECK(o.report.node_time == std::vector<double>{11, 11, 9, 0});
        CHECK(o.report.virtual_time == 11);
    }
}

TEST_CASE("a merging pipeline with recv_any on a 2-cube, worked out by hand") {
    // t_s = 1, t_w = 0, single-port. Node 1 computes 2, 3, 4 before its three
    // messages to node 0 (arrivals 3, 6, 10); node 2 computes 4, 1, 2 (arrivals
    // 5, 6, 8). Node 0 takes them in arrival order, the lower link on the tie
    // at 6, its receive port serializing: clocks 3, 5, 6, 7, 8, 10.
    for (const variant& v : variants()) {
        CAPTURE(v.name);
        const outcome o = run_once(with(base(port_model::single_port, 1, 0), v), 2,
                                   [](node& me, node_logs& log) { merging_pipeline(me, log, 3); });
        CHECK(o.logs[0] == std::vector<double>{0, 100, 1, 200, 0, 101, 1, 201, 1, 202, 0, 102});
        CHECK(o.report.node_time[0] == 10);
    }
}

TEST_CASE("routed permutations on a 1-cube, worked out by hand") {
    // t_s = 1, t_w = 1: round 0 swaps 3 doubles (0..4 both ways, two links),
    // round 1 swaps 6 (4..11).
    for (const variant& v : variants()) {
        CAPTURE(v.name);
        const outcome o =
            run_once(with(base(port_model::single_port, 1, 1), v), 1,
                     [](node& me, node_logs& log) { routed_permutations(me, log, 2); });
        CHECK(o.logs[0] == std::vector<double>{1, 1.5});
        CHECK(o.logs[1] == std::vector<double>{0, 0.5});
        CHECK(o.report.virtual_time == 11);
        CHECK(o.report.congestion.empty());
    }
}

TEST_CASE("master/worker with recv_routed(any_source) on a 2-cube, worked out by hand") {
    // t_s = 1, t_w = 0, single-port, E-cube routes; tasks cost 3, 1, 1, 1, 1.
    // Node 0 sends tasks 0, 1, 2 to nodes 1 (0..1), 2 (1..2) and 3 (2..3, via
    // node 1). Answers: node 2 at 4, node 1 at 5, node 3 at 5 (via node 2,
    // after node 2's answer left that link). Node 0 takes node 2's (clock 4,
    // task 3 to it, 4..5), then the tie at 5 by the lower source: node 1
    // (clock 5, task 4, 5..6), then node 3 (clock 6, stop 6..7); node 2
    // answers at 7 (clock 7, stop 7..8), node 1 at 8 (clock 8, stop 8..9).
    const std::vector<double> cost = costs({3, 1, 1, 1, 1});
    for (const variant& v : variants()) {
        CAPTURE(v.name);
        const outcome o = run_once(
            with(base(port_model::single_port, 1, 0), v), 2, [&](node& me, node_logs& log) {
                master_worker_routed(me, log, 5, [&](int i) { return cost[std::size_t(i)]; });
            });
        CHECK(o.logs[0] == std::vector<double>{1, 2, 3, 2, 1});
        CHECK(o.report.node_time == std::vector<double>{9, 9, 8, 7});
        CHECK(o.report.virtual_time == 9);
        CHECK(o.report.congestion.empty());
    }
}

TEST_CASE("recv_routed(any_source) takes a message placed while it chose, its sender waiting on a "
          "link") {
    // t_s = 1, t_w = 0.5, single-port. Node 0 sends node 1 three doubles
    // routed (0..2.5), then exchanges one with it on dimension 0 (2.5..4);
    // node 1 takes the routed message from any source (clock 2.5), then
    // exchanges (2.5..4). Node 1's own bound may place node 0's message
    // while it chooses: it must then take it, not park for good (a false
    // deadlock report in about half the runs once).
    for (const variant& v : variants()) {
        CAPTURE(v.name);
        for (int run = 0; run < 50; ++run) {
            const outcome o = run_once(with(base(port_model::single_port, 1, 0.5), v), 1,
                                       [](node& me, node_logs& log) {
                                           auto& mine = log[std::size_t(me.id())];
                                           if (me.id() == 0)
                                               me.send_routed(1, std::vector<double>{1, 2, 3});
                                           else
                                               mine = me.recv_routed_any<double>().data;
                                           const double out[1] = {10.0 + me.id()};
                                           double in[1] = {0};
                                           me.exchange(0, std::span(out), std::span(in));
                                           mine.push_back(in[0]);
                                       });
            REQUIRE(o.logs[0] == std::vector<double>{11});
            REQUIRE(o.logs[1] == std::vector<double>{1, 2, 3, 10});
            REQUIRE(o.report.node_time == std::vector<double>{4, 4});
        }
    }
}

TEST_CASE("recv_any never takes a message later in virtual time that came first in wall time") {
    // Node 1 computes 100 and then sends; node 2 sends at once. However the
    // two really run, node 0 takes node 2's message (arrival 1) before node 1's
    // (arrival 101), and its clock ends at 101.
    for (const variant& v : variants()) {
        CAPTURE(v.name);
        for (int run = 0; run < 20; ++run) {
            const outcome o = run_once(with(base(port_model::single_port, 1, 0), v), 2,
                                       [](node& me, node_logs& log) {
                                           if (me.id() == 1) {
                                               me.compute(100);
                                               me.send(0, std::vector<double>{1});
                                           } else if (me.id() == 2) {
                                               me.send(1, std::vector<double>{2});
                                           } else if (me.id() == 0) {
                                               for (int i = 0; i < 2; ++i)
                                                   log[0].push_back(me.recv_any<double>().data[0]);
                                           }
                                       });
            REQUIRE(o.logs[0] == std::vector<double>{2, 1});
            REQUIRE(o.report.virtual_time == 101);
        }
    }
}

// f(program, its configuration) for every user-style program under both
// port models.
template <class F>
void for_each_program(F f) {
    for (const user_program& u : user_programs()) {
        CAPTURE(u.name);
        for (port_model ports : {port_model::single_port, port_model::all_port}) {
            CAPTURE(to_string(ports));
            f(u, base(ports, 2, 0.5));
        }
    }
}

// The two cases on the default executor and links, which each meson variant
// sets; the other cases name every variant themselves, so the variants run
// only these (tests/determinism/meson.build).
const auto on_the_variant = doctest::test_suite("on the variant");

TEST_CASE("every user-style program gives one fingerprint over 100 runs" * on_the_variant) {
    // The default executor and links (each test variant sets its own: meson
    // runs this suite under threads, fibers and boost links). The sanitizer
    // builds, 10 times slower, make 20.
    const int runs = test::sanitized ? 20 : 100;
    test::extend_deadline(120.0 * test::sanitizer_slowdown);
    for_each_program([&](const user_program& u, const config& c) {
        const outcome first = run_once(u, c);
        for (int run = 1; run < runs; ++run) {
            const outcome o = run_once(u, c);
            CAPTURE(run);
            REQUIRE(o.logs == first.logs);
            REQUIRE(o.report.virtual_time == first.report.virtual_time);
            REQUIRE(o.fingerprint == first.fingerprint);
        }
    });
}

TEST_CASE("every user-style program gives one fingerprint under every executor, worker count and "
          "link type") {
    test::extend_deadline(120.0 * test::sanitizer_slowdown);
    for_each_program([](const user_program& u, const config& c) {
        const outcome first = run_once(u, with(c, variants().front()));
        for (const variant& v : variants()) {
            CAPTURE(v.name);
            for (int run = 0; run < 5; ++run) {
                const outcome o = run_once(u, with(c, v));
                REQUIRE(o.logs == first.logs);
                REQUIRE(o.report.node_time == first.report.node_time);
                REQUIRE(o.fingerprint == first.fingerprint);
            }
        }
    });
}

TEST_CASE("link capacity changes no fingerprint of a program that does not fill a link" *
          on_the_variant) {
    // With capacity 1 a sender blocks on a full link; its bound is still its
    // clock, so choices stay those of the program. The merging pipeline keeps
    // several messages in flight on one link: its senders wait for room, and
    // a chooser whose candidate a parked sender's bound proves least must
    // take it before anyone is forced (horizon.hpp), in every run.
    const int runs = test::sanitized ? 4 : 10;
    test::extend_deadline(60.0 * test::sanitizer_slowdown);
    for (const user_program& u : user_programs()) {
        CAPTURE(u.name);
        config c = base(port_model::single_port, 2, 0.5);
        c.link_capacity = 16;
        const outcome roomy = run_once(u, c);
        c.link_capacity = 1;
        for (int run = 0; run < runs; ++run) {
            CAPTURE(run);
            const outcome tight = run_once(u, c);
            REQUIRE(tight.logs == roomy.logs);
            REQUIRE(tight.fingerprint == roomy.fingerprint);
        }
    }
}

TEST_CASE("the fingerprint tells runs apart") {
    const user_program u = user_programs().front();
    const outcome a = run_once(u, base(port_model::single_port, 2, 0.5));
    const outcome b = run_once(u, base(port_model::single_port, 3, 0.5));
    CHECK(a.report.fingerprint() != b.report.fingerprint());
    run_report changed = a.report;
    changed.node_digest.at(1) ^= 1; // node 1 received other bytes
    CHECK(changed.fingerprint() != a.report.fingerprint());
    changed = a.report;
    changed.trace.at(0).arrival += 1;
    CHECK(changed.fingerprint() != a.report.fingerprint());
    changed = a.report;
    changed.wall_seconds += 1; // not part of it
    changed.executor = executor_kind::fibers;
    CHECK(changed.fingerprint() == a.report.fingerprint());
}

TEST_CASE("catalog algorithms give one fingerprint under every executor, worker count and link "
          "type") {
    // Every algorithm once (on a 3-cube where it fits), then every
    // (algorithm, dimension 0..6, port model) in an order that mixes them, as
    // many as the time budget allows (HCUBE_DETERMINISM_SECONDS).
    struct item {
        const algorithm_entry* e;
        int dim;
        port_model ports;
        std::size_t words = 0; // 3 + dim, or for what needs a power of two, 2 p
    };
    const auto params_of = [](const item& it) {
        run_params p;
        p.op = it.e->op;
        p.algo = it.e->algo;
        p.dim = it.dim;
        p.ports = it.ports;
        p.words = it.words;
        p.cost = {.t_s = 3, .t_w = 1};
        p.trace = true;
        for (const auto& o : it.e->options)
            p.options.try_emplace(o.name, o.fallback);
        return p;
    };
    // It with the first of its word counts that fits, if any.
    const auto fitting = [&](item it) -> std::optional<item> {
        for (const std::size_t words : {std::size_t(3 + it.dim), std::size_t(2) << it.dim}) {
            it.words = words;
            if (it.e->unfit(params_of(it)).empty()) return it;
        }
        return std::nullopt;
    };
    test::extend_deadline(sweep_seconds() + 300); // every algorithm once, the budget, the last
    std::vector<item> items;
    for (const algorithm_entry& e : builtin_catalog().entries())
        for (int dim = 0; dim <= 6; ++dim)
            for (port_model ports : {port_model::single_port, port_model::all_port})
                if (const auto it = fitting({&e, dim, ports})) items.push_back(*it);
    std::uint32_t seed = 12345;
    for (std::size_t i = items.size() - 1; i > 0; --i) {
        seed = seed * 1664525u + 1013904223u;
        std::swap(items[i], items[seed % (i + 1)]);
    }
    std::vector<item> once;
    for (const algorithm_entry& e : builtin_catalog().entries())
        for (int dim : {3, 4, 2, 5, 6, 1, 0}) {
            const auto it = fitting({&e, dim, port_model::single_port});
            if (const auto all = fitting({&e, dim, port_model::all_port}); it || all) {
                once.push_back(it && (!all || dim % 2 == 0) ? *it : *all);
                break;
            }
        }
    REQUIRE(once.size() == builtin_catalog().entries().size());
    items.insert(items.begin(), once.begin(), once.end());
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(sweep_seconds());
    std::size_t compared = 0;
    for (const item& it : items) {
        if (compared >= once.size() && std::chrono::steady_clock::now() > until) break;
        run_params p = params_of(it);
        CAPTURE(p.op);
        CAPTURE(p.algo);
        CAPTURE(p.dim);
        CAPTURE(to_string(p.ports));
        std::uint64_t first = 0;
        for (const variant& v : variants()) {
            CAPTURE(v.name);
            p.executor = v.executor;
            p.workers = v.executor == executor_kind::fibers ? v.workers : 0;
            p.links = v.links;
            const run_outcome o = run_algorithm(p);
            REQUIRE(o.verified);
            if (&v == &variants().front()) first = o.report.fingerprint();
            REQUIRE(o.report.fingerprint() == first);
        }
        ++compared;
    }
    MESSAGE(compared << " catalog runs compared across " << variants().size() << " variants");
}
