// Spreading (Mathur & Johnsson section 5, alternatives 1-4): broadcast from one node
// over rotated spanning binomial trees, one part per send port, and the
// binomial gather to node 0 that alternative 3 starts with.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include <hcube/cm200_index.hpp>
#include <hcube/collectives/blocks.hpp>
#include <hcube/node.hpp>
#include <hcube/topology.hpp>

namespace hcube::cm200::detail {

// Broadcast of `data` from `root` over `parts` rotated spanning binomial trees:
// part p uses dimension (p + u) mod d in step u (all-port: the parts travel on
// distinct links; single-port: parts = 1, the binomial tree). Mathur & Johnsson section
// 5, alternatives 1-3 (the "spread").   d (t_s + t_w ceil(n / parts))
template <class T>
void spread(node& me, node_id root, std::span<T> data, int parts) {
    const int d = me.dim();
    if (d == 0 || data.empty()) return;
    const node_id rel = node_id(me.id()) ^ root;
    std::vector<std::pair<int, block>> sends, recvs;
    for (int u = 0; u < d; ++u) {
        sends.clear();
        recvs.clear();
        for (int p = 0; p < parts; ++p) {
            const block b = block_of(data.size(), std::size_t(parts), std::size_t(p));
            if (b.size == 0) continue;
            node_id used = 0; // dimensions part p has crossed before step u
            for (int t = 0; t < u; ++t)
                used |= node_id{1} << ((p + t) % d);
            const int dim = (p + u) % d;
            if ((rel & ~used) == 0)
                sends.push_back({dim, b});
            else if ((rel & ~(used | (node_id{1} << dim))) == 0)
                recvs.push_back({dim, b});
        }
        for (const auto& [dim, b] : sends)
            me.send(dim, data.subspan(b.begin, b.size));
        for (const auto& [dim, b] : recvs)
            me.recv(dim, data.subspan(b.begin, b.size));
    }
}

// Parts of a spread: one per send port (d all-port, 1 single-port).
inline int spread_parts(const node& me) {
    return port_policy_of(me.cfg().ports).send_ports(me.dim());
}

// All-to-one personalized communication ("send") to node 0 along the binomial
// tree of ascending dimensions; node 0 ends with every block in rank order.
// The blocks a node holds after step u are those of its subcube over
// dimensions 0..u-1: an aligned rank interval in both orders, since G^-1 maps
// [0, 2^u) onto itself.   d t_s + t_w (N-1) M'
template <class T>
void gather_to_zero(node& me, std::span<const T> in, std::span<T> out, node_order order) {
    const std::size_t m = in.size();
    const node_id self = node_id(me.id());
    std::vector<T> have(in.begin(), in.end()), next;
    for (int u = 0; u < me.dim(); ++u) {
        const node_id bit = node_id{1} << u;
        if (self & bit) {
            me.send(u, have);
            return;
        }
        const node_id low = bit - 1;
        const node_id mine = rank_of(self, order) & ~low;
        const node_id theirs = rank_of(self ^ bit, order) & ~low;
        const node_id base = std::min(mine, theirs);
        next.resize(2 * have.size());
        std::copy(have.begin(), have.end(), next.begin() + std::ptrdiff_t((mine - base) * m));
        me.recv(u, std::span<T>(next).subspan((theirs - base) * m, have.size()));
        std::swap(have, next);
    }
    std::copy(have.begin(), have.end(), out.begin());
}

} // namespace hcube::cm200::detail
