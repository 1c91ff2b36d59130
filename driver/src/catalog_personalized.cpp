// Catalog entries for Grama et al. 4.5 (all-to-all personalized communication)
// and 4.6.2 (circular shift on the hypercube).
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/shift.hpp>
#include <hcube/cost/personalized.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/driver/dispatch.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace hcube::detail {
namespace {

void add_note(run_outcome& o, const std::string& s) {
    o.note += (o.note.empty() ? "" : "; ") + s;
}

std::string congestion_note(const run_report& r) {
    return "congestion events " + std::to_string(r.congestion.size());
}

// ---- all-to-all personalized ----------------------------------------------

algorithm_entry alltoall_entry(const algorithm_record& r) {
    algorithm_entry e = entry_of(r);
    const auto a = r.as<alltoall_algo>();
    e.run = [a, time = e.formula_time](machine& mach, const run_params& prm) {
        return with_elem_type(prm.type, [&]<class T>() {
            const std::size_t p = mach.size(), m = prm.words, row = p * m;
            // The results, allocated and written outside the timed run: a
            // fresh buffer costs a page fault per page here, more than the
            // exchange's copies (docs/cost-model.md).
            std::vector<std::vector<T>> results(p, std::vector<T>(row));
            // Node `from` sends block from * p + to of the run's inputs to node to.
            const inputs<T> in(m);
            const auto row_of = [&](auto block_at) {
                std::vector<T> v(row);
                for (std::size_t k = 0; k < row; ++k)
                    v[k] = in(block_at(k / m), k % m);
                return v;
            };
            run_outcome o = run_verified<T>(
                mach, time(prm),
                [&](int from) {
                    return row_of([&](std::size_t to) { return std::size_t(from) * p + to; });
                },
                [&](node& me, std::vector<T>& v) {
                    std::vector<T>& out = results[std::size_t(me.id())];
                    alltoall(me, std::span<const T>(v), std::span<T>(out), a);
                    v.swap(out);
                },
                [&](int to) {
                    return std::optional(
                        row_of([&](std::size_t from) { return from * p + std::size_t(to); }));
                });
            add_note(o, congestion_note(o.report));
            return o;
        });
    };
    return e;
}

// ---- circular shift --------------------------------------------------------

option_spec ring_option(std::string fallback) {
    return {"ring",
            {"gray", "id"},
            std::move(fallback),
            "gray: array position r lives on node gray(r) and moves to position r + q "
            "(4.6.2, Figure 4.23); id: node i sends to node i + q (Eq. 4.12, Figure 4.24)"};
}

bool gray_ring(const run_params& p) {
    return p.option("ring") == "gray";
}

// The closed form for the chosen algorithm and the facts behind it.
struct shift_cost {
    double time;
    std::string detail;
};

// closed_form gives the record's cost and the facts behind it.
algorithm_entry shift_entry(const algorithm_record& r, std::string default_ring,
                            shift_cost (*closed_form)(const run_params&)) {
    algorithm_entry e = entry_of(r);
    const auto a = r.as<shift_algo>();
    e.options = {ring_option(std::move(default_ring))};
    // The Gray-code phases move packets around cycles of the array, sending
    // before receiving; E-cube's routed sends never block on a receiver.
    if (a != shift_algo::ecube)
        e.needs_buffered_links = [](const run_params& p) {
            return cost::shift_mod(p.dim, p.shift) == 0
                       ? std::string()
                       : "every phase sends along cycles of the Gray-code array before it "
                         "receives";
        };
    e.run = [a, closed_form](machine& mach, const run_params& prm) {
        return with_elem_type(prm.type, [&]<class T>() {
            const std::size_t m = prm.words;
            const bool gr = gray_ring(prm);
            const shift_cost c = closed_form(prm);
            const inputs<T> in(m);
            run_outcome o = run_verified<T>(
                mach, c.time, [&](int n) { return in.block(std::uint64_t(n)); },
                [&](node& me, std::vector<T>& v) {
                    std::vector<T> out(m);
                    circular_shift(me, std::span<const T>(v), std::span<T>(out), prm.shift, a,
                                   gr ? shift_ring::gray : shift_ring::id);
                    v = std::move(out);
                },
                // The packet node y holds came from the node at array position pos(y) - q.
                [&](int y) {
                    const long long pos = gr ? gray_inverse(node_id(y)) : (long long)y;
                    const node_id from = shift_ring_node(prm.dim, pos - prm.shift, gr);
                    return std::optional(in.block(from));
                });
            add_note(o, "q mod p = " + std::to_string(cost::shift_mod(prm.dim, prm.shift)) +
                            ", ring " + prm.option("ring") + "; " + c.detail + "; " +
                            congestion_note(o.report));
            return o;
        });
    };
    return e;
}

std::string phases_text(const std::vector<long long>& phases) {
    std::string s;
    for (long long ph : phases)
        s += (s.empty() ? "" : " ") + std::string(ph > 0 ? "+" : "") + std::to_string(ph);
    return s.empty() ? "none" : s;
}

// The record's cost and the facts behind it.
double record_cost(shift_algo a, const run_params& p) {
    return record_of(shift_records, a).cost(shape_of(p));
}

shift_cost gray_cost(const run_params& p) {
    const int steps = cost::shift_gray_steps(p.dim, p.shift);
    return {record_cost(shift_algo::gray, p),
            "phases " + phases_text(cost::shift_phases(p.dim, p.shift, false)) + ": " +
                std::to_string(steps) + " steps (2 popcount(q) - q_0), Eq. 4.11 bound " +
                std::to_string(cost::shift_gray_bound_steps(p.dim)) + " steps (2 log p - 1)"};
}

shift_cost gray_bidirectional_cost(const run_params& p) {
    const int steps = cost::shift_gray_bidirectional_steps(p.dim, p.shift);
    return {record_cost(shift_algo::gray_bidirectional, p),
            "phases " + phases_text(cost::shift_phases(p.dim, p.shift, true)) + ": " +
                std::to_string(steps) + " steps, bound " +
                std::to_string(cost::shift_gray_bidirectional_bound_steps(p.dim)) +
                " steps (log p)"};
}

shift_cost ecube_cost(const run_params& p) {
    const bool gr = gray_ring(p);
    const int load = cost::shift_ecube_link_load(p.dim, p.shift, gr);
    return {record_cost(shift_algo::ecube, p),
            "most E-cube paths on one link L = " + std::to_string(load) +
                (gr && load > 1 ? " (Eq. 4.12 assumes 1: the Gray-code array is not a q-shift "
                                  "of ids; the router serves paths that meet in arrival order)"
                                : "")};
}

// Each call's work summed over its nodes (call_work, wall_time.cpp), following
// the code in collectives/.
// 4.5.3: every step packs and unpacks p/2 blocks, after copying p.
call_work dimension_exchange_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p * d, 0, p * d * p / 2 * m, p * (p + d * p) * m};
}
call_work pairwise_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p * (p - 1), p * (p - 1), p * (p - 1) * m, p * m};
}
// 4.5.1: packs p - 1 blocks, forwards (p-s) m words in step s, copies a block out.
call_work alltoall_ring_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p * (p - 1), 0, p * (p - 1) * p / 2 * m, 2 * p * (p - 1) * m};
}
// Every node's packet takes one routed message, unless q mod p = 0.
call_work ecube_shift_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    const double moved = cost::shift_mod(r.dim, r.shift) ? p : 0;
    return {moved, moved, moved * m, 0};
}

} // namespace

void register_personalized(catalog& c) {
    c.add(with_work(alltoall_entry(record_of(alltoall_records, alltoall_algo::dimension_exchange)),
                    dimension_exchange_work));
    c.add(with_work(alltoall_entry(record_of(alltoall_records, alltoall_algo::pairwise)),
                    pairwise_work));
    c.add(with_work(needs_buffers(alltoall_entry(record_of(alltoall_records, alltoall_algo::ring)),
                                  1, std::string(ring_sends_first)),
                    alltoall_ring_work));
    c.set_auto("alltoall", alltoall_records);
    c.add(shift_entry(record_of(shift_records, shift_algo::gray), "gray", gray_cost));
    algorithm_entry bidirectional = shift_entry(
        record_of(shift_records, shift_algo::gray_bidirectional), "gray", gray_bidirectional_cost);
    // Where the fewest signed phases are the forward ones (q = 1, 2^b, ...),
    // shift_gray runs the same phases for both.
    bidirectional.same_plan_as = [](const run_params& p) {
        return cost::shift_phases(p.dim, p.shift, true) == cost::shift_phases(p.dim, p.shift, false)
                   ? std::string("gray")
                   : std::string();
    };
    c.add(std::move(bidirectional));
    c.add(with_work(shift_entry(record_of(shift_records, shift_algo::ecube), "id", ecube_cost),
                    ecube_shift_work));
    c.set_auto("shift", shift_records);
}

} // namespace hcube::detail
