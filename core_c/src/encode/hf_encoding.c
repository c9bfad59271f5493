/* Encodings of HuggingFace BPE models (st_encoding_new_tokenizer_json): the file read by
 * formats/tokenizer_json.c, its tokens put in the store every kind shares (ids as the file gives
 * them), its merges in a rule table of their own (a pair -> its rank, and the id it makes), its
 * added tokens as the store's special strings with their flags. docs/design.md §7. */
#include "encoding.h"
#include "../formats/base64.h"
#include "../formats/tokenizer_json.h"

/* The ids of one kind as tiktoken lines ("base64 id\n"), which the store's loader takes: the
 * vocabulary's tokens as ranks, the added tokens as specials. */
static st_status tiktoken_lines(const st__hf_model *m, uint8_t kind, const st_allocator *a, uint8_t **out, size_t *len,
                                size_t *size) {
    size_t total = 0;
    for (uint32_t id = 0; id < m->n_ids; id++)
        if (m->id_kind[id] == kind) total += st__base64_encoded_len(m->offsets[id + 1] - m->offsets[id]) + 12;
    *size = total + 1;
    uint8_t *t = (uint8_t *)st__alloc(a, *size);
    if (!t) return ST_ERR_OUT_OF_MEMORY;
    size_t w = 0;
    for (uint32_t id = 0; id < m->n_ids; id++) {
        if (m->id_kind[id] != kind) continue;
        size_t n = m->offsets[id + 1] - m->offsets[id];
        st__base64_encode(m->bytes + m->offsets[id], n, t + w);
        w += st__base64_encoded_len(n);
        t[w++] = ' ';
        w += st__u64_decimal(id, (char *)t + w);
        t[w++] = '\n';
    }
    *out = t;
    *len = w;
    return ST_OK;
}

/* The merges' table and the flags of the special strings, in one allocation. */
static st_status build_tables(st_encoding *enc, const st__hf_model *m, st_error *err) {
    st__hf *hf = &enc->hf;
    const st_vocab *v = &enc->vocab;
    uint32_t cap = 16;
    while (cap < 2 * (uint64_t)m->n_merges) cap <<= 1;
    size_t slots_size = (size_t)cap * 8, made_size = ((size_t)m->n_merges * 4 + 7) & ~(size_t)7,
           flags_size = v->n_special + 1;
    hf->owned_size = slots_size + made_size + flags_size;
    hf->owned = st__alloc(&enc->alloc, hf->owned_size);
    if (!hf->owned) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    uint8_t *block = (uint8_t *)hf->owned;
    st__memset(block, 0, hf->owned_size);
    uint64_t *slots = (uint64_t *)(void *)block;
    uint32_t *made = (uint32_t *)(void *)(block + slots_size);
    uint8_t *sflags = block + slots_size + made_size;
    hf->rules.slots = slots;
    hf->rules.mask = cap - 1;
    hf->rules.base = 0;
    hf->made = made;
    hf->n_merges = m->n_merges;
    hf->flags = m->flags;
    hf->string_flags = sflags;
    for (uint32_t k = 0; k < m->n_merges; k++) {
        uint32_t l = m->merges[3 * k], r = m->merges[3 * k + 1];
        uint32_t earlier = st__rule_find(&hf->rules, l, r);
        if (earlier != ST_NO_TOKEN) {
            /* (a tokenizer.json's repeats are refused at their offset when read: only a compact
             * image gets here, whose merges have no offset of their own: the report is in bytes,
             * as every report of a malformed file, at 0) */
            st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, 0, "model.merges[");
            st__error_append_u64(err, k);
            st__error_append(err, "]: the pair repeats merge ");
            st__error_append_u64(err, earlier);
            return ST_ERR_MALFORMED_MODEL;
        }
        uint64_t key = ((uint64_t)l << 21) | r;
        uint32_t x = (uint32_t)st__mix64(key) & hf->rules.mask;
        while (slots[x]) x = (x + 1) & hf->rules.mask;
        slots[x] = (key << 21) | k;
        made[k] = m->merges[3 * k + 2];
    }
    /* special string k is the k-th special id (one string an id) */
    for (uint32_t k = 0; k < v->n_special; k++) {
        uint32_t id = v->special_ids[k];
        for (uint32_t t = 0; t < m->n_added; t++)
            if (m->added[t].id == id) sflags[k] = (uint8_t)m->added[t].flags;
    }
    return ST_OK;
}

static st_status encoding_from_hf(const st__hf_model *m, const st_allocator *alloc, st_encoding **out, st_error *err) {
    st_allocator a;
    st__allocator_init(&a, alloc);
    st_pretokenizer *pt = NULL;
    st_status st = st_pretokenizer_new((int)m->pattern, 0, NULL, 0, alloc, &pt, err);
    if (st != ST_OK) return st;
    st_encoding *enc;
    st = st__encoding_start(alloc, pt, ST__KIND_HF, &enc, err);
    st_pretokenizer_free(pt);
    if (st != ST_OK) return st;
    uint8_t *ranks = NULL, *specials = NULL;
    size_t ranks_len = 0, ranks_size = 0, specials_len = 0, specials_size = 0;
    st = tiktoken_lines(m, ST__HF_TOKEN, &a, &ranks, &ranks_len, &ranks_size);
    if (st == ST_OK) st = tiktoken_lines(m, ST__HF_ADDED, &a, &specials, &specials_len, &specials_size);
    if (st != ST_OK) st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
    else {
        st = st__vocab_parse_tiktoken(&enc->vocab, &enc->alloc, (const char *)ranks, ranks_len, (const char *)specials,
                                      specials_len, err);
        /* a file was checked, but a damaged compact image can still hold two tokens with one
         * text: the store's report names a line of text the caller never saw, so it is quoted
         * after the field, at offset 0 */
        if (st == ST_ERR_MALFORMED_MODEL && err) {
            char msg[sizeof err->message];
            size_t k = 0;
            for (; k + 1 < sizeof msg && err->message[k]; k++) msg[k] = err->message[k];
            msg[k] = 0;
            st__error_set(err, st, ST_UNIT_BYTE, 0, "model.vocab: the tokens cannot be stored (");
            st__error_append(err, msg);
            st__error_append(err, ")");
            st__error_line(err, 0, 0);
        }
    }
    if (ranks) st__free(&a, ranks, ranks_size);
    if (specials) st__free(&a, specials, specials_size);
    if (st == ST_OK) st = build_tables(enc, m, err);
    return st__encoding_finish(enc, st, out, err);
}

st_status st_encoding_new_tokenizer_json(const char *json, size_t len, const st_allocator *alloc, st_encoding **out,
                                         st_error *err) {
    st__error_clear(err);
    if (!out || (!json && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out = NULL;
    st_allocator a;
    st__allocator_init(&a, alloc);
    st__hf_model m;
    st_status st = st__hf_compact_is((const uint8_t *)json, len)
                       ? st__hf_compact_read((const uint8_t *)json, len, &a, &m, err)
                       : st__hf_model_parse((const uint8_t *)json, len, &a, &m, err);
    if (st != ST_OK) return st;
    st = encoding_from_hf(&m, alloc, out, err);
    st__hf_model_free(&m, &a);
    return st;
}

uint32_t st_encoding_added_flags(const st_encoding *enc, uint32_t id) {
    if (!enc || !st__vocab_is_special(&enc->vocab, id)) return 0;
    if (enc->kind != ST__KIND_HF || !enc->hf.string_flags) return ST_ADDED_SPECIAL;
    const st_vocab *v = &enc->vocab;
    uint32_t k = 0;
    while (k < v->n_special && v->special_ids[k] != id) k++;
    uint8_t f = enc->hf.string_flags[k];
    return (f & ST__ADDED_SPECIAL ? ST_ADDED_SPECIAL : ST_ADDED_ALWAYS) | (f & ST__ADDED_NORMALIZED ? ST_ADDED_NORMALIZED : 0);
}

int st_encoding_pattern(const st_encoding *enc) { return enc ? enc->pt.pattern : 0; }

/* The model an HF encoding was made from, as st__hf_model (its arrays borrowed from the store, the
 * merges and added tokens in one allocation of the caller's to free: *owned, *owned_size). */
static st_status model_of(const st_encoding *enc, st__hf_model *m, void **owned, size_t *owned_size) {
    const st_vocab *v = &enc->vocab;
    const st__hf *hf = &enc->hf;
    st__memset(m, 0, sizeof *m);
    size_t merges_size = (size_t)hf->n_merges * 12, kind_size = v->n_ids, added_size = (size_t)v->n_special * sizeof(st__hf_added);
    *owned_size = merges_size + added_size + kind_size + 8;
    uint8_t *block = (uint8_t *)st__alloc(&enc->alloc, *owned_size);
    if (!block) return ST_ERR_OUT_OF_MEMORY;
    *owned = block;
    m->merges = (uint32_t *)(void *)block;
    m->added = (st__hf_added *)(void *)(block + merges_size);
    m->id_kind = block + merges_size + added_size;
    m->n_ids = v->n_ids;
    m->offsets = (uint32_t *)v->offsets;
    m->bytes = (uint8_t *)v->bytes;
    m->text = (uint8_t *)v->bytes;
    m->n_merges = hf->n_merges;
    m->n_added = v->n_special;
    m->pattern = (uint32_t)enc->pt.pattern;
    m->flags = hf->flags;
    for (uint32_t id = 0; id < v->n_ids; id++) {
        uint32_t a, l;
        m->id_kind[id] = st__vocab_span(v, id, &a, &l) ? ST__HF_TOKEN : ST__HF_GAP;
    }
    for (uint32_t k = 0; k < v->n_special; k++) {
        uint32_t id = v->special_ids[k];
        m->id_kind[id] = ST__HF_ADDED;
        m->added[k].id = id;
        m->added[k].off = v->offsets[id];
        m->added[k].len = v->offsets[id + 1] - v->offsets[id];
        m->added[k].flags = hf->string_flags[k];
    }
    for (uint32_t x = 0; x <= hf->rules.mask; x++) {
        uint64_t slot = hf->rules.slots[x];
        if (!slot) continue;
        uint32_t rank = (uint32_t)slot & ST_RULES_MAX_IDS;
        m->merges[3 * rank] = (uint32_t)(slot >> 42);
        m->merges[3 * rank + 1] = (uint32_t)(slot >> 21) & ST_RULES_MAX_IDS;
        m->merges[3 * rank + 2] = hf->made[rank];
    }
    return ST_OK;
}

st_status st__hf_save_compact(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size, st_error *err) {
    st__hf_model m;
    void *owned;
    size_t owned_size;
    if (model_of(enc, &m, &owned, &owned_size) != ST_OK) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    uint8_t *known = (uint8_t *)st__alloc(&enc->alloc, m.n_ids);
    if (!known) {
        st__free(&enc->alloc, owned, owned_size);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    *size = st__hf_compact_write(&m, out, cap, known);
    st__free(&enc->alloc, known, m.n_ids);
    st__free(&enc->alloc, owned, owned_size);
    return st__error_status(err, *size > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}
