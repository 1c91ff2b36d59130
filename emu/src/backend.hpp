// Where the nodes run: everything that differs between one process and a job
// of several (backends.cpp has the table of backends). The rest of the runtime
// talks to this interface and never asks which backend it has. Private to
// emu/src.
//
// A backend gives this process its share of the nodes [local_begin,
// local_end) when it is made, moves messages on links that leave the
// process, serves the routed primitives (router.hpp: the machine has one
// router, wherever it lives), waits for a run's nodes, and combines the run's
// report. Routed calls are for nodes; the rest is for the caller of run().
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <hcube/config.hpp>
#include <hcube/error.hpp>
#include <hcube/report.hpp>

#include "links/message.hpp"

namespace hcube::detail {

struct machine_state;
struct node_state;
struct routed_message;
struct wait_info;
class run_watchdog;

// A ready() condition passed through a virtual call (park.hpp's are lambdas).
class ready_ref {
public:
    template <class Ready>
    explicit ready_ref(Ready& r) noexcept
        : ctx_(&r)
        , call_([](void* c) { return (*static_cast<Ready*>(c))(); }) {}
    bool operator()() const { return call_(ctx_); }

private:
    void* ctx_;
    bool (*call_)(void*);
};

// What a node program left undelivered on one link or from one routed source.
struct undelivered {
    int from, to, dim; // dim -1: routed
    std::uint64_t messages = 0, bytes = 0;
};

class backend {
public:
    // Fixed when the backend is made; read on hot paths as plain data.
    struct traits {
        // Waiting and sending nodes must move the backend's messages
        // themselves (progress), and nodes do not spin or bind to CPUs: they
        // share the cores with other processes of the job.
        bool polls = false;
        // The caller of run() runs this process's only node, which never
        // parks (wait_polling); nobody else would move its messages.
        bool caller_runs_node = false;
        // Every node of the machine runs here, so the last local node to
        // park may decide for the parked (horizon.cpp, last_parked).
        bool all_nodes_here = true;
    };

    virtual ~backend() = default;
    const traits& traits_of() const noexcept { return traits_; }

    virtual int rank() const noexcept = 0;
    virtual int ranks() const noexcept = 0;
    // Whether `b` holds in every process (a collective call).
    virtual bool all(bool b) = 0;

    // The machine's links are built: takes those that leave the process.
    virtual void connect() = 0;
    // A run starts (before any node runs).
    virtual void begin_run() = 0;
    // Moves messages between processes; true if one moved. Only with polls.
    virtual bool progress() = 0;
    // A node about to spin or park lets the backend move messages first
    // (only with polls): true once ready() holds. With caller_runs_node it
    // returns only then.
    virtual bool wait_polling(node_state& s, ready_ref ready, const wait_info& info) = 0;
    // Local node `node` took a message on dimension `dim` (only with polls):
    // a sender in another process that waits for that hears it now, not when
    // the node next sends or waits.
    virtual void took(int node, int dim) = 0;

    // Routed traffic (router.hpp). Whether it has begun this run, as far as
    // this process knows.
    virtual bool routed_used() const noexcept = 0;
    // A local node sent `msg` (already in its destination's inbox if that is
    // local); `bound` is the sender's new bound. Once the router placed it,
    // msg may be taken and freed: read it before.
    virtual void submit_routed(routed_message& msg, vclock bound) = 0;
    // Node `id` (next seq `seq`) sends nothing below `bound` from now on.
    virtual void publish_routed(int id, std::uint64_t seq, vclock bound) = 0;
    // Node `id` finished (called for every node at its end, routed or not).
    virtual void finish_routed(int id) = 0;
    // The least routed bound of every node but `id` on the time clock, or
    // -infinity where the router is not in this process (horizon.cpp).
    virtual double least_other_bound(int id, int& node) = 0;
    // A local node is about to choose among sources (horizon.hpp).
    virtual void start_choosing() = 0;
    // The router placed messages to node `dest` of another process.
    virtual void placed_remote(int dest) noexcept = 0;

    // Waits until this process's nodes have finished, watching for deadlock.
    virtual void await_nodes(run_watchdog& watchdog) = 0;
    // After await_nodes: what is left to exchange with the other processes.
    virtual void finish() = 0;
    // Makes r the whole machine's report and throws error if a message was
    // left undelivered anywhere (`left` here).
    virtual void combine(run_report& r, const std::vector<undelivered>& left) = 0;
    // A cancelled run, after finish(): makes `failures` (the nodes that threw)
    // and `waits` (a deadlock's blocked nodes) this process's and every other
    // process's, in node order, the same in every process. A node program
    // cancelled in one process is cancelled in all.
    virtual void combine_failures(std::vector<node_failure>& failures,
                                  std::vector<blocked_wait>& waits) = 0;
    // Completes every node's trace records (config::trace): the routed
    // arrivals the router fixed, and other processes' nodes. `origin` is
    // this process's start of the run (steady_clock ticks).
    virtual void settle_trace(std::int64_t origin) = 0;

protected:
    traits traits_;
};

// The backends, one row each (backends.cpp); the first is the default. make
// sets m.local_begin and m.local_end (then build the links and call
// connect()), or throws usage_error when the job does not fit.
struct backend_row {
    backend_kind kind;
    const char* name; // to_string, HCUBE_BACKEND
    std::unique_ptr<backend> (*make)(machine_state& m);
};
extern const std::array<backend_row, 2> backend_rows;

// The backend config::backend names (resolved).
std::unique_ptr<backend> make_backend(machine_state& m);

} // namespace hcube::detail
