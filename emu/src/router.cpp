// The E-cube router: conservative placement of routed messages in key order
// (router.hpp has the argument).
#include "router.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace hcube::detail {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

double on(const vclock& v, int which) noexcept {
    return which == 0 ? v.time : double(v.steps);
}

} // namespace

void router::reset(int p, int dim, bool trace) {
    std::lock_guard lock(mu_);
    p_ = p;
    dim_ = dim;
    trace_ = trace;
    for (domain& dm : dom_) {
        dm.queue = {};
        dm.bounds.assign(2 * std::size_t(p), key{0, 0, 0});
        for (int i = 0; i < p; ++i)
            dm.bounds[std::size_t(p + i)] = {0, i, 0};
        for (int i = p - 1; i >= 1; --i)
            dm.bounds[std::size_t(i)] =
                std::min(dm.bounds[2 * std::size_t(i)], dm.bounds[2 * std::size_t(i) + 1]);
        dm.busy.assign(std::size_t(p) * dim, {});
        dm.frontier = 0;
    }
    used_.store(false, std::memory_order_relaxed);
    messages_ = 0;
    traffic_.assign(std::size_t(p) * dim, link_stats{});
    congestion_.clear();
    fixes_.clear();
}

// Bounds only rise: a late publish of an older, lower bound changes nothing.
void router::raise(domain& dm, int id, key k) {
    std::size_t i = std::size_t(p_ + id);
    if (!(dm.bounds[i] < k)) return;
    dm.bounds[i] = k;
    for (i /= 2; i >= 1; i /= 2) {
        const key m = std::min(dm.bounds[2 * i], dm.bounds[2 * i + 1]);
        if (!(dm.bounds[i] < m) && !(m < dm.bounds[i])) break; // the minimum above is unchanged
        dm.bounds[i] = m;
    }
}

// Places every queued message that no node can still undercut.
void router::drain(std::vector<int>& woken) {
    for (int which = 0; which < 2; ++which) {
        domain& dm = dom_[which];
        while (!dm.queue.empty() && dm.queue.top().k < dm.bounds[1]) {
            routed_message& msg = *dm.queue.top().msg;
            dm.queue.pop();
            place(which, msg, woken);
        }
    }
}

// Cut-through: the earliest g >= w at which every link of the E-cube path is
// free for the whole duration; then reserve [g, g + duration) on each.
void router::place(int which, routed_message& msg, std::vector<int>& woken) {
    domain& dm = dom_[which];
    const double w = on(msg.wanted, which), dur = on(msg.duration, which);
    dm.frontier = std::max(dm.frontier, w);
    const unsigned path = unsigned(msg.source ^ msg.dest);
    const auto link_of = [&](int x, int k) { return std::size_t(x) * dim_ + k; };

    double g = w;
    int block_from = -1, block_dim = -1;
    if (dur > 0) {
        for (bool moved = true; moved;) {
            moved = false;
            int x = msg.source;
            for (unsigned rest = path; rest; rest &= rest - 1) {
                const int k = std::countr_zero(rest);
                auto& busy = dm.busy[link_of(x, k)];
                // Reservations that ended before the frontier can meet no
                // message placed from now on.
                const auto live = std::find_if(busy.begin(), busy.end(), [&](const interval& iv) {
                    return iv.end > dm.frontier;
                });
                busy.erase(busy.begin(), live);
                for (const interval& iv : busy) {
                    if (iv.begin >= g + dur) break;
                    if (iv.end > g) {
                        g = iv.end;
                        block_from = x, block_dim = k;
                        moved = true;
                    }
                }
                x ^= 1 << k;
            }
        }
        int x = msg.source;
        for (unsigned rest = path; rest; rest &= rest - 1) {
            const int k = std::countr_zero(rest);
            auto& busy = dm.busy[link_of(x, k)];
            const auto at = std::find_if(busy.begin(), busy.end(),
                                         [&](const interval& iv) { return iv.begin >= g; });
            busy.insert(at, {g, g + dur});
            x ^= 1 << k;
        }
    }

    if (which == 0) {
        msg.arrival.time = g + dur;
        if (g > w) congestion_.push_back({block_from, block_dim, msg.source, msg.dest, w, g});
        if (trace_) fixes_.push_back({msg.source, msg.trace, g + dur});
    } else {
        msg.arrival.steps = std::int64_t(g + dur);
    }
    if (--msg.unplaced == 0) {
        // Once ready, the receiver may take and free the message.
        woken.push_back(msg.dest);
        msg.ready.store(true, std::memory_order_release);
    }
}

void router::submit(routed_message& msg, vclock bound, std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    used_.store(true, std::memory_order_relaxed);
    messages_ += 1;
    int x = msg.source;
    for (unsigned rest = unsigned(msg.source ^ msg.dest); rest; rest &= rest - 1) {
        const int k = std::countr_zero(rest);
        link_stats& t = traffic_[std::size_t(x) * dim_ + k];
        t.messages += 1;
        t.bytes += msg.data.size();
        x ^= 1 << k;
    }
    for (int which = 0; which < 2; ++which) {
        domain& dm = dom_[which];
        dm.queue.push({{on(msg.wanted, which), msg.source, msg.seq}, &msg});
        raise(dm, msg.source, {on(bound, which), msg.source, msg.seq + 1});
    }
    drain(woken);
}

void router::publish(int id, std::uint64_t seq, vclock bound, std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    for (int which = 0; which < 2; ++which)
        raise(dom_[which], id, {on(bound, which), id, seq});
    drain(woken);
}

void router::finish(int id, std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    for (domain& dm : dom_)
        raise(dm, id, {infinity, id, 0});
    drain(woken);
}

bool router::force(std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    bool placed = false;
    for (int which = 0; which < 2; ++which) {
        domain& dm = dom_[which];
        if (dm.queue.empty()) continue;
        routed_message& msg = *dm.queue.top().msg;
        dm.queue.pop();
        place(which, msg, woken);
        placed = true;
    }
    drain(woken);
    return placed;
}

} // namespace hcube::detail
