/* The linear encoder for rank vocabularies: backtracking over longest matches (docs/design.md §7).
 *
 * tiktoken's merge loop finds, for a piece, the one token sequence that byte-pair merging by
 * rank produces. That sequence can be found without merging: it is the only sequence of
 * tokens that (a) spells the piece, (b) uses only tokens that merging their own bytes would
 * produce ("reachable"), and (c) has every adjacent pair "compatible": merging the bytes of
 * the two tokens stops at exactly those two. The encoder walks the piece left to right taking
 * the longest reachable token that is compatible with the one before it, trying shorter ones
 * and, past a dead end, stepping back one token; a bit per position remembers dead ends, so
 * the work stays linear. (The method is that of GitHub's `bpe` crate; the tables below are
 * built from the vocabulary, by pipeline.c once they pay: tables_for.) The first walk
 * of a piece also tells whether the whole piece is a token, reachable or not: tiktoken takes
 * such a piece as it is, so that check needs no separate probe.
 *
 * Tables, all indexed by token id (= rank for tiktoken files):
 *  - split: the last merge that builds each token from two smaller ones (a single byte splits
 *    into itself; an unreachable token has none). Compatibility of a pair is decided by
 *    undoing those merges down the two tokens' facing edges.
 *  - pairs: (left, right) -> the token whose split it is.
 *  - prefix: the longest reachable token that is a proper prefix of each token.
 *  - a byte trie of the ordinary tokens for longest-prefix matches; the node of a token is
 *    its id, other nodes are numbered from n_ids up. The walk reads a whole character of 2
 *    or 3 bytes per probe where it can (by_char from the root, character edges below it).
 * A vocabulary borrowed from an image has no tables: its pieces go through the merge loop. */
#ifndef ST_BACKTRACK_H
#define ST_BACKTRACK_H

#include "../formats/vocab.h"

typedef struct st_backtrack {
    int ready;               /* 0: no tables, use the merge loop */
    uint32_t n_ids;
    uint32_t trie_cap;       /* slots in trie (any count: indexed by multiply-shift) */
    uint32_t pair_cap;       /* slots in pairs */
    const uint32_t *root;    /* 256: the node reached by each first byte, ST_NO_TOKEN if none */
    const uint32_t *by_char; /* 65536: for each code point of 2 or 3 UTF-8 bytes, the node after
                                its bytes when that node is a reachable token, else ST_NO_TOKEN:
                                one read instead of two or three trie probes */
    const uint64_t *trie;    /* 0 = empty, else child << 32 | ((parent << 8 | byte) + 1); a child
                                value (like root and by_char entries) carries the flag BT_LEAF
                                when no token extends that node */
    const uint32_t *split;   /* 2 per id: left, right; (id, id) for a byte; ST_NO_TOKEN if none */
    const uint32_t *prefix;  /* per id: longest reachable proper prefix, or ST_NO_TOKEN */
    const uint64_t *reach;   /* bit per id: reachable ordinary token */
    const uint64_t *pairs;   /* 0 = empty, else left << 42 | right << 21 | token */
    const uint64_t *trie_filter, *pair_filter; /* Bloom filters of the two tables' keys */
    uint32_t trie_filter_mask, pair_filter_mask; /* words - 1 */
    void *owned;             /* reach, pairs, pair_filter, root, by_char, split, prefix */
    size_t owned_size;
    void *trie_owned;        /* trie */
    size_t trie_owned_size;
    size_t trie_filter_owned_size; /* trie_filter, owned when this is not 0 */
    /* Character edges: from a node, a whole character of 2 or 3 UTF-8 bytes in one probe (the
     * trie walk otherwise takes a probe a byte). 0 = empty, else
     * value << 40 | node << 16 | code point, where value is the node reached (22 bits) plus
     * BT_CHAR_LEAF and BT_CHAR_MID (a node inside the character is a reachable token, so the
     * walk takes that character byte by byte). chars_cap = 0: none (over 2^22 nodes). */
    const uint64_t *chars, *chars_filter;
    uint32_t chars_cap, chars_filter_mask;
    void *chars_owned;
    size_t chars_owned_size;
} st_backtrack;

/* Build the tables for v. ST_OK with ready = 0 when v does not suit (too many ids, a
 * vocabulary without all 256 bytes); ST_ERR_OUT_OF_MEMORY when memory runs out. */
st_status st__backtrack_build(st_backtrack *bt, const st_vocab *v, const st_allocator *a);
void st__backtrack_free(st_backtrack *bt, const st_allocator *a);

/* Bytes of scratch st__backtrack_encode needs for a piece of n bytes. */
size_t st__backtrack_scratch_size(size_t n);

/* A per-call memo of pair compatibility: ST_BT_MEMO_SLOTS words, all bits set when empty. The
 * same pairs recur all through a text, and a hit replaces a walk of two split trees. */
#define ST_BT_MEMO_BITS 14
#define ST_BT_MEMO_SLOTS ((size_t)1 << ST_BT_MEMO_BITS)

/* Encode the piece p[0..n) (n >= 1; valid UTF-8): writes m token ids to tok and their starts
 * to start (each array holds n entries) and returns m; 0 if the tables cannot encode it, in
 * which case the caller uses the merge loop. memo may be NULL. */
size_t st__backtrack_encode(const st_backtrack *bt, const st_vocab *v, const uint8_t *p, size_t n, uint32_t *tok,
                            uint32_t *start, void *scratch, uint64_t *memo);

#endif
