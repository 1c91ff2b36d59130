// Catalog entries of Mathur & Johnsson (CM-200): all-to-all
// broadcast (allgather, words = M', each node's contribution) and all-to-all
// reduction (reduce-scatter, words = each node's result block, M = N words per
// node) along one and d Hamiltonian cycles, and the source's alternatives.
// Options: --order binary|gray (which node holds which array block; the result
// is in block order either way), --index computation|motion|arrival (cycle
// broadcasts; arrival leaves the data unordered, as the source's AABC timings)
// and computation|motion (cycle reductions).
// Reductions use plus, so every result has a serial reference.
#include <hcube/driver/catalog.hpp>

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <hcube/collectives/cm200.hpp>
#include <hcube/cost/cm200.hpp>
#include <hcube/driver/dispatch.hpp>

namespace hcube::detail {

namespace {

// Bytes of one element on the wire (index motion adds a 32-bit index).
std::size_t wire_bytes(const run_params& p) {
    const std::size_t elem = p.type == elem_type::int32 ? 4 : 8;
    const bool motion = p.options.count("index") && p.options.at("index") == "motion";
    return motion ? (elem == 4 ? 8 : 16) : elem;
}

// t_w per element: the formulas count elements; with word_bytes set an element
// (with its index, if it travels) is wire_bytes / word_bytes words.
double tw_per_element(const run_params& p) {
    return p.cost.word_bytes == 0 ? p.cost.t_w
                                  : p.cost.t_w * double(wire_bytes(p)) / double(p.cost.word_bytes);
}

// The record's cost with t_w per element (tw_per_element).
double formula(const algorithm_record& r, const run_params& p) {
    call_shape s = shape_of(p);
    s.t_w = tw_per_element(p);
    return r.cost(s);
}

template <class A>
double formula(A a, const run_params& p) {
    if constexpr (std::is_same_v<A, cm200::allgather_algo>)
        return formula(record_of(cm200::allgather_records, a), p);
    else
        return formula(record_of(cm200::reduce_scatter_records, a), p);
}

template <class T>
run_outcome run_allgather(machine& mc, const run_params& p, cm200::allgather_algo a) {
    const auto o = cm200_options_of(p);
    const int n = mc.size();
    std::vector<std::vector<T>> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    std::vector<T> want;
    const inputs<T> values(p.words);
    for (int v = 0; v < n; ++v) {
        in[std::size_t(v)] = values.block(std::uint64_t(v));
        out[std::size_t(v)].resize(p.words * std::size_t(n));
        const auto block = values.block(cm200::node_of_rank(node_id(v), o.order));
        want.insert(want.end(), block.begin(), block.end()); // block v = rank v's input
    }
    run_report r = mc.run([&](node& me) {
        const auto i = std::size_t(me.id());
        cm200::allgather<T>(me, in[i], out[i], a, o);
    });
    std::string mismatch;
    std::vector<T> layout(want.size());
    for (int v = 0; v < n && mismatch.empty(); ++v) {
        if (!mc.is_local(v)) continue; // over MPI: this rank's nodes
        if (o.index != cm200::index_mode::arrival) {
            mismatch = first_mismatch<T>(v, out[std::size_t(v)], want);
            continue;
        }
        // No reordering: local address j M' + s holds the index of 4.1 / 4.2.1.
        for (std::size_t j = 0; j < std::size_t(n); ++j)
            for (std::size_t s = 0; s < p.words; ++s)
                layout[j * p.words + s] =
                    want[a == cm200::allgather_algo::d_cycles
                             ? cm200::dc_arrival_index(node_id(v), j, s, p.dim, p.words, o.order)
                             : cm200::oc_arrival_index(node_id(v), j, s, p.dim, p.words, o.order)];
        mismatch = first_mismatch<T>(v, out[std::size_t(v)], layout);
    }
    return make_outcome(std::move(r), formula(a, p), std::move(mismatch));
}

template <class T>
run_outcome run_reduce_scatter(machine& mc, const run_params& p, cm200::reduce_scatter_algo a) {
    const auto o = cm200_options_of(p);
    const int n = mc.size();
    const std::size_t m = p.words;
    std::vector<std::vector<T>> in(static_cast<std::size_t>(n)),
        out(static_cast<std::size_t>(n), std::vector<T>(m));
    const inputs<T> values(m * std::size_t(n), std::uint64_t(n));
    for (int v = 0; v < n; ++v)
        in[std::size_t(v)] = values.block(std::uint64_t(v));
    run_report r = mc.run([&](node& me) {
        const auto i = std::size_t(me.id());
        cm200::reduce_scatter<T>(me, in[i], out[i], std::plus<>{}, a, o);
    });
    std::string mismatch;
    for (int v = 0; v < n && mismatch.empty(); ++v) {
        if (!mc.is_local(v)) continue; // over MPI: this rank's nodes
        const std::size_t base = cm200::rank_of(node_id(v), o.order) * m;
        std::vector<T> want(m, T(0));
        for (int k = 0; k < n; ++k)
            for (std::size_t j = 0; j < m; ++j)
                want[j] += in[std::size_t(k)][base + j];
        mismatch = first_mismatch<T>(v, out[std::size_t(v)], want);
    }
    return make_outcome(std::move(r), formula(a, p), std::move(mismatch));
}

const option_spec order_option{
    "order",
    {"binary", "gray"},
    "binary",
    "node addresses in binary or Gray-code order (Mathur & Johnsson 4.2.1): "
    "array block r lives on node r or G(r)"};
const option_spec index_option{"index",
                               {"computation", "motion", "arrival"},
                               "computation",
                               "compute where received data belongs (4.2.3), move a 32-bit "
                               "index with every element, or leave data where it arrives "
                               "(no reordering)"};

const option_spec reduction_index_option{
    "index",
    {"computation", "motion"},
    "computation",
    "compute which block a received partial belongs to (4.2.3) or move a 32-bit index with "
    "every element"};

template <class A>
algorithm_entry entry(const algorithm_record& r, std::vector<option_spec> options) {
    algorithm_entry e = entry_of(r);
    const auto a = r.as<A>();
    e.options = std::move(options);
    e.formula_time = [&r](const run_params& p) { return formula(r, p); };
    // Measured with link capacity 0 (tests/personalized/catalog_limits.cpp):
    // under all-port a step's sends are posted with its receives
    // (detail/link_step.hpp), under single-port a node's send must end before
    // its receive starts.
    e.needs_buffered_links = [a](const run_params& p) -> std::string {
        const bool at_once = port_policy_of(p.ports).several_links_at_once();
        if (a == A::one_cycle && !at_once && p.dim >= 1)
            return "every node sends along the Hamiltonian cycle before it receives";
        // The d-cycles complete unbuffered where they fit (all-port from d = 2).
        if (a == A::d_cycles && !at_once && p.dim >= 1)
            return "every node sends along its Hamiltonian cycle before it receives";
        if constexpr (std::is_same_v<A, cm200::reduce_scatter_algo>)
            if (a == A::reduce_and_spread && !at_once && p.dim >= 1)
                return "under single-port each butterfly exchange is a send, then a receive";
        return {};
    };
    e.run = [a](machine& mc, const run_params& p) {
        return with_elem_type(p.type, [&]<class T>() {
            if constexpr (std::is_same_v<A, cm200::allgather_algo>)
                return run_allgather<T>(mc, p, a);
            else
                return run_reduce_scatter<T>(mc, p, a);
        });
    };
    return e;
}

} // namespace

void register_cm200(catalog& c) {
    using ag = cm200::allgather_algo;
    using rs = cm200::reduce_scatter_algo;
    const auto& ags = cm200::allgather_records;
    const auto& rss = cm200::reduce_scatter_records;
    const std::vector<option_spec> order{order_option};
    const std::vector<option_spec> order_index{order_option, index_option};
    const std::vector<option_spec> order_rindex{order_option, reduction_index_option};
    // Listed beside Grama et al.'s algorithms of the same operations; `auto`
    // chooses among the operations' own tables (allgather_records, ...).
    c.add(entry<ag>(record_of(ags, ag::one_cycle), order_index));
    // The d-cycles send one subblock around each of their d cycles: M' = d
    // words drawn, so that the picture uses them all.
    const auto on_each_cycle = [](algorithm_entry e) {
        e.drawn_words = [](int dim) { return std::size_t(std::max(1, dim)); };
        return e;
    };
    c.add(on_each_cycle(entry<ag>(record_of(ags, ag::d_cycles), order_index)));
    c.add(entry<ag>(record_of(ags, ag::send_and_spread), order));
    c.add(entry<ag>(record_of(ags, ag::one_source_at_a_time), order));
    c.add(with_work(entry<rs>(record_of(rss, rs::one_cycle), order_rindex),
                    ring_reduce_scatter_work));
    c.add(on_each_cycle(entry<rs>(record_of(rss, rs::d_cycles), order_rindex)));
    c.add(entry<rs>(record_of(rss, rs::reduce_and_spread), order));
}

} // namespace hcube::detail

namespace hcube {

cm200::options cm200_options_of(const run_params& p) {
    cm200::options o;
    o.order = p.option("order") == "gray" ? cm200::node_order::gray : cm200::node_order::binary;
    if (const auto it = p.options.find("index"); it != p.options.end())
        o.index = it->second == "motion"    ? cm200::index_mode::motion
                  : it->second == "arrival" ? cm200::index_mode::arrival
                                            : cm200::index_mode::computation;
    return o;
}

} // namespace hcube
