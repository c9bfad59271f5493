/* The superword pass (docs/design.md §7): a run of adjacent pretokens, each one eligible token,
 * merged by a superword model's supermerges, lowest supermerge first. It owns the run's storage
 * (the encoder's stack arrays, then a doubling allocation) and the merge of a run: a linear scan of
 * keys for the short runs nearly all are, the heap merge of merge.c for long ones. Apart from the
 * pipeline because it is a second merge with its own rules (it joins whole pretokens' tokens, never
 * bytes inside a pretoken) and tuning; the per-piece feeding of the run is inline in
 * superword_pass.h, as the pipeline calls it once a piece. */
#include "superword_pass.h"
#include "merge.h"

/* Runs up to this many pretokens take the linear scan of supermerges (cheapest when short, as
 * nearly all are: the words between two punctuation marks); longer ones the heap merge, so a
 * megabyte of words with no punctuation costs n log n, not n^2. */
#ifndef ST_RUN_LINEAR
#define ST_RUN_LINEAR 64
#endif
/* st__run_flush's linear merge: entries named in 6 bits (keys rank << 6 | entry; links in bytes),
 * keys searched 16 at a time; rule ids fit 21 bits, so keys fit 27 */
_Static_assert(ST_RUN_LINEAR % 16 == 0 && ST_RUN_LINEAR <= 64, "ST_RUN_LINEAR: a multiple of 16, at most 64");
#define ST_RUN_STACK_HEAP 128 /* runs the heap merges with its scratch on the stack (about 5 KB) */
#define ST_RUN_PAD 16 /* st__run_flush's keys: room past the run, padded to a multiple of 16 */

/* The bytes of a run of cap entries (run_grow). */
ST_INLINE size_t run_size(size_t cap) { return cap * (sizeof(size_t) + sizeof(uint32_t)); }

/* Room for one more run entry: the stack arrays, then a doubling allocation. */
static st_status run_grow(st__run *r, const st_allocator *alloc) {
    size_t cap = r->cap * 2;
    if (cap > ST_MERGE_MAX_PARTS) return ST_ERR_OUT_OF_MEMORY; /* the run is merged by the heap merge */
    void *mem = st__alloc(alloc, run_size(cap));
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    size_t *at = (size_t *)mem;
    uint32_t *tok = (uint32_t *)(void *)(at + cap);
    st__memcpy(at, r->at, r->n * sizeof(size_t));
    st__memcpy(tok, r->tok, r->n * sizeof(uint32_t));
    if (r->owned) st__free(alloc, r->owned, run_size(r->cap));
    r->owned = mem;
    r->at = at;
    r->tok = tok;
    r->cap = cap;
    return ST_OK;
}

void st__run_release(st__run *r, const st_allocator *alloc) {
    if (r->owned) st__free(alloc, r->owned, run_size(r->cap));
    r->owned = NULL;
}

/* Room for one more entry (run_grow), then the entry. */
st_status st__run_push_grow(st__run *r, const st_allocator *alloc, uint32_t t, size_t a) {
    st_status st = run_grow(r, alloc);
    if (st != ST_OK) return st;
    run_put(r, t, a);
    return ST_OK;
}

/* st__run_flush's key for supermerge r (ST_NO_TOKEN: none) joining the part at run entry k (below
 * ST_RUN_LINEAR; a longer run's keys are never read): rank << 6 | k, so the lowest key is the
 * lowest supermerge and, among equal ones, the leftmost; RUN_NONE for none. Signed (ids fit 21
 * bits, so keys fit 27): SSE2 compares signed 32-bit lanes in one instruction, unsigned ones
 * in three. */
#define RUN_NONE 0x7FFFFFFF
ST_INLINE int32_t run_key(uint32_t r, size_t k) { return r == ST_NO_TOKEN ? RUN_NONE : (int32_t)(r << 6 | (uint32_t)(k & 63)); }

/* The links of st__run_flush's linear merge before any merge: each entry's next and previous. The
 * first's previous is ST_RUN_LINEAR, a key slot that no search reads (so the merge at entry 0
 * writes its left pair's key there, with no branch on the entry). */
static const uint8_t run_next0[ST_RUN_LINEAR] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
    23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42,
    43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64};
static const uint8_t run_prev0[ST_RUN_LINEAR] = {
    ST_RUN_LINEAR, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42,
    43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62};
_Static_assert(ST_RUN_LINEAR == 64, "run_next0 / run_prev0 list 64 entries");

/* Merge the current run by supermerges, lowest supermerge (= lowest id) first and the leftmost
 * of equal ones, until no adjacent pair is one; put out the tokens, each at its first part's
 * start. Only whole pretokens' tokens are ever in a run, so a supermerge token comes from here
 * alone: never from the merge inside a pretoken, whatever its bytes. */
st_status st__run_flush(st__run *run, sink *o, const st_encoding *enc) {
    size_t n = run->n;
    uint32_t *tok = run->tok;
    const size_t *at = run->at;
    /* a copy, which the stores to tok cannot alias: its fields stay in registers through the
     * lookups, where the run's were reloaded after every store */
    const st_supers sv = *run->sup, *sp = &sv;
    run->n = 0;
    if (n <= 2) { /* a third of the runs in English: one lookup at most, nothing to search */
        uint32_t r = n == 2 ? st__supers_find(sp, tok[0], tok[1]) : ST_NO_TOKEN;
        if (r != ST_NO_TOKEN) {
            put(o, r, at[0]);
        } else {
            for (size_t k = 0; k < n; k++) put(o, tok[k], at[k]);
        }
        return ST_OK;
    }
    if (n <= ST_RUN_LINEAR) {
        /* Merge in place. key[k] (run_key): the supermerge joining the part that starts at
         * entry k with the next part (its table entries prefetched as the run grew: run_put);
         * RUN_NONE when none (past the last part, entries inside a part, the padding up to a
         * multiple of 16). nxt/prv link the parts' first entries. Nothing moves: a merge
         * rewrites two links and at most three keys, and the search for the lowest key is a
         * minimum over 16 keys at a time with no branch on the data (a loop whose length is
         * fixed: shifting three arrays per merge and scanning exactly the remaining parts
         * mispredicted each loop's exit, a third of st__run_flush's mispredictions on Japanese
         * text; for the same reason the padding and links are set by fixed-length copies).
         * The first lowest key is taken as the keys are made, so a run with no supermerge
         * is put out with no search and no links. */
        int32_t key[ST_RUN_LINEAR + ST_RUN_PAD];
        uint8_t nxt[ST_RUN_LINEAR], prv[ST_RUN_LINEAR + 1];
        size_t n16 = (n + 15) & ~(size_t)15;
        int32_t low = RUN_NONE;
        for (size_t k = 0; k + 1 < n; k++) {
            int32_t kk = run_key(st__supers_find(sp, tok[k], tok[k + 1]), k);
            key[k] = kk;
            low = kk < low ? kk : low;
        }
        if (low == RUN_NONE) {
            for (size_t k = 0; k < n; k++) put(o, tok[k], at[k]);
            return ST_OK;
        }
        for (size_t i = 0; i < ST_RUN_PAD; i++) key[n - 1 + i] = RUN_NONE; /* n >= 1 */
        st__memcpy(nxt, run_next0, sizeof nxt);
        st__memcpy(prv, run_prev0, ST_RUN_LINEAR);
        for (;;) {
            size_t j = low & 63, r = nxt[j], after = nxt[r], p = prv[j];
            uint32_t best = (uint32_t)low >> 6, parts = st__supers_parts(sp, best);
            tok[j] = best;
            nxt[j] = (uint8_t)after;
            prv[after] = (uint8_t)j; /* prv[n]: written, never read */
            /* The next lowest key: the lowest of the keys this merge leaves (the three it
             * changes cleared first), searched while the new part's pairs are looked up, and
             * the two new keys. (Searched after the new keys were stored, the search waited
             * for the lookups, and its wide loads for those narrow stores to land.) */
            key[r] = RUN_NONE;
            key[j] = RUN_NONE;
            key[p] = RUN_NONE; /* p = ST_RUN_LINEAR when j is 0: a slot no search reads */
            /* sixteen lanes' minima over the blocks, then folded: one fold, not one a block */
            int32_t lane[16];
            for (size_t i = 0; i < 16; i++) lane[i] = key[i];
            for (size_t c = 16; c < n16; c += 16)
                for (size_t i = 0; i < 16; i++) lane[i] = key[c + i] < lane[i] ? key[c + i] : lane[i];
            for (size_t i = 0; i < 8; i++) lane[i] = lane[i + 8] < lane[i] ? lane[i + 8] : lane[i];
            for (size_t i = 0; i < 4; i++) lane[i] = lane[i + 4] < lane[i] ? lane[i + 4] : lane[i];
            int32_t low1 = lane[0] < lane[1] ? lane[0] : lane[1], low2 = lane[2] < lane[3] ? lane[2] : lane[3];
            /* the new part's pairs: looked up only when it is a left (right) part of some
             * supermerge, which few supermerge tokens are (vocab.h, st_supers.parts) */
            int32_t kj = (parts & (after < n)) ? run_key(st__supers_find(sp, best, tok[after]), j) : RUN_NONE;
            int32_t kp = (parts & ST_SUPER_RIGHT) ? run_key(st__supers_find(sp, tok[p & 63], best), p) : RUN_NONE;
            key[j] = kj;
            key[p] = kp;
            kp = p < ST_RUN_LINEAR ? kp : RUN_NONE;
            low = low2 < low1 ? low2 : low1;
            low = kj < low ? kj : low;
            low = kp < low ? kp : low;
            if (low == RUN_NONE) break;
        }
        for (size_t k = 0; k < n; k = nxt[k]) put(o, tok[k], at[k]);
        return ST_OK;
    }
    /* the heap merge of merge.c, on the run's tokens with the supermerges as its rules; its
     * scratch on the stack up to ST_RUN_STACK_HEAP tokens */
    size_t msz = st__merge_heap_scratch_size(n), size = msz + 2 * n * sizeof(uint32_t);
    uint64_t stack[(3 * ST_RUN_STACK_HEAP + 1) + (4 * (ST_RUN_STACK_HEAP + 1) + 1) / 2 + ST_RUN_STACK_HEAP];
    uint8_t *mem = n <= ST_RUN_STACK_HEAP ? (uint8_t *)stack : (uint8_t *)st__alloc(&enc->alloc, size);
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    uint32_t *out = (uint32_t *)(void *)(mem + msz), *start = out + n;
    st__merger mg = {&enc->vocab, &sp->rules, NULL, sp, NULL};
    size_t m = st__merge_heap(&mg, NULL, tok, n, out, start, mem);
    for (size_t k = 0; k < m; k++) put(o, out[k], at[start[k]]);
    if (mem != (uint8_t *)stack) st__free(&enc->alloc, mem, size);
    return ST_OK;
}
