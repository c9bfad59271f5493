/* Shared internals of the core: allocator plumbing and UTF-8 decoding. */
#ifndef ST_INTERNAL_H
#define ST_INTERNAL_H

#include "platform.h"
#include "counters.h" /* ST_COUNT: empty unless -DST_TEST_COUNTERS */
#include "../include/supertok.h"

/* The allocator a handle was made with; a copy is kept in every handle. */
void st__allocator_init(st_allocator *dst, const st_allocator *src);
void *st__alloc(const st_allocator *a, size_t size);
void st__free(const st_allocator *a, void *ptr, size_t size);

#define ST__NO_TOKEN_ID 0xFFFFFFFFu

/* The error report (common.c). Every public call clears it at entry (st__error_clear) and
 * fills it where it fails (st__error_set returns the status, for `return st__error_set(...)`);
 * the appenders add to its message (no snprintf: the core is freestanding). */
void st__error_clear(st_error *err);
st_status st__error_set(st_error *err, st_status status, st_unit unit, uint64_t offset, const char *message);
void st__error_append(st_error *err, const char *s);
void st__error_append_bytes(st_error *err, const char *s, size_t len);
void st__error_append_u64(st_error *err, uint64_t x);
void st__error_append_quoted(st_error *err, const uint8_t *p, size_t len);
/* The status of a return that sets no position (ST_ERR_BUFFER_TOO_SMALL, mostly). */
ST_INLINE st_status st__error_status(st_error *err, st_status st) {
    if (err && st != ST_OK) err->status = (uint32_t)st;
    return st;
}
ST_INLINE void st__error_line(st_error *err, uint64_t line, uint32_t input) {
    if (err) { err->line = line; err->input = input; }
}
ST_INLINE void st__error_token(st_error *err, uint32_t token) {
    if (err) err->token = token;
}
/* What was wrong (an st_error_kind) and the length, in the report's unit, of what is at its offset. */
ST_INLINE void st__error_kind(st_error *err, st_error_kind kind, uint32_t length) {
    if (err) { err->kind = (uint32_t)kind; err->length = length; }
}

/* Decode one code point from valid UTF-8 at s[0..] (the caller has validated the text).
 * Returns the sequence length. */
ST_INLINE size_t st__utf8_decode(const uint8_t *s, uint32_t *cp) {
    uint32_t b0 = s[0];
    if (b0 < 0x80) { *cp = b0; return 1; }
    if (b0 < 0xE0) { *cp = ((b0 & 0x1F) << 6) | (s[1] & 0x3F); return 2; }
    if (b0 < 0xF0) {
        *cp = ((b0 & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        return 3;
    }
    *cp = ((b0 & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
          ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
    return 4;
}

/* UBE routing of one character (docs/design.md §6): the symbols of the character at s (valid UTF-8)
 * into sym[0..4); returns how many and sets *len to its UTF-8 length. Below U+0800 its UTF-8
 * bytes (symbols 0-255), else its UTF-16LE bytes + 256 (2, or 4 for a surrogate pair). */
ST_INLINE size_t st__ube_char_symbols(const uint8_t *s, uint16_t sym[4], size_t *len) {
    uint32_t cp = s[0];
    size_t l = cp < 0x80 ? 1 : st__utf8_decode(s, &cp);
    *len = l;
    if (cp < 0x800) {
        for (size_t k = 0; k < l; k++) sym[k] = s[k];
        return l;
    }
    if (cp < 0x10000) {
        sym[0] = (uint16_t)(256 + (cp & 0xFF));
        sym[1] = (uint16_t)(256 + (cp >> 8));
        return 2;
    }
    uint32_t v = cp - 0x10000, hi = 0xD800 + (v >> 10), lo = 0xDC00 + (v & 0x3FF);
    sym[0] = (uint16_t)(256 + (hi & 0xFF));
    sym[1] = (uint16_t)(256 + (hi >> 8));
    sym[2] = (uint16_t)(256 + (lo & 0xFF));
    sym[3] = (uint16_t)(256 + (lo >> 8));
    return 4;
}

#endif
