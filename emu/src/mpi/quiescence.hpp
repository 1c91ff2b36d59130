// Decisions that need the whole job quiet (a routed placement or a choice
// forced, as one process's last node to park makes them: horizon.cpp). No
// rank sees that alone, so rank 0 asks in waves (Mattern's four counters):
// every rank answers with whether its nodes are all parked (or done) and how
// many messages it has sent and received, probes and statuses not counted.
// Two waves in a row in which every rank is idle, the sums of sent and
// received agree and nobody's counts changed mean that nothing moved in
// between and nothing was in flight: then rank 0 decides, as in one process.
//
//   rank 0 --probe w--> every rank --status w (idle, sent, received)--> rank 0
//   waves w-1 and w: all idle, balanced, the same counts  =>  decide
//
// Private to emu/src/mpi; called under the backend's progress lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "../state.hpp"
#include "comm.hpp"
#include "wire.hpp"

namespace hcube::detail::mpi {

class quiescence {
public:
    // `idle`: this rank's nodes are all parked or done and it has nothing to
    // send. `tell_choose(rank, node)`: node of another rank takes its
    // candidate.
    quiescence(machine_state& m, comm& c, std::function<bool()> idle,
               std::function<void(int, int)> tell_choose);

    void begin_run(std::uint32_t run);
    // A wave message arrived (st: its status, wave_tag).
    void receive(const MPI_Status& st);
    // Rank 0: starts a wave when a routed message waits or a node chooses
    // (`choosing`), and this rank's own nodes are idle, at most every wave_gap.
    void poll(bool choosing, bool routed_used);

private:
    wave_message status_now(std::uint64_t wave) const;
    void take_status(const wave_message& h);
    void end_wave();

    static constexpr auto wave_gap = std::chrono::microseconds(200);
    machine_state& m_;
    comm& comm_;
    std::function<bool()> idle_;
    std::function<void(int, int)> tell_choose_;
    std::uint32_t run_ = 0;
    std::uint64_t wave_ = 0;
    bool wave_open_ = false;
    int answers_ = 0;
    std::vector<wave_message> statuses_; // rank 0: this wave's, by rank
    std::vector<std::uint64_t> last_;    // rank 0: the last wave's counts, if all idle
    std::chrono::steady_clock::time_point next_wave_{};
};

} // namespace hcube::detail::mpi
