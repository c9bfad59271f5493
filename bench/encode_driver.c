/* The C core's encoder alone, on the corpora: bench/profile_encode.py builds and runs this (no
 * Python in the timed calls or the profile).
 *
 *   encode_driver RANKS LIB_A LIB_B SLICE ab FILE...
 *       LIB_A and LIB_B (two builds of libsupertok.so, loaded side by side with dlopen) encode the
 *       same slices of each FILE, SLICE bytes each, in turns (which build goes first alternates),
 *       each slice fresh (no cache of that build has seen it) and then warm (the same slice again).
 *       Prints a line per file: the median CPU ns a byte of each build, fresh and warm, and the
 *       median and quartiles of B's time over A's on the same slice.
 *   encode_driver RANKS LIB - SLICE fresh|warm PASSES FILE
 *       For a profiler: PASSES passes over FILE's slices with one build, the caches emptied before
 *       each pass (st_encoding_set_cache_size), each slice encoded once and then three times more;
 *       the profiler samples the first calls (fresh) or the three after them (warm) alone.
 * RANKS: a tiktoken rank file (o200k_base's), or a tokenizer.json model (a name ending in .json); for a
 * rank file the pre-tokenizer is o200k's, or cl100k's when
 * ENCODE_PATTERN=cl100k is set (with cl100k_base's rank file). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "supertok.h"

typedef st_status (*pt_new_fn)(int, uint32_t, const char *, size_t, const st_allocator *, st_pretokenizer **,
                                st_error *);
typedef st_status (*enc_new_fn)(const char *, size_t, const char *, size_t, const st_pretokenizer *,
                                 const st_allocator *, st_encoding **, st_error *);
typedef st_status (*encode_fn)(const st_encoding *, const char *, size_t, const st_special_policy *, uint32_t,
                               uint32_t *, size_t *, size_t, size_t *, st_error *);
typedef st_status (*size_fn)(const st_encoding *, size_t);

typedef struct build {
    encode_fn encode;
    size_fn set_cache_size;
    st_encoding *enc;
} build;

static char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 64);
    if (!b || fread(b, 1, *n, f) != *n) { fprintf(stderr, "%s: read failed\n", path); exit(2); }
    fclose(f);
    return b;
}

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void load(build *b, const char *lib, const char *ranks_path, const char *ranks, size_t ranks_len) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); exit(2); }
    pt_new_fn pt_new = (pt_new_fn)dlsym(h, "st_pretokenizer_new");
    enc_new_fn enc_new = (enc_new_fn)dlsym(h, "st_encoding_new_tiktoken");
    b->encode = (encode_fn)dlsym(h, "st_encode");
    b->set_cache_size = (size_fn)dlsym(h, "st_encoding_set_cache_size");
    st_pretokenizer *pt = NULL;
    st_error err;
    const char *pattern = getenv("ENCODE_PATTERN");
    int pat = pattern && !strcmp(pattern, "cl100k") ? ST_PATTERN_CL100K : ST_PATTERN_O200K;
    typedef st_status (*json_new_fn)(const char *, size_t, const st_allocator *, st_encoding **, st_error *);
    json_new_fn json_new = (json_new_fn)dlsym(h, "st_encoding_new_tokenizer_json");
    size_t name_len = strlen(ranks_path);
    int is_json = name_len > 5 && !strcmp(ranks_path + name_len - 5, ".json"); /* a tokenizer.json model */
    if (!pt_new || !enc_new || !json_new || !b->encode || !b->set_cache_size ||
        (is_json ? json_new(ranks, ranks_len, NULL, &b->enc, &err)
                 : (pt_new(pat, 0, NULL, 0, NULL, &pt, &err) || enc_new(ranks, ranks_len, "", 0, pt, NULL, &b->enc, &err)))) {
        fprintf(stderr, "%s: cannot load the encoding\n", lib);
        exit(2);
    }
    /* ENCODE_PREPARE=1: the backtracking tables built before any timing (else the first slices
     * of a fresh process pay the merge loop until the encoder decides to build them) */
    const char *prepare = getenv("ENCODE_PREPARE");
    typedef st_status (*prepare_fn)(const st_encoding *);
    prepare_fn prep = (prepare_fn)dlsym(h, "st_encoding_prepare");
    if (prepare && !strcmp(prepare, "1") && (!prep || prep(b->enc))) {
        fprintf(stderr, "%s: st_encoding_prepare failed\n", lib);
        exit(2);
    }
}

/* The warm-up text: the last 16 KB of t[0..len), from a character's start (never in a slice). */
static const char *tail_of(const char *t, size_t len, size_t *n) {
    size_t a = len > 16000 ? len - 16000 : 0;
    while (a < len && (t[a] & 0xC0) == 0x80) a++;
    *n = len - a;
    return t + a;
}

/* The next slice of t[0..len) from *pos: about `size` bytes, cut at character boundaries. */
static int next_slice(const char *t, size_t len, size_t *pos, size_t size, size_t *a, size_t *b) {
    if (*pos + size + 16000 > len) return 0; /* the last 16 KB: the warm-up text */
    *a = *pos;
    *b = *pos + size;
    while ((t[*b] & 0xC0) == 0x80) (*b)--;
    while ((t[*a] & 0xC0) == 0x80) (*a)++;
    *pos += size;
    return 1;
}

static double timed(const build *b, const char *s, size_t n, uint32_t *ids, size_t cap) {
    size_t got;
    st_error err;
    double t = cpu_now();
    st_status st = b->encode(b->enc, s, n, NULL, 0, ids, NULL, cap, &got, &err);
    if (st != ST_OK) {
        fprintf(stderr, "encode failed: status %d: %s\n", (int)st, err.message);
        exit(2);
    }
    return (cpu_now() - t) / (double)n * 1e9;
}

#define MAX_SLICES 512

/* A profiler's switch (perf record -D -1 --control fifo:CTL,ACK, the fifos named by the
 * environment's PERF_CTL_FIFO and PERF_ACK_FIFO): samples are taken only between "enable" and
 * "disable", so a profile shows the calls of the mode asked for, not the loading or the other
 * calls. Without the variables, nothing. */
static FILE *perf_ctl, *perf_ack;

static void profiler(const char *cmd) {
    if (!perf_ctl) return;
    char ack[16];
    fprintf(perf_ctl, "%s\n", cmd);
    fflush(perf_ctl);
    if (perf_ack && !fgets(ack, sizeof ack, perf_ack)) perf_ack = NULL;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: encode_driver RANKS LIB_A LIB_B SLICE ab FILE... | RANKS LIB - SLICE fresh|warm PASSES FILE\n");
        return 2;
    }
    size_t ranks_len;
    char *ranks = read_file(argv[1], &ranks_len);
    size_t size = (size_t)atol(argv[4]);
    const char *mode = argv[5];
    uint32_t *ids = malloc(4 * (size + 16));
    build bs[2];
    int nb = strcmp(argv[3], "-") ? 2 : 1;
    for (int k = 0; k < nb; k++) load(&bs[k], argv[2 + k], argv[1], ranks, ranks_len);
    if (strcmp(mode, "ab") != 0) { /* one build, for a profiler */
        int passes = atoi(argv[6]), warm = strcmp(mode, "warm") == 0;
        const char *ctl = getenv("PERF_CTL_FIFO"), *ack = getenv("PERF_ACK_FIFO");
        if (ctl) perf_ctl = fopen(ctl, "w");
        if (ack) perf_ack = fopen(ack, "r");
        size_t len, a, b, pos;
        char *t = read_file(argv[7], &len);
        size_t wn;
        const char *w = tail_of(t, len, &wn);
        timed(&bs[0], w, wn, ids, size);
        for (int p = 0; p < passes; p++) {
            bs[0].set_cache_size(bs[0].enc, 0); /* empties the caches: every slice fresh again */
            bs[0].set_cache_size(bs[0].enc, ST_CACHE_DEFAULT_BYTES);
            for (pos = 0; next_slice(t, len, &pos, size, &a, &b);) {
                if (!warm) profiler("enable");
                timed(&bs[0], t + a, b - a, ids, size);
                profiler(warm ? "enable" : "disable");
                for (int r = 0; r < (warm ? 3 : 0); r++) timed(&bs[0], t + a, b - a, ids, size);
                if (warm) profiler("disable");
            }
        }
        return 0;
    }
    for (int f = 6; f < argc; f++) {
        size_t len, a, b, pos = 0;
        char *t = read_file(argv[f], &len);
        size_t wn;
        const char *w = tail_of(t, len, &wn);
        for (int k = 0; k < 2; k++) timed(&bs[k], w, wn, ids, size);
        static double fresh[2][MAX_SLICES], warm[2][MAX_SLICES], rf[MAX_SLICES], rw[MAX_SLICES];
        int n = 0;
        for (; n < MAX_SLICES && next_slice(t, len, &pos, size, &a, &b); n++)
            for (int k = 0; k < 2; k++) {
                int v = (n + k) & 1; /* A first on even slices, B first on odd ones */
                fresh[v][n] = timed(&bs[v], t + a, b - a, ids, size);
                warm[v][n] = timed(&bs[v], t + a, b - a, ids, size);
            }
        if (!n) { fprintf(stderr, "%s: shorter than one slice\n", argv[f]); return 2; }
        for (int r = 0; r < n; r++) {
            rf[r] = fresh[1][r] / fresh[0][r];
            rw[r] = warm[1][r] / warm[0][r];
        }
        qsort(rf, (size_t)n, sizeof(double), by_value);
        qsort(rw, (size_t)n, sizeof(double), by_value);
        for (int k = 0; k < 2; k++) {
            qsort(fresh[k], (size_t)n, sizeof(double), by_value);
            qsort(warm[k], (size_t)n, sizeof(double), by_value);
        }
        /* file slices fresh_a fresh_b fresh_ratio q1 q3 warm_a warm_b warm_ratio q1 q3 */
        printf("%s %d %.3f %.3f %.4f %.4f %.4f %.3f %.3f %.4f %.4f %.4f\n", argv[f], n, fresh[0][n / 2],
               fresh[1][n / 2], rf[n / 2], rf[n / 4], rf[3 * n / 4], warm[0][n / 2], warm[1][n / 2], rw[n / 2],
               rw[n / 4], rw[3 * n / 4]);
        fflush(stdout);
        free(t);
    }
    return 0;
}
