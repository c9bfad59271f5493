/* Phase-1 BPE training (docs/design.md §8): the trainer's handle. */
#ifndef ST_TRAINER_H
#define ST_TRAINER_H

#include "pretoken_counter.h"

typedef struct st__pair {
    uint32_t left, right;
    int64_t count; /* live count: the pair's occurrences in the current words, times their counts */
    /* The words that held the pair when it was counted or formed (a superset: a word listed may
     * have lost it since; visited words are checked): n of them, up to two in place (most pairs
     * of a superword run occur in one or two candidates, and a list of their own cost each of
     * them an allocation), more in a list of st__pair_list_cap(n) from the allocator. */
    union {
        uint32_t two[2];
        uint32_t *list;
    } words;
    uint32_t n;
    uint32_t stamp : 31;  /* last step that raised the count (to queue it once per step; steps stay
                             below 2^22: merges_limit) */
    uint32_t blocked : 1; /* extension: the pair's token breaks a constraint (never chosen, never queued) */
} st__pair;
_Static_assert(sizeof(st__pair) == 32, "a pair record is 32 bytes");

/* The room of a pair's word list once it left the record: 4, doubled as it fills. */
ST_INLINE size_t st__pair_list_cap(uint32_t n) {
    size_t c = 4;
    while (c < n) c *= 2;
    return c;
}

/* The words of a pair's list (n of them). */
ST_INLINE const uint32_t *st__pair_words(const st__pair *p) { return p->n <= 2 ? p->words.two : p->words.list; }

typedef struct st__heap_entry {
    uint64_t count; /* the pair's count when queued: stale entries are re-queued on pop */
    uint32_t pair;
} st__heap_entry;

#define ST__DELTAS 32

struct st_trainer {
    st_allocator alloc;
    int mode, alphabet;
    uint32_t base; /* A: 256 or 512 */
    uint64_t vocab_size, min_frequency, alphabet_size, target, n_pretokens;
    size_t n_specials;
    struct st_pretokenizer pt;
    int done;
    int stop, stop1; /* ST_STOP_*: why the current phase ended, why phase 1 did */
    int capped;      /* the target was lowered to the rules model's id limit */
    /* words: the distinct pretokens of two or more symbols */
    uint32_t *sym;
    size_t sym_cap;
    uint64_t *woff, *wcount;
    uint32_t *wlen, *wstamp;
    size_t n_words, words_cap;
    /* tokens by internal id (0..A-1 base symbols, A + i made by merge i): their base-symbol
     * sequences as bytes (bytes alphabet: the bytes; UBE: each symbol as 2 big-endian bytes),
     * so that memcmp orders them as Python orders the tuples */
    uint8_t *seq;
    size_t seq_len, seq_cap;
    uint64_t *tok_off;
    uint32_t *tok_len, *hf_key;
    size_t tok_cap;
    /* hf: token strings -> id (the reuse of an existing token's id), open addressing */
    uint32_t *str_slots;
    size_t str_mask, n_strs;
    uint64_t distinct; /* merged tokens made (reused ids not counted) */
    /* hf: HuggingFace's vocabulary size so far (specials + byte-level characters + merged strings,
     * one id per string) and the specials' texts as bytes where every character is a byte-level
     * character (so a token with those bytes has the special's string and id) */
    uint64_t hf_vocab;
    uint8_t *spec_bytes;
    size_t spec_bytes_len;
    size_t *spec_off, *spec_len; /* n_specials each; spec_len SIZE_MAX: no byte-level form */
    int specials_set;
    uint64_t reused;   /* merges whose string was already a token (hf) */
    /* pairs */
    st__pair *pairs;
    size_t n_pairs, pairs_cap;
    uint64_t *pkeys; /* slot keys (left << 32 | right), with pvals = pair + 1 (0: empty) */
    uint32_t *pvals;
    size_t pmask;
    st__heap_entry *heap;
    size_t heap_n, heap_cap;
    uint32_t *touched;
    size_t n_touched, touched_cap;
    uint32_t step_no;
    /* per-word pending pair deltas (merged before touching the pair table) */
    uint64_t dkey[ST__DELTAS];
    int64_t dval[ST__DELTAS];
    size_t n_deltas;
    uint64_t skip_key; /* the pair being merged: its count is set to 0 at the end, not tracked */
    int oom;
    /* per-word scratch: merge sites, and a window's new symbols (max word length each) */
    uint32_t *sites, *window;
    size_t scratch_cap;
    /* the result */
    uint32_t *merges;
    uint64_t *counts;
    size_t n_merges, merges_cap;
    /* phase 2 (superwords): the words are the candidates as phase-1 token ids; supermerge i is
     * internal token base + made + i (made = the phase-1 merges), written as base + kept + i */
    int phase;     /* 1, or 2 once phase 2 has started */
    int algorithm; /* ST_ALGORITHM_*: set before the first step (st_trainer_set_superwords) */
    int ngram_split; /* split the candidates before phase 2 (ST_SUPERWORDS_NGRAM_SPLIT) */
    int stepped;     /* a step was made: the options are fixed */
    /* the pass over the texts (ST_TRAINING_CANDIDATES): the candidates given back so far (NULL
     * before the first), and what the pass counted, kept once phase 2 has started */
    st_counter *pass;
    uint64_t pass_documents, pass_bytes;
    uint64_t supermerges_arg, steps;
    size_t made;        /* phase-1 merges made */
    size_t next_merge;  /* j: regular merges replayed (kept) so far */
    uint64_t n_candidates;
    uint64_t ngram_cmin, ngram_max_len;
    uint32_t *super;      /* internal ids, 2 per supermerge */
    uint64_t *super_counts;
    size_t n_super, super_cap;
    uint32_t *super_out; /* the same in written ids, for st_trainer_supermerges (rebuilt lazily) */
    size_t super_out_n, super_out_cap, super_out_kept;
    /* BOUNDLESS with every step bounded by a regular merge's count (prune_pairs): pairs of a count
     * at or below prune_at are never chosen and are dropped, when the pairs have doubled since
     * pruned_n */
    int prune;
    uint64_t prune_at;
    size_t pruned_n;
    /* the first pass of a pruned phase 2's start (tally_pairs): each pair's count by its key + 1
     * (0: an empty slot); while tally_keys is set, apply_delta counts into it (tally_filter 0)
     * or makes only the pairs it counts above prune_at (tally_filter 1) */
    uint64_t *tally_keys, *tally_counts;
    size_t tally_mask, tally_n;
    int tally_filter;
    /* BOUNDLESS: pairs popped while a part was a regular merge not yet replayed, by that merge */
    uint32_t *wait_head; /* made entries: first waiting entry + 1, 0 for none */
    uint32_t *wait_pair, *wait_next;
    size_t n_wait, wait_cap;
    /* extension (st_trainer_set_seed_merges): the seed merges replayed first, the constraints on
     * the merges after them, and what the training line records */
    uint32_t *seeds;
    size_t n_seeds;
    int extend;
    uint32_t max_words, colon_space;
    uint64_t seed_min_count, n_blocked;
    char base_name[128];
    size_t base_name_len;
};

uint64_t st__trainer_kept(const st_trainer *t, int algorithm, uint64_t supermerges);
const char *st__superword_args_error(const st_trainer *t, int algorithm, uint64_t supermerges);

/* The steps of the second pass, as st_trainer_step and st_trainer_candidates_* take them; also
 * called by the C tests, which check each on its own (another algorithm, s, c_min, max_len than
 * the trainer's own options). */
/* A candidates counter over the eligible vocabulary of algorithm (SuperBPE: s = supermerges) of a
 * trainer whose phase 1 is done and phase 2 not started (supertok.h, st_trainer_candidates_new). */
st_status st__counter_new_candidates(const st_trainer *trainer, int algorithm, uint64_t supermerges,
                                     const st_allocator *alloc, st_counter **out, st_error *err);
/* The spec of the candidates counter st__counter_new_candidates makes (supertok.h,
 * st_trainer_candidates_spec; candidates_spec.c). */
st_status st__candidates_spec(const st_trainer *trainer, int algorithm, uint64_t supermerges, uint8_t *out, size_t cap,
                              size_t *out_len, st_error *err);
/* Phase 2 from the candidates (made from this trainer with the same algorithm and supermerges,
 * possibly split; else ST_ERR_INVALID_ARGUMENT naming the mismatch); a refusal leaves phase 1 as
 * it was. */
st_status st__trainer_start_superwords(st_trainer *trainer, const st_counter *candidates, int algorithm,
                                       uint64_t supermerges, st_error *err);

#endif
