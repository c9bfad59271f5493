// Tests of the encoder and decoder of the supertok C core (no framework): st_encoding_new_tiktoken,
// st_encode, st_encode_count, st_decode, st_token_bytes, the vocabulary image, allocator hooks.
//
// Build and run from the repository root:
//   gcc -std=c11 -O2 -DST_TEST_COUNTERS -Icore_c/include core_c/src/*/*.c core_c/tests/test_encode.c -o test_encode
//   ./test_encode py/supertok/vocab      # prints failures, then "N passed, M failed"; exit 1 on failure
// core_c/tests/run.sh builds it with ASan/UBSan and runs it.
//
// argv[1] is the directory holding the shipped rank files (r50k_base, p50k_base, cl100k_base,
// o200k_base .tiktoken; default py/supertok/vocab). The special tokens are the ones tiktoken 0.14
// gives each encoding (py/supertok/vocab/<name>.json), written here as constants.
//
// Every encode is checked against an independent reference written here: the rank file parsed
// by this file's own base64 decoder into its own hash table, the text split with st_pretokenize,
// and each piece merged by the plain tiktoken loop (lowest rank first, leftmost among equals).
//
// Environment:
//   ST_ENCODE_BIG=1        the full sizes everywhere (1 MB runs for every encoding and text kind,
//                          1 MB vs 4 MB work on o200k and cl100k). Meant for an optimised build
//                          (-O2: about a minute). Without it (run.sh's sanitizer build) 1 MB runs
//                          only for a few texts on o200k, and the work of 16 KB is compared with
//                          64 KB. Either way the check is on counted work (the core's work counter,
//                          work_counter.h: at most 5x the work for 4x the text), never on time; the
//                          times printed per test group are for information only.
//   ST_TEST_SEED           seed of the random texts (default 1).
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stddef.h>

#include "supertok.h"
#include "error_contract.h"
#include "check.h"
#include "../src/base/work_counter.h"
#include "../src/encode/encoding.h" /* st__cut_within, the span cache's search */

#ifndef ST_TEST_COUNTERS
#error "test_encode.c needs the core's work counter: build the core and this file with -DST_TEST_COUNTERS"
#endif

static int g_big;
static uint64_t g_seed = 1;

/* A failing check is only counted once per test group where loops would repeat it. */
#define CHECK_ONCE(flag, cond, ...)                                                                      \
    do {                                                                                                 \
        int ok_ = !!(cond);                                                                              \
        if (!ok_ && !(flag)) {                                                                           \
            (flag) = 1;                                                                                  \
            check(0, __FILE__, __LINE__, __VA_ARGS__);                                                   \
        } else if (ok_) {                                                                                \
            g_pass++;                                                                                    \
        }                                                                                                \
    } while (0)

static void hexdump(char *out, size_t outcap, const void *data, size_t len) {
    const unsigned char *s = (const unsigned char *)data;
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; i < len && o + 8 < outcap; i++) o += (size_t)snprintf(out + o, outcap - o, "%02X ", s[i]);
    if (len && o + 8 >= outcap) snprintf(out + o, outcap - o, "...");
}

static double now_seconds(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static uint32_t rng_below(uint64_t *s, uint32_t n) { return (uint32_t)(rng_next(s) % n); }

/* ---- files, base64 ----------------------------------------------------------------------- */


static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encode(const uint8_t *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)s[i] << 16;
        if (i + 1 < n) w |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) w |= s[i + 2];
        out[o++] = B64[(w >> 18) & 63];
        out[o++] = B64[(w >> 12) & 63];
        out[o++] = i + 1 < n ? B64[(w >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? B64[w & 63] : '=';
    }
    out[o] = 0;
    return o;
}

static int b64_digit(int c) {
    const char *p = c ? strchr(B64, c) : NULL;
    return p ? (int)(p - B64) : -1;
}

/* The reference decoder: returns the decoded length or -1. */
static long b64_decode_ref(const char *s, size_t n, uint8_t *out) {
    if (n == 0 || n % 4) return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int d[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            if (s[i + k] == '=' && i + 4 == n && k >= 2) {
                d[k] = 0;
                pad++;
            } else {
                if (pad) return -1;
                d[k] = b64_digit((unsigned char)s[i + k]);
                if (d[k] < 0) return -1;
            }
        }
        uint32_t w = ((uint32_t)d[0] << 18) | ((uint32_t)d[1] << 12) | ((uint32_t)d[2] << 6) | (uint32_t)d[3];
        out[o++] = (uint8_t)(w >> 16);
        if (pad < 2) out[o++] = (uint8_t)(w >> 8);
        if (pad < 1) out[o++] = (uint8_t)w;
    }
    return (long)o;
}

/* Rank-file text "base64 id\n" for the given tokens. */
static char *make_rank_text(const char *const *toks, const size_t *lens, const uint32_t *ids, size_t n, size_t *len) {
    size_t cap = 64;
    for (size_t k = 0; k < n; k++) cap += (lens[k] + 2) / 3 * 4 + 16;
    char *t = (char *)xmalloc(cap);
    size_t o = 0;
    for (size_t k = 0; k < n; k++) {
        o += b64_encode((const uint8_t *)toks[k], lens[k], t + o);
        o += (size_t)sprintf(t + o, " %u\n", ids[k]);
    }
    *len = o;
    return t;
}

/* ---- the encodings under test ------------------------------------------------------------- */

#define MAX_SPECIALS 5

typedef struct enc_info {
    const char *name;
    int pattern;
    uint32_t n_vocab;
    int n_special;
    const char *special[MAX_SPECIALS];
    uint32_t special_id[MAX_SPECIALS];
    uint32_t gaps[4]; /* some ids that are no token (0 = end of list) */
} enc_info;

static const enc_info INFOS[4] = {
    {"r50k_base", ST_PATTERN_GPT2, 50257, 1, {"<|endoftext|>"}, {50256}, {50257}},
    {"p50k_base", ST_PATTERN_GPT2, 50281, 1, {"<|endoftext|>"}, {50256}, {50281}},
    {"cl100k_base",
     ST_PATTERN_CL100K,
     100277,
     5,
     {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"},
     {100257, 100258, 100259, 100260, 100276},
     {100256, 100261, 100275, 100277}},
    {"o200k_base",
     ST_PATTERN_O200K,
     200019,
     2,
     {"<|endoftext|>", "<|endofprompt|>"},
     {199999, 200018},
     {199998, 200000, 200017, 200019}},
};
#define N_ENC 4
#define O200K 3
#define CL100K 2

/* The reference vocabulary: this file's own parse of the rank file. */
#define NONE 0xFFFFFFFFu

typedef struct refvocab {
    uint32_t n_ids;
    uint32_t *off, *len; /* per id; len 0 = no token */
    uint8_t *pool;
    uint32_t *table; /* id + 1, 0 = empty */
    uint32_t mask;
    const enc_info *info;
    int n_special;
    const char *special[MAX_SPECIALS];
    uint32_t special_id[MAX_SPECIALS];
} refvocab;

static uint64_t fnv(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static uint32_t ref_lookup(const refvocab *r, const uint8_t *p, size_t n) {
    uint32_t i = (uint32_t)fnv(p, n) & r->mask;
    for (;;) {
        uint32_t e = r->table[i];
        if (!e) return NONE;
        uint32_t id = e - 1;
        if (r->len[id] == n && memcmp(r->pool + r->off[id], p, n) == 0) return id;
        i = (i + 1) & r->mask;
    }
}

/* Parse "base64 rank" lines (all well formed in the shipped files). Returns 0 on failure. */
static int ref_parse(refvocab *r, const char *text, size_t len) {
    memset(r, 0, sizeof *r);
    size_t lines = 0;
    uint32_t max_id = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    lines++;
    uint32_t *ids = (uint32_t *)xmalloc(lines * 4);
    size_t *starts = (size_t *)xmalloc(lines * sizeof(size_t)), *b64len = (size_t *)xmalloc(lines * sizeof(size_t));
    size_t n = 0, pos = 0, pool = 0;
    while (pos < len) {
        size_t e = pos;
        while (e < len && text[e] != '\n') e++;
        size_t sp = pos;
        while (sp < e && text[sp] != ' ') sp++;
        if (sp == e) {
            if (e > pos) goto bad;
            pos = e + 1;
            continue;
        }
        starts[n] = pos;
        b64len[n] = sp - pos;
        ids[n] = (uint32_t)strtoul(text + sp + 1, NULL, 10);
        if (ids[n] > max_id) max_id = ids[n];
        pool += b64len[n];
        n++;
        pos = e + 1;
    }
    r->n_ids = max_id + 1;
    r->off = (uint32_t *)calloc(r->n_ids, 4);
    r->len = (uint32_t *)calloc(r->n_ids, 4);
    r->pool = (uint8_t *)xmalloc(pool + 1);
    uint32_t cap = 1;
    while (cap < 3 * n) cap <<= 1;
    r->mask = cap - 1;
    r->table = (uint32_t *)calloc(cap, 4);
    if (!r->off || !r->len || !r->table) goto bad;
    size_t po = 0;
    for (size_t k = 0; k < n; k++) {
        long bl = b64_decode_ref(text + starts[k], b64len[k], r->pool + po);
        if (bl <= 0) goto bad;
        r->off[ids[k]] = (uint32_t)po;
        r->len[ids[k]] = (uint32_t)bl;
        po += (size_t)bl;
        uint32_t i = (uint32_t)fnv(r->pool + r->off[ids[k]], (size_t)bl) & r->mask;
        while (r->table[i]) i = (i + 1) & r->mask;
        r->table[i] = ids[k] + 1;
    }
    free(ids);
    free(starts);
    free(b64len);
    return 1;
bad:
    free(ids);
    free(starts);
    free(b64len);
    return 0;
}

static void ref_free(refvocab *r) {
    free(r->off);
    free(r->len);
    free(r->pool);
    free(r->table);
    memset(r, 0, sizeof *r);
}

/* tiktoken's merge loop, plainly: the rank of each adjacent pair cached, the lowest (leftmost
 * among equals) joined, the two neighbouring ranks looked up again. O(n^2): pieces stay short. */
static size_t ref_merge(const refvocab *r, const uint8_t *p, size_t n, uint32_t *out) {
    uint32_t whole = ref_lookup(r, p, n);
    if (whole != NONE) {
        out[0] = whole;
        return 1;
    }
    size_t *st = (size_t *)xmalloc((n + 1) * sizeof(size_t));
    uint32_t *rk = (uint32_t *)xmalloc((n + 1) * 4);
    size_t m = n;
    for (size_t k = 0; k <= n; k++) st[k] = k;
    for (size_t k = 0; k + 1 < n; k++) rk[k] = ref_lookup(r, p + k, 2);
    for (;;) {
        uint32_t best = NONE;
        size_t at = 0;
        for (size_t k = 0; k + 1 < m; k++)
            if (rk[k] < best) {
                best = rk[k];
                at = k;
            }
        if (best == NONE) break;
        memmove(st + at + 1, st + at + 2, (m - at - 1) * sizeof(size_t));
        if (at + 2 < m) memmove(rk + at + 1, rk + at + 2, (m - at - 2) * 4);
        m--;
        rk[at] = at + 1 < m ? ref_lookup(r, p + st[at], st[at + 2] - st[at]) : NONE;
        if (at > 0) rk[at - 1] = ref_lookup(r, p + st[at - 1], st[at + 1] - st[at - 1]);
    }
    for (size_t k = 0; k < m; k++) out[k] = ref_lookup(r, p + st[k], st[k + 1] - st[k]);
    free(st);
    free(rk);
    return m;
}

/* Reference encode of valid UTF-8 with the allowed specials (longest match at the leftmost
 * position). Returns the count; out has room for len entries. */
static size_t ref_encode(const refvocab *r, const st_pretokenizer *pt, const uint8_t *s, size_t len,
                         const uint32_t *allowed, size_t n_allowed, uint32_t *out) {
    st_error err;
    size_t n = 0, seg = 0;
    size_t *ends = (size_t *)xmalloc((len + 1) * sizeof(size_t));
    for (size_t i = 0; i <= len; i++) {
        size_t best_len = 0;
        uint32_t best = NONE;
        for (size_t a = 0; a < n_allowed && i < len; a++)
            for (int k = 0; k < r->n_special; k++) {
                if (r->special_id[k] != allowed[a]) continue;
                size_t sl = strlen(r->special[k]);
                if (sl > best_len && sl <= len - i && memcmp(s + i, r->special[k], sl) == 0) {
                    best_len = sl;
                    best = allowed[a];
                }
            }
        if (best == NONE && i < len) continue;
        /* the ordinary text [seg, i) */
        size_t np = 0;
        st_status stt = CHECKED(err, st_pretokenize(pt, (const char *)s + seg, i - seg, 0, ends, len + 1, &np, &err));
        if (stt != ST_OK) {
            printf("reference: st_pretokenize failed (%d)\n", stt);
            exit(2);
        }
        size_t prev = 0;
        for (size_t k = 0; k < np; k++) {
            n += ref_merge(r, s + seg + prev, ends[k] - prev, out + n);
            prev = ends[k];
        }
        if (best == NONE) break;
        out[n++] = best;
        i += best_len - 1;
        seg = i + 1;
    }
    free(ends);
    return n;
}

static st_encoding *g_enc[N_ENC];
static refvocab g_ref[N_ENC];
static st_pretokenizer *g_pt[N_ENC];

static char *specials_text(const enc_info *e, size_t *len) {
    size_t lens[MAX_SPECIALS];
    for (int k = 0; k < e->n_special; k++) lens[k] = strlen(e->special[k]);
    return make_rank_text(e->special, lens, e->special_id, (size_t)e->n_special, len);
}

static st_status load_encoding(const char *dir, const enc_info *e, const st_allocator *alloc, st_encoding **out,
                               refvocab *ref) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.tiktoken", dir, e->name);
    size_t rlen = 0, slen = 0;
    char *ranks = read_file(path, &rlen);
    if (!ranks) {
        printf("cannot read %s\n", path);
        return ST_ERR_INVALID_ARGUMENT;
    }
    char *spec = specials_text(e, &slen);
    st_error err;
    st_status st = CHECKED(
        err, st_encoding_new_tiktoken(ranks, rlen, spec, slen, plain_pretokenizer(e->pattern), alloc, out, &err));
    if (st != ST_OK)
        printf("st_encoding_new_tiktoken(%s) = %d at %zu (input %u)\n", e->name, st, (size_t)err.offset, err.input);
    if (ref) {
        if (!ref_parse(ref, ranks, rlen)) printf("reference parse of %s failed\n", path);
        ref->info = e;
        ref->n_special = e->n_special;
        for (int k = 0; k < e->n_special; k++) {
            ref->special[k] = e->special[k];
            ref->special_id[k] = e->special_id[k];
        }
    }
    free(ranks);
    free(spec);
    return st;
}

/* ---- the core check: one text through one encoding ------------------------------------------ */

static size_t count_codepoints(const uint8_t *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += (s[i] & 0xC0) != 0x80;
    return c;
}

typedef struct check_opts {
    const uint32_t *allowed;
    size_t n_allowed;
    int with_ref;   /* compare ids with the reference */
    int with_small; /* size query and small caps */
    int light;      /* huge texts: skip the second encode without char_starts */
} check_opts;

/* Encodes text with enc and checks everything that must hold; returns the number of ids (or
 * (size_t)-1 if the encode failed). label names the text in failure messages. */
static size_t check_text(int e, const st_encoding *enc, const refvocab *ref, const st_pretokenizer *pt,
                         const uint8_t *s, size_t len, const check_opts *o, const char *label) {
    const char *name = INFOS[e].name;
    char hx[200];
    hexdump(hx, sizeof hx, s, len < 48 ? len : 48);
    size_t cap = len + 1;
    uint32_t *ids = (uint32_t *)xmalloc(cap * 4);
    size_t *cs = (size_t *)xmalloc(cap * sizeof(size_t));
    size_t n = 0;
    st_error err;
    st_special_policy policy = {.allowed = o->allowed, .n_allowed = o->n_allowed};
    st_status st =
        CHECKED(err, st_encode(enc, (const char *)s, len, &policy, ST_OFFSETS_CODEPOINTS, ids, cs, cap, &n, &err));
    CHECK(st == ST_OK, "%s %s: st_encode = %d (offset %zu) on %zu bytes [%s]", name, label, st, (size_t)err.offset, len,
          hx);
    if (st != ST_OK) {
        free(ids);
        free(cs);
        return (size_t)-1;
    }
    CHECK(n <= len, "%s %s: %zu ids for %zu bytes", name, label, n, len);
    CHECK(len == 0 || n > 0, "%s %s: no ids for %zu bytes", name, label, len);

    /* ids are tokens; decode gives the input back; the token bytes add up */
    uint32_t nv = st_encoding_n_vocab(enc);
    size_t bad_id = (size_t)-1;
    for (size_t k = 0; k < n && bad_id == (size_t)-1; k++)
        if (ids[k] >= nv) bad_id = k;
    CHECK(bad_id == (size_t)-1, "%s %s: id %u at %zu >= n_vocab", name, label, bad_id == (size_t)-1 ? 0 : ids[bad_id],
          bad_id);
    uint8_t *dec = (uint8_t *)xmalloc(len + 16);
    size_t dlen = 0;
    st = CHECKED(err, st_decode(enc, ids, n, dec, len + 16, &dlen, &err));
    CHECK(st == ST_OK && dlen == len && memcmp(dec, s, len) == 0,
          "%s %s: decode(encode(x)) != x: status %d, %zu bytes vs %zu [%s]", name, label, st, dlen, len, hx);
    free(dec);

    /* char_starts: from the token byte lengths, the code point where each token starts (the
     * character it starts in, for a token starting inside one) */
    size_t ncp = count_codepoints(s, len), pos = 0, cps = 0, bad_cs = (size_t)-1, want_bad = 0;
    int cs_ok = 1;
    for (size_t k = 0; k < n; k++) {
        const uint8_t *tb;
        size_t tl;
        if (CHECKED(err, st_token_bytes(enc, ids[k], &tb, &tl, &err)) != ST_OK) {
            cs_ok = 0;
            break;
        }
        size_t want = cps;
        if (pos < len && (s[pos] & 0xC0) == 0x80 && want > 0) want--;
        if (cs[k] != want || (k > 0 && cs[k] < cs[k - 1]) || cs[k] >= (ncp ? ncp : 1)) {
            if (bad_cs == (size_t)-1) {
                bad_cs = k;
                want_bad = want;
            }
        }
        for (size_t q = 0; q < tl && pos < len; q++, pos++) cps += (s[pos] & 0xC0) != 0x80;
    }
    CHECK(cs_ok && bad_cs == (size_t)-1, "%s %s: char_starts[%zu] = %zu, want %zu (non-decreasing, < %zu code points)",
          name, label, bad_cs, bad_cs == (size_t)-1 ? 0 : cs[bad_cs], want_bad, ncp);

    /* the same without char_starts, and the count alone */
    if (!o->light) {
        uint32_t *ids2 = (uint32_t *)xmalloc(cap * 4);
        size_t n2 = 0;
        st = CHECKED(err, st_encode(enc, (const char *)s, len, &policy, 0, ids2, NULL, cap, &n2, &err));
        CHECK(st == ST_OK && n2 == n && memcmp(ids, ids2, n * 4) == 0, "%s %s: encode without char_starts differs",
              name, label);
        free(ids2);
    }
    size_t cnt = 0;
    st = CHECKED(err, st_encode_count(enc, (const char *)s, len, &policy, &cnt, &err));
    CHECK(st == ST_OK && cnt == n, "%s %s: st_encode_count = %d, %zu; st_encode gave %zu", name, label, st, cnt, n);

    if (o->with_small) {
        /* size query */
        size_t q = 12345;
        st = CHECKED(err, st_encode(enc, (const char *)s, len, &policy, 0, NULL, NULL, 0, &q, &err));
        CHECK((n ? st == ST_ERR_BUFFER_TOO_SMALL : st == ST_OK) && q == n,
              "%s %s: size query (cap 0) = %d, %zu; want %d, %zu", name, label, st, q,
              n ? ST_ERR_BUFFER_TOO_SMALL : ST_OK, n);
        /* small caps: nothing written past cap, the ids before it are the first ids */
        size_t caps[3] = {1, n / 2, n ? n - 1 : 0};
        for (int c = 0; c < 3; c++) {
            size_t sc = caps[c];
            if (sc >= n) continue;
            uint32_t *si = (uint32_t *)xmalloc((n + 8) * 4);
            size_t *ss = (size_t *)xmalloc((n + 8) * sizeof(size_t));
            for (size_t k = 0; k < n + 8; k++) {
                si[k] = 0xDEADBEEFu;
                ss[k] = (size_t)0xA5A5A5A5u;
            }
            size_t got = 0;
            st = CHECKED(err,
                         st_encode(enc, (const char *)s, len, &policy, ST_OFFSETS_CODEPOINTS, si, ss, sc, &got, &err));
            int untouched = 1, prefix = 1;
            for (size_t k = sc; k < n + 8; k++) untouched &= si[k] == 0xDEADBEEFu && ss[k] == (size_t)0xA5A5A5A5u;
            for (size_t k = 0; k < sc; k++) prefix &= si[k] == ids[k] && ss[k] == cs[k];
            CHECK(st == ST_ERR_BUFFER_TOO_SMALL && got == n && untouched && prefix,
                  "%s %s: cap %zu of %zu: status %d, count %zu, nothing past cap %d, prefix %d", name, label, sc, n, st,
                  got, untouched, prefix);
            free(si);
            free(ss);
        }
    }

    if (o->with_ref && ref && pt) {
        uint32_t *want = (uint32_t *)xmalloc(cap * 4);
        size_t wn = ref_encode(ref, pt, s, len, o->allowed, o->n_allowed, want);
        size_t diff = 0;
        while (diff < n && diff < wn && ids[diff] == want[diff]) diff++;
        CHECK(wn == n && diff == n, "%s %s: ids differ from the reference at %zu (%u vs %u), counts %zu vs %zu [%s]", name,
              label, diff, diff < n ? ids[diff] : 0, diff < wn ? want[diff] : 0, n, wn, hx);
        free(want);
    }
    free(ids);
    free(cs);
    return n;
}

/* ---- text generators ------------------------------------------------------------------------ */

/* Random valid UTF-8 of at most max bytes (max >= 64): runs of one kind of character. */
static size_t gen_text(uint64_t *r, uint8_t *o, size_t max, int with_special_bits) {
    static const char *words[] = {"the", "The", " and", "'s", "'LL", "'re", "don't", "hello", " world", "ing",
                                  "tion", "http://x.y/z?a=1", "...", "!!", "()", "{}", "\t", "\r\n", "\n\n", "   ",
                                  "<|", "|>", "endoftext", "<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>"};
    size_t n = 0;
    size_t target = 1 + rng_below(r, (uint32_t)max - 8);
    while (n + 24 < max && n < target) {
        int kind = (int)rng_below(r, with_special_bits ? 15 : 13);
        int run = 1 + (int)rng_below(r, 8);
        for (int k = 0; k < run && n + 24 < max; k++) {
            uint32_t cp;
            switch (kind) {
            case 0: cp = 'a' + rng_below(r, 26); break;
            case 1: cp = "  \n\t\r"[rng_below(r, 5)]; break;
            case 2: cp = '0' + rng_below(r, 10); break;
            case 3: cp = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"[rng_below(r, 32)]; break;
            case 4: cp = 0xC0 + rng_below(r, 0x250 - 0xC0); break;
            case 5: cp = 0x400 + rng_below(r, 0x100); break;
            case 6: cp = 0x4E00 + rng_below(r, 0x5200); break;
            case 7: cp = 0x3040 + rng_below(r, 0x60); break;
            case 8: cp = 0xAC00 + rng_below(r, 0x2BA4); break;
            case 9: cp = 0x1F300 + rng_below(r, 0x350); break;
            case 10: cp = 0x300 + rng_below(r, 0x70); break;
            case 11:
                do cp = rng_below(r, 0x110000);
                while (cp >= 0xD800 && cp < 0xE000);
                break;
            case 12: cp = 'A' + rng_below(r, 26); break;
            default: {
                const char *w = words[rng_below(r, sizeof words / sizeof words[0])];
                size_t wl = strlen(w);
                memcpy(o + n, w, wl);
                n += wl;
                continue;
            }
            }
            n += put_cp(o + n, cp);
        }
    }
    return n;
}

/* ---- tests ------------------------------------------------------------------------------------ */

static const char *g_dir = "py/supertok/vocab";

static void test_load(void) {
    st_error err;
    for (int e = 0; e < N_ENC; e++) {
        const enc_info *in = &INFOS[e];
        double t0 = now_seconds();
        st_status st = load_encoding(g_dir, in, NULL, &g_enc[e], &g_ref[e]);
        double dt = now_seconds() - t0;
        CHECK(st == ST_OK && g_enc[e], "load %s: %d", in->name, st);
        if (st != ST_OK) {
            printf("cannot continue without %s\n", in->name);
            printf("%d passed, %d failed\n", g_pass, g_fail + 1);
            exit(1);
        }
        printf("  loaded %s in %.3f s\n", in->name, dt);
        st_encoding *enc = g_enc[e];
        CHECK(st_encoding_n_vocab(enc) == in->n_vocab, "%s: n_vocab %u, want %u", in->name, st_encoding_n_vocab(enc),
              in->n_vocab);
        CHECK(st_encoding_n_special(enc) == (uint32_t)in->n_special, "%s: n_special %u", in->name,
              st_encoding_n_special(enc));
        for (int k = 0; k < in->n_special; k++) {
            CHECK(st_encoding_special_id(enc, (uint32_t)k) == in->special_id[k], "%s: special %d is %u, want %u",
                  in->name, k, st_encoding_special_id(enc, (uint32_t)k), in->special_id[k]);
            const uint8_t *p = NULL;
            size_t l = 0;
            st = CHECKED(err, st_token_bytes(enc, in->special_id[k], &p, &l, &err));
            CHECK(st == ST_OK && l == strlen(in->special[k]) && memcmp(p, in->special[k], l) == 0,
                  "%s: st_token_bytes(special %u)", in->name, in->special_id[k]);
        }
        CHECK(st_encoding_special_id(enc, (uint32_t)in->n_special) == 0xFFFFFFFFu, "%s: special_id past the end",
              in->name);
        CHECK(g_ref[e].n_ids > 0 && g_ref[e].n_ids <= in->n_vocab, "%s: reference parse", in->name);
        /* every ordinary id: the bytes of the rank file (this file's own decode) */
        uint32_t bad = NONE;
        for (uint32_t id = 0; id < g_ref[e].n_ids && bad == NONE; id++) {
            const uint8_t *p = NULL;
            size_t l = 0;
            st = CHECKED(err, st_token_bytes(enc, id, &p, &l, &err));
            if (g_ref[e].len[id] == 0) {
                int is_special = 0;
                for (int k = 0; k < in->n_special; k++) is_special |= in->special_id[k] == id;
                if (!is_special && st != ST_ERR_INVALID_TOKEN) bad = id;
            } else if (st != ST_OK || l != g_ref[e].len[id] || memcmp(p, g_ref[e].pool + g_ref[e].off[id], l) != 0) {
                bad = id;
            }
        }
        CHECK(bad == NONE, "%s: st_token_bytes(%u) differs from the rank file", in->name, bad);
        for (int k = 0; k < 4 && in->gaps[k]; k++) {
            const uint8_t *p = (const uint8_t *)"x";
            size_t l = 99;
            st = CHECKED(err, st_token_bytes(enc, in->gaps[k], &p, &l, &err));
            CHECK(st == ST_ERR_INVALID_TOKEN, "%s: st_token_bytes(%u) (no token) = %d", in->name, in->gaps[k], st);
        }
        const uint8_t *p;
        size_t l;
        CHECK(CHECKED(err, st_token_bytes(enc, 0xFFFFFFFFu, &p, &l, &err)) == ST_ERR_INVALID_TOKEN,
              "%s: st_token_bytes(0xFFFFFFFF)", in->name);
        CHECK(CHECKED(err, st_token_bytes(enc, 0, NULL, &l, &err)) == ST_ERR_INVALID_ARGUMENT,
              "%s: st_token_bytes(NULL ptr)", in->name);
        CHECK(CHECKED(err, st_token_bytes(NULL, 0, &p, &l, &err)) == ST_ERR_INVALID_ARGUMENT,
              "%s: st_token_bytes(NULL enc)", in->name);
        st = CHECKED(err, st_pretokenizer_new(in->pattern, 0, NULL, 0, NULL, &g_pt[e], &err));
        CHECK(st == ST_OK, "pretokenizer for %s", in->name);
    }
    /* cl100k's gap at 100256 specifically */
    const uint8_t *p;
    size_t l;
    CHECK(CHECKED(err, st_token_bytes(g_enc[CL100K], 100256, &p, &l, &err)) == ST_ERR_INVALID_TOKEN,
          "cl100k: st_token_bytes(100256)");
}

static const char *FIXED_TEXTS[] = {
    "",
    "a",
    " ",
    "Hello, world!",
    "Hello world 12345, it's 2024!\r\n  ok  ",
    "I'm sure we'll see THEY'RE here, don't you? I've 'd 's 'S 'Ll",
    "The quick brown fox jumps over the lazy dog.\n\nThe end.\n",
    "    indented code:\n\tif (x == 1) { return y->z[3]; }\n",
    "def f(x):\n    return x ** 2  # comment\n\n\n",
    "numbers: 1 12 123 1234 12345 123456 3.14159 -42 1e10 0x1F",
    "   leading and trailing spaces   ",
    "\n\n\n\r\n\r\n  \t\t\n ",
    "caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9 \xC3\x9C" "ber Stra\xC3\x9F" "e",
    "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80!",
    "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82",
    "\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF\xE4\xB8\x96\xE7\x95\x8C \xE3\x82\xAB\xE3\x82\xBF\xE3\x82\xAB\xE3\x83\x8A",
    "\xEC\x95\x88\xEB\x85\x95\xED\x95\x98\xEC\x84\xB8\xEC\x9A\x94 \xEC\x84\xB8\xEA\xB3\x84",
    "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xD8\xA8\xD8\xA7\xD9\x84\xD8\xB9\xD8\xA7\xD9\x84\xD9\x85",
    "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D \xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",
    "\xE0\xB8\xAA\xE0\xB8\xA7\xE0\xB8\xB1\xE0\xB8\xAA\xE0\xB8\x94\xE0\xB8\xB5\xE0\xB8\x84\xE0\xB8\xA3\xE0\xB8\xB1\xE0\xB8\x9A",
    "emoji \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 \xF0\x9F\x98\x80\xF0\x9F\x98\x80",
    "combining e\xCC\x81 a\xCC\x8A\xCC\x81 \xEF\xAC\x81 nbsp\xC2\xA0x line\xE2\x80\xA8sep bom\xEF\xBB\xBF",
    "max \xF4\x8F\xBF\xBF nonchar \xEF\xBF\xBF \xEF\xBF\xBE replacement \xEF\xBF\xBD",
    "\x01\x02\x1F\x7F control \x1B[0m",
    "<|endoftext|> is not special unless allowed <|endofprompt|>",
    "<|endoftext|><|endoftext|>",
    "<|endoftext|",
    "<<||endoftext|>>",
    "http://example.com/path/to/file.html?q=1&r=two#frag",
    "ALLCAPS WORDS and MixedCase CamelCaseWords iPhone",
    "\xC2\xB2\xC2\xB3\xC2\xBD \xD9\xA1\xD9\xA2\xD9\xA3 \xE2\x85\xA0\xE2\x85\xA1 \xEF\xBC\x91\xEF\xBC\x92",
};

static void test_fixed_texts(void) {
    st_error err;
    check_opts o = {NULL, 0, 1, 1, 0};
    for (int e = 0; e < N_ENC; e++)
        for (size_t t = 0; t < sizeof FIXED_TEXTS / sizeof FIXED_TEXTS[0]; t++) {
            char label[32];
            snprintf(label, sizeof label, "fixed text %zu", t);
            const char *s = FIXED_TEXTS[t];
            check_text(e, g_enc[e], &g_ref[e], g_pt[e], (const uint8_t *)s, strlen(s), &o, label);
        }
    /* a NUL byte inside the text is text */
    for (int e = 0; e < N_ENC; e++) check_text(e, g_enc[e], &g_ref[e], g_pt[e], (const uint8_t *)"a\0b\0\0 c", 7, &o, "NULs");
    /* NULL text with length 0 (allowed by the argument checks) */
    for (int e = 0; e < N_ENC; e++) {
        size_t n = 99;
        uint32_t id;
        CHECK(CHECKED(err, st_encode(g_enc[e], NULL, 0, NULL, 0, &id, NULL, 1, &n, &err)) == ST_OK && n == 0,
              "%s: encode(NULL, 0)", INFOS[e].name);
        CHECK(CHECKED(err, st_encode_count(g_enc[e], NULL, 0, NULL, &n, &err)) == ST_OK && n == 0, "%s: count(NULL, 0)",
              INFOS[e].name);
    }
    /* argument checks */
    st_encoding *enc = g_enc[O200K];
    size_t n;
    uint32_t ids[4];
    CHECK(CHECKED(err, st_encode(NULL, "a", 1, NULL, 0, ids, NULL, 4, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "encode(NULL enc)");
    CHECK(CHECKED(err, st_encode(enc, "a", 1, NULL, 0, ids, NULL, 4, NULL, &err)) == ST_ERR_INVALID_ARGUMENT,
          "encode(NULL n_ids)");
    CHECK(CHECKED(err, st_encode(enc, NULL, 1, NULL, 0, ids, NULL, 4, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "encode(NULL text, 1)");
    CHECK(CHECKED(err, st_encode(enc, "a", 1, NULL, 0, NULL, NULL, 4, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "encode(NULL ids, 4)");
    CHECK(CHECKED(err, st_encode(enc, "a", 1, &(st_special_policy){.allowed = NULL, .n_allowed = 1}, 0, ids, NULL, 4,
                                 &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "encode(NULL allowed, 1)");
    CHECK(CHECKED(err, st_decode(NULL, ids, 0, NULL, 0, &n, &err)) == ST_ERR_INVALID_ARGUMENT, "decode(NULL enc)");
    CHECK(CHECKED(err, st_decode(enc, NULL, 1, NULL, 0, &n, &err)) == ST_ERR_INVALID_ARGUMENT, "decode(NULL ids, 1)");
    CHECK(CHECKED(err, st_decode(enc, ids, 0, NULL, 0, NULL, &err)) == ST_ERR_INVALID_ARGUMENT, "decode(NULL out_len)");
    CHECK(CHECKED(err, st_decode(enc, NULL, 0, NULL, 0, &n, &err)) == ST_OK && n == 0, "decode of nothing");
}

/* A character that is split over several tokens: every token starts in that character. */
static void test_char_starts_inside_characters(void) {
    st_error err;
    /* r50k has no token for most CJK characters: they are byte tokens */
    const char *s = "a\xE4\xB8\x80\xF0\x9F\x98\x80z";
    uint32_t ids[16];
    size_t cs[16], n = 0;
    st_status st = CHECKED(err, st_encode(g_enc[0], s, strlen(s), NULL, ST_OFFSETS_CODEPOINTS, ids, cs, 16, &n, &err));
    CHECK(st == ST_OK && n >= 4, "r50k: %s", "encode of a CJK and an emoji");
    size_t pos = 0;
    int ok = 1;
    for (size_t k = 0; k < n && st == ST_OK; k++) {
        const uint8_t *p;
        size_t l;
        CHECKED(err, st_token_bytes(g_enc[0], ids[k], &p, &l, &err));
        /* bytes: a [0], U+4E00 [1,4), U+1F600 [4,8), z [8]: code points 0, 1, 2, 3 */
        size_t want = pos == 0 ? 0 : pos < 4 ? 1 : pos < 8 ? 2 : 3;
        ok &= cs[k] == want;
        pos += l;
    }
    CHECK(ok, "r50k: char_starts of tokens inside a character are that character's offset");
}

static void fill_run(uint8_t *b, size_t n, const char *unit) {
    size_t ul = strlen(unit);
    for (size_t i = 0; i + ul <= n; i += ul) memcpy(b + i, unit, ul);
    for (size_t i = n - n % ul; i < n; i++) b[i] = ' '; /* complete the length with spaces */
}

static void test_long_runs(void) {
    static const char *units[] = {"a", " ", "0", "\n", "!", "ab", "\xC3\xA9", "\xE4\xBD\xA0", "\xF0\x9F\x98\x80",
                                  "\r\n", "a ", "\t", "x\xCC\x81"};
    static const size_t sizes[] = {1,   2,   3,    7,    8,    9,    15,   16,    17,   31,
                                   255, 256, 257, 258, 300, 1000, 4096, 8191, 8192, 8193, 16384, 65536};
    size_t max_ref = 4096;                 /* the reference's merge is quadratic */
    size_t max_size = g_big ? 65536 : 16384; /* the sizes below 1 MB */
    uint8_t *buf = (uint8_t *)xmalloc((1 << 20) + 8);
    for (int e = 0; e < N_ENC; e++)
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                size_t n = sizes[z];
                if (n < strlen(units[u]) || n > max_size) continue;
                fill_run(buf, n, units[u]);
                check_opts o = {NULL, 0, n <= max_ref, n <= 8192, 0};
                char label[64];
                snprintf(label, sizeof label, "run of unit %zu x %zu bytes", u, n);
                check_text(e, g_enc[e], &g_ref[e], g_pt[e], buf, n, &o, label);
            }
            /* 1 MB: every unit with ST_ENCODE_BIG, else a letter, a space and a digit on o200k */
            int big = g_big || (e == O200K && (u == 0 || u == 1 || u == 2));
            if (big) {
                size_t n = 1 << 20;
                fill_run(buf, n, units[u]);
                check_opts o = {NULL, 0, 0, 0, 1};
                char label[64];
                snprintf(label, sizeof label, "run of unit %zu x 1 MB", u);
                check_text(e, g_enc[e], NULL, NULL, buf, n, &o, label);
            }
        }
    free(buf);
}

static void test_random_texts(void) {
    uint64_t r = g_seed * 0x9E3779B97F4A7C15ull + 1;
    int count = g_big ? 1500 : 250;
    uint8_t *buf = (uint8_t *)xmalloc(4096);
    for (int e = 0; e < N_ENC; e++) {
        check_opts o = {NULL, 0, 1, 1, 0};
        for (int i = 0; i < count; i++) {
            size_t n = gen_text(&r, buf, i % 10 == 0 ? 4096 : 400, 1);
            char label[64];
            snprintf(label, sizeof label, "random text %d (seed %llu)", i, (unsigned long long)g_seed);
            check_text(e, g_enc[e], &g_ref[e], g_pt[e], buf, n, &o, label);
        }
        /* with every special allowed */
        o.allowed = INFOS[e].special_id;
        o.n_allowed = (size_t)INFOS[e].n_special;
        for (int i = 0; i < count / 2; i++) {
            size_t n = gen_text(&r, buf, 400, 1);
            char label[64];
            snprintf(label, sizeof label, "random text with specials %d", i);
            check_text(e, g_enc[e], &g_ref[e], g_pt[e], buf, n, &o, label);
        }
    }
    /* texts of 8192 bytes or more use the per-call piece cache: random repetitive words */
    uint8_t *big = (uint8_t *)xmalloc(70000);
    for (int e = 0; e < N_ENC; e++)
        for (int i = 0; i < 3; i++) {
            size_t n = 0;
            while (n + 400 < 70000) n += gen_text(&r, big + n, 400, 0);
            /* plus repeated words, some the cache keeps (not one token) */
            static const char *w[] = {" supercalifragilistic", " antidisestablishment", " xqzv", " tokenizers",
                                      " \xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C"};
            for (int k = 0; n + 40 < 70000 && k < 1500; k++) {
                const char *x = w[rng_below(&r, 5)];
                memcpy(big + n, x, strlen(x));
                n += strlen(x);
            }
            check_opts o = {NULL, 0, 1, 0, 0};
            char label[64];
            snprintf(label, sizeof label, "cached random text %d", i);
            check_text(e, g_enc[e], &g_ref[e], g_pt[e], big, n, &o, label);
        }
    free(big);
    free(buf);
}

/* st_encode_piece: any bytes (UTF-8 or not) merged as one piece, against the reference merge;
 * arguments and the size query. */
static void test_encode_piece(void) {
    uint64_t r = g_seed * 0x2545F4914F6CDD1Dull + 7;
    uint8_t *buf = (uint8_t *)xmalloc(4096 + 8);
    uint32_t *ids = (uint32_t *)xmalloc(4096 * 4), *want = (uint32_t *)xmalloc(4096 * 4);
    st_error e;
    for (int k = 0; k < N_ENC; k++) {
        for (int i = 0; i < 300; i++) {
            size_t n = 1 + rng_below(&r, i % 10 == 0 ? 3000 : 200);
            int kind = i % 4;
            for (size_t j = 0; j < n; j++)
                buf[j] = kind == 0 ? (uint8_t)rng_below(&r, 256)                       /* not UTF-8 */
                         : kind == 1 ? (uint8_t)"ab \x80\xff"[rng_below(&r, 5)]
                         : kind == 2 ? (uint8_t)(j % 2 ? 'b' : 'a')
                                     : (uint8_t)" "[0];
            size_t got = 0;
            st_status st = st_encode_piece(g_enc[k], buf, n, ids, n, &got, &e);
            size_t m = ref_merge(&g_ref[k], buf, n, want);
            CHECK(st == ST_OK && got == m && memcmp(ids, want, m * 4) == 0,
                  "st_encode_piece of %zu bytes (kind %d, case %d): status %d, %zu ids, reference %zu", n, kind, i,
                  st, got, m);
        }
        size_t got = 99;
        CHECK(st_encode_piece(g_enc[k], buf, 0, NULL, 0, &got, &e) == ST_OK && got == 0, "empty piece");
        memcpy(buf, "hello world", 11);
        CHECK(st_encode_piece(g_enc[k], buf, 11, NULL, 0, &got, &e) == ST_ERR_BUFFER_TOO_SMALL && got >= 2,
              "size query: %zu", got);
        CHECK(st_encode_piece(NULL, buf, 11, ids, 11, &got, &e) == ST_ERR_INVALID_ARGUMENT, "NULL encoding");
        CHECK(st_encode_piece(g_enc[k], NULL, 11, ids, 11, &got, &e) == ST_ERR_INVALID_ARGUMENT, "NULL bytes");
    }
    free(buf);
    free(ids);
    free(want);
}

static size_t encode_ids(const st_encoding *enc, const char *s, const uint32_t *allowed, size_t na, uint32_t *ids,
                         size_t cap, st_status *st) {
    size_t n = 0;
    st_error err;
    st_special_policy policy = {.allowed = allowed, .n_allowed = na};
    *st = CHECKED(err, st_encode(enc, s, strlen(s), &policy, 0, ids, NULL, cap, &n, &err));
    return n;
}

static void test_specials(void) {
    st_encoding *enc = g_enc[O200K];
    uint32_t ids[256], ids2[256];
    st_status st;
    st_error err;
    const uint32_t eot = 199999, eop = 200018;
    uint32_t both[2] = {eot, eop};

    /* allowed: one id each where the text occurs */
    const char *t = "hello<|endoftext|> world<|endofprompt|>x<|endoftext|>";
    size_t n = encode_ids(enc, t, &eot, 1, ids, 256, &st);
    size_t c_eot = 0, c_eop = 0;
    for (size_t k = 0; k < n; k++) {
        c_eot += ids[k] == eot;
        c_eop += ids[k] == eop;
    }
    CHECK(st == ST_OK && c_eot == 2 && c_eop == 0, "o200k: endoftext allowed: %zu x eot, %zu x eop", c_eot, c_eop);
    n = encode_ids(enc, t, both, 2, ids, 256, &st);
    c_eot = c_eop = 0;
    for (size_t k = 0; k < n; k++) {
        c_eot += ids[k] == eot;
        c_eop += ids[k] == eop;
    }
    CHECK(st == ST_OK && c_eot == 2 && c_eop == 1, "o200k: both allowed: %zu x eot, %zu x eop", c_eot, c_eop);
    /* the pieces around a special are encoded as separate texts */
    {
        size_t a = encode_ids(enc, "hello", NULL, 0, ids2, 256, &st);
        size_t b = encode_ids(enc, " world", NULL, 0, ids2 + a, 256 - a, &st);
        size_t c = encode_ids(enc, "x", NULL, 0, ids2 + a + b, 256 - a - b, &st);
        uint32_t want[64];
        size_t w = 0;
        memcpy(want + w, ids2, a * 4);
        w += a;
        want[w++] = eot;
        memcpy(want + w, ids2 + a, b * 4);
        w += b;
        want[w++] = eop;
        memcpy(want + w, ids2 + a + b, c * 4);
        w += c;
        want[w++] = eot;
        CHECK(n == w && memcmp(ids, want, w * 4) == 0, "o200k: specials split the text into separate encodes");
    }
    /* none allowed: ordinary text, no special id */
    n = encode_ids(enc, t, NULL, 0, ids, 256, &st);
    int any = 0;
    for (size_t k = 0; k < n; k++) any |= ids[k] == eot || ids[k] == eop;
    CHECK(st == ST_OK && !any && n > 4, "o200k: no specials allowed: special ids emitted");
    /* the allowed order does not matter; duplicates are fine */
    uint32_t rev[3] = {eop, eot, eop};
    size_t n2 = encode_ids(enc, t, rev, 3, ids2, 256, &st);
    n = encode_ids(enc, t, both, 2, ids, 256, &st);
    CHECK(st == ST_OK && n2 == n && memcmp(ids, ids2, n * 4) == 0, "o200k: allowed order changes the ids");
    /* only a special */
    n = encode_ids(enc, "<|endoftext|>", &eot, 1, ids, 256, &st);
    CHECK(st == ST_OK && n == 1 && ids[0] == eot, "o200k: the special alone");
    /* char_starts of specials */
    {
        const char *u = "\xC3\xA9<|endoftext|>\xE4\xBD\xA0<|endofprompt|>";
        size_t cs[32];
        st = CHECKED(err, st_encode(enc, u, strlen(u), &(st_special_policy){.allowed = both, .n_allowed = 2},
                                    ST_OFFSETS_CODEPOINTS, ids, cs, 32, &n, &err));
        int found = 0;
        for (size_t k = 0; k < n; k++) {
            if (ids[k] == eot) found += cs[k] == 1;
            if (ids[k] == eop) found += cs[k] == 15;
        }
        CHECK(st == ST_OK && found == 2, "o200k: char_starts of special tokens");
    }
    /* an id that is not a special: ST_ERR_INVALID_ARGUMENT, offset = its index in allowed */
    struct {
        uint32_t allowed[4];
        size_t n, want;
    } bad[] = {
        {{eot, 12345}, 2, 1},          /* an ordinary token */
        {{200019}, 1, 0},              /* past the vocabulary */
        {{eot, eop, 199998}, 3, 2},    /* the gap before endoftext */
        {{200000, eot}, 2, 0},         /* a gap between the specials */
        {{eot, 0xFFFFFFFFu}, 2, 1},    /* ST_NO_TOKEN itself */
        {{eop, eot, eop, 0}, 4, 3},    /* id 0 */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t cnt = 5;
        st = CHECKED(err,
                     st_encode(enc, "abc", 3, &(st_special_policy){.allowed = bad[k].allowed, .n_allowed = bad[k].n}, 0,
                               ids, NULL, 256, &n, &err));
        CHECK(st == ST_ERR_INVALID_ARGUMENT && error_at(&err, ST_UNIT_INDEX, bad[k].want),
              "o200k: bad allowed set %zu: status %d offset %zu, want %zu", k, st, (size_t)err.offset, bad[k].want);
        st = CHECKED(err, st_encode_count(enc, "abc", 3,
                                          &(st_special_policy){.allowed = bad[k].allowed, .n_allowed = bad[k].n}, &cnt,
                                          &err));
        CHECK(st == ST_ERR_INVALID_ARGUMENT && error_at(&err, ST_UNIT_INDEX, bad[k].want),
              "o200k: count, bad allowed set %zu: %d at %zu", k, st, (size_t)err.offset);
        /* also on the empty text */
        st = CHECKED(err, st_encode(enc, "", 0, &(st_special_policy){.allowed = bad[k].allowed, .n_allowed = bad[k].n},
                                    0, ids, NULL, 256, &n, &err));
        CHECK(st == ST_ERR_INVALID_ARGUMENT && error_at(&err, ST_UNIT_INDEX, bad[k].want),
              "o200k: bad allowed set %zu on empty text: %d", k, st);
    }
    /* cl100k: every special */
    {
        const enc_info *in = &INFOS[CL100K];
        char text[512] = "";
        for (int k = 0; k < in->n_special; k++) {
            strcat(text, "x ");
            strcat(text, in->special[k]);
        }
        n = encode_ids(g_enc[CL100K], text, in->special_id, (size_t)in->n_special, ids, 256, &st);
        size_t found = 0;
        for (size_t k = 0; k < n; k++)
            for (int q = 0; q < in->n_special; q++) found += ids[k] == in->special_id[q];
        CHECK(st == ST_OK && found == (size_t)in->n_special, "cl100k: every special found once (%zu)", found);
        uint32_t one = 100256;
        st = CHECKED(err, st_encode(g_enc[CL100K], "x", 1, &(st_special_policy){.allowed = &one, .n_allowed = 1}, 0,
                                    ids, NULL, 256, &n, &err));
        CHECK(st == ST_ERR_INVALID_ARGUMENT && error_at(&err, ST_UNIT_INDEX, 0),
              "cl100k: allowed gap id 100256 rejected");
    }
    /* r50k/p50k */
    for (int e = 0; e < 2; e++) {
        uint32_t id = 50256;
        n = encode_ids(g_enc[e], "a<|endoftext|>b", &id, 1, ids, 256, &st);
        CHECK(st == ST_OK && n == 3 && ids[1] == 50256, "%s: endoftext", INFOS[e].name);
    }
}

/* A small synthetic vocabulary: the 256 bytes, some merges, specials chosen by the caller. */
typedef struct small_vocab {
    char *ranks, *specials;
    size_t ranks_len, specials_len;
} small_vocab;

static const char *SMALL_MERGES[] = {"th", "he", "in", "er", "an", " t", " a", "the", " the", "ing", "on", "at",
                                     "en", "es", "ed", "or", " w", "wo", "rl", "ld", "orld", "world", " world", "ll",
                                     "llo", "hello", "<a", "<a>", "aa", "aaaa", "  ", "    ", "\n\n", "12", "123",
                                     "\xC3\xA9", "\xE4\xBD", "\xE4\xBD\xA0", "x y", "ab"};

static small_vocab make_small(const char *const *specials, const uint32_t *special_ids, size_t n_specials) {
    small_vocab s;
    size_t nm = sizeof SMALL_MERGES / sizeof SMALL_MERGES[0];
    size_t n = 256 + nm;
    const char **toks = (const char **)xmalloc(n * sizeof(char *));
    size_t *lens = (size_t *)xmalloc(n * sizeof(size_t));
    uint32_t *ids = (uint32_t *)xmalloc(n * 4);
    static char bytes[256];
    for (int b = 0; b < 256; b++) {
        bytes[b] = (char)b;
        toks[b] = &bytes[b];
        lens[b] = 1;
        ids[b] = (uint32_t)b;
    }
    for (size_t k = 0; k < nm; k++) {
        toks[256 + k] = SMALL_MERGES[k];
        lens[256 + k] = strlen(SMALL_MERGES[k]);
        ids[256 + k] = (uint32_t)(256 + k);
    }
    s.ranks = make_rank_text(toks, lens, ids, n, &s.ranks_len);
    size_t slens[8];
    for (size_t k = 0; k < n_specials; k++) slens[k] = strlen(specials[k]);
    s.specials = make_rank_text(specials, slens, special_ids, n_specials, &s.specials_len);
    free(toks);
    free(lens);
    free(ids);
    return s;
}

static void free_small(small_vocab *s) {
    free(s->ranks);
    free(s->specials);
}

#define SMALL_FIRST_SPECIAL 400

static void test_special_longest_match(void) {
    st_error err;
    const char *specials[] = {"<a>", "<a>b", "<a>bc", "</a>"};
    uint32_t sids[] = {400, 401, 402, 403};
    small_vocab sv = make_small(specials, sids, 4);
    st_encoding *enc = NULL;
    st_status st = CHECKED(err, st_encoding_new_tiktoken(sv.ranks, sv.ranks_len, sv.specials, sv.specials_len,
                                                         plain_pretokenizer(ST_PATTERN_O200K), NULL, &enc, &err));
    CHECK(st == ST_OK, "small vocabulary with specials: %d", st);
    if (st != ST_OK) {
        free_small(&sv);
        return;
    }
    CHECK(st_encoding_n_vocab(enc) == 404 && st_encoding_n_special(enc) == 4, "small vocabulary: n_vocab %u",
          st_encoding_n_vocab(enc));
    uint32_t ids[64];
    size_t n;
    uint32_t all[4] = {400, 401, 402, 403}, two[2] = {401, 400}, one = 400;
    n = encode_ids(enc, "x<a>bcd", all, 4, ids, 64, &st);
    CHECK(st == ST_OK && n == 3 && ids[0] == 'x' && ids[1] == 402 && ids[2] == 'd', "longest special wins (%zu ids)", n);
    n = encode_ids(enc, "x<a>bcd", two, 2, ids, 64, &st);
    CHECK(st == ST_OK && n == 4 && ids[0] == 'x' && ids[1] == 401 && ids[2] == 'c' && ids[3] == 'd',
          "longest allowed special wins over a shorter one (%zu ids)", n);
    n = encode_ids(enc, "x<a>bcd", &one, 1, ids, 64, &st);
    CHECK(st == ST_OK && n >= 3 && ids[1] == 400, "only <a> allowed: it matches, the rest is text");
    n = encode_ids(enc, "<a><a></a>", all, 4, ids, 64, &st);
    CHECK(st == ST_OK && n == 3 && ids[0] == 400 && ids[1] == 400 && ids[2] == 403, "adjacent specials");
    /* "<a" is an ordinary token too; without specials allowed "<a>" is plain text */
    n = encode_ids(enc, "<a>", NULL, 0, ids, 64, &st);
    CHECK(st == ST_OK && n == 2 && ids[0] == 256 + 26 && ids[1] == '>',
          "\"<a>\" with no specials allowed: ordinary tokens \"<a\" \">\" (%zu ids)", n);
    st_encoding_free(enc);
    free_small(&sv);
}

/* The search for special strings in a text costs steps bounded by the length of what matches
 * times log2 of the number of specials, not the number of specials: trying each one at every
 * '<' made a text of '<' on o200k_harmony (1,091 specials) 265 times slower than plain text.
 * Counted work of texts of '<' and of an unfinished special, allowed all and disallowed all
 * (the text holds none), with 256 and with 4,096 specials: 16 times the specials may not cost
 * more than twice the work (log2: 12 / 8 steps; one try per special: 16 times). */
static void test_special_search_work(void) {
    enum { FEW = 256, MANY = 4096, TEXT = 1 << 14 };
    static char names[MANY][24];
    static const char *specials[MANY];
    static size_t lens[MANY];
    static uint32_t sids[MANY];
    for (size_t k = 0; k < MANY; k++) {
        lens[k] = (size_t)snprintf(names[k], sizeof names[k], "<|reserved_%zu|>", 200000 + k);
        specials[k] = names[k];
        sids[k] = (uint32_t)(1000 + k);
    }
    small_vocab sv = make_small(specials, sids, 0);
    uint8_t *text = (uint8_t *)xmalloc(TEXT);
    uint32_t *ids = (uint32_t *)xmalloc(TEXT * sizeof *ids);
    double work[2][2][2]; /* [few, many][text][policy] */
    for (int m = 0; m < 2; m++) {
        size_t n_spec = m ? MANY : FEW, slen = 0;
        char *stext = make_rank_text(specials, lens, sids, n_spec, &slen);
        st_encoding *enc = NULL;
        st_error err;
        st_status st = CHECKED(err, st_encoding_new_tiktoken(sv.ranks, sv.ranks_len, stext, slen,
                                                             plain_pretokenizer(ST_PATTERN_O200K), NULL, &enc, &err));
        CHECK(st == ST_OK, "%zu specials: %d", n_spec, st);
        for (int t = 0; t < 2 && enc; t++) {
            static const char unfinished[] = "<|reserved_2000";
            for (size_t i = 0; i < TEXT; i++) text[i] = t ? (uint8_t)unfinished[i % (sizeof unfinished - 1)] : '<';
            for (int p = 0; p < 2; p++) {
                st_special_policy policy = {NULL, 0, NULL, 0, p ? ST_SPECIAL_ALLOW_ALL : ST_SPECIAL_DISALLOW_REST,
                                            NULL, NULL};
                size_t count = 0;
                st__test_work_take();
                st = CHECKED(err, st_encode(enc, (const char *)text, TEXT, &policy, 0, ids, NULL, TEXT, &count, &err));
                work[m][t][p] = (double)st__test_work_take();
                CHECK(st == ST_OK && count > 0, "%zu specials, text %d, policy %d: %d", n_spec, t, p, st);
            }
        }
        st_encoding_free(enc);
        free(stext);
    }
    for (int t = 0; t < 2; t++)
        for (int p = 0; p < 2; p++) {
            printf("    special search, %s, %s: work %.0f with %d specials, %.0f with %d\n",
                   t ? "unfinished specials" : "'<' only", p ? "allowed all" : "disallowed all", work[0][t][p], FEW,
                   work[1][t][p], MANY);
            CHECK(work[1][t][p] <= 2.0 * work[0][t][p], "the special search's work grows with the number of specials: "
                  "%.0f with %d, %.0f with %d", work[0][t][p], FEW, work[1][t][p], MANY);
        }
    free(text);
    free(ids);
    free_small(&sv);
}

/* A special token whose bytes are not valid UTF-8 on their own (here one byte 0xC3, the first
 * byte of "é") once matched inside a character and made the scanner read past the text; the
 * core now rejects such specials at load (and matches image specials on boundaries only). */
static void test_special_not_utf8(void) {
    const char *bad_specials[][1] = {{"\xC3"}, {"\xA9"}, {"a\xC3"}, {"\xA9z"}};
    for (int v = 0; v < 4; v++) {
        uint32_t sid = 400;
        small_vocab sv = make_small(bad_specials[v], &sid, 1);
        st_encoding *enc = NULL;
        st_error err;
        st_status st = CHECKED(err, st_encoding_new_tiktoken(sv.ranks, sv.ranks_len, sv.specials, sv.specials_len,
                                                             plain_pretokenizer(ST_PATTERN_O200K), NULL, &enc, &err));
        if (st == ST_ERR_MALFORMED_MODEL) { /* rejecting such a special at load is a fix too */
            CHECK(err.input == 1 && error_at(&err, ST_UNIT_BYTE, 0),
                  "non-UTF-8 special rejected: offset %zu in input %u", (size_t)err.offset, err.input);
        } else {
            CHECK(st == ST_OK, "non-UTF-8 special: load status %d", st);
            /* the text exactly sized, so ASan sees a read past it */
            static const char *texts[] = {"\xC3\xA9", "a\xC3\xA9", "\xC3\xA9z", "xa\xC3\xA9zy"};
            for (int t = 0; t < 4 && st == ST_OK; t++) {
                size_t len = strlen(texts[t]);
                char *s = (char *)xmalloc(len);
                memcpy(s, texts[t], len);
                uint32_t ids[16];
                size_t n = 0;
                st_status se =
                    CHECKED(err, st_encode(enc, s, len, &(st_special_policy){.allowed = &sid, .n_allowed = 1}, 0, ids,
                                           NULL, 16, &n, &err));
                uint8_t out[32];
                size_t ol = 0;
                st_status sd = se == ST_OK ? CHECKED(err, st_decode(enc, ids, n, out, sizeof out, &ol, &err)) : ST_OK;
                CHECK(se == ST_OK && sd == ST_OK && ol == len && memcmp(out, s, len) == 0,
                      "non-UTF-8 special %d on text %d: encode %d, decode gives %zu bytes of %zu", v, t, se, ol, len);
                free(s);
            }
            st_encoding_free(enc);
        }
        free_small(&sv);
    }
}

static void test_invalid_utf8(void) {
    struct {
        const char *s;
        size_t len, off;
    } cases[] = {
        {"ab\xFF", 3, 2},
        {"\xC3", 1, 0},
        {"abc\xED\xA0\x80", 6, 3},        /* a surrogate */
        {"\xC0\x80", 2, 0},               /* overlong NUL */
        {"x\xE0\x80\xAF", 4, 1},          /* overlong '/' */
        {"xy\xF4\x90\x80\x80", 6, 2},     /* above U+10FFFF */
        {"hello \xF0\x9F\x98", 9, 6},     /* truncated at the end */
        {"\xE4\xBD\xA0\xE4\xBD", 5, 3},   /* truncated CJK */
        {"ok\x80", 3, 2},                 /* lone continuation */
        {"caf\xC3\xA9 \xC3(", 8, 6},      /* bad continuation */
        {"<|endoftext|>\xFE", 14, 13},    /* after a special */
        {"\xF8\x88\x80\x80\x80", 5, 0},   /* 5-byte form */
    };
    for (int e = 0; e < N_ENC; e++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            uint32_t ids[32];
            size_t n = 0, cnt = 0;
            st_error err, err2, verr;
            st_special_policy policy = {.allowed = INFOS[e].special_id, .n_allowed = (size_t)INFOS[e].n_special};
            st_status st =
                CHECKED(err, st_encode(g_enc[e], cases[k].s, cases[k].len, &policy, 0, ids, NULL, 32, &n, &err));
            st_status st2 = CHECKED(err2, st_encode_count(g_enc[e], cases[k].s, cases[k].len, NULL, &cnt, &err2));
            CHECKED(verr, st_utf8_validate(cases[k].s, cases[k].len, &verr));
            CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, cases[k].off) &&
                      st2 == ST_ERR_INVALID_UTF8 && error_at(&err2, ST_UNIT_BYTE, cases[k].off) &&
                      error_at(&verr, ST_UNIT_BYTE, cases[k].off),
                  "%s: invalid UTF-8 case %zu: status %d offset %zu, count %d offset %zu; want offset %zu",
                  INFOS[e].name, k, st, (size_t)err.offset, st2, (size_t)err2.offset, cases[k].off);
        }
    /* a long valid prefix */
    size_t len = 100000;
    char *s = (char *)xmalloc(len);
    memset(s, 'a', len);
    s[len - 3] = (char)0xE4;
    s[len - 2] = (char)0xBD;
    size_t n;
    st_error err;
    st_status st = CHECKED(err, st_encode_count(g_enc[O200K], s, len, NULL, &n, &err));
    CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, len - 3), "long text, bad at the end: %d at %zu",
          st, (size_t)err.offset);
    free(s);
}

static void test_decode(void) {
    st_encoding *enc = g_enc[CL100K];
    uint8_t out[256];
    size_t n = 0;
    st_error err;
    uint32_t ids[] = {0, 1, 100256, 5};
    st_status st = CHECKED(err, st_decode(enc, ids, 4, out, sizeof out, &n, &err));
    CHECK(st == ST_ERR_INVALID_TOKEN && error_at(&err, ST_UNIT_INDEX, 2), "cl100k: decode with a gap id: %d at %zu", st,
          (size_t)err.offset);
    uint32_t ids2[] = {100277};
    st = CHECKED(err, st_decode(enc, ids2, 1, out, sizeof out, &n, &err));
    CHECK(st == ST_ERR_INVALID_TOKEN && error_at(&err, ST_UNIT_INDEX, 0), "cl100k: decode id n_vocab: %d at %zu", st,
          (size_t)err.offset);
    uint32_t ids3[] = {10, 20, 30, 0xFFFFFFFFu};
    st = CHECKED(err, st_decode(enc, ids3, 4, out, sizeof out, &n, &err));
    CHECK(st == ST_ERR_INVALID_TOKEN && error_at(&err, ST_UNIT_INDEX, 3), "cl100k: decode 0xFFFFFFFF: %d at %zu", st,
          (size_t)err.offset);
    uint32_t ids4[] = {200000, 1};
    st = CHECKED(err, st_decode(g_enc[O200K], ids4, 2, out, sizeof out, &n, &err));
    CHECK(st == ST_ERR_INVALID_TOKEN && error_at(&err, ST_UNIT_INDEX, 0), "o200k: decode a gap id: %d at %zu", st,
          (size_t)err.offset);
    /* a special decodes to its text */
    uint32_t ids5[] = {100257, 100276};
    st = CHECKED(err, st_decode(enc, ids5, 2, out, sizeof out, &n, &err));
    CHECK(st == ST_OK && n == 28 && memcmp(out, "<|endoftext|><|endofprompt|>", 28) == 0, "cl100k: decode specials");
    /* size query and small buffers: nothing past cap */
    const char *text = "Hello, world! This is a test of the size query.";
    uint32_t t[64];
    size_t nt = 0;
    st = CHECKED(err, st_encode(enc, text, strlen(text), NULL, 0, t, NULL, 64, &nt, &err));
    size_t q = 0;
    st = CHECKED(err, st_decode(enc, t, nt, NULL, 0, &q, &err));
    CHECK(st == ST_ERR_BUFFER_TOO_SMALL && q == strlen(text), "decode size query: %d, %zu", st, q);
    for (size_t cap = 1; cap < strlen(text); cap += 3) {
        memset(out, 0xEE, sizeof out);
        st = CHECKED(err, st_decode(enc, t, nt, out, cap, &q, &err));
        int clean = 1;
        for (size_t k = cap; k < sizeof out; k++) clean &= out[k] == 0xEE;
        CHECK(st == ST_ERR_BUFFER_TOO_SMALL && q == strlen(text) && clean, "decode with cap %zu: %d %zu, clean %d", cap,
              st, q, clean);
    }
    st = CHECKED(err, st_decode(enc, t, nt, out, strlen(text), &q, &err));
    CHECK(st == ST_OK && q == strlen(text), "decode with cap = exact size");
}

/* ---- images --------------------------------------------------------------------------------- */

static uint64_t *save_image(const st_encoding *enc, size_t *size) {
    st_error err;
    size_t sz = 0;
    st_status st = CHECKED(err, st_encoding_save_image(enc, NULL, 0, &sz, &err));
    CHECK(st == ST_ERR_BUFFER_TOO_SMALL && sz > 64, "save_image size query: %d, %zu", st, sz);
    uint64_t *img = (uint64_t *)xmalloc((sz + 7) / 8 * 8 + 8);
    memset(img, 0xCD, (sz + 7) / 8 * 8 + 8);
    size_t sz2 = 0;
    st = CHECKED(err, st_encoding_save_image(enc, (uint8_t *)img, sz - 1, &sz2, &err));
    int untouched = 1;
    for (size_t k = 0; k < sz; k++) untouched &= ((uint8_t *)img)[k] == 0xCD;
    CHECK(st == ST_ERR_BUFFER_TOO_SMALL && sz2 == sz && untouched, "save_image with cap size-1: %d, untouched %d", st,
          untouched);
    st = CHECKED(err, st_encoding_save_image(enc, (uint8_t *)img, sz, &sz2, &err));
    CHECK(st == ST_OK && sz2 == sz, "save_image: %d", st);
    *size = sz;
    return img;
}

/* Random pieces for the backtracking encoder (pipeline.c sends pieces longer than 10 bytes whose
 * last character is CJK, kana or Hangul there): letters of several scripts run together with
 * no space, so o200k keeps them in one piece, ending in CJK; some runs are long enough to leave
 * the stack buffers. */
static size_t gen_cjk_text(uint64_t *r, uint8_t *o, size_t max) {
    size_t n = 0;
    while (n + 8 < max) {
        int run = 1 + (int)rng_below(r, rng_below(r, 8) == 0 ? 900 : 12);
        for (int k = 0; k < run && n + 8 < max; k++) {
            uint32_t cp;
            switch (rng_below(r, 12)) {
            case 0: cp = 'a' + rng_below(r, 26); break;
            case 1: cp = 0x400 + rng_below(r, 0x100); break;
            case 2: cp = 0x3040 + rng_below(r, 0xC0); break;
            case 3: cp = 0xAC00 + rng_below(r, 0x2BA4); break;
            case 4: cp = 0x3000 + rng_below(r, 0x40); break;
            default: cp = 0x4E00 + rng_below(r, rng_below(r, 2) ? 0x600 : 0x5200); break;
            }
            n += put_cp(o + n, cp);
        }
        if (n + 8 < max) o[n++] = " ,\n"[rng_below(r, 3)];
    }
    return n;
}

/* The backtracking encoder against the reference merge, and against the merge loop of the same
 * vocabulary loaded from an image (which never uses backtracking). */
static void test_backtrack(void) {
    st_error err;
    uint64_t r = g_seed * 0x2545F4914F6CDD1Dull + 7;
    int count = g_big ? 400 : 60;
    size_t max = 6000;
    uint8_t *buf = (uint8_t *)xmalloc(max);
    uint32_t *a = (uint32_t *)xmalloc(max * 4), *b = (uint32_t *)xmalloc(max * 4);
    for (int e = 0; e < N_ENC; e++) {
        if (!g_big && e == 1) continue; /* p50k is r50k plus a few tokens */
        size_t sz = 0;
        uint64_t *img = save_image(g_enc[e], &sz);
        st_encoding *ie = NULL;
        CHECK(CHECKED(err, st_encoding_from_image(img, sz, NULL, &ie, &err)) == ST_OK, "%s: from_image", INFOS[e].name);
        check_opts o = {NULL, 0, 1, 0, 0};
        for (int i = 0; i < count && ie; i++) {
            size_t n = gen_cjk_text(&r, buf, i % 4 == 0 ? max : 300);
            char label[64];
            snprintf(label, sizeof label, "CJK pieces %d (seed %llu)", i, (unsigned long long)g_seed);
            check_text(e, g_enc[e], &g_ref[e], g_pt[e], buf, n, &o, label);
            size_t na = 0, nb = 0;
            st_status sa = CHECKED(err, st_encode(g_enc[e], (const char *)buf, n, NULL, 0, a, NULL, max, &na, &err));
            st_status sb = CHECKED(err, st_encode(ie, (const char *)buf, n, NULL, 0, b, NULL, max, &nb, &err));
            CHECK(sa == ST_OK && sb == ST_OK && na == nb && memcmp(a, b, na * 4) == 0,
                  "%s %s: rank file and image encodings differ (%zu and %zu ids)", INFOS[e].name, label, na, nb);
        }
        CHECK(st_encoding_prepare(g_enc[e]) == ST_OK, "%s: prepare", INFOS[e].name);
        CHECK(!ie || st_encoding_prepare(ie) == ST_ERR_INVALID_ARGUMENT, "%s: an image never builds the tables",
              INFOS[e].name);
        st_encoding_free(ie);
        free(img);
    }
    CHECK(st_encoding_prepare(NULL) == ST_ERR_INVALID_ARGUMENT, "prepare(NULL)");
    free(a);
    free(b);
    free(buf);
}

/* ---- merge-rules models (st_encoding_new_merges) ------------------------------------------- */

/* The reference: repeatedly join the adjacent pair whose rule comes first (leftmost among
 * equal), over the piece's symbols; rules looked up by a linear search. Returns the count. */
static size_t ref_rules(const uint32_t *merges, size_t n_merges, uint32_t base, const uint16_t *sym, size_t n,
                        uint32_t *out) {
    for (size_t k = 0; k < n; k++) out[k] = sym[k];
    size_t m = n;
    for (;;) {
        size_t best_rule = n_merges, at = 0;
        for (size_t k = 0; k + 1 < m; k++)
            for (size_t r = 0; r < best_rule; r++)
                if (merges[2 * r] == out[k] && merges[2 * r + 1] == out[k + 1]) { best_rule = r; at = k; break; }
        if (best_rule == n_merges) return m;
        out[at] = base + (uint32_t)best_rule;
        memmove(out + at + 1, out + at + 2, (m - at - 2) * sizeof *out);
        m--;
    }
}

/* Random rules over the symbols of a few characters, so that texts of those characters merge
 * a lot: each rule joins two tokens chosen among the base symbols in use and earlier rules. */
static size_t random_rules(uint64_t *r, int ube, uint32_t *merges, size_t max) {
    st_error err;
    static const char *chars[] = {"a", "b", " ", "\xC3\xA9", "\xD0\xBF", "\xE4\xB8\xAD", "\xE6\x96\x87",
                                  "\xF0\x9F\x98\x80", ".", "\n"};
    uint32_t pool[600];
    size_t np = 0, n = 0;
    for (size_t c = 0; c < sizeof chars / sizeof chars[0]; c++) {
        uint16_t sym[8];
        size_t ns = 0;
        if (ube)
            CHECKED(err, st_ube_encode_symbols(chars[c], strlen(chars[c]), sym, 8, &ns, &err));
        else for (ns = 0; chars[c][ns]; ns++) sym[ns] = (uint8_t)chars[c][ns];
        for (size_t k = 0; k < ns; k++) pool[np++] = sym[k];
    }
    uint32_t base = ube ? 512 : 256;
    while (n < max) {
        uint32_t a = pool[rng_below(r, (uint32_t)np)], b = pool[rng_below(r, (uint32_t)np)];
        int dup = 0;
        for (size_t k = 0; k < n; k++) dup |= merges[2 * k] == a && merges[2 * k + 1] == b;
        if (dup) continue;
        merges[2 * n] = a;
        merges[2 * n + 1] = b;
        pool[np++] = base + (uint32_t)n++;
    }
    return n;
}

static void test_merges(void) {
    st_error err;
    st_encoding *enc = NULL;
    /* docs/design.md §7: rules a b, c d, ab c, abc d give [ab, cd] for "abcd" */
    for (int ube = 0; ube < 2; ube++) {
        uint32_t base = ube ? 512 : 256;
        uint32_t m[8] = {'a', 'b', 'c', 'd', base, 'c', base + 2, 'd'};
        const char *sp = "PHxlbmR8Pg== 600\n"; /* <|end|> */
        st_status st = CHECKED(err, st_encoding_new_merges(ube, m, 4, sp, strlen(sp),
                                                           plain_pretokenizer(ST_PATTERN_O200K), NULL, &enc, &err));
        CHECK(st == ST_OK, "new_merges(%d): %d at %zu", ube, st, (size_t)err.offset);
        if (st != ST_OK) continue;
        uint32_t ids[16];
        size_t n = 0, cs[16];
        st = CHECKED(err, st_encode(enc, "abcd", 4, NULL, ST_OFFSETS_CODEPOINTS, ids, cs, 16, &n, &err));
        CHECK(st == ST_OK && n == 2 && ids[0] == base && ids[1] == base + 1, "rules: abcd -> %zu ids %u %u", n,
              ids[0], ids[1]);
        uint32_t allowed = 600;
        st = CHECKED(err, st_encode(enc, "abc<|end|>d", 11, &(st_special_policy){.allowed = &allowed, .n_allowed = 1},
                                    ST_OFFSETS_CODEPOINTS, ids, cs, 16, &n, &err));
        CHECK(st == ST_OK && n == 3 && ids[0] == base + 2 && ids[1] == 600 && ids[2] == 'd' && cs[1] == 3 && cs[2] == 10,
              "rules with a special: %zu ids", n);
        CHECK(st_encoding_alphabet(enc) == ube, "alphabet");
        CHECK(st_encoding_prepare(enc) == ST_ERR_INVALID_ARGUMENT, "a rules model has no tables to build");
        CHECK(st_encoding_n_vocab(enc) == 601, "n_vocab %u", st_encoding_n_vocab(enc));
        size_t sz = 0;
        CHECK(CHECKED(err, st_encoding_save_image(enc, NULL, 0, &sz, &err)) == ST_ERR_INVALID_ARGUMENT,
              "rules models have no image");
        uint16_t syms[8];
        size_t ns = 0;
        st = CHECKED(err, st_token_symbols(enc, base + 3, NULL, 0, &ns, &err));
        CHECK(st == ST_ERR_BUFFER_TOO_SMALL && ns == 4, "token_symbols size query: %d %zu", st, ns);
        st = CHECKED(err, st_token_symbols(enc, base + 3, syms, 8, &ns, &err));
        CHECK(st == ST_OK && ns == 4 && syms[0] == 'a' && syms[3] == 'd', "token_symbols");
        CHECK(CHECKED(err, st_token_symbols(enc, 600, syms, 8, &ns, &err)) == ST_ERR_INVALID_TOKEN,
              "a special has no symbols");
        CHECK(CHECKED(err, st_token_symbols(enc, 601, syms, 8, &ns, &err)) == ST_ERR_INVALID_TOKEN, "no such id");
        uint8_t out[64];
        uint32_t dids[4] = {base, 600, base + 1, 'x'};
        st = CHECKED(err, st_decode_text(enc, dids, 4, 0, NULL, 0, &sz, &err));
        CHECK(st == ST_ERR_BUFFER_TOO_SMALL && sz == 12, "decode_text size query: %d %zu", st, sz);
        st = CHECKED(err, st_decode_text(enc, dids, 4, 0, out, sizeof out, &sz, &err));
        CHECK(st == ST_OK && sz == 12 && memcmp(out, "ab<|end|>cdx", 12) == 0, "decode_text");
        dids[3] = 601;
        CHECK(CHECKED(err, st_decode_text(enc, dids, 4, 0, out, sizeof out, &sz, &err)) == ST_ERR_INVALID_TOKEN &&
                  error_at(&err, ST_UNIT_INDEX, 3),
              "decode_text: a bad id at %zu", (size_t)err.offset);
        CHECK(CHECKED(err, st_decode(enc, dids, 1, out, sizeof out, &sz, &err)) ==
                  (ube ? ST_ERR_INVALID_ARGUMENT : ST_OK),
              "st_decode on a %s model", ube ? "UBE" : "byte");
        st_encoding_free(enc);
    }
    /* UBE decoding: a lone UTF-16 byte before a special is flushed as U+FFFD; strict names the id */
    {
        uint32_t m[2] = {256 + 0x2D, 256 + 0x4E}; /* U+4E2D */
        st_status st = CHECKED(err, st_encoding_new_merges(ST_ALPHABET_UBE, m, 1, "PHw+ 513\n", 9,
                                                           plain_pretokenizer(ST_PATTERN_O200K), NULL, &enc, &err));
        CHECK(st == ST_OK, "UBE model: %d", st);
        if (st == ST_OK) {
            uint32_t ids[4] = {512, 256 + 0x2D, 513, 'a'};
            uint8_t out[64];
            size_t sz = 0;
            st = CHECKED(err, st_decode_text(enc, ids, 4, 0, out, sizeof out, &sz, &err));
            CHECK(st == ST_OK && sz == 3 + 3 + 3 + 1 && memcmp(out, "\xE4\xB8\xAD\xEF\xBF\xBD<|>a", 10) == 0,
                  "UBE decode with a flush: %d, %zu bytes", st, sz);
            st = CHECKED(err, st_decode_text(enc, ids, 4, ST_UBE_STRICT, out, sizeof out, &sz, &err));
            CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_INDEX, 1), "strict: %d at id %zu", st,
                  (size_t)err.offset);
            /* a UBE token starting inside a character: char starts name that character */
            uint32_t e[8];
            size_t n = 0, cs[8];
            st = CHECKED(
                err, st_encode(enc, "\xE4\xB8\xAD\xE4\xB8\x80", 6, NULL, ST_OFFSETS_CODEPOINTS, e, cs, 8, &n, &err));
            CHECK(st == ST_OK && n == 3 && e[0] == 512 && e[1] == 256 && e[2] == 256 + 0x4E && cs[0] == 0 && cs[1] == 1 &&
                  cs[2] == 1, "UBE encode: %zu ids, starts %zu %zu %zu", n, cs[0], cs[1], cs[2]);
            st_encoding_free(enc);
        }
    }
    /* malformed rules and specials */
    {
        uint32_t fwd[4] = {'a', 'b', 'a', 300}, dup[4] = {'a', 'b', 'a', 'b'};
        const st_pretokenizer *o200k = plain_pretokenizer(ST_PATTERN_O200K);
        CHECK(CHECKED(err, st_encoding_new_merges(0, fwd, 2, "", 0, o200k, NULL, &enc, &err)) ==
                      ST_ERR_MALFORMED_MODEL &&
                  error_at(&err, ST_UNIT_INDEX, 1) && err.input == 0,
              "a rule naming a later id: at %zu", (size_t)err.offset);
        CHECK(CHECKED(err, st_encoding_new_merges(0, dup, 2, "", 0, o200k, NULL, &enc, &err)) ==
                      ST_ERR_MALFORMED_MODEL &&
                  error_at(&err, ST_UNIT_INDEX, 1),
              "the same pair twice: at %zu", (size_t)err.offset);
        CHECK(CHECKED(err, st_encoding_new_merges(0, dup, 1, "YQ== 100\n", 9, o200k, NULL, &enc, &err)) ==
                      ST_ERR_MALFORMED_MODEL &&
                  err.input == 1 && error_at(&err, ST_UNIT_BYTE, 0),
              "a special on an ordinary id");
        CHECK(CHECKED(err, st_encoding_new_merges(2, dup, 1, "", 0, o200k, NULL, &enc, &err)) ==
                  ST_ERR_INVALID_ARGUMENT,
              "alphabet 2");
        CHECK(CHECKED(err, st_encoding_new_merges(0, NULL, 1, "", 0, o200k, NULL, &enc, &err)) ==
                  ST_ERR_INVALID_ARGUMENT,
              "NULL merges");
        /* an encoding's pattern comes from its pre-tokenizer: an unknown one is refused there */
        st_pretokenizer *unknown = NULL;
        CHECK(CHECKED(err, st_pretokenizer_new(9, 0, NULL, 0, NULL, &unknown, &err)) != ST_OK, "unknown pattern");
        CHECK(CHECKED(err, st_encoding_new_merges(0, dup, (size_t)1 << 22, "", 0, o200k, NULL, &enc, &err)) ==
                  ST_ERR_MALFORMED_MODEL,
              "too many rules");
        CHECK(CHECKED(err, st_encoding_new_merges(0, NULL, 0, "", 0, o200k, NULL, &enc, &err)) == ST_OK,
              "no rules at all");
        if (enc) {
            uint32_t ids[8];
            size_t n = 0;
            CHECK(CHECKED(err, st_encode(enc, "ab", 2, NULL, 0, ids, NULL, 8, &n, &err)) == ST_OK && n == 2 &&
                      ids[0] == 'a',
                  "no rules: bytes");
            st_encoding_free(enc);
        }
    }
    /* random rules, random texts of their characters: st_encode against the reference */
    uint64_t r = g_seed * 0x9E3779B97F4A7C15ull + 99;
    st_pretokenizer *pt = NULL;
    CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, &err));
    static const char *chars[] = {"a", "b", " ", "\xC3\xA9", "\xD0\xBF", "\xE4\xB8\xAD", "\xE6\x96\x87",
                                  "\xF0\x9F\x98\x80", ".", "\n"};
    uint32_t merges[2 * 300];
    char text[1400];
    uint32_t *got = (uint32_t *)xmalloc(1400 * 4), *want = (uint32_t *)xmalloc(1400 * 4);
    uint16_t *sym = (uint16_t *)xmalloc(1400 * 2);
    size_t *ends = (size_t *)xmalloc(1400 * sizeof(size_t));
    /* the rounds' patterns: o200k twice in six; superbpe (pieces are long: most of a line),
     * llama3, qwen2 and deepseek_v3 once each */
    static const int round_patterns[6] = {ST_PATTERN_O200K,  ST_PATTERN_O200K, ST_PATTERN_SUPERBPE,
                                          ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2, ST_PATTERN_DEEPSEEK_V3};
    st_pretokenizer *round_pts[6] = {NULL};
    for (int k = 0; k < 6; k++)
        CHECKED(err, st_pretokenizer_new(round_patterns[k], 0, NULL, 0, NULL, &round_pts[k], &err));
    for (int round = 0; round < (g_big ? 200 : 40); round++) {
        int ube = round & 1, rp = (round >> 1) % 6;
        size_t nm = random_rules(&r, ube, merges, 20 + rng_below(&r, 280));
        st_status st = CHECKED(err, st_encoding_new_merges(ube, merges, nm, "", 0,
                                                           plain_pretokenizer(round_patterns[rp]),
                                                           NULL, &enc, &err));
        CHECK(st == ST_OK, "random rules round %d: %d at %zu", round, st, (size_t)err.offset);
        if (st != ST_OK) continue;
        for (int t = 0; t < 10; t++) {
            size_t len = 0, target = rng_below(&r, t == 0 ? 1200 : 120);
            while (len < target) { /* runs of one character, so long pieces happen */
                const char *c = chars[rng_below(&r, 10)];
                for (int k = 1 + (int)rng_below(&r, t == 0 ? 300 : 6); k > 0 && len + strlen(c) < target; k--) {
                    memcpy(text + len, c, strlen(c));
                    len += strlen(c);
                }
                if (len + 4 >= target) break;
            }
            size_t n = 0, np = 0, w = 0;
            st = CHECKED(err, st_encode(enc, text, len, NULL, 0, got, NULL, 1400, &n, &err));
            CHECKED(err, st_pretokenize(round_pts[rp], text, len, 0, ends, 1400, &np, &err));
            for (size_t k = 0, a = 0; k < np; a = ends[k++]) {
                size_t ns = 0;
                if (ube)
                    CHECKED(err, st_ube_encode_symbols(text + a, ends[k] - a, sym, 1400, &ns, &err));
                else for (ns = 0; ns < ends[k] - a; ns++) sym[ns] = (uint8_t)text[a + ns];
                w += ref_rules(merges, nm, ube ? 512 : 256, sym, ns, want + w);
            }
            CHECK(st == ST_OK && n == w && memcmp(got, want, n * 4) == 0,
                  "random rules round %d text %d (%zu bytes): %zu ids, reference %zu", round, t, len, n, w);
        }
        st_encoding_free(enc);
    }
    free(got);
    free(want);
    free(sym);
    free(ends);
    st_pretokenizer_free(pt);
    for (int k = 0; k < 6; k++) st_pretokenizer_free(round_pts[k]);
}

static void test_images(void) {
    static const char *texts[] = {"Hello, world! <|endoftext|> 12345 \xE4\xBD\xA0\xE5\xA5\xBD",
                                  "    def f(x):\n        return x\n\n<|endofprompt|>",
                                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (int e = 0; e < N_ENC; e++) {
        if (!g_big && e == 1) continue; /* p50k is r50k plus a few tokens */
        const enc_info *in = &INFOS[e];
        size_t sz = 0;
        uint64_t *img = save_image(g_enc[e], &sz);
        st_encoding *ie = NULL;
        st_error err;
        double t0 = now_seconds();
        st_status st = CHECKED(err, st_encoding_from_image(img, sz, NULL, &ie, &err));
        double dt = now_seconds() - t0;
        CHECK(st == ST_OK && ie, "%s: from_image: %d at %zu", in->name, st, (size_t)err.offset);
        if (st != ST_OK) {
            free(img);
            continue;
        }
        printf("  %s: image %zu bytes, from_image %.6f s\n", in->name, sz, dt);
        CHECK(st_encoding_n_vocab(ie) == in->n_vocab && st_encoding_n_special(ie) == (uint32_t)in->n_special,
              "%s: image n_vocab/n_special", in->name);
        for (int k = 0; k < in->n_special; k++)
            CHECK(st_encoding_special_id(ie, (uint32_t)k) == in->special_id[k], "%s: image special %d", in->name, k);
        for (size_t t = 0; t < 3; t++) {
            uint32_t a[256], b[256];
            size_t ca[256], cb[256], na = 0, nb = 0;
            size_t len = strlen(texts[t]);
            st_status s1 = CHECKED(
                err, st_encode(g_enc[e], texts[t], len,
                               &(st_special_policy){.allowed = in->special_id, .n_allowed = (size_t)in->n_special},
                               ST_OFFSETS_CODEPOINTS, a, ca, 256, &na, &err));
            st_status s2 = CHECKED(
                err, st_encode(ie, texts[t], len,
                               &(st_special_policy){.allowed = in->special_id, .n_allowed = (size_t)in->n_special},
                               ST_OFFSETS_CODEPOINTS, b, cb, 256, &nb, &err));
            CHECK(s1 == ST_OK && s2 == ST_OK && na == nb && memcmp(a, b, na * 4) == 0 &&
                      memcmp(ca, cb, na * sizeof(size_t)) == 0,
                  "%s: image encode of text %zu differs", in->name, t);
        }
        /* every token's bytes */
        uint32_t bad = NONE;
        for (uint32_t id = 0; id < in->n_vocab + 2 && bad == NONE; id++) {
            const uint8_t *p1 = NULL, *p2 = NULL;
            size_t l1 = 0, l2 = 0;
            st_status s1 = CHECKED(err, st_token_bytes(g_enc[e], id, &p1, &l1, &err)),
                      s2 = CHECKED(err, st_token_bytes(ie, id, &p2, &l2, &err));
            if (s1 != s2 || (s1 == ST_OK && (l1 != l2 || memcmp(p1, p2, l1) != 0))) bad = id;
        }
        CHECK(bad == NONE, "%s: image token bytes of %u differ", in->name, bad);
        /* random texts */
        uint64_t r = 77 + (uint64_t)e;
        uint8_t buf[512];
        int diff = 0;
        for (int i = 0; i < 100; i++) {
            size_t len = gen_text(&r, buf, sizeof buf, 1);
            uint32_t a[512], b[512];
            size_t na = 0, nb = 0;
            CHECKED(err, st_encode(g_enc[e], (const char *)buf, len,
                                   &(st_special_policy){.allowed = in->special_id, .n_allowed = (size_t)in->n_special},
                                   0, a, NULL, 512, &na, &err));
            CHECKED(err, st_encode(ie, (const char *)buf, len,
                                   &(st_special_policy){.allowed = in->special_id, .n_allowed = (size_t)in->n_special},
                                   0, b, NULL, 512, &nb, &err));
            diff |= na != nb || memcmp(a, b, na * 4) != 0;
        }
        CHECK(!diff, "%s: image encodes random texts differently", in->name);
        /* the image of the image is the same bytes */
        size_t sz2 = 0;
        uint64_t *img2 = save_image(ie, &sz2);
        CHECK(sz2 == sz && memcmp(img, img2, sz) == 0, "%s: save_image of the loaded image differs", in->name);
        free(img2);
        st_encoding_free(ie);

        /* header and bounds checks at load */
        uint8_t *b = (uint8_t *)img;
        st_encoding *x = NULL;
        st = CHECKED(err, st_encoding_from_image((uint8_t *)img + 8, sz - 8, NULL, &x, &err));
        CHECK(st == ST_ERR_MALFORMED_MODEL && x == NULL && error_at(&err, ST_UNIT_BYTE, 0),
              "%s: image without magic: %d at %zu", in->name, st, (size_t)err.offset);
        st = CHECKED(err, st_encoding_from_image(img, sz - 1, NULL, &x, &err));
        CHECK(st == ST_ERR_MALFORMED_MODEL && x == NULL, "%s: truncated image: %d at %zu", in->name, st,
              (size_t)err.offset);
        st = CHECKED(err, st_encoding_from_image(img, 63, NULL, &x, &err));
        CHECK(st == ST_ERR_MALFORMED_MODEL && x == NULL && error_at(&err, ST_UNIT_BYTE, 0), "%s: 63-byte image: %d",
              in->name, st);
        st = CHECKED(err, st_encoding_from_image(img, 0, NULL, &x, &err));
        CHECK(st == ST_ERR_MALFORMED_MODEL && x == NULL, "%s: empty image: %d", in->name, st);
        if (e == O200K) {
            /* misaligned: the arrays are read in place */
            uint64_t *mis = (uint64_t *)xmalloc(sz + 16);
            memcpy((uint8_t *)mis + 4, img, sz);
            st = CHECKED(err, st_encoding_from_image((uint8_t *)mis + 4, sz, NULL, &x, &err));
            CHECK(st == ST_ERR_INVALID_ARGUMENT && x == NULL, "misaligned image: %d", st);
            free(mis);
            CHECK(CHECKED(err, st_encoding_from_image(NULL, sz, NULL, &x, &err)) == ST_ERR_INVALID_ARGUMENT,
                  "from_image(NULL)");
            CHECK(CHECKED(err, st_encoding_from_image(img, sz, NULL, NULL, &err)) == ST_ERR_INVALID_ARGUMENT,
                  "from_image(out NULL)");
            struct {
                size_t at;
                uint32_t value;
                size_t want_off;
            } hdr[] = {{8, 3, 8}, {12, 99, 12}, {36, 1, 36}, {16, 0, 16}, {28, 12345, 28}, {40, 72, 40}};
            for (size_t k = 0; k < sizeof hdr / sizeof hdr[0]; k++) {
                uint8_t save[4];
                memcpy(save, b + hdr[k].at, 4);
                uint32_t v = hdr[k].value;
                uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
                memcpy(b + hdr[k].at, le, 4);
                st = CHECKED(err, st_encoding_from_image(img, sz, NULL, &x, &err));
                CHECK(st == ST_ERR_MALFORMED_MODEL && x == NULL && error_at(&err, ST_UNIT_BYTE, hdr[k].want_off),
                      "damaged header field at %zu: %d at %zu, want offset %zu", hdr[k].at, st, (size_t)err.offset,
                      hdr[k].want_off);
                memcpy(b + hdr[k].at, save, 4);
            }
        }
        free(img);
    }
}

/* A damaged small image: bytes overwritten at random places; loading and encoding must not
 * crash (ASan checks the reads), the ids may be wrong. The fuzz harness does this at length. */
static void test_damaged_images(void) {
    st_error err;
    const char *specials[] = {"<|endoftext|>", "<|x|>"};
    uint32_t sids[] = {400, 402};
    small_vocab sv = make_small(specials, sids, 2);
    st_encoding *enc = NULL;
    st_status st = CHECKED(err, st_encoding_new_tiktoken(sv.ranks, sv.ranks_len, sv.specials, sv.specials_len,
                                                         plain_pretokenizer(ST_PATTERN_CL100K), NULL, &enc, &err));
    CHECK(st == ST_OK, "small vocabulary: %d", st);
    free_small(&sv);
    if (st != ST_OK) return;
    size_t sz = 0;
    uint64_t *img = save_image(enc, &sz);
    st_encoding_free(enc);
    uint8_t *copy = (uint8_t *)xmalloc(sz);
    uint64_t r = 12345;
    int loads = 0, iters = g_big ? 20000 : 1500;
    const char *text = "hello world, the <|endoftext|> thing\n\n   aaaaaaaaa 123 \xC3\xA9\xE4\xBD\xA0 <|x|> xxxxxxxxxxxxxxxxxxxxxx"
                       "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
                       "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
                       "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy";
    size_t tlen = strlen(text);
    /* the section starts, from the header */
    const uint8_t *h = (const uint8_t *)img;
    size_t sec[7];
    for (int k = 0; k < 6; k++)
        sec[k] = (size_t)h[40 + 4 * k] | ((size_t)h[41 + 4 * k] << 8) | ((size_t)h[42 + 4 * k] << 16) |
                 ((size_t)h[43 + 4 * k] << 24);
    sec[6] = sz;
    for (int i = 0; i < iters; i++) {
        memcpy(copy, img, sz);
        int nd = 1 + (int)rng_below(&r, 8);
        for (int d = 0; d < nd; d++) {
            int s = (int)rng_below(&r, 6); /* a section; the header is covered by the fuzz harness */
            size_t a = sec[s], b = sec[s + 1];
            size_t at = a + rng_below(&r, (uint32_t)(b - a));
            int mode = (int)rng_below(&r, 4);
            uint32_t v = mode == 0 ? (uint32_t)rng_next(&r) : mode == 1 ? 0xFFFFFFFFu : mode == 2 ? rng_below(&r, 600) : 0;
            for (int q = 0; q < 4 && at + (size_t)q < b; q++) copy[at + (size_t)q] = (uint8_t)(v >> (8 * q));
        }
        st_encoding *de = NULL;
        if (CHECKED(err, st_encoding_from_image(copy, sz, NULL, &de, &err)) != ST_OK) continue;
        loads++;
        uint32_t allowed[2];
        size_t na = 0;
        for (uint32_t k = 0; k < st_encoding_n_special(de) && na < 2; k++) {
            uint32_t id = st_encoding_special_id(de, k);
            const uint8_t *p;
            size_t l;
            /* specials that are not valid UTF-8 too: the core matches them on character boundaries only */
            if (CHECKED(err, st_token_bytes(de, id, &p, &l, &err)) == ST_OK) allowed[na++] = id;
        }
        char *t = (char *)xmalloc(tlen);
        memcpy(t, text, tlen);
        uint32_t ids[512];
        size_t n = 0;
        st = CHECKED(err, st_encode(de, t, tlen, &(st_special_policy){.allowed = allowed, .n_allowed = na}, 0, ids,
                                    NULL, 512, &n, &err));
        if (st == ST_OK) {
            uint8_t out[1024];
            size_t ol;
            CHECKED(err, st_decode(de, ids, n, out, sizeof out, &ol, &err));
        }
        CHECKED(err, st_encode_count(de, t, tlen, NULL, &n, &err));
        free(t);
        st_encoding_free(de);
    }
    CHECK(loads > iters / 2, "damaged images: only %d of %d loaded", loads, iters);
    free(copy);
    free(img);
}

/* ---- malformed rank files -------------------------------------------------------------------- */

static void test_malformed(void) {
    st_error err;
    const st_pretokenizer *o200k = plain_pretokenizer(ST_PATTERN_O200K);
    struct {
        const char *ranks;
        st_status want;
        size_t off;
        const char *what;
    } cases[] = {
        {"YQ== 0\nYg== 1\n!!!! 2\n", ST_ERR_MALFORMED_MODEL, 14, "bad base64 character"},
        {"YQ== 0\nYg= 1\n", ST_ERR_MALFORMED_MODEL, 7, "base64 length not a multiple of 4"},
        {"YQ== 0\nYQ=a 1\n", ST_ERR_MALFORMED_MODEL, 7, "padding in the middle"},
        {"YQ== 0\n==== 1\n", ST_ERR_MALFORMED_MODEL, 7, "all padding"},
        {"YQ== 0\nYg==\n", ST_ERR_MALFORMED_MODEL, 7, "missing rank"},
        {"YQ== 0\nYg== \n", ST_ERR_MALFORMED_MODEL, 7, "missing rank after the space"},
        {"YQ== 0\nYg==", ST_ERR_MALFORMED_MODEL, 7, "missing rank at the end of the file"},
        {"YQ== 0\nYg== x\n", ST_ERR_MALFORMED_MODEL, 7, "rank not a number"},
        {"YQ== 0\nYg== 1x\n", ST_ERR_MALFORMED_MODEL, 7, "garbage after the rank"},
        {"YQ== 0\nYg== -1\n", ST_ERR_MALFORMED_MODEL, 7, "negative rank"},
        {"YQ== 0\nYg==  1\n", ST_ERR_MALFORMED_MODEL, 7, "two spaces"},
        {"YQ== 0\nYg==\t1\n", ST_ERR_MALFORMED_MODEL, 7, "tab separator"},
        {"YQ== 0\n 1\n", ST_ERR_MALFORMED_MODEL, 7, "empty token"},
        {"YQ== 0\nYg== 0\n", ST_ERR_MALFORMED_MODEL, 7, "duplicate rank"},
        {"YQ== 0\nYg== 1\nYw== 1\n", ST_ERR_MALFORMED_MODEL, 14, "duplicate rank later"},
        {"YQ== 0\nYQ== 1\n", ST_ERR_MALFORMED_MODEL, 7, "duplicate token bytes"},
        {"YQ== 0\nYg== 1\nYR== 2\n", ST_ERR_MALFORMED_MODEL, 14, "duplicate bytes, non-canonical base64"},
        {"YQ== 0\nYg== 99999999999\n", ST_ERR_MALFORMED_MODEL, 7, "rank above 2^31"},
        {"YQ== 0\nYg== 4294967296\n", ST_ERR_MALFORMED_MODEL, 7, "rank 2^32"},
        {"YQ== 0\nYg== 4294967295\n", ST_ERR_MALFORMED_MODEL, 7, "rank 2^32-1"},
        {"YQ== 0\nYg== 2147483648\n", ST_ERR_MALFORMED_MODEL, 7, "rank 2^31"},
        {"", ST_ERR_MALFORMED_MODEL, 0, "empty file"},
        {"\n\n\r\n", ST_ERR_MALFORMED_MODEL, 0, "only blank lines"},
        {"YQ== 0\r\nYg== 1\r\n", ST_OK, 0, "CRLF line endings"},
        {"YQ== 0\nYg== 1\n\n\n", ST_OK, 0, "trailing blank lines"},
        {"YQ== 0\r\nYg== 1\r\n\r\n\r\n", ST_OK, 0, "trailing blank CRLF lines"},
        {"YQ== 0\nYg== 1", ST_OK, 0, "no newline at the end"},
        {"YQ== 0\n\nYg== 1\n", ST_OK, 0, "a blank line inside"},
        {"YQ== 1\nYg== 0\n", ST_OK, 0, "ranks out of order"},
        {"YQ== 0\nYg== 2\n", ST_OK, 0, "a gap in the ranks"},
        {"YWI= 0\nYWJj 1\nYWJjZA== 2\n", ST_OK, 0, "padding 1, 0, 2"},
        {"YQ== 00\nYg== 01\n", ST_OK, 0, "leading zeros"},
        {"YQ== 0\rYg== 1\n", ST_ERR_MALFORMED_MODEL, 0, "a lone CR is no line end"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        /* exactly sized copies, so a read past the end is an ASan report */
        size_t len = strlen(cases[k].ranks);
        char *r = (char *)xmalloc(len);
        memcpy(r, cases[k].ranks, len);
        st_encoding *enc = (st_encoding *)(uintptr_t)1;
        st_status st = CHECKED(err, st_encoding_new_tiktoken(r, len, NULL, 0, o200k, NULL, &enc, &err));
        if (cases[k].want == ST_OK) {
            CHECK(st == ST_OK && enc != NULL && err.input == 0, "rank file \"%s\": status %d at %zu, want ok",
                  cases[k].what, st, (size_t)err.offset);
        } else {
            CHECK(st == cases[k].want && error_at(&err, ST_UNIT_BYTE, cases[k].off) && enc == NULL && err.input == 0,
                  "rank file \"%s\": status %d at %zu (input %u), want %d at %zu", cases[k].what, st,
                  (size_t)err.offset, err.input, cases[k].want, cases[k].off);
        }
        if (st == ST_OK) {
            const uint8_t *p;
            size_t l;
            CHECK(CHECKED(err, st_token_bytes(enc, 0, &p, &l, &err)) == ST_OK ||
                      CHECKED(err, st_token_bytes(enc, 1, &p, &l, &err)) == ST_OK,
                  "rank file \"%s\": token bytes", cases[k].what);
            st_encoding_free(enc);
        }
        /* a NULL error report is fine */
        st_encoding *e2 = NULL;
        st_status st2 = st_encoding_new_tiktoken(r, len, NULL, 0, o200k, NULL, &e2, NULL);
        CHECK(st2 == st, "rank file \"%s\" with a NULL report: %d vs %d", cases[k].what, st2, st);
        st_encoding_free(e2);
        free(r);
    }
    /* CRLF file: the tokens are right */
    {
        const char *crlf = "YQ== 0\r\nYg== 1\r\nYWI= 2\r\n";
        st_encoding *enc = NULL;
        st_status st =
            CHECKED(err, st_encoding_new_tiktoken(crlf, strlen(crlf), "PHx4fD4= 3\r\n", 12, o200k, NULL, &enc, &err));
        const uint8_t *p;
        size_t l;
        CHECK(st == ST_OK && st_encoding_n_vocab(enc) == 4 &&
                  CHECKED(err, st_token_bytes(enc, 2, &p, &l, &err)) == ST_OK && l == 2 && memcmp(p, "ab", 2) == 0 &&
                  CHECKED(err, st_token_bytes(enc, 3, &p, &l, &err)) == ST_OK && l == 5 && memcmp(p, "<|x|>", 5) == 0,
              "CRLF rank file: tokens");
        uint32_t ids[8];
        size_t n = 0;
        st = CHECKED(err, st_encode(enc, "ab", 2, NULL, 0, ids, NULL, 8, &n, &err));
        CHECK(st == ST_OK && n == 1 && ids[0] == 2, "CRLF rank file: encode \"ab\"");
        st_encoding_free(enc);
    }
    /* errors in the specials: the offset is into the specials text */
    {
        const char *ranks = "YQ== 0\nYg== 1\n";
        struct {
            const char *spec;
            size_t off;
            const char *what;
        } sc[] = {
            {"PHx4fD4= 2\n!!!! 3\n", 11, "bad base64 in specials"},
            /* a special rank given twice is one special with two strings (test_special_strings) */
            {"PHx4fD4= 2\nPHx5fD4= 1\n", 11, "special rank = ordinary rank"},
            {"PHx4fD4=\n", 0, "special without rank"},
        };
        for (size_t k = 0; k < sizeof sc / sizeof sc[0]; k++) {
            st_encoding *enc = NULL;
            st_status st = CHECKED(err, st_encoding_new_tiktoken(ranks, strlen(ranks), sc[k].spec, strlen(sc[k].spec),
                                                                 o200k, NULL, &enc, &err));
            CHECK(st == ST_ERR_MALFORMED_MODEL && error_at(&err, ST_UNIT_BYTE, sc[k].off) && err.input == 1 &&
                      enc == NULL,
                  "%s: status %d at %zu, input %u; want offset %zu", sc[k].what, st, (size_t)err.offset, err.input,
                  sc[k].off);
            st_encoding_free(enc);
        }
    }
    /* a rank far above the number of lines (not above 2^31): the file is malformed; the offset
     * should be the line with that rank */
    {
        const char *ranks = "YQ== 0\nYg== 1000000\n";
        st_encoding *enc = NULL;
        st_status st = CHECKED(err, st_encoding_new_tiktoken(ranks, strlen(ranks), NULL, 0, o200k, NULL, &enc, &err));
        CHECK(st == ST_ERR_MALFORMED_MODEL && enc == NULL, "sparse rank 1000000: %d", st);
        CHECK(error_at(&err, ST_UNIT_BYTE, 7), "sparse rank 1000000: offset %zu, want 7 (its line)",
              (size_t)err.offset);
        const char *spec = "PHx4fD4= 1000000\n";
        st = CHECKED(err, st_encoding_new_tiktoken(ranks, 7, spec, strlen(spec), o200k, NULL, &enc, &err));
        CHECK(st == ST_ERR_MALFORMED_MODEL && enc == NULL, "sparse special rank: %d", st);
        CHECK(error_at(&err, ST_UNIT_BYTE, 0) && err.input == 1, "sparse special rank 1000000: offset %zu in input %u",
              (size_t)err.offset, err.input);
    }
    /* other arguments */
    {
        st_encoding *enc = NULL;
        /* an encoding's pattern comes from its pre-tokenizer: an unknown one is refused there */
        st_pretokenizer *unknown = NULL;
        CHECK(CHECKED(err, st_pretokenizer_new(99, 0, NULL, 0, NULL, &unknown, &err)) == ST_ERR_UNKNOWN_PATTERN &&
                  unknown == NULL,
              "unknown pattern");
        CHECK(CHECKED(err, st_encoding_new_tiktoken(NULL, 7, NULL, 0, o200k, NULL, &enc, &err)) ==
                  ST_ERR_INVALID_ARGUMENT,
              "NULL ranks with a length");
        CHECK(CHECKED(err, st_encoding_new_tiktoken("YQ== 0\n", 7, NULL, 3, o200k, NULL, &enc, &err)) ==
                  ST_ERR_INVALID_ARGUMENT,
              "NULL specials with a length");
        CHECK(CHECKED(err, st_encoding_new_tiktoken("YQ== 0\n", 7, NULL, 0, o200k, NULL, NULL, &err)) ==
                  ST_ERR_INVALID_ARGUMENT,
              "NULL out");
        st_encoding_free(NULL);
        CHECK(st_encoding_n_vocab(NULL) == 0 && st_encoding_n_special(NULL) == 0, "NULL encoding accessors");
    }
    /* a vocabulary without every byte: a byte with no token is ST_ERR_NOT_ENCODABLE at its offset */
    {
        const char *ranks = "YQ== 0\nYg== 1\nYWI= 2\nIA== 3\n"; /* a b ab space */
        st_encoding *enc = NULL;
        st_status st = CHECKED(err, st_encoding_new_tiktoken(ranks, strlen(ranks), NULL, 0, o200k, NULL, &enc, &err));
        uint32_t ids[16];
        size_t n = 0;
        CHECK(st == ST_OK, "partial vocabulary");
        st = CHECKED(err, st_encode(enc, "ab ab", 5, NULL, 0, ids, NULL, 16, &n, &err));
        CHECK(st == ST_OK && n == 3 && ids[0] == 2 && ids[1] == 3 && ids[2] == 2, "partial vocabulary: \"ab ab\" (%zu)", n);
        st = CHECKED(err, st_encode(enc, "ab abc", 6, NULL, 0, ids, NULL, 16, &n, &err));
        CHECK(st == ST_ERR_NOT_ENCODABLE && error_at(&err, ST_UNIT_BYTE, 5),
              "partial vocabulary: 'c' not encodable: %d at %zu", st, (size_t)err.offset);
        st_encoding_free(enc);
    }
}

/* ---- allocator hooks -------------------------------------------------------------------------- */

typedef struct counter {
    long calls, allocs, frees, fail_at, fail_from, bad_frees;
    size_t live;
} counter;

static void *c_alloc(void *ctx, size_t size) {
    counter *c = (counter *)ctx;
    long k = c->calls++;
    if (k == c->fail_at || (c->fail_from >= 0 && k >= c->fail_from)) return NULL;
    uint8_t *p = (uint8_t *)malloc(size + 16);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    c->allocs++;
    c->live += size;
    return p + 16;
}

static void c_free(void *ctx, void *ptr, size_t size) {
    counter *c = (counter *)ctx;
    if (!ptr) return;
    uint8_t *p = (uint8_t *)ptr - 16;
    size_t was;
    memcpy(&was, p, sizeof was);
    if (was != size) c->bad_frees++;
    c->frees++;
    c->live -= was;
    free(p);
}

static void counter_reset(counter *c) {
    memset(c, 0, sizeof *c);
    c->fail_at = -1;
    c->fail_from = -1;
}

/* When the backtracking tables get built (pipeline.c: tables_for): not by a short piece that
 * wants them (no stall on a first call), but by a piece whose merge work alone would cost more
 * than the build (a megabyte of one letter), and then kept; ids the same either way. */
static void test_build_debt(void) {
    st_error err;
#ifndef ST_BACKTRACK_EVERY_PIECE /* that build makes the tables at once */
    counter c;
    counter_reset(&c);
    st_allocator a = {c_alloc, c_free, &c};
    st_encoding *enc = NULL;
    if (load_encoding(g_dir, &INFOS[O200K], &a, &enc, NULL) != ST_OK) return;
    st_encoding_set_cache_size(enc, 0); /* no scratch block: live bytes are the tables' alone */
    size_t live0 = c.live, n = 0, wn = 0, len = 600000;
    static const char cjk[] = "\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97\xE7\xAC\xA6\xE4\xB8\xB2";
    uint32_t *ids = (uint32_t *)xmalloc(len * 4), *want = (uint32_t *)xmalloc(len * 4);
    char *s = (char *)xmalloc(len);
    memset(s, 'a', len);
    st_status st = CHECKED(err, st_encode(enc, cjk, sizeof cjk - 1, NULL, 0, ids, NULL, len, &n, &err));
    CHECK(st == ST_OK && c.live == live0, "a short CJK piece built the tables: %zu bytes kept", c.live - live0);
    st = CHECKED(err, st_encode(enc, s, 5000, NULL, 0, ids, NULL, len, &n, &err));
    CHECKED(err, st_encode(g_enc[O200K], s, 5000, NULL, 0, want, NULL, len, &wn, &err));
    CHECK(st == ST_OK && c.live == live0 && n == wn && memcmp(ids, want, n * 4) == 0,
          "5000 bytes of one letter: %d, %zu bytes kept", st, c.live - live0);
    st = CHECKED(err, st_encode(enc, s, len, NULL, 0, ids, NULL, len, &n, &err));
    CHECKED(err, st_encode(g_enc[O200K], s, len, NULL, 0, want, NULL, len, &wn, &err));
    CHECK(st == ST_OK && c.live > live0 + 1000000 && n == wn && memcmp(ids, want, n * 4) == 0,
          "600 KB of one letter: %d, %zu bytes kept (the tables)", st, c.live - live0);
    st_encoding_free(enc);
    CHECK(c.live == 0 && c.bad_frees == 0, "after free: %zu bytes live", c.live);
    free(ids);
    free(want);
    free(s);
#endif
}

static void test_allocator(void) {
    st_error err;
    counter c;
    counter_reset(&c);
    st_allocator a = {c_alloc, c_free, &c};
    st_encoding *enc = NULL;
    st_status st = load_encoding(g_dir, &INFOS[O200K], &a, &enc, NULL);
    CHECK(st == ST_OK && c.allocs > 0 && c.live > 0, "o200k with a counting allocator: %d, %ld allocs", st, c.allocs);
    if (st != ST_OK) return;
    uint32_t *ids = (uint32_t *)xmalloc(300000 * 4);
    size_t n = 0;
    /* the backtracking tables: built by st_encoding_prepare (or once pieces that want them
     * have cost as much merge work as their build: test_build_debt), kept by the handle */
    static const char cjk[] = "\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97\xE7\xAC\xA6\xE4\xB8\xB2";
    long pre = c.allocs;
    size_t pre_live = c.live;
    st = st_encoding_prepare(enc);
    CHECK(st == ST_OK && c.allocs > pre && c.live > pre_live, "prepare: %d, %ld allocations kept", st, c.allocs - pre);
    st = CHECKED(err, st_encode(enc, cjk, sizeof cjk - 1, NULL, 0, ids, NULL, 300000, &n, &err));
    CHECK(st == ST_OK, "first CJK piece: %d", st);
    long base_allocs = c.allocs;
    size_t base_live = c.live;
    st = CHECKED(err, st_encode(enc, cjk, sizeof cjk - 1, NULL, 0, ids, NULL, 300000, &n, &err));
    CHECK(st == ST_OK && c.allocs == base_allocs, "second CJK piece: %ld allocations", c.allocs - base_allocs);
    /* short text: nothing allocated per call */
    st = CHECKED(err, st_encode(enc, "hello world", 11, NULL, 0, ids, NULL, 300000, &n, &err));
    CHECK(st == ST_OK && c.allocs == base_allocs, "short text: %ld allocations", c.allocs - base_allocs);
    /* a long piece (> 256 bytes): heap-merge scratch, freed before return */
    char *s = (char *)xmalloc(200000);
    memset(s, 'a', 5000);
    st = CHECKED(err, st_encode(enc, s, 5000, NULL, 0, ids, NULL, 300000, &n, &err));
    CHECK(st == ST_OK && c.allocs > base_allocs && c.live == base_live && c.bad_frees == 0,
          "long piece: %ld allocations, %zu bytes left", c.allocs - base_allocs, c.live - base_live);
    uint32_t *want = (uint32_t *)xmalloc(300000 * 4);
    size_t wn = 0;
    CHECKED(err, st_encode(g_enc[O200K], s, 5000, NULL, 0, want, NULL, 300000, &wn, &err));
    CHECK(n == wn && memcmp(ids, want, n * 4) == 0, "counting allocator: same ids");
    /* >= 8192 bytes: the piece cache too, in a scratch block the handle makes on the first such
     * call and keeps for the next (freed with the handle). The limit is set so that the tables
     * reach their full size (512 short lines, 32 long entries in block 0, the one a lone caller
     * takes, with half the limit, half of that the piece cache's; too little for a span cache)
     * on the first call of this text: they grow with the text seen (cache_fit), and the checks
     * below count the bytes a call leaves behind. Setting the limit frees the tables the calls
     * above made (a span log among them). */
    CHECK(st_encoding_set_cache_size(enc, 196608) == ST_OK, "cache size for the allocation checks");
    base_live = c.live;
    for (size_t i = 0; i < 20000; i++) s[i] = "abcdefgh xyzzy qwrtp "[i % 21];
    memset(s + 20000, 'b', 3000); /* and a long piece */
    size_t len = 23000;
    st = CHECKED(err, st_encode(enc, s, len, NULL, 0, ids, NULL, 300000, &n, &err));
    /* the handle made its scratch block (the piece cache's table in it) on its first call and
     * keeps it: no call since has freed it */
    st_cache_info cinfo;
    CHECK(st == ST_OK && c.live >= base_live && c.bad_frees == 0 && st_encoding_cache_info(enc, &cinfo) == ST_OK &&
              cinfo.bytes > 0 && cinfo.bytes <= cinfo.limit,
          "cached text: the handle keeps its scratch (%zu more bytes, cache %llu)", c.live - base_live,
          (unsigned long long)cinfo.bytes);
    base_live = c.live;
    long before = c.allocs;
    st = CHECKED(err, st_encode(enc, s, len, NULL, 0, ids, NULL, 300000, &n, &err));
    long per_call = c.allocs - before;
    CHECK(st == ST_OK && per_call >= 1 && c.live == base_live && c.bad_frees == 0,
          "cached text with a long piece, scratch reused: %ld allocations, %zu bytes left", per_call,
          c.live - base_live);
    CHECKED(err, st_encode(g_enc[O200K], s, len, NULL, 0, want, NULL, 300000, &wn, &err));
    CHECK(n == wn && memcmp(ids, want, n * 4) == 0, "counting allocator: same ids (cached text)");
    /* every one of those allocations failing in turn */
    int saw_encode_oom = 0;
    for (long k = 0; k < per_call; k++) {
        c.calls = 0;
        c.fail_at = k;
        size_t n2 = 0;
        st = CHECKED(err, st_encode(enc, s, len, NULL, 0, ids, NULL, 300000, &n2, &err));
        CHECK((st == ST_OK && n2 == wn && memcmp(ids, want, wn * 4) == 0) || st == ST_ERR_OUT_OF_MEMORY,
              "allocation %ld failing: %d", k, st);
        saw_encode_oom |= st == ST_ERR_OUT_OF_MEMORY;
        CHECK(c.live == base_live && c.bad_frees == 0, "allocation %ld failing: %zu bytes leaked", k, c.live - base_live);
        c.calls = 0;
        st_status st2 = CHECKED(err, st_encode_count(enc, s, len, NULL, &n2, &err));
        c.fail_at = -1;
        CHECK(st2 == st, "count with allocation %ld failing: %d vs %d", k, st2, st);
    }
    c.fail_at = -1;
    CHECK(saw_encode_oom, "no failing allocation during st_encode gave ST_ERR_OUT_OF_MEMORY");
    /* the scratch block failing only: the encode still works, uncached (documented). A fresh
     * handle (from an image: no parse), as enc has made its block already. */
    size_t sisz = 0;
    CHECKED(err, st_encoding_save_image(enc, NULL, 0, &sisz, &err));
    uint64_t *simg = (uint64_t *)xmalloc(sisz + 8);
    st_encoding *sie = NULL;
    CHECK(CHECKED(err, st_encoding_save_image(enc, (uint8_t *)simg, sisz, &sisz, &err)) == ST_OK &&
              CHECKED(err, st_encoding_from_image(simg, sisz, &a, &sie, &err)) == ST_OK,
          "image for the scratch test");
    c.calls = 0;
    c.fail_at = 0; /* the call's first allocation: its scratch block */
    memset(s, 'x', 9000);
    s[100] = ' ';
    st = sie ? CHECKED(err, st_encode(sie, s, 9000, NULL, 0, ids, NULL, 300000, &n, &err)) : ST_ERR_INVALID_ARGUMENT;
    c.fail_at = -1;
    st_encoding_free(sie);
    free(simg);
    CHECKED(err, st_encode(g_enc[O200K], s, 9000, NULL, 0, want, NULL, 300000, &wn, &err));
    CHECK(st == ST_OK && n == wn && memcmp(ids, want, n * 4) == 0,
          "the piece cache's allocation failing: %d (documented: the encode runs uncached)", st);
    /* all failing: ST_ERR_OUT_OF_MEMORY for a long piece, nothing leaked */
    c.fail_from = 0;
    st = CHECKED(err, st_encode(enc, s, 9000, NULL, 0, ids, NULL, 300000, &n, &err));
    CHECK(st == ST_ERR_OUT_OF_MEMORY && c.live == base_live, "no memory, long piece: %d", st);
    st = CHECKED(err, st_encode(enc, "short text", 10, NULL, 0, ids, NULL, 300000, &n, &err));
    CHECK(st == ST_OK, "no memory, short text needs none: %d", st);
    c.fail_from = -1;
    /* the tables failing to build (every allocation of the build failing, then each one in
     * turn): the piece goes through the merge loop, same ids; they are not tried again */
    size_t full = 0; /* the tables' bytes, from the run with nothing failing (k = -2) */
    for (long k = -2; k < 12; k++) {
        counter c2;
        counter_reset(&c2);
        st_allocator a2 = {c_alloc, c_free, &c2};
        st_encoding *e2 = NULL;
        if (load_encoding(g_dir, &INFOS[O200K], &a2, &e2, NULL) != ST_OK) break;
        st_encoding_set_cache_size(e2, 0); /* a short text then has no scratch: the build's allocations only */
        size_t live0 = c2.live, n2 = 0, n3 = 0;
        uint32_t got[16], ref[16];
        c2.calls = 0;
        if (k == -1) c2.fail_from = 0;
        else if (k >= 0) c2.fail_at = k;
        st = CHECKED(err, st_encode(e2, cjk, sizeof cjk - 1, NULL, 0, got, NULL, 16, &n2, &err));
        st_encoding_prepare(e2); /* the build, if the piece did not start it (no debt yet) */
        c2.fail_from = c2.fail_at = -1;
        CHECKED(err, st_encode(g_enc[O200K], cjk, sizeof cjk - 1, NULL, 0, ref, NULL, 16, &n3, &err));
        CHECK(st == ST_OK && n2 == n3 && memcmp(got, ref, n2 * 4) == 0,
              "backtracking tables failing at allocation %ld: %d, %zu ids", k, st, n2);
        if (k == -2) full = c2.live - live0;
        CHECK(c2.bad_frees == 0 && (c2.live == live0 || c2.live == live0 + full),
              "allocation %ld failing: the build left %zu bytes (tables: %zu)", k, c2.live - live0, full);
        long after = c2.allocs;
        st = CHECKED(err, st_encode(e2, cjk, sizeof cjk - 1, NULL, 0, got, NULL, 16, &n2, &err));
        CHECK(st == ST_OK && c2.allocs == after, "a second encode allocated (a failed build is not retried)");
        st = st_encoding_prepare(e2);
        CHECK(st == (c2.live == live0 ? ST_ERR_OUT_OF_MEMORY : ST_OK), "prepare after build %ld: %d", k, st);
        st_encoding_free(e2);
        CHECK(c2.live == 0 && c2.bad_frees == 0, "after free: %zu bytes live", c2.live);
    }
    /* decode allocates nothing */
    before = c.allocs;
    uint8_t out[64];
    size_t ol;
    uint32_t dids[3] = {1, 2, 3};
    CHECKED(err, st_decode(enc, dids, 3, out, sizeof out, &ol, &err));
    CHECK(c.allocs == before, "decode allocated");
    /* an image loaded with the counting allocator */
    size_t sz = 0;
    CHECKED(err, st_encoding_save_image(enc, NULL, 0, &sz, &err));
    uint64_t *img = (uint64_t *)xmalloc(sz + 8);
    CHECKED(err, st_encoding_save_image(enc, (uint8_t *)img, sz, &sz, &err));
    counter ci;
    counter_reset(&ci);
    st_allocator ai = {c_alloc, c_free, &ci};
    st_encoding *ie = NULL;
    st = CHECKED(err, st_encoding_from_image(img, sz, &ai, &ie, &err));
    CHECK(st == ST_OK && ci.live < 65536, "image with a counting allocator: %d, %zu bytes (borrowed: small)", st, ci.live);
    if (st == ST_OK) {
        memset(s, 'a', 5000);
        st = CHECKED(err, st_encode(ie, s, 5000, NULL, 0, ids, NULL, 300000, &n, &err));
        CHECK(st == ST_OK && ci.allocs >= 2, "image: long piece allocates through the image's allocator");
        st_encoding_free(ie);
    }
    CHECK(ci.live == 0 && ci.allocs == ci.frees && ci.bad_frees == 0, "image: %zu bytes leaked", ci.live);
    for (long k = 0; k < 4; k++) {
        counter_reset(&ci);
        ci.fail_at = k;
        ie = NULL;
        st = CHECKED(err, st_encoding_from_image(img, sz, &ai, &ie, &err));
        if (st == ST_OK) st_encoding_free(ie);
        CHECK((st == ST_OK || st == ST_ERR_OUT_OF_MEMORY) && ci.live == 0, "image, allocation %ld failing: %d, leak %zu",
              k, st, ci.live);
    }
    free(img);

    st_encoding_free(enc);
    CHECK(c.live == 0 && c.allocs == c.frees && c.bad_frees == 0, "after st_encoding_free: %zu bytes in %ld blocks live, %ld bad frees",
          c.live, c.allocs - c.frees, c.bad_frees);

    /* loading with each allocation failing (a small vocabulary: the same code paths) */
    const char *specials[] = {"<|endoftext|>"};
    uint32_t sid = 300;
    small_vocab sv = make_small(specials, &sid, 1);
    int saw_oom = 0;
    for (long k = 0; k < 8; k++) {
        counter_reset(&c);
        c.fail_at = k;
        enc = NULL;
        st = CHECKED(err, st_encoding_new_tiktoken(sv.ranks, sv.ranks_len, sv.specials, sv.specials_len,
                                                   plain_pretokenizer(ST_PATTERN_O200K), &a, &enc, &err));
        saw_oom |= st == ST_ERR_OUT_OF_MEMORY;
        CHECK((st == ST_OK && enc) || (st == ST_ERR_OUT_OF_MEMORY && !enc), "load, allocation %ld failing: %d", k, st);
        st_encoding_free(enc);
        CHECK(c.live == 0 && c.allocs == c.frees && c.bad_frees == 0, "load, allocation %ld failing: leak", k);
    }
    CHECK(saw_oom, "a failing allocator never gave ST_ERR_OUT_OF_MEMORY");
    counter_reset(&c);
    c.fail_from = 0;
    enc = (st_encoding *)(uintptr_t)1;
    st = CHECKED(err, st_encoding_new_tiktoken(sv.ranks, sv.ranks_len, NULL, 0, plain_pretokenizer(ST_PATTERN_O200K),
                                               &a, &enc, &err));
    CHECK(st == ST_ERR_OUT_OF_MEMORY && enc == NULL && c.live == 0, "load with no memory: %d", st);
    /* a merge-rules model: each allocation of its load failing in turn; a long piece (its
     * merge scratch comes from the allocator) failing; a malformed model: nothing leaked */
    {
        uint32_t m[6] = {'a', 'a', 256, 256, 257, 257};
        for (long k = 0; k < 6; k++) {
            counter_reset(&c);
            c.fail_at = k;
            enc = NULL;
            st = CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, m, 3, "PHw+ 259\n", 9,
                                                     plain_pretokenizer(ST_PATTERN_O200K), &a, &enc, &err));
            CHECK((st == ST_OK && enc) || (st == ST_ERR_OUT_OF_MEMORY && !enc), "rules load, allocation %ld failing: %d", k, st);
            if (st == ST_OK) {
                char *longa = (char *)xmalloc(3000);
                memset(longa, 'a', 3000);
                uint32_t *ids = (uint32_t *)xmalloc(3000 * 4);
                size_t n = 0;
                c.calls = 0;
                c.fail_from = 0;
                st = CHECKED(err, st_encode(enc, longa, 3000, NULL, 0, ids, NULL, 3000, &n, &err));
                CHECK(st == ST_ERR_OUT_OF_MEMORY, "rules, a long piece with no memory: %d", st);
                c.fail_from = c.fail_at = -1;
                st = CHECKED(err, st_encode(enc, longa, 3000, NULL, 0, ids, NULL, 3000, &n, &err));
                CHECK(st == ST_OK && n == 375 && ids[0] == 258, "rules, a long piece: %d, %zu ids", st, n);
                free(longa);
                free(ids);
            }
            st_encoding_free(enc);
            CHECK(c.live == 0 && c.allocs == c.frees && c.bad_frees == 0, "rules load, allocation %ld failing: leak", k);
        }
        counter_reset(&c);
        uint32_t bad[2] = {'a', 300};
        st = CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, bad, 1, NULL, 0,
                                                 plain_pretokenizer(ST_PATTERN_O200K), &a, &enc, &err));
        CHECK(st == ST_ERR_MALFORMED_MODEL && c.live == 0, "malformed rules: %d, leak of %zu bytes", st, c.live);
    }
    /* a malformed file with a counting allocator: nothing leaked */
    counter_reset(&c);
    st = CHECKED(err, st_encoding_new_tiktoken("YQ== 0\nYQ== 1\n", 14, NULL, 0, plain_pretokenizer(ST_PATTERN_O200K),
                                               &a, &enc, &err));
    CHECK(st == ST_ERR_MALFORMED_MODEL && c.live == 0, "malformed file: leak of %zu bytes", c.live);
    counter_reset(&c);
    st = CHECKED(err, st_encoding_new_tiktoken("YQ== 0\n", 7, "PHx4fD4= 0\n", 11, plain_pretokenizer(ST_PATTERN_O200K),
                                               &a, &enc, &err));
    CHECK(st == ST_ERR_MALFORMED_MODEL && c.live == 0, "malformed specials: leak of %zu bytes", c.live);
    free_small(&sv);
    free(s);
    free(ids);
    free(want);
}

/* ---- speed ---------------------------------------------------------------------------------- */

static void make_kind(int kind, uint8_t *b, size_t n, uint64_t *r) {
    switch (kind) {
    case 0: memset(b, 'a', n); break;
    case 1:
        for (size_t i = 0; i < n; i++) b[i] = (uint8_t)('a' + rng_below(r, 26));
        break;
    case 2:
        memset(b, ' ', n);
        b[n - 1] = 'x';
        break;
    case 3: memset(b, '\n', n); break;
    case 4: {
        size_t i = 0;
        while (i + 3 <= n) i += put_cp(b + i, 0x4E00 + rng_below(r, 0x5200));
        for (; i < n; i++) b[i] = ' ';
        break;
    }
    case 5:
        for (size_t i = 0; i < n; i++) b[i] = (uint8_t)('0' + rng_below(r, 10));
        break;
    default: memset(b, '!', n); break;
    }
}

static const char *KIND_NAMES[] = {"one letter", "random lowercase", "spaces then x", "newlines", "random CJK",
                                   "random digits", "one punctuation"};

/* The core's work (work_counter.h: merge-loop steps, heap operations, backtracking probes and the
 * pre-tokenizer's characters) for one encode of b[0..n). */
static double work_encode(const st_encoding *enc, const uint8_t *b, size_t n, uint32_t *ids, size_t *count) {
    st_error err;
    st__test_work_take();
    st_status st = CHECKED(err, st_encode(enc, (const char *)b, n, NULL, 0, ids, NULL, n, count, &err));
    double w = (double)st__test_work_take();
    if (st != ST_OK) {
        CHECK(0, "work encode failed: %d", st);
        return 1e18;
    }
    return w;
}

/* Nothing quadratic: for 4x the text, at most WORK_RATIO times the work (linear code gives about
 * 4x, quadratic 16x), counted by the core's work counter rather than timed, so a busy machine
 * cannot fail it (timings belong in bench/). ST_ENCODE_BIG: 1 MB and 4 MB; else 16 KB and 64 KB. */
#define WORK_RATIO 5.0

static void test_work_linear(void) {
    size_t small = g_big ? (1u << 20) : (1u << 14), large = 4 * small;
    uint8_t *b = (uint8_t *)xmalloc(large);
    uint32_t *ids = (uint32_t *)xmalloc(large * 4);
    printf("  encode work, counted (%s sizes: %zu KB and %zu KB)\n", g_big ? "full" : "reduced", small >> 10,
           large >> 10);
    int encs[2] = {O200K, CL100K};
    int n_encs = 2;
    for (int q = 0; q < n_encs; q++) {
        int e = encs[q];
        for (int kind = 0; kind < 7; kind++) {
            uint64_t r = 99 + (uint64_t)kind;
            size_t c1 = 0, c4 = 0;
            make_kind(kind, b, small, &r);
            double w1 = work_encode(g_enc[e], b, small, ids, &c1);
            r = 99 + (uint64_t)kind;
            make_kind(kind, b, large, &r);
            double w4 = work_encode(g_enc[e], b, large, ids, &c4);
            printf("    %-12s %-17s %5zu KB %10.0f (%5.2f/byte, %7zu ids)  %5zu KB %10.0f (%5.2f/byte, %8zu ids)  "
                   "ratio %.2f\n",
                   INFOS[e].name, KIND_NAMES[kind], small >> 10, w1, w1 / (double)small, c1, large >> 10, w4,
                   w4 / (double)large, c4, w1 > 0 ? w4 / w1 : 0.0);
            CHECK(w1 > 0 && w4 <= WORK_RATIO * w1, "%s %s: work %.0f at %zu KB, %.0f at %zu KB: ratio %.2f > %.0f",
                  INFOS[e].name, KIND_NAMES[kind], w1, small >> 10, w4, large >> 10, w1 > 0 ? w4 / w1 : 0.0,
                  WORK_RATIO);
        }
    }
    /* a model of merge rules over superbpe, whose pieces are whole lines: one piece of 64 KB (or
     * 4 MB) goes through the merge loop or the backtracking encoder at once */
    {
        /* rules that merge the units below a lot: runs of a, ab, " ab", é, "b\n", 中文, doubling */
        static const uint32_t merges[] = {
            'a', 'a', 256, 256, 257, 257,                     /* 256 aa, 257 a*4, 258 a*8 */
            'a', 'b', 259, 259, 260, 260,                     /* 259 ab, 260 abab, 261 (ab)*4 */
            ' ', 'a', 262, 'b', 'b', ' ', 263, 264,           /* 262 " a", 263 " ab", 264 "b ", 265 " abb " */
            0xC3, 0xA9, 266, 266, 0xD0, 0xBF, 266, 268,       /* 266 é, 267 éé, 268 п, 269 éп */
            'b', '\n', 270, 270,                              /* 270 "b\n", 271 "b\nb\n" */
            0xE4, 0xB8, 272, 0xAD, 0xE6, 0x96, 274, 0x87, 273, 275, 276, 276, /* 中, 文, 中文, 中文中文 */
            258, 258, 261, 261, 271, 271,                     /* 278 a*16, 279 (ab)*8, 280 (b\n)*4 */
        };
        size_t nm = sizeof merges / sizeof merges[0] / 2;
        st_encoding *enc = NULL;
        st_error err;
        CHECK(CHECKED(err, st_encoding_new_merges(ST_ALPHABET_BYTES, merges, nm, "", 0,
                                                  plain_pretokenizer(ST_PATTERN_SUPERBPE), NULL, &enc, &err)) == ST_OK,
              "superbpe rules model");
        static const char *const units[] = {"a", "ab", "a b", "ab \xC3\xA9\xD0\xBF.", "b\n", "\xE4\xB8\xAD\xE6\x96\x87"};
        for (size_t u = 0; enc && u < sizeof units / sizeof units[0]; u++) {
            size_t ul = strlen(units[u]), c1 = 0, c4 = 0;
            for (size_t i = 0; i + ul <= large; i += ul) memcpy(b + i, units[u], ul);
            size_t n1 = small / ul * ul, n4 = large / ul * ul;
            double w1 = work_encode(enc, b, n1, ids, &c1), w4 = work_encode(enc, b, n4, ids, &c4);
            printf("    %-12s unit %-14zu %5zu KB %10.0f (%5.2f/byte, %7zu ids)  %5zu KB %10.0f (%5.2f/byte, %8zu ids)  "
                   "ratio %.2f\n",
                   "superbpe", u, n1 >> 10, w1, w1 / (double)n1, c1, n4 >> 10, w4, w4 / (double)n4, c4,
                   w1 > 0 ? w4 / w1 : 0.0);
            CHECK(w1 > 0 && w4 <= WORK_RATIO * w1, "superbpe rules, unit %zu: work %.0f, then %.0f for 4x: ratio %.2f",
                  u, w1, w4, w1 > 0 ? w4 / w1 : 0.0);
        }
        st_encoding_free(enc);
    }
    free(b);
    free(ids);
}

/* ---- the error report, the special-token policy, offset units, token ids ---------------------- */

static int has(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void test_error_report(void) {
    for (int s = 0; s <= 11; s++) CHECK(st_status_name(s) != NULL && strncmp(st_status_name(s), "ST_", 3) == 0, "name %d", s);
    CHECK(strcmp(st_status_name(10), "ST_ERR_DISALLOWED_SPECIAL") == 0 && strcmp(st_status_name(11), "ST_ERR_UNSUPPORTED_PATTERN") == 0 &&
          strcmp(st_status_name(3), "ST_ERR_INVALID_UTF8") == 0 && st_status_name(12) == NULL && st_status_name(-1) == NULL,
          "status names");
    CHECK(sizeof(st_error) == 160 && offsetof(st_error, offset) == 8 && offsetof(st_error, line) == 16 &&
          offsetof(st_error, token) == 24 && offsetof(st_error, input) == 28 && offsetof(st_error, kind) == 32 &&
          offsetof(st_error, length) == 36 && offsetof(st_error, message) == 40,
          "st_error layout (hosts read it from memory)");
    for (int k = 0; k <= 10; k++) CHECK(st_error_kind_name(k) != NULL && strncmp(st_error_kind_name(k), "ST_KIND_", 8) == 0, "kind name %d", k);
    CHECK(strcmp(st_error_kind_name(ST_KIND_ID_REPEATED), "ST_KIND_ID_REPEATED") == 0 && st_error_kind_name(11) == NULL &&
          st_error_kind_name(-1) == NULL, "kind names");
    st_error e;
    int pat = 0;
    CHECK(st_pattern_from_regex("\\s+", 3, &pat, &e) == ST_ERR_UNSUPPORTED_PATTERN && e.status == 11 && e.message[0],
          "an unknown regex is refused");
    static const char sbpe[] = "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*| +(?!\\S)";
    CHECK(st_pattern_from_regex(sbpe, sizeof sbpe - 1, &pat, &e) == ST_OK && pat == ST_PATTERN_SUPERBPE,
          "SuperBPE's Stage-2 regex is ST_PATTERN_SUPERBPE");
    static const char llama3[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                                 "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    CHECK(st_pattern_from_regex(llama3, sizeof llama3 - 1, &pat, &e) == ST_OK && pat == ST_PATTERN_LLAMA3,
          "Llama 3's Split regex is ST_PATTERN_LLAMA3");
    /* DeepSeek V3's last regex, with CR and LF themselves inside its classes; with the escapes
     * \r\n instead it is another string, refused */
    static const char ds[] = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?"
                             "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
    static const char ds_escaped[] = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}"
                                     "\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    CHECK(st_pattern_from_regex(ds, sizeof ds - 1, &pat, &e) == ST_OK && pat == ST_PATTERN_DEEPSEEK_V3,
          "DeepSeek V3's last regex is ST_PATTERN_DEEPSEEK_V3");
    CHECK(st_pattern_from_regex(ds_escaped, sizeof ds_escaped - 1, &pat, &e) == ST_ERR_UNSUPPORTED_PATTERN,
          "DeepSeek V3's regex with \\r\\n escapes is another string");
    /* UTF-8: the byte offset */
    CHECK(st_utf8_validate("ab\xC3", 3, &e) == ST_ERR_INVALID_UTF8 && e.unit == ST_UNIT_BYTE && e.offset == 2, "utf8 offset");
    CHECK(st_utf8_validate("ab", 2, &e) == ST_OK && e.status == 0 && e.token == 0xFFFFFFFFu, "cleared on success");
    /* a rank file: line 3 is malformed; its byte offset, line number, input 0, a message */
    st_pretokenizer *pt = NULL;
    CHECK(st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, &e) == ST_OK, "pre-tokenizer");
    st_encoding *enc = NULL;
    const char *r1 = "YQ== 0\nYg== 1\nYw==2\n";
    st_status st = st_encoding_new_tiktoken(r1, strlen(r1), "", 0, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.status == 7 && e.unit == ST_UNIT_BYTE && e.offset == 14 && e.line == 3 &&
          e.input == 0 && has(e.message, "space"), "rank file line 3: %d offset %llu line %llu '%s'", st,
          (unsigned long long)e.offset, (unsigned long long)e.line, e.message);
    const char *r2 = "YQ== 0\n\nYg== 0\n";
    st = st_encoding_new_tiktoken(r2, strlen(r2), "", 0, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.line == 3 && e.offset == 8 && has(e.message, "rank 0") &&
          e.kind == ST_KIND_ID_REPEATED && e.token == 0 && e.input == 0,
          "repeated rank: line %llu kind %u '%s'", (unsigned long long)e.line, e.kind, e.message);
    /* what was wrong, as a kind (hosts word these in their own terms) */
    st = st_encoding_new_tiktoken(r1, 14, "PHg+ 1\n", 7, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.kind == ST_KIND_ID_TAKEN && e.token == 1 && e.input == 1 && e.line == 1 &&
          has(e.message, "id 1"), "a special with a rank's id: kind %u token %u '%s'", e.kind, e.token, e.message);
    st = st_encoding_new_tiktoken(r1, 14, "PHg+ 5\n 6\n", 10, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.kind == ST_KIND_EMPTY_TOKEN && e.input == 1 && e.line == 2,
          "an empty special: kind %u line %llu", e.kind, (unsigned long long)e.line);
    st = st_encoding_new_tiktoken(r1, 14, "PHg+ 3000000000\n", 16, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.kind == ST_KIND_ID_TOO_LARGE && e.input == 1 && has(e.message, "id above"),
          "a special id above 2^31 - 1: kind %u '%s'", e.kind, e.message);
    uint32_t two_rules[] = {97, 98};
    st = st_encoding_new_merges(ST_ALPHABET_BYTES, two_rules, 1, "PHg+ 300\nPHk+ 300\n", 18, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.kind == ST_KIND_ID_REPEATED && e.token == 300 && e.input == 1 && e.line == 2,
          "a rules model's special id given twice: kind %u token %u line %llu '%s'", e.kind, e.token,
          (unsigned long long)e.line, e.message);
    st_pretokenizer *bad_pt = NULL;
    st = st_pretokenizer_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "Han, Nope ,Thai", 15, NULL, &bad_pt, &e);
    CHECK(st == ST_ERR_UNKNOWN_SCRIPT && e.offset == 5 && e.length == 4 && e.kind == ST_KIND_NONE,
          "an unknown script: its offset %llu and length %u", (unsigned long long)e.offset, e.length);
    const char *r3 = "YQ== 0\nYg== 1\nYQ== 2\n";
    st = st_encoding_new_tiktoken(r3, strlen(r3), "", 0, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.line == 3 && has(e.message, "\"a\"") && has(e.message, "rank 0"),
          "repeated token: line %llu '%s'", (unsigned long long)e.line, e.message);
    /* the specials text: input 1, its own line numbers; the special's text named */
    const char *sp = "PHg+ 3\n/w== 4\n";
    st = st_encoding_new_tiktoken(r1, 14, sp, strlen(sp), pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.input == 1 && e.line == 2 && e.offset == 7 && has(e.message, "\\xff") &&
          has(e.message, "special token"), "special not UTF-8: input %u line %llu '%s'", e.input,
          (unsigned long long)e.line, e.message);
    CHECK(st_encoding_new_tiktoken(r1, 14, "", 0, NULL, NULL, &enc, &e) == ST_ERR_INVALID_ARGUMENT, "NULL pre-tokenizer");
    /* rules: the index of the bad rule */
    uint32_t bad_rules[] = {97, 98, 97, 98};
    st = st_encoding_new_merges(ST_ALPHABET_BYTES, bad_rules, 2, "", 0, pt, NULL, &enc, &e);
    CHECK(st == ST_ERR_MALFORMED_MODEL && e.unit == ST_UNIT_INDEX && e.offset == 1 && has(e.message, "repeats rule 0"),
          "repeated rule: '%s'", e.message);
    /* decode: the index of the bad id, the id */
    uint32_t ids[3] = {1, 2, 999999};
    uint8_t out[16];
    size_t n;
    st = st_decode(g_enc[O200K], ids, 3, out, sizeof out, &n, &e);
    CHECK(st == ST_ERR_INVALID_TOKEN && e.unit == ST_UNIT_INDEX && e.offset == 2 && e.token == 999999, "decode bad id");
    st_pretokenizer_free(pt);
}

/* A special id with several strings (tiktoken's o200k_harmony: 200018 is <|endofprompt|> and
 * <|reserved_200018|>): the policy treats each string on its own; decoding gives the first. */
static void test_special_strings(void) {
    st_error err;
    char bytes[256][1];
    const char *toks[256];
    size_t lens[256];
    uint32_t rank[256];
    for (int b = 0; b < 256; b++) { bytes[b][0] = (char)b; toks[b] = bytes[b]; lens[b] = 1; rank[b] = (uint32_t)b; }
    size_t rlen;
    char *ranks = make_rank_text(toks, lens, rank, 256, &rlen);
    const char *sp_toks[3] = {"<|eot|>", "<|eop|>", "<|r300|>"};
    size_t sp_lens[3] = {7, 7, 8};
    uint32_t sp_ids[3] = {256, 300, 300};
    size_t slen;
    char *specials = make_rank_text(sp_toks, sp_lens, sp_ids, 3, &slen);
    st_pretokenizer *pt = NULL;
    st_encoding *enc = NULL, *img_enc = NULL;
    st_error e;
    CHECK(CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, &err)) == ST_OK, "pre-tokenizer");
    st_status st = st_encoding_new_tiktoken(ranks, rlen, specials, slen, pt, NULL, &enc, &e);
    CHECK(st == ST_OK, "load with an id given two strings: %d '%s'", st, e.message);
    if (st != ST_OK) goto done;
    uint8_t *img = NULL;
    for (int round = 0; round < 2; round++) { /* the loaded encoding, then its image */
        st_encoding *x = round ? img_enc : enc;
        const uint8_t *p;
        size_t n, plen;
        uint32_t id, ids[64];
        CHECK(st_encoding_n_special(x) == 2 && st_encoding_n_special_strings(x) == 3, "2 specials, 3 strings");
        CHECK(st_encoding_special_string(x, 1, &id, &p, &plen, &e) == ST_OK && id == 300 && plen == 7 &&
              memcmp(p, "<|eop|>", 7) == 0, "string 1: the first of 300");
        CHECK(st_encoding_special_string(x, 2, &id, &p, &plen, &e) == ST_OK && id == 300 && plen == 8 &&
              memcmp(p, "<|r300|>", 8) == 0, "string 2: the further string of 300");
        CHECK(st_encoding_special_string(x, 3, &id, &p, &plen, &e) == ST_ERR_INVALID_ARGUMENT, "string 3: none");
        CHECK(st_token_bytes(x, 300, &p, &plen, &e) == ST_OK && plen == 7 && memcmp(p, "<|eop|>", 7) == 0,
              "decoding gives the first string");
        CHECK(st_token_id(x, (const uint8_t *)"<|r300|>", 8, &id, &e) == ST_OK && id == 300, "token_id of the second");
        const char *t = "a<|r300|>b<|eop|>";
        size_t len = strlen(t);
        uint32_t r = 2, eop = 1, id300 = 300;
        st_special_policy only_r_rest = {&r, 1, NULL, 0, ST_SPECIAL_BY_STRING | ST_SPECIAL_DISALLOW_REST, NULL, NULL};
        st = st_encode(x, t, len, &only_r_rest, 0, ids, NULL, 64, &n, &e);
        CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 10 && e.token == 300 && strcmp(e.message, "<|eop|>") == 0 &&
                  e.kind == ST_KIND_DISALLOWED_SPECIAL && e.length == 7,
              "one string allowed, the other disallowed: refused (%d %llu '%s')", st, (unsigned long long)e.offset,
              e.message);
        st_special_policy only_r = {&r, 1, NULL, 0, ST_SPECIAL_BY_STRING, NULL, NULL};
        st = st_encode(x, t, len, &only_r, 0, ids, NULL, 64, &n, &e);
        CHECK(st == ST_OK && n == 10 && ids[0] == 'a' && ids[1] == 300 && ids[2] == 'b' && ids[3] == '<',
              "one string allowed, the other neither: ordinary text (n %zu)", n);
        st_special_policy by_id = {&id300, 1, NULL, 0, ST_SPECIAL_DISALLOW_REST, NULL, NULL};
        st = st_encode(x, t, len, &by_id, 0, ids, NULL, 64, &n, &e);
        CHECK(st == ST_OK && n == 4 && ids[1] == 300 && ids[3] == 300, "an id allows every string of it");
        st_special_policy no_eop = {NULL, 0, &eop, 1, ST_SPECIAL_BY_STRING, NULL, NULL};
        st = st_encode(x, t, len, &no_eop, 0, ids, NULL, 64, &n, &e);
        CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 10 && strcmp(e.message, "<|eop|>") == 0,
              "the first string disallowed alone");
        st_special_policy no_r = {NULL, 0, &r, 1, ST_SPECIAL_BY_STRING | ST_SPECIAL_ALLOW_ALL, NULL, NULL};
        st = st_encode(x, t, len, &no_r, 0, ids, NULL, 64, &n, &e);
        CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 1 && strcmp(e.message, "<|r300|>") == 0 && e.length == 8 &&
                  e.token == 300,
              "the further string disallowed, even when all are allowed");
        uint32_t three = 3;
        st_special_policy bad = {&three, 1, NULL, 0, ST_SPECIAL_BY_STRING, NULL, NULL};
        st = st_encode(x, t, len, &bad, 0, ids, NULL, 64, &n, &e);
        CHECK(st == ST_ERR_INVALID_ARGUMENT && e.input == 1 && e.offset == 0, "no such string number");
        if (round == 0) { /* the image keeps the further strings */
            size_t size = 0;
            st_encoding_save_image(enc, NULL, 0, &size, &e);
            img = (uint8_t *)xmalloc(size);
            st = st_encoding_save_image(enc, img, size, &size, &e);
            if (st == ST_OK) st = st_encoding_from_image(img, size, NULL, &img_enc, &e);
            CHECK(st == ST_OK, "image round trip: %d '%s'", st, e.message);
            if (st != ST_OK) break;
        }
    }
    st_encoding_free(img_enc);
    free(img);
done:
    st_encoding_free(enc);
    st_pretokenizer_free(pt);
    free(ranks);
    free(specials);
}

/* A policy of strings (ST_SPECIAL_BY_TEXT): strings[ends[k-1] .. ends[k]), the allowed then
 * the disallowed. */
static st_special_policy text_policy(const char *strings, const size_t *ends, size_t n_allowed, size_t n_disallowed,
                                     uint32_t flags) {
    st_special_policy p = {NULL, n_allowed, NULL, n_disallowed, flags | ST_SPECIAL_BY_TEXT, strings, ends};
    return p;
}

/* The policy given as strings: resolved against the encoding's specials by the core, "all" as
 * flags, and a disallowed string that is no special token refused where the text holds it. */
static void test_special_policy_text(void) {
    st_encoding *enc = g_enc[O200K];
    const uint32_t eot = 199999, eop = 200018;
    const char *t = "a<|endoftext|>b<|endofprompt|>";
    size_t len = strlen(t), n = 0, m = 0;
    uint32_t ids[64], want[64];
    st_error e;
    /* empty sets, disallowed "all": the first special refused */
    st_special_policy rest = text_policy(NULL, NULL, 0, 0, ST_SPECIAL_DISALLOW_REST);
    st_status st = st_encode(enc, t, len, &rest, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 1 && e.token == eot && e.length == 13 &&
              e.kind == ST_KIND_DISALLOWED_SPECIAL,
          "text form, empty sets, rest: eot refused (%d)", st);
    /* empty sets, no flag: ordinary text, as a NULL policy */
    st_special_policy none = text_policy(NULL, NULL, 0, 0, 0);
    st = st_encode(enc, t, len, &none, 0, ids, NULL, 64, &n, &e);
    st_status st2 = st_encode(enc, t, len, NULL, 0, want, NULL, 64, &m, &e);
    CHECK(st == ST_OK && st2 == ST_OK && n == m && memcmp(ids, want, 4 * n) == 0, "text form, empty sets: ordinary");
    /* allowed "all" as a flag, and as every string named */
    st_special_policy all = text_policy(NULL, NULL, 0, 0, ST_SPECIAL_ALLOW_ALL | ST_SPECIAL_DISALLOW_REST);
    st = st_encode(enc, t, len, &all, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_OK && n == 4 && ids[1] == eot && ids[3] == eop, "text form, allow all");
    const char *both = "<|endofprompt|><|endoftext|>not a special";
    size_t both_ends[3] = {15, 28, 41};
    st_special_policy named = text_policy(both, both_ends, 3, 0, ST_SPECIAL_DISALLOW_REST);
    st = st_encode(enc, t, len, &named, 0, want, NULL, 64, &m, &e);
    CHECK(st == ST_OK && m == 4 && memcmp(ids, want, 4 * n) == 0, "both named, a string that is none ignored");
    /* one allowed, the rest disallowed */
    st_special_policy one = text_policy(both + 15, both_ends, 1, 0, ST_SPECIAL_DISALLOW_REST);
    size_t one_end[1] = {13};
    one.ends = one_end;
    st = st_encode(enc, t, len, &one, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 15 && e.token == eop, "eot allowed: eop refused at 15");
    /* a disallowed string that is no special token, found at its offset with no token */
    const char *dis = "<|endoftext|>ZZ";
    size_t dis_ends[2] = {13, 15};
    st_special_policy unknown = text_policy(dis, dis_ends, 0, 2, 0);
    const char *t2 = "hello ZZ<|endoftext|>";
    st = st_encode(enc, t2, strlen(t2), &unknown, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.kind == ST_KIND_DISALLOWED_SPECIAL && e.unit == ST_UNIT_BYTE &&
              e.offset == 6 && e.length == 2 && e.token == 0xFFFFFFFFu && strcmp(e.message, "ZZ") == 0,
          "unknown disallowed string at 6 (%d %llu %u)", st, (unsigned long long)e.offset, e.token);
    const char *t3 = "hello <|endoftext|>ZZ";
    st = st_encode(enc, t3, strlen(t3), &unknown, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 6 && e.length == 13 && e.token == eot,
          "the special first: its id");
    st = st_encode(enc, "hello Z", 7, &unknown, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_OK && n == 2, "neither in the text");
    /* in a long text, past the first bytes; and counted, and in a batch (offset from texts) */
    char *big = (char *)xmalloc(50000);
    for (size_t i = 0; i < 50000; i++) big[i] = "hello <world> |x| endoftext "[i % 28];
    memcpy(big + 40001, "ZZ", 2);
    st = st_encode_count(enc, big, 50000, &unknown, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 40001 && e.token == 0xFFFFFFFFu, "long text: at 40001");
    free(big);
    const char *texts = "abc" "deZZ";
    size_t offs[3] = {0, 3, 7}, counts[2];
    st = st_encode_many(enc, texts, offs, 2, &unknown, ids, 64, counts, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 5 && e.length == 2, "batch: offset from texts");
    /* overlapping strings at one place: the longest wins, an unknown one longer than a special too */
    const char *ov = "<|endoftext|><|endoftext|>!<|endo";
    size_t ov_ends[3] = {13, 27, 33};
    st_special_policy overlap = text_policy(ov, ov_ends, 0, 3, 0);
    const char *t4 = "x<|endoftext|>!y";
    st = st_encode(enc, t4, strlen(t4), &overlap, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 1 && e.length == 14 && e.token == 0xFFFFFFFFu &&
              strcmp(e.message, "<|endoftext|>!") == 0,
          "longest at one place (%llu %u)", (unsigned long long)e.length, e.token);
    const char *t5 = "x<|endoftext|>y";
    st = st_encode(enc, t5, strlen(t5), &overlap, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 1 && e.length == 13 && e.token == eot,
          "a special longer than an unknown prefix of it");
    /* allowed and disallowed both: refused; allowed all, one disallowed by name */
    const char *ad = "<|endofprompt|><|endofprompt|>";
    size_t ad_ends[2] = {15, 30};
    st_special_policy both_ways = text_policy(ad, ad_ends, 1, 1, 0);
    st = st_encode(enc, t, len, &both_ways, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 15 && e.token == eop, "allowed and disallowed: refused");
    st_special_policy all_but = text_policy(ad, ad_ends + 1, 0, 1, ST_SPECIAL_ALLOW_ALL);
    size_t first_end[1] = {15};
    all_but.ends = first_end;
    st = st_encode(enc, t, len, &all_but, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 15 && e.token == eop, "all allowed, one disallowed");
    /* an empty disallowed string is found at offset 0, in any text, the empty one included */
    const char *emp = "ZZ";
    size_t emp_ends[2] = {0, 2};
    st_special_policy empty = text_policy(emp, emp_ends, 0, 2, 0);
    st = st_encode(enc, "abc", 3, &empty, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 0 && e.length == 0 && e.token == 0xFFFFFFFFu &&
              e.message[0] == 0,
          "empty string at 0");
    st = st_encode(enc, "", 0, &empty, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 0 && e.length == 0, "empty string in an empty text");
    st = st_encode(enc, "ZZa", 3, &empty, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 0 && e.length == 2, "a longer one at 0 wins over the empty");
    /* malformed: ends going back, a numbered list beside the strings, both form flags */
    size_t back[2] = {2, 1};
    st_special_policy bad = text_policy("ab", back, 0, 2, 0);
    CHECK(st_encode(enc, "abc", 3, &bad, 0, ids, NULL, 64, &n, &e) == ST_ERR_INVALID_ARGUMENT, "ends going back");
    st_special_policy no_ends = text_policy("ab", NULL, 1, 0, 0);
    CHECK(st_encode(enc, "abc", 3, &no_ends, 0, ids, NULL, 64, &n, &e) == ST_ERR_INVALID_ARGUMENT, "no ends");
    st_special_policy mixed = text_policy("ab", emp_ends + 1, 1, 0, ST_SPECIAL_BY_STRING);
    CHECK(st_encode(enc, "abc", 3, &mixed, 0, ids, NULL, 64, &n, &e) == ST_ERR_INVALID_ARGUMENT, "two form flags");
    mixed.flags = ST_SPECIAL_BY_TEXT;
    mixed.allowed = &eot;
    CHECK(st_encode(enc, "abc", 3, &mixed, 0, ids, NULL, 64, &n, &e) == ST_ERR_INVALID_ARGUMENT, "ids and strings");
}

static void test_special_policy(void) {
    st_encoding *enc = g_enc[O200K];
    const uint32_t eot = 199999, eop = 200018;
    const char *t = "a<|endoftext|>b<|endofprompt|>";
    size_t len = strlen(t), n = 0;
    uint32_t ids[64];
    st_error e;
    st_special_policy rest = {NULL, 0, NULL, 0, ST_SPECIAL_DISALLOW_REST, NULL, NULL};
    st_status st = st_encode(enc, t, len, &rest, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.unit == ST_UNIT_BYTE && e.offset == 1 && e.token == eot &&
          strcmp(e.message, "<|endoftext|>") == 0, "default: the first disallowed special (%d, %llu, %u)", st,
          (unsigned long long)e.offset, e.token);
    uint32_t only_eot = eot, both[2] = {eop, eot};
    st_special_policy p1 = {&only_eot, 1, NULL, 0, ST_SPECIAL_DISALLOW_REST, NULL, NULL};
    st = st_encode(enc, t, len, &p1, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 15 && e.token == eop, "eot allowed: eop refused at 15");
    st_special_policy p2 = {both, 2, NULL, 0, ST_SPECIAL_DISALLOW_REST, NULL, NULL};
    st = st_encode(enc, t, len, &p2, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_OK && n == 4 && ids[1] == eot && ids[3] == eop, "both allowed");
    uint32_t all_ids[64];
    size_t n_all = 0;
    st_special_policy pall = {NULL, 0, NULL, 0, ST_SPECIAL_ALLOW_ALL | ST_SPECIAL_DISALLOW_REST, NULL, NULL};
    st = st_encode(enc, t, len, &pall, 0, all_ids, NULL, 64, &n_all, &e);
    CHECK(st == ST_OK && n_all == n && memcmp(all_ids, ids, 4 * n) == 0, "allow all");
    /* listed as disallowed: refused even when allowed (tiktoken checks the raw text) */
    st_special_policy p3 = {NULL, 0, &eop, 1, ST_SPECIAL_ALLOW_ALL, NULL, NULL};
    st = st_encode(enc, t, len, &p3, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 15 && e.token == eop, "allowed and disallowed: refused");
    /* earliest first, whatever the order of the specials' ids */
    const char *t2 = "x<|endofprompt|>y<|endoftext|>";
    st = st_encode(enc, t2, strlen(t2), &rest, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 1 && e.token == eop, "earliest disallowed first");
    /* ids that are no special: the index, which list */
    uint32_t bad[2] = {eot, 12345};
    st_special_policy p4 = {NULL, 0, bad, 2, 0, NULL, NULL};
    st = st_encode(enc, "abc", 3, &p4, 0, ids, NULL, 64, &n, &e);
    CHECK(st == ST_ERR_INVALID_ARGUMENT && e.unit == ST_UNIT_INDEX && e.offset == 1 && e.input == 2 && e.token == 12345,
          "bad disallowed id");
    st_special_policy p5 = {bad + 1, 1, NULL, 0, 0, NULL, NULL};
    st = st_encode_count(enc, "abc", 3, &p5, &n, &e);
    CHECK(st == ST_ERR_INVALID_ARGUMENT && e.offset == 0 && e.input == 1, "bad allowed id (count)");
    /* NULL policy: encode_ordinary */
    st = st_encode(enc, t, len, NULL, 0, ids, NULL, 64, &n, &e);
    size_t ordinary_n = n;
    CHECK(st == ST_OK && n > 4, "NULL policy: specials are text");
    st = st_encode_count(enc, t, len, NULL, &n, &e);
    CHECK(st == ST_OK && n == ordinary_n && e.status == 0, "count, NULL policy");
    /* text with no special at all, under the default policy, in a long text (the word scan) */
    char *big = (char *)xmalloc(50000);
    for (size_t i = 0; i < 50000; i++) big[i] = "hello <world> |x| endoftext "[i % 28];
    uint32_t *bi = (uint32_t *)xmalloc(50000 * 4), *bj = (uint32_t *)xmalloc(50000 * 4);
    size_t bn = 0, bm = 0;
    st = st_encode(enc, big, 50000, &rest, 0, bi, NULL, 50000, &bn, &e);
    st_status st2 = st_encode(enc, big, 50000, NULL, 0, bj, NULL, 50000, &bm, &e);
    CHECK(st == ST_OK && st2 == ST_OK && bn == bm && memcmp(bi, bj, 4 * bn) == 0, "long text, no special: same ids");
    memcpy(big + 40003, "<|endoftext|>", 13);
    st = st_encode(enc, big, 50000, &rest, 0, bi, NULL, 50000, &bn, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 40003, "long text: special at 40003 (%llu)", (unsigned long long)e.offset);
    /* encode_many: the offset counts from the start of texts */
    const char *texts = "abc" "de<|endoftext|>";
    size_t offs[3] = {0, 3, 18}, counts[2];
    st = st_encode_many(enc, texts, offs, 2, &rest, bi, 100, counts, &n, &e);
    CHECK(st == ST_ERR_DISALLOWED_SPECIAL && e.offset == 5 && e.token == eot, "encode_many: offset in texts (%llu)",
          (unsigned long long)e.offset);
    free(big);
    free(bi);
    free(bj);
}

/* starts in bytes, code points and UTF-16 units agree with each other, the tiktoken rule
 * (a token starting inside a character gets the character's offset) in each */
static void test_offset_units(void) {
    static const char *texts[] = {
        "a\xE2\x82\xAC\xF0\x9F\x98\x80" "b \xF0\x9D\x94\x98\xF0\x9D\x94\xAB\xF0\x9D\x94\xA6 caf\xC3\xA9",
        "\xF0\x90\x8C\xB0\xF0\x90\x8C\xB1\xF0\x90\x8C\xB2 \xE4\xB8\xAD\xE6\x96\x87 x\xCC\x81",
    };
    for (int e = 0; e < N_ENC; e++)
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            const char *t = texts[k];
            size_t len = strlen(t), nb, nc, nu;
            uint32_t ids[64], ids2[64];
            size_t sb[64], sc[64], su[64];
            st_error err;
            st_status s1 = st_encode(g_enc[e], t, len, NULL, ST_OFFSETS_BYTES, ids, sb, 64, &nb, &err);
            st_status s2 = st_encode(g_enc[e], t, len, NULL, ST_OFFSETS_CODEPOINTS, ids2, sc, 64, &nc, &err);
            st_status s3 = st_encode(g_enc[e], t, len, NULL, ST_OFFSETS_UTF16, ids2, su, 64, &nu, &err);
            CHECK(s1 == ST_OK && s2 == ST_OK && s3 == ST_OK && nb == nc && nb == nu, "units: %d %d %d", s1, s2, s3);
            int ok = 1, inside = 0;
            size_t prev = 0;
            for (size_t i = 0; i < nb && ok; i++) {
                size_t b = 0; /* this token's start, moved back to its character's start */
                size_t raw = 0;
                for (size_t j = 0; j < i; j++) {
                    const uint8_t *p;
                    size_t l;
                    st_token_bytes(g_enc[e], ids[j], &p, &l, NULL);
                    raw += l;
                }
                b = raw;
                while (b > 0 && ((uint8_t)t[b] & 0xC0) == 0x80) b--;
                inside |= b != raw;
                size_t cps = 0, u16 = 0;
                for (size_t j = 0; j < b; j++)
                    if (((uint8_t)t[j] & 0xC0) != 0x80) { cps++; u16 += (uint8_t)t[j] >= 0xF0 ? 2 : 1; }
                ok = sb[i] == b && sc[i] == cps && su[i] == u16 && sb[i] >= prev;
                prev = sb[i];
            }
            CHECK(ok, "enc %d text %zu: starts in bytes, code points, UTF-16 agree", e, k);
            if (e == O200K && k == 0) CHECK(inside, "the test text has a token starting inside a character");
        }
    size_t n;
    uint32_t id;
    st_error err;
    CHECK(st_encode(g_enc[O200K], "a", 1, NULL, 3, &id, NULL, 1, &n, &err) == ST_ERR_INVALID_ARGUMENT, "unknown unit");
}

static void test_token_id(void) {
    st_error e;
    uint32_t id = 0;
    CHECK(st_token_id(g_enc[O200K], (const uint8_t *)"\xE5", 1, &id, &e) == ST_OK && id == 161, "o200k b'\\xe5' is 161 (%u)", id);
    CHECK(st_token_id(g_enc[O200K], (const uint8_t *)"<|endoftext|>", 13, &id, &e) == ST_OK && id == 199999, "special by text");
    CHECK(st_token_id(g_enc[O200K], (const uint8_t *)"<|endoftext|>x", 14, &id, &e) == ST_ERR_INVALID_TOKEN &&
          e.status == ST_ERR_INVALID_TOKEN && id == 0xFFFFFFFFu, "no such token");
    CHECK(st_token_id(g_enc[O200K], NULL, 0, &id, &e) == ST_ERR_INVALID_TOKEN, "no empty token");
    for (int en = 0; en < N_ENC; en++) {
        int ok = 1;
        uint32_t nv = st_encoding_n_vocab(g_enc[en]);
        for (uint32_t t = 0; t < nv && ok; t += (t < 1000 ? 1 : 37)) {
            const uint8_t *p;
            size_t l;
            if (st_token_bytes(g_enc[en], t, &p, &l, NULL) != ST_OK) continue; /* a gap */
            ok = st_token_id(g_enc[en], p, l, &id, &e) == ST_OK && id == t;
        }
        CHECK(ok, "enc %d: token_id(token_bytes(t)) == t", en);
    }
    /* a UBE rule model: bytes are its symbols, 2 LE bytes each */
    st_pretokenizer *pt = NULL;
    st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, NULL);
    uint32_t rules[] = {0x4E2D & 0, 0, 256 + 0x2D, 256 + 0x4E}; /* rule 0: sym 0 + sym 0; rule 1: U+4E2D's symbols */
    st_encoding *ube = NULL;
    CHECK(st_encoding_new_merges(ST_ALPHABET_UBE, rules, 2, "", 0, pt, NULL, &ube, &e) == ST_OK, "UBE model");
    if (ube) {
        const uint8_t sym2[4] = {0x2D, 0x01, 0x4E, 0x01};
        CHECK(st_token_id(ube, sym2, 4, &id, &e) == ST_OK && id == 513, "UBE: the rule's symbols give its id (%u)", id);
        CHECK(st_token_id(ube, sym2, 2, &id, &e) == ST_OK && id == 256 + 0x2D, "UBE: one symbol");
        st_encoding_free(ube);
    }
    st_pretokenizer_free(pt);
}

/* The scratch block a handle reuses: a long text, then a shorter one, then many calls at
 * once; ids always as with fresh caches (an entry from an earlier call must never be read:
 * the sanitizers would see a read past the shorter text). */
static void test_scratch_reuse(void) {
    st_encoding *enc = g_enc[O200K];
    size_t big = 60000;
    char *t = (char *)xmalloc(big);
    static const char unit[] = "Unbelievable misunderstandings \xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 ";
    big -= big % (sizeof unit - 1); /* whole repeats: valid UTF-8 */
    for (size_t i = 0; i < big; i++) t[i] = unit[i % (sizeof unit - 1)];
    uint32_t *a = (uint32_t *)xmalloc(big * 4), *b = (uint32_t *)xmalloc(big * 4);
    size_t na, nb;
    st_encode(enc, t, big, NULL, 0, a, NULL, big, &na, NULL);
    size_t small = 9000;
    while (((uint8_t)t[5 + small] & 0xC0) == 0x80) small--;
    st_status st = st_encode(enc, t + 5, small, NULL, 0, a, NULL, big, &na, NULL);
    /* the same text below the cache threshold, in pieces that keep the splits: no cache */
    size_t pos = 5, total = 0;
    int ok = st == ST_OK;
    while (ok && pos < 5 + small) {
        size_t end = pos + 4000 < 5 + small ? pos + 4000 : 5 + small;
        while (end < 5 + small && t[end] != ' ') end++; /* cut before a space */
        size_t got = 0;
        ok = st_encode(enc, t + pos, end - pos, NULL, 0, b + total, NULL, big - total, &got, NULL) == ST_OK;
        total += got;
        pos = end;
    }
    CHECK(ok && total == na && memcmp(a, b, 4 * na) == 0, "scratch reused for a shorter text: same ids (%zu vs %zu)",
          na, total);
    nb = 0;
    for (int k = 0; k < 3; k++) {
        st = st_encode(enc, t, big, NULL, 0, b, NULL, big, &nb, NULL);
        if (k == 0) st_encode(enc, t, big, NULL, 0, a, NULL, big, &na, NULL);
    }
    CHECK(st == ST_OK && na == nb && memcmp(a, b, 4 * na) == 0, "repeated calls: same ids");
    free(t);
    free(a);
    free(b);
}


/* A piece cache that grows keeps what it holds: a handle's short table starts at 512 lines and
 * doubles with the text the handle has seen (piece_cache.c: cache_slots_want); a table made
 * empty at each doubling missed, in the call after it, every piece seen before. Here a fresh
 * handle (an image of o200k's) encodes 250 distinct multi-token words (fewer than its first
 * table's 512 lines hold), then 64 KB of one-token words (the handle has then seen enough for
 * its table to grow), then the first words in the opposite order (other spans, so the span cache
 * holds none of them): nearly every piece is found (a set of 8 lines may have overflowed), where
 * the table made empty found none, and the ids are those of the shared handle. */
static void test_cache_grows_keeping_entries(void) {
    st_error err;
    size_t sz = 0;
    st_encoding_save_image(g_enc[O200K], NULL, 0, &sz, NULL);
    uint64_t *img = (uint64_t *)xmalloc(sz + 8);
    st_encoding *enc = NULL;
    CHECK(CHECKED(err, st_encoding_save_image(g_enc[O200K], (uint8_t *)img, sz, &sz, &err)) == ST_OK &&
              CHECKED(err, st_encoding_from_image(img, sz, NULL, &enc, &err)) == ST_OK,
          "an image of o200k_base");
    if (!enc) { free(img); return; }
    /* 250 words of 9 bytes, and the same words last to first, each text then " the" up to 8 KB
     * (the piece cache serves texts of 8 KB and more) */
    enum { WORDS = 250, LEN = 9, TEXT = 8192 };
    char *words = (char *)xmalloc(TEXT + 1), *back = (char *)xmalloc(TEXT + 1);
    char *filler = (char *)xmalloc(65536);
    for (unsigned k = 0; k < WORDS; k++) {
        snprintf(words + LEN * k, LEN + 1, " zq%cx%cvu%c", 'a' + k % 26, 'a' + k / 26 % 26, 'a' + k / 676 % 26);
        memcpy(back + LEN * (WORDS - 1 - k), words + LEN * k, LEN);
    }
    size_t n = TEXT;
    for (size_t i = 0; i < 65536; i++) filler[i] = " the"[i % 4];
    memcpy(words + WORDS * LEN, filler, TEXT - WORDS * LEN);
    memcpy(back + WORDS * LEN, filler, TEXT - WORDS * LEN);
    uint32_t *a = (uint32_t *)xmalloc(4 * 65536), *b = (uint32_t *)xmalloc(4 * 65536);
    size_t na = 0, nb = 0, nf = 0;
    st_cache_info before, after, grown;
    st_status st = st_encode(enc, words, n, NULL, 0, a, NULL, 65536, &na, NULL);
    st_encoding_cache_info(enc, &before);
    CHECK(st == ST_OK && before.misses > 240, "the words are pieces to merge: %llu misses",
          (unsigned long long)before.misses);
    st = st_encode(enc, filler, 65536, NULL, 0, b, NULL, 65536, &nf, NULL);
    st_encoding_cache_info(enc, &grown);
    CHECK(st == ST_OK && grown.bytes > before.bytes, "the tables grew: %llu -> %llu bytes",
          (unsigned long long)before.bytes, (unsigned long long)grown.bytes);
    st = st_encode(enc, back, n, NULL, 0, b, NULL, 65536, &nb, NULL);
    st_encoding_cache_info(enc, &after);
    CHECK(st == ST_OK && st_encode(g_enc[O200K], back, n, NULL, 0, a, NULL, 65536, &na, NULL) == ST_OK && na == nb &&
              memcmp(a, b, 4 * na) == 0,
          "the shared handle's ids after the growth");
    CHECK(after.hits - grown.hits >= before.misses * 95 / 100 && after.hits - grown.hits + after.misses - grown.misses ==
              before.misses,
          "the pieces found after the growth: %llu misses, %llu hits of %llu pieces",
          (unsigned long long)(after.misses - grown.misses), (unsigned long long)(after.hits - grown.hits),
          (unsigned long long)before.misses);
    st_encoding_free(enc);
    free(img);
    free(words);
    free(back);
    free(filler);
    free(a);
    free(b);
}

/* ---- superword models (docs/design.md §7) ---------------------------------------------------- */

/* A byte-level superword model, ids derived by hand. Rules (ids 256-263):
 *   256 " t" = (32 ' ', 116 't')   257 " th" = (256, 'h')   258 " the" = (257, 'e')
 *   259 "ca" = ('c', 'a')          260 " ca" = (32, 259)    261 " cat" = (260, 't')
 *   262 "th" = ('t', 'h')          263 "the" = (262, 'e')
 * Supermerges (ids 264-269; a lower id is applied first):
 *   264 " the cat" = (258, 261)    265 "the cat" = (263, 261)   266 " the cat the" = (264, 258)
 *   267 " cat the" = (261, 258)    268 " the." = (258, 46 '.'): '.' holds no letter, so a
 *   pretoken "." is never in a run and 268 is never made; 269 "thethe" = (263, 263): both
 *   halves are the tokens of ONE pretoken "thethe", which the superword pass never joins.
 * The special <|e|> is 270. The gpt2 pattern splits "the cat the" into "the", " cat", " the". */
static const char SW_BYTES[] =
    "supertok-model 1\nname sw\nkind rules\nalphabet bytes\npattern gpt2\nscript-aware no\n"
    "merges 8\n32 116\n256 104\n257 101\n99 97\n32 259\n260 116\n116 104\n262 101\n"
    "supermerges 6\n258 261\n263 261\n264 258\n261 258\n258 46\n263 263\n"
    "specials 1\n270 <|e|>\nend\n";

/* A UBE superword model: 中 (U+4E2D) is the symbols 256 + 0x2D, 256 + 0x4E; 文 (U+6587)
 * 256 + 0x87, 256 + 0x65. Rules (ids 512-515): 512 中 = (301, 334), 513 " 中" = (32, 512),
 * 514 文 = (391, 357), 515 " 文" = (32, 514). Supermerge 516 " 中 文" = (513, 515). */
static const char SW_UBE[] =
    "supertok-model 1\nname swu\nkind rules\nalphabet ube\npattern cl100k\nscript-aware no\n"
    "merges 4\n301 334\n32 512\n391 357\n32 514\nsupermerges 1\n513 515\nspecials 0\nend\n";

/* Encode text with <|e|> (270) allowed in SW_BYTES; check ids and code point starts. */
static void sw_case(const st_encoding *enc, const char *text, const uint32_t *want, const size_t *want_at, size_t n) {
    st_error err;
    uint32_t ids[64];
    size_t at[64], got = 0, counted = 0;
    static const uint32_t allowed[] = {270};
    size_t n_allowed = st_encoding_n_special(enc) ? 1 : 0;
    st_status st = CHECKED(err, st_encode(enc, text, strlen(text),
                                          &(st_special_policy){.allowed = allowed, .n_allowed = n_allowed},
                                          ST_OFFSETS_CODEPOINTS, ids, at, 64, &got, &err));
    int ok = st == ST_OK && got == n;
    for (size_t k = 0; ok && k < n; k++) ok = ids[k] == want[k] && (!want_at || at[k] == want_at[k]);
    CHECK(ok, "superwords: '%s': %d, %zu ids (want %zu), first %u", text, st, got, n, got ? ids[0] : 0);
    CHECK(CHECKED(err, st_encode_count(enc, text, strlen(text),
                                       &(st_special_policy){.allowed = allowed, .n_allowed = n_allowed}, &counted,
                                       &err)) == ST_OK &&
              counted == n,
          "superwords: count of '%s'", text);
}

static void test_superwords(void) {
    st_encoding *enc = NULL;
    st_error err;
    st_status st = st_encoding_new_model(SW_BYTES, sizeof SW_BYTES - 1, NULL, &enc, &err);
    CHECK(st == ST_OK, "superword model: %d %s", st, err.message);
    if (!enc) return;
    CHECK(st_encoding_n_vocab(enc) == 271, "superword model: n_vocab %u", st_encoding_n_vocab(enc));
    /* [263 the, 261 cat, 258 the, 261 cat]: pairs 265, 267, 264; 264 first -> [263, 261, 264];
     * then 265 -> [265, 264] */
    sw_case(enc, "the cat the cat", (const uint32_t[]){265, 264}, (const size_t[]){0, 7}, 2);
    /* [258, 261, 258, 261]: 264 at 0 and 2, the leftmost first -> [264, 258, 261]: then 264
     * (rank below 266) -> [264, 264] */
    sw_case(enc, " the cat the cat", (const uint32_t[]){264, 264}, (const size_t[]){0, 8}, 2);
    /* [258, 261, 258]: 264 -> [264, 258] -> 266 */
    sw_case(enc, " the cat the", (const uint32_t[]){266}, (const size_t[]){0}, 1);
    /* [261, 258, 261]: 264 (at 1) before 267 (at 0) -> [261, 264] */
    sw_case(enc, " cat the cat", (const uint32_t[]){261, 264}, (const size_t[]){0, 4}, 2);
    /* '.' has no letter: 268 never applies */
    sw_case(enc, " the.", (const uint32_t[]){258, 46}, (const size_t[]){0, 4}, 2);
    /* one pretoken "thethe": the rules give [263, 263]; 269 joins pretokens only */
    sw_case(enc, "thethe", (const uint32_t[]){263, 263}, (const size_t[]){0, 3}, 2);
    /* a special token ends a run; the text's ends too */
    sw_case(enc, " the<|e|> cat", (const uint32_t[]){258, 270, 261}, (const size_t[]){0, 4, 9}, 3);
    sw_case(enc, " the cat<|e|> the cat", (const uint32_t[]){264, 270, 264}, (const size_t[]){0, 8, 13}, 3);
    /* a piece of two tokens ends a run: " c" is [32, 99] */
    sw_case(enc, " the c cat", (const uint32_t[]){258, 32, 99, 261}, NULL, 4);
    sw_case(enc, "", NULL, NULL, 0);
    sw_case(enc, " the", (const uint32_t[]){258}, NULL, 1);

    /* long runs: past ST_RUN_LINEAR the heap merge. "the" + k x " cat the" is
     * [263, 261, (258, 261) x (k-1), 258]: every (258, 261) becomes 264 left to right, then 265
     * joins the first two and 266 the last two: [265, 264 x (k-2), 266]. */
    for (int k = 3; k <= 40; k += 37) {
        char text[512];
        size_t len = (size_t)sprintf(text, "the");
        for (int i = 0; i < k; i++) len += (size_t)sprintf(text + len, " cat the");
        uint32_t want[64];
        size_t n = 0;
        want[n++] = 265;
        for (int i = 0; i < k - 2; i++) want[n++] = 264;
        want[n++] = 266;
        sw_case(enc, text, want, NULL, n);
    }
    /* texts long enough for the piece cache (8 KB): hits replay into the run too; the second
     * text's runs end at each '.' */
    static const char *units[] = {" the cat", " the cat."};
    for (int u = 0; u < 2; u++) {
        size_t reps = 1100, ul = strlen(units[u]), len = reps * ul, got = 0;
        char *text = (char *)xmalloc(len + 1);
        for (size_t i = 0; i < reps; i++) memcpy(text + i * ul, units[u], ul);
        text[len] = 0;
        uint32_t *ids = (uint32_t *)xmalloc(len * sizeof(uint32_t));
        st = CHECKED(err, st_encode(enc, text, len, NULL, 0, ids, NULL, len, &got, &err));
        size_t per = u ? 2 : 1, bad = 0;
        for (size_t i = 0; i < got; i++) bad += ids[i] != (i % per ? 46u : 264u);
        CHECK(st == ST_OK && got == reps * per && bad == 0, "superwords: '%s' x %zu: %d, %zu ids, %zu wrong", units[u],
              reps, st, got, bad);
        free(ids);
        free(text);
    }
    /* decoding: a supermerge token's bytes are its parts' */
    const uint8_t *p;
    size_t len;
    uint8_t out[64];
    CHECK(CHECKED(err, st_token_bytes(enc, 264, &p, &len, &err)) == ST_OK && len == 8 && memcmp(p, " the cat", 8) == 0,
          "bytes of 264");
    CHECK(CHECKED(err, st_token_bytes(enc, 266, &p, &len, &err)) == ST_OK && len == 12 &&
              memcmp(p, " the cat the", 12) == 0,
          "bytes of 266");
    CHECK(CHECKED(err, st_decode(enc, (const uint32_t[]){265, 264, 270}, 3, out, sizeof out, &len, &err)) == ST_OK &&
              len == 20 && memcmp(out, "the cat the cat<|e|>", 20) == 0,
          "decode superwords");
    uint32_t id = 0;
    CHECK(st_token_id(enc, (const uint8_t *)" the cat", 8, &id, &err) == ST_OK && id == 264, "token id of 264");
    CHECK(st_token_id(enc, (const uint8_t *)"the", 3, &id, &err) == ST_OK && id == 263, "token id of 263");
    size_t offs[3];
    CHECK(st_decode_with_offsets(enc, (const uint32_t[]){265, 264, 270}, 3, ST_UNIT_CODEPOINT, out, sizeof out, &len,
                                 offs, &err) == ST_OK &&
              offs[0] == 0 && offs[1] == 7 && offs[2] == 15,
          "offsets of superwords");
    st_decoder *d = NULL;
    CHECK(st_decoder_new(enc, 0, NULL, &d, &err) == ST_OK, "decoder");
    if (d) {
        size_t a = 0, b = 0;
        st_status s1 = st_decoder_feed(d, (const uint32_t[]){265}, 1, 0, out, sizeof out, &a, &err);
        st_status s2 = st_decoder_feed(d, (const uint32_t[]){264}, 1, ST_UBE_FINAL, out + a, sizeof out - a, &b, &err);
        CHECK(s1 == ST_OK && s2 == ST_OK && a + b == 15 && memcmp(out, "the cat the cat", 15) == 0, "stream superwords");
        st_decoder_free(d);
    }
    st_encoding_free(enc);

    /* UBE: " 中 文 中" is [513, 515, 513] -> [516, 513]; 516's symbols are its parts' */
    enc = NULL;
    st = st_encoding_new_model(SW_UBE, sizeof SW_UBE - 1, NULL, &enc, &err);
    CHECK(st == ST_OK, "UBE superword model: %d %s", st, err.message);
    if (!enc) return;
    sw_case(enc, " \xe4\xb8\xad \xe6\x96\x87 \xe4\xb8\xad", (const uint32_t[]){516, 513}, (const size_t[]){0, 4}, 2);
    uint16_t sym[8];
    size_t ns = 0;
    CHECK(CHECKED(err, st_token_symbols(enc, 516, sym, 8, &ns, &err)) == ST_OK && ns == 6 && sym[0] == 32 &&
              sym[1] == 301 && sym[2] == 334 && sym[3] == 32 && sym[4] == 391 && sym[5] == 357,
          "symbols of 516");
    CHECK(CHECKED(err, st_decode_text(enc, (const uint32_t[]){516, 513}, 2, 0, out, sizeof out, &len, &err)) == ST_OK &&
              len == 12 && memcmp(out, " \xe4\xb8\xad \xe6\x96\x87 \xe4\xb8\xad", 12) == 0,
          "UBE decode superwords");
    st_encoding_free(enc);
}

/* ---- encode_with_unstable (st_unstable_*) ------------------------------------------------- */

/* Every completion of the text a handle holds, collected with buffers of cap ids and
 * max_completions lengths a call (cap 0: each completion asked for with the size the call
 * before reported). */
typedef struct completions {
    uint32_t *ids; /* one after another */
    size_t *start; /* where completion k starts in ids; start[n] = n_ids */
    size_t n, n_ids;
} completions;

static void completions_free(completions *c) {
    free(c->ids);
    free(c->start);
}

static void collect_completions(st_unstable *u, size_t cap, size_t max_completions, completions *c, const char *what) {
    size_t ucap = st_unstable_length(u), ids_cap = 64, starts_cap = 64, calls = 0;
    c->ids = (uint32_t *)xmalloc(ids_cap * sizeof *c->ids);
    c->start = (size_t *)xmalloc((starts_cap + 1) * sizeof *c->start);
    c->n = c->n_ids = 0;
    c->start[0] = 0;
    uint32_t *buf = (uint32_t *)xmalloc((ucap + 1) * sizeof *buf);
    uint32_t lengths[64];
    size_t ask = cap;
    const char *wrong = NULL; /* the first call that broke the contract (one CHECK for them all) */
    while (!wrong) {
        size_t got_ids = 0, got = 0;
        st_error err;
        st_status st = CHECKED(err, st_unstable_next(u, buf, ask, lengths, max_completions, &got_ids, &got, &err));
        calls++;
        if (st == ST_ERR_BUFFER_TOO_SMALL) {
            /* not even the next completion fits: its size is reported, and the next call gives it */
            if (cap >= ucap || got != 0 || got_ids <= ask || got_ids > ucap)
                wrong = "ST_ERR_BUFFER_TOO_SMALL though the next completion fits, or a size past the unstable length";
            ask = got_ids;
            continue;
        }
        if (st != ST_OK) {
            wrong = "a status other than ST_OK and ST_ERR_BUFFER_TOO_SMALL";
            break;
        }
        if (got == 0) {
            if (got_ids != 0) wrong = "no completion, but ids";
            break;
        }
        size_t sum = 0;
        for (size_t k = 0; k < got; k++) sum += lengths[k];
        if (got > max_completions || sum != got_ids || got_ids > ask) {
            wrong = "more completions or ids than asked for, or lengths that do not add up to the ids";
            break;
        }
        while (c->n_ids + got_ids > ids_cap) {
            ids_cap *= 2;
            c->ids = (uint32_t *)realloc(c->ids, ids_cap * sizeof *c->ids);
        }
        while (c->n + got > starts_cap) {
            starts_cap *= 2;
            c->start = (size_t *)realloc(c->start, (starts_cap + 1) * sizeof *c->start);
        }
        if (!c->ids || !c->start) abort();
        memcpy(c->ids + c->n_ids, buf, got_ids * sizeof *buf);
        for (size_t k = 0; k < got; k++) {
            c->n_ids += lengths[k];
            c->start[++c->n] = c->n_ids;
        }
        ask = cap;
    }
    CHECK(!wrong, "%s: st_unstable_next (cap %zu, %zu a call), call %zu: %s", what, cap, max_completions, calls,
          wrong ? wrong : "");
    free(buf);
}

static const uint32_t *g_sort_ids; /* the ids the completions being sorted index */
static const size_t *g_sort_start;

static int completion_order(const void *a, const void *b) {
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    size_t li = g_sort_start[i + 1] - g_sort_start[i], lj = g_sort_start[j + 1] - g_sort_start[j];
    for (size_t k = 0; k < li && k < lj; k++) {
        uint32_t x = g_sort_ids[g_sort_start[i] + k], y = g_sort_ids[g_sort_start[j] + k];
        if (x != y) return x < y ? -1 : 1;
    }
    return li < lj ? -1 : li > lj;
}

/* The completions in a canonical order (their order is not part of the contract): an array
 * of their indexes, sorted by their ids. */
static size_t *sorted_completions(const completions *c) {
    size_t *order = (size_t *)xmalloc((c->n + 1) * sizeof *order);
    for (size_t k = 0; k < c->n; k++) order[k] = k;
    g_sort_ids = c->ids;
    g_sort_start = c->start;
    qsort(order, c->n, sizeof *order, completion_order);
    return order;
}

/* The bytes of ids[0..n) (st_decode), in a new buffer of *len bytes. */
static uint8_t *decoded(const st_encoding *enc, const uint32_t *ids, size_t n, size_t *len) {
    st_error err;
    *len = 0;
    st_status st = CHECKED(err, st_decode(enc, ids, n, NULL, 0, len, &err));
    uint8_t *out = (uint8_t *)xmalloc(*len + 1);
    if (st == ST_ERR_BUFFER_TOO_SMALL) st = CHECKED(err, st_decode(enc, ids, n, out, *len, len, &err));
    if (st != ST_OK) *len = (size_t)-1;
    return out;
}

/* What st_unstable_* must give for text under policy, by their definition (supertok.h):
 *  - the stable ids are the first ids of the text's encoding (st_encode, the same policy), and
 *    the rest of the text after their bytes is the unstable bytes (st_unstable_length of them);
 *  - every completion is 1 to st_unstable_length ids, and the stable ids followed by it decode
 *    to bytes that start with the whole text;
 *  - every ordinary token whose bytes start with the unstable bytes is a completion by itself
 *    (found here by a scan of the whole vocabulary);
 *  - the completions are the same whatever the size of the buffers they are asked for with. */
static void check_unstable(const char *name, const st_encoding *enc, st_unstable *u, const char *text, size_t len,
                           const st_special_policy *policy) {
    char what[160], hx[100];
    hexdump(hx, sizeof hx, (const uint8_t *)text, len < 24 ? len : 24);
    snprintf(what, sizeof what, "%s unstable [%s]", name, hx);
    st_error err;
    st_status st = CHECKED(err, st_unstable_encode(u, text, len, policy, &err));
    CHECK(st == ST_OK, "%s: st_unstable_encode: %d", what, st);
    if (st != ST_OK) return;
    uint32_t *full = (uint32_t *)xmalloc((len + 1) * sizeof *full);
    size_t n_full = 0;
    st = CHECKED(err, st_encode(enc, text, len, policy, 0, full, NULL, len + 1, &n_full, &err));
    CHECK(st == ST_OK, "%s: st_encode: %d", what, st);

    /* the stable ids: a size query, then the ids, a prefix of the encoding */
    size_t n_stable = 0;
    st = CHECKED(err, st_unstable_stable(u, NULL, 0, &n_stable, &err));
    CHECK(n_stable ? st == ST_ERR_BUFFER_TOO_SMALL : st == ST_OK, "%s: stable size query: %d, %zu ids", what, st,
          n_stable);
    uint32_t *stable = (uint32_t *)xmalloc((n_stable + 1) * sizeof *stable);
    size_t got = 0;
    st = CHECKED(err, st_unstable_stable(u, stable, n_stable, &got, &err));
    CHECK(st == ST_OK && got == n_stable, "%s: stable ids: %d, %zu of %zu", what, st, got, n_stable);
    CHECK(n_stable <= n_full && memcmp(stable, full, n_stable * sizeof *stable) == 0,
          "%s: the %zu stable ids are not the first of the encoding's %zu", what, n_stable, n_full);
    size_t dlen;
    uint8_t *d = decoded(enc, stable, n_stable, &dlen);
    size_t ulen = st_unstable_length(u);
    int prefix = dlen <= len && memcmp(d, text, dlen) == 0;
    CHECK(prefix && ulen == len - dlen, "%s: the stable ids' %zu bytes + %zu unstable bytes are not the text's %zu",
          what, dlen, ulen, len);
    free(d);
    if (!prefix || ulen != len - dlen) ulen = 0;
    const uint8_t *unstable = (const uint8_t *)text + len - ulen;

    /* the completions, with room for any one (cap = the unstable length) and 50 a call */
    completions c;
    collect_completions(u, ulen, 50, &c, what);
    CHECK(ulen > 0 || c.n == 0, "%s: %zu completions without unstable bytes", what, c.n);
    uint32_t nv = st_encoding_n_vocab(enc);
    uint8_t *single = (uint8_t *)calloc(nv, 1); /* the single-token completions */
    uint32_t *joined = (uint32_t *)xmalloc((n_stable + ulen + 1) * sizeof *joined);
    memcpy(joined, stable, n_stable * sizeof *stable);
    size_t bad = 0;
    for (size_t k = 0; k < c.n; k++) {
        size_t cl = c.start[k + 1] - c.start[k];
        int ok = cl >= 1 && cl <= ulen;
        if (ok) {
            memcpy(joined + n_stable, c.ids + c.start[k], cl * sizeof *joined);
            size_t jl;
            uint8_t *j = decoded(enc, joined, n_stable + cl, &jl);
            ok = jl != (size_t)-1 && jl >= len && memcmp(j, text, len) == 0;
            free(j);
        }
        if (ok && cl == 1) single[c.ids[c.start[k]]] = 1;
        if (!ok && bad++ < 3)
            printf("  %s: completion %zu of %zu ids (first %u) does not continue the text\n", what, k, cl,
                   cl ? c.ids[c.start[k]] : 0);
    }
    CHECK(bad == 0, "%s: %zu of %zu completions do not continue the text", what, bad, c.n);
    size_t want_single = 0, missing = 0;
    for (uint32_t id = 0; ulen && id < nv; id++) {
        const uint8_t *p;
        size_t l;
        if (!st_token_is_ordinary(enc, id) || CHECKED(err, st_token_bytes(enc, id, &p, &l, &err)) != ST_OK) continue;
        if (l < ulen || memcmp(p, unstable, ulen) != 0) continue;
        want_single++;
        if (!single[id] && missing++ < 3)
            printf("  %s: token %u starts with the unstable bytes, no completion\n", what, id);
    }
    CHECK(missing == 0, "%s: %zu of the %zu tokens starting with the unstable bytes are no completion", what, missing,
          want_single);

    /* again, one completion a call, with no room at first for it (cap 0): the same completions */
    st = CHECKED(err, st_unstable_encode(u, text, len, policy, &err));
    CHECK(st == ST_OK && st_unstable_length(u) == ulen, "%s: encode again: %d", what, st);
    completions c1;
    collect_completions(u, 0, 1, &c1, what);
    int same = c1.n == c.n && c1.n_ids == c.n_ids;
    if (same && c.n) {
        size_t *o = sorted_completions(&c), *o1 = sorted_completions(&c1);
        for (size_t k = 0; k < c.n && same; k++) {
            size_t a = c.start[o[k]], al = c.start[o[k] + 1] - a, b = c1.start[o1[k]], bl = c1.start[o1[k] + 1] - b;
            same = al == bl && memcmp(c.ids + a, c1.ids + b, al * sizeof *c.ids) == 0;
        }
        free(o);
        free(o1);
    }
    CHECK(same, "%s: the completions differ with small buffers: %zu vs %zu", what, c1.n, c.n);
    /* all given: no more, however asked */
    size_t more_ids = 9, more = 9;
    uint32_t one[4], lens[4];
    st = CHECKED(err, st_unstable_next(u, one, 4, lens, 4, &more_ids, &more, &err));
    CHECK(st == ST_OK && more == 0 && more_ids == 0, "%s: completions after the last: %d, %zu", what, st, more);
    completions_free(&c);
    completions_free(&c1);
    free(single);
    free(joined);
    free(stable);
    free(full);
}

static void test_unstable(void) {
    static const char *texts[] = {
        "Hello wor",                                        /* ends inside a word */
        "The quick brown fox",                              /* ends with a whole word */
        "tokenization",                                     /* one long word */
        "Hello world ",                                     /* ends with a space: every token starting with one */
        "Hello\n\n",                                        /* ends with newlines (the whitespace fix) */
        "x  ",                                              /* two spaces after a word */
        "def f(x):\n    return",                            /* code */
        "na\xC3\xAFve caf\xC3\xA9",                         /* ends with a two-byte character */
        "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C", /* CJK: three-byte characters */
        "emoji \xF0\x9F\x98\x80",                           /* ends with a four-byte character */
        "\xF0\x9D\x94\x98\xF0\x9D\x94\xAB\xF0\x9D\x94\xA6", /* rare four-byte characters: tokens inside them */
        "12345",                                            /* digits */
        "",                                                 /* nothing */
    };
    for (int e = CL100K; e <= O200K; e++) {
        const st_encoding *enc = g_enc[e];
        const char *name = INFOS[e].name;
        if (!enc) continue;
        st_unstable *u = NULL;
        st_error err;
        st_status st = CHECKED(err, st_unstable_new(enc, NULL, &u, &err));
        CHECK(st == ST_OK && u, "%s: st_unstable_new: %d", name, st);
        if (!u) continue;
        CHECK(st_unstable_length(u) == 0, "%s: a new handle holds unstable bytes", name);
        for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
            check_unstable(name, enc, u, texts[t], strlen(texts[t]), NULL);

        /* specials allowed: one last is stable (nothing unstable); text after one is unstable */
        const char *eot = INFOS[e].special[0];
        uint32_t eot_id = INFOS[e].special_id[0];
        st_special_policy allow = {.allowed = &eot_id, .n_allowed = 1};
        char text[128];
        snprintf(text, sizeof text, "Hi %s", eot);
        check_unstable(name, enc, u, text, strlen(text), &allow);
        CHECK(st_unstable_length(u) == 0, "%s: a special last leaves unstable bytes", name);
        snprintf(text, sizeof text, "Hi %s there, wor", eot);
        check_unstable(name, enc, u, text, strlen(text), &allow);
        snprintf(text, sizeof text, "%s%s", eot, eot);
        check_unstable(name, enc, u, text, strlen(text), &allow);
        /* not allowed (and not refused): ordinary text, unstable at its end like any */
        snprintf(text, sizeof text, "Hi %s", eot);
        check_unstable(name, enc, u, text, strlen(text), NULL);

        /* errors: st_encode's, and the handle holds no text after one */
        static const struct {
            const char *s;
            size_t len, at;
        } bad_utf8[] = {
            {"ab\xFF", 3, 2},
            {"caf\xC3", 4, 3},            /* ends inside a two-byte character */
            {"emoji \xF0\x9F\x98", 9, 6}, /* ends inside a four-byte character */
        };
        for (size_t k = 0; k < sizeof bad_utf8 / sizeof bad_utf8[0]; k++) {
            check_unstable(name, enc, u, "Hello wor", 9, NULL); /* a text with completions first */
            st = CHECKED(err, st_unstable_encode(u, bad_utf8[k].s, bad_utf8[k].len, NULL, &err));
            CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, bad_utf8[k].at),
                  "%s: unstable, invalid UTF-8 %zu: %d at %zu, want %zu", name, k, st, (size_t)err.offset,
                  bad_utf8[k].at);
            size_t n = 9, nc = 9;
            uint32_t ids[8], lens[8];
            CHECK(st_unstable_length(u) == 0 && CHECKED(err, st_unstable_stable(u, ids, 8, &n, &err)) == ST_OK &&
                      n == 0 && CHECKED(err, st_unstable_next(u, ids, 8, lens, 8, &n, &nc, &err)) == ST_OK && nc == 0 &&
                      n == 0,
                  "%s: the handle holds a text after an error", name);
        }
        /* a disallowed special: where it is, its length and id */
        snprintf(text, sizeof text, "Hi %s there", eot);
        st_special_policy refuse = {.flags = ST_SPECIAL_DISALLOW_REST};
        st = CHECKED(err, st_unstable_encode(u, text, strlen(text), &refuse, &err));
        CHECK(st == ST_ERR_DISALLOWED_SPECIAL && err.kind == ST_KIND_DISALLOWED_SPECIAL &&
                  error_at(&err, ST_UNIT_BYTE, 3) && err.length == strlen(eot) && err.token == eot_id,
              "%s: unstable, a disallowed special: %d kind %u at %zu length %u token %u", name, st, err.kind,
              (size_t)err.offset, err.length, err.token);
        CHECK(st_unstable_length(u) == 0, "%s: the handle holds a text after a disallowed special", name);
        /* an allowed id that is no special token: its index in the allowed set */
        uint32_t not_special[2] = {eot_id, 1000};
        st_special_policy wrong = {.allowed = not_special, .n_allowed = 2};
        st = CHECKED(err, st_unstable_encode(u, "abc", 3, &wrong, &err));
        CHECK(st == ST_ERR_INVALID_ARGUMENT && error_at(&err, ST_UNIT_INDEX, 1),
              "%s: unstable, a bad allowed set: %d at %zu", name, st, (size_t)err.offset);
        /* bad arguments */
        size_t n = 0, nc = 0;
        uint32_t ids[4], lens[4];
        CHECK(CHECKED(err, st_unstable_encode(NULL, "a", 1, NULL, &err)) == ST_ERR_INVALID_ARGUMENT &&
                  CHECKED(err, st_unstable_encode(u, NULL, 1, NULL, &err)) == ST_ERR_INVALID_ARGUMENT &&
                  CHECKED(err, st_unstable_stable(u, ids, 4, NULL, &err)) == ST_ERR_INVALID_ARGUMENT &&
                  CHECKED(err, st_unstable_stable(u, NULL, 4, &n, &err)) == ST_ERR_INVALID_ARGUMENT &&
                  CHECKED(err, st_unstable_next(u, ids, 4, lens, 4, NULL, &nc, &err)) == ST_ERR_INVALID_ARGUMENT &&
                  CHECKED(err, st_unstable_next(u, ids, 4, NULL, 4, &n, &nc, &err)) == ST_ERR_INVALID_ARGUMENT &&
                  st_unstable_length(NULL) == 0,
              "%s: unstable calls with NULL arguments", name);
        st_unstable_free(u);
    }
    st_unstable_free(NULL);

    /* only byte-level encodings without supermerges qualify */
    st_error err;
    st_unstable *u = NULL;
    CHECK(CHECKED(err, st_unstable_new(NULL, NULL, &u, &err)) == ST_ERR_INVALID_ARGUMENT && u == NULL,
          "unstable: NULL encoding");
    if (g_enc[O200K])
        CHECK(CHECKED(err, st_unstable_new(g_enc[O200K], NULL, NULL, &err)) == ST_ERR_INVALID_ARGUMENT,
              "unstable: NULL out");
    uint32_t m[2] = {'a', 'b'};
    st_encoding *ube = NULL, *sw = NULL;
    CHECK(CHECKED(err, st_encoding_new_merges(ST_ALPHABET_UBE, m, 1, "", 0, plain_pretokenizer(ST_PATTERN_O200K), NULL,
                                              &ube, &err)) == ST_OK,
          "unstable: a UBE model");
    CHECK(CHECKED(err, st_unstable_new(ube, NULL, &u, &err)) == ST_ERR_INVALID_ARGUMENT && u == NULL,
          "unstable: a UBE model has no byte tokens");
    CHECK(CHECKED(err, st_encoding_new_model(SW_BYTES, sizeof SW_BYTES - 1, NULL, &sw, &err)) == ST_OK,
          "unstable: a superword model");
    CHECK(CHECKED(err, st_unstable_new(sw, NULL, &u, &err)) == ST_ERR_INVALID_ARGUMENT && u == NULL,
          "unstable: a model with supermerges");
    st_encoding_free(ube);
    st_encoding_free(sw);
}

/* The span cache's search for a span's end (st__cut_within) finds the places st_encoding_cut
 * finds in text with no special token, from every start; a search whose start lies past its end
 * finds none and reads nothing past the text (it once read on: the sanitizers see it). */
static void test_cut_within(void) {
    st_encoding *enc = g_enc[O200K];
    static const char t[] = "Hello world.\nThe next line  has  two spaces\n\n and \xE4\xB8\xAD\xE6\x96\x87 text\n  end\n";
    size_t n = sizeof t - 1;
    uint8_t *s = (uint8_t *)malloc(n); /* exactly the text: a read past it is the sanitizers' */
    memcpy(s, t, n);
    int bad = 0;
    for (size_t from = 0; from <= n; from++)
        for (size_t to = from; to <= n; to++) {
            size_t at = n;
            if (st_encoding_cut(enc, t, to, from, &at, NULL) != ST_OK) bad++;
            size_t want = at < to ? at : 0;
            if (st__cut_within(enc, s, to, from, to) != want && bad++ < 3)
                printf("st__cut_within(from %zu, to %zu) != %zu\n", from, to, want);
        }
    CHECK(!bad, "st__cut_within finds st_encoding_cut's places at every start and end");
    memset(s, 'a', n);
    CHECK(st__cut_within(enc, s, n, n / 2, 10) == 0, "st__cut_within with its start past its end finds nothing");
    free(s);
}

int main(int argc, char **argv) {
    if (argc > 1) g_dir = argv[1];
    const char *big = getenv("ST_ENCODE_BIG");
    g_big = big && *big && strcmp(big, "0") != 0;
    const char *seed = getenv("ST_TEST_SEED");
    if (seed && *seed) g_seed = strtoull(seed, NULL, 10);
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"load", test_load},
        {"fixed texts", test_fixed_texts},
        {"char starts inside characters", test_char_starts_inside_characters},
        {"long runs", test_long_runs},
        {"random texts", test_random_texts},
        {"encode piece", test_encode_piece},
        {"backtracking", test_backtrack},
        {"merge rules", test_merges},
        {"specials", test_specials},
        {"special longest match", test_special_longest_match},
        {"special not UTF-8", test_special_not_utf8},
        {"invalid UTF-8", test_invalid_utf8},
        {"decode", test_decode},
        {"images", test_images},
        {"damaged images", test_damaged_images},
        {"malformed rank files", test_malformed},
        {"allocator", test_allocator},
        {"when the backtracking tables get built", test_build_debt},
        {"work grows linearly", test_work_linear},
        {"error report", test_error_report},
        {"special-token policy", test_special_policy},
        {"special search work", test_special_search_work},
        {"special-token policy of strings", test_special_policy_text},
        {"special strings (an id with several)", test_special_strings},
        {"offset units", test_offset_units},
        {"token ids", test_token_id},
        {"scratch reuse", test_scratch_reuse},
        {"a growing piece cache keeps its entries", test_cache_grows_keeping_entries},
        {"superwords", test_superwords},
        {"encode with unstable tokens", test_unstable},
        {"the span cache's search for a span's end", test_cut_within},
    };
    double t_all = now_seconds();
    for (size_t k = 0; k < sizeof tests / sizeof tests[0]; k++) {
        double t0 = now_seconds();
        int f0 = g_fail;
        tests[k].fn();
        printf("- %s: %.2f s%s\n", tests[k].name, now_seconds() - t0, g_fail > f0 ? " (FAILURES)" : "");
        fflush(stdout);
    }
    for (int e = 0; e < N_ENC; e++) {
        st_encoding_free(g_enc[e]);
        st_pretokenizer_free(g_pt[e]);
        ref_free(&g_ref[e]);
    }
    printf("test_encode: %.2f s\n", now_seconds() - t_all);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
