// The deadlock watchdog (watchdog.hpp).
#include "watchdog.hpp"

#include <sstream>
#include <string>

#include "park.hpp"
#include "routed.hpp"

namespace hcube::detail {

namespace {

// What node i's links and routed inbox hold unread, for the deadlock report:
// "; 1 message pending on dim 0 from node 1, 16 bytes". Nodes are parked, so
// links are read as for_each_pending allows, the inbox under its lock.
std::string pending_messages(machine_state& m, int i) {
    std::ostringstream os;
    const auto item = [&](std::uint64_t messages, std::uint64_t bytes, const char* kind,
                          const std::string& from) {
        if (messages == 0) return;
        os << "; " << messages << kind << (messages == 1 ? " message" : " messages") << " pending "
           << from << ", " << bytes << " bytes";
    };
    for (int k = 0; k < m.cfg.dim; ++k) {
        const link_backlog b = m.with_links([&]<class L>(std::type_identity<L>) {
            return m.out_link<L>(i ^ (1 << k), k).pending();
        });
        item(b.messages, b.bytes, "",
             "on dim " + std::to_string(k) + " from node " + std::to_string(i ^ (1 << k)));
    }
    for (const auto& [source, u] : routed_backlog(m.nodes[i]))
        item(u.messages, u.bytes, " routed", "from node " + std::to_string(source));
    return os.str();
}

// Every unfinished node is parked on a bell nobody rang. Returns their waits.
std::vector<blocked_wait> blocked_nodes(machine_state& m, std::vector<std::uint64_t>& epochs,
                                        bool& all_blocked) {
    std::vector<blocked_wait> waits;
    all_blocked = true;
    for (int i = m.local_begin; i < m.local_end; ++i) {
        const node_state& s = m.nodes[i];
        if (s.done.load(std::memory_order_acquire)) {
            epochs[i] = 0;
            continue;
        }
        if (!s.parked_unrung()) {
            all_blocked = false;
            return waits;
        }
        epochs[i] = s.park_epoch.load(std::memory_order_relaxed);
        waits.push_back({i, ""});
    }
    return waits;
}

} // namespace

std::chrono::steady_clock::duration block_sampler::blocked(std::vector<blocked_wait>& waits) {
    const auto now = std::chrono::steady_clock::now();
    // A group with a node that runs: not all blocked, known without reading
    // every node (at a million nodes that read outlasts the tick).
    if (m_.active.load(std::memory_order_acquire) != 0) {
        waits.clear();
        stable_.clear();
        since_ = now;
        return {};
    }
    bool all_blocked = false;
    waits = blocked_nodes(m_, epochs_, all_blocked);
    // A node deciding for the parked others (horizon.cpp, last_parked) is
    // about to wake one: however long it is kept off its core, that is
    // no deadlock.
    const bool deciding = !m_.deciding.try_lock();
    if (!deciding) m_.deciding.unlock();
    if (deciding || !all_blocked || waits.empty() || epochs_ != stable_) {
        stable_ = all_blocked ? epochs_ : std::vector<std::uint64_t>{};
        since_ = now;
    }
    return now - since_;
}

std::vector<blocked_wait> describe_waits(machine_state& m, const std::vector<int>& nodes) {
    std::vector<blocked_wait> waits;
    for (const int i : nodes) {
        const wait_info& info = m.nodes[i].waiting_for;
        waits.push_back(
            {i, describe_wait(m.cfg.dim, info) + pending_messages(m, i), info.dim, info.peer});
    }
    return waits;
}

std::vector<blocked_wait> block_sampler::described(const std::vector<blocked_wait>& waits) const {
    std::vector<int> nodes;
    for (const auto& w : waits)
        nodes.push_back(w.node);
    return describe_waits(m_, nodes);
}

void run_watchdog::tick() {
    if (m_.cancelled.load(std::memory_order_acquire)) return;
    std::vector<blocked_wait> waits;
    if (sampler_.blocked(waits) < m_.cfg.deadlock_grace) return;
    // The last node to park may have been kept off its core before it took
    // the decision lock: the decision it owes is made here, and only a state
    // that owes none is a deadlock.
    if (last_parked(m_)) return sampler_.moved();
    deadlock_ = sampler_.described(std::move(waits));
    m_.cancel(deadlock_marker);
}

void watchdog_tick(machine_state& m) {
    m.watchdog->tick();
}

} // namespace hcube::detail
