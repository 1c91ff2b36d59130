// The fibers' stacks: every node's stack and the guard zone below it in one
// mapping, guard pages where vm.max_map_count allows and red zones elsewhere
// (docs/runtime.md, Failures). Private to emu/src (fibers.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/stack_context.hpp>

#include <hcube/error.hpp>

#include "executor.hpp"
#include "fiber_notes.hpp"

namespace hcube::detail {

// Below every stack: a guard zone. PROT_NONE where the mappings fit under
// vm.max_map_count (each guard splits the pool: two mappings), otherwise an
// untouched red zone whose pages the node's program must leave non-resident
// (mincore after its program). Four pages: a frame must skip 16 KiB to jump it.
inline constexpr std::size_t zone_pages = 4;
// Pages one mincore(2) of the red-zone check covers (64 MiB of stacks).
inline constexpr std::size_t residency_pages = 16384;
// Mappings left for everything else in the process (malloc, oneTBB, threads).
inline constexpr long long other_mappings = 8192;

inline std::size_t page_bytes() noexcept {
    static const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
    return page;
}

// Every node's stack and guard zone in one mapping, laid out as
//   [zone 0][stack 0][zone 1][stack 1] ...   (stacks grow down into their zone)
class stack_pool {
public:
    stack_pool(int p, std::size_t stack_bytes, long long guarded)
        : stride_(fiber_stack_stride(stack_bytes))
        , zone_(zone_pages * page_bytes())
        , guarded_(guarded) {
        bytes_ = stride_ * std::size_t(p);
        void* at = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (at == MAP_FAILED)
            throw error("machine: cannot reserve " + std::to_string(bytes_ >> 20) +
                        " MiB of address space for 2^d fiber stacks of " +
                        std::to_string(stack_bytes) + " bytes (lower config::stack_bytes)");
        base_ = static_cast<char*>(at);
        // A huge page would make a whole run of stacks and red zones resident.
        madvise(base_, bytes_, MADV_NOHUGEPAGE);
        for (long long i = 0; i < guarded_; ++i)
            if (mprotect(base_ + std::size_t(i) * stride_, zone_, PROT_NONE) != 0) {
                guarded_ = i;
                break;
            }
    }
    ~stack_pool() {
        unpoison(base_, bytes_);
        munmap(base_, bytes_);
    }
    stack_pool(const stack_pool&) = delete;
    stack_pool& operator=(const stack_pool&) = delete;

    boost::context::stack_context stack(int i) const noexcept {
        boost::context::stack_context sc;
        sc.size = stride_ - zone_;
        sc.sp = base_ + std::size_t(i + 1) * stride_; // the top: stacks grow down
        return sc;
    }
    bool guarded(int i) const noexcept { return i < guarded_; }

    // Before stack i's first fiber is made: Boost.Context writes the fiber's record
    // at the top at once, and one madvise mapping that page costs a fraction
    // of the page fault that write would take (a few against tens of
    // microseconds on a virtual machine); the page stays mapped, so later runs
    // skip the system call. Kernels before 5.14 refuse it; the write then
    // faults as before.
    void prefault_top(int i) const noexcept {
#ifdef MADV_POPULATE_WRITE
        const std::size_t page = page_bytes();
        madvise(base_ + std::size_t(i + 1) * stride_ - page, page, MADV_POPULATE_WRITE);
#else
        (void)i;
#endif
    }

    // ASan: the frames a finished fiber leaves behind keep their redzones
    // poisoned; clear stacks [first, last) before they hold new frames.
    void unpoison(int first, int last) const noexcept {
        unpoison(base_ + std::size_t(first) * stride_, std::size_t(last - first) * stride_);
    }

    // The unguarded stacks among [first, last) whose programs reached into
    // their red zone; each zone is cleaned for the next run. One mincore(2)
    // per stretch of `residency.size()` pages rather than one per stack: on a
    // virtual machine a system call costs microseconds, a node-step less.
    std::vector<int> red_zones_touched(int first, int last,
                                       std::vector<unsigned char>& residency) const {
        std::vector<int> touched;
        first = int(std::max<long long>(first, guarded_));
        const std::size_t page = page_bytes(), per_call = residency.size() * page;
        const std::size_t begin = std::size_t(first) * stride_;
        const std::size_t end = std::size_t(std::max(last, first)) * stride_;
        for (std::size_t at = begin; at < end; at += per_call) {
            const std::size_t bytes = std::min(per_call, end - at);
            if (mincore(base_ + at, bytes, residency.data()) != 0) continue;
            // The zones that start within [at, at + bytes): a zone never
            // crosses a stretch, whose size is a multiple of the stride.
            for (std::size_t zone = at; zone < at + bytes; zone += stride_) {
                const unsigned char* r = residency.data() + (zone - at) / page;
                if (std::none_of(r, r + zone_pages, [](unsigned char v) { return v & 1; }))
                    continue;
                madvise(base_ + zone, zone_, MADV_DONTNEED);
                touched.push_back(int(zone / stride_));
            }
        }
        return touched;
    }
    // Pages residency vectors for red_zones_touched need: a multiple of the
    // stride's, near `pages`.
    std::size_t residency_pages(std::size_t pages) const noexcept {
        const std::size_t per_stack = stride_ / page_bytes();
        return std::max<std::size_t>(1, pages / per_stack) * per_stack;
    }

private:
    // Also before munmap: the next mapping there (a ring) would inherit them.
    static void unpoison([[maybe_unused]] char* at, [[maybe_unused]] std::size_t bytes) noexcept {
#ifdef HCUBE_ASAN_FIBERS
        ASAN_UNPOISON_MEMORY_REGION(at, bytes);
#endif
    }

    std::size_t stride_, zone_, bytes_ = 0;
    long long guarded_;
    char* base_ = nullptr;
};

// The stack allocator Boost.Context asks for a fiber's stack: the node's own,
// reused by every run, never freed by the fiber.
struct pooled_stack {
    boost::context::stack_context sc;
    boost::context::stack_context allocate() const noexcept { return sc; }
    void deallocate(boost::context::stack_context&) const noexcept {}
};

} // namespace hcube::detail
