// The start of every run for the executor's OS threads. Private to emu/src.
#pragma once

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <thread>

#include "sys/futex.hpp"

namespace hcube::detail {

// The start of every run: a generation counter that the caller of run() bumps
// and the executor's OS threads wait on. After a run they poll it a moment
// (with yields, so they never keep the caller off a core) before they sleep, as
// OpenMP runtimes do for their block time: back-to-back runs then pay no
// futex wake, and the caller makes the system call only when someone sleeps
// (a Dekker pair of `generation` and `sleepers`, seq_cst on both sides).
struct run_gate {
    std::atomic<std::uint32_t> generation{0};
    std::atomic<int> sleepers{0};

    void open() noexcept {
        generation.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers.load(std::memory_order_seq_cst) > 0) futex_wake(generation, INT_MAX);
    }

    // Returns the generation once it differs from `seen`.
    std::uint32_t wait(std::uint32_t seen, std::chrono::nanoseconds poll) noexcept {
        if (poll.count() > 0) {
            const auto until = std::chrono::steady_clock::now() + poll;
            for (int i = 0;; ++i) {
                if (const auto g = generation.load(std::memory_order_acquire); g != seen) return g;
                std::this_thread::yield();
                if (i % 16 == 15 && std::chrono::steady_clock::now() > until) break;
            }
        }
        for (;;) {
            sleepers.fetch_add(1, std::memory_order_seq_cst);
            if (generation.load(std::memory_order_seq_cst) == seen) futex_wait(generation, seen);
            sleepers.fetch_sub(1, std::memory_order_relaxed);
            if (const auto g = generation.load(std::memory_order_acquire); g != seen) return g;
        }
    }
};

} // namespace hcube::detail
