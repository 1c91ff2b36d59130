// block_of and blocks_of (hcube/collectives/blocks.hpp): m elements in p
// nearly equal blocks, the first m % p one longer, by hand.
#include <doctest/doctest.h>

#include <hcube/collectives/blocks.hpp>

using hcube::block_of;
using hcube::blocks_of;

namespace {

// Blocks first .. first + count - 1 of m elements in `parts`, and the range
// they cover, worked out by hand.
struct blocks_case {
    std::size_t m, parts, first, count, begin, size;
};

void check_case(const blocks_case& c) {
    CAPTURE(c.m);
    CAPTURE(c.parts);
    CAPTURE(c.first);
    CAPTURE(c.count);
    const hcube::block b =
        c.count == 1 ? block_of(c.m, c.parts, c.first) : blocks_of(c.m, c.parts, c.first, c.count);
    CHECK(b.begin == c.begin);
    CHECK(b.size == c.size);
    CHECK(b.end() == c.begin + c.size);
}

} // namespace

TEST_CASE("block_of: the first m % p blocks one longer, empty blocks at the end") {
    const blocks_case cases[] = {
        {10, 4, 0, 1, 0, 3}, {10, 4, 1, 1, 3, 3}, {10, 4, 2, 1, 6, 2}, {10, 4, 3, 1, 8, 2},
        {3, 5, 0, 1, 0, 1},  {3, 5, 2, 1, 2, 1},  {3, 5, 3, 1, 3, 0},  {3, 5, 4, 1, 3, 0},
        {0, 4, 2, 1, 0, 0},  {12, 4, 3, 1, 9, 3}, {7, 1, 0, 1, 0, 7},
    };
    for (const blocks_case& c : cases)
        check_case(c);
}

TEST_CASE("blocks_of: consecutive blocks as one range") {
    const blocks_case cases[] = {
        {10, 4, 1, 2, 3, 5}, // blocks 1 and 2: [3, 8)
        {10, 4, 2, 2, 6, 4},
        {10, 4, 0, 4, 0, 10},
        {3, 5, 2, 3, 2, 1}, // one element, then two empty blocks
    };
    for (const blocks_case& c : cases)
        check_case(c);
}
