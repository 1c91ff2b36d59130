// Prefix sums (scans) in node order: node k ends with x_0 op ... op x_k
// (inclusive) or x_0 op ... op x_(k-1) (exclusive). Grama et al. 4.3, Alg. 4.9.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include <hcube/collectives/ranges.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scratch.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/node.hpp>

namespace hcube {

// words: the whole message m.
inline constexpr algorithm_record scan_records[] = {
    {"scan", "hypercube", 0, "Grama et al. Alg. 4.9", "(t_s + t_w m) log p",
     cost_of<cost::scan_hypercube>},
};
inline constexpr algorithm_record exscan_records[] = {
    {"exscan", "hypercube", 0, "Grama et al. Alg. 4.9 (exclusive)", "(t_s + t_w m) log p",
     cost_of<cost::scan_hypercube>},
};

namespace detail {

// The state of Alg. 4.9 on one node: `result` (the source's square brackets) and
// `msg` (its parentheses, the outgoing buffer: a working buffer, which hcube
// draw shows beside the result as Figure 4.13 does).
template <wire_type T>
struct scan_state {
    std::span<T> result;
    scratch<T> msg;
    std::vector<T> in;
    bool has_result; // false until an exclusive scan receives its first lower partial
};

// One step of Alg. 4.9, on dimension i: exchange msg with the partner, which
// holds the reduction of the neighbouring aligned 2^i-node subcube; fold it into
// msg, and into result too when the partner's ids are lower. Ascending
// dimensions keep every buffer a reduction over a contiguous id range.
template <wire_type T, class Op>
void scan_step(node& me, int i, scan_state<T>& s, Op& op) {
    me.exchange(i, s.msg, s.in);
    const bool lower = me.neighbor(i) < me.id();
    const std::span<const T> in(s.in);
    combine_into(std::span<T>(s.msg), in, lower, op);
    if (!lower) return;
    if (s.has_result)
        combine_into(s.result, in, true, op);
    else
        std::copy(in.begin(), in.end(), s.result.begin());
    s.has_result = true;
}

template <wire_type T>
scan_state<T> make_scan_state(const node& me, std::span<T> data, bool inclusive) {
    return {data, scratch_of<T>(me, data.begin(), data.end()), std::vector<T>(data.size()),
            inclusive};
}

// Alg. 4.9: (t_s + t_w m) log p.
template <wire_type T, class Op>
void hypercube_scan(node& me, std::span<T> data, Op& op, bool inclusive) {
    scan_state<T> s = make_scan_state(me, data, inclusive);
    for (int i = 0; i < me.dim(); ++i)
        scan_step(me, i, s, op);
}

} // namespace detail

// In place: node k's data becomes x_0 op x_1 op ... op x_k (elementwise).
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void inclusive_scan(node& me, R&& data, Op op) {
    detail::hypercube_scan(me, output_span<T>(data), op, true);
}

// In place: node k's data becomes x_0 op ... op x_(k-1) (elementwise). The
// operator needs no identity: node 0's data, which would be the empty
// reduction, is unspecified (this implementation leaves it unchanged).
template <class T = deduce_element, output_buffer<T> R, reduction_op<element_t<T, R>> Op>
void exclusive_scan(node& me, R&& data, Op op) {
    detail::hypercube_scan(me, output_span<T>(data), op, false);
}

} // namespace hcube
