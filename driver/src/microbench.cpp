#include <hcube/driver/microbench.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include <pthread.h>
#include <sched.h>

#include <boost/lockfree/spsc_queue.hpp>

#include <hcube/error.hpp>
#include <hcube/machine.hpp>

namespace hcube::microbench {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

spread spread_of(std::vector<double> samples) {
    const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
    return {*lo, median(samples), *hi};
}

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

double spsc_stream_rate(long count) {
    struct alignas(64) message {
        unsigned char bytes[64];
    };
    const auto q =
        std::make_unique<boost::lockfree::spsc_queue<message, boost::lockfree::capacity<16>>>();
    std::thread consumer([&] {
        pin_to_cpu(1);
        message m;
        for (long i = 0; i < count; ++i)
            while (!q->pop(m)) {
            }
    });
    pin_to_cpu(0);
    const auto t0 = clock_type::now();
    for (long i = 0; i < count; ++i)
        while (!q->push(message{})) {
        }
    consumer.join();
    const double s = seconds_since(t0);
    unpin();
    return double(count) / s;
}

memcpy_probe::memcpy_probe(std::size_t bytes, int buffers, int threads, int reps)
    : bytes_(bytes)
    , threads_(threads)
    , reps_(reps)
    , src_(buffers, std::vector<char>(bytes, 1))
    , dst_(buffers, std::vector<char>(bytes, 2)) {}

double memcpy_probe::bytes_per_second() {
    const int buffers = int(src_.size());
    const auto copy = [&](int t) {
        for (int r = 0; r < reps_; ++r)
            for (int b = t; b < buffers; b += threads_)
                std::memcpy(dst_[b].data(), src_[b].data(), bytes_);
    };
    std::vector<std::thread> ts;
    const auto t0 = clock_type::now();
    // One thread copies on this one: no thread start inside the timing.
    for (int t = 1; t < threads_; ++t)
        ts.emplace_back(copy, t);
    copy(0);
    for (auto& t : ts)
        t.join();
    return double(bytes_) * buffers * reps_ / seconds_since(t0);
}

std::string_view to_string(kind k) noexcept {
    constexpr std::string_view names[] = {"latency", "bw", "bibw", "rate", "allport"};
    return names[std::size_t(k)];
}

std::vector<std::size_t> default_sizes(kind k) {
    std::vector<std::size_t> sizes;
    if (k == kind::latency) sizes.push_back(0);
    const std::size_t top = k == kind::rate ? std::size_t(8) << 10 : std::size_t(4) << 20;
    for (std::size_t b = 1; b <= top; b *= 2)
        sizes.push_back(b);
    return sizes;
}

long repetitions(long iterations, double seconds, int samples,
                 const std::function<double(long)>& sample) {
    if (iterations > 0) {
        sample(iterations);
        return iterations;
    }
    sample(1);
    const double target = seconds / samples;
    const auto faster = [&](long n) { return std::min(sample(n), sample(n)); };
    long n = 1;
    for (double t = faster(n); t < target && n < (1L << 40); t = faster(n))
        n = t <= 0 ? n * 2 : std::min(n * 8, std::max(n * 2, long(double(n) * target / t)));
    return n;
}

namespace {

using bytes = std::vector<std::byte>;
constexpr std::span<const std::byte> nothing{};

// Each node's send and receive buffer of one size, built (and so touched)
// before any timing.
struct buffers {
    std::vector<bytes> out, in;
    buffers(int nodes, std::size_t size)
        : out(std::size_t(nodes), bytes(size, std::byte{1}))
        , in(std::size_t(nodes), bytes(size)) {}
};

// Repetitions of a baseline per sample at most (a zero-byte memcpy is free).
constexpr long max_reps = 1L << 22;

// Repetitions of a memcpy baseline: those of the measurement, but at least
// 1 MiB in all, so that starting its threads is not what it times.
int copy_reps(std::size_t size, int buffers, long n) {
    const double bytes = double(size) * buffers;
    const long enough = bytes > 0 ? long(std::ceil(double(1 << 20) / bytes)) : 1;
    return int(std::min(std::max(n, enough), max_reps));
}

// One sample: seconds for `n` repetitions.
using sampler = std::function<double(long n)>;

// Node 0's seconds for `n` round trips of `body` on nodes 0 and 1 (the others
// idle), after one zero-byte round trip that lines the two up.
double timed_pair(machine& m, long n, const std::function<void(node&, long)>& body) {
    double seconds = 0;
    m.run([&](node& me) {
        if (me.id() > 1) return;
        std::byte none[1];
        if (me.id() == 0) {
            me.send(0, nothing);
            me.recv(0, std::span(none, 0));
        } else {
            me.recv(0, std::span(none, 0));
            me.send(0, nothing);
        }
        const auto t0 = clock_type::now();
        body(me, n);
        if (me.id() == 0) seconds = seconds_since(t0);
    });
    return seconds;
}

struct measured {
    long iterations;
    spread value, limit;
};

// Samples of hcube (value_of its seconds) and of its limit, in turns. A
// limit is reported as its best sample (the least time, the most bytes per
// second): on a shared machine a baseline's slow samples are other work, and
// a limit is what the hardware did at best.
measured in_turns(const setup& s, const sampler& sample, const std::function<double(long)>& limit,
                  const std::function<double(double, long)>& value_of) {
    const long n = repetitions(s.iterations, s.seconds, s.samples, sample);
    std::vector<double> values, limits;
    for (int i = 0; i < s.samples; ++i) {
        limits.push_back(limit(n));
        values.push_back(value_of(sample(n), n));
    }
    return {n, spread_of(values), spread_of(limits)};
}

void latency(machine& m, const setup& s, table& t) {
    t.method = "ping-pong on link 0 between nodes 0 and 1, half the round trip; raw: half a "
               "cross-core cache-line ping-pong of two threads of its own plus one memcpy of "
               "the bytes, the hardware's cost for reference (not a bound: hcube's ping-pong "
               "can beat it, it waits differently)";
    t.columns = {"size_bytes", "latency_us", "min_us", "max_us", "raw_us", "iterations"};
    for (const std::size_t size : s.sizes) {
        buffers b(2, size);
        const auto sample = [&](long n) {
            return timed_pair(m, n, [&b](node& me, long reps) {
                bytes& out = b.out[me.id()];
                bytes& in = b.in[me.id()];
                for (long i = 0; i < reps; ++i)
                    if (me.id() == 0) {
                        me.send(0, out);
                        me.recv(0, in);
                    } else {
                        me.recv(0, in);
                        me.send(0, out);
                    }
            });
        };
        std::optional<memcpy_probe> copy;
        const auto raw = [&](long n) {
            if (!copy) copy.emplace(size, 1, 1, copy_reps(size, 1, n));
            const double copy_us = size == 0 ? 0 : double(size) / copy->bytes_per_second() * 1e6;
            return spin_round_trip_us(int(std::min(n, max_reps))) / 2 + copy_us;
        };
        const measured r =
            in_turns(s, sample, raw, [](double sec, long n) { return sec / double(n) / 2 * 1e6; });
        t.rows.push_back({double(size), r.value.median, r.value.min, r.value.max, r.limit.min,
                          double(r.iterations)});
    }
}

// bw, bibw and rate: windows of messages on link 0 between nodes 0 and 1.
void windows(machine& m, const setup& s, table& t) {
    const bool both = s.what == kind::bibw;
    const bool rate = s.what == kind::rate;
    const std::size_t depth = std::min<std::size_t>(s.window, m.cfg().link_capacity);
    if (both && depth == 0)
        throw usage_error("bibw needs buffered links: --link-capacity 0 makes both ends' sends "
                          "wait for each other");
    if (rate) {
        t.method = "node 0 sends windows of " + std::to_string(s.window) +
                   " messages on link 0, node 1 acknowledges each window; ceiling: a raw stream "
                   "of one-cache-line messages through a boost spsc_queue between two cores";
        t.columns = {"size_bytes", "rate_per_s",   "min_per_s",
                     "max_per_s",  "stream_per_s", "iterations"};
    } else {
        t.method = both ? "nodes 0 and 1 both send windows of " + std::to_string(s.window) +
                              " messages on link 0 (bytes of both directions); ceiling: memcpy "
                              "of the same bytes by two threads"
                        : "node 0 sends windows of " + std::to_string(s.window) +
                              " messages on link 0, node 1 acknowledges each window; ceiling: "
                              "memcpy of the same bytes by one thread";
        t.columns = {"size_bytes", "bandwidth_MBps", "min_MBps",
                     "max_MBps",   "memcpy_MBps",    "iterations"};
    }
    const long window = s.window;
    for (const std::size_t size : s.sizes) {
        buffers b(2, size);
        // One direction: the window, then a zero-byte acknowledgement.
        const auto one_way = [&b, window](node& me, long reps) {
            std::byte none[1];
            for (long i = 0; i < reps; ++i) {
                if (me.id() == 0) {
                    for (long w = 0; w < window; ++w)
                        me.send(0, b.out[0]);
                    me.recv(0, std::span(none, 0));
                } else {
                    for (long w = 0; w < window; ++w)
                        me.recv(0, b.in[1]);
                    me.send(0, nothing);
                }
            }
        };
        // Both directions: `depth` sends ahead of the receives, so that
        // neither end waits on a full link the other does not drain.
        const auto two_way = [&b, window, depth](node& me, long reps) {
            bytes& out = b.out[me.id()];
            bytes& in = b.in[me.id()];
            const long ahead = long(depth);
            for (long i = 0; i < reps; ++i) {
                for (long w = 0; w < window + ahead; ++w) {
                    // Receive first: with `ahead` sends on the link, one more
                    // would wait for the peer, who waits for the same.
                    if (w >= ahead) me.recv(0, in);
                    if (w < window) me.send(0, out);
                }
            }
        };
        const auto sample = [&](long n) {
            return both ? timed_pair(m, n, two_way) : timed_pair(m, n, one_way);
        };
        const int copiers = both ? 2 : 1;
        std::optional<memcpy_probe> copy;
        const auto limit = [&](long n) {
            if (rate) return spsc_stream_rate(std::min(n * window, max_reps));
            if (!copy) copy.emplace(size, copiers, copiers, copy_reps(size, copiers, n * window));
            return copy->bytes_per_second() / 1e6;
        };
        const double per_window = double(window) * double(copiers);
        const measured r = in_turns(s, sample, limit, [&](double sec, long n) {
            const double messages = per_window * double(n);
            return rate ? messages / sec : messages * double(size) / sec / 1e6;
        });
        t.rows.push_back({double(size), r.value.median, r.value.min, r.value.max, r.limit.max,
                          double(r.iterations)});
    }
}

void allport(machine& m, const setup& s, table& t) {
    const int d = m.cfg().dim, p = m.size();
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    t.method = "every node exchanges on links 0..k-1 at once (exchange_all, all-port), bytes and "
               "messages of all nodes; ceiling: memcpy of the same bytes by " +
               std::to_string(cores) + " threads (the cores)";
    t.columns = {"links",    "size_bytes", "bandwidth_MBps", "min_MBps",
                 "max_MBps", "rate_per_s", "memcpy_MBps",    "iterations"};
    for (int k = 1; k <= d; ++k)
        for (const std::size_t size : s.sizes) {
            // Node i's link j buffers: out[i * k + j], in[i * k + j].
            buffers b(p * k, size);
            const auto sample = [&](long n) {
                double seconds = 0;
                m.run([&](node& me) {
                    std::vector<transfer<std::byte>> ops;
                    for (int j = 0; j < k; ++j) {
                        const std::size_t at = std::size_t(me.id() * k + j);
                        ops.push_back({j, b.out[at], b.in[at]});
                    }
                    me.exchange_all(ops); // lines the nodes up
                    const auto t0 = clock_type::now();
                    for (long i = 0; i < n; ++i)
                        me.exchange_all(ops);
                    if (me.id() == 0) seconds = seconds_since(t0);
                });
                return seconds;
            };
            std::optional<memcpy_probe> copy;
            const auto limit = [&](long n) {
                if (!copy) copy.emplace(size, p * k, cores, copy_reps(size, p * k, n));
                return copy->bytes_per_second() / 1e6;
            };
            const double messages = double(p) * k;
            std::vector<double> rates;
            const measured r = in_turns(s, sample, limit, [&](double sec, long n) {
                rates.push_back(messages * double(n) / sec);
                return messages * double(n) * double(size) / sec / 1e6;
            });
            t.rows.push_back({double(k), double(size), r.value.median, r.value.min, r.value.max,
                              median(rates), r.limit.max, double(r.iterations)});
        }
}

// Bytes a setup allocates at its largest size: every node's buffers, the
// memcpy baseline's, and the heap copies of the sends a link holds.
double buffer_bytes(const setup& s) {
    const double size = double(*std::max_element(s.sizes.begin(), s.sizes.end()));
    const double held = double(std::min<std::size_t>(s.window, s.machine.link_capacity + 1));
    const double p = double(1 << s.machine.dim), d = s.machine.dim;
    switch (s.what) {
    case kind::latency:
        return 6 * size;
    case kind::allport:
        return 5 * p * d * size;
    default:
        return (4 + 4 + 2 * held) * size;
    }
}

} // namespace

table run(const setup& s) {
    if (s.machine.dim < min_dim)
        throw usage_error("--dim '" + std::to_string(s.machine.dim) + "' is too small: " +
                          std::string(to_string(s.what)) + " needs two nodes (--dim >= 1)");
    if (s.window < 1)
        throw usage_error("--window '" + std::to_string(s.window) + "' must be at least 1");
    if (s.sizes.empty()) throw usage_error("no message sizes to measure");
    if (const double need = buffer_bytes(s); need > double(max_buffer_bytes))
        throw usage_error(std::string(to_string(s.what)) +
                          " at d = " + std::to_string(s.machine.dim) + " with " +
                          std::to_string(*std::max_element(s.sizes.begin(), s.sizes.end())) +
                          "-byte messages needs " + std::to_string(std::llround(need / (1 << 20))) +
                          " MiB of buffers (at most " + std::to_string(max_buffer_bytes >> 20) +
                          " MiB): a smaller --dim or --sizes");
    config c = s.machine;
    if (s.what == kind::allport) c.ports = port_model::all_port;
    machine m(c);
    table t{s.what, m.cfg(), {}, {}, {}};
    switch (s.what) {
    case kind::latency:
        latency(m, s, t);
        break;
    case kind::bw:
    case kind::bibw:
    case kind::rate:
        windows(m, s, t);
        break;
    case kind::allport:
        allport(m, s, t);
        break;
    }
    return t;
}

} // namespace hcube::microbench
