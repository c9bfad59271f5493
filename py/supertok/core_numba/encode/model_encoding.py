"""Mirrors core_c/src/encode/model_encoding.c: encodings from model files
(st_encoding_from_model, st_encoding_new_model): a parsed model's pre-tokenizer, tokens or rules,
and specials handed to the encoding constructors. What a model file holds and where each entry
stands in it is formats/model.py's.

The constructors are encode/encoding.py's: encoding_new_rules (C: st__encoding_new_rules,
the same arguments in the same order) and the exports st_encoding_new_tiktoken and
st_pretokenizer_new (text/pretokenize.py), looked up when called.
"""
import numpy as np

from .. import export, lookup
from ..base.common import Err, ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_MALFORMED_MODEL
from ..formats.model import (ST_MODEL_RULES, model_specials_ranks, model_encoding_error, st_model_parse,
                             st_model_scripts)

PAD = 16


def _padded(b):
    a = np.zeros(len(b) + PAD, np.uint8)
    if b:
        a[:len(b)] = np.frombuffer(b, np.uint8)
    return a


class _Cell:
    __slots__ = ("v",)

    def __init__(self, v=None):
        self.v = v


def _encoding_new_rules():
    from .encoding import encoding_new_rules  # the vocabulary helper's constructor (st__encoding_new_rules)
    return encoding_new_rules


def build_encoding(m, specials, alloc, out, ce):
    """build_encoding of model_encoding.c: the one call into the encoding constructors, with the
    model's pre-tokenizer; specials: the specials as tiktoken lines (bytes). On failure ce is the
    constructor's report."""
    n = _Cell(0)
    scripts = st_model_scripts(m, n)
    pt_cell = _Cell()
    st = lookup("st_pretokenizer_new")(m.pattern, m.flags, None if scripts is None else _padded(scripts),
                                       0 if scripts is None else n.v, alloc, pt_cell, ce)
    if st != ST_OK:
        return st
    pt = pt_cell.v
    sp = _padded(specials)
    if m.kind == ST_MODEL_RULES:
        st = _encoding_new_rules()(m.alphabet, m.merges.pairs, m.merges.n, m.supermerges.pairs, m.supermerges.n, sp,
                                   len(specials), pt, alloc, out, ce)
    else:
        ranks = m.src[m.tokens_off:m.tokens_off + m.tokens_len]
        st = lookup("st_encoding_new_tiktoken")(_padded(ranks), len(ranks), sp, len(specials), pt, alloc, out, ce)
    free = lookup("st_pretokenizer_free")
    if free is not None:
        free(pt)
    return st


def _copy(dst, src):
    for k in Err.__slots__:
        setattr(dst, k, getattr(src, k))


@export
def st_encoding_from_model(m, alloc, out, err):
    e = err if err is not None else Err()
    e.clear()
    if m is None or out is None:
        e.status = ST_ERR_INVALID_ARGUMENT
        return ST_ERR_INVALID_ARGUMENT
    out.v = None
    spec = model_specials_ranks(m)
    ce = Err()
    st = build_encoding(m, spec, alloc, out, ce)
    if st == ST_ERR_MALFORMED_MODEL:
        model_encoding_error(m, spec, ce, e)
    elif st != ST_OK:
        _copy(e, ce)  # out of memory, or the pre-tokenizer's own report
    return st


@export
def st_encoding_new_model(data, length, alloc, out, err):
    if out is not None:
        out.v = None
    mc = _Cell()
    st = st_model_parse(data, length, alloc, mc, err)
    if st != ST_OK:
        return st
    return st_encoding_from_model(mc.v, alloc, out, err)
