// The link primitives' pieces, compiled once per link type: posting and
// taking messages, pending deliveries, exchange, exchange_all and recv_any
// (node.cpp is their facade). Private to emu/src.
//
// Virtual time (docs/runtime.md): a send occupies its port from
// max(clock, port_free) for t_s + t_w m and the message carries its arrival
// time; a receive occupies the receive port for the same duration, ending no
// earlier than the arrival, and sets clock = max(clock, end). Single-port has
// one send and one receive port per node, all-port one of each per link.
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <limits>
#include <string>

#include <hcube/node.hpp>

#include "charge.hpp"
#include "digest.hpp"
#include "horizon.hpp"
#include "links/copy_out.hpp"
#include "node_errors.hpp"
#include "park.hpp"
#include "state.hpp"
#include "trace_records.hpp"

namespace hcube::detail {
// Internal to the one file that includes it (node.cpp), as they were when they
// lived there: GCC then inlines them into each primitive, and a parked fiber
// keeps fewer, smaller frames on its stack.
namespace {

// Sends whose completion still depends on the receiver: a borrowed buffer
// (rendezvous exchange) or a synchronous link. If the node unwinds with a
// borrowed buffer outstanding, the run is cancelled and we wait until no
// receiver is copying from it (links/link.hpp, reading()), so none reads freed
// memory.
template <spsc_link L, int Capacity>
class pending_deliveries {
public:
    pending_deliveries(machine_state& m, node_state& s, int id) noexcept
        : m_(m)
        , s_(s)
        , id_(id) {}
    pending_deliveries(const pending_deliveries&) = delete;
    pending_deliveries& operator=(const pending_deliveries&) = delete;

    void add(int k, std::uint64_t seq, bool borrowed) noexcept {
        assert(n_ < Capacity);
        items_[n_++] = {k, seq, borrowed};
    }

    void wait_all() {
        while (n_ > 0) {
            const item it = items_[n_ - 1];
            const L& l = s_.out_link<L>(it.k);
            wait_until(m_, s_, [&] { return l.consumed() >= it.seq; },
                       {wait_info::delivery, it.k, id_ ^ (1 << it.k), 0, false});
            --n_;
        }
    }

    ~pending_deliveries() {
        if (std::none_of(items_, items_ + n_, [](const item& it) { return it.borrowed; })) return;
        m_.cancel(id_);
        for (int i = 0; i < n_; ++i)
            while (items_[i].borrowed &&
                   s_.out_link<L>(items_[i].k).reading().load(std::memory_order_seq_cst))
                m_.exec->yield();
    }

private:
    struct item {
        int k;
        std::uint64_t seq;
        bool borrowed;
    };
    machine_state& m_;
    node_state& s_;
    int id_;
    // Read below n_ only: zeroing them was 5% of a small exchange.
    item items_[Capacity];
    int n_ = 0;
};

// The pieces every primitive is made of, bound to one node and compiled for
// the machine's link type L (with_access).
template <spsc_link L>
struct access {
    machine_state& m;
    node_state& s;
    int id;

    L& out(int k) const { return s.out_link<L>(k); }
    L& in(int k) const { return s.in_link<L>(k); }
    // Room for one delivery per link the call sends on. A call's frame stays
    // on its fiber's stack while the node is parked, and a single exchange
    // with room for max_dim spread its live words over more cache lines.
    template <int Capacity>
    pending_deliveries<L, Capacity> deliveries() const noexcept {
        return {m, s, id};
    }

    void check_dim(int k, const char* op) const {
        if (k < 0 || k >= m.cfg.dim) bad_dim(id, m.cfg.dim, k, op);
    }

    // Sends on link k: waits while the link is full, then reserves the send
    // port and fills the next slot in place (payload inline, on the heap, or
    // borrowed) and publishes it. Returns the message's sequence number.
    [[gnu::always_inline]] std::uint64_t post(int k, const void* data, std::size_t bytes,
                                              std::size_t elem, std::uint32_t type, bool borrow) {
        if (bytes > std::numeric_limits<std::uint32_t>::max()) too_large(id, bytes);
        L& l = out(k);
        const int peer = id ^ (1 << k);
        if (!l.writable())
            wait_until(m, s, [&] { return l.writable(); },
                       {wait_info::send_full, k, peer, bytes, false});

        const vclock dur = m.message_duration(bytes, elem);
        vclock& port = s.send_port[m.port_index(k)];
        const vclock start = max(s.clock, port);
        port = start + dur;

        descriptor& d = l.back();
        d.arrival = start + dur;
        d.bytes = std::uint32_t(bytes);
        static_assert(max_wire_type_id >> descriptor::type_bits == 0);
        d.type = type;
        if (bytes <= descriptor::inline_capacity) {
            d.kind = payload::inline_bytes;
            d.store_inline(data, bytes);
        } else if (borrow) {
            d.kind = payload::borrowed;
            d.ptr = data;
        } else {
            void* copy = payload_alloc(bytes);
            if (!copy) out_of_memory(id, bytes);
            std::memcpy(copy, data, bytes);
            d.kind = payload::heap;
            d.ptr = copy;
        }
        l.publish();
        wake(m, m.nodes[peer], wake_event::arrival, &s);
        if (m.polls) m.world->progress(); // ship it now if it leaves the process

        s.ends[k].sent.messages += 1;
        s.ends[k].sent.bytes += bytes;
        if (m.cfg.trace) record_send(s, id, peer, k, start, (start + dur).time, bytes);
        return l.pushed();
    }

    bool synchronous() const noexcept { return m.cfg.link_capacity == 0; }

    void send(int k, const void* data, std::size_t bytes, std::size_t elem, std::uint32_t type) {
        check_dim(k, "send");
        const std::uint64_t seq = post(k, data, bytes, elem, type, false);
        if (synchronous()) {
            auto pending = deliveries<1>();
            pending.add(k, seq, false);
            pending.wait_all();
        }
    }

    void await_message(int k, std::size_t expect, bool exact) {
        L& l = in(k);
        wait_until(m, s, [&] { return !l.empty(); },
                   {wait_info::recv, k, id ^ (1 << k), expect, exact});
    }

    void check_sizes(int k, const descriptor& d, std::size_t bytes, std::size_t elem,
                     std::uint32_t type, bool exact) const {
        if (d.type != type || (exact && d.bytes != bytes)) size_mismatch(k, d, bytes, elem, type);
    }

    [[noreturn, gnu::cold]] void size_mismatch(int k, const descriptor& d, std::size_t bytes,
                                               std::size_t elem, std::uint32_t type) const {
        const std::string what = "recv from node " + std::to_string(id ^ (1 << k)) +
                                 " on dimension " + std::to_string(k) + ": ";
        if (d.type != type) fail(id, what + type_mismatch(d.type, type));
        fail(id, what + "expected " + elements(bytes, elem) + ", message has " +
                     elements(d.bytes, elem));
    }

    // Copies the front message of in link k into dst (nullptr: ask the sink),
    // releases it to the sender and charges the receive.
    // `elem`: the element size, which check_sizes in dest confirmed.
    template <class Dest>
    [[gnu::always_inline]] void take(int k, std::size_t elem, Dest dest) {
        L& l = in(k);
        const descriptor& d = l.front();
        void* dst = dest(d);
        if (!copy_payload(l, d, dst, m.cancelled)) throw run_cancelled{};
        if (m.cfg.digest) s.digest += message_digest(k, d.arrival, dst, d.bytes);
        if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
        const vclock arrival = d.arrival;
        const vclock dur = m.message_duration(d.bytes, elem);
        l.pop();
        wake(m, m.nodes[id ^ (1 << k)], wake_event::take, &s);
        if (m.polls) m.world->took(id, k);
        charge_receive(m, s, arrival, dur);
        if (m.cfg.trace) record_receipt(s, id ^ (1 << k), k);
    }

    [[gnu::always_inline]] void recv_exact(int k, void* data, std::size_t bytes, std::size_t elem,
                                           std::uint32_t type) {
        await_message(k, bytes, true);
        take(k, elem, [&](const descriptor& d) {
            check_sizes(k, d, bytes, elem, type, true);
            return data;
        });
    }

    void recv_sink(int k, const byte_sink& in) {
        await_message(k, 0, false);
        take(k, in.elem, [&](const descriptor& d) {
            check_sizes(k, d, 0, in.elem, in.type, false);
            return in.alloc(in.ctx, d.bytes);
        });
    }

    bool borrow(std::size_t bytes) const noexcept { return bytes > m.cfg.eager_limit; }
};

// Calls f(access<L>) for the machine's link type L: one well-predicted branch
// per primitive, and the primitive itself compiled for L, so pushes and pops
// are direct calls (links/link.hpp).
template <class F>
decltype(auto) with_access(machine_state& m, node_state& s, int id, F&& f) {
    return m.with_links([&]<class L>(std::type_identity<L>) { return f(access<L>{m, s, id}); });
}

// One exchange on link k: post `out` (borrowed when large), receive with
// `receive`, then wait until a borrowed or synchronous `out` was taken.
template <class Access, class Receive>
void exchange_on(Access a, int k, const void* out, std::size_t bytes, std::size_t elem,
                 std::uint32_t type, Receive receive) {
    a.check_dim(k, "exchange");
    a.out(k).prefetch_producer();
    a.in(k).prefetch_consumer();
    __builtin_prefetch(&a.m.nodes[a.id ^ (1 << k)], 1);
    const bool borrowed = a.borrow(bytes);
    auto pending = a.template deliveries<1>();
    const std::uint64_t seq = a.post(k, out, bytes, elem, type, borrowed);
    if (borrowed || a.synchronous()) pending.add(k, seq, borrowed);
    receive(a);
    pending.wait_all();
}

// exchange_all on the links of a's type (Transfer: node::raw_transfer).
template <class Access, class Transfer>
void exchange_all_on(Access a, const Transfer* ops, std::size_t n) {
    if (const port_policy& ports = port_policy_of(a.m.cfg.ports); !ports.several_links_at_once())
        fail(a.id, "exchange_all needs the all-port model (config.ports = all_port); this "
                   "machine is " +
                       std::string(ports.name) + ", where a node sends on one link at a time");
    unsigned seen = 0;
    for (std::size_t i = 0; i < n; ++i) {
        a.check_dim(ops[i].dim, "exchange_all");
        if (seen & (1u << ops[i].dim))
            fail(a.id, "exchange_all lists dimension " + std::to_string(ops[i].dim) +
                           " twice; each link can take part once");
        seen |= 1u << ops[i].dim;
    }

    // Every send is posted before any receive or delivery wait, one-sided ones
    // too: on unbuffered links a cycle of one-sided links then still moves.
    auto pending = a.template deliveries<max_dim>();
    unsigned waiting = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (ops[i].way != transfer_way::send_only) waiting |= 1u << ops[i].dim;
        if (ops[i].way == transfer_way::recv_only) continue;
        const bool borrowed = a.borrow(ops[i].out.bytes);
        const std::uint64_t seq = a.post(ops[i].dim, ops[i].out.data, ops[i].out.bytes,
                                         ops[i].out.elem, ops[i].out.type, borrowed);
        if (borrowed || a.synchronous()) pending.add(ops[i].dim, seq, borrowed);
    }
    // Receive in whatever order the messages come; virtual time is a max, so
    // the order does not change it.
    while (waiting) {
        unsigned ready = 0;
        for (unsigned w = waiting; w; w &= w - 1) {
            const int k = std::countr_zero(w);
            if (!a.in(k).empty()) ready |= 1u << k;
        }
        if (!ready) {
            const int k = std::countr_zero(waiting);
            wait_until(a.m, a.s,
                       [&] {
                           for (unsigned w = waiting; w; w &= w - 1)
                               if (!a.in(std::countr_zero(w)).empty()) return true;
                           return false;
                       },
                       {wait_info::recv, k, a.id ^ (1 << k), 0, false});
            continue;
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (!(ready & (1u << ops[i].dim))) continue;
            a.recv_exact(ops[i].dim, ops[i].in.data, ops[i].in.bytes, ops[i].in.elem,
                         ops[i].in.type);
            waiting &= ~(1u << ops[i].dim);
        }
    }
    pending.wait_all();
}

// recv_any on the links of a's type: the message with the least virtual
// arrival, the lower link on a tie, once no empty link can still bring an
// earlier one (horizon.hpp).
template <class Access>
int recv_any_on(Access a, const byte_sink& in) {
    if (a.m.cfg.dim == 0) fail(a.id, "recv_any on a 0-cube: the node has no links");
    begin_choosing(a.m);
    int k = -1;
    const auto chosen = [&] {
        k = choose_link(a.m, a.s, a.id, [&](int j) {
            const auto& l = a.in(j);
            return l.empty() ? std::numeric_limits<double>::infinity() : l.front().arrival.time;
        });
        return k >= 0;
    };
    if (!chosen()) wait_until(a.m, a.s, chosen, {wait_info::recv_any, -1, -1, 0, false});
    a.recv_sink(k, in);
    return k;
}

} // namespace
} // namespace hcube::detail
