/* Encodings from model files (st_encoding_from_model, st_encoding_new_model): a parsed model's
 * pre-tokenizer, tokens or rules, and specials handed to the encoding constructors. What a
 * model file holds and where each entry stands in it is formats/model.c's. */
#include "encoding.h"
#include "../formats/model.h"

/* The one call into the encoding constructors, with the model's pre-tokenizer (pattern,
 * script-aware flag, scripts): specials is the specials as tiktoken lines ("base64 id\n"). On
 * failure *ce is the constructor's report (ST_ERR_MALFORMED_MODEL: offset = the byte offset in
 * the rank text or the specials text (input 1), or the index of the rule). */
static st_status build_encoding(const st_model *m, const char *specials, size_t specials_len,
                                const st_allocator *alloc, st_encoding **out, st_error *ce) {
    size_t scripts_len = 0;
    const char *scripts = st_model_scripts(m, &scripts_len);
    st_pretokenizer *pt = NULL;
    st_status st = st_pretokenizer_new(m->pattern, m->flags, scripts, scripts_len, alloc, &pt, ce);
    if (st != ST_OK) return st;
    if (m->kind == ST_MODEL_RULES)
        st = st__encoding_new_rules(m->alphabet, m->merges.pairs, m->merges.n, m->supermerges.pairs,
                                    m->supermerges.n, specials, specials_len, pt, alloc, out, ce);
    else
        st = st_encoding_new_tiktoken((const char *)m->src + m->tokens_off, m->tokens_len, specials, specials_len, pt,
                                      alloc, out, ce);
    st_pretokenizer_free(pt);
    return st;
}

st_status st_encoding_from_model(const st_model *m, const st_allocator *alloc, st_encoding **out, st_error *err) {
    st_error local;
    st_error *e = err ? err : &local;
    st__error_clear(e);
    if (!m || !out) {
        e->status = ST_ERR_INVALID_ARGUMENT;
        return ST_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    st_allocator a;
    st__allocator_init(&a, alloc);
    uint8_t *spec;
    size_t used, size;
    if (st__model_specials_ranks(m, &a, &spec, &used, &size) != ST_OK) {
        e->status = ST_ERR_OUT_OF_MEMORY;
        return ST_ERR_OUT_OF_MEMORY;
    }
    st_error ce;
    st_status st = build_encoding(m, (const char *)spec, used, alloc, out, &ce);
    if (st == ST_ERR_MALFORMED_MODEL)
        st__model_encoding_error(m, spec, used, &ce, e);
    else if (st != ST_OK)
        *e = ce; /* out of memory, or the pre-tokenizer's own report */
    st__free(&a, spec, size);
    return st;
}

st_status st_encoding_new_model(const char *bytes, size_t len, const st_allocator *alloc, st_encoding **out,
                                st_error *err) {
    if (out) *out = NULL;
    st_model *m;
    st_status st = st_model_parse(bytes, len, alloc, &m, err);
    if (st != ST_OK) return st;
    st = st_encoding_from_model(m, alloc, out, err);
    st_model_free(m);
    return st;
}
