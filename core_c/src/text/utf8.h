/* Decoding valid UTF-8 (utf8.c validates it), scanning text for its first non-ASCII byte or for one
 * byte value, and UBE's routing of a character to its symbols. */
#ifndef ST_UTF8_H
#define ST_UTF8_H

#include "../base/hash.h"
#include "../base/internal.h"

/* The length of a prefix of s[0..len) that is valid UTF-8 and ends where a character starts,
 * as far as a SIMD kernel of this processor reads (0 where none runs: other processors, short
 * texts); st_utf8_validate checks the rest. */
size_t st__utf8_valid_prefix(const uint8_t *s, size_t len);
/* st_utf8_validate's checks from s[i] on, s[0..i) being valid and i a character's start: the
 * scalar validator alone (from 0, the reference the tests hold the kernels to). */
st_status st__utf8_validate_from(const char *text, size_t len, size_t i, st_error *err);

/* The first index j >= i with s[j] >= 0x80, or end: eight bytes at a time. */
ST_INLINE size_t st__ascii_end(const uint8_t *s, size_t i, size_t end) {
    while (end - i >= 8 && !(st__load_le64(s + i) & 0x8080808080808080ull)) i += 8;
    while (i < end && s[i] < 0x80) i++;
    return i;
}

/* The first index j >= i with s[j] == a or s[j] == b, or end: eight bytes at a time. */
ST_INLINE size_t st__find_either(const uint8_t *s, size_t i, size_t end, uint8_t a, uint8_t b) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull, pa = ones * a, pb = ones * b;
    while (end - i >= 8) {
        uint64_t w = st__load_le64(s + i), x = w ^ pa, y = w ^ pb;
        if (((x - ones) & ~x & highs) | ((y - ones) & ~y & highs)) break; /* some byte is a or b */
        i += 8;
    }
    while (i < end && s[i] != a && s[i] != b) i++;
    return i;
}

/* The first index j >= i with s[j] == b, or end: eight bytes at a time (no memchr in the
 * freestanding build). */
ST_INLINE size_t st__find_byte(const uint8_t *s, size_t i, size_t end, uint8_t b) {
    return st__find_either(s, i, end, b, b); /* the compiler folds the two equal tests into one */
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

/* Encode the scalar value cp (not a surrogate, at most U+10FFFF) as UTF-8 into b[0..4); returns
 * its length. */
ST_INLINE size_t st__utf8_encode(uint32_t cp, uint8_t b[4]) {
    if (cp < 0x80) { b[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { b[0] = (uint8_t)(0xC0 | (cp >> 6)); b[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12));
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (uint8_t)(0xF0 | (cp >> 18));
    b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (uint8_t)(0x80 | (cp & 0x3F));
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
