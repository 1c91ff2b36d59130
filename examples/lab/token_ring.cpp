// Lab exercise 1: pass a token around the Gray-code ring. Ring position r lives
// on node gray(r), so ring neighbours are hypercube neighbours (Grama et
// al. 4.6.2, Figure 4.23): position r receives from r - 1 on the link
// gray_transition(r - 1) and sends to r + 1 on gray_transition(r).
//
//   d = 3:  position  0   1   2   3   4   5   6   7   (back to 0)
//           node      0   1   3   2   6   7   5   4
//
// Every node adds its id to the token; node 0 starts it and gets the sum back.
// Writes ring.svg (the space-time diagram) and prints the run report.
// usage: token_ring [D]  (default 3)
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <hcube/draw.hpp>
#include <hcube/machine.hpp>
#include <hcube/topology.hpp>

int main(int argc, char** argv) {
    const int d = argc > 1 ? std::atoi(argv[1]) : 3;
    if (d < 1 || d > 6) {
        std::cerr << "token_ring: D must be 1..6\n";
        return 2;
    }
    const hcube::node_id p = hcube::node_id(1) << d;
    long long back = -1;
    hcube::machine m({.dim = d, .trace = true});
    const hcube::run_report r = m.run([&](hcube::node& me) {
        const hcube::node_id pos = hcube::gray_inverse(hcube::node_id(me.id()));
        const int to_next = hcube::gray_transition(pos, d);
        const int from_prev = hcube::gray_transition((pos + p - 1) % p, d);
        long long token[1] = {0};
        if (pos != 0) me.recv(from_prev, token); // wait for the token ...
        token[0] += me.id();                     // ... add my id ...
        me.send(to_next, token);                 // ... pass it on
        if (pos == 0) {
            me.recv(from_prev, token);
            back = token[0];
        }
    });
    std::cout << "the token came back to node 0 with " << back << " (0 + 1 + ... + " << p - 1
              << " = " << p * (p - 1) / 2 << ")\n"
              << r;
    std::ofstream svg("ring.svg");
    hcube::write_timeline_svg(r, svg, {.title = "a token around the Gray-code ring"});
    std::cout << "wrote ring.svg\n";
    return back == (long long)(p * (p - 1) / 2) ? 0 : 1;
}
