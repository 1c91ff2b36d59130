// The wait-for graph of a deadlock: an arrow from every blocked node to the
// node it waits for, on its link.
#include <ostream>
#include <sstream>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube {

using namespace draw_detail;

std::string wait_for_svg(const deadlock_error& e, int dim) {
    if (dim > 6)
        throw usage_error("the wait-for graph is drawn up to d = 6 (64 nodes); the report's text "
                          "lists every blocked node");
    const cube_layout L(dim);
    std::ostringstream body;
    body << arrow_markers(dim);
    body << fmt::format(R"(<text x="16" y="24" font-size="16" font-weight="bold">deadlock: {} )"
                        R"(blocked node{}</text><text x="16" y="44" font-size="13" fill="#333">)"
                        R"(an arrow from a node to the node it waits for, coloured by the link )"
                        R"(it waits on</text>)",
                        e.waits().size(), e.waits().size() == 1 ? "" : "s")
         << '\n';
    draw_edges(body, L, dim);
    std::vector<bool> blocked(std::size_t(1) << dim);
    std::vector<std::string> labels(std::size_t(1) << dim);
    for (const auto& w : e.waits()) {
        blocked[std::size_t(w.node)] = true;
        const std::string what = w.what.substr(0, w.what.find(' '));
        labels[std::size_t(w.node)] = w.dim >= 0 ? fmt::format("{} dim {}", what, w.dim) : what;
    }
    std::vector<std::pair<point, point>> arrows;
    for (const auto& w : e.waits())
        if (w.peer >= 0 && w.peer < (1 << dim))
            arrows.emplace_back(L.at[std::size_t(w.node)], L.at[std::size_t(w.peer)]);
    node_plan plan = plan_nodes(L, dim, labels, arrows);
    for (const auto& w : e.waits()) {
        if (w.peer >= 0 && w.peer < (1 << dim))
            arrow(body, L.at[std::size_t(w.node)], L.at[std::size_t(w.peer)], dim_colour(w.dim),
                  marker_ref(w.dim), w.dim < 0, "wait",
                  "node " + std::to_string(w.node) + ": " + w.what);
    }
    draw_nodes(body, L, dim, blocked, plan.texts);
    legend(body, 16, L.height + 10, dim,
           "red: blocked; label: what it waits in (recv, send, delivery)");
    return svg_open(std::max(L.width, 640.0), L.height + 40) + "\n" + body.str() + "</svg>\n";
}

void write_wait_for_html(const deadlock_error& e, const run_params& p, std::ostream& os) {
    const std::string title = fmt::format("{} {} on a {}-cube deadlocks", p.op, p.algo, p.dim);
    page(os, title,
         xml(fmt::format("link capacity {}, {}-port. The wait-for graph of the deadlock report "
                         "(below): follow the arrows to find the cycle.",
                         p.link_capacity, port_policy_of(p.ports).option)),
         {wait_for_svg(e, p.dim)}, "<pre>" + xml(e.what()) + "</pre>\n");
}

} // namespace hcube
