// libFuzzer harness for the pre-tokenizers and the UTF-8 validator.
//
// Build (from the repository root; Debian: apt-get install clang libclang-rt-14-dev):
//
//   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//         -Icore_c/include core_c/src/*/*.c core_c/tests/fuzz_pretokenize.c -o fuzz_pretokenize
//
// Run (corpus directory optional; -max_total_time in seconds):
//
//   mkdir -p /tmp/fuzz_corpus
//   ./fuzz_pretokenize -max_total_time=180 -max_len=4096 /tmp/fuzz_corpus
//
// A crash, sanitizer report or broken invariant aborts and leaves crash-<sha1> with the input;
// replay it with ./fuzz_pretokenize crash-<sha1>. Without libFuzzer the same file builds a
// replay driver: cc -DST_FUZZ_MAIN ... fuzz_pretokenize.c runs each file named on the
// command line through LLVMFuzzerTestOneInput.
//
// Each input runs through every pattern (gpt2, cl100k, o200k) x {plain, script-aware with
// the default scripts, with "", with "Latin,Greek"}, checking the invariants of invariants.h
// (status agrees with st_utf8_validate, pieces cover the text, ends on character
// boundaries, both offset modes and st_pretokenize_count agree, the too-small-buffer
// contract). The input is also tried as a script list for st_pretokenizer_new: the result
// must be ST_OK or ST_ERR_UNKNOWN_SCRIPT with an offset inside the list.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants.h"
#include "supertok.h"
#include "error_contract.h"

#define N_CONFIGS 28

static st_pretokenizer *handles[N_CONFIGS];
static st_check_buf scratch;

static void fail(const char *what, int config, const uint8_t *data, size_t size) {
    fprintf(stderr, "invariant broken (config %d): %s\ninput (%zu bytes):", config, what, size);
    for (size_t i = 0; i < size && i < 256; i++) fprintf(stderr, " %02X", data[i]);
    fprintf(stderr, "\n");
    abort();
}

static void setup(void) {
    static const int pats[7] = {ST_PATTERN_GPT2,   ST_PATTERN_CL100K, ST_PATTERN_O200K,      ST_PATTERN_SUPERBPE,
                                ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2,  ST_PATTERN_DEEPSEEK_V3};
    st_error err;
    for (int k = 0; k < N_CONFIGS; k++) {
        int v = k % 4;
        const char *scripts = v == 2 ? "" : v == 3 ? "Latin,Greek" : NULL;
        if (CHECKED(err, st_pretokenizer_new(pats[k / 4], v ? ST_PRETOK_SCRIPT_AWARE : 0, scripts,
                                             scripts ? strlen(scripts) : 0, NULL, &handles[k], &err)) != ST_OK) {
            fprintf(stderr, "st_pretokenizer_new failed for config %d\n", k);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!handles[0]) setup();
    /* the small-cap probe's cap comes from the input, so it is reproducible */
    uint64_t seed = 0;
    for (size_t i = 0; i < size && i < 8; i++) seed = seed * 131 + data[i];
    seed ^= (uint64_t)size << 32;
    for (int k = 0; k < N_CONFIGS; k++) {
        const char *why = st_check_text(handles[k], data, size, &scratch, seed + (uint64_t)k);
        if (why) fail(why, k, data, size);
    }
    /* the input as a script list */
    if (size <= 512) {
        st_pretokenizer *pt = NULL;
        st_error err;
        st_status st = CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, (const char *)data,
                                                        size, NULL, &pt, &err));
        if (st == ST_OK) {
            if (!pt) fail("st_pretokenizer_new: ST_OK without a handle", -1, data, size);
            size_t n = 0;
            if (CHECKED(err, st_pretokenize_count(pt, "abc \xE4\xB8\x80\xE4\xB8\x81", 10, &n, &err)) != ST_OK || n == 0)
                fail("a handle from a fuzzed script list does not work", -1, data, size);
            st_pretokenizer_free(pt);
        } else if (st != ST_ERR_UNKNOWN_SCRIPT || pt != NULL || err.unit != ST_UNIT_BYTE || err.offset >= size) {
            fail("st_pretokenizer_new on a fuzzed script list: bad status, handle or offset", -1, data, size);
        }
        /* st_script_from_name on the whole input: -1 or a valid id */
        int id = st_script_from_name((const char *)data, size);
        if (id < -1 || id >= st_script_count()) fail("st_script_from_name out of range", -1, data, size);
    }
    return 0;
}

#ifdef ST_FUZZ_MAIN
int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (!f) {
            perror(argv[a]);
            return 1;
        }
        uint8_t *d = NULL;
        size_t n = 0, cap = 0;
        for (;;) {
            if (n == cap) {
                cap = cap ? cap * 2 : 4096;
                uint8_t *q = (uint8_t *)realloc(d, cap);
                if (!q) return 2;
                d = q;
            }
            size_t got = fread(d + n, 1, cap - n, f);
            if (!got) break;
            n += got;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(d, n);
        free(d);
        printf("%s: ok (%zu bytes)\n", argv[a], n);
    }
    return 0;
}
#endif
