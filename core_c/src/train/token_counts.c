/* How often each token of a model occurs in the text its counts came from: every distinct
 * pretoken of a counter encoded once (st_encode_piece: the piece's merges, as st_encode merges a
 * pretoken of text) and its ids counted as often as the pretoken occurs. The UBE paper's
 * vocabulary diagnostics (Appendix D.5.3: active utilization, dead merges) read these counts of
 * the training text; a sweep's models each get theirs from the one counter. */
#include "pretoken_counter.h"
#include "../encode/encoding.h"

st_status st_counter_token_counts(const st_counter *c, const st_encoding *enc, uint64_t *counts, size_t n,
                                  st_error *err) {
    st__error_clear(err);
    if (!c || !enc || (!counts && n))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a NULL argument");
    if (c->cand)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "a candidates counter holds runs of pretokens, not pretokens");
    if (enc->kind == ST__KIND_RULES && enc->supers.n)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "a superword model's supermerges join pretokens: its token counts come from "
                             "encoding the text, not its pretoken counts");
    uint32_t n_vocab = st_encoding_n_vocab(enc);
    if (n < n_vocab) {
        st__error_set(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0, "counts holds ");
        st__error_append_u64(err, n);
        st__error_append(err, " ids, the encoding ");
        st__error_append_u64(err, n_vocab);
        return ST_ERR_BUFFER_TOO_SMALL;
    }
    size_t longest = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t len = st__entry_len(c->arena, &c->entries[i]);
        if (len > longest) longest = len;
    }
    /* a piece of len bytes has at most len ids (a UBE piece: at most its symbols, at most len) */
    uint32_t *ids = longest ? (uint32_t *)st__alloc(&c->alloc, longest * sizeof *ids) : NULL;
    if (longest && !ids) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    for (size_t i = 0; i < n; i++) counts[i] = 0;
    st_status st = ST_OK;
    for (size_t i = 0; i < c->n && st == ST_OK; i++) {
        const st__count_entry *e = &c->entries[i];
        size_t k = 0;
        st = st_encode_piece(enc, st__entry_key(c->arena, e), st__entry_len(c->arena, e), ids, longest, &k, err);
        if (st != ST_OK) break;
        for (size_t j = 0; j < k; j++) {
            if (counts[ids[j]] + e->count < e->count) {
                st = st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a token count overflows 64 bits");
                break;
            }
            counts[ids[j]] += e->count;
        }
    }
    if (ids) st__free(&c->alloc, ids, longest * sizeof *ids);
    return st;
}
