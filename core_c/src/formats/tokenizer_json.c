/* HuggingFace tokenizer.json, read (tokenizer_json.h). The file is walked once per section with
 * the JSON reader (json.h); positions of the top-level members are noted first, so the sections
 * are read in the order they depend on one another (the vocabulary before the merges and added
 * tokens), whatever order the file has them in. Memory: the file's own size a few times over. */
#include "tokenizer_json.h"
#include "json.h"
#include "../base/hash.h"
#include "../text/utf8.h"

/* ---- GPT-2's byte-level alphabet ---------------------------------------------------------- */

/* Bytes 33..126, 161..172 and 174..255 stand for themselves; the 68 others, in order, for
 * U+0100 onwards. */
static int byte_stands_for_itself(uint32_t b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); }

uint32_t st__byte_level_char(uint8_t b) {
    if (byte_stands_for_itself(b)) return b;
    uint32_t k = 0;
    for (uint32_t x = 0; x < b; x++) k += !byte_stands_for_itself(x);
    return 256 + k;
}

/* The byte character cp stands for, or -1 (cp not in the alphabet). */
static int byte_of_char(uint32_t cp) {
    if (cp < 256) return byte_stands_for_itself(cp) ? (int)cp : -1;
    if (cp >= 256 + 68) return -1;
    uint32_t k = cp - 256;
    for (uint32_t x = 0; x < 256; x++)
        if (!byte_stands_for_itself(x) && k-- == 0) return (int)x;
    return -1;
}

/* The byte that the byte-level character at p + *i stands for, advancing *i past it; -1 when the
 * character is not in the alphabet. p is valid UTF-8 (the JSON reader's strings are). */
static int alphabet_byte(const int16_t *table, const uint8_t *p, size_t *i) {
    uint32_t cp;
    *i += st__utf8_decode(p + *i, &cp);
    return cp < 324 ? table[cp] : -1;
}

/* Decode UTF-8 p[0..n) (valid: the JSON reader checked it) as byte-level text into out (n bytes
 * of room); its length, or -1 when a character is outside the alphabet. */
static long byte_level_decode(const uint8_t *p, size_t n, const int16_t *table, uint8_t *out) {
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        int b = alphabet_byte(table, p, &i);
        if (b < 0) return -1;
        out[w++] = (uint8_t)b;
    }
    return (long)w;
}

/* ---- growing buffers ---------------------------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf;

static int buf_reserve(buf *b, const st_allocator *a, size_t more) {
    if (b->cap - b->len >= more) return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > ((size_t)-1) / 2) return 0;
        cap *= 2;
    }
    uint8_t *p = (uint8_t *)st__alloc(a, cap);
    if (!p) return 0;
    if (b->len) st__memcpy(p, b->p, b->len);
    st__free(a, b->p, b->cap);
    b->p = p;
    b->cap = cap;
    return 1;
}

static void buf_free(buf *b, const st_allocator *a) {
    st__free(a, b->p, b->cap);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- the reader's state ------------------------------------------------------------------- */

typedef struct vocab_entry {
    uint32_t name_off, name_len; /* the token's text (raw UTF-8) in names */
    uint32_t id;
    size_t at; /* the byte offset of its key in the file */
} vocab_entry;

typedef struct reader {
    st__json j;
    const st_allocator *a;
    st_error *err;
    int16_t byte_table[324];
    buf names;   /* vocabulary texts, then scratch for joined merge parts */
    buf entries; /* vocab_entry */
    uint32_t *slots; /* name table: entry index + 1, 0 empty */
    uint32_t mask;
    buf merges;  /* uint32 triples */
    buf added;   /* st__hf_added */
    buf text;    /* added contents */
    size_t at_model, at_vocab, at_merges, at_added, at_normalizer, at_pre, at_post, at_decoder;
    int has_model, has_vocab, has_merges, has_added, has_normalizer, has_pre, has_post, has_decoder;
    uint32_t pattern, flags;
} reader;

/* An error naming the field: "<where>: <what>" at byte offset `at`. */
static st_status fail(reader *r, size_t at, const char *where, const char *what) {
    st__error_set(r->err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, where);
    st__error_append(r->err, ": ");
    st__error_append(r->err, what);
    return ST_ERR_MALFORMED_MODEL;
}

/* Prefix the report the JSON reader left with the field's name. */
static st_status in_field(reader *r, st_status st, const char *where) {
    if (st == ST_OK || !r->err) return st;
    char msg[sizeof r->err->message];
    size_t n = 0;
    while (n + 1 < sizeof msg && r->err->message[n]) { msg[n] = r->err->message[n]; n++; }
    msg[n] = 0;
    size_t w = 0; /* a report naming the field already (this reader's own) keeps its name */
    while (where[w] && msg[w] == where[w]) w++;
    if (!where[w] && (msg[w] == ':' || msg[w] == '[' || msg[w] == '.')) return st;
    uint64_t at = r->err->offset;
    st__error_set(r->err, st, ST_UNIT_BYTE, at, where);
    st__error_append(r->err, ": ");
    st__error_append(r->err, msg);
    return st;
}

/* Read the string at *i into b (appended); its offset and length. */
static st_status read_string(reader *r, size_t *i, buf *b, uint32_t *off, uint32_t *len) {
    size_t p = *i, n;
    st_status st = st__json_string(&r->j, &p, NULL, 0, &n);
    if (st != ST_OK) return st;
    if (n > 0xFFFFFFFFu - b->len || !buf_reserve(b, r->a, n + 1))
        return st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    p = *i;
    st__json_string(&r->j, &p, b->p + b->len, n, &n);
    *off = (uint32_t)b->len;
    *len = (uint32_t)n;
    b->len += n;
    *i = p;
    return ST_OK;
}

/* A short string at *i (a key or a type name) into out[0..cap): 1 if it fits, 0 if not (then it
 * is no name the reader knows). */
static st_status short_string(reader *r, size_t *i, char *out, size_t cap, int *fits) {
    size_t n;
    st_status st = st__json_string(&r->j, i, (uint8_t *)out, cap - 1, &n);
    if (st != ST_OK) return st;
    *fits = n < cap;
    out[n < cap ? n : cap - 1] = 0;
    return ST_OK;
}

static size_t st__strlen_small(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static int streq(const char *a, const char *b) {
    while (*a && *a == *b) { a++; b++; }
    return *a == *b;
}

/* ---- the name table: a token's text to its vocabulary entry -------------------------------- */

static uint32_t name_find(const reader *r, const uint8_t *p, size_t n) {
    uint64_t h = st__hash_bytes(p, n);
    const vocab_entry *e = (const vocab_entry *)(void *)r->entries.p;
    for (uint32_t k = (uint32_t)h & r->mask;; k = (k + 1) & r->mask) {
        uint32_t s = r->slots[k];
        if (!s) return ST__NO_TOKEN_ID;
        const vocab_entry *x = &e[s - 1];
        if (x->name_len == n && st__memcmp(r->names.p + x->name_off, p, n) == 0) return s - 1;
    }
}

static st_status name_table(reader *r, size_t n_entries) {
    uint32_t cap = 16;
    while (cap < 2 * n_entries) {
        if (cap >= 0x40000000u) return st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        cap <<= 1;
    }
    r->slots = (uint32_t *)st__alloc(r->a, (size_t)cap * 4);
    if (!r->slots) return st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(r->slots, 0, (size_t)cap * 4);
    r->mask = cap - 1;
    const vocab_entry *e = (const vocab_entry *)(void *)r->entries.p;
    for (size_t x = 0; x < n_entries; x++) {
        const uint8_t *p = r->names.p + e[x].name_off;
        uint32_t earlier = name_find(r, p, e[x].name_len);
        if (earlier != ST__NO_TOKEN_ID) {
            fail(r, e[x].at, "model.vocab", "the token ");
            st__error_append_quoted(r->err, p, e[x].name_len);
            st__error_append(r->err, " appears twice");
            return ST_ERR_MALFORMED_MODEL;
        }
        uint64_t h = st__hash_bytes(p, e[x].name_len);
        uint32_t k = (uint32_t)h & r->mask;
        while (r->slots[k]) k = (k + 1) & r->mask;
        r->slots[k] = (uint32_t)x + 1;
    }
    return ST_OK;
}

/* ---- sections ----------------------------------------------------------------------------- */

/* The top level: note where each member's value is. */
static st_status read_top(reader *r) {
    size_t i = 0;
    st_status st = st__json_open(&r->j, &i, '{');
    if (st != ST_OK) return in_field(r, st, "tokenizer.json");
    for (int first = 1;; first = 0) {
        int more;
        if ((st = st__json_next(&r->j, &i, '}', first, &more)) != ST_OK) return in_field(r, st, "tokenizer.json");
        if (!more) break;
        size_t key_at = i;
        char key[32];
        int fits;
        if ((st = short_string(r, &i, key, sizeof key, &fits)) != ST_OK) return in_field(r, st, "tokenizer.json");
        if ((st = st__json_colon(&r->j, &i)) != ST_OK) return in_field(r, st, "tokenizer.json");
        size_t at = st__json_ws(&r->j, i);
        if (fits && streq(key, "model")) { r->at_model = at; r->has_model = 1; }
        else if (fits && streq(key, "added_tokens")) { r->at_added = at; r->has_added = 1; }
        else if (fits && streq(key, "normalizer")) { r->at_normalizer = at; r->has_normalizer = 1; }
        else if (fits && streq(key, "pre_tokenizer")) { r->at_pre = at; r->has_pre = 1; }
        else if (fits && streq(key, "post_processor")) { r->at_post = at; r->has_post = 1; }
        else if (fits && streq(key, "decoder")) { r->at_decoder = at; r->has_decoder = 1; }
        else if (fits && (streq(key, "truncation") || streq(key, "padding"))) {
            size_t q = i;
            if (!st__json_null(&r->j, &q))
                return fail(r, at, key, "only null is supported (truncation and padding change the ids)");
        } else if (!(fits && streq(key, "version"))) {
            size_t q = key_at, n;
            fail(r, key_at, "tokenizer.json", "unknown field ");
            uint8_t name[64];
            if (st__json_string(&r->j, &q, name, sizeof name, &n) == ST_OK)
                st__error_append_quoted(r->err, name, n < sizeof name ? n : sizeof name);
            return ST_ERR_MALFORMED_MODEL;
        }
        if ((st = st__json_skip(&r->j, &i)) != ST_OK) return in_field(r, st, key);
    }
    i = st__json_ws(&r->j, i);
    if (i != r->j.n) return fail(r, i, "tokenizer.json", "text after the closing brace");
    if (!r->has_model) return fail(r, 0, "tokenizer.json", "no model");
    return ST_OK;
}

/* The value at *i is null or "" (a prefix or suffix BPE would add: none). */
static st_status null_or_empty(reader *r, size_t *i, const char *where) {
    if (st__json_null(&r->j, i)) return ST_OK;
    size_t at = st__json_ws(&r->j, *i), n;
    st_status st = st__json_string(&r->j, i, NULL, 0, &n);
    if (st != ST_OK || n) return fail(r, at, where, "only null or \"\" is supported");
    return ST_OK;
}

static st_status read_model(reader *r) {
    size_t i = r->at_model;
    st_status st = st__json_open(&r->j, &i, '{');
    if (st != ST_OK) return in_field(r, st, "model");
    int typed = 0;
    for (int first = 1;; first = 0) {
        int more, fits;
        if ((st = st__json_next(&r->j, &i, '}', first, &more)) != ST_OK) return in_field(r, st, "model");
        if (!more) break;
        size_t key_at = i;
        char key[40];
        if ((st = short_string(r, &i, key, sizeof key, &fits)) != ST_OK) return in_field(r, st, "model");
        if ((st = st__json_colon(&r->j, &i)) != ST_OK) return in_field(r, st, "model");
        size_t at = st__json_ws(&r->j, i);
        if (!fits) return fail(r, key_at, "model", "unknown field");
        if (streq(key, "type")) {
            char t[16];
            size_t q = i;
            if ((st = short_string(r, &q, t, sizeof t, &fits)) != ST_OK) return in_field(r, st, "model.type");
            if (!fits || !streq(t, "BPE")) return fail(r, at, "model.type", "only BPE models are supported");
            typed = 1;
        } else if (streq(key, "dropout")) {
            size_t q = i;
            if (!st__json_null(&r->j, &q)) return fail(r, at, "model.dropout", "only null is supported (dropout makes ids random)");
        } else if (streq(key, "continuing_subword_prefix") || streq(key, "end_of_word_suffix")) {
            size_t q = i;
            if ((st = null_or_empty(r, &q, streq(key, "end_of_word_suffix") ? "model.end_of_word_suffix"
                                                                                : "model.continuing_subword_prefix")) != ST_OK)
                return st;
        } else if (streq(key, "ignore_merges")) {
            size_t q = i;
            int b;
            if ((st = st__json_bool(&r->j, &q, &b)) != ST_OK) return in_field(r, st, "model.ignore_merges");
            if (b) r->flags |= ST__HF_IGNORE_MERGES;
        } else if (streq(key, "vocab")) {
            r->at_vocab = at;
            r->has_vocab = 1;
        } else if (streq(key, "merges")) {
            r->at_merges = at;
            r->has_merges = 1;
        } else if (!(streq(key, "unk_token") || streq(key, "fuse_unk") || streq(key, "byte_fallback"))) {
            /* unk_token, fuse_unk and byte_fallback act on characters with no token; a byte-level
             * vocabulary has all 256 (checked below), so they never act */
            fail(r, key_at, "model", "unknown field ");
            st__error_append_quoted(r->err, (const uint8_t *)key, st__strlen_small(key));
            return ST_ERR_MALFORMED_MODEL;
        }
        if ((st = st__json_skip(&r->j, &i)) != ST_OK) return in_field(r, st, "model");
    }
    if (!typed) return fail(r, r->at_model, "model", "no \"type\" (only BPE models are supported)");
    if (!r->has_vocab) return fail(r, r->at_model, "model", "no vocab");
    if (!r->has_merges) return fail(r, r->at_model, "model", "no merges");
    return ST_OK;
}

static st_status read_vocab(reader *r, size_t *n_entries, uint32_t *max_id) {
    size_t i = r->at_vocab, n = 0;
    uint32_t top = 0;
    st_status st = st__json_open(&r->j, &i, '{');
    if (st != ST_OK) return in_field(r, st, "model.vocab");
    for (int first = 1;; first = 0) {
        int more;
        if ((st = st__json_next(&r->j, &i, '}', first, &more)) != ST_OK) return in_field(r, st, "model.vocab");
        if (!more) break;
        vocab_entry e;
        e.at = i;
        if ((st = read_string(r, &i, &r->names, &e.name_off, &e.name_len)) != ST_OK) return in_field(r, st, "model.vocab");
        if (!e.name_len) return fail(r, e.at, "model.vocab", "an empty token");
        if ((st = st__json_colon(&r->j, &i)) != ST_OK) return in_field(r, st, "model.vocab");
        if ((st = st__json_u32(&r->j, &i, &e.id)) != ST_OK) return in_field(r, st, "model.vocab");
        if (e.id >= ST__HF_MAX_IDS) return fail(r, e.at, "model.vocab", "an id above the 2097150 the core can hold");
        if (!buf_reserve(&r->entries, r->a, sizeof e)) return st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        st__memcpy(r->entries.p + r->entries.len, &e, sizeof e);
        r->entries.len += sizeof e;
        if (e.id > top) top = e.id;
        n++;
    }
    if (!n) return fail(r, r->at_vocab, "model.vocab", "no tokens");
    *n_entries = n;
    *max_id = top;
    return name_table(r, n);
}

/* The entry of the token whose text is p[0..n), or fail naming it. */
static st_status merge_part(reader *r, size_t at, size_t k, const uint8_t *p, size_t n, const char *what, uint32_t *entry) {
    *entry = name_find(r, p, n);
    if (*entry != ST__NO_TOKEN_ID) return ST_OK;
    st__error_set(r->err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "model.merges[");
    st__error_append_u64(r->err, k);
    st__error_append(r->err, "]: ");
    st__error_append(r->err, what);
    st__error_append(r->err, " ");
    st__error_append_quoted(r->err, p, n);
    st__error_append(r->err, " is not in the vocabulary");
    return ST_ERR_MALFORMED_MODEL;
}

/* A pair that repeats an earlier merge is refused at its offset (tokenizers would keep the later
 * rank; the rule table keeps one): an open-addressing table of the pairs, merge k's offset in
 * ats. */
static st_status repeated_merges(reader *r, const size_t *ats) {
    size_t n = r->merges.len / 12;
    const uint32_t *tri = (const uint32_t *)(void *)r->merges.p;
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    uint64_t *slots = (uint64_t *)st__alloc(r->a, cap * 8);
    if (!slots) return st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(slots, 0, cap * 8);
    st_status st = ST_OK;
    for (size_t k = 0; k < n && st == ST_OK; k++) {
        uint64_t key = ((uint64_t)tri[3 * k] << 21) | tri[3 * k + 1]; /* ids below 2^21 */
        size_t x = (size_t)st__mix64(key) & (cap - 1);
        while (slots[x] && (slots[x] >> 22) != key) x = (x + 1) & (cap - 1);
        if (slots[x]) {
            st__error_set(r->err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, ats[k], "model.merges[");
            st__error_append_u64(r->err, k);
            st__error_append(r->err, "]: the pair repeats merge ");
            st__error_append_u64(r->err, (slots[x] & 0x3FFFFF) - 1);
            st = ST_ERR_MALFORMED_MODEL;
        } else slots[x] = (key << 22) | (k + 1); /* k + 1 < 2^22 */
    }
    st__free(r->a, slots, cap * 8);
    return st;
}

static st_status read_merges(reader *r) {
    size_t i = r->at_merges;
    st_status st = st__json_open(&r->j, &i, '[');
    if (st != ST_OK) return in_field(r, st, "model.merges");
    buf scratch = {NULL, 0, 0}, ats = {NULL, 0, 0};
    const vocab_entry *e = (const vocab_entry *)(void *)r->entries.p;
    for (size_t k = 0;; k++) {
        int more;
        if ((st = st__json_next(&r->j, &i, ']', k == 0, &more)) != ST_OK) break;
        if (!more) break;
        size_t at = i;
        uint32_t off1, len1, off2, len2;
        scratch.len = 0;
        if (st__json_peek(&r->j, &i) == '[') { /* ["a", "b"] */
            int m2, parts = 0; /* exactly two strings, then the closing bracket */
            off1 = len1 = off2 = len2 = 0;
            if ((st = st__json_open(&r->j, &i, '[')) != ST_OK) break;
            if ((st = st__json_next(&r->j, &i, ']', 1, &m2)) != ST_OK) break;
            if (m2 && (st = read_string(r, &i, &scratch, &off1, &len1)) == ST_OK) parts = 1;
            if (st == ST_OK && m2) st = st__json_next(&r->j, &i, ']', 0, &m2);
            if (st == ST_OK && m2 && (st = read_string(r, &i, &scratch, &off2, &len2)) == ST_OK) parts = 2;
            if (st == ST_OK && m2) st = st__json_next(&r->j, &i, ']', 0, &m2);
            if (st != ST_OK) break;
            if (m2 || parts != 2) { st = fail(r, at, "model.merges", "a merge is a pair of two tokens"); break; }
        } else { /* "a b": exactly one space */
            uint32_t off, len;
            if ((st = read_string(r, &i, &scratch, &off, &len)) != ST_OK) break;
            uint32_t sp = len, spaces = 0;
            for (uint32_t x = 0; x < len; x++)
                if (scratch.p[off + x] == ' ') { spaces++; sp = x; }
            if (spaces != 1) {
                st__error_set(r->err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "model.merges[");
                st__error_append_u64(r->err, k);
                st__error_append(r->err, "]: ");
                st__error_append_quoted(r->err, scratch.p + off, len);
                st__error_append(r->err, " is not two tokens separated by one space");
                st = ST_ERR_MALFORMED_MODEL;
                break;
            }
            off1 = off; len1 = sp; off2 = off + sp + 1; len2 = len - sp - 1;
        }
        if (k >= ST__HF_MAX_IDS) { st = fail(r, at, "model.merges", "more than 2097150 merges"); break; }
        uint32_t l, rr, made;
        if ((st = merge_part(r, at, k, scratch.p + off1, len1, "the left part", &l)) != ST_OK) break;
        if ((st = merge_part(r, at, k, scratch.p + off2, len2, "the right part", &rr)) != ST_OK) break;
        if (!buf_reserve(&scratch, r->a, (size_t)len1 + len2)) { st = st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL); break; }
        size_t jo = scratch.len;
        st__memmove(scratch.p + jo, scratch.p + off1, len1);
        st__memmove(scratch.p + jo + len1, scratch.p + off2, len2);
        if ((st = merge_part(r, at, k, scratch.p + jo, (size_t)len1 + len2, "the joined token", &made)) != ST_OK) break;
        uint32_t tri[3] = {e[l].id, e[rr].id, e[made].id};
        if (!buf_reserve(&r->merges, r->a, sizeof tri)) { st = st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL); break; }
        st__memcpy(r->merges.p + r->merges.len, tri, sizeof tri);
        r->merges.len += sizeof tri;
        if (!buf_reserve(&ats, r->a, sizeof at)) { st = st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL); break; }
        st__memcpy(ats.p + ats.len, &at, sizeof at);
        ats.len += sizeof at;
    }
    buf_free(&scratch, r->a);
    if (st == ST_OK) {
        st = repeated_merges(r, (const size_t *)(void *)ats.p);
        buf_free(&ats, r->a);
        return st;
    }
    buf_free(&ats, r->a);
    return in_field(r, st, "model.merges");
}

static st_status read_added(reader *r) {
    if (!r->has_added) return ST_OK;
    size_t i = r->at_added;
    st_status st = st__json_open(&r->j, &i, '[');
    if (st != ST_OK) return in_field(r, st, "added_tokens");
    for (size_t k = 0;; k++) {
        int more;
        if ((st = st__json_next(&r->j, &i, ']', k == 0, &more)) != ST_OK) return in_field(r, st, "added_tokens");
        if (!more) break;
        size_t at = i;
        st__hf_added t = {0, 0, 0, 0};
        int has_id = 0, has_content = 0;
        if ((st = st__json_open(&r->j, &i, '{')) != ST_OK) return in_field(r, st, "added_tokens");
        for (int first = 1;; first = 0) {
            int m2, fits;
            if ((st = st__json_next(&r->j, &i, '}', first, &m2)) != ST_OK) return in_field(r, st, "added_tokens");
            if (!m2) break;
            size_t key_at = i;
            char key[16];
            if ((st = short_string(r, &i, key, sizeof key, &fits)) != ST_OK) return in_field(r, st, "added_tokens");
            if ((st = st__json_colon(&r->j, &i)) != ST_OK) return in_field(r, st, "added_tokens");
            uint32_t bit = 0;
            if (fits && streq(key, "id")) {
                if ((st = st__json_u32(&r->j, &i, &t.id)) != ST_OK) return in_field(r, st, "added_tokens");
                if (t.id >= ST__HF_MAX_IDS) return fail(r, key_at, "added_tokens", "an id above the 2097150 the core can hold");
                has_id = 1;
                continue;
            }
            if (fits && streq(key, "content")) {
                if ((st = read_string(r, &i, &r->text, &t.off, &t.len)) != ST_OK) return in_field(r, st, "added_tokens");
                has_content = 1;
                continue;
            }
            if (fits && streq(key, "special")) bit = ST__ADDED_SPECIAL;
            else if (fits && streq(key, "normalized")) bit = ST__ADDED_NORMALIZED;
            else if (fits && streq(key, "lstrip")) bit = ST__ADDED_LSTRIP;
            else if (fits && streq(key, "rstrip")) bit = ST__ADDED_RSTRIP;
            else if (fits && streq(key, "single_word")) bit = ST__ADDED_SINGLE_WORD;
            else return fail(r, key_at, "added_tokens", "unknown field");
            int b;
            if ((st = st__json_bool(&r->j, &i, &b)) != ST_OK) return in_field(r, st, "added_tokens");
            if (b) t.flags |= bit;
        }
        if (!has_id || !has_content) return fail(r, at, "added_tokens", has_id ? "a token with no content" : "a token with no id");
        if (!t.len) return fail(r, at, "added_tokens", "a token with empty content");
        if (t.flags & ST__ADDED_SINGLE_WORD) {
            fail(r, at, "added_tokens", "");
            st__error_append_quoted(r->err, r->text.p + t.off, t.len);
            st__error_append(r->err, " sets single_word, which is not supported yet");
            return ST_ERR_MALFORMED_MODEL;
        }
        if (!buf_reserve(&r->added, r->a, sizeof t)) return st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        st__memcpy(r->added.p + r->added.len, &t, sizeof t);
        r->added.len += sizeof t;
        (void)at;
    }
    return ST_OK;
}

/* ---- the pipeline's objects: normalizer, pre-tokenizer, decoder, post-processor -------------- */

/* The value of member `key` of the object at `at`: *pos set and 1, or 0 if it has none. */
static st_status member(reader *r, size_t at, const char *where, const char *key, size_t *pos, int *found) {
    size_t i = at;
    *found = 0;
    st_status st = st__json_open(&r->j, &i, '{');
    if (st != ST_OK) return in_field(r, st, where);
    for (int first = 1;; first = 0) {
        int more, fits;
        if ((st = st__json_next(&r->j, &i, '}', first, &more)) != ST_OK) return in_field(r, st, where);
        if (!more) return ST_OK;
        char k[40];
        if ((st = short_string(r, &i, k, sizeof k, &fits)) != ST_OK) return in_field(r, st, where);
        if ((st = st__json_colon(&r->j, &i)) != ST_OK) return in_field(r, st, where);
        if (fits && streq(k, key)) {
            *pos = st__json_ws(&r->j, i);
            *found = 1;
            return ST_OK;
        }
        if ((st = st__json_skip(&r->j, &i)) != ST_OK) return in_field(r, st, where);
    }
}

/* The "type" of the object at `at` into type[0..32). */
static st_status type_of(reader *r, size_t at, const char *where, char type[32]) {
    size_t pos;
    int found, fits;
    st_status st = member(r, at, where, "type", &pos, &found);
    if (st != ST_OK) return st;
    if (!found) return fail(r, at, where, "no \"type\"");
    if ((st = short_string(r, &pos, type, 32, &fits)) != ST_OK) return in_field(r, st, where);
    if (!fits) type[0] = 0;
    return ST_OK;
}

static st_status flag_of(reader *r, size_t at, const char *where, const char *key, int *value) {
    size_t pos;
    int found;
    st_status st = member(r, at, where, key, &pos, &found);
    if (st != ST_OK) return st;
    *value = 0;
    if (!found) return ST_OK;
    st = st__json_bool(&r->j, &pos, value);
    return in_field(r, st, where);
}

static st_status unsupported_type(reader *r, size_t at, const char *where, const char *type) {
    fail(r, at, where, "type ");
    st__error_append_quoted(r->err, (const uint8_t *)type, st__strlen_small(type));
    st__error_append(r->err, " is not supported");
    return ST_ERR_MALFORMED_MODEL;
}

static st_status read_normalizer(reader *r) {
    if (!r->has_normalizer) return ST_OK;
    size_t i = r->at_normalizer;
    if (st__json_null(&r->j, &i)) return ST_OK;
    char type[32];
    st_status st = type_of(r, r->at_normalizer, "normalizer", type);
    if (st != ST_OK) return st;
    if (streq(type, "NFC")) { r->flags |= ST__HF_NFC; return ST_OK; }
    if (!streq(type, "Sequence")) return unsupported_type(r, r->at_normalizer, "normalizer", type);
    size_t pos;
    int found;
    if ((st = member(r, r->at_normalizer, "normalizer", "normalizers", &pos, &found)) != ST_OK) return st;
    if (!found) return fail(r, r->at_normalizer, "normalizer", "a Sequence with no \"normalizers\"");
    if ((st = st__json_open(&r->j, &pos, '[')) != ST_OK) return in_field(r, st, "normalizer.normalizers");
    for (int first = 1;; first = 0) {
        int more;
        if ((st = st__json_next(&r->j, &pos, ']', first, &more)) != ST_OK) return in_field(r, st, "normalizer.normalizers");
        if (!more) return ST_OK;
        size_t at = pos;
        if ((st = type_of(r, at, "normalizer.normalizers", type)) != ST_OK) return st;
        if (!streq(type, "NFC")) return unsupported_type(r, at, "normalizer.normalizers", type);
        r->flags |= ST__HF_NFC;
        if ((st = st__json_skip(&r->j, &pos)) != ST_OK) return in_field(r, st, "normalizer.normalizers");
    }
}

/* The pre-tokenizers the core implements, as the files write them: the Split regexes by their
 * exact text (docs/design.md §5), after ByteLevel's own (GPT-2's, use_regex true). */
static const char *const LLAMA3_RE =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char *const QWEN2_RE =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char *const DEEPSEEK_RE[3] = {
    "\\p{N}{1,3}",
    "[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"};

#define MAX_STEPS 8
typedef struct step {
    int split;           /* 1 Split, 0 ByteLevel */
    uint32_t off, len;   /* Split: its regex in r->text */
    int use_regex;       /* ByteLevel */
    size_t at;
} step;

static st_status read_step(reader *r, size_t at, step *steps, int *n, int depth) {
    char type[32];
    st_status st = type_of(r, at, "pre_tokenizer", type);
    if (st != ST_OK) return st;
    if (streq(type, "Sequence")) {
        size_t pos;
        int found;
        if (depth > 2) return fail(r, at, "pre_tokenizer", "Sequences nested too deep");
        if ((st = member(r, at, "pre_tokenizer", "pretokenizers", &pos, &found)) != ST_OK) return st;
        if (!found) return fail(r, at, "pre_tokenizer", "a Sequence with no \"pretokenizers\"");
        if ((st = st__json_open(&r->j, &pos, '[')) != ST_OK) return in_field(r, st, "pre_tokenizer.pretokenizers");
        for (int first = 1;; first = 0) {
            int more;
            if ((st = st__json_next(&r->j, &pos, ']', first, &more)) != ST_OK) return in_field(r, st, "pre_tokenizer");
            if (!more) return ST_OK;
            if ((st = read_step(r, pos, steps, n, depth + 1)) != ST_OK) return st;
            if ((st = st__json_skip(&r->j, &pos)) != ST_OK) return in_field(r, st, "pre_tokenizer");
        }
    }
    if (*n >= MAX_STEPS) return fail(r, at, "pre_tokenizer", "more steps than any supported pre-tokenizer has");
    step *s = &steps[(*n)++];
    s->at = at;
    if (streq(type, "ByteLevel")) {
        int apf;
        s->split = 0;
        if ((st = flag_of(r, at, "pre_tokenizer", "add_prefix_space", &apf)) != ST_OK) return st;
        if (apf) return fail(r, at, "pre_tokenizer", "ByteLevel with add_prefix_space true is not supported");
        s->use_regex = 1; /* tokenizers' default */
        size_t pos;
        int found;
        if ((st = member(r, at, "pre_tokenizer", "use_regex", &pos, &found)) != ST_OK) return st;
        if (found && (st = st__json_bool(&r->j, &pos, &s->use_regex)) != ST_OK) return in_field(r, st, "pre_tokenizer");
        return ST_OK;
    }
    if (!streq(type, "Split")) return unsupported_type(r, at, "pre_tokenizer", type);
    s->split = 1;
    size_t pos, q;
    int found, invert;
    char behavior[24];
    if ((st = member(r, at, "pre_tokenizer", "behavior", &pos, &found)) != ST_OK) return st;
    int fits = 0;
    if (found && (st = short_string(r, &pos, behavior, sizeof behavior, &fits)) != ST_OK) return in_field(r, st, "pre_tokenizer");
    if (!found || !fits || !streq(behavior, "Isolated"))
        return fail(r, at, "pre_tokenizer", "a Split whose behavior is not Isolated is not supported");
    if ((st = flag_of(r, at, "pre_tokenizer", "invert", &invert)) != ST_OK) return st;
    if (invert) return fail(r, at, "pre_tokenizer", "a Split with invert true is not supported");
    if ((st = member(r, at, "pre_tokenizer", "pattern", &pos, &found)) != ST_OK) return st;
    if (!found) return fail(r, at, "pre_tokenizer", "a Split with no pattern");
    if ((st = member(r, pos, "pre_tokenizer.pattern", "Regex", &q, &found)) != ST_OK) return st;
    if (!found) return fail(r, pos, "pre_tokenizer.pattern", "only a Regex pattern is supported");
    if ((st = read_string(r, &q, &r->text, &s->off, &s->len)) != ST_OK) return in_field(r, st, "pre_tokenizer.pattern");
    return ST_OK;
}

static int step_is(const reader *r, const step *s, const char *re) {
    size_t n = st__strlen_small(re);
    return s->split && s->len == n && st__memcmp(r->text.p + s->off, re, n) == 0;
}

static st_status read_pre_tokenizer(reader *r) {
    size_t i = r->at_pre;
    if (!r->has_pre || st__json_null(&r->j, &i))
        return fail(r, r->has_pre ? r->at_pre : 0, "pre_tokenizer", "none: a byte-level BPE model needs ByteLevel");
    step steps[MAX_STEPS];
    int n = 0;
    size_t text_before = r->text.len;
    st_status st = read_step(r, r->at_pre, steps, &n, 0);
    if (st != ST_OK) return st;
    int byte_level_last = n > 0 && !steps[n - 1].split;
    r->pattern = 0;
    if (n == 1 && byte_level_last && steps[0].use_regex) r->pattern = ST_PATTERN_GPT2;
    else if (n == 2 && byte_level_last && !steps[1].use_regex && step_is(r, &steps[0], LLAMA3_RE)) r->pattern = ST_PATTERN_LLAMA3;
    else if (n == 2 && byte_level_last && !steps[1].use_regex && step_is(r, &steps[0], QWEN2_RE)) r->pattern = ST_PATTERN_QWEN2;
    else if (n == 4 && byte_level_last && !steps[3].use_regex && step_is(r, &steps[0], DEEPSEEK_RE[0]) &&
             step_is(r, &steps[1], DEEPSEEK_RE[2 - 1]) && step_is(r, &steps[2], DEEPSEEK_RE[2]))
        r->pattern = ST_PATTERN_DEEPSEEK_V3;
    if (r->pattern) { r->text.len = text_before; return ST_OK; }
    if (!byte_level_last) return fail(r, r->at_pre, "pre_tokenizer", "it does not end with ByteLevel (a byte-level model needs it)");
    for (int k = 0; k < n; k++) {
        if (!steps[k].split) continue;
        if (step_is(r, &steps[k], LLAMA3_RE) || step_is(r, &steps[k], QWEN2_RE) || step_is(r, &steps[k], DEEPSEEK_RE[0]) ||
            step_is(r, &steps[k], DEEPSEEK_RE[1]) || step_is(r, &steps[k], DEEPSEEK_RE[2]))
            continue;
        fail(r, steps[k].at, "pre_tokenizer", "the Split regex ");
        st__error_append_quoted(r->err, r->text.p + steps[k].off, steps[k].len);
        st__error_append(r->err, " is not one the core implements (Llama 3's, Qwen 2's, DeepSeek V3's)");
        return ST_ERR_MALFORMED_MODEL;
    }
    return fail(r, r->at_pre, "pre_tokenizer", "these steps are not a pre-tokenizer the core implements (GPT-2's ByteLevel, "
                                               "Llama 3's, Qwen 2's or DeepSeek V3's Split then ByteLevel)");
}

static st_status read_decoder(reader *r) {
    size_t i = r->at_decoder;
    if (!r->has_decoder || st__json_null(&r->j, &i))
        return fail(r, r->has_decoder ? r->at_decoder : 0, "decoder", "none (tokenizers would join the tokens with spaces): "
                                                                     "only ByteLevel is supported");
    char type[32];
    st_status st = type_of(r, r->at_decoder, "decoder", type);
    if (st != ST_OK) return st;
    return streq(type, "ByteLevel") ? ST_OK : unsupported_type(r, r->at_decoder, "decoder", type);
}

/* The post-processor adds tokens only when asked to (tokenizers' add_special_tokens), which the
 * core's encode never does; ByteLevel's moves offsets only. */
static st_status read_post(reader *r) {
    size_t i = r->at_post;
    if (!r->has_post || st__json_null(&r->j, &i)) return ST_OK;
    char type[32];
    st_status st = type_of(r, r->at_post, "post_processor", type);
    if (st != ST_OK) return st;
    if (streq(type, "ByteLevel") || streq(type, "TemplateProcessing")) return ST_OK;
    if (streq(type, "Sequence")) return ST_OK;
    return unsupported_type(r, r->at_post, "post_processor", type);
}

/* ---- putting it together ------------------------------------------------------------------ */

void st__hf_model_free(st__hf_model *m, const st_allocator *a) {
    if (m->block) st__free(a, m->block, m->block_size);
    st__memset(m, 0, sizeof *m);
}

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

int st__hf_model_alloc(st__hf_model *m, const st_allocator *a, uint32_t n_ids, size_t bytes_len, uint32_t n_merges,
                       uint32_t n_added, size_t text_len) {
    size_t off_size = align8(((size_t)n_ids + 1) * 4), kind_size = align8(n_ids), bytes_size = align8(bytes_len + 8),
           merge_size = align8((size_t)n_merges * 12), added_size = align8((size_t)n_added * sizeof(st__hf_added)),
           text_size = align8(text_len + 1);
    size_t total = off_size + kind_size + bytes_size + merge_size + added_size + text_size;
    uint8_t *block = (uint8_t *)st__alloc(a, total);
    if (!block) return 0;
    st__memset(block, 0, total);
    m->block = block;
    m->block_size = total;
    m->n_ids = n_ids;
    m->offsets = (uint32_t *)(void *)block;
    m->id_kind = block + off_size;
    m->bytes = block + off_size + kind_size;
    m->merges = (uint32_t *)(void *)(m->bytes + bytes_size);
    m->added = (st__hf_added *)(void *)((uint8_t *)m->merges + merge_size);
    m->text = (uint8_t *)m->added + added_size;
    m->n_merges = n_merges;
    m->n_added = n_added;
    return 1;
}

static void reader_free(reader *r) {
    buf_free(&r->names, r->a);
    buf_free(&r->entries, r->a);
    buf_free(&r->merges, r->a);
    buf_free(&r->added, r->a);
    buf_free(&r->text, r->a);
    if (r->slots) st__free(r->a, r->slots, ((size_t)r->mask + 1) * 4);
    r->slots = NULL;
}

/* The content of an added token decodes, under the ByteLevel decoder, to other bytes than its
 * own: every character is in the alphabet and one is not plain ASCII (tokenizers would decode
 * "Ġx" to " x"). */
static int decodes_otherwise(const reader *r, const uint8_t *p, size_t n) {
    int other = 0;
    for (size_t i = 0; i < n;) {
        size_t at = i;
        int b = alphabet_byte(r->byte_table, p, &i);
        if (b < 0) return 0; /* outside the alphabet: its UTF-8 bytes are what it decodes to */
        if (i - at > 1 || b != p[at]) other = 1;
    }
    return other;
}

static st_status assemble(reader *r, size_t n_entries, uint32_t max_vocab_id, st__hf_model *m) {
    const vocab_entry *e = (const vocab_entry *)(void *)r->entries.p;
    const st__hf_added *ad = (const st__hf_added *)(void *)r->added.p;
    size_t n_added = r->added.len / sizeof *ad, n_merges = r->merges.len / 12;
    uint32_t top = max_vocab_id;
    for (size_t k = 0; k < n_added; k++)
        if (ad[k].id > top) top = ad[k].id;
    if ((uint64_t)top + 1 > 2 * ((uint64_t)n_entries + n_added) + 65536)
        return fail(r, r->at_vocab, "model.vocab", "the ids leave most numbers below the largest unused");
    uint32_t n_ids = top + 1;
    if (!st__hf_model_alloc(m, r->a, n_ids, r->names.len + r->text.len, (uint32_t)n_merges, (uint32_t)n_added,
                            r->text.len))
        return st__error_set(r->err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    m->pattern = r->pattern;
    m->flags = r->flags;
    if (n_merges) st__memcpy(m->merges, r->merges.p, n_merges * 12);
    if (n_added) st__memcpy(m->added, ad, n_added * sizeof *ad);
    if (r->text.len) st__memcpy(m->text, r->text.p, r->text.len);

    /* Which id is what, and each id's length: a vocabulary token decoded from byte-level text
     * (ST__HF_TOKEN); one outside that alphabet must be an added token's (below). */
    enum { NOT_BYTE_LEVEL = 3 };
    uint8_t *scratch = m->bytes; /* decode into the bytes area first, to learn the lengths */
    for (size_t x = 0; x < n_entries; x++) {
        uint32_t id = e[x].id;
        if (m->id_kind[id]) {
            fail(r, e[x].at, "model.vocab", "id ");
            st__error_append_u64(r->err, id);
            st__error_append(r->err, " is given to two tokens");
            return ST_ERR_MALFORMED_MODEL;
        }
        long l = byte_level_decode(r->names.p + e[x].name_off, e[x].name_len, r->byte_table, scratch);
        m->id_kind[id] = l < 0 ? NOT_BYTE_LEVEL : ST__HF_TOKEN;
        m->offsets[id + 1] = l < 0 ? e[x].name_len : (uint32_t)l;
    }
    for (size_t k = 0; k < n_added; k++) {
        const st__hf_added *t = &ad[k];
        const uint8_t *c = r->text.p + t->off;
        uint8_t kind = m->id_kind[t->id];
        if (kind == ST__HF_ADDED) return fail(r, r->at_added, "added_tokens", "two added tokens have one id");
        if (kind == ST__HF_TOKEN) {
            fail(r, r->at_added, "added_tokens", "");
            st__error_append_quoted(r->err, c, t->len);
            st__error_append(r->err, " has the id of a byte-level token of the vocabulary, which is not supported");
            return ST_ERR_MALFORMED_MODEL;
        }
        if (kind == NOT_BYTE_LEVEL) { /* the vocabulary's entry for this id must be this text */
            uint32_t x = name_find(r, c, t->len);
            if (x == ST__NO_TOKEN_ID || e[x].id != t->id) {
                fail(r, r->at_added, "added_tokens", "");
                st__error_append_quoted(r->err, c, t->len);
                st__error_append(r->err, " has the id of another vocabulary token");
                return ST_ERR_MALFORMED_MODEL;
            }
        }
        if (decodes_otherwise(r, c, t->len)) {
            fail(r, r->at_added, "added_tokens", "");
            st__error_append_quoted(r->err, c, t->len);
            st__error_append(r->err, " would decode to other text than its own under ByteLevel, which is not supported");
            return ST_ERR_MALFORMED_MODEL;
        }
        for (size_t q = 0; q < k; q++)
            if (ad[q].len == t->len && st__memcmp(r->text.p + ad[q].off, c, t->len) == 0) {
                fail(r, r->at_added, "added_tokens", "");
                st__error_append_quoted(r->err, c, t->len);
                st__error_append(r->err, " is added twice");
                return ST_ERR_MALFORMED_MODEL;
            }
        m->id_kind[t->id] = ST__HF_ADDED;
        m->offsets[t->id + 1] = t->len;
    }
    for (size_t x = 0; x < n_entries; x++)
        if (m->id_kind[e[x].id] == NOT_BYTE_LEVEL) {
            fail(r, e[x].at, "model.vocab", "the token ");
            st__error_append_quoted(r->err, r->names.p + e[x].name_off, e[x].name_len);
            st__error_append(r->err, " is not byte-level text and no added token, which is not supported");
            return ST_ERR_MALFORMED_MODEL;
        }
    for (uint32_t id = 0; id < n_ids; id++) m->offsets[id + 1] += m->offsets[id];
    for (size_t x = 0; x < n_entries; x++) {
        uint32_t id = e[x].id;
        if (m->id_kind[id] == ST__HF_TOKEN)
            (void)byte_level_decode(r->names.p + e[x].name_off, e[x].name_len, r->byte_table, m->bytes + m->offsets[id]);
    }
    for (size_t k = 0; k < n_added; k++)
        st__memcpy(m->bytes + m->offsets[ad[k].id], r->text.p + ad[k].off, ad[k].len);
    /* every byte is a token (the merges start from them: tokenizers drops a byte that is not) */
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t cp = st__byte_level_char((uint8_t)b);
        uint8_t u[2];
        size_t ul = cp < 0x80 ? 1 : 2;
        if (ul == 1) u[0] = (uint8_t)cp;
        else { u[0] = (uint8_t)(0xC0 | cp >> 6); u[1] = (uint8_t)(0x80 | (cp & 0x3F)); }
        uint32_t x = name_find(r, u, ul);
        if (x == ST__NO_TOKEN_ID) {
            fail(r, r->at_vocab, "model.vocab", "byte ");
            st__error_append_u64(r->err, b);
            st__error_append(r->err, " has no token (");
            st__error_append_quoted(r->err, u, ul);
            st__error_append(r->err, "): a byte-level vocabulary needs all 256");
            return ST_ERR_MALFORMED_MODEL;
        }
    }
    for (size_t k = 0; k < n_merges; k++)
        for (int q = 0; q < 3; q++)
            if (m->id_kind[m->merges[3 * k + q]] != ST__HF_TOKEN) {
                st__error_set(r->err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, r->at_merges, "model.merges[");
                st__error_append_u64(r->err, k);
                st__error_append(r->err, "]: a part is an added token outside the byte-level alphabet");
                return ST_ERR_MALFORMED_MODEL;
            }
    return ST_OK;
}

st_status st__hf_model_parse(const uint8_t *s, size_t n, const st_allocator *a, st__hf_model *m, st_error *err) {
    st__memset(m, 0, sizeof *m);
    reader r;
    st__memset(&r, 0, sizeof r);
    r.j.s = s;
    r.j.n = n;
    r.j.err = err;
    r.a = a;
    r.err = err;
    for (uint32_t cp = 0; cp < 324; cp++) r.byte_table[cp] = (int16_t)byte_of_char(cp);
    size_t n_entries = 0;
    uint32_t max_id = 0;
    st_status st = read_top(&r);
    if (st == ST_OK) st = read_model(&r);
    if (st == ST_OK) st = read_vocab(&r, &n_entries, &max_id);
    if (st == ST_OK) st = read_merges(&r);
    if (st == ST_OK) st = read_added(&r);
    if (st == ST_OK) st = read_normalizer(&r);
    if (st == ST_OK) st = read_pre_tokenizer(&r);
    if (st == ST_OK) st = read_decoder(&r);
    if (st == ST_OK) st = read_post(&r);
    if (st == ST_OK) st = assemble(&r, n_entries, max_id, m);
    if (st != ST_OK) st__hf_model_free(m, a);
    reader_free(&r);
    return st;
}
