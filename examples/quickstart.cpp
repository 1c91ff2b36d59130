// The node program of README.md, built and run by the test suite.
#include <hcube/hcube.hpp>
#include <iostream>

int main() {
    hcube::machine m(
        {.dim = 4, .ports = hcube::port_model::single_port, .cost = {.t_s = 10, .t_w = 1}});
    hcube::run_report r = m.run([](hcube::node& me) {
        std::vector<double> v(8, me.id());                 // private to this node
        hcube::allreduce(me, std::span(v), std::plus<>{}); // a collective from collectives/
        for (int k = 0; k < me.dim(); ++k)                 // or the primitives themselves
            (void)me.exchange(k, std::vector<int>{me.id()});
    });
    std::cout << r; // virtual time, steps, traffic
}
