/* The vocabulary: token bytes packed in one block, a dense id -> bytes index for decoding, and
 * an open-addressing table bytes -> id kept about half full (docs/design.md §7, suBPEriod seed). */
#ifndef ST_VOCAB_H
#define ST_VOCAB_H

#include "../base/internal.h"
#include "../base/hash.h"

#define ST_NO_TOKEN 0xFFFFFFFFu

typedef struct st_vocab {
    uint32_t n_ids;          /* ids are 0..n_ids-1 (ordinary and special); gaps have length 0 */
    uint32_t n_ordinary;     /* how many ids are ordinary tokens */
    uint32_t n_special;
    uint32_t table_mask;     /* table has table_mask + 1 slots, a power of two */
    uint64_t bytes_len;
    const uint32_t *offsets; /* n_ids + 1: token id i = bytes[offsets[i] .. offsets[i+1]) */
    const uint8_t *bytes;
    const uint64_t *table;   /* 0 = empty, else (hash >> 32) << 32 | (id + 1) */
    const uint32_t *special_ids; /* n_special ids, sorted by id */
    /* Special strings beyond each special id's first (tiktoken lets an id have several: o200k_harmony's
     * <|endofprompt|> and <|reserved_200018|>): n_extra triples (id, offset in bytes, length), in
     * the order the specials text gave them. Special string k (the numbering of the policy's
     * ST_SPECIAL_BY_STRING) is special_ids[k]'s text for k < n_special, else extra k - n_special. */
    uint32_t n_extra;
    const uint32_t *extra;
    uint32_t byte_ids[256];  /* id of each single byte, ST_NO_TOKEN if the byte is no token */
    const uint32_t *pair_ids; /* 65536: id of each 2-byte token by (b0 << 8 | b1), or ST_NO_TOKEN:
                                 the first merges of every piece look these up directly (rank
                                 vocabularies only; NULL for rules, which never join bytes) */
    void *owned;             /* the one allocation holding the arrays, NULL for a borrowed image */
    size_t owned_size;
    /* ST_ALPHABET_BYTES, or ST_ALPHABET_UBE, whose ordinary tokens' bytes are their symbols,
     * two little-endian bytes each. */
    uint32_t alphabet;
} st_vocab;

/* The token store above is what every kind of model has (ids <-> bytes, specials, decoding).
 * What turns a piece into tokens is the kind's own: a rank vocabulary (tiktoken files) merges
 * a pair when its joined bytes are a token and needs nothing more than the store (byte_ids,
 * pair_ids and the table are its lookups); a rule model merges a pair when it is a rule, and
 * keeps its rules here. The arrays live in the store's one allocation. */
typedef struct st_rules {
    const uint64_t *slots; /* 0 = empty, else (left << 21 | right) << 21 | token: each rule */
    uint32_t mask;         /* slots has mask + 1 entries, a power of two */
    uint32_t base;         /* the number of base symbols: 256 or 512; rule i makes id base + i */
} st_rules;

#define ST_RULES_MAX_IDS ((1u << 21) - 1) /* rule slots pack three ids of 21 bits */



/* The span of token id in bytes[], checked: a vocabulary borrowed from an image is trusted
 * for nothing, so every id and offset read from it is bounds-checked where it is used. */
ST_INLINE int st__vocab_span(const st_vocab *v, uint32_t id, uint32_t *start, uint32_t *len) {
    if (id >= v->n_ids) return 0;
    uint32_t a = v->offsets[id], b = v->offsets[id + 1];
    if (a >= b || b > v->bytes_len) return 0;
    *start = a;
    *len = b - a;
    return 1;
}

/* Special string k (see st_vocab.extra): its id and span in bytes[], checked (an image's are
 * trusted for nothing); 0 if k is out of range or the span is bad. */
ST_INLINE int st__vocab_special_string(const st_vocab *v, uint32_t k, uint32_t *id, uint32_t *start, uint32_t *len) {
    if (k < v->n_special) {
        *id = v->special_ids[k];
        return st__vocab_span(v, *id, start, len);
    }
    k -= v->n_special;
    if (k >= v->n_extra) return 0;
    const uint32_t *x = v->extra + 3 * (size_t)k;
    if (x[2] == 0 || x[1] > v->bytes_len || x[2] > v->bytes_len - x[1]) return 0;
    *id = x[0];
    *start = x[1];
    *len = x[2];
    return 1;
}

/* The number of special strings: one per special id, and the extra ones. */
ST_INLINE uint32_t st__vocab_n_strings(const st_vocab *v) { return v->n_special + v->n_extra; }

/* The token made by the rule joining left and right, or ST_NO_TOKEN. */
ST_INLINE uint32_t st__rule_find(const st_rules *r, uint32_t left, uint32_t right) {
    uint64_t key = ((uint64_t)left << 21) | right;
    uint32_t i = (uint32_t)st__mix64(key) & r->mask;
    for (uint32_t probes = 0; probes <= r->mask; probes++) {
        uint64_t s = r->slots[i];
        if (!s) return ST_NO_TOKEN;
        if ((s >> 21) == key) return (uint32_t)s & ST_RULES_MAX_IDS;
        i = (i + 1) & r->mask;
    }
    return ST_NO_TOKEN;
}

/* The lookups below take keys whose bytes are read as whole words (the caller pads: 8 bytes at p
 * readable for a key of 1..8 bytes, 16 for 9..16), each a hash (st__hash_short or st__hash_mid:
 * the same value as st__hash_bytes, so the piece cache can take it) and a probe; the encoder
 * computes the hashes of a batch of pieces and prefetches their slots before it probes any. A
 * token's bytes are compared as words too: the packed block is padded with 8 bytes, and a token
 * of 9..16 bytes has its 16 in bounds. */

/* The slot the probe for hash h starts at (to prefetch). */
ST_INLINE const uint64_t *st__vocab_slot(const st_vocab *v, uint64_t h) { return &v->table[(uint32_t)h & v->table_mask]; }

/* The id of p[0..n) (n 1..16, padded as above) whose hash is h, or ST_NO_TOKEN. */
ST_INLINE uint32_t st__vocab_probe(const st_vocab *v, const uint8_t *p, size_t n, uint64_t h) {
    uint64_t m0 = n >= 8 ? ~0ull : ~0ull >> (8 * (8 - n)), m1 = n <= 8 ? 0 : ~0ull >> (8 * (16 - n));
    uint64_t w0 = st__load_le64(p) & m0, w1 = n > 8 ? st__load_le64(p + 8) & m1 : 0;
    uint64_t tag = h & 0xFFFFFFFF00000000ull;
    uint32_t i = (uint32_t)h & v->table_mask;
    for (uint32_t probes = 0; probes <= v->table_mask; probes++) {
        uint64_t slot = v->table[i];
        if (!slot) return ST_NO_TOKEN;
        if ((slot & 0xFFFFFFFF00000000ull) == tag) {
            uint32_t id = (uint32_t)slot - 1;
            if (id < v->n_ids) {
                uint32_t a = v->offsets[id], b = v->offsets[id + 1]; /* an image's: checked */
                const uint8_t *t = v->bytes + a;
                if (b - a == n && b <= v->bytes_len && (st__load_le64(t) & m0) == w0 &&
                    (n <= 8 || (st__load_le64(t + 8) & m1) == w1))
                    return id;
            }
        }
        i = (i + 1) & v->table_mask;
    }
    return ST_NO_TOKEN;
}

/* Lookup of a key of 1..8 bytes whose 8 bytes at p may all be read. */
ST_INLINE uint32_t st__vocab_lookup_short(const st_vocab *v, const uint8_t *p, size_t n) {
    if (n == 2) return v->pair_ids[((uint32_t)p[0] << 8) | p[1]];
    return st__vocab_probe(v, p, n, st__hash_short(p, n));
}

/* id of the ordinary token with exactly these bytes, whose st__hash_bytes is h, or ST_NO_TOKEN. */
ST_INLINE uint32_t st__vocab_find(const st_vocab *v, const uint8_t *p, size_t n, uint64_t h) {
    uint64_t tag = h & 0xFFFFFFFF00000000ull;
    uint32_t i = (uint32_t)h & v->table_mask;
    for (uint32_t probes = 0; probes <= v->table_mask; probes++) {
        uint64_t slot = v->table[i];
        if (!slot) return ST_NO_TOKEN;
        if ((slot & 0xFFFFFFFF00000000ull) == tag) {
            uint32_t id = (uint32_t)slot - 1, a, len;
            if (st__vocab_span(v, id, &a, &len) && len == n && st__memcmp(v->bytes + a, p, n) == 0) return id;
        }
        i = (i + 1) & v->table_mask;
    }
    return ST_NO_TOKEN;
}

/* id of the ordinary token with exactly these bytes, or ST_NO_TOKEN. */
ST_INLINE uint32_t st__vocab_lookup(const st_vocab *v, const uint8_t *p, size_t n) {
    return st__vocab_find(v, p, n, st__hash_bytes(p, n));
}

ST_INLINE int st__vocab_is_special(const st_vocab *v, uint32_t id) {
    size_t lo = 0, hi = v->n_special;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->special_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < v->n_special && v->special_ids[lo] == id;
}

/* 1 when id is an ordinary token of the store: in a rules model (rules 1) the ids
 * 0 .. n_ordinary - 1, a special that shares one of them included; in a rank vocabulary an id
 * with bytes that is no special (its specials take ids of their own, and gaps have no bytes). */
ST_INLINE int st__vocab_ordinary(const st_vocab *v, int rules, uint32_t id) {
    if (id >= v->n_ids) return 0;
    if (rules) return id < v->n_ordinary;
    uint32_t a, len;
    return !st__vocab_is_special(v, id) && st__vocab_span(v, id, &a, &len) && len > 0;
}

/* Parse a tiktoken rank file ("base64 rank" lines) plus special tokens given in the same
 * format. Errors carry the byte offset of the bad line (specials: offset into that text). */
st_status st__vocab_parse_tiktoken(st_vocab *v, const st_allocator *a, const char *ranks, size_t ranks_len,
                                   const char *specials, size_t specials_len, st_error *err);
/* The supermerges of a superword model (docs/design.md §7), kept apart from the rules so the
 * merge inside a pretoken can never make a supermerge token: they join the tokens of whole
 * adjacent pretokens only, in the superword pass (superword_pass.c). */
typedef struct st_supers {
    st_rules rules;           /* (left, right) -> the supermerge's token; rules.base = the id of
                                 supermerge 0 (A + n_merges); slots NULL when there are none.
                                 Unlike the regular rules, its slot is st__supers_hash(key) >>
                                 shift (one multiply, not st__mix64's two and its shifts: the
                                 superword pass looks up a pair per adjacent pretoken) */
    uint32_t n;               /* supermerges: ids rules.base .. rules.base + n - 1 */
    uint32_t shift;           /* 64 - log2(rules.mask + 1) */
    const uint64_t *eligible; /* a bit per ordinary id (bit id & 63 of word id >> 6): a regular
                                 token whose text (bytes, or its UBE symbols' text) is valid and
                                 holds a letter (\p{L}), so a pretoken that became that one token
                                 may join a superword. A bit, not a byte: the pass tests it for
                                 every pretoken, and the regular ids' bits (4 KB for 32,768) stay
                                 in the nearest cache, where bytes missed it. */
    const uint64_t *parts;    /* two bits per ordinary id (bits 2 id and 2 id + 1 of word id >> 5):
                                 ST_SUPER_LEFT and ST_SUPER_RIGHT, the left / right part
                                 of some supermerge (st__supers_parts). Of no use for the regular
                                 ids (in Chinese or Japanese nearly every character is both: the
                                 filter below rejects far more pairs), but seldom set for a
                                 supermerge's token (in Chinese about one superword in eight is a
                                 part of another), so after a merge the pass looks up the new
                                 token's pairs only when they can be one. */
    const uint64_t *filter;   /* 4 bits per slot (at least 64): bit st__supers_hash(key) >>
                                 (shift - 2) set for every supermerge's key. Most adjacent pairs
                                 of a run are no supermerge (every pair left at the end of a run,
                                 most pairs a merge makes), and in Chinese or Japanese nearly
                                 every character is the left and the right part of some
                                 supermerge, so the part bits pass them; this bit array (a
                                 sixteenth of the slots' size, so it stays in a near cache
                                 where the slots do not; at most one bit in eight set) rejects
                                 at least seven in eight of them with one load. Its bit's top
                                 bits are the slot index, so it refines the table and needs no
                                 second hash. */
} st_supers;

#define ST_SUPER_LEFT 1
#define ST_SUPER_RIGHT 2

/* Bit id of a bit array of words. */
ST_INLINE uint32_t st__bit(const uint64_t *bits, uint32_t id) { return (uint32_t)(bits[id >> 6] >> (id & 63)) & 1; }
/* ST_SUPER_LEFT | ST_SUPER_RIGHT of ordinary id, from st_supers.parts. */
ST_INLINE uint32_t st__supers_parts(const st_supers *s, uint32_t id) {
    return (uint32_t)(s->parts[id >> 5] >> (2 * (id & 31))) & 3;
}

/* The hash of a supermerge key (left << 21 | right): Fibonacci hashing, whose top bits depend
 * on every bit of the key. */
ST_INLINE uint64_t st__supers_hash(uint64_t key) { return key * 0x9E3779B97F4A7C15ull; }

/* The supermerge joining left and right (tokens of a run: ordinary ids), or ST_NO_TOKEN. */
ST_INLINE uint32_t st__supers_find(const st_supers *s, uint32_t left, uint32_t right) {
    uint64_t key = ((uint64_t)left << 21) | right, h = st__supers_hash(key);
    uint64_t bit = h >> (s->shift - 2);
    if (!((s->filter[bit >> 6] >> (bit & 63)) & 1)) return ST_NO_TOKEN;
    uint32_t i = (uint32_t)(h >> s->shift);
    for (uint32_t probes = 0; probes <= s->rules.mask; probes++) {
        uint64_t slot = s->rules.slots[i];
        if (!slot) return ST_NO_TOKEN;
        if ((slot >> 21) == key) return (uint32_t)slot & ST_RULES_MAX_IDS;
        i = (i + 1) & s->rules.mask;
    }
    return ST_NO_TOKEN;
}

/* Start loading what st__supers_find(s, left, right) will read (a hint: no effect on any
 * result). The superword pass knows each adjacent pair of a run when its second pretoken
 * arrives, well before the run is merged; the table is too big to stay in the nearest caches,
 * and its loads, waited for one at a time at the merge, were most of the pass's cost. (Looking
 * the pair up there instead ran fewer instructions but no faster: each lookup's branches then
 * wait on a load from a far cache.) */
ST_INLINE void st__supers_prefetch(const st_supers *s, uint32_t left, uint32_t right) {
    uint64_t h = st__supers_hash(((uint64_t)left << 21) | right), bit = h >> (s->shift - 2);
    ST_PREFETCH(&s->filter[bit >> 6]);
    ST_PREFETCH(&s->rules.slots[h >> s->shift]);
}

/* A merge-rules model: ids 0..A-1 the base symbols (A = 256 or 512), id A + i the join of
 * merges[2i] and merges[2i + 1], then id A + n_merges + j the join of supers[2j] and
 * supers[2j + 1] (supermerges; sup may be NULL when n_super is 0); specials as for
 * st__vocab_parse_tiktoken (ids >= A + n_merges + n_super). A bad rule is
 * ST_ERR_MALFORMED_MODEL with err->offset = its index (err->input 2 for a supermerge). The
 * bytes -> id table holds every ordinary token (a supermerge's too: st_token_id finds it),
 * the first id for bytes two tokens share; the encoders of rule models never consult it. */
/* The limit on the bytes of the tokens made by n rules (ST_RULES_TOKEN_BYTES_BASE, supertok.h). */
ST_INLINE uint64_t st__rules_token_bytes_limit(uint64_t n_rules) {
    return ST_RULES_TOKEN_BYTES_BASE + (uint64_t)ST_RULES_TOKEN_BYTES_PER_RULE * n_rules;
}

/* The lengths in symbols of a rules model's ordinary ids (base + n_merges + n_super of them,
 * into len), the merges' and supermerges' parts being below their own ids (checked before).
 * Their bytes (a UBE symbol 2) are checked against the limit as they add up: past it,
 * ST_ERR_MALFORMED_MODEL with err->offset = the index of the rule that crossed it (input 2 for
 * a supermerge). *bytes: the bytes of every ordinary token, the base symbols' included. */
st_status st__rules_token_lengths(int alphabet, const uint32_t *merges, size_t n_merges, const uint32_t *supers,
                                  size_t n_super, uint32_t *len, uint64_t *bytes, st_error *err);
st_status st__vocab_from_merges(st_vocab *v, st_rules *rules, st_supers *sup, const st_allocator *a, int alphabet,
                                const uint32_t *merges, size_t n_merges, const uint32_t *supers, size_t n_super,
                                const char *specials, size_t specials_len, st_error *err);
void st__vocab_free(st_vocab *v, const st_allocator *a);

/* The compact image (the ordinary tokens' lengths and bytes, nothing derived): its size, its
 * bytes (out holds st__vocab_compact_size), and a vocabulary built from it and the specials
 * text, as st__vocab_parse_tiktoken builds one from a rank file. */
size_t st__vocab_compact_size(const st_vocab *v);
void st__vocab_compact_write(const st_vocab *v, uint8_t *out);
st_status st__vocab_parse_compact(st_vocab *v, const st_allocator *a, const uint8_t *img, size_t len,
                                  const char *specials, size_t specials_len, st_error *err);

/* The binary image: a header and the arrays, position-independent, loadable in place. */
size_t st__vocab_image_size(const st_vocab *v);
void st__vocab_image_write(const st_vocab *v, uint32_t pattern, uint8_t *out);
/* Point v into the image (borrowed, not copied; it must stay alive and 8-byte aligned).
 * Checks the header and section bounds only: nothing makes a pass over the contents. */
st_status st__vocab_image_borrow(st_vocab *v, const uint8_t *img, size_t len, uint32_t *pattern, st_error *err);

#endif
