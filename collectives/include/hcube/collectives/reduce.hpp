// All-to-one reduction with any root (Grama et al. 4.1 and 4.7.1), right for
// associative operators that are not commutative.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>

namespace hcube {

enum class reduce_algo {
    automatic,             // the cheaper of the two for this size and cost model (Table 4.1)
    binomial,              // (t_s + t_w m) log p
    reduce_scatter_gather, // message splitting: 2 (t_s log p + t_w (p-1) m/p)
    rotated_trees,         // all-port, commuting op: log p (t_s + t_w ceil(m/log p))
    edge_disjoint_trees,   // all-port, commuting op: (log p + 1)(t_s + t_w ceil(m/log p))
};

// words: the whole message m. `automatic` weighs Eq. 4.1 against
// cost::split_rooted, exact when p divides m and otherwise an upper bound of
// the splitting reduction's time that costs O(log p), not O(p log p).
inline constexpr algorithm_record reduce_records[] = {
    {"reduce", "binomial", int(reduce_algo::binomial), "Grama et al. Alg. 4.3, Eq. 4.1",
     "(t_s + t_w m) log p", detail::binomial_cost, detail::rooted_needs},
    {"reduce", "reduce-scatter-gather", int(reduce_algo::reduce_scatter_gather),
     "Grama et al. 4.7.1, Problem 4.17, Eq. 4.13", "2 (t_s log p + t_w (p-1) m/p) if p | m",
     detail::split_cost, detail::rooted_needs},
    {"reduce", "rotated-trees", int(reduce_algo::rotated_trees), detail::rotated_trees_source,
     "log p (t_s + t_w ceil(m/log p)), all-port", detail::trees_cost<tree_family::rotated>,
     detail::all_port_reduce_needs},
    {"reduce", "edge-disjoint-trees", int(reduce_algo::edge_disjoint_trees),
     detail::disjoint_trees_source, "(log p + 1)(t_s + t_w ceil(m/log p)) (p > 2), all-port",
     detail::trees_cost<tree_family::edge_disjoint>, detail::all_port_reduce_needs},
};

// Single-node accumulation (Grama et al. Alg. 4.3), lowest dimension first, on the
// tree of Alg. 4.2 (ids relabelled v = id ^ root): a node receives across every
// dimension below the lowest set bit of v, then sends its partial across it.
// Relabelling keeps every partial's ids an aligned run of true ids: before the
// step on dimension k, the 2^k ids that agree with the holder in bits k and up.
// So the partial from across dimension k is the run just left of ours when our
// bit k is 1, else just right: combining in that order gives
// x_0 op ... op x_{p-1} for any root.
// Cost (Eq. 4.1): (t_s + t_w m) log p.
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void reduce_binomial(node& me, R&& buffer, int root, Op op) {
    const auto data = output_span<T>(buffer);
    detail::check_root(me, root, "reduce");
    const int level = detail::tree_level(me, root);
    std::vector<element_t<T, R>> in(level > 0 ? data.size() : 0);
    for (int k = 0; k < level; ++k) {
        me.recv(k, in);
        const bool left = (me.id() >> k) & 1; // the incoming run precedes ours
        for (std::size_t i = 0; i < data.size(); ++i)
            data[i] = left ? op(in[i], data[i]) : op(data[i], in[i]);
    }
    if (me.id() != root) me.send(level, data);
}

// Message splitting (Grama et al. 4.7.1, Problem 4.17): all-to-all reduction leaves
// block i of the result on node i (Alg. 4.8), then a binomial gather (4.4)
// collects the blocks at the root. Cost: 2 (t_s log p + t_w (p-1) m/p) when p
// divides m; exact for any m: cost::reduce_reduce_scatter_gather.
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void reduce_reduce_scatter_gather(node& me, R&& buffer, int root, Op op) {
    const auto data = output_span<T>(buffer);
    detail::check_root(me, root, "reduce");
    reduce_scatter_blocks(me, data, op);
    const detail::split_blocks extent{data.size(), std::size_t(me.size())};
    detail::gather_tree<element_t<T, R>>(me, root, extent, data, data, 0);
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
    const char* name =
        f == tree_family::rotated ? "reduce rotated-trees" : "reduce edge-disjoint-trees";
    if constexpr (!is_commutative_v<Op>)
        throw usage_error("node " + std::to_string(me.id()) + ": " + name +
                          " combines partials of ids that are not consecutive, so it needs an "
                          "operator that commutes (specialize hcube::is_commutative); use "
                          "binomial or reduce-scatter-gather for this one");
    detail::require_links_at_once(me, name);
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

// In place: on exit data at root = x_0 op x_1 op ... op x_{p-1} (elementwise,
// node order); other nodes' data is unspecified.
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void reduce(node& me, R&& buffer, int root, Op op, reduce_algo a = reduce_algo::automatic) {
    const auto data = output_span<T>(buffer);
    if (a == reduce_algo::automatic) {
        detail::check_root(me, root, "reduce");
        call_shape shape = shape_of(me, data.size(), sizeof(element_t<T, R>));
        shape.root = root;
        shape.commutative = is_commutative_v<Op>;
        a = choose_algorithm<reduce_algo>(reduce_records, shape);
    }
    switch (a) {
    case reduce_algo::binomial:
        return reduce_binomial(me, data, root, op);
    case reduce_algo::reduce_scatter_gather:
        return reduce_reduce_scatter_gather(me, data, root, op);
    case reduce_algo::rotated_trees:
        return reduce_trees(me, data, root, op, tree_family::rotated);
    case reduce_algo::edge_disjoint_trees:
        return reduce_trees(me, data, root, op, tree_family::edge_disjoint);
    case reduce_algo::automatic:
        break;
    }
    throw usage_error("node " + std::to_string(me.id()) + ": unknown reduce algorithm");
}

} // namespace hcube
