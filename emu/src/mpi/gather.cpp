// After a run: the whole machine's report and trace on every rank
// (gather.hpp).
#include "gather.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace hcube::detail::mpi {

namespace {

// A node's trace records travel as a count and the records' bytes (they are
// trivially copyable).
template <class T, class A>
void pack(std::vector<std::byte>& to, const std::vector<T, A>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto n = std::uint64_t(v.size());
    const std::size_t at = to.size();
    to.resize(at + sizeof n + n * sizeof(T));
    std::memcpy(to.data() + at, &n, sizeof n);
    if (n) std::memcpy(to.data() + at + sizeof n, v.data(), n * sizeof(T));
}

template <class T, class A>
void unpack(const std::byte*& from, std::vector<T, A>& v) {
    std::uint64_t n = 0;
    std::memcpy(&n, from, sizeof n);
    v.resize(n);
    if (n) std::memcpy(v.data(), from + sizeof n, n * sizeof(T));
    from += sizeof n + n * sizeof(T);
}

// Every rank's bytes, each rank's after the one before.
std::vector<std::byte> gather_bytes(comm& c, const std::vector<std::byte>& mine,
                                    const char* stage) {
    std::vector<int> sizes(static_cast<std::size_t>(c.ranks())), at(sizes.size());
    const int size = int(mine.size());
    c.allgather(&size, sizes.data(), sizeof size, stage);
    for (std::size_t r = 1; r < sizes.size(); ++r)
        at[r] = at[r - 1] + sizes[r - 1];
    std::vector<std::byte> all(std::size_t(at.back() + sizes.back()));
    c.allgatherv(mine.data(), size, all.data(), sizes.data(), at.data(), stage);
    return all;
}

// A failure or a wait travels as its numbers and its text.
struct failure_wire {
    std::int32_t node, dim, peer;
    std::int32_t kind; // a blocked_wait, or a node_failure with its exception's kind
    std::uint64_t length;
};
enum : std::int32_t { wait_kind, error_kind, usage_kind };

// A usage_error stays one on every rank (hcube run tells them apart).
std::int32_t kind_of(const node_failure& f) {
    try {
        std::rethrow_exception(f.original);
    } catch (const usage_error&) {
        return usage_kind;
    } catch (...) {
        return error_kind;
    }
}

std::exception_ptr remote_exception(std::int32_t kind, const std::string& what) {
    if (kind == usage_kind) return std::make_exception_ptr(usage_error(what));
    return std::make_exception_ptr(error(what));
}

void put(std::vector<std::byte>& to, const failure_wire& f, const std::string& what) {
    const std::size_t at = to.size();
    to.resize(at + sizeof f + what.size());
    std::memcpy(to.data() + at, &f, sizeof f);
    std::memcpy(to.data() + at + sizeof f, what.data(), what.size());
}

} // namespace

std::uint64_t combine_report(comm& c, run_report& r, const rank_counts& here) {
    const char* stage = "combining the run's report";
    c.allreduce(r.node_time.data(), int(r.node_time.size()), MPI_DOUBLE, MPI_MAX, stage);
    c.allreduce(r.node_steps.data(), int(r.node_steps.size()), MPI_INT64_T, MPI_MAX, stage);
    // Other ranks' nodes' digests are 0 here.
    c.allreduce(r.node_digest.data(), int(r.node_digest.size()), MPI_UINT64_T, MPI_MAX, stage);
    std::vector<std::uint64_t> counts;
    counts.reserve(2 * r.links.size() + 5);
    for (const link_stats& l : r.links) {
        counts.push_back(l.messages);
        counts.push_back(l.bytes);
    }
    // Rank 0's router counted every routed message.
    counts.insert(counts.end(), {here.routed_shipped, here.routed_received, here.undelivered,
                                 here.to_router, r.routed_messages});
    c.allreduce(counts.data(), int(counts.size()), MPI_UINT64_T, MPI_SUM, stage);
    for (std::size_t i = 0; i < r.links.size(); ++i)
        r.links[i] = {counts[2 * i], counts[2 * i + 1]};
    const std::uint64_t* const sums = counts.data() + 2 * r.links.size();
    const rank_counts all{sums[0], sums[1], sums[2], sums[3]};
    r.messages_to_router = all.to_router;
    r.routed_messages = sums[4];
    auto events = std::uint64_t(r.congestion.size());
    c.bcast(&events, 1, MPI_UINT64_T, stage);
    r.congestion.resize(events);
    c.bcast(r.congestion.data(), int(events * sizeof(congestion_event)), MPI_BYTE, stage);
    const double wall = r.wall_seconds;
    r.rank_wall_seconds.resize(std::size_t(c.ranks()));
    c.allgather(&wall, r.rank_wall_seconds.data(), sizeof wall, stage);
    r.wall_seconds = *std::max_element(r.rank_wall_seconds.begin(), r.rank_wall_seconds.end());
    r.oversubscribed = c.oversubscribed();
    // Routed messages shipped to another rank and never received there:
    // undelivered too.
    return all.undelivered + all.routed_shipped - all.routed_received;
}

void gather_traces(comm& c, machine_state& m, std::int64_t origin) {
    std::vector<std::byte> mine;
    for (int i = m.local_begin; i < m.local_end; ++i) {
        node_state& s = m.nodes[i];
        for (call_record& call : s.calls) {
            call.wall_start -= origin;
            call.wall_end -= origin;
        }
        pack(mine, s.calls);
        pack(mine, s.trace);
        pack(mine, s.receipts);
    }
    const char* stage = "gathering the trace";
    const std::vector<std::byte> all = gather_bytes(c, mine, stage);
    const std::byte* from = all.data();
    for (int i = 0; i < m.p; ++i) {
        node_state& s = m.nodes[i];
        unpack(from, s.calls);
        unpack(from, s.trace);
        unpack(from, s.receipts);
        for (call_record& call : s.calls) {
            call.wall_start += origin;
            call.wall_end += origin;
        }
    }
    // Rank 0's router knows when every routed message arrived.
    std::vector<router::trace_fix> fixes = m.routes.trace_fixes();
    auto count = std::uint64_t(fixes.size());
    c.bcast(&count, 1, MPI_UINT64_T, stage);
    fixes.resize(count);
    c.bcast(fixes.data(), int(count * sizeof(router::trace_fix)), MPI_BYTE, stage);
    for (const auto& fix : fixes)
        m.nodes[fix.node].trace[fix.index].arrival = fix.arrival;
}

void gather_failures(comm& c, std::vector<node_failure>& failures,
                     std::vector<blocked_wait>& waits) {
    std::vector<std::byte> mine;
    for (const node_failure& f : failures)
        put(mine, {f.node, -1, -1, f.original ? kind_of(f) : error_kind, f.what.size()}, f.what);
    for (const blocked_wait& w : waits)
        put(mine, {w.node, w.dim, w.peer, wait_kind, w.what.size()}, w.what);
    const std::vector<std::byte> all = gather_bytes(c, mine, "gathering the run's failures");
    std::vector<node_failure> local = std::move(failures);
    failures.clear();
    waits.clear();
    for (const std::byte* from = all.data(); from < all.data() + all.size();) {
        failure_wire f;
        std::memcpy(&f, from, sizeof f);
        std::string what(reinterpret_cast<const char*>(from + sizeof f), f.length);
        from += sizeof f + f.length;
        if (f.kind == wait_kind) {
            waits.push_back({f.node, std::move(what), f.dim, f.peer});
            continue;
        }
        // This rank's own keep their exceptions.
        const auto own = std::find_if(local.begin(), local.end(),
                                      [&](const node_failure& l) { return l.node == f.node; });
        failures.push_back(own != local.end()
                               ? std::move(*own)
                               : node_failure{f.node, what, remote_exception(f.kind, what)});
    }
    // Ranks hold consecutive nodes: rank order is node order.
}

} // namespace hcube::detail::mpi
