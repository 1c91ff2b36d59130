// The E-cube router (Grama et al. 4.5.3): delivery, per-pair order, cut-through
// cost, traffic on every link of the path, congestion.
#include <doctest/doctest.h>

#include <hcube/machine.hpp>
#include <hcube/topology.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "test_support.hpp"

using namespace hcube;
using hcube::test::cfg;

TEST_CASE("routed messages reach any node, in order per pair, at cut-through cost") {
    machine m(cfg(3, port_model::single_port, 4, 1));
    const run_report r = m.run([](node& me) {
        if (me.id() == 1) {
            me.send_routed(6, std::vector<int>{1, 2, 3});
            me.send_routed(6, std::vector<int>{4});
        }
        if (me.id() == 6) {
            std::vector<int> first(3);
            me.recv_routed(1, first);
            CHECK(first == std::vector<int>{1, 2, 3});
            CHECK(me.recv_routed<int>(1) == std::vector<int>{4});
        }
    });
    // 1 -> 6 differ in dims 0, 1, 2: path 1 -> 0 -> 2 -> 6.
    CHECK(r.routed_messages == 2);
    for (auto [from, k] : {std::pair{1, 0}, std::pair{0, 1}, std::pair{2, 2}}) {
        CHECK(r.link(from, k).messages == 2);
        CHECK(r.link(from, k).bytes == 16);
    }
    CHECK(r.messages == 6);
    CHECK(r.node_time[6] == (4 + 3) + (4 + 1)); // the second waits for the sender's port
    CHECK(r.congestion.empty());
}

TEST_CASE("two messages on one directed link at once: one congestion event, one delay") {
    // 0 -> 3 uses links 0->1 (dim 0) and 1->3 (dim 1); 1 -> 3 uses 1->3 too.
    machine m(cfg(2, port_model::all_port, 1, 1));
    const run_report r = m.run([](node& me) {
        const std::vector<int> five(5, me.id());
        if (me.id() == 0 || me.id() == 1) me.send_routed(3, five);
        if (me.id() == 3) {
            CHECK(me.recv_routed<int>(0) == std::vector<int>(5, 0));
            CHECK(me.recv_routed<int>(1) == std::vector<int>(5, 1));
        }
    });
    REQUIRE(r.congestion.size() == 1);
    CHECK(r.congestion[0].from == 1);
    CHECK(r.congestion[0].dim == 1);
    CHECK(r.congestion[0].wanted == 0);
    CHECK(r.congestion[0].granted == 6);
    CHECK(r.virtual_time == 12);
    CHECK(r.link(1, 1).messages == 2);
}

TEST_CASE("all-port: a routed message holds the send port of its first hop, the lowest dimension") {
    // t_s = 1, t_w = 0. Node 0 sends on dim 0 (port 0 busy over [0, 1]), then
    // routed to 3 (first hop dim 0: waits for port 0, [1, 2]) and to 2 (dim 1:
    // port 1 free, [0, 1]). On the highest dimension's port instead, 3 would
    // receive at 1 and 2 at 2.
    machine m(cfg(2, port_model::all_port, 1, 0));
    const int v = 7;
    const run_report r = m.run([&](node& me) {
        int got = -1;
        if (me.id() == 0) {
            me.send(0, std::span(&v, 1));
            me.send_routed(3, std::span(&v, 1));
            me.send_routed(2, std::span(&v, 1));
        } else if (me.id() == 1) {
            me.recv(0, std::span(&got, 1));
        } else {
            me.recv_routed(0, std::span(&got, 1));
        }
        if (me.id() != 0) CHECK(got == 7);
    });
    REQUIRE(r.node_time.size() == 4);
    CHECK_MESSAGE(r.node_time[0] == 2, "node 0's port 0 is busy until 2");
    CHECK(r.node_time[1] == 1);
    CHECK_MESSAGE(r.node_time[2] == 1, "the message to 2 left on port 1 at 0");
    CHECK_MESSAGE(r.node_time[3] == 2, "the message to 3 waited for port 0, its first hop's");
    CHECK(r.congestion.empty());
}

TEST_CASE("Algorithm 4.10 pattern: p - 1 routed steps without congestion") {
    const int d = 4, p = 16;
    machine m(cfg(d, port_model::single_port, 2, 1));
    std::atomic<int> bad{0};
    const run_report r = m.run([&](node& me) {
        for (int j = 1; j < p; ++j) {
            const int partner = me.id() ^ j;
            me.send_routed(partner, std::vector<int>(3, me.id()));
            if (me.recv_routed<int>(partner) != std::vector<int>(3, partner)) ++bad;
        }
    });
    CHECK(bad == 0);
    CHECK(r.congestion.empty());
    CHECK(r.virtual_time == (p - 1) * (2 + 3)); // Eq. 4.10
    std::uint64_t hops = 0;
    for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j)
            hops += std::uint64_t(hamming(node_id(i), node_id(j)));
    CHECK(r.messages == hops);
}

TEST_CASE("router errors name the node and the values") {
    machine m(cfg(2));
    const auto failure = [&](const std::function<void(node&)>& f) {
        try {
            m.run(f);
        } catch (const run_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(failure([](node& me) {
              if (me.id() == 1) me.send_routed(4, std::vector<int>{1});
          }) == "node 1: send_routed to node 4, outside 0..3");
    CHECK(failure([](node& me) {
              if (me.id() == 2) me.send_routed(2, std::vector<int>{1});
          }) == "node 2: send_routed to itself; routed messages go to other nodes");
    CHECK(failure([](node& me) {
              if (me.id() == 0) me.send_routed(3, std::vector<int>{1, 2});
              if (me.id() == 3) {
                  std::vector<int> one(1);
                  me.recv_routed(0, one);
              }
          }) == "node 3: recv_routed from node 0: expected 1 elements of 4 bytes, message has 2 "
                "elements of 4 bytes");
    CHECK_THROWS_WITH_AS(m.run([](node& me) {
        if (me.id() == 0) (void)me.recv_routed<int>(3);
    }),
                         doctest::Contains("node 0: recv_routed from node 3"), deadlock_error);
}

// ---- virtual-time order (router.hpp) -----------------------------------------

namespace {

// Every node but 0 sends m words routed to node 0; node 0 takes them in source
// order.
run_report all_to_zero(machine& mach, std::size_t m) {
    return mach.run([m](node& me) {
        if (me.id() != 0) {
            me.send_routed(0, std::vector<int>(m, me.id()));
            return;
        }
        for (int src = 1; src < me.size(); ++src)
            CHECK(me.recv_routed<int>(src) == std::vector<int>(m, src));
    });
}

} // namespace

TEST_CASE("congestion is resolved in virtual-time order, lower source first: 8 nodes to node 0") {
    // Worked by hand. Every message wants t = 0; in source order (d = 3, one
    // time unit per message at t_s = 1, t_w = 0):
    //   1: 1->0              [0,1)   2: 2->0              [0,1)
    //   3: 3->2->0     link 2->0 taken until 1: [1,2)
    //   4: 4->0              [0,1)   5: 5->4->0     link 4->0 taken: [1,2)
    //   6: 6->4->0     link 4->0 taken until 2: [2,3)
    //   7: 7->6->4->0  link 4->0 taken until 3: [3,4)
    // Arrivals 1 1 2 1 2 3 4; four messages delayed. Single-port node 0 takes
    // them one after another: 1, 2, ..., 7. All-port: the latest arrival, 4.
    const struct {
        port_model ports;
        double time;
    } cases[] = {{port_model::single_port, 7}, {port_model::all_port, 4}};
    for (const auto& c : cases) {
        machine mach(cfg(3, c.ports, 1, 0));
        const run_report first = all_to_zero(mach, 2);
        CHECK(first.virtual_time == c.time);
        CHECK(first.steps == std::int64_t(c.time));
        REQUIRE(first.congestion.size() == 4); // one event per delayed message
        const congestion_event expect[] = {
            {2, 1, 3, 0, 0, 1}, {4, 2, 5, 0, 0, 1}, {4, 2, 6, 0, 0, 2}, {4, 2, 7, 0, 0, 3}};
        for (int i = 0; i < 4; ++i) {
            const congestion_event& e = first.congestion[std::size_t(i)];
            INFO("event ", i);
            CHECK(e.from == expect[i].from);
            CHECK(e.dim == expect[i].dim);
            CHECK(e.source == expect[i].source);
            CHECK(e.dest == expect[i].dest);
            CHECK(e.wanted == expect[i].wanted);
            CHECK(e.granted == expect[i].granted);
        }
        // The same in every run, whatever order the threads reach the router in.
#if defined(__SANITIZE_THREAD__)
        const int runs = 100;
#else
        const int runs = 1000;
#endif
        int differ = 0;
        for (int run = 0; run < runs; ++run) {
            const run_report r = all_to_zero(mach, 2);
            differ += r.virtual_time != first.virtual_time || r.steps != first.steps ||
                      r.congestion.size() != first.congestion.size();
        }
        CHECK(differ == 0);
    }
}

TEST_CASE("steps follow congestion as virtual time does at t_s = 1, t_w = 0") {
    // The same 8 nodes with t_s = 1, t_w = 1, 2 words: every message takes 3
    // time units but one step, so time is 3x the steps of the case above.
    for (const auto ports : {port_model::single_port, port_model::all_port}) {
        machine mach(cfg(3, ports, 1, 1));
        const run_report r = all_to_zero(mach, 2);
        const double steps = ports == port_model::single_port ? 7 : 4;
        CHECK(r.steps == std::int64_t(steps));
        CHECK(r.virtual_time == 3 * steps);
    }
}

TEST_CASE("steps stay exact when time and steps part in the middle of a run") {
    // At t_s = 1, t_w = 0 both clocks agree until a node computes (time only),
    // so the router keeps one placement state until then and two after. Two
    // rounds of 8 nodes to node 0, a compute between them: steps are those of
    // the program without the compute (2 x 7 single-port, 2 x 4 all-port: the
    // hand-worked case above, twice), time is later, and both are the same in
    // every run.
    for (const auto ports : {port_model::single_port, port_model::all_port}) {
        machine mach(cfg(3, ports, 1, 0));
        const auto rounds = [](double work) {
            return [work](node& me) {
                for (int round = 0; round < 2; ++round) {
                    if (round == 1) me.compute(work * me.id());
                    if (me.id() == 0) {
                        for (int src = 1; src < me.size(); ++src)
                            CHECK(me.recv_routed<int>(src) == std::vector<int>(2, src + round));
                    } else {
                        me.send_routed(0, std::vector<int>(2, me.id() + round));
                    }
                }
            };
        };
        const run_report plain = mach.run(rounds(0));
        const run_report parted = mach.run(rounds(10));
        const std::int64_t steps = ports == port_model::single_port ? 14 : 8;
        CHECK(plain.steps == steps);
        CHECK(plain.virtual_time == double(steps));
        CHECK(parted.steps == steps);
        // Node 7 computes 70 from clock 0 (a routed send leaves the clock), then its
        // message needs one unit, unhindered by then: 71 under either port model.
        CHECK(parted.virtual_time == 71);
        for (int run = 0; run < 50; ++run) {
            const run_report again = mach.run(rounds(10));
            CHECK(again.steps == parted.steps);
            CHECK(again.virtual_time == parted.virtual_time);
        }
    }
}

TEST_CASE("the message that starts first in virtual time gets the link, not the first to arrive") {
    // 0 -> 3 (links 0->1, 1->3) wants [2,7); 1 -> 3 (link 1->3) wants [5,7).
    // Node 0 sleeps in real time, so node 1 reaches the router first; the link
    // 1->3 still goes to node 0's message, which starts earlier, and node 1's
    // waits until 7 (first come, first served gave node 0's [7,12) instead).
    machine mach(cfg(2, port_model::all_port, 1, 1));
    for (int run = 0; run < 20; ++run) {
        const run_report r = mach.run([](node& me) {
            if (me.id() == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                me.compute(2);
                me.send_routed(3, std::vector<int>{0, 0, 0, 0});
            }
            if (me.id() == 1) {
                me.compute(5);
                me.send_routed(3, std::vector<int>{1});
            }
            if (me.id() == 3) {
                CHECK(me.recv_routed<int>(1) == std::vector<int>{1});
                CHECK(me.clock() == 9);
                CHECK(me.recv_routed<int>(0) == std::vector<int>{0, 0, 0, 0});
                CHECK(me.clock() == 9);
            }
        });
        REQUIRE(r.congestion.size() == 1);
        CHECK(r.congestion[0].source == 1);
        CHECK(r.congestion[0].from == 1);
        CHECK(r.congestion[0].dim == 1);
        CHECK(r.congestion[0].wanted == 5);
        CHECK(r.congestion[0].granted == 7);
        CHECK(r.virtual_time == 9);
    }
}

TEST_CASE("a routed message waits for nodes that could still send earlier, then is placed") {
    // Node 1 waits on a direct message that node 3 sends only after its routed
    // message from node 0 arrives: node 1's bound (its clock 0) stays below the
    // message's start (5) until every node is parked; then the router places it.
    machine mach(cfg(2, port_model::all_port, 1, 0));
    for (int run = 0; run < 50; ++run) {
        const run_report r = mach.run([](node& me) {
            if (me.id() == 0) {
                me.compute(5);
                me.send_routed(3, std::vector<int>{7});
            }
            if (me.id() == 3) {
                CHECK(me.recv_routed<int>(0) == std::vector<int>{7});
                me.send(1, std::vector<int>{8}); // to node 1
            }
            if (me.id() == 1) CHECK(me.recv<int>(1) == std::vector<int>{8});
        });
        CHECK(r.virtual_time == 7); // arrives at 6, the direct message at 7
        CHECK(r.node_time[1] == 7);
    }
}

TEST_CASE("routed messages under a scheduling adversary: one virtual time") {
    // Every node sends to a few others after random real-time delays and
    // receives in a fixed order; every node's clock and the congestion list
    // must not change between runs. Under all-port a node's sends use several
    // ports, so its bound is its earliest free port, not the last one used.
    const int d = 4, p = 16;
    for (const auto ports : {port_model::single_port, port_model::all_port}) {
        CAPTURE(to_string(ports));
        machine mach(cfg(d, ports, 2, 1));
        std::vector<std::vector<double>> times;
        std::vector<std::size_t> delayed;
        for (int run = 0; run < 30; ++run) {
            const run_report r = mach.run([run](node& me) {
                std::minstd_rand rng(unsigned(run * p + me.id() + 1));
                for (int j = 1; j <= 3; ++j) {
                    for (int spin = int(rng() % 2000); spin > 0; --spin)
                        if (spin % 500 == 0) std::this_thread::yield();
                    me.send_routed((me.id() + j * 5) % p, std::vector<int>(j, me.id()));
                }
                for (int j = 1; j <= 3; ++j)
                    CHECK(me.recv_routed<int>(((me.id() - j * 5) % p + p) % p).size() ==
                          std::size_t(j));
            });
            times.push_back(r.node_time);
            delayed.push_back(r.congestion.size());
        }
        CHECK(std::count(times.begin(), times.end(), times.front()) ==
              std::ptrdiff_t(times.size()));
        CHECK(std::count(delayed.begin(), delayed.end(), delayed.front()) ==
              std::ptrdiff_t(delayed.size()));
    }
}

TEST_CASE("routed trace records carry the placed arrival") {
    machine mach(cfg(3, port_model::all_port, 1, 0));
    mach.set_trace(true);
    const run_report r = all_to_zero(mach, 1);
    // Arrivals from the worked example above: 1 1 2 1 2 3 4 for sources 1..7.
    const double arrival[] = {0, 1, 1, 2, 1, 2, 3, 4};
    int seen = 0;
    for (const trace_record& t : r.trace) {
        if (t.dim != -1) continue;
        CHECK(t.to == 0);
        CHECK(t.start == 0);
        CHECK(t.arrival == arrival[t.from]);
        ++seen;
    }
    CHECK(seen == 7);
}

TEST_CASE("a node that finished before routed traffic began does not hold it back") {
    // Node 0 finishes before node 1's routed message to node 3, which crosses
    // dimension 1, so node 0 (a lower id at the same time) could delay it
    // while unfinished. Nodes finish without the router's lock until routed
    // traffic begins; the first routed send must tell it who had. Node 1 then
    // waits without parking, so nothing forces the placement: if node 0
    // still counted, the message would stay unplaced until node 1 gave up.
    // Threads: a fiber that waits without parking would hold its worker.
    config c = cfg(2);
    c.executor = executor_kind::threads;
    machine mach(c);
    for (int run = 0; run < 3; ++run) {
        std::atomic<bool> zero_returned{false}, delivered{false};
        bool seen = false;
        const run_report r = mach.run([&](node& me) {
            if (me.id() == 0) zero_returned.store(true);
            if (me.id() == 1) {
                while (!zero_returned.load())
                    std::this_thread::yield();
                std::this_thread::sleep_for(std::chrono::milliseconds(20)); // node 0 finishes
                me.send_routed(3, std::vector<int>{7});
                const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (!delivered.load() && std::chrono::steady_clock::now() < give_up)
                    std::this_thread::yield();
                seen = delivered.load();
            }
            if (me.id() == 3) {
                CHECK(me.recv_routed<int>(1) == std::vector<int>{7});
                delivered.store(true);
            }
        });
        CHECK(seen);
        CHECK(r.node_time[3] == 1); // cut-through: t_s + t_w m over both links
    }
}
