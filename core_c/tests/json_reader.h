// A small JSON reader for the C test drivers (test_vectors.c, test_train.c): it handles what the
// vector files of vectors/ hold, one record a line -- objects, arrays, strings with \u escapes
// (surrogate pairs joined), numbers, true/false/null -- and nothing more. Test code: libc is fine.
//
//   jparser j = {line, line_end, 0};  jval v;  jparse(&j, &v, 0);   j.bad: not understood
//   jget(&v, "key")                   a member of an object, or NULL
//   jfree(&v)                         frees what jparse allocated
//
// Every function is static inline, so a driver that uses only some of them still builds with
// -Wall -Werror.
#ifndef ST_TEST_JSON_READER_H
#define ST_TEST_JSON_READER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    int b;
    double num;     /* J_NUM: integers in the files fit a double exactly (all below 2^53) */
    char *s;        /* J_STR: UTF-8, NUL-terminated; slen bytes (may hold NUL) */
    size_t slen;
    size_t n;       /* J_ARR / J_OBJ: number of items */
    struct jval *v; /* items */
    char **keys;    /* J_OBJ: the keys */
} jval;

static inline void jfree(jval *v) {
    if (v->t == J_STR) free(v->s);
    if (v->t == J_ARR || v->t == J_OBJ) {
        for (size_t k = 0; k < v->n; k++) {
            jfree(&v->v[k]);
            if (v->t == J_OBJ) free(v->keys[k]);
        }
        free(v->v);
        free(v->keys);
    }
}

typedef struct jparser {
    const char *p, *end;
    int bad;
} jparser;

static inline void jws(jparser *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static inline int hex4(const char *p, uint32_t *v) {
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return 0;
        *v = *v * 16 + (uint32_t)d;
    }
    return 1;
}

static inline size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A JSON string at j->p (the opening quote); a lone surrogate escape is kept as WTF-8 (the
 * vector files have none: lone surrogates travel as text_utf16_hex). */
static inline char *jstring(jparser *j, size_t *len) {
    j->p++;
    const char *q = j->p;
    size_t cap = 16;
    while (q < j->end && *q != '"') { if (*q == '\\') q++; q++; cap++; }
    char *o = (char *)malloc(cap * 2 + 8);
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c != '\\') { o[n++] = c; continue; }
        if (j->p >= j->end) break;
        c = *j->p++;
        switch (c) {
        case 'n': o[n++] = '\n'; break;
        case 't': o[n++] = '\t'; break;
        case 'r': o[n++] = '\r'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'u': {
            uint32_t u, lo;
            if (j->end - j->p < 4 || !hex4(j->p, &u)) { j->bad = 1; break; }
            j->p += 4;
            if (u >= 0xD800 && u < 0xDC00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' &&
                hex4(j->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                j->p += 6;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            }
            n += put_utf8(o + n, u);
            break;
        }
        default: o[n++] = c; break; /* \" \\ \/ */
        }
    }
    if (j->p >= j->end) j->bad = 1;
    else j->p++;
    o[n] = 0;
    *len = n;
    return o;
}

static inline void jparse(jparser *j, jval *v, int depth) {
    memset(v, 0, sizeof *v);
    jws(j);
    if (j->p >= j->end || depth > 64) { j->bad = 1; return; }
    char c = *j->p;
    if (c == '"') {
        v->t = J_STR;
        v->s = jstring(j, &v->slen);
    } else if (c == '[' || c == '{') {
        int obj = c == '{';
        v->t = obj ? J_OBJ : J_ARR;
        size_t cap = 0;
        j->p++;
        jws(j);
        if (j->p < j->end && *j->p == (obj ? '}' : ']')) { j->p++; return; }
        for (;;) {
            if (v->n == cap) {
                cap = cap ? 2 * cap : 8;
                v->v = (jval *)realloc(v->v, cap * sizeof *v->v);
                if (obj) v->keys = (char **)realloc(v->keys, cap * sizeof *v->keys);
            }
            if (obj) {
                jws(j);
                if (j->p >= j->end || *j->p != '"') { j->bad = 1; return; }
                size_t kl;
                v->keys[v->n] = jstring(j, &kl);
                jws(j);
                if (j->p >= j->end || *j->p != ':') { free(v->keys[v->n]); j->bad = 1; return; }
                j->p++;
            }
            jparse(j, &v->v[v->n], depth + 1);
            v->n++;
            if (j->bad) return;
            jws(j);
            if (j->p < j->end && *j->p == ',') { j->p++; continue; }
            if (j->p < j->end && *j->p == (obj ? '}' : ']')) { j->p++; return; }
            j->bad = 1;
            return;
        }
    } else if (c == 't' || c == 'f' || c == 'n') {
        const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t wl = strlen(w);
        if ((size_t)(j->end - j->p) < wl || memcmp(j->p, w, wl)) { j->bad = 1; return; }
        j->p += wl;
        v->t = c == 'n' ? J_NULL : J_BOOL;
        v->b = c == 't';
    } else {
        char *e;
        v->t = J_NUM;
        v->num = strtod(j->p, &e);
        if (e == j->p) { j->bad = 1; return; }
        j->p = e;
    }
}

static inline const jval *jget(const jval *o, const char *key) {
    if (!o || o->t != J_OBJ) return NULL;
    for (size_t k = 0; k < o->n; k++)
        if (strcmp(o->keys[k], key) == 0) return &o->v[k];
    return NULL;
}

#endif
