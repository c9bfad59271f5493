/* The two byte-pair merge loops, shared by every kind that merges pairs (docs/design.md §7):
 *  - merge_short: tiktoken's loop on stack arrays, for pieces up to ST_LINEAR_PIECE bytes,
 *    with the rank of every adjacent pair cached and only the two pairs touching a merge
 *    looked up again (rank vocabularies: short pieces are their common case);
 *  - merge_heap: the same merges in the same order from a binary heap keyed by (rank, start),
 *    so a megabyte of one letter costs O(n log n), not O(n^2).
 * Both pick the lowest rank and, among equal ranks, the leftmost pair: tiktoken's order, and
 * the order training applied rules in. What "the rank of a pair" is depends on the kind, and
 * is decided in one place, st__merge_pair_rank. */
#ifndef ST_MERGE_H
#define ST_MERGE_H

#include "../formats/vocab.h"

/* Pieces up to ST_LINEAR_PIECE bytes use the linear scan (cheapest when short: its stack arrays
 * and one pass over the ranks a merge beat the heap's sifts up to a few dozen parts). 24 against
 * 10 took 4% off the C core's time on fresh English and 10% on German, 1% on Russian (bench/
 * encode_driver.c, the two builds side by side, median per 1 MB slice); 16 and 32 measured
 * within 2% of it. A merge scans at most 24 ranks, so the cost a byte stays bounded. */
#ifndef ST_LINEAR_PIECE
#define ST_LINEAR_PIECE 24
#endif

/* The merges work on a copy of the piece followed by ST_PAD readable bytes, so keys of up to
 * 8 bytes (nearly all pairs) take the one-word lookup path. */
#define ST_PAD 8

/* A cache of pair ranks keyed by the two parts' token ids (which fix the joined bytes): the
 * same joins recur all through a text (the bytes of every common character, the syllables of
 * every common word), and a hit in this small table stays in cache where a probe of the
 * vocabulary's multi-megabyte table would miss. Direct-mapped. Its entries depend on the
 * vocabulary alone, never on the text, so one table serves any number of calls (the encoder
 * keeps it in its reusable scratch, piece_cache.h). Empty: every field 0xFFFFFFFF. */
#define ST_PAIR_CACHE_BITS 14
typedef struct st__pair_slot {
    uint32_t left, right, rank, unused;
} st__pair_slot;

/* What a merge consults: a rank vocabulary's store (rules NULL: a pair's rank is the id of its
 * joined bytes, if a token) or a rule model's rules (a pair's rank is the token its rule
 * makes, whose id orders the rules). pairs: the pair cache, or NULL. */
typedef struct st__merger {
    const st_vocab *v;
    const st_rules *rules;
    st__pair_slot *pairs;
    const st_supers *supers; /* the superword pass (superword_pass.c): rules are these
                                supermerges, looked up through their filter (st__supers_find);
                                NULL otherwise */
    const uint32_t *made;    /* a HuggingFace model's rules (st__hf): the rule of rank r makes id
                                made[r]; NULL: rule r makes id r */
} st__merger;

/* tiktoken's merge of the piece p[0..n) (n <= ST_LINEAR_PIECE, ST_PAD readable bytes after
 * it; rank vocabularies only). Writes the m final parts' tokens to tok_out and their byte
 * starts to start_out (n entries each) and returns m. */
size_t st__merge_short(const st__merger *m, const uint8_t *p, size_t n, uint32_t *tok_out, uint32_t *start_out);

/* The merge of a rule model's n base symbols sym[0..n) (n <= ST_LINEAR_PIECE), on stack arrays
 * as st__merge_short: writes the m final parts' tokens and their symbol starts to tok_out and
 * start_out (n entries each; sym is not written) and returns m. The same merges, in the same
 * order, as st__merge_heap. */
size_t st__merge_short_syms(const st__merger *m, const uint32_t *sym, size_t n, uint32_t *tok_out,
                            uint32_t *start_out);

/* Bytes of scratch st__merge_heap needs for n parts. */
size_t st__merge_heap_scratch_size(size_t n);

/* The most parts a merge call takes: node names are 32-bit offsets, and a call's scratch (the
 * heap's, plus the caller's arrays: under 64 bytes a part, pipeline.c) must have a size that fits
 * in size_t, which on wasm32 is 32 bits. A longer piece is refused (ST_ERR_OUT_OF_MEMORY: its
 * scratch could not be had there) rather than sized by a product that wrapped around. */
#define ST_MERGE_MAX_PARTS (SIZE_MAX / 64 < 0x7FFFFFF0u ? SIZE_MAX / 64 : (size_t)0x7FFFFFF0u)

/* The heap merge of n parts: for a rank vocabulary the bytes p[0..n) (ST_PAD readable bytes
 * after them; sym NULL), for a rule model the base symbols sym[0..n) (p NULL); starts are then
 * symbol indexes. Writes the final parts' tokens and starts (n entries each) and returns
 * their number. scratch: st__merge_heap_scratch_size(n) bytes, 8-byte aligned. */
size_t st__merge_heap(const st__merger *m, const uint8_t *p, const uint32_t *sym, size_t n, uint32_t *tok_out,
                      uint32_t *start_out, void *scratch);

#endif
