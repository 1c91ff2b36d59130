// The horizon's bounds of other ranks' nodes (horizon.hpp, next_send). A
// chooser proves its candidate with its senders' bounds; a sender on another
// rank counts with 0 until that rank says more. Whenever a rank is idle at a
// quiescence wave, it tells each rank across one of its links the bounds of
// its nodes that rose since it last told them, and those ranks keep them in
// the nodes' next_send. Clocks only grow, so a bound told is a bound for the
// rest of the run; the messages are counted, so a wave sees them in flight.
// When a wave finds the job quiet, every rank has tried its choosers with the
// bounds every node has when parked, as one process's last node to park does
// (horizon.cpp, release_proved_choices), and only then is a choice forced.
//
//   rank r idle at wave w --bounds (node, next_send)...--> ranks r ^ 2^j
//   receiver: nodes[n].next_send = bound; tries its parked choosers
//
// Private to emu/src/mpi; called under the backend's progress lock.
#pragma once

#include <cstdint>
#include <vector>

#include "../state.hpp"
#include "comm.hpp"

namespace hcube::detail::mpi {

class remote_bounds {
public:
    // Dimensions below `inner` stay inside a rank.
    remote_bounds(machine_state& m, comm& c, int inner);

    // Every node's bound is 0 again (machine.cpp reset them), as the other
    // ranks know it; bounds that came early for this run are applied.
    void begin_run(std::uint32_t run);
    // This rank's nodes are all parked or done: sends what rose.
    void share();
    // A bounds message arrived (st: its status, bounds_tag).
    void receive(const MPI_Status& st);

private:
    struct entry {
        std::int32_t node;
        std::uint32_t run;
        double bound;
    };
    void apply(const std::vector<entry>& entries);

    machine_state& m_;
    comm& comm_;
    int inner_;
    std::uint32_t run_ = 0;
    std::vector<double> told_; // by local node: the bound the other ranks know
    std::vector<entry> early_; // bounds of a run this rank has not begun
};

} // namespace hcube::detail::mpi
