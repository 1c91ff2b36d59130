// After a run: every rank gets the whole machine's report and trace, or its
// failures.
// Private to emu/src/mpi.
#pragma once

#include <cstdint>

#include <hcube/error.hpp>
#include <hcube/report.hpp>

#include "../state.hpp"
#include "comm.hpp"

namespace hcube::detail::mpi {

// What a rank counted of the run's routed messages and undelivered ones.
struct rank_counts {
    std::uint64_t routed_shipped = 0;  // routed messages sent to other ranks
    std::uint64_t routed_received = 0; // and received from them
    std::uint64_t undelivered = 0;     // left in this rank's links and inboxes
    std::uint64_t to_router = 0;       // sent to rank 0's router
};

// Makes r the whole machine's report on every rank: node clocks by maximum,
// link traffic by sum (every entry comes from one rank), wall time the
// slowest rank's. Returns the undelivered messages of all ranks, routed
// messages shipped and never received among them.
std::uint64_t combine_report(comm& c, run_report& r, const rank_counts& here);

// Gives every rank every node's calls, messages and receipts (config::trace),
// and the routed arrivals rank 0's router fixed. `origin` is this rank's
// start of the run: wall times travel relative to their rank's start.
void gather_traces(comm& c, machine_state& m, std::int64_t origin);

// Gives every rank every rank's failed nodes and deadlocked waits, in node
// order. Other ranks' exceptions arrive with their message as hcube::error,
// or usage_error if they were one.
void gather_failures(comm& c, std::vector<node_failure>& failures,
                     std::vector<blocked_wait>& waits);

} // namespace hcube::detail::mpi
