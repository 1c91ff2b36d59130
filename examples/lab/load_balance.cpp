// Lab exercise 4: dynamic load balancing. Node 0 has `tasks` tasks of uneven
// cost (every 7th is heavy); the other nodes compute them (node::compute
// charges the cost to the virtual clock). Two ways to share them:
//
//   static:  worker w takes tasks w - 1, w - 1 + (p - 1), ... without asking,
//            and reports to node 0 when done;
//   dynamic: node 0 hands one task to each worker, then the next task to
//            whichever worker answers first (recv_routed from any source,
//            which takes the answer with the least virtual arrival), and a
//            stop once the tasks run out.
//
// Prints both virtual times and writes their space-time diagrams,
// static.svg and dynamic.svg (the critical path highlighted, local work too).
// usage: load_balance [D] [--tasks N]  (default 3 and 40)
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/draw.hpp>
#include <hcube/machine.hpp>

#include "lab_args.hpp"

namespace {

// Every 7th task is heavy: on a 3-cube the static split gives them all to
// worker 1.
double cost(long long task) {
    return task % 7 == 0 ? 60 : 10;
}

// Every worker's share of the tasks, fixed in advance; each reports its count.
void static_split(hcube::node& me, long long tasks, std::vector<long long>& done) {
    const int workers = me.size() - 1;
    if (me.id() == 0) {
        for (int w = 1; w <= workers; ++w)
            done[std::size_t(w)] = me.recv_routed<long long>(w).at(0);
        return;
    }
    long long count = 0;
    for (long long t = me.id() - 1; t < tasks; t += workers, ++count)
        me.compute(cost(t));
    me.send_routed(0, std::vector<long long>{count});
}

// The next task to whichever worker answers first; -1 stops a worker.
void dynamic_split(hcube::node& me, long long tasks, std::vector<long long>& done) {
    if (me.id() == 0) {
        long long next = 0;
        int busy = 0;
        for (int w = 1; w < me.size(); ++w) {
            busy += next < tasks;
            me.send_routed(w, std::vector<long long>{next < tasks ? next++ : -1});
        }
        for (; busy > 0; --busy) {
            const auto answer = me.recv_routed_any<long long>();
            ++done[std::size_t(answer.source)];
            busy += next < tasks;
            me.send_routed(answer.source, std::vector<long long>{next < tasks ? next++ : -1});
        }
        return;
    }
    for (;;) {
        const long long task = me.recv_routed<long long>(0).at(0);
        if (task < 0) return;
        me.compute(cost(task));
        me.send_routed(0, std::vector<long long>{task});
    }
}

} // namespace

int main(int argc, char** argv) {
    int d = 3;
    long long tasks = 40;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--tasks" && i + 1 < argc)
            tasks = lab::number("load_balance", "--tasks", argv[++i], 1LL, 100000LL);
        else if (i == 1 && !a.starts_with("-"))
            d = lab::number("load_balance", "D", a, 1, 6);
        else {
            std::cerr << "load_balance: unknown argument '" << a
                      << "' (usage: load_balance [D] [--tasks N])\n";
            return 2;
        }
    }
    for (const bool dynamic : {false, true}) {
        hcube::machine m({.dim = d, .trace = true});
        std::vector<long long> done(std::size_t(1) << d);
        const hcube::run_report r = m.run(
            [&](hcube::node& me) { (dynamic ? dynamic_split : static_split)(me, tasks, done); });
        long long total = 0;
        for (const long long n : done)
            total += n;
        if (total != tasks) {
            std::cout << "the workers computed " << total << " tasks of " << tasks << "\n";
            return 1;
        }
        const std::string name = dynamic ? "dynamic" : "static";
        std::cout << name << (dynamic ? " (recv_routed from any source)" : " split")
                  << ": virtual time " << r.virtual_time << "; tasks per worker:";
        for (std::size_t w = 1; w < done.size(); ++w)
            std::cout << ' ' << done[w];
        std::cout << '\n';
        std::ofstream svg(name + ".svg");
        hcube::write_timeline_svg(r, svg, {.title = name + " load balancing"});
    }
    std::cout << "wrote static.svg and dynamic.svg\n";
    return 0;
}
