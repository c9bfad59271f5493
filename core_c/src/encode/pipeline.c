/* The encode pipeline (docs/design.md §7): special tokens -> pieces -> per-piece merge -> sink.
 *
 *  1. the special-token policy (special_policy.c): refuse a disallowed special anywhere in the
 *     text, then cut the text at the allowed specials it holds (encode_all);
 *  2. the pre-tokenizer splits each stretch between them into pieces (encode_ordinary);
 *  3. each piece becomes tokens by its kind (encode_piece, the one switch on the kind): for a
 *     rank vocabulary, the whole piece if it is a token (most pieces of real text are;
 *     suBPEriod's "known word" skip), else backtracking or the merge loops (merge.c); for a
 *     rule model, the merge of its base symbols by rule, and for a superword model the
 *     superword pass over the pieces' tokens (superword_pass.c);
 *  4. the sink (sink.h) writes ids and start offsets, in the unit the caller asked for.
 * Pieces seen before (in this call or an earlier one) are replayed from a piece cache
 * (piece_cache.h, piece_cache.c), in a scratch block the handle keeps for reuse, one per running
 * call, so the caches last across calls and no call allocates or clears megabytes.
 * This file owns the order of those steps and the per-piece choice between them (with when to
 * build the backtracking tables); the steps with rules and state of their own are in the files
 * named above. What the loop over pieces calls once a piece (the piece cache's lookup and fill,
 * feeding the superword run, the sink) is inline in their headers, so no per-piece call crosses
 * a file; what does runs once a call, once a run or on a cache miss. */
#include "piece_cache.h"
#include "special_policy.h"
#include "superword_pass.h"
#include "../text/utf8.h"
#include "../formats/tokenizer_json.h"
#include "../text/normalize.h"
#include "../text/unicode.h"

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

/* ---- per piece ------------------------------------------------------------------------------ */

typedef struct encoder {
    const st_encoding *enc;
    const uint8_t *text;
    size_t text_len;
    sink *o;
    st__merger mg;        /* mg.pairs: the pair cache, NULL when uncached */
    st__piece_cache pc;   /* the piece cache (piece_cache.h); all zero when uncached */
    int all_bytes;        /* every byte is a token: 1, not: -1, not looked yet: 0 */
    int merge_only;       /* st_encode_piece: the merge loops alone (the backtracking encoder's
                             tables are exact for pretokens of UTF-8 text, not for any bytes) */
    int memo_tried;
    st__run run;          /* the superword pass (superword_pass.h): run.sup NULL but for
                             superword models */
} encoder;

/* The compatibility memo of the backtracking encoder, for calls that have a scratch. */
static uint64_t *memo_of(encoder *e) {
    st__scratch *s = e->pc.scratch;
    if (!s) return NULL;
    if (!s->memo && !e->memo_tried) {
        e->memo_tried = 1;
        s->memo = (uint64_t *)st__alloc(&e->enc->alloc, MEMO_SIZE);
        if (s->memo) st__memset(s->memo, 0xFF, MEMO_SIZE);
    }
    return s->memo;
}

/* Replay a cache hit for the piece at text offset a: each token straight from its word (id |
 * start << 26) to the sink. (Unpacked into two buffers first, then put, replay took 6-8% of a
 * warm call in Russian, Arabic, Chinese and Japanese.) A superword model's piece may instead
 * join the run: only a piece of one token can, and piece_to_run reads that one token alone. */
static st_status cache_replay(encoder *e, const cache_ref *r, size_t a) {
    if (r->s) {
        size_t m = r->s->ntok;
        const uint8_t *w = line_data(r->s) + ((r->s->len + 3) & ~3u);
        if (e->run.sup) {
            if (r->s->joins) { /* m is 1: the token joins the run */
                uint32_t x;
                st__memcpy(&x, w, 4);
                x &= (1u << ST_CACHE_ID_BITS) - 1;
                if (e->run.n < e->run.cap) {
                    run_put(&e->run, x, a);
                    return ST_OK;
                }
                return st__run_push_grow(&e->run, &e->enc->alloc, x, a);
            }
            if (e->run.n) { /* the run ends before this piece */
                st_status st = st__run_flush(&e->run, e->o, e->enc);
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
    if (e->run.sup) {
        st_status st;
        if (piece_to_run(&e->run, e->o, e->enc, le->tok, m, a, &st) || st != ST_OK) return st;
    }
    for (size_t k = 0; k < m; k++) put(e->o, le->tok[k], a + le->rel[k]);
    return ST_OK;
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

/* A rule model's piece p[0..n), as its ns base symbols sym, merged by rule: the linear merge for
 * up to ST_LINEAR_PIECE symbols of a piece ending in an ASCII byte, else the heap (the same
 * merges). Llama 3's tokenizer.json, C core alone (bench/encode_driver.c, 250 KB slices, both
 * orders of the builds): fresh German 0.90-0.95 of the time, English 0.95-1.0, Russian and
 * Chinese 1.0; the linear merge on every short piece made Chinese 1.07 slower (a character's
 * three bytes each a symbol: many merges, each a scan). */
ST_INLINE size_t merge_symbols(const st__merger *mg, const uint8_t *p, size_t n, const uint32_t *sym, size_t ns,
                               uint32_t *tok, uint32_t *start, void *scratch) {
    if (ns <= ST_LINEAR_PIECE && p[n - 1] < 0x80) return st__merge_short_syms(mg, sym, ns, tok, start);
    return st__merge_heap(mg, NULL, sym, ns, tok, start, scratch);
}

/* A rule model's piece: its base symbols merged by rule (a piece that spells a token is not
 * taken whole: the rules decide). */
static st_status encode_piece_rules(encoder *e, size_t a, size_t b) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *p = e->text + a;
    size_t n = b - a;
    cache_ref cr;
    if (cache_find(&e->pc, e->enc, p, n, 0, &cr)) return cache_replay(e, &cr, a);
    if (n > ST_MERGE_MAX_PARTS) return ST_ERR_OUT_OF_MEMORY;
    /* symbols, their offsets, the final tokens and starts, the merge scratch */
    size_t msz = st__merge_heap_scratch_size(n), size = 4 * n * sizeof(uint32_t) + msz;
    uint64_t stack[(4 * ST_STACK_PIECE + 1) / 2 + (3 * ST_STACK_PIECE + 1) + (4 * (ST_STACK_PIECE + 1) + 1) / 2];
    uint8_t *mem = n <= ST_STACK_PIECE ? (uint8_t *)stack : (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    uint64_t *scratch = (uint64_t *)(void *)mem;
    uint32_t *sym = (uint32_t *)(void *)(mem + msz), *off = sym + n, *tok = off + n, *start = tok + n;
    size_t ns = piece_symbols(v->alphabet, p, n, sym, off);
    st__merger mg = {v, &e->enc->rules, NULL, NULL, NULL};
    size_t m = merge_symbols(&mg, p, n, sym, ns, tok, start, scratch);
    st_status st = ST_OK;
    if (!e->run.sup || !piece_to_run(&e->run, e->o, e->enc, tok, m, a, &st))
        for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + off[start[k]]);
    cache_fill(&cr, p, n, m, tok, start, off, e->run.sup && m == 1 && st__bit(e->run.sup->eligible, tok[0]));
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
    if (cache_find(&e->pc, e->enc, p, n, h, &cr)) return cache_replay(e, &cr, a);
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

/* A HuggingFace model's piece (ST__KIND_HF): with ignore_merges, the whole piece if it is a token
 * (the caller has looked: `looked`); else its bytes' tokens merged by the file's merges, lowest
 * rank first, the leftmost of equal ones (tokenizers' BPE::merge_word). h: the piece's
 * st__hash_bytes if the caller has it, else 0. */
static st_status encode_piece_hf(encoder *e, size_t a, size_t b, int looked, uint64_t h) {
    const st_vocab *v = &e->enc->vocab;
    const uint8_t *p = e->text + a;
    size_t n = b - a;
    if ((e->enc->hf.flags & ST__HF_IGNORE_MERGES) && !looked) {
        if (!h) h = st__hash_bytes(p, n);
        uint32_t id = st__vocab_find(v, p, n, h);
        if (id != ST_NO_TOKEN) { put(e->o, id, a); return ST_OK; }
    }
    cache_ref cr;
    if (cache_find(&e->pc, e->enc, p, n, h, &cr)) return cache_replay(e, &cr, a);
    if (n > ST_MERGE_MAX_PARTS) return ST_ERR_OUT_OF_MEMORY;
    /* the symbols (each byte's token), the final tokens and starts, the merge scratch */
    size_t msz = st__merge_heap_scratch_size(n), size = 3 * n * sizeof(uint32_t) + msz;
    uint64_t stack[(4 * ST_STACK_PIECE + 1) / 2 + (3 * ST_STACK_PIECE + 1) + (4 * (ST_STACK_PIECE + 1) + 1) / 2];
    uint8_t *mem = n <= ST_STACK_PIECE ? (uint8_t *)stack : (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    uint64_t *scratch = (uint64_t *)(void *)mem;
    uint32_t *sym = (uint32_t *)(void *)(mem + msz), *tok = sym + n, *start = tok + n;
    for (size_t k = 0; k < n; k++) sym[k] = v->byte_ids[p[k]]; /* every byte has one (checked at load) */
    size_t m = merge_symbols(&e->mg, p, n, sym, n, tok, start, scratch);
    for (size_t k = 0; k < m; k++) put(e->o, tok[k], a + start[k]);
    cache_fill(&cr, p, n, m, tok, start, NULL, 0);
    if (mem != (uint8_t *)stack) st__free(&e->enc->alloc, mem, size);
    return ST_OK;
}

/* The one dispatch on the kind of model. */
ST_INLINE st_status encode_piece(encoder *e, size_t a, size_t b, st_error *err) {
    switch (e->enc->kind) {
    case ST__KIND_RANKS: return encode_piece_ranks(e, a, b, 0, 0, err);
    case ST__KIND_RULES: return encode_piece_rules(e, a, b);
    case ST__KIND_HF: return encode_piece_hf(e, a, b, 0, 0);
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
                st_status st = e->enc->kind == ST__KIND_HF ? encode_piece_hf(e, a, b, looked, h)
                                                           : encode_piece_ranks(e, a, b, looked, h, err);
                if (st != ST_OK) return st;
            }
            a = b;
        }
    }
    return ST_OK;
}

/* Text between special tokens, piece by piece (no span cache): a rank vocabulary, and a
 * HuggingFace model whose pieces that are tokens are those tokens (ignore_merges), look every
 * piece up whole first, a batch at a time; other models merge each piece. */
static st_status encode_ordinary_pieces(encoder *e, size_t from, size_t to, st_error *err) {
    if (e->enc->kind == ST__KIND_RANKS || (e->enc->kind == ST__KIND_HF && (e->enc->hf.flags & ST__HF_IGNORE_MERGES)))
        return encode_ordinary_ranks(e, from, to, err);
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

#ifndef ST_SPANS_ON
#define ST_SPANS_ON 1 /* bench/: 0 builds the pipeline without the span cache, to measure it */
#endif

/* A span's m ids (w: 4 bytes each) from the span cache to the sink, the span starting at text
 * offset a: copied whole when the caller wants ids alone; else each put with its start, the
 * next token starting where this one's bytes end (a rank vocabulary's tokens of a span spell
 * its bytes; kept within the span, whatever an image's offsets say). */
static void span_replay(encoder *e, const uint8_t *w, size_t m, size_t a, size_t b) {
    sink *o = e->o;
    if (!o->starts && !o->nmap) {
        size_t room = o->n < o->cap ? o->cap - o->n : 0;
        if (room) st__memcpy(o->ids + o->n, w, 4 * (m < room ? m : room));
        o->n += m;
        return;
    }
    const st_vocab *v = &e->enc->vocab;
    for (size_t k = 0; k < m; k++) {
        uint32_t id;
        st__memcpy(&id, w + 4 * k, 4);
        put(o, id, a);
        a += v->offsets[id + 1] - v->offsets[id];
        if (a >= b) a = b - 1;
    }
}

/* The spans of this call waiting in the list, into the log (their ids are in the sink's buffer:
 * the pending list holds only spans that were encoded there). */
static void spans_remember(encoder *e, st__span_cache *sc) {
    for (size_t k = 0; k < sc->npending; k++) {
        const span_pending *q = &sc->pending[k];
        st__span_fill(sc, e->text + q->at, q->len, q->hash, e->o->ids + q->first, q->m);
    }
    sc->npending = 0;
}

/* The span [a, b) of the text (hash h, its bucket prefetched) through the span cache: its ids from
 * the cache, or encoded (in the caller's buffer when it has room for one id a byte, remembered
 * when the call ends; else in the cache's own, remembered now) . */
static st_status encode_span(encoder *e, st__span_cache *sc, size_t a, size_t b, uint64_t h, st_error *err) {
    const uint8_t *p = e->text + a;
    size_t n = b - a, m;
    const uint8_t *w = st__span_find(sc, p, n, h, &m);
    if (w) {
        e->pc.span_hits++;
        span_replay(e, w, m, a, b);
        return ST_OK;
    }
    e->pc.span_misses++;
    sink *o = e->o;
    size_t n0 = o->n;
    if (o->ids && !o->nmap && n0 <= o->cap && n <= o->cap - n0) {
        st_status st = encode_ordinary_pieces(e, a, b, err);
        if (st != ST_OK) return st;
        if (sc->npending == ST_SPAN_PENDING) spans_remember(e, sc);
        span_pending *q = &sc->pending[sc->npending++];
        q->hash = h;
        q->at = a;
        q->len = n;
        q->first = n0;
        q->m = o->n - n0;
        return ST_OK;
    }
    sink own = {sc->ids, NULL, ST_SPAN_MAX, 0, ST_OFFSETS_BYTES, e->text, 0, 0, 0, NULL, 0};
    e->o = &own;
    st_status st = encode_ordinary_pieces(e, a, b, err);
    e->o = o;
    if (st != ST_OK) return st;
    st__span_fill(sc, p, n, h, sc->ids, own.n);
    span_replay(e, (const uint8_t *)sc->ids, own.n, a, b);
    return ST_OK;
}

/* Where the span starting at text offset a (a < to) ends: the first cut (cut.c) ST_SPAN_MIN
 * bytes or more past a, or the end of the text, *cached 1; with no cut within ST_SPAN_MAX bytes,
 * the next cut (or the end), *cached 0 (the stretch is encoded uncached). Each search starts
 * where the last one stopped, so the work stays linear. */
static size_t span_end(const encoder *e, size_t a, size_t to, int *cached) {
    const uint8_t *s = e->text + a;
    size_t rest = to - a, b;
    *cached = 1;
    if (rest <= ST_SPAN_MIN) return to;
    b = st__cut_within(e->enc, s, rest, ST_SPAN_MIN, ST_SPAN_MAX);
    if (b) return a + b;
    if (rest <= ST_SPAN_MAX) return to;
    *cached = 0;
    b = st__cut_within(e->enc, s, rest, ST_SPAN_MAX, rest);
    return b ? a + b : to;
}

/* A rank vocabulary's text between special tokens, a span at a time (span_cache.h). The next
 * span's end and hash are found before this span is encoded and its index bucket prefetched, so
 * the bucket's cache miss (the index is megabytes) overlaps this span's work. */
static st_status encode_ordinary_spans(encoder *e, st__span_cache *sc, size_t from, size_t to, st_error *err) {
    int cached, next_cached = 0;
    size_t a = from, b = span_end(e, a, to, &cached);
    uint64_t h = cached ? st__span_hash(e->text + a, b - a) : 0;
    while (a < to) {
        size_t c = b < to ? span_end(e, b, to, &next_cached) : to;
        uint64_t g = 0;
        if (b < to && next_cached) {
            g = st__span_hash(e->text + b, c - b);
            ST_PREFETCH(&sc->slots[g & (sc->nslots - SPAN_WAYS)]);
        }
        st_status st = cached ? encode_span(e, sc, a, b, h, err) : encode_ordinary_pieces(e, a, b, err);
        if (st != ST_OK) return st;
        a = b;
        b = c;
        h = g;
        cached = next_cached;
    }
    return ST_OK;
}

static st_status encode_ordinary(encoder *e, size_t from, size_t to, st_error *err) {
    /* a rank vocabulary's or HuggingFace model's text long enough to hold a span, with a span
     * cache and a pattern with cut rules: a span at a time */
    if (ST_SPANS_ON && (e->enc->kind == ST__KIND_RANKS || e->enc->kind == ST__KIND_HF) && to - from >= ST_SPAN_TEXT &&
        e->pc.scratch && e->pc.scratch->span.log && st__cut_supported(e->enc))
        return encode_ordinary_spans(e, &e->pc.scratch->span, from, to, err);
    return encode_ordinary_pieces(e, from, to, err);
}

/* ---- the text: special tokens cut it, the pretokenizer splits the rest ------------------------ */

/* The text between the special strings of one pass: the next pass's (a HuggingFace model's
 * normalized added tokens), or the pre-tokenizer's pieces. */
static st_status encode_stretch(encoder *e, size_t from, size_t to, const st__policy *pl, int pass, st_error *err);

/* A HuggingFace added token with lstrip (rstrip) takes the whitespace (White_Space, Rust's
 * char::is_whitespace) before it back to the end of the previous match (after it, up to `to`):
 * tokenizers' AddedVocabulary::find_matches. [*start, *stop) is the match, widened in place. */
static void strip_spaces(const encoder *e, uint8_t flags, size_t seg, size_t to, size_t *start, size_t *stop) {
    const uint8_t *s = e->text;
    if (flags & ST__ADDED_LSTRIP)
        while (*start > seg) {
            size_t p = *start - 1;
            while (p > seg && (s[p] & 0xC0) == 0x80) p--;
            uint32_t cp;
            st__utf8_decode(s + p, &cp);
            if (!(st_ucd_class(cp) & ST_UCD_WHITE_SPACE)) break;
            *start = p;
        }
    if (flags & ST__ADDED_RSTRIP)
        while (*stop < to) {
            uint32_t cp;
            size_t l = st__utf8_decode(s + *stop, &cp);
            if (!(st_ucd_class(cp) & ST_UCD_WHITE_SPACE) || l > to - *stop) break;
            *stop += l;
        }
}

/* One pass over s[from..to): the special strings of `set` cut it (the earliest match, the
 * longest at one place), and what lies between goes to encode_stretch. */
static st_status special_pass(encoder *e, size_t from, size_t to, const st__policy *pl, const uint64_t *set, int pass,
                              st_error *err) {
    const uint8_t *s = e->text;
    uint8_t first[256];
    int only = st__special_only_byte(first, st__special_first_bytes(e->enc, set, first));
    size_t seg = from;
    for (size_t i = from; i < to; i++) {
        if (only >= 0 && (i = st__find_byte(s, i, to, (uint8_t)only)) == to) break;
        if (!first[s[i]] || (s[i] & 0xC0) == 0x80) continue; /* matches start on a character */
        size_t ml;
        uint32_t k;
        uint32_t id = st__special_at(e->enc, set, s, i, to, &ml, &k);
        if (id == ST_NO_TOKEN) continue;
        /* and end on one: a loaded special is valid UTF-8, but an image's is trusted for nothing */
        if (i + ml < to && (s[i + ml] & 0xC0) == 0x80) continue;
        if (!st__special_allowed(pl, k)) { /* matched, but not allowed: text */
            i += ml - 1;
            continue;
        }
        size_t start = i, stop = i + ml;
        if (e->enc->kind == ST__KIND_HF) strip_spaces(e, e->enc->hf.string_flags[k], seg, to, &start, &stop);
        st_status st = encode_stretch(e, seg, start, pl, pass, err);
        /* a run never crosses a special token */
        if (st == ST_OK && e->run.n) st = st__run_flush(&e->run, e->o, e->enc);
        if (st != ST_OK) return st;
        put(e->o, id, start);
        i = stop - 1;
        seg = stop;
    }
    return encode_stretch(e, seg, to, pl, pass, err);
}

/* The text between a HuggingFace model's non-normalized added tokens, normalized (its NFC, as
 * tokenizers normalizes each such stretch on its own), then its normalized added tokens and the
 * pieces. Most text is NFC already: only a stretch holding a character at or above U+0300 (a lead
 * byte of 0xCC or more) is normalized, and only one that NFC changes is encoded from a copy, with
 * the copy's offsets mapped back to the text's (sink.h: nmap). */
/* A stretch past normalization: the normalized added tokens' pass, or the pieces. */
static st_status normalized_rest(encoder *e, size_t from, size_t to, const st__policy *pl, st_error *err) {
    return pl->any_normalized ? special_pass(e, from, to, pl, pl->normalized, 1, err) : encode_ordinary(e, from, to, err);
}

static st_status normalized_stretch(encoder *e, size_t from, size_t to, const st__policy *pl, st_error *err) {
    const uint8_t *s = e->text + from;
    size_t n = to - from;
    if (st__nfc_unchanged(s, n)) return normalized_rest(e, from, to, pl, err); /* NFC already */
    size_t cap = n * ST__NFC_MAX_EXPANSION;
    if (cap / ST__NFC_MAX_EXPANSION != n || cap > ((size_t)-1 - 16) / (1 + sizeof(size_t))) return ST_ERR_OUT_OF_MEMORY;
    size_t size = cap + 16 + cap * sizeof(size_t); /* the copy (+16 readable bytes past it), its map */
    uint8_t *mem = (uint8_t *)st__alloc(&e->enc->alloc, size);
    if (!mem) return ST_ERR_OUT_OF_MEMORY;
    size_t *map = (size_t *)(void *)mem;
    const size_t *old_map = e->o->nmap;
    uint8_t *copy = mem + cap * sizeof(size_t);
    size_t m = st__nfc(s, n, copy, map, cap);
    st_status st;
    if (m == n && st__memcmp(copy, s, n) == 0) { /* NFC already */
        st__free(&e->enc->alloc, mem, size);
        return normalized_rest(e, from, to, pl, err);
    }
    st__memset(copy + m, 0, 16);
    const uint8_t *text = e->text;
    size_t text_len = e->text_len, old_base = e->o->nbase;
    e->text = copy;
    e->text_len = m;
    e->o->nmap = map;
    e->o->nbase = from;
    st = normalized_rest(e, 0, m, pl, err);
    e->text = text;
    e->text_len = text_len;
    e->o->nmap = old_map;
    e->o->nbase = old_base;
    st__free(&e->enc->alloc, mem, size);
    return st;
}

static st_status encode_stretch(encoder *e, size_t from, size_t to, const st__policy *pl, int pass, st_error *err) {
    if (from == to) return ST_OK;
    if (pass == 0 && e->enc->kind == ST__KIND_HF && (e->enc->hf.flags & ST__HF_NFC))
        return normalized_stretch(e, from, to, pl, err);
    return pass == 0 ? normalized_rest(e, from, to, pl, err) : encode_ordinary(e, from, to, err);
}

static st_status encode_all(encoder *e, size_t len, const st__policy *pl, st_error *err) {
    if (!pl->any_match) return encode_stretch(e, 0, len, pl, 0, err);
    return special_pass(e, 0, len, pl, pl->match, 0, err);
}

/* The text, then the last run (a run never crosses the end of the text). */
static st_status encode_text(encoder *e, size_t len, const st__policy *pl, st_error *err) {
    st_status st = encode_all(e, len, pl, err);
    if (st == ST_OK && e->run.n) st = st__run_flush(&e->run, e->o, e->enc);
    return st;
}

/* ---- the calls ------------------------------------------------------------------------------ */

/* What the merges consult, by kind (the pair cache is set by the caller). */
static void merger_of(const st_encoding *enc, st__merger *mg) {
    mg->v = &enc->vocab;
    mg->rules = enc->kind == ST__KIND_RULES ? &enc->rules : enc->kind == ST__KIND_HF ? &enc->hf.rules : NULL;
    mg->made = enc->kind == ST__KIND_HF ? enc->hf.made : NULL;
}

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
    st__policy pl;
    st = st__policy_resolve(enc, specials, &pl, err);
    if (st == ST_OK) st = st__check_disallowed(enc, &pl, (const uint8_t *)text, len, err);
    if (st != ST_OK) { st__policy_free(&pl, &enc->alloc); return st; }

    sink o = {ids, starts, cap, 0, flags, (const uint8_t *)text, 0, 0, 0, NULL, 0};
    encoder e;
    st__memset(&e, 0, sizeof e);
    e.enc = enc;
    e.text = (const uint8_t *)text;
    e.text_len = len;
    e.o = &o;
    e.mg.v = &enc->vocab;
    merger_of(enc, &e.mg);
    st__piece_cache_open(enc, len, &e.pc); /* the caches: the piece cache, the pair cache, the memo */
    if (e.pc.scratch) e.mg.pairs = e.pc.scratch->pairs;
    if (enc->kind == ST__KIND_RULES && enc->supers.n) st__run_init(&e.run, &enc->supers);
    st = encode_text(&e, len, &pl, err);
    if (e.pc.scratch && e.pc.scratch->span.npending) { /* the spans encoded in the caller's buffer */
        if (st == ST_OK) spans_remember(&e, &e.pc.scratch->span);
        e.pc.scratch->span.npending = 0;
    }
    st__run_release(&e.run, &enc->alloc);
    st__piece_cache_close(enc, &e.pc);
    st__policy_free(&pl, &enc->alloc);
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
    sink o = {ids, NULL, cap, 0, ST_OFFSETS_BYTES, bytes, 0, 0, 0, NULL, 0};
    encoder e;
    st__memset(&e, 0, sizeof e);
    e.enc = enc;
    e.text = bytes;
    e.text_len = len;
    e.o = &o;
    e.mg.v = &enc->vocab;
    merger_of(enc, &e.mg);
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
