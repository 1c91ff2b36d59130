#!/usr/bin/env bash
# hcube bench in a quick mode (a few tiny sizes, 2 iterations, 2-3 samples):
# one line per size with every column, the CSV header and cells, the JSON
# keys, the SVG well-formed with one path per curve, and every usage error.
# No timing is asserted: speed targets live in bench/.
# Usage: cli_bench.sh PATH/TO/hcube
# shellcheck source=../support/cli_common.sh
source "$(dirname "$0")/../support/cli_common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$errfile"' EXIT
quick=(--iterations 2 --samples 2 --window 4)

out=$("$hcube" bench --help) || fail "bench --help: exit status $?"
expect_line "$out" '^Usage: .*bench' "bench --help usage line"
expect_line "$out" '--sizes' "bench --help lists --sizes"
expect_line "$out" '--links' "bench --help lists the machine options"

# check_csv KIND COLUMNS SIZES ROWS ARGS...: `hcube bench KIND --csv` has the
# header COLUMNS, ROWS lines, sizes in the order SIZES (repeated per k for
# allport), every cell a number > 0 but the sizes, and 2 iterations.
check_csv() {
    local kind=$1 columns=$2 sizes=$3 rows=$4
    shift 4
    local csv
    csv=$("$hcube" bench "$kind" --csv "${quick[@]}" "$@") || {
        fail "bench $kind --csv: exit status $?"
        return
    }
    printf '%s\n' "$csv" >"$tmp/out.csv"
    python3 - "$columns" "$sizes" "$rows" "$tmp/out.csv" <<'PY' || fail "bench $kind --csv: $csv"
import csv, sys
columns, sizes, rows = sys.argv[1].split(","), sys.argv[2].split(","), int(sys.argv[3])
lines = list(csv.reader(open(sys.argv[4])))
assert lines[0] == columns, lines[0]
assert len(lines) == 1 + rows, len(lines)
got = [r[columns.index("size_bytes")] for r in lines[1:]]
assert got == (sizes * rows)[:rows], got
for r in lines[1:]:
    assert len(r) == len(columns), r
    for name, cell in zip(columns, r):
        v = float(cell)
        if name == "iterations":
            assert v == 2, r
        elif name != "size_bytes":
            assert v > 0, (name, r)
PY
}
window_columns='size_bytes,bandwidth_MBps,min_MBps,max_MBps,memcpy_MBps,iterations'
check_csv latency 'size_bytes,latency_us,min_us,max_us,raw_us,iterations' 0,1,64,8192 4 \
    --sizes 0,1,64,8K
check_csv bw "$window_columns" 1,4096 2 --sizes 1,4K
check_csv bibw "$window_columns" 1,2,4,8 4 --sizes 1-8
# A window larger than the links hold (both ends' sends would wait).
check_csv bibw "$window_columns" 1,4096 2 --sizes 1,4K --link-capacity 2
check_csv rate 'size_bytes,rate_per_s,min_per_s,max_per_s,stream_per_s,iterations' 8 1 --sizes 8
check_csv allport 'links,size_bytes,bandwidth_MBps,min_MBps,max_MBps,rate_per_s,memcpy_MBps,iterations' \
    1,8192 4 --dim 2 --sizes 1,8K
# The default link implementation and a given one, and unbuffered links.
check_csv bw "$window_columns" 64 1 --sizes 64 --links boost
check_csv latency 'size_bytes,latency_us,min_us,max_us,raw_us,iterations' 64 1 --sizes 64 \
    --link-capacity 0

# The table: comment lines, then one line per size with its six columns.
out=$("$hcube" bench latency "${quick[@]}" --sizes 0,2) || fail "bench latency: exit status $?"
expect_line "$out" '^# hcube bench latency: d = 1 \(2 nodes\), threads, ring links' "machine line"
expect_line "$out" '^# +size_bytes +latency_us +min_us +max_us +raw_us +iterations$' "header"
[ "$(grep -vc '^#' <<<"$out")" -eq 2 ] || fail "bench latency: two sizes, lines: $out"
expect_line "$out" '^ +0( +[0-9.e+-]+){4} +2$' "line of size 0"
expect_line "$out" '^ +2( +[0-9.e+-]+){4} +2$' "line of size 2"

# JSON: the machine, the method, one row per size with the CSV's columns.
json=$("$hcube" bench allport --json "${quick[@]}" --dim 2 --sizes 16) ||
    fail "bench allport --json: exit status $?"
printf '%s\n' "$json" >"$tmp/out.json"
python3 - "$tmp/out.json" <<'PY' || fail "bench allport --json: $json"
import json, sys
j = json.load(open(sys.argv[1]))
assert list(j) == ["kind", "dim", "nodes", "executor", "links", "link_capacity", "samples",
                   "window", "method", "rows", "summary"], list(j)
assert (j["kind"], j["dim"], j["nodes"], j["samples"]) == ("allport", 2, 4, 2), j
# The summary: per k the best over the sizes, and the speed-up over k = 1.
assert [s["links"] for s in j["summary"]] == [1, 2], j["summary"]
for s, r in zip(j["summary"], j["rows"]):
    # The rows have 4 significant digits, the summary all.
    assert abs(s["bandwidth_MBps"] - r["bandwidth_MBps"]) <= 1e-3 * r["bandwidth_MBps"], s
    assert abs(s["rate_per_s"] - r["rate_per_s"]) <= 1e-3 * r["rate_per_s"], s
    assert abs(s["bandwidth_speedup"] * j["summary"][0]["bandwidth_MBps"]
               - s["bandwidth_MBps"]) <= 1e-9 * s["bandwidth_MBps"], s
assert j["summary"][0]["bandwidth_speedup"] == 1 and j["summary"][0]["rate_speedup"] == 1
assert [(r["links"], r["size_bytes"]) for r in j["rows"]] == [(1, 16), (2, 16)], j["rows"]
assert list(j["rows"][0]) == ["links", "size_bytes", "bandwidth_MBps", "min_MBps", "max_MBps",
                              "rate_per_s", "memcpy_MBps", "iterations"], j["rows"][0]
assert all(r["min_MBps"] <= r["bandwidth_MBps"] <= r["max_MBps"] for r in j["rows"]), j
PY

# The table ends with the summary, one line per k, numbers without exponents.
out=$("$hcube" bench allport "${quick[@]}" --dim 2 --sizes 1,64K) ||
    fail "bench allport: exit status $?"
expect_line "$out" '^# summary: every node drives k links at once' "allport summary"
expect_line "$out" '^ +1 +[0-9.]+ +[0-9]+ +1\.00x +[0-9.]+ +[0-9]+ +1\.00x$' "allport k = 1"
expect_line "$out" '^ +2 +[0-9.]+ +[0-9]+ +[0-9.]+x +[0-9.]+ +[0-9]+ +[0-9.]+x$' "allport k = 2"
[[ $out != *e+* ]] || fail "bench allport: a number with an exponent: $out"

# SVG: well-formed, one path per curve (hcube and its limit; allport one per
# k and the limit), labelled axes.
# check_svg FILE PATHS
check_svg() {
    python3 - "$1" "$2" <<'PY' || fail "bench --svg $1"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
paths = root.findall(f".//{ns}path")
assert len(paths) == int(sys.argv[2]), len(paths)
assert all(p.get("d").startswith("M") and p.get("d").count("L") >= 1 for p in paths), paths
texts = [t.text for t in root.iter(f"{ns}text")]
assert "message size (bytes)" in texts, texts
PY
}
"$hcube" bench latency "${quick[@]}" --sizes 0,1,2,4 --svg "$tmp/latency.svg" >/dev/null ||
    fail "bench latency --svg: exit status $?"
check_svg "$tmp/latency.svg" 2
"$hcube" bench allport "${quick[@]}" --dim 2 --sizes 1,2 --svg "$tmp/allport.svg" >/dev/null ||
    fail "bench allport --svg: exit status $?"
check_svg "$tmp/allport.svg" 3

usage_error "hcube bench: missing benchmark: latency, bw, bibw, rate, allport or collective" bench
usage_error "hcube bench: KIND 'latncy' is not latency, bw, bibw, rate, allport or collective (did you mean latency?)" \
    bench latncy
usage_error "--sizes 'x' is not a size in bytes (0..64M, e.g. 0,64,4K or 1-4M)" bench bw --sizes 1,x
usage_error "--sizes '128M' is out of range" bench bw --sizes 128M
usage_error "--sizes '4K-1' is not a range of sizes from 1 up" bench bw --sizes 4K-1
usage_error "--sizes ',' names no size" bench bw --sizes ,
usage_error "--dim '0' is too small: latency needs two nodes (--dim >= 1)" bench latency --dim 0
usage_error "--dim 17 is outside 0..16 with threads (--executor fibers goes to 20)" bench latency --dim 17 --executor threads
usage_error "--dim '21' is out of range" bench latency --dim 21
usage_error "--window '0' is out of range" bench bw --window 0
usage_error "--iterations '0' is out of range" bench bw --iterations 0
usage_error "--seconds 'soon' is not a number of seconds" bench bw --seconds soon
usage_error "give --iterations or --seconds, not both" bench bw --iterations 2 --seconds 1
usage_error "give --csv or --json, not both" bench bw --csv --json
usage_error "--links 'x' is not ring or boost" bench bw --links x
usage_error "unknown option '--ts'" bench bw --ts 1
usage_error "bibw needs buffered links" bench bibw --link-capacity 0 "${quick[@]}" --sizes 1
usage_error "cannot write $tmp/no/such/dir/plot.svg" bench latency "${quick[@]}" --sizes 1 \
    --svg "$tmp/no/such/dir/plot.svg"
usage_error "allport at d = 6 with 67108864-byte messages needs 122880 MiB of buffers (at most 1024 MiB)" \
    bench allport --dim 6 --sizes 64M
# A machine the system cannot start is a usage error before anything is
# measured, as for hcube run: links of 2^20 slots need 3 TiB of address space.
if [ "${HCUBE_SANITIZE:-none}" = none ]; then
    out=$(ulimit -v 4000000 && "$hcube" bench allport --dim 12 --link-capacity 1048576 2>&1)
    rc=$?
    [ "$rc" -eq 2 ] || fail "bench allport under ulimit -v: exit status $rc, expected 2: $out"
    grep -q "machine: cannot start a 12-cube here: its links need .* of address space" <<<"$out" ||
        fail "bench allport under ulimit -v: $out"
fi
if [ "$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)" -lt 131072 ] &&
    [ "$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)" -gt 0 ]; then
    usage_error "machine: cannot start a 16-cube here" bench allport --dim 16
fi

# hcube calibrate: the fit and its points as JSON, the file it writes, and
# hcube run --cost calibrated reading it. The tests never touch $HOME.
export HCUBE_CALIBRATION=$tmp/calibration.json
survey=(--dims 2 --op-seconds 0.002)
json=$("$hcube" calibrate --json --words 1,64,4096 --ops alltoall --op-words 1,4 "${survey[@]}" \
    "${quick[@]:0:4}") ||
    fail "calibrate --json: exit status $?"
printf '%s\n' "$json" >"$tmp/calibrate.json"
python3 - "$tmp/calibrate.json" "$HCUBE_CALIBRATION" <<'PY' || fail "calibrate --json: $json"
import json, sys
close = lambda a, b: abs(a - b) <= 5e-4 * b  # stdout has 4 digits, the file all
text = open(sys.argv[1]).read()
j = json.loads(text)


def digits(s):
    """The significant digits of a JSON number as printed: 1.234e-06 has 4."""
    return len(s.split("e")[0].replace("-", "").replace(".", "").lstrip("0"))


# Times with 4 significant digits, R^2 and the residual with 3, as the text.
times = []
json.loads(text, parse_float=lambda s: times.append(s) or float(s))
assert len(times) > 10 and max(map(digits, times)) <= 4, times
assert list(j) == ["executor", "links", "t_s", "t_w", "word_bytes", "r2", "worst_residual",
                   "samples", "file", "points", "fastest"], list(j)
assert (j["executor"], j["links"], j["word_bytes"], j["file"]) == ("threads", "ring", 4,
                                                                    sys.argv[2]), j
assert j["t_s"] >= 0 and j["t_w"] >= 0 and j["t_s"] + j["t_w"] > 0, j
assert j["r2"] <= 1 and j["worst_residual"] >= 0, j
assert [p["words"] for p in j["points"]] == [1, 64, 4096], j["points"]
for p in j["points"]:
    assert p["seconds"] > 0, p
    assert abs(p["fitted"] - (j["t_s"] + j["t_w"] * p["words"])) <= 1e-3 * p["fitted"], p
saved = json.load(open(sys.argv[2]))["threads+ring"]
assert close(j["t_s"], saved["t_s"]) and close(j["t_w"], saved["t_w"]), saved
assert saved["points"] == 3, saved
# The survey: alltoall at d = 2, m = 1 and 4 words, every single-port
# algorithm timed, the fastest the least median, as saved.
assert [(f["op"], f["ports"], f["dim"], f["bytes"]) for f in j["fastest"]] == [
    ("alltoall", "single-port", 2, 4), ("alltoall", "single-port", 2, 16)], j["fastest"]
for f in j["fastest"]:
    medians = f["median_seconds"]
    assert sorted(medians) == ["dimension-exchange", "pairwise", "ring"], f
    assert f["algo"] == min(medians, key=medians.get) and min(medians.values()) > 0, f
assert [{**f, "median_seconds": None} for f in saved["fastest"]] == \
    [{**f, "median_seconds": None} for f in j["fastest"]], saved
PY
out=$("$hcube" calibrate --links boost --words 1,16 --ops allgather --op-words 1 "${survey[@]}" \
    "${quick[@]:0:4}") || fail "calibrate --links boost: exit status $?"
expect_line "$out" '^# hcube calibrate: threads executor, boost links' "calibrate machine line"
expect_line "$out" '^ +16( +[0-9.e+-]+){2} +[0-9.e+-]+%$' "calibrate line of 16 words"
# Times with at most 4 significant digits, as in the JSON.
expect_line "$out" '^t_s = [0-9](\.[0-9]{1,3})?(e-[0-9]+)? s per message$' "calibrate t_s line"
expect_line "$out" '^t_w = [0-9](\.[0-9]{1,3})?(e-[0-9]+)? s per word \(a word: int32, 4 bytes' \
    "calibrate t_w line"
expect_line "$out" '^fit: R\^2 = ' "calibrate fit line"
expect_line "$out" '^# op +dim +bytes +fastest +median_us +runner-up +median_us$' \
    "calibrate survey header"
fastest=$(printf '%s\n' "$out" | sed -n 's/^  allgather \+2 \+4 \+\([a-z-]*\) .*/\1/p')
[[ -n $fastest ]] || fail "calibrate survey line of allgather at d = 2: $out"
expect_line "$out" "^saved 1 points to $HCUBE_CALIBRATION\$" "calibrate survey saved"
# --quick: t_s and t_w only (no survey), and the note on what they predict.
out=$("$hcube" calibrate --quick --words 1,16 --file "$tmp/quick.json" 2>"$tmp/quick.err") ||
    fail "calibrate --quick: exit status $?"
expect_line "$out" '^# hcube calibrate: .* median of 3 samples$' "calibrate --quick samples"
expect_line "$out" '^# these are one message.s costs' "calibrate note on predictions"
[[ $out != *"# op "* ]] || fail "calibrate --quick ran the survey: $out"
# hcube run follows the survey where it measured, and says so.
out=$("$hcube" run allgather --dim 2 --links boost --cost calibrated) ||
    fail "run allgather --cost calibrated: $?"
expect_line "$out" "^  auto chose +$fastest: measured fastest here at dim 2, m = 4 bytes \(hcube calibrate\)\$" \
    "run follows the measured fastest"
out=$("$hcube" run allgather --dim 3 --links boost --cost calibrated) ||
    fail "run allgather --dim 3 --cost calibrated: $?"
expect_line "$out" "^  auto chose +[a-z-]+: the least predicted wall time on [0-9]+ cores" \
    "run without a measured point uses the model"
out=$("$hcube" calibrate --links boost --words 1,16 --ops none "${quick[@]:0:4}") ||
    fail "calibrate --ops none: exit status $?"
[[ $out != *"saved 1 points"* && $out != *"# op "* ]] || fail "calibrate --ops none surveyed: $out"
run=$("$hcube" run alltoall --dim 2 --cost calibrated --json) || fail "run --cost calibrated: $?"
python3 -c '
import json, sys
run, saved = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))["threads+ring"]
close = lambda a, b: abs(a - b) <= 1e-13 * b  # the run prints 15 digits
assert close(run["ts"], saved["t_s"]) and close(run["tw"], saved["t_w"]), (run, saved)
# The run sums its steps, the formula multiplies: equal up to rounding, which
# can move the 15th digit (--ts 2.4094365474415353e-06 --tw
# 3.0405522059153737e-10 prints 7.23013397364816e-06 and ...815e-06).
assert run["virtual_time"] > 0 and close(run["formula_time"], run["virtual_time"]), run
' "$run" "$HCUBE_CALIBRATION" || fail "run --cost calibrated: $run"
usage_error "no calibration for fibers+ring in $HCUBE_CALIBRATION: run \`hcube calibrate --executor fibers --links ring\` first" \
    run alltoall --cost calibrated --executor fibers
usage_error "--cost calibrated sets t_s and t_w; give it or --ts/--tw, not both" \
    run alltoall --cost calibrated --tw 2
usage_error "--words needs at least two sizes" calibrate --words 64
usage_error "unknown option '--dim'" calibrate --dim 2
usage_error "--ops: unknown operation 'bogus'" calibrate --ops allgather,bogus
usage_error "give --iterations or --seconds, not both" calibrate --iterations 2 --seconds 1

# hcube bench collective in a quick mode, with the calibration above: one
# row per algorithm that fits and size, every column, auto's choice as hcube
# run --cost calibrated makes it, one fastest per size, the agreement.
csv=$("$hcube" bench collective alltoall --dim 2 --sizes 1,4 --csv "${quick[@]:0:4}") ||
    fail "bench collective --csv: exit status $?"
printf '%s\n' "$csv" >"$tmp/collective.csv"
chosen=()
for m in 1 4; do
    chosen+=("$("$hcube" run alltoall --dim 2 --words $m --cost calibrated --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["algo"])')")
done
python3 - "$tmp/collective.csv" "${chosen[@]}" <<'PY' || fail "bench collective --csv: $csv"
import csv, sys
lines = list(csv.reader(open(sys.argv[1])))
columns = ["algo", "words", "time_us", "min_us", "max_us", "predicted_us", "calls", "auto",
           "fastest"]
assert lines[0] == columns, lines[0]
rows = [dict(zip(columns, r)) for r in lines[1:]]
algos = ["dimension-exchange", "pairwise", "ring"]  # all-port needs --ports all
assert [(r["algo"], r["words"]) for r in rows] == [(a, m) for m in "14" for a in algos], rows
for r in rows:
    assert len(r) == len(columns), r
    assert 0 < float(r["min_us"]) <= float(r["time_us"]) <= float(r["max_us"]), r
    assert float(r["predicted_us"]) > 0 and r["calls"] == "2", r
    assert r["auto"] in "01" and r["fastest"] in "01", r
for m, want in zip("14", sys.argv[2:]):
    at = [r for r in rows if r["words"] == m]
    assert [r["algo"] for r in at if r["auto"] == "1"] == [want], (m, want, at)
    fastest = min(at, key=lambda r: float(r["time_us"]))
    assert [r["algo"] for r in at if r["fastest"] == "1"] == [fastest["algo"]], at
PY
json=$("$hcube" bench collective broadcast --dim 2 --sizes 1,8 --algo all --json \
    "${quick[@]:0:4}") || fail "bench collective --json: exit status $?"
printf '%s\n' "$json" >"$tmp/collective.json"
python3 - "$tmp/collective.json" <<'PY' || fail "bench collective --json: $json"
import json, sys
j = json.load(open(sys.argv[1]))
assert list(j) == ["kind", "dim", "nodes", "executor", "links", "link_capacity", "samples", "op",
                   "t_s", "t_w", "method", "rows", "compared_sizes", "agreement", "notes"], list(j)
assert j["notes"] == [], j["notes"]
assert (j["kind"], j["op"], j["dim"], j["samples"]) == ("collective", "broadcast", 2, 2), j
sizes = sorted({r["words"] for r in j["rows"]})
assert sizes == [1, 8] and j["compared_sizes"] == 2, j
agreed = sum(any(r["auto"] and r["fastest"] for r in j["rows"] if r["words"] == m) for m in sizes)
assert j["agreement"] == agreed / 2, j
PY
# At q = 1 (bench's shift) gray-bidirectional runs gray's one forward phase:
# timed once, as gray, and said so.
out=$("$hcube" bench collective shift --dim 3 --sizes 1,2 "${quick[@]:0:4}") ||
    fail "bench collective shift: exit status $?"
[ "$(grep -v '^#' <<<"$out" | awk '{print $1}' | sort -u | tr '\n' ' ')" = "ecube gray " ] ||
    fail "bench collective shift: rows of gray and ecube only: $out"
for m in 1 2; do
    expect_line "$out" "^# m = $m: gray-bidirectional runs gray's plan here; timed once, as gray\$" \
        "shift's note at m = $m"
done
out=$("$hcube" bench collective shift --dim 2 --algo ecube --sizes 2 "${quick[@]:0:4}") ||
    fail "bench collective --algo ecube: exit status $?"
expect_line "$out" '^# hcube bench collective: d = 2 \(4 nodes\), threads, ring links' \
    "collective machine line"
[ "$(grep -vc '^#' <<<"$out")" -eq 1 ] || fail "bench collective --algo ecube: one line: $out"
expect_line "$out" '^ +ecube +2( +[0-9.e+-]+){5} +[01] +1$' "collective line of ecube"
expect_line "$out" '^# t_s = .* chose the fastest at 0 of 0 sizes' "collective agreement line"
usage_error "missing operation: hcube bench collective OP" bench collective
usage_error "unknown operation 'alltoal'" bench collective alltoal
usage_error "unknown algorithm 'x' for alltoall" bench collective alltoall --algo x
usage_error "alltoall all-port: all-port exchanges on all 2 links at once; run with --ports all" \
    bench collective alltoall --algo all-port --dim 2
usage_error "--svg plots the link benchmarks, not collective" bench collective alltoall \
    --svg "$tmp/c.svg"
usage_error "latency takes no operation ('alltoall')" bench latency alltoall
usage_error "--algo applies to bench collective, not bw" bench bw --algo pairwise
usage_error "alltoall pairwise with m = 4194304 on 16 nodes needs about" \
    bench collective alltoall --algo pairwise --sizes 4M
usage_error "--sizes 'x' is not a size in words (0..64M" bench collective alltoall --sizes 1,x
HCUBE_CALIBRATION=$tmp/none.json usage_error "no calibration for threads+ring in $tmp/none.json" \
    bench collective alltoall

finish
