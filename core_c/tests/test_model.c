// Model files (docs/formats/model-format.md): parser, canonical writer, encodings built from them.
//
//   test_model [vectors/models]
//
// - vectors/models/*.stmodel and models written here (counts, supermerges, script-aware lists,
//   escaped specials, a ranks model) round-trip: write(parse(text)) == text for canonical text,
//   parse(write(m)) == m;
// - every header field wrong, every section malformed: ST_ERR_MALFORMED_MODEL with the line
//   and a message naming the field;
// - the files cut at every byte, and randomly damaged (fixed seed): an error naming a line, or
//   success, never a crash (this runs under ASan/UBSan in run.sh);
// - huge counts allocate nothing they cannot see; invalid UTF-8 and base64 are refused;
// - an allocator that fails after k allocations: ST_ERR_OUT_OF_MEMORY and no leak;
// - a model loads to the same ids as st_encoding_new_merges on the same rules.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/formats/model.h"
#include "check.h"
#include "error_contract.h"
#include "supertok.h"

static const char *g_dir = "vectors/models";

/* ---- helpers ------------------------------------------------------------------------------ */

/* The plain o200k pre-tokenizer the merge-rule encodings below are made with (made once). */
static const st_pretokenizer *o200k_plain(void) {
    static st_pretokenizer *pt;
    st_error err;
    if (!pt && CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, &err)) != ST_OK) {
        printf("FAIL st_pretokenizer_new(o200k): %d\n", (int)err.status);
        abort();
    }
    return pt;
}

static char *write_model(const st_model *m, size_t *len) {
    size_t n = 0;
    st_status st = st_model_write(m, NULL, 0, &n);
    CHECK(st == ST_ERR_BUFFER_TOO_SMALL || (st == ST_OK && n == 0), "size query: %d", st);
    char *buf = (char *)malloc(n + 1);
    size_t got = 0;
    /* a buffer one short is too small and writes nothing past cap */
    if (n) {
        buf[n - 1] = '#';
        st = st_model_write(m, buf, n - 1, &got);
        CHECK(st == ST_ERR_BUFFER_TOO_SMALL && got == n && buf[n - 1] == '#', "cap n-1: %d %zu", st, got);
    }
    st = st_model_write(m, buf, n, &got);
    CHECK(st == ST_OK && got == n, "write: %d %zu %zu", st, got, n);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Parse text; it must succeed; write(parse) == text when canonical; parse(write) == model. */
static void round_trip(const char *what, const char *text, size_t len, int canonical) {
    st_error err;
    st_model *m = NULL;
    st_status st = st_model_parse(text, len, NULL, &m, &err);
    CHECK(st == ST_OK && err.status == ST_OK, "%s: parse: %d line %llu: %s", what, st, (unsigned long long)err.line,
          err.message);
    if (st != ST_OK) return;
    size_t n;
    char *w = write_model(m, &n);
    if (canonical) CHECK(n == len && memcmp(w, text, len) == 0, "%s: write(parse(text)) != text", what);
    st_model *m2 = NULL;
    st = st_model_parse(w, n, NULL, &m2, &err);
    CHECK(st == ST_OK, "%s: parse(write): %d %s", what, st, err.message);
    if (m2) {
        CHECK(st__model_equal(m, m2), "%s: parse(write(m)) != m", what);
        size_t n2;
        char *w2 = write_model(m2, &n2);
        CHECK(n2 == n && memcmp(w2, w, n) == 0, "%s: the writer is not idempotent", what);
        free(w2);
        st_model_free(m2);
    }
    free(w);
    st_model_free(m);
}

/* text must fail with ST_ERR_MALFORMED_MODEL on `line` with `needle` in the message. line 0:
 * any line >= 1. Parse and st_encoding_new_model both (the latter also sees build errors). */
static void expect_bad(const char *text, size_t len, uint64_t line, const char *needle) {
    st_error err;
    st_encoding *enc = (st_encoding *)1;
    st_status st = st_encoding_new_model(text, len, NULL, &enc, &err);
    CHECK(st == ST_ERR_MALFORMED_MODEL && enc == NULL, "'%s': status %d", needle, st);
    CHECK(err.status == (uint32_t)st, "'%s': err.status %u", needle, err.status);
    CHECK(line ? err.line == line : err.line >= 1, "'%s': line %llu, expected %llu (%s)", needle,
          (unsigned long long)err.line, (unsigned long long)line, err.message);
    CHECK(strstr(err.message, needle) != NULL, "'%s' not in '%s'", needle, err.message);
    CHECK(err.unit == ST_UNIT_BYTE && err.offset <= len, "'%s': offset %llu unit %u", needle,
          (unsigned long long)err.offset, err.unit);
    CHECK(memchr(err.message, 0, sizeof err.message) != NULL, "message not terminated");
    if (enc && enc != (st_encoding *)1) st_encoding_free(enc);
}

/* base with the first `old` replaced by `new_` (static buffer). */
static char *replaced(const char *base, const char *old, const char *new_, size_t *len) {
    static char buf[1 << 16];
    const char *at = strstr(base, old);
    if (!at) {
        CHECK(0, "'%s' not in the model", old);
        *len = 0;
        buf[0] = 0;
        return buf;
    }
    size_t pre = (size_t)(at - base), ol = strlen(old), nl = strlen(new_), rest = strlen(at + ol);
    memcpy(buf, base, pre);
    memcpy(buf + pre, new_, nl);
    memcpy(buf + pre + nl, at + ol, rest + 1);
    *len = pre + nl + rest;
    return buf;
}

static void bad_edit(const char *base, const char *old, const char *new_, uint64_t line, const char *needle) {
    size_t len;
    char *t = replaced(base, old, new_, &len);
    if (len) expect_bad(t, len, line, needle);
}

/* ---- the models --------------------------------------------------------------------------- */

static const char RULES[] =
    "supertok-model 1\n"
    "name tiny\n"
    "comment a hand-written test model; commentary is kept: é\n"
    "comment second comment\n"
    "kind rules\n"
    "alphabet bytes\n"
    "pattern o200k\n"
    "script-aware no\n"
    "merges 4 counts\n"
    "97 98 18446744073709551615\n"
    "99 100 7\n"
    "256 99 0\n"
    "258 100 3\n"
    "specials 3\n"
    "260 <|endoftext|>\n"
    "261 \\x20a b\\\\c\\nd\\te\\r\\x07\\x7F\\x20\n"
    "300 中文😀\n"
    "end\n";

static const char SUPER[] =
    "supertok-model 1\n"
    "name super\n"
    "kind rules\n"
    "alphabet ube\n"
    "pattern cl100k\n"
    "script-aware yes\n"
    "scripts Han,Thai,Latin\n"
    "merges 2\n"
    "97 98\n"
    "512 99\n"
    "supermerges 2 counts\n"
    "513 513 10\n"
    "514 512 9\n"
    "specials 0\n"
    "end\n";

static const char RANKS_HEAD[] =
    "supertok-model 1\n"
    "name ranks\n"
    "kind ranks\n"
    "alphabet bytes\n"
    "pattern gpt2\n"
    "script-aware no\n";

static char *ranks_model(size_t *len) {
    static const char *b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *t = (char *)malloc(20000);
    size_t n = (size_t)sprintf(t, "%stokens 259\n", RANKS_HEAD);
    for (int b = 0; b < 256; b++)
        n += (size_t)sprintf(t + n, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
    n += (size_t)sprintf(t + n, "YWI= 256\nY2Q= 257\nYWJjZA== 258\nspecials 1\n300 <|endoftext|>\nend\n");
    *len = n;
    return t;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_round_trips(void) {
    round_trip("RULES", RULES, sizeof RULES - 1, 1);
    round_trip("SUPER", SUPER, sizeof SUPER - 1, 1);
    size_t n;
    char *r = ranks_model(&n);
    round_trip("RANKS", r, n, 1);
    free(r);
    static const char *variants[] = {"scripts default\n", "scripts none\n", "scripts Han\n"};
    for (int i = 0; i < 3; i++) {
        size_t len;
        char *t = replaced(SUPER, "scripts Han,Thai,Latin\n", variants[i], &len);
        round_trip(variants[i], t, len, 1);
    }
    /* non-canonical text parses; written canonically */
    const char *noncanon[] = {"261 \\x20a b", "261 \\x20A b"};
    size_t len;
    char *t = replaced(RULES, noncanon[0], noncanon[1], &len);
    round_trip("escape \\x41 for A", t, len, 0);
    /* an empty supermerges section is valid, and written without it */
    t = replaced(RULES, "specials 3", "supermerges 0\nspecials 3", &len);
    round_trip("supermerges 0", t, len, 0);

    /* getters */
    st_model *m = NULL;
    st_error err;
    CHECK(st_model_parse(SUPER, sizeof SUPER - 1, NULL, &m, &err) == ST_OK, "parse SUPER");
    if (m) {
        size_t l;
        const char *name = st_model_name(m, &l);
        CHECK(l == 5 && memcmp(name, "super", 5) == 0, "name");
        const char *sc = st_model_scripts(m, &l);
        CHECK(sc && l == 14 && memcmp(sc, "Han,Thai,Latin", 14) == 0, "scripts");
        CHECK(st_model_kind(m) == ST_MODEL_RULES && st_model_alphabet(m) == ST_ALPHABET_UBE &&
                  st_model_pattern(m) == ST_PATTERN_CL100K &&
                  st_model_pretokenizer_flags(m) == ST_PRETOK_SCRIPT_AWARE,
              "header getters");
        CHECK(st_model_count(m, "merges") == 2 && st_model_count(m, "supermerges") == 2 &&
                  st_model_count(m, "specials") == 0 && st_model_count(m, "tokens") == 0 &&
                  st_model_count(m, "nope") == 0,
              "counts");
        const uint32_t *pairs = NULL;
        const uint64_t *counts = NULL;
        CHECK(st_model_pairs(m, "supermerges", &pairs, &counts) == 2 && pairs && counts && pairs[0] == 513 &&
                  pairs[1] == 513 && pairs[2] == 514 && pairs[3] == 512 && counts[0] == 10 && counts[1] == 9,
              "st_model_pairs supermerges");
        CHECK(st_model_pairs(m, "merges", &pairs, &counts) == 2 && pairs && !counts && pairs[0] == 97 &&
                  pairs[1] == 98 && pairs[2] == 512 && pairs[3] == 99,
              "st_model_pairs merges");
        CHECK(st_model_pairs(m, "specials", &pairs, &counts) == 0 && !pairs && !counts, "st_model_pairs other");
        /* SUPER encodes superwords: 512 ab, 513 abc (rules); 514 = 513 513, 515 = 514 512
         * (supermerges). With its scripts (Latin among them: a letter a pretoken) "abcabc" is
         * six one-letter pretokens of no rule; with "scripts Han" it is one pretoken: the rules
         * give [513, 513], and the supermerge (513, 513) joins the tokens of adjacent whole
         * pretokens only, never inside one. */
        st_encoding *enc = NULL;
        st_status st = st_encoding_from_model(m, NULL, &enc, &err);
        CHECK(st == ST_OK, "superword model loads: %d %s", st, err.message);
        if (enc) {
            uint32_t ids[8];
            size_t n = 0;
            CHECK(st_encode(enc, "abcabc", 6, NULL, 0, ids, NULL, 8, &n, &err) == ST_OK && n == 6 && ids[0] == 'a' &&
                      ids[5] == 'c',
                  "one-letter pretokens");
            st_encoding_free(enc);
            enc = NULL;
        }
        size_t hl;
        char *han = replaced(SUPER, "scripts Han,Thai,Latin\n", "scripts Han\n", &hl);
        st = st_encoding_new_model(han, hl, NULL, &enc, &err);
        CHECK(st == ST_OK, "superword model (Han) loads: %d %s", st, err.message);
        if (enc) {
            uint32_t ids[8];
            size_t n = 0;
            CHECK(st_encode(enc, "abcabc", 6, NULL, 0, ids, NULL, 8, &n, &err) == ST_OK && n == 2 && ids[0] == 513 &&
                      ids[1] == 513,
                  "no supermerge inside a pretoken");
            uint16_t sym[8];
            CHECK(st_token_symbols(enc, 515, sym, 8, &n, &err) == ST_OK && n == 8 && sym[0] == 'a' && sym[5] == 'c' &&
                      sym[6] == 'a' && sym[7] == 'b',
                  "symbols of supermerge 515 (abc abc ab)");
            CHECK(st_encoding_n_vocab(enc) == 516, "n_vocab with supermerges");
            st_encoding_free(enc);
        }
        st_model_free(m);
    }
}

static void test_encodings(void) {
    /* RULES as a model, and the same rules through st_encoding_new_merges */
    st_encoding *a = NULL, *b = NULL;
    st_error err;
    st_status st = st_encoding_new_model(RULES, sizeof RULES - 1, NULL, &a, &err);
    CHECK(st == ST_OK, "RULES: %d %s", st, err.message);
    static const uint32_t merges[] = {97, 98, 99, 100, 256, 99, 258, 100};
    static const char specials[] = "PHxlbmRvZnRleHR8Pg== 260\n";
    st = CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, merges, 4, specials, sizeof specials - 1, o200k_plain(),
                                             NULL, &b, &err));
    CHECK(st == ST_OK, "merges: %d", st);
    if (a && b) {
        const char *text = "abcd abc xabcdx";
        uint32_t ia[64], ib[64];
        size_t na, nb;
        CHECK(CHECKED(err, st_encode(a, text, strlen(text), NULL, 0, ia, NULL, 64, &na, &err)) == ST_OK, "encode a");
        CHECK(CHECKED(err, st_encode(b, text, strlen(text), NULL, 0, ib, NULL, 64, &nb, &err)) == ST_OK, "encode b");
        CHECK(na == nb && memcmp(ia, ib, na * 4) == 0, "model and merges differ");
        CHECK(na >= 2 && ia[0] == 256 && ia[1] == 257, "abcd is [ab, cd] by rules");
        /* the escaped special decodes to its text */
        const uint8_t *p;
        size_t len;
        CHECK(CHECKED(err, st_token_bytes(a, 261, &p, &len, &err)) == ST_OK && len == 14 &&
                  memcmp(p, " a b\\c\nd\te\r\x07\x7F ", 14) == 0,
              "special 261 bytes");
        CHECK(st_encoding_n_special(a) == 3 && st_encoding_n_vocab(a) == 301, "specials/vocab");
    }
    st_encoding_free(a);
    st_encoding_free(b);
    /* ranks model: ranks take a whole piece */
    size_t n;
    char *r = ranks_model(&n);
    st = st_encoding_new_model(r, n, NULL, &a, &err);
    CHECK(st == ST_OK, "RANKS: %d %s", st, err.message);
    if (a) {
        uint32_t ids[8];
        size_t k;
        CHECK(CHECKED(err, st_encode(a, "abcd", 4, NULL, 0, ids, NULL, 8, &k, &err)) == ST_OK && k == 1 &&
                  ids[0] == 258,
              "ranks");
        st_encoding_free(a);
    }
    /* two tokens with the same bytes: only the loader sees it; the error names the line */
    size_t len;
    char *t = replaced(r, "YWJjZA== 258", "YWI= 258", &len);
    char *copy = (char *)malloc(len + 1);
    memcpy(copy, t, len + 1);
    expect_bad(copy, len, 7 + 259, "tokens[258]");
    free(copy);
    free(r);
    /* a script-aware model loads with its own pre-tokenizer: the same ids as the same rules
     * with a script-aware st_pretokenizer over the same scripts, and not those of the plain one
     * (a Latin-Han run is one piece to cl100k, two to the script-aware splitter) */
    t = replaced(SUPER, "supermerges 2 counts\n513 513 10\n514 512 9\n", "", &len);
    st = st_encoding_new_model(t, len, NULL, &a, &err);
    CHECK(st == ST_OK, "script-aware model: %d %s", st, err.message);
    if (a) {
        static const uint32_t sm[] = {97, 98, 512, 99};
        st_encoding *sa = NULL, *plain = NULL;
        st_pretokenizer *pt = NULL;
        CHECK(st_pretokenizer_new(ST_PATTERN_CL100K, ST_PRETOK_SCRIPT_AWARE, "Han,Thai,Latin", 14, NULL, &pt, &err) ==
                  ST_OK, "script-aware pre-tokenizer");
        CHECK(st_encoding_new_merges(ST_ALPHABET_UBE, sm, 2, "", 0, pt, NULL, &sa, &err) == ST_OK, "sa rules");
        st_pretokenizer_free(pt);
        CHECK(st_pretokenizer_new(ST_PATTERN_CL100K, 0, NULL, 0, NULL, &pt, &err) == ST_OK, "plain pre-tokenizer");
        CHECK(st_encoding_new_merges(ST_ALPHABET_UBE, sm, 2, "", 0, pt, NULL, &plain, &err) == ST_OK, "plain rules");
        st_pretokenizer_free(pt);
        const char *text = "abc\xe4\xb8\xad\xe6\x96\x87" "abc"; /* abc + two Han characters + abc */
        uint32_t ia[64], ib[64], ic[64];
        size_t na = 0, nb = 0, nc = 0;
        CHECK(st_encode(a, text, strlen(text), NULL, 0, ia, NULL, 64, &na, &err) == ST_OK, "encode model");
        CHECK(sa && st_encode(sa, text, strlen(text), NULL, 0, ib, NULL, 64, &nb, &err) == ST_OK, "encode sa");
        CHECK(plain && st_encode(plain, text, strlen(text), NULL, 0, ic, NULL, 64, &nc, &err) == ST_OK, "encode plain");
        CHECK(na == nb && memcmp(ia, ib, na * 4) == 0, "the script-aware model encodes as its pre-tokenizer says");
        CHECK(!(na == nc && memcmp(ia, ic, na * 4) == 0), "script-aware and plain give the same ids on a mixed run");
        st_encoding_free(sa);
        st_encoding_free(plain);
        st_encoding_free(a);
        a = NULL;
    }
    /* err may be NULL */
    CHECK(st_encoding_new_model("x", 1, NULL, &a, NULL) == ST_ERR_MALFORMED_MODEL && a == NULL, "NULL err");
    CHECK(st_encoding_new_model(NULL, 0, NULL, &a, NULL) == ST_ERR_MALFORMED_MODEL, "empty input");
    CHECK(st_encoding_new_model(NULL, 5, NULL, &a, &err) == ST_ERR_INVALID_ARGUMENT &&
              err.status == ST_ERR_INVALID_ARGUMENT,
          "NULL bytes");
    CHECK(st_model_parse(RULES, 10, NULL, NULL, &err) == ST_ERR_INVALID_ARGUMENT, "NULL out");
}

/* A special with a token's id shares that token when its text is the token's bytes (what hf
 * training writes): parsed, written back byte for byte, encoded as that id; other bytes, or a
 * UBE model, are refused, in the model and through st_encoding_new_merges. */
static void test_shared_specials(void) {
    static const char M[] =
        "supertok-model 1\n"
        "name shared\n"
        "kind rules\n"
        "alphabet bytes\n"
        "pattern o200k\n"
        "script-aware no\n"
        "merges 3\n"
        "97 98\n"
        "99 100\n"
        "256 99\n"
        "specials 3\n"
        "97 a\n"
        "258 abc\n"
        "259 <|x|>\n"
        "end\n";
    st_model *m = NULL;
    st_error err;
    st_status st = st_model_parse(M, sizeof M - 1, NULL, &m, &err);
    CHECK(st == ST_OK, "shared: %d %s", st, err.message);
    if (m) {
        char out[512];
        size_t n = 0;
        CHECK(st_model_write(m, out, sizeof out, &n) == ST_OK && n == sizeof M - 1 && memcmp(out, M, n) == 0,
              "shared: not written back byte for byte");
        st_model_free(m);
    }
    st_encoding *a = NULL;
    st = st_encoding_new_model(M, sizeof M - 1, NULL, &a, &err);
    CHECK(st == ST_OK, "shared encoding: %d %s", st, err.message);
    if (a) {
        uint32_t ids[16], allowed[3] = {97, 258, 259};
        size_t k;
        CHECK(st_encoding_n_vocab(a) == 260 && st_encoding_n_special(a) == 3, "shared: n_vocab %u",
              st_encoding_n_vocab(a));
        CHECK(CHECKED(err, st_encode(a, "abc a<|x|>", 10, &(st_special_policy){allowed, 3, NULL, 0, 0, NULL, NULL}, 0,
                                     ids, NULL, 16, &k, &err)) == ST_OK &&
                  k == 4 && ids[0] == 258 && ids[1] == 32 && ids[2] == 97 && ids[3] == 259,
              "shared: encode with the specials");
        CHECK(CHECKED(err, st_encode(a, "abc", 3, NULL, 0, ids, NULL, 16, &k, &err)) == ST_OK && k == 1 &&
                  ids[0] == 258,
              "shared: ordinary abc");
        const uint8_t *p;
        size_t len;
        CHECK(CHECKED(err, st_token_bytes(a, 258, &p, &len, &err)) == ST_OK && len == 3 && memcmp(p, "abc", 3) == 0,
              "shared: bytes");
        /* the shared specials are ordinary tokens too, the other special and past the end not */
        CHECK(st_token_is_ordinary(a, 97) == 1 && st_token_is_ordinary(a, 258) == 1 && st_token_is_ordinary(a, 0) == 1 &&
                  st_token_is_ordinary(a, 259) == 0 && st_token_is_ordinary(a, 260) == 0 &&
                  st_token_is_ordinary(NULL, 0) == 0,
              "shared: st_token_is_ordinary");
        st_encoding_free(a);
    }
    bad_edit(M, "258 abc", "258 abd", 13, "specials[1]: id 258 is an ordinary token's, and the text is not its bytes");
    bad_edit(M, "258 abc", "258 ab", 13, "specials[1]: id 258 is an ordinary token's, and the text is not its bytes");
    bad_edit(M, "97 a", "98 a", 12, "specials[0]: id 98 is an ordinary token's, and the text is not its bytes");
    /* st_encoding_new_merges: specials as rank-file lines */
    static const uint32_t merges[] = {97, 98};
    static const char good[] = "YWI= 256\nYQ== 97\n", bad[] = "YWI= 256\nYg== 97\n";
    st_encoding *b = NULL;
    st = CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, merges, 1, good, sizeof good - 1, o200k_plain(), NULL,
                                             &b, &err));
    CHECK(st == ST_OK && b && st_encoding_n_vocab(b) == 257, "merges, shared specials: %d", st);
    st_encoding_free(b);
    b = NULL;
    st = CHECKED(
        err, st_encoding_new_merges(ST_ALPHABET_BYTES, merges, 1, bad, sizeof bad - 1, o200k_plain(), NULL, &b, &err));
    CHECK(st == ST_ERR_MALFORMED_MODEL && !b, "merges, a special with a token's id and other bytes: %d", st);
    st_encoding_free(b);
    b = NULL;
    st = CHECKED(
        err, st_encoding_new_merges(ST_ALPHABET_UBE, merges, 1, good, sizeof good - 1, o200k_plain(), NULL, &b, &err));
    CHECK(st == ST_ERR_MALFORMED_MODEL && !b, "merges, UBE: a special cannot share: %d", st);
    st_encoding_free(b);
    /* a shared special is text found in text too: the byte token 0xFF's bytes are no special */
    static const char not_utf8[] = "/w== 255\n";
    b = NULL;
    st = CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, merges, 1, not_utf8, sizeof not_utf8 - 1, o200k_plain(),
                                             NULL, &b, &err));
    CHECK(st == ST_ERR_MALFORMED_MODEL && !b, "merges, a shared special that is not UTF-8: %d", st);
    st_encoding_free(b);
    /* a shared id given twice is refused at its second line */
    static const char twice[] = "YQ== 97\nYWI= 256\nYQ== 97\n";
    b = NULL;
    st = CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, merges, 1, twice, sizeof twice - 1, o200k_plain(), NULL,
                                             &b, &err));
    CHECK(st == ST_ERR_MALFORMED_MODEL && !b && err.input == 1 && error_at(&err, ST_UNIT_BYTE, 17),
          "merges, a shared id twice: %d at %zu", st, (size_t)err.offset);
    st_encoding_free(b);
}

/* Many specials in descending id order (a hostile model's): sorted in n log n, each keeps its id. */
static void test_many_specials_descending(void) {
    enum { N = 17000 }; /* distinct texts below 26 * 26 * 26 */
    static const uint32_t merges[] = {97, 98};
    char *text = malloc((size_t)N * 24);
    size_t n = 0;
    static const char *b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = N - 1; i >= 0; i--) { /* "<i>" as 4 base64 digits of 3 bytes: "<" and two letters */
        unsigned char t[3] = {'<', (unsigned char)('a' + i / 26 % 26), (unsigned char)('a' + i % 26)};
        if (i >= 26 * 26) t[0] = (unsigned char)('A' + i / (26 * 26) % 26);
        n += (size_t)sprintf(text + n, "%c%c%c%c %d\n", b64[t[0] >> 2], b64[((t[0] & 3) << 4) | (t[1] >> 4)],
                             b64[((t[1] & 15) << 2) | (t[2] >> 6)], b64[t[2] & 63], 257 + i);
    }
    st_encoding *b = NULL;
    st_error err;
    st_status st =
        CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, merges, 1, text, n, o200k_plain(), NULL, &b, &err));
    CHECK(st == ST_OK && b, "descending specials: %d at %zu", st, (size_t)err.offset);
    if (b) {
        CHECK(st_encoding_n_special(b) == N && st_encoding_n_vocab(b) == 257 + N, "descending specials: %u of %u",
              st_encoding_n_special(b), st_encoding_n_vocab(b));
        st_encoding_free(b);
    }
    free(text);
}

static void test_malformed(void) {
    /* the header, field by field */
    bad_edit(RULES, "supertok-model 1", "supertok-model 3", 1, "format version '3' is not supported");
    bad_edit(RULES, "supertok-model 1", "supertok-model 01", 1, "format version");
    bad_edit(RULES, "supertok-model 1", "supertok-modelx 1", 1, "not a supertok model");
    bad_edit(RULES, "supertok-model 1", "tiktoken", 1, "not a supertok model");
    bad_edit(RULES, "name tiny", "name", 2, "name: missing value");
    bad_edit(RULES, "name tiny", "name ", 2, "name: missing value");
    bad_edit(RULES, "name tiny", "name ti ny", 2, "name: 'ti ny' must be");
    bad_edit(RULES, "name tiny", "name tiné", 2, "name");
    bad_edit(RULES, "name tiny", "title tiny", 2, "unknown key 'title' where 'name' was expected");
    bad_edit(RULES, "comment second comment", "comment \xC3(", 4, "comment: not valid UTF-8");
    bad_edit(RULES, "comment second comment", "comment", 4, "comment: missing value");
    bad_edit(RULES, "kind rules", "kind Rules", 5, "kind: 'Rules' is not one of rules, ranks");
    bad_edit(RULES, "kind rules\n", "", 5, "'alphabet' is out of place: expected 'kind'");
    bad_edit(RULES, "kind rules", "kind rules extra", 5, "kind: 'rules extra' is not one of");
    bad_edit(RULES, "alphabet bytes", "alphabet utf16", 6, "alphabet: 'utf16' is not one of bytes, ube");
    bad_edit(RULES, "alphabet bytes", "normalizer nfc", 6, "unknown key 'normalizer'");
    bad_edit(RULES, "pattern o200k", "pattern llama4", 7,
             "pattern: 'llama4' is not one of gpt2, cl100k, o200k, superbpe, llama3, qwen2, deepseek_v3");
    bad_edit(RULES, "script-aware no", "script-aware 0", 8, "script-aware: '0' is not one of no, yes");
    bad_edit(RULES, "script-aware no", "script-aware yes", 9, "'merges' is out of place: expected 'scripts'");
    bad_edit(RULES, "script-aware no", "script-aware no\nscripts Han", 9, "scripts: only a script-aware model");
    bad_edit(SUPER, "scripts Han,Thai,Latin", "scripts Han,,Thai", 7, "an empty name");
    bad_edit(SUPER, "scripts Han,Thai,Latin", "scripts Han,Thai,", 7, "an empty name");
    bad_edit(SUPER, "scripts Han,Thai,Latin", "scripts Han,Thai,Han", 7, "'Han' is listed twice");
    bad_edit(SUPER, "scripts Han,Thai,Latin", "scripts han", 7, "not the canonical spelling: write Han");
    bad_edit(SUPER, "scripts Han,Thai,Latin", "scripts Elvish", 7, "'Elvish' is not a script name");
    bad_edit(SUPER, "scripts Han,Thai,Latin", "scripts", 7, "scripts: missing value");
    /* sections */
    bad_edit(RULES, "merges 4 counts", "merges 4", 10, "merges[0]: expected 'left right' (the section line has no 'counts')");
    bad_edit(RULES, "merges 4 counts", "merges 4 count", 9, "merges: after the count only 'counts'");
    bad_edit(RULES, "merges 4 counts", "merges -4 counts", 9, "merges: '-4' is not a count");
    bad_edit(RULES, "merges 4 counts", "merges 18446744073709551615 counts", 9, "is more than the 2096894");
    bad_edit(RULES, "merges 4 counts", "merges 99999999999999999999999 counts", 9, "is more than");
    bad_edit(RULES, "merges 4 counts", "merges 2096894 counts", 14, "merges: 'specials' after 4 of 2096894");
    bad_edit(RULES, "merges 4 counts", "merges 3 counts", 13, "a data line where 'specials' was expected");
    bad_edit(RULES, "merges 4 counts", "tokens 4", 9, "'tokens' is out of place: expected 'merges'");
    bad_edit(RULES, "99 100 7", "99 100", 11, "merges[1]: expected 'left right count'");
    bad_edit(RULES, "99 100 7", "99 100 7 8", 11, "merges[1]: too many fields");
    bad_edit(RULES, "99 100 7", "99 100 18446744073709551616", 11, "merges[1]: count '18446744073709551616' is not");
    bad_edit(RULES, "99 100 7", "99 100 x", 11, "merges[1]: count 'x'");
    bad_edit(RULES, "99 100 7", "99 257 7", 11, "merges[1]: right id 257 is not below the rule's own id 257");
    bad_edit(RULES, "99 100 7", "300 100 7", 11, "merges[1]: left id 300 is not below the rule's own id 257");
    bad_edit(RULES, "99 100 7", "99 99999999999999999999 7", 11, "merges[1]: right id '99999999999999999999' is too large");
    bad_edit(RULES, "99 100 7", "97 98 7", 11, "merges[1]: the pair 97 98 is already a rule");
    bad_edit(RULES, "99 100 7", " 99 100 7", 11, "merges[1]: empty field");
    bad_edit(RULES, "99 100 7", "99 100 7 ", 11, "merges[1]: empty field");
    bad_edit(RULES, "99 100 7", "99\t100 7", 11, "control byte 0x09");
    bad_edit(RULES, "99 100 7\n", "99 100 7\r\n", 11, "CR: lines end with LF only");
    bad_edit(SUPER, "513 513 10", "513 515 10", 12, "supermerges[0]: right id 515 is not below the rule's own id 514");
    bad_edit(SUPER, "514 512 9", "97 98 9", 13, "supermerges[1]: the pair 97 98 is already a rule");
    bad_edit(SUPER, "supermerges 2 counts\n", "supermerges 2\n", 12, "supermerges[0]: expected 'left right'");
    /* specials */
    bad_edit(RULES, "specials 3", "specials 4", 18, "specials: 'end' after 3 of 4 lines");
    bad_edit(RULES, "specials 3", "specials 2", 17, "a data line where 'end' was expected");
    bad_edit(RULES, "260 <|endoftext|>", "259 <|endoftext|>", 15, "specials[0]: id 259 is an ordinary token's, and the text is not its bytes");
    bad_edit(RULES, "260 <|endoftext|>", "262 <|endoftext|>", 16, "specials[1]: id 261 is not above the previous");
    bad_edit(RULES, "260 <|endoftext|>", "260 ", 15, "specials[0]: the text is empty");
    bad_edit(RULES, "260 <|endoftext|>", "260", 15, "specials[0]: expected 'id text'");
    bad_edit(RULES, "260 <|endoftext|>", "x <|endoftext|>", 15, "specials[0]: expected 'id text'");
    bad_edit(RULES, "260 <|endoftext|>", "260 \xFF", 15, "specials[0]: the text is not valid UTF-8");
    bad_edit(RULES, "260 <|endoftext|>", "260 \\xC3(", 15, "specials[0]: the text is not valid UTF-8");
    bad_edit(RULES, "260 <|endoftext|>", "260 \xED\xA0\x80", 15, "not valid UTF-8"); /* a surrogate */
    bad_edit(RULES, "260 <|endoftext|>", "260 a\\", 15, "specials[0]: bad escape");
    bad_edit(RULES, "260 <|endoftext|>", "260 a\\x4", 15, "specials[0]: bad escape");
    bad_edit(RULES, "260 <|endoftext|>", "260 a\\u0041", 15, "specials[0]: bad escape");
    bad_edit(RULES, "260 <|endoftext|>", "260 中文😀", 17, "specials[2]: the same text as specials[0]");
    bad_edit(RULES, "300 中文", "2097151 中文", 17, "specials[2]: id 2097151 is above the 2097150");
    bad_edit(RULES, "300 中文", "100000 中文", 17, "specials[2]: id 100000 leaves too many unused ids");
    bad_edit(RULES, "specials 3", "specials 99999999999", 14, "specials: '99999999999' is more than");
    /* the end */
    bad_edit(RULES, "\nend\n", "\nend \n", 18, "end: this line takes no value");
    bad_edit(RULES, "\nend\n", "\nend\n\n", 19, "data after the 'end' line");
    bad_edit(RULES, "\nend\n", "\n", 18, "the file ends where the 'end' line was expected");
    bad_edit(RULES, "\nend\n", "\nend", 18, "no final newline");
    bad_edit(RULES, "\nend\n", "\nfin\n", 18, "unknown key 'fin' where 'end' was expected");
    bad_edit(RULES, "kind rules\n", "\nkind rules\n", 5, "an empty line (or a leading space) where 'kind'");
    bad_edit(RULES, "99 100 7", "99 100 7x", 11, "merges[1]: count '7x' is not");
    /* a NUL byte anywhere */
    {
        char t[sizeof RULES];
        memcpy(t, RULES, sizeof RULES);
        t[40] = 0;
        expect_bad(t, sizeof RULES - 1, 0, "control byte 0x00");
    }
    /* ranks */
    size_t n;
    char *r = ranks_model(&n);
    bad_edit(r, "alphabet bytes", "alphabet ube", 4, "alphabet: a ranks model's alphabet is 'bytes'");
    bad_edit(r, "tokens 259", "merges 259", 7, "'merges' is out of place: expected 'tokens'");
    bad_edit(r, "tokens 259", "tokens 0", 7, "tokens: a ranks model needs at least one token");
    bad_edit(r, "tokens 259", "tokens 259 counts", 7, "tokens: only a count may follow");
    bad_edit(r, "tokens 259", "tokens 2147483648", 7, "is more than the 2147483647");
    /* a count too large: "specials 1" is a well-formed token line ("specials" is base64) */
    bad_edit(r, "tokens 259", "tokens 2147483647", 267, "tokens[259]: rank '1' is not above the previous rank 258");
    bad_edit(r, "YWI= 256", "YWI 256", 264, "tokens[256]: 'YWI' is not canonical padded base64");
    bad_edit(r, "YWI= 256", "YWJ= 256", 264, "tokens[256]: 'YWJ=' is not canonical");
    bad_edit(r, "YWI= 256", "Y*I= 256", 264, "not canonical padded base64");
    bad_edit(r, "YWI= 256", "YW== 256", 264, "not canonical padded base64");
    bad_edit(r, "YWI= 256", "==== 256", 264, "not canonical padded base64");
    bad_edit(r, "YWI= 256", "YWI=YWI= 256", 264, "not canonical padded base64");
    bad_edit(r, "YWI= 256", "YWI= 255", 264, "tokens[256]: rank '255' is not above the previous rank 255");
    bad_edit(r, "YWI= 256", "YWI= 2147483648", 264, "is above 2147483647");
    bad_edit(r, "YWI= 256", "YWI=", 264, "tokens[256]: expected 'base64 rank'");
    bad_edit(r, "YWJjZA== 258", "YWJjZA== 2000000", 266, "tokens[258]: id 2000000 leaves too many unused ids");
    bad_edit(r, "300 <|endoftext|>", "257 <|endoftext|>", 268, "specials[0]: id 257 is the rank of a token");
    bad_edit(r, "300 <|endoftext|>", "3000000 <|endoftext|>", 268, "specials[0]: id 3000000 leaves too many");
    bad_edit(r, "specials 1", "supermerges 0\nspecials 1", 267, "supermerges: only a rules model");
    free(r);
}

/* Every prefix of a valid file: an error naming a line (only the whole file is valid). */
static void truncations(const char *what, const char *text, size_t len) {
    int bad = 0;
    for (size_t cut = 0; cut < len; cut++) {
        char *t = (char *)malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees a read past them */
        memcpy(t, text, cut);
        st_error err;
        st_encoding *enc = NULL;
        st_status st = st_encoding_new_model(t, cut, NULL, &enc, &err);
        if (st != ST_ERR_MALFORMED_MODEL || err.line < 1 || !err.message[0] || err.offset > cut) bad++;
        if (st == ST_OK) st_encoding_free(enc);
        free(t);
    }
    CHECK(bad == 0, "%s: %d truncations not refused with a line", what, bad);
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

/* Random damage (fixed seed): any status but a crash; errors name a line. */
static void damage(const char *what, const char *text, size_t len, int rounds) {
    int bad = 0, ok = 0;
    static const char alphabet[] = "0123456789 \n\\xabcdefghijklmnopqrstuvwxyz=+/-\x00\xC3\xFF";
    for (int r = 0; r < rounds; r++) {
        size_t n = len + 8;
        char *t = (char *)malloc(n);
        memcpy(t, text, len);
        n = len;
        int edits = 1 + (int)(rnd() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rnd() % (n ? n : 1);
            uint32_t kind = rnd() % 3;
            char c = alphabet[rnd() % (sizeof alphabet - 1)];
            if (kind == 0 && n) t[at] = c;
            else if (kind == 1 && n) { memmove(t + at, t + at + 1, n - at - 1); n--; }
            else if (n < len + 8) { memmove(t + at + 1, t + at, n - at); t[at] = c; n++; }
        }
        char *exact = (char *)malloc(n ? n : 1);
        memcpy(exact, t, n);
        free(t);
        st_error err;
        st_model *m = NULL;
        st_status st = st_model_parse(exact, n, NULL, &m, &err);
        if (st == ST_OK) {
            ok++;
            size_t wl;
            char *w = write_model(m, &wl);
            st_model *m2 = NULL;
            if (st_model_parse(w, wl, NULL, &m2, &err) != ST_OK || !st__model_equal(m, m2)) bad++;
            st_model_free(m2);
            free(w);
            st_encoding *enc = NULL;
            if (st_encoding_from_model(m, NULL, &enc, &err) == ST_OK) {
                uint32_t ids[64];
                size_t k;
                CHECKED(err, st_encode(enc, "abcd the thing", 14, NULL, 0, ids, NULL, 64, &k, &err));
                st_encoding_free(enc);
            } else if (err.line < 1) bad++;
            st_model_free(m);
        } else if (st != ST_ERR_MALFORMED_MODEL || err.line < 1 || err.offset > n) bad++;
        free(exact);
    }
    CHECK(bad == 0, "%s: %d damaged files broke the contract", what, bad);
    printf("  %s: %d random damages, %d still valid\n", what, rounds, ok);
}

/* An allocator that fails after a budget of allocations; counts what is live. */
typedef struct budget {
    int left;
    long live;
} budget;
static void *b_alloc(void *ctx, size_t size) {
    budget *b = (budget *)ctx;
    if (b->left-- <= 0) return NULL;
    b->live++;
    return malloc(size);
}
static void b_free(void *ctx, void *p, size_t size) {
    (void)size;
    ((budget *)ctx)->live--;
    free(p);
}

static void test_out_of_memory(const char *text, size_t len) {
    int saw_oom = 0, bad = 0;
    for (int k = 0; k < 40; k++) {
        budget b = {k, 0};
        st_allocator a = {b_alloc, b_free, &b};
        st_encoding *enc = NULL;
        st_error err;
        st_status st = st_encoding_new_model(text, len, &a, &enc, &err);
        if (st == ST_ERR_OUT_OF_MEMORY) {
            saw_oom++;
            if (err.status != ST_ERR_OUT_OF_MEMORY) bad++;
        } else if (st == ST_OK) st_encoding_free(enc);
        else bad++;
        if (b.live != 0) bad++;
    }
    CHECK(saw_oom > 3 && bad == 0, "allocation failures: %d seen, %d bad", saw_oom, bad);
}

/* ---- format version 2: the training line -------------------------------------------------- */

static const char TRAINED[] =
    "supertok-model 2\n"
    "name trained\n"
    "comment trained by supertok BoundlessBPE: mode paper, vocab_size 262, min_frequency 0\n"
    "training algorithm=boundless mode=paper vocab_size=262 min_frequency=0 ngram_split=no\n"
    "kind rules\n"
    "alphabet bytes\n"
    "pattern o200k\n"
    "script-aware no\n"
    "merges 2 counts\n"
    "97 98 9\n"
    "32 99 8\n"
    "supermerges 1 counts\n"
    "256 257 12\n"
    "specials 1\n"
    "259 <|endoftext|>\n"
    "end\n";

static void test_training_line(void) {
    round_trip("TRAINED", TRAINED, sizeof TRAINED - 1, 1);
    static const char *variants[] = {
        "training algorithm=superbpe mode=paper vocab_size=262 min_frequency=0 supermerges=1 ngram_split=no\n",
        "training algorithm=boundless mode=paper vocab_size=262 min_frequency=3 ngram_split=yes c_min=15 max_len=30\n",
        "training algorithm=superbpe mode=paper vocab_size=262 min_frequency=0 supermerges=5 ngram_split=yes c_min=20 max_len=4\n",
        "training algorithm=bpe mode=hf vocab_size=262 min_frequency=0 ngram_split=no\n",
    };
    const char *line = "training algorithm=boundless mode=paper vocab_size=262 min_frequency=0 ngram_split=no\n";
    for (int i = 0; i < 4; i++) {
        size_t len;
        char *t = replaced(TRAINED, line, variants[i], &len);
        char tmp[4096];
        if (i == 3) {
            memcpy(tmp, t, len + 1);
            t = replaced(tmp, "supermerges 1 counts\n256 257 12\n", "", &len);
        }
        round_trip(variants[i], t, len, 1);
    }
    /* version 2 without the line is valid, and written as version 1 */
    {
        size_t len;
        char *t = replaced(TRAINED, line, "", &len);
        st_model *m = NULL;
        CHECK(st_model_parse(t, len, NULL, &m, NULL) == ST_OK, "version 2 without a training line parses");
        if (m) {
            size_t n;
            char *w = write_model(m, &n);
            CHECK(!strncmp(w, "supertok-model 1\n", 17) && n == len && !memcmp(w + 17, t + 17, len - 17),
                  "written as version 1");
            free(w);
            st_model_free(m);
        }
    }
    /* the fields of a parsed line */
    {
        st_model *m = NULL;
        size_t len;
        char *t = replaced(TRAINED, line, variants[2], &len);
        CHECK(st_model_parse(t, len, NULL, &m, NULL) == ST_OK, "parse superbpe");
        if (m) {
            CHECK(m->has_training && m->tr_algorithm == ST_ALGORITHM_SUPERBPE && m->tr_mode == ST_TRAIN_PAPER &&
                      m->tr_vocab_size == 262 && m->tr_supermerges == 5 && m->tr_ngram && m->tr_c_min == 20 &&
                      m->tr_max_len == 4,
                  "training fields");
            const uint32_t *pairs;
            const uint64_t *counts;
            CHECK(st_model_pairs(m, "supermerges", &pairs, &counts) == 1 && pairs[0] == 256 && pairs[1] == 257 &&
                      counts[0] == 12,
                  "st_model_pairs supermerges");
            CHECK(st_model_pairs(m, "merges", &pairs, &counts) == 2 && pairs[2] == 32 && counts[1] == 8, "st_model_pairs merges");
            CHECK(st_model_pairs(m, "specials", &pairs, &counts) == 0 && !pairs && !counts, "st_model_pairs other");
            st_model_free(m);
        }
        CHECK(st_model_parse(SUPER, sizeof SUPER - 1, NULL, &m, NULL) == ST_OK, "parse SUPER");
        if (m) {
            const uint32_t *pairs;
            const uint64_t *counts = (const uint64_t *)1;
            CHECK(st_model_pairs(m, "merges", &pairs, &counts) == 2 && pairs[2] == 512 && !counts, "pairs without counts");
            st_model_free(m);
        }
    }
    /* malformed lines, each named */
    bad_edit(RULES, "comment second comment\n", "comment second comment\ntraining algorithm=bpe mode=paper vocab_size=300 min_frequency=0 ngram_split=no\n",
             5, "training: this line needs format version 2");
    bad_edit(TRAINED, "algorithm=boundless", "algorithm=wordpiece", 4, "training: algorithm: 'wordpiece' is not one of bpe, boundless, superbpe");
    bad_edit(TRAINED, "mode=paper vocab_size", "vocab_size=262 mode=paper", 4, "training: expected 'mode=<value>' here");
    bad_edit(TRAINED, "mode=paper", "mode=hf", 4, "training: mode hf trains no superwords");
    bad_edit(TRAINED, "vocab_size=262", "vocab_size=26x", 4, "training: vocab_size: '26x' is not a decimal number");
    bad_edit(TRAINED, "vocab_size=262", "vocab_size=", 4, "training: expected 'vocab_size=<value>'");
    bad_edit(TRAINED, "min_frequency=0 ", "min_frequency=0  ", 4, "training: an empty field");
    bad_edit(TRAINED, "min_frequency=0 ngram_split=no", "min_frequency=0 supermerges=1 ngram_split=no", 4,
             "training: expected 'ngram_split=<value>' here");
    bad_edit(TRAINED, "algorithm=boundless", "algorithm=superbpe", 4, "training: expected 'supermerges=<value>' here");
    bad_edit(TRAINED, "ngram_split=no", "ngram_split=no c_min=3", 4, "training: unexpected field 'c_min=3' at the end");
    bad_edit(TRAINED, "ngram_split=no", "ngram_split=yes c_min=3", 4, "training: the line ends where 'max_len=<value>' was expected");
    bad_edit(TRAINED, "ngram_split=no", "ngram_split=maybe", 4, "training: ngram_split: 'maybe' is not one of no, yes");
    bad_edit(TRAINED, " ngram_split=no", "", 4, "training: the line ends where 'ngram_split=<value>' was expected");
    bad_edit(TRAINED, "training algorithm", "training  algorithm", 4, "training: an empty field");
    bad_edit(TRAINED, "training algorithm=boundless mode=paper vocab_size=262 min_frequency=0 ngram_split=no", "training", 4,
             "training: missing value");
    bad_edit(TRAINED, "kind rules\n", "kind rules\ntraining algorithm=bpe\n", 6, "'training' is out of place");
    bad_edit(TRAINED, "kind rules", "normalizer nfc", 5, "unknown key 'normalizer' where 'kind' was expected (not in format version 2)");
    /* the superword models of vectors/models (version 2, written by the reference) */
    static const char *supers[] = {"super_bytes_small", "super_ube_small"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.stmodel", g_dir, supers[i]);
        size_t len = 0;
        char *text = read_file(path, &len);
        if (!text) {
            printf("  %s absent, skipped\n", path);
            continue;
        }
        CHECK(!strncmp(text, "supertok-model 2\n", 17), "%s: version 2", supers[i]);
        round_trip(supers[i], text, len, 1);
        truncations(supers[i], text, len);
        damage(supers[i], text, len, 2000);
        free(text);
    }
    truncations("TRAINED", TRAINED, sizeof TRAINED - 1);
    damage("TRAINED", TRAINED, sizeof TRAINED - 1, 3000);
    {
        /* (without the supermerges, which only the superword encoder loads) */
        size_t len;
        char *t = replaced(TRAINED, "supermerges 1 counts\n256 257 12\n", "", &len);
        char *copy = (char *)malloc(len + 1);
        memcpy(copy, t, len + 1);
        test_out_of_memory(copy, len);
        free(copy);
    }
}

/* An allocator that keeps each block's size in front of it and counts a free given another size:
 * a host allocator may rely on the size it is told. */
static size_t g_wrong_sizes, g_live_blocks;
static void *sized_alloc(void *ctx, size_t size) {
    (void)ctx;
    size_t *b = (size_t *)malloc(size + 16);
    if (!b) return NULL;
    b[0] = size;
    g_live_blocks++;
    return (char *)b + 16;
}
static void sized_free(void *ctx, void *p, size_t size) {
    (void)ctx;
    size_t *b = (size_t *)(void *)((char *)p - 16);
    if (b[0] != size) g_wrong_sizes++;
    g_live_blocks--;
    free(b);
}

/* Every block a model holds is freed with the size it was allocated with, a section of 0 pairs
 * included. */
static void test_free_sizes(void) {
    static const char ZERO[] = "supertok-model 1\nname zero\nkind rules\nalphabet bytes\npattern o200k\n"
                               "script-aware no\nmerges 0\nsupermerges 0 counts\nspecials 0\nend\n";
    const char *texts[] = {RULES, SUPER, ZERO};
    size_t lens[] = {sizeof RULES - 1, sizeof SUPER - 1, sizeof ZERO - 1};
    st_allocator al = {sized_alloc, sized_free, NULL};
    for (int i = 0; i < 3; i++) {
        st_model *m = NULL;
        st_error err;
        g_wrong_sizes = g_live_blocks = 0;
        st_status st = st_model_parse(texts[i], lens[i], &al, &m, &err);
        CHECK(st == ST_OK, "model %d parses: %s", i, err.message);
        st_model_free(m);
        CHECK(g_wrong_sizes == 0 && g_live_blocks == 0, "model %d: %zu frees of another size, %zu blocks left", i,
              g_wrong_sizes, g_live_blocks);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) g_dir = argv[1];
    test_round_trips();
    test_encodings();
    test_shared_specials();
    test_many_specials_descending();
    test_malformed();
    test_training_line();
    test_free_sizes();
    static const char *names[] = {"bytes_small", "ube_small"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.stmodel", g_dir, names[i]);
        size_t len = 0;
        char *text = read_file(path, &len);
        CHECK(text != NULL, "cannot read %s", path);
        if (!text) continue;
        round_trip(names[i], text, len, 1);
        truncations(names[i], text, len);
        damage(names[i], text, len, 10000);
        test_out_of_memory(text, len);
        free(text);
    }
    truncations("RULES", RULES, sizeof RULES - 1);
    truncations("SUPER", SUPER, sizeof SUPER - 1);
    damage("RULES", RULES, sizeof RULES - 1, 3000);
    damage("SUPER", SUPER, sizeof SUPER - 1, 3000);
    size_t n;
    char *r = ranks_model(&n);
    truncations("RANKS", r, n);
    damage("RANKS", r, n, 2000);
    test_out_of_memory(r, n);
    free(r);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
