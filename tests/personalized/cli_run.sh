#!/usr/bin/env bash
# `hcube run` and `hcube list` end to end: text and JSON output of a few runs
# (formula equal to virtual time), the JSON keys in order, `list` against the
# catalog, and exit status 2 with one stderr line for every kind of bad input.
# Usage: cli_run.sh PATH/TO/hcube
# shellcheck source=../support/cli_common.sh
source "$(dirname "$0")/../support/cli_common.sh"

# json_field JSON KEY: the raw value of a top-level key.
json_field() { grep -Eo "\"$2\": (\"[^\"]*\"|[^,}]*)" <<<"$1" | head -1 | sed -E "s/^\"$2\": //"; }

keys='op algo dim nodes words ports ts tw verified virtual_time formula_time wall_seconds messages_per_second virtual_time_per_second messages bytes max_link_bytes congestion_events steps formula note seed_formula seed_formula_time formula_differs source source_section link_capacity links executor backend ranks rank_wall_seconds oversubscribed messages_to_router fingerprint'
# The default links and executor unless a check asks for others (the suites'
# variants set them).
unset HCUBE_LINKS HCUBE_EXECUTOR

# run_json WHAT ARGS...: runs with --json, checks status 0, the keys in order,
# verified, and virtual_time == formula_time; leaves the object in $json.
run_json() {
    local what=$1
    shift
    json=$("$hcube" run "$@" --json) || fail "$what: exit status $?"
    [ "$(grep -c . <<<"$json")" -eq 1 ] || fail "$what: JSON is not one line: $json"
    local got
    got=$(grep -Eo '"[a-z_]+": ' <<<"$json" | tr -d '":' | xargs)
    # Fibers add the number of worker threads that ran them, last.
    local want=$keys
    [ "$(json_field "$json" executor)" = '"fibers"' ] && want="$keys workers"
    [ "$got" = "$want" ] || fail "$what: keys '$got'"
    [ "$(json_field "$json" verified)" = true ] || fail "$what: not verified: $json"
    [ "$(json_field "$json" virtual_time)" = "$(json_field "$json" formula_time)" ] ||
        fail "$what: virtual_time != formula_time: $json"
}

# Eq. 4.10 on 8 nodes, m = 4, t_s = 3, t_w = 2: (3 + 8) * 7 = 77, no congestion.
run_json "alltoall pairwise" alltoall --algo pairwise --dim 3 --words 4 --ts 3 --tw 2
[ "$(json_field "$json" virtual_time)" = 77 ] || fail "Eq. 4.10: $json"
[ "$(json_field "$json" congestion_events)" = 0 ] || fail "pairwise congested: $json"
[ "$(json_field "$json" nodes)" = 8 ] || fail "nodes: $json"
[ "$(json_field "$json" ports)" = '"single"' ] || fail "ports: $json"
# The work the algorithm follows, by its key in docs/references.md, and where.
[ "$(json_field "$json" source)" = '"grama"' ] || fail "source: $json"
[ "$(json_field "$json" source_section)" = '"4.5.3, Alg. 4.10, E-cube routing, Eq. 4.10"' ] ||
    fail "source_section: $json"
run_json "allgather d-cycles" allgather --algo d-cycles --dim 3 --ports all
[ "$(json_field "$json" source)" = '"mathur-johnsson"' ] || fail "d-cycles source: $json"
[ "$(json_field "$json" source_section)" = '"4.2.1, Figures 8-11, 20"' ] ||
    fail "d-cycles source_section: $json"
run_json "aspc four-step" aspc --algo four-step --dim 3 --ports all
[ "$(json_field "$json" source)" = '"hu"' ] || fail "aspc source: $json"
[ "$(json_field "$json" source_section)" = '"section 3, Theorem 5, Tables 1-2"' ] ||
    fail "aspc source_section: $json"
# Eq. 4.9, all-port, int64, p = 16, m = 2, t_s = t_w = 1: (1 + 2 * 16/2) * 4 = 68.
run_json "alltoall dimension-exchange" alltoall --algo dimension-exchange --dim 4 --words 2 \
    --tw 1 --ports all --type int64
[ "$(json_field "$json" virtual_time)" = 68 ] || fail "Eq. 4.9: $json"
[ "$(json_field "$json" ports)" = '"all"' ] || fail "ports all: $json"
# auto with a large t_s chooses dimension exchange, with large m pairwise (Table 4.1).
run_json "alltoall auto" alltoall --dim 4 --words 1 --ts 100 --tw 1
[ "$(json_field "$json" algo)" = '"dimension-exchange"' ] || fail "auto, small m: $json"
run_json "alltoall auto" alltoall --dim 4 --words 1000 --ts 100 --tw 1
[ "$(json_field "$json" algo)" = '"pairwise"' ] || fail "auto, large m: $json"
# Shifts: Figure 4.23's 5-shift takes 3 steps; ecube is one step on node ids.
run_json "shift gray" shift --algo gray --dim 3 --shift 5 --type double
[ "$(json_field "$json" steps)" = 3 ] || fail "5-shift steps: $json"
expect_line "$json" '"note": "q mod p = 5, ring gray; phases \+4 \+1: 3 steps' "5-shift note"
run_json "shift ecube" shift --algo ecube --dim 4 --shift -3 --words 7 --tw 1
[ "$(json_field "$json" virtual_time)" = 8 ] || fail "Eq. 4.12: $json"
run_json "shift ecube --ring=gray" shift --algo ecube --dim 3 --shift 3 --ring=gray
[ "$(json_field "$json" congestion_events)" = 2 ] || fail "ecube on the Gray array: $json"

# Text form.
out=$("$hcube" run shift --algo gray-bidirectional --dim 3 --shift 6 --ts 2 --tw 1 --words 3) ||
    fail "text run: exit status $?"
expect_line "$out" '^shift gray-bidirectional: dim 3 \(8 nodes\), m = 3 words of int32, single-port, t_s = 2, t_w = 1, --ring gray$' "text header"
expect_line "$out" '^  verified +yes$' "verified"
expect_line "$out" '^  virtual time +10$' "virtual time"
expect_line "$out" '^  formula +10 = \(t_s \+ t_w m\) steps\(q\)' "formula"
for label in 'wall time' messages bytes 'congestion events' note; do
    expect_line "$out" "^  $label " "text row $label"
done
expect_line "$out" '^  wall time +[0-9.e+-]+ s \(the emulation.s; link implementation ring\)$' \
    "wall time names the links"
# descend runs with its own defaults: M = N elements.
out=$("$hcube" run descend --dim 3) || fail "run descend with its defaults: exit status $?"
expect_line "$out" '^descend [a-z]+: dim 3 \(8 nodes\), m = 8 words' "descend's default M = N"

# --links chooses the link implementation, and HCUBE_LINKS does without it.
run_json "links default" allreduce --dim 3 --words 5 --tw 1
[ "$(json_field "$json" links)" = '"ring"' ] || fail "default links: $json"
run_json "links boost" allreduce --dim 3 --words 5 --tw 1 --links boost
[ "$(json_field "$json" links)" = '"boost"' ] || fail "--links boost: $json"
HCUBE_LINKS=boost run_json "HCUBE_LINKS=boost" allreduce --dim 3 --words 5 --tw 1
[ "$(json_field "$json" links)" = '"boost"' ] || fail "HCUBE_LINKS=boost: $json"
HCUBE_LINKS=boost run_json "--links ring over HCUBE_LINKS" allreduce --dim 3 --links ring
[ "$(json_field "$json" links)" = '"ring"' ] || fail "--links ring, HCUBE_LINKS=boost: $json"

# --executor: the same results, virtual time, steps and traffic with threads
# and with fibers (on 2 workers, and all nodes on 1), a congested routed shift
# and a deadlock-prone synchronous run among them.
same_run() {
    local what=$1 threads fibers
    shift
    run_json "$what, threads" "$@" --executor threads
    [ "$(json_field "$json" executor)" = '"threads"' ] || fail "$what: executor: $json"
    threads=$json
    for w in 2 1; do
        run_json "$what, fibers" "$@" --executor fibers --workers $w
        fibers=$json
        [ "$(json_field "$fibers" executor)" = '"fibers"' ] || fail "$what: executor: $fibers"
        [ "$(json_field "$fibers" workers)" = $w ] || fail "$what: workers $w: $fibers"
        for k in algo virtual_time steps messages bytes max_link_bytes congestion_events note; do
            [ "$(json_field "$threads" $k)" = "$(json_field "$fibers" $k)" ] ||
                fail "$what: $k differs: threads $threads, fibers $fibers"
        done
    done
}
same_run "allreduce" allreduce --algo hypercube --dim 4 --words 5 --tw 1
same_run "alltoall pairwise" alltoall --algo pairwise --dim 3 --words 4 --ts 3 --tw 2
same_run "shift ecube on the Gray array" shift --algo ecube --dim 3 --shift 3 --ring=gray
same_run "allgather, synchronous links" allgather --algo hypercube --dim 3 --link-capacity 0
same_run "scatter" scatter --dim 4 --words 3 --tw 1 --root 5
# Without --executor, HCUBE_EXECUTOR decides; --executor overrides it.
HCUBE_EXECUTOR=fibers run_json "HCUBE_EXECUTOR=fibers" allreduce --dim 3
[ "$(json_field "$json" executor)" = '"fibers"' ] || fail "HCUBE_EXECUTOR=fibers: $json"
HCUBE_EXECUTOR=fibers run_json "--executor threads over HCUBE_EXECUTOR" allreduce --dim 3 \
    --executor threads
[ "$(json_field "$json" executor)" = '"threads"' ] || fail "--executor threads: $json"
# The default worker count: one per usable CPU, at most p.
run_json "fibers, default workers" allreduce --dim 1 --executor fibers
[ "$(json_field "$json" workers)" -ge 1 ] && [ "$(json_field "$json" workers)" -le 2 ] ||
    fail "default workers on 2 nodes: $json"
out=$("$hcube" run allreduce --dim 3 --executor fibers --workers 2 --stack-bytes 65536) ||
    fail "text run, fibers: exit status $?"
expect_line "$out" '^  executor +fibers on 2 worker threads, 64 KiB stacks$' "text executor row, fibers"
out=$("$hcube" run allreduce --dim 3) || fail "text run, threads: exit status $?"
expect_line "$out" '^  executor +threads \(one OS thread per node\)$' "text executor row, threads"

# list: every catalog operation and algorithm; run --help.
list=$("$hcube" list) || fail "list: exit status $?"
for algo in dimension-exchange pairwise ring; do
    expect_line "$list" "^  $algo " "list alltoall $algo"
done
expect_line "$list" '^alltoall$' "list alltoall"
expect_line "$list" '^shift$' "list shift"
expect_line "$list" '--ring gray\|id \(default id\)' "list ecube option"
expect_line "$list" 'Grama et al. 4\.5\.3, Alg\. 4\.10' "list source"
help=$("$hcube" run --help) || fail "run --help: exit status $?"
expect_line "$help" '^operations:.* alltoall .*shift' "help lists operations"

# bad ARGS... WANT: status 2, nothing on stdout, one stderr line containing WANT.
bad() { usage_error "hcube run: ${*: -1}" run "${@:1:$#-1}"; }
bad bcast "unknown operation 'bcast'; operations: "
bad alltoall --algo butterfly "unknown algorithm 'butterfly' for alltoall; algorithms: dimension-exchange, pairwise, ring, all-port, auto"
bad shift --algo gray --ring id "shift gray: moves along the Gray-code embedded array"
bad shift --ring spiral "--ring spiral is not one of gray|id"
bad alltoall --ring gray "alltoall dimension-exchange takes no option --ring"
# An option no algorithm declares is unknown, with the closest name suggested,
# even when it is the last argument (it used to be "--jsn needs a value").
bad alltoall --jsn "unknown option '--jsn' (did you mean --json?)"
bad alltoall --dimm 3 "unknown option '--dimm' (did you mean --dim?)"
bad alltoall --foo 1 "unknown option '--foo'"
bad alltoall --link-capacity 2000000 "--link-capacity '2000000' is out of range"
# auto gives every candidate's reason.
bad descend --dim 4 --words 100 "no algorithm for descend fits these parameters (single-port, dim 4): direct: --words M = 100 is not a power of two; pipelined: --words M = 100 is not a power of two"
# A cost that overflows every formula: the same refusal for auto and binomial.
bad broadcast --ts 1e308 "t_s = 1e+308, t_w = 0 make the formula time of broadcast binomial inf"
bad broadcast --algo binomial --ts 1e308 "t_s = 1e+308, t_w = 0 make the formula time of broadcast binomial inf"
# Refused before allocating, with the estimate (allgather: 2 p^2 m elements).
bad allgather --words 99999999999 "allgather hypercube with m = 99999999999 on 16 nodes needs about 186.3 TiB (2 p^2 m elements of 4 bytes"
bad alltoall --dim x "--dim 'x' is not an integer in 0..20"
bad alltoall --dim 99 "--dim '99' is out of range"
# Threads stop at d = 16, fibers at 20 (whichever way threads were chosen).
bad allreduce --dim 17 "--dim 17 is outside 0..16 with threads (--executor fibers goes to 20)"
HCUBE_EXECUTOR=fibers bad allreduce --dim 17 --executor threads "--dim 17 is outside 0..16 with threads"
bad allreduce --dim 21 --executor fibers "--dim '21' is out of range (expected an integer in 0..20)"
bad alltoall --words -3 "--words '-3' is not a non-negative integer"
bad alltoall --words 2.5 "--words '2.5' is not a non-negative integer"
bad alltoall --ts -1 "--ts '-1' is out of range"
bad alltoall --tw abc "--tw 'abc' is not a finite number"
bad shift --shift 1x "--shift '1x' is not an integer"
bad alltoall --ports both "--ports 'both' is not single or all"
bad alltoall --links spsc "--links 'spsc' is not ring or boost"
bad alltoall --executor fiber "--executor 'fiber' is not threads or fibers"
HCUBE_EXECUTOR=green bad alltoall "machine: HCUBE_EXECUTOR=green names no executor; use threads or fibers (or unset it: threads)"
bad alltoall --executor fibers --workers 0 "--workers '0' is out of range (expected an integer in 1..1024)"
bad alltoall --executor fibers --workers two "--workers 'two' is not an integer in 1..1024"
bad alltoall --executor fibers --stack-bytes 100 "--stack-bytes '100' is out of range (expected an integer in 16384..1073741824)"
# --workers and --stack-bytes are for fibers; with threads they are errors
# (whether threads come from --executor, HCUBE_EXECUTOR or the default).
bad alltoall --workers 2 "--workers 2 applies to --executor fibers; with threads every node is its own OS thread"
bad alltoall --executor threads --workers 2 "--workers 2 applies to --executor fibers"
HCUBE_EXECUTOR=threads bad alltoall --stack-bytes 65536 "--stack-bytes 65536 applies to --executor fibers"
HCUBE_EXECUTOR=fibers run_json "HCUBE_EXECUTOR=fibers with --workers" alltoall --dim 2 --workers 1
[ "$(json_field "$json" workers)" = 1 ] || fail "HCUBE_EXECUTOR=fibers --workers 1: $json"
HCUBE_LINKS=spsc bad alltoall "machine: HCUBE_LINKS=spsc names no link implementation; use ring or boost"
bad alltoall --type float "--type 'float' is not int32, int64 or double"
bad alltoall --dim 4 --root 16 "--root 16 is outside 0..15 for --dim 4"
bad alltoall --dim 3 --dim 4 "--dim given twice"
bad alltoall --words "--words needs a value"
bad --dim 3 "missing operation"
# Algorithms of other families, when registered: mesh needs an even dimension,
# d-cycles the all-port model.
if grep -Eq '^  mesh ' <<<"$list"; then
    bad allgather --algo mesh --dim 3 "allgather mesh: "
fi
if grep -Eq '^  d-cycles ' <<<"$list"; then
    bad allgather --algo d-cycles --dim 3 "allgather d-cycles: "
fi
# --schedule is another name for --algo (Hu's descend schedules).
if grep -Eq '^  pipelined ' <<<"$list"; then
    run_json "descend --schedule" descend --schedule pipelined --kernel prefix --dim 2 --words 16 --ports all
    [ "$(json_field "$json" algo)" = '"pipelined"' ] || fail "--schedule pipelined: $json"
    bad descend --algo direct --schedule pipelined "--algo and --schedule name the same choice"
fi

# The system's thread limits: with vm.max_map_count below 2 * 2^15 a 15-cube
# cannot start; the machine's reason is a usage error (status 2, one line).
if [ "$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)" -lt 65536 ] &&
    [ "$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)" -gt 0 ]; then
    bad allreduce --dim 15 "machine: cannot start a 15-cube here"
fi

# t_w = 0 (the default): the output says time counts steps, and how to set --tw.
out=$("$hcube" run allreduce --algo hypercube --dim 3 --words 1000) || fail "allreduce: exit status $?"
expect_line "$out" '^  virtual time +3$' "allreduce steps"
expect_line "$out" 't_w = 0: virtual time counts steps \(t_s = 1 each, t_w = 0\), whatever --words; give --tw Y to charge Y per word' "t_w = 0 line"
out=$("$hcube" run allreduce --algo hypercube --dim 3 --words 1000 --tw 1) ||
    fail "allreduce --tw 1: exit status $?"
grep -q 't_w = 0' <<<"$out" && fail "t_w = 0 line printed with --tw 1: $out"
expect_line "$out" '^  virtual time +3003$' "allreduce (1 + 1000) log p"

# Link capacity 0: an algorithm that needs buffered links deadlocks (status 1)
# and the report ends with the hint; one that does not still verifies.
"$hcube" run allgather --algo ring --dim 3 --link-capacity 0 >/dev/null 2>"$errfile"
rc=$?
err=$(<"$errfile")
[ "$rc" -eq 1 ] || fail "allgather ring, capacity 0: exit status $rc, expected 1"
expect_line "$err" '^hcube run: deadlock: 8 nodes are blocked' "deadlock report"
expect_line "$err" '^hint: allgather ring needs buffered links \(every node sends to its successor on a ring before it receives from its predecessor\), so it deadlocks with --link-capacity 0' "buffered-links hint"
out=$("$hcube" run allgather --algo hypercube --dim 3 --link-capacity 0) ||
    fail "allgather hypercube, capacity 0: exit status $?"
expect_line "$out" 'link capacity 0' "header shows the capacity"
expect_line "$list" '^ +needs buffered links: ' "list marks buffered-link algorithms"

finish
