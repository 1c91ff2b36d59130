// Traced runs the trace and critical-path tests share: a binomial broadcast
// from node 0, and a root that sends routed messages to every node itself.
#pragma once

#include <vector>

#include <hcube/collectives/broadcast.hpp>
#include <hcube/hcube.hpp>

namespace hcube::test {

inline run_report traced_broadcast(port_model ports, cost_model cost = {}) {
    machine m({.dim = 3, .ports = ports, .cost = cost, .trace = true});
    return m.run([](node& me) {
        std::vector<int> data(4, me.id() == 0 ? 7 : 0);
        broadcast(me, std::span<int>(data), 0, broadcast_algo::binomial);
    });
}

inline run_report traced_routed_broadcast() {
    machine m({.dim = 3, .trace = true});
    return m.run([](node& me) {
        std::vector<int> data(4);
        if (me.id() == 0)
            for (int i = 1; i < 8; ++i)
                me.send_routed(i, data);
        else
            me.recv_routed(0, data);
    });
}

} // namespace hcube::test
