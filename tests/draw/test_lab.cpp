// The hints of the lab's exercise 3 (examples/lab/README.md) on unbuffered
// links: "odd nodes receive first" still deadlocks on dimension 1, the rule
// per dimension (the node whose bit k is 1 receives first) and one exchange
// complete.
#include <doctest/doctest.h>

#include <functional>

#include <hcube/draw.hpp>
#include <hcube/hcube.hpp>

using namespace hcube;

namespace {

// find_deadlock.cpp's program, with receive-first chosen per node and dimension.
run_report shift_both_ways(const std::function<bool(int node, int k)>& receives_first) {
    machine m({.dim = 2, .link_capacity = 0});
    return m.run([&](node& me) {
        for (int k = 0; k < me.dim(); ++k) {
            const int mine[1] = {me.id()};
            int theirs[1];
            if (receives_first(me.id(), k)) {
                me.recv(k, theirs);
                me.send(k, mine);
            } else {
                me.send(k, mine);
                me.recv(k, theirs);
            }
            CHECK(theirs[0] == (me.id() ^ (1 << k)));
        }
    });
}

} // namespace

TEST_CASE("the lab's deadlock: odd nodes first is not enough, bit k first and exchange are") {
    CHECK_THROWS_WITH_AS(shift_both_ways([](int node, int) { return node % 2 == 1; }),
                         doctest::Contains("dim 1"), deadlock_error);
    CHECK(shift_both_ways([](int node, int k) { return (node >> k & 1) == 1; }).virtual_time == 4);
    machine m({.dim = 2, .link_capacity = 0});
    CHECK(m.run([](node& me) {
               for (int k = 0; k < me.dim(); ++k)
                   me.exchange(k, std::vector<int>{me.id()}, std::vector<int>(1));
           }).virtual_time == 2);
}
