// All-to-all broadcast (collectives/allgather.hpp): serial reference for every
// algorithm, d = 0..8 and four element types; exact source costs (Eqs. 4.2-4.4);
// Figure 4.11 replayed step by step; the failure paths.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <hcube/collectives/allgather.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/machine.hpp>

#include <collective_checks.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr test::named<allgather_algo> algos[] = {{allgather_algo::hypercube, "hypercube"},
                                                 {allgather_algo::ring, "ring"},
                                                 {allgather_algo::mesh, "mesh"},
                                                 {allgather_algo::automatic, "automatic"}};

bool fits(allgather_algo a, int d) {
    return a != allgather_algo::mesh || d % 2 == 0;
}

// m for the cost checks: fewer where the ring has 127 or 255 steps.
std::vector<std::size_t> cost_sizes(int d) {
    if (d >= 7) return {5};
    return {0, 1, 5, 16};
}

// Runs allgather of m elements per node and counts the nodes whose result
// differs from the blocks of nodes 0..p-1 in order.
constexpr auto wrong_nodes = []<class T>(machine& mach, allgather_algo a, std::size_t m) {
    return test::count_wrong_nodes(mach, [&](node& me) {
        std::vector<T> mine(m), all(m * std::size_t(me.size()));
        for (std::size_t i = 0; i < m; ++i)
            mine[i] = test::value_for<T>(me.id(), i);
        allgather(me, std::span<const T>(mine), std::span<T>(all), a);
        for (std::size_t k = 0; k < all.size(); ++k)
            if (!(all[k] == test::value_for<T>(int(k / m), k % m))) return false;
        return true;
    });
};

} // namespace

TEST_CASE("allgather equals the serial reference for every algorithm, d = 0..8, four types") {
    test::check_every_cube<test::point>(algos, test::bounded_sizes, wrong_nodes, fits);
}

TEST_CASE("allgather_blocks fills uneven blocks in place") {
    test::for_every_cube(
        6, algos, test::uneven_sizes,
        [](machine& mach, int d, allgather_algo a, std::size_t n) {
            const std::size_t p = std::size_t{1} << d;
            CHECK(test::count_wrong_nodes(mach, [&](node& me) {
                      std::vector<std::int64_t> data(n, -1);
                      const block b = block_of(n, p, std::size_t(me.id()));
                      for (std::size_t k = b.begin; k < b.end(); ++k)
                          data[k] = std::int64_t(k);
                      allgather_blocks(me, std::span<std::int64_t>(data), a);
                      for (std::size_t k = 0; k < n; ++k)
                          if (data[k] != std::int64_t(k)) return false;
                      return true;
                  }) == 0);
        },
        fits);
}

TEST_CASE("allgather costs exactly Eqs. 4.2, 4.3 and 4.4 (single-port, t_s = 3, t_w = 2)") {
    constexpr double t_s = 3, t_w = 2;
    for (int d = 0; d <= 8; ++d) {
        machine mach(test::cfg(d, port_model::single_port, t_s, t_w));
        for (std::size_t m : cost_sizes(d)) {
            CAPTURE(d);
            CAPTURE(m);
            const auto time = [&](allgather_algo a) {
                return mach
                    .run([&](node& me) {
                        std::vector<std::int32_t> mine(m, me.id()), all(m * std::size_t(me.size()));
                        allgather(me, std::span<const std::int32_t>(mine),
                                  std::span<std::int32_t>(all), a);
                    })
                    .virtual_time;
            };
            const double hypercube = cost::allgather_hypercube(d, double(m), t_s, t_w);
            CHECK(time(allgather_algo::hypercube) == hypercube);
            CHECK(time(allgather_algo::ring) == cost::allgather_ring(d, double(m), t_s, t_w));
            if (d % 2 == 0)
                CHECK(time(allgather_algo::mesh) == cost::allgather_mesh(d, double(m), t_s, t_w));
            // Eq. 4.4 is never above the others, so `automatic` takes the
            // hypercube; but with m = 0 on one dimension the d cycles (Mathur &
            // Johnsson 4.2.1, single-port there), which then send nothing.
            CHECK(time(allgather_algo::automatic) == (m == 0 && d == 1 ? 0.0 : hypercube));
        }
    }
}

TEST_CASE("allgather_blocks (hypercube) costs exactly its form for any total size") {
    test::check_blocks_cost(
        [](node& me, std::size_t n) {
            std::vector<int> data(n);
            allgather_blocks(me, std::span<int>(data));
        },
        cost::allgather_hypercube_blocks, cost::allgather_hypercube);
}

TEST_CASE("allgather cost formulas: hand-computed values") {
    // d = 4 (p = 16, sqrt p = 4), m = 10, t_s = 3, t_w = 2.
    CHECK(cost::allgather_hypercube(4, 10, 3, 2) == 3 * 4 + 2 * 10 * 15);
    CHECK(cost::allgather_ring(4, 10, 3, 2) == (3 + 2 * 10) * 15);
    CHECK(cost::allgather_mesh(4, 10, 3, 2) == 2 * 3 * 3 + 2 * 10 * 15);
    CHECK(cost::allgather_mesh(0, 10, 3, 2) == 0);
    // 11 elements on 8 nodes, blocks 2, 2, 2, 1, 1, 1, 1, 1: the largest
    // messages are block 0 (2 words), blocks 0, 1 (4), blocks 0..3 (7).
    CHECK(cost::allgather_hypercube_blocks(3, 11, 3, 2) == 3 * 3 + 2 * (2 + 4 + 7));
}

TEST_CASE("Figure 4.11: all-to-all broadcast on eight nodes, the state after each step") {
    // The messages every node holds before steps 1, 2, 3 and at the end
    // (Figure 4.11 (a)-(d)), node by node.
    const std::vector<std::vector<std::string>> figure = {
        {"0", "1", "2", "3", "4", "5", "6", "7"},
        {"0,1", "0,1", "2,3", "2,3", "4,5", "4,5", "6,7", "6,7"},
        {"0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3", "4,5,6,7", "4,5,6,7", "4,5,6,7", "4,5,6,7"},
        std::vector<std::string>(8, "0,1,2,3,4,5,6,7"),
    };
    machine mach(test::cfg(3, port_model::single_port, 1, 0));
    mach.set_trace(true);
    std::vector<std::vector<std::string>> state(4, std::vector<std::string>(8));
    const run_report r = mach.run([&](node& me) {
        std::vector<int> data(8, -1);
        data[std::size_t(me.id())] = me.id();
        const auto snapshot = [&](int step) {
            std::string s;
            for (int v : data)
                if (v >= 0) s += (s.empty() ? "" : ",") + std::to_string(v);
            state[std::size_t(step)][std::size_t(me.id())] = s;
        };
        snapshot(0);
        for (int i = 0; i < 3; ++i) {
            detail::ring_allgather_phase(me, std::span<int>(data), i, 1);
            snapshot(i + 1);
        }
    });
    for (std::size_t step = 0; step < 4; ++step)
        for (std::size_t x = 0; x < 8; ++x) {
            CAPTURE(step);
            CAPTURE(x);
            CHECK(state[step][x] == figure[step][x]);
        }
    // Step i runs on dimension i with 2^i messages' worth of data (Alg. 4.7).
    REQUIRE(r.trace.size() == 24);
    for (const trace_record& t : r.trace) {
        CHECK(t.to == (t.from ^ (1 << t.dim)));
        CHECK(t.bytes == sizeof(int) << t.dim);
    }
    CHECK(r.steps == 3);
}

TEST_CASE("allgather ring and mesh stay on Gray-code neighbours") {
    // Ring: every node sends p - 1 messages, all on the link to its Gray successor.
    machine mach(test::cfg(4));
    mach.set_trace(true);
    for (allgather_algo a : {allgather_algo::ring, allgather_algo::mesh}) {
        const run_report r = mach.run([&](node& me) {
            std::vector<int> mine(2, me.id()), all(32);
            allgather(me, std::span<const int>(mine), std::span<int>(all), a);
        });
        CHECK(r.routed_messages == 0);
        for (const trace_record& t : r.trace) {
            const node_id pos = gray_inverse(node_id(t.from));
            if (a == allgather_algo::ring)
                CHECK(node_id(t.to) == gray((pos + 1) % 16));
            else // rows: low two bits; columns: high two bits, each a 4-node Gray ring
                CHECK(t.dim == (t.bytes == 2 * sizeof(int)
                                    ? gray_transition(gray_inverse(node_id(t.from) & 3), 2)
                                    : 2 + gray_transition(gray_inverse(node_id(t.from) >> 2), 2)));
        }
        CHECK(r.steps == (a == allgather_algo::ring ? 15 : 6));
    }
}

TEST_CASE("unbuffered links: hypercube allgather completes, the ring reports a deadlock") {
    config c = test::cfg(3);
    c.link_capacity = 0;
    machine mach(c);
    const auto run = [&](allgather_algo a) {
        return mach.run([&](node& me) {
            std::vector<int> mine(2, me.id()), all(16);
            allgather(me, std::span<const int>(mine), std::span<int>(all), a);
        });
    };
    CHECK(run(allgather_algo::hypercube).steps == 3);           // exchanges need no buffer
    CHECK_THROWS_AS(run(allgather_algo::ring), deadlock_error); // Alg. 4.4 sends first
}

TEST_CASE("allgather rejects a result buffer of the wrong size, naming node and sizes") {
    machine mach(test::cfg(3));
    try {
        mach.run([](node& me) {
            std::vector<int> mine(2), all(me.id() == 5 ? 15 : 16);
            allgather(me, std::span<const int>(mine), std::span<int>(all));
        });
        FAIL("no error");
    } catch (const run_error& e) {
        const std::string what = e.what();
        CAPTURE(what);
        CHECK(e.node() == 5);
        CHECK(what.find("node 5") != std::string::npos);
        CHECK(what.find("all.size() = 15") != std::string::npos);
        CHECK(what.find("8 * 2 = 16") != std::string::npos);
    }
}

TEST_CASE("allgather mesh with an odd dimension is a usage error") {
    machine mach(test::cfg(3));
    try {
        mach.run([](node& me) {
            std::vector<int> mine(1), all(8);
            allgather(me, std::span<const int>(mine), std::span<int>(all), allgather_algo::mesh);
        });
        FAIL("no error");
    } catch (const run_error& e) {
        const std::string what = e.what();
        CAPTURE(what);
        CHECK(what.find("mesh") != std::string::npos);
        CHECK(what.find("even dimension") != std::string::npos);
        CHECK(what.find("dimension 3") != std::string::npos);
        CHECK_THROWS_AS(std::rethrow_exception(e.original()), usage_error);
    }
}
