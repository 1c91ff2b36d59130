// The node interface: everything a node program (and every collective) may use.
//
// A node owns its memory; the only way data moves is through the primitives
// below, each on one hypercube link (dimension k: the link to id() ^ 2^k) or,
// for non-neighbours, through the E-cube router. All element types must be
// trivially copyable. Every primitive charges the cost model (config.hpp) to
// the node's virtual clock; see docs/runtime.md for the exact rules.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <hcube/config.hpp>

namespace hcube {

class node;

namespace detail {
struct machine_state;
struct node_state;

// Every message carries its element type's id, and a receive into another
// type is a usage_error naming both types (even when their sizes agree).
// Ids are process-wide, one per type (registered on first use; comparing
// two is one instruction), and fit the 24 bits a link slot has for them.
inline constexpr std::uint32_t max_wire_type_id = (1u << 24) - 1;
std::uint32_t register_wire_type(const std::type_info& type, std::size_t size);
// "double (8-byte elements)".
std::string wire_type_name(std::uint32_t id);

template <class T>
std::uint32_t wire_type_id() {
    static const std::uint32_t id = register_wire_type(typeid(T), sizeof(T));
    return id;
}

// For tests of the parking protocol: how many times node `id` of `me`'s
// machine has parked since the machine was made, and whether it is parked now
// with no wake-up on its way (what the deadlock watchdog samples).
struct park_count {
    std::uint64_t parks = 0;
    bool parked = false;
};
park_count parks_of(const node& me, int id) noexcept;
// For tests of the deadlock watchdog: `hook` runs in the node whose park left
// no node active, just before it decides for the parked ones, where a test
// stalls it to play a node kept off its core; nullptr removes it.
void set_decider_hook(void (*hook)()) noexcept;
} // namespace detail

template <class T>
concept wire_type = std::is_trivially_copyable_v<T> && !std::is_const_v<T>;

template <class R>
concept wire_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    wire_type<std::ranges::range_value_t<R>>;

// Which way an exchange_all transfer moves data on its link.
enum class transfer_way : std::uint8_t { both, send_only, recv_only };

// One link's part of an exchange_all: send `out` on dimension `dim` and
// receive exactly in.size() elements from the same link into `in`. A
// one-sided transfer (send_only, recv_only) moves one message, no empty one
// the other way; the unused span is ignored.
template <wire_type T>
struct transfer {
    int dim;
    std::span<const T> out;
    std::span<T> in;
    transfer_way way = transfer_way::both;

    static transfer send_only(int dim, std::span<const T> out) {
        return {dim, out, {}, transfer_way::send_only};
    }
    static transfer recv_only(int dim, std::span<T> in) {
        return {dim, {}, in, transfer_way::recv_only};
    }
};

template <wire_type T>
struct received {
    int dim; // the link it came on
    std::vector<T> data;
};

// recv_routed's source for a message from any node, as MPI_ANY_SOURCE.
inline constexpr int any_source = -1;

template <wire_type T>
struct routed_received {
    int source; // the node that sent it
    std::vector<T> data;
};

class node {
public:
    int id() const noexcept { return id_; }
    int dim() const noexcept { return dim_; }
    int size() const noexcept { return 1 << dim_; }
    // The neighbour across dimension k; a usage_error names the node and k.
    // Inline: collectives ask it at every step.
    int neighbor(int k) const {
        if (k < 0 || k >= dim_) bad_neighbor(k);
        return id_ ^ (1 << k);
    }
    const config& cfg() const noexcept;

    // Buffered send on link k: returns once the link owns the payload; blocks
    // only while the link is full (or, with link_capacity 0, until received).
    template <wire_range R>
    void send(int k, const R& data) {
        send_bytes(k, view(data));
    }

    // Receive exactly out.size() elements from link k; a different size is a
    // usage_error naming both sizes.
    template <wire_range R>
    void recv(int k, R&& out) {
        recv_bytes(k, mut(out));
    }
    // Receive one message of any size from link k.
    template <wire_type T>
    std::vector<T> recv(int k) {
        std::vector<T> v;
        recv_any_size(k, vector_sink(v));
        return v;
    }

    // Send `out` on link k and receive exactly in.size() elements from it: one
    // step of the CM-200's exchange. Large payloads are copied once, straight
    // from the sender's buffer into the receiver's.
    template <wire_range O, wire_range I>
    void exchange(int k, const O& out, I&& in) {
        exchange_bytes(k, view(out), mut(in));
    }
    // The same with a reply of any size.
    template <wire_range O>
    auto exchange(int k, const O& out) {
        using T = std::ranges::range_value_t<O>;
        std::vector<T> v;
        exchange_any_size(k, view(out), vector_sink(v));
        return v;
    }

    // Several exchanges on distinct links at once, each both ways or one-sided
    // (transfer_way): every send is posted before any receive or wait, so
    // one-sided links in a cycle do not deadlock on unbuffered links. All-port
    // only: under single-port it is a usage_error, and so is a dimension given
    // twice.
    template <wire_type T>
    void exchange_all(std::span<const transfer<T>> ops) {
        exchange_each(ops, [](const transfer<T>& t) {
            return raw_transfer{t.dim, view(t.out), mut(t.in), t.way};
        });
    }
    template <wire_type T>
    void exchange_all(std::initializer_list<transfer<T>> ops) {
        exchange_all(std::span<const transfer<T>>(ops.begin(), ops.size()));
    }
    template <wire_type T>
    void exchange_all(const std::vector<transfer<T>>& ops) {
        exchange_all(std::span<const transfer<T>>(ops));
    }
    // The braced form with the element type deduced from the ranges:
    // exchange_all({{0, a, ra}, {1, b, rb}}) (braced_transfer, below).
    struct braced_transfer;
    void exchange_all(std::initializer_list<braced_transfer> ops) {
        exchange_each(ops, [](const braced_transfer& t) { return t.raw; });
    }

    // The next message on any link, for pipelined programs: the one with the
    // least virtual arrival (the lower link on a tie) among all that can still
    // come, whatever order they really came in (docs/runtime.md, "Choosing
    // among sources").
    template <wire_type T>
    received<T> recv_any() {
        received<T> r{-1, {}};
        r.dim = recv_any_link(vector_sink(r.data));
        return r;
    }

    // Messages to any node, delivered with E-cube routing semantics: cut-through
    // cost t_s + t_w m on a free path; every link of the path is counted and
    // overlapping use of a link is reported as congestion and delays the later
    // message. Routed messages from one source to one destination stay in order.
    template <wire_range R>
    void send_routed(int dest, const R& data) {
        send_routed_bytes(dest, view(data));
    }
    // `source` may be any_source: then the message with the least virtual
    // arrival (the lower source on a tie) among all that can still come, as
    // recv_any (recv_routed_any also says where it came from).
    template <wire_range R>
    void recv_routed(int source, R&& out) {
        recv_routed_bytes(source, mut(out));
    }
    template <wire_type T>
    std::vector<T> recv_routed(int source) {
        std::vector<T> v;
        recv_routed_any_size(source, vector_sink(v));
        return v;
    }
    // recv_routed(any_source) with the source it came from.
    template <wire_type T>
    routed_received<T> recv_routed_any() {
        routed_received<T> r{-1, {}};
        r.source = recv_routed_any_size(any_source, vector_sink(r.data));
        return r;
    }
    // send_routed(dest, out), then recv_routed(source, in), as MPI_Sendrecv:
    // the same virtual time, congestion and trace. A payload above
    // config::eager_limit is lent, not buffered: `dest` copies it straight
    // from `out` (one copy per byte), and the call returns once it has. If
    // every node would be waiting otherwise, it is copied into the message,
    // so programs run as with send_routed.
    template <wire_range O, wire_range I>
    void sendrecv_routed(int dest, const O& out, int source, I&& in) {
        sendrecv_routed_bytes(dest, view(out), source, mut(in));
    }

    // Virtual time of this node, and the same critical path counted in steps.
    double clock() const noexcept;
    std::int64_t steps() const noexcept;
    // Charge local computation to the virtual clock.
    void compute(double time);

    // Runtime use only.
    node(detail::machine_state& m, detail::node_state& s, int id, int dim) noexcept
        : m_(&m)
        , s_(&s)
        , id_(id)
        , dim_(dim) {}

private:
    // `type`: detail::wire_type_id of the element type.
    struct bytes_view {
        const void* data;
        std::size_t bytes;
        std::size_t elem;
        std::uint32_t type;
    };
    struct bytes_span {
        void* data;
        std::size_t bytes;
        std::size_t elem;
        std::uint32_t type;
    };
    struct raw_transfer {
        int dim;
        bytes_view out;
        bytes_span in;
        transfer_way way = transfer_way::both;
    };
    // Where a message of a size known only on arrival goes.
    struct sink {
        void* ctx;
        void* (*alloc)(void* ctx, std::size_t bytes);
        std::size_t elem;
        std::uint32_t type;
    };

    template <class R>
    static bytes_view view(const R& r) {
        using T = std::ranges::range_value_t<R>;
        return {std::ranges::data(r), std::ranges::size(r) * sizeof(T), sizeof(T),
                detail::wire_type_id<T>()};
    }
    template <class R>
    static bytes_span mut(R& r) {
        using T = std::ranges::range_value_t<R>;
        static_assert(!std::is_const_v<std::remove_reference_t<decltype(*std::ranges::data(r))>>,
                      "receive into a mutable range");
        return {std::ranges::data(r), std::ranges::size(r) * sizeof(T), sizeof(T),
                detail::wire_type_id<T>()};
    }
    template <class T>
    static sink vector_sink(std::vector<T>& v) {
        return {&v,
                [](void* ctx, std::size_t bytes) -> void* {
                    auto& vec = *static_cast<std::vector<T>*>(ctx);
                    vec.resize(bytes / sizeof(T));
                    return vec.data();
                },
                sizeof(T), detail::wire_type_id<T>()};
    }
    template <class Ops, class ToRaw>
    void exchange_each(const Ops& ops, ToRaw to_raw) {
        raw_transfer raw[max_dim];
        if (ops.size() > std::size_t(max_dim)) too_many_transfers(ops.size());
        std::size_t n = 0;
        for (const auto& op : ops)
            raw[n++] = to_raw(op);
        exchange_all_bytes(raw, n);
    }

    void send_bytes(int k, bytes_view out);
    void recv_bytes(int k, bytes_span in);
    void recv_any_size(int k, sink in);
    void exchange_bytes(int k, bytes_view out, bytes_span in);
    void exchange_any_size(int k, bytes_view out, sink in);
    void exchange_all_bytes(const raw_transfer* ops, std::size_t n);
    int recv_any_link(sink in);
    void send_routed_bytes(int dest, bytes_view out);
    void recv_routed_bytes(int source, bytes_span in);
    int recv_routed_any_size(int source, sink in);
    void sendrecv_routed_bytes(int dest, bytes_view out, int source, bytes_span in);
    [[noreturn]] void too_many_transfers(std::size_t n) const;
    [[noreturn]] void bad_neighbor(int k) const;

    friend detail::park_count detail::parks_of(const node& me, int id) noexcept;

    detail::machine_state* m_;
    detail::node_state* s_;
    int id_;
    int dim_;

public:
    // One element of a braced exchange_all list: send `out` on `dim` and
    // receive exactly in.size() elements of the same type into `in`.
    struct braced_transfer {
        template <wire_range O, wire_range I>
        requires std::same_as<std::ranges::range_value_t<O>, std::ranges::range_value_t<I>>
        braced_transfer(int dim, const O& out, I&& in)
            : raw{dim, view(out), mut(in)} {}
        raw_transfer raw;
    };
};

} // namespace hcube
