// libFuzzer harness for HuggingFace tokenizer.json files and their compact images
// (st_encoding_new_tokenizer_json: formats/json.c, formats/tokenizer_json.c, formats/hf_compact.c,
// encode/hf_encoding.c; docs/formats/tokenizer-json.md).
//
// Build (from the repository root; Debian: apt-get install clang libclang-rt-14-dev):
//
//   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//         -Icore_c/include core_c/src/*/*.c core_c/tests/fuzz_tokenizer_json.c -o fuzz_tokenizer_json
//   mkdir -p /tmp/fuzz_tj && cp vectors/tokenizer_json/*.json /tmp/fuzz_tj/
//   ./fuzz_tokenizer_json -max_total_time=180 -max_len=65536 /tmp/fuzz_tj
//
// Each input is a tokenizer.json or a compact image (in a buffer of exactly its length, so ASan
// sees any read past it); a first byte 0x80 or above (no JSON text or image starts so) picks an
// allocation to fail (its value - 0x80) and the rest is the file:
//  - st_encoding_new_tokenizer_json gives ST_OK, or ST_ERR_MALFORMED_MODEL with unit
//    ST_UNIT_BYTE, err.offset inside the input and a non-empty NUL-terminated message (never
//    ST_ERR_UNKNOWN_PATTERN or ST_ERR_UNSUPPORTED_PATTERN: a regex the core does not implement is
//    a malformed model naming the field), or ST_ERR_OUT_OF_MEMORY only when the hook failed an
//    allocation; no encoding is returned with an error;
//  - on success, a fixed multilingual text (with added-token strings and text NFC changes) is
//    encoded with ST_SPECIAL_ALLOW_ALL and with no policy: both succeed, and the ids decode
//    (st_decode, raw bytes) to the text, or to its NFC form for a model with the NFC normalizer
//    (a byte-level model has a token for every byte, and an added token, matched or not, decodes
//    to its content, which is what the text held there: normalized ones are matched in the
//    normalized text); st_encoding_save_compact (size query, a buffer one short, the image) then
//    st_encoding_new_tokenizer_json on the image give the same ids under both policies, the same
//    pattern and added flags, and the image saved again is the same bytes;
//  - nothing leaks, and the most memory held at once (parse, encoding, encode, save, reload) is
//    at most ALLOC_BASE + ALLOC_PER_BYTE bytes per byte of the input (the allocator hook counts
//    every byte the core asks for): a small file, or a small image whose counts or merges claim
//    much, never makes the core allocate gigabytes.
//
// Without libFuzzer the same file builds a replay driver: cc -DST_FUZZ_MAIN ... fuzz_tokenizer_json.c
// runs each file named on the command line, 4 hostile compact images it builds (add_hostile), the
// compact image of each that loads, and each of these again with one of its first 48 allocations
// failed; with "--mutate N SEED file..." it also runs N
// random damages of these inputs (bytes inserted, deleted, replaced; runs deleted; splices
// between inputs; digits and varints changed; truncation; JSON-aware damages: a key repeated, a
// value's type swapped, deep nesting, escapes; an allocation failed), seeded.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "fuzz_support.h"

static void fail(const char *what, const uint8_t *data, size_t size) {
    fprintf(stderr, "invariant broken: %s\ninput (%zu bytes):\n", what, size);
    fwrite(data, 1, size < 4096 ? size : 4096, stderr);
    fprintf(stderr, "\n");
    if (getenv("ST_FUZZ_DUMP")) {
        FILE *f = fopen(getenv("ST_FUZZ_DUMP"), "wb");
        if (f) { fwrite(data, 1, size, f); fclose(f); }
    }
    abort();
}

/* Memory stays proportional to the input: the most held at once is at most ALLOC_BASE +
 * ALLOC_PER_BYTE per byte of the input. ALLOC_BASE: the fixed tables (the encoder's scratch, the
 * pre-tokenizer, hash tables' minimum sizes: about 1.1 MB for the smallest model). ALLOC_PER_BYTE,
 * measured (the driver prints the largest ratio): a tokenizer.json costs 3.5 a byte (Llama 3's:
 * 31.6 MB for 9.08 MB), its compact image up to 31 (Qwen 3's: 25.5 MB for 0.81 MB: the merges'
 * tokens are not in the image), and the hostile image whose merges derive about as many bytes as
 * the reader allows (ST__HF_COMPACT_DERIVED_PER_BYTE, 8 a byte; each derived byte costs about 8 in
 * the model and the encoding's tables) 60 a byte beyond the base. */
#define ALLOC_BASE ((size_t)4 << 20)
#define ALLOC_PER_BYTE 96
static size_t g_max_peak, g_max_peak_size, g_max_ratio_peak, g_max_ratio_size; /* the report */
static long g_ok, g_refused, g_oom;


static void check_error(const st_error *err, st_status st, size_t size, const budget *b, const uint8_t *data) {
    if (getenv("ST_FUZZ_VERBOSE"))
        fprintf(stderr, "%s unit %u offset %llu: %.*s\n", st_status_name(st), (unsigned)err->unit,
                (unsigned long long)err->offset, (int)sizeof err->message, err->message);
    if (st == ST_ERR_OUT_OF_MEMORY) {
        if (!b->failed) fail("ST_ERR_OUT_OF_MEMORY with no allocation failed", data, size);
        return;
    }
    if (st == ST_ERR_UNKNOWN_PATTERN || st == ST_ERR_UNSUPPORTED_PATTERN) fail("a pattern status for a file", data, size);
    if (st != ST_ERR_MALFORMED_MODEL) fail("status is neither OK, MALFORMED_MODEL nor OUT_OF_MEMORY", data, size);
    if (err->status != (uint32_t)st) fail("err.status differs from the status", data, size);
    if (err->unit != ST_UNIT_BYTE) fail("a malformed file's error is not in bytes", data, size);
    if (err->offset > size) fail("error offset past the input", data, size);
    if (!memchr(err->message, 0, sizeof err->message) || !err->message[0]) fail("bad message", data, size);
}

/* The text every model encodes: scripts, digits, whitespace runs, contractions, text NFC changes
 * (e + U+0301, U+212B, a Hangul jamo sequence), added-token strings the seeds define. */
static const char TEXT[] =
    "Hello world, it's 2024! WE'LL  see 1234567.\r\n\tdef f(x): return x**2  \n\n"
    "中文，日本語のテキスト カタカナ 한국어 Ελληνικά русский عربي हिन्दी ภาษาไทย "
    "e\xcc\x81 \xe2\x84\xab \xe1\x84\x80\xe1\x85\xa1 \xef\xac\x81 caf\xc3\xa9 \xf0\x9f\x99\x82\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
    "<|s|>x<|e|> <think>a</think> <a><b><a> <\xef\xbd\x9cx\xef\xbd\x9c> <|endoftext|> \x00\x7f end   ";
#define MAX_IDS 1024

/* Encode TEXT under a policy (ALLOW_ALL) or none; the ids into ids, their count returned
 * ((size_t)-1 when an allocation the hook failed stopped it). */
static const budget *g_budget;
static size_t encode(const st_encoding *enc, int allow_all, uint32_t *ids, const uint8_t *data, size_t size) {
    st_special_policy pol = {NULL, 0, NULL, 0, ST_SPECIAL_ALLOW_ALL, NULL, NULL};
    size_t k = 0;
    st_error err;
    st_status es = st_encode(enc, TEXT, sizeof TEXT - 1, allow_all ? &pol : NULL, ST_OFFSETS_BYTES, ids, NULL, MAX_IDS, &k, &err);
    if (es == ST_ERR_OUT_OF_MEMORY && g_budget->failed) return (size_t)-1;
    if (es != ST_OK) {
        fprintf(stderr, "st_encode: %s %s\n", st_status_name(es), err.message);
        fail("a loaded model does not encode the text", data, size);
    }
    return k;
}

static void round_trip(const st_encoding *enc, const uint32_t *ids, size_t k, const uint8_t *want, size_t want_len,
                       const uint8_t *data, size_t size) {
    static uint8_t out[4 * sizeof TEXT];
    size_t dl = 0;
    if (st_decode(enc, ids, k, out, sizeof out, &dl, NULL) != ST_OK) fail("decode failed", data, size);
    if (dl != want_len || memcmp(out, want, dl)) {
        fprintf(stderr, "decoded: %.*s\n", (int)dl, (const char *)out);
        fail("the ids do not decode to the (normalized) text", data, size);
    }
}

static int nfc_changes_text(void) { return 1; } /* TEXT holds e + U+0301 */

static void check_encoding(st_encoding *enc, budget *b, st_allocator *a, const uint8_t *data, size_t size) {
    static uint32_t ids1[MAX_IDS], ids2[MAX_IDS], ids3[MAX_IDS], ids4[MAX_IDS];
    static char nfc[4 * sizeof TEXT];
    size_t nfc_len = 0;
    if (st_normalize_nfc(TEXT, sizeof TEXT - 1, nfc, NULL, sizeof nfc, &nfc_len, NULL) != ST_OK) fail("NFC", data, size);
    g_budget = b;
    size_t k1 = encode(enc, 1, ids1, data, size), k2 = encode(enc, 0, ids2, data, size);
    if (k1 == (size_t)-1 || k2 == (size_t)-1) return;
    /* the model's normalizer: whichever of the text and its NFC form the first decode gives */
    static uint8_t out[4 * sizeof TEXT];
    size_t dl = 0;
    if (st_decode(enc, ids1, k1, out, sizeof out, &dl, NULL) != ST_OK) fail("decode failed", data, size);
    int is_nfc = dl == nfc_len && !memcmp(out, nfc, dl) && nfc_changes_text();
    const uint8_t *want = is_nfc ? (const uint8_t *)nfc : (const uint8_t *)TEXT;
    size_t want_len = is_nfc ? nfc_len : sizeof TEXT - 1;
    round_trip(enc, ids1, k1, want, want_len, data, size);
    round_trip(enc, ids2, k2, want, want_len, data, size);
    /* the compact image */
    size_t n = 0, n2 = 0;
    st_error err;
    st_status st = st_encoding_save_compact(enc, NULL, 0, &n, &err);
    if (st == ST_ERR_OUT_OF_MEMORY && b->failed) return;
    if (st != ST_ERR_BUFFER_TOO_SMALL || n < 8) fail("st_encoding_save_compact's size query", data, size);
    uint8_t *img = (uint8_t *)malloc(n);
    img[n - 1] = 0xA5;
    st = st_encoding_save_compact(enc, img, n - 1, &n2, &err);
    if (!(st == ST_ERR_OUT_OF_MEMORY && b->failed) && (st != ST_ERR_BUFFER_TOO_SMALL || n2 != n || img[n - 1] != 0xA5))
        fail("st_encoding_save_compact into a buffer one short", data, size);
    st = st_encoding_save_compact(enc, img, n, &n2, &err);
    if (st == ST_ERR_OUT_OF_MEMORY && b->failed) { free(img); return; }
    if (st != ST_OK || n2 != n) fail("st_encoding_save_compact", data, size);
    st_encoding *e2 = NULL;
    st = st_encoding_new_tokenizer_json((const char *)img, n, a, &e2, &err);
    if (st == ST_ERR_OUT_OF_MEMORY && b->failed) { free(img); return; }
    if (st != ST_OK) {
        fprintf(stderr, "reloading the image: %s at %llu: %s\n", st_status_name(st), (unsigned long long)err.offset, err.message);
        fail("the compact image of a loaded model does not load", data, size);
    }
    size_t k3 = encode(e2, 1, ids3, data, size), k4 = encode(e2, 0, ids4, data, size);
    if (k3 == (size_t)-1 || k4 == (size_t)-1) { free(img); st_encoding_free(e2); return; }
    if (k3 != k1 || memcmp(ids1, ids3, k1 * 4)) fail("the compact image gives other ids (all specials allowed)", data, size);
    if (k4 != k2 || memcmp(ids2, ids4, k2 * 4)) fail("the compact image gives other ids (no policy)", data, size);
    if (st_encoding_pattern(e2) != st_encoding_pattern(enc)) fail("the compact image has another pattern", data, size);
    if (st_encoding_n_special(e2) != st_encoding_n_special(enc)) fail("the compact image has other specials", data, size);
    for (uint32_t s = 0; s < st_encoding_n_special(enc); s++) {
        uint32_t id = st_encoding_special_id(enc, s);
        if (st_encoding_added_flags(e2, id) != st_encoding_added_flags(enc, id)) fail("the compact image's added flags differ", data, size);
    }
    size_t n3 = 0;
    uint8_t *img2 = (uint8_t *)malloc(n);
    st = st_encoding_save_compact(e2, img2, n, &n3, &err);
    if (!(st == ST_ERR_OUT_OF_MEMORY && b->failed) && (st != ST_OK || n3 != n || memcmp(img, img2, n)))
        fail("the image's image differs from the image", data, size);
    free(img2);
    free(img);
    st_encoding_free(e2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    budget b = {-1, 0, 0, 0, 0};
    const uint8_t *whole = data;
    size_t whole_size = size;
    if (size && data[0] >= 0x80) { /* byte 0: an allocation to fail */
        b.left = data[0] - 0x80;
        data++;
        size--;
    }
    st_allocator a = {budget_alloc, budget_free, &b};
    char *file = (char *)malloc(size ? size : 1);
    if (size) memcpy(file, data, size);
    st_error err;
    st_encoding *enc = NULL;
    st_status st = st_encoding_new_tokenizer_json(file, size, &a, &enc, &err);
    if (st != ST_OK) {
        check_error(&err, st, size, &b, whole);
        if (enc) fail("an encoding returned with an error", whole, whole_size);
        if (st == ST_ERR_OUT_OF_MEMORY) g_oom++;
        else g_refused++;
    } else {
        if (!enc) fail("ST_OK without an encoding", whole, whole_size);
        g_ok++;
        check_encoding(enc, &b, &a, whole, whole_size);
        st_encoding_free(enc);
    }
    free(file);
    if (b.live != 0) fail("a leak (allocations not freed)", whole, whole_size);
    if (b.peak > ALLOC_BASE + (size_t)ALLOC_PER_BYTE * size) {
        fprintf(stderr, "peak %zu bytes for %zu\n", b.peak, size);
        fail("memory not proportional to the input", whole, whole_size);
    }
    if (b.peak > g_max_peak) {
        g_max_peak = b.peak;
        g_max_peak_size = size;
    }
    if (size >= 4096 && b.peak * (double)(g_max_ratio_size ? g_max_ratio_size : 1) > (double)g_max_ratio_peak * size) {
        g_max_ratio_peak = b.peak;
        g_max_ratio_size = size;
    }
    return 0;
}

#ifdef ST_FUZZ_MAIN
typedef struct pool {
    uint8_t **d;
    size_t *n;
    int count, cap;
} pool;

static void pool_add(pool *p, uint8_t *d, size_t n) {
    if (p->count == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->d = (uint8_t **)realloc(p->d, (size_t)p->cap * sizeof *p->d);
        p->n = (size_t *)realloc(p->n, (size_t)p->cap * sizeof *p->n);
    }
    p->d[p->count] = d;
    p->n[p->count++] = n;
}

/* The compact image of a file that loads (NULL if it does not). */
static uint8_t *image_of(const uint8_t *d, size_t n, size_t *len) {
    st_encoding *enc = NULL;
    if (st_encoding_new_tokenizer_json((const char *)d, n, NULL, &enc, NULL) != ST_OK) return NULL;
    size_t m = 0;
    st_encoding_save_compact(enc, NULL, 0, &m, NULL);
    uint8_t *img = (uint8_t *)malloc(m);
    st_encoding_save_compact(enc, img, m, len, NULL);
    st_encoding_free(enc);
    return img;
}

static void run(const uint8_t *d, size_t n) { /* in a buffer of exactly its length */
    uint8_t *exact = (uint8_t *)malloc(n ? n : 1);
    if (n) memcpy(exact, d, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
}

static void run_failing(const uint8_t *d, size_t n, int k) { /* allocation k refused */
    uint8_t *t = (uint8_t *)malloc(n + 1);
    t[0] = (uint8_t)(0x80 + k);
    memcpy(t + 1, d, n);
    LLVMFuzzerTestOneInput(t, n + 1);
    free(t);
}

/* Damages that know JSON: a key repeated, a value's type swapped, deep nesting, escapes. */
static const char *const TOKENS[] = {
    "\"", "\\", "\\u", "\\ud800", "\\udc00", "\\ud83d\\ude42", "\\u0000", "\\n", "\\\"", "{", "}", "[", "]", ",", ":",
    "null", "true", "false", "0", "-1", "1e5", "1.5", "4294967296", "2097151", "2097150", "99999999999999999999", " ",
    "\n", "\t", "\x01", "\xC3", "\xFF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\"type\":", "\"BPE\"", "\"ByteLevel\"",
    "\"Split\"", "\"NFC\"", "\"Sequence\"", "\"special\":true,", "\"normalized\":true,", "\"lstrip\":true,",
    "\"content\":\"<|s|>\",", "\"id\":0,", "\"ignore_merges\":true,", "\"dropout\":0.1,", "\"model\":{},",
    "\"added_tokens\":[],", "\"merges\":[],", "\"vocab\":{},", "\"\\u0120\":3,", "[\"a\",\"b\"],", "\"a b\",",
    "\"\\u0120 t\",", "\"Regex\":\"\\\\s+\"", "\"use_regex\":false", "\"add_prefix_space\":true", "\"truncation\":{},",
    "\"decoder\":null,", "\"x\":1,", "{\"a\":[{\"b\":{}}]}", "[[[[[[[[[[", "]]]]]]]]]]", "sthfvc",
};

static void mutate_once(uint8_t **tp, size_t *np, size_t *capp, const pool *p) {
    uint8_t *t = *tp;
    size_t n = *np, cap = *capp;
#define ENSURE(extra)                                                         \
    do {                                                                      \
        if (n + (extra) > cap) {                                              \
            cap = (n + (extra)) * 2;                                          \
            t = (uint8_t *)realloc(t, cap);                                   \
        }                                                                     \
    } while (0)
    size_t at = n ? (size_t)(rnd() % n) : 0;
    switch (rnd() % 13) {
    case 0: if (n) t[at] = (uint8_t)rnd(); break;                          /* replace a byte */
    case 1: if (n) { memmove(t + at, t + at + 1, n - at - 1); n--; } break; /* delete a byte */
    case 2: case 3: {                                                      /* insert a token */
        const char *tok = TOKENS[rnd() % (sizeof TOKENS / sizeof *TOKENS)];
        size_t tl = strlen(tok);
        ENSURE(tl);
        memmove(t + at + tl, t + at, n - at);
        memcpy(t + at, tok, tl);
        n += tl;
        break;
    }
    case 4: { /* delete a run */
        size_t k = (size_t)(rnd() % 256);
        if (at + k > n) k = n - at;
        memmove(t + at, t + at + k, n - at - k);
        n -= k;
        break;
    }
    case 5: { /* a digit changed, or a number made larger */
        for (size_t i = at; i < n; i++)
            if (t[i] >= '0' && t[i] <= '9') {
                if (rnd() % 3) t[i] = (uint8_t)('0' + rnd() % 10);
                else { ENSURE(3); memmove(t + i + 3, t + i, n - i); memcpy(t + i, "999", 3); n += 3; }
                break;
            }
        break;
    }
    case 6: { /* a varint changed (compact images): a byte with or without its continuation bit */
        if (n > 8) { size_t i = 8 + (size_t)(rnd() % (n - 8)); t[i] = (uint8_t)(rnd() % 3 ? (t[i] ^ (1u << (rnd() % 8))) : rnd()); }
        break;
    }
    case 7: n = at; break; /* truncated */
    case 8: {              /* a splice: a slice of another input replaces a slice */
        const uint8_t *o = p->d[rnd() % (uint64_t)p->count];
        size_t on = p->n[rnd() % (uint64_t)p->count]; /* may be another's length: clamp */
        (void)on;
        int which = (int)(rnd() % (uint64_t)p->count);
        o = p->d[which];
        on = p->n[which];
        if (!on) break;
        size_t from = (size_t)(rnd() % on), len = (size_t)(rnd() % 512);
        if (from + len > on) len = on - from;
        size_t del = (size_t)(rnd() % 512);
        if (at + del > n) del = n - at;
        ENSURE(len);
        memmove(t + at + len, t + at + del, n - at - del);
        memcpy(t + at, o + from, len);
        n = n - del + len;
        break;
    }
    case 9: { /* a key repeated: the text from a '"' to the next ',' copied after itself */
        size_t q = at;
        while (q < n && t[q] != '"') q++;
        size_t e = q;
        while (e < n && t[e] != ',' && e - q < 4096) e++;
        if (e < n && t[e] == ',') {
            size_t len = e + 1 - q;
            ENSURE(len);
            memmove(t + e + 1 + len, t + e + 1, n - e - 1);
            memcpy(t + e + 1, t + q, len);
            n += len;
        }
        break;
    }
    case 10: { /* a value's type swapped: the value after a ':' replaced */
        size_t q = at;
        while (q < n && t[q] != ':') q++;
        if (q >= n) break;
        q++;
        size_t e = q;
        int depth = 0, instr = 0;
        while (e < n) { /* to the end of the value (roughly) */
            uint8_t c = t[e];
            if (instr) { if (c == '\\') e++; else if (c == '"') instr = 0; }
            else if (c == '"') instr = 1;
            else if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') { if (!depth) break; depth--; }
            else if (c == ',' && !depth) break;
            e++;
        }
        if (e > n) e = n;
        static const char *const VALUES[] = {"null", "1", "\"s\"", "[]", "{}", "true", "[1,2]", "{\"type\":\"BPE\"}", "-0", "\"\""};
        const char *v = VALUES[rnd() % (sizeof VALUES / sizeof *VALUES)];
        size_t vl = strlen(v);
        ENSURE(vl);
        memmove(t + q + vl, t + e, n - e);
        memcpy(t + q, v, vl);
        n = q + vl + (n - e);
        break;
    }
    case 11: { /* deep nesting: a run of '[' (or '{"a":') inserted */
        size_t k = 1 + (size_t)(rnd() % 700);
        int obj = (int)(rnd() % 2);
        size_t unit = obj ? 5 : 1;
        ENSURE(k * unit);
        memmove(t + at + k * unit, t + at, n - at);
        for (size_t i = 0; i < k; i++) memcpy(t + at + i * unit, obj ? "{\"a\":" : "[", unit);
        n += k * unit;
        break;
    }
    default: { /* a slice of this input duplicated (more tokens, merges, added tokens) */
        size_t len = (size_t)(rnd() % 2048);
        if (at + len > n) len = n - at;
        ENSURE(len);
        memmove(t + at + len, t + at, n - at);
        memcpy(t + at + len, t + at, len);
        n += len;
    }
    }
#undef ENSURE
    *tp = t;
    *np = n;
    *capp = cap;
}

/* Hostile compact images, built here (a few hundred bytes whose merges claim much memory):
 * 30 merges that each join the last token to itself (a gigabyte of token bytes if the reader
 * derived them), 4000 merges each a byte longer than the last (36 MB from 16 KB), as many ids as
 * the counts allow with no bytes behind them, a small image that loads, and one that loads with
 * about as many derived bytes as an image may have (hf_compact.c: 8 a byte). */
typedef struct img {
    uint8_t *p;
    size_t n, cap;
} img;
static void img_byte(img *m, uint8_t b) {
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 1024;
        m->p = (uint8_t *)realloc(m->p, m->cap);
    }
    m->p[m->n++] = b;
}
static void img_leb(img *m, uint64_t x) {
    do {
        uint8_t b = (uint8_t)(x & 0x7F);
        x >>= 7;
        img_byte(m, (uint8_t)(b | (x ? 0x80 : 0)));
    } while (x);
}
/* merges: l, r, made (n_merges of them); one added token (id, special) "<|s|>" if added_id */
static void hostile(pool *p, uint32_t n_ids, const uint32_t *merges, uint32_t n_merges, uint32_t added_id) {
    img m = {NULL, 0, 0};
    for (int k = 0; k < 8; k++) img_byte(&m, (uint8_t)"sthfvc\0\1"[k]);
    img_leb(&m, 1); /* gpt2 */
    img_leb(&m, 0);
    img_leb(&m, n_ids);
    img_leb(&m, n_merges);
    img_leb(&m, added_id ? 1 : 0);
    for (uint32_t b = 0; b < 256; b++) img_leb(&m, b);
    uint32_t prev = 0;
    for (uint32_t k = 0; k < n_merges; k++) {
        int64_t d = (int64_t)merges[3 * k + 2] - (int64_t)prev;
        img_leb(&m, merges[3 * k]);
        img_leb(&m, merges[3 * k + 1]);
        img_leb(&m, d >= 0 ? (uint64_t)d << 1 : ((uint64_t)(-d) << 1) - 1);
        prev = merges[3 * k + 2];
    }
    img_leb(&m, 0); /* no token spelled out */
    if (added_id) {
        img_leb(&m, added_id);
        img_leb(&m, 1);
        img_leb(&m, 5);
        for (int k = 0; k < 5; k++) img_byte(&m, (uint8_t)"<|s|>"[k]);
    }
    pool_add(p, m.p, m.n);
}
static void add_hostile(pool *p) {
    static uint32_t mg[3 * 4000];
    mg[0] = 97, mg[1] = 97, mg[2] = 256; /* doubling */
    for (uint32_t k = 1; k < 30; k++) mg[3 * k] = mg[3 * k + 1] = 255 + k, mg[3 * k + 2] = 256 + k;
    hostile(p, 256 + 30, mg, 30, 0);
    mg[0] = 97, mg[1] = 98, mg[2] = 256; /* chain */
    for (uint32_t k = 1; k < 4000; k++) mg[3 * k] = 255 + k, mg[3 * k + 1] = 99, mg[3 * k + 2] = 256 + k;
    hostile(p, 256 + 4000, mg, 4000, 0);
    hostile(p, 2 * (1 + 256) + 65536, mg, 1, 300); /* wide */
    mg[3] = 256, mg[4] = 99, mg[5] = 257, mg[6] = 32, mg[7] = 257, mg[8] = 258; /* small: loads */
    hostile(p, 260, mg, 3, 259);
    /* long: a chain of C tokens, each a byte longer, then every one of them joined to each byte:
     * about as many derived bytes as an image may have (7 a byte of it) */
    enum { C = 64 };
    uint32_t *lm = (uint32_t *)malloc(sizeof(uint32_t) * 3 * (C + C * 256));
    uint32_t n = 0, id = 256;
    lm[0] = 97, lm[1] = 97, lm[2] = id++, n = 1;
    for (uint32_t k = 1; k < C; k++, n++) lm[3 * n] = id - 1, lm[3 * n + 1] = 97, lm[3 * n + 2] = id++;
    for (uint32_t k = 0; k < C; k++)
        for (uint32_t b = 0; b < 256; b++, n++) {
            if (b == 97 && k + 1 < C) { n--; continue; } /* made by the chain already */
            lm[3 * n] = 256 + k, lm[3 * n + 1] = b, lm[3 * n + 2] = id++;
        }
    hostile(p, id, lm, n, 0);
    free(lm);
}

int main(int argc, char **argv) {
    long mutate = 0;
    int first = 1;
    if (argc > 3 && strcmp(argv[1], "--mutate") == 0) {
        mutate = atol(argv[2]);
        g_rng = (uint64_t)atoll(argv[3]) * 0x9E3779B97F4A7C15ull + 1;
        first = 4;
    }
    pool p = {NULL, NULL, 0, 0};
    for (int i = first; i < argc; i++) {
        size_t n = 0;
        uint8_t *d = read_all(argv[i], &n);
        if (!d) { perror(argv[i]); return 1; }
        pool_add(&p, d, n);
    }
    add_hostile(&p);
    int n_files = p.count;
    for (int i = 0; i < n_files; i++) { /* each file, its image */
        size_t m = 0;
        uint8_t *img = image_of(p.d[i], p.n[i], &m);
        if (img) pool_add(&p, img, m);
    }
    for (int i = 0; i < p.count; i++) {
        run(p.d[i], p.n[i]);
        if (p.n[i] < (1u << 20))
            for (int k = 0; k < 48; k++) run_failing(p.d[i], p.n[i], k);
    }
    printf("fuzz_tokenizer_json: %d inputs (%d files, 5 hostile compact images, the images of those that load) and each "
           "with one of its first 48 allocations failed\n", p.count, n_files - 5);
    for (long r = 0; r < mutate && p.count; r++) {
        int f = (int)(rnd() % (uint64_t)p.count);
        size_t n = p.n[f], cap = n + 1024;
        uint8_t *t = (uint8_t *)malloc(cap);
        memcpy(t, p.d[f], n);
        int edits = 1 + (int)(rnd() % 4);
        for (int e = 0; e < edits; e++) mutate_once(&t, &n, &cap, &p);
        if (rnd() % 8 == 0) run_failing(t, n, (int)(rnd() % 64));
        else run(t, n);
        free(t);
    }
    if (mutate) printf("fuzz_tokenizer_json: %ld mutated inputs, no invariant broken\n", mutate);
    printf("fuzz_tokenizer_json: %ld loaded, %ld refused, %ld out of memory (an allocation failed)\n", g_ok, g_refused, g_oom);
    printf("fuzz_tokenizer_json: the most memory held at once: %zu bytes, for an input of %zu bytes (bound: %zu + %d a byte)\n",
           g_max_peak, g_max_peak_size, ALLOC_BASE, ALLOC_PER_BYTE);
    if (g_max_ratio_size)
        printf("fuzz_tokenizer_json: the most memory a byte among inputs of 4 KiB or more: %.1f (%zu bytes for %zu)\n",
               (double)g_max_ratio_peak / (double)g_max_ratio_size, g_max_ratio_peak, g_max_ratio_size);
    for (int i = 0; i < p.count; i++) free(p.d[i]);
    free(p.d);
    free(p.n);
    return 0;
}
#endif
