// Shared by the catalog sources (driver/src/catalog_*.cpp): run a function
// template on the C++ type an elem_type names, deterministic inputs, the
// comparison with a serial reference that becomes a run_outcome, and entries
// whose run() does all of that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <hcube/driver/catalog.hpp>
#include <hcube/machine.hpp>

namespace hcube::detail {

// Calls f.template operator()<T>() with T the element type `t` names.
template <class F>
decltype(auto) with_elem_type(elem_type t, F&& f) {
    switch (t) {
    case elem_type::int32:
        return std::forward<F>(f).template operator()<std::int32_t>();
    case elem_type::int64:
        return std::forward<F>(f).template operator()<std::int64_t>();
    case elem_type::float64:
        return std::forward<F>(f).template operator()<double>();
    }
    throw usage_error("unknown element type");
}

// Element i of node `node`'s input: small integers, so sums over 2^16 nodes fit
// in int32 and are exact in double whatever the order of the additions, yet
// varied enough that a block in the wrong place shows.
template <class T>
T input_value(int node, std::size_t i) {
    return T((std::uint64_t(node) * 131 + i * 17) % 1021);
}

// Node `node`'s first n input values.
template <class T>
std::vector<T> input_vector(int node, std::size_t n) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = input_value<T>(node, i);
    return v;
}

// "" when got == want, else where they first differ, e.g.
// "node 3, element 5: got 7, expected 9".
template <class T>
std::string first_mismatch(int node, std::span<const T> got, std::span<const T> want) {
    std::ostringstream os;
    if (got.size() != want.size()) {
        os << "node " << node << ": got " << got.size() << " elements, expected " << want.size();
        return os.str();
    }
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!(got[i] == want[i])) {
            os << "node " << node << ", element " << i << ": got " << got[i] << ", expected "
               << want[i];
            return os.str();
        }
    return {};
}

// A run's outcome: verified when `mismatch` (from first_mismatch) is empty.
inline run_outcome make_outcome(run_report report, double formula_time, std::string mismatch) {
    run_outcome o;
    o.verified = mismatch.empty();
    o.formula_time = formula_time;
    o.report = std::move(report);
    o.note = std::move(mismatch);
    return o;
}

// Runs `body` on every node with its vector from `input` (the body leaves the
// node's result in it), then compares each node's result with `expect(node)`
// (nullopt: that node's result is unspecified) outside the timed run.
template <class T>
run_outcome run_verified(machine& mc, double formula_time,
                         const std::function<std::vector<T>(int)>& input,
                         const std::function<void(node&, std::vector<T>&)>& body,
                         const std::function<std::optional<std::vector<T>>(int)>& expect) {
    std::vector<std::vector<T>> data(std::size_t(mc.size()));
    for (int i = 0; i < mc.size(); ++i)
        data[std::size_t(i)] = input(i);
    run_report report = mc.run([&](node& me) { body(me, data[std::size_t(me.id())]); });
    std::string mismatch;
    for (int i = 0; i < mc.size() && mismatch.empty(); ++i)
        if (const auto want = mc.is_local(i) ? expect(i) : std::nullopt) // MPI: this rank's
            mismatch = first_mismatch<T>(i, data[std::size_t(i)], *want);
    return make_outcome(std::move(report), formula_time, std::move(mismatch));
}

// The record's entry (entry_of) whose run() dispatches on the element type,
// runner.template operator()<T>(machine, params, formula_time(params)), and
// notes that the formula assumes single-port when a run whose nodes may use
// several links at once noted nothing else. `formula_time` replaces the
// record's cost where the catalog prints a more exact form.
template <class Runner>
algorithm_entry typed_entry(const algorithm_record& r, Runner runner,
                            std::function<double(const run_params&)> formula_time = {}) {
    algorithm_entry e = entry_of(r);
    if (formula_time) e.formula_time = std::move(formula_time);
    e.run = [time = e.formula_time, runner](machine& mc, const run_params& p) {
        run_outcome o = with_elem_type(
            p.type, [&]<class T>() { return runner.template operator()<T>(mc, p, time(p)); });
        if (port_policy_of(p.ports).several_links_at_once() && o.note.empty())
            o.note = "the formula assumes single-port";
        return o;
    };
    return e;
}

} // namespace hcube::detail
