// Node programs written as a user would, each of which chooses among several
// sources: the determinism tests run them under every executor, link type,
// worker count and backend and compare the runs' fingerprints
// (tests/determinism, tests/mpi). Each leaves what its nodes computed in a
// per-node log, so a run's results can be compared too.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <hcube/node.hpp>

namespace hcube::test {

// What each node of a run recorded, by node (each node writes only its own).
using node_logs = std::vector<std::vector<double>>;

struct user_program {
    std::string name;
    int dim;
    // The program; `log` has one entry per node.
    std::function<void(node&, node_logs& log)> body;
};

// Task i of a master/worker program costs this much to compute: uneven, so
// that which worker answers first depends on the costs, not on the order
// the workers were started in.
inline double task_cost(int i) {
    return double((i * 7) % 5 + 1 + (i % 3 == 0 ? 6 : 0));
}

// Master/worker over the master's links: node 0 hands task i (its cost) to
// each neighbour, then gives the next task to whichever answers first
// (recv_any), and a stop (-1) once the tasks run out. The master logs, per
// task, the worker that computed it; each worker logs its tasks.
inline void master_worker_links(node& me, node_logs& log, int tasks,
                                const std::function<double(int)>& cost = task_cost) {
    auto& mine = log[std::size_t(me.id())];
    if (me.id() == 0) {
        int next = 0, busy = 0;
        for (int k = 0; k < me.dim() && next < tasks; ++k, ++busy) {
            me.send(k, std::vector<double>{cost(next)});
            ++next;
        }
        std::vector<double> worker_of(std::size_t(tasks), -1);
        std::vector<int> task_on(std::size_t(me.dim()), 0);
        for (int k = 0; k < busy; ++k)
            task_on[std::size_t(k)] = k;
        for (; busy > 0; --busy) {
            const received<double> r = me.recv_any<double>();
            worker_of[std::size_t(task_on[std::size_t(r.dim)])] = me.neighbor(r.dim);
            if (next < tasks) {
                task_on[std::size_t(r.dim)] = next;
                me.send(r.dim, std::vector<double>{cost(next++)});
                ++busy;
            } else {
                me.send(r.dim, std::vector<double>{-1});
            }
        }
        for (int k = 0; k < me.dim(); ++k) // neighbours that never got a task
            if (k >= tasks) me.send(k, std::vector<double>{-1});
        mine = worker_of;
        return;
    }
    if (std::popcount(unsigned(me.id())) != 1) return; // not a neighbour of node 0
    const int k = std::countr_zero(unsigned(me.id()));
    for (;;) {
        double task[1];
        me.recv(k, task);
        if (task[0] < 0) return;
        me.compute(task[0]);
        mine.push_back(task[0]);
        me.send(k, task);
    }
}

// A pipeline that merges streams: every node sends `count` messages to each
// lower neighbour (its links to nodes with that bit clear), computing
// (id + k + j) mod 4 + 1 before message j on link k, and takes what its
// higher neighbours send with recv_any, logging (link, value) in the order it
// took them.
inline void merging_pipeline(node& me, node_logs& log, int count) {
    auto& mine = log[std::size_t(me.id())];
    int expected = 0;
    for (int k = 0; k < me.dim(); ++k)
        if (!(me.id() & (1 << k))) expected += count;
    for (int j = 0; j < count; ++j)
        for (int k = 0; k < me.dim(); ++k)
            if (me.id() & (1 << k)) {
                me.compute(double((me.id() + k + j) % 4 + 1));
                me.send(k, std::vector<double>{double(me.id() * 100 + j)});
            }
    for (int i = 0; i < expected; ++i) {
        const received<double> r = me.recv_any<double>();
        mine.push_back(r.dim);
        mine.push_back(r.data.at(0));
    }
}

// A permutation of the nodes that moves every one of them (for p >= 2).
inline std::vector<int> derangement(int p, std::uint32_t seed) {
    std::vector<int> perm(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i)
        perm[std::size_t(i)] = i;
    for (int i = p - 1; i > 0; --i) { // Sattolo's algorithm: one cycle through all
        seed = seed * 1664525u + 1013904223u;
        std::swap(perm[std::size_t(i)], perm[std::size_t(seed % unsigned(i))]);
    }
    return perm;
}

// Routed traffic: in each of `rounds` rounds every node sends a message of
// (round + 1) * 3 doubles to its image under a fresh random derangement and
// receives from its preimage, logging the first value it got.
inline void routed_permutations(node& me, node_logs& log, int rounds) {
    const int p = me.size();
    for (int r = 0; r < rounds; ++r) {
        const std::vector<int> perm = derangement(p, std::uint32_t(r * 977 + p));
        int from = 0;
        for (int i = 0; i < p; ++i)
            if (perm[std::size_t(i)] == me.id()) from = i;
        me.send_routed(perm[std::size_t(me.id())],
                       std::vector<double>(std::size_t(r + 1) * 3, me.id() + 0.5 * r));
        log[std::size_t(me.id())].push_back(me.recv_routed<double>(from).at(0));
    }
}

// Master/worker over the whole cube: node 0 hands task i to every other node
// with send_routed, then gives the next task to whichever answers first
// (recv_routed from any_source), and a stop (-1) once they run out. The master
// logs, per task, the node that computed it.
inline void master_worker_routed(node& me, node_logs& log, int tasks,
                                 const std::function<double(int)>& cost = task_cost) {
    auto& mine = log[std::size_t(me.id())];
    if (me.id() == 0) {
        int next = 0, busy = 0;
        std::vector<int> task_of(std::size_t(me.size()), -1);
        for (int w = 1; w < me.size(); ++w) {
            if (next < tasks) {
                task_of[std::size_t(w)] = next;
                me.send_routed(w, std::vector<double>{cost(next++)});
                ++busy;
            } else {
                me.send_routed(w, std::vector<double>{-1});
            }
        }
        std::vector<double> worker_of(std::size_t(tasks), -1);
        for (; busy > 0; --busy) {
            const routed_received<double> r = me.recv_routed_any<double>();
            worker_of[std::size_t(task_of[std::size_t(r.source)])] = r.source;
            if (next < tasks) {
                task_of[std::size_t(r.source)] = next;
                me.send_routed(r.source, std::vector<double>{cost(next++)});
                ++busy;
            } else {
                me.send_routed(r.source, std::vector<double>{-1});
            }
        }
        mine = worker_of;
        return;
    }
    for (;;) {
        double task[1];
        me.recv_routed(0, task);
        if (task[0] < 0) return;
        me.compute(task[0]);
        log[std::size_t(me.id())].push_back(task[0]);
        me.send_routed(0, task);
    }
}

// The programs the determinism tests compare across runs and variants.
inline std::vector<user_program> user_programs() {
    return {
        {"master/worker with recv_any, d = 3, 24 tasks", 3,
         [](node& me, node_logs& log) { master_worker_links(me, log, 24); }},
        {"master/worker with recv_any, d = 5, 40 tasks", 5,
         [](node& me, node_logs& log) { master_worker_links(me, log, 40); }},
        {"merging pipeline with recv_any, d = 6, 6 messages a link", 6,
         [](node& me, node_logs& log) { merging_pipeline(me, log, 6); }},
        {"routed random permutations, d = 4, 5 rounds", 4,
         [](node& me, node_logs& log) { routed_permutations(me, log, 5); }},
        {"master/worker with recv_routed(any_source), d = 3, 30 tasks", 3,
         [](node& me, node_logs& log) { master_worker_routed(me, log, 30); }},
    };
}

} // namespace hcube::test
