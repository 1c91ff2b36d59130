// The link implementations on their own, apart from node (emu/src/links/):
// every property the spsc_link concept promises (links/link.hpp), checked the
// same way for hcube's ring (both layouts: ring, packed_ring) and for
// Boost.Lockfree's spsc_queue; and how config::links and HCUBE_LINKS choose
// between them.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <hcube/error.hpp>
#include <hcube/machine.hpp>

#include "links/link.hpp"
#include "sanitizers.hpp"

using namespace hcube;
using detail::boost_spsc;
using detail::descriptor;
using detail::link_table;
using detail::packed_ring;
using detail::payload;
using detail::ring;

namespace {

// Message n (from 1) carries n in its arrival steps, n % 33 inline bytes
// (every byte a function of n) and n in its type.
void push_message(auto& l, std::uint64_t n) {
    descriptor& d = l.back();
    d.arrival = {double(n), std::int64_t(n)};
    d.bytes = std::uint32_t(n % 33);
    d.type = std::uint32_t(n);
    d.kind = payload::inline_bytes;
    unsigned char bytes[32];
    for (std::size_t i = 0; i < sizeof bytes; ++i)
        bytes[i] = static_cast<unsigned char>(n * 7 + i);
    d.store_inline(bytes, d.bytes);
    l.publish();
}

// True when d is message n, intact.
bool is_message(const descriptor& d, std::uint64_t n) {
    unsigned char bytes[32];
    d.load_inline(bytes);
    bool ok = d.arrival.steps == std::int64_t(n) && d.bytes == n % 33 && d.type == n;
    for (std::size_t i = 0; i < d.bytes; ++i)
        ok = ok && bytes[i] == static_cast<unsigned char>(n * 7 + i);
    return ok;
}

// True when the front message is message n, intact.
bool front_is(const auto& l, std::uint64_t n) {
    return is_message(l.front(), n);
}

// Sets HCUBE_LINKS (nullopt: unsets it) for one scope, then restores it: the
// suite itself may run under HCUBE_LINKS=boost (tests/meson.build).
class links_env {
public:
    explicit links_env(std::optional<std::string> value) {
        if (const char* old = std::getenv("HCUBE_LINKS")) old_ = old;
        set(value);
    }
    ~links_env() { set(old_); }
    links_env(const links_env&) = delete;
    links_env& operator=(const links_env&) = delete;

private:
    static void set(const std::optional<std::string>& v) {
        if (v)
            setenv("HCUBE_LINKS", v->c_str(), 1);
        else
            unsetenv("HCUBE_LINKS");
    }
    std::optional<std::string> old_;
};

link_impl ran_with(link_impl asked) {
    config c;
    c.dim = 1;
    c.links = asked;
    machine m(c);
    const run_report r = m.run([](node& me) {
        const int x = me.id();
        int y = -1;
        me.exchange(0, std::span(&x, 1), std::span(&y, 1));
        if (y != (x ^ 1)) throw std::runtime_error("wrong payload");
    });
    CHECK(m.cfg().links == r.link_implementation);
    return r.link_implementation;
}

// A table of one link of capacity `capacity`, as the machine builds them.
template <detail::spsc_link L>
L& one_link(link_table& t, std::size_t capacity) {
    t.build<L>(1, capacity, [](std::size_t) { return true; });
    return t.at<L>(0);
}

} // namespace

TEST_CASE_TEMPLATE("a link delivers in FIFO order and counts pushes and deliveries", L, ring,
                   packed_ring, boost_spsc) {
    link_table t;
    L& l = one_link<L>(t, 16);
    CHECK(l.empty());
    for (std::uint64_t n = 1; n <= 10; ++n) {
        REQUIRE(l.writable());
        push_message(l, n);
        CHECK(l.pushed() == n);
    }
    CHECK(l.pending().messages == 10);
    std::uint64_t bytes = 0;
    for (std::uint64_t n = 1; n <= 10; ++n)
        bytes += n % 33;
    CHECK(l.pending().bytes == bytes);
    for (std::uint64_t n = 1; n <= 10; ++n) {
        REQUIRE_FALSE(l.empty());
        CHECK(front_is(l, n));
        CHECK(l.consumed() == n - 1);
        l.pop();
        CHECK(l.consumed() == n);
    }
    CHECK(l.empty());
    CHECK(l.pending().messages == 0);
    CHECK(l.pending().bytes == 0);
}

// The runs of a machine: between them every link is rewound (machine.cpp,
// drain). A message number whose slot kept its sequence number would then
// look like a new message in that slot.
TEST_CASE_TEMPLATE("a link rewound between runs holds nothing stale and counts from 0", L, ring,
                   packed_ring, boost_spsc) {
    for (const std::size_t capacity : {1u, 3u, 16u}) {
        link_table t;
        L& l = one_link<L>(t, capacity);
        for (const std::uint64_t run : {1u, 2u, 5u, 1u, 40u, 0u, 3u}) {
            CAPTURE(capacity);
            CAPTURE(run);
            const std::uint64_t base = l.pushed();
            for (std::uint64_t n = 1; n <= run; ++n) {
                REQUIRE(l.writable());
                push_message(l, n);
                REQUIRE_FALSE(l.empty());
                CHECK(front_is(l, n));
                l.pop();
                CHECK(l.consumed() == base + n);
            }
            CHECK(l.empty());
            l.rewind();
            CHECK(l.empty());
            CHECK(l.pending().messages == 0);
            CHECK(l.pushed() == 0);
            CHECK(l.consumed() == 0);
        }
    }
}

TEST_CASE_TEMPLATE("a link holds exactly its capacity, then refuses until a pop", L, ring,
                   packed_ring, boost_spsc) {
    // 1 (link_capacity 0 and 1), a power of two, and sizes the ring rounds up.
    for (const std::size_t capacity : {1u, 3u, 5u, 16u}) {
        CAPTURE(capacity);
        link_table t;
        L& l = one_link<L>(t, capacity);
        std::uint64_t n = 0;
        while (l.writable() && n < 100)
            push_message(l, ++n);
        CHECK(n == capacity);
        CHECK(l.pending().messages == capacity);
        CHECK_FALSE(l.writable());
        CHECK(front_is(l, 1));
        l.pop();
        CHECK(l.writable());
        push_message(l, ++n);
        CHECK_FALSE(l.writable());
        for (std::uint64_t m = 2; m <= n; ++m) {
            REQUIRE_FALSE(l.empty());
            CHECK(front_is(l, m));
            l.pop();
        }
        CHECK(l.empty());
    }
}

// The MPI backend's sending side (mpi/link_bridge.hpp): a message handed on
// keeps its slot, so the producer sees the link as full as in one process,
// until the far end's count of taken messages gives the slots back.
TEST_CASE_TEMPLATE("a forwarding consumer holds each slot until the message was taken", L, ring,
                   packed_ring, boost_spsc) {
    for (const std::size_t capacity : {1u, 3u, 16u}) {
        CAPTURE(capacity);
        link_table t;
        L& l = one_link<L>(t, capacity);
        std::uint64_t pushed = 0, handed = 0;
        // Rounds of: fill, hand every message on, then hear of one taken,
        // one more sent and handed on, then of all taken; the slots wrap.
        for (int round = 0; round < 5; ++round) {
            CAPTURE(round);
            const std::uint64_t base = pushed;
            while (l.writable() && pushed - base < 100)
                push_message(l, ++pushed);
            CHECK(pushed - base == capacity);
            for (; l.forwardable(handed); ++handed) {
                CHECK(is_message(l.forwarded(handed), handed + 1));
                l.hand_on(handed);
            }
            CHECK(handed == pushed);
            CHECK_FALSE(l.writable()); // every slot still charged
            CHECK(l.consumed() == base);
            l.taken_up_to(base + 1);
            CHECK(l.consumed() == base + 1);
            REQUIRE(l.writable());
            push_message(l, ++pushed);
            CHECK_FALSE(l.writable());
            REQUIRE(l.forwardable(handed));
            CHECK(is_message(l.forwarded(handed), pushed));
            l.hand_on(handed++);
            CHECK_FALSE(l.forwardable(handed));
            l.taken_up_to(pushed);
            CHECK(l.consumed() == pushed);
            CHECK(l.writable());
        }
        // The next run counts from 0 again, at both ends of a link that
        // crosses processes: the first message of this one is number 0.
        l.rewind();
        CHECK(l.pushed() == 0);
        push_message(l, 1);
        REQUIRE(l.forwardable(0));
        CHECK(is_message(l.forwarded(0), 1));
        l.hand_on(0);
        l.taken_up_to(1);
        CHECK(l.consumed() == 1);
        CHECK(l.writable());
    }
}

TEST_CASE_TEMPLATE("a link wraps around its slots many times", L, ring, packed_ring, boost_spsc) {
    // Batches of 1..capacity messages, so the indices wrap at every offset.
    link_table t;
    L& l = one_link<L>(t, 3);
    std::uint64_t pushed = 0, popped = 0;
    bool ok = true;
    for (int round = 0; round < 600; ++round) {
        const int batch = 1 + round % 3;
        for (int i = 0; i < batch; ++i) {
            ok = ok && l.writable();
            push_message(l, ++pushed);
        }
        for (int i = 0; i < batch; ++i) {
            ok = ok && !l.empty() && front_is(l, ++popped);
            l.pop();
        }
        ok = ok && l.empty() && l.consumed() == popped;
    }
    CHECK(ok);
    CHECK(popped == 1200);
}

// One producer and one consumer thread, as in a run: every message arrives
// once, in order, intact; every eighth is a borrowed buffer that the
// producer rewrites as soon as consumed() says it was delivered, so a
// delivery count published too early shows as a torn copy (and, under
// ThreadSanitizer, as a race).
TEST_CASE_TEMPLATE("a link survives a producer and a consumer thread", L, ring, packed_ring,
                   boost_spsc) {
    const std::uint64_t messages = test::sanitized ? 10000 : 100000;
    link_table t;
    L& l = one_link<L>(t, 4);
    std::vector<std::uint64_t> lent(8);
    std::atomic<std::uint64_t> bad{0};
    std::thread producer([&] {
        for (std::uint64_t n = 1; n <= messages; ++n) {
            while (!l.writable())
                std::this_thread::yield();
            if (n % 8) {
                push_message(l, n);
                continue;
            }
            // Every word of the lent buffer is n until the consumer copied it.
            for (auto& w : lent)
                w = n;
            descriptor& d = l.back();
            d.arrival = {double(n), std::int64_t(n)};
            d.bytes = std::uint32_t(lent.size() * sizeof(std::uint64_t));
            d.type = std::uint32_t(n);
            d.kind = payload::borrowed;
            d.ptr = lent.data();
            l.publish();
            const std::uint64_t seq = l.pushed();
            while (l.consumed() < seq)
                std::this_thread::yield();
        }
    });
    for (std::uint64_t n = 1; n <= messages; ++n) {
        while (l.empty())
            std::this_thread::yield();
        const descriptor& d = l.front();
        if (d.kind == payload::borrowed) {
            std::uint64_t copy[8];
            std::memcpy(copy, d.ptr, d.bytes);
            for (const std::uint64_t w : copy)
                if (w != n) bad.fetch_add(1);
            if (d.arrival.steps != std::int64_t(n)) bad.fetch_add(1);
        } else if (!front_is(l, n)) {
            bad.fetch_add(1);
        }
        l.pop();
    }
    producer.join();
    CHECK(bad.load() == 0);
    CHECK(l.empty());
    CHECK(l.consumed() == messages);
}

TEST_CASE("link implementation names") {
    CHECK(to_string(link_impl::ring) == "ring");
    CHECK(to_string(link_impl::boost_spsc) == "boost");
    CHECK(to_string(link_impl::automatic) == "automatic");
    CHECK(parse_link_impl("ring") == link_impl::ring);
    CHECK(parse_link_impl("boost") == link_impl::boost_spsc);
    CHECK_FALSE(parse_link_impl("automatic"));
    CHECK_FALSE(parse_link_impl("Ring"));
    CHECK_FALSE(parse_link_impl(""));
}

TEST_CASE("config::links chooses the links, HCUBE_LINKS only when automatic") {
    {
        const links_env env(std::nullopt);
        CHECK(ran_with(link_impl::automatic) == link_impl::ring);
        CHECK(ran_with(link_impl::ring) == link_impl::ring);
        CHECK(ran_with(link_impl::boost_spsc) == link_impl::boost_spsc);
    }
    {
        const links_env env("boost");
        CHECK(ran_with(link_impl::automatic) == link_impl::boost_spsc);
        CHECK(ran_with(link_impl::ring) == link_impl::ring);
    }
    {
        const links_env env("ring");
        CHECK(ran_with(link_impl::automatic) == link_impl::ring);
        CHECK(ran_with(link_impl::boost_spsc) == link_impl::boost_spsc);
    }
    {
        const links_env env(""); // set but empty: as if unset
        CHECK(ran_with(link_impl::automatic) == link_impl::ring);
    }
    {
        const links_env env("spsc");
        config c;
        c.dim = 1;
        CHECK_THROWS_WITH_AS(machine{c},
                             "machine: HCUBE_LINKS=spsc names no link implementation; use ring "
                             "or boost (or unset it: ring)",
                             usage_error);
        c.links = link_impl::ring; // an explicit choice ignores the variable
        CHECK_NOTHROW(machine{c});
    }
}
