// Closed-form communication times of the rooted collectives on a p = 2^d node
// hypercube under the single-port t_s + t_w m model (Grama et al. 4.1, 4.4, 4.7.1,
// Table 4.1). m counts words. The functions take d = log p.
//
// The emulator reproduces these exactly (tests/rooted): every algorithm's
// virtual time equals its function below.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <vector>

namespace hcube::cost {

// One-to-all broadcast or all-to-one reduction by recursive doubling: log p
// messages of m words in sequence (Grama et al. Eq. 4.1).
constexpr double binomial_rooted(int d, double m, double t_s, double t_w) noexcept {
    return (t_s + t_w * m) * d;
}
constexpr double broadcast_binomial(int d, double m, double t_s, double t_w) noexcept {
    return binomial_rooted(d, m, t_s, t_w);
}
constexpr double reduce_binomial(int d, double m, double t_s, double t_w) noexcept {
    return binomial_rooted(d, m, t_s, t_w);
}

// Scatter or gather of m words per node: log p steps, the message halving each
// step, p - 1 blocks through the root's port (Grama et al. Eq. 4.6).
constexpr double scatter_binomial(int d, double m, double t_s, double t_w) noexcept {
    return t_s * d + t_w * m * double((1LL << d) - 1);
}
constexpr double gather_binomial(int d, double m, double t_s, double t_w) noexcept {
    return scatter_binomial(d, m, t_s, t_w);
}

// Broadcast as scatter + all-to-all broadcast, or reduction as all-to-all
// reduction + gather, of m words split into p blocks (Grama et al. Eq. 4.13 and
// Problem 4.17), when p divides m: 2 (t_s log p + t_w (p-1) m/p). The exact
// times for any m follow.
constexpr double split_rooted_eq_4_13(int d, double m, double t_s, double t_w) noexcept {
    const double p = double(1LL << d);
    return 2 * (t_s * d + t_w * (p - 1) * m / p);
}

// Broadcast by scatter + all-to-all broadcast, exact for any m (Eq. 4.13 when
// p divides m). Blocks are those of block_of (blocks.hpp): q = m / p words
// each, plus one for the r = m % p lowest node ids. Every chain of messages
// that ends the operation has 2 log p messages (log p in each phase), so the
// time is 2 t_s log p + t_w W, W the largest number of words along such a
// chain. W counts p - 1 blocks in each phase, and the chain with the most big
// blocks is the one that reaches node 0's side of every split:
//   scatter, step on dimension j: the half of ids [0, 2^(j+1)) that the
//     root's side sends, [c 2^j, (c+1) 2^j) with c = 1 - bit j of root;
//   all-to-all broadcast (Alg. 4.7), step j: the group [0, 2^j) node 0 sends.
//   W = 2 (p-1) q + sum_{j<d} ( |[0,r) & [c 2^j, (c+1) 2^j)| + min(r, 2^j) ).
constexpr double split_rooted(int d, std::size_t m, int root, double t_s, double t_w) noexcept {
    const std::size_t p = std::size_t(1) << d, q = m / p, r = m % p;
    const auto big_in = [r](std::size_t begin, std::size_t size) {
        return std::min(begin + size, std::max(begin, r)) - begin; // |[0,r) & [begin, begin+size)|
    };
    std::size_t w = 2 * (p - 1) * q;
    for (int j = 0; j < d; ++j) {
        const std::size_t half = std::size_t(1) << j, c = 1 - ((std::size_t(root) >> j) & 1);
        w += big_in(c * half, half) + big_in(0, half);
    }
    return 2 * t_s * d + t_w * double(w);
}
constexpr double broadcast_scatter_allgather(int d, std::size_t m, int root, double t_s,
                                             double t_w) noexcept {
    return split_rooted(d, m, root, t_s, t_w);
}

// Reduction by all-to-all reduction + gather (Problem 4.17), exact for any m
// (Eq. 4.13 when p divides m). It is not the broadcast's schedule reversed: the
// all-to-all reduction goes up the dimensions with strided blocks (so partials
// stay contiguous for operators that do not commute), and the gather tree's
// receives meet the root-side port at different times. Chains that end the
// operation have between log p + 1 and 2 log p messages, so no single sum
// covers every t_s : t_w; this replays the schedule's recurrences instead,
// O(p log p):
//   all-to-all reduction, step i, partners x, y = x ^ 2^i: x sends the blocks
//     j = y mod 2^(i+1) and receives those j = x mod 2^(i+1);
//     recv(x) = max(ready(y), recv(x)) + t(in),
//     ready(x) = max(ready(x) + t(out), recv(x));
//   gather (relabelled v = id ^ root, children before parents): for each child
//     c across dimension k = 0 .. level-1, carrying its 2^k blocks,
//     recv(x) = max(ready(c), recv(x)) + t(run of c); ready(x) = max(ready(x), recv(x)).
// It never exceeds split_rooted (checked in tests/rooted for d <= 8), which is
// what reduce's `automatic` compares, being O(log p).
//
// A chain of messages: its time and, to print the form that gave it, how many
// messages and words it has (time = messages t_s + words t_w).
struct message_chain {
    double time = 0;
    std::size_t messages = 0, words = 0;
};
// The later of two chains (the first on a tie: both give the same time).
inline message_chain later(const message_chain& a, const message_chain& b) {
    return b.time > a.time ? b : a;
}
// The critical chain of the reduction by all-to-all reduction + gather.
inline message_chain reduce_reduce_scatter_gather_chain(int d, std::size_t m, int root, double t_s,
                                                        double t_w) {
    const std::size_t p = std::size_t(1) << d, q = m / p, r = m % p;
    const auto plus = [&](const message_chain& c, std::size_t words) {
        return message_chain{c.time + (t_s + t_w * double(words)), c.messages + 1, c.words + words};
    };
    const auto class_words = [&](std::size_t c, std::size_t mod) { // blocks j = c mod `mod`
        return p / mod * q + (c < r ? (r - c + mod - 1) / mod : 0);
    };
    const auto run_words = [&](std::size_t first, std::size_t count) { // blocks first..
        return count * q + (std::min(first + count, std::max(first, r)) - first);
    };
    std::vector<message_chain> ready(p), recv(p), next(p);
    for (int i = 0; i < d; ++i) {
        const std::size_t mod = std::size_t(2) << i;
        for (std::size_t x = 0; x < p; ++x) {
            const std::size_t y = x ^ (mod >> 1);
            recv[x] = plus(later(ready[y], recv[x]), class_words(x % mod, mod));
            next[x] = later(plus(ready[x], class_words(y % mod, mod)), recv[x]);
        }
        ready.swap(next);
    }
    // A node's children in the tree have larger relabelled ids.
    for (std::size_t v = p; v-- > 0;) {
        const std::size_t x = v ^ std::size_t(root);
        const int level = v ? std::countr_zero(v) : d;
        for (int k = 0; k < level; ++k) {
            const std::size_t c = x ^ (std::size_t(1) << k), first = c >> k << k;
            recv[x] = plus(later(ready[c], recv[x]), run_words(first, std::size_t(1) << k));
            ready[x] = later(ready[x], recv[x]);
        }
    }
    return ready[std::size_t(root)];
}
inline double reduce_reduce_scatter_gather(int d, std::size_t m, int root, double t_s, double t_w) {
    return reduce_reduce_scatter_gather_chain(d, m, root, t_s, t_w).time;
}

} // namespace hcube::cost
