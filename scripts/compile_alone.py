#!/usr/bin/env python3
"""Checks that every C++ source a unity build bundles also compiles on its own.

A unity build compiles a target's files a few at a time as one, so a file
that leans on a declaration or include of the file before it in its bundle
builds there and fails in a plain build (the tour's). This compiles each
file that follows another in its bundle alone, syntax only, with its
bundle's own command line (a bundle's first file sees nothing before it).
Usage: scripts/compile_alone.py BUILD_DIR [JOBS]
"""
import json
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

build = Path(sys.argv[1]).resolve()
jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
bundled = re.compile(r"#include\s*<(.+\.cpp)>")
# Options that name the bundle's outputs: dropped, with their argument.
output_options = {"-o", "-MQ", "-MF", "-MT"}


def alone(entry, source):
    args = shlex.split(entry["command"])
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in output_options:
            skip = True
        elif a not in ("-c", "-MD", "-MMD") and a != entry["file"]:
            kept.append(a)
    return kept + ["-fsyntax-only", "-fdiagnostics-color=never", source]


bundles = [e for e in json.loads((build / "compile_commands.json").read_text())
           if "-unity" in e["file"]]
if not bundles:
    sys.exit(f"{build}: no unity bundles in compile_commands.json (configure with -Dunity=on)")
commands = []
for entry in bundles:
    text = (Path(entry["directory"]) / entry["file"]).read_text()
    for source in bundled.findall(text)[1:]:
        commands.append((source, alone(entry, source), entry["directory"]))


def check(item):
    source, args, cwd = item
    run = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    return source, run.returncode, run.stderr


failed = 0
with ThreadPoolExecutor(jobs) as pool:
    for source, code, errors in pool.map(check, commands):
        if code != 0:
            failed += 1
            print(f"{Path(source).resolve()}: does not compile on its own\n{errors}")
print(f"{len(commands) - failed} of {len(commands)} sources after the first of their bundle "
      "compile on their own")
sys.exit(1 if failed else 0)
