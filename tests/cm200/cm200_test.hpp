// Shared by the cm200 suite: serial references and drivers that run one of the
// Mathur & Johnsson's collectives on every node of a machine and collect the outputs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <hcube/cm200_index.hpp>
#include <hcube/collectives/cm200.hpp>
#include <hcube/machine.hpp>

#include "sanitizers.hpp"
#include "test_support.hpp"

namespace hcube::test {

using ag_algo = cm200::allgather_algo;
using rs_algo = cm200::reduce_scatter_algo;
using cm200::index_mode;
using cm200::node_order;

// The M' values of the brief for dimension d: 1, d-1, d, d+1, 2^d, 1000 and a
// prime (37), without repeats or zeros.
inline std::vector<std::size_t> sizes_for(int d, std::size_t largest = 1000) {
    std::vector<std::size_t> out;
    for (std::size_t m : {std::size_t(1), std::size_t(d > 0 ? d - 1 : 0), std::size_t(d),
                          std::size_t(d + 1), std::size_t(1) << d, std::size_t(37), largest})
        if (m > 0 && m <= largest && std::find(out.begin(), out.end(), m) == out.end())
            out.push_back(m);
    return out;
}

// Element s of the block of rank r: distinct for every (r, s).
inline std::int64_t gathered_value(std::size_t r, std::size_t s) {
    return std::int64_t(r) * 100000 + std::int64_t(s);
}

// Runs an allgather of M' = m elements per node; node v contributes the block
// of its rank. Returns every node's output.
inline std::vector<std::vector<std::int64_t>> run_allgather(machine& mach, std::size_t m, ag_algo a,
                                                            cm200::options o,
                                                            run_report* report = nullptr) {
    const int n = mach.size();
    std::vector<std::vector<std::int64_t>> in(n), out(n);
    for (int v = 0; v < n; ++v) {
        const auto r = cm200::rank_of(node_id(v), o.order);
        for (std::size_t s = 0; s < m; ++s)
            in[v].push_back(gathered_value(r, s));
        out[v].assign(m * std::size_t(n), -1);
    }
    auto rep = mach.run(
        [&](node& me) { cm200::allgather<std::int64_t>(me, in[me.id()], out[me.id()], a, o); });
    if (report) *report = rep;
    return out;
}

// The expected allgather output (the same on every node).
inline std::vector<std::int64_t> allgather_reference(int n, std::size_t m) {
    std::vector<std::int64_t> want;
    for (int r = 0; r < n; ++r)
        for (std::size_t s = 0; s < m; ++s)
            want.push_back(gathered_value(std::size_t(r), s));
    return want;
}

// Serial reference of a reduce-scatter: rank r's block of
// in[node_of_rank(0)] op ... op in[node_of_rank(N-1)], CM-200 allocation.
template <class T, class Op>
std::vector<T> reduce_scatter_reference(const std::vector<std::vector<T>>& in, std::size_t rank,
                                        node_order order, Op op) {
    const std::size_t n = in.size();
    const cm200::cm_allocation alloc(in[0].size(), n);
    std::vector<T> want;
    for (std::size_t e = alloc.offset(rank); e < alloc.offset(rank) + alloc.size(rank); ++e) {
        T acc = in[cm200::node_of_rank(0, order)][e];
        for (std::size_t r = 1; r < n; ++r)
            acc = op(acc, in[cm200::node_of_rank(node_id(r), order)][e]);
        want.push_back(acc);
    }
    return want;
}

// Runs a reduce-scatter of M = total elements per node (input from make(v, s))
// and returns every node's output.
template <class T, class Op, class Make>
std::vector<std::vector<T>>
run_reduce_scatter(machine& mach, std::size_t total, rs_algo a, cm200::options o, Op op, Make make,
                   std::vector<std::vector<T>>* inputs = nullptr, run_report* report = nullptr) {
    const int n = mach.size();
    const cm200::cm_allocation alloc(total, std::size_t(n));
    std::vector<std::vector<T>> in(n), out(n);
    for (int v = 0; v < n; ++v) {
        for (std::size_t s = 0; s < total; ++s)
            in[v].push_back(make(v, s));
        out[v].resize(alloc.size(cm200::rank_of(node_id(v), o.order)));
    }
    auto rep = mach.run(
        [&](node& me) { cm200::reduce_scatter<T>(me, in[me.id()], out[me.id()], op, a, o); });
    if (report) *report = rep;
    if (inputs) *inputs = in;
    return out;
}

template <class A>
std::string describe(int d, std::size_t m, A a, cm200::options o) {
    return "d=" + std::to_string(d) + " m=" + std::to_string(m) + " " +
           std::string(cm200::to_string(a)) + " " + std::string(cm200::to_string(o.order)) + " " +
           std::string(cm200::to_string(o.index));
}

} // namespace hcube::test
