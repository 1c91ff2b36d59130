// The MPI backend (backend.hpp; docs/mpi.md): the machine's nodes spread over
// the ranks of an MPI job, each rank running a subcube.
//
// Rank r of R runs the subcube of nodes [r p/R, (r+1) p/R): the low
// log(p/R) dimensions stay inside a rank, dimension k >= log(p/R) joins rank r
// to rank r ^ 2^(k - log(p/R)). Every rank builds the links with an end on
// its subcube. A link between a local node and a node of another rank keeps
// both ends in this process: on the sender's rank the backend consumes it
// (ships each message), on the receiver's rank it produces into it (delivers
// what arrived). Node programs, the links' FIFO order, the descriptors'
// virtual times and the charging are untouched, so results and virtual time
// equal the in-process machine's.
//
// progress() may be called by any thread, one at a time (a node that waits or
// has just sent, the caller of run() meanwhile): a one-node-per-rank job then
// moves its messages on the node's own thread, with no hand-off.
//
// Routed messages travel through rank 0's router (routed_proxy.hpp).
//
// A run fails as in one process, on every rank: a node that throws cancels
// the run on every rank (its rank tells the others), a deadlock is found by
// rank 0's quiescence waves, and every rank's run() throws the same run_error
// or deadlock_error, naming every rank's nodes.
//
// Nothing else the backend waits for is unbounded: a rank whose nodes stop
// moving before they finish while rank 0 cannot tell (its own nodes busy), or
// a rank that stops answering (kill -STOP, a node program that never
// returns), ends the job after config::mpi_quiet_limit with a message naming
// it (comm.hpp).
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <hcube/error.hpp>

#include "../horizon.hpp"
#include "../park.hpp"
#include "../settle.hpp"
#include "../state.hpp"
#include "../watchdog.hpp"
#include "../wire_types.hpp"
#include "comm.hpp"
#include "gather.hpp"
#include "link_bridge.hpp"
#include "posted_receives.hpp"
#include "quiescence.hpp"
#include "remote_bounds.hpp"
#include "routed_proxy.hpp"
#include "wire.hpp"

namespace hcube::detail {

namespace {

using namespace mpi;

// A waiting node first moves messages between ranks itself (each round one
// MPI probe, or a yield while another thread is at it): in a one-node-per-rank
// job the caller of run() would otherwise relay every message with a thread
// hand-off on each side. Bounded in wall time too: under load a yield can
// take milliseconds, and a node that polls is not idle, so the job's
// quiescence waves (a choice, a routed placement) would wait out its rounds.
constexpr int network_rounds = 2000;
constexpr auto network_window = std::chrono::microseconds(500);
// Receives posted ahead for the links' messages; more that come before they
// are taken wait in MPI's own queue, in order.
constexpr int posted_depth = 32;

class mpi_backend final : public backend {
public:
    explicit mpi_backend(machine_state& m)
        : m_(m)
        , comm_(m.cfg.mpi_quiet_limit, [this] { return activity(); })
        , inner_(inner_dims(m, comm_))
        , posted_(comm_, eager_bytes(m) + sizeof(wire_header), posted_depth)
        , routed_(m, comm_, inner_)
        , bounds_(m, comm_, inner_)
        , waves_(
              m, comm_, [this] { return idle(); },
              [this](bool choosing) {
                  // As one process's last node to park: loans first.
                  if (last_parked(m_) || !choosing) return;
                  bounds_.share();
                  std::lock_guard lock(m_.deciding);
                  release_proved_choices(m_);
              },
              [this](int rank, int node) { routed_.tell_choose(rank, node); },
              [this] { declare_deadlock(); }) {
        const int ranks = comm_.ranks();
        const int per = m.p / ranks;
        m.local_begin = comm_.rank() * per;
        m.local_end = m.local_begin + per;
        ended_from_.assign(std::size_t(ranks), false);
        // With one node per rank and threads, the caller of run() runs that
        // node itself, which then moves its own messages and never parks (no
        // second thread, no hand-off; docs/mpi.md).
        traits_.polls = true;
        traits_.caller_runs_node = per == 1 && executor_policy_of(m.cfg.executor).thread_per_node;
        traits_.all_nodes_here = false;
    }

    int rank() const noexcept override { return comm_.rank(); }
    int ranks() const noexcept override { return comm_.ranks(); }

    bool all(bool b) override {
        int every = b;
        comm_.allreduce(&every, 1, MPI_INT, MPI_LAND,
                        "combining a verdict (machine::on_every_rank)");
        return every != 0;
    }

    void connect() override {
        links_ = make_link_bridge(m_, comm_, inner_, posted_.capacity() - sizeof(wire_header));
    }

    void begin_run() override {
        run_ = routed_.begin_run();
        bounds_.begin_run(run_);
        waves_.begin_run(run_);
        announced_ = false;
        deadlock_waits_.clear();
    }

    bool progress() override {
        std::unique_lock turn(mu_, std::try_to_lock);
        return turn && progress_locked();
    }

    bool wait_polling(node_state& s, ready_ref ready, const wait_info& info) override {
        if (traits_.caller_runs_node) return wait_inline(s, ready, info);
        const auto until = std::chrono::steady_clock::now() + network_window;
        for (int i = 0; i < network_rounds && std::chrono::steady_clock::now() < until; ++i) {
            throw_if_cancelled(m_);
            if (!progress()) m_.exec->yield();
            if (ready()) return true;
        }
        return false;
    }

    void took(int node, int dim) override {
        if (dim < inner_) return;
        // Busy: the thread that holds it tells in its progress.
        if (std::unique_lock turn(mu_, std::try_to_lock); turn) links_->tell_due(node, dim);
    }

    bool routed_used() const noexcept override { return routed_.used(); }

    void submit_routed(routed_message& msg, vclock bound) override {
        routed_.submit(msg, bound);
        progress();
    }
    void publish_routed(int id, std::uint64_t seq, vclock bound) override {
        routed_.publish(id, seq, bound);
    }
    void finish_routed(int id) override { routed_.finish(id); }

    double least_other_bound(int, int& node) override {
        node = -1; // the router is rank 0's: rank 0 decides (quiescence.hpp)
        return -std::numeric_limits<double>::infinity();
    }

    void start_choosing() override { routed_.start_choosing(); }
    void placed_remote(int dest) noexcept override { routed_.placed_remote(dest); }

    void await_nodes(run_watchdog& watchdog) override;
    void finish() override;

    void combine(run_report& r, const std::vector<undelivered>& left) override {
        // Every rank gets the whole machine's report, or the same error.
        std::uint64_t here = 0;
        for (const auto& u : left)
            here += u.messages;
        const std::uint64_t everywhere = combine_report(
            comm_, r, {routed_.shipped(), routed_.received(), here, routed_.to_router()});
        if (here) throw error(undelivered_message(left));
        if (everywhere)
            throw error("run ended with " + std::to_string(everywhere) + " undelivered message" +
                        (everywhere == 1 ? "" : "s") +
                        " on other ranks (every message sent must be received); their ranks "
                        "list those that arrived");
    }

    void combine_failures(std::vector<node_failure>& failures,
                          std::vector<blocked_wait>& waits) override {
        waits.insert(waits.end(), deadlock_waits_.begin(), deadlock_waits_.end());
        deadlock_waits_.clear();
        gather_failures(comm_, failures, waits);
    }

    void settle_trace(std::int64_t origin) override { gather_traces(comm_, m_, origin); }

private:
    bool wait_inline(node_state& s, ready_ref ready, const wait_info& info);
    bool progress_locked();
    bool receive_all();
    void receive_link(const posted_receives::message& msg);
    void receive_cancel(const MPI_Status& st);
    void announce_failure();
    void declare_deadlock();
    void take_deadlock();
    bool idle();

    // Why the job ends when this rank's nodes stay blocked with nothing moving.
    std::string blocked_text() const {
        return "every node of this rank stayed blocked for " +
               std::to_string(m_.cfg.mpi_quiet_limit.count()) +
               " ms with no message moving (config::mpi_quiet_limit); a deadlock across ranks?";
    }

    // What this rank has done: its nodes' parks and the messages it moved
    // between ranks (not the pings). It rises while the rank's nodes work.
    std::uint64_t activity() const {
        std::uint64_t a = comm_.sent() + comm_.received();
        for (int i = m_.local_begin; i < m_.local_end; ++i)
            a += m_.nodes[i].park_epoch.load(std::memory_order_relaxed);
        return a;
    }

    // A payload up to the eager limit comes with its header, into a receive
    // posted ahead (wire.hpp); between 32 B and 64 KiB, so that the posted
    // buffers stay small whatever the limit.
    static std::size_t eager_bytes(const machine_state& m) {
        return std::clamp<std::size_t>(m.cfg.eager_limit, descriptor::inline_capacity,
                                       std::size_t(64) << 10);
    }

    // The ranks must be a power of two no larger than the machine; then each
    // holds a subcube of log(p / R) dimensions.
    static int inner_dims(const machine_state& m, const comm& c) {
        if (!std::has_single_bit(unsigned(c.ranks())) || c.ranks() > m.p)
            throw usage_error("mpi backend: " + std::to_string(c.ranks()) +
                              " ranks cannot share a " + std::to_string(m.cfg.dim) +
                              "-cube: the ranks must be a power of two from 1 to " +
                              std::to_string(m.p));
        return std::countr_zero(unsigned(m.p / c.ranks()));
    }

    machine_state& m_;
    std::mutex mu_; // one thread in MPI and in the cross-rank links at a time
    comm comm_;
    int inner_;                          // dimensions inside a rank: log(p / R)
    posted_receives posted_;             // the links' messages land here
    std::unique_ptr<link_bridge> links_; // built by connect()
    std::size_t ended_ = 0;              // end markers received this run
    std::vector<bool> ended_from_;       // by rank
    std::uint64_t received_ = 0, expected_ = 0;
    bool inline_waiting_ = false; // the caller's node waits (wait_inline)
    std::uint32_t run_ = 0;
    bool announced_ = false;                   // this run's cancellation is told
    std::vector<blocked_wait> deadlock_waits_; // this rank's, when rank 0 found a deadlock

    routed_proxy routed_;
    remote_bounds bounds_; // progress() only
    quiescence waves_;     // progress() only
};

// The rank's only node, run by the caller of run() (traits::caller_runs_node):
// nobody else moves its messages, so it never parks; after
// config::mpi_quiet_limit with nothing moving it ends the job, as the
// caller's watch does for parked nodes (await_nodes).
bool mpi_backend::wait_inline(node_state& s, ready_ref ready, const wait_info& info) {
    struct waiting_flag { // idle() asks
        bool& on;
        explicit waiting_flag(bool& b)
            : on(b) {
            on = true;
        }
        ~waiting_flag() { on = false; }
    } flag(inline_waiting_);
    s.waiting_for = info; // for the statuses (a chooser's candidate)
    // As a parking node's (horizon.cpp, about_to_park): the bound other ranks
    // are told.
    s.next_send.store(next_send_bound(s).time, std::memory_order_release);
    auto quiet_since = std::chrono::steady_clock::now();
    for (idle_backoff idle(!comm_.oversubscribed()); !ready();) {
        throw_if_cancelled(m_);
        if (progress()) {
            idle.reset();
            quiet_since = std::chrono::steady_clock::now();
            continue;
        }
        idle.pause();
        if (std::chrono::steady_clock::now() - quiet_since >= m_.cfg.mpi_quiet_limit)
            comm_.abort(blocked_text() + "\n  node " + std::to_string(&s - m_.nodes.data()) + ": " +
                        describe_wait(m_.cfg.dim, info));
    }
    return true;
}

// Waits for this rank's nodes while the caller moves messages between ranks,
// then for the ranks it shares links with. What other ranks cannot see ends
// the job: a node that threw, and nodes that all stayed blocked with nothing
// moving for config::mpi_quiet_limit.
void mpi_backend::await_nodes(run_watchdog& watchdog) {
    block_sampler& sampler = watchdog.sampler();
    auto tick = watchdog.start();
    for (idle_backoff idle; m_.finished.load(std::memory_order_acquire) == 0;) {
        if (progress()) {
            idle.reset();
            sampler.moved();
            continue;
        }
        idle.pause();
        if (const auto now = std::chrono::steady_clock::now(); now - tick >= watchdog_period) {
            tick = now;
            std::vector<blocked_wait> waits;
            if (m_.cancelled.load(std::memory_order_acquire) ||
                sampler.blocked(waits) < m_.cfg.mpi_quiet_limit)
                continue;
            std::string why = blocked_text();
            for (const auto& w : sampler.described(std::move(waits)))
                why += "\n  node " + std::to_string(w.node) + ": " + w.what;
            comm_.abort(why);
        }
    }
}

// The local nodes finished: ships what is left, tells what they took and
// delivers until every rank has finished too.
void mpi_backend::finish() {
    std::lock_guard turn(mu_); // nodes are done; a late one may still hold it
    progress_locked();         // this empties every outgoing link
    // Ahead of the end markers, so every rank has heard what its links'
    // receivers took when it ends the run.
    links_->tell_all_taken();
    // An end marker to every rank, with the count of messages sent to it:
    // every rank's nodes are done once all have come; until then rank 0's
    // router may still be placing messages for them, and this rank's
    // finishes and bounds must reach it.
    const int ranks = comm_.ranks();
    for (int peer = 0; peer < ranks; ++peer)
        if (peer != rank()) {
            const wire_header h{
                end_kind, false, rank(), 0, 0, 0, 0, links_->sent_to[std::size_t(peer)], 0};
            post(comm_, std::vector<std::byte>(sizeof h), h, peer);
        }
    // Ranks still working need not send this one anything: after each quiet
    // limit it asks them how far they are (activity), and ends the job only
    // when one does not answer or none moved since it last asked.
    auto quiet_since = std::chrono::steady_clock::now();
    std::vector<std::optional<std::uint64_t>> last(static_cast<std::size_t>(ranks));
    for (idle_backoff idle;
         ended_ + 1 < std::size_t(ranks) || links_->landing() || routed_.landing();) {
        if (progress_locked()) {
            idle.reset();
            quiet_since = std::chrono::steady_clock::now();
            continue;
        }
        idle.pause();
        if (std::chrono::steady_clock::now() - quiet_since < m_.cfg.mpi_quiet_limit) continue;
        std::vector<int> missing;
        for (int r = 0; r < ranks; ++r)
            if (r != rank() && !ended_from_[std::size_t(r)]) missing.push_back(r);
        if (missing.empty()) // every rank ended: only a payload is still on its way
            comm_.abort((links_->landing() ? links_->first_landing() : routed_.landing_text()) +
                        ": no piece landed for " + comm_.quiet_limit_text() +
                        " after every rank finished its nodes");
        const auto now = comm_.ask_ranks(missing, nullptr);
        std::vector<int> silent;
        bool moved = false;
        for (const int r : missing) {
            const auto& a = now[std::size_t(r)];
            if (!a) silent.push_back(r);
            moved = moved || !last[std::size_t(r)] || *a != *last[std::size_t(r)];
            last[std::size_t(r)] = a;
        }
        const auto unfinished = [](const std::vector<int>& r) {
            return comm::ranks_text(r) + (r.size() == 1 ? " has not finished its nodes"
                                                        : " have not finished their nodes");
        };
        if (!silent.empty())
            comm_.abort(unfinished(silent) + " and did not answer within " +
                        comm_.quiet_limit_text() +
                        " (a node program that never returns, or a stopped rank?)");
        if (!moved)
            comm_.abort(unfinished(missing) + ": nothing moved for " + comm_.quiet_limit_text() +
                        " after this rank's finished (a node program that never returns?)");
        quiet_since = std::chrono::steady_clock::now();
    }
    comm_.retire_sends(true);
    // What local nodes left in their links is undelivered (settle.hpp).
    links_->end_run();
    if (received_ != expected_)
        comm_.abort("received " + std::to_string(received_) + " messages, the other ranks sent " +
                    std::to_string(expected_));
    received_ = expected_ = 0;
    ended_ = 0;
    std::fill(ended_from_.begin(), ended_from_.end(), false);
    std::fill(links_->sent_to.begin(), links_->sent_to.end(), 0);
}

bool mpi_backend::progress_locked() {
    announce_failure();
    bool moved = links_->ship_all();
    moved |= routed_.send_outbox();
    moved |= receive_all();
    moved |= links_->land();
    moved |= links_->tell_taken();
    waves_.poll(routed_.others_choose() || m_.choosing.load(std::memory_order_relaxed),
                routed_.used());
    comm_.retire_sends(false);
    return moved;
}

bool mpi_backend::receive_all() {
    bool moved = false;
    for (posted_receives::message msg; posted_.next(msg);) {
        receive_link(msg);
        moved = true;
    }
    for (;;) {
        // A routed message still landing holds back what came after it on
        // this communicator, which may depend on it (a rank's bounds after the
        // data they follow); pings are answered meanwhile.
        if (routed_.landing()) {
            moved |= routed_.land();
            if (routed_.landing()) {
                comm_.answer_pings();
                return moved;
            }
        }
        int flag = 0;
        MPI_Status st;
        check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_.handle(), &flag, &st), "MPI_Iprobe");
        if (!flag) return moved;
        switch (st.MPI_TAG) {
        case routed_tag:
            moved |= routed_.receive(st);
            break;
        case wave_tag:
            waves_.receive(st);
            break;
        case bounds_tag:
            bounds_.receive(st);
            moved = true;
            break;
        case ping_tag:
        case pong_tag:
            comm_.take_liveness(st);
            break;
        case cancel_tag:
            receive_cancel(st);
            moved = true;
            break;
        default:
            comm_.abort("a message with the unknown tag " + std::to_string(st.MPI_TAG) +
                        " from rank " + std::to_string(st.MPI_SOURCE));
        }
    }
}

// A message of the links' communicator, in a posted receive's buffer: a link
// message (its buffer becomes a heap payload), what was taken of a link's,
// a full link's ask or an end marker.
void mpi_backend::receive_link(const posted_receives::message& msg) {
    comm_.count_received();
    const std::size_t bytes = msg.length - sizeof(wire_header);
    wire_header h;
    std::memcpy(&h, msg.buffer + bytes, sizeof h);
    descriptor a;
    a.arrival = {h.arrival_time, h.arrival_steps};
    a.bytes = std::uint32_t(bytes);
    if (h.kind == data_kind || h.kind == bulk_kind) a.type = wire_type_of_hash(h.type);
    const bool heap = h.kind == data_kind && bytes > descriptor::inline_capacity;
    if (heap) {
        a.kind = payload::heap;
        a.ptr = msg.buffer;
    } else if (h.kind == data_kind) {
        a.kind = payload::inline_bytes;
        a.store_inline(msg.buffer, bytes);
    }
    posted_.repost(!heap);
    switch (h.kind) {
    case taken_kind:
        return links_->taken(h.from, h.dim, h.count);
    case ask_kind:
        return links_->asked(h.from ^ (1 << h.dim), h.dim);
    case end_kind:
        ++ended_;
        ended_from_[std::size_t(msg.source)] = true;
        expected_ += h.count;
        return;
    }
    ++received_;
    const int to = h.from ^ (1 << h.dim);
    links_->taken(to, h.dim, h.taken);
    if (h.kind == bulk_kind)
        links_->arrived_bulk(to, h.dim, a, h.prompt != 0, std::size_t(h.count), msg.source);
    else
        links_->arrived(to, h.dim, a, h.prompt != 0);
}

// A local node threw: every other rank cancels its nodes too. It may come
// after this rank's end markers (they travel with the links' messages): a rank
// whose nodes all finished meanwhile learns of the failure when the run's
// failures are gathered (gather.hpp), and drops the late cancel by its run.
void mpi_backend::announce_failure() {
    if (announced_ || !m_.cancelled.load(std::memory_order_acquire)) return;
    announced_ = true;
    if (m_.first_failure.load(std::memory_order_acquire) < 0) return; // told by another rank
    const cancel_message c{failed_kind, run_};
    for (int peer = 0; peer < comm_.ranks(); ++peer)
        if (peer != rank()) comm_.isend(bytes_of(c), peer, cancel_tag);
}

void mpi_backend::receive_cancel(const MPI_Status& st) {
    comm_.count_received();
    cancel_message c;
    comm_.receive(&c, sizeof c, st);
    if (c.run != run_) return;
    if (c.kind == deadlock_kind) return take_deadlock();
    m_.cancel(elsewhere_marker);
}

// Rank 0's waves found every rank's nodes blocked with nothing that can wake
// them: every rank cancels its run with its blocked nodes' waits.
void mpi_backend::declare_deadlock() {
    const cancel_message c{deadlock_kind, run_};
    for (int peer = 1; peer < comm_.ranks(); ++peer)
        comm_.isend(bytes_of(c), peer, cancel_tag);
    take_deadlock();
}

void mpi_backend::take_deadlock() {
    std::vector<int> blocked;
    for (int i = m_.local_begin; i < m_.local_end; ++i)
        if (!m_.nodes[i].done.load(std::memory_order_acquire)) blocked.push_back(i);
    deadlock_waits_ = describe_waits(m_, blocked);
    m_.cancel(deadlock_marker);
}

// Every unfinished local node parked (or waiting inline) and nothing to send.
bool mpi_backend::idle() {
    for (int i = m_.local_begin; i < m_.local_end; ++i) {
        const node_state& s = m_.nodes[i];
        if (s.done.load(std::memory_order_acquire)) continue;
        if (traits_.caller_runs_node ? !inline_waiting_ : !s.parked_unrung()) return false;
    }
    return links_->settled() && routed_.outbox_empty();
}

} // namespace

std::unique_ptr<backend> make_mpi_backend(machine_state& m) {
    return std::make_unique<mpi_backend>(m);
}

} // namespace hcube::detail
