// matvec: y = A x on a d-cube, the motivating example of Mathur & Johnsson (Mathur &
// Johnsson, section 2), with A of P x P elements, P = N r, and x, y spread
// evenly: node j holds x_j and y_j, the j-th segments of r elements.
//
//   by rows    (Figure 2): node j holds rows j r .. j r + r - 1 of A. An
//              all-to-all broadcast of x gives every node all of x; then
//              y_j = A_j x needs no communication.
//   by columns (Figure 3): node j holds columns j r .. j r + r - 1. Each node
//              forms the partial product A^(j) x_j (all P rows); an all-to-all
//              reduction (sum) leaves segment y_j on node j.
//
// Both use the d Hamiltonian cycles (all-port) and are checked against a
// serial product.
//
// The same program runs in one process or over MPI ranks, a subcube each
// (docs/mpi.md): `--mpi`, or HCUBE_BACKEND=mpi, and mpirun:
//
//   matvec 4 8                       # 16 nodes as threads of this process
//   mpirun -np 4 matvec --mpi 4 8    # 16 nodes on 4 ranks, 4 each
//
// Each rank checks its own nodes' segments; rank 0 prints for the job.
//
// Usage: matvec [--mpi] [D [R]]   (D = 4 dimensions, R = 8 rows/columns per node)
#include <charconv>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string_view>
#include <vector>

#include <hcube/collectives/cm200.hpp>
#include <hcube/machine.hpp>

namespace {

bool parse(const char* s, int& out) {
    const std::string_view a = s;
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), out);
    return ec == std::errc{} && end == a.data() + a.size() && out >= 0;
}

// Small integers, so every sum is exact in double whatever the order.
double a_elem(std::size_t i, std::size_t j) {
    return double((i * 7 + j * 3) % 11) - 5;
}
double x_elem(std::size_t j) {
    return double(j % 13) - 6;
}

} // namespace

int main(int argc, char** argv) {
    int dim = 4, r = 8;
    hcube::config c{.dim = dim, .ports = hcube::port_model::all_port};
    if (argc > 1 && std::string_view(argv[1]) == "--mpi") {
        c.backend = hcube::backend_kind::mpi;
        --argc, ++argv;
    }
    if (argc > 3 || (argc > 1 && !parse(argv[1], dim)) || (argc > 2 && !parse(argv[2], r)) ||
        r == 0) {
        std::cerr << "usage: matvec [--mpi] [D [R]]   (D: dimension, R: rows per node, R > 0)\n";
        return 2;
    }
    c.dim = dim;
    try {
        hcube::machine m(c);
        const std::size_t n = std::size_t(m.size()), rows = std::size_t(r), p = n * rows;

        std::vector<double> want(p, 0.0); // the serial product
        for (std::size_t i = 0; i < p; ++i)
            for (std::size_t j = 0; j < p; ++j)
                want[i] += a_elem(i, j) * x_elem(j);

        // Partitioning by rows: all-to-all broadcast of x.
        std::vector<std::vector<double>> y_rows(n, std::vector<double>(rows));
        const auto by_rows = m.run([&](hcube::node& me) {
            const std::size_t j = std::size_t(me.id());
            std::vector<double> xj(rows), x(p);
            for (std::size_t k = 0; k < rows; ++k)
                xj[k] = x_elem(j * rows + k);
            hcube::cm200::allgather_d_cycles<double>(me, xj, x);
            for (std::size_t k = 0; k < rows; ++k) {
                double s = 0;
                for (std::size_t c = 0; c < p; ++c)
                    s += a_elem(j * rows + k, c) * x[c];
                y_rows[j][k] = s;
            }
        });

        // Partitioning by columns: all-to-all reduction of the partial products.
        std::vector<std::vector<double>> y_cols(n, std::vector<double>(rows));
        const auto by_cols = m.run([&](hcube::node& me) {
            const std::size_t j = std::size_t(me.id());
            std::vector<double> partial(p, 0.0);
            for (std::size_t i = 0; i < p; ++i)
                for (std::size_t k = 0; k < rows; ++k)
                    partial[i] += a_elem(i, j * rows + k) * x_elem(j * rows + k);
            hcube::cm200::reduce_scatter_d_cycles<double>(me, partial, y_cols[j], std::plus<>{});
        });

        int wrong = 0; // over MPI, y_j is on node j's rank only
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t k = 0; k < rows && m.is_local(int(j)); ++k) {
                wrong += y_rows[j][k] != want[j * rows + k];
                wrong += y_cols[j][k] != want[j * rows + k];
            }
        const bool right = m.on_every_rank(wrong == 0);
        if (m.rank() != 0) return right ? 0 : 1;
        std::cout << "y = A x, A " << p << " x " << p << " on " << n << " nodes (" << rows
                  << " rows or columns per node)\n"
                  << "by rows    (all-to-all broadcast of x): " << by_rows.steps << " steps, "
                  << by_rows.messages << " messages, " << by_rows.wall_seconds * 1e3 << " ms\n"
                  << "by columns (all-to-all reduction of y): " << by_cols.steps << " steps, "
                  << by_cols.messages << " messages, " << by_cols.wall_seconds * 1e3 << " ms\n"
                  << (right ? "both equal the serial product\n"
                            : "MISMATCH against the serial product\n");
        return right ? 0 : 1;
    } catch (const hcube::error& e) {
        std::cerr << "matvec: " << e.what() << '\n';
        return 1;
    }
}
