"""Mirrors core_c/src/encode/piece_cache.c and piece_cache.h: the piece cache (pretoken bytes ->
its tokens, kept across calls), its memory and the span cache's (span_cache.py) under the host's
limit, and st_encoding_set_cache_size / st_encoding_cache_info.

The C scratch block (st__scratch) is a Scratch (Python object kept in enc.lazy.scratch; calls
take turns, so a lone caller's slot 0 is the only block: it gets half the limit, as C's lone
caller does). Its tables are flat arrays with C's layout: the short table `lines` (uint8,
64-byte lines: hash u32, len, ntok, joins, unused, then 56 data bytes; `lines32` the same bytes
as uint32), the sets' tags fp and meta (uint8, SET_LINES a set), and the long table (lhash
uint64, lmeta uint16 (len, ntok), lbytes, ltok, lrel). A kernel sees them as a PC namedtuple;
the call's hits, misses, whether the long table was first used, and the span cache's hits and
misses are in PC.st (int64[5]). The block's span cache (C: st__scratch.span) is Scratch.span, an
SC (span_cache.py) or None, and PC.span for a kernel (NO_SPAN when there is none).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .. import export
from ..base.common import ST_OK, ST_ERR_INVALID_ARGUMENT
from ..base.hash import hash_bytes
from .merge import new_pair_cache
from .span_cache import (NO_SPAN, ST_SPAN_MAX, ST_SPAN_PENDING, SPAN_SLOT_SIZE, SPAN_PENDING_SIZE, new_span_cache,
                         span_refill)

ST_CACHE_PIECE = 56
SET_LINES = 8
ST_CACHE_LONG_PIECE = 240
ST_CACHE_LONG_TOKENS = 40
ST_CACHE_ID_BITS = 26
ST_CACHE_MIN_TEXT = 8192
ST_SCRATCH_SLOTS = 4
LINE_EMPTY, LINE_SMALL, LINE_PAIR, LINE_PAIR2 = 0, 1, 2, 3
LINE_DATA = 56
PAIR_DATA = LINE_DATA + 64
LINE_SIZE = 64
TAGS_SIZE = 2 * SET_LINES
LONG_SIZE = 512
META_KIND, META_USE, META_USE1 = 3, 12, 4
ST_BT_MEMO_SLOTS = 1 << 14
PC_HITS, PC_MISSES, PC_LONG_USED, PC_SPAN_HITS, PC_SPAN_MISSES = 0, 1, 2, 3, 4
PC_FIELDS = 5

PC = namedtuple("PC", "lines lines32 fp meta sets lhash lmeta lbytes ltok lrel long_slots st span")

_E8 = np.zeros(64, np.uint8)
_E32 = np.zeros(16, np.uint32)
_E64 = np.zeros(1, np.uint64)
_E16 = np.zeros(2, np.uint16)


def no_pc(span=NO_SPAN):
    return PC(_E8, _E32, _E8, _E8, 0, _E64, _E16, _E8, _E32, _E16, 0, np.zeros(PC_FIELDS, np.int64), span)


class Scratch:
    """st__scratch: the call's block of caches."""
    __slots__ = ("cache_slots", "lines", "lines32", "fp", "meta", "sets", "long_slots", "long_made", "lhash",
                 "lmeta", "lbytes", "ltok", "lrel", "pairs", "memo", "seen", "span")

    def __init__(self):
        self.cache_slots = self.sets = self.long_slots = self.seen = 0
        self.long_made = False
        self.lines = self.lines32 = self.fp = self.meta = None
        self.lhash = self.lmeta = self.lbytes = self.ltok = self.lrel = None
        self.pairs = new_pair_cache()
        self.memo = None
        self.span = None  # the span cache (span_cache.py): an SC, None when there is none


def pow2_floor(x):
    """The largest power of two not above x (0 for 0)."""
    return 1 << (x.bit_length() - 1) if x > 0 else 0


def share_of(limit, k):
    if k < 0:
        return limit // ST_SCRATCH_SLOTS
    return limit >> (k + 1 if k < ST_SCRATCH_SLOTS - 1 else ST_SCRATCH_SLOTS - 1)


def cache_slots_for(share):
    """The tables of one block under its share of the limit: half for the piece cache, two thirds
    of it for the short table and one third for the long one; the other half is the span
    cache's (span_log_for)."""
    lines = pow2_floor(share // 2 // 3 * 2 // LINE_SIZE)
    return lines if lines >= 2 * SET_LINES else 0


def long_slots_for(share):
    return pow2_floor(share // 2 // 3 // LONG_SIZE)


# The span cache under a block's share: half of it for the log and its index (a slot of 16 bytes
# per SPAN_BYTES_PER_SLOT bytes of log), a power of two bytes, at least SPAN_LOG_MIN, or none.
SPAN_LOG_MIN = 64 << 10
SPAN_BYTES_PER_SLOT = 128
# a span's ids as they are made, then the spans waiting to be remembered (C's one block)
SPAN_EXTRA = ST_SPAN_MAX * 4 + ST_SPAN_PENDING * SPAN_PENDING_SIZE


def span_log_for(share):
    log = pow2_floor(share // 2 // (SPAN_BYTES_PER_SLOT + SPAN_SLOT_SIZE) * SPAN_BYTES_PER_SLOT)
    return log if log >= SPAN_LOG_MIN else 0


def span_drop(lz, s):
    c = s.span
    if c is None:
        return
    lz.cache_held -= c.size + c.nslots * SPAN_SLOT_SIZE + SPAN_EXTRA
    s.span = None


def span_fit(lz, s, share, seen):
    """Give block s, which has seen `seen` bytes of text, a span log of four times that, at least
    SPAN_LOG_MIN, at most what the share allows. A log that grows keeps its entries (each copied
    into the new log through the old index, span_refill); one the limit shrinks starts empty."""
    c = s.span
    most = span_log_for(share)
    want = SPAN_LOG_MIN
    while want < most and want // 4 < seen:
        want *= 2
    if want > most:
        want = most
    if c is not None and most >= c.size >= want:
        return
    if not want:
        span_drop(lz, s)
        return
    nslots = want // SPAN_BYTES_PER_SLOT
    n = new_span_cache(want, nslots, *((c.ids, c.pending, c.own) if c is not None else ()))
    if c is not None and want > c.size:  # grown: the old log's entries, into the new one
        span_refill(n, c)
    held = want + nslots * SPAN_SLOT_SIZE + (0 if c is not None else SPAN_EXTRA)
    if c is not None:
        held -= c.size + c.nslots * SPAN_SLOT_SIZE
    s.span = n
    lz.cache_held += held


def piece_drop(lz, s):
    if s.lines is not None:
        lz.cache_held -= s.cache_slots * LINE_SIZE
    if s.long_made:
        lz.cache_held -= s.long_slots * LONG_SIZE
    s.lines = s.lines32 = s.fp = s.meta = None
    s.lhash = s.lmeta = s.lbytes = s.ltok = s.lrel = None
    s.long_made = False
    s.cache_slots = s.sets = s.long_slots = 0


def cache_drop(lz, s):
    """Both caches of block s emptied and their memory freed."""
    piece_drop(lz, s)
    span_drop(lz, s)


def cache_slots_want(share, seen):
    most = cache_slots_for(share)
    want = 512
    while want < most and want <= seen // 32:
        want *= 2
    return want if want < most else most


def cache_fit(lz, s, share, seen):
    most = cache_slots_for(share)
    slots = cache_slots_want(share, seen)
    if s.lines is not None and most >= s.cache_slots >= slots:
        return
    if s.lines is None and not slots:
        return
    old = (s.lines, s.fp, s.meta, s.sets)
    old_long = (s.lhash, s.lmeta, s.lbytes, s.ltok, s.lrel) if s.long_made else None
    piece_drop(lz, s)
    if not slots:
        return
    size = slots * LINE_SIZE
    s.cache_slots = slots
    s.sets = size // (SET_LINES * LINE_SIZE + TAGS_SIZE)
    s.lines = np.empty(s.sets * SET_LINES * LINE_SIZE + 16, np.uint8)  # the lines need no clearing
    s.lines32 = s.lines[:s.sets * SET_LINES * LINE_SIZE].view(np.uint32)
    s.fp = np.zeros(s.sets * SET_LINES, np.uint8)
    s.meta = np.zeros(s.sets * SET_LINES, np.uint8)
    lmost = long_slots_for(share)
    lwant = max(slots // 16, 16)
    s.long_slots = min(lwant, lmost)
    lz.cache_held += size
    if old_long is not None:  # C makes the long table now when the old one had it
        long_table(lz, s)
        if s.lhash is not None:
            s.long_made = True
            lz.cache_held += s.long_slots * LONG_SIZE
    if old[0] is not None:
        cache_move(old[0], old[1], old[2], old[3], s.lines, s.fp, s.meta, s.sets)
        if old_long is not None and s.lhash is not None:
            long_move(*old_long, s.lhash, s.lmeta, s.lbytes, s.ltok, s.lrel)


@njit(cache=True, nogil=True, _nrt=False)
def cache_move(lines, fp, meta, sets, to_lines, to_fp, to_meta, to_sets):
    """The old short table's entries into the new one (C: cache_move), each to its set found
    again from its piece's hash, with its use count."""
    for st_set in range(sets):
        base = st_set * SET_LINES
        for k in range(SET_LINES):
            kind = meta[base + k] & META_KIND
            if kind != LINE_SMALL and kind != LINE_PAIR:
                continue
            o = (base + k) * LINE_SIZE
            tb = SET_LINES * set_of(hash_bytes(lines, o + 8, np.int64(lines[o + 4])) | _U1, to_sets)
            v = line_claim(to_fp, to_meta, tb, kind, fp[base + k], (meta[base + k] & META_USE) // META_USE1)
            w = (tb + v) * LINE_SIZE
            for j in range(LINE_SIZE * (2 if kind == LINE_PAIR else 1)):
                to_lines[w + j] = lines[o + j]


@njit(cache=True, nogil=True, _nrt=False)
def long_move(lhash, lmeta, lbytes, ltok, lrel, to_hash, to_meta, to_bytes, to_tok, to_rel):
    """The old long table's entries into the new one (C: cache_move), each at its new slot."""
    slots = np.uint64(to_hash.shape[0] - 1)
    for k in range(lhash.shape[0]):
        if lhash[k] == 0:
            continue
        le = np.int64((lhash[k] >> _U20) & slots)
        to_hash[le] = lhash[k]
        to_meta[2 * le] = lmeta[2 * k]
        to_meta[2 * le + 1] = lmeta[2 * k + 1]
        for j in range(ST_CACHE_LONG_PIECE):
            to_bytes[le * ST_CACHE_LONG_PIECE + j] = lbytes[k * ST_CACHE_LONG_PIECE + j]
        for j in range(ST_CACHE_LONG_TOKENS):
            to_tok[le * ST_CACHE_LONG_TOKENS + j] = ltok[k * ST_CACHE_LONG_TOKENS + j]
            to_rel[le * ST_CACHE_LONG_TOKENS + j] = lrel[k * ST_CACHE_LONG_TOKENS + j]


def long_table(lz, s):
    """st__cache_long_table: the arrays of the long table (made empty when first wanted; the
    kernel marks their first use, and the figure counts them from then)."""
    if s.lhash is None and s.long_slots:
        ls = s.long_slots
        s.lhash = np.zeros(ls, np.uint64)
        s.lmeta = np.zeros(2 * ls, np.uint16)
        s.lbytes = np.zeros(ls * ST_CACHE_LONG_PIECE + 16, np.uint8)
        s.ltok = np.zeros(ls * ST_CACHE_LONG_TOKENS, np.uint32)
        s.lrel = np.zeros(ls * ST_CACHE_LONG_TOKENS, np.uint16)


def piece_cache_open(enc, length):
    """st__piece_cache_open: (scratch or None, PC) for a call on a text of length bytes."""
    lz = enc.lazy
    limit = lz.cache_limit
    if not cache_slots_for(share_of(limit, 0)) and length < ST_CACHE_MIN_TEXT:
        return None, no_pc()
    s = lz.scratch
    if s is None:
        s = lz.scratch = Scratch()
    s.seen += length
    cache_fit(lz, s, share_of(limit, 0), s.seen)
    span_fit(lz, s, share_of(limit, 0), s.seen)
    span = s.span if s.span is not None else NO_SPAN
    if not s.sets:
        return s, no_pc(span)
    long_table(lz, s)
    if s.lhash is None:
        return s, PC(s.lines, s.lines32, s.fp, s.meta, s.sets, _E64, _E16, _E8, _E32, _E16, 0,
                     np.zeros(PC_FIELDS, np.int64), span)
    return s, PC(s.lines, s.lines32, s.fp, s.meta, s.sets, s.lhash, s.lmeta, s.lbytes, s.ltok, s.lrel, s.long_slots,
                 np.zeros(PC_FIELDS, np.int64), span)


def piece_cache_restart(pc):
    """A call run again from its start (pipeline.py: the backtracking tables were due): the
    lookups of the run abandoned are not counted (C builds the tables in place and runs once)."""
    st = pc.st
    st[PC_HITS] = st[PC_MISSES] = st[PC_SPAN_HITS] = st[PC_SPAN_MISSES] = 0


def piece_cache_close(enc, s, pc):
    """st__piece_cache_close: the call's figures added to the handle's; a block over the limit
    gives its memory back."""
    lz = enc.lazy
    st = pc.st
    lz.cache_hits += int(st[PC_HITS])
    lz.cache_misses += int(st[PC_MISSES])
    lz.span_hits += int(st[PC_SPAN_HITS])
    lz.span_misses += int(st[PC_SPAN_MISSES])
    if s is None:
        return
    if st[PC_LONG_USED] and not s.long_made and s.lhash is not None:
        s.long_made = True
        lz.cache_held += s.long_slots * LONG_SIZE
    share = share_of(lz.cache_limit, 0)
    if s.cache_slots > cache_slots_for(share) or s.long_slots > long_slots_for(share) or \
            (s.span.size if s.span is not None else 0) > span_log_for(share):
        cache_drop(lz, s)


@export
def st_encoding_set_cache_size(enc, size):
    if enc is None:
        return ST_ERR_INVALID_ARGUMENT
    lz = enc.lazy
    lz.cache_limit = int(size)
    if lz.scratch is not None:
        cache_drop(lz, lz.scratch)
    return ST_OK


@export
def st_encoding_cache_info(enc, info):
    if enc is None or info is None:
        return ST_ERR_INVALID_ARGUMENT
    lz = enc.lazy
    info[0] = lz.cache_limit
    info[1] = lz.cache_held
    info[2] = lz.cache_hits
    info[3] = lz.cache_misses
    info[4] = ST_CACHE_LONG_PIECE
    info[5] = lz.span_hits
    info[6] = lz.span_misses
    return ST_OK


# ---- the lookup, fill and replacement (piece_cache.h), run once a piece that is not one token ----

_U1 = np.uint64(1)
_U32 = np.uint64(32)
_U24 = np.uint64(24)
_U20 = np.uint64(20)
_FF = np.uint64(0xFF)
_LOW32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, nogil=True, _nrt=False)
def cache_find(pc, s, a, n, h):
    """Look s[a .. a + n) up (h its hash_bytes if known, else 0): (hit, where, rh), where is the
    hit's first line (short), the set to fill (short miss) or the long entry; -1 when the cache
    is off or the piece too long (then nothing is counted)."""
    if pc.sets == 0 or n > ST_CACHE_LONG_PIECE:
        return False, -1, np.uint64(0)
    rh = (h if h != 0 else hash_bytes(s, a, n)) | _U1
    st = pc.st
    if n <= ST_CACHE_PIECE:
        st_set = set_of(rh, pc.sets)
        h32 = np.uint32(rh & _LOW32)
        f = np.uint8((rh >> _U24) & _FF)
        base = SET_LINES * st_set
        lines = pc.lines
        for k in range(SET_LINES):
            m = pc.meta[base + k]
            kind = m & META_KIND
            if pc.fp[base + k] == f and (kind == LINE_SMALL or kind == LINE_PAIR):
                ln = base + k
                if pc.lines32[ln * 16] == h32 and lines[ln * 64 + 4] == n:
                    o = ln * 64 + 8
                    same = True
                    for j in range(n):
                        if lines[o + j] != s[a + j]:
                            same = False
                            break
                    if same:
                        if (m & META_USE) != META_USE:
                            pc.meta[base + k] = m + META_USE1
                        st[PC_HITS] += 1
                        return True, ln, rh
        st[PC_MISSES] += 1
        return False, st_set, rh
    if pc.long_slots == 0:
        return False, -1, np.uint64(0)
    st[PC_LONG_USED] = 1
    le = np.int64((rh >> _U20) & np.uint64(pc.long_slots - 1))
    hit = pc.lhash[le] == rh and pc.lmeta[2 * le] == n
    if hit:
        o = le * ST_CACHE_LONG_PIECE
        for j in range(n):
            if pc.lbytes[o + j] != s[a + j]:
                hit = False
                break
    if hit:
        st[PC_HITS] += 1
    else:
        st[PC_MISSES] += 1
    return hit, le, rh


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def hand_of(meta, base):
    return (meta[base] >> 4) & (SET_LINES - 1)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def hand_set(meta, base, k):
    meta[base] = (meta[base] & 0x0F) | ((k & (SET_LINES - 1)) << 4)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def kind_at(meta, base, k):
    return meta[base + k] & META_KIND


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def meta_set(meta, base, k, kind, use):
    meta[base + k] = (meta[base + k] & 0xF0) | kind | (use * META_USE1)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def use_spent(meta, base, k):
    if not (meta[base + k] & META_USE):
        return True
    meta[base + k] = meta[base + k] - META_USE1
    return False


@njit(cache=True, nogil=True, _nrt=False)
def cache_small_victim(meta, base):
    for k in range(SET_LINES):
        if kind_at(meta, base, k) == LINE_EMPTY:
            return k
    k = hand_of(meta, base)
    if kind_at(meta, base, k) == LINE_PAIR2:
        k = (k + 1) & (SET_LINES - 1)
    while True:
        pair = kind_at(meta, base, k) == LINE_PAIR
        if use_spent(meta, base, k):
            if pair:
                meta_set(meta, base, k + 1, LINE_EMPTY, 0)
            return k
        k = (k + (2 if pair else 1)) & (SET_LINES - 1)


@njit(cache=True, nogil=True, _nrt=False)
def cache_pair_victim(meta, base):
    for k in range(0, SET_LINES, 2):
        if kind_at(meta, base, k) == LINE_EMPTY and kind_at(meta, base, k + 1) == LINE_EMPTY:
            return k
    k = hand_of(meta, base) & ~1
    while True:
        a = kind_at(meta, base, k) == LINE_EMPTY or use_spent(meta, base, k)
        b = kind_at(meta, base, k) == LINE_PAIR or kind_at(meta, base, k + 1) == LINE_EMPTY or \
            use_spent(meta, base, k + 1)
        if a and b:
            return k
        k = (k + 2) & (SET_LINES - 1)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def set_of(h, sets):
    """The set of a short table of `sets` sets where the piece of hash h (| 1) goes (C: set_of)."""
    return np.int64(((h >> _U32) * np.uint64(sets)) >> _U32)


@njit(cache=True, nogil=True, _nrt=False)
def line_claim(fp, meta, base, kind, f, use):
    """The line of the set at base a new entry of the kind takes, its tags set (C: line_claim)."""
    pair = kind == LINE_PAIR
    v = cache_pair_victim(meta, base) if pair else cache_small_victim(meta, base)
    fp[base + v] = f
    meta_set(meta, base, v, kind, use)
    if pair:
        meta_set(meta, base, v + 1, LINE_PAIR2, 0)
    hand_set(meta, base, v + (2 if pair else 1))
    return v


@njit(cache=True, nogil=True, _nrt=False)
def cache_fill(pc, where, rh, s, a, n, m, tok, rel, mp, use_map, joins):
    """Remember the m tokens (starts rel[k] in the piece, through mp when use_map) of the piece
    s[a .. a + n) at the place cache_find gave (a miss)."""
    if where < 0:
        return
    if n <= ST_CACHE_PIECE:
        need = ((n + 3) & ~3) + 4 * m
        if need > PAIR_DATA:
            return
        for k in range(m):
            if tok[k] >> ST_CACHE_ID_BITS:
                return
        base = SET_LINES * where
        vk = line_claim(pc.fp, pc.meta, base, LINE_PAIR if need > LINE_DATA else LINE_SMALL,
                        np.uint8((rh >> _U24) & _FF), 1)
        ln = base + vk
        lines = pc.lines
        pc.lines32[ln * 16] = np.uint32(rh & _LOW32)
        o = ln * 64
        lines[o + 4] = n
        lines[o + 5] = m
        lines[o + 6] = joins
        for j in range(n):
            lines[o + 8 + j] = s[a + j]
        w = (o + 8 + ((n + 3) & ~3)) >> 2
        for k in range(m):
            r = mp[rel[k]] if use_map else rel[k]
            pc.lines32[w + k] = np.uint32(tok[k]) | (np.uint32(r) << np.uint32(ST_CACHE_ID_BITS))
    elif m <= ST_CACHE_LONG_TOKENS:
        le = where
        pc.lhash[le] = rh
        pc.lmeta[2 * le] = n
        pc.lmeta[2 * le + 1] = m
        o = le * ST_CACHE_LONG_PIECE
        for j in range(n):
            pc.lbytes[o + j] = s[a + j]
        o = le * ST_CACHE_LONG_TOKENS
        for k in range(m):
            pc.ltok[o + k] = tok[k]
            pc.lrel[o + k] = mp[rel[k]] if use_map else rel[k]
