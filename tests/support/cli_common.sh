# Sourced by the command-line test scripts: the program under test is $1;
# fail records a failure, expect_line checks some line of an output.
set -u
hcube=$1
failures=0
errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_line OUTPUT REGEX WHAT: some line of OUTPUT matches REGEX.
expect_line() { grep -Eq -- "$2" <<<"$1" || fail "$3: no line matching '$2' in:"$'\n'"$1"; }
