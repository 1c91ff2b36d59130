// The links between ranks: a link from a local node to another rank's is
// consumed here (each message shipped with MPI), a link from another rank's
// node to a local one is produced into here (each message that arrived is
// delivered). Private to emu/src/mpi.
//
// A link's capacity means what it does in one process: a shipped message
// stays charged to the sender's link until the receiver's node has taken it,
// and the receiver's rank says so (taken, the count so far), so the sender
// waits on a full link, a rendezvous or a synchronous send exactly as long as
// one process's would, only later in wall time. The receiver's rank says it
// in every data message its node sends back on the same dimension, else
// every half capacity, or at once when the sender waits: its link is full
// (ask) or it waits for that message (prompt). Since at most `capacity`
// messages are between the two nodes, the receiver's copy of the link always
// has room for what arrives.
//
//   sender's rank                       receiver's rank
//   node pushes   -> link [m0 m1 m2]
//   ship m0,m1,m2 (held) ---data--->     link [m0 m1 m2] -> node takes m0, m1
//   full: ask -------------------->
//   m0, m1 freed  <--taken (2)------     (at once: asked)
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../state.hpp"
#include "comm.hpp"
#include "wire.hpp"

namespace hcube::detail::mpi {

// Sends `buffer` (its last bytes reserved for the header) as one message on
// the links' communicator.
inline void post(comm& c, std::vector<std::byte> buffer, const wire_header& h, int peer) {
    std::memcpy(buffer.data() + buffer.size() - sizeof h, &h, sizeof h);
    c.isend_link(std::move(buffer), peer, data_tag);
}

class link_bridge {
public:
    virtual ~link_bridge() = default;
    // Ships every message local nodes put on links to other ranks (none once
    // the run is cancelled); true if one moved.
    virtual bool ship_all() = 0;
    // A message for local node `node` on dimension `dim` arrived; `prompt`:
    // its sender waits until it is taken.
    virtual void arrived(int node, int dim, const descriptor& d, bool prompt) = 0;
    // The same for a message whose `bytes` of payload follow from rank
    // `source` (wire.hpp, bulk): received without waiting, delivered once in.
    virtual void arrived_bulk(int node, int dim, descriptor d, bool prompt, std::size_t bytes,
                              int source) = 0;
    // Delivers the arrived messages whose payloads are in, in arrival order;
    // true if one moved.
    virtual bool land() = 0;
    // Whether an arrived message is not delivered yet.
    virtual bool landing() const = 0;
    // The first such message, for a report: its nodes, link, size and the
    // pieces of its payload in.
    virtual std::string first_landing() const = 0;
    // Local node `node`'s link on dimension `dim`: the receiver took its
    // first `count` messages of the run.
    virtual void taken(int node, int dim, std::uint64_t count) = 0;
    // The link to local node `node` on dimension `dim` is full at its sender.
    virtual void asked(int node, int dim) = 0;
    // Tells senders what local nodes took, where due; true if it told one.
    virtual bool tell_taken() = 0;
    // The same for the link to local node `node` on dimension `dim`.
    virtual void tell_due(int node, int dim) = 0;
    // Tells senders everything local nodes took (before the end markers).
    virtual void tell_all_taken() = 0;
    // Nothing to ship or to deliver, nothing a waiting sender must be told.
    virtual bool settled() const = 0;
    // At the end of a run: what was shipped counts as taken (the receivers
    // report what their nodes left), and every count starts over.
    virtual void end_run() = 0;

    // Data messages sent to each rank this run (the end markers' counts).
    std::vector<std::uint64_t> sent_to;
};

// The bridge for the machine's links (built), dimensions >= inner crossing
// ranks; payloads up to `eager_bytes` go in one message with their header.
std::unique_ptr<link_bridge> make_link_bridge(machine_state& m, comm& c, int inner,
                                              std::size_t eager_bytes);

} // namespace hcube::detail::mpi
