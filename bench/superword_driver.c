/* The superword pass's cost without Python: one process, the core's sources compiled in, so
 * callgrind can count the instructions of one encode (bench/README.md, superword_encode.py).
 *
 *   python bench/superword_encode.py --lang en,zh,ja --rounds 1 --save /tmp/sw   # the models, the text
 *   cc -O2 -g -std=c11 -Icore_c/include bench/superword_driver.c core_c/src/*/*.c -lpthread -o /tmp/swd
 *   /tmp/swd /tmp/sw/ja.sw.stmodel /tmp/sw/ja.plain.stmodel /tmp/sw/ja.text rounds 9
 *   valgrind --tool=callgrind --toggle-collect=measured /tmp/swd SW PLAIN TEXT sw 1000000
 *
 * "rounds N": each model's piece cache warmed by one encode, then N rounds of both models in
 * turn (the order swapped each round), CPU time (CLOCK_PROCESS_CPUTIME_ID); prints the
 * superword / plain ratio per round, median (min-max). "sw" or "plain" [MAXBYTES]: that model
 * encodes the text (its first MAXBYTES bytes, cut back to a character) once to warm its cache,
 * then once in measured() (what --toggle-collect counts), and prints the ids' count and FNV-1a
 * hash (the same ids before and after a change: the same hash). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "supertok.h"

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    if (!b || fread(b, 1, *n, f) != *n) { fprintf(stderr, "%s: cannot read\n", path); exit(1); }
    fclose(f);
    return b;
}

static st_encoding *load(const char *path) {
    size_t n;
    char *b = slurp(path, &n);
    st_encoding *e;
    st_error err;
    if (st_encoding_new_model(b, n, NULL, &e, &err) != ST_OK) { fprintf(stderr, "%s: not a model\n", path); exit(1); }
    free(b);
    return e;
}

static uint32_t *ids;
static size_t cap;

static size_t encode(const st_encoding *e, const char *t, size_t n) {
    size_t m;
    st_error err;
    if (st_encode(e, t, n, NULL, 0, ids, NULL, cap, &m, &err) != ST_OK) { fprintf(stderr, "encode failed\n"); exit(1); }
    return m;
}

__attribute__((noinline)) size_t measured(const st_encoding *e, const char *t, size_t n) { return encode(e, t, n); }

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s SW.stmodel PLAIN.stmodel TEXT (rounds N | sw [MAXBYTES] | plain [MAXBYTES])\n", argv[0]);
        return 2;
    }
    size_t n;
    char *t = slurp(argv[3], &n);
    int rounds = !strcmp(argv[4], "rounds");
    if (!rounds && argc > 5 && strtoul(argv[5], NULL, 10) < n) {
        n = strtoul(argv[5], NULL, 10);
        while (n && ((unsigned char)t[n] & 0xC0) == 0x80) n--; /* not inside a character */
    }
    cap = n + 1;
    ids = malloc(cap * sizeof *ids);
    st_encoding *sw = load(argv[1]), *plain = load(argv[2]);
    if (rounds) {
        int r = argc > 5 ? atoi(argv[5]) : 9;
        if (r < 1) r = 1;
        double *ratio = malloc(r * sizeof *ratio), t_sw = 0, t_plain = 0;
        size_t m_sw = encode(sw, t, n), m_plain = encode(plain, t, n);
        for (int i = 0; i < r; i++) {
            double a = cpu(), b, c, s, p;
            if (i & 1) {
                measured(plain, t, n), b = cpu(), measured(sw, t, n), c = cpu();
                p = b - a, s = c - b;
            } else {
                measured(sw, t, n), b = cpu(), measured(plain, t, n), c = cpu();
                s = b - a, p = c - b;
            }
            ratio[i] = s / p, t_sw += s, t_plain += p;
        }
        qsort(ratio, r, sizeof *ratio, by_value);
        printf("%zu bytes; ids superword %zu plain %zu; CPU s a round superword %.4f plain %.4f; ratio median %.3f (%.3f-%.3f)\n",
               n, m_sw, m_plain, t_sw / r, t_plain / r, ratio[r / 2], ratio[0], ratio[r - 1]);
        return 0;
    }
    const st_encoding *e = strcmp(argv[4], "sw") ? plain : sw;
    encode(e, t, n); /* the piece cache warm, as in a long-running encoder */
    size_t m = measured(e, t, n);
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < m; i++) h = (h ^ ids[i]) * 1099511628211ull;
    printf("%s: %zu ids, hash %016llx\n", argv[4], m, h);
    return 0;
}
