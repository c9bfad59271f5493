/* UBE: Universal Byte-Level Encoding (UBE paper §3 and Appendix A; docs/design.md §6).
 *
 * Routing: a code point below U+0800 (1-2 UTF-8 bytes) goes to the UTF-8 path, its bytes
 * becoming symbols 0-255; every other code point goes to the UTF-16 path, its UTF-16LE bytes
 * becoming symbols 256-511 (2 for the BMP, 4 for a surrogate pair). Routing is per character,
 * so pre-tokenization does not change the symbol stream.
 *
 * Decoding feeds symbols to one of two byte decoders; a change of alphabet, a special token or
 * the end flushes the active one. Each same-alphabet run decodes exactly as CPython's
 * bytes.decode("utf-8" / "utf-16-le", "replace"): one U+FFFD per maximal ill-formed subpart
 * in UTF-8; in UTF-16, one U+FFFD per lone surrogate, per dangling byte, and one for a high
 * surrogate followed by a dangling byte. The decoders hold only the bytes of the character not
 * yet complete and emit every character the moment it is complete, so any split of a stream
 * gives the same text as the one-shot decode. */
#include "../base/internal.h"
#include "utf8.h"

#define ST_UBE_UTF8 0
#define ST_UBE_UTF16 1

st_status st_ube_encode_symbols(const char *text, size_t len, uint16_t *symbols, size_t cap, size_t *n_symbols,
                                st_error *err) {
    st__error_clear(err);
    if (!n_symbols || (!text && len) || (!symbols && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *n_symbols = 0;
    st_status st = st_utf8_validate(text, len, err);
    if (st != ST_OK) return st;
    const uint8_t *s = (const uint8_t *)text;
    size_t n = 0, i = 0;
#define EMIT(v) do { if (n < cap) symbols[n] = (uint16_t)(v); n++; } while (0)
    while (i < len) {
        uint16_t sym[4];
        size_t l, k = st__ube_char_symbols(s + i, sym, &l);
        for (size_t j = 0; j < k; j++) EMIT(sym[j]);
        i += l;
    }
#undef EMIT
    *n_symbols = n;
    return st__error_status(err, n > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}

/* ---- the streaming decoder ------------------------------------------------------------------ */

/* Output: UTF-8 bytes into out[0..cap), counting past cap. */
typedef struct out_buf {
    uint8_t *p;
    size_t cap, n;
} out_buf;

static void put_cp(out_buf *o, uint32_t cp) {
    uint8_t b[4];
    size_t l = st__utf8_encode(cp, b);
    for (size_t k = 0; k < l; k++) {
        if (o->n < o->cap) o->p[o->n] = b[k];
        o->n++;
    }
}

/* A malformed run: U+FFFD, or under errors="strict" the failure. */
typedef struct dec_ctx {
    out_buf o;
    int strict;
    int failed;
    size_t fail_at; /* symbol index where the first malformed run started */
    size_t pos;     /* index of the symbol being fed */
} dec_ctx;

static void bad(dec_ctx *c, st_ube_stream *s) {
    if (c->strict && !c->failed) {
        c->failed = 1;
        c->fail_at = s->run_start;
    }
    put_cp(&c->o, 0xFFFD);
}

/* Bytes a UTF-8 sequence with this lead needs in all, and the range of its second byte. */
static int utf8_need(uint8_t lead, uint8_t *lo, uint8_t *hi) {
    *lo = 0x80;
    *hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) {
        if (lead == 0xE0) *lo = 0xA0;
        if (lead == 0xED) *hi = 0x9F;
        return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        if (lead == 0xF0) *lo = 0x90;
        if (lead == 0xF4) *hi = 0x8F;
        return 4;
    }
    return 0;
}

static void utf8_byte(dec_ctx *c, st_ube_stream *s, uint8_t b) {
    for (;;) {
        if (s->n_pending == 0) {
            s->run_start = c->pos;
            if (b < 0x80) { put_cp(&c->o, b); return; }
            uint8_t lo, hi;
            if (!utf8_need(b, &lo, &hi)) { bad(c, s); return; }
            s->pending[0] = b;
            s->n_pending = 1;
            return;
        }
        uint8_t lo, hi;
        int need = utf8_need(s->pending[0], &lo, &hi);
        if (s->n_pending > 1) { lo = 0x80; hi = 0xBF; }
        if (b >= lo && b <= hi) {
            s->pending[s->n_pending++] = b;
            if (s->n_pending == need) {
                uint32_t cp;
                st__utf8_decode(s->pending, &cp);
                s->n_pending = 0;
                put_cp(&c->o, cp);
            }
            return;
        }
        /* the valid prefix ends here: one U+FFFD for it, then b starts afresh */
        bad(c, s);
        s->n_pending = 0;
    }
}

static void utf16_unit(dec_ctx *c, st_ube_stream *s, uint32_t u);

static void utf16_byte(dec_ctx *c, st_ube_stream *s, uint8_t b) {
    if (s->n_pending == 0) s->run_start = c->pos;
    s->pending[s->n_pending++] = b;
    if (s->n_pending == 2) {
        uint32_t u = (uint32_t)s->pending[0] | ((uint32_t)s->pending[1] << 8);
        s->n_pending = 0;
        utf16_unit(c, s, u);
    } else if (s->n_pending == 4) {
        uint32_t hi = (uint32_t)s->pending[0] | ((uint32_t)s->pending[1] << 8);
        uint32_t u = (uint32_t)s->pending[2] | ((uint32_t)s->pending[3] << 8);
        s->n_pending = 0;
        if (u >= 0xDC00 && u <= 0xDFFF) {
            put_cp(&c->o, 0x10000 + ((hi - 0xD800) << 10) + (u - 0xDC00));
        } else {
            bad(c, s); /* the high surrogate had no low one after it */
            s->run_start = c->pos - 1;
            utf16_unit(c, s, u);
        }
    }
}

static void utf16_unit(dec_ctx *c, st_ube_stream *s, uint32_t u) {
    if (u >= 0xD800 && u <= 0xDBFF) { /* wait for its low surrogate */
        s->pending[0] = (uint8_t)u;
        s->pending[1] = (uint8_t)(u >> 8);
        s->n_pending = 2;
    } else if (u >= 0xDC00 && u <= 0xDFFF) {
        bad(c, s);
    } else {
        put_cp(&c->o, u);
    }
}

/* End of a same-alphabet run: whatever is pending is one malformed run (CPython: a truncated
 * UTF-8 prefix, a dangling UTF-16 byte, a high surrogate with or without one byte after it). */
static void flush(dec_ctx *c, st_ube_stream *s) {
    if (s->n_pending) bad(c, s);
    s->n_pending = 0;
}

static void feed(dec_ctx *c, st_ube_stream *s, uint16_t sym) {
    int alpha = sym >= 256 ? ST_UBE_UTF16 : ST_UBE_UTF8;
    if (alpha != s->alphabet) {
        flush(c, s);
        s->alphabet = (uint8_t)alpha;
    }
    if (alpha == ST_UBE_UTF8) utf8_byte(c, s, (uint8_t)sym);
    else utf16_byte(c, s, (uint8_t)(sym - 256));
}

/* The caller owns the state (a wasm host keeps it in linear memory, where anything may write),
 * so it is trusted for nothing: a state feed() can leave is the only one it accepts. UTF-8: up
 * to 3 bytes of one incomplete sequence, each in its allowed range; UTF-16: one dangling byte,
 * a high surrogate, or a high surrogate and one byte. Pending bytes began n_pending symbols
 * back. Anything else (n_pending past pending[], an unknown alphabet) would write past the
 * array or decode garbage: ST_ERR_INVALID_ARGUMENT naming the field. */
static st_status check_state(const st_ube_stream *s, st_error *err) {
    const char *bad_field = NULL;
    uint32_t n = s->n_pending;
    if (s->alphabet > ST_UBE_UTF16) bad_field = "alphabet is neither 0 (UTF-8) nor 1 (UTF-16)";
    else if (n > 3) bad_field = "n_pending is above 3";
    else if (n && s->base - s->run_start != n) bad_field = "run_start is not base - n_pending";
    else if (n && s->alphabet == ST_UBE_UTF8) {
        uint8_t lo, hi;
        int need = utf8_need(s->pending[0], &lo, &hi);
        if ((int)n >= need) bad_field = "pending holds no incomplete UTF-8 sequence";
        for (uint32_t k = 1; k < n && !bad_field; k++)
            if (s->pending[k] < (k == 1 ? lo : 0x80) || s->pending[k] > (k == 1 ? hi : 0xBF))
                bad_field = "pending holds no incomplete UTF-8 sequence";
    } else if (n >= 2) {
        uint32_t u = (uint32_t)s->pending[0] | ((uint32_t)s->pending[1] << 8);
        if (u < 0xD800 || u > 0xDBFF) bad_field = "pending holds no high surrogate";
    }
    if (!bad_field) return ST_OK;
    st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "damaged stream state: ");
    st__error_append(err, bad_field);
    return ST_ERR_INVALID_ARGUMENT;
}

size_t st_ube_stream_size(void) { return sizeof(st_ube_stream); }

void st_ube_stream_init(st_ube_stream *s) {
    if (!s) return;
    st__memset(s, 0, sizeof *s);
}

st_status st_ube_stream_feed(st_ube_stream *s, const uint16_t *symbols, size_t n, uint32_t flags, uint8_t *out,
                             size_t cap, size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!s || !out_len || (!symbols && n) || (!out && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out_len = 0;
    st_status cs = check_state(s, err);
    if (cs != ST_OK) return cs;
    for (size_t k = 0; k < n; k++)
        if (symbols[k] > 511) {
            st__error_token(err, symbols[k]);
            return st__error_set(err, ST_ERR_INVALID_TOKEN, ST_UNIT_INDEX, k, "a symbol above 511");
        }
    dec_ctx c = {{out, cap, 0}, (flags & ST_UBE_STRICT) != 0, 0, 0, 0};
    st_ube_stream saved = *s;
    for (size_t k = 0; k < n; k++) {
        c.pos = s->base + k;
        feed(&c, s, symbols[k]);
    }
    s->base += n;
    if (flags & ST_UBE_FINAL) {
        c.pos = s->base;
        flush(&c, s);
    }
    if (c.failed) {
        *s = saved; /* strict: nothing was consumed */
        return st__error_set(err, ST_ERR_INVALID_UTF8, ST_UNIT_INDEX, c.fail_at, "malformed text (strict)");
    }
    *out_len = c.o.n;
    if (c.o.n > cap) {
        *s = saved; /* nothing consumed: the caller retries with the size given */
        return st__error_set(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0, NULL);
    }
    return ST_OK;
}

st_status st_ube_decode_symbols(const uint16_t *symbols, size_t n, uint32_t flags, uint8_t *out, size_t cap,
                                size_t *out_len, st_error *err) {
    st_ube_stream s;
    st_ube_stream_init(&s);
    return st_ube_stream_feed(&s, symbols, n, flags | ST_UBE_FINAL, out, cap, out_len, err);
}
