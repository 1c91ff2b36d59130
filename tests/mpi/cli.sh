#!/usr/bin/env bash
# `hcube run --backend mpi` under mpirun: one JSON line for the whole job (rank
# 0 prints), verified on every rank, with the in-process run's virtual time,
# steps, messages and bytes, plus backend and ranks.
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
import json, sys
ranks = int(sys.argv[1])
here = json.loads(sys.argv[2])
lines = sys.argv[3].strip().splitlines()
assert len(lines) == 1, f"expected one JSON line from the job, got {len(lines)}"
there = json.loads(lines[0])
assert there["backend"] == "mpi" and there["ranks"] == ranks, (there["backend"], there["ranks"])
assert here["backend"] == "in-process" and here["ranks"] == 1
assert there["verified"] is True, there
for key in ("virtual_time", "steps", "messages", "bytes", "formula_time", "algo", "executor"):
    assert here[key] == there[key], f"{key}: in-process {here[key]}, mpi {there[key]}"
PY
    [ "$failed" = 0 ] && echo "ok: $ranks ranks: hcube run $*"
}
same 4 allreduce --dim 4 --words 100 --tw 1
same 8 allgather --dim 3 --algo d-cycles --ports all --words 6 --tw 1
same 2 alltoall --dim 3 --algo dimension-exchange --words 3 --tw 2
same 4 broadcast --dim 4 --root 5 --words 1000 --tw 1
same 2 scan --dim 2 --words 7
same 4 reduce-scatter --dim 4 --words 5 --tw 1 --executor fibers
exit $failed
