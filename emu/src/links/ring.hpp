// hcube's own link (link_impl::ring, the default): a bounded single-producer
// single-consumer ring of message descriptors. Private to emu/src; the
// operations are those of the spsc_link concept (links/link.hpp).
//
// It follows rigtorp/SPSCQueue and Boost.Lockfree's spsc_queue (a power-of-two
// ring, indices on their own cache lines, the producer caching the consumer's
// index) with one change that matters for latency: the producer also writes a
// sequence number into each slot, so a waiting consumer polls the slot it will
// read next instead of a shared write index. A message then costs one cache
// line moving from producer to consumer; spsc_queue moves three (write index,
// slot, and read index back to the producer), and its bare ping-pong measured
// about twice a raw cross-core flag's on a 2-core machine, the whole budget
// of a link round trip (docs/design.md, bench-runtime).
//
//   producer line  where the slots are, capacity, tail, head_cache  (written by the producer)
//   consumer line  where the slots are, reading, head              (written by the consumer)
//   slots          one cache line each: seq + descriptor, in the link
//                  table's planes (links/slots.hpp)
//
// packed_ring puts both sides on one line (and where the slots are once). A
// line written by both ends moves between their cores once more per message,
// which costs a link whose ends spin on two cores; but where nodes outnumber
// the cores most links join nodes on one core, and a node-step then misses on
// one header line instead of two.
// The machine packs its rings unless its nodes spin (machine.cpp).
//
// Memory ordering:
// - slot.seq: the producer fills the descriptor, then stores seq = n + 1 with
//   release; the consumer of message n loads it with acquire and compares, so
//   the descriptor and whatever its pointer refers to are visible once it
//   matches.
// - head: the consumer stores it with release after it has copied the payload
//   out of a message and is done with its slot; a producer that loads it with
//   acquire may reuse those slots, reuse a borrowed buffer, or count a
//   synchronous send as delivered (consumed()).
// - head_cache is the producer's own stale copy of head: head only grows, so a
//   stale copy only underestimates the free space, and the producer re-reads
//   head only when the ring looks full.
// - reading guards borrowed buffers when a run is cancelled: the consumer sets
//   it (seq_cst) before copying from a borrowed buffer and then checks for
//   cancellation; an owner unwinding after the cancel flag was set waits while
//   it is true. So a receiver either saw the cancel and never touches the
//   buffer, or the owner sees it reading and waits for the (bounded) copy.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include <hcube/config.hpp>

#include "message.hpp"
#include "slots.hpp"

namespace hcube::detail {

template <bool Packed>
class alignas(cache_line) basic_ring {
    struct slot;

public:
    // The slots it needs (their place is the link table's, links/slots.hpp).
    static std::size_t slot_count(std::size_t capacity) noexcept { return std::bit_ceil(capacity); }
    // Holds up to `capacity` (>= 1) messages in slot_count(capacity)
    // zero-filled slots at `place`. A zero slot is an empty one, so none is
    // written here: a slot's page becomes resident when a message first uses
    // it, and a ring of 2^20 slots costs only what its traffic touches.
    basic_ring(std::size_t capacity, slot_place place)
        : producer_{place, std::uint32_t(capacity)} {
        if constexpr (!Packed) consumer_.place = place;
    }
    basic_ring(const basic_ring&) = delete;
    basic_ring& operator=(const basic_ring&) = delete;

    // ---- producer ----

    // True when a push would succeed; refreshes the cached head when needed.
    bool writable() noexcept {
        auto& p = producer_;
        if (p.tail - p.head_cache < p.capacity) return true;
        p.head_cache = consumer_.head.load(std::memory_order_acquire);
        return p.tail - p.head_cache < p.capacity;
    }

    // The next message's descriptor, filled in place (only the fields and
    // payload bytes it needs: copying whole descriptors into the slot slowed a
    // hop measurably) and then published; only when writable().
    descriptor& back() noexcept {
        auto& p = producer_;
        return slot_at(p.place, p.tail).d;
    }
    void publish() noexcept {
        auto& p = producer_;
        slot& s = slot_at(p.place, p.tail);
        ++p.tail;
        s.seq.store(p.tail, std::memory_order_release);
    }

    // Messages pushed so far; message n (from 1) is delivered once consumed() >= n.
    std::uint64_t pushed() const noexcept { return producer_.tail; }

    // Its line, fetched ahead of a push (a miss in flight with others).
    void prefetch_producer() const noexcept { __builtin_prefetch(&producer_, 1); }

    // ---- consumer ----

    void prefetch_consumer() const noexcept { __builtin_prefetch(&consumer_, 1); }

    bool empty() const noexcept {
        const std::uint64_t h = consumer_.head.load(std::memory_order_relaxed);
        return slot_at(consumer_place(), h).seq.load(std::memory_order_acquire) != h + 1;
    }

    // The oldest message; only when !empty().
    const descriptor& front() const noexcept {
        return slot_at(consumer_place(), consumer_.head.load(std::memory_order_relaxed)).d;
    }

    // Releases the front slot (and with it the message) to the producer.
    void pop() noexcept {
        auto& h = consumer_.head;
        h.store(h.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }

    // ---- a forwarding consumer (links/link.hpp) ----

    bool forwardable(std::uint64_t n) const noexcept {
        return slot_at(consumer_place(), n).seq.load(std::memory_order_acquire) == n + 1;
    }
    const descriptor& forwarded(std::uint64_t n) const noexcept {
        return slot_at(consumer_place(), n).d;
    }
    // The slot stays the message's until taken_up_to: nothing to do here.
    void hand_on(std::uint64_t) noexcept {}
    // As pop() n - head times, with one store (release, as pop's).
    void taken_up_to(std::uint64_t n) noexcept {
        consumer_.head.store(n, std::memory_order_release);
    }

    // ---- either side ----

    std::uint64_t consumed() const noexcept {
        return consumer_.head.load(std::memory_order_acquire);
    }

    std::atomic<bool>& reading() noexcept { return consumer_.reading; }

    // With both ends idle and nothing unread (after a run): starts over at
    // slot 0, so the next run's messages use the lines this run's did. A ring
    // that moved on by a slot per run brought a cold line into every hop of a
    // one-word pattern (at d = 12, 3 MB of them per run).
    void rewind() noexcept {
        const std::uint64_t n = consumer_.head.load(std::memory_order_relaxed);
        if (n == 0) return;
        const slot_place& place = consumer_place();
        for (std::uint64_t i = n - std::min<std::uint64_t>(n, place.mask + 1); i < n; ++i)
            slot_at(place, i).seq.store(0, std::memory_order_relaxed);
        consumer_.head.store(0, std::memory_order_relaxed);
        producer_.tail = 0;
        producer_.head_cache = 0;
    }

    // Messages not yet received and their bytes, for a report made from another
    // thread while neither end moves: it reads only published slots (their seq,
    // with acquire), never an index the producer owns.
    link_backlog pending() const noexcept {
        const slot_place& place = consumer_place();
        const std::uint64_t head = consumer_.head.load(std::memory_order_acquire);
        link_backlog b;
        for (std::uint64_t n = head; n - head <= place.mask; ++n) {
            const slot& s = slot_at(place, n);
            if (s.seq.load(std::memory_order_acquire) != n + 1) break;
            b.messages += 1;
            b.bytes += s.d.bytes;
        }
        return b;
    }

private:
    struct alignas(cache_line) slot {
        std::atomic<std::uint64_t> seq{0};
        descriptor d;
    };
    static_assert(sizeof(slot) == cache_line, "a slot (seq + descriptor) is one cache line");

    static slot& slot_at(const slot_place& place, std::uint64_t n) noexcept {
        return *static_cast<slot*>(place.at(n));
    }

    // Each side on a line of its own, with its own copy of where the slots
    // are (read-only, so the copies never move between cores); or both sides
    // on one line, with one copy (Packed).
    struct no_place {};
    static constexpr std::size_t side_align = Packed ? alignof(std::uint64_t) : cache_line;
    struct alignas(side_align) producer_side {
        slot_place place;
        std::uint32_t capacity;       // at most max_link_capacity (2^20)
        std::uint64_t tail = 0;       // messages pushed
        std::uint64_t head_cache = 0; // a lower bound of consumer_.head
    };
    struct alignas(side_align) consumer_side {
        [[no_unique_address]] std::conditional_t<Packed, no_place, slot_place> place;
        std::atomic<bool> reading{false};
        std::atomic<std::uint64_t> head{0}; // messages consumed
    };
    const slot_place& consumer_place() const noexcept {
        if constexpr (Packed)
            return producer_.place;
        else
            return consumer_.place;
    }
    producer_side producer_;
    consumer_side consumer_;
};

using ring = basic_ring<false>;
using packed_ring = basic_ring<true>;
static_assert(sizeof(ring) == 2 * cache_line && sizeof(packed_ring) == cache_line);
static_assert(max_link_capacity <= std::size_t(1) << 31, "mask and capacity fit 32 bits");

} // namespace hcube::detail
