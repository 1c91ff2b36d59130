// Catalog entries of the rooted collectives of Grama et al.: one-to-all broadcast,
// all-to-one reduction (4.1, 4.7.1), scatter and gather (4.4).
#include <hcube/driver/catalog.hpp>

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
    const inputs<T> in(p.words);
    const std::vector<T> want = in.block(std::uint64_t(p.root));
    return run_verified<T>(
        mc, formula, [&](int i) { return in.block(std::uint64_t(i)); },
        [&](node& me, std::vector<T>& v) { broadcast(me, std::span(v), p.root, a); },
        [&](int) { return std::optional(want); });
}

template <class T>
run_outcome run_rooted(machine& mc, const run_params& p, double formula, reduce_algo a) {
    const inputs<T> in(p.words, std::uint64_t(mc.size()));
    const std::vector<T> want = in.fold(0, mc.size(), 0, p.words);
    return run_verified<T>(
        mc, formula, [&](int i) { return in.block(std::uint64_t(i)); },
        [&](node& me, std::vector<T>& v) {
            reduce(me, std::span(v), p.root, reduction_op<T>{}, a);
        },
        [&](int i) { return i == p.root ? std::optional(want) : std::nullopt; });
}

template <class T>
run_outcome run_scatter(machine& mc, const run_params& p, double formula) {
    const std::size_t m = p.words;
    const std::vector<T> all = inputs<T>(m).blocks(std::uint64_t(mc.size()));
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
    const inputs<T> in(p.words);
    const std::vector<T> all = in.blocks(std::uint64_t(mc.size()));
    return run_verified<T>(
        mc, formula, [&](int i) { return in.block(std::uint64_t(i)); },
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(me.id() == p.root ? all.size() : 0);
            gather(me, std::span<const T>(v), std::span(out), p.root, gather_algo::binomial);
            v = std::move(out);
        },
        [&](int i) { return i == p.root ? std::optional(all) : std::nullopt; });
}

template <auto A>
constexpr auto rooted_runner =
    []<class T>(machine& mc, const run_params& p, double f) { return run_rooted<T>(mc, p, f, A); };

// The exact time of the splitting reduction (O(p log p); its record's cost
// is the O(log p) bound the C++ `automatic` compares).
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

// An entry with an exact form for uneven blocks.
algorithm_entry with_exact(algorithm_entry e,
                           std::optional<exact_form> (*exact)(const run_params&)) {
    e.exact = exact;
    return e;
}

// Each rooted call's work summed over its nodes (call_work, wall_time.cpp): the
// counts follow each algorithm's code in collectives/.
// Scatter or gather of m words (Eq. 4.6): p - 1 messages, m/2 words per level.
call_work scatter_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p - 1, 0, m * d / 2, 0};
}
call_work broadcast_binomial_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p - 1, 0, (p - 1) * m, 0};
}
// Scatter, then allgather of the p blocks (Alg. 4.7: log p messages a node).
call_work broadcast_split_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    const call_work s = scatter_work(r);
    return {s.messages + p * d, 0, s.words + (p - 1) * m, 0};
}
// Every received word is combined once.
call_work reduce_binomial_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p - 1, 0, (p - 1) * m, (p - 1) * m};
}
// Alg. 4.8 packs what leaves and combines what arrives, then a gather.
call_work reduce_split_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    const call_work s = scatter_work(r);
    return {p * d + s.messages, 0, (p - 1) * m + s.words, 2 * (p - 1) * m};
}

} // namespace

void register_rooted(catalog& c) {
    c.add(with_work(typed_entry(record_of(broadcast_records, broadcast_algo::binomial),
                                rooted_runner<broadcast_algo::binomial>),
                    broadcast_binomial_work));
    c.add(with_work(
        with_exact(typed_entry(record_of(broadcast_records, broadcast_algo::scatter_allgather),
                               rooted_runner<broadcast_algo::scatter_allgather>),
                   split_broadcast_form),
        broadcast_split_work));
    c.set_auto("broadcast", broadcast_records);
    c.add(with_work(ordered(typed_entry(record_of(reduce_records, reduce_algo::binomial),
                                        rooted_runner<reduce_algo::binomial>),
                            rooted_runner<reduce_algo::binomial>),
                    reduce_binomial_work));
    c.add(with_work(
        ordered(
            with_exact(typed_entry(record_of(reduce_records, reduce_algo::reduce_scatter_gather),
                                   rooted_runner<reduce_algo::reduce_scatter_gather>,
                                   split_reduce_time),
                       split_reduce_form),
            rooted_runner<reduce_algo::reduce_scatter_gather>),
        reduce_split_work));
    c.set_auto("reduce", reduce_records);
    c.add(typed_entry(scatter_records[0], []<class T>(machine& mc, const run_params& p, double f) {
        return run_scatter<T>(mc, p, f);
    }));
    c.set_auto("scatter", scatter_records);
    c.add(typed_entry(gather_records[0], []<class T>(machine& mc, const run_params& p, double f) {
        return run_gather<T>(mc, p, f);
    }));
    c.set_auto("gather", gather_records);
}

} // namespace hcube::detail
