// Receives posted ahead for the links' messages (link_bridge.hpp): a ring of
// MPI_Irecv(any source, data_tag) on the links' communicator, each into a
// payload buffer the receiver owns, so a message lands where it will be read
// (no unexpected-message queue, no probe). MPI matches messages to posted
// receives in the order they were posted, so taking the ring in that order
// keeps every sender's order. Private to emu/src/mpi.
#pragma once

#include <cstddef>
#include <vector>

#include "comm.hpp"

namespace hcube::detail::mpi {

class posted_receives {
public:
    // `depth` receives of up to `bytes` each.
    posted_receives(comm& c, std::size_t bytes, int depth);
    ~posted_receives();
    posted_receives(const posted_receives&) = delete;
    posted_receives& operator=(const posted_receives&) = delete;

    std::size_t capacity() const noexcept { return bytes_; }

    // The oldest posted receive, if its message has come: its buffer (a
    // payload_alloc'd one of capacity() bytes), its length and sender. Then
    // repost(), with the buffer kept (keep) or given away.
    struct message {
        std::byte* buffer;
        std::size_t length;
        int source;
    };
    bool next(message& out);
    void repost(bool keep);

private:
    void post(std::size_t i);

    comm& comm_;
    std::size_t bytes_;
    std::vector<std::byte*> buffers_;
    std::vector<MPI_Request> requests_;
    std::size_t head_ = 0;
};

} // namespace hcube::detail::mpi
