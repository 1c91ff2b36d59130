// lib/spanning_trees.hpp: the d trees' schedules, read without running
// anything, for d <= 10: every tree spans the cube with a parent heard
// before its children; the edge-disjoint family shares no directed edge
// (the rotated family does, at the root); in one step no two trees use one
// link; the d = 3 drawings in the header.
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <doctest/doctest.h>
#include <hcube/spanning_trees.hpp>

using namespace hcube;

namespace {

// The directed edges (from, dim) of tree j, with the step each is used in.
std::map<std::pair<node_id, int>, int> tree_edges(tree_family f, int d, int j) {
    std::map<std::pair<node_id, int>, int> out;
    for (node_id v = 1; v < (node_id{1} << d); ++v) {
        const tree_edge e = tree_parent(f, d, j, v);
        out[{neighbor(v, e.dim), e.dim}] = e.step;
    }
    return out;
}

// Every node's parent is heard before it (so the root reaches everyone) and
// sends it across a dimension where the two differ; tree_child agrees.
void check_spanning(tree_family f, int d, int j) {
    for (node_id v = 1; v < (node_id{1} << d); ++v) {
        const tree_edge e = tree_parent(f, d, j, v);
        REQUIRE(e.dim >= 0);
        REQUIRE(e.dim < d);
        REQUIRE(e.step >= 0);
        REQUIRE(e.step < tree_steps(f, d));
        const node_id parent = neighbor(v, e.dim);
        if (parent != 0) REQUIRE(tree_parent(f, d, j, parent).step < e.step);
        REQUIRE(tree_child(f, d, j, parent, e.dim, e.step));
    }
}

} // namespace

TEST_CASE("every tree spans the cube, parents heard first, d = 1..10") {
    for (auto f : {tree_family::rotated, tree_family::edge_disjoint})
        for (int d = 1; d <= 10; ++d)
            for (int j = 0; j < d; ++j) {
                CAPTURE(d);
                CAPTURE(j);
                check_spanning(f, d, j);
            }
}

TEST_CASE("edge-disjoint trees share no directed edge; rotated ones share the root's") {
    for (int d = 1; d <= 10; ++d) {
        CAPTURE(d);
        std::set<std::pair<node_id, int>> used;
        std::size_t edges = 0;
        for (int j = 0; j < d; ++j)
            for (const auto& [edge, step] : tree_edges(tree_family::edge_disjoint, d, j)) {
                used.insert(edge);
                ++edges;
            }
        CHECK(edges == std::size_t(d) * ((std::size_t{1} << d) - 1));
        CHECK(used.size() == edges);
        // The rotated trees all leave the root on every link.
        std::set<std::pair<node_id, int>> rotated;
        for (int j = 0; j < d; ++j)
            for (const auto& [edge, step] : tree_edges(tree_family::rotated, d, j))
                rotated.insert(edge);
        if (d >= 2) CHECK(rotated.size() < edges);
        for (int j = 0; j < d; ++j)
            for (int k = 0; k < d; ++k)
                CHECK(tree_edges(tree_family::rotated, d, j).count({0, k}) == 1);
    }
}

TEST_CASE("in one step no two trees use one directed link, d = 1..10") {
    for (auto f : {tree_family::rotated, tree_family::edge_disjoint})
        for (int d = 1; d <= 10; ++d) {
            CAPTURE(d);
            std::set<std::tuple<node_id, int, int>> link_steps;
            std::size_t uses = 0;
            for (int j = 0; j < d; ++j)
                for (const auto& [edge, step] : tree_edges(f, d, j)) {
                    link_steps.insert({edge.first, edge.second, step});
                    ++uses;
                }
            CHECK(link_steps.size() == uses);
        }
}

TEST_CASE("the d = 3 drawings of spanning_trees.hpp") {
    // parent[j][v]: tree j's parent of node v (v = 1..7), and the step.
    const int esbt_parent[3][8] = {
        {-1, 0, 3, 1, 5, 1, 7, 3}, {-1, 3, 0, 2, 6, 7, 2, 6}, {-1, 5, 6, 7, 0, 4, 4, 5}};
    const int esbt_step[3][8] = {
        {-1, 0, 3, 1, 3, 2, 3, 2}, {-1, 3, 0, 2, 3, 3, 1, 2}, {-1, 3, 3, 3, 0, 1, 2, 2}};
    const int rot_parent[3][8] = {
        {-1, 0, 0, 1, 0, 1, 2, 3}, {-1, 0, 0, 2, 0, 4, 2, 6}, {-1, 0, 0, 1, 0, 4, 4, 5}};
    const int rot_step[3][8] = {
        {-1, 0, 1, 1, 2, 2, 2, 2}, {-1, 2, 0, 2, 1, 2, 1, 2}, {-1, 1, 2, 2, 0, 1, 2, 2}};
    for (int j = 0; j < 3; ++j)
        for (node_id v = 1; v < 8; ++v) {
            CAPTURE(j);
            CAPTURE(v);
            const tree_edge e = tree_parent(tree_family::edge_disjoint, 3, j, v);
            CHECK(int(neighbor(v, e.dim)) == esbt_parent[j][v]);
            CHECK(e.step == esbt_step[j][v]);
            const tree_edge r = tree_parent(tree_family::rotated, 3, j, v);
            CHECK(int(neighbor(v, r.dim)) == rot_parent[j][v]);
            CHECK(r.step == rot_step[j][v]);
        }
    CHECK(tree_steps(tree_family::edge_disjoint, 3) == 4);
    CHECK(tree_steps(tree_family::rotated, 3) == 3);
    CHECK(tree_steps(tree_family::edge_disjoint, 1) == 1);
}
