#include <hcube/plot.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "svg.hpp"

namespace hcube {

namespace {

// 1, 2, ..., 512, 1K, ..., 1M: a power of two of bytes.
std::string bytes_label(double b) {
    if (b >= 1 << 20) return fmt::format("{:g}M", b / (1 << 20));
    if (b >= 1 << 10) return fmt::format("{:g}K", b / (1 << 10));
    return fmt::format("{:g}", b);
}

} // namespace

std::string log_log_svg(const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<plot_curve>& curves) {
    // Plot area inside the margins; the legend to the right of it.
    constexpr double left = 80, top = 40, width = 560, height = 360, legend = 260;
    double x0 = std::numeric_limits<double>::max(), x1 = 0, y0 = x0, y1 = 0;
    for (const plot_curve& c : curves)
        for (const auto& [x, y] : c.points) {
            x0 = std::min(x0, x), x1 = std::max(x1, x);
            y0 = std::min(y0, y), y1 = std::max(y1, y);
        }
    if (x1 == 0) x0 = 1, x1 = 2, y0 = 1, y1 = 10; // nothing to plot: empty axes
    // Whole powers of two (x) and of ten (y) at the ends, at least one apart.
    const double lx0 = std::floor(std::log2(x0)), lx1 = std::max(lx0 + 1, std::ceil(std::log2(x1)));
    const double ly0 = std::floor(std::log10(y0)),
                 ly1 = std::max(ly0 + 1, std::ceil(std::log10(y1)));
    const auto px = [&](double x) { return left + (std::log2(x) - lx0) / (lx1 - lx0) * width; };
    const auto py = [&](double y) {
        return top + height - (std::log10(y) - ly0) / (ly1 - ly0) * height;
    };
    std::string s = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">)"
        "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        left + width + legend, top + height + 60);
    s += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"14\">{}</text>\n", left,
                     draw_detail::xml(title));
    s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>)"
                     "\n",
                     left, top, width, height);
    const int x_step = int(std::max(1.0, std::ceil((lx1 - lx0) / 12)));
    for (double e = lx0; e <= lx1; e += x_step) {
        const double x = px(std::exp2(e));
        s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ddd"/>)"
                         R"(<text x="{0}" y="{3}" text-anchor="middle">{4}</text>)"
                         "\n",
                         x, top, top + height, top + height + 16, bytes_label(std::exp2(e)));
    }
    for (double e = ly0; e <= ly1; ++e) {
        const double y = py(std::pow(10.0, e));
        s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#ddd"/>)"
                         R"(<text x="{3}" y="{4}" text-anchor="end">{5:g}</text>)"
                         "\n",
                         left, y, left + width, left - 6, y + 4, std::pow(10.0, e));
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + width / 2,
                     top + height + 40, draw_detail::xml(x_label));
    s += fmt::format("<text transform=\"translate(20 {}) rotate(-90)\" "
                     "text-anchor=\"middle\">{}</text>\n",
                     top + height / 2, draw_detail::xml(y_label));
    // Colour-blind safe (Okabe-Ito), then repeating.
    constexpr const char* colours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                       "#e69f00", "#56b4e9", "#000000", "#f0e442"};
    for (std::size_t i = 0; i < curves.size(); ++i) {
        const char* colour = colours[i % std::size(colours)];
        std::string d;
        for (const auto& [x, y] : curves[i].points)
            d += fmt::format("{}{:.1f},{:.1f} ", d.empty() ? "M" : "L", px(x), py(y));
        s += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)"
                         "\n",
                         d.empty() ? "M0,0" : d, colour);
        for (const auto& [x, y] : curves[i].points)
            s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}"/>)", px(x), py(y),
                             colour);
        const double ly = top + 10 + 20 * double(i);
        s += fmt::format(
            R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{3}" stroke-width="2"/>)"
            R"(<text x="{4}" y="{5}">{6}</text>)"
            "\n",
            left + width + 15, ly, left + width + 40, colour, left + width + 46, ly + 4,
            draw_detail::xml(curves[i].label));
    }
    return s + "</svg>\n";
}

} // namespace hcube
