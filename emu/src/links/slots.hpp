// Where a ring's slots live (links/ring.hpp); the link table lays them out
// (links/link.hpp). Private to emu/src.
//
// Slot j < plane_slots of every link sits in plane j, next to slot j of the
// link before and after it:
//
//   plane 0   [link 0 slot 0][link 1 slot 0][link 2 slot 0] ...
//   plane 1   [link 0 slot 1][link 1 slot 1][link 2 slot 1] ...
//   ...
//   deep      [link 0 slots 16..][link 1 slots 16..] ...   (capacity > 16 only)
//
// A slot is untouched until a message uses it, so the memory a machine takes
// follows the deepest backlog its links reach, not their capacity: a program
// that keeps one message in flight per link touches plane 0 alone. Slots from
// plane_slots on stay together per link, so that a flood down one link of a
// large capacity touches its own lines rather than one page of every plane.
#pragma once

#include <cstddef>
#include <cstdint>

#include <hcube/config.hpp>

#include "message.hpp"

namespace hcube::detail {

inline constexpr std::size_t plane_slots = 16;

struct slot_place {
    char* first = nullptr;         // slot 0 (in plane 0)
    char* deep = nullptr;          // slot plane_slots, when there are more slots
    std::uint32_t plane_bytes = 0; // from one plane to the next: a line per link in the table
    std::uint32_t mask = 0;        // slots - 1 (a power of two)

    // Slot n mod slots.
    void* at(std::uint64_t n) const noexcept {
        const std::uint64_t j = n & mask;
        return j < plane_slots ? first + j * plane_bytes : deep + (j - plane_slots) * cache_line;
    }
};
static_assert(sizeof(slot_place) == 24);
static_assert((std::uint64_t(max_dim) << max_dim) * cache_line <= UINT32_MAX,
              "plane_bytes fits 32 bits for every link of the largest cube");

} // namespace hcube::detail
