// Who wakes a parked node: only a waker whose event can end its wait. A
// message arriving ends a receive; a message taken off a link ends a wait for
// room or for a delivery. The runtime counts each node's parks
// (detail::parks_of), so a wake-up for nothing shows as a second park. The
// other nodes act only once node 3 is parked with no wake-up on its way, so
// each event below meets node 3 asleep, whatever the scheduler does.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <thread>

#include <hcube/machine.hpp>

#include "test_support.hpp"

using namespace hcube;

namespace {

// Until node 3 sleeps on a bell nobody rang since it parked.
void until_three_parked(const node& me) {
    while (!detail::parks_of(me, 3).parked)
        std::this_thread::yield();
}

// A 2-cube on threads: node 3 plays `three` and returns how many times it
// parked; node 1 plays `first` once node 3 is parked, node 2 plays `second`
// once `first` returned and node 3 is parked again (or still). Node 0 idles.
std::uint64_t parks_of_three(const config& c, const std::function<std::uint64_t(node&)>& three,
                             const std::function<void(node&)>& first,
                             const std::function<void(node&)>& second) {
    config t = c;
    t.executor = executor_kind::threads;
    machine m(t);
    std::uint64_t parks = 0;
    std::atomic<bool> first_done{false};
    m.run([&](node& me) {
        switch (me.id()) {
        case 3:
            parks = three(me);
            break;
        case 1:
            until_three_parked(me);
            first(me);
            first_done.store(true, std::memory_order_release);
            break;
        case 2:
            while (!first_done.load(std::memory_order_acquire))
                std::this_thread::yield();
            until_three_parked(me);
            second(me);
            break;
        default:
            break;
        }
    });
    return parks;
}

// How many times `me` parks while f runs.
template <class F>
std::uint64_t parks_in(node& me, F f) {
    const std::uint64_t before = detail::parks_of(me, me.id()).parks;
    f();
    return detail::parks_of(me, me.id()).parks - before;
}

const int from1 = 11, from3 = 13;

} // namespace

//   node 3   send dim 0 -> 2, recv dim 1 from 1 (parks) ............ done
//   node 1   (3 parked) recv dim 1 from 3: takes 3's message, no wake for 3
//   node 2   (3 parked) send dim 0 -> 3: an arrival, wakes 3
TEST_CASE("a node waiting to receive parks once: a take of its earlier message does not wake it") {
    int got = -1, taken = -1;
    const auto parks = parks_of_three(
        test::cfg(2),
        [&](node& me) {
            me.send(1, std::span(&from3, 1));
            return parks_in(me, [&] { me.recv(0, std::span(&got, 1)); });
        },
        [&](node& me) { me.recv(1, std::span(&taken, 1)); },
        [&](node& me) { me.send(0, std::span(&from1, 1)); });
    CHECK(taken == 13);
    CHECK(got == 11);
    // Parked once, woken once by node 2's message; node 1's take rang nothing.
    CHECK(parks == 1);
}

// The other way round: node 3 waits for room on a full link (capacity 1) and
// is woken by the take, not by a message arriving on another of its links.
//
//   node 3   send dim 0 -> 2 twice (full: parks for room), recv dim 1 . done
//   node 1   (3 parked) send dim 1 -> 3: an arrival, no wake for 3
//   node 2   (3 parked) recv dim 0 twice: the take wakes 3
TEST_CASE("a node waiting for room on a full link parks once: an arrival does not wake it") {
    config c = test::cfg(2);
    c.link_capacity = 1;
    int got[2] = {-1, -1}, other = -1;
    const auto parks = parks_of_three(
        c,
        [&](node& me) {
            me.send(0, std::span(&from3, 1));
            const auto n = parks_in(me, [&] { me.send(0, std::span(&from3, 1)); });
            me.recv(1, std::span(&other, 1));
            return n;
        },
        [&](node& me) { me.send(1, std::span(&from1, 1)); },
        [&](node& me) {
            me.recv(0, std::span(&got[0], 1));
            me.recv(0, std::span(&got[1], 1));
        });
    CHECK(got[0] == 13);
    CHECK(got[1] == 13);
    CHECK(other == 11);
    CHECK(parks == 1);
}
