/* Hashing shared by every component: the byte-string hash of the token store's table, the
 * piece cache and the counters (one function, so a hash computed for one lookup serves the
 * others), and the 64-bit mixer every hash table of the core uses. */
#ifndef ST_HASH_H
#define ST_HASH_H

#include "platform.h"

/* The hash of a byte string: byte-order independent (a saved image is valid on any host). */
uint64_t st__hash_bytes(const uint8_t *p, size_t n);

ST_INLINE uint64_t st__load_le64(const uint8_t *p) {
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24) |
           ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}

ST_INLINE uint64_t st__mix64(uint64_t x) { /* the splitmix64 finalizer: a strong, cheap mix */
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

#define ST_HASH_SEED 0x9E3779B97F4A7C15ull
#define ST_HASH_LEN 0xD6E8FEB86659FD93ull
#define ST_HASH_MUL 0xFF51AFD7ED558CCDull /* the word multiplier of st__hash_bytes (and the span hash) */

/* st__hash_bytes of a key of 1..8 bytes read as one word (8 bytes at p readable), and of 9..16
 * bytes read as two (16 readable): the same values, without the loop. */
ST_INLINE uint64_t st__hash_short(const uint8_t *p, size_t n) { /* n is 1..8 */
    uint64_t w = st__load_le64(p) & (~0ull >> (8 * (8 - n)));
    return st__mix64((ST_HASH_SEED ^ ((uint64_t)n * ST_HASH_LEN)) ^ w);
}

ST_INLINE uint64_t st__hash_mid(const uint8_t *p, size_t n) { /* n is 9..16: st__hash_bytes unrolled */
    uint64_t w1 = st__load_le64(p + 8) & (~0ull >> (8 * (16 - n)));
    uint64_t h = ((ST_HASH_SEED ^ ((uint64_t)n * ST_HASH_LEN)) ^ st__load_le64(p)) * ST_HASH_MUL;
    h ^= h >> 32;
    if (n < 16) return st__mix64(h ^ w1);
    h = (h ^ w1) * ST_HASH_MUL; /* a second whole word, then an empty tail */
    h ^= h >> 32;
    return st__mix64(h);
}

/* Whether a[0..n) and b[0..n) are equal, reading nothing outside them: two overlapping words
 * (or halves) for keys up to 16 bytes, memcmp beyond. A hash table's key compare is short and
 * almost always equal; a call to the library's memcmp was 4% of counting a corpus. */
ST_INLINE uint32_t st__load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
ST_INLINE int st__bytes_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    if (n >= 8) {
        if (n > 16) return st__memcmp(a, b, n) == 0;
        return st__load_le64(a) == st__load_le64(b) && st__load_le64(a + n - 8) == st__load_le64(b + n - 8);
    }
    if (n >= 4) return st__load_le32(a) == st__load_le32(b) && st__load_le32(a + n - 4) == st__load_le32(b + n - 4);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

#endif
