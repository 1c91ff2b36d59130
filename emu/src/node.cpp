// Node primitives: links, waiting, virtual time, the E-cube router.
//
// Virtual time (DESIGN.md, docs/runtime.md): a send occupies its port from
// max(clock, port_free) for t_s + t_w m and the message carries its arrival
// time; a receive occupies the receive port for the same duration, ending no
// earlier than the arrival, and sets clock = max(clock, end). Single-port has
// one send and one receive port per node, all-port one of each per link.
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>

#include "digest.hpp"
#include "horizon.hpp"
#include "park.hpp"
#include "state.hpp"

namespace hcube {

using namespace detail;

namespace {

std::string node_prefix(int id) {
    return "node " + std::to_string(id) + ": ";
}

[[noreturn]] void fail(int id, const std::string& what) {
    throw usage_error(node_prefix(id) + what);
}

// The failures of a primitive's fast path, out of line: a message built in
// the primitive's own frame spread that frame (and the stack lines a parked
// fiber keeps) over more cache lines.
[[noreturn, gnu::cold, gnu::noinline]] void bad_dim(int id, int dim, int k, const char* op) {
    fail(id, std::string(op) + " on dimension " + std::to_string(k) + ", outside 0.." +
                 std::to_string(dim - 1) + " of a " + std::to_string(dim) + "-cube");
}
[[noreturn, gnu::cold, gnu::noinline]] void too_large(int id, std::size_t bytes) {
    fail(id, "message of " + std::to_string(bytes) + " bytes exceeds the 4 GiB limit");
}
[[noreturn, gnu::cold, gnu::noinline]] void out_of_memory(int id, std::size_t bytes) {
    fail(id, "out of memory for a message of " + std::to_string(bytes) + " bytes");
}

std::string elements(std::size_t bytes, std::size_t elem) {
    return std::to_string(elem ? bytes / elem : 0) + " elements of " + std::to_string(elem) +
           " bytes";
}

std::string type_mismatch(std::uint32_t sent, std::uint32_t received) {
    return "message was sent as " + wire_type_name(sent) + ", received as " +
           wire_type_name(received);
}

// The machine's router is in this process (over MPI: on rank 0; remote.hpp).
bool router_here(const machine_state& m) {
    return !m.net || m.net->rank() == 0;
}

// Records that the router will hold at least (bound, seq) for this node; false
// if it already does on both clocks, so the publish would change nothing.
bool tell_router(node_state& s, vclock bound, std::uint64_t seq) {
    if (seq == s.routed_told_seq && bound.time <= s.routed_told.time &&
        bound.steps <= s.routed_told.steps)
        return false;
    s.routed_told = bound;
    s.routed_told_seq = seq;
    return true;
}

} // namespace

void detail::publish_routed_bound(machine_state& m, node_state& s, const routed_message* awaited) {
    vclock bound = next_send_bound(s);
    if (awaited) bound = max(bound, awaited->wanted + awaited->duration);
    if (!tell_router(s, bound, s.routed_seq)) return;
    const int id = int(&s - m.nodes.get());
    if (!router_here(m)) return m.net->publish_routed(id, s.routed_seq, bound);
    thread_local std::vector<int> woken;
    m.routes.publish(id, s.routed_seq, bound, woken);
    m.wake_each(woken);
}

void detail::route_finish(machine_state& m, int id) {
    // Pairs with the fence in the start of routed traffic (begin_routing here,
    // the backend's over MPI): a node that finishes then is told to the router
    // by it, by this, or by both (finishing twice changes nothing). Until
    // then a run pays no router lock per node.
    if (!router_here(m) || !m.net) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (!routed_in_use(m)) return;
        if (m.net) return m.net->finish_routed(id);
    }
    thread_local std::vector<int> woken;
    m.routes.finish(id, woken);
    m.wake_each(woken);
}

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

// The neighbour across dimension k, or -1 for a k the call will refuse.
int across_of(int id, int dim, int k) {
    return k >= 0 && k < dim ? id ^ (1 << k) : -1;
}

std::int64_t wall_ns() {
    return std::chrono::steady_clock::now().time_since_epoch().count();
}

// config::trace's records, out of line for the same reason as bad_dim: the
// records a primitive builds stay out of its frame when tracing is off.
[[gnu::noinline]] void record_call(node_state& s, int id, call_kind kind, int dim, int peer) {
    s.calls.push_back({id, kind, dim, peer, s.clock.steps, s.clock.time, 0, wall_ns(), 0});
}
[[gnu::noinline]] void record_return(node_state& s) {
    call_record& c = s.calls.back();
    c.end = s.clock.time;
    c.wall_end = wall_ns();
}
// A message sent (to: its destination; dim -1: routed), charged from start to
// arrival; a routed one's arrival is filled in when the router places it.
[[gnu::noinline]] void record_send(node_state& s, int from, int to, int dim, vclock start,
                                   double arrival, std::size_t bytes) {
    s.trace.push_back(
        {from, to, dim, start.steps, start.time, arrival, bytes, std::int64_t(s.calls.size()) - 1});
}
// A message taken from `from` (dim -1: routed) by the current call.
[[gnu::noinline]] void record_receipt(node_state& s, int from, int dim) {
    s.receipts.push_back({from, dim, std::int64_t(s.calls.size()) - 1});
}

// One primitive call: config::on_call sees the node first; with config::trace
// the call is recorded (call_record) from entry to return.
class call_scope {
public:
    call_scope(node& me, machine_state& m, node_state& s, call_kind kind, int dim, int peer)
        : s_(s)
        , on_(m.cfg.trace) {
        if (m.cfg.on_call) m.cfg.on_call(me);
        if (on_) record_call(s, me.id(), kind, dim, peer);
    }
    call_scope(const call_scope&) = delete;
    call_scope& operator=(const call_scope&) = delete;
    ~call_scope() {
        if (on_) record_return(s_);
    }

private:
    node_state& s_;
    bool on_;
};

} // namespace

void node::bad_neighbor(int k) const {
    fail(id_, "neighbor(" + std::to_string(k) + "): dimension outside 0.." +
                  std::to_string(dim_ - 1) + " of a " + std::to_string(dim_) + "-cube");
}

const config& node::cfg() const noexcept {
    return m_->cfg;
}
double node::clock() const noexcept {
    return s_->clock.time;
}
std::int64_t node::steps() const noexcept {
    return s_->clock.steps;
}

void node::compute(double time) {
    if (!(time >= 0) || time == std::numeric_limits<double>::infinity())
        fail(id_, "compute(" + std::to_string(time) + "): time must be finite and >= 0");
    s_->clock.time += time;
}

void node::too_many_transfers(std::size_t n) const {
    fail(id_, "exchange_all with " + std::to_string(n) + " transfers; a " + std::to_string(dim_) +
                  "-cube node has " + std::to_string(dim_) + " links");
}

namespace {

// Charges the receive of a message that arrived at `arrival`. One receive
// port (single-port): it takes messages one at a time, in program order.
// A port per link (all-port): the link's messages were already serialized
// where they entered it (sender's port, or router reservation).
// Forced inline, as are post and take: compiled once per link type, GCC kept
// them out of line and a receive cost ~15% more than when access was one type.
[[gnu::always_inline]] inline void charge_receive(const machine_state& m, node_state& s,
                                                  vclock arrival, vclock dur) {
    if (port_policy_of(m.cfg.ports).port_per_link) {
        s.clock = max(s.clock, arrival);
        return;
    }
    const vclock end = max(arrival - dur, s.recv_port) + dur;
    s.recv_port = end;
    s.clock = max(s.clock, end);
}

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
        m.wake(m.nodes[peer], wake_event::arrival);
        if (m.net) m.net->progress(); // ship it now if it leaves this rank

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
        const bool borrowed = d.kind == payload::borrowed;
        if (borrowed) {
            l.reading().store(true, std::memory_order_seq_cst);
            if (m.cancelled.load(std::memory_order_seq_cst)) {
                l.reading().store(false, std::memory_order_release);
                throw run_cancelled{};
            }
        }
        if (d.kind == payload::inline_bytes)
            d.load_inline(dst);
        else
            std::memcpy(dst, d.ptr, d.bytes);
        if (borrowed) l.reading().store(false, std::memory_order_release);
        if (m.cfg.digest) s.digest = fold_message(s.digest, k, dst, d.bytes);
        if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
        const vclock arrival = d.arrival;
        const vclock dur = m.message_duration(d.bytes, elem);
        l.pop();
        m.wake(m.nodes[id ^ (1 << k)], wake_event::take);
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

} // namespace

void node::send_bytes(int k, bytes_view out) {
    call_scope scope(*this, *m_, *s_, call_kind::send, k, across_of(id_, dim_, k));
    with_access(*m_, *s_, id_, [&](auto a) { a.send(k, out.data, out.bytes, out.elem, out.type); });
}

void node::recv_bytes(int k, bytes_span in) {
    call_scope scope(*this, *m_, *s_, call_kind::recv, k, across_of(id_, dim_, k));
    with_access(*m_, *s_, id_, [&](auto a) {
        a.check_dim(k, "recv");
        a.recv_exact(k, in.data, in.bytes, in.elem, in.type);
    });
}

void node::recv_any_size(int k, sink in) {
    call_scope scope(*this, *m_, *s_, call_kind::recv, k, across_of(id_, dim_, k));
    with_access(*m_, *s_, id_, [&](auto a) {
        a.check_dim(k, "recv");
        a.recv_sink(k, {in.ctx, in.alloc, in.elem, in.type});
    });
}

namespace {

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

} // namespace

void node::exchange_bytes(int k, bytes_view out, bytes_span in) {
    call_scope scope(*this, *m_, *s_, call_kind::exchange, k, across_of(id_, dim_, k));
    with_access(*m_, *s_, id_, [&](auto a) {
        exchange_on(a, k, out.data, out.bytes, out.elem, out.type,
                    [&](auto& a) { a.recv_exact(k, in.data, in.bytes, in.elem, in.type); });
    });
}

void node::exchange_any_size(int k, bytes_view out, sink in) {
    call_scope scope(*this, *m_, *s_, call_kind::exchange, k, across_of(id_, dim_, k));
    with_access(*m_, *s_, id_, [&](auto a) {
        exchange_on(a, k, out.data, out.bytes, out.elem, out.type, [&](auto& a) {
            a.recv_sink(k, {in.ctx, in.alloc, in.elem, in.type});
        });
    });
}

namespace {

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

void node::exchange_all_bytes(const raw_transfer* ops, std::size_t n) {
    call_scope scope(*this, *m_, *s_, call_kind::exchange_all, -1, -1);
    with_access(*m_, *s_, id_, [&](auto a) { exchange_all_on(a, ops, n); });
}

int node::recv_any_link(sink in) {
    call_scope scope(*this, *m_, *s_, call_kind::recv_any, -1, -1);
    return with_access(*m_, *s_, id_, [&](auto a) {
        return recv_any_on(a, {in.ctx, in.alloc, in.elem, in.type});
    });
}

// ---- the E-cube router (router.hpp) ------------------------------------------

namespace {

// The sender's half: the message wants to start at max(clock, port) and holds
// the port for t_s + t_w m from then, whatever congestion later does to its
// arrival (the router buffers it where it waits), so the sender never waits
// for the router. The payload is copied into the message, or with `lend` the
// message points at it (routed_loan). A message to another rank (MPI) always
// points at it: the backend copies it out before this returns. Returns the
// message's seq.
std::uint64_t post_routed(machine_state& m, node_state& s, int id, const char* op, int dest,
                          const void* data, std::size_t bytes, std::size_t elem, std::uint32_t type,
                          bool lend) {
    const int p = 1 << m.cfg.dim;
    if (dest < 0 || dest >= p)
        fail(id, std::string(op) + " to node " + std::to_string(dest) + ", outside 0.." +
                     std::to_string(p - 1));
    if (dest == id) fail(id, std::string(op) + " to itself; routed messages go to other nodes");

    const vclock dur = m.message_duration(bytes, elem);
    vclock& port = s.send_port[m.port_index(std::countr_zero(unsigned(id ^ dest)))];
    const vclock start = max(s.clock, port);
    port = start + dur;

    // Over MPI a message to another rank's node is shipped from here.
    const bool local_dest = m.is_local(dest);
    const auto* payload = static_cast<const unsigned char*>(data);
    std::vector<unsigned char> copy;
    if (local_dest && !lend) copy.assign(payload, payload + bytes); // no zero-fill first
    if (local_dest && lend) m.loans_out.fetch_add(1, std::memory_order_relaxed);
    if (m.cfg.trace) record_send(s, id, dest, -1, start, start.time, bytes);
    node_state& d = m.nodes[dest];
    routed_message shipped;
    routed_message* msg = &shipped;
    {
        std::unique_lock lock(d.routed_mu, std::defer_lock);
        if (local_dest) {
            lock.lock();
            msg = &d.routed_in.push(id);
        }
        msg->source = id;
        msg->dest = dest;
        msg->seq = s.routed_seq++;
        msg->wanted = start;
        msg->duration = dur;
        msg->trace = s.trace.size() - 1;
        msg->elem = elem;
        msg->type = type;
        if (local_dest && !lend)
            msg->data = std::move(copy);
        else
            msg->lent = payload;
        msg->bytes = bytes;
    }
    const std::uint64_t seq = s.routed_seq - 1;
    const vclock bound = next_send_bound(s);
    tell_router(s, bound, s.routed_seq);
    if (m.net) {
        m.net->submit_routed(*msg, bound);
        if (local_dest) m.wake(d);
        m.net->progress();
        return seq;
    }
    thread_local std::vector<int> woken;
    if (m.routes.begin()) {
        // Nodes that finished before this send's traffic began (route_finish).
        std::atomic_thread_fence(std::memory_order_seq_cst);
        for (int i = 0; i < m.p; ++i)
            if (m.nodes[i].done.load(std::memory_order_relaxed)) m.routes.finish(i, woken);
    }
    m.routes.submit(*msg, bound, woken);
    // The destination sees the message now, placed or not (if not, it tells
    // the router it waits for it).
    if (std::find(woken.begin(), woken.end(), dest) == woken.end()) woken.push_back(dest);
    m.wake_each(woken);
    return seq;
}

// Copies a lent payload into its message (under the destination's inbox lock).
void buffer_lent(routed_message& msg) {
    msg.data.assign(msg.lent, msg.lent + msg.bytes);
    msg.lent = nullptr;
}

// Node `lender` may reuse a payload it lent: its receiver copied it out, or
// someone copied it into the message.
void return_loan(machine_state& m, int lender) {
    m.loans_out.fetch_sub(1, std::memory_order_relaxed);
    m.nodes[lender].loans_returned.fetch_add(1, std::memory_order_release);
    m.wake(m.nodes[lender]);
}

// A payload that sendrecv_routed lent to its routed message instead of copying
// it: the receiver copies it straight into its own buffer and returns the loan
// (take_routed), so each byte is copied once, and wait() parks until then, like
// a rendezvous exchange. The lender's buffer must outlive the loan, so a lender
// that unwinds first copies the payload into the message. So does the last
// node to park when the whole machine would stall otherwise (release_loans):
// lenders then go on as if their messages had been buffered, and the program
// behaves, in virtual time and in what deadlocks, exactly as with send_routed.
class routed_loan {
public:
    routed_loan(machine_state& m, node_state& s, int id) noexcept
        : m_(m)
        , s_(s)
        , id_(id) {}
    routed_loan(const routed_loan&) = delete;
    routed_loan& operator=(const routed_loan&) = delete;

    void lent(int dest, std::uint64_t seq, std::size_t bytes) noexcept {
        ++s_.loans;
        dest_ = dest;
        seq_ = seq;
        bytes_ = bytes;
    }

    void wait() {
        if (dest_ < 0) return;
        wait_until(m_, s_,
                   [&] { return s_.loans_returned.load(std::memory_order_acquire) == s_.loans; },
                   {wait_info::routed_loan, -1, dest_, bytes_, false});
        dest_ = -1;
    }

    ~routed_loan() {
        if (dest_ < 0) return;
        node_state& d = m_.nodes[dest_];
        bool lent = false;
        {
            std::lock_guard lock(d.routed_mu);
            if (routed_message* msg = d.routed_in.find(id_, seq_); msg && msg->lent) {
                buffer_lent(*msg);
                lent = true;
            }
        }
        if (lent) return_loan(m_, id_);
    }

private:
    machine_state& m_;
    node_state& s_;
    int id_;
    int dest_ = -1;
    std::uint64_t seq_ = 0;
    std::size_t bytes_ = 0;
};

} // namespace

bool detail::release_loans(machine_state& m) {
    if (m.loans_out.load(std::memory_order_acquire) == 0) return false;
    std::vector<int> lenders;
    for (int i = m.local_begin; i < m.local_end; ++i) {
        node_state& d = m.nodes[i];
        std::lock_guard lock(d.routed_mu);
        d.routed_in.for_each([&](routed_message& msg) {
            if (!msg.lent) return;
            buffer_lent(msg);
            lenders.push_back(msg.source);
        });
    }
    for (const int lender : lenders)
        return_loan(m, lender);
    return !lenders.empty();
}

void node::send_routed_bytes(int dest, bytes_view out) {
    call_scope scope(*this, *m_, *s_, call_kind::send_routed, -1, dest);
    post_routed(*m_, *s_, id_, "send_routed", dest, out.data, out.bytes, out.elem, out.type, false);
}

namespace {

// Waits until the next routed message from `source` is placed. Before each
// wait the node tells the router it can send nothing before that message
// arrives, which is what lets the router place it (router.hpp).
void await_routed(machine_state& m, node_state& s, int source, std::size_t expect, bool exact) {
    const auto front = [&]() -> const routed_message* {
        std::lock_guard lock(s.routed_mu);
        return s.routed_in.front(source);
    };
    const wait_info info{wait_info::routed, -1, source, expect, exact};
    bool announced = false;
    const routed_message* awaited = nullptr;
    for (;;) {
        const routed_message* msg = front();
        if (msg && msg->ready.load(std::memory_order_acquire)) return;
        if (!announced || msg != awaited) {
            if (msg || routed_in_use(m)) publish_routed_bound(m, s, msg);
            announced = true;
            awaited = msg;
            continue;
        }
        wait_until(
            m, s,
            [&] {
                const routed_message* f = front();
                return f != awaited || (f && f->ready.load(std::memory_order_acquire));
            },
            info);
    }
}

// What a wait for any source can see change: messages that came, and those
// of them placed. Only the waiter takes messages out.
std::pair<std::size_t, std::size_t> inbox_census(node_state& s) {
    std::lock_guard lock(s.routed_mu);
    std::pair<std::size_t, std::size_t> census{s.routed_in.pushed(), 0};
    s.routed_in.for_each_head([&](const routed_message& msg) {
        census.second += msg.ready.load(std::memory_order_acquire);
    });
    return census;
}

// Waits until the horizon chooses a source to take from (horizon.hpp).
int await_any_source(machine_state& m, node_state& s, int id, std::size_t expect, bool exact) {
    begin_choosing(m);
    for (;;) {
        if (const int source = choose_source(m, s, id); source >= 0) return source;
        if (routed_in_use(m)) publish_routed_bound(m, s, nullptr);
        const auto seen = inbox_census(s);
        wait_until(
            m, s,
            [&] { return s.forced.load(std::memory_order_seq_cst) || inbox_census(s) != seen; },
            {wait_info::routed_any, -1, -1, expect, exact});
    }
}

// Waits for the next routed message from `source` (or, with any_source, the
// one the horizon chooses) and hands it to `consume` under the inbox lock;
// pops it only if consume returns. Returns its source.
template <class Consume>
int take_routed(machine_state& m, node_state& s, int id, int source, std::size_t expect, bool exact,
                Consume consume) {
    const int p = 1 << m.cfg.dim;
    if (source != any_source && (source < 0 || source >= p || source == id))
        fail(id, "recv_routed from node " + std::to_string(source) +
                     (source == id ? ", itself"
                                   : ", outside 0.." + std::to_string(p - 1) + " (or any_source)"));
    if (source == any_source)
        source = await_any_source(m, s, id, expect, exact);
    else
        await_routed(m, s, source, expect, exact);

    vclock arrival, dur;
    bool lent;
    {
        std::lock_guard lock(s.routed_mu);
        const routed_message& msg = *s.routed_in.front(source);
        consume(msg);
        if (m.cfg.digest) s.digest = fold_message(s.digest, source, msg.payload(), msg.bytes);
        arrival = msg.arrival;
        dur = msg.duration;
        lent = msg.lent;
        s.routed_in.pop(source);
    }
    if (lent) return_loan(m, source);
    charge_receive(m, s, arrival, dur);
    if (m.cfg.trace) record_receipt(s, source, -1);
    return source;
}

std::string routed_from(int source) {
    return "recv_routed from node " + std::to_string(source);
}

// A routed message's type, and with `exact` its size, as the receiver expects.
void check_routed(int id, int source, const routed_message& msg, std::size_t bytes,
                  std::size_t elem, std::uint32_t type, bool exact) {
    if (msg.type != type) fail(id, routed_from(source) + ": " + type_mismatch(msg.type, type));
    if (exact && msg.bytes != bytes)
        fail(id, routed_from(source) + ": expected " + elements(bytes, elem) + ", message has " +
                     elements(msg.bytes, elem));
}

} // namespace

void node::recv_routed_bytes(int source, bytes_span in) {
    call_scope scope(*this, *m_, *s_, call_kind::recv_routed, -1, source);
    take_routed(*m_, *s_, id_, source, in.bytes, true, [&](const routed_message& msg) {
        check_routed(id_, msg.source, msg, in.bytes, in.elem, in.type, true);
        if (in.bytes) std::memcpy(in.data, msg.payload(), in.bytes);
    });
}

int node::recv_routed_any_size(int source, sink in) {
    call_scope scope(*this, *m_, *s_, call_kind::recv_routed, -1, source);
    return take_routed(*m_, *s_, id_, source, 0, false, [&](const routed_message& msg) {
        check_routed(id_, msg.source, msg, 0, in.elem, in.type, false);
        void* dst = in.alloc(in.ctx, msg.bytes);
        if (msg.bytes) std::memcpy(dst, msg.payload(), msg.bytes);
    });
}

void node::sendrecv_routed_bytes(int dest, bytes_view out, int source, bytes_span in) {
    machine_state& m = *m_;
    routed_loan loan(m, *s_, id_);
    {
        call_scope scope(*this, m, *s_, call_kind::send_routed, -1, dest);
        // A receive into the payload itself would overwrite it before the
        // receiver copied it: buffered then.
        const auto o = reinterpret_cast<std::uintptr_t>(out.data),
                   i = reinterpret_cast<std::uintptr_t>(in.data);
        const bool overlap = o < i + in.bytes && i < o + out.bytes;
        const bool lend = out.bytes > m.cfg.eager_limit && m.is_local(dest) && !overlap;
        const std::uint64_t seq = post_routed(m, *s_, id_, "sendrecv_routed", dest, out.data,
                                              out.bytes, out.elem, out.type, lend);
        if (lend) loan.lent(dest, seq, out.bytes);
    }
    recv_routed_bytes(source, in);
    loan.wait();
}

} // namespace hcube
