// A wait in words, for deadlock reports (wait_info.hpp).
#include "wait_info.hpp"

#include <sstream>

namespace hcube {

std::string detail::describe_wait(int dim, const wait_info& w) {
    std::ostringstream os;
    const auto size = [&] {
        if (w.exact) os << ", expecting " << w.bytes << " bytes";
    };
    switch (w.kind) {
    case wait_info::recv:
        os << "recv on dim " << w.dim << " from node " << w.peer;
        size();
        break;
    case wait_info::send_full:
        os << "send on dim " << w.dim << " to node " << w.peer << " (" << w.bytes
           << " bytes): the link is full and node " << w.peer << " does not receive";
        break;
    case wait_info::delivery:
        os << "delivery on dim " << w.dim << " to node " << w.peer
           << ": a synchronous or rendezvous send waits for node " << w.peer << " to receive it";
        break;
    case wait_info::recv_any:
        os << "recv_any on any of its " << dim << " links";
        break;
    case wait_info::routed:
        os << "recv_routed from node " << w.peer;
        size();
        break;
    case wait_info::routed_any:
        os << "recv_routed from any source";
        size();
        break;
    case wait_info::routed_loan:
        os << "sendrecv_routed to node " << w.peer << ": waits for node " << w.peer
           << " to receive its " << w.bytes << " bytes, which it lent, not buffered";
        break;
    case wait_info::none:
        os << "nothing recorded";
        break;
    }
    return os.str();
}

} // namespace hcube
