# Sourced by the command-line test scripts: the program under test is $1;
# fail records a failure, expect_line checks some line of an output.
set -u
hcube=$1
failures=0
errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# finish: the script's summary line, and its status (0 when nothing failed).
finish() {
    echo "$(basename "$(dirname "$0")")/$(basename "$0"): $failures failure(s)"
    [ "$failures" -eq 0 ]
}

# expect_line OUTPUT REGEX WHAT: some line of OUTPUT matches REGEX.
expect_line() { grep -Eq -- "$2" <<<"$1" || fail "$3: no line matching '$2' in:"$'\n'"$1"; }

# usage_error WANT ARGS...: `hcube ARGS` exits with status 2, prints exactly
# one line on stderr, which contains WANT, and nothing on stdout (with --json:
# the error as one JSON object).
usage_error() {
    local want=$1
    shift
    local out rc err
    out=$("$hcube" "$@" 2>"$errfile")
    rc=$?
    err=$(<"$errfile")
    [ "$rc" -eq 2 ] || fail "hcube $*: exit status $rc, expected 2"
    if [[ " $* " == *" --json "* ]]; then
        python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert list(j) == ["command", "error", "exit_status"], list(j)
assert sys.argv[2] in j["command"] + ": " + j["error"] and j["exit_status"] == 2, j' "$out" "$want" 2>/dev/null ||
            fail "hcube $*: stdout is not the error as JSON: $out"
    else
        [ -z "$out" ] || fail "hcube $*: printed on stdout: $out"
    fi
    [ "$(grep -c . <<<"$err")" -eq 1 ] || fail "hcube $*: expected one stderr line: $err"
    grep -Fq -- "$want" <<<"$err" || fail "hcube $*: stderr '$err' lacks '$want'"
}
