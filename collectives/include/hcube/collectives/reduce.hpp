// All-to-one reduction with any root (seed 000, 4.1 and 4.7.1), right for
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
};

// words: the whole message m. `automatic` weighs Eq. 4.1 against
// cost::split_rooted, exact when p divides m and otherwise an upper bound of
// the splitting reduction's time that costs O(log p), not O(p log p).
inline constexpr algorithm_record reduce_records[] = {
    {"reduce", "binomial", int(reduce_algo::binomial), "seed 000, Alg. 4.3, Eq. 4.1",
     "(t_s + t_w m) log p", detail::binomial_cost, detail::rooted_needs},
    {"reduce", "reduce-scatter-gather", int(reduce_algo::reduce_scatter_gather),
     "seed 000, 4.7.1, Problem 4.17, Eq. 4.13", "2 (t_s log p + t_w (p-1) m/p) if p | m",
     detail::split_cost, detail::rooted_needs},
};

// Single-node accumulation (seed 000, Alg. 4.3), lowest dimension first, on the
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

// Message splitting (seed 000, 4.7.1, Problem 4.17): all-to-all reduction leaves
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

// In place: on exit data at root = x_0 op x_1 op ... op x_{p-1} (elementwise,
// node order); other nodes' data is unspecified.
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void reduce(node& me, R&& buffer, int root, Op op, reduce_algo a = reduce_algo::automatic) {
    const auto data = output_span<T>(buffer);
    if (a == reduce_algo::automatic) {
        detail::check_root(me, root, "reduce");
        call_shape shape = shape_of(me, data.size(), sizeof(element_t<T, R>));
        shape.root = root;
        a = choose_algorithm<reduce_algo>(reduce_records, shape);
    }
    switch (a) {
    case reduce_algo::binomial:
        return reduce_binomial(me, data, root, op);
    case reduce_algo::reduce_scatter_gather:
        return reduce_reduce_scatter_gather(me, data, root, op);
    case reduce_algo::automatic:
        break;
    }
    throw usage_error("node " + std::to_string(me.id()) + ": unknown reduce algorithm");
}

} // namespace hcube
