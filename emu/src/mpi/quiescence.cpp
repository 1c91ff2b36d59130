// Decisions that need the whole job quiet (quiescence.hpp).
#include "quiescence.hpp"

#include <algorithm>

#include "../horizon.hpp"
#include "../park.hpp"

namespace hcube::detail::mpi {

quiescence::quiescence(machine_state& m, comm& c, std::function<bool()> idle,
                       std::function<void(bool)> settle, std::function<void(int, int)> tell_choose,
                       std::function<void()> deadlock)
    : m_(m)
    , comm_(c)
    , idle_(std::move(idle))
    , settle_(std::move(settle))
    , tell_choose_(std::move(tell_choose))
    , deadlock_(std::move(deadlock)) {}

void quiescence::begin_run(std::uint32_t run) {
    run_ = run;
    wave_open_ = false;
    last_.clear();
}

void quiescence::receive(const MPI_Status& st) {
    wave_message w;
    comm_.receive(&w, sizeof w, st);
    if (w.run != run_) {
        // Rank 0 is a run ahead (this rank still waits for an end marker) or
        // behind (it is finishing the last): not idle for that wave, which
        // would otherwise wait for this answer for good.
        if (w.kind == probe_kind) {
            const wave_message busy{status_kind, w.run, w.wave, comm_.rank(), 0, 0, 0, -1, 0, 0,
                                    0,           0,     0};
            comm_.isend(bytes_of(busy), 0, wave_tag, false);
        }
        return;
    }
    if (w.kind == probe_kind)
        comm_.isend(bytes_of(status_now(w.wave, w.choosing != 0)), 0, wave_tag, false);
    else
        take_status(w);
}

wave_message quiescence::status_now(std::uint64_t wave, bool choosing) {
    if (idle_()) settle_(choosing);
    wave_message w{
        status_kind, run_, wave, comm_.rank(), 0, comm_.sent(), comm_.received(), -1, 0, 0,
        0,           0,    0};
    w.idle = idle_() ? 1 : 0;
    w.cancelled = m_.cancelled.load(std::memory_order_acquire) ? 1 : 0;
    for (int i = m_.local_begin; i < m_.local_end; ++i) {
        w.parks += m_.nodes[i].park_epoch.load(std::memory_order_relaxed);
        w.unfinished += m_.nodes[i].done.load(std::memory_order_acquire) ? 0 : 1;
    }
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

std::chrono::steady_clock::duration quiescence::watch_gap() const {
    return std::max<std::chrono::steady_clock::duration>(wave_gap, m_.cfg.deadlock_grace / 4);
}

void quiescence::poll(bool choosing, bool routed_used) {
    if (comm_.rank() != 0 || wave_open_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_wave_) return;
    const bool deciding = choosing || (routed_used && m_.routes.has_pending());
    if (!idle_()) {
        last_.clear();
        if (!deciding) next_wave_ = now + watch_gap();
        return;
    }
    deciding_ = deciding;
    wave_open_ = true;
    ++wave_;
    answers_ = 0;
    statuses_.assign(std::size_t(comm_.ranks()), {});
    const wave_message probe{probe_kind, run_, wave_, 0, 0, 0, 0, -1, 0, 0, 0, 0, choosing};
    for (int r = 1; r < comm_.ranks(); ++r)
        comm_.isend(bytes_of(probe), r, wave_tag, false);
    take_status(status_now(wave_, choosing));
}

void quiescence::end_wave() {
    wave_open_ = false;
    const auto now = std::chrono::steady_clock::now();
    next_wave_ = now + (deciding_ ? std::chrono::steady_clock::duration(wave_gap) : watch_gap());
    std::uint64_t sent = 0, received = 0;
    int unfinished = 0;
    bool quiet = true; // every rank idle, none cancelled
    std::vector<std::uint64_t> counts;
    for (const wave_message& w : statuses_) {
        quiet &= w.idle == 1 && w.cancelled == 0;
        sent += w.sent;
        received += w.received;
        unfinished += w.unfinished;
        counts.insert(counts.end(), {w.sent, w.received, w.parks});
    }
    if (!quiet || sent != received) {
        last_.clear();
        return;
    }
    if (counts != last_) {
        last_ = std::move(counts); // once more, to see that nothing moved
        quiet_since_ = now;
        next_wave_ = now;
        return;
    }
    // As one process's last_parked: the least chooser takes its candidate
    // unless a routed message wants to start before it.
    const wave_message* least = nullptr;
    for (const wave_message& w : statuses_)
        if (w.chooser >= 0 && (!least || w.candidate < least->candidate ||
                               (w.candidate == least->candidate && w.chooser < least->chooser)))
            least = &w;
    if (least && !m_.routes.pending_before(least->candidate)) {
        last_.clear();
        if (least->rank == 0) return force_choice(m_, m_.nodes[least->chooser]);
        return tell_choose_(least->rank, least->chooser);
    }
    if (std::vector<int> woken; m_.routes.force(woken)) {
        last_.clear();
        return wake_each(m_, woken);
    }
    // Nothing can wake the unfinished nodes: as one process's watchdog, a
    // deadlock once that has lasted config::deadlock_grace.
    if (unfinished > 0 && now - quiet_since_ >= m_.cfg.deadlock_grace) {
        last_.clear();
        deadlock_();
    }
}

} // namespace hcube::detail::mpi
