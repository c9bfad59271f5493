"""Mirrors core_c/src/encode/decoder.c: streaming decoding of ids (st_decoder_*) and tiktoken's
decode_with_offsets.

The decoder feeds each ordinary token's base symbols (a byte-level token's bytes, a UBE token's
symbols) to one UBE stream (text/ube.py, unpacked at the head of the decoder's state); a special
token flushes the stream and adds its own text. A truncated surrogate (ED A0-BF) ending a
byte-level call waits for the next (truncated_surrogate_at_end). A small ring of where the last
ids' symbols started maps a strict failure's symbol index back to an id. On any error the state
is restored from a copy taken at entry.

One shortcut decoder.c does not take: an ordinary token whose base symbols are whole valid
characters, met with nothing pending, is written straight to the output (its bytes, or its UBE
symbols' text) and the stream state advanced as the stream would (alphabet, run_start, base):
the stream gives that text for such symbols, and a call into it per id costs more than the id.

The decoder handle is a Decoder (enc, strict, ube, n_special, min_special, max_special, st); st
is an int64 array of D_FIELDS: the stream's fields (text/ube.py S_*), then ids, ring_n, n_held,
held, held_tok, held_id, and the ring's RING slots of (symbol index, stream index, id).
It reads the vocabulary through the Vocab fields n_ids, offsets, bytes, bytes_len, special_ids
and alphabet (formats/vocab.py), as decoder.c reads it through st_token_bytes and the special
list only.
"""
import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_ERR_BUFFER_TOO_SMALL, ST_ERR_INVALID_ARGUMENT, ST_ERR_INVALID_TOKEN,
                           ST_ERR_INVALID_UTF8, ST_NO_TOKEN, ST_OK, ST_UNIT_CODEPOINT, ST_UNIT_INDEX, ST_UNIT_UTF16,
                           clear)
from ..text.ube import (C_FAIL_AT, C_FAILED, C_N, C_STRICT, CTX_FIELDS, S_ALPHABET, S_BASE,
                        S_N_PENDING, S_PENDING, S_RUN_START, ST_UBE_FINAL, ST_UBE_STRICT, STREAM_FIELDS, feed_symbols,
                        stream_flush)

ST_ALPHABET_UBE = 1
RING = 8  # > the 4 ids a pending run can span, plus a held byte
CHUNK = 160  # symbols per st_ube_stream_feed call in decoder.c (a symbol above 511 fails its whole chunk)

D_IDS = STREAM_FIELDS
D_RING_N, D_N_HELD, D_HELD, D_HELD_TOK, D_HELD_ID = D_IDS + 1, D_IDS + 2, D_IDS + 3, D_IDS + 4, D_IDS + 5
D_RING_SYM = D_IDS + 6
D_RING_ID = D_RING_SYM + RING
D_RING_TOK = D_RING_ID + RING
D_FIELDS = D_RING_TOK + RING

# kernel results (an int64 array): status fields beside the returned status
R_TOTAL, R_AT, R_TOKEN, R_BYTE = 0, 1, 2, 3
R_FIELDS = 4

_NO_TOKEN = np.int64(ST_NO_TOKEN)


class Decoder:
    """struct st_decoder."""
    __slots__ = ("enc", "strict", "ube", "n_special", "min_special", "max_special", "st")

    def __init__(self, enc, strict, ube, n_special, min_special, max_special):
        self.enc, self.strict, self.ube = enc, strict, ube
        self.n_special, self.min_special, self.max_special = n_special, min_special, max_special
        self.st = np.zeros(D_FIELDS, np.int64)


# ---- token lookups (st_token_bytes, the special list) ----

@njit(cache=True, nogil=True, inline="always")
def token_span(offsets, bytes_len, n_ids, id_):
    """st__vocab_span: (start, length) of token id, or (-1, 0) if it is no token."""
    if id_ >= n_ids:
        return np.int64(-1), np.int64(0)
    a = np.int64(offsets[id_])
    b = np.int64(offsets[id_ + 1])
    if a >= b or b > bytes_len:
        return np.int64(-1), np.int64(0)
    return a, b - a


@njit(cache=True, nogil=True, inline="always")
def is_special(special_ids, n_special, id_):
    lo = 0
    hi = n_special
    while lo < hi:
        mid = lo + (hi - lo) // 2
        s = special_ids[mid]
        if s == id_:
            return True
        if s < id_:
            lo = mid + 1
        else:
            hi = mid
    return False


@njit(cache=True, nogil=True, inline="always")
def special(n_special, min_special, max_special, special_ids, id_):
    return n_special != 0 and min_special <= id_ <= max_special and is_special(special_ids, n_special, id_)


# ---- the streaming decoder ----

@njit(cache=True, nogil=True, inline="always")
def put(c, out, cap, p, a, length):
    """length bytes of p from a to the output, counting past cap."""
    t = c[C_N]
    for j in range(length):
        if t + j < cap:
            out[t + j] = p[a + j]
    c[C_N] = t + length


@njit(cache=True, nogil=True)
def id_of_symbol(st, sym):
    """The stream index of the id whose symbols hold stream symbol sym."""
    ring_n = st[D_RING_N]
    have = ring_n if ring_n < RING else RING
    best = st[D_IDS]
    for k in range(1, have + 1):  # newest first
        slot = (ring_n - k) % RING
        best = st[D_RING_ID + slot]
        if st[D_RING_SYM + slot] <= sym:
            break
    return best


@njit(cache=True, nogil=True)
def ring_token(st, at):
    ring_n = st[D_RING_N]
    have = ring_n if ring_n < RING else RING
    for k in range(1, have + 1):
        slot = (ring_n - k) % RING
        if st[D_RING_ID + slot] == at:
            return st[D_RING_TOK + slot]
    return _NO_TOKEN


@njit(cache=True, nogil=True, inline="always")
def stream_symbols(c, st, out, cap, p, a, count, ube, sym):
    """Feed count base symbols from p[a..] (a UBE token's, two little-endian bytes each, or a
    byte-level token's bytes) to the stream in chunks of CHUNK through sym (uint16[CHUNK]), as
    decoder.c's feed_token and stream() do (a symbol above 511 fails its chunk before any of it
    is fed). Returns the status (a strict failure: at the first malformed run, C_FAIL_AT)."""
    done = 0
    while done < count:
        n = count - done if count - done < CHUNK else CHUNK
        if ube:
            for j in range(n):
                q = a + 2 * (done + j)
                sym[j] = np.int64(p[q]) | (np.int64(p[q + 1]) << 8)
            for j in range(n):
                if sym[j] > 511:
                    return ST_ERR_INVALID_TOKEN
        else:
            for j in range(n):
                sym[j] = p[a + done + j]
        feed_symbols(c, st, out, cap, sym, 0, n)
        if c[C_FAILED] != 0:
            return ST_ERR_INVALID_UTF8
        done += n
    return ST_OK


@njit(cache=True, nogil=True)
def stream_final(c, st, out, cap):
    """stream(NULL, 0, ST_UBE_FINAL): a flush."""
    stream_flush(c, st, out, cap)
    return ST_ERR_INVALID_UTF8 if c[C_FAILED] != 0 else ST_OK


@njit(cache=True, nogil=True, inline="always")
def ring_note(st, at, id_):
    """Where the symbols of id_ (stream index at) start, in the ring."""
    slot = st[D_RING_N] % RING
    st[D_RING_SYM + slot] = st[S_BASE]
    st[D_RING_ID + slot] = at
    st[D_RING_TOK + slot] = id_
    st[D_RING_N] += 1


@njit(cache=True, nogil=True, inline="always")
def whole_characters(p, a, count):
    """Where the last character of p[a..a+count) starts if those bytes are whole valid UTF-8
    characters, else -1: the stream decodes such bytes, met with nothing pending, to themselves."""
    j = 0
    last = -1
    while j < count:
        b = p[a + j]
        if b < 0x80:
            last = j
            j += 1
            continue
        if 0xC2 <= b <= 0xDF:
            need, lo, hi = 2, 0x80, 0xBF
        elif 0xE0 <= b <= 0xEF:
            need, lo, hi = 3, (0xA0 if b == 0xE0 else 0x80), (0x9F if b == 0xED else 0xBF)
        elif 0xF0 <= b <= 0xF4:
            need, lo, hi = 4, (0x90 if b == 0xF0 else 0x80), (0x8F if b == 0xF4 else 0xBF)
        else:
            return -1
        if j + need > count or p[a + j + 1] < lo or p[a + j + 1] > hi:
            return -1
        for q in range(2, need):
            if (p[a + j + q] & 0xC0) != 0x80:
                return -1
        last = j
        j += need
    return last


@njit(cache=True, nogil=True, inline="always")
def ube_sym(p, a, j):
    return np.int64(p[a + 2 * j]) | (np.int64(p[a + 2 * j + 1]) << 8)


@njit(cache=True, nogil=True, inline="always")
def ube_whole_characters(p, a, count):
    """whole_characters for a UBE token's symbols (count pairs at p[a..]): where the last
    character starts (a symbol index), or -1 if the symbols are not whole valid characters of
    either path, each path's bytes complete (a symbol above 511: -1, the stream reports it)."""
    j = 0
    last = -1
    while j < count:
        b = ube_sym(p, a, j)
        if b < 0x80:
            last = j
            j += 1
            continue
        if b >= 256:
            if b > 511 or j + 2 > count:
                return -1
            b1 = ube_sym(p, a, j + 1)
            if b1 < 256 or b1 > 511:
                return -1
            u = (b - 256) | ((b1 - 256) << 8)
            if 0xDC00 <= u <= 0xDFFF:
                return -1
            if 0xD800 <= u <= 0xDBFF:
                if j + 4 > count:
                    return -1
                b2 = ube_sym(p, a, j + 2)
                b3 = ube_sym(p, a, j + 3)
                if b2 < 256 or b2 > 511 or b3 < 256 or b3 > 511:
                    return -1
                u2 = (b2 - 256) | ((b3 - 256) << 8)
                if u2 < 0xDC00 or u2 > 0xDFFF:
                    return -1
                last = j
                j += 4
                continue
            last = j
            j += 2
            continue
        if 0xC2 <= b <= 0xDF:
            need, lo, hi = 2, 0x80, 0xBF
        elif 0xE0 <= b <= 0xEF:
            need, lo, hi = 3, (0xA0 if b == 0xE0 else 0x80), (0x9F if b == 0xED else 0xBF)
        elif 0xF0 <= b <= 0xF4:
            need, lo, hi = 4, (0x90 if b == 0xF0 else 0x80), (0x8F if b == 0xF4 else 0xBF)
        else:
            return -1
        if j + need > count:
            return -1
        b1 = ube_sym(p, a, j + 1)
        if b1 < lo or b1 > hi:
            return -1
        for q in range(2, need):
            if (ube_sym(p, a, j + q) & 0xC0) != 0x80 or ube_sym(p, a, j + q) > 0xFF:
                return -1
        last = j
        j += need
    return last


@njit(cache=True, nogil=True, inline="always")
def ube_put_whole(p, a, count, out, o, cap):
    """The text of count UBE symbols that ube_whole_characters accepted, at out[o..]: the new o."""
    j = 0
    while j < count:
        b = ube_sym(p, a, j)
        if b < 256:
            if o < cap:
                out[o] = b
            o += 1
            j += 1
            continue
        u = (b - 256) | ((ube_sym(p, a, j + 1) - 256) << 8)
        j += 2
        if 0xD800 <= u <= 0xDBFF:
            u2 = (ube_sym(p, a, j) - 256) | ((ube_sym(p, a, j + 1) - 256) << 8)
            j += 2
            cp = 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00)
            if o + 4 <= cap:
                out[o] = 0xF0 | (cp >> 18)
                out[o + 1] = 0x80 | ((cp >> 12) & 0x3F)
                out[o + 2] = 0x80 | ((cp >> 6) & 0x3F)
                out[o + 3] = 0x80 | (cp & 0x3F)
            else:
                for k in range(4):
                    if o + k < cap:
                        out[o + k] = (0xF0 | (cp >> 18)) if k == 0 else 0x80 | ((cp >> (6 * (3 - k))) & 0x3F)
            o += 4
        else:
            if o + 3 <= cap:
                out[o] = 0xE0 | (u >> 12)
                out[o + 1] = 0x80 | ((u >> 6) & 0x3F)
                out[o + 2] = 0x80 | (u & 0x3F)
            else:
                for k in range(3):
                    if o + k < cap:
                        out[o + k] = (0xE0 | (u >> 12)) if k == 0 else 0x80 | ((u >> (6 * (2 - k))) & 0x3F)
            o += 3
    return o


@njit(cache=True, nogil=True)
def feed_token(c, st, out, cap, p, a, count, at, id_, ube, sym):
    """Feed count base symbols of token id_ (stream index at), noting where they start in the
    ring."""
    if count == 0:
        return ST_OK
    ring_note(st, at, id_)
    return stream_symbols(c, st, out, cap, p, a, count, ube, sym)


@njit(cache=True, nogil=True)
def truncated_surrogate_at_end(st, ube, n_special, min_special, max_special, special_ids, offsets, vbytes,
                               bytes_len, n_ids, ids, n):
    if ube or n == 0:
        return False
    id1 = np.int64(ids[n - 1])
    if special(n_special, min_special, max_special, special_ids, id1):
        return False
    a1, l1 = token_span(offsets, bytes_len, n_ids, id1)
    if a1 < 0:
        return False
    b1 = vbytes[a1 + l1 - 1]
    if l1 >= 2:
        b0 = vbytes[a1 + l1 - 2]
    elif n >= 2:
        id0 = np.int64(ids[n - 2])
        if special(n_special, min_special, max_special, special_ids, id0):
            return False
        a0, l0 = token_span(offsets, bytes_len, n_ids, id0)
        if a0 < 0:
            return False
        b0 = vbytes[a0 + l0 - 1]
    elif st[D_N_HELD] == 0 and st[S_ALPHABET] == 0 and st[S_N_PENDING] == 1:
        b0 = st[S_PENDING]
    else:
        return False
    return b0 == 0xED and 0xA0 <= b1 <= 0xBF


@njit(cache=True, nogil=True)
def decoder_feed(st, strict, ube, n_special, min_special, max_special, special_ids, offsets, vbytes, bytes_len,
                 n_ids, ids, n, flags, out, cap, r):
    """The body of st_decoder_feed: the status; r[R_TOTAL] = the output length, r[R_AT],
    r[R_TOKEN] = the error's stream index and id. st is restored on any error."""
    final = (flags & ST_UBE_FINAL) != 0
    saved = st.copy()
    c = np.zeros(CTX_FIELDS, np.int64)
    c[C_STRICT] = 1 if strict != 0 else 0
    sym = np.empty(CHUNK, np.uint16)
    status = ST_OK
    if st[D_N_HELD] != 0 and n == 0 and not final:
        r[R_TOTAL] = 0
        return ST_OK  # still a truncated surrogate at the end
    hold = (not final) and truncated_surrogate_at_end(st, ube, n_special, min_special, max_special, special_ids,
                                                      offsets, vbytes, bytes_len, n_ids, ids, n)
    if st[D_N_HELD] != 0:  # what the last call held comes first
        st[D_N_HELD] = 0
        held = np.empty(1, np.uint8)
        held[0] = st[D_HELD]
        status = feed_token(c, st, out, cap, held, 0, 1, st[D_HELD_ID], st[D_HELD_TOK], False, sym)
    if status == ST_OK:
        for k in range(n):
            id_ = np.int64(ids[k])
            a, ln = token_span(offsets, bytes_len, n_ids, id_)
            if a < 0:
                r[R_AT] = st[D_IDS]
                r[R_TOKEN] = id_
                r[R_BYTE] = 1  # no token (invalid_token's message), not a symbol above 511
                st[:] = saved
                return ST_ERR_INVALID_TOKEN
            if special(n_special, min_special, max_special, special_ids, id_):
                status = stream_final(c, st, out, cap)  # a special flushes the run
                if status != ST_OK:
                    break
                put(c, out, cap, vbytes, a, ln)
            else:
                count = ln // 2 if ube else ln
                last_waits = 1 if hold and k + 1 == n else 0  # the last byte waits for the next call
                cnt = count - last_waits
                last = -1
                if cnt > 0 and st[S_N_PENDING] == 0:
                    if not ube:
                        if st[S_ALPHABET] == 0:
                            last = whole_characters(vbytes, a, cnt)
                    else:
                        last = ube_whole_characters(vbytes, a, cnt)
                if last >= 0:  # the stream's result without the stream (a call per id costs more than the id)
                    ring_note(st, st[D_IDS], id_)
                    o = c[C_N]
                    if ube:
                        c[C_N] = ube_put_whole(vbytes, a, cnt, out, o, cap)
                        st[S_ALPHABET] = 1 if ube_sym(vbytes, a, cnt - 1) >= 256 else 0
                    else:
                        for j in range(cnt):
                            if o + j < cap:
                                out[o + j] = vbytes[a + j]
                        c[C_N] = o + cnt
                    base = st[S_BASE]
                    st[S_RUN_START] = base + last
                    st[S_BASE] = base + cnt
                elif cnt > 0:  # feed_token, its stream() calls inlined (a call per id costs more than the id)
                    ring_note(st, st[D_IDS], id_)
                    status = stream_symbols(c, st, out, cap, vbytes, a, cnt, ube, sym)
                    if status != ST_OK:
                        break
                if last_waits:
                    st[D_HELD] = vbytes[a + ln - 1]
                    st[D_HELD_ID] = st[D_IDS]
                    st[D_HELD_TOK] = id_
                    st[D_N_HELD] = 1
            st[D_IDS] += 1
    if status == ST_OK and final:
        status = stream_final(c, st, out, cap)
    if status == ST_OK:
        r[R_TOTAL] = c[C_N]
        if c[C_N] > cap:
            st[:] = saved
            return ST_ERR_BUFFER_TOO_SMALL
        return ST_OK
    # malformed
    at = id_of_symbol(st, c[C_FAIL_AT]) if status == ST_ERR_INVALID_UTF8 else st[D_IDS]
    s_ids = saved[D_IDS]
    token = np.int64(ids[at - s_ids]) if at >= s_ids and at - s_ids < n else _NO_TOKEN
    if status == ST_ERR_INVALID_UTF8 and token == _NO_TOKEN:
        token = ring_token(st, at)
    st[:] = saved
    r[R_TOTAL] = 0
    r[R_AT] = at
    r[R_TOKEN] = token
    return status


_EMPTY_U8 = np.zeros(16, np.uint8)
_EMPTY_U32 = np.zeros(1, np.uint32)
_EMPTY_U64 = np.zeros(1, np.uint64)


def _fail(err, status, unit=0, offset=0, token=ST_NO_TOKEN, message=""):
    """decoder.c's fail(): st__error_set, the token, then the message appended."""
    if err is not None:
        err.fail(status, unit, offset, message, token=token)
    return status


def _invalid_token(err, index, id_):
    return _fail(err, ST_ERR_INVALID_TOKEN, ST_UNIT_INDEX, index, id_,
                 "id %d (index %d) is no token of this encoding" % (id_, index))


@export
def st_decoder_new(enc, flags, alloc, out, err):
    clear(err)
    if out is not None:
        out.v = None
    if enc is None or out is None or (flags & ~ST_UBE_STRICT):
        return _fail(err, ST_ERR_INVALID_ARGUMENT, message="enc is NULL" if enc is None else "out is NULL"
                     if out is None else "flags: only ST_UBE_STRICT applies")
    v = enc.vocab
    n_special = int(v.n_special)
    out.v = Decoder(enc, flags & ST_UBE_STRICT, int(v.alphabet) == ST_ALPHABET_UBE, n_special,
                    int(v.special_ids[0]) if n_special else 0, int(v.special_ids[n_special - 1]) if n_special else 0)
    return ST_OK


@export
def st_decoder_reset(d):
    if d is not None:
        d.st[:] = 0


@export
def st_decoder_free(d):
    pass


@export
def st_decoder_feed(d, ids, n, flags, out, cap, out_len, err):
    clear(err)
    if d is None or out_len is None or (ids is None and n) or (out is None and cap):
        if out_len is not None:
            out_len.v = 0
        return _fail(err, ST_ERR_INVALID_ARGUMENT, message="d is NULL" if d is None else "out_len is NULL"
                     if out_len is None else "ids is NULL" if ids is None and n else "out is NULL")
    out_len.v = 0
    v = d.enc.vocab
    r = np.zeros(R_FIELDS, np.int64)
    st = decoder_feed(d.st, d.strict, d.ube, d.n_special, d.min_special, d.max_special, v.special_ids, v.offsets,
                      v.bytes, v.bytes_len, v.n_ids, ids if ids is not None else _EMPTY_U32, n, flags,
                      out if out is not None else _EMPTY_U8, cap, r)
    if st == ST_OK:
        out_len.v = int(r[R_TOTAL])
        return ST_OK
    if st == ST_ERR_BUFFER_TOO_SMALL:
        total = int(r[R_TOTAL])
        out_len.v = total
        return _fail(err, st, message="the text needs %d bytes" % total)
    at, token = int(r[R_AT]), int(r[R_TOKEN]) & 0xFFFFFFFF
    if st == ST_ERR_INVALID_TOKEN and r[R_BYTE] == 1:
        return _invalid_token(err, at, token)
    message = ""
    if st == ST_ERR_INVALID_UTF8:
        message = ("malformed text: the ill-formed sequence starting in the id at stream index %d does not "
                   "decode (strict)" % at)
    return _fail(err, st, ST_UNIT_INDEX, at, token, message)


# ---- decode_with_offsets ----

@njit(cache=True, nogil=True)
def decode_with_offsets(offsets, vbytes, bytes_len, n_ids, ids, n, unit, out, cap, offs, want_offsets, r):
    """The body of st_decode_with_offsets for a byte-level encoding: the status; r[R_TOTAL],
    and for an error r[R_AT] (the id's index), r[R_TOKEN], r[R_BYTE]."""
    for k in range(n):  # tiktoken looks every id up before it decodes
        a, ln = token_span(offsets, bytes_len, n_ids, np.int64(ids[k]))
        if a < 0:
            r[R_AT] = k
            r[R_TOKEN] = ids[k]
            return ST_ERR_INVALID_TOKEN
    total = np.int64(0)
    pos = np.int64(0)
    last = np.int64(1)
    need = 0
    lo = 0x80
    hi = 0xBF
    bad = False
    seq_id = np.int64(0)
    seq_byte = np.int64(0)
    bad_id = np.int64(0)
    bad_byte = np.int64(0)
    for k in range(n):
        a, ln = token_span(offsets, bytes_len, n_ids, np.int64(ids[k]))
        if want_offsets:
            if ln != 0 and (vbytes[a] & 0xC0) == 0x80:
                offs[k] = pos - last if pos >= last else 0
            else:
                offs[k] = pos
        if not bad:
            for j in range(ln):
                b = vbytes[a + j]
                at = total + j
                if need != 0:
                    if lo <= b <= hi:
                        need -= 1
                        lo = 0x80
                        hi = 0xBF
                        continue
                    bad = True  # the sequence ends early: CPython's error starts at its lead
                    bad_id = seq_id
                    bad_byte = seq_byte
                    break
                if b < 0x80:
                    continue
                lo = 0x80
                hi = 0xBF
                if 0xC2 <= b <= 0xDF:
                    need = 1
                elif 0xE0 <= b <= 0xEF:
                    need = 2
                    if b == 0xE0:
                        lo = 0xA0
                    if b == 0xED:
                        hi = 0x9F
                elif 0xF0 <= b <= 0xF4:
                    need = 3
                    if b == 0xF0:
                        lo = 0x90
                    if b == 0xF4:
                        hi = 0x8F
                else:
                    bad = True
                    bad_id = k
                    bad_byte = at
                    break
                seq_id = k
                seq_byte = at
        # tiktoken's count: every byte that is no continuation byte begins a character
        for j in range(ln):
            b = vbytes[a + j]
            if (b & 0xC0) != 0x80:
                last = 2 if unit == ST_UNIT_UTF16 and b >= 0xF0 else 1
                pos += last
        for j in range(ln):
            if total + j < cap:
                out[total + j] = vbytes[a + j]
        total += ln
    if not bad and need != 0:
        bad = True
        bad_id = seq_id
        bad_byte = seq_byte
    r[R_TOTAL] = total
    if bad:
        r[R_AT] = bad_id
        r[R_TOKEN] = ids[bad_id]
        r[R_BYTE] = bad_byte
        return ST_ERR_INVALID_UTF8
    return ST_ERR_BUFFER_TOO_SMALL if total > cap else ST_OK


@export
def st_decode_with_offsets(enc, ids, n, unit, out, cap, out_len, offsets, err):
    clear(err)
    if out_len is not None:
        out_len.v = 0
    if (enc is None or out_len is None or (ids is None and n) or (out is None and cap)
            or (unit != ST_UNIT_CODEPOINT and unit != ST_UNIT_UTF16)):
        return _fail(err, ST_ERR_INVALID_ARGUMENT, message="enc is NULL" if enc is None else "out_len is NULL"
                     if out_len is None else "ids is NULL" if ids is None and n else "out is NULL"
                     if out is None and cap else "unit must be ST_UNIT_CODEPOINT or ST_UNIT_UTF16")
    v = enc.vocab
    if int(v.alphabet) == ST_ALPHABET_UBE:
        return _fail(err, ST_ERR_INVALID_ARGUMENT, message="a UBE encoding's tokens are symbols, not text bytes: "
                     "no per-token offsets")
    r = np.zeros(R_FIELDS, np.int64)
    st = decode_with_offsets(v.offsets, v.bytes, v.bytes_len, v.n_ids, ids if ids is not None else _EMPTY_U32, n,
                             unit, out if out is not None else _EMPTY_U8, cap,
                             offsets if offsets is not None else _EMPTY_U64, offsets is not None, r)
    if st == ST_ERR_INVALID_TOKEN:
        return _invalid_token(err, int(r[R_AT]), int(r[R_TOKEN]))
    if st == ST_ERR_INVALID_UTF8:
        k = int(r[R_AT])
        return _fail(err, st, ST_UNIT_INDEX, k, int(r[R_TOKEN]),
                     "invalid UTF-8 at byte %d of the text, in the token at index %d" % (int(r[R_BYTE]), k))
    total = int(r[R_TOTAL])
    out_len.v = total
    if st == ST_ERR_BUFFER_TOO_SMALL:
        return _fail(err, st, message="the text needs %d bytes" % total)
    return ST_OK
