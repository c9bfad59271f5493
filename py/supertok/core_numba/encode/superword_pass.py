"""Mirrors core_c/src/encode/superword_pass.c and superword_pass.h: the superword pass, a run of
adjacent pretokens, each one eligible token, merged by a superword model's supermerges, lowest
supermerge first (the leftmost of equal ones).

A run is two arrays made once a call with room for every piece of the text (a piece is at least
a byte, so the run never grows: C's doubling allocation has nothing to do here): run_tok
(uint32) and run_at (int64), and its length in rs[0] (int64[1]). The merge of a run of three or
more takes merge.c's heap merge with the supermerges as its rules (C takes a linear scan of
keys up to ST_RUN_LINEAR entries: the same merges in the same order, lowest key = lowest
supermerge, then leftmost); its scratch is the RunWork arrays, sized for the longest run.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .merge import merge_heap, MODE_SUPERS, NO_MADE
from .sink import put
from ..formats.vocab import supers_find

RunWork = namedtuple("RunWork", "tok at rs heap nxt prv rank tk out start")

_NO = np.uint32(0xFFFFFFFF)


def new_run(cap):
    """A run with room for cap entries (cap: the pieces a text can have, len + 1)."""
    cap = max(cap, 4)
    return RunWork(np.empty(cap, np.uint32), np.empty(cap, np.int64), np.zeros(1, np.int64),
                   np.empty(3 * cap + 1, np.uint64), np.empty(cap + 1, np.uint32), np.empty(cap + 1, np.uint32),
                   np.empty(cap + 1, np.uint32), np.empty(cap + 1, np.uint32), np.empty(cap, np.uint32),
                   np.empty(cap, np.uint32))


NO_RUN = new_run(4)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def eligible(sup, t):
    return (sup.eligible[t >> 6] >> np.uint64(t & 63)) & np.uint64(1)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def run_put(r, t, a):
    n = r.rs[0]
    r.tok[n] = t
    r.at[n] = a
    r.rs[0] = n + 1


@njit(cache=True, nogil=True, _nrt=False)
def run_flush(r, v, rules, sup, pairs, o, ids, starts, s):
    """st__run_flush: merge the run by supermerges, put its tokens out; the run is then empty."""
    n = r.rs[0]
    r.rs[0] = 0
    tok = r.tok
    at = r.at
    if n <= 2:
        x = np.uint32(supers_find(sup, tok[0], tok[1])) if n == 2 else _NO
        if x != _NO:
            put(o, ids, starts, s, x, at[0])
        else:
            for k in range(n):
                put(o, ids, starts, s, tok[k], at[k])
        return
    m = merge_heap(MODE_SUPERS, v, rules, sup, pairs, s, 0, tok, n, r.out, r.start, r.heap, r.nxt, r.prv, r.rank,
                   r.tk, NO_MADE)
    for k in range(m):
        put(o, ids, starts, s, r.out[k], at[r.start[k]])


@njit(cache=True, nogil=True, _nrt=False)
def piece_to_run(r, v, rules, sup, pairs, o, ids, starts, s, tok, t0, m, a):
    """A superword model's piece of m tokens (tok[t0 .. t0 + m)) at text offset a: one eligible
    token joins the run (True: the caller puts nothing); anything else ends the run, put out now
    (False)."""
    if m == 1 and eligible(sup, tok[t0]):
        run_put(r, tok[t0], a)
        return True
    if r.rs[0]:
        run_flush(r, v, rules, sup, pairs, o, ids, starts, s)
    return False
