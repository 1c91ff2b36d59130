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
usage_error "hcube info: unknown option '--jsn' (did you mean --json?)" info --dim 2 --jsn
usage_error "hcube info: --dim 'x' is not an integer in 0..18" info --dim x
# One memory figure is the bound runs are checked against, the others what nodes touch.
out=$("$hcube" info --dim 4) || fail "info --dim 4: exit status $?"
expect_line "$out" '^memory \(bound\) +[0-9.]+ [KMG]i?B +\(what a run is checked against' "info memory bound"
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
run_keys='op algo dim nodes words ports ts tw verified virtual_time formula_time wall_seconds messages bytes max_link_bytes congestion_events steps formula note seed_formula seed_formula_time formula_differs link_capacity links executor backend ranks rank_wall_seconds'
info_keys='dim nodes directed_links threads link_capacity diameter can_start largest_dim_here memory_estimate memory_estimate.bytes memory_estimate.link_bytes memory_estimate.node_bytes memory_estimate.note executors executors.threads executors.threads.stack_bytes executors.threads.guard_bytes executors.threads.reserved_bytes executors.threads.touched_bytes executors.threads.mappings executors.threads.can_start executors.threads.largest_dim_here executors.fibers executors.fibers.stack_bytes executors.fibers.guard_bytes executors.fibers.reserved_bytes executors.fibers.touched_bytes executors.fibers.mappings executors.fibers.guarded_stacks executors.fibers.workers executors.fibers.can_start executors.fibers.largest_dim_here gray_code gray_code.total_rows gray_code.rows gray_code.rows.[]i gray_code.rows.[]gray gray_code.rows.[]transition'
json=$(HCUBE_EXECUTOR= "$hcube" run allreduce --dim 2 --json) || fail "run --json: exit status $?"
[ "$(keys <<<"$json")" = "$run_keys" ] || fail "run JSON keys: $(keys <<<"$json")"
# Fibers add how many worker threads ran them, last.
json=$("$hcube" run allreduce --dim 2 --json --executor fibers) || fail "run fibers: exit status $?"
[ "$(keys <<<"$json")" = "$run_keys workers" ] || fail "run JSON keys, fibers: $(keys <<<"$json")"
json=$("$hcube" info --dim 2 --json) || fail "info --json: exit status $?"
[ "$(keys <<<"$json")" = "$info_keys" ] || fail "info JSON keys: $(keys <<<"$json")"
# Integral numbers print as integers, as before the JSON library.
expect_line "$json" '"bytes": 271360, ' "info JSON integer"

echo "cli_commands: $failures failure(s)"
[ "$failures" -eq 0 ]
