// A machine on this system: which executor HCUBE_EXECUTOR chooses, the
// system's limits, what each executor's nodes take of memory and of those
// limits, and whether a machine fits. The machine's constructor refuses what
// does not fit with os_limit_problems' text; `hcube info` prints the same
// footprints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <hcube/config.hpp>

namespace hcube {

// config::executor with automatic replaced by HCUBE_EXECUTOR's choice (or
// threads); usage_error when the variable names no executor.
executor_kind resolve_executor(executor_kind e);

// What the system allows a machine's node threads and links, read (from /proc,
// getrlimit and sysconf) before any of them is created. -1: no such limit.
struct os_limits {
    long long max_map_count = -1; // vm.max_map_count
    long long maps_in_use = 0;    // this process's memory mappings
    long long pid_max = -1;       // kernel.pid_max: every thread takes an id
    long long threads_max = -1;   // kernel.threads-max
    long long tasks = 0;          // threads on the whole system
    long long nproc = -1;         // RLIMIT_NPROC, when it applies (not to root)
    long long own_threads = 1;    // this process's threads
    double memory = -1;           // physical memory, bytes
    double address_space = -1;    // what RLIMIT_AS (ulimit -v) leaves this process, bytes
};
os_limits read_os_limits();

// Memory a machine configured as `c` holds once its program has sent a
// message on every link: per directed link its 64-byte line and one 64-byte
// slot (a link takes a slot more for each further message waiting on it), per
// node what its executor's nodes typically touch (executor_policy). What
// `hcube info` prints and `hcube run` counts before it starts.
inline constexpr std::uint64_t link_touched_bytes = 128;
struct machine_memory {
    std::uint64_t links = 0;      // directed links, p d
    std::uint64_t link_bytes = 0; // links x link_touched_bytes
    std::uint64_t nodes = 0;
    std::uint64_t per_node = 0; // executor_policy::touched_per_node
    std::uint64_t node_bytes = 0;
    std::uint64_t total() const noexcept { return link_bytes + node_bytes; }
};
machine_memory memory_estimate(const config& c);

// What a machine's executor takes: address space its mappings reserve,
// memory its nodes typically touch, and mappings against vm.max_map_count.
struct executor_footprint {
    std::uint64_t stack = 0;    // per node: its stack
    std::uint64_t guard = 0;    // per node: its guard page (threads) or guard zone (fibers)
    std::uint64_t reserved = 0; // address space of the nodes' stacks and worker threads
    std::uint64_t touched = 0;  // p x executor_policy::touched_per_node
    std::uint64_t mappings = 0; // threads: a stack and a guard page each
    std::uint64_t guarded = 0;  // stacks with a guard page (fibers: as many as the limit allows)
    int workers = 0;            // OS threads that run fibers (0 with a thread per node)
    std::uint64_t thread_stack = 0; // an OS thread's stack and guard page (ulimit -s)
};

// The footprint of a machine configured as `c` (its executor resolved)
// within `lim`.
executor_footprint footprint_of(const config& c, const os_limits& lim);

// Why a machine configured as `c` cannot start within `lim` (each limit it
// exceeds, by how much, and how to raise it), or "" when it fits.
std::string os_limit_problems(const config& c, const os_limits& lim);

// The largest dimension executor e can start within `lim` (with c's other
// settings; 0 when not even a 0-cube fits).
int largest_dim_within(config c, executor_kind e, const os_limits& lim);

} // namespace hcube
