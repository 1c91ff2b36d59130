#!/usr/bin/env python3
"""The tables of docs/cost-model.md: predicted (virtual time under the
calibrated model) against measured wall time per call for the catalog
algorithms, d = 2..6, m = 1..65536 words, and how often `auto --cost
calibrated` chose the measured fastest.

Usage: cost_model_table.py HCUBE [--dims 2-6] [--words 1,16,256,4096,65536]
                           [--ops broadcast,...] [--samples 5]
                           [--seconds 0.05 | --iterations N] [--twice]
                           [--csv FILE]
Needs a calibration (hcube calibrate) for the executor and links it runs
(HCUBE_EXECUTOR, HCUBE_LINKS). Markdown on stdout; one hcube bench collective
per (op, d, m), so a point too large for the buffers is skipped alone.

--twice measures the grid a second time and counts how often the two
measurements name the same fastest algorithm: the most any choice made from
one measurement can agree with another, on this machine.
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
    ap.add_argument("--samples", type=int, default=5)
    # Time per algorithm and point, as hcube calibrate's survey (--op-seconds):
    # a sample of a few short calls is one scheduler tick (4 ms) or none.
    ap.add_argument("--seconds", type=float, default=0.05)
    ap.add_argument("--iterations", type=int, help="calls per sample instead of --seconds")
    ap.add_argument("--twice", action="store_true")
    ap.add_argument("--csv")
    a = ap.parse_args()
    timing = (["--iterations", str(a.iterations)] if a.iterations
              else ["--seconds", str(a.seconds)])

    def measure(skipped):
        rows = []
        for op in a.ops.split(","):
            for d in a.dims:
                for m in a.words.split(","):
                    cmd = [a.hcube, "bench", "collective", op, "--dim", str(d), "--sizes", m,
                           "--samples", str(a.samples), "--json", *timing]
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    if r.returncode != 0:
                        skipped.append(f"{op} d = {d} m = {m}: {r.stderr.strip()}")
                        continue
                    for row in json.loads(r.stdout)["rows"]:
                        rows.append({"op": op, "dim": d, **row})
                    print(f"{op} d={d} m={m}", file=sys.stderr, flush=True)
        return rows

    skipped = []
    rows = measure(skipped)
    # (op, d, m) -> the algorithm the second measurement found fastest
    again = {}
    if a.twice:
        for r in measure([]):
            k = (r["op"], r["dim"], r["words"])
            if k not in again or r["time_us"] < again[k][1]:
                again[k] = (r["algo"], r["time_us"])
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
    # Three figures: strict (auto's choice has the least median), within 10%
    # of the least median, and within noise (the choice's samples reach down
    # into the fastest's: its min at most the fastest's max). With --twice a
    # fourth: how often a second measurement named the same fastest.
    print("| operation | sizes compared | auto chose the fastest | agreement | "
          "within 10% of the fastest | within noise |" + (" measured twice: same fastest |"
                                                          if again else ""))
    print("|---|---|---|---|---|---|" + ("---|" if again else ""))
    total = agreed = near = tied = repeated = 0

    def twice(n, same):
        return f" {same / n:.0%} |" if again else ""

    for op in a.ops.split(","):
        n = ok = close = noise = same = 0
        for d in a.dims:
            for m in a.words.split(","):
                at = [r for r in rows if r["op"] == op and r["dim"] == d and r["words"] == int(m)]
                if len(at) < 2:
                    continue
                n += 1
                chosen = [r for r in at if r["auto"]]
                best = min(at, key=lambda r: r["time_us"])
                ok += bool(chosen and chosen[0]["fastest"])
                close += bool(chosen and chosen[0]["time_us"] <= 1.1 * best["time_us"])
                noise += bool(chosen and chosen[0]["min_us"] <= best["max_us"])
                same += again.get((op, d, int(m)), ("",))[0] == best["algo"]
        if n:
            print(f"| {op} | {n} | {ok} | {ok / n:.0%} | {close / n:.0%} | {noise / n:.0%} |"
                  + twice(n, same))
        total, agreed, near, tied = total + n, agreed + ok, near + close, tied + noise
        repeated += same
    if total:
        print(f"| all | {total} | {agreed} | {agreed / total:.0%} | {near / total:.0%} | "
              f"{tied / total:.0%} |" + twice(total, repeated))
    # Where auto missed: what it chose, what was fastest, and by how much.
    print()
    print("| op | d | m | auto chose | median us | fastest | median us |")
    print("|---|---|---|---|---|---|---|")
    for op in a.ops.split(","):
        for d in a.dims:
            for m in a.words.split(","):
                at = [r for r in rows if r["op"] == op and r["dim"] == d and r["words"] == int(m)]
                chosen = [r for r in at if r["auto"]]
                best = min(at, key=lambda r: r["time_us"]) if len(at) >= 2 else None
                if best and chosen and not chosen[0]["fastest"]:
                    print(f"| {op} | {d} | {m} | {chosen[0]['algo']} | "
                          f"{chosen[0]['time_us']:.4g} | {best['algo']} | {best['time_us']:.4g} |")
    for s in skipped:
        print(f"\nskipped: {s}", file=sys.stderr)


if __name__ == "__main__":
    main()
