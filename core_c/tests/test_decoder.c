// Tests of the streaming id decoder (st_decoder_*) and st_decode_with_offsets (core_c/src/encode/decoder.c).
//
// Build and run from the repository root:
//   cc -std=c11 -O2 -Icore_c/include core_c/src/*/*.c core_c/tests/test_decoder.c -o test_decoder
//   ./test_decoder py/supertok/vocab vectors/models   # "N passed, M failed"; exit 1 on failure
// core_c/tests/run.sh builds it with ASan/UBSan and runs it.
//
// The oracle is st_decode_text (the one-shot decoder, itself held to CPython by the Python vector
// tests): random id streams over the shipped rank files (r50k, cl100k, o200k) and the merge-rules
// models in vectors/models (bytes_small, ube_small), in "replace" and strict mode, are fed to a
// decoder split at every point, one id per call, and with the output buffer too small first
// (ST_ERR_BUFFER_TOO_SMALL, then a retry with the size reported: same text, state unchanged);
// errors (invalid ids, strict failures) must be st_decode_text's, at the same id index.
// st_decode_with_offsets is checked against an independent computation here (tiktoken's rule).
//
// Environment: ST_TEST_SEED (default 1), ST_DECODER_STREAMS (streams per encoding, default 150).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "check.h"
#include "error_contract.h"

static uint64_t g_rng = 1;

static uint64_t rnd(void) { /* xorshift64* */
    uint64_t x = g_rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g_rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("out of memory\n");
        exit(2);
    }
    return p;
}

static size_t b64(const uint8_t *s, size_t n, char *out) {
    static const char *A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
        out[o++] = A[v >> 18];
        out[o++] = A[(v >> 12) & 63];
        out[o++] = i + 1 < n ? A[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? A[v & 63] : '=';
    }
    return o;
}

/* Special-token text "base64 id\n" lines. */
static char *specials_text(const char *const *toks, const uint32_t *ids, size_t n, size_t *len) {
    char *t = (char *)xmalloc(4096);
    size_t o = 0;
    for (size_t k = 0; k < n; k++) {
        o += b64((const uint8_t *)toks[k], strlen(toks[k]), t + o);
        o += (size_t)sprintf(t + o, " %u\n", ids[k]);
    }
    *len = o;
    return t;
}

/* ---- loading ---------------------------------------------------------------------------------- */

static st_encoding *load_ranks(const char *dir, const char *name, int pattern, const char *const *sp,
                               const uint32_t *sp_ids, size_t n_sp) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.tiktoken", dir, name);
    size_t rlen, slen;
    char *ranks = read_file(path, &rlen);
    if (!ranks) {
        printf("cannot read %s\n", path);
        return NULL;
    }
    char *spec = specials_text(sp, sp_ids, n_sp, &slen);
    st_encoding *enc = NULL;
    st_error err;
    st_pretokenizer *pt = NULL;
    st_status st = CHECKED(err, st_pretokenizer_new(pattern, 0, NULL, 0, NULL, &pt, &err));
    if (st == ST_OK) st = CHECKED(err, st_encoding_new_tiktoken(ranks, rlen, spec, slen, pt, NULL, &enc, &err));
    st_pretokenizer_free(pt);
    CHECK(st == ST_OK, "load %s: %d", name, st);
    free(ranks);
    free(spec);
    return enc;
}

/* A model of vectors/models/<name>.json: its "merges" pairs and its "special_tokens" (ASCII
 * texts), read with a scanner just good enough for those files. */
static st_encoding *load_model(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    size_t len;
    char *js = read_file(path, &len);
    if (!js) {
        printf("cannot read %s\n", path);
        return NULL;
    }
    int ube = strstr(js, "\"alphabet\": \"ube\"") != NULL;
    char *m = strstr(js, "\"merges\"");
    uint32_t *merges = (uint32_t *)xmalloc(len * sizeof(uint32_t));
    size_t nm = 0;
    if (m) {
        char *p = strchr(m, '[') + 1;
        for (;;) {
            while (*p == ' ' || *p == ',' || *p == '[') p++;
            if (*p == ']') break; /* the end of the list */
            merges[nm++] = (uint32_t)strtoul(p, &p, 10);
            while (*p == ' ' || *p == ',') p++;
            merges[nm++] = (uint32_t)strtoul(p, &p, 10);
            p++; /* ] of the pair */
        }
    }
    char spec[4096];
    size_t so = 0;
    char *s = strstr(js, "\"special_tokens\"");
    if (s) {
        char *p = strchr(s, '{') + 1;
        while (*p && *p != '}') {
            char *q = strchr(p, '"'), *e;
            if (!q) break;
            e = strchr(q + 1, '"');
            so += b64((const uint8_t *)q + 1, (size_t)(e - q - 1), spec + so);
            p = strchr(e, ':') + 1;
            unsigned long id = strtoul(p, &p, 10);
            so += (size_t)sprintf(spec + so, " %lu\n", id);
            while (*p == ' ' || *p == ',') p++;
        }
    }
    st_encoding *enc = NULL;
    st_error err;
    st_pretokenizer *pt = NULL;
    st_status st = CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, &err));
    if (st == ST_OK)
        st = CHECKED(err, st_encoding_new_merges(ube ? ST_ALPHABET_UBE : ST_ALPHABET_BYTES, merges, nm / 2, spec, so,
                                                 pt, NULL, &enc, &err));
    st_pretokenizer_free(pt);
    CHECK(st == ST_OK && nm > 0, "load model %s: %d (%zu merges)", name, st, nm / 2);
    free(merges);
    free(js);
    return enc;
}

/* ---- the oracle -------------------------------------------------------------------------------- */

typedef struct result {
    st_status st;
    uint8_t *text;
    size_t len;
    size_t err; /* error index */
} result;

static result one_shot(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t flags) {
    result r = {ST_OK, NULL, 0, 0};
    size_t need = 0;
    st_error err;
    r.st = CHECKED(err, st_decode_text(enc, ids, n, flags, NULL, 0, &need, &err));
    if (r.st == ST_ERR_BUFFER_TOO_SMALL || r.st == ST_OK) {
        r.text = (uint8_t *)xmalloc(need);
        r.st = CHECKED(err, st_decode_text(enc, ids, n, flags, r.text, need, &r.len, &err));
    }
    if (r.st != ST_OK && err.unit != ST_UNIT_NONE) r.err = (size_t)err.offset;
    return r;
}

/* Feed ids to d in the calls given by cuts (ends of each call), then a final empty call.
 * mode 0: a buffer big enough; 1: cap 0 first, then exactly the size reported; 2: one byte
 * short first (when something is due), then the size reported. Returns the outcome like
 * one_shot: the text so far and the first error (its stream index). */
/* Room for any output of n ids (a token has at most a few hundred symbols, 3 bytes each). */
#define BUF(n) (2048 * (n) + 64)

static result streamed(st_decoder *d, const uint32_t *ids, size_t n, const size_t *cuts, size_t n_cuts, int mode,
                       const char *what) {
    result r = {ST_OK, (uint8_t *)xmalloc(BUF(n)), 0, 0};
    size_t a = 0;
    for (size_t c = 0; c <= n_cuts; c++) {
        size_t b = c < n_cuts ? cuts[c] : n;
        uint32_t fl = c == n_cuts ? ST_UBE_FINAL : 0;
        size_t got = 12345;
        st_error e;
        st_status st;
        if (mode) {
            st = st_decoder_feed(d, ids + a, b - a, fl, NULL, 0, &got, &e);
            size_t need = got;
            if (st == ST_ERR_BUFFER_TOO_SMALL) {
                CHECK(need > 0 && e.status == ST_ERR_BUFFER_TOO_SMALL, "%s: size query", what);
                if (mode == 2) { /* one short, into an exact heap block (ASan sees any overrun) */
                    uint8_t *tight = (uint8_t *)xmalloc(need - 1);
                    st = st_decoder_feed(d, ids + a, b - a, fl, need > 1 ? tight : NULL, need - 1, &got, &e);
                    CHECK(st == ST_ERR_BUFFER_TOO_SMALL && got == need, "%s: one byte short: %d, %zu vs %zu", what,
                          st, got, need);
                    free(tight);
                }
                uint8_t *exact = (uint8_t *)xmalloc(need);
                st = st_decoder_feed(d, ids + a, b - a, fl, exact, need, &got, &e);
                CHECK(st != ST_OK || got == need, "%s: retry gave %zu, reported %zu", what, got, need);
                if (st == ST_OK) memcpy(r.text + r.len, exact, got);
                free(exact);
            } else if (st == ST_OK) {
                CHECK(got == 0, "%s: cap 0 succeeded with %zu bytes", what, got);
            }
        } else {
            st = st_decoder_feed(d, ids + a, b - a, fl, r.text + r.len, BUF(n) - r.len, &got, &e);
        }
        if (st != ST_OK) {
            CHECK(e.status == (uint32_t)st && e.unit == ST_UNIT_INDEX, "%s: st_error %u/%u for %d", what, e.status,
                  e.unit, st);
            r.st = st;
            r.err = (size_t)e.offset;
            /* the state is unchanged: the same call fails the same way again */
            size_t got2;
            st_error e2;
            uint8_t tmp[4];
            st_status again = st_decoder_feed(d, ids + a, b - a, fl, tmp, 0, &got2, &e2);
            CHECK(again == st && e2.offset == e.offset, "%s: a failed call changed the state (%d then %d)", what, st,
                  again);
            return r;
        }
        CHECK(e.status == ST_OK && e.message[0] == 0, "%s: st_error not cleared on success", what);
        r.len += got;
        a = b;
    }
    return r;
}

static int same(const result *a, const result *b) {
    if (a->st != b->st) return 0;
    if (a->st != ST_OK) return a->err == b->err;
    return a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
}

/* ---- random id streams --------------------------------------------------------------------------- */

typedef struct pool {
    uint32_t *ids; /* interesting ids: byte tokens, specials, multi-byte tokens */
    size_t n;
    uint32_t n_vocab;
} pool;

static int valid_id(const st_encoding *enc, uint32_t id) {
    st_error err;
    const uint8_t *p;
    size_t len;
    return CHECKED(err, st_token_bytes(enc, id, &p, &len, &err)) == ST_OK;
}

static pool make_pool(const st_encoding *enc) {
    st_error err;
    pool pl;
    pl.n_vocab = st_encoding_n_vocab(enc);
    pl.ids = (uint32_t *)xmalloc(4096 * sizeof(uint32_t));
    pl.n = 0;
    int ube = st_encoding_alphabet(enc) == ST_ALPHABET_UBE;
    /* the ids whose token is one base symbol above ASCII (lone lead or continuation bytes) */
    for (uint32_t id = 0; id < pl.n_vocab && pl.n < 1000; id++) {
        const uint8_t *p;
        size_t len;
        if (CHECKED(err, st_token_bytes(enc, id, &p, &len, &err)) != ST_OK) continue;
        if ((!ube && len == 1 && p[0] >= 0x80) || (ube && len == 2 && (p[0] >= 0x80 || p[1]))) pl.ids[pl.n++] = id;
    }
    for (uint32_t i = 0; i < st_encoding_n_special(enc); i++) pl.ids[pl.n++] = st_encoding_special_id(enc, i);
    return pl;
}

static uint32_t random_id(const st_encoding *enc, const pool *pl) {
    for (;;) {
        uint32_t id = below(3) ? pl->ids[below(pl->n)] : (uint32_t)below(pl->n_vocab);
        if (valid_id(enc, id)) return id;
    }
}

static uint32_t invalid_id(const st_encoding *enc, const pool *pl) {
    switch (below(3)) {
    case 0: return pl->n_vocab;
    case 1: return 0xFFFFFFFFu;
    default:
        for (int t = 0; t < 1000; t++) { /* a hole, if the vocabulary has one */
            uint32_t id = (uint32_t)below(pl->n_vocab);
            if (!valid_id(enc, id)) return id;
        }
        return pl->n_vocab + 7;
    }
}

/* ---- the checks -------------------------------------------------------------------------------- */

static void check_stream(const st_encoding *enc, const char *name, const uint32_t *ids, size_t n) {
    char what[160];
    for (int strict = 0; strict < 2; strict++) {
        uint32_t flags = strict ? ST_UBE_STRICT : 0;
        result want = one_shot(enc, ids, n, flags);
        st_decoder *d = NULL;
        st_error e;
        if (st_decoder_new(enc, flags, NULL, &d, &e) != ST_OK) {
            CHECK(0, "%s: st_decoder_new failed", name);
            free(want.text);
            return;
        }
        size_t cuts[512];
        /* every single split point */
        for (size_t s = 0; s <= n; s++) {
            st_decoder_reset(d);
            cuts[0] = s;
            snprintf(what, sizeof what, "%s strict=%d n=%zu split at %zu", name, strict, n, s);
            result got = streamed(d, ids, n, cuts, 1, 0, what);
            CHECK(same(&got, &want), "%s: status %d/%d err %zu/%zu len %zu/%zu", what, got.st, want.st, got.err,
                  want.err, got.len, want.len);
            free(got.text);
        }
        /* one id per call, with the buffer too small first (cap 0, or one byte short) */
        for (size_t k = 0; k < n && k < 512; k++) cuts[k] = k + 1;
        for (int mode = 0; mode < 3; mode++) {
            st_decoder_reset(d);
            snprintf(what, sizeof what, "%s strict=%d n=%zu one id per call, mode %d", name, strict, n, mode);
            result got = streamed(d, ids, n, cuts, n < 512 ? n : 512, mode, what);
            CHECK(same(&got, &want), "%s: status %d/%d err %zu/%zu len %zu/%zu", what, got.st, want.st, got.err,
                  want.err, got.len, want.len);
            free(got.text);
        }
        /* random splits, the decoder reused without a reset after a final call */
        size_t nc = 0;
        for (size_t k = 1; k < n; k++)
            if (below(3) == 0) cuts[nc++] = k;
        snprintf(what, sizeof what, "%s strict=%d n=%zu random splits", name, strict, n);
        st_decoder_reset(d);
        result got = streamed(d, ids, n, cuts, nc, 0, what);
        CHECK(same(&got, &want), "%s: status %d/%d", what, got.st, want.st);
        free(got.text);
        st_decoder_free(d);
        free(want.text);
    }
}

static size_t utf16_units_of_cp(uint32_t cp) { return cp >= 0x10000 ? 2 : 1; }

static void check_offsets(const st_encoding *enc, const char *name, const uint32_t *ids, size_t n) {
    /* the reference: the concatenated bytes (st_decode), validated, offsets by tiktoken's rule */
    size_t need = 0, eo = 0;
    st_error err;
    st_status st = CHECKED(err, st_decode(enc, ids, n, NULL, 0, &need, &err));
    if (st != ST_OK && st != ST_ERR_BUFFER_TOO_SMALL) {
        CHECK(err.unit == ST_UNIT_INDEX, "%s decode: a bad id's offset in unit %u", name, err.unit);
        eo = (size_t)err.offset;
        size_t got_len;
        st_error e;
        st_status g = st_decode_with_offsets(enc, ids, n, ST_UNIT_CODEPOINT, NULL, 0, &got_len, NULL, &e);
        CHECK(g == st && e.offset == eo && e.unit == ST_UNIT_INDEX && e.token == ids[eo],
              "%s decode_with_offsets bad id: %d/%d at %llu/%zu", name, g, st, (unsigned long long)e.offset, eo);
        return;
    }
    uint8_t *bytes = (uint8_t *)xmalloc(need);
    size_t blen;
    CHECKED(err, st_decode(enc, ids, n, bytes, need, &blen, &err));
    int valid = CHECKED(err, st_utf8_validate((const char *)bytes, blen, &err)) == ST_OK;
    size_t bad_at = valid ? 0 : (size_t)err.offset;
    size_t *want_cp = (size_t *)xmalloc((n + 1) * sizeof(size_t)), *want_u16 = (size_t *)xmalloc((n + 1) * sizeof(size_t));
    size_t *starts = (size_t *)xmalloc((n + 1) * sizeof(size_t));
    size_t text_len = 0, pos = 0;
    for (size_t k = 0; k < n; k++) {
        const uint8_t *p;
        size_t len;
        CHECKED(err, st_token_bytes(enc, ids[k], &p, &len, &err));
        starts[k] = pos;
        want_cp[k] = len && (p[0] & 0xC0) == 0x80 ? (text_len ? text_len - 1 : 0) : text_len;
        for (size_t j = 0; j < len; j++) text_len += (p[j] & 0xC0) != 0x80;
        pos += len;
    }
    starts[n] = pos;
    if (valid) { /* code point offsets to UTF-16 ones, from the decoded text */
        size_t *u16_of_cp = (size_t *)xmalloc((text_len + 1) * sizeof(size_t));
        size_t cp = 0, u = 0;
        for (size_t i = 0; i < blen;) {
            uint32_t c = bytes[i];
            size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            if (l == 2) c = ((c & 0x1F) << 6) | (bytes[i + 1] & 0x3F);
            if (l == 3) c = ((c & 0x0F) << 12) | ((uint32_t)(bytes[i + 1] & 0x3F) << 6) | (bytes[i + 2] & 0x3F);
            if (l == 4)
                c = ((c & 0x07) << 18) | ((uint32_t)(bytes[i + 1] & 0x3F) << 12) | ((uint32_t)(bytes[i + 2] & 0x3F) << 6) |
                    (bytes[i + 3] & 0x3F);
            u16_of_cp[cp++] = u;
            u += utf16_units_of_cp(c);
            i += l;
        }
        u16_of_cp[cp] = u;
        for (size_t k = 0; k < n; k++) want_u16[k] = u16_of_cp[want_cp[k]];
        free(u16_of_cp);
    }
    for (int uu = 0; uu < 2; uu++) {
        uint32_t unit = uu ? ST_UNIT_UTF16 : ST_UNIT_CODEPOINT;
        size_t *offs = (size_t *)xmalloc((n + 1) * sizeof(size_t));
        uint8_t *out = (uint8_t *)xmalloc(blen);
        size_t got_len = 0;
        st_error e;
        st_status g = st_decode_with_offsets(enc, ids, n, unit, NULL, 0, &got_len, offs, &e);
        if (valid) {
            CHECK(g == (blen ? ST_ERR_BUFFER_TOO_SMALL : ST_OK) && got_len == blen, "%s offsets size query: %d %zu/%zu",
                  name, g, got_len, blen);
            g = st_decode_with_offsets(enc, ids, n, unit, out, blen, &got_len, offs, &e);
            CHECK(g == ST_OK && got_len == blen && memcmp(out, bytes, blen) == 0 && e.status == ST_OK,
                  "%s decode_with_offsets text: %d", name, g);
            int ok = 1;
            for (size_t k = 0; k < n; k++) ok &= offs[k] == (uu ? want_u16[k] : want_cp[k]);
            CHECK(ok, "%s decode_with_offsets offsets (unit %u) differ", name, unit);
        } else {
            size_t want_id = 0;
            while (starts[want_id + 1] <= bad_at) want_id++;
            char needle[64];
            snprintf(needle, sizeof needle, "at byte %zu ", bad_at);
            CHECK(g == ST_ERR_INVALID_UTF8 && e.status == ST_ERR_INVALID_UTF8 && e.unit == ST_UNIT_INDEX &&
                      e.offset == want_id && strstr(e.message, needle),
                  "%s decode_with_offsets invalid: %d at %llu (want %zu, byte %zu): %s", name, g,
                  (unsigned long long)e.offset, want_id, bad_at, e.message);
        }
        free(offs);
        free(out);
    }
    free(bytes);
    free(want_cp);
    free(want_u16);
    free(starts);
}

static void test_encoding(const st_encoding *enc, const char *name, int streams) {
    st_error err;
    if (!enc) return;
    pool pl = make_pool(enc);
    int ube = st_encoding_alphabet(enc) == ST_ALPHABET_UBE;
    uint32_t ids[64];
    char what[96];
    for (int t = 0; t < streams; t++) {
        size_t n = below(t < 10 ? 4 : 24);
        for (size_t k = 0; k < n; k++) ids[k] = random_id(enc, &pl);
        if (below(4) == 0) ids[n > 0 ? below(n) : 0] = invalid_id(enc, &pl), n += n == 0;
        snprintf(what, sizeof what, "%s stream %d", name, t);
        check_stream(enc, what, ids, n);
        if (!ube) check_offsets(enc, what, ids, n);
    }
    /* text through the encoder: valid streams, long tokens */
    const char *texts[] = {"héllo wörld 德国电磁球阀 😀👍🏽 end", "中国 的 abcd 😀\n",
                           "Ελληνικά Русский عربي नमस्ते 한국어 \xe2\x80\x8b\xf0\x9f\x91\x8d"};
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        size_t n = 0;
        uint32_t tids[256];
        st_status st = CHECKED(err, st_encode(enc, texts[t], strlen(texts[t]), NULL, 0, tids, NULL, 256, &n, &err));
        CHECK(st == ST_OK, "%s encode text %zu: %d", name, t, st);
        snprintf(what, sizeof what, "%s text %zu", name, t);
        check_stream(enc, what, tids, n);
        if (!ube) check_offsets(enc, what, tids, n);
    }
    if (ube) {
        size_t len;
        st_error e;
        CHECK(st_decode_with_offsets(enc, ids, 0, ST_UNIT_CODEPOINT, NULL, 0, &len, NULL, &e) ==
                      ST_ERR_INVALID_ARGUMENT && e.status == ST_ERR_INVALID_ARGUMENT && e.message[0],
              "%s: decode_with_offsets refuses a UBE model", name);
    }
    free(pl.ids);
}

/* Hand-made cases: emission as soon as a character completes; strict errors from an earlier call. */
static void test_specifics(const st_encoding *enc) {
    st_error err;
    if (!enc) return;
    /* o200k: find the byte tokens of "德" (E5 BE B7) */
    uint32_t b[3];
    const uint8_t want[3] = {0xE5, 0xBE, 0xB7};
    int found = 0;
    for (uint32_t id = 0; id < st_encoding_n_vocab(enc) && found < 3; id++) {
        const uint8_t *p;
        size_t len;
        if (CHECKED(err, st_token_bytes(enc, id, &p, &len, &err)) != ST_OK || len != 1) continue;
        for (int k = 0; k < 3; k++)
            if (p[0] == want[k]) b[k] = id, found++;
    }
    CHECK(found == 3, "byte tokens of U+5FB7");
    st_decoder *d;
    st_error e;
    CHECK(st_decoder_new(enc, 0, NULL, &d, &e) == ST_OK, "new");
    uint8_t out[64];
    size_t got;
    CHECK(st_decoder_feed(d, b, 1, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "lead: nothing yet");
    CHECK(st_decoder_feed(d, b + 1, 1, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "2nd byte: nothing yet");
    CHECK(st_decoder_feed(d, b + 2, 1, 0, out, sizeof out, &got, &e) == ST_OK && got == 3 && memcmp(out, want, 3) == 0,
          "3rd byte: the character at once");
    CHECK(st_decoder_feed(d, NULL, 0, ST_UBE_FINAL, out, sizeof out, &got, &e) == ST_OK && got == 0, "flush: nothing");
    /* replace: a dangling lead at the end is U+FFFD at the flush */
    CHECK(st_decoder_feed(d, b, 2, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "2 bytes pending");
    CHECK(st_decoder_feed(d, NULL, 0, ST_UBE_FINAL, out, sizeof out, &got, &e) == ST_OK && got == 3 &&
              memcmp(out, "\xEF\xBF\xBD", 3) == 0,
          "flush: U+FFFD");
    st_decoder_free(d);
    /* CPython's chunking: a truncated surrogate (ED A0-BF) at the end of a call waits */
    uint32_t ed = 0, a0 = 0, c80 = 0, x = 0;
    for (uint32_t id = 0; id < 1000; id++) {
        const uint8_t *p;
        size_t len;
        if (CHECKED(err, st_token_bytes(enc, id, &p, &len, &err)) != ST_OK || len != 1) continue;
        if (p[0] == 0xED) ed = id;
        if (p[0] == 0xA0) a0 = id;
        if (p[0] == 0x80) c80 = id;
        if (p[0] == 'x') x = id;
    }
    CHECK(st_decoder_new(enc, 0, NULL, &d, &e) == ST_OK, "new");
    CHECK(st_decoder_feed(d, &ed, 1, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "ED: nothing");
    CHECK(st_decoder_feed(d, &a0, 1, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "ED A0: still nothing");
    CHECK(st_decoder_feed(d, NULL, 0, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "ED A0 + nothing: nothing");
    CHECK(st_decoder_feed(d, &c80, 1, 0, out, sizeof out, &got, &e) == ST_OK && got == 9, "ED A0 80: 3 U+FFFD (%zu)",
          got);
    uint32_t two[2] = {x, ed}, three[3] = {a0, x, a0};
    CHECK(st_decoder_feed(d, two, 2, 0, out, sizeof out, &got, &e) == ST_OK && got == 1 && out[0] == 'x', "x ED: x");
    CHECK(st_decoder_feed(d, three, 3, 0, out, sizeof out, &got, &e) == ST_OK && got == 10 && out[6] == 'x',
          "(ED) A0 x A0: U+FFFD U+FFFD x U+FFFD (a lone continuation byte waits for nothing)");
    CHECK(st_decoder_feed(d, NULL, 0, ST_UBE_FINAL, out, sizeof out, &got, &e) == ST_OK && got == 0, "flush: nothing");
    CHECK(st_decoder_feed(d, two, 2, 0, out, sizeof out, &got, &e) == ST_OK && got == 1, "x ED again");
    CHECK(st_decoder_feed(d, &a0, 1, ST_UBE_FINAL, out, sizeof out, &got, &e) == ST_OK && got == 6,
          "ED A0 at the end of the stream: 2 U+FFFD (%zu)", got);
    st_decoder_free(d);
    CHECK(st_decoder_new(enc, ST_UBE_STRICT, NULL, &d, &e) == ST_OK, "new strict");
    uint32_t ed_a0[2] = {ed, a0};
    CHECK(st_decoder_feed(d, ed_a0, 2, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "strict: ED A0 waits");
    CHECK(st_decoder_feed(d, &x, 1, 0, out, sizeof out, &got, &e) == ST_ERR_INVALID_UTF8 && e.offset == 0 &&
              e.token == ed,
          "strict: ED A0 x fails at the ED's index 0: %llu", (unsigned long long)e.offset);
    st_decoder_free(d);
    /* strict: the run starts in an id of an earlier call; the failing call changes nothing */
    CHECK(st_decoder_new(enc, ST_UBE_STRICT, NULL, &d, &e) == ST_OK, "new strict");
    uint32_t a[2] = {b[0], b[1]};
    CHECK(st_decoder_feed(d, a, 2, 0, out, sizeof out, &got, &e) == ST_OK && got == 0, "strict: 2 pending");
    uint32_t xx[2] = {b[2], b[2]}; /* completes, then a lone continuation byte */
    CHECK(st_decoder_feed(d, xx, 2, 0, out, sizeof out, &got, &e) == ST_ERR_INVALID_UTF8 && e.offset == 3 &&
              e.unit == ST_UNIT_INDEX && e.token == b[2] && got == 0,
          "strict: lone continuation at stream index 3: %llu", (unsigned long long)e.offset);
    CHECK(st_decoder_feed(d, NULL, 0, ST_UBE_FINAL, out, sizeof out, &got, &e) == ST_ERR_INVALID_UTF8 && e.offset == 0 &&
              e.token == b[0],
          "strict: the pending run of ids 0-1 fails at the end, at index 0: %llu", (unsigned long long)e.offset);
    CHECK(st_decoder_feed(d, xx, 1, ST_UBE_FINAL, out, sizeof out, &got, &e) == ST_OK && got == 3, "strict: completes");
    /* invalid id: stream index, the id in err->token */
    uint32_t bad[3] = {b[0], b[1], 0xFFFFFFF0u};
    st_decoder_reset(d);
    CHECK(st_decoder_feed(d, bad, 1, 0, out, sizeof out, &got, &e) == ST_OK, "one id");
    CHECK(st_decoder_feed(d, bad + 1, 2, 0, out, sizeof out, &got, &e) == ST_ERR_INVALID_TOKEN && e.offset == 2 &&
              e.token == 0xFFFFFFF0u && e.message[0],
          "invalid id at stream index 2: %llu", (unsigned long long)e.offset);
    st_decoder_free(d);
    /* arguments */
    CHECK(st_decoder_new(NULL, 0, NULL, &d, &e) == ST_ERR_INVALID_ARGUMENT && d == NULL &&
              e.status == ST_ERR_INVALID_ARGUMENT,
          "new(NULL)");
    CHECK(st_decoder_new(enc, ST_UBE_FINAL, NULL, &d, NULL) == ST_ERR_INVALID_ARGUMENT, "new: FINAL is no flag of it");
    CHECK(st_decoder_feed(NULL, b, 1, 0, out, 1, &got, NULL) == ST_ERR_INVALID_ARGUMENT, "feed(NULL)");
    CHECK(st_decode_with_offsets(enc, b, 1, ST_UNIT_BYTE, out, 1, &got, NULL, &e) == ST_ERR_INVALID_ARGUMENT,
          "offsets in bytes: refused");
    st_decoder_reset(NULL);
    st_decoder_free(NULL);
}

/* Allocator hooks: the decoder allocates through them and frees what it took. */
static long g_live;
static void *count_alloc(void *ctx, size_t n) {
    (void)ctx;
    g_live += (long)n;
    return malloc(n);
}
static void count_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    g_live -= (long)n;
    free(p);
}

int main(int argc, char **argv) {
    const char *vocab = argc > 1 ? argv[1] : "py/supertok/vocab";
    const char *models = argc > 2 ? argv[2] : "vectors/models";
    const char *seed = getenv("ST_TEST_SEED"), *ns = getenv("ST_DECODER_STREAMS");
    if (seed) g_rng = strtoull(seed, NULL, 10) | 1;
    int streams = ns ? atoi(ns) : 150;

    static const char *r50k_sp[] = {"<|endoftext|>"};
    static const uint32_t r50k_id[] = {50256};
    static const char *cl_sp[] = {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                                  "<|endofprompt|>"};
    static const uint32_t cl_id[] = {100257, 100258, 100259, 100260, 100276};
    static const char *o200k_sp[] = {"<|endoftext|>", "<|endofprompt|>"};
    static const uint32_t o200k_id[] = {199999, 200018};

    st_encoding *r50k = load_ranks(vocab, "r50k_base", ST_PATTERN_GPT2, r50k_sp, r50k_id, 1);
    st_encoding *cl = load_ranks(vocab, "cl100k_base", ST_PATTERN_CL100K, cl_sp, cl_id, 5);
    st_encoding *o200k = load_ranks(vocab, "o200k_base", ST_PATTERN_O200K, o200k_sp, o200k_id, 2);
    st_encoding *mb = load_model(models, "bytes_small");
    st_encoding *mu = load_model(models, "ube_small");

    test_specifics(o200k);
    test_encoding(r50k, "r50k_base", streams);
    test_encoding(cl, "cl100k_base", streams);
    test_encoding(o200k, "o200k_base", streams);
    test_encoding(mb, "bytes_small", 2 * streams);
    test_encoding(mu, "ube_small", 4 * streams);

    if (mu) {
        st_allocator al = {count_alloc, count_free, NULL};
        st_decoder *d;
        CHECK(st_decoder_new(mu, 0, &al, &d, NULL) == ST_OK && g_live > 0, "decoder through the hooks");
        st_decoder_free(d);
        CHECK(g_live == 0, "decoder freed through the hooks: %ld left", g_live);
    }

    st_encoding_free(r50k);
    st_encoding_free(cl);
    st_encoding_free(o200k);
    st_encoding_free(mb);
    st_encoding_free(mu);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
