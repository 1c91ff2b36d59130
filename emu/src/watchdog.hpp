// The deadlock watchdog: when every unfinished local node stays parked on a
// wait nobody can end, for how long, and what each waits for. Private to
// emu/src.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include <hcube/error.hpp>

#include "state.hpp"

namespace hcube::detail {

// first_failure when the watchdog cancelled the run.
constexpr int deadlock_marker = -2;
// first_failure when another process's node failed (backend.hpp).
constexpr int elsewhere_marker = -3;

// The waits of `nodes` (parked, or the caller's own), each with what it waits
// for and the messages it holds.
std::vector<blocked_wait> describe_waits(machine_state& m, const std::vector<int>& nodes);

// Samples the local nodes on watchdog ticks: blocked() says for how long
// every unfinished one has stayed parked on the same wait (same epochs, bells
// unrung); zero while any moves.
class block_sampler {
public:
    block_sampler(machine_state& m, std::chrono::steady_clock::time_point t0)
        : m_(m)
        , epochs_(std::size_t(m.p))
        , since_(t0) {}

    std::chrono::steady_clock::duration blocked(std::vector<blocked_wait>& waits);
    // Something moved that the nodes' states do not show (a backend's traffic).
    void moved() { stable_.clear(); }
    // The waits, each with what it waits for and the messages it holds.
    std::vector<blocked_wait> described(const std::vector<blocked_wait>& waits) const;

private:
    machine_state& m_;
    std::vector<std::uint64_t> epochs_, stable_;
    std::chrono::steady_clock::time_point since_;
};

// A deadlock is declared (and the run cancelled) when every unfinished node
// stayed blocked for config::deadlock_grace and no decision for the parked is
// due (horizon.cpp, last_parked). Ticked on the caller of run()'s
// thread only: while it waits for the nodes (backend::await_nodes), and while
// the node it runs itself sleeps (executor::caller_node).
class run_watchdog {
public:
    run_watchdog(machine_state& m, std::chrono::steady_clock::time_point t0)
        : m_(m)
        , start_(t0)
        , sampler_(m, t0) {}

    void tick();

    // The waits of the deadlock it declared, if it did.
    std::vector<blocked_wait>& deadlock() noexcept { return deadlock_; }
    // For a backend that watches with its own rule.
    block_sampler& sampler() noexcept { return sampler_; }
    std::chrono::steady_clock::time_point start() const noexcept { return start_; }

private:
    machine_state& m_;
    std::chrono::steady_clock::time_point start_;
    block_sampler sampler_;
    std::vector<blocked_wait> deadlock_;
};

} // namespace hcube::detail
