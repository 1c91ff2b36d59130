// Shared by the collective suites: every node's input and the operator each
// element type is reduced with, the serial fold the results are checked
// against, and the sweeps over cubes, algorithms, sizes and roots that the
// suites run.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>
#include <hcube/machine.hpp>

#include "test_support.hpp"

namespace hcube::test {

// Element i of node k's input: a matrix for the product, value_for otherwise.
template <class T>
T input(int k, std::size_t i) {
    if constexpr (std::is_same_v<T, mat2>)
        return mat2_for(k, i);
    else
        return value_for<T>(k, i);
}

// The operator T is reduced with: the non-commutative product for mat2, plus
// for everything else.
template <class T>
using op_for = std::conditional_t<std::is_same_v<T, mat2>, mat2_product, std::plus<>>;

// x_0 op x_1 op ... op x_(p-1) for element i of everyone's input, in node order.
template <class T, class Op>
T serial_fold(int p, std::size_t i, Op op) {
    T acc = input<T>(0, i);
    for (int k = 1; k < p; ++k)
        acc = op(acc, input<T>(k, i));
    return acc;
}

// Runs `program` on every node of mach (it returns true when that node's result
// is right) and counts the nodes whose result was wrong.
template <class Program>
int count_wrong_nodes(machine& mach, Program program) {
    std::atomic<int> wrong{0};
    mach.run([&](node& me) {
        if (!program(me)) ++wrong;
    });
    return wrong.load();
}

// An algorithm (or another variant of a run) and the name failures show.
template <class A>
struct named {
    A value;
    const char* name;
};

// m in {0, 1, 3, p, 1000}: only 1000 at d = 8.
inline std::vector<std::size_t> sizes_to_1000(int d) {
    const std::size_t p = std::size_t{1} << d;
    if (d == 8) return {1000};
    return {0, 1, 3, p, 1000};
}

// m in {0, 1, 3, p, 1000}: only 3 at d = 8, and none where the p * p * m
// elements of a run would get large.
inline std::vector<std::size_t> bounded_sizes(int d) {
    const std::size_t p = std::size_t{1} << d;
    std::vector<std::size_t> out;
    for (std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{3}, p, std::size_t{1000}})
        if (d == 8 ? m == 3 : p * p * m <= (std::size_t{1} << 20) || m <= 3) out.push_back(m);
    return out;
}

// The element types' names, for the failure messages.
template <class T>
constexpr const char* type_name = "?";
template <>
inline constexpr const char* type_name<std::int32_t> = "int32";
template <>
inline constexpr const char* type_name<std::int64_t> = "int64";
template <>
inline constexpr const char* type_name<double> = "double";
template <>
inline constexpr const char* type_name<mat2> = "mat2";
template <>
inline constexpr const char* type_name<point> = "point";

// n in {0, 1, p - 1, p + 1, 3 p + 2}: totals that p does not divide.
inline std::vector<std::size_t> uneven_sizes(int d) {
    const std::size_t p = std::size_t{1} << d;
    return {0, 1, p - 1, p + 1, 3 * p + 2};
}

struct fits_every_cube {
    template <class A>
    bool operator()(A, int) const {
        return true;
    }
};

// For d = 0..max_d on one machine each, every variant v with fits(v, d) and
// every m of sizes(d): check(machine, d, v, m), with d, the variant's name and
// m captured.
template <class A, std::size_t N, class Check, class Fits = fits_every_cube>
void for_every_cube(int max_d, const named<A> (&variants)[N],
                    std::vector<std::size_t> (*sizes)(int), Check check, Fits fits = {}) {
    for (int d = 0; d <= max_d; ++d) {
        machine mach(cfg(d));
        for (const auto& [v, name] : variants) {
            if (!fits(v, d)) continue;
            for (std::size_t m : sizes(d)) {
                CAPTURE(d);
                CAPTURE(name);
                CAPTURE(m);
                check(mach, d, v, m);
            }
        }
    }
}

// for_every_cube up to d = 8: checks that wrong.template operator()<T>(machine,
// v, m), a count of the nodes whose result differs from the serial reference,
// is 0 for T = int32 and Second, and below d = 6 for int64 and double as well.
template <class Second, class A, std::size_t N, class Wrong, class Fits = fits_every_cube>
void check_every_cube(const named<A> (&variants)[N], std::vector<std::size_t> (*sizes)(int),
                      Wrong wrong, Fits fits = {}) {
    for_every_cube(
        8, variants, sizes,
        [&](machine& mach, int d, A v, std::size_t m) {
            const auto no_wrong_node = [&]<class T>() {
                const char* type = type_name<T>;
                CAPTURE(type);
                CHECK(wrong.template operator()<T>(mach, v, m) == 0);
            };
            no_wrong_node.template operator()<std::int32_t>();
            no_wrong_node.template operator()<Second>();
            if (d >= 6) return; // two types suffice where runs get slow
            no_wrong_node.template operator()<std::int64_t>();
            no_wrong_node.template operator()<double>();
        },
        fits);
}

// A closed form f(d, m, t_s, t_w) of Grama et al.'s cost functions.
using cost_form = double (*)(int, double, double, double);

// A collective on uneven blocks (program(node, n), n elements in all) on
// d = 0..8 with t_s = 3, t_w = 2, for n in {0, 5, p - 1, 2 p, 3 p + p/2 + 1}:
// the virtual time is exactly blocks_form(d, n) and, when p divides n, also
// even_form(d, n / p).
template <class Program>
void check_blocks_cost(Program program, cost_form blocks_form, cost_form even_form) {
    constexpr double t_s = 3, t_w = 2;
    for (int d = 0; d <= 8; ++d) {
        const std::size_t p = std::size_t{1} << d;
        machine mach(cfg(d, port_model::single_port, t_s, t_w));
        for (std::size_t n : {std::size_t{0}, std::size_t{5}, p - 1, 2 * p, 3 * p + p / 2 + 1}) {
            CAPTURE(d);
            CAPTURE(n);
            const run_report r = mach.run([&](node& me) { program(me, n); });
            CHECK(r.virtual_time == blocks_form(d, double(n), t_s, t_w));
            if (n % p == 0) CHECK(r.virtual_time == even_form(d, double(n / p), t_s, t_w));
        }
    }
}

// The roots a rooted collective is checked with on p nodes: 0, p - 1, p/2 + 1
// and 5, those that exist, each once.
inline std::vector<int> roots_for(int p) {
    std::vector<int> r{0};
    for (int x : {p - 1, p / 2 + 1, 5})
        if (x > 0 && x < p && std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
    return r;
}

// On one machine with config c: check(machine, m, root) for every m of `sizes`
// and every root of roots_for(p), with d, m and root captured. Large cubes
// (!all_cases) take only the first two roots and m in {3, 1000}.
template <class Check>
void for_rooted_cases(const config& c, bool all_cases, std::vector<std::size_t> sizes,
                      Check check) {
    machine mc(c);
    const int d = c.dim;
    std::vector<int> roots = roots_for(mc.size());
    if (!all_cases) roots.resize(std::min<std::size_t>(roots.size(), 2)), sizes = {3, 1000};
    for (std::size_t m : sizes)
        for (int root : roots) {
            CAPTURE(d);
            CAPTURE(m);
            CAPTURE(root);
            check(mc, m, root);
        }
}

// A rooted collective's binomial tree and split algorithm on a d-cube with
// costs t_s, t_w, for every root of roots_for(p) and m in {0, 1, 3, p, p + 3,
// 1000} (for_rooted_cases): run(machine, m, root, algorithm, report) runs it and
// checks the result; the virtual time must be formula(algorithm, d, m, root)
// and the steps d for the tree, 2 d for the split algorithm.
template <class A, class Run>
void check_binomial_and_split(int d, bool all_cases, double t_s, double t_w, A binomial, A split,
                              Run run, double (*formula)(A, int, std::size_t, int)) {
    const std::size_t p = std::size_t{1} << d;
    for_rooted_cases(cfg(d, port_model::single_port, t_s, t_w), all_cases,
                     {0, 1, 3, p, p + 3, 1000}, [&](machine& mc, std::size_t m, int root) {
                         for (A a : {binomial, split}) {
                             CAPTURE(int(a));
                             run_report r;
                             run(mc, m, root, a, r);
                             CHECK(r.virtual_time == formula(a, d, m, root));
                             CHECK(r.steps == (a == binomial ? d : 2 * d));
                         }
                     });
}

} // namespace hcube::test
