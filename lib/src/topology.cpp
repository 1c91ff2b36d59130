#include <hcube/topology.hpp>

namespace hcube {

std::vector<int> transition_sequence(int d) {
    return rotated_transition_sequence(d, 0);
}

std::vector<int> rotated_transition_sequence(int d, int r) {
    std::vector<int> t;
    if (d == 0) return t;
    const node_id n = node_id{1} << d;
    t.reserve(n);
    for (node_id i = 0; i < n; ++i)
        t.push_back((gray_transition(i, d) + r) % d);
    return t;
}

std::vector<node_id> hamiltonian_cycle(int d, int r, node_id start) {
    std::vector<node_id> cycle{start};
    const std::vector<int> t = rotated_transition_sequence(d, r);
    for (std::size_t i = 0; i + 1 < t.size(); ++i)
        cycle.push_back(neighbor(cycle.back(), t[i]));
    return cycle;
}

std::vector<int> ecube_path(node_id from, node_id to) {
    std::vector<int> dims;
    for (node_id diff = from ^ to; diff != 0; diff &= diff - 1)
        dims.push_back(std::countr_zero(diff));
    return dims;
}

std::vector<node_id> ecube_route(node_id from, node_id to) {
    std::vector<node_id> route{from};
    for (int k : ecube_path(from, to))
        route.push_back(neighbor(route.back(), k));
    return route;
}

} // namespace hcube
