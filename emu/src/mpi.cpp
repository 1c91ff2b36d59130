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
// MPI keeps the order of messages between two ranks on one communicator and
// tag, so a link's messages arrive in FIFO order, and a rank's end-of-run
// marker arrives after everything it sent in that run.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

// The C API only: Open MPI's deprecated C++ bindings do not build cleanly.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <hcube/error.hpp>

#include "remote.hpp"
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
        for (int i = m.local_begin; i < m.local_end; ++i)
            for (int k = inner_; k < m.cfg.dim; ++k) {
                outgoing_.push_back({&m.out_link<L>(i, k), i, k});
                incoming_.push_back({&m.out_link<L>(i ^ (1 << k), k), i, {}});
            }
        for (int k = inner_; k < m.cfg.dim; ++k)
            peers_.push_back(rank_ ^ (1 << (k - inner_)));
        sent_to_.assign(std::size_t(ranks_), 0);
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

    std::uint64_t finish() override {
        std::lock_guard turn(mu_); // nodes are done; a late one may still hold it
        progress_locked();         // this empties every outgoing link
        for (const int peer : peers_) {
            wire_header h{end_kind, rank_, 0, 0, 0, 0, sent_to_[std::size_t(peer)]};
            post(std::vector<std::byte>(sizeof h), h, peer);
        }
        for (idle_backoff idle; ended_ < peers_.size();)
            progress_locked() ? idle.reset() : idle.pause();
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
        std::fill(sent_to_.begin(), sent_to_.end(), 0);
        return left;
    }

    std::uint64_t combine(run_report& r, std::uint64_t here) override {
        check(MPI_Allreduce(MPI_IN_PLACE, r.node_time.data(), int(r.node_time.size()), MPI_DOUBLE,
                            MPI_MAX, comm_),
              "MPI_Allreduce");
        check(MPI_Allreduce(MPI_IN_PLACE, r.node_steps.data(), int(r.node_steps.size()),
                            MPI_INT64_T, MPI_MAX, comm_),
              "MPI_Allreduce");
        std::vector<std::uint64_t> counts;
        counts.reserve(2 * r.links.size() + 1);
        for (const link_stats& l : r.links) {
            counts.push_back(l.messages);
            counts.push_back(l.bytes);
        }
        counts.push_back(here);
        check(MPI_Allreduce(MPI_IN_PLACE, counts.data(), int(counts.size()), MPI_UINT64_T, MPI_SUM,
                            comm_),
              "MPI_Allreduce");
        for (std::size_t i = 0; i < r.links.size(); ++i)
            r.links[i] = {counts[2 * i], counts[2 * i + 1]};
        double wall = r.wall_seconds;
        check(MPI_Allreduce(&wall, &r.wall_seconds, 1, MPI_DOUBLE, MPI_MAX, comm_),
              "MPI_Allreduce");
        return counts.back();
    }

    bool all(bool b) override {
        int mine = b, every = 0;
        check(MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, comm_), "MPI_Allreduce");
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

    bool progress_locked() {
        bool moved = false;
        if (!m_.cancelled.load(std::memory_order_acquire))
            for (auto& o : outgoing_)
                while (!o.link->empty()) {
                    ship(o);
                    moved = true;
                }
        moved |= receive_all();
        for (auto& in : incoming_)
            while (!in.waiting.empty() && in.link->writable()) {
                deliver(in, in.waiting.front());
                in.waiting.pop_front();
                moved = true;
            }
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
        sends_.push_back({std::move(buffer), MPI_REQUEST_NULL});
        send& s = sends_.back();
        check(MPI_Isend(s.buffer.data(), int(s.buffer.size()), MPI_BYTE, peer, data_tag, comm_,
                        &s.request),
              "MPI_Isend");
    }

    void retire_sends(bool all) {
        while (!sends_.empty()) {
            int done = 0;
            if (all)
                check(MPI_Wait(&sends_.front().request, MPI_STATUS_IGNORE), "MPI_Wait");
            else
                check(MPI_Test(&sends_.front().request, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (!all && !done) return;
            sends_.pop_front();
        }
    }

    bool receive_all() {
        bool moved = false;
        for (;;) {
            int flag = 0;
            MPI_Status st;
            check(MPI_Iprobe(MPI_ANY_SOURCE, data_tag, comm_, &flag, &st), "MPI_Iprobe");
            if (!flag) return moved;
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
    std::vector<int> peers_;        // the ranks this one shares links with
    std::vector<std::uint64_t> sent_to_;
    std::deque<send> sends_;
    std::size_t ended_ = 0; // end markers received this run
    std::uint64_t received_ = 0, expected_ = 0;
    alignas(16) std::byte small_[descriptor::inline_capacity + sizeof(wire_header)];
};

} // namespace

std::unique_ptr<remote> make_mpi_remote(machine_state& m) {
    return m.with_links([&]<class L>(std::type_identity<L>) -> std::unique_ptr<remote> {
        return std::make_unique<mpi_remote<L>>(m);
    });
}

} // namespace hcube::detail
