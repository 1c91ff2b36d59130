// lib/include/hcube/cost/aspc.hpp: the closed forms, worked by hand for small cases.
#include <doctest/doctest.h>

#include <hcube/cost/aspc.hpp>

using namespace hcube::cost;

TEST_CASE("ASPC closed forms") {
    CHECK(aspc_all_port(5, 7, 3, 2) == 4 * (3 + 14));
    CHECK(aspc_all_port(1, 7, 3, 2) == 2 * (3 + 14));
    CHECK(aspc_single_port(5, 7, 3, 2) == 18 * (3 + 14));
    CHECK(aspc_single_port_steps(10) == 38);
}

TEST_CASE("descend: the source's counts and the exact ones") {
    // N = 8 (n = 3), M = 64 (L = 8, log L = 3).
    CHECK(descend_direct_paper_steps(3, 64) == 2 * 3 * 8);
    CHECK(descend_pipelined_paper_steps(3, 64) == 4 * (6 + 8 - 1));
    CHECK(descend_direct_steps(3, 64) == 5 * 8 + 3);
    CHECK(descend_pipelined_steps(3, 64) == 4 * 10 - 2 + 3);
    // Times: 40 one-element steps, then local messages of 4, 2, 1 elements.
    CHECK(descend_direct(3, 64, 5, 2) == 40 * 7 + 3 * 5 + 7 * 2);
    CHECK(descend_pipelined(3, 64, 5, 2) == 38 * 7 + 3 * 5 + 7 * 2);
    // M = N: no local stage.
    CHECK(descend_direct_steps(4, 16) == 7);
    CHECK(descend_pipelined_steps(4, 16) == 14);
}
