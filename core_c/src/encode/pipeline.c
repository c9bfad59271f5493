/* The encode pipeline (docs/design.md §7): special tokens -> pieces -> per-piece merge -> sink.
 *
 *  1. the special-token policy: refuse a disallowed special anywhere in the text, then cut
 *     the text at the allowed specials it holds (encode_all);
 *  2. the pre-tokenizer splits each stretch between them into pieces (encode_ordinary);
 *  3. each piece becomes tokens by its kind (encode_piece, the one switch on the kind): for a
 *     rank vocabulary, the whole piece if it is a token (most pieces of real text are;
 *     suBPEriod's "known word" skip), else backtracking or the merge loops (merge.c); for a
 *     rule model, the merge of its base symbols by rule;
 *  4. the sink writes ids and start offsets, in the unit the caller asked for.
 * Pieces seen before (in this call or an earlier one) are replayed from a piece cache; the
 * caches live in scratch blocks the handle keeps for reuse (scratch_claim), one per running
 * call, so they last across calls and no call allocates or clears megabytes. */
#include "encoding.h"
#include "merge.h"
#include "../text/utf8.h"

/* ---- the backtracking tables, built when they pay ------------------------------------------ */

/* Loading stays fast, and text that never needs the tables (English, code) never pays their
 * build time or memory. A vocabulary from an image, and a rule model, never build them. */
const st_backtrack *st__backtrack_tables(const st_encoding *enc) {
    st__lazy *lz = enc->lazy; /* mutable state behind a const handle: see st__lazy */
    int state = st__atomic_load(&lz->bt_state);
    if (state == BT_READY) return &lz->bt;
    if (state != BT_NOT_BUILT || !st__atomic_claim(&lz->bt_state, BT_NOT_BUILT, BT_BUILDING)) return NULL;
    st_status st = st__backtrack_build(&lz->bt, &enc->vocab, &enc->alloc);
    int ready = st == ST_OK && lz->bt.ready;
    lz->bt_failed = st == ST_ERR_OUT_OF_MEMORY;
    st__atomic_store(&lz->bt_state, ready ? BT_READY : BT_UNAVAILABLE);
    return ready ? &lz->bt : NULL;
}

/* When to build them. The build costs about 200 instructions a byte of the vocabulary's tokens
 * (o200k: ~280M, ~200 ms of CPU on the shared test machine, 13 MB kept, 18 MB at its peak; it
 * is bound by memory latency more than by instructions), and pays back only on a lot of text:
 * within ~1 MiB of Chinese, but only after over 10 MiB of Russian or Arabic (measured on the
 * corpora, o200k).
 * Building on the first piece that wants them stalled the first call of any text with one such
 * piece. So the handle keeps a debt instead: each piece that wanted the tables but went through
 * the merge loop adds an estimate of what the merge cost beyond what backtracking would have
 * (cache hits cost neither, so add nothing), and the piece that would take the debt past the
 * build's cost builds them (a rent-or-buy rule: at most about twice the work of knowing the
 * text in advance, and a short call never stalls). The estimates, in instructions a byte of
 * the piece: 3-byte characters (CJK, Hangul, Thai, Devanagari) 512, other non-ASCII 64, and
 * pieces over 64 bytes n log n (the heap merge), so one piece of a megabyte builds at once
 * and stays linear. st_encoding_prepare builds them now, for a service that wants no debt. */
#define BT_COST_PER_VOCAB_BYTE 200u

ST_INLINE size_t merge_excess(const uint8_t *p, size_t n) {
    if (n > 64) {
        size_t bits = 0;
        for (size_t k = n; k; k >>= 1) bits++;
        return n > (size_t)-1 / 1024 ? (size_t)-1 : n * bits * 32;
    }
    size_t k = n - 1; /* the last character's lead byte */
    while (k > 0 && (p[k] & 0xC0) == 0x80) k--;
    return n * (p[k] >= 0xE0 ? 512u : 64u);
}

/* The tables for a piece that wants them, or NULL: build them now if the debt says so. */
static const st_backtrack *tables_for(const st_encoding *enc, const uint8_t *p, size_t n) {
    st__lazy *lz = enc->lazy;
    int state = st__atomic_load(&lz->bt_state);
    if (state == BT_READY) return &lz->bt;
    if (state != BT_NOT_BUILT) return NULL;
#ifndef ST_BACKTRACK_EVERY_PIECE /* tests: build at once */
    size_t vb = enc->vocab.offsets[enc->vocab.n_ids];
    size_t budget = vb > (size_t)-1 / 4 / BT_COST_PER_VOCAB_BYTE ? (size_t)-1 / 4 : vb * BT_COST_PER_VOCAB_BYTE;
    size_t debt = st__atomic_load_size(&lz->bt_debt), cost = merge_excess(p, n);
    if (debt < budget && cost < budget - debt) return NULL;
#else
    (void)p;
    (void)n;
#endif
    return st__backtrack_tables(enc);
}

/* A piece that wanted the tables went through the merge loop: its estimated excess joins the
 * debt (racing threads may each add theirs: it only makes the build come a little sooner). */
ST_INLINE void debt_add(const st_encoding *enc, const uint8_t *p, size_t n) {
    st__lazy *lz = enc->lazy;
    if (st__atomic_load(&lz->bt_state) != BT_NOT_BUILT) return;
    size_t debt = st__atomic_load_size(&lz->bt_debt), cost = merge_excess(p, n);
    if (debt < (size_t)-1 / 2 && cost < (size_t)-1 / 2 - debt) st__atomic_add_size(&lz->bt_debt, cost);
}

/* Longer pieces than ST_LINEAR_PIECE go to the heap, on the stack up to ST_STACK_PIECE bytes. */
#define ST_STACK_PIECE 256

/* Which pieces go to the backtracking encoder. Measured on the corpora (o200k, 4 MB a
 * language, the same text through the merge loop of an image-loaded copy): pieces over 6
 * bytes ending in a non-ASCII byte run 1.2x (Arabic, Devanagari) to 2.1x (Chinese, Thai)
 * faster there, counting the whole-piece check its first walk replaces; ASCII pieces (English,
 * code) run 10-20% slower, as their words are mostly one token found by a single probe of the
 * vocabulary, so they keep the merge loop, up to 64 bytes: past that (a megabyte of one letter,
 * of spaces, of random letters) backtracking is linear where the heap merge is n log n, and
 * 4x-17x faster at a megabyte. */
ST_INLINE int wants_backtrack(const uint8_t *p, size_t n) {
#ifdef ST_BACKTRACK_EVERY_PIECE /* tests: every piece that is not one token, whatever its script */
    (void)p;
    return n > 1;
#else
    return n > 6 && (p[n - 1] >= 0x80 || n > 64);
#endif
}

/* ---- the sink ----------------------------------------------------------------------------- */

/* Output sink: ids (and starts) up to cap, counting past it. */
typedef struct sink {
    uint32_t *ids;
    size_t *starts;
    size_t cap, n;
    uint32_t unit; /* ST_OFFSETS_* of starts */
    /* for code point and UTF-16 starts: text[0..pos) holds `units` units, and the last
     * character that began there began at unit offset `last` */
    const uint8_t *text;
    size_t pos, units, last;
} sink;

/* The offset of a token starting at byte b, in the sink's unit. A token that starts inside a
 * character gets the offset of that character (tiktoken's decode_with_offsets rule), in every
 * unit. */
ST_INLINE size_t start_offset(sink *o, size_t b) {
    const uint8_t *s = o->text;
    if (o->unit == ST_OFFSETS_BYTES) {
        while (b > 0 && (s[b] & 0xC0) == 0x80) b--;
        return b;
    }
    size_t wide = o->unit == ST_OFFSETS_UTF16 ? 0xF0 : 0x100; /* 4-byte characters: 2 UTF-16 units */
    for (; o->pos < b; o->pos++) {
        uint8_t c = s[o->pos];
        if ((c & 0xC0) != 0x80) {
            o->last = o->units;
            o->units += c >= wide ? 2 : 1;
        }
    }
    return (s[b] & 0xC0) == 0x80 ? o->last : o->units;
}

ST_INLINE void put(sink *o, uint32_t id, size_t byte_start) {
    if (o->n < o->cap) {
        o->ids[o->n] = id;
        if (o->starts) o->starts[o->n] = start_offset(o, byte_start);
    }
    o->n++;
}

/* ---- the reusable scratch ------------------------------------------------------------------ */

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
 * Replacement: a clock per set with use counts (see small_victim). Sets of 8 lines against 2
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
 * time, separate interleaved runs); what remains is the larger tables (share_of). */
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

/* The largest power of two not above x (0 for 0). */
static size_t pow2_floor(size_t x) {
    size_t p = 1;
    if (!x) return 0;
    while (p <= x / 2) p *= 2;
    return p;
}

/* Block k's share of the limit: the handle keeps up to ST_SCRATCH_SLOTS blocks, and a call
 * takes the first free one, so block 0 serves a lone caller (the common case: one thread, or a
 * service's calls one after another) and the others only calls running at once. Block 0 has half
 * the limit, block 1 a quarter, and so on, the last two an equal part (1/2, 1/4, 1/8, 1/8 of it:
 * together the limit): a lone caller gets twice the even split's tables (the distinct pieces
 * that are not one token in 1 MiB of Chinese need 46k lines, more than the 32k a quarter of the
 * default gives), and two concurrent callers still each get at least a quarter. Measured (the
 * third call on the same 1 MiB, o200k, 8-line sets), against an even split: Chinese misses 4,760
 * against 15,766, 61M instructions against 87M; Russian 9 against 564, Arabic 38 against 970.
 * The cost is on fresh text: a lone caller's larger tables take 3-16% more CPU time on text
 * never seen before than the even split's (the encode benchmark's order, 7 languages, each
 * slice then the same again, against the direct-mapped table of a quarter; the second calls
 * took half the time in Russian and Arabic, 24-31% less in Chinese, Japanese and Greek; with an
 * even split and the same tables, the first calls cost about what they did, and the second
 * calls in Chinese gained nothing). k < 0: a call's own block beyond them, an even part of the
 * limit. */
static size_t share_of(size_t limit, int k) {
    if (k < 0) return limit / ST_SCRATCH_SLOTS;
    return limit >> (k < ST_SCRATCH_SLOTS - 1 ? k + 1 : ST_SCRATCH_SLOTS - 1);
}

/* The tables of one block under its share of the limit: two thirds for the short table and
 * one third for the long one, each a power of two lines or entries (so the share holds); 0 =
 * none (a short table has at least one set, whatever the allocator's alignment). */
static size_t cache_slots_for(size_t share) {
    size_t lines = pow2_floor(share / 3 * 2 / sizeof(cache_entry));
    return lines >= 2 * SET_LINES ? lines : 0;
}
static size_t long_slots_for(size_t share) {
    return pow2_floor(share / 3 / sizeof(long_entry));
}

/* The encoder's reusable caches, kept by the handle in up to ST_SCRATCH_SLOTS blocks, one per
 * running call (scratch_claim): the piece cache (above), the pair cache (merge.h) and the
 * backtracking memo (backtrack.h). All three hold facts about the vocabulary alone (a piece's
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
};

#define PAIRS_SIZE (((size_t)1 << ST_PAIR_CACHE_BITS) * sizeof(st__pair_slot))
#define MEMO_SIZE (ST_BT_MEMO_SLOTS * sizeof(uint64_t))

static void cache_drop(st__lazy *lz, st__scratch *s, const st_allocator *a) {
    if (s->cache) {
        size_t size = s->cache_slots * sizeof(cache_entry);
        st__free(a, s->cache, size);
        st__atomic_add_size(&lz->cache_held, (size_t)0 - size);
    }
    if (s->longc) {
        size_t size = s->long_slots * sizeof(long_entry);
        st__free(a, s->longc, size);
        st__atomic_add_size(&lz->cache_held, (size_t)0 - size);
    }
    s->cache = s->lines = NULL;
    s->tags = NULL;
    s->longc = NULL;
    s->cache_slots = s->sets = s->long_slots = 0;
}

/* The short table's lines for a block that has encoded `seen` bytes of text: one per 32 bytes
 * of it (a text holds far fewer distinct pieces that are not one token), at least 512, at most
 * the limit's share. So a handle used for a few short texts holds kilobytes, not the limit's
 * megabytes (a test run, or an app, that makes many encodings would otherwise hold megabytes
 * for each: the pywasm backend ran out of wasm memory so), and a busy one grows to the limit;
 * each doubling empties the table, a cost paid once per doubling of the text seen. */
static size_t cache_slots_want(size_t share, size_t seen) {
    size_t most = cache_slots_for(share), want = 512;
    while (want < most && want <= seen / 32) want *= 2;
    return want < most ? want : most;
}

/* Give block s, which has seen `seen` bytes of text, its tables under `share` (a grown table
 * empty; the long one made on first need, half the short one's bytes), or none when the limit
 * allows none; without memory, none. A table is never shrunk but for a lower limit. */
static void cache_fit(st__lazy *lz, st__scratch *s, size_t share, size_t seen, const st_allocator *a) {
    size_t most = cache_slots_for(share), slots = cache_slots_want(share, seen);
    if (s->cache && s->cache_slots >= slots && s->cache_slots <= most) return;
    if (!s->cache && !slots) return;
    size_t size = slots * sizeof(cache_entry);
    cache_entry *t = slots ? (cache_entry *)st__alloc(a, size) : NULL;
    /* a table that cannot grow stays as it is (within the limit: a lower limit drops it) */
    if (slots && !t && s->cache && s->cache_slots <= most) return;
    cache_drop(lz, s, a);
    if (!t) return;
    s->cache = t;
    s->cache_slots = slots;
    /* sets start on a 64-byte boundary, so that a line is one cache line (an allocator gives
     * less alignment: the skew then comes off the end); each set's lines, then its tags, come
     * out of the same bytes */
    size_t skew = (size_t)((uintptr_t)t & 63) ? 64 - (size_t)((uintptr_t)t & 63) : 0;
    s->lines = (cache_entry *)(void *)((uint8_t *)t + skew);
    s->sets = (size - skew) / (SET_LINES * sizeof(cache_entry) + sizeof(set_tags));
    s->tags = (set_tags *)(void *)(s->lines + s->sets * SET_LINES);
    st__memset(s->tags, 0, s->sets * sizeof(set_tags)); /* LINE_EMPTY; the lines need no clearing */
    size_t lmost = long_slots_for(share), lwant = slots / 16 < 16 ? 16 : slots / 16;
    s->long_slots = lwant < lmost ? lwant : lmost;
    st__atomic_add_size(&lz->cache_held, size);
}

/* The long table of block s, made now if it is due; NULL if none. */
static long_entry *long_table(st__lazy *lz, st__scratch *s, const st_allocator *a) {
    if (s->longc || !s->long_slots) return s->longc;
    size_t size = s->long_slots * sizeof(long_entry);
    s->longc = (long_entry *)st__alloc(a, size);
    if (!s->longc) { s->long_slots = 0; return NULL; } /* not tried again until the limit changes */
    st__memset(s->longc, 0, size);
    st__atomic_add_size(&lz->cache_held, size);
    return s->longc;
}

static void scratch_free(st__lazy *lz, st__scratch *s, const st_allocator *a) {
    if (!s) return;
    cache_drop(lz, s, a);
    st__free(a, s->pairs, PAIRS_SIZE);
    st__free(a, s->memo, MEMO_SIZE);
    st__free(a, s, sizeof *s);
}

static st__scratch *scratch_new(st__lazy *lz, const st_allocator *a) {
    st__scratch *s = (st__scratch *)st__alloc(a, sizeof *s);
    if (!s) return NULL;
    st__memset(s, 0, sizeof *s);
    s->pairs = (st__pair_slot *)st__alloc(a, PAIRS_SIZE);
    if (!s->pairs) { scratch_free(lz, s, a); return NULL; }
    st__memset(s->pairs, 0xFF, PAIRS_SIZE); /* left = ST_NO_TOKEN: empty */
    return s;
}

/* A scratch block for a call on a text of len bytes, with piece cache tables for `limit` if
 * memory allows: a free one of the handle's (made on first claim; its piece cache grown with the
 * text it has seen, cache_fit, or resized if the limit changed), else,
 * for a long text (`transient`: its length; 0 for a short one), one of the call's own (freed at
 * the end), else NULL (the call runs uncached). *slot says which. */
static st__scratch *scratch_claim(const st_encoding *enc, size_t limit, size_t len, size_t transient, int *slot) {
    st__lazy *lz = enc->lazy;
    *slot = -1;
    for (int k = 0; k < ST_SCRATCH_SLOTS; k++) {
        if (st__atomic_load(&lz->slot_busy[k]) || !st__atomic_claim(&lz->slot_busy[k], 0, 1)) continue;
        /* slot[k] is this caller's until the release store below hands it on */
        if (!lz->slot[k]) lz->slot[k] = scratch_new(lz, &enc->alloc);
        if (!lz->slot[k]) { st__atomic_store(&lz->slot_busy[k], 0); return NULL; }
        st__scratch *s = lz->slot[k];
        s->seen = s->seen + len < s->seen ? (size_t)-1 : s->seen + len;
        cache_fit(lz, s, share_of(limit, k), s->seen, &enc->alloc);
        *slot = k;
        return lz->slot[k];
    }
    if (!transient) return NULL;
    st__scratch *s = scratch_new(lz, &enc->alloc);
    /* tables for this text only: about one short entry per 64 bytes of it (limit 12 bytes a
     * text byte), so that a call does not clear megabytes for a text of kilobytes */
    size_t cap = transient <= (size_t)-1 / 12 ? transient * 12 : (size_t)-1;
    if (s) cache_fit(lz, s, share_of(limit < cap ? limit : cap, -1), (size_t)-1, &enc->alloc);
    return s;
}

/* Hand the block back; a block whose piece cache no longer fits the limit (set during the call)
 * gives its memory back now, so that once the calls running then end the limit holds. */
static void scratch_release(const st_encoding *enc, st__scratch *s, int slot) {
    st__lazy *lz = enc->lazy;
    if (slot < 0) { scratch_free(lz, s, &enc->alloc); return; }
    size_t limit = st__atomic_load_size(&lz->cache_limit);
    if (s->cache_slots > cache_slots_for(share_of(limit, slot)) || s->long_slots > long_slots_for(share_of(limit, slot)))
        cache_drop(lz, s, &enc->alloc);
    st__atomic_store(&lz->slot_busy[slot], 0);
}

void st__scratch_pool_free(st__lazy *lz, const st_allocator *a) {
    for (int k = 0; k < ST_SCRATCH_SLOTS; k++) {
        scratch_free(lz, lz->slot[k], a);
        lz->slot[k] = NULL;
    }
}

st_status st_encoding_set_cache_size(const st_encoding *enc, size_t bytes) {
    if (!enc) return ST_ERR_INVALID_ARGUMENT;
    st__lazy *lz = enc->lazy;
    st__atomic_store_size(&lz->cache_limit, bytes);
    /* the blocks no call holds now shrink (or are emptied) at once; a block in use does so when
     * its call ends (scratch_release); a grown table is made by the next call that wants it */
    for (int k = 0; k < ST_SCRATCH_SLOTS; k++) {
        if (!st__atomic_claim(&lz->slot_busy[k], 0, 1)) continue;
        /* emptied: the next call that claims it makes its tables for the new limit */
        if (lz->slot[k]) cache_drop(lz, lz->slot[k], &enc->alloc);
        st__atomic_store(&lz->slot_busy[k], 0);
    }
    return ST_OK;
}

st_status st_encoding_cache_info(const st_encoding *enc, st_cache_info *info) {
    if (!enc || !info) return ST_ERR_INVALID_ARGUMENT;
    st__lazy *lz = enc->lazy;
    info->limit = st__atomic_load_size(&lz->cache_limit);
    info->bytes = st__atomic_load_size(&lz->cache_held);
    info->hits = st__atomic_load_size(&lz->cache_hits);
    info->misses = st__atomic_load_size(&lz->cache_misses);
    info->max_piece = ST_CACHE_LONG_PIECE;
    return ST_OK;
}

/* ---- per piece ------------------------------------------------------------------------------ */

#define ST_RUN_STACK 64 /* run entries held in the encoder itself; longer runs allocate */
/* Runs up to this many pretokens take the linear scan of supermerges (cheapest when short, as
 * nearly all are: the words between two punctuation marks); longer ones the heap merge, so a
 * megabyte of words with no punctuation costs n log n, not n^2. */
#ifndef ST_RUN_LINEAR
#define ST_RUN_LINEAR 64
#endif
/* run_flush's linear merge: entries named in 6 bits (keys rank << 6 | entry; links in bytes),
 * keys searched 16 at a time; rule ids fit 21 bits, so keys fit 27 */
_Static_assert(ST_RUN_LINEAR % 16 == 0 && ST_RUN_LINEAR <= 64, "ST_RUN_LINEAR: a multiple of 16, at most 64");
#define ST_RUN_STACK_HEAP 128 /* runs the heap merges with its scratch on the stack (about 5 KB) */
#define ST_RUN_PAD 16 /* run_flush's keys: room past the run, padded to a multiple of 16 */

typedef struct encoder {
    const st_encoding *enc;
    const uint8_t *text;
    size_t text_len;
    sink *o;
    st__merger mg;        /* mg.pairs: the pair cache, NULL when uncached */
    st__scratch *scratch; /* NULL when uncached */
    cache_entry *cache;   /* the piece cache's short table; NULL when off or uncached */
    set_tags *tags;
    size_t cache_sets;    /* its sets */
    size_t hits, misses;  /* this call's piece cache lookups, added to the handle's at the end */
    int all_bytes;        /* every byte is a token: 1, not: -1, not looked yet: 0 */
    int merge_only;       /* st_encode_piece: the merge loops alone (the backtracking encoder's
                             tables are exact for pretokens of UTF-8 text, not for any bytes) */
    int memo_tried;
    /* The superword pass (superword models only: sup NULL otherwise). A pretoken that became
     * one eligible token joins the current run (its token and byte start); any other piece, a
     * special token or the end of the text ends the run, which is merged by supermerges and
     * put out then (run_flush). */
    const st_supers *sup;
    uint32_t *run_tok;
    size_t *run_at;
    size_t run_n, run_cap;
    void *run_owned; /* run_tok and run_at once they outgrow the stack arrays below */
    uint32_t run_stack_tok[ST_RUN_STACK];
    size_t run_stack_at[ST_RUN_STACK];
} encoder;

/* The compatibility memo of the backtracking encoder, for calls that have a scratch. */
static uint64_t *memo_of(encoder *e) {
    st__scratch *s = e->scratch;
    if (!s) return NULL;
    if (!s->memo && !e->memo_tried) {
        e->memo_tried = 1;
        s->memo = (uint64_t *)st__alloc(&e->enc->alloc, MEMO_SIZE);
        if (s->memo) st__memset(s->memo, 0xFF, MEMO_SIZE);
    }
    return s->memo;
}

/* ---- the superword pass (docs/design.md §7) -------------------------------------------------- */

/* The bytes of a run of cap entries (run_grow). */
ST_INLINE size_t run_size(size_t cap) { return cap * (sizeof(size_t) + sizeof(uint32_t)); }

/* Room for one more run entry: the stack arrays, then a doubling allocation. */
static st_status run_grow(encoder *e) {
    size_t cap = e->run_cap * 2;
    if (cap > ST_MERGE_MAX_PARTS) return ST_ERR_OUT_OF_MEMORY; /* the run is merged by the heap merge */
    void *mem = st__alloc(&e->enc->alloc, run_size(cap));
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    size_t *at = (size_t *)mem;
    uint32_t *tok = (uint32_t *)(void *)(at + cap);
    st__memcpy(at, e->run_at, e->run_n * sizeof(size_t));
    st__memcpy(tok, e->run_tok, e->run_n * sizeof(uint32_t));
    if (e->run_owned) st__free(&e->enc->alloc, e->run_owned, run_size(e->run_cap));
    e->run_owned = mem;
    e->run_at = at;
    e->run_tok = tok;
    e->run_cap = cap;
    return ST_OK;
}

static void run_release(encoder *e) {
    if (e->run_owned) st__free(&e->enc->alloc, e->run_owned, run_size(e->run_cap));
    e->run_owned = NULL;
}

/* run_flush's key for supermerge r (ST_NO_TOKEN: none) joining the part at run entry k (below
 * ST_RUN_LINEAR; a longer run's keys are never read): rank << 6 | k, so the lowest key is the
 * lowest supermerge and, among equal ones, the leftmost; RUN_NONE for none. Signed (ids fit 21
 * bits, so keys fit 27): SSE2 compares signed 32-bit lanes in one instruction, unsigned ones
 * in three. */
#define RUN_NONE 0x7FFFFFFF
ST_INLINE int32_t run_key(uint32_t r, size_t k) { return r == ST_NO_TOKEN ? RUN_NONE : (int32_t)(r << 6 | (uint32_t)(k & 63)); }

/* The links of run_flush's linear merge before any merge: each entry's next and previous. The
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
static st_status run_flush(encoder *e) {
    size_t n = e->run_n;
    uint32_t *tok = e->run_tok;
    const size_t *at = e->run_at;
    /* a copy, which the stores to tok cannot alias: its fields stay in registers through the
     * lookups, where the encoder's were reloaded after every store */
    const st_supers sv = *e->sup, *sp = &sv;
    e->run_n = 0;
    if (n <= 2) { /* a third of the runs in English: one lookup at most, nothing to search */
        uint32_t r = n == 2 ? st__supers_find(sp, tok[0], tok[1]) : ST_NO_TOKEN;
        if (r != ST_NO_TOKEN) {
            put(e->o, r, at[0]);
        } else {
            for (size_t k = 0; k < n; k++) put(e->o, tok[k], at[k]);
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
         * mispredicted each loop's exit, a third of run_flush's mispredictions on Japanese
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
            for (size_t k = 0; k < n; k++) put(e->o, tok[k], at[k]);
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
        for (size_t k = 0; k < n; k = nxt[k]) put(e->o, tok[k], at[k]);
        return ST_OK;
    }
    /* the heap merge of merge.c, on the run's tokens with the supermerges as its rules; its
     * scratch on the stack up to ST_RUN_STACK_HEAP tokens */
    size_t msz = st__merge_heap_scratch_size(n), size = msz + 2 * n * sizeof(uint32_t);
    uint64_t stack[(3 * ST_RUN_STACK_HEAP + 1) + (4 * (ST_RUN_STACK_HEAP + 1) + 1) / 2 + ST_RUN_STACK_HEAP];
    uint8_t *mem = n <= ST_RUN_STACK_HEAP ? (uint8_t *)stack : (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    uint32_t *out = (uint32_t *)(void *)(mem + msz), *start = out + n;
    st__merger mg = {&e->enc->vocab, &sp->rules, NULL, sp};
    size_t m = st__merge_heap(&mg, NULL, tok, n, out, start, mem);
    for (size_t k = 0; k < m; k++) put(e->o, out[k], at[start[k]]);
    if (mem != (uint8_t *)stack) st__free(&e->enc->alloc, mem, size);
    return ST_OK;
}

/* Entry n = e->run_n of the run: token t at text offset a; what the lookup of the pair of
 * entries n - 1 and n will read starts loading now (st__supers_prefetch). */
ST_INLINE void run_put(encoder *e, uint32_t t, size_t a) {
    size_t n = e->run_n;
    e->run_tok[n] = t;
    e->run_at[n] = a;
    if (n) st__supers_prefetch(e->sup, e->run_tok[n - 1], t);
    e->run_n = n + 1;
}

static st_status run_push_grow(encoder *e, uint32_t tok, size_t a) {
    st_status st = run_grow(e);
    if (st != ST_OK) return st;
    run_put(e, tok, a);
    return ST_OK;
}

/* A superword model's piece of m tokens (regular ids) starting at text offset a: one eligible
 * token joins the run (returns 1: the caller puts nothing); anything else ends the run, put out
 * now, before the caller puts the piece's tokens (returns 0). *st: the status. */
ST_INLINE int piece_to_run(encoder *e, const uint32_t *tok, size_t m, size_t a, st_status *st) {
    if (m == 1 && st__bit(e->sup->eligible, tok[0])) {
        if (e->run_n < e->run_cap) {
            run_put(e, tok[0], a);
            *st = ST_OK;
        } else {
            *st = run_push_grow(e, tok[0], a);
        }
        return 1;
    }
    *st = e->run_n ? run_flush(e) : ST_OK; /* the run ends before this piece */
    return 0;
}

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

/* Look p[0..n) up, h its st__hash_bytes if known (else 0); 1 on a hit. A small entry may sit in
 * either line of its set, a pair entry takes both; whichever holds the piece's bytes is it. */
static int cache_find(encoder *e, const uint8_t *p, size_t n, uint64_t h, cache_ref *r) {
    r->s = NULL;
    r->l = NULL;
    if (!e->cache || n > ST_CACHE_LONG_PIECE) return 0;
    r->h = (h ? h : st__hash_bytes(p, n)) | 1;
    int hit;
    if (n <= ST_CACHE_PIECE) {
        size_t set = (size_t)(((r->h >> 32) * e->cache_sets) >> 32);
        cache_entry *c = r->s = &e->cache[SET_LINES * set];
        set_tags *t = r->t = &e->tags[set];
        uint32_t h32 = (uint32_t)r->h;
        uint8_t f = fp_of(r->h);
        hit = 0;
        for (size_t k = 0; k < SET_LINES; k++) {
            unsigned m = t->meta[k];
            if (t->fp[k] == f && ((m & META_KIND) == LINE_SMALL || (m & META_KIND) == LINE_PAIR) &&
                line_holds(c + k, h32, p, n)) {
                r->s = c + k;
                hit = 1;
                if ((m & META_USE) != META_USE) t->meta[k] = (uint8_t)(m + META_USE1);
                break;
            }
        }
    } else {
        st__scratch *sc = e->scratch;
        long_entry *t = long_table(e->enc->lazy, sc, &e->enc->alloc);
        if (!t) return 0;
        long_entry *le = r->l = &t[(r->h >> 20) & (sc->long_slots - 1)];
        hit = le->hash == r->h && le->len == n && st__memcmp(le->bytes, p, n) == 0;
    }
    if (hit) e->hits++;
    else e->misses++;
    return hit;
}

/* The bytes of line c from its data on, through the set's second line for a pair entry. */
ST_INLINE uint8_t *line_data(cache_entry *c) { return (uint8_t *)(void *)c + 8; }

/* Replay a cache hit for the piece at text offset a: each token straight from its word (id |
 * start << 26) to the sink. (Unpacked into two buffers first, then put, replay took 6-8% of a
 * warm call in Russian, Arabic, Chinese and Japanese.) A superword model's piece may instead
 * join the run: only a piece of one token can, and piece_to_run reads that one token alone. */
static st_status cache_replay(encoder *e, const cache_ref *r, size_t a) {
    if (r->s) {
        size_t m = r->s->ntok;
        const uint8_t *w = line_data(r->s) + ((r->s->len + 3) & ~3u);
        if (e->sup) {
            if (r->s->joins) { /* m is 1: the token joins the run */
                uint32_t x;
                st__memcpy(&x, w, 4);
                x &= (1u << ST_CACHE_ID_BITS) - 1;
                if (e->run_n < e->run_cap) {
                    run_put(e, x, a);
                    return ST_OK;
                }
                return run_push_grow(e, x, a);
            }
            if (e->run_n) { /* the run ends before this piece */
                st_status st = run_flush(e);
                if (st != ST_OK) return st;
            }
        }
        for (size_t k = 0; k < m; k++) {
            uint32_t x;
            st__memcpy(&x, w + 4 * k, 4);
            put(e->o, x & ((1u << ST_CACHE_ID_BITS) - 1), a + (x >> ST_CACHE_ID_BITS));
        }
        return ST_OK;
    }
    const long_entry *le = r->l;
    size_t m = le->ntok;
    if (e->sup) {
        st_status st;
        if (piece_to_run(e, le->tok, m, a, &st) || st != ST_OK) return st;
    }
    for (size_t k = 0; k < m; k++) put(e->o, le->tok[k], a + le->rel[k]);
    return ST_OK;
}

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

/* The line of set t where a small entry goes (see above; a pair entry goes as a whole, its
 * second line then empty). Ends within four laps: each lap counts every entry down. */
static size_t small_victim(set_tags *t) {
    for (size_t k = 0; k < SET_LINES; k++)
        if (kind_at(t, k) == LINE_EMPTY) return k;
    size_t k = hand_of(t);
    if (kind_at(t, k) == LINE_PAIR2) k = (k + 1) & (SET_LINES - 1); /* past the pair */
    for (;;) {
        int pair = kind_at(t, k) == LINE_PAIR;
        if (use_spent(t, k)) {
            if (pair) meta_set(t, k + 1, LINE_EMPTY, 0);
            return k;
        }
        k = (k + (pair ? 2 : 1)) & (SET_LINES - 1);
    }
}

/* The even line of set t where a pair entry goes (it and the next): two empty lines, else from
 * the hand on the first half whose entries (one pair, or two lines each empty or small) are all
 * spent, counting down those it passes. */
static size_t pair_victim(set_tags *t) {
    for (size_t k = 0; k < SET_LINES; k += 2)
        if (kind_at(t, k) == LINE_EMPTY && kind_at(t, k + 1) == LINE_EMPTY) return k;
    for (size_t k = hand_of(t) & ~(size_t)1;; k = (k + 2) & (SET_LINES - 1)) {
        int a = kind_at(t, k) == LINE_EMPTY || use_spent(t, k);
        int b = kind_at(t, k) == LINE_PAIR || kind_at(t, k + 1) == LINE_EMPTY || use_spent(t, k + 1);
        if (a && b) return k;
    }
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
        set_tags *t = r->t;
        int pair = need > LINE_DATA;
        size_t v = pair ? pair_victim(t) : small_victim(t);
        cache_entry *c = r->s + v;
        c->hash = (uint32_t)r->h;
        c->len = (uint8_t)n;
        c->ntok = (uint8_t)m;
        c->joins = (uint8_t)joins;
        t->fp[v] = fp_of(r->h);
        meta_set(t, v, pair ? LINE_PAIR : LINE_SMALL, 1);
        if (pair) meta_set(t, v + 1, LINE_PAIR2, 0);
        hand_set(t, v + (pair ? 2 : 1));
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

/* The base symbols of the piece p[0..n) (valid UTF-8) and, for each, its byte offset in the
 * piece: a UTF-16 symbol after a character's first gets an offset inside that character, so a
 * token starting there counts as starting in it. At most n symbols. */
static size_t piece_symbols(uint32_t alphabet, const uint8_t *p, size_t n, uint32_t *sym, uint32_t *off) {
    if (alphabet == ST_ALPHABET_BYTES) {
        for (size_t i = 0; i < n; i++) { sym[i] = p[i]; off[i] = (uint32_t)i; }
        return n;
    }
    size_t ns = 0;
    for (size_t i = 0; i < n;) {
        uint16_t u[4];
        size_t l, k = st__ube_char_symbols(p + i, u, &l);
        for (size_t j = 0; j < k; j++) {
            sym[ns] = u[j];
            off[ns++] = (uint32_t)(i + (j < l ? j : l - 1));
        }
        i += l;
    }
    return ns;
}

/* A rule model's piece: its base symbols merged by rule (a piece that spells a token is not
 * taken whole: the rules decide). */
static st_status encode_piece_rules(encoder *e, size_t a, size_t b) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *p = e->text + a;
    size_t n = b - a;
    cache_ref cr;
    if (cache_find(e, p, n, 0, &cr)) return cache_replay(e, &cr, a);
    if (n > ST_MERGE_MAX_PARTS) return ST_ERR_OUT_OF_MEMORY;
    /* symbols, their offsets, the final tokens and starts, the merge scratch */
    size_t msz = st__merge_heap_scratch_size(n), size = 4 * n * sizeof(uint32_t) + msz;
    uint64_t stack[(4 * ST_STACK_PIECE + 1) / 2 + (3 * ST_STACK_PIECE + 1) + (4 * (ST_STACK_PIECE + 1) + 1) / 2];
    uint8_t *mem = n <= ST_STACK_PIECE ? (uint8_t *)stack : (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    uint64_t *scratch = (uint64_t *)(void *)mem;
    uint32_t *sym = (uint32_t *)(void *)(mem + msz), *off = sym + n, *tok = off + n, *start = tok + n;
    size_t ns = piece_symbols(v->alphabet, p, n, sym, off);
    st__merger mg = {v, &e->enc->rules, NULL, NULL};
    size_t m = st__merge_heap(&mg, NULL, sym, ns, tok, start, scratch);
    st_status st = ST_OK;
    if (!e->sup || !piece_to_run(e, tok, m, a, &st))
        for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + off[start[k]]);
    cache_fill(&cr, p, n, m, tok, start, off, e->sup && m == 1 && st__bit(e->sup->eligible, tok[0]));
    if (mem != (uint8_t *)stack) st__free(&e->enc->alloc, mem, size);
    return st;
}

/* A rank vocabulary's piece: one token if it is one; else backtracking (long or non-ASCII
 * pieces, when the tables exist) or the merge loops. `looked`: the caller has found the whole
 * piece is no token (encode_ordinary's inline lookup); h: the piece's st__hash_bytes if the
 * caller has it, else 0. */
static st_status encode_piece_ranks(encoder *e, size_t a, size_t b, int looked, uint64_t h, st_error *err) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *p = e->text + a;
    size_t n = b - a;
    /* the whole piece: usually one token; a short piece with 8 readable bytes takes the
     * one-word path. (The backtracking encoder's first trie walk makes this check itself.) */
    int wants = !e->merge_only && wants_backtrack(p, n);
    const st_backtrack *bt = wants ? tables_for(e->enc, p, n) : NULL;
    if (!bt && !looked) {
        uint32_t id;
        if (n <= 8 && e->text_len - a >= 8) {
            id = st__vocab_lookup_short(v, p, n);
        } else { /* the hash is kept for the piece cache */
            h = st__hash_bytes(p, n);
            id = st__vocab_find(v, p, n, h);
        }
        if (id != ST_NO_TOKEN) { put(e->o, id, a); return ST_OK; }
    }
    cache_ref cr;
    if (cache_find(e, p, n, h, &cr)) return cache_replay(e, &cr, a);
    if (!e->all_bytes) { /* byte-level vocabularies have all 256 (found once a call); others may not */
        e->all_bytes = 1;
        for (int k = 0; k < 256; k++)
            if (v->byte_ids[k] == ST_NO_TOKEN) e->all_bytes = -1;
    }
    for (size_t k = 0; e->all_bytes < 0 && k < n; k++)
        if (v->byte_ids[p[k]] == ST_NO_TOKEN) {
            st__error_set(err, ST_ERR_NOT_ENCODABLE, ST_UNIT_BYTE, a + k, "byte ");
            st__error_append_u64(err, p[k]);
            st__error_append(err, " is no token");
            return ST_ERR_NOT_ENCODABLE;
        }
    size_t m;
    if (n <= ST_STACK_PIECE) {
        uint8_t copy[ST_STACK_PIECE + ST_PAD];
        uint32_t tok[ST_STACK_PIECE + 1], start[ST_STACK_PIECE + 1];
        uint64_t open[ST_STACK_PIECE / 64 + 1];
        m = bt ? st__backtrack_encode(bt, v, p, n, tok, start, open, memo_of(e)) : 0;
        if (!m) {
            st__memcpy(copy, p, n);
            st__memset(copy + n, 0, ST_PAD);
            if (n <= ST_LINEAR_PIECE) {
                m = st__merge_short(&e->mg, copy, n, tok, start);
            } else {
                uint64_t scratch[(3 * ST_STACK_PIECE + 1) + (4 * (ST_STACK_PIECE + 1) + 1) / 2];
                m = st__merge_heap(&e->mg, copy, NULL, n, tok, start, scratch);
            }
        }
        if (wants && !bt) debt_add(e->enc, p, n);
        for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + start[k]);
        cache_fill(&cr, p, n, m, tok, start, NULL, 0);
        return ST_OK;
    }
    if (n > ST_MERGE_MAX_PARTS) return ST_ERR_OUT_OF_MEMORY;
    if (bt) {
        size_t osz = st__backtrack_scratch_size(n), bsz = osz + 2 * n * sizeof(uint32_t);
        uint8_t *scratch = (uint8_t *)st__alloc(&e->enc->alloc, bsz);
        if (!scratch) return ST_ERR_OUT_OF_MEMORY;
        uint32_t *tok = (uint32_t *)(void *)(scratch + osz), *start = tok + n;
        m = st__backtrack_encode(bt, v, p, n, tok, start, scratch, memo_of(e));
        for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + start[k]);
        st__free(&e->enc->alloc, scratch, bsz);
        if (m) return ST_OK;
    }
    size_t msz = st__merge_heap_scratch_size(n);
    size_t size = msz + 2 * n * sizeof(uint32_t) + n + ST_PAD;
    uint8_t *scratch = (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!scratch) return ST_ERR_OUT_OF_MEMORY;
    uint32_t *tok = (uint32_t *)(void *)(scratch + msz), *start = tok + n;
    uint8_t *copy = (uint8_t *)(start + n);
    st__memcpy(copy, p, n);
    st__memset(copy + n, 0, ST_PAD);
    m = st__merge_heap(&e->mg, copy, NULL, n, tok, start, scratch);
    if (wants && !bt) debt_add(e->enc, p, n);
    for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + start[k]);
    st__free(&e->enc->alloc, scratch, size);
    return ST_OK;
}

/* The one dispatch on the kind of model. */
ST_INLINE st_status encode_piece(encoder *e, size_t a, size_t b, st_error *err) {
    switch (e->enc->kind) {
    case ST__KIND_RANKS: return encode_piece_ranks(e, a, b, 0, 0, err);
    case ST__KIND_RULES: return encode_piece_rules(e, a, b);
    default: return ST_ERR_INVALID_ARGUMENT;
    }
}

/* Pieces the pre-tokenizer hands over at a time (their ends, on the stack). */
#define ST_PIECE_BATCH 128

/* A rank vocabulary's pieces of text[from..to), a batch at a time: the whole-piece lookup
 * inline (nearly every piece of real text is one token: 95% in English and code, 70-85% in
 * Russian, Arabic, Hindi), one call per piece that is not. The batch's hashes are computed and
 * their table slots prefetched first, so the probes' cache misses (the table is megabytes)
 * overlap instead of coming one after another. Pieces of up to 16 bytes are read as whole
 * words, where the text has them past the piece. */
static st_status encode_ordinary_ranks(encoder *e, size_t from, size_t to, st_error *err) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *text = e->text;
    size_t text_len = e->text_len;
    st__piece_iter it;
    st__pieces_init(&it, &e->enc->pt, text + from, to - from);
    size_t ends[ST_PIECE_BATCH];
    uint64_t hs[ST_PIECE_BATCH]; /* each piece's hash; 0: none (1 or 2 bytes: direct tables; or
                                    no whole words to read) */
    size_t a = from;
    while (it.i < it.len) {
        size_t m = st__pieces_fill(&it, ends, ST_PIECE_BATCH);
        size_t x = a;
        for (size_t k = 0; k < m; k++) {
            size_t b = from + ends[k], n = b - x;
            uint64_t h = 0;
            if (n > 2 && n <= 16 && text_len - x >= 16) {
                h = n <= 8 ? st__hash_short(text + x, n) : st__hash_mid(text + x, n);
                ST_PREFETCH(st__vocab_slot(v, h));
            }
            hs[k] = h;
            x = b;
        }
        for (size_t k = 0; k < m; k++) {
            size_t b = from + ends[k], n = b - a;
            const uint8_t *p = text + a;
            uint64_t h = hs[k];
            uint32_t id;
            int looked = 1;
            if (h) id = st__vocab_probe(v, p, n, h);
            else if (n == 1) id = v->byte_ids[p[0]];
            else if (n == 2) id = v->pair_ids[((uint32_t)p[0] << 8) | p[1]];
            else { id = ST_NO_TOKEN; looked = 0; }
            if (id != ST_NO_TOKEN) {
                put(e->o, id, a);
            } else {
                st_status st = encode_piece_ranks(e, a, b, looked, h, err);
                if (st != ST_OK) return st;
            }
            a = b;
        }
    }
    return ST_OK;
}

static st_status encode_ordinary(encoder *e, size_t from, size_t to, st_error *err) {
    if (e->enc->kind == ST__KIND_RANKS) return encode_ordinary_ranks(e, from, to, err);
    st__piece_iter it;
    st__pieces_init(&it, &e->enc->pt, e->text + from, to - from);
    size_t start = 0;
    while (it.i < it.len) {
        size_t end = st__pieces_next(&it);
        st_status st = encode_piece(e, from + start, from + end, err);
        if (st != ST_OK) return st;
        start = end;
    }
    return ST_OK;
}

/* ---- special tokens ------------------------------------------------------------------------- */

/* The policy resolved against the encoding: which special strings (by number, st_vocab.extra:
 * tiktoken's policy names strings, and an id may have several) are allowed and which disallowed. */
#define ST_POLICY_STACK_BITS 4096
typedef struct policy {
    uint64_t *allowed;    /* n_strings bits, or NULL when none is allowed */
    uint64_t *disallowed; /* n_strings bits, or NULL when none is disallowed */
    uint64_t stack_bits[2][ST_POLICY_STACK_BITS / 64];
    size_t bits_size;     /* bytes allocated for each of allowed and disallowed, 0 when on the stack */
    int any_allowed, any_disallowed;
    /* ST_SPECIAL_BY_TEXT: the disallowed strings that are no special string of the encoding
     * (tiktoken refuses them in the text too): strings[ends[k-1] .. ends[k]) for the k in
     * [first_unknown, end_unknown) with is_unknown set; n_unknown of them, one empty if
     * empty_unknown */
    const char *strings;
    const size_t *ends;
    size_t first_disallowed, end_disallowed, n_unknown;
    int empty_unknown;
} policy;

/* The index of special id in the sorted special_ids, or -1. */
static long special_index(const st_vocab *v, uint32_t id) {
    size_t lo = 0, hi = v->n_special;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->special_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < v->n_special && v->special_ids[lo] == id ? (long)lo : -1;
}

ST_INLINE int bit_get(const uint64_t *bits, uint32_t k) { return (int)((bits[k >> 6] >> (k & 63)) & 1); }
ST_INLINE void bit_put(uint64_t *bits, uint32_t k, int on) {
    if (on) bits[k >> 6] |= 1ull << (k & 63);
    else bits[k >> 6] &= ~(1ull << (k & 63));
}

/* Set (on) or clear in bits the strings list[0..n) names: string numbers with
 * ST_SPECIAL_BY_STRING, else ids, each standing for every string of its id. Every entry must
 * name a special string (with bytes: an image's are checked where used). */
static st_status mark(const st_vocab *v, const uint32_t *list, size_t n, int by_string, uint64_t *bits, int on,
                      uint32_t input, st_error *err) {
    uint32_t n_str = st__vocab_n_strings(v);
    for (size_t k = 0; k < n; k++) {
        uint32_t id, a, tl;
        int ok;
        if (by_string) {
            ok = list[k] < n_str && st__vocab_special_string(v, list[k], &id, &a, &tl);
            if (ok && bits) bit_put(bits, list[k], on);
        } else {
            long i = special_index(v, list[k]);
            ok = i >= 0 && st__vocab_span(v, list[k], &a, &tl);
            if (ok && bits) {
                bit_put(bits, (uint32_t)i, on);
                for (uint32_t x = 0; x < v->n_extra; x++) /* its further strings */
                    if (v->extra[3 * (size_t)x] == list[k]) bit_put(bits, v->n_special + x, on);
            }
        }
        if (!ok) {
            st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k, input == 1 ? "allowed" : "disallowed");
            st__error_append(err, by_string ? " special string " : " id ");
            st__error_append_u64(err, list[k]);
            st__error_append(err, " is not a special token of the encoding");
            st__error_line(err, 0, input);
            if (!by_string) st__error_token(err, list[k]);
            return ST_ERR_INVALID_ARGUMENT;
        }
    }
    return ST_OK;
}

/* String k of a ST_SPECIAL_BY_TEXT policy: strings[ends[k-1] .. ends[k]). */
ST_INLINE const uint8_t *text_string(const st_special_policy *sp, size_t k, size_t *len) {
    size_t a = k ? sp->ends[k - 1] : 0;
    *len = sp->ends[k] - a;
    return (const uint8_t *)sp->strings + a;
}

/* The number of the special string whose bytes are p[0..n), or -1. A linear look over the
 * special strings: a policy names a few, and an encoding has at most a few thousand. */
long st__special_string_number(const st_vocab *v, const uint8_t *p, size_t n) {
    uint32_t n_str = st__vocab_n_strings(v);
    for (uint32_t k = 0; k < n_str; k++) {
        uint32_t id, a, tl;
        if (st__vocab_special_string(v, k, &id, &a, &tl) && tl == n && st__memcmp(v->bytes + a, p, n) == 0)
            return (long)k;
    }
    return -1;
}

/* Set in bits the special strings among the ST_SPECIAL_BY_TEXT strings [from, to) of sp; the
 * others are no special token. Returns how many of them are none. */
static size_t mark_text(const st_vocab *v, const st_special_policy *sp, size_t from, size_t to, uint64_t *bits) {
    size_t unknown = 0;
    for (size_t k = from; k < to; k++) {
        size_t n;
        const uint8_t *p = text_string(sp, k, &n);
        long i = st__special_string_number(v, p, n);
        if (i < 0) unknown++;
        else if (bits) bit_put(bits, (uint32_t)i, 1);
    }
    return unknown;
}

/* A ST_SPECIAL_BY_TEXT policy's strings and ends are well formed: ends never decrease, and
 * point into strings. */
static int text_form_ok(const st_special_policy *sp) {
    size_t n = sp->n_allowed + sp->n_disallowed;
    if (n < sp->n_allowed || sp->allowed || sp->disallowed || (sp->flags & ST_SPECIAL_BY_STRING)) return 0;
    if (!n) return 1;
    if (!sp->ends) return 0;
    for (size_t k = 1; k < n; k++)
        if (sp->ends[k] < sp->ends[k - 1]) return 0;
    return sp->strings || sp->ends[n - 1] == 0;
}

static void policy_free(policy *pl, const st_allocator *a) {
    if (pl->bits_size) {
        st__free(a, pl->allowed, pl->bits_size);
        st__free(a, pl->disallowed, pl->bits_size);
    }
    pl->allowed = pl->disallowed = NULL;
    pl->bits_size = 0;
}

static int any_bit(const uint64_t *bits, size_t words) {
    for (size_t w = 0; w < words; w++)
        if (bits[w]) return 1;
    return 0;
}

static st_status policy_resolve(const st_encoding *enc, const st_special_policy *sp, policy *pl, st_error *err) {
    const st_vocab *v = &enc->vocab;
    pl->allowed = NULL;
    pl->disallowed = NULL;
    pl->bits_size = 0;
    pl->any_allowed = pl->any_disallowed = 0;
    pl->strings = NULL;
    pl->ends = NULL;
    pl->first_disallowed = pl->end_disallowed = pl->n_unknown = 0;
    pl->empty_unknown = 0;
    if (!sp) return ST_OK;
    int by_text = (sp->flags & ST_SPECIAL_BY_TEXT) != 0;
    if ((sp->flags & ~(ST_SPECIAL_ALLOW_ALL | ST_SPECIAL_DISALLOW_REST | ST_SPECIAL_BY_STRING | ST_SPECIAL_BY_TEXT)) ||
        (by_text ? !text_form_ok(sp)
                 : (!sp->allowed && sp->n_allowed) || (!sp->disallowed && sp->n_disallowed)))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "special-token policy");
    int allow_all = (sp->flags & ST_SPECIAL_ALLOW_ALL) != 0, by_string = (sp->flags & ST_SPECIAL_BY_STRING) != 0;
    st_status st = ST_OK;
    if (by_text) { /* the disallowed strings that are no special token are searched for on their own */
        pl->strings = sp->strings;
        pl->ends = sp->ends;
        pl->first_disallowed = sp->n_allowed;
        pl->end_disallowed = sp->n_allowed + sp->n_disallowed;
        pl->n_unknown = mark_text(v, sp, pl->first_disallowed, pl->end_disallowed, NULL);
        for (size_t k = pl->first_disallowed; k < pl->end_disallowed && !pl->empty_unknown; k++)
            pl->empty_unknown = sp->ends[k] == (k ? sp->ends[k - 1] : 0); /* no special is empty */
        pl->any_disallowed = pl->n_unknown > 0;
    } else { /* the lists are checked first, whatever the flags make of them */
        st = allow_all ? ST_OK : mark(v, sp->allowed, sp->n_allowed, by_string, NULL, 1, 1, err);
        if (st == ST_OK) st = mark(v, sp->disallowed, sp->n_disallowed, by_string, NULL, 1, 2, err);
        if (st != ST_OK) return st;
    }
    uint32_t n_str = st__vocab_n_strings(v);
    size_t words = ((size_t)n_str + 63) / 64;
    if (!words) return ST_OK; /* no specials: nothing to match, only unknown strings to refuse */
    if (n_str <= ST_POLICY_STACK_BITS) {
        pl->allowed = pl->stack_bits[0];
        pl->disallowed = pl->stack_bits[1];
    } else {
        pl->bits_size = words * 8;
        pl->allowed = (uint64_t *)st__alloc(&enc->alloc, pl->bits_size);
        pl->disallowed = (uint64_t *)st__alloc(&enc->alloc, pl->bits_size);
        if (!pl->allowed || !pl->disallowed) {
            if (pl->allowed) st__free(&enc->alloc, pl->allowed, pl->bits_size);
            if (pl->disallowed) st__free(&enc->alloc, pl->disallowed, pl->bits_size);
            pl->allowed = pl->disallowed = NULL;
            pl->bits_size = 0;
            return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        }
    }
    int rest = (sp->flags & ST_SPECIAL_DISALLOW_REST) && !allow_all;
    st__memset(pl->allowed, allow_all ? 0xFF : 0, words * 8);
    if (allow_all && (n_str & 63)) pl->allowed[words - 1] = (1ull << (n_str & 63)) - 1;
    if (allow_all) {
    } else if (by_text) {
        mark_text(v, sp, 0, sp->n_allowed, pl->allowed);
    } else {
        mark(v, sp->allowed, sp->n_allowed, by_string, pl->allowed, 1, 1, NULL);
    }
    /* rest: every string not allowed; and the listed ones (a string both allowed and listed as
     * disallowed is refused, as tiktoken's search for the disallowed ones finds it) */
    for (size_t w = 0; w < words; w++) pl->disallowed[w] = rest ? ~pl->allowed[w] : 0;
    if (rest && (n_str & 63)) pl->disallowed[words - 1] &= (1ull << (n_str & 63)) - 1;
    if (by_text) mark_text(v, sp, pl->first_disallowed, pl->end_disallowed, pl->disallowed);
    else mark(v, sp->disallowed, sp->n_disallowed, by_string, pl->disallowed, 1, 2, NULL);
    /* an empty set skips its scan below */
    pl->any_allowed = any_bit(pl->allowed, words);
    pl->any_disallowed = pl->n_unknown > 0 || any_bit(pl->disallowed, words);
    return ST_OK;
}

/* The first byte at or after i that is c, or len: eight bytes a step (a word is tested for a
 * zero byte after xor with c), as every default encode call scans its whole text for the
 * disallowed specials' first byte, and a byte loop there would cost 5-10% on English. */
static size_t find_byte(const uint8_t *s, size_t i, size_t len, uint8_t c) {
    const uint64_t ones = 0x0101010101010101ull, pat = ones * c;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        st__memcpy(&w, s + i, 8);
        w ^= pat;
        if ((w - ones) & ~w & (ones << 7)) break; /* some byte of the word is c */
    }
    while (i < len && s[i] != c) i++;
    return i;
}

/* The longest disallowed string at s[i..] (special strings first, so that one of them wins
 * over an equal unknown string): 1 and its bytes, length and id (0xFFFFFFFF for a string that
 * is no special token), or 0. */
static int disallowed_at(const st_vocab *v, const policy *pl, const uint8_t *s, size_t i, size_t len,
                         const uint8_t **found, uint32_t *found_len, uint32_t *found_id) {
    int any = 0;
    uint32_t n_str = pl->disallowed ? st__vocab_n_strings(v) : 0;
    for (uint32_t k = 0; k < n_str; k++) {
        uint32_t id, a, tl;
        if (!bit_get(pl->disallowed, k) || !st__vocab_special_string(v, k, &id, &a, &tl)) continue;
        if ((!any || tl > *found_len) && tl <= len - i && st__memcmp(s + i, v->bytes + a, tl) == 0) {
            any = 1;
            *found = v->bytes + a;
            *found_len = tl;
            *found_id = id;
        }
    }
    for (size_t k = pl->first_disallowed; pl->n_unknown && k < pl->end_disallowed; k++) {
        size_t a = k ? pl->ends[k - 1] : 0, tl = pl->ends[k] - a;
        const uint8_t *p = (const uint8_t *)pl->strings + a;
        /* a special string of that length here was found above, with its id */
        if ((!any || tl > *found_len) && tl <= len - i && tl <= UINT32_MAX &&
            (tl == 0 || st__memcmp(s + i, p, tl) == 0) && st__special_string_number(v, p, tl) < 0) {
            any = 1;
            *found = p;
            *found_len = (uint32_t)tl;
            *found_id = ST__NO_TOKEN_ID;
        }
    }
    return any;
}

/* If the text holds a disallowed string anywhere: ST_ERR_DISALLOWED_SPECIAL for the first (the
 * earliest; at one position the longest), as tiktoken's regex search over the raw text finds
 * it, whatever the allowed specials around it. The strings are the disallowed special strings
 * and the disallowed strings of a ST_SPECIAL_BY_TEXT policy that are no special token. */
static st_status check_disallowed(const st_vocab *v, const policy *pl, const uint8_t *s, size_t len, st_error *err) {
    if (!pl->any_disallowed) return ST_OK;
    uint32_t n_str = pl->disallowed ? st__vocab_n_strings(v) : 0;
    uint8_t first[256];
    st__memset(first, 0, sizeof first);
    int distinct = 0;
    uint8_t only = 0;
    for (uint32_t k = 0; k < n_str; k++) {
        uint32_t id, a, tl;
        if (!bit_get(pl->disallowed, k) || !st__vocab_special_string(v, k, &id, &a, &tl)) continue;
        if (!first[v->bytes[a]]) { first[v->bytes[a]] = 1; distinct++; only = v->bytes[a]; }
    }
    for (size_t k = pl->first_disallowed; pl->n_unknown && k < pl->end_disallowed; k++) {
        size_t a = k ? pl->ends[k - 1] : 0;
        uint8_t c = (uint8_t)pl->strings[a];
        if (pl->ends[k] > a && !first[c]) { first[c] = 1; distinct++; only = c; }
    }
    const uint8_t *found = NULL;
    uint32_t found_len = 0, found_id = ST__NO_TOKEN_ID;
    size_t at = 0;
    /* an empty string is found at once, at offset 0, unless a longer one starts there */
    int any = pl->empty_unknown && disallowed_at(v, pl, s, 0, len, &found, &found_len, &found_id);
    for (size_t i = 0; !any && distinct && i < len; i++) {
        if (distinct == 1) { /* every tiktoken special starts with '<' */
            i = find_byte(s, i, len, only);
            if (i >= len) break;
        } else if (!first[s[i]]) {
            continue;
        }
        any = disallowed_at(v, pl, s, i, len, &found, &found_len, &found_id);
        at = i;
    }
    if (!any) return ST_OK;
    st__error_set(err, ST_ERR_DISALLOWED_SPECIAL, ST_UNIT_BYTE, at, NULL);
    st__error_token(err, found_id);
    st__error_kind(err, ST_KIND_DISALLOWED_SPECIAL, found_len);
    if (err) { /* its text (the string found: an id may have several), cut on a character
                  boundary if it does not fit */
        size_t n = found_len < sizeof err->message - 1 ? found_len : sizeof err->message - 1;
        while (n < found_len && n > 0 && (found[n] & 0xC0) == 0x80) n--;
        st__error_append_bytes(err, (const char *)found, n);
    }
    return ST_ERR_DISALLOWED_SPECIAL;
}

/* The allowed special string matching at s[i..], longest first: its id, ST_NO_TOKEN if none. */
static uint32_t special_at(const st_vocab *v, const uint64_t *allowed, const uint8_t *s, size_t i, size_t len,
                           size_t *match_len) {
    uint32_t best = ST_NO_TOKEN, n_str = st__vocab_n_strings(v);
    size_t best_len = 0;
    for (uint32_t w = 0; w < (n_str + 63) / 64; w++) {
        for (uint64_t m = allowed[w]; m; m &= m - 1) { /* the set bits of the word */
            uint32_t k = w * 64 + (uint32_t)__builtin_ctzll(m), id, a, tl;
            if (!st__vocab_special_string(v, k, &id, &a, &tl)) continue;
            if (tl > best_len && tl <= len - i && st__memcmp(s + i, v->bytes + a, tl) == 0) {
                best = id;
                best_len = tl;
            }
        }
    }
    *match_len = best_len;
    return best;
}

static st_status encode_all(encoder *e, size_t len, const policy *pl, st_error *err) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *s = e->text;
    if (!pl->any_allowed) return encode_ordinary(e, 0, len, err);
    uint8_t first[256];
    st__memset(first, 0, sizeof first);
    for (uint32_t k = 0; k < st__vocab_n_strings(v); k++) {
        uint32_t id, a, tl;
        if (bit_get(pl->allowed, k) && st__vocab_special_string(v, k, &id, &a, &tl)) first[v->bytes[a]] = 1;
    }
    size_t seg = 0;
    for (size_t i = 0; i < len; i++) {
        if (!first[s[i]] || (s[i] & 0xC0) == 0x80) continue; /* matches start on a character */
        size_t ml;
        uint32_t id = special_at(v, pl->allowed, s, i, len, &ml);
        if (id == ST_NO_TOKEN) continue;
        /* and end on one: a loaded special is valid UTF-8, but an image's is trusted for nothing */
        if (i + ml < len && (s[i + ml] & 0xC0) == 0x80) continue;
        st_status st = encode_ordinary(e, seg, i, err);
        if (st == ST_OK && e->run_n) st = run_flush(e); /* a run never crosses a special token */
        if (st != ST_OK) return st;
        put(e->o, id, i);
        i += ml - 1;
        seg = i + 1;
    }
    return encode_ordinary(e, seg, len, err);
}

/* The text, then the last run (a run never crosses the end of the text). */
static st_status encode_text(encoder *e, size_t len, const policy *pl, st_error *err) {
    st_status st = encode_all(e, len, pl, err);
    if (st == ST_OK && e->run_n) st = run_flush(e);
    return st;
}

/* ---- the calls ------------------------------------------------------------------------------ */

st_status st_encode(const st_encoding *enc, const char *text, size_t len, const st_special_policy *specials,
                    uint32_t flags, uint32_t *ids, size_t *starts, size_t cap, size_t *n_ids, st_error *err) {
    st__error_clear(err);
    if (!enc || !n_ids || (!text && len) || (!ids && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    if (flags > ST_OFFSETS_UTF16) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags");
    *n_ids = 0;
    st_status st = st_utf8_validate(text, len, err);
    if (st != ST_OK) return st;
    static const char empty[1] = {0};
    if (!text) text = empty; /* len is 0: no arithmetic on a NULL pointer below */
    policy pl;
    st = policy_resolve(enc, specials, &pl, err);
    if (st == ST_OK) st = check_disallowed(&enc->vocab, &pl, (const uint8_t *)text, len, err);
    if (st != ST_OK) { policy_free(&pl, &enc->alloc); return st; }

    sink o = {ids, starts, cap, 0, flags, (const uint8_t *)text, 0, 0, 0};
    encoder e;
    st__memset(&e, 0, sizeof e);
    e.enc = enc;
    e.text = (const uint8_t *)text;
    e.text_len = len;
    e.o = &o;
    e.mg.v = &enc->vocab;
    e.mg.rules = enc->kind == ST__KIND_RULES ? &enc->rules : NULL;
    /* the caches: a block of the handle's for any call while the piece cache is on; with it
     * off, only for long texts (the pair cache and memo) */
    size_t limit = st__atomic_load_size(&enc->lazy->cache_limit);
    int slot = -1;
    if (cache_slots_for(share_of(limit, 0)) || len >= ST_CACHE_MIN_TEXT) { /* without memory it runs uncached */
        e.scratch = scratch_claim(enc, limit, len, len >= ST_CACHE_MIN_TEXT ? len : 0, &slot);
        if (e.scratch) {
            e.cache = e.scratch->sets ? e.scratch->lines : NULL;
            e.tags = e.scratch->tags;
            e.cache_sets = e.scratch->sets;
            e.mg.pairs = e.scratch->pairs;
        }
    }
    if (enc->kind == ST__KIND_RULES && enc->supers.n) {
        e.sup = &enc->supers;
        e.run_tok = e.run_stack_tok;
        e.run_at = e.run_stack_at;
        e.run_cap = ST_RUN_STACK;
    }
    st = encode_text(&e, len, &pl, err);
    run_release(&e);
    if (e.scratch) scratch_release(enc, e.scratch, slot);
    if (e.hits) st__atomic_add_size(&enc->lazy->cache_hits, e.hits);
    if (e.misses) st__atomic_add_size(&enc->lazy->cache_misses, e.misses);
    policy_free(&pl, &enc->alloc);
    *n_ids = o.n;
    if (st != ST_OK) {
        if (err && err->status == ST_OK) st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
        return st;
    }
    return st__error_status(err, o.n > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}

st_status st_encode_piece(const st_encoding *enc, const uint8_t *bytes, size_t len, uint32_t *ids, size_t cap,
                          size_t *n_ids, st_error *err) {
    st__error_clear(err);
    if (!enc || !n_ids || (!bytes && len) || (!ids && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *n_ids = 0;
    if (enc->kind == ST__KIND_RULES && enc->vocab.alphabet == ST_ALPHABET_UBE) {
        st_status st = st_utf8_validate((const char *)bytes, len, err); /* UBE symbols come from characters */
        if (st != ST_OK) return st;
    }
    if (!len) return st__error_status(err, ST_OK);
    /* one piece through the same merge (or backtracking) code as st_encode's pieces: no
     * pre-tokenizer, no special tokens, no piece cache (its entries are pretokens of UTF-8 text),
     * no superword pass (supermerges join pretokens, and this is one piece) */
    sink o = {ids, NULL, cap, 0, ST_OFFSETS_BYTES, bytes, 0, 0, 0};
    encoder e;
    st__memset(&e, 0, sizeof e);
    e.enc = enc;
    e.text = bytes;
    e.text_len = len;
    e.o = &o;
    e.mg.v = &enc->vocab;
    e.mg.rules = enc->kind == ST__KIND_RULES ? &enc->rules : NULL;
    e.merge_only = 1;
    st_status st = encode_piece(&e, 0, len, err);
    *n_ids = o.n;
    if (st != ST_OK) {
        if (err && err->status == ST_OK) st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
        return st;
    }
    return st__error_status(err, o.n > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}

st_status st_encode_many(const st_encoding *enc, const char *texts, const size_t *offsets, size_t n_texts,
                         const st_special_policy *specials, uint32_t *ids, size_t cap, size_t *counts, size_t *n_ids,
                         st_error *err) {
    st__error_clear(err);
    if (!enc || !n_ids || !offsets || (!counts && n_texts) || (!ids && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *n_ids = 0;
    size_t total = 0;
    for (size_t k = 0; k < n_texts; k++) {
        size_t a = offsets[k], b = offsets[k + 1];
        if (b < a || (!texts && b > a)) {
            st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k + 1, "offsets out of order, or texts NULL");
            return ST_ERR_INVALID_ARGUMENT;
        }
        size_t n = 0;
        size_t room = total < cap ? cap - total : 0;
        st_status st = st_encode(enc, texts ? texts + a : NULL, b - a, specials, 0, room ? ids + total : NULL, NULL,
                                 room, &n, err);
        if (st != ST_OK && st != ST_ERR_BUFFER_TOO_SMALL) {
            if (err && err->unit == ST_UNIT_BYTE) err->offset += a; /* from the start of texts */
            return st;
        }
        counts[k] = n;
        total += n;
    }
    st__error_clear(err);
    *n_ids = total;
    return st__error_status(err, total > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}

st_status st_encode_count(const st_encoding *enc, const char *text, size_t len, const st_special_policy *specials,
                          size_t *n_tokens, st_error *err) {
    st_status st = st_encode(enc, text, len, specials, 0, NULL, NULL, 0, n_tokens, err);
    if (st == ST_ERR_BUFFER_TOO_SMALL) {
        st__error_clear(err);
        return ST_OK;
    }
    return st;
}
