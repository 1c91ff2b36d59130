// Receives posted ahead for the links' messages (posted_receives.hpp).
#include "posted_receives.hpp"

#include <new>

#include "../alloc.hpp"
#include "wire.hpp"

namespace hcube::detail::mpi {

posted_receives::posted_receives(comm& c, std::size_t bytes, int depth)
    : comm_(c)
    , bytes_(bytes)
    , buffers_(std::size_t(depth), nullptr)
    , requests_(std::size_t(depth), MPI_REQUEST_NULL) {
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
        buffers_[i] = static_cast<std::byte*>(payload_alloc(bytes_));
        if (!buffers_[i]) throw std::bad_alloc();
        post(i);
    }
}

posted_receives::~posted_receives() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    for (std::size_t i = 0; i < requests_.size(); ++i) {
        if (!finalized && requests_[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&requests_[i]);
            MPI_Wait(&requests_[i], MPI_STATUS_IGNORE);
        }
        payload_free(buffers_[i]);
    }
}

void posted_receives::post(std::size_t i) {
    check(MPI_Irecv(buffers_[i], int(bytes_), MPI_BYTE, MPI_ANY_SOURCE, data_tag,
                    comm_.links_handle(), &requests_[i]),
          "MPI_Irecv");
}

bool posted_receives::next(message& out) {
    int done = 0;
    MPI_Status st;
    check(MPI_Test(&requests_[head_], &done, &st), "MPI_Test");
    if (!done) return false;
    out = {buffers_[head_], comm::bytes_in(st), st.MPI_SOURCE};
    return true;
}

void posted_receives::repost(bool keep) {
    if (!keep) {
        buffers_[head_] = static_cast<std::byte*>(payload_alloc(bytes_));
        if (!buffers_[head_])
            comm_.abort("out of memory for a receive buffer of " + std::to_string(bytes_) +
                        " bytes");
    }
    post(head_);
    head_ = (head_ + 1) % requests_.size();
}

} // namespace hcube::detail::mpi
