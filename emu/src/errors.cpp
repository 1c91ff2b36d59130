#include <hcube/config.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>

#include <cxxabi.h>

namespace hcube {

std::string_view to_string(port_model m) noexcept {
    return m == port_model::all_port ? "all-port" : "single-port";
}

namespace {

std::string node_message(int node, const std::string& what) {
    const std::string prefix = "node " + std::to_string(node) + ": ";
    return what.rfind(prefix, 0) == 0 ? what : prefix + what;
}

// "node 3: <msg>; node 9: <msg> (and 2 more nodes failed)".
std::string failures_message(const std::vector<node_failure>& failures) {
    constexpr std::size_t shown = 4;
    std::string out;
    for (std::size_t i = 0; i < failures.size() && i < shown; ++i)
        out += (i ? "; " : "") + node_message(failures[i].node, failures[i].what);
    if (const std::size_t more = failures.size() > shown ? failures.size() - shown : 0)
        out += " (and " + std::to_string(more) + " more node" + (more == 1 ? "" : "s") + " failed)";
    return out;
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

run_error::run_error(std::vector<node_failure> failures)
    : error(failures_message(failures))
    , failures_(std::move(failures)) {}

deadlock_error::deadlock_error(std::vector<blocked_wait> waits)
    : error(deadlock_message(waits))
    , waits_(std::move(waits)) {}

// ---- wire type ids (node.hpp) ---------------------------------------------

namespace {

struct wire_type_entry {
    const std::type_info* type;
    std::size_t size;
};

struct wire_type_registry {
    std::mutex mu;
    std::vector<wire_type_entry> types;
};

wire_type_registry& registry() {
    static wire_type_registry r;
    return r;
}

} // namespace

std::uint32_t detail::register_wire_type(const std::type_info& type, std::size_t size) {
    auto& r = registry();
    std::lock_guard lock(r.mu);
    // A type seen before (from another shared object's copy of wire_type_id)
    // keeps its id: equal ids must mean equal types.
    for (std::size_t i = 0; i < r.types.size(); ++i)
        if (*r.types[i].type == type) return std::uint32_t(i);
    if (r.types.size() > max_wire_type_id)
        throw error("more than " + std::to_string(max_wire_type_id + 1) +
                    " distinct element types sent");
    r.types.push_back({&type, size});
    return std::uint32_t(r.types.size() - 1);
}

std::string detail::wire_type_name(std::uint32_t id) {
    auto& r = registry();
    wire_type_entry e;
    {
        std::lock_guard lock(r.mu);
        e = r.types.at(id);
    }
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> name(
        abi::__cxa_demangle(e.type->name(), nullptr, nullptr, &status), std::free);
    return (status == 0 ? std::string(name.get()) : std::string(e.type->name())) + " (" +
           std::to_string(e.size) + "-byte elements)";
}

} // namespace hcube
