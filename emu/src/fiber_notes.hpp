// What the sanitizers must be told when a fiber switches stacks. Private to
// emu/src (fibers.cpp, fiber_stacks.hpp).
#pragma once

#include <cstddef>

#include <boost/context/stack_context.hpp>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define HCUBE_TSAN_FIBERS 1
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define HCUBE_ASAN_FIBERS 1
#endif

namespace hcube::detail {

// What the sanitizers must be told about one context (a worker's own stack or
// a fiber) to follow a switch of stacks: TSan, whose accesses follow (its
// fiber handle); ASan, which stack is live (bounds, for reports and for the
// unpoisoning at a throw) and where the context's fake stack (ASan's frames
// for use-after-return) is kept while it is switched out.
struct context_note {
#ifdef HCUBE_TSAN_FIBERS
    void* tsan = nullptr;
#endif
#ifdef HCUBE_ASAN_FIBERS
    void* fake_stack = nullptr;
    const void* bottom = nullptr;
    std::size_t size = 0;
#endif

    void set_stack([[maybe_unused]] const boost::context::stack_context& sc) noexcept {
#ifdef HCUBE_ASAN_FIBERS
        size = sc.size;
        bottom = static_cast<const char*>(sc.sp) - sc.size;
#endif
    }
};

// Right before switching to `to`. A finished context passes `from` null, so
// ASan frees its fake stack.
inline void leaving([[maybe_unused]] context_note* from,
                    [[maybe_unused]] const context_note& to) noexcept {
#ifdef HCUBE_ASAN_FIBERS
    __sanitizer_start_switch_fiber(from ? &from->fake_stack : nullptr, to.bottom, to.size);
#endif
#ifdef HCUBE_TSAN_FIBERS
    __tsan_switch_to_fiber(to.tsan, 0);
#endif
}

// Right after a switch, in the context `self` arrived in (null: a new context,
// which has no fake stack yet). ASan gives the stack just left: `from`'s
// bounds, which is how a worker's own stack becomes known.
inline void arrived([[maybe_unused]] const context_note* self,
                    [[maybe_unused]] context_note* from) noexcept {
#ifdef HCUBE_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(self ? self->fake_stack : nullptr,
                                    from ? &from->bottom : nullptr, from ? &from->size : nullptr);
#endif
}

} // namespace hcube::detail
