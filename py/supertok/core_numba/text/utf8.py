"""Mirrors core_c/src/text/utf8.c and utf8.h: UTF-8 validation (the gate every text passes
before a scanner sees it), the decoding of one code point of valid UTF-8, and UBE's routing of
one character to its symbols.

Kernels (njit), over a uint8 array s (at least 16 zero bytes after the text, as the runtime
pads every byte input) and int64 positions:
  utf8_validate(s, length) -> (at, truncated): at = -1 if s[0..length) is valid UTF-8, else the
      byte offset of the first bad sequence; truncated = 1 where utf8.c says "truncated sequence"
  utf8_decode(s, i) -> (cp, length)        (st__utf8_decode)
  ube_char_symbols(s, i, sym) -> (k, length)  (st__ube_char_symbols: sym, a uint16 array of 4)
"""
import numpy as np
from numba import njit

from .. import export
from ..base.common import ST_ERR_INVALID_ARGUMENT, ST_ERR_INVALID_UTF8, ST_OK, ST_UNIT_BYTE, clear, fail

_U64 = np.uint64


@njit(cache=True, nogil=True, inline="always")
def utf8_decode(s, i):
    """st__utf8_decode: the code point of valid UTF-8 at s[i..] and its length."""
    b0 = np.int64(s[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(s[i + 1]) & 0x3F), 2
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(s[i + 1]) & 0x3F) << 6) | (np.int64(s[i + 2]) & 0x3F), 3
    return (((b0 & 0x07) << 18) | ((np.int64(s[i + 1]) & 0x3F) << 12) | ((np.int64(s[i + 2]) & 0x3F) << 6)
            | (np.int64(s[i + 3]) & 0x3F)), 4


@njit(cache=True, nogil=True, inline="always")
def utf8_length(cp):
    """The length st__utf8_encode gives the scalar value cp."""
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


@njit(cache=True, nogil=True, inline="always")
def utf8_byte(cp, l, k):
    """Byte k of cp's UTF-8 (l = utf8_length(cp)): st__utf8_encode's b[k], a byte at a time, so a
    kernel needs no scratch array."""
    if l == 1:
        return cp
    if k == 0:
        return ((0xF00 >> l) & 0xFF) | (cp >> (6 * (l - 1)))
    return 0x80 | ((cp >> (6 * (l - 1 - k))) & 0x3F)


@njit(cache=True, nogil=True, inline="always")
def ube_char_symbols(s, i, sym):
    """st__ube_char_symbols: the UBE symbols of the character at s[i..] (valid UTF-8) into
    sym[0..4); returns (how many, its UTF-8 length). Below U+0800 its UTF-8 bytes, else its
    UTF-16LE bytes + 256."""
    cp = np.int64(s[i])
    if cp < 0x80:
        sym[0] = cp
        return 1, 1
    cp, ln = utf8_decode(s, i)
    if cp < 0x800:
        for k in range(ln):
            sym[k] = s[i + k]
        return ln, ln
    if cp < 0x10000:
        sym[0] = 256 + (cp & 0xFF)
        sym[1] = 256 + (cp >> 8)
        return 2, ln
    v = cp - 0x10000
    hi = 0xD800 + (v >> 10)
    lo = 0xDC00 + (v & 0x3FF)
    sym[0] = 256 + (hi & 0xFF)
    sym[1] = 256 + (hi >> 8)
    sym[2] = 256 + (lo & 0xFF)
    sym[3] = 256 + (lo >> 8)
    return 4, ln


# -- the eight-byte blocks (u8_fast) --
_H = _U64(0x8080808080808080)
_B7F = _U64(0x7F7F7F7F7F7F7F7F)
_B1E = _U64(0x1E1E1E1E1E1E1E1E)
_B0F = _U64(0x0F0F0F0F0F0F0F0F)
_B0D = _U64(0x0D0D0D0D0D0D0D0D)
_S1, _S2, _S3, _S8, _S16, _S48, _S56 = _U64(1), _U64(2), _U64(3), _U64(8), _U64(16), _U64(48), _U64(56)
_Z = _U64(0)


@njit(cache=True, nogil=True, inline="always")
def u8_load(s, i):
    """The eight bytes at s[i..] as a little-endian word."""
    return (_U64(s[i]) | (_U64(s[i + 1]) << _S8) | (_U64(s[i + 2]) << _S16) | (_U64(s[i + 3]) << _U64(24))
            | (_U64(s[i + 4]) << _U64(32)) | (_U64(s[i + 5]) << _U64(40)) | (_U64(s[i + 6]) << _S48)
            | (_U64(s[i + 7]) << _S56))


@njit(cache=True, nogil=True, inline="always")
def u8_zero(x):
    """Bit 7 of each byte of x (every byte below 0x80) that is zero."""
    return ~((x + _B7F) | x) & _H


@njit(cache=True, nogil=True)
def u8_fast(s, i, length):
    """utf8.c's fast path over blocks of eight bytes (ASCII, two- and three-byte characters):
    returns the position where it could not go on (the start of a character)."""
    carry = _Z
    e0_next = _Z
    ed_next = _Z
    while length - i >= 8:
        w = u8_load(s, i)
        if ((w & _H) | carry) == _Z:  # ASCII
            i += 8
            while length - i >= 8 and (u8_load(s, i) & _H) == _Z:
                i += 8
            continue
        hi = w & _H
        b6 = (w << _S1) & _H
        b5 = (w << _S2) & _H
        cont = hi & ~b6
        lead = hi & b6
        lead2 = lead & ~b5
        lead3 = lead & b5
        want = (lead2 << _S8) | (lead3 << _S8) | (lead3 << _S16) | carry
        if (((lead3 & (w << _S3)) | (want ^ cont)) & _H) != _Z:
            break
        if (lead2 & u8_zero(w & _B1E)) != _Z:
            break
        e0 = _Z
        ed = _Z
        if lead3 != _Z:
            e0 = lead3 & u8_zero(w & _B0F)
            ed = lead3 & u8_zero((w ^ _B0D) & _B0F)
        if ((((e0 << _S8) | e0_next) & ~b5) | (((ed << _S8) | ed_next) & b5)) != _Z:
            break
        e0_next = e0 >> _S56
        ed_next = ed >> _S56
        carry = (lead2 >> _S56) | (lead3 >> _S56) | (lead3 >> _S48)
        i += 8
    if carry != _Z:  # back to the lead of the character the last block cut
        i -= 1
        while (s[i] & 0xC0) == 0x80:
            i -= 1
    return i


@njit(cache=True, nogil=True)
def utf8_validate(s, length):
    """st_utf8_validate's checks: (-1, 0) if valid, else (byte offset of the first bad
    sequence, 1 if the message is "truncated sequence" else 0)."""
    i = np.int64(0)
    length = np.int64(length)
    while i < length:
        i = u8_fast(s, i, length)
        if i >= length:
            break
        b = np.int64(s[i])
        if b < 0x80:
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            k = i
            while length - k >= 2 and 0xC2 <= s[k] <= 0xDF and (s[k + 1] & 0xC0) == 0x80:
                k += 2
            if k > i:
                i = k
                continue
        elif 0xE1 <= b <= 0xEF and b != 0xED:
            k = i
            while (length - k >= 3 and 0xE1 <= s[k] <= 0xEF and s[k] != 0xED and (s[k + 1] & 0xC0) == 0x80
                   and (s[k + 2] & 0xC0) == 0x80):
                k += 3
            if k > i:
                i = k
                continue
        lo = 0x80
        hi = 0xBF
        if 0xC2 <= b <= 0xDF:
            need = 1
        elif 0xE0 <= b <= 0xEF:
            need = 2
            if b == 0xE0:
                lo = 0xA0
            elif b == 0xED:
                hi = 0x9F
        elif 0xF0 <= b <= 0xF4:
            need = 3
            if b == 0xF0:
                lo = 0x90
            elif b == 0xF4:
                hi = 0x8F
        else:
            return i, 0
        if length - i <= need:
            return i, 1
        if s[i + 1] < lo or s[i + 1] > hi:
            return i, 0
        for k in range(2, need + 1):
            if (s[i + k] & 0xC0) != 0x80:
                return i, 0
        i += need + 1
    return np.int64(-1), 0


def validate(err, text, length):
    """st_utf8_validate for the exports that call it (err may be None): the status."""
    if length == 0:
        return ST_OK
    at, truncated = utf8_validate(text, length)
    if at < 0:
        return ST_OK
    return fail(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, int(at), "truncated sequence" if truncated else "")


@export
def st_utf8_validate(text, length, err):
    clear(err)
    if text is None and length:
        return fail(err, ST_ERR_INVALID_ARGUMENT, message="text is NULL")
    return validate(err, text, length)
