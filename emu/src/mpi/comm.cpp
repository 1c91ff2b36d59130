// The MPI plumbing of the backend (comm.hpp).
#include "comm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <hcube/error.hpp>

#include "wire.hpp"

namespace hcube::detail::mpi {

namespace {

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

} // namespace

void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        throw error(std::string("mpi backend: ") + what + " failed: " + std::string(text, len));
    }
}

comm::comm(std::chrono::milliseconds quiet_limit, std::function<std::uint64_t()> activity)
    : quiet_limit_(quiet_limit)
    , activity_(std::move(activity)) {
    join_mpi();
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &links_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
    // The ranks that share this host's memory, against its CPUs online (not
    // this rank's affinity: mpirun binds each rank to one of them).
    MPI_Comm host = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host),
          "MPI_Comm_split_type");
    int here = 1;
    MPI_Comm_size(host, &here);
    MPI_Comm_free(&host);
    int over = here > int(std::max(1u, std::thread::hardware_concurrency()));
    check(MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_LOR, comm_), "MPI_Allreduce");
    oversubscribed_ = over != 0;
}

comm::~comm() {
    int done = 0;
    MPI_Finalized(&done);
    if (done) return;
    MPI_Comm_free(&links_);
    MPI_Comm_free(&comm_);
}

void comm::isend(std::vector<std::byte> buffer, int peer, int tag, bool counted) {
    isend_on(comm_, std::move(buffer), peer, tag, counted);
}

void comm::isend_link(std::vector<std::byte> buffer, int peer, int tag) {
    isend_on(links_, std::move(buffer), peer, tag, true);
}

void comm::irecv_link_into(void* at, std::size_t bytes, int source, int tag, MPI_Request& request) {
    check(MPI_Irecv(at, int(bytes), MPI_BYTE, source, tag, links_, &request), "MPI_Irecv");
}

void comm::isend_on(MPI_Comm on, std::vector<std::byte> buffer, int peer, int tag, bool counted) {
    if (counted) ++sent_;
    sends_.push_back({std::move(buffer), MPI_REQUEST_NULL});
    send& s = sends_.back();
    check(MPI_Isend(s.buffer.data(), int(s.buffer.size()), MPI_BYTE, peer, tag, on, &s.request),
          "MPI_Isend");
}

bool comm::completed(MPI_Request& request) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
}

void comm::retire_sends(bool all) {
    while (!sends_.empty()) {
        if (all)
            wait(sends_.front().request, "sending the run's last messages");
        else if (!completed(sends_.front().request))
            return;
        sends_.pop_front();
    }
}

void comm::receive(void* at, int count, const MPI_Status& st) {
    check(MPI_Recv(at, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE),
          "MPI_Recv");
}

void comm::allreduce(void* data, int count, MPI_Datatype type, MPI_Op op, const char* stage) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm_, &request), "MPI_Iallreduce");
    wait(request, stage);
}

void comm::bcast(void* data, int count, MPI_Datatype type, const char* stage) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibcast(data, count, type, 0, comm_, &request), "MPI_Ibcast");
    wait(request, stage);
}

void comm::allgather(const void* mine, void* all, int bytes_each, const char* stage) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgather(mine, bytes_each, MPI_BYTE, all, bytes_each, MPI_BYTE, comm_, &request),
          "MPI_Iallgather");
    wait(request, stage);
}

void comm::allgatherv(const void* mine, int bytes, void* all, const int* sizes, const int* at,
                      const char* stage) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgatherv(mine, bytes, MPI_BYTE, all, sizes, at, MPI_BYTE, comm_, &request),
          "MPI_Iallgatherv");
    wait(request, stage);
}

void comm::wait(MPI_Request& request, const char* stage) {
    const auto start = std::chrono::steady_clock::now();
    for (idle_backoff idle(!oversubscribed_); !completed(request);) {
        if (answer_pings()) {
            idle.reset();
            continue;
        }
        idle.pause();
        if (std::chrono::steady_clock::now() - start < quiet_limit_) continue;
        std::vector<int> others, silent;
        for (int r = 0; r < ranks_; ++r)
            if (r != rank_) others.push_back(r);
        const auto answers = ask_ranks(others, &request);
        if (completed(request)) return;
        for (const int r : others)
            if (!answers[std::size_t(r)]) silent.push_back(r);
        abort(silent.empty() ? std::string(stage) + " did not complete within " +
                                   quiet_limit_text() + ", though every rank answers"
                             : ranks_text(silent) + " did not answer within " + quiet_limit_text() +
                                   " while " + stage + " (a stopped or hung rank?)");
    }
}

// Answers the pings that have come; true if there were any.
bool comm::answer_pings() {
    bool any = false;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        check(MPI_Iprobe(MPI_ANY_SOURCE, ping_tag, comm_, &flag, &st), "MPI_Iprobe");
        if (!flag) return any;
        take(st);
        any = true;
    }
}

comm::liveness comm::take(const MPI_Status& st) {
    liveness l;
    check(MPI_Recv(&l, sizeof l, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE),
          "MPI_Recv");
    if (st.MPI_TAG == ping_tag)
        isend(bytes_of(liveness{l.question, activity_()}), st.MPI_SOURCE, pong_tag, false);
    return l;
}

void comm::take_liveness(const MPI_Status& st) {
    take(st);
}

std::vector<std::optional<std::uint64_t>> comm::ask_ranks(const std::vector<int>& whom,
                                                          MPI_Request* request) {
    std::vector<std::optional<std::uint64_t>> answers(static_cast<std::size_t>(ranks_));
    const liveness ping{++questions_, 0};
    for (const int r : whom)
        isend(bytes_of(ping), r, ping_tag, false);
    std::size_t pending = whom.size();
    const auto until = std::chrono::steady_clock::now() + quiet_limit_;
    for (idle_backoff idle; pending > 0 && std::chrono::steady_clock::now() < until;) {
        answer_pings();
        int flag = 0;
        MPI_Status st;
        check(MPI_Iprobe(MPI_ANY_SOURCE, pong_tag, comm_, &flag, &st), "MPI_Iprobe");
        if (flag) {
            const liveness pong = take(st);
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

std::string comm::ranks_text(const std::vector<int>& ranks) {
    std::string s = ranks.size() == 1 ? "rank" : "ranks";
    for (std::size_t i = 0; i < ranks.size(); ++i)
        s += (i ? ", " : " ") + std::to_string(ranks[i]);
    return s;
}

std::string comm::quiet_limit_text() const {
    return std::to_string(quiet_limit_.count()) + " ms (config::mpi_quiet_limit)";
}

void comm::abort(const std::string& why) const noexcept {
    std::fprintf(stderr, "hcube: rank %d of %d: %s\n", rank_, ranks_, why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort(); // MPI_Abort does not return
}

} // namespace hcube::detail::mpi
