/* Supermerge candidates (docs/design.md §8, docs/formats/train-format.md): the vocabulary index that
 * decides which pretokens are eligible, and the state a candidates counter adds to a pretoken
 * counter. Shared by pretoken_counter.c (counting, merge, save, load), ngram.c (the n-gram split) and
 * trainer.c (phase 2 reads the candidates back as token ids). */
#ifndef ST_CANDIDATES_H
#define ST_CANDIDATES_H

#include "../base/internal.h"

/* The tokens of a vocabulary by their base-symbol sequences, as the trainer stores them (bytes:
 * the bytes; UBE: each symbol as 2 big-endian bytes): ids 0..n-1, looked up by the text of a
 * pretoken. Where two merges spell the same sequence (paper mode allows it) the smaller id is
 * the one found (docs/design.md §8 *Status*). */
typedef struct st__tokset {
    int alphabet;
    uint8_t *seq;
    size_t seq_len;
    uint64_t *off;
    uint32_t *len;
    uint32_t n;
    uint32_t *slots; /* id + 1, 0 empty; open addressing, about half full */
    size_t mask;
    uint8_t *scratch; /* UBE: a pretoken's symbols in the same form */
    size_t scratch_cap;
} st__tokset;

/* Index the first n tokens (ids 0..n-1) of a token table; 0 when out of memory. */
int st__tokset_init(st__tokset *s, const st_allocator *a, int alphabet, const uint8_t *seq, const uint64_t *off,
                    const uint32_t *len, uint32_t n);
void st__tokset_free(st__tokset *s, const st_allocator *a);
/* The smallest id whose symbols are those of the valid UTF-8 text p[0..n), ST__NO_TOKEN_ID when
 * none is; *oom is set when the UBE scratch could not grow. */
uint32_t st__tokset_find(st__tokset *s, const st_allocator *a, const uint8_t *p, size_t n, int *oom);
/* Room for st__tokset_find on keys of up to n bytes, so that it allocates nothing; 0 when out of
 * memory. */
int st__tokset_reserve(st__tokset *s, const st_allocator *a, size_t n);

/* 1 if the valid UTF-8 text p[0..n) holds a letter (\p{L}: general category L*). */
int st__has_letter(const uint8_t *p, size_t n);

/* The fingerprint of an eligible vocabulary: the alphabet and the kept merges, in order. */
uint64_t st__vocab_fingerprint(int alphabet, const uint32_t *merges, uint64_t kept);

#define ST__CAND_HOT_BITS 12
typedef struct st__cand_hot {
    uint64_t word; /* a short pretoken's bytes, zero-padded */
    uint32_t len;  /* 0: empty */
    uint32_t eligible;
} st__cand_hot;

/* What a candidates counter adds to an st_counter. */
typedef struct st__cand {
    int algorithm, alphabet;
    uint64_t supermerges; /* the SUPERBPE argument (0 for BOUNDLESS) */
    uint64_t kept;        /* regular merges in the eligible vocabulary */
    uint64_t fingerprint;
    uint64_t ngram_cmin;    /* the n-gram split's parameters, 0 when not split */
    uint64_t ngram_max_len;
    int given_back; /* added to its trainer's pass (st_trainer_candidates_add): takes nothing more */
    st__tokset toks; /* n == 0 in a split counter (it counts no documents) */
    uint8_t *key;    /* the run being built: pretokens joined with 0xFF */
    size_t key_cap;
    st__cand_hot *hot; /* eligibility of recent short pretokens */
} st__cand;

void st__cand_free(st__cand *c, const st_allocator *a);
/* A candidates counter of pre-tokenizer pt over the eligible vocabulary of n tokens (seq, off,
 * len: their base-symbol bytes as the trainer lays them out) with these parameters: what
 * st__counter_new_candidates (from the trainer) and st_candidates_new (from a spec) both make. */
st_status st__counter_new_cand(const struct st_pretokenizer *pt, int algorithm, int alphabet, uint64_t supermerges,
                               uint64_t kept, uint64_t fingerprint, const uint8_t *seq, const uint64_t *off,
                               const uint32_t *len, uint32_t n, const st_allocator *alloc, st_counter **out,
                               st_error *err);
/* 1 if candidates of a and b may be summed (same vocabulary, algorithm and split). */
int st__cand_compatible(const st__cand *a, const st__cand *b);
/* A copy of src's parameters (not its index): for a split counter. NULL when out of memory. */
st__cand *st__cand_clone_params(const st__cand *src, const st_allocator *a);

/* Appendix B: the longest n-gram the split counts, in pretokens. */
#define ST__NGRAM_MAX_LEN 30

/* Appendix B: the candidates split into shorter, more frequent ones (ngram.c). n-grams of
 * 2..max_len adjacent pretokens of the candidates are counted Apriori-style (an n-gram is counted
 * only where both its (n-1)-grams reach c_min; those below c_min after each pass are dropped);
 * then each candidate is cut left to right, greedily: at each position the longest counted
 * n-gram starting there is taken (moving on by one pretoken when none is); pieces of two or more
 * pretokens are the new candidates, with the original's count (c_min >= 1, max_len >= 2). *out is
 * a new candidates counter with the same pre-tokenizer and fingerprint (same statistics
 * DOCUMENTS and BYTES) that records the split: it takes no documents, is not split again, and
 * merges or loads only candidates split with the same c_min and max_len. */
st_status st__counter_split_ngrams(const st_counter *candidates, uint64_t c_min, size_t max_len,
                                   const st_allocator *alloc, st_counter **out, st_error *err);

#define ST__CAND_SEP 0xFFu /* joins the pretokens of a candidate's key (never in UTF-8) */

/* The number of pretokens in a candidate's key p[0..len). */
ST_INLINE size_t st__cand_pieces(const uint8_t *p, size_t len) {
    size_t n = 1;
    for (size_t k = 0; k < len; k++) n += p[k] == ST__CAND_SEP;
    return n;
}

#endif
