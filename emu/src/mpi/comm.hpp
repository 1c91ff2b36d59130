// The MPI plumbing of the backend: joining the job, nonblocking sends kept
// until they complete, and waits that never hang: a stalled wait asks the
// other ranks whether they are alive and ends the job naming those that are
// not. MPI is called by one thread at a time (the backend's progress lock):
// the job needs MPI_THREAD_SERIALIZED. Private to emu/src/mpi.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// The C API only: Open MPI's deprecated C++ bindings do not build cleanly.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include "../sys/barrier.hpp"

namespace hcube::detail::mpi {

// Throws error naming the call when rc is not MPI_SUCCESS.
void check(int rc, const char* what);

// How a thread waits while it polls MPI: yields first (a partner usually
// answers within microseconds), then short sleeps, so ranks that outnumber the
// cores (mpirun --oversubscribe) leave them to the nodes. Where they do not
// (`spin`), it first spins, as MPI's own waits do: a yield is a system call,
// and one per round made a one-word exchange between two ranks three times
// slower.
class idle_backoff {
public:
    explicit idle_backoff(bool spin = false) noexcept
        : spins_(spin ? spins : 0) {}
    void reset() noexcept { rounds_ = 0; }
    void pause() noexcept {
        if (++rounds_ < spins_)
            cpu_relax();
        else if (rounds_ < spins_ + yields)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(20));
    }

private:
    static constexpr int spins = 20000, yields = 200;
    int spins_;
    int rounds_ = 0;
};

class comm {
public:
    // Joins the job (initialises MPI if the program did not; then finalises it
    // at exit) on a communicator of its own. `quiet_limit` bounds every wait;
    // `activity` is what this rank has done so far, for the liveness answers.
    comm(std::chrono::milliseconds quiet_limit, std::function<std::uint64_t()> activity);
    ~comm();
    comm(const comm&) = delete;
    comm& operator=(const comm&) = delete;

    int rank() const noexcept { return rank_; }
    int ranks() const noexcept { return ranks_; }
    // Whether some host runs more of the job's ranks than it has CPUs.
    bool oversubscribed() const noexcept { return oversubscribed_; }
    MPI_Comm handle() const noexcept { return comm_; }
    // The links' messages travel on a communicator of their own, so that a
    // probe for anything else never sees them (posted_receives.hpp).
    MPI_Comm links_handle() const noexcept { return links_; }

    // Sends `buffer` (kept until the send completes). Counted sends are this
    // rank's activity; liveness and wave messages are not.
    void isend(std::vector<std::byte> buffer, int peer, int tag, bool counted = true);
    // On the links' communicator, in pieces of piece_bytes (wire.hpp), each
    // counted.
    void isend_link(std::vector<std::byte> buffer, int peer, int tag);
    // On the links' communicator: the receives of isend_link's pieces into a
    // buffer the caller keeps until every one of `pieces` completes.
    void irecv_link_into(void* at, std::size_t bytes, int source, int tag,
                         std::vector<MPI_Request>& pieces);
    static bool completed(MPI_Request& request);
    // Forgets the completed sends, in order; with `all`, waits for every one.
    void retire_sends(bool all);
    // The bytes of the message st describes (a probe's).
    static std::size_t bytes_in(const MPI_Status& st);
    // A message of `bytes` bytes from st's source and tag into `at`.
    void receive(void* at, std::size_t bytes, const MPI_Status& st);
    // The same without waiting: `request` completes when it has landed.
    void irecv(void* at, std::size_t bytes, const MPI_Status& st, MPI_Request& request);
    void count_received() noexcept { ++received_; }
    std::uint64_t sent() const noexcept { return sent_; }
    std::uint64_t received() const noexcept { return received_; }

    // Collectives that answer pings while they wait (stage names the wait in
    // the message when it stalls).
    void allreduce(void* data, int count, MPI_Datatype type, MPI_Op op, const char* stage);
    void bcast(void* data, int count, MPI_Datatype type, const char* stage);
    void allgather(const void* mine, void* all, int bytes_each, const char* stage);
    void allgatherv(const void* mine, int bytes, void* all, const int* sizes, const int* at,
                    const char* stage);
    // Polls `request` to completion; after the quiet limit asks every rank
    // whether it is alive and ends the job naming those that do not answer.
    void wait(MPI_Request& request, const char* stage);

    // Liveness: receives a ping (answered) or a pong (returned, by rank).
    void take_liveness(const MPI_Status& st);
    // Answers the pings that have come; true if there were any.
    bool answer_pings();
    // Pings `whom` and waits up to the quiet limit for their pongs: each
    // rank's activity, by rank, or none for those that sent none. Stops early
    // if `request` (when given) completes meanwhile.
    std::vector<std::optional<std::uint64_t>> ask_ranks(const std::vector<int>& whom,
                                                        MPI_Request* request);

    // "rank 3", "ranks 1, 3".
    static std::string ranks_text(const std::vector<int>& ranks);
    std::string quiet_limit_text() const;

    // Ends the whole job: `why`, prefixed with this rank, on stderr, then
    // MPI_Abort. For failures other ranks cannot see.
    [[noreturn]] void abort(const std::string& why) const noexcept;

private:
    struct liveness {
        std::uint64_t question = 0, activity = 0;
    };
    struct send {
        std::vector<std::byte> buffer;
        MPI_Request request;
    };
    liveness take(const MPI_Status& st);

    std::chrono::milliseconds quiet_limit_;
    std::function<std::uint64_t()> activity_;
    MPI_Comm comm_ = MPI_COMM_NULL, links_ = MPI_COMM_NULL;
    int rank_ = 0, ranks_ = 1;
    bool oversubscribed_ = false;
    std::deque<send> sends_;
    std::uint64_t sent_ = 0, received_ = 0; // counted messages
    std::uint64_t questions_ = 0;           // pings sent (ask_ranks)
};

} // namespace hcube::detail::mpi
