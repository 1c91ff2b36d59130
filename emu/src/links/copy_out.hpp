// Copying a message's payload out of a link, safe against a sender that
// unwinds meanwhile. Private to emu/src.
#pragma once

#include <atomic>
#include <cstring>

#include "link.hpp"
#include "message.hpp"

namespace hcube::detail {

// Copies d's payload (the front of l) to dst. A borrowed payload (a
// rendezvous send) is read under l's reading() flag: a sender whose run was
// cancelled waits until no reader holds it before its buffer goes away
// (link_ops.hpp, pending_deliveries). False, with nothing copied, when the
// run was cancelled first. Inlined into every receive: it runs once per
// message taken.
template <spsc_link L>
[[gnu::always_inline]] inline bool copy_payload(L& l, const descriptor& d, void* dst,
                                                const std::atomic<bool>& cancelled) {
    const bool borrowed = d.kind == payload::borrowed;
    if (borrowed) {
        l.reading().store(true, std::memory_order_seq_cst);
        if (cancelled.load(std::memory_order_seq_cst)) {
            l.reading().store(false, std::memory_order_release);
            return false;
        }
    }
    if (d.kind == payload::inline_bytes)
        d.load_inline(dst);
    else if (d.bytes)
        std::memcpy(dst, d.ptr, d.bytes);
    if (borrowed) l.reading().store(false, std::memory_order_release);
    return true;
}

} // namespace hcube::detail
