"""Mirrors core_c/src/text/normalize.c, normalize.h and nfc_tables.h: Unicode NFC with an offset map
(docs/design.md §4), HuggingFace tokenizers' `NFC` normalizer (Unicode 9.0 data).

The data is not generated here: core_c/tools/gen_nfc_tables.py writes it twice from one source,
as core_c/src/text/nfc_tables.c for the C core and as nfc_tables.bin (beside this file; its
BINARY FORMAT is in the generator's docstring) for the port, and its --check compares both. This
module reads the .bin once at import with numpy (the port's cache digest covers it).

The algorithm is normalize.c's, function for function: units (a starter and what composes into
it) walked twice, runs of marks walked in place when in order and once per class present when
not, so linear time and no scratch memory. A position in the decomposed text is the pair
(pos, sub); the walk's context (nfc_ctx) is an int64 array [n, cap]; the unit's state
(nfc_unit) an int64 array of UNIT_FIELDS.

Kernels (njit): nfc_ccc, nfc_decompose, nfc_compose, nfc_item, nfc_put, nfc_mark, nfc_run,
nfc_walk, nfc (st__nfc).
"""
import os

import numpy as np
from numba import njit

from .. import export
from ..base.common import ST_ERR_BUFFER_TOO_SMALL, ST_ERR_INVALID_ARGUMENT, ST_OK, clear, fail
from .utf8 import utf8_byte, utf8_decode, utf8_length, validate

# -- nfc_tables.h --
ST_NFC_LIMIT = 0x30000
ST_NFC_CCC_SHIFT = 6
ST_NFC_DEC_SHIFT = 5
ST_NFC_MAX_EXPANSION = 3  # supertok.h's ST_NFC_MAX_EXPANSION, normalize.h's ST__NFC_MAX_EXPANSION

TABLES_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nfc_tables.bin")
BIN_MAGIC = b"STNFC\0\0\1"
HEADER_SIZE = 40


def _load(raw, path):
    """The sections of nfc_tables.bin (its bytes raw) as numpy arrays."""
    if len(raw) < HEADER_SIZE or raw[:8] != BIN_MAGIC:
        raise ImportError("%s: not an nfc_tables.bin of format 1" % path)
    version = raw[8:16].rstrip(b"\0")
    n_ccc, n_dec, n_pool, n_second, n_pairs, _ = (int(x) for x in np.frombuffer(raw, "<u4", 6, 16))
    at = HEADER_SIZE
    out = {}

    def take(name, dtype, count):
        nonlocal at
        size = np.dtype(dtype).itemsize * count
        out[name] = np.frombuffer(raw, dtype, count, at).astype(np.dtype(dtype).newbyteorder("="))
        at += size + (-size % 4)

    take("ccc_index", np.uint8, ST_NFC_LIMIT >> ST_NFC_CCC_SHIFT)
    take("ccc_blocks", np.uint8, n_ccc << ST_NFC_CCC_SHIFT)
    take("dec_index", np.uint8, ST_NFC_LIMIT >> ST_NFC_DEC_SHIFT)
    take("dec_blocks", "<u2", n_dec << ST_NFC_DEC_SHIFT)
    take("dec_pool", "<u4", n_pool)
    take("comp_second", "<u4", n_second)
    take("comp_start", "<u4", n_second + 1)
    take("comp_first", "<u4", n_pairs)
    take("comp_result", "<u4", n_pairs)
    if at != len(raw):
        raise ImportError("%s: size does not match its header" % path)
    return version, out


with open(TABLES_PATH, "rb") as _f:
    _VERSION, _T = _load(_f.read(), TABLES_PATH)

NFC_UNICODE_VERSION = _VERSION.decode("ascii")  # st_nfc_unicode_version
NFC_CCC_INDEX = _T["ccc_index"]
NFC_CCC_BLOCKS = _T["ccc_blocks"]
NFC_DEC_INDEX = _T["dec_index"]
NFC_DEC_BLOCKS = _T["dec_blocks"]
NFC_DEC_POOL = _T["dec_pool"]
NFC_COMP_SECOND = _T["comp_second"]
NFC_COMP_START = _T["comp_start"]
NFC_COMP_FIRST = _T["comp_first"]
NFC_COMP_RESULT = _T["comp_result"]
NFC_COMP_SECOND_COUNT = len(NFC_COMP_SECOND)

# nfc_ctx: [n, cap]; nfc_unit: [s, has_s, adj, last_cc, emit]
C_N, C_CAP = 0, 1
U_S, U_HAS_S, U_ADJ, U_LAST_CC, U_EMIT = 0, 1, 2, 3, 4
UNIT_FIELDS = 5


@njit(cache=True, nogil=True)
def nfc_ccc(cp):
    if cp < 0x300 or cp >= ST_NFC_LIMIT:
        return np.int64(0)
    return np.int64(NFC_CCC_BLOCKS[(np.int64(NFC_CCC_INDEX[cp >> ST_NFC_CCC_SHIFT]) << ST_NFC_CCC_SHIFT)
                                   | (cp & ((1 << ST_NFC_CCC_SHIFT) - 1))])


@njit(cache=True, nogil=True)
def nfc_decompose(cp, d):
    """The full canonical decomposition of cp into d[0..4); its length (1: cp itself)."""
    if 0xC0 <= cp < ST_NFC_LIMIT:
        v = np.int64(NFC_DEC_BLOCKS[(np.int64(NFC_DEC_INDEX[cp >> ST_NFC_DEC_SHIFT]) << ST_NFC_DEC_SHIFT)
                                    | (cp & ((1 << ST_NFC_DEC_SHIFT) - 1))])
        if v:
            n = (v & 3) + 1
            p = v >> 2
            for k in range(n):
                d[k] = NFC_DEC_POOL[p + k]
            return n
    d[0] = cp
    return np.int64(1)


@njit(cache=True, nogil=True)
def nfc_decomposes(cp):
    """cp has a canonical decomposition other than itself."""
    if 0xC0 <= cp < ST_NFC_LIMIT:
        return NFC_DEC_BLOCKS[(np.int64(NFC_DEC_INDEX[cp >> ST_NFC_DEC_SHIFT]) << ST_NFC_DEC_SHIFT)
                              | (cp & ((1 << ST_NFC_DEC_SHIFT) - 1))] != 0
    return False


# The starters (class 0) that are the second of a primary composite, sorted (C: nfc_starter_seconds;
# core_c/tests/test_core.c checks the list against the tables, tests/test_numba_text.py this copy).
NFC_STARTER_SECONDS = np.array([
    0x09BE, 0x09D7, 0x0B3E, 0x0B56, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC2, 0x0CD5, 0x0CD6, 0x0D3E, 0x0D57,
    0x0DCF, 0x0DDF, 0x102E, 0x1B35, 0x11127, 0x1133E, 0x11357, 0x114B0, 0x114BA, 0x114BD, 0x115AF], np.int64)


@njit(cache=True, nogil=True)
def nfc_starter_second(cp):
    """st__nfc_starter_second: cp is one of NFC_STARTER_SECONDS."""
    blk = cp >> 7  # C: the 128-character ranges that hold one
    if not (blk == 0x13 or blk == 0x16 or blk == 0x17 or blk == 0x19 or blk == 0x1A or blk == 0x1B
            or blk == 0x20 or blk == 0x36 or blk == 0x222 or blk == 0x226 or blk == 0x229 or blk == 0x22B):
        return False
    for k in range(NFC_STARTER_SECONDS.shape[0]):
        if NFC_STARTER_SECONDS[k] == cp:
            return True
    return False


@njit(cache=True, nogil=True)
def nfc_starter_may_compose(cp):
    """False if the starter cp composes with no character before it."""
    return cp >= 0x300 and (0 <= cp - 0x1161 < 21 or 0 <= cp - 0x11A8 < 27 or nfc_starter_second(cp))


@njit(cache=True, nogil=True)
def nfc_second_row(b):
    """C: nfc_second_row: the row of NFC_COMP_SECOND holding b, NFC_COMP_SECOND_COUNT if none."""
    if b < NFC_COMP_SECOND[0]:
        return np.int64(NFC_COMP_SECOND_COUNT)
    lo, hi = 0, NFC_COMP_SECOND_COUNT
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if NFC_COMP_SECOND[mid] < b:
            lo = mid + 1
        else:
            hi = mid
    if lo < NFC_COMP_SECOND_COUNT and NFC_COMP_SECOND[lo] == b:
        return np.int64(lo)
    return np.int64(NFC_COMP_SECOND_COUNT)


@njit(cache=True, nogil=True)
def nfc_compose(a, b):
    """The primary composite of a + b, or 0."""
    if 0 <= a - 0x1100 < 19 and 0 <= b - 0x1161 < 21:
        return np.int64(0xAC00 + ((a - 0x1100) * 21 + (b - 0x1161)) * 28)
    if 0 <= a - 0xAC00 < 11172 and (a - 0xAC00) % 28 == 0 and 0 <= b - 0x11A8 < 27:
        return np.int64(a + (b - 0x11A7))
    lo = nfc_second_row(b)
    if lo == NFC_COMP_SECOND_COUNT:
        return np.int64(0)
    i, j = np.int64(NFC_COMP_START[lo]), np.int64(NFC_COMP_START[lo + 1])
    end = j
    while i < j:
        mid = i + (j - i) // 2
        if NFC_COMP_FIRST[mid] < a:
            i = mid + 1
        else:
            j = mid
    if i < end and NFC_COMP_FIRST[i] == a:
        return np.int64(NFC_COMP_RESULT[i])
    return np.int64(0)


@njit(cache=True, nogil=True)
def nfc_first_item(cp, d):
    """The first item of cp's canonical decomposition (cp itself when it has none)."""
    nfc_decompose(cp, d)
    return np.int64(d[0])


@njit(cache=True, nogil=True)
def nfc_stable_alone(cp, d):
    """C: nfc_stable_alone: NFC gives cp back when it stands alone (a starter with no
    decomposition, or one whose decomposition starts with a starter and composes back into cp)."""
    if nfc_ccc(cp) != 0:
        return False
    if not nfc_decomposes(cp):
        return True
    n = nfc_decompose(cp, d)
    if nfc_ccc(np.int64(d[0])) != 0:
        return False
    x = np.int64(d[0])
    for k in range(1, n):
        x = nfc_compose(x, np.int64(d[k]))
        if x == 0:
            return False
    return x == cp


@njit(cache=True, nogil=True)
def nfc_item(s, pos, sub, d):
    """The item at (pos, sub): (code point, class, next pos, next sub)."""
    ch, ln = utf8_decode(s, pos)
    n = nfc_decompose(np.int64(ch), d)
    cp = np.int64(d[sub])
    if sub + 1 < n:
        return cp, nfc_ccc(cp), pos, sub + 1
    return cp, nfc_ccc(cp), pos + ln, np.int64(0)


@njit(cache=True, nogil=True)
def nfc_put(c, out, omap, has_map, cp, src):
    ln = utf8_length(cp)
    for k in range(ln):
        n = c[C_N]
        if n < c[C_CAP]:
            out[n] = utf8_byte(cp, ln, k)
            if has_map:
                omap[n] = src
        c[C_N] = n + 1


@njit(cache=True, nogil=True)
def nfc_mark(c, u, out, omap, has_map, cp, cc, src):
    if u[U_HAS_S] and (u[U_ADJ] or u[U_LAST_CC] < cc):
        comp = nfc_compose(u[U_S], cp)
        if comp != 0:
            u[U_S] = comp
            return
    u[U_ADJ] = 0
    u[U_LAST_CC] = cc
    if u[U_EMIT]:
        nfc_put(c, out, omap, has_map, cp, src)


@njit(cache=True, nogil=True)
def nfc_run(c, u, s, length, out, omap, has_map, pos, sub, d):
    """Walk the run of marks at (pos, sub) in canonical order; returns where it ends."""
    qp, qs = pos, sub
    prev, minc, ordered = np.int64(0), np.int64(256), True
    while qp < length:
        cp, cc, np_, ns = nfc_item(s, qp, qs, d)
        if cc == 0:
            break
        if cc < prev:
            ordered = False
        if cc < minc:
            minc = cc
        prev = cc
        qp, qs = np_, ns
    rp, rs = qp, qs
    if ordered:
        qp, qs = pos, sub
        while qp != rp or qs != rs:
            cp, cc, np_, ns = nfc_item(s, qp, qs, d)
            nfc_mark(c, u, out, omap, has_map, cp, cc, qp)
            qp, qs = np_, ns
        return rp, rs
    k = minc
    while k < 256:
        next_k = np.int64(256)
        m = np.int64(-1)
        qp, qs = pos, sub
        while qp != rp or qs != rs:
            cp, cc, np_, ns = nfc_item(s, qp, qs, d)
            if cc > k:
                if cc < next_k:
                    next_k = cc
                if m < 0 or qp < m:
                    m = qp
            qp, qs = np_, ns
        qp, qs = pos, sub
        while qp != rp or qs != rs:
            cp, cc, np_, ns = nfc_item(s, qp, qs, d)
            if cc == k:
                nfc_mark(c, u, out, omap, has_map, cp, cc, qp if (m < 0 or qp < m) else m)
            qp, qs = np_, ns
        k = next_k
    return rp, rs


@njit(cache=True, nogil=True)
def nfc_walk(c, u, s, length, out, omap, has_map, pos, sub, d):
    """Walk the unit at (pos, sub); returns where the next one starts."""
    while pos < length:
        cp, cc, np_, ns = nfc_item(s, pos, sub, d)
        if cc == 0:
            if not (u[U_HAS_S] and u[U_ADJ]):
                return pos, sub
            comp = nfc_compose(u[U_S], cp)
            if comp == 0:
                return pos, sub
            u[U_S] = comp
            pos, sub = np_, ns
        else:
            pos, sub = nfc_run(c, u, s, length, out, omap, has_map, pos, sub, d)
    return pos, sub


@njit(cache=True, nogil=True)
def nfc_as_is(s, length, i, d):
    """C: nfc_as_is: the end of the character at s[i] when NFC gives it back as it is, told from
    the bytes (a character below U+0300 followed by another below it or the end, or one NFC gives
    back alone followed by one whose first item is a starter composing with nothing before it;
    or a starter with no decomposition followed by marks it leaves as they are (nfc_mark_inert)
    in canonical order and then the end or such a starter: the end of the marks); 0 when only
    the walk can tell."""
    b0 = s[i]
    ln = 1 if b0 < 0x80 else 2 if b0 < 0xE0 else 3 if b0 < 0xF0 else 4
    if b0 < 0xCC and (i + ln >= length or s[i + ln] < 0xCC):
        return i + ln
    cp, ln1 = utf8_decode(s, i)
    j = i + ln1
    if not nfc_stable_alone(np.int64(cp), d):
        return np.int64(0)
    if j < length:
        cp2, ln2 = utf8_decode(s, j)
        f = nfc_first_item(np.int64(cp2), d)
        if nfc_ccc(f) != 0:  # marks: only after a starter with no decomposition
            if nfc_decomposes(np.int64(cp)):
                return np.int64(0)
            last = 0
            while True:
                c = nfc_ccc(np.int64(cp2))
                if c == 0:
                    break
                if c < last or not nfc_mark_inert(np.int64(cp), np.int64(cp2)):
                    return np.int64(0)
                last = c
                j += ln2
                if j >= length:
                    return j
                cp2, ln2 = utf8_decode(s, j)
            f = nfc_first_item(np.int64(cp2), d)
            if nfc_ccc(f) != 0:
                return np.int64(0)
        if nfc_starter_may_compose(f):
            return np.int64(0)
    return j


@njit(cache=True, nogil=True)
def nfc_mark_inert(st, m):
    """C: nfc_mark_inert: NFC leaves the mark m (class not 0) as it is after the starter st, which
    has no decomposition, in a run of marks in canonical order (m has no decomposition and composes
    with no starter or not with st)."""
    return not nfc_decomposes(m) and (nfc_second_row(m) == NFC_COMP_SECOND_COUNT or nfc_compose(st, m) == 0)


@njit(cache=True, nogil=True)
def nfc_unchanged(s, length):
    """st__nfc_unchanged: NFC leaves s[0..length) as it is by nfc's fast paths alone (False also
    for text that is NFC but needs the full walk to tell)."""
    d = np.zeros(4, np.int64)
    i = np.int64(0)
    while i < length:
        # characters below U+0300, each as it is: but the last one when a character at or above
        # U+0300 follows, which it may compose with
        j = i
        while j < length and s[j] < 0xCC:
            j += 1
        if j == length:
            return True
        if j > i:
            i = j - 1
            while (s[i] & 0xC0) == 0x80:
                i -= 1
        j = nfc_as_is(s, length, i, d)
        if j == 0:
            return False
        i = j
    return True


@njit(cache=True, nogil=True)
def nfc(s, length, out, omap, has_map, cap):
    """st__nfc: NFC of valid UTF-8 s[0..length) into out[0..cap) (and omap when has_map); the full
    output length."""
    c = np.zeros(2, np.int64)
    c[C_CAP] = cap
    d = np.zeros(4, np.int64)
    u = np.zeros(UNIT_FIELDS, np.int64)
    first = np.zeros(UNIT_FIELDS, np.int64)
    p, psub = np.int64(0), np.int64(0)
    while p < length:
        i = p
        # the fast paths: a character NFC gives back as it is, told from the bytes (nfc_as_is),
        # then a starter that is its own decomposition, by the items
        j = nfc_as_is(s, length, i, d) if psub == 0 else np.int64(0)
        if j != 0:
            at = i
            for k in range(i, j):
                if (s[k] & 0xC0) != 0x80:  # each character's bytes map to its start
                    at = k
                n = c[C_N]
                if n < cap:
                    out[n] = s[k]
                    if has_map:
                        omap[n] = at
                c[C_N] = n + 1
            p = j
            continue
        if psub == 0:
            cp, cc, np_, ns = nfc_item(s, p, psub, d)
            if cc == 0 and nfc_decompose(cp, d) == 1:
                if np_ >= length:
                    quick = True
                else:
                    cp2, cc2, _, _ = nfc_item(s, np_, ns, d)
                    quick = cc2 == 0 and (not nfc_starter_may_compose(cp2) or nfc_compose(cp, cp2) == 0)
                if quick:
                    nfc_put(c, out, omap, has_map, cp, i)
                    p, psub = np_, ns  # ns: the character's next item when it decomposes
                    continue
        pos, sub = p, psub
        u[U_S] = 0
        u[U_HAS_S] = 0
        u[U_ADJ] = 1
        u[U_LAST_CC] = 0
        u[U_EMIT] = 0
        cp, cc, np_, ns = nfc_item(s, pos, sub, d)
        if cc == 0:
            u[U_S] = cp
            u[U_HAS_S] = 1
            pos, sub = np_, ns
        first[:] = u
        p, psub = nfc_walk(c, u, s, length, out, omap, has_map, pos, sub, d)
        if first[U_HAS_S]:
            nfc_put(c, out, omap, has_map, u[U_S], i)
        first[U_EMIT] = 1
        nfc_walk(c, first, s, length, out, omap, has_map, pos, sub, d)
    return c[C_N]


_EMPTY_U8 = np.zeros(1, np.uint8)
_EMPTY_U64 = np.zeros(1, np.uint64)


@export
def st_normalize_nfc(text, length, out, omap, cap, out_len, err):
    clear(err)
    if out_len is None or (text is None and length) or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    out_len.v = 0
    st = validate(err, text, length)
    if st != ST_OK:
        return st
    s = _EMPTY_U8 if text is None else text
    o = _EMPTY_U8 if out is None else out
    m = _EMPTY_U64 if omap is None else omap
    n = int(nfc(s, length, o, m, omap is not None, cap)) if length else 0
    out_len.v = n
    if n > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK
