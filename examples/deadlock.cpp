// deadlock: the classic first mistake on two nodes. Both ends receive before
// they send, so each waits for a message the other never gets to send:
//
//   node 0: recv(0) ... waits for node 1      node 1: recv(0) ... waits for node 0
//           send(0)     never reached                 send(0)     never reached
//
// hcube notices that every node is parked with nothing in flight and run()
// throws deadlock_error, whose message lists what each node waits for. (The
// fix: one side sends first, or both use exchange.) Exits 1 on the deadlock.
#include <iostream>

#include <hcube/machine.hpp>

int main() {
    hcube::machine m({.dim = 1});
    try {
        m.run([](hcube::node& me) {
            int got[1];
            me.recv(0, got); // both nodes block here
            const int mine[1] = {me.id()};
            me.send(0, mine);
        });
    } catch (const hcube::deadlock_error& e) {
        std::cout << e.what() << '\n';
        return 1;
    }
    std::cout << "no deadlock was reported\n";
    return 0;
}
