/* The span cache (docs/design.md §7): the ids of whole stretches of text seen before, so that text
 * encoded again (a chat's history re-sent with each turn, a document re-tokenized, a prompt's
 * fixed preamble) costs a hash and a compare a span instead of pre-tokenizing it and looking up
 * every piece. Inline here, beside the piece cache (piece_cache.h), as the pipeline (pipeline.c)
 * runs it once a span; a scratch block (piece_cache.c) holds one, sized there.
 *
 * Spans. A rank vocabulary's text between special tokens is cut into spans at places where the
 * encoding must put a piece boundary and where each side's pieces come out the same encoded
 * alone: the cut rules of cut.c (st__cut_within), which the parallel encoder relies on too. The
 * first such place at least ST_SPAN_MIN bytes after a span's start ends it, so the ids of a span
 * are a function of its bytes alone and a cached span is exact in any text around it. A text with
 * no such place within ST_SPAN_MAX bytes (one long word, a megabyte of one letter, a pattern with
 * no proven rules) is encoded piece by piece as before, uncached, in stretches that end at the
 * next place found, so the work stays linear.
 *
 * The cache is a log: each entry (its hash, length and token count, the span's bytes, then its
 * ids) is appended; when the log is full it starts over from its beginning, overwriting the
 * oldest entries (an entry never wraps: one that would not fit before the end starts the next lap).
 * An index of (hash, position) in buckets of four finds an entry (a new one takes the bucket's
 * oldest slot); a position the log has since passed
 * over by a whole lap is stale, and every hit compares the span's bytes. So memory is the log and
 * index whatever the input, and what a lookup returns is always the span's own ids. */
#ifndef ST_SPAN_CACHE_H
#define ST_SPAN_CACHE_H

#include "encoding.h"
#include "../base/hash.h"

/* A span ends at the first cut at least ST_SPAN_MIN bytes from its start; a text of ST_SPAN_TEXT
 * bytes or more goes through the cache (one under ST_SPAN_MIN is one span). 1,024 against 256:
 * each span costs a search for its end, a hash, a probe and, when new, a piece loop of its own
 * and an entry, so fewer spans take 1-3% off a fresh call (en, de, ru, zh, code) and 20-48% off a
 * warm one (bench/encode_driver.c, the two builds side by side, 500 KB slices); a chat's history
 * growing by 300 bytes a turn, re-encoded each turn, took 45 us a call against 54 at 50 KB of
 * English (171 against 203 in Chinese): the last span or two, re-encoded, cost less than the
 * spans saved. 2,048 gained a little more on big texts but a 4 KB history took 29 us against 24. */
#define ST_SPAN_MIN 1024
#define ST_SPAN_TEXT 256
#define ST_SPAN_MAX 8192  /* a span longer than this (no cut found before) is not cached */
#define ST_SPAN_ENTRY 16  /* an entry's header: hash, length, token count */

#define SPAN_WAYS 4 /* an index bucket's slots: a hash's entry is in one of the four at h & ~3 */

typedef struct span_slot {
    uint64_t hash;
    uint64_t at; /* the entry's position in the log, counted from the log's making, + 1; 0: none */
} span_slot;

/* A span encoded into the caller's buffer this call, to be remembered at the call's end. */
typedef struct span_pending {
    uint64_t hash;
    size_t at, len;   /* the span: text[at..at + len) */
    size_t first, m;  /* its ids: the sink's ids[first..first + m) */
} span_pending;
#define ST_SPAN_PENDING 256

typedef struct st__span_cache {
    uint8_t *log;        /* size bytes (a power of two); NULL: no span cache */
    size_t size;
    uint64_t end;        /* bytes appended since the log was made */
    span_slot *slots;    /* nslots (a power of two) */
    size_t nslots;
    uint32_t *ids;       /* room for ST_SPAN_MAX ids: a span's tokens as they are made */
    span_pending *pending; /* ST_SPAN_PENDING: spans to remember (st__span_fill) when the call ends
                              or the list is full, as one stream of copies rather than writes
                              between the vocabulary's probes (measured: the same cost within
                              the noise, 9-14% of a fresh call against 7-16% filled as each span
                              was made) */
    size_t npending;
} st__span_cache;

/* The hash of a span: four independent lanes over 32-byte blocks (a span is hundreds of bytes,
 * and a lane's multiply chain would otherwise be the cost of a warm call), then the tail. Any
 * byte order: a span cache is never saved. */
ST_INLINE uint64_t st__span_hash(const uint8_t *p, size_t n) {
    const uint64_t k1 = 0x9E3779B185EBCA87ull, k2 = 0xC2B2AE3D27D4EB4Full;
    uint64_t a = ST_HASH_SEED ^ (uint64_t)n, b = k1, c = k2, d = ST_HASH_LEN;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w[4];
        st__memcpy(w, p + i, 32);
        a = (a ^ w[0]) * k1; a ^= a >> 29;
        b = (b ^ w[1]) * k1; b ^= b >> 29;
        c = (c ^ w[2]) * k1; c ^= c >> 29;
        d = (d ^ w[3]) * k1; d ^= d >> 29;
    }
    uint64_t h = a ^ (b * k2) ^ ((c ^ (c >> 31)) * k1) ^ (d * ST_HASH_MUL);
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        st__memcpy(&w, p + i, 8);
        h = (h ^ w) * k2;
        h ^= h >> 31;
    }
    uint64_t t = 0;
    for (size_t k = 0; i + k < n; k++) t |= (uint64_t)p[i + k] << (8 * k);
    return st__mix64(h ^ t);
}

ST_INLINE size_t span_bytes_room(size_t n) { return (n + 3) & ~(size_t)3; }

/* The entry the index slot sl names, if the log still holds it (its length and token count in
 * *len, *ntok); else NULL (an empty slot, or one the log has come round over). */
ST_INLINE const uint8_t *st__span_entry(const st__span_cache *sc, const span_slot *sl, uint32_t *len, uint32_t *ntok) {
    if (!sl->at || sc->end - (sl->at - 1) > sc->size) return NULL;
    const uint8_t *e = sc->log + (size_t)((sl->at - 1) & (sc->size - 1));
    st__memcpy(len, e + 8, 4);
    st__memcpy(ntok, e + 12, 4);
    return e;
}

/* The ids of the span p[0..n) (hash h) if the cache holds it: *m of them; else NULL. */
ST_INLINE const uint8_t *st__span_find(const st__span_cache *sc, const uint8_t *p, size_t n, uint64_t h, size_t *m) {
    const span_slot *s = &sc->slots[h & (sc->nslots - SPAN_WAYS)], *hit = NULL;
    for (size_t k = 0; k < SPAN_WAYS; k++)
        if (s[k].hash == h && s[k].at) hit = &s[k];
    uint32_t len, ntok;
    const uint8_t *e = hit ? st__span_entry(sc, hit, &len, &ntok) : NULL;
    uint64_t eh;
    if (!e) return NULL;
    st__memcpy(&eh, e, 8);
    if (eh != h || len != n || st__memcmp(e + ST_SPAN_ENTRY, p, n) != 0) return NULL;
    *m = ntok;
    return e + ST_SPAN_ENTRY + span_bytes_room(n);
}

/* Remember the m ids of the span p[0..n) (hash h). */
ST_INLINE void st__span_fill(st__span_cache *sc, const uint8_t *p, size_t n, uint64_t h, const uint32_t *ids,
                             size_t m) {
    size_t need = (ST_SPAN_ENTRY + span_bytes_room(n) + 4 * m + 7) & ~(size_t)7;
    if (need > sc->size / 4) return;
    size_t off = (size_t)(sc->end & (sc->size - 1));
    if (off + need > sc->size) { /* the next lap */
        sc->end += sc->size - off;
        off = 0;
    }
    uint8_t *e = sc->log + off;
    uint32_t len = (uint32_t)n, ntok = (uint32_t)m;
    st__memcpy(e, &h, 8);
    st__memcpy(e + 8, &len, 4);
    st__memcpy(e + 12, &ntok, 4);
    st__memcpy(e + ST_SPAN_ENTRY, p, n);
    st__memcpy(e + ST_SPAN_ENTRY + span_bytes_room(n), ids, 4 * m);
    /* the bucket's slot of this hash if it has one, else its oldest (an empty slot's at is 0) */
    span_slot *s = &sc->slots[h & (sc->nslots - SPAN_WAYS)], *v = s;
    for (size_t k = 0; k < SPAN_WAYS; k++) {
        if (s[k].hash == h) { v = &s[k]; break; }
        if (s[k].at < v->at) v = &s[k];
    }
    v->hash = h;
    v->at = sc->end + 1;
    sc->end += need;
}

#endif
