// The C++ `automatic` choice and the catalog's `auto` (hcube run --algo auto)
// pick the same algorithm: both read the operation's records
// (collectives/.../record.hpp) through cheapest(), the C++ side with the
// node's call shape, the catalog with run_params. Checked on a grid of
// dimensions, port models, sizes and costs, and by running both on a smaller
// grid.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <hcube/driver/catalog.hpp>
#include <hcube/hcube.hpp>

#include "catalog_params.hpp"
#include "test_support.hpp"

using namespace hcube;

namespace {

struct costs {
    double t_s, t_w;
};
const costs cost_grid[] = {{1, 0}, {0, 1}, {1, 1}, {100, 1}, {1, 100}, {3, 2}, {1e308, 1}};

// The catalog's auto choice for op with these parameters.
std::string catalog_choice(const run_params& p) {
    const algorithm_entry* e = builtin_catalog().choose(p);
    REQUIRE(e != nullptr);
    return e->algo;
}

run_params params(const std::string& op, int d, port_model ports, std::size_t m, costs c) {
    run_params p = test::catalog_params(op, "auto", d, m, c.t_s, c.t_w);
    p.ports = ports;
    return p;
}

// What node 0 computes as its automatic choice, the way the collective's
// header does: the node's shape (machine costs, m elements of int32), then
// choose_algorithm over the operation's table.
template <class Enum>
std::string node_choice(const node& me, std::span<const algorithm_record> table, std::size_t m,
                        const std::function<void(call_shape&)>& call = {}) {
    call_shape s = shape_of(me, m, sizeof(std::int32_t));
    if (call) call(s);
    return std::string(record_of(table, choose_algorithm<Enum>(table, s)).name);
}

} // namespace

TEST_CASE("automatic in C++ and auto in the catalog choose the same algorithm") {
    // Node 0 lists each case with its C++ choice; the catalog is asked after
    // the run, on this thread.
    struct choice {
        run_params params;
        std::string cpp;
    };
    std::vector<choice> cases;
    for (int d = 0; d <= 6; ++d)
        for (const port_policy& ports : port_policies) {
            machine mc(test::cfg(d, ports.model));
            const int p = mc.size();
            for (const costs c : cost_grid) {
                mc.set_cost({c.t_s, c.t_w, 0});
                mc.run([&](node& me) {
                    if (me.id() != 0) return;
                    for (std::size_t m : {std::size_t{1}, std::size_t{3}, std::size_t(p),
                                          std::size_t{100}, std::size_t{4096}}) {
                        const auto prm = [&](const char* op) {
                            return params(op, d, ports.model, m, c);
                        };
                        for (int root : {0, p - 1}) {
                            run_params q = prm("broadcast");
                            q.root = root;
                            const auto at_root = [root](call_shape& s) { s.root = root; };
                            cases.push_back({q, node_choice<broadcast_algo>(me, broadcast_records,
                                                                            m, at_root)});
                            q.op = "reduce";
                            cases.push_back(
                                {q, node_choice<reduce_algo>(me, reduce_records, m, at_root)});
                        }
                        cases.push_back({prm("allreduce"),
                                         node_choice<allreduce_algo>(me, allreduce_records, m)});
                        cases.push_back({prm("allgather"),
                                         node_choice<allgather_algo>(me, allgather_records, m)});
                        cases.push_back(
                            {prm("reduce-scatter"),
                             node_choice<reduce_scatter_algo>(me, reduce_scatter_records, m)});
                        cases.push_back(
                            {prm("alltoall"), node_choice<alltoall_algo>(me, alltoall_records, m)});
                        for (long long q_shift : {1LL, -2LL, 3LL, 7LL})
                            for (const char* ring : {"", "id", "gray"}) {
                                run_params q = prm("shift");
                                q.shift = q_shift;
                                if (*ring) q.options["ring"] = ring;
                                const bool gray = std::string(ring) == "gray";
                                cases.push_back({q, node_choice<shift_algo>(me, shift_records, m,
                                                                            [&](call_shape& s) {
                                                                                s.shift = q_shift;
                                                                                s.gray_ring = gray;
                                                                            })});
                            }
                    }
                });
            }
        }
    CHECK(cases.size() == 7 * 2 * std::size(cost_grid) * 5 * 20);
    for (const choice& c : cases) {
        const run_params& q = c.params;
        CAPTURE(q.op);
        CAPTURE(q.dim);
        CAPTURE(to_string(q.ports));
        CAPTURE(q.cost.t_s);
        CAPTURE(q.cost.t_w);
        CAPTURE(q.words);
        CAPTURE(q.root);
        CAPTURE(q.shift);
        CAPTURE(q.options.count("ring") ? q.options.at("ring") : "");
        CHECK(catalog_choice(q) == c.cpp);
    }
}

TEST_CASE("automatic runs what the catalog's auto runs: the same virtual time") {
    for (const port_policy& ports : port_policies)
        for (const costs c : {costs{1, 0}, costs{100, 1}, costs{1, 100}})
            for (std::size_t m : {std::size_t{1}, std::size_t{64}}) {
                const int d = 3, p = 1 << d;
                CAPTURE(ports.name);
                CAPTURE(c.t_s);
                CAPTURE(c.t_w);
                CAPTURE(m);
                config cf = test::cfg(d, ports.model, c.t_s, c.t_w);
                machine mc(cf);
                const auto catalog_time = [&](const char* op) {
                    const run_outcome o = run_algorithm(params(op, d, ports.model, m, c));
                    CHECK(o.verified);
                    return o.report.virtual_time;
                };
                const auto cpp_time = [&](const std::function<void(node&)>& program) {
                    return mc.run(program).virtual_time;
                };
                CHECK(cpp_time([&](node& me) {
                          std::vector<std::int32_t> v(m, me.id());
                          broadcast(me, std::span(v), 0);
                      }) == catalog_time("broadcast"));
                CHECK(cpp_time([&](node& me) {
                          std::vector<std::int32_t> v(m, me.id());
                          allreduce(me, std::span(v), std::plus<>{});
                      }) == catalog_time("allreduce"));
                CHECK(cpp_time([&](node& me) {
                          std::vector<std::int32_t> v(m, me.id()), all(m * p);
                          allgather(me, v, all);
                      }) == catalog_time("allgather"));
                CHECK(cpp_time([&](node& me) {
                          std::vector<std::int32_t> in(m * p, me.id()), out(m * p);
                          alltoall(me, in, out);
                      }) == catalog_time("alltoall"));
            }
}

// choose_algorithm keeps its last answer per operation and thread: a call
// shape that differs from the one before in any field must be chosen afresh.
// Each shape below changes one field of the one it names, and with it the
// answer of allreduce, reduce or the shift (checked, so the test can fail);
// every ordered pair of shapes is asked back to back.
TEST_CASE("automatic's remembered choice follows every field of the call shape") {
    call_shape base;
    base.dim = 4;
    base.t_s = 1;
    base.t_w = 1;
    base.words = 64;
    base.shift = 3;
    base.gray_ring = true;
    call_shape small = base; // reduce's answer depends on its root here
    small.dim = 2;
    small.words = 3;
    small.t_s = 0;
    struct variant {
        std::string field;
        call_shape shape;
        std::size_t from; // the variant it changes (itself: none)
    };
    std::vector<variant> variants{{"base", base, 0}, {"small", small, 1}};
    // Returns the new variant's index, for the variants that change it.
    const auto add = [&](const char* field, std::size_t from, auto change) {
        call_shape s = variants[from].shape;
        change(s);
        variants.push_back({field, s, from});
        return variants.size() - 1;
    };
    const std::size_t on_base = 0, on_small = 1;
    add("dim", on_base, [](call_shape& s) { s.dim = 1; });
    const std::size_t all_port =
        add("ports", on_base, [](call_shape& s) { s.ports = port_model::all_port; });
    add("commutative", all_port, [](call_shape& s) { s.commutative = false; });
    const std::size_t startup = add("t_s", on_base, [](call_shape& s) { s.t_s = 1000; });
    add("t_w", startup, [](call_shape& s) { s.t_w = 1000; });
    add("words", on_base, [](call_shape& s) { s.words = 1; });
    const std::size_t shift_1 = add("shift", on_base, [](call_shape& s) { s.shift = 1; });
    add("gray_ring", shift_1, [](call_shape& s) { s.gray_ring = false; });
    add("root", on_small, [](call_shape& s) { s.root = 2; });

    const std::span<const algorithm_record> tables[] = {allreduce_records, reduce_records,
                                                        shift_records};
    for (std::size_t i = 0; i < variants.size(); ++i) {
        if (variants[i].from == i) continue;
        CAPTURE(variants[i].field);
        const call_shape &a = variants[i].shape, &b = variants[variants[i].from].shape;
        CHECK(std::any_of(std::begin(tables), std::end(tables),
                          [&](const auto& t) { return cheapest(t, a) != cheapest(t, b); }));
    }
    const auto back_to_back = [&](std::span<const algorithm_record> table, auto tag) {
        using Enum = decltype(tag);
        for (const variant& a : variants)
            for (const variant& b : variants) {
                CAPTURE(a.field);
                CAPTURE(b.field);
                CHECK(choose_algorithm<Enum>(table, a.shape) ==
                      cheapest(table, a.shape)->template as<Enum>());
                CHECK(choose_algorithm<Enum>(table, b.shape) ==
                      cheapest(table, b.shape)->template as<Enum>());
            }
    };
    back_to_back(allreduce_records, allreduce_algo{});
    back_to_back(reduce_records, reduce_algo{});
    back_to_back(shift_records, shift_algo{});
}
