/* The superword pass's run, as the pipeline feeds it (docs/design.md §7). A superword model's
 * pretoken that became one eligible token joins the current run (its token and byte start); any
 * other piece, a special token or the end of the text ends the run, which is merged by
 * supermerges and put out then (st__run_flush, superword_pass.c). The pipeline (pipeline.c) feeds
 * the run once a piece, from the piece cache's replay too, so the feeding is inline here; the
 * merge of a run, called once a run, is in superword_pass.c. */
#ifndef ST_SUPERWORD_PASS_H
#define ST_SUPERWORD_PASS_H

#include "encoding.h"
#include "sink.h"

#define ST_RUN_STACK 64 /* run entries held in the encoder itself; longer runs allocate */

/* A call's run (sup NULL for a model without supermerges: no pass). */
typedef struct st__run {
    const st_supers *sup;
    uint32_t *tok;
    size_t *at;
    size_t n, cap;
    void *owned; /* tok and at once they outgrow the stack arrays below */
    uint32_t stack_tok[ST_RUN_STACK];
    size_t stack_at[ST_RUN_STACK];
} st__run;

/* An empty run for the supermerges sup, in the stack arrays. */
ST_INLINE void st__run_init(st__run *r, const st_supers *sup) {
    r->sup = sup;
    r->tok = r->stack_tok;
    r->at = r->stack_at;
    r->n = 0;
    r->cap = ST_RUN_STACK;
}

/* Merge the run by supermerges and put its tokens out to o; the run is then empty. */
st_status st__run_flush(st__run *run, sink *o, const st_encoding *enc);
/* Append token t at text offset a to a full run, growing it. */
st_status st__run_push_grow(st__run *r, const st_allocator *alloc, uint32_t t, size_t a);
/* Free what the run allocated. */
void st__run_release(st__run *r, const st_allocator *alloc);

/* Entry n = r->n of a run with room for it: token t at text offset a; what the lookup of the
 * pair of entries n - 1 and n will read starts loading now (st__supers_prefetch). */
ST_INLINE void run_put(st__run *r, uint32_t t, size_t a) {
    size_t n = r->n;
    r->tok[n] = t;
    r->at[n] = a;
    if (n) st__supers_prefetch(r->sup, r->tok[n - 1], t);
    r->n = n + 1;
}

/* A superword model's piece of m tokens (regular ids) starting at text offset a: one eligible
 * token joins run r (returns 1: the caller puts nothing); anything else ends the run, put out
 * to o now, before the caller puts the piece's tokens (returns 0). *st: the status. */
ST_INLINE int piece_to_run(st__run *r, sink *o, const st_encoding *enc, const uint32_t *tok, size_t m, size_t a,
                           st_status *st) {
    if (m == 1 && st__bit(r->sup->eligible, tok[0])) {
        if (r->n < r->cap) {
            run_put(r, tok[0], a);
            *st = ST_OK;
        } else {
            *st = st__run_push_grow(r, &enc->alloc, tok[0], a);
        }
        return 1;
    }
    *st = r->n ? st__run_flush(r, o, enc) : ST_OK; /* the run ends before this piece */
    return 0;
}

#endif
