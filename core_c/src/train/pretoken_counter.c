/* Pretoken counting (docs/design.md §8): documents are pre-tokenized and each distinct
 * pretoken is kept once, with a 64-bit count, in an open-addressing table whose keys live in one
 * byte arena. Counters merge and serialize (docs/formats/train-format.md), so a host counts on many
 * threads or machines and the sum, and every model trained from it, is the same for any split. */
#include "pretoken_counter.h"
#include "candidates.h"
#include "../base/hash.h"
#include "../text/utf8.h"

#define LOAD_NUM 7 /* grow when entries exceed 7/10 of the slots */
#define LOAD_DEN 10
#define MIN_SLOTS 1024u

static const uint8_t magic[8] = {'s', 't', 'c', 'o', 'u', 'n', 't', 's'};
#define FORMAT_VERSION 1u
#define HEADER_SIZE 84u /* magic, version, pattern, flags, scripts bitset (32), 4 stats */
#define CAND_VERSION 2u      /* a candidates counter's file */
#define CAND_HEADER_SIZE 132u /* version 1's header, then kind, algorithm, alphabet, n-gram max_len,
                                supermerges, fingerprint, n-gram c_min, kept merges */
#define ENTRY_HEAD 12u  /* u32 length, u64 count */

int st__pretokenizers_equal(const struct st_pretokenizer *a, const struct st_pretokenizer *b) {
    if (a->pattern != b->pattern || a->flags != b->flags) return 0;
    if (!(a->flags & ST_PRETOK_SCRIPT_AWARE)) return 1; /* the script list is not used */
    return st__memcmp(a->single_letter_scripts, b->single_letter_scripts, sizeof a->single_letter_scripts) == 0;
}

st_status st_counter_new(int pattern, uint32_t flags, const char *scripts, size_t scripts_len,
                         const st_allocator *alloc, st_counter **out, st_error *err) {
    st__error_clear(err);
    if (!out || (!scripts && scripts_len))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "out is NULL, or scripts NULL with a length");
    *out = NULL;
    st_allocator a;
    st__allocator_init(&a, alloc);
    st_counter *c = (st_counter *)st__alloc(&a, sizeof *c);
    if (!c) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(c, 0, sizeof *c);
    c->alloc = a;
    st_status st = st__pretokenizer_init(&c->pt, pattern, flags, scripts, scripts_len, err);
    if (st != ST_OK) {
        st__free(&a, c, sizeof *c);
        return st;
    }
    c->pt.alloc = a;
    *out = c;
    return ST_OK;
}

static void counter_empty(st_counter *c);

void st_counter_free(st_counter *c) {
    if (!c) return;
    st_allocator a = c->alloc;
    counter_empty(c);
    st__cand_free(c->cand, &a);
    st__free(&a, c, sizeof *c);
}

/* The slots s (mask + 1, empty) filled from the entries, each key hashed again. */
static void index_entries(const st_counter *c, uint64_t *s, size_t mask) {
    for (size_t i = 0; i < c->n; i++) {
        const st__count_entry *e = &c->entries[i];
        uint64_t h = st__hash_bytes(st__entry_key(c->arena, e), st__entry_len(c->arena, e));
        size_t k = (size_t)(h >> 32) & mask;
        while (s[k]) k = (k + 1) & mask;
        s[k] = (h & 0xFFFFFFFF00000000ull) | (uint64_t)(i + 1);
    }
}

/* Rebuild the slot table with nslots slots (a power of two). A slot's place comes from the high
 * half of the key's hash, which the slot keeps beside the entry number: growing the table reads
 * the old slots alone, no entry and no key; with no table (st__counter_drop_index) the keys are
 * hashed again. */
static int rehash(st_counter *c, size_t nslots) {
    uint64_t *s = (uint64_t *)st__alloc(&c->alloc, nslots * sizeof *s);
    if (!s) return 0;
    st__memset(s, 0, nslots * sizeof *s);
    size_t mask = nslots - 1;
    if (c->slots) {
        for (size_t j = 0; j <= c->mask; j++) {
            uint64_t v = c->slots[j];
            if (!v) continue;
            size_t k = (size_t)(v >> 32) & mask;
            while (s[k]) k = (k + 1) & mask;
            s[k] = v;
        }
    } else {
        index_entries(c, s, mask);
    }
    if (c->slots) st__free(&c->alloc, c->slots, (c->mask + 1) * sizeof *c->slots);
    c->slots = s;
    c->mask = mask;
    return 1;
}

static int reserve_entries(st_counter *c, size_t need) {
    if (need <= c->cap) return 1;
    size_t cap = c->cap ? c->cap * 2 : 256;
    while (cap < need) cap *= 2;
    if (cap > 0xFFFFFFFEu) cap = 0xFFFFFFFEu; /* entry numbers are 32-bit in the slots */
    if (need > cap) return 0;
    st__count_entry *e = (st__count_entry *)st__realloc_grow(&c->alloc, c->entries, &c->cap, cap, 0xFFFFFFFEu,
                                                              sizeof *e);
    if (!e) return 0;
    c->entries = e;
    return 1;
}

static int reserve_arena(st_counter *c, size_t extra) {
    if (extra <= c->arena_cap - c->arena_len) return 1;
    size_t cap = c->arena_cap ? c->arena_cap * 2 : 65536;
    while (cap - c->arena_len < extra) cap *= 2;
    /* resized in place where the allocator can: the arena is the counter's largest block, and a
     * copy would hold it twice at the peak */
    uint8_t *a = (uint8_t *)st__realloc_grow(&c->alloc, c->arena, &c->arena_cap, cap, (size_t)-1, 1);
    if (!a) return 0;
    c->arena = a;
    return 1;
}

/* The slot index of a counter that has entries but none (st__counter_drop_index), rebuilt. */
static int reindex(st_counter *c) {
    size_t nslots = MIN_SLOTS;
    while ((c->n + 1) * LOAD_DEN > nslots * LOAD_NUM) nslots *= 2;
    return rehash(c, nslots);
}

void st__counter_drop_index(st_counter *c) {
    st__free(&c->alloc, c->slots, (c->mask + 1) * sizeof *c->slots);
    c->slots = NULL;
    c->mask = 0;
}

/* Add count occurrences of the pretoken p[0..n) whose hash is h; returns its entry + 1, or 0
 * when out of memory (nothing changed). */
static size_t add_piece(st_counter *c, const uint8_t *p, size_t n, uint64_t h, uint64_t count) {
    if (!c->slots && c->n && !reindex(c)) return 0;
    uint64_t tag = h & 0xFFFFFFFF00000000ull;
    size_t k = (size_t)(h >> 32) & c->mask;
    if (c->slots) {
        for (;;) {
            uint64_t s = c->slots[k];
            if (!s) break;
            if ((s & 0xFFFFFFFF00000000ull) == tag) {
                st__count_entry *e = &c->entries[(uint32_t)s - 1];
                if (st__entry_len(c->arena, e) == n && st__bytes_equal(st__entry_key(c->arena, e), p, n)) {
                    e->count += count;
                    return (uint32_t)s;
                }
            }
            k = (k + 1) & c->mask;
        }
    }
    /* a new pretoken */
    if (!c->slots || (c->n + 1) * LOAD_DEN > (c->mask + 1) * LOAD_NUM) {
        size_t nslots = c->slots ? (c->mask + 1) * 2 : MIN_SLOTS;
        if (!rehash(c, nslots)) return 0;
        k = (size_t)(h >> 32) & c->mask;
        while (c->slots[k]) k = (k + 1) & c->mask;
    }
    size_t prefix = n >= ST__KEY_LONG ? 4 : 0; /* a long key's record holds its length first */
    if (n > 0xFFFFFFFFu || (uint64_t)c->arena_len + prefix + n > ST__ARENA_MAX || !reserve_entries(c, c->n + 1) ||
        !reserve_arena(c, prefix + n))
        return 0;
    st__count_entry *e = &c->entries[c->n];
    e->count = count;
    e->loc = (uint64_t)c->arena_len << 24 | (prefix ? ST__KEY_LONG : (uint64_t)n);
    if (prefix) st__put_le32(c->arena + c->arena_len, (uint32_t)n);
    st__memcpy(c->arena + c->arena_len + prefix, p, n);
    c->arena_len += prefix + n;
    c->n++;
    c->slots[k] = tag | (uint64_t)c->n;
    c->stats[ST_COUNTER_UNIQUE] = c->n;
    return c->n;
}

size_t st__counter_add_key(st_counter *c, const uint8_t *p, size_t n, uint64_t h, uint64_t count) {
    return add_piece(c, p, n, h, count);
}

/* 1 if the pretoken p[0..n) is eligible for supermerges (a letter, and the symbols of a token of
 * the candidates' vocabulary), 0 if not, -1 when out of memory. */
static int eligible(st_counter *c, const uint8_t *p, size_t n) {
    if (!st__has_letter(p, n)) return 0;
    int oom = 0;
    uint32_t id = st__tokset_find(&c->cand->toks, &c->alloc, p, n, &oom);
    return oom ? -1 : id != ST__NO_TOKEN_ID;
}

/* Room for need bytes in the key buffer (its contents kept); 0 when out of memory. */
static int grow_key(st_counter *c, size_t need) {
    st__cand *cd = c->cand;
    size_t cap = cd->key_cap ? cd->key_cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *k = (uint8_t *)st__alloc(&c->alloc, cap);
    if (!k) return 0;
    if (cd->key) {
        st__memcpy(k, cd->key, cd->key_cap);
        st__free(&c->alloc, cd->key, cd->key_cap);
    }
    cd->key = k;
    cd->key_cap = cap;
    return 1;
}

/* A candidates counter's document: the maximal runs of two or more eligible pretokens, each
 * counted once, keyed by their bytes joined with 0xFF. The pieces are walked as count_document
 * walks them, and a small cache of short pretokens keeps most eligibility tests to one hash. */
/* A short-piece cache pays once the counter has seen some text, this document's len bytes
 * included: clearing it costs a small corpus more than it saves (seconds under an interpreter
 * such as pywasm). */
static int hot_due(const st_counter *c, size_t len) { return c->stats[ST_COUNTER_BYTES] + len >= ((uint64_t)1 << 16); }

/* size zeroed bytes, or NULL when out of memory. */
static void *zalloc(st_counter *c, size_t size) {
    void *p = st__alloc(&c->alloc, size);
    if (p) st__memset(p, 0, size);
    return p;
}

/* ST_ERR_INVALID_ARGUMENT, kind ST_KIND_OUT_OF_ORDER: a candidates counter given back to its
 * trainer takes nothing more (its counts are in the trainer's pass already). */
static st_status given_back(st_error *err) {
    st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                  "the candidates counter was given back to its trainer (st_trainer_candidates_add): it takes "
                  "nothing more");
    st__error_kind(err, ST_KIND_OUT_OF_ORDER, 0);
    return ST_ERR_INVALID_ARGUMENT;
}

/* A piece of 1-8 bytes at p (avail bytes readable there) as one word *w, and its hash (st__hash_bytes's
 * for 1-8 bytes): the key of the counters' hot caches. */
ST_INLINE uint64_t short_key(const uint8_t *p, size_t n, size_t avail, uint64_t *w) {
    if (avail >= 8) *w = st__load_le64(p) & (n == 8 ? ~0ull : (1ull << (8 * n)) - 1);
    else {
        *w = 0;
        for (size_t q = 0; q < n; q++) *w |= (uint64_t)p[q] << (8 * q);
    }
    return st__mix64((ST_HASH_SEED ^ ((uint64_t)n * ST_HASH_LEN)) ^ *w);
}

/* Pieces the pre-tokenizer hands the counter at a time (their ends, on the stack). */
#define ST__COUNT_BATCH 128

/* The end of a run of eligible pretokens (key[0..kl), run of them): counted as one candidate
 * when it has two or more; at: where the run ends in the document (for the error). */
static st_status end_run(st_counter *c, const uint8_t *key, size_t kl, size_t run, size_t at, uint64_t *found,
                         st_error *err) {
    if (run < 2) return ST_OK;
    if (ST_UNLIKELY(kl > 0xFFFFFFFFu))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, at, "a candidate longer than 4 GiB");
    if (!add_piece(c, key, kl, st__hash_bytes(key, kl), 1))
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    (*found)++;
    return ST_OK;
}

static st_status count_candidates(st_counter *c, const uint8_t *s, size_t len, st_error *err) {
    st__cand *cd = c->cand;
    if (cd->given_back) return given_back(err);
    if (!cd->toks.slots)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "a split candidates counter counts no more documents (split after counting)");
    if (!cd->hot && hot_due(c, len) && !(cd->hot = (st__cand_hot *)zalloc(c, sizeof(st__cand_hot) << ST__CAND_HOT_BITS)))
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__piece_iter it;
    st__pieces_init(&it, &c->pt, s, len);
    size_t start = 0, kl = 0, run = 0;
    uint64_t found = 0;
    size_t ends[ST__COUNT_BATCH];
    while (it.i < len) {
        size_t m = st__pieces_fill(&it, ends, ST__COUNT_BATCH);
        for (size_t k = 0; k < m; k++) {
            size_t e = ends[k];
            const uint8_t *p = s + start;
            size_t n = e - start;
            int el;
            if (n <= 8 && cd->hot) {
                uint64_t w, h = short_key(p, n, len - start, &w);
                st__cand_hot *hc = &cd->hot[h >> (64 - ST__CAND_HOT_BITS)];
                if (hc->len == n && hc->word == w) el = (int)hc->eligible;
                else {
                    el = eligible(c, p, n);
                    hc->word = w;
                    hc->len = (uint32_t)n;
                    hc->eligible = (uint32_t)(el > 0);
                }
            } else el = eligible(c, p, n);
            if (el < 0) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
            if (el) {
                if (kl + n + 1 > cd->key_cap && !grow_key(c, kl + n + 1))
                    return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
                uint8_t *key = cd->key;
                if (run) key[kl++] = ST__CAND_SEP;
                st__memcpy(key + kl, p, n);
                kl += n;
                run++;
            } else { /* the run ends at an ineligible pretoken */
                st_status st = end_run(c, cd->key, kl, run, start, &found, err);
                if (st != ST_OK) return st;
                run = 0;
                kl = 0;
            }
            start = e;
        }
    }
    st_status st = end_run(c, cd->key, kl, run, start, &found, err); /* the document's end */
    if (st != ST_OK) return st;
    c->stats[ST_COUNTER_DOCUMENTS]++;
    c->stats[ST_COUNTER_BYTES] += len;
    c->stats[ST_COUNTER_PRETOKENS] += found;
    return ST_OK;
}

/* Count the pieces of one validated document, a batch of piece ends at a time (st__pieces_fill:
 * the ASCII block scanners of o200k, cl100k, llama3 and qwen2 where the build has them). */
static st_status count_document(st_counter *c, const uint8_t *s, size_t len, st_error *err) {
    if (c->cand) return count_candidates(c, s, len, err);
    if (!c->hot && hot_due(c, len) && !(c->hot = (st__count_hot *)zalloc(c, sizeof(st__count_hot) << ST__HOT_BITS)))
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__piece_iter it;
    st__pieces_init(&it, &c->pt, s, len);
    size_t start = 0;
    uint64_t pieces = 0;
    size_t ends[ST__COUNT_BATCH];
    while (it.i < len) {
        size_t m = st__pieces_fill(&it, ends, ST__COUNT_BATCH);
        for (size_t k = 0; k < m; k++) {
            size_t e = ends[k];
            const uint8_t *p = s + start;
            size_t n = e - start;
            if (n <= 8) {
                uint64_t w, h = short_key(p, n, len - start, &w);
                if (!c->hot) {
                    if (!add_piece(c, p, n, h, 1))
                        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
                } else {
                    st__count_hot *hc = &c->hot[h >> (64 - ST__HOT_BITS)];
                    if (hc->len == n && hc->word == w) {
                        c->entries[hc->entry].count++;
                    } else {
                        size_t id = add_piece(c, p, n, h, 1);
                        if (!id) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
                        hc->word = w;
                        hc->len = (uint32_t)n;
                        hc->entry = (uint32_t)(id - 1);
                    }
                }
            } else {
                if (ST_UNLIKELY(n > 0xFFFFFFFFu))
                    return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, start,
                                         "a pretoken longer than 4 GiB");
                if (!add_piece(c, p, n, st__hash_bytes(p, n), 1))
                    return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
            }
            pieces++;
            start = e;
        }
    }
    c->stats[ST_COUNTER_DOCUMENTS]++;
    c->stats[ST_COUNTER_BYTES] += len;
    c->stats[ST_COUNTER_PRETOKENS] += pieces;
    return ST_OK;
}

/* The end of the line starting at i: after its '\n', or len. */
static size_t line_end(const uint8_t *s, size_t i, size_t len) {
    size_t e = st__find_byte(s, i, len, '\n');
    return e < len ? e + 1 : len;
}

static uint64_t line_of(const uint8_t *s, size_t off) {
    uint64_t line = 1;
    for (size_t i = 0; i < off; i++) line += s[i] == '\n';
    return line;
}

/* Out of memory part-way leaves what was counted so far: the counter is then only good for
 * st_counter_free (documented in supertok.h's spirit: an allocation failure is not recoverable). */
st_status st_counter_add(st_counter *c, const char *text, size_t len, uint32_t flags, st_error *err) {
    st__error_clear(err);
    if (!c || (!text && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter or text is NULL");
    if (flags & ~ST_COUNT_LINES) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags");
    const uint8_t *s = (const uint8_t *)text;
    /* validate first, so nothing of the call is counted when the text is bad */
    st_error local;
    st_status st = st_utf8_validate(text, len, err ? err : &local);
    if (st != ST_OK) {
        if (flags & ST_COUNT_LINES) st__error_line(err, line_of(s, (size_t)(err ? err : &local)->offset), 0);
        return st;
    }
    if (!(flags & ST_COUNT_LINES)) return count_document(c, s, len, err);
    size_t i = 0;
    while (i < len) {
        size_t e = line_end(s, i, len);
        st = count_document(c, s + i, e - i, err);
        if (st != ST_OK) return st;
        i = e;
    }
    return ST_OK;
}

st_status st_counter_add_documents(st_counter *c, const char *texts, const size_t *ends, size_t n_documents,
                                   st_error *err) {
    st__error_clear(err);
    if (!c || (n_documents && (!ends || !texts)))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter, texts or ends is NULL");
    size_t prev = 0;
    for (size_t i = 0; i < n_documents; i++) {
        if (ends[i] < prev) {
            st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "ends must not decrease");
            st__error_line(err, 0, (uint32_t)i);
            return ST_ERR_INVALID_ARGUMENT;
        }
        st_status st = st_utf8_validate(texts + prev, ends[i] - prev, err);
        if (st != ST_OK) {
            st__error_line(err, 0, (uint32_t)i);
            return st;
        }
        prev = ends[i];
    }
    prev = 0;
    for (size_t i = 0; i < n_documents; i++) {
        st_status st = count_document(c, (const uint8_t *)texts + prev, ends[i] - prev, err);
        if (st != ST_OK) return st;
        prev = ends[i];
    }
    return ST_OK;
}

st_status st_counter_add_pretoken(st_counter *c, const char *bytes, size_t len, uint64_t count, st_error *err) {
    st__error_clear(err);
    if (!c || !bytes) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter or bytes is NULL");
    if (len == 0 || len > 0xFFFFFFFFu)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a pretoken is 1 byte to 4 GiB long");
    if (c->cand)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "a candidates counter takes documents, not pretokens");
    if (count == 0) return ST_OK;
    if (c->stats[ST_COUNTER_PRETOKENS] + count < count)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the count would overflow 64 bits");
    st_status st = st_utf8_validate(bytes, len, err);
    if (st != ST_OK) return st;
    const uint8_t *p = (const uint8_t *)bytes;
    if (!add_piece(c, p, len, st__hash_bytes(p, len), count))
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    c->stats[ST_COUNTER_PRETOKENS] += count;
    return ST_OK;
}

static int add_would_overflow(const st_counter *c, uint64_t docs, uint64_t bytes, uint64_t pretokens) {
    return c->stats[ST_COUNTER_DOCUMENTS] + docs < docs || c->stats[ST_COUNTER_BYTES] + bytes < bytes ||
           c->stats[ST_COUNTER_PRETOKENS] + pretokens < pretokens;
}

/* Why from may not be added to into (st_counter_merge's refusals), or ST_OK. */
static st_status merge_refusal(const st_counter *into, const st_counter *from, st_error *err) {
    if (!into || !from) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a counter is NULL");
    if (!st__pretokenizers_equal(&into->pt, &from->pt))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "the counters split text differently (pattern, script-aware or scripts)");
    if (into == from) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "merging a counter into itself");
    if (!into->cand != !from->cand)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "one counter holds pretokens, the other supermerge candidates");
    if (into->cand && !st__cand_compatible(into->cand, from->cand))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "the candidates were made from another vocabulary, algorithm or n-gram split");
    if (into->cand && (into->cand->given_back || from->cand->given_back)) return given_back(err);
    if (add_would_overflow(into, from->stats[0], from->stats[1], from->stats[2]))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the sum would overflow 64 bits");
    return ST_OK;
}

/* Entry i of from added to into (add_piece's result). */
static size_t add_entry(st_counter *into, const st_counter *from, size_t i) {
    const st__count_entry *e = &from->entries[i];
    const uint8_t *p = st__entry_key(from->arena, e);
    size_t len = st__entry_len(from->arena, e);
    return add_piece(into, p, len, st__hash_bytes(p, len), e->count);
}

/* from's statistics added to into's once its entries are (UNIQUE follows into's entries). */
static void add_stats(st_counter *into, const st_counter *from) {
    into->stats[ST_COUNTER_DOCUMENTS] += from->stats[ST_COUNTER_DOCUMENTS];
    into->stats[ST_COUNTER_BYTES] += from->stats[ST_COUNTER_BYTES];
    into->stats[ST_COUNTER_PRETOKENS] += from->stats[ST_COUNTER_PRETOKENS];
}

st_status st_counter_merge(st_counter *into, const st_counter *from, st_error *err) {
    st__error_clear(err);
    st_status st = merge_refusal(into, from, err);
    if (st != ST_OK) return st;
    /* every pretoken count is at most the pretoken total, which does not overflow */
    for (size_t i = 0; i < from->n; i++)
        if (!add_entry(into, from, i)) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    add_stats(into, from);
    return ST_OK;
}

/* A counter's tables and statistics dropped without freeing (they were freed, or moved on). */
static void counter_forget(st_counter *c) {
    c->slots = NULL;
    c->mask = 0;
    c->entries = NULL;
    c->n = c->cap = 0;
    c->arena = NULL;
    c->arena_len = c->arena_cap = 0;
    c->hot = NULL;
    st__memset(c->stats, 0, sizeof c->stats);
}

/* A counter's tables and statistics freed: empty, as when it was made. */
static void counter_empty(st_counter *c) {
    st__free(&c->alloc, c->slots, (c->mask + 1) * sizeof *c->slots);
    st__free(&c->alloc, c->entries, c->cap * sizeof *c->entries);
    st__free(&c->alloc, c->arena, c->arena_cap);
    st__free(&c->alloc, c->hot, sizeof(st__count_hot) << ST__HOT_BITS);
    counter_forget(c);
}

int st__counter_keys_in_order(const st_counter *c) {
    uint64_t end = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (st__entry_start(&c->entries[i]) < end) return 0;
        end = st__entry_end(c->arena, &c->entries[i]);
    }
    return 1;
}

void st__counter_truncate(st_counter *c, size_t n) {
    if (n >= c->n || c->slots) return;
    size_t len = n ? (size_t)st__entry_end(c->arena, &c->entries[n - 1]) : 0;
    c->n = n;
    c->arena_len = len;
    c->stats[ST_COUNTER_UNIQUE] = n;
    if (c->hot) st__memset(c->hot, 0, sizeof(st__count_hot) << ST__HOT_BITS); /* it names entries */
    if (!st__realloc_gives_back(&c->alloc)) return;
    size_t ecap = n ? n : 1, acap = len ? len : 1;
    st__count_entry *e = (st__count_entry *)st__realloc(&c->alloc, c->entries, c->cap * sizeof *e, ecap * sizeof *e);
    if (e) {
        c->entries = e;
        c->cap = ecap;
    }
    uint8_t *a = (uint8_t *)st__realloc(&c->alloc, c->arena, c->arena_cap, acap);
    if (a) {
        c->arena = a;
        c->arena_cap = acap;
    }
}

st_status st__counter_hand_over(st_counter *into, st_counter *from, st_error *err) {
    st__error_clear(err);
    st_status st = merge_refusal(into, from, err);
    if (st != ST_OK) return st;
    if (into->n || into->stats[ST_COUNTER_DOCUMENTS] || into->stats[ST_COUNTER_BYTES] ||
        into->stats[ST_COUNTER_PRETOKENS] || into->alloc.alloc != from->alloc.alloc ||
        into->alloc.free != from->alloc.free || into->alloc.ctx != from->alloc.ctx) {
        if (!st__realloc_gives_back(&from->alloc) || !st__counter_keys_in_order(from)) {
            if ((st = st_counter_merge(into, from, err)) != ST_OK) return st;
            counter_empty(from);
            return ST_OK;
        }
        /* added from the last entry back, from shrunk behind the adding (st__counter_truncate), so
         * that the two are never both whole; out of memory, from keeps exactly the entries not
         * added yet, so into and from still count the texts once between them */
        st__counter_drop_index(from);
        for (size_t i = from->n; i-- > 0;) {
            if (!add_entry(into, from, i)) {
                st__counter_truncate(from, i + 1);
                return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
            }
            if (from->arena_len - st__entry_start(&from->entries[i]) >= ST__COUNTER_GIVE_BACK)
                st__counter_truncate(from, i);
        }
        add_stats(into, from);
        counter_empty(from);
        return ST_OK;
    }
    /* into is empty and both draw on one allocator: the tables change hands, no entry is copied */
    counter_empty(into);
    into->slots = from->slots;
    into->mask = from->mask;
    into->entries = from->entries;
    into->n = from->n;
    into->cap = from->cap;
    into->arena = from->arena;
    into->arena_len = from->arena_len;
    into->arena_cap = from->arena_cap;
    into->hot = from->hot;
    st__memcpy(into->stats, from->stats, sizeof into->stats);
    counter_forget(from);
    return ST_OK;
}

st_status st_counter_prune(st_counter *c, uint64_t min_count, st_error *err) {
    st__error_clear(err);
    if (!c) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the counter is NULL");
    if (c->cand)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "a candidates counter is not pruned: min_count applies to pretoken counts");
    if (min_count <= 1 || !c->n) return ST_OK;
    /* a counter whose index was dropped (st__counter_drop_index) gets one first: the new table
     * below is made the old one's size */
    if (!c->slots && !reindex(c)) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    /* the new slot table first: failing there leaves the counter as it was */
    size_t nslots = c->mask + 1;
    uint64_t *s = (uint64_t *)st__alloc(&c->alloc, nslots * sizeof *s);
    if (!s) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(s, 0, nslots * sizeof *s);
    /* entries are in arena order (each new one is appended to both), so the kept bytes move
     * down in place */
    size_t kept = 0;
    uint64_t arena = 0, dropped = 0;
    for (size_t i = 0; i < c->n; i++) {
        st__count_entry e = c->entries[i];
        if (e.count < min_count) {
            dropped += e.count;
            continue;
        }
        uint64_t start = st__entry_start(&e), bytes = st__entry_end(c->arena, &e) - start; /* a long key's length too */
        if (start != arena) st__memmove(c->arena + arena, c->arena + start, (size_t)bytes);
        e.loc = arena << 24 | (e.loc & ST__KEY_LONG);
        arena += bytes;
        c->entries[kept++] = e;
    }
    c->n = kept;
    index_entries(c, s, c->mask);
    st__free(&c->alloc, c->slots, nslots * sizeof *c->slots);
    c->slots = s;
    c->arena_len = (size_t)arena;
    if (c->hot) st__memset(c->hot, 0, sizeof(st__count_hot) << ST__HOT_BITS); /* it names entries */
    c->stats[ST_COUNTER_PRETOKENS] -= dropped;
    c->stats[ST_COUNTER_UNIQUE] = kept;
    return ST_OK;
}

uint64_t st_counter_stat(const st_counter *c, int what) {
    if (c && what == ST_COUNTER_KIND) return c->cand ? ST_COUNTER_KIND_CANDIDATES : ST_COUNTER_KIND_PRETOKENS;
    if (!c || what < 0 || what > ST_COUNTER_UNIQUE) return 0;
    return c->stats[what];
}

/* ---- save / load (docs/formats/train-format.md) -------------------------------------------------- */


/* Python's bytes order: the common prefix, then the shorter first. */
static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int r = st__memcmp(a, b, an < bn ? an : bn);
    if (r) return r;
    return an < bn ? -1 : an > bn;
}

static int entry_less(const st_counter *c, uint32_t x, uint32_t y) {
    const st__count_entry *a = &c->entries[x], *b = &c->entries[y];
    return cmp_bytes(st__entry_key(c->arena, a), st__entry_len(c->arena, a), st__entry_key(c->arena, b),
                     st__entry_len(c->arena, b)) < 0;
}

/* Bottom-up merge sort of entry numbers by bytes (no recursion, no libc qsort); returns the
 * buffer (idx or tmp) holding the result. */
static uint32_t *sort_entries(const st_counter *c, uint32_t *idx, uint32_t *tmp, size_t n) {
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = entry_less(c, idx[j], idx[i]) ? idx[j++] : idx[i++];
            while (i < mid) tmp[k++] = idx[i++];
            while (j < hi) tmp[k++] = idx[j++];
        }
        uint32_t *t = idx;
        idx = tmp;
        tmp = t;
    }
    return idx;
}

static void write_header(const st_counter *c, uint8_t *h) {
    st__memcpy(h, magic, 8);
    st__put_le32(h + 8, c->cand ? CAND_VERSION : FORMAT_VERSION);
    st__put_le32(h + 12, (uint32_t)c->pt.pattern);
    st__put_le32(h + 16, c->pt.flags);
    for (int w = 0; w < ST_SCRIPT_WORDS; w++)
        st__put_le32(h + 20 + 4 * w, (c->pt.flags & ST_PRETOK_SCRIPT_AWARE) ? c->pt.single_letter_scripts[w] : 0);
    for (int s = 0; s < 4; s++) st__put_le64(h + 52 + 8 * s, c->stats[s]);
    if (!c->cand) return;
    const st__cand *cd = c->cand;
    st__put_le32(h + 84, ST_COUNTER_KIND_CANDIDATES);
    st__put_le32(h + 88, (uint32_t)cd->algorithm);
    st__put_le32(h + 92, (uint32_t)cd->alphabet);
    st__put_le32(h + 96, (uint32_t)cd->ngram_max_len);
    st__put_le64(h + 100, cd->supermerges);
    st__put_le64(h + 108, cd->fingerprint);
    st__put_le64(h + 116, cd->ngram_cmin);
    st__put_le64(h + 124, cd->kept);
}

st_status st_counter_save(const st_counter *c, uint8_t *out, size_t cap, size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!c || !out_len || (!out && cap)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    size_t head = c->cand ? CAND_HEADER_SIZE : HEADER_SIZE;
    size_t size = head + c->n * ENTRY_HEAD + c->arena_len;
    for (size_t i = 0; i < c->n; i++) /* a long key's record holds its length too: not saved there */
        if ((c->entries[i].loc & ST__KEY_LONG) == ST__KEY_LONG) size -= 4;
    *out_len = size;
    if (cap < size) return st__error_status(err, ST_ERR_BUFFER_TOO_SMALL);
    uint32_t *idx = NULL, *tmp = NULL;
    if (c->n) {
        idx = (uint32_t *)st__alloc(&c->alloc, c->n * sizeof *idx);
        tmp = (uint32_t *)st__alloc(&c->alloc, c->n * sizeof *tmp);
        if (!idx || !tmp) {
            st__free(&c->alloc, idx, c->n * sizeof *idx);
            st__free(&c->alloc, tmp, c->n * sizeof *tmp);
            return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        }
        for (size_t i = 0; i < c->n; i++) idx[i] = (uint32_t)i;
    }
    uint32_t *order = c->n ? sort_entries(c, idx, tmp, c->n) : NULL;
    write_header(c, out);
    uint8_t *p = out + head;
    for (size_t i = 0; i < c->n; i++) {
        const st__count_entry *e = &c->entries[order[i]];
        size_t len = st__entry_len(c->arena, e);
        st__put_le32(p, (uint32_t)len);
        st__put_le64(p + 4, e->count);
        st__memcpy(p + ENTRY_HEAD, st__entry_key(c->arena, e), len);
        p += ENTRY_HEAD + len;
    }
    st__free(&c->alloc, idx, c->n * sizeof *idx);
    st__free(&c->alloc, tmp, c->n * sizeof *tmp);
    return ST_OK;
}

static st_status bad(st_error *err, size_t off, const char *what) {
    return st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, off, what);
}

st_status st_counter_load(st_counter *c, const uint8_t *b, size_t len, st_error *err) {
    st__error_clear(err);
    if (!c || (!b && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter or bytes is NULL");
    if (len < 8 || st__memcmp(b, magic, 8) != 0) return bad(err, 0, "not a supertok counts file (magic 'stcounts')");
    if (len < HEADER_SIZE) return bad(err, len, "counts file: the header is cut short (truncated?)");
    uint32_t version = st__get_le32(b + 8);
    if (version != FORMAT_VERSION && version != CAND_VERSION) {
        bad(err, 8, "counts file: format version ");
        st__error_append_u64(err, version);
        st__error_append(err, " is not supported (this core reads versions 1 and 2)");
        return ST_ERR_MALFORMED_MODEL;
    }
    size_t head = version == CAND_VERSION ? CAND_HEADER_SIZE : HEADER_SIZE;
    if (len < head) return bad(err, len, "counts file: the header is cut short (truncated?)");
    st__cand fc; /* version 2: the candidates' parameters */
    st__memset(&fc, 0, sizeof fc);
    if (version == CAND_VERSION) {
        if (st__get_le32(b + 84) != ST_COUNTER_KIND_CANDIDATES) return bad(err, 84, "counts file: version 2 holds candidates (kind 1)");
        fc.algorithm = (int)st__get_le32(b + 88);
        fc.alphabet = (int)st__get_le32(b + 92);
        fc.ngram_max_len = st__get_le32(b + 96);
        fc.supermerges = st__get_le64(b + 100);
        fc.fingerprint = st__get_le64(b + 108);
        fc.ngram_cmin = st__get_le64(b + 116);
        fc.kept = st__get_le64(b + 124);
        if (fc.algorithm != ST_ALGORITHM_BOUNDLESS && fc.algorithm != ST_ALGORITHM_SUPERBPE)
            return bad(err, 88, "counts file: unknown algorithm");
        if (fc.alphabet != ST_ALPHABET_BYTES && fc.alphabet != ST_ALPHABET_UBE)
            return bad(err, 92, "counts file: unknown alphabet");
        if (!fc.ngram_max_len != !fc.ngram_cmin)
            return bad(err, 96, "counts file: n-gram max_len and c_min are both set (split) or both 0");
    }
    if (!c->cand != (version == FORMAT_VERSION))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, 8,
                             c->cand ? "a pretoken counts file (version 1) does not load into a candidates counter"
                                     : "a candidates file (version 2) does not load into a pretoken counter");
    struct st_pretokenizer pt;
    st__memset(&pt, 0, sizeof pt);
    pt.pattern = (int)st__get_le32(b + 12);
    pt.flags = st__get_le32(b + 16);
    if (pt.pattern < ST_PATTERN_GPT2 || pt.pattern > ST_PATTERN_DEEPSEEK_V3)
        return bad(err, 12, "counts file: unknown pattern");
    if (pt.flags & ~ST_PRETOK_SCRIPT_AWARE) return bad(err, 16, "counts file: unknown pre-tokenizer flags");
    int nscripts = st_script_count();
    for (int w = 0; w < ST_SCRIPT_WORDS; w++) {
        uint32_t bits = st__get_le32(b + 20 + 4 * w);
        pt.single_letter_scripts[w] = bits;
        for (int k = 0; k < 32; k++)
            if (((bits >> k) & 1) && (!(pt.flags & ST_PRETOK_SCRIPT_AWARE) || 32 * w + k >= nscripts))
                return bad(err, 20 + 4 * (size_t)w, "counts file: a script bit that is no script (or set without script-aware)");
    }
    if (!st__pretokenizers_equal(&pt, &c->pt))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, 12,
                             "the counts were made with another pre-tokenizer (pattern, script-aware or scripts)");
    if (c->cand && !st__cand_compatible(&fc, c->cand))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, 84,
                             "the candidates were made from another vocabulary, algorithm or n-gram split");
    if (c->cand && c->cand->given_back) return given_back(err);
    uint64_t stats[4];
    for (int s = 0; s < 4; s++) stats[s] = st__get_le64(b + 52 + 8 * s);
    if (add_would_overflow(c, stats[0], stats[1], stats[2]))
        return bad(err, 52, "counts file: adding its statistics would overflow 64 bits");
    /* pass 1: validate everything, so a bad file adds nothing */
    size_t pos = head, prev = 0, prev_len = 0;
    uint64_t n = 0, sum = 0;
    while (pos < len) {
        if (len - pos < ENTRY_HEAD) return bad(err, pos, "counts file: an entry is cut short (truncated?)");
        uint32_t l = st__get_le32(b + pos);
        uint64_t cnt = st__get_le64(b + pos + 4);
        if (l == 0) return bad(err, pos, "counts file: an empty pretoken");
        if (cnt == 0) return bad(err, pos + 4, "counts file: a count of 0");
        if (l > len - pos - ENTRY_HEAD) return bad(err, pos, "counts file: a pretoken runs past the end (truncated?)");
        const uint8_t *p = b + pos + ENTRY_HEAD;
        if (c->cand) {
            /* two or more non-empty pretokens of valid UTF-8 joined with 0xFF */
            size_t s0 = 0, parts = 0;
            for (size_t k = 0; k <= l; k++) {
                if (k < l && p[k] != ST__CAND_SEP) continue;
                if (k == s0 || st_utf8_validate((const char *)p + s0, k - s0, NULL) != ST_OK)
                    return bad(err, pos + ENTRY_HEAD + s0, "counts file: a candidate's pretoken is empty or not valid UTF-8");
                parts++;
                s0 = k + 1;
            }
            if (parts < 2) return bad(err, pos + ENTRY_HEAD, "counts file: a candidate of fewer than 2 pretokens");
        } else if (st_utf8_validate((const char *)p, l, NULL) != ST_OK)
            return bad(err, pos + ENTRY_HEAD, "counts file: a pretoken is not valid UTF-8");
        if (n && cmp_bytes(b + prev, prev_len, p, l) >= 0)
            return bad(err, pos, "counts file: pretokens not in strictly increasing byte order (unsorted or repeated)");
        if (sum + cnt < cnt) return bad(err, pos + 4, "counts file: the counts overflow 64 bits");
        sum += cnt;
        n++;
        prev = pos + ENTRY_HEAD;
        prev_len = l;
        pos += ENTRY_HEAD + l;
    }
    if (n != stats[ST_COUNTER_UNIQUE]) return bad(err, 76, "counts file: the number of entries differs from its header");
    if (sum != stats[ST_COUNTER_PRETOKENS]) return bad(err, 68, "counts file: the counts do not sum to its pretoken total");
    /* pass 2: add (cannot overflow: every count is at most the pretoken total) */
    pos = head;
    while (pos < len) {
        uint32_t l = st__get_le32(b + pos);
        uint64_t cnt = st__get_le64(b + pos + 4);
        const uint8_t *p = b + pos + ENTRY_HEAD;
        if (!add_piece(c, p, l, st__hash_bytes(p, l), cnt))
            return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        pos += ENTRY_HEAD + l;
    }
    c->stats[ST_COUNTER_DOCUMENTS] += stats[ST_COUNTER_DOCUMENTS];
    c->stats[ST_COUNTER_BYTES] += stats[ST_COUNTER_BYTES];
    c->stats[ST_COUNTER_PRETOKENS] += stats[ST_COUNTER_PRETOKENS];
    return ST_OK;
}
