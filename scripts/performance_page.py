#!/usr/bin/env python3
"""docs/performance.md from the outputs scripts/performance.sh collected.

Usage: performance_page.py DIR > docs/performance.md, or
performance_page.py DIR --headline for README.md's table of headline figures;
DIR holds
machine.txt, runtime-*.csv, latency.json, bw.json, allport.json,
collectives.csv, cm200.csv, cm200.txt and, when MPI was built, mpi.csv.
"""
import csv
import json
import os
import re
import statistics
import sys


def load_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x, digits=3):
    """A figure with `digits` significant digits, no exponent for usual sizes."""
    x = float(x)
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        text = f"{x:.{max(0, digits - len(str(int(abs(x)))))}f}"
    return text


def spread(median, lo, hi, digits=3):
    return f"{num(median, digits)} ({num(lo, digits)} - {num(hi, digits)})"


def size_text(b):
    b = int(b)
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def machine_section(m):
    rows = [
        ("CPU", m["cpu"]),
        ("cores", m["cores"]),
        ("kernel", m["kernel"]),
        ("compiler", f"{m['compiler']}, {m['buildtype']} build"),
        ("MPI", m["mpi"]),
        ("cores busy with other work just before (2 s)", m["busy"] + "%"),
        ("date", m["date"]),
    ]
    return table(("", ""), rows)


def runtime_rows(d, runs):
    """bench-runtime's rows over the runs: key -> (values, limits, per run (value, limit,
    verdict)), in order."""
    per_run = [load_csv(os.path.join(d, f"runtime-{r}.csv")) for r in range(1, runs + 1)]
    order, values, limits, verdicts = [], {}, {}, {}
    for rows in per_run:
        for r in rows:
            key = (r["metric"], r["d"], r["unit"])
            if key not in values:
                order.append(key)
                values[key], limits[key], verdicts[key] = [], [], []
            if r["value"] not in ("", "nan", "-nan"):
                values[key].append(float(r["value"]))
            if r["limit"]:
                limits[key].append(float(r["limit"]))
            verdicts[key].append((r["value"], r["limit"], r["verdict"]))
    return {key: (values[key], limits[key], verdicts[key]) for key in order}


def runtime_section(rows):
    """bench-runtime: each row's median over the runs, with min and max."""
    out = []
    for key, (v, lim, verdict) in rows.items():
        metric, dim, unit = key
        if not v:
            continue
        figure = spread(statistics.median(v), min(v), max(v))
        if lim:
            median_limit = statistics.median(lim)
            # A run that checked the limit says which side it is on.
            value, limit, met = next(x for x in verdict if x[1] and x[2] in ("ok", "MISSED"))
            at_most = (float(value) <= float(limit)) == (met == "ok")
            limit = f"{'<=' if at_most else '>='} {num(median_limit)}"
        else:
            limit = "(baseline)" if any(w in metric for w in ("raw", "memcpy", "barrier", "wake every", "bound", "switch", "hand-off")) else ""
        out.append((metric, dim, figure, unit, limit))
    return table(("figure", "d", "median (min - max)", "unit", "limit, measured in the same run"), out)


# The README's bench-runtime figures: what, its row and d, the peer beside it
# (its row and d), and the group of rows that measures both.
HEADLINE_RUNTIME = [
    ("link round trip, 2 nodes, threads", "link round trip (nodes <= cores), threads, ring", 1,
     "a raw cross-core spin round trip", "raw spin round trip", 1, "ping-pong"),
    ("all-link exchange bandwidth, d = 3, threads", "exchange_all bandwidth, all links, threads, ring", 3,
     "memcpy of the same bytes", "memcpy, same bytes as all links", 3, "bandwidth"),
    ("one word on every dimension in turn, d = 12, fibers", "12-step pattern alone, fibers, ring", 12,
     "the same with threads", "12-step pattern alone, threads, ring", 12, "pattern"),
    ("one-double allreduce, p = 64, fibers", "allreduce 1 double back to back, fibers", 6,
     "the same with threads", "allreduce 1 double back to back, threads", 6, "allreduce"),
    ("empty run(), d = 2, threads", "empty run(), back to back, threads", 2,
     "a barrier among 4 spinning threads", "barrier among 4 spinning threads", 2, "empty-run"),
    ("d = 16 (65,536 nodes) with fibers: start, allreduce, stop", "fibers start, allreduce, stop, median of 3", 16,
     "its max RSS", "max RSS of that", 16, "big-cube"),
]


def headline(rt, d, m):
    """The README's table: a few figures, each beside its peer, with the command."""
    def fig(metric, dim):
        key = next((k for k in rt if k[0] == metric and k[1] == str(dim)), None)
        if key is None or not rt[key][0]:
            return None
        v = rt[key][0]
        return f"{spread(statistics.median(v), min(v), max(v))} {key[2]}".strip()

    rows = []
    for what, metric, dim, peer_text, peer_metric, peer_dim, only in HEADLINE_RUNTIME:
        a, b = fig(metric, dim), fig(peer_metric, peer_dim)
        if a and b:
            rows.append((what, a, f"{peer_text}: {b}",
                         f"`build/bench/bench-runtime --quick --only {only}`"))
    mpi = os.path.join(d, "mpi.csv")
    if os.path.exists(mpi):
        for r in load_csv(mpi):
            if r["op"] == "alltoall-pairwise" and int(r["bytes_per_node"]) > 8:
                rows.append((f"all-to-all personalized, {r['ranks']} MPI ranks, {size_text(r['bytes_per_node'])} per pair, us",
                             spread(r["hcube_mpi_us"], r["hcube_mpi_min"], r["hcube_mpi_max"]),
                             "Open MPI's `MPI_Alltoall`: " + spread(r["mpi_us"], r["mpi_min"], r["mpi_max"]),
                             f"`mpirun -np {r['ranks']} build/bench/bench-mpi --quick`"))
    machine = (f"Measured by `{m['command']}` on {m['cpu']} ({m['cores']} cores, {m['kernel']}, "
               f"{m['compiler']}), {m['date']}, cores {m['busy']}% busy with other work before it; medians with "
               "the least and largest beside them, each beside its peer measured in the same run. "
               "All figures, and how to read them: [docs/performance.md](docs/performance.md).")
    return table(("figure", "measured", "beside it, in the same run", "command"), rows) + "\n\n" + machine + "\n"


def bench_rows(path):
    with open(path) as f:
        return json.load(f)


def link_sections(d):
    lat = bench_rows(os.path.join(d, "latency.json"))
    bw = bench_rows(os.path.join(d, "bw.json"))
    ap = bench_rows(os.path.join(d, "allport.json"))
    latency = table(
        ("message", "latency, us: median (min - max)", "raw, us: half a cross-core cache-line round trip + memcpy (a reference, not a bound)"),
        [(size_text(r["size_bytes"]), spread(r["latency_us"], r["min_us"], r["max_us"]), num(r["raw_us"])) for r in lat["rows"]],
    )
    bandwidth = table(
        ("message", "bandwidth, MB/s: median (min - max)", "memcpy of the same bytes, MB/s"),
        [(size_text(r["size_bytes"]), spread(r["bandwidth_MBps"], r["min_MBps"], r["max_MBps"]), num(r["memcpy_MBps"])) for r in bw["rows"]],
    )
    allport = table(
        ("links per node", "message", "aggregate bandwidth, MB/s: median (min - max)", "memcpy of the same bytes, MB/s"),
        [(r["links"], size_text(r["size_bytes"]), spread(r["bandwidth_MBps"], r["min_MBps"], r["max_MBps"]), num(r["memcpy_MBps"])) for r in ap["rows"]],
    )
    return lat, latency, bandwidth, ap, allport


def collectives_section(d):
    rows = [r for r in load_csv(os.path.join(d, "collectives.csv")) if r["status"] == "ok"]
    out = {}
    for m in sorted({int(r["words"]) for r in rows}):
        at_m = sorted((r for r in rows if int(r["words"]) == m), key=lambda r: r["op"])
        fastest = {}
        for r in at_m:
            t = float(r["wall_median_s"])
            fastest[r["op"]] = min(fastest.get(r["op"], t), t)
        lines = []
        for r in at_m:
            t = float(r["wall_median_s"])
            lines.append((
                r["op"], r["algo"], r["ports"],
                spread(t * 1e6, float(r["wall_min_s"]) * 1e6, float(r["wall_max_s"]) * 1e6),
                "fastest" if t == fastest[r["op"]] else f"{num(t / fastest[r['op']], 2)}x",
                num(r["needed_MBps"]),
            ))
        out[m] = (at_m[0]["dim"] if at_m else "?", table(
            ("operation", "algorithm", "ports", "us per call: median (min - max)", "against the operation's fastest", "needed bytes / median time, MB/s"),
            lines))
    return out


def cm200_section(d):
    rows = load_csv(os.path.join(d, "cm200.csv"))
    with open(os.path.join(d, "cm200.txt")) as f:
        summary = f.read()
    # The CM-200's Table 18 for this many nodes, as bench-cm200 prints it in brackets:
    # one cycle, d cycles (no reordering), then with reordering, then index motion.
    nodes = rows[0]["nodes"] if rows else "?"
    columns = ["one-cycle/arrival", "d-cycles/arrival", "one-cycle/computation",
               "d-cycles/computation", "d-cycles/motion"]
    published = {}
    rates = summary[summary.find("data motion rate"):]
    m = re.search(r"^\s*" + nodes + r"\s+(.*)$", rates, re.M)
    if m:
        published = dict(zip(columns, re.findall(r"\[([0-9.]+)\]", m.group(1))))
    what = {"arrival": "no reordering", "computation": "index computed, reordered",
            "motion": "index moved, reordered"}
    lines = []
    for r in rows:
        per_node = float(r["rate_mb_per_s_per_node"])
        wall = float(r["wall_median_s"])
        fast = per_node * wall / float(r["wall_min_s"])
        slow = per_node * wall / float(r["wall_max_s"])
        label = f"{r['algo']}, {what.get(r['index'], r['index'])}" if r["index"] else r["algo"]
        lines.append((label, spread(per_node, slow, fast),
                      published.get(f"{r['algo']}/{r['index']}", "")))
    return nodes, rows[0]["words"] if rows else "?", table(
        ("algorithm", "MB/s per node: median (min - max)", "the CM-200, Table 18 (MB/s per node)"), lines)


def mpi_section(d):
    rows = load_csv(os.path.join(d, "mpi.csv"))
    lines = [(
        r["op"], size_text(r["bytes_per_node"]),
        spread(r["hcube_mpi_us"], r["hcube_mpi_min"], r["hcube_mpi_max"]),
        spread(r["mpi_us"], r["mpi_min"], r["mpi_max"]),
        spread(r["emulator_us"], r["emulator_min"], r["emulator_max"]),
        num(r["hcube_over_mpi"], 2),
        num(r["to_router_per_routed"], 3) if float(r["to_router_per_routed"]) else "",
    ) for r in rows]
    return rows[0]["ranks"] if rows else "?", table(
        ("operation", "per node", "hcube over MPI, us", "MPI's own collective, us", "in process, us", "hcube / MPI",
         "messages to rank 0's router per routed message"), lines)


def main():
    d = sys.argv[1]
    m = dict(line.rstrip("\n").split("=", 1) for line in open(os.path.join(d, "machine.txt")))
    runs = int(m["runtime_runs"])
    rt = runtime_rows(d, runs)
    if sys.argv[2:] == ["--headline"]:
        sys.stdout.write(headline(rt, d, m))
        return
    lat, latency, bandwidth, ap, allport = link_sections(d)
    colls = collectives_section(d)
    nodes, words, cm200 = cm200_section(d)
    p = []
    p.append("# Performance\n")
    p.append(f"Written by `{m['command']}` (format version {m['format_version']}); run it "
             "to measure your own machine. Every figure is a median with the least and the "
             "largest sample beside it, and sits next to the limit or the peer it is compared "
             "with, measured in the same run, so that a slow moment of a shared machine shows "
             "in both. Compare a figure with its limit rather than with another machine's. "
             "Why the runtime is built to reach these limits: [design.md](design.md).\n")
    p.append("## The machine\n")
    p.append(machine_section(m) + "\n")
    p.append("## The runtime\n")
    p.append(f"`build/bench/bench-runtime --quick`, {runs} runs; each figure the median of "
             "the runs' figures (themselves medians of the run's samples), with the least and "
             "the largest. The limit is the benchmark's own, computed in each run from a "
             "baseline it measured then (a raw cross-core spin round trip, memcpy of the same "
             "bytes, a barrier among spinning threads, a context switch among 4096 threads); "
             "`(baseline)` marks those baselines. `d = 12 step pattern`: one word on every "
             "dimension in turn, a run with it minus an empty run.\n")
    p.append(runtime_section(rt) + "\n")
    p.append("## The links: `hcube bench`\n")
    p.append(f"`build/cli/hcube bench latency|bw|allport` ({lat['executor']}, {lat['links']} "
             f"links, link capacity {lat['link_capacity']}; {lat['samples']} samples per size, "
             "each taking turns with its baseline; options in "
             "[cli.md](cli.md#hcube-bench)).\n")
    p.append("Latency: ping-pong on one link, half the round trip.\n")
    p.append(latency + "\n")
    p.append("Bandwidth: windows of messages on one link.\n")
    p.append(bandwidth + "\n")
    p.append(f"All-port: every node of a {ap['dim']}-cube exchanges on k links at once "
             "(`exchange_all`), the aggregate of all nodes.\n")
    p.append(allport + "\n")
    p.append("## The collectives\n")
    for words, (dim, text) in colls.items():
        p.append(f"`build/bench/bench-collectives --quick --dims 6 --words 1,4096 --runs 5`: "
                 f"d = {dim}, m = {words} words of 8 bytes, threads. Each algorithm beside the "
                 "fastest of its operation in the same run; the rate is the bytes the operation "
                 "must move (its lower bound) over the median time.\n")
        p.append(text + "\n")
    p.append("## The CM-200's data motion rate\n")
    p.append(f"`build/bench/bench-cm200 --rate 6 --runs 5`: all-to-all broadcast on {nodes} "
             f"nodes, M' = {words} 64-bit elements per node, all-port, Gray-code order "
             "(Mathur & Johnsson, Table 18); bytes delivered over wall time, per node. The "
             "algorithms are each other's peers in the run; the CM-200's figures for as many "
             "nodes are beside them.\n")
    p.append(cm200 + "\n")
    p.append("## MPI\n")
    if os.path.exists(os.path.join(d, "mpi.csv")):
        ranks, text = mpi_section(d)
        p.append(f"`mpirun -np {ranks} --oversubscribe build/bench/bench-mpi --quick`: one "
                 "node per rank; hcube's collectives over MPI ranks, the MPI library's own "
                 "collective and the in-process emulator with the same p, in the same run "
                 "(docs/mpi.md).\n")
        p.append(text + "\n")
    else:
        p.append("The MPI backend was not built here, so bench-mpi did not run.\n")
    sys.stdout.write("\n".join(p))


if __name__ == "__main__":
    main()
