#include "options.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <hcube/args.hpp>

namespace hcube::cli {

namespace {

// A choice among the values of an enum, named by to_string.
template <class E, std::size_t N>
void add_enum_choice(CLI::App& app, const std::string& flag, std::array<E, N> values, E& target,
                     const std::string& help) {
    std::vector<std::string> names;
    for (const E v : values)
        names.emplace_back(to_string(v));
    add_choice(
        app, flag, names, [&target, values](std::size_t i) { target = values[i]; }, help);
}

// "16 with threads, 18 with fibers".
std::string dim_limits() {
    std::vector<std::string> limits;
    for (const executor_policy& e : executor_policies)
        limits.push_back(fmt::format("{} with {}", e.dim_limit, e.name));
    return fmt::format("{}", fmt::join(limits, ", "));
}

} // namespace

void add_machine_options(CLI::App& app, run_params& p) {
    add_number(app, "--dim", p.dim, 0, max_dim, "an integer in 0.." + std::to_string(max_dim),
               fmt::format("hypercube dimension (default 4: 16 nodes), one thread or fiber per "
                           "node: up to {}; hcube info --dim D says whether a D-cube can start "
                           "here",
                           dim_limits()));
    std::vector<std::string> models;
    for (const port_policy& m : port_policies)
        models.emplace_back(m.option);
    add_choice(
        app, "--ports", models, [&p](std::size_t i) { p.ports = port_policies[i].model; },
        "port model: single (default, the textbook's: one send and one receive at a time per "
        "node) or all (every link at once)");
    const double huge = std::numeric_limits<double>::max();
    add_number(app, "--ts", p.cost.t_s, 0.0, huge, "a finite number >= 0",
               "start-up time t_s of the cost model t_s + t_w m (default 1)");
    add_number(app, "--tw", p.cost.t_w, 0.0, huge, "a finite number >= 0",
               "per-word time t_w (default 0: virtual time counts steps, so --words changes "
               "nothing until --tw is given)");
    add_number(app, "--link-capacity", p.link_capacity, std::size_t{0}, max_link_capacity,
               "an integer in 0.." + std::to_string(max_link_capacity),
               "messages a link buffers (default 16); 0 makes every send synchronous, which "
               "deadlocks the algorithms that need buffered links (hcube list marks them)");
    std::vector<std::string> links, link_help;
    for (const link_policy& l : link_policies) {
        links.emplace_back(l.name);
        link_help.push_back(fmt::format("{} ({})", l.name, l.about));
    }
    add_choice(
        app, "--links", links, [&p](std::size_t i) { p.links = link_policies[i].impl; },
        fmt::format("link implementation: {}; without it, HCUBE_LINKS if set. Results and "
                    "virtual times are the same, wall time differs",
                    fmt::join(link_help, " or ")));
    std::vector<std::string> executors, executor_help;
    for (const executor_policy& e : executor_policies) {
        executors.emplace_back(e.name);
        executor_help.push_back(fmt::format("{} ({}{})", e.name, e.about,
                                            &e == &executor_policies[0] ? ", the default" : ""));
    }
    add_choice(
        app, "--executor", executors,
        [&p](std::size_t i) { p.executor = executor_policies[i].kind; },
        fmt::format("what runs the nodes: {}; without it, HCUBE_EXECUTOR if set. Results and "
                    "virtual times are the same",
                    fmt::join(executor_help, " or ")));
    add_enum_choice(app, "--backend", std::array{backend_kind::in_process, backend_kind::mpi},
                    p.backend,
                    "where the nodes run: in-process (the default) or mpi (spread over the ranks "
                    "of `mpirun -np R`, a subcube each; rank 0 prints); without it, HCUBE_BACKEND "
                    "if set. Results and virtual times are the same");
    add_number(app, "--workers", p.workers, 1, max_workers,
               "an integer in 1.." + std::to_string(max_workers),
               "fibers only: worker OS threads that run the nodes (default: one per usable CPU, "
               "at most p); an error with threads");
    add_number(app, "--stack-bytes", p.stack_bytes, min_stack_bytes, max_stack_bytes,
               fmt::format("an integer in {}..{}", min_stack_bytes, max_stack_bytes),
               fmt::format("fibers only: each node's stack, rounded up to pages (default {} "
                           "KiB; address space, touched only as deep as the program goes); an "
                           "error with threads",
                           default_stack_bytes >> 10));
    for (const auto& [flag, shown] : {std::pair{"--dim", "D"},
                                      {"--ts", "X"},
                                      {"--tw", "Y"},
                                      {"--link-capacity", "C"},
                                      {"--workers", "W"},
                                      {"--stack-bytes", "B"}})
        app.get_option(flag)->type_name(shown);
}

void add_data_options(CLI::App& app, run_params& p) {
    add_number(app, "--words", p.words, std::size_t{0}, std::size_t{1} << 40,
               "a non-negative integer",
               "the textbook's m (default 1): the whole message (broadcast, reduce, allreduce, "
               "scans), each node's contribution (allgather, gather), each result block "
               "(reduce-scatter, scatter), each personalized message (alltoall), the packet "
               "(shift)");
    add_choice(
        app, "--type", {"int32", "int64", "double"},
        [&p](std::size_t i) {
            p.type = std::array{elem_type::int32, elem_type::int64, elem_type::float64}[i];
        },
        "element type (default int32)");
    add_number(app, "--root", p.root, 0, std::numeric_limits<int>::max(), "a node id >= 0",
               "root node of rooted operations (default 0)");
    add_number(app, "--shift", p.shift, std::numeric_limits<long long>::min(),
               std::numeric_limits<long long>::max(), "an integer",
               "the shift's q, any integer, taken mod p (default 1)");
    for (const auto& [flag, shown] : {std::pair{"--words", "M"}, {"--root", "R"}, {"--shift", "Q"}})
        app.get_option(flag)->type_name(shown);
}

void add_catalog_options(CLI::App& app, const catalog& c, run_params& p) {
    // One option per name; its help says, per distinct (values, help), which
    // algorithms declare it and with which default.
    struct use {
        std::string values, help;
        std::vector<std::string> algos; // "op algo (default x)"
    };
    std::map<std::string, std::vector<use>> uses;
    std::vector<std::string> order;
    for (const algorithm_entry& e : c.entries())
        for (const option_spec& o : e.options) {
            if (!uses.contains(o.name)) order.push_back(o.name);
            const std::string values = fmt::format("{}", fmt::join(o.values, "|"));
            auto& list = uses[o.name];
            auto it = std::find_if(list.begin(), list.end(), [&](const use& u) {
                return u.values == values && u.help == o.help;
            });
            if (it == list.end()) it = list.insert(list.end(), {values, o.help, {}});
            it->algos.push_back(fmt::format("{} {} (default {})", e.op, e.algo, o.fallback));
        }
    for (const std::string& name : order) {
        std::vector<std::string> help;
        for (const use& u : uses[name])
            help.push_back(
                fmt::format("{}: {}; for {}", u.values, u.help, fmt::join(u.algos, ", ")));
        if (!app.get_option_no_throw("--" + name))
            add_value(
                app, "--" + name, [&p, name](const std::string& v) { p.options[name] = v; },
                fmt::format("{}", fmt::join(help, ". ")))
                ->type_name("VALUE");
    }
}

void add_timing_options(CLI::App& app, timing_params& t, const std::string& repeated) {
    add_number(app, "--iterations", t.iterations, 1L, 1L << 30, "an integer in 1..2^30",
               "repetitions per sample (" + repeated + "); default: as many as fill --seconds")
        ->type_name("N");
    add_number(app, "--seconds", t.seconds, 1e-6, 60.0, "a number of seconds in 1e-06..60",
               "time per size for the samples when --iterations is not given (default 0.1)")
        ->type_name("S");
    add_number(app, "--samples", t.samples, 1, 101, "an integer in 1..101",
               "samples per size, median, min and max taken (default 5)")
        ->type_name("N");
}

void check_timing(const timing_params& t) {
    if (t.iterations > 0 && t.seconds > 0)
        throw usage_error("give --iterations or --seconds, not both");
}

} // namespace hcube::cli
