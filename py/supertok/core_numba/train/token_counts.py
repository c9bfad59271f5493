"""Mirrors core_c/src/train/token_counts.c: how often each token of a model occurs in the text its
counts came from: every distinct pretoken of a counter encoded once (st_encode_piece: the piece's
merges, as st_encode merges a pretoken of text) and its ids counted as often as the pretoken
occurs. The UBE paper's vocabulary diagnostics (Appendix D.5.3: active utilization, dead merges)
read these counts of the training text; a sweep's models each get theirs from the one counter.

The pieces are encoded one call each, as in C (st_encode_piece is the encoder's own entry, so
its errors are the C's); their ids are added by a kernel.
"""
import numpy as np
from numba import njit

from .. import export
from ..base.common import ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, clear, fail
from ..encode.encoding import ST__KIND_RULES, st_encoding_n_vocab
from ..encode.pipeline import st_encode_piece


class _Cell:
    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


@njit(cache=True, nogil=True)
def add_ids(counts, ids, k, count):
    """counts[ids[j]] += count for j < k; False (nothing more added) when one would overflow."""
    for j in range(k):
        i = ids[j]
        if counts[i] + count < count:
            return False
        counts[i] += count
    return True


@export
def st_counter_token_counts(c, enc, counts, n, err):
    clear(err)
    if c is None or enc is None or (counts is None and n):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a NULL argument")
    if c.cand is not None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "a candidates counter holds runs of pretokens, not pretokens")
    if enc.kind == ST__KIND_RULES and enc.supers.n:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "a superword model's supermerges join pretokens: its token counts come from "
                    "encoding the text, not its pretoken counts")
    n_vocab = st_encoding_n_vocab(enc)
    if n < n_vocab:
        return fail(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0,
                    "counts holds %d ids, the encoding %d" % (n, n_vocab))
    t = c.t
    m = c.n
    longest = int(t.e_len[:m].max()) if m else 0
    # a piece of len bytes has at most len ids (a UBE piece: at most its symbols, at most len)
    ids = np.zeros(max(longest, 1), np.uint32)
    piece = np.zeros(longest + 16, np.uint8)  # a byte input: 16 zero bytes after it
    if n:
        counts[:n] = 0
    k = _Cell()
    for i in range(m):
        off, ln, cnt = int(t.e_off[i]), int(t.e_len[i]), t.e_count[i]
        piece[:ln] = t.arena[off:off + ln]
        piece[ln:ln + 16] = 0
        st = st_encode_piece(enc, piece, ln, ids, longest, k, err)
        if st != ST_OK:
            return st
        if not add_ids(counts, ids, int(k.v), cnt):
            return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a token count overflows 64 bits")
    return ST_OK
