// The symbolic programs: for every table of algorithm records hcube draw
// knows, what every node starts with, the collective called with the
// record's enumerator, and how the labels read.
#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <vector>

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
#include <hcube/collectives/shift.hpp>

#include "symbols.hpp"

namespace hcube::draw_detail {

namespace {

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

} // namespace

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

} // namespace hcube::draw_detail

namespace hcube {

using namespace draw_detail;

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

} // namespace hcube
