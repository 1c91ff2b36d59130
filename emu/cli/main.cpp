// hcube: the command-line face of the emulator.
#include <iostream>
#include <string_view>
#include <vector>

#include "commands.hpp"

namespace {

constexpr std::string_view usage = R"(usage: hcube COMMAND [options]

commands:
  info --dim D            nodes, links, memory, whether this system can start it,
                          and the Gray code of a D-cube
  list                    every operation with its algorithms and seed formulas
  run OP --algo NAME ...  run a collective, verify it, print cost next to its formula
                          (hcube run --help for the options; --trace, --svg draw it)
  draw OP --algo NAME ... --out FILE.html
                          every step of a collective drawn as the seeds draw it
)";

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << usage;
        return args.empty() ? 2 : 0;
    }
    const std::string_view cmd = args[0];
    const hcube::cli::args rest(args.data() + 1, args.size() - 1);
    try {
        if (cmd == "info") return hcube::cli::info(rest);
        if (cmd == "list") return hcube::cli::list(rest);
        if (cmd == "run") return hcube::cli::run(rest);
        if (cmd == "draw") return hcube::cli::draw(rest);
    } catch (const std::exception& e) {
        std::cerr << "hcube " << cmd << ": " << e.what() << '\n';
        return 1;
    }
    std::cerr << "hcube: unknown command '" << cmd << "' (try hcube --help)\n";
    return 2;
}
