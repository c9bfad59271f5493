/* The piece cache's memory (docs/design.md §7): the scratch blocks a handle keeps, one per running
 * call, each holding a piece cache, a pair cache and a backtracking memo; how big a block's tables
 * are (a share of the host's limit, grown with the text the block has seen); claiming a block for
 * a call and handing it back; and the public calls that set the limit and report on the cache.
 * Apart from the lookup (inline in piece_cache.h) because all of this runs once a call, not once
 * a piece, and is where the memory bound and the thread rules live: a block belongs to one call
 * at a time, so the hot path takes no lock. */
#include "piece_cache.h"

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

/* The tables of one block under its share of the limit: half for the piece cache, two thirds of
 * it for the short table and one third for the long one, each a power of two lines or entries
 * (so the share holds); 0 = none (a short table has at least one set, whatever the allocator's
 * alignment). The other half is the span cache's (span_log_for). */
static size_t cache_slots_for(size_t share) {
    size_t lines = pow2_floor(share / 2 / 3 * 2 / sizeof(cache_entry));
    return lines >= 2 * SET_LINES ? lines : 0;
}
static size_t long_slots_for(size_t share) {
    return pow2_floor(share / 2 / 3 / sizeof(long_entry));
}

/* The span cache (span_cache.h) under a block's share: half of it for the log and its index (a
 * slot of 16 bytes per 128 bytes of log, in buckets of four: a span of English, its bytes and
 * ids, takes about 500, so a bucket rarely fills; at one slot per 512 bytes 2-4% of a text's
 * spans were lost to full buckets), a power of two bytes, at least 64 KiB, or none. */
#define SPAN_LOG_MIN ((size_t)64 << 10)
#define SPAN_BYTES_PER_SLOT 128
/* a span's ids as they are made, then the spans waiting to be remembered */
#define SPAN_EXTRA (ST_SPAN_MAX * sizeof(uint32_t) + ST_SPAN_PENDING * sizeof(span_pending))
_Static_assert(ST_SPAN_MAX * sizeof(uint32_t) % _Alignof(span_pending) == 0, "the pending list is aligned");
static size_t span_log_for(size_t share) {
    size_t log = pow2_floor(share / 2 / (SPAN_BYTES_PER_SLOT + sizeof(span_slot)) * SPAN_BYTES_PER_SLOT);
    return log >= SPAN_LOG_MIN ? log : 0;
}

static void span_drop(st__lazy *lz, st__span_cache *c, const st_allocator *a) {
    if (!c->log) return;
    size_t size = c->size + c->nslots * sizeof(span_slot) + SPAN_EXTRA;
    st__free(a, c->log, c->size);
    st__free(a, c->slots, c->nslots * sizeof(span_slot));
    st__free(a, c->ids, SPAN_EXTRA);
    st__atomic_add_size(&lz->cache_held, (size_t)0 - size);
    st__memset(c, 0, sizeof *c);
}

/* Give block s, which has seen `seen` bytes of text, a span log of four times that (a text
 * encoded again then finds its spans: a log that held less than a text's worth would have
 * overwritten its first spans by the time it came round to them again), at least SPAN_LOG_MIN,
 * at most what the share allows. A log that grows keeps its entries (each copied into the new
 * log through the old index: a text encoded a few times while its handle grows would otherwise
 * find an empty log each time); one the limit shrinks starts empty. Without memory, none (or
 * the old one, kept). */
static void span_fit(st__lazy *lz, st__span_cache *c, size_t share, size_t seen, const st_allocator *a) {
    size_t most = span_log_for(share), want = SPAN_LOG_MIN;
    while (want < most && want / 4 < seen) want *= 2;
    if (want > most) want = most;
    if (c->log && c->size >= want && c->size <= most) return;
    if (!want) {
        span_drop(lz, c, a);
        return;
    }
    st__span_cache n;
    st__memset(&n, 0, sizeof n);
    n.nslots = want / SPAN_BYTES_PER_SLOT;
    n.log = (uint8_t *)st__alloc(a, want);
    n.slots = (span_slot *)st__alloc(a, n.nslots * sizeof(span_slot));
    n.ids = c->ids ? c->ids : (uint32_t *)st__alloc(a, SPAN_EXTRA); /* the ids buffer, then the pending list */
    if (!n.log || !n.slots || !n.ids) {
        st__free(a, n.log, want);
        st__free(a, n.slots, n.nslots * sizeof(span_slot));
        if (n.ids != c->ids) st__free(a, n.ids, SPAN_EXTRA);
        if (c->log && c->size > most) span_drop(lz, c, a);
        return;
    }
    st__memset(n.slots, 0, n.nslots * sizeof(span_slot));
    n.size = want;
    n.pending = (span_pending *)(void *)(n.ids + ST_SPAN_MAX);
    if (c->log && want > c->size) /* grown: the old log's entries, into the new one */
        for (size_t k = 0; k < c->nslots; k++) {
            uint32_t len, ntok;
            const uint8_t *e = st__span_entry(c, &c->slots[k], &len, &ntok);
            if (e)
                st__span_fill(&n, e + ST_SPAN_ENTRY, len, c->slots[k].hash,
                              (const uint32_t *)(const void *)(e + ST_SPAN_ENTRY + span_bytes_room(len)), ntok);
        }
    size_t held = want + n.nslots * sizeof(span_slot) + (c->ids ? 0 : SPAN_EXTRA);
    if (c->log) {
        st__free(a, c->log, c->size);
        st__free(a, c->slots, c->nslots * sizeof(span_slot));
        held -= c->size + c->nslots * sizeof(span_slot);
    }
    *c = n;
    st__atomic_add_size(&lz->cache_held, held);
}

static void piece_drop(st__lazy *lz, st__scratch *s, const st_allocator *a) {
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

/* Both caches of block s emptied and their memory freed. */
static void cache_drop(st__lazy *lz, st__scratch *s, const st_allocator *a) {
    piece_drop(lz, s, a);
    span_drop(lz, &s->span, a);
}

/* The short table's lines for a block that has encoded `seen` bytes of text: one per 32 bytes
 * of it (a text holds far fewer distinct pieces that are not one token), at least 512, at most
 * the limit's share. So a handle used for a few short texts holds kilobytes, not the limit's
 * megabytes (a test run, or an app, that makes many encodings would otherwise hold megabytes
 * for each: the pywasm backend ran out of wasm memory so), and a busy one grows to the limit. */
static size_t cache_slots_want(size_t share, size_t seen) {
    size_t most = cache_slots_for(share), want = 512;
    while (want < most && want <= seen / 32) want *= 2;
    return want < most ? want : most;
}

/* The entries of a block's old tables, into its new ones (cache_fit): a table that grows keeps
 * what it holds. Each short entry goes to its set in the new table, found again from its
 * piece's hash (the set is the hash's high half, which no line keeps), with its use count; each
 * long one to its slot. Where the new set or slot is taken (a smaller table, after a lower
 * limit), the usual replacement decides. A table made empty instead, at each doubling up to
 * the default limit's (2 MB of text), had the next call miss every piece seen before: 1,330 of
 * the 3,808 misses of English's second megabyte. */
static void cache_move(st__scratch *s, const cache_entry *lines, const set_tags *tags, size_t sets,
                       const long_entry *longc, size_t long_slots) {
    for (size_t set = 0; set < sets; set++) {
        const set_tags *ot = &tags[set];
        for (size_t k = 0; k < SET_LINES; k++) {
            unsigned kind = ot->meta[k] & META_KIND;
            if (kind != LINE_SMALL && kind != LINE_PAIR) continue;
            const cache_entry *c = &lines[set * SET_LINES + k];
            size_t to = set_of(st__hash_bytes(c->data, c->len) | 1, s->sets);
            size_t v = line_claim(&s->tags[to], kind, ot->fp[k], (ot->meta[k] & META_USE) / META_USE1);
            st__memcpy(&s->lines[to * SET_LINES + v], c, (kind == LINE_PAIR ? 2 : 1) * sizeof *c);
        }
    }
    if (!longc || !s->longc) return;
    for (size_t k = 0; k < long_slots; k++)
        if (longc[k].hash) s->longc[(longc[k].hash >> 20) & (s->long_slots - 1)] = longc[k];
}

/* Give block s, which has seen `seen` bytes of text, its tables under `share` (a grown table
 * holding the old one's entries, cache_move; the long one made on first need, half the short
 * one's bytes, or now when the old table had one), or none when the limit allows none; without
 * memory, none. A table is never shrunk but for a lower limit. */
static void cache_fit(st__lazy *lz, st__scratch *s, size_t share, size_t seen, const st_allocator *a) {
    size_t most = cache_slots_for(share), slots = cache_slots_want(share, seen);
    if (s->cache && s->cache_slots >= slots && s->cache_slots <= most) return;
    if (!s->cache && !slots) return;
    size_t size = slots * sizeof(cache_entry);
    cache_entry *t = slots ? (cache_entry *)st__alloc(a, size) : NULL;
    /* a table that cannot grow stays as it is (within the limit: a lower limit drops it) */
    if (slots && !t && s->cache && s->cache_slots <= most) return;
    st__scratch old = *s; /* its tables are freed once their entries have moved */
    s->cache = s->lines = NULL;
    s->tags = NULL;
    s->longc = NULL;
    s->cache_slots = s->sets = s->long_slots = 0;
    if (t) {
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
        if (old.longc) st__cache_long_table(lz, s, a);
        if (old.cache) cache_move(s, old.lines, old.tags, old.sets, old.longc, old.long_slots);
    }
    piece_drop(lz, &old, a);
}

long_entry *st__cache_long_table(st__lazy *lz, st__scratch *s, const st_allocator *a) {
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
        span_fit(lz, &s->span, share_of(limit, k), s->seen, &enc->alloc);
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
    size_t share = share_of(limit, slot);
    if (s->cache_slots > cache_slots_for(share) || s->long_slots > long_slots_for(share) ||
        s->span.size > span_log_for(share))
        cache_drop(lz, s, &enc->alloc);
    st__atomic_store(&lz->slot_busy[slot], 0);
}

/* The line of set t where a small entry goes (see above; a pair entry goes as a whole, its
 * second line then empty). Ends within four laps: each lap counts every entry down. */
size_t st__cache_small_victim(set_tags *t) {
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
size_t st__cache_pair_victim(set_tags *t) {
    for (size_t k = 0; k < SET_LINES; k += 2)
        if (kind_at(t, k) == LINE_EMPTY && kind_at(t, k + 1) == LINE_EMPTY) return k;
    for (size_t k = hand_of(t) & ~(size_t)1;; k = (k + 2) & (SET_LINES - 1)) {
        int a = kind_at(t, k) == LINE_EMPTY || use_spent(t, k);
        int b = kind_at(t, k) == LINE_PAIR || kind_at(t, k + 1) == LINE_EMPTY || use_spent(t, k + 1);
        if (a && b) return k;
    }
}

void st__piece_cache_open(const st_encoding *enc, size_t len, st__piece_cache *c) {
    st__memset(c, 0, sizeof *c);
    c->slot = -1;
    /* a block of the handle's for any call while the piece cache is on; with it off, only for
     * long texts (the pair cache and memo) */
    size_t limit = st__atomic_load_size(&enc->lazy->cache_limit);
    if (!cache_slots_for(share_of(limit, 0)) && len < ST_CACHE_MIN_TEXT) return;
    st__scratch *s = scratch_claim(enc, limit, len, len >= ST_CACHE_MIN_TEXT ? len : 0, &c->slot);
    if (!s) return; /* without memory the call runs uncached */
    c->scratch = s;
    c->lines = s->sets ? s->lines : NULL;
    c->tags = s->tags;
    c->sets = s->sets;
}

void st__piece_cache_close(const st_encoding *enc, st__piece_cache *c) {
    if (c->scratch) scratch_release(enc, c->scratch, c->slot);
    c->scratch = NULL;
    if (c->hits) st__atomic_add_size(&enc->lazy->cache_hits, c->hits);
    if (c->misses) st__atomic_add_size(&enc->lazy->cache_misses, c->misses);
    if (c->span_hits) st__atomic_add_size(&enc->lazy->span_hits, c->span_hits);
    if (c->span_misses) st__atomic_add_size(&enc->lazy->span_misses, c->span_misses);
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
    info->span_hits = st__atomic_load_size(&lz->span_hits);
    info->span_misses = st__atomic_load_size(&lz->span_misses);
    return ST_OK;
}
