// The links between ranks (link_bridge.hpp).
#include "link_bridge.hpp"

#include <deque>

#include "../links/copy_out.hpp"
#include "../park.hpp"

namespace hcube::detail::mpi {

namespace {

template <spsc_link L>
class bridge final : public link_bridge {
public:
    bridge(machine_state& m, comm& c, int inner, std::size_t eager_bytes)
        : m_(m)
        , comm_(c)
        , inner_(inner)
        , eager_bytes_(eager_bytes)
        , synchronous_(m.cfg.link_capacity == 0) {
        sent_to.assign(std::size_t(c.ranks()), 0);
        for (int i = m.local_begin; i < m.local_end; ++i)
            for (int k = inner; k < m.cfg.dim; ++k) {
                outgoing_.push_back({&m.out_link<L>(i, k), i, k});
                incoming_.push_back({&m.out_link<L>(i ^ (1 << k), k), i, k, {}});
            }
    }

    bool ship_all() override {
        bool moved = false;
        if (m_.cancelled.load(std::memory_order_acquire)) return false;
        for (auto& o : outgoing_)
            while (!o.shipped && !o.link->empty()) {
                ship(o);
                moved = true;
            }
        return moved;
    }

    void acked(int node, int dim) override {
        out_link& o = outgoing_[index(node, dim)];
        release(o, o.link->front());
        o.shipped = false;
    }

    void arrived(int node, int dim, const descriptor& d) override {
        in_link& in = incoming_[index(node, dim)];
        if (in.waiting.empty() && !in.unacked && in.link->writable())
            deliver(in, d);
        else
            in.waiting.push_back(d);
    }

    bool deliver_queued() override {
        bool moved = false;
        for (auto& in : incoming_) {
            // A synchronous link holds one message: room again means the
            // receiver took it, which completes the sender's send.
            if (in.unacked && in.link->writable()) {
                const wire_header h{ack_kind, in.node ^ (1 << in.dim), in.dim, 0, 0, 0, 0};
                post(comm_, std::vector<std::byte>(sizeof h), h, peer_of(in.node, in.dim));
                in.unacked = false;
                moved = true;
            }
            while (!in.waiting.empty() && !in.unacked && in.link->writable()) {
                deliver(in, in.waiting.front());
                in.waiting.pop_front();
                moved = true;
            }
        }
        return moved;
    }

    bool outgoing_empty() const override {
        for (const auto& o : outgoing_)
            if (!o.shipped && !o.link->empty()) return false;
        return true;
    }

    std::uint64_t drop_queued() override {
        std::uint64_t left = 0;
        for (auto& in : incoming_) {
            for (const descriptor& d : in.waiting) {
                ++left;
                if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
            }
            in.waiting.clear();
            in.unacked = false;
        }
        // A cancelled run's synchronous sends: settle.hpp drains their links.
        for (auto& o : outgoing_)
            o.shipped = false;
        return left;
    }

private:
    struct out_link {
        L* link;
        int node; // the local sender
        int dim;
        bool shipped = false; // synchronous: its front went, not yet taken
    };
    struct in_link {
        L* link;
        int node; // the local receiver
        int dim;
        std::deque<descriptor> waiting; // arrived while the link was full
        bool unacked = false;           // synchronous: delivered, not yet taken
    };

    // A cross-rank link's entry in outgoing_ or incoming_.
    std::size_t index(int node, int dim) const {
        return std::size_t(node - m_.local_begin) * std::size_t(m_.cfg.dim - inner_) +
               std::size_t(dim - inner_);
    }
    int peer_of(int node, int dim) const { return (node ^ (1 << dim)) >> inner_; }

    // Sends the front message, its payload copied out first (a borrowed
    // buffer may be reused once the front is popped): with its header, or
    // after it when larger than eager_bytes_ (wire.hpp). A buffered link pops
    // it at once; a synchronous one when the receiver has taken it (acked), as
    // one process's send completes only then.
    void ship(out_link& o) {
        const descriptor& d = o.link->front();
        const bool bulk = d.bytes > eager_bytes_;
        std::vector<std::byte> buffer(d.bytes + (bulk ? 0 : sizeof(wire_header)));
        if (!copy_payload(*o.link, d, buffer.data(), m_.cancelled))
            return; // the run is over; settle.hpp drains the link
        const wire_header h{bulk ? bulk_kind : data_kind,
                            o.node,
                            o.dim,
                            d.type,
                            d.arrival.time,
                            d.arrival.steps,
                            bulk ? d.bytes : 0};
        if (synchronous_)
            o.shipped = true;
        else
            release(o, d);
        const int peer = peer_of(o.node, o.dim);
        ++sent_to[std::size_t(peer)];
        if (bulk) {
            post(comm_, std::vector<std::byte>(sizeof h), h, peer);
            comm_.isend_link(std::move(buffer), peer, bulk_tag);
        } else {
            post(comm_, std::move(buffer), h, peer);
        }
    }

    // Pops the front message `d`, which has gone: the sender may go on.
    void release(out_link& o, const descriptor& d) {
        if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
        o.link->pop();
        wake(m_, m_.nodes[o.node]);
    }

    void deliver(in_link& in, const descriptor& d) {
        in.link->back() = d;
        in.link->publish();
        in.unacked = synchronous_;
        wake(m_, m_.nodes[in.node]);
    }

    machine_state& m_;
    comm& comm_;
    int inner_;
    std::size_t eager_bytes_;
    bool synchronous_; // link capacity 0
    std::vector<out_link> outgoing_;
    std::vector<in_link> incoming_; // by (receiver, dim)
};

} // namespace

std::unique_ptr<link_bridge> make_link_bridge(machine_state& m, comm& c, int inner,
                                              std::size_t eager_bytes) {
    return m.with_links([&]<class L>(std::type_identity<L>) -> std::unique_ptr<link_bridge> {
        return std::make_unique<bridge<L>>(m, c, inner, eager_bytes);
    });
}

} // namespace hcube::detail::mpi
