// The median of repeated measurements, shared by the benchmark programs
// (their command lines: hcube/cli/args.hpp).
#pragma once

#include <algorithm>
#include <vector>

namespace hcube::bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace hcube::bench
