#!/usr/bin/env bash
# The runtime's seams hold: no file of emu/src outside the MPI backend's folder
# and the table of backends names MPI (generic code asks the backend, never
# which backend it is), and nothing outside emu/ includes the runtime's
# private headers.
# Usage: house.sh SOURCE_ROOT
set -u
cd "$1" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mapfile -t runtime < <(find emu/src -type f \( -name '*.cpp' -o -name '*.hpp' \) \
    -not -path 'emu/src/mpi/*' -not -path 'emu/src/backends.cpp' | sort)
[ "${#runtime[@]}" -gt 20 ] || fail "found only ${#runtime[@]} runtime files under $PWD/emu/src"
# "compiled" and "compiler" contain the letters; a word boundary keeps them out.
hits=$(grep -nHiwE 'mpi|mpi_[a-z_]+|openmpi' "${runtime[@]}")
[ -z "$hits" ] || fail "generic runtime code names MPI (ask the backend, backend.hpp):"$'\n'"$hits"

hits=$(grep -rnHE '#include.*(emu/src|\.\./src/)' cli bench draw driver collectives args examples \
    --include='*.cpp' --include='*.hpp' 2>/dev/null)
[ -z "$hits" ] || fail "a file outside emu/ includes the runtime's private headers:"$'\n'"$hits"

[ "$failures" -eq 0 ] || exit 1
echo "emu/src: ${#runtime[@]} generic files name no backend; no private header leaks"
