// record_steps: an algorithm run on symbolic elements, every node's buffer
// snapshot as each primitive call begins (config::on_call) and when it
// finishes, turned into the label of every node after every step.
#include <hcube/draw.hpp>

#include <algorithm>
#include <bit>
#include <iterator>
#include <span>
#include <utility>

#include <fmt/format.h>

#include <hcube/aspc_schedule.hpp>
#include <hcube/system.hpp>

#include "symbols.hpp"

namespace hcube {

using namespace draw_detail;

namespace {

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
    keep_freed_buffers(g.keep_freed);
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
