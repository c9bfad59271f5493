"""Mirrors core_c/src/formats/base64.c and base64.h: base64 (RFC 4648, standard alphabet,
padded), the token text of rank files and model files. Text is s[i .. i + n) of a uint8 array."""
import numpy as np
from numba import njit

ALPHABET = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8).copy()
VALUES = np.full(256, 64, np.uint8)  # 0..63 for the alphabet, 64 for anything else
VALUES[ALPHABET] = np.arange(64, dtype=np.uint8)
_EQ = 61  # '='


@njit(cache=True, nogil=True)
def value(c):
    v = VALUES[c]
    return -1 if v == 64 else np.int64(v)


@njit(cache=True, nogil=True)
def base64_decoded_length(s, i, n):
    """Decoded length of padded base64 text of n characters, -1 if n is no such length."""
    if n == 0 or n % 4:
        return -1
    pad = (1 if s[i + n - 1] == _EQ else 0) + (1 if s[i + n - 2] == _EQ else 0)
    return n // 4 * 3 - pad


@njit(cache=True, nogil=True)
def base64_decode(s, i, n, out, o0, write):
    """Decoded length of s[i..i+n), or -1 if it is not valid padded base64; writes the bytes to
    out[o0..] when write (C: out non-NULL)."""
    if n == 0 or n % 4:
        return -1
    pad = 0
    if s[i + n - 1] == _EQ:
        pad += 1
    if s[i + n - 2] == _EQ:
        pad += 1
    length = n // 4 * 3 - pad
    o = 0
    for j in range(0, n, 4):
        w = 0
        for k in range(4):
            c = s[i + j + k]
            if c == _EQ and j + 4 == n and k + pad >= 4:
                v = 0
            else:
                v = value(c)
                if v < 0:
                    return -1
            w = (w << 6) | v
        for k in range(3):
            if o >= length:
                break
            if write:
                out[o0 + o] = (w >> (16 - 8 * k)) & 0xFF
            o += 1
    return length


@njit(cache=True, nogil=True)
def base64_canonical(s, i, n):
    """1 if s[i..i+n) is canonical padded base64 of at least one byte."""
    if n == 0 or n % 4:
        return 0
    pad = (1 if s[i + n - 1] == _EQ else 0) + (1 if (s[i + n - 2] == _EQ and s[i + n - 1] == _EQ) else 0)
    for k in range(n - pad):
        if value(s[i + k]) < 0:
            return 0
    if pad == 1 and (value(s[i + n - 2]) & 3):
        return 0
    if pad == 2 and (value(s[i + n - 3]) & 15):
        return 0
    return 1


@njit(cache=True, nogil=True)
def base64_encoded_len(n):
    return (n + 2) // 3 * 4


@njit(cache=True, nogil=True)
def base64_encode(s, i, n, out, o):
    """The base64 of s[i..i+n) at out[o..]."""
    for j in range(0, n, 3):
        w = np.int64(s[i + j]) << 16
        if j + 1 < n:
            w |= np.int64(s[i + j + 1]) << 8
        if j + 2 < n:
            w |= np.int64(s[i + j + 2])
        out[o] = ALPHABET[(w >> 18) & 63]
        out[o + 1] = ALPHABET[(w >> 12) & 63]
        out[o + 2] = ALPHABET[(w >> 6) & 63] if j + 1 < n else _EQ
        out[o + 3] = ALPHABET[w & 63] if j + 2 < n else _EQ
        o += 4
