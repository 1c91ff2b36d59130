#!/usr/bin/env bash
# `hcube info` end to end: the Gray code table of a 3-cube (seed 002 Table 1
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
# 24 links x (16 x 64 + 128) B + 8 nodes x 64 KiB = 27 KiB + 512 KiB.
expect_line "$out" '^memory \(estimate\) +539\.0 KiB$' "memory estimate"

json=$("$hcube" info --dim 3 --json) || fail "info --dim 3 --json exited with $?"
expect_line "$json" '"nodes": 8, "directed_links": 24, "threads": 8' "JSON sizes"
expect_line "$json" '"bytes": 551936' "JSON memory estimate"
expect_line "$json" '\{"i": 6, "gray": "101", "transition": 0\}' "JSON Gray row 6"
expect_line "$json" '\{"i": 7, "gray": "100", "transition": 2\}\]' "JSON last Gray row"

# Whether this system can start the cube's threads, and the largest that can.
expect_line "$out" '^can start here +yes$' "a 3-cube starts"
expect_line "$out" '^largest D here +[0-9]+ ' "largest dimension"
if [ "$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)" -lt 65536 ]; then
    out15=$("$hcube" info --dim 15) || fail "info --dim 15 exited with $?"
    expect_line "$out15" '^can start here +no: .*vm\.max_map_count' "15-cube refused"
    expect_line "$out15" '^largest D here +1[0-4] ' "largest dimension below 15"
fi

big=$("$hcube" info --dim 7) || fail "info --dim 7 exited with $?"
expect_line "$big" 'first 16 of 128 rows' "truncation note"
expect_line "$big" '^ *15 +0001000 +4$' "row 15 of the 7-bit code"
grep -Eq '^ *16 +' <<<"$big" && fail "info --dim 7 printed row 16"

# Bad input: status 2 (as for run and list), nothing on stdout, exactly one
# line on stderr naming the value.
bad() { usage_error "hcube info: $1" info "${@:2}"; }
bad "--dim '99' is out of range (expected an integer in 0..16)" --dim 99
bad "--dim '-1' is out of range (expected an integer in 0..16)" --dim -1
bad "--dim 'three' is not an integer in 0..16" --dim three
bad "--dim needs a value" --dim
bad "missing --dim D" --json
bad "unknown option '--size'" --dim 3 --size 4
bad "unknown option '--jsn' (did you mean --json?)" --dim 3 --jsn
bad "unknown option '--dimm' (did you mean --dim?)" --dimm 3

echo "cli_info: $failures failure(s)"
[ "$failures" -eq 0 ]
