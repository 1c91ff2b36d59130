// The node interface's link primitives and accessors: each call records
// itself (trace_records.hpp) and runs the pieces of link_ops.hpp compiled for
// the machine's link type. The routed primitives are in routed.cpp.
#include <hcube/error.hpp>
#include <hcube/node.hpp>

#include <limits>
#include <string>

#include "link_ops.hpp"
#include "node_errors.hpp"
#include "state.hpp"
#include "trace_records.hpp"

namespace hcube {

using namespace detail;

namespace {

// The neighbour across dimension k, or -1 for a k the call will refuse.
int across_of(int id, int dim, int k) {
    return k >= 0 && k < dim ? id ^ (1 << k) : -1;
}

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

} // namespace hcube
