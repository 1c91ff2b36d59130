// All-to-all personalized communication (total exchange), Grama et al. 4.5.
//
// in: p blocks of m elements, block j is for node j; out: p blocks of m
// elements, block j came from node j (in.size() == out.size() == p m).
//
// Algorithms (costs exact under the single-port model, also under all-port):
//   dimension_exchange  4.5.3, Eq. 4.9    (t_s + t_w m p/2) log p
//   pairwise            Alg. 4.10, E-cube routed, Eq. 4.10   (t_s + t_w m)(p-1)
//   ring                4.5.1 on the Gray-code ring, Eq. 4.7  (t_s + t_w m p/2)(p-1)
//   all_port            4.7.2, all-port only: log p (t_s + t_w (p/2) ceil(m/log p))
//   automatic           the cheapest for the machine's t_s, t_w (alltoall_records;
//                       the ring never wins on a hypercube)
// In the ring every node sends before it receives, so it needs links that
// buffer at least one message (config::link_capacity >= 1, the default).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/collectives/scratch.hpp>
#include <hcube/cost/all_port.hpp>
#include <hcube/cost/personalized.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

namespace hcube {

enum class alltoall_algo { automatic, dimension_exchange, pairwise, ring, all_port };

// words: the block m each node sends to each node.
inline constexpr algorithm_record alltoall_records[] = {
    {"alltoall", "dimension-exchange", int(alltoall_algo::dimension_exchange),
     "Grama et al. 4.5.3, Eq. 4.9", "(t_s + t_w m p/2) log p",
     [](const call_shape& s) {
         return cost::alltoall_dimension_exchange(s.t_s, s.t_w, s.dim, s.words);
     }},
    {"alltoall", "pairwise", int(alltoall_algo::pairwise),
     "Grama et al. 4.5.3, Alg. 4.10, E-cube routing, Eq. 4.10", "(t_s + t_w m)(p-1)",
     [](const call_shape& s) { return cost::alltoall_pairwise(s.t_s, s.t_w, s.dim, s.words); }},
    {"alltoall", "ring", int(alltoall_algo::ring),
     "Grama et al. 4.5.1 on the Gray-code ring, Eq. 4.7", "(t_s + t_w m p/2)(p-1)",
     [](const call_shape& s) { return cost::alltoall_ring(s.t_s, s.t_w, s.dim, s.words); }},
    {"alltoall",
     "all-port",
     int(alltoall_algo::all_port),
     "Grama et al. 4.7.2 and 4.5.3 (dimension exchange on every link)",
     "log p (t_s + t_w (p/2) ceil(m/log p)), all-port",
     cost_of<cost::alltoall_all_port>,
     {.several_links_from = 1}},
};

namespace detail {

// The block size m, or a usage_error naming the node and both sizes.
inline std::size_t alltoall_block_size(const node& me, std::size_t in, std::size_t out) {
    const auto p = std::size_t(me.size());
    if (in != out || in % p != 0)
        throw usage_error("alltoall on node " + std::to_string(me.id()) + ": in has " +
                          std::to_string(in) + " elements and out has " + std::to_string(out) +
                          "; both must be p * m with p = " + std::to_string(p));
    return in / p;
}

// 4.5.3 (Figure 4.20). Slot t of the working array holds one block; after the
// dimensions in a set D were exchanged, t's bits in D are the block's source
// and its other bits the block's destination. Exchanging dimension k sends the
// p/2 slots whose bit k differs from ours (runs of 2^k slots) and the partner's
// reply lands in exactly those slots, in order:
//
//   node 0, d = 2, slots as (source)(destination):
//   [00 01 02 03] --dim 0: send slots 1,3--> [00 10 02 12] --dim 1: send slots 2,3--> [00 10 20 30]
//
// Cost: (t_s + t_w m p/2) log p.
template <wire_type T>
void alltoall_dimension_exchange(node& me, std::span<const T> in, std::span<T> out, std::size_t m) {
    std::copy(in.begin(), in.end(), out.begin());
    const std::size_t p = me.size(), id = me.id(), half = m * p / 2;
    auto outgoing = scratch_of<T>(me, half), incoming = scratch_of<T>(me, half);
    for (int k = 0; k < me.dim(); ++k) {
        const std::size_t run = m << k, first = (~id >> k & 1) * run;
        // Runs start at first, first + 2 run, ...: pack them, exchange, unpack.
        for (std::size_t s = first, n = 0; s < p * m; s += 2 * run, n += run)
            std::copy_n(out.begin() + s, run, outgoing.begin() + n);
        me.exchange(k, outgoing, incoming);
        for (std::size_t s = first, n = 0; s < p * m; s += 2 * run, n += run)
            std::copy_n(incoming.begin() + n, run, out.begin() + s);
    }
}

// Alg. 4.10: in step j node i exchanges with i XOR j through the E-cube router;
// the paths of one step never share a directed link, so each step costs
// t_s + t_w m. Cost: (t_s + t_w m)(p-1), no congestion. Large blocks go
// straight from in to the partner's out (sendrecv_routed: one copy).
template <wire_type T>
void alltoall_pairwise(node& me, std::span<const T> in, std::span<T> out, std::size_t m) {
    const int id = me.id();
    std::copy_n(in.begin() + id * m, m, out.begin() + id * m);
    for (int j = 1; j < me.size(); ++j) {
        const int partner = id ^ j;
        me.sendrecv_routed(partner, in.subspan(partner * m, m), partner,
                           out.subspan(partner * m, m));
    }
}

// 4.5.1 (Figure 4.18) on the Hamiltonian cycle gray(0), gray(1), ...: ring
// position r sends everything not yet delivered to position r + 1. In step s it
// sends m(p - s) words and keeps the first block it receives (from position
// r - s), forwarding the rest. Cost: sum_s (t_s + t_w m(p-s)) = (t_s + t_w m p/2)(p-1).
template <wire_type T>
void alltoall_ring(node& me, std::span<const T> in, std::span<T> out, std::size_t m) {
    const std::size_t p = me.size();
    const auto id = node_id(me.id());
    const std::size_t r = gray_inverse(id);
    const auto at = [&](std::size_t pos) { return std::size_t(gray(node_id(pos % p))); };
    const int to_next = std::countr_zero(id ^ node_id(at(r + 1)));
    const int from_prev = std::countr_zero(id ^ node_id(at(r + p - 1)));
    std::copy_n(in.begin() + id * m, m, out.begin() + id * m);
    // Blocks for positions r+1, ..., r+p-1, nearest first.
    auto sending = scratch_of<T>(me, (p - 1) * m), receiving = scratch_of<T>(me, (p - 1) * m);
    for (std::size_t o = 1; o < p; ++o)
        std::copy_n(in.begin() + at(r + o) * m, m, sending.begin() + (o - 1) * m);
    std::span<const T> message(sending);
    for (std::size_t s = 1; s < p; ++s) {
        me.send(to_next, message);
        const std::span<T> got = std::span(receiving).first(m * (p - s));
        me.recv(from_prev, got);
        std::copy_n(got.begin(), m, out.begin() + at(r + p - s) * m);
        std::swap(sending, receiving);
        message = std::span<const T>(sending).subspan(m, m * (p - s - 1));
    }
}

} // namespace detail

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
    detail::require_links_at_once(me, "alltoall all-port");
    const int d = me.dim();
    const std::size_t p = std::size_t(me.size()), id = std::size_t(me.id());
    if (d == 0) return void(std::copy(in.begin(), in.end(), out.begin()));
    auto slots = std::vector<scratch<E>>(std::size_t(d), scratch_of<E>(me)), sending = slots,
         receiving = slots;
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

template <class T = deduce_element, input_buffer<T> In, output_buffer<element_t<T, In>> Out>
void alltoall(node& me, const In& in_range, Out&& out_range,
              alltoall_algo a = alltoall_algo::automatic) {
    using E = element_t<T, In>;
    const auto in = input_span<T>(in_range);
    const auto out = output_span<T>(out_range);
    const std::size_t m = detail::alltoall_block_size(me, in.size(), out.size());
    if (a == alltoall_algo::automatic)
        a = choose_algorithm<alltoall_algo>(alltoall_records, shape_of(me, m, sizeof(E)));
    switch (a) {
    case alltoall_algo::pairwise:
        return detail::alltoall_pairwise(me, in, out, m);
    case alltoall_algo::ring:
        return detail::alltoall_ring(me, in, out, m);
    case alltoall_algo::all_port:
        return alltoall_all_port(me, in, out);
    default:
        return detail::alltoall_dimension_exchange(me, in, out, m);
    }
}

} // namespace hcube
