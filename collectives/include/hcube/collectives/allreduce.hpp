// All-reduce: every node ends with x_0 op x_1 op ... op x_(p-1), elementwise in
// node order. Grama et al. 4.3 (Eq. 4.5), 4.7.1 (Eq. 4.14) and Table 4.1.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/cm200/allgather.hpp>
#include <hcube/collectives/cm200/reduce_scatter.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/cost/all_port.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/node.hpp>

namespace hcube {

enum class allreduce_algo {
    automatic,
    hypercube,
    reduce_scatter_allgather,
    reduce_broadcast,
    d_cycles, // all-port: 2 (p-1)(t_s + t_w ceil(ceil(m/p)/log p))
};

// words: the whole message m. Table 4.1 takes the smaller of Eq. 4.5 and Eq.
// 4.14; reduce-broadcast, twice Eq. 4.5, never wins.
inline constexpr algorithm_record allreduce_records[] = {
    {"allreduce", "hypercube", int(allreduce_algo::hypercube), "Grama et al. 4.3, Eq. 4.5",
     "(t_s + t_w m) log p", cost_of<cost::allreduce_hypercube>},
    {"allreduce", "reduce-scatter-allgather", int(allreduce_algo::reduce_scatter_allgather),
     "Grama et al. 4.7.1, Eq. 4.14", "2 (t_s log p + t_w (p-1) m/p) if p | m",
     cost_of<cost::allreduce_reduce_scatter_allgather>},
    {"allreduce", "reduce-broadcast", int(allreduce_algo::reduce_broadcast),
     "Grama et al. Alg. 4.3 then Alg. 4.1 (4.3)", "2 (t_s + t_w m) log p",
     cost_of<cost::allreduce_reduce_broadcast>},
    {"allreduce",
     "d-cycles",
     int(allreduce_algo::d_cycles),
     "Mathur & Johnsson 4.2 (the d cycles) as Grama et al.'s Eq. 4.14 (4.7.1, 4.7.2)",
     "2 (p-1)(t_s + t_w ceil(ceil(m/p)/log p)), all-port",
     cost_of<cost::allreduce_d_cycles>,
     {.several_links_from = 1, .commutative_op = true}},
};

namespace detail {

// 4.3, Eq. 4.5: (t_s + t_w m) log p. Alg. 4.7's exchanges with the whole
// message, combined instead of concatenated. Ascending dimensions keep node
// order: before the step on dimension i each node holds the reduction of its
// aligned 2^i-node subcube, and the partner's subcube lies wholly below or above.
template <wire_type T, class Op>
void hypercube_allreduce(node& me, std::span<T> data, Op& op) {
    std::vector<T> in(data.size());
    for (int i = 0; i < me.dim(); ++i) {
        me.exchange(i, data, in);
        combine_into(data, std::span<const T>(in), me.neighbor(i) < me.id(), op);
    }
}

} // namespace detail

// All-reduce as all-to-all reduction then all-to-all broadcast (Grama et al.,
// 4.7.1, Eq. 4.14), both along the d rotated Hamiltonian cycles of Mathur & Johnsson,
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

// In place: on exit every node's data = x_0 op x_1 op ... op x_(p-1)
// (elementwise, node order); op must be associative, need not commute.
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void allreduce(node& me, R&& buffer, Op op, allreduce_algo a = allreduce_algo::automatic) {
    const auto data = output_span<T>(buffer);
    if (a == allreduce_algo::automatic) {
        call_shape shape = shape_of(me, data.size(), sizeof(element_t<T, R>));
        shape.commutative = is_commutative_v<Op>;
        a = choose_algorithm<allreduce_algo>(allreduce_records, shape);
    }
    switch (a) {
    case allreduce_algo::hypercube:
        detail::hypercube_allreduce(me, data, op);
        return;
    case allreduce_algo::reduce_scatter_allgather:
        // 4.7.1, Eq. 4.14: 2(t_s log p + t_w (p-1) m/p) when p | m (exact form
        // for any m in cost::allreduce_reduce_scatter_allgather).
        reduce_scatter_blocks(me, data, op, reduce_scatter_algo::hypercube);
        allgather_blocks(me, data, allgather_algo::hypercube);
        return;
    case allreduce_algo::reduce_broadcast:
        // Alg. 4.3 then Alg. 4.1: 2 (t_s + t_w m) log p.
        reduce(me, data, 0, op, reduce_algo::binomial);
        broadcast(me, data, 0, broadcast_algo::binomial);
        return;
    case allreduce_algo::d_cycles:
        return allreduce_d_cycles(me, data, op);
    case allreduce_algo::automatic:
        return;
    }
}

} // namespace hcube
