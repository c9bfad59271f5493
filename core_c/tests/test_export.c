// Exports to other libraries' formats and the model writer from fields (docs/formats/export.md):
//
//   test_export [py/supertok/vocab]
//
// - st_encoding_export: a tiktoken rank file written back byte for byte (r50k_base, read from the
//   vocab folder when present, and a small rank file here); a tokenizer.json that json_reader.h
//   parses back to the model's tokens (vocab through the GPT-2 byte map), merges, pattern and
//   specials, for fixed models and random ones (random rules, specials of random bytes with every
//   control character); the layout of json.dumps(indent=1) checked on a small model;
// - which tokens go: a special sharing an ordinary id is that token, duplicate bytes stay out
//   (st_encoding_duplicate_tokens lists them), gaps of a rank file are skipped;
// - refusals: UBE, supermerges, script-aware, a rank vocabulary to hf, an unknown format, NULLs,
//   with their kinds and nothing written;
// - every cap from 0 to the size: ST_ERR_BUFFER_TOO_SMALL with the size, nothing written past cap
//   (the buffers are exactly cap bytes, so AddressSanitizer sees a write past them);
// - an allocator that fails: ST_ERR_OUT_OF_MEMORY, no leak;
// - st_model_write_rules: the canonical text (st_model_write writes it back), specials sorted by
//   id (stably), escapes; a name or a comment that would break a line refused with its input.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_reader.h"
#include "supertok.h"

static const char *g_vocab = "py/supertok/vocab";

/* ---- helpers ------------------------------------------------------------------------------ */

static st_pretokenizer *pretok(int pattern, uint32_t flags) {
    st_pretokenizer *pt = NULL;
    CHECK(st_pretokenizer_new(pattern, flags, NULL, 0, NULL, &pt, NULL) == ST_OK, "pretokenizer");
    return pt;
}

static st_encoding *rules(int alphabet, const uint32_t *merges, size_t n, const char *specials, int pattern) {
    st_pretokenizer *pt = pretok(pattern, 0);
    st_encoding *enc = NULL;
    st_error e;
    st_status st = st_encoding_new_merges(alphabet, merges, n, specials, specials ? strlen(specials) : 0, pt, NULL,
                                          &enc, &e);
    CHECK(st == ST_OK, "new_merges: %d %s", st, e.message);
    st_pretokenizer_free(pt);
    return enc;
}

static st_encoding *model(const char *text) {
    st_encoding *enc = NULL;
    st_error e;
    st_status st = st_encoding_new_model(text, strlen(text), NULL, &enc, &e);
    CHECK(st == ST_OK, "new_model: %d %s", st, e.message);
    return enc;
}

/* The export (malloc'd, NUL-terminated, *len bytes), checked against every cap below its size:
 * ST_ERR_BUFFER_TOO_SMALL with the full size and nothing written past cap. NULL on a refusal. */
static char *export_all_caps(const st_encoding *enc, int format, size_t *len, int every_cap) {
    size_t n = 12345;
    st_error e;
    st_status st = st_encoding_export(enc, format, NULL, 0, &n, &e);
    if (st != ST_ERR_BUFFER_TOO_SMALL) {
        CHECK(st != ST_OK, "a size query of a non-empty export is too small");
        return NULL;
    }
    CHECK(e.status == ST_ERR_BUFFER_TOO_SMALL, "err status %u", e.status);
    size_t step = every_cap ? 1 : n / 97 + 1;
    for (size_t cap = 1; cap < n; cap += step) {
        char *small = (char *)malloc(cap); /* exactly cap: ASan sees a write past it */
        size_t got = 0;
        st = st_encoding_export(enc, format, small, cap, &got, &e);
        CHECK(st == ST_ERR_BUFFER_TOO_SMALL && got == n, "cap %zu: %d %zu of %zu", cap, st, got, n);
        free(small);
    }
    char *out = (char *)malloc(n + 1);
    size_t got = 0;
    st = st_encoding_export(enc, format, out, n, &got, &e);
    CHECK(st == ST_OK && got == n, "export: %d %zu of %zu", st, got, n);
    out[n] = 0;
    *len = n;
    /* the same text when the buffer is larger */
    char *big = (char *)malloc(n + 64);
    memset(big, '#', n + 64);
    CHECK(st_encoding_export(enc, format, big, n + 64, &got, NULL) == ST_OK && got == n && !memcmp(big, out, n) &&
              big[n] == '#',
          "export into a larger buffer");
    free(big);
    return out;
}

static int has(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* GPT-2's byte-level map (bytes_to_unicode): the code point standing for each byte. */
static uint32_t byte_cp(uint32_t b) {
    uint32_t extra = 0;
    for (uint32_t x = 0; x < b; x++)
        if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174)) extra++;
    return ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) ? b : 256 + extra;
}

/* The byte-level string of bytes, UTF-8, into o (room for 2 bytes a byte); its length. */
static size_t byte_string(const uint8_t *p, size_t n, char *o) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += put_utf8(o + k, byte_cp(p[i]));
    return k;
}

/* The parsed tokenizer.json holds exactly the encoding: its vocab the ordinary tokens that go (each
 * string the byte-level form of the token's bytes), its merges the rules' parts, its added
 * tokens the specials by id, its pattern the regex the core knows. */
static void check_hf(const st_encoding *enc, const char *json, size_t len, const uint32_t *merges, size_t n_merges,
                     const char *label) {
    jparser j = {json, json + len, 0};
    jval root;
    jparse(&j, &root, 0);
    jws(&j);
    CHECK(!j.bad && j.p == j.end && root.t == J_OBJ, "%s: the export parses as one JSON object", label);
    if (j.bad || root.t != J_OBJ) return;
    const jval *m = jget(&root, "model"), *vocab = m ? jget(m, "vocab") : NULL, *mg = m ? jget(m, "merges") : NULL;
    const jval *added = jget(&root, "added_tokens");
    CHECK(vocab && vocab->t == J_OBJ && mg && mg->t == J_ARR && added && added->t == J_ARR, "%s: fields", label);
    if (!vocab || !mg || !added) {
        jfree(&root);
        return;
    }
    size_t s_cap = 1 << 16;
    char *s = (char *)malloc(s_cap);
    size_t expect = 0;
    uint32_t n_vocab = st_encoding_n_vocab(enc);
    for (uint32_t id = 0; id < n_vocab; id++) {
        const uint8_t *p;
        size_t n;
        uint32_t first;
        if (!st_token_is_ordinary(enc, id) || st_token_bytes(enc, id, &p, &n, NULL) != ST_OK) continue;
        if (st_token_id(enc, p, n, &first, NULL) == ST_OK && first < id) continue; /* a duplicate */
        if (2 * n + 1 > s_cap) s = (char *)realloc(s, s_cap = 2 * n + 1);
        size_t sl = byte_string(p, n, s);
        int found = 0;
        for (size_t k = expect; k < vocab->n && !found; k++) /* in id order: the next entries */
            if (vocab->keys[k] && strlen(vocab->keys[k]) == sl && !memcmp(vocab->keys[k], s, sl) &&
                vocab->v[k].t == J_NUM && vocab->v[k].num == id) {
                found = 1;
                expect = k + 1;
            }
        CHECK(found, "%s: vocab entry of id %u", label, id);
    }
    CHECK(expect == vocab->n, "%s: %zu vocab entries, %zu expected", label, vocab->n, expect);
    CHECK(mg->n == n_merges, "%s: %zu merges", label, mg->n);
    for (size_t i = 0; i < mg->n && i < n_merges; i++) {
        const jval *pair = &mg->v[i];
        int ok = pair->t == J_ARR && pair->n == 2;
        for (int side = 0; ok && side < 2; side++) {
            const uint8_t *p;
            size_t n;
            ok = st_token_bytes(enc, merges[2 * i + side], &p, &n, NULL) == ST_OK && pair->v[side].t == J_STR;
            if (ok && 2 * n + 1 > s_cap) s = (char *)realloc(s, s_cap = 2 * n + 1);
            size_t sl = ok ? byte_string(p, n, s) : 0;
            ok = ok && pair->v[side].slen == sl && !memcmp(pair->v[side].s, s, sl);
        }
        CHECK(ok, "%s: merges[%zu]", label, i);
    }
    uint32_t n_special = st_encoding_n_special(enc);
    CHECK(added->n == n_special, "%s: %zu added tokens of %u", label, added->n, n_special);
    for (uint32_t k = 0; k < n_special && k < added->n; k++) {
        uint32_t id = st_encoding_special_id(enc, k);
        const uint8_t *p;
        size_t n;
        st_token_bytes(enc, id, &p, &n, NULL);
        const jval *c = jget(&added->v[k], "content"), *i = jget(&added->v[k], "id");
        CHECK(c && c->t == J_STR && c->slen == n && !memcmp(c->s, p, n) && i && i->num == id, "%s: added token %u",
              label, k);
    }
    free(s);
    jfree(&root);
}

/* ---- tiktoken ------------------------------------------------------------------------------ */

static void test_tiktoken(void) {
    /* ranks with a gap (id 3) and specials: the file is the tokens in id order, the gap skipped */
    const char *ranks = "YQ== 0\nYg== 1\nYWI= 2\nIA== 4\n";
    const char *specials = "PHxlbmR8Pg== 5\n";
    st_pretokenizer *pt = pretok(ST_PATTERN_O200K, 0);
    st_encoding *enc = NULL;
    CHECK(st_encoding_new_tiktoken(ranks, strlen(ranks), specials, strlen(specials), pt, NULL, &enc, NULL) == ST_OK,
          "ranks");
    size_t n;
    char *out = export_all_caps(enc, ST_EXPORT_TIKTOKEN, &n, 1);
    CHECK(out && !strcmp(out, ranks), "rank file written back: %s", out ? out : "(null)");
    free(out);
    /* tokenizer.json needs rules */
    st_error e;
    char buf[8] = "#######";
    size_t got = 99;
    CHECK(st_encoding_export(enc, ST_EXPORT_HF_JSON, buf, sizeof buf, &got, &e) == ST_ERR_INVALID_ARGUMENT &&
              e.kind == ST_KIND_EXPORT_NO_RULES && got == 0 && buf[0] == '#',
          "hf of ranks: %u", e.kind);
    CHECK(!strcmp(st_error_kind_name(ST_KIND_EXPORT_NO_RULES), "ST_KIND_EXPORT_NO_RULES"), "kind name");
    uint32_t pairs[2];
    CHECK(st_encoding_duplicate_tokens(enc, pairs, 1, &got, NULL) == ST_OK && got == 0, "no duplicates in ranks");
    st_encoding_free(enc);

    /* a shipped rank file goes back out byte for byte */
    char path[4096];
    snprintf(path, sizeof path, "%s/r50k_base.tiktoken", g_vocab);
    size_t len;
    char *file = read_file(path, &len);
    if (!file) {
        printf("  %s absent, skipped\n", path);
    } else {
        CHECK(st_encoding_new_tiktoken(file, len, "", 0, pt, NULL, &enc, NULL) == ST_OK, "r50k_base");
        out = export_all_caps(enc, ST_EXPORT_TIKTOKEN, &n, 0);
        CHECK(out && n == len && !memcmp(out, file, len), "r50k_base written back byte for byte");
        free(out);
        st_encoding_free(enc);
        free(file);
    }
    st_pretokenizer_free(pt);
}

/* ---- tokenizer.json ----------------------------------------------------------------------- */

static void test_hf_json(void) {
    /* the rules a b, c d, ab c, abc d; specials with JSON's escapes */
    static const uint32_t m[] = {'a', 'b', 'c', 'd', 256, 'c', 258, 'd'};
    const char *specials = "PHxlbmR8Pg== 260\nIlwKHw== 261\n"; /* <|end|>, and " \\ LF 0x1F */
    st_encoding *enc = rules(ST_ALPHABET_BYTES, m, 4, specials, ST_PATTERN_GPT2);
    size_t n;
    char *out = export_all_caps(enc, ST_EXPORT_HF_JSON, &n, 1);
    CHECK(out != NULL, "hf export");
    if (out) {
        /* json.dumps(obj, ensure_ascii=False, indent=1) + "\n" (Python's json module wrote these
         * pieces for the same object) */
        CHECK(!strncmp(out, "{\n \"version\": \"1.0\",\n \"truncation\": null,\n \"padding\": null,\n \"added_tokens\": [\n  {\n"
                            "   \"id\": 260,\n   \"content\": \"<|end|>\",\n   \"single_word\": false,\n",
                       120),
              "the head: %.200s", out);
        CHECK(has(out, "   \"content\": \"\\\"\\\\\\n\\u001f\",\n"), "a special's escapes");
        CHECK(has(out, "\"pattern\": {\n     \"Regex\": \"'(?:[sdmt]|ll|ve|re)| ?\\\\p{L}++| ?\\\\p{N}++"),
              "the pattern, backslashes escaped");
        CHECK(has(out, "\"vocab\": {\n   \"\xc4\x80\": 0,\n   \"\xc4\x81\": 1,\n"), "vocab: byte 0 is U+0100");
        CHECK(has(out, "\n   \"!\": 33,\n   \"\\\"\": 34,\n"), "vocab: '!' itself, a quote escaped");
        CHECK(has(out, "\n   \"\\\\\": 92,\n"), "vocab: the backslash escaped");
        CHECK(has(out, "\n   \"abcd\": 259\n  },\n  \"merges\": [\n   [\n    \"a\",\n    \"b\"\n   ],\n"),
              "vocab end, merges start");
        const char *tail = "   [\n    \"abc\",\n    \"d\"\n   ]\n  ]\n }\n}\n";
        CHECK(n > strlen(tail) && !strcmp(out + n - strlen(tail), tail), "the last merge and the end");
        check_hf(enc, out, n, m, 4, "abcd");
    }
    free(out);
    st_encoding_free(enc);

    /* no rules, no specials: empty containers as json.dumps writes them */
    enc = rules(ST_ALPHABET_BYTES, NULL, 0, NULL, ST_PATTERN_O200K);
    out = export_all_caps(enc, ST_EXPORT_HF_JSON, &n, 0);
    CHECK(out && has(out, "\"added_tokens\": [],\n") && has(out, "  \"merges\": []\n }\n}\n"), "empty containers");
    if (out) check_hf(enc, out, n, NULL, 0, "empty");
    free(out);
    st_encoding_free(enc);
}

static void test_tokens_that_go(void) {
    /* two rules make "abc" (258 and 259): 259 stays out, its merge's parts keep their strings */
    static const uint32_t m[] = {'a', 'b', 'b', 'c', 256, 'c', 'a', 257};
    st_encoding *enc = rules(ST_ALPHABET_BYTES, m, 4, NULL, ST_PATTERN_O200K);
    uint32_t pairs[4] = {0};
    size_t n = 0;
    st_error e;
    CHECK(st_encoding_duplicate_tokens(enc, NULL, 0, &n, &e) == ST_ERR_BUFFER_TOO_SMALL && n == 1, "size query");
    CHECK(st_encoding_duplicate_tokens(enc, pairs, 2, &n, &e) == ST_OK && n == 1 && pairs[0] == 259 &&
              pairs[1] == 258,
          "duplicates: %u %u", pairs[0], pairs[1]);
    CHECK(st_encoding_duplicate_tokens(enc, NULL, 1, &n, &e) == ST_ERR_INVALID_ARGUMENT, "NULL pairs with a cap");
    char *out = export_all_caps(enc, ST_EXPORT_TIKTOKEN, &n, 0);
    CHECK(out && has(out, "YWJj 258\n") && !has(out, " 259\n"), "tiktoken leaves 259 out");
    free(out);
    out = export_all_caps(enc, ST_EXPORT_HF_JSON, &n, 0);
    CHECK(out && has(out, "\"abc\": 258\n") && !has(out, ": 259"), "hf leaves 259 out");
    if (out) check_hf(enc, out, n, m, 4, "duplicates");
    free(out);
    st_encoding_free(enc);

    /* a special sharing an ordinary id is that token too (hf training makes them) */
    enc = model("supertok-model 1\nname m\nkind rules\nalphabet bytes\npattern o200k\nscript-aware no\n"
                "merges 2\n97 98\n256 99\nspecials 2\n97 a\n258 <|x|>\nend\n");
    out = export_all_caps(enc, ST_EXPORT_TIKTOKEN, &n, 0);
    CHECK(out && has(out, "\nYQ== 97\n") && has(out, "YWJj 257\n") && !has(out, " 258\n"), "shared special");
    free(out);
    out = export_all_caps(enc, ST_EXPORT_HF_JSON, &n, 0);
    CHECK(out && has(out, "\n   \"a\": 97,\n") && has(out, "\"id\": 97,\n   \"content\": \"a\""), "shared special, hf");
    free(out);
    st_encoding_free(enc);
}

static void test_refusals(void) {
    static const uint32_t m[] = {'a', 'b'};
    struct {
        st_encoding *enc;
        uint32_t kind;
        const char *what;
    } cases[] = {
        {rules(ST_ALPHABET_UBE, m, 1, NULL, ST_PATTERN_O200K), ST_KIND_EXPORT_UBE, "ube"},
        {model("supertok-model 1\nname s\nkind rules\nalphabet bytes\npattern o200k\nscript-aware no\nmerges 1\n"
               "97 98\nsupermerges 1\n256 256\nspecials 0\nend\n"),
         ST_KIND_EXPORT_SUPERMERGES, "supermerges"},
        {model("supertok-model 1\nname s\nkind rules\nalphabet bytes\npattern o200k\nscript-aware yes\nscripts default\n"
               "merges 1\n97 98\nspecials 0\nend\n"),
         ST_KIND_EXPORT_SCRIPT_AWARE, "script-aware"},
        /* UBE comes first, then supermerges */
        {model("supertok-model 1\nname s\nkind rules\nalphabet ube\npattern o200k\nscript-aware yes\nscripts default\n"
               "merges 1\n97 98\nsupermerges 1\n512 512\nspecials 0\nend\n"),
         ST_KIND_EXPORT_UBE, "all three"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int format = ST_EXPORT_TIKTOKEN; format <= ST_EXPORT_HF_JSON; format++) {
            char buf[16];
            memset(buf, '#', sizeof buf);
            size_t n = 99;
            st_error e;
            st_status st = st_encoding_export(cases[c].enc, format, buf, sizeof buf, &n, &e);
            CHECK(st == ST_ERR_INVALID_ARGUMENT && e.status == ST_ERR_INVALID_ARGUMENT && e.kind == cases[c].kind &&
                      e.message[0] && n == 0 && buf[0] == '#' && buf[15] == '#',
                  "%s format %d: %d kind %u", cases[c].what, format, st, e.kind);
        }
        st_encoding_free(cases[c].enc);
    }
    st_encoding *enc = rules(ST_ALPHABET_BYTES, m, 1, NULL, ST_PATTERN_O200K);
    size_t n;
    st_error e;
    char buf[4];
    for (int format = -1; format <= 4; format += 1) {
        if (format == ST_EXPORT_TIKTOKEN || format == ST_EXPORT_HF_JSON) continue;
        CHECK(st_encoding_export(enc, format, NULL, 0, &n, &e) == ST_ERR_INVALID_ARGUMENT && e.kind == ST_KIND_NONE,
              "format %d", format);
    }
    CHECK(st_encoding_export(NULL, ST_EXPORT_TIKTOKEN, NULL, 0, &n, &e) == ST_ERR_INVALID_ARGUMENT, "NULL enc");
    CHECK(st_encoding_export(enc, ST_EXPORT_TIKTOKEN, NULL, 0, NULL, &e) == ST_ERR_INVALID_ARGUMENT, "NULL len");
    CHECK(st_encoding_export(enc, ST_EXPORT_TIKTOKEN, NULL, 4, &n, &e) == ST_ERR_INVALID_ARGUMENT, "NULL out, cap 4");
    CHECK(st_encoding_export(enc, ST_EXPORT_TIKTOKEN, buf, 4, &n, NULL) == ST_ERR_BUFFER_TOO_SMALL, "NULL err");
    CHECK(st_encoding_duplicate_tokens(NULL, NULL, 0, &n, &e) == ST_ERR_INVALID_ARGUMENT, "duplicates of NULL");
    st_encoding_free(enc);
}

/* ---- random models ------------------------------------------------------------------------- */

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng % n);
}

static void base64(const uint8_t *p, size_t n, char *o) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        o[k++] = t[v >> 18];
        o[k++] = t[(v >> 12) & 63];
        o[k++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
        o[k++] = i + 2 < n ? t[v & 63] : '=';
    }
    o[k] = 0;
}

static void test_random_models(int rounds) {
    for (int r = 0; r < rounds; r++) {
        size_t n = rnd(60);
        uint32_t *m = (uint32_t *)malloc(2 * (n + 1) * sizeof(uint32_t));
        for (size_t i = 0; i < n; i++) { /* parts below the rule's id; repeats refused: retry */
            m[2 * i] = rnd(256 + (uint32_t)i);
            m[2 * i + 1] = rnd(256 + (uint32_t)i);
            for (size_t k = 0; k < i; k++)
                if (m[2 * k] == m[2 * i] && m[2 * k + 1] == m[2 * i + 1]) {
                    m[2 * i + 1] = (m[2 * i + 1] + 1) % (256 + (uint32_t)i);
                    k = (size_t)-1;
                }
        }
        /* specials of random valid UTF-8 (control characters, quotes and backslashes likely) */
        char specials[4096];
        size_t sl = 0;
        uint32_t ns = rnd(4);
        for (uint32_t s = 0; s < ns; s++) {
            uint8_t text[16];
            size_t tl = 0, want = 1 + rnd(6);
            while (tl < want) {
                uint32_t kind = rnd(4);
                uint32_t cp = kind == 0 ? rnd(0x20) : kind == 1 ? (rnd(2) ? '"' : '\\') : kind == 2 ? 0x20 + rnd(0x60)
                                                                                                     : 0x80 + rnd(0x3000);
                tl += put_utf8((char *)text + tl, cp);
            }
            char b[64];
            base64(text, tl, b);
            sl += (size_t)snprintf(specials + sl, sizeof specials - sl, "%s %u\n", b, 256 + (unsigned)n + s);
        }
        specials[sl] = 0;
        st_pretokenizer *pt = pretok(1 + (int)rnd(3), 0);
        st_encoding *enc = NULL;
        if (st_encoding_new_merges(ST_ALPHABET_BYTES, m, n, specials, sl, pt, NULL, &enc, NULL) == ST_OK) {
            size_t len;
            char *out = export_all_caps(enc, ST_EXPORT_HF_JSON, &len, r < 3);
            if (out) check_hf(enc, out, len, m, n, "random");
            free(out);
            out = export_all_caps(enc, ST_EXPORT_TIKTOKEN, &len, 0);
            /* the rank file loads back to the same bytes for every id it holds */
            st_encoding *back = NULL;
            CHECK(out && st_encoding_new_tiktoken(out, len, "", 0, pt, NULL, &back, NULL) == ST_OK,
                  "the rank file loads");
            if (back) {
                for (uint32_t id = 0; id < 256 + n; id++) {
                    const uint8_t *a, *b;
                    size_t al, bl;
                    uint32_t first;
                    st_token_bytes(enc, id, &a, &al, NULL);
                    if (st_token_id(enc, a, al, &first, NULL) == ST_OK && first < id) continue;
                    CHECK(st_token_bytes(back, id, &b, &bl, NULL) == ST_OK && al == bl && !memcmp(a, b, al),
                          "rank file id %u", id);
                }
                st_encoding_free(back);
            }
            free(out);
            st_encoding_free(enc);
        }
        st_pretokenizer_free(pt);
        free(m);
    }
}

/* ---- allocation failures ------------------------------------------------------------------- */

typedef struct budget {
    long left; /* allocations that succeed; -1 for all */
    long live;
} budget;

static void *b_alloc(void *ctx, size_t size) {
    budget *b = (budget *)ctx;
    if (b->left == 0) return NULL;
    if (b->left > 0) b->left--;
    b->live++;
    return malloc(size);
}
static void b_free(void *ctx, void *p, size_t size) {
    (void)size;
    ((budget *)ctx)->live--;
    free(p);
}

static void test_out_of_memory(void) {
    static const uint32_t m[] = {'a', 'b', 256, 'c'};
    budget b = {-1, 0};
    st_allocator a = {b_alloc, b_free, &b};
    st_pretokenizer *pt = pretok(ST_PATTERN_O200K, 0);
    st_encoding *enc = NULL;
    CHECK(st_encoding_new_merges(ST_ALPHABET_BYTES, m, 2, "PHw+ 258\n", 9, pt, &a, &enc, NULL) == ST_OK, "enc");
    long live = b.live;
    b.left = 0;
    size_t n;
    st_error e;
    CHECK(st_encoding_export(enc, ST_EXPORT_HF_JSON, NULL, 0, &n, &e) == ST_ERR_OUT_OF_MEMORY &&
              e.status == ST_ERR_OUT_OF_MEMORY,
          "hf without memory");
    CHECK(b.live == live, "nothing leaked");
    b.left = 1; /* the specials' order, not the rules' pairs */
    CHECK(st_encoding_export(enc, ST_EXPORT_HF_JSON, NULL, 0, &n, &e) == ST_ERR_OUT_OF_MEMORY && b.live == live,
          "hf with one allocation");
    CHECK(st_encoding_export(enc, ST_EXPORT_TIKTOKEN, NULL, 0, &n, &e) == ST_ERR_BUFFER_TOO_SMALL,
          "tiktoken allocates nothing");
    b.left = -1;
    st_encoding_free(enc);
    st_pretokenizer_free(pt);
}

/* ---- st_model_write_rules ----------------------------------------------------------------- */

static st_status write_rules(const char *name, size_t name_len, int alphabet, int pattern, const uint32_t *merges,
                             size_t n_merges, const char *specials, const size_t *ends, const uint32_t *ids, size_t ns,
                             const char *comments, const size_t *cends, size_t nc, char **out, size_t *len,
                             st_error *e) {
    size_t n = 0;
    *out = NULL;
    st_status st = st_model_write_rules(name, name_len, alphabet, pattern, merges, n_merges, specials, ends, ids, ns,
                                        comments, cends, nc, NULL, 0, &n, e);
    if (st != ST_ERR_BUFFER_TOO_SMALL) return st;
    for (size_t cap = 1; cap < n; cap++) {
        char *small = (char *)malloc(cap);
        size_t got = 0;
        st = st_model_write_rules(name, name_len, alphabet, pattern, merges, n_merges, specials, ends, ids, ns, comments,
                                  cends, nc, small, cap, &got, e);
        CHECK(st == ST_ERR_BUFFER_TOO_SMALL && got == n, "cap %zu", cap);
        free(small);
    }
    *out = (char *)malloc(n + 1);
    st = st_model_write_rules(name, name_len, alphabet, pattern, merges, n_merges, specials, ends, ids, ns, comments,
                              cends, nc, *out, n, len, e);
    (*out)[n] = 0;
    return st;
}

static void test_write_rules(void) {
    static const uint32_t m[] = {97, 98, 256, 99};
    /* specials out of order (and two on one id: kept in the order given; the parser refuses it) */
    const char specials[] = "<|end|>\\x\n\t y \x01\x7f" " a";
    size_t ends[] = {7, 9, 16, 18};
    uint32_t ids[] = {300, 258, 259, 258};
    const char comments[] = "generated here\xc3\xa9 two  spaces";
    size_t cends[] = {16, 28};
    char *out;
    size_t n;
    st_error e;
    st_status st = write_rules("tiny", 4, ST_ALPHABET_BYTES, ST_PATTERN_CL100K, m, 2, specials, ends, ids, 4, comments,
                               cends, 2, &out, &n, &e);
    const char *want = "supertok-model 1\nname tiny\ncomment generated here\xc3\xa9\ncomment  two  spaces\nkind rules\n"
                       "alphabet bytes\npattern cl100k\nscript-aware no\nmerges 2\n97 98\n256 99\nspecials 4\n"
                       "258 \\\\x\n258 \\x20a\n259 \\n\\t y \\x01\\x7F\n300 <|end|>\nend\n";
    CHECK(st == ST_OK && !strcmp(out, want), "write_rules: %d\n%s", st, out ? out : "");
    free(out);

    /* a valid model: the core's writer writes it back byte for byte */
    size_t ends2[] = {7, 9};
    uint32_t ids2[] = {600, 514};
    st = write_rules("m", 1, ST_ALPHABET_UBE, ST_PATTERN_GPT2, m, 2, "<|end|> x", ends2, ids2, 2, NULL, NULL, 0, &out,
                     &n, &e);
    CHECK(st == ST_OK, "write ube: %d", st);
    st_model *pm = NULL;
    CHECK(st_model_parse(out, n, NULL, &pm, &e) == ST_OK, "parses: %s", e.message);
    if (pm) {
        char back[512];
        size_t bn = 0;
        CHECK(st_model_write(pm, back, sizeof back, &bn) == ST_OK && bn == n && !memcmp(back, out, n), "canonical");
        st_model_free(pm);
    }
    free(out);

    /* refusals: the field in err->input */
    char name129[130];
    memset(name129, 'x', sizeof name129);
    struct {
        const char *name;
        size_t name_len;
        const char *comments;
        size_t cend;
        uint32_t input;
        uint64_t offset;
    } bad[] = {
        {"", 0, NULL, 0, 1, 0},          {"a b", 3, NULL, 0, 1, 1},      {"a\nb", 3, NULL, 0, 1, 1},
        {"ab\x7f", 3, NULL, 0, 1, 2},    {"\xc3\xa9", 2, NULL, 0, 1, 0}, {name129, 129, NULL, 0, 1, 0},
        {"ok", 2, "", 0, 4, 0},          {"ok", 2, "a\nb", 3, 4, 0},     {"ok", 2, "a\rb", 3, 4, 0},
        {"ok", 2, "\xff", 1, 4, 0},      {"ok", 2, "a\x7f", 2, 4, 0},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t ce = bad[k].cend;
        char buf[8] = "#######";
        n = 99;
        st = st_model_write_rules(bad[k].name, bad[k].name_len, 0, ST_PATTERN_O200K, m, 2, NULL, NULL, NULL, 0,
                                  bad[k].comments, bad[k].comments ? &ce : NULL, bad[k].comments ? 1 : 0, buf,
                                  sizeof buf, &n, &e);
        CHECK(st == ST_ERR_INVALID_ARGUMENT && e.input == bad[k].input && e.offset == bad[k].offset && buf[0] == '#' &&
                  n == 0,
              "bad field %zu: %d input %u offset %llu", k, st, e.input, (unsigned long long)e.offset);
    }
    size_t back_ends[] = {3, 1};
    uint32_t two_ids[] = {300, 301};
    CHECK(st_model_write_rules("m", 1, 0, 3, m, 2, "abc", back_ends, two_ids, 2, NULL, NULL, 0, NULL, 0, &n, &e) ==
                  ST_ERR_INVALID_ARGUMENT &&
              e.input == 2 && e.offset == 1,
          "specials' ends backwards");
    CHECK(st_model_write_rules("m", 1, 0, 3, m, 2, NULL, NULL, NULL, 0, "abc", back_ends, 2, NULL, 0, &n, &e) ==
                  ST_ERR_INVALID_ARGUMENT &&
              e.input == 4 && e.offset == 1,
          "comments' ends backwards");
    CHECK(st_model_write_rules("m", 1, 0, 3, m, (size_t)1 << 21, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, &n, &e) ==
                  ST_ERR_INVALID_ARGUMENT &&
              e.input == 3,
          "more rules than ids");
    CHECK(st_model_write_rules("m", 1, 2, 3, m, 2, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, &n, &e) ==
              ST_ERR_INVALID_ARGUMENT,
          "alphabet 2");
    CHECK(st_model_write_rules("m", 1, 0, 8, m, 2, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, &n, &e) ==
              ST_ERR_UNKNOWN_PATTERN,
          "pattern 8");
    CHECK(st_model_write_rules("m", 1, 0, 3, NULL, 2, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, &n, &e) ==
              ST_ERR_INVALID_ARGUMENT,
          "NULL merges");
    CHECK(st_model_write_rules("m", 1, 0, 3, m, 2, NULL, ends, NULL, 1, NULL, NULL, 0, NULL, 0, &n, &e) ==
              ST_ERR_INVALID_ARGUMENT,
          "NULL special ids");
    CHECK(st_model_write_rules("m", 1, 0, 3, m, 2, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 8, &n, &e) ==
              ST_ERR_INVALID_ARGUMENT,
          "NULL out, cap 8");
    /* ids that no model holds are written (the parser names them when the file is loaded) */
    static const uint32_t big[] = {0xFFFFFFFFu, 7};
    st = write_rules("m", 1, 0, 3, big, 1, NULL, NULL, NULL, 0, NULL, NULL, 0, &out, &n, &e);
    CHECK(st == ST_OK && has(out, "\nmerges 1\n4294967295 7\n"), "any uint32 id");
    CHECK(st_model_parse(out, n, NULL, &pm, &e) == ST_ERR_MALFORMED_MODEL && e.line == 8 && has(e.message, "merges[0]"),
          "the parser names the rule: %s", e.message);
    free(out);
}

int main(int argc, char **argv) {
    if (argc > 1) g_vocab = argv[1];
    test_tiktoken();
    test_hf_json();
    test_tokens_that_go();
    test_refusals();
    test_random_models(300);
    test_out_of_memory();
    test_write_rules();
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
