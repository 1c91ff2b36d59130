// Closed-form virtual times of the CM-200 all-to-all algorithms (Mathur & Johnsson) in
// the t_s + t_w m model, for commutative operators (see docs/cm200.md for the
// non-commutative case). d = cube dimension, N = 2^d; m = words. A schedule
// step with nothing to move sends nothing, so with m = 0 the cycles and the
// spreads take no time (the gather's empty messages still cost t_s each).
#pragma once

#include <cstddef>

namespace hcube::cost::cm200 {

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) noexcept {
    return b ? (a + b - 1) / b : a;
}
constexpr double nodes(int d) noexcept {
    return double(std::size_t{1} << d);
}

// One Hamiltonian cycle (4.1): 2^d - 1 shifts of the whole block M'.
//   (2^d - 1)(t_s + t_w M')
constexpr double one_cycle(int d, std::size_t m, double ts, double tw) noexcept {
    return m == 0 ? 0.0 : (nodes(d) - 1) * (ts + tw * double(m));
}

// d Hamiltonian cycles (4.2), all-port: 2^d - 1 steps, each moving one
// subblock of ceil(M'/d) on every link.   (2^d - 1)(t_s + t_w ceil(M'/d))
// For reduction M' is the result block (the CM-200 allocation's ceil(M/N)).
constexpr double d_cycles(int d, std::size_t m, double ts, double tw) noexcept {
    return d == 0 || m == 0 ? 0.0
                            : (nodes(d) - 1) * (ts + tw * double(ceil_div(m, std::size_t(d))));
}

// Broadcast of n words from one node over `parts` rotated spanning binomial
// trees (parts = d all-port, 1 single-port): d steps of one part each.
//   d (t_s + t_w ceil(n / parts))
constexpr double spread(int d, std::size_t n, std::size_t parts, double ts, double tw) noexcept {
    return n == 0 ? 0.0 : double(d) * (ts + tw * double(ceil_div(n, parts)));
}

// Gather (all-to-one personalized) along a binomial tree: d t_s + t_w (N-1) M'.
constexpr double gather(int d, std::size_t m, double ts, double tw) noexcept {
    return double(d) * ts + tw * (nodes(d) - 1) * double(m);
}

// Alternative 3, send-and-spread: gather to node 0, then spread N M'.
//   d t_s + t_w (N-1) M' + d (t_s + t_w ceil(N M' / parts))
constexpr double send_and_spread(int d, std::size_t m, std::size_t parts, double ts,
                                 double tw) noexcept {
    return gather(d, m, ts, tw) + spread(d, (std::size_t{1} << d) * m, parts, ts, tw);
}

// Alternative 1, one source at a time: N spreads of M' one after another.
//   N d (t_s + t_w ceil(M' / parts))
constexpr double one_source_at_a_time(int d, std::size_t m, std::size_t parts, double ts,
                                      double tw) noexcept {
    return nodes(d) * spread(d, m, parts, ts, tw);
}

// Alternative 4, reduce-and-spread (Figure 21): d butterfly exchanges of the
// whole local data set M = N B split into `parts` variables (d all-port, 1
// single-port), then a local subselection.   d (t_s + t_w ceil(M / parts))
constexpr double reduce_and_spread(int d, std::size_t m_total, std::size_t parts, double ts,
                                   double tw) noexcept {
    return m_total == 0 ? 0.0 : double(d) * (ts + tw * double(ceil_div(m_total, parts)));
}

// Bytes an all-to-all broadcast delivers: every node receives (N-1) M' elements
// (the measure of the source's Table 18 data motion rate).
constexpr double bytes_delivered(int d, std::size_t m, std::size_t elem_bytes) noexcept {
    return nodes(d) * (nodes(d) - 1) * double(m) * double(elem_bytes);
}

} // namespace hcube::cost::cm200
