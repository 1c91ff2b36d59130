// The MPI backend's links between ranks (remote.hpp; docs/mpi.md).
//
// Rank r of R runs the subcube of nodes [r p/R, (r+1) p/R): the low
// log(p/R) dimensions stay inside a rank, dimension k >= log(p/R) joins rank r
// to rank r ^ 2^(k - log(p/R)). MPI is called by one thread at a time (a
// mutex around progress()), from nodes and the caller of run(): the job needs
// MPI_THREAD_SERIALIZED.
//
// One MPI message per hcube message, payload then header, so a received
// buffer becomes the receiver's heap payload without another copy:
//
//   [ payload bytes ... | wire header ]
//
// MPI keeps the order of messages between two ranks on one communicator (a
// receive of any tag matches them in the order sent), so a link's messages
// arrive in FIFO order, a rank's end-of-run marker arrives after everything
// it sent in that run, and one node's routed sends and bounds reach rank 0 in
// program order.
//
// Routed traffic (remote.hpp) has its own tag and header. It is not counted
// by the end markers: its messages go between any two ranks. What a run
// still needs of it is in place before any node finishes (a receiver takes a
// message only once it is placed), so what arrives later (bounds, finishes,
// data nobody took) is recognised by its run number and dropped; routed
// messages sent and arrived are summed over the ranks in combine(), so data
// nobody received are reported as undelivered.
//
// Nothing the backend waits for is unbounded: a rank whose nodes stop
// moving before they finish, or a rank that stops answering (kill -STOP, a
// node program that never returns), ends the job after
// config::mpi_quiet_limit with a message naming it; a rank whose nodes work
// on without sending this one anything is asked, and waited for. The end of a run is an end marker
// from every rank to every other, so the ranks whose marker is missing are known; the collectives
// that combine the report are nonblocking and polled, and when one stalls the rank pings the
// others: those that do not answer are named.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

// The C API only: Open MPI's deprecated C++ bindings do not build cleanly.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <hcube/error.hpp>

#include "horizon.hpp"
#include "remote.hpp"
#include "router.hpp"
#include "state.hpp"

namespace hcube::detail {

namespace {

constexpr int data_tag = 7; // every message of the backend, in order

struct wire_header {
    std::int32_t kind; // data or end
    std::int32_t from; // data: the sending node
    std::int32_t dim;  // data: the link's dimension
    std::uint32_t type;
    double arrival_time; // the sender's vclock of the last word's arrival
    std::int64_t arrival_steps;
    std::uint64_t sent; // end: data messages this rank sent to the receiver
};
enum : std::int32_t { data_kind = 1, end_kind = 2 };

constexpr int routed_tag = 8; // routed traffic: a routed_header
// Liveness, when a wait has stalled: a ping is answered with a pong by
// whatever thread polls MPI on that rank (progress or a polled collective).
constexpr int ping_tag = 9, pong_tag = 10;

struct routed_header {
    std::int32_t kind;
    std::uint32_t run; // the run it belongs to; older ones are dropped
    std::int32_t source, dest;
    std::uint64_t seq;   // submit, data, placed: the message's; publish: the next one
    std::uint64_t trace; // submit: the sender's trace record
    std::uint64_t elem;
    std::uint64_t bytes; // the payload's, also where it went elsewhere
    std::uint32_t type;
    vclock wanted;   // submit, data
    vclock duration; // submit, data
    vclock bound;    // submit, data: the sender's new bound; publish: the bound;
                     // placed: the arrival
};
// Who sends what (remote.hpp): submit, publish, finish to rank 0; data to
// the receiver's rank; placed and used (routed traffic has begun) from rank 0;
// probe and status for forced placements (force_when_all_parked below).
enum : std::int32_t {
    submit_kind = 1,
    data_routed_kind,
    publish_kind,
    finish_kind,
    placed_kind,
    used_kind,
    probe_kind,    // rank 0 asks every rank for its status (seq: the wave)
    status_kind,   // the answer: dest 1 if idle, trace: sent, elem: received, bytes:
                   // its least chooser + 1 (0: none), bound: that one's candidate
    choosing_kind, // to rank 0: a node of the sender's rank chooses among sources
    choose_kind    // from rank 0: node `dest` takes its candidate (horizon.hpp)
};

void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        throw error(std::string("mpi backend: ") + what + " failed: " + std::string(text, len));
    }
}

void finalize_at_exit() {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}

// MPI is initialised by the program or here (then finalised at exit).
void join_mpi() {
    int up = 0;
    MPI_Initialized(&up);
    int provided = MPI_THREAD_SINGLE;
    if (!up) {
        check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
              "MPI_Init_thread");
        std::atexit(finalize_at_exit);
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED)
        throw usage_error("mpi backend: MPI was initialised with thread level " +
                          std::to_string(provided) +
                          "; hcube calls MPI from its node threads, one at a time, and needs "
                          "MPI_THREAD_SERIALIZED (MPI_Init_thread)");
}

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

template <spsc_link L>
class mpi_remote final : public remote {
public:
    explicit mpi_remote(machine_state& m)
        : m_(m) {
        join_mpi();
        check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &ranks_);
        if (!std::has_single_bit(unsigned(ranks_)) || ranks_ > m.p) {
            const std::string why = "mpi backend: " + std::to_string(ranks_) +
                                    " ranks cannot share a " + std::to_string(m.cfg.dim) +
                                    "-cube: the ranks must be a power of two from 1 to " +
                                    std::to_string(m.p);
            MPI_Comm_free(&comm_);
            throw usage_error(why);
        }
        const int per = m.p / ranks_;
        inner_ = std::countr_zero(unsigned(per));
        m.local_begin = rank_ * per;
        m.local_end = m.local_begin + per;
        sent_to_.assign(std::size_t(ranks_), 0);
        ended_from_.assign(std::size_t(ranks_), false);
    }

    void connect() override {
        for (int i = m_.local_begin; i < m_.local_end; ++i)
            for (int k = inner_; k < m_.cfg.dim; ++k) {
                outgoing_.push_back({&m_.out_link<L>(i, k), i, k});
                incoming_.push_back({&m_.out_link<L>(i ^ (1 << k), k), i, {}});
            }
    }

    ~mpi_remote() override {
        int done = 0;
        MPI_Finalized(&done);
        if (!done) MPI_Comm_free(&comm_);
    }

    int rank() const noexcept override { return rank_; }
    int ranks() const noexcept override { return ranks_; }

    bool progress() override {
        std::unique_lock turn(mu_, std::try_to_lock);
        return turn && progress_locked();
    }

    void begin_run() override {
        std::lock_guard lock(routed_mu_);
        ++run_;
        used_.store(false, std::memory_order_relaxed);
        choosing_ = false;
        outbox_.clear(); // what the last run's nodes said after it ended
        wave_open_ = false;
        last_.clear();
        shadows_.clear();
        early_.clear();
        routed_shipped_ = routed_received_ = 0;
    }

    bool routed_used() const noexcept override { return used_.load(std::memory_order_acquire); }

    // The data go to the receiver's rank; rank 0's router gets the message
    // itself if it is the receiver's rank, else a copy without the data (a
    // shadow) that it places in the receiver's stead.
    void submit_routed(routed_message& msg, vclock bound) override {
        const bool here = m_.is_local(msg.dest);
        const int to = rank_of(msg.dest);
        {
            std::lock_guard lock(routed_mu_);
            if (!here) {
                ++routed_shipped_;
                queue_routed(header_of(data_routed_kind, msg, bound), msg.payload(), msg.bytes, to);
            }
            if (rank_ != 0 && to != 0)
                queue_routed(header_of(submit_kind, msg, bound), nullptr, 0, 0);
        }
        start_routed();
        if (rank_ == 0) route(here ? msg : shadow_of(header_of(submit_kind, msg, bound)), bound);
    }

    void publish_routed(int id, std::uint64_t seq, vclock bound) override {
        std::lock_guard lock(routed_mu_);
        queue_routed({publish_kind, 0, id, 0, seq, 0, 0, 0, 0, {}, {}, bound}, nullptr, 0, 0);
    }

    void finish_routed(int id) override {
        std::lock_guard lock(routed_mu_);
        queue_routed({finish_kind, 0, id, 0, 0, 0, 0, 0, 0, {}, {}, {}}, nullptr, 0, 0);
    }

    void start_choosing() override {
        if (rank_ == 0) return;
        std::lock_guard lock(routed_mu_);
        queue_routed({choosing_kind, 0, rank_, 0, 0, 0, 0, 0, 0, {}, {}, {}}, nullptr, 0, 0);
    }

    // The router placed (ready) one or more of dest's shadows: their arrival
    // goes to dest's rank, in each source's send order.
    void placed_remote(int dest) noexcept override {
        std::lock_guard lock(routed_mu_);
        auto& list = shadows_[dest];
        for (auto it = list.begin(); it != list.end();) {
            if (!it->ready.load(std::memory_order_acquire)) {
                ++it;
                continue;
            }
            queue_routed(header_of(placed_kind, *it, it->arrival), nullptr, 0, rank_of(dest));
            it = list.erase(it);
        }
    }

    std::uint64_t finish() override {
        std::lock_guard turn(mu_); // nodes are done; a late one may still hold it
        progress_locked();         // this empties every outgoing link
        // An end marker to every rank, with the count of messages sent to it:
        // every rank's nodes are done once all have come; until then rank
        // 0's router may still be placing messages for them, and this rank's
        // finishes and bounds must reach it (remote.hpp).
        for (int peer = 0; peer < ranks_; ++peer)
            if (peer != rank_) {
                wire_header h{end_kind, rank_, 0, 0, 0, 0, sent_to_[std::size_t(peer)]};
                post(std::vector<std::byte>(sizeof h), h, peer);
            }
        // Ranks still working need not send this one anything: after each
        // quiet limit it asks them how far they are (activity), and ends the
        // job only when one does not answer or none moved since it last asked.
        auto quiet_since = std::chrono::steady_clock::now();
        std::vector<std::optional<std::uint64_t>> last(static_cast<std::size_t>(ranks_));
        for (idle_backoff idle; ended_ + 1 < std::size_t(ranks_);) {
            if (progress_locked()) {
                idle.reset();
                quiet_since = std::chrono::steady_clock::now();
                continue;
            }
            idle.pause();
            if (std::chrono::steady_clock::now() - quiet_since < m_.cfg.mpi_quiet_limit) continue;
            std::vector<int> missing;
            for (int r = 0; r < ranks_; ++r)
                if (r != rank_ && !ended_from_[std::size_t(r)]) missing.push_back(r);
            const auto now = ask_ranks(missing, nullptr);
            std::vector<int> silent;
            bool moved = false;
            for (const int r : missing) {
                const auto& a = now[std::size_t(r)];
                if (!a) silent.push_back(r);
                moved = moved || !last[std::size_t(r)] || *a != *last[std::size_t(r)];
                last[std::size_t(r)] = a;
            }
            const auto unfinished = [](const std::vector<int>& ranks) {
                return ranks_text(ranks) + (ranks.size() == 1 ? " has not finished its nodes"
                                                              : " have not finished their nodes");
            };
            if (!silent.empty())
                abort(unfinished(silent) + " and did not answer within " + quiet_limit_text() +
                      " (a node program that never returns, or a stopped rank?)");
            if (!moved)
                abort(unfinished(missing) + ": nothing moved for " + quiet_limit_text() +
                      " after this rank's finished (a node program that never returns?)");
            quiet_since = std::chrono::steady_clock::now();
        }
        retire_sends(true);
        // What arrived for nodes that had finished: undelivered, like what is
        // left in their links (machine.cpp drains those).
        std::uint64_t left = 0;
        for (auto& in : incoming_) {
            for (const descriptor& d : in.waiting) {
                ++left;
                if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
            }
            in.waiting.clear();
        }
        if (received_ != expected_)
            abort("received " + std::to_string(received_) + " messages, the other ranks sent " +
                  std::to_string(expected_));
        received_ = expected_ = 0;
        ended_ = 0;
        std::fill(ended_from_.begin(), ended_from_.end(), false);
        std::fill(sent_to_.begin(), sent_to_.end(), 0);
        return left;
    }

    std::uint64_t combine(run_report& r, std::uint64_t here) override {
        const char* stage = "combining the run's report";
        allreduce(r.node_time.data(), int(r.node_time.size()), MPI_DOUBLE, MPI_MAX, stage);
        allreduce(r.node_steps.data(), int(r.node_steps.size()), MPI_INT64_T, MPI_MAX, stage);
        // Other ranks' nodes' digests are 0 here.
        allreduce(r.node_digest.data(), int(r.node_digest.size()), MPI_UINT64_T, MPI_MAX, stage);
        std::vector<std::uint64_t> counts;
        counts.reserve(2 * r.links.size() + 4);
        for (const link_stats& l : r.links) {
            counts.push_back(l.messages);
            counts.push_back(l.bytes);
        }
        counts.push_back(r.routed_messages); // rank 0's router counted them all
        counts.push_back(routed_shipped_);
        counts.push_back(routed_received_);
        counts.push_back(here);
        allreduce(counts.data(), int(counts.size()), MPI_UINT64_T, MPI_SUM, stage);
        for (std::size_t i = 0; i < r.links.size(); ++i)
            r.links[i] = {counts[2 * i], counts[2 * i + 1]};
        r.routed_messages = counts[counts.size() - 4];
        // Routed messages shipped to another rank and never received there:
        // undelivered too.
        counts.back() += counts[counts.size() - 3] - counts[counts.size() - 2];
        auto events = std::uint64_t(r.congestion.size());
        bcast(&events, 1, MPI_UINT64_T, stage);
        r.congestion.resize(events);
        bcast(r.congestion.data(), int(events * sizeof(congestion_event)), MPI_BYTE, stage);
        const double wall = r.wall_seconds;
        r.rank_wall_seconds.resize(std::size_t(ranks_));
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Iallgather(&wall, 1, MPI_DOUBLE, r.rank_wall_seconds.data(), 1, MPI_DOUBLE, comm_,
                             &request),
              "MPI_Iallgather");
        wait(request, stage);
        r.wall_seconds = *std::max_element(r.rank_wall_seconds.begin(), r.rank_wall_seconds.end());
        return counts.back();
    }

    void gather_traces(std::int64_t origin) override {
        std::vector<std::byte> mine;
        for (int i = m_.local_begin; i < m_.local_end; ++i) {
            node_state& s = m_.nodes[i];
            for (call_record& c : s.calls) {
                c.wall_start -= origin;
                c.wall_end -= origin;
            }
            pack(mine, s.calls);
            pack(mine, s.trace);
            pack(mine, s.receipts);
        }
        const char* stage = "gathering the trace";
        std::vector<int> sizes(static_cast<std::size_t>(ranks_)), at(sizes.size());
        const int size = int(mine.size());
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Iallgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_, &request),
              "MPI_Iallgather");
        wait(request, stage);
        for (int r = 1; r < ranks_; ++r)
            at[std::size_t(r)] = at[std::size_t(r) - 1] + sizes[std::size_t(r) - 1];
        std::vector<std::byte> all(std::size_t(at.back() + sizes.back()));
        check(MPI_Iallgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), at.data(),
                              MPI_BYTE, comm_, &request),
              "MPI_Iallgatherv");
        wait(request, stage);
        const std::byte* from = all.data();
        for (int i = 0; i < m_.p; ++i) {
            node_state& s = m_.nodes[i];
            unpack(from, s.calls);
            unpack(from, s.trace);
            unpack(from, s.receipts);
            for (call_record& c : s.calls) {
                c.wall_start += origin;
                c.wall_end += origin;
            }
        }
        // Rank 0's router knows when every routed message arrived.
        std::vector<router::trace_fix> fixes = m_.routes.trace_fixes();
        auto count = std::uint64_t(fixes.size());
        bcast(&count, 1, MPI_UINT64_T, stage);
        fixes.resize(count);
        bcast(fixes.data(), int(count * sizeof(router::trace_fix)), MPI_BYTE, stage);
        for (const auto& fix : fixes)
            m_.nodes[fix.node].trace[fix.index].arrival = fix.arrival;
    }

    bool all(bool b) override {
        int every = b;
        allreduce(&every, 1, MPI_INT, MPI_LAND, "combining a verdict (machine::on_every_rank)");
        return every != 0;
    }

    [[noreturn]] void abort(const std::string& why) noexcept override {
        std::fprintf(stderr, "hcube: rank %d of %d: %s\n", rank_, ranks_, why.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::abort(); // MPI_Abort does not return
    }

private:
    struct out_link {
        L* link;
        int node; // the local sender
        int dim;
    };
    struct in_link {
        L* link;
        int node;                       // the local receiver
        std::deque<descriptor> waiting; // arrived while the link was full
    };
    struct send {
        std::vector<std::byte> buffer;
        MPI_Request request;
    };
    struct routed_out {
        std::vector<std::byte> buffer; // payload, routed_header
        int peer;
    };

    bool progress_locked() {
        bool moved = false;
        if (!m_.cancelled.load(std::memory_order_acquire))
            for (auto& o : outgoing_)
                while (!o.link->empty()) {
                    ship(o);
                    moved = true;
                }
        {
            std::vector<routed_out> batch;
            {
                std::lock_guard lock(routed_mu_);
                batch.swap(outbox_);
            }
            for (routed_out& o : batch)
                isend(std::move(o.buffer), o.peer, routed_tag);
            moved |= !batch.empty();
        }
        moved |= receive_all();
        for (auto& in : incoming_)
            while (!in.waiting.empty() && in.link->writable()) {
                deliver(in, in.waiting.front());
                in.waiting.pop_front();
                moved = true;
            }
        force_when_all_parked();
        retire_sends(false);
        return moved;
    }

    // Pops the front message of a local node's link to another rank and
    // sends it; the payload is copied out before the pop releases the
    // sender's buffer (a borrowed one may be reused at once after it).
    void ship(out_link& o) {
        const descriptor& d = o.link->front();
        std::vector<std::byte> buffer(d.bytes + sizeof(wire_header));
        const bool borrowed = d.kind == payload::borrowed;
        if (borrowed) { // as node.cpp's take: a cancelled sender waits for the copy
            o.link->reading().store(true, std::memory_order_seq_cst);
            if (m_.cancelled.load(std::memory_order_seq_cst)) {
                o.link->reading().store(false, std::memory_order_release);
                return; // the run is over; machine.cpp drains the link
            }
        }
        if (d.kind == payload::inline_bytes)
            d.load_inline(buffer.data());
        else if (d.bytes)
            std::memcpy(buffer.data(), d.ptr, d.bytes);
        if (borrowed) o.link->reading().store(false, std::memory_order_release);
        if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
        const wire_header h{data_kind, o.node, o.dim, d.type, d.arrival.time, d.arrival.steps, 0};
        o.link->pop();
        m_.wake(m_.nodes[o.node]);
        const int peer = rank_of(o.node ^ (1 << o.dim));
        ++sent_to_[std::size_t(peer)];
        post(std::move(buffer), h, peer);
    }

    void post(std::vector<std::byte> buffer, const wire_header& h, int peer) {
        std::memcpy(buffer.data() + buffer.size() - sizeof h, &h, sizeof h);
        isend(std::move(buffer), peer, data_tag);
    }

    void isend(std::vector<std::byte> buffer, int peer, int tag, bool counted = true) {
        if (counted) ++messages_sent_;
        sends_.push_back({std::move(buffer), MPI_REQUEST_NULL});
        send& s = sends_.back();
        check(MPI_Isend(s.buffer.data(), int(s.buffer.size()), MPI_BYTE, peer, tag, comm_,
                        &s.request),
              "MPI_Isend");
    }

    static bool completed(MPI_Request& request) {
        int done = 0;
        check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        return done != 0;
    }

    void retire_sends(bool all) {
        while (!sends_.empty()) {
            if (all)
                wait(sends_.front().request, "sending the run's last messages");
            else if (!completed(sends_.front().request))
                return;
            sends_.pop_front();
        }
    }

    // ---- bounded waits ---------------------------------------------------

    void allreduce(void* data, int count, MPI_Datatype type, MPI_Op op, const char* stage) {
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm_, &request),
              "MPI_Iallreduce");
        wait(request, stage);
    }

    void bcast(void* data, int count, MPI_Datatype type, const char* stage) {
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Ibcast(data, count, type, 0, comm_, &request), "MPI_Ibcast");
        wait(request, stage);
    }

    // Polls `request` to completion, answering other ranks' pings meanwhile;
    // after config::mpi_quiet_limit asks every rank whether it is alive and
    // ends the job naming those that do not answer.
    void wait(MPI_Request& request, const char* stage) {
        const auto start = std::chrono::steady_clock::now();
        for (idle_backoff idle; !completed(request);) {
            if (answer_pings()) {
                idle.reset();
                continue;
            }
            idle.pause();
            if (std::chrono::steady_clock::now() - start < m_.cfg.mpi_quiet_limit) continue;
            std::vector<int> others, silent;
            for (int r = 0; r < ranks_; ++r)
                if (r != rank_) others.push_back(r);
            const auto answers = ask_ranks(others, &request);
            if (completed(request)) return;
            for (const int r : others)
                if (!answers[std::size_t(r)]) silent.push_back(r);
            abort(silent.empty()
                      ? std::string(stage) + " did not complete within " + quiet_limit_text() +
                            ", though every rank answers"
                      : ranks_text(silent) + " did not answer within " + quiet_limit_text() +
                            " while " + stage + " (a stopped or hung rank?)");
        }
    }

    // Answers the pings that have come; true if there were any.
    bool answer_pings() {
        bool any = false;
        for (;;) {
            int flag = 0;
            MPI_Status st;
            check(MPI_Iprobe(MPI_ANY_SOURCE, ping_tag, comm_, &flag, &st), "MPI_Iprobe");
            if (!flag) return any;
            take_liveness(st);
            any = true;
        }
    }

    // What this rank has done: its nodes' parks and the messages it moved
    // between ranks (not the pings). It rises while the rank's nodes work.
    std::uint64_t activity() const {
        std::uint64_t a = messages_sent_ + messages_received_;
        for (int i = m_.local_begin; i < m_.local_end; ++i)
            a += m_.nodes[i].park_epoch.load(std::memory_order_relaxed);
        return a;
    }

    // A ping asks a question; its pong answers it with the rank's activity().
    struct liveness {
        std::uint64_t question = 0, activity = 0;
        std::vector<std::byte> bytes() const {
            std::vector<std::byte> out(sizeof *this);
            std::memcpy(out.data(), this, sizeof *this);
            return out;
        }
    };

    // Receives a ping (answered) or a pong (returned).
    liveness take_liveness(const MPI_Status& st) {
        liveness l;
        check(MPI_Recv(&l, sizeof l, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
        if (st.MPI_TAG == ping_tag)
            isend(liveness{l.question, activity()}.bytes(), st.MPI_SOURCE, pong_tag, false);
        return l;
    }

    // Pings `whom` and waits up to the quiet limit for their pongs: each
    // rank's activity, by rank, or none for those that sent none. Stops early
    // if `request` (when given) completes meanwhile.
    std::vector<std::optional<std::uint64_t>> ask_ranks(const std::vector<int>& whom,
                                                        MPI_Request* request) {
        std::vector<std::optional<std::uint64_t>> answers(static_cast<std::size_t>(ranks_));
        const liveness ping{++questions_, 0};
        for (const int r : whom)
            isend(ping.bytes(), r, ping_tag, false);
        std::size_t pending = whom.size();
        const auto until = std::chrono::steady_clock::now() + m_.cfg.mpi_quiet_limit;
        for (idle_backoff idle; pending > 0 && std::chrono::steady_clock::now() < until;) {
            answer_pings();
            int flag = 0;
            MPI_Status st;
            check(MPI_Iprobe(MPI_ANY_SOURCE, pong_tag, comm_, &flag, &st), "MPI_Iprobe");
            if (flag) {
                const liveness pong = take_liveness(st);
                auto& answer = answers[std::size_t(st.MPI_SOURCE)];
                if (pong.question != ping.question || answer) continue; // an earlier question's
                answer = pong.activity;
                --pending;
                continue;
            }
            if (request && completed(*request)) break;
            idle.pause();
        }
        return answers;
    }

    // "rank 3", "ranks 1, 3".
    static std::string ranks_text(const std::vector<int>& ranks) {
        std::string s = ranks.size() == 1 ? "rank" : "ranks";
        for (std::size_t i = 0; i < ranks.size(); ++i)
            s += (i ? ", " : " ") + std::to_string(ranks[i]);
        return s;
    }

    std::string quiet_limit_text() const {
        return std::to_string(m_.cfg.mpi_quiet_limit.count()) + " ms (config::mpi_quiet_limit)";
    }

    bool receive_all() {
        bool moved = false;
        for (;;) {
            int flag = 0;
            MPI_Status st;
            check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &st), "MPI_Iprobe");
            if (!flag) return moved;
            if (st.MPI_TAG == routed_tag) {
                moved |= receive_routed(st);
                continue;
            }
            if (st.MPI_TAG == ping_tag || st.MPI_TAG == pong_tag) {
                take_liveness(st);
                continue;
            }
            moved = true;
            ++messages_received_;
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            const std::size_t bytes = std::size_t(count) - sizeof(wire_header);
            // Large payloads land in the heap buffer the receiver will free.
            const bool heap = bytes > descriptor::inline_capacity;
            std::byte* at = small_;
            if (heap) {
                at = static_cast<std::byte*>(payload_alloc(std::size_t(count)));
                if (!at)
                    abort("out of memory for a message of " + std::to_string(bytes) + " bytes");
            }
            check(MPI_Recv(at, count, MPI_BYTE, st.MPI_SOURCE, data_tag, comm_, MPI_STATUS_IGNORE),
                  "MPI_Recv");
            wire_header h;
            std::memcpy(&h, at + bytes, sizeof h);
            moved = true;
            if (h.kind == end_kind) {
                ++ended_;
                ended_from_[std::size_t(st.MPI_SOURCE)] = true;
                expected_ += h.sent;
                continue;
            }
            ++received_;
            descriptor a;
            a.arrival = {h.arrival_time, h.arrival_steps};
            a.bytes = std::uint32_t(bytes);
            a.type = h.type;
            if (heap) {
                a.kind = payload::heap;
                a.ptr = at;
            } else {
                a.kind = payload::inline_bytes;
                a.store_inline(at, bytes);
            }
            in_link& in = incoming_[index_of(h.from ^ (1 << h.dim), h.dim)];
            if (in.waiting.empty() && in.link->writable())
                deliver(in, a);
            else
                in.waiting.push_back(a);
        }
    }

    // False for what moves no node: probes, statuses, a past run's traffic.
    bool receive_routed(const MPI_Status& st) {
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        std::vector<unsigned char> data(static_cast<std::size_t>(count));
        check(MPI_Recv(data.data(), count, MPI_BYTE, st.MPI_SOURCE, routed_tag, comm_,
                       MPI_STATUS_IGNORE),
              "MPI_Recv");
        routed_header h;
        const std::size_t bytes = data.size() - sizeof h;
        std::memcpy(&h, data.data() + bytes, sizeof h);
        if (h.run != run_) return false; // a late bound, finish or untaken message of a past run
        if (h.kind == probe_kind) {
            answer_probe(h.seq);
            return false;
        }
        if (h.kind == status_kind) {
            take_status(h);
            return false;
        }
        ++messages_received_;
        start_routed();
        std::vector<int> woken;
        switch (h.kind) {
        case submit_kind:
            route(shadow_of(h), h.bound);
            break;
        case data_routed_kind:
            data.resize(bytes);
            arrived(h, std::move(data));
            break;
        case publish_kind:
            m_.routes.publish(h.source, h.seq, h.bound, woken);
            m_.wake_each(woken);
            break;
        case finish_kind:
            m_.routes.finish(h.source, woken);
            m_.wake_each(woken);
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
            break; // used_kind: start_routed() above
        }
        return true;
    }

    // ---- forced placements (router.hpp: force) ---------------------------
    //
    // The router may force a placement only when every unfinished node of the
    // machine is parked and nothing is in flight, which no rank sees alone.
    // Rank 0 asks in waves (Mattern's four counters): every rank answers with
    // whether its nodes are all parked (or done) and how many messages it has
    // sent and received, probes and statuses not counted. Two waves in a row
    // in which every rank is idle, the sums of sent and received agree and
    // nobody's counts changed mean that nothing moved in between and nothing
    // was in flight: then the router forces one placement, as in one process.
    //
    //   rank 0 --probe w--> every rank --status w (idle, sent, received)--> rank 0
    //   waves w-1 and w: all idle, balanced, the same counts  =>  force

    bool idle() {
        for (int i = m_.local_begin; i < m_.local_end; ++i) {
            const node_state& s = m_.nodes[i];
            if (s.done.load(std::memory_order_acquire)) continue;
            if (m_.inline_node ? !m_.inline_waiting : !s.parked_unrung()) return false;
        }
        for (const auto& o : outgoing_)
            if (!o.link->empty()) return false;
        std::lock_guard lock(routed_mu_);
        return outbox_.empty();
    }

    routed_header status_now(std::uint64_t wave) {
        routed_header h{status_kind,        run_, rank_, 0,  wave, messages_sent_,
                        messages_received_, 0,    0,     {}, {},   {}};
        h.dest = idle() ? 1 : 0;
        if (const int who = h.dest ? least_chooser(m_) : -1; who >= 0) {
            h.bytes = std::uint64_t(who) + 1;
            h.bound = {m_.nodes[who].pending_choice.load().arrival, 0};
        }
        return h;
    }

    void answer_probe(std::uint64_t wave) {
        const routed_header h = status_now(wave);
        std::vector<std::byte> buffer(sizeof h);
        std::memcpy(buffer.data(), &h, sizeof h);
        isend(std::move(buffer), 0, routed_tag, false);
    }

    void take_status(const routed_header& h) {
        if (!wave_open_ || h.seq != wave_) return; // an answer to an abandoned wave
        statuses_[std::size_t(h.source)] = h;
        if (++answers_ == ranks_) end_wave();
    }

    // Rank 0, from progress(): starts a wave when a routed message waits or
    // a node chooses, and this rank's own nodes are idle, at most every
    // wave_gap.
    void force_when_all_parked() {
        if (rank_ != 0 || wave_open_) return;
        const bool choosing = choosing_ || m_.choosing.load(std::memory_order_relaxed);
        if (!choosing && !used_.load(std::memory_order_acquire)) return;
        if (std::chrono::steady_clock::now() < next_wave_) return;
        if ((!choosing && !m_.routes.has_pending()) || !idle()) {
            last_.clear();
            return;
        }
        wave_open_ = true;
        ++wave_;
        answers_ = 0;
        statuses_.assign(std::size_t(ranks_), {});
        const routed_header probe{probe_kind, run_, 0, 0, wave_, 0, 0, 0, 0, {}, {}, {}};
        for (int r = 1; r < ranks_; ++r) {
            std::vector<std::byte> buffer(sizeof probe);
            std::memcpy(buffer.data(), &probe, sizeof probe);
            isend(std::move(buffer), r, routed_tag, false);
        }
        take_status(status_now(wave_));
    }

    void end_wave() {
        wave_open_ = false;
        next_wave_ = std::chrono::steady_clock::now() + wave_gap;
        std::uint64_t sent = 0, received = 0;
        bool all_idle = true;
        std::vector<std::uint64_t> counts;
        for (const routed_header& h : statuses_) {
            all_idle &= h.dest == 1;
            sent += h.trace;
            received += h.elem;
            counts.push_back(h.trace);
            counts.push_back(h.elem);
        }
        if (!all_idle || sent != received) {
            last_.clear();
            return;
        }
        if (counts != last_) {
            last_ = std::move(counts); // once more, to see that nothing moved
            next_wave_ = std::chrono::steady_clock::now();
            return;
        }
        last_.clear();
        // As one process's last_parked: the least chooser takes its
        // candidate unless a routed message wants to start before it.
        const routed_header* least = nullptr;
        for (const routed_header& h : statuses_)
            if (h.bytes && (!least || h.bound.time < least->bound.time ||
                            (h.bound.time == least->bound.time && h.bytes < least->bytes)))
                least = &h;
        if (least && !m_.routes.pending_before(least->bound.time)) {
            const int who = int(least->bytes - 1);
            if (least->source == 0) return force_choice(m_, m_.nodes[who]);
            std::lock_guard lock(routed_mu_);
            return queue_routed({choose_kind, 0, 0, who, 0, 0, 0, 0, 0, {}, {}, {}}, nullptr, 0,
                                least->source);
        }
        std::vector<int> woken;
        if (m_.routes.force(woken)) m_.wake_each(woken);
    }

    // The first routed traffic of the run this rank hears of. From now on its
    // nodes publish their bounds and finishes; those that parked or finished
    // before told rank 0's router nothing, so the parked are woken (they
    // publish as they park again) and the finished are reported. Rank 0 tells
    // every rank.
    void start_routed() {
        if (used_.load(std::memory_order_acquire) || used_.exchange(true)) return;
        if (rank_ == 0) {
            std::lock_guard lock(routed_mu_);
            for (int r = 1; r < ranks_; ++r)
                queue_routed({used_kind, 0, 0, 0, 0, 0, 0, 0, 0, {}, {}, {}}, nullptr, 0, r);
        }
        // Pairs with the fence in node.cpp's route_finish: a node that
        // finishes now is reported by this loop, by itself, or by both.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        for (int i = m_.local_begin; i < m_.local_end; ++i) {
            if (!m_.nodes[i].done.load(std::memory_order_relaxed))
                m_.wake(m_.nodes[i]);
            else if (rank_ != 0) // rank 0's router heard every finish
                finish_routed(i);
        }
    }

    static routed_header header_of(std::int32_t kind, const routed_message& msg, vclock bound) {
        return {kind,     0,         msg.source, msg.dest,   msg.seq,      msg.trace,
                msg.elem, msg.bytes, msg.type,   msg.wanted, msg.duration, bound};
    }

    // Under routed_mu_; the next progress() sends it.
    void queue_routed(routed_header h, const void* data, std::size_t bytes, int peer) {
        h.run = run_;
        std::vector<std::byte> buffer(bytes + sizeof h);
        if (bytes) std::memcpy(buffer.data(), data, bytes);
        std::memcpy(buffer.data() + bytes, &h, sizeof h);
        outbox_.push_back({std::move(buffer), peer});
    }

    static void describe(routed_message& msg, const routed_header& h) {
        msg.source = h.source;
        msg.dest = h.dest;
        msg.seq = h.seq;
        msg.trace = h.trace;
        msg.elem = h.elem;
        msg.bytes = h.bytes;
        msg.type = h.type;
        msg.wanted = h.wanted;
        msg.duration = h.duration;
    }

    // Rank 0: what its router places for a message whose data went to
    // another rank.
    routed_message& shadow_of(const routed_header& h) {
        std::lock_guard lock(routed_mu_);
        routed_message& shadow = shadows_[h.dest].emplace_back();
        describe(shadow, h);
        return shadow;
    }

    // Rank 0: into the router, and wakes whom its placements concern.
    void route(routed_message& msg, vclock bound) {
        std::vector<int> woken;
        m_.routes.submit(msg, bound, woken);
        m_.wake_each(woken);
    }

    static void set_placed(routed_message& msg, vclock arrival) {
        msg.arrival = arrival;
        msg.unplaced = 0;
        msg.ready.store(true, std::memory_order_release);
    }

    // A routed message for a local node: into its inbox, unplaced until the
    // router places it (here on rank 0, or a placed message says so, maybe
    // one that came first).
    void arrived(const routed_header& h, std::vector<unsigned char> data) {
        node_state& d = m_.nodes[h.dest];
        routed_message* msg;
        {
            std::lock_guard lock(d.routed_mu);
            msg = &d.routed_in.push(h.source);
            describe(*msg, h);
            msg->data = std::move(data);
            if (const auto it = early_.find({h.dest, h.source, h.seq}); it != early_.end()) {
                set_placed(*msg, it->second);
                early_.erase(it);
            }
        }
        {
            std::lock_guard lock(routed_mu_);
            ++routed_received_;
        }
        if (rank_ == 0) route(*msg, h.bound);
        m_.wake(d);
    }

    void placed(const routed_header& h) {
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
        m_.wake(d);
    }

    void deliver(in_link& in, const descriptor& d) {
        in.link->back() = d;
        in.link->publish();
        m_.wake(m_.nodes[in.node]);
    }

    int rank_of(int node) const noexcept { return node >> inner_; }
    std::size_t index_of(int local_node, int dim) const noexcept {
        const int outer = m_.cfg.dim - inner_;
        return std::size_t(local_node - m_.local_begin) * std::size_t(outer) +
               std::size_t(dim - inner_);
    }

    machine_state& m_;
    std::mutex mu_; // one thread in MPI and in the cross-rank links at a time
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, ranks_ = 1;
    int inner_ = 0; // dimensions inside a rank: log(p / R)
    std::vector<out_link> outgoing_;
    std::vector<in_link> incoming_; // index_of(receiver, dim)
    std::vector<std::uint64_t> sent_to_;
    std::deque<send> sends_;
    std::size_t ended_ = 0;        // end markers received this run
    std::vector<bool> ended_from_; // by rank
    std::uint64_t received_ = 0, expected_ = 0;
    alignas(16) std::byte small_[descriptor::inline_capacity + sizeof(wire_header)];

    // Routed traffic (remote.hpp). routed_mu_ guards the outbox, the shadows
    // and the counts: nodes and progress() use them.
    std::mutex routed_mu_;
    std::uint32_t run_ = 0;
    std::atomic<bool> used_{false};
    bool choosing_ = false; // rank 0: another rank's node chooses (progress() only)
    std::vector<routed_out> outbox_;
    std::unordered_map<int, std::list<routed_message>> shadows_; // rank 0, by receiver
    // Placements that came before their data, by (receiver, source, seq);
    // progress() only.
    std::map<std::tuple<int, int, std::uint64_t>, vclock> early_;
    std::uint64_t routed_shipped_ = 0, routed_received_ = 0; // to and from other ranks

    // Forced placements; progress() only.
    static constexpr auto wave_gap = std::chrono::microseconds(200);
    std::uint64_t messages_sent_ = 0, messages_received_ = 0; // probes, statuses not counted
    std::uint64_t questions_ = 0;                             // pings sent (ask_ranks)
    std::uint64_t wave_ = 0;
    bool wave_open_ = false;
    int answers_ = 0;
    std::vector<routed_header> statuses_; // rank 0: this wave's, by rank
    std::vector<std::uint64_t> last_;     // rank 0: the last wave's counts, if all idle
    std::chrono::steady_clock::time_point next_wave_{};
};

} // namespace

std::unique_ptr<remote> make_mpi_remote(machine_state& m) {
    return m.with_links([&]<class L>(std::type_identity<L>) -> std::unique_ptr<remote> {
        return std::make_unique<mpi_remote<L>>(m);
    });
}

} // namespace hcube::detail
