// hcube run OP ... and hcube list: every catalog algorithm from the command
// line, verified against its serial reference, its virtual time printed next to
// the seed's formula (docs/cli.md).
//
// Exit status: 0 verified, 1 not verified (or the run failed), 2 usage error
// (unknown op, algorithm or option, an algorithm that does not fit, a bad
// number, a run too large for this computer); a usage error prints one line on
// stderr.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <hcube/catalog.hpp>
#include <hcube/draw.hpp>
#include <hcube/error.hpp>

#include "commands.hpp"
#include "suggest.hpp"

namespace hcube::cli {

namespace {

constexpr std::string_view run_usage =
    R"(usage: hcube run OP [--algo NAME] [--dim D] [--words M] [--root R] [--shift Q]
                  [--ports all|single] [--ts X] [--tw Y] [--type int32|int64|double]
                  [--link-capacity C] [--json] [--trace FILE.json] [--svg FILE.svg]
                  [--NAME VALUE ...]

Runs one collective on an emulated D-cube, checks the result against a serial
reference and prints the virtual time next to the seed's formula.

  OP              an operation of `hcube list`
  --algo NAME     an algorithm of OP, or auto (default): the fitting algorithm
                  whose formula is cheapest for these parameters
                  (--schedule NAME says the same, e.g. descend's direct|pipelined)
  --dim D         hypercube dimension, 0..16 (default 4: 16 nodes), one thread
                  per node: the OS may allow fewer threads (hcube info --dim D
                  says whether a D-cube can start here)
  --words M       the textbook's m (default 1): the whole message (broadcast,
                  reduce, allreduce, scans), each node's contribution (allgather,
                  gather), each result block (reduce-scatter, scatter), each
                  personalized message (alltoall), the packet (shift)
  --root R        root node of rooted operations (default 0)
  --shift Q       the shift's q, any integer, taken mod p (default 1)
  --ports P       single (default, the textbook's model) or all
  --ts X, --tw Y  cost model t_s + t_w m (defaults 1 and 0: time counts steps,
                  so --words changes nothing until --tw is given, e.g. --tw 1)
  --type T        element type int32 (default), int64 or double
  --link-capacity C  messages a link buffers (default 16); 0 makes every send
                  synchronous, which deadlocks the algorithms that need
                  buffered links (hcube list marks them)
  --json          one JSON object instead of text
  --trace FILE    write a Chrome/Perfetto trace (Trace Event Format JSON): a
                  track per node, a slice per primitive call, a flow per message,
                  in virtual time (--trace-clock wall: the emulation's wall time)
  --svg FILE      write the space-time diagram (up to 64 nodes)
  --NAME VALUE    an option the algorithm declares (hcube list shows them)

A run whose memory estimate exceeds this computer's physical memory is refused.
Exit status: 0 verified, 1 verification failed or the run failed (a deadlock),
2 usage error.
)";

// The options `hcube run` itself takes a value for (catalog entries add theirs).
const std::vector<std::string> value_flags = {
    "algo", "schedule", "dim",           "words", "root",        "shift", "ports", "ts",
    "tw",   "type",     "link-capacity", "trace", "trace-clock", "svg",   "out",   "svg-dir"};

// Every option name `hcube run` accepts: its own and every catalog entry's.
std::vector<std::string> known_options() {
    std::vector<std::string> names = value_flags;
    names.insert(names.end(), {"json", "help"});
    for (const auto& e : builtin_catalog().entries())
        for (const auto& o : e.options)
            if (std::find(names.begin(), names.end(), o.name) == names.end())
                names.push_back(o.name);
    return names;
}

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
    std::string trace, svg;   // hcube run: files to write
    bool wall_clock = false;  // --trace-clock wall
    std::string out, svg_dir; // hcube draw
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
        const auto eq = name.find('=');
        const std::string bare = name.substr(0, eq);
        if (const auto known = known_options();
            std::find(known.begin(), known.end(), bare) == known.end())
            throw usage_error(unknown_option(
                arg.substr(0, eq == std::string::npos ? arg.size() : eq + 2), bare, known));
        if (eq != std::string::npos) {
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
        } else if (name == "link-capacity") {
            p.link_capacity = parse_number<std::size_t>(
                flag, value, 0, max_link_capacity,
                ("an integer in 0.." + std::to_string(max_link_capacity)).c_str());
        } else if (name == "ts" || name == "tw") {
            (name == "ts" ? p.cost.t_s : p.cost.t_w) = parse_number<double>(
                flag, value, 0, std::numeric_limits<double>::max(), "a finite number >= 0");
        } else if (name == "ports") {
            if (value != "all" && value != "single")
                throw usage_error("--ports '" + value + "' is not all or single");
            p.ports = value == "all" ? port_model::all_port : port_model::single_port;
        } else if (name == "trace" || name == "svg" || name == "out" || name == "svg-dir") {
            if (value.empty()) throw usage_error("--" + name + " needs a file name");
            (name == "trace" ? c.trace
             : name == "svg" ? c.svg
             : name == "out" ? c.out
                             : c.svg_dir) = value;
        } else if (name == "trace-clock") {
            if (value != "virtual" && value != "wall")
                throw usage_error("--trace-clock '" + value + "' is not virtual or wall");
            c.wall_clock = value == "wall";
        } else if (name == "type") {
            const auto t = parse_elem_type(value);
            if (!t) throw usage_error("--type '" + value + "' is not int32, int64 or double");
            p.type = *t;
        } else {
            p.options[name] = value; // validated by run_algorithm against option_specs
        }
    }
    p.trace = !c.trace.empty() || !c.svg.empty();
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

// What the formula line prints: the form that gave formula_time, and the
// seed's form beside it when that is not exact for these parameters.
struct formula_text {
    std::string form;               // the printed form of formula_time
    std::optional<exact_form> seed; // set when the seed's form differs
};

formula_text formula_of(const run_params& p, const algorithm_entry& e) {
    const std::optional<exact_form> gap = exact_formula(e, p);
    return {gap ? gap->text : e.formula, gap};
}

void print_json(const run_params& p, const algorithm_entry& e, const run_outcome& o) {
    const run_report& r = o.report;
    const formula_text f = formula_of(p, e);
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
              << ", \"formula\": " << json_string(f.form) << ", \"note\": " << json_string(o.note)
              << ", \"seed_formula\": " << json_string(e.formula)
              << ", \"seed_formula_time\": " << number(f.seed ? f.seed->seed_time : o.formula_time)
              << ", \"formula_differs\": " << json_string(f.seed ? f.seed->why : "")
              << ", \"link_capacity\": " << p.link_capacity << "}\n";
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
    if (p.link_capacity != config{}.link_capacity)
        std::cout << ", link capacity " << p.link_capacity;
    for (const auto& [name, value] : p.options)
        std::cout << ", --" << name << " " << value;
    std::cout << '\n';
    row("verified") << (o.verified ? "yes" : "no") << '\n';
    row("virtual time") << number(r.virtual_time) << '\n';
    if (p.cost.t_w == 0)
        row("") << "t_w = 0: virtual time counts steps (t_s = " << number(p.cost.t_s)
                << " each, t_w = 0), whatever --words; give --tw Y to charge Y per word\n";
    const formula_text f = formula_of(p, e);
    if (!f.seed) {
        row("formula") << number(o.formula_time) << " = " << f.form << "  [" << e.source << "]\n";
    } else {
        row("formula") << number(o.formula_time) << " = " << f.form << "  [exact for this m, p]\n";
        row("seed's formula") << number(f.seed->seed_time) << " = " << e.formula << "  ["
                              << e.source << "]\n";
        row("why they differ") << f.seed->why << '\n';
    }
    row("steps") << r.steps << '\n';
    row("wall time") << number(r.wall_seconds, 3) << " s\n";
    row("messages") << r.messages << " total, " << r.max_link_messages()
                    << " on the busiest link\n";
    row("bytes") << r.bytes << " total, " << r.max_link_bytes() << " on the busiest link\n";
    row("congestion events") << r.congestion.size() << '\n';
    if (!o.note.empty()) row("note") << o.note << '\n';
}

// p as the entry sees it: `auto` resolved, option defaults filled in.
run_params resolved(run_params p) {
    p.algo = resolve_algorithm(p).algo;
    for (const auto& spec : resolve_algorithm(p).options)
        p.options.try_emplace(spec.name, spec.fallback);
    return p;
}

// A deadlock under link capacity 0 of an algorithm that needs buffered links
// is expected: say so after the report.
void print_deadlock(const run_params& p, const deadlock_error& d) {
    std::cerr << "hcube run: " << d.what() << '\n';
    const run_params q = resolved(p);
    const std::string need = buffered_links_need(resolve_algorithm(q), q);
    if (p.link_capacity == 0 && !need.empty())
        std::cerr << "hint: " << q.op << " " << q.algo << " needs buffered links (" << need
                  << "), so it deadlocks with --link-capacity 0; give --link-capacity 1 or "
                     "more (the default is "
                  << config{}.link_capacity << ")\n";
}

// Opens `path` for writing or throws a usage_error naming it.
std::ofstream open_out(const std::string& path) {
    std::ofstream f(path);
    if (!f) throw usage_error("cannot write " + path);
    return f;
}

// --trace and --svg of hcube run.
void write_pictures(const command& c, const algorithm_entry& e, const run_report& r) {
    if (!c.trace.empty()) {
        auto f = open_out(c.trace);
        write_chrome_trace(r, f,
                           {c.wall_clock ? trace_clock::wall_time : trace_clock::virtual_time});
    }
    if (!c.svg.empty()) {
        auto f = open_out(c.svg);
        timeline_options o;
        o.title = c.params.op + " " + e.algo + " on a " + std::to_string(c.params.dim) +
                  "-cube: virtual time " + number(r.virtual_time);
        write_timeline_svg(r, f, o);
    }
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
    } catch (const usage_error& e) {
        return usage_failure(e.what());
    } catch (const deadlock_error& e) {
        print_deadlock(c.params, e);
        return 1;
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
    } catch (const error& e) {
        // Neither a failed run nor a deadlock: the machine refused the
        // configuration (e.g. more threads than the OS allows).
        return usage_failure(e.what());
    }
    // run_algorithm resolved `auto` and filled the option defaults; redo that
    // here (cheap, deterministic) to print what ran.
    c.params = resolved(c.params);
    const algorithm_entry& e = resolve_algorithm(c.params);
    try {
        write_pictures(c, e, o.report);
    } catch (const error& x) {
        return usage_failure(x.what());
    }
    if (c.json)
        print_json(c.params, e, o);
    else
        print_text(c.params, e, o);
    return o.verified ? 0 : 1;
}

namespace {

constexpr std::string_view draw_usage =
    R"(usage: hcube draw OP [--algo NAME] [--dim D] [--words M] [--root R] ... --out FILE.html
                  [--svg-dir DIR]

Runs one collective (the options of hcube run, up to d = 6) on symbolic data and
draws every step as the seeds draw it: the hypercube, the links each step uses
with what they carry, every node labelled with what it holds after the step,
read from the run's buffers: (0,1,2,3) blocks, [0..3] partial sums. CM-200
cycle algorithms also get the memory table of every node (seed 002, Figures
8-11). The page is one self-contained HTML file: previous/next, a slider, the
arrow keys. --svg-dir DIR writes step-K.svg for every step as well.
A run that deadlocks draws the wait-for graph of the deadlock report instead
(exit status 1).
)";

} // namespace

int draw(args a) {
    command c;
    try {
        c = parse(a);
        if (!c.help && c.out.empty() && c.svg_dir.empty())
            throw usage_error("give --out FILE.html and/or --svg-dir DIR");
    } catch (const usage_error& e) {
        std::cerr << "hcube draw: " << e.what() << '\n';
        return 2;
    }
    if (c.help) {
        std::cout << draw_usage;
        return 0;
    }
    try {
        algorithm_steps s;
        try {
            s = record_steps(c.params);
        } catch (const deadlock_error& d) {
            run_params p = c.params;
            p.algo = resolve_algorithm(p).algo;
            std::cerr << "hcube draw: " << d.what() << '\n';
            if (!c.out.empty()) {
                auto f = open_out(c.out);
                write_wait_for_html(d, p, f);
            }
            if (!c.svg_dir.empty()) {
                std::filesystem::create_directories(c.svg_dir);
                auto f = open_out(c.svg_dir + "/wait-for.svg");
                f << wait_for_svg(d, p.dim);
            }
            std::cerr << "hcube draw: drew the wait-for graph\n";
            return 1;
        }
        if (!c.out.empty()) {
            auto f = open_out(c.out);
            write_steps_html(s, f);
        }
        if (!c.svg_dir.empty()) {
            std::filesystem::create_directories(c.svg_dir);
            const auto svgs = step_svgs(s);
            for (std::size_t k = 0; k < svgs.size(); ++k) {
                auto f = open_out(c.svg_dir + "/step-" + std::to_string(k) + ".svg");
                f << svgs[k];
            }
        }
        std::cout << s.title << ": " << s.steps.size() - 1 << " steps drawn\n";
        return 0;
    } catch (const usage_error& e) {
        std::cerr << "hcube draw: " << e.what() << '\n';
        return 2;
    } catch (const run_error& e) {
        std::cerr << "hcube draw: " << e.what() << '\n';
        return 1;
    } catch (const std::filesystem::filesystem_error& e) {
        std::cerr << "hcube draw: " << e.what() << '\n';
        return 2;
    }
}

namespace {

// When `e` needs buffered links, for `hcube list`: from which dimension under
// each port model, and why (with default options and --shift 1).
std::string buffered_links_text(const algorithm_entry& e) {
    std::string when, why;
    for (const port_model ports : {port_model::single_port, port_model::all_port}) {
        run_params p;
        p.op = e.op;
        p.ports = ports;
        for (const auto& o : e.options)
            p.options.try_emplace(o.name, o.fallback);
        for (p.dim = 1; p.dim <= max_dim; ++p.dim)
            if (const std::string w = buffered_links_need(e, p); !w.empty()) {
                when += (when.empty() ? "" : ", ") + std::string(ports_name(ports)) +
                        "-port from d = " + std::to_string(p.dim);
                if (why.empty()) why = w;
                break;
            }
    }
    return when.empty() ? "" : "deadlocks with --link-capacity 0 (" + when + "): " + why;
}

} // namespace

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
            if (const std::string b = buffered_links_text(*e); !b.empty())
                std::cout << "  " << std::setw(26) << ""
                          << "needs buffered links: " << b << '\n';
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
