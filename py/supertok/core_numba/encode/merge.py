"""Mirrors core_c/src/encode/merge.c and merge.h: the two byte-pair merge loops.

  - merge_short: tiktoken's loop, for pieces up to ST_LINEAR_PIECE bytes, the rank of every
    adjacent pair kept and only the two pairs touching a merge looked up again (merge_short_syms:
    the same loop over a rule model's symbols);
  - merge_heap: the same merges in the same order from a binary heap keyed by (rank, start), so a
    megabyte of one letter costs O(n log n).
Both pick the lowest rank and, among equal ranks, the leftmost pair (tiktoken's order).

A piece is the bytes p[a .. a + n) of a padded uint8 array (the text: ST_PAD readable bytes past
any key, as the C copy gives). What "the rank of a pair" is depends on the mode (the C merger's
fields): MODE_RANKS (a rank vocabulary: the id of the joined bytes, through the pair cache
`pairs` when it has entries), MODE_RULES (st__rule_find, through the pair cache too: rule_rank), MODE_SUPERS (st__supers_find), MODE_HF
(a HuggingFace model's rules, st__rule_find: the rule of rank r makes id made[r], the merger's
`made`; in the other modes rule r makes id r and made is unused).
The pair cache is a flat uint32 array of 4 * 2**ST_PAIR_CACHE_BITS (left, right, rank, unused),
empty (length 0) when the call has none.
"""
import numpy as np
from numba import njit

from ..formats.vocab import vocab_lookup_short, vocab_lookup, rule_find, supers_find

ST_NO_TOKEN = 0xFFFFFFFF
ST_LINEAR_PIECE = 24  # merge.h: the measurements there
ST_PAD = 8
ST_PAIR_CACHE_BITS = 14
PAIR_CACHE_SLOTS = 1 << ST_PAIR_CACHE_BITS
ST_MERGE_MAX_PARTS = 0x7FFFFFF0
MODE_RANKS, MODE_RULES, MODE_SUPERS, MODE_HF = 0, 1, 2, 3
NO_MADE = np.zeros(1, np.uint32)  # the merger's made when NULL

_NO = np.uint32(ST_NO_TOKEN)
_FIB = np.uint64(0x9E3779B97F4A7C15)
_SH = np.uint64(64 - ST_PAIR_CACHE_BITS)
_U32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


def new_pair_cache():
    """An empty pair cache (every field 0xFFFFFFFF)."""
    return np.full(4 * PAIR_CACHE_SLOTS, ST_NO_TOKEN, np.uint32)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def rank_of(v, p, a, n):
    """The id of the token p[a .. a + n), ST_NO_TOKEN if none."""
    if n <= 8:
        return np.uint32(vocab_lookup_short(v, p, a, n))
    return np.uint32(vocab_lookup(v, p, a, n))


@njit(cache=True, nogil=True, _nrt=False)
def join_rank(v, pairs, left, right, p, a, n):
    if pairs.shape[0] == 0:
        return rank_of(v, p, a, n)
    k = ((np.uint64(left) << _U32) | np.uint64(right)) * _FIB
    s = np.int64(k >> _SH) * 4
    if pairs[s] == left and pairs[s + 1] == right:
        return pairs[s + 2]
    r = rank_of(v, p, a, n)
    pairs[s] = left
    pairs[s + 1] = right
    pairs[s + 2] = r
    return r


@njit(cache=True, nogil=True, _nrt=False)
def rule_rank(rules, pairs, left, right):
    """A rule's rank, through the pair cache when the call has one (a HuggingFace model's rule
    table is megabytes: Llama 3's 280,147 merges take 4 MiB of slots, and the same pairs recur all
    through a text)."""
    if pairs.shape[0] == 0:
        return np.uint32(rule_find(rules, left, right))
    k = ((np.uint64(left) << _U32) | np.uint64(right)) * _FIB
    s = np.int64(k >> _SH) * 4
    if pairs[s] == left and pairs[s + 1] == right:
        return pairs[s + 2]
    r = np.uint32(rule_find(rules, left, right))
    pairs[s] = left
    pairs[s + 1] = right
    pairs[s + 2] = r
    return r


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def merge_pair_rank(mode, v, rules, sup, pairs, left, right, p, a, b):
    """st__merge_pair_rank: the parts [a, at) and [at, b) of p (offsets from p's index 0)."""
    if mode == MODE_SUPERS:
        return np.uint32(supers_find(sup, left, right))
    if mode == MODE_RULES or mode == MODE_HF:
        return rule_rank(rules, pairs, left, right)
    return join_rank(v, pairs, left, right, p, a, b - a)


@njit(cache=True, nogil=True, _nrt=False)
def merge_linear(mode, v, rules, sup, pairs, p, a, n, tok, start, rank, made):
    """C: merge_linear: the linear loop over n parts, tok, start (byte offsets from a in p for
    MODE_RANKS, symbol indexes otherwise) and rank (of each adjacent pair) set; the lowest rank,
    leftmost of equal ones, joined until none is left. Returns the parts left."""
    m = n
    while True:
        best = _NO
        at = 0
        for k in range(m - 1):
            if rank[k] < best:
                best = rank[k]
                at = k
        if best == _NO:
            break
        tok[at] = made[best] if mode == MODE_HF else best
        for k in range(at + 1, m - 1):
            start[k] = start[k + 1]
            tok[k] = tok[k + 1]
        for k in range(at + 1, m - 2):
            rank[k] = rank[k + 1]
        m -= 1
        # the joined pairs' bytes end where the part after them starts, or at the piece's end
        if at + 1 < m:
            end = np.int64(start[at + 2]) if at + 2 < m else np.int64(n)
            rank[at] = merge_pair_rank(mode, v, rules, sup, pairs, tok[at], tok[at + 1], p, a + np.int64(start[at]),
                                       a + end)
        if at > 0:
            end = np.int64(start[at + 1]) if at + 1 < m else np.int64(n)
            rank[at - 1] = merge_pair_rank(mode, v, rules, sup, pairs, tok[at - 1], tok[at], p,
                                           a + np.int64(start[at - 1]), a + end)
    return m


@njit(cache=True, nogil=True, _nrt=False)
def merge_short(v, rules, sup, pairs, p, a, n, tok, start, rank):
    """tiktoken's merge of p[a .. a + n) (n <= ST_LINEAR_PIECE; rank vocabularies; rules and sup
    unused but for the types, as merge_heap's). Writes the
    final parts' tokens to tok and their starts (relative to a) to start (n entries each);
    rank: scratch of ST_LINEAR_PIECE entries. Returns the number of parts."""
    byte_ids = v.byte_ids
    pair_ids = v.pair_ids
    for k in range(n):
        start[k] = k
        tok[k] = byte_ids[p[a + k]]
        if k + 1 < n:
            rank[k] = pair_ids[(np.int64(p[a + k]) << 8) | np.int64(p[a + k + 1])]
        else:
            rank[k] = _NO
    return merge_linear(MODE_RANKS, v, rules, sup, pairs, p, a, n, tok, start, rank, NO_MADE)


@njit(cache=True, nogil=True, _nrt=False)
def merge_short_syms(mode, v, rules, sup, pairs, p, sym, n, tok, start, rank, made):
    """The merge of a rule model's n base symbols sym[0 .. n) (n <= ST_LINEAR_PIECE; MODE_RULES or
    MODE_HF; p: the text, unused but for the type) as merge_short's loop: writes the final
    parts' tokens and symbol starts to tok and start (n entries each; sym is not written) and
    returns their number. rank: scratch of ST_LINEAR_PIECE entries; made: MODE_HF's rank -> id
    (NO_MADE otherwise). The same merges, in the same order, as merge_heap."""
    for k in range(n):
        start[k] = k
        tok[k] = sym[k]
    for k in range(n - 1):
        rank[k] = merge_pair_rank(mode, v, rules, sup, pairs, tok[k], tok[k + 1], p, 0, 0)
    return merge_linear(mode, v, rules, sup, pairs, p, 0, n, tok, start, rank, made)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def heap_push(h, hl, key):
    i = hl
    while i > 0:
        parent = (i - 1) // 2
        if h[parent] <= key:
            break
        h[i] = h[parent]
        i = parent
    h[i] = key
    return hl + 1


@njit(cache=True, nogil=True, _nrt=False)
def sift_down(h, n, i, key):
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and h[c + 1] < h[c]:
            c += 1
        if key <= h[c]:
            break
        h[i] = h[c]
        i = c
    h[i] = key


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def heap_pop(h, hl):
    hl -= 1
    last = h[hl]
    if hl:
        sift_down(h, hl, 0, last)
    return hl


@njit(cache=True, nogil=True)
def heap_scratch(n):
    return (np.empty(3 * n + 1, np.uint64), np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32),
            np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32))


@njit(cache=True, nogil=True, _nrt=False)
def merge_heap(mode, v, rules, sup, pairs, p, a, sym, n, tok_out, start_out, heap, nxt, prv, rank, tk, made):
    """The heap merge of n parts: for MODE_RANKS the bytes p[a .. a + n) (sym unused), else the
    symbols sym[0 .. n) (p unused); starts are then symbol indexes (else offsets from a). Writes
    the final parts' tokens and starts and returns their number. heap: 3n + 1 entries; nxt,
    prv, rank, tk: n + 1. made: MODE_HF's rank -> id (NO_MADE otherwise)."""
    byte_ids = v.byte_ids
    END = np.uint32(n)
    DEAD = np.uint32(0xFFFFFFFE)
    hl = 0
    for i in range(n):
        nxt[i] = i + 1
        prv[i] = i - 1 if i else END
        tk[i] = sym[i] if mode != MODE_RANKS else byte_ids[p[a + i]]
    for i in range(n):
        if i + 1 == n:
            rank[i] = _NO
        elif mode != MODE_RANKS:
            rank[i] = merge_pair_rank(mode, v, rules, sup, pairs, tk[i], tk[i + 1], p, 0, 0)
        else:
            rank[i] = v.pair_ids[(np.int64(p[a + i]) << 8) | np.int64(p[a + i + 1])]
        if rank[i] != _NO:
            heap[hl] = (np.uint64(rank[i]) << _U32) | np.uint64(i)
            hl += 1
    k = hl // 2
    while k > 0:
        k -= 1
        sift_down(heap, hl, k, heap[k])
    while hl:
        key = heap[0]
        i = np.int64(key & _LOW32)
        r = np.uint32(key >> _U32)
        if prv[i] == DEAD or rank[i] != r:
            hl = heap_pop(heap, hl)
            continue
        j = np.int64(nxt[i])
        after = nxt[j]
        t = made[r] if mode == MODE_HF else r  # the token the merge makes
        tk[i] = t
        nxt[i] = after
        if after != END:
            prv[after] = i
        prv[j] = DEAD
        if after != END:
            rank[i] = merge_pair_rank(mode, v, rules, sup, pairs, t, tk[after], p, a + i, a + np.int64(nxt[after]))
        else:
            rank[i] = _NO
        if rank[i] != _NO:
            sift_down(heap, hl, 0, (np.uint64(rank[i]) << _U32) | np.uint64(i))
        else:
            hl = heap_pop(heap, hl)
        if i > 0:
            q = np.int64(prv[i])
            rank[q] = merge_pair_rank(mode, v, rules, sup, pairs, tk[q], t, p, a + q, a + np.int64(after))
            if rank[q] != _NO:
                hl = heap_push(heap, hl, (np.uint64(rank[q]) << _U32) | np.uint64(q))
    m = 0
    i = 0
    while i != n:
        tok_out[m] = tk[i]
        start_out[m] = i
        m += 1
        i = np.int64(nxt[i])
    return m
