// bench-mpi: the textbook's hypercube collectives over MPI ranks (one node per
// rank, config::backend = mpi) next to the MPI library's own call and the
// in-process emulator with the same p, in the same run. Run it under mpirun
// with a power-of-two number of ranks:
//
//   mpirun -np 16 --oversubscribe build/bench/bench-mpi [--quick] [--multiple]
//
// hcube calls MPI from one thread at a time and asks for
// MPI_THREAD_SERIALIZED; --multiple initialises MPI with MPI_THREAD_MULTIPLE
// instead (hcube accepts it), to measure what the higher level costs.
//
// One CSV line per operation and size on rank 0's stdout: microseconds per
// call, median over samples with min and max. A sample is K back-to-back
// calls in one run() (hcube) or between two barriers (MPI), divided by K; for
// hcube the time is the slowest rank's (run_report::wall_seconds). Buffers are
// allocated and written, and one sample thrown away, before timing.
//
// Sizes are per node: a node's contribution (allreduce, broadcast, scan), its
// block (allgather), its block for each other node (alltoall) or its share of
// the result (reduce-scatter), as the catalog's --words. The last column is
// what the last run of the operation sent rank 0's router per routed message
// (run_report::messages_to_router; 0 for operations without routed messages).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <hcube/hcube.hpp>

using namespace hcube;

namespace {

struct stats {
    double median = 0, min = 0, max = 0;
};

stats summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v.back()};
}

// The buffers of the nodes `mc` runs here, written before timing.
struct buffers {
    std::vector<std::vector<double>> in, out;
    buffers(const machine& mc, std::size_t in_words, std::size_t out_words)
        : in(std::size_t(mc.size()))
        , out(std::size_t(mc.size())) {
        for (int i = 0; i < mc.size(); ++i)
            if (mc.is_local(i)) {
                in[std::size_t(i)].assign(in_words, 1.0);
                out[std::size_t(i)].assign(out_words, 0.0);
            }
    }
};

struct operation {
    const char* name;
    std::size_t in_blocks, out_blocks; // in units of m words: 1 or p (-1)
    std::function<void(node&, buffers&)> hcube;
    std::function<void(std::vector<double>&, std::vector<double>&, int m)> mpi;
};

std::vector<operation> operations() {
    const auto mine = [](node& me, buffers& b) -> std::vector<double>& {
        return b.in[std::size_t(me.id())];
    };
    const auto theirs = [](node& me, buffers& b) -> std::vector<double>& {
        return b.out[std::size_t(me.id())];
    };
    return {
        {"allreduce", 1, 1,
         [=](node& me, buffers& b) {
             allreduce(me, std::span<double>(mine(me, b)), std::plus<>{});
         },
         [](std::vector<double>& in, std::vector<double>& out, int m) {
             MPI_Allreduce(in.data(), out.data(), m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
         }},
        {"allgather", 1, 0,
         [=](node& me, buffers& b) {
             allgather(me, std::span<const double>(mine(me, b)), std::span<double>(theirs(me, b)));
         },
         [](std::vector<double>& in, std::vector<double>& out, int m) {
             MPI_Allgather(in.data(), m, MPI_DOUBLE, out.data(), m, MPI_DOUBLE, MPI_COMM_WORLD);
         }},
        {"alltoall", 0, 0,
         [=](node& me, buffers& b) {
             alltoall(me, std::span<const double>(mine(me, b)), std::span<double>(theirs(me, b)));
         },
         [](std::vector<double>& in, std::vector<double>& out, int m) {
             MPI_Alltoall(in.data(), m, MPI_DOUBLE, out.data(), m, MPI_DOUBLE, MPI_COMM_WORLD);
         }},
        // The pairwise exchange by name (auto takes dimension exchange under
        // the default cost model): large blocks, one copy each.
        {"alltoall-pairwise", 0, 0,
         [=](node& me, buffers& b) {
             alltoall(me, std::span<const double>(mine(me, b)), std::span<double>(theirs(me, b)),
                      alltoall_algo::pairwise);
         },
         [](std::vector<double>& in, std::vector<double>& out, int m) {
             MPI_Alltoall(in.data(), m, MPI_DOUBLE, out.data(), m, MPI_DOUBLE, MPI_COMM_WORLD);
         }},
        {"broadcast", 1, 1,
         [=](node& me, buffers& b) { broadcast(me, std::span<double>(mine(me, b)), 0); },
         [](std::vector<double>& in, std::vector<double>&, int m) {
             MPI_Bcast(in.data(), m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
         }},
        {"reduce-scatter", 0, 1,
         [=](node& me, buffers& b) {
             reduce_scatter(me, std::span<const double>(mine(me, b)),
                            std::span<double>(theirs(me, b)), std::plus<>{});
         },
         [](std::vector<double>& in, std::vector<double>& out, int m) {
             MPI_Reduce_scatter_block(in.data(), out.data(), m, MPI_DOUBLE, MPI_SUM,
                                      MPI_COMM_WORLD);
         }},
        {"scan", 1, 1,
         [=](node& me, buffers& b) {
             inclusive_scan(me, std::span<double>(mine(me, b)), std::plus<>{});
         },
         [](std::vector<double>& in, std::vector<double>& out, int m) {
             MPI_Scan(in.data(), out.data(), m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
         }},
    };
}

struct hcube_timing {
    stats seconds;        // per call
    double to_router = 0; // messages to rank 0's router per routed message
};

// Seconds per call of `op` on machine `mc`: samples of `calls` calls each.
hcube_timing time_hcube(machine& mc, const operation& op, std::size_t in_words,
                        std::size_t out_words, int calls, int samples) {
    buffers b(mc, in_words, out_words);
    std::vector<double> t;
    double to_router = 0;
    for (int s = 0; s <= samples; ++s) {
        const run_report r = mc.run([&](node& me) {
            for (int c = 0; c < calls; ++c)
                op.hcube(me, b);
        });
        if (s) t.push_back(r.wall_seconds / calls); // the first one warms up
        if (r.routed_messages) to_router = double(r.messages_to_router) / double(r.routed_messages);
    }
    return {summarize(t), to_router};
}

stats time_mpi(const operation& op, std::vector<double>& in, std::vector<double>& out, int m,
               int calls, int samples) {
    std::vector<double> t;
    for (int s = 0; s <= samples; ++s) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int c = 0; c < calls; ++c)
            op.mpi(in, out, m);
        double mine = (MPI_Wtime() - t0) / calls, slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (s) t.push_back(slowest);
    }
    return summarize(t);
}

} // namespace

int main(int argc, char** argv) {
    hcube::keep_freed_memory(); // no page faults of recycled buffers in the timings
    bool quick = false, multiple = false;
    for (int i = 1; i < argc; ++i) {
        quick |= std::strcmp(argv[i], "--quick") == 0;
        multiple |= std::strcmp(argv[i], "--multiple") == 0;
    }
    int provided = 0;
    MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED,
                    &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char* level = provided == MPI_THREAD_MULTIPLE ? "multiple" : "serialized";
    if (ranks & (ranks - 1)) {
        if (rank == 0) std::fprintf(stderr, "bench-mpi: the ranks must be a power of two\n");
        MPI_Finalize();
        return 2;
    }
    const int dim = __builtin_ctz(unsigned(ranks));
    const int samples = quick ? 3 : 9;
    const std::size_t sizes[] = {1, 8192}; // doubles per node: 8 B and 64 KiB
    if (rank == 0)
        std::printf("op,bytes_per_node,ranks,hcube_mpi_us,hcube_mpi_min,hcube_mpi_max,mpi_us,"
                    "mpi_min,mpi_max,emulator_us,emulator_min,emulator_max,hcube_over_mpi,"
                    "thread_level,to_router_per_routed\n");
    {
        machine net({.dim = dim, .backend = backend_kind::mpi});
        std::optional<machine> here; // rank 0's in-process emulator of the same p
        if (rank == 0) here.emplace(config{.dim = dim, .backend = backend_kind::in_process});
        for (const operation& op : operations())
            for (const std::size_t m : sizes) {
                const auto words = [&](std::size_t blocks) {
                    return m * (blocks ? blocks : std::size_t(ranks));
                };
                const int calls = m == 1 ? (quick ? 20 : 200) : (quick ? 2 : 10);
                const std::size_t in_words = words(op.in_blocks), out_words = words(op.out_blocks);
                const hcube_timing hcube_run =
                    time_hcube(net, op, in_words, out_words, calls, samples);
                const stats over_mpi = hcube_run.seconds;
                std::vector<double> in(in_words, 1.0), out(out_words, 0.0);
                const stats library = time_mpi(op, in, out, int(m), calls, samples);
                // The emulator on rank 0 alone; the others wait at the barrier.
                stats emulated;
                if (here)
                    emulated = time_hcube(*here, op, in_words, out_words, calls, samples).seconds;
                MPI_Barrier(MPI_COMM_WORLD);
                if (rank == 0)
                    std::printf(
                        "%s,%zu,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%s,%.3f\n",
                        op.name, m * sizeof(double), ranks, over_mpi.median * 1e6,
                        over_mpi.min * 1e6, over_mpi.max * 1e6, library.median * 1e6,
                        library.min * 1e6, library.max * 1e6, emulated.median * 1e6,
                        emulated.min * 1e6, emulated.max * 1e6, over_mpi.median / library.median,
                        level, hcube_run.to_router);
                std::fflush(stdout);
            }
    }
    MPI_Finalize();
    return 0;
}
