// Scatter and gather with any root (Grama et al. 4.4), and the binomial trees they
// share with the message-splitting broadcast and reduction (4.7.1); under
// all-port, scatter and gather over the d rotated spanning binomial trees of
// 4.7.2 (Johnsson and Ho, "Optimum broadcasting and personalized communication
// in hypercubes", IEEE Trans. Computers 38(9), 1989; the trees, with their
// d = 3 drawings, in lib/include/hcube/spanning_trees.hpp), whose helpers the
// all-port broadcast and reduction share.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/collectives/blocks.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/scratch.hpp>
#include <hcube/cost/all_port.hpp>
#include <hcube/cost/rooted.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/spanning_trees.hpp>

namespace hcube {

namespace detail {

inline void check_root(const node& me, int root, const char* op) {
    if (root < 0 || root >= me.size())
        throw usage_error("node " + std::to_string(me.id()) + ": " + op + " root " +
                          std::to_string(root) + " is outside 0.." + std::to_string(me.size() - 1));
}

// The binomial tree rooted at `root`, in ids relabelled v = id ^ root (Grama et al.,
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

// The all-port algorithms of 4.7.2: their records fit only the all-port model
// from d = 1 (a 1-cube's one link runs them under either model, but the
// single-port choice stays the source's). The reductions over the trees combine
// partials of ids that are not consecutive (spanning_trees.hpp says why no
// edge-disjoint family can avoid it), so their operator must commute.
inline constexpr requirements all_port_rooted_needs{.several_links_from = 1, .root_in_range = true};
inline constexpr requirements all_port_reduce_needs{
    .several_links_from = 1, .root_in_range = true, .commutative_op = true};
template <tree_family F>
constexpr double trees_cost(const call_shape& s) {
    return cost::rooted_trees(F, s.dim, s.words, s.t_s, s.t_w);
}
inline constexpr std::string_view rotated_trees_source =
    "Grama et al. 4.7.2 (Johnsson and Ho 1989, d rotated spanning binomial trees)";
inline constexpr std::string_view disjoint_trees_source =
    "Grama et al. 4.7.2 (Johnsson and Ho 1989, d edge-disjoint spanning binomial trees)";

// The refusal of an all-port algorithm under a model that uses one link at a
// time, e.g. "node 3: broadcast rotated-trees exchanges on all 3 links at once;
// run with --ports all (all-port model), not single-port".
inline void require_links_at_once(const node& me, std::string_view name) {
    const call_shape s = shape_of(me, 0, 1);
    if (const std::string why = unfit(requirements{.several_links_from = 2}, name, s); !why.empty())
        throw usage_error("node " + std::to_string(me.id()) + ": " + why + ", not " +
                          std::string(to_string(s.ports)));
}

// Part j of n elements split over d trees (one part when d = 0).
inline block tree_part(std::size_t n, int d, int j) {
    return block_of(n, std::size_t(std::max(d, 1)), std::size_t(j));
}

// A node's share of the rotated tree j in a scatter or gather: the parts j of
// its subtree's blocks, subtree node number t at t * w, where bit i of t
// flips the dimension crossed in step heard + 1 + i (heard: the step the node
// hears in, -1 at the root). The child across the dimension of step u > heard
// owns the slots t with bit i = u - heard - 1 set and bits below it clear.
struct subtree_slots {
    int d, j, heard;
    std::size_t w;
    std::size_t count() const { return std::size_t(1) << (d - 1 - heard); }
    // The relabelled node of slot t, for a node relabelled v.
    node_id node_of(node_id v, std::size_t t) const {
        for (int i = 0; i < d - 1 - heard; ++i)
            if (t >> i & 1) v ^= node_id{1} << ((j + heard + 1 + i) % d);
        return v;
    }
    // Slot of the child's slot h when the child hears in step u.
    std::size_t child_slot(int u, std::size_t h) const {
        const int i = u - heard - 1;
        return (std::size_t(1) << i) | (h << (i + 1));
    }
};

template <class E>
void copy_slots(const subtree_slots& s, int u, std::span<const E> from, std::span<E> to,
                bool pack) {
    for (std::size_t h = 0; h < (std::size_t(1) << (s.d - 1 - u)); ++h) {
        const std::size_t t = s.child_slot(u, h);
        if (pack)
            std::copy_n(from.begin() + std::ptrdiff_t(t * s.w), s.w,
                        to.begin() + std::ptrdiff_t(h * s.w));
        else
            std::copy_n(from.begin() + std::ptrdiff_t(h * s.w), s.w,
                        to.begin() + std::ptrdiff_t(t * s.w));
    }
}

// The d subtree shares of a node relabelled v for blocks of m elements.
inline std::vector<subtree_slots> rotated_shares(int d, node_id v, std::size_t m) {
    std::vector<subtree_slots> s;
    for (int j = 0; j < d; ++j)
        s.push_back({d, j, v == 0 ? -1 : tree_parent(tree_family::rotated, d, j, v).step,
                     tree_part(m, d, j).size});
    return s;
}

// What scatter_trees and gather_trees share: the checks, the node's place
// relative to the root, its share of every tree and a buffer per tree for the
// count() part-blocks it holds.
template <class E>
struct rotated_holdings {
    node_id v;
    std::vector<subtree_slots> shares;
    std::vector<scratch<E>> held;
};

template <class E>
rotated_holdings<E> hold_rotated(node& me, int root, const char* op, std::size_t all_size,
                                 std::size_t m) {
    check_root(me, root, op);
    require_links_at_once(me, std::string(op) + " rotated-trees");
    if (me.id() == root) check_all_size(me, op, all_size, m);
    const node_id v = node_id(me.id() ^ root);
    rotated_holdings<E> h{v, rotated_shares(me.dim(), v, m), {}};
    for (const auto& s : h.shares)
        h.held.push_back(scratch_of<E>(me, s.count() * s.w));
    return h;
}

} // namespace detail

enum class scatter_algo {
    automatic,     // the cheapest that fits (scatter_records)
    binomial,      // 4.4: t_s log p + t_w m (p-1)
    rotated_trees, // 4.7.2, all-port: t_s log p + t_w (p-1) ceil(m/log p)
};
enum class gather_algo { automatic, binomial, rotated_trees }; // the same, reversed

// words: each node's block m.
inline constexpr algorithm_record scatter_records[] = {
    {"scatter", "binomial", int(scatter_algo::binomial), "Grama et al. 4.4, Eq. 4.6",
     "t_s log p + t_w m (p-1)", cost_of<cost::scatter_binomial>, detail::rooted_needs},
    {"scatter", "rotated-trees", int(scatter_algo::rotated_trees), detail::rotated_trees_source,
     "t_s log p + t_w (p-1) ceil(m/log p), all-port", cost_of<cost::scatter_trees>,
     detail::all_port_rooted_needs},
};
inline constexpr algorithm_record gather_records[] = {
    {"gather", "binomial", int(gather_algo::binomial), "Grama et al. 4.4, Eq. 4.6",
     "t_s log p + t_w m (p-1)", cost_of<cost::gather_binomial>, detail::rooted_needs},
    {"gather", "rotated-trees", int(gather_algo::rotated_trees), detail::rotated_trees_source,
     "t_s log p + t_w (p-1) ceil(m/log p), all-port", cost_of<cost::scatter_trees>,
     detail::all_port_rooted_needs},
};

// Scatter over the d rotated spanning binomial trees (4.7.2; Grama et al. 4.4
// for the single tree): part j of every node's block travels in tree j, and in
// step u (dimension (j+u) mod d) a node sends the parts of the child's
// 2^(d-1-u)-node subtree. Every root link carries p - 1 part-blocks.
//   d t_s + t_w (p-1) ceil(m/d)   (Eq. 4.6 single-port: t_s log p + t_w m (p-1))
// `all` (p blocks of mine.size() elements, block i for node i) is read at the root.
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void scatter_trees(node& me, const In& all_range, Out&& mine_range, int root) {
    using E = element_t<T, In>;
    const auto all = input_span<T>(all_range);
    const auto mine = output_span<T>(mine_range);
    const int d = me.dim();
    const std::size_t m = mine.size();
    auto [v, shares, held] = detail::hold_rotated<E>(me, root, "scatter", all.size(), m);
    if (d == 0) return void(std::copy_n(all.begin(), m, mine.begin()));
    if (v == 0) // the root starts with every part-block of every tree
        for (int j = 0; j < d; ++j) {
            const auto& s = shares[std::size_t(j)];
            const std::size_t at = detail::tree_part(m, d, j).begin;
            for (std::size_t t = 0; t < s.count(); ++t)
                std::copy_n(all.begin() + std::ptrdiff_t((s.node_of(v, t) ^ root) * m + at), s.w,
                            held[std::size_t(j)].begin() + std::ptrdiff_t(t * s.w));
        }
    auto out = scratch_of<E>(me);
    for (int u = 0; u < d; ++u) {
        for (int j = 0; j < d; ++j)
            if (const auto& s = shares[std::size_t(j)]; u > s.heard && s.w > 0) {
                out.resize((std::size_t(1) << (d - 1 - u)) * s.w);
                detail::copy_slots<E>(s, u, held[std::size_t(j)], out, true);
                me.send((j + u) % d, out);
            }
        for (int j = 0; j < d; ++j)
            if (const auto& s = shares[std::size_t(j)]; u == s.heard && s.w > 0)
                me.recv((j + u) % d, held[std::size_t(j)]);
    }
    for (int j = 0; j < d; ++j) {
        const auto& h = held[std::size_t(j)];
        std::copy_n(h.begin(), shares[std::size_t(j)].w,
                    mine.begin() + std::ptrdiff_t(detail::tree_part(m, d, j).begin));
    }
}

// Gather over the same trees, reversed: in step u (from d-1 down) a node passes
// its subtree's parts to its parent when it heard in step u, then collects its
// children's of step u. Cost: that of scatter_trees. `all` is written at the root.
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void gather_trees(node& me, const In& mine_range, Out&& all_range, int root) {
    using E = element_t<T, In>;
    const auto mine = input_span<T>(mine_range);
    const auto all = output_span<T>(all_range);
    const int d = me.dim();
    const std::size_t m = mine.size();
    auto [v, shares, held] = detail::hold_rotated<E>(me, root, "gather", all.size(), m);
    if (d == 0) return void(std::copy_n(mine.begin(), m, all.begin()));
    for (int j = 0; j < d; ++j)
        std::copy_n(mine.begin() + std::ptrdiff_t(detail::tree_part(m, d, j).begin),
                    shares[std::size_t(j)].w, held[std::size_t(j)].begin());
    auto in = scratch_of<E>(me);
    for (int u = d - 1; u >= 0; --u) {
        for (int j = 0; j < d; ++j)
            if (const auto& s = shares[std::size_t(j)]; u == s.heard && s.w > 0)
                me.send((j + u) % d, held[std::size_t(j)]);
        for (int j = 0; j < d; ++j)
            if (const auto& s = shares[std::size_t(j)]; u > s.heard && s.w > 0) {
                in.resize((std::size_t(1) << (d - 1 - u)) * s.w);
                me.recv((j + u) % d, in);
                detail::copy_slots<E>(s, u, in, held[std::size_t(j)], false);
            }
    }
    if (v != 0) return;
    for (int j = 0; j < d; ++j) {
        const auto& s = shares[std::size_t(j)];
        const std::size_t at = detail::tree_part(m, d, j).begin;
        for (std::size_t t = 0; t < s.count(); ++t)
            std::copy_n(held[std::size_t(j)].begin() + std::ptrdiff_t(t * s.w), s.w,
                        all.begin() + std::ptrdiff_t((s.node_of(v, t) ^ root) * m + at));
    }
}

// Scatter (Grama et al. 4.4, Eq. 4.6): `all` (p blocks of mine.size() elements,
// block j for node j) is read at the root only; every node receives its block
// in `mine`. Cost: t_s log p + t_w m (p-1), m = mine.size() (binomial).
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void scatter(node& me, const In& all_range, Out&& mine_range, int root,
             scatter_algo a = scatter_algo::binomial) {
    using E = element_t<T, In>;
    const auto all = input_span<T>(all_range);
    const auto mine = output_span<T>(mine_range);
    detail::check_root(me, root, "scatter");
    if (a == scatter_algo::automatic) {
        call_shape shape = shape_of(me, mine.size(), sizeof(E));
        shape.root = root;
        a = choose_algorithm<scatter_algo>(scatter_records, shape);
    }
    if (a == scatter_algo::rotated_trees) return scatter_trees(me, all, mine, root);
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
    auto run = scratch_of<E>(me, m << level);
    detail::scatter_tree<E>(me, root, extent, run, run, origin);
    std::copy_n(run.begin() + (mine_at - origin), m, mine.begin());
}

// Gather (Grama et al. 4.4, Eq. 4.6): the inverse of scatter; `all` is written at
// the root only. Cost: t_s log p + t_w m (p-1), m = mine.size() (binomial).
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void gather(node& me, const In& mine_range, Out&& all_range, int root,
            gather_algo a = gather_algo::binomial) {
    using E = element_t<T, In>;
    const auto mine = input_span<T>(mine_range);
    const auto all = output_span<T>(all_range);
    detail::check_root(me, root, "gather");
    if (a == gather_algo::automatic) {
        call_shape shape = shape_of(me, mine.size(), sizeof(E));
        shape.root = root;
        a = choose_algorithm<gather_algo>(gather_records, shape);
    }
    if (a == gather_algo::rotated_trees) return gather_trees(me, mine, all, root);
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
    auto run = scratch_of<E>(me, m << level);
    std::copy(mine.begin(), mine.end(), run.begin() + (mine_at - origin));
    detail::gather_tree<E>(me, root, extent, run, run, origin);
}

} // namespace hcube
