// Catalog entries of the rooted collectives of seed 000: one-to-all broadcast,
// all-to-one reduction (4.1, 4.7.1), scatter and gather (4.4).
#include <hcube/catalog.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/cost/rooted.hpp>
#include <hcube/driver/dispatch.hpp>

namespace hcube::detail {

namespace {

// The rooted runs, one overload per algorithm type: run_rooted<T>(machine,
// params, formula time, algorithm).
template <class T>
run_outcome run_rooted(machine& mc, const run_params& p, double formula, broadcast_algo a) {
    const std::vector<T> want = input_vector<T>(p.root, p.words);
    return run_verified<T>(
        mc, formula, [&](int i) { return input_vector<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) { broadcast(me, std::span(v), p.root, a); },
        [&](int) { return std::optional(want); });
}

template <class T>
run_outcome run_rooted(machine& mc, const run_params& p, double formula, reduce_algo a) {
    std::vector<T> want(p.words, T(0));
    for (int i = 0; i < mc.size(); ++i)
        for (std::size_t j = 0; j < p.words; ++j)
            want[j] += input_value<T>(i, j);
    return run_verified<T>(
        mc, formula, [&](int i) { return input_vector<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) { reduce(me, std::span(v), p.root, std::plus<>{}, a); },
        [&](int i) { return i == p.root ? std::optional(want) : std::nullopt; });
}

// The concatenation of every node's input block: scatter's source, gather's result.
template <class T>
std::vector<T> all_blocks(int nodes, std::size_t m) {
    std::vector<T> all;
    all.reserve(std::size_t(nodes) * m);
    for (int i = 0; i < nodes; ++i)
        for (std::size_t j = 0; j < m; ++j)
            all.push_back(input_value<T>(i, j));
    return all;
}

template <class T>
run_outcome run_scatter(machine& mc, const run_params& p, double formula) {
    const std::size_t m = p.words;
    const std::vector<T> all = all_blocks<T>(mc.size(), m);
    return run_verified<T>(
        mc, formula, [&](int i) { return i == p.root ? all : std::vector<T>{}; },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> mine(m);
            scatter(me, std::span<const T>(v), std::span(mine), p.root, scatter_algo::binomial);
            v = std::move(mine);
        },
        [&](int i) {
            const auto first = all.begin() + std::ptrdiff_t(std::size_t(i) * m);
            return std::optional(std::vector<T>(first, first + std::ptrdiff_t(m)));
        });
}

template <class T>
run_outcome run_gather(machine& mc, const run_params& p, double formula) {
    const std::vector<T> all = all_blocks<T>(mc.size(), p.words);
    return run_verified<T>(
        mc, formula, [&](int i) { return input_vector<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(me.id() == p.root ? all.size() : 0);
            gather(me, std::span<const T>(v), std::span(out), p.root, gather_algo::binomial);
            v = std::move(out);
        },
        [&](int i) { return i == p.root ? std::optional(all) : std::nullopt; });
}

std::string root_unfit(const run_params& p) {
    const int nodes = 1 << p.dim;
    if (p.root < 0 || p.root >= nodes)
        return "root " + std::to_string(p.root) + " is outside 0.." + std::to_string(nodes - 1);
    return {};
}

// An entry that refuses a root outside 0..p-1 (typed_entry).
template <class Runner>
algorithm_entry entry(std::string op, std::string algo, std::string source, std::string formula,
                      std::function<double(const run_params&)> formula_time, Runner runner,
                      std::function<std::optional<exact_form>(const run_params&)> exact = {}) {
    algorithm_entry e =
        typed_entry(std::move(op), std::move(algo), std::move(source), std::move(formula),
                    std::move(formula_time), root_unfit, runner);
    e.exact = std::move(exact);
    return e;
}

template <auto A>
constexpr auto rooted_runner =
    []<class T>(machine& mc, const run_params& p, double f) { return run_rooted<T>(mc, p, f, A); };

double binomial_time(const run_params& p) {
    return cost::binomial_rooted(p.dim, double(p.words), p.cost.t_s, p.cost.t_w);
}
double split_broadcast_time(const run_params& p) {
    return cost::broadcast_scatter_allgather(p.dim, p.words, p.root, p.cost.t_s, p.cost.t_w);
}
double split_reduce_time(const run_params& p) {
    return cost::reduce_reduce_scatter_gather(p.dim, p.words, p.root, p.cost.t_s, p.cost.t_w);
}
// Eq. 4.13 is exact when p divides m; otherwise every chain that ends the
// broadcast has 2 log p messages and split_rooted's W words.
std::optional<exact_form> split_broadcast_form(const run_params& p) {
    return uneven_blocks_form(
        p, std::size_t(2 * p.dim),
        std::size_t(cost::broadcast_scatter_allgather(p.dim, p.words, p.root, 0, 1)));
}
// The reduction's critical chain depends on t_s : t_w (see rooted.hpp).
std::optional<exact_form> split_reduce_form(const run_params& p) {
    const cost::message_chain c =
        cost::reduce_reduce_scatter_gather_chain(p.dim, p.words, p.root, p.cost.t_s, p.cost.t_w);
    return uneven_blocks_form(p, c.messages, c.words);
}
double scatter_time(const run_params& p) {
    return cost::scatter_binomial(p.dim, double(p.words), p.cost.t_s, p.cost.t_w);
}

} // namespace

void register_rooted(catalog& c) {
    c.add(entry("broadcast", "binomial", "seed 000, Alg. 4.1/4.2, Eq. 4.1", "(t_s + t_w m) log p",
                binomial_time, rooted_runner<broadcast_algo::binomial>));
    c.add(entry("broadcast", "scatter-allgather", "seed 000, 4.7.1, Eq. 4.13",
                "2 (t_s log p + t_w (p-1) m/p) if p | m", split_broadcast_time,
                rooted_runner<broadcast_algo::scatter_allgather>, split_broadcast_form));
    c.add(entry("reduce", "binomial", "seed 000, Alg. 4.3, Eq. 4.1", "(t_s + t_w m) log p",
                binomial_time, rooted_runner<reduce_algo::binomial>));
    c.add(entry("reduce", "reduce-scatter-gather", "seed 000, 4.7.1, Problem 4.17, Eq. 4.13",
                "2 (t_s log p + t_w (p-1) m/p) if p | m", split_reduce_time,
                rooted_runner<reduce_algo::reduce_scatter_gather>, split_reduce_form));
    c.add(entry("scatter", "binomial", "seed 000, 4.4, Eq. 4.6", "t_s log p + t_w m (p-1)",
                scatter_time, []<class T>(machine& mc, const run_params& p, double f) {
                    return run_scatter<T>(mc, p, f);
                }));
    c.add(entry("gather", "binomial", "seed 000, 4.4, Eq. 4.6", "t_s log p + t_w m (p-1)",
                scatter_time, []<class T>(machine& mc, const run_params& p, double f) {
                    return run_gather<T>(mc, p, f);
                }));
}

} // namespace hcube::detail
