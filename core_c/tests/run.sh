#!/bin/sh
# Build and run the C core's tests (usable from any directory):
#   1. compile every core source, and the tests, with -std=c11 -pedantic -Wall -Wextra -Werror;
#   2. build test_core, stress and the fuzz harness's replay driver with
#      -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1 and run them
#      (stress with a fixed seed and a moderate iteration count).
# Exits non-zero on the first failure.
#
# Environment:
#   CC                 C compiler (default: cc)
#   ST_CORE_SOURCES    core sources to build (default: every core_c/src/*.c)
#   ST_TEST_BUILD_DIR  where binaries go (default: a temporary directory, removed at exit)
#   STRESS_SEED, STRESS_ITERS, STRESS_LIMIT   stress arguments (default: 1, 1500, 2 seconds)
#   ST_FUZZ_SECONDS    if > 0 and clang has libFuzzer, also fuzz for that many seconds
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-cc}
SRCS=${ST_CORE_SOURCES:-$(ls "$root"/core_c/src/*.c)}
INC="-I$root/core_c/include"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -g -O1"
WARN="-std=c11 -pedantic -Wall -Wextra -Werror"

if [ -n "${ST_TEST_BUILD_DIR:-}" ]; then
    build=$ST_TEST_BUILD_DIR
    mkdir -p "$build"
else
    build=$(mktemp -d)
    trap 'rm -rf "$build"' EXIT
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

step() { printf '== %s\n' "$*"; }

step "warnings: $CC $WARN -O2 (core sources and tests)"
for f in $SRCS; do
    $CC $WARN -O2 $INC -c "$f" -o "$build/warn_$(basename "$f" .c).o"
done
for t in test_core stress fuzz_pretokenize; do
    $CC $WARN -O2 $INC -DST_FUZZ_MAIN -c "$here/$t.c" -o "$build/warn_$t.o"
done

step "sanitizer build: $CC $SAN"
objs=""
for f in $SRCS; do
    o="$build/san_$(basename "$f" .c).o"
    $CC -std=c11 $SAN $INC -c "$f" -o "$o"
    objs="$objs $o"
done
$CC -std=c11 $SAN $INC "$here/test_core.c" $objs -o "$build/test_core"
$CC -std=c11 $SAN $INC "$here/stress.c" $objs -o "$build/stress"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_pretokenize.c" $objs -o "$build/fuzz_replay"

step "test_core"
"$build/test_core"

step "stress ${STRESS_SEED:-1} ${STRESS_ITERS:-1500}"
"$build/stress" "${STRESS_SEED:-1}" "${STRESS_ITERS:-1500}" "${STRESS_LIMIT:-2}"

step "fuzz harness, replaying a few inputs"
printf "Hello world 12345, it's 2024!\r\n  ok  " >"$build/seed1"
printf 'caf\303\251 \344\275\240\345\245\275 \360\237\230\200 x\314\201 \340\270\252 \316\261\316\262' >"$build/seed2"
printf 'Han,Nope,Thai' >"$build/seed3"
printf 'ab\355\240\200\300\200\364\220\200\200\377' >"$build/seed4"
: >"$build/seed5"
"$build/fuzz_replay" "$build/seed1" "$build/seed2" "$build/seed3" "$build/seed4" "$build/seed5"

if [ "${ST_FUZZ_SECONDS:-0}" -gt 0 ]; then
    if command -v clang >/dev/null 2>&1 &&
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_pretokenize.c" -o "$build/fuzz_pretokenize" 2>/dev/null; then
        step "libFuzzer for ${ST_FUZZ_SECONDS} s"
        mkdir -p "$build/corpus"
        cp "$build"/seed? "$build/corpus/"
        (cd "$build" && ./fuzz_pretokenize -max_total_time="$ST_FUZZ_SECONDS" -max_len=4096 corpus)
    else
        step "libFuzzer: clang with -fsanitize=fuzzer not available, skipped"
    fi
fi

step "all C tests passed"
