// What a run measured: virtual time under the cost model, steps, per-link
// traffic, congestion, wall time, and (optionally) a trace of every message.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/config.hpp>

namespace hcube {

// Traffic on one directed link x -> x ^ 2^dim, direct and routed together.
struct link_stats {
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
};

// Two routed messages wanted the same directed link at overlapping virtual
// times; the later one was delayed until the link was free.
struct congestion_event {
    int from = 0;                   // the link's tail node
    int dim = 0;                    // the link's dimension
    int source = 0, dest = 0;       // the delayed message's end points
    double wanted = 0, granted = 0; // virtual start times before and after the delay
};

// One message, recorded when config::trace is set.
struct trace_record {
    int from = 0;
    int to = 0;
    int dim = -1;          // link dimension; -1 for a routed message
    std::int64_t step = 0; // sender's step count when the message left
    double start = 0;      // virtual time the message left
    double arrival = 0;    // virtual time it arrived
    std::uint64_t bytes = 0;
    // Indices into run_report::calls of the call that sent it and of the one
    // that received it (-1: never received).
    std::int64_t send_call = -1, recv_call = -1;
};

// The node primitive a call_record is about.
enum class call_kind { send, recv, exchange, exchange_all, recv_any, send_routed, recv_routed };
std::string_view to_string(call_kind k) noexcept;

// One primitive call of a node program, recorded when config::trace is set.
struct call_record {
    int node = 0;
    call_kind kind = call_kind::send;
    int dim = -1;          // its link; -1 for exchange_all, recv_any and routed calls
    int peer = -1;         // the node at the other end (routed: destination or source)
    std::int64_t step = 0; // the node's step count when the call began
    double start = 0;      // the node's virtual clock when the call began
    double end = 0;        // ... and when it returned
    // Wall clock (steady_clock, ns since the run started) at entry and return.
    std::int64_t wall_start = 0, wall_end = 0;
};

struct run_report {
    int dim = 0;
    port_model ports = port_model::single_port;
    cost_model cost{};
    executor_kind executor = executor_kind::threads; // what ran the nodes (never automatic)
    link_impl link_implementation = link_impl::ring; // the one that ran (never automatic)
    backend_kind backend = backend_kind::in_process; // never automatic
    int ranks = 1;                                   // MPI ranks the nodes ran on
    // Over MPI: some host ran more ranks than it has CPUs, so the ranks took
    // turns on them and wall times mean little (virtual time is unaffected).
    bool oversubscribed = false;

    double virtual_time = 0;       // max over nodes of their final clock
    std::int64_t steps = 0;        // the same critical path counted in steps (t_s = 1, t_w = 0)
    std::vector<double> node_time; // final clock of every node
    std::vector<std::int64_t> node_steps;
    std::vector<link_stats> links; // index from * dim + k
    std::uint64_t messages = 0;    // sum over links (a routed message counts once per hop)
    std::uint64_t bytes = 0;
    std::uint64_t routed_messages = 0; // end-to-end routed messages
    // Over MPI: messages ranks sent rank 0's router so that it could place the
    // routed messages (submits, bounds, finishes); 0 in one process.
    std::uint64_t messages_to_router = 0;
    std::vector<congestion_event> congestion;
    double wall_seconds = 0;               // over MPI: the slowest rank's
    std::vector<double> rank_wall_seconds; // every rank's (one entry in process)
    std::vector<trace_record> trace;       // in (from, send order); empty unless config::trace
    std::vector<call_record> calls;        // in (node, call order); empty unless config::trace
    // Per node, a hash of every message it took, in order: where from and its
    // bytes; empty unless config::digest.
    std::vector<std::uint64_t> node_digest;

    const link_stats& link(int from, int k) const { return links[std::size_t(from) * dim + k]; }
    std::uint64_t max_link_bytes() const;
    std::uint64_t max_link_messages() const;
    // How fast the emulation ran, as discrete-event simulators report it:
    // link messages and virtual time per wall second (0 for no wall time).
    double messages_per_second() const;
    double virtual_time_per_second() const;
    // Multi-line human summary: times, totals, busiest link, congestion.
    std::string summary() const;
    // A hash of everything here that depends on the program alone: the cube,
    // port model and costs, every node's virtual time and steps, per-link
    // traffic, routed messages, congestion, the trace's virtual fields and
    // what every node received (config::digest);
    // not wall times, nor what ran the nodes (executor, links, backend). Two
    // runs of one program and configuration give the same (docs/runtime.md).
    std::uint64_t fingerprint() const;
};

std::ostream& operator<<(std::ostream& os, const run_report& r);

} // namespace hcube
