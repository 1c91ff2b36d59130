// hello: every node swaps its id with each of its d neighbours and checks that
// the reply came from id XOR 2^k. Under all-port with t_s = 1, t_w = 0 the
// d exchanges take virtual time d, one step per dimension:
//
//   step k:  x <-> x ^ 2^k  for every node x at once (one link each)
//
// Usage: hello [D]   (D = 4 by default)
#include <charconv>
#include <cstdio>
#include <iostream>
#include <string_view>
#include <vector>

#include <hcube/machine.hpp>

int main(int argc, char** argv) {
    int dim = 4;
    if (argc > 1) {
        const std::string_view arg = argv[1];
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), dim);
        if (argc > 2 || ec != std::errc{} || end != arg.data() + arg.size()) {
            std::cerr << "usage: hello [D]   (D: hypercube dimension, default 4)\n";
            return 2;
        }
    }
    try {
        hcube::machine m({.dim = dim, .ports = hcube::port_model::all_port});
        std::vector<int> mismatches(m.size()); // one slot per node, written by that node only
        const hcube::run_report report = m.run([&](hcube::node& me) {
            for (int k = 0; k < me.dim(); ++k) {
                const int mine[1] = {me.id()};
                int theirs[1] = {-1};
                me.exchange(k, mine, theirs);
                if (theirs[0] != (me.id() ^ (1 << k))) ++mismatches[me.id()];
            }
        });
        std::cout << report;
        int total = 0;
        for (int x = 0; x < m.size(); ++x) {
            if (mismatches[x] != 0)
                std::cerr << "node " << x << ": " << mismatches[x] << " wrong replies\n";
            total += mismatches[x];
        }
        std::cout << (total == 0 ? "every node heard from each of its neighbours\n"
                                 : "some replies were wrong\n");
        return total == 0 ? 0 : 1;
    } catch (const hcube::error& e) {
        std::cerr << "hello: " << e.what() << '\n';
        return 1;
    }
}
