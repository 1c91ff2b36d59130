// The link as Boost.Lockfree's spsc_queue (link_impl::boost_spsc), the channel
// the project was first specified with, kept selectable so that people who
// microbenchmark link-level concurrency can compare it with hcube's ring
// (links/ring.hpp). Private to emu/src; the operations are those of the
// spsc_link concept (links/link.hpp).
//
// spsc_queue copies whole elements in and has no delivery count, so around it:
//   producer line  a staging descriptor (back() fills it, publish() pushes a
//                  copy), the capacity, messages and bytes pushed, a stale
//                  copy of consumed
//   queue          spsc_queue's write index and read index on lines of their
//                  own, then its slots: one cache line each (line_slot)
//   consumer line  messages and bytes consumed, reading
//
// Memory ordering:
// - spsc_queue's own: push stores the write index with release after copying
//   the element in, pop and read_available load it with acquire, so the
//   descriptor and whatever its pointer refers to are visible to the consumer;
//   pop stores the read index with release and push loads it with acquire
//   before reusing a slot. A producer reads the read index on every push
//   (write_available): the third cache line of a hop that the ring avoids.
// - consumed: the consumer stores it with release after pop, which follows the
//   copy out of the payload; a producer that loads it with acquire may reuse a
//   borrowed buffer or count a synchronous send as delivered. It is also what
//   bounds the producer (pushed - consumed < capacity), not the queue's own
//   room: a forwarding consumer pops a message from the queue when it hands
//   it on, and counts it consumed only once it was taken at the far end.
//   consumed_cache is the producer's stale copy, re-read only when the link
//   looks full, as the ring's head_cache.
// - pushed and the byte counts are atomics only so that the deadlock report
//   may read them from another thread while both ends are parked (their
//   release stores of `parked` order them); each has one writer, which updates
//   it with a relaxed load and store, no read-modify-write.
// - reading: as in the ring (links/ring.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <boost/lockfree/spsc_queue.hpp>
#include <tbb/cache_aligned_allocator.h>

#include "message.hpp"
#include "slots.hpp"

namespace hcube::detail {

class boost_spsc {
public:
    // No slots of the link table's: spsc_queue allocates its own.
    static std::size_t slot_count(std::size_t) noexcept { return 0; }
    // Holds up to `capacity` (>= 1) messages.
    boost_spsc(std::size_t capacity, slot_place)
        : queue_(capacity) {
        producer_.capacity = capacity;
    }
    boost_spsc(const boost_spsc&) = delete;
    boost_spsc& operator=(const boost_spsc&) = delete;

    // ---- producer ----

    bool writable() noexcept {
        auto& p = producer_;
        const std::uint64_t pushed = p.pushed.load(std::memory_order_relaxed);
        if (pushed - p.consumed_cache < p.capacity) return true;
        p.consumed_cache = consumer_.consumed.load(std::memory_order_acquire);
        return pushed - p.consumed_cache < p.capacity;
    }
    descriptor& back() noexcept { return producer_.next.d; }
    void publish() noexcept {
        auto& p = producer_;
        queue_.push(p.next);
        bump(p.pushed, 1);
        bump(p.bytes, p.next.d.bytes);
    }
    std::uint64_t pushed() const noexcept {
        return producer_.pushed.load(std::memory_order_relaxed);
    }

    void prefetch_producer() const noexcept {}

    // ---- consumer ----

    void prefetch_consumer() const noexcept {}

    bool empty() const noexcept { return queue_.read_available() == 0; }
    const descriptor& front() const noexcept { return queue_.front().d; }
    void pop() noexcept {
        auto& c = consumer_;
        const std::uint32_t bytes = queue_.front().d.bytes;
        queue_.pop();
        bump(c.bytes, bytes);
        c.consumed.store(c.consumed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }

    // ---- a forwarding consumer (links/link.hpp) ----

    // Message n is always the queue's front: messages are handed on in order.
    bool forwardable(std::uint64_t) const noexcept { return !empty(); }
    const descriptor& forwarded(std::uint64_t) const noexcept { return front(); }
    void hand_on(std::uint64_t) noexcept {
        auto& c = consumer_;
        const std::uint32_t bytes = queue_.front().d.bytes;
        queue_.pop();
        bump(c.bytes, bytes);
    }
    void taken_up_to(std::uint64_t n) noexcept {
        consumer_.consumed.store(n, std::memory_order_release);
    }

    // ---- either side ----

    std::uint64_t consumed() const noexcept {
        return consumer_.consumed.load(std::memory_order_acquire);
    }
    std::atomic<bool>& reading() noexcept { return consumer_.reading; }

    // spsc_queue's own indices just go on; the counts start over, as the
    // ring's do (a forwarding consumer counts each run's messages from 0).
    void rewind() noexcept {
        producer_.pushed.store(0, std::memory_order_relaxed);
        producer_.bytes.store(0, std::memory_order_relaxed);
        producer_.consumed_cache = 0;
        consumer_.consumed.store(0, std::memory_order_relaxed);
        consumer_.bytes.store(0, std::memory_order_relaxed);
    }

    // For a report made from another thread while neither end moves.
    link_backlog pending() const noexcept {
        return {producer_.pushed.load(std::memory_order_relaxed) -
                    consumer_.consumed.load(std::memory_order_acquire),
                producer_.bytes.load(std::memory_order_relaxed) -
                    consumer_.bytes.load(std::memory_order_relaxed)};
    }

private:
    struct alignas(cache_line) line_slot {
        descriptor d;
    };
    static void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by) noexcept {
        counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }

    struct alignas(cache_line) producer_side {
        line_slot next;
        std::size_t capacity = 0;
        std::uint64_t consumed_cache = 0; // a lower bound of consumer_.consumed
        std::atomic<std::uint64_t> pushed{0};
        std::atomic<std::uint64_t> bytes{0};
    };
    struct alignas(cache_line) consumer_side {
        std::atomic<std::uint64_t> consumed{0};
        std::atomic<std::uint64_t> bytes{0};
        std::atomic<bool> reading{false};
    };
    producer_side producer_;
    boost::lockfree::spsc_queue<line_slot,
                                boost::lockfree::allocator<tbb::cache_aligned_allocator<line_slot>>>
        queue_;
    consumer_side consumer_;
};

} // namespace hcube::detail
