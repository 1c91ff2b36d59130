// Lab exercise 3: find the deadlock. Every node shifts its value one place
// along dimension 0 and then along dimension 1, but with unbuffered links
// (link_capacity 0: a send completes only when it is received) the program
// hangs... or would: hcube reports the deadlock, and this program draws the
// report's wait-for graph into deadlock.svg. Read both, find why every node
// waits, and fix the program so that it completes (README.md has a hint).
// usage: find_deadlock  (exits 1 while the deadlock is there)
#include <fstream>
#include <iostream>

#include <hcube/draw.hpp>
#include <hcube/machine.hpp>

int main() {
    hcube::machine m({.dim = 2, .link_capacity = 0});
    try {
        m.run([](hcube::node& me) {
            for (int k = 0; k < me.dim(); ++k) {
                const int mine[1] = {me.id()};
                int theirs[1];
                me.send(k, mine);
                me.recv(k, theirs);
            }
        });
    } catch (const hcube::deadlock_error& e) {
        std::cout << e.what() << '\n';
        std::ofstream svg("deadlock.svg");
        svg << hcube::wait_for_svg(e, 2);
        std::cout << "wrote deadlock.svg\n";
        return 1;
    }
    std::cout << "no deadlock: well done\n";
    return 0;
}
