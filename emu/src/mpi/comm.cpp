// The MPI plumbing of the backend (comm.hpp).
#include "comm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

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

// Calls post(count, type) with a count and type that carry `bytes` bytes:
// MPI_BYTE up to 2 GiB, above it one element of 1 MiB blocks and the rest,
// since MPI's counts are ints and Open MPI 4 has no large-count calls (a
// probed message is received whole). A pending operation keeps the type it
// uses after it is freed.
template <class Post>
void post_bytes(std::size_t bytes, Post post) {
    if (bytes <= std::size_t(std::numeric_limits<int>::max())) return post(int(bytes), MPI_BYTE);
    constexpr std::size_t block = std::size_t(1) << 20;
    MPI_Datatype blocks = MPI_DATATYPE_NULL, whole = MPI_DATATYPE_NULL;
    check(MPI_Type_contiguous(int(block), MPI_BYTE, &blocks), "MPI_Type_contiguous");
    const int lengths[2] = {int(bytes / block), int(bytes % block)};
    const MPI_Aint at[2] = {0, MPI_Aint(bytes - bytes % block)};
    MPI_Datatype types[2] = {blocks, MPI_BYTE};
    check(MPI_Type_create_struct(2, lengths, at, types, &whole), "MPI_Type_create_struct");
    check(MPI_Type_commit(&whole), "MPI_Type_commit");
    MPI_Type_free(&blocks);
    post(1, whole);
    MPI_Type_free(&whole);
}

// Calls f(offset, bytes) for each piece of piece_bytes (wire.hpp) that
// `bytes` splits into, in order; an empty message is one empty piece.
template <class F>
void for_each_piece(std::size_t bytes, F f) {
    std::size_t at = 0;
    do {
        const std::size_t piece = std::min(piece_bytes, bytes - at);
        f(at, int(piece));
        at += piece;
    } while (at < bytes);
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
    if (counted) ++sent_;
    sends_.push_back({std::move(buffer), MPI_REQUEST_NULL});
    send& s = sends_.back();
    post_bytes(s.buffer.size(), [&](int count, MPI_Datatype type) {
        check(MPI_Isend(s.buffer.data(), count, type, peer, tag, comm_, &s.request), "MPI_Isend");
    });
}

// The buffer goes with the last piece: sends retire in order (retire_sends).
void comm::isend_link(std::vector<std::byte> buffer, int peer, int tag) {
    std::byte* const data = buffer.data();
    const std::size_t bytes = buffer.size();
    for_each_piece(bytes, [&](std::size_t at, int piece) {
        ++sent_;
        sends_.push_back({{}, MPI_REQUEST_NULL});
        if (at + std::size_t(piece) == bytes) sends_.back().buffer = std::move(buffer);
        check(MPI_Isend(data + at, piece, MPI_BYTE, peer, tag, links_, &sends_.back().request),
              "MPI_Isend");
    });
}

void comm::irecv_link_into(void* at, std::size_t bytes, int source, int tag,
                           std::vector<MPI_Request>& pieces) {
    for_each_piece(bytes, [&](std::size_t from, int piece) {
        check(MPI_Irecv(static_cast<std::byte*>(at) + from, piece, MPI_BYTE, source, tag, links_,
                        &pieces.emplace_back(MPI_REQUEST_NULL)),
              "MPI_Irecv");
    });
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

std::size_t comm::bytes_in(const MPI_Status& st) {
    MPI_Count bytes = 0;
    check(MPI_Get_elements_x(&st, MPI_BYTE, &bytes), "MPI_Get_elements_x");
    return std::size_t(bytes);
}

void comm::receive(void* at, std::size_t bytes, const MPI_Status& st) {
    post_bytes(bytes, [&](int count, MPI_Datatype type) {
        check(MPI_Recv(at, count, type, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
    });
}

void comm::irecv(void* at, std::size_t bytes, const MPI_Status& st, MPI_Request& request) {
    post_bytes(bytes, [&](int count, MPI_Datatype type) {
        check(MPI_Irecv(at, count, type, st.MPI_SOURCE, st.MPI_TAG, comm_, &request), "MPI_Irecv");
    });
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
