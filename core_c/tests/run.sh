#!/bin/sh
# Build and run the C core's tests (usable from any directory):
#   1. compile every core source, and the tests, with -std=c11 -pedantic -Wall -Wextra -Werror;
#   2. build test_core, stress, test_encode, test_vectors, test_decoder, test_model, test_tokenizer_json, test_export, test_threads and the fuzz harnesses'
#      replay drivers with -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1 and run
#      them (stress with a fixed seed and a moderate iteration count; test_encode with the shipped
#      rank files in py/supertok/vocab, at the reduced sizes its header describes; test_vectors
#      on every file of vectors/ the C API covers; test_decoder
#      with the shipped rank files and the models in vectors/models;
#      test_model on the model files in vectors/models; test_export with the shipped rank files;
#      test_tokenizer_json on hand-written tokenizer.json files).
#   stress, test_encode and test_train check that the core's work grows linearly by counting it,
#   not by timing it: they link a copy of the core whose files using ST_COUNT (core_c/src/base/work_counter.h)
#   are compiled with -DST_TEST_COUNTERS. Every other binary links the core as shipped.
#   The fuzz harnesses' replay drivers (fuzz_model, fuzz_tokenizer_json, ...) also run seeded random
#   damages of their seeds (the *_MUTATIONS variables below).
# Exits non-zero on the first failure.
#
# Environment:
#   CC                 C compiler (default: cc)
#   ST_CORE_SOURCES    core sources to build (default: the files core_c/sources.txt lists)
#   ST_TEST_BUILD_DIR  where binaries go (default: a temporary directory, removed at exit)
#   STRESS_SEED, STRESS_ITERS   stress arguments (default: 1, 1500)
#   ST_FUZZ_SECONDS    if > 0 and clang has libFuzzer, also fuzz for that many seconds (the
#                      pre-tokenizer harness, then each mode of the encoder harness, then the
#                      model-file harness, the tokenizer.json harness, ...)
#   ST_TRAIN_SEEDS     random corpora test_train checks against its naive reference (default 300)
#   ST_TRAIN_MUTATIONS random inputs fuzz_train's replay driver runs (default 1000)
#   ST_MODEL_MUTATIONS random damages of the model seeds run by fuzz_model's replay driver
#                      (default 20000; the libFuzzer-free fuzz; it also bounds the memory each
#                      model takes by the file's size)
#   ST_TJSON_MUTATIONS random damages run by fuzz_tokenizer_json's replay driver (default 20000,
#                      about 10 s under the sanitizers): of the tokenizer.json models in
#                      vectors/tokenizer_json, hostile compact images the driver builds and the
#                      compact images of those that load (JSON-aware damages too: keys repeated,
#                      types swapped, deep nesting, bad escapes; an allocation failed). It checks
#                      the error contract, leaks, that loaded models round-trip a text and give
#                      the same ids from their compact image, and bounds the memory held by
#                      4 MiB + 96 a byte of the input (measured: 3.5 a byte of the open models'
#                      files, 31 of their compact images, 60 of a hostile image at the limit
#                      of the bytes its merges may derive)
#   ST_UBE_STREAM_INPUTS random (partly damaged) stream states and symbols fed by
#                      fuzz_ube_stream's random driver (default 100000)
#   ST_NFC_INPUTS      random texts fuzz_nfc's random driver normalizes (default 20000)
#   ST_VOCAB_DIR       the rank files for test_encode and fuzz_encode (default: py/supertok/vocab)
#   ST_ENCODE_BIG      passed on to test_encode: 1 for its full sizes (slow under the
#                      sanitizers; meant for an -O2 build, see test_encode.c)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-cc}
SRCS=${ST_CORE_SOURCES:-$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e "s|^|$root/core_c/|" "$root/core_c/sources.txt")}
VOCAB=${ST_VOCAB_DIR:-$root/py/supertok/vocab}
export ST_VOCAB_DIR="$VOCAB"
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
# an object's name for a core source: its path under src/ with / as _ (text/ube.c: text_ube)
objname() { printf '%s' "$1" | sed -e 's|.*/src/||' -e 's|\.c$||' -e 's|/|_|g'; }

step "warnings: $CC $WARN -O2 (core sources and tests)"
for f in $SRCS; do
    $CC $WARN -O2 $INC -c "$f" -o "$build/warn_$(objname "$f").o"
done
# the files using the work counter, compiled as tests build them (work_counter.h)
CNT_SRCS=$(grep -l 'ST_COUNT\|ST_TEST_COUNTERS' $SRCS)
for f in $CNT_SRCS; do
    $CC $WARN -O2 $INC -DST_TEST_COUNTERS -c "$f" -o "$build/warn_cnt_$(objname "$f").o"
done
for t in test_core stress fuzz_pretokenize test_encode fuzz_encode test_threads test_vectors test_decoder test_model fuzz_model test_tokenizer_json fuzz_tokenizer_json test_train fuzz_train fuzz_ube_stream fuzz_nfc test_export; do
    $CC $WARN -O2 $INC -DST_FUZZ_MAIN -DST_TEST_COUNTERS -c "$here/$t.c" -o "$build/warn_$t.o"
done

step "sanitizer build: $CC $SAN"
objs=""
for f in $SRCS; do
    o="$build/san_$(objname "$f").o"
    $CC -std=c11 $SAN $INC -c "$f" -o "$o"
    objs="$objs $o"
done
# the same objects, with the files using the work counter rebuilt with -DST_TEST_COUNTERS
cobjs=""
for f in $SRCS; do
    o="$build/san_$(objname "$f").o"
    case " $(echo $CNT_SRCS) " in
    *" $f "*)
        o="$build/san_cnt_$(objname "$f").o"
        $CC -std=c11 $SAN $INC -DST_TEST_COUNTERS -c "$f" -o "$o" ;;
    esac
    cobjs="$cobjs $o"
done
$CC -std=c11 $SAN $INC "$here/test_core.c" $objs -o "$build/test_core"
$CC -std=c11 $SAN $INC -DST_TEST_COUNTERS "$here/stress.c" $cobjs -o "$build/stress"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_pretokenize.c" $objs -o "$build/fuzz_replay"
$CC -std=c11 $SAN $INC -DST_TEST_COUNTERS "$here/test_encode.c" $cobjs -o "$build/test_encode"
$CC -std=c11 $SAN $INC "$here/test_vectors.c" $objs -o "$build/test_vectors"
$CC -std=c11 $SAN $INC "$here/test_decoder.c" $objs -o "$build/test_decoder"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_encode.c" $objs -o "$build/fuzz_encode_replay"
$CC -std=c11 $SAN $INC "$here/test_model.c" $objs -o "$build/test_model"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_model.c" $objs -o "$build/fuzz_model_replay"
$CC -std=c11 $SAN $INC "$here/test_tokenizer_json.c" $objs -o "$build/test_tokenizer_json"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_tokenizer_json.c" $objs -o "$build/fuzz_tokenizer_json_replay"
$CC -std=c11 $SAN $INC "$here/test_export.c" $objs -o "$build/test_export"
$CC -std=c11 $SAN $INC -DST_TEST_COUNTERS "$here/test_train.c" $cobjs -o "$build/test_train"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_train.c" $objs -o "$build/fuzz_train_replay"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_ube_stream.c" $objs -o "$build/fuzz_ube_stream_random"
$CC -std=c11 $SAN $INC -DST_FUZZ_MAIN "$here/fuzz_nfc.c" $objs -o "$build/fuzz_nfc_random"

step "test_core"
"$build/test_core"

step "stress ${STRESS_SEED:-1} ${STRESS_ITERS:-1500}"
"$build/stress" "${STRESS_SEED:-1}" "${STRESS_ITERS:-1500}"

step "fuzz harness, replaying a few inputs"
printf "Hello world 12345, it's 2024!\r\n  ok  " >"$build/seed1"
printf 'caf\303\251 \344\275\240\345\245\275 \360\237\230\200 x\314\201 \340\270\252 \316\261\316\262' >"$build/seed2"
printf 'Han,Nope,Thai' >"$build/seed3"
printf 'ab\355\240\200\300\200\364\220\200\200\377' >"$build/seed4"
: >"$build/seed5"
"$build/fuzz_replay" "$build/seed1" "$build/seed2" "$build/seed3" "$build/seed4" "$build/seed5"

step "test_model $root/vectors/models"
"$build/test_model" "$root/vectors/models"

step "test_export $VOCAB (tiktoken and tokenizer.json exports, st_model_write_rules)"
"$build/test_export" "$VOCAB"

step "model-file fuzz harness: the seeds, then ${ST_MODEL_MUTATIONS:-20000} random damages of them"
mkdir -p "$build/model_seeds"
cp "$root"/vectors/models/*.stmodel "$build/model_seeds/"
printf 'supertok-model 1\nname s\ncomment c\nkind rules\nalphabet ube\npattern cl100k\nscript-aware yes\nscripts Han,Thai\nmerges 2 counts\n97 98 5\n512 99 3\nsupermerges 1\n513 513\nspecials 1\n600 \\x20<|a\\nb|>\nend\n' >"$build/model_seeds/super"
printf 'supertok-model 1\nname r\nkind ranks\nalphabet bytes\npattern o200k\nscript-aware no\ntokens 4\nYQ== 0\nYg== 1\nYWI= 2\nIA== 3\nspecials 1\n4 <|endoftext|>\nend\n' >"$build/model_seeds/ranks"
printf 'supertok-model 1\nname b\nkind rules\nalphabet bytes\npattern gpt2\nscript-aware no\nmerges 1\n97 98\nspecials 0\nend\n' >"$build/model_seeds/rules"
# hostile sizes: 30 rules that each join the last token to itself (a gigabyte if allowed), the
# same as supermerges of a UBE model, and a chain of rules each a symbol longer than the last
{ printf 'supertok-model 1\nname d\nkind rules\nalphabet bytes\npattern gpt2\nscript-aware no\nmerges 30\n97 97\n'
  i=256; while [ $i -lt 285 ]; do printf '%d %d\n' $i $i; i=$((i + 1)); done; printf 'specials 0\nend\n'; } >"$build/model_seeds/doubling"
{ printf 'supertok-model 1\nname d\nkind rules\nalphabet ube\npattern o200k\nscript-aware no\nmerges 1\n97 97\nsupermerges 28\n'
  i=512; while [ $i -lt 540 ]; do printf '%d %d\n' $i $i; i=$((i + 1)); done; printf 'specials 0\nend\n'; } >"$build/model_seeds/doubling_super"
{ printf 'supertok-model 1\nname c\nkind rules\nalphabet bytes\npattern gpt2\nscript-aware no\nmerges 400\n97 98\n'
  i=256; while [ $i -lt 655 ]; do printf '%d 99\n' $i; i=$((i + 1)); done; printf 'specials 0\nend\n'; } >"$build/model_seeds/chain"
"$build/fuzz_model_replay" --mutate "${ST_MODEL_MUTATIONS:-20000}" 1 "$build"/model_seeds/*

step "test_tokenizer_json (hand-written tokenizer.json files: ids against tokenizers', each refusal's field and offset)"
"$build/test_tokenizer_json"

step "tokenizer.json fuzz harness: vectors/tokenizer_json's models, hostile compact images, their images, then ${ST_TJSON_MUTATIONS:-20000} random damages"
"$build/fuzz_tokenizer_json_replay" --mutate "${ST_TJSON_MUTATIONS:-20000}" 1 "$root"/vectors/tokenizer_json/*.json

step "test_train $root (counters; the trainer against a naive reference on ${ST_TRAIN_SEEDS:-300} random corpora; vectors/train)"
"$build/test_train" "$root"

step "counter/trainer fuzz harness: ${ST_TRAIN_MUTATIONS:-1000} random inputs"
"$build/fuzz_train_replay" --random "${ST_TRAIN_MUTATIONS:-1000}" 1

step "UBE stream harness: ${ST_UBE_STREAM_INPUTS:-100000} random states (damaged or not) and symbols"
"$build/fuzz_ube_stream_random" "${ST_UBE_STREAM_INPUTS:-100000}" 1

step "NFC harness: ${ST_NFC_INPUTS:-20000} random texts"
"$build/fuzz_nfc_random" "${ST_NFC_INPUTS:-20000}" 1

step "test_encode $VOCAB"
"$build/test_encode" "$VOCAB"

step "test_vectors $root/vectors"
"$build/test_vectors" "$root"
step "test_decoder $VOCAB $root/vectors/models"
"$build/test_decoder" "$VOCAB" "$root/vectors/models"

step "test_encode $VOCAB, with the backtracking encoder on every piece of every script"
# (pipeline.c sends only CJK pieces there; this checks the method itself everywhere)
sobjs=""
for f in $SRCS; do
    o="$build/bt_$(objname "$f").o"
    $CC -std=c11 $SAN $INC -DST_BACKTRACK_EVERY_PIECE -DST_TEST_COUNTERS -c "$f" -o "$o"
    sobjs="$sobjs $o"
done
$CC -std=c11 $SAN $INC -DST_BACKTRACK_EVERY_PIECE -DST_TEST_COUNTERS "$here/test_encode.c" $sobjs -o "$build/test_encode_bt"
"$build/test_encode_bt" "$VOCAB"

step "test_threads: one encoding shared by 6 threads while its backtracking tables get built (and its scratch blocks reused)"
$CC -std=c11 $SAN -pthread $INC "$here/test_threads.c" $objs -o "$build/test_threads"
"$build/test_threads" "$VOCAB"
printf 'int main(void) { return 0; }\n' >"$build/tsan_probe.c"
if $CC -fsanitize=thread "$build/tsan_probe.c" -o "$build/tsan_probe" 2>/dev/null && "$build/tsan_probe"; then
    step "test_threads under ThreadSanitizer"
    $CC -std=c11 -fsanitize=thread -g -O1 -pthread $INC $SRCS "$here/test_threads.c" -o "$build/test_threads_tsan"
    TSAN_OPTIONS=halt_on_error=1 "$build/test_threads_tsan" "$VOCAB"
else
    echo "(ThreadSanitizer not available with $CC: skipped)"
fi

step "encoder fuzz harness, replaying a few inputs (text, damaged image and rank file each)"
mkdir -p "$build/enc_seeds"
printf "Hello world 12345, it's 2024!\r\n  ok <|endoftext|>x<|endofprompt|>" >"$build/enc_seeds/text1"
cp "$build/seed2" "$build/enc_seeds/text2"
cp "$build/seed4" "$build/enc_seeds/text3"
printf '\002\000\000\001\000\377\377\377\377\000\001\002\003' >"$build/enc_seeds/image1"
printf '\033\000\020\000\003abcdefgh' >"$build/enc_seeds/image2"
printf '\002\377YQ== 0\nYg== 1\nYWI= 2\nIA== 3\n\000PHx4fD4= 4\n' >"$build/enc_seeds/ranks1"
printf '\000\003YQ== 0\r\nYg== 1\r\n' >"$build/enc_seeds/ranks2"
: >"$build/enc_seeds/empty"
# rules mode: models whose later rules, as supermerges, join the text's words (run_superwords)
printf '\005\002 \000c\000\000\002\000\002cc cc ccc c cc ccc c cc c c c cccc' >"$build/enc_seeds/super1"
printf '\002\010 \000b\000 \000c\0003\0001\0004\0001\000\001\001\000\001\001\001\001\001\000\001\005\001\005\001\000\001 c c bc bb b b b bccc' >"$build/enc_seeds/super2"
# cuts (check_cuts): lines, scripts and specials; a superword model's text with line breaks; bad bytes
printf 'The cat sat.\nOn the mat\r\nsaid \344\270\255\346\226\207\343\200\202\n the end<|endoftext|> x\n<|endofprompt|>y' >"$build/enc_seeds/cut1"
printf '\005\002 \000c\000\000\002\000\002cc cc\nccc c cc.\nccc c cc\nc c c cccc' >"$build/enc_seeds/cut2"
printf 'ab \377\376 cd\n\303x \344\270 y' >"$build/enc_seeds/cut3"
"$build/fuzz_encode_replay" "$build"/enc_seeds/*

if [ "${ST_FUZZ_SECONDS:-0}" -gt 0 ]; then
    if command -v clang >/dev/null 2>&1 &&
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_pretokenize.c" -o "$build/fuzz_pretokenize" 2>/dev/null; then
        step "libFuzzer for ${ST_FUZZ_SECONDS} s"
        mkdir -p "$build/corpus"
        cp "$build"/seed? "$build/corpus/"
        (cd "$build" && ./fuzz_pretokenize -max_total_time="$ST_FUZZ_SECONDS" -max_len=4096 corpus)
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_encode.c" -o "$build/fuzz_encode"
        for mode in text image ranks; do
            step "libFuzzer, encoder harness mode $mode, for ${ST_FUZZ_SECONDS} s"
            mkdir -p "$build/enc_corpus_$mode"
            cp "$build"/enc_seeds/* "$build/enc_corpus_$mode/"
            (cd "$build" && ST_FUZZ_MODE=$mode ./fuzz_encode -max_total_time="$ST_FUZZ_SECONDS" -max_len=4096 \
                "enc_corpus_$mode")
        done
        step "libFuzzer, model-file harness, for ${ST_FUZZ_SECONDS} s"
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_model.c" -o "$build/fuzz_model"
        mkdir -p "$build/model_corpus"
        cp "$build"/model_seeds/* "$build/model_corpus/"
        (cd "$build" && ./fuzz_model -max_total_time="$ST_FUZZ_SECONDS" -max_len=8192 -dict="$here/fuzz_model.dict" \
            model_corpus)
        step "libFuzzer, tokenizer.json harness, for ${ST_FUZZ_SECONDS} s"
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_tokenizer_json.c" -o "$build/fuzz_tokenizer_json"
        mkdir -p "$build/tjson_corpus"
        cp "$root"/vectors/tokenizer_json/*.json "$build/tjson_corpus/"
        (cd "$build" && ./fuzz_tokenizer_json -max_total_time="$ST_FUZZ_SECONDS" -max_len=65536 tjson_corpus)
        step "libFuzzer, UBE stream harness, for ${ST_FUZZ_SECONDS} s"
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_ube_stream.c" -o "$build/fuzz_ube_stream"
        mkdir -p "$build/ube_stream_corpus"
        (cd "$build" && ./fuzz_ube_stream -max_total_time="$ST_FUZZ_SECONDS" -max_len=512 ube_stream_corpus)
        step "libFuzzer, NFC harness, for ${ST_FUZZ_SECONDS} s"
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_nfc.c" -o "$build/fuzz_nfc"
        mkdir -p "$build/nfc_corpus"
        (cd "$build" && ./fuzz_nfc -max_total_time="$ST_FUZZ_SECONDS" -max_len=1024 nfc_corpus)
        step "libFuzzer, counter/trainer harness, for ${ST_FUZZ_SECONDS} s"
        clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $INC \
            $SRCS "$here/fuzz_train.c" -o "$build/fuzz_train"
        mkdir -p "$build/train_corpus"
        cp "$build"/seed? "$build/train_corpus/"
        (cd "$build" && ./fuzz_train -max_total_time="$ST_FUZZ_SECONDS" -max_len=4096 train_corpus)
    else
        step "libFuzzer: clang with -fsanitize=fuzzer not available, skipped"
    fi
fi

step "all C tests passed"
