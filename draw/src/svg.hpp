// Small pieces shared by the SVG writers of hcube_draw.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace hcube::draw_detail {

// Text and attribute values for XML.
inline std::string xml(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

// One colour per dimension (colour-blind safe first six), grey for routed.
inline std::string_view dim_colour(int dim) {
    constexpr std::string_view palette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                            "#e69f00", "#56b4e9", "#8c564b", "#7f7f7f"};
    if (dim < 0) return "#555555";
    return palette[dim % 8];
}

// An arrowhead marker per dimension (and "r" for routed), ids "PREFIXarrow-K".
// SVGs that share a page need prefixes of their own: a url(#id) takes the
// page's first element of that id, and markers in a hidden block draw nothing.
inline std::string arrow_markers(int dims, std::string_view prefix = "") {
    std::string out = "<defs>";
    for (int k = -1; k < dims; ++k)
        out += fmt::format(R"(<marker id="{}arrow-{}" viewBox="0 0 10 10" refX="9" refY="5" )"
                           R"(markerWidth="7" markerHeight="7" orient="auto-start-reverse">)"
                           R"(<path d="M0,0 L10,5 L0,10 z" fill="{}"/></marker>)",
                           prefix, k < 0 ? "r" : std::to_string(k), dim_colour(k));
    return out + "</defs>";
}

inline std::string marker_ref(int dim, std::string_view prefix = "") {
    return dim < 0 ? fmt::format("url(#{}arrow-r)", prefix)
                   : fmt::format("url(#{}arrow-{})", prefix, dim);
}

// A number as short text: 3, 2.5, 0.125.
inline std::string num(double v) {
    return fmt::format("{:g}", v);
}

// An SVG's opening tag, w x h px on a white ground.
inline std::string svg_open(double w, double h) {
    return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
                       R"(viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)"
                       R"(<rect width="100%" height="100%" fill="white"/>)",
                       num(w), num(h));
}

} // namespace hcube::draw_detail
