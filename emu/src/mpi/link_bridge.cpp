// The links between ranks (link_bridge.hpp).
#include "link_bridge.hpp"

#include <algorithm>
#include <cassert>
#include <deque>

#include "../links/copy_out.hpp"
#include "../park.hpp"
#include "../wire_types.hpp"

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
        , batch_(std::max<std::uint64_t>(m.cfg.link_capacity / 2, 1)) {
        sent_to.assign(std::size_t(c.ranks()), 0);
        for (int i = m.local_begin; i < m.local_end; ++i)
            for (int k = inner; k < m.cfg.dim; ++k) {
                outgoing_.push_back({&m.out_link<L>(i, k), i, k});
                incoming_.push_back({&m.out_link<L>(i ^ (1 << k), k), i, k});
                incoming_.back().due = batch_;
            }
    }

    bool ship_all() override {
        bool moved = false;
        if (m_.cancelled.load(std::memory_order_acquire)) return false;
        for (auto& o : outgoing_)
            while (o.link->forwardable(o.shipped)) {
                if (!ship(o)) return moved;
                moved = true;
            }
        return moved;
    }

    void taken(int node, int dim, std::uint64_t count) override {
        out_link& o = outgoing_[index(node, dim)];
        if (count <= o.link->consumed()) return; // known: a data message said it
        o.link->taken_up_to(count);
        o.asked = false;
        wake(m_, m_.nodes[o.node], wake_event::take);
    }

    void asked(int node, int dim) override {
        in_link& in = incoming_[index(node, dim)];
        in.due = std::min(in.due, in.told + 1);
        in.waited = true;
    }

    void arrived(int node, int dim, const descriptor& d, bool prompt) override {
        const std::size_t i = index(node, dim);
        if (incoming_[i].queued) {
            arrivals_.push_back({i, d, prompt});
            ++incoming_[i].queued;
        } else {
            deliver(incoming_[i], d, prompt);
        }
    }

    void arrived_bulk(int node, int dim, descriptor d, bool prompt, std::size_t bytes,
                      int source) override {
        const std::size_t i = index(node, dim);
        void* const at = payload_alloc(bytes);
        if (!at)
            comm_.abort("out of memory for a message of " + std::to_string(bytes) + " bytes " +
                        incoming_[i].text());
        d.bytes = std::uint32_t(bytes);
        d.kind = payload::heap;
        d.ptr = at;
        arrivals_.push_back({i, d, prompt});
        comm_.irecv_link_into(at, bytes, source, bulk_tag, arrivals_.back().pieces);
        ++incoming_[i].queued;
    }

    bool land() override {
        bool moved = false;
        while (!arrivals_.empty()) {
            arrival& a = arrivals_.front();
            while (a.landed < a.pieces.size() && comm::completed(a.pieces[a.landed])) {
                comm_.count_received();
                ++a.landed;
                moved = true;
            }
            if (a.landed < a.pieces.size()) break;
            in_link& in = incoming_[a.link];
            --in.queued;
            deliver(in, a.d, a.prompt);
            arrivals_.pop_front();
            moved = true;
        }
        return moved;
    }

    bool landing() const override { return !arrivals_.empty(); }

    std::string first_landing() const override {
        const arrival& a = arrivals_.front();
        const in_link& in = incoming_[a.link];
        return "a message of " + std::to_string(a.d.bytes) + " bytes " + in.text() + " (" +
               std::to_string(a.landed) + " of " + std::to_string(a.pieces.size()) + " pieces in)";
    }

    bool tell_taken() override {
        bool told = false;
        for (auto& in : incoming_)
            if (in.link->consumed() >= in.due) {
                tell(in);
                told = true;
            }
        return told;
    }

    void tell_due(int node, int dim) override {
        in_link& in = incoming_[index(node, dim)];
        if (in.waited && in.link->consumed() >= in.due) tell(in);
    }

    void tell_all_taken() override {
        for (auto& in : incoming_)
            if (in.link->consumed() > in.told) tell(in);
    }

    bool settled() const override {
        if (!arrivals_.empty()) return false;
        for (const auto& o : outgoing_)
            if (o.link->forwardable(o.shipped)) return false;
        for (const auto& in : incoming_)
            if (in.link->consumed() >= in.due) return false;
        return true;
    }

    void end_run() override {
        assert(arrivals_.empty());
        for (auto& o : outgoing_) {
            o.link->taken_up_to(o.shipped);
            o.shipped = 0;
            o.asked = false;
        }
        for (auto& in : incoming_) {
            in.told = 0;
            in.due = batch_;
            in.waited = false;
        }
    }

private:
    struct out_link {
        L* link;
        int node; // the local sender
        int dim;
        std::uint64_t shipped = 0; // this run's, each held until taken
        bool asked = false;        // full, and the receiver's rank was asked
    };
    struct in_link {
        L* link;
        int node; // the local receiver
        int dim;
        std::uint64_t told = 0; // this run's taken messages, as last told
        std::uint64_t due = 0;  // tell the sender once this many were taken
        std::size_t queued = 0; // its messages in arrivals_
        bool waited = false;    // due, because its sender waits

        // For reports: "from node A to node B on dim d".
        std::string text() const {
            return "from node " + std::to_string(node ^ (1 << dim)) + " to node " +
                   std::to_string(node) + " on dim " + std::to_string(dim);
        }
    };
    // An arrived message not yet in its link: its payload still coming (bulk),
    // or behind one that is.
    struct arrival {
        std::size_t link; // in incoming_
        descriptor d;
        bool prompt;
        std::vector<MPI_Request> pieces = {}; // a bulk message's payload's
        std::size_t landed = 0;               // of pieces
    };

    // A cross-rank link's entry in outgoing_ or incoming_.
    std::size_t index(int node, int dim) const {
        return std::size_t(node - m_.local_begin) * std::size_t(m_.cfg.dim - inner_) +
               std::size_t(dim - inner_);
    }
    int peer_of(int node, int dim) const { return (node ^ (1 << dim)) >> inner_; }
    // The link's slots: link capacity 0 holds one message.
    std::uint64_t slots() const { return std::max<std::uint64_t>(m_.cfg.link_capacity, 1); }

    // Sends the next message, its payload copied out first, with its header,
    // or after it when larger than eager_bytes_ (wire.hpp); it stays in the
    // link until taken. A borrowed payload is copied too: sent from the
    // node's buffer, the receiver's read left that buffer's cache lines with
    // the other core, and the node's next write to it (a reduction's
    // combine) took longer than the copy (docs/mpi.md). False, with nothing
    // sent, when the run was cancelled first (settle.hpp drains the link).
    bool ship(out_link& o) {
        const descriptor& d = o.link->forwarded(o.shipped);
        const bool bulk = d.bytes > eager_bytes_;
        std::vector<std::byte> buffer(d.bytes + (bulk ? 0 : sizeof(wire_header)));
        if (!copy_payload(*o.link, d, buffer.data(), m_.cancelled)) return false;
        // A borrowed buffer is lent until the message is taken (a rendezvous),
        // and a synchronous send completes only then: its sender waits.
        const bool prompt = d.kind == payload::borrowed || m_.cfg.link_capacity == 0;
        const wire_header h{bulk ? bulk_kind : data_kind,
                            prompt,
                            o.node,
                            o.dim,
                            wire_type_hash(d.type),
                            d.arrival.time,
                            d.arrival.steps,
                            bulk ? d.bytes : 0,
                            told(incoming_[index(o.node, o.dim)])};
        if (d.kind == payload::heap) payload_free(const_cast<void*>(d.ptr));
        o.link->hand_on(o.shipped);
        ++o.shipped;
        const int peer = peer_of(o.node, o.dim);
        ++sent_to[std::size_t(peer)];
        if (bulk) {
            post(comm_, std::vector<std::byte>(sizeof h), h, peer);
            comm_.isend_link(std::move(buffer), peer, bulk_tag);
        } else {
            post(comm_, std::move(buffer), h, peer);
        }
        // Full: the sender waits for the next message taken, which the
        // receiver's rank would otherwise tell only every half capacity.
        if (o.shipped - o.link->consumed() == slots() && batch_ > 1 && !o.asked) {
            const wire_header ask{ask_kind, false, o.node, o.dim, 0, 0, 0, 0, 0};
            post(comm_, std::vector<std::byte>(sizeof ask), ask, peer);
            o.asked = true;
        }
        return true;
    }

    void deliver(in_link& in, const descriptor& d, bool prompt) {
        if (!in.link->writable())
            comm_.abort("a message " + in.text() +
                        " found its link full: the sender's rank shipped more than the link "
                        "holds (a bug in hcube)");
        in.link->back() = d;
        in.link->publish();
        if (prompt) {
            in.due = std::min(in.due, in.link->pushed());
            in.waited = true;
        }
        wake(m_, m_.nodes[in.node], wake_event::arrival);
    }

    // What the link's receiver took, as the sender's rank is now told (by a
    // taken message, or in a data message the other way): the next tell is
    // due a batch later, unless a waiting sender still needs one sooner.
    std::uint64_t told(in_link& in) {
        const std::uint64_t taken = in.link->consumed();
        in.told = taken;
        if (in.due <= taken) {
            in.due = taken + batch_;
            in.waited = false;
        }
        return taken;
    }

    void tell(in_link& in) {
        const int sender = in.node ^ (1 << in.dim);
        const wire_header h{taken_kind, false, sender, in.dim, 0, 0, 0, told(in), 0};
        post(comm_, std::vector<std::byte>(sizeof h), h, peer_of(in.node, in.dim));
    }

    machine_state& m_;
    comm& comm_;
    int inner_;
    std::size_t eager_bytes_;
    std::uint64_t batch_; // taken messages told at once, unless a sender waits
    std::vector<out_link> outgoing_;
    std::vector<in_link> incoming_; // by (receiver, dim)
    std::deque<arrival> arrivals_;  // in arrival order
};

} // namespace

std::unique_ptr<link_bridge> make_link_bridge(machine_state& m, comm& c, int inner,
                                              std::size_t eager_bytes) {
    return m.with_links([&]<class L>(std::type_identity<L>) -> std::unique_ptr<link_bridge> {
        return std::make_unique<bridge<L>>(m, c, inner, eager_bytes);
    });
}

} // namespace hcube::detail::mpi
