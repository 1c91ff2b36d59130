"""The arrowheads of an HTML step page as Chromium paints them: for every
arrow of the step shown, two pixels inside its head and beside its shaft
must have the arrow's colour in a screenshot.

pictures.py imports it."""
import os
import struct
import zlib

import chromium as chromium_page

# svg.hpp's marker: 10 units long, 5 either side at its base, drawn at 0.7 of
# a 2.5 px stroke, its tip 1 unit past the line's end. 10 px back from the tip
# the head is 5 px either side of the axis, the shaft 1.25: a pixel 2.5 px
# aside is inside the head and off the shaft.
BACK, SIDE = 10.0, 2.5

# Per arrow of the step shown: its colour, two points inside its head beside
# the shaft (page pixels), its tooltip.
HEADS = """
  var out = [];
  document.querySelectorAll('.step:not([hidden]) line.msg').forEach(function (l) {
    var x1 = l.x1.baseVal.value, y1 = l.y1.baseVal.value;
    var x2 = l.x2.baseVal.value, y2 = l.y2.baseVal.value;
    var len = Math.hypot(x2 - x1, y2 - y1), ux = (x2 - x1) / len, uy = (y2 - y1) / len;
    var tip = 1.75, m = l.getScreenCTM(), svg = l.ownerSVGElement, pts = [];
    [-1, 1].forEach(function (side) {
      var p = svg.createSVGPoint();
      p.x = x2 + ux * (tip - %(back)s) - uy * side * %(side)s;
      p.y = y2 + uy * (tip - %(back)s) + ux * side * %(side)s;
      p = p.matrixTransform(m);
      pts.push([p.x + window.scrollX, p.y + window.scrollY]);
    });
    out.push([l.getAttribute('stroke'), pts, l.querySelector('title').textContent]);
  });
  return out;
""" % {"back": BACK, "side": SIDE}


def read_png(path, last_row):
    """(width, height, rows of (r, g, b) up to last_row) of an 8-bit RGB or
    RGBA PNG."""
    data = open(path, "rb").read()
    at, idat = 8, b""
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    assert depth == 8 and colour in (2, 6), f"{path}: PNG depth {depth} colour type {colour}"
    bpp = 4 if colour == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(min(height, last_row + 1)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def colour(hex_):
    return tuple(int(hex_[i:i + 2], 16) for i in (1, 3, 5))


def problems(chromium, page, steps, workdir):
    """What is wrong with the arrowheads of `page` (an HTML file) at the
    given steps, one line each."""
    out = []
    for k in steps:
        heads = chromium_page.evaluate(chromium, page, HEADS, workdir, f"#next={k}")
        shot = os.path.join(workdir, f"heads-{k}.png")
        chromium_page.screenshot(chromium, page, shot, f"#next={k}")
        last = max([int(round(y)) for _, points, _ in heads for _, y in points] or [0])
        width, height, rows = read_png(shot, last)
        if not heads:
            out.append(f"{page} step {k}: no arrows found")
        for stroke, points, tip in heads:
            want = colour(stroke)
            for x, y in points:
                x, y = int(round(x)), int(round(y))
                if not (0 <= x < width and 0 <= y < len(rows)):
                    out.append(f"{page} step {k}: arrow {tip} is outside the screenshot")
                    break
                got = rows[y][x]
                if max(abs(g - w) for g, w in zip(got, want)) > 60:
                    out.append(f"{page} step {k}: arrow {tip} has no head "
                               f"(pixel {x},{y} is {got}, the arrow {want})")
                    break
    return out
