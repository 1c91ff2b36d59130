#include <hcube/config.hpp>
#include <hcube/error.hpp>

#include <sstream>

namespace hcube {

std::string_view to_string(port_model m) noexcept {
    return m == port_model::all_port ? "all-port" : "single-port";
}

namespace {

std::string node_message(int node, const std::string& what) {
    const std::string prefix = "node " + std::to_string(node) + ": ";
    return what.rfind(prefix, 0) == 0 ? what : prefix + what;
}

std::string deadlock_message(const std::vector<blocked_wait>& waits) {
    std::ostringstream os;
    os << "deadlock: " << waits.size() << " node" << (waits.size() == 1 ? " is" : "s are")
       << " blocked and nothing in flight can wake them:";
    std::size_t shown = 0;
    for (const auto& w : waits) {
        if (++shown > 32) {
            os << "\n  ... and " << waits.size() - 32 << " more";
            break;
        }
        os << "\n  node " << w.node << ": " << w.what;
    }
    return os.str();
}

} // namespace

run_error::run_error(int node, const std::string& what, std::exception_ptr original)
    : error(node_message(node, what))
    , node_(node)
    , original_(std::move(original)) {}

deadlock_error::deadlock_error(std::vector<blocked_wait> waits)
    : error(deadlock_message(waits))
    , waits_(std::move(waits)) {}

} // namespace hcube
