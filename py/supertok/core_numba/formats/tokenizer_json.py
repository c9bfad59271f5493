"""Mirrors core_c/src/formats/tokenizer_json.c and tokenizer_json.h: HuggingFace tokenizer.json
files of byte-level BPE models, read into a plain description (HfModel) that the encoding
constructor (encode/hf_encoding.py) takes: the tokens' bytes by id, the merges, the added tokens,
and the pre-tokenizer, normalizer and model flags recognised among those the core implements.
Anything else is refused with ST_ERR_MALFORMED_MODEL naming the field and its byte offset, in the
C core's words.

The sections are walked in Python with the JSON reader's calls (formats/json.py), except the
big ones: the vocabulary, the merges, the name table and the assembly of the ids are kernels
over the file's bytes (a Llama 3 file holds 128k tokens and 280k merges), which return a code
and offsets the Python side words as tokenizer_json.c does.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..base.common import ST_OK, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, Err, quoted
from ..base.hash import hash_bytes, mix64
from ..text.utf8 import utf8_decode
from . import json as J
from .json import json_ws, json_next_k, json_colon_k, json_string_k, json_u32_k, json_open_k, MESSAGES

# Added-token flags (tokenizers' AddedToken fields).
ST__ADDED_SPECIAL, ST__ADDED_NORMALIZED, ST__ADDED_LSTRIP, ST__ADDED_RSTRIP, ST__ADDED_SINGLE_WORD = 1, 2, 4, 8, 16
ST__HF_MAX_IDS = (1 << 21) - 1
# The most bytes the tokens a compact image's merges make (not spelled in it) may hold, per byte of
# the image, beyond 64 KiB: the open models' images derive 1.2 a byte at most (Qwen 3: 0.98 MB of
# merged tokens from a 0.81 MB image); a chain of merges each a byte longer than the last would
# derive quadratically many. Each derived byte costs about 8 in the model and the encoding's
# tables (core_c/tests/fuzz_tokenizer_json.c measures it).
ST__HF_COMPACT_DERIVED_PER_BYTE = 8
ST__HF_IGNORE_MERGES, ST__HF_NFC = 1, 2
ST__HF_GAP, ST__HF_TOKEN, ST__HF_ADDED = 0, 1, 2
NOT_BYTE_LEVEL = 3
ST__NO_TOKEN_ID = 0xFFFFFFFF
ST_PATTERN_GPT2, ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2, ST_PATTERN_DEEPSEEK_V3 = 1, 5, 6, 7

# st__hf_model: n_ids; offsets (n_ids + 1), bytes, id_kind (n_ids); merges (3 a merge: left, right,
# made); added: a list of (id, off, len, flags); text: the added contents; pattern; flags.
HfModel = namedtuple("HfModel", "n_ids offsets bytes id_kind n_merges merges n_added added text pattern flags")


# ---- GPT-2's byte-level alphabet ----

def _stands_for_itself(b):
    return 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255


def byte_level_char(b):
    """st__byte_level_char: the character standing for byte b."""
    if _stands_for_itself(b):
        return b
    return 256 + sum(1 for x in range(b) if not _stands_for_itself(x))


def _byte_of_char(cp):
    if cp < 256:
        return cp if _stands_for_itself(cp) else -1
    if cp >= 256 + 68:
        return -1
    k = cp - 256
    for x in range(256):
        if not _stands_for_itself(x):
            if k == 0:
                return x
            k -= 1
    return -1


BYTE_TABLE = np.array([_byte_of_char(cp) for cp in range(324)], np.int16)


@njit(cache=True, nogil=True, inline="always")
def alphabet_byte(table, p, i):
    """(the byte the byte-level character at p[i] stands for, or -1 when the character is not in
    the alphabet; the index after it). p is valid UTF-8 (the JSON reader's strings are)."""
    cp, ln = utf8_decode(p, i)
    return (np.int64(table[cp]) if cp < 324 else np.int64(-1)), i + ln


@njit(cache=True, nogil=True)
def byte_level_decode(p, a, n, table, out, o):
    """Decode UTF-8 p[a .. a + n) (valid: the JSON reader checked it) as byte-level text into
    out[o..] (when out has room); its length, or -1 when a character is outside the alphabet."""
    w = 0
    i = a
    while i < a + n:
        b, i = alphabet_byte(table, p, i)
        if b < 0:
            return -1
        if o >= 0:
            out[o + w] = b
        w += 1
    return w


# ---- the name table: a token's text to its vocabulary entry ----

@njit(cache=True, nogil=True)
def name_find(slots, mask, names, name_off, name_len, p, a, n):
    h = hash_bytes(p, a, n)
    k = np.int64(h & np.uint64(0xFFFFFFFF)) & mask
    while True:
        s = np.int64(slots[k])
        if s == 0:
            return np.int64(ST__NO_TOKEN_ID)
        x = s - 1
        if name_len[x] == n:
            o = np.int64(name_off[x])
            same = True
            for j in range(n):
                if names[o + j] != p[a + j]:
                    same = False
                    break
            if same:
                return x
        k = (k + 1) & mask


@njit(cache=True, nogil=True)
def name_table_k(names, name_off, name_len, count):
    """The name table of the entries: (slots, mask, -1 or the entry whose text came before)."""
    cap = 16
    while cap < 2 * count:
        cap <<= 1
    slots = np.zeros(cap, np.uint32)
    mask = cap - 1
    for x in range(count):
        o = np.int64(name_off[x])
        n = np.int64(name_len[x])
        if name_find(slots, mask, names, name_off, name_len, names, o, n) != ST__NO_TOKEN_ID:
            return slots, mask, x
        h = hash_bytes(names, o, n)
        k = np.int64(h & np.uint64(0xFFFFFFFF)) & mask
        while slots[k]:
            k = (k + 1) & mask
        slots[k] = x + 1
    return slots, mask, -1


# ---- the vocabulary and the merges (kernels) ----

V_OK, V_JSON, V_EMPTY, V_ID_TOO_LARGE, V_NONE = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True)
def _grow32(a, n):
    b = np.empty(2 * a.shape[0] + 16, a.dtype)
    b[:n] = a[:n]
    return b


@njit(cache=True, nogil=True)
def read_vocab_k(s, n, i0):
    """read_vocab's walk: (code, offset, json code, entries, top id, names, name_off, name_len,
    ids, ats)."""
    names = np.empty(n + 16, np.uint8)
    nl = 0
    cap = 1024
    name_off = np.empty(cap, np.uint32)
    name_len = np.empty(cap, np.uint32)
    ids = np.empty(cap, np.uint32)
    ats = np.empty(cap, np.int64)
    count = 0
    top = 0
    code, i = json_open_k(s, n, i0, 123)
    if code:
        return V_JSON, i, code, 0, 0, names, name_off, name_len, ids, ats
    first = True
    while True:
        code, i, more = json_next_k(s, n, i, 125, first)
        first = False
        if code:
            return V_JSON, i, code, 0, 0, names, name_off, name_len, ids, ats
        if not more:
            break
        at = i
        code, q, ln = json_string_k(s, n, i, names, nl, n + 16 - nl)
        if code:
            return V_JSON, q, code, 0, 0, names, name_off, name_len, ids, ats
        i = q
        if ln == 0:
            return V_EMPTY, at, 0, 0, 0, names, name_off, name_len, ids, ats
        code, i = json_colon_k(s, n, i)
        if code:
            return V_JSON, i, code, 0, 0, names, name_off, name_len, ids, ats
        code, q, x = json_u32_k(s, n, i)
        if code:
            return V_JSON, q, code, 0, 0, names, name_off, name_len, ids, ats
        i = q
        if x >= ST__HF_MAX_IDS:
            return V_ID_TOO_LARGE, at, 0, 0, 0, names, name_off, name_len, ids, ats
        if count == name_off.shape[0]:
            name_off = _grow32(name_off, count)
            name_len = _grow32(name_len, count)
            ids = _grow32(ids, count)
            ats = _grow32(ats, count)
        name_off[count] = nl
        name_len[count] = ln
        ids[count] = x
        ats[count] = at
        nl += ln
        if x > top:
            top = x
        count += 1
    if count == 0:
        return V_NONE, i0, 0, 0, 0, names, name_off, name_len, ids, ats
    return V_OK, 0, 0, count, top, names, name_off, name_len, ids, ats


M_OK, M_JSON, M_PAIR, M_SPACES, M_TOO_MANY, M_PART, M_REPEAT = 0, 1, 2, 3, 4, 5, 6


@njit(cache=True, nogil=True)
def repeated_merges_k(merges, count, ats):
    """repeated_merges: a pair that repeats an earlier merge is refused at its offset (tokenizers
    would keep the later rank; the rule table keeps one): an open-addressing table of the pairs.
    (the first merge k repeating one, the merge it repeats), or (-1, 0)."""
    cap = 16
    while cap < 2 * count:
        cap <<= 1
    slots = np.zeros(cap, np.uint64)
    mask = np.uint64(cap - 1)
    for k in range(count):
        key = (np.uint64(merges[3 * k]) << np.uint64(21)) | np.uint64(merges[3 * k + 1])  # ids below 2^21
        x = mix64(key) & mask
        while slots[x] and (slots[x] >> np.uint64(22)) != key:
            x = (x + np.uint64(1)) & mask
        if slots[x]:
            return k, np.int64(slots[x] & np.uint64(0x3FFFFF)) - 1
        slots[x] = (key << np.uint64(22)) | np.uint64(k + 1)  # k + 1 < 2^22
    return -1, 0


@njit(cache=True, nogil=True)
def read_merges_k(s, n, i0, slots, mask, names, name_off, name_len, ids):
    """read_merges' walk: (code, offset, json code, merge index k, count, merges, scratch, part
    (1 left, 2 right, 3 joined), part offset, part length)."""
    scratch = np.empty(2 * 65536 + 16, np.uint8)
    merges = np.empty(3 * 4096, np.uint32)
    ats = np.empty(4096, np.int64)
    count = 0
    code, i = json_open_k(s, n, i0, 91)
    if code:
        return M_JSON, i, code, 0, 0, merges, scratch, 0, 0, 0
    k = 0
    while True:
        code, i, more = json_next_k(s, n, i, 93, k == 0)
        if code:
            return M_JSON, i, code, k, count, merges, scratch, 0, 0, 0
        if not more:
            break
        at = i
        p = json_ws(s, n, i)
        i = p
        sl = 0
        if p < n and s[p] == 91:  # ["a", "b"]
            code, i = json_open_k(s, n, i, 91)
            if code:
                return M_JSON, i, code, k, count, merges, scratch, 0, 0, 0
            code, i, m2 = json_next_k(s, n, i, 93, True)
            if code:
                return M_JSON, i, code, k, count, merges, scratch, 0, 0, 0
            off1 = len1 = off2 = len2 = 0
            parts = 0  # exactly two strings, then the closing bracket
            if m2:
                code, q, ln = json_string_k(s, n, i, scratch, sl, 0)
                if code:
                    return M_JSON, q, code, k, count, merges, scratch, 0, 0, 0
                while scratch.shape[0] - sl < ln + 16:
                    scratch = _grow32(scratch, sl)
                json_string_k(s, n, i, scratch, sl, ln)
                i = q
                off1, len1 = sl, ln
                sl += ln
                parts = 1
                code, i, m2 = json_next_k(s, n, i, 93, False)
                if code:
                    return M_JSON, i, code, k, count, merges, scratch, 0, 0, 0
            if m2:
                code, q, ln = json_string_k(s, n, i, scratch, sl, 0)
                if code:
                    return M_JSON, q, code, k, count, merges, scratch, 0, 0, 0
                while scratch.shape[0] - sl < ln + 16:
                    scratch = _grow32(scratch, sl)
                json_string_k(s, n, i, scratch, sl, ln)
                i = q
                off2, len2 = sl, ln
                sl += ln
                parts = 2
                code, i, m2 = json_next_k(s, n, i, 93, False)
                if code:
                    return M_JSON, i, code, k, count, merges, scratch, 0, 0, 0
            if m2 or parts != 2:
                return M_PAIR, at, 0, k, count, merges, scratch, 0, 0, 0
        else:  # "a b": exactly one space
            code, q, ln = json_string_k(s, n, i, scratch, 0, 0)
            if code:
                return M_JSON, q, code, k, count, merges, scratch, 0, 0, 0
            while scratch.shape[0] < 2 * ln + 16:
                scratch = _grow32(scratch, 0)
            json_string_k(s, n, i, scratch, 0, ln)
            i = q
            sp = ln
            spaces = 0
            for x in range(ln):
                if scratch[x] == 32:
                    spaces += 1
                    sp = x
            if spaces != 1:
                return M_SPACES, at, 0, k, count, merges, scratch, 0, 0, ln
            sl = ln
            off1, len1, off2, len2 = 0, sp, sp + 1, ln - sp - 1
        if k >= ST__HF_MAX_IDS:
            return M_TOO_MANY, at, 0, k, count, merges, scratch, 0, 0, 0
        l = name_find(slots, mask, names, name_off, name_len, scratch, off1, len1)
        if l == ST__NO_TOKEN_ID:
            return M_PART, at, 0, k, count, merges, scratch, 1, off1, len1
        r = name_find(slots, mask, names, name_off, name_len, scratch, off2, len2)
        if r == ST__NO_TOKEN_ID:
            return M_PART, at, 0, k, count, merges, scratch, 2, off2, len2
        while scratch.shape[0] - sl < len1 + len2 + 16:
            scratch = _grow32(scratch, sl)
        jo = sl
        for x in range(len1):
            scratch[jo + x] = scratch[off1 + x]
        for x in range(len2):
            scratch[jo + len1 + x] = scratch[off2 + x]
        made = name_find(slots, mask, names, name_off, name_len, scratch, jo, len1 + len2)
        if made == ST__NO_TOKEN_ID:
            return M_PART, at, 0, k, count, merges, scratch, 3, jo, len1 + len2
        if 3 * count + 3 > merges.shape[0]:
            merges = _grow32(merges, 3 * count)
        merges[3 * count] = ids[l]
        merges[3 * count + 1] = ids[r]
        merges[3 * count + 2] = ids[made]
        if count + 1 > ats.shape[0]:
            ats2 = np.empty(2 * ats.shape[0], np.int64)
            ats2[:count] = ats[:count]
            ats = ats2
        ats[count] = at
        count += 1
        k += 1
    rk, earlier = repeated_merges_k(merges, count, ats)
    if rk >= 0:
        return M_REPEAT, ats[rk], 0, rk, count, merges, scratch, earlier, 0, 0
    return M_OK, 0, 0, k, count, merges, scratch, 0, 0, 0


# ---- assembling the ids (kernels) ----

@njit(cache=True, nogil=True)
def assemble_ids_k(names, name_off, name_len, ids, count, table, id_kind, lens):
    """Which id is what and each id's length: -1, or the entry whose id is given twice."""
    scratch = np.empty(1, np.uint8)
    for x in range(count):
        tid = np.int64(ids[x])
        if id_kind[tid]:
            return x
        ln = byte_level_decode(names, np.int64(name_off[x]), np.int64(name_len[x]), table, scratch, -1)
        id_kind[tid] = NOT_BYTE_LEVEL if ln < 0 else ST__HF_TOKEN
        lens[tid] = name_len[x] if ln < 0 else ln
    return -1


@njit(cache=True, nogil=True)
def not_byte_level_k(ids, count, id_kind):
    for x in range(count):
        if id_kind[ids[x]] == NOT_BYTE_LEVEL:
            return x
    return -1


@njit(cache=True, nogil=True)
def fill_bytes_k(names, name_off, name_len, ids, count, table, id_kind, offsets, out):
    n_ids = id_kind.shape[0]
    for tid in range(n_ids):
        offsets[tid + 1] += offsets[tid]
    for x in range(count):
        tid = np.int64(ids[x])
        if id_kind[tid] == ST__HF_TOKEN:
            byte_level_decode(names, np.int64(name_off[x]), np.int64(name_len[x]), table, out,
                              np.int64(offsets[tid]))


@njit(cache=True, nogil=True)
def merges_parts_k(merges, count, id_kind):
    for k in range(count):
        for q in range(3):
            if id_kind[merges[3 * k + q]] != ST__HF_TOKEN:
                return k
    return -1


# ---- the reader ----

class Reader:
    __slots__ = ("j", "err", "names", "name_off", "name_len", "ids", "ats", "count", "slots", "mask", "merges",
                 "n_merges", "added", "text", "at", "has", "pattern", "flags")

    def __init__(self, s, n, err):
        self.j = J.Json(s, n, err)
        self.err = err
        self.at = {}
        self.has = {}
        self.added = []
        self.text = bytearray()
        self.pattern = 0
        self.flags = 0


def fail(r, at, where, what):
    """An error naming the field: "<where>: <what>" at byte offset `at`."""
    r.err.fail(ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, where + ": " + what)
    return ST_ERR_MALFORMED_MODEL


def in_field(r, st, where):
    """Prefix the report the JSON reader left with the field's name."""
    if st == ST_OK:
        return st
    msg = bytes(r.err.message)
    w = where.encode()
    # a report naming the field already (this reader's own) keeps its name
    if msg[:len(w)] == w and msg[len(w):len(w) + 1] in (b":", b"[", b"."):
        return st
    at = r.err.offset
    r.err.fail(st, ST_UNIT_BYTE, at, where.encode() + b": " + msg)
    return st


def _cstr(b):
    """A C string's view of bytes (up to a NUL)."""
    return b.split(b"\0", 1)[0]


def short_string(r, i, cap):
    """(status, new i, the name as C sees it, fits)."""
    st, i2, b, n = J.string(r.j, i, cap - 1)
    if st != ST_OK:
        return st, i, b"", False
    return ST_OK, i2, _cstr(b), n < cap


def read_string(r, i, buf):
    """Read the string at i appended to buf (a bytearray): (status, new i, off, len)."""
    st, i2, b, n = J.string(r.j, i, 0)
    if st != ST_OK:
        return st, i, 0, 0
    st, i2, b, n = J.string(r.j, i, n)
    off = len(buf)
    buf += b
    return ST_OK, i2, off, n


_TOP = {b"model": "model", b"added_tokens": "added", b"normalizer": "normalizer", b"pre_tokenizer": "pre",
        b"post_processor": "post", b"decoder": "decoder"}


def read_top(r):
    j = r.j
    st, i = J.open_(j, 0, "{")
    if st != ST_OK:
        return in_field(r, st, "tokenizer.json")
    first = 1
    while True:
        st, i, more = J.next_(j, i, "}", first)
        first = 0
        if st != ST_OK:
            return in_field(r, st, "tokenizer.json")
        if not more:
            break
        key_at = i
        st, i, key, fits = short_string(r, i, 32)
        if st != ST_OK:
            return in_field(r, st, "tokenizer.json")
        st, i = J.colon(j, i)
        if st != ST_OK:
            return in_field(r, st, "tokenizer.json")
        at = J.ws(j, i)
        if fits and key in _TOP:
            r.at[_TOP[key]] = at
            r.has[_TOP[key]] = 1
        elif fits and key in (b"truncation", b"padding"):
            isnull, _ = J.null(j, i)
            if not isnull:
                return fail(r, at, key.decode(), "only null is supported (truncation and padding change the ids)")
        elif not (fits and key == b"version"):
            fail(r, key_at, "tokenizer.json", "unknown field ")
            st2, _, name, n = J.string(J.Json(j.s, j.n, None), key_at, 64)
            if st2 == ST_OK:
                r.err.message = (r.err.message + quoted(name[:min(n, 64)]).encode())[:119]
            return ST_ERR_MALFORMED_MODEL
        st, i = J.skip(j, i)
        if st != ST_OK:
            return in_field(r, st, key.decode("utf-8", "replace"))
    i = J.ws(j, i)
    if i != j.n:
        return fail(r, i, "tokenizer.json", "text after the closing brace")
    if not r.has.get("model"):
        return fail(r, 0, "tokenizer.json", "no model")
    return ST_OK


def null_or_empty(r, i, where):
    isnull, _ = J.null(r.j, i)
    if isnull:
        return ST_OK
    at = J.ws(r.j, i)
    st, _, _, n = J.string(r.j, i, 0)
    if st != ST_OK or n:
        return fail(r, at, where, 'only null or "" is supported')
    return ST_OK


def read_model(r):
    j = r.j
    i = r.at["model"]
    st, i = J.open_(j, i, "{")
    if st != ST_OK:
        return in_field(r, st, "model")
    typed = False
    first = 1
    while True:
        st, i, more = J.next_(j, i, "}", first)
        first = 0
        if st != ST_OK:
            return in_field(r, st, "model")
        if not more:
            break
        key_at = i
        st, i, key, fits = short_string(r, i, 40)
        if st != ST_OK:
            return in_field(r, st, "model")
        st, i = J.colon(j, i)
        if st != ST_OK:
            return in_field(r, st, "model")
        at = J.ws(j, i)
        if not fits:
            return fail(r, key_at, "model", "unknown field")
        if key == b"type":
            st, _, t, fits = short_string(r, i, 16)
            if st != ST_OK:
                return in_field(r, st, "model.type")
            if not fits or t != b"BPE":
                return fail(r, at, "model.type", "only BPE models are supported")
            typed = True
        elif key == b"dropout":
            isnull, _ = J.null(j, i)
            if not isnull:
                return fail(r, at, "model.dropout", "only null is supported (dropout makes ids random)")
        elif key in (b"continuing_subword_prefix", b"end_of_word_suffix"):
            st = null_or_empty(r, i, "model." + key.decode())
            if st != ST_OK:
                return st
        elif key == b"ignore_merges":
            st, _, b = J.boolean(j, i)
            if st != ST_OK:
                return in_field(r, st, "model.ignore_merges")
            if b:
                r.flags |= ST__HF_IGNORE_MERGES
        elif key == b"vocab":
            r.at["vocab"] = at
            r.has["vocab"] = 1
        elif key == b"merges":
            r.at["merges"] = at
            r.has["merges"] = 1
        elif key not in (b"unk_token", b"fuse_unk", b"byte_fallback"):
            return fail(r, key_at, "model", "unknown field " + quoted(key))
        st, i = J.skip(j, i)
        if st != ST_OK:
            return in_field(r, st, "model")
    if not typed:
        return fail(r, r.at["model"], "model", 'no "type" (only BPE models are supported)')
    if not r.has.get("vocab"):
        return fail(r, r.at["model"], "model", "no vocab")
    if not r.has.get("merges"):
        return fail(r, r.at["model"], "model", "no merges")
    return ST_OK


def _json_fail(r, at, code, where):
    J.json_error(r.j, int(at), MESSAGES[code])
    return in_field(r, ST_ERR_MALFORMED_MODEL, where)


def read_vocab(r):
    j = r.j
    code, at, jc, count, top, names, name_off, name_len, ids, ats = read_vocab_k(j.s, j.n, r.at["vocab"])
    if code == V_JSON:
        return _json_fail(r, at, jc, "model.vocab"), 0
    if code == V_EMPTY:
        return fail(r, int(at), "model.vocab", "an empty token"), 0
    if code == V_ID_TOO_LARGE:
        return fail(r, int(at), "model.vocab", "an id above the 2097150 the core can hold"), 0
    if code == V_NONE:
        return fail(r, r.at["vocab"], "model.vocab", "no tokens"), 0
    r.names, r.name_off, r.name_len, r.ids, r.ats, r.count = names, name_off, name_len, ids, ats, int(count)
    slots, mask, dup = name_table_k(names, name_off, name_len, r.count)
    r.slots, r.mask = slots, int(mask)
    if dup >= 0:
        o, n = int(name_off[dup]), int(name_len[dup])
        return fail(r, int(ats[dup]), "model.vocab", "the token " + quoted(names[o:o + n]) + " appears twice"), 0
    return ST_OK, int(top)


_PARTS = {1: "the left part", 2: "the right part", 3: "the joined token"}


def read_merges(r):
    j = r.j
    code, at, jc, k, count, merges, scratch, part, po, pl = read_merges_k(
        j.s, j.n, r.at["merges"], r.slots, r.mask, r.names, r.name_off, r.name_len, r.ids)
    at, k = int(at), int(k)
    if code == M_REPEAT:  # refused at the merge's offset, as the C core: no field prefix
        r.err.fail(ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, f"model.merges[{k}]: the pair repeats merge {int(part)}")
        return ST_ERR_MALFORMED_MODEL
    if code == M_JSON:
        J.json_error(j, at, MESSAGES[jc])
    elif code == M_PAIR:
        fail(r, at, "model.merges", "a merge is a pair of two tokens")
    elif code == M_SPACES:
        r.err.fail(ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "model.merges[%d]: %s is not two tokens separated by one "
                   "space" % (k, quoted(scratch[:int(pl)])))
    elif code == M_TOO_MANY:
        fail(r, at, "model.merges", "more than 2097150 merges")
    elif code == M_PART:
        r.err.fail(ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "model.merges[%d]: %s %s is not in the vocabulary"
                   % (k, _PARTS[int(part)], quoted(scratch[int(po):int(po) + int(pl)])))
    if code != M_OK:
        return in_field(r, ST_ERR_MALFORMED_MODEL, "model.merges")
    r.merges = merges[:3 * int(count)].copy()
    r.n_merges = int(count)
    return ST_OK


_ADDED_BITS = {b"special": ST__ADDED_SPECIAL, b"normalized": ST__ADDED_NORMALIZED, b"lstrip": ST__ADDED_LSTRIP,
               b"rstrip": ST__ADDED_RSTRIP, b"single_word": ST__ADDED_SINGLE_WORD}


def read_added(r):
    if not r.has.get("added"):
        return ST_OK
    j = r.j
    st, i = J.open_(j, r.at["added"], "[")
    if st != ST_OK:
        return in_field(r, st, "added_tokens")
    k = 0
    while True:
        st, i, more = J.next_(j, i, "]", k == 0)
        if st != ST_OK:
            return in_field(r, st, "added_tokens")
        if not more:
            break
        at = i
        tid = off = ln = flags = 0
        has_id = has_content = False
        st, i = J.open_(j, i, "{")
        if st != ST_OK:
            return in_field(r, st, "added_tokens")
        first = 1
        while True:
            st, i, m2 = J.next_(j, i, "}", first)
            first = 0
            if st != ST_OK:
                return in_field(r, st, "added_tokens")
            if not m2:
                break
            key_at = i
            st, i, key, fits = short_string(r, i, 16)
            if st != ST_OK:
                return in_field(r, st, "added_tokens")
            st, i = J.colon(j, i)
            if st != ST_OK:
                return in_field(r, st, "added_tokens")
            if fits and key == b"id":
                st, i, tid = J.u32(j, i)
                if st != ST_OK:
                    return in_field(r, st, "added_tokens")
                if tid >= ST__HF_MAX_IDS:
                    return fail(r, key_at, "added_tokens", "an id above the 2097150 the core can hold")
                has_id = True
                continue
            if fits and key == b"content":
                st, i, off, ln = read_string(r, i, r.text)
                if st != ST_OK:
                    return in_field(r, st, "added_tokens")
                has_content = True
                continue
            bit = _ADDED_BITS.get(key) if fits else None
            if bit is None:
                return fail(r, key_at, "added_tokens", "unknown field")
            st, i, b = J.boolean(j, i)
            if st != ST_OK:
                return in_field(r, st, "added_tokens")
            if b:
                flags |= bit
        if not has_id or not has_content:
            return fail(r, at, "added_tokens", "a token with no content" if has_id else "a token with no id")
        if not ln:
            return fail(r, at, "added_tokens", "a token with empty content")
        if flags & ST__ADDED_SINGLE_WORD:
            return fail(r, at, "added_tokens", quoted(r.text[off:off + ln]) + " sets single_word, which is not "
                        "supported yet")
        r.added.append((tid, off, ln, flags))
        k += 1
    return ST_OK


# ---- the pipeline's objects: normalizer, pre-tokenizer, decoder, post-processor ----

def member(r, at, where, key):
    """(status, position of member key's value or None)."""
    j = r.j
    st, i = J.open_(j, at, "{")
    if st != ST_OK:
        return in_field(r, st, where), None
    first = 1
    while True:
        st, i, more = J.next_(j, i, "}", first)
        first = 0
        if st != ST_OK:
            return in_field(r, st, where), None
        if not more:
            return ST_OK, None
        st, i, k, fits = short_string(r, i, 40)
        if st != ST_OK:
            return in_field(r, st, where), None
        st, i = J.colon(j, i)
        if st != ST_OK:
            return in_field(r, st, where), None
        if fits and k == key:
            return ST_OK, J.ws(j, i)
        st, i = J.skip(j, i)
        if st != ST_OK:
            return in_field(r, st, where), None


def type_of(r, at, where):
    st, pos = member(r, at, where, b"type")
    if st != ST_OK:
        return st, b""
    if pos is None:
        return fail(r, at, where, 'no "type"'), b""
    st, _, t, fits = short_string(r, pos, 32)
    if st != ST_OK:
        return in_field(r, st, where), b""
    return ST_OK, t if fits else b""


def flag_of(r, at, where, key):
    st, pos = member(r, at, where, key)
    if st != ST_OK:
        return st, 0
    if pos is None:
        return ST_OK, 0
    st, _, v = J.boolean(r.j, pos)
    return in_field(r, st, where), v


def unsupported_type(r, at, where, t):
    return fail(r, at, where, "type " + quoted(t) + " is not supported")


def read_normalizer(r):
    if not r.has.get("normalizer"):
        return ST_OK
    at0 = r.at["normalizer"]
    isnull, _ = J.null(r.j, at0)
    if isnull:
        return ST_OK
    st, t = type_of(r, at0, "normalizer")
    if st != ST_OK:
        return st
    if t == b"NFC":
        r.flags |= ST__HF_NFC
        return ST_OK
    if t != b"Sequence":
        return unsupported_type(r, at0, "normalizer", t)
    st, pos = member(r, at0, "normalizer", b"normalizers")
    if st != ST_OK:
        return st
    if pos is None:
        return fail(r, at0, "normalizer", 'a Sequence with no "normalizers"')
    st, pos = J.open_(r.j, pos, "[")
    if st != ST_OK:
        return in_field(r, st, "normalizer.normalizers")
    first = 1
    while True:
        st, pos, more = J.next_(r.j, pos, "]", first)
        first = 0
        if st != ST_OK:
            return in_field(r, st, "normalizer.normalizers")
        if not more:
            return ST_OK
        at = pos
        st, t = type_of(r, at, "normalizer.normalizers")
        if st != ST_OK:
            return st
        if t != b"NFC":
            return unsupported_type(r, at, "normalizer.normalizers", t)
        r.flags |= ST__HF_NFC
        st, pos = J.skip(r.j, pos)
        if st != ST_OK:
            return in_field(r, st, "normalizer.normalizers")


# The pre-tokenizers the core implements, as the files write them (tokenizer_json.c's literals).
LLAMA3_RE = (b"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
             b"|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2_RE = (b"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
            b"|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
DEEPSEEK_RE = (
    b"\\p{N}{1,3}",
    b"[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+",
    b"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+"
    b"[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")

MAX_STEPS = 8


class Step:
    __slots__ = ("split", "re", "use_regex", "at")

    def __init__(self, at):
        self.split, self.re, self.use_regex, self.at = 0, b"", 0, at


def read_step(r, at, steps, depth):
    st, t = type_of(r, at, "pre_tokenizer")
    if st != ST_OK:
        return st
    j = r.j
    if t == b"Sequence":
        if depth > 2:
            return fail(r, at, "pre_tokenizer", "Sequences nested too deep")
        st, pos = member(r, at, "pre_tokenizer", b"pretokenizers")
        if st != ST_OK:
            return st
        if pos is None:
            return fail(r, at, "pre_tokenizer", 'a Sequence with no "pretokenizers"')
        st, pos = J.open_(j, pos, "[")
        if st != ST_OK:
            return in_field(r, st, "pre_tokenizer.pretokenizers")
        first = 1
        while True:
            st, pos, more = J.next_(j, pos, "]", first)
            first = 0
            if st != ST_OK:
                return in_field(r, st, "pre_tokenizer")
            if not more:
                return ST_OK
            st = read_step(r, pos, steps, depth + 1)
            if st != ST_OK:
                return st
            st, pos = J.skip(j, pos)
            if st != ST_OK:
                return in_field(r, st, "pre_tokenizer")
    if len(steps) >= MAX_STEPS:
        return fail(r, at, "pre_tokenizer", "more steps than any supported pre-tokenizer has")
    s = Step(at)
    steps.append(s)
    if t == b"ByteLevel":
        s.split = 0
        st, apf = flag_of(r, at, "pre_tokenizer", b"add_prefix_space")
        if st != ST_OK:
            return st
        if apf:
            return fail(r, at, "pre_tokenizer", "ByteLevel with add_prefix_space true is not supported")
        s.use_regex = 1
        st, pos = member(r, at, "pre_tokenizer", b"use_regex")
        if st != ST_OK:
            return st
        if pos is not None:
            st, _, s.use_regex = J.boolean(j, pos)
            if st != ST_OK:
                return in_field(r, st, "pre_tokenizer")
        return ST_OK
    if t != b"Split":
        return unsupported_type(r, at, "pre_tokenizer", t)
    s.split = 1
    st, pos = member(r, at, "pre_tokenizer", b"behavior")
    if st != ST_OK:
        return st
    fits = False
    behavior = b""
    if pos is not None:
        st, _, behavior, fits = short_string(r, pos, 24)
        if st != ST_OK:
            return in_field(r, st, "pre_tokenizer")
    if pos is None or not fits or behavior != b"Isolated":
        return fail(r, at, "pre_tokenizer", "a Split whose behavior is not Isolated is not supported")
    st, invert = flag_of(r, at, "pre_tokenizer", b"invert")
    if st != ST_OK:
        return st
    if invert:
        return fail(r, at, "pre_tokenizer", "a Split with invert true is not supported")
    st, pos = member(r, at, "pre_tokenizer", b"pattern")
    if st != ST_OK:
        return st
    if pos is None:
        return fail(r, at, "pre_tokenizer", "a Split with no pattern")
    st, q = member(r, pos, "pre_tokenizer.pattern", b"Regex")
    if st != ST_OK:
        return st
    if q is None:
        return fail(r, pos, "pre_tokenizer.pattern", "only a Regex pattern is supported")
    buf = bytearray()
    st, _, off, ln = read_string(r, q, buf)
    if st != ST_OK:
        return in_field(r, st, "pre_tokenizer.pattern")
    s.re = bytes(buf)
    return ST_OK


def _step_is(s, re):
    return s.split and s.re == re


def read_pre_tokenizer(r):
    has = r.has.get("pre")
    at0 = r.at.get("pre", 0)
    isnull = 0
    if has:
        isnull, _ = J.null(r.j, at0)
    if not has or isnull:
        return fail(r, at0 if has else 0, "pre_tokenizer", "none: a byte-level BPE model needs ByteLevel")
    steps = []
    st = read_step(r, at0, steps, 0)
    if st != ST_OK:
        return st
    n = len(steps)
    last = n > 0 and not steps[n - 1].split
    r.pattern = 0
    if n == 1 and last and steps[0].use_regex:
        r.pattern = ST_PATTERN_GPT2
    elif n == 2 and last and not steps[1].use_regex and _step_is(steps[0], LLAMA3_RE):
        r.pattern = ST_PATTERN_LLAMA3
    elif n == 2 and last and not steps[1].use_regex and _step_is(steps[0], QWEN2_RE):
        r.pattern = ST_PATTERN_QWEN2
    elif (n == 4 and last and not steps[3].use_regex and _step_is(steps[0], DEEPSEEK_RE[0])
          and _step_is(steps[1], DEEPSEEK_RE[1]) and _step_is(steps[2], DEEPSEEK_RE[2])):
        r.pattern = ST_PATTERN_DEEPSEEK_V3
    if r.pattern:
        return ST_OK
    if not last:
        return fail(r, at0, "pre_tokenizer", "it does not end with ByteLevel (a byte-level model needs it)")
    for s in steps:
        if not s.split:
            continue
        if s.re in (LLAMA3_RE, QWEN2_RE) or s.re in DEEPSEEK_RE:
            continue
        return fail(r, s.at, "pre_tokenizer", "the Split regex " + quoted(s.re) + " is not one the core implements "
                    "(Llama 3's, Qwen 2's, DeepSeek V3's)")
    return fail(r, at0, "pre_tokenizer", "these steps are not a pre-tokenizer the core implements (GPT-2's ByteLevel, "
                "Llama 3's, Qwen 2's or DeepSeek V3's Split then ByteLevel)")


def read_decoder(r):
    has = r.has.get("decoder")
    at0 = r.at.get("decoder", 0)
    isnull = 0
    if has:
        isnull, _ = J.null(r.j, at0)
    if not has or isnull:
        return fail(r, at0 if has else 0, "decoder", "none (tokenizers would join the tokens with spaces): "
                    "only ByteLevel is supported")
    st, t = type_of(r, at0, "decoder")
    if st != ST_OK:
        return st
    return ST_OK if t == b"ByteLevel" else unsupported_type(r, at0, "decoder", t)


def read_post(r):
    if not r.has.get("post"):
        return ST_OK
    at0 = r.at["post"]
    isnull, _ = J.null(r.j, at0)
    if isnull:
        return ST_OK
    st, t = type_of(r, at0, "post_processor")
    if st != ST_OK:
        return st
    if t in (b"ByteLevel", b"TemplateProcessing", b"Sequence"):
        return ST_OK
    return unsupported_type(r, at0, "post_processor", t)


# ---- putting it together ----

def decodes_otherwise(p):
    """The content decodes, under the ByteLevel decoder, to other bytes than its own: every
    character is in the alphabet and one is not plain ASCII."""
    other = False
    s = np.frombuffer(bytes(p) + b"\0" * 4, np.uint8)
    i, n = 0, len(p)
    while i < n:
        at = i
        b, i = alphabet_byte(BYTE_TABLE, s, i)
        if b < 0:
            return False  # outside the alphabet: its UTF-8 bytes are what it decodes to
        if i - at > 1 or b != p[at]:
            other = True
    return other


def _find(r, p):
    a = np.frombuffer(bytes(p) + b"\0" * 16, np.uint8)
    return int(name_find(r.slots, r.mask, r.names, r.name_off, r.name_len, a, 0, len(p)))


def assemble(r, max_vocab_id):
    top = max_vocab_id
    for t in r.added:
        top = max(top, t[0])
    n_entries, n_added = r.count, len(r.added)
    if top + 1 > 2 * (n_entries + n_added) + 65536:
        return fail(r, r.at["vocab"], "model.vocab", "the ids leave most numbers below the largest unused"), None
    n_ids = top + 1
    id_kind = np.zeros(n_ids, np.uint8)
    lens = np.zeros(n_ids + 1, np.uint32)  # offsets[id + 1] before the running sum
    x = assemble_ids_k(r.names, r.name_off, r.name_len, r.ids, n_entries, BYTE_TABLE, id_kind, lens[1:])
    if x >= 0:
        return fail(r, int(r.ats[x]), "model.vocab", "id %d is given to two tokens" % int(r.ids[x])), None
    text = bytes(r.text)
    seen = set()
    for (tid, off, ln, flags) in r.added:
        c = text[off:off + ln]
        kind = int(id_kind[tid])
        if kind == ST__HF_ADDED:
            return fail(r, r.at["added"], "added_tokens", "two added tokens have one id"), None
        if kind == ST__HF_TOKEN:
            return fail(r, r.at["added"], "added_tokens", quoted(c) + " has the id of a byte-level token of the "
                        "vocabulary, which is not supported"), None
        if kind == NOT_BYTE_LEVEL:
            x = _find(r, c)
            if x == ST__NO_TOKEN_ID or int(r.ids[x]) != tid:
                return fail(r, r.at["added"], "added_tokens", quoted(c) + " has the id of another vocabulary token"), None
        if decodes_otherwise(c):
            return fail(r, r.at["added"], "added_tokens", quoted(c) + " would decode to other text than its own under "
                        "ByteLevel, which is not supported"), None
        if c in seen:
            return fail(r, r.at["added"], "added_tokens", quoted(c) + " is added twice"), None
        seen.add(c)
        id_kind[tid] = ST__HF_ADDED
        lens[tid + 1] = ln
    x = not_byte_level_k(r.ids, n_entries, id_kind)
    if x >= 0:
        o, n = int(r.name_off[x]), int(r.name_len[x])
        return fail(r, int(r.ats[x]), "model.vocab", "the token " + quoted(r.names[o:o + n]) + " is not byte-level "
                    "text and no added token, which is not supported"), None
    offsets = lens
    total = int(lens.sum(dtype=np.uint64))
    out = np.zeros(total + 8, np.uint8)
    fill_bytes_k(r.names, r.name_off, r.name_len, r.ids, n_entries, BYTE_TABLE, id_kind, offsets, out)
    for (tid, off, ln, flags) in r.added:
        a = int(offsets[tid])
        out[a:a + ln] = np.frombuffer(text[off:off + ln], np.uint8)
    for b in range(256):
        cp = byte_level_char(b)
        u = bytes([cp]) if cp < 0x80 else bytes([0xC0 | (cp >> 6), 0x80 | (cp & 0x3F)])
        if _find(r, u) == ST__NO_TOKEN_ID:
            return fail(r, r.at["vocab"], "model.vocab", "byte %d has no token (%s): a byte-level vocabulary needs "
                        "all 256" % (b, quoted(u))), None
    k = merges_parts_k(r.merges, r.n_merges, id_kind)
    if k >= 0:
        r.err.fail(ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, r.at["merges"],
                   "model.merges[%d]: a part is an added token outside the byte-level alphabet" % k)
        return ST_ERR_MALFORMED_MODEL, None
    added = [(tid, off, ln, flags) for (tid, off, ln, flags) in r.added]
    return ST_OK, HfModel(n_ids, offsets, out, id_kind, r.n_merges, r.merges, n_added, added, text, r.pattern, r.flags)


def hf_model_parse(s, n, err):
    """st__hf_model_parse: (status, HfModel or None). s: the file's bytes, padded."""
    if err is None:
        err = Err()
    r = Reader(s, n, err)
    st = read_top(r)
    if st == ST_OK:
        st = read_model(r)
    top = 0
    if st == ST_OK:
        st, top = read_vocab(r)
    if st == ST_OK:
        st = read_merges(r)
    if st == ST_OK:
        st = read_added(r)
    if st == ST_OK:
        st = read_normalizer(r)
    if st == ST_OK:
        st = read_pre_tokenizer(r)
    if st == ST_OK:
        st = read_decoder(r)
    if st == ST_OK:
        st = read_post(r)
    if st != ST_OK:
        return st, None
    return assemble(r, top)
