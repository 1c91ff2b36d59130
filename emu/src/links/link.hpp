// A directed link x -> x ^ 2^k: what the node layer needs of one, and the
// implementations config::links chooses among. Private to emu/src.
//
// Each implementation is a bounded single-producer single-consumer channel of
// message descriptors (links/message.hpp): the sending node is its only
// producer, the receiving node its only consumer. What every implementation
// must guarantee (docs/design.md, "Links"):
// - FIFO, never loss: messages are received in the order they were published,
//   each exactly once; a full link refuses (writable() false), never drops.
// - Capacity: exactly `capacity` messages fit (config::link_capacity, at least
//   1), so back-pressure and deadlock reports are the same under every
//   implementation.
// - Visibility: once empty() is false for the consumer, the front descriptor
//   and whatever its pointer refers to are visible to it (publish releases,
//   empty acquires).
// - Delivery count: consumed() counts pops; it is stored with release after
//   the payload was copied out, so a producer that reads consumed() >= n may
//   reuse the buffer lent to message n (rendezvous) or count a synchronous
//   send as delivered. pushed() is the number of the last published message.
// - reading(): a flag of the consumer's, set while it copies from a borrowed
//   buffer (node.cpp, pending_deliveries).
// - pending(): what is unread, callable from another thread while both ends
//   are parked (the deadlock report), without a data race.
// The node layer is compiled once per implementation (with_link_type), so a
// push or a pop is a direct, inlinable call: no dispatch on the hot path.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include <hcube/config.hpp>

#include "boost_spsc.hpp"
#include "message.hpp"
#include "ring.hpp"

namespace hcube::detail {

template <class L>
concept spsc_link = std::constructible_from<L, std::size_t> && requires(L& l, const L& c) {
    // producer
    { l.writable() } -> std::same_as<bool>;
    { l.back() } -> std::same_as<descriptor&>; // fill in place, then publish()
    l.publish();
    { c.pushed() } -> std::same_as<std::uint64_t>;
    // consumer
    { c.empty() } -> std::same_as<bool>;
    { c.front() } -> std::same_as<const descriptor&>;
    l.pop();
    // either side
    { c.consumed() } -> std::same_as<std::uint64_t>;
    { l.reading() } -> std::same_as<std::atomic<bool>&>;
    { c.pending() } -> std::same_as<link_backlog>;
};

static_assert(spsc_link<ring>);
static_assert(spsc_link<boost_spsc>);

// Calls f(std::type_identity<L>{}) with the implementation `which` names
// (resolved: not link_impl::automatic).
template <class F>
decltype(auto) with_link_type(link_impl which, F&& f) {
    if (which == link_impl::boost_spsc) return f(std::type_identity<boost_spsc>{});
    return f(std::type_identity<ring>{});
}

// Every directed link of a machine, all of one implementation, index
// from * d + k; over MPI only those with an end on this rank.
class link_table {
public:
    template <spsc_link L, class Needed>
    void build(std::size_t count, std::size_t capacity, Needed needed) {
        links_.clear();
        links_.reserve(count);
        for (std::size_t i = 0; i < count; ++i)
            links_.push_back({needed(i) ? new L(capacity) : nullptr,
                              [](void* l) { delete static_cast<L*>(l); }});
    }
    bool has(std::size_t i) const noexcept { return links_[i] != nullptr; }
    template <spsc_link L>
    L& at(std::size_t i) const {
        return *static_cast<L*>(links_[i].get());
    }

private:
    std::vector<std::unique_ptr<void, void (*)(void*)>> links_;
};

} // namespace hcube::detail
