// HuggingFace tokenizer.json files (st_encoding_new_tokenizer_json, docs/formats/tokenizer-json.md)
// from small hand-written files:
//
//   test_tokenizer_json
//
// - a byte-level BPE model (the 256 bytes as GPT-2's alphabet spells them, five merges, one token
//   no merge makes, a special and a non-special added token) loads with its merges in either
//   spelling ("a b" and ["a", "b"]) and gives the ids tokenizers 0.23.3 gives, with and without
//   ignore_merges, with every added token matched and with the special one as text (the ids below:
//   core_c/tests/tokenizer_json_ids.py, which builds the same files, prints them);
// - each refusal names its field and byte offset: model.type, dropout, an unknown Split regex,
//   single_word, a missing byte, an unknown merge part, a repeated merge, truncation, decoder none, an
//   unknown top-level field, and the JSON errors (a lone surrogate escape, a raw control
//   character, invalid UTF-8, nesting past 512, text after the end).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "supertok.h"

/* ---- the file ----------------------------------------------------------------------------- */

/* GPT-2's byte-level alphabet: byte b as a code point, then as UTF-8 into out (its length). */
static size_t byte_char(unsigned b, char *out) {
    unsigned cp = b, n = 0;
    if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174))) {
        for (unsigned x = 0; x < b; x++)
            if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174))) n++;
        cp = 256 + n;
    }
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

typedef struct str {
    char *p;
    size_t n, cap;
} str;

static void put(str *s, const char *t, size_t n) {
    if (s->n + n + 1 > s->cap) {
        s->cap = (s->n + n + 1) * 2;
        s->p = (char *)realloc(s->p, s->cap);
    }
    memcpy(s->p + s->n, t, n);
    s->n += n;
    s->p[s->n] = 0;
}
static void puts_(str *s, const char *t) { put(s, t, strlen(t)); }

/* The vocabulary: the 256 bytes (id = the byte; '"' and '\\' escaped), then the merges' tokens
 * and a token no merge makes. */
static const char *const MERGES[][2] = {{"a", "b"}, {"ab", "c"}, {"\xc4\xa0", "t"}, {"h", "e"}, {"\xc4\xa0t", "he"}};
static const char *const MADE[] = {"ab", "abc", "\xc4\xa0t", "he", "\xc4\xa0the"};
#define N_MERGES 5

/* The model file: merges spelled "a b" (legacy) or as pairs; ignore_merges; extra text put before
 * the model (more top-level members). */
static char *make_json(int legacy, int ignore_merges, size_t *len) {
    str s = {NULL, 0, 0};
    puts_(&s, "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":["
              "{\"id\":262,\"content\":\"<s>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
              "{\"id\":263,\"content\":\"<n>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":false}],"
              "\"normalizer\":null,"
              "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true},"
              "\"post_processor\":null,"
              "\"decoder\":{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true},"
              "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,\"continuing_subword_prefix\":null,"
              "\"end_of_word_suffix\":null,\"fuse_unk\":false,\"byte_fallback\":false,\"ignore_merges\":");
    puts_(&s, ignore_merges ? "true" : "false");
    puts_(&s, ",\"vocab\":{");
    char c[2];
    char num[16];
    for (unsigned b = 0; b < 256; b++) {
        size_t n = byte_char(b, c);
        puts_(&s, b ? ",\"" : "\"");
        if (n == 1 && (c[0] == '"' || c[0] == '\\')) puts_(&s, "\\");
        put(&s, c, n);
        snprintf(num, sizeof num, "\":%u", b);
        puts_(&s, num);
    }
    for (int k = 0; k < N_MERGES; k++) {
        snprintf(num, sizeof num, "\":%d", 256 + k);
        puts_(&s, ",\"");
        puts_(&s, MADE[k]);
        puts_(&s, num);
    }
    puts_(&s, ",\"xyz\":261},\"merges\":[");
    for (int k = 0; k < N_MERGES; k++) {
        puts_(&s, k ? "," : "");
        if (legacy) {
            puts_(&s, "\"");
            puts_(&s, MERGES[k][0]);
            puts_(&s, " ");
            puts_(&s, MERGES[k][1]);
            puts_(&s, "\"");
        } else {
            puts_(&s, "[\"");
            puts_(&s, MERGES[k][0]);
            puts_(&s, "\",\"");
            puts_(&s, MERGES[k][1]);
            puts_(&s, "\"]");
        }
    }
    puts_(&s, "]}}");
    *len = s.n;
    return s.p;
}

/* ---- loading and encoding ------------------------------------------------------------------- */

static const char TEXT[] = "xyz abc the\nxyz<s>x<n>ab thexyz <s";

/* The ids tokenizers 0.23.3 gives for TEXT: printed by
 *   /work/venv/bin/python core_c/tests/tokenizer_json_ids.py
 * (encode(TEXT, add_special_tokens=False).ids, and with encode_special_tokens=True), for
 * ignore_merges false then true. */
static const uint32_t WANT[2][2][32] = {
    {{120, 121, 122, 32, 257, 260, 10, 120, 121, 122, 262, 120, 263, 256, 260, 120, 121, 122, 32, 60, 115}, {120, 121, 122, 32, 257, 260, 10, 120, 121, 122, 60, 115, 62, 120, 263, 256, 260, 120, 121, 122, 32, 60, 115}},
    {{261, 32, 257, 260, 10, 261, 262, 120, 263, 256, 260, 120, 121, 122, 32, 60, 115}, {261, 32, 257, 260, 10, 261, 60, 115, 62, 120, 263, 256, 260, 120, 121, 122, 32, 60, 115}}
};
static const size_t WANT_N[2][2] = {{21, 23}, {17, 19}};

static void test_loads(void) {
    for (int legacy = 0; legacy < 2; legacy++)
        for (int ign = 0; ign < 2; ign++) {
            size_t len;
            char *json = make_json(legacy, ign, &len);
            st_encoding *enc = NULL;
            st_error err;
            st_status st = st_encoding_new_tokenizer_json(json, len, NULL, &enc, &err);
            CHECK(st == ST_OK, "legacy=%d ignore_merges=%d: %s at %llu: %s", legacy, ign, st_status_name(st),
                  (unsigned long long)err.offset, err.message);
            if (st != ST_OK) { free(json); continue; }
            CHECK(st_encoding_pattern(enc) == ST_PATTERN_GPT2, "pattern");
            /* both added tokens are the store's special strings; the flags tell them apart */
            CHECK(st_encoding_n_special(enc) == 2, "two added tokens");
            CHECK(st_encoding_added_flags(enc, 262) == ST_ADDED_SPECIAL, "262 is special");
            CHECK(st_encoding_added_flags(enc, 263) == ST_ADDED_ALWAYS, "263 is always matched");
            CHECK(st_encoding_added_flags(enc, 261) == 0, "261 is no added token");
            for (int as_text = 0; as_text < 2; as_text++) {
                st_special_policy all = {NULL, 0, NULL, 0, ST_SPECIAL_ALLOW_ALL, NULL, NULL};
                uint32_t ids[64];
                size_t n = 0;
                st = st_encode(enc, TEXT, sizeof TEXT - 1, as_text ? NULL : &all, ST_OFFSETS_BYTES, ids, NULL, 64, &n, &err);
                CHECK(st == ST_OK, "encode");
                int same = n == WANT_N[ign][as_text] && !memcmp(ids, WANT[ign][as_text], n * 4);
                CHECK(same, "legacy=%d ignore_merges=%d specials as text=%d: the ids differ from tokenizers'", legacy, ign, as_text);
                if (!same) {
                    for (size_t k = 0; k < n; k++) printf(" %u", ids[k]);
                    printf("\n");
                }
                uint8_t out[128];
                size_t dl = 0;
                CHECK(st_decode(enc, ids, n, out, sizeof out, &dl, NULL) == ST_OK && dl == sizeof TEXT - 1 &&
                          !memcmp(out, TEXT, dl), "decode");
            }
            st_encoding_free(enc);
            free(json);
        }
}

/* ---- refusals ------------------------------------------------------------------------------- */

typedef struct bad {
    const char *name;
    const char *find;    /* in the file (its first occurrence; NULL: append) */
    const char *replace; /* what replaces it */
    const char *message; /* a part of the report */
    const char *at;      /* the report's offset: where this occurs in the damaged file */
    int at_delta;        /* plus this */
} bad;

static const bad BAD[] = {
    {"model.type", "\"type\":\"BPE\"", "\"type\":\"WordPiece\"", "model.type: only BPE models are supported", "\"WordPiece\"", 0},
    {"dropout", "\"dropout\":null", "\"dropout\":0.1", "model.dropout: only null", "0.1", 0},
    {"unknown Split regex", "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}",
     "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\w+|\\\\s+\"},"
     "\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":false}]}",
     "is not one the core implements (Llama 3's, Qwen 2's, DeepSeek V3's)", "{\"type\":\"Split\"", 0},
    {"single_word", "\"single_word\":false", "\"single_word\":true", "sets single_word", "{\"id\":262", 0},
    {"missing byte", "\"q\":113,", "", "byte 113 has no token", "{\"\xc4\x80\"", 0},
    {"unknown merge part", "[\"a\",\"b\"]", "[\"zz\",\"b\"]", "model.merges[0]: the left part \"zz\" is not in the vocabulary", "[\"zz\"", 0},
    {"repeated merge", "[\"h\",\"e\"]", "[\"a\",\"b\"]", "model.merges[3]: the pair repeats merge 0", "[\"a\",\"b\"],[\"\xc4\xa0t\"", 0},
    {"truncation", "\"truncation\":null", "\"truncation\":{\"max_length\":5}", "truncation: only null", "{\"max_length\"", 0},
    {"decoder none", "\"decoder\":{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}",
     "\"decoder\":null", "decoder: none", "null,\"model\"", 0},
    {"unknown top-level field", "\"version\"", "\"versions\"", "tokenizer.json: unknown field \"versions\"", "\"versions\"", 0},
    {"lone surrogate escape", "\"xyz\":261", "\"x\\ud800z\":261", "surrogate", "\\ud800", 0},
    {"raw control character", "\"xyz\":261", "\"x\ty\":261", "control", "\ty", 0},
    {"invalid UTF-8", "\"xyz\":261", "\"x\xff\":261", "UTF-8", "\xff", 0},
    {"nesting past 512", "\"1.0\"", NULL, "nested too deep", "[[[[", 512},
    {"trailing text", NULL, " x", "tokenizer.json: text after the closing brace", " x", 1},
};

static char *damage(const char *json, size_t len, const bad *b, size_t *out_len) {
    str s = {NULL, 0, 0};
    if (!b->find) { /* appended */
        put(&s, json, len);
        puts_(&s, b->replace);
    } else {
        const char *p = strstr(json, b->find);
        if (!p) return NULL;
        put(&s, json, (size_t)(p - json));
        if (b->replace) puts_(&s, b->replace);
        else { /* 600 nested arrays for the value */
            for (int k = 0; k < 600; k++) puts_(&s, "[");
            for (int k = 0; k < 600; k++) puts_(&s, "]");
        }
        puts_(&s, p + strlen(b->find));
    }
    *out_len = s.n;
    return s.p;
}

static void test_refusals(void) {
    size_t len;
    char *json = make_json(0, 0, &len);
    for (size_t k = 0; k < sizeof BAD / sizeof *BAD; k++) {
        const bad *b = &BAD[k];
        size_t n;
        char *d = damage(json, len, b, &n);
        CHECK(d != NULL, "%s: the text to damage is not in the file", b->name);
        if (!d) continue;
        st_encoding *enc = NULL;
        st_error err;
        st_status st = st_encoding_new_tokenizer_json(d, n, NULL, &enc, &err);
        const char *at = strstr(d, b->at);
        size_t want_at = at ? (size_t)(at - d) + (size_t)b->at_delta : (size_t)-1;
        CHECK(st == ST_ERR_MALFORMED_MODEL && !enc, "%s: %s", b->name, st_status_name(st));
        CHECK(err.unit == ST_UNIT_BYTE, "%s: the offset is in bytes", b->name);
        CHECK(strstr(err.message, b->message) != NULL, "%s: the report \"%s\" does not say \"%s\"", b->name, err.message,
              b->message);
        CHECK(err.offset == want_at, "%s: offset %llu, want %zu (at: \"%.20s\")", b->name, (unsigned long long)err.offset,
              want_at, err.offset < n ? d + err.offset : "");
        st_encoding_free(enc);
        free(d);
    }
    free(json);
}

int main(void) {
    test_loads();
    test_refusals();
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
