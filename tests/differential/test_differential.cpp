// Random differential test of the collectives: random operation, algorithm,
// d, m, root, shift, port model, link capacity, cost model, element type and
// operator (non-commutative ones included), each result checked against a
// serial reference computed here from the operation's definition. Catalog
// cases run every registered algorithm (ASPC and descend included) through its
// own driver and serial reference. Routed cases run user-style programs that
// call the routed primitives themselves (routed_programs.hpp), again under
// another executor or link type, which must give the same choices, clocks and
// traffic.
//
// Each case follows from a 64-bit case seed, itself drawn from the run's seed;
// a failure prints both and the case. Environment:
//   HCUBE_DIFF_SEED=<n>     the run's seed (default fixed per variant, so CI is
//                           repeatable and the variants draw different cases)
//   HCUBE_DIFF_SECONDS=<s>  the time budget (default 60, 20 in sanitizer builds)
//   HCUBE_DIFF_CASE=<hex>   replay one case seed and nothing else
//   HCUBE_BACKEND=mpi       under mpirun: every case runs in process and over
//                           the job's ranks, which must agree (no sweep)
// docs/testing.md says how to run a long soak.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <hcube/driver/catalog.hpp>
#include <hcube/hcube.hpp>

#include "deadline.hpp"
#include "routed_programs.hpp"
#include "sanitizers.hpp"
#include "test_support.hpp"

using namespace hcube;

namespace {

using rng = std::mt19937_64;

// ---- element types and operators -------------------------------------------

// Affine maps x -> a x + b modulo 2^64 with a odd: a group (every element is
// invertible, so no product of inputs collapses to a constant), and
// composition does not commute.
struct affine {
    std::uint64_t a = 1, b = 0;
    friend bool operator==(const affine&, const affine&) = default;
    friend std::ostream& operator<<(std::ostream& os, const affine& f) {
        return os << "(" << f.a << " x + " << f.b << ")";
    }
};
// f then g: x -> g(f(x)).
struct affine_then {
    affine operator()(const affine& f, const affine& g) const noexcept {
        return {g.a * f.a, g.a * f.b + g.b};
    }
};

// Commutative, but not declared so (is_commutative is false): the
// order-keeping code paths with an operator whose result is easy to read.
struct max_of {
    std::int64_t operator()(std::int64_t x, std::int64_t y) const noexcept { return x < y ? y : x; }
};

// A random 2x2 matrix of determinant 1 modulo 2^32, a product of shears: the
// products of such matrices never degenerate, so a reduction in the wrong
// order shows.
test::mat2 unimodular(rng& g) {
    const test::mat2_product times;
    test::mat2 m;
    for (int i = 0; i < 3; ++i) {
        const auto s = std::uint32_t(g()), t = std::uint32_t(g());
        m = times(m, test::mat2{1, s % 17, 0, 1});
        m = times(m, test::mat2{1, 0, t % 13, 1});
    }
    return m;
}

enum class elem_kind {
    u32_plus,
    u32_times,
    u32_xor,
    u32_and,
    u32_or,
    i64_plus,
    i64_max,
    f64_plus,
    mat2_product,
    affine_then,
    count
};

const char* name(elem_kind e) {
    static const char* const names[] = {"uint32 plus",
                                        "uint32 multiplies (odd values)",
                                        "uint32 bit_xor",
                                        "uint32 bit_and",
                                        "uint32 bit_or",
                                        "int64 plus",
                                        "int64 max (not flagged commutative)",
                                        "double plus (integer values)",
                                        "mat2 product (unimodular, non-commutative)",
                                        "affine composition (non-commutative)"};
    return names[int(e)];
}

// Calls f(draw, op) with the element generator and operator of `e`.
template <class F>
bool with_elements(elem_kind e, F&& f) {
    const auto u32 = [](rng& g) { return std::uint32_t(g()); };
    switch (e) {
    case elem_kind::u32_plus:
        return f(u32, std::plus<>{});
    case elem_kind::u32_times:
        return f([](rng& g) { return std::uint32_t(g()) | 1u; }, std::multiplies<>{});
    case elem_kind::u32_xor:
        return f(u32, std::bit_xor<>{});
    case elem_kind::u32_and: // each bit set with probability 127/128: some survive 128 nodes
        return f(
            [](rng& g) {
                std::uint32_t x = ~0u;
                for (int i = 0; i < 7; ++i)
                    x &= std::uint32_t(g());
                return ~x;
            },
            std::bit_and<>{});
    case elem_kind::u32_or:
        return f(
            [](rng& g) {
                std::uint32_t x = ~0u;
                for (int i = 0; i < 7; ++i)
                    x &= std::uint32_t(g());
                return x;
            },
            std::bit_or<>{});
    case elem_kind::i64_plus:
        return f([](rng& g) { return std::int64_t(g() % 2000000000001ULL) - 1000000000000LL; },
                 std::plus<>{});
    case elem_kind::i64_max:
        return f([](rng& g) { return std::int64_t(g()); }, max_of{});
    case elem_kind::f64_plus: // small integers: every order of summation is exact
        return f([](rng& g) { return double(std::int64_t(g() % 2001) - 1000); }, std::plus<>{});
    case elem_kind::mat2_product:
        return f(unimodular, test::mat2_product{});
    case elem_kind::affine_then:
        return f([](rng& g) { return affine{g() | 1u, g()}; }, affine_then{});
    case elem_kind::count:
        break;
    }
    return false;
}

// ---- cases -----------------------------------------------------------------

enum class op_kind {
    broadcast,
    reduce,
    allreduce,
    inclusive_scan,
    exclusive_scan,
    allgather,
    reduce_scatter,
    scatter,
    gather,
    alltoall,
    shift,
    cm200_allgather,
    cm200_reduce_scatter,
    routed_program, // a user-style program of routed messages (routed_programs.hpp)
    catalog,        // an entry of builtin_catalog(), with its own driver and reference
    count
};

const char* name(op_kind o) {
    static const char* const names[] = {"broadcast",
                                        "reduce",
                                        "allreduce",
                                        "inclusive_scan",
                                        "exclusive_scan",
                                        "allgather",
                                        "reduce_scatter",
                                        "scatter",
                                        "gather",
                                        "alltoall",
                                        "circular_shift",
                                        "cm200::allgather",
                                        "cm200::reduce_scatter",
                                        "routed program",
                                        "catalog"};
    return names[int(o)];
}

// The algorithm names each operation can be given (index = the enum's value).
std::vector<std::string> algorithms(op_kind o) {
    switch (o) {
    case op_kind::broadcast:
        return {"automatic", "binomial", "scatter_allgather"};
    case op_kind::reduce:
        return {"automatic", "binomial", "reduce_scatter_gather"};
    case op_kind::allreduce:
        return {"automatic", "hypercube", "reduce_scatter_allgather", "reduce_broadcast",
                "d_cycles"};
    case op_kind::allgather:
        return {"automatic", "hypercube", "ring", "mesh", "d_cycles"};
    case op_kind::reduce_scatter:
        return {"automatic", "hypercube", "ring"};
    case op_kind::alltoall:
        return {"automatic", "dimension_exchange", "pairwise", "ring"};
    case op_kind::shift:
        return {"automatic", "gray", "gray_bidirectional", "ecube"};
    case op_kind::cm200_allgather:
        return {"one-cycle", "d-cycles", "send-and-spread", "one-source-at-a-time"};
    case op_kind::cm200_reduce_scatter:
        return {"one-cycle", "d-cycles", "reduce-and-spread"};
    default:
        return {"-"};
    }
}

struct test_case {
    std::uint64_t seed = 0;
    op_kind op{};
    int algo = 0;
    elem_kind elem{};
    int d = 0;
    std::size_t m = 0;
    int root = 0;
    long long q = 0;
    int ring = 0;                                  // shift_ring
    bool gray_order = false, index_motion = false; // cm200 options
    port_model ports{};
    std::size_t capacity = 16;
    cost_model cost{};
    run_params catalog; // op == catalog
    int alternate = 0;  // op == routed_program: the other executor or links (alternates)
};

// What a routed program runs under a second time: each differs from the
// default (threads, ring links) in the executor, the worker count or the links.
struct run_variant {
    const char* name;
    executor_kind executor;
    int workers;
    link_impl links;
};
constexpr run_variant alternates[] = {
    {"threads, boost links", executor_kind::threads, 0, link_impl::boost_spsc},
    {"fibers on 1 worker", executor_kind::fibers, 1, link_impl::ring},
    {"fibers on 3 workers", executor_kind::fibers, 3, link_impl::ring},
    {"fibers on 2 workers, boost links", executor_kind::fibers, 2, link_impl::boost_spsc},
    {"threads, ring links", executor_kind::threads, 0, link_impl::ring},
};

// The routed program of a case: its script follows from the case seed.
test::routed_script routed_script_of(const test_case& c);

std::string describe(const test_case& c) {
    std::ostringstream os;
    os << "HCUBE_DIFF_CASE=0x" << std::hex << c.seed << std::dec << ": ";
    if (c.op == op_kind::catalog) {
        const run_params& p = c.catalog;
        os << "catalog " << p.op << " --algo " << p.algo << " --dim " << p.dim << " --words "
           << p.words << " --root " << p.root << " --shift " << p.shift << " --type "
           << to_string(p.type);
        for (const auto& [k, v] : p.options)
            os << " --" << k << " " << v;
    } else if (c.op == op_kind::routed_program) {
        os << name(c.op) << ", d = " << c.d << ", " << describe(routed_script_of(c))
           << ", again with " << alternates[c.alternate].name;
    } else {
        os << name(c.op) << " " << algorithms(c.op)[std::size_t(c.algo)] << ", d = " << c.d
           << ", m = " << c.m << ", root = " << c.root << ", " << name(c.elem);
        static const char* const rings[] = {"natural", "id", "gray"};
        if (c.op == op_kind::shift) os << ", q = " << c.q << ", ring " << rings[c.ring];
        if (c.op == op_kind::cm200_allgather || c.op == op_kind::cm200_reduce_scatter)
            os << ", order " << (c.gray_order ? "gray" : "binary") << ", index "
               << (c.index_motion ? "motion" : "computation");
    }
    os << ", " << to_string(c.ports) << ", link_capacity " << c.capacity << ", t_s " << c.cost.t_s
       << ", t_w " << c.cost.t_w << ", word_bytes " << c.cost.word_bytes;
    return os.str();
}

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

template <class T>
const T& pick(rng& g, const std::vector<T>& v) {
    return v[g() % v.size()];
}

int max_dim_drawn() {
    return test::sanitized ? 5 : 7;
}

// m: mostly tiny, sometimes around p, now and then larger; p * p * m (the
// alltoall's total) stays small.
std::size_t draw_m(rng& g, int d) {
    const std::size_t p = std::size_t{1} << d;
    std::size_t m = pick<std::size_t>(g, {0, 1, 1, 2, 3, p, p + 1, 2 * p - 1, g() % 64});
    while (m > 1 && p * p * m > (std::size_t{1} << 16))
        m /= 2;
    return m;
}

// Draws every parameter of a catalog case; false when the entry did not fit
// the parameters drawn within a few tries.
bool draw_catalog(rng& g, test_case& c, std::optional<std::size_t> entry) {
    const auto& entries = builtin_catalog().entries();
    const algorithm_entry& e = entries[entry.value_or(g() % entries.size())];
    for (int attempt = 0; attempt < 20; ++attempt) {
        // Half the attempts under the other port model: all-port-only entries.
        if (attempt % 2)
            c.ports =
                c.ports == port_model::all_port ? port_model::single_port : port_model::all_port;
        run_params p;
        p.op = e.op;
        p.algo = e.algo;
        p.dim = int(g() % unsigned(max_dim_drawn() + 1));
        const std::size_t pw = std::size_t{1} << p.dim;
        p.words = pick<std::size_t>(g, {1, 2, 3, 4, 8, 16, pw, 2 * pw, 1 + g() % 40});
        while (p.words > 1 && pw * pw * p.words > (std::size_t{1} << 16))
            p.words /= 2;
        p.root = int(g() % pw);
        p.shift = (long long)(g() % (4 * pw)) - (long long)(2 * pw);
        p.ports = c.ports;
        p.cost = c.cost;
        p.type = pick<elem_type>(g, {elem_type::int32, elem_type::int64, elem_type::float64});
        for (const option_spec& o : e.options)
            p.options[o.name] = pick(g, o.values);
        if (e.unfit(p).empty()) {
            c.catalog = p;
            c.d = p.dim;
            return true;
        }
    }
    return false;
}

// The sweep: every algorithm of every operation once (the explicit lists'
// pairs, then every catalog entry, all-port-only ones included), each with
// parameters drawn at random. A sweep case's seed carries its index, so it
// replays alone like any other.
struct sweep_item {
    op_kind op;
    int algo;                         // for an explicit operation
    std::optional<std::size_t> entry; // for op_kind::catalog
};
const std::vector<sweep_item>& sweep() {
    static const std::vector<sweep_item> items = [] {
        std::vector<sweep_item> v;
        for (int o = 0; o < int(op_kind::catalog); ++o)
            for (std::size_t a = 0; a < algorithms(op_kind(o)).size(); ++a)
                v.push_back({op_kind(o), int(a), std::nullopt});
        for (std::size_t e = 0; e < builtin_catalog().entries().size(); ++e)
            v.push_back({op_kind::catalog, 0, e});
        return v;
    }();
    return items;
}
constexpr std::uint64_t sweep_tag = 0xa5;
std::uint64_t sweep_seed(std::size_t index, std::uint64_t random) {
    return sweep_tag << 56 | std::uint64_t(index) << 40 | (random & ((std::uint64_t{1} << 40) - 1));
}
std::optional<sweep_item> sweep_item_of(std::uint64_t seed) {
    const std::size_t index = (seed >> 40) & 0xffff;
    if (seed >> 56 != sweep_tag || index >= sweep().size()) return std::nullopt;
    return sweep()[index];
}

// Whether v is what runs the cases by default (the variant's environment,
// HCUBE_EXECUTOR and HCUBE_LINKS): true only for threads with the same links,
// as the fibers' default worker count differs from every alternate's.
bool is_default(const run_variant& v) {
    config c = test::cfg(0);
    c.backend = backend_kind::in_process;
    static const run_report probe = machine(c).run([](node&) {});
    return v.executor == executor_kind::threads && probe.executor == executor_kind::threads &&
           v.links == probe.link_implementation;
}

std::optional<test_case> draw_case(std::uint64_t seed) {
    rng g(seed);
    test_case c;
    c.seed = seed;
    const std::optional<sweep_item> swept = sweep_item_of(seed);
    c.op = op_kind(g() % unsigned(op_kind::count));
    if (swept) c.op = swept->op;
    c.ports = g() % 2 ? port_model::all_port : port_model::single_port;
    c.capacity = pick<std::size_t>(g, {0, 1, 2, 16});
    c.cost.t_s = pick<double>(g, {0, 1, 2.5, 10});
    c.cost.t_w = pick<double>(g, {0, 0.5, 1, 3});
    c.cost.word_bytes = pick<std::size_t>(g, {0, 0, 8});
    if (c.op == op_kind::catalog) {
        if (!draw_catalog(g, c, swept ? swept->entry : std::nullopt)) return std::nullopt;
        return c;
    }
    if (c.op == op_kind::routed_program) { // d >= 1: a routed message goes to another node
        c.d = 1 + int(g() % unsigned(max_dim_drawn()));
        c.alternate = int(g() % std::size(alternates));
        if (is_default(alternates[c.alternate])) c.alternate = 0;
        return c;
    }
    c.elem = elem_kind(g() % unsigned(elem_kind::count));
    c.d = int(g() % unsigned(max_dim_drawn() + 1));
    c.algo = int(g() % algorithms(c.op).size());
    if (swept) c.algo = swept->algo;
    if (swept && c.op == op_kind::allgather && c.algo == 3) c.d &= ~1; // mesh: even d
    const int p = 1 << c.d;
    c.m = draw_m(g, c.d);
    c.root = int(g() % unsigned(p));
    c.q = (long long)(g() % unsigned(4 * p)) - 2 * p;
    c.ring = int(g() % 3);
    c.gray_order = g() % 2;
    c.index_motion = g() % 2;
    // Combinations the API refuses by contract, not by accident.
    if (c.op == op_kind::allgather && c.algo == 3 && c.d % 2 != 0) c.algo = 1; // mesh: even d
    if (c.op == op_kind::shift && (c.algo == 1 || c.algo == 2) && c.ring == 1) c.ring = 2;
    if ((c.op == op_kind::cm200_allgather || c.op == op_kind::cm200_reduce_scatter) && c.algo == 1)
        c.ports = port_model::all_port; // d-cycles are all-port only
    if ((c.op == op_kind::allgather || c.op == op_kind::allreduce) && c.algo == 4)
        c.ports = port_model::all_port; // so are the generic d_cycles
    return c;
}

// Algorithms that send before they receive (rings, Gray-code shifts, the
// CM-200 cycles under single-port) need links that buffer a message: with
// link_capacity 0 a deadlock report is the documented outcome. A catalog
// entry says itself (and is held to it, see run_case).
bool may_need_buffers(const test_case& c) {
    switch (c.op) {
    case op_kind::allgather: // not d_cycles (4): all-port posts a step's sends with its receives
        return c.algo == 0 || c.algo == 2 || c.algo == 3;
    case op_kind::reduce_scatter:
        return c.algo != 1;
    case op_kind::alltoall:
        return c.algo == 3;
    case op_kind::shift:
        return c.algo != 3;
    case op_kind::cm200_allgather:
    case op_kind::cm200_reduce_scatter:
        // Under all-port a step's sends are posted with its receives.
        return !port_policy_of(c.ports).several_links_at_once();
    case op_kind::catalog:
        return !buffered_links_need(*builtin_catalog().find(c.catalog.op, c.catalog.algo),
                                    c.catalog)
                    .empty();
    default:
        return false;
    }
}

// ---- serial references and the run -------------------------------------------

unsigned gray_code(unsigned r) {
    return r ^ (r >> 1);
}
unsigned gray_rank(unsigned g) { // the inverse of gray_code
    unsigned r = 0;
    for (; g; g >>= 1)
        r ^= g;
    return r;
}

// The CM-200's allocation of M elements over N ranks (Mathur & Johnsson 4.2.4):
// ceil(M/N) to each of the first floor(M / ceil(M/N)) ranks, the rest to the next.
std::pair<std::size_t, std::size_t> cm_block(std::size_t M, std::size_t N, std::size_t rank) {
    const std::size_t c = (M + N - 1) / N;
    if (c == 0) return {0, 0};
    const std::size_t full = M / c;
    if (rank < full) return {rank * c, c};
    if (rank == full) return {full * c, M - full * c};
    return {M, 0};
}

template <class T>
std::string show_mismatch(int node, const std::vector<T>& got, const std::vector<T>& want) {
    std::ostringstream os;
    os << "node " << node << ": ";
    if (got.size() != want.size()) {
        os << got.size() << " elements, expected " << want.size();
        return os.str();
    }
    const auto at =
        std::size_t(std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin());
    os << "element " << at << " is " << got[at] << ", expected " << want[at];
    return os.str();
}

// Runs a direct case on `mach`; returns what was wrong, or "" when every
// node's result (over MPI: of this rank's nodes) matches the reference, and
// sets the run's report.
template <class T, class Draw, class Op>
std::string run_direct(machine& mach, const test_case& c, rng& g, Draw draw, Op op,
                       run_report& report) {
    const int p = 1 << c.d;
    const std::size_t m = c.m, P = std::size_t(p);
    const bool per_dest =
        c.op == op_kind::reduce_scatter || c.op == op_kind::scatter || c.op == op_kind::alltoall;
    std::vector<std::vector<T>> in(P, std::vector<T>(per_dest ? P * m : m));
    for (auto& v : in)
        for (auto& x : v)
            x = draw(g);
    const auto fold = [&](auto element_of) { // element_of(k): node k's operand, in node order
        T acc = element_of(0);
        for (int k = 1; k < p; ++k)
            acc = op(acc, element_of(k));
        return acc;
    };
    const auto rank_of = [&](int node) {
        return c.gray_order ? int(gray_rank(unsigned(node))) : node;
    };
    const auto node_of = [&](int rank) {
        return c.gray_order ? int(gray_code(unsigned(rank))) : rank;
    };

    std::vector<std::vector<T>> out(P);
    const auto program = [&](node& me) {
        const int k = me.id();
        std::vector<T> v = in[std::size_t(k)], r;
        const std::span<const T> cv(v);
        const cm200::options cm{c.gray_order ? cm200::node_order::gray : cm200::node_order::binary,
                                c.index_motion ? cm200::index_mode::motion
                                               : cm200::index_mode::computation};
        switch (c.op) {
        case op_kind::broadcast:
            broadcast(me, std::span<T>(v), c.root, broadcast_algo(c.algo));
            r = v;
            break;
        case op_kind::reduce:
            reduce(me, std::span<T>(v), c.root, op, reduce_algo(c.algo));
            r = v;
            break;
        case op_kind::allreduce:
            allreduce(me, std::span<T>(v), op, allreduce_algo(c.algo));
            r = v;
            break;
        case op_kind::inclusive_scan:
            inclusive_scan(me, std::span<T>(v), op);
            r = v;
            break;
        case op_kind::exclusive_scan:
            exclusive_scan(me, std::span<T>(v), op);
            r = v;
            break;
        case op_kind::allgather:
            r.resize(P * m);
            allgather(me, cv, std::span<T>(r), allgather_algo(c.algo));
            break;
        case op_kind::reduce_scatter:
            r.resize(m);
            reduce_scatter(me, cv, std::span<T>(r), op, reduce_scatter_algo(c.algo));
            break;
        case op_kind::scatter:
            r.resize(m);
            scatter(me, cv, std::span<T>(r), c.root);
            break;
        case op_kind::gather:
            r.resize(k == c.root ? P * m : 0);
            gather(me, cv, std::span<T>(r), c.root);
            break;
        case op_kind::alltoall:
            r.resize(P * m);
            alltoall(me, cv, std::span<T>(r), alltoall_algo(c.algo));
            break;
        case op_kind::shift:
            r.resize(m);
            circular_shift(me, cv, std::span<T>(r), c.q, shift_algo(c.algo), shift_ring(c.ring));
            break;
        case op_kind::cm200_allgather:
            r.resize(P * m);
            cm200::allgather(me, cv, std::span<T>(r), cm200::allgather_algo(c.algo), cm);
            break;
        case op_kind::cm200_reduce_scatter: {
            r.resize(cm_block(m, P, std::size_t(rank_of(k))).second);
            cm200::reduce_scatter(me, cv, std::span<T>(r), op, cm200::reduce_scatter_algo(c.algo),
                                  cm);
            break;
        }
        default:
            break;
        }
        out[std::size_t(k)] = std::move(r);
    };
    report = mach.run(program);

    // The reference: what node k must hold, or nullopt where it is unspecified.
    const auto want = [&](int k) -> std::optional<std::vector<T>> {
        const auto K = std::size_t(k);
        std::vector<T> w;
        switch (c.op) {
        case op_kind::broadcast:
            return in[std::size_t(c.root)];
        case op_kind::reduce:
            if (k != c.root) return std::nullopt;
            [[fallthrough]];
        case op_kind::allreduce:
            for (std::size_t i = 0; i < m; ++i)
                w.push_back(fold([&](int j) { return in[std::size_t(j)][i]; }));
            return w;
        case op_kind::inclusive_scan:
        case op_kind::exclusive_scan: {
            const int last = c.op == op_kind::inclusive_scan ? k : k - 1;
            if (last < 0) return std::nullopt; // node 0's exclusive scan is unspecified
            for (std::size_t i = 0; i < m; ++i) {
                T acc = in[0][i];
                for (int j = 1; j <= last; ++j)
                    acc = op(acc, in[std::size_t(j)][i]);
                w.push_back(acc);
            }
            return w;
        }
        case op_kind::allgather:
            for (const auto& b : in)
                w.insert(w.end(), b.begin(), b.end());
            return w;
        case op_kind::reduce_scatter:
            for (std::size_t i = 0; i < m; ++i)
                w.push_back(fold([&](int j) { return in[std::size_t(j)][K * m + i]; }));
            return w;
        case op_kind::scatter:
            return std::vector<T>(in[std::size_t(c.root)].begin() + std::ptrdiff_t(K * m),
                                  in[std::size_t(c.root)].begin() + std::ptrdiff_t(K * m + m));
        case op_kind::gather:
            if (k != c.root) return std::nullopt;
            for (const auto& b : in)
                w.insert(w.end(), b.begin(), b.end());
            return w;
        case op_kind::alltoall: // block j came from node j, which meant it for node k
            for (std::size_t j = 0; j < P; ++j)
                w.insert(w.end(), in[j].begin() + std::ptrdiff_t(K * m),
                         in[j].begin() + std::ptrdiff_t(K * m + m));
            return w;
        case op_kind::shift: {
            // Natural ring: the Gray-code algorithms' own array, else node ids.
            const bool gray_ring = c.ring == 2 || (c.ring == 0 && (c.algo == 1 || c.algo == 2));
            const auto place = [&](long long r) {
                const auto pos = unsigned(((r % p) + p) % p);
                return gray_ring ? int(gray_code(pos)) : int(pos);
            };
            const long long pos = gray_ring ? gray_rank(unsigned(k)) : k;
            return in[std::size_t(place(pos - c.q))];
        }
        case op_kind::cm200_allgather: // blocks in rank order
            for (int r = 0; r < p; ++r)
                w.insert(w.end(), in[std::size_t(node_of(r))].begin(),
                         in[std::size_t(node_of(r))].end());
            return w;
        case op_kind::cm200_reduce_scatter: {
            const auto [begin, size] = cm_block(m, P, std::size_t(rank_of(k)));
            for (std::size_t i = begin; i < begin + size; ++i)
                w.push_back(fold([&](int r) { return in[std::size_t(node_of(r))][i]; }));
            return w;
        }
        default:
            return std::nullopt;
        }
    };
    for (int k = 0; k < p; ++k)
        if (const auto w = want(k); w && mach.is_local(k) && out[std::size_t(k)] != *w)
            return show_mismatch(k, out[std::size_t(k)], *w);
    return "";
}

test::routed_script routed_script_of(const test_case& c) {
    rng g(splitmix(c.seed)); // the inputs' stream, as for every case
    return test::draw_routed_script(g, c.d);
}

config case_config(const test_case& c, backend_kind backend) {
    config cfg = test::cfg(c.d, c.ports);
    cfg.cost = c.cost;
    cfg.link_capacity = c.capacity;
    cfg.deadlock_grace = std::chrono::milliseconds(20 * test::sanitizer_slowdown);
    cfg.backend = backend; // in process unless asked: HCUBE_BACKEND=mpi must not move these
    return cfg;
}

// Machines are expensive to start (2^d threads): one per (d, link capacity,
// backend), reused with the case's ports and cost.
machine& machine_for(const test_case& c, backend_kind backend = backend_kind::in_process) {
    static std::map<std::tuple<int, std::size_t, backend_kind>, std::unique_ptr<machine>> machines;
    auto& slot = machines[{c.d, c.capacity, backend}];
    if (!slot) slot = std::make_unique<machine>(case_config(c, backend));
    slot->set_ports(c.ports);
    slot->set_cost(c.cost);
    return *slot;
}

struct case_result {
    std::string failure; // empty when the case passed
    bool deadlocked = false;
    std::vector<double> node_time{}; // every node's final virtual time
    std::uint64_t fingerprint = 0;   // the report's: steps, traffic, congestion too
    // A routed program's: what every node took, in order (over MPI, this
    // rank's nodes only).
    std::vector<std::vector<test::taken>> taken{};
};

case_result run_routed(machine& mach, const test_case& c) {
    const test::routed_script sc = routed_script_of(c);
    case_result r;
    r.taken.resize(std::size_t(mach.size()));
    const run_report rep =
        mach.run([&](node& me) { test::run_routed_script(me, sc, r.taken[std::size_t(me.id())]); });
    for (int k = 0; k < mach.size() && r.failure.empty(); ++k)
        if (mach.is_local(k)) r.failure = test::check_routed_log(sc, k, r.taken[std::size_t(k)]);
    r.node_time = rep.node_time;
    r.fingerprint = rep.fingerprint();
    return r;
}

case_result run_case(const test_case& c, machine& mach) {
    rng g(splitmix(c.seed)); // the inputs' stream, apart from the parameters'
    try {
        if (c.op == op_kind::routed_program) return run_routed(mach, c);
        if (c.op == op_kind::catalog) {
            const algorithm_entry* e = builtin_catalog().find(c.catalog.op, c.catalog.algo);
            const run_outcome o = e->run(mach, c.catalog);
            if (!o.verified) return {"the catalog's check failed: " + o.note};
            // The entry's claim holds both ways: it deadlocks on unbuffered links
            // exactly when it says it needs buffered ones.
            if (const std::string need = buffered_links_need(*e, c.catalog);
                c.capacity == 0 && !need.empty())
                return {"completed on unbuffered links, but the catalog says: " + need};
            return {"", false, o.report.node_time, o.report.fingerprint()};
        }
        case_result r;
        run_report report;
        with_elements(c.elem, [&](auto draw, auto op) {
            using T = decltype(draw(g));
            r.failure = run_direct<T>(mach, c, g, draw, op, report);
            return true;
        });
        r.node_time = report.node_time;
        r.fingerprint = report.fingerprint();
        return r;
    } catch (const deadlock_error& e) {
        if (c.capacity == 0 && may_need_buffers(c)) return {"", true};
        return {std::string("deadlock: ") + e.what()};
    } catch (const std::exception& e) {
        return {std::string("threw: ") + e.what()};
    }
}

// What differs between two runs of one case on `second` (the program alone
// decides virtual time, choices and traffic), or "".
std::string differences(const case_result& first, const case_result& again, const machine& second,
                        const std::string& what) {
    std::ostringstream os;
    for (std::size_t k = 0; k < first.node_time.size() && k < again.node_time.size(); ++k)
        if (first.node_time[k] != again.node_time[k]) {
            os << "virtual time differs " << what << ": node " << k << " ended at "
               << first.node_time[k] << ", then at " << again.node_time[k];
            return os.str();
        }
    for (std::size_t k = 0; k < first.taken.size() && k < again.taken.size(); ++k) {
        if (!second.is_local(int(k))) continue;
        const auto& a = first.taken[k];
        const auto& b = again.taken[k];
        for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
            if (a[i].source != b[i].source) {
                os << "node " << k << " chose otherwise " << what << ": its message " << i
                   << " came from node " << a[i].source << ", then from node " << b[i].source;
                return os.str();
            }
    }
    if (first.node_time.size() != again.node_time.size() || first.fingerprint != again.fingerprint)
        return "the report's steps, traffic or congestion differ " + what + " (its fingerprint)";
    return "";
}

// Runs the case, then again where it must give the same: one case in four on
// the same machine, a routed program under an alternate executor or links,
// every case over the MPI job's ranks when `mpi`.
case_result check_case(const test_case& c, bool mpi) {
    case_result first = run_case(c, machine_for(c));
    if (!first.failure.empty() || first.deadlocked) return first;
    const auto versus = [&](machine& second, const std::string& what) -> std::string {
        const case_result again = run_case(c, second);
        if (again.deadlocked) return what + ": deadlock";
        if (!again.failure.empty()) return what + ": " + again.failure;
        return differences(first, again, second, what);
    };
    std::string wrong;
    if (c.seed % 4 == 0) wrong = versus(machine_for(c), "in the second run");
    if (wrong.empty() && c.op == op_kind::routed_program && !mpi) {
        const run_variant& v = alternates[c.alternate];
        config cfg = case_config(c, backend_kind::in_process);
        cfg.executor = v.executor;
        cfg.workers = v.workers;
        cfg.links = v.links;
        machine other(cfg);
        wrong = versus(other, std::string("under ") + v.name);
    }
    if (wrong.empty() && mpi) wrong = versus(machine_for(c, backend_kind::mpi), "over MPI");
    if (!wrong.empty()) return {wrong};
    return first;
}

std::optional<std::uint64_t> env_number(const char* name) {
    const char* s = std::getenv(name);
    if (!s || !*s) return std::nullopt;
    return std::strtoull(s, nullptr, 0);
}

// The default seed: fixed, so CI is repeatable, but its own for each variant
// (tests/meson.build: HCUBE_EXECUTOR, HCUBE_LINKS), so the variants do not
// replay one another's cases.
std::uint64_t variant_seed() {
    std::uint64_t seed = 20260409;
    for (const char* name : {"HCUBE_EXECUTOR", "HCUBE_LINKS"})
        if (const char* v = std::getenv(name))
            for (const char* ch = v; *ch; ++ch)
                seed = seed * 31 + std::uint64_t(*ch);
    return seed;
}

// HCUBE_BACKEND=mpi: the run is one of an MPI job's ranks.
bool over_mpi() {
    const char* b = std::getenv("HCUBE_BACKEND");
    return b && std::string(b) == "mpi";
}

// Over MPI the cases stop at d = 4, so that a run takes seconds: the ranks
// share the machine's cores, and every choice among sources waits for the
// whole job to go idle (docs/mpi.md).
constexpr int mpi_max_dim = 4;

} // namespace

TEST_CASE("random differential test of the collectives against serial references") {
    const bool mpi = over_mpi();
    if (const auto one = env_number("HCUBE_DIFF_CASE")) {
        const auto c = draw_case(*one);
        REQUIRE_MESSAGE(c, "case seed " << *one << " draws a catalog case that fits nothing");
        MESSAGE(describe(*c));
        const case_result r = check_case(*c, mpi);
        CHECK_MESSAGE(r.failure.empty(), describe(*c) << "\n  " << r.failure);
        return;
    }
    const std::uint64_t seed = env_number("HCUBE_DIFF_SEED").value_or(variant_seed());
    const double seconds =
        double(env_number("HCUBE_DIFF_SECONDS").value_or(test::sanitized ? 20 : 60));
    test::extend_deadline(seconds + 120); // the budget, then the case that ends it
    // Over MPI every rank must run the same cases: they stop together (a
    // collective over the job), and the sweep is left to the in-process runs
    // (tests/mpi runs every catalog entry over the ranks).
    std::unique_ptr<machine> job;
    if (mpi) {
        config c = test::cfg(3);
        c.backend = backend_kind::mpi;
        job = std::make_unique<machine>(c);
    }
    const std::uint64_t sweep_cases = mpi ? 0 : sweep().size();
    MESSAGE("HCUBE_DIFF_SEED=" << seed << " (" << sweep_cases << " sweep cases, then random ones"
                               << std::string(mpi ? ", each also over MPI" : "") << ")");
    const auto t0 = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    long cases = 0, deadlocks = 0, unfit = 0, failures = 0, skipped = 0;
    std::map<std::string, long> per_op;
    const auto go_on = [&](std::uint64_t i) {
        const bool more = (i < sweep_cases || elapsed() < seconds) && failures < 5;
        return mpi ? job->on_every_rank(more) : more;
    };
    // The sweep runs whatever the budget: every algorithm, every run.
    for (std::uint64_t i = 0; go_on(i); ++i) {
        const auto c =
            draw_case(i < sweep_cases ? sweep_seed(i, splitmix(seed + i)) : splitmix(seed + i));
        if (!c) {
            ++unfit;
            if (i < sweep_cases)
                FAIL_CHECK("sweep case " << i << " draws parameters its algorithm refuses");
            continue;
        }
        if (mpi && ((1 << c->d) < job->ranks() || c->d > mpi_max_dim)) {
            ++skipped;
            continue;
        }
        const case_result r = check_case(*c, mpi);
        ++cases;
        ++per_op[c->op == op_kind::catalog ? "catalog " + c->catalog.op : name(c->op)];
        if (r.deadlocked) ++deadlocks;
        if (!r.failure.empty()) {
            ++failures;
            FAIL_CHECK("HCUBE_DIFF_SEED=" << seed << ", case " << i << ": " << describe(*c)
                                          << "\n  " << r.failure);
        }
    }
    std::ostringstream counts;
    for (const auto& [op, n] : per_op)
        counts << "\n  " << op << ": " << n;
    MESSAGE("HCUBE_DIFF_SEED=" << seed << ": " << cases << " cases in " << elapsed() << " s ("
                               << deadlocks << " deadlocked as documented on unbuffered links, "
                               << unfit << " catalog draws fit nothing"
                               << (mpi ? ", " + std::to_string(skipped) +
                                             " with fewer nodes than ranks or d > " +
                                             std::to_string(mpi_max_dim)
                                       : "")
                               << ")" << counts.str());
    CHECK(cases > 0);
}
