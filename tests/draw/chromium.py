"""Headless Chromium for the page checks: evaluate a script on a page (after
its own scripts ran) and read the result back, or take a screenshot.

pictures.py and arrowheads.py import it."""
import html
import json
import os
import subprocess

WINDOW = (1200, 1100)


def _base(chromium, window):
    return [chromium, "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--window-size={window[0]},{window[1]}"]


def evaluate(chromium, page, body, workdir, hash_="", window=WINDOW):
    """The JSON value that the JavaScript function body `body` returns on a
    copy of `page` (an HTML file) opened at `hash_`."""
    copy = os.path.join(workdir, "evaluate-" + os.path.basename(page))
    script = ('<pre id="evaluated"></pre><script>document.getElementById("evaluated")'
              ".textContent = JSON.stringify((function () {" + body + "})());</script>")
    with open(page) as f:
        open(copy, "w").write(f.read().replace("</body>", script + "</body>"))
    dom = subprocess.run(_base(chromium, window) + ["--dump-dom", f"file://{copy}{hash_}"],
                         capture_output=True, text=True, timeout=120).stdout
    return json.loads(html.unescape(dom.split('<pre id="evaluated">')[1].split("</pre>")[0]))


def screenshot(chromium, page, shot, hash_="", window=WINDOW):
    """A PNG of `page` at `hash_`, as the window shows it."""
    subprocess.run(_base(chromium, window) + [f"--screenshot={shot}", f"file://{page}{hash_}"],
                   capture_output=True, timeout=120, check=True)
