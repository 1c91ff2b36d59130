// `auto` under --cost calibrated (docs/cost-model.md): a call's
// wall time on this machine, where p node threads share a few cores, is at
// least its critical chain (the source's closed form) and at least the work of
// all its nodes over the cores. The closed forms count one node's chain; the
// work below counts every node's, for the algorithms whose nodes do unequal
// shares (the rooted ones) or copy and combine words the closed form leaves
// out. The counts follow each algorithm's code in collectives/.
#include <hcube/cost/personalized.hpp>
#include <hcube/driver/catalog.hpp>

#include <algorithm>
#include <cmath>

namespace hcube {

std::optional<call_work> work_of(const algorithm_entry& e, const run_params& prm) {
    const double p = std::ldexp(1.0, prm.dim), d = prm.dim, m = double(prm.words);
    const std::string_view op = e.op, a = e.algo;
    // Scatter or gather of m words (Eq. 4.6): p - 1 messages, m/2 words per level.
    const call_work scatter{p - 1, 0, m * d / 2, 0};
    if (op == "broadcast" && a == "binomial") return call_work{p - 1, 0, (p - 1) * m, 0};
    // Scatter, then allgather of the p blocks (Alg. 4.7: log p messages a node).
    if (op == "broadcast" && a == "scatter-allgather")
        return call_work{scatter.messages + p * d, 0, scatter.words + (p - 1) * m, 0};
    // Every received word is combined once.
    if (op == "reduce" && a == "binomial") return call_work{p - 1, 0, (p - 1) * m, (p - 1) * m};
    // Alg. 4.8 packs what leaves and combines what arrives, then a gather.
    if (op == "reduce" && a == "reduce-scatter-gather")
        return call_work{p * d + scatter.messages, 0, (p - 1) * m + scatter.words, 2 * (p - 1) * m};
    if (op == "allreduce" && a == "hypercube") return call_work{p * d, 0, p * d * m, p * d * m};
    if (op == "allreduce" && a == "reduce-broadcast")
        return call_work{2 * (p - 1), 0, 2 * (p - 1) * m, (p - 1) * m};
    if (op == "allreduce" && a == "reduce-scatter-allgather")
        return call_work{2 * p * d, 0, 2 * (p - 1) * m, 2 * (p - 1) * m};
    // m is a block: Alg. 4.8 packs and combines (p-1) m words a node; the
    // rings combine them.
    if (op == "reduce-scatter" && a == "hypercube")
        return call_work{p * d, 0, p * (p - 1) * m, 2 * p * (p - 1) * m};
    if (op == "reduce-scatter" && (a == "ring" || a == "one-cycle"))
        return call_work{p * (p - 1), 0, p * (p - 1) * m, p * (p - 1) * m};
    // 4.5.3: every step packs and unpacks p/2 blocks, after copying p.
    if (op == "alltoall" && a == "dimension-exchange")
        return call_work{p * d, 0, p * d * p / 2 * m, p * (p + d * p) * m};
    if (op == "alltoall" && a == "pairwise")
        return call_work{p * (p - 1), p * (p - 1), p * (p - 1) * m, p * m};
    // 4.5.1: packs p - 1 blocks, forwards (p-s) m words in step s, copies a block out.
    if (op == "alltoall" && a == "ring")
        return call_work{p * (p - 1), 0, p * (p - 1) * p / 2 * m, 2 * p * (p - 1) * m};
    if (op == "shift" && a == "ecube") {
        const double moved = cost::shift_mod(prm.dim, prm.shift) ? p : 0;
        return call_work{moved, moved, moved * m, 0};
    }
    return std::nullopt;
}

double predicted_wall_time(const algorithm_entry& e, const run_params& p) {
    const double nodes = std::ldexp(1.0, p.dim), chain = e.formula_time(p);
    const double cores = std::clamp(double(p.cores), 1.0, nodes);
    const std::optional<call_work> w = work_of(e, p);
    const double t_s = p.cost.t_s, t_w = p.cost.t_w;
    const double all = w ? t_s * (w->messages + (routed_start_ups - 1) * w->routed) +
                               t_w * (w->words + w->local_words / 2)
                         : nodes * chain;
    return std::max(chain, all / cores);
}

} // namespace hcube
