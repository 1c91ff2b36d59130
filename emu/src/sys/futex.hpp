// The futex(2) calls the runtime parks and waits with. Private to emu/src.
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hcube::detail {

// Parking is a raw Linux futex rather than std::atomic::wait: libstdc++'s wait
// spins and yields before it blocks (our own policy in wait_until already did)
// and counts waiters in 16 global buckets, one shared cache line per 256 of
// 4096 threads; and the caller of run() needs a timed wait (the watchdog tick).
// Wake-ups may be spurious; every caller re-checks its condition.
inline long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value,
                  const timespec* timeout) noexcept {
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr,
                   0);
}

// Sleeps while word == old.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t old) noexcept {
    futex(word, FUTEX_WAIT_PRIVATE, old, nullptr);
}

// The same with a timeout; false when it expired.
inline bool futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t old,
                           std::chrono::nanoseconds timeout) noexcept {
    const auto ns = timeout.count();
    const timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
    return !(futex(word, FUTEX_WAIT_PRIVATE, old, &ts) == -1 && errno == ETIMEDOUT);
}

inline void futex_wake(std::atomic<std::uint32_t>& word, int waiters = 1) noexcept {
    futex(word, FUTEX_WAKE_PRIVATE, std::uint32_t(waiters), nullptr);
}

} // namespace hcube::detail
