// libFuzzer harness for the model-file parser, writer and the encodings built from models
// (docs/formats/model-format.md).
//
// Build (from the repository root; Debian: apt-get install clang libclang-rt-14-dev):
//
//   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//         -Icore_c/include core_c/src/*/*.c core_c/tests/fuzz_model.c -o fuzz_model
//   mkdir -p /tmp/fuzz_model && cp vectors/models/*.stmodel /tmp/fuzz_model/
//   ./fuzz_model -max_total_time=180 -max_len=8192 -dict=core_c/tests/fuzz_model.dict /tmp/fuzz_model
//
// Each input is a model file (in a buffer of exactly its length, so ASan sees any read past it):
//  - st_model_parse gives ST_OK, or ST_ERR_MALFORMED_MODEL with err.line >= 1, err.offset
//    inside the file and a NUL-terminated, non-empty message (ST_ERR_OUT_OF_MEMORY only when
//    an allocation failed: byte 0 of the input, when the input does not start with 's', picks
//    an allocation to fail and the rest is the file);
//  - a parsed model writes canonically: parse(write(m)) == m and write(parse(write(m))) ==
//    write(m); the size query and a buffer one byte short report the full size;
//  - st_encoding_from_model gives ST_OK (then a fixed text encodes and decodes back) or an
//    error naming a line; nothing leaks;
//  - the most memory held at once (parse, encoding, encode) is at most ALLOC_BASE + ALLOC_PER_BYTE
//    bytes per byte of the file (see ALLOC_BASE): a small file never makes the core allocate
//    gigabytes, on any host (the allocator hook counts every byte the core asks for).
//
// Without libFuzzer the same file builds a replay driver: cc -DST_FUZZ_MAIN ... fuzz_model.c
// runs each file named on the command line; with "--mutate N SEED file..." it also runs N random
// damages (insert, delete, replace, splice between files, counts changed) of the files, seeded:
// a smaller fuzz for machines without libFuzzer.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/formats/model.h"
#include "supertok.h"
#include "fuzz_support.h"

static void fail(const char *what, const uint8_t *data, size_t size) {
    fprintf(stderr, "invariant broken: %s\ninput (%zu bytes):\n", what, size);
    fwrite(data, 1, size < 2048 ? size : 2048, stderr);
    fprintf(stderr, "\n");
    abort();
}

/* Memory stays proportional to the file (docs/formats/model-format.md, Limits): the most the parser
 * and the encoding built from the model hold at once is at most ALLOC_BASE + ALLOC_PER_BYTE per
 * byte of the file. ALLOC_BASE: the limit on a rules model's tokens (whose constant lets a small
 * file spell up to 16 MiB of tokens) plus the fixed tables (a rank vocabulary's 2-byte table,
 * the encoder's scratch); ALLOC_PER_BYTE: the tokens a rule may add (256 bytes for a line of 4
 * bytes or more) with the tables each rule or token needs. A model that allocates gigabytes
 * (30 rules that each join the last token to itself) breaks it by far. */
#define ALLOC_BASE ((size_t)ST_RULES_TOKEN_BYTES_BASE + ((size_t)16 << 20))
#define ALLOC_PER_BYTE 256
static size_t g_max_peak, g_max_peak_size; /* the largest peak seen and its file's size (the report) */


static void check_error(const st_error *err, st_status st, size_t size, int may_oom, const uint8_t *data) {
    if (st == ST_ERR_OUT_OF_MEMORY && may_oom) return;
    if (st != ST_ERR_MALFORMED_MODEL) fail("status is neither OK nor MALFORMED_MODEL", data, size);
    if (err->status != (uint32_t)st) fail("err.status differs from the status", data, size);
    if (err->line < 1) fail("error without a line", data, size);
    if (err->unit == ST_UNIT_BYTE && err->offset > size) fail("error offset past the file", data, size);
    if (!memchr(err->message, 0, sizeof err->message) || !err->message[0]) fail("bad message", data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    budget b = {-1, 0, 0, 0, 0};
    int may_oom = 0;
    if (size && data[0] != 's') { /* byte 0: an allocation to fail */
        b.left = data[0] % 16;
        may_oom = 1;
        data++;
        size--;
    }
    st_allocator a = {budget_alloc, budget_free, &b};
    char *file = (char *)malloc(size ? size : 1);
    if (size) memcpy(file, data, size);
    st_error err;
    st_model *m = NULL;
    st_status st = st_model_parse(file, size, &a, &m, &err);
    if (st != ST_OK) {
        check_error(&err, st, size, may_oom, data);
        if (m) fail("a model returned with an error", data, size);
    } else {
        size_t n = 0, n2 = 0;
        if (st_model_write(m, NULL, 0, &n) != (n ? ST_ERR_BUFFER_TOO_SMALL : ST_OK)) fail("size query", data, size);
        char *w = (char *)malloc(n + 1);
        if (n) {
            w[n - 1] = '#';
            if (st_model_write(m, w, n - 1, &n2) != ST_ERR_BUFFER_TOO_SMALL || n2 != n || w[n - 1] != '#')
                fail("a buffer one short", data, size);
        }
        if (st_model_write(m, w, n, &n2) != ST_OK || n2 != n) fail("write", data, size);
        st_model *m2 = NULL;
        if (st_model_parse(w, n, NULL, &m2, &err) != ST_OK) fail("the written model does not parse", data, size);
        if (!st__model_equal(m, m2)) fail("parse(write(m)) != m", data, size);
        size_t n3 = 0;
        st_model_write(m2, NULL, 0, &n3);
        char *w2 = (char *)malloc(n3 + 1);
        st_model_write(m2, w2, n3, &n3);
        if (n3 != n || memcmp(w, w2, n)) fail("the writer is not idempotent", data, size);
        free(w2);
        st_model_free(m2);
        free(w);
        st_encoding *enc = NULL;
        st = st_encoding_from_model(m, &a, &enc, &err);
        if (st == ST_OK) {
            static const char text[] = "Hello world, abcd 中文 😀 <|endoftext|> it's 2024!";
            uint32_t ids[256];
            size_t k = 0, dl = 0;
            uint32_t allowed[1] = {st_encoding_n_special(enc) ? st_encoding_special_id(enc, 0) : 0};
            st_special_policy pol = {allowed, st_encoding_n_special(enc) ? 1 : 0, NULL, 0, 0, NULL, NULL};
            st_status es = st_encode(enc, text, sizeof text - 1, &pol, ST_OFFSETS_BYTES, ids, NULL, 256, &k, NULL);
            if (es == ST_OK) {
                uint8_t out[1024];
                if (st_decode_text(enc, ids, k, 0, out, sizeof out, &dl, NULL) != ST_OK || dl != sizeof text - 1 ||
                    memcmp(out, text, dl))
                    fail("a model's encoding does not round-trip the text", data, size);
            } else if (es != ST_ERR_NOT_ENCODABLE && es != ST_ERR_OUT_OF_MEMORY)
                fail("encode failed", data, size);
            st_encoding_free(enc);
        } else check_error(&err, st, size, may_oom, data);
        st_model_free(m);
    }
    free(file);
    if (b.live != 0) fail("a leak (allocations not freed)", data, size);
    if (b.peak > ALLOC_BASE + (size_t)ALLOC_PER_BYTE * size) fail("memory not proportional to the file", data, size);
    if (b.peak > g_max_peak) {
        g_max_peak = b.peak;
        g_max_peak_size = size;
    }
    return 0;
}

#ifdef ST_FUZZ_MAIN
int main(int argc, char **argv) {
    long mutate = 0;
    int first = 1;
    if (argc > 3 && strcmp(argv[1], "--mutate") == 0) {
        mutate = atol(argv[2]);
        g_rng = (uint64_t)atoll(argv[3]) * 0x9E3779B97F4A7C15ull + 1;
        first = 4;
    }
    int nfiles = argc - first;
    uint8_t **files = (uint8_t **)calloc((size_t)(nfiles ? nfiles : 1), sizeof *files);
    size_t *lens = (size_t *)calloc((size_t)(nfiles ? nfiles : 1), sizeof *lens);
    for (int i = 0; i < nfiles; i++) {
        files[i] = read_all(argv[first + i], &lens[i]);
        if (!files[i]) { perror(argv[first + i]); return 1; }
        LLVMFuzzerTestOneInput(files[i], lens[i]);
    }
    static const char *tokens[] = {"\n", " ", "0", "1", "9", "18446744073709551616", "4294967296", "2097150",
                                   "counts", "specials ", "merges ", "supermerges ", "tokens ", "end\n", "\\x",
                                   "\\", "\xC3", "\xFF", "=", "==", "script-aware yes\nscripts ", "Han,", "none",
                                   "default", "comment x\n", "YQ== ", "\r", "\t", "supertok-model 2\n",
                                   "training algorithm=superbpe mode=paper vocab_size=9 min_frequency=0 supermerges=1 ngram_split=no\n",
                                   " ngram_split=yes c_min=15 max_len=30", "mode=hf"};
    for (long r = 0; r < mutate && nfiles; r++) {
        int f = (int)(rnd() % (uint64_t)nfiles);
        size_t n = lens[f], cap = n + 512;
        uint8_t *t = (uint8_t *)malloc(cap);
        memcpy(t, files[f], n);
        int edits = 1 + (int)(rnd() % 6);
        for (int e = 0; e < edits; e++) {
            size_t at = n ? (size_t)(rnd() % n) : 0;
            switch (rnd() % 5) {
            case 0: if (n) t[at] = (uint8_t)rnd(); break;                       /* replace a byte */
            case 1: if (n) { memmove(t + at, t + at + 1, n - at - 1); n--; } break; /* delete */
            case 2: {                                                            /* insert a token */
                const char *tok = tokens[rnd() % (sizeof tokens / sizeof *tokens)];
                size_t tl = strlen(tok);
                if (n + tl <= cap) { memmove(t + at + tl, t + at, n - at); memcpy(t + at, tok, tl); n += tl; }
                break;
            }
            case 3: { /* delete a run */
                size_t k = (size_t)(rnd() % 64);
                if (at + k > n) k = n - at;
                memmove(t + at, t + at + k, n - at - k);
                n -= k;
                break;
            }
            default: { /* a digit changed (counts and ids) */
                for (size_t i = at; i < n; i++)
                    if (t[i] >= '0' && t[i] <= '9') { t[i] = (uint8_t)('0' + rnd() % 10); break; }
            }
            }
        }
        uint8_t *exact = (uint8_t *)malloc(n ? n : 1);
        memcpy(exact, t, n);
        free(t);
        LLVMFuzzerTestOneInput(exact, n);
        free(exact);
    }
    if (mutate) printf("fuzz_model: %ld mutated inputs, no invariant broken\n", mutate);
    printf("fuzz_model: the most memory held at once: %zu bytes, for a file of %zu bytes (bound: %zu + %d a byte)\n",
           g_max_peak, g_max_peak_size, ALLOC_BASE, ALLOC_PER_BYTE);
    for (int i = 0; i < nfiles; i++) free(files[i]);
    free(files);
    free(lens);
    return 0;
}
#endif
