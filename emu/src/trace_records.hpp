// config::trace's records of a node's calls, messages and receipts, and
// config::on_call: what one primitive call leaves for the report and the
// pictures. Private to emu/src.
#pragma once

#include <hcube/node.hpp>

#include "state.hpp"

namespace hcube::detail {

// Out of line, as bad_dim (node_errors.hpp): the records a primitive builds
// stay out of its frame when tracing is off.
[[gnu::noinline]] void record_call(node_state& s, int id, call_kind kind, int dim, int peer);
[[gnu::noinline]] void record_return(node_state& s);
// A message sent (to: its destination; dim -1: routed), charged from start to
// arrival; a routed one's arrival is filled in when the router places it.
[[gnu::noinline]] void record_send(node_state& s, int from, int to, int dim, vclock start,
                                   double arrival, std::size_t bytes);
// A message taken from `from` (dim -1: routed) by the current call.
[[gnu::noinline]] void record_receipt(node_state& s, int from, int dim);

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

} // namespace hcube::detail
