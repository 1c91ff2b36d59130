// Shared by the catalog suites: the run_params of one catalog run.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <hcube/driver/catalog.hpp>

namespace hcube::test {

// op and algo on a dim-cube, `words` words, costs t_s and t_w (one word per
// element); everything else as run_params defaults it.
inline run_params catalog_params(std::string op, std::string algo, int dim, std::size_t words,
                                 double t_s, double t_w) {
    run_params p;
    p.op = std::move(op);
    p.algo = std::move(algo);
    p.dim = dim;
    p.words = words;
    p.cost.t_s = t_s;
    p.cost.t_w = t_w;
    return p;
}

} // namespace hcube::test
