"""Mirrors core_c/src/text/ube.c: UBE (Universal Byte-Level Encoding, docs/design.md §6), the
encoder of text to symbols and the streaming dual-buffer decoder of symbols to text.

Routing: a code point below U+0800 goes to the UTF-8 path (its bytes are symbols 0-255), every
other to the UTF-16 path (its UTF-16LE bytes + 256). Decoding feeds symbols to one of two byte
decoders; a change of alphabet, a special token or the end flushes the active one; each
same-alphabet run decodes as CPython's bytes.decode("utf-8" / "utf-16-le", "replace").

The stream state (st_ube_stream) a host holds is the block rt.alloc(st_ube_stream_size())
gives, in the C layout: byte 0 alphabet, byte 1 n_pending, bytes 2-5 pending, bytes 8-15
run_start, bytes 16-23 base (little-endian). The kernels work on it unpacked into an int64
array of STREAM_FIELDS (S_ALPHABET, S_N_PENDING, S_PENDING + 0..3, S_RUN_START, S_BASE), which
the decoder (encode/decoder.py) keeps at the head of its own state array. The dec_ctx of a call
is an int64 array of CTX_FIELDS (output length, strict, failed, fail_at); the output is a
uint8 array written up to cap and counted past it.

Kernels (njit): feed_symbols (feed, utf8_byte, utf16_byte, utf16_unit and bad in one loop over
the state in locals), stream_flush (flush), stream_check
(check_state: 0 or the index of the message in CHECK_MESSAGES), stream_feed (the body of
st_ube_stream_feed over an unpacked state), ube_encode (st_ube_encode_symbols' loop).
"""
import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_ERR_BUFFER_TOO_SMALL, ST_ERR_INVALID_ARGUMENT, ST_ERR_INVALID_TOKEN,
                           ST_ERR_INVALID_UTF8, ST_OK, ST_UNIT_INDEX, clear, fail)
from .utf8 import ube_char_symbols, utf8_byte, utf8_length, validate

ST_UBE_UTF8, ST_UBE_UTF16 = 0, 1
ST_UBE_FINAL, ST_UBE_STRICT = 1, 2
STREAM_SIZE = 24  # sizeof(st_ube_stream)

S_ALPHABET, S_N_PENDING, S_PENDING, S_RUN_START, S_BASE = 0, 1, 2, 6, 7
STREAM_FIELDS = 8
C_N, C_STRICT, C_FAILED, C_FAIL_AT = 0, 1, 2, 3
CTX_FIELDS = 4

CHECK_MESSAGES = ("", "alphabet is neither 0 (UTF-8) nor 1 (UTF-16)", "n_pending is above 3",
                  "run_start is not base - n_pending", "pending holds no incomplete UTF-8 sequence",
                  "pending holds no high surrogate")


# -- output --
@njit(cache=True, nogil=True)
def put_cp(out, cap, o, cp):
    """cp as UTF-8 into out[0..cap) at o, counting past cap: the new length."""
    l = utf8_length(cp)
    for k in range(l):  # near cap: the bytes that fit are written, as C's put_cp does
        if o + k < cap:
            out[o + k] = utf8_byte(cp, l, k)
    return o + l


@njit(cache=True, nogil=True, inline="always")
def utf8_need(lead):
    """(bytes a UTF-8 sequence with this lead needs in all (0: no lead), lo, hi of its second)."""
    if 0xC2 <= lead <= 0xDF:
        return 2, 0x80, 0xBF
    if 0xE0 <= lead <= 0xEF:
        return 3, (0xA0 if lead == 0xE0 else 0x80), (0x9F if lead == 0xED else 0xBF)
    if 0xF0 <= lead <= 0xF4:
        return 4, (0x90 if lead == 0xF0 else 0x80), (0x8F if lead == 0xF4 else 0xBF)
    return 0, 0x80, 0xBF


@njit(cache=True, nogil=True)
def feed_symbols(c, s, out, cap, src, a, count):
    """ube.c's feed (with utf8_byte, utf16_byte, utf16_unit and bad) over the count symbols
    (0-511, uint16) src[a..], at stream indexes s[S_BASE].., the state in locals for the loop.
    Advances s[S_BASE] by count. Under strict it stops at the first malformed run (c[C_FAILED],
    c[C_FAIL_AT]): the caller fails then, with the state it saved."""
    alpha = s[S_ALPHABET]
    npn = s[S_N_PENDING]
    p0 = s[S_PENDING]
    p1 = s[S_PENDING + 1]
    p2 = s[S_PENDING + 2]
    p3 = s[S_PENDING + 3]
    rs = s[S_RUN_START]
    base = s[S_BASE]
    o = c[C_N]
    strict = c[C_STRICT] != 0
    failed = c[C_FAILED] != 0
    fail_at = c[C_FAIL_AT]
    for j in range(count):
        pos = base + j
        sym = np.int64(src[a + j])
        if sym < 256:
            if alpha != ST_UBE_UTF8:  # a change of alphabet flushes the run
                if npn != 0:
                    if strict and not failed:
                        failed = True
                        fail_at = rs
                    o = put_cp(out, cap, o, 0xFFFD)
                npn = 0
                alpha = ST_UBE_UTF8
            b = sym
            # utf8_byte
            while True:
                if npn == 0:
                    rs = pos
                    if b < 0x80:
                        if o < cap:
                            out[o] = b
                        o += 1
                        break
                    need, lo, hi = utf8_need(b)
                    if need == 0:
                        if strict and not failed:
                            failed = True
                            fail_at = rs
                        o = put_cp(out, cap, o, 0xFFFD)
                        break
                    p0 = b
                    npn = 1
                    break
                need, lo, hi = utf8_need(p0)
                if npn > 1:
                    lo = 0x80
                    hi = 0xBF
                if lo <= b <= hi:
                    if npn == 1:
                        p1 = b
                    elif npn == 2:
                        p2 = b
                    else:
                        p3 = b
                    npn += 1
                    if npn == need:
                        if need == 2:
                            cp = ((p0 & 0x1F) << 6) | (p1 & 0x3F)
                        elif need == 3:
                            cp = ((p0 & 0x0F) << 12) | ((p1 & 0x3F) << 6) | (p2 & 0x3F)
                        else:
                            cp = ((p0 & 0x07) << 18) | ((p1 & 0x3F) << 12) | ((p2 & 0x3F) << 6) | (p3 & 0x3F)
                        npn = 0
                        o = put_cp(out, cap, o, cp)
                    break
                # the valid prefix ends here: one U+FFFD for it, then b starts afresh
                if strict and not failed:
                    failed = True
                    fail_at = rs
                o = put_cp(out, cap, o, 0xFFFD)
                npn = 0
        else:
            if alpha != ST_UBE_UTF16:
                if npn != 0:
                    if strict and not failed:
                        failed = True
                        fail_at = rs
                    o = put_cp(out, cap, o, 0xFFFD)
                npn = 0
                alpha = ST_UBE_UTF16
            b = sym - 256
            # utf16_byte
            if npn == 0:
                rs = pos
                p0 = b
            elif npn == 1:
                p1 = b
            elif npn == 2:
                p2 = b
            else:
                p3 = b
            npn += 1
            u = -1
            if npn == 2:
                u = p0 | (p1 << 8)
                npn = 0
            elif npn == 4:
                hi16 = p0 | (p1 << 8)
                u = p2 | (p3 << 8)
                npn = 0
                if 0xDC00 <= u <= 0xDFFF:
                    o = put_cp(out, cap, o, 0x10000 + ((hi16 - 0xD800) << 10) + (u - 0xDC00))
                    u = -1
                else:
                    if strict and not failed:  # the high surrogate had no low one after it
                        failed = True
                        fail_at = rs
                    o = put_cp(out, cap, o, 0xFFFD)
                    rs = pos - 1
            if u >= 0:  # utf16_unit
                if 0xD800 <= u <= 0xDBFF:  # wait for its low surrogate
                    p0 = u & 0xFF
                    p1 = u >> 8
                    npn = 2
                elif 0xDC00 <= u <= 0xDFFF:
                    if strict and not failed:
                        failed = True
                        fail_at = rs
                    o = put_cp(out, cap, o, 0xFFFD)
                else:
                    o = put_cp(out, cap, o, u)
        if failed:
            break
    s[S_ALPHABET] = alpha
    s[S_N_PENDING] = npn
    s[S_PENDING] = p0
    s[S_PENDING + 1] = p1
    s[S_PENDING + 2] = p2
    s[S_PENDING + 3] = p3
    s[S_RUN_START] = rs
    s[S_BASE] = base + count
    c[C_N] = o
    c[C_FAILED] = 1 if failed else 0
    c[C_FAIL_AT] = fail_at


@njit(cache=True, nogil=True)
def stream_flush(c, s, out, cap):
    """flush: the end of a same-alphabet run (whatever is pending is one malformed run), at
    stream index s[S_BASE]."""
    if s[S_N_PENDING] != 0:
        if c[C_STRICT] != 0 and c[C_FAILED] == 0:
            c[C_FAILED] = 1
            c[C_FAIL_AT] = s[S_RUN_START]
        c[C_N] = put_cp(out, cap, c[C_N], 0xFFFD)
    s[S_N_PENDING] = 0


@njit(cache=True, nogil=True)
def stream_check(s):
    """check_state: 0 if s is a state feed can leave, else the index of its CHECK_MESSAGES."""
    n = s[S_N_PENDING]
    if s[S_ALPHABET] < 0 or s[S_ALPHABET] > ST_UBE_UTF16:
        return 1
    if n > 3:
        return 2
    if n != 0 and s[S_BASE] - s[S_RUN_START] != n:
        return 3
    if n != 0 and s[S_ALPHABET] == ST_UBE_UTF8:
        need, lo, hi = utf8_need(s[S_PENDING])
        if n >= need:
            return 4
        for k in range(1, n):
            p = s[S_PENDING + k]
            if p < (lo if k == 1 else 0x80) or p > (hi if k == 1 else 0xBF):
                return 4
    elif n >= 2:
        u = s[S_PENDING] | (s[S_PENDING + 1] << 8)
        if u < 0xD800 or u > 0xDBFF:
            return 5
    return 0


@njit(cache=True, nogil=True)
def stream_feed(s, symbols, n, flags, out, cap, r):
    """The body of st_ube_stream_feed over an unpacked state s (left as it was on any error).
    Returns the status; r[0] = the output length (or the index of a symbol above 511, or the
    strict failure's symbol index; r[1] = that symbol), r[1] = the check_state message index
    for ST_ERR_INVALID_ARGUMENT."""
    cs = stream_check(s)
    if cs != 0:
        r[1] = cs
        return ST_ERR_INVALID_ARGUMENT
    for k in range(n):
        if symbols[k] > 511:
            r[0] = k
            r[1] = symbols[k]
            return ST_ERR_INVALID_TOKEN
    c = np.zeros(CTX_FIELDS, np.int64)
    c[C_STRICT] = 1 if (flags & ST_UBE_STRICT) != 0 else 0
    saved = s.copy()
    feed_symbols(c, s, out, cap, symbols, 0, n)
    if (flags & ST_UBE_FINAL) != 0 and c[C_FAILED] == 0:
        stream_flush(c, s, out, cap)
    if c[C_FAILED] != 0:
        s[:] = saved
        r[0] = c[C_FAIL_AT]
        return ST_ERR_INVALID_UTF8
    r[0] = c[C_N]
    if c[C_N] > cap:
        s[:] = saved
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK


@njit(cache=True, nogil=True)
def ube_encode(s, length, symbols, cap):
    """st_ube_encode_symbols' loop over valid UTF-8: the number of symbols (written up to cap)."""
    sym = np.zeros(4, np.uint16)
    n = np.int64(0)
    i = np.int64(0)
    while i < length:
        b = s[i]
        if b < 0x80:  # the common case, without the routing call
            if n < cap:
                symbols[n] = b
            n += 1
            i += 1
            continue
        k, ln = ube_char_symbols(s, i, sym)
        for j in range(k):
            if n < cap:
                symbols[n] = sym[j]
            n += 1
        i += ln
    return n


@njit(cache=True, nogil=True)
def stream_unpack(block, s):
    """The C layout of st_ube_stream (block: uint8) into the int64 fields s."""
    s[S_ALPHABET] = block[0]
    s[S_N_PENDING] = block[1]
    for k in range(4):
        s[S_PENDING + k] = block[2 + k]
    rs = np.int64(0)
    b = np.int64(0)
    for k in range(8):
        rs |= np.int64(block[8 + k]) << (8 * k)
        b |= np.int64(block[16 + k]) << (8 * k)
    s[S_RUN_START] = rs
    s[S_BASE] = b


@njit(cache=True, nogil=True)
def stream_pack(s, block):
    block[0] = s[S_ALPHABET]
    block[1] = s[S_N_PENDING]
    for k in range(4):
        block[2 + k] = s[S_PENDING + k]
    for k in range(8):
        block[8 + k] = (s[S_RUN_START] >> (8 * k)) & 0xFF
        block[16 + k] = (s[S_BASE] >> (8 * k)) & 0xFF


@njit(cache=True, nogil=True)
def stream_feed_block(block, symbols, n, flags, out, cap, r):
    """st_ube_stream_feed on the state block a host holds."""
    s = np.zeros(STREAM_FIELDS, np.int64)
    stream_unpack(block, s)
    st = stream_feed(s, symbols, n, flags, out, cap, r)
    if st == ST_OK:
        stream_pack(s, block)
    return st


_EMPTY_U8 = np.zeros(1, np.uint8)
_EMPTY_U16 = np.zeros(1, np.uint16)


@export
def st_ube_encode_symbols(text, length, symbols, cap, n_symbols, err):
    clear(err)
    if n_symbols is None or (text is None and length) or (symbols is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    n_symbols.v = 0
    st = validate(err, text, length)
    if st != ST_OK:
        return st
    n = int(ube_encode(text, length, symbols if symbols is not None else _EMPTY_U16, cap)) if length else 0
    n_symbols.v = n
    if n > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK


@export
def st_ube_stream_size():
    return STREAM_SIZE


@export
def st_ube_stream_init(s):
    if s is None:
        return
    s[:STREAM_SIZE] = 0


def _feed(block, symbols, n, flags, out, cap, out_len, err):
    r = np.zeros(2, np.int64)
    st = stream_feed_block(block, symbols if symbols is not None else _EMPTY_U16, n, flags,
                           out if out is not None else _EMPTY_U8, cap, r)
    if st == ST_OK:
        out_len.v = int(r[0])
        return ST_OK
    if st == ST_ERR_INVALID_ARGUMENT:
        return fail(err, st, message="damaged stream state: " + CHECK_MESSAGES[int(r[1])])
    if st == ST_ERR_INVALID_TOKEN:
        if err is not None:
            err.token = int(r[1])
        return fail(err, st, ST_UNIT_INDEX, int(r[0]), "a symbol above 511")
    if st == ST_ERR_INVALID_UTF8:
        return fail(err, st, ST_UNIT_INDEX, int(r[0]), "malformed text (strict)")
    out_len.v = int(r[0])  # ST_ERR_BUFFER_TOO_SMALL: the size needed
    return fail(err, st)


@export
def st_ube_stream_feed(s, symbols, n, flags, out, cap, out_len, err):
    clear(err)
    if s is None or out_len is None or (symbols is None and n) or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    out_len.v = 0
    return _feed(s, symbols, n, flags, out, cap, out_len, err)


@export
def st_ube_decode_symbols(symbols, n, flags, out, cap, out_len, err):
    clear(err)
    if out_len is None or (symbols is None and n) or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    out_len.v = 0
    return _feed(np.zeros(STREAM_SIZE, np.uint8), symbols, n, flags | ST_UBE_FINAL, out, cap, out_len, err)
