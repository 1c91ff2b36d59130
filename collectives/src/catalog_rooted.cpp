// Catalog entries of the rooted collectives of seed 000: one-to-all broadcast,
// all-to-one reduction (4.1, 4.7.1), scatter and gather (4.4).
#include <hcube/catalog.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/detail/dispatch.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/cost/rooted.hpp>

namespace hcube::detail {

namespace {

// Runs `body` on every node with its vector from `input` (the body leaves the
// node's result in it), then compares each node's result with `expect(node)`
// (nullopt: that node's result is unspecified) outside the timed run.
template <class T>
run_outcome run_verified(machine& mc, double formula_time,
                         const std::function<std::vector<T>(int)>& input,
                         const std::function<void(node&, std::vector<T>&)>& body,
                         const std::function<std::optional<std::span<const T>>(int)>& expect) {
    std::vector<std::vector<T>> data(std::size_t(mc.size()));
    for (int i = 0; i < mc.size(); ++i)
        data[std::size_t(i)] = input(i);
    run_report report = mc.run([&](node& me) { body(me, data[std::size_t(me.id())]); });
    std::string mismatch;
    for (int i = 0; i < mc.size() && mismatch.empty(); ++i)
        if (const auto want = expect(i))
            mismatch = first_mismatch<T>(i, data[std::size_t(i)], *want);
    return make_outcome(std::move(report), formula_time, std::move(mismatch));
}

template <class T>
std::vector<T> input_of(int node, std::size_t n) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = input_value<T>(node, i);
    return v;
}

template <class T>
run_outcome run_broadcast(machine& mc, const run_params& p, double formula, broadcast_algo a) {
    const std::vector<T> want = input_of<T>(p.root, p.words);
    return run_verified<T>(
        mc, formula, [&](int i) { return input_of<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) { broadcast(me, std::span(v), p.root, a); },
        [&](int) { return std::optional(std::span<const T>(want)); });
}

template <class T>
run_outcome run_reduce(machine& mc, const run_params& p, double formula, reduce_algo a) {
    std::vector<T> want(p.words, T(0));
    for (int i = 0; i < mc.size(); ++i)
        for (std::size_t j = 0; j < p.words; ++j)
            want[j] += input_value<T>(i, j);
    return run_verified<T>(
        mc, formula, [&](int i) { return input_of<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) { reduce(me, std::span(v), p.root, std::plus<>{}, a); },
        [&](int i) {
            return i == p.root ? std::optional(std::span<const T>(want)) : std::nullopt;
        });
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
            scatter(me, std::span<const T>(v), std::span(mine), p.root);
            v = std::move(mine);
        },
        [&](int i) {
            return std::optional(std::span<const T>(all).subspan(std::size_t(i) * m, m));
        });
}

template <class T>
run_outcome run_gather(machine& mc, const run_params& p, double formula) {
    const std::vector<T> all = all_blocks<T>(mc.size(), p.words);
    return run_verified<T>(
        mc, formula, [&](int i) { return input_of<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(me.id() == p.root ? all.size() : 0);
            gather(me, std::span<const T>(v), std::span(out), p.root);
            v = std::move(out);
        },
        [&](int i) { return i == p.root ? std::optional(std::span<const T>(all)) : std::nullopt; });
}

std::string root_unfit(const run_params& p) {
    const int nodes = 1 << p.dim;
    if (p.root < 0 || p.root >= nodes)
        return "root " + std::to_string(p.root) + " is outside 0.." + std::to_string(nodes - 1);
    return {};
}

// An entry whose run() dispatches on the element type: runner.template
// operator()<T>(machine, params, formula time).
template <class Runner>
algorithm_entry entry(std::string op, std::string algo, std::string source, std::string formula,
                      std::function<double(const run_params&)> formula_time, Runner runner) {
    algorithm_entry e;
    e.op = std::move(op);
    e.algo = std::move(algo);
    e.source = std::move(source);
    e.formula = std::move(formula);
    e.unfit = root_unfit;
    e.formula_time = formula_time;
    e.run = [formula_time, runner](machine& mc, const run_params& p) {
        run_outcome o = with_elem_type(p.type, [&]<class T>() {
            return runner.template operator()<T>(mc, p, formula_time(p));
        });
        if (p.ports == port_model::all_port && o.note.empty())
            o.note = "the formula assumes single-port";
        return o;
    };
    return e;
}

double binomial_time(const run_params& p) {
    return cost::binomial_rooted(p.dim, double(p.words), p.cost.t_s, p.cost.t_w);
}
double split_broadcast_time(const run_params& p) {
    return cost::broadcast_scatter_allgather(p.dim, p.words, p.root, p.cost.t_s, p.cost.t_w);
}
double split_reduce_time(const run_params& p) {
    return cost::reduce_reduce_scatter_gather(p.dim, p.words, p.root, p.cost.t_s, p.cost.t_w);
}
double scatter_time(const run_params& p) {
    return cost::scatter_binomial(p.dim, double(p.words), p.cost.t_s, p.cost.t_w);
}

} // namespace

void register_rooted(catalog& c) {
    c.add(entry("broadcast", "binomial", "seed 000, Alg. 4.1/4.2, Eq. 4.1", "(t_s + t_w m) log p",
                binomial_time, []<class T>(machine& mc, const run_params& p, double f) {
                    return run_broadcast<T>(mc, p, f, broadcast_algo::binomial);
                }));
    c.add(entry("broadcast", "scatter-allgather", "seed 000, 4.7.1, Eq. 4.13",
                "2 (t_s log p + t_w (p-1) m/p) if p | m", split_broadcast_time,
                []<class T>(machine& mc, const run_params& p, double f) {
                    return run_broadcast<T>(mc, p, f, broadcast_algo::scatter_allgather);
                }));
    c.add(entry("reduce", "binomial", "seed 000, Alg. 4.3, Eq. 4.1", "(t_s + t_w m) log p",
                binomial_time, []<class T>(machine& mc, const run_params& p, double f) {
                    return run_reduce<T>(mc, p, f, reduce_algo::binomial);
                }));
    c.add(entry("reduce", "reduce-scatter-gather", "seed 000, 4.7.1, Problem 4.17, Eq. 4.13",
                "2 (t_s log p + t_w (p-1) m/p) if p | m", split_reduce_time,
                []<class T>(machine& mc, const run_params& p, double f) {
                    return run_reduce<T>(mc, p, f, reduce_algo::reduce_scatter_gather);
                }));
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
