// record_steps: an algorithm run on symbolic elements, every node's buffer
// snapshot as each primitive call begins (config::on_call) and when it
// finishes, turned into the label of every node after every step.
#include <hcube/draw.hpp>

#include <algorithm>
#include <bit>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <mutex>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/aspc.hpp>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/cm200.hpp>
#include <hcube/collectives/descend.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scan.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/collectives/scratch.hpp>
#include <hcube/collectives/shift.hpp>
#include <hcube/system.hpp>

namespace hcube {

namespace {

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
bool sym_less(const sym& a, const sym& b) {
    return std::tie(a.mask, a.item, a.flags) < std::tie(b.mask, b.item, b.flags);
}

// Every working buffer of symbolic elements the collectives allocate
// (scratch.hpp), by the node it belongs to. Blocks a node holds for others
// wait there (scatter's subtree run, ASPC's transit), which the node's in and
// out never show.
// With keep_freed, a buffer's elements outlive it until the node's next
// snapshot (descend's partners arrive, are used and freed between two calls).
struct sym_buffers {
    std::mutex lock;
    std::map<const sym*, std::pair<std::size_t, int>> live; // start -> count, node
    std::map<int, std::vector<sym>> freed;                  // node -> elements
    bool keep_freed = false;
};
sym_buffers& buffers() {
    static sym_buffers b;
    return b;
}

} // namespace

// Fresh storage is zeroed: capacity beyond a vector's size reads as empty.
template <>
struct scratch_watch<sym> : std::true_type {
    static void allocated(int node, sym* p, std::size_t n) {
        std::fill_n(p, n, sym{});
        auto& b = buffers();
        const std::lock_guard g(b.lock);
        b.live[p] = {n, node};
    }
    static void freed(int node, sym* p, std::size_t n) noexcept {
        auto& b = buffers();
        const std::lock_guard g(b.lock);
        b.live.erase(p);
        if (b.keep_freed)
            std::copy_if(p, p + n, std::back_inserter(b.freed[node]),
                         [](const sym& s) { return s.mask != 0; });
    }
};

namespace {

// The distinct elements in all of node i's buffers, and in those it freed
// since the last call, in textbook order.
std::vector<sym> memory_of(int i, std::initializer_list<const std::vector<sym>*> also) {
    std::vector<sym> v;
    for (const auto* b : also)
        v.insert(v.end(), b->begin(), b->end());
    // Only node i frees its buffers, and this runs on node i's context: they
    // can be read unlocked.
    std::vector<std::span<const sym>> mine;
    {
        auto& b = buffers();
        const std::lock_guard g(b.lock);
        for (const auto& [p, at] : b.live)
            if (at.second == i) mine.emplace_back(p, at.first);
        auto& gone = b.freed[i];
        v.insert(v.end(), gone.begin(), gone.end());
        gone.clear();
    }
    for (const auto b : mine)
        v.insert(v.end(), b.begin(), b.end());
    std::erase_if(v, [](const sym& s) { return !s.mask; });
    std::sort(v.begin(), v.end(), sym_less);
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
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

// descend on symbolic elements: a[i] after k iterations is {bit i, k}. Each
// iteration checks that its partners are a[i +- 2^b] after as many iterations;
// any other partner marks the result "!mixed".
struct descend_marks {
    std::size_t M;
    sym operator()(int b, std::size_t i, const sym& self, const sym& plus, const sym& minus) const {
        const auto element = [&](std::size_t j) { return std::uint64_t(1) << (j % M); };
        const std::size_t h = std::size_t(1) << b;
        sym s{self.mask, self.item + 1, self.flags | plus.flags | minus.flags};
        if (plus.mask != element(i + h) || minus.mask != element(i + M - h) ||
            plus.item != self.item || minus.item != self.item)
            s.flags |= sym::mixed;
        return s;
    }
};

std::vector<sym> block(int node, std::size_t m) {
    std::vector<sym> v(m);
    for (std::size_t j = 0; j < m; ++j)
        v[j] = {std::uint64_t(1) << node, std::uint32_t(j), 0};
    return v;
}

// `count` blocks of m elements, block b labelled by `tag(b)`'s node.
std::vector<sym> blocks(int count, std::size_t m, const std::function<sym(int, std::size_t)>& tag) {
    std::vector<sym> v;
    for (int b = 0; b < count; ++b)
        for (std::size_t j = 0; j < m; ++j)
            v.push_back(tag(b, j));
    return v;
}

// Node i's own block of m elements on every node.
void own_blocks(sym_program& g, std::size_t m) {
    for (std::size_t i = 0; i < g.in.size(); ++i)
        g.in[i] = block(int(i), m);
}

// Every node's result buffer of `size` elements.
void results(sym_program& g, std::size_t size) {
    for (auto& o : g.out)
        o.resize(size);
}

// Node i's `count` partial elements of `m` words each, element b labelled
// {node i, b}: the inputs of a reduce-scatter.
void partials(sym_program& g, int count, std::size_t m) {
    for (std::size_t i = 0; i < g.in.size(); ++i)
        g.in[i] = blocks(count, m, [&](int b, std::size_t) {
            return sym{std::uint64_t(1) << i, std::uint32_t(b), 0};
        });
}

// The symbolic program of one operation for the algorithm of record `r`
// (its enumerator r.as<...>()): what every node starts with, the call, and
// how its labels read. `g` comes with one empty in and out per node.
using program_setup = void (*)(sym_program& g, const run_params& p, const algorithm_record& r);

void broadcast_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    for (std::size_t i = 0; i < g.in.size(); ++i)
        g.in[i] = int(i) == p.root ? block(int(i), p.words) : std::vector<sym>(p.words);
    g.body = [algo = r.as<broadcast_algo>(), root = p.root](node& me, std::vector<sym>& in,
                                                            std::vector<sym>&) {
        broadcast(me, std::span<sym>(in), root, algo);
    };
}

void reduce_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    own_blocks(g, p.words);
    g.style = label_style::sums;
    g.body = [algo = r.as<reduce_algo>(), root = p.root](node& me, std::vector<sym>& in,
                                                         std::vector<sym>&) {
        reduce(me, std::span<sym>(in), root, std::plus<>{}, algo);
    };
}

void allreduce_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    own_blocks(g, p.words);
    g.style = label_style::sums;
    const auto algo = r.as<allreduce_algo>();
    if (algo == allreduce_algo::d_cycles) g.cycles = cycle_words::blocks;
    g.body = [algo](node& me, std::vector<sym>& in, std::vector<sym>&) {
        allreduce(me, std::span<sym>(in), std::plus<>{}, algo);
    };
}

template <bool Inclusive>
void scan_program(sym_program& g, const run_params& p, const algorithm_record&) {
    own_blocks(g, p.words);
    g.style = label_style::sums;
    // Freed when the scan returns: the last picture shows it too.
    g.outgoing = g.keep_freed = true;
    g.body = [](node& me, std::vector<sym>& in, std::vector<sym>&) {
        if constexpr (Inclusive)
            inclusive_scan(me, std::span<sym>(in), std::plus<>{});
        else
            exclusive_scan(me, std::span<sym>(in), std::plus<>{});
    };
}

void allgather_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    own_blocks(g, p.words);
    results(g, g.in.size() * p.words);
    g.body = [algo = r.as<allgather_algo>()](node& me, std::vector<sym>& in,
                                             std::vector<sym>& out) {
        allgather(me, std::span<const sym>(in), std::span<sym>(out), algo);
    };
}

void cm200_allgather_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    using A = cm200::allgather_algo;
    own_blocks(g, p.words);
    results(g, g.in.size() * p.words);
    const A algo = r.as<A>();
    g.table = algo == A::one_cycle || algo == A::d_cycles;
    if (algo == A::d_cycles) g.cycles = cycle_words::whole;
    g.body = [algo, o = cm200_options_of(p)](node& me, std::vector<sym>& in,
                                             std::vector<sym>& out) {
        cm200::allgather(me, std::span<const sym>(in), std::span<sym>(out), algo, o);
    };
}

void reduce_scatter_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    g.style = label_style::sums;
    partials(g, int(g.in.size()), p.words);
    results(g, p.words);
    g.body = [algo = r.as<reduce_scatter_algo>()](node& me, std::vector<sym>& in,
                                                  std::vector<sym>& out) {
        reduce_scatter(me, std::span<const sym>(in), std::span<sym>(out), std::plus<>{}, algo);
    };
}

void cm200_reduce_scatter_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    using A = cm200::reduce_scatter_algo;
    g.style = label_style::sums;
    // Mathur & Johnsson's memory address x of every node is element x of the
    // array: its partial sums travel as one symbolic element.
    partials(g, int(g.in.size() * p.words), 1);
    results(g, p.words);
    const A algo = r.as<A>();
    g.reduction = algo != A::reduce_and_spread;
    if (algo == A::d_cycles) g.cycles = cycle_words::whole;
    g.body = [algo, o = cm200_options_of(p)](node& me, std::vector<sym>& in,
                                             std::vector<sym>& out) {
        cm200::reduce_scatter(me, std::span<const sym>(in), std::span<sym>(out), std::plus<>{},
                              algo, o);
    };
}

void alltoall_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    g.style = label_style::pairs;
    g.transit = true;
    const int n = int(g.in.size());
    for (std::size_t i = 0; i < g.in.size(); ++i)
        g.in[i] = blocks(n, p.words, [&](int b, std::size_t j) {
            return sym{std::uint64_t(1) << i, std::uint32_t(b), std::uint32_t(j) * sym::word};
        });
    results(g, g.in.size() * p.words);
    g.body = [algo = r.as<alltoall_algo>()](node& me, std::vector<sym>& in, std::vector<sym>& out) {
        alltoall(me, std::span<const sym>(in), std::span<sym>(out), algo);
    };
}

void aspc_program(sym_program& g, const run_params& p, const algorithm_record&) {
    // Hu: element (i|j) of logical node i = G^-1(physical id); the plus
    // half's results, then the minus half's, land in out.
    g.style = label_style::slots;
    // aspc() runs the four-step schedule (Hu's Table 1) where a node may use
    // several links at once; single-port's step 1 sends one element.
    g.schedule = port_policy_of(p.ports).several_links_at_once();
    g.relayed = g.schedule;
    for (std::size_t i = 0; i < g.in.size(); ++i) {
        const auto q = int(aspc_schedule::logical_of(node_id(i)));
        g.in[i] = blocks(p.dim, p.words, [&](int j, std::size_t) {
            return sym{std::uint64_t(1) << q, std::uint32_t(j), 0};
        });
    }
    results(g, 2 * std::size_t(p.dim) * p.words);
    g.body = [](node& me, std::vector<sym>& in, std::vector<sym>& out) {
        const std::span<sym> o(out);
        aspc(me, std::span<const sym>(in), o.first(in.size()), o.subspan(in.size()));
    };
}

void descend_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    // Hu, section 4: logical node q holds a[q L .. q L + L - 1]; an element
    // names its index in the mask, so M is at most 64.
    const std::size_t M = p.words;
    if (M > 64)
        throw usage_error("descend is drawn up to M = 64 elements (--words); M = " +
                          std::to_string(M) + " has too many to read");
    // pcr runs in ascend order (descend.hpp), the other kernels descend.
    const auto order = p.option("kernel") == "pcr" ? descend_order::ascend : descend_order::descend;
    g.style = label_style::rounds;
    g.relayed = g.keep_freed = true;
    const std::size_t L = M >> p.dim;
    for (std::size_t i = 0; i < g.in.size(); ++i) {
        const auto first = std::size_t(aspc_schedule::logical_of(node_id(i))) * L;
        g.in[i] = blocks(int(L), 1, [&](int l, std::size_t) {
            return sym{std::uint64_t(1) << (first + std::size_t(l)), 0, 0};
        });
    }
    g.body = [M, schedule = r.as<descend_schedule>(), order](node& me, std::vector<sym>& in,
                                                             std::vector<sym>&) {
        descend<sym>(me, std::span<sym>(in), M, descend_marks{M}, schedule, order);
    };
}

void shift_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    // A node holds its packet until it passes it on, then the one it
    // received (between the Gray-code phases in a working buffer).
    g.transit = g.packets = true;
    own_blocks(g, p.words);
    results(g, p.words);
    const auto ring = p.option("ring") == "gray" ? shift_ring::gray : shift_ring::id;
    g.body = [algo = r.as<shift_algo>(), ring, q = p.shift](node& me, std::vector<sym>& in,
                                                            std::vector<sym>& out) {
        circular_shift(me, std::span<const sym>(in), std::span<sym>(out), q, algo, ring);
    };
}

void scatter_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    // The blocks are named by their destination, as in Figure 4.15.
    g.transit = true;
    g.in[std::size_t(p.root)] = blocks(int(g.in.size()), p.words, [](int b, std::size_t j) {
        return sym{std::uint64_t(1) << b, std::uint32_t(j), 0};
    });
    results(g, p.words);
    g.body = [algo = r.as<scatter_algo>(), root = p.root](node& me, std::vector<sym>& in,
                                                          std::vector<sym>& out) {
        scatter(me, std::span<const sym>(in), std::span<sym>(out), root, algo);
    };
}

void gather_program(sym_program& g, const run_params& p, const algorithm_record& r) {
    g.transit = true;
    own_blocks(g, p.words);
    g.out[std::size_t(p.root)].resize(g.in.size() * p.words);
    g.body = [algo = r.as<gather_algo>(), root = p.root](node& me, std::vector<sym>& in,
                                                         std::vector<sym>& out) {
        gather(me, std::span<const sym>(in), std::span<sym>(out), root, algo);
    };
}

// One row per table of algorithm records that draw runs on symbols: every
// record of the table (the catalog's entries point into them) is drawn by
// its operation's program, so a new row of a table needs nothing here.
struct symbolic_driver {
    std::span<const algorithm_record> records;
    program_setup setup;
};
constexpr symbolic_driver symbolic_drivers[] = {
    {broadcast_records, broadcast_program},
    {reduce_records, reduce_program},
    {allreduce_records, allreduce_program},
    {scan_records, scan_program<true>},
    {exscan_records, scan_program<false>},
    {allgather_records, allgather_program},
    {cm200::allgather_records, cm200_allgather_program},
    {reduce_scatter_records, reduce_scatter_program},
    {cm200::reduce_scatter_records, cm200_reduce_scatter_program},
    {alltoall_records, alltoall_program},
    {shift_records, shift_program},
    {scatter_records, scatter_program},
    {gather_records, gather_program},
    {aspc_records, aspc_program},
    {descend_records, descend_program},
};

// The row whose table holds e's record, or null.
const symbolic_driver* driver_of(const algorithm_entry& e) noexcept {
    for (const symbolic_driver& d : symbolic_drivers)
        for (const algorithm_record& r : d.records)
            if (&r == e.record) return &d;
    return nullptr;
}

sym_program program_for(const run_params& p, const algorithm_entry& e) {
    const symbolic_driver* d = driver_of(e);
    if (!d) {
        const std::vector<std::string> ops = drawn_operations();
        std::string list;
        for (std::size_t i = 0; i < ops.size(); ++i)
            list += (i == 0 ? "" : i + 1 == ops.size() ? " and " : ", ") + ops[i];
        throw usage_error("hcube draw has no picture for " + p.op + " " + p.algo +
                          " yet; it draws " + list);
    }
    sym_program g;
    g.in.resize(std::size_t(1) << p.dim);
    g.out.resize(g.in.size());
    d->setup(g, p, *e.record);
    return g;
}

// "0..3,6", "0,2,4..14": the set bits of `mask` as runs, and progressions of
// five or more with a wider step and nothing between their terms, as their
// first three terms and the last (none fits in 0..7: 3-cubes list their nodes).
std::string runs(std::uint64_t mask) {
    std::string out;
    while (mask) {
        const int b = std::countr_zero(mask);
        int step = std::countr_zero(mask & (mask - 1)) - b, e = b, count = 1;
        if (step == 64 - b) step = 0; // b alone
        std::uint64_t terms = std::uint64_t(1) << b;
        while (step && e + step < 64 && (mask >> (e + step) & 1))
            e += step, ++count, terms |= std::uint64_t(1) << e;
        const std::uint64_t between =
            (~std::uint64_t(0) >> (63 - e)) & ~((std::uint64_t(1) << b) - 1);
        if (!out.empty()) out += ',';
        if (step == 1 || (count >= 5 && (mask & between) == terms)) {
            out += step > 1     ? fmt::format("{},{},{}..{}", b, b + step, b + 2 * step, e)
                   : e == b + 1 ? fmt::format("{},{}", b, e)
                                : fmt::format("{}..{}", b, e);
        } else {
            e = b, step = 1;
            out += std::to_string(b);
        }
        for (int x = b; x <= e; x += step)
            mask &= ~(std::uint64_t(1) << x);
    }
    return out;
}

// Pairs {i,j} (or slots (i|j)) as products of runs: the nodes i with the same
// set of j in one token, {0..1→0,2,4..14} = the blocks of nodes 0 and 1 for
// nodes 0, 2, 4, ..., 14. Empty when some element is not a single node's.
std::vector<std::string> products(const std::vector<sym>& v, label_style style) {
    std::map<int, std::uint64_t> items; // node -> its j
    for (const sym& s : v)
        if (s.mask) {
            if (!std::has_single_bit(s.mask) || (s.flags & sym::marks) || s.item >= 64) return {};
            items[std::countr_zero(s.mask)] |= std::uint64_t(1) << s.item;
        }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> groups; // nodes, their j
    for (const auto& [i, js] : items) {
        const auto same = std::find_if(groups.begin(), groups.end(),
                                       [&, js = js](const auto& g) { return g.second == js; });
        if (same == groups.end())
            groups.emplace_back(std::uint64_t(1) << i, js);
        else
            same->first |= std::uint64_t(1) << i;
    }
    std::vector<std::string> out;
    for (const auto& [nodes, js] : groups)
        out.push_back(style == label_style::slots ? fmt::format("({}|{})", runs(nodes), runs(js))
                      : std::has_single_bit(nodes) && std::has_single_bit(js)
                          ? fmt::format("{{{},{}}}", runs(nodes), runs(js))
                          : fmt::format("{{{}→{}}}", runs(nodes), runs(js)));
    return out;
}

// How many blocks a label lists before it writes them as runs (and pairs as
// products): as the sources' figures, up to 3-cubes 8 blocks on a node, 4 on an
// arrow, and every pair; from 4-cubes on, 3.
std::size_t max_listed(label_style style, int dim, bool arrow) {
    if (dim >= 4) return 3;
    if (style == label_style::blocks) return arrow ? 4 : 8;
    return std::size_t(-1);
}

// The label of a node holding `v`, in the sources' notation.
// More than `max_listed` single blocks are written as runs.
std::string label(const std::vector<sym>& v, label_style style, std::size_t max_listed) {
    std::vector<std::string> tokens;
    const sym* last = nullptr;
    for (const sym& s : v) {
        if (!s.mask) continue;
        const bool same = last && last->mask == s.mask &&
                          (style == label_style::blocks || style == label_style::sums ||
                           style == label_style::outgoing || last->item == s.item);
        last = &s;
        if (same) continue; // the next word of the same block
        std::string t;
        switch (style) {
        case label_style::blocks:
            t = runs(s.mask);
            break;
        case label_style::sums:
            t = "[" + runs(s.mask) + "]";
            break;
        case label_style::pairs:
            t = fmt::format("{{{},{}}}", std::countr_zero(s.mask), s.item);
            break;
        case label_style::slots:
            t = fmt::format("({}|{})", std::countr_zero(s.mask), s.item);
            break;
        case label_style::rounds:
            t = fmt::format("a{}:{}", std::countr_zero(s.mask), s.item);
            break;
        case label_style::outgoing:
            t = "(" + runs(s.mask) + ")";
            break;
        }
        if (s.flags & sym::twice) t += "!twice";
        if (s.flags & sym::mixed) t += "!mixed";
        tokens.push_back(std::move(t));
    }
    if (tokens.empty()) return "";
    // Many single blocks read better as runs: (0..15) rather than 16 numbers.
    if (style == label_style::blocks && tokens.size() > max_listed) {
        std::uint64_t all = 0;
        bool single = true;
        for (const sym& s : v)
            if (s.mask) all |= s.mask, single = single && std::has_single_bit(s.mask) && !s.flags;
        if (single) return "(" + runs(all) + ")";
    }
    if ((style == label_style::pairs || style == label_style::slots) && tokens.size() > max_listed)
        if (auto groups = products(v, style); !groups.empty()) tokens = std::move(groups);
    std::string out = style == label_style::blocks ? "(" : "";
    for (std::size_t i = 0; i < tokens.size(); ++i)
        out += (i ? (style == label_style::blocks ? "," : " ") : "") + tokens[i];
    return style == label_style::blocks ? out + ")" : out;
}

// Mathur & Johnsson's cell "ij": element i of node j's data.
std::string cell(const sym& s) {
    const int node = std::countr_zero(s.mask);
    return s.item < 10 && node < 10 ? fmt::format("{}{}", s.item, node)
                                    : fmt::format("{}.{}", s.item, node);
}

struct snapshot {
    std::int64_t steps;
    std::vector<sym> data;
    std::vector<sym> memory; // transit: every buffer's elements (memory_of)
};

// a \ b of sorted vectors, and a ∩ b.
std::vector<sym> minus(const std::vector<sym>& a, const std::vector<sym>& b) {
    std::vector<sym> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), sym_less);
    return out;
}
std::vector<sym> common(const std::vector<sym>& a, const std::vector<sym>& b) {
    std::vector<sym> out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
                          sym_less);
    return out;
}

// Mathur & Johnsson's Figures 12-19: in step k the partial sum of address x that
// covers most nodes (k + 1 of them) is at the node that received it and added
// its own element ("+"); the node that held it the step before sent it ("●");
// the other nodes it covers had added theirs ("○"). memory(i, k): every
// element in node i's buffers after step k.
template <class Memory>
void reduction_cells(algorithm_steps& s, int n, const Memory& memory) {
    const std::size_t addresses = std::size_t(n) * s.params.words;
    std::vector<int> at(addresses, -1); // the node holding the widest partial
    std::vector<std::uint64_t> widest(addresses, 0);
    for (int i = 0; i < n; ++i)
        for (const sym& e : memory(i, 0))
            if (e.item < addresses && e.mask == std::uint64_t(1) << i) widest[e.item] = e.mask;
    for (std::size_t k = 0; k < s.steps.size(); ++k) {
        auto& cells = s.steps[k].memory;
        cells.assign(std::size_t(n), std::vector<std::string>(addresses));
        if (k == 0) continue;
        const std::vector<std::uint64_t> before = widest;
        const std::vector<int> from = at;
        for (int i = 0; i < n; ++i)
            for (const sym& e : memory(i, std::int64_t(k)))
                if (e.item < addresses && std::popcount(e.mask) > std::popcount(widest[e.item]))
                    widest[e.item] = e.mask, at[e.item] = i;
        for (std::size_t x = 0; x < addresses; ++x) {
            if (widest[x] == before[x] || at[x] < 0) continue;
            for (int i = 0; i < n; ++i)
                if (widest[x] >> i & 1) cells[std::size_t(i)][x] = "○";
            cells[std::size_t(at[x])][x] = "+";
            const int sender =
                k == 1 ? std::countr_zero(widest[x] & ~(std::uint64_t(1) << at[x])) : from[x];
            if (sender >= 0) cells[std::size_t(sender)][x] = "●";
        }
    }
}

// Refuses before allocating: every node's symbols are kept at each of its
// calls (about one per message of the formula) and again for the transit view.
void check_memory_to_draw(const algorithm_entry& e, const run_params& p) {
    const data_estimate d = estimated_data(e, p);
    run_params unit = p;
    unit.cost = {1, 0, 0};
    const double calls = std::max(0.0, e.formula_time(unit)) + 2;
    const double need =
        d.elements * sizeof(sym) * 2 * calls + double(memory_estimate(machine_config(p)).total());
    check_memory(
        fmt::format("drawing {} {} with m = {} on {} nodes", p.op, p.algo, p.words, 1 << p.dim),
        need,
        fmt::format("{} symbols of {} bytes, kept at each of about {} calls per node, "
                    "twice",
                    d.counted, sizeof(sym), calls));
}

// The page's key to what it shows, for this run's labels and tables only.
std::string notation_of(const sym_program& g, const run_params& p) {
    std::string s;
    switch (g.style) {
    case label_style::blocks:
        s = g.packets
                ? "Labels: the packet a node holds ((5) = node 5's packet), its own until it "
                  "passes it on, then the one it received."
                : std::string("Labels: the blocks a node holds ((0,1) = the blocks of nodes 0 "
                              "and 1)") +
                      (g.transit ? ", those it keeps for others too." : ".");
        break;
    case label_style::sums:
        s = "Labels: the partial sums a node holds ([0..3] = the sum of the elements of nodes "
            "0 to 3, [0,2] = of nodes 0 and 2).";
        break;
    case label_style::pairs:
        s = "Labels: the blocks a node holds ({0,5} = node 0's block for node 5), its own and "
            "those it passes on.";
        break;
    case label_style::slots:
        s = "Labels: the elements a node holds ((3|1) = element 1 of logical node 3, Hu's "
            "notation).";
        break;
    case label_style::rounds:
        s = "Labels: the elements a node holds (a5:2 = element a[5] after 2 iterations of "
            "descend).";
        break;
    case label_style::outgoing:
        break;
    }
    if (g.outgoing)
        s = "Labels: a node's result buffer in square brackets, the prefix sum so far ([0..2] = "
            "the sum of the elements of nodes 0 to 2), and its outgoing message buffer in "
            "parentheses, what it sends in the next step ((0..3) = the sum of nodes 0 to 3), as "
            "in Grama et al. Figure 4.13.";
    s += " Arrows: the messages of the step, labelled with what they bring.";
    if (g.table)
        s += " The table: every node's memory after every step, cell ij = element i of node "
             "j's data, Dim = the link it came over (Mathur & Johnsson, Figures 8-11).";
    if (g.reduction)
        s += " The table: every memory address of every node; ● sends the partial sum of that "
             "address, + receives it and adds its own element, ○ added its element in an "
             "earlier step; Dim = the link the sum crossed (Mathur & Johnsson, Figures 12-19). "
             "An arrow's Σ3 = the partial sum of address 3 it carries.";
    if (g.cycles != cycle_words::none) {
        // The all-reduce's reduce-scatter and allgather take blocks of
        // M' = ceil(m/p) words, one a node, as the CM-200 allocates them.
        const std::size_t d = std::size_t(std::max(p.dim, 1)), nodes = std::size_t(1) << p.dim;
        const bool blocks = g.cycles == cycle_words::blocks;
        const std::size_t block = blocks ? (p.words + nodes - 1) / nodes : p.words,
                          beta = (block + d - 1) / d;
        if (blocks)
            s += fmt::format(" The m = {} words are cut into p = {} blocks of M' = {} word{}{}, "
                             "reduce-scattered and then allgathered.",
                             p.words, nodes, block, block == 1 ? "" : "s",
                             p.words % nodes ? " (the last ones short or empty)" : "");
        s += fmt::format(
            " d-cycles cuts each node's M' = {} word{} into d = {} subblocks (word s into "
            "subblock s mod {}, {} word{} each at most) and sends subblock i around cycle i, "
            "all d cycles at once on different links (Mathur & Johnsson 4.2.4){}.",
            block, block == 1 ? "" : "s", d, d, beta, beta == 1 ? "" : "s",
            block < d ? fmt::format("; with M' < d, {} of the cycles carry nothing", d - block)
                      : "");
    }
    return s;
}

} // namespace

std::vector<std::string> drawn_operations() {
    std::vector<std::string> ops;
    for (const symbolic_driver& d : symbolic_drivers)
        if (const std::string op(d.records.front().op);
            std::find(ops.begin(), ops.end(), op) == ops.end())
            ops.push_back(op);
    return ops;
}

bool draws(const algorithm_entry& e) noexcept {
    return driver_of(e) != nullptr;
}

namespace {

// p's entry, p's algorithm and option defaults filled in; usage_error for
// what is not drawn (more than 64 nodes, a misfit, more memory than there is).
const algorithm_entry& entry_to_draw(run_params& p) {
    if (p.dim < 0 || p.dim > max_drawn_dim)
        throw usage_error("steps are drawn up to d = " + std::to_string(max_drawn_dim) +
                          " (64 nodes); d = " + std::to_string(p.dim) +
                          " has too many to read: use hcube run --trace FILE.json");
    const algorithm_entry& e = resolve_algorithm(p);
    p.algo = e.algo;
    for (const auto& o : e.options)
        p.options.try_emplace(o.name, o.fallback);
    if (const std::string why = e.unfit(p); !why.empty())
        throw usage_error(p.op + " " + p.algo + ": " + why);
    check_memory_to_draw(e, p);
    return e;
}

// Every node's snapshots of a symbolic run, and what they say it held after
// each step.
struct snapshots {
    const sym_program& g;
    std::vector<std::vector<snapshot>> of; // per node, in the order taken
    // Transit (sym_program::transit): [k][node] what the node held after
    // step k, [k][message of step k] what the message brought.
    std::vector<std::vector<std::vector<sym>>> kept, brought;

    // The node's last snapshot taken at step count <= k: what it held once
    // step k's messages were in (taken at its next call, or at its end).
    const snapshot& last(int i, std::int64_t k) const {
        const snapshot* at = &of[std::size_t(i)].front();
        for (const auto& sn : of[std::size_t(i)])
            if (sn.steps <= k) at = &sn;
        return *at;
    }
    const std::vector<sym>& held(int i, std::int64_t k) const {
        return g.transit ? kept[std::size_t(k)][std::size_t(i)] : last(i, k).data;
    }
};

// Runs g on p's machine with tracing, every node's buffers snapshot as each
// primitive call begins and when the node finishes.
run_report run_symbolic(sym_program& g, const run_params& p, snapshots& sn) {
    sn.of.resize(std::size_t(1) << p.dim);
    const auto watched = [&](int i) -> const std::vector<sym>& {
        return g.out[std::size_t(i)].empty() && g.in[std::size_t(i)].size() ? g.in[std::size_t(i)]
                                                                            : g.out[std::size_t(i)];
    };
    config c = machine_config(p);
    c.trace = true;
    // On the node's own context (thread or fiber): only that node's vectors
    // are read.
    const auto snap = [&](node& me) {
        const int i = me.id();
        sn.of[std::size_t(i)].push_back(
            {me.steps(), watched(i),
             g.outgoing ? memory_of(i, {})
             : g.transit || g.reduction || g.relayed
                 ? memory_of(i, {&g.in[std::size_t(i)], &g.out[std::size_t(i)]})
                 : std::vector<sym>{}});
    };
    c.on_call = snap;
    machine mc(c);
    return mc.run([&](node& me) {
        const auto i = std::size_t(me.id());
        g.body(me, g.in[i], g.out[i]);
        snap(me);
    });
}

// Transit: node i holds after step k whatever it had in any buffer up to
// then (sends leave copies, and buffers die when a call returns, so the last
// snapshot alone does not say) less what it passed on; a message carried
// what its receiver gained that its sender held.
void follow_transit(snapshots& sn, const algorithm_steps& s) {
    const auto add = [](std::vector<sym>& to, const std::vector<sym>& more) {
        std::vector<sym> both;
        std::set_union(to.begin(), to.end(), more.begin(), more.end(), std::back_inserter(both),
                       sym_less);
        to = std::move(both);
    };
    const std::size_t n = sn.of.size();
    std::vector<std::vector<sym>> had(n), gone = had;
    std::vector<std::vector<sym>> had_before;
    for (std::int64_t k = 0; k < std::int64_t(s.steps.size()); ++k) {
        had_before = had;
        for (std::size_t i = 0; i < n; ++i)
            for (const auto& shot : sn.of[i])
                if (shot.steps <= k) add(had[i], shot.memory);
        auto& step_cargo = sn.brought.emplace_back();
        for (const std::size_t m : s.steps[std::size_t(k)].messages) {
            const trace_record& t = s.report.trace[m];
            auto got = common(minus(had[std::size_t(t.to)], had_before[std::size_t(t.to)]),
                              sn.kept[std::size_t(k - 1)][std::size_t(t.from)]);
            add(gone[std::size_t(t.from)], got);
            step_cargo.push_back(std::move(got));
        }
        auto& now = sn.kept.emplace_back();
        for (std::size_t i = 0; i < n; ++i)
            now.push_back(minus(had[i], gone[i]));
    }
}

// Hu's Table 1: element (i|j) left G(i) on the link of the step-1 message
// whose receiver gained it.
void read_schedule(algorithm_steps& s, const snapshots& sn) {
    const int n = 1 << s.params.dim;
    s.schedule.assign(std::size_t(s.params.dim), std::vector<int>(std::size_t(n), -1));
    for (const std::size_t m : s.steps[1].messages) {
        const trace_record& t = s.report.trace[m];
        for (const sym& e : minus(sn.last(t.to, 1).memory, sn.last(t.to, 0).memory))
            if (int(aspc_schedule::physical_of(node_id(std::countr_zero(e.mask)))) == t.from &&
                e.item < std::uint32_t(s.params.dim))
                s.schedule[e.item][std::size_t(std::countr_zero(e.mask))] = t.dim;
    }
}

// A label, and in full where it abbreviates (the pictures' tooltips).
std::pair<std::string, std::string> named(const std::vector<sym>& v, label_style style, int dim,
                                          bool arrow) {
    std::string brief = label(v, style, max_listed(style, dim, arrow)),
                full = label(v, style, std::size_t(-1));
    return std::pair{brief, full == brief ? std::string() : full};
}

// Every node's label after step k and, for the memory tables, its memory.
void label_nodes(algorithm_steps& s, const snapshots& sn, std::int64_t k) {
    const sym_program& g = sn.g;
    step_state& st = s.steps[std::size_t(k)];
    for (int i = 0; i < int(sn.of.size()); ++i) {
        const std::vector<sym>& at = sn.held(i, k);
        auto [brief, full] = named(at, g.style, s.params.dim, false);
        if (g.outgoing)
            brief += " " + label(sn.last(i, k).memory, label_style::outgoing, std::size_t(-1));
        st.labels.push_back(std::move(brief));
        st.lists.push_back(std::move(full));
        if (!s.table) continue;
        // Mathur & Johnsson's tables: location j holds element j of the block
        // that arrived last (Init: the node's own).
        std::vector<std::string> mem(s.params.words);
        const std::vector<sym>& before = sn.held(i, k - 1);
        for (std::size_t x = 0; x < at.size(); ++x) {
            const sym& now = at[x];
            if (!now.mask || now.item >= s.params.words) continue;
            if (k == 0 ? std::countr_zero(now.mask) == i : !before[x].mask)
                mem[now.item] = cell(now);
        }
        st.memory.push_back(std::move(mem));
    }
}

// What message st.messages[mi] of step k carried: what its receiver gained in
// the step, and when several messages came in (`incoming` per node), the
// part of it that only this message's sender held before the step.
std::pair<std::string, std::string> gained(const algorithm_steps& s, const snapshots& sn,
                                           std::int64_t k, std::size_t mi,
                                           const std::vector<int>& incoming) {
    const step_state& st = s.steps[std::size_t(k)];
    const label_style style = sn.g.style;
    const std::size_t m = st.messages[mi];
    const trace_record& t = s.report.trace[m];
    const auto holds = [&](int node, const sym& e) {
        const auto& v = sn.held(node, k - 1);
        return std::find(v.begin(), v.end(), e) != v.end();
    };
    const auto& now = sn.held(t.to, k);
    const auto& prev = sn.held(t.to, k - 1);
    const bool alone = incoming[std::size_t(t.to)] == 1;
    std::vector<sym> gain(now.size());
    for (std::size_t x = 0; x < now.size(); ++x) {
        if (x < prev.size() && now[x] == prev[x]) continue;
        if (!alone && (style == label_style::sums || !holds(t.from, now[x]))) continue;
        if (!alone && std::any_of(st.messages.begin(), st.messages.end(), [&](std::size_t o) {
                const trace_record& u = s.report.trace[o];
                return o != m && u.to == t.to && holds(u.from, now[x]);
            }))
            continue;
        gain[x] = {style == label_style::sums && x < prev.size() ? now[x].mask & ~prev[x].mask
                                                                 : now[x].mask,
                   now[x].item, 0};
    }
    auto cargo = named(gain, style, s.params.dim, true);
    if (s.table && !alone) {
        // Location j's element came from the neighbour that held it in
        // location j one step before (Mathur & Johnsson's Dim column).
        cargo = {};
        const auto& to = st.memory[std::size_t(t.to)];
        const auto& from = s.steps[std::size_t(k - 1)].memory[std::size_t(t.from)];
        for (std::size_t j = 0; j < to.size(); ++j)
            if (!to[j].empty() && to[j] == from[j])
                cargo.first += (cargo.first.empty() ? "" : " ") + to[j];
    }
    return cargo;
}

// The addresses whose partial sums message t of step `st` carried (● to +),
// as runs from 4-cubes on, and in full where that abbreviates.
std::pair<std::string, std::string> summed(const step_state& st, const trace_record& t, int dim) {
    const auto& cells = st.memory;
    std::uint64_t sums = 0;
    std::string list;
    for (std::size_t x = 0; x < cells[std::size_t(t.to)].size(); ++x)
        if (cells[std::size_t(t.to)][x] == "+" && cells[std::size_t(t.from)][x] == "●")
            list += (list.empty() ? "Σ" : ",") + std::to_string(x),
                sums |= x < 64 ? std::uint64_t(1) << x : ~std::uint64_t(0);
    std::pair<std::string, std::string> cargo;
    cargo.first = dim >= 4 && sums && ~sums ? "Σ" + runs(sums) : list;
    if (cargo.first != list) cargo.second = list;
    return cargo;
}

// What every message of step k carried, read as its operation's data moves.
void label_messages(algorithm_steps& s, const snapshots& sn, std::int64_t k) {
    const sym_program& g = sn.g;
    step_state& st = s.steps[std::size_t(k)];
    std::vector<int> incoming(sn.of.size());
    for (const std::size_t m : st.messages)
        ++incoming[std::size_t(s.report.trace[m].to)];
    for (std::size_t mi = 0; mi < st.messages.size(); ++mi) {
        const trace_record& t = s.report.trace[st.messages[mi]];
        std::pair<std::string, std::string> cargo;
        if (g.transit) {
            cargo = named(sn.brought[std::size_t(k)][mi], g.style, s.params.dim, true);
        } else if (g.outgoing) {
            // A scan's message is its sender's outgoing buffer.
            cargo.first =
                label(sn.last(t.from, k - 1).memory, label_style::outgoing, std::size_t(-1));
        } else if (g.relayed) {
            // ASPC and descend: what the receiver gained that the sender had
            // (elements in transit included).
            cargo = named(common(minus(sn.last(t.to, k).memory, sn.last(t.to, k - 1).memory),
                                 sn.last(t.from, k - 1).memory),
                          g.style, s.params.dim, true);
        } else if (g.reduction) {
            cargo = summed(st, t, s.params.dim);
        } else
            cargo = gained(s, sn, k, mi, incoming);
        if (cargo.first.empty()) {
            const std::uint64_t words = t.bytes / sizeof(sym);
            cargo.first = fmt::format("{} word{}", words, words == 1 ? "" : "s");
        }
        st.carried.push_back(std::move(cargo.first));
        st.carried_lists.push_back(std::move(cargo.second));
    }
}

} // namespace

algorithm_steps record_steps(run_params p) {
    const algorithm_entry& e = entry_to_draw(p);
    sym_program g = program_for(p, e);
    buffers().keep_freed = g.keep_freed;
    snapshots sn{g, {}, {}, {}};
    algorithm_steps s;
    s.report = run_symbolic(g, p, sn);
    s.params = p;
    s.source = e.source;
    s.formula = e.formula;
    s.table = g.table;
    s.reduction_table = g.reduction;
    s.notation = notation_of(g, p);
    s.title = fmt::format("{} {} on a {}-cube ({} nodes), m = {}, {}-port", p.op, p.algo, p.dim,
                          1 << p.dim, p.words, port_policy_of(p.ports).option);
    s.steps.resize(std::size_t(s.report.steps + 1));
    for (std::size_t i = 0; i < s.report.trace.size(); ++i)
        s.steps[std::size_t(s.report.trace[i].step + 1)].messages.push_back(i);
    if (g.transit) follow_transit(sn, s);
    if (g.schedule) read_schedule(s, sn);
    if (g.reduction)
        reduction_cells(s, 1 << p.dim, [&](int i, std::int64_t k) -> const std::vector<sym>& {
            return sn.last(i, k).memory;
        });
    for (std::int64_t k = 0; k <= s.report.steps; ++k) {
        label_nodes(s, sn, k);
        label_messages(s, sn, k);
    }
    return s;
}

} // namespace hcube
