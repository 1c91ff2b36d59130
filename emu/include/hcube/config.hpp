// Machine configuration: dimension, port model, cost model, link capacity.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace hcube {

class node;

// Largest dimension a machine accepts, with any executor (max_dim_of gives
// each one's). With threads 2^16 node threads is already far past what a
// laptop schedules well; 12 (4096 threads) is the tested ceiling. Each node is
// then an OS thread with its own stack (two memory mappings: the stack and its
// guard page) and thread id, so the machine also refuses, before starting any
// thread, a dimension the system's limits cannot take (vm.max_map_count,
// kernel.pid_max, kernel.threads-max, RLIMIT_NPROC) and says which limit and
// how to raise it. With Linux defaults (max_map_count 65530, pid_max 32768)
// that is d >= 15. Fibers go further (docs/runtime.md: d = 20 measured).
inline constexpr int max_dim = 20;

// Largest config::link_capacity. A link's ring is allocated (and touched) when
// the machine is built, one 64-byte slot per message, on each of the p d
// directed links: 2^20 messages is already 64 MiB per link, and no program
// needs more buffering than the messages it sends before receiving.
inline constexpr std::size_t max_link_capacity = std::size_t(1) << 20;

// Grama et al. chapter 4 intro and 4.7.2.
enum class port_model {
    single_port, // one send and one receive in progress per node (the textbook's default)
    all_port,    // one send and one receive in progress per link
};

// Everything the runtime, the collectives, the catalog, the program and the
// cost functions ask of a port model, in one place: ask port_policy_of(model)
// instead of comparing port_model values. A new model is a new enumerator and
// a row of port_policies (docs/extending.md).
struct port_policy {
    port_model model;
    std::string_view name;   // in reports and messages: "single-port"
    std::string_view option; // on the command line: hcube run --ports single
    // Each link its own send and its own receive port (all-port); otherwise
    // the node has one of each, used by one message at a time.
    bool port_per_link;

    // Send ports of a node of a dim-cube; it has as many receive ports.
    constexpr int send_ports(int dim) const noexcept {
        return port_per_link ? std::max(dim, 1) : 1;
    }
    // The send (and receive) port that link k uses.
    constexpr std::size_t port_of(int k) const noexcept {
        return port_per_link ? std::size_t(k) : 0;
    }
    // Whether a node may have messages in progress on several links at once
    // (exchange_all; collectives that use every link in one step).
    constexpr bool several_links_at_once() const noexcept { return port_per_link; }
};

// Indexed by port_model.
inline constexpr port_policy port_policies[] = {
    {port_model::single_port, "single-port", "single", false},
    {port_model::all_port, "all-port", "all", true},
};

constexpr const port_policy& port_policy_of(port_model m) noexcept {
    return port_policies[std::size_t(m)];
}

constexpr std::string_view to_string(port_model m) noexcept {
    return port_policy_of(m).name;
}

// The model whose option ("all") or name ("all-port") is s.
constexpr std::optional<port_model> parse_port_model(std::string_view s) noexcept {
    for (const port_policy& p : port_policies)
        if (s == p.option || s == p.name) return p.model;
    return std::nullopt;
}

// What runs the node programs (docs/design.md, "The executor seam").
enum class executor_kind {
    automatic, // HCUBE_EXECUTOR=threads|fibers if set, else threads
    threads,   // every node its own OS thread (the specified shape)
    fibers,    // every node a user-level context with its own stack, on config::workers threads
};

// Everything the runtime, the program and the tests ask of an executor, in
// one place: a new executor is an enumerator and a row of executor_policies
// (docs/extending.md); its footprint is hcube/system.hpp's footprint_of.
struct executor_policy {
    executor_kind kind;
    // In reports, messages, HCUBE_EXECUTOR and `hcube run --executor`.
    std::string_view name;
    // What a node is, for help and reports: "every node its own OS thread".
    std::string_view about;
    int dim_limit; // the largest dimension it runs
    // Each node is an OS thread with the system's stack, so the system's
    // thread limits apply; otherwise nodes are fibers on config::workers
    // threads with config::stack_bytes stacks (--workers, --stack-bytes).
    bool thread_per_node;
    // Memory a node typically makes resident: its state and the stack pages
    // in use (max RSS less the links, one-word allreduce at d = 12 and 16).
    std::uint64_t touched_per_node;
};

// The resolved executors, the default first.
inline constexpr executor_policy executor_policies[] = {
    {executor_kind::threads, "threads", "every node its own OS thread", 16, true, 16 << 10},
    {executor_kind::fibers, "fibers",
     "user-level contexts on a few worker threads: many nodes, fast", max_dim, false, 6 << 10},
};

// The row of `table` (of kinds, the default first) whose `key` is k; the
// default row for any other k (automatic).
template <class Row, std::size_t N, class K>
constexpr const Row& policy_row(const Row (&table)[N], K Row::*key, K k) noexcept {
    for (const Row& r : table)
        if (r.*key == k) return r;
    return table[0];
}

// The `key` of the row of `table` named s; nullopt for any other name.
template <class Row, std::size_t N, class K>
constexpr std::optional<K> policy_named(const Row (&table)[N], K Row::*key,
                                        std::string_view s) noexcept {
    for (const Row& r : table)
        if (s == r.name) return r.*key;
    return std::nullopt;
}

// The row of e; automatic counts as the default (threads).
constexpr const executor_policy& executor_policy_of(executor_kind e) noexcept {
    return policy_row(executor_policies, &executor_policy::kind, e);
}

// "threads", "fibers", or "automatic".
constexpr std::string_view to_string(executor_kind e) noexcept {
    return e == executor_kind::automatic ? "automatic" : executor_policy_of(e).name;
}

// The executor named s; nullopt for any other name ("automatic" included).
constexpr std::optional<executor_kind> parse_executor(std::string_view s) noexcept {
    return policy_named(executor_policies, &executor_policy::kind, s);
}

// Largest dimension with executor e (resolved: automatic counts as threads).
constexpr int max_dim_of(executor_kind e) noexcept {
    return executor_policy_of(e).dim_limit;
}

// The executor that goes furthest (to max_dim), for "fibers go to 20".
constexpr const executor_policy& widest_executor() noexcept {
    const executor_policy* w = &executor_policies[0];
    for (const executor_policy& p : executor_policies)
        if (p.dim_limit > w->dim_limit) w = &p;
    return *w;
}

// Default config::stack_bytes: a fiber's stack. Address space only: a node's
// stack costs memory as far as its program touches it (about 8-16 KiB for the
// collectives).
inline constexpr std::size_t default_stack_bytes = std::size_t(256) << 10;
inline constexpr std::size_t min_stack_bytes = std::size_t(16) << 10;
inline constexpr std::size_t max_stack_bytes = std::size_t(1) << 30;
// Largest config::workers.
inline constexpr int max_workers = 1024;

// Where the nodes run (docs/mpi.md). Results, virtual time and reports are the
// same for both.
enum class backend_kind {
    automatic,  // HCUBE_BACKEND=in-process|mpi if set, else in-process
    in_process, // every node in this process
    mpi,        // the nodes spread over the MPI job's ranks, a subcube each
};

// "automatic", "in-process", "mpi".
std::string_view to_string(backend_kind b) noexcept;

// How directed links are built (docs/design.md, "Links"). Every implementation
// gives the same results, virtual times and reports; they differ in wall time.
enum class link_impl {
    automatic,  // HCUBE_LINKS=ring|boost if set, else ring
    ring,       // hcube's own SPSC ring: one cache line per hop (the default)
    boost_spsc, // boost::lockfree::spsc_queue
};

// What the runtime, the program and the tests ask of a link implementation:
// a new one is an enumerator, a row here and its type in emu/src/links/
// (docs/extending.md).
struct link_policy {
    link_impl impl;
    // In reports, HCUBE_LINKS and `hcube run --links`.
    std::string_view name;
    // For help: "hcube's own, the default".
    std::string_view about;
};

// The resolved implementations, the default first.
inline constexpr link_policy link_policies[] = {
    {link_impl::ring, "ring", "hcube's own, the default"},
    {link_impl::boost_spsc, "boost", "Boost.Lockfree's spsc_queue"},
};

// The row of l; automatic counts as the default (ring).
constexpr const link_policy& link_policy_of(link_impl l) noexcept {
    return policy_row(link_policies, &link_policy::impl, l);
}

// "automatic", "ring", "boost": the names HCUBE_LINKS and `hcube run --links`
// take (and report).
constexpr std::string_view to_string(link_impl l) noexcept {
    return l == link_impl::automatic ? "automatic" : link_policy_of(l).name;
}

// The implementation named "ring" or "boost"; nullopt for any other name.
constexpr std::optional<link_impl> parse_link_impl(std::string_view name) noexcept {
    return policy_named(link_policies, &link_policy::impl, name);
}

// Cost of one message of m words: t_s + t_w * m (Grama et al. chapter 4 intro).
struct cost_model {
    double t_s = 1.0;
    double t_w = 0.0;
    // Bytes per word. 0 means "one word per element of the message's type",
    // so the textbook's m is the element count whatever the element type.
    std::size_t word_bytes = 0;

    // Words in a message of `bytes` bytes made of `elem_size`-byte elements.
    double words(std::size_t bytes, std::size_t elem_size) const noexcept {
        if (word_bytes == 0) return elem_size ? double(bytes / elem_size) : 0.0;
        return double((bytes + word_bytes - 1) / word_bytes);
    }
    double message_time(double words) const noexcept { return t_s + t_w * words; }
};

struct config {
    int dim = 0;
    port_model ports = port_model::single_port;
    cost_model cost{};
    // Messages a directed link buffers before the sender blocks. 0 makes every
    // send synchronous (it completes when received), which exposes programs that
    // only work thanks to eager buffering: they deadlock and get a report.
    // At most max_link_capacity.
    std::size_t link_capacity = 16;
    // The link implementation. machine::cfg() and run_report::links say which
    // one `automatic` chose; a bad HCUBE_LINKS is a usage_error from the
    // machine's constructor.
    link_impl links = link_impl::automatic;
    // exchange() payloads above this many bytes are not buffered: the receiver
    // copies straight from the sender's buffer (one copy, MPI's rendezvous
    // protocol), so such an exchange completes only once the peer received it.
    std::size_t eager_limit = 4096;
    // Record every message (sender, link, step, times, bytes) and every
    // primitive call in the run report.
    bool trace = false;
    // Fold every message a node takes (where from, and its bytes) into the
    // node's digest (run_report::node_digest), which run_report::fingerprint
    // then covers: a node's results depend on what it received.
    bool digest = false;
    // Called on the node's own thread as each primitive call begins (before
    // it moves data or time); `hcube draw` snapshots the node's buffers here.
    std::function<void(node&)> on_call{};
    // Bind node i to the (i mod c)-th of the c CPUs this process may use
    // (those the thread that constructs the machine may run on). With no more
    // nodes than CPUs, as MPI binds ranks to cores: spinning nodes never share
    // a core or migrate. With more, every CPU holds a subcube when c is a
    // power of two, and only the log2 c lowest dimensions cross CPUs; the
    // node the caller of run() runs stays on the caller's CPUs. Ignored by
    // fibers and over MPI.
    bool bind_to_cores = true;
    // A deadlock is reported once every unfinished node has been parked on an
    // unchanged wait for this long.
    std::chrono::milliseconds deadlock_grace{100};
    // Threads or fibers; automatic reads HCUBE_EXECUTOR when the machine is
    // built. Results, virtual time, reports and errors are the same.
    executor_kind executor = executor_kind::automatic;
    // Fibers: worker OS threads that run them (0: one per usable CPU, capped
    // at the number of nodes).
    int workers = 0;
    // Fibers: each node's stack, min_stack_bytes..max_stack_bytes, rounded up
    // to pages. A node that overflows it is caught by a guard page or, when
    // guard pages do not fit under vm.max_map_count, by a red zone checked
    // after its program (docs/runtime.md).
    std::size_t stack_bytes = default_stack_bytes;
    // In-process or over MPI ranks; automatic reads HCUBE_BACKEND when the
    // machine is built.
    backend_kind backend = backend_kind::automatic;
    // MPI: a rank whose unfinished nodes all stay blocked, with no message
    // moving in or out, for this long while rank 0 cannot see it (its own
    // nodes busy) reports them and aborts the job; so does a rank waiting this
    // long for a rank that stopped. A deadlock rank 0 sees is a
    // deadlock_error on every rank after deadlock_grace.
    std::chrono::milliseconds mpi_quiet_limit{10000};
};

} // namespace hcube
