// collectives/allgather.hpp with allgather_algo::d_cycles: the generic
// allgather() and allgather_blocks() over Mathur & Johnsson's d cycles (4.2.1),
// every element of every node against the serial reference with values unique
// per (node, index) and blocks of more than one element, so an element moved
// within its block shows; virtual time (2^d - 1)(t_s + t_w ceil(B/d)) worked
// out here, B the largest block.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <collective_checks.hpp>
#include <doctest/doctest.h>
#include <hcube/collectives/allgather.hpp>
#include <hcube/machine.hpp>
#include <sanitizers.hpp>
#include <test_support.hpp>

using namespace hcube;

namespace {

constexpr double t_s = 5, t_w = 2;

// The closed form, written out: 2^d - 1 steps, each moving ceil(B/d) elements;
// with nothing to move no link is used (empty subblocks leave links idle).
double d_cycles_time(int d, std::size_t largest_block) {
    if (d == 0 || largest_block == 0) return 0;
    const auto part = double((largest_block + std::size_t(d) - 1) / std::size_t(d));
    return double((1 << d) - 1) * (t_s + t_w * part);
}

// The first element of `got` that differs from `want`, named with its node and
// index; "" when they are equal.
std::string first_wrong(int node, const std::vector<std::int64_t>& got,
                        const std::vector<std::int64_t>& want) {
    std::ostringstream os;
    if (got.size() != want.size())
        os << "node " << node << " holds " << got.size() << " elements, expected " << want.size();
    for (std::size_t k = 0; k < got.size() && k < want.size() && os.str().empty(); ++k)
        if (got[k] != want[k])
            os << "node " << node << ", element " << k << " is " << got[k] << ", expected "
               << want[k];
    return os.str();
}

} // namespace

TEST_CASE("allgather() d-cycles: every element of every block in place, exact cost, d = 0..7") {
    for (int d = 0; d <= test::sweep_dim(7); ++d) {
        machine mc(test::cfg(d, port_model::all_port, t_s, t_w));
        const std::size_t p = std::size_t(mc.size());
        // More than one element per block, sizes d does not divide included.
        std::vector<std::size_t> sizes{2, 3, std::size_t(d) + 2, p + 1, 37};
        if (d >= 6) sizes = {2, std::size_t(d) + 2};
        for (std::size_t m : sizes) {
            CAPTURE(d);
            CAPTURE(m);
            std::vector<std::vector<std::int64_t>> got(p);
            const run_report r = mc.run([&](node& me) {
                std::vector<std::int64_t> mine(m), all(p * m);
                for (std::size_t i = 0; i < m; ++i)
                    mine[i] = test::value_for<std::int64_t>(me.id(), i);
                allgather(me, mine, all, allgather_algo::d_cycles);
                got[std::size_t(me.id())] = std::move(all);
            });
            std::vector<std::int64_t> want;
            for (std::size_t k = 0; k < p * m; ++k)
                want.push_back(test::value_for<std::int64_t>(int(k / m), k % m));
            for (int x = 0; x < int(p); ++x) {
                const std::string wrong = first_wrong(x, got[std::size_t(x)], want);
                REQUIRE_MESSAGE(wrong.empty(), wrong);
            }
            CHECK(r.virtual_time == d_cycles_time(d, m));
        }
    }
}

TEST_CASE("allgather_blocks() d-cycles: uneven blocks padded to the largest, every element in "
          "place, exact cost") {
    for (int d = 0; d <= test::sweep_dim(6); ++d) {
        machine mc(test::cfg(d, port_model::all_port, t_s, t_w));
        const std::size_t p = std::size_t(mc.size());
        for (std::size_t n : test::uneven_sizes(d)) {
            CAPTURE(d);
            CAPTURE(n);
            std::vector<std::vector<std::int64_t>> got(p);
            const run_report r = mc.run([&](node& me) {
                std::vector<std::int64_t> data(n, -1);
                const block b = block_of(n, p, std::size_t(me.id()));
                for (std::size_t k = b.begin; k < b.end(); ++k)
                    data[k] = std::int64_t(k); // element k: k, whichever node owns it
                allgather_blocks(me, data, allgather_algo::d_cycles);
                got[std::size_t(me.id())] = std::move(data);
            });
            std::vector<std::int64_t> want(n);
            for (std::size_t k = 0; k < n; ++k)
                want[k] = std::int64_t(k);
            for (int x = 0; x < int(p); ++x) {
                const std::string wrong = first_wrong(x, got[std::size_t(x)], want);
                REQUIRE_MESSAGE(wrong.empty(), wrong);
            }
            CHECK(r.virtual_time == d_cycles_time(d, (n + p - 1) / p));
        }
    }
}
