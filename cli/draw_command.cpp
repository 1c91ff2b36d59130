// hcube draw OP ...: every step of a collective drawn as the seeds draw it
// (hcube_draw's record_steps, write_steps_html, step_svgs), or the wait-for
// graph when the run deadlocks.
#include <filesystem>
#include <memory>
#include <string>

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
    std::filesystem::create_directories(dir);
    return (std::filesystem::path(dir) / name).string();
}

int draw(draw_command& c) {
    run_params& p = c.params;
    if (c.out.empty() && c.svg_dir.empty())
        throw usage_error("give --out FILE.html and/or --svg-dir DIR");
    algorithm_steps s;
    try {
        s = record_steps(p);
    } catch (const deadlock_error& d) {
        p.algo = resolve_algorithm(p).algo;
        fmt::print(stderr, "hcube draw: {}\n", d.what());
        if (!c.out.empty()) {
            std::ofstream f = open_output(c.out);
            write_wait_for_html(d, p, f);
        }
        if (!c.svg_dir.empty())
            open_output(in_dir(c.svg_dir, "wait-for.svg")) << wait_for_svg(d, p.dim);
        fmt::print(stderr, "hcube draw: drew the wait-for graph\n");
        return exit_failed;
    }
    if (!c.out.empty()) {
        std::ofstream f = open_output(c.out);
        write_steps_html(s, f);
    }
    if (!c.svg_dir.empty()) {
        const auto svgs = step_svgs(s);
        for (std::size_t k = 0; k < svgs.size(); ++k)
            open_output(in_dir(c.svg_dir, fmt::format("step-{}.svg", k))) << svgs[k];
    }
    fmt::print("{}: {} steps drawn\n", s.title, s.steps.size() - 1);
    return exit_ok;
}

} // namespace

action add_draw(CLI::App& hcube) {
    CLI::App& app = *hcube.add_subcommand(
        "draw", "Runs one collective on symbolic data (up to d = 6) and draws every step as the "
                "seeds draw it: the hypercube, the links each step uses with what they carry, "
                "every node labelled with what it holds after the step, read from the run's "
                "buffers ((0,1,2,3) blocks, [0..3] partial sums); the CM-200 cycle algorithms "
                "also get the memory table of every node (seed 002, Figures 8-11).");
    auto c = std::make_shared<draw_command>();
    run_params& p = c->params;
    p.algo = "auto";
    app.add_option("OP", p.op, "an operation of `hcube list`")->type_name("");
    add_value(
        app, "--algo", [&p](const std::string& v) { p.algo = v; },
        "an algorithm of OP, or auto (default)");
    add_machine_options(app, p);
    add_data_options(app, p);
    add_value(
        app, "--out", [c](const std::string& v) { c->out = v; },
        "the page: one self-contained HTML file with previous/next, a slider and the "
        "arrow keys");
    add_value(
        app, "--svg-dir", [c](const std::string& v) { c->svg_dir = v; },
        "also one SVG per step, DIR/step-K.svg");
    add_catalog_options(app, builtin_catalog(), p);
    app.footer("A run that deadlocks draws the wait-for graph of the deadlock report instead "
               "(exit status 1).");
    return [c] {
        if (c->params.op.empty()) throw usage_error("missing operation (hcube draw --help)");
        return draw(*c);
    };
}

} // namespace hcube::cli
