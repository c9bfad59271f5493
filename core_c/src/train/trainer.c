/* Phase-1 BPE training (docs/design.md §8), two exact semantics:
 *  - paper (the reference implementation's): identical adjacent pairs counted without overlap
 *    (a run of k equal symbols holds floor(k/2) of its pair), ties to the smallest
 *    (left base symbols, right base symbols) as Python orders tuples;
 *  - hf (HuggingFace tokenizers' BpeTrainer over ByteLevel.alphabet()): overlapping counts, ties to
 *    the smallest pair of HF ids, and HF's reuse of a token's id when a merge spells an existing
 *    token.
 * Both replace a merged pair left to right without overlap.
 *
 * Data structures: every distinct pretoken (a word) is stored once with its count as integer
 * symbols; a pair table maps (left, right) to the pair's live count and the words that held it;
 * a binary heap holds (count, pair) entries with lazy invalidation (an entry whose count is no
 * longer the pair's is re-queued with the live count when popped). A merge visits only the words
 * listed for its pair, and in each only the window around the merge sites: the window's old pair
 * contributions are subtracted and its new ones added. The window reaches one symbol past the
 * outermost sites and, in paper mode, to the ends of the runs of equal symbols there, so the pairs
 * across its edges are unchanged, and the update equals a recount (for both counting rules).
 * Only pairs holding the new token can gain occurrences, so only those are queued again. */
#include "trainer.h"
#include "candidates.h"
#include "../base/work_counter.h"
#include "../formats/model.h"
#include "../base/hash.h"
#include "../formats/vocab.h" /* the rules model's limits: ST_RULES_MAX_IDS, st__rules_token_bytes_limit */
#include "../text/utf8.h"

static void *talloc(st_trainer *t, size_t n) {
    void *p = st__alloc(&t->alloc, n ? n : 1);
    if (!p) t->oom = 1;
    return p;
}
static void tfree(st_trainer *t, void *p, size_t n) { st__free(&t->alloc, p, n ? n : 1); }

/* Grow an array to hold need elements (doubling); 0 when out of memory. */
static int grow(st_trainer *t, void **arr, size_t *cap, size_t need, size_t elem, size_t first) {
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : first;
    while (c < need) c *= 2;
    /* resized in place where the allocator can (a large block remapped, not held twice) */
    void *p = st__realloc_grow(&t->alloc, *arr, cap, c, (size_t)-1, elem);
    if (!p) {
        t->oom = 1;
        return 0;
    }
    *arr = p;
    return 1;
}

/* ---- tokens ------------------------------------------------------------------------------- */

static int cmp_seq(const st_trainer *t, uint32_t a, uint32_t b) {
    if (a == b) return 0;
    size_t an = t->tok_len[a], bn = t->tok_len[b];
    int r = st__memcmp(t->seq + t->tok_off[a], t->seq + t->tok_off[b], an < bn ? an : bn);
    if (r) return r;
    return an < bn ? -1 : an > bn;
}

/* 1 if heap entry a goes before b: the higher count, then the smaller pair by the mode's order
 * (paper: base-symbol sequences of left then right; hf: HF ids of left then right). Two pairs
 * spelling the same sequences (possible in paper mode, where two merges can make the same
 * string) fall back to the smaller (left id, right id). */
static int better(const st_trainer *t, const st__heap_entry *a, const st__heap_entry *b) {
    if (a->count != b->count) return a->count > b->count;
    const st__pair *p = &t->pairs[a->pair], *q = &t->pairs[b->pair];
    if (t->mode == ST_TRAIN_HF) {
        uint32_t pl = t->hf_key[p->left], ql = t->hf_key[q->left];
        if (pl != ql) return pl < ql;
        return t->hf_key[p->right] < t->hf_key[q->right];
    }
    int r = cmp_seq(t, p->left, q->left);
    if (!r) r = cmp_seq(t, p->right, q->right);
    if (r) return r < 0;
    if (p->left != q->left) return p->left < q->left;
    return p->right < q->right;
}

static void heap_up(st_trainer *t, size_t i) {
    st__heap_entry e = t->heap[i];
    while (i) {
        size_t parent = (i - 1) / 2;
        if (!better(t, &e, &t->heap[parent])) break;
        t->heap[i] = t->heap[parent];
        i = parent;
    }
    t->heap[i] = e;
}

static void heap_down(st_trainer *t, size_t i) {
    st__heap_entry e = t->heap[i];
    size_t n = t->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && better(t, &t->heap[c + 1], &t->heap[c])) c++;
        if (!better(t, &t->heap[c], &e)) break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    t->heap[i] = e;
}

static int heap_push(st_trainer *t, uint32_t pair, uint64_t count) {
    if (!grow(t, (void **)&t->heap, &t->heap_cap, t->heap_n + 1, sizeof *t->heap, 1024)) return 0;
    t->heap[t->heap_n].count = count;
    t->heap[t->heap_n].pair = pair;
    heap_up(t, t->heap_n++);
    return 1;
}

/* ---- pairs -------------------------------------------------------------------------------- */

static int pair_rehash(st_trainer *t, size_t nslots) {
    uint64_t *k = (uint64_t *)talloc(t, nslots * sizeof *k);
    uint32_t *v = (uint32_t *)talloc(t, nslots * sizeof *v);
    if (!k || !v) {
        if (k) tfree(t, k, nslots * sizeof *k);
        if (v) tfree(t, v, nslots * sizeof *v);
        return 0;
    }
    st__memset(v, 0, nslots * sizeof *v);
    size_t mask = nslots - 1;
    for (size_t i = 0; i < t->n_pairs; i++) {
        uint64_t key = ((uint64_t)t->pairs[i].left << 32) | t->pairs[i].right;
        size_t s = (size_t)st__mix64(key) & mask;
        while (v[s]) s = (s + 1) & mask;
        k[s] = key;
        v[s] = (uint32_t)(i + 1);
    }
    if (t->pvals) {
        tfree(t, t->pkeys, (t->pmask + 1) * sizeof *t->pkeys);
        tfree(t, t->pvals, (t->pmask + 1) * sizeof *t->pvals);
    }
    t->pkeys = k;
    t->pvals = v;
    t->pmask = mask;
    return 1;
}

/* The pair (key), made if new; UINT32_MAX when out of memory. */
static uint32_t pair_get(st_trainer *t, uint64_t key) {
    size_t s = (size_t)st__mix64(key) & t->pmask;
    for (;;) {
        uint32_t v = t->pvals[s];
        if (!v) break;
        if (t->pkeys[s] == key) return v - 1;
        s = (s + 1) & t->pmask;
    }
    if ((t->n_pairs + 1) * 10 > (t->pmask + 1) * 7) {
        if (!pair_rehash(t, (t->pmask + 1) * 2)) return UINT32_MAX;
        s = (size_t)st__mix64(key) & t->pmask;
        while (t->pvals[s]) s = (s + 1) & t->pmask;
    }
    if (t->n_pairs >= 0xFFFFFFFEu) { t->oom = 1; return UINT32_MAX; }
    if (!grow(t, (void **)&t->pairs, &t->pairs_cap, t->n_pairs + 1, sizeof *t->pairs, 4096)) return UINT32_MAX;
    st__pair *p = &t->pairs[t->n_pairs];
    st__memset(p, 0, sizeof *p);
    p->left = (uint32_t)(key >> 32);
    p->right = (uint32_t)key;
    t->pkeys[s] = key;
    t->pvals[s] = (uint32_t)(t->n_pairs + 1);
    return (uint32_t)t->n_pairs++;
}

static void pair_free_words(st_trainer *t, st__pair *p) {
    if (p->n > 2) tfree(t, p->words.list, st__pair_list_cap(p->n) * sizeof *p->words.list);
    p->n = 0;
}

/* Append word w to p's list (made or doubled as it fills); 0 when out of memory. */
static int pair_add_word(st_trainer *t, st__pair *p, uint32_t w) {
    if (p->n < 2) {
        p->words.two[p->n++] = w;
        return 1;
    }
    size_t cap = p->n == 2 ? 2 : st__pair_list_cap(p->n);
    if (p->n == cap) {
        size_t grown = cap == 2 ? 4 : 2 * cap;
        uint32_t *list = (uint32_t *)talloc(t, grown * sizeof *list);
        if (!list) return 0;
        st__memcpy(list, st__pair_words(p), p->n * sizeof *list);
        if (p->n > 2) tfree(t, p->words.list, cap * sizeof *list);
        p->words.list = list;
    }
    p->words.list[p->n++] = w;
    return 1;
}

static int tally_add(st_trainer *t, uint64_t key, uint64_t count);
static uint64_t tally_count(const st_trainer *t, uint64_t key);

/* Apply d occurrences of pair key in word w (count wc). */
static void apply_delta(st_trainer *t, uint64_t key, int64_t d, uint32_t w) {
    if (t->tally_keys) { /* a pruned phase 2's start: its first pass, or the second's filter */
        if (!t->tally_filter) {
            if (!tally_add(t, key, (uint64_t)d * t->wcount[w])) t->oom = 1;
            return;
        }
        if (tally_count(t, key) <= t->prune_at) return;
    }
    uint32_t pi = pair_get(t, key);
    if (pi == UINT32_MAX) return;
    st__pair *p = &t->pairs[pi];
    p->count += d * (int64_t)t->wcount[w];
    if (p->count == 0) { /* no word holds it any more: its list is all stale */
        pair_free_words(t, p);
        return;
    }
    if (d > 0) {
        if ((!p->n || st__pair_words(p)[p->n - 1] != w) && !pair_add_word(t, p, w)) return;
        if (p->stamp != t->step_no) {
            p->stamp = t->step_no;
            if (!grow(t, (void **)&t->touched, &t->touched_cap, t->n_touched + 1, sizeof *t->touched, 256)) return;
            t->touched[t->n_touched++] = pi;
        }
    }
}

/* Pending deltas of one word: equal pairs are summed first, so a pair that a merge leaves as it
 * was costs no table update. */
static void delta(st_trainer *t, uint32_t x, uint32_t y, int64_t d, uint32_t w) {
    uint64_t key = ((uint64_t)x << 32) | y;
    if (key == t->skip_key) return;
    for (size_t i = 0; i < t->n_deltas; i++)
        if (t->dkey[i] == key) { t->dval[i] += d; return; }
    if (t->n_deltas == ST__DELTAS) { apply_delta(t, key, d, w); return; }
    t->dkey[t->n_deltas] = key;
    t->dval[t->n_deltas++] = d;
}

static void flush_deltas(st_trainer *t, uint32_t w) {
    for (size_t i = 0; i < t->n_deltas; i++)
        if (t->dval[i]) apply_delta(t, t->dkey[i], t->dval[i], w);
    t->n_deltas = 0;
}

/* The pair contributions of s[a..b), whose edges are between unequal symbols or at the word's
 * ends, times sign. */
static void contributions(st_trainer *t, const uint32_t *s, size_t a, size_t b, int64_t sign, uint32_t w) {
    ST_COUNT(b - a); /* test builds only: the symbols read */
    if (t->mode == ST_TRAIN_HF) {
        for (size_t i = a; i + 1 < b; i++) delta(t, s[i], s[i + 1], sign, w);
        return;
    }
    size_t i = a;
    while (i < b) {
        size_t j = i + 1;
        while (j < b && s[j] == s[i]) j++;
        if (j - i >= 2) delta(t, s[i], s[i], sign * (int64_t)((j - i) / 2), w);
        if (j < b) delta(t, s[i], s[j], sign, w);
        i = j;
    }
}

/* The window of the merge site at i: from its left neighbour to its right one, widened in paper
 * mode to the whole runs of equal symbols there, so both edges of the window lie between unequal
 * symbols (or at the word's ends) whose pairs the merge leaves as they are.
 *
 * Both scans are bounded so that a word costs time linear in its length however long its runs
 * are: a run of n equal symbols holds n / 2 sites, and scanning the whole run from each of them
 * was quadratic in n. merge_word visits the sites in order and only needs to know whether a
 * site's window starts at or before the end b of the windows so far (then the two windows are
 * one), so window_start scans no further back than stop: its answer is exact when above stop,
 * and otherwise only known to be at most stop (the positions it scans lie between b and the
 * site, and b passes the site when the windows join).
 * window_end is given the end known of an earlier site's window (0 for none): the ends are
 * nondecreasing in i, and when i + 3 <= known, no run boundary lies in [i + 3, known) (the
 * earlier scan crossed that stretch), so known is i's end as well, without a scan. */
static size_t window_start(const st_trainer *t, const uint32_t *s, size_t i, size_t stop) {
    size_t a = i ? i - 1 : 0;
    if (t->mode == ST_TRAIN_PAPER)
        while (a > stop && s[a - 1] == s[a]) { ST_COUNT(1); a--; }
    return a;
}
static size_t window_end(const st_trainer *t, const uint32_t *s, size_t L, size_t i, size_t known) {
    size_t b = i + 2;
    if (b < L) {
        b++;
        if (t->mode == ST_TRAIN_PAPER) {
            if (b <= known) return known;
            while (b < L && s[b] == s[b - 1]) { ST_COUNT(1); b++; }
        }
    }
    return b;
}

/* Merge (x, y) -> nt in word w, updating the pair counts: for each cluster of sites whose windows
 * touch, the old window's contributions out, the new window's in. Linear in the word's length
 * (see window_start): a cluster's first start scans only past the previous cluster's end, each
 * later site's start only past the end so far, and the end scans cover disjoint stretches. */
static void merge_word(st_trainer *t, uint32_t w, uint32_t x, uint32_t y, uint32_t nt) {
    uint32_t *s = t->sym + t->woff[w], *sites = t->sites, *win = t->window;
    size_t L = t->wlen[w], ns = 0;
    ST_COUNT(L); /* test builds only: the scan for sites */
    for (size_t i = 0; i + 1 < L;) {
        if (s[i] == x && s[i + 1] == y) { sites[ns++] = (uint32_t)i; i += 2; }
        else i++;
    }
    if (!ns) return; /* the word lost the pair since it was listed */
    size_t b = 0;
    for (size_t k = 0; k < ns;) {
        size_t a = window_start(t, s, sites[k], 0), last = k;
        b = window_end(t, s, L, sites[k], b);
        while (last + 1 < ns && window_start(t, s, sites[last + 1], b) <= b) {
            last++;
            b = window_end(t, s, L, sites[last], b);
        }
        contributions(t, s, a, b, -1, w);
        size_t n2 = 0, q = k;
        for (size_t i = a; i < b;) {
            if (q <= last && i == sites[q]) { win[n2++] = nt; i += 2; q++; }
            else win[n2++] = s[i++];
        }
        contributions(t, win, 0, n2, +1, w);
        flush_deltas(t, w);
        k = last + 1;
    }
    size_t j = sites[0], q = 0;
    for (size_t i = sites[0]; i < L;) {
        if (q < ns && i == sites[q]) { s[j++] = nt; i += 2; q++; }
        else s[j++] = s[i++];
    }
    t->wlen[w] = (uint32_t)j;
}

/* ---- the alphabet ------------------------------------------------------------------------ */

/* The base symbols valid UTF-8 text can produce. Bytes: all but 0xC0 and 0xC1 (overlong
 * leads) and 0xF5-0xFF (above U+10FFFF): 243. UBE: the UTF-8 side carries only code points
 * below U+0800, so ASCII, the continuation bytes 0x80-0xBF and the two-byte leads 0xC2-0xDF
 * (222); the UTF-16LE side takes every byte value (256). In closed form because the hosts make
 * many trainers and an interpreter (pywasm) spent a minute enumerating code points here;
 * test_train.c checks both sets against every code point routed through the public codec. */
static uint64_t reachable(int alphabet, uint8_t *mark /* 512 */) {
    st__memset(mark, 0, 512);
    if (alphabet == ST_ALPHABET_BYTES) {
        for (int k = 0; k < 256; k++) mark[k] = !(k == 0xC0 || k == 0xC1 || k >= 0xF5);
    } else {
        for (int k = 0; k < 0xC0; k++) mark[k] = 1;
        for (int k = 0xC2; k <= 0xDF; k++) mark[k] = 1;
        for (int k = 256; k < 512; k++) mark[k] = 1;
    }
    uint64_t n = 0;
    for (int k = 0; k < 512; k++) n += mark[k];
    return n;
}

/* HF's id order of the 256 bytes: by the code point of their GPT-2 byte-level character (bytes
 * 33-126, 161-172 and 174-255 are themselves; the other 68 follow from U+0100 in byte order).
 * rank[b] in two passes (a per-byte count of smaller ones cost a trainer 1M instructions, seconds
 * under an interpreter). */
static int hf_byte_is_self(uint32_t b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }
static void hf_byte_ranks(uint32_t rank[256]) {
    uint32_t r = 0;
    for (uint32_t b = 0; b < 256; b++)
        if (hf_byte_is_self(b)) rank[b] = r++;
    for (uint32_t b = 0; b < 256; b++)
        if (!hf_byte_is_self(b)) rank[b] = r++;
}

/* ---- token strings (hf: reuse) ----------------------------------------------------------- */

static uint64_t tok_hash(const st_trainer *t, uint32_t id) {
    return st__hash_bytes(t->seq + t->tok_off[id], t->tok_len[id]);
}

static int str_rehash(st_trainer *t, size_t nslots) {
    uint32_t *s = (uint32_t *)talloc(t, nslots * sizeof *s);
    if (!s) return 0;
    st__memset(s, 0, nslots * sizeof *s);
    size_t mask = nslots - 1;
    if (t->str_slots) {
        for (size_t i = 0; i <= t->str_mask; i++) {
            uint32_t v = t->str_slots[i];
            if (!v) continue;
            size_t k = (size_t)tok_hash(t, v - 1) & mask;
            while (s[k]) k = (k + 1) & mask;
            s[k] = v;
        }
        tfree(t, t->str_slots, (t->str_mask + 1) * sizeof *t->str_slots);
    }
    t->str_slots = s;
    t->str_mask = mask;
    return 1;
}

/* The recorded token spelling bytes p[0..n) (hf mode records every merge's new string), or
 * UINT32_MAX. */
static uint32_t str_lookup(const st_trainer *t, const uint8_t *p, size_t n) {
    if (!t->str_slots) return UINT32_MAX;
    size_t k = (size_t)st__hash_bytes(p, n) & t->str_mask;
    for (;;) {
        uint32_t v = t->str_slots[k];
        if (!v) return UINT32_MAX;
        if (t->tok_len[v - 1] == n && st__memcmp(t->seq + t->tok_off[v - 1], p, n) == 0) return v - 1;
        k = (k + 1) & t->str_mask;
    }
}

/* The token spelling the same sequence as token id, or id itself after recording it. */
static uint32_t str_find_or_add(st_trainer *t, uint32_t id) {
    if (!t->str_slots || (t->n_strs + 1) * 10 > (t->str_mask + 1) * 7)
        if (!str_rehash(t, t->str_slots ? (t->str_mask + 1) * 2 : 1024)) return id;
    size_t k = (size_t)tok_hash(t, id) & t->str_mask;
    for (;;) {
        uint32_t v = t->str_slots[k];
        if (!v) break;
        if (cmp_seq(t, v - 1, id) == 0) return v - 1;
        k = (k + 1) & t->str_mask;
    }
    t->str_slots[k] = id + 1;
    t->n_strs++;
    return id;
}

/* ---- hf: the special tokens in HuggingFace's vocabulary ----------------------------------- */

/* The byte of GPT-2's byte-level character cp, or -1 if cp is none. */
static int byte_of_char(uint32_t cp) {
    if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255)) return (int)cp;
    if (cp < 256 || cp >= 256 + 68) return -1;
    uint32_t k = cp - 256; /* the k-th byte that is not its own character */
    for (uint32_t b = 0; b < 256; b++) {
        int self = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
        if (!self && k-- == 0) return (int)b;
    }
    return -1;
}

/* The special whose text is the byte-level string of bytes p[0..n), or SIZE_MAX. */
static size_t special_with_bytes(const st_trainer *t, const uint8_t *p, size_t n) {
    if (!t->spec_len) return SIZE_MAX;
    for (size_t i = 0; i < t->n_specials; i++)
        if (t->spec_len[i] == n && st__memcmp(t->spec_bytes + t->spec_off[i], p, n) == 0) return i;
    return SIZE_MAX;
}

/* The most merges the written rules model has ids for (its limit of 2^21 - 2, less the base
 * symbols and the special tokens): a trainer's target is capped there. */
static size_t merges_limit(const st_trainer *t) { return ((size_t)1 << 21) - 2 - t->base - t->n_specials; }

st_status st_trainer_set_specials(st_trainer *t, const char *specials, const size_t *ends, size_t n, st_error *err) {
    st__error_clear(err);
    if (!t || (n && (!specials || !ends)))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer, specials or ends is NULL");
    if (n != t->n_specials) {
        st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "n is ");
        st__error_append_u64(err, n);
        st__error_append(err, " but the trainer was made for ");
        st__error_append_u64(err, t->n_specials);
        st__error_append(err, " special tokens");
        return ST_ERR_INVALID_ARGUMENT;
    }
    if (t->n_merges || t->specials_set)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "the special tokens are given once, before the first step");
    for (size_t i = 0; i < n; i++) {
        size_t s0 = i ? ends[i - 1] : 0;
        if (ends[i] <= s0) {
            st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "a special token is empty (or ends decrease)");
            st__error_line(err, 0, 1);
            return ST_ERR_INVALID_ARGUMENT;
        }
        st_error e2;
        if (st_utf8_validate(specials + s0, ends[i] - s0, &e2) != ST_OK) {
            st__error_set(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, s0 + e2.offset, "a special token is not valid UTF-8");
            st__error_line(err, 0, 1);
            return ST_ERR_INVALID_UTF8;
        }
    }
    size_t total = n ? ends[n - 1] : 0;
    if (t->mode != ST_TRAIN_HF) { t->specials_set = 1; return ST_OK; } /* paper: texts play no part */
    t->spec_off = (size_t *)talloc(t, (n ? n : 1) * sizeof *t->spec_off);
    t->spec_len = (size_t *)talloc(t, (n ? n : 1) * sizeof *t->spec_len);
    t->spec_bytes = (uint8_t *)talloc(t, total ? total : 1);
    if (t->oom) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    t->spec_bytes_len = total;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        size_t s0 = i ? ends[i - 1] : 0, k = s0;
        t->spec_off[i] = pos;
        t->spec_len[i] = 0;
        while (k < ends[i]) {
            uint32_t cp;
            k += st__utf8_decode((const uint8_t *)specials + k, &cp);
            int b = byte_of_char(cp);
            if (b < 0) { t->spec_len[i] = SIZE_MAX; break; }
            t->spec_bytes[pos + t->spec_len[i]++] = (uint8_t)b;
        }
        if (t->spec_len[i] != SIZE_MAX) pos += t->spec_len[i];
    }
    /* HuggingFace's ids: the specials first, then the byte-level characters by code point, each
     * taking a special's id when the special has its string (the vocabulary then holds one less) */
    uint32_t rank[256], order[256];
    hf_byte_ranks(rank);
    for (uint32_t b = 0; b < 256; b++) order[rank[b]] = b;
    uint64_t next = n;
    for (uint32_t r = 0; r < 256; r++) {
        uint8_t b = (uint8_t)order[r];
        size_t sp = special_with_bytes(t, &b, 1);
        t->hf_key[b] = sp != SIZE_MAX ? (uint32_t)sp : (uint32_t)next++;
    }
    t->hf_vocab = next;
    t->target = t->vocab_size > next ? t->vocab_size - next : 0;
    /* every merge still takes an id of the written rules model: its limit caps the target as
     * st_trainer_new's does (else an hf trainer asked for more would train past the limit and
     * fail only when the model is written) */
    uint64_t limit = merges_limit(t);
    t->capped = t->target > limit;
    if (t->capped) t->target = limit;
    t->specials_set = 1;
    /* the heap was ordered with the old ids: order it again */
    for (size_t i = t->heap_n / 2; i-- > 0;) heap_down(t, i);
    return ST_OK;
}

/* The heap made anew: one entry of its live count for each pair above 0; 0 when out of memory. */
static int heap_of_pairs(st_trainer *t) {
    if (!grow(t, (void **)&t->heap, &t->heap_cap, t->n_pairs ? t->n_pairs : 1, sizeof *t->heap, 1)) return 0;
    t->heap_n = 0;
    for (size_t i = 0; i < t->n_pairs; i++) {
        if (t->pairs[i].count <= 0) continue;
        t->heap[t->heap_n].count = (uint64_t)t->pairs[i].count;
        t->heap[t->heap_n++].pair = (uint32_t)i;
    }
    for (size_t i = t->heap_n / 2; i-- > 0;) heap_down(t, i);
    return 1;
}

/* ---- phase 2: a first pass counting the pairs ------------------------------------------------
 * Where phase 2 drops pairs (prune_pairs), its start counts every pair first in a table of keys
 * and counts alone (16 bytes a slot), then makes the records, word lists and heap entries of the
 * pairs above prune_at only: the table of every pair with a list each, made and then dropped,
 * had been the training's peak (1.9 million pairs on the whole English file, 29,036 kept). */
static uint64_t tally_slot(uint64_t key, size_t mask) { return st__mix64(key) & mask; }

static int tally_grow(st_trainer *t, size_t nslots) {
    uint64_t *k = (uint64_t *)talloc(t, nslots * sizeof *k), *c = (uint64_t *)talloc(t, nslots * sizeof *c);
    if (!k || !c) {
        if (k) tfree(t, k, nslots * sizeof *k);
        if (c) tfree(t, c, nslots * sizeof *c);
        return 0;
    }
    st__memset(k, 0, nslots * sizeof *k);
    for (size_t i = 0; t->tally_keys && i <= t->tally_mask; i++) {
        if (!t->tally_keys[i]) continue;
        size_t s = tally_slot(t->tally_keys[i] - 1, nslots - 1);
        while (k[s]) s = (s + 1) & (nslots - 1);
        k[s] = t->tally_keys[i];
        c[s] = t->tally_counts[i];
    }
    if (t->tally_keys) {
        tfree(t, t->tally_keys, (t->tally_mask + 1) * sizeof *t->tally_keys);
        tfree(t, t->tally_counts, (t->tally_mask + 1) * sizeof *t->tally_counts);
    }
    t->tally_keys = k;
    t->tally_counts = c;
    t->tally_mask = nslots - 1;
    return 1;
}

/* Add count to the pair key (ids below 2^21: key + 1 never wraps); 0 when out of memory. */
static int tally_add(st_trainer *t, uint64_t key, uint64_t count) {
    size_t s = tally_slot(key, t->tally_mask);
    for (; t->tally_keys[s]; s = (s + 1) & t->tally_mask)
        if (t->tally_keys[s] == key + 1) {
            t->tally_counts[s] += count;
            return 1;
        }
    if ((t->tally_n + 1) * 10 > (t->tally_mask + 1) * 7) {
        if (!tally_grow(t, 2 * (t->tally_mask + 1))) return 0;
        s = tally_slot(key, t->tally_mask);
        while (t->tally_keys[s]) s = (s + 1) & t->tally_mask;
    }
    t->tally_keys[s] = key + 1;
    t->tally_counts[s] = count;
    t->tally_n++;
    return 1;
}

static uint64_t tally_count(const st_trainer *t, uint64_t key) {
    for (size_t s = tally_slot(key, t->tally_mask); t->tally_keys[s]; s = (s + 1) & t->tally_mask)
        if (t->tally_keys[s] == key + 1) return t->tally_counts[s];
    return 0;
}

static void tally_free(st_trainer *t) {
    if (!t->tally_keys) return;
    tfree(t, t->tally_keys, (t->tally_mask + 1) * sizeof *t->tally_keys);
    tfree(t, t->tally_counts, (t->tally_mask + 1) * sizeof *t->tally_counts);
    t->tally_keys = t->tally_counts = NULL;
    t->tally_mask = t->tally_n = 0;
}

/* ---- phase 2: dropping the pairs no step can choose ---------------------------------------
 * While BOUNDLESS has regular merges left to replay, a supermerge must beat the next one's count
 * (super_step's bound), and when phase 1 made at least the target there are regular merges left
 * at every step: no pair of a count at or below the smallest regular merge's count (prune_at) is
 * ever chosen. A pair's count never rises in phase 2 once the pair exists: a supermerge joins
 * two adjacent tokens into a new one, so the pairs it makes all hold the new token, and every
 * other pair only loses occurrences. So such a pair can be forgotten for good: if a later
 * merge's delta makes it again, its count is at most 0 (it was above 0 before) and it is never
 * queued. On the whole English file (32,768) that is 98% of phase 2's 1.9 million starting pairs
 * (the ones left have counts above 57), and most of the 2.4 million it makes: their records,
 * table slots, word lists and heap entries were most of its memory. Pruning changes no step: the
 * heap is rebuilt with one entry per pair kept (the entries it held were, per pair, its live
 * count and stale ones above it), and a pair waiting for a regular merge that is dropped stays
 * off the heap when that merge is replayed. */
static int prune_pairs(st_trainer *t) {
    size_t n = t->n_pairs, kept = 0;
    uint32_t *to = (uint32_t *)talloc(t, (n ? n : 1) * sizeof *to);
    if (!to) return 0;
    for (size_t i = 0; i < n; i++) {
        st__pair *p = &t->pairs[i];
        if (p->count <= 0 || (uint64_t)p->count <= t->prune_at) {
            pair_free_words(t, p);
            to[i] = UINT32_MAX;
            continue;
        }
        to[i] = (uint32_t)kept;
        if (kept != i) t->pairs[kept] = *p;
        kept++;
    }
    t->n_pairs = kept;
    size_t slots = 64;
    while (slots < 2 * kept) slots <<= 1; /* the table's load stays under 7/10, as pair_get keeps it */
    if (!pair_rehash(t, slots)) {
        tfree(t, to, (n ? n : 1) * sizeof *to);
        return 0;
    }
    if (!heap_of_pairs(t)) {
        tfree(t, to, (n ? n : 1) * sizeof *to);
        return 0;
    }
    for (size_t e = 0; e < t->n_wait; e++) /* UINT32_MAX: dropped by an earlier pruning */
        if (t->wait_pair[e] != UINT32_MAX) t->wait_pair[e] = to[t->wait_pair[e]];
    tfree(t, to, (n ? n : 1) * sizeof *to);
    t->pruned_n = kept;
    return 1;
}

/* ---- the trainer ------------------------------------------------------------------------- */

/* The pairs a pruned SuperBPE keeps made at a time: four per step left, and 65,536 (a few MB:
 * the whole English file's 3,276 supermerges took them from 104,456 pairs above a count of 15, with
 * no second pass). The test builds keep 2, so that the vectors' corpora run out of pairs above
 * the threshold and make them again lower, step after step. */
#ifdef ST_TEST_COUNTERS
#define ST__KEEP_PAIRS(left) ((void)(left), 2)
#else
#define ST__KEEP_PAIRS(left) (4 * (left) + 65536)
#endif
static uint64_t keep_pairs(const st_trainer *t) { return ST__KEEP_PAIRS(t->steps - t->n_super); }

/* SuperBPE's threshold from the first pass's counts: the largest 2^k - 1 below the one before
 * (below any, the first time) with at least keep_pairs pairs counted above it; 0 (every live pair
 * made) when there is none, or when it would not be above the steps' own bound. */
static void choose_prune_at(st_trainer *t, uint64_t before, uint64_t bound) {
    size_t by_bits[65] = {0}; /* pairs by the bit length of their count */
    for (size_t i = 0; i <= t->tally_mask; i++)
        if (t->tally_keys[i]) {
            unsigned bits = 0;
            for (uint64_t c = t->tally_counts[i]; c; c >>= 1) bits++;
            by_bits[bits]++;
        }
    uint64_t want = keep_pairs(t), above = 0, at = 0;
    for (int k = 63; k >= 0; k--) {
        above += by_bits[k + 1]; /* pairs with a count of 2^k or more */
        uint64_t x = ((uint64_t)1 << k) - 1;
        if (above >= want && x < before) {
            at = x;
            break;
        }
    }
    t->prune_at = at > bound ? at : 0;
}

/* The pairs of every word and the heap of them all; pruned: every pair counted first, then made
 * above prune_at only (SuperBPE: prune_at chosen from those counts, below before). 0 when out of
 * memory. */
static int build_pairs(st_trainer *t, uint64_t before) {
    /* Distinct pairs are at most the symbols: a small corpus gets a small table (clearing 64K
     * slots costs an interpreter like pywasm seconds); the table grows as pairs come. */
    size_t slots = 64;
    while (slots < (1u << 16) && slots < 2 * (size_t)t->sym_cap) slots <<= 1;
    if (!pair_rehash(t, slots)) return 0;
    t->skip_key = UINT64_MAX;
    for (int pass = t->prune ? 0 : 1; pass < 2; pass++) {
        if (pass == 0 && !tally_grow(t, slots)) return 0;
        if (pass == 1 && t->prune && t->algorithm == ST_ALGORITHM_SUPERBPE)
            choose_prune_at(t, before, t->min_frequency ? t->min_frequency - 1 : 0);
        t->tally_filter = pass;
        /* phase 2 counts its pairs before the words' offsets are made (words_index): read in order */
        uint64_t off = 0;
        for (size_t w = 0; w < t->n_words; w++) {
            contributions(t, t->sym + (t->woff ? t->woff[w] : off), 0, t->wlen[w], +1, (uint32_t)w);
            off += t->wlen[w];
            flush_deltas(t, (uint32_t)w);
            if (t->oom) {
                tally_free(t);
                return 0;
            }
        }
    }
    tally_free(t);
    t->n_touched = 0;
    if (!heap_of_pairs(t)) return 0;
    t->pruned_n = t->n_pairs;
    return 1;
}

/* A pruned SuperBPE whose pairs above prune_at are all taken: every pair of the words as they are
 * now, counted again, and made above a lower threshold. 0 when out of memory. */
static int rebuild_pairs(st_trainer *t) { /* SuperBPE's only: no pair waits for a merge there */
    for (size_t i = 0; i < t->n_pairs; i++) pair_free_words(t, &t->pairs[i]);
    t->n_pairs = 0;
    return build_pairs(t, t->prune_at);
}

/* The scratch, the pair table and the heap of the words t->sym holds (phase 1's pretokens, or
 * phase 2's candidates); 0 when out of memory. */
static int init_pairs(st_trainer *t) {
    size_t maxlen = 2;
    for (size_t w = 0; w < t->n_words; w++)
        if (t->wlen[w] > maxlen) maxlen = t->wlen[w];
    t->scratch_cap = maxlen;
    t->sites = (uint32_t *)talloc(t, maxlen * sizeof *t->sites);
    t->window = (uint32_t *)talloc(t, maxlen * sizeof *t->window);
    if (t->oom) return 0;
    /* phase 2 leaves out the pairs at or below prune_at (prune_pairs): BOUNDLESS with phase 1 at
     * the target, below every step's bound (the smallest regular merge's count, and
     * min_frequency's); SuperBPE, a threshold of its own chosen from the counts and lowered when
     * the pairs above it are used up */
    t->prune = t->phase == 2 && ((t->algorithm == ST_ALGORITHM_BOUNDLESS && t->made && t->made >= t->target) ||
                                 t->algorithm == ST_ALGORITHM_SUPERBPE);
    /* not for words too few to make the pairs it keeps: the first pass would only cost time (an
     * interpreter like pywasm trains the vectors' corpora) */
    if (t->sym_cap <= (t->algorithm == ST_ALGORITHM_SUPERBPE ? keep_pairs(t) : ST__KEEP_PAIRS(0))) t->prune = 0;
    if (t->prune && t->algorithm == ST_ALGORITHM_BOUNDLESS) {
        t->prune_at = t->min_frequency ? t->min_frequency - 1 : 0;
        uint64_t least = UINT64_MAX;
        for (size_t j = 0; j < t->made; j++)
            if (t->counts[j] < least) least = t->counts[j];
        if (least > t->prune_at) t->prune_at = least;
    }
    t->step_no = 1;
    return build_pairs(t, UINT64_MAX);
}


void st_trainer_free(st_trainer *t) {
    if (!t) return;
    tfree(t, t->sym, t->sym_cap * sizeof *t->sym);
    tfree(t, t->woff, t->words_cap * sizeof *t->woff);
    tfree(t, t->wcount, t->words_cap * sizeof *t->wcount);
    tfree(t, t->wlen, t->words_cap * sizeof *t->wlen);
    tfree(t, t->wstamp, t->words_cap * sizeof *t->wstamp);
    tfree(t, t->seq, t->seq_cap);
    tfree(t, t->tok_off, t->tok_cap * sizeof *t->tok_off);
    tfree(t, t->tok_len, t->tok_cap * sizeof *t->tok_len);
    tfree(t, t->hf_key, t->tok_cap * sizeof *t->hf_key);
    if (t->spec_off) tfree(t, t->spec_off, (t->n_specials ? t->n_specials : 1) * sizeof *t->spec_off);
    if (t->spec_len) tfree(t, t->spec_len, (t->n_specials ? t->n_specials : 1) * sizeof *t->spec_len);
    if (t->spec_bytes) tfree(t, t->spec_bytes, t->spec_bytes_len);
    if (t->str_slots) tfree(t, t->str_slots, (t->str_mask + 1) * sizeof *t->str_slots);
    for (size_t i = 0; i < t->n_pairs; i++) pair_free_words(t, &t->pairs[i]);
    tfree(t, t->pairs, t->pairs_cap * sizeof *t->pairs);
    if (t->pvals) {
        tfree(t, t->pkeys, (t->pmask + 1) * sizeof *t->pkeys);
        tfree(t, t->pvals, (t->pmask + 1) * sizeof *t->pvals);
    }
    tfree(t, t->heap, t->heap_cap * sizeof *t->heap);
    if (t->sites) tfree(t, t->sites, t->scratch_cap * sizeof *t->sites);
    if (t->window) tfree(t, t->window, t->scratch_cap * sizeof *t->window);
    tfree(t, t->touched, t->touched_cap * sizeof *t->touched);
    if (t->merges) tfree(t, t->merges, 2 * t->merges_cap * sizeof *t->merges);
    if (t->counts) tfree(t, t->counts, t->merges_cap * sizeof *t->counts);
    if (t->super) tfree(t, t->super, 2 * t->super_cap * sizeof *t->super);
    if (t->super_counts) tfree(t, t->super_counts, t->super_cap * sizeof *t->super_counts);
    if (t->super_out) tfree(t, t->super_out, 2 * t->super_out_cap * sizeof *t->super_out);
    if (t->wait_head) tfree(t, t->wait_head, (t->made ? t->made : 1) * sizeof *t->wait_head);
    if (t->wait_pair) tfree(t, t->wait_pair, t->wait_cap * sizeof *t->wait_pair);
    if (t->wait_next) tfree(t, t->wait_next, t->wait_cap * sizeof *t->wait_next);
    if (t->seeds) tfree(t, t->seeds, 2 * t->n_seeds * sizeof *t->seeds);
    st_counter_free(t->pass);
    st_allocator a = t->alloc;
    st__free(&a, t, sizeof *t);
}

static st_status fail(st_trainer *t, st_trainer **out, st_status st, st_error *err, const char *msg) {
    st_trainer_free(t);
    *out = NULL;
    return st__error_set(err, st, ST_UNIT_NONE, 0, msg);
}

st_status st_trainer_new(const st_counter *counter, int mode, int alphabet, uint64_t vocab_size,
                         uint64_t min_frequency, size_t n_specials, const st_allocator *alloc, st_trainer **out,
                         st_error *err) {
    st__error_clear(err);
    if (!out) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "out is NULL");
    *out = NULL;
    if (!counter) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter is NULL");
    if (counter->cand)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "a candidates counter goes back to its trainer (st_trainer_candidates_add), not to st_trainer_new");
    if (mode != ST_TRAIN_PAPER && mode != ST_TRAIN_HF)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "mode is neither ST_TRAIN_PAPER nor ST_TRAIN_HF");
    if (alphabet != ST_ALPHABET_BYTES && alphabet != ST_ALPHABET_UBE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "alphabet is neither bytes nor UBE");
    if (mode == ST_TRAIN_HF && alphabet == ST_ALPHABET_UBE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "mode hf is HuggingFace's byte-level trainer: bytes alphabet only, not UBE");
    st_allocator a;
    st__allocator_init(&a, alloc);
    st_trainer *t = (st_trainer *)st__alloc(&a, sizeof *t);
    if (!t) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(t, 0, sizeof *t);
    t->alloc = a;
    t->mode = mode;
    t->alphabet = alphabet;
    t->base = alphabet == ST_ALPHABET_UBE ? 512 : 256;
    t->vocab_size = vocab_size;
    t->min_frequency = min_frequency;
    t->n_specials = n_specials;
    t->pt = counter->pt;
    t->n_pretokens = counter->n;
    uint8_t mark[512];
    t->alphabet_size = mode == ST_TRAIN_HF ? 256 : reachable(alphabet, mark);
    if (vocab_size < t->alphabet_size || vocab_size - t->alphabet_size < n_specials) {
        st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "vocab_size ");
        st__error_append_u64(err, vocab_size);
        st__error_append(err, " is below the alphabet (");
        st__error_append_u64(err, t->alphabet_size);
        st__error_append(err, ") plus the special tokens (");
        st__error_append_u64(err, n_specials);
        st__error_append(err, ")");
        st_trainer_free(t);
        return ST_ERR_INVALID_ARGUMENT;
    }
    t->target = vocab_size - t->alphabet_size - n_specials;
    if (t->target > merges_limit(t)) {
        t->target = merges_limit(t);
        t->capped = 1;
    }

    /* base tokens */
    t->tok_cap = t->base + 1024;
    t->tok_off = (uint64_t *)talloc(t, t->tok_cap * sizeof *t->tok_off);
    t->tok_len = (uint32_t *)talloc(t, t->tok_cap * sizeof *t->tok_len);
    t->hf_key = (uint32_t *)talloc(t, t->tok_cap * sizeof *t->hf_key);
    size_t sw = alphabet == ST_ALPHABET_UBE ? 2 : 1;
    t->seq_cap = 65536;
    t->seq = (uint8_t *)talloc(t, t->seq_cap);
    if (t->oom) return fail(t, out, ST_ERR_OUT_OF_MEMORY, err, NULL);
    uint32_t hf_rank[256];
    hf_byte_ranks(hf_rank);
    for (uint32_t b = 0; b < t->base; b++) {
        t->tok_off[b] = t->seq_len;
        t->tok_len[b] = (uint32_t)sw;
        if (sw == 2) { t->seq[t->seq_len++] = (uint8_t)(b >> 8); t->seq[t->seq_len++] = (uint8_t)b; }
        else t->seq[t->seq_len++] = (uint8_t)b;
        t->hf_key[b] = b < 256 ? (uint32_t)n_specials + hf_rank[b] : b;
    }
    t->hf_vocab = n_specials + 256;

    /* words: the distinct pretokens of two or more symbols (a symbol alone holds no pair) */
    size_t n = st__counter_size(counter), nw = 0, nsym = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint64_t c;
        st__counter_entry(counter, i, &len, &c);
        if (len >= 2) { nw++; nsym += len; } /* UBE gives at most one symbol per byte */
    }
    if (nw > 0xFFFFFFFEu) return fail(t, out, ST_ERR_INVALID_ARGUMENT, err, "more than 2^32 - 2 distinct pretokens");
    t->sym_cap = nsym;
    t->sym = (uint32_t *)talloc(t, nsym * sizeof *t->sym);
    t->woff = (uint64_t *)talloc(t, nw * sizeof *t->woff);
    t->wcount = (uint64_t *)talloc(t, nw * sizeof *t->wcount);
    t->wlen = (uint32_t *)talloc(t, nw * sizeof *t->wlen);
    t->wstamp = (uint32_t *)talloc(t, nw * sizeof *t->wstamp);
    t->words_cap = nw;
    t->phase = 1;
    if (t->oom) return fail(t, out, ST_ERR_OUT_OF_MEMORY, err, NULL);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint64_t c;
        const uint8_t *p = st__counter_entry(counter, i, &len, &c);
        if (len < 2) continue;
        size_t start = pos;
        if (alphabet == ST_ALPHABET_BYTES) {
            for (size_t k = 0; k < len; k++) t->sym[pos++] = p[k];
        } else {
            for (size_t k = 0; k < len;) {
                uint16_t sy[4];
                size_t cl, m = st__ube_char_symbols(p + k, sy, &cl);
                for (size_t q = 0; q < m; q++) t->sym[pos++] = sy[q];
                k += cl;
            }
        }
        if (pos - start < 2) { pos = start; continue; }
        t->woff[t->n_words] = start;
        t->wlen[t->n_words] = (uint32_t)(pos - start);
        t->wcount[t->n_words] = c;
        t->wstamp[t->n_words] = 0;
        t->n_words++;
    }

    if (!init_pairs(t)) return fail(t, out, ST_ERR_OUT_OF_MEMORY, err, NULL);
    *out = t;
    return ST_OK;
}

/* Base symbol k of token id (bytes: its byte; UBE: its 2 big-endian bytes). */
static uint32_t tok_symbol(const st_trainer *t, uint32_t id, size_t k) {
    const uint8_t *p = t->seq + t->tok_off[id];
    return t->base == 512 ? ((uint32_t)p[2 * k] << 8) | p[2 * k + 1] : p[k];
}

/* Whether the token of x then y breaks an extension's constraints (st_trainer_set_seed_merges):
 * more than max_words words (maximal runs of symbols other than ' '), or ':' then ' '. Both
 * depend on the token's symbols only, so a pair blocked once is blocked for good. */
static int breaks_constraints(const st_trainer *t, uint32_t x, uint32_t y) {
    size_t sw = t->base == 512 ? 2 : 1;
    uint32_t words = 0, prev = ' ';
    for (int part = 0; part < 2; part++) {
        uint32_t id = part ? y : x;
        size_t n = t->tok_len[id] / sw;
        for (size_t k = 0; k < n; k++) {
            uint32_t c = tok_symbol(t, id, k);
            if (c != ' ' && prev == ' ') words++;
            if (t->colon_space && c == ' ' && prev == ':') return 1;
            prev = c;
        }
    }
    return t->max_words && words > t->max_words;
}

/* The best live pair, popped; UINT32_MAX when none is left. After the seed merges of an
 * extension, a pair that breaks its constraints is dropped (and marked, so it is never queued
 * again). */
static uint32_t pop_best(st_trainer *t) {
    while (t->heap_n) {
        st__heap_entry top = t->heap[0];
        t->heap[0] = t->heap[--t->heap_n];
        if (t->heap_n) heap_down(t, 0);
        st__pair *p = &t->pairs[top.pair];
        int64_t live = p->count;
        if (live <= 0 || p->blocked) continue;
        if ((uint64_t)live != top.count) {
            if (!heap_push(t, top.pair, (uint64_t)live)) return UINT32_MAX;
            continue;
        }
        if (t->extend && breaks_constraints(t, p->left, p->right)) {
            p->blocked = 1;
            t->n_blocked++;
            continue;
        }
        return top.pair;
    }
    return UINT32_MAX;
}

/* Room in the token table for id. */
static int ensure_token(st_trainer *t, uint32_t id) {
    size_t need = (size_t)id + 1;
    if (need <= t->tok_cap) return 1;
    size_t cap = t->tok_cap * 2;
    while (cap < need) cap *= 2;
    uint64_t *o = (uint64_t *)talloc(t, cap * sizeof *o);
    uint32_t *l = (uint32_t *)talloc(t, cap * sizeof *l);
    uint32_t *h = (uint32_t *)talloc(t, cap * sizeof *h);
    if (!o || !l || !h) {
        if (o) tfree(t, o, cap * sizeof *o);
        if (l) tfree(t, l, cap * sizeof *l);
        if (h) tfree(t, h, cap * sizeof *h);
        return 0;
    }
    st__memcpy(o, t->tok_off, t->tok_cap * sizeof *o);
    st__memcpy(l, t->tok_len, t->tok_cap * sizeof *l);
    st__memcpy(h, t->hf_key, t->tok_cap * sizeof *h);
    tfree(t, t->tok_off, t->tok_cap * sizeof *o);
    tfree(t, t->tok_len, t->tok_cap * sizeof *l);
    tfree(t, t->hf_key, t->tok_cap * sizeof *h);
    t->tok_off = o;
    t->tok_len = l;
    t->hf_key = h;
    t->tok_cap = cap;
    return 1;
}

/* The bytes of the tokens made by the rules of the model written now (st_trainer_write_model:
 * phase 1's merges; in phase 2 the kept regular merges and the supermerges). seq holds the base
 * symbols, then each token made, in the order made: phase 1's merges, then the supermerges. */
static uint64_t written_token_bytes(const st_trainer *t) {
    uint64_t start = (uint64_t)t->base * (t->alphabet == ST_ALPHABET_UBE ? 2 : 1);
    if (t->phase != 2) return t->seq_len - start;
    size_t last = t->base + t->made - 1;
    uint64_t end1 = t->made ? t->tok_off[last] + t->tok_len[last] : start;
    uint64_t kept = t->next_merge < t->made ? t->tok_off[t->base + t->next_merge] : end1;
    return (kept - start) + (t->seq_len - end1);
}

/* Token id (internal) spells x's base symbols then y's; 0 when out of memory, or when the
 * token would take the model past the loader's limit on token bytes (ST_RULES_TOKEN_BYTES_BASE):
 * training stops there, so every model it writes loads. */
static int make_token(st_trainer *t, uint32_t x, uint32_t y, uint32_t id) {
    if (!ensure_token(t, id)) return 0;
    size_t lx = t->tok_len[x], ly = t->tok_len[y];
    uint64_t rules = (t->phase == 2 ? t->next_merge + t->n_super : t->n_merges) + 1;
    if (written_token_bytes(t) + lx + ly > st__rules_token_bytes_limit(rules)) {
        t->stop = ST_STOP_TOKEN_BYTES;
        return 0;
    }
    if (!grow(t, (void **)&t->seq, &t->seq_cap, t->seq_len + lx + ly, 1, 65536)) return 0;
    t->tok_off[id] = t->seq_len;
    t->tok_len[id] = (uint32_t)(lx + ly);
    st__memcpy(t->seq + t->seq_len, t->seq + t->tok_off[x], lx);
    st__memcpy(t->seq + t->seq_len + lx, t->seq + t->tok_off[y], ly);
    t->seq_len += lx + ly;
    return 1;
}

/* Replace pair pi by token nt in the words listed for it (the list is stable: only pairs
 * holding nt gain words), then queue the pairs that gained occurrences. */
static void apply_pair(st_trainer *t, uint32_t pi, uint32_t nt) {
    uint32_t x = t->pairs[pi].left, y = t->pairs[pi].right;
    t->step_no++;
    t->n_touched = 0;
    t->skip_key = ((uint64_t)x << 32) | y;
    /* merging adds pairs, which may move the pair array: a list kept in the record is copied */
    uint32_t two[2];
    uint32_t nwl = t->pairs[pi].n;
    const uint32_t *words = st__pair_words(&t->pairs[pi]);
    if (nwl <= 2) {
        st__memcpy(two, words, nwl * sizeof *two);
        words = two;
    }
    for (uint32_t k = 0; k < nwl; k++) {
        uint32_t w = words[k];
        if (t->wstamp[w] == t->step_no) continue;
        t->wstamp[w] = t->step_no;
        merge_word(t, w, x, y, nt);
    }
    t->skip_key = UINT64_MAX;
    st__pair *p = &t->pairs[pi]; /* the pair array may have moved */
    p->count = 0;
    pair_free_words(t, p);
    for (size_t k = 0; k < t->n_touched; k++) {
        st__pair *q = &t->pairs[t->touched[k]];
        if (q->count > 0 && !q->blocked) heap_push(t, t->touched[k], (uint64_t)q->count);
    }
}

/* Append (left, right, count) to a list of pairs (merges or supermerges: 2 ids and a count an
 * entry), doubling it from first entries; 0 when out of memory (the list is as before). */
static int push_pair(st_trainer *t, uint32_t **pairs, uint64_t **counts, size_t *n, size_t *cap, size_t first,
                     uint32_t left, uint32_t right, uint64_t count) {
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : first;
        uint32_t *p = (uint32_t *)talloc(t, 2 * c * sizeof *p);
        uint64_t *k = (uint64_t *)talloc(t, c * sizeof *k);
        if (!p || !k) {
            if (p) tfree(t, p, 2 * c * sizeof *p);
            if (k) tfree(t, k, c * sizeof *k);
            return 0;
        }
        if (*cap) {
            st__memcpy(p, *pairs, 2 * *n * sizeof *p);
            st__memcpy(k, *counts, *n * sizeof *k);
            tfree(t, *pairs, 2 * *cap * sizeof *p);
            tfree(t, *counts, *cap * sizeof *k);
        }
        *pairs = p;
        *counts = k;
        *cap = c;
    }
    (*pairs)[2 * *n] = left;
    (*pairs)[2 * *n + 1] = right;
    (*counts)[(*n)++] = count;
    return 1;
}

/* The next seed merge of an extension, replayed whatever its count (0 when the counted text never
 * holds the pair: its token is made all the same); 0 when out of memory or past a limit. Paper
 * mode only (st_trainer_set_seed_merges), so the new id is always the next one. */
static int seed_once(st_trainer *t) {
    uint32_t x = t->seeds[2 * t->n_merges], y = t->seeds[2 * t->n_merges + 1];
    uint32_t id = t->base + (uint32_t)t->n_merges;
    uint32_t pi = pair_get(t, ((uint64_t)x << 32) | y);
    if (pi == UINT32_MAX) return 0;
    int64_t live = t->pairs[pi].count;
    uint64_t count = live > 0 ? (uint64_t)live : 0;
    if (!make_token(t, x, y, id)) return 0;
    t->distinct++;
    if (!push_pair(t, &t->merges, &t->counts, &t->n_merges, &t->merges_cap, 1024, x, y, count)) return 0;
    if (count) apply_pair(t, pi, id);
    return !t->oom;
}

/* One merge; 0 when training is finished. */
static int merge_once(st_trainer *t) {
    if (t->mode == ST_TRAIN_HF ? t->hf_vocab >= t->vocab_size : t->distinct >= t->target) {
        t->stop = t->capped ? ST_STOP_LIMIT : ST_STOP_VOCAB_SIZE;
        return 0;
    }
    /* hf mode counts vocabulary entries, not merges, but every merge takes an id of the written
     * rules model all the same: the model format's limit stops it as it stops paper mode */
    if (t->mode == ST_TRAIN_HF && t->capped && t->n_merges >= t->target) {
        t->stop = ST_STOP_LIMIT;
        return 0;
    }
    if (t->n_merges < t->n_seeds) return seed_once(t);
    uint32_t pi = pop_best(t);
    if (pi == UINT32_MAX) {
        if (!t->oom) t->stop = ST_STOP_NO_PAIR;
        for (size_t i = 0; t->n_blocked && i < t->n_pairs; i++) /* pairs are left, all ruled out */
            if (t->pairs[i].blocked && t->pairs[i].count > 0) {
                t->stop = ST_STOP_CONSTRAINTS;
                break;
            }
        return 0;
    }
    st__pair *p = &t->pairs[pi];
    uint64_t count = (uint64_t)p->count;
    if (count < t->min_frequency) {
        heap_push(t, pi, count); /* left as it was: a later step stops here again */
        t->stop = ST_STOP_MIN_FREQUENCY;
        return 0;
    }
    uint32_t x = p->left, y = p->right;
    uint32_t id = t->base + (uint32_t)t->n_merges;
    if (!make_token(t, x, y, id)) return 0;
    uint32_t nt = id;
    if (t->mode == ST_TRAIN_HF) {
        nt = str_find_or_add(t, id);
        if (t->oom) return 0;
        if (nt == id) {
            /* a new string: a special's id when it spells a special's text, else the next id */
            size_t sp = special_with_bytes(t, t->seq + t->tok_off[id], t->tok_len[id]);
            if (sp != SIZE_MAX) t->hf_key[id] = (uint32_t)sp;
            else t->hf_key[id] = (uint32_t)t->hf_vocab++;
        }
    }
    if (nt == id) t->distinct++;
    else t->reused++;
    if (!push_pair(t, &t->merges, &t->counts, &t->n_merges, &t->merges_cap, 1024, x, y, count)) return 0;

    apply_pair(t, pi, nt);
    return !t->oom;
}

/* ---- phase 2: superwords (docs/design.md §8) ------------------------------------------------
 * The engine above, on new words: the candidates as sequences of phase-1 token ids (one per
 * pretoken). Pairs are counted and ordered as phase 1's (paper mode), a supermerge is a merge
 * whose new token spells both parts' symbols, and the regular merges are replayed by index:
 * replaying one changes no candidate (each pretoken is one token already), it only makes its
 * token available as a supermerge part. */

/* Drop phase 1's words and pairs. */
static void free_words_and_pairs(st_trainer *t) {
    tfree(t, t->sym, t->sym_cap * sizeof *t->sym);
    tfree(t, t->woff, t->words_cap * sizeof *t->woff);
    tfree(t, t->wcount, t->words_cap * sizeof *t->wcount);
    tfree(t, t->wlen, t->words_cap * sizeof *t->wlen);
    tfree(t, t->wstamp, t->words_cap * sizeof *t->wstamp);
    t->sym = NULL;
    t->woff = t->wcount = NULL;
    t->wlen = t->wstamp = NULL;
    t->sym_cap = t->n_words = t->words_cap = 0;
    for (size_t i = 0; i < t->n_pairs; i++) pair_free_words(t, &t->pairs[i]);
    tfree(t, t->pairs, t->pairs_cap * sizeof *t->pairs);
    t->pairs = NULL;
    t->n_pairs = t->pairs_cap = 0;
    if (t->pvals) {
        tfree(t, t->pkeys, (t->pmask + 1) * sizeof *t->pkeys);
        tfree(t, t->pvals, (t->pmask + 1) * sizeof *t->pvals);
    }
    t->pkeys = NULL;
    t->pvals = NULL;
    t->pmask = 0;
    tfree(t, t->heap, t->heap_cap * sizeof *t->heap);
    t->heap = NULL;
    t->heap_n = t->heap_cap = 0;
    if (t->sites) tfree(t, t->sites, t->scratch_cap * sizeof *t->sites);
    if (t->window) tfree(t, t->window, t->scratch_cap * sizeof *t->window);
    t->sites = t->window = NULL;
    t->scratch_cap = 0;
}

/* The regular merges an algorithm keeps of a finished phase 1 (checked by the callers). */
uint64_t st__trainer_kept(const st_trainer *t, int algorithm, uint64_t supermerges) {
    if (algorithm == ST_ALGORITHM_BOUNDLESS) return t->n_merges;
    uint64_t room = t->target > supermerges ? t->target - supermerges : 0;
    return t->n_merges < room ? t->n_merges : room;
}

/* Why (algorithm, supermerges) cannot start from this trainer, or NULL. */
const char *st__superword_args_error(const st_trainer *t, int algorithm, uint64_t supermerges) {
    if (t->mode == ST_TRAIN_HF)
        return "superwords need mode paper: HuggingFace's trainer (mode hf) has no superwords to match";
    if (algorithm != ST_ALGORITHM_BOUNDLESS && algorithm != ST_ALGORITHM_SUPERBPE)
        return "algorithm must be ST_ALGORITHM_BOUNDLESS or ST_ALGORITHM_SUPERBPE";
    if (t->phase != 1) return "phase 2 has started already";
    if (!t->done) return "phase 1 is not finished (step until ST_TRAINER_DONE)";
    if (algorithm == ST_ALGORITHM_SUPERBPE && supermerges > t->target)
        return "supermerges is more than the merges the vocabulary size leaves (ST_TRAINER_TARGET)";
    if (t->oom) return "the trainer ran out of memory";
    return NULL;
}

st_status st__counter_new_candidates(const st_trainer *t, int algorithm, uint64_t supermerges,
                                     const st_allocator *alloc, st_counter **out, st_error *err) {
    st__error_clear(err);
    if (!out || !t) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out is NULL");
    *out = NULL;
    const char *why = st__superword_args_error(t, algorithm, supermerges);
    if (why) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why);
    uint64_t kept = st__trainer_kept(t, algorithm, supermerges);
    return st__counter_new_cand(&t->pt, algorithm, t->alphabet, supermerges, kept,
                                st__vocab_fingerprint(t->alphabet, t->merges, kept), t->seq, t->tok_off, t->tok_len,
                                t->base + (uint32_t)kept, alloc, out, err);
}

/* Phase 2's word offsets (from the lengths) and stamps, once the candidates are freed and the
 * pairs counted (build_pairs reads the words in order without them); 0 when out of memory. */
static int words_index(st_trainer *t) {
    t->woff = (uint64_t *)talloc(t, t->words_cap * sizeof *t->woff);
    t->wstamp = (uint32_t *)talloc(t, t->words_cap * sizeof *t->wstamp);
    if (!t->woff || !t->wstamp) return 0;
    uint64_t pos = 0;
    for (size_t w = 0; w < t->n_words; w++) {
        t->woff[w] = pos;
        pos += t->wlen[w];
    }
    st__memset(t->wstamp, 0, t->words_cap * sizeof *t->wstamp);
    return 1;
}

/* Phase 2's words from the candidates, phase 1's words and pairs dropped (st__trainer_start_superwords
 * without its pair table: close_pass frees the candidates before making it). A refusal leaves
 * phase 1 as it was; ST_OK leaves init_pairs to the caller. */
static st_status superwords_words(st_trainer *t, const st_counter *cands, st_counter *consume, int algorithm,
                                  uint64_t supermerges, st_error *err) {
    st__error_clear(err);
    if (!t || !cands) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or candidates is NULL");
    const char *why = st__superword_args_error(t, algorithm, supermerges);
    if (why) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why);
    const st__cand *cd = cands->cand;
    if (!cd)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "candidates: a pretoken counter, not a candidates counter (st_trainer_candidates_new)");
    if (cd->algorithm != algorithm)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the candidates were made for another algorithm");
    if (algorithm == ST_ALGORITHM_SUPERBPE && cd->supermerges != supermerges)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "the candidates were made for another number of supermerges");
    uint64_t kept = st__trainer_kept(t, algorithm, supermerges);
    if (cd->alphabet != t->alphabet || cd->kept != kept ||
        cd->fingerprint != st__vocab_fingerprint(t->alphabet, t->merges, kept))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "the candidates were made from another vocabulary (another trainer or corpus)");
    if (!st__pretokenizers_equal(&cands->pt, &t->pt))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "the candidates were made with another pre-tokenizer");
    /* the candidates as token ids, built aside: a refusal leaves phase 1 as it was */
    size_t n = st__counter_size(cands), nsym = 0, maxlen = 0; /* maxlen: the longest pretoken of a candidate */
    if (n > 0xFFFFFFFEu) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "more than 2^32 - 2 candidates");
    size_t nw = n ? n : 1;
    uint32_t *wlen = (uint32_t *)st__alloc(&t->alloc, nw * sizeof *wlen);
    if (!wlen) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint64_t c;
        const uint8_t *p = st__counter_entry(cands, i, &len, &c);
        wlen[i] = 0;
        for (size_t s0 = 0, k = 0; k <= len; k++) /* its pretokens: symbols, and the longest for UBE's scratch */
            if (k == len || p[k] == ST__CAND_SEP) {
                wlen[i]++;
                if (k - s0 > maxlen) maxlen = k - s0;
                s0 = k + 1;
            }
        nsym += wlen[i];
    }
    /* consumed: read from the last candidate back, the counter shrunk behind the reading (where
     * the allocator gives memory back), so the candidates and the words are never both whole */
    if (consume && (consume != cands || !st__realloc_gives_back(&consume->alloc) || !st__counter_keys_in_order(consume)))
        consume = NULL;
    st__tokset ts;
    if (!st__tokset_init(&ts, &t->alloc, t->alphabet, t->seq, t->tok_off, t->tok_len, t->base + (uint32_t)kept) ||
        !st__tokset_reserve(&ts, &t->alloc, maxlen)) { /* no allocation once the reading starts */
        st__tokset_free(&ts, &t->alloc);
        st__free(&t->alloc, wlen, nw * sizeof *wlen);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    /* the words' offsets and stamps come after the candidates are gone (words_index): while the
     * candidates are read they would only add to the peak */
    uint32_t *sym = (uint32_t *)st__alloc(&t->alloc, (nsym ? nsym : 1) * sizeof *sym);
    uint64_t *wcount = (uint64_t *)st__alloc(&t->alloc, nw * sizeof *wcount);
    size_t made = t->n_merges;
    uint32_t *wait_head = (uint32_t *)st__alloc(&t->alloc, (made ? made : 1) * sizeof *wait_head);
    st_status st = ST_OK;
    if (!sym || !wcount || !wait_head)
        st = st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    size_t pos = 0, end = nsym;
    for (size_t r = 0; r < n && st == ST_OK; r++) {
        size_t i = consume ? n - 1 - r : r, len;
        uint64_t c;
        const uint8_t *p = st__counter_entry(cands, i, &len, &c);
        if (consume) /* word i's symbols end where word i + 1's begin */
            end = pos = end - wlen[i];
        wcount[i] = c;
        for (size_t s0 = 0, k = 0; k <= len; k++) {
            if (k < len && p[k] != ST__CAND_SEP) continue;
            int oom = 0;
            uint32_t id = st__tokset_find(&ts, &t->alloc, p + s0, k - s0, &oom);
            if (oom) { st = st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL); break; }
            if (id == ST__NO_TOKEN_ID) {
                st = st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i,
                                   "a candidate's pretoken is not a token of the vocabulary: ");
                st__error_append_quoted(err, p + s0, k - s0);
                break;
            }
            sym[pos++] = id;
            s0 = k + 1;
        }
        /* every few MiB of keys read, the counter gives them back */
        if (consume && st == ST_OK && consume->arena_len - st__entry_start(&consume->entries[i]) >= ST__COUNTER_GIVE_BACK)
            st__counter_truncate(consume, i);
    }
    st__tokset_free(&ts, &t->alloc);
    if (st != ST_OK && consume && st__counter_size(consume) < n) /* partly given back: no step can read it again */
        t->oom = 1;
    if (st != ST_OK) {
        if (sym) st__free(&t->alloc, sym, (nsym ? nsym : 1) * sizeof *sym);
        if (wcount) st__free(&t->alloc, wcount, nw * sizeof *wcount);
        st__free(&t->alloc, wlen, nw * sizeof *wlen);
        if (wait_head) st__free(&t->alloc, wait_head, (made ? made : 1) * sizeof *wait_head);
        return st;
    }
    free_words_and_pairs(t);
    t->sym = sym;
    t->sym_cap = nsym ? nsym : 1;
    t->wcount = wcount;
    t->wlen = wlen;
    t->n_words = n;
    t->words_cap = nw;
    st__memset(wait_head, 0, (made ? made : 1) * sizeof *wait_head);
    t->wait_head = wait_head;
    t->made = made;
    t->phase = 2;
    t->done = 0;
    t->stop1 = t->stop;
    t->stop = ST_STOP_RUNNING;
    t->algorithm = algorithm;
    t->supermerges_arg = algorithm == ST_ALGORITHM_SUPERBPE ? supermerges : 0;
    t->next_merge = algorithm == ST_ALGORITHM_SUPERBPE ? (size_t)kept : 0;
    t->steps = algorithm == ST_ALGORITHM_SUPERBPE ? supermerges : t->target;
    t->n_candidates = n;
    t->ngram_cmin = cd->ngram_cmin;
    t->ngram_max_len = cd->ngram_max_len;
    return ST_OK;
}

st_status st__trainer_start_superwords(st_trainer *t, const st_counter *cands, int algorithm, uint64_t supermerges,
                                       st_error *err) {
    st_status st = superwords_words(t, cands, NULL, algorithm, supermerges, err);
    if (st != ST_OK) return st;
    if (!init_pairs(t) || !words_index(t)) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    return ST_OK;
}

/* The regular merge whose replay a pair waits for (BOUNDLESS: a part made by a merge not yet
 * replayed, the later of two), or SIZE_MAX when both parts exist. */
static size_t pair_blocker(const st_trainer *t, uint32_t pi) {
    size_t b = SIZE_MAX;
    uint32_t part[2] = {t->pairs[pi].left, t->pairs[pi].right};
    for (int k = 0; k < 2; k++) {
        uint32_t x = part[k];
        if (x < t->base || x >= t->base + t->made) continue; /* a base symbol or a supermerge */
        size_t m = x - t->base;
        if (m >= t->next_merge && (b == SIZE_MAX || m > b)) b = m;
    }
    return b;
}

/* The best pair whose parts exist and whose count is above bound, popped (pairs found waiting
 * are parked by their blocker); UINT32_MAX when there is none. The bound keeps the search short:
 * while regular merges are left, a supermerge must beat the next one's count, and the pairs
 * below it stay in the heap unexamined (every live pair has an entry of its live count: a pair
 * is queued whenever its count rises, and entries above the live count are stale). */
static uint32_t pop_available(st_trainer *t, uint64_t bound) {
    while (t->heap_n && t->heap[0].count > bound) {
        st__heap_entry top = t->heap[0];
        t->heap[0] = t->heap[--t->heap_n];
        if (t->heap_n) heap_down(t, 0);
        uint32_t pi = top.pair;
        int64_t live = t->pairs[pi].count;
        if (live <= 0) continue;
        if ((uint64_t)live != top.count) { /* stale: queued again with its live count */
            if (!heap_push(t, pi, (uint64_t)live)) return UINT32_MAX;
            continue;
        }
        size_t b = pair_blocker(t, pi);
        if (b == SIZE_MAX) return pi;
        if (t->n_wait == t->wait_cap) {
            size_t cap = t->wait_cap ? 2 * t->wait_cap : 256;
            uint32_t *p = (uint32_t *)talloc(t, cap * sizeof *p), *q = (uint32_t *)talloc(t, cap * sizeof *q);
            if (!p || !q) {
                if (p) tfree(t, p, cap * sizeof *p);
                if (q) tfree(t, q, cap * sizeof *q);
                return UINT32_MAX;
            }
            if (t->n_wait) {
                st__memcpy(p, t->wait_pair, t->n_wait * sizeof *p);
                st__memcpy(q, t->wait_next, t->n_wait * sizeof *q);
                tfree(t, t->wait_pair, t->wait_cap * sizeof *p);
                tfree(t, t->wait_next, t->wait_cap * sizeof *q);
            }
            t->wait_pair = p;
            t->wait_next = q;
            t->wait_cap = cap;
        }
        t->wait_pair[t->n_wait] = pi;
        t->wait_next[t->n_wait] = t->wait_head[b];
        t->wait_head[b] = (uint32_t)++t->n_wait;
    }
    return UINT32_MAX;
}

/* One phase-2 step: 1 when a vocabulary entry was added, 0 when phase 2 is finished. */
static int super_step(st_trainer *t) {
    if (t->algorithm == ST_ALGORITHM_SUPERBPE ? t->n_super >= t->steps : t->next_merge + t->n_super >= t->target) {
        t->stop = t->algorithm != ST_ALGORITHM_SUPERBPE && t->capped ? ST_STOP_LIMIT : ST_STOP_VOCAB_SIZE;
        return 0;
    }
    if (t->prune && t->n_pairs >= 2 * t->pruned_n + 65536 && !prune_pairs(t)) return 0;
    uint64_t floor = t->min_frequency ? t->min_frequency : 1;
    int regular_left = t->algorithm == ST_ALGORITHM_BOUNDLESS && t->next_merge < t->made;
    /* a supermerge needs a count of at least floor, and above the next regular merge's */
    uint64_t bound = floor - 1;
    if (regular_left && t->counts[t->next_merge] > bound) bound = t->counts[t->next_merge];
    uint32_t pi;
    for (;;) { /* a pruned SuperBPE: the best pair above prune_at, else the pairs made again lower */
        uint64_t above = t->prune && t->prune_at > bound ? t->prune_at : bound;
        pi = pop_available(t, above);
        if (t->oom) return 0;
        if (pi != UINT32_MAX || above == bound || t->algorithm != ST_ALGORITHM_SUPERBPE) break;
        if (!rebuild_pairs(t)) return 0;
    }
    uint64_t c = pi != UINT32_MAX ? (uint64_t)t->pairs[pi].count : 0;
    if (pi != UINT32_MAX) {
        uint32_t nt = t->base + (uint32_t)t->made + (uint32_t)t->n_super;
        if (nt >= ST_RULES_MAX_IDS) { t->oom = 1; return 0; }
        if (!make_token(t, t->pairs[pi].left, t->pairs[pi].right, nt)) return 0;
        if (!push_pair(t, &t->super, &t->super_counts, &t->n_super, &t->super_cap, 256, t->pairs[pi].left,
                       t->pairs[pi].right, c))
            return 0;
        apply_pair(t, pi, nt);
        return !t->oom;
    }
    if (!regular_left) {
        /* every live pair has a heap entry of its count and none is above the bound: a live pair
         * left is below max(min_frequency, 1), else no candidate pair is left */
        t->stop = ST_STOP_NO_CANDIDATE;
        for (size_t i = 0; i < t->n_pairs; i++)
            if (t->pairs[i].count > 0) {
                t->stop = ST_STOP_MIN_FREQUENCY;
                break;
            }
        return 0;
    }
    size_t k = t->next_merge;
    /* keeping regular merge k writes its token too: the same limit on the tokens' bytes as a
     * supermerge's (make_token) */
    uint64_t rules = (uint64_t)t->next_merge + t->n_super + 1;
    if (written_token_bytes(t) + t->tok_len[t->base + k] > st__rules_token_bytes_limit(rules)) {
        t->stop = ST_STOP_TOKEN_BYTES;
        return 0;
    }
    t->next_merge++;
    /* its token exists now: the pairs that waited for it compete again */
    for (uint32_t e = t->wait_head[k]; e; e = t->wait_next[e - 1]) {
        uint32_t q = t->wait_pair[e - 1];
        if (q != UINT32_MAX && t->pairs[q].count > 0) heap_push(t, q, (uint64_t)t->pairs[q].count); /* MAX: pruned */
    }
    t->wait_head[k] = 0;
    return !t->oom;
}

/* ST_ERR_INVALID_ARGUMENT with kind ST_KIND_OUT_OF_ORDER: a call the trainer's state does not take. */
static st_status out_of_order(st_error *err, const char *why) {
    st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why);
    st__error_kind(err, ST_KIND_OUT_OF_ORDER, 0);
    return ST_ERR_INVALID_ARGUMENT;
}

/* What st_trainer_step does next (supertok.h, ST_TRAINER_STATE). */
static int state_of(const st_trainer *t) {
    if (t->phase == 2) return t->done ? ST_TRAINING_DONE : ST_TRAINING_SUPERMERGES;
    if (!t->done) return ST_TRAINING_MERGES;
    return t->algorithm == ST_ALGORITHM_BPE ? ST_TRAINING_DONE : ST_TRAINING_CANDIDATES;
}

st_status st_trainer_set_vocab_size(st_trainer *t, uint64_t vocab_size, st_error *err) {
    st__error_clear(err);
    if (!t) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer is NULL");
    if (t->algorithm != ST_ALGORITHM_BPE || t->phase != 1)
        return out_of_order(err, "the vocabulary size changes in phase-1 BPE only (no superwords)");
    if (vocab_size < t->alphabet_size || vocab_size - t->alphabet_size < t->n_specials) {
        st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "vocab_size ");
        st__error_append_u64(err, vocab_size);
        st__error_append(err, " is below the alphabet (");
        st__error_append_u64(err, t->alphabet_size);
        st__error_append(err, ") plus the special tokens (");
        st__error_append_u64(err, t->n_specials);
        st__error_append(err, ")");
        return ST_ERR_INVALID_ARGUMENT;
    }
    uint64_t target = vocab_size - t->alphabet_size - t->n_specials;
    int capped = 0;
    if (target > merges_limit(t)) {
        target = merges_limit(t);
        capped = 1;
    }
    if (t->extend && target < t->n_seeds)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "vocab_size leaves fewer merges than the seed merges");
    /* what is made stays made: a smaller size than the merges (hf: the vocabulary) reached so far
     * cannot be had from this trainer */
    if (t->mode == ST_TRAIN_HF ? t->hf_vocab > vocab_size : t->distinct > target)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "vocab_size is below what this trainer has already made");
    t->vocab_size = vocab_size;
    t->target = target;
    t->capped = capped;
    /* a trainer that stopped at its size goes on; one that stopped for another reason (no pair, the
     * minimum frequency, the token bytes limit) would stop there again at any size */
    if (t->done && (t->stop == ST_STOP_VOCAB_SIZE || t->stop == ST_STOP_LIMIT)) t->done = 0;
    return ST_OK;
}

st_status st_trainer_set_superwords(st_trainer *t, int algorithm, uint64_t supermerges, uint32_t flags,
                                    st_error *err) {
    st__error_clear(err);
    if (!t) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer is NULL");
    if (t->stepped || t->phase != 1) return out_of_order(err, "the algorithm is set before the first step");
    if (algorithm != ST_ALGORITHM_BPE && algorithm != ST_ALGORITHM_BOUNDLESS && algorithm != ST_ALGORITHM_SUPERBPE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "algorithm must be ST_ALGORITHM_BPE, ST_ALGORITHM_BOUNDLESS or ST_ALGORITHM_SUPERBPE");
    if (flags & ~ST_SUPERWORDS_NGRAM_SPLIT)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags (ST_SUPERWORDS_*)");
    if (algorithm != ST_ALGORITHM_BPE && t->mode == ST_TRAIN_HF)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "superwords need mode paper: HuggingFace's trainer (mode hf) has no superwords to match");
    if (algorithm != ST_ALGORITHM_SUPERBPE && supermerges)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "supermerges applies only to ST_ALGORITHM_SUPERBPE");
    if (algorithm == ST_ALGORITHM_BPE && flags)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "the n-gram split applies to superwords (BOUNDLESS or SUPERBPE), not to BPE");
    if (algorithm == ST_ALGORITHM_SUPERBPE && supermerges > t->target)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "supermerges is more than the merges the vocabulary size leaves (ST_TRAINER_TARGET)");
    if (algorithm != ST_ALGORITHM_BPE && t->extend)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "an extension (seed merges) trains BPE merges, not superwords");
    t->algorithm = algorithm;
    t->supermerges_arg = supermerges;
    t->ngram_split = (flags & ST_SUPERWORDS_NGRAM_SPLIT) != 0;
    return ST_OK;
}

st_status st_trainer_set_seed_merges(st_trainer *t, const uint32_t *pairs, size_t n, const char *base_name,
                                     size_t base_name_len, uint32_t max_words, uint32_t flags, uint64_t min_count,
                                     st_error *err) {
    st__error_clear(err);
    if (!t || (n && !pairs) || (base_name_len && !base_name))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a NULL argument");
    if (t->stepped || t->phase != 1) return out_of_order(err, "seed merges are set before the first step");
    if (t->extend) return out_of_order(err, "seed merges are set once");
    if (t->mode != ST_TRAIN_PAPER)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "an extension trains in mode paper");
    if (t->algorithm != ST_ALGORITHM_BPE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "an extension trains BPE merges, not superwords (st_trainer_set_superwords)");
    if (flags & ~ST_EXTEND_COLON_SPACE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags (ST_EXTEND_*)");
    if (base_name_len < 1 || base_name_len > sizeof t->base_name)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "base_name: 1 to 128 printable ASCII characters");
    for (size_t i = 0; i < base_name_len; i++)
        if (base_name[i] <= 0x20 || base_name[i] >= 0x7F)
            return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, i,
                                 "base_name: printable ASCII without spaces only");
    if (n > t->target) {
        st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "");
        st__error_append_u64(err, n);
        st__error_append(err, " seed merges do not fit in the ");
        st__error_append_u64(err, t->target);
        st__error_append(err, " merges the vocabulary size leaves (ST_TRAINER_TARGET)");
        return ST_ERR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < n; i++)
        for (int side = 0; side < 2; side++)
            if (pairs[2 * i + side] >= t->base + i) {
                st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "seed merge ");
                st__error_append_u64(err, i);
                st__error_append(err, side ? ": right id " : ": left id ");
                st__error_append_u64(err, pairs[2 * i + side]);
                st__error_append(err, " is not made before it (ids below ");
                st__error_append_u64(err, t->base + i);
                st__error_append(err, ")");
                return ST_ERR_INVALID_ARGUMENT;
            }
    /* a pair given twice: the second would replay nothing and write a rule the model format refuses */
    if (n > 1) {
        size_t slots = 4;
        while (slots < 2 * n) slots *= 2;
        uint64_t *keys = (uint64_t *)st__alloc(&t->alloc, slots * sizeof *keys);
        uint32_t *at = (uint32_t *)st__alloc(&t->alloc, slots * sizeof *at);
        if (!keys || !at) {
            if (keys) st__free(&t->alloc, keys, slots * sizeof *keys);
            if (at) st__free(&t->alloc, at, slots * sizeof *at);
            return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        }
        st__memset(at, 0, slots * sizeof *at);
        st_status dup = ST_OK;
        for (size_t i = 0; i < n && dup == ST_OK; i++) {
            uint64_t key = ((uint64_t)pairs[2 * i] << 32) | pairs[2 * i + 1];
            size_t s = (size_t)st__mix64(key) & (slots - 1);
            while (at[s] && keys[s] != key) s = (s + 1) & (slots - 1);
            if (at[s]) {
                st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "seed merge ");
                st__error_append_u64(err, i);
                st__error_append(err, " is the pair of seed merge ");
                st__error_append_u64(err, at[s] - 1);
                dup = ST_ERR_INVALID_ARGUMENT;
            }
            keys[s] = key;
            at[s] = (uint32_t)i + 1;
        }
        st__free(&t->alloc, keys, slots * sizeof *keys);
        st__free(&t->alloc, at, slots * sizeof *at);
        if (dup != ST_OK) return dup;
    }
    uint32_t *copy = NULL;
    if (n) {
        copy = (uint32_t *)talloc(t, 2 * n * sizeof *copy);
        if (!copy) {
            t->oom = 0; /* nothing was changed: the trainer stays usable */
            return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        }
        st__memcpy(copy, pairs, 2 * n * sizeof *copy);
    }
    t->seeds = copy;
    t->n_seeds = n;
    t->extend = 1;
    t->max_words = max_words;
    t->colon_space = (flags & ST_EXTEND_COLON_SPACE) != 0;
    t->seed_min_count = min_count;
    st__memcpy(t->base_name, base_name, base_name_len);
    t->base_name_len = base_name_len;
    return ST_OK;
}

st_status st_trainer_candidates_new(const st_trainer *t, const st_allocator *alloc, st_counter **out, st_error *err) {
    st__error_clear(err);
    if (!out || !t) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out is NULL");
    *out = NULL;
    int state = state_of(t);
    if (state != ST_TRAINING_CANDIDATES)
        return out_of_order(err, state == ST_TRAINING_MERGES
                                     ? "phase 1 is not finished: the texts are wanted again after it (ST_TRAINING_CANDIDATES)"
                                 : t->algorithm == ST_ALGORITHM_BPE
                                     ? "the algorithm is BPE: training reads the texts once (st_trainer_set_superwords)"
                                     : "the pass over the texts is closed (phase 2 has started)");
    return st__counter_new_candidates(t, t->algorithm, t->supermerges_arg, alloc, out, err);
}

st_status st_trainer_candidates_add(st_trainer *t, st_counter *c, st_error *err) {
    st__error_clear(err);
    if (!t || !c) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or candidates is NULL");
    if (state_of(t) != ST_TRAINING_CANDIDATES)
        return out_of_order(err, t->phase == 2 ? "the pass over the texts is closed (phase 2 has started)"
                                               : "the trainer does not want the texts now (ST_TRAINER_STATE)");
    if (!c->cand || c->cand->ngram_max_len)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "not a candidates counter of the trainer (st_trainer_candidates_new)");
    if (c->cand->given_back) return out_of_order(err, "the candidates counter was given back already");
    if (!t->pass) {
        st_status st = st__counter_new_candidates(t, t->algorithm, t->supermerges_arg, &t->alloc, &t->pass, err);
        if (st != ST_OK) return st;
    }
    /* refuses another vocabulary or pre-tokenizer; c's counts move, c is left empty */
    st_status st = st__counter_hand_over(t->pass, c, err);
    if (st != ST_OK) return st;
    c->cand->given_back = 1;
    return ST_OK;
}

/* The step that closes the pass over the texts: the candidates (split into n-grams when asked)
 * start phase 2. A failure before the pass is read leaves it open, as it was; one after its
 * reading began (superwords_words shrinks it behind the reading) fails every later step. */
static st_status close_pass(st_trainer *t, st_error *err) {
    st_status st;
    if (!t->pass && (st = st__counter_new_candidates(t, t->algorithm, t->supermerges_arg, &t->alloc, &t->pass,
                                                     err)) != ST_OK)
        return st;
    st_counter *split = NULL;
    st__counter_drop_index(t->pass); /* read in order from here on (rebuilt if the pass stays open) */
    if (t->ngram_split &&
        (st = st__counter_split_ngrams(t->pass, st_trainer_stat(t, ST_TRAINER_NGRAM_CMIN), ST__NGRAM_MAX_LEN,
                                       &t->alloc, &split, err)) != ST_OK)
        return st;
    if (split) st__counter_drop_index(split); /* read once, in order, and given back as it is read */
    st = superwords_words(t, split ? split : t->pass, split ? split : t->pass, t->algorithm, t->supermerges_arg, err);
    st_counter_free(split);
    if (st != ST_OK) return st;
    /* the candidates are phase 2's words now: they go before the pair table is made */
    t->pass_documents = t->pass->stats[ST_COUNTER_DOCUMENTS];
    t->pass_bytes = t->pass->stats[ST_COUNTER_BYTES];
    st_counter_free(t->pass);
    t->pass = NULL;
    if (st__realloc_gives_back(&t->alloc)) st__platform_release_free(); /* the pass's index and tables */
    if (!init_pairs(t) || !words_index(t)) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    return ST_OK;
}

st_status st_trainer_step(st_trainer *t, size_t max_merges, size_t *made, st_error *err) {
    st__error_clear(err);
    if (made) *made = 0;
    if (!t || !made) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or made is NULL");
    if (t->oom) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, "an earlier step ran out of memory");
    t->stepped = 1;
    size_t k = 0;
    if (state_of(t) == ST_TRAINING_CANDIDATES) return close_pass(t, err);
    if (t->phase == 2) {
        while (k < max_merges && !t->done) {
            int stepped = super_step(t);
            if (t->oom) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
            if (stepped) k++;
            else t->done = 1;
        }
        *made = k;
        return ST_OK;
    }
    while (k < max_merges && !t->done) {
        size_t before = t->n_merges;
        int more = merge_once(t);
        if (t->oom) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        if (t->n_merges > before) k++;
        if (!more) {
            t->done = 1;
            /* superwords: phase 1 never goes on (st_trainer_set_vocab_size is BPE's), and phase 2
             * needs only its merges and tokens: its words and pairs go before the pass over the
             * texts, not after it */
            if (t->algorithm != ST_ALGORITHM_BPE) {
                free_words_and_pairs(t);
                if (st__realloc_gives_back(&t->alloc)) st__platform_release_free();
            }
        }
    }
    *made = k;
    return ST_OK;
}

/* The regular merges phase 1 aimed for: SuperBPE keeps target - s of them (s <= target, checked
 * when phase 2 starts). */
static uint64_t phase1_wanted(const st_trainer *t) {
    return t->phase == 2 && t->algorithm == ST_ALGORITHM_SUPERBPE ? t->target - t->supermerges_arg : t->target;
}

/* Phase 2 finished short of its steps (running or interrupted is not finished). */
static int phase2_short(const st_trainer *t) {
    return t->phase == 2 && t->done && t->stop != ST_STOP_VOCAB_SIZE;
}

/* Phase 1 left the model fewer regular merges than it needs (supertok.h, ST_TRAINER_PHASE1_SHORT). */
static int phase1_short(const st_trainer *t) {
    if (t->phase != 2) return t->done && t->stop != ST_STOP_VOCAB_SIZE;
    if (t->algorithm == ST_ALGORITHM_SUPERBPE) return t->made < phase1_wanted(t);
    return t->stop1 != ST_STOP_VOCAB_SIZE && phase2_short(t);
}

uint64_t st_trainer_stat(const st_trainer *t, int what) {
    if (!t) return 0;
    switch (what) {
    case ST_TRAINER_ALPHABET: return t->alphabet_size;
    case ST_TRAINER_TARGET: return t->target;
    case ST_TRAINER_MERGES: return t->n_merges;
    case ST_TRAINER_PHASE: return (uint64_t)t->phase;
    case ST_TRAINER_SUPERMERGES: return t->n_super;
    case ST_TRAINER_REGULAR: return t->phase == 2 ? t->next_merge : t->n_merges;
    case ST_TRAINER_CANDIDATES: return t->phase == 2 ? t->n_candidates : t->pass ? t->pass->n : 0;
    case ST_TRAINER_NGRAM_CMIN: {
        uint64_t last = t->phase == 2 ? (t->made ? t->counts[t->made - 1] : 0) : (t->n_merges ? t->counts[t->n_merges - 1] : 0);
        return last > 15 ? last : 15;
    }
    case ST_TRAINER_STEPS: return t->phase == 2 ? t->steps : 0;
    case ST_TRAINER_DONE: return state_of(t) == ST_TRAINING_DONE;
    case ST_TRAINER_STATE: return (uint64_t)state_of(t);
    case ST_TRAINER_PASS_DOCUMENTS: return t->pass ? t->pass->stats[ST_COUNTER_DOCUMENTS] : t->pass_documents;
    case ST_TRAINER_PASS_BYTES: return t->pass ? t->pass->stats[ST_COUNTER_BYTES] : t->pass_bytes;
    case ST_TRAINER_STOP: return t->done ? (uint64_t)t->stop : ST_STOP_RUNNING;
    case ST_TRAINER_STOP_PHASE1: return t->phase == 2 ? (uint64_t)t->stop1 : t->done ? (uint64_t)t->stop : ST_STOP_RUNNING;
    case ST_TRAINER_WORDS: return t->n_pretokens;
    case ST_TRAINER_SEED_MERGES: return t->n_seeds;
    case ST_TRAINER_BLOCKED: return t->n_blocked;
    case ST_TRAINER_PHASE1_SHORT: return (uint64_t)phase1_short(t);
    case ST_TRAINER_PHASE1_WANTED: return phase1_wanted(t);
    case ST_TRAINER_PHASE1_MADE: return t->phase == 2 ? t->made : t->n_merges;
    case ST_TRAINER_PHASE2_SHORT: return (uint64_t)phase2_short(t);
    case ST_TRAINER_PHASE2_MADE:
        if (t->phase != 2) return 0;
        return t->algorithm == ST_ALGORITHM_SUPERBPE ? t->n_super : t->next_merge + t->n_super;
    default: return 0;
    }
}

size_t st_trainer_merges(const st_trainer *t, const uint32_t **pairs, const uint64_t **counts) {
    if (pairs) *pairs = t ? t->merges : NULL;
    if (counts) *counts = t ? t->counts : NULL;
    if (!t) return 0;
    return t->phase == 2 ? t->next_merge : t->n_merges;
}

size_t st_trainer_supermerges(const st_trainer *t, const uint32_t **pairs, const uint64_t **counts) {
    if (pairs) *pairs = NULL;
    if (counts) *counts = NULL;
    if (!t || !t->n_super) return 0;
    /* The written ids depend on the regular merges kept, which BOUNDLESS still grows: the
     * output is rebuilt here when stale (a cache the const handle owns; a trainer is used by one
     * thread at a time). */
    st_trainer *m = (st_trainer *)(uintptr_t)t;
    if (m->super_out_n != m->n_super || m->super_out_kept != m->next_merge) {
        if (m->super_out_cap < m->n_super) {
            uint32_t *o = (uint32_t *)st__alloc(&m->alloc, 2 * m->super_cap * sizeof *o);
            if (!o) return 0;
            if (m->super_out) st__free(&m->alloc, m->super_out, 2 * m->super_out_cap * sizeof *o);
            m->super_out = o;
            m->super_out_cap = m->super_cap;
        }
        uint32_t first = m->base + (uint32_t)m->made, shift = (uint32_t)(m->made - m->next_merge);
        for (size_t i = 0; i < 2 * m->n_super; i++) {
            uint32_t x = m->super[i];
            m->super_out[i] = x >= first ? x - shift : x;
        }
        m->super_out_n = m->n_super;
        m->super_out_kept = m->next_merge;
    }
    if (pairs) *pairs = m->super_out;
    if (counts) *counts = m->super_counts;
    return m->n_super;
}

/* ---- the model file ------------------------------------------------------------------------ */

static size_t append(char *buf, size_t n, const char *s) {
    while (*s) buf[n++] = *s++;
    return n;
}
static size_t append_u64(char *buf, size_t n, uint64_t v) {
    char d[24];
    size_t k = 0;
    do { d[k++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (k) buf[n++] = d[--k];
    return n;
}

static const char *stop_text(int stop) {
    switch (stop) {
    case ST_STOP_NO_PAIR: return "no pair left (every pretoken is a single token)";
    case ST_STOP_MIN_FREQUENCY: return "the best pair left occurs fewer than min_frequency times";
    case ST_STOP_NO_CANDIDATE: return "no supermerge candidate pair left";
    case ST_STOP_LIMIT: return "the model format's limit of 2^21 - 1 ids";
    case ST_STOP_TOKEN_BYTES: return "the next token would pass the limit on the tokens' bytes (16 MiB + 256 a rule)";
    case ST_STOP_CONSTRAINTS: return "every pair left makes a token of more than max_words words or holding ': '";
    default: return "interrupted";
    }
}

/* The comment line saying why training made fewer entries than asked (none when it did not). */
static size_t append_stop(const st_trainer *t, char *head, size_t hn) {
    if (t->phase != 2) {
        if (t->done && t->stop == ST_STOP_VOCAB_SIZE) return hn;
        hn = append(head, hn, "comment stopped at ");
        hn = append_u64(head, hn, t->n_merges);
        hn = append(head, hn, " of ");
        hn = append_u64(head, hn, t->target);
        hn = append(head, hn, " merges: ");
        hn = append(head, hn, t->done ? stop_text(t->stop) : "interrupted");
        return append(head, hn, "\n");
    }
    if (t->algorithm == ST_ALGORITHM_SUPERBPE) {
        uint64_t want = phase1_wanted(t);
        if (phase1_short(t)) {
            hn = append(head, hn, "comment phase 1 stopped at ");
            hn = append_u64(head, hn, t->made);
            hn = append(head, hn, " merges, below the ");
            hn = append_u64(head, hn, want);
            hn = append(head, hn, " regular merges SuperBPE keeps: ");
            hn = append(head, hn, stop_text(t->stop1));
            hn = append(head, hn, "\n");
        }
        if (t->done && t->stop == ST_STOP_VOCAB_SIZE) return hn;
        hn = append(head, hn, "comment stopped at ");
        hn = append_u64(head, hn, t->n_super);
        hn = append(head, hn, " of ");
        hn = append_u64(head, hn, t->steps);
        hn = append(head, hn, " supermerges: ");
        hn = append(head, hn, t->done ? stop_text(t->stop) : "interrupted");
        return append(head, hn, "\n");
    }
    if (t->done && t->stop == ST_STOP_VOCAB_SIZE) return hn;
    hn = append(head, hn, "comment stopped at ");
    hn = append_u64(head, hn, t->next_merge);
    hn = append(head, hn, " regular merges + ");
    hn = append_u64(head, hn, t->n_super);
    hn = append(head, hn, " supermerges of ");
    hn = append_u64(head, hn, t->target);
    hn = append(head, hn, ": ");
    hn = append(head, hn, t->done ? stop_text(t->stop) : "interrupted");
    if (t->stop1 != ST_STOP_VOCAB_SIZE) {
        hn = append(head, hn, "; phase 1 stopped at ");
        hn = append_u64(head, hn, t->made);
        hn = append(head, hn, " merges: ");
        hn = append(head, hn, stop_text(t->stop1));
    }
    return append(head, hn, "\n");
}

st_status st_trainer_write_model(const st_trainer *t, const char *name, size_t name_len, const char *specials,
                                 const size_t *special_ends, size_t n_specials, char *out, size_t cap,
                                 size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (out_len) *out_len = 0;
    if (!t || !out_len || (!out && cap) || (!name && name_len) || (n_specials && !special_ends))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a NULL argument");
    if (n_specials != t->n_specials) {
        st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "n_specials is ");
        st__error_append_u64(err, n_specials);
        st__error_append(err, " but the trainer was made for ");
        st__error_append_u64(err, t->n_specials);
        return ST_ERR_INVALID_ARGUMENT;
    }
    if (name_len < 1 || name_len > 128)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "name: 1 to 128 printable ASCII characters");
    for (size_t i = 0; i < name_len; i++)
        if (name[i] <= 0x20 || name[i] >= 0x7F)
            return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, i,
                                 "name: printable ASCII without spaces only");
    /* the special tokens: non-empty, valid UTF-8, distinct */
    size_t total = 0;
    for (size_t i = 0; i < n_specials; i++) {
        size_t s0 = i ? special_ends[i - 1] : 0, s1 = special_ends[i];
        if (s1 < s0) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "special_ends must not decrease");
        st_error e2;
        if (s1 == s0) {
            st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "special token is empty");
            st__error_line(err, 0, 1);
            return ST_ERR_INVALID_ARGUMENT;
        }
        if (st_utf8_validate(specials + s0, s1 - s0, &e2) != ST_OK) {
            st__error_set(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, s0 + e2.offset, "special token ");
            st__error_append_u64(err, i);
            st__error_append(err, " is not valid UTF-8");
            st__error_line(err, 0, 1);
            return ST_ERR_INVALID_UTF8;
        }
        for (size_t j = 0; j < i; j++) {
            size_t r0 = j ? special_ends[j - 1] : 0, r1 = special_ends[j];
            if (r1 - r0 == s1 - s0 && st__memcmp(specials + r0, specials + s0, s1 - s0) == 0) {
                st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "special token given twice: ");
                st__error_append_quoted(err, (const uint8_t *)specials + s0, s1 - s0);
                st__error_line(err, 0, 1);
                return ST_ERR_INVALID_ARGUMENT;
            }
        }
        total = s1;
    }
    size_t n_regular = t->phase == 2 ? t->next_merge : t->n_merges, n_super = t->phase == 2 ? t->n_super : 0;
    if ((uint64_t)t->base + n_regular + n_super + n_specials > (1u << 21) - 1)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "more than 2^21 - 1 ids");

    /* the model's text fields: name, comment line, scripts, in one buffer */
    char head[4096];
    size_t hn = 0;
    st__memcpy(head, name, name_len);
    hn = name_len;
    size_t comments_off = hn;
    hn = append(head, hn, t->extend ? "comment trained by supertok, extending a BPE model (SuperBPE Stage 2): mode "
                          : t->phase != 2 ? "comment trained by supertok phase-1 BPE: mode "
                          : t->algorithm == ST_ALGORITHM_BOUNDLESS ? "comment trained by supertok BoundlessBPE: mode "
                                                                   : "comment trained by supertok SuperBPE: mode ");
    hn = append(head, hn, t->mode == ST_TRAIN_HF ? "hf" : "paper");
    hn = append(head, hn, ", vocab_size ");
    hn = append_u64(head, hn, t->vocab_size);
    hn = append(head, hn, ", min_frequency ");
    hn = append_u64(head, hn, t->min_frequency);
    if (t->mode == ST_TRAIN_HF && t->reused) {
        hn = append(head, hn, ", ");
        hn = append_u64(head, hn, t->reused);
        hn = append(head, hn, " merges spell an earlier token (HF reuses its id)");
    }
    hn = append(head, hn, "\n");
    hn = append_stop(t, head, hn);
    size_t comments_len = hn - comments_off;
    size_t scripts_off = hn;
    int scripts_kind = ST__SCRIPTS_LIST;
    if (t->pt.flags & ST_PRETOK_SCRIPT_AWARE) {
        struct st_pretokenizer def;
        st__pretokenizer_init(&def, t->pt.pattern, t->pt.flags, NULL, 0, NULL);
        if (st__memcmp(def.single_letter_scripts, t->pt.single_letter_scripts, sizeof def.single_letter_scripts) == 0)
            scripts_kind = ST__SCRIPTS_DEFAULT;
        else {
            int first = 1;
            for (int id = 0; id < st_script_count() && id < 32 * ST_SCRIPT_WORDS; id++) {
                if (!((t->pt.single_letter_scripts[id >> 5] >> (id & 31)) & 1)) continue;
                const char *nm = st_script_name(id);
                size_t l = 0;
                while (nm[l]) l++;
                if (hn + l + 2 > sizeof head) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "script list too long");
                if (!first) head[hn++] = ',';
                first = 0;
                hn = append(head, hn, nm);
            }
        }
    }
    size_t scripts_len = hn - scripts_off;
    size_t base_off = hn;
    if (t->extend) {
        if (hn + t->base_name_len > sizeof head)
            return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "script list too long");
        st__memcpy(head + hn, t->base_name, t->base_name_len);
        hn += t->base_name_len;
    }

    st_model m;
    st__memset(&m, 0, sizeof m);
    m.alloc = t->alloc;
    m.src = (uint8_t *)head;
    m.src_len = hn;
    m.name_off = 0;
    m.name_len = name_len;
    m.comments_off = comments_off;
    m.comments_len = comments_len;
    m.kind = ST_MODEL_RULES;
    m.alphabet = t->alphabet;
    m.pattern = t->pt.pattern;
    m.flags = t->pt.flags;
    m.scripts_kind = scripts_kind;
    m.scripts_off = scripts_off;
    m.scripts_len = scripts_len;
    m.merges.pairs = t->merges;
    m.merges.counts = t->counts ? t->counts : (uint64_t *)(void *)head; /* "counts" even when empty */
    m.merges.n = n_regular;
    m.merges.present = 1;
    if (t->phase == 2) {
        const uint32_t *sp_pairs;
        const uint64_t *sp_counts;
        if (n_super && st_trainer_supermerges(t, &sp_pairs, &sp_counts) != n_super)
            return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        m.supermerges.pairs = n_super ? (uint32_t *)(uintptr_t)sp_pairs : NULL;
        m.supermerges.counts = n_super ? (uint64_t *)(uintptr_t)sp_counts : NULL;
        m.supermerges.n = n_super;
        m.supermerges.present = n_super != 0;
        m.has_training = 1;
        m.tr_algorithm = t->algorithm;
        m.tr_mode = t->mode;
        m.tr_vocab_size = t->vocab_size;
        m.tr_min_frequency = t->min_frequency;
        m.tr_supermerges = t->supermerges_arg;
        m.tr_ngram = t->ngram_max_len != 0;
        m.tr_c_min = t->ngram_cmin;
        m.tr_max_len = t->ngram_max_len;
    }
    if (t->extend) {
        m.has_training = 1;
        m.tr_algorithm = ST_ALGORITHM_EXTEND;
        m.tr_mode = t->mode;
        m.tr_vocab_size = t->vocab_size;
        m.tr_min_frequency = t->min_frequency;
        m.tr_base_off = base_off;
        m.tr_base_len = t->base_name_len;
        m.tr_seed_merges = t->n_seeds;
        m.tr_max_words = t->max_words;
        m.tr_colon_space = t->colon_space;
        m.tr_min_count = t->seed_min_count;
    }
    /* hf: a special that HuggingFace's vocabulary puts at a token's id (its text is the token's
     * byte-level string, which set_specials recorded) shares that id when its text is also the
     * token's bytes (printable ASCII), so the vocabulary holds vocab_size ids as HuggingFace's
     * does; the others take the ids after the rules, in their order. A model lists its specials
     * by increasing id: the shared ones first (by their token's id), then the others. */
    st__model_special *sp = NULL;
    uint32_t *shared_at = NULL; /* [id < n_tok]: the special sharing token id, its index + 1; [n_tok + i]: 1
                                   when special i shares */
    uint32_t n_tok = t->base + (uint32_t)(n_regular + n_super);
    if (n_specials) {
        sp = (st__model_special *)st__alloc(&t->alloc, n_specials * sizeof *sp);
        if (!sp) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        size_t at_size = ((size_t)n_tok + n_specials) * sizeof *shared_at;
        if (t->mode == ST_TRAIN_HF && t->spec_len) {
            shared_at = (uint32_t *)st__alloc(&t->alloc, at_size);
            if (!shared_at) {
                st__free(&t->alloc, sp, n_specials * sizeof *sp);
                return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
            }
            st__memset(shared_at, 0, at_size);
            for (size_t i = 0; i < n_specials; i++) {
                size_t s0 = i ? special_ends[i - 1] : 0, n = special_ends[i] - s0;
                if (t->spec_len[i] != n || st__memcmp(t->spec_bytes + t->spec_off[i], specials + s0, n) != 0)
                    continue; /* not a token's string, or its bytes differ from the string's (e.g. "é") */
                uint32_t id = n == 1 ? (uint8_t)specials[s0] : str_lookup(t, (const uint8_t *)specials + s0, n);
                if (id < n_tok && !shared_at[id]) {
                    shared_at[id] = (uint32_t)i + 1;
                    shared_at[n_tok + i] = 1;
                }
            }
        }
        size_t k = 0;
        for (uint32_t id = 0; shared_at && id < n_tok; id++)
            if (shared_at[id]) {
                size_t i = shared_at[id] - 1, s0 = i ? special_ends[i - 1] : 0;
                sp[k].id = id;
                sp[k].off = s0;
                sp[k++].len = special_ends[i] - s0;
            }
        uint32_t next = n_tok;
        for (size_t i = 0; i < n_specials; i++) {
            size_t s0 = i ? special_ends[i - 1] : 0;
            if (shared_at && shared_at[n_tok + i]) continue;
            sp[k].id = next++;
            sp[k].off = s0;
            sp[k++].len = special_ends[i] - s0;
        }
    }
    (void)total;
    m.specials = sp;
    m.n_specials = n_specials;
    m.special_text = (uint8_t *)(void *)(uintptr_t)specials;
    st_status st = st_model_write(&m, out, cap, out_len);
    if (sp) st__free(&t->alloc, sp, n_specials * sizeof *sp);
    if (shared_at) st__free(&t->alloc, shared_at, ((size_t)n_tok + n_specials) * sizeof *shared_at);
    if (st == ST_ERR_BUFFER_TOO_SMALL) return st__error_status(err, st);
    if (st != ST_OK) return st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
    return ST_OK;
}
