"""Encode and decode inside your own @njit code (the numba backend's kernels, called directly).

    import numpy as np, numba, supertok.numba as stn

    enc = stn.encoder("o200k_base")          # or stn.encoder(an Encoding made on the numba backend)

    @numba.njit
    def total_tokens(enc, texts_utf8):        # texts: a numba.typed.List of uint8 arrays
        n = 0
        for t in texts_utf8:
            n += stn.encode(enc, t).shape[0]
        return n

    total_tokens(enc, numba.typed.List([np.frombuffer("hello world".encode(), np.uint8)]))

Pass the Encoder to your jitted function as an argument: numba would freeze a global one into
the compiled code as constants (megabytes of tables), which it does not do safely.

encode(encoder, utf8) -> int32 array: the ids of the text, as Encoding.encode_ordinary gives
them (special tokens' text is ordinary text; a superword model's supermerges apply; a
tokenizer.json's added tokens not special are matched). utf8 is a
uint8 array of UTF-8; invalid UTF-8 raises ValueError. decode(encoder, ids) -> uint8 array: the
UTF-8 of the ids (UBE models: their text; a byte-level model's bytes, which may cut a character);
an id that is no token raises ValueError.

An Encoder is a tuple of arrays (numba passes it into jitted code by reference). It holds scratch
that encode reuses, so one Encoder serves one thread at a time: give each thread of a parallel
loop its own (encoder() again, or Encoder.copy()).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .core_numba.base.common import ST_OK
from .core_numba.encode import pipeline as _pl
from .core_numba.encode.pipeline import Call, encode_all
from .core_numba.encode.encoding import (BT_READY, BT_UNAVAILABLE, ST__KIND_RULES, ST__KIND_HF, decode_kernel,
                                         decode_text_kernel)
from .core_numba.encode.merge import new_pair_cache
from .core_numba.encode.piece_cache import no_pc
from .core_numba.encode.sink import O_CAP, O_N, SINK_FIELDS
from .core_numba.encode.special_policy import NO_POLICY, policy_resolve
from .core_numba.encode.superword_pass import RunWork
from .core_numba.formats.vocab import ST_ALPHABET_UBE
from .core_numba.text.utf8 import utf8_validate

__all__ = ["Encoder", "encoder", "encode", "decode"]

class Encoder(namedtuple("Encoder", "e w pairs pc pl ube")):
    """What encode and decode take: the encoding's tables (e), the scratch of a call (w), the
    pair cache (pairs), the piece cache (pc: none), the special-token policy (pl: none), and whether the model is UBE (ube)."""
    __slots__ = ()

    def copy(self):
        """An Encoder over the same tables with scratch of its own (for another thread)."""
        return Encoder(self.e, _pl.new_work()._replace(lz=self.w.lz.copy()), new_pair_cache(), self.pc, self.pl, self.ube)


def _numba_encoding(encoding):
    import supertok
    from . import backends
    if isinstance(encoding, str):
        b = backends.load("numba")
        prev = supertok._set_backend(b)
        try:
            encoding = supertok.get_encoding(encoding)
        finally:
            supertok._set_backend(prev)
    backend = getattr(encoding, "_backend", None)
    if backend is None or backend.name != "numba":
        raise ValueError("supertok.numba.encoder needs an encoding made on the numba backend (%s is on %s): pass "
                         "its name, or make it with SUPERTOK_BACKEND=numba"
                         % (getattr(encoding, "name", encoding), getattr(backend, "name", "no backend")))
    return encoding


def encoder(encoding):
    """The Encoder of encoding: an encoding name ("o200k_base"), or an Encoding (a model too)
    made on the numba backend. Builds the backtracking tables now (a rank vocabulary), so no
    call inside jitted code waits for them."""
    encoding = _numba_encoding(encoding)
    enc = encoding._handle.ptr
    if enc.kind != ST__KIND_RULES:
        from .core_numba.encode.encoding import backtrack_tables
        backtrack_tables(enc)
    w = _pl.new_work()
    w.lz[_pl.LZ_STATE] = BT_READY if enc.lazy.bt_state == BT_READY else BT_UNAVAILABLE
    e, _ = _pl._enc_of(enc, None)
    memo = _pl.new_memo() if e.bt is not None and enc.lazy.bt_state == BT_READY else e.memo
    e = e._replace(memo=memo)
    pl = NO_POLICY
    if enc.kind == ST__KIND_HF:  # a tokenizer.json's added tokens not special are matched, as encode_ordinary does
        _, pl = policy_resolve(enc.vocab, None, None, enc.hf.string_flags)
    return Encoder(e, w, new_pair_cache(), no_pc(), pl, enc.vocab.alphabet == ST_ALPHABET_UBE)


@njit(cache=True, nogil=True)
def _new_run(cap):
    cap = max(cap, 4)
    return RunWork(np.empty(cap, np.uint32), np.empty(cap, np.int64), np.zeros(1, np.int64),
                   np.empty(3 * cap + 1, np.uint64), np.empty(cap + 1, np.uint32), np.empty(cap + 1, np.uint32),
                   np.empty(cap + 1, np.uint32), np.empty(cap + 1, np.uint32), np.empty(cap, np.uint32),
                   np.empty(cap, np.uint32))


@njit(cache=True, nogil=True)
def _new_big(n):
    """pipeline.Big: the scratch of pieces past ST_STACK_PIECE bytes, sized by the text."""
    return _pl.Big(np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(3 * n + 1, np.uint64),
                   np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32),
                   np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32),
                   np.empty(n // 64 + 1, np.uint64))


@njit(cache=True, nogil=True)
def encode(encoder, utf8):
    """The ids of the UTF-8 text utf8 (a uint8 array), as Encoding.encode_ordinary."""
    n = utf8.shape[0]
    s = np.zeros(n + 16, np.uint8)
    s[:n] = utf8
    bad, _ = utf8_validate(s, n)
    if bad >= 0:
        raise ValueError("supertok.numba.encode: the text is not valid UTF-8")
    ids = np.empty(max(n, 1), np.uint32)
    o = np.zeros(SINK_FIELDS, np.int64)
    o[O_CAP] = n
    e = encoder.e
    run = _new_run(n + 1 if e.has_sup else 4)
    c = Call(encoder.w, encoder.pairs, encoder.pc, run, o, ids, np.zeros(0, np.uint64), new_report_jit(),
             _new_big(n if n > _pl.ST_STACK_PIECE else 1))
    st = encode_all(e, c, s, n, encoder.pl)
    if st != ST_OK:
        raise ValueError("supertok.numba.encode: a byte of the text has no token in this vocabulary")
    return ids[:o[O_N]].astype(np.int32)


@njit(cache=True, nogil=True)
def new_report_jit():
    r = np.zeros(8, np.int64)
    r[4] = 0xFFFFFFFF
    return r


@njit(cache=True, nogil=True)
def decode(encoder, ids):
    """The UTF-8 of the ids (an integer array) as a uint8 array."""
    v = encoder.e.v
    n = ids.shape[0]
    u = ids.astype(np.uint32)
    for k in range(n):
        if ids[k] < 0 or ids[k] >= v.n_ids:
            raise ValueError("supertok.numba.decode: an id is no token of this encoding")
    if encoder.ube:
        r = np.zeros(3, np.int64)
        total = decode_text_kernel(v, u, n, 0, np.zeros(0, np.uint8), 0, r)
        out = np.empty(total, np.uint8)
        r[:] = 0
        decode_text_kernel(v, u, n, 0, out, total, r)
        if r[0] != 0:
            raise ValueError("supertok.numba.decode: an id is no token of this encoding")
        return out
    total, bad = decode_kernel(v, u, n, np.zeros(0, np.uint8), 0)
    if bad >= 0:
        raise ValueError("supertok.numba.decode: an id is no token of this encoding")
    out = np.empty(total, np.uint8)
    decode_kernel(v, u, n, out, total)
    return out
