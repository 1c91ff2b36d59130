// The CM-200 algorithms' common ground (Mathur & Johnsson sections 4-5): options,
// the step hook the figure replays observe, one step over several links, and
// who talks to whom in the one-cycle and d-cycles schedules.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/cm200_index.hpp>
#include <hcube/collectives/detail/link_step.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/cost/cm200.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

namespace hcube::cm200 {

// Index computation: every node computes where a received element belongs with
// the formulas of 4.2.1/4.2.3. Index motion: each element travels with its
// 32-bit array index (the source's faster choice for 32 or more nodes). Both end
// in block order. Arrival: no reordering; local address j M' + s keeps what
// arrived in step j - 1 (j = 0: own data), the layout whose indices 4.2.1 and
// Figure 7 give (dc_arrival_index, oc_arrival_index): the source's "AABC" time,
// whose peak rate it quotes next to the rate with reordering.
enum class index_mode { computation, motion, arrival };

struct options {
    node_order order = node_order::binary;
    index_mode index = index_mode::computation;
};

constexpr std::string_view to_string(node_order o) noexcept {
    return o == node_order::binary ? "binary" : "gray";
}
constexpr std::string_view to_string(index_mode i) noexcept {
    return i == index_mode::computation ? "computation"
           : i == index_mode::motion    ? "motion"
                                        : "arrival";
}

// ---- observing a run step by step (the figure replays use it) ----

// After step `step`, on `channel` (the location i of the d-cycles; 0 for one
// cycle) a node sent the data of (broadcast) / partial for (reduction) rank
// block_out and received that of block_in; data_in is what it now holds for
// block_in (for a reduction: after adding its own contribution).
template <class T>
struct step_event {
    int step;
    int channel;
    int block_out;
    int block_in;
    std::span<const T> data_in;
};

struct no_hook {
    template <class E>
    void operator()(const E&) const noexcept {}
};

namespace detail {

[[noreturn]] inline void fail(const node& me, const std::string& what) {
    throw usage_error("node " + std::to_string(me.id()) + ": " + what);
}

// The d-cycles use every link in every step: from d = 2 they need a port
// model that lets a node use several links at once.
inline constexpr requirements d_cycles_needs{.several_links_from = 2};

inline void require_links_at_once(const node& me) {
    const call_shape s = shape_of(me, 0, 1);
    if (const std::string why = unfit(d_cycles_needs, "d-cycles", s); !why.empty())
        fail(me, why + ", not " + std::string(to_string(s.ports)));
}

// Parts of a spread or variables of the butterfly: one per send port (P = d
// all-port, 1 single-port).
constexpr std::size_t parts(const call_shape& s) {
    return std::size_t(s.policy().send_ports(s.dim));
}

inline void check_index_range(const node& me, std::size_t n, options o) {
    if (o.index == index_mode::motion && n > std::size_t(UINT32_MAX))
        fail(me, std::to_string(n) + " elements exceed the 32-bit array indices of index motion");
}

// One step's traffic on one channel.
template <class W>
struct channel_io {
    int send_dim;
    int recv_dim;
    std::span<const W> out;
    std::span<W> in;
};

// Runs one step (detail/link_step.hpp). The d-cycles send and receive every
// channel on one link, so the step is one exchange per link, all at once (the
// CM-200's primitive); the one cycle sends to one neighbour and receives from
// the other. An empty side leaves its link idle.
template <class W>
void run_step(node& me, const std::vector<channel_io<W>>& ios) {
    std::vector<hcube::detail::link_out<W>> outs;
    std::vector<hcube::detail::link_in<W>> ins;
    for (const auto& c : ios) {
        if (!c.out.empty()) outs.push_back({c.send_dim, c.out});
        if (!c.in.empty()) ins.push_back({c.recv_dim, c.in});
    }
    hcube::detail::link_step<W>(me, outs, ins);
}

// Who talks to whom in the two cycle algorithms. Channel c of the d-cycles is
// location c (local addresses s with s mod d = c); the one cycle has a single
// channel that carries whole blocks.
struct cycle_schedule {
    int d;
    bool multi; // d cycles, or the one Gray-code cycle
    node_id me;
    node_id q; // position of `me` on the one cycle

    cycle_schedule(const node& n, bool multi_)
        : d(n.dim())
        , multi(multi_)
        , me(node_id(n.id()))
        , q(oc_position(node_id(n.id()))) {}

    int channels() const noexcept { return d == 0 ? 1 : multi ? d : 1; }
    int steps() const noexcept { return (1 << d) - 1; }

    // Broadcast: d-cycles exchange on (t_u + c) mod d; the one cycle shifts left.
    int bcast_send_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q - 1, d);
    }
    int bcast_recv_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q, d);
    }
    // The node whose data `me` holds on channel c after step u (own data: u = -1).
    node_id bcast_origin(int u, int c) const noexcept {
        return multi ? dc_bcast_origin(me, u, c, d) : oc_node(q + node_id(u + 1), d);
    }
    // Index computation (4.1, 4.2.1): array index of element k of channel c
    // received in step u, for blocks of m elements.
    std::size_t bcast_index(int u, int c, std::size_t k, std::size_t m,
                            node_order o) const noexcept {
        if (multi) return dc_bcast_index(me, std::size_t(u + 1), k, c, d, m, o);
        return std::size_t(oc_bcast_index(me, node_id(u + 1), d, o)) * m + k;
    }

    // Reduction: the reverse motion. The partial for block (destination node) b
    // visits path(b, 0), ..., path(b, 2^d - 1) = b, combining as it goes.
    int reduce_send_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q, d);
    }
    int reduce_recv_dim(int u, int c) const noexcept {
        return multi ? exchange_dim(u, c, d) : oc_dim(q - 1, d);
    }
    node_id path(node_id b, int p, int c) const noexcept {
        return multi ? dc_reduce_path(b, p, c, d) : oc_node(oc_position(b) + 1 + node_id(p), d);
    }
    // The block whose path has `me` at position p: sent in step p, received in step p - 1.
    node_id block_at(int p, int c) const noexcept {
        return multi ? dc_reduce_path(me, p, c, d) : oc_node(q - 1 - node_id(p), d);
    }
};

} // namespace detail

} // namespace hcube::cm200
