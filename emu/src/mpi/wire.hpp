// What the MPI backend's ranks send each other: the tags and the headers
// that follow each payload. Private to emu/src/mpi.
//
// MPI keeps the order of messages between two ranks on one communicator (a
// receive of any tag matches them in the order sent), so a link's messages
// arrive in FIFO order, a rank's end-of-run marker arrives after every link
// message it sent in that run, and one node's routed sends and bounds reach
// rank 0 in program order. The links' messages (and the end markers) travel
// on a communicator of their own,
// into receives posted ahead (posted_receives.hpp). A message that fits such a
// receive is one MPI message, payload then header, so the received buffer
// becomes the receiver's heap payload without another copy; a larger one is
// its header (bulk) and then its payload, which the receiver takes as soon as
// the header is in, into the buffer that becomes its payload:
//
//   fits       data_tag  [ payload bytes ... | header ]
//   larger     data_tag  [ header (bulk, count = payload bytes) ]
//              bulk_tag  [ payload bytes ... ] [ ... ]  (pieces of piece_bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../links/message.hpp"

namespace hcube::detail::mpi {

// On the links' communicator: link messages, what was taken of them and end
// markers, in order; a bulk message's payload, right after its header.
constexpr int data_tag = 7, bulk_tag = 13;
// A bulk payload travels in pieces of at most this: each piece that lands is
// progress a quiet limit sees however slowly a large one moves, and each
// stays within MPI's int counts.
constexpr std::size_t piece_bytes = std::size_t(64) << 20;

struct wire_header {
    std::int16_t kind;   // data, bulk, taken, ask or end
    std::int16_t prompt; // data, bulk: its sender waits until it is taken
    std::int32_t from;   // data, bulk, taken, ask: the link's sending node
    std::int32_t dim;    // data, bulk, taken, ask: the link's dimension
    std::uint64_t type;  // data, bulk: the elements' wire_type_hash
    double arrival_time; // the sender's vclock of the last word's arrival
    std::int64_t arrival_steps;
    std::uint64_t count; // end: data messages this rank sent to the receiver;
                         // bulk: the payload's bytes; taken: messages taken
    std::uint64_t taken; // data, bulk: what the sending node took of the
                         // link the other way (as taken's count)
};
// bulk: a data message whose payload follows on bulk_tag. taken: the
// receiver's node has taken the link's first `count` messages of the run,
// which every data message also says of the link the other way, so traffic
// both ways needs no taken messages; ask: the sender's link is full, say
// when one is taken (link_bridge.hpp).
enum : std::int16_t { data_kind = 1, end_kind, taken_kind, bulk_kind, ask_kind };

constexpr int routed_tag = 8; // routed traffic: a routed_header
// Liveness, when a wait has stalled: a ping is answered with a pong by
// whatever thread polls MPI on that rank (progress or a polled collective).
constexpr int ping_tag = 9, pong_tag = 10;
constexpr int wave_tag = 11; // quiescence waves: a wave_message
// A run cancelled everywhere: a node of the sender's rank threw, or rank 0
// found a deadlock (a cancel_message; counted, so a wave sees it in flight).
constexpr int cancel_tag = 12;
// The horizon's bounds of the sender's nodes (remote_bounds.hpp; counted).
constexpr int bounds_tag = 14;

struct routed_header {
    std::int32_t kind;
    std::uint32_t run; // the run it belongs to; older ones are dropped
    std::int32_t source, dest;
    std::uint64_t seq;   // submit, data, placed: the message's; publish: the next one
    std::uint64_t trace; // submit: the sender's trace record
    std::uint64_t elem;
    std::uint64_t bytes; // the payload's, also where it went elsewhere
    std::uint64_t type;  // the elements' wire_type_hash
    vclock wanted;       // submit, data
    vclock duration;     // submit, data
    vclock bound;        // submit, data: the sender's new bound; publish: the bound;
                         // placed, placed data: the arrival
};
// Who sends what (backend.hpp): submit, publish, finish to rank 0; data to
// the receiver's rank; placed and used (routed traffic has begun) from rank 0,
// and placed data (data with their placement) from rank 0's nodes; choosing
// to rank 0 and choose from it for the horizon's decisions.
enum : std::int32_t {
    submit_kind = 1,
    data_routed_kind,
    publish_kind,
    finish_kind,
    placed_kind,
    used_kind,
    choosing_kind, // to rank 0: a node of the sender's rank chooses among sources
    choose_kind,   // from rank 0: node `dest` takes its candidate (horizon.hpp)
    placed_data_kind
};

// A quiescence wave (quiescence.hpp): rank 0's probe and each rank's status.
struct wave_message {
    std::int32_t kind; // probe (from rank 0) or status (to it)
    std::uint32_t run;
    std::uint64_t wave;
    std::int32_t rank;  // status: the rank answering
    std::int32_t idle;  // status: every local node parked or done, nothing to send
    std::uint64_t sent; // status: messages this rank sent (probes, statuses not counted)
    std::uint64_t received;
    std::int32_t chooser;    // status: its least chooser, or -1
    double candidate;        // status: that chooser's candidate arrival
    std::uint64_t parks;     // status: its nodes' parks so far (moves inside the rank)
    std::int32_t unfinished; // status: its nodes not done
    std::int32_t cancelled;  // status: its run is cancelled
    std::int32_t choosing;   // probe: some node of the job chooses among sources
};
enum : std::int32_t { probe_kind = 1, status_kind = 2 };

struct cancel_message {
    std::int32_t kind; // failed or deadlock
    std::uint32_t run;
};
enum : std::int32_t { failed_kind = 1, deadlock_kind = 2 };

// A wave, cancel or liveness message as the bytes MPI sends.
template <class T>
std::vector<std::byte> bytes_of(const T& t) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<std::byte> out(sizeof t);
    std::memcpy(out.data(), &t, sizeof t);
    return out;
}

} // namespace hcube::detail::mpi
