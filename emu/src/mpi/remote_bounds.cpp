// The bounds of other ranks' nodes (remote_bounds.hpp).
#include "remote_bounds.hpp"

#include <cstring>

#include "../horizon.hpp"
#include "wire.hpp"

namespace hcube::detail::mpi {

remote_bounds::remote_bounds(machine_state& m, comm& c, int inner)
    : m_(m)
    , comm_(c)
    , inner_(inner) {}

void remote_bounds::begin_run(std::uint32_t run) {
    run_ = run;
    told_.assign(std::size_t(m_.local_end - m_.local_begin), 0.0);
    std::vector<entry> now, later;
    for (const entry& e : early_)
        (e.run == run ? now : later).push_back(e);
    early_ = std::move(later);
    apply(now);
}

void remote_bounds::share() {
    std::vector<entry> rose;
    for (int i = m_.local_begin; i < m_.local_end; ++i) {
        const double bound = send_bound(m_.nodes[i]);
        double& told = told_[std::size_t(i - m_.local_begin)];
        if (bound <= told) continue;
        told = bound;
        rose.push_back({i, run_, bound});
    }
    if (rose.empty()) return;
    std::vector<std::byte> bytes(rose.size() * sizeof(entry));
    std::memcpy(bytes.data(), rose.data(), bytes.size());
    for (int k = inner_; k < m_.cfg.dim; ++k)
        comm_.isend(bytes, comm_.rank() ^ (1 << (k - inner_)), bounds_tag);
}

void remote_bounds::receive(const MPI_Status& st) {
    std::vector<entry> entries(comm::bytes_in(st) / sizeof(entry));
    comm_.receive(entries.data(), entries.size() * sizeof(entry), st);
    comm_.count_received();
    if (entries.empty()) return;
    if (entries.front().run == run_)
        apply(entries);
    else if (entries.front().run > run_) // its sender began the next run first
        early_.insert(early_.end(), entries.begin(), entries.end());
}

void remote_bounds::apply(const std::vector<entry>& entries) {
    for (const entry& e : entries)
        m_.nodes[e.node].next_send.store(e.bound, std::memory_order_release);
}

} // namespace hcube::detail::mpi
