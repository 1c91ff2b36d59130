#!/usr/bin/env bash
# The main job, from a fresh machine: installs what is missing, builds, and
# takes a short tour of hcube on a 16-node hypercube: a node program of one's
# own, then collectives with their source formula printed next to the measured
# virtual time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ -d build/meson-private ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
meson compile -C build

hcube=build/cli/hcube
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "a node program: every node exchanges its id with each neighbour (examples/hello.cpp)"
build/examples/hello 4

say "the hypercube itself: hcube info --dim 4"
$hcube info --dim 4

say "all-to-all broadcast on 16 nodes, t_s = 10, t_w = 1, m = 8 words: hypercube vs ring"
for algo in hypercube ring; do
    $hcube run allgather --algo "$algo" --dim 4 --words 8 --ts 10 --tw 1
done

say "one-to-all broadcast of 1024 words: binomial tree vs scatter + all-gather (Eq. 4.1 vs 4.13)"
for algo in binomial scatter-allgather; do
    $hcube run broadcast --algo "$algo" --dim 4 --words 1024 --ts 10 --tw 1
done

say "all-to-all personalized, 4 words per pair, as JSON"
$hcube run alltoall --algo pairwise --dim 4 --words 4 --ts 10 --tw 1 --json

say "all-to-all broadcast along one vs d Hamiltonian cycles, all-port (Mathur and Johnsson, 4.1-4.2)"
for algo in one-cycle d-cycles; do
    $hcube run allgather --algo "$algo" --dim 4 --words 8 --ts 10 --tw 1 --ports all
done

say "all-to-some personalized communication in 4 all-port steps (Hu, Theorem 5)"
$hcube run aspc --algo four-step --dim 4 --words 2 --ts 10 --tw 1 --ports all

say "parallel cyclic reduction of 256 equations on 16 nodes: direct vs pipelined schedule (Hu, section 4)"
for schedule in direct pipelined; do
    $hcube run descend --schedule "$schedule" --kernel pcr --dim 4 --words 256 --ports all
done
