// Scatter and gather with any root (seed 000, 4.4), and the binomial trees they
// share with the message-splitting broadcast and reduction (4.7.1).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/blocks.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/cost/rooted.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>

namespace hcube {

namespace detail {

inline void check_root(const node& me, int root, const char* op) {
    if (root < 0 || root >= me.size())
        throw usage_error("node " + std::to_string(me.id()) + ": " + op + " root " +
                          std::to_string(root) + " is outside 0.." + std::to_string(me.size() - 1));
}

// The binomial tree rooted at `root`, in ids relabelled v = id ^ root (seed 000,
// Alg. 4.2): node v != 0 hangs below v ^ 2^level across dimension `level` =
// the lowest set bit of v; the root's level is d. A node at level L is
// responsible for the 2^L ids that agree with it in bits L and up: in true ids an
// aligned, contiguous range, so subtrees own contiguous runs of blocks.
inline int tree_level(const node& me, int root) {
    const unsigned v = unsigned(me.id() ^ root);
    return v ? std::countr_zero(v) : me.dim();
}
// The first of the 2^level ids of `id`'s subtree at `level`.
constexpr std::size_t subtree_first(int id, int level) noexcept {
    return std::size_t(id) & ~((std::size_t(1) << level) - 1);
}

// Binomial scatter of blocks 0..p-1 (block j for node j), highest dimension first:
//
//   p = 8, root 0   step 1: 0 -> 4 blocks 4-7
//                   step 2: 0 -> 2 blocks 2-3, 4 -> 6 blocks 6-7
//                   step 3: 0 -> 1, 2 -> 3, 4 -> 5, 6 -> 7 one block each
//
// extent(first, count) is where blocks first .. first+count-1 lie, as element
// offsets in a global index space; `src` (what this node sends from) and `dst`
// (where it receives its subtree's blocks) are windows of that space starting at
// offset `origin`. They may alias; the root never receives.
template <wire_type T, class Extent>
void scatter_tree(node& me, int root, const Extent& extent, std::span<const T> src,
                  std::span<T> dst, std::size_t origin) {
    const int level = tree_level(me, root);
    if (me.id() != root) {
        const block b = extent(subtree_first(me.id(), level), std::size_t(1) << level);
        me.recv(level, dst.subspan(b.begin - origin, b.size));
    }
    for (int k = level - 1; k >= 0; --k) {
        const block b = extent(subtree_first(me.neighbor(k), k), std::size_t(1) << k);
        me.send(k, src.subspan(b.begin - origin, b.size));
    }
}

// The same tree in reverse: each node collects its children's runs of blocks,
// lowest dimension first, into `dst` and passes its whole run up from `src`.
template <wire_type T, class Extent>
void gather_tree(node& me, int root, const Extent& extent, std::span<const T> src, std::span<T> dst,
                 std::size_t origin) {
    const int level = tree_level(me, root);
    for (int k = 0; k < level; ++k) {
        const block b = extent(subtree_first(me.neighbor(k), k), std::size_t(1) << k);
        me.recv(k, dst.subspan(b.begin - origin, b.size));
    }
    if (me.id() != root) {
        const block b = extent(subtree_first(me.id(), level), std::size_t(1) << level);
        me.send(level, src.subspan(b.begin - origin, b.size));
    }
}

// Blocks of m elements each: block j is elements j*m .. j*m + m - 1.
struct uniform_blocks {
    std::size_t m;
    constexpr block operator()(std::size_t first, std::size_t count) const noexcept {
        return {first * m, count * m};
    }
};

// Blocks of block_of(n, p, j): n elements split as evenly as possible.
struct split_blocks {
    std::size_t n, p;
    constexpr block operator()(std::size_t first, std::size_t count) const noexcept {
        return blocks_of(n, p, first, count);
    }
};

// Every subtree gets the whole message: scatter_tree is then the binomial broadcast.
struct whole_message {
    std::size_t n;
    constexpr block operator()(std::size_t, std::size_t) const noexcept { return {0, n}; }
};

inline void check_all_size(const node& me, const char* op, std::size_t all, std::size_t mine) {
    if (all != std::size_t(me.size()) * mine)
        throw usage_error("node " + std::to_string(me.id()) + ": " + op + " needs " +
                          std::to_string(me.size()) + " x " + std::to_string(mine) +
                          " elements at the root, got " + std::to_string(all));
}

// Rooted costs (words: the whole message m): recursive doubling, Eq. 4.1, and
// message splitting, Eq. 4.13, exact for any m for the broadcast and an upper
// bound of the reduction's time that is exact when p divides m (rooted.hpp).
constexpr double binomial_cost(const call_shape& s) {
    return cost::binomial_rooted(s.dim, s.words, s.t_s, s.t_w);
}
constexpr double split_cost(const call_shape& s) {
    return cost::split_rooted(s.dim, std::size_t(s.words), s.root, s.t_s, s.t_w);
}
inline constexpr requirements rooted_needs{.root_in_range = true};

} // namespace detail

// words: each node's block m.
inline constexpr algorithm_record scatter_records[] = {
    {"scatter", "binomial", 0, "seed 000, 4.4, Eq. 4.6", "t_s log p + t_w m (p-1)",
     cost_of<cost::scatter_binomial>, detail::rooted_needs},
};
inline constexpr algorithm_record gather_records[] = {
    {"gather", "binomial", 0, "seed 000, 4.4, Eq. 4.6", "t_s log p + t_w m (p-1)",
     cost_of<cost::gather_binomial>, detail::rooted_needs},
};

// Scatter (seed 000, 4.4, Eq. 4.6): `all` (p blocks of mine.size() elements,
// block j for node j) is read at the root only; every node receives its block
// in `mine`. Cost: t_s log p + t_w m (p-1), m = mine.size().
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void scatter(node& me, const In& all_range, Out&& mine_range, int root) {
    using E = element_t<T, In>;
    const auto all = input_span<T>(all_range);
    const auto mine = output_span<T>(mine_range);
    detail::check_root(me, root, "scatter");
    const std::size_t m = mine.size();
    const detail::uniform_blocks extent{m};
    const std::size_t mine_at = std::size_t(me.id()) * m;
    if (me.id() == root) {
        detail::check_all_size(me, "scatter", all.size(), m);
        detail::scatter_tree<E>(me, root, extent, all, {}, 0);
        std::copy_n(all.begin() + mine_at, m, mine.begin());
        return;
    }
    // A node at level L receives its subtree's 2^L blocks and passes on all but its own.
    const int level = detail::tree_level(me, root);
    const std::size_t origin = detail::subtree_first(me.id(), level) * m;
    std::vector<E> run(m << level);
    detail::scatter_tree<E>(me, root, extent, run, run, origin);
    std::copy_n(run.begin() + (mine_at - origin), m, mine.begin());
}

// Gather (seed 000, 4.4, Eq. 4.6): the inverse of scatter; `all` is written at
// the root only. Cost: t_s log p + t_w m (p-1), m = mine.size().
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void gather(node& me, const In& mine_range, Out&& all_range, int root) {
    using E = element_t<T, In>;
    const auto mine = input_span<T>(mine_range);
    const auto all = output_span<T>(all_range);
    detail::check_root(me, root, "gather");
    const std::size_t m = mine.size();
    const detail::uniform_blocks extent{m};
    const std::size_t mine_at = std::size_t(me.id()) * m;
    if (me.id() == root) {
        detail::check_all_size(me, "gather", all.size(), m);
        std::copy(mine.begin(), mine.end(), all.begin() + mine_at);
        detail::gather_tree<E>(me, root, extent, all, all, 0);
        return;
    }
    const int level = detail::tree_level(me, root);
    const std::size_t origin = detail::subtree_first(me.id(), level) * m;
    std::vector<E> run(m << level);
    std::copy(mine.begin(), mine.end(), run.begin() + (mine_at - origin));
    detail::gather_tree<E>(me, root, extent, run, run, origin);
}

} // namespace hcube
