#include <hcube/config.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include <cxxabi.h>

#include "wire_types.hpp"

namespace hcube {

namespace {

std::string node_message(int node, const std::string& what) {
    const std::string prefix = "node " + std::to_string(node) + ": ";
    return what.rfind(prefix, 0) == 0 ? what : prefix + what;
}

std::string nodes(std::size_t n) {
    return std::to_string(n) + " more node" + (n == 1 ? "" : "s");
}

// "node 3: <msg>; node 9: <msg> (and 2 more nodes failed)": the failures in
// node order, the nodes that failed with the text of an earlier one counted
// with it ("node 0: <msg> (and 7 more nodes the same)": a bad argument fails
// every node), the first few messages shown.
std::string failures_message(const std::vector<node_failure>& failures) {
    constexpr std::size_t shown = 4;
    struct group {
        int node;
        std::string text; // without the "node i: " prefix
        std::size_t more = 0;
    };
    std::vector<group> groups;
    for (const auto& f : failures) {
        const std::string prefix = "node " + std::to_string(f.node) + ": ";
        std::string text = f.what.rfind(prefix, 0) == 0 ? f.what.substr(prefix.size()) : f.what;
        const auto same = std::find_if(groups.begin(), groups.end(),
                                       [&](const group& g) { return g.text == text; });
        if (same != groups.end())
            ++same->more;
        else
            groups.push_back({f.node, std::move(text)});
    }
    std::string out;
    std::size_t hidden = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        if (i >= shown) {
            hidden += 1 + groups[i].more;
            continue;
        }
        out += (i ? "; " : "") + node_message(groups[i].node, groups[i].text);
        if (groups[i].more) out += " (and " + nodes(groups[i].more) + " the same)";
    }
    if (hidden) out += " (and " + nodes(hidden) + " failed)";
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
    const std::type_info* type; // null until a node of this process uses it
    std::size_t size;
    std::uint64_t hash; // of the mangled name and size (wire_types.hpp)
};

struct wire_type_registry {
    std::mutex mu;
    std::vector<wire_type_entry> types;
};

wire_type_registry& registry() {
    static wire_type_registry r;
    return r;
}

// FNV-1a: the same in every process of the job, whatever the order of use.
std::uint64_t hash_of(const std::type_info& type, std::size_t size) {
    std::uint64_t h = 14695981039346656037u;
    const auto mix = [&h](unsigned char byte) { h = (h ^ byte) * 1099511628211u; };
    for (const char* c = type.name(); *c; ++c)
        mix(static_cast<unsigned char>(*c));
    for (std::size_t i = 0; i < sizeof size; ++i)
        mix(static_cast<unsigned char>(size >> (8 * i)));
    return h;
}

std::uint32_t add_wire_type(wire_type_registry& r, wire_type_entry e) {
    if (r.types.size() > detail::max_wire_type_id)
        throw error("more than " + std::to_string(detail::max_wire_type_id + 1) +
                    " distinct element types sent");
    r.types.push_back(e);
    return std::uint32_t(r.types.size() - 1);
}

} // namespace

std::uint32_t detail::register_wire_type(const std::type_info& type, std::size_t size) {
    auto& r = registry();
    const std::uint64_t hash = hash_of(type, size);
    std::lock_guard lock(r.mu);
    // A type seen before (from another shared object's copy of wire_type_id,
    // or in a message from another process) keeps its id: equal ids must mean
    // equal types.
    for (std::size_t i = 0; i < r.types.size(); ++i) {
        wire_type_entry& e = r.types[i];
        if (e.type ? *e.type == type : e.hash == hash) {
            e.type = &type;
            e.size = size;
            return std::uint32_t(i);
        }
    }
    return add_wire_type(r, {&type, size, hash});
}

// Every message across ranks asks these, so each thread keeps what it has
// learnt: an id's hash, and a hash's id, never change once given.
std::uint64_t detail::wire_type_hash(std::uint32_t id) {
    thread_local std::vector<std::uint64_t> known;
    if (id >= known.size()) {
        auto& r = registry();
        std::lock_guard lock(r.mu);
        for (std::size_t i = known.size(); i < r.types.size(); ++i)
            known.push_back(r.types[i].hash);
    }
    return known[id];
}

std::uint32_t detail::wire_type_of_hash(std::uint64_t hash) {
    thread_local std::unordered_map<std::uint64_t, std::uint32_t> known;
    if (const auto it = known.find(hash); it != known.end()) return it->second;
    auto& r = registry();
    std::lock_guard lock(r.mu);
    std::uint32_t id = 0;
    while (id < r.types.size() && r.types[id].hash != hash)
        ++id;
    if (id == r.types.size()) id = add_wire_type(r, {nullptr, 0, hash});
    return known[hash] = id;
}

std::string detail::wire_type_name(std::uint32_t id) {
    auto& r = registry();
    wire_type_entry e;
    {
        std::lock_guard lock(r.mu);
        e = r.types.at(id);
    }
    if (!e.type) return "a type no node of this process has used";
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> name(
        abi::__cxa_demangle(e.type->name(), nullptr, nullptr, &status), std::free);
    return (status == 0 ? std::string(name.get()) : std::string(e.type->name())) + " (" +
           std::to_string(e.size) + "-byte elements)";
}

} // namespace hcube
