// Hu: all-to-some personalized communication and +-2^b-descend.
#include <hcube/collectives/aspc.hpp>
#include <hcube/collectives/descend.hpp>
#include <hcube/cost/aspc.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/driver/dispatch.hpp>
#include <hcube/driver/tridiag.hpp>

#include <algorithm>
#include <bit>
#include <numeric>
#include <sstream>
#include <tuple>

namespace hcube::detail {

namespace {

namespace hs = aspc_schedule;

// --- ASPC ----------------------------------------------------------------------

run_outcome run_aspc(machine& m, const run_params& p, const algorithm_record& rec) {
    return with_elem_type(p.type, [&]<class T>() {
        const int n = p.dim;
        const std::size_t P = std::size_t(1) << n, w = p.words, nw = std::size_t(n) * w;
        std::vector<T> plus(P * nw), minus(P * nw); // by logical node
        // Element k of block j of logical node i: every value of the run distinct.
        const auto value = [n, in = inputs<T>(w)](node_id i, int j, std::size_t k) {
            return in(i * std::uint64_t(n) + std::uint64_t(j), k);
        };
        const run_report r = m.run([&](node& me) {
            const node_id i = hs::logical_of(node_id(me.id()));
            std::vector<T> in(nw);
            for (int j = 0; j < n; ++j)
                for (std::size_t k = 0; k < w; ++k)
                    in[j * w + k] = value(i, j, k);
            aspc<T>(me, in, std::span<T>(plus).subspan(i * nw, nw),
                    std::span<T>(minus).subspan(i * nw, nw));
        });
        std::string mismatch;
        std::vector<T> want_plus(nw), want_minus(nw);
        for (node_id i = 0; i < P && mismatch.empty(); ++i) {
            if (!m.is_local(int(hs::physical_of(i)))) continue; // over MPI: this rank's nodes
            for (int j = 0; j < n; ++j)
                for (std::size_t k = 0; k < w; ++k) {
                    want_plus[j * w + k] = value((i - (node_id{1} << j)) % P, j, k);
                    want_minus[j * w + k] = value((i + (node_id{1} << j)) % P, j, k);
                }
            const auto got = [&](std::vector<T>& v) {
                return std::span<const T>(v).subspan(i * nw, nw);
            };
            mismatch = first_mismatch<T>(int(hs::physical_of(i)), got(plus), want_plus);
            if (mismatch.empty())
                mismatch = first_mismatch<T>(int(hs::physical_of(i)), got(minus), want_minus);
        }
        std::ostringstream note;
        note << r.steps << " steps; Theorem 2 lower bound " << hs::lower_bound_steps(n)
             << " (all-port), single-port counting bound " << hs::single_port_lower_bound_steps(n);
        if (!mismatch.empty()) note << "; " << mismatch;
        run_outcome o = make_outcome(r, rec.cost(shape_of(p)), mismatch);
        o.note = note.str();
        return o;
    });
}

// --- +-2^b-descend ----------------------------------------------------------------

double descend_formula(const run_params& p, descend_schedule schedule) {
    return descend_cost(shape_of(p), schedule);
}

// Runs `kernel` on input `x` (indexed globally) with the schedule, and returns
// the distributed result gathered by global index.
template <class T, class F>
std::pair<std::vector<T>, run_report> run_descend_kernel(machine& m, const std::vector<T>& x,
                                                         F kernel, descend_schedule schedule,
                                                         descend_order order) {
    std::vector<T> a = x;
    const run_report r = m.run([&](node& me) {
        const descend_layout s = descend_layout_of(me, a.size());
        descend<T>(me, std::span<T>(a).subspan(s.first, s.L), a.size(), kernel, schedule, order);
    });
    return {std::move(a), r};
}

// Whether global element i is held by a node of this rank (logical node q
// holds elements q L .. q L + L - 1): over MPI a rank sees only its nodes'.
bool held_here(const machine& m, std::size_t i, std::size_t L) {
    return m.is_local(int(hs::physical_of(node_id(i / L))));
}

// The first difference among this rank's elements, named by the physical node
// that holds it.
template <class T>
std::string descend_mismatch(const machine& m, std::span<const T> got, std::span<const T> want) {
    const int n = m.cfg().dim;
    const std::size_t L = want.size() >> n;
    for (node_id q = 0; q < (node_id{1} << n); ++q) {
        if (!held_here(m, q * L, L)) continue;
        if (std::string d = first_mismatch<T>(int(hs::physical_of(q)), got.subspan(q * L, L),
                                              want.subspan(q * L, L));
            !d.empty())
            return d;
    }
    return {};
}

run_outcome run_descend(machine& m, const run_params& p, descend_schedule schedule) {
    const std::size_t M = p.words;
    const int n = p.dim;
    const std::string& kernel = p.option("kernel");
    const double formula = descend_formula(p, schedule);
    const std::int64_t paper = schedule == descend_schedule::direct
                                   ? cost::descend_direct_paper_steps(n, M)
                                   : cost::descend_pipelined_paper_steps(n, M);
    std::ostringstream note;
    std::string mismatch;
    run_report report;
    if (kernel == "pcr") {
        std::vector<tridiag_row> rows(M);
        for (std::size_t i = 0; i < M; ++i)
            rows[i] = tridiag_test_row(M, i);
        const pcr_kernel f{M};
        auto [got, r] = run_descend_kernel(m, rows, f, schedule, descend_order::ascend);
        report = std::move(r);
        std::vector<tridiag_row> want = rows;
        descend_serial<tridiag_row>(want, f, descend_order::ascend);
        mismatch = descend_mismatch<tridiag_row>(m, got, want);
        const std::vector<double> ref = thomas_solve(rows);
        std::vector<double> x = pcr_solution(got);
        double diff = 0;
        for (std::size_t i = 0; i < M; ++i)
            if (held_here(m, i, M >> n))
                diff = std::max(diff, std::abs(x[i] - ref[i]));
            else
                x[i] = ref[i]; // another rank's row: its neighbours' residuals take Thomas's x
        const double res = tridiag_residual(rows, x);
        note << "pcr (ascend order, double precision whatever --type): residual " << res
             << ", max |x - Thomas| " << diff << "; ";
        if (mismatch.empty() && !(res < 1e-10))
            mismatch = "residual " + std::to_string(res) + " is not below 1e-10";
    } else {
        with_elem_type(p.type, [&]<class T>() {
            // Prefix inputs stay below 16, so int32 sums are exact up to M = 2^27.
            std::vector<T> x(M), want(M);
            const inputs<T> in(M);
            for (std::size_t i = 0; i < M; ++i)
                x[i] = in(0, kernel == "prefix" ? i % 16 : i);
            std::vector<T> got;
            if (kernel == "prefix") {
                std::tie(got, report) =
                    run_descend_kernel(m, x, prefix_kernel{}, schedule, descend_order::descend);
                std::inclusive_scan(x.begin(), x.end(), want.begin());
            } else {
                const std::uint64_t q =
                    std::uint64_t(((p.shift % (long long)M) + (long long)M) % (long long)M);
                std::tie(got, report) =
                    run_descend_kernel(m, x, shift_kernel{q}, schedule, descend_order::descend);
                for (std::size_t i = 0; i < M; ++i)
                    want[(i + q) % M] = x[i];
            }
            mismatch = descend_mismatch<T>(m, got, want);
        });
    }
    run_params unit = p;
    unit.cost = {1, 0, 0};
    note << report.steps << " steps; exact form " << descend_formula(unit, schedule)
         << ", the source's (all-port) count " << paper;
    if (!mismatch.empty()) note << "; " << mismatch;
    run_outcome o = make_outcome(std::move(report), formula, mismatch);
    o.note = note.str();
    return o;
}

// Why ASPC and the descend schedules built on it deadlock with link capacity 0
// (tests/personalized/catalog_limits.cpp).
constexpr std::string_view aspc_sends_first =
    "each step's routes send before they receive, around cycles of nodes";

// An aspc entry. When a node may use several links at once, a step's sends
// are posted with its receives (detail/link_step.hpp), so only the one link
// at a time schedule needs buffered links.
algorithm_entry aspc_entry(const algorithm_record& r) {
    algorithm_entry e = entry_of(r);
    e.run = [&r](machine& m, const run_params& p) { return run_aspc(m, p, r); };
    if (port_policy_of(*r.needs.only_ports).several_links_at_once()) return e;
    return needs_buffers(std::move(e), 1, std::string(aspc_sends_first));
}

// A descend entry for one schedule. When a node may use several links at
// once, the direct schedule's exchanges pair up and the pipelined ASPC
// rounds post their sends with their receives; one link at a time, sends
// come before receives.
algorithm_entry descend_entry(const algorithm_record& r, option_spec kernel) {
    algorithm_entry e = entry_of(r);
    const auto schedule = r.as<descend_schedule>();
    e.options = {std::move(kernel)};
    e.run = [schedule](machine& m, const run_params& p) { return run_descend(m, p, schedule); };
    e.needs_buffered_links = [](const run_params& p) -> std::string {
        if (p.dim < 2 || port_policy_of(p.ports).several_links_at_once()) return {};
        return std::string(aspc_sends_first);
    };
    // descend spreads M >= N elements over the nodes: one element a node.
    e.drawn_words = [](int dim) { return std::size_t(1) << dim; };
    return e;
}

} // namespace

void register_aspc(catalog& c) {
    for (const algorithm_record& r : aspc_records)
        c.add(aspc_entry(r));
    c.set_auto("aspc", aspc_records);
    const option_spec kernel{"kernel",
                             {"pcr", "prefix", "shift"},
                             "pcr",
                             "pcr: parallel cyclic reduction of a tridiagonal system (checked "
                             "against the Thomas algorithm); prefix: prefix sums; shift: cyclic "
                             "shift by --shift"};
    for (const algorithm_record& r : descend_records)
        c.add(descend_entry(r, kernel));
    c.set_auto("descend", descend_records);
}

} // namespace hcube::detail
