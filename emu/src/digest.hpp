// config::digest: a node's hash of the messages it took, which the run's
// fingerprint covers (report.hpp). Private to emu/src.
//
// The messages' hashes are added up, each one naming its link (or source)
// and virtual arrival: exchange_all takes its messages in whatever order
// they come, which must not change the digest, while each link's messages
// keep their place by their arrival.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "links/message.hpp"

namespace hcube::detail {

// The hash of a message from `from` (a link, or a routed source) that
// arrived at `arrival`: a multiply and a shift per 8-byte word, so large
// payloads cost about as much as their copy.
inline std::uint64_t message_digest(int from, vclock arrival, const void* data,
                                    std::size_t bytes) noexcept {
    const auto mix = [](std::uint64_t x, std::uint64_t v) noexcept {
        x = (x ^ v) * 0x9e3779b97f4a7c15ull;
        return x ^ (x >> 29);
    };
    std::uint64_t t;
    std::memcpy(&t, &arrival.time, sizeof t);
    std::uint64_t h =
        mix(mix(mix(mix(0, std::uint64_t(std::int64_t(from))), t), std::uint64_t(arrival.steps)),
            bytes);
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
    return mix(h, 0);
}

} // namespace hcube::detail
