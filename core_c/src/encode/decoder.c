/* Streaming decoding of ids (st_decoder_*) and tiktoken's decode_with_offsets.
 *
 * Built on the public calls of the other parts only (st_token_bytes, st_encoding_alphabet,
 * the special-token list, st_ube_stream_*), so it does not depend on how vocabularies are
 * stored.
 *
 * The decoder feeds each ordinary token's base symbols (a byte-level token's bytes, as symbols
 * 0-255; a UBE token's symbols) to one st_ube_stream, which decodes each same-alphabet run as
 * CPython's "replace" decoder and emits every character as soon as it is complete; a special
 * token flushes the stream and adds its own text. That is st_decode_text's loop, so any split
 * of an id stream gives st_decode_text's text. One byte-level refinement matches CPython's
 * incremental decoder call by call: a truncated surrogate (ED A0-BF) ending a call waits for
 * the next (truncated_surrogate_at_end). Strict failures come from the stream as a symbol
 * index; a small ring of where the last ids' symbols started maps it back to an id (a
 * malformed run starts at most 3 symbols back, so within the last 4 ids, plus a held byte).
 * On any error the whole state is restored from a copy taken at entry.
 *
 * decode_with_offsets checks every id first, then validates the concatenated bytes as one
 * UTF-8 text while counting characters (code points or UTF-16 units) per token. */
#include "../base/internal.h"

/* ---- errors (st_error, internal.h) --------------------------------------------------------- */

static st_status fail(st_error *e, st_status st, st_unit unit, uint64_t offset, uint32_t token) {
    st__error_set(e, st, unit, offset, "");
    st__error_token(e, token);
    return st;
}

#define NO_TOKEN 0xFFFFFFFFu

static st_status invalid_token(st_error *e, uint64_t index, uint32_t id) {
    fail(e, ST_ERR_INVALID_TOKEN, ST_UNIT_INDEX, index, id);
    st__error_append(e, "id ");
    st__error_append_u64(e, id);
    st__error_append(e, " (index ");
    st__error_append_u64(e, index);
    st__error_append(e, ") is no token of this encoding");
    return ST_ERR_INVALID_TOKEN;
}

/* ---- special tokens ------------------------------------------------------------------------- */

/* Whether id is a special token: a binary search of the sorted special ids. */
static int is_special(const st_encoding *enc, uint32_t n_special, uint32_t id) {
    uint32_t lo = 0, hi = n_special;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, s = st_encoding_special_id(enc, mid);
        if (s == id) return 1;
        if (s < id) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* ---- the streaming decoder ------------------------------------------------------------------- */

#define RING 8 /* > the 4 ids a pending run can span, plus a held byte */
#define CHUNK 160

typedef struct dec_state {
    st_ube_stream s;
    uint64_t ids;            /* ids fed in this stream */
    uint64_t ring_sym[RING]; /* the stream symbol index where a recent id's symbols start */
    uint64_t ring_id[RING];  /* ... and that id's index in the stream */
    uint32_t ring_tok[RING]; /* ... and the id itself */
    uint32_t ring_n;         /* entries written so far (the ring holds the last RING) */
    uint32_t n_held;         /* byte-level: 1 if a byte is held back (truncated_surrogate_at_end) */
    uint8_t held;            /* the byte */
    uint32_t held_tok;       /* its id */
    uint64_t held_id;        /* and its stream index */
} dec_state;

struct st_decoder {
    const st_encoding *enc;
    st_allocator alloc;
    uint32_t strict; /* ST_UBE_STRICT or 0 */
    int ube;
    uint32_t n_special, min_special, max_special;
    dec_state st;
};

static void state_init(dec_state *s) {
    st__memset(s, 0, sizeof *s);
    st_ube_stream_init(&s->s);
}

st_status st_decoder_new(const st_encoding *enc, uint32_t flags, const st_allocator *alloc, st_decoder **out,
                         st_error *err) {
    st__error_clear(err);
    if (out) *out = NULL;
    if (!enc || !out || (flags & ~(uint32_t)ST_UBE_STRICT)) {
        fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NO_TOKEN);
        st__error_append(err, !enc ? "enc is NULL" : !out ? "out is NULL" : "flags: only ST_UBE_STRICT applies");
        return ST_ERR_INVALID_ARGUMENT;
    }
    st_allocator a;
    st__allocator_init(&a, alloc);
    st_decoder *d = (st_decoder *)st__alloc(&a, sizeof *d);
    if (!d) return fail(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NO_TOKEN);
    st__memset(d, 0, sizeof *d);
    d->enc = enc;
    d->alloc = a;
    d->strict = flags & ST_UBE_STRICT;
    d->ube = st_encoding_alphabet(enc) == ST_ALPHABET_UBE;
    d->n_special = st_encoding_n_special(enc);
    if (d->n_special) {
        d->min_special = st_encoding_special_id(enc, 0);
        d->max_special = st_encoding_special_id(enc, d->n_special - 1);
    }
    state_init(&d->st);
    *out = d;
    return ST_OK;
}

void st_decoder_reset(st_decoder *d) {
    if (d) state_init(&d->st);
}

void st_decoder_free(st_decoder *d) {
    if (!d) return;
    st_allocator a = d->alloc;
    st__free(&a, d, sizeof *d);
}

/* Output of one call: out[0..cap), counting past cap. */
typedef struct sink {
    uint8_t *out;
    size_t cap, total;
} sink;

static void put(sink *o, const uint8_t *data, size_t len) {
    if (o->total < o->cap) st__memcpy(o->out + o->total, data, len <= o->cap - o->total ? len : o->cap - o->total);
    o->total += len;
}

/* Feed symbols to the stream (n <= CHUNK), straight into the output when it surely fits. */
static st_status stream(st_ube_stream *s, const uint16_t *sym, size_t n, uint32_t flags, sink *o, size_t *eo) {
    size_t got, bound = 3 * n + 3;
    st_error e; /* the stream's error offset (a symbol index) goes to *eo */
    st_status st;
    if (o->total <= o->cap && o->cap - o->total >= bound) {
        st = st_ube_stream_feed(s, sym, n, flags, o->out + o->total, o->cap - o->total, &got, &e);
        if (st == ST_OK) o->total += got;
    } else {
        uint8_t buf[3 * CHUNK + 3];
        st = st_ube_stream_feed(s, sym, n, flags, buf, sizeof buf, &got, &e);
        if (st == ST_OK) put(o, buf, got);
    }
    if (st != ST_OK) *eo = (size_t)e.offset;
    return st;
}

/* The stream index of the id whose symbols hold stream symbol sym. */
static uint64_t id_of_symbol(const dec_state *s, uint64_t sym) {
    uint32_t have = s->ring_n < RING ? s->ring_n : RING;
    uint64_t best = s->ids;
    for (uint32_t k = 1; k <= have; k++) { /* newest first */
        uint32_t slot = (s->ring_n - k) % RING;
        best = s->ring_id[slot];
        if (s->ring_sym[slot] <= sym) break;
    }
    return best;
}

/* The id at stream index at, if the ring still holds it. */
static uint32_t ring_token(const dec_state *s, uint64_t at) {
    uint32_t have = s->ring_n < RING ? s->ring_n : RING;
    for (uint32_t k = 1; k <= have; k++) {
        uint32_t slot = (s->ring_n - k) % RING;
        if (s->ring_id[slot] == at) return s->ring_tok[slot];
    }
    return NO_TOKEN;
}

/* Feed count base symbols of token id (stream index at) from p: a byte-level token's bytes, or
 * a UBE token's symbols (two little-endian bytes each), noting where they start in the ring. */
static st_status feed_token(st_decoder *d, const uint8_t *p, size_t count, uint64_t at, uint32_t id, sink *o,
                            size_t *eo) {
    dec_state *s = &d->st;
    uint16_t sym[CHUNK];
    if (!count) return ST_OK;
    uint32_t slot = s->ring_n % RING;
    s->ring_sym[slot] = s->s.base;
    s->ring_id[slot] = at;
    s->ring_tok[slot] = id;
    s->ring_n++;
    for (size_t done = 0; done < count;) {
        size_t c = count - done < CHUNK ? count - done : CHUNK;
        if (d->ube)
            for (size_t j = 0; j < c; j++) sym[j] = (uint16_t)(p[2 * (done + j)] | (p[2 * (done + j) + 1] << 8));
        else
            for (size_t j = 0; j < c; j++) sym[j] = p[done + j];
        st_status st = stream(&s->s, sym, c, d->strict, o, eo);
        if (st != ST_OK) return st;
        done += c;
    }
    return ST_OK;
}

static int special(const st_decoder *d, uint32_t id) {
    return d->n_special && id >= d->min_special && id <= d->max_special && is_special(d->enc, d->n_special, id);
}

/* CPython's incremental UTF-8 decoder leaves a truncated surrogate, ED followed by A0-BF, at the
 * end of an input undecoded (for the surrogatepass handler) instead of replacing it at once: the
 * U+FFFDs come with the next input. A byte-level decoder does the same, so that each call returns
 * what codecs.getincrementaldecoder("utf-8")("replace") returns for the call's bytes: when the
 * call's bytes end with ED A0-BF, the ED goes to the stream (where it ends any pending sequence
 * and waits) and the last byte is held back, to be fed first by the next call. The byte before
 * the last one is the last token's, the token before's, or (a call of one one-byte token) the
 * ED pending in the stream from the call before. */
static int truncated_surrogate_at_end(const st_decoder *d, const uint32_t *ids, size_t n) {
    const uint8_t *p1, *p0;
    size_t l1, l0;
    const dec_state *s = &d->st;
    if (d->ube || n == 0 || special(d, ids[n - 1]) || st_token_bytes(d->enc, ids[n - 1], &p1, &l1, NULL) != ST_OK || !l1)
        return 0;
    uint8_t b0, b1 = p1[l1 - 1];
    if (l1 >= 2) {
        b0 = p1[l1 - 2];
    } else if (n >= 2) {
        if (special(d, ids[n - 2]) || st_token_bytes(d->enc, ids[n - 2], &p0, &l0, NULL) != ST_OK || !l0) return 0;
        b0 = p0[l0 - 1];
    } else if (s->n_held == 0 && s->s.alphabet == 0 && s->s.n_pending == 1) {
        b0 = s->s.pending[0];
    } else {
        return 0;
    }
    return b0 == 0xED && b1 >= 0xA0 && b1 <= 0xBF;
}

st_status st_decoder_feed(st_decoder *d, const uint32_t *ids, size_t n, uint32_t flags, uint8_t *out, size_t cap,
                          size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!d || !out_len || (!ids && n) || (!out && cap)) {
        if (out_len) *out_len = 0;
        fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NO_TOKEN);
        st__error_append(err, !d ? "d is NULL" : !out_len ? "out_len is NULL" : !ids && n ? "ids is NULL" : "out is NULL");
        return ST_ERR_INVALID_ARGUMENT;
    }
    *out_len = 0;
    const st_encoding *enc = d->enc;
    uint32_t strict = d->strict;
    int final = (flags & ST_UBE_FINAL) != 0;
    dec_state saved = d->st;
    dec_state *s = &d->st;
    sink o = {out, cap, 0};
    size_t eo = 0;
    st_status st = ST_OK;
    if (s->n_held && !n && !final) return ST_OK; /* still a truncated surrogate at the end */
    int hold = !final && truncated_surrogate_at_end(d, ids, n);
    if (s->n_held) { /* what the last call held comes first */
        s->n_held = 0;
        st = feed_token(d, &s->held, 1, s->held_id, s->held_tok, &o, &eo);
        if (st != ST_OK) goto malformed;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t id = ids[k];
        const uint8_t *p;
        size_t len;
        if (st_token_bytes(enc, id, &p, &len, NULL) != ST_OK) {
            uint64_t at = s->ids;
            d->st = saved;
            return invalid_token(err, at, id);
        }
        if (special(d, id)) {
            st = stream(&s->s, NULL, 0, ST_UBE_FINAL | strict, &o, &eo); /* a special flushes the run */
            if (st != ST_OK) goto malformed;
            put(&o, p, len);
        } else {
            size_t count = d->ube ? len / 2 : len;
            int last_waits = hold && k + 1 == n; /* the last byte waits for the next call */
            st = feed_token(d, p, count - (size_t)last_waits, s->ids, id, &o, &eo);
            if (st != ST_OK) goto malformed;
            if (last_waits) {
                s->held = p[len - 1];
                s->held_id = s->ids;
                s->held_tok = id;
                s->n_held = 1;
            }
        }
        s->ids++;
    }
    if (final) {
        st = stream(&s->s, NULL, 0, ST_UBE_FINAL | strict, &o, &eo);
        if (st != ST_OK) goto malformed;
    }
    *out_len = o.total;
    if (o.total > cap) {
        d->st = saved;
        fail(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0, NO_TOKEN);
        st__error_append(err, "the text needs ");
        st__error_append_u64(err, o.total);
        st__error_append(err, " bytes");
        return ST_ERR_BUFFER_TOO_SMALL;
    }
    return ST_OK;
malformed: {
        uint64_t at = st == ST_ERR_INVALID_UTF8 ? id_of_symbol(s, eo) : s->ids;
        uint32_t token = at >= saved.ids && at - saved.ids < n ? ids[at - saved.ids] : NO_TOKEN;
        if (st == ST_ERR_INVALID_UTF8 && token == NO_TOKEN) token = ring_token(s, at);
        d->st = saved;
        *out_len = 0;
        fail(err, st, ST_UNIT_INDEX, at, token);
        if (st == ST_ERR_INVALID_UTF8) {
            st__error_append(err, "malformed text: the ill-formed sequence starting in the id at stream index ");
            st__error_append_u64(err, at);
            st__error_append(err, " does not decode (strict)");
        }
        return st;
    }
}

/* ---- decode_with_offsets ------------------------------------------------------------------------ */

st_status st_decode_with_offsets(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t unit, uint8_t *out,
                                 size_t cap, size_t *out_len, size_t *offsets, st_error *err) {
    st__error_clear(err);
    if (out_len) *out_len = 0;
    if (!enc || !out_len || (!ids && n) || (!out && cap) || (unit != ST_UNIT_CODEPOINT && unit != ST_UNIT_UTF16)) {
        fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NO_TOKEN);
        st__error_append(err, !enc ? "enc is NULL" : !out_len ? "out_len is NULL" : !ids && n ? "ids is NULL"
                 : !out && cap ? "out is NULL" : "unit must be ST_UNIT_CODEPOINT or ST_UNIT_UTF16");
        return ST_ERR_INVALID_ARGUMENT;
    }
    if (st_encoding_alphabet(enc) == ST_ALPHABET_UBE) {
        fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NO_TOKEN);
        st__error_append(err, "a UBE encoding's tokens are symbols, not text bytes: no per-token offsets");
        return ST_ERR_INVALID_ARGUMENT;
    }
    const uint8_t *p;
    size_t len;
    for (size_t k = 0; k < n; k++) /* tiktoken looks every id up before it decodes */
        if (st_token_bytes(enc, ids[k], &p, &len, NULL) != ST_OK) return invalid_token(err, k, ids[k]);
    sink o = {out, cap, 0};
    size_t pos = 0, last = 1; /* text units so far; units of the last character begun */
    int need = 0;             /* continuation bytes still due */
    uint8_t lo = 0x80, hi = 0xBF;
    int bad = 0;
    size_t seq_id = 0, seq_byte = 0, bad_id = 0, bad_byte = 0;
    for (size_t k = 0; k < n; k++) {
        st_token_bytes(enc, ids[k], &p, &len, NULL);
        if (offsets) offsets[k] = len && (p[0] & 0xC0) == 0x80 ? (pos >= last ? pos - last : 0) : pos;
        for (size_t j = 0; j < len && !bad; j++) {
            uint8_t b = p[j];
            size_t at = o.total + j;
            if (need) {
                if (b >= lo && b <= hi) {
                    need--;
                    lo = 0x80;
                    hi = 0xBF;
                    continue;
                }
                bad = 1; /* the sequence ends early: CPython's error starts at its lead */
                bad_id = seq_id;
                bad_byte = seq_byte;
                break;
            }
            if (b < 0x80) continue;
            lo = 0x80;
            hi = 0xBF;
            if (b >= 0xC2 && b <= 0xDF) need = 1;
            else if (b >= 0xE0 && b <= 0xEF) {
                need = 2;
                if (b == 0xE0) lo = 0xA0;
                if (b == 0xED) hi = 0x9F;
            } else if (b >= 0xF0 && b <= 0xF4) {
                need = 3;
                if (b == 0xF0) lo = 0x90;
                if (b == 0xF4) hi = 0x8F;
            } else {
                bad = 1;
                bad_id = k;
                bad_byte = at;
                break;
            }
            seq_id = k;
            seq_byte = at;
        }
        /* tiktoken's count: every byte that is no continuation byte begins a character */
        for (size_t j = 0; j < len; j++)
            if ((p[j] & 0xC0) != 0x80) {
                last = unit == ST_UNIT_UTF16 && p[j] >= 0xF0 ? 2 : 1;
                pos += last;
            }
        put(&o, p, len);
    }
    if (!bad && need) {
        bad = 1;
        bad_id = seq_id;
        bad_byte = seq_byte;
    }
    if (bad) {
        fail(err, ST_ERR_INVALID_UTF8, ST_UNIT_INDEX, bad_id, ids[bad_id]);
        st__error_append(err, "invalid UTF-8 at byte ");
        st__error_append_u64(err, bad_byte);
        st__error_append(err, " of the text, in the token at index ");
        st__error_append_u64(err, bad_id);
        return ST_ERR_INVALID_UTF8;
    }
    *out_len = o.total;
    if (o.total > cap) {
        fail(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0, NO_TOKEN);
        st__error_append(err, "the text needs ");
        st__error_append_u64(err, o.total);
        st__error_append(err, " bytes");
        return ST_ERR_BUFFER_TOO_SMALL;
    }
    return ST_OK;
}
