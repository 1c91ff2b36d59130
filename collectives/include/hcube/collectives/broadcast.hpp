// One-to-all broadcast with any root (seed 000, 4.1 and 4.7.1).
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
    automatic,         // the cheaper of the two for this size and cost model (Table 4.1)
    binomial,          // recursive doubling: (t_s + t_w m) log p
    scatter_allgather, // message splitting: 2 (t_s log p + t_w (p-1) m/p)
};

// words: the whole message m. `automatic` takes the cheaper (Table 4.1).
inline constexpr algorithm_record broadcast_records[] = {
    {"broadcast", "binomial", int(broadcast_algo::binomial), "seed 000, Alg. 4.1/4.2, Eq. 4.1",
     "(t_s + t_w m) log p", detail::binomial_cost, detail::rooted_needs},
    {"broadcast", "scatter-allgather", int(broadcast_algo::scatter_allgather),
     "seed 000, 4.7.1, Eq. 4.13", "2 (t_s log p + t_w (p-1) m/p) if p | m", detail::split_cost,
     detail::rooted_needs},
};

// Recursive doubling (seed 000, Alg. 4.1, Alg. 4.2 for any root), highest
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

// Message splitting (seed 000, 4.7.1, Eq. 4.13): scatter block i of the message
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
    case broadcast_algo::automatic:
        break;
    }
    throw usage_error("node " + std::to_string(me.id()) + ": unknown broadcast algorithm");
}

} // namespace hcube
