// The end of a run (settle.hpp).
#include "settle.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <tuple>

#include "huge_pages.hpp"
#include "routed.hpp"

namespace hcube::detail {

std::vector<undelivered> drain(machine_state& m) {
    std::vector<undelivered> left;
    const int d = m.cfg.dim;
    for (int i = 0; i < m.p; ++i) {
        m.with_links([&]<class L>(std::type_identity<L>) {
            for (int k = 0; k < d; ++k) {
                if (!m.links.has(std::size_t(i) * d + k)) continue; // another rank's
                L& l = m.out_link<L>(i, k);
                // The counts, not empty(), which would read the slot after the
                // last message: slots no message used stay untouched.
                undelivered u{i, i ^ (1 << k), k};
                while (l.consumed() < l.pushed()) {
                    const descriptor& desc = l.front();
                    u.messages += 1;
                    u.bytes += desc.bytes;
                    if (desc.kind == payload::heap) payload_free(const_cast<void*>(desc.ptr));
                    l.pop();
                }
                l.rewind();
                if (u.messages) left.push_back(u);
            }
        });
        for (const auto& [source, b] : routed_backlog(m.nodes[i]))
            left.push_back({source, i, -1, b.messages, b.bytes});
        m.nodes[i].routed_in.clear();
    }
    return left;
}

std::string undelivered_message(const std::vector<undelivered>& left) {
    std::ostringstream os;
    std::uint64_t total = 0;
    for (const auto& u : left)
        total += u.messages;
    os << "run ended with " << total << " undelivered message" << (total == 1 ? "" : "s")
       << " (every message sent must be received):";
    std::size_t shown = 0;
    for (const auto& u : left) {
        if (++shown > 16) {
            os << "\n  ... and " << left.size() - 16 << " more link"
               << (left.size() == 17 ? "" : "s");
            break;
        }
        os << "\n  node " << u.from << " -> node " << u.to
           << (u.dim < 0 ? std::string(" (routed)") : " on dim " + std::to_string(u.dim)) << ": "
           << u.messages << " message" << (u.messages == 1 ? "" : "s") << ", " << u.bytes
           << " bytes";
    }
    return os.str();
}

std::vector<node_failure> failures_of(machine_state& m) {
    std::vector<node_failure> failures;
    for (int i = m.local_begin; i < m.local_end; ++i) {
        const std::exception_ptr& original = m.nodes[i].error;
        if (!original) continue;
        std::string what = "unknown exception";
        try {
            std::rethrow_exception(original);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        failures.push_back({i, what, original});
    }
    return failures;
}

namespace {

// n value-initialized elements; a large block on transparent huge pages (at
// d = 20 the links' statistics alone take 336 MB).
template <class T>
void resize_on_huge_pages(std::vector<T>& v, std::size_t n) {
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
    v.resize(n);
}

} // namespace

run_report local_report(const machine_state& m, double wall_seconds) {
    run_report r;
    r.dim = m.cfg.dim;
    r.ports = m.cfg.ports;
    r.cost = m.cfg.cost;
    r.executor = m.cfg.executor;
    r.link_implementation = m.cfg.links;
    r.backend = m.cfg.backend;
    r.ranks = m.world->ranks();
    r.wall_seconds = wall_seconds;
    r.rank_wall_seconds = {r.wall_seconds};
    resize_on_huge_pages(r.node_time, std::size_t(m.p));
    resize_on_huge_pages(r.node_steps, std::size_t(m.p));
    if (m.cfg.digest) resize_on_huge_pages(r.node_digest, std::size_t(m.p));
    resize_on_huge_pages(r.links, std::size_t(m.p) * m.cfg.dim);
    for (int i = m.local_begin; i < m.local_end; ++i) {
        const node_state& s = m.nodes[i];
        vclock end = s.clock;
        for (const vclock& port : s.send_port)
            end = max(end, port);
        r.node_time[i] = end.time;
        r.node_steps[i] = end.steps;
        if (m.cfg.digest) r.node_digest[i] = s.digest;
        for (int k = 0; k < m.cfg.dim; ++k)
            r.links[std::size_t(i) * m.cfg.dim + k] = s.ends[k].sent;
    }
    // The router's share (where the router is not in this process, none).
    const std::vector<link_stats>& routed = m.routes.traffic();
    for (std::size_t l = 0; l < routed.size(); ++l) {
        r.links[l].messages += routed[l].messages;
        r.links[l].bytes += routed[l].bytes;
    }
    r.routed_messages = m.routes.messages();
    r.congestion = m.routes.congestion();
    return r;
}

void add_totals(run_report& r) {
    for (std::size_t i = 0; i < r.node_time.size(); ++i) {
        r.virtual_time = std::max(r.virtual_time, r.node_time[i]);
        r.steps = std::max(r.steps, r.node_steps[i]);
    }
    for (const link_stats& l : r.links) {
        r.messages += l.messages;
        r.bytes += l.bytes;
    }
}

// The n-th message taken from a link (or, routed, from one source) is the
// n-th sent on it.
void collect_trace(const machine_state& m, run_report& r,
                   std::chrono::steady_clock::time_point t0) {
    const std::int64_t origin = t0.time_since_epoch().count();
    std::vector<std::int64_t> first_call(std::size_t(m.p));
    std::map<std::tuple<int, int, int>, std::deque<std::size_t>> sent; // (from, to, dim)
    for (int i = 0; i < m.p; ++i) {
        const node_state& s = m.nodes[i];
        first_call[std::size_t(i)] = std::int64_t(r.calls.size());
        for (call_record c : s.calls) {
            c.wall_start -= origin;
            c.wall_end -= origin;
            r.calls.push_back(c);
        }
        for (trace_record t : s.trace) {
            t.send_call += first_call[std::size_t(i)];
            sent[{t.from, t.to, t.dim}].push_back(r.trace.size());
            r.trace.push_back(t);
        }
    }
    for (int i = 0; i < m.p; ++i)
        for (const auto& got : m.nodes[i].receipts) {
            auto& queue = sent[{got.from, i, got.dim}];
            r.trace[queue.front()].recv_call = first_call[std::size_t(i)] + got.call;
            queue.pop_front();
        }
}

} // namespace hcube::detail
