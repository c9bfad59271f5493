/* Encoder and decoder (DESIGN §7).
 *
 * Per piece from the pre-tokenizer: if the whole piece is a token, emit it (most pieces of
 * real text are; suBPEriod's "known word" skip). Otherwise run the byte-pair merge:
 *  - short pieces: tiktoken's loop on stack arrays, with the rank of every adjacent pair
 *    cached and only the two pairs touching a merge looked up again;
 *  - long pieces: the same merges in the same order from a binary heap keyed by (rank, start),
 *    so a megabyte of one letter costs O(n log n), not O(n^2).
 * Both pick the lowest rank and, among equal ranks, the leftmost pair: tiktoken's order. */
#include "backtrack.h"
#include "pretokenize.h"
#include "vocab.h"

struct st_encoding {
    st_allocator alloc;
    st_vocab vocab;
    struct st_pretokenizer pt;
    /* The backtracking encoder's tables (backtrack.h): built on the first piece that wants
     * them, by whichever thread gets there first; other threads meanwhile use the merge loop,
     * which gives the same ids. Loading stays fast, and text that never needs them (English,
     * code) never pays their build time or memory. A vocabulary from an image never builds
     * them: an image is for start-up where nothing may make a pass over the vocabulary. */
    int bt_state;
    int bt_failed; /* the build ran out of memory (set before bt_state becomes BT_UNAVAILABLE) */
    st_backtrack bt;
};

enum { BT_NOT_BUILT, BT_BUILDING, BT_READY, BT_UNAVAILABLE };

static const st_backtrack *backtrack_tables(const st_encoding *enc) {
    st_encoding *e = (st_encoding *)enc; /* only bt_state and bt change, once, guarded */
    int state = st__atomic_load(&e->bt_state);
    if (state == BT_READY) return &enc->bt;
    if (state != BT_NOT_BUILT || !st__atomic_claim(&e->bt_state, BT_NOT_BUILT, BT_BUILDING)) return NULL;
    st_status st = st__backtrack_build(&e->bt, &enc->vocab, &enc->alloc);
    int ready = st == ST_OK && e->bt.ready;
    e->bt_failed = st == ST_ERR_OUT_OF_MEMORY;
    st__atomic_store(&e->bt_state, ready ? BT_READY : BT_UNAVAILABLE);
    return ready ? &enc->bt : NULL;
}


/* Pieces up to ST_LINEAR_PIECE bytes use tiktoken's linear scan (cheapest when short); longer
 * ones the heap, on the stack up to ST_STACK_PIECE bytes. */
#ifndef ST_LINEAR_PIECE
#define ST_LINEAR_PIECE 10
#endif
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

/* Output sink: ids (and char starts) up to cap, counting past it. */
typedef struct sink {
    uint32_t *ids;
    size_t *starts;
    size_t cap, n;
    /* code point count of text[0..pos), for char_starts */
    const uint8_t *text;
    size_t pos, cps;
} sink;

ST_INLINE void put(sink *o, uint32_t id, size_t byte_start) {
    if (o->n < o->cap) {
        o->ids[o->n] = id;
        if (o->starts) {
            for (; o->pos < byte_start; o->pos++) o->cps += (o->text[o->pos] & 0xC0) != 0x80;
            size_t c = o->cps;
            /* a token that starts inside a character belongs to that character */
            if ((o->text[byte_start] & 0xC0) == 0x80 && c > 0) c--;
            o->starts[o->n] = c;
        }
    }
    o->n++;
}

/* The rank of the token with bytes p[0..n), ST_NO_TOKEN if none: for tiktoken files rank = id.
 * The merges work on a copy of the piece followed by 8 readable bytes, so keys of up to 8
 * bytes (nearly all pairs) take the one-word path. */
#define ST_PAD 8
ST_INLINE uint32_t rank_of(const st_vocab *v, const uint8_t *p, size_t n) {
    return n <= 8 ? st__vocab_lookup_short(v, p, n) : st__vocab_lookup(v, p, n);
}

/* A per-call cache of pair ranks keyed by the two parts' token ids (which fix the joined
 * bytes): the same joins recur all through a text (the bytes of every common character, the
 * syllables of every common word), and a hit in this small table stays in cache where a probe
 * of the vocabulary's multi-megabyte table would miss. Direct-mapped; NULL when not used. */
#define ST_PAIR_CACHE_BITS 14
typedef struct pair_slot {
    uint32_t left, right, rank, unused;
} pair_slot;

ST_INLINE uint32_t join_rank(const st_vocab *v, pair_slot *pc, uint32_t left, uint32_t right, const uint8_t *p,
                             size_t n) {
    if (!pc) return rank_of(v, p, n);
    uint64_t k = ((uint64_t)left << 32 | right) * 0x9E3779B97F4A7C15ull;
    pair_slot *sl = &pc[k >> (64 - ST_PAIR_CACHE_BITS)];
    if (sl->left == left && sl->right == right) return sl->rank;
    uint32_t r = rank_of(v, p, n);
    sl->left = left;
    sl->right = right;
    sl->rank = r;
    return r;
}

/* tiktoken's merge on small arrays. start[k] is where part k begins (start[m] = n), rank[k]
 * the rank of joining parts k and k+1, tok[k] the token of part k. Writes the m final parts'
 * tokens and starts to tok_out/start_out and returns m. */
static size_t merge_short(const st_vocab *v, pair_slot *pc, const uint8_t *p, size_t n, uint32_t *tok_out,
                          uint32_t *start_out) {
    uint32_t rank[ST_LINEAR_PIECE];
    uint32_t *start = start_out, *tok = tok_out; /* worked on in place */
    size_t m = n;
    for (size_t k = 0; k < n; k++) {
        start[k] = (uint32_t)k;
        tok[k] = v->byte_ids[p[k]];
        rank[k] = k + 1 < n ? v->pair_ids[((uint32_t)p[k] << 8) | p[k + 1]] : ST_NO_TOKEN;
    }
    start[n] = (uint32_t)n;
    for (;;) {
        ST_COUNT(m); /* test builds only: the scan below reads m ranks */
        uint32_t best = ST_NO_TOKEN;
        size_t at = 0;
        for (size_t k = 0; k + 1 < m; k++)
            if (rank[k] < best) { best = rank[k]; at = k; }
        if (best == ST_NO_TOKEN) break;
        /* join parts at and at+1: the joined part is the token whose rank was best */
        tok[at] = best;
        for (size_t k = at + 1; k < m; k++) { start[k] = start[k + 1]; tok[k] = tok[k + 1]; }
        for (size_t k = at + 1; k + 1 < m; k++) rank[k] = rank[k + 1];
        m--;
        start[m] = (uint32_t)n;
        rank[at] = at + 1 < m ? join_rank(v, pc, tok[at], tok[at + 1], p + start[at], start[at + 2] - start[at])
                              : ST_NO_TOKEN;
        if (at > 0)
            rank[at - 1] = join_rank(v, pc, tok[at - 1], tok[at], p + start[at - 1], start[at + 1] - start[at - 1]);
    }
    return m;
}

/* ---- the heap merge for long pieces --------------------------------------------------------- */

ST_INLINE void heap_push(uint64_t *h, size_t *len, uint64_t key) {
    size_t i = (*len)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h[parent] <= key) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = key;
}

/* Put key at slot i of the n-entry heap and sift it down. */
ST_INLINE void sift_down(uint64_t *h, size_t n, size_t i, uint64_t key) {
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (key <= h[c]) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = key;
}

ST_INLINE uint64_t heap_pop(uint64_t *h, size_t *len) {
    uint64_t top = h[0], last = h[--(*len)];
    if (*len) sift_down(h, *len, 0, last);
    return top;
}

/* The rank of joining the parts at [a, at) and [at, b) holding tokens left and right: by
 * ranks, the rank of their joined bytes p[a..b) (if a token); by rules (merge-rules models),
 * the token the rule (left, right) makes, whose id orders the rules. p is unused (and may be
 * NULL) for rules. */
ST_INLINE uint32_t pair_rank(const st_vocab *v, pair_slot *pc, uint32_t left, uint32_t right, const uint8_t *p,
                             size_t a, size_t b) {
    return v->mode == ST_MODE_RULES ? st__vocab_rule(v, left, right) : join_rank(v, pc, left, right, p + a, b - a);
}

/* Parts are nodes named by their start offset, linked by next/prev; rank[i] is the rank of
 * joining node i with its successor. Heap keys are rank << 32 | start, so among equal ranks the
 * leftmost pops first; an entry whose rank no longer matches its node, or whose node is gone, is
 * stale and skipped. `scratch` holds merge_scratch_size(n) bytes.
 * The parts start as the piece's bytes p[0..n) (ranks), or, for a merge-rules model, as its
 * base symbols sym[0..n) (p NULL); starts are then symbol indexes. */
static size_t merge_scratch_size(size_t n) { return (3 * n + 1) * sizeof(uint64_t) + 4 * (n + 1) * sizeof(uint32_t); }

static size_t merge_heap(const st_vocab *v, pair_slot *pc, const uint8_t *p, const uint32_t *sym, size_t n,
                         uint32_t *tok_out, uint32_t *start_out, void *scratch) {
    size_t heap_cap = 3 * n + 1; /* n - 1 initial pairs + at most 2 per merge */
    uint64_t *heap = (uint64_t *)scratch;
    uint32_t *next = (uint32_t *)(void *)(heap + heap_cap);
    uint32_t *prev = next + (n + 1);
    uint32_t *rank = prev + (n + 1);
    uint32_t *tok = rank + (n + 1);
    const uint32_t END = (uint32_t)n, DEAD = 0xFFFFFFFEu;
    size_t hl = 0;
    for (uint32_t i = 0; i < n; i++) {
        next[i] = i + 1;
        prev[i] = i ? i - 1 : END;
        tok[i] = sym ? sym[i] : v->byte_ids[p[i]];
    }
    for (uint32_t i = 0; i < n; i++) {
        if (i + 1 == n) rank[i] = ST_NO_TOKEN;
        else if (sym) rank[i] = st__vocab_rule(v, tok[i], tok[i + 1]);
        else rank[i] = v->pair_ids[((uint32_t)p[i] << 8) | p[i + 1]]; /* 2-byte tokens: one read */
        if (rank[i] != ST_NO_TOKEN) heap[hl++] = ((uint64_t)rank[i] << 32) | i;
    }
    for (size_t k = hl / 2; k-- > 0;) sift_down(heap, hl, k, heap[k]); /* heapify */
    while (hl) {
        ST_COUNT(1); /* test builds only: one heap operation */
        uint64_t key = heap[0];
        uint32_t i = (uint32_t)key, r = (uint32_t)(key >> 32);
        if (prev[i] == DEAD || rank[i] != r) { /* stale */
            heap_pop(heap, &hl);
            continue;
        }
        uint32_t j = next[i];
        uint32_t after = next[j];
        tok[i] = r;
        next[i] = after;
        if (after != END) prev[after] = i;
        prev[j] = DEAD;
        rank[i] = after != END ? pair_rank(v, pc, r, tok[after], p, i, next[after]) : ST_NO_TOKEN;
        /* the entry just used is at the top: replace it (one sift) rather than pop and push */
        if (rank[i] != ST_NO_TOKEN) sift_down(heap, hl, 0, ((uint64_t)rank[i] << 32) | i);
        else heap_pop(heap, &hl);
        if (i > 0) {
            uint32_t q = prev[i];
            rank[q] = pair_rank(v, pc, tok[q], r, p, q, after);
            if (rank[q] != ST_NO_TOKEN) heap_push(heap, &hl, ((uint64_t)rank[q] << 32) | q);
        }
    }
    size_t m = 0;
    for (uint32_t i = 0; i != END; i = next[i]) {
        tok_out[m] = tok[i];
        start_out[m++] = i;
    }
    return m;
}

/* A cache of merged pieces for one st_encode call: words that are not one token recur
 * (inflected forms, names), and a hit replaces a merge by a compare. Direct-mapped by the
 * piece's hash; an entry names an earlier occurrence in the same text, so the key compare
 * reads the text itself and nothing outlives the call. */
/* Slots: one per 64 bytes of text, a power of two from 256 to ST_CACHE_MAX_SLOTS (16384 was
 * 9-11% faster than 4096 on a megabyte of Russian or Arabic; a short text must not pay for
 * clearing a large table). */
#ifndef ST_CACHE_MAX_SLOTS
#define ST_CACHE_MAX_SLOTS 16384
#endif
#define ST_CACHE_MAX_TOKENS 8
#ifndef ST_CACHE_MIN_TEXT
#define ST_CACHE_MIN_TEXT 8192 /* below this the caches cost more than they save */
#endif

typedef struct cache_entry {
    uint64_t hash; /* 0 = empty */
    uint32_t start;
    uint8_t len, ntok;
    uint8_t rel[ST_CACHE_MAX_TOKENS]; /* token starts relative to the piece */
    uint32_t tok[ST_CACHE_MAX_TOKENS];
} cache_entry;

typedef struct encoder {
    const st_encoding *enc;
    const uint8_t *text;
    size_t text_len;
    sink *o;
    cache_entry *cache; /* NULL when not used */
    size_t cache_slots;
    pair_slot *pairs;   /* NULL when not used */
    uint64_t *memo;     /* pair compatibility for the backtracking encoder, made on first use */
    int memo_tried;
} encoder;

/* The compatibility memo, for texts long enough to repay it; NULL otherwise. */
static uint64_t *memo_of(encoder *e) {
    if (!e->memo_tried && e->text_len >= ST_CACHE_MIN_TEXT) {
        e->memo_tried = 1;
        e->memo = (uint64_t *)st__alloc(&e->enc->alloc, ST_BT_MEMO_SLOTS * sizeof(uint64_t));
        if (e->memo) st__memset(e->memo, 0xFF, ST_BT_MEMO_SLOTS * sizeof(uint64_t));
    }
    return e->memo;
}

/* The piece cache's entry for p[0..n) at text offset a: replays a hit into the output and
 * returns NULL; else returns the entry to fill (NULL when the cache is off). */
static cache_entry *cache_find(encoder *e, const uint8_t *p, size_t n, size_t a, uint64_t *h, int *hit) {
    *hit = 0;
    if (!e->cache || n >= 256) return NULL;
    *h = st__hash_bytes(p, n) | 1;
    cache_entry *ce = &e->cache[(*h >> 20) & (e->cache_slots - 1)];
    if (ce->hash == *h && ce->len == n && st__memcmp(e->text + ce->start, p, n) == 0) {
        for (size_t k = 0; k < ce->ntok; k++) put(e->o, ce->tok[k], a + ce->rel[k]);
        *hit = 1;
        return NULL;
    }
    return ce;
}

/* ---- merge-rules models (st_encoding_new_merges) ------------------------------------------- */

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

static st_status encode_piece_rules(encoder *e, size_t a, size_t b) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *p = e->text + a;
    size_t n = b - a;
    uint64_t h = 0;
    int hit;
    cache_entry *ce = cache_find(e, p, n, a, &h, &hit);
    if (hit) return ST_OK;
    if (n > 0x7FFFFFF0u) return ST_ERR_INVALID_ARGUMENT;
    /* symbols, their offsets, the final tokens and starts, the merge scratch */
    size_t size = 4 * n * sizeof(uint32_t) + merge_scratch_size(n);
    uint64_t stack[(4 * ST_STACK_PIECE + 1) / 2 + (3 * ST_STACK_PIECE + 1) + (4 * (ST_STACK_PIECE + 1) + 1) / 2];
    uint8_t *mem = n <= ST_STACK_PIECE ? (uint8_t *)stack : (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    uint64_t *scratch = (uint64_t *)(void *)mem;
    uint32_t *sym = (uint32_t *)(void *)(mem + merge_scratch_size(n)), *off = sym + n, *tok = off + n, *start = tok + n;
    size_t ns = piece_symbols(v->alphabet, p, n, sym, off);
    size_t m = merge_heap(v, NULL, NULL, sym, ns, tok, start, scratch);
    for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + off[start[k]]);
    if (ce && m <= ST_CACHE_MAX_TOKENS) {
        ce->hash = h;
        ce->start = (uint32_t)a;
        ce->len = (uint8_t)n;
        ce->ntok = (uint8_t)m;
        for (size_t k = 0; k < m; k++) { ce->tok[k] = tok[k]; ce->rel[k] = (uint8_t)off[start[k]]; }
    }
    if (mem != (uint8_t *)stack) st__free(&e->enc->alloc, mem, size);
    return ST_OK;
}

static st_status encode_piece(encoder *e, size_t a, size_t b, size_t *err_offset) {
    const st_vocab *v = &e->enc->vocab;
    if (v->mode == ST_MODE_RULES) return encode_piece_rules(e, a, b);
    const uint8_t *p = e->text + a;
    size_t n = b - a;
    /* the whole piece: usually one token; a short piece with 8 readable bytes takes the
     * one-word path. (The backtracking encoder's first trie walk makes this check itself.) */
    const st_backtrack *bt = wants_backtrack(p, n) ? backtrack_tables(e->enc) : NULL;
    if (!bt) {
        uint32_t id = n <= 8 && e->text_len - a >= 8 ? st__vocab_lookup_short(v, p, n) : st__vocab_lookup(v, p, n);
        if (id != ST_NO_TOKEN) { put(e->o, id, a); return ST_OK; }
    }
    uint64_t h = 0;
    int hit;
    cache_entry *ce = cache_find(e, p, n, a, &h, &hit);
    if (hit) return ST_OK;
    for (size_t k = 0; k < n; k++) /* byte-level vocabularies have all 256; others may not */
        if (v->byte_ids[p[k]] == ST_NO_TOKEN) { st__set_offset(err_offset, a + k); return ST_ERR_NOT_ENCODABLE; }
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
                m = merge_short(v, e->pairs, copy, n, tok, start);
            } else {
                uint64_t scratch[(3 * ST_STACK_PIECE + 1) + (4 * (ST_STACK_PIECE + 1) + 1) / 2];
                m = merge_heap(v, e->pairs, copy, NULL, n, tok, start, scratch);
            }
        }
        for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + start[k]);
        if (ce && m <= ST_CACHE_MAX_TOKENS) {
            ce->hash = h;
            ce->start = (uint32_t)a;
            ce->len = (uint8_t)n;
            ce->ntok = (uint8_t)m;
            for (size_t k = 0; k < m; k++) { ce->tok[k] = tok[k]; ce->rel[k] = (uint8_t)start[k]; }
        }
        return ST_OK;
    }
    if (n > 0x7FFFFFF0u) return ST_ERR_INVALID_ARGUMENT; /* node names are 32-bit offsets */
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
    size_t msz = merge_scratch_size(n);
    size_t size = msz + 2 * n * sizeof(uint32_t) + n + ST_PAD;
    uint8_t *scratch = (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!scratch) return ST_ERR_OUT_OF_MEMORY;
    uint32_t *tok = (uint32_t *)(void *)(scratch + msz), *start = tok + n;
    uint8_t *copy = (uint8_t *)(start + n);
    st__memcpy(copy, p, n);
    st__memset(copy + n, 0, ST_PAD);
    m = merge_heap(v, e->pairs, copy, NULL, n, tok, start, scratch);
    for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + start[k]);
    st__free(&e->enc->alloc, scratch, size);
    return ST_OK;
}

static st_status encode_ordinary(encoder *e, size_t from, size_t to, size_t *err_offset) {
    st__piece_iter it;
    st__pieces_init(&it, &e->enc->pt, e->text + from, to - from);
    size_t start = 0;
    while (it.i < it.len) {
        size_t end = st__pieces_next(&it);
        st_status st = encode_piece(e, from + start, from + end, err_offset);
        if (st != ST_OK) return st;
        start = end;
    }
    return ST_OK;
}

/* The allowed special token matching at s[i..], longest first; ST_NO_TOKEN if none. */
static uint32_t special_at(const st_vocab *v, const uint32_t *allowed, size_t n_allowed, const uint8_t *s,
                           size_t i, size_t len, size_t *match_len) {
    uint32_t best = ST_NO_TOKEN;
    size_t best_len = 0;
    for (size_t k = 0; k < n_allowed; k++) {
        uint32_t id = allowed[k], a, tl;
        if (!st__vocab_span(v, id, &a, &tl)) continue;
        if (tl > best_len && tl <= len - i && st__memcmp(s + i, v->bytes + a, tl) == 0) {
            best = id;
            best_len = tl;
        }
    }
    *match_len = best_len;
    return best;
}

static st_status encode_all(encoder *e, size_t len, const uint32_t *allowed, size_t n_allowed, size_t *err_offset) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *s = e->text;
    uint8_t first[256];
    st__memset(first, 0, sizeof first);
    for (size_t k = 0; k < n_allowed; k++) {
        uint32_t a, tl;
        if (!st__vocab_is_special(v, allowed[k]) || !st__vocab_span(v, allowed[k], &a, &tl)) {
            st__set_offset(err_offset, k);
            return ST_ERR_INVALID_TOKEN;
        }
        first[v->bytes[a]] = 1;
    }
    if (!n_allowed) return encode_ordinary(e, 0, len, err_offset);
    size_t seg = 0;
    for (size_t i = 0; i < len; i++) {
        if (!first[s[i]] || (s[i] & 0xC0) == 0x80) continue; /* matches start on a character */
        size_t ml;
        uint32_t id = special_at(v, allowed, n_allowed, s, i, len, &ml);
        if (id == ST_NO_TOKEN) continue;
        /* and end on one: a loaded special is valid UTF-8, but an image's is trusted for nothing */
        if (i + ml < len && (s[i + ml] & 0xC0) == 0x80) continue;
        st_status st = encode_ordinary(e, seg, i, err_offset);
        if (st != ST_OK) return st;
        put(e->o, id, i);
        i += ml - 1;
        seg = i + 1;
    }
    return encode_ordinary(e, seg, len, err_offset);
}

st_status st_encode(const st_encoding *enc, const char *text, size_t len, const uint32_t *allowed_special,
                    size_t n_allowed, uint32_t *ids, size_t *char_starts, size_t cap, size_t *n_ids,
                    size_t *err_offset) {
    if (!enc || !n_ids || (!text && len) || (!ids && cap) || (!allowed_special && n_allowed))
        return ST_ERR_INVALID_ARGUMENT;
    *n_ids = 0;
    st_status st = st_utf8_validate(text, len, err_offset);
    if (st != ST_OK) return st;
    static const char empty[1] = {0};
    if (!text) text = empty; /* len is 0: no arithmetic on a NULL pointer below */
    sink o = {ids, char_starts, cap, 0, (const uint8_t *)text, 0, 0};
    encoder e = {enc, (const uint8_t *)text, len, &o, NULL, 256, NULL, NULL, 0};
    while (e.cache_slots < ST_CACHE_MAX_SLOTS && e.cache_slots * 64 < len) e.cache_slots *= 2;
    size_t cache_size = e.cache_slots * sizeof(cache_entry);
    size_t pairs_size = ((size_t)1 << ST_PAIR_CACHE_BITS) * sizeof(pair_slot);
    if (len >= ST_CACHE_MIN_TEXT && len <= 0xFFFFFFFFu) { /* without memory it runs uncached */
        e.cache = (cache_entry *)st__alloc(&enc->alloc, cache_size);
        if (e.cache) st__memset(e.cache, 0, cache_size);
        e.pairs = (pair_slot *)st__alloc(&enc->alloc, pairs_size);
        if (e.pairs) st__memset(e.pairs, 0xFF, pairs_size); /* left = ST_NO_TOKEN: empty */
    }
    st = encode_all(&e, len, allowed_special, n_allowed, err_offset);
    if (e.cache) st__free(&enc->alloc, e.cache, cache_size);
    if (e.pairs) st__free(&enc->alloc, e.pairs, pairs_size);
    if (e.memo) st__free(&enc->alloc, e.memo, ST_BT_MEMO_SLOTS * sizeof(uint64_t));
    *n_ids = o.n;
    if (st != ST_OK) return st;
    return o.n > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK;
}

st_status st_encode_many(const st_encoding *enc, const char *texts, const size_t *offsets, size_t n_texts,
                         const uint32_t *allowed_special, size_t n_allowed, uint32_t *ids, size_t cap, size_t *counts,
                         size_t *n_ids, size_t *err_offset) {
    if (!enc || !n_ids || !offsets || (!counts && n_texts) || (!ids && cap)) return ST_ERR_INVALID_ARGUMENT;
    *n_ids = 0;
    size_t total = 0;
    for (size_t k = 0; k < n_texts; k++) {
        size_t a = offsets[k], b = offsets[k + 1];
        if (b < a || (!texts && b > a)) return ST_ERR_INVALID_ARGUMENT;
        size_t n = 0, off = 0;
        size_t room = total < cap ? cap - total : 0;
        st_status st = st_encode(enc, texts ? texts + a : NULL, b - a, allowed_special, n_allowed,
                                 room ? ids + total : NULL, NULL, room, &n, &off);
        if (st != ST_OK && st != ST_ERR_BUFFER_TOO_SMALL) {
            st__set_offset(err_offset, st == ST_ERR_INVALID_TOKEN ? off : a + off);
            return st;
        }
        counts[k] = n;
        total += n;
    }
    *n_ids = total;
    return total > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK;
}

st_status st_encode_count(const st_encoding *enc, const char *text, size_t len, const uint32_t *allowed_special,
                          size_t n_allowed, size_t *n_tokens, size_t *err_offset) {
    st_status st = st_encode(enc, text, len, allowed_special, n_allowed, NULL, NULL, 0, n_tokens, err_offset);
    return st == ST_ERR_BUFFER_TOO_SMALL ? ST_OK : st;
}

/* ---- decoding ------------------------------------------------------------------------------ */

st_status st_token_bytes(const st_encoding *enc, uint32_t id, const uint8_t **ptr, size_t *len) {
    if (!enc || !ptr || !len) return ST_ERR_INVALID_ARGUMENT;
    const st_vocab *v = &enc->vocab;
    uint32_t a, tl;
    if (!st__vocab_span(v, id, &a, &tl)) return ST_ERR_INVALID_TOKEN;
    *ptr = v->bytes + a;
    *len = tl;
    return ST_OK;
}

st_status st_decode(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                    size_t *out_len, size_t *err_offset) {
    if (!enc || !out_len || (!ids && n) || (!out && cap)) return ST_ERR_INVALID_ARGUMENT;
    const st_vocab *v = &enc->vocab;
    if (v->alphabet == ST_ALPHABET_UBE) return ST_ERR_INVALID_ARGUMENT; /* symbols: st_decode_text */
    size_t total = 0;
    *out_len = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t a, tl;
        if (!st__vocab_span(v, ids[k], &a, &tl)) {
            st__set_offset(err_offset, k);
            return ST_ERR_INVALID_TOKEN;
        }
        if (total + tl <= cap) st__memcpy(out + total, v->bytes + a, tl);
        total += tl;
    }
    *out_len = total;
    return total > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK;
}

/* ---- the handle ---------------------------------------------------------------------------- */

/* A new handle with its allocator and pre-tokenizer; the caller loads the vocabulary, then
 * hands it out (or frees it) with encoding_finish. */
static st_status encoding_start(const st_allocator *alloc, int pattern, st_encoding **enc, size_t *err_offset) {
    st_allocator a;
    st__allocator_init(&a, alloc);
    *enc = (st_encoding *)st__alloc(&a, sizeof **enc);
    if (!*enc) return ST_ERR_OUT_OF_MEMORY;
    st__memset(*enc, 0, sizeof **enc);
    (*enc)->alloc = a;
    st_status st = st__pretokenizer_init(&(*enc)->pt, pattern, 0, "", 0, err_offset);
    if (st != ST_OK) {
        st__free(&a, *enc, sizeof **enc);
        *enc = NULL;
    }
    return st;
}

static st_status encoding_finish(st_encoding *enc, st_status st, int in_specials, int *err_in_specials,
                                 st_encoding **out) {
    if (st != ST_OK) {
        if (err_in_specials) *err_in_specials = in_specials;
        st_allocator a = enc->alloc;
        st__free(&a, enc, sizeof *enc);
        return st;
    }
    *out = enc;
    return ST_OK;
}

st_status st_encoding_new_tiktoken(const char *ranks, size_t ranks_len, const char *specials, size_t specials_len,
                                   int pattern, const st_allocator *alloc, st_encoding **out, size_t *err_offset,
                                   int *err_in_specials) {
    int in_specials = 0;
    if (err_in_specials) *err_in_specials = 0;
    if (!out || (!ranks && ranks_len) || (!specials && specials_len)) return ST_ERR_INVALID_ARGUMENT;
    *out = NULL;
    st_encoding *enc;
    st_status st = encoding_start(alloc, pattern, &enc, err_offset);
    if (st != ST_OK) return st;
    st = st__vocab_parse_tiktoken(&enc->vocab, &enc->alloc, ranks, ranks_len, specials, specials_len, err_offset,
                                  &in_specials);
    return encoding_finish(enc, st, in_specials, err_in_specials, out);
}

st_status st_encoding_new_merges(int alphabet, const uint32_t *merges, size_t n_merges, const char *specials,
                                 size_t specials_len, int pattern, const st_allocator *alloc, st_encoding **out,
                                 size_t *err_offset, int *err_in_specials) {
    int in_specials = 0;
    if (err_in_specials) *err_in_specials = 0;
    if (!out || (!merges && n_merges) || (!specials && specials_len)) return ST_ERR_INVALID_ARGUMENT;
    *out = NULL;
    st_encoding *enc;
    st_status st = encoding_start(alloc, pattern, &enc, err_offset);
    if (st != ST_OK) return st;
    enc->bt_state = BT_UNAVAILABLE; /* backtracking follows ranks, not rules */
    st = st__vocab_from_merges(&enc->vocab, &enc->alloc, alphabet, merges, n_merges, specials, specials_len,
                               err_offset, &in_specials);
    return encoding_finish(enc, st, in_specials, err_in_specials, out);
}

st_status st_encoding_prepare(const st_encoding *enc) {
    if (!enc) return ST_ERR_INVALID_ARGUMENT;
    int state = st__atomic_load(&enc->bt_state);
    if (state == BT_UNAVAILABLE) return enc->bt_failed ? ST_ERR_OUT_OF_MEMORY : ST_ERR_INVALID_ARGUMENT;
    if (backtrack_tables(enc) || st__atomic_load(&enc->bt_state) == BT_BUILDING) return ST_OK;
    return enc->bt_failed ? ST_ERR_OUT_OF_MEMORY : ST_ERR_INVALID_ARGUMENT;
}

int st_encoding_alphabet(const st_encoding *enc) { return enc ? (int)enc->vocab.alphabet : ST_ALPHABET_BYTES; }

st_status st_token_symbols(const st_encoding *enc, uint32_t id, uint16_t *out, size_t cap, size_t *n) {
    if (!enc || !n || (!out && cap)) return ST_ERR_INVALID_ARGUMENT;
    const st_vocab *v = &enc->vocab;
    uint32_t a, len;
    *n = 0;
    if (!st__vocab_span(v, id, &a, &len) || st__vocab_is_special(v, id)) return ST_ERR_INVALID_TOKEN;
    size_t count = v->alphabet == ST_ALPHABET_UBE ? len / 2 : len;
    for (size_t k = 0; k < count && k < cap; k++)
        out[k] = v->alphabet == ST_ALPHABET_UBE ? (uint16_t)(v->bytes[a + 2 * k] | (v->bytes[a + 2 * k + 1] << 8))
                                                : v->bytes[a + k];
    *n = count;
    return count > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK;
}

/* Appends data to out[0..cap), counting past cap. */
static void append(uint8_t *out, size_t cap, size_t *total, const uint8_t *data, size_t len) {
    if (*total < cap) st__memcpy(out + *total, data, len <= cap - *total ? len : cap - *total);
    *total += len;
}

/* The index of the id whose symbols hold symbol number sym (specials hold none). */
static size_t id_of_symbol(const st_vocab *v, const uint32_t *ids, size_t n, size_t sym) {
    size_t seen = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t a, len;
        if (!st__vocab_span(v, ids[k], &a, &len) || st__vocab_is_special(v, ids[k])) continue;
        seen += v->alphabet == ST_ALPHABET_UBE ? len / 2 : len;
        if (sym < seen) return k;
    }
    return n;
}

st_status st_decode_text(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t flags, uint8_t *out,
                         size_t cap, size_t *out_len, size_t *err_offset) {
    if (!enc || !out_len || (!ids && n) || (!out && cap)) return ST_ERR_INVALID_ARGUMENT;
    const st_vocab *v = &enc->vocab;
    uint32_t strict = flags & ST_UBE_STRICT;
    st_ube_stream s;
    st_ube_stream_init(&s);
    uint16_t sym[160];
    uint8_t buf[3 * 160 + 3]; /* what feeding 160 symbols can give, a flush included */
    size_t total = 0, got, eo = 0;
    st_status st;
    *out_len = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t a, len;
        if (!st__vocab_span(v, ids[k], &a, &len)) {
            st__set_offset(err_offset, k);
            return ST_ERR_INVALID_TOKEN;
        }
        if (st__vocab_is_special(v, ids[k])) { /* flush, then the special's own text */
            st = st_ube_stream_feed(&s, NULL, 0, ST_UBE_FINAL | strict, buf, sizeof buf, &got, &eo);
            if (st != ST_OK) goto malformed;
            append(out, cap, &total, buf, got);
            append(out, cap, &total, v->bytes + a, len);
            continue;
        }
        size_t count = v->alphabet == ST_ALPHABET_UBE ? len / 2 : len;
        for (size_t done = 0; done < count;) {
            size_t c = count - done < 160 ? count - done : 160;
            for (size_t j = 0; j < c; j++) {
                size_t at = a + (v->alphabet == ST_ALPHABET_UBE ? 2 * (done + j) : done + j);
                sym[j] = v->alphabet == ST_ALPHABET_UBE ? (uint16_t)(v->bytes[at] | (v->bytes[at + 1] << 8)) : v->bytes[at];
            }
            st = st_ube_stream_feed(&s, sym, c, strict, buf, sizeof buf, &got, &eo);
            if (st != ST_OK) goto malformed;
            append(out, cap, &total, buf, got);
            done += c;
        }
    }
    st = st_ube_stream_feed(&s, NULL, 0, ST_UBE_FINAL | strict, buf, sizeof buf, &got, &eo);
    if (st != ST_OK) goto malformed;
    append(out, cap, &total, buf, got);
    *out_len = total;
    return total > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK;
malformed: /* strict mode: the symbol index where the malformed run starts, as an id index */
    st__set_offset(err_offset, st == ST_ERR_INVALID_UTF8 ? id_of_symbol(v, ids, n, eo) : eo);
    return st;
}

void st_encoding_free(st_encoding *enc) {
    if (!enc) return;
    st_allocator a = enc->alloc;
    st__backtrack_free(&enc->bt, &a);
    st__vocab_free(&enc->vocab, &a);
    st__free(&a, enc, sizeof *enc);
}

st_status st_encoding_save_image(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size) {
    if (!enc || !size || (!out && cap) || enc->vocab.mode != ST_MODE_RANKS) return ST_ERR_INVALID_ARGUMENT;
    *size = st__vocab_image_size(&enc->vocab);
    if (*size > cap) return ST_ERR_BUFFER_TOO_SMALL;
    st__vocab_image_write(&enc->vocab, (uint32_t)enc->pt.pattern, out);
    return ST_OK;
}

st_status st_encoding_from_image(const void *image, size_t len, const st_allocator *alloc, st_encoding **out,
                                 size_t *err_offset) {
    if (!out || !image) return ST_ERR_INVALID_ARGUMENT;
    *out = NULL;
    st_allocator a;
    st__allocator_init(&a, alloc);
    st_encoding *enc = (st_encoding *)st__alloc(&a, sizeof *enc);
    if (!enc) return ST_ERR_OUT_OF_MEMORY;
    st__memset(enc, 0, sizeof *enc);
    enc->alloc = a;
    enc->bt_state = BT_UNAVAILABLE;
    uint32_t pattern = 0;
    st_status st = st__vocab_image_borrow(&enc->vocab, (const uint8_t *)image, len, &pattern, err_offset);
    if (st == ST_OK) {
        st = st__pretokenizer_init(&enc->pt, (int)pattern, 0, "", 0, err_offset);
        if (st != ST_OK) { st__set_offset(err_offset, 12); st = ST_ERR_MALFORMED_MODEL; }
    }
    if (st != ST_OK) {
        st__free(&a, enc, sizeof *enc);
        return st;
    }
    *out = enc;
    return ST_OK;
}

uint32_t st_encoding_n_vocab(const st_encoding *enc) { return enc ? enc->vocab.n_ids : 0; }
uint32_t st_encoding_n_special(const st_encoding *enc) { return enc ? enc->vocab.n_special : 0; }
uint32_t st_encoding_special_id(const st_encoding *enc, uint32_t i) {
    return enc && i < enc->vocab.n_special ? enc->vocab.special_ids[i] : ST_NO_TOKEN;
}
