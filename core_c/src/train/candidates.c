/* Supermerge candidates (docs/design.md §8): which pretokens are eligible (a letter, and the
 * bytes of a token of the phase-1 vocabulary the algorithm keeps), and the state a candidates
 * counter carries. The counter itself is made from a finished phase-1 trainer by trainer.c
 * (st_counter_new_candidates), or from the trainer's spec by candidates_spec.c; the counting is pretoken_counter.c's (the same table, merge, save
 * and load serve both kinds of counter); a candidate's key is its pretokens' bytes joined with
 * 0xFF, a byte UTF-8 never holds, so the key splits back unambiguously. */
#include "candidates.h"
#include "pretoken_counter.h"
#include "../text/unicode.h"
#include "../base/hash.h"
#include "../text/utf8.h"

/* ---- the vocabulary index ------------------------------------------------------------------ */

static uint32_t *tok_slot(const st__tokset *s, const uint8_t *k, size_t kn, uint64_t h) {
    size_t i = (size_t)h & s->mask;
    for (;;) {
        uint32_t v = s->slots[i];
        if (!v) return &s->slots[i];
        uint32_t id = v - 1;
        if (s->len[id] == kn && st__memcmp(s->seq + s->off[id], k, kn) == 0) return &s->slots[i];
        i = (i + 1) & s->mask;
    }
}

int st__tokset_init(st__tokset *s, const st_allocator *a, int alphabet, const uint8_t *seq, const uint64_t *off,
                    const uint32_t *len, uint32_t n) {
    st__memset(s, 0, sizeof *s);
    s->alphabet = alphabet;
    s->n = n; /* before any allocation: st__tokset_free sizes the arrays by it */
    size_t bytes = n ? (size_t)off[n - 1] + len[n - 1] : 0; /* tokens are laid out in id order */
    size_t slots = 16;
    while (slots < 2 * (size_t)n + 2) slots <<= 1;
    s->seq = (uint8_t *)st__alloc(a, bytes ? bytes : 1);
    s->off = (uint64_t *)st__alloc(a, (n ? n : 1) * sizeof *s->off);
    s->len = (uint32_t *)st__alloc(a, (n ? n : 1) * sizeof *s->len);
    s->slots = (uint32_t *)st__alloc(a, slots * sizeof *s->slots);
    s->seq_len = bytes;
    s->mask = slots - 1;
    if (!s->seq || !s->off || !s->len || !s->slots) {
        st__tokset_free(s, a);
        return 0;
    }
    if (bytes) st__memcpy(s->seq, seq, bytes);
    if (n) {
        st__memcpy(s->off, off, n * sizeof *off);
        st__memcpy(s->len, len, n * sizeof *len);
    }
    st__memset(s->slots, 0, slots * sizeof *s->slots);
    for (uint32_t id = 0; id < n; id++) {
        uint32_t *slot = tok_slot(s, s->seq + s->off[id], s->len[id], st__hash_bytes(s->seq + s->off[id], s->len[id]));
        if (!*slot) *slot = id + 1; /* the smaller id keeps a sequence two merges spell */
    }
    return 1;
}

void st__tokset_free(st__tokset *s, const st_allocator *a) {
    if (s->seq) st__free(a, s->seq, s->seq_len ? s->seq_len : 1);
    if (s->off) st__free(a, s->off, (s->n ? s->n : 1) * sizeof *s->off);
    if (s->len) st__free(a, s->len, (s->n ? s->n : 1) * sizeof *s->len);
    if (s->slots) st__free(a, s->slots, (s->mask + 1) * sizeof *s->slots);
    if (s->scratch) st__free(a, s->scratch, s->scratch_cap);
    st__memset(s, 0, sizeof *s);
}

int st__tokset_reserve(st__tokset *s, const st_allocator *a, size_t n) {
    /* the text's UBE symbols, 2 big-endian bytes each: at most 2 bytes per text byte */
    if (s->alphabet != ST_ALPHABET_UBE || 2 * n <= s->scratch_cap) return 1;
    size_t cap = s->scratch_cap ? s->scratch_cap : 256;
    while (cap < 2 * n) cap *= 2;
    uint8_t *b = (uint8_t *)st__alloc(a, cap);
    if (!b) return 0;
    if (s->scratch) st__free(a, s->scratch, s->scratch_cap);
    s->scratch = b;
    s->scratch_cap = cap;
    return 1;
}

uint32_t st__tokset_find(st__tokset *s, const st_allocator *a, const uint8_t *p, size_t n, int *oom) {
    if (!s->slots) return ST__NO_TOKEN_ID;
    const uint8_t *k = p;
    size_t kn = n;
    if (s->alphabet == ST_ALPHABET_UBE) {
        if (!st__tokset_reserve(s, a, n)) {
            *oom = 1;
            return ST__NO_TOKEN_ID;
        }
        kn = 0;
        for (size_t i = 0; i < n;) {
            uint16_t sy[4];
            size_t cl, m = st__ube_char_symbols(p + i, sy, &cl);
            for (size_t q = 0; q < m; q++) {
                s->scratch[kn++] = (uint8_t)(sy[q] >> 8);
                s->scratch[kn++] = (uint8_t)sy[q];
            }
            i += cl;
        }
        k = s->scratch;
    }
    uint32_t v = *tok_slot(s, k, kn, st__hash_bytes(k, kn));
    return v ? v - 1 : ST__NO_TOKEN_ID;
}

int st__has_letter(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        if (p[i] < 0x80) {
            if ((uint8_t)((p[i] | 0x20) - 'a') < 26) return 1;
            i++;
            continue;
        }
        i += st__utf8_decode(p + i, &cp);
        uint8_t cls = st_ucd_class(cp) & ST_UCD_CLASS_MASK;
        if (cls >= ST_UCD_LU && cls <= ST_UCD_LO) return 1;
    }
    return 0;
}

uint64_t st__vocab_fingerprint(int alphabet, const uint32_t *merges, uint64_t kept) {
    uint64_t h = st__mix64(0x5375706572776F72ull ^ (uint64_t)alphabet);
    h = st__mix64(h ^ kept);
    for (uint64_t i = 0; i < kept; i++) h = st__mix64(h ^ (((uint64_t)merges[2 * i] << 32) | merges[2 * i + 1]));
    return h;
}

/* ---- the candidates' state ----------------------------------------------------------------- */

void st__cand_free(st__cand *c, const st_allocator *a) {
    if (!c) return;
    st__tokset_free(&c->toks, a);
    if (c->key) st__free(a, c->key, c->key_cap);
    if (c->hot) st__free(a, c->hot, sizeof(st__cand_hot) << ST__CAND_HOT_BITS);
    st__free(a, c, sizeof *c);
}

st_status st__counter_new_cand(const struct st_pretokenizer *pt, int algorithm, int alphabet, uint64_t supermerges,
                               uint64_t kept, uint64_t fingerprint, const uint8_t *seq, const uint64_t *off,
                               const uint32_t *len, uint32_t n, const st_allocator *alloc, st_counter **out,
                               st_error *err) {
    st_counter *c;
    st_status st = st_counter_new(pt->pattern, pt->flags, NULL, 0, alloc, &c, err);
    if (st != ST_OK) return st;
    st__memcpy(c->pt.single_letter_scripts, pt->single_letter_scripts, sizeof c->pt.single_letter_scripts);
    st__cand *cd = (st__cand *)st__alloc(&c->alloc, sizeof *cd);
    if (!cd) {
        st_counter_free(c);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    st__memset(cd, 0, sizeof *cd);
    c->cand = cd;
    cd->algorithm = algorithm;
    cd->alphabet = alphabet;
    cd->supermerges = algorithm == ST_ALGORITHM_SUPERBPE ? supermerges : 0;
    cd->kept = kept;
    cd->fingerprint = fingerprint;
    if (!st__tokset_init(&cd->toks, &c->alloc, alphabet, seq, off, len, n)) {
        st_counter_free(c);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    *out = c;
    return ST_OK;
}

int st__cand_compatible(const st__cand *a, const st__cand *b) {
    return a->algorithm == b->algorithm && a->alphabet == b->alphabet && a->supermerges == b->supermerges &&
           a->kept == b->kept && a->fingerprint == b->fingerprint && a->ngram_cmin == b->ngram_cmin &&
           a->ngram_max_len == b->ngram_max_len;
}

st__cand *st__cand_clone_params(const st__cand *src, const st_allocator *a) {
    st__cand *c = (st__cand *)st__alloc(a, sizeof *c);
    if (!c) return NULL;
    st__memset(c, 0, sizeof *c);
    c->algorithm = src->algorithm;
    c->alphabet = src->alphabet;
    c->supermerges = src->supermerges;
    c->kept = src->kept;
    c->fingerprint = src->fingerprint;
    c->ngram_cmin = src->ngram_cmin;
    c->ngram_max_len = src->ngram_max_len;
    return c;
}
