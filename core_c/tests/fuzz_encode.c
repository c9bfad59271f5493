// libFuzzer harness for the encoder, the decoder, the vocabulary image loader and the rank-file
// parser.
//
// Build (from the repository root; Debian: apt-get install clang libclang-rt-14-dev):
//
//   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//         -Icore_c/include core_c/src/*/*.c core_c/tests/fuzz_encode.c -o fuzz_encode
//
// Run from the repository root (or set ST_VOCAB_DIR to the directory of o200k_base.tiktoken;
// the compiled-in default is py/supertok/vocab, change it with -DST_FUZZ_VOCAB_DIR='"..."'):
//
//   mkdir -p /tmp/fuzz_encode_text /tmp/fuzz_encode_image /tmp/fuzz_encode_ranks
//   ST_FUZZ_MODE=text  ./fuzz_encode -max_total_time=180 -max_len=4096 /tmp/fuzz_encode_text
//   ST_FUZZ_MODE=image ./fuzz_encode -max_total_time=180 -max_len=4096 /tmp/fuzz_encode_image
//   ST_FUZZ_MODE=ranks ./fuzz_encode -max_total_time=180 -max_len=4096 /tmp/fuzz_encode_ranks
//   ST_FUZZ_MODE=rules ./fuzz_encode -max_total_time=180 -max_len=4096 /tmp/fuzz_encode_rules
//
// ST_FUZZ_MODE picks what an input is (unset or "all": every input is tried all four ways):
//
//  text   The input is text for o200k_base with its two specials allowed. Valid UTF-8:
//         decode(encode(x)) == x, st_encode_count agrees, char_starts non-decreasing and inside
//         the text's code points, no special id without specials allowed, and the
//         too-small-buffer contract (nothing written past cap, the full count reported); short
//         inputs are also repeated past 8192 bytes (the per-call piece cache) and round-tripped.
//         Invalid UTF-8: ST_ERR_INVALID_UTF8 at st_utf8_validate's offset.
//  image  The input damages a valid image of a small vocabulary (256 bytes, some merges, two
//         specials; built once): bytes 0..3 pick a section of the image and an offset in it,
//         byte 4 may cut the image short, the rest overwrites the image there. The damaged image
//         (in a buffer of exactly its length, so ASan sees any read past it) is loaded; if it
//         loads, fixed texts are encoded (short, medium and long pieces, specials, and, when
//         bits 3 and 4 of byte 0 are set, a text past 8192 bytes), decoded and counted, every
//         token's bytes are read, ids from the input decoded and the image saved again.
//         Wrong ids are fine; crashes and out-of-bounds reads are not.
//  ranks  The input is a rank file: byte 0 picks the pattern, byte 1 an allocation to fail
//         (or none), the rest up to the first NUL is the ranks text and what follows it the
//         specials text (bit 6 of byte 0: the 256 single bytes are put before the ranks text;
//         bit 7: the specials are raw token bytes separated by NULs, written as lines for
//         ids 60000, 60001, ... by the harness). The result must be ST_OK,
//         ST_ERR_MALFORMED_MODEL with an offset inside the text it names, or
//         ST_ERR_OUT_OF_MEMORY when an allocation failed; nothing may leak. A loaded encoding round-trips a fixed text and the input (when it is valid
//         UTF-8 and every byte has a token), and its image gives the same ids.
//  rules  A merge-rules model (st_encoding_new_merges) and a text; see run_rules. The same
//         rules are also loaded as a superword model, the later half as supermerges; see
//         run_superwords.
//
// Specials that are not valid UTF-8 (raw specials of bit 7, or a damaged image's) are allowed:
// this harness found that such a special matched inside a character (input C2 FF 00 00 80 00 00
// 00 00 78 7C 3E); the core now rejects them at load and matches image specials on character
// boundaries only.
//
// A crash, sanitizer report or broken invariant aborts and leaves crash-<sha1> with the input;
// replay it with ./fuzz_encode crash-<sha1>. Without libFuzzer the same file builds a replay
// driver: cc -DST_FUZZ_MAIN ... fuzz_encode.c runs each file named on the command line through
// LLVMFuzzerTestOneInput.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "error_contract.h"

#ifndef ST_FUZZ_VOCAB_DIR
#define ST_FUZZ_VOCAB_DIR "py/supertok/vocab"
#endif

enum { MODE_TEXT = 1, MODE_IMAGE = 2, MODE_RANKS = 4, MODE_RULES = 8 };

static int g_modes;
static st_encoding *g_o200k;
static const uint32_t O200K_SPECIALS[2] = {199999, 200018};

static uint8_t *g_image; /* the valid small image (8-byte aligned: from malloc) */
static size_t g_image_len, g_sections[7];
static char *g_long_text;
static size_t g_long_len;

static const char *g_mode_name = "?";

static void fail(const char *what, const uint8_t *data, size_t size) {
    fprintf(stderr, "fuzz_encode (%s): %s\ninput (%zu bytes):", g_mode_name, what, size);
    for (size_t i = 0; i < size && i < 256; i++) fprintf(stderr, " %02X", data[i]);
    fprintf(stderr, "\n");
    abort();
}

/* ---- setup -------------------------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 22, n = 0;
    char *d = (char *)malloc(cap);
    for (;;) {
        if (!d) break;
        if (n == cap) {
            cap *= 2;
            char *q = (char *)realloc(d, cap);
            if (!q) {
                free(d);
                d = NULL;
                break;
            }
            d = q;
        }
        size_t got = fread(d + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return d;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_line(const uint8_t *s, size_t n, uint32_t id, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)s[i] << 16;
        if (i + 1 < n) w |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) w |= s[i + 2];
        out[o++] = B64[(w >> 18) & 63];
        out[o++] = B64[(w >> 12) & 63];
        out[o++] = i + 1 < n ? B64[(w >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? B64[w & 63] : '=';
    }
    o += (size_t)sprintf(out + o, " %u\n", id);
    return o;
}

static void setup_o200k(void) {
    const char *dir = getenv("ST_VOCAB_DIR");
    if (!dir || !*dir) dir = ST_FUZZ_VOCAB_DIR;
    char path[4096];
    snprintf(path, sizeof path, "%s/o200k_base.tiktoken", dir);
    size_t len = 0;
    char *ranks = read_file(path, &len);
    if (!ranks) {
        fprintf(stderr, "fuzz_encode: cannot read %s (set ST_VOCAB_DIR)\n", path);
        abort();
    }
    char spec[128];
    size_t sl = b64_line((const uint8_t *)"<|endoftext|>", 13, 199999, spec);
    sl += b64_line((const uint8_t *)"<|endofprompt|>", 15, 200018, spec + sl);
    st_error err;
    if (CHECKED(err, st_encoding_new_tiktoken(ranks, len, spec, sl, plain_pretokenizer(ST_PATTERN_O200K), NULL,
                                              &g_o200k, &err)) != ST_OK) {
        fprintf(stderr, "fuzz_encode: loading %s failed at %zu\n", path, (size_t)err.offset);
        abort();
    }
    free(ranks);
}

static const char *SMALL_MERGES[] = {"th", "he", "in", "er", "an", " t", " a", "the", " the", "ing", "on", "at",
                                     "en", "es", "ed", "or", " w", "wo", "rl", "ld", "orld", "world", " world",
                                     "ll", "llo", "hello", "aa", "aaaa", "  ", "    ", "\n\n", "12", "123",
                                     "\xC3\xA9", "\xE4\xBD", "\xE4\xBD\xA0", "ab", "xx", "xxxx", "yy", "yyyy"};

static void setup_image(void) {
    size_t nm = sizeof SMALL_MERGES / sizeof SMALL_MERGES[0];
    char *ranks = (char *)malloc((256 + nm) * 48);
    char spec[128];
    size_t n = 0;
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        n += b64_line(&c, 1, (uint32_t)b, ranks + n);
    }
    for (size_t k = 0; k < nm; k++)
        n += b64_line((const uint8_t *)SMALL_MERGES[k], strlen(SMALL_MERGES[k]), (uint32_t)(256 + k), ranks + n);
    size_t sl = b64_line((const uint8_t *)"<|endoftext|>", 13, 300, spec);
    sl += b64_line((const uint8_t *)"<|x|>", 5, 302, spec + sl);
    st_encoding *enc = NULL;
    st_error err;
    if (CHECKED(err, st_encoding_new_tiktoken(ranks, n, spec, sl, plain_pretokenizer(ST_PATTERN_CL100K), NULL, &enc,
                                              &err)) != ST_OK)
        abort();
    free(ranks);
    CHECKED(err, st_encoding_save_image(enc, NULL, 0, &g_image_len, &err));
    g_image = (uint8_t *)malloc(g_image_len);
    if (!g_image || CHECKED(err, st_encoding_save_image(enc, g_image, g_image_len, &g_image_len, &err)) != ST_OK)
        abort();
    st_encoding_free(enc);
    /* the section starts, from the header (u32 at 40..63), then the end */
    g_sections[0] = 0;
    for (int k = 0; k < 6; k++) {
        const uint8_t *p = g_image + 40 + 4 * k;
        g_sections[k + 1] = (size_t)p[0] | ((size_t)p[1] << 8) | ((size_t)p[2] << 16) | ((size_t)p[3] << 24);
    }
    /* a text past the cache threshold: repeated words, then a piece of 500+ bytes */
    g_long_len = 9000;
    g_long_text = (char *)malloc(g_long_len);
    static const char *words[] = {" hello", " world", " the", " thing", "\n\n", " 12345", " \xC3\xA9t\xC3\xA9",
                                  " <|endoftext|>", " xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", " <|x|>", "  "};
    size_t o = 0;
    for (unsigned k = 0; o < 8400; k = (k * 7 + 3) % 11) {
        size_t wl = strlen(words[k]);
        memcpy(g_long_text + o, words[k], wl);
        o += wl;
    }
    memset(g_long_text + o, 'y', g_long_len - o);
}

static void setup(void) {
    const char *m = getenv("ST_FUZZ_MODE");
    if (!m || !*m || strcmp(m, "all") == 0) g_modes = MODE_TEXT | MODE_IMAGE | MODE_RANKS | MODE_RULES;
    else if (strcmp(m, "text") == 0) g_modes = MODE_TEXT;
    else if (strcmp(m, "image") == 0) g_modes = MODE_IMAGE;
    else if (strcmp(m, "ranks") == 0) g_modes = MODE_RANKS;
    else if (strcmp(m, "rules") == 0) g_modes = MODE_RULES;
    else {
        fprintf(stderr, "fuzz_encode: ST_FUZZ_MODE must be text, image, ranks, rules or all\n");
        abort();
    }
    if (g_modes & MODE_TEXT) setup_o200k();
    if (g_modes & MODE_IMAGE) setup_image();
}

/* ---- shared checks -------------------------------------------------------------------------------- */

static size_t count_codepoints(const uint8_t *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += (s[i] & 0xC0) != 0x80;
    return c;
}

/* The allowed specials of enc: all of them (specials that are not valid UTF-8 included: an image may hold them). */
static size_t usable_specials(const st_encoding *enc, uint32_t *out, size_t cap) {
    st_error err;
    size_t n = 0;
    uint32_t ns = st_encoding_n_special(enc);
    for (uint32_t k = 0; k < ns && n < cap; k++) {
        uint32_t id = st_encoding_special_id(enc, k);
        const uint8_t *p;
        size_t l;
        if (CHECKED(err, st_token_bytes(enc, id, &p, &l, &err)) != ST_OK) continue;
        out[n++] = id;
    }
    return n;
}

/* The special-token policy: with every special not allowed disallowed (tiktoken's default),
 * the call fails with ST_ERR_DISALLOWED_SPECIAL exactly when the text holds one, at the first
 * (earliest, then longest), and otherwise gives the ids of the allowed-only call; starts in
 * bytes and UTF-16 units agree with the code point starts. */
static void check_policy(const st_encoding *enc, const uint8_t *s, size_t len, const uint32_t *allowed,
                         size_t n_allowed, const uint32_t *want, size_t n_want, const size_t *cs, const uint8_t *data,
                         size_t size) {
    size_t first = (size_t)-1, first_len = 0;
    uint32_t first_id = 0xFFFFFFFFu;
    for (uint32_t k = 0; k < st_encoding_n_special(enc); k++) {
        uint32_t id = st_encoding_special_id(enc, k);
        int ok = 0;
        for (size_t j = 0; j < n_allowed; j++) ok |= allowed[j] == id;
        const uint8_t *p;
        size_t l;
        if (ok || st_token_bytes(enc, id, &p, &l, NULL) != ST_OK || l > len) continue;
        for (size_t i = 0; i + l <= len && i <= first; i++)
            if (memcmp(s + i, p, l) == 0) {
                if (i < first || l > first_len) { first = i; first_len = l; first_id = id; }
                break;
            }
    }
    size_t cap = len + 1, n = 0;
    uint32_t *ids = (uint32_t *)malloc(cap * 4);
    size_t *sb = (size_t *)malloc(cap * sizeof(size_t)), *su = (size_t *)malloc(cap * sizeof(size_t));
    if (!ids || !sb || !su) abort();
    st_special_policy p = {allowed, n_allowed, NULL, 0, ST_SPECIAL_DISALLOW_REST, NULL, NULL};
    st_error e;
    st_status st = st_encode(enc, (const char *)s, len, &p, ST_OFFSETS_BYTES, ids, sb, cap, &n, &e);
    if (first != (size_t)-1) {
        if (st != ST_ERR_DISALLOWED_SPECIAL || e.offset != first || e.token != first_id || e.unit != ST_UNIT_BYTE)
            fail("policy: the first disallowed special not reported", data, size);
    } else {
        if (st != ST_OK || n != n_want || memcmp(ids, want, n * 4) != 0) fail("policy: ids differ", data, size);
        st = st_encode(enc, (const char *)s, len, &p, ST_OFFSETS_UTF16, ids, su, cap, &n, &e);
        for (size_t k = 0; st == ST_OK && k < n; k++) {
            size_t cps = 0, u16 = 0;
            for (size_t j = 0; j < sb[k]; j++)
                if ((s[j] & 0xC0) != 0x80) { cps++; u16 += s[j] >= 0xF0 ? 2 : 1; }
            if ((sb[k] < len && (s[sb[k]] & 0xC0) == 0x80) || cps != cs[k] || u16 != su[k])
                fail("policy: starts in bytes, code points and UTF-16 disagree", data, size);
        }
    }
    free(ids);
    free(sb);
    free(su);
}

/* Encode valid UTF-8 text (in a buffer of exactly len bytes) with enc and check the round trip
 * and the contracts. strict: the encoding is trusted (a shipped or freshly parsed vocabulary),
 * so the encode must succeed (or be ST_ERR_NOT_ENCODABLE when allow_not_encodable) and decode
 * back; otherwise (a damaged image) only memory safety is checked. */
static void check_encode(const st_encoding *enc, const uint8_t *s, size_t len, const uint32_t *allowed,
                         size_t n_allowed, int strict, int allow_not_encodable, uint64_t seed, const uint8_t *data,
                         size_t size) {
    size_t cap = len + 1;
    uint32_t *ids = (uint32_t *)malloc(cap * 4);
    size_t *cs = (size_t *)malloc(cap * sizeof(size_t));
    uint8_t *dec = (uint8_t *)malloc(len + 1);
    if (!ids || !cs || !dec) abort();
    size_t n = 0;
    st_error err;
    st_special_policy policy = {allowed, n_allowed, NULL, 0, 0, NULL, NULL};
    st_status st =
        CHECKED(err, st_encode(enc, (const char *)s, len, &policy, ST_OFFSETS_CODEPOINTS, ids, cs, cap, &n, &err));
    if (strict) {
        if (st == ST_ERR_NOT_ENCODABLE && allow_not_encodable) {
            if (err.unit != ST_UNIT_BYTE || err.offset >= len)
                fail("ST_ERR_NOT_ENCODABLE with an offset outside the text", data, size);
            goto done;
        }
        if (st != ST_OK) fail("st_encode failed on valid UTF-8", data, size);
    }
    if (st != ST_OK) {
        size_t c2 = 0;
        CHECKED(err, st_encode_count(enc, (const char *)s, len, &policy, &c2, &err));
        goto done;
    }
    if (n > len) fail("more ids than bytes", data, size);
    /* decode: the text back (damaged images: any status, nothing past cap) */
    size_t dl = 0;
    st_status sd = CHECKED(err, st_decode(enc, ids, n, dec, len, &dl, &err));
    if (strict && (sd != ST_OK || dl != len || memcmp(dec, s, len) != 0)) fail("decode(encode(x)) != x", data, size);
    if (sd == ST_ERR_INVALID_TOKEN && (err.unit != ST_UNIT_INDEX || err.offset >= n))
        fail("st_decode: bad id offset outside the ids", data, size);
    /* char_starts */
    size_t ncp = count_codepoints(s, len);
    for (size_t k = 0; k < n; k++)
        if ((k && cs[k] < cs[k - 1]) || cs[k] >= ncp) fail("char_starts decreasing or outside the text", data, size);
    /* the count alone */
    size_t cnt = 0;
    st_status sc = CHECKED(err, st_encode_count(enc, (const char *)s, len, &policy, &cnt, &err));
    if (sc != ST_OK || cnt != n) fail("st_encode_count disagrees with st_encode", data, size);
    if (strict) check_policy(enc, s, len, allowed, n_allowed, ids, n, cs, data, size);
    /* a small cap: nothing past it, the full count */
    if (n > 1) {
        size_t small = (size_t)(seed % n);
        uint32_t *si = (uint32_t *)malloc((n + 4) * 4);
        size_t *ss = (size_t *)malloc((n + 4) * sizeof(size_t));
        if (!si || !ss) abort();
        for (size_t k = 0; k < n + 4; k++) {
            si[k] = 0xDEADBEEFu;
            ss[k] = 0xA5A5A5A5u;
        }
        size_t got = 0;
        st_status s2 = CHECKED(
            err, st_encode(enc, (const char *)s, len, &policy, ST_OFFSETS_CODEPOINTS, si, ss, small, &got, &err));
        if (s2 != ST_ERR_BUFFER_TOO_SMALL || got != n) fail("small cap: status or count", data, size);
        for (size_t k = small; k < n + 4; k++)
            if (si[k] != 0xDEADBEEFu || ss[k] != 0xA5A5A5A5u) fail("small cap: written past cap", data, size);
        for (size_t k = 0; k < small; k++)
            if (si[k] != ids[k] || ss[k] != cs[k]) fail("small cap: the ids before cap differ", data, size);
        free(si);
        free(ss);
    }
done:
    free(ids);
    free(cs);
    free(dec);
}

/* st_encoding_cut (cut.c) at every offset: inside the text, on a character boundary, never before
 * the offset asked for; and, for valid UTF-8, the ids of the parts between all the cuts, joined,
 * are the whole text's (with the specials in allowed[0..n_allowed) allowed). Text that is no
 * valid UTF-8 must only not crash it or make it read out of bounds. */
static void check_cuts(const st_encoding *enc, const uint8_t *s, size_t len, const uint32_t *allowed,
                       size_t n_allowed, int valid, const uint8_t *data, size_t size) {
    st_error err;
    st_special_policy policy = {allowed, n_allowed, NULL, 0, 0, NULL, NULL};
    size_t at = 0, *cuts = (size_t *)malloc((len + 1) * sizeof(size_t)), nc = 0;
    if (!cuts) abort();
    for (size_t from = 0; from <= len + 1; from = at + 1) {
        if (st_encoding_cut(enc, (const char *)s, len, from, &at, NULL) != ST_OK) fail("st_encoding_cut failed", data, size);
        if (at > len || (at < len && (at < from || at == 0 || (s[at] & 0xC0) == 0x80)))
            fail("st_encoding_cut: a cut outside the text, before from, or inside a character", data, size);
        if (at >= len) break;
        cuts[nc++] = at;
    }
    if (valid) {
        size_t cap = len + 1, n = 0, total = 0;
        uint32_t *whole = (uint32_t *)malloc(cap * 4), *parts = (uint32_t *)malloc(cap * 4);
        if (!whole || !parts) abort();
        if (CHECKED(err, st_encode(enc, (const char *)s, len, &policy, 0, whole, NULL, cap, &n, &err)) != ST_OK)
            goto out;
        for (size_t k = 0; k <= nc; k++) {
            size_t a = k ? cuts[k - 1] : 0, b = k < nc ? cuts[k] : len, got = 0;
            if (CHECKED(err, st_encode(enc, (const char *)s + a, b - a, &policy, 0, parts + total, NULL, cap - total,
                                       &got, &err)) != ST_OK)
                fail("a part between cuts does not encode", data, size);
            total += got;
        }
        if (total != n || memcmp(parts, whole, n * 4) != 0) fail("the parts' ids joined differ from the whole's", data, size);
    out:
        free(whole);
        free(parts);
    }
    free(cuts);
}

/* ---- mode text ------------------------------------------------------------------------------------ */

static void run_text(const uint8_t *data, size_t size, uint64_t seed) {
    g_mode_name = "text";
    /* an exactly sized copy: libFuzzer's buffer is, but the replay driver's is not */
    uint8_t *s = (uint8_t *)malloc(size ? size : 1);
    if (!s) abort();
    memcpy(s, data, size);
    st_error err;
    st_status v = CHECKED(err, st_utf8_validate((const char *)s, size, &err));
    if (v != ST_OK) {
        size_t n = 0;
        uint32_t ids[8];
        st_error ee, ec;
        st_special_policy policy = {O200K_SPECIALS, 2, NULL, 0, 0, NULL, NULL};
        st_status st = CHECKED(ee, st_encode(g_o200k, (const char *)s, size, &policy, 0, ids, NULL, 8, &n, &ee));
        st_status sc = CHECKED(ec, st_encode_count(g_o200k, (const char *)s, size, NULL, &n, &ec));
        if (st != ST_ERR_INVALID_UTF8 || !error_at(&ee, ST_UNIT_BYTE, err.offset) || sc != ST_ERR_INVALID_UTF8 ||
            !error_at(&ec, ST_UNIT_BYTE, err.offset))
            fail("invalid UTF-8: status or offset differs from st_utf8_validate", data, size);
        check_cuts(g_o200k, s, size, O200K_SPECIALS, 2, 0, data, size);
        free(s);
        return;
    }
    check_encode(g_o200k, s, size, O200K_SPECIALS, 2, 1, 0, seed, data, size);
    check_cuts(g_o200k, s, size, O200K_SPECIALS, 2, 1, data, size);
    /* without specials: ordinary text only */
    uint32_t *ids = (uint32_t *)malloc((size + 1) * 4);
    size_t n = 0;
    if (!ids) abort();
    if (CHECKED(err, st_encode(g_o200k, (const char *)s, size, NULL, 0, ids, NULL, size + 1, &n, &err)) != ST_OK)
        fail("st_encode without specials failed", data, size);
    for (size_t k = 0; k < n; k++)
        if (ids[k] == 199999 || ids[k] == 200018) fail("a special id with no specials allowed", data, size);
    uint8_t *dec = (uint8_t *)malloc(size + 1);
    size_t dl = 0;
    if (!dec || CHECKED(err, st_decode(g_o200k, ids, n, dec, size, &dl, &err)) != ST_OK || dl != size ||
        memcmp(dec, s, size) != 0)
        fail("decode(encode(x)) != x without specials", data, size);
    free(dec);
    free(ids);
    /* short inputs repeated past 8192 bytes: the per-call piece cache */
    if (size > 0 && size < 2048) {
        size_t reps = 8192 / size + 1, len = reps * size;
        uint8_t *big = (uint8_t *)malloc(len);
        if (!big) abort();
        for (size_t r = 0; r < reps; r++) memcpy(big + r * size, s, size);
        uint32_t *bi = (uint32_t *)malloc(len * 4);
        uint8_t *bd = (uint8_t *)malloc(len);
        size_t bn = 0, bl = 0;
        if (!bi || !bd) abort();
        st_special_policy policy = {O200K_SPECIALS, 2, NULL, 0, 0, NULL, NULL};
        if (CHECKED(err, st_encode(g_o200k, (const char *)big, len, &policy, 0, bi, NULL, len, &bn, &err)) != ST_OK ||
            CHECKED(err, st_decode(g_o200k, bi, bn, bd, len, &bl, &err)) != ST_OK || bl != len ||
            memcmp(bd, big, len) != 0)
            fail("the repeated input does not round-trip", data, size);
        free(big);
        free(bi);
        free(bd);
    }
    free(s);
}

/* ---- mode image -------------------------------------------------------------------------------------- */

static void run_image(const uint8_t *data, size_t size, uint64_t seed) {
    g_mode_name = "image";
    if (size < 5) return;
    /* where: a section (0 header, 1 byte_ids, 2 offsets, 3 table, 4 specials, 5 pairs, 6 bytes),
     * or anywhere (7) */
    int sec = data[0] & 7;
    size_t a = sec == 7 ? 0 : g_sections[sec], b = sec == 7 || sec == 6 ? g_image_len : g_sections[sec + 1];
    size_t span = b > a ? b - a : 1;
    size_t at = a + (((size_t)data[1] << 16 | (size_t)data[2] << 8 | data[3]) % span);
    size_t len = g_image_len;
    if ((data[4] & 3) == 3) len = ((size_t)data[4] << 16 | (size_t)data[1] << 8 | data[2]) % (g_image_len + 1);
    uint8_t *img = (uint8_t *)malloc(len ? len : 1); /* malloc: 16-byte aligned; exactly len bytes */
    if (!img) abort();
    memcpy(img, g_image, len);
    for (size_t k = 5; k < size && at + (k - 5) < len; k++) img[at + (k - 5)] = data[k];
    st_encoding *enc = NULL;
    st_error err;
    st_status st = CHECKED(err, st_encoding_from_image(img, len, NULL, &enc, &err));
    if (st != ST_OK) {
        if (enc) fail("from_image failed but gave a handle", data, size);
        if (st != ST_ERR_MALFORMED_MODEL || err.offset > len) fail("from_image: bad status or offset", data, size);
        free(img);
        return;
    }
    uint32_t nv = st_encoding_n_vocab(enc), ns = st_encoding_n_special(enc);
    if (ns > nv) fail("more specials than ids", data, size);
    uint32_t allowed[8];
    size_t na = usable_specials(enc, allowed, 8);
    static const char *texts[] = {
        "hello world, the <|endoftext|> thing\n\n   aaaaaaaaa 123 \xC3\xA9\xE4\xBD\xA0 <|x|>",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", /* a medium piece */
        "",
    };
    for (int t = 0; t < 4; t++) {
        size_t tl;
        uint8_t *s;
        if (t < 3) {
            tl = strlen(texts[t]);
            s = (uint8_t *)malloc(tl ? tl : 1);
            if (!s) abort();
            memcpy(s, texts[t], tl);
        } else { /* the long text (for a quarter of the inputs: it is slow) */
            if ((data[0] & 0x18) != 0x18) continue;
            tl = g_long_len;
            s = (uint8_t *)malloc(tl);
            if (!s) abort();
            memcpy(s, g_long_text, tl);
        }
        check_encode(enc, s, tl, allowed, na, 0, 0, seed, data, size);
        if (t == 0) check_encode(enc, s, tl, NULL, 0, 0, 0, seed, data, size);
        free(s);
    }
    /* every token's bytes, every special */
    for (uint32_t id = 0; id <= nv && id < 100000; id++) {
        const uint8_t *p = NULL;
        size_t l = 0;
        if (CHECKED(err, st_token_bytes(enc, id, &p, &l, &err)) == ST_OK) {
            volatile uint8_t sink = 0;
            for (size_t k = 0; k < l; k++) sink ^= p[k]; /* ASan checks the span is readable */
            (void)sink;
        }
    }
    for (uint32_t k = 0; k <= ns; k++) (void)st_encoding_special_id(enc, k);
    /* decode of ids from the input */
    uint32_t dids[16];
    size_t nd = (size - 5) / 4 < 16 ? (size - 5) / 4 : 16;
    for (size_t k = 0; k < nd; k++) memcpy(&dids[k], data + 5 + 4 * k, 4);
    uint8_t out[256];
    size_t ol = 0;
    st = CHECKED(err, st_decode(enc, dids, nd, out, sizeof out, &ol, &err));
    if (st == ST_ERR_INVALID_TOKEN && (err.unit != ST_UNIT_INDEX || err.offset >= nd))
        fail("st_decode: offset outside the ids", data, size);
    /* save again */
    size_t sz = 0;
    if (CHECKED(err, st_encoding_save_image(enc, NULL, 0, &sz, &err)) != ST_ERR_BUFFER_TOO_SMALL)
        fail("save_image size query", data, size);
    uint8_t *again = (uint8_t *)malloc(sz);
    if (!again || CHECKED(err, st_encoding_save_image(enc, again, sz, &sz, &err)) != ST_OK)
        fail("save_image", data, size);
    free(again);
    st_encoding_free(enc);
    free(img);
}

/* ---- mode ranks -------------------------------------------------------------------------------------- */

typedef struct counter {
    long calls, fail_at;
    size_t live;
} counter;

static void *c_alloc(void *ctx, size_t size) {
    counter *c = (counter *)ctx;
    if (c->calls++ == c->fail_at) return NULL;
    uint8_t *p = (uint8_t *)malloc(size + 16);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    c->live += size;
    return p + 16;
}

static void c_free(void *ctx, void *ptr, size_t size) {
    counter *c = (counter *)ctx;
    if (!ptr) return;
    uint8_t *p = (uint8_t *)ptr - 16;
    size_t was;
    memcpy(&was, p, sizeof was);
    if (was != size) {
        fprintf(stderr, "fuzz_encode: free with size %zu of a block of %zu\n", size, was);
        abort();
    }
    c->live -= size;
    free(p);
}

static void run_ranks(const uint8_t *data, size_t size, uint64_t seed) {
    g_mode_name = "ranks";
    if (size < 2) return;
    int pattern = 1 + data[0] % 3;
    counter c = {0, data[1] < 16 ? (long)data[1] : -1, 0};
    st_allocator a = {c_alloc, c_free, &c};
    const uint8_t *body = data + 2;
    size_t blen = size - 2, flen = blen;
    const uint8_t *nul = (const uint8_t *)memchr(body, 0, blen);
    if (nul) flen = (size_t)(nul - body);
    const uint8_t *sbody = nul ? nul + 1 : body + blen;
    size_t sblen = nul ? blen - flen - 1 : 0;
    /* the texts, in exactly sized buffers: with bit 6 of byte 0 the 256 single bytes (ids
     * 0..255) come first; with bit 7 the specials part is raw token bytes separated by NULs,
     * written here as lines "base64 id" with ids 60000, 60001, ... (so the fuzzer controls the
     * specials' bytes directly) */
    size_t pre = (data[0] & 0x40) ? 256 * 10 : 0, rlen = 0, slen = 0;
    char *ranks = (char *)malloc(pre + flen + 1), *spec = (char *)malloc(sblen * 2 + 64 * (sblen + 1) + 1);
    if (!ranks || !spec) abort();
    if (pre)
        for (int b = 0; b < 256; b++) {
            uint8_t ch = (uint8_t)b;
            rlen += b64_line(&ch, 1, (uint32_t)b, ranks + rlen);
        }
    memcpy(ranks + rlen, body, flen);
    rlen += flen;
    if (data[0] & 0x80) {
        size_t i = 0;
        uint32_t id = 60000;
        while (i < sblen) {
            const uint8_t *z = (const uint8_t *)memchr(sbody + i, 0, sblen - i);
            size_t e = z ? (size_t)(z - sbody) : sblen;
            if (e > i) slen += b64_line(sbody + i, e - i, id++, spec + slen);
            i = e + 1;
        }
    } else {
        memcpy(spec, sbody, sblen);
        slen = sblen;
    }
    st_encoding *enc = NULL;
    st_error err;
    st_status st =
        CHECKED(err, st_encoding_new_tiktoken(ranks, rlen, spec, slen, plain_pretokenizer(pattern), &a, &enc, &err));
    if (st == ST_OK) {
        if (!enc || err.input != 0) fail("ST_OK without a handle, or the report names an input", data, size);
    } else {
        if (enc) fail("an error with a handle", data, size);
        if (st == ST_ERR_OUT_OF_MEMORY) {
            if (c.fail_at < 0) fail("ST_ERR_OUT_OF_MEMORY with no failing allocation", data, size);
        } else if (st == ST_ERR_MALFORMED_MODEL) {
            size_t tl = err.input ? slen : rlen;
            if ((err.input != 0 && err.input != 1) || (tl ? err.offset >= tl : err.offset != 0))
                fail("ST_ERR_MALFORMED_MODEL with an offset outside its text", data, size);
        } else {
            fail("st_encoding_new_tiktoken: unexpected status", data, size);
        }
        if (c.live) fail("a failed load leaked", data, size);
        free(ranks);
        free(spec);
        return;
    }
    free(ranks);
    free(spec);
    uint32_t nv = st_encoding_n_vocab(enc);
    if (nv == 0) fail("a loaded encoding with no ids", data, size);
    for (uint32_t id = 0; id <= nv; id = id == 4096 && nv > 4200 ? nv - 100 : id + 1) {
        const uint8_t *p;
        size_t l;
        st_status s = CHECKED(err, st_token_bytes(enc, id, &p, &l, &err));
        if (s == ST_OK ? l == 0 : s != ST_ERR_INVALID_TOKEN) fail("st_token_bytes: bad result", data, size);
    }
    uint32_t allowed[16];
    size_t na = usable_specials(enc, allowed, 16);
    c.fail_at = -1;
    static const char *text = "hello world <|endoftext|> 123 \xC3\xA9 aaaaaaaaaaaaaaaaaaaaaaaaaa\n\n"
                              "\xE4\xBD\xA0\xE5\xA5\xBD\xF0\x9F\x98\x80 \xC3\xA9";
    size_t tl = strlen(text);
    uint8_t *s = (uint8_t *)malloc(tl);
    if (!s) abort();
    memcpy(s, text, tl);
    check_encode(enc, s, tl, allowed, na, 1, 1, seed, data, size);
    free(s);
    if (CHECKED(err, st_utf8_validate((const char *)data, size, &err)) == ST_OK) {
        s = (uint8_t *)malloc(size);
        if (!s) abort();
        memcpy(s, data, size);
        check_encode(enc, s, size, allowed, na, 1, 1, seed, data, size);
        free(s);
    }
    /* its image encodes the same */
    size_t sz = 0;
    CHECKED(err, st_encoding_save_image(enc, NULL, 0, &sz, &err));
    uint8_t *img = (uint8_t *)malloc(sz);
    st_encoding *ie = NULL;
    if (!img || CHECKED(err, st_encoding_save_image(enc, img, sz, &sz, &err)) != ST_OK ||
        CHECKED(err, st_encoding_from_image(img, sz, &a, &ie, &err)) != ST_OK)
        fail("the image of a loaded encoding does not load", data, size);
    uint32_t i1[128], i2[128];
    size_t n1 = 0, n2 = 0;
    st_special_policy policy = {allowed, na, NULL, 0, 0, NULL, NULL};
    st_status s1 = CHECKED(err, st_encode(enc, text, tl, &policy, 0, i1, NULL, 128, &n1, &err));
    st_status s2 = CHECKED(err, st_encode(ie, text, tl, &policy, 0, i2, NULL, 128, &n2, &err));
    if (s1 != s2 || n1 != n2 || (s1 == ST_OK && memcmp(i1, i2, n1 * 4) != 0))
        fail("the image encodes differently", data, size);
    st_encoding_free(ie);
    free(img);
    st_encoding_free(enc);
    if (c.live) fail("memory left after st_encoding_free", data, size);
}

/* ---- mode rules --------------------------------------------------------------------------------------
 * Input: byte 0 picks the alphabet (bit 0) and pattern; byte 1 the number of rules k; then k
 * pairs of 16-bit ids, each reduced below the rule's own id (so most models load; a raw id
 * over the limit when byte 0 bit 7 is set, which must be rejected); the rest is text. Checks:
 * load and encode never crash; on valid UTF-8 the ids decode back to the text (replace and
 * strict), the count agrees, and every id is below n_vocab; a rejected model leaks nothing. */
/* The same rules as a superword model: the first r = n / 2 stay rules, the rest become
 * supermerges (rule i and supermerge i - r make the same id A + i, so the parts stay below it).
 * Encoding the (valid) text with it and expanding every supermerge token back into its parts
 * must give the ids of the first r rules alone: the superword pass only joins whole tokens. A
 * supermerge that repeats a rule's pair makes the model malformed: then nothing is checked. */
static void run_superwords(const uint8_t *data, size_t size, int ube, int pattern, const uint32_t *merges, size_t n,
                           const char *text, size_t len) {
    st_error err;
    static const char *pat[] = {"", "gpt2", "cl100k", "o200k"};
    size_t r = n / 2, cap = 256 + 32 * n;
    char *model = (char *)malloc(cap);
    size_t m = (size_t)snprintf(model, cap, "supertok-model 1\nname f\nkind rules\nalphabet %s\npattern %s\n"
                                "script-aware no\nmerges %zu\n", ube ? "ube" : "bytes", pat[pattern], r);
    for (size_t i = 0; i < n; i++) {
        if (i == r) m += (size_t)snprintf(model + m, cap - m, "supermerges %zu\n", n - r);
        m += (size_t)snprintf(model + m, cap - m, "%u %u\n", merges[2 * i], merges[2 * i + 1]);
    }
    m += (size_t)snprintf(model + m, cap - m, "specials 1\n9999 <|end|>\nend\n");
    uint32_t base = ube ? 512 : 256;
    st_encoding *sw = NULL, *plain = NULL;
    st_error e;
    if (st_encoding_new_model(model, m, NULL, &sw, &e) != ST_OK) { free(model); return; }
    free(model);
    st_pretokenizer *pt = NULL;
    if (st_pretokenizer_new(pattern, 0, NULL, 0, NULL, &pt, &e) != ST_OK ||
        st_encoding_new_merges(ube, merges, r, "PHxlbmR8Pg== 9999\n", 18, pt, NULL, &plain, &e) != ST_OK)
        fail("superwords: the plain model does not load", data, size);
    st_pretokenizer_free(pt);
    uint32_t allowed = 9999;
    size_t c1 = len + 1, g1 = 0, g2 = 0, cnt = 0, bl = 0;
    uint32_t *a = (uint32_t *)malloc(c1 * 4), *b = (uint32_t *)malloc(c1 * 4), *x = (uint32_t *)malloc(c1 * 4);
    uint32_t *stack = (uint32_t *)malloc((n + 2) * 4 * 2);
    uint8_t *back = (uint8_t *)malloc(3 * len + 16);
    st_special_policy policy = {&allowed, 1, NULL, 0, 0, NULL, NULL};
    if (CHECKED(err, st_encode(sw, text, len, &policy, 0, a, NULL, c1, &g1, &err)) != ST_OK ||
        CHECKED(err, st_encode(plain, text, len, &policy, 0, b, NULL, c1, &g2, &err)) != ST_OK)
        fail("superwords: encode failed", data, size);
    if (CHECKED(err, st_encode_count(sw, text, len, &policy, &cnt, &err)) != ST_OK || cnt != g1)
        fail("superwords: count differs from encode", data, size);
    if (CHECKED(err, st_decode_text(sw, a, g1, 0, back, 3 * len + 16, &bl, &err)) != ST_OK || bl != len ||
        memcmp(back, text, len))
        fail("superwords: decode_text(encode(text)) != text", data, size);
    size_t nx = 0;
    for (size_t i = 0; i < g1; i++) { /* expand supermerge tokens, left part first */
        size_t sp = 0;
        stack[sp++] = a[i];
        while (sp) {
            uint32_t t = stack[--sp];
            if (t >= base + r && t < base + n) {
                stack[sp++] = merges[2 * (t - base) + 1];
                stack[sp++] = merges[2 * (t - base)];
            } else if (nx < c1) {
                x[nx++] = t;
            } else {
                fail("superwords: expansion longer than the text", data, size);
            }
        }
    }
    if (nx != g2 || memcmp(x, b, nx * 4)) fail("superwords: expanded ids differ from the rules' ids", data, size);
    check_cuts(sw, (const uint8_t *)text, len, &allowed, 1, 1, data, size);
    free(a);
    free(b);
    free(x);
    free(stack);
    free(back);
    st_encoding_free(sw);
    st_encoding_free(plain);
}

static void run_rules(const uint8_t *data, size_t size, uint64_t seed) {
    g_mode_name = "rules";
    (void)seed;
    if (size < 2) return;
    int ube = data[0] & 1, raw = (data[0] & 0x80) != 0, pattern = 1 + (data[0] >> 1) % 3;
    size_t k = data[1], at = 2;
    uint32_t base = ube ? 512 : 256, merges[2 * 256];
    size_t n = 0;
    for (; n < k && at + 4 <= size; n++, at += 4) {
        uint32_t a = (uint32_t)data[at] | ((uint32_t)data[at + 1] << 8), b = (uint32_t)data[at + 2] | ((uint32_t)data[at + 3] << 8);
        merges[2 * n] = raw ? a : a % (base + (uint32_t)n);
        merges[2 * n + 1] = raw ? b : b % (base + (uint32_t)n);
    }
    counter c = {0, -1, 0};
    st_allocator alloc = {c_alloc, c_free, &c};
    st_encoding *enc = NULL;
    st_error err;
    st_status st = CHECKED(err, st_encoding_new_merges(ube, merges, n, "PHxlbmR8Pg== 9999\n", 18,
                                                       plain_pretokenizer(pattern), &alloc, &enc, &err));
    if (st != ST_OK) {
        if (st != ST_ERR_MALFORMED_MODEL || c.live) fail("rules: a rejected model: wrong status or a leak", data, size);
        return;
    }
    const char *text = (const char *)data + at;
    size_t len = size - at, cap = len + 1, got = 0, cnt = 0;
    uint32_t *ids = (uint32_t *)malloc(cap * 4);
    uint8_t *back = (uint8_t *)malloc(3 * len + 16);
    uint32_t allowed = 9999;
    st_special_policy policy = {&allowed, 1, NULL, 0, 0, NULL, NULL};
    st = CHECKED(err, st_encode(enc, text, len, &policy, 0, ids, NULL, cap, &got, &err));
    if (st == ST_OK) {
        if (CHECKED(err, st_encode_count(enc, text, len, &policy, &cnt, &err)) != ST_OK || cnt != got)
            fail("rules: count differs from encode", data, size);
        for (size_t i = 0; i < got; i++)
            if (ids[i] >= st_encoding_n_vocab(enc)) fail("rules: an id past n_vocab", data, size);
        size_t bl = 0;
        for (uint32_t flags = 0; flags <= ST_UBE_STRICT; flags += ST_UBE_STRICT) {
            st = CHECKED(err, st_decode_text(enc, ids, got, flags, back, 3 * len + 16, &bl, &err));
            if (st != ST_OK || bl != len || memcmp(back, text, len) != 0) fail("rules: decode_text(encode(text)) != text", data, size);
        }
    } else if (st != ST_ERR_INVALID_UTF8) {
        fail("rules: encode failed on a loaded model", data, size);
    }
    if (st == ST_OK && n >= 2) run_superwords(data, size, ube, pattern, merges, n, text, len);
    free(ids);
    free(back);
    st_encoding_free(enc);
    if (c.live) fail("rules: memory left after st_encoding_free", data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_modes) setup();
    uint64_t seed = 0;
    for (size_t i = 0; i < size && i < 8; i++) seed = seed * 131 + data[i];
    seed ^= (uint64_t)size << 32;
    if (g_modes & MODE_TEXT) run_text(data, size, seed);
    if (g_modes & MODE_IMAGE) run_image(data, size, seed);
    if (g_modes & MODE_RANKS) run_ranks(data, size, seed);
    if (g_modes & MODE_RULES) run_rules(data, size, seed);
    return 0;
}

#ifdef ST_FUZZ_MAIN
int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        size_t n = 0;
        char *d = read_file(argv[a], &n);
        if (!d) {
            perror(argv[a]);
            return 1;
        }
        LLVMFuzzerTestOneInput((const uint8_t *)d, n);
        free(d);
        printf("%s: ok (%zu bytes)\n", argv[a], n);
    }
    return 0;
}
#endif
