// One record per algorithm: its name, source section, formula text, cost
// function and requirements, declared beside the algorithm (allgather.hpp's
// allgather_records, ...). The C++ `automatic` choice and the catalog's `auto`
// both call cheapest() on the same table, so they pick the same algorithm, and
// each precondition is written once (requirements, unfit).
//
// Adding an algorithm: docs/extending.md.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <hcube/config.hpp>
#include <hcube/error.hpp>

namespace hcube {

// What an algorithm's cost and fit depend on: the machine and the call.
struct call_shape {
    int dim = 0;
    port_model ports = port_model::single_port;
    double t_s = 1, t_w = 0;
    // The textbook's m for the operation, in words (cost_model::words): the
    // whole message, a node's contribution, a block or a packet, as the
    // operation's header says.
    double words = 0;
    int root = 0;            // rooted operations
    long long shift = 0;     // circular shift: q
    bool gray_ring = false;  // circular shift: the Gray-code embedded array
    bool commutative = true; // the reduction operator (is_commutative)
    constexpr const port_policy& policy() const noexcept { return port_policy_of(ports); }
    constexpr std::size_t nodes() const noexcept { return std::size_t(1) << dim; }
    friend bool operator==(const call_shape&, const call_shape&) = default;
};

// An algorithm's preconditions. Each has one text (unfit), which the catalog
// shows and the C++ automatic choice skips on.
struct requirements {
    // Exactly this port model (Hu's ASPC has one algorithm per model).
    std::optional<port_model> only_ports{};
    // From this dimension on, a port model that uses several links at once
    // (port_policy::several_links_at_once); -1: any model.
    int several_links_from = -1;
    int min_dim = 0;
    bool even_dim = false;          // a sqrt(p) x sqrt(p) mesh
    bool pow2_words_from_p = false; // m a power of two and at least p
    bool root_in_range = false;     // 0 <= root < p
    bool gray_ring = false;         // moves along the Gray-code embedded array
    bool commutative_op = false;    // combines partials of ids that are not consecutive
};

struct algorithm_record {
    std::string_view op;      // the catalog's operation, e.g. "allgather"
    std::string_view name;    // e.g. "hypercube"
    int value;                // the enumerator of the operation's algorithm enum
    std::string_view source;  // e.g. "Grama et al. Alg. 4.7, Eq. 4.4"
    std::string_view formula; // e.g. "t_s log p + t_w m (p-1)"
    // The time `automatic` compares: the source's closed form, or for
    // reduce-scatter-gather an O(log p) upper bound exact when p divides m.
    double (*cost)(const call_shape&);
    requirements needs{};

    template <class Enum>
    constexpr Enum as() const noexcept {
        return Enum(value);
    }
};

// The catalog name of enumerator `a` in `table` ("?" if it has none).
constexpr std::string_view name_of(std::span<const algorithm_record> table, int a) noexcept {
    for (const algorithm_record& r : table)
        if (r.value == a) return r.name;
    return "?";
}

// The enumerator whose record in `table` is named `name`.
template <class Enum>
constexpr std::optional<Enum> parse_name(std::span<const algorithm_record> table,
                                         std::string_view name) noexcept {
    for (const algorithm_record& r : table)
        if (r.name == name) return r.as<Enum>();
    return std::nullopt;
}

// The record of enumerator `a` in `table`.
template <class Enum>
const algorithm_record& record_of(std::span<const algorithm_record> table, Enum a) {
    for (const algorithm_record& r : table)
        if (r.value == int(a)) return r;
    throw usage_error("no record for algorithm " + std::to_string(int(a)) + " of " +
                      std::string(table.front().op));
}

// The first requirement of `needs` that `s` misses: returns `fits` when none
// is, else unmet(text), where text() builds the reason naming the values. Each
// condition is written once, and a fit test (cheapest, on every automatic
// call) builds no text: it was a tenth of a back-to-back p = 64 allreduce.
template <class R, class Unmet>
R first_unmet(const requirements& needs, std::string_view name, const call_shape& s, R fits,
              Unmet unmet) {
    const auto d = [&] { return std::to_string(s.dim); };
    if (s.dim < needs.min_dim)
        return unmet([&] {
            return "needs dimension >= " + std::to_string(needs.min_dim) + " (this run has " + d() +
                   ")";
        });
    if (needs.only_ports && s.ports != *needs.only_ports)
        return unmet([&] {
            return "needs the " + std::string(to_string(*needs.only_ports)) +
                   " model (this run is " + std::string(to_string(s.ports)) + ")";
        });
    if (needs.several_links_from >= 0 && s.dim >= needs.several_links_from &&
        !s.policy().several_links_at_once())
        return unmet([&] {
            const port_policy* wide = &port_policies[0]; // the first model that fits
            for (const port_policy& p : port_policies)
                if (p.several_links_at_once() && !wide->several_links_at_once()) wide = &p;
            return std::string(name) + " exchanges on all " + d() +
                   " links at once; run with --ports " + std::string(wide->option) + " (" +
                   std::string(wide->name) + " model)";
        });
    if (needs.even_dim && s.dim % 2 != 0)
        return unmet([&] {
            return "needs an even dimension (a sqrt(p) x sqrt(p) mesh); dimension " + d() +
                   " is odd";
        });
    if (needs.pow2_words_from_p) {
        const auto m = std::size_t(s.words);
        if (!std::has_single_bit(m))
            return unmet(
                [&] { return "--words M = " + std::to_string(m) + " is not a power of two"; });
        if (m < s.nodes())
            return unmet([&] {
                return "--words M = " + std::to_string(m) +
                       " is smaller than N = " + std::to_string(s.nodes());
            });
    }
    if (needs.root_in_range && (s.root < 0 || std::size_t(s.root) >= s.nodes()))
        return unmet([&] {
            return "root " + std::to_string(s.root) + " is outside 0.." +
                   std::to_string(s.nodes() - 1);
        });
    if (needs.gray_ring && !s.gray_ring)
        return unmet([] {
            return std::string(
                "moves along the Gray-code embedded array (position r on node gray(r)), so it "
                "needs --ring gray; --ring id (node i -> i + q) needs --algo ecube");
        });
    if (needs.commutative_op && !s.commutative)
        return unmet([] {
            return std::string(
                "combines partials of ids that are not consecutive, so it needs an operator "
                "that commutes (specialize hcube::is_commutative)");
        });
    return fits;
}

// Why `needs` does not hold for `s` ("" when it does), naming the values.
inline std::string unfit(const requirements& needs, std::string_view name, const call_shape& s) {
    return first_unmet(needs, name, s, std::string(), [](auto text) { return text(); });
}

inline std::string unfit(const algorithm_record& r, const call_shape& s) {
    return unfit(r.needs, r.name, s);
}

// The fitting record with the smallest cost, the first on a tie (Table 4.1
// takes the minimum of its expressions the same way); nullptr when none fits.
// Costs are compared with t_s and t_w scaled by one power of two: every
// formula is a sum (or maximum) of k t_s + W t_w, so the order and the ties
// stay exact, and t_s = 1e308 stays finite.
inline const algorithm_record* cheapest(std::span<const algorithm_record> records, call_shape s) {
    if (const double top = std::max(s.t_s, s.t_w); top > 0 && std::isfinite(top)) {
        const int e = std::ilogb(top);
        s.t_s = std::ldexp(s.t_s, -e);
        s.t_w = std::ldexp(s.t_w, -e);
    }
    const algorithm_record* best = nullptr;
    double best_time = 0;
    for (const algorithm_record& r : records) {
        if (!first_unmet(r.needs, r.name, s, true, [](auto) { return false; })) continue;
        const double t = r.cost(s);
        if (!best || t < best_time) best = &r, best_time = t;
    }
    return best;
}

// The enumerator of the cheapest fitting record of `records` for `s`; a
// usage_error listing every record's reason when none fits. A loop of one
// collective asks the same question at every call, and answering it (integer
// divisions in the records' costs) was 7% of a back-to-back p = 64 allreduce
// with fibers: each OS thread keeps its last answer per operation.
template <class Enum>
Enum choose_algorithm(std::span<const algorithm_record> records, const call_shape& s) {
    thread_local struct {
        const algorithm_record* table = nullptr;
        call_shape shape;
        Enum pick{};
    } last;
    if (last.table == records.data() && last.shape == s) return last.pick;
    if (const algorithm_record* r = cheapest(records, s)) {
        last = {records.data(), s, r->as<Enum>()};
        return last.pick;
    }
    std::string why;
    for (const algorithm_record& r : records)
        why += (why.empty() ? "" : "; ") + std::string(r.name) + ": " + unfit(r, s);
    throw usage_error("no " + std::string(records.front().op) + " algorithm fits (" + why + ")");
}

// The cost of a Grama et al. closed form f(d, m, t_s, t_w).
template <double (*F)(int, double, double, double)>
constexpr double cost_of(const call_shape& s) {
    return F(s.dim, s.words, s.t_s, s.t_w);
}

// A node's call shape: its machine's dimension, ports and costs, and m in
// words for n elements of elem_size bytes.
template <class Node>
call_shape shape_of(const Node& me, std::size_t n, std::size_t elem_size) {
    const auto& c = me.cfg();
    call_shape s;
    s.dim = me.dim();
    s.ports = c.ports;
    s.t_s = c.cost.t_s;
    s.t_w = c.cost.t_w;
    s.words = c.cost.words(n * elem_size, elem_size);
    return s;
}

} // namespace hcube
