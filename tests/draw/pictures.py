"""Checks the files pictures.sh made: traces (one flow per message), SVGs
(well-formed XML, one arrow per message) and the HTML pages in headless
Chromium (no console errors, the step controls change the picture, the node
labels read back from the page are Grama et al.'s Figures 4.11 and 4.15 and
Mathur & Johnsson's Figure 8)."""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser

import arrowheads
import chromium as chromium_page
import layout

d, hcube = sys.argv[1], sys.argv[2]
SVG = "{http://www.w3.org/2000/svg}"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def arrows(root, cls):
    return [e for e in root.iter(SVG + "line") if e.get("class") == cls]


# Traces: exactly one flow start and one flow end per message.
for name in ("ag.json", "ag-wall.json", "a2a.json"):
    doc = json.load(open(os.path.join(d, name)))
    ev = doc["traceEvents"]
    messages = doc["otherData"]["messages"]
    starts = [e["id"] for e in ev if e["ph"] == "s"]
    ends = [e["id"] for e in ev if e["ph"] == "f"]
    check(messages > 0, f"{name}: no messages")
    check(sorted(starts) == sorted(set(starts)) and len(starts) == messages,
          f"{name}: {len(starts)} flow starts for {messages} messages")
    check(sorted(starts) == sorted(ends), f"{name}: flow starts and ends differ")
    # Every message arrow goes forward in time.
    at = {(e["ph"], e["id"]): e["ts"] for e in ev if e["ph"] in "sf"}
    back = [i for i in starts if at[("f", i)] <= at[("s", i)]]
    check(not back, f"{name}: {len(back)} flows end before they start")
    check(all("step" in e["args"] for e in ev if e["ph"] == "X"), f"{name}: slice without step")
    axis = "wall" if "wall" in name else "virtual"
    check(doc["otherData"]["time_axis"] == axis, f"{name}: time axis is not {axis}")

# Timelines: well-formed XML, an arrow per message of the trace.
for svg, trace in (("ag.svg", "ag.json"), ("a2a.svg", "a2a.json")):
    root = ET.parse(os.path.join(d, svg)).getroot()
    messages = json.load(open(os.path.join(d, trace)))["otherData"]["messages"]
    check(len(arrows(root, "msg")) == messages,
          f"{svg}: {len(arrows(root, 'msg'))} arrows for {messages} messages")
    check(len(arrows(root, "critical")) > 0, f"{svg}: no critical path")

# Step SVGs: well-formed, 8 arrows per step of allgather on a 3-cube.
per_step = []
for k in range(4):
    root = ET.parse(os.path.join(d, "steps", f"step-{k}.svg")).getroot()
    per_step.append(len(arrows(root, "msg")))
check(per_step == [0, 8, 8, 8], f"step SVG arrows {per_step}, expected [0, 8, 8, 8]")


class Page(HTMLParser):
    """The steps of a page: per step, node labels and memory cells."""

    def __init__(self):
        super().__init__()
        self.step = None
        self.current = None
        self.text_of = None
        self.labels = {}  # (step, node) -> text
        self.cells = {}  # (step shown, table step, mem, node) -> text
        self.hidden = {}
        self.waits = 0
        self.in_title = False  # a tooltip: the label in full, not what shows

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.in_title = self.in_title or tag == "title"
        if tag == "body":
            self.current = a.get("data-current")
        if tag == "div" and a.get("class") == "step":
            self.step = int(a["data-step"])
            self.hidden[self.step] = "hidden" in a
        if tag == "line" and a.get("class") == "wait":
            self.waits += 1
        if tag == "text" and a.get("class") == "label":
            self.text_of = ("label", self.step, int(a["data-node"]))
        if tag == "text" and a.get("class") == "cell":
            self.text_of = ("cell", self.step, int(a["data-step"]), int(a["data-mem"]),
                            int(a["data-node"]))

    def handle_data(self, data):
        if self.in_title:
            return
        if self.text_of and self.text_of[0] == "label":
            # Long labels come in lines (tspans), split at spaces or after commas.
            key = self.text_of[1:]
            if key in self.labels:
                data = self.labels[key] + ("" if self.labels[key].endswith(",") else " ") + data
            self.labels[key] = data
        elif self.text_of:
            self.cells[self.text_of[1:]] = data

    def handle_endtag(self, tag):
        self.in_title = self.in_title and tag != "title"
        if tag == "text":
            self.text_of = None


chromium = shutil.which("chromium-headless-shell") or shutil.which("chromium")
if not chromium:
    sys.exit("headless Chromium not found (bash scripts/setup.sh installs chromium-headless-shell)")


def browse(page, hash_, *extra):
    """Runs Chromium on the page; returns (stdout, console lines)."""
    url = "file://" + os.path.join(d, page) + hash_
    r = subprocess.run([chromium, "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--window-size=1200,800", *extra, url],
                       capture_output=True, text=True, timeout=120, cwd=d)
    console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    return r.stdout, console


def dump(page, hash_=""):
    out, console = browse(page, hash_, "--dump-dom")
    check(not console, f"{page}{hash_}: console messages {console}")
    p = Page()
    p.feed(out)
    return p


# Figure 4.11: (a) initial, (b) before the second step, (c) before the third, final.
fig_4_11 = [
    [f"({i})" for i in range(8)],
    ["(0,1)"] * 2 + ["(2,3)"] * 2 + ["(4,5)"] * 2 + ["(6,7)"] * 2,
    ["(0,1,2,3)"] * 4 + ["(4,5,6,7)"] * 4,
    ["(0,1,2,3,4,5,6,7)"] * 8,
]
ag = dump("ag.html")
for k, want in enumerate(fig_4_11):
    got = [ag.labels.get((k, i)) for i in range(8)]
    check(got == want, f"ag.html step {k}: labels {got}, Figure 4.11 has {want}")
check(ag.current == "0" and not ag.hidden[0] and ag.hidden[1], "ag.html does not open on step 0")
# The controls: "#next=2" presses next twice.
check(dump("ag.html", "#next=2").current == "2", "next did not move to step 2")
check(dump("ag.html", "#next=9").current == "3", "next went past the last step")

# Figure 4.15: the blocks each node holds, its own and those it passes on.
fig_4_15 = [
    ["(0,1,2,3,4,5,6,7)"] + [None] * 7,
    ["(0,1,2,3)", None, None, None, "(4,5,6,7)", None, None, None],
    ["(0,1)", None, "(2,3)", None, "(4,5)", None, "(6,7)", None],
    [f"({i})" for i in range(8)],
]
sc = dump("sc.html")
for k, want in enumerate(fig_4_15):
    got = [sc.labels.get((k, i)) for i in range(8)]
    check(got == want, f"sc.html step {k}: labels {got}, Figure 4.15 has {want}")

# Hu, section 4, on a 2-cube with M = 8 (L = 2): logical node q = G^-1(i)
# holds a[2q], a[2q + 1]; in pipelined round t element l does iteration t - l.
# Rounds take 4 steps (the last 2), then one local step: 11 in all.
logical = [0, 1, 3, 2]


def descend_labels(done):
    return [" ".join(f"a{2 * logical[i] + l}:{done(l)}" for l in range(2)) for i in range(4)]


desc = dump("desc.html")
for k, want in ((0, descend_labels(lambda l: 0)), (4, descend_labels(lambda l: 1 - l)),
                (8, descend_labels(lambda l: 2 - l)), (10, descend_labels(lambda l: 2)),
                (11, descend_labels(lambda l: 3))):
    got = [desc.labels.get((k, i)) for i in range(4)]
    check(got == want, f"desc.html step {k}: labels {got}, Hu's pipeline has {want}")

shots = []
for k in (1, 2):
    shot = os.path.join(d, f"shot-{k}.png")
    _, console = browse("ag.html", f"#next={k}", f"--screenshot={shot}")
    check(not console, f"screenshot {k}: console messages {console}")
    shots.append(open(shot, "rb").read())
check(shots[0] != shots[1], "screenshots of steps 1 and 2 are identical")
# Every arrow of every step has its head, as Chromium paints the page.
failures += arrowheads.problems(chromium, os.path.join(d, "ag.html"), range(1, 4), d)
failures += arrowheads.problems(chromium, os.path.join(d, "sc.html"), [2], d)

# The CM-200 cycles at their defaults (M' = d = 3 words, all-port; the
# all-reduce's m = 24 in 8 blocks of M') use all d cycles: every step sends on
# the 3 links of each of the 8 nodes, and the header says how M' is split.
for page, steps, m in (("dc.html", 7, 3), ("rs.html", 7, 3), ("ar.html", 14, 24)):
    text = open(os.path.join(d, page)).read()
    check(f"on a 3-cube (8 nodes), m = {m}, all-port" in text, f"{page}: not m = {m}, all-port")
    check("d-cycles cuts each node's M' = 3 words into d = 3 subblocks (word s into subblock s "
          "mod 3, 1 word each at most) and sends subblock i around cycle i" in text,
          f"{page}: the header does not say how M' is split over the d cycles")
    check(text.count("24 messages on dim 0, 1, 2") == steps,
          f"{page}: {text.count('24 messages on dim 0, 1, 2')} of {steps} steps use all 3 cycles")
check("The m = 24 words are cut into p = 8 blocks of M' = 3 words" in
      open(os.path.join(d, "ar.html")).read(), "ar.html: the header does not say m = p M'")

# Mathur & Johnsson Figure 8: memory of every node after every step (the last page
# step shows the whole table).
fig_8 = """00 01 02 03 04 05 06 07|10 11 12 13 14 15 16 17|20 21 22 23 24 25 26 27
01 00 03 02 05 04 07 06|12 13 10 11 16 17 14 15|24 25 26 27 20 21 22 23
03 02 01 00 07 06 05 04|16 17 14 15 12 13 10 11|25 24 27 26 21 20 23 22
02 03 00 01 06 07 04 05|14 15 16 17 10 11 12 13|21 20 23 22 25 24 27 26
06 07 04 05 02 03 00 01|15 14 17 16 11 10 13 12|23 22 21 20 27 26 25 24
07 06 05 04 03 02 01 00|17 16 15 14 13 12 11 10|27 26 25 24 23 22 21 20
05 04 07 06 01 00 03 02|13 12 11 10 17 16 15 14|26 27 24 25 22 23 20 21
04 05 06 07 00 01 02 03|11 10 13 12 15 14 17 16|22 23 20 21 26 27 24 25"""
dc = dump("dc.html")
for k, line in enumerate(fig_8.splitlines()):
    for j, row in enumerate(line.split("|")):
        got = " ".join(dc.cells.get((7, k, j, i), "?") for i in range(8))
        check(got == row, f"dc.html step {k} location {j}: {got}, Figure 8 has {row}")

# Mathur & Johnsson Figure 12: the partial sums of addresses 0-2 (block 0), step by
# step: * sends, + receives and adds, o added before (read from each step).
fig_12 = """....*+.. .*.+.... ..*...+.
....o*.+ .o.*...+ ..o...*+
....oo+* .o.o.+.* ..o+..o*
..+.oo*o .o.o+*.o .+o*..oo
..*+oooo .o.o*o+o .*oo.+oo
.+o*oooo .o+ooo*o .ooo+*oo
+*oooooo +o*ooooo +ooo*ooo"""
marks = {"": ".", "\u25cf": "*", "+": "+", "\u25cb": "o"}
rs = dump("rs.html")
for u, line in enumerate(fig_12.splitlines()):
    for x, want in enumerate(line.split()):
        got = "".join(marks.get(rs.cells.get((u + 1, u + 1, x, i), ""), "?") for i in range(8))
        check(got == want, f"rs.html step {u} address {x}: {got}, Figure 12 has {want}")

# Every arrow's label (Σx, the sum it carries) beside its arrow, none in the
# key table under the cube; the marks have their key under every step's table.
rs_page = open(os.path.join(d, "rs.html")).read()
check('class="key"' not in rs_page, "rs.html: arrow labels with no room beside their arrow")
check(rs_page.count("○ added its own before") == 7, "rs.html: not every step keys ● + ○")
check(dump("dl.html").waits == 4, "dl.html: the wait-for graph has no arrow per blocked node")
# The deadlock report's text wraps inside the window.
widths = chromium_page.evaluate(
    chromium, os.path.join(d, "dl.html"), "var p = document.querySelector('pre');"
    "return [p.scrollWidth, p.clientWidth, document.documentElement.scrollWidth, innerWidth];", d)
check(widths[0] <= widths[1] and widths[2] <= widths[3],
      f"dl.html: the report is {widths[0]} px wide in {widths[1]}, the page {widths[2]} in "
      f"{widths[3]}")
# Every text of the wait-for graphs (hcube draw's page, the lab's
# find_deadlock's deadlock.svg) lies inside its picture, as Chromium lays it out.
OUTSIDE = """var out = [];
document.querySelectorAll('svg').forEach(function (svg) {
  var vb = svg.viewBox.baseVal;
  svg.querySelectorAll('text').forEach(function (t) {
    var b = t.getBBox();
    if (b.x < 0 || b.y < 0 || b.x + b.width > vb.width || b.y + b.height > vb.height)
      out.push([t.textContent, Math.round(b.x + b.width), vb.width]);
  });
});
return [document.querySelectorAll('svg text').length, out];"""
graphs = ["dl.html"]
if os.path.exists(os.path.join(d, "deadlock.svg")):
    with open(os.path.join(d, "lab-deadlock.html"), "w") as f:
        f.write("<!DOCTYPE html><html><body>" + open(os.path.join(d, "deadlock.svg")).read() +
                "</body></html>")
    graphs.append("lab-deadlock.html")
for page in graphs:
    texts, outside = chromium_page.evaluate(chromium, os.path.join(d, page), OUTSIDE, d)
    check(texts >= 10, f"{page}: only {texts} texts in the wait-for graph")
    check(not outside, f"{page}: texts leave the picture (text, right edge, width): {outside}")

# Layout (layout.py): in every step picture of every operation and algorithm
# of `hcube list` on a 2-, 3- and 4-cube, of descend on a 2-cube with the
# prefix kernel, and of a few on 5- and 6-cubes (the 4-cubes in rows), the
# node labels, keys, ids and arrow labels overlap no other text, stay inside
# the picture and cross no arrow, head or link, every label is beside its
# node or arrow (an arrow's nearer to it than to any other arrow, else keyed
# under the picture), and no picture is wider than a laptop's screen. All-port algorithms run with m = 3 (three parts), descend
# with M = 2N, aspc four-step all-port too.
catalog, op = [], None
for line in subprocess.run([hcube, "list"], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    if line[:1].isalpha() and not line.startswith("operations"):
        op = line.strip()
    elif op and line.startswith("  ") and line[2:3].isalpha():
        name, formula = line.split(None, 1)
        catalog.append((op, name, "all-port" in formula))
check(len(catalog) >= 41, f"hcube list: only {len(catalog)} algorithms")


def draw(op, algo, all_port, dim):
    """The SVG files of one run's steps ([] where the algorithm does not fit
    the dimension, as mesh on odd ones)."""
    out = os.path.join(d, "catalog", f"{op}-{algo}-{dim}")
    args = [hcube, "draw", op, "--algo", algo, "--dim", str(dim), "--svg-dir", out, "--words",
            str(2 << dim) if op == "descend" else "3" if all_port else "1"]
    r = subprocess.run(args + (["--ports", "all"] if all_port else []), capture_output=True,
                       text=True)
    if r.returncode == 2 and "needs the all-port model" in r.stderr:
        r = subprocess.run(args + ["--ports", "all"], capture_output=True, text=True)
    if r.returncode == 2 and "even dimension" in r.stderr:
        return []
    check(r.returncode == 0, f"hcube draw {op} {algo} --dim {dim}: {r.stderr.strip()}")
    return [os.path.join(out, f) for f in sorted(os.listdir(out))] if r.returncode == 0 else []


runs = [(op, algo, ap, dim) for dim in (2, 3, 4) for op, algo, ap in catalog]
runs += [("allgather", "hypercube", False, 5), ("alltoall", "dimension-exchange", False, 5),
         ("allgather", "hypercube", False, 6), ("broadcast", "binomial", False, 6),
         ("reduce", "rotated-trees", True, 6)]  # wide labels: narrower margins
with ThreadPoolExecutor(2) as pool:
    svgs = [f for files in pool.map(lambda r: draw(*r), runs) for f in files]
check(len(svgs) > 800, f"only {len(svgs)} step pictures drawn")
svgs += [os.path.join(d, "desc", f"step-{k}.svg") for k in range(12)]
failures += layout.problems(chromium, svgs, d)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("pictures: traces, SVGs and pages check out")
