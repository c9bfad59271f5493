// Tests of the counters and the phase-1 trainer (docs/design.md §8, docs/formats/train-format.md):
//   test_train [ROOT]     ROOT: the repository (for vectors/train/*.jsonl; default ".")
// The trainer is checked against a naive reference kept here for clarity: it recounts every pair
// from scratch at each step (the paper's non-overlapping run rule or HF's overlapping count) and
// picks the best by the mode's order, so it shares no data structure with trainer.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "check.h"
#include "json_reader.h"
#include "../src/base/work_counter.h" /* the work counter, in builds with -DST_TEST_COUNTERS */
/* the second pass's steps one at a time (st__counter_new_candidates, st__counter_split_ngrams,
 * st__trainer_start_superwords): the public calls run them only in the trainer's own order */
#include "../src/train/trainer.h"
#include "../src/train/candidates.h"

static uint64_t g_rng = 88172645463325252ull;
static uint64_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* ---- the saved counts, read back (docs/formats/train-format.md) ---------------------------------- */

typedef struct cword {
    const uint8_t *p;
    uint32_t len;
    uint64_t count;
} cword;

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

static uint8_t *save(const st_counter *c, size_t *n) {
    size_t need = 0;
    st_status st = st_counter_save(c, NULL, 0, &need, NULL);
    CHECK(st == ST_ERR_BUFFER_TOO_SMALL || (st == ST_OK && need == 0), "save size query: %d", st);
    uint8_t *b = malloc(need ? need : 1);
    st = st_counter_save(c, b, need, n, NULL);
    CHECK(st == ST_OK && *n == need, "save: %d", st);
    return b;
}

/* The words of a counts file (pointers into it). */
static cword *words_of(const uint8_t *b, size_t n, size_t *nw) {
    size_t cap = 16, k = 0, pos = 84;
    cword *w = malloc(cap * sizeof *w);
    while (pos + 12 <= n) {
        if (k == cap) w = realloc(w, (cap *= 2) * sizeof *w);
        w[k].len = (uint32_t)le(b + pos, 4);
        w[k].count = le(b + pos + 4, 8);
        w[k].p = b + pos + 12;
        pos += 12 + w[k].len;
        k++;
    }
    *nw = k;
    return w;
}

/* ---- the naive reference ------------------------------------------------------------------ */

typedef struct ref {
    int mode, alphabet;
    uint32_t base;
    size_t nw;
    uint32_t **sym;
    size_t *len;
    uint64_t *cnt;
    /* tokens: base-symbol sequences as bytes (UBE: 2 big-endian bytes each), hf keys */
    uint8_t **seq;
    size_t *seqlen;
    uint32_t *hf;
    size_t ntok;
    uint32_t *merges;
    uint64_t *counts;
    size_t nm;
} ref;

static uint32_t hf_rank(uint32_t b) {
    /* the byte-level character's code point: itself, or 256 + its place among the others */
    static const int self_ranges[3][2] = {{33, 126}, {161, 172}, {174, 255}};
    uint32_t cp = 0, others = 0;
    int self = 0;
    for (int r = 0; r < 3; r++)
        if ((int)b >= self_ranges[r][0] && (int)b <= self_ranges[r][1]) self = 1;
    if (self) cp = b;
    else {
        for (uint32_t k = 0; k < b; k++) {
            int ks = 0;
            for (int r = 0; r < 3; r++)
                if ((int)k >= self_ranges[r][0] && (int)k <= self_ranges[r][1]) ks = 1;
            if (!ks) others++;
        }
        cp = 256 + others;
    }
    /* rank = how many bytes have a smaller character */
    uint32_t rank = 0;
    for (uint32_t k = 0; k < 256; k++) {
        uint32_t kc;
        int ks = 0;
        for (int r = 0; r < 3; r++)
            if ((int)k >= self_ranges[r][0] && (int)k <= self_ranges[r][1]) ks = 1;
        if (ks) kc = k;
        else {
            uint32_t o = 0;
            for (uint32_t q = 0; q < k; q++) {
                int qs = 0;
                for (int r = 0; r < 3; r++)
                    if ((int)q >= self_ranges[r][0] && (int)q <= self_ranges[r][1]) qs = 1;
                if (!qs) o++;
            }
            kc = 256 + o;
        }
        if (kc < cp) rank++;
    }
    return rank;
}

static int seqcmp(const ref *r, uint32_t a, uint32_t b) {
    size_t an = r->seqlen[a], bn = r->seqlen[b];
    int c = memcmp(r->seq[a], r->seq[b], an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* 1 if pair (a0, a1) with count ca beats (b0, b1) with cb */
static int ref_better(const ref *r, uint64_t ca, uint32_t a0, uint32_t a1, uint64_t cb, uint32_t b0, uint32_t b1) {
    if (ca != cb) return ca > cb;
    if (r->mode == ST_TRAIN_HF) {
        if (r->hf[a0] != r->hf[b0]) return r->hf[a0] < r->hf[b0];
        return r->hf[a1] < r->hf[b1];
    }
    int c = seqcmp(r, a0, b0);
    if (!c) c = seqcmp(r, a1, b1);
    if (c) return c < 0;
    if (a0 != b0) return a0 < b0;
    return a1 < b1;
}

static void ref_init(ref *r, int mode, int alphabet, const cword *w, size_t nw) {
    memset(r, 0, sizeof *r);
    r->mode = mode;
    r->alphabet = alphabet;
    r->base = alphabet == ST_ALPHABET_UBE ? 512 : 256;
    r->nw = nw;
    r->sym = calloc(nw + 1, sizeof *r->sym);
    r->len = calloc(nw + 1, sizeof *r->len);
    r->cnt = calloc(nw + 1, sizeof *r->cnt);
    for (size_t i = 0; i < nw; i++) {
        r->sym[i] = malloc((w[i].len + 1) * sizeof(uint32_t));
        if (alphabet == ST_ALPHABET_BYTES) {
            for (size_t k = 0; k < w[i].len; k++) r->sym[i][k] = w[i].p[k];
            r->len[i] = w[i].len;
        } else {
            uint16_t *s16 = malloc((w[i].len + 1) * sizeof *s16);
            size_t n = 0;
            st_status st = st_ube_encode_symbols((const char *)w[i].p, w[i].len, s16, w[i].len, &n, NULL);
            CHECK(st == ST_OK, "ube symbols");
            for (size_t k = 0; k < n; k++) r->sym[i][k] = s16[k];
            r->len[i] = n;
            free(s16);
        }
        r->cnt[i] = w[i].count;
    }
    size_t cap = r->base + 4096;
    r->seq = calloc(cap, sizeof *r->seq);
    r->seqlen = calloc(cap, sizeof *r->seqlen);
    r->hf = calloc(cap, sizeof *r->hf);
    for (uint32_t b = 0; b < r->base; b++) {
        r->seq[b] = malloc(2);
        if (alphabet == ST_ALPHABET_UBE) { r->seq[b][0] = (uint8_t)(b >> 8); r->seq[b][1] = (uint8_t)b; r->seqlen[b] = 2; }
        else { r->seq[b][0] = (uint8_t)b; r->seqlen[b] = 1; }
        r->hf[b] = b < 256 ? hf_rank(b) : b;
    }
    r->ntok = r->base;
    r->merges = malloc(2 * 4096 * sizeof *r->merges);
    r->counts = malloc(4096 * sizeof *r->counts);
}

static void ref_free(ref *r) {
    for (size_t i = 0; i < r->nw; i++) free(r->sym[i]);
    for (size_t i = 0; i < r->ntok; i++) free(r->seq[i]);
    free(r->sym); free(r->len); free(r->cnt); free(r->seq); free(r->seqlen); free(r->hf);
    free(r->merges); free(r->counts);
}

typedef struct rpair {
    uint32_t a, b;
    uint64_t c;
} rpair;

/* Why the last naive training (ref_train, naive_phase2) stopped: the ST_STOP_* the trainer must
 * report as ST_TRAINER_STOP. */
static int g_naive_stop;

/* Train to `target` distinct new tokens (at most 4000 merges), recounting at every step. */
static void ref_train(ref *r, uint64_t target, uint64_t min_frequency) {
    uint64_t distinct = 0;
    g_naive_stop = ST_STOP_VOCAB_SIZE;
    while (distinct < target && r->nm < 4000) {
        size_t np = 0, cap = 256;
        rpair *ps = malloc(cap * sizeof *ps);
        for (size_t i = 0; i < r->nw; i++) {
            uint32_t *s = r->sym[i];
            size_t L = r->len[i];
            for (size_t k = 0; k + 1 < L; k++) {
                uint64_t add = r->cnt[i];
                if (r->mode == ST_TRAIN_PAPER && s[k] == s[k + 1]) {
                    /* within a run of equal symbols, only every other position starts a pair */
                    size_t st = k;
                    while (st > 0 && s[st - 1] == s[k]) st--;
                    if ((k - st) % 2) continue;
                }
                size_t j = 0;
                while (j < np && !(ps[j].a == s[k] && ps[j].b == s[k + 1])) j++;
                if (j == np) {
                    if (np == cap) ps = realloc(ps, (cap *= 2) * sizeof *ps);
                    ps[np].a = s[k];
                    ps[np].b = s[k + 1];
                    ps[np].c = 0;
                    np++;
                }
                ps[j].c += add;
            }
        }
        size_t best = np;
        for (size_t j = 0; j < np; j++)
            if (ps[j].c && (best == np || ref_better(r, ps[j].c, ps[j].a, ps[j].b, ps[best].c, ps[best].a, ps[best].b)))
                best = j;
        if (best == np || ps[best].c < min_frequency) {
            g_naive_stop = best == np ? ST_STOP_NO_PAIR : ST_STOP_MIN_FREQUENCY;
            free(ps);
            break;
        }
        uint32_t x = ps[best].a, y = ps[best].b;
        uint64_t c = ps[best].c;
        free(ps);
        uint32_t id = r->base + (uint32_t)r->nm;
        r->seqlen[id] = r->seqlen[x] + r->seqlen[y];
        r->seq[id] = malloc(r->seqlen[id]);
        memcpy(r->seq[id], r->seq[x], r->seqlen[x]);
        memcpy(r->seq[id] + r->seqlen[x], r->seq[y], r->seqlen[y]);
        r->ntok = id + 1;
        uint32_t nt = id;
        if (r->mode == ST_TRAIN_HF) {
            for (uint32_t k = r->base; k < id; k++)
                if (r->hf[k] != UINT32_MAX && seqcmp(r, k, id) == 0) { nt = k; break; }
            r->hf[id] = nt == id ? 256 + (uint32_t)distinct : UINT32_MAX;
        }
        if (nt == id) distinct++;
        r->merges[2 * r->nm] = x;
        r->merges[2 * r->nm + 1] = y;
        r->counts[r->nm++] = c;
        for (size_t i = 0; i < r->nw; i++) {
            uint32_t *s = r->sym[i];
            size_t L = r->len[i], j = 0;
            for (size_t k = 0; k < L;) {
                if (k + 1 < L && s[k] == x && s[k + 1] == y) { s[j++] = nt; k += 2; }
                else s[j++] = s[k++];
            }
            r->len[i] = j;
        }
    }
}

/* ---- helpers ------------------------------------------------------------------------------- */

static st_counter *counter_of(int pattern, uint32_t flags, const char *const *docs, size_t n) {
    st_counter *c = NULL;
    st_status st = st_counter_new(pattern, flags, NULL, 0, NULL, &c, NULL);
    CHECK(st == ST_OK, "counter_new %d", st);
    for (size_t i = 0; i < n; i++) {
        st = st_counter_add(c, docs[i], strlen(docs[i]), 0, NULL);
        CHECK(st == ST_OK, "counter_add %d", st);
    }
    return c;
}

static st_trainer *train(const st_counter *c, int mode, int alphabet, uint64_t vocab, uint64_t minf, size_t nspec,
                         size_t step) {
    st_trainer *t = NULL;
    st_error e;
    st_status st = st_trainer_new(c, mode, alphabet, vocab, minf, nspec, NULL, &t, &e);
    CHECK(st == ST_OK, "trainer_new %d %s", st, e.message);
    if (!t) return NULL;
    size_t made = 0;
    do {
        st = st_trainer_step(t, step, &made, &e);
        CHECK(st == ST_OK, "trainer_step %d %s", st, e.message);
    } while (st == ST_OK && made == step);
    CHECK(st_trainer_stat(t, ST_TRAINER_DONE) == 1, "done after a short step");
    return t;
}

static char *model_text(const st_trainer *t, const char *specials, const size_t *ends, size_t n, size_t *len) {
    size_t need = 0;
    st_error e;
    st_status st = st_trainer_write_model(t, "m", 1, specials, ends, n, NULL, 0, &need, &e);
    CHECK(st == ST_ERR_BUFFER_TOO_SMALL, "write_model size query %d %s", st, e.message);
    char *out = malloc(need + 1);
    st = st_trainer_write_model(t, "m", 1, specials, ends, n, out, need, len, &e);
    CHECK(st == ST_OK && *len == need, "write_model %d %s", st, e.message);
    out[*len] = 0;
    return out;
}

/* ---- the trainer against the reference, on random small corpora ---------------------------- */

static const char *const pieces[] = {"a", "a", "a", "b", "b", "c", "ab", "aa", " ", " ", "\n", "\xc3\xa9", "\xe4\xb8\xad",
                                     "\xf0\x9f\x98\x80", "Z", "1", "'s", ".", "\r\n", "aaaaa", "\xe0\xb8\xaa"};

static char *random_doc(size_t maxp) {
    size_t np = rnd() % (maxp + 1), cap = 8 * np + 1, n = 0;
    char *d = malloc(cap);
    for (size_t i = 0; i < np; i++) {
        const char *p = pieces[rnd() % (sizeof pieces / sizeof pieces[0])];
        size_t l = strlen(p);
        memcpy(d + n, p, l);
        n += l;
    }
    d[n] = 0;
    return d;
}

static void compare_with_reference(unsigned seed) {
    g_rng = 0x9E3779B97F4A7C15ull * (seed + 1);
    int mode = (int)(rnd() % 2), alphabet = mode == ST_TRAIN_HF ? ST_ALPHABET_BYTES : (int)(rnd() % 2);
    int pattern = 1 + (int)(rnd() % 3);
    uint32_t flags = rnd() % 4 == 0 ? ST_PRETOK_SCRIPT_AWARE : 0;
    size_t ndocs = rnd() % 12;
    char *docs[12];
    for (size_t i = 0; i < ndocs; i++) docs[i] = random_doc(rnd() % 3 ? 12 : 40);
    uint64_t minf = rnd() % 3 == 0 ? rnd() % 4 : 0;
    size_t nspec = rnd() % 3;
    st_counter *c = counter_of(pattern, flags, (const char *const *)docs, ndocs);
    size_t slen, nw;
    uint8_t *saved = save(c, &slen);
    cword *w = words_of(saved, slen, &nw);
    ref r;
    ref_init(&r, mode, alphabet, w, nw);
    st_trainer *t0 = NULL;
    st_status st = st_trainer_new(c, mode, alphabet, 100000, 0, 0, NULL, &t0, NULL);
    CHECK(st == ST_OK, "trainer_new");
    uint64_t alpha = st_trainer_stat(t0, ST_TRAINER_ALPHABET);
    st_trainer_free(t0);
    uint64_t vocab = alpha + nspec + rnd() % 80;
    ref_train(&r, vocab - alpha - nspec, minf);
    st_trainer *t = train(c, mode, alphabet, vocab, minf, nspec, 1000);
    st_trainer *t1 = train(c, mode, alphabet, vocab, minf, nspec, 1);
    const uint32_t *pairs, *pairs1;
    const uint64_t *counts, *counts1;
    size_t n = st_trainer_merges(t, &pairs, &counts), n1 = st_trainer_merges(t1, &pairs1, &counts1);
    int same = n == r.nm;
    for (size_t i = 0; same && i < n; i++)
        same = pairs[2 * i] == r.merges[2 * i] && pairs[2 * i + 1] == r.merges[2 * i + 1] && counts[i] == r.counts[i];
    CHECK(same, "seed %u (mode %d alphabet %d pattern %d minf %llu vocab %llu): %zu merges, reference %zu", seed, mode,
          alphabet, pattern, (unsigned long long)minf, (unsigned long long)vocab, n, r.nm);
    if (!same) {
        for (size_t i = 0; i < (n > r.nm ? n : r.nm) && i < 40; i++)
            printf("  %zu: trainer %u %u %llu  reference %u %u %llu\n", i, i < n ? pairs[2 * i] : 0,
                   i < n ? pairs[2 * i + 1] : 0, i < n ? (unsigned long long)counts[i] : 0ull,
                   i < r.nm ? r.merges[2 * i] : 0, i < r.nm ? r.merges[2 * i + 1] : 0,
                   i < r.nm ? (unsigned long long)r.counts[i] : 0ull);
    }
    CHECK(n1 == n && (!n || (memcmp(pairs, pairs1, 2 * n * sizeof *pairs) == 0 && memcmp(counts, counts1, n * sizeof *counts) == 0)),
          "seed %u: one merge per step differs from one shot", seed);
    CHECK(st_trainer_stat(t, ST_TRAINER_STOP) == (uint64_t)g_naive_stop &&
              st_trainer_stat(t1, ST_TRAINER_STOP) == (uint64_t)g_naive_stop &&
              st_trainer_stat(t, ST_TRAINER_STOP_PHASE1) == (uint64_t)g_naive_stop,
          "seed %u: stopped for reason %llu, the reference for %d", seed,
          (unsigned long long)st_trainer_stat(t, ST_TRAINER_STOP), g_naive_stop);
    CHECK(st_trainer_stat(t, ST_TRAINER_MERGES) == n, "stat merges");
    CHECK(st_trainer_stat(t, ST_TRAINER_WORDS) == nw, "stat words");
    /* phase 1 alone: short exactly when it stopped for another reason than the size asked */
    CHECK(st_trainer_stat(t, ST_TRAINER_PHASE1_SHORT) == (g_naive_stop != ST_STOP_VOCAB_SIZE) &&
              st_trainer_stat(t, ST_TRAINER_PHASE1_MADE) == n &&
              st_trainer_stat(t, ST_TRAINER_PHASE1_WANTED) == st_trainer_stat(t, ST_TRAINER_TARGET) &&
              st_trainer_stat(t, ST_TRAINER_PHASE2_SHORT) == 0 && st_trainer_stat(t, ST_TRAINER_PHASE2_MADE) == 0,
          "seed %u: phase statistics", seed);
    /* the model: written, parsed, written again identically, and loaded */
    const char *specials = "<|a|>\\ b\n<|c|>";
    size_t ends[2] = {8, 15};
    size_t mlen;
    char *mt = model_text(t, specials, ends, nspec, &mlen);
    st_model *m = NULL;
    st_error e;
    st = st_model_parse(mt, mlen, NULL, &m, &e);
    CHECK(st == ST_OK, "seed %u: the written model parses: %s (line %llu)\n%s", seed, e.message,
          (unsigned long long)e.line, mt);
    if (m) {
        size_t l2 = 0;
        char *again = malloc(mlen + 1);
        st = st_model_write(m, again, mlen, &l2);
        CHECK(st == ST_OK && l2 == mlen && memcmp(again, mt, mlen) == 0, "seed %u: model re-written identically", seed);
        free(again);
        CHECK(st_model_count(m, "merges") == n && st_model_count(m, "specials") == nspec, "model counts");
        st_model_free(m);
    }
    st_encoding *enc = NULL;
    st = st_encoding_new_model(mt, mlen, NULL, &enc, &e);
    CHECK(st == ST_OK, "seed %u: model loads: %s", seed, e.message);
    st_encoding_free(enc);
    /* the same documents counted by 1, 2 or 4 counters and merged: the same model, byte for byte */
    for (size_t parts = 2; parts <= 4; parts *= 2) {
        st_counter *cs[4];
        for (size_t k = 0; k < parts; k++) st_counter_new(pattern, flags, NULL, 0, NULL, &cs[k], NULL);
        for (size_t i = 0; i < ndocs; i++) st_counter_add(cs[rnd() % parts], docs[i], strlen(docs[i]), 0, NULL);
        for (size_t k = parts; k-- > 1;) CHECK(st_counter_merge(cs[0], cs[k], NULL) == ST_OK, "merge");
        size_t l2;
        uint8_t *s2 = save(cs[0], &l2);
        CHECK(l2 == slen && memcmp(s2, saved, slen) == 0, "seed %u: %zu counters merged save differently", seed, parts);
        st_trainer *tp = train(cs[0], mode, alphabet, vocab, minf, nspec, 7);
        size_t ml2;
        char *mt2 = model_text(tp, specials, ends, nspec, &ml2);
        CHECK(ml2 == mlen && memcmp(mt2, mt, mlen) == 0, "seed %u: %zu counters give another model", seed, parts);
        free(mt2);
        free(s2);
        st_trainer_free(tp);
        for (size_t k = 0; k < parts; k++) st_counter_free(cs[k]);
    }
    free(mt);
    st_trainer_free(t);
    st_trainer_free(t1);
    ref_free(&r);
    free(w);
    free(saved);
    st_counter_free(c);
    for (size_t i = 0; i < ndocs; i++) free(docs[i]);
}

/* ---- counters ------------------------------------------------------------------------------ */

static int same_counts(const st_counter *a, const st_counter *b) {
    size_t la, lb;
    uint8_t *sa = save(a, &la), *sb = save(b, &lb);
    int same = la == lb && memcmp(sa, sb, la) == 0;
    free(sa);
    free(sb);
    return same;
}

static void test_counter(void) {
    st_error e;
    st_counter *c = NULL, *d = NULL;
    /* lines: each ends after its '\n' ('\r\n' too); a last line without one is a document */
    const char *text = "the cat\r\nsat\n\non  the mat";
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &c, &e) == ST_OK, "new");
    CHECK(st_counter_add(c, text, strlen(text), ST_COUNT_LINES, &e) == ST_OK, "add lines");
    const char *lines[] = {"the cat\r\n", "sat\n", "\n", "on  the mat"};
    d = counter_of(ST_PATTERN_O200K, 0, lines, 4);
    CHECK(same_counts(c, d), "lines = one document per line");
    CHECK(st_counter_stat(c, ST_COUNTER_DOCUMENTS) == 4, "4 documents, got %llu",
          (unsigned long long)st_counter_stat(c, ST_COUNTER_DOCUMENTS));
    CHECK(st_counter_stat(c, ST_COUNTER_BYTES) == strlen(text), "bytes");
    size_t np = 0, total = 0;
    st_pretokenizer *pt;
    st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, NULL);
    for (int i = 0; i < 4; i++) {
        st_pretokenize_count(pt, lines[i], strlen(lines[i]), &np, NULL);
        total += np;
    }
    CHECK(st_counter_stat(c, ST_COUNTER_PRETOKENS) == total, "pretokens %zu", total);
    st_counter_free(d);
    /* documents: the same as one add per document */
    size_t ends[4], pos = 0;
    char all[64];
    for (int i = 0; i < 4; i++) {
        memcpy(all + pos, lines[i], strlen(lines[i]));
        pos += strlen(lines[i]);
        ends[i] = pos;
    }
    st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &d, NULL);
    CHECK(st_counter_add_documents(d, all, ends, 4, &e) == ST_OK, "add_documents");
    CHECK(same_counts(c, d), "documents = lines");
    /* "the" twice: " the" and "the" are different pretokens; add_pretoken adds as counted */
    st_counter *p = NULL;
    st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &p, NULL);
    CHECK(st_counter_add_pretoken(p, "x", 1, 5, &e) == ST_OK, "add_pretoken");
    CHECK(st_counter_add_pretoken(p, "x", 1, 2, &e) == ST_OK && st_counter_stat(p, ST_COUNTER_UNIQUE) == 1 &&
              st_counter_stat(p, ST_COUNTER_PRETOKENS) == 7, "add_pretoken sums");
    CHECK(st_counter_add_pretoken(p, "", 0, 1, &e) == ST_ERR_INVALID_ARGUMENT, "empty pretoken refused");
    CHECK(st_counter_add_pretoken(p, "\xff", 1, 1, &e) == ST_ERR_INVALID_UTF8, "bad UTF-8 pretoken refused");
    /* merge = sum */
    st_counter *m = counter_of(ST_PATTERN_O200K, 0, NULL, 0);
    CHECK(st_counter_merge(m, c, &e) == ST_OK && st_counter_merge(m, d, &e) == ST_OK, "merge");
    st_counter *twice = counter_of(ST_PATTERN_O200K, 0, NULL, 0);
    st_counter_add(twice, text, strlen(text), ST_COUNT_LINES, NULL);
    st_counter_add(twice, text, strlen(text), ST_COUNT_LINES, NULL);
    CHECK(same_counts(m, twice), "merge of two = counting twice");
    CHECK(st_counter_merge(m, m, &e) == ST_ERR_INVALID_ARGUMENT, "merge into itself refused");
    st_counter *other = NULL;
    st_counter_new(ST_PATTERN_CL100K, 0, NULL, 0, NULL, &other, NULL);
    CHECK(st_counter_merge(m, other, &e) == ST_ERR_INVALID_ARGUMENT && strstr(e.message, "split"),
          "another pattern refused: %s", e.message);
    st_counter *sa1 = NULL, *sa2 = NULL;
    st_counter_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "Han", 3, NULL, &sa1, NULL);
    st_counter_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "Thai", 4, NULL, &sa2, NULL);
    CHECK(st_counter_merge(sa1, sa2, &e) == ST_ERR_INVALID_ARGUMENT, "other scripts refused");
    /* invalid UTF-8: its offset and line, and nothing of the call counted */
    size_t l0;
    uint8_t *before = save(m, &l0);
    const char *bad = "ok line\nsecond \xc3( line\n";
    CHECK(st_counter_add(m, bad, strlen(bad), ST_COUNT_LINES, &e) == ST_ERR_INVALID_UTF8 && e.offset == 15 &&
              e.line == 2 && e.unit == ST_UNIT_BYTE,
          "bad UTF-8: offset %llu line %llu", (unsigned long long)e.offset, (unsigned long long)e.line);
    const char *bdocs = "good\xe2\x82";
    size_t bends[2] = {4, 7};
    CHECK(st_counter_add_documents(m, bdocs, bends, 2, &e) == ST_ERR_INVALID_UTF8 && e.input == 1 && e.offset == 0,
          "bad document: input %u offset %llu", e.input, (unsigned long long)e.offset);
    size_t l1;
    uint8_t *after = save(m, &l1);
    CHECK(l0 == l1 && memcmp(before, after, l0) == 0, "nothing counted from a bad call");
    free(after);
    /* save/load round trip, into an empty counter and adding to a full one */
    st_counter *r = counter_of(ST_PATTERN_O200K, 0, NULL, 0);
    CHECK(st_counter_load(r, before, l0, &e) == ST_OK, "load: %s", e.message);
    CHECK(same_counts(r, m), "save/load round trip");
    CHECK(st_counter_load(r, before, l0, &e) == ST_OK, "load again");
    st_counter *m2 = counter_of(ST_PATTERN_O200K, 0, NULL, 0);
    st_counter_merge(m2, m, NULL);
    st_counter_merge(m2, m, NULL);
    CHECK(same_counts(r, m2), "loading twice = merging twice");
    CHECK(st_counter_load(other, before, l0, &e) == ST_ERR_INVALID_ARGUMENT, "load into another pattern refused");
    /* every truncation is refused and adds nothing */
    size_t lr;
    uint8_t *rs = save(r, &lr);
    int all_refused = 1;
    for (size_t k = 0; k < l0; k++) {
        if (st_counter_load(r, before, k, &e) != ST_ERR_MALFORMED_MODEL) {
            all_refused = 0;
            printf("  truncated to %zu: %s\n", k, e.message);
        }
    }
    CHECK(all_refused, "every truncation refused");
    /* damaged files: each refused with a message, nothing added */
    size_t nw;
    cword *w = words_of(before, l0, &nw);
    CHECK(nw >= 3, "words");
    struct { size_t off; uint8_t val; const char *what; } damage[] = {
        {0, 'S', "magic"}, {8, 2, "version"}, {12, 9, "pattern"}, {16, 4, "flags"}, {20, 1, "scripts"},
        {76, 0, "unique"}, {68, 0, "pretokens"},
        {(size_t)(w[0].p - before) - 12, 0, "length 0"}, {(size_t)(w[0].p - before) - 12, 0xFF, "length past end"},
        {(size_t)(w[0].p - before), 0xFF, "bad UTF-8"}, {(size_t)(w[1].p - before), 0x01, "unsorted"},
        {(size_t)(w[0].p - before) - 8, 0, "count changed"},
    };
    for (size_t k = 0; k < sizeof damage / sizeof damage[0]; k++) {
        uint8_t *b = malloc(l0);
        memcpy(b, before, l0);
        if (damage[k].off == 68) b[68] ^= 1;
        else if (damage[k].off == (size_t)(w[0].p - before) - 8) b[damage[k].off] ^= 0x40;
        else b[damage[k].off] = damage[k].val;
        st_status st = st_counter_load(r, b, l0, &e);
        CHECK(st == ST_ERR_MALFORMED_MODEL || (damage[k].off == 12 && st == ST_ERR_MALFORMED_MODEL),
              "damage %s: status %d (%s)", damage[k].what, st, e.message);
        free(b);
    }
    /* a repeated entry */
    {
        size_t e0 = (size_t)(w[0].p - before) - 12, l = 12 + w[0].len;
        uint8_t *b = malloc(l0 + l);
        memcpy(b, before, e0 + l);
        memcpy(b + e0 + l, before + e0, l0 - e0);
        CHECK(st_counter_load(r, b, l0 + l, &e) == ST_ERR_MALFORMED_MODEL, "repeated entry refused");
        free(b);
    }
    size_t lr2;
    uint8_t *rs2 = save(r, &lr2);
    CHECK(lr == lr2 && memcmp(rs, rs2, lr) == 0, "refused loads added nothing");
    free(rs);
    free(rs2);
    free(w);
    free(before);
    /* errors */
    st_counter *bc = NULL;
    CHECK(st_counter_new(8, 0, NULL, 0, NULL, &bc, &e) == ST_ERR_UNKNOWN_PATTERN, "bad pattern");
    CHECK(st_counter_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "Nope", 4, NULL, &bc, &e) == ST_ERR_UNKNOWN_SCRIPT,
          "bad script");
    CHECK(st_counter_add(c, "x", 1, 8, &e) == ST_ERR_INVALID_ARGUMENT, "bad flags");
    st_counter_free(c); st_counter_free(d); st_counter_free(p); st_counter_free(m); st_counter_free(twice);
    st_counter_free(other); st_counter_free(sa1); st_counter_free(sa2); st_counter_free(r); st_counter_free(m2);
    st_pretokenizer_free(pt);
}

/* Counting takes a cached path for short pieces once a counter has seen 64 KiB, and a direct one
 * before: a large text in one call must count what its pieces, added one by one through the
 * public pre-tokenizer, count. */
/* st_counter_prune: the pretokens under min_count go, the others keep their counts; the result
 * equals a counter that never saw the dropped ones (saved bytes compared, statistics but
 * PRETOKENS and UNIQUE kept), lookups and further adds still work, and NULL is refused (a
 * candidates counter's refusal: tests/test_train_counts.py). */
static void test_counter_prune(void) {
    const char *docs[] = {"the cat sat", "the cat ran", "the dog", "a cat", "zebra"};
    st_counter *c = counter_of(ST_PATTERN_O200K, 0, docs, 5);
    uint64_t before = st_counter_stat(c, ST_COUNTER_PRETOKENS);
    st_error e;
    CHECK(st_counter_prune(c, 1, &e) == ST_OK && st_counter_stat(c, ST_COUNTER_PRETOKENS) == before, "prune 1 keeps all");
    CHECK(st_counter_prune(c, 2, &e) == ST_OK, "prune 2: %s", e.message);
    /* kept: "the" 3, " cat" 3 ("a cat" counts " cat" too); dropped: " sat", " ran", " dog", "a", "zebra" */
    CHECK(st_counter_stat(c, ST_COUNTER_UNIQUE) == 2, "unique %llu", (unsigned long long)st_counter_stat(c, ST_COUNTER_UNIQUE));
    CHECK(st_counter_stat(c, ST_COUNTER_PRETOKENS) == 6, "pretokens %llu",
          (unsigned long long)st_counter_stat(c, ST_COUNTER_PRETOKENS));
    CHECK(st_counter_stat(c, ST_COUNTER_DOCUMENTS) == 5, "documents kept");
    st_counter *want = NULL;
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &want, NULL) == ST_OK, "new");
    CHECK(st_counter_add_pretoken(want, "the", 3, 3, NULL) == ST_OK, "add");
    CHECK(st_counter_add_pretoken(want, " cat", 4, 3, NULL) == ST_OK, "add");
    size_t na, nb;
    uint8_t *a = save(c, &na), *b = save(want, &nb);
    /* the header's documents and bytes differ (the pruned counter read the text): compare from the
     * pretoken total on */
    CHECK(a && b && na == nb && memcmp(a + 68, b + 68, na - 68) == 0, "pruned counts = the kept pretokens");
    free(a);
    /* the table still finds what it holds after the move */
    CHECK(st_counter_add(c, "the cat", 7, 0, NULL) == ST_OK, "add after prune");
    CHECK(st_counter_stat(c, ST_COUNTER_UNIQUE) == 2 && st_counter_stat(c, ST_COUNTER_PRETOKENS) == 8, "found again");
    CHECK(st_counter_prune(c, 100, &e) == ST_OK && st_counter_stat(c, ST_COUNTER_UNIQUE) == 0 &&
          st_counter_stat(c, ST_COUNTER_PRETOKENS) == 0, "prune everything");
    CHECK(st_counter_add(c, "the", 3, 0, NULL) == ST_OK && st_counter_stat(c, ST_COUNTER_UNIQUE) == 1, "add to emptied");
    CHECK(st_counter_prune(NULL, 2, &e) == ST_ERR_INVALID_ARGUMENT, "NULL refused");
    st_counter_free(c);
    /* a counter whose slot index was dropped (as the trainer drops a pass's before reading it):
     * pruned the same, and it finds its keys after (it looped in a one-slot table before) */
    c = counter_of(ST_PATTERN_O200K, 0, docs, 5);
    st__counter_drop_index(c);
    CHECK(st_counter_prune(c, 2, &e) == ST_OK, "prune without an index: %s", e.message);
    a = save(c, &na);
    CHECK(a && na == nb && memcmp(a + 68, b + 68, na - 68) == 0, "pruned without an index = the kept pretokens");
    free(a);
    CHECK(st_counter_add(c, "the cat", 7, 0, NULL) == ST_OK && st_counter_stat(c, ST_COUNTER_UNIQUE) == 2 &&
          st_counter_stat(c, ST_COUNTER_PRETOKENS) == 8, "found again after a prune without an index");
    st_counter_free(c);
    free(b);
    st_counter_free(want);
}

static char *model_of(const st_trainer *t, size_t *n) {
    size_t need = 0;
    st_status st = st_trainer_write_model(t, "m", 1, NULL, NULL, 0, NULL, 0, &need, NULL);
    CHECK(st == ST_ERR_BUFFER_TOO_SMALL, "size query %d", st);
    char *b = (char *)malloc(need);
    CHECK(b && st_trainer_write_model(t, "m", 1, NULL, NULL, 0, b, need, n, NULL) == ST_OK, "write_model");
    return b;
}

/* st_trainer_set_vocab_size: one trainer stepped to 300 then to 400 writes, at each size, the model
 * a trainer made for that size writes (both modes); a size below what is made and a trainer with
 * superwords are refused. */
static void test_trainer_sweep(void) {
    const char *docs[] = {"the cat sat on the mat with the hat", "a cat and a rat sat at the mat",
                          "that hat is the best hat", "the rats ran and the cats sat"};
    st_counter *c = counter_of(ST_PATTERN_O200K, 0, docs, 4);
    for (int mode = 0; mode < 2; mode++) {
        uint64_t lo = 262, hi = 290;
        st_trainer *s = train(c, mode, ST_ALPHABET_BYTES, lo, 0, 0, 1000);
        size_t n1, n2, m1, m2;
        char *a = model_of(s, &n1);
        st_trainer *t1 = train(c, mode, ST_ALPHABET_BYTES, lo, 0, 0, 1000);
        char *b = model_of(t1, &m1);
        CHECK(n1 == m1 && memcmp(a, b, n1) == 0, "mode %d: the first size", mode);
        st_error e;
        CHECK(st_trainer_set_vocab_size(s, lo - 1, &e) == ST_ERR_INVALID_ARGUMENT, "below what is made");
        CHECK(st_trainer_set_vocab_size(s, hi, &e) == ST_OK, "set %s", e.message);
        CHECK(st_trainer_stat(s, ST_TRAINER_DONE) == 0, "goes on");
        size_t made = 0;
        do CHECK(st_trainer_step(s, 1000, &made, &e) == ST_OK, "step"); while (made == 1000);
        char *a2 = model_of(s, &n2);
        st_trainer *t2 = train(c, mode, ST_ALPHABET_BYTES, hi, 0, 0, 1000);
        char *b2 = model_of(t2, &m2);
        CHECK(n2 == m2 && memcmp(a2, b2, n2) == 0, "mode %d: the second size", mode);
        free(a); free(b); free(a2); free(b2);
        st_trainer_free(s); st_trainer_free(t1); st_trainer_free(t2);
    }
    st_trainer *t = NULL;
    CHECK(st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 300, 0, 0, NULL, &t, NULL) == ST_OK, "new");
    CHECK(st_trainer_set_superwords(t, ST_ALGORITHM_BOUNDLESS, 0, 0, NULL) == ST_OK, "superwords");
    st_error e;
    CHECK(st_trainer_set_vocab_size(t, 400, &e) == ST_ERR_INVALID_ARGUMENT && e.kind == ST_KIND_OUT_OF_ORDER,
          "refused with superwords");
    st_trainer_free(t);
    st_counter_free(c);
}

/* st_trainer_set_seed_merges (SuperBPE's Stage 2): the seeds come first with their counts at replay
 * (0 for one the text never holds), the merges after them never make a token of more than
 * max_words words or holding ": ", the model records the extension and loads; misuse is refused. */
static void extend_step(st_trainer *t) {
    size_t made = 0;
    st_error e;
    do CHECK(st_trainer_step(t, 7, &made, &e) == ST_OK, "step %s", e.message); while (made == 7);
}

static void test_extension(void) {
    st_counter *c = NULL;
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &c, NULL) == ST_OK, "counter");
    const char *chunks[] = {"a b c d e f g h", "key: value and more", "x y z", "q\xc3\xa9 r"};
    const uint64_t counts[] = {50, 40, 30, 20};
    for (int i = 0; i < 4; i++)
        CHECK(st_counter_add_pretoken(c, chunks[i], strlen(chunks[i]), counts[i], NULL) == ST_OK, "pretoken");
    for (int alphabet = 0; alphabet < 2; alphabet++) {
        uint32_t A = alphabet ? 512 : 256;
        st_trainer *t = NULL;
        st_error e;
        CHECK(st_trainer_new(c, ST_TRAIN_PAPER, alphabet, 1000, 2, 0, NULL, &t, &e) == ST_OK, "new %s", e.message);
        /* seeds: " b" (A), "a b" (A + 1), and "@@" (A + 2), absent from the text */
        const uint32_t seeds[] = {' ', 'b', 'a', A, '@', '@'};
        CHECK(st_trainer_set_seed_merges(t, seeds, 3, "base-1", 6, 4, ST_EXTEND_COLON_SPACE, 5, &e) == ST_OK,
              "seeds %s", e.message);
        CHECK(st_trainer_set_seed_merges(t, seeds, 3, "base-1", 6, 4, 0, 5, &e) == ST_ERR_INVALID_ARGUMENT &&
              e.kind == ST_KIND_OUT_OF_ORDER, "seeds twice");
        CHECK(st_trainer_set_superwords(t, ST_ALGORITHM_BOUNDLESS, 0, 0, &e) == ST_ERR_INVALID_ARGUMENT,
              "no superwords after seeds");
        extend_step(t);
        const uint32_t *pairs;
        const uint64_t *cnt;
        size_t n = st_trainer_merges(t, &pairs, &cnt);
        CHECK(n >= 3 && memcmp(pairs, seeds, sizeof seeds) == 0, "the seeds first");
        CHECK(n >= 3 && cnt[0] == 50 && cnt[1] == 50 && cnt[2] == 0, "seed counts %llu %llu %llu",
              (unsigned long long)cnt[0], (unsigned long long)cnt[1], (unsigned long long)cnt[2]);
        CHECK(st_trainer_stat(t, ST_TRAINER_SEED_MERGES) == 3, "stat seeds");
        CHECK(st_trainer_stat(t, ST_TRAINER_BLOCKED) > 0, "some pair was blocked");
        /* every token's base symbols, to check the constraints */
        uint32_t (*sym)[64] = calloc(A + n, sizeof *sym);
        size_t *len = calloc(A + n, sizeof *len);
        for (uint32_t i = 0; i < A; i++) { sym[i][0] = i; len[i] = 1; }
        int four = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t l = pairs[2 * i], r = pairs[2 * i + 1], id = A + (uint32_t)i;
            CHECK(len[l] + len[r] <= 64, "short tokens");
            memcpy(sym[id], sym[l], len[l] * sizeof(uint32_t));
            memcpy(sym[id] + len[l], sym[r], len[r] * sizeof(uint32_t));
            len[id] = len[l] + len[r];
            if (i < 3) continue;
            int words = 0;
            uint32_t prev = ' ';
            for (size_t k = 0; k < len[id]; k++) {
                uint32_t ch = sym[id][k];
                if (ch != ' ' && prev == ' ') words++;
                CHECK(!(prev == ':' && ch == ' '), "merge %zu holds ': '", i);
                prev = ch;
            }
            CHECK(words <= 4, "merge %zu has %d words", i, words);
            four |= words == 4;
        }
        CHECK(four, "the cap binds: some token has four words");
        free(sym);
        free(len);
        size_t mn = 0;
        char *model = model_of(t, &mn);
        const char *line = "training algorithm=extend mode=paper vocab_size=1000 min_frequency=2 base=base-1 "
                           "seed_merges=3 max_words=4 colon_space=yes min_count=5 ngram_split=no\n";
        CHECK(model && strstr(model, line) != NULL, "training line");
        st_encoding *enc = NULL;
        CHECK(st_encoding_new_model(model, mn, NULL, &enc, &e) == ST_OK, "loads: %s", e.message);
        st_encoding_free(enc);
        /* a malformed extension line */
        char *bad = malloc(mn + 16);
        const char *at = strstr(model, "seed_merges=3 max_words");
        size_t pre = (size_t)(at - model);
        memcpy(bad, model, pre);
        memcpy(bad + pre, "max_words", 9);
        memcpy(bad + pre + 9, at + 23, mn - pre - 23);
        CHECK(st_encoding_new_model(bad, mn - 14, NULL, &enc, &e) == ST_ERR_MALFORMED_MODEL &&
              strstr(e.message, "seed_merges") != NULL, "missing field named: %s", e.message);
        free(bad);
        free(model);
        CHECK(st_trainer_set_seed_merges(t, seeds, 3, "b", 1, 4, 0, 1, &e) == ST_ERR_INVALID_ARGUMENT &&
              e.kind == ST_KIND_OUT_OF_ORDER, "after a step");
        st_trainer_free(t);

        /* refusals before any step */
        CHECK(st_trainer_new(c, ST_TRAIN_PAPER, alphabet, 1000, 2, 0, NULL, &t, &e) == ST_OK, "new");
        const uint32_t late[] = {' ', 'b', A + 1, 'a'};
        CHECK(st_trainer_set_seed_merges(t, late, 2, "b", 1, 4, 0, 1, &e) == ST_ERR_INVALID_ARGUMENT &&
              e.offset == 1, "a part not yet made: %s", e.message);
        const uint32_t twice[] = {' ', 'b', 'c', 'd', ' ', 'b'};
        CHECK(st_trainer_set_seed_merges(t, twice, 3, "b", 1, 4, 0, 1, &e) == ST_ERR_INVALID_ARGUMENT &&
              e.offset == 2 && strstr(e.message, "seed merge 0") != NULL, "a pair twice: %s", e.message);
        CHECK(st_trainer_set_seed_merges(t, seeds, 3, "a b", 3, 4, 0, 1, &e) == ST_ERR_INVALID_ARGUMENT, "name");
        CHECK(st_trainer_set_seed_merges(t, seeds, 3, "b", 1, 4, 8, 1, &e) == ST_ERR_INVALID_ARGUMENT, "flags");
        st_trainer_free(t);
        CHECK(st_trainer_new(c, ST_TRAIN_PAPER, alphabet, st_trainer_stat(NULL, 0) + (alphabet ? 478 : 243) + 2, 0, 0,
                            NULL, &t, &e) == ST_OK, "new small");
        CHECK(st_trainer_set_seed_merges(t, seeds, 3, "b", 1, 4, 0, 1, &e) == ST_ERR_INVALID_ARGUMENT, "too many seeds");
        st_trainer_free(t);
    }
    st_trainer *h = NULL;
    st_error e;
    CHECK(st_trainer_new(c, ST_TRAIN_HF, ST_ALPHABET_BYTES, 1000, 0, 0, NULL, &h, &e) == ST_OK, "hf");
    const uint32_t one[] = {' ', 'b'};
    CHECK(st_trainer_set_seed_merges(h, one, 1, "b", 1, 4, 0, 1, &e) == ST_ERR_INVALID_ARGUMENT, "hf refused");
    st_trainer_free(h);
    st_counter_free(c);
}

/* st_counter_token_counts: the ids of every document encoded with st_encode, counted, equal
 * what re-encoding the counter's pretokens gives; a short buffer and NULLs are refused. */
static void test_token_counts(void) {
    const char *docs[] = {"the cat sat on the mat", "the cat ran", "a cat", "that hat", "the the the"};
    st_counter *c = counter_of(ST_PATTERN_O200K, 0, docs, 5);
    st_pretokenizer *pt = NULL;
    CHECK(st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, NULL) == ST_OK, "pretokenizer");
    const uint32_t merges[] = {'t', 'h', 256, 'e', ' ', 257, 'a', 't', ' ', 'c', 260, 259};
    st_encoding *enc = NULL;
    CHECK(st_encoding_new_merges(ST_ALPHABET_BYTES, merges, 6, NULL, 0, pt, NULL, &enc, NULL) == ST_OK, "encoding");
    uint32_t n = st_encoding_n_vocab(enc);
    uint64_t *got = (uint64_t *)calloc(n, sizeof *got), *want = (uint64_t *)calloc(n, sizeof *want);
    for (size_t d = 0; d < 5; d++) {
        uint32_t ids[64];
        size_t k = 0;
        CHECK(st_encode(enc, docs[d], strlen(docs[d]), NULL, 0, ids, NULL, 64, &k, NULL) == ST_OK, "encode");
        for (size_t j = 0; j < k; j++) want[ids[j]]++;
    }
    st_error e;
    CHECK(st_counter_token_counts(c, enc, got, n, &e) == ST_OK, "token counts: %s", e.message);
    CHECK(memcmp(got, want, n * sizeof *got) == 0, "token counts = encoding every document");
    CHECK(st_counter_token_counts(c, enc, got, n - 1, &e) == ST_ERR_BUFFER_TOO_SMALL, "short buffer");
    CHECK(st_counter_token_counts(NULL, enc, got, n, &e) == ST_ERR_INVALID_ARGUMENT, "NULL counter");
    free(got);
    free(want);
    st_encoding_free(enc);
    st_pretokenizer_free(pt);
    st_counter_free(c);
}

/* st__counter_truncate, with which the trainer reads its pass into phase 2's words and gives the
 * pass back behind the reading: the entries kept read as before, the statistics follow, and a
 * counter whose keys are out of order is not truncated by the trainer (keys_in_order). */
static void test_counter_truncate(void) {
    st_counter *c = NULL;
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &c, NULL) == ST_OK, "counter");
    const char *text = "the cat and the dog and a bird, 12345 and more words here\n";
    CHECK(st_counter_add(c, text, strlen(text), ST_COUNT_LINES, NULL) == ST_OK, "add");
    size_t n = st__counter_size(c);
    CHECK(n >= 8, "%zu distinct pretokens", n);
    CHECK(st__counter_keys_in_order(c), "a counted counter's keys lie in entry order");
    size_t lens[64];
    uint64_t counts[64];
    char keys[64][32];
    for (size_t i = 0; i < n && i < 64; i++) {
        const uint8_t *p = st__counter_entry(c, i, &lens[i], &counts[i]);
        memcpy(keys[i], p, lens[i] < 32 ? lens[i] : 32);
    }
    st__counter_truncate(c, n - 1); /* the index is still there: nothing happens */
    CHECK(st__counter_size(c) == n, "truncate with the index kept: %zu entries", st__counter_size(c));
    st__counter_drop_index(c);
    for (size_t keep = n - 1;; keep = keep >= 3 ? keep - 3 : 0) {
        st__counter_truncate(c, keep);
        CHECK(st__counter_size(c) == keep && c->stats[ST_COUNTER_UNIQUE] == keep, "truncated to %zu", keep);
        CHECK(c->arena_len == (keep ? st__entry_end(c->arena, &c->entries[keep - 1]) : 0), "arena length");
        for (size_t i = 0; i < keep; i++) {
            size_t len;
            uint64_t count;
            const uint8_t *p = st__counter_entry(c, i, &len, &count);
            CHECK(len == lens[i] && count == counts[i] && memcmp(p, keys[i], len < 32 ? len : 32) == 0,
                  "entry %zu after truncating to %zu", i, keep);
        }
        if (!keep) break;
    }
    st_counter_free(c);
    /* out of order: a key placed before the one of the entry before it */
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &c, NULL) == ST_OK, "counter");
    CHECK(st_counter_add(c, text, strlen(text), ST_COUNT_LINES, NULL) == ST_OK, "add");
    uint64_t loc = c->entries[1].loc;
    c->entries[1].loc = c->entries[0].loc;
    CHECK(!st__counter_keys_in_order(c), "keys out of order are seen");
    c->entries[1].loc = loc;
    st_counter_free(c);
    /* a key of 2^24 bytes or more keeps its length in its record: counted, found again, merged,
     * saved, loaded and truncated like any other */
    size_t big = ((size_t)1 << 24) + 5;
    char *doc = malloc(big + 16);
    memset(doc, 'a', big);
    memcpy(doc + big, " b a\n", 5);
    st_counter *d = NULL, *m = NULL;
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &c, NULL) == ST_OK, "counter");
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &m, NULL) == ST_OK, "counter");
    CHECK(st_counter_add(c, doc, big + 5, ST_COUNT_LINES, NULL) == ST_OK, "add a long pretoken");
    CHECK(st_counter_add(c, doc, big + 5, ST_COUNT_LINES, NULL) == ST_OK, "add it again");
    CHECK(st__counter_size(c) == 4, "%zu distinct (the long key, ' b', ' a', newline)", st__counter_size(c));
    int seen = 0;
    for (size_t i = 0; i < st__counter_size(c); i++) {
        size_t len;
        uint64_t count;
        const uint8_t *p = st__counter_entry(c, i, &len, &count);
        if (len == big) seen = count == 2 && p[0] == 'a' && p[big - 1] == 'a';
    }
    CHECK(seen, "the long key, its length and its count");
    CHECK(st_counter_merge(m, c, NULL) == ST_OK && st__counter_size(m) == 4, "merged");
    size_t n1 = 0;
    st_counter_save(m, NULL, 0, &n1, NULL);
    uint8_t *buf = malloc(n1);
    CHECK(st_counter_save(m, buf, n1, &n1, NULL) == ST_OK, "saved");
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &d, NULL) == ST_OK, "counter");
    st_error e2;
    CHECK(st_counter_load(d, buf, n1, &e2) == ST_OK && st__counter_size(d) == 4, "loaded: %s", e2.message);
    CHECK(st__counter_keys_in_order(d), "in order");
    st__counter_drop_index(d);
    st__counter_truncate(d, 1);
    CHECK(st__counter_size(d) == 1 && d->arena_len == st__entry_end(d->arena, &d->entries[0]), "truncated");
    free(buf);
    free(doc);
    st_counter_free(c);
    st_counter_free(m);
    st_counter_free(d);
}

static void test_counter_cache_paths(void) {
    g_rng = 12345;
    size_t cap = 1 << 20, n = 0;
    char *text = malloc(cap);
    while (n < 300000) {
        char *d = random_doc(12);
        size_t l = strlen(d);
        memcpy(text + n, d, l);
        n += l;
        text[n++] = '\n';
        free(d);
    }
    st_counter *big = NULL, *byp = NULL;
    st_pretokenizer *pt = NULL;
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &big, NULL) == ST_OK, "counter");
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &byp, NULL) == ST_OK, "counter");
    CHECK(st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, NULL) == ST_OK, "pretokenizer");
    CHECK(st_counter_add(big, text, n, ST_COUNT_LINES, NULL) == ST_OK, "add %zu bytes", n);
    size_t *ends = malloc(n * sizeof *ends);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (text[j] != '\n') j++;
        j++;
        size_t np = 0;
        CHECK(st_pretokenize(pt, text + i, j - i, 0, ends, n, &np, NULL) == ST_OK, "pretokenize");
        for (size_t k = 0; k < np; k++) {
            size_t a = k ? ends[k - 1] : 0;
            CHECK(st_counter_add_pretoken(byp, text + i + a, ends[k] - a, 1, NULL) == ST_OK, "add_pretoken");
        }
        i = j;
    }
    CHECK(st_counter_stat(big, ST_COUNTER_UNIQUE) == st_counter_stat(byp, ST_COUNTER_UNIQUE) &&
              st_counter_stat(big, ST_COUNTER_PRETOKENS) == st_counter_stat(byp, ST_COUNTER_PRETOKENS),
          "cached and direct counting agree on unique/total pretokens");
    st_trainer *t1 = train(big, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 600, 0, 0, 50);
    st_trainer *t2 = train(byp, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 600, 0, 0, 50);
    size_t l1, l2;
    char *m1 = model_text(t1, NULL, NULL, 0, &l1), *m2 = model_text(t2, NULL, NULL, 0, &l2);
    CHECK(l1 == l2 && memcmp(m1, m2, l1) == 0, "the same model from both counting paths");
    free(m1); free(m2); free(ends); free(text);
    st_trainer_free(t1); st_trainer_free(t2);
    st_counter_free(big); st_counter_free(byp); st_pretokenizer_free(pt);
}

static void test_trainer_errors(void) {
    st_counter *c = counter_of(ST_PATTERN_O200K, 0, NULL, 0);
    st_counter_add(c, "hello hello", 11, 0, NULL);
    st_trainer *t = NULL;
    st_error e;
    CHECK(st_trainer_new(c, ST_TRAIN_HF, ST_ALPHABET_UBE, 1000, 0, 0, NULL, &t, &e) == ST_ERR_INVALID_ARGUMENT &&
              strstr(e.message, "UBE"), "hf + ube refused: %s", e.message);
    CHECK(st_trainer_new(c, 5, ST_ALPHABET_BYTES, 1000, 0, 0, NULL, &t, &e) == ST_ERR_INVALID_ARGUMENT, "bad mode");
    CHECK(st_trainer_new(c, ST_TRAIN_PAPER, 3, 1000, 0, 0, NULL, &t, &e) == ST_ERR_INVALID_ARGUMENT, "bad alphabet");
    CHECK(st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 244, 0, 2, NULL, &t, &e) == ST_ERR_INVALID_ARGUMENT &&
              strstr(e.message, "vocab_size 244"), "vocab too small: %s", e.message);
    CHECK(st_trainer_new(NULL, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 1000, 0, 0, NULL, &t, &e) == ST_ERR_INVALID_ARGUMENT,
          "NULL counter");
    CHECK(st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 2048, 0, 0, NULL, &t, &e) == ST_OK, "ok");
    CHECK(st_trainer_stat(t, ST_TRAINER_ALPHABET) == 243 && st_trainer_stat(t, ST_TRAINER_TARGET) == 1805,
          "paper: 243 symbols, 2048 -> 1805 merges");
    size_t len;
    CHECK(st_trainer_write_model(t, "m", 1, NULL, NULL, 1, NULL, 0, &len, &e) == ST_ERR_INVALID_ARGUMENT,
          "n_specials must be the trainer's");
    CHECK(st_trainer_write_model(t, "a b", 3, NULL, NULL, 0, NULL, 0, &len, &e) == ST_ERR_INVALID_ARGUMENT, "bad name");
    st_trainer_free(t);
    CHECK(st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_UBE, 2048, 0, 0, NULL, &t, &e) == ST_OK, "ube");
    printf("UBE alphabet: %llu symbols\n", (unsigned long long)st_trainer_stat(t, ST_TRAINER_ALPHABET));
    CHECK(st_trainer_stat(t, ST_TRAINER_ALPHABET) > 256 && st_trainer_stat(t, ST_TRAINER_ALPHABET) < 512, "ube alphabet");
    {
        /* trainer.c states the reachable alphabets in closed form; here every code point goes
         * through the public codec (UTF-8 bytes, UBE routing) and the sets are counted. */
        static uint8_t seen_b[256], seen_u[512];
        for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
            if (cp >= 0xD800 && cp <= 0xDFFF) continue;
            uint8_t b[4];
            size_t l = put_cp(b, cp);
            for (size_t k = 0; k < l; k++) seen_b[b[k]] = 1;
            uint16_t sym[4];
            size_t ns = 0;
            if (st_ube_encode_symbols((const char *)b, l, sym, 4, &ns, NULL) == ST_OK)
                for (size_t k = 0; k < ns; k++) seen_u[sym[k]] = 1;
        }
        uint64_t nb = 0, nu = 0;
        for (int k = 0; k < 256; k++) nb += seen_b[k];
        for (int k = 0; k < 512; k++) nu += seen_u[k];
        CHECK(nb == 243 && nu == st_trainer_stat(t, ST_TRAINER_ALPHABET),
              "reachable alphabets: bytes %llu (243), UBE %llu (trainer %llu)", (unsigned long long)nb,
              (unsigned long long)nu, (unsigned long long)st_trainer_stat(t, ST_TRAINER_ALPHABET));
        /* The closed form's exact sets: a symbol the codec never emits must not be counted. */
        CHECK(!seen_b[0xC0] && !seen_b[0xC1] && !seen_b[0xF5] && !seen_b[0xFF] && seen_b[0xF4],
              "bytes 0xC0, 0xC1, 0xF5-0xFF unreachable");
        CHECK(!seen_u[0xC0] && !seen_u[0xC1] && !seen_u[0xE0] && !seen_u[0xFF] && seen_u[0xDF] && seen_u[0xBF] &&
                  seen_u[256] && seen_u[511], "UBE: 0x00-0xBF, 0xC2-0xDF and 256-511");
    }
    st_trainer_free(t);
    const char *two = "<|a|><|a|>";
    size_t ends[2] = {5, 10};
    CHECK(st_trainer_new(c, ST_TRAIN_HF, ST_ALPHABET_BYTES, 1000, 0, 2, NULL, &t, &e) == ST_OK, "hf");
    CHECK(st_trainer_stat(t, ST_TRAINER_ALPHABET) == 256, "hf: 256");
    CHECK(st_trainer_write_model(t, "m", 1, two, ends, 2, NULL, 0, &len, &e) == ST_ERR_INVALID_ARGUMENT &&
              strstr(e.message, "twice"), "repeated special refused: %s", e.message);
    CHECK(st_trainer_set_specials(t, two, ends, 1, &e) == ST_ERR_INVALID_ARGUMENT && strstr(e.message, "made for 2"),
          "set_specials: n must be the trainer's: %s", e.message);
    const char *bad = "<|a|>\xff";
    size_t bends[2] = {5, 6};
    CHECK(st_trainer_set_specials(t, bad, bends, 2, &e) == ST_ERR_INVALID_UTF8 && e.input == 1,
          "set_specials: bad UTF-8 refused: %s", e.message);
    const char *ok2 = "<|a|>ab";
    size_t oends[2] = {5, 7};
    CHECK(st_trainer_set_specials(t, ok2, oends, 2, &e) == ST_OK, "set_specials: %s", e.message);
    CHECK(st_trainer_stat(t, ST_TRAINER_TARGET) == 1000 - 256 - 2, "hf target with no collision");
    CHECK(st_trainer_set_specials(t, ok2, oends, 2, &e) == ST_ERR_INVALID_ARGUMENT, "set_specials twice refused");
    st_trainer_free(t);
    CHECK(st_trainer_new(c, ST_TRAIN_HF, ST_ALPHABET_BYTES, 1000, 0, 2, NULL, &t, &e) == ST_OK, "hf");
    const char *coll = "a<|b|>";
    size_t cends[2] = {1, 6};
    CHECK(st_trainer_set_specials(t, coll, cends, 2, &e) == ST_OK, "set_specials: %s", e.message);
    CHECK(st_trainer_stat(t, ST_TRAINER_TARGET) == 1000 - 255 - 2, "hf: special \"a\" is byte 'a' in HF's vocabulary");
    st_trainer_free(t);
    /* a size past the rules model's id limit: the target stays capped at the limit after the
     * specials are set (every hf merge takes an id of the written model), and training stops there */
    CHECK(st_trainer_new(c, ST_TRAIN_HF, ST_ALPHABET_BYTES, (uint64_t)1 << 40, 0, 2, NULL, &t, &e) == ST_OK, "hf big");
    CHECK(st_trainer_set_specials(t, coll, cends, 2, &e) == ST_OK, "set_specials: %s", e.message);
    CHECK(st_trainer_stat(t, ST_TRAINER_TARGET) == (1u << 21) - 2 - 256 - 2,
          "hf: the target past the id limit is capped after set_specials (%llu)",
          (unsigned long long)st_trainer_stat(t, ST_TRAINER_TARGET));
    st_trainer_free(t);
    st_counter_free(c);
}

/* ---- superwords: candidates, n-gram split, phase 2 (docs/design.md §8) ------------------------
 * A naive reference again: candidates from st_pretokenize and a linear search of the vocabulary
 * (rebuilt from the merges), phase 2 by recounting every pair at every step. */

/* memcmp that takes NULL pointers with a size of 0 (empty merge lists are NULL) */
static int mcmp(const void *a, const void *b, size_t n) { return n ? memcmp(a, b, n) : 0; }

/* A token's base symbols as bytes (UBE: 2 big-endian bytes each), as the trainer orders them. */
typedef struct nvocab {
    uint32_t base;
    int alphabet;
    uint8_t *seq[8192];
    size_t len[8192];
    size_t n;
} nvocab;

static void nv_init(nvocab *v, int alphabet, const uint32_t *merges, size_t kept) {
    v->alphabet = alphabet;
    v->base = alphabet == ST_ALPHABET_UBE ? 512 : 256;
    for (uint32_t b = 0; b < v->base; b++) {
        v->seq[b] = malloc(2);
        if (alphabet == ST_ALPHABET_UBE) { v->seq[b][0] = (uint8_t)(b >> 8); v->seq[b][1] = (uint8_t)b; v->len[b] = 2; }
        else { v->seq[b][0] = (uint8_t)b; v->len[b] = 1; }
    }
    v->n = v->base;
    for (size_t i = 0; i < kept; i++) {
        uint32_t x = merges[2 * i], y = merges[2 * i + 1], id = (uint32_t)v->n++;
        v->len[id] = v->len[x] + v->len[y];
        v->seq[id] = malloc(v->len[id]);
        memcpy(v->seq[id], v->seq[x], v->len[x]);
        memcpy(v->seq[id] + v->len[x], v->seq[y], v->len[y]);
    }
}
static void nv_free(nvocab *v) {
    for (size_t i = 0; i < v->n; i++) free(v->seq[i]);
}
/* Append a token spelling x then y (a supermerge). */
static void nv_add(nvocab *v, uint32_t x, uint32_t y) {
    uint32_t id = (uint32_t)v->n++;
    v->len[id] = v->len[x] + v->len[y];
    v->seq[id] = malloc(v->len[id]);
    memcpy(v->seq[id], v->seq[x], v->len[x]);
    memcpy(v->seq[id] + v->len[x], v->seq[y], v->len[y]);
}

/* The smallest id spelling text p[0..n), or UINT32_MAX. */
static uint32_t nv_find(const nvocab *v, const char *p, size_t n) {
    uint8_t buf[512];
    size_t bl = 0;
    if (v->alphabet == ST_ALPHABET_UBE) {
        uint16_t s16[256];
        size_t ns = 0;
        if (n > 256 || st_ube_encode_symbols(p, n, s16, 256, &ns, NULL) != ST_OK) return UINT32_MAX;
        for (size_t k = 0; k < ns; k++) { buf[bl++] = (uint8_t)(s16[k] >> 8); buf[bl++] = (uint8_t)s16[k]; }
    } else {
        if (n > sizeof buf) return UINT32_MAX;
        memcpy(buf, p, n);
        bl = n;
    }
    for (uint32_t id = 0; id < v->n; id++)
        if (v->len[id] == bl && !mcmp(v->seq[id], buf, bl)) return id;
    return UINT32_MAX;
}

/* The test corpora's letters: ASCII letters and every non-ASCII character they use (é, 中, ส). */
static int test_has_letter(const char *p, size_t n) {
    for (size_t k = 0; k < n; k++) {
        unsigned char ch = (unsigned char)p[k];
        if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') return 1;
        if (ch >= 0xC0) return 1;
    }
    return 0;
}

/* Aggregated candidates: keys (pretokens joined with 0xFF), ids, counts. */
typedef struct ncand {
    char *key;
    size_t klen;
    uint32_t ids[64];
    size_t n;
    uint64_t count;
} ncand;

typedef struct nclist {
    ncand *c;
    size_t n, cap;
    uint64_t total;
} nclist;

static void ncl_add(nclist *l, const char *key, size_t klen, const uint32_t *ids, size_t n, uint64_t count) {
    l->total += count;
    for (size_t i = 0; i < l->n; i++)
        if (l->c[i].klen == klen && !mcmp(l->c[i].key, key, klen)) { l->c[i].count += count; return; }
    if (l->n == l->cap) l->c = realloc(l->c, (l->cap = l->cap ? 2 * l->cap : 16) * sizeof *l->c);
    ncand *c = &l->c[l->n++];
    c->key = malloc(klen + 1);
    memcpy(c->key, key, klen);
    c->klen = klen;
    c->n = n < 64 ? n : 64;
    if (c->n) memcpy(c->ids, ids, c->n * sizeof *ids);
    c->count = count;
}
static void ncl_free(nclist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->c[i].key);
    free(l->c);
    memset(l, 0, sizeof *l);
}

/* The candidates of one document, naively. */
static void naive_candidates(nclist *l, const nvocab *v, int pattern, uint32_t flags, const char *doc, size_t len) {
    st_pretokenizer *pt = NULL;
    st_pretokenizer_new(pattern, flags, NULL, 0, NULL, &pt, NULL);
    size_t *ends = malloc((len + 1) * sizeof *ends), np = 0;
    st_status st = st_pretokenize(pt, doc, len, 0, ends, len + 1, &np, NULL);
    CHECK(st == ST_OK, "naive pretokenize");
    char key[4096];
    uint32_t ids[64];
    size_t kl = 0, run = 0, prev = 0;
    for (size_t i = 0; i <= np; i++) {
        uint32_t id = UINT32_MAX;
        if (i < np) {
            const char *p = doc + prev;
            size_t n = ends[i] - prev;
            if (test_has_letter(p, n)) id = nv_find(v, p, n);
            if (id != UINT32_MAX && kl + n + 1 < sizeof key && run < 64) {
                if (run) key[kl++] = (char)0xFF;
                memcpy(key + kl, p, n);
                kl += n;
                ids[run++] = id;
            } else id = UINT32_MAX;
            prev = ends[i];
        }
        if (id == UINT32_MAX) {
            if (run >= 2) ncl_add(l, key, kl, ids, run, 1);
            run = kl = 0;
        }
    }
    free(ends);
    st_pretokenizer_free(pt);
}

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn) {
    int r = memcmp(a, b, an < bn ? an : bn);
    return r ? r : (an < bn ? -1 : an > bn);
}

/* 1 if the candidates counter holds exactly the list (compared through its saved file). */
static int counter_matches(const st_counter *c, const nclist *l, const char *what) {
    size_t slen;
    uint8_t *b = save(c, &slen);
    int ok = slen >= 132 && le(b + 8, 4) == 2 && le(b + 84, 4) == 1;
    CHECK(ok, "%s: a candidates file has version 2, kind 1", what);
    size_t pos = 132, k = 0;
    /* the list sorted by key */
    size_t *ord = malloc((l->n + 1) * sizeof *ord);
    for (size_t i = 0; i < l->n; i++) ord[i] = i;
    for (size_t i = 1; i < l->n; i++)
        for (size_t j = i; j > 0 && bytes_cmp(l->c[ord[j]].key, l->c[ord[j]].klen, l->c[ord[j - 1]].key, l->c[ord[j - 1]].klen) < 0; j--) {
            size_t t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t;
        }
    while (ok && pos + 12 <= slen) {
        uint32_t n = (uint32_t)le(b + pos, 4);
        uint64_t cnt = le(b + pos + 4, 8);
        if (k >= l->n || l->c[ord[k]].klen != n || memcmp(l->c[ord[k]].key, b + pos + 12, n) || l->c[ord[k]].count != cnt) {
            ok = 0;
            printf("  %s: entry %zu differs (count %llu, expected %llu)\n", what, k, (unsigned long long)cnt,
                   k < l->n ? (unsigned long long)l->c[ord[k]].count : 0ull);
        }
        pos += 12 + n;
        k++;
    }
    ok = ok && k == l->n && pos == slen;
    CHECK(ok, "%s: the candidates are the naive ones (%zu entries, expected %zu)", what, k, l->n);
    CHECK(st_counter_stat(c, ST_COUNTER_UNIQUE) == l->n && st_counter_stat(c, ST_COUNTER_PRETOKENS) == l->total,
          "%s: UNIQUE and PRETOKENS", what);
    free(ord);
    free(b);
    return ok;
}

/* Naive phase 2: words are the candidates' ids; returns the regular merges kept, fills sup
 * (final ids) and counts. */
static size_t naive_phase2(const nclist *l, nvocab *v, const uint64_t *rcounts, size_t made, uint64_t target,
                           int algorithm, uint64_t s, uint64_t minf, uint32_t *sup, uint64_t *scounts, size_t *nsup) {
    size_t nw = l->n;
    uint32_t **w = malloc((nw + 1) * sizeof *w);
    size_t *wl = malloc((nw + 1) * sizeof *wl);
    for (size_t i = 0; i < nw; i++) {
        w[i] = malloc(64 * sizeof **w);
        memcpy(w[i], l->c[i].ids, l->c[i].n * sizeof **w);
        wl[i] = l->c[i].n;
    }
    uint32_t base = v->base;
    uint64_t room = target > s ? target - s : 0;
    size_t j = algorithm == ST_ALGORITHM_SUPERBPE ? (made < room ? made : (size_t)room) : 0, ns = 0;
    uint64_t floor = minf ? minf : 1;
    g_naive_stop = ST_STOP_VOCAB_SIZE;
    ref r; /* only for its ordering (seqcmp on seq/seqlen) */
    memset(&r, 0, sizeof r);
    r.mode = ST_TRAIN_PAPER;
    for (;;) {
        if (algorithm == ST_ALGORITHM_SUPERBPE ? ns >= s : j + ns >= target) break;
        r.seq = v->seq;
        r.seqlen = v->len;
        /* count pairs */
        size_t np = 0, cap = 64;
        rpair *ps = malloc(cap * sizeof *ps);
        for (size_t i = 0; i < nw; i++) {
            uint32_t *q = w[i];
            for (size_t k = 0; k + 1 < wl[i]; k++) {
                if (q[k] == q[k + 1]) {
                    size_t st = k;
                    while (st > 0 && q[st - 1] == q[k]) st--;
                    if ((k - st) % 2) continue;
                }
                size_t e = 0;
                while (e < np && !(ps[e].a == q[k] && ps[e].b == q[k + 1])) e++;
                if (e == np) {
                    if (np == cap) ps = realloc(ps, (cap *= 2) * sizeof *ps);
                    ps[np].a = q[k]; ps[np].b = q[k + 1]; ps[np].c = 0; np++;
                }
                ps[e].c += l->c[i].count;
            }
        }
        size_t best = np;
        for (size_t e = 0; e < np; e++) {
            int avail = 1;
            uint32_t part[2] = {ps[e].a, ps[e].b};
            for (int k = 0; k < 2; k++)
                if (part[k] >= base && part[k] < base + made && part[k] - base >= j) avail = 0;
            if (avail && ps[e].c >= floor &&
                (best == np || ref_better(&r, ps[e].c, ps[e].a, ps[e].b, ps[best].c, ps[best].a, ps[best].b)))
                best = e;
        }
        int regular_left = algorithm == ST_ALGORITHM_BOUNDLESS && j < made;
        if (best < np && (!regular_left || ps[best].c > rcounts[j])) {
            uint32_t x = ps[best].a, y = ps[best].b, nt = (uint32_t)v->n;
            nv_add(v, x, y);
            sup[2 * ns] = x;
            sup[2 * ns + 1] = y;
            scounts[ns++] = ps[best].c;
            for (size_t i = 0; i < nw; i++) {
                size_t o = 0;
                for (size_t k = 0; k < wl[i];) {
                    if (k + 1 < wl[i] && w[i][k] == x && w[i][k + 1] == y) { w[i][o++] = nt; k += 2; }
                    else w[i][o++] = w[i][k++];
                }
                wl[i] = o;
            }
        } else if (regular_left) j++;
        else { /* every pair is available now: any left is below floor */
            g_naive_stop = np ? ST_STOP_MIN_FREQUENCY : ST_STOP_NO_CANDIDATE;
            free(ps);
            break;
        }
        free(ps);
    }
    /* final ids: supermerge i is base + j + i */
    for (size_t k = 0; k < 2 * ns; k++)
        if (sup[k] >= base + made) sup[k] -= (uint32_t)(made - j);
    for (size_t i = 0; i < nw; i++) free(w[i]);
    free(w);
    free(wl);
    *nsup = ns;
    return j;
}

static st_counter *candidates_of(const st_trainer *t, int algorithm, uint64_t s, const char *const *docs, size_t n) {
    st_counter *c = NULL;
    st_error e;
    st_status st = st__counter_new_candidates(t, algorithm, s, NULL, &c, &e);
    CHECK(st == ST_OK, "new_candidates: %s", e.message);
    if (st != ST_OK) return NULL;
    for (size_t i = 0; i < n; i++) {
        st = st_counter_add(c, docs[i], strlen(docs[i]), 0, &e);
        CHECK(st == ST_OK, "candidates add: %s", e.message);
    }
    CHECK(st_counter_stat(c, ST_COUNTER_KIND) == ST_COUNTER_KIND_CANDIDATES, "kind");
    return c;
}

/* Phase 2 to the end in steps of `step`; the trainer's counts. */
static void run_phase2(st_trainer *t, const st_counter *cands, int algorithm, uint64_t s, size_t step) {
    st_error e;
    st_status st = st__trainer_start_superwords(t, cands, algorithm, s, &e);
    CHECK(st == ST_OK, "start_superwords: %s", e.message);
    if (st != ST_OK) return;
    CHECK(st_trainer_stat(t, ST_TRAINER_PHASE) == 2, "phase 2");
    size_t made;
    do {
        st = st_trainer_step(t, step, &made, &e);
        CHECK(st == ST_OK, "phase-2 step: %s", e.message);
    } while (st == ST_OK && made == step);
    CHECK(st_trainer_stat(t, ST_TRAINER_DONE) == 1, "phase 2 done");
}

static const char *const super_pieces[] = {" the", " cat", " a", " a", " b", " ab", "a", "b", ",", " 1", "\n", " \xc3\xa9",
                                           " \xe4\xb8\xad", "\xe4\xb8\xad", " aa", " the", " cat", ".", " x"};

static char *super_doc(size_t maxp) {
    size_t np = rnd() % (maxp + 1), n = 0;
    char *d = malloc(8 * np + 1);
    for (size_t i = 0; i < np; i++) {
        const char *p = super_pieces[rnd() % (sizeof super_pieces / sizeof super_pieces[0])];
        size_t l = strlen(p);
        memcpy(d + n, p, l);
        n += l;
    }
    d[n] = 0;
    return d;
}

/* One random corpus: candidates and phase 2 against the naive reference, for both algorithms,
 * the Boundless == SuperBPE(r, s) invariant, split/merge/save/load of the candidates, and the
 * written model. */
static void super_random(unsigned seed) {
    g_rng = 0xD1B54A32D192ED03ull * (seed + 7);
    int alphabet = rnd() % 3 == 0 ? ST_ALPHABET_UBE : ST_ALPHABET_BYTES;
    int pattern = 1 + (int)(rnd() % 3);
    uint32_t flags = rnd() % 4 == 0 ? ST_PRETOK_SCRIPT_AWARE : 0;
    size_t ndocs = 1 + rnd() % 10;
    char *docs[12];
    for (size_t i = 0; i < ndocs; i++) docs[i] = super_doc(rnd() % 3 ? 14 : 40);
    uint64_t minf = rnd() % 4 == 0 ? 1 + rnd() % 3 : 0;
    st_counter *c = counter_of(pattern, flags, (const char *const *)docs, ndocs);
    uint64_t alpha = alphabet == ST_ALPHABET_UBE ? 478 : 243;
    uint64_t vocab = alpha + 2 + rnd() % 40;
    st_trainer *t = train(c, ST_TRAIN_PAPER, alphabet, vocab, minf, 0, 1000);
    const uint32_t *m1;
    const uint64_t *c1;
    size_t made = st_trainer_merges(t, &m1, &c1);
    uint32_t *merges = malloc((2 * made + 1) * sizeof *merges);
    uint64_t *counts = malloc((made + 1) * sizeof *counts);
    if (made) {
        memcpy(merges, m1, 2 * made * sizeof *merges);
        memcpy(counts, c1, made * sizeof *counts);
    }
    uint64_t target = st_trainer_stat(t, ST_TRAINER_TARGET);
    uint64_t cmin = st_trainer_stat(t, ST_TRAINER_NGRAM_CMIN);
    CHECK(cmin == (made && counts[made - 1] > 15 ? counts[made - 1] : 15), "seed %u: NGRAM_CMIN", seed);

    /* BOUNDLESS */
    nvocab *v = malloc(sizeof *v);
    nv_init(v, alphabet, merges, made);
    nclist want = {0};
    for (size_t i = 0; i < ndocs; i++) naive_candidates(&want, v, pattern, flags, docs[i], strlen(docs[i]));
    st_counter *cb = candidates_of(t, ST_ALGORITHM_BOUNDLESS, 0, (const char *const *)docs, ndocs);
    char what[64];
    snprintf(what, sizeof what, "seed %u boundless", seed);
    counter_matches(cb, &want, what);
    /* any split of the documents, merged, and saved + loaded, gives the same file */
    {
        st_counter *c2 = candidates_of(t, ST_ALGORITHM_BOUNDLESS, 0, (const char *const *)docs, ndocs / 2);
        st_counter *c3 = candidates_of(t, ST_ALGORITHM_BOUNDLESS, 0, (const char *const *)docs + ndocs / 2, ndocs - ndocs / 2);
        st_error e;
        CHECK(st_counter_merge(c2, c3, &e) == ST_OK, "%s: merge: %s", what, e.message);
        size_t l1, l2, l3;
        uint8_t *b1 = save(cb, &l1), *b2 = save(c2, &l2);
        st_counter *c4 = candidates_of(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, 0);
        CHECK(st_counter_load(c4, b2, l2, &e) == ST_OK, "%s: load: %s", what, e.message);
        uint8_t *b3 = save(c4, &l3);
        CHECK(l1 == l2 && !mcmp(b1, b2, l1) && l1 == l3 && !mcmp(b1, b3, l1), "%s: split, merged, loaded: same file", what);
        free(b1); free(b2); free(b3);
        st_counter_free(c2); st_counter_free(c3); st_counter_free(c4);
    }
    uint32_t *sup = malloc(2 * (target + 1) * sizeof *sup);
    uint64_t *sc = malloc((target + 1) * sizeof *sc);
    size_t nsup = 0;
    size_t r = naive_phase2(&want, v, counts, made, target, ST_ALGORITHM_BOUNDLESS, 0, minf, sup, sc, &nsup);
    st_trainer *tb = train(c, ST_TRAIN_PAPER, alphabet, vocab, minf, 0, 1000);
    run_phase2(tb, cb, ST_ALGORITHM_BOUNDLESS, 0, 1 + rnd() % 3);
    const uint32_t *gp, *gs;
    const uint64_t *gc, *gsc;
    size_t gr = st_trainer_merges(tb, &gp, &gc), gn = st_trainer_supermerges(tb, &gs, &gsc);
    int same = gr == r && gn == nsup && !mcmp(gp, merges, 2 * r * sizeof *gp) && !mcmp(gc, counts, r * sizeof *gc) &&
               (!nsup || (!mcmp(gs, sup, 2 * nsup * sizeof *gs) && !mcmp(gsc, sc, nsup * sizeof *gsc)));
    CHECK(same, "%s: phase 2 = the naive one (%zu regular + %zu super, expected %zu + %zu)", what, gr, gn, r, nsup);
    CHECK(st_trainer_stat(tb, ST_TRAINER_STOP) == (uint64_t)g_naive_stop &&
              st_trainer_stat(tb, ST_TRAINER_STOP_PHASE1) == st_trainer_stat(t, ST_TRAINER_STOP) &&
              st_trainer_stat(t, ST_TRAINER_STOP) != ST_STOP_RUNNING,
          "%s: phase 2 stopped for reason %llu, the naive one for %d", what,
          (unsigned long long)st_trainer_stat(tb, ST_TRAINER_STOP), g_naive_stop);
    if (!same)
        for (size_t k = 0; k < gn && k < nsup; k++)
            if (gs[2 * k] != sup[2 * k] || gs[2 * k + 1] != sup[2 * k + 1] || gsc[k] != sc[k]) {
                printf("  supermerge %zu: got %u %u %llu, expected %u %u %llu\n", k, gs[2 * k], gs[2 * k + 1],
                       (unsigned long long)gsc[k], sup[2 * k], sup[2 * k + 1], (unsigned long long)sc[k]);
                break;
            }
    CHECK(st_trainer_stat(tb, ST_TRAINER_REGULAR) == gr && st_trainer_stat(tb, ST_TRAINER_SUPERMERGES) == gn &&
              st_trainer_stat(tb, ST_TRAINER_CANDIDATES) == want.n && st_trainer_stat(tb, ST_TRAINER_STEPS) == target,
          "%s: stats", what);
    /* the written model parses back to the same pairs, and is canonical */
    {
        size_t mlen;
        char *text = model_text(tb, NULL, NULL, 0, &mlen);
        st_model *m = NULL;
        st_error e;
        st_status st = st_model_parse(text, mlen, NULL, &m, &e);
        CHECK(st == ST_OK, "%s: the model parses: %s (line %llu)", what, e.message, (unsigned long long)e.line);
        if (st == ST_OK) {
            const uint32_t *mp;
            const uint64_t *mc;
            size_t n1 = st_model_pairs(m, "merges", &mp, &mc), n2;
            CHECK(n1 == gr && (!n1 || (!mcmp(mp, gp, 2 * n1 * sizeof *mp) && !mcmp(mc, gc, n1 * sizeof *mc))), "%s: model merges", what);
            n2 = st_model_pairs(m, "supermerges", &mp, &mc);
            CHECK(n2 == gn && (!n2 || (!mcmp(mp, gs, 2 * n2 * sizeof *mp) && !mcmp(mc, gsc, n2 * sizeof *mc))), "%s: model supermerges", what);
            char *back = malloc(mlen + 1);
            size_t blen = 0;
            CHECK(st_model_write(m, back, mlen, &blen) == ST_OK && blen == mlen && !mcmp(back, text, mlen), "%s: canonical", what);
            CHECK(!strncmp(text, "supertok-model 2\n", 17) && strstr(text, "\ntraining algorithm=boundless mode=paper vocab_size="),
                  "%s: version 2 with a training line", what);
            free(back);
            st_model_free(m);
        }
        free(text);
    }

    /* SUPERBPE(s) with the s Boundless found: the same model (the invariant) */
    uint64_t s = gn;
    st_counter *cs = candidates_of(t, ST_ALGORITHM_SUPERBPE, s, (const char *const *)docs, ndocs);
    st_trainer *ts = train(c, ST_TRAIN_PAPER, alphabet, vocab, minf, 0, 1000);
    run_phase2(ts, cs, ST_ALGORITHM_SUPERBPE, s, 1000);
    const uint32_t *hp, *hs;
    const uint64_t *hc, *hsc;
    size_t hr = st_trainer_merges(ts, &hp, &hc), hn = st_trainer_supermerges(ts, &hs, &hsc);
    same = hr == gr && hn == gn && !mcmp(hp, gp, 2 * hr * sizeof *hp) && !mcmp(hc, gc, hr * sizeof *hc) &&
           (!hn || (!mcmp(hs, gs, 2 * hn * sizeof *hs) && !mcmp(hsc, gsc, hn * sizeof *hsc)));
    CHECK(same, "seed %u: Boundless (%zu + %zu) == SuperBPE(r, s) (%zu + %zu)", seed, gr, gn, hr, hn);
    /* SuperBPE with another s against the naive reference */
    uint64_t s2 = rnd() % (target + 1);
    nvocab *v2 = malloc(sizeof *v2);
    uint64_t room = target - s2;
    size_t kept = made < room ? made : (size_t)room;
    nv_init(v2, alphabet, merges, kept);
    nclist want2 = {0};
    for (size_t i = 0; i < ndocs; i++) naive_candidates(&want2, v2, pattern, flags, docs[i], strlen(docs[i]));
    st_counter *cs2 = candidates_of(t, ST_ALGORITHM_SUPERBPE, s2, (const char *const *)docs, ndocs);
    snprintf(what, sizeof what, "seed %u superbpe s=%llu", seed, (unsigned long long)s2);
    counter_matches(cs2, &want2, what);
    size_t nsup2 = 0;
    uint32_t *sup2 = malloc(2 * (s2 + 1) * sizeof *sup2);
    uint64_t *sc2 = malloc((s2 + 1) * sizeof *sc2);
    /* the naive vocabulary holds the kept merges only: supermerge i is its id base + kept + i */
    size_t r2 = naive_phase2(&want2, v2, counts, kept, target, ST_ALGORITHM_SUPERBPE, s2, minf, sup2, sc2, &nsup2);
    st_trainer *ts2 = train(c, ST_TRAIN_PAPER, alphabet, vocab, minf, 0, 1000);
    run_phase2(ts2, cs2, ST_ALGORITHM_SUPERBPE, s2, 2);
    hr = st_trainer_merges(ts2, &hp, &hc);
    hn = st_trainer_supermerges(ts2, &hs, &hsc);
    same = hr == r2 && hn == nsup2 && !mcmp(hp, merges, 2 * hr * sizeof *hp) &&
           (!hn || (!mcmp(hs, sup2, 2 * hn * sizeof *hs) && !mcmp(hsc, sc2, hn * sizeof *hsc)));
    CHECK(same, "%s: phase 2 = the naive one (%zu + %zu, expected %zu + %zu)", what, hr, hn, r2, nsup2);
    CHECK(st_trainer_stat(ts2, ST_TRAINER_STOP) == (uint64_t)g_naive_stop, "%s: stopped for reason %llu, the naive "
          "one for %d", what, (unsigned long long)st_trainer_stat(ts2, ST_TRAINER_STOP), g_naive_stop);

    free(sup2); free(sc2);
    ncl_free(&want2);
    nv_free(v2); free(v2);
    st_trainer_free(ts2);
    st_counter_free(cs2);
    st_trainer_free(ts);
    st_counter_free(cs);
    free(sup); free(sc);
    st_trainer_free(tb);
    st_counter_free(cb);
    ncl_free(&want);
    nv_free(v); free(v);
    free(merges); free(counts);
    st_trainer_free(t);
    st_counter_free(c);
    for (size_t i = 0; i < ndocs; i++) free(docs[i]);
}

/* The hand-worked n-gram examples (see the comments) and the candidates' errors. */
static void test_ngrams_and_errors(void) {
    /* x, " y", " z", " w" are tokens (the vocabulary is large enough to merge every pretoken);
     * the candidates: [x y z] x3, [x y w] x2, [z w] x1 */
    const char *docs[] = {"x y z", "x y z", "x y z", "x y w", "x y w", "z w"};
    st_counter *c = counter_of(ST_PATTERN_GPT2, 0, docs, 6);
    st_trainer *t = train(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 243 + 50, 0, 0, 1000);
    st_counter *cb = candidates_of(t, ST_ALGORITHM_BOUNDLESS, 0, docs, 6);
    CHECK(st_counter_stat(cb, ST_COUNTER_UNIQUE) == 3 && st_counter_stat(cb, ST_COUNTER_PRETOKENS) == 6 &&
              st_counter_stat(cb, ST_COUNTER_DOCUMENTS) == 6,
          "ngram corpus: 3 distinct candidates, 6 counted");
    struct {
        uint64_t cmin;
        size_t max_len;
        const char *want[3];
        uint64_t counts[3];
    } ex[] = {
        /* c_min 3: unigrams x5 y5 z4 w3 all kept; bigrams xy5 yz3 kept, yw2 zw1 dropped; trigram
         * xyz (xy, yz kept) 3 kept, xyw skipped (yw dropped); no 4-grams. Split: [x y z] -> xyz x3;
         * [x y w] -> xy x2 (w alone dropped); [z w] -> nothing. */
        {3, 30, {"x\xff y\xff z", "x\xff y", NULL}, {3, 2, 0}},
        /* c_min 4: w3 dropped; xy5 kept, yz3 dropped; no trigram counted (yz dropped). Split:
         * [x y z] -> xy x3, [x y w] -> xy x2: xy x5. */
        {4, 30, {"x\xff y", NULL, NULL}, {5, 0, 0}},
        /* c_min 3, max_len 2: as the first without the trigram: xy x3 + x2. */
        {3, 2, {"x\xff y", NULL, NULL}, {5, 0, 0}},
        /* c_min 1: everything kept, each candidate stays whole. */
        {1, 30, {"x\xff y\xff z", "x\xff y\xff w", "z\xff w"}, {3, 2, 1}},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        st_counter *sp = NULL;
        st_error e;
        st_status st = st__counter_split_ngrams(cb, ex[i].cmin, ex[i].max_len, NULL, &sp, &e);
        CHECK(st == ST_OK, "split %zu: %s", i, e.message);
        if (st != ST_OK) continue;
        nclist want = {0};
        for (int k = 0; k < 3 && ex[i].want[k]; k++) ncl_add(&want, ex[i].want[k], strlen(ex[i].want[k]), NULL, 0, ex[i].counts[k]);
        char what[32];
        snprintf(what, sizeof what, "n-gram example %zu", i);
        counter_matches(sp, &want, what);
        CHECK(st_counter_stat(sp, ST_COUNTER_DOCUMENTS) == 6 && st_counter_stat(sp, ST_COUNTER_BYTES) == st_counter_stat(cb, ST_COUNTER_BYTES),
              "%s: documents and bytes kept", what);
        /* phase 2 starts from split candidates; the model's training line names the split */
        st_trainer *t2 = train(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 243 + 50, 0, 0, 1000);
        run_phase2(t2, sp, ST_ALGORITHM_BOUNDLESS, 0, 1000);
        size_t mlen;
        char *text = model_text(t2, NULL, NULL, 0, &mlen);
        char line[128];
        snprintf(line, sizeof line, "ngram_split=yes c_min=%llu max_len=%zu\n", (unsigned long long)ex[i].cmin, ex[i].max_len);
        CHECK(strstr(text, line) != NULL, "%s: training line has '%s'", what, line);
        free(text);
        /* a split counter counts no documents, and is not split twice */
        CHECK(st_counter_add(sp, "x y", 3, 0, NULL) == ST_ERR_INVALID_ARGUMENT, "%s: no documents into a split counter", what);
        st_counter *sp2 = NULL;
        CHECK(st__counter_split_ngrams(sp, 3, 30, NULL, &sp2, NULL) == ST_ERR_INVALID_ARGUMENT && !sp2, "%s: not split twice", what);
        /* merging split with unsplit candidates is refused */
        CHECK(st_counter_merge(cb, sp, &e) == ST_ERR_INVALID_ARGUMENT, "%s: split and unsplit are not merged", what);
        size_t sl;
        uint8_t *b = save(sp, &sl);
        st_counter *sp3 = NULL;
        CHECK(st__counter_split_ngrams(cb, ex[i].cmin, ex[i].max_len, NULL, &sp3, NULL) == ST_OK, "split again");
        CHECK(st_counter_load(sp3, b, sl, &e) == ST_OK && st_counter_stat(sp3, ST_COUNTER_PRETOKENS) == 2 * st_counter_stat(sp, ST_COUNTER_PRETOKENS),
              "%s: a split file loads into a counter split alike", what);
        CHECK(st_counter_load(cb, b, sl, &e) == ST_ERR_INVALID_ARGUMENT, "%s: not into an unsplit one", what);
        free(b);
        st_counter_free(sp3);
        st_trainer_free(t2);
        ncl_free(&want);
        st_counter_free(sp);
    }

    /* errors */
    st_error e;
    st_counter *bad = NULL;
    CHECK(st__counter_split_ngrams(c, 3, 30, NULL, &bad, &e) == ST_ERR_INVALID_ARGUMENT, "split of a pretoken counter");
    CHECK(st__counter_split_ngrams(cb, 0, 30, NULL, &bad, &e) == ST_ERR_INVALID_ARGUMENT, "split with c_min 0");
    CHECK(st__counter_split_ngrams(cb, 3, 1, NULL, &bad, &e) == ST_ERR_INVALID_ARGUMENT, "split with max_len 1");
    CHECK(st_counter_add_pretoken(cb, "x", 1, 1, &e) == ST_ERR_INVALID_ARGUMENT, "add_pretoken into candidates");
    CHECK(st_counter_merge(cb, c, &e) == ST_ERR_INVALID_ARGUMENT && st_counter_merge(c, cb, &e) == ST_ERR_INVALID_ARGUMENT,
          "pretokens and candidates are not merged");
    st_trainer *tx = NULL;
    CHECK(st_trainer_new(cb, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 300, 0, 0, NULL, &tx, &e) == ST_ERR_INVALID_ARGUMENT && !tx,
          "trainer_new refuses candidates");
    {
        size_t l1, l2;
        uint8_t *b1 = save(c, &l1), *b2 = save(cb, &l2);
        CHECK(st_counter_load(cb, b1, l1, &e) == ST_ERR_INVALID_ARGUMENT, "a pretoken file into candidates: %s", e.message);
        CHECK(st_counter_load(c, b2, l2, &e) == ST_ERR_INVALID_ARGUMENT, "a candidates file into pretokens: %s", e.message);
        /* another vocabulary: a smaller vocabulary's candidates are refused */
        st_trainer *t3 = train(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 243 + 1, 0, 0, 1000);
        st_counter *c3 = candidates_of(t3, ST_ALGORITHM_BOUNDLESS, 0, docs, 6);
        CHECK(st_counter_merge(c3, cb, &e) == ST_ERR_INVALID_ARGUMENT, "another vocabulary: merge refused");
        CHECK(st_counter_load(c3, b2, l2, &e) == ST_ERR_INVALID_ARGUMENT, "another vocabulary: load refused");
        CHECK(st__trainer_start_superwords(t3, cb, ST_ALGORITHM_BOUNDLESS, 0, &e) == ST_ERR_INVALID_ARGUMENT,
              "another vocabulary: start refused: %s", e.message);
        CHECK(st__trainer_start_superwords(t, cb, ST_ALGORITHM_SUPERBPE, 0, &e) == ST_ERR_INVALID_ARGUMENT,
              "another algorithm: start refused");
        CHECK(st__trainer_start_superwords(t, c, ST_ALGORITHM_BOUNDLESS, 0, &e) == ST_ERR_INVALID_ARGUMENT,
              "a pretoken counter: start refused");
        /* damaged candidates files */
        uint8_t *d = malloc(l2);
        memcpy(d, b2, l2);
        d[108] ^= 1; /* the fingerprint */
        CHECK(st_counter_load(cb, d, l2, &e) == ST_ERR_INVALID_ARGUMENT, "a changed fingerprint is refused");
        memcpy(d, b2, l2);
        d[132 + 12] = 0xFF; /* a candidate starting with the separator: an empty pretoken */
        CHECK(st_counter_load(cb, d, l2, &e) == ST_ERR_MALFORMED_MODEL, "an empty pretoken in a candidate: %s", e.message);
        CHECK(st_counter_load(cb, b2, l2 - 1, &e) == ST_ERR_MALFORMED_MODEL, "a cut candidates file");
        free(d);
        st_counter_free(c3);
        st_trainer_free(t3);
        free(b1);
        free(b2);
    }
    {
        /* a trainer not finished, an hf trainer, a SuperBPE s above the target */
        st_trainer *tu = NULL, *th = NULL;
        st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 300, 0, 0, NULL, &tu, NULL);
        st_counter *x = NULL;
        CHECK(st__counter_new_candidates(tu, ST_ALGORITHM_BOUNDLESS, 0, NULL, &x, &e) == ST_ERR_INVALID_ARGUMENT && !x,
              "candidates before phase 1 is done");
        th = train(c, ST_TRAIN_HF, ST_ALPHABET_BYTES, 300, 0, 0, 1000);
        CHECK(st__counter_new_candidates(th, ST_ALGORITHM_BOUNDLESS, 0, NULL, &x, &e) == ST_ERR_INVALID_ARGUMENT && !x &&
                  strstr(e.message, "hf"),
              "hf mode refused: %s", e.message);
        CHECK(st__counter_new_candidates(t, ST_ALGORITHM_SUPERBPE, 1000, NULL, &x, &e) == ST_ERR_INVALID_ARGUMENT && !x,
              "supermerges above the target");
        CHECK(st__counter_new_candidates(t, ST_ALGORITHM_BPE, 0, NULL, &x, &e) == ST_ERR_INVALID_ARGUMENT && !x,
              "algorithm bpe has no candidates");
        st_trainer_free(tu);
        st_trainer_free(th);
    }
    /* documents are independent; ST_COUNT_LINES makes one per line */
    {
        st_counter *x = candidates_of(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, 0);
        const char texts[] = "x y z";
        size_t ends[2] = {1, 5};
        CHECK(st_counter_add_documents(x, texts, ends, 2, &e) == ST_OK && st_counter_stat(x, ST_COUNTER_UNIQUE) == 1 &&
                  st_counter_stat(x, ST_COUNTER_DOCUMENTS) == 2,
              "runs never cross documents");
        st_counter_free(x);
        x = candidates_of(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, 0);
        const char lines[] = "x y\nz w\nx";
        CHECK(st_counter_add(x, lines, strlen(lines), ST_COUNT_LINES, &e) == ST_OK && st_counter_stat(x, ST_COUNTER_DOCUMENTS) == 3 &&
                  st_counter_stat(x, ST_COUNTER_PRETOKENS) == 2,
              "ST_COUNT_LINES: one document per line");
        CHECK(st_counter_add(x, "x \xff", 3, 0, &e) == ST_ERR_INVALID_UTF8 && st_counter_stat(x, ST_COUNTER_DOCUMENTS) == 3,
              "invalid UTF-8 counts nothing");
        st_counter_free(x);
    }
    /* phase 2 errors: started twice, stats before */
    CHECK(st_trainer_stat(t, ST_TRAINER_PHASE) == 1 && st_trainer_stat(t, ST_TRAINER_REGULAR) == st_trainer_stat(t, ST_TRAINER_MERGES),
          "phase 1 stats");
    run_phase2(t, cb, ST_ALGORITHM_BOUNDLESS, 0, 1000);
    CHECK(st__trainer_start_superwords(t, cb, ST_ALGORITHM_BOUNDLESS, 0, &e) == ST_ERR_INVALID_ARGUMENT, "phase 2 starts once");
    st_counter_free(cb);
    st_trainer_free(t);
    st_counter_free(c);
}

/* The stepwise trainer's states (ST_TRAINER_STATE) and the calls made out of their order: each
 * is refused with ST_ERR_INVALID_ARGUMENT and kind ST_KIND_OUT_OF_ORDER, leaves the trainer as it
 * was, and training then finishes as if the call had not been made. */
static int out_of_order(st_status st, const st_error *e) {
    return st == ST_ERR_INVALID_ARGUMENT && e->kind == ST_KIND_OUT_OF_ORDER && e->message[0] &&
           !strcmp(st_error_kind_name((int)e->kind), "ST_KIND_OUT_OF_ORDER");
}

static const char *const g_state_docs[] = {
    "the cat sat on the mat and the cat saw the dog",
    "in order to see the cat, the dog sat on the mat",
    "the dog and the cat sat in the sun in order to rest",
    "of the cat and of the dog, the cat sat first",
};

#define STATE_REPEAT 20 /* each document's count: the n-gram split keeps counts of 15 and more */

static st_trainer *state_trainer(int algorithm, uint64_t s, uint32_t flags) {
    st_counter *c = NULL;
    st_trainer *t = NULL;
    st_error e;
    CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &c, &e) == ST_OK, "counter");
    for (size_t i = 0; i < 4 * STATE_REPEAT; i++)
        CHECK(st_counter_add(c, g_state_docs[i % 4], strlen(g_state_docs[i % 4]), 0, &e) == ST_OK, "count");
    CHECK(st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 243 + 200, 0, 0, NULL, &t, &e) == ST_OK, "trainer");
    st_counter_free(c);
    if (!t) return NULL;
    st_status st = st_trainer_set_superwords(t, algorithm, s, flags, &e);
    CHECK(st == ST_OK, "set_superwords(%d, %llu, %u): %s", algorithm, (unsigned long long)s, flags, e.message);
    return t;
}

/* Run t to the end as a host does, with the texts fed to n counters; the model text (malloc'd). */
static char *state_run(st_trainer *t, int n, size_t step) {
    st_error e;
    size_t made;
    for (int guard = 0; guard < 100000; guard++) {
        uint64_t state = st_trainer_stat(t, ST_TRAINER_STATE);
        if (state == ST_TRAINING_DONE) break;
        if (state == ST_TRAINING_CANDIDATES) {
            st_counter *k[4] = {NULL, NULL, NULL, NULL};
            for (int q = 0; q < n; q++)
                CHECK(st_trainer_candidates_new(t, NULL, &k[q], &e) == ST_OK, "candidates_new: %s", e.message);
            for (size_t d = 0; d < 4 * STATE_REPEAT && n; d++)
                CHECK(st_counter_add(k[d % (size_t)n], g_state_docs[d % 4], strlen(g_state_docs[d % 4]), 0, &e) == ST_OK,
                      "feed: %s", e.message);
            for (int q = 0; q < n; q++) {
                CHECK(st_trainer_candidates_add(t, k[q], &e) == ST_OK, "candidates_add: %s", e.message);
                st_counter_free(k[q]);
            }
        }
        CHECK(st_trainer_step(t, step, &made, &e) == ST_OK, "step: %s", e.message);
        CHECK(made <= step, "made %zu of %zu", made, step);
    }
    CHECK(st_trainer_stat(t, ST_TRAINER_DONE) == 1, "done");
    size_t len = 0;
    st_trainer_write_model(t, "states", 6, NULL, NULL, 0, NULL, 0, &len, NULL);
    char *m = (char *)malloc(len + 1);
    CHECK(m && st_trainer_write_model(t, "states", 6, NULL, NULL, 0, m, len, &len, &e) == ST_OK, "write: %s",
          e.message);
    if (m) m[len] = 0;
    return m;
}

static void test_trainer_states(void) {
    st_error e;
    size_t made;
    int algs[3] = {ST_ALGORITHM_BOUNDLESS, ST_ALGORITHM_SUPERBPE, ST_ALGORITHM_BOUNDLESS};
    uint32_t flags[3] = {0, 0, ST_SUPERWORDS_NGRAM_SPLIT};
    for (int a = 0; a < 3; a++) {
        uint64_t s = algs[a] == ST_ALGORITHM_SUPERBPE ? 10 : 0;
        /* the same model for one counter, two counters, and no counter given back at all being
         * an empty pass (then no supermerge) */
        st_trainer *t1 = state_trainer(algs[a], s, flags[a]), *t2 = state_trainer(algs[a], s, flags[a]);
        st_trainer *t0 = state_trainer(algs[a], s, flags[a]);
        if (!t1 || !t2 || !t0) return;
        char *m1 = state_run(t1, 1, (size_t)-1), *m2 = state_run(t2, 2, 3), *m0 = state_run(t0, 0, 7);
        CHECK(m1 && m2 && !strcmp(m1, m2), "algorithm %d: one counter and two give the same model", algs[a]);
        CHECK(st_trainer_stat(t1, ST_TRAINER_SUPERMERGES) > 0, "algorithm %d: supermerges made", algs[a]);
        CHECK(st_trainer_stat(t0, ST_TRAINER_SUPERMERGES) == 0 && st_trainer_stat(t0, ST_TRAINER_CANDIDATES) == 0 &&
                  st_trainer_stat(t0, ST_TRAINER_PASS_DOCUMENTS) == 0,
              "algorithm %d: an empty pass", algs[a]);
        CHECK(st_trainer_stat(t1, ST_TRAINER_PASS_DOCUMENTS) == 4 * STATE_REPEAT &&
                  st_trainer_stat(t2, ST_TRAINER_PASS_DOCUMENTS) == 4 * STATE_REPEAT,
              "algorithm %d: the pass's documents", algs[a]);
        free(m1);
        free(m2);
        free(m0);
        st_trainer_free(t1);
        st_trainer_free(t2);
        st_trainer_free(t0);
    }

    /* the same merges as the steps run one by one (the internal calls the tests above check) */
    {
        st_trainer *t = state_trainer(ST_ALGORITHM_BOUNDLESS, 0, ST_SUPERWORDS_NGRAM_SPLIT);
        st_trainer *u = state_trainer(ST_ALGORITHM_BPE, 0, 0);
        if (!t || !u) return;
        char *mt = state_run(t, 2, 5);
        CHECK(st_trainer_step(u, (size_t)-1, &made, &e) == ST_OK && st_trainer_stat(u, ST_TRAINER_DONE), "phase 1");
        const char *docs[4 * STATE_REPEAT];
        for (size_t d = 0; d < 4 * STATE_REPEAT; d++) docs[d] = g_state_docs[d % 4];
        st_counter *k = candidates_of(u, ST_ALGORITHM_BOUNDLESS, 0, docs, 4 * STATE_REPEAT), *ks = NULL;
        CHECK(k && st__counter_split_ngrams(k, st_trainer_stat(u, ST_TRAINER_NGRAM_CMIN), ST__NGRAM_MAX_LEN, NULL, &ks,
                                            &e) == ST_OK, "split: %s", e.message);
        if (ks) run_phase2(u, ks, ST_ALGORITHM_BOUNDLESS, 0, 4);
        const uint32_t *p1, *p2;
        const uint64_t *c1, *c2;
        size_t n1 = st_trainer_supermerges(t, &p1, &c1), n2 = st_trainer_supermerges(u, &p2, &c2);
        CHECK(n1 == n2 && n1 && !memcmp(p1, p2, 2 * n1 * sizeof *p1) && !memcmp(c1, c2, n1 * sizeof *c1),
              "the stepwise trainer's supermerges are the steps' (%zu, %zu)", n1, n2);
        CHECK(st_trainer_stat(t, ST_TRAINER_CANDIDATES) == st_trainer_stat(u, ST_TRAINER_CANDIDATES), "candidates");
        free(mt);
        st_counter_free(k);
        st_counter_free(ks);
        st_trainer_free(t);
        st_trainer_free(u);
    }

    /* the setter's refusals */
    {
        st_trainer *t = state_trainer(ST_ALGORITHM_BPE, 0, 0);
        if (!t) return;
        CHECK(st_trainer_set_superwords(t, 7, 0, 0, &e) == ST_ERR_INVALID_ARGUMENT && e.kind == ST_KIND_NONE,
              "unknown algorithm");
        CHECK(st_trainer_set_superwords(t, ST_ALGORITHM_BOUNDLESS, 0, 8, &e) == ST_ERR_INVALID_ARGUMENT, "unknown flag");
        CHECK(st_trainer_set_superwords(t, ST_ALGORITHM_BOUNDLESS, 3, 0, &e) == ST_ERR_INVALID_ARGUMENT,
              "supermerges with BOUNDLESS");
        CHECK(st_trainer_set_superwords(t, ST_ALGORITHM_BPE, 0, ST_SUPERWORDS_NGRAM_SPLIT, &e) == ST_ERR_INVALID_ARGUMENT,
              "the n-gram split with BPE");
        CHECK(st_trainer_set_superwords(t, ST_ALGORITHM_SUPERBPE, 201, 0, &e) == ST_ERR_INVALID_ARGUMENT &&
                  e.kind == ST_KIND_NONE,
              "s above the target");
        CHECK(st_trainer_set_superwords(NULL, ST_ALGORITHM_BPE, 0, 0, &e) == ST_ERR_INVALID_ARGUMENT, "NULL trainer");
        /* a BPE trainer never asks for the texts */
        st_counter *k = NULL;
        CHECK(out_of_order(st_trainer_candidates_new(t, NULL, &k, &e), &e) && !k, "candidates before phase 1 ended");
        CHECK(st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_MERGES, "state merges");
        CHECK(st_trainer_step(t, 2, &made, &e) == ST_OK && made == 2, "two merges");
        CHECK(out_of_order(st_trainer_set_superwords(t, ST_ALGORITHM_BOUNDLESS, 0, 0, &e), &e),
              "the algorithm after the first step");
        CHECK(out_of_order(st_trainer_candidates_new(t, NULL, &k, &e), &e) && !k, "candidates in phase 1");
        CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK && st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_DONE,
              "BPE: done after phase 1");
        CHECK(out_of_order(st_trainer_candidates_new(t, NULL, &k, &e), &e) && !k, "candidates with BPE");
        CHECK(st_trainer_step(t, 5, &made, &e) == ST_OK && made == 0, "a step when done makes nothing");
        st_trainer_free(t);
        /* hf mode has no superwords */
        st_counter *c = NULL;
        st_trainer *h = NULL;
        CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &c, &e) == ST_OK &&
                  st_counter_add(c, g_state_docs[0], strlen(g_state_docs[0]), 0, &e) == ST_OK &&
                  st_trainer_new(c, ST_TRAIN_HF, ST_ALPHABET_BYTES, 300, 0, 0, NULL, &h, &e) == ST_OK, "hf trainer");
        CHECK(st_trainer_set_superwords(h, ST_ALGORITHM_BOUNDLESS, 0, 0, &e) == ST_ERR_INVALID_ARGUMENT &&
                  e.kind == ST_KIND_NONE, "hf refuses superwords");
        CHECK(st_trainer_set_superwords(h, ST_ALGORITHM_BPE, 0, 0, &e) == ST_OK, "hf takes BPE");
        st_trainer_free(h);
        st_counter_free(c);
    }

    /* the pass: counters out of order, given back twice, fed after being given back, after the
     * pass closed; counters of another pre-tokenizer or vocabulary */
    {
        st_trainer *t = state_trainer(ST_ALGORITHM_SUPERBPE, 10, ST_SUPERWORDS_NGRAM_SPLIT);
        st_trainer *other = state_trainer(ST_ALGORITHM_SUPERBPE, 5, 0);
        if (!t || !other) return;
        CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK && st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_CANDIDATES &&
                  st_trainer_stat(t, ST_TRAINER_DONE) == 0 && st_trainer_stat(t, ST_TRAINER_PHASE) == 1,
              "phase 1 ends in ST_TRAINING_CANDIDATES");
        CHECK(st_trainer_step(other, (size_t)-1, &made, &e) == ST_OK, "other phase 1");
        st_counter *k = NULL, *k2 = NULL, *ko = NULL, *pre = NULL;
        CHECK(st_trainer_candidates_new(t, NULL, &k, &e) == ST_OK && st_trainer_candidates_new(t, NULL, &k2, &e) == ST_OK,
              "two counters");
        CHECK(st_trainer_candidates_new(other, NULL, &ko, &e) == ST_OK, "another vocabulary's counter");
        CHECK(st_trainer_candidates_new(NULL, NULL, &pre, &e) == ST_ERR_INVALID_ARGUMENT && !pre, "NULL trainer");
        CHECK(st_trainer_candidates_new(t, NULL, NULL, &e) == ST_ERR_INVALID_ARGUMENT, "NULL out");
        CHECK(st_trainer_candidates_add(t, NULL, &e) == ST_ERR_INVALID_ARGUMENT, "NULL counter");
        CHECK(st_counter_stat(k, ST_COUNTER_KIND) == ST_COUNTER_KIND_CANDIDATES, "a candidates counter");
        CHECK(st_counter_add(k, g_state_docs[0], strlen(g_state_docs[0]), 0, &e) == ST_OK, "feed");
        CHECK(st_counter_add(ko, g_state_docs[0], strlen(g_state_docs[0]), 0, &e) == ST_OK, "feed other");
        CHECK(st_trainer_candidates_add(t, ko, &e) == ST_ERR_INVALID_ARGUMENT && e.kind == ST_KIND_NONE,
              "another vocabulary's candidates are refused");
        CHECK(st_counter_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pre, &e) == ST_OK, "pretoken counter");
        CHECK(st_trainer_candidates_add(t, pre, &e) == ST_ERR_INVALID_ARGUMENT && e.kind == ST_KIND_NONE,
              "a pretoken counter is refused");
        CHECK(st_trainer_stat(t, ST_TRAINER_CANDIDATES) == 0 && st_trainer_stat(t, ST_TRAINER_PASS_DOCUMENTS) == 0,
              "nothing counted by the refusals");
        CHECK(st_trainer_candidates_add(t, k, &e) == ST_OK, "give back");
        uint64_t unique = st_trainer_stat(t, ST_TRAINER_CANDIDATES);
        CHECK(unique > 0 && st_trainer_stat(t, ST_TRAINER_PASS_DOCUMENTS) == 1 &&
                  st_trainer_stat(t, ST_TRAINER_PASS_BYTES) == strlen(g_state_docs[0]),
              "the pass's counts");
        CHECK(out_of_order(st_trainer_candidates_add(t, k, &e), &e), "given back twice");
        CHECK(out_of_order(st_counter_add(k, g_state_docs[1], strlen(g_state_docs[1]), 0, &e), &e),
              "fed after being given back");
        CHECK(out_of_order(st_counter_merge(k, k2, &e), &e) && out_of_order(st_counter_merge(k2, k, &e), &e),
              "merged after being given back");
        CHECK(st_trainer_stat(t, ST_TRAINER_PASS_DOCUMENTS) == 1 && st_trainer_stat(t, ST_TRAINER_CANDIDATES) == unique,
              "the refusals counted nothing");
        CHECK(st_counter_add(k2, g_state_docs[1], strlen(g_state_docs[1]), 0, &e) == ST_OK, "feed k2");
        /* the step that closes the pass: the n-gram split, phase 2 */
        CHECK(st_trainer_step(t, 1, &made, &e) == ST_OK && made == 0 &&
                  st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_SUPERMERGES && st_trainer_stat(t, ST_TRAINER_PHASE) == 2,
              "the step closing the pass: %s", e.message);
        CHECK(st_trainer_stat(t, ST_TRAINER_PASS_DOCUMENTS) == 1, "the pass's documents are kept");
        st_counter *late = NULL;
        CHECK(out_of_order(st_trainer_candidates_new(t, NULL, &late, &e), &e) && !late, "candidates after the pass");
        CHECK(out_of_order(st_trainer_candidates_add(t, k2, &e), &e), "given back after the pass closed");
        CHECK(st_counter_add(k2, g_state_docs[2], strlen(g_state_docs[2]), 0, &e) == ST_OK,
              "a counter never given back is only a counter");
        CHECK(out_of_order(st_trainer_set_superwords(t, ST_ALGORITHM_BOUNDLESS, 0, 0, &e), &e), "setter in phase 2");
        CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK && st_trainer_stat(t, ST_TRAINER_DONE) == 1, "phase 2");
        CHECK(out_of_order(st_trainer_candidates_add(t, k2, &e), &e), "given back when done");
        CHECK(st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_DONE, "done");
        st_counter_free(k);
        st_counter_free(k2);
        st_counter_free(ko);
        st_counter_free(pre);
        st_trainer_free(t);
        st_trainer_free(other);
    }

    /* freeing a trainer in any state, with candidates given back and not, leaks nothing (the
     * sanitizer build checks) */
    {
        st_trainer *t = state_trainer(ST_ALGORITHM_BOUNDLESS, 0, 0);
        st_counter *k = NULL;
        if (!t) return;
        CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK, "phase 1");
        CHECK(st_trainer_candidates_new(t, NULL, &k, &e) == ST_OK && st_trainer_candidates_add(t, k, &e) == ST_OK, "pass");
        st_trainer_free(t);
        CHECK(st_counter_stat(k, ST_COUNTER_KIND) == ST_COUNTER_KIND_CANDIDATES, "the counter outlives its trainer");
        st_counter_free(k);
    }
}

/* ---- the candidates spec (st_trainer_candidates_spec, st_candidates_new) ------------------------ */

static const char *const g_spec_docs[] = {
    "the cat sat on the mat and the cat saw the dog\n",
    "in order to see the cat, the dog sat on the mat\n",
    "der Hund und die Katze, die Katze und der Hund über dem Haus\n",
    "日本語 の 文章 と 日本語 の 文章 、 中文 的 句子 和 中文 的 句子\n",
    "мир слово язык мир слово язык; λόγος καὶ λόγος καὶ\n",
};
#define SPEC_DOCS 5

/* A trainer over the spec documents (repeated), phase 1 done: in state ST_TRAINING_CANDIDATES. */
static st_trainer *spec_trainer(int pattern, uint32_t flags, int alphabet, int algorithm, uint64_t s) {
    st_counter *c = NULL;
    st_trainer *t = NULL;
    st_error e;
    size_t made;
    CHECK(st_counter_new(pattern, flags, NULL, 0, NULL, &c, &e) == ST_OK, "counter: %s", e.message);
    if (!c) return NULL;
    for (size_t i = 0; i < SPEC_DOCS * STATE_REPEAT; i++)
        CHECK(st_counter_add(c, g_spec_docs[i % SPEC_DOCS], strlen(g_spec_docs[i % SPEC_DOCS]), 0, &e) == ST_OK, "count");
    uint64_t alpha = 0;
    { /* the alphabet: a trainer over the counts with a vocabulary no alphabet reaches */
        st_trainer *probe = NULL;
        CHECK(st_trainer_new(c, ST_TRAIN_PAPER, alphabet, (uint64_t)1 << 40, 0, 0, NULL, &probe, &e) == ST_OK, "probe");
        alpha = st_trainer_stat(probe, ST_TRAINER_ALPHABET);
        st_trainer_free(probe);
    }
    CHECK(st_trainer_new(c, ST_TRAIN_PAPER, alphabet, alpha + 150, 0, 0, NULL, &t, &e) == ST_OK, "trainer: %s", e.message);
    st_counter_free(c);
    if (!t) return NULL;
    CHECK(st_trainer_set_superwords(t, algorithm, s, 0, &e) == ST_OK, "set_superwords: %s", e.message);
    CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK &&
              st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_CANDIDATES, "phase 1: %s", e.message);
    return t;
}

static uint8_t *spec_of(const st_trainer *t, size_t *n) {
    st_error e;
    *n = 0;
    CHECK(st_trainer_candidates_spec(t, NULL, 0, n, &e) == ST_ERR_BUFFER_TOO_SMALL && *n >= 84, "spec size query");
    uint8_t *b = (uint8_t *)malloc(*n + 1);
    size_t m = 0;
    CHECK(st_trainer_candidates_spec(t, b, *n, &m, &e) == ST_OK && m == *n, "spec: %s", e.message);
    return b;
}

static uint8_t *counter_bytes(const st_counter *c, size_t *n) {
    *n = 0;
    st_counter_save(c, NULL, 0, n, NULL);
    uint8_t *b = (uint8_t *)malloc(*n ? *n : 1);
    CHECK(st_counter_save(c, b, *n, n, NULL) == ST_OK, "save");
    return b;
}

/* The rest of the training with one counter given back, fed the spec documents; the model. */
static char *spec_finish(st_trainer *t, st_counter *k) {
    st_error e;
    size_t made, len = 0;
    CHECK(st_trainer_candidates_add(t, k, &e) == ST_OK, "candidates_add: %s", e.message);
    CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK, "close the pass: %s", e.message);
    CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK && st_trainer_stat(t, ST_TRAINER_DONE) == 1,
          "phase 2: %s", e.message);
    st_trainer_write_model(t, "spec", 4, NULL, NULL, 0, NULL, 0, &len, NULL);
    char *m = (char *)malloc(len + 1);
    CHECK(st_trainer_write_model(t, "spec", 4, NULL, NULL, 0, m, len, &len, &e) == ST_OK, "write: %s", e.message);
    m[len] = 0;
    return m;
}

static void test_candidates_spec(void) {
    st_error e;
    static const struct { int pattern; uint32_t flags; int alphabet, algorithm; uint64_t s; } cases[] = {
        {ST_PATTERN_O200K, 0, ST_ALPHABET_BYTES, ST_ALGORITHM_BOUNDLESS, 0},
        {ST_PATTERN_O200K, 0, ST_ALPHABET_UBE, ST_ALGORITHM_SUPERBPE, 20},
        {ST_PATTERN_CL100K, ST_PRETOK_SCRIPT_AWARE, ST_ALPHABET_UBE, ST_ALGORITHM_BOUNDLESS, 0},
        {ST_PATTERN_GPT2, ST_PRETOK_SCRIPT_AWARE, ST_ALPHABET_BYTES, ST_ALGORITHM_SUPERBPE, 30},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        st_trainer *t1 = spec_trainer(cases[ci].pattern, cases[ci].flags, cases[ci].alphabet, cases[ci].algorithm,
                                      cases[ci].s);
        st_trainer *t2 = spec_trainer(cases[ci].pattern, cases[ci].flags, cases[ci].alphabet, cases[ci].algorithm,
                                      cases[ci].s);
        if (!t1 || !t2) return;
        size_t n;
        uint8_t *spec = spec_of(t1, &n);
        uint64_t merges = st_trainer_stat(t1, ST_TRAINER_MERGES), room = st_trainer_stat(t1, ST_TRAINER_TARGET) - cases[ci].s;
        uint64_t kept = cases[ci].algorithm == ST_ALGORITHM_SUPERBPE && room < merges ? room : merges;
        CHECK(n == 84 + 8 * (size_t)kept && kept > 20, "case %zu: spec size %zu, %llu kept", ci, n, (unsigned long long)kept);
        /* a counter from the spec counts what the trainer's counter counts, byte for byte */
        st_counter *ks = NULL, *kt = NULL, *kl = NULL;
        CHECK(st_candidates_new(spec, n, NULL, &ks, &e) == ST_OK, "case %zu: st_candidates_new: %s", ci, e.message);
        CHECK(st_trainer_candidates_new(t2, NULL, &kt, &e) == ST_OK, "candidates_new");
        if (!ks || !kt) return;
        CHECK(st_counter_stat(ks, ST_COUNTER_KIND) == ST_COUNTER_KIND_CANDIDATES, "a candidates counter");
        for (size_t d = 0; d < SPEC_DOCS * 3; d++) {
            const char *doc = g_spec_docs[d % SPEC_DOCS];
            CHECK(st_counter_add(ks, doc, strlen(doc), 0, &e) == ST_OK && st_counter_add(kt, doc, strlen(doc), 0, &e) == ST_OK,
                  "feed");
        }
        size_t ls, lt;
        uint8_t *bs = counter_bytes(ks, &ls), *bt = counter_bytes(kt, &lt);
        CHECK(ls == lt && !memcmp(bs, bt, ls) && st_counter_stat(ks, ST_COUNTER_UNIQUE) > 0,
              "case %zu: the spec's counter saves as the trainer's (%zu / %zu bytes)", ci, ls, lt);
        /* its saved counts load into the trainer's counter, which goes back to the trainer */
        CHECK(st_trainer_candidates_new(t1, NULL, &kl, &e) == ST_OK && st_counter_load(kl, bs, ls, &e) == ST_OK,
              "case %zu: load into the trainer's counter: %s", ci, e.message);
        char *m1 = spec_finish(t1, kl), *m2 = spec_finish(t2, ks);
        CHECK(m1 && m2 && !strcmp(m1, m2), "case %zu: the models differ", ci);
        free(m1);
        free(m2);
        free(bs);
        free(bt);
        st_counter_free(ks);
        st_counter_free(kt);
        st_counter_free(kl);
        /* malformed specs: refused with an offset inside the spec, nothing made */
        st_counter *bad = NULL;
        for (size_t cut = 0; cut < n; cut += cut < 100 ? 1 : 7) {
            st_status st = st_candidates_new(spec, cut, NULL, &bad, &e);
            CHECK(st == ST_ERR_MALFORMED_MODEL && !bad && e.unit == ST_UNIT_BYTE && e.offset <= cut && e.message[0],
                  "case %zu: cut at %zu: %d", ci, cut, (int)st);
        }
        uint8_t *dam = (uint8_t *)malloc(n + 1);
        for (size_t at = 0; at < n; at++) {
            for (int bit = 0; bit < 8; bit += 3) {
                memcpy(dam, spec, n);
                dam[at] ^= (uint8_t)(1u << bit);
                st_status st = st_candidates_new(dam, n, NULL, &bad, &e);
                if (st == ST_OK) { /* a field the spec cannot check: the pre-tokenizer, SuperBPE's s */
                    CHECK((at >= 12 && at < 52) || (at >= 60 && at < 68), "case %zu: damage at %zu accepted", ci, at);
                    st_counter_free(bad);
                    bad = NULL;
                } else
                    CHECK(st == ST_ERR_MALFORMED_MODEL && !bad && e.offset <= n && e.message[0],
                          "case %zu: damage at %zu: %d %s", ci, at, (int)st, e.message);
            }
        }
        memcpy(dam, spec, n);
        dam[n] = 0;
        CHECK(st_candidates_new(dam, n + 1, NULL, &bad, &e) == ST_ERR_MALFORMED_MODEL && e.offset == n, "a byte after the merges");
        memcpy(dam, spec, n);
        dam[76] ^= 1;
        CHECK(st_candidates_new(dam, n, NULL, &bad, &e) == ST_ERR_MALFORMED_MODEL && e.offset == 76, "the fingerprint");
        if (n > 84) {
            memcpy(dam, spec, n);
            dam[84 + 3] = 0x7F; /* the first merge's left id: one not made yet */
            CHECK(st_candidates_new(dam, n, NULL, &bad, &e) == ST_ERR_MALFORMED_MODEL && e.offset == 84, "a later id");
        }
        free(dam);
        free(spec);
        CHECK(out_of_order(st_trainer_candidates_spec(t1, NULL, 0, &n, &e), &e), "case %zu: a spec when done", ci);
        st_trainer_free(t1);
        st_trainer_free(t2);
    }
    /* out of order: in phase 1, and a BPE trainer; NULL arguments */
    {
        st_trainer *t = state_trainer(ST_ALGORITHM_BPE, 0, 0);
        size_t n = 0, made;
        st_counter *k = NULL;
        if (!t) return;
        CHECK(out_of_order(st_trainer_candidates_spec(t, NULL, 0, &n, &e), &e), "a spec in phase 1");
        CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK, "phase 1");
        CHECK(out_of_order(st_trainer_candidates_spec(t, NULL, 0, &n, &e), &e), "a spec of BPE");
        CHECK(st_trainer_candidates_spec(NULL, NULL, 0, &n, &e) == ST_ERR_INVALID_ARGUMENT, "NULL trainer");
        CHECK(st_trainer_candidates_spec(t, NULL, 0, NULL, &e) == ST_ERR_INVALID_ARGUMENT, "NULL out_len");
        CHECK(st_candidates_new(NULL, 5, NULL, &k, &e) == ST_ERR_INVALID_ARGUMENT && !k, "NULL spec");
        CHECK(st_candidates_new((const uint8_t *)"stcandsp", 8, NULL, NULL, &e) == ST_ERR_INVALID_ARGUMENT, "NULL out");
        CHECK(st_candidates_new((const uint8_t *)"stcounts", 8, NULL, &k, &e) == ST_ERR_MALFORMED_MODEL && e.offset == 0 && !k,
              "another magic");
        st_trainer_free(t);
    }
}

static void test_superwords(int seeds) {
    test_ngrams_and_errors();
    for (int s = 0; s < seeds; s++) super_random((unsigned)s);
}

static void test_vectors(const char *root);

/* ---- long runs of equal symbols -----------------------------------------------------------
 * Paper mode counts a run of k equal symbols as floor(k / 2) of its pair, so a merge's window
 * reaches to the ends of the runs around its sites; the trainer finds those ends without
 * rescanning a run from each of its sites (trainer.c, window_start). Checked here: the merges
 * against the reference on corpora of long runs (one symbol, a repeated period of several,
 * runs cut by other symbols, odd and even lengths, repeated documents), and, in builds with
 * the work counter, that the trainer's work grows linearly with the length of a run. */

static const char *const run_units[] = {"a", "b", "ab", "abc", "aab", "\xe6\x97\xa5", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                        "abcdefghij"};
static const char *const run_cuts[] = {"", "", " ", ".", "b", "a", "\n", "x"};

static char *run_doc(void) {
    size_t nseg = 1 + rnd() % 4, cap = 1, n = 0;
    char *d = malloc(cap);
    for (size_t k = 0; k < nseg; k++) {
        const char *u = run_units[rnd() % (sizeof run_units / sizeof run_units[0])];
        const char *cut = run_cuts[rnd() % (sizeof run_cuts / sizeof run_cuts[0])];
        size_t reps = 1 + rnd() % 120, ul = strlen(u), cl = strlen(cut);
        d = realloc(d, cap += reps * ul + cl);
        for (size_t r = 0; r < reps; r++, n += ul) memcpy(d + n, u, ul);
        memcpy(d + n, cut, cl);
        n += cl;
    }
    d[n] = 0;
    return d;
}

static void test_runs_against_reference(unsigned seeds) {
    for (unsigned seed = 0; seed < seeds; seed++) {
        g_rng = 0xD1B54A32D192ED03ull * (seed + 7);
        int mode = rnd() % 4 ? ST_TRAIN_PAPER : ST_TRAIN_HF;
        int alphabet = mode == ST_TRAIN_HF ? ST_ALPHABET_BYTES : (int)(rnd() % 2);
        size_t ndocs = 1 + rnd() % 3, total = 0;
        char *docs[6];
        for (size_t i = 0; i < ndocs; i++) docs[i] = run_doc();
        for (size_t i = 0; i < ndocs; i++) /* some documents twice: counts above 1 */
            if (rnd() % 2) {
                size_t l = strlen(docs[i]) + 1;
                docs[ndocs + total] = memcpy(malloc(l), docs[i], l);
                total++;
            }
        ndocs += total;
        st_counter *c = counter_of(ST_PATTERN_O200K, 0, (const char *const *)docs, ndocs);
        size_t slen, nw;
        uint8_t *saved = save(c, &slen);
        cword *w = words_of(saved, slen, &nw);
        ref r;
        ref_init(&r, mode, alphabet, w, nw);
        st_trainer *t0 = NULL;
        CHECK(st_trainer_new(c, mode, alphabet, 100000, 0, 0, NULL, &t0, NULL) == ST_OK, "trainer_new");
        uint64_t alpha = st_trainer_stat(t0, ST_TRAINER_ALPHABET);
        st_trainer_free(t0);
        uint64_t vocab = alpha + 5 + rnd() % 60;
        ref_train(&r, vocab - alpha, 0);
        st_trainer *t = train(c, mode, alphabet, vocab, 0, 0, 1000);
        const uint32_t *pairs;
        const uint64_t *counts;
        size_t n = st_trainer_merges(t, &pairs, &counts);
        int same = n == r.nm;
        for (size_t i = 0; same && i < n; i++)
            same = pairs[2 * i] == r.merges[2 * i] && pairs[2 * i + 1] == r.merges[2 * i + 1] && counts[i] == r.counts[i];
        CHECK(same, "runs seed %u (mode %d alphabet %d vocab %llu): %zu merges, reference %zu", seed, mode, alphabet,
              (unsigned long long)vocab, n, r.nm);
        st_trainer_free(t);
        ref_free(&r);
        free(w);
        free(saved);
        st_counter_free(c);
        for (size_t i = 0; i < ndocs; i++) free(docs[i]);
    }
}

#ifdef ST_TEST_COUNTERS
/* The trainer's work (counted symbol reads) to train one document of n bytes made by repeating
 * unit, to exhaustion. */
static uint64_t run_work(const char *unit, size_t n, int mode, int alphabet) {
    size_t ul = strlen(unit);
    char *d = malloc(n + 1);
    for (size_t k = 0; k < n; k++) d[k] = unit[k % ul];
    d[n] = 0;
    const char *docs[1] = {d};
    st_counter *c = counter_of(ST_PATTERN_O200K, 0, docs, 1);
    st__test_work_take();
    st_trainer *t = train(c, mode, alphabet, alphabet == ST_ALPHABET_UBE ? 2000 : 1000, 0, 0, 1000);
    uint64_t work = st__test_work_take();
    CHECK(st_trainer_stat(t, ST_TRAINER_MERGES) > 0, "runs: some merges");
    st_trainer_free(t);
    st_counter_free(c);
    free(d);
    return work;
}

static void test_run_work_is_linear(void) {
    /* units whose length divides n, so each input is the unit repeated whole */
    static const char *const units[] = {"a", "abcdefghij", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "aab"};
    size_t n = 9u * 5 * 1024; /* 46,080 bytes; then twice and four times that */
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        for (int m = 0; m < 3; m++) {
            int mode = m == 2 ? ST_TRAIN_HF : ST_TRAIN_PAPER, alphabet = m == 1 ? ST_ALPHABET_UBE : ST_ALPHABET_BYTES;
            uint64_t w1 = run_work(units[u], n, mode, alphabet), w2 = run_work(units[u], 2 * n, mode, alphabet),
                     w4 = run_work(units[u], 4 * n, mode, alphabet);
            /* linear: each doubling at most about doubles the work (quadratic would quadruple it) */
            CHECK(w2 <= 2.4 * (double)w1 && w4 <= 2.4 * (double)w2,
                  "runs of %s, mode %d alphabet %d: work %llu, %llu, %llu for %zu, %zu, %zu bytes (not linear)",
                  units[u], mode, alphabet, (unsigned long long)w1, (unsigned long long)w2, (unsigned long long)w4, n,
                  2 * n, 4 * n);
        }
}
#endif

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    int n = getenv("ST_TRAIN_SEEDS") ? atoi(getenv("ST_TRAIN_SEEDS")) : 300;
    test_counter();
    test_counter_prune();
    test_trainer_sweep();
    test_token_counts();
    test_extension();
    test_counter_cache_paths();
    test_counter_truncate();
    test_trainer_errors();
    for (int s = 0; s < n; s++) compare_with_reference((unsigned)s);
    test_superwords(n / 2 + 1);
    test_trainer_states();
    test_candidates_spec();
    test_runs_against_reference((unsigned)(n / 5 + 1));
#ifdef ST_TEST_COUNTERS
    test_run_work_is_linear();
#endif
    test_vectors(root);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail != 0;
}

/* ---- vectors/train (written by vectors/generate_train.py from the naive reference, hf cases
 * checked against tokenizers) ------------------------------------------------------------------ */

static jval *read_jsonl(const char *path, size_t *n) {
    size_t len;
    char *text = read_file(path, &len);
    if (!text) return NULL;
    size_t cap = 64;
    jval *recs = malloc(cap * sizeof *recs);
    *n = 0;
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        if (le > p) {
            if (*n == cap) recs = realloc(recs, (cap *= 2) * sizeof *recs);
            jparser j = {p, le, 0};
            jparse(&j, &recs[*n], 0);
            CHECK(!j.bad, "%s: record %zu does not parse", path, *n);
            (*n)++;
        }
        p = le + 1;
    }
    free(text);
    return recs;
}

static int pattern_id(const char *name) {
    return !strcmp(name, "gpt2")       ? ST_PATTERN_GPT2
           : !strcmp(name, "cl100k")   ? ST_PATTERN_CL100K
           : !strcmp(name, "superbpe") ? ST_PATTERN_SUPERBPE
                                       : ST_PATTERN_O200K;
}

/* The documents of a corpus of vectors/train/corpora.jsonl (records from 1), or NULL. */
static const jval *corpus_documents(const jval *corpora, size_t nc, const char *corpus) {
    for (size_t k = 1; k < nc; k++)
        if (!strcmp(jget(&corpora[k], "corpus")->s, corpus)) return jget(&corpora[k], "documents");
    return NULL;
}

/* vectors/train/extend.jsonl: each case's counts (pruned at min_count), its base's first
 * seed_merges merges as seeds, SuperBPE's constraints; the merges must be the case's. */
static void test_extend_vectors(const char *root, const jval *corpora, size_t nc) {
    char path[4096];
    size_t n = 0;
    snprintf(path, sizeof path, "%s/vectors/train/extend.jsonl", root);
    jval *cases = read_jsonl(path, &n);
    if (!cases) {
        printf("vectors/train: %s absent, skipped\n", path);
        return;
    }
    size_t passed = 0;
    for (size_t i = 1; i < n; i++) {
        const jval *cs = &cases[i];
        const char *name = jget(cs, "case")->s, *corpus = jget(cs, "corpus")->s;
        const jval *docs = corpus_documents(corpora, nc, corpus);
        CHECK(docs, "%s: corpus %s not found", name, corpus);
        if (!docs) continue;
        int alphabet = !strcmp(jget(cs, "alphabet")->s, "ube") ? ST_ALPHABET_UBE : ST_ALPHABET_BYTES;
        st_counter *c = NULL;
        st_error e;
        CHECK(st_counter_new(pattern_id(jget(cs, "pattern")->s), 0, NULL, 0, NULL, &c, &e) == ST_OK, "%s: counter", name);
        for (size_t k = 0; k < docs->n; k++)
            CHECK(st_counter_add(c, docs->v[k].s, docs->v[k].slen, 0, &e) == ST_OK, "%s: document %zu", name, k);
        uint64_t min_count = (uint64_t)jget(cs, "min_count")->num;
        CHECK(st_counter_prune(c, min_count, &e) == ST_OK, "%s: prune", name);
        st_trainer *t = NULL;
        CHECK(st_trainer_new(c, ST_TRAIN_PAPER, alphabet, (uint64_t)jget(cs, "vocab_size")->num,
                             (uint64_t)jget(cs, "min_frequency")->num, 0, NULL, &t, &e) == ST_OK,
              "%s: trainer_new: %s", name, e.message);
        st_counter_free(c);
        if (!t) continue;
        const jval *base = jget(cs, "base_merges");
        size_t ns = (size_t)jget(cs, "seed_merges")->num;
        uint32_t *seeds = malloc(2 * (ns ? ns : 1) * sizeof *seeds);
        for (size_t k = 0; k < ns; k++) {
            seeds[2 * k] = (uint32_t)base->v[k].v[0].num;
            seeds[2 * k + 1] = (uint32_t)base->v[k].v[1].num;
        }
        CHECK(st_trainer_set_seed_merges(t, seeds, ns, "base", 4, (uint32_t)jget(cs, "max_words")->num,
                                         jget(cs, "colon_space")->b ? ST_EXTEND_COLON_SPACE : 0, min_count,
                                         &e) == ST_OK,
              "%s: seeds: %s", name, e.message);
        free(seeds);
        size_t made;
        CHECK(st_trainer_step(t, (size_t)-1, &made, &e) == ST_OK && st_trainer_stat(t, ST_TRAINER_DONE), "%s: step",
              name);
        const uint32_t *pairs;
        const uint64_t *counts;
        size_t nm = st_trainer_merges(t, &pairs, &counts);
        const jval *want = jget(cs, "merges");
        size_t lim = nm < want->n ? nm : want->n, bad = lim;
        for (size_t k = 0; k < lim; k++) {
            const jval *m = &want->v[k];
            if (pairs[2 * k] != (uint32_t)m->v[0].num || pairs[2 * k + 1] != (uint32_t)m->v[1].num ||
                counts[k] != (uint64_t)m->v[2].num) { bad = k; break; }
        }
        CHECK(nm == want->n && bad == lim, "%s: %zu merges (expected %zu), first difference at %zu", name, nm, want->n,
              bad);
        passed += nm == want->n && bad == lim;
        st_trainer_free(t);
    }
    printf("  vectors/train/extend.jsonl: %zu of %zu cases\n", passed, n - 1);
    for (size_t i = 0; i < n; i++) jfree(&cases[i]);
    free(cases);
}

static void test_vectors(const char *root) {
    char path[4096];
    size_t nc = 0, nm = 0;
    snprintf(path, sizeof path, "%s/vectors/train/corpora.jsonl", root);
    jval *corpora = read_jsonl(path, &nc);
    snprintf(path, sizeof path, "%s/vectors/train/merges.jsonl", root);
    jval *cases = corpora ? read_jsonl(path, &nm) : NULL;
    if (!corpora || !cases) {
        printf("vectors/train: %s/vectors/train/{corpora,merges}.jsonl absent, skipped\n", root);
        if (corpora) { for (size_t i = 0; i < nc; i++) jfree(&corpora[i]); free(corpora); }
        return;
    }
    size_t passed = 0;
    for (size_t i = 1; i < nm; i++) {
        const jval *cs = &cases[i];
        const char *name = jget(cs, "case")->s, *corpus = jget(cs, "corpus")->s;
        const jval *docs = corpus_documents(corpora, nc, corpus);
        CHECK(docs, "%s: corpus %s not found", name, corpus);
        if (!docs) continue;
        int mode = !strcmp(jget(cs, "mode")->s, "hf") ? ST_TRAIN_HF : ST_TRAIN_PAPER;
        int alphabet = !strcmp(jget(cs, "alphabet")->s, "ube") ? ST_ALPHABET_UBE : ST_ALPHABET_BYTES;
        uint32_t flags = jget(cs, "script_aware")->b ? ST_PRETOK_SCRIPT_AWARE : 0;
        const jval *scripts = jget(cs, "scripts");
        char sbuf[1024];
        size_t sl = 0;
        if (scripts && scripts->t == J_ARR)
            for (size_t k = 0; k < scripts->n; k++)
                sl += (size_t)snprintf(sbuf + sl, sizeof sbuf - sl, "%s%s", k ? "," : "", scripts->v[k].s);
        st_counter *c = NULL;
        st_error e;
        st_status st = st_counter_new(pattern_id(jget(cs, "pattern")->s), flags,
                                      scripts && scripts->t == J_ARR ? sbuf : NULL, sl, NULL, &c, &e);
        CHECK(st == ST_OK, "%s: counter_new: %s", name, e.message);
        if (st != ST_OK) continue;
        for (size_t k = 0; k < docs->n; k++) {
            st = st_counter_add(c, docs->v[k].s, docs->v[k].slen, 0, &e);
            CHECK(st == ST_OK, "%s: document %zu: %s", name, k, e.message);
        }
        const jval *sp = jget(cs, "special_tokens");
        size_t ns = sp->n, ends[64], pos = 0;
        char stext[4096];
        for (size_t k = 0; k < ns && k < 64; k++) {
            memcpy(stext + pos, sp->v[k].s, sp->v[k].slen);
            pos += sp->v[k].slen;
            ends[k] = pos;
        }
        st_trainer *t = NULL;
        st = st_trainer_new(c, mode, alphabet, (uint64_t)jget(cs, "vocab_size")->num,
                            (uint64_t)jget(cs, "min_frequency")->num, ns, NULL, &t, &e);
        CHECK(st == ST_OK, "%s: trainer_new: %s", name, e.message);
        if (st != ST_OK) { st_counter_free(c); continue; }
        st = st_trainer_set_specials(t, stext, ends, ns, &e);
        CHECK(st == ST_OK, "%s: set_specials: %s", name, e.message);
        /* superword cases: the trainer's own loop, as a host runs it: phase 1, the texts again
         * into two candidates counters (the documents dealt alternately, as two threads would
         * take them), the step that closes the pass (the n-gram split with the paper's c_min
         * and max_len 30 when asked), then phase 2 to the end */
        const jval *alg = jget(cs, "algorithm");
        int algorithm = !alg || !strcmp(alg->s, "bpe") ? ST_ALGORITHM_BPE
                        : !strcmp(alg->s, "boundless") ? ST_ALGORITHM_BOUNDLESS : ST_ALGORITHM_SUPERBPE;
        const jval *sarg = jget(cs, "supermerges_arg");
        uint64_t s_arg = sarg && sarg->t == J_NUM ? (uint64_t)sarg->num : 0;
        const jval *ngj = jget(cs, "ngram_split");
        int ngram = ngj && ngj->b;
        st = st_trainer_set_superwords(t, algorithm, s_arg, ngram ? ST_SUPERWORDS_NGRAM_SPLIT : 0, &e);
        CHECK(st == ST_OK, "%s: set_superwords: %s", name, e.message);
        size_t made;
        st = st_trainer_step(t, (size_t)-1, &made, &e);
        CHECK(st == ST_OK, "%s: step: %s", name, e.message);
        CHECK(st_trainer_stat(t, ST_TRAINER_ALPHABET) == (uint64_t)jget(cs, "alphabet_size")->num,
              "%s: alphabet size", name);
        CHECK(st_trainer_stat(t, ST_TRAINER_STATE) ==
                  (uint64_t)(algorithm == ST_ALGORITHM_BPE ? ST_TRAINING_DONE : ST_TRAINING_CANDIDATES),
              "%s: the state after phase 1", name);
        int super_ok = 1;
        if (algorithm != ST_ALGORITHM_BPE) {
            st_counter *k[2] = {NULL, NULL};
            uint64_t bytes = 0;
            for (int q = 0; q < 2 && st == ST_OK; q++) {
                st = st_trainer_candidates_new(t, NULL, &k[q], &e);
                CHECK(st == ST_OK, "%s: candidates_new: %s", name, e.message);
            }
            for (size_t d = 0; st == ST_OK && d < docs->n; d++) {
                st = st_counter_add(k[d % 2], docs->v[d].s, docs->v[d].slen, 0, &e);
                bytes += docs->v[d].slen;
                CHECK(st == ST_OK, "%s: candidates of document %zu: %s", name, d, e.message);
            }
            for (int q = 0; q < 2 && st == ST_OK; q++) {
                st = st_trainer_candidates_add(t, k[q], &e);
                CHECK(st == ST_OK, "%s: candidates_add: %s", name, e.message);
            }
            CHECK(st_trainer_stat(t, ST_TRAINER_PASS_DOCUMENTS) == docs->n &&
                      st_trainer_stat(t, ST_TRAINER_PASS_BYTES) == bytes,
                  "%s: the pass's documents and bytes", name);
            st_counter_free(k[0]);
            st_counter_free(k[1]);
            if (st == ST_OK) {
                st = st_trainer_step(t, (size_t)-1, &made, &e);
                CHECK(st == ST_OK && made == 0 && st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_SUPERMERGES,
                      "%s: the step closing the pass: %s", name, e.message);
            }
            if (st == ST_OK) {
                st = st_trainer_step(t, (size_t)-1, &made, &e);
                CHECK(st == ST_OK && st_trainer_stat(t, ST_TRAINER_DONE), "%s: phase-2 step: %s", name, e.message);
            }
            super_ok = st == ST_OK;
            const jval *ws = jget(cs, "supermerges");
            const uint32_t *sp = NULL;
            const uint64_t *sc = NULL;
            size_t ns = st_trainer_supermerges(t, &sp, &sc);
            size_t lim = ns < ws->n ? ns : ws->n, badk = lim;
            for (size_t q = 0; q < lim; q++) {
                const jval *m = &ws->v[q];
                if (sp[2 * q] != (uint32_t)m->v[0].num || sp[2 * q + 1] != (uint32_t)m->v[1].num ||
                    sc[q] != (uint64_t)m->v[2].num) { badk = q; break; }
            }
            if (ns != ws->n || badk != lim) super_ok = 0;
            CHECK(ns == ws->n && badk == lim, "%s: %zu supermerges (expected %zu), first difference at %zu", name, ns, ws->n,
                  badk);
            if (badk < lim)
                printf("  supermerge %zu: got %u %u %llu, expected %.0f %.0f %.0f\n", badk, sp[2 * badk], sp[2 * badk + 1],
                       (unsigned long long)sc[badk], ws->v[badk].v[0].num, ws->v[badk].v[1].num, ws->v[badk].v[2].num);
        }
        const jval *want = jget(cs, "merges");
        const uint32_t *pairs;
        const uint64_t *counts;
        size_t n = st_trainer_merges(t, &pairs, &counts);
        size_t bad = n == want->n ? n : (n < want->n ? n : want->n);
        for (size_t k = 0; k < (n < want->n ? n : want->n); k++) {
            const jval *m = &want->v[k];
            if (pairs[2 * k] != (uint32_t)m->v[0].num || pairs[2 * k + 1] != (uint32_t)m->v[1].num ||
                counts[k] != (uint64_t)m->v[2].num) { bad = k; break; }
        }
        CHECK(n == want->n && bad == n, "%s: %zu merges (expected %zu), first difference at %zu", name, n, want->n, bad);
        if (bad < n && bad < want->n)
            printf("  merge %zu: got %u %u %llu, expected %.0f %.0f %.0f\n", bad, pairs[2 * bad], pairs[2 * bad + 1],
                   (unsigned long long)counts[bad], want->v[bad].v[0].num, want->v[bad].v[1].num, want->v[bad].v[2].num);
        if (n == want->n && bad == n && super_ok) passed++;
        size_t mlen = 0;
        st_trainer_write_model(t, "vec", 3, stext, ends, ns, NULL, 0, &mlen, NULL);
        char *model = malloc(mlen + 1);
        st = st_trainer_write_model(t, "vec", 3, stext, ends, ns, model, mlen, &mlen, &e);
        CHECK(st == ST_OK, "%s: write_model: %s", name, e.message);
        model[st == ST_OK ? mlen : 0] = 0;
        if (algorithm == ST_ALGORITHM_BPE) {
            st_encoding *enc = NULL;
            st = st_encoding_new_model(model, mlen, NULL, &enc, &e);
            CHECK(st == ST_OK, "%s: the model loads: %s", name, e.message);
            st_encoding_free(enc);
        } else {
            /* a superword model: version 2, its training line says what was done, it parses */
            char tl[256];
            int tn = snprintf(tl, sizeof tl, "\ntraining algorithm=%s mode=paper vocab_size=%llu min_frequency=%llu", alg->s,
                              (unsigned long long)jget(cs, "vocab_size")->num, (unsigned long long)jget(cs, "min_frequency")->num);
            if (algorithm == ST_ALGORITHM_SUPERBPE)
                tn += snprintf(tl + tn, sizeof tl - (size_t)tn, " supermerges=%llu", (unsigned long long)s_arg);
            snprintf(tl + tn, sizeof tl - (size_t)tn, " ngram_split=%s", ngram ? "yes c_min=" : "no\n");
            CHECK(!strncmp(model, "supertok-model 2\n", 17) && strstr(model, tl), "%s: the training line", name);
            st_model *pm = NULL;
            st = st_model_parse(model, mlen, NULL, &pm, &e);
            CHECK(st == ST_OK, "%s: the model parses: %s", name, e.message);
            st_model_free(pm);
        }
        free(model);
        st_trainer_free(t);
        st_counter_free(c);
    }
    printf("vectors/train: %zu of %zu cases reproduced\n", passed, nm ? nm - 1 : 0);
    test_extend_vectors(root, corpora, nc);
    for (size_t i = 0; i < nc; i++) jfree(&corpora[i]);
    for (size_t i = 0; i < nm; i++) jfree(&cases[i]);
    free(corpora);
    free(cases);
}
