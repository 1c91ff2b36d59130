// The symbolic elements hcube draw runs collectives on, and what the
// recording (steps.cpp), the symbolic programs (symbolic_programs.cpp), the
// labels (step_labels.cpp) and the buffers the collectives allocate
// (symbols.cpp) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <hcube/collectives/scratch.hpp>
#include <hcube/draw.hpp>

namespace hcube::draw_detail {

// A symbolic element: the nodes whose data it is (one bit: a block; several:
// a partial sum of theirs) and which element of their data. Sums are unions;
// a sum that counts a node twice or mixes elements is flagged, and shows.
// The flags above `word` number the words of a pair's block, which alltoall
// all-port sends on different links: a node holds a block while it holds
// any of its words.
struct sym {
    std::uint64_t mask = 0;
    std::uint32_t item = 0;
    std::uint32_t flags = 0;
    static constexpr std::uint32_t mixed = 1, twice = 2, marks = mixed | twice, word = 4;
    friend bool operator==(const sym&, const sym&) = default;
    friend sym operator+(sym a, sym b) {
        if (!a.mask) return b;
        if (!b.mask) return a;
        sym s{a.mask | b.mask, a.item, a.flags | b.flags};
        if (a.item != b.item) s.flags |= mixed;
        if (a.mask & b.mask) s.flags |= twice;
        return s;
    }
};

// sym orders blocks as the textbook lists them: by node, then element.
inline bool sym_less(const sym& a, const sym& b) {
    return std::tie(a.mask, a.item, a.flags) < std::tie(b.mask, b.item, b.flags);
}

enum class label_style {
    blocks,   // (0,1,2,3): the nodes whose blocks it holds
    sums,     // [0..3]: the nodes its partial sums cover
    pairs,    // {0,5}: block of node 0 for node 5
    slots,    // (3|1): element 1 of logical node 3 (Hu)
    rounds,   // a5:2: element a[5] after 2 iterations (Hu, section 4)
    outgoing, // (0..3): a scan's outgoing buffer, the sum of nodes 0 to 3 (Figure 4.13)
};

// What d-cycles cuts into subblocks, one per cycle: nothing (another
// algorithm), each node's M' = m words, or each of the p blocks of M' words
// the all-reduce cuts m into.
enum class cycle_words { none, whole, blocks };

struct sym_program {
    std::vector<std::vector<sym>> in, out; // per node; `out` empty: the result is in `in`
    std::function<void(node&, std::vector<sym>&, std::vector<sym>&)> body;
    label_style style = label_style::blocks;
    bool table = false; // CM-200 memory tables
    // Personalized data: a node holds what is in any of its buffers and
    // was not passed on (Figures 4.15, 4.20: blocks held for others too).
    bool transit = false;
    // CM-200 cycle reductions: Mathur & Johnsson's Figures 12-19, read from the partial
    // sums in every buffer.
    bool reduction = false;
    // ASPC: Hu's Table 1, the link each element leaves on in step 1.
    bool schedule = false;
    // ASPC and descend keep their elements in buffers of their own while they
    // are relayed: an arrow carries what its receiver gained that its sender
    // held.
    bool relayed = false;
    // descend reads its partners and frees them between two calls: they
    // count as held until the next snapshot.
    bool keep_freed = false;
    // Scans: the outgoing buffer (the collective's only working buffer of
    // symbols) beside the result, as Figure 4.13 shows it.
    bool outgoing = false;
    // Shift: a node holds one packet, its own until it passes it on.
    bool packets = false;
    // d-cycles: the page says how M' is cut over the cycles.
    cycle_words cycles = cycle_words::none;
};

struct snapshot {
    std::int64_t steps;
    std::vector<sym> data;
    std::vector<sym> memory; // transit: every buffer's elements (memory_of)
};

// The distinct elements in all of node i's buffers, and in those it freed
// since the last call, in textbook order.
std::vector<sym> memory_of(int i, std::initializer_list<const std::vector<sym>*> also);

// With keep, a freed buffer's elements count as the node's until its next
// snapshot (sym_program::keep_freed).
void keep_freed_buffers(bool keep);

// a \ b of sorted vectors, and a ∩ b.
std::vector<sym> minus(const std::vector<sym>& a, const std::vector<sym>& b);
std::vector<sym> common(const std::vector<sym>& a, const std::vector<sym>& b);

// The symbolic program that runs e's algorithm with p: what every node starts
// with, the call and how its labels read; usage_error for an algorithm of a
// records table draw does not know.
sym_program program_for(const run_params& p, const algorithm_entry& e);

// "0..3,6", "0,2,4..14": the set bits of `mask` as runs, and progressions of
// five or more with a wider step and nothing between their terms, as their
// first three terms and the last (none fits in 0..7: 3-cubes list their nodes).
std::string runs(std::uint64_t mask);

// How many blocks a label lists before it writes them as runs (and pairs as
// products): as the sources' figures, up to 3-cubes 8 blocks on a node, 4 on an
// arrow, and every pair; from 4-cubes on, 3.
std::size_t max_listed(label_style style, int dim, bool arrow);

// The label of a node holding `v`, in the sources' notation.
// More than `max_listed` single blocks are written as runs.
std::string label(const std::vector<sym>& v, label_style style, std::size_t max_listed);

// Mathur & Johnsson's cell "ij": element i of node j's data.
std::string cell(const sym& s);

// The page's key to what it shows, for this run's labels and tables only.
std::string notation_of(const sym_program& g, const run_params& p);

} // namespace hcube::draw_detail

namespace hcube {

// Fresh storage is zeroed: capacity beyond a vector's size reads as empty.
template <>
struct scratch_watch<draw_detail::sym> : std::true_type {
    static void allocated(int node, draw_detail::sym* p, std::size_t n);
    static void freed(int node, draw_detail::sym* p, std::size_t n) noexcept;
};

} // namespace hcube
