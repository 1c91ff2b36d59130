// Circular q-shift, Grama et al. 4.6.2. in and out hold one packet of m elements
// on every node (in.size() == out.size()); q may be negative or >= p, it is
// taken mod p, and a 0-shift only copies in to out.
//
// Which linear array is shifted (the source uses two):
//   shift_ring::gray  array position r lives on node gray(r) (Figure 4.23): the
//                     packet of position r goes to position r + q, i.e. node
//                     gray(r) -> node gray(r + q).
//   shift_ring::id    node i -> node i + q (the definition at the start of 4.6,
//                     Eq. 4.12, Figure 4.24, Problem 4.22).
//   shift_ring::natural  the algorithm's own array: gray for the Gray-code
//                     algorithms, id for ecube and automatic.
//
// Algorithms:
//   gray                4.6.2, Eq. 4.11. One phase per set bit of q, highest
//                       first; a 2^b phase takes 2 steps (1 for b = 0):
//                       (t_s + t_w m)(2 popcount(q) - q_0) <= (t_s + t_w m)(2 log p - 1)
//   gray_bidirectional  forward and backward phases (signed binary digits of q
//                       with the fewest steps): <= (t_s + t_w m) log p
//   ecube               one E-cube routed step, Eq. 4.12: t_s + t_w m and no
//                       congestion under ring id (Problem 4.22). Under ring
//                       gray two paths share a link unless q = +-2^b mod p;
//                       the router serves them one after the other, so it
//                       takes at least 2(t_s + t_w m) (see cost::shift_ecube_time).
//   automatic           the cheapest of the above for the machine's t_s, t_w
//                       (first of gray, gray_bidirectional, ecube on a tie),
//                       as the catalog's `auto` chooses: ecube under ring id;
//                       under ring gray ecube (t_s + t_w m for q = +-2^b, else
//                       2(t_s + t_w m)) beats the Gray phases except for
//                       q = +-1 (a tie the Gray phase wins).
// The Gray-code algorithms move along the Gray-code array only; asking them
// for ring id is a usage_error. In their steps every node sends before it
// receives, so they need config::link_capacity >= 1 (the default).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/scratch.hpp>
#include <hcube/cost/personalized.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

namespace hcube {

enum class shift_algo { automatic, gray, gray_bidirectional, ecube };
enum class shift_ring { natural, id, gray };

// words: the packet m; call_shape::shift is q, gray_ring the array.
inline constexpr algorithm_record shift_records[] = {
    {"shift",
     "gray",
     int(shift_algo::gray),
     "Grama et al. 4.6.2, Figure 4.23, Eq. 4.11",
     "(t_s + t_w m)(2 popcount(q) - q_0), q taken mod p, <= (t_s + t_w m)(2 log p - 1)",
     [](const call_shape& s) { return cost::shift_gray(s.t_s, s.t_w, s.dim, s.words, s.shift); },
     {.gray_ring = true}},
    {"shift",
     "gray-bidirectional",
     int(shift_algo::gray_bidirectional),
     "Grama et al. 4.6.2 (forward and backward shifts)",
     "(t_s + t_w m) steps(q) <= (t_s + t_w m) log p",
     [](const call_shape& s) {
         return cost::shift_gray_bidirectional(s.t_s, s.t_w, s.dim, s.words, s.shift);
     },
     {.gray_ring = true}},
    {"shift", "ecube", int(shift_algo::ecube),
     "Grama et al. 4.6.2, Eq. 4.12, Figure 4.24, Problem 4.22",
     "L (t_s + t_w m), L = most paths on one link: 1 on ring id (Eq. 4.12), on ring "
     "gray 2 unless q = +-2^b (the run can take longer); L = 0 if p | q",
     [](const call_shape& s) {
         return cost::shift_ecube_time(s.t_s, s.t_w, s.dim, s.words, s.shift, s.gray_ring);
     }},
};

namespace detail {

// Node of array position `pos` (any integer, taken mod p) on the chosen ring.
inline node_id shift_ring_node(int d, long long pos, bool gray_ring) {
    const auto r = node_id(cost::shift_mod(d, pos));
    return gray_ring ? gray(r) : r;
}

// The link between two neighbouring nodes.
inline int link_between(node_id a, node_id b) {
    return std::countr_zero(a ^ b);
}

// One step of a Gray-code phase: pass the held packet on, take the next one.
template <wire_type T>
void shift_hop(node& me, int send_dim, int recv_dim, scratch<T>& held, scratch<T>& spare) {
    me.send(send_dim, held);
    me.recv(recv_dim, spare);
    std::swap(held, spare);
}

// A 4.6.2 phase: every packet moves `offset` = +-2^b array positions.
// b = 0: one link (gray(r) and gray(r+-1) are neighbours).
// b >= 1: gray(r) and gray(r + offset) differ in bit b-1 and one bit e > b-1
// (Figure 4.23: 4-shift on 8 nodes). Every packet crosses dimension b-1 first,
// which pairs the nodes up, then its own dimension e; each step is a
// permutation on direct links, so nothing is congested:
//
//   4-shift, d = 3:   positions 0 3 4 7 = nodes 000 010 110 100 (a square)
//   step 1 (dim 1):   000->010  010->000  110->100  100->110
//   step 2 (dim e):   010->110  000->100  100->000  110->010
template <wire_type T>
void shift_gray_phase(node& me, long long offset, scratch<T>& held, scratch<T>& spare) {
    const int d = me.dim();
    const auto x = node_id(me.id());
    const long long pos = gray_inverse(x);
    const auto at = [&](long long r) { return shift_ring_node(d, r, true); };
    if (offset == 1 || offset == -1)
        return shift_hop<T>(me, link_between(x, at(pos + offset)),
                            link_between(x, at(pos - offset)), held, spare);
    const int pivot = std::countr_zero(std::uint64_t(offset < 0 ? -offset : offset)) - 1;
    const node_id across = node_id(1) << pivot;
    shift_hop<T>(me, pivot, pivot, held, spare);
    // Now held is the packet of node x ^ across; ours is held by the pivot
    // partner of its source.
    const node_id held_dest = at(gray_inverse(x ^ across) + offset);
    const node_id feeder = at(pos - offset) ^ across;
    shift_hop<T>(me, link_between(x, held_dest), link_between(x, feeder), held, spare);
}

template <wire_type T>
void shift_gray(node& me, std::span<const T> in, std::span<T> out, long long q,
                bool bidirectional) {
    // Working buffers (scratch.hpp): hcube draw shows the packet each node
    // holds between phases.
    scratch<T> held = scratch_of<T>(me, in.begin(), in.end()), spare = scratch_of<T>(me, in.size());
    for (long long offset : cost::shift_phases(me.dim(), q, bidirectional))
        shift_gray_phase<T>(me, offset, held, spare);
    std::copy(held.begin(), held.end(), out.begin());
}

// Eq. 4.12: one routed message straight to the destination.
template <wire_type T>
void shift_ecube(node& me, std::span<const T> in, std::span<T> out, long long q, bool gray_ring) {
    const int d = me.dim();
    const long long pos = gray_ring ? gray_inverse(node_id(me.id())) : me.id();
    if (cost::shift_mod(d, q) == 0) return void(std::copy(in.begin(), in.end(), out.begin()));
    me.sendrecv_routed(int(shift_ring_node(d, pos + q, gray_ring)), in,
                       int(shift_ring_node(d, pos - q, gray_ring)), out);
}

} // namespace detail

template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void circular_shift(node& me, const In& in_range, Out&& out_range, long long q,
                    shift_algo a = shift_algo::automatic, shift_ring ring = shift_ring::natural) {
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    if (in.size() != out.size())
        throw usage_error("circular_shift on node " + std::to_string(me.id()) + ": in has " +
                          std::to_string(in.size()) + " elements and out has " +
                          std::to_string(out.size()) + "; both must be the packet size m");
    const bool gray_algo = a == shift_algo::gray || a == shift_algo::gray_bidirectional;
    if (ring == shift_ring::natural) ring = gray_algo ? shift_ring::gray : shift_ring::id;
    const bool gray_ring = ring == shift_ring::gray;
    if (a == shift_algo::automatic) {
        call_shape shape = shape_of(me, in.size(), sizeof(element_t<T, In>));
        shape.shift = q;
        shape.gray_ring = gray_ring;
        a = choose_algorithm<shift_algo>(shift_records, shape);
    }
    if (a == shift_algo::ecube) return detail::shift_ecube(me, in, out, q, gray_ring);
    if (!gray_ring)
        throw usage_error("circular_shift on node " + std::to_string(me.id()) +
                          ": the Gray-code shifts move along the Gray-code embedded array "
                          "(position r on node gray(r)); ring id (node i -> i + q) needs ecube");
    detail::shift_gray(me, in, out, q, a == shift_algo::gray_bidirectional);
}

} // namespace hcube
