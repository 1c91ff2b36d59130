#!/usr/bin/env bash
# Measures this machine and rewrites docs/performance.md and README.md's
# headline figures: bench-runtime,
# `hcube bench` (latency, bw, allport), bench-collectives, bench-cm200's data
# motion rate and, when the MPI backend is built, bench-mpi --quick. Every
# benchmark prints each figure beside its limit or peer measured in the same
# run; the page keeps them side by side with the machine that made them. A few
# minutes on two cores; not part of CI (tests/docs/hygiene.sh checks only that
# the page has this script's format version).
# Usage: bash scripts/performance.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
{ # read whole before it runs: editing the script meanwhile cannot derail a run

# Raise it whenever the page's tables change, so that an old page fails the test.
format_version=2

build=${1:-build}
runtime_runs=3 # bench-runtime --quick repetitions: its figures are medians over them
[ -d "$build/meson-private" ] || meson setup "$build" >/dev/null
targets=(cli/hcube bench/bench-runtime bench/bench-collectives bench/bench-cm200)
mpi=false
if [ -n "$(meson introspect --targets "$build" | grep -o '"name": "bench-mpi"')" ] &&
    command -v mpirun >/dev/null; then
    mpi=true
    targets+=(bench/bench-mpi)
fi
meson compile -C "$build" "${targets[@]}" >/dev/null

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
step() { printf '== %s\n' "$*" >&2; }
# How busy the cores were just before the benchmarks (other work would slow
# every figure): percent of all cores over two seconds, from /proc/stat.
cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
read -r busy0 all0 < <(cpu_ticks)
sleep 2
read -r busy1 all1 < <(cpu_ticks)
busy_before=$(( 100 * (busy1 - busy0) / (all1 - all0 > 0 ? all1 - all0 : 1) ))

step "bench-runtime --quick, $runtime_runs runs"
for r in $(seq "$runtime_runs"); do
    "$build/bench/bench-runtime" --quick --csv "$out/runtime-$r.csv" >/dev/null
done

step "hcube bench latency, bw, allport"
hcube=$build/cli/hcube
"$hcube" bench latency --sizes 0,64,4K,64K,1M --seconds 0.05 --samples 7 --json >"$out/latency.json"
"$hcube" bench bw --sizes 64,4K,64K,1M --seconds 0.05 --samples 7 --json >"$out/bw.json"
"$hcube" bench allport --dim 3 --sizes 4K,1M --seconds 0.05 --samples 7 --json >"$out/allport.json"

step "bench-collectives at d = 6, m = 1 and 4096 words"
"$build/bench/bench-collectives" --quick --dims 6 --words 1,4096 --runs 5 \
    --csv "$out/collectives.csv" 2>/dev/null

step "bench-cm200: the data motion rate at d = 6, M' = 128"
"$build/bench/bench-cm200" --rate 6 --runs 5 --csv "$out/cm200.csv" 2>"$out/cm200.txt"

if $mpi; then
    step "bench-mpi --quick at 4 ranks"
    # Open MPI refuses root unless told twice (tests/mpi does the same).
    [ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun -np 4 --oversubscribe "$build/bench/bench-mpi" --quick >"$out/mpi.csv"
fi

# The machine and the toolchain.
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
compiler=$(c++ --version | head -n 1)
{
    echo "format_version=$format_version"
    echo "command=bash scripts/performance.sh"
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu=${cpu:-unknown}"
    echo "cores=$(nproc)"
    echo "kernel=$(uname -sr)"
    echo "compiler=$compiler"
    echo "buildtype=$(meson introspect --buildoptions "$build" |
        python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"))')"
    echo "busy=$busy_before"
    echo "runtime_runs=$runtime_runs"
    echo "mpi=$($mpi && mpirun --version 2>/dev/null | head -n 1 || echo none)"
} >"$out/machine.txt"

python3 scripts/performance_page.py "$out" >docs/performance.md
# README.md's headline figures: the lines between its two markers.
python3 scripts/performance_page.py "$out" --headline >"$out/headline.md"
awk -v table="$out/headline.md" '
    /^<!-- headline figures: begin/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /^<!-- headline figures: end/ { skip = 0 }
    !skip' README.md >"$out/README.md"
cp "$out/README.md" README.md
step "wrote docs/performance.md and README.md's headline figures"
exit
}
