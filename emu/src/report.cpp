#include <hcube/report.hpp>

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <type_traits>

namespace hcube {

double run_report::messages_per_second() const {
    return wall_seconds > 0 ? double(messages) / wall_seconds : 0;
}

double run_report::virtual_time_per_second() const {
    return wall_seconds > 0 ? virtual_time / wall_seconds : 0;
}

std::uint64_t run_report::max_link_bytes() const {
    std::uint64_t m = 0;
    for (const auto& l : links)
        m = std::max(m, l.bytes);
    return m;
}

std::uint64_t run_report::max_link_messages() const {
    std::uint64_t m = 0;
    for (const auto& l : links)
        m = std::max(m, l.messages);
    return m;
}

namespace {

// FNV-1a over the values' bytes: a fingerprint, not a defence against forgery.
class fnv1a {
public:
    template <class T>
    fnv1a& operator<<(const T& v) noexcept {
        static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, &v, sizeof(T));
        for (const unsigned char b : bytes)
            h_ = (h_ ^ b) * 0x100000001b3ull;
        return *this;
    }
    std::uint64_t value() const noexcept { return h_; }

private:
    std::uint64_t h_ = 0xcbf29ce484222325ull;
};

} // namespace

std::uint64_t run_report::fingerprint() const {
    fnv1a h;
    h << dim << ports << cost.t_s << cost.t_w << cost.word_bytes << virtual_time << steps;
    for (std::size_t i = 0; i < node_time.size(); ++i)
        h << node_time[i] << node_steps[i];
    for (const link_stats& l : links)
        h << l.messages << l.bytes;
    h << routed_messages << congestion.size();
    for (const congestion_event& e : congestion)
        h << e.from << e.dim << e.source << e.dest << e.wanted << e.granted;
    h << trace.size();
    for (const trace_record& t : trace)
        h << t.from << t.to << t.dim << t.step << t.start << t.arrival << t.bytes << t.send_call
          << t.recv_call;
    h << calls.size();
    for (const call_record& c : calls)
        h << c.node << c.kind << c.dim << c.peer << c.step << c.start << c.end;
    h << node_digest.size();
    for (const std::uint64_t d : node_digest)
        h << d;
    return h.value();
}

std::string run_report::summary() const {
    std::ostringstream os;
    const int p = 1 << dim;
    os << "hypercube     d = " << dim << ", p = " << p << " nodes, " << to_string(ports)
       << ", t_s = " << cost.t_s << ", t_w = " << cost.t_w << '\n';
    os << "virtual time  " << virtual_time << "  (" << steps << " steps on the critical path)\n";
    os << "wall time     " << std::fixed << std::setprecision(6) << wall_seconds << " s\n"
       << std::defaultfloat;
    os << "speed         " << std::fixed << std::setprecision(0) << messages_per_second()
       << " messages/s, " << std::defaultfloat << std::setprecision(4) << virtual_time_per_second()
       << " virtual time/s\n"
       << std::setprecision(6);
    os << "traffic       " << messages << " link message" << (messages == 1 ? "" : "s") << ", "
       << bytes << " bytes";
    if (routed_messages) os << " (" << routed_messages << " routed end to end)";
    os << '\n';
    if (!links.empty()) {
        const auto busiest = std::max_element(
            links.begin(), links.end(),
            [](const link_stats& a, const link_stats& b) { return a.bytes < b.bytes; });
        const auto at = std::size_t(busiest - links.begin());
        const int from = int(at / std::size_t(dim)), k = int(at % std::size_t(dim));
        os << "busiest link  " << from << " -> " << (from ^ (1 << k)) << " (dim " << k
           << "): " << busiest->messages << " message" << (busiest->messages == 1 ? "" : "s")
           << ", " << busiest->bytes << " bytes\n";
    }
    os << "congestion    " << congestion.size() << " event" << (congestion.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < congestion.size() && i < 4; ++i) {
        const auto& c = congestion[i];
        os << "\n  link " << c.from << " -> " << (c.from ^ (1 << c.dim)) << ": message " << c.source
           << " -> " << c.dest << " wanted t = " << c.wanted << ", got t = " << c.granted;
    }
    if (congestion.size() > 4) os << "\n  ...";
    os << '\n';
    return os.str();
}

std::string_view to_string(call_kind k) noexcept {
    switch (k) {
    case call_kind::send:
        return "send";
    case call_kind::recv:
        return "recv";
    case call_kind::exchange:
        return "exchange";
    case call_kind::exchange_all:
        return "exchange_all";
    case call_kind::recv_any:
        return "recv_any";
    case call_kind::send_routed:
        return "send_routed";
    case call_kind::recv_routed:
        return "recv_routed";
    }
    return "?";
}

std::ostream& operator<<(std::ostream& os, const run_report& r) {
    return os << r.summary();
}

} // namespace hcube
