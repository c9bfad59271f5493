"""Mirrors core_c/src/formats/hf_compact.c: the compact image of a HuggingFace BPE model
(docs/formats/tokenizer-json.md, "The compact form"): what st_encoding_save_compact writes of an
encoding made from a tokenizer.json, loaded without the JSON (st_encoding_new_tokenizer_json takes
either). Varints (LEB128) throughout; a token's bytes are stored only when no merge spells them,
since a merge's token is its parts' bytes joined. The reader trusts the image for nothing: every
count, id and length is checked against what is left and against the limits the JSON reader
applies, with the C core's messages and offsets.
"""
import numpy as np
from numba import njit

from ..base.common import ST_OK, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE
from ..text.pretokenize import (ST_PATTERN_GPT2, ST_PATTERN_CL100K, ST_PATTERN_O200K, ST_PATTERN_SUPERBPE,
                                ST_PATTERN_DEEPSEEK_V3)
from .tokenizer_json import (HfModel, ST__HF_TOKEN, ST__HF_ADDED, ST__HF_MAX_IDS, ST__HF_IGNORE_MERGES, ST__HF_NFC,
                             ST__HF_COMPACT_DERIVED_PER_BYTE,
                             ST__ADDED_SPECIAL, ST__ADDED_NORMALIZED, ST__ADDED_LSTRIP, ST__ADDED_RSTRIP)

MAGIC = b"sthfvc\x00\x01"  # the last byte: version 1
_MAGIC = np.frombuffer(MAGIC, np.uint8).copy()
_U64 = np.uint64
_ADDED_OK = ST__ADDED_SPECIAL | ST__ADDED_NORMALIZED | ST__ADDED_LSTRIP | ST__ADDED_RSTRIP
_FLAGS_OK = ST__HF_IGNORE_MERGES | ST__HF_NFC


def hf_compact_is(s, n):
    """st__hf_compact_is."""
    return n >= 8 and bytes(s[:8]) == MAGIC


# ---- writing ----

@njit(cache=True, nogil=True)
def _put_leb(o, w, x0):
    x = _U64(x0)
    while True:
        b = x & _U64(0x7F)
        x >>= _U64(7)
        if w >= o.shape[0]:
            o2 = np.zeros(2 * o.shape[0] + 16, np.uint8)
            o2[:w] = o[:w]
            o = o2
        o[w] = np.uint8(b | _U64(0x80)) if x else np.uint8(b)
        w += 1
        if not x:
            return o, w


@njit(cache=True, nogil=True)
def _put_bytes(o, w, p, a, n):
    if w + n > o.shape[0]:
        o2 = np.zeros(2 * (w + n) + 16, np.uint8)
        o2[:w] = o[:w]
        o = o2
    for k in range(n):
        o[w + k] = p[a + k]
    return o, w + n


@njit(cache=True, nogil=True)
def _derivable(n_ids, offsets, id_kind, merges, n_merges, known):
    for tid in range(n_ids):
        if id_kind[tid] == ST__HF_TOKEN and np.int64(offsets[tid + 1]) - np.int64(offsets[tid]) == 1:
            known[tid] = 1
    for k in range(n_merges):
        l, r, t = merges[3 * k], merges[3 * k + 1], merges[3 * k + 2]
        if not known[l]:
            known[l] = 2
        if not known[r]:
            known[r] = 2
        if not known[t]:
            known[t] = 1
    for tid in range(n_ids):
        if id_kind[tid] == ST__HF_TOKEN and not known[tid]:
            known[tid] = 2


@njit(cache=True, nogil=True)
def hf_compact_write_k(n_ids, offsets, byts, id_kind, n_merges, merges, n_added, a_id, a_off, a_len, a_flags, text,
                       pattern, flags):
    """st__hf_compact_write: (the image, padded, its size)."""
    o = np.zeros(64 + 4 * n_merges + 2 * n_ids, np.uint8)
    o, w = _put_bytes(o, 0, _MAGIC, 0, 8)
    o, w = _put_leb(o, w, pattern)
    o, w = _put_leb(o, w, flags)
    o, w = _put_leb(o, w, n_ids)
    o, w = _put_leb(o, w, n_merges)
    o, w = _put_leb(o, w, n_added)
    byte_id = np.zeros(256, np.uint32)
    for x in range(n_ids - 1, -1, -1):  # each byte's token (the first, if a file had two)
        if id_kind[x] == ST__HF_TOKEN and np.int64(offsets[x + 1]) - np.int64(offsets[x]) == 1:
            byte_id[byts[offsets[x]]] = x
    for b in range(256):
        o, w = _put_leb(o, w, byte_id[b])
    prev = np.int64(0)
    for k in range(n_merges):
        t = np.int64(merges[3 * k + 2])
        o, w = _put_leb(o, w, merges[3 * k])
        o, w = _put_leb(o, w, merges[3 * k + 1])
        d = t - prev  # zigzag: the made ids mostly climb by one
        o, w = _put_leb(o, w, (d << 1) if d >= 0 else ((-d) << 1) - 1)
        prev = t
    known = np.zeros(n_ids, np.uint8)
    _derivable(n_ids, offsets, id_kind, merges, n_merges, known)
    explicit_n = 0
    for tid in range(n_ids):
        explicit_n += known[tid] == 2
    o, w = _put_leb(o, w, explicit_n)
    for tid in range(n_ids):
        if known[tid] != 2:
            continue
        a = np.int64(offsets[tid])
        n = np.int64(offsets[tid + 1]) - a
        o, w = _put_leb(o, w, tid)
        o, w = _put_leb(o, w, n)
        o, w = _put_bytes(o, w, byts, a, n)
    for k in range(n_added):
        o, w = _put_leb(o, w, a_id[k])
        o, w = _put_leb(o, w, a_flags[k])
        o, w = _put_leb(o, w, a_len[k])
        o, w = _put_bytes(o, w, text, np.int64(a_off[k]), np.int64(a_len[k]))
    return o, w


# ---- reading ----

C_OK, C_HEADER, C_PATTERN, C_FLAGS, C_LIMITS, C_LARGER, C_BYTE, C_MERGES_CUT, C_MERGE_RANGE, C_CUT_TOKENS, C_TOKEN, \
    C_PART, C_LONG, C_ADDED, C_ADDED_ID, C_AFTER, C_4GB, C_COMPARED, C_JOINED = range(19)

MESSAGES = {
    C_HEADER: "the header is cut",
    C_PATTERN: "a pattern no tokenizer.json model has",
    C_FLAGS: "unknown flags",
    C_LIMITS: "counts beyond the limits",
    C_LARGER: "counts larger than the image",
    C_BYTE: "a byte's token is bad or repeated",
    C_MERGES_CUT: "the merges are cut",
    C_MERGE_RANGE: "a merge names an id out of range",
    C_CUT_TOKENS: "cut before the tokens",
    C_TOKEN: "a token is bad, repeated or cut",
    C_PART: "a merge's part has no bytes yet",
    C_LONG: f"the merges' tokens hold more bytes than an image of this size may ({ST__HF_COMPACT_DERIVED_PER_BYTE} a byte)",
    C_ADDED: "an added token is bad or cut",
    C_ADDED_ID: "an added token has the id of another token",
    C_AFTER: "bytes after the end",
    C_4GB: "the tokens hold 4 GB or more",
    C_COMPARED: "the merges' tokens hold more bytes than an image of this size may",
    C_JOINED: "a merge does not make its parts' bytes joined",
}

@njit(cache=True, nogil=True)
def _get_leb(s, n, pos):
    """get_leb: (ok, value, the position after what was read)."""
    v = _U64(0)
    for k in range(5):
        if pos >= n:
            return False, np.int64(0), pos
        c = _U64(s[pos])
        pos += 1
        v |= (c & _U64(0x7F)) << _U64(7 * k)
        if not (c & _U64(0x80)):
            if v > _U64(0xFFFFFFFF):
                return False, np.int64(0), pos
            return True, np.int64(v), pos
    return False, np.int64(0), pos


@njit(cache=True, nogil=True)
def _failed(code, at):
    z = np.int64(0)
    e8 = np.zeros(1, np.uint8)
    e32 = np.zeros(1, np.uint32)
    return (np.int64(code), np.int64(at), z, z, z, z, z, e32, e8, e8.copy(), e32.copy(), e32.copy(), e32.copy(),
            e32.copy(), e32.copy(), e8.copy())


@njit(cache=True, nogil=True)
def hf_compact_read_k(s, n):
    """st__hf_compact_read past the magic: (code, offset, pattern, flags, n_ids, n_merges, n_added,
    offsets, bytes, id_kind, merges, added ids, offs, lens, flags, text)."""
    pos = np.int64(8)
    ok, pattern, pos = _get_leb(s, n, pos)
    flags = n_ids = n_merges = n_added = np.int64(0)
    if ok:
        ok, flags, pos = _get_leb(s, n, pos)
    if ok:
        ok, n_ids, pos = _get_leb(s, n, pos)
    if ok:
        ok, n_merges, pos = _get_leb(s, n, pos)
    if ok:
        ok, n_added, pos = _get_leb(s, n, pos)
    if not ok:
        return _failed(C_HEADER, pos)
    if (pattern < ST_PATTERN_GPT2 or pattern > ST_PATTERN_DEEPSEEK_V3 or pattern == ST_PATTERN_SUPERBPE
            or pattern == ST_PATTERN_CL100K or pattern == ST_PATTERN_O200K):
        return _failed(C_PATTERN, 8)
    if flags & ~np.int64(_FLAGS_OK):
        return _failed(C_FLAGS, 8)
    if n_ids == 0 or n_ids > ST__HF_MAX_IDS or n_merges > ST__HF_MAX_IDS or n_added > n_ids:
        return _failed(C_LIMITS, 8)
    left = n - pos
    if n_merges * 3 > left or n_added * 4 > left or n_ids > 2 * (n_merges + n_added + 256) + 65536:
        return _failed(C_LARGER, pos)
    ln = np.zeros(n_ids, np.int64)
    kind = np.zeros(n_ids, np.uint8)
    merges = np.zeros(max(3 * n_merges, 1), np.uint32)
    a_id = np.zeros(max(n_added, 1), np.uint32)
    a_flags = np.zeros(max(n_added, 1), np.uint32)
    a_off = np.zeros(max(n_added, 1), np.uint32)
    a_len = np.zeros(max(n_added, 1), np.uint32)
    code = C_OK
    at = 0
    byte_id = np.zeros(256, np.int64)
    for b in range(256):
        ok, x, pos = _get_leb(s, n, pos)
        x = np.int64(x)
        if not ok or x >= n_ids or kind[x]:
            code, at = C_BYTE, pos
            break
        byte_id[b] = x
        kind[x] = ST__HF_TOKEN
        ln[x] = 1
    prev = np.int64(0)
    if code == C_OK:
        for k in range(n_merges):
            ok, l, pos = _get_leb(s, n, pos)
            rr = zz = np.int64(0)
            if ok:
                ok, rr, pos = _get_leb(s, n, pos)
            if ok:
                ok, zz, pos = _get_leb(s, n, pos)
            if not ok:
                code, at = C_MERGES_CUT, pos
                break
            l = np.int64(l)
            rr = np.int64(rr)
            zz = np.int64(zz)
            t = prev - ((zz + 1) >> 1) if zz & 1 else prev + (zz >> 1)
            if l >= n_ids or rr >= n_ids or t < 0 or t >= n_ids:
                code, at = C_MERGE_RANGE, pos
                break
            merges[3 * k] = l
            merges[3 * k + 1] = rr
            merges[3 * k + 2] = t
            prev = t
    n_explicit = np.int64(0)
    if code == C_OK:
        ok, ne, pos = _get_leb(s, n, pos)
        if not ok:
            code, at = C_CUT_TOKENS, pos
        n_explicit = ne
    explicit_at = pos
    if code == C_OK:
        for k in range(n_explicit):
            ok, tid, pos = _get_leb(s, n, pos)
            l = np.int64(0)
            if ok:
                ok, l, pos = _get_leb(s, n, pos)
            tid = np.int64(tid)
            l = np.int64(l)
            if not ok or tid >= n_ids or kind[tid] or not l or l > n - pos:
                code, at = C_TOKEN, pos
                break
            kind[tid] = ST__HF_TOKEN
            ln[tid] = l
            pos += l
    # the merges' tokens are not in the image: their bytes are bounded by its size (a merge takes 3
    # bytes or more, and 30 merges that each join the last token to itself would make a gigabyte)
    derived = np.int64(0)
    derived_max = np.int64(ST__HF_COMPACT_DERIVED_PER_BYTE) * np.int64(n) + 65536
    if code == C_OK:
        for k in range(n_merges):
            l, rr, t = merges[3 * k], merges[3 * k + 1], merges[3 * k + 2]
            if kind[l] != ST__HF_TOKEN or kind[rr] != ST__HF_TOKEN:
                code, at = C_PART, pos
                break
            if not kind[t]:
                kind[t] = ST__HF_TOKEN
                ln[t] = ln[l] + ln[rr]
                derived += ln[t]
                # C: the uint32 sum wrapped or past 2^31 - 1, or past the image's bound
                if ln[t] > 0x7FFFFFFF or derived > derived_max:
                    code, at = C_LONG, pos
                    break
    text_at = pos
    text_total = np.int64(0)
    if code == C_OK:
        for k in range(n_added):
            ok, tid, pos = _get_leb(s, n, pos)
            fl = l = np.int64(0)
            if ok:
                ok, fl, pos = _get_leb(s, n, pos)
            if ok:
                ok, l, pos = _get_leb(s, n, pos)
            tid = np.int64(tid)
            fl = np.int64(fl)
            l = np.int64(l)
            if not ok or tid >= n_ids or not l or l > n - pos or (fl & ~np.int64(_ADDED_OK)):
                code, at = C_ADDED, pos
                break
            if kind[tid]:
                code, at = C_ADDED_ID, pos
                break
            a_id[k] = tid
            a_flags[k] = fl
            a_off[k] = text_total
            a_len[k] = l
            text_total += l
            kind[tid] = ST__HF_ADDED
            ln[tid] = l
            pos += l
    if code == C_OK and pos != n:
        code, at = C_AFTER, pos
    if code == C_OK:
        total = np.int64(0)
        for tid in range(n_ids):
            total += ln[tid]
        if total > 0xFFFFFFF0:
            code, at = C_4GB, 8
    if code != C_OK:
        return _failed(code, at)
    # the model: the same arrays hf_model_parse makes
    offsets = np.zeros(n_ids + 1, np.uint32)
    for tid in range(n_ids):
        offsets[tid + 1] = offsets[tid] + ln[tid]
    total = np.int64(offsets[n_ids])
    byts = np.zeros(total + 8, np.uint8)
    text = np.zeros(text_total + 1, np.uint8)
    id_kind = kind.copy()
    for b in range(256):
        byts[offsets[byte_id[b]]] = b
    done = kind  # reused: 2 = bytes written
    for b in range(256):
        done[byte_id[b]] = 2
    pos = explicit_at
    for k in range(n_explicit):
        ok, tid, pos = _get_leb(s, n, pos)
        ok, l, pos = _get_leb(s, n, pos)
        tid = np.int64(tid)
        l = np.int64(l)
        a = np.int64(offsets[tid])
        for q in range(l):
            byts[a + q] = s[pos + q]
        done[tid] = 2
        pos += l
    # a merge whose token has bytes already (spelled out, a byte, an earlier merge's) must make
    # those bytes, as a tokenizer.json's merge makes the token its parts spell; the bytes compared
    # are bounded as the bytes derived are
    compared = np.int64(0)
    for k in range(n_merges):
        l, rr, t = merges[3 * k], merges[3 * k + 1], merges[3 * k + 2]
        if done[t] == 2:
            compared += ln[t]
            bad = ln[l] + ln[rr] != ln[t] or compared > derived_max
            if not bad:
                a = np.int64(offsets[t])
                al = np.int64(offsets[l])
                ar = np.int64(offsets[rr])
                for q in range(ln[l]):
                    if byts[a + q] != byts[al + q]:
                        bad = True
                        break
                if not bad:
                    for q in range(ln[rr]):
                        if byts[a + ln[l] + q] != byts[ar + q]:
                            bad = True
                            break
            if bad:
                return _failed(C_COMPARED if compared > derived_max else C_JOINED, 8)
            continue
        a = np.int64(offsets[t])
        al = np.int64(offsets[l])
        ar = np.int64(offsets[rr])
        for q in range(ln[l]):
            byts[a + q] = byts[al + q]
        for q in range(ln[rr]):
            byts[a + ln[l] + q] = byts[ar + q]
        done[t] = 2
    pos = text_at
    for k in range(n_added):
        ok, x, pos = _get_leb(s, n, pos)
        ok, x, pos = _get_leb(s, n, pos)
        ok, x, pos = _get_leb(s, n, pos)
        x = np.int64(x)
        a = np.int64(offsets[a_id[k]])
        o = np.int64(a_off[k])
        for q in range(x):
            text[o + q] = s[pos + q]
            byts[a + q] = s[pos + q]
        pos += x
    return (np.int64(C_OK), np.int64(0), pattern, flags, n_ids, n_merges, n_added, offsets, byts, id_kind, merges, a_id, a_off, a_len,
            a_flags, text)


def _bad(err, at, what):
    err.fail(ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, int(at), "compact image: " + what)
    return ST_ERR_MALFORMED_MODEL


def hf_compact_read(s, n, err):
    """st__hf_compact_read: (status, HfModel or None). s: the image's bytes (a uint8 array)."""
    n = int(n)
    if not hf_compact_is(s, n):
        return _bad(err, 0, "not a compact image of a tokenizer.json model (version 1)"), None
    (code, at, pattern, flags, n_ids, n_merges, n_added, offsets, byts, id_kind, merges, a_id, a_off, a_len, a_flags,
     text) = hf_compact_read_k(s, n)
    if code != C_OK:
        return _bad(err, at, MESSAGES[int(code)]), None
    n_added = int(n_added)
    added = [(int(a_id[k]), int(a_off[k]), int(a_len[k]), int(a_flags[k])) for k in range(n_added)]
    return ST_OK, HfModel(int(n_ids), offsets, byts, id_kind, int(n_merges), merges[:3 * int(n_merges)], n_added,
                          added, bytes(text[:-1]), int(pattern), int(flags))


def hf_compact_write(m):
    """st__hf_compact_write of an HfModel-like m whose added tokens are arrays (a_id, a_off, a_len,
    a_flags): the image's bytes (a uint8 array of its size)."""
    o, w = hf_compact_write_k(np.int64(m.n_ids), m.offsets, m.bytes, m.id_kind, np.int64(m.n_merges), m.merges,
                              np.int64(m.n_added), m.a_id, m.a_off, m.a_len, m.a_flags, m.text, np.int64(m.pattern),
                              np.int64(m.flags))
    return o[:int(w)]
