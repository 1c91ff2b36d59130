#!/usr/bin/env bash
# `hcube run`'s formula line: the form that gave the printed number, and the
# source's form beside it (with its own value and the reason) when p does not
# divide m. Every expected number is worked out by hand in the comments.
# Usage: cli_formula.sh PATH/TO/hcube
# shellcheck source=../support/cli_common.sh
source "$(dirname "$0")/../support/cli_common.sh"

# run_text ARGS...: the text output of a verified run, in $out.
run_text() {
    out=$("$hcube" run "$@") || fail "run $*: exit status $?"
    expect_line "$out" '^  verified +yes$' "run $*: verified"
}

# p = 16, m = 8, t_s = 10, t_w = 1: blocks of 1 word on nodes 0..7, empty on
# 8..15. Reduce-scatter step i sends p/2^(i+1) blocks (at most 4, 2, 1, 1 full
# ones), allgather step i sends 2^i blocks (at most 1, 2, 4, 8 full ones):
# 8 messages, 23 words: 80 + 23 = 103. Eq. 4.14: 2 (10 * 4 + 15 * 8/16) = 95.
run_text allreduce --algo reduce-scatter-allgather --dim 4 --words 8 --ts 10 --tw 1
expect_line "$out" '^  virtual time +103$' "rsa 16/8 virtual time"
expect_line "$out" '^  formula +103 = 8 t_s \+ 23 t_w  \[exact for this m, p\]$' "rsa 16/8 formula"
expect_line "$out" "^  source's formula +95 = 2 \(t_s log p \+ t_w \(p-1\) m/p\) if p \| m  \[Grama et al. 4\.7\.1, Eq\. 4\.14\]$" "rsa 16/8 seed"
expect_line "$out" '^  why they differ +p = 16 does not divide m = 8: the blocks have 0 or 1 words, and the longest chain of messages has 8 messages carrying 23 words, not the source.s 2 \(p-1\) m/p = 15$' "rsa 16/8 why"

# p = 4, m = 6: blocks of 2, 2, 1, 1 words. Reduce-scatter: the even or odd
# blocks (3 words), then one block (2); allgather: one block (2), then blocks
# 0 and 1 (4): 11 words in 4 messages, 4 + 11 = 15 at t_s = t_w = 1.
# Eq. 4.14: 2 (2 + 3 * 6/4) = 13.
json=$("$hcube" run allreduce --algo reduce-scatter-allgather --dim 2 --words 6 --tw 1 --json) ||
    fail "rsa 4/6: exit status $?"
expect_line "$json" '"virtual_time": 15, "formula_time": 15,' "rsa 4/6 JSON time"
expect_line "$json" '"formula": "4 t_s \+ 11 t_w",' "rsa 4/6 JSON formula"
expect_line "$json" '"seed_formula": "2 \(t_s log p \+ t_w \(p-1\) m/p\) if p \| m", "seed_formula_time": 13, "formula_differs": "p = 4 does not divide m = 6: ' "rsa 4/6 JSON seed"

# p = 32, m = 63, t_w = 2: 31 blocks of 2 words and block 31 of 1. The scatter
# from node 0 sends ids [2^j, 2^(j+1)) on dimension j: extra words 1, 2, 4, 8,
# 15; the allgather's longest steps send blocks [0, 2^j): 1 + 2 + 4 + 8 + 16.
# W = 2 * 31 + 30 + 31 = 123 words in 10 messages: 10 + 246 = 256.
# Eq. 4.13: 2 (5 + 2 * 31 * 63/32) = 254.125.
run_text broadcast --algo scatter-allgather --dim 5 --words 63 --tw 2
expect_line "$out" '^  formula +256 = 10 t_s \+ 123 t_w  \[exact for this m, p\]$' "bcast 32/63 formula"
expect_line "$out" "^  source's formula +254\.125 = 2 \(t_s log p \+ t_w \(p-1\) m/p\) if p \| m" "bcast 32/63 seed"
expect_line "$out" '^  why they differ +p = 32 does not divide m = 63: the blocks have 1 or 2 words' "bcast 32/63 why"
# t_w = 0 (the default): the same forms, both 10.
run_text broadcast --algo scatter-allgather --dim 5 --words 63
expect_line "$out" '^  formula +10 = 10 t_s \+ 123 t_w ' "bcast 32/63 t_w = 0"
expect_line "$out" "^  source's formula +10 = " "bcast 32/63 seed t_w = 0"

# p = 2, m = 1: node 1 sends block 0 (1 word) while node 0 sends block 1
# (empty), then node 1 sends its empty gather block: 2 t_s + t_w = 3. Eq. 4.13
# gives 2 (1 + 1/2) = 3 too, but by another form.
run_text reduce --algo reduce-scatter-gather --dim 1 --words 1 --tw 1
expect_line "$out" '^  formula +3 = 2 t_s \+ 1 t_w  \[exact' "reduce 2/1 formula"
expect_line "$out" "^  source's formula +3 = " "reduce 2/1 seed"

# p | m: the source's form is exact and printed alone. p = 8, m = 16, t_w = 1:
# 2 (3 + 7 * 16/8) = 34.
for op in "allreduce --algo reduce-scatter-allgather" "broadcast --algo scatter-allgather" \
    "reduce --algo reduce-scatter-gather"; do
    # shellcheck disable=SC2086
    run_text $op --dim 3 --words 16 --tw 1
    expect_line "$out" '^  formula +34 = 2 \(t_s log p \+ t_w \(p-1\) m/p\) if p \| m  \[Grama et al.' "$op p | m"
    grep -q "source's formula" <<<"$out" && fail "$op p | m: printed a source's formula line: $out"
done

# Forms that hold for every m: ASPC on 2 nodes takes 2 steps, E-cube's 0-shift
# costs nothing.
run_text aspc --algo four-step --ports all --dim 1 --words 3 --tw 1
expect_line "$out" '^  formula +8 = 4 \(t_s \+ t_w w\), 2 \(t_s \+ t_w w\) on 2 nodes' "aspc p = 2"
run_text shift --algo ecube --dim 3 --shift 8 --words 2 --tw 1
expect_line "$out" '^  formula +0 = L \(t_s \+ t_w m\), .*L = 0 if p \| q' "ecube 0-shift"

finish
