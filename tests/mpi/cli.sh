#!/usr/bin/env bash
# `hcube run --backend mpi` under mpirun: one JSON line for the whole job (rank
# 0 prints), verified on every rank, with the in-process run's virtual time,
# steps, messages and bytes, plus backend and ranks; with --trace, rank 0
# writes the whole job's trace, event for event the in-process one; without
# --backend mpi, hcube run under mpirun refuses; a usage error is printed once;
# the report says when the ranks outnumber the CPUs (oversubscribed); with
# link capacity 0 the ring allgather deadlocks and is told as in one process;
# the messages other ranks sent rank 0's router are counted for routed runs.
# Usage: cli.sh MPIRUN HCUBE
set -uo pipefail
mpirun=$1
hcube=$2
args=(--oversubscribe --bind-to none --mca btl self,vader --mca oob_tcp_if_include lo)
failed=0
same() { # same RANKS RUN-ARGS...: the run over RANKS ranks reports what the in-process run does
    local ranks=$1
    shift
    local here there
    here=$("$hcube" run "$@" --json) || { echo "FAIL: hcube run $* (in-process)"; failed=1; return; }
    there=$(timeout 120 "$mpirun" -np "$ranks" "${args[@]}" "$hcube" run "$@" --backend mpi --json)
    if [ $? -ne 0 ]; then
        echo "FAIL: mpirun -np $ranks hcube run $* --backend mpi"
        failed=1
        return
    fi
    python3 - "$ranks" "$here" "$there" <<'PY' || { echo "FAIL: $ranks ranks: hcube run $*"; failed=1; }
import json, os, sys
ranks = int(sys.argv[1])
here = json.loads(sys.argv[2])
lines = sys.argv[3].strip().splitlines()
assert len(lines) == 1, f"expected one JSON line from the job, got {len(lines)}"
there = json.loads(lines[0])
assert there["backend"] == "mpi" and there["ranks"] == ranks, (there["backend"], there["ranks"])
walls = there["rank_wall_seconds"]
assert len(walls) == ranks and max(walls) == there["wall_seconds"] and min(walls) > 0, walls
assert len(here["rank_wall_seconds"]) == 1
assert here["backend"] == "in-process" and here["ranks"] == 1 and here["oversubscribed"] is False
# One host: oversubscribed when the ranks outnumber its CPUs online.
assert there["oversubscribed"] is (ranks > os.cpu_count()), (ranks, os.cpu_count())
assert there["verified"] is True, there
for key in ("virtual_time", "steps", "messages", "bytes", "formula_time", "algo", "executor"):
    assert here[key] == there[key], f"{key}: in-process {here[key]}, mpi {there[key]}"
# Rank 0's router places every routed message: another rank submits each one
# it sends to a node off rank 0, and tells the router when each node finishes.
assert here["messages_to_router"] == 0, here["messages_to_router"]
routed = there["algo"] in ("pairwise", "ecube")
assert (there["messages_to_router"] > 0) is routed, (there["algo"], there["messages_to_router"])
if there["algo"] == "pairwise":
    off = there["nodes"] - there["nodes"] // ranks  # nodes on other ranks than 0
    least = off * (off - 1) + off
    assert there["messages_to_router"] >= least, (there["messages_to_router"], least)
PY
    [ "$failed" = 0 ] && echo "ok: $ranks ranks: hcube run $*"
}
same_trace() { # same_trace RANKS RUN-ARGS...: rank 0's --trace file equals the in-process one
    local ranks=$1
    shift
    local dir
    dir=$(mktemp -d)
    "$hcube" run "$@" --trace "$dir/here.json" >/dev/null &&
        timeout 120 "$mpirun" -np "$ranks" "${args[@]}" "$hcube" run "$@" --backend mpi \
            --trace "$dir/there.json" >/dev/null &&
        python3 - "$dir/here.json" "$dir/there.json" <<'PY' && echo "ok: $ranks ranks: the trace of hcube run $*" || { echo "FAIL: $ranks ranks: trace of hcube run $*"; failed=1; }
import json, sys
here, there = (json.load(open(f)) for f in sys.argv[1:])
assert here["traceEvents"] == there["traceEvents"], "the events differ"
flows = [e for e in there["traceEvents"] if e["ph"] == "s"]
assert len(flows) == there["otherData"]["messages"] > 0, (len(flows), there["otherData"])
PY
    rm -rf "$dir"
}
same 4 allreduce --dim 4 --words 100 --tw 1
same 8 allgather --dim 3 --algo d-cycles --ports all --words 6 --tw 1
same 2 alltoall --dim 3 --algo dimension-exchange --words 3 --tw 2
same 4 broadcast --dim 4 --root 5 --words 1000 --tw 1
same 2 scan --dim 2 --words 7
same 4 reduce-scatter --dim 4 --words 5 --tw 1 --executor fibers
same 4 alltoall --dim 3 --algo pairwise --words 3 --tw 1
same 8 shift --dim 3 --algo ecube --ring gray --words 4 --tw 1
same_trace 4 allgather --dim 3 --words 2 --tw 1
same_trace 8 alltoall --dim 3 --algo pairwise --words 2 --tw 1
# Under mpirun without the MPI backend every rank would emulate the whole
# machine alone: hcube run refuses, naming the fix, and runs nothing.
# Rank 0 alone says so: every rank read the same command line.
out=$(timeout 120 "$mpirun" -np 2 "${args[@]}" "$hcube" run allreduce --dim 2 2>&1)
if [ $? -ne 2 ] || [ "$(grep -c "one of 2 processes mpirun started.*add --backend mpi" <<<"$out")" != 1 ] ||
    grep -q "virtual time" <<<"$out"; then
    echo "FAIL: mpirun -np 2 hcube run without --backend mpi: $out"
    failed=1
else
    echo "ok: mpirun -np 2 hcube run without --backend mpi is refused"
fi
# The text report says when the ranks outnumber the CPUs.
over=$(timeout 120 "$mpirun" -np 8 "${args[@]}" "$hcube" run allreduce --dim 3 --backend mpi 2>&1)
if [ "$(nproc)" -lt 8 ] && ! grep -q "^  backend .*; oversubscribed: a host ran more ranks than it has CPUs" <<<"$over"; then
    echo "FAIL: 8 ranks on $(nproc) CPUs: no oversubscribed in the report: $over"
    failed=1
else
    echo "ok: 8 ranks on $(nproc) CPUs: the report says oversubscribed when they outnumber them"
fi
# A usage error is told once, by rank 0, and every rank exits with status 2.
out=$(timeout 120 "$mpirun" -np 4 "${args[@]}" "$hcube" run broadcast --dim 2 --root 9 --backend mpi 2>&1)
if [ $? -ne 2 ] || [ "$(grep -c "hcube run: --root 9 is outside 0..3 for --dim 2" <<<"$out")" != 1 ]; then
    echo "FAIL: a usage error on 4 ranks is not printed exactly once: $out"
    failed=1
else
    echo "ok: a usage error on 4 ranks is printed once"
fi
# With link capacity 0 the ring deadlocks (it needs buffered links) across
# ranks as in one process: the same report and hint, told once, well before
# config::mpi_quiet_limit (10 s).
ring=(run allgather --algo ring --link-capacity 0 --dim 3)
told() { grep -E "^(hcube run: |  node |hint: )"; }
here=$("$hcube" "${ring[@]}" 2>&1 | told)
for ranks in 2 4; do
    start=$(date +%s%N)
    out=$(timeout 120 "$mpirun" -np "$ranks" "${args[@]}" "$hcube" "${ring[@]}" --backend mpi 2>&1)
    status=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    if [ $status -ne 1 ] || [ "$(told <<<"$out")" != "$here" ] || [ $ms -ge 9000 ]; then
        echo "FAIL: the ring's deadlock on $ranks ranks: status $status after $ms ms: $out"
        echo "in one process: $here"
        failed=1
    else
        echo "ok: the ring's deadlock on $ranks ranks is told once, as in one process, after $ms ms (mpirun included)"
    fi
done
exit $failed
