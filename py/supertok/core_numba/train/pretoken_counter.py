"""Mirrors core_c/src/train/pretoken_counter.c and pretoken_counter.h: pretoken counting
(docs/design.md §8). Documents are pre-tokenized and each distinct pretoken is kept once, with a
64-bit count, in an open-addressing table whose keys live in one byte arena. Counters merge and
serialize (docs/formats/train-format.md), so a host counts on many threads or machines and the
sum, and every model trained from it, is the same for any split.

Layout. A counter is a Counter (struct st_counter): pt (the Pretokenizer it embeds), cand (None,
or a candidates.Cand: a candidates counter), stats (uint64[4], ST_COUNTER_DOCUMENTS ..
ST_COUNTER_UNIQUE) and t, a Table of the arrays the kernels take and give back (grown arrays are
new arrays, so a kernel that may grow the table returns a new Table):
  slots    uint64[mask + 1]   (high 32 bits of the hash << 32) | (entry + 1), 0 empty; empty
                              array while no key was added (the C's NULL)
  e_off    uint64[cap], e_len uint32[cap], e_hash uint32[cap], e_count uint64[cap]
                              the st__count_entry fields as parallel arrays, valid for [0, n)
  arena    uint8[arena_cap]   the bytes of entry i are arena[e_off[i] : e_off[i] + e_len[i]]
  hot_word uint64, hot_len uint32, hot_entry uint32 [1 << ST__HOT_BITS]
                              the cache of recent short pretokens (st__count_hot); empty arrays
                              until the first document that makes it pay
  sc       int64[2]           n (entries), arena_len
The Counter's attributes arena, e_off, e_len, e_hash, e_count, n and arena_len read the table.

Interface for the other train modules: counter_size(c), counter_entry(c, i) -> (bytes view,
count), counter_add_key(c, p, n, h, count) (st__counter_add_key: p a uint8 array holding the
key at p[0..n)), pretokenizers_equal(a, b); the kernels add_piece(t, p, pi, n, h, count) ->
(entry + 1, Table) and table_new().
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_BUFFER_TOO_SMALL, ST_ERR_MALFORMED_MODEL,
                           ST_UNIT_NONE, ST_UNIT_BYTE, ST_UNIT_INDEX, ST_KIND_OUT_OF_ORDER, clear, fail)
from ..base.hash import hash_bytes, load_le64, mix64, ST_HASH_SEED, ST_HASH_LEN
from ..text.pretokenize import (pretokenizer_init, piece, pieces_next, Pretokenizer, ITER_FIELDS, IT_I,
                                IT_CHUNK_END, IT_SCAN, ST_PRETOK_SCRIPT_AWARE, ST_SCRIPT_WORDS, ST_PATTERN_GPT2,
                                ST_PATTERN_DEEPSEEK_V3)
from ..text.utf8 import utf8_validate, validate
from ..text.unicode import st_script_count
from .candidates import (has_letter_at, tokset_find_sym, ST__CAND_SEP, ST__CAND_HOT_BITS, ST__NO_TOKEN_ID,
                         ST_ALGORITHM_BOUNDLESS, ST_ALGORITHM_SUPERBPE, ST_ALPHABET_BYTES, ST_ALPHABET_UBE, Cand,
                         cand_compatible)

U64 = np.uint64
_HI = U64(0xFFFFFFFF00000000)
_LO32 = U64(0xFFFFFFFF)
_ONE = U64(1)
_ZERO = U64(0)
_ALL = U64(0xFFFFFFFFFFFFFFFF)

LOAD_NUM, LOAD_DEN = 7, 10  # grow when entries exceed 7/10 of the slots
MIN_SLOTS = 1024

MAGIC = b"stcounts"
FORMAT_VERSION = 1
HEADER_SIZE = 84        # magic, version, pattern, flags, scripts bitset (32), 4 stats
CAND_VERSION = 2        # a candidates counter's file
CAND_HEADER_SIZE = 132  # version 1's header, then kind, algorithm, alphabet, n-gram max_len,
                        # supermerges, fingerprint, n-gram c_min, kept merges
ENTRY_HEAD = 12         # u32 length, u64 count

ST__HOT_BITS = 13
ST_COUNT_LINES = 1
ST_COUNTER_DOCUMENTS, ST_COUNTER_BYTES, ST_COUNTER_PRETOKENS, ST_COUNTER_UNIQUE, ST_COUNTER_KIND = 0, 1, 2, 3, 4
ST_COUNTER_KIND_PRETOKENS, ST_COUNTER_KIND_CANDIDATES = 0, 1
UINT64_MAX = (1 << 64) - 1

Table = namedtuple("Table", "slots e_off e_len e_hash e_count arena hot_word hot_len hot_entry sc")
SC_N, SC_ARENA_LEN = 0, 1

# what a counting kernel reports in rep[0] (rep[1]: the byte offset in the document)
_R_OK, _R_LONG_PRETOKEN, _R_LONG_CANDIDATE = 0, 1, 2


def table_new():
    """An empty table (no slots, entries or arena yet, as st_counter_new leaves them)."""
    return Table(np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.uint32), np.zeros(0, np.uint32),
                 np.zeros(0, np.uint64), np.zeros(0, np.uint8), np.zeros(0, np.uint64), np.zeros(0, np.uint32),
                 np.zeros(0, np.uint32), np.zeros(2, np.int64))


class Counter:
    """struct st_counter (see the module's docstring)."""
    __slots__ = ("pt", "t", "stats", "cand", "__weakref__")

    def __init__(self, pt):
        self.pt = pt
        self.t = table_new()
        self.stats = np.zeros(4, np.uint64)
        self.cand = None

    arena = property(lambda self: self.t.arena)
    e_off = property(lambda self: self.t.e_off)
    e_len = property(lambda self: self.t.e_len)
    e_hash = property(lambda self: self.t.e_hash)
    e_count = property(lambda self: self.t.e_count)
    n = property(lambda self: int(self.t.sc[SC_N]))
    arena_len = property(lambda self: int(self.t.sc[SC_ARENA_LEN]))

    def set_table(self, t):
        """The table a kernel gave back; UNIQUE mirrors n (add_piece keeps it so)."""
        self.t = t
        self.stats[ST_COUNTER_UNIQUE] = t.sc[SC_N]


def counter_size(c):
    """st__counter_size: the distinct pretokens (insertion order)."""
    return c.n


def counter_entry(c, i):
    """st__counter_entry: (the bytes of entry i, a view of the arena; its count)."""
    off, ln = int(c.t.e_off[i]), int(c.t.e_len[i])
    return c.t.arena[off:off + ln], int(c.t.e_count[i])


def pretokenizers_equal(a, b):
    """st__pretokenizers_equal: 1 if the two pre-tokenizers split every text the same way."""
    if a.pattern != b.pattern or a.flags != b.flags:
        return 0
    if not (a.flags & ST_PRETOK_SCRIPT_AWARE):
        return 1  # the script list is not used
    return int(np.array_equal(a.single_letter_scripts, b.single_letter_scripts))


# ---- the table ------------------------------------------------------------------------------
# The loops that add many keys never reassign the table's arrays: a local array variable that a
# loop may reassign costs numba a reference count increment and decrement for each array at every
# iteration (atomic operations: they made counting five times slower). So a loop runs in an inner
# kernel over fixed arrays and returns, with its place saved, when a key needs room; its caller
# grows the table exactly as the C's add_piece grows it (grow_for) and calls it again.
@njit(cache=True, nogil=True, _nrt=False)
def key_eq(a, ai, p, pi, n):
    """a[ai .. ai + n) == p[pi .. pi + n)"""
    for k in range(n):
        if a[ai + k] != p[pi + k]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def probe(slots, e_off, e_len, arena, p, pi, n, h):
    """add_piece's search: (entry + 1, its slot) if the key p[pi .. pi + n) of hash h is in the
    table, else (0, the empty slot where it goes; 0 while the table has no slots)."""
    if slots.size == 0:
        return np.int64(0), np.int64(0)
    mask = np.int64(slots.size - 1)
    tag = h & _HI
    k = np.int64(h & U64(mask))
    while True:
        s = slots[k]
        if s == _ZERO:
            return np.int64(0), k
        if (s & _HI) == tag:
            e = np.int64(s & _LO32) - 1
            if np.int64(e_len[e]) == n and key_eq(arena, np.int64(e_off[e]), p, pi, n):
                return e + 1, k
        k = (k + 1) & mask


@njit(cache=True, nogil=True, _nrt=False)
def has_room(slots, e_off, arena, sc, n):
    """Whether a new key of n bytes goes in without the table growing (add_piece's three tests)."""
    nn = sc[SC_N]
    return (slots.size != 0 and (nn + 1) * LOAD_DEN <= slots.size * LOAD_NUM and nn + 1 <= e_off.size
            and n <= arena.size - sc[SC_ARENA_LEN])


@njit(cache=True, nogil=True, _nrt=False)
def put(slots, e_off, e_len, e_hash, e_count, arena, sc, p, pi, n, h, count, k):
    """add_piece's end: the new key p[pi .. pi + n) of hash h in the empty slot k (has_room)."""
    nn = sc[SC_N]
    al = sc[SC_ARENA_LEN]
    e_off[nn] = al
    e_len[nn] = n
    e_hash[nn] = np.uint32(h & _LO32)
    e_count[nn] = count
    for q in range(n):
        arena[al + q] = p[pi + q]
    sc[SC_ARENA_LEN] = al + n
    sc[SC_N] = nn + 1
    slots[k] = (h & _HI) | U64(nn + 1)


@njit(cache=True, nogil=True)
def rehash(e_off, e_len, e_hash, arena, n, nslots):
    """rehash: a slot table of nslots slots (a power of two) for entries [0, n)."""
    s = np.zeros(nslots, np.uint64)
    mask = nslots - 1
    for i in range(n):
        k = np.int64(U64(e_hash[i]) & U64(mask))
        while s[k] != _ZERO:
            k = (k + 1) & mask
        # the tag (high half of the hash) is not stored in the entry: recompute it
        h = hash_bytes(arena, np.int64(e_off[i]), np.int64(e_len[i]))
        s[k] = (h & _HI) | U64(i + 1)
    return s


@njit(cache=True, nogil=True)
def grow_for(slots, e_off, e_len, e_hash, e_count, arena, sc, n):
    """Room for one new key of n bytes, as add_piece makes it: the slot table doubles (from
    MIN_SLOTS) past 7/10 full, the entries (reserve_entries, from 256) and the arena
    (reserve_arena, from 64 KiB) double when full. The arrays, new where they grew."""
    nn = sc[SC_N]
    if slots.size == 0 or (nn + 1) * LOAD_DEN > slots.size * LOAD_NUM:
        slots = rehash(e_off, e_len, e_hash, arena, nn, slots.size * 2 if slots.size else MIN_SLOTS)
    if nn + 1 > e_off.size:
        cap = e_off.size * 2 if e_off.size else 256
        while cap < nn + 1:
            cap *= 2
        if cap > 0xFFFFFFFE:  # entry numbers are 32-bit in the slots
            cap = 0xFFFFFFFE
        o2 = np.empty(cap, np.uint64)
        l2 = np.empty(cap, np.uint32)
        h2 = np.empty(cap, np.uint32)
        c2 = np.empty(cap, np.uint64)
        o2[:nn] = e_off[:nn]
        l2[:nn] = e_len[:nn]
        h2[:nn] = e_hash[:nn]
        c2[:nn] = e_count[:nn]
        e_off, e_len, e_hash, e_count = o2, l2, h2, c2
    al = sc[SC_ARENA_LEN]
    if n > arena.size - al:
        cap = arena.size * 2 if arena.size else 65536
        while cap - al < n:
            cap *= 2
        a2 = np.empty(cap, np.uint8)
        a2[:al] = arena[:al]
        arena = a2
    return slots, e_off, e_len, e_hash, e_count, arena


@njit(cache=True, nogil=True)
def add_piece(t, p, pi, n, h, count):
    """add_piece: count more of the key p[pi .. pi + n) whose hash is h (st__hash_bytes);
    (its entry + 1, the table: a new Table if it grew). For one key: loops use add_keys."""
    e, k = probe(t.slots, t.e_off, t.e_len, t.arena, p, pi, n, h)
    if e:
        t.e_count[e - 1] += count
        return e, t
    if not has_room(t.slots, t.e_off, t.arena, t.sc, n):
        slots, e_off, e_len, e_hash, e_count, arena = grow_for(t.slots, t.e_off, t.e_len, t.e_hash, t.e_count,
                                                               t.arena, t.sc, n)
        t = Table(slots, e_off, e_len, e_hash, e_count, arena, t.hot_word, t.hot_len, t.hot_entry, t.sc)
        _, k = probe(t.slots, t.e_off, t.e_len, t.arena, p, pi, n, h)
    put(t.slots, t.e_off, t.e_len, t.e_hash, t.e_count, t.arena, t.sc, p, pi, n, h, count, k)
    return t.sc[SC_N], t


@njit(cache=True, nogil=True)
def add_keys_from(slots, e_off, e_len, e_hash, e_count, arena, sc, src, starts, lens, counts, j, m):
    """Keys j.. of add_keys added while the table has room: the first that needs more, or m."""
    while j < m:
        p = np.int64(starts[j])
        n = np.int64(lens[j])
        h = hash_bytes(src, p, n)
        e, k = probe(slots, e_off, e_len, arena, src, p, n, h)
        if e:
            e_count[e - 1] += counts[j]
        elif has_room(slots, e_off, arena, sc, n):
            put(slots, e_off, e_len, e_hash, e_count, arena, sc, src, p, n, h, counts[j], k)
        else:
            return j
        j += 1
    return m


@njit(cache=True, nogil=True)
def add_keys(t, src, starts, lens, counts, m):
    """add_piece for the keys src[starts[j] .. starts[j] + lens[j]) with counts[j], j < m, in
    order: the table (a new Table if it grew)."""
    slots, e_off, e_len, e_hash, e_count, arena = t.slots, t.e_off, t.e_len, t.e_hash, t.e_count, t.arena
    j = 0
    while True:
        j = add_keys_from(slots, e_off, e_len, e_hash, e_count, arena, t.sc, src, starts, lens, counts, j, m)
        if j >= m:
            break
        slots, e_off, e_len, e_hash, e_count, arena = grow_for(slots, e_off, e_len, e_hash, e_count, arena, t.sc,
                                                               np.int64(lens[j]))
    return Table(slots, e_off, e_len, e_hash, e_count, arena, t.hot_word, t.hot_len, t.hot_entry, t.sc)


def counter_add_key(c, p, n, h, count):
    """st__counter_add_key: add count occurrences of the key p[0..n) (p a uint8 array) whose
    hash is h; its entry + 1. UNIQUE follows; the other statistics are the caller's."""
    e, t = add_piece(c.t, p, 0, int(n), U64(h), U64(count))
    c.set_table(t)
    return int(e)


# ---- counting -------------------------------------------------------------------------------
@njit(cache=True, nogil=True, _nrt=False)
def line_end(s, i, length):
    """The end of the line starting at i: after its '\n', or length."""
    while i < length:
        if s[i] == 10:
            return i + 1
        i += 1
    return length


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def short_word(s, start, b, n):
    """A piece of 1-8 bytes as one little-endian word, zero-padded (the word the hot caches key
    on; its hash is st__hash_bytes's)."""
    if b - start >= 8:
        w = (U64(s[start]) | (U64(s[start + 1]) << U64(8)) | (U64(s[start + 2]) << U64(16))
             | (U64(s[start + 3]) << U64(24)) | (U64(s[start + 4]) << U64(32)) | (U64(s[start + 5]) << U64(40))
             | (U64(s[start + 6]) << U64(48)) | (U64(s[start + 7]) << U64(56)))
        return w & (_ALL >> U64(8 * (8 - n)))
    w = _ZERO
    for k in range(n):
        w |= U64(s[start + k]) << U64(8 * k)
    return w


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def short_hash(w, n):
    """st__hash_bytes of the 1-8 bytes of the word w: st__mix64 of the seeded word, as the C's."""
    return mix64((ST_HASH_SEED ^ (U64(n) * ST_HASH_LEN)) ^ w)


# The place of a counting loop (an int64 array) between the calls of its inner kernel
P_A, P_B, P_D, P_START, P_I, P_PIECES, P_IN_DOC, P_PENDING, P_E, P_NEED, P_KL, P_RUN = range(12)
P_FIELDS = 12
# what an inner counting kernel returns
_DONE, _GROW, _HOT, _FAILED, _KEY, _SCRATCH = 0, 1, 2, 3, 4, 5


@njit(cache=True, nogil=True, _nrt=False)
def next_document(s, ends, n_docs, lines, length, pl):
    """The end of the next document (it starts at pl[P_A]), or -1 when none is left."""
    a = pl[P_A]
    if lines:
        return line_end(s, a, length) if a < length else np.int64(-1)
    return np.int64(ends[pl[P_D]]) if pl[P_D] < n_docs else np.int64(-1)


@njit(cache=True, nogil=True, _nrt=False)
def start_document(pt, b, pl, it):
    a = pl[P_A]
    pl[P_D] += 1
    pl[P_B] = b
    pl[P_IN_DOC] = 1
    pl[P_START] = a
    pl[P_I] = a
    pl[P_PIECES] = 0
    pl[P_KL] = 0
    pl[P_RUN] = 0
    it[IT_I] = a
    it[IT_CHUNK_END] = a
    it[IT_SCAN] = pt.pattern


@njit(cache=True, nogil=True)
def count_step(pt, slots, e_off, e_len, e_hash, e_count, arena, hot_word, hot_len, hot_entry, sc, stats, s, ends,
               n_docs, lines, length, pl, it, rep):
    """count_document over the documents of a call from the place pl, until the end (_DONE), a
    key that needs room (_GROW, its length in pl[P_NEED]; the piece is pending), a document
    that makes the hot cache due (_HOT) or a failure (_FAILED, rep)."""
    aware = (pt.flags & ST_PRETOK_SCRIPT_AWARE) != 0
    scan = pt.pattern
    hot = hot_word.size != 0
    hot_shift = U64(64 - ST__HOT_BITS)
    while True:
        if not pl[P_IN_DOC]:
            b = next_document(s, ends, n_docs, lines, length, pl)
            if b < 0:
                return _DONE
            # the cache pays once the counter has seen some text, this document's included
            if not hot and stats[ST_COUNTER_BYTES] + U64(b - pl[P_A]) >= U64(1 << 16):
                return _HOT
            start_document(pt, b, pl, it)
        a, b = pl[P_A], pl[P_B]
        start, i, pieces = pl[P_START], pl[P_I], pl[P_PIECES]
        pending = pl[P_PENDING]
        while pending or i < b:
            if pending:  # the piece that waited for room
                e = pl[P_E]
                pending = 0
                pl[P_PENDING] = 0
            else:
                # one chunk (not script-aware): its scanner directly, no chunk bookkeeping per piece
                e = pieces_next(pt, s, b, it) if aware else piece(scan, s, b, i)
                i = e
            n = e - start
            x = np.int64(-1)
            if n <= 8:
                w = short_word(s, start, b, n)
                h = short_hash(w, n)
                if hot:
                    x = np.int64(h >> hot_shift)
                    if hot_len[x] == n and hot_word[x] == w:
                        e_count[hot_entry[x]] += _ONE
                        pieces += 1
                        start = e
                        continue
            else:
                if n > 0xFFFFFFFF:
                    rep[0] = _R_LONG_PRETOKEN
                    rep[1] = start - a
                    return _FAILED
                h = hash_bytes(s, start, n)
            eid, k = probe(slots, e_off, e_len, arena, s, start, n, h)
            if eid:
                e_count[eid - 1] += _ONE
            elif has_room(slots, e_off, arena, sc, n):
                put(slots, e_off, e_len, e_hash, e_count, arena, sc, s, start, n, h, _ONE, k)
                eid = sc[SC_N]
            else:
                pl[P_START], pl[P_I], pl[P_PIECES] = start, i, pieces
                pl[P_PENDING], pl[P_E], pl[P_NEED] = 1, e, n
                return _GROW
            if x >= 0:
                hot_word[x] = w
                hot_len[x] = n
                hot_entry[x] = eid - 1
            pieces += 1
            start = e
        stats[ST_COUNTER_DOCUMENTS] += _ONE
        stats[ST_COUNTER_BYTES] += U64(b - a)
        stats[ST_COUNTER_PRETOKENS] += U64(pieces)
        pl[P_IN_DOC] = 0
        pl[P_A] = b


@njit(cache=True, nogil=True)
def count_documents(pt, t, stats, s, ends, n_docs, lines, length, rep):
    """count_document over the documents of one call: texts s[ends[d-1] .. ends[d]) for
    d < n_docs, or (lines) every line of s[0 .. length). The table as it was left: a new Table if
    it grew. rep[0] is not _R_OK when a document failed (rep[1] its offset there): the documents
    before it stay counted, as in C."""
    slots, e_off, e_len, e_hash, e_count, arena = t.slots, t.e_off, t.e_len, t.e_hash, t.e_count, t.arena
    hot_word, hot_len, hot_entry, sc = t.hot_word, t.hot_len, t.hot_entry, t.sc
    pl = np.zeros(P_FIELDS, np.int64)
    it = np.zeros(ITER_FIELDS, np.int64)
    while True:
        r = count_step(pt, slots, e_off, e_len, e_hash, e_count, arena, hot_word, hot_len, hot_entry, sc, stats, s,
                       ends, n_docs, lines, length, pl, it, rep)
        if r == _GROW:
            slots, e_off, e_len, e_hash, e_count, arena = grow_for(slots, e_off, e_len, e_hash, e_count, arena, sc,
                                                                   pl[P_NEED])
        elif r == _HOT:
            hot_word = np.zeros(1 << ST__HOT_BITS, np.uint64)
            hot_len = np.zeros(1 << ST__HOT_BITS, np.uint32)
            hot_entry = np.zeros(1 << ST__HOT_BITS, np.uint32)
        else:
            break
    return Table(slots, e_off, e_len, e_hash, e_count, arena, hot_word, hot_len, hot_entry, sc)


@njit(cache=True, nogil=True, _nrt=False)
def eligible(alphabet, seq, off, len_, tslots, scratch, sy, p, pi, n):
    """eligible: 1 if the pretoken p[pi .. pi + n) has a letter and the symbols of a token of
    the candidates' vocabulary (scratch: at least 2n bytes for UBE; sy: uint16[4])."""
    if not has_letter_at(p, pi, n):
        return 0
    return 1 if tokset_find_sym(alphabet, seq, off, len_, tslots, scratch, sy, p, pi, n) != ST__NO_TOKEN_ID else 0


@njit(cache=True, nogil=True)
def cand_step(pt, slots, e_off, e_len, e_hash, e_count, arena, sc, stats, s, ends, n_docs, lines, length, pl, it,
              rep, alphabet, seq, off, len_, tslots, scratch, sy, key, ch_word, ch_len, ch_elig):
    """count_candidates over the documents of a call from the place pl (as count_step): returns
    _DONE, _FAILED, _HOT (the eligibility cache is due), or, with the piece pending and the
    size wanted in pl[P_NEED], _GROW (a run's key needs room in the table), _KEY (the key
    buffer is short) or _SCRATCH (the UBE scratch is)."""
    aware = (pt.flags & ST_PRETOK_SCRIPT_AWARE) != 0
    scan = pt.pattern
    ube = alphabet == ST_ALPHABET_UBE
    hot = ch_word.size != 0
    hot_shift = U64(64 - ST__CAND_HOT_BITS)
    while True:
        if not pl[P_IN_DOC]:
            b = next_document(s, ends, n_docs, lines, length, pl)
            if b < 0:
                return _DONE
            if not hot and stats[ST_COUNTER_BYTES] + U64(b - pl[P_A]) >= U64(1 << 16):
                return _HOT
            start_document(pt, b, pl, it)
        a, b = pl[P_A], pl[P_B]
        start, i, found = pl[P_START], pl[P_I], pl[P_PIECES]
        kl, run = pl[P_KL], pl[P_RUN]
        while True:
            el = 0
            if pl[P_PENDING]:  # the piece (or the end) that waited for room: done again from its start
                e = pl[P_E]
                pl[P_PENDING] = 0
            else:
                e = start
                if i < b:
                    e = pieces_next(pt, s, b, it) if aware else piece(scan, s, b, i)
                    i = e
            if e != start:
                n = e - start
                if ube and 2 * n > scratch.size:  # tokset_find's scratch: 2 bytes per text byte at most
                    pl[P_START], pl[P_I], pl[P_PIECES], pl[P_KL], pl[P_RUN] = start, i, found, kl, run
                    pl[P_PENDING], pl[P_E], pl[P_NEED] = 1, e, 2 * n
                    return _SCRATCH
                if n <= 8 and hot:
                    w = short_word(s, start, b, n)
                    h = short_hash(w, n)
                    x = np.int64(h >> hot_shift)
                    if ch_len[x] == n and ch_word[x] == w:
                        el = np.int64(ch_elig[x])
                    else:
                        el = eligible(alphabet, seq, off, len_, tslots, scratch, sy, s, start, n)
                        ch_word[x] = w
                        ch_len[x] = n
                        ch_elig[x] = el
                else:
                    el = eligible(alphabet, seq, off, len_, tslots, scratch, sy, s, start, n)
                if el:
                    if kl + n + 1 > key.size:
                        pl[P_START], pl[P_I], pl[P_PIECES], pl[P_KL], pl[P_RUN] = start, i, found, kl, run
                        pl[P_PENDING], pl[P_E], pl[P_NEED] = 1, e, kl + n + 1
                        return _KEY
                    if run:
                        key[kl] = ST__CAND_SEP
                        kl += 1
                    for q in range(n):
                        key[kl + q] = s[start + q]
                    kl += n
                    run += 1
            if not el:  # the run ends: an ineligible pretoken, or the document's end
                if run >= 2:
                    if kl > 0xFFFFFFFF:
                        rep[0] = _R_LONG_CANDIDATE
                        rep[1] = start - a
                        return _FAILED
                    h = hash_bytes(key, 0, kl)
                    eid, k = probe(slots, e_off, e_len, arena, key, 0, kl, h)
                    if eid:
                        e_count[eid - 1] += _ONE
                    elif has_room(slots, e_off, arena, sc, kl):
                        put(slots, e_off, e_len, e_hash, e_count, arena, sc, key, 0, kl, h, _ONE, k)
                    else:
                        pl[P_START], pl[P_I], pl[P_PIECES], pl[P_KL], pl[P_RUN] = start, i, found, kl, run
                        pl[P_PENDING], pl[P_E], pl[P_NEED] = 1, e, kl
                        return _GROW
                    found += 1
                run = 0
                kl = 0
            if e == start:
                break  # no piece was read: the end
            start = e
        stats[ST_COUNTER_DOCUMENTS] += _ONE
        stats[ST_COUNTER_BYTES] += U64(b - a)
        stats[ST_COUNTER_PRETOKENS] += U64(found)
        pl[P_IN_DOC] = 0
        pl[P_A] = b


@njit(cache=True, nogil=True)
def count_candidates(pt, t, stats, s, ends, n_docs, lines, length, rep, alphabet, seq, off, len_, tslots, scratch,
                     key, ch_word, ch_len, ch_elig):
    """count_candidates over the documents of one call (as count_documents walks them): the
    maximal runs of two or more eligible pretokens, each counted once, keyed by their bytes
    joined with 0xFF. Returns (the Table, scratch, key, ch_word, ch_len, ch_elig): each new
    where it grew or was made (scratch: the UBE symbols of a pretoken; key: the run being built,
    grown as grow_key grows it; ch_*: the eligibility of recent short pretokens)."""
    slots, e_off, e_len, e_hash, e_count, arena, sc = t.slots, t.e_off, t.e_len, t.e_hash, t.e_count, t.arena, t.sc
    pl = np.zeros(P_FIELDS, np.int64)
    it = np.zeros(ITER_FIELDS, np.int64)
    sy = np.zeros(4, np.uint16)
    while True:
        r = cand_step(pt, slots, e_off, e_len, e_hash, e_count, arena, sc, stats, s, ends, n_docs, lines, length, pl,
                      it, rep, alphabet, seq, off, len_, tslots, scratch, sy, key, ch_word, ch_len, ch_elig)
        need = pl[P_NEED]
        if r == _GROW:
            slots, e_off, e_len, e_hash, e_count, arena = grow_for(slots, e_off, e_len, e_hash, e_count, arena, sc,
                                                                   need)
        elif r == _HOT:
            ch_word = np.zeros(1 << ST__CAND_HOT_BITS, np.uint64)
            ch_len = np.zeros(1 << ST__CAND_HOT_BITS, np.uint32)
            ch_elig = np.zeros(1 << ST__CAND_HOT_BITS, np.uint32)
        elif r == _KEY:  # grow_key: its contents kept
            cap = key.size if key.size else 4096
            while cap < need:
                cap *= 2
            k2 = np.empty(cap, np.uint8)
            k2[:key.size] = key
            key = k2
        elif r == _SCRATCH:
            cap = scratch.size if scratch.size else 256
            while cap < need:
                cap *= 2
            scratch = np.empty(cap, np.uint8)
        else:
            break
    t = Table(slots, e_off, e_len, e_hash, e_count, arena, t.hot_word, t.hot_len, t.hot_entry, sc)
    return t, scratch, key, ch_word, ch_len, ch_elig


def _given_back(err):
    """ST_ERR_INVALID_ARGUMENT, kind ST_KIND_OUT_OF_ORDER: a candidates counter given back to its
    trainer takes nothing more (its counts are in the trainer's pass already)."""
    return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                "the candidates counter was given back to its trainer (st_trainer_candidates_add): it takes "
                "nothing more", kind=ST_KIND_OUT_OF_ORDER)


_NO_ENDS = np.zeros(1, np.uint64)


def _count(c, s, ends, n_docs, lines, length, err):
    """The documents of one validated call, counted (count_document for each); a status."""
    rep = np.zeros(2, np.int64)
    if s is None:
        s = np.zeros(16, np.uint8)
    cd = c.cand
    if cd is None:
        c.set_table(count_documents(c.pt, c.t, c.stats, s, ends, n_docs, lines, length, rep))
    else:
        # checked by count_candidates before each document: the same for every document of the call
        if cd.given_back:
            return _given_back(err)
        if cd.toks is None or cd.toks.slots is None:
            return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                        "a split candidates counter counts no more documents (split after counting)")
        ts = cd.toks
        hw, hl, he = cd.hot
        t, ts.scratch, cd.key, hw, hl, he = count_candidates(
            c.pt, c.t, c.stats, s, ends, n_docs, lines, length, rep, ts.alphabet, ts.seq, ts.off, ts.len,
            ts.slots, ts.scratch, cd.key, hw, hl, he)
        ts.scratch_cap = ts.scratch.size
        cd.hot = (hw, hl, he)
        c.set_table(t)
    if rep[0] == _R_LONG_PRETOKEN:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, int(rep[1]), "a pretoken longer than 4 GiB")
    if rep[0] == _R_LONG_CANDIDATE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, int(rep[1]), "a candidate longer than 4 GiB")
    return ST_OK


@njit(cache=True, nogil=True)
def first_invalid(s, ends, n_docs):
    """The first document of s (ends) that is not valid UTF-8, or -1; st_counter_add_documents's
    first pass checks the order of ends before that (first_bad_end)."""
    prev = np.int64(0)
    for d in range(n_docs):
        e = np.int64(ends[d])
        if e > prev:
            at, _ = utf8_validate(s[prev:], e - prev)
            if at >= 0:
                return d
        prev = e
    return -1


@export
def st_counter_new(pattern, flags, scripts, scripts_len, alloc, out, err):
    clear(err)
    if out is None or (scripts is None and scripts_len):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "out is NULL, or scripts NULL with a length")
    out.v = None
    st, pt = pretokenizer_init(pattern, flags, scripts, scripts_len, err)
    if st != ST_OK:
        return st
    out.v = Counter(pt)
    return ST_OK


@export
def st_counter_free(c):
    pass  # numpy frees the arrays with the handle


def _line_of(s, off):
    return 1 + int(np.count_nonzero(s[:off] == 10))


@export
def st_counter_add(c, text, length, flags, err):
    clear(err)
    if c is None or (text is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter or text is NULL")
    if flags & ~ST_COUNT_LINES:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags")
    # validate first, so nothing of the call is counted when the text is bad
    from ..base.common import Err
    e = err if err is not None else Err()
    st = validate(e, text, length)
    if st != ST_OK:
        if flags & ST_COUNT_LINES:
            e.line, e.input = _line_of(text, e.offset), 0
        return st
    if not (flags & ST_COUNT_LINES):
        return _count(c, text, np.array([length], np.uint64), 1, False, length, err)
    if length == 0:
        return ST_OK  # no line: count_document is never called
    return _count(c, text, _NO_ENDS, 0, True, length, err)


@export
def st_counter_add_documents(c, texts, ends, n_documents, err):
    clear(err)
    if c is None or (n_documents and (ends is None or texts is None)):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter, texts or ends is NULL")
    if not n_documents:
        return ST_OK
    e = np.asarray(ends[:n_documents], np.uint64)
    dec = np.flatnonzero(e[1:] < e[:-1]) if n_documents > 1 else np.zeros(0, np.int64)
    last = n_documents if not dec.size else int(dec[0]) + 1  # the documents before the first bad end
    bad_doc = int(first_invalid(texts, e, last))
    if bad_doc >= 0:
        prev = int(e[bad_doc - 1]) if bad_doc else 0
        st = validate(err, texts[prev:], int(e[bad_doc]) - prev)
        if err is not None:
            err.line, err.input = 0, bad_doc
        return st
    if dec.size:
        fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, last, "ends must not decrease", line=0, input=last)
        return ST_ERR_INVALID_ARGUMENT
    return _count(c, texts, e, n_documents, False, 0, err)


@export
def st_counter_add_pretoken(c, data, length, count, err):
    clear(err)
    if c is None or data is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter or bytes is NULL")
    if length == 0 or length > 0xFFFFFFFF:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a pretoken is 1 byte to 4 GiB long")
    if c.cand is not None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a candidates counter takes documents, not pretokens")
    if count == 0:
        return ST_OK
    if int(c.stats[ST_COUNTER_PRETOKENS]) + count > UINT64_MAX:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the count would overflow 64 bits")
    st = validate(err, data, length)
    if st != ST_OK:
        return st
    counter_add_key(c, data, length, hash_bytes(data, 0, length), count)
    c.stats[ST_COUNTER_PRETOKENS] += U64(count)
    return ST_OK


def _add_would_overflow(c, docs, nbytes, pretokens):
    s = c.stats
    return (int(s[ST_COUNTER_DOCUMENTS]) + int(docs) > UINT64_MAX or int(s[ST_COUNTER_BYTES]) + int(nbytes) > UINT64_MAX
            or int(s[ST_COUNTER_PRETOKENS]) + int(pretokens) > UINT64_MAX)


@export
def st_counter_merge(into, frm, err):
    clear(err)
    if into is None or frm is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a counter is NULL")
    if not pretokenizers_equal(into.pt, frm.pt):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "the counters split text differently (pattern, script-aware or scripts)")
    if into is frm:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "merging a counter into itself")
    if (into.cand is None) != (frm.cand is None):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "one counter holds pretokens, the other supermerge candidates")
    if into.cand is not None and not cand_compatible(into.cand, frm.cand):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "the candidates were made from another vocabulary, algorithm or n-gram split")
    if into.cand is not None and (into.cand.given_back or frm.cand.given_back):
        return _given_back(err)
    if _add_would_overflow(into, frm.stats[0], frm.stats[1], frm.stats[2]):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the sum would overflow 64 bits")
    # every pretoken count is at most the pretoken total, which does not overflow
    f = frm.t
    into.set_table(add_keys(into.t, f.arena, f.e_off, f.e_len, f.e_count, frm.n))
    for s in (ST_COUNTER_DOCUMENTS, ST_COUNTER_BYTES, ST_COUNTER_PRETOKENS):
        into.stats[s] += frm.stats[s]
    return ST_OK


def counter_hand_over(into, frm, err):
    """st__counter_hand_over: frm's entries and statistics added to into, as st_counter_merge
    adds them (its checks, its result), and frm left empty. (The C core hands an empty into frm's
    tables as they are, with no copy: the counts are never held twice. Here frm's arrays are
    given up all the same once added.)"""
    st = st_counter_merge(into, frm, err)
    if st != ST_OK:
        return st
    frm.t = table_new()
    frm.stats[:] = 0
    return ST_OK


@njit(cache=True, nogil=True)
def prune_table(slots, e_off, e_len, e_hash, e_count, arena, sc, min_count):
    """st_counter_prune's work: the entries counted at least min_count times kept, in order, with
    their bytes moved down in the arena (entries are in arena order: each new one is appended
    to both); (the new slot table, of the same size, and the count dropped)."""
    s = np.zeros(slots.size, np.uint64)
    mask = np.int64(slots.size - 1)
    n = sc[SC_N]
    kept = 0
    pos = np.int64(0)
    dropped = _ZERO
    for i in range(n):
        if e_count[i] < min_count:
            dropped += e_count[i]
            continue
        o = np.int64(e_off[i])
        ln = np.int64(e_len[i])
        if o != pos:
            for q in range(ln):  # forward: the bytes move down
                arena[pos + q] = arena[o + q]
        e_off[kept] = pos
        e_len[kept] = e_len[i]
        e_hash[kept] = e_hash[i]
        e_count[kept] = e_count[i]
        pos += ln
        kept += 1
    for i in range(kept):
        h = hash_bytes(arena, np.int64(e_off[i]), np.int64(e_len[i]))
        k = np.int64(h & U64(mask))
        while s[k] != _ZERO:
            k = (k + 1) & mask
        s[k] = (h & _HI) | U64(i + 1)
    sc[SC_N] = kept
    sc[SC_ARENA_LEN] = pos
    return s, dropped


@export
def st_counter_prune(c, min_count, err):
    clear(err)
    if c is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the counter is NULL")
    if c.cand is not None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "a candidates counter is not pruned: min_count applies to pretoken counts")
    if min_count <= 1 or not c.n:
        return ST_OK
    t = c.t
    slots, dropped = prune_table(t.slots, t.e_off, t.e_len, t.e_hash, t.e_count, t.arena, t.sc, U64(min_count))
    if t.hot_word.size:  # it names entries
        t.hot_word[:] = 0
        t.hot_len[:] = 0
        t.hot_entry[:] = 0
    c.set_table(t._replace(slots=slots))
    c.stats[ST_COUNTER_PRETOKENS] -= dropped
    return ST_OK


@export
def st_counter_stat(c, what):
    if c is not None and what == ST_COUNTER_KIND:
        return ST_COUNTER_KIND_CANDIDATES if c.cand is not None else ST_COUNTER_KIND_PRETOKENS
    if c is None or what < 0 or what > ST_COUNTER_UNIQUE:
        return 0
    return int(c.stats[what])


# ---- save / load (docs/formats/train-format.md) ---------------------------------------------
@njit(cache=True, nogil=True, _nrt=False)
def cmp_bytes(a, ai, an, b, bi, bn):
    """Python's bytes order: the common prefix, then the shorter first."""
    m = an if an < bn else bn
    for k in range(m):
        x = a[ai + k]
        y = b[bi + k]
        if x != y:
            return -1 if x < y else 1
    return -1 if an < bn else (1 if an > bn else 0)


@njit(cache=True, nogil=True)
def sort_entries(arena, e_off, e_len, n):
    """sort_entries: the entry numbers ordered by bytes (a bottom-up merge sort)."""
    idx = np.arange(n).astype(np.uint32)
    tmp = np.empty(n, np.uint32)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                x, y = idx[j], idx[i]
                if cmp_bytes(arena, np.int64(e_off[x]), np.int64(e_len[x]), arena, np.int64(e_off[y]),
                             np.int64(e_len[y])) < 0:
                    tmp[k] = x
                    j += 1
                else:
                    tmp[k] = y
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = idx[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = idx[j]
                j += 1
                k += 1
            lo += 2 * width
        idx, tmp = tmp, idx
        width *= 2
    return idx


@njit(cache=True, nogil=True)
def write_entries(out, pos, arena, e_off, e_len, e_count, order, n):
    """The entries in order: u32 length, u64 count, the bytes, each little-endian."""
    for r in range(n):
        i = order[r]
        ln = np.int64(e_len[i])
        v = U64(ln)
        for q in range(4):
            out[pos + q] = np.uint8((v >> U64(8 * q)) & U64(0xFF))
        v = e_count[i]
        for q in range(8):
            out[pos + 4 + q] = np.uint8((v >> U64(8 * q)) & U64(0xFF))
        o = np.int64(e_off[i])
        for q in range(ln):
            out[pos + ENTRY_HEAD + q] = arena[o + q]
        pos += ENTRY_HEAD + ln


def _header(c):
    """write_header"""
    pt = c.pt
    h = bytearray(MAGIC)
    h += (CAND_VERSION if c.cand is not None else FORMAT_VERSION).to_bytes(4, "little")
    h += (pt.pattern & 0xFFFFFFFF).to_bytes(4, "little") + (pt.flags & 0xFFFFFFFF).to_bytes(4, "little")
    for w in range(ST_SCRIPT_WORDS):
        h += (int(pt.single_letter_scripts[w]) if pt.flags & ST_PRETOK_SCRIPT_AWARE else 0).to_bytes(4, "little")
    for s in range(4):
        h += int(c.stats[s]).to_bytes(8, "little")
    cd = c.cand
    if cd is not None:
        h += ST_COUNTER_KIND_CANDIDATES.to_bytes(4, "little")
        h += (cd.algorithm & 0xFFFFFFFF).to_bytes(4, "little") + (cd.alphabet & 0xFFFFFFFF).to_bytes(4, "little")
        h += (cd.ngram_max_len & 0xFFFFFFFF).to_bytes(4, "little")
        for v in (cd.supermerges, cd.fingerprint, cd.ngram_cmin, cd.kept):
            h += int(v).to_bytes(8, "little")
    return bytes(h)


@export
def st_counter_save(c, out, cap, out_len, err):
    clear(err)
    if c is None or out_len is None or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0)
    head = CAND_HEADER_SIZE if c.cand is not None else HEADER_SIZE
    n = c.n
    size = head + n * ENTRY_HEAD + c.arena_len
    out_len.v = size
    if cap < size:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    t = c.t
    out[:head] = np.frombuffer(_header(c), np.uint8)
    if n:
        order = sort_entries(t.arena, t.e_off, t.e_len, n)
        write_entries(out, head, t.arena, t.e_off, t.e_len, t.e_count, order, n)
    return ST_OK


def _bad(err, off, what):
    return fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, off, what)


# load_check's codes: (message, what the offset is past the entry's start)
_LOAD_BAD = (
    None,
    "counts file: an entry is cut short (truncated?)",
    "counts file: an empty pretoken",
    "counts file: a count of 0",
    "counts file: a pretoken runs past the end (truncated?)",
    "counts file: a candidate's pretoken is empty or not valid UTF-8",
    "counts file: a candidate of fewer than 2 pretokens",
    "counts file: a pretoken is not valid UTF-8",
    "counts file: pretokens not in strictly increasing byte order (unsorted or repeated)",
    "counts file: the counts overflow 64 bits",
)


@njit(cache=True, nogil=True)
def get_le32(b, p):
    return np.int64(b[p]) | (np.int64(b[p + 1]) << 8) | (np.int64(b[p + 2]) << 16) | (np.int64(b[p + 3]) << 24)


@njit(cache=True, nogil=True)
def load_check(b, head, length, cand, out):
    """st_counter_load's pass 1 over the entries b[head .. length): out = (code, offset, entries,
    their sum) with code 0 when every entry is good, else an index of _LOAD_BAD."""
    pos = np.int64(head)
    prev = np.int64(0)
    prev_len = np.int64(0)
    n = _ZERO
    total = _ZERO
    while pos < length:
        if length - pos < ENTRY_HEAD:
            out[0], out[1] = 1, pos
            return
        ln = get_le32(b, pos)
        cnt = load_le64(b, pos + 4)
        if ln == 0:
            out[0], out[1] = 2, pos
            return
        if cnt == _ZERO:
            out[0], out[1] = 3, pos + 4
            return
        if ln > length - pos - ENTRY_HEAD:
            out[0], out[1] = 4, pos
            return
        p = pos + ENTRY_HEAD
        if cand:
            # two or more non-empty pretokens of valid UTF-8 joined with 0xFF
            s0 = np.int64(0)
            parts = 0
            for k in range(ln + 1):
                if k < ln and b[p + k] != ST__CAND_SEP:
                    continue
                bad = k == s0
                if not bad:
                    at, _ = utf8_validate(b[p + s0:], k - s0)
                    bad = at >= 0
                if bad:
                    out[0], out[1] = 5, p + s0
                    return
                parts += 1
                s0 = k + 1
            if parts < 2:
                out[0], out[1] = 6, p
                return
        else:
            at, _ = utf8_validate(b[p:], ln)
            if at >= 0:
                out[0], out[1] = 7, p
                return
        if n != _ZERO and cmp_bytes(b, prev, prev_len, b, p, ln) >= 0:
            out[0], out[1] = 8, pos
            return
        if total + cnt < cnt:
            out[0], out[1] = 9, pos + 4
            return
        total += cnt
        n += _ONE
        prev = p
        prev_len = ln
        pos += ENTRY_HEAD + ln
    out[0] = 0
    out[2] = np.int64(n)
    out[3] = np.int64(total)  # the bits of a uint64


@njit(cache=True, nogil=True)
def load_add(t, b, head, length, m):
    """st_counter_load's pass 2: the m entries added (the table, new if it grew)."""
    starts = np.empty(m, np.uint64)
    lens = np.empty(m, np.uint32)
    counts = np.empty(m, np.uint64)
    pos = np.int64(head)
    j = 0
    while pos < length:
        ln = get_le32(b, pos)
        counts[j] = load_le64(b, pos + 4)
        starts[j] = pos + ENTRY_HEAD
        lens[j] = ln
        j += 1
        pos += ENTRY_HEAD + ln
    return add_keys(t, b, starts, lens, counts, m)


def _le(b, off, n):
    return int.from_bytes(bytes(b[off:off + n]), "little")


@export
def st_counter_load(c, b, length, err):
    clear(err)
    if c is None or (b is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter or bytes is NULL")
    if length < 8 or bytes(b[:8]) != MAGIC:
        return _bad(err, 0, "not a supertok counts file (magic 'stcounts')")
    if length < HEADER_SIZE:
        return _bad(err, length, "counts file: the header is cut short (truncated?)")
    version = _le(b, 8, 4)
    if version != FORMAT_VERSION and version != CAND_VERSION:
        return _bad(err, 8, "counts file: format version %d is not supported (this core reads versions 1 and 2)"
                    % version)
    head = CAND_HEADER_SIZE if version == CAND_VERSION else HEADER_SIZE
    if length < head:
        return _bad(err, length, "counts file: the header is cut short (truncated?)")
    fc = Cand()  # version 2: the candidates' parameters
    if version == CAND_VERSION:
        if _le(b, 84, 4) != ST_COUNTER_KIND_CANDIDATES:
            return _bad(err, 84, "counts file: version 2 holds candidates (kind 1)")
        fc.algorithm = _le(b, 88, 4)
        fc.alphabet = _le(b, 92, 4)
        fc.ngram_max_len = _le(b, 96, 4)
        fc.supermerges = _le(b, 100, 8)
        fc.fingerprint = _le(b, 108, 8)
        fc.ngram_cmin = _le(b, 116, 8)
        fc.kept = _le(b, 124, 8)
        if fc.algorithm >= 1 << 31:  # C reads them as int
            fc.algorithm -= 1 << 32
        if fc.alphabet >= 1 << 31:
            fc.alphabet -= 1 << 32
        if fc.algorithm != ST_ALGORITHM_BOUNDLESS and fc.algorithm != ST_ALGORITHM_SUPERBPE:
            return _bad(err, 88, "counts file: unknown algorithm")
        if fc.alphabet != ST_ALPHABET_BYTES and fc.alphabet != ST_ALPHABET_UBE:
            return _bad(err, 92, "counts file: unknown alphabet")
        if (not fc.ngram_max_len) != (not fc.ngram_cmin):
            return _bad(err, 96, "counts file: n-gram max_len and c_min are both set (split) or both 0")
    if (c.cand is None) != (version == FORMAT_VERSION):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, 8,
                    "a pretoken counts file (version 1) does not load into a candidates counter" if c.cand is not None
                    else "a candidates file (version 2) does not load into a pretoken counter")
    pattern = _le(b, 12, 4)
    if pattern >= 1 << 31:
        pattern -= 1 << 32
    flags = _le(b, 16, 4)
    if pattern < ST_PATTERN_GPT2 or pattern > ST_PATTERN_DEEPSEEK_V3:
        return _bad(err, 12, "counts file: unknown pattern")
    if flags & ~ST_PRETOK_SCRIPT_AWARE:
        return _bad(err, 16, "counts file: unknown pre-tokenizer flags")
    nscripts = st_script_count()
    words = np.zeros(ST_SCRIPT_WORDS, np.uint32)
    for w in range(ST_SCRIPT_WORDS):
        bits = _le(b, 20 + 4 * w, 4)
        words[w] = bits
        for k in range(32):
            if (bits >> k) & 1 and (not (flags & ST_PRETOK_SCRIPT_AWARE) or 32 * w + k >= nscripts):
                return _bad(err, 20 + 4 * w, "counts file: a script bit that is no script (or set without script-aware)")
    if not pretokenizers_equal(Pretokenizer(pattern, flags, words), c.pt):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, 12,
                    "the counts were made with another pre-tokenizer (pattern, script-aware or scripts)")
    if c.cand is not None and not cand_compatible(fc, c.cand):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, 84,
                    "the candidates were made from another vocabulary, algorithm or n-gram split")
    if c.cand is not None and c.cand.given_back:
        return _given_back(err)
    stats = [_le(b, 52 + 8 * s, 8) for s in range(4)]
    if _add_would_overflow(c, stats[0], stats[1], stats[2]):
        return _bad(err, 52, "counts file: adding its statistics would overflow 64 bits")
    # pass 1: validate everything, so a bad file adds nothing
    res = np.zeros(4, np.int64)
    load_check(b, head, length, c.cand is not None, res)
    if res[0]:
        return _bad(err, int(res[1]), _LOAD_BAD[int(res[0])])
    if int(res[2]) != stats[ST_COUNTER_UNIQUE]:
        return _bad(err, 76, "counts file: the number of entries differs from its header")
    if int(res[3]) & UINT64_MAX != stats[ST_COUNTER_PRETOKENS]:
        return _bad(err, 68, "counts file: the counts do not sum to its pretoken total")
    # pass 2: add (cannot overflow: every count is at most the pretoken total)
    c.set_table(load_add(c.t, b, head, length, int(res[2])))
    for s in (ST_COUNTER_DOCUMENTS, ST_COUNTER_BYTES, ST_COUNTER_PRETOKENS):
        c.stats[s] += U64(stats[s])
    return ST_OK
