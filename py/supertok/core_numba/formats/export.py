"""Mirrors core_c/src/formats/export.c and export.h: exports of an encoding to other libraries'
formats (docs/formats/export.md): a tiktoken rank file and a HuggingFace tokenizers
tokenizer.json, and which tokens they hold.

Both formats are byte-level BPE over a regex pre-tokenizer, so only encodings that are exactly
that go out: the bytes alphabet, no supermerges, no script-aware pre-tokenizer, and for
tokenizer.json merge rules (a rank vocabulary has none to give). Both hold each byte string
once: an ordinary token whose bytes a lower id has is left out, the lower id keeps them. The
JSON text is what Python's json.dumps(obj, ensure_ascii=False, indent=1) writes, plus a newline.

Also here: the two public calls st_encoding_export and st_encoding_duplicate_tokens, which the
C core keeps in encode/encoding.c as thin wrappers (they unpack the encoding handle into an
st__export_source and call st__export_write / st__export_duplicates); the port keeps them
beside what they wrap.

The per-token work (which ids go out, the rank lines, the JSON vocab and merges) is done by
kernels into uint8 arrays; the fixed text and the added tokens are joined in Python.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, ST_UNIT_INDEX,
                           ST_KIND_NONE, ST_KIND_EXPORT_UBE, ST_KIND_EXPORT_SUPERMERGES, ST_KIND_EXPORT_SCRIPT_AWARE,
                           ST_KIND_EXPORT_NO_RULES, ST_NO_TOKEN)
from .vocab import ST_RULES_MAX_IDS
ST_PATTERN_SUPERBPE, ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2, ST_PATTERN_DEEPSEEK_V3 = 4, 5, 6, 7  # st_pattern

try:  # vocab.h's inline lookups (formats/vocab.py)
    from .vocab import vocab_span, vocab_lookup, vocab_ordinary, vocab_special_string, vocab_n_strings
except ImportError:  # not landed yet: the kernels below fail to compile when first called
    vocab_span = vocab_lookup = vocab_ordinary = vocab_special_string = vocab_n_strings = None

ST_EXPORT_TIKTOKEN, ST_EXPORT_HF_JSON = 1, 2
ST_ALPHABET_BYTES = 0
ST_PRETOK_SCRIPT_AWARE = 1
ST__KIND_RULES = 1

# st__export_source: what an export needs of an encoding (rules None: a rank vocabulary)
ExportSource = namedtuple("ExportSource", "vocab rules n_supers pattern pt_flags alloc")


# ---- sorting -------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _sift_down(a, root, n):
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and a[child + 1] > a[child]:
            child += 1
        if a[root] >= a[child]:
            return
        t = a[root]
        a[root] = a[child]
        a[child] = t
        root = child


@njit(cache=True, nogil=True)
def sort_u64(a, n):
    """st__sort_u64: sort a[0..n) ascending in place (heapsort)."""
    if n < 2:
        return
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(a, i, n)
    for end in range(n - 1, 0, -1):
        t = a[0]
        a[0] = a[end]
        a[end] = t
        _sift_down(a, 0, end)


# ---- which tokens go out ---------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def exported(v, rules, i):
    """exported() of export.c: (written, start, len, first): first is the lower id that has the
    bytes (ST_NO_TOKEN when i is written)."""
    first = np.int64(ST_NO_TOKEN)
    if not vocab_ordinary(v, rules, i):
        return False, 0, 0, first
    ok, start, ln = vocab_span(v, i)
    if not ok:
        return False, 0, 0, first
    j = np.int64(vocab_lookup(v, v.bytes, start, ln))
    if j != ST_NO_TOKEN and j < i:
        return False, start, ln, j
    return True, start, ln, first


def refuse(src, fmt, err):
    """refuse() of export.c: ST_ERR_INVALID_ARGUMENT with the reason the format cannot express
    the encoding (kind), or ST_OK."""
    if fmt != ST_EXPORT_TIKTOKEN and fmt != ST_EXPORT_HF_JSON:
        return _set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown export format")
    kind, why = ST_KIND_NONE, None
    if src.vocab.alphabet != ST_ALPHABET_BYTES:
        kind, why = ST_KIND_EXPORT_UBE, "a UBE encoding: its tokens are symbols, the format is byte-level"
    elif src.n_supers:
        kind, why = ST_KIND_EXPORT_SUPERMERGES, "supermerges: the format merges inside each pretoken only"
    elif src.pt_flags & ST_PRETOK_SCRIPT_AWARE:
        kind, why = ST_KIND_EXPORT_SCRIPT_AWARE, "a script-aware pre-tokenizer: no regular expression expresses it"
    elif fmt == ST_EXPORT_HF_JSON and src.rules is None:
        kind, why = ST_KIND_EXPORT_NO_RULES, "a rank vocabulary: a HuggingFace BPE model needs merge rules"
    elif _pattern_regex(src.pattern) is None:
        why = "the encoding has no known pattern"
    elif fmt == ST_EXPORT_TIKTOKEN and src.pattern == ST_PATTERN_SUPERBPE:
        why = "the superbpe pre-tokenizer: tiktoken keeps only a regex's matches, not the text between them"
    elif fmt == ST_EXPORT_TIKTOKEN and src.pattern >= ST_PATTERN_LLAMA3:
        why = "a HuggingFace pre-tokenizer (llama3, qwen2, deepseek_v3): tiktoken does not ship its pattern"
    if why is None:
        return ST_OK
    _set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why)
    if err is not None:
        err.kind, err.length = kind, 0
    return ST_ERR_INVALID_ARGUMENT


def _set(err, status, unit, offset, message):
    if err is not None:
        err.fail(status, unit, offset, message)
    return status


def _pattern_regex(pattern):
    from ..text.pretokenize import pattern_regex  # st__pattern_regex
    r = pattern_regex(pattern)
    return None if r is None else bytes(r)


# ---- tiktoken ---------------------------------------------------------------------------------------

_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8).copy()


@njit(cache=True, nogil=True)
def _digits(x):
    k = 1
    while x >= 10:
        x //= 10
        k += 1
    return k


@njit(cache=True, nogil=True)
def _put_u64(out, o, x):
    k = _digits(x)
    for q in range(k - 1, -1, -1):
        out[o + q] = 48 + x % 10
        x //= 10
    return o + k


@njit(cache=True, nogil=True)
def tiktoken_text(v, rules):
    """write_tiktoken of export.c: one line per token written, in id order: base64 of its bytes,
    a space, its id as the rank."""
    size = 0
    for i in range(v.n_ids):
        ok, start, ln, first = exported(v, rules, i)
        if ok:
            size += (ln + 2) // 3 * 4 + 1 + _digits(i) + 1
    out = np.empty(size, np.uint8)
    o = 0
    b = v.bytes
    for i in range(v.n_ids):
        ok, start, ln, first = exported(v, rules, i)
        if not ok:
            continue
        for k in range(0, ln, 3):
            w = np.int64(b[start + k]) << 16
            if k + 1 < ln:
                w |= np.int64(b[start + k + 1]) << 8
            if k + 2 < ln:
                w |= np.int64(b[start + k + 2])
            out[o] = _B64[(w >> 18) & 63]
            out[o + 1] = _B64[(w >> 12) & 63]
            out[o + 2] = _B64[(w >> 6) & 63] if k + 1 < ln else 61
            out[o + 3] = _B64[w & 63] if k + 2 < ln else 61
            o += 4
        out[o] = 32
        o = _put_u64(out, o + 1, i)
        out[o] = 10
        o += 1
    return out


# ---- JSON ------------------------------------------------------------------------------------------

def _byte_chars():
    """byte_chars_init of export.c: the UTF-8 of each byte's character in the byte-level
    alphabet, with '"' and '\\' escaped."""
    utf8 = np.zeros((256, 2), np.uint8)
    ln = np.zeros(256, np.int64)
    extra = 0
    for b in range(256):
        printable = 33 <= b <= 126 or 161 <= b <= 172 or b >= 174
        cp = b if printable else 256 + extra
        if not printable:
            extra += 1
        if cp in (0x22, 0x5C):
            utf8[b] = (0x5C, cp)
            ln[b] = 2
        elif cp < 0x80:
            utf8[b, 0] = cp
            ln[b] = 1
        else:
            utf8[b] = (0xC0 | (cp >> 6), 0x80 | (cp & 0x3F))
            ln[b] = 2
    return utf8, ln


_CHARS, _CHARS_LEN = _byte_chars()


@njit(cache=True, nogil=True)
def _token_len(b, start, n, clen):
    k = 2
    for q in range(n):
        k += clen[b[start + q]]
    return k


@njit(cache=True, nogil=True)
def _put_token(out, o, b, start, n, chars, clen):
    out[o] = 34
    o += 1
    for q in range(n):
        c = b[start + q]
        out[o] = chars[c, 0]
        if clen[c] == 2:
            out[o + 1] = chars[c, 1]
        o += clen[c]
    out[o] = 34
    return o + 1


@njit(cache=True, nogil=True)
def _put_ascii(out, o, s):
    for q in range(s.shape[0]):
        out[o + q] = s[q]
    return o + s.shape[0]


_ITEM_VOCAB = np.frombuffer(b"\n   ", np.uint8).copy()
_ITEM_MERGE = np.frombuffer(b"\n   [\n    ", np.uint8).copy()
_MERGE_MID = np.frombuffer(b",\n    ", np.uint8).copy()
_MERGE_END = np.frombuffer(b"\n   ]", np.uint8).copy()


@njit(cache=True, nogil=True)
def hf_vocab_text(v, rules, chars, clen):
    """The items of the JSON vocab (each written token: its string, ": ", its id), joined as
    json.dumps's indent=1 joins them; and how many there are."""
    size = 0
    count = 0
    for i in range(v.n_ids):
        ok, start, ln, first = exported(v, rules, i)
        if ok:
            size += (1 if count else 0) + 4 + _token_len(v.bytes, start, ln, clen) + 2 + _digits(i)
            count += 1
    out = np.empty(size, np.uint8)
    o = 0
    k = 0
    for i in range(v.n_ids):
        ok, start, ln, first = exported(v, rules, i)
        if not ok:
            continue
        if k:
            out[o] = 44
            o += 1
        o = _put_ascii(out, o, _ITEM_VOCAB)
        k += 1
        o = _put_token(out, o, v.bytes, start, ln, chars, clen)
        out[o] = 58
        out[o + 1] = 32
        o = _put_u64(out, o + 2, i)
    return out, count


@njit(cache=True, nogil=True)
def rules_pairs(slots, mask, base, n_rules):
    """rules_pairs of export.c: the rules as pairs by rule index, from the rules table."""
    p = np.full(2 * n_rules, ST_NO_TOKEN, np.int64)
    m21 = np.uint64(ST_RULES_MAX_IDS)
    for s in range(mask + 1):
        slot = np.uint64(slots[s])
        if slot == 0:
            continue
        token = np.int64(slot & m21)
        key = slot >> np.uint64(21)
        if token < base or token - base >= n_rules:
            continue
        p[2 * (token - base)] = np.int64(key >> np.uint64(21))
        p[2 * (token - base) + 1] = np.int64(key & m21)
    return p


@njit(cache=True, nogil=True)
def hf_merges_text(v, pairs, n_rules, chars, clen):
    """The items of the JSON merges (each rule as its two parts' strings); (text, -1), or
    (empty, i) for rule i without its parts."""
    size = 0
    for i in range(n_rules):
        okl, sl, ll = vocab_span(v, pairs[2 * i])
        okr, sr, lr = vocab_span(v, pairs[2 * i + 1])
        if not okl or not okr:
            return np.empty(0, np.uint8), i
        size += (1 if i else 0) + 10 + _token_len(v.bytes, sl, ll, clen) + 6 + _token_len(v.bytes, sr, lr, clen) + 5
    out = np.empty(size, np.uint8)
    o = 0
    for i in range(n_rules):
        okl, sl, ll = vocab_span(v, pairs[2 * i])
        okr, sr, lr = vocab_span(v, pairs[2 * i + 1])
        if i:
            out[o] = 44
            o += 1
        o = _put_ascii(out, o, _ITEM_MERGE)
        o = _put_token(out, o, v.bytes, sl, ll, chars, clen)
        o = _put_ascii(out, o, _MERGE_MID)
        o = _put_token(out, o, v.bytes, sr, lr, chars, clen)
        o = _put_ascii(out, o, _MERGE_END)
    return out, -1


def put_text(p):
    """put_text of export.c: UTF-8 text as a JSON string, escaped as Python's json module
    escapes it with ensure_ascii=False."""
    out = bytearray(b'"')
    for ch in p:
        if ch >= 0x20 and ch != 0x22 and ch != 0x5C:
            out.append(ch)
        elif ch in (0x22, 0x5C):
            out += bytes((0x5C, ch))
        elif ch in _NAMED:
            out += _NAMED[ch]
        else:
            out += b"\\u00%02x" % ch
    out.append(0x22)
    return bytes(out)


_NAMED = {8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r"}

HF_HEAD = b"{\n \"version\": \"1.0\",\n \"truncation\": null,\n \"padding\": null,\n \"added_tokens\": ["
HF_ADDED_ID = b"{\n   \"id\": "
HF_ADDED_CONTENT = b",\n   \"content\": "
HF_ADDED_REST = (b",\n   \"single_word\": false,\n   \"lstrip\": false,\n   \"rstrip\": false,\n"
                 b"   \"normalized\": false,\n   \"special\": true\n  }")
HF_PATTERN = (b",\n \"normalizer\": null,\n \"pre_tokenizer\": {\n  \"type\": \"Sequence\",\n"
              b"  \"pretokenizers\": [\n   {\n    \"type\": \"Split\",\n    \"pattern\": {\n"
              b"     \"Regex\": ")
HF_VOCAB = (b"\n    },\n    \"behavior\": \"Isolated\",\n    \"invert\": false\n   },\n   {\n"
            b"    \"type\": \"ByteLevel\",\n    \"add_prefix_space\": false,\n"
            b"    \"trim_offsets\": true,\n    \"use_regex\": false\n   }\n  ]\n },\n"
            b" \"post_processor\": null,\n \"decoder\": {\n  \"type\": \"ByteLevel\",\n"
            b"  \"add_prefix_space\": true,\n  \"trim_offsets\": true,\n  \"use_regex\": true\n },\n"
            b" \"model\": {\n  \"type\": \"BPE\",\n  \"dropout\": null,\n  \"unk_token\": null,\n"
            b"  \"continuing_subword_prefix\": null,\n  \"end_of_word_suffix\": null,\n"
            b"  \"fuse_unk\": false,\n  \"byte_fallback\": false,\n  \"ignore_merges\": false,\n"
            b"  \"vocab\": {")
HF_MERGES = b",\n  \"merges\": ["
HF_TAIL = b"\n }\n}\n"
# deepseek_v3: the Splits before the last one (export.c's hf_deepseek_first, hf_next_split)
HF_DEEPSEEK_FIRST = (b"\\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+".encode("utf-8"))
HF_NEXT_SPLIT = (b"\n    },\n    \"behavior\": \"Isolated\",\n    \"invert\": false\n   },\n   {\n"
                 b"    \"type\": \"Split\",\n    \"pattern\": {\n     \"Regex\": ")


@njit(cache=True, nogil=True)
def special_order(v):
    """special_order of export.c: the special strings in the order of the added tokens (by id,
    an id's strings in the order given), as (id << 32 | k)."""
    n = vocab_n_strings(v)
    order = np.zeros(max(n, 1), np.uint64)
    m = 0
    for k in range(n):
        ok, sid, start, ln = vocab_special_string(v, k)
        if ok:
            order[m] = (np.uint64(sid) << np.uint64(32)) | np.uint64(k)
            m += 1
    sort_u64(order, m)
    return order[:m]


def write_hf_json(src, err):
    """write_hf_json of export.c: (status, text)."""
    v, r = src.vocab, src.rules
    n_rules = v.n_ordinary - r.base if v.n_ordinary > r.base else 0
    order = special_order(v)
    pairs = rules_pairs(r.slots, r.mask, r.base, n_rules)
    w = [HF_HEAD]
    for k in range(len(order)):
        ok, sid, start, ln = vocab_special_string(v, int(order[k] & np.uint64(0xFFFFFFFF)))
        if not ok:
            continue
        w.append(b"," if k else b"")
        w.append(b"\n  " + HF_ADDED_ID + b"%d" % sid + HF_ADDED_CONTENT)
        w.append(put_text(v.bytes[start:start + ln].tobytes()) + HF_ADDED_REST)
    w.append(b"\n ]" if len(order) else b"]")
    w.append(HF_PATTERN)
    if src.pattern == ST_PATTERN_DEEPSEEK_V3:  # its three Splits in sequence
        for first in HF_DEEPSEEK_FIRST:
            w.append(put_text(first))
            w.append(HF_NEXT_SPLIT)
    w.append(put_text(_pattern_regex(src.pattern)))
    w.append(HF_VOCAB)
    vt, count = hf_vocab_text(v, src.rules is not None, _CHARS, _CHARS_LEN)
    w.append(vt.tobytes())
    w.append(b"\n  }" if count else b"}")
    w.append(HF_MERGES)
    mt, bad = hf_merges_text(v, pairs, n_rules, _CHARS, _CHARS_LEN)
    if bad >= 0:
        return _set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, int(bad), "rule without its parts"), None
    w.append(mt.tobytes())
    w.append(b"\n  ]" if n_rules else b"]")
    w.append(HF_TAIL)
    return ST_OK, b"".join(w)


# ---- the calls --------------------------------------------------------------------------------------

def _finish(text, out, cap, out_len, err):
    if cap and out is not None:
        k = min(cap, len(text))
        out[:k] = np.frombuffer(text, np.uint8, k)
    out_len.v = len(text)
    st = ST_ERR_BUFFER_TOO_SMALL if len(text) > cap else ST_OK
    if err is not None and st != ST_OK:
        err.status = st
    return st


def export_write(src, fmt, out, cap, out_len, err):
    """st__export_write."""
    st = refuse(src, fmt, err)
    if st != ST_OK:
        return st
    if fmt == ST_EXPORT_TIKTOKEN:
        text = tiktoken_text(src.vocab, src.rules is not None).tobytes()
    else:
        st, text = write_hf_json(src, err)
        if st != ST_OK:
            return st
    return _finish(text, out, cap, out_len, err)


@njit(cache=True, nogil=True)
def duplicates_kernel(v, rules, pairs, cap):
    """st__export_duplicates' loop: the count, pairs (id, first) written while they fit."""
    count = 0
    for i in range(v.n_ids):
        ok, start, ln, first = exported(v, rules, i)
        if ok or first == ST_NO_TOKEN:
            continue
        if count < cap:
            pairs[2 * count] = i
            pairs[2 * count + 1] = first
        count += 1
    return count


def export_duplicates(src, pairs, cap, n, err):
    """st__export_duplicates."""
    buf = pairs if pairs is not None else np.zeros(0, np.uint32)
    count = int(duplicates_kernel(src.vocab, src.rules is not None, buf, cap))
    n.v = count
    st = ST_ERR_BUFFER_TOO_SMALL if count > cap else ST_OK
    if err is not None and st != ST_OK:
        err.status = st
    return st


def export_source(enc):
    """export_source of encoding.c: the encoding's parts an export reads."""
    rules_kind = enc.kind == ST__KIND_RULES
    return ExportSource(enc.vocab, enc.rules if rules_kind else None, enc.supers.n if rules_kind else 0,
                        enc.pt.pattern, enc.pt.flags, None)


@export
def st_encoding_export(enc, fmt, out, cap, out_len, err):
    """st_encoding_export (encoding.c in the C core)."""
    if err is not None:
        err.clear()
    if enc is None or out_len is None or (out is None and cap):
        return _set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "")
    out_len.v = 0
    if enc.kind == 2:  # ST__KIND_HF: its ids are the file's: it is already in the format it came in
        return _set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "an encoding from a tokenizer.json is not exported: use the file it came from")
    return export_write(export_source(enc), fmt, out, cap, out_len, err)


@export
def st_encoding_duplicate_tokens(enc, pairs, cap, n, err):
    """st_encoding_duplicate_tokens (encoding.c in the C core)."""
    if err is not None:
        err.clear()
    if enc is None or n is None or (pairs is None and cap):
        return _set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "")
    return export_duplicates(export_source(enc), pairs, cap, n, err)
