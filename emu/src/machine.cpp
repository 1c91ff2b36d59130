// The machine: node threads created once, runs, cancellation, the deadlock
// watchdog, and the run report.
#include <hcube/machine.hpp>
#include <hcube/system.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <system_error>
#include <tuple>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "park.hpp"
#include "state.hpp"

namespace hcube {

using namespace detail;

namespace {

// Set in the OS threads that run node programs (enter_node_thread): run()
// from inside one would wait for itself forever.
thread_local bool inside_node_program = false;

constexpr int deadlock_marker = -2; // first_failure when the watchdog cancelled
// The caller's wait for a run (wait_in_process): ~5 us of spinning, then
// ~50 us of polling with yields, then a futex sleep.
constexpr int caller_spin_rounds = 128;
constexpr auto caller_poll = std::chrono::microseconds(50);

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
    route_finish(m, i);
    if (m.deactivate(s)) last_parked(m);
    if (m.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // A Dekker pair with the caller's caller_sleeps and its re-check: a
        // caller still polling is not woken (a system call per run).
        m.finished.store(1, std::memory_order_seq_cst);
        if (m.caller_sleeps.load(std::memory_order_seq_cst)) futex_wake(m.finished);
    }
}

// The CPUs the calling thread may run on (at least one entry).
std::vector<int> detail::usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty())
        for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c)
            cpus.push_back(int(c));
    return cpus;
}

bool detail::move_to_cpu(int cpu) noexcept {
    cpu_set_t mask, one;
    if (pthread_getaffinity_np(pthread_self(), sizeof mask, &mask) != 0 || !CPU_ISSET(cpu, &mask))
        return false;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) return false;
    pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
    return true;
}

namespace {

// `c` with its executor resolved.
void validate(const config& c) {
    if (const int top = max_dim_of(c.executor); c.dim < 0 || c.dim > top)
        throw usage_error("machine: dimension " + std::to_string(c.dim) + " is outside 0.." +
                          std::to_string(top) + " with " + std::string(to_string(c.executor)) +
                          (top < max_dim ? " (" + std::string(widest_executor().name) + " go to " +
                                               std::to_string(max_dim) + ")"
                                         : ""));
    const auto bad = [](double x) { return !(x >= 0) || std::isinf(x); };
    if (bad(c.cost.t_s) || bad(c.cost.t_w))
        throw usage_error("machine: cost model t_s = " + std::to_string(c.cost.t_s) +
                          ", t_w = " + std::to_string(c.cost.t_w) + " must be finite and >= 0");
    if (c.link_capacity > max_link_capacity)
        throw usage_error("machine: link_capacity " + std::to_string(c.link_capacity) +
                          " is above the maximum " + std::to_string(max_link_capacity) +
                          " messages");
    if (c.workers < 0 || c.workers > max_workers)
        throw usage_error("machine: workers " + std::to_string(c.workers) + " is outside 0.." +
                          std::to_string(max_workers) + " (0: one per usable CPU)");
    if (c.stack_bytes < min_stack_bytes || c.stack_bytes > max_stack_bytes)
        throw usage_error("machine: stack_bytes " + std::to_string(c.stack_bytes) + " is outside " +
                          std::to_string(min_stack_bytes) + ".." + std::to_string(max_stack_bytes));
}

// A node's unread routed messages and bytes by source, in source order.
std::map<int, link_backlog> routed_backlog(node_state& s) {
    std::map<int, link_backlog> by_source;
    std::lock_guard lock(s.routed_mu);
    s.routed_in.for_each([&](const routed_message& msg) {
        link_backlog& b = by_source[msg.source];
        b.messages += 1;
        b.bytes += msg.bytes;
    });
    return by_source;
}

// What node i's links and routed inbox hold unread, for the deadlock report:
// "; 1 message pending on dim 0 from node 1, 16 bytes". Nodes are parked, so
// links are read as for_each_pending allows, the inbox under its lock.
std::string pending_messages(machine_state& m, int i) {
    std::ostringstream os;
    const auto item = [&](std::uint64_t messages, std::uint64_t bytes, const char* kind,
                          const std::string& from) {
        if (messages == 0) return;
        os << "; " << messages << kind << (messages == 1 ? " message" : " messages") << " pending "
           << from << ", " << bytes << " bytes";
    };
    for (int k = 0; k < m.cfg.dim; ++k) {
        const link_backlog b = m.with_links([&]<class L>(std::type_identity<L>) {
            return m.out_link<L>(i ^ (1 << k), k).pending();
        });
        item(b.messages, b.bytes, "",
             "on dim " + std::to_string(k) + " from node " + std::to_string(i ^ (1 << k)));
    }
    for (const auto& [source, u] : routed_backlog(m.nodes[i]))
        item(u.messages, u.bytes, " routed", "from node " + std::to_string(source));
    return os.str();
}

} // namespace

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

namespace {

// A config enum's `automatic` resolved: the value the environment variable
// `var` names (`parse`), or `fallback` when it is unset or empty.
template <class E, class Parse>
E from_environment(E asked, const char* var, E fallback, Parse parse, const char* what,
                   const std::string& choices) {
    if (asked != E::automatic) return asked;
    const char* env = std::getenv(var);
    if (!env || !*env) return fallback;
    if (const std::optional<E> e = parse(env)) return *e;
    throw usage_error("machine: " + std::string(var) + "=" + env + " names no " + what + "; use " +
                      choices + " (or unset it: " + std::string(to_string(fallback)) + ")");
}

// The parse for from_environment: the one of `values` whose to_string is v.
template <class E, std::size_t N>
auto named_among(std::array<E, N> values) {
    return [values](std::string_view v) -> std::optional<E> {
        for (const E k : values)
            if (v == to_string(k)) return k;
        return std::nullopt;
    };
}

// "a, b or c": the names of a policy table's rows.
template <class Row, std::size_t N>
std::string names_of(const Row (&rows)[N]) {
    std::string out;
    for (std::size_t i = 0; i < N; ++i)
        out += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(rows[i].name);
    return out;
}

} // namespace

executor_kind resolve_executor(executor_kind e) {
    return from_environment(e, "HCUBE_EXECUTOR", executor_policies[0].kind, parse_executor,
                            "executor", names_of(executor_policies));
}

namespace {

backend_kind resolve_backend(backend_kind b) {
    return from_environment(b, "HCUBE_BACKEND", backend_kind::in_process,
                            named_among(std::array{backend_kind::in_process, backend_kind::mpi}),
                            "backend", "in-process or mpi");
}

} // namespace

void machine_state::cancel(int failed_node) noexcept {
    int none = -1;
    first_failure.compare_exchange_strong(none, failed_node, std::memory_order_acq_rel);
    if (cancelled.exchange(true, std::memory_order_seq_cst)) return;
    for (int i = 0; i < p; ++i) {
        nodes[i].bell.fetch_add(1, std::memory_order_seq_cst);
        exec->unpark(nodes[i]);
    }
}

machine::machine(config cfg)
    : state_(std::make_unique<machine_state>()) {
    cfg.executor = resolve_executor(cfg.executor);
    validate(cfg);
    const os_limits lim = read_os_limits();
    if (const std::string why = os_limit_problems(cfg, lim); !why.empty()) throw error(why);
    machine_state& m = *state_;
    m.cfg = cfg;
    m.cfg.links = from_environment(cfg.links, "HCUBE_LINKS", link_policies[0].impl, parse_link_impl,
                                   "link implementation", names_of(link_policies));
    m.p = 1 << cfg.dim;

    const int d = cfg.dim;
    m.nodes = std::make_unique<node_state[]>(m.p);
    m.local_end = m.p;
    m.cfg.backend = resolve_backend(cfg.backend);
    // Packed rings unless the nodes will spin (links/ring.hpp), which they
    // never do over MPI; set before anything is built for the link type.
    m.packed_rings = m.cfg.backend == backend_kind::mpi ||
                     !executor_policy_of(cfg.executor).thread_per_node || !thread_nodes_spin(m);
    if (m.cfg.backend == backend_kind::mpi) { // this rank's subcube: local_begin, local_end
        m.net = make_mpi_remote(m);
        m.inline_node =
            m.local_end - m.local_begin == 1 && executor_policy_of(cfg.executor).thread_per_node;
    }
    // The links with an end on a local node: over MPI a rank holds its
    // subcube's, not the machine's.
    const std::size_t capacity = std::max<std::size_t>(cfg.link_capacity, 1);
    m.with_links([&]<class L>(std::type_identity<L>) {
        m.links.build<L>(std::size_t(m.p) * d, capacity, [&](std::size_t l) {
            const int from = int(l / std::size_t(d)), k = int(l % std::size_t(d));
            return m.is_local(from) || m.is_local(from ^ (1 << k));
        });
    });
    const auto ports = std::size_t(port_policy_of(cfg.ports).send_ports(d));
    for (int i = 0; i < m.p; ++i) {
        node_state& s = m.nodes[i];
        s.send_port.resize(ports);
        s.ends.resize(d);
        if (!m.is_local(i)) continue;
        m.with_links([&]<class L>(std::type_identity<L>) {
            for (int k = 0; k < d; ++k) {
                s.ends[k].out = &m.out_link<L>(i, k);
                s.ends[k].in = &m.out_link<L>(i ^ (1 << k), k);
            }
        });
    }
    if (m.net) m.net->connect();
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
    return state_->net ? state_->net->rank() : 0;
}

int machine::ranks() const noexcept {
    return state_->net ? state_->net->ranks() : 1;
}

bool machine::is_local(int node) const noexcept {
    return state_->is_local(node);
}

bool machine::on_every_rank(bool b) {
    return state_->net ? state_->net->all(b) : b;
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
    const auto ports = std::size_t(port_policy_of(p).send_ports(m.cfg.dim));
    for (int i = 0; i < m.p; ++i) {
        m.nodes[i].send_port.resize(ports);
    }
}

void machine::set_trace(bool on) {
    state_->cfg.trace = on;
}

namespace {

struct undelivered {
    int from, to, dim; // dim -1: routed
    std::uint64_t messages = 0, bytes = 0;
};

// Empties every link and inbox (freeing heap payloads) and says what was there.
std::vector<undelivered> drain(machine_state& m) {
    std::vector<undelivered> left;
    const int d = m.cfg.dim;
    for (int i = 0; i < m.p; ++i) {
        m.with_links([&]<class L>(std::type_identity<L>) {
            for (int k = 0; k < d; ++k) {
                if (!m.links.has(std::size_t(i) * d + k)) continue; // another rank's
                L& l = m.out_link<L>(i, k);
                // The counts, not empty(), which would read the slot after the
                // last message: slots no message used stay untouched.
                undelivered u{i, i ^ (1 << k), k};
                while (l.consumed() < l.pushed()) {
                    const descriptor& desc = l.front();
                    u.messages += 1;
                    u.bytes += desc.bytes;
                    if (desc.kind == payload::heap) payload_free(const_cast<void*>(desc.ptr));
                    l.pop();
                }
                l.rewind();
                if (u.messages) left.push_back(u);
            }
        });
        for (const auto& [source, b] : routed_backlog(m.nodes[i]))
            left.push_back({source, i, -1, b.messages, b.bytes});
        m.nodes[i].routed_in.clear();
    }
    return left;
}

std::string undelivered_message(const std::vector<undelivered>& left) {
    std::ostringstream os;
    std::uint64_t total = 0;
    for (const auto& u : left)
        total += u.messages;
    os << "run ended with " << total << " undelivered message" << (total == 1 ? "" : "s")
       << " (every message sent must be received):";
    std::size_t shown = 0;
    for (const auto& u : left) {
        if (++shown > 16) {
            os << "\n  ... and " << left.size() - 16 << " more link"
               << (left.size() == 17 ? "" : "s");
            break;
        }
        os << "\n  node " << u.from << " -> node " << u.to
           << (u.dim < 0 ? std::string(" (routed)") : " on dim " + std::to_string(u.dim)) << ": "
           << u.messages << " message" << (u.messages == 1 ? "" : "s") << ", " << u.bytes
           << " bytes";
    }
    return os.str();
}

// Every unfinished node is parked on a bell nobody rang. Returns their waits.
std::vector<blocked_wait> blocked_nodes(machine_state& m, std::vector<std::uint64_t>& epochs,
                                        bool& all_blocked) {
    std::vector<blocked_wait> waits;
    all_blocked = true;
    for (int i = m.local_begin; i < m.local_end; ++i) {
        const node_state& s = m.nodes[i];
        if (s.done.load(std::memory_order_acquire)) {
            epochs[i] = 0;
            continue;
        }
        if (!s.parked_unrung()) {
            all_blocked = false;
            return waits;
        }
        epochs[i] = s.park_epoch.load(std::memory_order_relaxed);
        waits.push_back({i, ""});
    }
    return waits;
}

} // namespace

namespace {

// The run's messages and calls in node order, each message linked to the call
// that sent it and the one that took it: the n-th message taken from a link
// (or, routed, from one source) is the n-th sent on it.
void collect_trace(const machine_state& m, run_report& r,
                   std::chrono::steady_clock::time_point t0) {
    const std::int64_t origin = t0.time_since_epoch().count();
    std::vector<std::int64_t> first_call(std::size_t(m.p));
    std::map<std::tuple<int, int, int>, std::deque<std::size_t>> sent; // (from, to, dim)
    for (int i = 0; i < m.p; ++i) {
        const node_state& s = m.nodes[i];
        first_call[std::size_t(i)] = std::int64_t(r.calls.size());
        for (call_record c : s.calls) {
            c.wall_start -= origin;
            c.wall_end -= origin;
            r.calls.push_back(c);
        }
        for (trace_record t : s.trace) {
            t.send_call += first_call[std::size_t(i)];
            sent[{t.from, t.to, t.dim}].push_back(r.trace.size());
            r.trace.push_back(t);
        }
    }
    for (int i = 0; i < m.p; ++i)
        for (const auto& got : m.nodes[i].receipts) {
            auto& queue = sent[{got.from, i, got.dim}];
            r.trace[queue.front()].recv_call = first_call[std::size_t(i)] + got.call;
            queue.pop_front();
        }
}

} // namespace

namespace {

// Samples the local nodes on watchdog ticks: blocked() says for how long
// every unfinished one has stayed parked on the same wait (same epochs, bells
// unrung); zero while any moves.
class block_sampler {
public:
    explicit block_sampler(machine_state& m, std::chrono::steady_clock::time_point t0)
        : m_(m)
        , epochs_(std::size_t(m.p))
        , since_(t0) {}

    std::chrono::steady_clock::duration blocked(std::vector<blocked_wait>& waits) {
        bool all_blocked = false;
        waits = blocked_nodes(m_, epochs_, all_blocked);
        const auto now = std::chrono::steady_clock::now();
        // A node deciding for the parked others (horizon.cpp, last_parked) is
        // about to wake one: however long it is kept off its core, that is
        // no deadlock.
        const bool deciding = !m_.deciding.try_lock();
        if (!deciding) m_.deciding.unlock();
        if (deciding || !all_blocked || waits.empty() || epochs_ != stable_) {
            stable_ = all_blocked ? epochs_ : std::vector<std::uint64_t>{};
            since_ = now;
        }
        return now - since_;
    }
    void moved() { stable_.clear(); }

    // The waits, each with what it waits for and the messages it holds.
    std::vector<blocked_wait> described(std::vector<blocked_wait> waits) const {
        for (auto& w : waits) {
            const wait_info& info = m_.nodes[w.node].waiting_for;
            w.what = describe_wait(m_.cfg.dim, info) + pending_messages(m_, w.node);
            w.dim = info.dim;
            w.peer = info.peer;
        }
        return waits;
    }

private:
    machine_state& m_;
    std::vector<std::uint64_t> epochs_, stable_;
    std::chrono::steady_clock::time_point since_;
};

} // namespace

// The deadlock watchdog of an in-process run: a deadlock is declared (and the
// run cancelled) when every unfinished node stayed blocked for the grace
// period. Ticked on the caller of run()'s thread only: while it waits for the
// nodes, and while the node it runs itself sleeps (executor::caller_node).
class detail::run_watchdog {
public:
    run_watchdog(machine_state& m, std::chrono::steady_clock::time_point t0)
        : m_(m)
        , sampler_(m, t0) {}

    void tick() {
        if (m_.cancelled.load(std::memory_order_acquire)) return;
        std::vector<blocked_wait> waits;
        if (sampler_.blocked(waits) < m_.cfg.deadlock_grace) return;
        deadlock_ = sampler_.described(std::move(waits));
        m_.cancel(deadlock_marker);
    }

    // The waits of the deadlock it declared, if it did.
    std::vector<blocked_wait>& deadlock() noexcept { return deadlock_; }
    // Over MPI the caller watches with its own rule (wait_over_network).
    block_sampler& sampler() noexcept { return sampler_; }

private:
    machine_state& m_;
    block_sampler sampler_;
    std::vector<blocked_wait> deadlock_;
};

void detail::watchdog_tick(machine_state& m) {
    m.watchdog->tick();
}

namespace {

// Waits for the nodes of an in-process run, ticking the watchdog.
void wait_in_process(machine_state& m, run_watchdog& watchdog) {
    // Short runs end without a sleep and a wake-up: with a core to spare the
    // caller spins a moment first, then polls with yields a moment. Only a
    // moment: the scheduler may have put a node thread on the caller's CPU,
    // and a 2000-round spin (75 us) held it off for the whole spin, so an
    // empty run at d = 0 took 0.5 or 75 us by where its one thread landed.
    for (int i = 0;
         m.caller_spins && i < caller_spin_rounds && !m.finished.load(std::memory_order_acquire);
         ++i)
        cpu_relax();
    for (const auto until = std::chrono::steady_clock::now() + caller_poll;
         !m.finished.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until;)
        std::this_thread::yield();
    while (m.finished.load(std::memory_order_acquire) == 0) {
        m.caller_sleeps.store(true, std::memory_order_seq_cst);
        const bool woken = m.finished.load(std::memory_order_seq_cst) != 0 ||
                           futex_wait_for(m.finished, 0, watchdog_period);
        m.caller_sleeps.store(false, std::memory_order_relaxed);
        if (!woken) watchdog.tick();
    }
}

// The failures of a cancelled run, in node order: which node cancelled it
// first depends on the scheduler, the set does not.
std::vector<node_failure> failures_of(machine_state& m) {
    std::vector<node_failure> failures;
    for (int i = m.local_begin; i < m.local_end; ++i) {
        const std::exception_ptr& original = m.nodes[i].error;
        if (!original) continue;
        std::string what = "unknown exception";
        try {
            std::rethrow_exception(original);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        failures.push_back({i, what, original});
    }
    return failures;
}

// Waits for this rank's nodes while the caller moves messages between ranks
// (remote.hpp), then for the ranks it shares links with. What other ranks
// cannot see ends the job: a node that threw, and nodes that all stayed
// blocked with nothing moving for config::mpi_quiet_limit.
void wait_over_network(machine_state& m, std::chrono::steady_clock::time_point t0,
                       block_sampler& sampler) {
    auto tick = t0;
    for (idle_backoff idle; m.finished.load(std::memory_order_acquire) == 0;) {
        if (m.net->progress()) {
            idle.reset();
            sampler.moved();
            continue;
        }
        idle.pause();
        if (const auto now = std::chrono::steady_clock::now(); now - tick >= watchdog_period) {
            tick = now;
            std::vector<blocked_wait> waits;
            if (m.cancelled.load(std::memory_order_acquire) ||
                sampler.blocked(waits) < m.cfg.mpi_quiet_limit)
                continue;
            std::string why = "every node of this rank stayed blocked for " +
                              std::to_string(m.cfg.mpi_quiet_limit.count()) +
                              " ms with no message moving (config::mpi_quiet_limit); a deadlock "
                              "across ranks?";
            for (const auto& w : sampler.described(std::move(waits)))
                why += "\n  node " + std::to_string(w.node) + ": " + w.what;
            m.net->abort(why);
        }
    }
    if (m.cancelled.load(std::memory_order_acquire)) {
        std::string why = "the run failed";
        for (const auto& f : failures_of(m))
            why += "\n  node " + std::to_string(f.node) + ": " + f.what;
        m.net->abort(why);
    }
}

} // namespace

run_report machine::run(const std::function<void(node&)>& program) {
    if (inside_node_program) throw usage_error("machine::run called from inside a node program");
    machine_state& m = *state_;
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
        s.pending_choice.store({});
        s.forced.store(false, std::memory_order_relaxed);
        s.parked.store(false, std::memory_order_relaxed);
        s.done.store(false, std::memory_order_relaxed);
    }
    m.routes.reset(m.p, m.cfg.dim, m.cfg.trace);
    m.choosing.store(false, std::memory_order_relaxed);
    if (m.net) m.net->begin_run();
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
    if (m.net)
        wait_over_network(m, t0, watchdog.sampler());
    else
        wait_in_process(m, watchdog);
    m.watchdog = nullptr;
    const std::uint64_t arrived_late = m.net ? m.net->finish() : 0;
    const auto t1 = std::chrono::steady_clock::now();
    m.program = nullptr;

    if (m.cancelled.load(std::memory_order_acquire)) {
        drain(m);
        const int failed = m.first_failure.load(std::memory_order_acquire);
        if (failed == deadlock_marker) throw deadlock_error(std::move(watchdog.deadlock()));
        std::vector<node_failure> failures = failures_of(m);
        if (failures.empty())
            failures.push_back({failed, "cancelled while a rendezvous send was outstanding", {}});
        throw run_error(std::move(failures));
    }
    const auto left = drain(m);
    if (!left.empty() && !m.net) throw error(undelivered_message(left));

    run_report r;
    r.dim = m.cfg.dim;
    r.ports = m.cfg.ports;
    r.cost = m.cfg.cost;
    r.executor = m.cfg.executor;
    r.link_implementation = m.cfg.links;
    r.backend = m.cfg.backend;
    r.ranks = m.net ? m.net->ranks() : 1;
    r.wall_seconds = std::chrono::duration<double>(t1 - t0).count();
    r.rank_wall_seconds = {r.wall_seconds};
    r.node_time.resize(m.p);
    r.node_steps.resize(m.p);
    if (m.cfg.digest) r.node_digest.resize(m.p);
    r.links.resize(std::size_t(m.p) * m.cfg.dim);
    for (int i = m.local_begin; i < m.local_end; ++i) {
        const node_state& s = m.nodes[i];
        vclock end = s.clock;
        for (const vclock& port : s.send_port)
            end = max(end, port);
        r.node_time[i] = end.time;
        r.node_steps[i] = end.steps;
        if (m.cfg.digest) r.node_digest[i] = s.digest;
        for (int k = 0; k < m.cfg.dim; ++k)
            r.links[std::size_t(i) * m.cfg.dim + k] = s.ends[k].sent;
    }
    // The router's share: over MPI rank 0's router counted every link's.
    const std::vector<link_stats>& routed = m.routes.traffic();
    for (std::size_t l = 0; l < routed.size(); ++l) {
        r.links[l].messages += routed[l].messages;
        r.links[l].bytes += routed[l].bytes;
    }
    r.routed_messages = m.routes.messages();
    r.congestion = m.routes.congestion();
    if (m.net) { // every rank gets the whole machine's report, or the same error
        std::uint64_t here = arrived_late;
        for (const auto& u : left)
            here += u.messages;
        const std::uint64_t everywhere = m.net->combine(r, here);
        if (here)
            throw error(undelivered_message(left) +
                        (arrived_late ? "\n  and " + std::to_string(arrived_late) +
                                            " more from other ranks to finished nodes"
                                      : ""));
        if (everywhere)
            throw error("run ended with " + std::to_string(everywhere) + " undelivered message" +
                        (everywhere == 1 ? "" : "s") +
                        " on other ranks (every message sent must be received); their ranks "
                        "list those that arrived");
    }
    for (int i = 0; i < m.p; ++i) {
        r.virtual_time = std::max(r.virtual_time, r.node_time[i]);
        r.steps = std::max(r.steps, r.node_steps[i]);
    }
    for (const link_stats& l : r.links) {
        r.messages += l.messages;
        r.bytes += l.bytes;
    }
    if (m.cfg.trace) {
        if (m.net)
            m.net->gather_traces(t0.time_since_epoch().count());
        else
            for (const auto& fix : m.routes.trace_fixes())
                m.nodes[fix.node].trace[fix.index].arrival = fix.arrival;
        collect_trace(m, r, t0);
    }
    return r;
}

} // namespace hcube
