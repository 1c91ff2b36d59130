// Routed messages across ranks (routed_proxy.hpp).
#include "routed_proxy.hpp"

#include <cstring>

#include "../horizon.hpp"
#include "../park.hpp"
#include "../wire_types.hpp"

namespace hcube::detail::mpi {

namespace {

routed_header header_of(std::int32_t kind, const routed_message& msg, vclock bound) {
    return {kind,
            0,
            msg.source,
            msg.dest,
            msg.seq,
            msg.trace,
            msg.elem,
            msg.bytes,
            wire_type_hash(msg.type),
            msg.wanted,
            msg.duration,
            bound};
}

routed_header control(std::int32_t kind, int source, int dest, std::uint64_t seq = 0,
                      vclock bound = {}) {
    return {kind, 0, source, dest, seq, 0, 0, 0, 0, {}, {}, bound};
}

void describe(routed_message& msg, const routed_header& h) {
    msg.source = h.source;
    msg.dest = h.dest;
    msg.seq = h.seq;
    msg.trace = h.trace;
    msg.elem = h.elem;
    msg.bytes = h.bytes;
    msg.type = wire_type_of_hash(h.type);
    msg.wanted = h.wanted;
    msg.duration = h.duration;
}

void set_placed(routed_message& msg, vclock arrival) {
    msg.arrival = arrival;
    msg.unplaced = 0;
    msg.ready.store(true, std::memory_order_release);
}

} // namespace

std::uint32_t routed_proxy::begin_run() {
    std::lock_guard lock(mu_);
    used_.store(false, std::memory_order_relaxed);
    choosing_ = false;
    outbox_.clear(); // what the last run's nodes said after it ended
    queued_.store(false, std::memory_order_relaxed);
    shadows_.clear();
    early_.clear();
    shipped_ = received_ = to_router_ = 0;
    return ++run_;
}

// The data go to the receiver's rank; rank 0's router gets the message itself
// if it is the receiver's rank, else a copy without the data (a shadow) that
// it places in the receiver's stead.
void routed_proxy::submit(routed_message& msg, vclock bound) {
    const int dest = msg.dest; // once placed, msg may be taken and gone
    const bool here = m_.is_local(dest);
    if (!here && comm_.rank() == 0) return submit_from_router_rank(msg, bound);
    {
        std::lock_guard lock(mu_);
        if (!here) ship_data(data_routed_kind, msg, bound);
        if (comm_.rank() != 0 && rank_of(dest) != 0)
            queue(header_of(submit_kind, msg, bound), nullptr, 0, 0);
    }
    start();
    if (comm_.rank() == 0) route(msg, bound);
    if (here) wake(m_, m_.nodes[dest]);
}

// Rank 0's node sends to another rank: routed first, so that a message the
// router places at once (its block's least key) takes its arrival along, one
// message instead of data and then a placement.
void routed_proxy::submit_from_router_rank(routed_message& msg, vclock bound) {
    start();
    const auto it = shadow_of(header_of(submit_kind, msg, bound), false);
    route(it->msg, bound); // placed_remote leaves this shadow alone: its data have not gone
    std::lock_guard lock(mu_);
    const bool placed = it->msg.ready.load(std::memory_order_acquire);
    ship_data(placed ? placed_data_kind : data_routed_kind, msg, placed ? it->msg.arrival : bound);
    if (placed)
        shadows_[msg.dest].erase(it);
    else
        it->data_sent = true;
}

// Under mu_: msg's data to its receiver's rank, with `bound` (the sender's
// bound, or the arrival of placed data).
void routed_proxy::ship_data(std::int32_t kind, const routed_message& msg, vclock bound) {
    ++shipped_;
    queue(header_of(kind, msg, bound), msg.payload(), msg.bytes, rank_of(msg.dest));
}

void routed_proxy::publish(int id, std::uint64_t seq, vclock bound) {
    if (comm_.rank() == 0) {
        thread_local std::vector<int> woken;
        m_.routes.publish(id, seq, bound, woken);
        return wake_each(m_, woken);
    }
    std::lock_guard lock(mu_);
    queue(control(publish_kind, id, 0, seq, bound), nullptr, 0, 0);
}

void routed_proxy::finish(int id) {
    if (comm_.rank() == 0) { // its router heard every finish since traffic began
        thread_local std::vector<int> woken;
        m_.routes.finish(id, woken);
        return wake_each(m_, woken);
    }
    // Pairs with the fence in start(): a node that finishes as routed traffic
    // begins is reported by it, by this, or by both.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (used()) queue_finish(id);
}

void routed_proxy::start_choosing() {
    if (comm_.rank() == 0) return;
    std::lock_guard lock(mu_);
    queue(control(choosing_kind, comm_.rank(), 0), nullptr, 0, 0);
}

// The router placed (ready) one or more of dest's shadows: their arrival goes
// to dest's rank, in each source's send order.
void routed_proxy::placed_remote(int dest) noexcept {
    std::lock_guard lock(mu_);
    auto& list = shadows_[dest];
    for (auto it = list.begin(); it != list.end();) {
        if (!it->data_sent || !it->msg.ready.load(std::memory_order_acquire)) {
            ++it;
            continue;
        }
        queue(header_of(placed_kind, it->msg, it->msg.arrival), nullptr, 0, rank_of(dest));
        it = list.erase(it);
    }
}

void routed_proxy::tell_choose(int rank, int node) {
    std::lock_guard lock(mu_);
    queue(control(choose_kind, 0, node), nullptr, 0, rank);
}

bool routed_proxy::send_outbox() {
    if (!queued_.load(std::memory_order_acquire)) return false;
    std::vector<routed_out> batch;
    {
        std::lock_guard lock(mu_);
        batch.swap(outbox_);
        queued_.store(false, std::memory_order_relaxed);
    }
    for (routed_out& o : batch)
        comm_.isend(std::move(o.buffer), o.peer, routed_tag);
    return !batch.empty();
}

bool routed_proxy::outbox_empty() const {
    return !queued_.load(std::memory_order_acquire);
}

bool routed_proxy::receive(const MPI_Status& st) {
    landing_data_.resize(comm::bytes_in(st));
    landing_from_ = st.MPI_SOURCE;
    comm_.irecv(landing_data_.data(), landing_data_.size(), st, landing_request_);
    return land();
}

std::string routed_proxy::landing_text() const {
    return "a routed message of " + std::to_string(landing_data_.size() - sizeof(routed_header)) +
           " bytes from rank " + std::to_string(landing_from_);
}

bool routed_proxy::land() {
    if (!landing() || !comm::completed(landing_request_)) return false;
    std::vector<unsigned char> data = std::move(landing_data_);
    landing_data_.clear();
    routed_header h;
    const std::size_t bytes = data.size() - sizeof h;
    std::memcpy(&h, data.data() + bytes, sizeof h);
    if (h.run != run_) return false; // a late bound, finish or untaken message of a past run
    comm_.count_received();
    start();
    std::vector<int> woken;
    switch (h.kind) {
    case submit_kind:
        route(shadow_of(h, true)->msg, h.bound);
        break;
    case data_routed_kind:
    case placed_data_kind:
        data.resize(bytes);
        arrived(h, std::move(data));
        break;
    case publish_kind:
        m_.routes.publish(h.source, h.seq, h.bound, woken);
        wake_each(m_, woken);
        break;
    case finish_kind:
        m_.routes.finish(h.source, woken);
        wake_each(m_, woken);
        break;
    case placed_kind:
        placed(h);
        break;
    case choosing_kind:
        choosing_ = true;
        break;
    case choose_kind:
        force_choice(m_, m_.nodes[h.dest]);
        break;
    default:
        break; // used_kind: start() above
    }
    return true;
}

// The first routed traffic of the run this rank hears of. From now on its
// nodes publish their bounds and finishes; those that parked or finished
// before told rank 0's router nothing, so the parked are woken (they publish
// as they park again) and the finished are reported. Rank 0 tells every rank.
void routed_proxy::start() {
    if (used_.load(std::memory_order_acquire) || used_.exchange(true)) return;
    if (comm_.rank() == 0) {
        std::lock_guard lock(mu_);
        for (int r = 1; r < comm_.ranks(); ++r)
            queue(control(used_kind, 0, 0), nullptr, 0, r);
    }
    // Pairs with the fence in finish(): a node that finishes now is reported
    // by this loop, by itself, or by both.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int i = m_.local_begin; i < m_.local_end; ++i) {
        if (!m_.nodes[i].done.load(std::memory_order_relaxed))
            wake(m_, m_.nodes[i]);
        else if (comm_.rank() != 0) // rank 0's router heard every finish
            queue_finish(i);
    }
}

void routed_proxy::queue_finish(int id) {
    std::lock_guard lock(mu_);
    queue(control(finish_kind, id, 0), nullptr, 0, 0);
}

// Under mu_; the next progress() sends it.
void routed_proxy::queue(routed_header h, const void* data, std::size_t bytes, int peer) {
    h.run = run_;
    if (peer == 0 && (h.kind == submit_kind || h.kind == publish_kind || h.kind == finish_kind))
        ++to_router_;
    std::vector<std::byte> buffer(bytes + sizeof h);
    if (bytes) std::memcpy(buffer.data(), data, bytes);
    std::memcpy(buffer.data() + bytes, &h, sizeof h);
    outbox_.push_back({std::move(buffer), peer});
    queued_.store(true, std::memory_order_release);
}

// Rank 0: a new shadow (its address stays while it waits in the list).
std::list<routed_proxy::shadow>::iterator routed_proxy::shadow_of(const routed_header& h,
                                                                  bool data_sent) {
    std::lock_guard lock(mu_);
    auto& list = shadows_[h.dest];
    const auto it = list.emplace(list.end());
    describe(it->msg, h);
    it->data_sent = data_sent;
    return it;
}

// Rank 0: into the router, and wakes whom its placements concern.
void routed_proxy::route(routed_message& msg, vclock bound) {
    std::vector<int> woken;
    m_.routes.submit(msg, bound, woken);
    wake_each(m_, woken);
}

// A routed message for a local node: into its inbox, unplaced until the
// router places it (here on rank 0, or a placed message says so, maybe one
// that came first).
void routed_proxy::arrived(const routed_header& h, std::vector<unsigned char> data) {
    node_state& d = m_.nodes[h.dest];
    routed_message* msg;
    {
        std::lock_guard lock(d.routed_mu);
        msg = &d.routed_in.push(h.source);
        describe(*msg, h);
        msg->data = std::move(data);
        if (h.kind == placed_data_kind) {
            set_placed(*msg, h.bound);
        } else if (const auto it = early_.find({h.dest, h.source, h.seq}); it != early_.end()) {
            set_placed(*msg, it->second);
            early_.erase(it);
        }
    }
    {
        std::lock_guard lock(mu_);
        ++received_;
    }
    if (comm_.rank() == 0) route(*msg, h.bound);
    wake(m_, d);
}

void routed_proxy::placed(const routed_header& h) {
    node_state& d = m_.nodes[h.dest];
    {
        std::lock_guard lock(d.routed_mu);
        routed_message* msg = d.routed_in.find(h.source, h.seq);
        if (!msg) {
            early_[{h.dest, h.source, h.seq}] = h.bound;
            return;
        }
        set_placed(*msg, h.bound);
    }
    wake(m_, d);
}

} // namespace hcube::detail::mpi
