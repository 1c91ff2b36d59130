// Catalog entries of the all-port chapter-4 algorithms (Grama et al. 4.7.2; their
// records and node programs beside their operations' in collectives/):
// broadcast and reduce over the d rotated or edge-disjoint spanning binomial
// trees, scatter and gather over the rotated trees, all-to-all personalized on
// all links, all-reduce along the d cycles.
// All-port only (single-port is unfit from d = 2 on), so `auto` weighs them
// only under --ports all; their formulas are all-port ones. Reductions use plus.
#include <hcube/driver/catalog.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/record.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/driver/dispatch.hpp>

namespace hcube::detail {

namespace {

// The entry of record `name` of `records` (name, source, formula, fit and
// formula time from the record) with the runner
// runner.template operator()<T>(machine, params, formula time). The trees
// send only from parents to children and the exchange uses exchange_all, so
// they also complete over unbuffered links (measured with link_capacity 0).
template <class Runner>
algorithm_entry entry(std::span<const algorithm_record> records, std::string_view name,
                      Runner runner) {
    const auto r = std::find_if(records.begin(), records.end(),
                                [&](const algorithm_record& x) { return x.name == name; });
    algorithm_entry e;
    e.op = std::string(r->op);
    e.algo = std::string(r->name);
    e.source = std::string(r->source);
    e.formula = std::string(r->formula);
    const algorithm_record* rec = &*r;
    e.unfit = [rec](const run_params& p) { return unfit(*rec, shape_of(p)); };
    e.formula_time = [rec](const run_params& p) { return rec->cost(shape_of(p)); };
    e.run = [rec, runner](machine& mc, const run_params& p) {
        const double time = rec->cost(shape_of(p));
        return with_elem_type(
            p.type, [&]<class T>() { return runner.template operator()<T>(mc, p, time); });
    };
    return e;
}

template <class T>
std::vector<T> blocks_of_all(int nodes, std::size_t m) {
    std::vector<T> all;
    for (int i = 0; i < nodes; ++i)
        for (std::size_t j = 0; j < m; ++j)
            all.push_back(input_value<T>(i, j));
    return all;
}

template <class T>
std::vector<T> sum_of_inputs(int nodes, std::size_t m) {
    std::vector<T> want(m, T(0));
    for (int i = 0; i < nodes; ++i)
        for (std::size_t j = 0; j < m; ++j)
            want[j] += input_value<T>(i, j);
    return want;
}

template <broadcast_algo A>
constexpr auto broadcast_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::vector<T> want = input_vector<T>(p.root, p.words);
    return run_verified<T>(
        mc, f, [&](int i) { return input_vector<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) { broadcast(me, std::span(v), p.root, A); },
        [&](int) { return std::optional(want); });
};

template <reduce_algo A>
constexpr auto reduce_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::vector<T> want = sum_of_inputs<T>(mc.size(), p.words);
    return run_verified<T>(
        mc, f, [&](int i) { return input_vector<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) { reduce(me, std::span(v), p.root, std::plus<>{}, A); },
        [&](int i) { return i == p.root ? std::optional(want) : std::nullopt; });
};

constexpr auto scatter_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::size_t m = p.words;
    const std::vector<T> all = blocks_of_all<T>(mc.size(), m);
    return run_verified<T>(
        mc, f, [&](int i) { return i == p.root ? all : std::vector<T>{}; },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> mine(m);
            scatter(me, std::span<const T>(v), std::span(mine), p.root,
                    scatter_algo::rotated_trees);
            v = std::move(mine);
        },
        [&](int i) { return std::optional(input_vector<T>(i, m)); });
};

constexpr auto gather_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::vector<T> all = blocks_of_all<T>(mc.size(), p.words);
    return run_verified<T>(
        mc, f, [&](int i) { return input_vector<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(me.id() == p.root ? all.size() : 0);
            gather(me, std::span<const T>(v), std::span(out), p.root, gather_algo::rotated_trees);
            v = std::move(out);
        },
        [&](int i) { return i == p.root ? std::optional(all) : std::nullopt; });
};

// Node i sends input_value(i * p + j, k) as element k of block j.
constexpr auto alltoall_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::size_t n = std::size_t(mc.size()), m = p.words;
    const auto element = [n](std::size_t from, std::size_t to, std::size_t k) {
        return input_value<T>(int(from * n + to), k);
    };
    return run_verified<T>(
        mc, f,
        [&](int i) {
            std::vector<T> in(n * m);
            for (std::size_t j = 0; j < n * m; ++j)
                in[j] = element(std::size_t(i), j / m, j % m);
            return in;
        },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(v.size());
            alltoall(me, std::span<const T>(v), std::span(out), alltoall_algo::all_port);
            v = std::move(out);
        },
        [&](int i) {
            std::vector<T> want(n * m);
            for (std::size_t j = 0; j < n * m; ++j)
                want[j] = element(j / m, std::size_t(i), j % m);
            return std::optional(want);
        });
};

constexpr auto allreduce_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::vector<T> want = sum_of_inputs<T>(mc.size(), p.words);
    return run_verified<T>(
        mc, f, [&](int i) { return input_vector<T>(i, p.words); },
        [&](node& me, std::vector<T>& v) {
            allreduce(me, std::span(v), std::plus<>{}, allreduce_algo::d_cycles);
        },
        [&](int) { return std::optional(want); });
};

} // namespace

void register_all_port(catalog& c) {
    using enum broadcast_algo;
    c.add(entry(broadcast_records, "rotated-trees", broadcast_runner<rotated_trees>));
    c.add(entry(broadcast_records, "edge-disjoint-trees", broadcast_runner<edge_disjoint_trees>));
    c.add(entry(reduce_records, "rotated-trees", reduce_runner<reduce_algo::rotated_trees>));
    c.add(entry(reduce_records, "edge-disjoint-trees",
                reduce_runner<reduce_algo::edge_disjoint_trees>));
    c.add(entry(scatter_records, "rotated-trees", scatter_runner));
    c.add(entry(gather_records, "rotated-trees", gather_runner));
    c.add(entry(alltoall_records, "all-port", alltoall_runner));
    c.add(entry(allreduce_records, "d-cycles", allreduce_runner));
}

} // namespace hcube::detail
