// config::digest: a node's running hash of the messages it took, which the
// run's fingerprint covers (report.hpp). Private to emu/src.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hcube::detail {

// Folds a message from `from` (a link, or a routed source) of `bytes` bytes
// into `h`: a multiply and a shift per 8-byte word, so large payloads cost
// about as much as their copy.
inline std::uint64_t fold_message(std::uint64_t h, int from, const void* data,
                                  std::size_t bytes) noexcept {
    const auto mix = [](std::uint64_t x, std::uint64_t v) noexcept {
        x = (x ^ v) * 0x9e3779b97f4a7c15ull;
        return x ^ (x >> 29);
    };
    h = mix(mix(h, std::uint64_t(std::int64_t(from))), bytes);
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = mix(h, w);
    }
    if (i < bytes) {
        std::uint64_t w = 0;
        std::memcpy(&w, p + i, bytes - i);
        h = mix(h, w);
    }
    return h;
}

} // namespace hcube::detail
