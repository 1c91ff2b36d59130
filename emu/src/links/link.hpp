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
// - rewind(): between runs, on an empty link; pushed() and consumed() count
//   from 0 again.
// - Forwarding, for a consumer that hands messages on and learns later that
//   they were taken at the far end (a backend whose link ends in another
//   process): message n (from 0, in order) is read with forwardable(n) and
//   forwarded(n), then handed on with hand_on(n), its slot still charged to
//   the producer; once the first n were taken there, taken_up_to(n) gives
//   their slots back and counts them consumed. Such a link is never also read
//   with front()/pop() until it is all taken (the end of a run).
// The node layer is compiled once per implementation (with_link_type), so a
// push or a pop is a direct, inlinable call: no dispatch on the hot path.
#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include <hcube/config.hpp>

#include "../huge_pages.hpp"
#include "boost_spsc.hpp"
#include "message.hpp"
#include "ring.hpp"
#include "slots.hpp"

namespace hcube::detail {

template <class L>
concept spsc_link = std::constructible_from<L, std::size_t, slot_place> &&
    requires(L& l, const L& c) {
    // construction: L(capacity, place) in the link table's arena, with
    // slot_count(capacity) zero-filled slots for it at `place` (links/slots.hpp)
    { L::slot_count(std::size_t{}) } -> std::same_as<std::size_t>;
    // producer
    { l.writable() } -> std::same_as<bool>;
    { l.back() } -> std::same_as<descriptor&>; // fill in place, then publish()
    l.publish();
    { c.pushed() } -> std::same_as<std::uint64_t>;
    // consumer
    { c.empty() } -> std::same_as<bool>;
    { c.front() } -> std::same_as<const descriptor&>;
    l.pop();
    // a forwarding consumer
    { c.forwardable(std::uint64_t{}) } -> std::same_as<bool>;
    { c.forwarded(std::uint64_t{}) } -> std::same_as<const descriptor&>;
    l.hand_on(std::uint64_t{});
    l.taken_up_to(std::uint64_t{});
    // either side
    { c.consumed() } -> std::same_as<std::uint64_t>;
    { l.reading() } -> std::same_as<std::atomic<bool>&>;
    { c.pending() } -> std::same_as<link_backlog>;
    l.rewind(); // both ends idle, nothing unread: starts over (counts from 0)
    // hints: start fetching what a push or a receive reads first
    c.prefetch_producer();
    c.prefetch_consumer();
};

static_assert(spsc_link<ring>);
static_assert(spsc_link<packed_ring>);
static_assert(spsc_link<boost_spsc>);

// Calls f(std::type_identity<L>{}) with the implementation `which` names
// (resolved: not link_impl::automatic); hcube's ring in its packed layout
// when `packed` (links/ring.hpp).
template <class F>
decltype(auto) with_link_type(link_impl which, bool packed, F&& f) {
    if (which == link_impl::boost_spsc) return f(std::type_identity<boost_spsc>{});
    if (packed) return f(std::type_identity<packed_ring>{});
    return f(std::type_identity<ring>{});
}

// Every directed link of a machine, all of one implementation, index
// from * d + k; with a backend of several processes, only those with an end here. The links sit
// side by side in one arena and their slots in another, plane by plane
// (links/slots.hpp), both on transparent huge pages: at d = 12 the rings take
// 6 MB and a plane 3 MB, and on 4 KiB pages nearly every hop of a 12-step
// pattern missed the TLB.
class link_table {
public:
    link_table() = default;
    link_table(const link_table&) = delete;
    link_table& operator=(const link_table&) = delete;
    ~link_table() { clear(); }

    template <spsc_link L, class Needed>
    void build(std::size_t count, std::size_t capacity, Needed needed) {
        clear();
        const std::size_t stride = round_up(sizeof(L), cache_line);
        std::size_t used = 0;
        for (std::size_t i = 0; i < count; ++i)
            used += needed(i) ? 1 : 0;
        const std::size_t slots = L::slot_count(capacity);
        const std::size_t planes = std::min(slots, plane_slots), deep = slots - planes;
        arena_ = huge_arena(used * stride, "the links");
        slots_ = huge_arena(used * slots * cache_line, "the links' slots");
        links_ = huge_array<void*>(count, "the links' table");
        destroy_ = [](void* l) { static_cast<L*>(l)->~L(); };
        char* at = arena_.data();
        char* const deep_slots = slots_.data() + planes * used * cache_line;
        for (std::size_t i = 0, u = 0; i < count; ++i)
            if (needed(i)) {
                const slot_place place{slots ? slots_.data() + u * cache_line : nullptr,
                                       deep ? deep_slots + u * deep * cache_line : nullptr,
                                       std::uint32_t(used * cache_line),
                                       std::uint32_t(slots ? slots - 1 : 0)};
                links_[i] = new (at) L(capacity, place);
                at += stride;
                ++u;
            }
    }
    bool has(std::size_t i) const noexcept { return links_[i] != nullptr; }
    template <spsc_link L>
    L& at(std::size_t i) const {
        return *static_cast<L*>(links_[i]);
    }

private:
    static std::size_t round_up(std::size_t n, std::size_t to) noexcept {
        return (n + to - 1) / to * to;
    }
    void clear() noexcept {
        for (void* l : links_)
            if (l) destroy_(l);
        links_ = {};
    }

    huge_arena arena_, slots_;
    huge_array<void*> links_;
    void (*destroy_)(void*) = nullptr;
};

} // namespace hcube::detail
