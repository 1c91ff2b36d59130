// The machine's life cycle: construction, runs (reset, launch, wait,
// settle) and cancellation. What differs between one process and several is
// the backend's (backend.hpp).
#include <hcube/machine.hpp>
#include <hcube/system.hpp>

#include <algorithm>
#include <chrono>

#include "configure.hpp"
#include "park.hpp"
#include "settle.hpp"
#include "state.hpp"
#include "sys/cpus.hpp"
#include "watchdog.hpp"

namespace hcube {

using namespace detail;

namespace {

// Set in the OS threads that run node programs (enter_node_thread): run()
// from inside one would wait for itself forever.
thread_local bool inside_node_program = false;

} // namespace

void detail::enter_node_thread() noexcept {
    inside_node_program = true;
}

void detail::run_program(machine_state& m, int i) {
    node_state& s = m.nodes[i];
    node me(m, s, i, m.cfg.dim);
    try {
        (*m.program)(me);
    } catch (const run_cancelled&) {
    } catch (...) {
        s.error = std::current_exception();
        m.cancel(i);
    }
}

void detail::finish_node(machine_state& m, int i) {
    node_state& s = m.nodes[i];
    s.done.store(true, std::memory_order_release);
    // A finished node's bound must not hold back routed messages sent later
    // in the run (told to the router now or when routed traffic begins).
    m.world->finish_routed(i);
    if (deactivate(m, s)) last_parked(m);
    if (m.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // A Dekker pair with the caller's caller_sleeps and its re-check: a
        // caller still polling is not woken (a system call per run).
        m.finished.store(1, std::memory_order_seq_cst);
        if (m.caller_sleeps.load(std::memory_order_seq_cst)) futex_wake(m.finished);
    }
}

void machine_state::cancel(int failed_node) noexcept {
    int none = -1;
    first_failure.compare_exchange_strong(none, failed_node, std::memory_order_acq_rel);
    if (cancelled.exchange(true, std::memory_order_seq_cst)) return;
    for (int i = 0; i < p; ++i) {
        nodes[i].bell.fetch_add(1, std::memory_order_seq_cst);
        exec->unpark(nodes[i]);
    }
}

namespace {

// n elements of T for every node in one array, node i's on whole cache lines
// of its own from i * stride (with a thread per node, neighbours write theirs
// at every send), each node's `member` pointed at its n.
template <class T>
huge_array<T> per_node(machine_state& m, std::span<T> node_state::*member, std::size_t n,
                       const char* what) {
    constexpr std::size_t per_line = std::max<std::size_t>(cache_line / sizeof(T), 1);
    const std::size_t stride = (n + per_line - 1) / per_line * per_line;
    huge_array<T> all(std::size_t(m.p) * stride, what);
    for (int i = 0; i < m.p; ++i)
        m.nodes[i].*member = {all.data() + std::size_t(i) * stride, n};
    return all;
}

} // namespace

machine::machine(config cfg)
    : state_(std::make_unique<machine_state>()) {
    cfg.executor = resolve_executor(cfg.executor);
    validate(cfg);
    const os_limits lim = read_os_limits();
    if (const std::string why = os_limit_problems(cfg, lim); !why.empty()) throw error(why);
    machine_state& m = *state_;
    m.cfg = cfg;
    m.cfg.links = resolve_links(cfg.links);
    m.p = 1 << cfg.dim;

    const int d = cfg.dim;
    m.nodes = huge_array<node_state>(std::size_t(m.p), "the nodes' states");
    m.cfg.backend = resolve_backend(cfg.backend);
    m.world = make_backend(m); // this process's nodes: local_begin, local_end
    m.polls = m.world->traits_of().polls;
    // Packed rings unless the nodes will spin (links/ring.hpp); set before
    // anything is built for the link type.
    m.packed_rings = !executor_policy_of(cfg.executor).thread_per_node || !thread_nodes_spin(m);
    // The links with an end on a local node.
    const std::size_t capacity = std::max<std::size_t>(cfg.link_capacity, 1);
    m.with_links([&]<class L>(std::type_identity<L>) {
        m.links.build<L>(std::size_t(m.p) * d, capacity, [&](std::size_t l) {
            const int from = int(l / std::size_t(d)), k = int(l % std::size_t(d));
            return m.is_local(from) || m.is_local(from ^ (1 << k));
        });
    });
    m.ends = per_node(m, &node_state::ends, std::size_t(d), "the links' ends");
    m.send_ports = per_node(m, &node_state::send_port,
                            std::size_t(port_policy_of(cfg.ports).send_ports(d)), "the send ports");
    for (int i = 0; i < m.p; ++i) {
        node_state& s = m.nodes[i];
        if (!m.is_local(i)) continue;
        m.with_links([&]<class L>(std::type_identity<L>) {
            for (int k = 0; k < d; ++k) {
                s.ends[k].out = &m.out_link<L>(i, k);
                s.ends[k].in = &m.out_link<L>(i ^ (1 << k), k);
            }
        });
    }
    m.world->connect();
    if (!executor_policy_of(cfg.executor).thread_per_node) {
        const int cpus = int(usable_cpus().size());
        m.cfg.workers = std::min(cfg.workers ? cfg.workers : cpus, m.local_end - m.local_begin);
        m.exec = make_fiber_executor(m, m.cfg.workers,
                                     static_cast<long long>(footprint_of(cfg, lim).guarded));
    } else {
        m.exec = make_thread_executor(m);
    }
    m.groups = std::vector<active_group>(std::size_t(m.exec->groups()));
    for (int i = 0; i < m.p; ++i) {
        m.nodes[i].group = &m.groups[std::size_t(m.is_local(i) ? m.exec->group_of(i) : 0)];
        m.nodes[i].group->members += m.is_local(i);
    }
    m.spin = m.exec->spins();
    // The caller of run() waits on a core too: with no core to spare (a
    // 1-cube on 2 CPUs) its spin kept a node thread off the CPU for the whole
    // spin, ~75 us per empty run here, against ~4 us when it yields.
    m.caller_spins = m.spin && std::size_t(m.local_end - m.local_begin) + 1 <= usable_cpus().size();
    m.yields = m.exec->yields();
    m.asymmetric = m.spin && heavy_barrier_available();
    m.group_thread = m.exec->group_is_one_thread();
}

machine::~machine() {
    // Stops the nodes' contexts first. Messages of a failed run were drained
    // by run(); nothing is left to free.
    state_->exec.reset();
}

const config& machine::cfg() const noexcept {
    return state_->cfg;
}

int machine::rank() const noexcept {
    return state_->world->rank();
}

int machine::ranks() const noexcept {
    return state_->world->ranks();
}

bool machine::is_local(int node) const noexcept {
    return state_->is_local(node);
}

bool machine::on_every_rank(bool b) {
    return state_->world->all(b);
}

void machine::set_cost(cost_model c) {
    config next = state_->cfg;
    next.cost = c;
    validate(next);
    state_->cfg = next;
}

void machine::set_ports(port_model p) {
    machine_state& m = *state_;
    m.cfg.ports = p;
    m.send_ports = per_node(m, &node_state::send_port,
                            std::size_t(port_policy_of(p).send_ports(m.cfg.dim)), "the send ports");
}

void machine::set_trace(bool on) {
    state_->cfg.trace = on;
}

namespace {

// Every node and the machine as before any run.
void reset(machine_state& m) {
    for (int i = 0; i < m.p; ++i) {
        node_state& s = m.nodes[i];
        s.clock = {};
        std::fill(s.send_port.begin(), s.send_port.end(), vclock{});
        s.recv_port = {};
        for (auto& e : s.ends)
            e.sent = {};
        s.trace.clear();
        s.calls.clear();
        s.receipts.clear();
        s.error = nullptr;
        s.digest = 0;
        s.routed_seq = 0;
        s.loans = 0;
        s.loans_returned.store(0, std::memory_order_relaxed);
        s.routed_told = {-1, -1};
        s.routed_told_seq = 0;
        s.next_send.store(0, std::memory_order_relaxed);
        s.pending_choice.reset();
        s.parked.store(false, std::memory_order_relaxed);
        s.done.store(false, std::memory_order_relaxed);
    }
    m.routes.reset(m.p, m.cfg.dim, m.cfg.trace);
    m.choosing.store(false, std::memory_order_relaxed);
    m.world->begin_run();
    const int local = m.local_end - m.local_begin;
    int groups_active = 0;
    for (active_group& g : m.groups) {
        g.count.store(g.members, std::memory_order_relaxed);
        groups_active += g.members > 0;
    }
    m.active.store(groups_active, std::memory_order_relaxed);
    m.cancelled.store(false, std::memory_order_relaxed);
    m.first_failure.store(-1, std::memory_order_relaxed);
    m.remaining.store(local, std::memory_order_relaxed);
    m.finished.store(0, std::memory_order_relaxed);
}

// The exception a cancelled run ends with, the same in every process.
[[noreturn]] void throw_failure(machine_state& m, run_watchdog& watchdog) {
    const int failed = m.first_failure.load(std::memory_order_acquire);
    std::vector<node_failure> failures = failures_of(m);
    std::vector<blocked_wait> waits;
    if (failed == deadlock_marker) waits = std::move(watchdog.deadlock());
    m.world->combine_failures(failures, waits);
    if (!waits.empty()) throw deadlock_error(std::move(waits));
    if (failures.empty())
        failures.push_back({failed, "cancelled while a rendezvous send was outstanding", {}});
    throw run_error(std::move(failures));
}

} // namespace

run_report machine::run(const std::function<void(node&)>& program) {
    if (inside_node_program) throw usage_error("machine::run called from inside a node program");
    machine_state& m = *state_;
    reset(m);
    m.program = &program;

    const auto t0 = std::chrono::steady_clock::now();
    run_watchdog watchdog(m, t0);
    m.watchdog = &watchdog;
    m.exec->launch();
    if (const int c = m.exec->caller_node(); c >= 0) { // on this thread (executor.hpp)
        inside_node_program = true;
        run_node(m, c);
        inside_node_program = false;
    }
    m.world->await_nodes(watchdog);
    m.watchdog = nullptr;
    m.world->finish();
    const auto t1 = std::chrono::steady_clock::now();
    m.program = nullptr;

    if (m.cancelled.load(std::memory_order_acquire)) {
        drain(m);
        throw_failure(m, watchdog);
    }
    const auto left = drain(m);
    run_report r = local_report(m, std::chrono::duration<double>(t1 - t0).count());
    m.world->combine(r, left);
    add_totals(r);
    if (m.cfg.trace) {
        m.world->settle_trace(t0.time_since_epoch().count());
        collect_trace(m, r, t0);
    }
    return r;
}

} // namespace hcube
