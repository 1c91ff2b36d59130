// The runtime's allocators. Private to emu/src.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include <tbb/cache_aligned_allocator.h>
#include <tbb/scalable_allocator.h>

#include "links/message.hpp"

namespace hcube::detail {

// Heap payloads and a node's own vectors come from oneTBB's allocators:
// per-thread pools, no global lock across thousands of node threads, and
// vectors on cache lines of their own (owned<T>: neighbouring nodes' small
// vectors would otherwise share lines, and every send writes them). oneTBB is
// not instrumented, so a sanitizer sees neither its cross-thread block reuse
// (false races under TSan) nor its block bounds (ASan); sanitized builds use
// the system allocator.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline void* payload_alloc(std::size_t bytes) noexcept {
    return std::malloc(bytes);
}
inline void payload_free(void* p) noexcept {
    std::free(p);
}
template <class T>
struct line_allocator {
    using value_type = T;
    line_allocator() = default;
    template <class U>
    line_allocator(const line_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{cache_line}));
    }
    void deallocate(T* p, std::size_t) noexcept {
        ::operator delete (p, std::align_val_t{cache_line});
    }
    friend bool operator==(const line_allocator&, const line_allocator&) = default;
};
#else
inline void* payload_alloc(std::size_t bytes) noexcept {
    return scalable_malloc(bytes);
}
inline void payload_free(void* p) noexcept {
    scalable_free(p);
}
template <class T>
using line_allocator = tbb::cache_aligned_allocator<T>;
#endif

template <class T>
using owned = std::vector<T, line_allocator<T>>;

} // namespace hcube::detail
