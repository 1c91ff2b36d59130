#include <hcube/driver/catalog.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <hcube/cost/personalized.hpp>
#include <hcube/cost/rooted.hpp>
#include <hcube/system.hpp>

namespace hcube {

std::string_view to_string(elem_type t) noexcept {
    switch (t) {
    case elem_type::int32:
        return "int32";
    case elem_type::int64:
        return "int64";
    case elem_type::float64:
        return "double";
    }
    return "?";
}

std::optional<elem_type> parse_elem_type(std::string_view s) noexcept {
    if (s == "int32") return elem_type::int32;
    if (s == "int64") return elem_type::int64;
    if (s == "double" || s == "float64") return elem_type::float64;
    return std::nullopt;
}

const std::string& run_params::option(const std::string& name) const {
    const auto it = options.find(name);
    if (it == options.end())
        throw usage_error("option --" + name + " is not set for " + op + " " + algo);
    return it->second;
}

void catalog::add(algorithm_entry e) {
    entries_.push_back(std::move(e));
}

void catalog::set_auto(std::string_view op, std::span<const algorithm_record> table) {
    auto_.insert_or_assign(std::string(op), table);
}

call_shape shape_of(const run_params& p) {
    call_shape s;
    s.dim = p.dim;
    s.ports = p.ports;
    s.t_s = p.cost.t_s;
    s.t_w = p.cost.t_w;
    s.words = double(p.words);
    s.root = p.root;
    s.shift = p.shift;
    const auto ring = p.options.find("ring");
    s.gray_ring = ring != p.options.end() && ring->second == "gray";
    return s;
}

algorithm_entry entry_of(const algorithm_record& r) {
    algorithm_entry e;
    e.record = &r;
    e.op = r.op;
    e.algo = r.name;
    e.source = r.source;
    e.formula = r.formula;
    e.unfit = [&r](const run_params& p) { return unfit(r, shape_of(p)); };
    e.formula_time = [&r](const run_params& p) { return r.cost(shape_of(p)); };
    return e;
}

std::vector<std::string> catalog::ops() const {
    std::vector<std::string> out;
    for (const auto& e : entries_)
        if (std::find(out.begin(), out.end(), e.op) == out.end()) out.push_back(e.op);
    return out;
}

std::vector<const algorithm_entry*> catalog::algorithms(std::string_view op) const {
    std::vector<const algorithm_entry*> out;
    for (const auto& e : entries_)
        if (e.op == op) out.push_back(&e);
    return out;
}

const algorithm_entry* catalog::find(std::string_view op, std::string_view algo) const {
    for (const auto& e : entries_)
        if (e.op == op && e.algo == algo) return &e;
    return nullptr;
}

namespace {

// p with the entry's option defaults filled in, as the entry sees it.
run_params with_defaults(const algorithm_entry& e, run_params p) {
    p.algo = e.algo;
    for (const auto& o : e.options)
        p.options.try_emplace(o.name, o.fallback);
    return p;
}

// Bytes in binary units, e.g. "1.5 GiB".
std::string human_bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024 && u < 6)
        bytes /= 1024, ++u;
    std::ostringstream os;
    os.precision(u == 0 ? 0 : 1);
    os << std::fixed << bytes << ' ' << units[u];
    return os.str();
}

} // namespace

namespace {

bool fits(const algorithm_entry& e, const run_params& p) {
    const run_params q = with_defaults(e, p);
    return e.unfit(q).empty() && (p.link_capacity || buffered_links_need(e, q).empty());
}

// What auto --cost calibrated takes from the measured table at p's
// operation, port model and dimension: at a measured size, the fastest
// there that fits p; between two, the fitting algorithm measured at both
// whose median, interpolated linearly in log time over log size, is the
// least (a power law between the points); beyond the grid, the nearest
// point. Null entry when nothing measured fits.
struct measured_pick {
    const algorithm_entry* entry = nullptr;
    std::string basis;
};

measured_pick measured_choice(const catalog& c, const run_params& p) {
    // The survey shifts by q = 1 (run_params' default); another q has other
    // phases (another plan), which the model compares.
    if (!p.measured || (p.op == "shift" && cost::shift_mod(p.dim, p.shift) !=
                                               cost::shift_mod(p.dim, run_params{}.shift)))
        return {};
    std::vector<const measured_fastest*> at;
    for (const measured_fastest& f : *p.measured)
        if (f.op == p.op && f.ports == p.ports && f.dim == p.dim) at.push_back(&f);
    if (at.empty()) return {};
    std::ranges::sort(at, {}, &measured_fastest::bytes);
    const double bytes = double(std::max<std::size_t>(1, p.words * elem_bytes(p.type)));
    const auto hi =
        std::ranges::find_if(at, [&](const auto* f) { return double(f->bytes) >= bytes; });
    const measured_fastest* up = hi == at.end() ? at.back() : *hi;
    const measured_fastest* lo =
        hi == at.begin() || hi == at.end() || double(up->bytes) == bytes ? up : *(hi - 1);
    const double f = lo == up ? 0
                              : std::log(bytes / double(lo->bytes)) /
                                    std::log(double(up->bytes) / double(lo->bytes));
    measured_pick best;
    double best_time = 0;
    for (const auto& [algo, t_lo] : lo->median_seconds) {
        const auto t_up = up->median_seconds.find(algo);
        const algorithm_entry* e = c.find(p.op, algo);
        if (t_up == up->median_seconds.end() || !(t_lo > 0 && t_up->second > 0) || !e ||
            !fits(*e, p) || c.same_plan(*e, p))
            continue;
        const double t = std::exp(std::log(t_lo) + f * (std::log(t_up->second) - std::log(t_lo)));
        if (!best.entry || t < best_time) best.entry = e, best_time = t;
    }
    if (!best.entry) return {};
    best.basis = lo == up ? "measured fastest here at dim " + std::to_string(p.dim) +
                                ", m = " + std::to_string(lo->bytes) + " bytes (hcube calibrate)"
                          : "interpolated between the times measured here at dim " +
                                std::to_string(p.dim) + ", m = " + std::to_string(lo->bytes) +
                                " and " + std::to_string(up->bytes) + " bytes (hcube calibrate)";
    return best;
}

} // namespace

const algorithm_entry* catalog::same_plan(const algorithm_entry& e, const run_params& p) const {
    if (!e.same_plan_as) return nullptr;
    const algorithm_entry* other = find(e.op, e.same_plan_as(with_defaults(e, p)));
    return other && other != &e && fits(*other, p) ? other : nullptr;
}

const algorithm_entry* catalog::choose(const run_params& p) const {
    if (p.cores > 0) {
        if (const measured_pick m = measured_choice(*this, p); m.entry) return m.entry;
        const algorithm_entry* best = nullptr;
        double best_time = 0;
        for (const algorithm_entry* e : algorithms(p.op)) {
            if (!fits(*e, p) || same_plan(*e, p)) continue;
            const double t = predicted_wall_time(*e, with_defaults(*e, p));
            if (!best || t < best_time) best = e, best_time = t;
        }
        return best;
    }
    const auto table = auto_.find(p.op);
    if (table == auto_.end()) return nullptr;
    const algorithm_record* r = cheapest(table->second, shape_of(p));
    return r ? find(p.op, r->name) : nullptr;
}

std::string catalog::choice_basis(const run_params& p) const {
    if (p.cores <= 0) return "the least closed-form cost (Grama et al. Table 4.1)";
    if (const measured_pick m = measured_choice(*this, p); m.entry) return m.basis;
    return "the least predicted wall time on " + std::to_string(p.cores) +
           " cores (calibrated t_s, t_w; docs/cost-model.md)";
}

std::string catalog::unfit_reasons(const run_params& p) const {
    std::string out;
    for (const auto* e : algorithms(p.op)) {
        const std::string why = e->unfit(with_defaults(*e, p));
        out += (out.empty() ? "" : "; ") + e->algo + ": " + (why.empty() ? "fits" : why);
    }
    return out;
}

std::optional<exact_form> exact_formula(const algorithm_entry& e, const run_params& p) {
    return e.exact ? e.exact(p) : std::nullopt;
}

std::string buffered_links_need(const algorithm_entry& e, const run_params& p) {
    return e.needs_buffered_links ? e.needs_buffered_links(p) : std::string();
}

data_estimate estimated_data(const algorithm_entry& e, const run_params& p) {
    const double nodes = std::ldexp(1.0, p.dim), m = double(p.words);
    double elem = double(elem_bytes(p.type));
    // Elements held at once, over all nodes: inputs, results, the copies in
    // flight and the serial reference (each driver in catalog_*.cpp).
    double elements = 0;
    std::string counted;
    if (e.op == "allgather" || e.op == "reduce-scatter") {
        elements = 2 * nodes * nodes * m, counted = "2 p^2 m";
    } else if (e.op == "alltoall") {
        elements = 3 * nodes * nodes * m, counted = "3 p^2 m";
    } else if (e.op == "aspc") {
        elements = 4 * nodes * p.dim * m, counted = "4 p log p w";
    } else if (e.op == "descend") {
        // M = --words elements in all; pcr works on rows of four doubles.
        if (p.options.count("kernel") && p.options.at("kernel") == "pcr") elem = 32;
        elements = 4 * m, counted = "4 M";
    } else {
        elements = 4 * nodes * m, counted = "4 p m";
    }
    return {elements, elem, counted};
}

double estimated_bytes(const algorithm_entry& e, const run_params& p, std::string* what) {
    const data_estimate d = estimated_data(e, p);
    const double mach = double(memory_estimate(machine_config(p)).total());
    if (what) {
        std::ostringstream os;
        os << d.counted << " elements of " << d.bytes << " bytes + " << human_bytes(mach)
           << " of machine: links and threads";
        *what = os.str();
    }
    return d.elements * d.bytes + mach;
}

void check_memory(const std::string& what, double need, const std::string& counted) {
    const os_limits lim = read_os_limits();
    const bool by_limit =
        lim.address_space >= 0 && !(lim.memory > 0 && lim.memory < lim.address_space);
    const double have = by_limit ? lim.address_space : lim.memory;
    if (have > 0 && need > have)
        throw usage_error(
            what + " needs about " + human_bytes(need) + " (" + counted + "), more than the " +
            human_bytes(have) +
            (by_limit ? " the address-space limit (ulimit -v) leaves" : " of physical memory"));
}

const catalog& builtin_catalog() {
    static const catalog c = [] {
        catalog c;
        detail::register_rooted(c);
        detail::register_reductions(c);
        detail::register_personalized(c);
        detail::register_cm200(c);
        detail::register_aspc(c);
        detail::register_all_port(c);
        return c;
    }();
    return c;
}

namespace {

// --dim within what the chosen executor runs, in the options' words.
void check_dim(const run_params& p) {
    const executor_kind e = resolve_executor(p.executor);
    if (p.dim < 0 || p.dim > max_dim_of(e))
        throw usage_error("--dim " + std::to_string(p.dim) + " is outside 0.." +
                          std::to_string(max_dim_of(e)) + " with " + std::string(to_string(e)) +
                          (max_dim_of(e) < max_dim
                               ? " (--executor " + std::string(widest_executor().name) +
                                     " goes to " + std::to_string(max_dim) + ")"
                               : ""));
}

} // namespace

config machine_config(const run_params& p) {
    check_dim(p);
    config c;
    c.dim = p.dim;
    c.ports = p.ports;
    c.cost = p.cost;
    c.link_capacity = p.link_capacity;
    c.trace = p.trace;
    c.links = p.links;
    c.executor = resolve_executor(p.executor);
    c.backend = p.backend;
    if (executor_policy_of(c.executor).thread_per_node) {
        const auto refuse = [&c](const std::string& what) {
            const auto fibers =
                std::ranges::find(executor_policies, false, &executor_policy::thread_per_node);
            throw usage_error(what + " applies to --executor " + std::string(fibers->name) +
                              "; with " + std::string(to_string(c.executor)) +
                              " every node is its own OS thread with the system's stack");
        };
        if (p.workers) refuse("--workers " + std::to_string(p.workers));
        if (p.stack_bytes) refuse("--stack-bytes " + std::to_string(p.stack_bytes));
    }
    c.workers = p.workers;
    if (p.stack_bytes) c.stack_bytes = p.stack_bytes;
    return c;
}

namespace {

std::string join_algorithms(const catalog& c, std::string_view op) {
    std::ostringstream os;
    for (const auto* e : c.algorithms(op))
        os << (os.tellp() > 0 ? ", " : "") << e->algo;
    return os.str();
}

std::string number(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

} // namespace

namespace detail {

std::optional<exact_form> uneven_blocks_form(const run_params& p, std::size_t messages,
                                             std::size_t words) {
    const std::size_t nodes = std::size_t(1) << p.dim, m = p.words;
    if (m % nodes == 0) return std::nullopt;
    const double seed_words = 2.0 * double(nodes - 1) * double(m) / double(nodes);
    exact_form f;
    f.text = std::to_string(messages) + " t_s + " + std::to_string(words) + " t_w";
    f.seed_time = cost::split_rooted_eq_4_13(p.dim, double(m), p.cost.t_s, p.cost.t_w);
    f.why = "p = " + std::to_string(nodes) + " does not divide m = " + std::to_string(m) +
            ": the blocks have " + std::to_string(m / nodes) + " or " +
            std::to_string(m / nodes + 1) + " words, and the longest chain of messages has " +
            std::to_string(messages) + " messages carrying " + std::to_string(words) +
            " words, not the source's 2 (p-1) m/p = " + number(seed_words);
    return f;
}

algorithm_entry needs_buffers(algorithm_entry e, int min_dim, std::string why) {
    e.needs_buffered_links = [min_dim, why = std::move(why)](const run_params& p) {
        return p.dim < min_dim ? std::string() : why;
    };
    return e;
}

} // namespace detail

const algorithm_entry& resolve_algorithm(const run_params& p) {
    const catalog& c = builtin_catalog();
    if (c.algorithms(p.op).empty()) {
        std::ostringstream os;
        os << "unknown operation '" << p.op << "'; operations:";
        for (const auto& op : c.ops())
            os << ' ' << op;
        throw usage_error(os.str());
    }
    if (p.algo != "auto") {
        if (const algorithm_entry* e = c.find(p.op, p.algo)) return *e;
        throw usage_error("unknown algorithm '" + p.algo + "' for " + p.op +
                          "; algorithms: " + join_algorithms(c, p.op) + ", auto");
    }
    if (const algorithm_entry* e = c.choose(p)) return *e;
    throw usage_error("no algorithm for " + p.op + " fits these parameters (" +
                      std::string(to_string(p.ports)) + ", dim " + std::to_string(p.dim) +
                      "): " + c.unfit_reasons(p));
}

// Runs whose data (estimated_data) stays within this many elements also run
// run_ordered: 16 MiB of matrices, well within what the run itself needed.
constexpr double ordered_check_elements = 1 << 20;
// run_ordered runs on at most this many dimensions: node order is the
// algorithm's structure, which a 4096-node run shows as well as a larger one,
// and a second run as large as the first would double the command's time.
constexpr int ordered_check_dim = 12;

run_params ordered_check_params(const algorithm_entry& e, const run_params& p, int ranks) {
    run_params q = p;
    q.dim = std::min(p.dim, ordered_check_dim);
    q.root = p.root & ((1 << q.dim) - 1);
    if (q.dim == p.dim || (1 << q.dim) < ranks || !e.unfit(q).empty()) return p;
    return q;
}

std::string ordered_mismatch(const algorithm_entry& e, const run_params& p, machine& m) {
    if (!e.run_ordered) return {};
    const run_params q = ordered_check_params(e, p, m.ranks());
    if (estimated_data(e, q).elements > ordered_check_elements) return {};
    if (q.dim == p.dim) return e.run_ordered(m, p);
    machine small(machine_config(q)); // every rank builds it: a collective
    return e.run_ordered(small, q);
}

run_outcome run_algorithm(run_params p) {
    check_dim(p);
    const algorithm_entry* e = &resolve_algorithm(p);
    p.algo = e->algo;
    for (const auto& [name, value] : p.options) {
        const auto spec = std::find_if(e->options.begin(), e->options.end(),
                                       [&](const option_spec& o) { return o.name == name; });
        if (spec == e->options.end())
            throw usage_error(p.op + " " + p.algo + " takes no option --" + name);
        if (std::find(spec->values.begin(), spec->values.end(), value) == spec->values.end()) {
            std::string allowed;
            for (const auto& v : spec->values)
                allowed += (allowed.empty() ? "" : "|") + v;
            throw usage_error("--" + name + " " + value + " is not one of " + allowed);
        }
    }
    for (const auto& o : e->options)
        p.options.try_emplace(o.name, o.fallback);
    if (const std::string why = e->unfit(p); !why.empty())
        throw usage_error(p.op + " " + p.algo + ": " + why);
    std::string counted;
    const double need = estimated_bytes(*e, p, &counted);
    check_memory(p.op + " " + p.algo + " with m = " + std::to_string(p.words) + " on " +
                     std::to_string(1LL << p.dim) + " nodes",
                 need, counted);
    if (const double t = e->formula_time(p); !std::isfinite(t))
        throw usage_error("t_s = " + number(p.cost.t_s) + ", t_w = " + number(p.cost.t_w) +
                          " make the formula time of " + p.op + " " + p.algo + " " + number(t) +
                          " (beyond " + number(std::numeric_limits<double>::max()) +
                          "); choose a larger time unit so that t_s and t_w are smaller");
    config c = machine_config(p);
    c.digest = true; // the report's fingerprint covers what every node received
    machine m(c);
    run_outcome o = e->run(m, p);
    // Every rank runs it (a collective), whatever its own verdict was.
    if (const std::string mismatch = ordered_mismatch(*e, p, m); !mismatch.empty() && o.verified) {
        o.verified = false;
        o.note = "with the 2x2 matrix product, which does not commute: " + mismatch;
    }
    if (!executor_policy_of(m.cfg().executor).thread_per_node) o.workers = m.cfg().workers;
    o.rank = m.rank();
    const bool everywhere = m.on_every_rank(o.verified); // over MPI each rank checked its nodes
    if (o.verified && !everywhere)
        o.note = "the results of another rank's nodes differ from the serial reference";
    o.verified = everywhere;
    return o;
}

} // namespace hcube
