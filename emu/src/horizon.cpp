// The virtual-time horizon (horizon.hpp has the argument) and the park hooks
// that serve it and the router (park.hpp).
#include "horizon.hpp"
#include "park.hpp"
#include "routed.hpp"

namespace hcube::detail {

void about_to_park(machine_state& m, node_state& s) {
    // Even before anyone chooses: a node parked since then has no later park
    // to publish it, and a choice proved with some bounds and not with others
    // would depend on which parks came first (release_proved_choices).
    s.next_send.store(next_send_bound(s).time, std::memory_order_release);
    if (routed_in_use(m)) publish_routed_bound(m, s, nullptr);
}

namespace {

// Node s's least placed routed message (`best`), and whether no other source
// can still bring an earlier one.
bool least_source(machine_state& m, node_state& s, int id, choice& best) {
    // Bounds before the inbox, as choose_link: a sender submits its message to
    // the router only after putting it in the inbox, so a message sent after
    // the bound read here was placed is seen below, and one sent later starts
    // no earlier than that bound.
    int other_node = -1;
    const double other_time = m.world->least_other_bound(id, other_node);
    choice unplaced;
    {
        std::lock_guard lock(s.routed_mu);
        s.routed_in.for_each_head([&](const routed_message& msg) {
            if (msg.ready.load(std::memory_order_acquire))
                best = std::min(best, choice{msg.arrival.time, msg.source});
            else // it arrives no earlier than a free path would bring it
                unplaced = std::min(unplaced, choice{(msg.wanted + msg.duration).time, msg.source});
        });
    }
    return best < unplaced && best < choice{other_time + least_duration(m), other_node};
}

} // namespace

int choose_source(machine_state& m, node_state& s, int id) {
    choice best;
    const bool least = least_source(m, s, id, best);
    s.pending_choice.store_source(best);
    if (best.from < 0) return -1;
    if (s.pending_choice.told()) return decided(s, best.from);
    return least ? decided(s, best.from) : -1;
}

bool release_proved_choices(machine_state& m) {
    // One at a time, while nobody runs: a chooser told while it ran (a message
    // from another one just released could wake it) might take that word for
    // its next choice.
    for (int i = m.local_begin; i < m.local_end; ++i) {
        node_state& n = m.nodes[i];
        if (n.done.load(std::memory_order_acquire)) continue;
        // The number before the candidate: a node that decides meanwhile
        // makes it a past choice's.
        const std::uint64_t number = n.pending_choice.number();
        const choice c = n.pending_choice.load();
        if (c.from < 0) continue;
        choice best;
        if (!n.pending_choice.by_source()
                ? least_of_open(c, n.pending_choice.open(),
                                [&](int j) { return earliest_from(m, i ^ (1 << j)); })
                : least_source(m, n, i, best)) {
            force_choice(m, n, number);
            return true;
        }
    }
    return false;
}

int least_chooser(const machine_state& m) {
    int who = -1;
    choice least;
    for (int i = m.local_begin; i < m.local_end; ++i) {
        const node_state& n = m.nodes[i];
        if (n.done.load(std::memory_order_acquire)) continue;
        if (const choice c = n.pending_choice.load(); c.from >= 0 && c.arrival < least.arrival) {
            least = c;
            who = i;
        }
    }
    return who;
}

void force_choice(machine_state& m, node_state& n, std::uint64_t number) {
    n.pending_choice.tell(number);
    wake(m, n);
}

// If every unfinished local node is really parked (none rung on its way down),
// lent payloads are copied into their messages first (release_loans), so
// their lenders go on as if the messages had been buffered. Then no bound can
// rise any more: a chooser whose candidate the bounds now prove least is told
// to take it; if none is, the least chooser is told to take its candidate,
// or, when a routed message wants to start before that candidate's arrival,
// the router places its next message anyway (router.hpp), until a placement
// wakes someone or nothing is left. A backend
// of several processes decides the same way once every process is idle
// (backend.hpp, all_nodes_here): another process's message may wake a chooser
// here at any time, and one told while it runs might take the word for its
// next choice.
bool last_parked(machine_state& m) {
    const auto all_parked = [&] {
        for (int i = m.local_begin; i < m.local_end; ++i)
            if (!m.nodes[i].done.load(std::memory_order_acquire) && !m.nodes[i].parked_unrung())
                return false;
        return true;
    };
    // Lenders first: going on, they may send messages with smaller keys than
    // a forced placement's.
    if (!m.world->traits_of().all_nodes_here) {
        std::lock_guard lock(m.deciding);
        return all_parked() && release_loans(m);
    }
    // Nothing is lent, pending or chosen before routed traffic or a choice
    // begins; the last node's acq_rel on `active` sees a parked node's start.
    const bool choosing = m.choosing.load(std::memory_order_relaxed);
    if (!choosing && !m.routes.used()) return false;
    if (const auto hook = decider_hook.load(std::memory_order_relaxed)) hook();
    std::lock_guard lock(m.deciding);
    thread_local std::vector<int> woken;
    bool acted = false;
    while (all_parked()) {
        if (release_loans(m)) {
            acted = true;
            continue;
        }
        if (choosing && release_proved_choices(m)) return true;
        if (const int who = choosing ? least_chooser(m) : -1;
            who >= 0 && !m.routes.pending_before(m.nodes[who].pending_choice.load().arrival)) {
            force_choice(m, m.nodes[who]);
            return true;
        }
        if (!m.routes.force(woken)) return acted;
        wake_each(m, woken);
        acted = true;
    }
    return acted;
}

} // namespace hcube::detail
