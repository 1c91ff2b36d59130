// The routed primitives and the router's client: what a node does to send
// and take E-cube routed messages, tell the router its bounds and its finish,
// and lend large payloads (router.hpp has the router itself).
#include <hcube/error.hpp>
#include <hcube/node.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "charge.hpp"
#include "digest.hpp"
#include "horizon.hpp"
#include "node_errors.hpp"
#include "park.hpp"
#include "routed.hpp"
#include "state.hpp"
#include "trace_records.hpp"

namespace hcube {

using namespace detail;

namespace {

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

std::map<int, link_backlog> detail::routed_backlog(node_state& s) {
    std::map<int, link_backlog> by_source;
    std::lock_guard lock(s.routed_mu);
    s.routed_in.for_each([&](const routed_message& msg) {
        link_backlog& b = by_source[msg.source];
        b.messages += 1;
        b.bytes += msg.bytes;
    });
    return by_source;
}

void detail::publish_routed_bound(machine_state& m, node_state& s, const routed_message* awaited) {
    vclock bound = next_send_bound(s);
    if (awaited) bound = max(bound, awaited->wanted + awaited->duration);
    if (!tell_router(s, bound, s.routed_seq)) return;
    m.world->publish_routed(int(&s - m.nodes.data()), s.routed_seq, bound);
}

namespace {

// The sender's half: the message wants to start at max(clock, port) and holds
// the port for t_s + t_w m from then, whatever congestion later does to its
// arrival (the router buffers it where it waits), so the sender never waits
// for the router. The payload is copied into the message, or with `lend` the
// message points at it (routed_loan). A message to a node of another process always
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

    // A message to a node of another process is shipped from here.
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
    m.world->submit_routed(*msg, bound);
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
    wake(m, m.nodes[lender]);
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
        // Counted before choosing: a message placed after that (by this
        // node's own publish, too) must end the wait, or it parks for good
        // with no candidate for last_parked to force.
        const auto seen = inbox_census(s);
        if (const int source = choose_source(m, s, id); source >= 0) return source;
        if (routed_in_use(m)) publish_routed_bound(m, s, nullptr);
        wait_until(m, s, [&] { return s.pending_choice.told() || inbox_census(s) != seen; },
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
        if (m.cfg.digest)
            s.digest += message_digest(~source, msg.arrival, msg.payload(), msg.bytes);
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
