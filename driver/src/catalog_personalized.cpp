// Catalog entries for seed 000, 4.5 (all-to-all personalized communication)
// and 4.6.2 (circular shift on the hypercube).
#include <hcube/catalog.hpp>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/shift.hpp>
#include <hcube/cost/personalized.hpp>
#include <hcube/driver/dispatch.hpp>

#include <cstdint>
#include <sstream>
#include <vector>

namespace hcube::detail {
namespace {

// Element i of the block that node `from` sends to node `to` (a shift packet
// uses to = 0): small integers, exact in every element type.
template <class T>
T element(std::size_t from, std::size_t to, std::size_t i) {
    return T(std::int64_t((from * 7919 + to * 104729 + i * 31 + 1) % 1000003));
}

// Compares out with expected(node, i) for every node's m elements and fills
// verified and a note naming the first mismatch.
template <class T, class Expected>
void verify(run_outcome& o, const std::vector<T>& out, std::size_t per_node, Expected expected) {
    o.verified = true;
    for (std::size_t k = 0; k < out.size(); ++k) {
        const std::size_t n = k / per_node, i = k % per_node;
        if (out[k] == expected(n, i)) continue;
        std::ostringstream os;
        os << "node " << n << " element " << i << " is " << out[k] << ", expected "
           << expected(n, i);
        o.verified = false;
        o.note = os.str();
        return;
    }
}

void add_note(run_outcome& o, const std::string& s) {
    o.note += (o.note.empty() ? "" : "; ") + s;
}

std::string congestion_note(const run_report& r) {
    return "congestion events " + std::to_string(r.congestion.size());
}

// ---- all-to-all personalized ----------------------------------------------

algorithm_entry alltoall_entry(std::string algo, std::string source, std::string formula,
                               alltoall_algo a,
                               double (*closed_form)(double, double, int, double)) {
    algorithm_entry e;
    e.op = "alltoall";
    e.algo = std::move(algo);
    e.source = std::move(source);
    e.formula = std::move(formula);
    e.unfit = [](const run_params&) { return std::string(); };
    e.formula_time = [closed_form](const run_params& p) {
        return closed_form(p.cost.t_s, p.cost.t_w, p.dim, double(p.words));
    };
    e.run = [a, closed_form](machine& mach, const run_params& prm) {
        return with_elem_type(prm.type, [&]<class T>() {
            const std::size_t p = mach.size(), m = prm.words, row = p * m;
            std::vector<T> in(p * row), out(p * row);
            for (std::size_t from = 0; from < p; ++from)
                for (std::size_t to = 0; to < p; ++to)
                    for (std::size_t i = 0; i < m; ++i)
                        in[from * row + to * m + i] = element<T>(from, to, i);
            run_outcome o;
            o.report = mach.run([&](node& me) {
                const std::size_t base = me.id() * row;
                alltoall(me, std::span<const T>(in).subspan(base, row),
                         std::span<T>(out).subspan(base, row), a);
            });
            o.formula_time = closed_form(prm.cost.t_s, prm.cost.t_w, prm.dim, double(m));
            verify(o, out, row,
                   [&](std::size_t to, std::size_t i) { return element<T>(i / m, to, i % m); });
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

algorithm_entry shift_entry(std::string algo, std::string source, std::string formula, shift_algo a,
                            std::string default_ring,
                            shift_cost (*closed_form)(const run_params&)) {
    algorithm_entry e;
    e.op = "shift";
    e.algo = std::move(algo);
    e.source = std::move(source);
    e.formula = std::move(formula);
    e.options = {ring_option(std::move(default_ring))};
    e.unfit = [a](const run_params& p) {
        if (a == shift_algo::ecube || gray_ring(p)) return std::string();
        return std::string("moves along the Gray-code embedded array (position r on node "
                           "gray(r)), so it needs --ring gray; --ring id (node i -> i + q) "
                           "needs --algo ecube");
    };
    e.formula_time = [closed_form](const run_params& p) { return closed_form(p).time; };
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
            const std::size_t p = mach.size(), m = prm.words;
            const bool gr = gray_ring(prm);
            std::vector<T> in(p * m), out(p * m);
            for (std::size_t n = 0; n < p; ++n)
                for (std::size_t i = 0; i < m; ++i)
                    in[n * m + i] = element<T>(n, 0, i);
            run_outcome o;
            o.report = mach.run([&](node& me) {
                const std::size_t base = me.id() * m;
                circular_shift(me, std::span<const T>(in).subspan(base, m),
                               std::span<T>(out).subspan(base, m), prm.shift, a,
                               gr ? shift_ring::gray : shift_ring::id);
            });
            const shift_cost c = closed_form(prm);
            o.formula_time = c.time;
            // The packet node y holds came from the node at array position pos(y) - q.
            verify(o, out, m, [&](std::size_t y, std::size_t i) {
                const long long pos = gr ? gray_inverse(node_id(y)) : (long long)y;
                return element<T>(shift_ring_node(prm.dim, pos - prm.shift, gr), 0, i);
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

shift_cost gray_cost(const run_params& p) {
    const int steps = cost::shift_gray_steps(p.dim, p.shift);
    return {cost::shift_gray(p.cost.t_s, p.cost.t_w, p.dim, double(p.words), p.shift),
            "phases " + phases_text(cost::shift_phases(p.dim, p.shift, false)) + ": " +
                std::to_string(steps) + " steps (2 popcount(q) - q_0), Eq. 4.11 bound " +
                std::to_string(cost::shift_gray_bound_steps(p.dim)) + " steps (2 log p - 1)"};
}

shift_cost gray_bidirectional_cost(const run_params& p) {
    const int steps = cost::shift_gray_bidirectional_steps(p.dim, p.shift);
    return {cost::shift_gray_bidirectional(p.cost.t_s, p.cost.t_w, p.dim, double(p.words), p.shift),
            "phases " + phases_text(cost::shift_phases(p.dim, p.shift, true)) + ": " +
                std::to_string(steps) + " steps, bound " +
                std::to_string(cost::shift_gray_bidirectional_bound_steps(p.dim)) +
                " steps (log p)"};
}

shift_cost ecube_cost(const run_params& p) {
    const bool gr = gray_ring(p);
    const int load = cost::shift_ecube_link_load(p.dim, p.shift, gr);
    return {cost::shift_ecube_time(p.cost.t_s, p.cost.t_w, p.dim, double(p.words), p.shift, gr),
            "most E-cube paths on one link L = " + std::to_string(load) +
                (gr && load > 1 ? " (Eq. 4.12 assumes 1: the Gray-code array is not a q-shift "
                                  "of ids; the router serves paths that meet in arrival order)"
                                : "")};
}

} // namespace

void register_personalized(catalog& c) {
    c.add(alltoall_entry("dimension-exchange", "seed 000, 4.5.3, Eq. 4.9",
                         "(t_s + t_w m p/2) log p", alltoall_algo::dimension_exchange,
                         cost::alltoall_dimension_exchange));
    c.add(alltoall_entry("pairwise", "seed 000, 4.5.3, Alg. 4.10, E-cube routing, Eq. 4.10",
                         "(t_s + t_w m)(p-1)", alltoall_algo::pairwise, cost::alltoall_pairwise));
    c.add(needs_buffers(alltoall_entry("ring", "seed 000, 4.5.1 on the Gray-code ring, Eq. 4.7",
                                       "(t_s + t_w m p/2)(p-1)", alltoall_algo::ring,
                                       cost::alltoall_ring),
                        1, std::nullopt, std::string(ring_sends_first)));
    c.add(shift_entry(
        "gray", "seed 000, 4.6.2, Figure 4.23, Eq. 4.11",
        "(t_s + t_w m)(2 popcount(q) - q_0), q taken mod p, <= (t_s + t_w m)(2 log p - 1)",
        shift_algo::gray, "gray", gray_cost));
    c.add(shift_entry("gray-bidirectional", "seed 000, 4.6.2 (forward and backward shifts)",
                      "(t_s + t_w m) steps(q) <= (t_s + t_w m) log p",
                      shift_algo::gray_bidirectional, "gray", gray_bidirectional_cost));
    c.add(
        shift_entry("ecube", "seed 000, 4.6.2, Eq. 4.12, Figure 4.24, Problem 4.22",
                    "L (t_s + t_w m), L = most paths on one link: 1 on ring id (Eq. 4.12), on ring "
                    "gray 2 unless q = +-2^b (the run can take longer); L = 0 if p | q",
                    shift_algo::ecube, "id", ecube_cost));
}

} // namespace hcube::detail
