/* The encoding handle, shared by the encode pipeline (pipeline.c and the files it calls) and the
 * handle plumbing (encoding.c: constructors, images, accessors, decoding). */
#ifndef ST_ENCODING_H
#define ST_ENCODING_H

#include "backtrack.h"
#include "../text/pretokenize.h"
#include "../formats/vocab.h"

/* The kinds of model behind an encoding. Each kind has its own small structure next to the
 * token store every kind shares (st_vocab); pipeline.c turns a piece into tokens with one switch
 * on the kind (encode_piece). A new kind (superword models) is a
 * new value, its structure, and a case in encode_piece (and a free in encoding_release if it
 * owns tables): not a branch through the merge loops. */
typedef enum st__kind {
    ST__KIND_RANKS = 0, /* tiktoken rank files and images: a pair merges when its joined bytes
                           are a token, lowest id first; the store is all they need */
    ST__KIND_RULES = 1, /* merge-rules models: a pair merges when it is a rule (st_rules) */
    ST__KIND_HF = 2     /* HuggingFace BPE models (tokenizer.json): the store's ids are the file's, a
                           pair merges when it is a merge (st__hf: its rank, and the id it makes) */
} st__kind;

/* A HuggingFace BPE model's own tables (hf_encoding.c), beside the store every kind shares. */
typedef struct st__hf {
    st_rules rules;           /* (left, right) -> the merge's rank (its index in the file) */
    const uint32_t *made;     /* rank -> the id the merge makes */
    uint32_t n_merges;
    uint32_t flags;           /* ST__HF_IGNORE_MERGES, ST__HF_NFC (formats/tokenizer_json.h) */
    const uint8_t *string_flags; /* per special string (st_vocab's numbering): ST__ADDED_* */
    void *owned;
    size_t owned_size;
} st__hf;

/* The reusable scratch of the encoder (piece_cache.h); opaque here. */
typedef struct st__scratch st__scratch;

#define ST_SCRATCH_SLOTS 4 /* scratch blocks a handle keeps for concurrent calls; more callers
                              at once allocate their own, as every call did before */

/* What a handle builds or keeps after it is made: the backtracking encoder's tables (built on
 * the first piece that wants them, by whichever thread gets there first; other threads
 * meanwhile use the merge loop, which gives the same ids) and the encoder's scratch blocks.
 * A handle is shared by threads as `const st_encoding *`, and everything a reader sees through
 * it is immutable; this state is not, so it lives in its own allocation that the handle points
 * to: the pointer is const with the handle, the pointee is mutable, and every field is guarded
 * by the atomics below (a claim before a write, a release store after). Writing through a
 * cast-away const handle instead would be undefined behaviour for a handle defined const, and
 * hides from the reader which fields may change. */
typedef struct st__lazy {
    int bt_state;  /* BT_* (pipeline.c): claimed with st__atomic_claim, published with a store */
    int bt_failed; /* the build ran out of memory (set before bt_state becomes BT_UNAVAILABLE) */
    st_backtrack bt;
    size_t bt_debt; /* atomic: the merge work that pieces wanting the tables cost before they
                       were built (pipeline.c: tables_for) */
    int slot_busy[ST_SCRATCH_SLOTS]; /* 0 free, 1 claimed by a running call */
    st__scratch *slot[ST_SCRATCH_SLOTS]; /* made by the first call that claims the slot */
    /* The piece cache (piece_cache.c): the bound on its memory that st_encoding_set_cache_size set
     * (or the default), the bytes its tables hold now, and the pieces looked up in it (each
     * call adds its own figures once, at its end). Atomic, as any thread may read or set them. */
    size_t cache_limit, cache_held, cache_hits, cache_misses, span_hits, span_misses;
} st__lazy;

enum { BT_NOT_BUILT, BT_BUILDING, BT_READY, BT_UNAVAILABLE };

struct st_encoding {
    st_allocator alloc;
    uint32_t kind;             /* st__kind */
    st_vocab vocab;            /* the token store: every kind */
    st_rules rules;            /* ST__KIND_RULES only */
    st_supers supers;          /* ST__KIND_RULES only: a superword model's supermerges (n 0: none) */
    st__hf hf;                 /* ST__KIND_HF only */
    struct st_pretokenizer pt; /* a copy of the constructor's pre-tokenizer */
    st__lazy *lazy;            /* see st__lazy; never NULL in a made handle */
    /* The special strings sorted by their bytes (special_policy.c), built when the handle is
     * made: NULL when it has none. */
    const struct st__special_entry *special_order;
    uint32_t n_special_order, special_first_bytes; /* its entries; the distinct first bytes among them */
};

/* encoding.c: a rule model's encoding, with supermerges (supers[2j], supers[2j + 1]: the parts
 * of supermerge j, id A + n_merges + j) when n_super > 0. st_encoding_new_merges is this with
 * none; model_encoding.c's st_encoding_from_model passes a model's. */
st_status st__encoding_new_rules(int alphabet, const uint32_t *merges, size_t n_merges, const uint32_t *supers,
                                 size_t n_super, const char *specials, size_t specials_len, const st_pretokenizer *pt,
                                 const st_allocator *alloc, st_encoding **out, st_error *err);

/* encoding.c: a new handle of the kind, with a copy of pt (may be NULL) and its lazy state; the
 * caller fills its model, then st__encoding_finish hands it out (or frees it on failure). */
st_status st__encoding_start(const st_allocator *alloc, const struct st_pretokenizer *pt, uint32_t kind,
                             st_encoding **enc, st_error *err);
st_status st__encoding_finish(st_encoding *enc, st_status st, st_encoding **out, st_error *err);
/* special_policy.c: enc->special_order from its store's special strings (st__encoding_finish
 * calls it for every kind), and its free. */
st_status st__special_order_build(st_encoding *enc, st_error *err);
void st__special_order_free(st_encoding *enc);

/* hf_encoding.c: st_encoding_save_compact of an encoding from a tokenizer.json (its own image). */
st_status st__hf_save_compact(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size, st_error *err);

/* cut.c: 1 if the encoding's pattern has cut rules proven within ordinary text (st__cut_within
 * finds places: those of st_encoding_cut's patterns, and llama3's and qwen2's), else 0. */
int st__cut_supported(const st_encoding *enc);
/* cut.c: the first place p, from <= p < to, where the ordinary text s[0..len) (text between
 * special tokens, past normalization: no special-token check is made) may be cut by the rules of
 * st_encoding_cut: the pieces of s[0..p) and of s[p..len), each pre-tokenized alone, are those
 * of s. 0 if none. */
size_t st__cut_within(const st_encoding *enc, const uint8_t *s, size_t len, size_t from, size_t to);

/* piece_cache.c: free the scratch blocks of a handle being freed (no call may be running). */
void st__scratch_pool_free(st__lazy *lazy, const st_allocator *a);
/* pipeline.c: the backtracking tables, building them if this thread is first; NULL if not
 * (yet) available. */
const st_backtrack *st__backtrack_tables(const st_encoding *enc);

#endif
