// One-to-all broadcast with any root (Grama et al. 4.1, 4.7.1 and, all-port, 4.7.2).
#pragma once

#include <cstddef>
#include <span>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>

namespace hcube {

enum class broadcast_algo {
    automatic,           // the cheaper of the two for this size and cost model (Table 4.1)
    binomial,            // recursive doubling: (t_s + t_w m) log p
    scatter_allgather,   // message splitting: 2 (t_s log p + t_w (p-1) m/p)
    rotated_trees,       // all-port: log p (t_s + t_w ceil(m/log p))
    edge_disjoint_trees, // all-port: (log p + 1)(t_s + t_w ceil(m/log p))
};

// words: the whole message m. `automatic` takes the cheaper (Table 4.1).
inline constexpr algorithm_record broadcast_records[] = {
    {"broadcast", "binomial", int(broadcast_algo::binomial), "Grama et al. Alg. 4.1/4.2, Eq. 4.1",
     "(t_s + t_w m) log p", detail::binomial_cost, detail::rooted_needs},
    {"broadcast", "scatter-allgather", int(broadcast_algo::scatter_allgather),
     "Grama et al. 4.7.1, Eq. 4.13", "2 (t_s log p + t_w (p-1) m/p) if p | m", detail::split_cost,
     detail::rooted_needs},
    {"broadcast", "rotated-trees", int(broadcast_algo::rotated_trees), detail::rotated_trees_source,
     "log p (t_s + t_w ceil(m/log p)), all-port", detail::trees_cost<tree_family::rotated>,
     detail::all_port_rooted_needs},
    {"broadcast", "edge-disjoint-trees", int(broadcast_algo::edge_disjoint_trees),
     detail::disjoint_trees_source, "(log p + 1)(t_s + t_w ceil(m/log p)) (p > 2), all-port",
     detail::trees_cost<tree_family::edge_disjoint>, detail::all_port_rooted_needs},
};

// Recursive doubling (Grama et al. Alg. 4.1, Alg. 4.2 for any root), highest
// dimension first: the node relabelled v = id ^ root receives across the lowest
// set bit of v, then forwards across every lower dimension.
// Cost (Eq. 4.1): (t_s + t_w m) log p.
template <class T = deduce_element, output_buffer<T> R>
void broadcast_binomial(node& me, R&& buffer, int root) {
    const auto data = output_span<T>(buffer);
    detail::check_root(me, root, "broadcast");
    detail::scatter_tree<element_t<T, R>>(me, root, detail::whole_message{data.size()}, data, data,
                                          0);
}

// Message splitting (Grama et al. 4.7.1, Eq. 4.13): scatter block i of the message
// to node i (binomial scatter, 4.4), then all-to-all broadcast of the blocks
// (Alg. 4.7). Cost: 2 (t_s log p + t_w (p-1) m/p) when p divides m; exact form
// for any m: cost::broadcast_scatter_allgather.
template <class T = deduce_element, output_buffer<T> R>
void broadcast_scatter_allgather(node& me, R&& buffer, int root) {
    const auto data = output_span<T>(buffer);
    detail::check_root(me, root, "broadcast");
    const detail::split_blocks extent{data.size(), std::size_t(me.size())};
    detail::scatter_tree<element_t<T, R>>(me, root, extent, data, data, 0);
    allgather_blocks(me, data);
}

// One-to-all broadcast over the d trees of `f`, all at once (4.7.2):
//   rotated        d (t_s + t_w ceil(m/d))       (Eq. 4.1 single-port: (t_s + t_w m) log p)
//   edge_disjoint  (d+1)(t_s + t_w ceil(m/d))
// In place: on entry data is valid at root; on exit at every node.
template <class T = deduce_element, output_buffer<T> R>
void broadcast_trees(node& me, R&& buffer, int root, tree_family f) {
    const auto data = output_span<T>(buffer);
    detail::check_root(me, root, "broadcast");
    detail::require_links_at_once(me, f == tree_family::rotated ? "broadcast rotated-trees"
                                                                : "broadcast edge-disjoint-trees");
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

// In place: on entry data is valid at root; on exit at every node.
template <class T = deduce_element, output_buffer<T> R>
void broadcast(node& me, R&& buffer, int root, broadcast_algo a = broadcast_algo::automatic) {
    const auto data = output_span<T>(buffer);
    if (a == broadcast_algo::automatic) {
        detail::check_root(me, root, "broadcast");
        call_shape shape = shape_of(me, data.size(), sizeof(element_t<T, R>));
        shape.root = root;
        a = choose_algorithm<broadcast_algo>(broadcast_records, shape);
    }
    switch (a) {
    case broadcast_algo::binomial:
        return broadcast_binomial(me, data, root);
    case broadcast_algo::scatter_allgather:
        return broadcast_scatter_allgather(me, data, root);
    case broadcast_algo::rotated_trees:
        return broadcast_trees(me, data, root, tree_family::rotated);
    case broadcast_algo::edge_disjoint_trees:
        return broadcast_trees(me, data, root, tree_family::edge_disjoint);
    case broadcast_algo::automatic:
        break;
    }
    throw usage_error("node " + std::to_string(me.id()) + ": unknown broadcast algorithm");
}

} // namespace hcube
