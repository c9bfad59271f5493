/* Pretoken counters (docs/design.md §8, docs/formats/train-format.md): the handle's layout and the
 * internal iteration the trainer walks. */
#ifndef ST_PRETOKEN_COUNTER_H
#define ST_PRETOKEN_COUNTER_H

#include "../base/internal.h"
#include "../text/pretokenize.h"

/* Little-endian fields of the saved formats (counts files and candidates specs). */
static inline void st__put_le32(uint8_t *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}
static inline void st__put_le64(uint8_t *p, uint64_t v) {
    for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> (8 * k));
}
static inline uint32_t st__get_le32(const uint8_t *p) {
    uint32_t v = 0;
    for (int k = 3; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}
static inline uint64_t st__get_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

/* One distinct pretoken in 16 bytes (the entries are most of a big counter's memory): its count,
 * and loc = (where its record starts in the arena) << 24 | its length. A key of 2^24 - 1 bytes or
 * more has the length ST__KEY_LONG there, and its record holds the length (4 bytes, little-endian)
 * before the key. The arena stays under 2^40 bytes. */
typedef struct st__count_entry {
    uint64_t count;
    uint64_t loc;
} st__count_entry;
#define ST__KEY_LONG 0xFFFFFFu
#define ST__ARENA_MAX ((uint64_t)1 << 40)

ST_INLINE uint64_t st__entry_start(const st__count_entry *e) { return e->loc >> 24; }
ST_INLINE size_t st__entry_len(const uint8_t *arena, const st__count_entry *e) {
    uint32_t l = (uint32_t)(e->loc & ST__KEY_LONG);
    return l != ST__KEY_LONG ? l : st__get_le32(arena + (e->loc >> 24));
}
ST_INLINE const uint8_t *st__entry_key(const uint8_t *arena, const st__count_entry *e) {
    return arena + (e->loc >> 24) + ((e->loc & ST__KEY_LONG) == ST__KEY_LONG ? 4 : 0);
}
/* where the record after it may start */
ST_INLINE uint64_t st__entry_end(const uint8_t *arena, const st__count_entry *e) {
    return (uint64_t)(st__entry_key(arena, e) - arena) + st__entry_len(arena, e);
}

struct st_counter {
    st_allocator alloc;
    struct st_pretokenizer pt;
    /* open addressing, linear probing: slot = (high 32 bits of the hash << 32) | (entry + 1),
     * 0 for an empty slot; mask + 1 slots, a power of two */
    uint64_t *slots;
    size_t mask;
    st__count_entry *entries;
    size_t n, cap;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    uint64_t stats[4]; /* ST_COUNTER_DOCUMENTS .. ST_COUNTER_UNIQUE (UNIQUE mirrors n) */
    /* A direct-mapped cache of recent short pretokens (1-8 bytes, as one little-endian word):
     * the frequent words of a language stay in it (128 KiB, cache-resident), so most pieces cost
     * one hash and no probe of the big table. Allocated on the first document. */
    struct st__count_hot *hot;
    /* NULL for a pretoken counter; a candidates counter's vocabulary and parameters
     * (candidates.h): its keys are runs of pretokens joined with 0xFF */
    struct st__cand *cand;
};

#define ST__HOT_BITS 13
typedef struct st__count_hot {
    uint64_t word; /* the bytes, zero-padded */
    uint32_t len;  /* 0: empty */
    uint32_t entry;
} st__count_hot;

/* The distinct pretokens, in insertion order (no order is promised: the trainer's result does
 * not depend on it). */
ST_INLINE size_t st__counter_size(const st_counter *c) { return c->n; }
ST_INLINE const uint8_t *st__counter_entry(const st_counter *c, size_t i, size_t *len, uint64_t *count) {
    const st__count_entry *e = &c->entries[i];
    *len = st__entry_len(c->arena, e);
    *count = e->count;
    return st__entry_key(c->arena, e);
}
/* Add count occurrences of the key p[0..n) whose hash is h (st__hash_bytes); its entry + 1, or 0
 * when out of memory (nothing changed). UNIQUE follows; the other statistics are the caller's. */
size_t st__counter_add_key(st_counter *c, const uint8_t *p, size_t n, uint64_t h, uint64_t count);

/* from's entries and statistics added to into (st_counter_merge's checks and result), from left
 * empty: the trainer's pass taking a candidates counter given back, so that the counts are never
 * held twice (the whole English file's candidates are some hundreds of MB). An empty into with
 * the same allocator takes from's tables as they are. */
st_status st__counter_hand_over(st_counter *into, st_counter *from, st_error *err);

/* Free c's slot index: its entries stay, in order, to be read (st__counter_entry); the next key
 * added rebuilds it. The trainer's pass, about to be read once into phase 2's words: the index
 * was a sixth of the pass's memory (34 MB of the whole English file's candidates). */
void st__counter_drop_index(st_counter *c);

/* 1 when c's keys lie in the arena in entry order (each after the one before), as counting
 * and hand-overs leave them: the condition for st__counter_truncate. */
int st__counter_keys_in_order(const st_counter *c);
/* Keep c's first n entries (n <= its size) and the arena up to their keys' end, giving the rest
 * back where the allocator can without a copy (st__realloc_gives_back). For the trainer, which
 * reads its pass into phase 2's words from the last entry back and shrinks the pass as it goes:
 * the candidates and the words are never both whole. The index must be dropped and the keys in
 * order; the hot cache is cleared (it names entries). */
void st__counter_truncate(st_counter *c, size_t n);
/* How many bytes of keys a counter read from its end (the trainer's words, a hand-over) gives
 * back at a time: every key in the test builds, so that their small corpora take that path. */
#ifdef ST_TEST_COUNTERS
#define ST__COUNTER_GIVE_BACK 1
#else
#define ST__COUNTER_GIVE_BACK ((size_t)4 << 20)
#endif

/* 1 if the two pre-tokenizers split every text the same way. */
int st__pretokenizers_equal(const struct st_pretokenizer *a, const struct st_pretokenizer *b);

#endif
