// Runtime microbenchmarks: every figure is printed next to its limit,
// and every limit is computed from a baseline measured in the same run. The
// first three are measured for each setup (threads with hcube's ring, threads
// with boost's spsc_queue, fibers with the ring: config::executor and
// config::links), taking turns with each other and with their baseline; the
// limits are the ring's, the boost rows are for comparison.
//
//   ping-pong      d = 1 link round trip vs a raw cross-core spin ping-pong (<= 2x),
//                  measured alternately so both see the same moments of a noisy
//                  virtual machine; boost::lockfree::spsc_queue's own spin
//                  ping-pong beside them (why links have their own ring:
//                  docs/design.md); and with threads > cores (8 threads)
//   bandwidth      exchange on one link and on all links vs memcpy of the same
//                  bytes by as many threads as cores (>= 80%)
//   step pattern   d = 12, one word on every dimension in turn (a run with it
//                  minus an empty run). Threads: within 1.5x of the measured-cost
//                  bound (a context switch among 4096 threads) x (context switches
//                  per node-step, counted by getrusage) x 49152 / cores. Fibers:
//                  at least 10x faster than threads
//   executors      p = 64 back-to-back one-double allreduce, fibers >= 5x faster
//                  than threads; empty run() at d = 2 under each within 2x of a
//                  barrier among 4 spinning threads; all-link exchange bandwidth
//                  with fibers >= 80% of memcpy
//   big cube       d = 12..18 (20 with --huge) with fibers, a new process that
//                  starts, runs a one-word allreduce and stops: within 3 us per
//                  node-step, beside a process that touches a fresh page per node;
//                  max RSS < 3 GiB at d = 18, 12 GiB at d = 20; the RSS above a
//                  0-cube's process within 25% of memory_estimate
//   run overhead   empty run() for d = 0..12 vs one wake-up of every thread (<= 2x)
//   routed         a routed message after 10^6 others vs the first 10^3 (<= 3x)
//   master-worker  d = 10, a task's wall time with recv_any (choosing by virtual
//                  time) beside the same messages taken in turn with recv
//
// Output: CSV (metric,d,value,unit,limit,verdict) on stdout, or to --csv FILE
// with a readable table on stdout. --quick shortens every measurement; --only
// measures some groups of rows (ping-pong, bandwidth, pattern, allreduce,
// empty-run, big-cube, overhead, routed, master-worker). The groups share the
// baselines, the settings and the report, so they stay one file.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <climits>

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/lockfree/spsc_queue.hpp>

#include <hcube/args.hpp>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/driver/microbench.hpp>
#include <hcube/machine.hpp>
#include <hcube/system.hpp>

namespace {

using hcube::microbench::clock_type;
using hcube::microbench::median;
using hcube::microbench::memcpy_probe;
using hcube::microbench::pin_to_cpu;
using hcube::microbench::pinned_round_trip_us;
using hcube::microbench::seconds_since;
using hcube::microbench::spin_round_trip_us;
using hcube::microbench::unpin;

// Baselines park on raw futexes, as the runtime does, so each limit is what
// the kernel's primitives can do and not what a library wrapper adds.
void park(std::atomic<std::uint32_t>& word, std::uint32_t old) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, old, nullptr,
            nullptr, 0);
}
void unpark(std::atomic<std::uint32_t>& word, int n = 1) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, n, nullptr,
            nullptr, 0);
}

template <class F>
double median_of(int reps, F f) {
    std::vector<double> v;
    for (int i = 0; i < reps; ++i)
        v.push_back(f());
    return median(std::move(v));
}

struct row {
    std::string metric;
    int d;
    double value;
    std::string unit;
    double limit; // NaN: informational
    bool at_most; // value must be <= limit (else >=)
};

struct report {
    std::vector<row> rows;
    void add(row r) { rows.push_back(std::move(r)); }
    static std::string verdict(const row& r) {
        if (r.limit != r.limit) return "info";
        return (r.at_most ? r.value <= r.limit : r.value >= r.limit) ? "ok" : "MISSED";
    }
    void csv(std::ostream& os) const {
        os << "metric,d,value,unit,limit,verdict\n";
        for (const auto& r : rows)
            os << hcube::microbench::csv_field(r.metric) << ',' << r.d << ',' << r.value << ','
               << r.unit << ',' << (r.limit == r.limit ? std::to_string(r.limit) : "") << ','
               << verdict(r) << '\n';
    }
    void table(std::ostream& os) const {
        os << std::left << std::setw(44) << "metric" << std::setw(4) << "d" << std::right
           << std::setw(14) << "value"
           << "  " << std::left << std::setw(8) << "unit" << std::right << std::setw(14) << "limit"
           << "  verdict\n";
        for (const auto& r : rows) {
            os << std::left << std::setw(44) << r.metric << std::setw(4) << r.d << std::right
               << std::setw(14) << std::setprecision(4) << r.value << "  " << std::left
               << std::setw(8) << r.unit << std::right << std::setw(14);
            if (r.limit == r.limit)
                os << (r.at_most ? "<= " : ">= ") + std::to_string(r.limit).substr(0, 8);
            else
                os << "";
            os << "  " << verdict(r) << '\n';
        }
    }
};

// A row with no limit, or a measurement that could not be taken.
constexpr double no_value = std::numeric_limits<double>::quiet_NaN();

// ---- baselines ----------------------------------------------------------------

// The same through two boost::lockfree::spsc_queue rings of one-cache-line
// messages, spinning, no parking: the floor of the channel DESIGN.md first
// named for links. Each hop moves its write index, a slot and its read index.
double spsc_round_trip_us(int iters) {
    struct alignas(64) message {
        unsigned char bytes[64];
    };
    struct alignas(64) ring {
        boost::lockfree::spsc_queue<message, boost::lockfree::capacity<16>> q;
    };
    const auto there = std::make_unique<ring>(), back = std::make_unique<ring>();
    const auto relay = [](ring& from, ring& to) {
        message m;
        while (!from.q.pop(m)) {
        }
        while (!to.q.push(m)) {
        }
    };
    return pinned_round_trip_us(
        iters, [&] { relay(*there, *back); },
        [&] {
            while (!there->q.push(message{})) {
            }
            message m;
            while (!back->q.pop(m)) {
            }
        });
}

// Two threads on one core handing a token back and forth through a futex.
double same_core_handoff_us(int iters) {
    std::atomic<std::uint32_t> token{0};
    std::thread peer([&] {
        pin_to_cpu(0);
        for (int i = 0; i < iters; ++i) {
            while (token.load(std::memory_order_acquire) == 0)
                park(token, 0);
            token.store(0, std::memory_order_release);
            unpark(token);
        }
    });
    pin_to_cpu(0);
    const auto t0 = clock_type::now();
    for (int i = 0; i < iters; ++i) {
        token.store(1, std::memory_order_release);
        unpark(token);
        while (token.load(std::memory_order_acquire) == 1)
            park(token, 1);
    }
    const double s = seconds_since(t0);
    peer.join();
    unpin();
    return s / (2.0 * iters) * 1e6;
}

// n parked threads woken by one futex wake of all, each reporting back: the floor
// of starting a run on n node threads.
double wake_all_us(int n, int reps) {
    std::atomic<std::uint32_t> generation{0};
    std::atomic<std::uint32_t> arrived{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
        threads.emplace_back([&] {
            std::uint32_t seen = 0;
            for (;;) {
                while (generation.load(std::memory_order_acquire) == seen)
                    park(generation, seen);
                seen = generation.load(std::memory_order_acquire);
                if (stop.load(std::memory_order_acquire)) return;
                if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == std::uint32_t(n))
                    unpark(arrived);
            }
        });
    const double us = median_of(reps, [&] {
        arrived.store(0);
        const auto t0 = clock_type::now();
        generation.fetch_add(1, std::memory_order_release);
        unpark(generation, INT_MAX);
        for (std::uint32_t a = arrived.load(); a != std::uint32_t(n); a = arrived.load())
            park(arrived, a);
        return seconds_since(t0) * 1e6;
    });
    stop.store(true);
    generation.fetch_add(1);
    unpark(generation, INT_MAX);
    for (auto& t : threads)
        t.join();
    return us;
}

// A context switch among n runnable threads (each yields `rounds` times),
// microseconds of one core: what a hand-off costs once thousands of threads
// take turns and their stacks and kernel state no longer stay in cache.
double yield_switch_us(int n, int rounds, int cores) {
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
        threads.emplace_back([&] {
            while (!go.load(std::memory_order_acquire))
                std::this_thread::yield();
            for (int r = 0; r < rounds; ++r)
                std::this_thread::yield();
        });
    const auto t0 = clock_type::now();
    go.store(true, std::memory_order_release);
    for (auto& t : threads)
        t.join();
    return seconds_since(t0) * cores / (double(n) * rounds) * 1e6;
}

// A barrier among n threads that spin (yielding, as n may exceed the cores):
// microseconds per barrier. The floor of starting and ending a run of n nodes.
double spin_barrier_us(int n, int rounds) {
    alignas(64) std::atomic<int> arrived{0};
    alignas(64) std::atomic<int> phase{0};
    const auto barrier = [&](int& mine) {
        ++mine;
        if (arrived.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
            arrived.store(0, std::memory_order_relaxed);
            phase.store(mine, std::memory_order_release);
        } else {
            while (phase.load(std::memory_order_acquire) != mine)
                std::this_thread::yield();
        }
    };
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i)
        threads.emplace_back([&] {
            int mine = 0;
            for (int r = 0; r < rounds + 1; ++r)
                barrier(mine);
        });
    int mine = 0;
    barrier(mine); // all started
    const auto t0 = clock_type::now();
    for (int r = 0; r < rounds; ++r)
        barrier(mine);
    const double s = seconds_since(t0);
    for (auto& t : threads)
        t.join();
    return s / rounds * 1e6;
}

// Context switches of this process so far (every thread, voluntary or not).
long context_switches() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

// ---- hcube measurements ---------------------------------------------------------

double hcube_round_trip_us(hcube::machine& m, int iters, bool all_pairs) {
    const auto r = m.run([&](hcube::node& me) {
        if (!all_pairs && me.id() > 1) return;
        int x = me.id();
        for (int i = 0; i < iters; ++i) {
            if ((me.id() & 1) == 0) {
                me.send(0, std::span(&x, 1));
                me.recv(0, std::span(&x, 1));
            } else {
                me.recv(0, std::span(&x, 1));
                me.send(0, std::span(&x, 1));
            }
        }
    });
    return r.wall_seconds / iters * 1e6;
}

// What runs the nodes and what carries their messages. The setups measured
// side by side: the defaults first, then the boost links, then fibers.
struct setup {
    hcube::executor_kind executor;
    hcube::link_impl links;
};
constexpr setup threads_ring{hcube::executor_kind::threads, hcube::link_impl::ring};
constexpr setup threads_boost{hcube::executor_kind::threads, hcube::link_impl::boost_spsc};
constexpr setup fibers_ring{hcube::executor_kind::fibers, hcube::link_impl::ring};
constexpr setup setups[] = {threads_ring, threads_boost, fibers_ring};

hcube::config on(setup s, int d, hcube::port_model ports = hcube::port_model::single_port) {
    hcube::config c;
    c.dim = d;
    c.ports = ports;
    c.executor = s.executor;
    c.links = s.links;
    return c;
}
// Exchange of `bytes` per link on `links` links of every node, `reps` times
// per run. Buffers are allocated and touched, and the machine run once, before
// any timed run.
class exchange_probe {
public:
    exchange_probe(int d, int links, std::size_t bytes, int reps, setup s)
        : m_(on(s, d, hcube::port_model::all_port))
        , links_(links)
        , reps_(reps)
        , out_(std::size_t(links) << d, std::vector<double>(bytes / sizeof(double), 1.0))
        , in_(out_.size(), std::vector<double>(bytes / sizeof(double), 0.0)) {
        gbps();
    }

    // GB/s of payload moved.
    double gbps() {
        const double s = m_.run([&](hcube::node& me) {
                               std::vector<hcube::transfer<double>> ops;
                               for (int k = 0; k < links_; ++k) {
                                   const auto at = std::size_t(me.id() * links_ + k);
                                   ops.push_back({k, out_[at], in_[at]});
                               }
                               for (int r = 0; r < reps_; ++r) {
                                   if (links_ == 1)
                                       me.exchange(0, ops[0].out, ops[0].in);
                                   else
                                       me.exchange_all(ops);
                               }
                           }).wall_seconds;
        return double(out_[0].size() * sizeof(double)) * double(out_.size()) * reps_ / s / 1e9;
    }

private:
    hcube::machine m_;
    int links_, reps_;
    std::vector<std::vector<double>> out_, in_;
};

void step_pattern(hcube::node& me) {
    for (int k = 0; k < me.dim(); ++k) {
        const int out = me.id();
        int in = -1;
        me.exchange(k, std::span(&out, 1), std::span(&in, 1));
    }
}

// Routed ping-pong between the two ends of a d-cube diameter, one message in
// flight, while every other node has finished: microseconds per message over
// each of the `chunks` equal parts of `messages` messages. A router whose cost
// grew with its history shows in the later parts. Both ends share
// CPU 0: a hand-off within a core costs a few us, one across cores a wake-up
// of an idle core, and which one a run gets would otherwise decide the figure.
std::vector<double> routed_chunk_us(hcube::machine& m, long messages, int chunks) {
    const int far = m.size() - 1;
    std::vector<double> us;
    m.run([&](hcube::node& me) {
        if (me.id() != 0 && me.id() != far) return;
        pin_to_cpu(0);
        const std::vector<int> word{me.id()};
        std::vector<int> in(1);
        const long per = messages / chunks / 2;
        for (int c = 0; c < chunks; ++c) {
            const auto t0 = clock_type::now();
            for (long i = 0; i < per; ++i) {
                if (me.id() == 0) {
                    me.send_routed(far, word);
                    me.recv_routed(far, in);
                } else {
                    me.recv_routed(0, in);
                    me.send_routed(0, word);
                }
            }
            if (me.id() == 0) us.push_back(seconds_since(t0) * 1e6 / double(2 * per));
        }
        unpin();
    });
    return us;
}

// Master/worker: node 0 hands `tasks` one-double tasks to its d neighbours
// (uneven compute) and the next one to whoever answers, taken with recv_any,
// which chooses by virtual time (docs/runtime.md); or, as the baseline, the
// same messages taken from the links in turn with recv. Microseconds of wall
// time per task, the machine warmed up by one run first.
double master_worker_us(hcube::machine& m, int tasks, bool choose) {
    const auto program = [&](hcube::node& me) {
        const int d = me.dim();
        if (me.id() == 0) {
            for (int k = 0; k < d; ++k)
                me.send(k, std::vector<double>{double(k % 3)});
            for (int i = d; i < tasks + d; ++i) {
                const int k = choose ? me.recv_any<double>().dim : i % d;
                if (!choose) (void)me.recv<double>(k);
                me.send(k, std::vector<double>{i < tasks ? double(i % 3) : -1.0});
            }
            return;
        }
        if (std::popcount(unsigned(me.id())) != 1) return;
        const int k = std::countr_zero(unsigned(me.id()));
        for (double task[1];;) {
            me.recv(k, task);
            if (task[0] < 0) return;
            me.compute(task[0]);
            me.send(k, task);
        }
    };
    m.run(program);
    return m.run(program).wall_seconds * 1e6 / tasks;
}

double run_ms(hcube::machine& m, const std::function<void(hcube::node&)>& program) {
    return m.run(program).wall_seconds * 1e3;
}

hcube::config on(hcube::executor_kind e, int d) {
    return on({e, hcube::link_impl::ring}, d);
}

// "metric, threads, boost".
std::string named(const std::string& metric, setup s) {
    return metric + ", " + std::string(to_string(s.executor)) + ", " +
           std::string(to_string(s.links));
}

struct pattern_cost {
    double ms;                // the pattern alone: median run with it minus median empty run
    double switches_per_step; // context switches per node-step, the same difference
};

// The d-step pattern on one machine, a sample at a time: the setups compared
// take turns (A B C A B C ...), so a slow spell of this shared machine, which
// lasts seconds, falls on all of them and not on whichever ran last.
class pattern_probe {
public:
    pattern_probe(setup s, int d)
        : m_(on(s, d))
        , d_(d) {
        run_ms(m_, [](hcube::node&) {});
    }

    void sample() {
        const long c0 = context_switches();
        total_.push_back(run_ms(m_, step_pattern));
        const long c1 = context_switches();
        empty_.push_back(run_ms(m_, [](hcube::node&) {}));
        switches_.push_back(double((c1 - c0) - (context_switches() - c1)));
    }

    pattern_cost cost() const {
        const double node_steps = double(d_) * double(1 << d_);
        return {median(total_) - median(empty_), std::max(0.0, median(switches_)) / node_steps};
    }

private:
    hcube::machine m_;
    int d_;
    std::vector<double> total_, empty_, switches_;
};

// Microseconds per one-double allreduce, `count` of them back to back in one
// run; a sample at a time, as pattern_probe.
class allreduce_probe {
public:
    allreduce_probe(hcube::executor_kind e, int d, int count)
        : m_(on(e, d))
        , count_(count) {
        run_us(); // warm-up
    }

    void sample() { us_.push_back(run_us()); }
    double us() const { return median(us_); }

private:
    double run_us() {
        const int count = count_;
        const auto program = [count](hcube::node& me) {
            double x = me.id();
            for (int i = 0; i < count; ++i)
                hcube::allreduce(me, std::span(&x, 1), std::plus<>{});
        };
        return m_.run(program).wall_seconds / count * 1e6;
    }

    hcube::machine m_;
    int count_;
    std::vector<double> us_;
};

// What a child process took, from its start to its exit: wall seconds and
// its max RSS in MiB; no_value both if it failed.
struct child_cost {
    double seconds = no_value, rss_mib = no_value;
};

// The work a child process does (--child KIND,D), as a user's process would:
// started afresh, so neither its time nor its memory inherits this one's.
int child_work(const std::string& kind, int d) {
    if (kind == "big-cube") {
        // A d-cube with fibers: start, a one-word allreduce (checked), stop, exit.
        hcube::machine m(on(hcube::executor_kind::fibers, d));
        int wrong = 0;
        m.run([&wrong](hcube::node& me) {
            std::int64_t x = me.id();
            hcube::allreduce(me, std::span(&x, 1), std::plus<>{});
            if (x != (std::int64_t(me.size()) * (me.size() - 1)) / 2) wrong = 1;
        });
        return wrong;
    }
    if (kind != "fresh-pages") return 2;
    // The floor under it: a fresh page of memory per node, first touched (a
    // fiber's stack takes at least one).
    const std::size_t pages = std::size_t(1) << d, page = std::size_t(sysconf(_SC_PAGESIZE));
    void* at = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) return 1;
    madvise(at, pages * page, MADV_NOHUGEPAGE);
    for (std::size_t i = 0; i < pages; ++i)
        static_cast<volatile char*>(at)[i * page] = 1;
    return 0;
}

// This process's peak resident memory (VmHWM), in KiB: its own, where
// getrusage's for a spawned child starts at its parent's (posix_spawn shares
// the parent's memory until exec, and exec keeps that peak).
long peak_rss_kib() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

// Runs `bench-runtime --child KIND,D` in a new process, which prints its
// peak_rss_kib on stdout.
child_cost in_child(const std::string& kind, int d) {
    char self[] = "/proc/self/exe", flag[] = "--child";
    std::string what = kind + "," + std::to_string(d);
    char* argv[] = {self, flag, what.data(), nullptr};
    int out[2];
    if (pipe(out) != 0) return {};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    const auto t0 = clock_type::now();
    pid_t child = -1;
    const bool spawned = posix_spawn(&child, self, &actions, nullptr, argv, environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string text;
    for (char buf[64]; spawned;) {
        const ssize_t n = read(out[0], buf, sizeof buf);
        if (n <= 0) break;
        text.append(buf, std::size_t(n));
    }
    close(out[0]);
    int status = 0;
    if (!spawned || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || text.empty())
        return {};
    return {seconds_since(t0), double(std::stol(text)) / 1024.0};
}

// What every group of rows is measured with.
struct settings {
    bool quick;
    bool huge; // big-cube up to d = 20
    int cores; // hardware threads
    int iters; // round trips per ping-pong sample
};

// d = 12 in the pattern and the largest run() overhead row.
constexpr int dmax = 12;

// Ping-pong, the baselines and the links taking turns.
void ping_pong_rows(report& out, const settings& s) {
    {
        std::vector<std::unique_ptr<hcube::machine>> machines;
        for (const setup su : setups)
            machines.push_back(std::make_unique<hcube::machine>(on(su, 1)));
        std::vector<double> spin, spsc;
        std::vector<std::vector<double>> link(machines.size());
        for (int r = 0; r < 7; ++r) {
            spin.push_back(spin_round_trip_us(s.iters));
            spsc.push_back(spsc_round_trip_us(s.iters));
            for (std::size_t i = 0; i < machines.size(); ++i)
                link[i].push_back(hcube_round_trip_us(*machines[i], s.iters, false));
        }
        out.add({"raw spin round trip", 1, median(spin), "us", no_value, true});
        out.add({"spsc_queue spin round trip", 1, median(spsc), "us", no_value, true});
        for (std::size_t i = 0; i < machines.size(); ++i)
            out.add({named("link round trip (nodes <= cores)", setups[i]), 1, median(link[i]), "us",
                     i == 0 ? 2 * median(spin) : no_value, true});
    }
    hcube::config c;
    c.dim = 3; // 8 threads on the cores: the waiting policy parks instead of spinning
    hcube::machine m(c);
    out.add({"link round trip, 1 pair, 8 threads", 3,
             median_of(5, [&] { return hcube_round_trip_us(m, s.iters / 4, false); }), "us",
             no_value, true});
    out.add({"round trip, 4 pairs at once", 3,
             median_of(5, [&] { return hcube_round_trip_us(m, s.iters / 4, true); }), "us",
             no_value, true});
}

// Bandwidth of a d-cube's exchanges on `links` links: one copy per byte, so
// exchange should approach memcpy. The two take turns, as in the ping-pong.
void bandwidth_row(report& out, const settings& s, int d, int links, const std::string& what) {
    const std::size_t big = s.quick ? (1u << 20) : (4u << 20);
    const int reps = s.quick ? 4 : 10;
    memcpy_probe copy(big, links << d, s.cores, reps);
    std::vector<std::unique_ptr<exchange_probe>> exchange;
    for (const setup su : setups)
        exchange.push_back(std::make_unique<exchange_probe>(d, links, big, reps, su));
    std::vector<double> mc;
    std::vector<std::vector<double>> ex(exchange.size());
    for (int r = 0; r < 5; ++r) {
        mc.push_back(copy.gbps());
        for (std::size_t i = 0; i < exchange.size(); ++i)
            ex[i].push_back(exchange[i]->gbps());
    }
    const std::string op = links == 1 ? "exchange bandwidth, " : "exchange_all bandwidth, ";
    out.add({"memcpy, same bytes as " + what, d, median(mc), "GB/s", no_value, true});
    // The limit is the ring's, under either executor; boost is for comparison.
    for (std::size_t i = 0; i < exchange.size(); ++i)
        out.add({named(op + what, setups[i]), d, median(ex[i]), "GB/s",
                 setups[i].links == hcube::link_impl::ring ? 0.8 * median(mc) : no_value, false});
}

void bandwidth_rows(report& out, const settings& s) {
    bandwidth_row(out, s, 1, 1, "1 link");
    bandwidth_row(out, s, 3, 3, "all links");
}

// d = 12 step pattern against same-core hand-offs spread over the cores.
void pattern_rows(report& out, const settings& s) {
    const double handoff = median_of(5, [&] { return same_core_handoff_us(s.iters); });
    out.add({"same-core futex hand-off", 0, handoff, "us", no_value, true});
    const int reps = s.quick ? 3 : 7;
    pattern_probe threads_probe(threads_ring, dmax), boost_probe(threads_boost, dmax),
        fibers_probe(fibers_ring, dmax);
    // The bound's switch cost takes its turn with the setups too: measured
    // once, before them, it fell in a fast spell of this machine while the
    // threads' samples fell in a slow one.
    std::vector<double> switches;
    for (int r = 0; r < reps; ++r) {
        switches.push_back(yield_switch_us(1 << dmax, s.quick ? 20 : 100, s.cores));
        for (pattern_probe* p : {&threads_probe, &boost_probe, &fibers_probe})
            p->sample();
    }
    const double yield_switch = median(switches);
    const pattern_cost threads = threads_probe.cost();
    const pattern_cost boost = boost_probe.cost();
    const pattern_cost fibers = fibers_probe.cost();
    const double node_steps = dmax * double(1 << dmax);
    const double bound_ms = yield_switch * threads.switches_per_step * node_steps / s.cores / 1e3;
    out.add({"yield switch among 4096 threads", dmax, yield_switch, "us", no_value, true});
    out.add(
        {"context switches per node-step", dmax, threads.switches_per_step, "", no_value, true});
    out.add({"bound: switch x switches x 49152/cores", dmax, bound_ms, "ms", no_value, true});
    const std::string pattern = "12-step pattern alone";
    out.add({named(pattern, threads_ring), dmax, threads.ms, "ms", 1.5 * bound_ms, true});
    out.add({named(pattern, threads_boost), dmax, boost.ms, "ms", no_value, true});
    out.add({named(pattern, fibers_ring), dmax, fibers.ms, "ms", threads.ms / 10, true});
}

// The executors side by side.
void allreduce_rows(report& out, const settings& s) {
    const int count = s.quick ? 200 : 2000;
    allreduce_probe threads_probe(hcube::executor_kind::threads, 6, count),
        fibers_probe(hcube::executor_kind::fibers, 6, count);
    for (int r = 0; r < 7; ++r) {
        threads_probe.sample();
        fibers_probe.sample();
    }
    const double threads = threads_probe.us();
    const double fibers = fibers_probe.us();
    out.add({"allreduce 1 double back to back, threads", 6, threads, "us", no_value, true});
    out.add({"allreduce 1 double back to back, fibers", 6, fibers, "us", threads / 5, true});
}

void empty_run_rows(report& out, const settings& s) {
    const double barrier = median_of(7, [&] { return spin_barrier_us(4, s.quick ? 2000 : 20000); });
    out.add({"barrier among 4 spinning threads", 2, barrier, "us", no_value, true});
    for (const hcube::executor_policy& e : hcube::executor_policies) {
        hcube::machine m(on(e.kind, 2));
        m.run([](hcube::node&) {});
        std::vector<double> us;
        for (int r = 0; r < (s.quick ? 200 : 2000); ++r)
            us.push_back(m.run([](hcube::node&) {}).wall_seconds * 1e6);
        out.add({"empty run(), back to back, " + std::string(e.name), 2, median(std::move(us)),
                 "us", 2 * barrier, true});
    }
}

// Cold runs of large cubes, each a new process as a user's run is, beside
// the fresh-page floor of as many nodes, taken in turns. The limits: 3 us
// per node-step (d p of them) for the whole process, and 3 GiB at d = 18
// (d = 20, 12 GiB, with --huge). memory_estimate counts the machine: it is
// set beside the RSS above that of the same process with a 0-cube.
void big_cube_rows(report& out, const settings& s) {
    const int reps = s.quick ? 3 : 5;
    const std::string runs = ", median of " + std::to_string(reps);
    std::vector<double> empty;
    for (int r = 0; r < reps; ++r)
        empty.push_back(in_child("big-cube", 0).rss_mib);
    const double process = median(empty);
    out.add({"max RSS of a 0-cube's process" + runs, 0, process, "MiB", no_value, true});
    for (const int d :
         s.huge ? std::vector<int>{12, 14, 16, 18, 20} : std::vector<int>{12, 14, 16, 18}) {
        std::vector<double> seconds, rss, floor;
        for (int r = 0; r < reps; ++r) {
            floor.push_back(in_child("fresh-pages", d).seconds);
            const child_cost c = in_child("big-cube", d);
            seconds.push_back(c.seconds);
            rss.push_back(c.rss_mib);
        }
        const double node_steps = double(d) * double(1 << d);
        out.add({"fresh page per node" + runs, d, median(floor), "s", no_value, true});
        out.add({"fibers start, allreduce, stop" + runs, d, median(seconds), "s", 3e-6 * node_steps,
                 true});
        out.add({"per node-step", d, median(seconds) / node_steps * 1e6, "us", 3, true});
        const double rss_limit = d == 18 ? 3072 : d == 20 ? 12288 : no_value;
        out.add({"max RSS of that", d, median(rss), "MiB", rss_limit, true});
        const double estimate =
            double(hcube::memory_estimate(on(hcube::executor_kind::fibers, d)).total()) /
            double(1 << 20);
        out.add({"memory_estimate (hcube info)", d, estimate, "MiB", no_value, true});
        out.add({"RSS above the 0-cube's, off the estimate by", d,
                 std::abs((median(rss) - process) / estimate - 1) * 100, "%", 25, true});
    }
}

// run() overhead on a warm machine.
void overhead_rows(report& out, const settings& s) {
    for (int d = 0; d <= dmax; d += (s.quick ? 4 : 1)) {
        hcube::config c;
        c.dim = d;
        hcube::machine m(c);
        m.run([](hcube::node&) {});
        const int runs = d >= 10 ? 7 : 21;
        const double wake = wake_all_us(1 << d, runs);
        const double overhead =
            median_of(runs, [&] { return m.run([](hcube::node&) {}).wall_seconds * 1e6; });
        out.add({"wake every thread once", d, wake, "us", no_value, true});
        out.add({"run() overhead", d, overhead, "us", 2 * wake, true});
    }
}

// Routed messages: the cost of a message after 10^6 (--quick: 10^5) others
// against the first 10^3, one message in flight across a 10-cube.
void routed_rows(report& out, const settings& s) {
    hcube::config c;
    c.dim = 10;
    hcube::machine m(c);
    const long messages = s.quick ? 100000 : 1000000;
    // A message costs a few us when the partner answers within the yields
    // and tens of us when it parks, so single runs are noisy: medians.
    std::vector<double> first, last;
    for (int r = 0; r < 7; ++r)
        first.push_back(routed_chunk_us(m, 1000, 1).front());
    for (int r = 0; r < 3; ++r)
        last.push_back(routed_chunk_us(m, messages, 10).back());
    out.add({"routed message, first 10^3 (median of 7)", 10, median(first), "us", no_value, true});
    out.add({"routed, last tenth of " + std::to_string(messages) + " (median of 3)", 10,
             median(last), "us", 3 * median(first), true});
}

// Choosing by virtual time against taking the same messages in turn.
void master_worker_rows(report& out, const settings& s) {
    const int tasks = s.quick ? 1000 : 10000;
    for (const hcube::executor_policy& e : hcube::executor_policies) {
        hcube::machine m(on(e.kind, 10));
        std::vector<double> plain, chosen;
        for (int r = 0; r < 5; ++r) { // taking turns, so a slow spell hits both
            plain.push_back(master_worker_us(m, tasks, false));
            chosen.push_back(master_worker_us(m, tasks, true));
        }
        const std::string name =
            std::string(e.name) + ", " + std::to_string(tasks) + " tasks (median of 5)";
        out.add(
            {"master/worker task, recv in turn, " + name, 10, median(plain), "us", no_value, true});
        out.add(
            {"master/worker task, recv_any, " + name, 10, median(chosen), "us", no_value, true});
    }
}

// The groups of rows, in the order they print; --only names them.
const std::vector<std::pair<std::string, void (*)(report&, const settings&)>> groups{
    {"ping-pong", ping_pong_rows},
    {"bandwidth", bandwidth_rows},
    {"pattern", pattern_rows},
    {"allreduce", allreduce_rows},
    {"empty-run", empty_run_rows},
    {"big-cube", big_cube_rows},
    {"overhead", overhead_rows},
    {"routed", routed_rows},
    {"master-worker", master_worker_rows},
};

} // namespace

int main(int argc, char** argv) {
    bool quick = false, huge = false;
    std::string csv_path;
    CLI::App app{"Runtime microbenchmarks: every figure next to its limit, every limit computed "
                 "from a baseline measured in the same run (threads with the ring and with "
                 "boost's spsc_queue, fibers).",
                 "bench-runtime"};
    app.add_flag("--quick", quick, "shorter measurements (fewer iterations and repetitions)");
    app.add_flag("--huge", huge, "big-cube up to d = 20 (1,048,576 nodes, about 10 GiB)");
    app.add_option("--csv", csv_path, "CSV to FILE, a readable table on stdout");
    std::vector<std::string> names, only;
    for (const auto& g : groups)
        names.push_back(g.first);
    hcube::cli::add_value(
        app, "--only",
        [&](const std::string& v) {
            only = hcube::cli::split(v);
            for (const std::string& g : only)
                if (std::find(names.begin(), names.end(), g) == names.end())
                    throw hcube::usage_error("--only: " + g + " is not one of " +
                                             hcube::cli::one_of(names));
        },
        "measure only these groups of rows (comma-separated)");
    std::string child; // KIND,D: what in_child runs in a new process
    app.add_option("--child", child)->group("");
    hcube::cli::parse_or_exit(app, argc, argv);
    if (!child.empty()) {
        const std::vector<std::string> kind_dim = hcube::cli::split(child);
        const int rc = child_work(kind_dim.at(0), std::stoi(kind_dim.at(1)));
        if (rc == 0) std::cout << peak_rss_kib() << '\n';
        return rc;
    }
    const settings s{quick, huge, int(std::max(1u, std::thread::hardware_concurrency())),
                     quick ? 2000 : 20000};
    report out;
    for (const auto& [name, rows] : groups)
        if (only.empty() || std::find(only.begin(), only.end(), name) != only.end()) rows(out, s);
    if (csv_path.empty()) {
        out.csv(std::cout);
    } else {
        std::ofstream f(csv_path);
        out.csv(f);
        out.table(std::cout);
    }
    return 0;
}
