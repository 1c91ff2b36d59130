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

class machine {
public:
    // Throws usage_error for a dimension outside 0..max_dim, a bad cost model or
    // a link_capacity above max_link_capacity, and error when the system's
    // limits cannot take 2^dim node threads (os_limit_problems, system.hpp).
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
