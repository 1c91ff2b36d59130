// The labels of the step pictures in the sources' notation: runs of nodes,
// products of pairs, Mathur & Johnsson's table cells, and the page's key to them.
#include <algorithm>
#include <bit>
#include <map>

#include <fmt/format.h>

#include "symbols.hpp"

namespace hcube::draw_detail {

std::string runs(std::uint64_t mask) {
    std::string out;
    while (mask) {
        const int b = std::countr_zero(mask);
        int step = std::countr_zero(mask & (mask - 1)) - b, e = b, count = 1;
        if (step == 64 - b) step = 0; // b alone
        std::uint64_t terms = std::uint64_t(1) << b;
        while (step && e + step < 64 && (mask >> (e + step) & 1))
            e += step, ++count, terms |= std::uint64_t(1) << e;
        const std::uint64_t between =
            (~std::uint64_t(0) >> (63 - e)) & ~((std::uint64_t(1) << b) - 1);
        if (!out.empty()) out += ',';
        if (step == 1 || (count >= 5 && (mask & between) == terms)) {
            out += step > 1     ? fmt::format("{},{},{}..{}", b, b + step, b + 2 * step, e)
                   : e == b + 1 ? fmt::format("{},{}", b, e)
                                : fmt::format("{}..{}", b, e);
        } else {
            e = b, step = 1;
            out += std::to_string(b);
        }
        for (int x = b; x <= e; x += step)
            mask &= ~(std::uint64_t(1) << x);
    }
    return out;
}

namespace {

// Pairs {i,j} (or slots (i|j)) as products of runs: the nodes i with the same
// set of j in one token, {0..1→0,2,4..14} = the blocks of nodes 0 and 1 for
// nodes 0, 2, 4, ..., 14. Empty when some element is not a single node's.
std::vector<std::string> products(const std::vector<sym>& v, label_style style) {
    std::map<int, std::uint64_t> items; // node -> its j
    for (const sym& s : v)
        if (s.mask) {
            if (!std::has_single_bit(s.mask) || (s.flags & sym::marks) || s.item >= 64) return {};
            items[std::countr_zero(s.mask)] |= std::uint64_t(1) << s.item;
        }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> groups; // nodes, their j
    for (const auto& [i, js] : items) {
        const auto same = std::find_if(groups.begin(), groups.end(),
                                       [&, js = js](const auto& g) { return g.second == js; });
        if (same == groups.end())
            groups.emplace_back(std::uint64_t(1) << i, js);
        else
            same->first |= std::uint64_t(1) << i;
    }
    std::vector<std::string> out;
    for (const auto& [nodes, js] : groups)
        out.push_back(style == label_style::slots ? fmt::format("({}|{})", runs(nodes), runs(js))
                      : std::has_single_bit(nodes) && std::has_single_bit(js)
                          ? fmt::format("{{{},{}}}", runs(nodes), runs(js))
                          : fmt::format("{{{}→{}}}", runs(nodes), runs(js)));
    return out;
}

} // namespace

std::size_t max_listed(label_style style, int dim, bool arrow) {
    if (dim >= 4) return 3;
    if (style == label_style::blocks) return arrow ? 4 : 8;
    return std::size_t(-1);
}

std::string label(const std::vector<sym>& v, label_style style, std::size_t max_listed) {
    std::vector<std::string> tokens;
    const sym* last = nullptr;
    for (const sym& s : v) {
        if (!s.mask) continue;
        const bool same = last && last->mask == s.mask &&
                          (style == label_style::blocks || style == label_style::sums ||
                           style == label_style::outgoing || last->item == s.item);
        last = &s;
        if (same) continue; // the next word of the same block
        std::string t;
        switch (style) {
        case label_style::blocks:
            t = runs(s.mask);
            break;
        case label_style::sums:
            t = "[" + runs(s.mask) + "]";
            break;
        case label_style::pairs:
            t = fmt::format("{{{},{}}}", std::countr_zero(s.mask), s.item);
            break;
        case label_style::slots:
            t = fmt::format("({}|{})", std::countr_zero(s.mask), s.item);
            break;
        case label_style::rounds:
            t = fmt::format("a{}:{}", std::countr_zero(s.mask), s.item);
            break;
        case label_style::outgoing:
            t = "(" + runs(s.mask) + ")";
            break;
        }
        if (s.flags & sym::twice) t += "!twice";
        if (s.flags & sym::mixed) t += "!mixed";
        tokens.push_back(std::move(t));
    }
    if (tokens.empty()) return "";
    // Many single blocks read better as runs: (0..15) rather than 16 numbers.
    if (style == label_style::blocks && tokens.size() > max_listed) {
        std::uint64_t all = 0;
        bool single = true;
        for (const sym& s : v)
            if (s.mask) all |= s.mask, single = single && std::has_single_bit(s.mask) && !s.flags;
        if (single) return "(" + runs(all) + ")";
    }
    if ((style == label_style::pairs || style == label_style::slots) && tokens.size() > max_listed)
        if (auto groups = products(v, style); !groups.empty()) tokens = std::move(groups);
    std::string out = style == label_style::blocks ? "(" : "";
    for (std::size_t i = 0; i < tokens.size(); ++i)
        out += (i ? (style == label_style::blocks ? "," : " ") : "") + tokens[i];
    return style == label_style::blocks ? out + ")" : out;
}

std::string cell(const sym& s) {
    const int node = std::countr_zero(s.mask);
    return s.item < 10 && node < 10 ? fmt::format("{}{}", s.item, node)
                                    : fmt::format("{}.{}", s.item, node);
}

std::string notation_of(const sym_program& g, const run_params& p) {
    std::string s;
    switch (g.style) {
    case label_style::blocks:
        s = g.packets
                ? "Labels: the packet a node holds ((5) = node 5's packet), its own until it "
                  "passes it on, then the one it received."
                : std::string("Labels: the blocks a node holds ((0,1) = the blocks of nodes 0 "
                              "and 1)") +
                      (g.transit ? ", those it keeps for others too." : ".");
        break;
    case label_style::sums:
        s = "Labels: the partial sums a node holds ([0..3] = the sum of the elements of nodes "
            "0 to 3, [0,2] = of nodes 0 and 2).";
        break;
    case label_style::pairs:
        s = "Labels: the blocks a node holds ({0,5} = node 0's block for node 5), its own and "
            "those it passes on.";
        break;
    case label_style::slots:
        s = "Labels: the elements a node holds ((3|1) = element 1 of logical node 3, Hu's "
            "notation).";
        break;
    case label_style::rounds:
        s = "Labels: the elements a node holds (a5:2 = element a[5] after 2 iterations of "
            "descend).";
        break;
    case label_style::outgoing:
        break;
    }
    if (g.outgoing)
        s = "Labels: a node's result buffer in square brackets, the prefix sum so far ([0..2] = "
            "the sum of the elements of nodes 0 to 2), and its outgoing message buffer in "
            "parentheses, what it sends in the next step ((0..3) = the sum of nodes 0 to 3), as "
            "in Grama et al. Figure 4.13.";
    s += " Arrows: the messages of the step, labelled with what they bring.";
    if (g.table)
        s += " The table: every node's memory after every step, cell ij = element i of node "
             "j's data, Dim = the link it came over (Mathur & Johnsson, Figures 8-11).";
    if (g.reduction)
        s += " The table: every memory address of every node; ● sends the partial sum of that "
             "address, + receives it and adds its own element, ○ added its element in an "
             "earlier step; Dim = the link the sum crossed (Mathur & Johnsson, Figures 12-19). "
             "An arrow's Σ3 = the partial sum of address 3 it carries.";
    if (g.cycles != cycle_words::none) {
        // The all-reduce's reduce-scatter and allgather take blocks of
        // M' = ceil(m/p) words, one a node, as the CM-200 allocates them.
        const std::size_t d = std::size_t(std::max(p.dim, 1)), nodes = std::size_t(1) << p.dim;
        const bool blocks = g.cycles == cycle_words::blocks;
        const std::size_t block = blocks ? (p.words + nodes - 1) / nodes : p.words,
                          beta = (block + d - 1) / d;
        if (blocks)
            s += fmt::format(" The m = {} words are cut into p = {} blocks of M' = {} word{}{}, "
                             "reduce-scattered and then allgathered.",
                             p.words, nodes, block, block == 1 ? "" : "s",
                             p.words % nodes ? " (the last ones short or empty)" : "");
        s += fmt::format(
            " d-cycles cuts each node's M' = {} word{} into d = {} subblocks (word s into "
            "subblock s mod {}, {} word{} each at most) and sends subblock i around cycle i, "
            "all d cycles at once on different links (Mathur & Johnsson 4.2.4){}.",
            block, block == 1 ? "" : "s", d, d, beta, beta == 1 ? "" : "s",
            block < d ? fmt::format("; with M' < d, {} of the cycles carry nothing", d - block)
                      : "");
    }
    return s;
}

} // namespace hcube::draw_detail
