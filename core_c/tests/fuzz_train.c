// libFuzzer harness for the pretoken counters and the phase-1 trainer (docs/design.md §8,
// docs/formats/train-format.md).
//
// Build (from the repository root; Debian: apt-get install clang libclang-rt-14-dev):
//
//   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//         -Icore_c/include core_c/src/*/*.c core_c/tests/fuzz_train.c -o fuzz_train
//   ./fuzz_train -max_total_time=180 -max_len=4096 /tmp/fuzz_train_corpus
//
// Input: byte 0 the options (pattern, script-aware, mode, alphabet, min_frequency), byte 1 the
// vocabulary past the alphabet, byte 2 an allocation to fail (0: none), then the text. Invariants:
//  - st_counter_add with ST_COUNT_LINES succeeds or gives ST_ERR_INVALID_UTF8 leaving the counter
//    as it was (its saved bytes unchanged), with err.line the line of err.offset;
//  - the text split at any point into two documents counted by two counters and merged saves the
//    same as one counter fed the same two documents; save -> load -> save is the identity;
//  - the text itself, loaded as a counts file, is refused (ST_ERR_MALFORMED_MODEL or
//    ST_ERR_INVALID_ARGUMENT) with nothing added, or accepted and saved back byte for byte;
//  - the trainer makes the same merges in steps of 1 and in one step; paper-mode counts never
//    increase; the model it writes parses and loads; with an allocation failing, every call
//    returns ST_ERR_OUT_OF_MEMORY or succeeds, and nothing leaks;
//  - phase 2 (paper mode): the candidates of the text split into two documents and merged equal
//    one counter's, save -> load -> save is the identity, the input loaded as a candidates file
//    is refused with nothing added or saved back byte for byte; BoundlessBPE in steps of 1 and in
//    one step gives the same model, which parses; SuperBPE with the s BoundlessBPE found gives
//    the same merges and supermerges (the invariant); allocation failures as above; the candidates
//    spec: a counter made from it (st_candidates_new) counts as the trainer's, byte for byte, and
//    the input read as a spec is refused (ST_ERR_MALFORMED_MODEL, an offset in it) or accepted;
//  - the stepwise trainer (st_trainer_set_superwords, st_trainer_candidates_new / _add, the step
//    closing the pass) driven by calls picked from the input, in and out of order: a call its
//    state does not take is ST_KIND_OUT_OF_ORDER and changes nothing; finished, its model is the
//    internal steps' on the documents given back; allocation failures as above.
//
// Without libFuzzer the same file builds a replay driver: cc -DST_FUZZ_MAIN ... fuzz_train.c
// runs each file named on the command line; "--random N SEED" runs N random inputs built from
// runs, ties, scripts and damaged UTF-8.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
/* the second pass's steps one at a time (st__counter_new_candidates, st__counter_split_ngrams,
 * st__trainer_start_superwords): the public calls run them only in the trainer's own order */
#include "../src/train/trainer.h"
#include "../src/train/candidates.h"
#include "fuzz_support.h"

static void fail(const char *what, const uint8_t *data, size_t size) {
    fprintf(stderr, "invariant broken: %s\ninput (%zu bytes):\n", what, size);
    fwrite(data, 1, size < 2048 ? size : 2048, stderr);
    fprintf(stderr, "\n");
    abort();
}


static uint8_t *saved(const st_counter *c, size_t *n) {
    *n = 0;
    st_counter_save(c, NULL, 0, n, NULL);
    uint8_t *b = (uint8_t *)malloc(*n ? *n : 1);
    if (st_counter_save(c, b, *n, n, NULL) != ST_OK) { free(b); return NULL; }
    return b;
}

static int same(const st_counter *a, const st_counter *b) {
    size_t la, lb;
    uint8_t *sa = saved(a, &la), *sb = saved(b, &lb);
    int r = sa && sb && la == lb && memcmp(sa, sb, la) == 0;
    free(sa);
    free(sb);
    return r;
}

/* Phase 2 from the finished paper-mode trainer t over counter c (see the invariants above). */
static void superwords(const st_trainer *t, const st_counter *c, const char *text, size_t len, int valid,
                       const uint8_t *data, size_t size, long fail_at) {
    st_error err;
    st_counter *k = NULL, *k1 = NULL, *k2 = NULL;
    if (st__counter_new_candidates(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, &k, &err) != ST_OK) fail(err.message, data, size);
    st_counter_add(k, text, len, ST_COUNT_LINES, NULL);
    if (valid) {
        size_t cut = len ? (size_t)data[1] % (len + 1) : 0;
        while (cut < len && ((uint8_t)text[cut] & 0xC0) == 0x80) cut++;
        size_t ends[2] = {cut, len};
        st_counter *one = NULL;
        st__counter_new_candidates(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, &k1, NULL);
        st__counter_new_candidates(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, &k2, NULL);
        st__counter_new_candidates(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, &one, NULL);
        if (st_counter_add(k1, text, cut, 0, NULL) || st_counter_add(k2, text + cut, len - cut, 0, NULL) ||
            st_counter_add_documents(one, text, ends, 2, NULL) || st_counter_merge(k1, k2, &err))
            fail("counting candidates failed", data, size);
        if (!same(k1, one)) fail("two candidates counters merged differ from one", data, size);
        size_t ls;
        uint8_t *s = saved(k1, &ls);
        st_counter *r = NULL;
        st__counter_new_candidates(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, &r, NULL);
        if (st_counter_load(r, s, ls, &err) != ST_OK || !same(r, k1)) fail("candidates save/load round trip", data, size);
        free(s);
        st_counter_free(r);
        st_counter_free(one);
    }
    {
        st_counter *r = NULL;
        st__counter_new_candidates(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, &r, NULL);
        size_t lb;
        uint8_t *bb = saved(r, &lb);
        st_status st = st_counter_load(r, data, size, &err);
        if (st == ST_OK) {
            size_t l2;
            uint8_t *s2 = saved(r, &l2);
            if (l2 != size || memcmp(s2, data, size)) fail("an accepted candidates file saves back differently", data, size);
            free(s2);
        } else if (st != ST_ERR_MALFORMED_MODEL && st != ST_ERR_INVALID_ARGUMENT) fail("candidates load: status", data, size);
        else {
            size_t la;
            uint8_t *aa = saved(r, &la);
            if (la != lb || memcmp(aa, bb, la)) fail("a refused candidates load added something", data, size);
            free(aa);
        }
        free(bb);
        st_counter_free(r);
    }
    /* the candidates spec: a counter made from it counts as the trainer's (k); the input, alone
     * and after a spec's first 12 bytes (magic, version), is a spec refused with an offset in it
     * or accepted; with an allocation failing, ST_ERR_OUT_OF_MEMORY or a counter, no leak */
    {
        size_t ln = 0;
        st__candidates_spec(t, ST_ALGORITHM_BOUNDLESS, 0, NULL, 0, &ln, NULL);
        uint8_t *sp = (uint8_t *)malloc(ln + 12 + size);
        st_counter *ks = NULL;
        if (st__candidates_spec(t, ST_ALGORITHM_BOUNDLESS, 0, sp, ln, &ln, &err) != ST_OK ||
            st_candidates_new(sp, ln, NULL, &ks, &err) != ST_OK)
            fail("candidates spec round trip", data, size);
        st_counter_add(ks, text, len, ST_COUNT_LINES, NULL);
        if (!same(ks, k)) fail("a spec's counter counts differently from the trainer's", data, size);
        st_counter_free(ks);
        if (fail_at >= 0) {
            budget bg = {fail_at, 0, 0, 0, 0};
            st_allocator al = {budget_alloc, budget_free, &bg};
            st_status st = st_candidates_new(sp, ln, &al, &ks, NULL);
            if (st == ST_OK) st_counter_free(ks);
            else if (st != ST_ERR_OUT_OF_MEMORY || ks) fail("oom candidates spec", data, size);
            if (bg.live != 0) fail("a leak in st_candidates_new", data, size);
        }
        memcpy(sp + 12, data, size);
        for (int pre = 0; pre < 2; pre++) {
            const uint8_t *in = pre ? sp : data;
            size_t n = pre ? 12 + size : size;
            ks = NULL;
            st_status st = st_candidates_new(in, n, NULL, &ks, &err);
            if (st == ST_OK) st_counter_free(ks);
            else if (st != ST_ERR_MALFORMED_MODEL || ks || err.unit != ST_UNIT_BYTE || err.offset > n || !err.message[0])
                fail("a malformed spec: status, offset or message", data, size);
        }
        free(sp);
    }
    /* BOUNDLESS in one step and in steps of 1, on two trainers trained alike */
    uint64_t vocab = st_trainer_stat(t, ST_TRAINER_TARGET) + st_trainer_stat(t, ST_TRAINER_ALPHABET) + 1;
    st_trainer *b1 = NULL, *b2 = NULL, *sb = NULL;
    size_t made;
    const uint32_t *mp = NULL, *sp = NULL;
    const uint64_t *mc = NULL, *sc = NULL;
    st_trainer_merges(t, &mp, &mc);
    uint64_t minf = 0;
    (void)mc;
    if (st_trainer_new(c, ST_TRAIN_PAPER, st_trainer_stat(t, ST_TRAINER_ALPHABET) == 243 ? ST_ALPHABET_BYTES : ST_ALPHABET_UBE,
                       vocab, minf, 1, NULL, &b1, &err) != ST_OK)
        fail("trainer_new", data, size);
    st_trainer_step(b1, (size_t)-1, &made, NULL);
    st_counter *kb = NULL;
    if (st__counter_new_candidates(b1, ST_ALGORITHM_BOUNDLESS, 0, NULL, &kb, &err) != ST_OK) fail(err.message, data, size);
    st_counter_add(kb, text, len, ST_COUNT_LINES, NULL);
    st_trainer_new(c, ST_TRAIN_PAPER, st_trainer_stat(b1, ST_TRAINER_ALPHABET) == 243 ? ST_ALPHABET_BYTES : ST_ALPHABET_UBE,
                   vocab, minf, 1, NULL, &b2, NULL);
    st_trainer_step(b2, (size_t)-1, &made, NULL);
    if (st__trainer_start_superwords(b1, kb, ST_ALGORITHM_BOUNDLESS, 0, &err) != ST_OK ||
        st__trainer_start_superwords(b2, kb, ST_ALGORITHM_BOUNDLESS, 0, &err) != ST_OK)
        fail(err.message, data, size);
    if (st_trainer_step(b1, (size_t)-1, &made, &err) != ST_OK || !st_trainer_stat(b1, ST_TRAINER_DONE))
        fail("phase 2 in one step did not finish", data, size);
    do {
        if (st_trainer_step(b2, 1, &made, &err) != ST_OK) fail("phase-2 step", data, size);
    } while (made == 1);
    size_t r1 = st_trainer_merges(b1, &mp, &mc), s1 = st_trainer_supermerges(b1, &sp, &sc);
    const uint32_t *mp2, *sp2;
    const uint64_t *mc2, *sc2;
    size_t r2 = st_trainer_merges(b2, &mp2, &mc2), s2 = st_trainer_supermerges(b2, &sp2, &sc2);
    if (r1 != r2 || s1 != s2 || (s1 && (memcmp(sp, sp2, 2 * s1 * sizeof *sp) || memcmp(sc, sc2, s1 * sizeof *sc))))
        fail("phase 2 stepwise differs from one shot", data, size);
    if (r1 + s1 > st_trainer_stat(b1, ST_TRAINER_TARGET)) fail("phase 2 went past the target", data, size);
    for (size_t i = 0; i < s1; i++)
        if (sp[2 * i] >= 256u + (uint32_t)(r1 + i) + 256u * (st_trainer_stat(b1, ST_TRAINER_ALPHABET) != 243) ||
            sc[i] == 0)
            fail("a supermerge part is not below its own id", data, size);
    size_t ends1[1] = {7}, ml = 0;
    st_trainer_write_model(b1, "fuzz", 4, "<|end|>", ends1, 1, NULL, 0, &ml, NULL);
    char *model = (char *)malloc(ml);
    if (st_trainer_write_model(b1, "fuzz", 4, "<|end|>", ends1, 1, model, ml, &ml, &err) != ST_OK)
        fail("phase-2 write_model", data, size);
    st_model *m = NULL;
    if (st_model_parse(model, ml, NULL, &m, &err) != ST_OK) fail(err.message, data, size);
    st_model_free(m);
    free(model);
    /* SUPERBPE(s1): the same model */
    st_counter *ks = NULL;
    if (st__counter_new_candidates(t, ST_ALGORITHM_SUPERBPE, s1, NULL, &ks, &err) != ST_OK) fail(err.message, data, size);
    st_counter_free(ks);
    st_trainer_new(c, ST_TRAIN_PAPER, st_trainer_stat(b1, ST_TRAINER_ALPHABET) == 243 ? ST_ALPHABET_BYTES : ST_ALPHABET_UBE,
                   vocab, minf, 1, NULL, &sb, NULL);
    st_trainer_step(sb, (size_t)-1, &made, NULL);
    if (st__counter_new_candidates(sb, ST_ALGORITHM_SUPERBPE, s1, NULL, &ks, &err) != ST_OK) fail(err.message, data, size);
    st_counter_add(ks, text, len, ST_COUNT_LINES, NULL);
    if (st__trainer_start_superwords(sb, ks, ST_ALGORITHM_SUPERBPE, s1, &err) != ST_OK) fail(err.message, data, size);
    st_trainer_step(sb, (size_t)-1, &made, NULL);
    const uint32_t *hp, *hs;
    const uint64_t *hc, *hsc;
    size_t hr = st_trainer_merges(sb, &hp, &hc), hn = st_trainer_supermerges(sb, &hs, &hsc);
    if (hr != r1 || hn != s1 || (hn && (memcmp(hs, sp, 2 * hn * sizeof *hs) || memcmp(hsc, sc, hn * sizeof *hsc))))
        fail("BoundlessBPE != SuperBPE(r, s)", data, size);
    /* with an allocation failing */
    if (fail_at >= 0) {
        budget bg = {fail_at, 0, 0, 0, 0};
        st_allocator al = {budget_alloc, budget_free, &bg};
        st_counter *oc = NULL;
        st_trainer *ot = NULL;
        st_status st = st__counter_new_candidates(t, ST_ALGORITHM_BOUNDLESS, 0, &al, &oc, NULL);
        if (st == ST_OK) {
            st = st_counter_add(oc, text, len, ST_COUNT_LINES, NULL);
            if (st != ST_OK && st != ST_ERR_INVALID_UTF8 && st != ST_ERR_OUT_OF_MEMORY) fail("oom candidates add", data, size);
        } else if (st != ST_ERR_OUT_OF_MEMORY) fail("oom new_candidates", data, size);
        st = st_trainer_new(c, ST_TRAIN_PAPER, st_trainer_stat(b1, ST_TRAINER_ALPHABET) == 243 ? ST_ALPHABET_BYTES : ST_ALPHABET_UBE,
                            vocab, minf, 1, &al, &ot, NULL);
        if (st == ST_OK) {
            st = st_trainer_step(ot, (size_t)-1, &made, NULL);
            if (st == ST_OK) {
                st = st__trainer_start_superwords(ot, kb, ST_ALGORITHM_BOUNDLESS, 0, NULL);
                if (st == ST_OK) st = st_trainer_step(ot, (size_t)-1, &made, NULL);
                if (st != ST_OK && st != ST_ERR_OUT_OF_MEMORY && st != ST_ERR_INVALID_ARGUMENT) fail("oom phase 2", data, size);
            }
        }
        st_trainer_free(ot);
        st_counter_free(oc);
        if (bg.live != 0) fail("a leak in phase 2 (allocations not freed)", data, size);
    }
    st_trainer_free(sb);
    st_counter_free(ks);
    st_counter_free(kb);
    st_trainer_free(b1);
    st_trainer_free(b2);
    st_counter_free(k);
    st_counter_free(k1);
    st_counter_free(k2);
}

/* The model of a trainer run to the end (malloc'd, *n its length). */
static char *model_of(st_trainer *t, size_t *n, const uint8_t *data, size_t size) {
    st_error err;
    *n = 0;
    st_trainer_write_model(t, "fuzz", 4, NULL, NULL, 0, NULL, 0, n, NULL);
    char *m = (char *)malloc(*n ? *n : 1);
    if (st_trainer_write_model(t, "fuzz", 4, NULL, NULL, 0, m, *n, n, &err) != ST_OK) fail(err.message, data, size);
    return m;
}

static uint64_t g_ops;
static unsigned op_byte(void) {
    g_ops ^= g_ops << 13;
    g_ops ^= g_ops >> 7;
    g_ops ^= g_ops << 17;
    return (unsigned)(g_ops >> 56);
}

/* Extension (st_trainer_set_seed_merges): the merges of a phase-1 run replayed as seeds, with one
 * id perhaps damaged by the input (refused with ST_ERR_INVALID_ARGUMENT, or accepted), then trained
 * on: the seeds come first, no later merge makes a token of more than max_words words or holding
 * ": ", the model loads; the same under allocation failures leaks nothing. */
static void extension(const st_counter *c, int alphabet, const uint32_t *seeds0, size_t n, const uint8_t *data,
                      size_t size, long fail_at) {
    uint32_t A = alphabet == ST_ALPHABET_UBE ? 512 : 256;
    uint32_t *seeds = (uint32_t *)malloc(2 * (n ? n : 1) * sizeof *seeds);
    if (n) memcpy(seeds, seeds0, 2 * n * sizeof *seeds);
    if (n && size > 3 && (data[2] & 3) == 0) seeds[data[3] % (2 * n)] = (uint32_t)data[2] * 7u + A; /* maybe too late */
    uint32_t max_words = size > 2 ? data[2] % 5 : 4;
    st_trainer *t = NULL;
    st_error err;
    if (st_trainer_new(c, ST_TRAIN_PAPER, alphabet, A + n + 64, size > 4 ? data[4] % 3 : 0, 0, NULL, &t, &err) != ST_OK)
        fail("extension: trainer_new", data, size);
    st_status st = st_trainer_set_seed_merges(t, seeds, n, "base", 4, max_words, ST_EXTEND_COLON_SPACE, 5, &err);
    if (st != ST_OK) {
        if (st != ST_ERR_INVALID_ARGUMENT || !err.message[0]) fail("extension: unexpected refusal", data, size);
        st_trainer_free(t);
        free(seeds);
        return;
    }
    size_t made;
    if (st_trainer_step(t, (size_t)-1, &made, &err) != ST_OK || !st_trainer_stat(t, ST_TRAINER_DONE))
        fail("extension: one step did not finish", data, size);
    const uint32_t *p;
    const uint64_t *k;
    size_t m = st_trainer_merges(t, &p, &k);
    if (m < n || (n && memcmp(p, seeds, 2 * n * sizeof *p))) fail("extension: the seeds are not first", data, size);
    /* each token's base symbols (lengths capped: a token's symbols are checked up to 4096) */
    size_t *off = (size_t *)malloc((A + m) * sizeof *off), *ln = (size_t *)malloc((A + m) * sizeof *ln);
    size_t cap = 4096, used = 0;
    uint32_t *sym = (uint32_t *)malloc(cap * sizeof *sym);
    for (uint32_t i = 0; i < A; i++) { off[i] = used; ln[i] = 1; if (used == cap) sym = realloc(sym, (cap *= 2) * sizeof *sym); sym[used++] = i; }
    for (size_t i = 0; i < m; i++) {
        uint32_t l = p[2 * i], r = p[2 * i + 1];
        size_t L = ln[l] + ln[r];
        while (used + L > cap) sym = (uint32_t *)realloc(sym, (cap *= 2) * sizeof *sym);
        off[A + i] = used;
        ln[A + i] = L;
        memcpy(sym + used, sym + off[l], ln[l] * sizeof *sym);
        memcpy(sym + used + ln[l], sym + off[r], ln[r] * sizeof *sym);
        used += L;
        if (i < n) continue;
        uint32_t words = 0, prev = ' ';
        for (size_t q = 0; q < L; q++) {
            uint32_t ch = sym[off[A + i] + q];
            if (ch != ' ' && prev == ' ') words++;
            if (prev == ':' && ch == ' ') fail("extension: a token holds ': '", data, size);
            prev = ch;
        }
        if (max_words && words > max_words) fail("extension: a token has too many words", data, size);
    }
    free(sym);
    free(off);
    free(ln);
    size_t ml = 0;
    st_trainer_write_model(t, "fuzz", 4, NULL, NULL, 0, NULL, 0, &ml, NULL);
    char *model = (char *)malloc(ml);
    st_encoding *enc = NULL;
    if (st_trainer_write_model(t, "fuzz", 4, NULL, NULL, 0, model, ml, &ml, &err) != ST_OK ||
        st_encoding_new_model(model, ml, NULL, &enc, &err) != ST_OK)
        fail(err.message[0] ? err.message : "extension: the model does not load", data, size);
    st_encoding_free(enc);
    free(model);
    if (fail_at >= 0) {
        budget bg = {fail_at, 0, 0, 0, 0};
        st_allocator al = {budget_alloc, budget_free, &bg};
        st_trainer *ot = NULL;
        st = st_trainer_new(c, ST_TRAIN_PAPER, alphabet, A + n + 64, size > 4 ? data[4] % 3 : 0, 0, &al, &ot, NULL);
        if (st == ST_OK) st = st_trainer_set_seed_merges(ot, seeds, n, "base", 4, max_words, ST_EXTEND_COLON_SPACE, 5, NULL);
        if (st == ST_OK) st = st_trainer_step(ot, (size_t)-1, &made, NULL);
        if (st == ST_OK) {
            const uint32_t *op;
            const uint64_t *ok;
            size_t on = st_trainer_merges(ot, &op, &ok);
            if (on != m || (m && (memcmp(op, p, 2 * m * sizeof *p) || memcmp(ok, k, m * sizeof *k))))
                fail("extension: a trainer that had no failure made other merges", data, size);
        } else if (st != ST_ERR_OUT_OF_MEMORY) fail("extension: oom", data, size);
        st_trainer_free(ot);
        if (bg.live != 0) fail("extension: a leak (allocations not freed)", data, size);
    }
    st_trainer_free(t);
    free(seeds);
}

/* The stepwise trainer (st_trainer_set_superwords, st_trainer_candidates_new / _add, the step
 * that closes the pass) driven by calls picked from the input, in and out of order: each call the
 * state does not take is ST_ERR_INVALID_ARGUMENT with kind ST_KIND_OUT_OF_ORDER and changes
 * nothing, never a crash; finished in order, the model equals the internal steps' run one by one
 * on the documents the given-back counters held; with an allocation failing, every call succeeds
 * or gives ST_ERR_OUT_OF_MEMORY, and nothing leaks. */
static void stepwise(const st_counter *c, const char *text, size_t len, size_t cut, const uint8_t *data, size_t size,
                     long fail_at) {
    st_error err;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
    g_ops = h | 1;
    int algorithm = op_byte() & 1 ? ST_ALGORITHM_SUPERBPE : ST_ALGORITHM_BOUNDLESS;
    uint32_t flags = op_byte() & 1 ? ST_SUPERWORDS_NGRAM_SPLIT : 0;
    const char *doc[2] = {text, text + cut};
    size_t dlen[2] = {cut, len - cut};
    st_trainer *t = NULL, *r = NULL;
    if (st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 243 + 1 + data[1], 0, 0, NULL, &t, &err) != ST_OK ||
        st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 243 + 1 + data[1], 0, 0, NULL, &r, &err) != ST_OK)
        fail("stepwise: trainer_new", data, size);
    uint64_t target = st_trainer_stat(t, ST_TRAINER_TARGET);
    uint64_t sm = algorithm == ST_ALGORITHM_SUPERBPE ? op_byte() % (target + 1) : 0;
    if (st_trainer_set_superwords(t, algorithm, sm, flags, &err) != ST_OK) fail(err.message, data, size);
    st_counter *slot[3] = {NULL, NULL, NULL};
    uint64_t held[3][2] = {{0, 0}, {0, 0}, {0, 0}}, counted[2] = {0, 0};
    int back[3] = {0, 0, 0}, stepped = 0;
    size_t made;
    for (int op = 0; op < 64; op++) {
        unsigned b = op_byte(), i = b % 3, j = (b >> 2) % 3, d = (b >> 4) & 1;
        int cands = st_trainer_stat(t, ST_TRAINER_STATE) == ST_TRAINING_CANDIDATES;
        st_status st;
        switch ((b >> 5) % 6) {
        case 0:
            if (cands && (b & 12)) break; /* the pass stays open a while: counters come and go */
            st = st_trainer_step(t, (b & 3) == 3 ? (size_t)-1 : 1 + (b & 3), &made, &err); /* or to the phase's end */
            if (st != ST_OK) fail("stepwise: a step failed", data, size);
            stepped = 1;
            break;
        case 1:
            if (slot[i]) break;
            st = st_trainer_candidates_new(t, NULL, &slot[i], &err);
            if (cands ? st != ST_OK : !(st == ST_ERR_INVALID_ARGUMENT && err.kind == ST_KIND_OUT_OF_ORDER && !slot[i]))
                fail("stepwise: candidates_new in the wrong state", data, size);
            held[i][0] = held[i][1] = 0;
            back[i] = 0;
            break;
        case 2:
            if (!slot[i]) break;
            st = st_counter_add(slot[i], doc[d], dlen[d], 0, &err);
            if (back[i] ? !(st == ST_ERR_INVALID_ARGUMENT && err.kind == ST_KIND_OUT_OF_ORDER) : st != ST_OK)
                fail("stepwise: feeding a counter", data, size);
            if (st == ST_OK) held[i][d]++;
            break;
        case 3:
            if (!slot[i]) break;
            st = st_trainer_candidates_add(t, slot[i], &err);
            if (cands && !back[i] ? st != ST_OK : !(st == ST_ERR_INVALID_ARGUMENT && err.kind == ST_KIND_OUT_OF_ORDER))
                fail("stepwise: giving a counter back", data, size);
            if (st == ST_OK) {
                back[i] = 1;
                counted[0] += held[i][0];
                counted[1] += held[i][1];
            }
            break;
        case 4:
            st = st_trainer_set_superwords(t, algorithm, sm, flags, &err);
            if (stepped ? !(st == ST_ERR_INVALID_ARGUMENT && err.kind == ST_KIND_OUT_OF_ORDER) : st != ST_OK)
                fail("stepwise: set_superwords", data, size);
            break;
        default:
            if (!slot[i] || !slot[j] || i == j) break;
            st = st_counter_merge(slot[i], slot[j], &err);
            if (back[i] || back[j] ? !(st == ST_ERR_INVALID_ARGUMENT && err.kind == ST_KIND_OUT_OF_ORDER) : st != ST_OK)
                fail("stepwise: merging counters", data, size);
            if (st == ST_OK) {
                held[i][0] += held[j][0];
                held[i][1] += held[j][1];
            }
        }
        if (st_trainer_stat(t, ST_TRAINER_PASS_DOCUMENTS) != counted[0] + counted[1])
            fail("stepwise: the pass's documents", data, size);
    }
    for (int guard = 0; st_trainer_stat(t, ST_TRAINER_STATE) != ST_TRAINING_DONE; guard++)
        if (guard > 1 << 22 || st_trainer_step(t, 64, &made, &err) != ST_OK) fail("stepwise: finishing", data, size);
    for (int q = 0; q < 3; q++) st_counter_free(slot[q]);
    /* the same by the internal steps */
    st_counter *k = NULL, *ks = NULL;
    if (st_trainer_step(r, (size_t)-1, &made, &err) != ST_OK ||
        st__counter_new_candidates(r, algorithm, sm, NULL, &k, &err) != ST_OK)
        fail(err.message, data, size);
    for (int d = 0; d < 2; d++)
        for (uint64_t q = 0; q < counted[d]; q++)
            if (st_counter_add(k, doc[d], dlen[d], 0, &err) != ST_OK) fail(err.message, data, size);
    if (flags && st__counter_split_ngrams(k, st_trainer_stat(r, ST_TRAINER_NGRAM_CMIN), ST__NGRAM_MAX_LEN, NULL, &ks,
                                          &err) != ST_OK)
        fail(err.message, data, size);
    if (st__trainer_start_superwords(r, ks ? ks : k, algorithm, sm, &err) != ST_OK ||
        st_trainer_step(r, (size_t)-1, &made, &err) != ST_OK || !st_trainer_stat(r, ST_TRAINER_DONE))
        fail(err.message, data, size);
    size_t n1, n2;
    char *m1 = model_of(t, &n1, data, size), *m2 = model_of(r, &n2, data, size);
    if (n1 != n2 || memcmp(m1, m2, n1)) fail("stepwise: another model than the internal steps'", data, size);
    free(m1);
    free(m2);
    st_counter_free(k);
    st_counter_free(ks);
    st_trainer_free(r);
    st_trainer_free(t);
    /* in order, with an allocation failing */
    if (fail_at >= 0) {
        budget bg = {fail_at, 0, 0, 0, 0};
        st_allocator al = {budget_alloc, budget_free, &bg};
        st_trainer *ot = NULL;
        st_status st = st_trainer_new(c, ST_TRAIN_PAPER, ST_ALPHABET_BYTES, 243 + 1 + data[1], 0, 0, &al, &ot, NULL);
        if (st == ST_OK) st = st_trainer_set_superwords(ot, algorithm, sm, flags, NULL);
        for (int guard = 0; st == ST_OK && st_trainer_stat(ot, ST_TRAINER_STATE) != ST_TRAINING_DONE; guard++) {
            if (guard > 1 << 22) fail("stepwise oom: no end", data, size);
            if (st_trainer_stat(ot, ST_TRAINER_STATE) == ST_TRAINING_CANDIDATES) {
                st_counter *ok = NULL;
                st = st_trainer_candidates_new(ot, &al, &ok, NULL);
                if (st == ST_OK) st = st_counter_add(ok, text, len, 0, NULL);
                if (st == ST_OK) st = st_trainer_candidates_add(ot, ok, NULL);
                st_counter_free(ok);
                if (st != ST_OK) break;
            }
            st = st_trainer_step(ot, 64, &made, NULL);
        }
        if (st != ST_OK && st != ST_ERR_OUT_OF_MEMORY) fail("stepwise oom: neither OK nor OUT_OF_MEMORY", data, size);
        st_trainer_free(ot);
        if (bg.live != 0) fail("stepwise oom: a leak (allocations not freed)", data, size);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    int pattern = 1 + data[0] % 3;
    uint32_t flags = (data[0] >> 2) & 1 ? ST_PRETOK_SCRIPT_AWARE : 0;
    int mode = (data[0] >> 3) & 1 ? ST_TRAIN_HF : ST_TRAIN_PAPER;
    int alphabet = mode == ST_TRAIN_PAPER && ((data[0] >> 4) & 1) ? ST_ALPHABET_UBE : ST_ALPHABET_BYTES;
    uint64_t minf = (data[0] >> 5) & 3;
    uint64_t extra = data[1];
    long fail_at = data[2] ? (long)data[2] % 64 : -1;
    const char *text = (const char *)data + 3;
    size_t len = size - 3;
    st_error err;

    /* counting */
    st_counter *c = NULL, *a = NULL, *b = NULL, *ab = NULL;
    st_counter_new(pattern, flags, NULL, 0, NULL, &c, NULL);
    st_counter_add(c, "seed\n", 5, 0, NULL);
    size_t l0;
    uint8_t *before = saved(c, &l0);
    st_status st = st_counter_add(c, text, len, ST_COUNT_LINES, &err);
    if (st == ST_ERR_INVALID_UTF8) {
        size_t l1;
        uint8_t *after = saved(c, &l1);
        if (l0 != l1 || memcmp(before, after, l0)) fail("a refused add counted something", data, size);
        uint64_t line = 1;
        for (size_t i = 0; i < err.offset; i++) line += text[i] == '\n';
        if (err.offset >= len || err.line != line) fail("bad error offset or line", data, size);
        free(after);
    } else if (st != ST_OK) fail("add: neither OK nor INVALID_UTF8", data, size);
    free(before);
    int valid = st == ST_OK;
    if (valid) {
        size_t cut = len ? data[1] % (len + 1) : 0;
        while (cut < len && ((uint8_t)text[cut] & 0xC0) == 0x80) cut++; /* a character boundary */
        st_counter_new(pattern, flags, NULL, 0, NULL, &a, NULL);
        st_counter_new(pattern, flags, NULL, 0, NULL, &b, NULL);
        st_counter_new(pattern, flags, NULL, 0, NULL, &ab, NULL);
        size_t ends[2] = {cut, len};
        if (st_counter_add(a, text, cut, 0, NULL) || st_counter_add(b, text + cut, len - cut, 0, NULL) ||
            st_counter_add_documents(ab, text, ends, 2, NULL) || st_counter_merge(a, b, NULL))
            fail("counting valid text failed", data, size);
        if (!same(a, ab)) fail("two counters merged differ from one", data, size);
        size_t ls;
        uint8_t *s = saved(a, &ls);
        st_counter *r = NULL;
        st_counter_new(pattern, flags, NULL, 0, NULL, &r, NULL);
        if (st_counter_load(r, s, ls, &err) != ST_OK || !same(r, a)) fail("save/load round trip", data, size);
        free(s);
        st_counter_free(r);
    }
    /* the input as a counts file */
    {
        st_counter *r = NULL;
        st_counter_new(pattern, flags, NULL, 0, NULL, &r, NULL);
        st_counter_add(r, "x y", 3, 0, NULL);
        size_t lb;
        uint8_t *bb = saved(r, &lb);
        st = st_counter_load(r, data, size, &err);
        if (st == ST_OK) {
            st_counter *r2 = NULL;
            st_counter_new(pattern, flags, NULL, 0, NULL, &r2, NULL);
            st_counter_load(r2, data, size, NULL);
            size_t l2;
            uint8_t *s2 = saved(r2, &l2);
            if (l2 != size || memcmp(s2, data, size)) fail("an accepted counts file saves back differently", data, size);
            free(s2);
            st_counter_free(r2);
        } else {
            if (st != ST_ERR_MALFORMED_MODEL && st != ST_ERR_INVALID_ARGUMENT) fail("load: unexpected status", data, size);
            if (!err.message[0]) fail("load: no message", data, size);
            size_t la;
            uint8_t *aa = saved(r, &la);
            if (la != lb || memcmp(aa, bb, la)) fail("a refused load added something", data, size);
            free(aa);
        }
        free(bb);
        st_counter_free(r);
    }

    /* training */
    st_trainer *t0 = NULL;
    if (st_trainer_new(c, mode, alphabet, 1u << 20, 0, 0, NULL, &t0, NULL) != ST_OK) fail("trainer_new", data, size);
    uint64_t vocab = st_trainer_stat(t0, ST_TRAINER_ALPHABET) + extra + 1;
    st_trainer_free(t0);
    st_trainer *t = NULL, *t1 = NULL;
    if (st_trainer_new(c, mode, alphabet, vocab, minf, 1, NULL, &t, &err) != ST_OK ||
        st_trainer_new(c, mode, alphabet, vocab, minf, 1, NULL, &t1, &err) != ST_OK)
        fail("trainer_new", data, size);
    size_t made;
    if (st_trainer_step(t, (size_t)-1, &made, &err) != ST_OK || !st_trainer_stat(t, ST_TRAINER_DONE))
        fail("one step did not finish", data, size);
    do {
        if (st_trainer_step(t1, 1, &made, &err) != ST_OK) fail("step", data, size);
    } while (made == 1);
    const uint32_t *p, *p1;
    const uint64_t *k, *k1;
    size_t n = st_trainer_merges(t, &p, &k), n1 = st_trainer_merges(t1, &p1, &k1);
    if (n != n1 || (n && (memcmp(p, p1, 2 * n * sizeof *p) || memcmp(k, k1, n * sizeof *k))))
        fail("stepwise differs from one shot", data, size);
    if (n > st_trainer_stat(t, ST_TRAINER_TARGET) && mode == ST_TRAIN_PAPER) fail("more merges than asked", data, size);
    for (size_t i = 0; i < n; i++) {
        if (k[i] < minf || k[i] == 0) fail("a merge below min_frequency", data, size);
        if (mode == ST_TRAIN_PAPER && i && k[i] > k[i - 1]) fail("paper counts increased", data, size);
    }
    size_t ends1[1] = {7};
    size_t ml = 0;
    st_trainer_write_model(t, "fuzz", 4, "<|end|>", ends1, 1, NULL, 0, &ml, NULL);
    char *model = (char *)malloc(ml);
    if (st_trainer_write_model(t, "fuzz", 4, "<|end|>", ends1, 1, model, ml, &ml, &err) != ST_OK)
        fail("write_model", data, size);
    st_encoding *enc = NULL;
    if (st_encoding_new_model(model, ml, NULL, &enc, &err) != ST_OK) fail(err.message, data, size);
    if (valid && len < 512) { /* the trained model encodes its own text back */
        uint32_t ids[2048];
        size_t ni = 0, dl = 0;
        uint8_t out[2048];
        if (st_encode(enc, text, len, NULL, 0, ids, NULL, 2048, &ni, NULL) != ST_OK) fail("encode", data, size);
        if (alphabet == ST_ALPHABET_BYTES &&
            (st_decode(enc, ids, ni, out, sizeof out, &dl, NULL) != ST_OK || dl != len || memcmp(out, text, len)))
            fail("decode(encode(text)) != text", data, size);
    }
    st_encoding_free(enc);
    free(model);
    st_trainer_free(t1);
    if (mode == ST_TRAIN_PAPER) superwords(t, c, text, len, valid, data, size, fail_at);
    if (mode == ST_TRAIN_PAPER) extension(c, alphabet, p, n, data, size, fail_at);
    if (valid) {
        size_t cut = len ? (size_t)data[1] % (len + 1) : 0;
        while (cut < len && ((uint8_t)text[cut] & 0xC0) == 0x80) cut++;
        stepwise(c, text, len, cut, data, size, fail_at);
    }
    /* the same with an allocation failing: an error or success, and nothing leaks */
    if (fail_at >= 0) {
        budget bg = {fail_at, 0, 0, 0, 0};
        st_allocator al = {budget_alloc, budget_free, &bg};
        st_counter *oc = NULL;
        st = st_counter_new(pattern, flags, NULL, 0, &al, &oc, NULL);
        if (st == ST_OK) {
            st = st_counter_add(oc, text, len, ST_COUNT_LINES, NULL);
            if (st != ST_OK && st != ST_ERR_INVALID_UTF8 && st != ST_ERR_OUT_OF_MEMORY) fail("oom add", data, size);
        } else if (st != ST_ERR_OUT_OF_MEMORY) fail("oom counter_new", data, size);
        st_trainer *ot = NULL;
        st = st_trainer_new(c, mode, alphabet, vocab, minf, 1, &al, &ot, NULL);
        if (st == ST_OK) {
            st = st_trainer_step(ot, (size_t)-1, &made, NULL);
            if (st != ST_OK && st != ST_ERR_OUT_OF_MEMORY) fail("oom step", data, size);
            if (st == ST_OK) {
                size_t on;
                const uint32_t *op;
                const uint64_t *ok;
                on = st_trainer_merges(ot, &op, &ok);
                if (on != n || (n && (memcmp(op, p, 2 * n * sizeof *p) || memcmp(ok, k, n * sizeof *k))))
                    fail("a trainer that had no failure made other merges", data, size);
            }
        } else if (st != ST_ERR_OUT_OF_MEMORY) fail("oom trainer_new", data, size);
        st_trainer_free(ot);
        st_counter_free(oc);
        if (bg.live != 0) fail("a leak (allocations not freed)", data, size);
    }
    st_trainer_free(t);
    st_counter_free(c);
    st_counter_free(a);
    st_counter_free(b);
    st_counter_free(ab);
    return 0;
}

#ifdef ST_FUZZ_MAIN
int main(int argc, char **argv) {
    long nrandom = 0;
    int first = 1;
    if (argc > 3 && strcmp(argv[1], "--random") == 0) {
        nrandom = atol(argv[2]);
        g_rng = (uint64_t)atoll(argv[3]) * 0x9E3779B97F4A7C15ull + 1;
        first = 4;
    }
    for (int i = first; i < argc; i++) {
        size_t n;
        uint8_t *d = read_all(argv[i], &n);
        if (!d) { perror(argv[i]); return 1; }
        LLVMFuzzerTestOneInput(d, n);
        free(d);
    }
    static const char *pieces[] = {"a", "a", "b", "ab", "aaaa", " ", " ", "\n", "\r\n", "\xc3\xa9", "\xe4\xb8\xad",
                                   "\xf0\x9f\x98\x80", "Z", "7", "'ll", ".", "\xe0\xb8\xaa", "\xff", "\xc3",
                                   "stcounts"};
    for (long r = 0; r < nrandom; r++) {
        size_t cap = 600, n = 3;
        uint8_t *t = (uint8_t *)malloc(cap);
        t[0] = (uint8_t)rnd();
        t[1] = (uint8_t)rnd();
        t[2] = rnd() % 4 == 0 ? (uint8_t)rnd() : 0;
        size_t np = rnd() % 60;
        for (size_t i = 0; i < np; i++) {
            const char *p = pieces[rnd() % (sizeof pieces / sizeof *pieces)];
            if ((p[0] == '\xff' || p[0] == '\xc3') && rnd() % 4) continue; /* mostly valid text */
            size_t l = strlen(p);
            if (n + l > cap) break;
            memcpy(t + n, p, l);
            n += l;
        }
        uint8_t *exact = (uint8_t *)malloc(n);
        memcpy(exact, t, n);
        free(t);
        LLVMFuzzerTestOneInput(exact, n);
        free(exact);
    }
    if (nrandom) printf("fuzz_train: %ld random inputs, no invariant broken\n", nrandom);
    return 0;
}
#endif
