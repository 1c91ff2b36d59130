// Link-level microbenchmarks, OSU style: for each message size a
// warm-up, then samples taken in turns with the limit that bounds them
// (a raw cross-core cache-line ping-pong, memcpy of the same bytes, a raw
// stream of cache lines), reported as median, min and max. Used by
// `hcube bench` (cli/bench.cpp); the baselines are shared with
// bench/runtime.cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <hcube/config.hpp>

namespace hcube::microbench {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The median of repeated measurements (the upper one of an even count).
double median(std::vector<double> v);

// A CSV field as RFC 4180 writes it: quoted, quotes doubled, when it holds a
// comma, a quote or a line break ("allreduce ..., threads" is one field).
inline std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (const char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + '"';
}

// ---- baselines ----------------------------------------------------------------

// Binds the calling thread to one CPU, or back to all of them.
void pin_to_cpu(int cpu);
void unpin();

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
double spin_round_trip_us(int iters);

// `count` one-cache-line messages streamed from CPU 0 to CPU 1 through a
// 16-slot boost::lockfree::spsc_queue, both spinning: messages per second,
// the ceiling of a message rate on one link.
double spsc_stream_rate(long count);

// memcpy of `buffers` buffer pairs of `bytes` each, `reps` times, shared out
// over `threads` threads: the same bytes and the same working set as a
// transfer that moves `buffers` messages per round. The buffers are touched
// when built, so a first touch of fresh memory is not timed.
class memcpy_probe {
public:
    memcpy_probe(std::size_t bytes, int buffers, int threads, int reps);
    // Bytes copied per second (all threads together).
    double bytes_per_second();
    double gbps() { return bytes_per_second() / 1e9; }

private:
    std::size_t bytes_;
    int threads_, reps_;
    std::vector<std::vector<char>> src_, dst_;
};

// Repetitions per sample: `iterations` after one untimed sample, else, after
// one untimed repetition (first touches, the allocator's first blocks),
// doubled from 1 until a sample takes seconds / samples. Each step takes the
// faster of two samples, so that one preempted sample does not stop the
// doubling early. sample(n) returns the seconds of n repetitions.
long repetitions(long iterations, double seconds, int samples,
                 const std::function<double(long)>& sample);

// ---- hcube's links ---------------------------------------------------------------

enum class kind {
    latency, // ping-pong on link 0 between nodes 0 and 1: half the round trip
    bw,      // node 0 sends a window of messages to node 1, which acknowledges
    bibw,    // the same in both directions at once
    rate,    // bw counted in messages per second
    allport, // every node exchanges on links 0..k-1 at once (all-port), k = 1..d
};
inline constexpr kind kinds[] = {kind::latency, kind::bw, kind::bibw, kind::rate, kind::allport};
std::string_view to_string(kind k) noexcept;

// One kind on one machine. Sizes are bytes per message.
struct setup {
    kind what = kind::latency;
    config machine; // dim, links, executor; allport runs it all-port
    std::vector<std::size_t> sizes;
    // Repetitions (round trips, windows, exchanges) per sample; 0: as many as
    // fill `seconds` / samples, found by doubling from 1 (the warm-up).
    long iterations = 0;
    double seconds = 0.1; // per size and measurement when iterations == 0
    int samples = 5;
    int window = 64; // bw, bibw, rate: messages in flight per repetition
};

// Default sizes: 0 B .. 4 MiB by powers of two for latency, 1 B .. 4 MiB for
// the bandwidths, 1 B .. 8 KiB for rate.
std::vector<std::size_t> default_sizes(kind k);

// The smallest dimension a kind runs on (1; allport too).
inline constexpr int min_dim = 1;

// A median with the spread of its samples.
struct spread {
    double min = 0, median = 0, max = 0;
};
spread spread_of(std::vector<double> samples);

// The table of one kind: named columns, one row per size (allport: per k and
// size), every row with its limit (the baseline's best sample) measured in
// turns with it. The columns are described in docs/cli.md.
struct table {
    kind what;
    config machine;     // as the machine resolved it (executor, links)
    std::string method; // one line: what was measured and against which limit
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;
};

// Buffers a benchmark may allocate (the machine is shared with other work).
inline constexpr std::size_t max_buffer_bytes = std::size_t(1) << 30;

// Runs the benchmark; throws usage_error for a dimension below min_dim, a
// window below 1, no sizes, or sizes whose buffers exceed max_buffer_bytes.
table run(const setup& s);

} // namespace hcube::microbench
