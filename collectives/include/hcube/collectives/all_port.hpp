// All-port versions of seed 000's chapter-4 operations (4.7.2): one-to-all
// broadcast and all-to-one reduction over d spanning trees at once, scatter
// and gather over the d rotated spanning binomial trees, and all-to-all
// personalized communication on all links at once. Reference: S. L. Johnsson
// and C.-T. Ho, "Optimum broadcasting and personalized communication in
// hypercubes", IEEE Trans. Computers 38(9), 1989. The trees and their d = 3
// drawings: lib/include/hcube/spanning_trees.hpp. Exact costs (any m, any
// root): lib/include/hcube/cost/all_port.hpp.
//
// Every algorithm splits the m elements of a message (or block) into d parts
// (block_of: the first m mod d one longer), part j in tree j; in step u a
// node sends every part it owes a child in step u, then receives every part
// it hears in step u. Distinct trees use distinct links in one step, so under
// all-port a step costs one message time. Under single-port (d >= 2) they
// refuse to run: their point is the d links at once. Sends precede receives
// within a step, so they need buffered links (config::link_capacity >= 1).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <hcube/cm200_index.hpp>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/blocks.hpp>
#include <hcube/collectives/cm200.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/spanning_trees.hpp>

namespace hcube {

namespace detail {

// The refusal under single-port, e.g. "node 3: broadcast over 4 edge-disjoint
// trees sends on all 4 links at once; run with --ports all (all-port model),
// not single_port".
inline void require_all_port(const node& me, const std::string& what) {
    if (me.dim() >= 2 && me.cfg().ports != port_model::all_port)
        throw usage_error("node " + std::to_string(me.id()) + ": " + what + " sends on all " +
                          std::to_string(me.dim()) +
                          " links at once; run with --ports all (all-port model), not " +
                          std::string(to_string(me.cfg().ports)));
}

inline std::string trees_name(tree_family f, int d) {
    return std::to_string(d) + (f == tree_family::rotated ? " rotated" : " edge-disjoint") +
           " spanning trees";
}

// Part j of n elements split over d trees (one part when d = 0).
inline block tree_part(std::size_t n, int d, int j) {
    return block_of(n, std::size_t(std::max(d, 1)), std::size_t(j));
}

} // namespace detail

// One-to-all broadcast over the d trees of `f`, all at once (4.7.2):
//   rotated        d (t_s + t_w ceil(m/d))       (Eq. 4.1 single-port: (t_s + t_w m) log p)
//   edge_disjoint  (d+1)(t_s + t_w ceil(m/d))
// In place: on entry data is valid at root; on exit at every node.
template <class T = deduce_element, output_buffer<T> R>
void broadcast_trees(node& me, R&& buffer, int root, tree_family f) {
    const auto data = output_span<T>(buffer);
    detail::check_root(me, root, "broadcast");
    detail::require_all_port(me, "broadcast over " + detail::trees_name(f, me.dim()));
    const int d = me.dim();
    const node_id v = node_id(me.id() ^ root);
    const auto part = [&](int j) {
        const block b = detail::tree_part(data.size(), d, j);
        return data.subspan(b.begin, b.size);
    };
    for (int u = 0; u < tree_steps(f, d); ++u) {
        for (int j = 0; j < d; ++j)
            for (int k = 0; k < d; ++k)
                if (!part(j).empty() && tree_child(f, d, j, v, k, u)) me.send(k, part(j));
        for (int j = 0; j < d && v != 0; ++j)
            if (const tree_edge e = tree_parent(f, d, j, v); e.step == u && !part(j).empty())
                me.recv(e.dim, part(j));
    }
}

// All-to-one reduction over the same trees, reversed: in step u (from the
// last down) a node passes its partial of part j to its parent in tree j when
// it heard part j in step u of the broadcast, then adds its children's
// partials of step u. Cost: that of broadcast_trees. The partials of a
// subtree cover ids that are not consecutive (spanning_trees.hpp says why no
// edge-disjoint family can do better), so the operator must commute
// (hcube::is_commutative); any other operator is refused.
// In place: on exit data at root = x_0 op ... op x_{p-1}; elsewhere unspecified.
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void reduce_trees(node& me, R&& buffer, int root, Op op, tree_family f) {
    using E = element_t<T, R>;
    const auto data = output_span<T>(buffer);
    detail::check_root(me, root, "reduce");
    const std::string what = "reduce over " + detail::trees_name(f, me.dim());
    if constexpr (!is_commutative_v<Op>)
        throw usage_error("node " + std::to_string(me.id()) + ": " + what +
                          " combines partials of ids that are not consecutive, so it needs an "
                          "operator that commutes (specialize hcube::is_commutative); use "
                          "binomial or reduce-scatter-gather for this one");
    detail::require_all_port(me, what);
    const int d = me.dim();
    const node_id v = node_id(me.id() ^ root);
    const auto part = [&](int j) {
        const block b = detail::tree_part(data.size(), d, j);
        return data.subspan(b.begin, b.size);
    };
    std::vector<E> in;
    for (int u = tree_steps(f, d) - 1; u >= 0; --u) {
        for (int j = 0; j < d && v != 0; ++j)
            if (const tree_edge e = tree_parent(f, d, j, v); e.step == u && !part(j).empty())
                me.send(e.dim, part(j));
        for (int j = 0; j < d; ++j)
            for (int k = 0; k < d; ++k)
                if (!part(j).empty() && tree_child(f, d, j, v, k, u)) {
                    in.resize(part(j).size());
                    me.recv(k, in);
                    detail::combine_into(part(j), std::span<const E>(in), false, op);
                }
    }
}

namespace detail {

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

} // namespace detail

// Scatter over the d rotated spanning binomial trees (4.7.2; seed 000, 4.4
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
    detail::check_root(me, root, "scatter");
    detail::require_all_port(me,
                             "scatter over " + detail::trees_name(tree_family::rotated, me.dim()));
    const int d = me.dim();
    const std::size_t m = mine.size();
    if (me.id() == root) detail::check_all_size(me, "scatter", all.size(), m);
    if (d == 0) return void(std::copy_n(all.begin(), m, mine.begin()));
    const node_id v = node_id(me.id() ^ root);
    const auto shares = detail::rotated_shares(d, v, m);
    auto held = std::vector<std::vector<E>>(std::size_t(d));
    for (int j = 0; j < d; ++j) {
        const auto& s = shares[std::size_t(j)];
        held[std::size_t(j)].resize(s.count() * s.w);
        if (v != 0) continue;
        const std::size_t at = detail::tree_part(m, d, j).begin;
        for (std::size_t t = 0; t < s.count(); ++t)
            std::copy_n(all.begin() + std::ptrdiff_t((s.node_of(v, t) ^ root) * m + at), s.w,
                        held[std::size_t(j)].begin() + std::ptrdiff_t(t * s.w));
    }
    std::vector<E> out;
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
    detail::check_root(me, root, "gather");
    detail::require_all_port(me,
                             "gather over " + detail::trees_name(tree_family::rotated, me.dim()));
    const int d = me.dim();
    const std::size_t m = mine.size();
    if (me.id() == root) detail::check_all_size(me, "gather", all.size(), m);
    if (d == 0) return void(std::copy_n(mine.begin(), m, all.begin()));
    const node_id v = node_id(me.id() ^ root);
    const auto shares = detail::rotated_shares(d, v, m);
    auto held = std::vector<std::vector<E>>(std::size_t(d));
    for (int j = 0; j < d; ++j) {
        const auto& s = shares[std::size_t(j)];
        held[std::size_t(j)].resize(s.count() * s.w);
        std::copy_n(mine.begin() + std::ptrdiff_t(detail::tree_part(m, d, j).begin), s.w,
                    held[std::size_t(j)].begin());
    }
    std::vector<E> in;
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

// All-to-all personalized communication on all links at once (4.7.2; the
// single-port dimension exchange is 4.5.3, Eq. 4.9): part j of every block
// follows Eq. 4.9's exchanges in the dimension order j, j+1, ..., j+d-1
// (mod d), so step u exchanges part j's p/2 outgoing part-blocks across
// dimension (j+u) mod d, for every j at once (exchange_all).
//   d (t_s + t_w (p/2) ceil(m/d))   (Eq. 4.9: (t_s + t_w m p/2) log p;
//                                    Eq. 4.10: (t_s + t_w m)(p-1))
//
//   d = 3, step u:  part 0 on dim u, part 1 on dim (u+1)%3, part 2 on dim (u+2)%3
//                   step 0: dims 0 1 2   step 1: dims 1 2 0   step 2: dims 2 0 1
//
// Slot t of part j's working array holds part j of one block; after the
// dimensions in a set D were exchanged, t's bits in D are its source and the
// other bits its destination, whatever the order (alltoall.hpp).
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void alltoall_all_port(node& me, const In& in_range, Out&& out_range) {
    using E = element_t<T, In>;
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    const std::size_t m = detail::alltoall_block_size(me, in.size(), out.size());
    detail::require_all_port(me, "alltoall all-port (dimension exchange on every link)");
    const int d = me.dim();
    const std::size_t p = std::size_t(me.size()), id = std::size_t(me.id());
    if (d == 0) return void(std::copy(in.begin(), in.end(), out.begin()));
    auto slots = std::vector<std::vector<E>>(std::size_t(d)), sending = slots, receiving = slots;
    for (int j = 0; j < d; ++j) {
        const block b = detail::tree_part(m, d, j);
        auto& s = slots[std::size_t(j)];
        s.resize(p * b.size);
        for (std::size_t t = 0; t < p; ++t)
            std::copy_n(in.begin() + std::ptrdiff_t(t * m + b.begin), b.size,
                        s.begin() + std::ptrdiff_t(t * b.size));
        sending[std::size_t(j)].resize(p / 2 * b.size);
        receiving[std::size_t(j)].resize(p / 2 * b.size);
    }
    // The p/2 slots whose bit k differs from ours, in order.
    const auto across = [&](int k, std::size_t n) {
        const std::size_t low = n & ((std::size_t{1} << k) - 1), high = n >> k;
        return (high << (k + 1)) | ((~id >> k & 1) << k) | low;
    };
    std::vector<transfer<E>> step;
    for (int u = 0; u < d; ++u) {
        step.clear();
        for (int j = 0; j < d; ++j) {
            const int k = (j + u) % d;
            const std::size_t w = detail::tree_part(m, d, j).size;
            if (w == 0) continue;
            for (std::size_t n = 0; n < p / 2; ++n)
                std::copy_n(slots[std::size_t(j)].begin() + std::ptrdiff_t(across(k, n) * w), w,
                            sending[std::size_t(j)].begin() + std::ptrdiff_t(n * w));
            step.push_back({k, sending[std::size_t(j)], receiving[std::size_t(j)]});
        }
        if (step.empty()) break;
        if (step.size() == 1) // one link (d = 1): also under single-port
            me.exchange(step[0].dim, step[0].out, step[0].in);
        else
            me.exchange_all(step);
        for (const auto& x : step) {
            const int j = (x.dim - u + d) % d;
            const std::size_t w = detail::tree_part(m, d, j).size;
            for (std::size_t n = 0; n < p / 2; ++n)
                std::copy_n(x.in.begin() + std::ptrdiff_t(n * w), w,
                            slots[std::size_t(j)].begin() + std::ptrdiff_t(across(x.dim, n) * w));
        }
    }
    for (int j = 0; j < d; ++j) {
        const block b = detail::tree_part(m, d, j);
        for (std::size_t t = 0; t < p; ++t)
            std::copy_n(slots[std::size_t(j)].begin() + std::ptrdiff_t(t * b.size), b.size,
                        out.begin() + std::ptrdiff_t(t * m + b.begin));
    }
}

// All-reduce as all-to-all reduction then all-to-all broadcast (seed 000,
// 4.7.1, Eq. 4.14), both along the d rotated Hamiltonian cycles of seed 002,
// 4.2 (cm200.hpp; every step uses all d links). The n elements are blocked as
// the CM-200 allocates them: B = ceil(n/p) to each node in id order, the last
// ones short or empty; the broadcast pads every block to B.
//   2 (p-1)(t_s + t_w ceil(B/d))   (commutative op; Eq. 4.14 single-port:
//                                   2 (t_s log p + t_w (p-1) m/p))
// An operator that does not commute is right too, with longer messages
// (cm200.hpp: a partial keeps one value per run of consecutive ids).
//
//   d = 3, step u of either phase: subblock i of every block crosses dimension
//   (t_u + i) mod 3, t = 0 1 0 2 0 1 0 (the Gray code's transitions): 7 steps
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void allreduce_d_cycles(node& me, R&& buffer, Op op) {
    using E = element_t<T, R>;
    const auto data = output_span<T>(buffer);
    const std::size_t p = std::size_t(me.size()), id = std::size_t(me.id());
    const cm200::cm_allocation alloc(data.size(), p);
    std::vector<E> mine(alloc.block), all(alloc.block * p);
    cm200::reduce_scatter_d_cycles(me, std::span<const E>(data),
                                   std::span(mine).first(alloc.size(id)), op);
    cm200::allgather_d_cycles(me, std::span<const E>(mine), std::span(all));
    for (std::size_t r = 0; r < p; ++r)
        std::copy_n(all.begin() + std::ptrdiff_t(r * alloc.block), alloc.size(r),
                    data.begin() + std::ptrdiff_t(alloc.offset(r)));
}

} // namespace hcube
