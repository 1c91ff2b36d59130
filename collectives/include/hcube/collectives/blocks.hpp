// Splitting m elements into p nearly equal blocks (the first m % p blocks get
// one more), as the message-splitting algorithms of Grama et al. 4.7.1 need when
// m does not divide by p.
#pragma once

#include <cstddef>

namespace hcube {

struct block {
    std::size_t begin;
    std::size_t size;
    constexpr std::size_t end() const noexcept { return begin + size; }
};

constexpr block block_of(std::size_t m, std::size_t parts, std::size_t i) noexcept {
    const std::size_t q = m / parts, r = m % parts;
    return {i * q + (i < r ? i : r), q + (i < r ? 1 : 0)};
}

// Blocks i .. i + count - 1 as one contiguous range.
constexpr block blocks_of(std::size_t m, std::size_t parts, std::size_t i,
                          std::size_t count) noexcept {
    const block first = block_of(m, parts, i);
    const block last = block_of(m, parts, i + count - 1);
    return {first.begin, last.end() - first.begin};
}

} // namespace hcube
