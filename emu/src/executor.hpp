// The executor seam: what runs node programs, parks a waiting node and wakes
// it. Private to emu/src; docs/design.md ("The executor seam") has the
// contract. The waiting policy (spin, then yield, then park: node.cpp,
// wait_until) and the parking protocol's bookkeeping (the doorbell, `waiting`,
// `active`, the deadlock watchdog's fields) sit above it and are the same for
// every executor.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hcube/config.hpp>
#include <hcube/system.hpp>

namespace hcube::detail {

struct machine_state;
struct node_state;

class executor {
public:
    virtual ~executor() = default; // stops and joins everything it started

    // The caller of run(), with no run in progress: every node runs
    // run_node(m, i) once, in its own context. Returns at once; the last node
    // to finish signals machine_state::finished.
    virtual void launch() = 0;

    // Node n's own context only: returns once n.bell != seq, possibly earlier
    // (spurious; the caller re-checks). Never returns later than that: a bell
    // rung before or during the call must not be slept through.
    virtual void park(node_state& n, std::uint32_t seq) noexcept = 0;

    // Any thread (a node's context, the caller of run()), after it changed
    // n.bell: if n sleeps in park(), make it runnable. Never blocks, never
    // switches contexts, may be called for a node that does not sleep.
    virtual void unpark(node_state& n) noexcept = 0;

    // A node's own context: let other nodes run a moment (the waiting
    // policy's yields; also while waiting for a bounded copy by a peer).
    virtual void yield() noexcept = 0;

    // Nodes have a core each: waiting may spin before it yields.
    virtual bool spins() const noexcept = 0;

    // How many times waiting yields before it parks.
    virtual int yields() const noexcept = 0;

    // The contexts' names for reports ("threads", "fibers").
    virtual const char* name() const noexcept = 0;

    // Nodes that usually run on one core form a group, groups() of them:
    // the machine counts active nodes per group (machine_state::active), so
    // parks and wakes inside a group write no line another core writes.
    virtual int groups() const noexcept { return 1; }
    virtual int group_of(int /*node*/) const noexcept { return 0; }
    // A group's nodes all run on one thread, one at a time (fibers: its
    // worker), so a wake inside a group needs no fence (park.hpp, wake).
    virtual bool group_is_one_thread() const noexcept { return false; }

    // The node the caller of run() runs itself right after launch(), or -1.
    // Its park must keep the deadlock watchdog ticking (watchdog_tick): the
    // caller is the watchdog.
    virtual int caller_node() const noexcept { return -1; }
};

// Node i's part of the current run (machine.cpp): run_program (the program
// and its failure), then finish_node (the bookkeeping of a finished node; the
// last one signals the caller). An executor may check the node in between.
void run_program(machine_state& m, int i);
void finish_node(machine_state& m, int i);
inline void run_node(machine_state& m, int i) {
    run_program(m, i);
    finish_node(m, i);
}

// The caller of run()'s deadlock watchdog (machine.cpp): one look at the
// nodes, every watchdog_period while the caller waits for them, also while the
// node it runs itself sleeps (executor::caller_node). Caller's thread only.
inline constexpr auto watchdog_period = std::chrono::milliseconds(10);
void watchdog_tick(machine_state& m);

// Marks the calling OS thread as one that runs node programs, so run() called
// from a node program is refused instead of waiting for itself (machine.cpp).
void enter_node_thread() noexcept;

// Every node its own OS thread (threads.cpp).
std::unique_ptr<executor> make_thread_executor(machine_state& m);
// Whether its nodes will spin (executor::spins): each has a core of its own,
// and no other process shares them (backend.hpp). Known before it starts.
bool thread_nodes_spin(const machine_state& m);

// Fibers: address space per node (its stack and the guard zone below it),
// and how many of p stacks get a guard page within lim's vm.max_map_count
// (each takes two mappings; the others get a red zone: docs/runtime.md).
std::size_t fiber_stack_stride(std::size_t stack_bytes) noexcept;
long long fiber_guard_pages(int p, const os_limits& lim) noexcept;

// Every node a fiber on `workers` OS threads; the first `guards` stacks get a
// guard page, the others a red zone (fibers.cpp).
std::unique_ptr<executor> make_fiber_executor(machine_state& m, int workers, long long guards);

} // namespace hcube::detail
