// The end of a run: what was left in the links, what failed, and the run's
// report built from the local nodes. Private to emu/src.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <hcube/error.hpp>
#include <hcube/report.hpp>

#include "backend.hpp"
#include "state.hpp"

namespace hcube::detail {

// Empties every link and inbox (freeing heap payloads) and says what was there.
std::vector<undelivered> drain(machine_state& m);
// The text that names each undelivered message (at most 16 links of them).
std::string undelivered_message(const std::vector<undelivered>& left);
// The failures of a cancelled run, in node order: which node cancelled it
// first depends on the scheduler, the set does not.
std::vector<node_failure> failures_of(machine_state& m);
// The report of this process's nodes and router (other processes' nodes are
// zero until backend::combine).
run_report local_report(const machine_state& m, double wall_seconds);
// The totals: virtual time and steps over the nodes, messages and bytes over
// the links.
void add_totals(run_report& r);
// The run's messages and calls in node order, each message linked to the call
// that sent it and the one that took it.
void collect_trace(const machine_state& m, run_report& r, std::chrono::steady_clock::time_point t0);

} // namespace hcube::detail
