// Runtime microbenchmarks (issue 2): every figure is printed next to its limit,
// and every limit is computed from a baseline measured in the same run.
//
//   ping-pong      d = 1 link round trip vs a raw cross-core spin ping-pong (<= 2x)
//                  and with threads > cores (8 threads, one active pair)
//   bandwidth      exchange on one link and on all links vs memcpy of the same
//                  bytes by as many threads as cores (>= 80%)
//   step pattern   d = 12, one word on every dimension in turn, vs 12 x 4096
//                  same-core futex hand-offs spread over the cores (<= 1.2x)
//   run overhead   empty run() for d = 0..12 vs one wake-up of every thread (<= 2x)
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
#include <string>
#include <thread>
#include <vector>

#include <climits>

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hcube/machine.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

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
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
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

// Two threads bouncing a flag by spinning on CPUs 0 and 1: the floor of any
// cross-core hand-off.
double spin_round_trip_us(int iters) {
    alignas(64) std::atomic<int> flag{0};
    std::thread peer([&] {
        pin_to_cpu(1);
        for (int i = 0; i < iters; ++i) {
            while (flag.load(std::memory_order_acquire) != 1) {
            }
            flag.store(0, std::memory_order_release);
        }
    });
    pin_to_cpu(0);
    const auto t0 = clock_type::now();
    for (int i = 0; i < iters; ++i) {
        flag.store(1, std::memory_order_release);
        while (flag.load(std::memory_order_acquire) != 0) {
        }
    }
    const double s = seconds_since(t0);
    peer.join();
    unpin();
    return s / iters * 1e6;
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

// memcpy of `buffers` buffer pairs of `bytes` each, `reps` times, shared out
// over `threads` threads, GB/s: the same bytes and the same working set as an
// exchange that moves `buffers` messages per round.
double memcpy_gbps(std::size_t bytes, int buffers, int threads, int reps) {
    std::vector<std::vector<char>> src(buffers, std::vector<char>(bytes, 1)),
        dst(buffers, std::vector<char>(bytes, 2));
    const double s = median_of(3, [&] {
        std::vector<std::thread> ts;
        const auto t0 = clock_type::now();
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, t] {
                for (int r = 0; r < reps; ++r)
                    for (int b = t; b < buffers; b += threads)
                        std::memcpy(dst[b].data(), src[b].data(), bytes);
            });
        for (auto& t : ts)
            t.join();
        return seconds_since(t0);
    });
    return double(bytes) * buffers * reps / s / 1e9;
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

// Exchange of `bytes` per link on `links` links of every node, GB/s of payload
// moved. Buffers are allocated and touched before the timed runs.
double hcube_exchange_gbps(int d, int links, std::size_t bytes, int reps) {
    hcube::config c;
    c.dim = d;
    c.ports = hcube::port_model::all_port;
    hcube::machine m(c);
    const std::size_t n = bytes / sizeof(double);
    const int p = 1 << d;
    std::vector<std::vector<double>> out(std::size_t(p * links), std::vector<double>(n, 1.0)),
        in(std::size_t(p * links), std::vector<double>(n, 0.0));
    const auto once = [&] {
        return m
            .run([&](hcube::node& me) {
                std::vector<hcube::transfer<double>> ops;
                for (int k = 0; k < links; ++k) {
                    const auto at = std::size_t(me.id() * links + k);
                    ops.push_back({k, out[at], in[at]});
                }
                for (int r = 0; r < reps; ++r) {
                    if (links == 1)
                        me.exchange(0, ops[0].out, ops[0].in);
                    else
                        me.exchange_all(ops);
                }
            })
            .wall_seconds;
    };
    once();
    const double s = median_of(3, once);
    return double(bytes) * links * p * reps / s / 1e9;
}

double step_pattern_ms(hcube::machine& m) {
    return median_of(5, [&] {
        return m.run([](hcube::node& me) {
                    for (int k = 0; k < me.dim(); ++k) {
                        const int out = me.id();
                        int in = -1;
                        me.exchange(k, std::span(&out, 1), std::span(&in, 1));
                    }
                }).wall_seconds *
               1e3;
    });
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

    // Ping-pong.
    const double spin = median_of(5, [&] { return spin_round_trip_us(iters); });
    out.add({"raw spin round trip", 1, spin, "us", nan, true});
    {
        hcube::config c;
        c.dim = 1;
        hcube::machine m(c);
        const double rt = median_of(5, [&] { return hcube_round_trip_us(m, iters, false); });
        out.add({"link round trip (threads <= cores)", 1, rt, "us", 2 * spin, true});
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

    // Bandwidth: one copy per byte, so exchange should approach memcpy.
    const std::size_t big = quick ? (1u << 20) : (4u << 20);
    const int reps = quick ? 4 : 10;
    {
        const double mc = memcpy_gbps(big, 2, cores, reps);
        out.add({"memcpy, same bytes as 1 link", 1, mc, "GB/s", nan, true});
        out.add({"exchange bandwidth, 1 link", 1, hcube_exchange_gbps(1, 1, big, reps), "GB/s",
                 0.8 * mc, false});
    }
    {
        const int d = 3;
        const double mc = memcpy_gbps(big, (1 << d) * d, cores, reps);
        out.add({"memcpy, same bytes as all links", d, mc, "GB/s", nan, true});
        out.add({"exchange_all bandwidth, all links", d, hcube_exchange_gbps(d, d, big, reps),
                 "GB/s", 0.8 * mc, false});
    }

    // d = 12 step pattern against same-core hand-offs spread over the cores.
    const double handoff = median_of(5, [&] { return same_core_handoff_us(iters); });
    out.add({"same-core futex hand-off", 0, handoff, "us", nan, true});
    const int dmax = 12;
    {
        hcube::config c;
        c.dim = dmax;
        hcube::machine m(c);
        const double baseline_ms = dmax * double(1 << dmax) * handoff / cores / 1e3;
        out.add(
            {"12-step exchange pattern", dmax, step_pattern_ms(m), "ms", 1.2 * baseline_ms, true});
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

    if (csv_path.empty()) {
        out.csv(std::cout);
    } else {
        std::ofstream f(csv_path);
        out.csv(f);
        out.table(std::cout);
    }
    return 0;
}
