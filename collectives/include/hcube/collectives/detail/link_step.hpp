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
// `ins` entry arrives from its link. All-port: links that send and receive
// exchange (exchange_all), a link that only sends or only receives carries a
// single message, so no empty messages appear. One link at a time
// (single-port): the sends, then
// the receives, in list order; when ins[r] is what the peer sends as its
// outs[r] (as when every node lists the same routes in the same order), each
// message meets its receive at once: one message per step.
template <wire_type T>
void link_step(node& me, std::span<const link_out<T>> outs, std::span<const link_in<T>> ins) {
    if (!port_policy_of(me.cfg().ports).several_links_at_once()) {
        for (const auto& o : outs)
            me.send(o.dim, o.data);
        for (const auto& i : ins)
            me.recv(i.dim, i.data);
        return;
    }
    std::vector<transfer<T>> both;
    std::vector<const link_in<T>*> only_in;
    for (const auto& o : outs) {
        const auto in =
            std::find_if(ins.begin(), ins.end(), [&](const auto& i) { return i.dim == o.dim; });
        if (in != ins.end())
            both.push_back({o.dim, o.data, in->data});
        else
            me.send(o.dim, o.data);
    }
    for (const auto& i : ins)
        if (std::none_of(outs.begin(), outs.end(), [&](const auto& o) { return o.dim == i.dim; }))
            only_in.push_back(&i);
    if (!both.empty()) me.exchange_all(both);
    for (const auto* i : only_in)
        me.recv(i->dim, i->data);
}

} // namespace hcube::detail
