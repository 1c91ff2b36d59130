#!/usr/bin/env bash
# hcube run --trace/--svg and hcube draw end to end: the files they write, and
# the HTML page in headless Chromium (pictures.py checks them).
# usage: pictures.sh HCUBE pictures.py [FIND_DEADLOCK] (pictures.py draws
# every algorithm of the catalog too, for the layout check; FIND_DEADLOCK, the
# lab's program, writes its wait-for graph)
set -euo pipefail
hcube=$1
checks=$2
lab_deadlock=${3:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$hcube" run allgather --algo hypercube --dim 3 --trace "$dir/ag.json" --svg "$dir/ag.svg" >/dev/null
"$hcube" run allgather --algo hypercube --dim 3 --trace "$dir/ag-wall.json" --trace-clock wall >/dev/null
# Routed messages with congestion: alltoall pairwise on E-cube paths.
"$hcube" run alltoall --algo pairwise --dim 3 --words 4 --tw 1 --trace "$dir/a2a.json" \
    --svg "$dir/a2a.svg" >/dev/null
"$hcube" draw allgather --algo hypercube --dim 3 --out "$dir/ag.html" --svg-dir "$dir/steps" >/dev/null
# The CM-200 cycles at their defaults: M' = d words, all-port, all d cycles in use.
"$hcube" draw allgather --algo d-cycles --dim 3 --out "$dir/dc.html" >/dev/null
"$hcube" draw scatter --algo binomial --dim 3 --out "$dir/sc.html" --svg-dir "$dir/sc" >/dev/null
"$hcube" draw reduce-scatter --algo d-cycles --dim 3 --out "$dir/rs.html" >/dev/null
"$hcube" draw allreduce --algo d-cycles --dim 3 --out "$dir/ar.html" >/dev/null
"$hcube" draw alltoall --algo dimension-exchange --dim 3 --executor threads --svg-dir "$dir/a2a" >/dev/null
# Fibers draw what threads draw.
"$hcube" draw alltoall --algo dimension-exchange --dim 3 --executor fibers --svg-dir "$dir/a2a-fibers" \
    >/dev/null
diff -r "$dir/a2a" "$dir/a2a-fibers" >/dev/null || { echo "fibers drew another picture"; exit 1; }
"$hcube" draw descend --algo pipelined --dim 2 --words 8 --ports all --kernel prefix \
    --out "$dir/desc.html" --svg-dir "$dir/desc" >/dev/null

# A deadlock draws its wait-for graph and exits 1.
status=0
"$hcube" draw allgather --algo ring --dim 2 --link-capacity 0 --out "$dir/dl.html" \
    2>"$dir/dl.err" || status=$?
[ "$status" = 1 ] || { echo "deadlocking draw exited $status, expected 1"; exit 1; }
grep -q "drew the wait-for graph" "$dir/dl.err"
if [ -n "$lab_deadlock" ]; then
    status=0
    (cd "$dir" && "$lab_deadlock" >lab-deadlock.out) || status=$?
    [ "$status" = 1 ] || { echo "find_deadlock exited $status, expected 1"; exit 1; }
    [ -s "$dir/deadlock.svg" ] || { echo "find_deadlock wrote no deadlock.svg"; exit 1; }
fi

# Usage errors: exit 2 with one clear line.
expect_usage() { # expect_usage TEXT ARGS...
    local text=$1 out
    shift
    status=0
    out=$("$hcube" "$@" 2>&1) || status=$?
    [ "$status" = 2 ] || { echo "hcube $*: exit $status, expected 2"; exit 1; }
    grep -q "$text" <<<"$out" || { echo "hcube $*: '$out' does not say '$text'"; exit 1; }
}
expect_usage "give --out" draw allgather --dim 3
expect_usage "expected an integer in 0..6" draw allgather --dim 7 --out "$dir/x.html"
expect_usage "Perfetto" run allgather --dim 7 --svg "$dir/x.svg"
expect_usage "up to M = 64" draw descend --dim 3 --words 128 --out "$dir/x.html"
expect_usage "is not virtual or wall" run allgather --dim 2 --trace "$dir/x.json" --trace-clock cpu
expect_usage "cannot write" run allgather --dim 2 --trace "$dir/no/such/dir/x.json"

python3 "$checks" "$dir" "$hcube"
