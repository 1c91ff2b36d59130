// All-to-some personalized communication (ASPC), Hu, section 3.
//
// Logical node i lives on physical node G(i) (Gray code); it holds n = log p
// blocks of w elements, block j being "element (i|j)". ASPC delivers
//   plus_out[j]  = block j of logical node i - 2^j   ((i|j) -> (i + 2^j | j))
//   minus_out[j] = block j of logical node i + 2^j   ((i|j) -> (i - 2^j | j))
// (indices mod p). The tables of lib/aspc_schedule.hpp route every block over
// two links (one for j = 0), all blocks of a node on distinct links:
//
//   n = 3, plus half, node 0 (Table 1, column 0):   step 1        step 2
//     block 0 -> node 1 on link phi_0(0) = 0        arrived
//     block 1 -> node 3 on link phi_0(1) = 1  -->   node 3 forwards on phi_3(1) = 0 -> node 2
//     block 2 -> node 7 on link phi_0(2) = 2  -->   node 7 forwards on phi_7(2) = 1 -> node 4
//
// The machine's port model picks the algorithm:
//   all-port     Theorem 5, "four-step": plus half in 2 steps, minus half in 2;
//                cost 4 (t_s + t_w w) (2 (t_s + t_w w) for n = 1), which
//                meets Theorem 2's lower bound of 4 steps for n > 2
//   single-port  the same routes one link at a time (a node sends and
//                receives one block per step): 2 (2n - 1) steps,
//                (4n - 2)(t_s + t_w w), the single-port counting bound
// Single-port sends before it receives, so links must buffer a message
// (config::link_capacity >= 1, the default).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <hcube/aspc_schedule.hpp>
#include <hcube/collectives/detail/link_step.hpp>
#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/scratch.hpp>
#include <hcube/cost/aspc.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>

namespace hcube {

// words: w per block. aspc() runs whichever the port model fits; the catalog
// lists both, each under its own model.
inline constexpr algorithm_record aspc_records[] = {
    {"aspc",
     "four-step",
     0,
     "Hu, section 3, Theorem 5, Tables 1-2",
     "4 (t_s + t_w w), 2 (t_s + t_w w) on 2 nodes, w = --words per element; "
     "Theorem 2: >= 4 steps for n > 2",
     [](const call_shape& s) { return cost::aspc_all_port(s.dim, s.words, s.t_s, s.t_w); },
     {.only_ports = port_model::all_port, .min_dim = 1}},
    {"aspc",
     "single-port",
     0,
     "Hu, section 1 (one link per step) with Theorem 5's routes",
     "(4 log p - 2)(t_s + t_w w), w = --words per element",
     [](const call_shape& s) { return cost::aspc_single_port(s.dim, s.words, s.t_s, s.t_w); },
     {.only_ports = port_model::single_port, .min_dim = 1}},
};

namespace detail {

// One block in one half of ASPC: `send` leaves logical node i for i + 2^j
// (plus) or i - 2^j (minus); the block that logical node i - 2^j (plus) or
// i + 2^j (minus) sent the same way lands in `recv`. send and recv have the
// same size on every node.
template <wire_type T>
struct aspc_route {
    int j;
    bool plus;
    std::span<const T> send;
    std::span<T> recv;
};

// Moves every route's block along its two-link path: step 1 on the outgoing
// tables, step 2 (routes with j > 0) forwards from the intermediate node. Each
// step's links must be distinct (Lemma 5 for one half's n slots; tests/aspc
// checks other combinations from the trace). Cost: 2 steps, 1 if every j = 0.
template <wire_type T>
void aspc_routes(node& me, std::span<const aspc_route<T>> routes) {
    namespace hs = aspc_schedule;
    const int n = me.dim();
    const node_id i = hs::logical_of(node_id(me.id()));
    std::size_t transit_size = 0;
    for (const auto& r : routes)
        if (r.j > 0) transit_size += r.recv.size();
    auto transit = scratch_of<T>(me, transit_size);

    std::vector<link_out<T>> outs;
    std::vector<link_in<T>> ins;
    std::vector<std::span<T>> parked; // transit slot of each route with j > 0
    std::size_t at = 0;
    for (const auto& r : routes) {
        outs.push_back({hs::out_link(n, i, r.j, r.plus), r.send});
        std::span<T> dst = r.recv;
        if (r.j > 0) {
            dst = std::span<T>(transit).subspan(at, r.recv.size());
            at += r.recv.size();
            parked.push_back(dst);
        }
        ins.push_back({hs::in_link(n, i, r.j, r.plus), dst});
    }
    link_step<T>(me, outs, ins);
    if (parked.empty()) return;

    outs.clear();
    ins.clear();
    std::size_t k = 0;
    for (const auto& r : routes) {
        if (r.j == 0) continue;
        outs.push_back({hs::out_link(n, i, r.j, r.plus), parked[k++]});
        ins.push_back({hs::in_link(n, i, r.j, r.plus), r.recv});
    }
    link_step<T>(me, outs, ins);
}

// One half of ASPC for every slot j = 0 .. n-1, blocks of w elements.
template <wire_type T>
void aspc_half(node& me, std::span<const T> in, std::span<T> out, std::size_t w, bool plus) {
    std::vector<aspc_route<T>> routes;
    for (int j = 0; j < me.dim(); ++j)
        routes.push_back({j, plus, in.subspan(j * w, w), out.subspan(j * w, w)});
    aspc_routes<T>(me, routes);
}

} // namespace detail

// ASPC of n blocks of w = in.size() / n elements per node (see the top of this
// file), four-step under all-port, one link at a time under single-port.
template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Plus,
          output_buffer<element_t<T, In>> Minus>
void aspc(node& me, const In& in_range, Plus&& plus_range, Minus&& minus_range) {
    const auto in = input_span<T>(in_range);
    const auto plus_out = output_span<T>(plus_range);
    const auto minus_out = output_span<T>(minus_range);
    const std::size_t n = std::size_t(me.dim());
    if (n == 0) return;
    if (in.size() % n != 0 || plus_out.size() != in.size() || minus_out.size() != in.size())
        throw usage_error(
            "aspc on node " + std::to_string(me.id()) + ": in has " + std::to_string(in.size()) +
            " elements, plus_out " + std::to_string(plus_out.size()) + ", minus_out " +
            std::to_string(minus_out.size()) + "; all must be n w with n = " + std::to_string(n));
    const std::size_t w = in.size() / n;
    detail::aspc_half(me, in, plus_out, w, true);
    detail::aspc_half(me, in, minus_out, w, false);
}

} // namespace hcube
