// The E-cube router: conservative placement of routed messages in key order
// (router.hpp has the argument).
#include "router.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <tuple>

namespace hcube::detail {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

double on(const vclock& v, int which) noexcept {
    return which == 0 ? v.time : double(v.steps);
}

bool same_on_both(const vclock& v) noexcept {
    return v.time == double(v.steps);
}

} // namespace

void router::reset(int p, int dim, bool trace) {
    std::lock_guard lock(mu_);
    p_ = p;
    dim_ = dim;
    trace_ = trace;
    ready_ = false;
    shared_ = true;
    used_.store(false, std::memory_order_relaxed);
    messages_ = 0;
    traffic_.clear();
    congestion_.clear();
    fixes_.clear();
}

void router::prepare() {
    if (ready_) return;
    ready_ = true;
    const key none{infinity, p_, 0};
    domain& dm = dom_[0]; // dom_[1] is a copy of it when the clocks split
    dm.bound.resize(std::size_t(p_));
    dm.queued.assign(std::size_t(p_), {});
    dm.low.assign(2 * std::size_t(p_), none);
    dm.low_queued.assign(2 * std::size_t(p_), none);
    for (int n = 0; n < p_; ++n)
        dm.bound[std::size_t(n)] = dm.low[std::size_t(p_ + n)] = {0, n, 0};
    for (std::size_t i = std::size_t(p_) - 1; i >= 1; --i)
        dm.low[i] = std::min(dm.low[2 * i], dm.low[2 * i + 1]);
    dm.busy.assign(std::size_t(p_) * dim_, {});
    traffic_.assign(std::size_t(p_) * dim_, link_stats{});
}

// Recomputes node n's leaf and the blocks above it.
void router::update(domain& dm, int n) {
    const auto& q = dm.queued[std::size_t(n)];
    std::size_t i = std::size_t(p_ + n);
    dm.low_queued[i] = q.empty() ? key{infinity, p_, 0} : q.top().k;
    dm.low[i] = std::min(dm.bound[std::size_t(n)], dm.low_queued[i]);
    for (i /= 2; i >= 1; i /= 2) {
        const key low = std::min(dm.low[2 * i], dm.low[2 * i + 1]);
        const key low_queued = std::min(dm.low_queued[2 * i], dm.low_queued[2 * i + 1]);
        // A block whose minima did not change leaves every block above as it was.
        if (low == dm.low[i] && low_queued == dm.low_queued[i]) break;
        dm.low[i] = low;
        dm.low_queued[i] = low_queued;
    }
}

// Places every message that became the least key of its block after node n's
// leaf changed. Only blocks above n can have changed, so the walk goes up from
// n; a placement changes its source's leaf, and the walk starts again there.
void router::settle(int which, int n, std::vector<int>& woken) {
    domain& dm = dom_[which];
    for (bool placed = true; placed;) {
        placed = false;
        std::size_t i = std::size_t(p_ + n);
        for (int height = 0; i >= 1; i /= 2, ++height) {
            if (!(dm.low[i] == dm.low_queued[i]) || dm.low[i].t == infinity) continue;
            // The block's least key is a queued message; it may go if its own
            // block is no larger than this one.
            const int source = dm.low[i].node;
            routed_message& msg = *dm.queued[std::size_t(source)].top().msg;
            if (int(std::bit_width(unsigned(msg.source ^ msg.dest))) - 1 > height) continue;
            dm.queued[std::size_t(source)].pop();
            update(dm, source);
            place(which, msg, woken);
            n = source;
            placed = true;
            break;
        }
    }
}

// Up to now domain 1 equals domain 0 (the same inputs, the same placements);
// from the first input that differs on the two clocks they go apart.
void router::split_unless_equal(vclock a, vclock b, vclock c) {
    if (!shared_ || (same_on_both(a) && same_on_both(b) && same_on_both(c))) return;
    dom_[1] = dom_[0];
    shared_ = false;
}

// Bounds only rise: a late publish of an older, lower bound changes nothing.
void router::raise(int which, int n, key k, std::vector<int>& woken) {
    domain& dm = dom_[which];
    if (!(dm.bound[std::size_t(n)] < k)) return;
    dm.bound[std::size_t(n)] = k;
    update(dm, n);
    settle(which, n, woken);
}

// Cut-through: the earliest g >= w at which every link of the E-cube path is
// free for the whole duration; then reserve [g, g + duration) on each.
void router::place(int which, routed_message& msg, std::vector<int>& woken) {
    domain& dm = dom_[which];
    const double w = on(msg.wanted, which), dur = on(msg.duration, which);
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
                // Reservations that ended by w can meet no message placed on
                // this link from now on: those have larger keys, so w or later.
                const auto live = std::find_if(busy.begin(), busy.end(),
                                               [&](const interval& iv) { return iv.end > w; });
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
    }
    if (which == 1 || shared_) msg.arrival.steps = std::int64_t(g + dur);
    msg.unplaced -= shared_ ? 2 : 1;
    if (msg.unplaced == 0) {
        // Once ready, the receiver may take and free the message.
        woken.push_back(msg.dest);
        msg.ready.store(true, std::memory_order_release);
    }
}

void router::submit(routed_message& msg, vclock bound, std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    prepare();
    used_.store(true, std::memory_order_relaxed);
    messages_ += 1;
    int x = msg.source;
    for (unsigned rest = unsigned(msg.source ^ msg.dest); rest; rest &= rest - 1) {
        const int k = std::countr_zero(rest);
        link_stats& t = traffic_[std::size_t(x) * dim_ + k];
        t.messages += 1;
        t.bytes += msg.bytes;
        x ^= 1 << k;
    }
    split_unless_equal(msg.wanted, msg.duration, bound);
    for (int which = 0; which < domains(); ++which) {
        domain& dm = dom_[which];
        dm.queued[std::size_t(msg.source)].push(
            {{on(msg.wanted, which), msg.source, msg.seq}, &msg});
        const key next{on(bound, which), msg.source, msg.seq + 1};
        dm.bound[std::size_t(msg.source)] = std::max(dm.bound[std::size_t(msg.source)], next);
        update(dm, msg.source);
        settle(which, msg.source, woken);
    }
}

void router::publish(int id, std::uint64_t seq, vclock bound, std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    prepare();
    split_unless_equal(bound);
    for (int which = 0; which < domains(); ++which)
        raise(which, id, {on(bound, which), id, seq}, woken);
}

void router::finish(int id, std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    prepare();
    for (int which = 0; which < domains(); ++which)
        raise(which, id, {infinity, id, 0}, woken);
}

std::vector<congestion_event> router::congestion() const {
    std::vector<congestion_event> events = congestion_;
    const auto order = [](const congestion_event& e) {
        return std::tie(e.wanted, e.source, e.granted, e.dest, e.from, e.dim);
    };
    std::sort(
        events.begin(), events.end(),
        [&](const congestion_event& a, const congestion_event& b) { return order(a) < order(b); });
    return events;
}

// One clock per call, the steps clock first. A message it places may be one
// the time clock placed already; its receiver then wakes and may send below
// the time clock's least pending key, which must not be forced past it.
// Forcing the time clock only once the steps clock has nothing pending keeps
// virtual time exact; forced placements on the steps clock follow its key
// order among what is pending.
bool router::force(std::vector<int>& woken) {
    std::lock_guard lock(mu_);
    if (!ready_) return false;
    for (int which = domains() - 1; which >= 0; --which) {
        domain& dm = dom_[which];
        if (dm.low_queued[1].t == infinity) continue;
        const int source = dm.low_queued[1].node;
        routed_message& msg = *dm.queued[std::size_t(source)].top().msg;
        dm.queued[std::size_t(source)].pop();
        update(dm, source);
        place(which, msg, woken);
        settle(which, source, woken);
        return true;
    }
    return false;
}

bool router::has_pending() {
    std::lock_guard lock(mu_);
    return ready_ && (dom_[0].low_queued[1].t != infinity ||
                      (!shared_ && dom_[1].low_queued[1].t != infinity));
}

bool router::pending_before(double t) {
    std::lock_guard lock(mu_);
    if (!ready_) return false;
    // A message placed on the time clock but not yet on the steps clock is
    // not ready, whatever its arrival: the steps clock must place it first.
    return dom_[0].low_queued[1].t < t || (!shared_ && dom_[1].low_queued[1].t != infinity);
}

router::bound router::least_other(int id) {
    std::lock_guard lock(mu_);
    prepare();
    const domain& dm = dom_[0];
    key least{infinity, p_, 0};
    for (std::size_t i = std::size_t(p_ + id); i > 1; i /= 2)
        least = std::min(least, dm.low[i ^ 1]);
    return {least.t, least.node};
}

} // namespace hcube::detail
