"""Mirrors core_c/src/encode/encoding.c and encoding.h: the encoding handle (struct
st_encoding), its constructors, accessors, token lookups and decoding.

Interface fixed for the other modules: an encoding handle is an Encoding (a Python object,
never passed to a kernel whole): kind (ST__KIND_RANKS 0 / ST__KIND_RULES 1 / ST__KIND_HF 2), vocab (Vocab),
rules (Rules), supers (Supers), hf (hf_encoding.Hf, ST__KIND_HF only), pt (Pretokenizer), lazy (Lazy: the backtracking tables, built on
first want, bt_state, bt_debt, the caches (piece_cache.py, span_cache.py) and their figures
cache_limit, cache_held, cache_hits, cache_misses, span_hits, span_misses, and the scratch arrays
calls reuse).

encoding_new_rules(alphabet, merges, n_merges, supers, n_super, specials, specials_len, pt, alloc,
out, err) is st__encoding_new_rules (model_encoding.py calls it); backtrack_tables(enc) is
st__backtrack_tables (pipeline.c's in C: here so st_encoding_prepare has it).
"""
import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_OUT_OF_MEMORY, ST_ERR_INVALID_TOKEN,
                           ST_ERR_BUFFER_TOO_SMALL, ST_ERR_MALFORMED_MODEL, ST_ERR_INVALID_UTF8, ST_UNIT_NONE,
                           ST_UNIT_BYTE, ST_UNIT_INDEX, clear, fail, quoted)
from ..formats import vocab as V
from ..formats.vocab import ST_ALPHABET_BYTES, ST_ALPHABET_UBE, ST_NO_TOKEN
from ..text.ube import STREAM_FIELDS, stream_feed
from .special_policy import special_order_build

ST__KIND_RANKS, ST__KIND_RULES, ST__KIND_HF = 0, 1, 2  # ST__KIND_HF: hf_encoding.py (enc.hf)
BT_NOT_BUILT, BT_BUILDING, BT_READY, BT_UNAVAILABLE = 0, 1, 2, 3
ST_CACHE_DEFAULT_BYTES = 24 << 20
ST_PRETOK_SCRIPT_AWARE = 1
ST_UBE_FINAL, ST_UBE_STRICT = 1, 2


class Lazy:
    """st__lazy: what a handle builds or keeps after it is made (calls take turns: no atomics)."""
    __slots__ = ("bt_state", "bt_failed", "bt", "bt_debt", "scratch", "cache_limit", "cache_held", "cache_hits",
                 "cache_misses", "span_hits", "span_misses", "extra")

    def __init__(self, cache_limit):
        self.bt_state, self.bt_failed, self.bt, self.bt_debt = BT_NOT_BUILT, 0, None, 0
        self.scratch = None
        self.cache_limit, self.cache_held, self.cache_hits, self.cache_misses = cache_limit, 0, 0, 0
        self.span_hits, self.span_misses = 0, 0
        self.extra = {}


class Encoding:
    __slots__ = ("kind", "vocab", "rules", "supers", "pt", "lazy", "hf", "__weakref__")

    def __init__(self, kind, vocab, rules, supers, pt, lazy):
        self.kind, self.vocab, self.rules, self.supers, self.pt, self.lazy = kind, vocab, rules, supers, pt, lazy
        self.hf = None  # ST__KIND_HF only: hf_encoding.Hf


no_rules, no_supers = V.no_rules, V.no_supers  # zeroed st_rules / st_supers


def _copy_pt(pt):
    """C copies the pre-tokenizer struct into the handle."""
    s = getattr(pt, "single_letter_scripts", None)
    if isinstance(s, np.ndarray) and hasattr(pt, "_replace"):
        return pt._replace(single_letter_scripts=s.copy())
    return pt


def encoding_start(pt, kind):
    """encoding_start: a handle with a copy of pt and its lazy state (tables unavailable)."""
    lazy = Lazy(ST_CACHE_DEFAULT_BYTES)
    lazy.bt_state = BT_UNAVAILABLE
    return Encoding(kind, None, no_rules(), no_supers(), _copy_pt(pt) if pt is not None else None, lazy)


def encoding_finish(enc):
    """st__encoding_finish on success: the handle with its special strings' order, handed out."""
    enc.vocab = special_order_build(enc.vocab)
    return enc


def _pt_field(pt, name):
    return int(getattr(pt, name, 0) or 0) if pt is not None else 0


@export
def st_encoding_new_tiktoken(ranks, ranks_len, specials, specials_len, pt, alloc, out, err):
    clear(err)
    if out is None or pt is None or (ranks is None and ranks_len) or (specials is None and specials_len):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "" if pt is not None else "no pre-tokenizer")
    out.v = None
    enc = encoding_start(pt, ST__KIND_RANKS)
    enc.lazy.bt_state = BT_NOT_BUILT
    if ranks is None:
        ranks = np.zeros(16, np.uint8)
    st, v = V.vocab_parse_tiktoken(ranks, int(ranks_len), specials, int(specials_len), err)
    if st != ST_OK:
        return st
    enc.vocab = v
    out.v = encoding_finish(enc)
    return ST_OK


@export
def st_encoding_new_compact(image, length, specials, specials_len, pt, alloc, out, err):
    clear(err)
    if out is None or pt is None or image is None or (specials is None and specials_len):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "" if pt is not None else "no pre-tokenizer")
    out.v = None
    enc = encoding_start(pt, ST__KIND_RANKS)
    enc.lazy.bt_state = BT_NOT_BUILT
    st, v = V.vocab_parse_compact(image, int(length), specials, int(specials_len), err)
    if st != ST_OK:
        return st
    enc.vocab = v
    out.v = encoding_finish(enc)
    return ST_OK


def encoding_new_rules(alphabet, merges, n_merges, supers, n_super, specials, specials_len, pt, alloc, out, err):
    """st__encoding_new_rules: a rule model's encoding, with supermerges when n_super > 0."""
    clear(err)
    if (out is None or pt is None or (merges is None and n_merges) or (supers is None and n_super)
            or (specials is None and specials_len)):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "" if pt is not None else "no pre-tokenizer")
    out.v = None
    enc = encoding_start(pt, ST__KIND_RULES)
    st, v, rules, sup = V.vocab_from_merges(alphabet, merges, n_merges, supers, n_super, specials, specials_len, err)
    if st != ST_OK:
        return st
    enc.vocab, enc.rules, enc.supers = v, rules, sup
    out.v = encoding_finish(enc)
    return ST_OK


@export
def st_encoding_new_merges(alphabet, merges, n_merges, specials, specials_len, pt, alloc, out, err):
    return encoding_new_rules(alphabet, merges, n_merges, None, 0, specials, specials_len, pt, alloc, out, err)


@export
def st_encoding_free(enc):
    """The arrays go with the last reference (a decoder made from the handle may hold one)."""
    if enc is not None:
        enc.lazy.bt = None
        enc.lazy.scratch = None


def backtrack_tables(enc):
    """st__backtrack_tables: the backtracking tables, building them if not yet tried; None if
    not (yet) available. The builder is encode/backtrack.py's backtrack_build(vocab)."""
    lz = enc.lazy
    if lz.bt_state == BT_READY:
        return lz.bt
    if lz.bt_state != BT_NOT_BUILT:
        return None
    try:
        from .backtrack import backtrack_build
    except ImportError:
        return None  # not ported yet: the merge loop gives the same ids
    lz.bt_state = BT_BUILDING
    try:
        got = backtrack_build(enc.vocab)
    except MemoryError:
        got = None
        lz.bt_failed = 1
    if type(got) is tuple:  # (status, tables)
        st, bt = got
    else:  # the tables (a Backtrack, ready 0 when the vocabulary does not suit them), None out of memory
        st, bt = (ST_OK if got is not None else ST_ERR_OUT_OF_MEMORY), got
    ready = st == ST_OK and bt is not None and bool(getattr(bt, "ready", True))
    lz.bt_failed = lz.bt_failed or st == ST_ERR_OUT_OF_MEMORY
    if ready:
        lz.bt = bt
    lz.bt_state = BT_READY if ready else BT_UNAVAILABLE
    return bt if ready else None


@export
def st_encoding_prepare(enc):
    if enc is None:
        return ST_ERR_INVALID_ARGUMENT
    lz = enc.lazy
    if lz.bt_state == BT_UNAVAILABLE:
        return ST_ERR_OUT_OF_MEMORY if lz.bt_failed else ST_ERR_INVALID_ARGUMENT
    if backtrack_tables(enc) is not None or lz.bt_state == BT_BUILDING:
        return ST_OK
    return ST_ERR_OUT_OF_MEMORY if lz.bt_failed else ST_ERR_INVALID_ARGUMENT


# ---- images ------------------------------------------------------------------------------------

@export
def st_encoding_save_image(enc, out, cap, size, err):
    clear(err)
    if enc is None or size is None or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    if enc.kind != ST__KIND_RANKS:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "images hold rank vocabularies only")
    if _pt_field(enc.pt, "flags") & ST_PRETOK_SCRIPT_AWARE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "an image keeps the pattern only, not a script-aware pre-tokenizer")
    size.v = V.vocab_image_size(enc.vocab)
    if size.v > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    V.vocab_image_write(enc.vocab, _pt_field(enc.pt, "pattern"), out)
    return ST_OK


@export
def st_encoding_save_compact(enc, out, cap, size, err):
    clear(err)
    if enc is None or size is None or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    if enc.kind == ST__KIND_HF:
        from .hf_encoding import hf_save_compact
        return hf_save_compact(enc, out, cap, size, err)
    if enc.kind != ST__KIND_RANKS or enc.vocab.alphabet != ST_ALPHABET_BYTES:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "compact images hold rank vocabularies only")
    size.v = V.vocab_compact_size(enc.vocab)
    if size.v > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    V.vocab_compact_write(enc.vocab, out)
    return ST_OK


def _pretokenizer_init(pattern):
    """st__pretokenizer_init(pattern, 0, "", 0): (status, Pretokenizer)."""
    from ..text import pretokenize as P
    init = getattr(P, "pretokenizer_init", None)
    if init is not None:
        got = init(pattern, 0, b"")
        return got[0], got[1]
    if not P.ST_PATTERN_GPT2 <= pattern <= P.ST_PATTERN_DEEPSEEK_V3:
        return 5, None  # ST_ERR_UNKNOWN_PATTERN
    return ST_OK, P.Pretokenizer(pattern, 0, np.zeros(8, np.uint32))


@export
def st_encoding_from_image(image, length, alloc, out, err):
    clear(err)
    if out is None or image is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    out.v = None
    enc = encoding_start(None, ST__KIND_RANKS)
    st, v, pattern = V.vocab_image_borrow(image, int(length), err)
    if st != ST_OK:
        return st
    pst, pt = _pretokenizer_init(pattern)
    if pst != ST_OK:
        return fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, 12, "image: unknown pattern")
    enc.vocab, enc.pt = v, pt
    out.v = encoding_finish(enc)
    return ST_OK


# ---- accessors ---------------------------------------------------------------------------------

@export
def st_encoding_alphabet(enc):
    return enc.vocab.alphabet if enc is not None else ST_ALPHABET_BYTES


@export
def st_encoding_n_vocab(enc):
    return enc.vocab.n_ids if enc is not None else 0


@export
def st_encoding_n_special(enc):
    return enc.vocab.n_special if enc is not None else 0


@export
def st_encoding_special_id(enc, i):
    return int(enc.vocab.special_ids[i]) if enc is not None and 0 <= i < enc.vocab.n_special else ST_NO_TOKEN


@export
def st_token_is_ordinary(enc, tid):
    return int(V.vocab_ordinary(enc.vocab, enc.kind == ST__KIND_RULES, int(tid))) if enc is not None else 0


@export
def st_encoding_n_special_strings(enc):
    return enc.vocab.n_special + enc.vocab.n_extra if enc is not None else 0


@export
def st_encoding_special_string(enc, k, tid, ptr, length, err):
    clear(err)
    ok = False
    if enc is not None and tid is not None and ptr is not None and length is not None:
        ok, sid, a, tl = V.vocab_special_string(enc.vocab, k)
    if not ok:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k, "no such special string")
    tid.v = sid
    ptr.v = enc.vocab.bytes[a:a + tl]
    length.v = tl
    return ST_OK


def invalid_token(err, tid, unit, k):
    """invalid_token: ST_ERR_INVALID_TOKEN for the id at index k of the caller's input."""
    return fail(err, ST_ERR_INVALID_TOKEN, unit, k, "id %d is no token" % tid, token=tid)


@export
def st_token_bytes(enc, tid, ptr, length, err):
    tid = int(tid)  # a uint32_t in C: a bool or a numpy integer arrives as its value
    clear(err)
    if enc is None or ptr is None or length is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    v = enc.vocab
    ok, a, tl = V.vocab_span(v, tid)
    if not ok:
        return invalid_token(err, tid, ST_UNIT_NONE, 0)
    ptr.v = v.bytes[a:a + tl]
    length.v = tl
    return ST_OK


@njit(cache=True, nogil=True)
def token_id_kernel(v, p, n):
    """st_token_id's search: the ordinary token first, then every special string."""
    found = V.vocab_lookup(v, p, 0, n) if n else np.int64(ST_NO_TOKEN)
    k = 0
    while found == ST_NO_TOKEN and k < v.n_special + v.n_extra:
        ok, sid, a, tl = V.vocab_special_string(v, k)
        if ok and tl == n:
            same = True
            for j in range(n):
                if v.bytes[a + j] != p[j]:
                    same = False
                    break
            if same:
                found = sid
        k += 1
    return found


@export
def st_token_id(enc, data, length, tid, err):
    clear(err)
    if enc is None or tid is None or (data is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    tid.v = ST_NO_TOKEN
    if data is None:
        data = np.zeros(16, np.uint8)
    found = token_id_kernel(enc.vocab, data, length)
    if found == ST_NO_TOKEN:
        return fail(err, ST_ERR_INVALID_TOKEN, ST_UNIT_NONE, 0,
                    "no token has the bytes " + quoted(data[:min(length, 48)]))
    tid.v = int(found)
    return ST_OK


@export
def st_token_symbols(enc, tid, out, cap, n, err):
    tid = int(tid)
    clear(err)
    if enc is None or n is None or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    v = enc.vocab
    n.v = 0
    ok, a, ln = V.vocab_span(v, tid)
    if not ok or V.vocab_is_special(v, tid):
        return invalid_token(err, tid, ST_UNIT_NONE, 0)
    ube = v.alphabet == ST_ALPHABET_UBE
    count = ln // 2 if ube else ln
    m = min(count, cap)
    if m:
        if ube:
            out[:m] = v.bytes[a:a + 2 * m].view(np.uint16) if a % 2 == 0 else \
                v.bytes[a:a + 2 * m:2].astype(np.uint16) | (v.bytes[a + 1:a + 2 * m:2].astype(np.uint16) << 8)
        else:
            out[:m] = v.bytes[a:a + m]
    n.v = count
    if count > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK


# ---- decoding ----------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def decode_kernel(v, ids, n, out, cap):
    """st_decode's loop: (total, bad index or -1)."""
    total = 0
    for k in range(n):
        ok, a, tl = V.vocab_span(v, np.int64(ids[k]))
        if not ok:
            return total, k
        if total + tl <= cap:
            out[total:total + tl] = v.bytes[a:a + tl]
        total += tl
    return total, -1


_EMPTY_U8 = np.zeros(0, np.uint8)
_EMPTY_U32 = np.zeros(0, np.uint32)


@export
def st_decode(enc, ids, n, out, cap, out_len, err):
    clear(err)
    if enc is None or out_len is None or (ids is None and n) or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    v = enc.vocab
    if v.alphabet == ST_ALPHABET_UBE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "a UBE model's tokens are symbols: use st_decode_text")
    out_len.v = 0
    total, bad = decode_kernel(v, ids if ids is not None else _EMPTY_U32, n, out if out is not None else _EMPTY_U8,
                               cap)
    if bad >= 0:
        return invalid_token(err, int(ids[bad]), ST_UNIT_INDEX, bad)
    out_len.v = total
    if total > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK


@njit(cache=True, nogil=True)
def _put(out, cap, total, data, a, n):
    if total < cap:
        m = n if n <= cap - total else cap - total
        out[total:total + m] = data[a:a + m]
    return total + n

@njit(cache=True, nogil=True)
def decode_text_kernel(v, ids, n, strict, out, cap, r):
    """st_decode_text's loop over the stream decoder (text/ube.py's stream_feed on an unpacked
    state): (total); r = [0 ok / 1 invalid id at r[1] / 2 stream failure: status r[1], its r[2]]."""
    s = np.zeros(STREAM_FIELDS, np.int64)
    sym = np.zeros(160, np.uint16)
    buf = np.zeros(3 * 160 + 3, np.uint8)
    rr = np.zeros(2, np.int64)
    ube = v.alphabet == ST_ALPHABET_UBE
    total = 0
    for k in range(n):
        tid = np.int64(ids[k])
        ok, a, ln = V.vocab_span(v, tid)
        if not ok:
            r[0] = 1
            r[1] = k
            return total
        if V.vocab_is_special(v, tid):
            st = stream_feed(s, sym, 0, ST_UBE_FINAL | strict, buf, buf.shape[0], rr)
            if st != ST_OK:
                r[0], r[1], r[2] = 2, st, rr[0]
                return total
            total = _put(out, cap, total, buf, 0, rr[0])
            total = _put(out, cap, total, v.bytes, a, ln)
            continue
        count = ln // 2 if ube else ln
        done = 0
        while done < count:
            c = count - done if count - done < 160 else 160
            for j in range(c):
                if ube:
                    at = a + 2 * (done + j)
                    sym[j] = np.uint16(v.bytes[at]) | (np.uint16(v.bytes[at + 1]) << np.uint16(8))
                else:
                    sym[j] = v.bytes[a + done + j]
            st = stream_feed(s, sym, c, strict, buf, buf.shape[0], rr)
            if st != ST_OK:
                r[0], r[1], r[2] = 2, st, rr[0]
                return total
            total = _put(out, cap, total, buf, 0, rr[0])
            done += c
    st = stream_feed(s, sym, 0, ST_UBE_FINAL | strict, buf, buf.shape[0], rr)
    if st != ST_OK:
        r[0], r[1], r[2] = 2, st, rr[0]
        return total
    total = _put(out, cap, total, buf, 0, rr[0])
    r[0] = 0
    return total


def _id_of_symbol(v, ids, n, sym):
    """id_of_symbol: the index of the id whose symbols hold symbol number sym."""
    seen = 0
    for k in range(n):
        tid = int(ids[k])
        ok, a, ln = V.vocab_span(v, tid)
        if not ok or V.vocab_is_special(v, tid):
            continue
        seen += ln // 2 if v.alphabet == ST_ALPHABET_UBE else ln
        if sym < seen:
            return k
    return n


@export
def st_decode_text(enc, ids, n, flags, out, cap, out_len, err):
    clear(err)
    if enc is None or out_len is None or (ids is None and n) or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    v = enc.vocab
    out_len.v = 0
    r = np.zeros(3, np.int64)
    ids = ids if ids is not None else _EMPTY_U32
    total = decode_text_kernel(v, ids, n, flags & ST_UBE_STRICT, out if out is not None else _EMPTY_U8, cap, r)
    if r[0] == 1:
        k = int(r[1])
        return invalid_token(err, int(ids[k]), ST_UNIT_INDEX, k)
    if r[0] == 2:
        st, at = int(r[1]), int(r[2])
        if st == ST_ERR_INVALID_UTF8:
            return fail(err, st, ST_UNIT_INDEX, _id_of_symbol(v, ids, n, at),
                        "malformed text (strict): the run starts in this id")
        if st == ST_ERR_INVALID_TOKEN:
            return fail(err, st, ST_UNIT_INDEX, at, "a symbol above 511")
        return fail(err, st)
    out_len.v = int(total)
    if total > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK
