// The partial-result algebra of the CM-200 reductions (Mathur & Johnsson 4.2.2-4.2.4
// and 5): a partial covers a set of ranks, as one value per element for a
// commuting operator, else one value block per maximal run of consecutive
// ranks; merging two keeps rank order. Also the element+index pairs of index
// motion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <hcube/collectives/scratch.hpp>
#include <hcube/topology.hpp>

namespace hcube::cm200::detail {

struct rank_run {
    node_id lo, hi; // inclusive
};

// A partial reduction of `width` elements. Commutative operator: one value
// block (runs unused). Otherwise one block per maximal run of consecutive
// ranks, in rank order.
template <class T>
struct partial {
    std::vector<rank_run> runs;
    scratch<T> vals;
};

// Maximal runs of the marked ranks; clears the marks it read.
inline std::vector<rank_run> take_runs(std::vector<char>& marked) {
    std::vector<rank_run> runs;
    for (node_id r = 0; r < marked.size(); ++r) {
        if (!marked[r]) continue;
        marked[r] = 0;
        if (!runs.empty() && runs.back().hi + 1 == r)
            runs.back().hi = r;
        else
            runs.push_back({r, r});
    }
    return runs;
}

// a and b cover disjoint rank sets; the result covers their union, combining
// adjacent runs lower-ranks-first with comb(lower, higher).
template <bool OneValue, class W, class Comb>
partial<W> merge(const partial<W>& a, const partial<W>& b, std::size_t w, const Comb& comb) {
    partial<W> out{{}, scratch<W>(a.vals.get_allocator())};
    if constexpr (OneValue) {
        out.vals.resize(w);
        for (std::size_t k = 0; k < w; ++k)
            out.vals[k] = comb(a.vals[k], b.vals[k]);
    } else {
        std::size_t ia = 0, ib = 0;
        out.vals.reserve(a.vals.size() + b.vals.size());
        while (ia < a.runs.size() || ib < b.runs.size()) {
            const bool from_a =
                ib == b.runs.size() || (ia < a.runs.size() && a.runs[ia].lo < b.runs[ib].lo);
            const rank_run r = from_a ? a.runs[ia] : b.runs[ib];
            const W* v = from_a ? &a.vals[ia++ * w] : &b.vals[ib++ * w];
            if (!out.runs.empty() && out.runs.back().hi + 1 == r.lo) {
                out.runs.back().hi = r.hi;
                W* last = &out.vals[out.vals.size() - w];
                for (std::size_t k = 0; k < w; ++k)
                    last[k] = comb(last[k], v[k]);
            } else {
                out.runs.push_back(r);
                out.vals.insert(out.vals.end(), v, v + w);
            }
        }
    }
    return out;
}

// Channel c's elements of a block of `size` elements: addresses c, c + C, ...
template <class T, class A>
void gather_channel(std::span<const T> block, int c, int channels, std::vector<T, A>& into) {
    into.clear();
    for (std::size_t s = std::size_t(c); s < block.size(); s += std::size_t(channels))
        into.push_back(block[s]);
}

// Index motion: an element and its 32-bit array index travel together.
template <class T>
struct indexed {
    std::uint32_t index;
    T value;
};

// The values of a received subblock, for a hook.
template <class T, class A>
std::span<const T> values_of(const std::vector<T, A>& v, std::vector<T>&) {
    return v;
}
template <class T, class A>
std::span<const T> values_of(const std::vector<indexed<T>, A>& v, std::vector<T>& tmp) {
    tmp.clear();
    for (const auto& w : v)
        tmp.push_back(w.value);
    return tmp;
}

} // namespace hcube::cm200::detail
