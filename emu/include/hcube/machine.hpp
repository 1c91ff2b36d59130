// A machine: 2^dim node threads, created once and reused by every run().
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <hcube/config.hpp>
#include <hcube/error.hpp>
#include <hcube/node.hpp>
#include <hcube/report.hpp>

namespace hcube {

namespace detail {

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

// Fibers: address space per node (its stack and the guard zone below it),
// and how many of p stacks get a guard page within lim's vm.max_map_count
// (each takes two mappings; the others get a red zone: docs/runtime.md).
std::size_t fiber_stack_stride(std::size_t stack_bytes) noexcept;
long long fiber_guard_pages(int p, const os_limits& lim) noexcept;

// config::executor with automatic replaced by HCUBE_EXECUTOR's choice (or
// threads); usage_error when the variable names no executor.
executor_kind resolve_executor(executor_kind e);

// Why a machine configured as `c` cannot start within `lim` (each limit it
// exceeds, by how much, and how to raise it), or "" when it fits.
std::string os_limit_problems(const config& c, const os_limits& lim);

} // namespace detail

class machine {
public:
    // Throws usage_error for a dimension outside 0..max_dim, a bad cost model or
    // a link_capacity above max_link_capacity, and error when the system's
    // limits cannot take 2^dim node threads (detail::os_limit_problems).
    explicit machine(config cfg);
    ~machine();
    machine(const machine&) = delete;
    machine& operator=(const machine&) = delete;

    // Runs `program` on every node (SPMD) and returns what it measured.
    // If a node program throws, the run is cancelled and run_error is thrown;
    // a deadlock throws deadlock_error. The machine stays usable either way.
    run_report run(const std::function<void(node&)>& program);

    const config& cfg() const noexcept;
    int size() const noexcept { return 1 << cfg().dim; }

    // With the mpi backend: this process's rank of ranks(), and whether it
    // runs node i (its subcube, rank * size() / ranks() onwards). In-process:
    // rank 0 of 1, every node local. A node program's effects on memory are
    // seen only in the process that ran it.
    int rank() const noexcept;
    int ranks() const noexcept;
    bool is_local(int node) const noexcept;
    // Whether `b` is true on every rank; every rank must call it, as an MPI
    // collective (in-process: b). For checks each rank makes of its nodes.
    bool on_every_rank(bool b);

    // Between runs: change the cost model, port model or tracing.
    void set_cost(cost_model c);
    void set_ports(port_model p);
    void set_trace(bool on);

private:
    std::unique_ptr<detail::machine_state> state_;
};

// Asks the C library's malloc to keep the memory programs free: blocks up to
// 32 MiB come from its heaps, and freed memory stays with the process. By
// default glibc maps large blocks afresh and gives freed memory back, so a
// node program that allocates its buffers in every call page-faults them in
// every call (on this project's 2-core machine that made a 64 KiB-per-node
// reduce-scatter at p = 16 2.5x slower, and changed which algorithm was
// fastest). Process-wide, so a program's choice: the hcube program and the
// collective benchmarks call it at start. False where it cannot (no glibc).
bool keep_freed_memory() noexcept;

} // namespace hcube
