// Catalog entries of Grama et al.'s all-to-all collectives: all-to-all broadcast
// (allgather) and reduction (reduce-scatter), all-reduce and prefix sums (4.2,
// 4.3, 4.7.1). Reductions use plus, so every result has a serial reference.
#include <hcube/driver/catalog.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scan.hpp>
#include <hcube/cost/all_to_all.hpp>
#include <hcube/driver/dispatch.hpp>

namespace hcube::detail {

namespace {

// run_verified with node i's input in.block(i).
template <class T>
run_outcome run_checked(machine& mc, double formula_time, const inputs<T>& in,
                        const std::function<void(node&, std::vector<T>&)>& body,
                        const std::function<std::optional<std::vector<T>>(int)>& want) {
    return run_verified<T>(
        mc, formula_time, [&](int i) { return in.block(std::uint64_t(i)); }, body, want);
}

// The runs, one overload per algorithm type (bool: inclusive scan or not):
// run_algo<T>(machine, params, formula time, algorithm).
template <class T>
run_outcome run_algo(machine& mc, const run_params& p, double f, allgather_algo a) {
    const inputs<T> in(p.words);
    const std::vector<T> all = in.blocks(std::uint64_t(mc.size()));
    return run_checked<T>(
        mc, f, in,
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(all.size());
            allgather(me, std::span<const T>(v), std::span<T>(out), a);
            v = std::move(out);
        },
        [&](int) { return std::optional(all); });
}

template <class T>
run_outcome run_algo(machine& mc, const run_params& p, double f, reduce_scatter_algo a) {
    const std::size_t m = p.words;
    const inputs<T> in(m * std::size_t(mc.size()), std::uint64_t(mc.size()));
    return run_checked<T>(
        mc, f, in,
        [&](node& me, std::vector<T>& v) {
            std::vector<T> out(m);
            reduce_scatter(me, std::span<const T>(v), std::span<T>(out), reduction_op<T>{}, a);
            v = std::move(out);
        },
        [&](int i) { return std::optional(in.fold(0, mc.size(), std::size_t(i) * m, m)); });
}

template <class T>
run_outcome run_algo(machine& mc, const run_params& p, double f, allreduce_algo a) {
    const inputs<T> in(p.words, std::uint64_t(mc.size()));
    const std::vector<T> want = in.fold(0, mc.size(), 0, p.words);
    return run_checked<T>(
        mc, f, in,
        [&](node& me, std::vector<T>& v) { allreduce(me, std::span<T>(v), reduction_op<T>{}, a); },
        [&](int) { return std::optional(want); });
}

template <class T>
run_outcome run_algo(machine& mc, const run_params& p, double f, bool inclusive) {
    const inputs<T> in(p.words, std::uint64_t(mc.size()));
    return run_checked<T>(
        mc, f, in,
        [&](node& me, std::vector<T>& v) {
            if (inclusive)
                inclusive_scan(me, std::span<T>(v), reduction_op<T>{});
            else
                exclusive_scan(me, std::span<T>(v), reduction_op<T>{});
        },
        [&](int i) -> std::optional<std::vector<T>> {
            if (!inclusive && i == 0) return std::nullopt; // the empty prefix: unspecified
            return in.fold(0, inclusive ? i + 1 : i, 0, p.words);
        });
}

// Eq. 4.14 is exact when p divides m; otherwise both phases' 2 log p steps
// carry the largest blocks of allreduce_reduce_scatter_allgather.
std::optional<exact_form> reduce_scatter_allgather_form(const run_params& p) {
    return uneven_blocks_form(
        p, std::size_t(2 * p.dim),
        std::size_t(cost::allreduce_reduce_scatter_allgather(p.dim, double(p.words), 0, 1)));
}

// Each call's work summed over its nodes (call_work, wall_time.cpp), following
// the code in collectives/.
call_work allreduce_hypercube_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p * d, 0, p * d * m, p * d * m};
}
call_work allreduce_reduce_broadcast_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {2 * (p - 1), 0, 2 * (p - 1) * m, (p - 1) * m};
}
call_work allreduce_split_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {2 * p * d, 0, 2 * (p - 1) * m, 2 * (p - 1) * m};
}
// m is a block: Alg. 4.8 packs and combines (p-1) m words a node.
call_work reduce_scatter_hypercube_work(const run_params& r) {
    const auto [p, d, m] = sizes_of(r);
    return {p * d, 0, p * (p - 1) * m, 2 * p * (p - 1) * m};
}

template <auto A>
constexpr auto runner =
    []<class T>(machine& mc, const run_params& p, double f) { return run_algo<T>(mc, p, f, A); };

// The entry of reduction algorithm A, checked with plus and, where A promises
// node order, with the matrix product (ordered).
template <auto A>
algorithm_entry reduction(std::span<const algorithm_record> records) {
    return ordered(typed_entry(record_of(records, A), runner<A>), runner<A>);
}

} // namespace

void register_reductions(catalog& c) {
    // words: each node's contribution.
    c.add(typed_entry(record_of(allgather_records, allgather_algo::hypercube),
                      runner<allgather_algo::hypercube>));
    // With link capacity 0 (tests/personalized/catalog_limits.cpp): two nodes
    // exchange; rings of 4 or more nodes deadlock.
    c.add(needs_buffers(typed_entry(record_of(allgather_records, allgather_algo::ring),
                                    runner<allgather_algo::ring>),
                        2, std::string(ring_sends_first)));
    c.add(needs_buffers(typed_entry(record_of(allgather_records, allgather_algo::mesh),
                                    runner<allgather_algo::mesh>),
                        4, std::string(ring_sends_first) + " (the mesh's rows and columns)"));
    c.set_auto("allgather", allgather_records);
    // words: each node's result block.
    c.add(with_work(reduction<reduce_scatter_algo::hypercube>(reduce_scatter_records),
                    reduce_scatter_hypercube_work));
    c.add(with_work(needs_buffers(reduction<reduce_scatter_algo::ring>(reduce_scatter_records), 1,
                                  std::string(ring_sends_first)),
                    ring_reduce_scatter_work));
    c.set_auto("reduce-scatter", reduce_scatter_records);
    // words: the whole message.
    c.add(with_work(reduction<allreduce_algo::hypercube>(allreduce_records),
                    allreduce_hypercube_work));
    algorithm_entry split =
        with_work(reduction<allreduce_algo::reduce_scatter_allgather>(allreduce_records),
                  allreduce_split_work);
    split.exact = reduce_scatter_allgather_form;
    c.add(std::move(split));
    c.add(with_work(reduction<allreduce_algo::reduce_broadcast>(allreduce_records),
                    allreduce_reduce_broadcast_work));
    c.set_auto("allreduce", allreduce_records);
    c.add(ordered(typed_entry(scan_records[0], runner<true>), runner<true>));
    c.set_auto("scan", scan_records);
    c.add(ordered(typed_entry(exscan_records[0], runner<false>), runner<false>));
    c.set_auto("exscan", exscan_records);
}

} // namespace hcube::detail
