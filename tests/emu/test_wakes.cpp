// Who wakes a parked node: only a waker whose event can end its wait. A
// message arriving ends a receive; a message taken off a link ends a wait for
// room or for a delivery. Seen from a node thread, each park is one voluntary
// context switch (a futex sleep), so a spurious wake-up shows as a second one.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include <sys/resource.h>

#include <hcube/machine.hpp>

#include "test_support.hpp"

using namespace hcube;

namespace {

long sleeps_of_this_thread() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nvcsw;
}

config threads(int dim) {
    config c = test::cfg(dim);
    c.executor = executor_kind::threads;
    return c;
}

} // namespace

// 2-cube, node 3 (a thread of its own: the caller of run() may run node 0):
//
//   node 3   send dim 0 -> 2 ... recv dim 1 from 1 ......................... done
//   node 2   sleep 100 ms, recv dim 0 (takes 3's message: no wake for 3)
//   node 1   sleep 300 ms, send dim 1 -> 3                (wakes 3: arrival)
TEST_CASE("a node waiting to receive sleeps once: a take of its earlier message does not wake it") {
    machine m(threads(2));
    long sleeps = -1;
    int got = -1, taken = -1;
    m.run([&](node& me) {
        using namespace std::chrono_literals;
        const int word = 10 + me.id();
        switch (me.id()) {
        case 3: {
            me.send(0, std::span(&word, 1));
            const long before = sleeps_of_this_thread();
            me.recv(1, std::span(&got, 1));
            sleeps = sleeps_of_this_thread() - before;
            break;
        }
        case 2:
            std::this_thread::sleep_for(100ms);
            me.recv(0, std::span(&taken, 1));
            break;
        case 1:
            std::this_thread::sleep_for(300ms);
            me.send(1, std::span(&word, 1));
            break;
        default:
            break;
        }
    });
    CHECK(taken == 13);
    CHECK(got == 11);
    // Parked once, woken once by node 1's message; node 2's take rang nothing.
    CHECK(sleeps == 1);
}

// The other way round: node 3 waits for room on a full link (capacity 1) and
// is woken by the take, not by a message arriving on another of its links.
//
//   node 3   send dim 0 -> 2, send dim 0 -> 2 (full: waits for room) ..... done
//   node 1   sleep 100 ms, send dim 1 -> 3 (an arrival: no wake for 3)
//   node 2   sleep 300 ms, recv dim 0 twice         (the take wakes 3)
TEST_CASE("a node waiting for room on a full link sleeps once: an arrival does not wake it") {
    config c = threads(2);
    c.link_capacity = 1;
    machine m(c);
    long sleeps = -1;
    int got[2] = {-1, -1}, other = -1;
    m.run([&](node& me) {
        using namespace std::chrono_literals;
        const int word = 10 + me.id();
        switch (me.id()) {
        case 3: {
            me.send(0, std::span(&word, 1));
            const long before = sleeps_of_this_thread();
            me.send(0, std::span(&word, 1));
            sleeps = sleeps_of_this_thread() - before;
            me.recv(1, std::span(&other, 1));
            break;
        }
        case 1:
            std::this_thread::sleep_for(100ms);
            me.send(1, std::span(&word, 1));
            break;
        case 2:
            std::this_thread::sleep_for(300ms);
            me.recv(0, std::span(&got[0], 1));
            me.recv(0, std::span(&got[1], 1));
            break;
        default:
            break;
        }
    });
    CHECK(got[0] == 13);
    CHECK(got[1] == 13);
    CHECK(other == 11);
    CHECK(sleeps == 1);
}
