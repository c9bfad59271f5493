/* The encoding handle: constructors, images, accessors, token lookups and decoding. The
 * encode pipeline is pipeline.c. */
#include "encoding.h"
#include "../formats/export.h"

/* ---- making and freeing ------------------------------------------------------------------- */

/* A new handle with its allocator, a copy of the pre-tokenizer and its lazy state; the caller
 * loads the model, then hands it out (or frees it) with encoding_finish. */
st_status st__encoding_start(const st_allocator *alloc, const struct st_pretokenizer *pt, uint32_t kind,
                                st_encoding **enc, st_error *err) {
    st_allocator a;
    st__allocator_init(&a, alloc);
    *enc = (st_encoding *)st__alloc(&a, sizeof **enc);
    st__lazy *lazy = (st__lazy *)st__alloc(&a, sizeof *lazy);
    if (!*enc || !lazy) {
        st__free(&a, *enc, sizeof **enc);
        st__free(&a, lazy, sizeof *lazy);
        *enc = NULL;
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    st__memset(*enc, 0, sizeof **enc);
    st__memset(lazy, 0, sizeof *lazy);
    (*enc)->alloc = a;
    (*enc)->kind = kind;
    (*enc)->lazy = lazy;
    /* only rank vocabularies loaded from their file build backtracking tables (they follow
     * ranks, not rules; an image must not make a pass over its vocabulary) */
    lazy->bt_state = BT_UNAVAILABLE;
    lazy->cache_limit = ST_CACHE_DEFAULT_BYTES;
    if (pt) {
        (*enc)->pt = *pt;
        (*enc)->pt.alloc = a; /* unused by an embedded copy; not the caller's */
    }
    return ST_OK;
}

static void encoding_release(st_encoding *enc) {
    st_allocator a = enc->alloc;
    st__backtrack_free(&enc->lazy->bt, &a);
    st__scratch_pool_free(enc->lazy, &a);
    st__special_order_free(enc);
    /* every kind so far keeps its tables in the store's one allocation (a rule model's rules
     * too); a kind with tables of its own frees them here */
    st__vocab_free(&enc->vocab, &a);
    if (enc->hf.owned) st__free(&a, enc->hf.owned, enc->hf.owned_size);
    st__free(&a, enc->lazy, sizeof *enc->lazy);
    st__free(&a, enc, sizeof *enc);
}

st_status st__encoding_finish(st_encoding *enc, st_status st, st_encoding **out, st_error *err) {
    if (st == ST_OK) st = st__special_order_build(enc, err);
    if (st != ST_OK) {
        encoding_release(enc);
        return st;
    }
    *out = enc;
    return ST_OK;
}

st_status st_encoding_new_tiktoken(const char *ranks, size_t ranks_len, const char *specials, size_t specials_len,
                                   const st_pretokenizer *pt, const st_allocator *alloc, st_encoding **out,
                                   st_error *err) {
    st__error_clear(err);
    if (!out || !pt || (!ranks && ranks_len) || (!specials && specials_len))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, pt ? NULL : "no pre-tokenizer");
    *out = NULL;
    st_encoding *enc;
    st_status st = st__encoding_start(alloc, pt, ST__KIND_RANKS, &enc, err);
    if (st != ST_OK) return st;
    enc->lazy->bt_state = BT_NOT_BUILT;
    st = st__vocab_parse_tiktoken(&enc->vocab, &enc->alloc, ranks, ranks_len, specials, specials_len, err);
    return st__encoding_finish(enc, st, out, err);
}

st_status st_encoding_new_compact(const uint8_t *image, size_t len, const char *specials, size_t specials_len,
                                  const st_pretokenizer *pt, const st_allocator *alloc, st_encoding **out,
                                  st_error *err) {
    st__error_clear(err);
    if (!out || !pt || !image || (!specials && specials_len))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, pt ? NULL : "no pre-tokenizer");
    *out = NULL;
    st_encoding *enc;
    st_status st = st__encoding_start(alloc, pt, ST__KIND_RANKS, &enc, err);
    if (st != ST_OK) return st;
    enc->lazy->bt_state = BT_NOT_BUILT; /* its own tables, as from the rank file */
    st = st__vocab_parse_compact(&enc->vocab, &enc->alloc, image, len, specials, specials_len, err);
    return st__encoding_finish(enc, st, out, err);
}

st_status st__encoding_new_rules(int alphabet, const uint32_t *merges, size_t n_merges, const uint32_t *supers,
                                 size_t n_super, const char *specials, size_t specials_len, const st_pretokenizer *pt,
                                 const st_allocator *alloc, st_encoding **out, st_error *err) {
    st__error_clear(err);
    if (!out || !pt || (!merges && n_merges) || (!supers && n_super) || (!specials && specials_len))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, pt ? NULL : "no pre-tokenizer");
    *out = NULL;
    st_encoding *enc;
    st_status st = st__encoding_start(alloc, pt, ST__KIND_RULES, &enc, err);
    if (st != ST_OK) return st;
    st = st__vocab_from_merges(&enc->vocab, &enc->rules, &enc->supers, &enc->alloc, alphabet, merges, n_merges,
                               supers, n_super, specials, specials_len, err);
    return st__encoding_finish(enc, st, out, err);
}

st_status st_encoding_new_merges(int alphabet, const uint32_t *merges, size_t n_merges, const char *specials,
                                 size_t specials_len, const st_pretokenizer *pt, const st_allocator *alloc,
                                 st_encoding **out, st_error *err) {
    return st__encoding_new_rules(alphabet, merges, n_merges, NULL, 0, specials, specials_len, pt, alloc, out, err);
}

void st_encoding_free(st_encoding *enc) {
    if (enc) encoding_release(enc);
}

st_status st_encoding_prepare(const st_encoding *enc) {
    if (!enc) return ST_ERR_INVALID_ARGUMENT;
    const st__lazy *lz = enc->lazy;
    int state = st__atomic_load(&lz->bt_state);
    if (state == BT_UNAVAILABLE) return lz->bt_failed ? ST_ERR_OUT_OF_MEMORY : ST_ERR_INVALID_ARGUMENT;
    if (st__backtrack_tables(enc) || st__atomic_load(&lz->bt_state) == BT_BUILDING) return ST_OK;
    return lz->bt_failed ? ST_ERR_OUT_OF_MEMORY : ST_ERR_INVALID_ARGUMENT;
}

/* ---- images ------------------------------------------------------------------------------- */

st_status st_encoding_save_image(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size, st_error *err) {
    st__error_clear(err);
    if (!enc || !size || (!out && cap)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    if (enc->kind != ST__KIND_RANKS)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "images hold rank vocabularies only");
    if (enc->pt.flags & ST_PRETOK_SCRIPT_AWARE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "an image keeps the pattern only, not a script-aware pre-tokenizer");
    *size = st__vocab_image_size(&enc->vocab);
    if (*size > cap) return st__error_status(err, ST_ERR_BUFFER_TOO_SMALL);
    st__vocab_image_write(&enc->vocab, (uint32_t)enc->pt.pattern, out);
    return ST_OK;
}

st_status st_encoding_save_compact(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size, st_error *err) {
    st__error_clear(err);
    if (!enc || !size || (!out && cap)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    if (enc->kind == ST__KIND_HF) return st__hf_save_compact(enc, out, cap, size, err);
    if (enc->kind != ST__KIND_RANKS || enc->vocab.alphabet != ST_ALPHABET_BYTES)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "compact images hold rank vocabularies only");
    *size = st__vocab_compact_size(&enc->vocab);
    if (*size > cap) return st__error_status(err, ST_ERR_BUFFER_TOO_SMALL);
    st__vocab_compact_write(&enc->vocab, out);
    return ST_OK;
}

st_status st_encoding_from_image(const void *image, size_t len, const st_allocator *alloc, st_encoding **out,
                                 st_error *err) {
    st__error_clear(err);
    if (!out || !image) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out = NULL;
    st_encoding *enc;
    st_status st = st__encoding_start(alloc, NULL, ST__KIND_RANKS, &enc, err);
    if (st != ST_OK) return st;
    uint32_t pattern = 0;
    st = st__vocab_image_borrow(&enc->vocab, (const uint8_t *)image, len, &pattern, err);
    if (st == ST_OK && st__pretokenizer_init(&enc->pt, (int)pattern, 0, "", 0, NULL) != ST_OK)
        st = st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, 12, "image: unknown pattern");
    return st__encoding_finish(enc, st, out, err);
}

/* ---- accessors ---------------------------------------------------------------------------- */

int st_encoding_alphabet(const st_encoding *enc) { return enc ? (int)enc->vocab.alphabet : ST_ALPHABET_BYTES; }
uint32_t st_encoding_n_vocab(const st_encoding *enc) { return enc ? enc->vocab.n_ids : 0; }
uint32_t st_encoding_n_special(const st_encoding *enc) { return enc ? enc->vocab.n_special : 0; }
uint32_t st_encoding_special_id(const st_encoding *enc, uint32_t i) {
    return enc && i < enc->vocab.n_special ? enc->vocab.special_ids[i] : ST_NO_TOKEN;
}

int st_token_is_ordinary(const st_encoding *enc, uint32_t id) {
    return enc ? st__vocab_ordinary(&enc->vocab, enc->kind == ST__KIND_RULES, id) : 0;
}

uint32_t st_encoding_n_special_strings(const st_encoding *enc) { return enc ? st__vocab_n_strings(&enc->vocab) : 0; }

st_status st_encoding_special_string(const st_encoding *enc, uint32_t k, uint32_t *id, const uint8_t **ptr,
                                     size_t *len, st_error *err) {
    st__error_clear(err);
    uint32_t tid, a, tl;
    if (!enc || !id || !ptr || !len || !st__vocab_special_string(&enc->vocab, k, &tid, &a, &tl))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k, "no such special string");
    *id = tid;
    *ptr = enc->vocab.bytes + a;
    *len = tl;
    return ST_OK;
}

/* ST_ERR_INVALID_TOKEN for the id at index k of the caller's input (k = 0 for one id). */
static st_status invalid_token(st_error *err, uint32_t id, st_unit unit, size_t k) {
    st__error_set(err, ST_ERR_INVALID_TOKEN, unit, k, "id ");
    st__error_append_u64(err, id);
    st__error_append(err, " is no token");
    st__error_token(err, id);
    return ST_ERR_INVALID_TOKEN;
}

st_status st_token_bytes(const st_encoding *enc, uint32_t id, const uint8_t **ptr, size_t *len, st_error *err) {
    st__error_clear(err);
    if (!enc || !ptr || !len) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    const st_vocab *v = &enc->vocab;
    uint32_t a, tl;
    if (!st__vocab_span(v, id, &a, &tl)) return invalid_token(err, id, ST_UNIT_NONE, 0);
    *ptr = v->bytes + a;
    *len = tl;
    return ST_OK;
}

st_status st_token_id(const st_encoding *enc, const uint8_t *bytes, size_t len, uint32_t *id, st_error *err) {
    st__error_clear(err);
    if (!enc || !id || (!bytes && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    const st_vocab *v = &enc->vocab;
    *id = ST_NO_TOKEN;
    /* ordinary tokens first (tiktoken's order): the bytes -> id table holds them all */
    uint32_t found = len ? st__vocab_lookup(v, bytes, len) : ST_NO_TOKEN;
    for (uint32_t k = 0; found == ST_NO_TOKEN && k < st__vocab_n_strings(v); k++) { /* every string of each */
        uint32_t sid, a, tl;
        if (st__vocab_special_string(v, k, &sid, &a, &tl) && tl == len && st__memcmp(v->bytes + a, bytes, len) == 0)
            found = sid;
    }
    if (found == ST_NO_TOKEN) {
        st__error_set(err, ST_ERR_INVALID_TOKEN, ST_UNIT_NONE, 0, "no token has the bytes ");
        st__error_append_quoted(err, bytes, len < 48 ? len : 48);
        return ST_ERR_INVALID_TOKEN;
    }
    *id = found;
    return ST_OK;
}

st_status st_token_symbols(const st_encoding *enc, uint32_t id, uint16_t *out, size_t cap, size_t *n, st_error *err) {
    st__error_clear(err);
    if (!enc || !n || (!out && cap)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    const st_vocab *v = &enc->vocab;
    uint32_t a, len;
    *n = 0;
    if (!st__vocab_span(v, id, &a, &len) || st__vocab_is_special(v, id)) return invalid_token(err, id, ST_UNIT_NONE, 0);
    size_t count = v->alphabet == ST_ALPHABET_UBE ? len / 2 : len;
    for (size_t k = 0; k < count && k < cap; k++)
        out[k] = v->alphabet == ST_ALPHABET_UBE ? (uint16_t)(v->bytes[a + 2 * k] | (v->bytes[a + 2 * k + 1] << 8))
                                                : v->bytes[a + k];
    *n = count;
    return st__error_status(err, count > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}

/* ---- decoding ------------------------------------------------------------------------------ */

st_status st_decode(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                    size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!enc || !out_len || (!ids && n) || (!out && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    const st_vocab *v = &enc->vocab;
    if (v->alphabet == ST_ALPHABET_UBE) /* symbols: st_decode_text */
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a UBE model's tokens are symbols: use st_decode_text");
    size_t total = 0;
    *out_len = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t a, tl;
        if (!st__vocab_span(v, ids[k], &a, &tl)) return invalid_token(err, ids[k], ST_UNIT_INDEX, k);
        if (total + tl <= cap) st__memcpy(out + total, v->bytes + a, tl);
        total += tl;
    }
    *out_len = total;
    return st__error_status(err, total > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}

/* Appends data to out[0..cap), counting past cap. */
static void append(uint8_t *out, size_t cap, size_t *total, const uint8_t *data, size_t len) {
    if (*total < cap) st__memcpy(out + *total, data, len <= cap - *total ? len : cap - *total);
    *total += len;
}

/* The index of the id whose symbols hold symbol number sym (specials hold none). */
static size_t id_of_symbol(const st_vocab *v, const uint32_t *ids, size_t n, size_t sym) {
    size_t seen = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t a, len;
        if (!st__vocab_span(v, ids[k], &a, &len) || st__vocab_is_special(v, ids[k])) continue;
        seen += v->alphabet == ST_ALPHABET_UBE ? len / 2 : len;
        if (sym < seen) return k;
    }
    return n;
}

st_status st_decode_text(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t flags, uint8_t *out,
                         size_t cap, size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!enc || !out_len || (!ids && n) || (!out && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    const st_vocab *v = &enc->vocab;
    uint32_t strict = flags & ST_UBE_STRICT;
    st_ube_stream s;
    st_ube_stream_init(&s);
    uint16_t sym[160];
    uint8_t buf[3 * 160 + 3]; /* what feeding 160 symbols can give, a flush included */
    size_t total = 0, got;
    st_error fe;
    st_status st;
    *out_len = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t a, len;
        if (!st__vocab_span(v, ids[k], &a, &len)) return invalid_token(err, ids[k], ST_UNIT_INDEX, k);
        if (st__vocab_is_special(v, ids[k])) { /* flush, then the special's own text */
            st = st_ube_stream_feed(&s, NULL, 0, ST_UBE_FINAL | strict, buf, sizeof buf, &got, &fe);
            if (st != ST_OK) goto malformed;
            append(out, cap, &total, buf, got);
            append(out, cap, &total, v->bytes + a, len);
            continue;
        }
        size_t count = v->alphabet == ST_ALPHABET_UBE ? len / 2 : len;
        for (size_t done = 0; done < count;) {
            size_t c = count - done < 160 ? count - done : 160;
            for (size_t j = 0; j < c; j++) {
                size_t at = a + (v->alphabet == ST_ALPHABET_UBE ? 2 * (done + j) : done + j);
                sym[j] = v->alphabet == ST_ALPHABET_UBE ? (uint16_t)(v->bytes[at] | (v->bytes[at + 1] << 8)) : v->bytes[at];
            }
            st = st_ube_stream_feed(&s, sym, c, strict, buf, sizeof buf, &got, &fe);
            if (st != ST_OK) goto malformed;
            append(out, cap, &total, buf, got);
            done += c;
        }
    }
    st = st_ube_stream_feed(&s, NULL, 0, ST_UBE_FINAL | strict, buf, sizeof buf, &got, &fe);
    if (st != ST_OK) goto malformed;
    append(out, cap, &total, buf, got);
    *out_len = total;
    return st__error_status(err, total > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
malformed: /* strict mode: the symbol index where the malformed run starts, as an id index */
    if (st == ST_ERR_INVALID_UTF8)
        return st__error_set(err, st, ST_UNIT_INDEX, id_of_symbol(v, ids, n, (size_t)fe.offset),
                             "malformed text (strict): the run starts in this id");
    return st__error_set(err, st, (st_unit)fe.unit, fe.offset, fe.message);
}

/* ---- exports (formats/export.c) ---------------------------------------------------------- */

static void export_source(const st_encoding *enc, st__export_source *src) {
    src->vocab = &enc->vocab;
    src->rules = enc->kind == ST__KIND_RULES ? &enc->rules : NULL;
    src->n_supers = enc->kind == ST__KIND_RULES ? enc->supers.n : 0;
    src->pattern = enc->pt.pattern;
    src->pt_flags = enc->pt.flags;
    src->alloc = &enc->alloc;
}

st_status st_encoding_export(const st_encoding *enc, int format, char *out, size_t cap, size_t *out_len,
                             st_error *err) {
    st__error_clear(err);
    if (!enc || !out_len || (!out && cap)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out_len = 0;
    if (enc->kind == ST__KIND_HF) /* its ids are the file's: it is already in the format it came in */
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "an encoding from a tokenizer.json is not exported: use the file it came from");
    st__export_source src;
    export_source(enc, &src);
    return st__export_write(&src, format, out, cap, out_len, err);
}

st_status st_encoding_duplicate_tokens(const st_encoding *enc, uint32_t *pairs, size_t cap, size_t *n,
                                       st_error *err) {
    st__error_clear(err);
    if (!enc || !n || (!pairs && cap)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    st__export_source src;
    export_source(enc, &src);
    return st__export_duplicates(&src, pairs, cap, n, err);
}
