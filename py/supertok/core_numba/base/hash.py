"""Mirrors core_c/src/base/hash.h and hash.c: the byte-string hash of the token store's table
(and the piece cache, and the counters), and the 64-bit mixer every hash table of the core uses.

The values are the C core's exactly (an image stores the table, so a loaded image is probed with
these). A key is bytes p[i .. i + n) of a uint8 array; hash_short and hash_mid read whole words
past the key as the C does (the caller pads: 8 bytes at p[i] readable for n 1..8, 16 for 9..16).
All arithmetic is in np.uint64 (multiplication wraps as in C); n and i are int64.
"""
import numpy as np
from numba import njit

U64 = np.uint64
ST_HASH_SEED = U64(0x9E3779B97F4A7C15)
ST_HASH_LEN = U64(0xD6E8FEB86659FD93)
_M1 = U64(0xBF58476D1CE4E5B9)
_M2 = U64(0x94D049BB133111EB)
ST_HASH_MUL = U64(0xFF51AFD7ED558CCD)  # the word multiplier of hash_bytes (and the span hash)
_ONES = U64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True)
def load_le64(p, i):
    """st__load_le64(p + i)."""
    return (U64(p[i]) | (U64(p[i + 1]) << U64(8)) | (U64(p[i + 2]) << U64(16)) | (U64(p[i + 3]) << U64(24)) |
            (U64(p[i + 4]) << U64(32)) | (U64(p[i + 5]) << U64(40)) | (U64(p[i + 6]) << U64(48)) |
            (U64(p[i + 7]) << U64(56)))


@njit(cache=True, nogil=True)
def mix64(x):
    """st__mix64: the splitmix64 finalizer (x a uint64)."""
    x = U64(x)
    x ^= x >> U64(30)
    x *= _M1
    x ^= x >> U64(27)
    x *= _M2
    x ^= x >> U64(31)
    return x


@njit(cache=True, nogil=True)
def low_mask(nbytes):
    """~0ull >> (8 * (8 - nbytes)) for nbytes 1..8 (a whole word for 8)."""
    return _ONES >> U64(8 * (8 - nbytes))


@njit(cache=True, nogil=True)
def hash_bytes(p, i, n):
    """st__hash_bytes(p + i, n)."""
    h = ST_HASH_SEED ^ (U64(n) * ST_HASH_LEN)
    if n == 8:
        return mix64(h ^ load_le64(p, i))
    while n >= 8:
        h = (h ^ load_le64(p, i)) * ST_HASH_MUL
        h ^= h >> U64(32)
        i += 8
        n -= 8
    w = U64(0)
    for k in range(n):
        w |= U64(p[i + k]) << U64(8 * k)
    return mix64(h ^ w)


@njit(cache=True, nogil=True)
def hash_short(p, i, n):
    """st__hash_short: n is 1..8, 8 bytes at p[i] readable."""
    w = load_le64(p, i) & low_mask(n)
    return mix64((ST_HASH_SEED ^ (U64(n) * ST_HASH_LEN)) ^ w)


@njit(cache=True, nogil=True)
def hash_mid(p, i, n):
    """st__hash_mid: n is 9..16, 16 bytes at p[i] readable."""
    w1 = load_le64(p, i + 8) & low_mask(n - 8)
    h = ((ST_HASH_SEED ^ (U64(n) * ST_HASH_LEN)) ^ load_le64(p, i)) * ST_HASH_MUL
    h ^= h >> U64(32)
    if n < 16:
        return mix64(h ^ w1)
    h = (h ^ w1) * ST_HASH_MUL
    h ^= h >> U64(32)
    return mix64(h)
