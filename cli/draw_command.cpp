// hcube draw OP ...: every step of a collective drawn as the sources draw it
// (hcube_draw's record_steps, write_steps_html, step_svgs), or the wait-for
// graph when the run deadlocks.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <hcube/args.hpp>
#include <hcube/draw.hpp>
#include <hcube/driver/catalog.hpp>
#include <hcube/error.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "output.hpp"

namespace hcube::cli {

namespace {

struct draw_command {
    run_params params;
    std::string out, svg_dir;
};

std::string in_dir(const std::string& dir, const std::string& name) {
    return (std::filesystem::path(dir) / name).string();
}

int draw(draw_command& c) {
    run_params& p = c.params;
    if (c.out.empty() && c.svg_dir.empty())
        throw usage_error("give --out FILE.html and/or --svg-dir DIR");
    // Where the pictures go is checked before the run: a bad path is a usage
    // error, found at once.
    std::ofstream page;
    if (!c.out.empty()) page = open_output(c.out);
    if (!c.svg_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(c.svg_dir, ec);
        if (ec) throw usage_error("cannot create --svg-dir " + c.svg_dir + ": " + ec.message());
    }
    algorithm_steps s;
    try {
        s = record_steps(p);
    } catch (const deadlock_error& d) {
        p.algo = resolve_algorithm(p).algo;
        fmt::print(stderr, "hcube draw: {}\n", d.what());
        if (!c.out.empty()) write_wait_for_html(d, p, page);
        if (!c.svg_dir.empty())
            open_output(in_dir(c.svg_dir, "wait-for.svg")) << wait_for_svg(d, p.dim);
        fmt::print(stderr, "hcube draw: drew the wait-for graph\n");
        return exit_failed;
    }
    if (!c.out.empty()) write_steps_html(s, page);
    if (!c.svg_dir.empty()) {
        const auto svgs = step_svgs(s);
        for (std::size_t k = 0; k < svgs.size(); ++k)
            open_output(in_dir(c.svg_dir, fmt::format("step-{}.svg", k))) << svgs[k];
    }
    fmt::print("{}: {} steps drawn\n", s.title, s.steps.size() - 1);
    return exit_ok;
}

// The entry's drawn_words at p's dimension; under auto, the one every
// algorithm of the operation has (descend's); none where there is none.
std::optional<std::size_t> drawn_words(const run_params& p) {
    const catalog& cat = builtin_catalog();
    std::vector<const algorithm_entry*> entries = cat.algorithms(p.op);
    if (p.algo != "auto") entries = {cat.find(p.op, p.algo)};
    if (entries.empty() ||
        std::any_of(entries.begin(), entries.end(),
                    [](const algorithm_entry* e) { return !e || !e->drawn_words; }))
        return std::nullopt;
    return entries.front()->drawn_words(p.dim);
}

// The port model an algorithm is drawn in when --ports is not given: p's
// (single), or all where the algorithm runs only on several links at once
// (d-cycles, the rotated trees), so that its defaults draw what it is for.
port_model default_ports(run_params p) {
    const algorithm_entry& e = resolve_algorithm(p);
    for (const auto& o : e.options)
        p.options.try_emplace(o.name, o.fallback);
    run_params all = p;
    all.ports = port_model::all_port;
    return !e.unfit(p).empty() && e.unfit(all).empty() ? all.ports : p.ports;
}

} // namespace

action add_draw(CLI::App& hcube) {
    CLI::App& app = *hcube.add_subcommand(
        "draw", "Runs one collective on symbolic data (up to d = 6) and draws every step as the "
                "sources draw it: the hypercube, the links each step uses with what they carry, "
                "every node labelled with what it holds after the step, read from the run's "
                "buffers ((0,1,2,3) blocks, [0..3] partial sums); the CM-200 cycle algorithms "
                "also get the memory table of every node (Mathur & Johnsson Figures 8-11).");
    auto c = std::make_shared<draw_command>();
    run_params& p = c->params;
    p.algo = "auto";
    app.add_option("OP", p.op, "an operation of `hcube list`")->type_name("");
    add_value(
        app, "--algo", [&p](const std::string& v) { p.algo = v; },
        "an algorithm of OP, or auto (default)");
    add_machine_options(app, p);
    app.remove_option(app.get_option("--dim"));
    add_number(app, "--dim", p.dim, 0, max_drawn_dim,
               "an integer in 0.." + std::to_string(max_drawn_dim),
               fmt::format("hypercube dimension (default 4: 16 nodes), up to {} ({} nodes): "
                           "more would be too many to read",
                           max_drawn_dim, 1 << max_drawn_dim))
        ->type_name("D");
    add_data_options(app, p);
    add_value(
        app, "--out", [c](const std::string& v) { c->out = v; },
        "the page: one self-contained HTML file with previous/next, a slider and the "
        "arrow keys");
    add_value(
        app, "--svg-dir", [c](const std::string& v) { c->svg_dir = v; },
        "also one SVG per step, DIR/step-K.svg");
    add_catalog_options(app, builtin_catalog(), p);
    app.footer("--words defaults to 1, for d-cycles to d (a word on each of the d cycles; p d "
               "for allreduce, whose p blocks each go around them), and "
               "for descend to N = 2^d (one element a node). --ports defaults to single, for "
               "an algorithm that runs only on several links at once (d-cycles, the rotated "
               "trees) to all. "
               "A drawing whose memory estimate exceeds this computer's physical memory (or its "
               "address-space limit) is refused.\nA run that deadlocks draws the wait-for graph "
               "of the deadlock report instead (exit status 1).");
    return [c, &app] {
        if (c->params.op.empty()) throw usage_error("missing operation (hcube draw --help)");
        if (app.count("--words") == 0)
            if (const auto words = drawn_words(c->params)) c->params.words = *words;
        if (c->params.algo != "auto" && app.count("--ports") == 0)
            c->params.ports = default_ports(c->params);
        return draw(*c);
    };
}

} // namespace hcube::cli
