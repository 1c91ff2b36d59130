// Catalog entries of seed 000's all-to-all collectives: all-to-all broadcast
// (allgather) and reduction (reduce-scatter), all-reduce and prefix sums (4.2,
// 4.3, 4.7.1). Reductions use plus, so every result has a serial reference.
#include <hcube/catalog.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/detail/dispatch.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scan.hpp>
#include <hcube/cost/all_to_all.hpp>

namespace hcube::detail {

namespace {

template <class T>
std::vector<T> input_of(int node, std::size_t n) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = input_value<T>(node, i);
    return v;
}

// Runs `body` on every node's vector, which starts as input_of(node, n_in) and
// holds the node's result afterwards, then compares node i's result with
// want(i) (nullopt: unspecified) outside the timed run.
template <class T>
run_outcome run_checked(machine& mc, double formula_time, std::size_t n_in,
                        const std::function<void(node&, std::vector<T>&)>& body,
                        const std::function<std::optional<std::vector<T>>(int)>& want) {
    std::vector<std::vector<T>> data(std::size_t(mc.size()));
    for (int i = 0; i < mc.size(); ++i)
        data[std::size_t(i)] = input_of<T>(i, n_in);
    run_report report = mc.run([&](node& me) { body(me, data[std::size_t(me.id())]); });
    std::string mismatch;
    for (int i = 0; i < mc.size() && mismatch.empty(); ++i)
        if (const auto w = want(i)) mismatch = first_mismatch<T>(i, data[std::size_t(i)], *w);
    return make_outcome(std::move(report), formula_time, std::move(mismatch));
}

// Sum over nodes first .. last - 1 of element `offset + j` of their inputs,
// j = 0 .. n - 1: the serial reference of every reduction below.
template <class T>
std::vector<T> sum_of(int first, int last, std::size_t offset, std::size_t n) {
    std::vector<T> s(n, T(0));
    for (int k = first; k < last; ++k)
        for (std::size_t j = 0; j < n; ++j)
            s[j] += input_value<T>(k, offset + j);
    return s;
}

template <class T>
run_outcome run_allgather(machine& mc, const run_params& p, double f, allgather_algo a) {
    const std::size_t m = p.words;
    std::vector<T> all;
    for (int k = 0; k < mc.size(); ++k) {
        const std::vector<T> b = input_of<T>(k, m);
        all.insert(all.end(), b.begin(), b.end());
    }
    return run_checked<T>(
        mc, f, m,
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(all.size());
            allgather(me, std::span<const T>(v), std::span<T>(out), a);
            v = std::move(out);
        },
        [&](int) { return std::optional(all); });
}

template <class T>
run_outcome run_reduce_scatter(machine& mc, const run_params& p, double f, reduce_scatter_algo a) {
    const std::size_t m = p.words;
    return run_checked<T>(
        mc, f, m * std::size_t(mc.size()),
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(m);
            reduce_scatter(me, std::span<const T>(v), std::span<T>(out), std::plus<>{}, a);
            v = std::move(out);
        },
        [&](int i) { return std::optional(sum_of<T>(0, mc.size(), std::size_t(i) * m, m)); });
}

template <class T>
run_outcome run_allreduce(machine& mc, const run_params& p, double f, allreduce_algo a) {
    const std::vector<T> want = sum_of<T>(0, mc.size(), 0, p.words);
    return run_checked<T>(
        mc, f, p.words,
        [&](node& me, std::vector<T>& v) { allreduce(me, std::span<T>(v), std::plus<>{}, a); },
        [&](int) { return std::optional(want); });
}

template <class T>
run_outcome run_scan(machine& mc, const run_params& p, double f, bool inclusive) {
    return run_checked<T>(
        mc, f, p.words,
        [&](node& me, std::vector<T>& v) {
            if (inclusive)
                inclusive_scan(me, std::span<T>(v), std::plus<>{});
            else
                exclusive_scan(me, std::span<T>(v), std::plus<>{});
        },
        [&](int i) -> std::optional<std::vector<T>> {
            if (!inclusive && i == 0) return std::nullopt; // the empty prefix: unspecified
            return sum_of<T>(0, inclusive ? i + 1 : i, 0, p.words);
        });
}

// An entry whose run() dispatches on the element type:
// runner.template operator()<T>(machine, params, formula time).
template <class Runner>
algorithm_entry entry(std::string op, std::string algo, std::string source, std::string formula,
                      double (*form)(int, double, double, double), Runner runner,
                      std::function<std::string(const run_params&)> unfit = {}) {
    algorithm_entry e;
    e.op = std::move(op);
    e.algo = std::move(algo);
    e.source = std::move(source);
    e.formula = std::move(formula);
    e.unfit = unfit ? std::move(unfit) : [](const run_params&) { return std::string(); };
    e.formula_time = [form](const run_params& p) {
        return form(p.dim, double(p.words), p.cost.t_s, p.cost.t_w);
    };
    e.run = [form, runner](machine& mc, const run_params& p) {
        const double f = form(p.dim, double(p.words), p.cost.t_s, p.cost.t_w);
        run_outcome o = with_elem_type(
            p.type, [&]<class T>() { return runner.template operator()<T>(mc, p, f); });
        if (p.ports == port_model::all_port && o.note.empty())
            o.note = "the formula assumes single-port";
        return o;
    };
    return e;
}

std::string mesh_unfit(const run_params& p) {
    if (p.dim % 2 == 0) return {};
    return "needs an even dimension (a sqrt(p) x sqrt(p) mesh); dimension " +
           std::to_string(p.dim) + " is odd";
}

template <allgather_algo A>
constexpr auto allgather_runner = []<class T>(machine& mc, const run_params& p, double f) {
    return run_allgather<T>(mc, p, f, A);
};
template <reduce_scatter_algo A>
constexpr auto reduce_scatter_runner = []<class T>(machine& mc, const run_params& p, double f) {
    return run_reduce_scatter<T>(mc, p, f, A);
};
template <allreduce_algo A>
constexpr auto allreduce_runner = []<class T>(machine& mc, const run_params& p, double f) {
    return run_allreduce<T>(mc, p, f, A);
};
template <bool Inclusive>
constexpr auto scan_runner = []<class T>(machine& mc, const run_params& p, double f) {
    return run_scan<T>(mc, p, f, Inclusive);
};

} // namespace

void register_reductions(catalog& c) {
    // words: each node's contribution.
    c.add(entry("allgather", "hypercube", "seed 000, Alg. 4.7, Eq. 4.4", "t_s log p + t_w m (p-1)",
                cost::allgather_hypercube, allgather_runner<allgather_algo::hypercube>));
    c.add(entry("allgather", "ring", "seed 000, Alg. 4.4 on the Gray-code ring (4.6.2), Eq. 4.2",
                "(t_s + t_w m)(p-1)", cost::allgather_ring,
                allgather_runner<allgather_algo::ring>));
    c.add(entry("allgather", "mesh",
                "seed 000, Alg. 4.6 on the Gray-code embedded mesh (4.6.2), Eq. 4.3",
                "2 t_s (sqrt p - 1) + t_w m (p-1)", cost::allgather_mesh,
                allgather_runner<allgather_algo::mesh>, mesh_unfit));
    // words: each node's result block.
    c.add(entry("reduce-scatter", "hypercube", "seed 000, Alg. 4.8 (ascending dimensions), Eq. 4.4",
                "t_s log p + t_w m (p-1)", cost::reduce_scatter_hypercube,
                reduce_scatter_runner<reduce_scatter_algo::hypercube>));
    c.add(entry("reduce-scatter", "ring",
                "seed 000, Alg. 4.5 on the Gray-code ring (4.6.2), Eq. 4.2", "(t_s + t_w m)(p-1)",
                cost::reduce_scatter_ring, reduce_scatter_runner<reduce_scatter_algo::ring>));
    // words: the whole message.
    c.add(entry("allreduce", "hypercube", "seed 000, 4.3, Eq. 4.5", "(t_s + t_w m) log p",
                cost::allreduce_hypercube, allreduce_runner<allreduce_algo::hypercube>));
    c.add(entry("allreduce", "reduce-scatter-allgather", "seed 000, 4.7.1, Eq. 4.14",
                "2 (t_s log p + t_w (p-1) m/p)", cost::allreduce_reduce_scatter_allgather,
                allreduce_runner<allreduce_algo::reduce_scatter_allgather>));
    c.add(entry("allreduce", "reduce-broadcast", "seed 000, Alg. 4.3 then Alg. 4.1 (4.3)",
                "2 (t_s + t_w m) log p", cost::allreduce_reduce_broadcast,
                allreduce_runner<allreduce_algo::reduce_broadcast>));
    c.add(entry("scan", "hypercube", "seed 000, Alg. 4.9", "(t_s + t_w m) log p",
                cost::scan_hypercube, scan_runner<true>));
    c.add(entry("exscan", "hypercube", "seed 000, Alg. 4.9 (exclusive)", "(t_s + t_w m) log p",
                cost::scan_hypercube, scan_runner<false>));
}

} // namespace hcube::detail
