// keep_freed_memory (machine.hpp): glibc's mallopt.
#include <hcube/machine.hpp>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hcube {

bool keep_freed_memory() noexcept {
#if defined(__GLIBC__)
    // Setting either turns off glibc's own adjustment of both, which raises the
    // mmap threshold only after a mapped block was freed, and the heaps of
    // node threads (non-main arenas) are trimmed by the same threshold.
    // 32 MiB is the largest mmap threshold glibc takes on 64-bit systems.
    constexpr int largest_heap_block = 32 << 20;
    return mallopt(M_MMAP_THRESHOLD, largest_heap_block) == 1 &&
           mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
#else
    return false;
#endif
}

} // namespace hcube
