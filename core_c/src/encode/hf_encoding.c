/* Encodings of HuggingFace BPE models (st_encoding_new_tokenizer_json): the file read by
 * formats/tokenizer_json.c, its tokens put in the store every kind shares (ids as the file gives
 * them), its merges in a rule table of their own (a pair -> its rank, and the id it makes), its
 * added tokens as the store's special strings with their flags. docs/design.md §7. */
#include "encoding.h"
#include "../formats/base64.h"
#include "../formats/tokenizer_json.h"

static size_t decimal(uint32_t x, uint8_t *out) {
    uint8_t d[10];
    size_t n = 0;
    do { d[n++] = (uint8_t)('0' + x % 10); x /= 10; } while (x);
    for (size_t k = 0; k < n; k++) out[k] = d[n - 1 - k];
    return n;
}

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
        w += decimal(id, t + w);
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
            st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, k, "model.merges[");
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
        /* the file was checked; a failure here is the store's limit (its report names a line of
         * text the caller never saw: name the model instead) */
        if (st == ST_ERR_MALFORMED_MODEL) st__error_set(err, st, ST_UNIT_NONE, 0, "model.vocab: the tokens could not be stored");
    }
    if (ranks) st__free(&a, ranks, ranks_size);
    if (specials) st__free(&a, specials, specials_size);
    if (st == ST_OK) st = build_tables(enc, m, err);
    return st__encoding_finish(enc, st, out);
}

st_status st_encoding_new_tokenizer_json(const char *json, size_t len, const st_allocator *alloc, st_encoding **out,
                                         st_error *err) {
    st__error_clear(err);
    if (!out || (!json && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out = NULL;
    st_allocator a;
    st__allocator_init(&a, alloc);
    st__hf_model m;
    st_status st = st__hf_model_parse((const uint8_t *)json, len, &a, &m, err);
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
