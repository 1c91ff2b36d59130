#!/usr/bin/env bash
# `hcube run ... --ports all`: `auto` takes the all-port algorithm and prints
# its all-port formula, without the note that the formula assumes single-port;
# under single-port the all-port algorithm is refused with the reason.
# Usage: cli.sh PATH/TO/hcube
# shellcheck source=../support/cli_common.sh
source "$(dirname "$0")/../support/cli_common.sh"

# p = 8, m = 12, t_s = 5, t_w = 2: 3 steps of 4 words: 3 (5 + 8) = 39; the
# binomial tree takes 3 (5 + 24) = 87, scatter-allgather 2 (15 + 2 * 7 * 12/8) = 72.
out=$("$hcube" run broadcast --dim 3 --words 12 --ports all --ts 5 --tw 2) || fail "auto: exit status $?"
expect_line "$out" '^broadcast rotated-trees: dim 3 \(8 nodes\), m = 12 words of int32, all-port' "auto picks the rotated trees"
expect_line "$out" '^  virtual time +39$' "rotated trees virtual time"
expect_line "$out" '^  formula +39 = log p \(t_s \+ t_w ceil\(m/log p\)\), all-port  \[Grama et al. 4\.7\.2' "all-port formula"
grep -q 'assumes single-port' <<<"$out" && fail "an all-port run noted a single-port formula: $out"

# p = 8, m = 12 per node: 3 t_s + 7 ceil(12/3) t_w = 15 + 56 = 71.
out=$("$hcube" run scatter --algo rotated-trees --dim 3 --words 12 --ports all --ts 5 --tw 2) ||
    fail "scatter: exit status $?"
expect_line "$out" '^  virtual time +71$' "scatter virtual time"

"$hcube" run scatter --algo rotated-trees --dim 3 --words 12 >/dev/null 2>"$errfile" &&
    fail "single-port scatter over the trees ran"
expect_line "$(cat "$errfile")" 'scatter rotated-trees: rotated-trees exchanges on all 3 links at once; run with --ports all \(all-port model\)' "single-port refusal"

finish
