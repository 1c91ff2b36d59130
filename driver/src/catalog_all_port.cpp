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

// The record's entry (entry_of) with the runner
// runner.template operator()<T>(machine, params, formula time). The trees
// send only from parents to children and the exchange uses exchange_all, so
// they also complete over unbuffered links (measured with link_capacity 0).
template <class Runner>
algorithm_entry entry(const algorithm_record& r, Runner runner) {
    algorithm_entry e = entry_of(r);
    e.run = [&r, runner](machine& mc, const run_params& p) {
        const double time = r.cost(shape_of(p));
        return with_elem_type(
            p.type, [&]<class T>() { return runner.template operator()<T>(mc, p, time); });
    };
    return e;
}

template <broadcast_algo A>
constexpr auto broadcast_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const inputs<T> in(p.words);
    const std::vector<T> want = in.block(std::uint64_t(p.root));
    return run_verified<T>(
        mc, f, [&](int i) { return in.block(std::uint64_t(i)); },
        [&](node& me, std::vector<T>& v) { broadcast(me, std::span(v), p.root, A); },
        [&](int) { return std::optional(want); });
};

template <reduce_algo A>
constexpr auto reduce_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const inputs<T> in(p.words, std::uint64_t(mc.size()));
    const std::vector<T> want = in.fold(0, mc.size(), 0, p.words);
    return run_verified<T>(
        mc, f, [&](int i) { return in.block(std::uint64_t(i)); },
        [&](node& me, std::vector<T>& v) {
            reduce(me, std::span(v), p.root, reduction_op<T>{}, A);
        },
        [&](int i) { return i == p.root ? std::optional(want) : std::nullopt; });
};

constexpr auto scatter_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::size_t m = p.words;
    const inputs<T> in(m);
    const std::vector<T> all = in.blocks(std::uint64_t(mc.size()));
    return run_verified<T>(
        mc, f, [&](int i) { return i == p.root ? all : std::vector<T>{}; },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> mine(m);
            scatter(me, std::span<const T>(v), std::span(mine), p.root,
                    scatter_algo::rotated_trees);
            v = std::move(mine);
        },
        [&](int i) { return std::optional(in.block(std::uint64_t(i))); });
};

constexpr auto gather_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const inputs<T> in(p.words);
    const std::vector<T> all = in.blocks(std::uint64_t(mc.size()));
    return run_verified<T>(
        mc, f, [&](int i) { return in.block(std::uint64_t(i)); },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(me.id() == p.root ? all.size() : 0);
            gather(me, std::span<const T>(v), std::span(out), p.root, gather_algo::rotated_trees);
            v = std::move(out);
        },
        [&](int i) { return i == p.root ? std::optional(all) : std::nullopt; });
};

// Node i sends block i * p + j of the run's inputs to node j.
constexpr auto alltoall_runner = []<class T>(machine& mc, const run_params& p, double f) {
    const std::size_t n = std::size_t(mc.size()), m = p.words;
    const auto element = [n, in = inputs<T>(m)](std::size_t from, std::size_t to, std::size_t k) {
        return in(from * n + to, k);
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
    const inputs<T> in(p.words, std::uint64_t(mc.size()));
    const std::vector<T> want = in.fold(0, mc.size(), 0, p.words);
    return run_verified<T>(
        mc, f, [&](int i) { return in.block(std::uint64_t(i)); },
        [&](node& me, std::vector<T>& v) {
            allreduce(me, std::span(v), reduction_op<T>{}, allreduce_algo::d_cycles);
        },
        [&](int) { return std::optional(want); });
};

} // namespace

void register_all_port(catalog& c) {
    using enum broadcast_algo;
    c.add(entry(record_of(broadcast_records, rotated_trees), broadcast_runner<rotated_trees>));
    c.add(entry(record_of(broadcast_records, edge_disjoint_trees),
                broadcast_runner<edge_disjoint_trees>));
    c.add(ordered(entry(record_of(reduce_records, reduce_algo::rotated_trees),
                        reduce_runner<reduce_algo::rotated_trees>),
                  reduce_runner<reduce_algo::rotated_trees>));
    c.add(ordered(entry(record_of(reduce_records, reduce_algo::edge_disjoint_trees),
                        reduce_runner<reduce_algo::edge_disjoint_trees>),
                  reduce_runner<reduce_algo::edge_disjoint_trees>));
    c.add(entry(record_of(scatter_records, scatter_algo::rotated_trees), scatter_runner));
    c.add(entry(record_of(gather_records, gather_algo::rotated_trees), gather_runner));
    c.add(entry(record_of(alltoall_records, alltoall_algo::all_port), alltoall_runner));
    // A block on each of the d cycles for each of the p nodes: p d words drawn.
    algorithm_entry d_cycles =
        ordered(entry(record_of(allreduce_records, allreduce_algo::d_cycles), allreduce_runner),
                allreduce_runner);
    d_cycles.drawn_words = [](int dim) { return std::size_t(std::max(1, dim)) << dim; };
    c.add(std::move(d_cycles));
}

} // namespace hcube::detail
