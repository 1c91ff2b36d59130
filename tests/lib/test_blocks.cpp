// block_of and blocks_of (hcube/collectives/blocks.hpp): m elements in p
// nearly equal blocks, the first m % p one longer, by hand.
#include <doctest/doctest.h>

#include <hcube/collectives/blocks.hpp>

using hcube::block;
using hcube::block_of;
using hcube::blocks_of;

namespace {

void check_block(block b, std::size_t begin, std::size_t size) {
    CHECK(b.begin == begin);
    CHECK(b.size == size);
    CHECK(b.end() == begin + size);
}

} // namespace

TEST_CASE("block_of: 10 elements in 4 blocks are 3, 3, 2, 2") {
    check_block(block_of(10, 4, 0), 0, 3);
    check_block(block_of(10, 4, 1), 3, 3);
    check_block(block_of(10, 4, 2), 6, 2);
    check_block(block_of(10, 4, 3), 8, 2);
}

TEST_CASE("block_of: fewer elements than blocks leaves the last blocks empty, at the end") {
    check_block(block_of(3, 5, 0), 0, 1);
    check_block(block_of(3, 5, 2), 2, 1);
    check_block(block_of(3, 5, 3), 3, 0);
    check_block(block_of(3, 5, 4), 3, 0);
    check_block(block_of(0, 4, 2), 0, 0);
}

TEST_CASE("block_of: an even split, and one block holding everything") {
    check_block(block_of(12, 4, 3), 9, 3);
    check_block(block_of(7, 1, 0), 0, 7);
}

TEST_CASE("blocks_of: consecutive blocks as one range") {
    check_block(blocks_of(10, 4, 1, 2), 3, 5); // blocks 1 and 2: [3, 8)
    check_block(blocks_of(10, 4, 2, 2), 6, 4);
    check_block(blocks_of(10, 4, 0, 4), 0, 10);
    check_block(blocks_of(10, 4, 3, 1), 8, 2);
    check_block(blocks_of(3, 5, 2, 3), 2, 1); // one element, then two empty blocks
}
