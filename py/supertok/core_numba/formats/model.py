"""Mirrors core_c/src/formats/model.c and model.h: model files (docs/formats/model-format.md),
the parser with every check and report of the C, the canonical writer, the getters, and what
the encoding builder (encode/model_encoding.py) takes from a parsed model.

The header lines, the specials and the messages are plain Python (a few lines, worded as the
C's appenders word them); the counted sections of merges, supermerges and rank tokens, which
may hold millions of lines, are read by kernels (read_pairs_kernel, read_tokens_kernel) that
report a failure as a code and its figures in an int64 array, worded here afterwards; the
merges' lines are written by a kernel too (pairs_lines). The token-bytes limit is
formats/vocab.py's rules_token_lengths (st__rules_token_lengths), the shared specials' walk a
kernel here; base64_canonical is formats/base64.py's, mix64 base/hash.py's, the script names
text/unicode.py's, as the C includes them. UTF-8 validity (comments, specials) is Python's
strict decoder, which accepts exactly what st_utf8_validate accepts.

A parsed model is a Model (the C's struct st_model, its fields by name; merges and
supermerges are ModelPairs, the specials a ModelSpecials of arrays). It never changes after
st_model_parse, so st_model_free has nothing to do; st_model_write keeps the last text it
wrote (the host calls it twice: the size, then the text).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .. import export
from ..base.common import (Err, ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_BUFFER_TOO_SMALL, ST_ERR_MALFORMED_MODEL,
                           ST_ERR_UNKNOWN_PATTERN, ST_UNIT_NONE, ST_UNIT_BYTE, ST_UNIT_INDEX, MESSAGE_SIZE, SIZE_MAX)
from ..base.hash import mix64
from .base64 import base64_canonical
from .vocab import ST_RULES_MAX_IDS, rules_token_lengths

ST_MODEL_VERSION, ST_MODEL_VERSION_2 = 1, 2
ST__SCRIPTS_DEFAULT, ST__SCRIPTS_LIST = 0, 1
ST_MODEL_RULES, ST_MODEL_RANKS = 1, 2
ST_ALPHABET_BYTES, ST_ALPHABET_UBE = 0, 1
ST_PATTERN_GPT2, ST_PATTERN_CL100K, ST_PATTERN_O200K, ST_PATTERN_SUPERBPE = 1, 2, 3, 4
ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2, ST_PATTERN_DEEPSEEK_V3 = 5, 6, 7
ST_PRETOK_SCRIPT_AWARE = 1
ST_TRAIN_PAPER, ST_TRAIN_HF = 0, 1
ST_ALGORITHM_BPE, ST_ALGORITHM_BOUNDLESS, ST_ALGORITHM_SUPERBPE, ST_ALGORITHM_EXTEND = 0, 1, 2, 3
ST_RULES_TOKEN_BYTES_BASE, ST_RULES_TOKEN_BYTES_PER_RULE = 16777216, 256
UINT64_MAX = (1 << 64) - 1

ModelPairs = namedtuple("ModelPairs", "pairs counts n present line")  # st__model_pairs (counts None: NULL)
ModelSpecials = namedtuple("ModelSpecials", "id off len")             # st__model_special, as arrays
Model = namedtuple("Model", "src src_len name_off name_len comments_off comments_len kind alphabet pattern flags "
                            "scripts_kind scripts_off scripts_len script_aware_line has_training tr_algorithm "
                            "tr_mode tr_vocab_size tr_min_frequency tr_supermerges tr_ngram tr_c_min tr_max_len "
                            "tr_base_off tr_base_len tr_seed_merges tr_max_words tr_min_count tr_colon_space "
                            "training_line merges supermerges tokens_off tokens_len n_tokens tokens_line ranks "
                            "specials n_specials specials_line special_text")

_EMPTY_PAIRS = ModelPairs(np.zeros(0, np.uint32), None, 0, 0, 0)

# ---- small helpers ------------------------------------------------------------------------


def parse_u64(b, maxv):
    """parse_u64 of model.c over bytes b: (1, value), (0, None) malformed, (-1, None) above max."""
    n = len(b)
    if n == 0 or (b[0] == 0x30 and n > 1):
        return 0, None
    if not b.isdigit() or not b.isascii():
        return 0, None
    if n > 20:
        return -1, None
    x = int(b)
    if x > UINT64_MAX or x > maxv:
        return -1, None
    return 1, x


def mq(b):
    """A quoted excerpt of file bytes (at most 24, non-printable as '?')."""
    b = bytes(b)
    t = "".join(chr(c) if 0x20 <= c < 0x7F else "?" for c in b[:24])
    return "'" + t + ("...'" if len(b) > 24 else "'")


def _valid_utf8(b):
    try:
        bytes(b).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


class _Stop(Exception):
    """A report is made (in the parser's Err): the parse stops with ST_ERR_MALFORMED_MODEL."""


_KEYS = (b"name", b"comment", b"training", b"kind", b"alphabet", b"pattern", b"script-aware", b"scripts", b"merges",
         b"tokens", b"supermerges", b"specials", b"end")
_KEY_BYTES = np.frombuffer(b"".join(_KEYS), np.uint8).copy()
_KEY_ENDS = np.cumsum([len(k) for k in _KEYS]).astype(np.int64)

# ---- kernels: the counted sections ----------------------------------------------------------
# A kernel's info array (int64): [0] the error code (0: none), [1] line, [2] offset, [3] the
# entry's index, [4..7] figures of the error; on return [10] pos, [11] line, [12] ls, [13] ll,
# [14] the entries read.
E_CTRL, E_NO_NEWLINE, E_EOF, E_KEY, E_EMPTY_FIELD, E_MANY_FIELDS, E_NFIELDS, E_ID, E_COUNT, E_DUP, E_BASE64, \
    E_RANK = range(1, 13)
INFO = 16


@njit(cache=True, nogil=True)
def _u64(s, off, n, maxv):
    """parse_u64 of model.c: (r, value) with r 1 ok, 0 malformed, -1 above maxv (uint64)."""
    if n == 0 or (s[off] == 48 and n > 1):
        return 0, np.uint64(0)
    for i in range(n):
        c = s[off + i]
        if c < 48 or c > 57:
            return 0, np.uint64(0)
    if n > 20:
        return -1, np.uint64(0)
    x = np.uint64(0)
    over = False
    umax = np.uint64(0xFFFFFFFFFFFFFFFF)
    ten = np.uint64(10)
    for i in range(n):
        d = np.uint64(s[off + i] - 48)
        if x > (umax - d) // ten:
            over = True
        else:
            x = x * ten + d
    if over or x > maxv:
        return -1, np.uint64(0)
    return 1, x


@njit(cache=True, nogil=True)
def _known_key(s, off, kn):
    start = 0
    for k in range(_KEY_ENDS.shape[0]):
        end = _KEY_ENDS[k]
        if end - start == kn:
            same = True
            for q in range(kn):
                if s[off + q] != _KEY_BYTES[start + q]:
                    same = False
                    break
            if same:
                return True
        start = end
    return False


@njit(cache=True, nogil=True)
def _entry_line(s, n, st, i, digits, info):
    """next_line + entry_line of model.c; st = [pos, line, ls, ll]. 0, or the error code."""
    pos = st[0]
    if pos >= n:
        info[0] = E_EOF
        info[1] = st[1] + 1
        info[2] = n
        info[3] = i
        return E_EOF
    st[1] += 1
    j = pos
    while j < n and s[j] != 10:
        c = s[j]
        if c < 0x20 or c == 0x7F:
            info[0] = E_CTRL
            info[1] = st[1]
            info[2] = j
            info[4] = c
            return E_CTRL
        j += 1
    if j >= n:
        info[0] = E_NO_NEWLINE
        info[1] = st[1]
        info[2] = pos
        return E_NO_NEWLINE
    st[2] = pos
    st[3] = j - pos
    st[0] = j + 1
    if digits:
        ls, ll = st[2], st[3]
        kn = 0
        while kn < ll and s[ls + kn] != 32:
            kn += 1
        if _known_key(s, ls, kn):
            info[0] = E_KEY
            info[1] = st[1]
            info[2] = ls
            info[3] = i
            info[4] = kn
            return E_KEY
    return 0


@njit(cache=True, nogil=True)
def _fields(s, st, i, fo, fl, mx, info):
    """fields() of model.c: the count, or -1 (report made)."""
    ls, ll = st[2], st[3]
    k = 0
    start = 0
    for q in range(ll + 1):
        if q < ll and s[ls + q] != 32:
            continue
        if q == start or k == mx:
            info[0] = E_EMPTY_FIELD if q == start else E_MANY_FIELDS
            info[1] = st[1]
            info[2] = ls + start
            info[3] = i
            return -1
        fo[k] = ls + start
        fl[k] = q - start
        k += 1
        start = q + 1
    return k


@njit(cache=True, nogil=True)
def read_pairs_kernel(s, n, st, count, with_counts, first_id, before, before_n, pairs, counts, info):
    """The entry lines of merges or supermerges (read_pairs of model.c after its section line)."""
    cap = pairs.shape[0] // 2
    tcap = 1
    while tcap < 2 * (cap + before_n) + 2:
        tcap <<= 1
    table = np.zeros(tcap, np.uint64)
    mask = np.uint64(tcap - 1)
    for k in range(before_n):
        key = ((np.uint64(before[2 * k]) << np.uint64(32)) | np.uint64(before[2 * k + 1])) + np.uint64(1)
        h = mix64(key) & mask
        while table[h] != 0 and table[h] != key:
            h = (h + np.uint64(1)) & mask
        table[h] = key
    fo = np.zeros(3, np.int64)
    fl = np.zeros(3, np.int64)
    umax = np.uint64(0xFFFFFFFFFFFFFFFF)
    done = 0
    for i in range(count):
        if _entry_line(s, n, st, i, True, info):
            break
        nf = _fields(s, st, i, fo, fl, 3, info)
        if nf < 0:
            break
        if nf != 2 + with_counts:
            info[0] = E_NFIELDS
            info[1] = st[1]
            info[2] = st[2]
            info[3] = i
            break
        own = np.uint64(first_id + i)
        bad = False
        ids0 = np.uint64(0)
        ids1 = np.uint64(0)
        for j in range(2):
            r, v = _u64(s, fo[j], fl[j], umax)
            if r <= 0 or v >= own:
                info[0] = E_ID
                info[1] = st[1]
                info[2] = fo[j]
                info[3] = i
                info[4] = j
                info[5] = r
                info[6] = fl[j]
                bad = True
                break
            if j == 0:
                ids0 = v
            else:
                ids1 = v
        if bad:
            break
        if with_counts:
            r, v = _u64(s, fo[2], fl[2], umax)
            if r <= 0:
                info[0] = E_COUNT
                info[1] = st[1]
                info[2] = fo[2]
                info[3] = i
                info[6] = fl[2]
                break
            counts[i] = v
        key = ((ids0 << np.uint64(32)) | ids1) + np.uint64(1)
        h = mix64(key) & mask
        while table[h] != 0 and table[h] != key:
            h = (h + np.uint64(1)) & mask
        if table[h] != 0:
            info[0] = E_DUP
            info[1] = st[1]
            info[2] = st[2]
            info[3] = i
            info[4] = np.int64(ids0)
            info[5] = np.int64(ids1)
            break
        table[h] = key
        pairs[2 * i] = np.uint32(ids0)
        pairs[2 * i + 1] = np.uint32(ids1)
        done = i + 1
    info[10] = st[0]
    info[11] = st[1]
    info[12] = st[2]
    info[13] = st[3]
    info[14] = done


@njit(cache=True, nogil=True)
def read_tokens_kernel(s, n, st, count, ranks, info):
    """The entry lines of tokens (read_tokens of model.c after its section line)."""
    fo = np.zeros(2, np.int64)
    fl = np.zeros(2, np.int64)
    done = 0
    for i in range(count):
        if _entry_line(s, n, st, i, False, info):
            break
        nf = _fields(s, st, i, fo, fl, 2, info)
        if nf < 0:
            break
        if nf != 2:
            info[0] = E_NFIELDS
            info[1] = st[1]
            info[2] = st[2]
            info[3] = i
            break
        if not base64_canonical(s, fo[0], fl[0]):
            info[0] = E_BASE64
            info[1] = st[1]
            info[2] = st[2]
            info[3] = i
            info[6] = fl[0]
            info[7] = fo[0]
            break
        r, v = _u64(s, fo[1], fl[1], np.uint64(0x7FFFFFFF))
        if r <= 0 or (i > 0 and v <= np.uint64(ranks[i - 1])):
            info[0] = E_RANK
            info[1] = st[1]
            info[2] = fo[1]
            info[3] = i
            info[5] = r
            info[6] = fl[1]
            break
        ranks[i] = np.uint32(v)
        done = i + 1
    info[10] = st[0]
    info[11] = st[1]
    info[12] = st[2]
    info[13] = st[3]
    info[14] = done


@njit(cache=True, nogil=True)
def check_shared_specials_kernel(length, n_ord, merges, n_merges, supers, spec_id, spec_off, spec_len, text):
    """check_shared_specials of model.c: the index of the first special with an ordinary id whose
    text is not its token's bytes, or -1."""
    max_len = 0
    for i in range(spec_id.shape[0]):
        t = spec_id[i]
        if t < n_ord and length[t] == spec_len[i] and length[t] > max_len:
            max_len = length[t]
    stack = np.zeros(max_len + 1, np.int64)
    for i in range(spec_id.shape[0]):
        t = np.int64(spec_id[i])
        if t >= n_ord:
            break
        off = spec_off[i]
        n = spec_len[i]
        pos = 0
        sp = 0
        same = length[t] == n
        if same:
            stack[sp] = t
            sp += 1
        while same and sp:
            sp -= 1
            x = stack[sp]
            if x < 256:
                same = pos < n and text[off + pos] == x
                pos += 1
                continue
            r = x - 256
            if r < n_merges:
                left, right = merges[2 * r], merges[2 * r + 1]
            else:
                left, right = supers[2 * (r - n_merges)], supers[2 * (r - n_merges) + 1]
            if sp + 2 > max_len + 1:
                same = False
                break
            stack[sp] = right
            stack[sp + 1] = left
            sp += 2
        if same and pos == n:
            continue
        return i
    return -1


# ---- the parser ---------------------------------------------------------------------------------


class _Parser:
    __slots__ = ("s", "a", "n", "pos", "line", "ls", "ll", "e", "version", "m", "_nl")

    def __init__(self, s, a, e):
        self.s, self.a, self.n = s, a, len(s)
        self.pos = self.line = self.ls = self.ll = 0
        self.e = e
        self.version = 0
        self.m = {}
        self._nl = None

    def begin(self, line, offset, message):
        e = self.e
        e.clear()
        e.status = ST_ERR_MALFORMED_MODEL
        e.unit = ST_UNIT_BYTE
        e.offset = offset
        e.line = line
        e.message = message.encode("utf-8")[:MESSAGE_SIZE - 1]

    def stop(self, line, offset, message):
        self.begin(line, offset, message)
        raise _Stop

    def next_line(self):
        s, n, pos = self.s, self.n, self.pos
        if pos >= n:
            return 0
        self.line += 1
        nl = s.find(b"\n", pos)
        end = n if nl < 0 else nl
        for i in range(pos, end):
            c = s[i]
            if c < 0x20 or c == 0x7F:
                self.begin(self.line, i, "control byte 0x%02X" % c + (
                    " (CR: lines end with LF only)" if c == 13 else " (escape it in a special's text)"))
                return -1
        if nl < 0:
            self.begin(self.line, pos, "the file ends inside this line (no final newline: truncated?)")
            return -1
        self.ls, self.ll, self.pos = pos, nl - pos, nl + 1
        return 1

    def line_text(self):
        return self.s[self.ls:self.ls + self.ll]

    def split_kv(self):
        """(key, value offset, value, has_v) of the current line."""
        t = self.line_text()
        i = t.find(b" ")
        if i < 0:
            return t, self.ls + self.ll, b"", False
        return t[:i], self.ls + i + 1, t[i + 1:], True

    def expect(self, key, want_value):
        """The line `key value`: (value offset, value)."""
        r = self.next_line()
        if r < 0:
            raise _Stop
        if r == 0:
            self.stop(self.line + 1, self.n, "the file ends where the '%s' line was expected (truncated?)" % key)
        k, voff, v, has_v = self.split_kv()
        if k != key.encode():
            if not k:
                msg = "an empty line (or a leading space) where '%s' was expected" % key
            elif 0x30 <= k[0] <= 0x39:
                msg = "a data line where '%s' was expected (is a section's count too small?)" % key
            elif k in _KEYS:
                msg = mq(k) + " is out of place: expected '%s' here (fixed order)" % key
            else:
                msg = "unknown key %s where '%s' was expected (not in format version %d)" % (mq(k), key, self.version)
            self.stop(self.line, self.ls, msg)
        if want_value and (not has_v or not v):
            self.stop(self.line, self.ls, "%s: missing value (write '%s <value>')" % (key, key))
        if not want_value and has_v:
            self.stop(self.line, self.ls + len(k), "%s: this line takes no value" % key)
        return voff, v

    def peek_key(self, key):
        i, kn = self.pos, len(key)
        if self.n - i < kn + 1:
            return False
        return self.s[i:i + kn] == key and self.s[i + kn] in (0x20, 0x0A)

    def pick(self, key, voff, v, names):
        for i, nm in enumerate(names):
            if v == nm:
                return i
        self.stop(self.line, voff, "%s: %s is not one of %s" % (key, mq(v), ", ".join(x.decode() for x in names)))

    def line_start(self, line):
        """The byte offset where line `line` (1-based) starts (n if past the end)."""
        return line_start(self.s, line, self)

    def section_line(self, key, allow_counts, maxv):
        voff, v = self.expect(key, True)
        i = v.find(b" ")
        with_counts = 0
        if i >= 0:
            rest = v[i + 1:]
            if not allow_counts or rest != b"counts":
                self.stop(self.line, voff + i + 1, key + (": after the count only 'counts' may follow, not "
                                                          if allow_counts else ": only a count may follow, not ")
                          + mq(rest))
            with_counts = 1
            v = v[:i]
        r, count = parse_u64(v, maxv)
        if r <= 0:
            self.stop(self.line, voff, "%s: %s" % (key, mq(v)) + (
                " is not a count (decimal digits, no leading zero)" if r == 0
                else " is more than the %d a model can hold" % maxv))
        return count, with_counts

    def line_cap(self, count, min_line):
        room = (self.n - self.pos) // min_line + 1
        return count if count < room else room

    def _state(self):
        return np.array([self.pos, self.line, self.ls, self.ll], np.int64)

    def _restore(self, info):
        self.pos, self.line, self.ls, self.ll = (int(x) for x in info[10:14])

    def _entry_failed(self, what, info, count):
        """The report of an entry line the kernel refused for a reason common to all sections."""
        code, line, off, i = (int(x) for x in info[:4])
        s = self.s
        if code == E_CTRL:
            c = int(info[4])
            self.stop(line, off, "control byte 0x%02X" % c + (
                " (CR: lines end with LF only)" if c == 13 else " (escape it in a special's text)"))
        if code == E_NO_NEWLINE:
            self.stop(line, off, "the file ends inside this line (no final newline: truncated?)")
        if code == E_EOF:
            self.stop(line, off, "%s: the file ends after %d of %d lines (truncated?)" % (what, i, count))
        if code == E_KEY:
            self.stop(line, off, "%s: %s after %d of %d lines (is the count right?)"
                      % (what, mq(s[off:off + int(info[4])]), i, count))
        if code == E_EMPTY_FIELD:
            self.stop(line, off, "%s[%d]: empty field (fields are separated by one space)" % (what, i))
        if code == E_MANY_FIELDS:
            self.stop(line, off, "%s[%d]: too many fields" % (what, i))

    def read_pairs(self, what, first_id, before):
        maxv = ST_RULES_MAX_IDS - 1 - first_id
        count, with_counts = self.section_line(what, True, maxv)
        line = self.line
        cap = self.line_cap(count, 4)
        pairs = np.zeros(2 * max(cap, 1), np.uint32)
        counts = np.zeros(max(cap, 1), np.uint64) if with_counts else np.zeros(1, np.uint64)
        info = np.zeros(INFO, np.int64)
        bp = before.pairs if before is not None else np.zeros(0, np.uint32)
        bn = before.n if before is not None else 0
        read_pairs_kernel(self.a, self.n, self._state(), count, with_counts, first_id, bp, bn, pairs, counts, info)
        self._restore(info)
        if info[0]:
            self._pairs_failed(what, info, count, with_counts, first_id)
        n = int(info[14])
        return ModelPairs(pairs[:2 * n], counts[:n] if with_counts else None, n, 1, line)

    def _pairs_failed(self, what, info, count, with_counts, first_id):
        self._entry_failed(what, info, count)
        code, line, off, i = (int(x) for x in info[:4])
        s = self.s
        if code == E_NFIELDS:
            self.stop(line, off, "%s[%d]: " % (what, i) + ("expected 'left right count'" if with_counts else
                                                           "expected 'left right' (the section line has no 'counts')"))
        if code == E_ID:
            j, r, fl = int(info[4]), int(info[5]), int(info[6])
            f = s[off:off + fl]
            msg = "%s[%d]: %s id " % (what, i, "right" if j else "left")
            if r <= 0:
                msg += mq(f) + (" is too large" if r else " is not a decimal id")
            else:
                msg += "%d is not below the rule's own id %d" % (int(f), first_id + i)
            self.stop(line, off, msg)
        if code == E_COUNT:
            f = s[off:off + int(info[6])]
            self.stop(line, off, "%s[%d]: count %s is not a decimal number below 2^64" % (what, i, mq(f)))
        if code == E_DUP:
            self.stop(line, off, "%s[%d]: the pair %d %d is already a rule" % (what, i, int(info[4]), int(info[5])))
        raise AssertionError("unknown kernel report %d" % code)

    def read_tokens(self):
        m = self.m
        count, _ = self.section_line("tokens", False, 0x7FFFFFFF)
        m["tokens_line"] = self.line
        if count == 0:
            self.stop(self.line, self.ls, "tokens: a ranks model needs at least one token")
        cap = self.line_cap(count, 7)
        ranks = np.zeros(max(cap, 1), np.uint32)
        m["tokens_off"] = self.pos
        info = np.zeros(INFO, np.int64)
        read_tokens_kernel(self.a, self.n, self._state(), count, ranks, info)
        self._restore(info)
        n = int(info[14])
        m["ranks"] = ranks[:n]
        m["n_tokens"] = n
        if info[0]:
            self._entry_failed("tokens", info, count)
            code, line, off, i = (int(x) for x in info[:4])
            if code == E_NFIELDS:
                self.stop(line, off, "tokens[%d]: expected 'base64 rank'" % i)
            if code == E_BASE64:
                fo, fl = int(info[7]), int(info[6])
                self.stop(line, off, "tokens[%d]: %s is not canonical padded base64 of 1 or more bytes"
                          % (i, mq(self.s[fo:fo + fl])))
            if code == E_RANK:
                r = int(info[5])
                msg = "tokens[%d]: rank %s" % (i, mq(self.s[off:off + int(info[6])]))
                if r <= 0:
                    msg += " is above 2147483647" if r else " is not a decimal number"
                else:
                    msg += " is not above the previous rank %d" % int(ranks[i - 1])
                self.stop(line, off, msg)
            raise AssertionError("unknown kernel report %d" % code)
        m["tokens_len"] = self.pos - m["tokens_off"]

    def read_specials(self):
        m = self.m
        count, _ = self.section_line("specials", False, ST_RULES_MAX_IDS)
        m["specials_line"] = self.line
        kind, alphabet = m["kind"], m["alphabet"]
        n_ord = ((512 if alphabet == ST_ALPHABET_UBE else 256) + m["merges"].n + m["supermerges"].n
                 if kind == ST_MODEL_RULES else 0)
        ids, offs, lens = [], [], []
        text = bytearray()
        by_text = {}
        ranks = m.get("ranks")
        m["specials"] = (ids, offs, lens)
        m["special_text"] = text
        for i in range(count):
            r = self.next_line()
            if r < 0:
                raise _Stop
            if r == 0:
                self.stop(self.line + 1, self.n, "specials: the file ends after %d of %d lines (truncated?)"
                          % (i, count))
            t = self.line_text()
            sp = t.find(b" ")
            kn = len(t) if sp < 0 else sp
            if t[:kn] in _KEYS:
                self.stop(self.line, self.ls, "specials: %s after %d of %d lines (is the count right?)"
                          % (mq(t[:kn]), i, count))
            r, sid = parse_u64(t[:kn], 0xFFFFFFFF)
            if r <= 0 or sp < 0:
                self.stop(self.line, self.ls, "specials[%d]: expected 'id text' with a decimal id, not %s" % (i, mq(t)))
            why = None
            if i and sid <= ids[-1]:
                why = " is not above the previous special's id (ids increase)"
            elif kind == ST_MODEL_RULES and sid < n_ord and alphabet == ST_ALPHABET_UBE:
                why = " is an ordinary token's id (a UBE token is symbols, never a special's text)"
            elif sid >= ST_RULES_MAX_IDS and kind == ST_MODEL_RULES:
                why = " is above the 2097150 a rules model can hold"
            elif kind == ST_MODEL_RANKS:
                lo = int(np.searchsorted(ranks, sid)) if sid <= 0xFFFFFFFF else len(ranks)
                if lo < len(ranks) and int(ranks[lo]) == sid:
                    why = " is the rank of a token"
                elif sid > 0x7FFFFFFF:
                    why = " is above 2147483647"
            if why:
                self.stop(self.line, self.ls, "specials[%d]: id %d%s" % (i, sid, why))
            start = len(text)
            k = sp + 1
            ll = len(t)
            while k < ll:
                c = t[k]
                if c == 0x5C:
                    nx = t[k + 1] if k + 1 < ll else -1
                    if nx == 0x5C:
                        c = 0x5C
                        k += 1
                    elif nx == 0x6E:
                        c = 10
                        k += 1
                    elif nx == 0x72:
                        c = 13
                        k += 1
                    elif nx == 0x74:
                        c = 9
                        k += 1
                    elif nx == 0x78 and k + 3 < ll and _hexval(t[k + 2]) >= 0 and _hexval(t[k + 3]) >= 0:
                        c = _hexval(t[k + 2]) * 16 + _hexval(t[k + 3])
                        k += 3
                    else:
                        self.stop(self.line, self.ls + k,
                                  "specials[%d]: bad escape (use \\\\, \\n, \\r, \\t or \\xHH)" % i)
                text.append(c)
                k += 1
            body = bytes(text[start:])
            if not body or not _valid_utf8(body):
                self.stop(self.line, self.ls + sp + 1, "specials[%d]: %s" % (
                    i, "the text is not valid UTF-8" if body else "the text is empty"))
            o = by_text.get(body)
            if o is not None:
                self.stop(self.line, self.ls + sp + 1, "specials[%d]: the same text as specials[%d]" % (i, o))
            by_text[body] = i
            ids.append(sid)
            offs.append(start)
            lens.append(len(body))

    def check_id_range(self):
        m = self.m
        ids = m["specials"][0]
        n_spec = len(ids)
        if m["kind"] == ST_MODEL_RULES:
            if not n_spec:
                return
            n_ord = (512 if m["alphabet"] == ST_ALPHABET_UBE else 256) + m["merges"].n + m["supermerges"].n
            max_id = ids[-1]
            limit = n_ord + 2 * n_spec + 65536
            what, index, line = "specials[", n_spec - 1, m["specials_line"] + n_spec
        else:
            last_rank = int(m["ranks"][m["n_tokens"] - 1])
            limit = 2 * (m["n_tokens"] + n_spec) + 65536
            if n_spec and ids[-1] > last_rank:
                max_id = ids[-1]
                what, index, line = "specials[", n_spec - 1, m["specials_line"] + n_spec
            else:
                max_id = last_rank
                what, index, line = "tokens[", m["n_tokens"] - 1, m["tokens_line"] + m["n_tokens"]
        if max_id + 1 <= limit:
            return
        self.stop(line, self.line_start(line), "%s%d]: id %d leaves too many unused ids (at most %d ids here)"
                  % (what, index, max_id, limit))

    def check_scripts(self, voff, v):
        m = self.m
        if v == b"default":
            m["scripts_kind"] = ST__SCRIPTS_DEFAULT
            return
        m["scripts_kind"] = ST__SCRIPTS_LIST
        if v == b"none":
            m["scripts_off"], m["scripts_len"] = voff, 0
            return
        seen = set()
        start = 0
        for part in v.split(b","):
            sid = script_from_name(part) if part else -1
            canon = script_name(sid) if sid >= 0 else None
            why = None
            if sid < 0:
                why = " is not a script name" if part else "an empty name (names are separated by ',')"
            elif canon is None or part != canon:
                why = " is not the canonical spelling: write "
            elif sid < 1024 and sid in seen:
                why = " is listed twice"
            if why:
                msg = "scripts: " + (mq(part) if part else "") + why
                if canon is not None and sid >= 0 and part != canon:
                    msg += canon.decode("ascii", "replace")
                self.stop(self.line, voff + start, msg)
            if sid < 1024:
                seen.add(sid)
            start += len(part) + 1
        m["scripts_off"], m["scripts_len"] = voff, len(v)

    def parse_training(self):
        m = self.m
        m["has_training"] = 1
        m["training_line"] = self.line
        s = self.line_text()
        ll = self.ll
        ls = self.ls
        i = 8
        if i >= ll or s[i] != 0x20:
            self.stop(self.line, ls, "training: missing value (write 'training algorithm=... mode=...')")
        want = ["algorithm", "mode", "vocab_size", "min_frequency"]
        have = 0
        while i < ll:
            i += 1
            f = i
            while i < ll and s[i] != 0x20:
                i += 1
            field = s[f:i]
            eq = field.find(b"=")
            if eq >= 0:
                fk, fv = field[:eq], field[eq + 1:]
            else:
                fk, fv = field, None
            key = want[have] if have < len(want) else None
            if key is None or fk != key.encode() or fv is None or not fv:
                if f == i:
                    msg = "an empty field (fields are separated by one space)"
                elif key is None:
                    msg = "unexpected field %s at the end" % mq(field)
                else:
                    msg = "expected '%s=<value>' here, not %s" % (key, mq(field))
                self.stop(self.line, ls + f, "training: " + msg)
            voff = ls + f + eq + 1
            if fk == b"algorithm":
                r = self.pick("training: algorithm", voff, fv, (b"bpe", b"boundless", b"superbpe", b"extend"))
                m["tr_algorithm"] = r
            elif fk == b"mode":
                r = self.pick("training: mode", voff, fv, (b"paper", b"hf"))
                m["tr_mode"] = ST_TRAIN_PAPER if r == 0 else ST_TRAIN_HF
                if m["tr_mode"] == ST_TRAIN_HF and m["tr_algorithm"] != ST_ALGORITHM_BPE:
                    self.stop(self.line, voff, "training: mode hf trains no superwords (algorithm=bpe only)")
            elif fk == b"base":
                if len(fv) > 128:
                    self.stop(self.line, voff, "training: base: a model name of 1 to 128 characters")
                for k, c in enumerate(fv):
                    if c < 0x21 or c > 0x7E:
                        self.stop(self.line, voff + k, "training: base: printable ASCII without spaces only")
                m["tr_base_off"] = voff
                m["tr_base_len"] = len(fv)
            elif fk == b"colon_space":
                m["tr_colon_space"] = self.pick("training: colon_space", voff, fv, (b"no", b"yes"))
            elif fk == b"ngram_split":
                r = self.pick("training: ngram_split", voff, fv, (b"no", b"yes"))
                m["tr_ngram"] = r
                if r and m["tr_algorithm"] in (ST_ALGORITHM_BPE, ST_ALGORITHM_EXTEND):
                    self.stop(self.line, voff,
                              "training: ngram_split=yes splits supermerge candidates (not for algorithm=bpe or "
                              "extend)")
                if r:
                    want += ["c_min", "max_len"]
            else:
                pr, num = parse_u64(fv, UINT64_MAX)
                if pr <= 0:
                    self.stop(self.line, voff, "training: %s: %s is not a decimal number below 2^64" % (key, mq(fv)))
                if fk == b"vocab_size":
                    m["tr_vocab_size"] = num
                elif fk == b"min_frequency":
                    m["tr_min_frequency"] = num
                    if m["tr_algorithm"] == ST_ALGORITHM_SUPERBPE:
                        want.append("supermerges")
                    if m["tr_algorithm"] == ST_ALGORITHM_EXTEND:
                        want += ["base", "seed_merges", "max_words", "colon_space", "min_count"]
                    want.append("ngram_split")
                elif fk == b"supermerges":
                    m["tr_supermerges"] = num
                elif fk == b"seed_merges":
                    m["tr_seed_merges"] = num
                elif fk == b"max_words":
                    m["tr_max_words"] = num
                elif fk == b"min_count":
                    m["tr_min_count"] = num
                elif fk == b"c_min":
                    m["tr_c_min"] = num
                else:
                    m["tr_max_len"] = num
            have += 1
        if have < len(want):
            self.stop(self.line, ls + ll, "training: the line ends where '%s=<value>' was expected" % want[have])

    def parse(self):
        m = self.m
        s = self.s
        r = self.next_line()
        if r < 0:
            raise _Stop
        magic = b"supertok-model "
        if r == 0 or self.ll < len(magic) or not s.startswith(magic, self.ls):
            self.stop(1, 0, "not a supertok model: the first line must be 'supertok-model 1'")
        vb = self.line_text()[len(magic):]
        r, version = parse_u64(vb, UINT64_MAX)
        if r <= 0 or version not in (ST_MODEL_VERSION, ST_MODEL_VERSION_2):
            self.stop(1, len(magic), "format version %s is not supported (this core reads versions 1 and 2)" % mq(vb))
        self.version = version
        voff, v = self.expect("name", True)
        for i in range(len(v)):
            if v[i] <= 0x20 or v[i] >= 0x7F or len(v) > 128:
                self.stop(self.line, voff + i,
                          "name: %s must be 1 to 128 printable ASCII characters, no spaces" % mq(v))
        m["name_off"], m["name_len"] = voff, len(v)
        m["comments_off"] = self.pos
        while self.peek_key(b"comment"):
            voff, v = self.expect("comment", True)
            if not _valid_utf8(v):
                self.stop(self.line, voff, "comment: not valid UTF-8")
        m["comments_len"] = self.pos - m["comments_off"]
        if self.peek_key(b"training"):
            self.next_line()
            if self.version < ST_MODEL_VERSION_2:
                self.stop(self.line, self.ls,
                          "training: this line needs format version 2 (first line 'supertok-model 2')")
            self.parse_training()
        voff, v = self.expect("kind", True)
        k = self.pick("kind", voff, v, (b"rules", b"ranks"))
        m["kind"] = ST_MODEL_RULES if k == 0 else ST_MODEL_RANKS
        voff, v = self.expect("alphabet", True)
        k = self.pick("alphabet", voff, v, (b"bytes", b"ube"))
        m["alphabet"] = ST_ALPHABET_BYTES if k == 0 else ST_ALPHABET_UBE
        if m["kind"] == ST_MODEL_RANKS and m["alphabet"] != ST_ALPHABET_BYTES:
            self.stop(self.line, voff, "alphabet: a ranks model's alphabet is 'bytes'")
        voff, v = self.expect("pattern", True)
        k = self.pick("pattern", voff, v, _PATTERN_NAMES)
        m["pattern"] = ST_PATTERN_GPT2 + k  # _PATTERN_NAMES is in st_pattern's order
        voff, v = self.expect("script-aware", True)
        k = self.pick("script-aware", voff, v, (b"no", b"yes"))
        m["flags"] = ST_PRETOK_SCRIPT_AWARE if k else 0
        m["script_aware_line"] = self.line
        if k:
            voff, v = self.expect("scripts", True)
            self.check_scripts(voff, v)
        elif self.peek_key(b"scripts"):
            self.next_line()
            self.stop(self.line, self.ls, "scripts: only a script-aware model lists scripts ('script-aware yes')")
        base = 512 if m["alphabet"] == ST_ALPHABET_UBE else 256
        m["merges"] = m["supermerges"] = _EMPTY_PAIRS
        if m["kind"] == ST_MODEL_RULES:
            m["merges"] = self.read_pairs("merges", base, None)
        else:
            self.read_tokens()
        if self.peek_key(b"supermerges"):
            if m["kind"] != ST_MODEL_RULES:
                self.next_line()
                self.stop(self.line, self.ls, "supermerges: only a rules model has supermerges")
            m["supermerges"] = self.read_pairs("supermerges", base + m["merges"].n, m["merges"])
        self.read_specials()
        self.check_id_range()
        self.expect("end", False)
        if self.pos < self.n:
            self.stop(self.line + 1, self.pos, "data after the 'end' line")


def _hexval(c):
    if 0x30 <= c <= 0x39:
        return c - 0x30
    if 0x41 <= c <= 0x46:
        return c - 0x41 + 10
    if 0x61 <= c <= 0x66:
        return c - 0x61 + 10
    return -1


def line_start(text, line, cache=None):
    """line_start of model.c: the byte offset where line `line` (1-based) of text starts (its
    length if past the end)."""
    if line <= 1:
        return 0
    nl = cache._nl if cache is not None else None
    if nl is None:
        nl = np.flatnonzero(np.frombuffer(text, np.uint8) == 10)
        if cache is not None:
            cache._nl = nl
    return int(nl[line - 2]) + 1 if line - 2 < len(nl) else len(text)


# ---- scripts: names of text/unicode.py ------------------------------------------------------

def script_from_name(name):
    """st_script_from_name of bytes name."""
    from ..text.unicode import st_script_from_name
    return int(st_script_from_name(name, len(name)))


def script_name(script):
    """st_script_name: bytes, or None."""
    from ..text.unicode import st_script_name
    r = st_script_name(script)
    return None if r is None else (r.encode("ascii") if isinstance(r, str) else bytes(r))


# ---- the model -------------------------------------------------------------------------------

def _model(p):
    d = p.m
    ids, offs, lens = d["specials"]
    return Model(
        src=p.s, src_len=p.n, name_off=d["name_off"], name_len=d["name_len"], comments_off=d["comments_off"],
        comments_len=d["comments_len"], kind=d["kind"], alphabet=d["alphabet"], pattern=d["pattern"],
        flags=d["flags"], scripts_kind=d.get("scripts_kind", 0), scripts_off=d.get("scripts_off", 0),
        scripts_len=d.get("scripts_len", 0), script_aware_line=d["script_aware_line"],
        has_training=d.get("has_training", 0), tr_algorithm=d.get("tr_algorithm", 0), tr_mode=d.get("tr_mode", 0),
        tr_vocab_size=d.get("tr_vocab_size", 0), tr_min_frequency=d.get("tr_min_frequency", 0),
        tr_supermerges=d.get("tr_supermerges", 0), tr_ngram=d.get("tr_ngram", 0), tr_c_min=d.get("tr_c_min", 0),
        tr_max_len=d.get("tr_max_len", 0), tr_base_off=d.get("tr_base_off", 0), tr_base_len=d.get("tr_base_len", 0),
        tr_seed_merges=d.get("tr_seed_merges", 0), tr_max_words=d.get("tr_max_words", 0),
        tr_min_count=d.get("tr_min_count", 0), tr_colon_space=d.get("tr_colon_space", 0),
        training_line=d.get("training_line", 0), merges=d["merges"],
        supermerges=d["supermerges"], tokens_off=d.get("tokens_off", 0), tokens_len=d.get("tokens_len", 0),
        n_tokens=d.get("n_tokens", 0), tokens_line=d.get("tokens_line", 0),
        ranks=d.get("ranks", np.zeros(0, np.uint32)),
        specials=ModelSpecials(np.array(ids, np.uint32), np.array(offs, np.int64), np.array(lens, np.int64)),
        n_specials=len(ids), specials_line=d["specials_line"],
        special_text=np.frombuffer(bytes(d["special_text"]) + bytes(16), np.uint8).copy())


def rule_error(m, e, ce_offset, ce_input, ce_message):
    """rule_error of model.c: a rule's report (ce: offset = its index, input 2 for a supermerge)."""
    sup = ce_input == 2
    line = (m.supermerges.line if sup else m.merges.line) + 1 + ce_offset
    msg = ("supermerges[" if sup else "merges[") + "%d]: " % ce_offset
    msg = msg.encode() + (ce_message if ce_message else b"refused by the encoding constructor")
    _begin(e, line, line_start(m.src, line), msg)


def _begin(e, line, offset, message):
    e.clear()
    e.status = ST_ERR_MALFORMED_MODEL
    e.unit = ST_UNIT_BYTE
    e.offset = offset
    e.line = line
    if isinstance(message, str):
        message = message.encode("utf-8")
    e.message = bytes(message)[:MESSAGE_SIZE - 1]


def check_token_bytes(m, e):
    if m.kind != ST_MODEL_RULES:
        return ST_OK
    n_ord = (512 if m.alphabet == ST_ALPHABET_UBE else 256) + m.merges.n + m.supermerges.n
    length = np.zeros(n_ord, np.int64)
    out = np.zeros(4, np.int64)
    ok, _ = rules_token_lengths(m.alphabet, m.merges.pairs, m.merges.n, m.supermerges.pairs, m.supermerges.n,
                                length, out)
    if not ok:
        msg = "the tokens reach %d bytes here, over the limit %d (16 MiB + 256 bytes a rule)" % (int(out[1]),
                                                                                             int(out[2]))
        rule_error(m, e, int(out[0]), int(out[3]), msg.encode()[:MESSAGE_SIZE - 1])
        return ST_ERR_MALFORMED_MODEL
    sp = m.specials
    if not np.any(sp.id < n_ord):
        return ST_OK
    i = check_shared_specials_kernel(length, n_ord, m.merges.pairs, m.merges.n, m.supermerges.pairs, sp.id, sp.off,
                                     sp.len, m.special_text)
    if i < 0:
        return ST_OK
    line = m.specials_line + 1 + i
    _begin(e, line, line_start(m.src, line), "specials[%d]: id %d is an ordinary token's, and the text is not its "
           "bytes" % (i, int(sp.id[i])))
    return ST_ERR_MALFORMED_MODEL


# ---- the exports -------------------------------------------------------------------------------

@export
def st_model_parse(data, length, alloc, out, err):
    e = err if err is not None else Err()
    e.clear()
    if out is None or (data is None and length):
        e.status = ST_ERR_INVALID_ARGUMENT
        return ST_ERR_INVALID_ARGUMENT
    out.v = None
    s = bytes(data[:length]) if length else b""
    a = np.zeros(length + 16, np.uint8)
    if length:
        a[:length] = np.frombuffer(s, np.uint8)
    p = _Parser(s, a, e)
    try:
        p.parse()
    except _Stop:
        e.status = ST_ERR_MALFORMED_MODEL
        return ST_ERR_MALFORMED_MODEL
    m = _model(p)
    st = check_token_bytes(m, e)
    if st != ST_OK:
        e.status = st
        return st
    out.v = m
    return ST_OK


@export
def st_model_free(m):
    return None


def _u(v):
    return b"%d" % v


def _special_text(t):
    """put_special_text of model.c."""
    out = bytearray()
    n = len(t)
    for k, c in enumerate(t):
        if c == 0x5C:
            out += b"\\\\"
        elif c == 10:
            out += b"\\n"
        elif c == 13:
            out += b"\\r"
        elif c == 9:
            out += b"\\t"
        elif c < 0x20 or c == 0x7F or (c == 0x20 and (k == 0 or k + 1 == n)):
            out += b"\\x%02X" % c
        else:
            out.append(c)
    return bytes(out)


@njit(cache=True, nogil=True)
def _udigits(x):
    k = 1
    ten = np.uint64(10)
    while x >= ten:
        x //= ten
        k += 1
    return k


@njit(cache=True, nogil=True)
def _put_udigits(out, o, x):
    k = _udigits(x)
    ten = np.uint64(10)
    for q in range(k - 1, -1, -1):
        out[o + q] = np.uint8(np.uint64(48) + x % ten)
        x //= ten
    return o + k


@njit(cache=True, nogil=True)
def pairs_lines(pairs, n, counts, with_counts):
    """The entry lines of write_pairs: "left right[ count]\n" each."""
    size = 0
    for i in range(n):
        size += _udigits(np.uint64(pairs[2 * i])) + 1 + _udigits(np.uint64(pairs[2 * i + 1])) + 1
        if with_counts:
            size += 1 + _udigits(np.uint64(counts[i]))
    out = np.empty(size, np.uint8)
    o = 0
    for i in range(n):
        o = _put_udigits(out, o, np.uint64(pairs[2 * i]))
        out[o] = 32
        o = _put_udigits(out, o + 1, np.uint64(pairs[2 * i + 1]))
        if with_counts:
            out[o] = 32
            o = _put_udigits(out, o + 1, np.uint64(counts[i]))
        out[o] = 10
        o += 1
    return out


def _pairs_text(what, pairs, n, counts):
    """write_pairs of model.c."""
    head = b"%s %d%s\n" % (what, n, b" counts" if counts is not None else b"")
    if not n:
        return head
    c = counts if counts is not None else np.zeros(1, np.uint64)
    return head + pairs_lines(np.asarray(pairs, np.uint32), n, c, counts is not None).tobytes()


def model_text(m):
    """The canonical text of m (what st_model_write writes)."""
    w = [b"supertok-model 2\nname " if m.has_training else b"supertok-model 1\nname ",
         m.src[m.name_off:m.name_off + m.name_len], b"\n", m.src[m.comments_off:m.comments_off + m.comments_len]]
    if m.has_training:
        alg = (b"bpe", b"boundless", b"superbpe", b"extend")[m.tr_algorithm if 0 <= m.tr_algorithm <= 3 else 0]
        w.append(b"training algorithm=" + alg)
        w.append(b" mode=hf vocab_size=" if m.tr_mode == ST_TRAIN_HF else b" mode=paper vocab_size=")
        w.append(_u(m.tr_vocab_size) + b" min_frequency=" + _u(m.tr_min_frequency))
        if m.tr_algorithm == ST_ALGORITHM_SUPERBPE:
            w.append(b" supermerges=" + _u(m.tr_supermerges))
        if m.tr_algorithm == ST_ALGORITHM_EXTEND:
            w.append(b" base=" + bytes(m.src[m.tr_base_off:m.tr_base_off + m.tr_base_len]) + b" seed_merges="
                     + _u(m.tr_seed_merges) + b" max_words=" + _u(m.tr_max_words)
                     + (b" colon_space=yes min_count=" if m.tr_colon_space else b" colon_space=no min_count=")
                     + _u(m.tr_min_count))
        if m.tr_ngram:
            w.append(b" ngram_split=yes c_min=" + _u(m.tr_c_min) + b" max_len=" + _u(m.tr_max_len))
        else:
            w.append(b" ngram_split=no")
        w.append(b"\n")
    w.append(b"kind rules\n" if m.kind == ST_MODEL_RULES else b"kind ranks\n")
    w.append(b"alphabet ube\n" if m.alphabet == ST_ALPHABET_UBE else b"alphabet bytes\n")
    w.append(b"pattern " + _PATTERN_NAMES[m.pattern - ST_PATTERN_GPT2])
    w.append(b"\nscript-aware yes\nscripts " if m.flags & ST_PRETOK_SCRIPT_AWARE else b"\nscript-aware no\n")
    if m.flags & ST_PRETOK_SCRIPT_AWARE:
        if m.scripts_kind == ST__SCRIPTS_DEFAULT:
            w.append(b"default")
        elif m.scripts_len == 0:
            w.append(b"none")
        else:
            w.append(m.src[m.scripts_off:m.scripts_off + m.scripts_len])
        w.append(b"\n")
    if m.kind == ST_MODEL_RULES:
        w.append(_pairs_text(b"merges", m.merges.pairs, m.merges.n, m.merges.counts))
    else:
        w.append(b"tokens %d\n" % m.n_tokens)
        w.append(m.src[m.tokens_off:m.tokens_off + m.tokens_len])
    if m.supermerges.n:
        w.append(_pairs_text(b"supermerges", m.supermerges.pairs, m.supermerges.n, m.supermerges.counts))
    w.append(b"specials %d\n" % m.n_specials)
    sp = m.specials
    for i in range(m.n_specials):
        o, ln = int(sp.off[i]), int(sp.len[i])
        w.append(b"%d " % int(sp.id[i]) + _special_text(m.special_text[o:o + ln].tobytes()) + b"\n")
    w.append(b"end\n")
    return b"".join(w)


_PATTERN_NAMES = (b"gpt2", b"cl100k", b"o200k", b"superbpe", b"llama3", b"qwen2", b"deepseek_v3")


def _put(out, cap, text, out_len):
    """The writers' end: copy what fits, the length, and whether it fitted."""
    if cap and out is not None:
        k = min(cap, len(text))
        out[:k] = np.frombuffer(text[:k], np.uint8)
    out_len.v = len(text)
    return ST_ERR_BUFFER_TOO_SMALL if len(text) > cap else ST_OK


_written_cache = {}


@export
def st_model_write(m, out, cap, out_len):
    if m is None or out_len is None or (out is None and cap):
        return ST_ERR_INVALID_ARGUMENT
    key = id(m)
    hit = _written_cache.get(key)
    if hit is not None and hit[0] is m:
        text = hit[1]
    else:
        text = model_text(m)
        _written_cache.clear()  # one model's text kept: the host's two calls (size, then text)
        _written_cache[key] = (m, text)
    return _put(out, cap, text, out_len)


def _fail(err, status, unit, offset, message, line=None, input=None):
    if err is not None:
        err.fail(status, unit, offset, message)
        if input is not None:
            err.line = line
            err.input = input
    return status


@export
def st_model_write_rules(name, name_len, alphabet, pattern, merges, n_merges, specials, special_ends, special_ids,
                         n_specials, comments, comment_ends, n_comments, out, cap, out_len, err):
    if err is not None:
        err.clear()
    if (out_len is None or (out is None and cap) or (name is None and name_len) or (merges is None and n_merges)
            or (n_specials and (special_ends is None or special_ids is None
                                or (specials is None and int(special_ends[n_specials - 1]))))
            or (n_comments and (comment_ends is None or (comments is None and int(comment_ends[n_comments - 1]))))
            or n_merges > SIZE_MAX // 2 or n_specials > 0xFFFFFFFF):
        return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, None or "")
    if n_merges > ST_RULES_MAX_IDS:
        return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                     "merges: more rules than a model has ids (2^21 - 1)", 0, 3)
    out_len.v = 0
    if alphabet not in (ST_ALPHABET_BYTES, ST_ALPHABET_UBE):
        return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "alphabet: not ST_ALPHABET_BYTES or _UBE")
    if not ST_PATTERN_GPT2 <= pattern <= ST_PATTERN_DEEPSEEK_V3:
        return _fail(err, ST_ERR_UNKNOWN_PATTERN, ST_UNIT_NONE, 0, "pattern: not an st_pattern")
    why_name = "name: 1 to 128 printable ASCII characters, no spaces"
    if name_len == 0 or name_len > 128:
        return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why_name, 0, 1)
    nm = bytes(name[:name_len])
    for i, c in enumerate(nm):
        if c <= 0x20 or c >= 0x7F:
            return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, i, why_name, 0, 1)
    se = [int(x) for x in special_ends[:n_specials]] if n_specials else []
    ce = [int(x) for x in comment_ends[:n_comments]] if n_comments else []
    for k in range(1, n_specials):
        if se[k] < se[k - 1]:
            return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k, "specials: the ends go backwards", 0, 2)
    for k in range(1, n_comments):
        if ce[k] < ce[k - 1]:
            return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k, "comments: the ends go backwards", 0, 4)
    w = [b"supertok-model 1\nname ", nm, b"\n"]
    for i in range(n_comments):
        a, b = (ce[i - 1] if i else 0), ce[i]
        c = bytes(comments[a:b]) if b > a else b""
        ok = b > a and _valid_utf8(c) and all(x >= 0x20 and x != 0x7F for x in c)
        if not ok:
            return _fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "comment: one line of printable UTF-8 text",
                         0, 4)
        w.append(b"comment " + c + b"\n")
    w.append(b"kind rules\nalphabet ube\npattern " if alphabet == ST_ALPHABET_UBE
             else b"kind rules\nalphabet bytes\npattern ")
    w.append(_PATTERN_NAMES[pattern - ST_PATTERN_GPT2])
    w.append(b"\nscript-aware no\n")
    w.append(_pairs_text(b"merges", merges, n_merges, None))
    w.append(b"specials %d\n" % n_specials)
    if n_specials:
        ids = [int(x) for x in special_ids[:n_specials]]
        for i in sorted(range(n_specials), key=lambda i: (ids[i], i)):
            s0 = se[i - 1] if i else 0
            w.append(b"%d " % ids[i] + _special_text(bytes(specials[s0:se[i]])) + b"\n")
    w.append(b"end\n")
    st = _put(out, cap, b"".join(w), out_len)
    if err is not None and st != ST_OK:
        err.status = st
    return st


# ---- getters -------------------------------------------------------------------------------------

@export
def st_model_kind(m):
    return m.kind if m is not None else 0


@export
def st_model_alphabet(m):
    return m.alphabet if m is not None else 0


@export
def st_model_pattern(m):
    return m.pattern if m is not None else 0


@export
def st_model_pretokenizer_flags(m):
    return m.flags if m is not None else 0


@export
def st_model_name(m, length):
    if length is not None:
        length.v = m.name_len if m is not None else 0
    return m.src[m.name_off:m.name_off + m.name_len] if m is not None else b""


@export
def st_model_scripts(m, length):
    if length is not None:
        length.v = 0
    if m is None or not (m.flags & ST_PRETOK_SCRIPT_AWARE) or m.scripts_kind == ST__SCRIPTS_DEFAULT:
        return None
    if length is not None:
        length.v = m.scripts_len
    return m.src[m.scripts_off:m.scripts_off + m.scripts_len]


def _cstr(section):
    if section is None:
        return None
    b = bytes(section) if not isinstance(section, (bytes, bytearray)) else bytes(section)
    return b.split(b"\0", 1)[0]


@export
def st_model_count(m, section):
    if m is None or section is None:
        return 0
    s = _cstr(section)
    if s == b"merges":
        return m.merges.n
    if s == b"supermerges":
        return m.supermerges.n
    if s == b"tokens":
        return m.n_tokens
    if s == b"specials":
        return m.n_specials
    return 0


@export
def st_model_pairs(m, section, pairs, counts):
    if pairs is not None:
        pairs.v = None
    if counts is not None:
        counts.v = None
    if m is None or section is None or m.kind != ST_MODEL_RULES:
        return 0
    s = _cstr(section)
    ps = m.merges if s == b"merges" else m.supermerges if s == b"supermerges" else None
    if ps is None or not ps.n:
        return 0
    if pairs is not None:
        pairs.v = ps.pairs
    if counts is not None:
        counts.v = ps.counts
    return ps.n


# ---- what the encoding builder takes from a model --------------------------------------------------

def _b64(b):
    import base64
    return base64.b64encode(b)


def model_specials_ranks(m):
    """st__model_specials_ranks: the specials as tiktoken lines ("base64 id\\n"), bytes."""
    sp = m.specials
    out = []
    for i in range(m.n_specials):
        o, ln = int(sp.off[i]), int(sp.len[i])
        out.append(_b64(m.special_text[o:o + ln].tobytes()) + b" %d\n" % int(sp.id[i]))
    return b"".join(out)


def model_encoding_error(m, specials, ce, e):
    """st__model_encoding_error: e = the report of an encoding constructor's
    ST_ERR_MALFORMED_MODEL (ce, an Err) as a report on the model file."""
    off = int(ce.offset)
    msg = bytes(ce.message)
    if ce.input == 1:
        k = specials[:off].count(b"\n")
        line = m.specials_line + 1 + k
        _begin(e, line, line_start(m.src, line), b"specials[%d]: " % k + (
            msg if msg else b"refused by the encoding constructor"))
    elif m.kind == ST_MODEL_RULES:
        rule_error(m, e, off, ce.input, msg)
    else:
        t = m.src[m.tokens_off:m.tokens_off + m.tokens_len]
        line = m.tokens_line + 1 + t[:off].count(b"\n")
        _begin(e, line, m.tokens_off + off, "tokens[%d]: refused by the rank-file loader (the same bytes as another "
               "token?)" % (line - m.tokens_line - 1))
