// Links to nodes in other processes: what the MPI backend adds to the runtime
// (mpi.cpp; docs/mpi.md). Private to emu/src.
//
// Every rank builds the whole machine's links but runs only its own subcube
// of nodes [local_begin, local_end). A link between a local node and a node
// of another rank keeps both ends in this process: on the sender's rank the
// remote side consumes it (ships each message with MPI), on the receiver's
// rank it produces into it (delivers what arrived). Node programs, the links'
// FIFO order, the descriptors' virtual times and the charging are untouched,
// so results and virtual time equal the in-process machine's.
//
// progress() may be called by any thread, one at a time (a node that waits or
// has just sent, the caller of run() meanwhile): a one-node-per-rank job then
// moves its messages on the node's own thread, with no hand-off. The routed
// calls are for nodes; the rest is for the caller of run() only.
//
// Routed messages (router.hpp) need one router for the whole machine: it
// lives on rank 0. Other ranks send it their nodes' routed sends, bounds and
// finishes; a routed message's data go from the sender's rank straight to the
// receiver's, where it waits in the inbox, unplaced, as in one process, until
// rank 0's placement (its arrival time) joins it:
//
//   sender's rank --submit (key, duration, bound)--> rank 0: router
//   sender's rank --data (key, duration, payload)--> receiver's rank: inbox
//   any rank      --publish, finish---------------> rank 0: router
//   rank 0        --placed (arrival)--------------> receiver's rank: ready
//
// A rank first hears of routed traffic in a run from its own send or from
// rank 0 (every rank is told at the first submit); only then do its nodes
// publish bounds and finishes, so programs without routed messages send
// nothing more.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <hcube/report.hpp>

#include "links/message.hpp"

namespace hcube::detail {

struct machine_state;
struct routed_message;

class remote {
public:
    virtual ~remote() = default;

    // The machine's links are built (those of this rank's subcube): takes the
    // ones that cross to other ranks.
    virtual void connect() = 0;

    virtual int rank() const noexcept = 0;
    virtual int ranks() const noexcept = 0;

    // Ships what local nodes sent to other ranks and delivers what arrived
    // into the local nodes' links (as far as they have room). True if a
    // message moved; false at once while another thread is at it.
    virtual bool progress() = 0;

    // A run starts (every rank, before any node runs).
    virtual void begin_run() = 0;

    // Whether this run has routed traffic, as far as this rank knows yet.
    virtual bool routed_used() const noexcept = 0;
    // A local node sent `msg` (the data are in the destination's inbox if it is
    // local, else shipped); `bound` is the sender's new bound (router::submit).
    virtual void submit_routed(routed_message& msg, vclock bound) = 0;
    // router::publish and router::finish for a local node, on rank 0's router.
    virtual void publish_routed(int id, std::uint64_t seq, vclock bound) = 0;
    virtual void finish_routed(int id) = 0;
    // A local node is about to choose among sources (horizon.hpp): rank 0
    // then decides for the job's least candidate when every rank is idle.
    virtual void start_choosing() = 0;
    // Rank 0: the router placed messages to node `dest` of another rank.
    virtual void placed_remote(int dest) noexcept = 0;

    // The local nodes finished: ships what is left and delivers until every
    // rank has finished too (a rank that does not within
    // config::mpi_quiet_limit is named and the job aborted). Returns the
    // messages that arrived for local nodes and found no room (they are
    // undelivered).
    virtual std::uint64_t finish() = 0;

    // Makes r the whole machine's report on every rank: node clocks by
    // maximum, link traffic by sum (every entry comes from one rank). Returns
    // the undelivered messages of all ranks, `here` being this rank's.
    virtual std::uint64_t combine(run_report& r, std::uint64_t here) = 0;

    // Gives every rank the whole machine's trace (config::trace): every
    // node's calls, messages and receipts, and the routed arrivals rank 0's
    // router fixed. `origin` is this rank's start of the run (steady_clock
    // ticks): wall times travel relative to their rank's start.
    virtual void gather_traces(std::int64_t origin) = 0;

    // Whether `b` holds on every rank (a collective call: every rank calls it).
    virtual bool all(bool b) = 0;

    // Ends the whole job: `why`, prefixed with this rank, on stderr, then
    // MPI_Abort. For failures other ranks cannot see (a node threw; nothing
    // moved for config::mpi_quiet_limit).
    [[noreturn]] virtual void abort(const std::string& why) noexcept = 0;
};

// How the caller of run() waits while it polls the network: yields first (a
// rank's partner usually answers within microseconds), then short sleeps, so
// ranks that outnumber the cores (mpirun --oversubscribe) leave them to the
// nodes.
class idle_backoff {
public:
    void reset() noexcept { rounds_ = 0; }
    void pause() noexcept {
        if (++rounds_ < yields)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(20));
    }

private:
    static constexpr int yields = 200;
    int rounds_ = 0;
};

// Joins the MPI job (initialises MPI if the program did not), checks that the
// ranks are a power of two no larger than the machine, and gives this rank its
// subcube: sets m.local_begin and m.local_end (then build the links and call
// connect()). usage_error when hcube was
// built without MPI or the job does not fit.
std::unique_ptr<remote> make_mpi_remote(machine_state& m);

} // namespace hcube::detail
