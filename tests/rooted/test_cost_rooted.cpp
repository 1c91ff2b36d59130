// lib/cost/rooted.hpp: the source's closed forms on hand-worked values, and the
// exact message-splitting time against Eq. 4.13 and against schedules worked
// out by hand when p does not divide m. (tests/rooted/test_broadcast.cpp and
// test_reduce.cpp check the emulator against these for d = 0..8.)
#include <cstddef>
#include <utility>

#include <doctest/doctest.h>
#include <hcube/cost/rooted.hpp>

using namespace hcube::cost;

TEST_CASE("Eq. 4.1 and Eq. 4.6 on hand-worked values") {
    // (t_s + t_w m) log p with p = 8, m = 10, t_s = 2, t_w = 1.
    CHECK(broadcast_binomial(3, 10, 2, 1) == 36);
    CHECK(reduce_binomial(3, 10, 2, 1) == 36);
    CHECK(broadcast_binomial(0, 10, 2, 1) == 0);
    // t_s log p + t_w m (p-1) with p = 8, m = 2.
    CHECK(scatter_binomial(3, 2, 2, 1) == 6 + 14);
    CHECK(gather_binomial(3, 2, 2, 1) == 20);
    CHECK(scatter_binomial(0, 5, 2, 1) == 0);
    // Eq. 4.13: 2 (t_s log p + t_w (p-1) m/p) with p = 4, m = 8.
    CHECK(split_rooted_eq_4_13(2, 8, 3, 1) == 2 * (6 + 6));
}

TEST_CASE("the exact split time is Eq. 4.13 whenever p divides m, for every root") {
    for (int d = 0; d <= 10; ++d) {
        const std::size_t p = std::size_t(1) << d;
        for (std::size_t m : {std::size_t(0), p, 3 * p, 64 * p})
            for (int root = 0; root < int(p); root += 1 + int(p) / 5) {
                CAPTURE(d);
                CAPTURE(m);
                CAPTURE(root);
                CHECK(split_rooted(d, m, root, 5, 3) == split_rooted_eq_4_13(d, double(m), 5, 3));
                CHECK(broadcast_scatter_allgather(d, m, root, 5, 3) ==
                      reduce_reduce_scatter_gather(d, m, root, 5, 3));
            }
    }
}

TEST_CASE("the exact split time with remainders, on schedules worked by hand") {
    // p = 2, m = 3: blocks of 2 and 1 words. Root 0 scatters the 1-word block
    // (t_s + t_w), then the exchange is bounded by the 2-word block.
    CHECK(split_rooted(1, 3, 0, 10, 1) == 2 * 10 + 3);
    // Root 1 scatters the 2-word block first.
    CHECK(split_rooted(1, 3, 1, 10, 1) == 2 * 10 + 4);
    // p = 4, m = 5: blocks 2,1,1,1, root 0.
    //   scatter: 0 -> 2 (blocks 2-3: 2 words), then 0 -> 1 and 2 -> 3 (1 word):
    //            every pair ready at 2 t_s + 3 t_w;
    //   dim 0:   pair {0,1} exchanges 2 and 1 words: 3 t_s + 5 t_w;
    //   dim 1:   node 0 sends blocks 0-1 (3 words): 4 t_s + 8 t_w.
    CHECK(split_rooted(2, 5, 0, 10, 1) == 4 * 10 + 8);
    // m < p: p = 8, m = 1, root 0: the only word is node 0's block; scatter
    // messages are all empty (3 t_s), the all-to-all broadcast carries it once
    // per step (3 t_s + 3 t_w).
    CHECK(split_rooted(3, 1, 0, 10, 1) == 6 * 10 + 3);
    // Root 7 sends node 0's side first: the word also crosses every scatter step.
    CHECK(split_rooted(3, 1, 7, 10, 1) == 6 * 10 + 6);
    // Bounded by the all-big-blocks time 2 (t_s log p + t_w (p-1) ceil(m/p)).
    for (int d = 1; d <= 8; ++d)
        for (std::size_t m = 0; m < (std::size_t(3) << d); m += 7)
            for (int root = 0; root < (1 << d); root += 3) {
                const std::size_t p = std::size_t(1) << d, ceil = (m + p - 1) / p;
                CHECK(split_rooted(d, m, root, 5, 3) <=
                      2 * (5.0 * d + 3.0 * double((p - 1) * ceil)));
                CHECK(split_rooted(d, m, root, 5, 3) >= split_rooted_eq_4_13(d, double(m), 5, 3));
            }
}

TEST_CASE("the exact splitting reduction with remainders") {
    // p = 4, m = 2: blocks 1, 1, 0, 0, root 0, t_s = 10, t_w = 1.
    //   all-to-all reduction, dim 0: classes {0,2} and {1,3}, 1 word each: all at 11;
    //     dim 1: node 0 receives {0} (1 word) at 22, node 2 receives {2} (empty) at 21;
    //   gather: 3 -> 2 (empty) at 32; 1 -> 0 (1 word) at 33; 2 -> 0 (empty) at 43.
    CHECK(reduce_reduce_scatter_gather(2, 2, 0, 10, 1) == 4 * 10 + 3);
    // The broadcast's schedule is not its mirror image: one more word on its path.
    CHECK(broadcast_scatter_allgather(2, 2, 0, 10, 1) == 4 * 10 + 4);
    CHECK(reduce_reduce_scatter_gather(1, 3, 0, 10, 1) == 2 * 10 + 3);
    CHECK(reduce_reduce_scatter_gather(1, 3, 1, 10, 1) == 2 * 10 + 4);
    CHECK(reduce_reduce_scatter_gather(0, 5, 0, 10, 1) == 0);
    // Between Eq. 4.13 and split_rooted (what reduce's `automatic` uses), for
    // several ratios t_s : t_w.
    for (int d = 0; d <= 8; ++d)
        for (std::size_t m = 0; m < (std::size_t(3) << d); m += 1 + (std::size_t(1) << d) / 8)
            for (int root = 0; root < (1 << d); root += 1 + (1 << d) / 4)
                for (auto [ts, tw] : {std::pair{7.0, 3.0}, {1.0, 0.0}, {0.0, 1.0}, {100.0, 1.0}}) {
                    CAPTURE(d);
                    CAPTURE(m);
                    CAPTURE(root);
                    CAPTURE(ts);
                    const double t = reduce_reduce_scatter_gather(d, m, root, ts, tw);
                    CHECK(t <= split_rooted(d, m, root, ts, tw));
                    CHECK(t >= split_rooted_eq_4_13(d, double(m), ts, tw));
                }
}
