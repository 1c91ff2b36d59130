#!/usr/bin/env bash
# docs/cli.md agrees with the program: for every subcommand `hcube --help`
# lists, the options named in the first column of the tables in the page's
# section "## hcube COMMAND" are exactly those `hcube COMMAND --help` lists.
# Usage: cli_options.sh PATH/TO/hcube PATH/TO/docs/cli.md
# shellcheck source=../support/cli_common.sh
source "$(dirname "$0")/../support/cli_common.sh"
page=$2

# The option names of a CLI11 help text: the first column of its option lines.
help_options() {
    awk '/^Options:/ { on = 1; next } /^[^ ]/ { on = 0 }
         on && /^ +-/ { sub(/^ +/, ""); split($0, cell, /  +/); print cell[1] }' |
        grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- '--help' | sort -u
}

# The option names in the first cells of the tables of section "## hcube $1".
page_options() {
    awk -v want="## hcube $1" '
        /^## / { on = ($0 == want || index($0, want " ") == 1) }
        on && /^\| / { split($0, cell, "|"); print cell[2] }' "$page" |
        grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

overview=$("$hcube" --help) || fail "hcube --help exited with $?"
mapfile -t commands < <(awk '/^Subcommands:/ { on = 1; next } /^[^ ]/ { on = 0 }
                             on && /^  [a-z]/ { print $1 }' <<<"$overview")
[ "${#commands[@]}" -ge 6 ] || fail "hcube --help lists ${#commands[@]} subcommands: $overview"
for c in "${commands[@]}"; do
    grep -qx "## hcube $c.*" "$page" || {
        fail "docs/cli.md has no section '## hcube $c'"
        continue
    }
    help=$("$hcube" "$c" --help) || fail "hcube $c --help exited with $?"
    want=$(help_options <<<"$help")
    have=$(page_options "$c")
    missing=$(comm -23 <(echo "$want") <(echo "$have") | xargs)
    extra=$(comm -13 <(echo "$want") <(echo "$have") | xargs)
    [ -z "$missing" ] || fail "docs/cli.md, hcube $c: no table row for $missing"
    [ -z "$extra" ] || fail "docs/cli.md, hcube $c: rows for $extra, which --help does not list"
done

[ "$failures" -eq 0 ] || exit 1
echo "docs/cli.md lists the options of ${commands[*]} as their --help does"
