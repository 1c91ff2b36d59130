// `auto` under --cost calibrated (docs/cost-model.md): a call's
// wall time on this machine, where p node threads share a few cores, is at
// least its critical chain (the source's closed form) and at least the work of
// all its nodes over the cores. The closed forms count one node's chain; an
// entry's `work` (driver/src/catalog_*.cpp) counts every node's.
#include <hcube/driver/catalog.hpp>

#include <algorithm>
#include <cmath>

namespace hcube {

double predicted_wall_time(const algorithm_entry& e, const run_params& p) {
    const double nodes = std::ldexp(1.0, p.dim), chain = e.formula_time(p);
    const double cores = std::clamp(double(p.cores), 1.0, nodes);
    const std::optional<call_work> w = e.work ? std::optional(e.work(p)) : std::nullopt;
    const double t_s = p.cost.t_s, t_w = p.cost.t_w;
    const double all = w ? t_s * (w->messages + (routed_start_ups - 1) * w->routed) +
                               t_w * (w->words + w->local_words / 2)
                         : nodes * chain;
    return std::max(chain, all / cores);
}

} // namespace hcube
