// Pictures of a run: a Chrome/Perfetto trace, a space-time diagram
// (SVG), and step-by-step pictures of an algorithm drawn as the sources draw them,
// labelled with what every node holds after each step of a real run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <hcube/driver/catalog.hpp>
#include <hcube/error.hpp>
#include <hcube/report.hpp>

namespace hcube {

// ---- traces -------------------------------------------------------------------

enum class trace_clock { virtual_time, wall_time };

struct trace_options {
    // The time axis: virtual time (1 unit drawn as 1 ms, so t_s = 1 reads as
    // 1 ms) or the wall clock of the emulation. The metadata says which.
    trace_clock clock = trace_clock::virtual_time;
};

// Trace Event Format JSON (Perfetto, chrome://tracing): one track per node
// (and one beside it for its calls that overlap in virtual time), a slice per
// primitive call with its link, peer, bytes, step and virtual times in `args`
// (a send's: while its message held the port), one flow arrow per message from
// the start of the call that sent it to the end of the call that took it.
// The report must come from a run with config::trace (else usage_error).
void write_chrome_trace(const run_report& r, std::ostream& os, trace_options o = {});

// ---- space-time diagram ---------------------------------------------------------

struct timeline_options {
    int max_nodes = 64; // more nodes: usage_error (a smear, not a picture)
    double width = 960; // pixels of the time axis
    std::string title;  // drawn above the axis
};

// Nodes as horizontal lines, virtual time along x with a scale, every message
// an arrow (class "msg") from (sender, start) to (receiver, arrival) coloured by
// dimension, congestion delays as red bars, the critical path highlighted.
void write_timeline_svg(const run_report& r, std::ostream& os, timeline_options o = {});

// One stretch of the critical path: a message that set a clock (its sender's
// port while it was sent, or the receiver's clock when it arrived, or the
// receiver's port while it was taken after another), or local work
// (node::compute, message -1) on `node`.
struct critical_step {
    std::ptrdiff_t message = -1; // index into r.trace, or -1: local work
    int node = 0;                // where the stretch ends
    double begin = 0, end = 0;   // the virtual time it accounts for
};

// The chain of what determined the latest node's final clock, walked back
// through the sends, arrivals and receives that set each clock, last first:
// the stretches meet end to begin, the first ends at r.virtual_time and the
// last begins at 0, so their lengths add up to the virtual time. A root that
// only sends has its path through its send port.
std::vector<critical_step> critical_path(const run_report& r);

// ---- step pictures --------------------------------------------------------------

// What one run of an algorithm looked like, step by step: the messages of each
// step and the label of every node after it, read from the node's buffers
// (the algorithm ran on symbolic elements that name their origin).
struct step_state {
    std::vector<std::size_t> messages; // indices into report.trace sent in this step
    std::vector<std::string> carried;  // per message: what it brought its receiver
    std::vector<std::string> labels;   // per node: "(0,1,2,3)", "[0..3]", ...
    // From 4-cubes on, labels write many blocks as runs, (0,2,4..14), and
    // pairs as products, {0..1→0,2,4..14}; these lists have them in full
    // (the pictures' tooltips), or are empty where the label is.
    std::vector<std::string> lists;               // per node
    std::vector<std::string> carried_lists;       // per message
    std::vector<std::vector<std::string>> memory; // tables: per node, per location
};

struct algorithm_steps {
    run_params params; // auto resolved
    std::string title; // "allgather hypercube on a 3-cube (8 nodes)"
    std::string source, formula;
    // What this operation's labels and tables mean (the page's header): its
    // own notation only, and for the CM-200 cycles how M' is split.
    std::string notation;
    run_report report;
    std::vector<step_state> steps; // steps[0]: before the first step
    bool table = false;            // CM-200 memory tables (Mathur & Johnsson Figures 8-11)
    // CM-200 cycle reductions (Mathur & Johnsson Figures 12-19): per step, memory[node]
    // [address] is "●" (sends the partial sum of that address), "+" (receives
    // it and adds its own), "○" (added before) or empty.
    bool reduction_table = false;
    // ASPC (Hu, Table 1): schedule[j][i], the link element j of logical
    // node i left on in step 1, read from the run; empty for other operations.
    std::vector<std::vector<int>> schedule;
};

// The largest dimension whose steps are drawn: 64 nodes.
inline constexpr int max_drawn_dim = 6;

// The operations record_steps draws, and whether it draws e's algorithm: it
// does every algorithm of an operation's record tables (allgather_records,
// ...), so a new record's algorithm is drawn as its catalog entry is run.
std::vector<std::string> drawn_operations();
bool draws(const algorithm_entry& e) noexcept;

// Runs p's algorithm on symbolic data with tracing and snapshots every node's
// buffers as each primitive call begins and when the node finishes. Throws
// usage_error for what cannot be drawn (p > 64 nodes, an operation without a
// symbolic driver, more than this computer's memory by an estimate made
// first), deadlock_error when the run deadlocks.
algorithm_steps record_steps(run_params p);

// One SVG per step (index = step), and the self-contained HTML page with all
// of them, previous/next buttons, a slider and the arrow keys.
std::vector<std::string> step_svgs(const algorithm_steps& s);
void write_steps_html(const algorithm_steps& s, std::ostream& os);

// The wait-for graph of a deadlock on a d-cube: who waits for whom, on which
// link; as an SVG, and as a one-picture HTML page with the report's text.
std::string wait_for_svg(const deadlock_error& e, int dim);
void write_wait_for_html(const deadlock_error& e, const run_params& p, std::ostream& os);

} // namespace hcube
