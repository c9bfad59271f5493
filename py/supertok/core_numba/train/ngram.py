"""Mirrors core_c/src/train/ngram.c: the n-gram split of supermerge candidates (Faster Superword
paper, Appendix B; the semantics are docs/design.md §8's, as its Algorithm 2 is garbled):
 - Apriori counting: for n = 1..max_len, every n-gram (n adjacent pretokens) of every candidate
   adds the candidate's count, unless n > 1 and one of its two (n-1)-grams is below c_min; after
   the pass the n-grams below c_min are dropped; a pass that keeps no n-gram ends the counting;
 - greedy split: each candidate is cut left to right, taking at each position the longest kept
   n-gram of 2 or more pretokens starting there (moving on by one pretoken when there is none);
   the pieces are the new candidates, with the original's count.
An n-gram is a slice of a candidate's key (its pretokens joined with 0xFF), which names it
uniquely, so it is hashed and compared as bytes. Kept n-grams are closed under prefixes (an
n-gram is counted only where its (n-1)-gram prefix was kept), so one number per position, the
longest kept n-gram starting there, holds everything the split needs.

Layout: the n-grams (struct ngrams) are parallel arrays g_off (uint64: the slice's offset in the
input counter's arena), g_len (uint64), g_hash (uint64), g_count (uint64), valid for [0, gn),
and g_slots (uint32, entry + 1, 0 empty). A pass runs in an inner kernel over fixed arrays and
returns, with its place saved, when a new n-gram needs the table to grow (pretoken_counter.py
says why); the outer kernel grows it as ng_get does and calls it again.
"""
import numpy as np
from numba import njit

from ..base.common import ST_OK, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, clear, fail
from ..base.hash import hash_bytes
from ..text.pretokenize import Pretokenizer
from .candidates import ST__CAND_SEP, cand_clone_params, cand_pieces
from .pretoken_counter import Counter, add_keys, ST_COUNTER_DOCUMENTS, ST_COUNTER_BYTES, ST_COUNTER_PRETOKENS

U64 = np.uint64
_NONE = np.uint32(0xFFFFFFFF)  # UINT32_MAX: no n-gram at a position this pass


@njit(cache=True, nogil=True)
def positions(arena, e_off, e_len, nc):
    """(first, start): candidate i's pretokens are positions first[i] .. first[i + 1], position q
    starting at start[q] in its key."""
    npos = 0
    for i in range(nc):
        npos += cand_pieces(arena, np.int64(e_off[i]), np.int64(e_len[i]))
    first = np.zeros(nc + 1, np.int64)
    start = np.zeros(max(npos, 1), np.uint32)
    q = 0
    for i in range(nc):
        o = np.int64(e_off[i])
        first[i] = q
        start[q] = 0
        q += 1
        for k in range(np.int64(e_len[i])):
            if arena[o + k] == ST__CAND_SEP:
                start[q] = k + 1
                q += 1
    first[nc] = q
    return first, start, npos


@njit(cache=True, nogil=True, _nrt=False)
def ng_find(g_off, g_len, g_hash, g_slots, arena, p, ln, h):
    """ng_get's search: (entry, slot) of the n-gram arena[p .. p + ln), or (-1, the empty slot)."""
    mask = np.int64(g_slots.size - 1)
    k = np.int64(h & U64(mask))
    while True:
        v = g_slots[k]
        if v == 0:
            return np.int64(-1), k
        x = np.int64(v) - 1
        if g_hash[x] == h and np.int64(g_len[x]) == ln:
            o = np.int64(g_off[x])
            same = True
            for q in range(ln):
                if arena[o + q] != arena[p + q]:
                    same = False
                    break
            if same:
                return x, k
        k = (k + 1) & mask


@njit(cache=True, nogil=True)
def count_pass(arena, e_off, e_len, e_count, nc, first, start, ent, longest, n, g_off, g_len, g_hash, g_count,
               g_slots, gs, pl):
    """Pass n of the Apriori counting from candidate pl[0], position pl[1] (pl[2]: whether an
    n-gram was counted): 0 at its end, 1 when a new n-gram needs room (its place saved)."""
    i = pl[0]
    k0 = pl[1]
    counted = pl[2]
    while i < nc:
        p = np.int64(e_off[i])
        ln = np.int64(e_len[i])
        c = e_count[i]
        f = first[i]
        L = first[i + 1] - f
        k = k0
        while k + n <= L:
            ent[f + k] = _NONE
            if n > 1 and (longest[f + k] < n - 1 or longest[f + k + 1] < n - 1):
                k += 1
                continue
            s0 = np.int64(start[f + k])
            end = np.int64(start[f + k + n]) - 1 if k + n < L else ln  # the separator before the next pretoken
            h = hash_bytes(arena, p + s0, end - s0)
            x, slot = ng_find(g_off, g_len, g_hash, g_slots, arena, p + s0, end - s0, h)
            if x < 0:
                gn = gs[0]
                if (gn + 1) * 2 > g_slots.size or gn == g_off.size:
                    pl[0], pl[1], pl[2] = i, k, counted
                    return 1
                g_off[gn] = p + s0
                g_len[gn] = end - s0
                g_hash[gn] = h
                g_count[gn] = 0
                g_slots[slot] = gn + 1
                gs[0] = gn + 1
                x = gn
            g_count[x] += c  # at most the candidates' total, which fits
            ent[f + k] = x
            counted = 1
            k += 1
        i += 1
        k0 = 0
    pl[0], pl[1], pl[2] = i, 0, counted
    return 0


@njit(cache=True, nogil=True)
def split_kernel(arena, e_off, e_len, e_count, nc, c_min, max_len):
    """The counting passes and the greedy split: the pieces (starts in arena, lengths, counts,
    their number) and the sum of their counts."""
    first, start, npos = positions(arena, e_off, e_len, nc)
    ent = np.zeros(max(npos, 1), np.uint32)
    longest = np.zeros(max(npos, 1), np.uint32)
    g_slots = np.zeros(1024, np.uint32)
    g_off = np.zeros(0, np.uint64)
    g_len = np.zeros(0, np.uint64)
    g_hash = np.zeros(0, np.uint64)
    g_count = np.zeros(0, np.uint64)
    gs = np.zeros(1, np.int64)
    pl = np.zeros(3, np.int64)
    for n in range(1, max_len + 1):  # Apriori passes
        pl[0], pl[1], pl[2] = 0, 0, 0
        while count_pass(arena, e_off, e_len, e_count, nc, first, start, ent, longest, n, g_off, g_len, g_hash,
                         g_count, g_slots, gs, pl):
            gn = gs[0]
            if (gn + 1) * 2 > g_slots.size:  # ng_rehash
                s = np.zeros(2 * g_slots.size, np.uint32)
                mask = s.size - 1
                for j in range(gn):
                    k = np.int64(g_hash[j] & U64(mask))
                    while s[k]:
                        k = (k + 1) & mask
                    s[k] = j + 1
                g_slots = s
            if gn == g_off.size:
                cap = 2 * g_off.size if g_off.size else 1024
                o2 = np.empty(cap, np.uint64)
                l2 = np.empty(cap, np.uint64)
                h2 = np.empty(cap, np.uint64)
                c2 = np.empty(cap, np.uint64)
                o2[:gn] = g_off[:gn]
                l2[:gn] = g_len[:gn]
                h2[:gn] = g_hash[:gn]
                c2[:gn] = g_count[:gn]
                g_off, g_len, g_hash, g_count = o2, l2, h2, c2
        if not pl[2]:
            break
        kept = False
        for i in range(nc):
            f = first[i]
            L = first[i + 1] - f
            for k in range(L - n + 1):
                x = ent[f + k]
                if x != _NONE and g_count[x] >= c_min:
                    longest[f + k] = n
                    kept = True
        if not kept:
            break
    # the greedy split
    starts = np.zeros(max(npos, 1), np.uint64)
    lens = np.zeros(max(npos, 1), np.uint32)
    counts = np.zeros(max(npos, 1), np.uint64)
    m = 0
    found = U64(0)
    for i in range(nc):
        p = np.int64(e_off[i])
        ln = np.int64(e_len[i])
        c = e_count[i]
        f = first[i]
        L = first[i + 1] - f
        k = 0
        while k < L:
            n = np.int64(longest[f + k])
            if n < 2:
                k += 1
                continue
            s0 = np.int64(start[f + k])
            end = np.int64(start[f + k + n]) - 1 if k + n < L else ln
            starts[m] = p + s0
            lens[m] = end - s0
            counts[m] = c
            m += 1
            found += c
            k += n
    return starts, lens, counts, m, found


def counter_split_ngrams(candidates, c_min, max_len, err):
    """st__counter_split_ngrams: (status, a new candidates counter with the same pre-tokenizer
    and fingerprint (same statistics DOCUMENTS and BYTES) that records the split: it takes no
    documents, is not split again, and merges or loads only candidates split with the same c_min
    and max_len; or None)."""
    clear(err)
    inp = candidates
    if inp is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "candidates or out is NULL"), None
    if inp.cand is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "a pretoken counter: the n-gram split takes a candidates counter"), None
    if inp.cand.ngram_max_len:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the candidates are split already"), None
    if c_min < 1 or max_len < 2 or max_len > 0xFFFFFFFF:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "c_min must be at least 1, max_len at least 2"), None
    pt = inp.pt
    o = Counter(Pretokenizer(pt.pattern, pt.flags, pt.single_letter_scripts.copy()))
    o.cand = cand_clone_params(inp.cand)
    o.cand.ngram_cmin = int(c_min)
    o.cand.ngram_max_len = int(max_len)
    t = inp.t
    starts, lens, counts, m, found = split_kernel(t.arena, t.e_off, t.e_len, t.e_count, inp.n, U64(c_min),
                                                  int(max_len))
    o.set_table(add_keys(o.t, t.arena, starts, lens, counts, int(m)))
    o.stats[ST_COUNTER_DOCUMENTS] = inp.stats[ST_COUNTER_DOCUMENTS]
    o.stats[ST_COUNTER_BYTES] = inp.stats[ST_COUNTER_BYTES]
    o.stats[ST_COUNTER_PRETOKENS] = found
    return ST_OK, o
