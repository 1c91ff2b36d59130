// config::trace's records (trace_records.hpp).
#include "trace_records.hpp"

#include <chrono>

namespace hcube::detail {

namespace {

std::int64_t wall_ns() {
    return std::chrono::steady_clock::now().time_since_epoch().count();
}

} // namespace

void record_call(node_state& s, int id, call_kind kind, int dim, int peer) {
    s.calls.push_back({id, kind, dim, peer, s.clock.steps, s.clock.time, 0, wall_ns(), 0});
}
void record_return(node_state& s) {
    call_record& c = s.calls.back();
    c.end = s.clock.time;
    c.wall_end = wall_ns();
}
void record_send(node_state& s, int from, int to, int dim, vclock start, double arrival,
                 std::size_t bytes) {
    s.trace.push_back(
        {from, to, dim, start.steps, start.time, arrival, bytes, std::int64_t(s.calls.size()) - 1});
}
void record_receipt(node_state& s, int from, int dim) {
    s.receipts.push_back({from, dim, std::int64_t(s.calls.size()) - 1});
}

} // namespace hcube::detail
