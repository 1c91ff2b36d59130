#!/usr/bin/env bash
# The MPI backend's failure paths that end the whole job with MPI_Abort and a
# readable message (tests/mpi/test_mpi.cpp, the "abort:" cases): ranks whose
# nodes stay blocked past config::mpi_quiet_limit while rank 0 cannot see it,
# and a rank that never finishes or stops answering.
# Usage: failures.sh MPIRUN TEST-MPI
set -uo pipefail
mpirun=$1
test_mpi=$2
args=(--oversubscribe --bind-to none --mca btl self,vader --mca oob_tcp_if_include lo)
failed=0
expect() { # expect NAME RANKS PATTERN...: the case must fail within 60 s, saying each PATTERN
    local name=$1 ranks=$2
    shift 2
    local out status before=$failed
    out=$(timeout 60 "$mpirun" -np "$ranks" "${args[@]}" "$test_mpi" --no-skip -tc="$name" 2>&1)
    status=$?
    if [ "$status" -eq 0 ] || [ "$status" -eq 124 ]; then
        echo "FAIL: '$name' on $ranks ranks ended with status $status (expected an abort)"
        failed=1
    fi
    for pattern in "$@"; do
        if ! grep -q -- "$pattern" <<<"$out"; then
            echo "FAIL: '$name' on $ranks ranks: no '$pattern' in its output:"
            echo "$out" | tail -n 20
            failed=1
        fi
    done
    [ "$failed" = "$before" ] && echo "ok: '$name' on $ranks ranks"
}
# Rank 1's nodes 4..7 wait on finished nodes while node 0 sleeps on.
expect "abort: nodes blocked*" 2 "rank 1 of 2: every node of this rank stayed blocked for 300 ms" \
    "node 4: recv on dim 2 from node 0" "node 7: recv on dim 2 from node 3"
# One node per rank: the node runs on the caller's thread and watches itself.
expect "abort: nodes blocked*" 8 "stayed blocked for 300 ms" "node [4-7]: recv on dim 2 from node [0-3]"
expect "the job's ranks share the cube*" 3 "3 ranks cannot share a 3-cube"
# A rank that does not finish or stops answering is named, not waited for.
expect "abort: a node that never returns*" 2 "rank 0 of 2: rank 1 has not finished its nodes" \
    "nothing moved for 300 ms"
expect "abort: a node that never returns*" 8 "rank 7 has not finished its nodes"
expect "abort: a rank that stops calling MPI*" 4 "rank 3 did not answer within 300 ms" \
    "combining a verdict"
exit $failed
