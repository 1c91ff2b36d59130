// Processor-level ordering: a spin hint and the process-wide barrier of
// membarrier(2). Private to emu/src.
#pragma once

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hcube::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}
// The parking protocol (node.cpp, wait_until) is a Dekker pair: the waker
// publishes and then reads `waiting`, the parker stores `waiting` and then
// re-reads what it waits for; each needs a full barrier between its store and
// its load. When threads <= cores, a message's waker is on the critical path of
// a spinning peer and parks are rare, so the whole barrier can move to the
// parker: membarrier(2) makes every running thread of the process execute a
// full barrier (a descheduled one had one at its context switch). Each waker's
// barrier then falls either before its load of `waiting`, which so sees true,
// or after its publish, which the parker's re-check so sees. Wakers keep only a
// compiler barrier. Used when the kernel offers it (Linux >= 4.14).
inline bool heavy_barrier_available() noexcept {
    static const bool available = [] {
        const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
               syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    }();
    return available;
}

inline void heavy_barrier() noexcept {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

} // namespace hcube::detail
