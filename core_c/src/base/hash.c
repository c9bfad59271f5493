/* The byte-string hash (hash.h). */
#include "hash.h"

/* A weak hash clusters on 200k tokens (suBPEriod: the multiply-shift variant lost 40%), so each
 * 8-byte word is folded in with a multiply and the result goes through a full finalizer. */
uint64_t st__hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = ST_HASH_SEED ^ ((uint64_t)n * ST_HASH_LEN);
    if (n == 8) return st__mix64(h ^ st__load_le64(p)); /* the same as the short-key path */
    while (n >= 8) {
        h = (h ^ st__load_le64(p)) * ST_HASH_MUL;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    switch (n) {
    case 7: w |= (uint64_t)p[6] << 48; /* fall through */
    case 6: w |= (uint64_t)p[5] << 40; /* fall through */
    case 5: w |= (uint64_t)p[4] << 32; /* fall through */
    case 4: w |= (uint64_t)p[3] << 24; /* fall through */
    case 3: w |= (uint64_t)p[2] << 16; /* fall through */
    case 2: w |= (uint64_t)p[1] << 8;  /* fall through */
    case 1: w |= (uint64_t)p[0]; break;
    default: break;
    }
    return st__mix64(h ^ w);
}
