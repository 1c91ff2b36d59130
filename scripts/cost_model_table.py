#!/usr/bin/env python3
"""The tables of docs/cost-model.md: predicted (virtual time under the
calibrated model) against measured wall time per call for the catalog
algorithms, d = 2..6, m = 1..65536 words, and how often `auto --cost
calibrated` chose the measured fastest.

Usage: cost_model_table.py HCUBE [--dims 2-6] [--words 1,16,256,4096,65536]
                           [--ops broadcast,...] [--samples 3] [--iterations 1]
                           [--csv FILE]
Needs a calibration (hcube calibrate) for the executor and links it runs
(HCUBE_EXECUTOR, HCUBE_LINKS). Markdown on stdout; one hcube bench collective
per (op, d, m), so a point too large for the buffers is skipped alone.
"""
import argparse
import csv
import json
import statistics
import subprocess
import sys

OPS = "broadcast,reduce,scatter,gather,allgather,reduce-scatter,allreduce,alltoall,shift"


def dims(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hcube")
    ap.add_argument("--dims", type=dims, default=dims("2-6"))
    ap.add_argument("--words", default="1,16,256,4096,65536")
    ap.add_argument("--ops", default=OPS)
    ap.add_argument("--samples", type=int, default=3)
    # Calls per sample: with 1, a sample of a short call on a loaded machine
    # is often one scheduler tick (4 ms) or none.
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--csv")
    a = ap.parse_args()
    rows, skipped = [], []
    for op in a.ops.split(","):
        for d in a.dims:
            for m in a.words.split(","):
                cmd = [a.hcube, "bench", "collective", op, "--dim", str(d), "--sizes", m,
                       "--iterations", str(a.iterations), "--samples", str(a.samples), "--json"]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    skipped.append(f"{op} d = {d} m = {m}: {r.stderr.strip()}")
                    continue
                for row in json.loads(r.stdout)["rows"]:
                    rows.append({"op": op, "dim": d, **row})
                print(f"{op} d={d} m={m}", file=sys.stderr, flush=True)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)

    def ratio(r):
        return r["time_us"] / r["predicted_us"]

    print("| d | m (words) | points | measured / predicted: median | min | max |")
    print("|---|---|---|---|---|---|")
    for d in a.dims:
        for m in a.words.split(","):
            rs = [ratio(r) for r in rows if r["dim"] == d and r["words"] == int(m)]
            if rs:
                print(f"| {d} | {m} | {len(rs)} | {statistics.median(rs):.3g} | "
                      f"{min(rs):.3g} | {max(rs):.3g} |")
    print()
    print("| operation | sizes compared | auto chose the fastest | agreement | "
          "within 10% of the fastest |")
    print("|---|---|---|---|---|")
    total = agreed = near = 0
    for op in a.ops.split(","):
        n = ok = close = 0
        for d in a.dims:
            for m in a.words.split(","):
                at = [r for r in rows if r["op"] == op and r["dim"] == d and r["words"] == int(m)]
                if len(at) < 2:
                    continue
                n += 1
                chosen = [r for r in at if r["auto"]]
                best = min(r["time_us"] for r in at)
                ok += bool(chosen and chosen[0]["fastest"])
                close += bool(chosen and chosen[0]["time_us"] <= 1.1 * best)
        if n:
            print(f"| {op} | {n} | {ok} | {ok / n:.0%} | {close / n:.0%} |")
        total, agreed, near = total + n, agreed + ok, near + close
    if total:
        print(f"| all | {total} | {agreed} | {agreed / total:.0%} | {near / total:.0%} |")
    for s in skipped:
        print(f"\nskipped: {s}", file=sys.stderr)


if __name__ == "__main__":
    main()
