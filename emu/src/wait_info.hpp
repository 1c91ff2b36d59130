// What a waiting node waits for, and what can end the wait: the words the
// parking protocol (park.hpp), the horizon and the deadlock report share.
// Private to emu/src.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include <hcube/config.hpp>

namespace hcube::detail {

// What a parked node waits for, kept for the deadlock report. Two words, so
// that it shares a line with the rest of a parking node's state (node_state).
struct wait_info {
    enum kind_t : std::uint8_t {
        none,
        recv,
        send_full,
        delivery,
        recv_any,
        routed,
        routed_any,
        routed_loan
    };
    std::size_t bytes = 0;  // expected bytes for an exact receive, or 0
    std::int32_t peer = -1; // node at the other end (or routed source)
    std::int16_t dim = -1;  // link, or -1
    kind_t kind = none;
    bool exact = false;

    constexpr wait_info() noexcept = default;
    constexpr wait_info(kind_t what, int link, int other, std::size_t expect,
                        bool is_exact) noexcept
        : bytes(expect)
        , peer(other)
        , dim(std::int16_t(link))
        , kind(what)
        , exact(is_exact) {}
};
static_assert(sizeof(wait_info) == 16 && max_dim < 32768);

// What a waker made happen, as bits of node_state::waiting: a message
// arrived on a link, a message was taken off one (room, or a delivery), or
// anything else (routed messages placed, loans returned, a backend's traffic).
// A node that waits to receive on link k+1 is then not woken when its
// partner on link k takes its last message: in the d = 12 step pattern with
// fibers, those wakes were a quarter of all resumes (docs/runtime.md).
enum class wake_event : std::uint8_t { arrival = 1, take = 2, any = 3 };

// The events that can make a wait of kind k ready (node.cpp, wait_until).
constexpr wake_event ended_by(wait_info::kind_t k) noexcept {
    switch (k) {
    case wait_info::recv:
    case wait_info::recv_any:
        return wake_event::arrival;
    case wait_info::send_full:
    case wait_info::delivery:
        return wake_event::take;
    default:
        return wake_event::any;
    }
}

// A choosing node's best message so far: the least virtual arrival, then the
// lower link (recv_any) or source (recv_routed from any_source).
struct choice {
    double arrival = std::numeric_limits<double>::infinity();
    int from = -1; // none while arrival is infinite
    friend bool operator<(const choice& a, const choice& b) noexcept {
        return a.arrival < b.arrival || (a.arrival == b.arrival && a.from < b.from);
    }
};

// A chooser's candidate as others read it, and the word the last node to
// park gives it to take that candidate (horizon.hpp). The candidate is
// written by its node only, read while the chooser is parked (its parked flag
// orders the two) or briefly awake: a cancelled run, when the reading no
// longer matters, or the caller's node woken by its executor's timer, which
// publishes the same candidate again or decides. The word names the choice
// by its number, so one that comes after the node decided by itself never
// decides its next choice. So relaxed atomics suffice for the candidate.
class published_choice {
public:
    // recv_any's: `open` holds the links that were empty (bit j: link j),
    // whose senders could still bring an earlier message.
    void store_link(choice c, std::uint32_t open) noexcept { store(c, open, false); }
    // recv_routed from any_source's: c.from is a node, not a link.
    void store_source(choice c) noexcept { store(c, 0, true); }
    choice load() const noexcept {
        return {arrival_.load(std::memory_order_relaxed), from_.load(std::memory_order_relaxed)};
    }
    std::uint32_t open() const noexcept { return open_.load(std::memory_order_relaxed); }
    bool by_source() const noexcept { return by_source_.load(std::memory_order_relaxed); }

    // Which of the node's choices this is. Read before the candidate:
    // acquire, so a reader that sees the next number sees the candidate
    // cleared or the next one, never this one under the next number.
    std::uint64_t number() const noexcept { return number_.load(std::memory_order_acquire); }
    // The word: take the candidate of choice `number` (seq_cst: seen by the
    // chooser before or with the ring that wakes it).
    void tell(std::uint64_t number) noexcept { told_.store(number, std::memory_order_seq_cst); }
    // Whether the word names the choice being made.
    bool told() const noexcept { return told_.load(std::memory_order_seq_cst) == number(); }

    // The choice is made (by its node only): no candidate left, and a word
    // that comes later names a past choice.
    void next() noexcept {
        store({}, 0, false);
        number_.store(number_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    // Before a run: no candidate, no word.
    void reset() noexcept {
        store({}, 0, false);
        told_.store(no_word, std::memory_order_relaxed);
    }

private:
    void store(choice c, std::uint32_t open, bool by_source) noexcept {
        arrival_.store(c.arrival, std::memory_order_relaxed);
        from_.store(c.from, std::memory_order_relaxed);
        open_.store(open, std::memory_order_relaxed);
        by_source_.store(by_source, std::memory_order_relaxed);
    }

    static constexpr std::uint64_t no_word = ~std::uint64_t{0};
    std::atomic<double> arrival_{std::numeric_limits<double>::infinity()};
    std::atomic<int> from_{-1};
    std::atomic<std::uint32_t> open_{0};
    std::atomic<bool> by_source_{false};
    std::atomic<std::uint64_t> number_{0};
    std::atomic<std::uint64_t> told_{no_word};
};

// What a blocked node waits for, in words ("recv on dim 2 from node 4, ...").
std::string describe_wait(int dim, const wait_info& w);

} // namespace hcube::detail
