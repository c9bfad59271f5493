/* Invariants every pre-tokenizer call must satisfy, shared by stress.c and
 * fuzz_pretokenize.c. Header-only (static functions) so each driver is one C file.
 *
 * For one text and one pre-tokenizer handle, st_check_text() checks:
 *   - the status is ST_OK exactly when st_utf8_validate says the text is valid, and on
 *     invalid text both calls report ST_ERR_INVALID_UTF8 at the validator's offset with
 *     *n_pieces == 0;
 *   - byte ends are strictly increasing (no empty piece), the last one is len, and every
 *     end lies on a UTF-8 character boundary;
 *   - code point ends are the byte ends converted, and the last is the code point count;
 *   - the piece count equals st_pretokenize_count;
 *   - a too-small buffer gives ST_ERR_BUFFER_TOO_SMALL with the full count and leaves
 *     everything past cap untouched.
 * It returns NULL if all hold, or a static message naming the first that failed. */
#ifndef ST_TESTS_INVARIANTS_H
#define ST_TESTS_INVARIANTS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "error_contract.h"

#define ST_CANARY ((size_t)0xA5A5A5A5u)

/* Scratch buffers, grown as needed; owned by the caller. */
typedef struct st_check_buf {
    size_t *ends_b;   /* byte ends */
    size_t *ends_c;   /* code point ends */
    size_t *ends_s;   /* small-cap probe */
    size_t cap;       /* entries in each */
} st_check_buf;

static inline void st_check_buf_free(st_check_buf *b) {
    free(b->ends_b);
    free(b->ends_c);
    free(b->ends_s);
    b->ends_b = b->ends_c = b->ends_s = NULL;
    b->cap = 0;
}

static inline int st_check_buf_reserve(st_check_buf *b, size_t n) {
    if (n <= b->cap) return 1;
    size_t *x = (size_t *)realloc(b->ends_b, n * sizeof(size_t));
    if (!x) return 0;
    b->ends_b = x;
    x = (size_t *)realloc(b->ends_c, n * sizeof(size_t));
    if (!x) return 0;
    b->ends_c = x;
    x = (size_t *)realloc(b->ends_s, n * sizeof(size_t));
    if (!x) return 0;
    b->ends_s = x;
    b->cap = n;
    return 1;
}

static inline size_t st_count_codepoints(const unsigned char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += (s[i] & 0xC0) != 0x80;
    return n;
}

/* small_cap_seed picks the cap of the too-small probe (any value; reduced mod count). */
static inline const char *st_check_text(const st_pretokenizer *pt, const unsigned char *s, size_t len,
                                 st_check_buf *b, uint64_t small_cap_seed) {
    const char *text = (const char *)s;
    size_t need = len + 2; /* at most one piece per code point, plus room for canaries */
    if (!st_check_buf_reserve(b, need)) return "test harness out of memory";

    st_error err, eb, ec, en;
    st_status vst = CHECKED(err, st_utf8_validate(text, len, &err));
    if (vst != ST_OK && vst != ST_ERR_INVALID_UTF8) return "st_utf8_validate: unexpected status";
    if (vst == ST_ERR_INVALID_UTF8 && (err.unit != ST_UNIT_BYTE || err.offset >= len))
        return "st_utf8_validate: offset out of range";

    size_t nb = (size_t)-1, nc = (size_t)-1, nn = (size_t)-1;
    st_status sb = CHECKED(eb, st_pretokenize(pt, text, len, 0, b->ends_b, len, &nb, &eb));
    st_status sc = CHECKED(ec, st_pretokenize(pt, text, len, ST_OFFSETS_CODEPOINTS, b->ends_c, len, &nc, &ec));
    st_status sn = CHECKED(en, st_pretokenize_count(pt, text, len, &nn, &en));

    if (vst != ST_OK) {
        if (sb != ST_ERR_INVALID_UTF8 || sc != ST_ERR_INVALID_UTF8 || sn != ST_ERR_INVALID_UTF8)
            return "invalid UTF-8 not reported as ST_ERR_INVALID_UTF8";
        if (eb.unit != ST_UNIT_BYTE || ec.unit != ST_UNIT_BYTE || en.unit != ST_UNIT_BYTE || eb.offset != err.offset ||
            ec.offset != err.offset || en.offset != err.offset)
            return "invalid UTF-8: error offset differs from st_utf8_validate's";
        if (nb != 0 || nc != 0 || nn != 0) return "invalid UTF-8: *n_pieces not 0";
        return NULL;
    }
    if (sb != ST_OK) return "valid text: byte-offset st_pretokenize did not return ST_OK";
    if (sc != ST_OK) return "valid text: code point st_pretokenize did not return ST_OK";
    if (sn != ST_OK) return "valid text: st_pretokenize_count did not return ST_OK";
    if (nb != nc || nb != nn) return "piece counts differ between offset modes / count call";
    if (nb > len) return "more pieces than bytes";
    if (len == 0) return nb == 0 ? NULL : "empty text gave pieces";
    if (nb == 0) return "non-empty text gave no pieces";

    size_t prev = 0, pos = 0, cps = 0;
    for (size_t k = 0; k < nb; k++) {
        size_t e = b->ends_b[k];
        if (e <= prev) return "byte ends not strictly increasing (empty piece)";
        if (e > len) return "byte end past the text";
        if (e < len && (s[e] & 0xC0) == 0x80) return "byte end inside a UTF-8 character";
        for (; pos < e; pos++) cps += (s[pos] & 0xC0) != 0x80;
        if (b->ends_c[k] != cps) return "code point end is not the converted byte end";
        prev = e;
    }
    if (prev != len) return "pieces do not cover the text (last end != len)";
    if (b->ends_c[nb - 1] != st_count_codepoints(s, len)) return "last code point end != code points";

    /* Too-small buffer: cap in [0, nb). */
    size_t cap = (size_t)(small_cap_seed % nb);
    for (size_t k = 0; k < nb + 2 && k < b->cap; k++) b->ends_s[k] = ST_CANARY;
    size_t ns = (size_t)-1;
    uint32_t flags = (small_cap_seed >> 32) & 1 ? ST_OFFSETS_CODEPOINTS : 0;
    st_status ss = CHECKED(err, st_pretokenize(pt, text, len, flags, cap ? b->ends_s : NULL, cap, &ns, &err));
    if (ss != ST_ERR_BUFFER_TOO_SMALL) return "cap < count did not give ST_ERR_BUFFER_TOO_SMALL";
    if (ns != nb) return "ST_ERR_BUFFER_TOO_SMALL did not report the full count";
    for (size_t k = cap; k < nb + 2 && k < b->cap; k++)
        if (b->ends_s[k] != ST_CANARY) return "ST_ERR_BUFFER_TOO_SMALL wrote past cap";
    return NULL;
}

#endif
