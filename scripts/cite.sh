#!/usr/bin/env bash
# Rewrites the old citations "seed 000", "seed 001" and "seed 002" (file
# numbers of the project's working copies of its sources) as their authors,
# in every tracked file: Grama et al. (Introduction to Parallel Computing,
# chapter 4), Hu (Optimal All-to-Some Personalized Communication on
# Hypercubes), Mathur & Johnsson (All-to-All Communication on the Connection
# Machine CM-200); docs/references.md cites them in full. Run it again after
# merging work that still writes the old form; it changes nothing twice.
# Usage: bash scripts/cite.sh   (then review `git diff` and commit)
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files -z | xargs -0 grep -lE '\b[Ss]eed' -- |
    grep -vxE 'scripts/cite.sh|tests/docs/hygiene.sh|docs/pictures/.*\.png')
[ "${#files[@]}" -gt 0 ] || exit 0

perl -0777 -pi -e '
    # A citation broken over two lines: "seed" joins the next line.
    s/ ([Ss])eeds?\n(\s*(?:\/\/ |# )?)(00[0-2]|sections?\b|formulas?\b|sources?\b)/\n$2$1eed $3/g;
    # A citation that already names its author: keep the author once.
    s/\b[Ss]eed 001 \(Hu\)/Hu/g;
    s/\(seed 001, Hu\)/(Hu)/g;
    s/\(seed 002\) \(Mathur/(Mathur/g;
    s/\s*\(seed `00[0-2]_[0-9a-f]+\.txt`\)//g;
    s/\bseed-002\b/Mathur & Johnsson\x27s/g;
    # Possessives, then "seed 00N, X" (the place follows the author), then the rest.
    s/\b[Ss]eed 000\x27s\b/Grama et al.\x27s/g;
    s/\b[Ss]eed 001\x27s\b/Hu\x27s/g;
    s/\b[Ss]eed 002\x27s\b/Mathur & Johnsson\x27s/g;
    s/\b[Ss]eed 002, ([0-9]),/Mathur & Johnsson section $1,/g;
    s/\b[Ss]eed 000, /Grama et al. /g;
    s/\b[Ss]eed 002, /Mathur & Johnsson /g;
    s/\b[Ss]eed 001, /Hu, /g;
    s/\b[Ss]eed 000\b\.?/Grama et al./g;
    s/\b[Ss]eed 001\b/Hu/g;
    s/\b[Ss]eed 002\b/Mathur & Johnsson/g;
    s/\b[Ss]eeds 000 and 002\b/Grama et al. and Mathur & Johnsson/g;
    # "the seed" meaning the work cited (not a random seed).
    s/\b([Tt])he seed\x27s\b/$1he source\x27s/g;
    s/\b([Tt])he seeds\x27/$1he sources\x27/g;
    s/\b([Tt])he seeds\b/$1he sources/g;
    s/\b([Tt])he seed (goes|uses|leaves|counts|speaks|prints|found|saw|gives|are|lists|section)\b/$1he source $2/g;
    s/\b([Tt])he seed:/$1he source:/g;
    s/\b(in|of) the seed\b/$1 the source/g;
    s/\bseeds draw\b/sources draw/g;
    s/\bthe seed\.s\b/the source.s/g;
    s/\bas the seed\b/as the source/g;
    s/\bother seeds\b/other sources/g;
    s/\bseed costs\b/source costs/g;
    s/\bseed (sources?)\b/$1/g;
    s/\| seed \|/| source |/g;
    s/\(seed ([0-9])/(source: $1/g;
    s/\(seed: /(source: /g;
    s/\bseed\x27s\b/source\x27s/g;
    s/\bseeds\x27/sources\x27/g;
    s/\bseed (sections?|formulas?|properties)\b/source $1/g;
    s/\bseed (direct|pipelined)\b/Hu\x27s $1/g;
    s/"seed, 2048/"Mathur & Johnsson, 2048/g;
    s/\b(The|the|every|Every|each) (Mathur & Johnsson|Grama et al\.|Hu)\x27s\b/$1 $2/g;
    s/\b(Mathur & Johnsson) \(Mathur & Johnsson, /$1 (/g;
    s/\bHu, Hu\b/Hu/g;
    s/\bMathur & Johnsson,? Mathur & Johnsson\b/Mathur & Johnsson/g;
' "${files[@]}"
# Longer names make longer lines: the C++ files go through clang-format again.
git diff --name-only -z -- '*.cpp' '*.hpp' | xargs -0 -r clang-format -i
git diff --stat | tail -n 1
