// Tridiagonal fixtures that check parallel cyclic reduction (descend.hpp's
// pcr_kernel): a deterministic test system, the serial Thomas solution and
// the residual. Used by the catalog's descend pcr run and by tests/aspc; not
// part of libhcube's public headers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include <hcube/collectives/descend.hpp>

namespace hcube {

// The Thomas algorithm (serial Gaussian elimination for tridiagonal systems).
inline std::vector<double> thomas_solve(std::span<const tridiag_row> rows) {
    const std::size_t M = rows.size();
    std::vector<double> c(M), d(M), x(M);
    for (std::size_t i = 0; i < M; ++i) {
        const double a = i ? rows[i].a : 0.0;
        const double m = rows[i].b - (i ? a * c[i - 1] : 0.0);
        c[i] = rows[i].c / m;
        d[i] = (rows[i].d - (i ? a * d[i - 1] : 0.0)) / m;
    }
    for (std::size_t i = M; i-- > 0;)
        x[i] = d[i] - (i + 1 < M ? c[i] * x[i + 1] : 0.0);
    return x;
}

// max_i |a x[i-1] + b x[i] + c x[i+1] - d| (out-of-range terms dropped).
inline double tridiag_residual(std::span<const tridiag_row> rows, std::span<const double> x) {
    double worst = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        double r = rows[i].b * x[i] - rows[i].d;
        if (i > 0) r += rows[i].a * x[i - 1];
        if (i + 1 < rows.size()) r += rows[i].c * x[i + 1];
        worst = std::max(worst, std::abs(r));
    }
    return worst;
}

// A deterministic, strictly diagonally dominant system of size M:
// |a| + |c| <= 2.5 < 4 <= b.
inline tridiag_row tridiag_test_row(std::size_t M, std::size_t i) {
    const double u = double((i * 7919 + 13) % 1000) / 1000.0;
    const double v = double((i * 104729 + 7) % 1000) / 1000.0;
    return {i == 0 ? 0.0 : u - 0.5 - v, 4.0 + u + v, i + 1 == M ? 0.0 : 1.0 - v,
            double((i * 31) % 97) - 48.0};
}

} // namespace hcube
