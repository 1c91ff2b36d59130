#!/usr/bin/env bash
# `hcube info` end to end: the Gray code table of a 3-cube (Mathur & Johnsson Table 1
# with its transition sequence 0 1 0 2 0 1 0 2), the sizes, the JSON form, the
# truncated table of a large cube, and one clear error line for bad input.
# Usage: cli_info.sh PATH/TO/hcube
# shellcheck source=../support/cli_common.sh
source "$(dirname "$0")/../support/cli_common.sh"

out=$("$hcube" info --dim 3) || fail "info --dim 3 exited with $?"
gray=(000 001 011 010 110 111 101 100)
trans=(0 1 0 2 0 1 0 2)
for i in 0 1 2 3 4 5 6 7; do
    expect_line "$out" "^ *$i +${gray[i]} +${trans[i]}\$" "Gray table row $i"
done
expect_line "$out" '^nodes +8$' "node count"
expect_line "$out" '^directed links +24 ' "directed links (p d)"
expect_line "$out" '^threads +8 ' "threads"
expect_line "$out" '^diameter +3 ' "diameter"
expect_line "$out" '^link capacity +16 ' "default link capacity"
# 24 links x 128 B (a line and a slot) + 8 threads x 16 KiB = 3 KiB + 128 KiB.
expect_line "$out" '^memory \(estimate\) +131\.0 KiB  \(what a run is checked against' "memory estimate"
expect_line "$out" '^  links +24 x 128 B \(a line and one slot; a slot more per further message waiting\) = 3\.0 KiB$' "links' memory"
expect_line "$out" '^  nodes +8 x 16\.0 KiB \(with threads: state and stack pages in use\) = 128\.0 KiB$' "nodes' memory"

json=$("$hcube" info --dim 3 --json) || fail "info --dim 3 --json exited with $?"
expect_line "$json" '"nodes": 8, "directed_links": 24, "threads": 8' "JSON sizes"
expect_line "$json" '"bytes": 134144' "JSON memory estimate"
expect_line "$json" '\{"i": 6, "gray": "101", "transition": 0\}' "JSON Gray row 6"
expect_line "$json" '\{"i": 7, "gray": "100", "transition": 2\}\]' "JSON last Gray row"

# Whether this system can start the cube under each executor, and the largest
# that can.
expect_line "$out" '^can start here +threads yes; fibers yes$' "a 3-cube starts"
expect_line "$out" '^largest D here +[0-9]+ with threads, [0-9]+ with fibers ' "largest dimension"

# Memory by executor. Threads: p x (stack + guard page) of address space,
# 16 KiB touched each, 2 mappings each. Fibers: p x (256 KiB + 16 KiB zone),
# one mapping, and as many worker stacks as usable CPUs (at most p).
read -r stack guard < <(python3 -c 'import resource; s = resource.getrlimit(resource.RLIMIT_STACK)[0]; print(s if s > 0 else 2097152, 4096)')
workers=$(nproc)
[ "$workers" -gt 8 ] && workers=8
json=$("$hcube" info --dim 3 --json) || fail "info --dim 3 --json exited with $?"
threads_json=$(grep -Eo '"threads": \{[^}]*\}' <<<"$json")
fibers_json=$(grep -Eo '"fibers": \{[^}]*\}' <<<"$json")
expect_line "$threads_json" "\"stack_bytes\": $stack, \"guard_bytes\": $guard, \"reserved_bytes\": $((8 * (stack + guard))), \"touched_bytes\": $((8 * 16384)), \"mappings\": 16, " "threads' memory"
expect_line "$fibers_json" "\"stack_bytes\": 262144, \"guard_bytes\": 16384, \"reserved_bytes\": $((8 * 278528 + workers * (stack + guard))), \"touched_bytes\": $((8 * 6144)), \"mappings\": $((1 + 16 + 2 * workers)), \"guarded_stacks\": 8, \"workers\": $workers, \"can_start\": true" "fibers' memory"
expect_line "$out" '^  threads +reserved [0-9.]+ MiB = 8 x \([0-9.]+ MiB stack \+ 4\.0 KiB guard page; ulimit -s\)$' "threads reserved (text)"
expect_line "$out" '^ +touched  about 128\.0 KiB = 8 x 16\.0 KiB \(the stack pages in use and the node.s state\), plus the kernel' "threads touched (text)"
expect_line "$out" '^ +mappings 16 \(a stack and its guard page per thread\) \+ [0-9]+ in use, vm\.max_map_count [0-9-]+: they fit$' "threads' mappings (text)"
# The machine under each executor, the links included: 3 KiB + 8 x 16 KiB
# with threads, 3 KiB + 8 x 6 KiB with fibers.
expect_line "$out" '^ +machine  about 131\.0 KiB with the links. 3\.0 KiB \(the estimate hcube run --executor threads is checked against\)$' "threads' machine (text)"
expect_line "$out" '^ +machine  about 51\.0 KiB with the links. 3\.0 KiB \(the estimate hcube run --executor fibers is checked against\)$' "fibers' machine (text)"
expect_line "$threads_json" '"memory_estimate_bytes": 134144' "threads' machine (JSON)"
expect_line "$fibers_json" '"memory_estimate_bytes": 52224' "fibers' machine (JSON)"
expect_line "$out" '^  fibers +reserved [0-9.]+ MiB = 8 x \(256\.0 KiB stack \+ 16\.0 KiB guard zone\) in one mapping \+ [0-9]+ worker threads? x ' "fibers reserved (text)"
expect_line "$out" '^ +touched  about 48\.0 KiB = 8 x 6\.0 KiB \(the stack pages in use and the node.s state\)$' "fibers touched (text)"
expect_line "$out" '^ +guards   a guard page under every stack' "fibers' guards (text)"

# With Linux's default vm.max_map_count a 15-cube's threads need too many
# mappings; fibers start it, with guard pages under as many stacks as fit and
# red zones under the rest from d = 16 on.
max_map=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)
if [ "$max_map" -lt 65536 ] && [ "$max_map" -gt 0 ]; then
    out15=$("$hcube" info --dim 15) || fail "info --dim 15 exited with $?"
    expect_line "$out15" '^can start here +threads no: .*vm\.max_map_count.*; fibers yes$' "15-cube refused with threads"
    expect_line "$out15" '^largest D here +1[0-4] with threads, (1[6-9]|20) with fibers ' "largest dimension below 15 with threads"
    expect_line "$out15" '^ +mappings 65536 .*: too many; threads stop at d = 1[0-4] here$' "threads' mappings too many"
    out17=$("$hcube" info --dim 17) || fail "info --dim 17 exited with $?"
    expect_line "$out17" '^can start here +threads no: dimension 17 is above the threads limit 16; fibers yes$' "17-cube: threads' limit"
    out16=$("$hcube" info --dim 16) || fail "info --dim 16 exited with $?"
    expect_line "$out16" '^ +guards   guard pages under [0-9]+ of the 65536 stacks .*; the other [0-9]+ get a 16\.0 KiB red zone' "red zones at d = 16"
fi

big=$("$hcube" info --dim 7) || fail "info --dim 7 exited with $?"
expect_line "$big" 'first 16 of 128 rows' "truncation note"
expect_line "$big" '^ *15 +0001000 +4$' "row 15 of the 7-bit code"
grep -Eq '^ *16 +' <<<"$big" && fail "info --dim 7 printed row 16"

# Bad input: status 2 (as for run and list), nothing on stdout, exactly one
# line on stderr naming the value.
bad() { usage_error "hcube info: $1" info "${@:2}"; }
bad "--dim '99' is out of range (expected an integer in 0..20)" --dim 99
bad "--dim '-1' is out of range (expected an integer in 0..20)" --dim -1
bad "--dim 'three' is not an integer in 0..20" --dim three
bad "--dim needs a value" --dim
bad "missing --dim D" --json
bad "unknown option '--size'" --dim 3 --size 4
bad "unknown option '--jsn' (did you mean --json?)" --dim 3 --jsn
bad "unknown option '--dimm' (did you mean --dim?)" --dimm 3

finish
