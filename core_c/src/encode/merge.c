/* The byte-pair merge loops (merge.h). */
#include "merge.h"
#include "../base/work_counter.h"

/* The rank of the token with bytes p[0..n), ST_NO_TOKEN if none: for tiktoken files rank = id.
 * p has ST_PAD readable bytes after the key. */
ST_INLINE uint32_t rank_of(const st_vocab *v, const uint8_t *p, size_t n) {
    return n <= 8 ? st__vocab_lookup_short(v, p, n) : st__vocab_lookup(v, p, n);
}

ST_INLINE uint32_t join_rank(const st__merger *m, uint32_t left, uint32_t right, const uint8_t *p, size_t n) {
    st__pair_slot *pc = m->pairs;
    if (!pc) return rank_of(m->v, p, n);
    uint64_t k = ((uint64_t)left << 32 | right) * 0x9E3779B97F4A7C15ull;
    st__pair_slot *sl = &pc[k >> (64 - ST_PAIR_CACHE_BITS)];
    if (sl->left == left && sl->right == right) return sl->rank;
    uint32_t r = rank_of(m->v, p, n);
    sl->left = left;
    sl->right = right;
    sl->rank = r;
    return r;
}

/* The one place that says what the rank of joining two parts is, per kind: the parts at
 * [a, at) and [at, b) holding tokens left and right. By ranks, the rank of their joined bytes
 * p[a..b) (if a token); by rules, the token the rule (left, right) makes. p is unused (and may
 * be NULL) for rules. */
/* A rule's rank, through the pair cache when the call has one (a HuggingFace model's rule table
 * is megabytes: Llama 3's 280,147 merges take 4 MiB of slots, and the same pairs recur all
 * through a text). */
ST_INLINE uint32_t rule_rank(const st__merger *m, uint32_t left, uint32_t right) {
    st__pair_slot *pc = m->pairs;
    if (!pc) return st__rule_find(m->rules, left, right);
    uint64_t k = ((uint64_t)left << 32 | right) * 0x9E3779B97F4A7C15ull;
    st__pair_slot *sl = &pc[k >> (64 - ST_PAIR_CACHE_BITS)];
    if (sl->left == left && sl->right == right) return sl->rank;
    uint32_t r = st__rule_find(m->rules, left, right);
    sl->left = left;
    sl->right = right;
    sl->rank = r;
    return r;
}

ST_INLINE uint32_t st__merge_pair_rank(const st__merger *m, uint32_t left, uint32_t right, const uint8_t *p,
                                       size_t a, size_t b) {
    if (m->supers) return st__supers_find(m->supers, left, right);
    return m->rules ? rule_rank(m, left, right) : join_rank(m, left, right, p + a, b - a);
}

/* The linear loop over n parts: tok, start (byte offsets in p for a rank vocabulary, symbol
 * indexes with p NULL for rules) and rank (of each adjacent pair) set for them; the lowest rank,
 * leftmost of equal ones, joined until none is left. Returns the parts left. */
ST_INLINE size_t merge_linear(const st__merger *mg, const uint8_t *p, size_t n, uint32_t *tok, uint32_t *start,
                              uint32_t *rank) {
    size_t m = n;
    for (;;) {
        ST_COUNT(m); /* test builds only: the scan below reads m ranks */
        uint32_t best = ST_NO_TOKEN;
        size_t at = 0;
        for (size_t k = 0; k + 1 < m; k++)
            if (rank[k] < best) { best = rank[k]; at = k; }
        if (best == ST_NO_TOKEN) break;
        /* join parts at and at+1: the joined part is the token rank (or rule) best makes */
        tok[at] = mg->made ? mg->made[best] : best;
        for (size_t k = at + 1; k + 1 < m; k++) { start[k] = start[k + 1]; tok[k] = tok[k + 1]; }
        for (size_t k = at + 1; k + 2 < m; k++) rank[k] = rank[k + 1];
        m--;
        /* the joined pairs' bytes end where the part after them starts, or at the piece's end */
        if (at + 1 < m)
            rank[at] = st__merge_pair_rank(mg, tok[at], tok[at + 1], p, start[at], at + 2 < m ? start[at + 2] : n);
        if (at > 0) {
            size_t end = at + 1 < m ? start[at + 1] : n;
            rank[at - 1] = st__merge_pair_rank(mg, tok[at - 1], tok[at], p, start[at - 1], end);
        }
    }
    return m;
}

size_t st__merge_short(const st__merger *mg, const uint8_t *p, size_t n, uint32_t *tok_out, uint32_t *start_out) {
    const st_vocab *v = mg->v;
    uint32_t rank[ST_LINEAR_PIECE];
    for (size_t k = 0; k < n; k++) {
        start_out[k] = (uint32_t)k;
        tok_out[k] = v->byte_ids[p[k]];
        rank[k] = k + 1 < n ? v->pair_ids[((uint32_t)p[k] << 8) | p[k + 1]] : ST_NO_TOKEN; /* one read */
    }
    return merge_linear(mg, p, n, tok_out, start_out, rank);
}

size_t st__merge_short_syms(const st__merger *mg, const uint32_t *sym, size_t n, uint32_t *tok_out,
                            uint32_t *start_out) {
    uint32_t rank[ST_LINEAR_PIECE];
    for (size_t k = 0; k < n; k++) {
        start_out[k] = (uint32_t)k;
        tok_out[k] = sym[k];
    }
    for (size_t k = 0; k + 1 < n; k++) rank[k] = st__merge_pair_rank(mg, tok_out[k], tok_out[k + 1], NULL, 0, 0);
    return merge_linear(mg, NULL, n, tok_out, start_out, rank);
}

/* ---- the heap merge for long pieces --------------------------------------------------------- */

ST_INLINE void heap_push(uint64_t *h, size_t *len, uint64_t key) {
    size_t i = (*len)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h[parent] <= key) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = key;
}

/* Put key at slot i of the n-entry heap and sift it down. */
ST_INLINE void sift_down(uint64_t *h, size_t n, size_t i, uint64_t key) {
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (key <= h[c]) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = key;
}

ST_INLINE uint64_t heap_pop(uint64_t *h, size_t *len) {
    uint64_t top = h[0], last = h[--(*len)];
    if (*len) sift_down(h, *len, 0, last);
    return top;
}

size_t st__merge_heap_scratch_size(size_t n) {
    return (3 * n + 1) * sizeof(uint64_t) + 4 * (n + 1) * sizeof(uint32_t);
}

/* Parts are nodes named by their start offset, linked by next/prev; rank[i] is the rank of
 * joining node i with its successor. Heap keys are rank << 32 | start, so among equal ranks the
 * leftmost pops first; an entry whose rank no longer matches its node, or whose node is gone, is
 * stale and skipped. */
size_t st__merge_heap(const st__merger *mg, const uint8_t *p, const uint32_t *sym, size_t n, uint32_t *tok_out,
                      uint32_t *start_out, void *scratch) {
    const st_vocab *v = mg->v;
    size_t heap_cap = 3 * n + 1; /* n - 1 initial pairs + at most 2 per merge */
    uint64_t *heap = (uint64_t *)scratch;
    uint32_t *next = (uint32_t *)(void *)(heap + heap_cap);
    uint32_t *prev = next + (n + 1);
    uint32_t *rank = prev + (n + 1);
    uint32_t *tok = rank + (n + 1);
    const uint32_t END = (uint32_t)n, DEAD = 0xFFFFFFFEu;
    size_t hl = 0;
    for (uint32_t i = 0; i < n; i++) {
        next[i] = i + 1;
        prev[i] = i ? i - 1 : END;
        tok[i] = sym ? sym[i] : v->byte_ids[p[i]];
    }
    for (uint32_t i = 0; i < n; i++) {
        if (i + 1 == n) rank[i] = ST_NO_TOKEN;
        else if (sym) rank[i] = st__merge_pair_rank(mg, tok[i], tok[i + 1], NULL, 0, 0);
        else rank[i] = v->pair_ids[((uint32_t)p[i] << 8) | p[i + 1]]; /* 2-byte tokens: one read */
        if (rank[i] != ST_NO_TOKEN) heap[hl++] = ((uint64_t)rank[i] << 32) | i;
    }
    for (size_t k = hl / 2; k-- > 0;) sift_down(heap, hl, k, heap[k]); /* heapify */
    while (hl) {
        ST_COUNT(1); /* test builds only: one heap operation */
        uint64_t key = heap[0];
        uint32_t i = (uint32_t)key, r = (uint32_t)(key >> 32);
        if (prev[i] == DEAD || rank[i] != r) { /* stale */
            heap_pop(heap, &hl);
            continue;
        }
        uint32_t j = next[i];
        uint32_t after = next[j];
        uint32_t t = mg->made ? mg->made[r] : r; /* the token the merge makes */
        tok[i] = t;
        next[i] = after;
        if (after != END) prev[after] = i;
        prev[j] = DEAD;
        rank[i] = after != END ? st__merge_pair_rank(mg, t, tok[after], p, i, next[after]) : ST_NO_TOKEN;
        /* the entry just used is at the top: replace it (one sift) rather than pop and push */
        if (rank[i] != ST_NO_TOKEN) sift_down(heap, hl, 0, ((uint64_t)rank[i] << 32) | i);
        else heap_pop(heap, &hl);
        if (i > 0) {
            uint32_t q = prev[i];
            rank[q] = st__merge_pair_rank(mg, tok[q], t, p, q, after);
            if (rank[q] != ST_NO_TOKEN) heap_push(heap, &hl, ((uint64_t)rank[q] << 32) | q);
        }
    }
    size_t m = 0;
    for (uint32_t i = 0; i != END; i = next[i]) {
        tok_out[m] = tok[i];
        start_out[m++] = i;
    }
    return m;
}
