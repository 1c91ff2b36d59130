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
//   producer line  tail, head_cache, slots, mask, capacity     (written by the producer)
//   consumer line  head, reading, slots, mask                   (written by the consumer)
//   slots          one cache line each: seq + descriptor, right after the two
//                  lines (the link table's arena, links/link.hpp)
//
// packed_ring puts both sides on one line. A line written by both ends moves
// between their cores once more per message, which costs a link whose ends
// spin on two cores; but where nodes outnumber the cores most links join nodes
// on one core, and a node-step then misses on one header line instead of two.
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

#include <hcube/config.hpp>

#include "message.hpp"

namespace hcube::detail {

template <bool Packed>
class alignas(cache_line) basic_ring {
    struct slot;

public:
    // The bytes its slots take after the ring itself.
    static std::size_t extra_bytes(std::size_t capacity) noexcept {
        return std::bit_ceil(capacity) * sizeof(slot);
    }
    // Holds up to `capacity` (>= 1) messages; its slots are at `extra`,
    // extra_bytes(capacity) zero-filled bytes aligned to a cache line (the link
    // table's arena). A zero slot is an empty one, so none is written here:
    // a slot's page becomes resident when a message first uses it, and a
    // ring of 2^20 slots costs only what its traffic touches.
    basic_ring(std::size_t capacity, void* extra)
        : producer_{static_cast<slot*>(extra), std::uint32_t(std::bit_ceil(capacity) - 1),
                    std::uint32_t(capacity)}
        , consumer_{producer_.slots, producer_.mask} {}
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
        return p.slots[p.tail & p.mask].d;
    }
    void publish() noexcept {
        auto& p = producer_;
        slot& s = p.slots[p.tail & p.mask];
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
        const auto& c = consumer_;
        const std::uint64_t h = c.head.load(std::memory_order_relaxed);
        return c.slots[h & c.mask].seq.load(std::memory_order_acquire) != h + 1;
    }

    // The oldest message; only when !empty().
    const descriptor& front() const noexcept {
        const auto& c = consumer_;
        return c.slots[c.head.load(std::memory_order_relaxed) & c.mask].d;
    }

    // Releases the front slot (and with it the message) to the producer.
    void pop() noexcept {
        auto& h = consumer_.head;
        h.store(h.load(std::memory_order_relaxed) + 1, std::memory_order_release);
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
        for (std::uint64_t i = n - std::min<std::uint64_t>(n, consumer_.mask + 1); i < n; ++i)
            consumer_.slots[i & consumer_.mask].seq.store(0, std::memory_order_relaxed);
        consumer_.head.store(0, std::memory_order_relaxed);
        producer_.tail = 0;
        producer_.head_cache = 0;
    }

    // Messages not yet received and their bytes, for a report made from another
    // thread while neither end moves: it reads only published slots (their seq,
    // with acquire), never an index the producer owns.
    link_backlog pending() const noexcept {
        const auto& c = consumer_;
        const std::uint64_t head = c.head.load(std::memory_order_acquire);
        link_backlog b;
        for (std::uint64_t n = head; n - head <= c.mask; ++n) {
            const slot& s = c.slots[n & c.mask];
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

    // Each side on a line of its own, or both on one (Packed).
    static constexpr std::size_t side_align = Packed ? alignof(std::uint64_t) : cache_line;
    struct alignas(side_align) producer_side {
        slot* slots;
        std::uint32_t mask; // capacities are at most max_link_capacity (2^20)
        std::uint32_t capacity;
        std::uint64_t tail = 0;       // messages pushed
        std::uint64_t head_cache = 0; // a lower bound of consumer_.head
    };
    struct alignas(side_align) consumer_side {
        slot* slots;
        std::uint32_t mask;
        std::atomic<bool> reading{false};
        std::atomic<std::uint64_t> head{0}; // messages consumed
    };
    producer_side producer_;
    consumer_side consumer_;
};

using ring = basic_ring<false>;
using packed_ring = basic_ring<true>;
static_assert(sizeof(ring) == 2 * cache_line && sizeof(packed_ring) == cache_line);
static_assert(max_link_capacity <= std::size_t(1) << 31, "mask and capacity fit 32 bits");

} // namespace hcube::detail
