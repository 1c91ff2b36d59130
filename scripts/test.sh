#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing, checks
# the formatting (.clang-format), builds and runs every suite in a normal
# build (checking that each source also compiles alone), the runtime's and
# the differential test under AddressSanitizer and UndefinedBehaviorSanitizer,
# the suites where nodes race under ThreadSanitizer, and checks that an
# installed hcube can be consumed through pkg-config.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

configure() { # configure DIR [meson options...]: set up once, reconfigure after
    local dir=$1
    shift
    if [ -d "$dir/meson-private" ]; then
        meson setup --reconfigure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi
}

echo "== formatting: clang-format --dry-run --Werror on the tracked C++ files"
# A violation fails the script at the end, after every suite has run.
formatted=true
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z '*.cpp' '*.hpp' | xargs -0 clang-format --dry-run --Werror || formatted=false
else
    echo "not a git checkout: formatting not checked"
fi

# Every suite must have run in the build named: a dependency that went
# missing (MPI is auto-detected elsewhere) must not make its tests vanish.
expect_suites() { # expect_suites DIR SUITE...
    local dir=$1 suite
    shift
    for suite in "$@"; do
        # Test names read "hcube:emu+fibers / emu-fibers": project, suites, name.
        grep -Eq "\"name\": \"hcube:([a-z-]+\+)*$suite(\+[a-z-]+)* / " "$dir/meson-logs/testlog.json" ||
            { echo "no test of suite '$suite' ran in $dir"; exit 1; }
    done
}

# Every build keeps line tables only (-g1): enough for the sanitizers' and a
# debugger's backtraces, and a third faster to compile than full -g. Each
# compiles a target's files as one (unity): the same headers and templates
# once instead of per file, a quarter less to compile; a plain build (the
# tour's) still builds every file on its own.
ci_options=(-Dcpp_args=-g1 -Dunity=on)
echo "== build and test (-O2, line tables)"
# setup.sh installs Open MPI: its suites are required here, not auto-detected.
configure build -Dmpi=enabled "${ci_options[@]}"
meson compile -C build
echo "== each source compiles on its own, as in a plain build (the tour's)"
python3 scripts/compile_alone.py build "$(nproc)"
# The random differential test's budget (docs/testing.md): 20 s here and 10 s
# under the sanitizers instead of 60 s and 20 s by hand; every run first
# sweeps every algorithm once, then draws from its variant's fixed seed.
HCUBE_DIFF_SECONDS=20 meson test -C build --print-errorlogs
expect_suites build lib emu fibers links-boost rooted reductions personalized cm200 aspc \
    differential determinism api allport cli draw mpi examples docs

echo "== build and test under AddressSanitizer and UndefinedBehaviorSanitizer"
# The runtime (its three variants), the public API and the differential
# test, which reaches every algorithm; the other suites run the same code
# paths on more sizes and stay with the normal and TSan builds.
# At -O1 (ASan asks for -O1 or more): UBSan's checks make -O2 compile 2.5
# times slower, for tests that take seconds.
configure build-asan -Db_sanitize=address,undefined -Doptimization=1 "${ci_options[@]}" \
    -Dbench=false -Dexamples=false -Dmpi=disabled
asan_suites=(emu api differential)
meson compile -C build-asan tests/emu/test-emu tests/emu/test-emu-blocked tests/emu/test-link-types \
    tests/emu/test-memory tests/api/test-api tests/differential/test-collective-facts \
    tests/differential/test-auto-choice tests/differential/test-calibration \
    tests/differential/test-differential
ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
    HCUBE_DIFF_SECONDS=10 meson test -C build-asan --no-rebuild --print-errorlogs \
    --timeout-multiplier 3 "${asan_suites[@]/#/--suite=}"
expect_suites build-asan "${asan_suites[@]}" fibers links-boost

echo "== build and test under ThreadSanitizer"
# The suites where nodes race: the runtime and its choices among sources
# (emu, determinism), the public API, and the differential test, which
# reaches every algorithm under threads and fibers; the other suites run the
# same code on more sizes.
configure build-tsan -Db_sanitize=thread "${ci_options[@]}" -Dbench=false -Dexamples=false \
    -Dmpi=disabled
tsan_suites=(emu api differential determinism)
meson compile -C build-tsan tests/emu/test-emu tests/emu/test-emu-blocked tests/emu/test-link-types \
    tests/emu/test-memory tests/api/test-api tests/differential/test-collective-facts \
    tests/differential/test-auto-choice tests/differential/test-calibration \
    tests/differential/test-differential tests/determinism/test-determinism
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" HCUBE_DIFF_SECONDS=10 \
    HCUBE_DETERMINISM_SECONDS=5 meson test -C build-tsan --no-rebuild --print-errorlogs \
    --timeout-multiplier 3 "${tsan_suites[@]/#/--suite=}"
expect_suites build-tsan "${tsan_suites[@]}" fibers links-boost

echo "== install and consume through pkg-config"
stage=$PWD/build/stage
rm -rf "$stage"
meson install -C build --destdir "$stage" >/dev/null
pc_dir=$(dirname "$(find "$stage" -name hcube.pc | head -n 1)")
export PKG_CONFIG_PATH=$pc_dir
prefix=$(pkg-config --variable=prefix hcube)
flags=$(pkg-config --define-variable=prefix="$stage$prefix" --cflags --libs hcube)
# shellcheck disable=SC2086
c++ -std=c++20 examples/hello.cpp $flags -o build/stage/hello
LD_LIBRARY_PATH=$(dirname "$(find "$stage" -name 'libhcube.so' | head -n 1)") build/stage/hello 3 >/dev/null
# shellcheck disable=SC2086
c++ -std=c++20 examples/lab/token_ring.cpp \
    $(pkg-config --define-variable=prefix="$stage$prefix" --cflags --libs hcube-draw) \
    -o build/stage/token_ring
(cd build/stage && LD_LIBRARY_PATH=$(dirname "$(find "$stage" -name 'libhcube.so' | head -n 1)") \
    ./token_ring 3 >/dev/null)
echo "installed headers, libraries, hcube.pc and hcube-draw.pc build and run a node program and a drawing one"

# One closing line over the three builds (meson's own logs): tests that ended as
# expected (OK, or EXPECTEDFAIL for the deadlock example) against the rest.
logs=(build/meson-logs/testlog.json build-asan/meson-logs/testlog.json
    build-tsan/meson-logs/testlog.json)
passed=$(cat "${logs[@]}" | grep -Eo '"result": "(OK|EXPECTEDFAIL)"' | wc -l)
failed=$(cat "${logs[@]}" | grep -Eo '"result": "[A-Z]+"' | grep -Evc 'OK|EXPECTEDFAIL' || true)
echo "hcube: $passed passed, $failed failed"
$formatted || { echo "formatting: run clang-format -i on the files listed above"; exit 1; }
