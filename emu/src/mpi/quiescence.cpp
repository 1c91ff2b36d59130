// Decisions that need the whole job quiet (quiescence.hpp).
#include "quiescence.hpp"

#include <cstring>

#include "../horizon.hpp"
#include "../park.hpp"

namespace hcube::detail::mpi {

namespace {

std::vector<std::byte> bytes_of(const wave_message& w) {
    std::vector<std::byte> out(sizeof w);
    std::memcpy(out.data(), &w, sizeof w);
    return out;
}

} // namespace

quiescence::quiescence(machine_state& m, comm& c, std::function<bool()> idle,
                       std::function<void(int, int)> tell_choose)
    : m_(m)
    , comm_(c)
    , idle_(std::move(idle))
    , tell_choose_(std::move(tell_choose)) {}

void quiescence::begin_run(std::uint32_t run) {
    run_ = run;
    wave_open_ = false;
    last_.clear();
}

void quiescence::receive(const MPI_Status& st) {
    wave_message w;
    comm_.receive(&w, sizeof w, st);
    if (w.run != run_) return; // a past run's
    if (w.kind == probe_kind)
        comm_.isend(bytes_of(status_now(w.wave)), 0, wave_tag, false);
    else
        take_status(w);
}

wave_message quiescence::status_now(std::uint64_t wave) const {
    wave_message w{status_kind, run_, wave, comm_.rank(), 0, comm_.sent(), comm_.received(), -1, 0};
    w.idle = idle_() ? 1 : 0;
    if (const int who = w.idle ? least_chooser(m_) : -1; who >= 0) {
        w.chooser = who;
        w.candidate = m_.nodes[who].pending_choice.load().arrival;
    }
    return w;
}

void quiescence::take_status(const wave_message& w) {
    if (!wave_open_ || w.wave != wave_) return; // an answer to an abandoned wave
    statuses_[std::size_t(w.rank)] = w;
    if (++answers_ == comm_.ranks()) end_wave();
}

void quiescence::poll(bool choosing, bool routed_used) {
    if (comm_.rank() != 0 || wave_open_) return;
    if (!choosing && !routed_used) return;
    if (std::chrono::steady_clock::now() < next_wave_) return;
    if ((!choosing && !m_.routes.has_pending()) || !idle_()) {
        last_.clear();
        return;
    }
    wave_open_ = true;
    ++wave_;
    answers_ = 0;
    statuses_.assign(std::size_t(comm_.ranks()), {});
    const wave_message probe{probe_kind, run_, wave_, 0, 0, 0, 0, -1, 0};
    for (int r = 1; r < comm_.ranks(); ++r)
        comm_.isend(bytes_of(probe), r, wave_tag, false);
    take_status(status_now(wave_));
}

void quiescence::end_wave() {
    wave_open_ = false;
    next_wave_ = std::chrono::steady_clock::now() + wave_gap;
    std::uint64_t sent = 0, received = 0;
    bool all_idle = true;
    std::vector<std::uint64_t> counts;
    for (const wave_message& w : statuses_) {
        all_idle &= w.idle == 1;
        sent += w.sent;
        received += w.received;
        counts.push_back(w.sent);
        counts.push_back(w.received);
    }
    if (!all_idle || sent != received) {
        last_.clear();
        return;
    }
    if (counts != last_) {
        last_ = std::move(counts); // once more, to see that nothing moved
        next_wave_ = std::chrono::steady_clock::now();
        return;
    }
    last_.clear();
    // As one process's last_parked: the least chooser takes its candidate
    // unless a routed message wants to start before it.
    const wave_message* least = nullptr;
    for (const wave_message& w : statuses_)
        if (w.chooser >= 0 && (!least || w.candidate < least->candidate ||
                               (w.candidate == least->candidate && w.chooser < least->chooser)))
            least = &w;
    if (least && !m_.routes.pending_before(least->candidate)) {
        if (least->rank == 0) return force_choice(m_, m_.nodes[least->chooser]);
        return tell_choose_(least->rank, least->chooser);
    }
    std::vector<int> woken;
    if (m_.routes.force(woken)) wake_each(m_, woken);
}

} // namespace hcube::detail::mpi
