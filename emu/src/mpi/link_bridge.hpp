// The links between ranks: a link from a local node to another rank's is
// consumed here (each message shipped with MPI), a link from another rank's
// node to a local one is produced into here (each message that arrived is
// delivered, or queued while the link is full). Private to emu/src/mpi.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
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
    // A message for local node `node` on dimension `dim` arrived.
    virtual void arrived(int node, int dim, const descriptor& d) = 0;
    // Link capacity 0: the receiver took local node `node`'s message on
    // dimension `dim`.
    virtual void acked(int node, int dim) = 0;
    // Delivers queued messages as far as their links have room (with link
    // capacity 0, acks those taken first); true if one moved.
    virtual bool deliver_queued() = 0;
    virtual bool outgoing_empty() const = 0;
    // At the end of a run: frees what is still queued (it arrived for
    // finished nodes) and forgets sends not yet taken; how many were queued.
    virtual std::uint64_t drop_queued() = 0;

    // Data messages sent to each rank this run (the end markers' counts).
    std::vector<std::uint64_t> sent_to;
};

// The bridge for the machine's links (built), dimensions >= inner crossing
// ranks; payloads up to `eager_bytes` go in one message with their header.
std::unique_ptr<link_bridge> make_link_bridge(machine_state& m, comm& c, int inner,
                                              std::size_t eager_bytes);

} // namespace hcube::detail::mpi
