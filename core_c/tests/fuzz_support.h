/* What the fuzz harnesses share: a counting allocator that can be told to fail (its budget), and
 * for their replay/random drivers (ST_FUZZ_MAIN) reading a whole file and a seeded xorshift.
 * Header-only (static functions) so each harness stays one C file. */
#ifndef ST_TESTS_FUZZ_SUPPORT_H
#define ST_TESTS_FUZZ_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "supertok.h"

/* The allocator's state: how many allocations may still succeed, what is live, at most how much. */
typedef struct budget {
    long left;          /* allocations that succeed; -1 = all */
    long live;          /* allocations not freed */
    int failed;         /* an allocation was refused */
    size_t bytes, peak; /* bytes allocated and not freed, and their most */
} budget;

static inline void *budget_alloc(void *ctx, size_t size) {
    budget *b = (budget *)ctx;
    if (b->left == 0) {
        b->failed = 1;
        return NULL;
    }
    if (b->left > 0) b->left--;
    void *p = malloc(size ? size : 1);
    if (p) {
        b->live++;
        b->bytes += size;
        if (b->bytes > b->peak) b->peak = b->bytes;
    }
    return p;
}

static inline void budget_free(void *ctx, void *p, size_t size) {
    budget *b = (budget *)ctx;
    if (p) {
        b->live--;
        b->bytes -= size;
    }
    free(p);
}

/* A whole file, malloc'd (NULL if it cannot be read); *len its size. */
static inline uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *d = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *q = (uint8_t *)realloc(d, cap);
            if (!q) {
                free(d);
                fclose(f);
                return NULL;
            }
            d = q;
        }
        size_t got = fread(d + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return d;
}

/* The drivers' random numbers: xorshift64 (a driver seeds g_rng from its command line). */
static uint64_t g_rng = 1;
static inline uint64_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

#endif
