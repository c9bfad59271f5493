"""Mirrors core_c/src/formats/vocab.c and vocab.h: the token store (st_vocab), merge rules
(st_rules) and supermerges (st_supers), rank files, images and compact images.

Interface fixed for the other modules (fields as the C structs; every array field is an array,
empty where C has NULL; ints are Python ints):
  Vocab(n_ids, n_ordinary, n_special, table_mask, bytes_len, offsets uint32[n_ids + 1],
        bytes uint8[bytes_len + 16], table uint64[table_mask + 1], special_ids uint32[n_special],
        n_extra, extra uint32[3 * n_extra], byte_ids uint32[256], pair_ids uint32[65536] or [0],
        alphabet, special_order uint32[3 * n] (k, start, len), special_first_bytes)
  Rules(slots uint64[mask + 1] (or [0] for none), mask, base)
  Supers(rules: Rules, n, shift, eligible uint64[], parts uint64[], filter uint64[])
Kernels (njit): vocab_span, vocab_special_string, vocab_probe, vocab_lookup_short, vocab_find,
vocab_lookup, vocab_is_special, vocab_ordinary, rule_find, supers_find, supers_parts, bit
(vocab.h's inline functions); vocab_parse_tiktoken, vocab_from_merges, image and compact
readers and writers (vocab.c).

Calling conventions of the kernels (a C pointer p is an array p and an index i; ids are int64,
ST_NO_TOKEN = 0xFFFFFFFF):
  vocab_span(v, id) -> (ok, start, len)
  vocab_special_string(v, k) -> (ok, id, start, len)
  vocab_probe(v, p, i, n, h) / vocab_find(v, p, i, n, h) / vocab_lookup(v, p, i, n) /
  vocab_lookup_short(v, p, i, n) -> id      (h: base/hash.py's hash_bytes/short/mid value)
  vocab_is_special(v, id), vocab_ordinary(v, rules, id) -> bool
  rule_find(r, left, right), supers_find(s, left, right) -> id; supers_parts(s, id); bit(bits, id)
The Python-level builders (vocab_parse_tiktoken, vocab_parse_compact, vocab_from_merges,
vocab_image_borrow) take the padded input arrays and an Err (or None) and return
(status, Vocab ...), filling the Err as the C does.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_MALFORMED_MODEL, ST_UNIT_NONE, ST_UNIT_BYTE,
                           ST_UNIT_INDEX, ST_KIND_NONE, ST_KIND_ID_REPEATED, ST_KIND_ID_TAKEN, ST_KIND_EMPTY_TOKEN,
                           ST_KIND_ID_TOO_LARGE, fail, quoted)
from ..base.hash import hash_bytes, hash_short, load_le64, low_mask, mix64
from ..text.utf8 import utf8_validate
from .base64 import base64_decode, base64_decoded_length

Vocab = namedtuple("Vocab", "n_ids n_ordinary n_special table_mask bytes_len offsets bytes table special_ids "
                            "n_extra extra byte_ids pair_ids alphabet special_order special_first_bytes",
                   defaults=(np.zeros(0, np.uint32), 0))
# special_order, special_first_bytes: st_encoding's (encode/special_policy.py builds them when a
# handle is made); they ride with the store here because every kernel already takes it.
Rules = namedtuple("Rules", "slots mask base")
Supers = namedtuple("Supers", "rules n shift eligible parts filter")

ST_NO_TOKEN = 0xFFFFFFFF
ST_RULES_MAX_IDS = (1 << 21) - 1
ST_SUPER_LEFT, ST_SUPER_RIGHT = 1, 2
ST_ALPHABET_BYTES, ST_ALPHABET_UBE = 0, 1
ST_RULES_TOKEN_BYTES_BASE, ST_RULES_TOKEN_BYTES_PER_RULE = 16777216, 256

U64 = np.uint64
_HI = U64(0xFFFFFFFF00000000)
_LO = U64(0xFFFFFFFF)
_NL, _CR, _SP = 10, 13, 32

# ---- vocab.h's inline lookups ----------------------------------------------------------------


@njit(cache=True, nogil=True)
def span_raw(offsets, bytes_len, n_ids, id):
    if id < 0 or id >= n_ids:
        return False, 0, 0
    a = np.int64(offsets[id])
    b = np.int64(offsets[id + 1])
    if a >= b or b > bytes_len:
        return False, 0, 0
    return True, a, b - a


@njit(cache=True, nogil=True)
def vocab_span(v, id):
    """st__vocab_span: (ok, start, len) of token id in v.bytes, checked."""
    return span_raw(v.offsets, v.bytes_len, v.n_ids, id)


@njit(cache=True, nogil=True)
def vocab_special_string(v, k):
    """st__vocab_special_string: (ok, id, start, len) of special string k."""
    if k < 0:
        return False, 0, 0, 0
    if k < v.n_special:
        sid = np.int64(v.special_ids[k])
        ok, a, n = vocab_span(v, sid)
        return ok, sid, a, n
    k -= v.n_special
    if k >= v.n_extra:
        return False, 0, 0, 0
    x0 = np.int64(v.extra[3 * k])
    x1 = np.int64(v.extra[3 * k + 1])
    x2 = np.int64(v.extra[3 * k + 2])
    if x2 == 0 or x1 > v.bytes_len or x2 > v.bytes_len - x1:
        return False, 0, 0, 0
    return True, x0, x1, x2


@njit(cache=True, nogil=True)
def vocab_n_strings(v):
    return v.n_special + v.n_extra


@njit(cache=True, nogil=True)
def rule_find(r, left, right):
    """st__rule_find: the token made by the rule joining left and right, or ST_NO_TOKEN."""
    key = (U64(left) << U64(21)) | U64(right)
    mask = np.int64(r.mask)
    i = np.int64(mix64(key) & _LO) & mask
    for _ in range(mask + 1):
        s = r.slots[i]
        if s == 0:
            return np.int64(ST_NO_TOKEN)
        if (s >> U64(21)) == key:
            return np.int64(s & U64(ST_RULES_MAX_IDS))
        i = (i + 1) & mask
    return np.int64(ST_NO_TOKEN)


@njit(cache=True, nogil=True)
def probe_raw(offsets, byts, bytes_len, table, mask, n_ids, p, pi, n, h):
    """st__vocab_probe over the arrays (n 1..16, p padded)."""
    m0 = low_mask(n) if n < 8 else U64(0xFFFFFFFFFFFFFFFF)
    m1 = low_mask(n - 8) if n > 8 else U64(0)
    w0 = load_le64(p, pi) & m0
    w1 = (load_le64(p, pi + 8) & m1) if n > 8 else U64(0)
    tag = h & _HI
    i = np.int64(h & _LO) & mask
    for _ in range(mask + 1):
        slot = table[i]
        if slot == 0:
            return np.int64(ST_NO_TOKEN)
        if (slot & _HI) == tag:
            tid = np.int64(slot & _LO) - 1
            if tid >= 0 and tid < n_ids:
                a = np.int64(offsets[tid])
                b = np.int64(offsets[tid + 1])
                if b - a == n and b <= bytes_len and (load_le64(byts, a) & m0) == w0 and (
                        n <= 8 or (load_le64(byts, a + 8) & m1) == w1):
                    return tid
        i = (i + 1) & mask
    return np.int64(ST_NO_TOKEN)


@njit(cache=True, nogil=True)
def vocab_probe(v, p, pi, n, h):
    """st__vocab_probe: the id of p[pi..pi+n) (n 1..16, padded) whose hash is h, or ST_NO_TOKEN."""
    return probe_raw(v.offsets, v.bytes, v.bytes_len, v.table, v.table_mask, v.n_ids, p, pi, n, h)


@njit(cache=True, nogil=True)
def vocab_lookup_short(v, p, pi, n):
    """st__vocab_lookup_short: a key of 1..8 bytes whose 8 bytes at p[pi] may be read."""
    if n == 2:
        return np.int64(v.pair_ids[(np.int64(p[pi]) << 8) | np.int64(p[pi + 1])])
    return vocab_probe(v, p, pi, n, hash_short(p, pi, n))


@njit(cache=True, nogil=True)
def find_raw(offsets, byts, bytes_len, table, mask, n_ids, p, pi, n, h):
    """st__vocab_find over the arrays."""
    tag = h & _HI
    i = np.int64(h & _LO) & mask
    for _ in range(mask + 1):
        slot = table[i]
        if slot == 0:
            return np.int64(ST_NO_TOKEN)
        if (slot & _HI) == tag:
            tid = np.int64(slot & _LO) - 1
            ok, a, ln = span_raw(offsets, bytes_len, n_ids, tid)
            if ok and ln == n:
                same = True
                for k in range(n):
                    if byts[a + k] != p[pi + k]:
                        same = False
                        break
                if same:
                    return tid
        i = (i + 1) & mask
    return np.int64(ST_NO_TOKEN)


@njit(cache=True, nogil=True)
def vocab_find(v, p, pi, n, h):
    """st__vocab_find: id of the ordinary token with bytes p[pi..pi+n) whose hash is h."""
    return find_raw(v.offsets, v.bytes, v.bytes_len, v.table, v.table_mask, v.n_ids, p, pi, n, h)


@njit(cache=True, nogil=True)
def vocab_lookup(v, p, pi, n):
    """st__vocab_lookup: id of the ordinary token with exactly these bytes, or ST_NO_TOKEN."""
    return vocab_find(v, p, pi, n, hash_bytes(p, pi, n))


@njit(cache=True, nogil=True)
def is_special_raw(special_ids, n_special, id):
    lo = 0
    hi = n_special
    while lo < hi:
        mid = (lo + hi) // 2
        if np.int64(special_ids[mid]) < id:
            lo = mid + 1
        else:
            hi = mid
    return lo < n_special and np.int64(special_ids[lo]) == id


@njit(cache=True, nogil=True)
def vocab_is_special(v, id):
    return is_special_raw(v.special_ids, v.n_special, id)


@njit(cache=True, nogil=True)
def vocab_ordinary(v, rules, id):
    """st__vocab_ordinary."""
    if id < 0 or id >= v.n_ids:
        return False
    if rules:
        return id < v.n_ordinary
    ok, a, ln = vocab_span(v, id)
    return (not vocab_is_special(v, id)) and ok and ln > 0


@njit(cache=True, nogil=True)
def bit(bits, id):
    """st__bit."""
    return np.int64((bits[id >> 6] >> U64(id & 63)) & U64(1))


@njit(cache=True, nogil=True)
def supers_parts(s, id):
    """st__supers_parts: ST_SUPER_LEFT | ST_SUPER_RIGHT of ordinary id."""
    return np.int64((s.parts[id >> 5] >> U64(2 * (id & 31))) & U64(3))


_FIB = U64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def supers_hash(key):
    return U64(key) * _FIB


@njit(cache=True, nogil=True)
def supers_find_raw(slots, mask, shift, filt, left, right):
    key = (U64(left) << U64(21)) | U64(right)
    h = key * _FIB
    b = h >> U64(shift - 2)
    if ((filt[np.int64(b >> U64(6))] >> (b & U64(63))) & U64(1)) == 0:
        return np.int64(ST_NO_TOKEN)
    i = np.int64(h >> U64(shift))
    for _ in range(mask + 1):
        slot = slots[i]
        if slot == 0:
            return np.int64(ST_NO_TOKEN)
        if (slot >> U64(21)) == key:
            return np.int64(slot & U64(ST_RULES_MAX_IDS))
        i = (i + 1) & mask
    return np.int64(ST_NO_TOKEN)


@njit(cache=True, nogil=True)
def supers_find(s, left, right):
    """st__supers_find: the supermerge joining left and right, or ST_NO_TOKEN."""
    return supers_find_raw(s.rules.slots, s.rules.mask, s.shift, s.filter, left, right)


# ---- UTF-8 validity: st_utf8_validate's verdict on a token's bytes (text/utf8.c, as vocab.c calls it) ----

@njit(cache=True, nogil=True)
def utf8_ok(s, i, n):
    bad, _ = utf8_validate(s[i:], n)
    return bad < 0


# ---- the rank-file format ----------------------------------------------------------------------
# why codes of a malformed line (next_line's messages)
WHY = ("malformed line", "no token before the space", "no space between token and rank", "rank above 2^31 - 1",
       "text after the rank", "the rank is not a decimal number",
       "the token is not padded base64 of at least one byte")


@njit(cache=True, nogil=True)
def next_line(s, n, pos, validate):
    """next_line: (r, pos, start, b64_len, id, bytes_len, why, kind); r 1 a line, 0 the end, -1
    malformed (pos then the start of the bad line)."""
    i = pos
    while i < n and (s[i] == _NL or s[i] == _CR):
        i += 1
    if i >= n:
        return 0, n, 0, 0, 0, 0, 0, 0
    start = i
    while i < n and s[i] != _SP and s[i] != _NL:
        i += 1
    b64_end = i
    if i >= n or s[i] != _SP or b64_end == start:
        if b64_end == start:
            return -1, start, 0, 0, 0, 0, 1, ST_KIND_EMPTY_TOKEN
        return -1, start, 0, 0, 0, 0, 2, ST_KIND_NONE
    i += 1
    tid = 0
    digits = 0
    while i < n and s[i] >= 48 and s[i] <= 57:
        tid = tid * 10 + np.int64(s[i] - 48)
        if tid > 0x7FFFFFFF:
            return -1, start, 0, 0, 0, 0, 3, ST_KIND_ID_TOO_LARGE
        i += 1
        digits += 1
    if i < n and s[i] == _CR:
        i += 1
    if digits == 0 or (i < n and s[i] != _NL):
        return -1, start, 0, 0, 0, 0, (4 if digits else 5), ST_KIND_NONE
    if validate:
        blen = base64_decode(s, start, b64_end - start, s, 0, False)
    else:
        blen = base64_decoded_length(s, start, b64_end - start)
    if blen <= 0:
        return -1, start, 0, 0, 0, 0, 6, ST_KIND_NONE
    return 1, i, start, b64_end - start, tid, blen, 0, ST_KIND_NONE


@njit(cache=True, nogil=True)
def scan_file(s, n):
    """scan_file: (r, count, bytes, max_id, max_id_line, bad_pos, why, kind); r < 0 malformed."""
    pos = 0
    count = 0
    nbytes = 0
    max_id = 0
    max_line = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(s, n, pos, True)
        if r <= 0:
            if r < 0:
                return -1, count, nbytes, max_id, max_line, pos, why, kind
            return 0, count, nbytes, max_id, max_line, 0, 0, 0
        count += 1
        nbytes += blen
        if tid > max_id:
            max_id = tid
            max_line = start


# info: what a builder kernel reports (its error, and the counts of what it built)
I_CODE, I_POS, I_INPUT, I_NUM, I_NUM2, I_KIND, I_QA, I_QL, I_NIDS, I_NORD, I_NSPEC, I_NEXTRA, I_BYTES, I_MASK = range(14)
INFO_FIELDS = 14
(E_OK, E_SCAN, E_EMPTY_FILE, E_SPARSE, E_4GB, E_ID, E_SPECIAL_UTF8, E_DUP, E_COMPACT, E_COMPACT_DUP, E_SPARSE_C,
 E_SHARED_BYTES, E_SHARED_UTF8, E_SPECIAL_ID_RULE, E_SPARSE_RULES, E_PARTS, E_RULE_REPEAT, E_TOO_MANY, E_LIMIT,
 E_4GB_RULES, E_ALPHABET) = range(21)
COMPACT_WHAT = ("no STVC header", "unknown format version", "token count", "bad length", "it holds no token",
                "the last id has no token", "the lengths do not add up to bytes_len", "the size is not the header's",
                "most ids are unused", "the tokens hold 4 GB or more")


@njit(cache=True, nogil=True)
def _set(info, code, pos, inp, num, kind):
    info[I_CODE] = code
    info[I_POS] = pos
    info[I_INPUT] = inp
    info[I_NUM] = num
    info[I_KIND] = kind


@njit(cache=True, nogil=True)
def _scan_error(info, r, bad, why, kind, inp):
    _set(info, E_SCAN, bad, inp, why, kind)


@njit(cache=True, nogil=True)
def _special_lengths(ss, sn, offsets, n_ids, extra, info):
    """fill_special_lengths: returns n_extra, or -1 (info set)."""
    seen = np.zeros(n_ids, np.bool_)
    n_extra = 0
    pos = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(ss, sn, pos, False)
        if r <= 0:
            return n_extra
        if seen[tid]:
            extra[3 * n_extra] = tid
            extra[3 * n_extra + 1] = start
            extra[3 * n_extra + 2] = blen
            n_extra += 1
            continue
        if offsets[tid + 1]:
            _set(info, E_ID, start, 1, tid, ST_KIND_ID_TAKEN)
            return -1
        seen[tid] = True
        offsets[tid + 1] = blen


@njit(cache=True, nogil=True)
def _sorted_special_ids(ss, sn, special_ids):
    pos = 0
    k = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(ss, sn, pos, False)
        if r <= 0:
            break
        special_ids[k] = tid
        k += 1
    special_ids[:k] = np.sort(special_ids[:k])
    n = 0
    for x in range(k):
        if n == 0 or special_ids[n - 1] != special_ids[x]:
            special_ids[n] = special_ids[x]
            n += 1
    return n


@njit(cache=True, nogil=True)
def _fill_specials(ss, sn, offsets, n_ids, byts, extra, n_extra, shared_below, info):
    """fill_specials: 0, or -1 with info set."""
    pos = 0
    k = 0
    at = np.int64(offsets[n_ids])
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(ss, sn, pos, False)
        if r <= 0:
            return 0
        if tid < shared_below:
            continue
        if k < n_extra and np.int64(extra[3 * k + 1]) == start:
            extra[3 * k + 1] = at
            p = at
            n = blen
            at += n
            k += 1
        else:
            p = np.int64(offsets[tid])
            n = np.int64(offsets[tid + 1]) - p
        base64_decode(ss, start, bl, byts, p, True)
        if not utf8_ok(byts, p, n):
            _set(info, E_SPECIAL_UTF8, start, 1, 0, ST_KIND_NONE)
            info[I_QA] = p
            info[I_QL] = n
            return -1


@njit(cache=True, nogil=True)
def _index_token(offsets, byts, bytes_len, table, mask, n_ids, pair_ids, tid):
    """index_token: ST_NO_TOKEN, or the earlier id with the same bytes (nothing inserted). The
    C looks the bytes up, then probes again for an empty slot from the same start: one walk
    here (the first empty slot ends the lookup and is where the insert goes)."""
    a = np.int64(offsets[tid])
    n = np.int64(offsets[tid + 1]) - a
    h = hash_bytes(byts, a, n)
    tag = h & _HI
    i = np.int64(h & _LO) & mask
    for _ in range(mask + 1):
        slot = table[i]
        if slot == 0:
            break
        if (slot & _HI) == tag:
            e = np.int64(slot & _LO) - 1
            ok, ea, ln = span_raw(offsets, bytes_len, n_ids, e)
            if ok and ln == n:
                same = True
                for k in range(n):
                    if byts[ea + k] != byts[a + k]:
                        same = False
                        break
                if same:
                    return e
        i = (i + 1) & mask
    if n == 2:
        pair_ids[(np.int64(byts[a]) << 8) | np.int64(byts[a + 1])] = tid
    table[i] = tag | U64(tid + 1)
    return np.int64(ST_NO_TOKEN)


@njit(cache=True, nogil=True)
def _fill_byte_ids(offsets, byts, bytes_len, table, mask, n_ids, byte_ids):
    c = np.zeros(16, np.uint8)
    for b in range(256):
        c[0] = b
        byte_ids[b] = find_raw(offsets, byts, bytes_len, table, mask, n_ids, c, 0, 1, hash_bytes(c, 0, 1))


@njit(cache=True, nogil=True)
def _fill_lengths(s, n, offsets, info):
    """fill_lengths: each id's length in offsets[id + 1]; a repeated id is an error (False)."""
    pos = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(s, n, pos, False)
        if r <= 0:
            return True
        if offsets[tid + 1]:
            _set(info, E_ID, start, 0, tid, ST_KIND_ID_REPEATED)
            return False
        offsets[tid + 1] = blen


@njit(cache=True, nogil=True)
def _fill_bytes(s, n, offsets, byts):
    pos = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(s, n, pos, False)
        if r <= 0:
            return
        base64_decode(s, start, bl, byts, np.int64(offsets[tid]), True)


@njit(cache=True, nogil=True)
def _index_lines(s, n, offsets, byts, nbytes, table, n_ids, pair_ids, info):
    """The table from the rank file's lines (index_token each); False at a repeated token."""
    mask = np.int64(table.shape[0]) - 1
    pos = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(s, n, pos, False)
        if r <= 0:
            return True
        earlier = _index_token(offsets, byts, nbytes, table, mask, n_ids, pair_ids, tid)
        if earlier != ST_NO_TOKEN:
            _set(info, E_DUP, start, 0, earlier, ST_KIND_NONE)
            info[I_QA] = offsets[tid]
            info[I_QL] = offsets[tid + 1] - offsets[tid]
            return False


def _scan(s, n, info, inp):
    """scan_file: (count, bytes, max_id, max_id_line), or None with info set."""
    r, count, nbytes, max_id, max_line, bad, why, kind = scan_file(s, n)
    if r < 0:
        info[[I_CODE, I_POS, I_INPUT, I_NUM, I_KIND]] = (E_SCAN, bad, inp, why, kind)
        return None
    return count, nbytes, max_id, max_line


def _new_block(n_ids, n_ordinary, n_lines, nbytes):
    """vocab_alloc (numpy: zeroed, pair_ids all ST_NO_TOKEN)."""
    cap = 1
    while cap < 2 * n_ordinary:
        cap <<= 1
    return [np.zeros(n_ids + 1, np.uint32), np.zeros(nbytes + 16, np.uint8), np.zeros(cap, np.uint64),
            np.zeros(n_lines, np.uint32), np.zeros(3 * n_lines, np.uint32), np.full(65536, ST_NO_TOKEN, np.uint32),
            np.zeros(256, np.uint32)]


def _prefix(offsets):
    offsets[1:] = np.cumsum(offsets[1:], dtype=np.uint64).astype(np.uint32)


def _specials_into(b, ss, sn, n_ids, info):
    """special_lengths, sorted_special_ids: (n_special, n_extra), or None (info set)."""
    if not sn:
        return 0, 0
    n_extra = _special_lengths(ss, sn, b[0], n_ids, b[4], info)
    if n_extra < 0:
        return None
    return _sorted_special_ids(ss, sn, b[3]), n_extra


def _finish(b, info, n_ids, n_ord, n_special, n_extra, nbytes):
    _fill_byte_ids(b[0], b[1], nbytes, b[2], b[2].shape[0] - 1, n_ids, b[6])
    info[[I_NIDS, I_NORD, I_NSPEC, I_NEXTRA, I_BYTES, I_MASK]] = (n_ids, n_ord, n_special, n_extra, nbytes,
                                                                  b[2].shape[0] - 1)
    b[4] = b[4][:3 * n_extra].copy()
    return tuple(b)


_NO_BLOCK = None


def _parse_tiktoken(rs, rn, ss, sn, info):
    """st__vocab_parse_tiktoken's passes (each a kernel): the block, or its partial state with
    info set."""
    tr = _scan(rs, rn, info, 0)
    if tr is None:
        return _NO_BLOCK
    rcount, rbytes, rmax, rmax_line = tr
    if rcount == 0:
        info[I_CODE] = E_EMPTY_FILE
        return _NO_BLOCK
    ts = (0, 0, 0, 0)
    if sn:
        ts = _scan(ss, sn, info, 1)
        if ts is None:
            return _NO_BLOCK
    scount, sbytes, smax, smax_line = ts
    max_id = max(rmax, smax)
    if max_id + 1 > 2 * (rcount + scount) + 65536:
        in_spec = scount > 0 and smax > rmax
        info[[I_CODE, I_POS, I_INPUT, I_NUM]] = (E_SPARSE, smax_line if in_spec else rmax_line, int(in_spec), max_id)
        return _NO_BLOCK
    if rbytes + sbytes > 0xFFFFFFFF:
        info[I_CODE] = E_4GB
        return _NO_BLOCK
    n_ids, nbytes = max_id + 1, rbytes + sbytes
    b = _new_block(n_ids, rcount, scount, nbytes)
    if not _fill_lengths(rs, rn, b[0], info):
        return _NO_BLOCK
    sp = _specials_into(b, ss, sn, n_ids, info)
    if sp is None:
        return _NO_BLOCK
    _prefix(b[0])
    _fill_bytes(rs, rn, b[0], b[1])
    if sn and _fill_specials(ss, sn, b[0], n_ids, b[1], b[4], sp[1], 0, info) < 0:
        return tuple(b)
    if not _index_lines(rs, rn, b[0], b[1], nbytes, b[2], n_ids, b[5], info):
        return tuple(b)
    return _finish(b, info, n_ids, rcount, sp[0], sp[1], nbytes)


def _line_of(s, pos):
    return 1 + bytes(s[:pos]).count(b"\n")


def line_error(err, s, pos, inp, msg):
    """line_error: ST_ERR_MALFORMED_MODEL at the line starting at byte pos of s."""
    return fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, pos, msg, line=_line_of(s, pos), input=inp)


def _report(err, info, rs, ss, blocks):
    """The Err of a builder kernel's info (rank file rs, specials ss, the block it built)."""
    code, pos, inp, num, num2, kind = (int(info[k]) for k in (I_CODE, I_POS, I_INPUT, I_NUM, I_NUM2, I_KIND))
    text = ss if inp == 1 else rs
    byts = blocks[1] if blocks is not None else None
    q = lambda: quoted(byts[int(info[I_QA]):int(info[I_QA]) + int(info[I_QL])][:160])  # noqa: E731
    if code == E_SCAN:
        why = WHY[num]
        if kind == ST_KIND_ID_TOO_LARGE and inp:
            why = "id above 2^31 - 1"
        line_error(err, text, pos, inp, why)
        if err is not None:
            err.kind, err.length = kind, 0
    elif code == E_EMPTY_FILE:
        line_error(err, rs, 0, 0, "the rank file holds no token")
    elif code == E_SPARSE:
        line_error(err, text, pos, inp, "rank %d leaves most ids below it unused" % num)
    elif code == E_4GB:
        line_error(err, rs, 0, 0, "the tokens hold 4 GB or more")
    elif code == E_ID:
        line_error(err, text, pos, inp, ("id " if inp else "rank ") + str(num) + (
            " is taken by an ordinary token" if kind == ST_KIND_ID_TAKEN else " is given to an earlier line too"))
        if err is not None:
            err.token, err.kind, err.length = num, kind, 0
    elif code == E_SPECIAL_UTF8:
        line_error(err, text, pos, 1, "special token " + q() + " is not valid UTF-8")
    elif code == E_DUP:
        line_error(err, rs, pos, 0, "token " + q() + " has rank %d on an earlier line" % num)
    elif code == E_SHARED_UTF8:
        line_error(err, text, pos, 1, "special token " + q() + " is not valid UTF-8")
    elif code == E_SHARED_BYTES:
        line_error(err, text, pos, 1, "special token " + q() + " has the id of an ordinary token, %d, but not its bytes"
                   % num)
    elif code == E_SPECIAL_ID_RULE:
        line_error(err, text, pos, 1, "special token id %d" % num + (
            " is a symbol's or rule's id" if num2 else " is above 2^21 - 1"))
    elif code == E_SPARSE_RULES:
        line_error(err, text, pos, 1, "special token id %d leaves most ids below it unused" % num)
    elif code == E_COMPACT:
        fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, pos, "compact vocabulary: " + COMPACT_WHAT[num])
    elif code == E_SPARSE_C:
        line_error(err, ss, pos, 1, "rank %d leaves most ids below it unused" % num)
    elif code == E_COMPACT_DUP:
        fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, pos, "compact vocabulary: token " + q() +
             " of id %d is id %d too" % (num, num2))
    else:
        raise AssertionError("unknown builder report %d" % code)
    return ST_ERR_MALFORMED_MODEL


def _vocab(info, blocks, alphabet=ST_ALPHABET_BYTES):
    offsets, byts, table, special_ids, extra, pair_ids, byte_ids = blocks
    n_special, n_extra = int(info[I_NSPEC]), int(info[I_NEXTRA])
    return Vocab(int(info[I_NIDS]), int(info[I_NORD]), n_special, int(info[I_MASK]), int(info[I_BYTES]), offsets,
                 byts, table, special_ids[:n_special], n_extra, extra, byte_ids, pair_ids, alphabet)


def vocab_parse_tiktoken(rs, rn, ss, sn, err):
    """st__vocab_parse_tiktoken: (status, Vocab or None). rs, ss: padded uint8 arrays (ss may be
    None when sn is 0)."""
    if ss is None:
        ss = np.zeros(16, np.uint8)
    info = np.zeros(INFO_FIELDS, np.int64)
    blocks = _parse_tiktoken(rs, rn, ss, sn, info)
    if info[I_CODE] != E_OK:
        return _report(err, info, rs, ss, blocks), None
    return ST_OK, _vocab(info, blocks)


# ---- the binary image --------------------------------------------------------------------------
# Little-endian, every section 8-byte aligned (vocab.c's layout):
#   0 "STVOCAB1"  8 u32 format  12 u32 pattern  16 u32 n_ids  20 u32 n_ordinary  24 u32 n_special
#   28 u32 table_mask  32 u32 bytes_len  36 u32 merge mode (0)  40 section offsets (6 x u32)  64 end
# Sections: byte_ids[256] u32, offsets[n_ids + 1] u32, table u64, special_ids u32, pair_ids[65536]
# u32, bytes[bytes_len + 8]; format 2 adds u32 n_extra, u32 0, the extra triples.
IMG_HEADER = 64
IMG_FORMAT, IMG_FORMAT_EXTRA = 1, 2


def _align8(x):
    return (x + 7) & ~7


def _layout(n_ids, table_mask, n_special, bytes_len):
    byte_ids = IMG_HEADER
    offsets = byte_ids + 256 * 4
    table = offsets + _align8((n_ids + 1) * 4)
    special = table + (table_mask + 1) * 8
    pairs = special + _align8(n_special * 4)
    byts = pairs + 65536 * 4
    total = byts + _align8(bytes_len) + 8
    return byte_ids, offsets, table, special, pairs, byts, total


def _extra_size(n_extra):
    return 8 + _align8(n_extra * 12) if n_extra else 0


def vocab_image_size(v):
    return _layout(v.n_ids, v.table_mask, v.n_special, v.bytes_len)[6] + _extra_size(v.n_extra)


def vocab_image_write(v, pattern, out):
    """st__vocab_image_write into the uint8 array out (vocab_image_size bytes)."""
    l_bid, l_off, l_tab, l_spec, l_pairs, l_bytes, total = _layout(v.n_ids, v.table_mask, v.n_special, v.bytes_len)
    size = total + _extra_size(v.n_extra)
    out[:size] = 0
    out[:8] = np.frombuffer(b"STVOCAB1", np.uint8)
    head = np.array([IMG_FORMAT_EXTRA if v.n_extra else IMG_FORMAT, pattern, v.n_ids, v.n_ordinary, v.n_special,
                     v.table_mask, v.bytes_len & 0xFFFFFFFF, 0, l_bid, l_off, l_tab, l_spec, l_pairs, l_bytes],
                    np.uint32)
    out[8:64] = head.view(np.uint8)
    out[l_bid:l_bid + 1024] = v.byte_ids.view(np.uint8)
    out[l_off:l_off + 4 * (v.n_ids + 1)] = v.offsets[:v.n_ids + 1].view(np.uint8)
    out[l_tab:l_tab + 8 * (v.table_mask + 1)] = v.table[:v.table_mask + 1].view(np.uint8)
    out[l_spec:l_spec + 4 * v.n_special] = v.special_ids[:v.n_special].view(np.uint8)
    out[l_pairs:l_pairs + 4 * 65536] = v.pair_ids[:65536].view(np.uint8)
    out[l_bytes:l_bytes + v.bytes_len] = v.bytes[:v.bytes_len]
    if v.n_extra:
        out[total:total + 4] = np.array([v.n_extra], np.uint32).view(np.uint8)
        out[total + 8:total + 8 + 12 * v.n_extra] = v.extra[:3 * v.n_extra].view(np.uint8)


def _image_error(err, at, field):
    return fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "image: " + field)


def vocab_image_borrow(img, length, err):
    """st__vocab_image_borrow: (status, Vocab or None, pattern). img: a uint8 array (the arrays
    are views into it: no copy, no pass over the contents)."""
    if img.ctypes.data & 7:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the image is not 8-byte aligned"), None, 0
    if length < IMG_HEADER or bytes(img[:8]) != b"STVOCAB1":
        return _image_error(err, 0, "no STVOCAB1 header"), None, 0
    h = [int(x) for x in img[:64].view(np.uint32)]
    fmt = h[2]
    if fmt != IMG_FORMAT and fmt != IMG_FORMAT_EXTRA:
        return _image_error(err, 8, "unknown format version"), None, 0
    if h[9] != 0:
        return _image_error(err, 36, "merge mode is not ranks"), None, 0
    n_ids, n_ord, n_spec, mask, bytes_len = h[4], h[5], h[6], h[7], h[8]
    if n_ids == 0 or n_ids > 0x40000000 or n_spec > n_ids or n_ord > n_ids:
        return _image_error(err, 16, "token counts"), None, 0
    if mask > 0x3FFFFFFF or (mask & (mask + 1)) != 0:
        return _image_error(err, 28, "table size"), None, 0
    secs = _layout(n_ids, mask, n_spec, bytes_len)
    total = secs[6]
    if total > length:
        return _image_error(err, length, "truncated"), None, 0
    for k in range(6):
        if h[10 + k] != secs[k]:
            return _image_error(err, 40 + 4 * k, "section offset"), None, 0
    l_bid, l_off, l_tab, l_spec, l_pairs, l_bytes = secs[:6]
    n_extra, extra = 0, np.zeros(0, np.uint32)
    if fmt == IMG_FORMAT_EXTRA:
        if total + 8 > length:
            return _image_error(err, length, "truncated"), None, 0
        n_x = int(img[total:total + 4].view(np.uint32)[0])
        if n_x > n_spec + 65536 or total + _extra_size(n_x) > length:
            return _image_error(err, total, "extra special strings"), None, 0
        n_extra, extra = n_x, img[total + 8:total + 8 + 12 * n_x].view(np.uint32)
    v = Vocab(n_ids, n_ord, n_spec, mask, bytes_len, img[l_off:l_off + 4 * (n_ids + 1)].view(np.uint32),
              img[l_bytes:], img[l_tab:l_tab + 8 * (mask + 1)].view(np.uint64),
              img[l_spec:l_spec + 4 * n_spec].view(np.uint32), n_extra, extra,
              img[l_bid:l_bid + 1024].view(np.uint32).copy(), img[l_pairs:l_pairs + 4 * 65536].view(np.uint32),
              ST_ALPHABET_BYTES)
    return ST_OK, v, h[3]


# ---- the compact image -------------------------------------------------------------------------
#   0 "STVC"  4 u32 format (1)  8 u32 n_ids  12 u32 bytes_len  16 n_ids lengths (LEB128), then the
#   tokens' bytes in id order.
CVC_HEADER = 16
CVC_FORMAT = 1


@njit(cache=True, nogil=True)
def _compact_extent(v):
    n_ids = 0
    nbytes = 0
    for tid in range(v.n_ids):
        ok, s, ln = vocab_span(v, tid)
        if vocab_is_special(v, tid) or not ok:
            continue
        n_ids = tid + 1
        nbytes += ln
    return n_ids, nbytes


@njit(cache=True, nogil=True)
def _compact_len(v, tid):
    if vocab_is_special(v, tid):
        return 0
    ok, s, ln = vocab_span(v, tid)
    return ln if ok else 0


@njit(cache=True, nogil=True)
def vocab_compact_size(v):
    n_ids, nbytes = _compact_extent(v)
    size = CVC_HEADER
    for tid in range(n_ids):
        ln = _compact_len(v, tid)
        while True:
            size += 1
            ln >>= 7
            if not ln:
                break
    return size + nbytes


@njit(cache=True, nogil=True)
def vocab_compact_write(v, out):
    n_ids, nbytes = _compact_extent(v)
    out[0] = 83  # S
    out[1] = 84  # T
    out[2] = 86  # V
    out[3] = 67  # C
    for k in range(4):
        out[4 + k] = (CVC_FORMAT >> (8 * k)) & 0xFF
        out[8 + k] = (n_ids >> (8 * k)) & 0xFF
        out[12 + k] = (nbytes >> (8 * k)) & 0xFF
    o = CVC_HEADER
    for tid in range(n_ids):
        ln = _compact_len(v, tid)
        while True:
            out[o] = (ln & 0x7F) | (0x80 if ln > 0x7F else 0)
            o += 1
            ln >>= 7
            if not ln:
                break
    for tid in range(n_ids):
        ok, s, ln = vocab_span(v, tid)
        if vocab_is_special(v, tid) or not ok:
            continue
        out[o:o + ln] = v.bytes[s:s + ln]
        o += ln


@njit(cache=True, nogil=True)
def _read_leb(s, n, pos):
    """read_leb: (ok, pos, value)."""
    x = 0
    for k in range(5):
        if pos >= n:
            return False, pos, 0
        c = np.int64(s[pos])
        pos += 1
        x |= (c & 0x7F) << (7 * k)
        if not (c & 0x80):
            if x > 0xFFFFFFFF:
                return False, pos, 0
            return True, pos, x
    return False, pos, 0


@njit(cache=True, nogil=True)
def _get32(s, i):
    return np.int64(s[i]) | (np.int64(s[i + 1]) << 8) | (np.int64(s[i + 2]) << 16) | (np.int64(s[i + 3]) << 24)


@njit(cache=True, nogil=True)
def _cerr(info, at, what):
    _set(info, E_COMPACT, at, 0, what, ST_KIND_NONE)


@njit(cache=True, nogil=True)
def _compact_check(img, n, info):
    """The compact image's header and lengths: (n_lens, count, max_ord, total, end of lengths),
    n_lens 0 with info set when malformed."""
    if n < CVC_HEADER or img[0] != 83 or img[1] != 84 or img[2] != 86 or img[3] != 67:
        _cerr(info, 0, 0)
        return 0, 0, 0, 0, 0
    if _get32(img, 4) != CVC_FORMAT:
        _cerr(info, 4, 1)
        return 0, 0, 0, 0, 0
    n_lens = _get32(img, 8)
    bytes_len = _get32(img, 12)
    if n_lens == 0 or n_lens > n - CVC_HEADER:
        _cerr(info, 8, 2)
        return 0, 0, 0, 0, 0
    pos = CVC_HEADER
    total = 0
    count = 0
    max_ord = 0
    for tid in range(n_lens):
        at = pos
        ok, pos, ln = _read_leb(img, n, pos)
        if not ok:
            _cerr(info, at, 3)
            return 0, 0, 0, 0, 0
        total += ln
        if ln:
            count += 1
            max_ord = tid
    if count == 0:
        _cerr(info, CVC_HEADER, 4)
        return 0, 0, 0, 0, 0
    if max_ord != n_lens - 1:
        _cerr(info, 8, 5)
        return 0, 0, 0, 0, 0
    if total != bytes_len:
        _cerr(info, 12, 6)
        return 0, 0, 0, 0, 0
    if n - pos != total:
        _cerr(info, n, 7)
        return 0, 0, 0, 0, 0
    return n_lens, count, max_ord, total, pos


@njit(cache=True, nogil=True)
def _compact_lengths(img, n, n_lens, offsets):
    pos = CVC_HEADER
    for tid in range(n_lens):
        ok, pos, ln = _read_leb(img, n, pos)
        offsets[tid + 1] = ln


@njit(cache=True, nogil=True)
def _compact_index(img, n, n_lens, bp, offsets, byts, nbytes, table, n_ids, pair_ids, info):
    """The ordinary tokens' bytes, in id order, each put in the table as it comes."""
    mask = np.int64(table.shape[0]) - 1
    lp = CVC_HEADER
    for tid in range(n_lens):
        ok, lp, ln = _read_leb(img, n, lp)
        if not ln:
            continue
        a = np.int64(offsets[tid])
        byts[a:a + ln] = img[bp:bp + ln]
        earlier = _index_token(offsets, byts, nbytes, table, mask, n_ids, pair_ids, tid)
        if earlier != ST_NO_TOKEN:
            _set(info, E_COMPACT_DUP, bp, 0, tid, ST_KIND_NONE)
            info[I_NUM2] = earlier
            info[I_QA] = a
            info[I_QL] = ln
            return False
        bp += ln
    return True


def _parse_compact(img, n, ss, sn, info):
    """st__vocab_parse_compact's passes: the block, or its partial state with info set."""
    n_lens, count, max_ord, total, pos = _compact_check(img, n, info)
    if n_lens == 0:
        return _NO_BLOCK
    ts = (0, 0, 0, 0)
    if sn:
        ts = _scan(ss, sn, info, 1)
        if ts is None:
            return _NO_BLOCK
    scount, sbytes, smax, smax_line = ts
    max_id = max(max_ord, smax)
    if max_id + 1 > 2 * (count + scount) + 65536:
        if scount and smax > max_ord:
            info[[I_CODE, I_POS, I_INPUT, I_NUM]] = (E_SPARSE_C, smax_line, 1, max_id)
            return _NO_BLOCK
        info[[I_CODE, I_POS, I_NUM]] = (E_COMPACT, 8, 8)
        return _NO_BLOCK
    if total + sbytes > 0xFFFFFFFF:
        info[[I_CODE, I_POS, I_NUM]] = (E_COMPACT, 12, 9)
        return _NO_BLOCK
    n_ids, nbytes = max_id + 1, total + sbytes
    b = _new_block(n_ids, count, scount, nbytes)
    _compact_lengths(img, n, n_lens, b[0])
    sp = _specials_into(b, ss, sn, n_ids, info)
    if sp is None:
        return _NO_BLOCK
    _prefix(b[0])
    if sn and _fill_specials(ss, sn, b[0], n_ids, b[1], b[4], sp[1], 0, info) < 0:
        return tuple(b)
    if not _compact_index(img, n, n_lens, pos, b[0], b[1], nbytes, b[2], n_ids, b[5], info):
        return tuple(b)
    return _finish(b, info, n_ids, count, sp[0], sp[1], nbytes)


def vocab_parse_compact(img, length, ss, sn, err):
    """st__vocab_parse_compact: (status, Vocab or None)."""
    if ss is None:
        ss = np.zeros(16, np.uint8)
    info = np.zeros(INFO_FIELDS, np.int64)
    blocks = _parse_compact(img, length, ss, sn, info)
    if info[I_CODE] != E_OK:
        return _report(err, info, img, ss, blocks), None
    return ST_OK, _vocab(info, blocks)


# ---- merge-rules models ------------------------------------------------------------------------
from ..text.unicode import ucd_class as _ucd_class  # noqa: E402 (text/unicode.c, as vocab.c includes it)
ST_UCD_LU, ST_UCD_LO, ST_UCD_CLASS_MASK = 1, 5, 7


def no_rules():
    """A zeroed st_rules (slots NULL in C): one empty slot, so a find returns ST_NO_TOKEN."""
    return Rules(np.zeros(1, np.uint64), 0, 0)


def no_supers():
    z = np.zeros(1, np.uint64)
    return Supers(no_rules(), 0, 0, z, z, z)


@njit(cache=True, nogil=True)
def rules_token_lengths(alphabet, merges, n_merges, supers, n_super, ln, out):
    """st__rules_token_lengths: lengths in symbols into ln; returns (ok, bytes) with out =
    [index, made, limit, input] of the rule that crossed the limit when not ok."""
    base = 512 if alphabet == ST_ALPHABET_UBE else 256
    unit = 2 if alphabet == ST_ALPHABET_UBE else 1
    n_rules = n_merges + n_super
    limit = ST_RULES_TOKEN_BYTES_BASE + ST_RULES_TOKEN_BYTES_PER_RULE * n_rules
    made = 0
    for i in range(base):
        ln[i] = 1
    for i in range(n_rules):
        if i < n_merges:
            a, b = np.int64(merges[2 * i]), np.int64(merges[2 * i + 1])
        else:
            a, b = np.int64(supers[2 * (i - n_merges)]), np.int64(supers[2 * (i - n_merges) + 1])
        n = np.int64(ln[a]) + np.int64(ln[b])
        made += n * unit
        if made > limit:
            sup = i >= n_merges
            out[0] = i - n_merges if sup else i
            out[1] = made
            out[2] = limit
            out[3] = 2 if sup else 0
            return False, 0
        ln[base + i] = n
    return True, base * unit + made


@njit(cache=True, nogil=True)
def _check_parts(pairs, n, first, info):
    for i in range(n):
        a, b = np.int64(pairs[2 * i]), np.int64(pairs[2 * i + 1])
        if a >= first + i or b >= first + i:
            info[I_CODE] = E_PARTS
            info[I_POS] = i
            info[I_NUM] = a if a >= first + i else b
            info[I_NUM2] = first + i
            return False
    return True


@njit(cache=True, nogil=True)
def _insert_rules(slots, mask, pairs, n, first, sup, shift, filt, other, omask, obase, info):
    """insert_rules: the regular rules (sup False: slot mix64(key) & mask) or the supermerges
    (slot and filter bit from supers_hash; other: the regular rules, checked too)."""
    for i in range(n):
        left, right = np.int64(pairs[2 * i]), np.int64(pairs[2 * i + 1])
        frm = first
        repeat_rule = not sup
        if sup:
            earlier = supers_find_raw(slots, mask, shift, filt, left, right)
        else:
            earlier = rule_find(Rules(slots, mask, 0), left, right)
        if earlier == ST_NO_TOKEN and omask >= 0:
            earlier = rule_find(Rules(other, omask, 0), left, right)
            frm = obase
            repeat_rule = True
        if earlier != ST_NO_TOKEN:
            info[I_CODE] = E_RULE_REPEAT
            info[I_POS] = i
            info[I_NUM] = earlier - frm
            info[I_NUM2] = 1 if repeat_rule else 0
            return False
        key = (U64(left) << U64(21)) | U64(right)
        k = np.int64(mix64(key) & _LO) & mask
        if sup:
            h = key * _FIB
            b = h >> U64(shift - 2)
            filt[np.int64(b >> U64(6))] |= U64(1) << (b & U64(63))
            k = np.int64(h >> U64(shift))
        while slots[k]:
            k = (k + 1) & mask
        slots[k] = (key << U64(21)) | U64(first + i)
    return True


@njit(cache=True, nogil=True)
def _utf8_decode(p, i):
    """st__utf8_decode of valid UTF-8 at p[i]: (length, code point)."""
    b = np.int64(p[i])
    if b < 0x80:
        return 1, b
    if b < 0xE0:
        return 2, ((b & 0x1F) << 6) | (np.int64(p[i + 1]) & 0x3F)
    if b < 0xF0:
        return 3, ((b & 0x0F) << 12) | ((np.int64(p[i + 1]) & 0x3F) << 6) | (np.int64(p[i + 2]) & 0x3F)
    return 4, (((b & 0x07) << 18) | ((np.int64(p[i + 1]) & 0x3F) << 12) | ((np.int64(p[i + 2]) & 0x3F) << 6) |
               (np.int64(p[i + 3]) & 0x3F))


@njit(cache=True, nogil=True)
def is_letter(cp):
    c = _ucd_class(cp) & ST_UCD_CLASS_MASK
    return c >= ST_UCD_LU and c <= ST_UCD_LO

@njit(cache=True, nogil=True)
def token_has_letter(p, a, n, unit):
    """token_has_letter: the text of the token (bytes, or what its UBE symbols spell) holds
    a letter; 0 for text that is not valid."""
    letter = False
    if unit == 1:
        if not utf8_ok(p, a, n):
            return False
        i = 0
        while i < n and not letter:
            ln, cp = _utf8_decode(p, a + i)
            i += ln
            letter = is_letter(cp)
        return letter
    count = n // 2
    b = np.zeros(8, np.uint8)
    k = 0
    while k < count:
        s = np.int64(p[a + 2 * k]) | (np.int64(p[a + 2 * k + 1]) << 8)
        if s < 256:
            if s < 0x80:
                ln = 1
            elif (s & 0xE0) == 0xC0:
                ln = 2
            elif (s & 0xF0) == 0xE0:
                ln = 3
            elif (s & 0xF8) == 0xF0:
                ln = 4
            else:
                ln = 0
            if ln == 0 or k + ln > count:
                return False
            for j in range(ln):
                t = np.int64(p[a + 2 * (k + j)]) | (np.int64(p[a + 2 * (k + j) + 1]) << 8)
                if t >= 256:
                    return False
                b[j] = t
            if not utf8_ok(b, 0, ln):
                return False
            _, cp = _utf8_decode(b, 0)
            k += ln
        else:
            if k + 2 > count:
                return False
            s1 = np.int64(p[a + 2 * (k + 1)]) | (np.int64(p[a + 2 * (k + 1) + 1]) << 8)
            if s1 < 256:
                return False
            u = (s - 256) | ((s1 - 256) << 8)
            k += 2
            if u >= 0xDC00 and u <= 0xDFFF:
                return False
            if u >= 0xD800 and u <= 0xDBFF:
                if k + 2 > count:
                    return False
                s2 = np.int64(p[a + 2 * k]) | (np.int64(p[a + 2 * k + 1]) << 8)
                s3 = np.int64(p[a + 2 * (k + 1)]) | (np.int64(p[a + 2 * (k + 1) + 1]) << 8)
                if s2 < 256 or s3 < 256:
                    return False
                lo = (s2 - 256) | ((s3 - 256) << 8)
                if lo < 0xDC00 or lo > 0xDFFF:
                    return False
                k += 2
                cp = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
            else:
                cp = u
        if is_letter(cp):
            letter = True
    return letter

@njit(cache=True, nogil=True)
def eligible(offsets, byts, n_reg, unit, elig):
    for tid in range(n_reg):
        a = np.int64(offsets[tid])
        if token_has_letter(byts, a, np.int64(offsets[tid + 1]) - a, unit):
            elig[tid >> 6] |= U64(1) << U64(tid & 63)


def _eligible_bits(offsets, byts, n_reg, unit, elig):
    eligible(offsets, byts, n_reg, unit, elig)


@njit(cache=True, nogil=True)
def _special_ids_check(ss, sn, n_ord, unit, info):
    """A special may have a byte token's or a rule's id only to share that token (never in a UBE
    model, whose tokens are symbols), and no id above 2^21 - 1."""
    pos = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(ss, sn, pos, False)
        if r <= 0:
            return True
        if (tid < n_ord and unit == 2) or tid >= ST_RULES_MAX_IDS:
            _set(info, E_SPECIAL_ID_RULE, start, 1, tid, ST_KIND_NONE)
            info[I_NUM2] = 1 if tid < n_ord else 0
            return False


@njit(cache=True, nogil=True)
def _fill_lengths_from(ss, sn, offsets, n_ord, info):
    """fill_lengths_from: an id below n_ord shares an ordinary token and keeps its length."""
    pos = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(ss, sn, pos, False)
        if r <= 0:
            return True
        if tid < n_ord:
            continue
        if offsets[tid + 1]:
            _set(info, E_ID, start, 1, tid, ST_KIND_ID_REPEATED)
            return False
        offsets[tid + 1] = blen


@njit(cache=True, nogil=True)
def _repeated_special_id(ss, sn, n_ids, info):
    """repeated_special_id: the first line giving an id an earlier line gives too."""
    seen = np.zeros(n_ids, np.bool_)
    pos = 0
    info[I_CODE] = E_ID
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(ss, sn, pos, False)
        if r <= 0:
            return
        if seen[tid]:
            _set(info, E_ID, start, 1, tid, ST_KIND_ID_REPEATED)
            return
        seen[tid] = True


@njit(cache=True, nogil=True)
def _rule_bytes(offsets, byts, base, unit, merges, n_merges, supers, n_super):
    """The symbols themselves, then each rule: its two parts, already written."""
    for tid in range(base):
        byts[offsets[tid]] = tid & 0xFF
        if unit == 2:
            byts[offsets[tid] + 1] = tid >> 8
    for i in range(n_merges + n_super):
        if i < n_merges:
            a, b = np.int64(merges[2 * i]), np.int64(merges[2 * i + 1])
        else:
            a, b = np.int64(supers[2 * (i - n_merges)]), np.int64(supers[2 * (i - n_merges) + 1])
        at = np.int64(offsets[base + i])
        sa = np.int64(offsets[a])
        sb = np.int64(offsets[b])
        la = np.int64(offsets[a + 1]) - sa
        lb = np.int64(offsets[b + 1]) - sb
        byts[at:at + la] = byts[sa:sa + la]
        byts[at + la:at + la + lb] = byts[sb:sb + lb]


@njit(cache=True, nogil=True)
def _check_shared(ss, sn, offsets, n_ord, byts, scratch, info):
    """check_shared: a special with an ordinary token's id spells exactly that token's bytes
    (valid UTF-8); decoded into scratch, where the message quotes it from."""
    pos = 0
    while True:
        r, pos, start, bl, tid, blen, why, kind = next_line(ss, sn, pos, False)
        if r <= 0:
            return True
        if tid >= n_ord:
            continue
        base64_decode(ss, start, bl, scratch, 0, True)
        ta = np.int64(offsets[tid])
        tl = np.int64(offsets[tid + 1]) - ta
        same = tl == blen
        if same:
            for j in range(tl):
                if byts[ta + j] != scratch[j]:
                    same = False
                    break
        if same and utf8_ok(scratch, 0, tl):
            continue
        _set(info, E_SHARED_UTF8 if same else E_SHARED_BYTES, start, 1, tid, ST_KIND_NONE)
        info[I_QA] = 0
        info[I_QL] = blen
        return False


@njit(cache=True, nogil=True)
def _index_ordinary(offsets, byts, nbytes, table, n_ids, n_ord):
    """bytes -> id: the first token with given bytes (two rules may spell the same bytes)."""
    mask = np.int64(table.shape[0]) - 1
    for tid in range(n_ord):
        a = np.int64(offsets[tid])
        n = np.int64(offsets[tid + 1]) - a
        h = hash_bytes(byts, a, n)
        if find_raw(offsets, byts, nbytes, table, mask, n_ids, byts, a, n, h) != ST_NO_TOKEN:
            continue
        i = np.int64(h & _LO) & mask
        while table[i]:
            i = (i + 1) & mask
        table[i] = (h & _HI) | U64(tid + 1)


@njit(cache=True, nogil=True)
def _parts_bits(supers, n_super, parts):
    for j in range(n_super):
        a, b = np.int64(supers[2 * j]), np.int64(supers[2 * j + 1])
        parts[a >> 5] |= U64(ST_SUPER_LEFT) << U64(2 * (a & 31))
        parts[b >> 5] |= U64(ST_SUPER_RIGHT) << U64(2 * (b & 31))


def _pow2_at_least(x):
    c = 1
    while c < x:
        c <<= 1
    return c


def _from_merges(alphabet, merges, n_merges, supers, n_super, ss, sn, info, ln):
    """st__vocab_from_merges from the parts check on (the argument checks are the caller's),
    pass by pass: (offsets, bytes, table, special_ids, rules, super slots, filter, eligible,
    parts, super shift), or None with info set (or, for a quoted special, the array quoted as
    bytes)."""
    base = 512 if alphabet == ST_ALPHABET_UBE else 256
    unit = 2 if alphabet == ST_ALPHABET_UBE else 1
    n_reg = base + n_merges
    n_ord = n_reg + n_super
    if not _check_parts(merges, n_merges, base, info):
        info[I_INPUT] = 0
        return None
    if not _check_parts(supers, n_super, n_reg, info):
        info[I_INPUT] = 2
        return None
    ts = (0, 0, 0, 0)
    if sn:
        ts = _scan(ss, sn, info, 1)
        if ts is None or not _special_ids_check(ss, sn, n_ord, unit, info):
            return None
    scount, sbytes, smax, smax_line = ts
    n_ids = smax + 1 if scount and smax >= n_ord else n_ord
    if n_ids > n_ord + 2 * scount + 65536:
        info[[I_CODE, I_POS, I_INPUT, I_NUM]] = (E_SPARSE_RULES, smax_line, 1, smax)
        return None
    cap, rcap, scap = _pow2_at_least(2 * n_ord), _pow2_at_least(2 * n_merges + 2), _pow2_at_least(2 * n_super + 2)
    sbits = scap.bit_length() - 1
    out = np.zeros(4, np.int64)
    ok, ord_bytes = rules_token_lengths(alphabet, merges, n_merges, supers, n_super, ln, out)
    if not ok:
        info[[I_CODE, I_POS, I_NUM, I_NUM2, I_INPUT]] = (E_LIMIT, out[0], out[1], out[2], out[3])
        return None
    if ord_bytes + sbytes > 0xFFFFFFF0:
        info[[I_CODE, I_POS]] = (E_4GB_RULES, n_merges)
        return None
    nbytes = ord_bytes + sbytes
    offsets = np.zeros(n_ids + 1, np.uint32)
    table = np.zeros(cap, np.uint64)
    special_ids = np.zeros(scount, np.uint32)
    rules = np.zeros(rcap, np.uint64)
    e64 = np.zeros(1, np.uint64)
    if n_super:
        super_slots = np.zeros(scap, np.uint64)
        filt = np.zeros(max(8, scap // 2) // 8, np.uint64)  # 4 bits per slot, whole words
        elig = np.zeros((n_ord + 63) // 64, np.uint64)
        parts = np.zeros((n_ord + 31) // 32, np.uint64)
    else:
        super_slots = filt = elig = parts = e64
    byts = np.zeros(nbytes + 16, np.uint8)
    offsets[1:n_ord + 1] = ln[:n_ord] * unit
    if sn:
        if not _fill_lengths_from(ss, sn, offsets, n_ord, info):
            return None
        if _sorted_special_ids(ss, sn, special_ids) != scount:
            _repeated_special_id(ss, sn, n_ids, info)
            return None
    _prefix(offsets)
    _rule_bytes(offsets, byts, base, unit, merges, n_merges, supers, n_super)
    if sn:
        if _fill_specials(ss, sn, offsets, n_ids, byts, special_ids, 0, n_ord, info) < 0:
            return byts
        scratch = np.zeros(sbytes + 16, np.uint8)
        if not _check_shared(ss, sn, offsets, n_ord, byts, scratch, info):
            return scratch
    _index_ordinary(offsets, byts, nbytes, table, n_ids, n_ord)
    if not _insert_rules(rules, rcap - 1, merges, n_merges, base, False, 0, e64, e64, -1, 0, info):
        info[I_INPUT] = 0
        return None
    if n_super:
        if not _insert_rules(super_slots, scap - 1, supers, n_super, n_reg, True, 64 - sbits, filt, rules, rcap - 1,
                             base, info):
            info[I_INPUT] = 2
            return None
        _parts_bits(supers, n_super, parts)
    info[[I_NIDS, I_NORD, I_NSPEC, I_BYTES, I_MASK, I_NUM, I_NUM2, I_QA]] = (
        n_ids, n_ord, scount, nbytes, cap - 1, rcap - 1, scap - 1, 64 - sbits)
    return offsets, byts, table, special_ids, rules, super_slots, filt, elig, parts


_RULES_MSG_PREFIX = {0: "rule ", 2: "supermerge "}


def vocab_from_merges(alphabet, merges, n_merges, supers, n_super, ss, sn, err):
    """st__vocab_from_merges: (status, Vocab, Rules, Supers), None for each on failure. merges,
    supers: uint32 arrays of pairs (None for none); ss the padded specials."""
    none = (None, None, None)
    alphabet, n_merges, n_super, sn = int(alphabet), int(n_merges), int(n_super), int(sn)  # one kernel type
    if alphabet != ST_ALPHABET_BYTES and alphabet != ST_ALPHABET_UBE:
        return (fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown alphabet"),) + none
    base = 512 if alphabet == ST_ALPHABET_UBE else 256
    if n_merges >= ST_RULES_MAX_IDS - base:
        return (fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, n_merges, "more rules than 2^21 ids hold"),) + none
    if n_super >= ST_RULES_MAX_IDS - base - n_merges:
        return (fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, n_super, "more rules than 2^21 ids hold", line=0,
                     input=2),) + none
    empty = np.zeros(0, np.uint32)
    m = np.ascontiguousarray(merges[:2 * n_merges], np.uint32) if merges is not None else empty
    s = np.ascontiguousarray(supers[:2 * n_super], np.uint32) if supers is not None else empty
    if ss is None:
        ss = np.zeros(16, np.uint8)
    info = np.zeros(INFO_FIELDS, np.int64)
    ln = np.zeros(base + n_merges + n_super, np.uint32)
    got = _from_merges(alphabet, m, n_merges, s, n_super, ss, sn, info, ln)
    code = int(info[I_CODE])
    if code != E_OK:
        pos, num, num2, inp = int(info[I_POS]), int(info[I_NUM]), int(info[I_NUM2]), int(info[I_INPUT])
        if code == E_PARTS:
            st = fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, pos, _RULES_MSG_PREFIX[inp] +
                      "%d: part %d is not below the rule's own id %d" % (pos, num, num2), line=0, input=inp)
        elif code == E_RULE_REPEAT:
            st = fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, pos, _RULES_MSG_PREFIX[inp] + "%d%s%d" % (
                pos, " repeats rule " if num2 else " repeats supermerge ", num), line=0, input=inp)
        elif code == E_LIMIT:
            st = fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, pos, "the tokens reach %d bytes here, over the limit "
                      "%d (16 MiB + 256 bytes a rule)" % (num, num2), line=0, input=inp)
        elif code == E_4GB_RULES:
            st = fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, pos, "the tokens hold 4 GB or more")
        else:
            st = _report(err, info, ss, ss, (None, got))
        return (st,) + none
    offsets, byts, table, special_ids, rules, super_slots, filt, elig, parts = got
    unit = 2 if alphabet == ST_ALPHABET_UBE else 1
    v = Vocab(int(info[I_NIDS]), int(info[I_NORD]), int(info[I_NSPEC]), int(info[I_MASK]), int(info[I_BYTES]),
              offsets, byts, table, special_ids, 0, np.zeros(0, np.uint32), np.arange(256, dtype=np.uint32),
              np.zeros(1, np.uint32), alphabet)
    rs = Rules(rules, int(info[I_NUM]), base)
    if n_super:
        _eligible_bits(offsets, byts, base + n_merges, unit, elig)
        sup = Supers(Rules(super_slots, int(info[I_NUM2]), base + n_merges), n_super, int(info[I_QA]), elig, parts,
                     filt)
    else:
        sup = no_supers()
    return ST_OK, v, rs, sup
