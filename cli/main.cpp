// hcube: the command-line face of the emulator.
#include <algorithm>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <hcube/args.hpp>
#include <hcube/error.hpp>
#include <hcube/machine.hpp>

#include "commands.hpp"
#include "launcher.hpp"
#include "output.hpp"

int main(int argc, char** argv) {
    using namespace hcube::cli;
    hcube::keep_freed_memory(); // timings without page faults of recycled buffers
    CLI::App app{"hcube: an emulated distributed-memory hypercube, its collectives and their "
                 "source formulas",
                 "hcube"};
    app.require_subcommand(1);
    app.footer("hcube COMMAND --help shows the options of a command.\nExit status: 0 success, "
               "1 a run that failed or did not verify, 2 a usage error.");
    // One command a line, so that a new one is a one-line change.
    // clang-format off
    const std::map<std::string, action> actions = {
        {"info", add_info(app)},
        {"list", add_list(app)},
        {"run", add_run(app)},
        {"draw", add_draw(app)},
        {"bench", add_bench(app)},
        {"calibrate", add_calibrate(app)},
    };
    // clang-format on
    // No command: the overview, as a usage error; "help" is --help.
    if (argc < 2) {
        std::cout << app.help();
        return exit_usage;
    }
    if (std::string(argv[1]) == "help") {
        std::cout << app.help();
        return exit_ok;
    }
    if (argv[1][0] != '-' && !actions.contains(argv[1])) {
        std::vector<std::string> names;
        for (const auto& [name, a] : actions)
            names.push_back(name);
        std::string what = std::string("unknown command '") + argv[1] + "'";
        if (const std::string c = closest(argv[1], names); !c.empty())
            what += " (did you mean " + c + "?)";
        if (launched_rank() != 0) return exit_ok; // rank 0 tells, with the status (below)
        std::cerr << "hcube: " << what << " (try hcube --help)\n";
        return exit_usage;
    }
    for (CLI::App* sub : app.get_subcommands({}))
        prepare(*sub);

    // "hcube run: ...": the command whose line had the error.
    const auto who = [&] {
        const auto subs = app.get_subcommands();
        if (!subs.empty()) return "hcube " + subs.front()->get_name();
        return actions.contains(argv[1]) ? std::string("hcube ") + argv[1] : std::string("hcube");
    };
    // One line on stderr; with --json also the error as JSON on stdout, for
    // scripts that read only stdout. Under a launcher every process reads the
    // same command line, and a failed run fails on every rank with the same
    // run_error: rank 0 alone tells of those. A usage error may come before
    // MPI starts, when nothing holds the other ranks back, and one that
    // exited with a failure first would have mpirun kill rank 0 before it
    // told: they exit quietly and leave the job's status to rank 0.
    const bool json = std::any_of(argv + 1, argv + argc,
                                  [](const char* a) { return std::string_view(a) == "--json"; });
    const auto fail = [&](const std::string& what, exit_status status, bool every_rank = true) {
        if (every_rank && launched_rank() != 0) return status == exit_usage ? exit_ok : status;
        std::cerr << who() << ": " << what << '\n';
        if (json) print_json_error(who(), what, status);
        return status;
    };
    try {
        check_arguments(argc, argv);
        app.parse(argc, argv);
        CLI::App& sub = *app.get_subcommands().front();
        check_parsed(sub);
        return actions.at(sub.get_name())();
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return fail(message(e), exit_usage);
    } catch (const hcube::usage_error& e) {
        return fail(e.what(), exit_usage);
    } catch (const hcube::run_error& e) {
        return fail(e.what(), exit_failed);
    } catch (const std::exception& e) {
        return fail(e.what(), exit_failed, false);
    }
}
