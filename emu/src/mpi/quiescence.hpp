// Decisions that need the whole job quiet (a routed placement or a choice
// forced, as one process's last node to park makes them: horizon.cpp; a
// deadlock declared, as one process's watchdog does: watchdog.hpp). No rank
// sees that alone, so rank 0 asks in waves (Mattern's four counters): every
// rank answers with whether its nodes are all parked (or done), how many
// messages it has sent and received (probes and statuses not counted) and how
// often its nodes parked. Two waves in a row in which every rank is idle, the
// sums of sent and received agree and nobody's counts changed mean that
// nothing moved in between and nothing was in flight: then rank 0 decides, as
// in one process. An idle rank first makes the decisions its own last node
// to park owes and, while the job chooses, tells its bounds and releases the
// choices they prove (remote_bounds.hpp), so a quiet job has done all that
// before rank 0 forces one.
//
//   rank 0 --probe w--> every rank --status w (idle, sent, received, parks)--> rank 0
//   waves w-1 and w: all idle, balanced, the same counts  =>  decide
//
// With nothing to decide and nodes unfinished, the job is deadlocked once the
// counts stay the same for config::deadlock_grace. Waves run while a decision
// waits, and every watch_gap while rank 0's nodes are idle.
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
    // send. `settle(choosing)`: this rank is idle at a wave; it makes the
    // decisions its last node to park owes (horizon.cpp, last_parked) and,
    // while the job chooses, tells its bounds and releases the choices they
    // prove (remote_bounds.hpp).
    // `tell_choose(rank, node)`: node of another rank takes its candidate.
    // `deadlock`: rank 0 found the job deadlocked.
    quiescence(machine_state& m, comm& c, std::function<bool()> idle,
               std::function<void(bool)> settle, std::function<void(int, int)> tell_choose,
               std::function<void()> deadlock);

    void begin_run(std::uint32_t run);
    // A wave message arrived (st: its status, wave_tag).
    void receive(const MPI_Status& st);
    // Rank 0: starts a wave when this rank's own nodes are idle, at most every
    // wave_gap while a routed message waits or a node chooses (`choosing`),
    // else every watch_gap.
    void poll(bool choosing, bool routed_used);

private:
    wave_message status_now(std::uint64_t wave, bool choosing);
    void take_status(const wave_message& h);
    void end_wave();

    // A quarter of the deadlock grace: a deadlock is seen within about 1.25
    // graces, and a job that is only waiting pays a few waves a second.
    std::chrono::steady_clock::duration watch_gap() const;

    static constexpr auto wave_gap = std::chrono::microseconds(200);
    machine_state& m_;
    comm& comm_;
    std::function<bool()> idle_;
    std::function<void(bool)> settle_;
    std::function<void(int, int)> tell_choose_;
    std::function<void()> deadlock_;
    std::uint32_t run_ = 0;
    std::uint64_t wave_ = 0;
    bool wave_open_ = false;
    bool deciding_ = false; // the open wave is for a choice or a routed placement
    int answers_ = 0;
    std::vector<wave_message> statuses_; // rank 0: this wave's, by rank
    std::vector<std::uint64_t> last_;    // rank 0: the last wave's counts, if all idle
    std::chrono::steady_clock::time_point quiet_since_{}; // rank 0: when last_ was first seen
    std::chrono::steady_clock::time_point next_wave_{};
};

} // namespace hcube::detail::mpi
