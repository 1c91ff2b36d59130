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
    bridge(machine_state& m, comm& c, int inner)
        : m_(m)
        , comm_(c)
        , inner_(inner) {
        sent_to.assign(std::size_t(c.ranks()), 0);
        for (int i = m.local_begin; i < m.local_end; ++i)
            for (int k = inner; k < m.cfg.dim; ++k) {
                outgoing_.push_back({&m.out_link<L>(i, k), i, k});
                incoming_.push_back({&m.out_link<L>(i ^ (1 << k), k), i, {}});
            }
    }

    bool ship_all() override {
        bool moved = false;
        if (m_.cancelled.load(std::memory_order_acquire)) return false;
        for (auto& o : outgoing_)
            while (!o.link->empty()) {
                ship(o);
                moved = true;
            }
        return moved;
    }

    void arrived(int node, int dim, const descriptor& d) override {
        const int outer = m_.cfg.dim - inner_;
        in_link& in = incoming_[std::size_t(node - m_.local_begin) * std::size_t(outer) +
                                std::size_t(dim - inner_)];
        if (in.waiting.empty() && in.link->writable())
            deliver(in, d);
        else
            in.waiting.push_back(d);
    }

    bool deliver_queued() override {
        bool moved = false;
        for (auto& in : incoming_)
            while (!in.waiting.empty() && in.link->writable()) {
                deliver(in, in.waiting.front());
                in.waiting.pop_front();
                moved = true;
            }
        return moved;
    }

    bool outgoing_empty() const override {
        for (const auto& o : outgoing_)
            if (!o.link->empty()) return false;
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
        }
        return left;
    }

private:
    struct out_link {
        L* link;
        int node; // the local sender
        int dim;
    };
    struct in_link {
        L* link;
        int node;                       // the local receiver
        std::deque<descriptor> waiting; // arrived while the link was full
    };

    // Pops the front message and sends it; the payload is copied out before
    // the pop releases the sender's buffer (a borrowed one may be reused at
    // once after it).
    void ship(out_link& o) {
        const descriptor& d = o.link->front();
        std::vector<std::byte> buffer(d.bytes + sizeof(wire_header));
        if (!copy_payload(*o.link, d, buffer.data(), m_.cancelled))
            return; // the run is over; settle.hpp drains the link
        if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
        const wire_header h{data_kind, o.node, o.dim, d.type, d.arrival.time, d.arrival.steps, 0};
        o.link->pop();
        wake(m_, m_.nodes[o.node]);
        const int peer = (o.node ^ (1 << o.dim)) >> inner_;
        ++sent_to[std::size_t(peer)];
        post(comm_, std::move(buffer), h, peer);
    }

    void deliver(in_link& in, const descriptor& d) {
        in.link->back() = d;
        in.link->publish();
        wake(m_, m_.nodes[in.node]);
    }

    machine_state& m_;
    comm& comm_;
    int inner_;
    std::vector<out_link> outgoing_;
    std::vector<in_link> incoming_; // by (receiver, dim)
};

} // namespace

std::unique_ptr<link_bridge> make_link_bridge(machine_state& m, comm& c, int inner) {
    return m.with_links([&]<class L>(std::type_identity<L>) -> std::unique_ptr<link_bridge> {
        return std::make_unique<bridge<L>>(m, c, inner);
    });
}

} // namespace hcube::detail::mpi
