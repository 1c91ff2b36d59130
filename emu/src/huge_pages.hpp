// Memory on transparent huge pages for what a machine holds per node and per
// link. Private to emu/src.
//
// At d = 20 the nodes' states and links take gigabytes, and on 4 KiB pages
// every page's first touch is a fault of its own: tens of microseconds on a
// virtual machine, where a 2 MiB page costs about what a few small ones do.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include <hcube/error.hpp>

namespace hcube::detail {

// Zero-filled memory: an anonymous mapping that reserves no swap, so its
// pages cost memory only once touched. From 1 MiB on it is aligned to 2 MiB
// and advised to use transparent huge pages (the kernel's THP setting is often
// `madvise`, which gives them only to those who ask); a smaller one keeps
// 4 KiB pages, as a huge page is zeroed whole at its first touch.
class huge_arena {
public:
    static constexpr std::size_t huge_page = std::size_t(2) << 20;

    huge_arena() = default;
    // `what` names the contents in the error if the mapping fails.
    huge_arena(std::size_t bytes, const char* what) {
        if (bytes == 0) return;
        const bool huge = bytes >= huge_page / 2;
        const std::size_t align = huge ? huge_page : std::size_t(sysconf(_SC_PAGESIZE));
        bytes_ = (bytes + align - 1) / align * align;
        const std::size_t extra = huge ? huge_page : 0;
        void* at = mmap(nullptr, bytes_ + extra, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (at == MAP_FAILED)
            throw error("machine: cannot map " + std::to_string(bytes_) + " bytes for " + what +
                        ": " + std::strerror(errno) +
                        " (lower the dimension or link_capacity, or raise the "
                        "address-space limit)");
        base_ = static_cast<char*>(at);
        if (!huge) return;
        // Keep the aligned part, give back the rest.
        char* raw = base_;
        base_ = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + huge_page - 1) &
                                        ~(huge_page - 1));
        if (base_ != raw) munmap(raw, std::size_t(base_ - raw));
        if (const std::size_t tail = huge_page - std::size_t(base_ - raw); tail > 0)
            munmap(base_ + bytes_, tail);
        madvise(base_, bytes_, MADV_HUGEPAGE);
    }
    huge_arena(huge_arena&& o) noexcept
        : base_(std::exchange(o.base_, nullptr))
        , bytes_(std::exchange(o.bytes_, 0)) {}
    huge_arena& operator=(huge_arena&& o) noexcept {
        if (this != &o) {
            release();
            base_ = std::exchange(o.base_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    ~huge_arena() { release(); }

    char* data() const noexcept { return base_; }

private:
    void release() noexcept {
        if (base_) munmap(base_, bytes_);
        base_ = nullptr;
        bytes_ = 0;
    }
    char* base_ = nullptr;
    std::size_t bytes_ = 0;
};

// n value-initialized objects of T side by side in a huge_arena, for arrays
// too large for the heap to place well (a node_state per node).
template <class T>
class huge_array {
public:
    huge_array() = default;
    huge_array(std::size_t n, const char* what)
        : arena_(n * sizeof(T), what) {
        T* at = data();
        for (; n_ < n; ++n_)
            new (at + n_) T();
    }
    huge_array(huge_array&& o) noexcept
        : arena_(std::move(o.arena_))
        , n_(std::exchange(o.n_, 0)) {}
    huge_array& operator=(huge_array&& o) noexcept {
        if (this != &o) {
            destroy();
            arena_ = std::move(o.arena_);
            n_ = std::exchange(o.n_, 0);
        }
        return *this;
    }
    ~huge_array() { destroy(); }

    T* data() const noexcept { return std::launder(reinterpret_cast<T*>(arena_.data())); }
    T& operator[](std::size_t i) const noexcept { return data()[i]; }
    T* begin() const noexcept { return data(); }
    T* end() const noexcept { return data() + n_; }

private:
    void destroy() noexcept {
        std::destroy(begin(), end());
        n_ = 0;
    }
    huge_arena arena_;
    std::size_t n_ = 0;
};

// Transparent huge pages for the 2 MiB-aligned part of [at, at + bytes), a
// heap block not yet touched: glibc serves a large malloc from a mapping of
// its own, which the kernel's `madvise` setting would leave on 4 KiB pages.
inline void advise_huge_pages(void* at, std::size_t bytes) noexcept {
    constexpr std::uintptr_t huge = huge_arena::huge_page;
    const auto first = (reinterpret_cast<std::uintptr_t>(at) + huge - 1) & ~(huge - 1);
    const auto last = (reinterpret_cast<std::uintptr_t>(at) + bytes) & ~(huge - 1);
    if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

} // namespace hcube::detail
