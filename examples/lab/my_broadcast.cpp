// Lab exercise 2: write your own broadcast and compare it with the library's.
// This first attempt lets the root send the message to every other node
// itself, over routed (E-cube) messages: p - 1 sends from one port. Run it,
// then compare its picture and cost with the library's recursive doubling:
//
//   ./my_broadcast 3                      (writes mine.svg and mine.json)
//   hcube run broadcast --algo binomial --dim 3 --svg library.svg
//   hcube draw broadcast --algo binomial --dim 3 --out library.html
//
// Then replace the body of `my_broadcast` with something faster (Grama et
// al. 4.1.5, Alg. 4.1) and check that the virtual time drops to log p.
// usage: my_broadcast [D] [--ts T] [--tw T] [--words M]
//   D: the dimension, 1..6 (default 3); t_s, t_w: the cost model (default 1
//   and 0, as hcube run); M: the message's words (default 4)
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/draw.hpp>
#include <hcube/machine.hpp>

#include "lab_args.hpp"

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
    int d = 3;
    std::size_t words = 4;
    hcube::cost_model cost;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--ts" && has_value)
            cost.t_s = lab::number("my_broadcast", "--ts", argv[++i], 0.0, 1e9);
        else if (a == "--tw" && has_value)
            cost.t_w = lab::number("my_broadcast", "--tw", argv[++i], 0.0, 1e9);
        else if (a == "--words" && has_value)
            words = lab::number<std::size_t>("my_broadcast", "--words", argv[++i], 1,
                                             std::size_t(1) << 24);
        else if (i == 1 && !a.starts_with("-"))
            d = lab::number("my_broadcast", "D", a, 1, 6);
        else {
            std::cerr << "my_broadcast: unknown argument '" << a
                      << "' (usage: my_broadcast [D] [--ts T] [--tw T] [--words M])\n";
            return 2;
        }
    }
    hcube::machine m({.dim = d, .cost = cost, .trace = true});
    std::vector<std::vector<int>> data(std::size_t(1) << d, std::vector<int>(words, -1));
    for (std::size_t j = 0; j < words; ++j)
        data[0][j] = int(j + 1);
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
