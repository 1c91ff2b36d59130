// What travels on a link: a message descriptor (arrival time, size, element
// type, payload inline or by pointer), whatever link implementation carries it
// (links/link.hpp). Private to emu/src.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hcube::detail {

inline constexpr std::size_t cache_line = 64;

// A point on both virtual clocks: time under the configured cost model and the
// same critical path counted in steps (t_s = 1, t_w = 0).
struct vclock {
    double time = 0;
    std::int64_t steps = 0;

    friend vclock max(vclock a, vclock b) noexcept {
        return {a.time > b.time ? a.time : b.time, a.steps > b.steps ? a.steps : b.steps};
    }
    friend vclock operator+(vclock a, vclock b) noexcept {
        return {a.time + b.time, a.steps + b.steps};
    }
    friend vclock operator-(vclock a, vclock b) noexcept {
        return {a.time - b.time, a.steps - b.steps};
    }
};

enum class payload : std::uint8_t {
    inline_bytes, // in the descriptor itself
    heap,         // a scalable_malloc'd copy the receiver frees
    borrowed,     // the sender's own buffer; the sender waits until it is consumed
};

// One message. With the ring's sequence number (links/ring.hpp) it fills one
// cache line: the
// element type is a 24-bit id (node.hpp, wire_type_id), which also gives its
// size, so any element size fits.
struct descriptor {
    static constexpr std::size_t inline_capacity = 32;
    static constexpr unsigned type_bits = 24;

    vclock arrival;                     // when the last word arrives at the receiver
    std::uint32_t bytes = 0;            // payload size
    std::uint32_t type : type_bits = 0; // element type of the sender's range
    payload kind = payload::inline_bytes;
    union {
        unsigned char data[inline_capacity];
        const void* ptr;
    };

    descriptor() noexcept
        : ptr(nullptr) {}

    // Copies of n <= inline_capacity bytes in and out of `data`, inline: most
    // messages of a latency-bound program are a few words, and a call to the
    // C library's memcpy was a tenth of a hop. Fixed-size moves that may
    // overlap cover every n without reading outside either buffer. Forced
    // inline: left to itself the compiler made each a call per message.
    [[gnu::always_inline]] void store_inline(const void* from, std::size_t n) noexcept {
        bytes_move(data, static_cast<const unsigned char*>(from), n);
    }
    [[gnu::always_inline]] void load_inline(void* to) const noexcept {
        bytes_move(static_cast<unsigned char*>(to), data, bytes);
    }

private:
    [[gnu::always_inline]] static void bytes_move(unsigned char* to, const unsigned char* from,
                                                  std::size_t n) noexcept {
        static_assert(inline_capacity <= 32);
        if (n >= 16)
            move_two<16>(to, from, n);
        else if (n >= 8)
            move_two<8>(to, from, n);
        else if (n >= 4)
            move_two<4>(to, from, n);
        else
            for (std::size_t i = 0; i < n; ++i)
                to[i] = from[i];
    }
    // n in [w, 2w]: the first and the last w bytes.
    template <std::size_t W>
    [[gnu::always_inline]] static void move_two(unsigned char* to, const unsigned char* from,
                                                std::size_t n) noexcept {
        std::memcpy(to, from, W);
        std::memcpy(to + n - W, from + n - W, W);
    }
};

// What a link holds unread: its messages and their payload bytes (the deadlock
// report's "2 messages pending on dim 0 from node 1, 32 bytes").
struct link_backlog {
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
};

} // namespace hcube::detail
