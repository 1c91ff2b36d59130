// record_steps: an algorithm run on symbolic elements, every node's buffer
// snapshot as each primitive call begins (config::on_call) and when it
// finishes, turned into the label of every node after every step.
#include <hcube/draw.hpp>

#include <algorithm>
#include <bit>
#include <functional>
#include <initializer_list>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/cm200.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scan.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/collectives/shift.hpp>

namespace hcube {

namespace {

// A symbolic element: the nodes whose data it is (one bit: a block; several:
// a partial sum of theirs) and which element of their data. Sums are unions;
// a sum that counts a node twice or mixes elements is flagged, and shows.
struct sym {
    std::uint64_t mask = 0;
    std::uint32_t item = 0;
    std::uint32_t flags = 0;
    static constexpr std::uint32_t mixed = 1, twice = 2;
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

constexpr int max_drawn_dim = 6;

enum class label_style {
    blocks, // (0,1,2,3): the nodes whose blocks it holds
    sums,   // [0..3]: the nodes its partial sums cover
    pairs,  // {0,5}: block of node 0 for node 5
};

struct sym_program {
    std::vector<std::vector<sym>> in, out; // per node; `out` empty: the result is in `in`
    std::function<void(node&, std::vector<sym>&, std::vector<sym>&)> body;
    label_style style = label_style::blocks;
    bool table = false; // CM-200 memory tables
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

[[noreturn]] void no_driver(const run_params& p) {
    throw usage_error("hcube draw has no picture for " + p.op + " " + p.algo +
                      " yet; it draws broadcast, reduce, allreduce, scan, exscan, allgather, "
                      "reduce-scatter (hypercube, ring), alltoall, shift, scatter and gather");
}

// The enum value of p.algo among `names`; an algorithm without a symbolic
// driver (one the catalog gained later) is refused, not drawn as another.
template <class E>
E pick(const run_params& p, std::initializer_list<std::pair<std::string_view, E>> names) {
    for (const auto& [name, e] : names)
        if (name == p.algo) return e;
    no_driver(p);
}

sym_program program_for(const run_params& p) {
    const int n = 1 << p.dim;
    const std::size_t m = p.words;
    const std::string& op = p.op;
    const std::string& a = p.algo;
    sym_program g;
    g.in.resize(std::size_t(n));
    g.out.resize(std::size_t(n));
    const auto each = [&](const std::function<void(int)>& f) {
        for (int i = 0; i < n; ++i)
            f(i);
    };
    const auto own_blocks = [&] { each([&](int i) { g.in[std::size_t(i)] = block(i, m); }); };
    const auto spans = [](std::vector<sym>& v) { return std::span<sym>(v); };
    if (op == "broadcast") {
        each(
            [&](int i) { g.in[std::size_t(i)] = i == p.root ? block(i, m) : std::vector<sym>(m); });
        const auto algo =
            pick<broadcast_algo>(p, {{"binomial", broadcast_algo::binomial},
                                     {"scatter-allgather", broadcast_algo::scatter_allgather}});
        g.body = [algo, root = p.root, spans](node& me, std::vector<sym>& in, std::vector<sym>&) {
            broadcast(me, spans(in), root, algo);
        };
    } else if (op == "reduce" || op == "allreduce" || op == "scan" || op == "exscan") {
        own_blocks();
        g.style = label_style::sums;
        if (op == "reduce") {
            const auto algo = pick<reduce_algo>(
                p, {{"binomial", reduce_algo::binomial},
                    {"reduce-scatter-gather", reduce_algo::reduce_scatter_gather}});
            g.body = [algo, root = p.root, spans](node& me, std::vector<sym>& in,
                                                  std::vector<sym>&) {
                reduce(me, spans(in), root, std::plus<>{}, algo);
            };
        } else if (op == "allreduce") {
            const auto algo = pick<allreduce_algo>(
                p, {{"hypercube", allreduce_algo::hypercube},
                    {"reduce-scatter-allgather", allreduce_algo::reduce_scatter_allgather},
                    {"reduce-broadcast", allreduce_algo::reduce_broadcast}});
            g.body = [algo, spans](node& me, std::vector<sym>& in, std::vector<sym>&) {
                allreduce(me, spans(in), std::plus<>{}, algo);
            };
        } else {
            const bool inclusive = op == "scan" && pick<bool>(p, {{"hypercube", true}});
            g.body = [inclusive, spans](node& me, std::vector<sym>& in, std::vector<sym>&) {
                if (inclusive)
                    inclusive_scan(me, spans(in), std::plus<>{});
                else
                    exclusive_scan(me, spans(in), std::plus<>{});
            };
        }
    } else if (op == "allgather") {
        own_blocks();
        each([&](int i) { g.out[std::size_t(i)].resize(std::size_t(n) * m); });
        if (a == "hypercube" || a == "ring" || a == "mesh") {
            const auto algo = pick<allgather_algo>(p, {{"hypercube", allgather_algo::hypercube},
                                                       {"ring", allgather_algo::ring},
                                                       {"mesh", allgather_algo::mesh}});
            g.body = [algo](node& me, std::vector<sym>& in, std::vector<sym>& out) {
                allgather(me, std::span<const sym>(in), std::span<sym>(out), algo);
            };
        } else {
            using A = cm200::allgather_algo;
            const A algo = pick<A>(p, {{"one-cycle", A::one_cycle},
                                       {"d-cycles", A::d_cycles},
                                       {"send-and-spread", A::send_and_spread},
                                       {"one-source-at-a-time", A::one_source_at_a_time}});
            g.table = algo == A::one_cycle || algo == A::d_cycles;
            g.body = [algo, o = cm200_options_of(p)](node& me, std::vector<sym>& in,
                                                     std::vector<sym>& out) {
                cm200::allgather(me, std::span<const sym>(in), std::span<sym>(out), algo, o);
            };
        }
    } else if (op == "reduce-scatter") {
        g.style = label_style::sums;
        each([&](int i) {
            g.in[std::size_t(i)] = blocks(n, m, [&](int b, std::size_t) {
                return sym{std::uint64_t(1) << i, std::uint32_t(b), 0};
            });
            g.out[std::size_t(i)].resize(m);
        });
        const auto algo =
            pick<reduce_scatter_algo>(p, {{"hypercube", reduce_scatter_algo::hypercube},
                                          {"ring", reduce_scatter_algo::ring}});
        g.body = [algo](node& me, std::vector<sym>& in, std::vector<sym>& out) {
            reduce_scatter(me, std::span<const sym>(in), std::span<sym>(out), std::plus<>{}, algo);
        };
    } else if (op == "alltoall") {
        g.style = label_style::pairs;
        each([&](int i) {
            g.in[std::size_t(i)] = blocks(n, m, [&](int b, std::size_t) {
                return sym{std::uint64_t(1) << i, std::uint32_t(b), 0};
            });
            g.out[std::size_t(i)].resize(std::size_t(n) * m);
        });
        const auto algo =
            pick<alltoall_algo>(p, {{"dimension-exchange", alltoall_algo::dimension_exchange},
                                    {"pairwise", alltoall_algo::pairwise},
                                    {"ring", alltoall_algo::ring}});
        g.body = [algo](node& me, std::vector<sym>& in, std::vector<sym>& out) {
            alltoall(me, std::span<const sym>(in), std::span<sym>(out), algo);
        };
    } else if (op == "shift") {
        own_blocks();
        each([&](int i) { g.out[std::size_t(i)].resize(m); });
        const auto algo =
            pick<shift_algo>(p, {{"gray", shift_algo::gray},
                                 {"gray-bidirectional", shift_algo::gray_bidirectional},
                                 {"ecube", shift_algo::ecube}});
        const auto ring = p.option("ring") == "gray" ? shift_ring::gray : shift_ring::id;
        g.body = [algo, ring, q = p.shift](node& me, std::vector<sym>& in, std::vector<sym>& out) {
            circular_shift(me, std::span<const sym>(in), std::span<sym>(out), q, algo, ring);
        };
    } else if (op == "scatter" && pick<bool>(p, {{"binomial", true}})) {
        // The blocks are named by their destination, as in Figure 4.15.
        each([&](int i) {
            if (i == p.root)
                g.in[std::size_t(i)] = blocks(n, m, [](int b, std::size_t j) {
                    return sym{std::uint64_t(1) << b, std::uint32_t(j), 0};
                });
            g.out[std::size_t(i)].resize(m);
        });
        g.body = [root = p.root](node& me, std::vector<sym>& in, std::vector<sym>& out) {
            scatter(me, std::span<const sym>(in), std::span<sym>(out), root);
        };
    } else if (op == "gather" && pick<bool>(p, {{"binomial", true}})) {
        own_blocks();
        each([&](int i) { g.out[std::size_t(i)].resize(i == p.root ? std::size_t(n) * m : 0); });
        g.body = [root = p.root](node& me, std::vector<sym>& in, std::vector<sym>& out) {
            gather(me, std::span<const sym>(in), std::span<sym>(out), root);
        };
    } else {
        no_driver(p);
    }
    return g;
}

// "0..3,6": the set bits of `mask` as runs.
std::string runs(std::uint64_t mask) {
    std::string out;
    for (int b = 0; b < 64;) {
        if (!(mask >> b & 1)) {
            ++b;
            continue;
        }
        int e = b;
        while (e + 1 < 64 && (mask >> (e + 1) & 1))
            ++e;
        if (!out.empty()) out += ',';
        out += e == b ? std::to_string(b) : fmt::format("{}{}{}", b, e == b + 1 ? "," : "..", e);
        b = e + 1;
    }
    return out;
}

// The label of a node holding `v`, in the seeds' notation.
// More than `max_listed` single blocks are written as runs.
std::string label(const std::vector<sym>& v, label_style style, std::size_t max_listed = 8) {
    std::vector<std::string> tokens;
    const sym* last = nullptr;
    for (const sym& s : v) {
        if (!s.mask) continue;
        const bool same =
            last && last->mask == s.mask && (style != label_style::pairs || last->item == s.item);
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
    std::string out = style == label_style::blocks ? "(" : "";
    for (std::size_t i = 0; i < tokens.size(); ++i)
        out += (i ? (style == label_style::blocks ? "," : " ") : "") + tokens[i];
    return style == label_style::blocks ? out + ")" : out;
}

// Seed 002's cell "ij": element i of node j's data.
std::string cell(const sym& s) {
    const int node = std::countr_zero(s.mask);
    return s.item < 10 && node < 10 ? fmt::format("{}{}", s.item, node)
                                    : fmt::format("{}.{}", s.item, node);
}

struct snapshot {
    std::int64_t steps;
    std::vector<sym> data;
};

} // namespace

algorithm_steps record_steps(run_params p) {
    if (p.dim < 0 || p.dim > max_drawn_dim)
        throw usage_error("hcube draw draws up to d = " + std::to_string(max_drawn_dim) +
                          " (64 nodes); d = " + std::to_string(p.dim) +
                          " has too many to read: use hcube run --trace FILE.json");
    const algorithm_entry& e = resolve_algorithm(p);
    p.algo = e.algo;
    for (const auto& o : e.options)
        p.options.try_emplace(o.name, o.fallback);
    if (const std::string why = e.unfit(p); !why.empty())
        throw usage_error(p.op + " " + p.algo + ": " + why);
    sym_program g = program_for(p);

    const int n = 1 << p.dim;
    std::vector<std::vector<snapshot>> snaps(static_cast<std::size_t>(n));
    const auto watched = [&](int i) -> const std::vector<sym>& {
        return g.out[std::size_t(i)].empty() && g.in[std::size_t(i)].size() ? g.in[std::size_t(i)]
                                                                            : g.out[std::size_t(i)];
    };
    config c = machine_config(p);
    c.trace = true;
    // On the node's own thread: only that node's vectors are read.
    c.on_call = [&](node& me) {
        snaps[std::size_t(me.id())].push_back({me.steps(), watched(me.id())});
    };
    machine mc(c);
    algorithm_steps s;
    s.report = mc.run([&](node& me) {
        const auto i = std::size_t(me.id());
        g.body(me, g.in[i], g.out[i]);
        snaps[i].push_back({me.steps(), watched(me.id())});
    });
    s.params = p;
    s.source = e.source;
    s.formula = e.formula;
    s.table = g.table;
    s.title = fmt::format("{} {} on a {}-cube ({} nodes), m = {}, {}-port", p.op, p.algo, p.dim, n,
                          p.words, port_policy_of(p.ports).option);

    const std::int64_t total = s.report.steps;
    s.steps.resize(std::size_t(total + 1));
    for (std::size_t i = 0; i < s.report.trace.size(); ++i)
        s.steps[std::size_t(s.report.trace[i].step + 1)].messages.push_back(i);
    // The node's last snapshot taken at step count <= k: what it held once
    // step k's messages were in (taken at its next call, or at its end).
    const auto held = [&](int i, std::int64_t k) -> const std::vector<sym>& {
        const snapshot* at = &snaps[std::size_t(i)].front();
        for (const auto& sn : snaps[std::size_t(i)])
            if (sn.steps <= k) at = &sn;
        return at->data;
    };
    for (std::int64_t k = 0; k <= total; ++k) {
        step_state& st = s.steps[std::size_t(k)];
        std::vector<int> incoming(static_cast<std::size_t>(n));
        for (const std::size_t m : st.messages)
            ++incoming[std::size_t(s.report.trace[m].to)];
        for (int i = 0; i < n; ++i) {
            const std::vector<sym>& at = held(i, k);
            st.labels.push_back(label(at, g.style));
            if (!s.table) continue;
            // Seed 002's tables: location j holds element j of the block that
            // arrived last (Init: the node's own).
            std::vector<std::string> mem(p.words);
            const std::vector<sym>& before = held(i, k - 1);
            for (std::size_t x = 0; x < at.size(); ++x) {
                const sym& now = at[x];
                if (!now.mask || now.item >= p.words) continue;
                if (k == 0 ? std::countr_zero(now.mask) == i : !before[x].mask)
                    mem[now.item] = cell(now);
            }
            st.memory.push_back(std::move(mem));
        }
        // What a message carried: what its receiver gained in the step, and
        // when several messages came in, the part of it that only this
        // message's sender held before the step.
        const auto holds = [&](int node, const sym& e) {
            const auto& v = held(node, k - 1);
            return std::find(v.begin(), v.end(), e) != v.end();
        };
        for (const std::size_t m : st.messages) {
            const trace_record& t = s.report.trace[m];
            const auto& now = held(t.to, k);
            const auto& prev = held(t.to, k - 1);
            const bool alone = incoming[std::size_t(t.to)] == 1;
            std::vector<sym> gain(now.size());
            for (std::size_t x = 0; x < now.size(); ++x) {
                if (x < prev.size() && now[x] == prev[x]) continue;
                if (!alone && (g.style == label_style::sums || !holds(t.from, now[x]))) continue;
                if (!alone &&
                    std::any_of(st.messages.begin(), st.messages.end(), [&](std::size_t o) {
                        const trace_record& u = s.report.trace[o];
                        return o != m && u.to == t.to && holds(u.from, now[x]);
                    }))
                    continue;
                gain[x] = {g.style == label_style::sums && x < prev.size()
                               ? now[x].mask & ~prev[x].mask
                               : now[x].mask,
                           now[x].item, 0};
            }
            std::string cargo = label(gain, g.style, 4);
            if (s.table && !alone) {
                // Location j's element came from the neighbour that held it
                // in location j one step before (seed 002's Dim column).
                cargo.clear();
                const auto& to = st.memory[std::size_t(t.to)];
                const auto& from = s.steps[std::size_t(k - 1)].memory[std::size_t(t.from)];
                for (std::size_t j = 0; j < to.size(); ++j)
                    if (!to[j].empty() && to[j] == from[j])
                        cargo += (cargo.empty() ? "" : " ") + to[j];
            }
            if (cargo.empty()) {
                const std::uint64_t words = t.bytes / sizeof(sym);
                cargo = fmt::format("{} word{}", words, words == 1 ? "" : "s");
            }
            st.carried.push_back(std::move(cargo));
        }
    }
    return s;
}

} // namespace hcube
