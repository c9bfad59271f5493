// libFuzzer harness for NFC normalization (st_normalize_nfc).
//
// Build (from the repository root; Debian: apt-get install clang libclang-rt-14-dev):
//
//   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//         -Icore_c/include core_c/src/*/*.c core_c/tests/fuzz_nfc.c -o fuzz_nfc
//   ./fuzz_nfc -max_total_time=60
//
// Each input is text (any bytes). Checked, under ASan and UBSan:
//  - invalid UTF-8 is ST_ERR_INVALID_UTF8 at the offset st_utf8_validate names;
//  - the size query (cap 0) gives the length the full call writes, at most
//    ST_NFC_MAX_EXPANSION times the input; a short buffer gets nothing past cap (exact-size heap
//    blocks) and the same first bytes;
//  - the output is valid UTF-8, and NFC again leaves it unchanged;
//  - the map: one entry per output byte, never decreasing, each at the start of an input
//    character, the same for every byte of an output character.
//
// Without libFuzzer the same file builds a random driver: cc -DST_FUZZ_MAIN ... fuzz_nfc.c, then
// "fuzz_nfc N SEED" runs N random texts (bases, marks of many classes, Hangul jamo, characters
// with decompositions, random scalars, now and then a broken byte), and names the failing input.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "fuzz_support.h"

static void fail(const char *what, const uint8_t *data, size_t size) {
    fprintf(stderr, "invariant broken: %s\ninput (%zu bytes):", what, size);
    for (size_t i = 0; i < size && i < 256; i++) fprintf(stderr, " %02x", data[i]);
    fprintf(stderr, "\n");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    st_error e, ev;
    size_t n = 0;
    st_status sv = st_utf8_validate(size ? text : NULL, size, &ev);
    st_status st = st_normalize_nfc(size ? text : NULL, size, NULL, NULL, 0, &n, &e);
    if (sv != ST_OK) {
        if (st != ST_ERR_INVALID_UTF8 || e.offset != ev.offset) fail("invalid UTF-8 not reported", data, size);
        return 0;
    }
    if (st != (n ? ST_ERR_BUFFER_TOO_SMALL : ST_OK)) fail("the size query's status", data, size);
    if (n > ST_NFC_MAX_EXPANSION * size) fail("longer than ST_NFC_MAX_EXPANSION times the input", data, size);
    char *out = (char *)malloc(n ? n : 1);
    size_t *map = (size_t *)malloc((n ? n : 1) * sizeof *map);
    size_t n2 = 0;
    if (st_normalize_nfc(size ? text : NULL, size, n ? out : NULL, n ? map : NULL, n, &n2, &e) != ST_OK || n2 != n)
        fail("the full call differs from the size query", data, size);
    if (st_utf8_validate(n ? out : NULL, n, NULL) != ST_OK) fail("output is not valid UTF-8", data, size);
    for (size_t k = 0; k < n; k++) {
        if (map[k] >= size || (data[map[k]] & 0xC0) == 0x80) fail("map not at a character start", data, size);
        if (k && map[k] < map[k - 1]) fail("map decreases", data, size);
        if (k && ((uint8_t)out[k] & 0xC0) == 0x80 && map[k] != map[k - 1]) fail("map splits a character", data, size);
    }
    /* idempotent */
    size_t n3 = 0;
    char *again = (char *)malloc(n ? n : 1);
    if (st_normalize_nfc(n ? out : NULL, n, n ? again : NULL, NULL, n, &n3, &e) != ST_OK || n3 != n ||
        (n && memcmp(again, out, n) != 0))
        fail("NFC of the output changes it", data, size);
    /* a short buffer: the same first bytes, nothing past cap */
    if (n > 1) {
        size_t cap = n / 2, n4 = 0;
        char *half = (char *)malloc(cap);
        size_t *hmap = (size_t *)malloc(cap * sizeof *hmap);
        if (st_normalize_nfc(text, size, half, hmap, cap, &n4, &e) != ST_ERR_BUFFER_TOO_SMALL || n4 != n ||
            memcmp(half, out, cap) != 0 || memcmp(hmap, map, cap * sizeof *map) != 0)
            fail("a short buffer", data, size);
        free(half);
        free(hmap);
    }
    free(again);
    free(out);
    free(map);
    return 0;
}

#ifdef ST_FUZZ_MAIN
static const uint32_t interesting[] = {
    'a', 'e', 'o', 'A', ' ', 0xC0, 0xE9, 0x300, 0x301, 0x308, 0x316, 0x327, 0x334, 0x344, 0x345, 0x5B0, 0x5BC,
    0x5C1, 0x653, 0x93C, 0x915, 0x958, 0xB3E, 0xB47, 0xB57, 0xCC2, 0xCC6, 0xCCA, 0xCCB, 0xCD5, 0xF71, 0xF72,
    0xF73, 0xF80, 0x1100, 0x1112, 0x1161, 0x1175, 0x11A7, 0x11A8, 0x11C2, 0xAC00, 0xAC01, 0xD7A3, 0x1E00,
    0x1F00, 0x1F82, 0x2126, 0x212B, 0x3099, 0x309A, 0x304B, 0xFB2C, 0x11099, 0x110BA, 0x11930, 0x11935,
    0x1D158, 0x1D160, 0x1D165, 0x1D16E, 0x2F800, 0x1E944};

static size_t put(uint8_t *b, uint32_t cp) {
    if (cp < 0x80) { b[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { b[0] = (uint8_t)(0xC0 | (cp >> 6)); b[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12)); b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F)); return 3;
    }
    b[0] = (uint8_t)(0xF0 | (cp >> 18)); b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (uint8_t)(0x80 | (cp & 0x3F)); return 4;
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    g_rng = (uint64_t)(argc > 2 ? atoll(argv[2]) : 1) * 0x9E3779B97F4A7C15ull + 1;
    uint8_t buf[4 * 64 + 1];
    for (long it = 0; it < iters; it++) {
        size_t len = 0, chars = (size_t)(rnd() % 64);
        for (size_t k = 0; k < chars; k++) {
            uint32_t cp;
            switch (rnd() % 4) {
            case 0: cp = (uint32_t)(0x300 + rnd() % 0x70); break; /* combining diacritics */
            case 1: cp = (uint32_t)(rnd() % 0x110000); if (cp >= 0xD800 && cp < 0xE000) cp = 'x'; break;
            default: cp = interesting[rnd() % (sizeof interesting / sizeof interesting[0])]; break;
            }
            len += put(buf + len, cp);
        }
        if (len && rnd() % 50 == 0) buf[rnd() % len] = (uint8_t)rnd(); /* now and then broken */
        uint8_t *copy = (uint8_t *)malloc(len ? len : 1); /* exact size, for ASan */
        memcpy(copy, buf, len);
        LLVMFuzzerTestOneInput(copy, len);
        free(copy);
    }
    printf("fuzz_nfc: %ld random texts\n", iters);
    return 0;
}
#endif
