/* The piece cache's tables and their lookup (docs/design.md §7): the layout of a scratch block
 * (the piece cache, the pair cache, the backtracking memo), and the lookup, fill and replacement
 * of pieces that the pipeline (pipeline.c) runs once a piece that is not one token. Those are
 * inline here, as they were in the one file the pipeline was: a lookup costs a compare where a
 * merge costs hundreds of instructions, and a call around it would be a visible share of a
 * warm call. Making, sizing, claiming and freeing the blocks, once a call, is piece_cache.c. */
#ifndef ST_PIECE_CACHE_H
#define ST_PIECE_CACHE_H

#include "encoding.h"
#include "merge.h"
#include "span_cache.h"

/* The piece cache: pretoken bytes -> the tokens encoding that piece gives, kept across calls.
 * Words that are not one token recur (inflected forms, names; a service sees the same words in
 * call after call), and a hit replaces a merge by a compare. Each entry holds the piece's own
 * bytes, so a hit depends on nothing but those bytes and stays exact in any later call, with any
 * text around it: the tokens of a piece are a function of its bytes alone (whichever merge loop
 * made them; the backtracking encoder gives the same ids), and what depends on the text around
 * it (offsets, the superword pass) is computed at replay from the text. The tables are fixed in
 * size by the limit the host set (st_encoding_set_cache_size), a new piece replacing an old one,
 * so memory stays bounded whatever the input.
 *
 * Two tables. The short one (pieces up to ST_CACHE_PIECE bytes: every piece that is not one
 * token in English, Russian, Arabic or code) is made of 64-byte lines, in sets of SET_LINES
 * adjacent lines, and a tag record per set (set_tags: a hash byte, the kind and a use count for
 * each line), kept apart from the lines. A line holds an 8-byte header (hash, length, token
 * count), then the piece's bytes and, from the next multiple of 4, its tokens, one 32-bit word
 * each (id | start << 26). A small piece (bytes rounded up to 4, plus 4 a token, within 56: up to
 * 28 bytes and 7 tokens, or 40 and 4; 98-100% of the pieces that are not one token in English,
 * Russian and Arabic) takes one line, any of its set's; a larger one (up to 56 bytes and 16
 * tokens) a pair of lines from an even one, as one entry, its bytes in the first line and its
 * tokens spilling into the second (whose header is no header). Measured on 1 MiB of text a
 * language (o200k), the distinct pieces that are not one token (Arabic 20k, Russian 19k, Chinese
 * 35k, of which 13k need a pair) did not fit the 16,384 128-byte entries the table had before,
 * and, direct-mapped, two recurring pieces of one slot evicted each other on every pass:
 * re-merging them was 37-58% of a warm call's instructions.
 *
 * Replacement: a clock per set with use counts (see st__cache_small_victim). Sets of 8 lines against 2
 * and 4 (the third call on the same 1 MiB, o200k, a lone caller's default tables, with the
 * first replacement scheme): misses Arabic 38 / 1,765 / 387, Russian 9 / 1,326 / 232, Chinese
 * 4,760 / 15,993 / 9,471; instructions Chinese 61M / 87M / 72M. A lookup reads the set's tags
 * (16 bytes) and only a line whose hash byte matches.
 *
 * The long table (up to ST_CACHE_LONG_PIECE bytes: a Chinese or Japanese clause is one piece of
 * o200k's pattern, and 10% of Chinese and 44% of Japanese tokens are in pieces past 56 bytes) has
 * 512-byte entries, direct-mapped, and is made only when a long piece first wants it. */
#define ST_CACHE_PIECE 56      /* the longest piece the short table holds */
#ifndef SET_LINES
#define SET_LINES 8 /* lines a set: a piece is looked for in these (a pair entry from an even one) */
#endif
#define ST_CACHE_LONG_PIECE 240
#define ST_CACHE_LONG_TOKENS 40
#define ST_CACHE_ID_BITS 26    /* a short entry's token word: id | start << 26 (start < 56) */
#ifndef ST_CACHE_MIN_TEXT
#define ST_CACHE_MIN_TEXT 8192 /* with the cache off, texts this long still use the pair cache and
                                  memo (below this they cost more than they save) */
#endif

enum { LINE_EMPTY = 0, LINE_SMALL = 1, LINE_PAIR = 2, LINE_PAIR2 = 3 }; /* a pair: LINE_PAIR, then LINE_PAIR2 */
#define LINE_DATA 56 /* a line's bytes past its header */
#define PAIR_DATA (LINE_DATA + 64)

typedef struct cache_entry { /* one line of the short table */
    uint32_t hash;            /* the piece's hash, low half (its set takes the high half) */
    uint8_t len, ntok;
    uint8_t joins;            /* 1: a superword model's piece of one eligible token, which
                                 joins the run (piece_to_run's test, made once when the entry is:
                                 a hit then reads no eligible bit, and in Japanese, where nearly
                                 every character is such a piece, the pass's cost beyond the
                                 plain model's fell by 8%, Chinese 10%; all of a handle's calls
                                 run the pass or none do, so the flag is the entry's own) */
    uint8_t unused;
    uint8_t data[LINE_DATA];  /* bytes, then token words from the next multiple of 4 */
} cache_entry;
_Static_assert(sizeof(cache_entry) == 64, "a piece cache line is 64 bytes");

/* A set's tags, kept apart from its lines (four sets' tags to a 64-byte line, after the table's
 * lines): what a lookup and the replacement read, so that a piece not in the cache costs one
 * line's read, not its set's eight, and counting uses writes no line of pieces. Against the
 * direct-mapped table before, fresh text ran 12-32% slower with the kind and use count in each
 * line's header and 3-16% slower with the tags (the encode benchmark's order, 7 languages, CPU
 * time, separate interleaved runs); what remains is the larger tables (piece_cache.c: share_of). */
typedef struct set_tags {
    uint8_t fp[SET_LINES];   /* a byte of each entry's hash (bits 24-31), where it starts */
    uint8_t meta[SET_LINES]; /* bits 0-1: the line's kind; 2-3: its entry's use count (1 when made,
                                up by one a hit, to 3, down by one a pass of the hand);
                                meta[0] bits 4-7: the set's clock hand */
} set_tags;
#define META_KIND 3u
#define META_USE 12u
#define META_USE1 4u

typedef struct long_entry {
    uint64_t hash; /* of the piece, | 1; 0 = empty */
    uint16_t len, ntok;
    uint32_t unused;
    uint8_t bytes[ST_CACHE_LONG_PIECE];
    uint32_t tok[ST_CACHE_LONG_TOKENS];
    uint16_t rel[ST_CACHE_LONG_TOKENS];
    uint8_t pad[16];
} long_entry;
_Static_assert(sizeof(long_entry) == 512, "a long piece cache entry is eight 64-byte lines");

/* The encoder's reusable caches, kept by the handle in up to ST_SCRATCH_SLOTS blocks, one per
 * running call (piece_cache.c: scratch_claim): the piece cache (above), the pair cache (merge.h)
 * and the backtracking memo (backtrack.h). All three hold facts about the vocabulary alone (a piece's
 * tokens, a pair's rank, whether two tokens may follow each other), never about a text, so
 * every entry stays valid in every later call. A block belongs to one call at a time, so no
 * entry is ever read or written by two threads at once and the hot path takes no lock. */
struct st__scratch {
    cache_entry *cache;   /* cache_slots lines as allocated; NULL when the piece cache is off */
    size_t cache_slots;
    cache_entry *lines;   /* the same from its first 64-byte boundary on: sets * SET_LINES lines */
    set_tags *tags;       /* then the sets' tags */
    size_t sets;
    long_entry *longc;    /* long_slots entries once a long piece wanted them, else NULL */
    size_t long_slots;    /* 0: no long table (off, or its allocation failed) */
    st__pair_slot *pairs; /* 1 << ST_PAIR_CACHE_BITS entries */
    uint64_t *memo;       /* ST_BT_MEMO_SLOTS words, made when backtracking first wants it */
    size_t seen;          /* bytes of text encoded with this block (saturating): its tables' size */
    st__span_cache span;  /* the span cache (span_cache.h); span.log NULL when there is none */
};

#define PAIRS_SIZE (((size_t)1 << ST_PAIR_CACHE_BITS) * sizeof(st__pair_slot))
#define MEMO_SIZE (ST_BT_MEMO_SLOTS * sizeof(uint64_t))

/* A call's view of its block's piece cache, kept by the encoder; all zero for a call that runs
 * uncached. */
typedef struct st__piece_cache {
    st__scratch *scratch; /* the call's block: NULL when uncached */
    cache_entry *lines;   /* the short table (sets * SET_LINES lines); NULL when off or uncached */
    set_tags *tags;
    size_t sets;
    size_t hits, misses;  /* this call's lookups, added to the handle's at the end */
    size_t span_hits, span_misses; /* the same, of the span cache */
    int slot;             /* the block's slot in the handle, -1 for a call's own block */
} st__piece_cache;

/* Claim a scratch block for a call on a text of len bytes and open its piece cache in c (c
 * zeroed when the call runs uncached: the cache is off and the text short, or no memory). */
void st__piece_cache_open(const st_encoding *enc, size_t len, st__piece_cache *c);
/* Hand the block back and add the call's hits and misses to the handle's. */
void st__piece_cache_close(const st_encoding *enc, st__piece_cache *c);
/* The long table of block s, made now if it is due; NULL if none. */
long_entry *st__cache_long_table(st__lazy *lz, st__scratch *s, const st_allocator *a);

/* A piece's place in the piece cache: its hash and the line to replay (on a hit: the entry's
 * first) or the set to fill (on a miss), or the long entry; both NULL when the cache is off or
 * the piece too long. */
typedef struct cache_ref {
    uint64_t h;
    cache_entry *s;
    set_tags *t;
    long_entry *l;
} cache_ref;

/* Bytes of a short entry of n bytes and m tokens: its bytes rounded up to 4, then a word a token. */
#define SHORT_NEED(n, m) ((((n) + 3) & ~(size_t)3) + 4 * (m))

ST_INLINE int line_holds(const cache_entry *c, uint32_t h, const uint8_t *p, size_t n) {
    return c->hash == h && c->len == n && st__memcmp(c->data, p, n) == 0;
}

ST_INLINE uint8_t fp_of(uint64_t h) { return (uint8_t)(h >> 24); }

/* The set of a short table of `sets` sets where the piece of hash h (| 1) goes: the hash's high
 * half, scaled to the sets (a line keeps only the low half, so a moved entry is hashed again). */
ST_INLINE size_t set_of(uint64_t h, size_t sets) { return (size_t)(((h >> 32) * sets) >> 32); }

/* Look p[0..n) up, h its st__hash_bytes if known (else 0); 1 on a hit. A small entry may sit in
 * either line of its set, a pair entry takes both; whichever holds the piece's bytes is it. */
static inline int cache_find(st__piece_cache *c, const st_encoding *enc, const uint8_t *p, size_t n, uint64_t h,
                             cache_ref *r) {
    r->s = NULL;
    r->l = NULL;
    if (!c->lines || n > ST_CACHE_LONG_PIECE) return 0;
    r->h = (h ? h : st__hash_bytes(p, n)) | 1;
    int hit;
    if (n <= ST_CACHE_PIECE) {
        size_t set = set_of(r->h, c->sets);
        cache_entry *line = r->s = &c->lines[SET_LINES * set];
        set_tags *t = r->t = &c->tags[set];
        uint32_t h32 = (uint32_t)r->h;
        uint8_t f = fp_of(r->h);
        hit = 0;
        for (size_t k = 0; k < SET_LINES; k++) {
            unsigned m = t->meta[k];
            if (t->fp[k] == f && ((m & META_KIND) == LINE_SMALL || (m & META_KIND) == LINE_PAIR) &&
                line_holds(line + k, h32, p, n)) {
                r->s = line + k;
                hit = 1;
                if ((m & META_USE) != META_USE) t->meta[k] = (uint8_t)(m + META_USE1);
                break;
            }
        }
    } else {
        st__scratch *sc = c->scratch;
        long_entry *t = sc->longc ? sc->longc : st__cache_long_table(enc->lazy, sc, &enc->alloc);
        if (!t) return 0;
        long_entry *le = r->l = &t[(r->h >> 20) & (sc->long_slots - 1)];
        hit = le->hash == r->h && le->len == n && st__memcmp(le->bytes, p, n) == 0;
    }
    if (hit) c->hits++;
    else c->misses++;
    return hit;
}

/* The bytes of line c from its data on, through the set's second line for a pair entry. */
ST_INLINE uint8_t *line_data(cache_entry *c) { return (uint8_t *)(void *)c + 8; }

/* Replacement is a clock per set with use counts. Each entry counts its uses: 1 when made, one
 * more a hit, up to 3. An insert takes an empty line, else, from the set's hand on, the first
 * entry whose count is 0, counting down each entry it passes (at most three laps), and the hand
 * moves past the line it takes. So a piece hit again and again outlives a burst of pieces that
 * come once (they reach 0 first), and the new pieces of one call replace the set's old entries in
 * turn rather than one another: with one referenced bit, clear when made, and every search
 * starting at the set's first line, a new piece not yet hit was the next insert's first victim.
 * Measured on text after text in 7 languages (the encode benchmark's order: each 900 KB slice
 * encoded, then again; a lone caller's default tables), the second call on a slice missed, with
 * that scheme, 5,370 pieces of Russian, 7,288 of Arabic, 22,506 of Chinese, 13,613 of Japanese;
 * with a hand and the bit clear when made 641, 934, 10,467, 6,845; set when made 23, 77, 6,763,
 * 5,220, but then a burst of one-off pieces replaced a third of the hot ones. The cost is on the
 * same text again and again (the third call on one 1 MiB): Chinese about 8,000 misses instead of
 * 4,760 (a cyclic pass over more pieces than fit favours keeping the oldest). */
_Static_assert(SET_LINES <= 16 && SET_LINES >= 2 && (SET_LINES & (SET_LINES - 1)) == 0, "the hand is 4 bits");
ST_INLINE size_t hand_of(const set_tags *t) { return (size_t)(t->meta[0] >> 4) & (SET_LINES - 1); }
ST_INLINE void hand_set(set_tags *t, size_t k) {
    t->meta[0] = (uint8_t)((t->meta[0] & 0x0Fu) | (k & (SET_LINES - 1)) << 4);
}
ST_INLINE unsigned kind_at(const set_tags *t, size_t k) { return t->meta[k] & META_KIND; }
/* Line k's kind and use count (meta[0]'s hand kept). */
ST_INLINE void meta_set(set_tags *t, size_t k, unsigned kind, unsigned use) {
    t->meta[k] = (uint8_t)((t->meta[k] & 0xF0u) | kind | use * META_USE1);
}

/* Counts the entry at line k down by one; 1 if it was already 0 (a victim). */
ST_INLINE int use_spent(set_tags *t, size_t k) {
    if (!(t->meta[k] & META_USE)) return 1;
    t->meta[k] = (uint8_t)(t->meta[k] - META_USE1);
    return 0;
}

/* The line of set t where a small entry goes, and the even line where a pair entry goes (it and
 * the next), by the clock above. Out of line (piece_cache.c), as the compiler kept them when the
 * pipeline was one file: they run on a miss only, and inline they would grow every fill. */
size_t st__cache_small_victim(set_tags *t);
size_t st__cache_pair_victim(set_tags *t);

/* The line of set t a new entry of the kind (LINE_SMALL, or LINE_PAIR and the line after it)
 * takes, its tags set: the hash byte fp, the use count, the clock hand moved past it. The
 * caller writes the line(s). */
ST_INLINE size_t line_claim(set_tags *t, unsigned kind, uint8_t fp, unsigned use) {
    int pair = kind == LINE_PAIR;
    size_t v = pair ? st__cache_pair_victim(t) : st__cache_small_victim(t);
    t->fp[v] = fp;
    meta_set(t, v, kind, use);
    if (pair) meta_set(t, v + 1, LINE_PAIR2, 0);
    hand_set(t, v + (pair ? 2 : 1));
    return v;
}

/* Remember the m tokens (starts rel[k] in the piece, through map when given) of the piece
 * p[0..n). A piece of more tokens than an entry holds (or of an id past the token word's
 * field) leaves the table as it was. */
ST_INLINE void cache_fill(const cache_ref *r, const uint8_t *p, size_t n, size_t m, const uint32_t *tok,
                          const uint32_t *rel, const uint32_t *map, int joins) {
    if (r->s) {
        size_t need = SHORT_NEED(n, m);
        if (need > PAIR_DATA) return;
        for (size_t k = 0; k < m; k++)
            if (tok[k] >> ST_CACHE_ID_BITS) return;
        cache_entry *c = r->s + line_claim(r->t, need > LINE_DATA ? LINE_PAIR : LINE_SMALL, fp_of(r->h), 1);
        c->hash = (uint32_t)r->h;
        c->len = (uint8_t)n;
        c->ntok = (uint8_t)m;
        c->joins = (uint8_t)joins;
        st__memcpy(c->data, p, n);
        uint8_t *w = line_data(c) + ((n + 3) & ~(size_t)3);
        for (size_t k = 0; k < m; k++) {
            uint32_t x = tok[k] | (uint32_t)(map ? map[rel[k]] : rel[k]) << ST_CACHE_ID_BITS;
            st__memcpy(w + 4 * k, &x, 4);
        }
    } else if (r->l && m <= ST_CACHE_LONG_TOKENS) {
        long_entry *le = r->l;
        le->hash = r->h;
        le->len = (uint16_t)n;
        le->ntok = (uint16_t)m;
        st__memcpy(le->bytes, p, n);
        for (size_t k = 0; k < m; k++) { le->tok[k] = tok[k]; le->rel[k] = (uint16_t)(map ? map[rel[k]] : rel[k]); }
    }
}

#endif
