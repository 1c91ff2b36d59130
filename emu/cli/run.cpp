// hcube run OP ... and hcube list: every catalog algorithm from the command
// line, verified against its serial reference, its virtual time printed next to
// the seed's formula (docs/cli.md).
//
// Exit status: 0 verified, 1 not verified (or the run failed), 2 usage error
// (unknown op or algorithm, an algorithm that does not fit, a bad number); a
// usage error prints one line on stderr.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <hcube/catalog.hpp>
#include <hcube/error.hpp>

#include "commands.hpp"

namespace hcube::cli {

namespace {

constexpr std::string_view run_usage =
    R"(usage: hcube run OP [--algo NAME] [--dim D] [--words M] [--root R] [--shift Q]
                  [--ports all|single] [--ts X] [--tw Y] [--type int32|int64|double]
                  [--json] [--NAME VALUE ...]

Runs one collective on an emulated D-cube, checks the result against a serial
reference and prints the virtual time next to the seed's formula.

  OP              an operation of `hcube list`
  --algo NAME     an algorithm of OP, or auto (default): the fitting algorithm
                  whose formula is cheapest for these parameters
                  (--schedule NAME says the same, e.g. descend's direct|pipelined)
  --dim D         hypercube dimension, 0..16 (default 4: 16 nodes)
  --words M       the textbook's m (default 1): the whole message (broadcast,
                  reduce, allreduce, scans), each node's contribution (allgather,
                  gather), each result block (reduce-scatter, scatter), each
                  personalized message (alltoall), the packet (shift)
  --root R        root node of rooted operations (default 0)
  --shift Q       the shift's q, any integer, taken mod p (default 1)
  --ports P       single (default, the textbook's model) or all
  --ts X, --tw Y  cost model t_s + t_w m (defaults 1 and 0: time counts steps)
  --type T        element type int32 (default), int64 or double
  --json          one JSON object instead of text
  --NAME VALUE    an option the algorithm declares (hcube list shows them)

Exit status: 0 verified, 1 verification failed, 2 usage error.
)";

// One clear line on stderr and status 2.
int usage_failure(const std::string& what) {
    std::cerr << "hcube run: " << what << '\n';
    return 2;
}

template <class T>
T parse_number(std::string_view flag, std::string_view text, T lo, T hi, const char* expected) {
    T v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const std::string shown = std::string(flag) + " '" + std::string(text) + "'";
    if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
        throw usage_error(shown + " is not " + expected);
    if (ec == std::errc::result_out_of_range || v < lo || v > hi || v != v)
        throw usage_error(shown + " is out of range (expected " + expected + ")");
    return v;
}

struct command {
    run_params params;
    bool json = false;
    bool help = false;
};

command parse(args a) {
    command c;
    run_params& p = c.params;
    p.algo = "auto";
    p.type = elem_type::int32;
    std::map<std::string, std::string, std::less<>> seen;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string_view arg = a[i];
        if (arg == "--help" || arg == "-h") {
            c.help = true;
            continue;
        }
        if (arg == "--json") {
            c.json = true;
            continue;
        }
        if (!arg.starts_with("--")) {
            if (!p.op.empty())
                throw usage_error("unexpected argument '" + std::string(arg) + "' (operation is " +
                                  p.op + ")");
            p.op = arg;
            continue;
        }
        std::string name(arg.substr(2)), value;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
        } else if (i + 1 < a.size()) {
            value = a[++i];
        } else {
            throw usage_error("--" + name + " needs a value");
        }
        if (name.empty()) throw usage_error("empty option name in '" + std::string(arg) + "'");
        if (!seen.emplace(name, value).second) throw usage_error("--" + name + " given twice");
        const std::string flag = "--" + name;
        if (name == "algo" || name == "schedule") {
            // --schedule names descend's algorithm (seed 001 speaks of schedules).
            if (seen.contains("algo") && seen.contains("schedule"))
                throw usage_error("--algo and --schedule name the same choice; give one");
            p.algo = value;
        } else if (name == "dim") {
            p.dim = parse_number<int>(flag, value, 0, max_dim, "an integer in 0..16");
        } else if (name == "words") {
            p.words = parse_number<std::size_t>(flag, value, 0, std::size_t{1} << 40,
                                                "a non-negative integer");
        } else if (name == "root") {
            p.root = parse_number<int>(flag, value, 0, std::numeric_limits<int>::max(),
                                       "a node id >= 0");
        } else if (name == "shift") {
            p.shift = parse_number<long long>(flag, value, std::numeric_limits<long long>::min(),
                                              std::numeric_limits<long long>::max(), "an integer");
        } else if (name == "ts" || name == "tw") {
            (name == "ts" ? p.cost.t_s : p.cost.t_w) = parse_number<double>(
                flag, value, 0, std::numeric_limits<double>::max(), "a finite number >= 0");
        } else if (name == "ports") {
            if (value != "all" && value != "single")
                throw usage_error("--ports '" + value + "' is not all or single");
            p.ports = value == "all" ? port_model::all_port : port_model::single_port;
        } else if (name == "type") {
            const auto t = parse_elem_type(value);
            if (!t) throw usage_error("--type '" + value + "' is not int32, int64 or double");
            p.type = *t;
        } else {
            p.options[name] = value; // validated by run_algorithm against option_specs
        }
    }
    if (c.help) return c;
    if (p.op.empty()) throw usage_error("missing operation (hcube run --help)");
    if (p.root >= (1 << p.dim))
        throw usage_error("--root " + std::to_string(p.root) + " is outside 0.." +
                          std::to_string((1 << p.dim) - 1) + " for --dim " + std::to_string(p.dim));
    return c;
}

std::string number(double v, int digits = 15) {
    std::ostringstream os;
    os << std::setprecision(digits) << v;
    return os.str();
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char ch : s) {
        if (ch == '"' || ch == '\\') {
            out += '\\', out += ch;
        } else if (static_cast<unsigned char>(ch) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", ch);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out + '"';
}

const char* ports_name(port_model m) {
    return m == port_model::all_port ? "all" : "single";
}

void print_json(const run_params& p, const algorithm_entry& e, const run_outcome& o) {
    const run_report& r = o.report;
    std::cout << "{\"op\": " << json_string(p.op) << ", \"algo\": " << json_string(e.algo)
              << ", \"dim\": " << p.dim << ", \"nodes\": " << (1 << p.dim)
              << ", \"words\": " << p.words << ", \"ports\": \"" << ports_name(p.ports)
              << "\", \"ts\": " << number(p.cost.t_s) << ", \"tw\": " << number(p.cost.t_w)
              << ", \"verified\": " << (o.verified ? "true" : "false")
              << ", \"virtual_time\": " << number(r.virtual_time)
              << ", \"formula_time\": " << number(o.formula_time)
              << ", \"wall_seconds\": " << number(r.wall_seconds)
              << ", \"messages\": " << r.messages << ", \"bytes\": " << r.bytes
              << ", \"max_link_bytes\": " << r.max_link_bytes()
              << ", \"congestion_events\": " << r.congestion.size() << ", \"steps\": " << r.steps
              << ", \"formula\": " << json_string(e.formula)
              << ", \"note\": " << json_string(o.note) << "}\n";
}

void print_text(const run_params& p, const algorithm_entry& e, const run_outcome& o) {
    const run_report& r = o.report;
    const auto row = [](const char* label) -> std::ostream& {
        return std::cout << "  " << std::left << std::setw(20) << label;
    };
    std::cout << p.op << " " << e.algo << ": dim " << p.dim << " (" << (1 << p.dim)
              << " nodes), m = " << p.words << " words of " << to_string(p.type) << ", "
              << ports_name(p.ports) << "-port, t_s = " << number(p.cost.t_s)
              << ", t_w = " << number(p.cost.t_w);
    for (const auto& [name, value] : p.options)
        std::cout << ", --" << name << " " << value;
    std::cout << '\n';
    row("verified") << (o.verified ? "yes" : "no") << '\n';
    row("virtual time") << number(r.virtual_time) << '\n';
    row("formula") << number(o.formula_time) << " = " << e.formula << "  [" << e.source << "]\n";
    row("steps") << r.steps << '\n';
    row("wall time") << number(r.wall_seconds, 3) << " s\n";
    row("messages") << r.messages << " total, " << r.max_link_messages()
                    << " on the busiest link\n";
    row("bytes") << r.bytes << " total, " << r.max_link_bytes() << " on the busiest link\n";
    row("congestion events") << r.congestion.size() << '\n';
    if (!o.note.empty()) row("note") << o.note << '\n';
}

// The entry run_algorithm will use, for printing its formula and source.
const algorithm_entry& resolve(const run_params& p) {
    const catalog& c = builtin_catalog();
    const algorithm_entry* e = c.find(p.op, p.algo);
    if (!e) throw usage_error("no catalog entry for " + p.op + " " + p.algo);
    return *e;
}

} // namespace

int run(args a) {
    command c;
    try {
        c = parse(a);
    } catch (const usage_error& e) {
        return usage_failure(e.what());
    }
    if (c.help) {
        std::cout << run_usage << "\noperations:";
        for (const auto& op : builtin_catalog().ops())
            std::cout << ' ' << op;
        std::cout << "\n";
        return 0;
    }
    run_outcome o;
    try {
        o = run_algorithm(c.params);
        // run_algorithm resolved `auto` and filled the option defaults; redo that
        // here (cheap, deterministic) to print what ran.
        if (c.params.algo == "auto") c.params.algo = builtin_catalog().choose(c.params)->algo;
        for (const auto& spec : resolve(c.params).options)
            c.params.options.try_emplace(spec.name, spec.fallback);
    } catch (const usage_error& e) {
        return usage_failure(e.what());
    } catch (const run_error& e) {
        // A node rejected its arguments (e.g. exchange_all under single-port):
        // still a usage error; anything else is a failed run.
        try {
            std::rethrow_exception(e.original());
        } catch (const usage_error&) {
            return usage_failure(e.what());
        } catch (...) {
        }
        throw;
    }
    const algorithm_entry& e = resolve(c.params);
    if (c.json)
        print_json(c.params, e, o);
    else
        print_text(c.params, e, o);
    return o.verified ? 0 : 1;
}

int list(args a) {
    for (const std::string_view arg : a)
        if (arg != "--help" && arg != "-h") {
            std::cerr << "hcube list: unknown argument '" << arg << "' (usage: hcube list)\n";
            return 2;
        }
    const catalog& c = builtin_catalog();
    std::cout << "operations and algorithms (hcube run OP --algo NAME; auto picks the fitting\n"
                 "algorithm with the cheapest formula for the given m, t_s, t_w):\n";
    for (const auto& op : c.ops()) {
        std::cout << '\n' << op << '\n';
        for (const auto* e : c.algorithms(op)) {
            std::cout << "  " << std::left << std::setw(26) << e->algo << e->formula << '\n'
                      << "  " << std::setw(26) << "" << e->source << '\n';
            for (const auto& o : e->options) {
                std::string values;
                for (const auto& v : o.values)
                    values += (values.empty() ? "" : "|") + v;
                std::cout << "  " << std::setw(26) << ""
                          << "--" << o.name << " " << values << " (default " << o.fallback
                          << "): " << o.help << '\n';
            }
        }
    }
    return 0;
}

} // namespace hcube::cli
