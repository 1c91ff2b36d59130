#!/usr/bin/env bash
# What every subcommand of `hcube` shares: its own --help (status 0), usage
# errors with status 2 and one stderr line naming the value, the same for an
# unknown command, and the JSON keys of `run` and `info` in their documented
# order (a change there breaks scripts: update docs/cli.md with it).
# Usage: cli_commands.sh PATH/TO/hcube
# shellcheck source=../support/cli_common.sh
source "$(dirname "$0")/../support/cli_common.sh"

# --help of each subcommand: status 0, its own usage line and options.
for cmd in info list run; do
    out=$("$hcube" "$cmd" --help) || fail "$cmd --help: exit status $?"
    expect_line "$out" "^Usage: .*$cmd" "$cmd --help usage line"
    expect_line "$out" '--help' "$cmd --help lists --help"
    out=$("$hcube" "$cmd" -h) || fail "$cmd -h: exit status $?"
done
expect_line "$("$hcube" info --help)" '--dim' "info --help lists --dim"
expect_line "$("$hcube" run --help)" '--link-capacity' "run --help lists --link-capacity"
for flag in --executor --workers --stack-bytes; do
    expect_line "$("$hcube" run --help)" "$flag" "run --help lists $flag"
    expect_line "$("$hcube" draw --help)" "$flag" "draw --help lists $flag"
done
expect_line "$("$hcube" run --help)" '--kernel' "run --help lists catalog options"
for top in --help -h help; do
    out=$("$hcube" $top) || fail "hcube $top: exit status $?"
    expect_line "$out" '^ *run ' "hcube $top lists run"
done

usage_error "hcube: unknown command 'rnu' (did you mean run?)" rnu
# Under a launcher, a usage error is rank 0's to tell, with status 2; the other
# ranks exit quietly, so that mpirun cannot stop rank 0 before it has told.
for args in "rnu" "run broadcast --dim 2 --root 9 --backend mpi"; do
    # shellcheck disable=SC2086
    out=$(OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=1 "$hcube" $args 2>&1)
    rc=$?
    [ "$rc" -eq 0 ] && [ -z "$out" ] || fail "hcube $args as rank 1 of 4: status $rc, printed '$out'"
done
OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 usage_error "--root 9 is outside 0..3 for --dim 2" \
    run broadcast --dim 2 --root 9 --backend mpi
usage_error "hcube info: unknown option '--jsn' (did you mean --json?)" info --dim 2 --jsn
usage_error "hcube info: --dim 'x' is not an integer in 0..20" info --dim x
# One memory figure is the estimate runs are checked against, the others what nodes touch.
out=$("$hcube" info --dim 4) || fail "info --dim 4: exit status $?"
expect_line "$out" '^memory \(estimate\) +[0-9.]+ [KMG]i?B +\(what a run is checked against' "info memory estimate"
usage_error "hcube info: --dim needs a value" info --dim
usage_error "hcube info: --dim given twice" info --dim 2 --dim 3
usage_error "hcube info: unexpected argument 'extra'" info --dim 2 extra
usage_error "hcube list: unexpected argument 'extra'" list extra
usage_error "hcube list: unknown option '--json'" list --json
usage_error "hcube run: unknown option '--dimm' (did you mean --dim?)" run alltoall --dimm 3
usage_error "hcube run: --ports 'both' is not single or all" run alltoall --ports both
usage_error "hcube run: unexpected argument 'extra'" run alltoall extra
usage_error "hcube run: --executor 'green' is not threads or fibers" run alltoall --executor green
usage_error "hcube draw: --executor 'green' is not threads or fibers" draw alltoall --executor green
# Arguments of dashes alone name no option, in every subcommand.
for cmd in info list run draw bench calibrate; do
    for arg in --=3 -=3 --; do
        usage_error "hcube $cmd: '$arg' is not an option: options are --NAME or --NAME VALUE" \
            "$cmd" "$arg"
    done
done
usage_error "hcube run: '--' is not an option" run -- broadcast
# With --json an error is also one JSON object on stdout, for scripts.
usage_error "hcube run: --dim 'x' is not an integer" run broadcast --dim x --json
usage_error "hcube info: --dim '99' is out of range" info --dim 99 --json
usage_error "hcube run: unknown operation 'bcast'" run bcast --json
out=$("$hcube" run allgather --algo ring --dim 2 --link-capacity 0 --json 2>/dev/null)
rc=$?
[ "$rc" -eq 1 ] || fail "run --json of a deadlock: exit status $rc, expected 1"
python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["exit_status"] == 1 and "deadlock" in j["error"], j' "$out" ||
    fail "run --json of a deadlock: stdout is not the error as JSON: $out"
# JSON numbers read as the text prints them: the costs given and the virtual
# time they make, never 1.9639999999999998e-05 for 1.964e-05.
out=$("$hcube" run broadcast --dim 1 --words 1 --ts 1.964e-05 --tw 0 --json) ||
    fail "run --json with --ts 1.964e-05: exit status $?"
grep -q '"ts": 1.964e-05, "tw": 0, .*"virtual_time": 1.964e-05, ' <<<"$out" ||
    fail "run --json with --ts 1.964e-05: $out"
# hcube draw: --dim within what it draws (its help says so), the outputs and
# the memory checked before the run.
tmp=$(mktemp -d)
expect_line "$("$hcube" draw --help)" '--dim D .*up to 6 \(64 nodes\)' "draw --help: --dim up to 6"
usage_error "hcube draw: --dim '-1' is out of range (expected an integer in 0..6)" \
    draw allgather --dim -1 --out "$tmp/x.html"
usage_error "hcube draw: --dim '7' is out of range (expected an integer in 0..6)" \
    draw allgather --dim 7 --out "$tmp/x.html"
usage_error "hcube draw: cannot create --svg-dir /proc/nope: " draw allgather --dim 2 --svg-dir /proc/nope
usage_error "hcube draw: cannot write /nonexistent/x.html" draw allgather --dim 2 --out /nonexistent/x.html
usage_error "hcube draw: drawing allgather hypercube with m = 10000000 on 64 nodes needs about" \
    draw allgather --algo hypercube --dim 6 --words 10000000 --out "$tmp/x.html"
# descend draws with its defaults, M = N as hcube run takes it.
for algo in direct pipelined; do
    out=$("$hcube" draw descend --algo "$algo" --dim 3 --out "$tmp/x.html" 2>&1) ||
        fail "draw descend --algo $algo --dim 3: exit status $?: $out"
    expect_line "$out" "^descend $algo on a 3-cube \(8 nodes\), m = 8, " "draw descend $algo: M = N"
done
# hcube run: --trace and --svg checked before the run. The runs deadlock
# (exit 1) if they start, and a failed check writes no file.
for opt in --trace --svg; do
    usage_error "hcube run: $opt /nonexistent/x: cannot write it (no directory /nonexistent)" \
        run allgather --algo ring --dim 2 --link-capacity 0 $opt /nonexistent/x
    usage_error "hcube run: $opt $tmp: cannot write it (it is a directory)" \
        run allgather --algo ring --dim 2 --link-capacity 0 $opt "$tmp"
done
usage_error "hcube run: --svg $tmp/x.svg: a space-time diagram shows up to 64 nodes, d = 7 has 128" \
    run allgather --algo ring --dim 7 --link-capacity 0 --trace "$tmp/t.json" --svg "$tmp/x.svg"
[ ! -e "$tmp/t.json" ] || fail "run with a refused --svg wrote its --trace file"
# Under an address-space limit of 4 GB (ulimit -v), what fits in memory but not
# in the limit is refused by the limit, by hcube draw and hcube run alike.
if [ "${HCUBE_SANITIZE:-none}" = none ] &&
    [ "$(awk '/^MemTotal/ {print $2}' /proc/meminfo)" -gt 12000000 ]; then
    for cmd in "draw alltoall --dim 6 --words 3000 --out $tmp/x.html" "run alltoall --dim 4 --words 2000000"; do
        out=$(ulimit -v 4000000 && "$hcube" $cmd 2>&1)
        rc=$?
        [ "$rc" -eq 2 ] || fail "hcube $cmd under ulimit -v: exit status $rc, expected 2: $out"
        grep -q "the address-space limit (ulimit -v) leaves" <<<"$out" ||
            fail "hcube $cmd under ulimit -v: $out"
    done
fi
rm -rf "$tmp"

# No command at all: the overview on stdout, status 2.
"$hcube" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "hcube without a command: exit status $rc, expected 2"

# keys JSON: every key with its path, in document order ("a b.c b.d ...";
# array elements are listed once, from the first).
keys() {
    python3 -c '
import json, sys
def walk(v, path, out):
    if isinstance(v, list) and v:
        walk(v[0], path + "[]", out)
    if isinstance(v, tuple):
        for k, x in v:
            out.append(path + k)
            walk(x, path + k + ".", out)
out = []
walk(json.loads(sys.stdin.read(), object_pairs_hook=tuple), "", out)
print(" ".join(out))'
}
run_keys='op algo dim nodes words ports ts tw verified virtual_time formula_time wall_seconds messages_per_second virtual_time_per_second messages bytes max_link_bytes congestion_events steps formula note seed_formula seed_formula_time formula_differs source source_section link_capacity links executor backend ranks rank_wall_seconds oversubscribed messages_to_router fingerprint'
info_keys='dim nodes directed_links threads link_capacity diameter can_start largest_dim_here memory_estimate memory_estimate.bytes memory_estimate.link_bytes memory_estimate.node_bytes memory_estimate.note executors executors.threads executors.threads.stack_bytes executors.threads.guard_bytes executors.threads.reserved_bytes executors.threads.touched_bytes executors.threads.mappings executors.threads.can_start executors.threads.largest_dim_here executors.threads.memory_estimate_bytes executors.fibers executors.fibers.stack_bytes executors.fibers.guard_bytes executors.fibers.reserved_bytes executors.fibers.touched_bytes executors.fibers.mappings executors.fibers.guarded_stacks executors.fibers.workers executors.fibers.can_start executors.fibers.largest_dim_here executors.fibers.memory_estimate_bytes gray_code gray_code.total_rows gray_code.rows gray_code.rows.[]i gray_code.rows.[]gray gray_code.rows.[]transition'
json=$(HCUBE_EXECUTOR= "$hcube" run allreduce --dim 2 --json) || fail "run --json: exit status $?"
[ "$(keys <<<"$json")" = "$run_keys" ] || fail "run JSON keys: $(keys <<<"$json")"
# Fibers add how many worker threads ran them, last.
json=$("$hcube" run allreduce --dim 2 --json --executor fibers) || fail "run fibers: exit status $?"
[ "$(keys <<<"$json")" = "$run_keys workers" ] || fail "run JSON keys, fibers: $(keys <<<"$json")"
json=$("$hcube" info --dim 2 --json) || fail "info --json: exit status $?"
[ "$(keys <<<"$json")" = "$info_keys" ] || fail "info JSON keys: $(keys <<<"$json")"
# Integral numbers print as integers, as before the JSON library.
expect_line "$json" '"bytes": 66560, ' "info JSON integer"

finish
