// Shared by every suite: a non-commutative associative operator (2x2 integer
// matrix product), a struct element type, and deterministic inputs.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <span>
#include <vector>

#include <hcube/error.hpp>
#include <hcube/machine.hpp>

namespace hcube::test {

// Runs a program in which every node receives on dimension 0 and nobody
// sends: a deadlock of the whole machine. Returns the waits its report lists,
// none if the run returned (so a size check fails).
inline std::vector<blocked_wait> waits_when_all_receive(machine& m) {
    try {
        m.run([](node& me) {
            int x = 0;
            me.recv(0, std::span(&x, 1));
        });
    } catch (const deadlock_error& e) {
        return e.waits();
    }
    return {};
}

// 2x2 matrices over the integers modulo 2^32: associative, not commutative.
struct mat2 {
    std::uint32_t a = 1, b = 0, c = 0, d = 1;
    friend bool operator==(const mat2&, const mat2&) = default;
    friend std::ostream& operator<<(std::ostream& os, const mat2& m) {
        return os << "[" << m.a << " " << m.b << "; " << m.c << " " << m.d << "]";
    }
};

struct mat2_product {
    mat2 operator()(const mat2& x, const mat2& y) const noexcept {
        return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
                x.c * y.b + x.d * y.d};
    }
};

// A distinct, non-trivial matrix for (node, index): U^a L^b with the shears
// U = [1 1; 0 1], L = [1 0; 1 1], a = node + 1, b = i + 1, i.e. [1+ab a; b 1].
// Its determinant is 1, so every product of inputs is invertible mod 2^32 and
// never zero, and products in different orders stay different on every cube
// the suites run (tests/reductions/misordered.cpp). Matrices with even
// determinants, which these replaced, multiplied to the zero matrix at p = 128.
inline mat2 mat2_for(int node, std::size_t i) {
    const auto a = std::uint32_t(node) + 1, b = std::uint32_t(i) + 1;
    return {1 + a * b, a, b, 1};
}

// The binary-reflected Gray code G and its inverse (prefix XOR of the bits),
// written out so that expectations need not use lib/topology.hpp's.
constexpr std::uint64_t gray_code(std::uint64_t x) noexcept {
    return x ^ (x >> 1);
}
constexpr std::uint64_t gray_code_inverse(std::uint64_t g) noexcept {
    std::uint64_t x = 0;
    for (; g; g >>= 1)
        x ^= g;
    return x;
}

// A struct element type for the "several types" requirement.
struct point {
    std::int32_t x = 0;
    double y = 0;
    friend bool operator==(const point&, const point&) = default;
    friend std::ostream& operator<<(std::ostream& os, const point& p) {
        return os << "(" << p.x << ", " << p.y << ")";
    }
};

// Deterministic value for element i of node `node`, in any arithmetic type.
template <class T>
T value_for(int node, std::size_t i) {
    if constexpr (std::is_same_v<T, point>)
        return {node * 1000 + int(i), double(i) / 4 + node};
    else
        return T(node * 1000 + std::int64_t(i % 997));
}

// Every node exchanges its id with each neighbour in turn; returns the run's
// report and, in `wrong`, how many replies were not the neighbour's id.
inline run_report neighbor_exchange(machine& m, int& wrong) {
    std::atomic<int> bad{0};
    run_report r = m.run([&](node& me) {
        for (int k = 0; k < me.dim(); ++k) {
            const int out = me.id();
            int in = -1;
            me.exchange(k, std::span(&out, 1), std::span(&in, 1));
            if (in != me.neighbor(k)) ++bad;
        }
    });
    wrong = bad;
    return r;
}

inline config cfg(int dim, port_model ports = port_model::single_port, double t_s = 1,
                  double t_w = 0) {
    config c;
    c.dim = dim;
    c.ports = ports;
    c.cost.t_s = t_s;
    c.cost.t_w = t_w;
    return c;
}

} // namespace hcube::test
