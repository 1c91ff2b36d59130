// Checking a configuration and resolving its `automatic` choices
// (configure.hpp).
#include "configure.hpp"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include <hcube/error.hpp>

#include "backend.hpp"

namespace hcube {

using namespace detail;

void detail::validate(const config& c) {
    if (const int top = max_dim_of(c.executor); c.dim < 0 || c.dim > top)
        throw usage_error("machine: dimension " + std::to_string(c.dim) + " is outside 0.." +
                          std::to_string(top) + " with " + std::string(to_string(c.executor)) +
                          (top < max_dim ? " (" + std::string(widest_executor().name) + " go to " +
                                               std::to_string(max_dim) + ")"
                                         : ""));
    const auto bad = [](double x) { return !(x >= 0) || std::isinf(x); };
    if (bad(c.cost.t_s) || bad(c.cost.t_w))
        throw usage_error("machine: cost model t_s = " + std::to_string(c.cost.t_s) +
                          ", t_w = " + std::to_string(c.cost.t_w) + " must be finite and >= 0");
    if (c.link_capacity > max_link_capacity)
        throw usage_error("machine: link_capacity " + std::to_string(c.link_capacity) +
                          " is above the maximum " + std::to_string(max_link_capacity) +
                          " messages");
    if (c.workers < 0 || c.workers > max_workers)
        throw usage_error("machine: workers " + std::to_string(c.workers) + " is outside 0.." +
                          std::to_string(max_workers) + " (0: one per usable CPU)");
    if (c.stack_bytes < min_stack_bytes || c.stack_bytes > max_stack_bytes)
        throw usage_error("machine: stack_bytes " + std::to_string(c.stack_bytes) + " is outside " +
                          std::to_string(min_stack_bytes) + ".." + std::to_string(max_stack_bytes));
}

namespace {

// A config enum's `automatic` resolved: the value the environment variable
// `var` names (`parse`), or `fallback` when it is unset or empty.
template <class E, class Parse>
E from_environment(E asked, const char* var, E fallback, Parse parse, const char* what,
                   const std::string& choices) {
    if (asked != E::automatic) return asked;
    const char* env = std::getenv(var);
    if (!env || !*env) return fallback;
    if (const std::optional<E> e = parse(env)) return *e;
    throw usage_error("machine: " + std::string(var) + "=" + env + " names no " + what + "; use " +
                      choices + " (or unset it: " + std::string(to_string(fallback)) + ")");
}

const auto by_name = [](const auto& row) { return row.name; };

// "a, b or c": the names of a table's rows.
template <class Rows, class Name>
std::string names_of(const Rows& rows, Name name) {
    std::string out;
    const std::size_t n = std::size(rows);
    for (std::size_t i = 0; i < n; ++i)
        out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(name(rows[i]));
    return out;
}

// The parse for from_environment: the kind of the row whose name is v.
template <class Rows, class Name>
auto named_among(const Rows& rows, Name name) {
    return [&rows, name](std::string_view v) {
        for (const auto& row : rows)
            if (v == name(row)) return std::optional{row.kind};
        return std::optional<decltype(rows[0].kind)>{};
    };
}

} // namespace

executor_kind resolve_executor(executor_kind e) {
    return from_environment(e, "HCUBE_EXECUTOR", executor_policies[0].kind, parse_executor,
                            "executor", names_of(executor_policies, by_name));
}

backend_kind detail::resolve_backend(backend_kind b) {
    return from_environment(b, "HCUBE_BACKEND", backend_rows.front().kind,
                            named_among(backend_rows, by_name), "backend",
                            names_of(backend_rows, by_name));
}

link_impl detail::resolve_links(link_impl l) {
    return from_environment(l, "HCUBE_LINKS", link_policies[0].impl, parse_link_impl,
                            "link implementation", names_of(link_policies, by_name));
}

} // namespace hcube
