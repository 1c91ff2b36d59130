// Machine configuration: dimension, port model, cost model, link capacity.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

namespace hcube {

// Largest dimension a machine accepts: 2^16 node threads is already far past
// what a laptop schedules well; 12 (4096 threads) is the tested ceiling.
// Each node is an OS thread with its own stack (two memory mappings: the stack
// and its guard page) and thread id, so the machine also refuses, before
// starting any thread, a dimension the system's limits cannot take
// (vm.max_map_count, kernel.pid_max, kernel.threads-max, RLIMIT_NPROC) and
// says which limit and how to raise it. With Linux defaults (max_map_count
// 65530, pid_max 32768) that is d >= 15.
inline constexpr int max_dim = 16;

// Largest config::link_capacity. A link's ring is allocated (and touched) when
// the machine is built, one 64-byte slot per message, on each of the p d
// directed links: 2^20 messages is already 64 MiB per link, and no program
// needs more buffering than the messages it sends before receiving.
inline constexpr std::size_t max_link_capacity = std::size_t(1) << 20;

// Seed 000, chapter 4 intro and 4.7.2.
enum class port_model {
    single_port, // one send and one receive in progress per node (the textbook's default)
    all_port,    // one send and one receive in progress per link
};

std::string_view to_string(port_model m) noexcept;

// What runs the node programs (docs/design.md, "The executor seam").
enum class executor_kind {
    automatic, // HCUBE_EXECUTOR=threads|fibers if set, else threads
    threads,   // every node its own OS thread (the specified shape)
    fibers,    // every node a user-level context with its own stack, on config::workers threads
};

std::string_view to_string(executor_kind e) noexcept;

// Default config::stack_bytes: a fiber's stack. Address space only: a node's
// stack costs memory as far as its program touches it (about 8-16 KiB for the
// collectives).
inline constexpr std::size_t default_stack_bytes = std::size_t(256) << 10;
inline constexpr std::size_t min_stack_bytes = std::size_t(16) << 10;
inline constexpr std::size_t max_stack_bytes = std::size_t(1) << 30;
// Largest config::workers.
inline constexpr int max_workers = 1024;

// Cost of one message of m words: t_s + t_w * m (seed 000, chapter 4 intro).
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
    // exchange() payloads above this many bytes are not buffered: the receiver
    // copies straight from the sender's buffer (one copy, MPI's rendezvous
    // protocol), so such an exchange completes only once the peer received it.
    std::size_t eager_limit = 4096;
    // Record every message (sender, link, step, times, bytes) in the run report.
    bool trace = false;
    // With no more nodes than CPUs this process may use (those the thread that
    // constructs the machine may run on), bind node i to the i-th of them, as
    // MPI binds ranks to cores: spinning nodes then never share a core or
    // migrate. Ignored when nodes outnumber CPUs, and by fibers.
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
};

} // namespace hcube
