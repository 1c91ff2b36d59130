// The tables beside a step's cube: Mathur & Johnsson's memory tables
// (Figures 8-11) and partial-sum tables (Figures 12-19), Hu's schedule
// (Table 1).
#include <algorithm>
#include <bit>
#include <ostream>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube::draw_detail {

namespace {

// Mathur & Johnsson's "Dim" column: the link location j's element came over, found
// from the data (the neighbour that held it one step before).
std::string table_dim(const algorithm_steps& s, std::size_t k, std::size_t j) {
    if (k == 0) return "";
    const auto &now = s.steps[k].memory, &prev = s.steps[k - 1].memory;
    for (int b = 0; b < s.params.dim; ++b)
        if (!now[0][j].empty() && prev[std::size_t(1 << b)][j] == now[0][j])
            return std::to_string(b);
    return "";
}

} // namespace

double draw_table(std::ostream& os, const algorithm_steps& s, std::size_t k, double x0, double y0,
                  nodes n) {
    const std::size_t words = s.params.words;
    const double cw = 34, rh = 17, first = 46;
    os << fmt::format(R"(<g class="memory" font-size="12" font-family="monospace">)");
    const auto col = [&](int c) { return x0 + 2 * first + cw * (c - n.lo); };
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Step</text>)"
                      R"(<text x="{}" y="{}" font-weight="bold">Mem</text>)",
                      num(x0), num(y0), num(x0 + first), num(y0));
    for (int i = n.lo; i < n.hi; ++i)
        os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">P{}</text>)", num(col(i)),
                          num(y0), i);
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Dim</text>)", num(col(n.hi)),
                      num(y0));
    double y = y0 + rh;
    for (std::size_t st = 0; st < s.steps.size(); ++st) {
        if (st == k)
            os << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#fff3b0"/>)",
                              num(x0 - 4), num(y - rh + 4), num(col(n.hi) + cw - x0),
                              num(rh * double(words)));
        for (std::size_t j = 0; j < words; ++j, y += rh) {
            if (j == 0)
                os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0), num(y),
                                  st == 0 ? "Init." : std::to_string(st - 1));
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0 + first), num(y), j);
            if (st > k) continue;
            for (int i = n.lo; i < n.hi; ++i)
                os << fmt::format(R"(<text class="cell" data-step="{}" data-mem="{}" )"
                                  R"(data-node="{}" x="{}" y="{}">{}</text>)",
                                  st, j, i, num(col(i)), num(y),
                                  xml(s.steps[st].memory[std::size_t(i)][j]));
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(col(n.hi)), num(y),
                              table_dim(s, st, j));
        }
        y += 4;
    }
    os << "</g>\n";
    return col(n.hi) + cw - x0;
}

double draw_reduction_table(std::ostream& os, const algorithm_steps& s, std::size_t k, double x0,
                            double y0, nodes n) {
    const int p = 1 << s.params.dim;
    const auto& cells = s.steps[k].memory;
    const std::size_t addresses = cells.empty() ? 0 : cells[0].size();
    const double cw = 30, rh = 17, first = 40;
    const auto col = [&](int c) { return x0 + first + cw * (c - n.lo); };
    os << fmt::format(R"(<g class="memory" font-size="12" font-family="monospace">)")
       << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Mem</text>)", num(x0), num(y0));
    for (int i = n.lo; i < n.hi; ++i)
        os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">P{}</text>)", num(col(i)),
                          num(y0), i);
    os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Dim</text>)", num(col(n.hi)),
                      num(y0));
    for (std::size_t x = 0; x < addresses; ++x) {
        const double y = y0 + rh * double(x + 1);
        os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0), num(y), x);
        int plus = -1, dot = -1;
        for (int i = 0; i < p; ++i) {
            const std::string& c = cells[std::size_t(i)][x];
            plus = c == "+" ? i : plus;
            dot = c == "●" ? i : dot;
            if (i >= n.lo && i < n.hi)
                os << fmt::format(
                    R"(<text class="cell" data-step="{}" data-mem="{}" data-node="{}" )"
                    R"(x="{}" y="{}">{}</text>)",
                    k, x, i, num(col(i) + 6), num(y), c);
        }
        if (plus >= 0 && dot >= 0)
            os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(col(n.hi)), num(y),
                              std::countr_zero(unsigned(plus ^ dot)));
    }
    // The key to the marks, in two lines under the table.
    const double key_y = y0 + rh * double(addresses + 1) + 4;
    for (const auto& [line, text] :
         {std::pair{0, "● sends the partial sum of the address,"},
          std::pair{1, "+ receives it and adds its own, ○ added its own before"}})
        os << fmt::format(R"(<text class="marks" x="{}" y="{}" fill="#444">{}</text>)", num(x0),
                          num(key_y + rh * line), text);
    os << "</g>\n";
    return std::max(col(n.hi) + cw + 10 - x0, 0.6 * 12 * 55);
}

double draw_schedule(std::ostream& os, const algorithm_steps& s, double x0, double y0, nodes n) {
    const double cw = 24, rh = 17, first = 70;
    os << fmt::format(R"(<g class="schedule" font-size="12" font-family="monospace">)"
                      R"(<text x="{}" y="{}" font-weight="bold">Schedule phi_i(j), read from )"
                      R"(step 1 (Hu, Table 1)</text>)"
                      R"(<text x="{}" y="{}" font-weight="bold">j \ i</text>)",
                      num(x0), num(y0), num(x0), num(y0 + rh));
    for (int i = n.lo; i < n.hi; ++i)
        os << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">{}</text>)",
                          num(x0 + first + cw * (i - n.lo)), num(y0 + rh), i);
    for (std::size_t j = 0; j < s.schedule.size(); ++j) {
        const double y = y0 + rh * double(j + 2);
        os << fmt::format(R"(<text x="{}" y="{}">{}</text>)", num(x0), num(y), j);
        for (int i = n.lo; i < n.hi; ++i)
            os << fmt::format(R"(<text class="sched" data-elem="{}" data-proc="{}" x="{}" )"
                              R"(y="{}">{}</text>)",
                              j, i, num(x0 + first + cw * (i - n.lo)), num(y),
                              s.schedule[j][std::size_t(i)]);
    }
    os << "</g>\n";
    return std::max(first + cw * (n.hi - n.lo), 450.0);
}

} // namespace hcube::draw_detail
