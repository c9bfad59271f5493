"""Mirrors core_c/src/encode/hf_encoding.c: encodings of HuggingFace BPE models
(st_encoding_new_tokenizer_json): the file read by formats/tokenizer_json.py, its tokens put in
the store every kind shares (ids as the file gives them), its merges in a rule table of their own
(a pair -> its rank, and the id it makes: Hf.rules, Hf.made), its added tokens as the store's
special strings with their flags (Hf.string_flags).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_MALFORMED_MODEL, ST_ERR_BUFFER_TOO_SMALL,
                           ST_UNIT_NONE, ST_UNIT_BYTE, clear, fail)
from ..base.hash import mix64
from ..formats import vocab as V
from ..formats.base64 import base64_encode, base64_encoded_len
from ..formats.tokenizer_json import (hf_model_parse, ST__HF_TOKEN, ST__HF_ADDED, ST__ADDED_SPECIAL,
                                      ST__ADDED_NORMALIZED)
from ..formats.hf_compact import hf_compact_is, hf_compact_read, hf_compact_write_k
from .encoding import encoding_start, encoding_finish, ST__KIND_HF, _pt_field

ST_ADDED_SPECIAL, ST_ADDED_NORMALIZED, ST_ADDED_ALWAYS = 1, 2, 4

# st__hf: rules (V.Rules: (left, right) -> the merge's rank), made (rank -> the id it makes),
# n_merges, flags (ST__HF_*), string_flags (per special string: ST__ADDED_*).
Hf = namedtuple("Hf", "rules made n_merges flags string_flags")

U64 = np.uint64


@njit(cache=True, nogil=True)
def decimal(x, out, w):
    n = 1
    y = x // 10
    while y:
        n += 1
        y //= 10
    for k in range(n - 1, -1, -1):
        out[w + k] = 48 + x % 10
        x //= 10
    return w + n


@njit(cache=True, nogil=True)
def tiktoken_lines(offsets, byts, id_kind, kind):
    """The ids of one kind as tiktoken lines ("base64 id\\n"): (the lines, padded, their length)."""
    n_ids = id_kind.shape[0]
    total = 0
    for tid in range(n_ids):
        if id_kind[tid] == kind:
            total += base64_encoded_len(np.int64(offsets[tid + 1]) - np.int64(offsets[tid])) + 12
    t = np.zeros(total + 16, np.uint8)
    w = 0
    for tid in range(n_ids):
        if id_kind[tid] != kind:
            continue
        a = np.int64(offsets[tid])
        n = np.int64(offsets[tid + 1]) - a
        base64_encode(byts, a, n, t, w)
        w += base64_encoded_len(n)
        t[w] = 32
        w += 1
        w = decimal(tid, t, w)
        t[w] = 10
        w += 1
    return t, w


@njit(cache=True, nogil=True)
def build_rules(merges, n_merges):
    """The merges' table: (slots, mask, made, -1 or the merge k whose pair repeats, the earlier)."""
    cap = 16
    while cap < 2 * n_merges:
        cap <<= 1
    slots = np.zeros(cap, np.uint64)
    made = np.zeros(max(n_merges, 1), np.uint32)
    mask = cap - 1
    for k in range(n_merges):
        l = U64(merges[3 * k])
        r = U64(merges[3 * k + 1])
        key = (l << U64(21)) | r
        x = np.int64(mix64(key) & U64(0xFFFFFFFF)) & mask
        while slots[x]:
            if (slots[x] >> U64(21)) == key:
                return slots, mask, made, k, np.int64(slots[x] & U64(V.ST_RULES_MAX_IDS))
            x = (x + 1) & mask
        slots[x] = (key << U64(21)) | U64(k)
        made[k] = merges[3 * k + 2]
    return slots, mask, made, -1, 0


def build_tables(enc, m, err):
    """build_tables: enc.hf (the merges' table and the flags of the special strings)."""
    v = enc.vocab
    slots, mask, made, k, earlier = build_rules(m.merges, m.n_merges)
    if k >= 0:
        # (a tokenizer.json's repeats are refused at their offset when read: only a compact image
        # gets here, whose merges have no offset of their own: the report is in bytes, as every
        # report of a malformed file, at 0)
        return fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, 0,
                    "model.merges[%d]: the pair repeats merge %d" % (int(k), int(earlier)))
    sflags = np.zeros(v.n_special + 1, np.uint8)
    by_id = {}
    for (tid, off, ln, flags) in m.added:
        by_id[tid] = flags  # the last added token of an id wins, as the C loop over them
    for k in range(v.n_special):
        f = by_id.get(int(v.special_ids[k]))
        if f is not None:
            sflags[k] = f
    enc.hf = Hf(V.Rules(slots, int(mask), 0), made, m.n_merges, m.flags, sflags)
    return ST_OK


class _Out:
    __slots__ = ("v",)

    def __init__(self):
        self.v = None


def encoding_from_hf(m, alloc, out, err):
    from ..text.pretokenize import st_pretokenizer_new
    cell = _Out()
    st = st_pretokenizer_new(m.pattern, 0, None, 0, alloc, cell, err)
    if st != ST_OK:
        return st
    enc = encoding_start(cell.v, ST__KIND_HF)
    ranks, ranks_len = tiktoken_lines(m.offsets, m.bytes, m.id_kind, ST__HF_TOKEN)
    specials, specials_len = tiktoken_lines(m.offsets, m.bytes, m.id_kind, ST__HF_ADDED)
    st, v = V.vocab_parse_tiktoken(ranks, int(ranks_len), specials, int(specials_len), err)
    # a file was checked, but a damaged compact image can still hold two tokens with one text: the
    # store's report names a line of text the caller never saw, so it is quoted after the field,
    # at offset 0
    if st == ST_ERR_MALFORMED_MODEL and err is not None:
        msg = bytes(err.message)
        err.fail(st, ST_UNIT_BYTE, 0, b"model.vocab: the tokens cannot be stored (" + msg + b")", line=0, input=0)
    if st != ST_OK:
        return st
    enc.vocab = v
    st = build_tables(enc, m, err)
    if st != ST_OK:
        return st
    out.v = encoding_finish(enc)
    return ST_OK


@export
def st_encoding_new_tokenizer_json(json, length, alloc, out, err):
    clear(err)
    if out is None or (json is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    out.v = None
    if json is None:
        json = np.zeros(16, np.uint8)
    if hf_compact_is(json, int(length)):
        st, m = hf_compact_read(json, int(length), err)
    else:
        st, m = hf_model_parse(json, int(length), err)
    if st != ST_OK:
        return st
    return encoding_from_hf(m, alloc, out, err)


@export
def st_encoding_added_flags(enc, tid):
    tid = int(tid)
    if enc is None or not V.vocab_is_special(enc.vocab, tid):
        return 0
    hf = getattr(enc, "hf", None)
    if enc.kind != ST__KIND_HF or hf is None:
        return ST_ADDED_SPECIAL
    v = enc.vocab
    k = 0
    while k < v.n_special and int(v.special_ids[k]) != tid:
        k += 1
    f = int(hf.string_flags[k])
    return (ST_ADDED_SPECIAL if f & ST__ADDED_SPECIAL else ST_ADDED_ALWAYS) | (
        ST_ADDED_NORMALIZED if f & ST__ADDED_NORMALIZED else 0)


@export
def st_encoding_pattern(enc):
    return _pt_field(enc.pt, "pattern") if enc is not None else 0


@njit(cache=True, nogil=True)
def model_of_k(offsets, bytes_len, n_ids, special_ids, n_special, slots, mask, made, n_merges, string_flags):
    """model_of's arrays: (id_kind, merges, the added tokens' ids, offs, lens, flags)."""
    id_kind = np.zeros(n_ids, np.uint8)
    for tid in range(n_ids):
        ok, a, ln = V.span_raw(offsets, bytes_len, n_ids, tid)
        id_kind[tid] = ST__HF_TOKEN if ok else 0
    a_id = np.zeros(max(n_special, 1), np.uint32)
    a_off = np.zeros(max(n_special, 1), np.uint32)
    a_len = np.zeros(max(n_special, 1), np.uint32)
    a_flags = np.zeros(max(n_special, 1), np.uint32)
    for k in range(n_special):
        tid = special_ids[k]
        id_kind[tid] = ST__HF_ADDED
        a_id[k] = tid
        a_off[k] = offsets[tid]
        a_len[k] = offsets[tid + 1] - offsets[tid]
        a_flags[k] = string_flags[k]
    merges = np.zeros(max(3 * n_merges, 1), np.uint32)
    for x in range(mask + 1):
        slot = slots[x]
        if not slot:
            continue
        rank = np.int64(slot & U64(V.ST_RULES_MAX_IDS))
        merges[3 * rank] = np.uint32(slot >> U64(42))
        merges[3 * rank + 1] = np.uint32((slot >> U64(21)) & U64(V.ST_RULES_MAX_IDS))
        merges[3 * rank + 2] = made[rank]
    return id_kind, merges, a_id, a_off, a_len, a_flags


def hf_save_compact(enc, out, cap, size, err):
    """st__hf_save_compact: the image of the model an HF encoding was made from (model_of: the
    store's tokens, the merges rebuilt from the rule table's slots)."""
    v, hf = enc.vocab, enc.hf
    n_ids, n_special, n_merges = int(v.n_ids), int(v.n_special), int(hf.n_merges)
    id_kind, merges, a_id, a_off, a_len, a_flags = model_of_k(
        v.offsets, np.int64(v.bytes_len), np.int64(n_ids), v.special_ids, np.int64(n_special), hf.rules.slots,
        np.int64(hf.rules.mask), hf.made, np.int64(n_merges), hf.string_flags)
    o, w = hf_compact_write_k(np.int64(n_ids), v.offsets, v.bytes, id_kind, np.int64(n_merges), merges,
                              np.int64(n_special), a_id, a_off, a_len, a_flags, v.bytes, np.int64(_pt_field(enc.pt, "pattern")),
                              np.int64(hf.flags))
    w = int(w)
    size.v = w
    if w > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    out[:w] = o[:w]
    return ST_OK
