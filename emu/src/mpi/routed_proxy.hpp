// Routed messages across ranks (router.hpp has the router). The machine has
// one router: it lives on rank 0. Other ranks send it their nodes' routed
// sends, bounds and finishes; a routed message's data go from the sender's
// rank straight to the receiver's, where it waits in the inbox, unplaced, as
// in one process, until rank 0's placement (its arrival time) joins it:
//
//   sender's rank --submit (key, duration, bound)--> rank 0: router
//   sender's rank --data (key, duration, payload)--> receiver's rank: inbox
//   any rank      --publish, finish---------------> rank 0: router
//   rank 0        --placed (arrival)--------------> receiver's rank: ready
//
// Data sent to rank 0 are their own submit; data from a node of rank 0 whose
// message the router placed at once carry the arrival (placed data).
//
// A rank first hears of routed traffic in a run from its own send or from
// rank 0 (every rank is told at the first submit); only then do its nodes
// publish bounds and finishes, so programs without routed messages send
// nothing more. Routed traffic is not counted by the end markers: its
// messages go between any two ranks. What a run still needs of it is in place
// before any node finishes (a receiver takes a message only once it is
// placed), so what arrives later is recognised by its run number and
// dropped; routed messages sent and arrived are summed over the ranks
// (gather.hpp), so data nobody received are reported as undelivered.
//
// Nodes call the routed calls; progress() (under the backend's lock) sends
// the outbox and hands over what arrived. Private to emu/src/mpi.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "../state.hpp"
#include "comm.hpp"
#include "wire.hpp"

namespace hcube::detail::mpi {

class routed_proxy {
public:
    // Dimensions below `inner` stay inside a rank.
    routed_proxy(machine_state& m, comm& c, int inner)
        : m_(m)
        , comm_(c)
        , inner_(inner) {}

    // A run starts: returns its number (messages of older runs are dropped).
    std::uint32_t begin_run();
    bool used() const noexcept { return used_.load(std::memory_order_acquire); }
    // Rank 0: a node of another rank chooses among sources.
    bool others_choose() const noexcept { return choosing_; }

    // The backend's routed calls (backend.hpp).
    void submit(routed_message& msg, vclock bound);
    void publish(int id, std::uint64_t seq, vclock bound);
    void finish(int id);
    void start_choosing();
    void placed_remote(int dest) noexcept;
    // Rank 0 decided that node `node` of rank `rank` takes its candidate.
    void tell_choose(int rank, int node);

    // progress(): sends what nodes queued; true if there was any.
    bool send_outbox();
    bool outbox_empty() const;
    // progress(): a routed message matched (st: its status, routed_tag). Its
    // data land without blocking the caller: a large payload may take many
    // rounds, landing() meanwhile. False for what moves no node (a past run's
    // traffic), or while it lands.
    bool receive(const MPI_Status& st);
    // progress(): hands over the message that was landing if it has landed;
    // false if it still lands or moves no node.
    bool land();
    bool landing() const noexcept { return landing_request_ != MPI_REQUEST_NULL; }
    // "a routed message of 80 bytes from rank 3": the one landing.
    std::string landing_text() const;

    std::uint64_t shipped() const noexcept { return shipped_; }
    std::uint64_t received() const noexcept { return received_; }
    std::uint64_t to_router() const noexcept { return to_router_; }

private:
    struct routed_out {
        std::vector<std::byte> buffer; // payload, routed_header
        int peer;
    };

    void start();
    void queue_finish(int id);
    void queue(routed_header h, const void* data, std::size_t bytes, int peer);
    struct shadow;
    std::list<shadow>::iterator shadow_of(const routed_header& h, bool data_sent);
    void submit_from_router_rank(routed_message& msg, vclock bound);
    void ship_data(std::int32_t kind, const routed_message& msg, vclock bound);
    void route(routed_message& msg, vclock bound);
    void arrived(const routed_header& h, std::vector<unsigned char> data);
    void placed(const routed_header& h);
    int rank_of(int node) const noexcept { return node >> inner_; }

    machine_state& m_;
    comm& comm_;
    int inner_;
    // mu_ guards the outbox, the shadows and the counts: nodes and progress()
    // use them.
    std::mutex mu_;
    std::uint32_t run_ = 0;
    std::atomic<bool> used_{false};
    bool choosing_ = false; // progress() only
    std::vector<routed_out> outbox_;
    // Whether outbox_ holds any: progress() looks at it every round, without
    // taking mu_.
    std::atomic<bool> queued_{false};
    // Rank 0: what its router places for a message whose data went to another
    // rank. Its placement goes there once the data have gone: a message of
    // rank 0's own nodes travels with its placement when the router placed it
    // at once (submit_from_router_rank).
    struct shadow {
        routed_message msg;
        bool data_sent = true;
    };
    std::unordered_map<int, std::list<shadow>> shadows_; // rank 0, by receiver
    // Placements that came before their data, by (receiver, source, seq);
    // progress() only.
    std::map<std::tuple<int, int, std::uint64_t>, vclock> early_;
    std::uint64_t shipped_ = 0, received_ = 0; // to and from other ranks
    std::uint64_t to_router_ = 0;              // another rank's messages to rank 0's router
    // The routed message whose data are landing (progress() only).
    std::vector<unsigned char> landing_data_;
    MPI_Request landing_request_ = MPI_REQUEST_NULL;
    int landing_from_ = 0;
};

} // namespace hcube::detail::mpi
