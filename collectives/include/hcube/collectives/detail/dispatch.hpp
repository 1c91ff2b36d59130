// Shared by the catalog sources (collectives/src/catalog_*.cpp): run a function
// template on the C++ type an elem_type names, deterministic inputs, and the
// comparison with a serial reference that becomes a run_outcome.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <utility>

#include <hcube/catalog.hpp>

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

} // namespace hcube::detail
