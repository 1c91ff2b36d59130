// Runtime microbenchmarks (issue 2): every figure is printed next to its limit,
// and every limit is computed from a baseline measured in the same run.
//
//   ping-pong      d = 1 link round trip vs a raw cross-core spin ping-pong (<= 2x),
//                  measured alternately so both see the same moments of a noisy
//                  virtual machine; boost::lockfree::spsc_queue's own spin
//                  ping-pong beside them (why links have their own ring:
//                  docs/design.md); and with threads > cores (8 threads)
//   bandwidth      exchange on one link and on all links vs memcpy of the same
//                  bytes by as many threads as cores (>= 80%)
//   step pattern   d = 12, one word on every dimension in turn, vs 12 x 4096
//                  same-core futex hand-offs spread over the cores (<= 1.2x); the
//                  pattern alone is a run with it minus an empty run, and a
//                  context switch among 4096 threads is printed beside it
//   run overhead   empty run() for d = 0..12 vs one wake-up of every thread (<= 2x)
//   routed         a routed message after 10^6 others vs the first 10^3 (<= 3x)
//
// Output: CSV (metric,d,value,unit,limit,verdict) on stdout, or to --csv FILE
// with a readable table on stdout. --quick shortens every measurement.
#include <algorithm>
#include <atomic>
#include <chrono>
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
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/lockfree/spsc_queue.hpp>

#include <hcube/machine.hpp>

#include "median.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using hcube::bench::median;

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

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
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
            os << r.metric << ',' << r.d << ',' << r.value << ',' << r.unit << ','
               << (r.limit == r.limit ? std::to_string(r.limit) : "") << ',' << verdict(r) << '\n';
    }
    void table(std::ostream& os) const {
        os << std::left << std::setw(34) << "metric" << std::setw(4) << "d" << std::right
           << std::setw(14) << "value"
           << "  " << std::left << std::setw(8) << "unit" << std::right << std::setw(14) << "limit"
           << "  verdict\n";
        for (const auto& r : rows) {
            os << std::left << std::setw(34) << r.metric << std::setw(4) << r.d << std::right
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

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// ---- baselines ----------------------------------------------------------------

void pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void unpin() {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (unsigned c = 0; c < std::thread::hardware_concurrency(); ++c)
        CPU_SET(c, &all);
    pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

// A ping-pong of `iters` round trips between this thread on CPU 0 and a peer
// on CPU 1, both spinning: `serve` answers one message, `ask` sends one and
// waits for the answer. Microseconds per round trip.
template <class Serve, class Ask>
double pinned_round_trip_us(int iters, Serve serve, Ask ask) {
    std::thread peer([&] {
        pin_to_cpu(1);
        for (int i = 0; i < iters; ++i)
            serve();
    });
    pin_to_cpu(0);
    const auto t0 = clock_type::now();
    for (int i = 0; i < iters; ++i)
        ask();
    const double s = seconds_since(t0);
    peer.join();
    unpin();
    return s / iters * 1e6;
}

// One flag bounced by spinning: the floor of any cross-core hand-off.
double spin_round_trip_us(int iters) {
    alignas(64) std::atomic<int> flag{0};
    return pinned_round_trip_us(
        iters,
        [&] {
            while (flag.load(std::memory_order_acquire) != 1) {
            }
            flag.store(0, std::memory_order_release);
        },
        [&] {
            flag.store(1, std::memory_order_release);
            while (flag.load(std::memory_order_acquire) != 0) {
            }
        });
}

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

// memcpy of `buffers` buffer pairs of `bytes` each, `reps` times, shared out
// over `threads` threads: the same bytes and the same working set as an
// exchange that moves `buffers` messages per round.
class memcpy_probe {
public:
    memcpy_probe(std::size_t bytes, int buffers, int threads, int reps)
        : bytes_(bytes)
        , threads_(threads)
        , reps_(reps)
        , src_(buffers, std::vector<char>(bytes, 1))
        , dst_(buffers, std::vector<char>(bytes, 2)) {}

    double gbps() {
        const int buffers = int(src_.size());
        std::vector<std::thread> ts;
        const auto t0 = clock_type::now();
        for (int t = 0; t < threads_; ++t)
            ts.emplace_back([&, t] {
                for (int r = 0; r < reps_; ++r)
                    for (int b = t; b < buffers; b += threads_)
                        std::memcpy(dst_[b].data(), src_[b].data(), bytes_);
            });
        for (auto& t : ts)
            t.join();
        return double(bytes_) * buffers * reps_ / seconds_since(t0) / 1e9;
    }

private:
    std::size_t bytes_;
    int threads_, reps_;
    std::vector<std::vector<char>> src_, dst_;
};

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

// Exchange of `bytes` per link on `links` links of every node, `reps` times
// per run. Buffers are allocated and touched, and the machine run once, before
// any timed run.
class exchange_probe {
public:
    exchange_probe(int d, int links, std::size_t bytes, int reps)
        : m_(config(d))
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
    static hcube::config config(int d) {
        hcube::config c;
        c.dim = d;
        c.ports = hcube::port_model::all_port;
        return c;
    }
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
// grew with its history (issue 9) shows in the later parts. Both ends share
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

double run_ms(hcube::machine& m, const std::function<void(hcube::node&)>& program) {
    return m.run(program).wall_seconds * 1e3;
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string csv_path;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--csv" && i + 1 < argc)
            csv_path = argv[++i];
        else {
            std::cerr << "usage: bench-runtime [--quick] [--csv FILE]\n";
            return 2;
        }
    }
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const int iters = quick ? 2000 : 20000;
    report out;

    // Ping-pong, the baselines and the link taking turns.
    {
        hcube::config c;
        c.dim = 1;
        hcube::machine m(c);
        std::vector<double> spin, spsc, link;
        for (int r = 0; r < 7; ++r) {
            spin.push_back(spin_round_trip_us(iters));
            spsc.push_back(spsc_round_trip_us(iters));
            link.push_back(hcube_round_trip_us(m, iters, false));
        }
        out.add({"raw spin round trip", 1, median(spin), "us", nan, true});
        out.add({"spsc_queue spin round trip", 1, median(spsc), "us", nan, true});
        out.add(
            {"link round trip (threads <= cores)", 1, median(link), "us", 2 * median(spin), true});
    }
    {
        hcube::config c;
        c.dim = 3; // 8 threads on the cores: the waiting policy parks instead of spinning
        hcube::machine m(c);
        out.add({"link round trip, 1 pair, 8 threads", 3,
                 median_of(5, [&] { return hcube_round_trip_us(m, iters / 4, false); }), "us", nan,
                 true});
        out.add({"round trip, 4 pairs at once", 3,
                 median_of(5, [&] { return hcube_round_trip_us(m, iters / 4, true); }), "us", nan,
                 true});
    }

    // Bandwidth: one copy per byte, so exchange should approach memcpy. The two
    // take turns, as in the ping-pong.
    const std::size_t big = quick ? (1u << 20) : (4u << 20);
    const int reps = quick ? 4 : 10;
    const auto bandwidth = [&](int d, int links, const std::string& what) {
        memcpy_probe copy(big, links << d, cores, reps);
        exchange_probe exchange(d, links, big, reps);
        std::vector<double> mc, ex;
        for (int r = 0; r < 5; ++r) {
            mc.push_back(copy.gbps());
            ex.push_back(exchange.gbps());
        }
        out.add({"memcpy, same bytes as " + what, d, median(mc), "GB/s", nan, true});
        out.add({(links == 1 ? "exchange bandwidth, " : "exchange_all bandwidth, ") + what, d,
                 median(ex), "GB/s", 0.8 * median(mc), false});
    };
    bandwidth(1, 1, "1 link");
    bandwidth(3, 3, "all links");

    // d = 12 step pattern against same-core hand-offs spread over the cores.
    const double handoff = median_of(5, [&] { return same_core_handoff_us(iters); });
    out.add({"same-core futex hand-off", 0, handoff, "us", nan, true});
    const int dmax = 12;
    out.add({"yield switch among 4096 threads", dmax,
             yield_switch_us(1 << dmax, quick ? 20 : 100, cores), "us", nan, true});
    {
        hcube::config c;
        c.dim = dmax;
        hcube::machine m(c);
        run_ms(m, [](hcube::node&) {});
        std::vector<double> total, empty;
        for (int r = 0; r < 7; ++r) {
            total.push_back(run_ms(m, step_pattern));
            empty.push_back(run_ms(m, [](hcube::node&) {}));
        }
        const double baseline_ms = dmax * double(1 << dmax) * handoff / cores / 1e3;
        out.add({"run with the 12-step pattern", dmax, median(total), "ms", nan, true});
        out.add({"12-step exchange pattern alone", dmax, median(total) - median(empty), "ms",
                 1.2 * baseline_ms, true});
    }

    // run() overhead on a warm machine.
    for (int d = 0; d <= dmax; d += (quick ? 4 : 1)) {
        hcube::config c;
        c.dim = d;
        hcube::machine m(c);
        m.run([](hcube::node&) {});
        const int runs = d >= 10 ? 7 : 21;
        const double wake = wake_all_us(1 << d, runs);
        const double overhead =
            median_of(runs, [&] { return m.run([](hcube::node&) {}).wall_seconds * 1e6; });
        out.add({"wake every thread once", d, wake, "us", nan, true});
        out.add({"run() overhead", d, overhead, "us", 2 * wake, true});
    }

    // Routed messages: the cost of a message after 10^6 (--quick: 10^5) others
    // against the first 10^3, one message in flight across a 10-cube.
    {
        hcube::config c;
        c.dim = 10;
        hcube::machine m(c);
        const long messages = quick ? 100000 : 1000000;
        // A message costs a few us when the partner answers within the yields
        // and tens of us when it parks, so single runs are noisy: medians.
        std::vector<double> first, last;
        for (int r = 0; r < 7; ++r)
            first.push_back(routed_chunk_us(m, 1000, 1).front());
        for (int r = 0; r < 3; ++r)
            last.push_back(routed_chunk_us(m, messages, 10).back());
        out.add({"routed message, first 10^3 (median of 7)", 10, median(first), "us", nan, true});
        out.add({"routed, last tenth of " + std::to_string(messages) + " (median of 3)", 10,
                 median(last), "us", 3 * median(first), true});
    }

    if (csv_path.empty()) {
        out.csv(std::cout);
    } else {
        std::ofstream f(csv_path);
        out.csv(f);
        out.table(std::cout);
    }
    return 0;
}
