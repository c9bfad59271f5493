// The golden vectors (vectors/, docs/design.md §10) run through the C API, with no Python: the core is
// held to the same spec as every host.
//
//   gcc -std=c11 -O1 -g -fsanitize=address,undefined -Icore_c/include core_c/src/*/*.c
//       core_c/tests/test_vectors.c -o test_vectors
//   ./test_vectors [repository root]       (default: the current directory)
//
// What runs (every record of each file):
//   vectors/pretokenize/{gpt2,cl100k,o200k,script_aware}.jsonl   the pieces' byte ends
//   vectors/encode/<encoding>.jsonl   ids (text, text_runs, text_utf16_hex inputs), the character
//       starts, and the disallowed-special error; rank files from py/supertok/vocab/*.tiktoken,
//       special tokens from py/supertok/vocab/*.json
//   vectors/decode/<encoding>.jsonl   bytes and replace-decoded text, the incremental decoder,
//       invalid ids (KeyError; OverflowError records hold ids no uint32_t can carry: a host's
//       check, counted as not applicable)
//   vectors/ube/{routing,decode,stream}.jsonl   routing and back, replace/strict decoding,
//       invalid symbols, the streaming decoder's per-feed output and flush
//   vectors/models/{encode,decode}.jsonl   ids and starts, replace/strict decoding and the
//       streaming decoder for every model they name (merge rules and superword models), each
//       loaded from vectors/models/<name>.stmodel
//   vectors/tokenizer_json/cases.jsonl   ids with every added token matched and with the special
//       ones as text, and the decode, for each model vectors/tokenizer_json/<model>.json (and its
//       compact image, saved and loaded here)
// Prints failures (at most a few per file), a line per file, then "N passed, M failed"
// (tests/test_c_sanitizers.py reads it); exit 1 on any failure.
//
// Test code: libc is fine here. The vector files are read with json_reader.h.
//
// Every call into the core goes through the tv_* wrappers just below, one per API function
// (tiktoken's allowed/disallowed strings become the core's st_special_policy; the incremental
// decoder is st_decoder_*), so a change of the C API is adapted in one place.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "check.h"
#include "json_reader.h"

/* ==== the core, behind one wrapper per API function ========================================= */

/* The error report of a failed call (st_error: status, offset and the unit it counts). */
typedef struct tv_err {
    size_t offset;
    st_error e;
} tv_err;

static st_status tv_done(tv_err *err, st_status st) {
    if (err) err->offset = (size_t)err->e.offset;
    return st;
}

static st_status tv_pretokenizer_new(int pattern, int script_aware, const char *scripts, size_t scripts_len,
                                     st_pretokenizer **out) {
    st_error e;
    return st_pretokenizer_new(pattern, script_aware ? ST_PRETOK_SCRIPT_AWARE : 0, scripts, scripts_len, NULL, out,
                               &e);
}

static void tv_pretokenizer_free(st_pretokenizer *pt) { st_pretokenizer_free(pt); }

/* Byte ends of the pieces. */
static st_status tv_pretokenize(const st_pretokenizer *pt, const char *text, size_t len, size_t *ends, size_t cap,
                                size_t *n) {
    st_error e;
    return st_pretokenize(pt, text, len, 0, ends, cap, n, &e);
}

/* An encoding from a rank file and specials (rank-file line format), with base pattern
 * `pattern` (not script-aware). */
static st_status tv_encoding_new_tiktoken(const char *ranks, size_t ranks_len, const char *specials,
                                          size_t specials_len, int pattern, st_encoding **out) {
    st_error e;
    st_pretokenizer *pt = NULL;
    st_status st = st_pretokenizer_new(pattern, 0, NULL, 0, NULL, &pt, &e);
    if (st != ST_OK) return st;
    st = st_encoding_new_tiktoken(ranks, ranks_len, specials, specials_len, pt, NULL, out, &e);
    st_pretokenizer_free(pt);
    return st;
}

static void tv_encoding_free(st_encoding *enc) { st_encoding_free(enc); }

/* An encoding from a model file (docs/formats/model-format.md), and its special tokens: n, ids, texts. */
static st_status tv_encoding_new_model(const char *text, size_t len, st_encoding **out) {
    st_error e;
    return st_encoding_new_model(text, len, NULL, out, &e);
}
/* An encoding from a HuggingFace tokenizer.json (or its compact image), and the compact image of one. */
static st_status tv_encoding_new_tokenizer_json(const char *bytes, size_t len, st_encoding **out, tv_err *err) {
    return tv_done(err, st_encoding_new_tokenizer_json(bytes, len, NULL, out, &err->e));
}
static st_status tv_save_compact(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size) {
    st_error e;
    return st_encoding_save_compact(enc, out, cap, size, &e);
}
static size_t tv_n_special(const st_encoding *enc) { return st_encoding_n_special(enc); }
static uint32_t tv_special_id(const st_encoding *enc, size_t k) { return st_encoding_special_id(enc, (uint32_t)k); }
static st_status tv_token_bytes(const st_encoding *enc, uint32_t id, const uint8_t **p, size_t *len) {
    st_error e;
    return st_token_bytes(enc, id, p, len, &e);
}
/* decode_text in "replace" (strict 0) or strict mode. */
static st_status tv_decode_text_mode(const st_encoding *enc, const uint32_t *ids, size_t n, int strict, uint8_t *out,
                                     size_t cap, size_t *out_len, tv_err *err) {
    return tv_done(err, st_decode_text(enc, ids, n, strict ? ST_UBE_STRICT : 0, out, cap, out_len, &err->e));
}

/* Encode with the core's special-token policy; starts (if not NULL) in code points. */
static st_status tv_encode(const st_encoding *enc, const char *text, size_t len, const st_special_policy *policy,
                           uint32_t *ids, size_t *char_starts, size_t cap, size_t *n_ids, tv_err *err) {
    return tv_done(err, st_encode(enc, text, len, policy, ST_OFFSETS_CODEPOINTS, ids, char_starts, cap, n_ids, &err->e));
}

static st_status tv_decode(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                           size_t *out_len, tv_err *err) {
    return tv_done(err, st_decode(enc, ids, n, out, cap, out_len, &err->e));
}

static st_status tv_decode_text(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                                size_t *out_len, tv_err *err) {
    return tv_done(err, st_decode_text(enc, ids, n, 0, out, cap, out_len, &err->e));
}

static st_status tv_ube_encode_symbols(const char *text, size_t len, uint16_t *sym, size_t cap, size_t *n) {
    st_error e;
    return st_ube_encode_symbols(text, len, sym, cap, n, &e);
}

static st_status tv_ube_decode_symbols(const uint16_t *sym, size_t n, int strict, uint8_t *out, size_t cap,
                                       size_t *out_len, tv_err *err) {
    return tv_done(err, st_ube_decode_symbols(sym, n, strict ? ST_UBE_STRICT : 0, out, cap, out_len, &err->e));
}

static void tv_ube_stream_init(st_ube_stream *s) { st_ube_stream_init(s); }

static st_status tv_ube_stream_feed(st_ube_stream *s, const uint16_t *sym, size_t n, int final, uint8_t *out,
                                    size_t cap, size_t *out_len, tv_err *err) {
    return tv_done(err, st_ube_stream_feed(s, sym, n, final ? ST_UBE_FINAL : 0, out, cap, out_len, &err->e));
}

/* A list of strings from a vector record, or "all". */
typedef struct tv_strs {
    int all;
    size_t n;
    char **s;
} tv_strs;

/* tiktoken's allowed_special / disallowed_special as the core's policy of strings
 * (ST_SPECIAL_BY_TEXT; "all" as its flags), as a host passes them: the core resolves them
 * against the encoding and refuses a disallowed string in the text, special token or not. The
 * strings and their ends are malloc'd into *strings and *ends (free both). */
static void tv_special_policy(const tv_strs *allowed, const tv_strs *disallowed, st_special_policy *pol,
                              char **strings, size_t **ends) {
    memset(pol, 0, sizeof *pol);
    pol->flags = ST_SPECIAL_BY_TEXT;
    if (allowed->all) pol->flags |= ST_SPECIAL_ALLOW_ALL;
    if (disallowed->all) pol->flags |= ST_SPECIAL_DISALLOW_REST;
    size_t na = allowed->all ? 0 : allowed->n, nd = disallowed->all ? 0 : disallowed->n, size = 0;
    for (size_t j = 0; j < na; j++) size += strlen(allowed->s[j]);
    for (size_t j = 0; j < nd; j++) size += strlen(disallowed->s[j]);
    *strings = (char *)malloc(size + 1);
    *ends = (size_t *)malloc((na + nd + 1) * sizeof **ends);
    size_t at = 0;
    for (size_t j = 0; j < na + nd; j++) {
        const char *t = j < na ? allowed->s[j] : disallowed->s[j - na];
        size_t l = strlen(t);
        memcpy(*strings + at, t, l);
        at += l;
        (*ends)[j] = at;
    }
    pol->n_allowed = na;
    pol->n_disallowed = nd;
    pol->strings = *strings;
    pol->ends = *ends;
}

/* The incremental decoder (tiktoken's decoder as the Python layer exposes it): st_decoder_*. */
typedef struct tv_decoder {
    st_decoder *d;
} tv_decoder;

static st_status tv_decoder_init(tv_decoder *d, const st_encoding *enc) {
    st_error e;
    d->d = NULL;
    return st_decoder_new(enc, 0, NULL, &d->d, &e);
}

static void tv_decoder_free(tv_decoder *d) { st_decoder_free(d->d); }

/* Text for ids[0..n) into out (cap bytes), *out_len; ST_OK or the failing status. */
static st_status tv_decoder_add(tv_decoder *d, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                                size_t *out_len) {
    st_error e;
    return st_decoder_feed(d->d, ids, n, 0, out, cap, out_len, &e);
}

static st_status tv_decoder_flush(tv_decoder *d, uint8_t *out, size_t cap, size_t *out_len) {
    st_error e;
    return st_decoder_feed(d->d, NULL, 0, ST_UBE_FINAL, out, cap, out_len, &e);
}

/* ==== records, files, helpers ================================================================ */

typedef struct vfile {
    jval *rec; /* records after the header */
    size_t n;
    jval header;
} vfile;

static const char *g_root = ".";
static int g_shown; /* failures printed for the current file */
#define SHOW_MAX 5

static int load_vfile(const char *rel, vfile *f) {
    char path[4096];
    snprintf(path, sizeof path, "%s/vectors/%s", g_root, rel);
    size_t len = 0;
    char *d = read_file(path, &len);
    memset(f, 0, sizeof *f);
    if (!d) {
        CHECK(0, "cannot read %s", path);
        return 0;
    }
    size_t cap = 0, line = 0;
    char *p = d, *end = d + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        jparser j = {p, le, 0};
        jval v;
        jparse(&j, &v, 0);
        jws(&j);
        if (j.bad || j.p != le) {
            CHECK(0, "%s line %zu: not a JSON record this reader understands", path, line + 1);
            jfree(&v);
            free(d);
            return 0;
        }
        if (line == 0) f->header = v;
        else {
            if (f->n == cap) {
                cap = cap ? 2 * cap : 1024;
                f->rec = (jval *)realloc(f->rec, cap * sizeof *f->rec);
            }
            f->rec[f->n++] = v;
        }
        line++;
        p = le + 1;
    }
    free(d);
    CHECK(jget(&f->header, "_meta") != NULL, "%s: no _meta header", path);
    return 1;
}

static void free_vfile(vfile *f) {
    for (size_t k = 0; k < f->n; k++) jfree(&f->rec[k]);
    free(f->rec);
    jfree(&f->header);
}

static void fail(const char *file, size_t i, const char *fmt, ...) {
    g_fail++;
    if (g_shown++ >= SHOW_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s record %zu: ", file, i);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* A number array into a new uint32_t array; *ok = 0 if an item is not an integer in 0..2^32. */
static uint32_t *u32_array(const jval *a, size_t *n, int *ok) {
    *ok = a && a->t == J_ARR;
    *n = *ok ? a->n : 0;
    uint32_t *o = (uint32_t *)malloc((*n + 1) * sizeof *o);
    for (size_t k = 0; k < *n; k++) {
        double x = a->v[k].num;
        if (a->v[k].t != J_NUM || x < 0 || x > 4294967295.0 || x != (double)(uint64_t)x) { *ok = 0; o[k] = 0; }
        else o[k] = (uint32_t)x;
    }
    return o;
}

static uint16_t *u16_array(const jval *a, size_t *n, int *ok) {
    size_t m;
    uint32_t *w = u32_array(a, &m, ok);
    uint16_t *o = (uint16_t *)malloc((m + 1) * sizeof *o);
    for (size_t k = 0; k < m; k++) {
        if (w[k] > 0xFFFF) *ok = 0;
        o[k] = (uint16_t)w[k];
    }
    free(w);
    *n = m;
    return o;
}

static int is_str(const jval *v) { return v && v->t == J_STR; }

static int pattern_of(const char *name) {
    if (!strcmp(name, "gpt2") || !strcmp(name, "r50k_base") || !strcmp(name, "p50k_base")) return ST_PATTERN_GPT2;
    if (!strcmp(name, "cl100k") || !strcmp(name, "cl100k_base")) return ST_PATTERN_CL100K;
    if (!strcmp(name, "o200k") || !strcmp(name, "o200k_base")) return ST_PATTERN_O200K;
    if (!strcmp(name, "superbpe")) return ST_PATTERN_SUPERBPE;
    if (!strcmp(name, "llama3")) return ST_PATTERN_LLAMA3;
    if (!strcmp(name, "qwen2")) return ST_PATTERN_QWEN2;
    if (!strcmp(name, "deepseek_v3")) return ST_PATTERN_DEEPSEEK_V3;
    return 0;
}

/* ==== pretokenize ============================================================================== */

static void run_pretokenize(const char *name) {
    char rel[256];
    snprintf(rel, sizeof rel, "pretokenize/%s", name);
    vfile f;
    if (!load_vfile(rel, &f)) return;
    g_shown = 0;
    int p0 = g_pass, f0 = g_fail;
    struct {
        int pattern, sa, null_scripts;
        char list[512];
        st_pretokenizer *pt;
    } cache[32]; /* one pre-tokenizer per (pattern, script-aware, scripts) */
    size_t n_cache = 0;
    for (size_t i = 0; i < f.n; i++) {
        const jval *r = &f.rec[i];
        const jval *pat = jget(r, "pattern"), *text = jget(r, "text"), *pieces = jget(r, "pieces");
        const jval *sa = jget(r, "script_aware"), *scripts = jget(r, "scripts");
        int pattern = is_str(pat) ? pattern_of(pat->s) : 0;
        if (!pattern || !is_str(text) || !pieces || pieces->t != J_ARR || !sa || sa->t != J_BOOL || !scripts) {
            fail(rel, i, "malformed record");
            continue;
        }
        /* the scripts argument: NULL (default set) or the names joined by commas */
        char list[512];
        size_t ll = 0;
        if (scripts->t == J_ARR)
            for (size_t k = 0; k < scripts->n; k++)
                ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s%s", k ? "," : "", scripts->v[k].s);
        list[ll] = 0;
        int null_scripts = scripts->t != J_ARR;
        st_pretokenizer *pt = NULL;
        for (size_t k = 0; k < n_cache && !pt; k++)
            if (cache[k].pattern == pattern && cache[k].sa == sa->b && cache[k].null_scripts == null_scripts &&
                !strcmp(cache[k].list, list))
                pt = cache[k].pt;
        if (!pt) {
            st_status st = tv_pretokenizer_new(pattern, sa->b, null_scripts ? NULL : list, ll, &pt);
            if (st != ST_OK || n_cache == 32) {
                fail(rel, i, "st_pretokenizer_new: %s", st_status_str(st));
                tv_pretokenizer_free(pt);
                continue;
            }
            cache[n_cache].pattern = pattern;
            cache[n_cache].sa = sa->b;
            cache[n_cache].null_scripts = null_scripts;
            memcpy(cache[n_cache].list, list, ll + 1);
            cache[n_cache++].pt = pt;
        }
        size_t n = 0, cap = text->slen + 1;
        size_t *ends = (size_t *)malloc(cap * sizeof *ends);
        st_status st = tv_pretokenize(pt, text->s, text->slen, ends, cap, &n);
        int ok = st == ST_OK && n == pieces->n;
        size_t at = 0;
        for (size_t k = 0; ok && k < n; k++) {
            at += pieces->v[k].slen;
            ok = ends[k] == at && memcmp(text->s + (k ? ends[k - 1] : 0), pieces->v[k].s, pieces->v[k].slen) == 0;
        }
        if (ok) g_pass++;
        else fail(rel, i, "%s%s pattern %s: status %s, %zu pieces, want %zu", sa->b ? "script-aware " : "",
                  scripts->t == J_ARR ? list : "", pat->s, st_status_str(st), n, pieces->n);
        free(ends);
    }
    for (size_t k = 0; k < n_cache; k++) tv_pretokenizer_free(cache[k].pt);
    printf("  vectors/%s: %zu records (checks: %d passed, %d failed)\n", rel, f.n, g_pass - p0, g_fail - f0);
    free_vfile(&f);
}

/* ==== encodings: loading ======================================================================= */

typedef struct enc_ctx {
    const char *name;
    st_encoding *enc;
    size_t n_specials;
    char *specials[16];
    uint32_t special_ids[16];
} enc_ctx;

static void b64(const uint8_t *s, size_t n, char *o) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
        o[k++] = A[v >> 18];
        o[k++] = A[(v >> 12) & 63];
        o[k++] = i + 1 < n ? A[(v >> 6) & 63] : '=';
        o[k++] = i + 2 < n ? A[v & 63] : '=';
    }
    o[k] = 0;
}

static int load_enc(enc_ctx *c, const char *name) {
    memset(c, 0, sizeof *c);
    c->name = name;
    char path[4096];
    snprintf(path, sizeof path, "%s/py/supertok/vocab/%s.json", g_root, name);
    size_t jl = 0;
    char *js = read_file(path, &jl);
    if (!js) {
        CHECK(0, "cannot read %s", path);
        return 0;
    }
    jparser j = {js, js + jl, 0};
    jval meta;
    jparse(&j, &meta, 0);
    free(js);
    const jval *sp = jget(&meta, "special_tokens");
    if (j.bad || !sp || sp->t != J_OBJ || sp->n > 16) {
        CHECK(0, "%s: no special_tokens this reader understands", path);
        jfree(&meta);
        return 0;
    }
    char *spec = (char *)malloc(sp->n * 128 + 1);
    size_t sl = 0;
    for (size_t k = 0; k < sp->n; k++) {
        size_t kl = strlen(sp->keys[k]);
        c->specials[k] = (char *)malloc(kl + 1);
        memcpy(c->specials[k], sp->keys[k], kl + 1);
        c->special_ids[k] = (uint32_t)sp->v[k].num;
        char enc64[96];
        b64((const uint8_t *)sp->keys[k], strlen(sp->keys[k]), enc64);
        sl += (size_t)sprintf(spec + sl, "%s %u\n", enc64, c->special_ids[k]);
    }
    c->n_specials = sp->n;
    jfree(&meta);
    snprintf(path, sizeof path, "%s/py/supertok/vocab/%s.tiktoken", g_root, name);
    size_t rl = 0;
    char *ranks = read_file(path, &rl);
    if (!ranks) {
        CHECK(0, "cannot read %s", path);
        free(spec);
        return 0;
    }
    st_status st = tv_encoding_new_tiktoken(ranks, rl, spec, sl, pattern_of(name), &c->enc);
    free(ranks);
    free(spec);
    CHECK(st == ST_OK, "load %s: %s", name, st_status_str(st));
    return st == ST_OK;
}

static void free_enc(enc_ctx *c) {
    tv_encoding_free(c->enc);
    for (size_t k = 0; k < c->n_specials; k++) free(c->specials[k]);
}

/* ==== encode =================================================================================== */

static void strs_of(const jval *v, tv_strs *s) {
    s->all = is_str(v) && !strcmp(v->s, "all");
    s->n = 0;
    s->s = NULL;
    if (v && v->t == J_ARR) {
        s->n = v->n;
        s->s = (char **)malloc((v->n + 1) * sizeof *s->s);
        for (size_t k = 0; k < v->n; k++) s->s[k] = v->v[k].s;
    }
}

/* text_utf16_hex: UTF-16-LE code units as hex; a surrogate pair is its character and a lone
 * surrogate U+FFFD, as tiktoken (and every host) repairs them before encoding. */
static char *utf16_hex_text(const char *hex, size_t *len) {
    size_t nu = strlen(hex) / 4;
    char *o = (char *)malloc(nu * 3 + 1);
    size_t n = 0;
    uint32_t *u = (uint32_t *)malloc((nu + 1) * sizeof *u);
    for (size_t k = 0; k < nu; k++) {
        char w[5] = {hex[4 * k + 2], hex[4 * k + 3], hex[4 * k], hex[4 * k + 1], 0}; /* little-endian */
        hex4(w, &u[k]);
    }
    for (size_t k = 0; k < nu; k++) {
        uint32_t x = u[k];
        if (x >= 0xD800 && x < 0xDC00 && k + 1 < nu && u[k + 1] >= 0xDC00 && u[k + 1] < 0xE000) {
            x = 0x10000 + ((x - 0xD800) << 10) + (u[k + 1] - 0xDC00);
            k++;
        } else if (x >= 0xD800 && x < 0xE000) x = 0xFFFD;
        n += put_utf8(o + n, x);
    }
    free(u);
    o[n] = 0;
    *len = n;
    return o;
}

/* [[unit, count], ...] expanded (strings) */
static char *expand_text_runs(const jval *runs, size_t *len) {
    size_t n = 0;
    for (size_t k = 0; k < runs->n; k++) n += runs->v[k].v[0].slen * (size_t)runs->v[k].v[1].num;
    char *o = (char *)malloc(n + 1);
    size_t at = 0;
    for (size_t k = 0; k < runs->n; k++)
        for (size_t c = 0; c < (size_t)runs->v[k].v[1].num; c++) {
            memcpy(o + at, runs->v[k].v[0].s, runs->v[k].v[0].slen);
            at += runs->v[k].v[0].slen;
        }
    o[at] = 0;
    *len = at;
    return o;
}

static uint32_t *expand_id_runs(const jval *runs, size_t *n) {
    size_t m = 0;
    for (size_t k = 0; k < runs->n; k++) m += runs->v[k].v[0].n * (size_t)runs->v[k].v[1].num;
    uint32_t *o = (uint32_t *)malloc((m + 1) * sizeof *o);
    size_t at = 0;
    for (size_t k = 0; k < runs->n; k++)
        for (size_t c = 0; c < (size_t)runs->v[k].v[1].num; c++)
            for (size_t j = 0; j < runs->v[k].v[0].n; j++) o[at++] = (uint32_t)runs->v[k].v[0].v[j].num;
    *n = at;
    return o;
}

static void run_encode(enc_ctx *c) {
    char rel[256];
    snprintf(rel, sizeof rel, "encode/%s.jsonl", c->name);
    vfile f;
    if (!load_vfile(rel, &f)) return;
    g_shown = 0;
    int p0 = g_pass, f0 = g_fail;
    for (size_t i = 0; i < f.n; i++) {
        const jval *r = &f.rec[i];
        const jval *t = jget(r, "text"), *tr = jget(r, "text_runs"), *th = jget(r, "text_utf16_hex");
        const jval *ids_v = jget(r, "ids"), *ids_r = jget(r, "ids_runs"), *err = jget(r, "error");
        const jval *starts_v = jget(r, "starts");
        size_t len = 0;
        char *text;
        if (is_str(t)) {
            text = (char *)malloc(t->slen + 1);
            memcpy(text, t->s, t->slen + 1);
            len = t->slen;
        } else if (tr && tr->t == J_ARR) text = expand_text_runs(tr, &len);
        else if (is_str(th)) text = utf16_hex_text(th->s, &len);
        else {
            fail(rel, i, "no text");
            continue;
        }
        tv_strs allowed, disallowed;
        strs_of(jget(r, "allowed_special"), &allowed);
        strs_of(jget(r, "disallowed_special"), &disallowed);
        st_special_policy pol;
        char *pol_strings;
        size_t *pol_ends;
        tv_special_policy(&allowed, &disallowed, &pol, &pol_strings, &pol_ends);
        size_t cap = len + 1, n = 0;
        uint32_t *ids = (uint32_t *)malloc(cap * sizeof *ids);
        size_t *starts = (size_t *)malloc(cap * sizeof *starts);
        tv_err er = {0};
        st_status st = tv_encode(c->enc, text, len, &pol, ids, starts_v ? starts : NULL, cap, &n, &er);
        if (err) {
            if (st == ST_ERR_DISALLOWED_SPECIAL) g_pass++;
            else fail(rel, i, "expected %s (a disallowed special token), got %s", is_str(err) ? err->s : "?",
                      st_status_str(st));
        } else if (st == ST_ERR_DISALLOWED_SPECIAL) {
            fail(rel, i, "the policy refused a text tiktoken encodes");
        } else {
            size_t want_n = 0;
            int ok_w = 1;
            uint32_t *want = ids_r && ids_r->t == J_ARR ? expand_id_runs(ids_r, &want_n) : u32_array(ids_v, &want_n, &ok_w);
            int ok = ok_w && st == ST_OK && n == want_n && memcmp(ids, want, n * sizeof *ids) == 0;
            if (!ok) {
                size_t k = 0;
                while (k < n && k < want_n && ids[k] == want[k]) k++;
                fail(rel, i, "status %s, %zu ids, want %zu; first difference at %zu (%u, want %u)", st_status_str(st),
                     n, want_n, k, k < n ? ids[k] : 0, k < want_n ? want[k] : 0);
            } else g_pass++;
            if (ok && starts_v) {
                int sok = starts_v->t == J_ARR && starts_v->n == n;
                for (size_t k = 0; sok && k < n; k++) sok = starts[k] == (size_t)starts_v->v[k].num;
                if (sok) g_pass++;
                else fail(rel, i, "char starts differ");
            }
            free(want);
        }
        free(ids);
        free(starts);
        free(pol_strings);
        free(pol_ends);
        free(allowed.s);
        free(disallowed.s);
        free(text);
    }
    printf("  vectors/%s: %zu records (checks: %d passed, %d failed)\n", rel, f.n, g_pass - p0, g_fail - f0);
    free_vfile(&f);
}

/* ==== decode =================================================================================== */

static int hex_bytes(const char *hex, uint8_t *o, size_t *n) {
    size_t l = strlen(hex);
    if (l % 2) return 0;
    for (size_t k = 0; k < l / 2; k++) {
        char w[5] = {'0', '0', hex[2 * k], hex[2 * k + 1], 0};
        uint32_t v;
        if (!hex4(w, &v)) return 0;
        o[k] = (uint8_t)v;
    }
    *n = l / 2;
    return 1;
}

static void run_decode(enc_ctx *c) {
    char rel[256];
    snprintf(rel, sizeof rel, "decode/%s.jsonl", c->name);
    vfile f;
    if (!load_vfile(rel, &f)) return;
    g_shown = 0;
    int p0 = g_pass, f0 = g_fail;
    size_t host_only = 0;
    for (size_t i = 0; i < f.n; i++) {
        const jval *r = &f.rec[i];
        const jval *kind = jget(r, "kind");
        size_t n = 0;
        int ok_ids;
        uint32_t *ids = u32_array(jget(r, "ids"), &n, &ok_ids);
        if (!is_str(kind)) {
            fail(rel, i, "no kind");
        } else if (!strcmp(kind->s, "error")) {
            const jval *e = jget(r, "error");
            if (!ok_ids) { /* OverflowError: an id no uint32_t holds; the host checks it */
                host_only++;
                CHECK(is_str(e) && !strcmp(e->s, "OverflowError"), "%s record %zu: bad id without OverflowError", rel, i);
            } else {
                uint8_t out[4096];
                size_t ol = 0;
                tv_err er = {0}, er2 = {0};
                st_status st = tv_decode(c->enc, ids, n, out, sizeof out, &ol, &er);
                st_status st2 = tv_decode_text(c->enc, ids, n, out, sizeof out, &ol, &er2);
                if (is_str(e) && !strcmp(e->s, "KeyError") && st == ST_ERR_INVALID_TOKEN && st2 == ST_ERR_INVALID_TOKEN &&
                    er.offset < n && er2.offset == er.offset)
                    g_pass++;
                else fail(rel, i, "want %s, decode gave %s, decode_text %s", is_str(e) ? e->s : "?", st_status_str(st),
                          st_status_str(st2));
            }
        } else if (!strcmp(kind->s, "bytes")) {
            const jval *bh = jget(r, "bytes_hex"), *tx = jget(r, "text_replace");
            size_t cap = 64 * n + 64, ol = 0, tl = 0, wl = 0;
            uint8_t *out = (uint8_t *)malloc(cap), *want = (uint8_t *)malloc(cap), *txt = (uint8_t *)malloc(3 * cap);
            tv_err er = {0};
            st_status st = tv_decode(c->enc, ids, n, out, cap, &ol, &er);
            int ok = ok_ids && is_str(bh) && hex_bytes(bh->s, want, &wl) && st == ST_OK && ol == wl && !memcmp(out, want, wl);
            if (ok) g_pass++;
            else fail(rel, i, "decode bytes: status %s, %zu bytes, want %zu", st_status_str(st), ol, wl);
            st = tv_decode_text(c->enc, ids, n, txt, 3 * cap, &tl, &er);
            ok = is_str(tx) && st == ST_OK && tl == tx->slen && !memcmp(txt, tx->s, tl);
            if (ok) g_pass++;
            else fail(rel, i, "decode text: status %s, %zu bytes, want %zu", st_status_str(st), tl, is_str(tx) ? tx->slen : 0);
            free(out);
            free(want);
            free(txt);
        } else if (!strcmp(kind->s, "incremental")) {
            /* per add() the expected chunk; and the whole (chunks + flush) */
            const jval *splits = jget(r, "splits"), *chunks = jget(r, "chunks"), *fin = jget(r, "final");
            int ok = splits && chunks && splits->t == J_ARR && chunks->t == J_ARR && splits->n == chunks->n && is_str(fin);
            tv_decoder d;
            if (tv_decoder_init(&d, c->enc) != ST_OK) {
                fail(rel, i, "st_decoder_new failed");
                free(ids);
                continue;
            }
            size_t cap = 64 * n + 64, got_len = 0, want_len = 0;
            uint8_t *got = (uint8_t *)malloc(cap), *want = (uint8_t *)malloc(cap);
            int same_chunks = 1;
            for (size_t k = 0; ok && k < splits->n; k++) {
                size_t m = 0, ol = 0;
                int okk;
                uint32_t *part = u32_array(&splits->v[k], &m, &okk);
                st_status st = tv_decoder_add(&d, part, m, got + got_len, cap - got_len, &ol);
                free(part);
                ok = okk && st == ST_OK && want_len + chunks->v[k].slen <= cap;
                if (!ok) {
                    fail(rel, i, "incremental add %zu: status %s", k, st_status_str(st));
                    break;
                }
                same_chunks &= ol == chunks->v[k].slen && !memcmp(got + got_len, chunks->v[k].s, ol);
                got_len += ol;
                memcpy(want + want_len, chunks->v[k].s, chunks->v[k].slen);
                want_len += chunks->v[k].slen;
            }
            if (ok) {
                size_t ol = 0;
                st_status st = tv_decoder_flush(&d, got + got_len, cap - got_len, &ol);
                ok = st == ST_OK && want_len + fin->slen <= cap;
                if (ok) {
                    same_chunks &= ol == fin->slen && !memcmp(got + got_len, fin->s, ol);
                    got_len += ol;
                    memcpy(want + want_len, fin->s, fin->slen);
                    want_len += fin->slen;
                    ok = got_len == want_len && !memcmp(got, want, got_len);
                }
                if (!ok) fail(rel, i, "incremental: status %s, the whole text differs (%zu bytes, want %zu)",
                              st_status_str(st), got_len, want_len);
            }
            if (ok && same_chunks) g_pass++;
            else if (ok) fail(rel, i, "incremental: the same text, but not the same chunks per add()");
            tv_decoder_free(&d);
            free(got);
            free(want);
        } else fail(rel, i, "unknown kind %s", kind->s);
        free(ids);
    }
    printf("  vectors/%s: %zu records (checks: %d passed, %d failed; %zu with ids no uint32_t holds: host-side)\n", rel, f.n,
           g_pass - p0, g_fail - f0, host_only);
    free_vfile(&f);
}

/* ==== UBE ====================================================================================== */

static void run_ube_routing(void) {
    const char *rel = "ube/routing.jsonl";
    vfile f;
    if (!load_vfile(rel, &f)) return;
    g_shown = 0;
    int p0 = g_pass, f0 = g_fail;
    for (size_t i = 0; i < f.n; i++) {
        const jval *r = &f.rec[i], *t = jget(r, "text");
        size_t wn = 0, n = 0, ol = 0;
        int ok;
        uint16_t *want = u16_array(jget(r, "symbols"), &wn, &ok);
        if (!ok || !is_str(t)) {
            fail(rel, i, "malformed record");
            free(want);
            continue;
        }
        uint16_t *sym = (uint16_t *)malloc((t->slen + 1) * sizeof *sym);
        st_status st = tv_ube_encode_symbols(t->s, t->slen, sym, t->slen + 1, &n);
        if (st == ST_OK && n == wn && !memcmp(sym, want, n * sizeof *sym)) g_pass++;
        else fail(rel, i, "routing: status %s, %zu symbols, want %zu", st_status_str(st), n, wn);
        uint8_t *out = (uint8_t *)malloc(3 * wn + 4);
        tv_err er = {0};
        st = tv_ube_decode_symbols(want, wn, 1, out, 3 * wn + 4, &ol, &er);
        if (st == ST_OK && ol == t->slen && !memcmp(out, t->s, ol)) g_pass++;
        else fail(rel, i, "decode back (strict): status %s, %zu bytes, want %zu", st_status_str(st), ol, t->slen);
        free(out);
        free(sym);
        free(want);
    }
    printf("  vectors/%s: %zu records (checks: %d passed, %d failed)\n", rel, f.n, g_pass - p0, g_fail - f0);
    free_vfile(&f);
}

static int opt_index(const jval *v, size_t *x) {
    if (!v || v->t == J_NULL) return 0;
    *x = (size_t)v->num;
    return 1;
}

static void run_ube_decode(void) {
    const char *rel = "ube/decode.jsonl";
    vfile f;
    if (!load_vfile(rel, &f)) return;
    g_shown = 0;
    int p0 = g_pass, f0 = g_fail;
    for (size_t i = 0; i < f.n; i++) {
        const jval *r = &f.rec[i], *tx = jget(r, "text_replace");
        size_t n = 0, ol = 0, strict_at = 0, bad_at = 0;
        int ok;
        uint16_t *sym = u16_array(jget(r, "symbols"), &n, &ok);
        int strict_err = opt_index(jget(r, "strict_error_index"), &strict_at);
        int invalid = opt_index(jget(r, "invalid_symbol_index"), &bad_at);
        size_t cap = 3 * n + 4;
        uint8_t *out = (uint8_t *)malloc(cap);
        tv_err er = {0};
        st_status st = tv_ube_decode_symbols(sym, n, 0, out, cap, &ol, &er);
        if (invalid) {
            if (st == ST_ERR_INVALID_TOKEN && er.offset == bad_at) g_pass++;
            else fail(rel, i, "replace: status %s at %zu, want INVALID_TOKEN at %zu", st_status_str(st), er.offset, bad_at);
        } else if (ok && is_str(tx) && st == ST_OK && ol == tx->slen && !memcmp(out, tx->s, ol)) g_pass++;
        else fail(rel, i, "replace: status %s, %zu bytes, want %zu", st_status_str(st), ol, is_str(tx) ? tx->slen : 0);
        tv_err es = {0};
        st = tv_ube_decode_symbols(sym, n, 1, out, cap, &ol, &es);
        if (invalid) {
            if (st == ST_ERR_INVALID_TOKEN && es.offset == bad_at) g_pass++;
            else fail(rel, i, "strict: status %s at %zu, want INVALID_TOKEN at %zu", st_status_str(st), es.offset, bad_at);
        } else if (strict_err) {
            if (st == ST_ERR_INVALID_UTF8 && es.offset == strict_at) g_pass++;
            else fail(rel, i, "strict: status %s at %zu, want INVALID_UTF8 at %zu", st_status_str(st), es.offset, strict_at);
        } else if (st == ST_OK && is_str(tx) && ol == tx->slen && !memcmp(out, tx->s, ol)) g_pass++;
        else fail(rel, i, "strict: status %s, want the text", st_status_str(st));
        free(out);
        free(sym);
    }
    printf("  vectors/%s: %zu records (checks: %d passed, %d failed)\n", rel, f.n, g_pass - p0, g_fail - f0);
    free_vfile(&f);
}

static void run_ube_stream(void) {
    const char *rel = "ube/stream.jsonl";
    vfile f;
    if (!load_vfile(rel, &f)) return;
    g_shown = 0;
    int p0 = g_pass, f0 = g_fail;
    for (size_t i = 0; i < f.n; i++) {
        const jval *r = &f.rec[i], *outs = jget(r, "outputs"), *fl = jget(r, "flush");
        size_t n = 0, ns = 0;
        int ok, oks;
        uint16_t *sym = u16_array(jget(r, "symbols"), &n, &ok);
        uint32_t *splits = u32_array(jget(r, "splits"), &ns, &oks);
        ok = ok && oks && outs && outs->t == J_ARR && outs->n == ns + 1 && is_str(fl);
        st_ube_stream s;
        tv_ube_stream_init(&s);
        size_t cap = 3 * n + 8;
        uint8_t *out = (uint8_t *)malloc(cap);
        size_t from = 0;
        for (size_t k = 0; ok && k <= ns; k++) {
            size_t to = k < ns ? splits[k] : n, ol = 0;
            tv_err er = {0};
            st_status st = to >= from && to <= n ? tv_ube_stream_feed(&s, sym + from, to - from, 0, out, cap, &ol, &er)
                                                 : ST_ERR_INVALID_ARGUMENT;
            ok = st == ST_OK && ol == outs->v[k].slen && !memcmp(out, outs->v[k].s, ol);
            if (!ok) fail(rel, i, "feed %zu: status %s, %zu bytes, want %zu", k, st_status_str(st), ol, outs->v[k].slen);
            from = to;
        }
        if (ok) {
            size_t ol = 0;
            tv_err er = {0};
            st_status st = tv_ube_stream_feed(&s, NULL, 0, 1, out, cap, &ol, &er);
            ok = st == ST_OK && ol == fl->slen && !memcmp(out, fl->s, ol);
            if (ok) g_pass++;
            else fail(rel, i, "flush: status %s, %zu bytes, want %zu", st_status_str(st), ol, fl->slen);
        } else if (!outs || !is_str(fl)) fail(rel, i, "malformed record");
        free(out);
        free(sym);
        free(splits);
    }
    printf("  vectors/%s: %zu records (checks: %d passed, %d failed)\n", rel, f.n, g_pass - p0, g_fail - f0);
    free_vfile(&f);
}

/* ==== models (vectors/models: merge-rules and superword models) ================================ */

/* vectors/models/encode.jsonl and decode.jsonl, for every model they name, loaded from
 * vectors/models/<name>.stmodel. encode: ids and character starts with the listed specials
 * allowed (all others ordinary text); decode: the replace-decoded text, strict mode's result
 * (null, or the index of the id where the first malformed run starts), the incremental
 * decoder's text after each id, and its flush. */
#define TV_MODELS 16
typedef struct tv_model {
    char name[64];
    st_encoding *enc;
    size_t n_specials;
    char *specials[16];
    uint32_t special_ids[16];
} tv_model;

static tv_model *model_of(tv_model *ms, size_t *n_ms, const char *name) {
    for (size_t k = 0; k < *n_ms; k++)
        if (!strcmp(ms[k].name, name)) return ms[k].enc ? &ms[k] : NULL;
    if (*n_ms == TV_MODELS || strlen(name) >= sizeof ms[0].name) return NULL;
    tv_model *m = &ms[(*n_ms)++];
    memset(m, 0, sizeof *m);
    strcpy(m->name, name);
    char path[4096];
    snprintf(path, sizeof path, "%s/vectors/models/%s.stmodel", g_root, name);
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text) {
        CHECK(0, "cannot read %s", path);
        return NULL;
    }
    st_status st = tv_encoding_new_model(text, len, &m->enc);
    free(text);
    CHECK(st == ST_OK, "load %s: %s", path, st_status_str(st));
    if (st != ST_OK) return NULL;
    size_t ns = tv_n_special(m->enc);
    for (size_t k = 0; k < ns && k < 16; k++) {
        const uint8_t *p;
        size_t l;
        m->special_ids[k] = tv_special_id(m->enc, k);
        if (tv_token_bytes(m->enc, m->special_ids[k], &p, &l) != ST_OK) continue;
        m->specials[m->n_specials] = (char *)malloc(l + 1);
        memcpy(m->specials[m->n_specials], p, l);
        m->specials[m->n_specials][l] = 0;
        m->special_ids[m->n_specials++] = m->special_ids[k];
    }
    return m;
}

static void run_models(void) {
    tv_model ms[TV_MODELS];
    size_t n_ms = 0;
    const char *rel = "models/encode.jsonl";
    vfile f;
    if (load_vfile(rel, &f)) {
        g_shown = 0;
        int p0 = g_pass, f0 = g_fail;
        for (size_t i = 0; i < f.n; i++) {
            const jval *r = &f.rec[i], *name = jget(r, "model"), *t = jget(r, "text"), *starts_v = jget(r, "starts");
            tv_model *m = is_str(name) ? model_of(ms, &n_ms, name->s) : NULL;
            if (!m || !is_str(t)) {
                fail(rel, i, "no model or no text");
                continue;
            }
            tv_strs allowed, none = {0, 0, NULL};
            strs_of(jget(r, "allowed"), &allowed);
            st_special_policy pol;
            char *pol_strings;
            size_t *pol_ends;
            tv_special_policy(&allowed, &none, &pol, &pol_strings, &pol_ends);
            size_t cap = t->slen + 1, n = 0, want_n = 0;
            uint32_t *ids = (uint32_t *)malloc(cap * sizeof *ids);
            size_t *starts = (size_t *)malloc(cap * sizeof *starts);
            tv_err er = {0};
            st_status st = tv_encode(m->enc, t->s, t->slen, &pol, ids, starts, cap, &n, &er);
            int ok_w = 1;
            uint32_t *want = u32_array(jget(r, "ids"), &want_n, &ok_w);
            int ok = ok_w && st == ST_OK && n == want_n && memcmp(ids, want, n * sizeof *ids) == 0;
            if (!ok) {
                size_t k = 0;
                while (k < n && k < want_n && ids[k] == want[k]) k++;
                fail(rel, i, "%s: status %s, %zu ids, want %zu; first difference at %zu (%u, want %u)", m->name,
                     st_status_str(st), n, want_n, k, k < n ? ids[k] : 0, k < want_n ? want[k] : 0);
            } else g_pass++;
            if (ok && starts_v) {
                int sok = starts_v->t == J_ARR && starts_v->n == n;
                for (size_t k = 0; sok && k < n; k++) sok = starts[k] == (size_t)starts_v->v[k].num;
                if (sok) g_pass++;
                else fail(rel, i, "%s: char starts differ", m->name);
            }
            free(want);
            free(ids);
            free(starts);
            free(pol_strings);
            free(pol_ends);
            free(allowed.s);
        }
        printf("  vectors/%s: %zu records (checks: %d passed, %d failed)\n", rel, f.n, g_pass - p0, g_fail - f0);
        free_vfile(&f);
    }
    rel = "models/decode.jsonl";
    if (load_vfile(rel, &f)) {
        g_shown = 0;
        int p0 = g_pass, f0 = g_fail;
        for (size_t i = 0; i < f.n; i++) {
            const jval *r = &f.rec[i], *name = jget(r, "model"), *t = jget(r, "text"), *se = jget(r, "strict_error");
            const jval *stream = jget(r, "stream"), *fl = jget(r, "flush");
            tv_model *m = is_str(name) ? model_of(ms, &n_ms, name->s) : NULL;
            size_t n = 0;
            int ok_ids = 1;
            uint32_t *ids = u32_array(jget(r, "ids"), &n, &ok_ids);
            if (!m || !is_str(t) || !ok_ids || !stream || stream->t != J_ARR || stream->n != n || !is_str(fl) || !se) {
                fail(rel, i, "a record this reader does not understand");
                free(ids);
                continue;
            }
            size_t cap = 64 * n + 64, ol = 0;
            uint8_t *out = (uint8_t *)malloc(cap);
            tv_err er = {0};
            st_status st = tv_decode_text_mode(m->enc, ids, n, 0, out, cap, &ol, &er);
            if (st == ST_OK && ol == t->slen && !memcmp(out, t->s, ol)) g_pass++;
            else fail(rel, i, "%s: decode: status %s, %zu bytes, want %zu", m->name, st_status_str(st), ol, t->slen);
            st = tv_decode_text_mode(m->enc, ids, n, 1, out, cap, &ol, &er);
            if (se->t == J_NULL ? st == ST_OK && ol == t->slen && !memcmp(out, t->s, ol)
                                : st == ST_ERR_INVALID_UTF8 && er.offset == (size_t)se->num)
                g_pass++;
            else fail(rel, i, "%s: strict decode: status %s at %zu", m->name, st_status_str(st), er.offset);
            tv_decoder d;
            if (tv_decoder_init(&d, m->enc) != ST_OK) {
                fail(rel, i, "st_decoder_new failed");
            } else {
                int ok = 1;
                for (size_t k = 0; ok && k < n; k++) {
                    st = tv_decoder_add(&d, ids + k, 1, out, cap, &ol);
                    ok = st == ST_OK && is_str(&stream->v[k]) && ol == stream->v[k].slen && !memcmp(out, stream->v[k].s, ol);
                    if (!ok) fail(rel, i, "%s: stream: id %zu gives other text (status %s)", m->name, k, st_status_str(st));
                }
                if (ok) {
                    st = tv_decoder_flush(&d, out, cap, &ol);
                    ok = st == ST_OK && ol == fl->slen && !memcmp(out, fl->s, ol);
                    if (!ok) fail(rel, i, "%s: stream: the flush differs", m->name);
                }
                if (ok) g_pass++;
                tv_decoder_free(&d);
            }
            free(out);
            free(ids);
        }
        printf("  vectors/%s: %zu records (checks: %d passed, %d failed)\n", rel, f.n, g_pass - p0, g_fail - f0);
        free_vfile(&f);
    }
    for (size_t k = 0; k < n_ms; k++) {
        printf("  model %s: %s\n", ms[k].name, ms[k].enc ? "loaded" : "NOT LOADED");
        tv_encoding_free(ms[k].enc);
        for (size_t j = 0; j < ms[k].n_specials; j++) free(ms[k].specials[j]);
    }
}

/* vectors/tokenizer_json/cases.jsonl: each model from vectors/tokenizer_json/<model>.json and from
 * its compact image; ids with every added token matched (all specials allowed), ids with the
 * special ones as text (no policy), and the decode (replace) of the first. */
static void run_tokenizer_json(void) {
    static const char *const F = "tokenizer_json/cases.jsonl";
    vfile f;
    g_shown = 0;
    int before = g_fail, checked = 0;
    if (!load_vfile(F, &f)) return;
    char loaded[128] = "";
    st_encoding *enc[2] = {NULL, NULL}; /* from the file, from its image */
    for (size_t i = 0; i < f.n; i++) {
        const jval *r = &f.rec[i], *model = jget(r, "model"), *text = jget(r, "text"), *decoded = jget(r, "decoded");
        if (!is_str(model) || !is_str(text) || !is_str(decoded) || model->slen >= 64) { fail(F, i, "a malformed record"); continue; }
        if (strcmp(loaded, model->s)) {
            for (int k = 0; k < 2; k++) { if (enc[k]) tv_encoding_free(enc[k]); enc[k] = NULL; }
            snprintf(loaded, sizeof loaded, "%s", model->s);
            char path[4096];
            snprintf(path, sizeof path, "%s/vectors/tokenizer_json/%s.json", g_root, model->s);
            size_t len = 0;
            char *d = read_file(path, &len);
            tv_err err;
            if (!d || tv_encoding_new_tokenizer_json(d, len, &enc[0], &err) != ST_OK) {
                fail(F, i, "%s does not load", path);
                free(d);
                continue;
            }
            free(d);
            size_t n = 0;
            tv_save_compact(enc[0], NULL, 0, &n);
            uint8_t *img = (uint8_t *)malloc(n ? n : 1);
            if (tv_save_compact(enc[0], img, n, &n) != ST_OK || tv_encoding_new_tokenizer_json((const char *)img, n, &enc[1], &err) != ST_OK)
                fail(F, i, "the compact image of %s does not load", model->s);
            free(img);
        }
        for (int k = 0; k < 2; k++) {
            if (!enc[k]) continue;
            const char *how = k ? "its compact image" : "the file";
            for (int as_text = 0; as_text < 2; as_text++) {
                size_t nw = 0, n = 0;
                int ok;
                uint32_t *want = u32_array(jget(r, as_text ? "ids_specials_as_text" : "ids"), &nw, &ok);
                uint32_t *ids = (uint32_t *)malloc((text->slen + 1) * sizeof *ids);
                st_special_policy all = {NULL, 0, NULL, 0, ST_SPECIAL_ALLOW_ALL, NULL, NULL};
                tv_err err;
                st_status st = tv_encode(enc[k], text->s, text->slen, as_text ? NULL : &all, ids, NULL, text->slen + 1, &n, &err);
                if (!ok || st != ST_OK || n != nw || memcmp(ids, want, n * sizeof *ids))
                    fail(F, i, "%s, %s (%s): the ids differ (%s: %zu ids, want %zu)", model->s, how,
                         as_text ? "special tokens as text" : "every added token matched", st_status_name(st), n, nw);
                else g_pass++;
                if (!as_text && st == ST_OK) {
                    size_t dl = 0;
                    uint8_t *out = (uint8_t *)malloc(4 * decoded->slen + 64);
                    if (tv_decode_text(enc[k], want, nw, out, 4 * decoded->slen + 64, &dl, &err) != ST_OK ||
                        dl != decoded->slen || memcmp(out, decoded->s, dl))
                        fail(F, i, "%s, %s: the decode differs", model->s, how);
                    else g_pass++;
                    free(out);
                }
                free(ids);
                free(want);
            }
        }
        checked++;
    }
    for (int k = 0; k < 2; k++) if (enc[k]) tv_encoding_free(enc[k]);
    printf("%s: %d records (each from the file and its compact image), %d failed checks\n", F, checked, g_fail - before);
    free_vfile(&f);
}

int main(int argc, char **argv) {
    if (argc > 1) g_root = argv[1];
    printf("test_vectors: %s/vectors through the C API\n", g_root);
    static const char *const pre[] = {"gpt2.jsonl", "cl100k.jsonl", "o200k.jsonl", "script_aware.jsonl",
                                               "superbpe.jsonl", "llama3.jsonl", "qwen2.jsonl",
                                               "deepseek_v3.jsonl"};
    for (size_t k = 0; k < sizeof pre / sizeof pre[0]; k++) run_pretokenize(pre[k]);
    static const char *const encs[] = {"r50k_base", "p50k_base", "cl100k_base", "o200k_base"};
    for (size_t k = 0; k < sizeof encs / sizeof encs[0]; k++) {
        enc_ctx c;
        if (load_enc(&c, encs[k])) {
            run_encode(&c);
            run_decode(&c);
        }
        free_enc(&c);
    }
    run_ube_routing();
    run_ube_decode();
    run_ube_stream();
    run_models();
    run_tokenizer_json();
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
