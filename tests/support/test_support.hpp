// Shared by every suite: a non-commutative associative operator (2x2 integer
// matrix product, the catalog's), a struct element type, and deterministic
// inputs.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <hcube/driver/dispatch.hpp>
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

// The catalog's non-commutative test data (hcube/driver/dispatch.hpp).
using detail::mat2;
using detail::mat2_for;
using detail::mat2_product;

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

// Deterministic value for element i of node `node`, in any arithmetic type:
// node * 2^15 + i, distinct for every (node, element) a suite uses, so an
// element in the wrong place shows. Sums over 256 nodes stay below 2^31
// (exact in int32 and double); an index of 2^15 or more throws.
inline constexpr std::size_t value_stride = std::size_t{1} << 15;
template <class T>
T value_for(int node, std::size_t i) {
    if (i >= value_stride)
        throw std::out_of_range("value_for: element " + std::to_string(i) + " of node " +
                                std::to_string(node) + " is not below 2^15");
    const std::int64_t v = std::int64_t(node) * std::int64_t(value_stride) + std::int64_t(i);
    if constexpr (std::is_same_v<T, point>)
        return {std::int32_t(v), double(i) / 4 + node};
    else
        return T(v);
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

// The message of the Error that `program` raises on `m`, "" if it returns.
template <class Error = run_error>
std::string failure_text(machine& m, const std::function<void(node&)>& program) {
    try {
        m.run(program);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
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
