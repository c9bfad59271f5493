/* The n-gram split of supermerge candidates (Faster Superword paper, Appendix B; the semantics
 * are docs/design.md §8's, as its Algorithm 2 is garbled):
 *  - Apriori counting: for n = 1..max_len, every n-gram (n adjacent pretokens) of every candidate
 *    adds the candidate's count, unless n > 1 and one of its two (n-1)-grams is below c_min; after
 *    the pass the n-grams below c_min are dropped; a pass that keeps no n-gram ends the counting;
 *  - greedy split: each candidate is cut left to right, taking at each position the longest kept
 *    n-gram of 2 or more pretokens starting there (moving on by one pretoken when there is none);
 *    the pieces are the new candidates, with the original's count.
 * An n-gram is a slice of a candidate's key (its pretokens joined with 0xFF), which names it
 * uniquely, so it is hashed and compared as bytes. Kept n-grams are closed under prefixes (an
 * n-gram is counted only where its (n-1)-gram prefix was kept), so one number per position, the
 * longest kept n-gram starting there, holds everything the split needs. */
#include "candidates.h"
#include "pretoken_counter.h"
#include "../base/hash.h"

typedef struct ngram {
    const uint8_t *p; /* a slice of a candidate's key in the input counter */
    size_t len;
    uint64_t hash, count;
} ngram;

typedef struct ngrams {
    const st_allocator *a;
    ngram *e;
    size_t n, cap;
    uint32_t *slots; /* entry + 1, 0 empty */
    size_t mask;
} ngrams;

static int ng_rehash(ngrams *g, size_t nslots) {
    uint32_t *s = (uint32_t *)st__alloc(g->a, nslots * sizeof *s);
    if (!s) return 0;
    st__memset(s, 0, nslots * sizeof *s);
    for (size_t i = 0; i < g->n; i++) {
        size_t k = (size_t)g->e[i].hash & (nslots - 1);
        while (s[k]) k = (k + 1) & (nslots - 1);
        s[k] = (uint32_t)(i + 1);
    }
    if (g->slots) st__free(g->a, g->slots, (g->mask + 1) * sizeof *g->slots);
    g->slots = s;
    g->mask = nslots - 1;
    return 1;
}

/* The entry of the n-gram p[0..len), made (count 0) if new; UINT32_MAX when out of memory. */
static uint32_t ng_get(ngrams *g, const uint8_t *p, size_t len) {
    uint64_t h = st__hash_bytes(p, len);
    size_t k = (size_t)h & g->mask;
    for (;;) {
        uint32_t v = g->slots[k];
        if (!v) break;
        const ngram *x = &g->e[v - 1];
        if (x->hash == h && x->len == len && st__memcmp(x->p, p, len) == 0) return v - 1;
        k = (k + 1) & g->mask;
    }
    if ((g->n + 1) * 2 > g->mask + 1) {
        if (!ng_rehash(g, 2 * (g->mask + 1))) return UINT32_MAX;
        k = (size_t)h & g->mask;
        while (g->slots[k]) k = (k + 1) & g->mask;
    }
    if (g->n == g->cap) {
        if (g->n >= 0xFFFFFFFEu) return UINT32_MAX;
        size_t cap = g->cap ? 2 * g->cap : 1024;
        ngram *e = (ngram *)st__realloc(g->a, g->e, g->cap * sizeof *e, cap * sizeof *e);
        if (!e) return UINT32_MAX;
        g->e = e;
        g->cap = cap;
    }
    ngram *x = &g->e[g->n];
    x->p = p;
    x->len = len;
    x->hash = h;
    x->count = 0;
    g->slots[k] = (uint32_t)(g->n + 1);
    return (uint32_t)g->n++;
}

st_status st__counter_split_ngrams(const st_counter *in, uint64_t c_min, size_t max_len, const st_allocator *alloc,
                                  st_counter **out, st_error *err) {
    st__error_clear(err);
    if (!out || !in) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "candidates or out is NULL");
    *out = NULL;
    if (!in->cand)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "a pretoken counter: the n-gram split takes a candidates counter");
    if (in->cand->ngram_max_len)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the candidates are split already");
    if (c_min < 1 || max_len < 2 || max_len > 0xFFFFFFFFu)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "c_min must be at least 1, max_len at least 2");
    st_counter *o;
    st_status st = st_counter_new(in->pt.pattern, in->pt.flags, NULL, 0, alloc, &o, err);
    if (st != ST_OK) return st;
    o->pt = in->pt;
    o->pt.alloc = o->alloc;
    if (!(o->cand = st__cand_clone_params(in->cand, &o->alloc))) {
        st_counter_free(o);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    o->cand->ngram_cmin = c_min;
    o->cand->ngram_max_len = max_len;

    /* positions: where each pretoken of each candidate starts in its key */
    size_t nc = st__counter_size(in), npos = 0;
    for (size_t i = 0; i < nc; i++) {
        size_t len;
        uint64_t c;
        const uint8_t *p = st__counter_entry(in, i, &len, &c);
        npos += st__cand_pieces(p, len);
    }
    const st_allocator *a = &o->alloc;
    size_t *first = (size_t *)st__alloc(a, (nc + 1) * sizeof *first); /* candidate i: positions first[i]..first[i+1] */
    uint32_t *start = (uint32_t *)st__alloc(a, (npos ? npos : 1) * sizeof *start);
    uint32_t *ent = (uint32_t *)st__alloc(a, (npos ? npos : 1) * sizeof *ent);
    uint32_t *longest = (uint32_t *)st__alloc(a, (npos ? npos : 1) * sizeof *longest);
    ngrams g;
    st__memset(&g, 0, sizeof g);
    g.a = a;
    int ok = first && start && ent && longest && ng_rehash(&g, 1024);
    if (ok) {
        size_t q = 0;
        for (size_t i = 0; i < nc; i++) {
            size_t len;
            uint64_t c;
            const uint8_t *p = st__counter_entry(in, i, &len, &c);
            first[i] = q;
            start[q] = 0;
            longest[q++] = 0;
            for (size_t k = 0; k < len; k++)
                if (p[k] == ST__CAND_SEP) { start[q] = (uint32_t)(k + 1); longest[q++] = 0; }
        }
        first[nc] = q;
    }
    /* Apriori passes */
    for (size_t n = 1; ok && n <= max_len; n++) {
        int counted = 0;
        for (size_t i = 0; i < nc && ok; i++) {
            size_t len;
            uint64_t c;
            const uint8_t *p = st__counter_entry(in, i, &len, &c);
            size_t f = first[i], L = first[i + 1] - f;
            for (size_t k = 0; k + n <= L; k++) {
                ent[f + k] = UINT32_MAX;
                if (n > 1 && (longest[f + k] < n - 1 || longest[f + k + 1] < n - 1)) continue;
                size_t end = k + n < L ? start[f + k + n] - 1 : len; /* the separator before the next pretoken */
                uint32_t e = ng_get(&g, p + start[f + k], end - start[f + k]);
                if (e == UINT32_MAX) { ok = 0; break; }
                g.e[e].count += c; /* at most the candidates' total, which fits */
                ent[f + k] = e;
                counted = 1;
            }
        }
        if (!ok || !counted) break;
        int kept = 0;
        for (size_t i = 0; i < nc; i++) {
            size_t f = first[i], L = first[i + 1] - f;
            for (size_t k = 0; k + n <= L; k++)
                if (ent[f + k] != UINT32_MAX && g.e[ent[f + k]].count >= c_min) { longest[f + k] = (uint32_t)n; kept = 1; }
        }
        if (!kept) break;
    }
    /* the greedy split */
    uint64_t found = 0;
    for (size_t i = 0; i < nc && ok; i++) {
        size_t len;
        uint64_t c;
        const uint8_t *p = st__counter_entry(in, i, &len, &c);
        size_t f = first[i], L = first[i + 1] - f;
        for (size_t k = 0; k < L;) {
            size_t n = longest[f + k];
            if (n < 2) { k++; continue; }
            size_t end = k + n < L ? start[f + k + n] - 1 : len;
            const uint8_t *s = p + start[f + k];
            size_t sl = end - start[f + k];
            if (!st__counter_add_key(o, s, sl, st__hash_bytes(s, sl), c)) { ok = 0; break; }
            found += c;
            k += n;
        }
    }
    if (first) st__free(a, first, (nc + 1) * sizeof *first);
    if (start) st__free(a, start, (npos ? npos : 1) * sizeof *start);
    if (ent) st__free(a, ent, (npos ? npos : 1) * sizeof *ent);
    if (longest) st__free(a, longest, (npos ? npos : 1) * sizeof *longest);
    if (g.e) st__free(a, g.e, g.cap * sizeof *g.e);
    if (g.slots) st__free(a, g.slots, (g.mask + 1) * sizeof *g.slots);
    if (!ok) {
        st_counter_free(o);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    o->stats[ST_COUNTER_DOCUMENTS] = in->stats[ST_COUNTER_DOCUMENTS];
    o->stats[ST_COUNTER_BYTES] = in->stats[ST_COUNTER_BYTES];
    o->stats[ST_COUNTER_PRETOKENS] = found;
    *out = o;
    return ST_OK;
}
