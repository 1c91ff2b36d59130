"""Runs every command of the lab's README.md as a student would, in a fresh
directory, and checks what the README says of it: the exit status ("exits
N", else 0), the virtual times it prints ("virtual time N", "virtual times
A and B"), the cost model
it was given (--ts, --tw) in its report, the files it writes ("writes A and
B", and every --out, --svg and --trace FILE), and that ring.svg's hops use
the dimensions of the transition sequence it quotes.

    python3 check_readme.py README.md BUILD_DIR"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

readme, build = sys.argv[1], os.path.abspath(sys.argv[2])
text = open(readme).read()
failures = []

# Commands: the lines of ```sh blocks (comment after '#'), and inline `build/...`
# code in the text, whose spans may wrap.
commands = []
for block in re.findall(r"```sh\n(.*?)```", text, re.S):
    for line in block.splitlines():
        command, _, note = line.partition("#")
        if command.strip():
            commands.append((command.strip(), note.strip()))
prose = re.sub(r"```sh\n.*?```", "", text, flags=re.S)
for span in re.findall(r"`(build/[^`]+)`", prose, re.S):
    command = " ".join(span.split())
    if " " in command:  # a program's name alone is not a command
        commands.append((command, ""))

with tempfile.TemporaryDirectory() as work:
    for command, note in commands:
        args = shlex.split(command)
        args[0] = os.path.join(build, os.path.relpath(args[0], "build"))
        r = subprocess.run(args, cwd=work, capture_output=True, text=True, timeout=120)
        status = int(m.group(1)) if (m := re.search(r"exits (\d+)", note)) else 0
        if r.returncode != status:
            failures.append(f"{command}: exit {r.returncode}, README says {status}\n{r.stderr}")
            continue
        # "virtual time 7" or "virtual times 367 and 113": the first ones printed.
        if m := re.search(r"virtual times? ([\d.]+(?: and [\d.]+)*)", note):
            want = m.group(1).split(" and ")
            got = re.findall(r"virtual time\s+([\d.]+)", r.stdout)[:len(want)]
            if got != want:
                failures.append(f"{command}: virtual times {got}, README says {want}")
        # The options it is given show in its report.
        for flag, name in (("--ts", "t_s"), ("--tw", "t_w")):
            if flag in args and f"{name} = {args[args.index(flag) + 1]}" not in r.stdout:
                failures.append(f"{command}: its report does not say {name} = "
                                f"{args[args.index(flag) + 1]}")
        files = re.findall(r"[\w-]+\.(?:svg|json|html)", note.partition("writes")[2])
        files += [args[i + 1] for i, a in enumerate(args[:-1])
                  if a in ("--out", "--svg", "--trace")]
        for f in files:
            path = os.path.join(work, f)
            if not os.path.isfile(path) or os.path.getsize(path) == 0:
                failures.append(f"{command}: did not write {f}")
    # Exercise 1: the hops of ring.svg, in time order, take the dimensions of
    # the transition sequence the README quotes.
    quoted = re.search(r"transition sequence ([\d ]+)\.", text)
    ring = os.path.join(work, "ring.svg")
    if not quoted or not os.path.isfile(ring):
        failures.append("no transition sequence quoted, or no ring.svg")
    else:
        hops = []
        for line in ET.parse(ring).getroot().iter("{http://www.w3.org/2000/svg}line"):
            if line.get("class") == "msg":
                title = line.find("{http://www.w3.org/2000/svg}title").text
                hops.append((float(line.get("x1")), re.search(r"on dim (\d+)", title).group(1)))
        got = " ".join(k for _, k in sorted(hops, key=lambda h: h[0]))
        if got != quoted.group(1).strip():
            failures.append(f"ring.svg hops on dims {got}, README quotes {quoted.group(1)}")

if len(commands) < 10:
    failures.append(f"only {len(commands)} commands found in {readme}")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"lab README: {len(commands)} commands ran as it says")
