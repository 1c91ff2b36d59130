// One communication step over several links: what every collective with a
// fixed per-step link pattern needs (Hu's ASPC, the CM-200 cycles).
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include <hcube/node.hpp>

namespace hcube::detail {

template <wire_type T>
struct link_out {
    int dim;
    std::span<const T> data;
};
template <wire_type T>
struct link_in {
    int dim;
    std::span<T> data;
};

// One communication step: every `outs` entry leaves on its link and every
// `ins` entry arrives from its link. All-port: one exchange_all, both ways on
// a link that sends and receives, one-sided on a link that only sends or only
// receives (so no empty messages appear, and on unbuffered links a cycle of
// one-sided links does not deadlock). One link at a time (single-port): the
// sends, then the receives, in list order; when ins[r] is what the peer sends
// as its outs[r] (as when every node lists the same routes in the same order),
// each message meets its receive at once: one message per step.
template <wire_type T>
void link_step(node& me, std::span<const link_out<T>> outs, std::span<const link_in<T>> ins) {
    if (!port_policy_of(me.cfg().ports).several_links_at_once()) {
        for (const auto& o : outs)
            me.send(o.dim, o.data);
        for (const auto& i : ins)
            me.recv(i.dim, i.data);
        return;
    }
    std::vector<transfer<T>> step;
    for (const auto& o : outs) {
        const auto in =
            std::find_if(ins.begin(), ins.end(), [&](const auto& i) { return i.dim == o.dim; });
        step.push_back(in != ins.end() ? transfer<T>{o.dim, o.data, in->data}
                                       : transfer<T>::send_only(o.dim, o.data));
    }
    for (const auto& i : ins)
        if (std::none_of(outs.begin(), outs.end(), [&](const auto& o) { return o.dim == i.dim; }))
            step.push_back(transfer<T>::recv_only(i.dim, i.data));
    if (!step.empty()) me.exchange_all(step);
}

} // namespace hcube::detail
