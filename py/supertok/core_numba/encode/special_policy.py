"""Mirrors core_c/src/encode/special_policy.c and special_policy.h: the special-token policy
resolved against an encoding once a call (policy_resolve, in Python: it runs once a call over the
few special strings), the refusal of a text holding a disallowed special anywhere
(check_disallowed, a kernel: it scans the whole text), and the match of an allowed special where
the pipeline cuts the text (special_first_bytes, special_at: kernels the pipeline calls).

The resolved policy (st__policy) is a PL namedtuple: allowed, disallowed (uint64 bit arrays of
n_strings bits; length 0 where C has NULL), any_allowed, any_disallowed, strings (uint8, padded),
ends (uint64): the ST_SPECIAL_BY_TEXT strings, first_disallowed, end_disallowed, n_unknown,
empty_unknown.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_DISALLOWED_SPECIAL, ST_UNIT_NONE, ST_UNIT_BYTE,
                           ST_UNIT_INDEX, ST_KIND_DISALLOWED_SPECIAL, ST_NO_TOKEN, MESSAGE_SIZE, fail)
from ..formats.vocab import vocab_span, vocab_special_string

ST_SPECIAL_ALLOW_ALL, ST_SPECIAL_DISALLOW_REST, ST_SPECIAL_BY_STRING, ST_SPECIAL_BY_TEXT = 1, 2, 4, 8

PL = namedtuple("PL", "allowed disallowed any_allowed any_disallowed strings ends first_disallowed end_disallowed "
                      "n_unknown empty_unknown match normalized any_match any_normalized")
# match: the strings the first pass over the text matches (its earliest match, the longest at one
# place, cuts the text; an allowed one gives its id, another stays text): the allowed ones, but
# for a HuggingFace model every added token not `normalized`. normalized: a HuggingFace model's
# added tokens matched by a second pass over the text between. Length 0 where C has NULL.

_EMPTY_BITS = np.zeros(0, np.uint64)
_EMPTY_STR = np.zeros(16, np.uint8)
_EMPTY_ENDS = np.zeros(0, np.uint64)
NO_POLICY = PL(_EMPTY_BITS, _EMPTY_BITS, 0, 0, _EMPTY_STR, _EMPTY_ENDS, 0, 0, 0, 0, _EMPTY_BITS, _EMPTY_BITS, 0, 0)
ST__ADDED_SPECIAL, ST__ADDED_NORMALIZED = 1, 2  # formats/tokenizer_json.h


class _NoPolicy:
    """special_policy.c's `none`: a policy of zeros (nothing allowed, nothing refused)."""
    allowed = disallowed = strings = ends = None
    n_allowed = n_disallowed = flags = 0


# ---- the vocabulary's special strings: vocab.h's checked accessors (formats/vocab.py) ----
span, special_string = vocab_span, vocab_special_string


def n_strings(v):
    return v.n_special + v.n_extra


# ---- the special strings in the order of their bytes (special_policy.c: why) ----

def special_order_build(v):
    """st__special_order_build: v with special_order, its special strings sorted by their bytes
    (a prefix first), equal bytes by number: (k, start, len) triples; and special_first_bytes,
    the distinct first bytes among them. C keeps them on the handle."""
    entries = []
    for k in range(n_strings(v)):
        ok, _, a, tl = special_string(v, k)
        if ok:  # a string with a bad span is never matched
            entries.append((v.bytes[a:a + tl].tobytes(), k, a, tl))
    entries.sort()
    order = np.array([x for e in entries for x in e[1:]], np.uint32) if entries else np.zeros(0, np.uint32)
    firsts = len({e[0][0] for e in entries})
    return v._replace(special_order=order, special_first_bytes=firsts)


@njit(cache=True, nogil=True, _nrt=False)
def longest_at(v, bits, s, i, length):
    """The longest string of the set bits at s[i .. length): its index in special_order, or -1.
    [lo, hi) is the run of the order beginning with s[i .. i + d), narrowed a byte at a time."""
    o = v.special_order
    b = v.bytes
    best = -1
    lo, hi = 0, o.shape[0] // 3
    d = 0
    while lo < hi and d < length - i:
        while lo < hi and o[3 * lo + 2] == d:  # those of d bytes were looked at
            lo += 1
        c = s[i + d]
        a, z = lo, hi
        while a < z:
            m = a + (z - a) // 2
            if b[o[3 * m + 1] + d] < c:
                a = m + 1
            else:
                z = m
        lo = a
        z = hi
        while a < z:
            m = a + (z - a) // 2
            if b[o[3 * m + 1] + d] <= c:
                a = m + 1
            else:
                z = m
        hi = a
        j = lo
        while j < hi and o[3 * j + 2] == d + 1:
            if bit_get(bits, o[3 * j]):
                best = j
                break
            j += 1
        d += 1
    return best


@njit(cache=True, nogil=True, _nrt=False)
def entry_of(v, p, a, n):
    """The index in special_order of the string whose bytes are p[a .. a + n) (the first by
    number if several), or -1."""
    o = v.special_order
    lo, hi = 0, o.shape[0] // 3
    while lo < hi:  # the first entry not before p
        m = lo + (hi - lo) // 2
        st, ln = o[3 * m + 1], o[3 * m + 2]
        c = 0
        for j in range(min(ln, n)):
            if v.bytes[st + j] != p[a + j]:
                c = -1 if v.bytes[st + j] < p[a + j] else 1
                break
        if c < 0 or (c == 0 and ln < n):
            lo = m + 1
        else:
            hi = m
    if lo < o.shape[0] // 3 and o[3 * lo + 2] == n and _eq(p, a, v.bytes, o[3 * lo + 1], n):
        return lo
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def special_string_number(v, p, a, n):
    """The number of the special string whose bytes are p[a .. a + n) (the first if several),
    or -1."""
    j = entry_of(v, p, a, n)
    return np.int64(v.special_order[3 * j]) if j >= 0 else -1


def _special_index(v, tid):
    ids = v.special_ids
    lo = int(np.searchsorted(ids[:v.n_special], tid)) if v.n_special else 0
    return lo if lo < v.n_special and int(ids[lo]) == tid else -1


def _bit_put(bits, k, on):
    if on:
        bits[k >> 6] |= np.uint64(1 << (k & 63))
    else:
        bits[k >> 6] &= np.uint64(~(1 << (k & 63)) & 0xFFFFFFFFFFFFFFFF)


def _mark(v, lst, n, by_string, bits, on, input_, err):
    n_str = n_strings(v)
    for k in range(n):
        x = int(lst[k])
        if by_string:
            ok = x < n_str and special_string(v, x)[0]
            if ok and bits is not None:
                _bit_put(bits, x, on)
        else:
            i = _special_index(v, x) if 0 <= x < (1 << 32) else -1
            ok = i >= 0 and span(v, x)[0]
            if ok and bits is not None:
                _bit_put(bits, i, on)
                for j in range(v.n_extra):
                    if int(v.extra[3 * j]) == x:
                        _bit_put(bits, v.n_special + j, on)
        if not ok:
            if err is not None:
                err.fail(ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k,
                         "%s%s%d is not a special token of the encoding" % (
                             "allowed" if input_ == 1 else "disallowed", " special string " if by_string else " id ", x),
                         line=0, input=input_, token=None if by_string else x)
            return ST_ERR_INVALID_ARGUMENT
    return ST_OK


def _text_string(sp, k):
    a = int(sp.ends[k - 1]) if k else 0
    return a, int(sp.ends[k]) - a


def _mark_text(v, sp, frm, to, bits):
    unknown = 0
    for k in range(frm, to):
        a, n = _text_string(sp, k)
        i = special_string_number(v, sp.strings, a, n)
        if i < 0:
            unknown += 1
        elif bits is not None:
            _bit_put(bits, i, True)
    return unknown


def _text_form_ok(sp):
    n = sp.n_allowed + sp.n_disallowed
    if sp.allowed is not None or sp.disallowed is not None or (sp.flags & ST_SPECIAL_BY_STRING):
        return False
    if not n:
        return True
    if sp.ends is None:
        return False
    for k in range(1, n):
        if sp.ends[k] < sp.ends[k - 1]:
            return False
    return sp.strings is not None or int(sp.ends[n - 1]) == 0


def policy_resolve(v, sp, err, string_flags=None):
    """st__policy_resolve: (status, PL). string_flags: a HuggingFace model's (enc.hf.string_flags:
    ST__ADDED_* per special string), else None: its added tokens not special are always matched,
    whatever the caller's policy (tokenizers' encode matches every added token; only the special
    ones are the policy's to allow or refuse), and the `normalized` ones in a pass of their own."""
    hf = string_flags is not None
    st, pl = resolve_caller(v, _NoPolicy if hf and sp is None else sp, err)
    if st != ST_OK or not hf or pl.allowed.shape[0] == 0:
        return st, pl
    n_str = n_strings(v)
    words = (n_str + 63) // 64
    allowed, disallowed = pl.allowed, pl.disallowed
    normalized = np.zeros(words, np.uint64)
    match = np.zeros(words, np.uint64)
    for k in range(min(n_str, v.n_special)):
        f = int(string_flags[k])
        if not (f & ST__ADDED_SPECIAL):
            _bit_put(allowed, k, True)
            _bit_put(disallowed, k, False)
        _bit_put(normalized if f & ST__ADDED_NORMALIZED else match, k, True)
    any_disallowed = 1 if (pl.n_unknown > 0 or disallowed.any()) else 0
    return ST_OK, pl._replace(any_allowed=1 if allowed.any() else 0, any_disallowed=any_disallowed,
                              match=match, normalized=normalized, any_match=1 if match.any() else 0,
                              any_normalized=1 if normalized.any() else 0)


def resolve_caller(v, sp, err):
    """The caller's policy (resolve_caller): (status, PL)."""
    if sp is None:
        return ST_OK, NO_POLICY
    flags = sp.flags
    by_text = (flags & ST_SPECIAL_BY_TEXT) != 0
    if (flags & ~(ST_SPECIAL_ALLOW_ALL | ST_SPECIAL_DISALLOW_REST | ST_SPECIAL_BY_STRING | ST_SPECIAL_BY_TEXT)) or (
            not _text_form_ok(sp) if by_text else
            ((sp.allowed is None and sp.n_allowed) or (sp.disallowed is None and sp.n_disallowed))):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "special-token policy"), NO_POLICY
    allow_all = (flags & ST_SPECIAL_ALLOW_ALL) != 0
    by_string = (flags & ST_SPECIAL_BY_STRING) != 0
    strings, ends = _EMPTY_STR, _EMPTY_ENDS
    first_dis = end_dis = n_unknown = 0
    empty_unknown = 0
    any_disallowed = 0
    if by_text:
        if sp.strings is not None:
            strings = sp.strings
        if sp.ends is not None:
            ends = np.ascontiguousarray(sp.ends, np.uint64)
        first_dis = sp.n_allowed
        end_dis = sp.n_allowed + sp.n_disallowed
        n_unknown = _mark_text(v, sp, first_dis, end_dis, None)
        for k in range(first_dis, end_dis):
            if int(sp.ends[k]) == (int(sp.ends[k - 1]) if k else 0):
                empty_unknown = 1
                break
        any_disallowed = 1 if n_unknown > 0 else 0
    else:
        st = ST_OK if allow_all else _mark(v, sp.allowed, sp.n_allowed, by_string, None, True, 1, err)
        if st == ST_OK:
            st = _mark(v, sp.disallowed, sp.n_disallowed, by_string, None, True, 2, err)
        if st != ST_OK:
            return st, NO_POLICY
    n_str = n_strings(v)
    words = (n_str + 63) // 64
    if not words:
        return ST_OK, PL(_EMPTY_BITS, _EMPTY_BITS, 0, any_disallowed, strings, ends, first_dis, end_dis, n_unknown,
                         empty_unknown, _EMPTY_BITS, _EMPTY_BITS, 0, 0)
    rest = (flags & ST_SPECIAL_DISALLOW_REST) and not allow_all
    allowed = np.full(words, 0xFFFFFFFFFFFFFFFF if allow_all else 0, np.uint64)
    if allow_all and (n_str & 63):
        allowed[words - 1] = np.uint64((1 << (n_str & 63)) - 1)
    if allow_all:
        pass
    elif by_text:
        _mark_text(v, sp, 0, sp.n_allowed, allowed)
    else:
        _mark(v, sp.allowed, sp.n_allowed, by_string, allowed, True, 1, None)
    disallowed = ~allowed if rest else np.zeros(words, np.uint64)
    if rest and (n_str & 63):
        disallowed[words - 1] &= np.uint64((1 << (n_str & 63)) - 1)
    if by_text:
        _mark_text(v, sp, first_dis, end_dis, disallowed)
    else:
        _mark(v, sp.disallowed, sp.n_disallowed, by_string, disallowed, True, 2, None)
    any_allowed = 1 if allowed.any() else 0
    any_disallowed = 1 if (n_unknown > 0 or disallowed.any()) else 0
    # the first pass matches the allowed strings (C copies them: here the one array, never changed)
    return ST_OK, PL(allowed, disallowed, any_allowed, any_disallowed, strings, ends, first_dis, end_dis, n_unknown,
                     empty_unknown, allowed, np.zeros(words, np.uint64), any_allowed, 0)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def bit_get(bits, k):
    return (bits[k >> 6] >> np.uint64(k & 63)) & np.uint64(1)


@njit(cache=True, nogil=True, _nrt=False)
def _eq(s, i, q, b, n):
    for j in range(n):
        if s[i + j] != q[b + j]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def disallowed_at(v, pl, s, i, length):
    """The longest disallowed string at s[i..]: (any, src (0: vocab bytes, 1: the policy's
    strings), start, length, id)."""
    any_ = False
    src = 0
    f_a = 0
    f_len = 0
    f_id = ST_NO_TOKEN
    j = longest_at(v, pl.disallowed, s, i, length) if pl.disallowed.shape[0] else -1
    if j >= 0:
        ok, tid, a, tl = special_string(v, v.special_order[3 * j])
        any_ = True
        src = 0
        f_a = a
        f_len = tl
        f_id = tid
    if pl.n_unknown:
        for k in range(pl.first_disallowed, pl.end_disallowed):
            a = np.int64(pl.ends[k - 1]) if k else 0
            tl = np.int64(pl.ends[k]) - a
            if (not any_ or tl > f_len) and tl <= length - i and tl <= 0xFFFFFFFF and (
                    tl == 0 or _eq(s, i, pl.strings, a, tl)) and entry_of(v, pl.strings, a, tl) < 0:
                any_ = True
                src = 1
                f_a = a
                f_len = tl
                f_id = ST_NO_TOKEN
    return any_, src, f_a, f_len, f_id


@njit(cache=True, nogil=True, _nrt=False)
def find_byte(s, i, length, c):
    while i < length and s[i] != c:
        i += 1
    return i


@njit(cache=True, nogil=True, _nrt=False)
def check_disallowed_kernel(v, pl, s, length, first):
    """The first disallowed string in s[0 .. length): (found, at, src, start, len, id)."""
    if not pl.any_disallowed:
        return False, 0, 0, 0, 0, ST_NO_TOKEN
    first[:] = 0
    distinct = special_first_bytes(v, pl.disallowed, first) if pl.disallowed.shape[0] else 0
    only = 0
    if distinct == 1:
        for c in range(256):
            if first[c]:
                only = c
    if pl.n_unknown:
        for k in range(pl.first_disallowed, pl.end_disallowed):
            a = np.int64(pl.ends[k - 1]) if k else 0
            c = pl.strings[a]
            if np.int64(pl.ends[k]) > a and not first[c]:
                first[c] = 1
                distinct += 1
                only = c
    any_ = False
    src = 0
    f_a = 0
    f_len = 0
    f_id = ST_NO_TOKEN
    at = 0
    if pl.empty_unknown:
        any_, src, f_a, f_len, f_id = disallowed_at(v, pl, s, 0, length)
    i = 0
    while not any_ and distinct and i < length:
        if distinct == 1:
            i = find_byte(s, i, length, only)
            if i >= length:
                break
        elif not first[s[i]]:
            i += 1
            continue
        any_, src, f_a, f_len, f_id = disallowed_at(v, pl, s, i, length)
        at = i
        i += 1
    return any_, at, src, f_a, f_len, f_id


def check_disallowed(v, pl, s, length, err):
    """st__check_disallowed: ST_ERR_DISALLOWED_SPECIAL for the first disallowed string in the
    text (the earliest; at one position the longest), else ST_OK."""
    if not pl.any_disallowed:
        return ST_OK
    found, at, src, a, n_found, tid = check_disallowed_kernel(v, pl, s, length, np.zeros(256, np.uint8))
    if not found:
        return ST_OK
    if err is not None:
        q = v.bytes if src == 0 else pl.strings
        n = min(n_found, MESSAGE_SIZE - 1)
        while n < n_found and n > 0 and (q[a + n] & 0xC0) == 0x80:
            n -= 1
        err.fail(ST_ERR_DISALLOWED_SPECIAL, ST_UNIT_BYTE, at, q[a:a + n].tobytes(), token=tid,
                 kind=ST_KIND_DISALLOWED_SPECIAL, length=n_found)
    return ST_ERR_DISALLOWED_SPECIAL


@njit(cache=True, nogil=True, _nrt=False)
def special_at(v, allowed, s, i, length):
    """The allowed special string matching at s[i..], longest first: (id or ST_NO_TOKEN, its
    length, its string number)."""
    j = longest_at(v, allowed, s, i, length)
    if j < 0:
        return ST_NO_TOKEN, 0, 0
    k = v.special_order[3 * j]
    ok, tid, a, tl = special_string(v, k)
    return tid, tl, k


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def special_allowed(pl, k):
    """st__special_allowed: whether special string k is allowed by the policy."""
    return pl.allowed.shape[0] > 0 and bit_get(pl.allowed, k) != 0


@njit(cache=True, nogil=True, _nrt=False)
def special_first_bytes(v, allowed, first):
    """first[c] = 1 for each first byte c of a string in the set; how many are 1. Stops once
    every first byte of the order is seen (tiktoken's specials: at the first)."""
    first[:] = 0
    distinct = 0
    k = 0
    n = v.n_special + v.n_extra
    while k < n and distinct < v.special_first_bytes:
        if bit_get(allowed, k):
            ok, tid, a, tl = special_string(v, k)
            if ok and not first[v.bytes[a]]:
                first[v.bytes[a]] = 1
                distinct += 1
        k += 1
    return distinct
