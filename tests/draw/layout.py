"""The layout check of step pictures: Chromium measures every node label, id
and arrow label (getBBox); none may overlap another text, leave the picture or
cross an arrow (shaft or head) or a link of the cube, and no picture may be
wider than a laptop's screen.

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

MEASURE = """<script>
var out = [], lines = [], sizes = [];
document.querySelectorAll('svg').forEach(function (svg, n) {
  var vb = svg.viewBox.baseVal;
  sizes.push([vb.width, vb.height]);
  svg.querySelectorAll('text.label, text.cargo, text.id').forEach(function (t) {
    var b = t.getBBox();
    out.push([n, t.getAttribute('class') + ' ' + t.textContent, b.x, b.y, b.width, b.height]);
  });
  svg.querySelectorAll('line.msg, line.edge').forEach(function (l) {
    lines.push([n, l.getAttribute('class'), l.x1.baseVal.value, l.y1.baseVal.value,
                l.x2.baseVal.value, l.y2.baseVal.value,
                parseFloat(l.getAttribute('stroke-width'))]);
  });
});
document.getElementById('boxes').textContent = JSON.stringify([out, lines, sizes]);
</script>"""


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
    """Chromium's boxes of the texts and the lines of every SVG file, and
    their sizes: (boxes, lines, sizes, console messages)."""
    page = os.path.join(workdir, "layout.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>" + "".join(open(s).read() for s in svgs) +
                '<pre id="boxes"></pre>' + MEASURE + "</body></html>")
    r = subprocess.run([chromium, "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--dump-dom", "file://" + page],
                       capture_output=True, text=True, timeout=300, cwd=workdir)
    console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    boxes, lines, sizes = json.loads(
        html.unescape(r.stdout.split('<pre id="boxes">')[1].split("</pre>")[0]))
    return boxes, lines, sizes, console


def problems(chromium, svgs, workdir):
    """What is wrong with the layout of the SVG files, one line each."""
    boxes, lines, sizes, console = measure(chromium, svgs, workdir)
    out = [f"layout: console messages {console}"] if console else []
    if len(boxes) < 10 * len(svgs):
        out.append(f"layout: only {len(boxes)} texts measured in {len(svgs)} pictures")
    if len(lines) < 10 * len(svgs):
        out.append(f"layout: only {len(lines)} lines measured in {len(svgs)} pictures")
    for n, (width, height) in enumerate(sizes):
        if width > MAX_WIDTH:
            out.append(f"{svgs[n]}: {width:.0f} px wide, more than {MAX_WIDTH}")
    by_svg = {}
    for n, what, x, y, w, h in boxes:
        by_svg.setdefault(n, []).append((what, x, y, x + w, y + h))
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
