// The HTML page that steps through the pictures: previous/next, a slider
// and the arrow keys.
#include <ostream>

#include "cube_picture.hpp"
#include "svg.hpp"

namespace hcube::draw_detail {

namespace {

constexpr std::string_view page_style = R"(
body { font-family: sans-serif; margin: 16px 24px; color: #111; }
h1 { font-size: 20px; margin: 0 0 4px; }
p.facts { margin: 2px 0 10px; color: #333; }
#controls { display: flex; gap: 10px; align-items: center; margin: 8px 0; }
#controls button { font-size: 15px; padding: 4px 12px; }
#slider { width: 320px; }
#caption { font-size: 14px; }
.step[hidden] { display: none; }
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 1100px; }
)";

// The controls: previous/next, a slider, the arrow keys; "#next=N" in the
// address presses next N times (how the tests and links pick a step).
constexpr std::string_view page_script = R"(
(function () {
  var steps = Array.prototype.slice.call(document.querySelectorAll('.step'));
  var slider = document.getElementById('slider');
  var caption = document.getElementById('caption');
  var prev = document.getElementById('prev'), next = document.getElementById('next');
  var current = 0;
  function show(k) {
    current = Math.max(0, Math.min(steps.length - 1, k));
    steps.forEach(function (s, i) { s.hidden = i !== current; });
    slider.value = String(current);
    caption.textContent = (current + 1) + ' / ' + steps.length;
    prev.disabled = current === 0;
    next.disabled = current === steps.length - 1;
    document.body.setAttribute('data-current', String(current));
  }
  prev.addEventListener('click', function () { show(current - 1); });
  next.addEventListener('click', function () { show(current + 1); });
  slider.addEventListener('input', function () { show(Number(slider.value)); });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowLeft') { show(current - 1); e.preventDefault(); }
    if (e.key === 'ArrowRight') { show(current + 1); e.preventDefault(); }
  });
  show(0);
  var m = /next=(\d+)/.exec(location.hash);
  for (var i = 0; m && i < Number(m[1]); ++i) next.click();
})();
)";

} // namespace

void page(std::ostream& os, const std::string& title, const std::string& facts,
          const std::vector<std::string>& svgs, const std::string& extra) {
    os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << xml(title)
       << "</title><style>" << page_style << "</style></head><body>\n<h1>" << xml(title)
       << "</h1>\n<p class=\"facts\">" << facts << "</p>\n";
    os << "<div id=\"controls\"><button id=\"prev\" type=\"button\">&#9664; previous</button>"
          "<input id=\"slider\" type=\"range\" min=\"0\" max=\""
       << svgs.size() - 1
       << "\" value=\"0\" aria-label=\"step\"><button id=\"next\" type=\"button\">next "
          "&#9654;</button><span id=\"caption\"></span><span style=\"color:#666\">(arrow keys "
          "step too)</span></div>\n";
    for (std::size_t k = 0; k < svgs.size(); ++k)
        os << "<div class=\"step\" data-step=\"" << k << "\">\n" << svgs[k] << "</div>\n";
    os << extra << "<script>" << page_script << "</script>\n</body></html>\n";
}

} // namespace hcube::draw_detail

namespace hcube {

using namespace draw_detail;

void write_steps_html(const algorithm_steps& s, std::ostream& os) {
    const run_report& r = s.report;
    const std::string facts = xml(fmt::format(
        "{} [{}]. This run: virtual time {} (t_s = {}, t_w = {}), {} step{}, {} message{}, {} "
        "congestion event{}. {} Everything shown is read from the run's own buffers.",
        s.formula, s.source, num(r.virtual_time), num(r.cost.t_s), num(r.cost.t_w), r.steps,
        r.steps == 1 ? "" : "s", r.trace.size(), r.trace.size() == 1 ? "" : "s",
        r.congestion.size(), r.congestion.size() == 1 ? "" : "s", s.notation));
    page(os, s.title, facts, step_svgs(s), "");
}

} // namespace hcube
