// Lab exercise 2: write your own broadcast and compare it with the library's.
// This first attempt lets the root send the message to every other node
// itself, over routed (E-cube) messages: p - 1 sends from one port. Run it,
// then compare its picture and cost with the library's recursive doubling:
//
//   ./my_broadcast 3                      (writes mine.svg and mine.json)
//   hcube run broadcast --algo binomial --dim 3 --svg library.svg
//   hcube draw broadcast --algo binomial --dim 3 --out library.html
//
// Then replace the body of `my_broadcast` with something faster (Grama et al.,
// Alg. 4.1) and check that the virtual time drops to log p.
// usage: my_broadcast [D]  (default 3)
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <vector>

#include <hcube/draw.hpp>
#include <hcube/machine.hpp>

namespace {

// Every node ends with the root's `data`.
void my_broadcast(hcube::node& me, std::vector<int>& data, int root) {
    if (me.id() == root) {
        for (int i = 0; i < me.size(); ++i)
            if (i != root) me.send_routed(i, data);
    } else {
        me.recv_routed(root, data);
    }
}

} // namespace

int main(int argc, char** argv) {
    const int d = argc > 1 ? std::atoi(argv[1]) : 3;
    if (d < 1 || d > 6) {
        std::cerr << "my_broadcast: D must be 1..6\n";
        return 2;
    }
    hcube::machine m({.dim = d, .trace = true});
    std::vector<std::vector<int>> data(std::size_t(1) << d, std::vector<int>(4, -1));
    data[0] = {1, 2, 3, 4};
    const hcube::run_report r =
        m.run([&](hcube::node& me) { my_broadcast(me, data[std::size_t(me.id())], 0); });
    for (const auto& v : data)
        if (v != data[0]) {
            std::cout << "a node did not get the message\n";
            return 1;
        }
    std::cout << r;
    std::ofstream svg("mine.svg"), json("mine.json");
    hcube::write_timeline_svg(r, svg, {.title = "my broadcast"});
    hcube::write_chrome_trace(r, json);
    std::cout << "wrote mine.svg and mine.json (open it in https://ui.perfetto.dev)\n";
    return 0;
}
