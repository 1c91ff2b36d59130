#!/usr/bin/env bash
# What users read carries no development history: README.md, docs/ and the
# sources never mention ../shared (a clone of hcube has no such folder), a
# numbered round of work ("session 27", "sessions 20-22"), an issue number,
# "sandbox", "met in N of M runs" or the old citations "seed 000/001/002"; and
# docs/performance.md was written by the current output format of
# scripts/performance.sh.
# Usage: hygiene.sh SOURCE_ROOT
set -u
cd "$1" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Every text file a user or a contributor reads, except this folder's, which
# has to spell the patterns out.
mapfile -t files < <(
    find README.md docs examples lib emu collectives driver draw args cli bench tests scripts \
        .ci meson.build meson_options.txt -type f -not -path 'tests/docs/*' \
        -not -name '*.pyc' -not -name '*.png' 2>/dev/null | sort
)
[ "${#files[@]}" -gt 100 ] || fail "found only ${#files[@]} files under $PWD"

# forbid WHAT REGEX: no line of any file matches the extended REGEX.
forbid() {
    local hits
    hits=$(grep -nHE -- "$2" "${files[@]}")
    [ -z "$hits" ] || fail "$1:"$'\n'"$hits"
}
forbid "../shared is not part of hcube; cite the work (docs/references.md)" '\.\./shared'
forbid "a numbered round of work" '\b[Ss]essions? [0-9]'
forbid "an issue number" '\b[Ii]ssues? #?[0-9]'
forbid "'sandbox' (say what the machine is)" '(^|[^-[:alnum:]])sandbox'
forbid "a count of runs that met a target (docs/performance.md has the figures)" \
    '\b[0-9]+ (of|in) [0-9]+ runs\b'
# The old citations, except in the script that rewrites them.
mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -vx 'scripts/cite.sh')
forbid "an old citation: run bash scripts/cite.sh (Grama et al., Hu, Mathur & Johnsson)" \
    '\b[Ss]eeds? 00[0-2]\b'

# docs/performance.md records the format version of the script that wrote it.
want=$(sed -n 's/^format_version=\([0-9][0-9]*\)$/\1/p' scripts/performance.sh)
have=$(sed -n 's/.*format version \([0-9][0-9]*\).*/\1/p' docs/performance.md | head -n 1)
if [ -z "$want" ]; then
    fail "scripts/performance.sh has no line format_version=N"
elif [ -z "$have" ]; then
    fail "docs/performance.md records no 'format version N': run bash scripts/performance.sh"
elif [ "$have" -lt "$want" ]; then
    fail "docs/performance.md has format version $have, scripts/performance.sh writes $want:" \
        "run bash scripts/performance.sh"
fi

[ "$failures" -eq 0 ] || exit 1
echo "README.md, docs/ and ${#files[@]} files: no history; performance.md format $have"
