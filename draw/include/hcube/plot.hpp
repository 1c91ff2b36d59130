// A log-log line plot as a self-contained SVG: one <path> per curve, labelled
// axes with ticks at powers of two (x, bytes) and of ten (y), a legend.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hcube {

struct plot_curve {
    std::string label;
    std::vector<std::pair<double, double>> points; // (x, y), both > 0
};

std::string log_log_svg(const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<plot_curve>& curves);

} // namespace hcube
