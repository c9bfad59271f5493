"""Mirrors core_c/src/encode/span_cache.h: the span cache (docs/design.md §7), the ids of whole
stretches of text seen before, so that text encoded again costs a hash and a compare a span
instead of pre-tokenizing it and looking up every piece. A scratch block (piece_cache.py's
Scratch.span) holds one, sized there; the pipeline (pipeline.py) runs it once a span.

Spans. A rank vocabulary's text between special tokens is cut into spans at places where the
encoding must put a piece boundary and where each side's pieces come out the same encoded alone:
the cut rules of cut.py (cut_within). The first such place at least ST_SPAN_MIN bytes after a
span's start ends it, so the ids of a span are a function of its bytes alone and a cached span is
exact in any text around it. A text with no such place within ST_SPAN_MAX bytes is encoded piece
by piece as before, uncached, in stretches that end at the next place found.

The cache is a log: each entry (its hash, length and token count, the span's bytes, then its ids)
is appended; when the log is full it starts over from its beginning, overwriting the oldest
entries (an entry never wraps: one that would not fit before the end starts the next lap). An
index of (hash, position) in buckets of four finds an entry (a new one takes the bucket's oldest
slot); a position the log has since passed over by a whole lap is stale, and every hit compares
the span's bytes.

Layout (C's st__span_cache as an SC namedtuple of arrays and ints, which kernels take whole):
log (uint8, size bytes, a power of two; entries at multiples of 8 with C's layout: hash u64,
length u32, token count u32, the bytes, then from the next multiple of 4 the ids u32), log32 and
log64 the same bytes as uint32 and uint64; the index as two arrays of nslots, slot_hash (uint64)
and slot_at (int64: the entry's position in the log counted from the log's making, + 1; 0:
none); ids (uint32[ST_SPAN_MAX]: a span's tokens as they are made); pending (uint64, ST_SPAN_PENDING
records of PENDING_FIELDS: hash, at, len, first, m: the spans encoded into the caller's buffer,
remembered when the call ends or the list is full); own (int64[SINK_FIELDS]: the sink over ids,
on the stack in C); st (int64: SC_END the bytes appended since the log was made, SC_NPENDING).
NO_SPAN (size 0) is "no span cache" (C: log NULL), with the same types.

The hash is C's st__span_hash, computed with the same uint64 arithmetic (little-endian words), so
the values are C's.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..base.hash import ST_HASH_SEED, ST_HASH_LEN, ST_HASH_MUL, load_le64, mix64
from .sink import SINK_FIELDS

ST_SPAN_MIN = 1024   # a span ends at the first cut at least this far from its start
ST_SPAN_TEXT = 256   # a text this long or longer goes through the cache (one under ST_SPAN_MIN is one span)
ST_SPAN_MAX = 8192   # a span longer than this (no cut found before) is not cached
ST_SPAN_ENTRY = 16   # an entry's header: hash, length, token count
SPAN_WAYS = 4        # an index bucket's slots: a hash's entry is in one of the four at h & ~3
ST_SPAN_PENDING = 256
PENDING_FIELDS = 5   # span_pending: hash, at, len (text[at .. at + len)), first, m (ids[first .. first + m))
P_HASH, P_AT, P_LEN, P_FIRST, P_M = 0, 1, 2, 3, 4
SC_END, SC_NPENDING = 0, 1

# C's sizes, for the memory the cache is said to hold (piece_cache.py): a span_slot (hash and
# position, 8 bytes each) and a span_pending (a uint64 and four size_t)
SPAN_SLOT_SIZE = 16
SPAN_PENDING_SIZE = 40

SC = namedtuple("SC", "log log32 log64 size slot_hash slot_at nslots ids pending own st")

U64 = np.uint64
_K1 = U64(0x9E3779B185EBCA87)
_K2 = U64(0xC2B2AE3D27D4EB4F)
_S29 = U64(29)
_S31 = U64(31)


def new_span_cache(size, nslots, ids=None, pending=None, own=None):
    """An empty span cache of a size-byte log and nslots index slots (ids, pending, own: the
    buffers of the one it replaces, kept as C keeps its ids block)."""
    log = np.zeros(size, np.uint8)
    return SC(log, log.view(np.uint32), log.view(np.uint64), int(size), np.zeros(nslots, np.uint64),
              np.zeros(nslots, np.int64), int(nslots),
              ids if ids is not None else np.zeros(ST_SPAN_MAX, np.uint32),
              pending if pending is not None else np.zeros(ST_SPAN_PENDING * PENDING_FIELDS, np.uint64),
              own if own is not None else np.zeros(SINK_FIELDS, np.int64), np.zeros(2, np.int64))


def no_span():
    """No span cache (C: log NULL): size 0, the arrays of an SC's types."""
    log = np.zeros(8, np.uint8)
    return SC(log, log.view(np.uint32), log.view(np.uint64), 0, np.zeros(SPAN_WAYS, np.uint64),
              np.zeros(SPAN_WAYS, np.int64), 0, np.zeros(1, np.uint32), np.zeros(PENDING_FIELDS, np.uint64),
              np.zeros(SINK_FIELDS, np.int64), np.zeros(2, np.int64))


NO_SPAN = no_span()


@njit(cache=True, nogil=True, _nrt=False)
def span_hash(p, i, n):
    """st__span_hash(p + i, n): four independent lanes over 32-byte blocks, then the tail."""
    a = ST_HASH_SEED ^ U64(n)
    b = _K1
    c = _K2
    d = ST_HASH_LEN
    j = 0
    while j + 32 <= n:
        a = (a ^ load_le64(p, i + j)) * _K1
        a ^= a >> _S29
        b = (b ^ load_le64(p, i + j + 8)) * _K1
        b ^= b >> _S29
        c = (c ^ load_le64(p, i + j + 16)) * _K1
        c ^= c >> _S29
        d = (d ^ load_le64(p, i + j + 24)) * _K1
        d ^= d >> _S29
        j += 32
    h = a ^ (b * _K2) ^ ((c ^ (c >> _S31)) * _K1) ^ (d * ST_HASH_MUL)
    while j + 8 <= n:
        h = (h ^ load_le64(p, i + j)) * _K2
        h ^= h >> _S31
        j += 8
    t = U64(0)
    k = 0
    while j + k < n:
        t |= U64(p[i + j + k]) << U64(8 * k)
        k += 1
    return mix64(h ^ t)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def span_bytes_room(n):
    return (n + 3) & ~3


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def span_bucket(sc, h):
    """The first slot of h's bucket: h & (nslots - SPAN_WAYS)."""
    return np.int64(h & U64(sc.nslots - SPAN_WAYS))


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def span_entry(sc, k):
    """st__span_entry: the entry index slot k names, if the log still holds it: (its offset in
    the log, its length, its token count); else (-1, 0, 0) (an empty slot, or one the log has come
    round over)."""
    at = sc.slot_at[k]
    if not at or sc.st[SC_END] - (at - 1) > sc.size:
        return -1, 0, 0
    e = (at - 1) & (sc.size - 1)
    return e, np.int64(sc.log32[(e >> 2) + 2]), np.int64(sc.log32[(e >> 2) + 3])


@njit(cache=True, nogil=True, _nrt=False)
def span_find(sc, p, i, n, h):
    """st__span_find: the ids of the span p[i .. i + n) (hash h) if the cache holds it: (w, m),
    its m ids at sc.log32[w ..]; else (-1, 0)."""
    s = span_bucket(sc, h)
    hit = -1
    for k in range(SPAN_WAYS):
        if sc.slot_hash[s + k] == h and sc.slot_at[s + k] != 0:
            hit = s + k
    if hit < 0:
        return -1, 0
    e, ln, ntok = span_entry(sc, hit)
    if e < 0 or sc.log64[e >> 3] != h or ln != n:
        return -1, 0
    log = sc.log
    o = e + ST_SPAN_ENTRY
    for j in range(n):
        if log[o + j] != p[i + j]:
            return -1, 0
    return (o + span_bytes_room(n)) >> 2, ntok


@njit(cache=True, nogil=True, _nrt=False)
def span_fill(sc, p, i, n, h, ids, first, m):
    """st__span_fill: remember the m ids ids[first .. first + m) of the span p[i .. i + n) (hash h)."""
    need = (ST_SPAN_ENTRY + span_bytes_room(n) + 4 * m + 7) & ~7
    if need > sc.size // 4:
        return
    end = sc.st[SC_END]
    off = end & (sc.size - 1)
    if off + need > sc.size:  # the next lap
        end += sc.size - off
        off = 0
    sc.log64[off >> 3] = h
    sc.log32[(off >> 2) + 2] = np.uint32(n)
    sc.log32[(off >> 2) + 3] = np.uint32(m)
    log = sc.log
    o = off + ST_SPAN_ENTRY
    for j in range(n):
        log[o + j] = p[i + j]
    w = (o + span_bytes_room(n)) >> 2
    log32 = sc.log32
    for k in range(m):
        log32[w + k] = ids[first + k]
    # the bucket's slot of this hash if it has one, else its oldest (an empty slot's at is 0)
    s = span_bucket(sc, h)
    v = s
    for k in range(SPAN_WAYS):
        if sc.slot_hash[s + k] == h:
            v = s + k
            break
        if sc.slot_at[s + k] < sc.slot_at[v]:
            v = s + k
    sc.slot_hash[v] = h
    sc.slot_at[v] = end + 1
    sc.st[SC_END] = end + need


@njit(cache=True, nogil=True, _nrt=False)
def span_refill(n, c):
    """The entries of the cache c that its log still holds, into the (larger, empty) cache n
    through c's index (piece_cache.c's span_fit, a log that grows)."""
    for k in range(c.nslots):
        e, ln, ntok = span_entry(c, k)
        if e < 0:
            continue
        span_fill(n, c.log, e + ST_SPAN_ENTRY, ln, c.slot_hash[k], c.log32,
                  (e + ST_SPAN_ENTRY + span_bytes_room(ln)) >> 2, ntok)
