/* The compact image of a HuggingFace BPE model (docs/formats/tokenizer-json.md, "The compact
 * form"): what st_encoding_save_compact writes of an encoding made from a tokenizer.json, for the
 * web and for C, loaded without the JSON (st_encoding_new_tokenizer_json takes either). Varints
 * (LEB128) throughout; a token's bytes are stored only when no merge spells them, since a merge's
 * token is its parts' bytes joined. The reader trusts the image for nothing: every count, id and
 * length is checked against what is left and against the limits the JSON reader applies. */
#include "tokenizer_json.h"

static const uint8_t MAGIC[8] = {'s', 't', 'h', 'f', 'v', 'c', 0, 1}; /* the last byte: version 1 */

int st__hf_compact_is(const uint8_t *s, size_t n) { return n >= 8 && st__memcmp(s, MAGIC, 8) == 0; }

/* ---- writing ------------------------------------------------------------------------------- */

typedef struct out {
    uint8_t *p;
    size_t cap, n;
} out;

static void put_byte(out *o, uint8_t b) {
    if (o->n < o->cap) o->p[o->n] = b;
    o->n++;
}

static void put_leb(out *o, uint64_t x) {
    do {
        uint8_t b = (uint8_t)(x & 0x7F);
        x >>= 7;
        put_byte(o, (uint8_t)(b | (x ? 0x80 : 0)));
    } while (x);
}

static void put_bytes(out *o, const uint8_t *p, size_t n) {
    for (size_t k = 0; k < n; k++) put_byte(o, p[k]);
}

/* Which tokens the image spells out (known[id] 2) and which the reader derives from the merges
 * (1), in the one pass read_image makes: a merge's parts must have bytes at its turn (a part made
 * only by a later merge, or by none, is spelled out), and its token then has its parts' bytes
 * joined unless it had bytes already. known: n_ids bytes, zeroed. */
static void derivable(const st__hf_model *m, uint8_t *known) {
    for (uint32_t id = 0; id < m->n_ids; id++)
        if (m->id_kind[id] == ST__HF_TOKEN && m->offsets[id + 1] - m->offsets[id] == 1) known[id] = 1;
    for (uint32_t k = 0; k < m->n_merges; k++) {
        uint32_t l = m->merges[3 * k], r = m->merges[3 * k + 1], t = m->merges[3 * k + 2];
        if (!known[l]) known[l] = 2;
        if (!known[r]) known[r] = 2;
        if (!known[t]) known[t] = 1;
    }
    for (uint32_t id = 0; id < m->n_ids; id++)
        if (m->id_kind[id] == ST__HF_TOKEN && !known[id]) known[id] = 2;
}

size_t st__hf_compact_write(const st__hf_model *m, uint8_t *dst, size_t cap, uint8_t *known) {
    out o = {dst, cap, 0};
    put_bytes(&o, MAGIC, 8);
    put_leb(&o, m->pattern);
    put_leb(&o, m->flags);
    put_leb(&o, m->n_ids);
    put_leb(&o, m->n_merges);
    put_leb(&o, m->n_added);
    uint32_t byte_id[256] = {0};
    for (uint32_t x = m->n_ids; x-- > 0;) /* each byte's token (the first, if a file had two) */
        if (m->id_kind[x] == ST__HF_TOKEN && m->offsets[x + 1] - m->offsets[x] == 1) byte_id[m->bytes[m->offsets[x]]] = x;
    for (uint32_t b = 0; b < 256; b++) put_leb(&o, byte_id[b]);
    uint32_t prev = 0;
    for (uint32_t k = 0; k < m->n_merges; k++) {
        uint32_t t = m->merges[3 * k + 2];
        put_leb(&o, m->merges[3 * k]);
        put_leb(&o, m->merges[3 * k + 1]);
        int64_t d = (int64_t)t - (int64_t)prev; /* zigzag: the made ids mostly climb by one */
        put_leb(&o, d >= 0 ? (uint64_t)d << 1 : ((uint64_t)(-d) << 1) - 1);
        prev = t;
    }
    st__memset(known, 0, m->n_ids);
    derivable(m, known);
    uint32_t explicit_n = 0;
    for (uint32_t id = 0; id < m->n_ids; id++) explicit_n += known[id] == 2;
    put_leb(&o, explicit_n);
    for (uint32_t id = 0; id < m->n_ids; id++) {
        if (known[id] != 2) continue;
        uint32_t a = m->offsets[id], n = m->offsets[id + 1] - a;
        put_leb(&o, id);
        put_leb(&o, n);
        put_bytes(&o, m->bytes + a, n);
    }
    for (uint32_t k = 0; k < m->n_added; k++) {
        const st__hf_added *t = &m->added[k];
        put_leb(&o, t->id);
        put_leb(&o, t->flags);
        put_leb(&o, t->len);
        put_bytes(&o, m->text + t->off, t->len);
    }
    return o.n;
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct in {
    const uint8_t *s;
    size_t n, pos;
} in;

static int get_leb(in *r, uint32_t *x) {
    uint64_t v = 0;
    for (int k = 0; k < 5; k++) {
        if (r->pos >= r->n) return 0;
        uint8_t c = r->s[r->pos++];
        v |= (uint64_t)(c & 0x7F) << (7 * k);
        if (!(c & 0x80)) {
            if (v > 0xFFFFFFFFull) return 0;
            *x = (uint32_t)v;
            return 1;
        }
    }
    return 0;
}

static st_status bad(st_error *err, size_t at, const char *what) {
    st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "compact image: ");
    st__error_append(err, what);
    return ST_ERR_MALFORMED_MODEL;
}

#define ST__STR_(x) #x
#define ST__STR(x) ST__STR_(x)

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

st_status st__hf_compact_read(const uint8_t *s, size_t n, const st_allocator *a, st__hf_model *m, st_error *err) {
    st__memset(m, 0, sizeof *m);
    if (!st__hf_compact_is(s, n)) return bad(err, 0, "not a compact image of a tokenizer.json model (version 1)");
    in r = {s, n, 8};
    uint32_t pattern, flags, n_ids, n_merges, n_added;
    if (!get_leb(&r, &pattern) || !get_leb(&r, &flags) || !get_leb(&r, &n_ids) || !get_leb(&r, &n_merges) ||
        !get_leb(&r, &n_added))
        return bad(err, r.pos, "the header is cut");
    if (pattern < ST_PATTERN_GPT2 || pattern > ST_PATTERN_DEEPSEEK_V3 || pattern == ST_PATTERN_SUPERBPE ||
        pattern == ST_PATTERN_CL100K || pattern == ST_PATTERN_O200K)
        return bad(err, 8, "a pattern no tokenizer.json model has");
    if (flags & ~(uint32_t)(ST__HF_IGNORE_MERGES | ST__HF_NFC)) return bad(err, 8, "unknown flags");
    if (!n_ids || n_ids > ST__HF_MAX_IDS || n_merges > ST__HF_MAX_IDS || n_added > n_ids)
        return bad(err, 8, "counts beyond the limits");
    /* every merge takes 3 bytes or more, every added token 4, every id at least a bit of them:
     * counts are never trusted for memory past what the image could hold */
    size_t left = n - r.pos;
    if ((uint64_t)n_merges * 3 > left || (uint64_t)n_added * 4 > left || (uint64_t)n_ids > 2 * ((uint64_t)n_merges + n_added + 256) + 65536)
        return bad(err, r.pos, "counts larger than the image");
    size_t off_size = align8(((size_t)n_ids + 1) * 4), kind_size = align8(n_ids), merge_size = align8((size_t)n_merges * 12),
           added_size = align8((size_t)n_added * sizeof(st__hf_added)), len_size = align8((size_t)n_ids * 4);
    /* bytes: at most every token's bytes, and each is bounded below */
    uint8_t *scratch = (uint8_t *)st__alloc(a, len_size + off_size + kind_size + merge_size + added_size);
    if (!scratch) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(scratch, 0, len_size + off_size + kind_size + merge_size + added_size);
    uint32_t *len = (uint32_t *)(void *)scratch;
    uint8_t *kind = scratch + len_size + off_size;
    uint32_t *merges = (uint32_t *)(void *)(kind + kind_size);
    st__hf_added *added = (st__hf_added *)(void *)((uint8_t *)merges + merge_size);
    st_status st = ST_OK;
    size_t explicit_at = 0, text_at = 0;
    uint64_t total = 0, text_total = 0;
    uint32_t byte_id[256];
    for (uint32_t b = 0; b < 256 && st == ST_OK; b++) {
        if (!get_leb(&r, &byte_id[b]) || byte_id[b] >= n_ids || kind[byte_id[b]]) st = bad(err, r.pos, "a byte's token is bad or repeated");
        else { kind[byte_id[b]] = ST__HF_TOKEN; len[byte_id[b]] = 1; }
    }
    uint32_t prev = 0;
    for (uint32_t k = 0; k < n_merges && st == ST_OK; k++) {
        uint32_t l, rr, z;
        if (!get_leb(&r, &l) || !get_leb(&r, &rr) || !get_leb(&r, &z)) { st = bad(err, r.pos, "the merges are cut"); break; }
        int64_t t = (z & 1) ? (int64_t)prev - (int64_t)(((uint64_t)z + 1) >> 1) : (int64_t)prev + (int64_t)(z >> 1);
        if (l >= n_ids || rr >= n_ids || t < 0 || t >= n_ids) { st = bad(err, r.pos, "a merge names an id out of range"); break; }
        merges[3 * k] = l;
        merges[3 * k + 1] = rr;
        merges[3 * k + 2] = (uint32_t)t;
        prev = (uint32_t)t;
    }
    /* explicit tokens, then the merges' tokens in one pass */
    uint32_t n_explicit = 0;
    if (st == ST_OK && !get_leb(&r, &n_explicit)) st = bad(err, r.pos, "cut before the tokens");
    explicit_at = r.pos;
    for (uint32_t k = 0; k < n_explicit && st == ST_OK; k++) {
        uint32_t id, l;
        if (!get_leb(&r, &id) || !get_leb(&r, &l) || id >= n_ids || kind[id] || !l || l > r.n - r.pos) {
            st = bad(err, r.pos, "a token is bad, repeated or cut");
            break;
        }
        kind[id] = ST__HF_TOKEN;
        len[id] = l;
        r.pos += l;
    }
    /* the merges' tokens are not in the image: their bytes are bounded by its size (a merge takes 3
     * bytes or more, and 30 merges that each join the last token to itself would make a gigabyte) */
    uint64_t derived = 0, derived_max = (uint64_t)ST__HF_COMPACT_DERIVED_PER_BYTE * n + 65536;
    for (uint32_t k = 0; k < n_merges && st == ST_OK; k++) {
        uint32_t l = merges[3 * k], rr = merges[3 * k + 1], t = merges[3 * k + 2];
        if (kind[l] != ST__HF_TOKEN || kind[rr] != ST__HF_TOKEN) { st = bad(err, r.pos, "a merge's part has no bytes yet"); break; }
        if (!kind[t]) {
            kind[t] = ST__HF_TOKEN;
            len[t] = len[l] + len[rr];
            derived += len[t];
            if (len[t] < len[l] || len[t] > 0x7FFFFFFFu || derived > derived_max) {
                st = bad(err, r.pos, "the merges' tokens hold more bytes than an image of this size may (" ST__STR(ST__HF_COMPACT_DERIVED_PER_BYTE) " a byte)");
                break;
            }
        }
    }
    text_at = r.pos;
    for (uint32_t k = 0; k < n_added && st == ST_OK; k++) {
        st__hf_added *t = &added[k];
        uint32_t l;
        if (!get_leb(&r, &t->id) || !get_leb(&r, &t->flags) || !get_leb(&r, &l) || t->id >= n_ids || !l ||
            l > r.n - r.pos || (t->flags & ~(uint32_t)(ST__ADDED_SPECIAL | ST__ADDED_NORMALIZED | ST__ADDED_LSTRIP | ST__ADDED_RSTRIP))) {
            st = bad(err, r.pos, "an added token is bad or cut");
            break;
        }
        if (kind[t->id]) { st = bad(err, r.pos, "an added token has the id of another token"); break; }
        t->off = (uint32_t)text_total;
        t->len = l;
        text_total += l;
        kind[t->id] = ST__HF_ADDED;
        len[t->id] = l;
        r.pos += l;
    }
    if (st == ST_OK && r.pos != r.n) st = bad(err, r.pos, "bytes after the end");
    for (uint32_t id = 0; id < n_ids && st == ST_OK; id++) total += len[id];
    if (st == ST_OK && total > 0xFFFFFFF0ull) st = bad(err, 8, "the tokens hold 4 GB or more");
    if (st != ST_OK) {
        st__free(a, scratch, len_size + off_size + kind_size + merge_size + added_size);
        return st;
    }
    /* the model: the same layout st__hf_model_parse makes */
    if (!st__hf_model_alloc(m, a, n_ids, (size_t)total, n_merges, n_added, (size_t)text_total)) {
        st__free(a, scratch, len_size + off_size + kind_size + merge_size + added_size);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    m->pattern = pattern;
    m->flags = flags;
    st__memcpy(m->id_kind, kind, n_ids);
    if (n_merges) st__memcpy(m->merges, merges, (size_t)n_merges * 12);
    if (n_added) st__memcpy(m->added, added, (size_t)n_added * sizeof *added);
    for (uint32_t id = 0; id < n_ids; id++) m->offsets[id + 1] = m->offsets[id] + len[id];
    for (uint32_t b = 0; b < 256; b++) m->bytes[m->offsets[byte_id[b]]] = (uint8_t)b;
    r.pos = explicit_at;
    for (uint32_t k = 0; k < n_explicit; k++) {
        uint32_t id, l;
        get_leb(&r, &id);
        get_leb(&r, &l);
        st__memcpy(m->bytes + m->offsets[id], s + r.pos, l);
        r.pos += l;
    }
    uint8_t *done = kind; /* reused: 2 = bytes written */
    for (uint32_t b = 0; b < 256; b++) done[byte_id[b]] = 2;
    r.pos = explicit_at;
    for (uint32_t k = 0; k < n_explicit; k++) {
        uint32_t id, l;
        get_leb(&r, &id);
        get_leb(&r, &l);
        done[id] = 2;
        r.pos += l;
    }
    /* a merge whose token has bytes already (spelled out, a byte, an earlier merge's) must make
     * those bytes, as a tokenizer.json's merge makes the token its parts spell; the bytes compared
     * are bounded as the bytes derived are */
    uint64_t compared = 0;
    for (uint32_t k = 0; k < n_merges; k++) {
        uint32_t l = merges[3 * k], rr = merges[3 * k + 1], t = merges[3 * k + 2];
        if (done[t] == 2) {
            const uint8_t *tb = m->bytes + m->offsets[t];
            compared += len[t];
            if ((uint64_t)len[l] + len[rr] != len[t] || compared > derived_max ||
                st__memcmp(tb, m->bytes + m->offsets[l], len[l]) || st__memcmp(tb + len[l], m->bytes + m->offsets[rr], len[rr])) {
                st__free(a, scratch, len_size + off_size + kind_size + merge_size + added_size);
                st__hf_model_free(m, a);
                return bad(err, 8, compared > derived_max ? "the merges' tokens hold more bytes than an image of this size may"
                                                          : "a merge does not make its parts' bytes joined");
            }
            continue;
        }
        st__memcpy(m->bytes + m->offsets[t], m->bytes + m->offsets[l], len[l]);
        st__memcpy(m->bytes + m->offsets[t] + len[l], m->bytes + m->offsets[rr], len[rr]);
        done[t] = 2;
    }
    r.pos = text_at;
    for (uint32_t k = 0; k < n_added; k++) {
        uint32_t x;
        get_leb(&r, &x);
        get_leb(&r, &x);
        get_leb(&r, &x);
        st__memcpy(m->text + m->added[k].off, s + r.pos, x);
        st__memcpy(m->bytes + m->offsets[m->added[k].id], s + r.pos, x);
        r.pos += x;
    }
    st__free(a, scratch, len_size + off_size + kind_size + merge_size + added_size);
    return ST_OK;
}
