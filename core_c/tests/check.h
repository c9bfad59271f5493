// The C test drivers' shared pieces (test_core.c, test_encode.c, test_threads.c): pass/fail
// counters with CHECK, which prints the failing file:line and a message, read_file and put_cp.
// Each driver ends with printf("%d passed, %d failed\n", g_pass, g_fail), the line
// tests/test_c_sanitizers.py reads.
#ifndef ST_TEST_CHECK_H
#define ST_TEST_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int g_pass, g_fail;

static void check(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) {
        g_pass++;
        return;
    }
    g_fail++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s:%d: ", file, line);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

#define CHECK(cond, ...) check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* The whole file, NUL-terminated (not counted in *len); NULL if it cannot be read. */
static inline char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *d = (char *)malloc(cap + 1);
    while (d) {
        size_t got = fread(d + n, 1, cap - n, f);
        n += got;
        if (!got) break;
        if (n == cap) {
            char *q = (char *)realloc(d, 2 * cap + 1);
            if (!q) {
                free(d);
                d = NULL;
                break;
            }
            d = q;
            cap *= 2;
        }
    }
    fclose(f);
    if (d) {
        d[n] = 0;
        *len = n;
    }
    return d;
}

/* The UTF-8 of code point cp (below U+110000) into o[0..4); returns its length. Written
 * independently of the core, so tests can check the core against it. */
static inline size_t put_cp(uint8_t *o, uint32_t cp) {
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18));
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

#endif
