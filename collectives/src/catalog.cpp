#include <hcube/catalog.hpp>

#include <algorithm>
#include <limits>
#include <sstream>

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

const algorithm_entry* catalog::choose(const run_params& p) const {
    const algorithm_entry* best = nullptr;
    double best_time = std::numeric_limits<double>::infinity();
    for (const auto* e : algorithms(p.op)) {
        run_params q = p;
        q.algo = e->algo;
        for (const auto& o : e->options)
            q.options.try_emplace(o.name, o.fallback);
        if (!e->unfit(q).empty()) continue;
        const double t = e->formula_time(q);
        if (t < best_time) best = e, best_time = t;
    }
    return best;
}

const catalog& builtin_catalog() {
    static const catalog c = [] {
        catalog c;
        detail::register_rooted(c);
        detail::register_reductions(c);
        detail::register_personalized(c);
        detail::register_cm200(c);
        detail::register_aspc(c);
        return c;
    }();
    return c;
}

config machine_config(const run_params& p) {
    config c;
    c.dim = p.dim;
    c.ports = p.ports;
    c.cost = p.cost;
    return c;
}

namespace {

std::string join_algorithms(const catalog& c, std::string_view op) {
    std::ostringstream os;
    for (const auto* e : c.algorithms(op))
        os << (os.tellp() > 0 ? ", " : "") << e->algo;
    return os.str();
}

} // namespace

run_outcome run_algorithm(run_params p) {
    const catalog& c = builtin_catalog();
    if (c.algorithms(p.op).empty()) {
        std::ostringstream os;
        os << "unknown operation '" << p.op << "'; operations:";
        for (const auto& op : c.ops())
            os << ' ' << op;
        throw usage_error(os.str());
    }
    if (p.dim < 0 || p.dim > max_dim)
        throw usage_error("dimension " + std::to_string(p.dim) + " is outside 0.." +
                          std::to_string(max_dim));
    const algorithm_entry* e = p.algo == "auto" ? c.choose(p) : c.find(p.op, p.algo);
    if (!e) {
        if (p.algo == "auto")
            throw usage_error("no algorithm for " + p.op + " fits these parameters (" +
                              std::string(to_string(p.ports)) + ", dim " + std::to_string(p.dim) +
                              ")");
        throw usage_error("unknown algorithm '" + p.algo + "' for " + p.op +
                          "; algorithms: " + join_algorithms(c, p.op) + ", auto");
    }
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
    machine m(machine_config(p));
    return e->run(m, p);
}

} // namespace hcube
