"""Mirrors core_c/src/text/pretokenize.c and pretokenize.h: the pre-tokenizers (gpt2, cl100k,
o200k, superbpe, llama3, qwen2, deepseek_v3, the single-letter scanner of script-aware mode), their handle and the piece iterator.

Each scanner is a kernel (s, end, i) -> the end of the piece starting at i, reading the text s
(a uint8 array, validated UTF-8, with zero bytes after it) up to end; the comments in the C file
say which alternative of the pattern each branch is. The C file selects a scanner by a function
pointer; here a scanner is an int (SCAN_*), and piece() branches on it.

Interface for the other modules:
  Pretokenizer(pattern, flags, single_letter_scripts uint32[8])   (struct st_pretokenizer)
  pretokenizer_init(pattern, flags, scripts, scripts_len, err) -> (status, Pretokenizer or None)
      plain Python (st__pretokenizer_init): scripts bytes / uint8 array or None (the default
      set); err an Err or None, filled on failure.
  The piece iterator (st__piece_iter) is a state array it = np.zeros(ITER_FIELDS, np.int64):
  it[IT_I] = i, it[IT_CHUNK_END] = chunk_end, it[IT_SCAN] = the scanner (SCAN_*), it[IT_LEN] =
  len. Kernels (njit) over the text s (uint8 array, length given, int64):
    pieces_init(pt, s, length, it); pieces_next(pt, s, length, it) -> end;
    pieces_fill(pt, s, length, it, ends, cap) -> count   (ends: uint64 array, cap >= 1)
  Walk: pieces_init(...); while it[IT_I] < length: e = pieces_next(...).
"""
from collections import namedtuple

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_BUFFER_TOO_SMALL,
                           ST_ERR_UNKNOWN_PATTERN, ST_ERR_UNKNOWN_SCRIPT, ST_ERR_UNSUPPORTED_PATTERN,
                           ST_UNIT_NONE, ST_UNIT_BYTE, ST_KIND_NONE, quoted, clear, fail)
from .utf8 import st_utf8_validate as utf8_validate  # st_utf8_validate, as pretokenize.c calls it
from .unicode import (UCD_BMP_CLASS, UCD_BMP_SCRIPT, UCD_ASTRAL_CLASS, UCD_ASTRAL_SCRIPT, ucd_astral_find,
                      script_from_name, ST_SCRIPT_UNKNOWN, ST_SCRIPT_COMMON, ST_SCRIPT_INHERITED)

Pretokenizer = namedtuple("Pretokenizer", "pattern flags single_letter_scripts")

ST_PATTERN_NONE, ST_PATTERN_GPT2, ST_PATTERN_CL100K, ST_PATTERN_O200K, ST_PATTERN_SUPERBPE = 0, 1, 2, 3, 4
ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2, ST_PATTERN_DEEPSEEK_V3 = 5, 6, 7
ST_PRETOK_SCRIPT_AWARE = 1
ST_OFFSETS_CODEPOINTS = 1
ST_SCRIPT_WORDS = 8  # 256 bits: script ids fit in a byte

# The iterator's state array (st__piece_iter; pt and s are passed to every call)
ITER_FIELDS = 4
IT_I, IT_CHUNK_END, IT_SCAN, IT_LEN = 0, 1, 2, 3
# The scanners (the C file's function pointers): a base pattern's id, or the single-letter one
SCAN_GPT2, SCAN_CL100K, SCAN_O200K, SCAN_SUPERBPE = ST_PATTERN_GPT2, ST_PATTERN_CL100K, ST_PATTERN_O200K, ST_PATTERN_SUPERBPE
SCAN_LLAMA3, SCAN_QWEN2, SCAN_DEEPSEEK_V3 = ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2, ST_PATTERN_DEEPSEEK_V3
SCAN_SINGLE_LETTER = 8

# Predicate bits per class byte (class in bits 0-2, White_Space in bit 3, \p{P} in bit 4, \p{S}
# in bit 5).
P_L = 1      # \p{L}
P_N = 2      # \p{N}
P_WS = 4     # \s
P_O = 8      # [^\s\p{L}\p{N}]
P_U = 16     # o200k upper part: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
P_W = 32     # o200k lower part: [\p{Ll}\p{Lm}\p{Lo}\p{M}]
P_M = 64     # \p{M}
P_PRE = 128  # [^\r\n\p{L}\p{N}] minus CR/LF, which are tested by code point
P_PS = 256   # [\p{P}\p{S}] (deepseek_v3)


def _pred(cls):
    """The PRED macro."""
    c = cls & 7
    letter = 1 <= c <= 5
    return ((P_L if letter else 0) | (P_N if c == 7 else 0) | (P_WS if cls & 8 else 0) |
            (P_O if not (cls & 8) and not letter and c != 7 else 0) |
            (P_U if c in (1, 3, 4, 5, 6) else 0) | (P_W if c in (2, 4, 5, 6) else 0) | (P_M if c == 6 else 0) |
            (P_PRE if not letter and c != 7 else 0) | (P_PS if cls & 48 else 0))


# preds_of_class, and the predicate bits of every BMP code point (preds_of_class of its class
# byte, looked up once here rather than twice per character)
PREDS_OF_CLASS = np.array([_pred(c) for c in range(64)], np.uint16)
PREDS_BMP = PREDS_OF_CLASS[UCD_BMP_CLASS]


# The scanners' kernels are @njit(cache=True, nogil=True) with two additions, for speed (the
# pre-tokenizer is on the encoder's hot path):
# - _nrt=False: no reference counting. Every call that passes the text array otherwise costs an
#   atomic increment and decrement of its count, which took two thirds of the time on English
#   (50 ns a piece instead of 8-15). These kernels allocate nothing, so they need no runtime;
#   kernels that do (scan_all, join_pieces, the encoder's) call them as any other.
# - inline="always" (numba-level inlining) for the small helpers of the ASCII paths, which LLVM
#   left as calls, for char_at's ASCII test (its decoding, char_decoded, stays a call) and for
#   o200k's two word alternatives (each called twice). Not for run_of, scan_ws or contraction:
#   inlined at their dozens of call sites they tripled the compile time for little gain.
_kernel = njit(cache=True, nogil=True, _nrt=False)
_inline = njit(cache=True, nogil=True, _nrt=False, inline="always")


# ---- decoding -----------------------------------------------------------------------------
@_kernel
def utf8_decode(s, i):
    """st__utf8_decode (utf8.h's inline function, which pretokenize.c inlines): (code point,
    length) of the valid UTF-8 at s[i]. A copy of text/utf8.py's, compiled without reference
    counting as the scanners are."""
    b0 = np.int64(s[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(s[i + 1]) & 0x3F), 2
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(s[i + 1]) & 0x3F) << 6) | (np.int64(s[i + 2]) & 0x3F), 3
    return (((b0 & 0x07) << 18) | ((np.int64(s[i + 1]) & 0x3F) << 12) | ((np.int64(s[i + 2]) & 0x3F) << 6) |
            (np.int64(s[i + 3]) & 0x3F)), 4


@_kernel
def preds_of(cp):
    """preds_of_class[st_ucd_class(cp)]"""
    if cp < 0x10000:
        return np.int64(PREDS_BMP[cp])
    r = ucd_astral_find(cp)
    return np.int64(PREDS_OF_CLASS[UCD_ASTRAL_CLASS[r]]) if r >= 0 else np.int64(PREDS_OF_CLASS[0])


@_kernel
def char_decoded(s, i):
    """char_at past the end and ASCII tests: a character of two to four bytes."""
    cp, n = utf8_decode(s, i)
    return cp, np.int64(n), preds_of(cp)


@_inline
def char_at(s, end, i):
    """One decoded character: (code point, byte length, predicate bits); (0, 0, 0) at the end."""
    if i >= end:
        return np.int64(0), np.int64(0), np.int64(0)
    b = np.int64(s[i])
    if b < 0x80:
        return b, np.int64(1), np.int64(PREDS_BMP[b])
    return char_decoded(s, i)


@_kernel
def run_of(s, end, i, mask):
    """End of the maximal run of characters having any of mask, starting at i."""
    while i < end:
        b = s[i]
        if b < 0x80:
            if not (PREDS_BMP[b] & mask):
                break
            i += 1
            continue
        cp, n, p = char_at(s, end, i)
        if not (p & mask):
            break
        i += n
    return i


@_inline
def run_crlf(s, end, i, slash):
    """End of a run of [\\r\\n] (or [\\r\\n/] with slash) starting at i."""
    while i < end and (s[i] == 13 or s[i] == 10 or (slash and s[i] == 47)):
        i += 1
    return i


@_inline
def fold_eq(cp, lower):
    """(?i:x) for the contraction letters: only 's' has a non-ASCII match (U+017F)."""
    if cp < 0x80:
        f = cp | 0x20
        return f == lower and 97 <= f <= 122
    return lower == 115 and cp == 0x17F


@_kernel
def contraction(s, end, i, fold):
    """The contraction after an apostrophe at i: its end, or 0 if none.
    gpt2: '(?:[sdmt]|ll|ve|re) case-sensitive; other: (?i:'s|'t|'re|'ve|'m|'ll|'d)."""
    if i >= end or s[i] != 39:
        return 0
    a_cp, a_len, a_p = char_at(s, end, i + 1)
    if not a_len:
        return 0
    if not fold:
        if a_cp == 115 or a_cp == 100 or a_cp == 109 or a_cp == 116:  # s d m t
            return i + 2
        if i + 2 < end:
            b = s[i + 2]
            if (a_cp == 108 and b == 108) or (a_cp == 118 and b == 101) or (a_cp == 114 and b == 101):
                return i + 3
        return 0
    j = i + 1 + a_len
    if fold_eq(a_cp, 115) or fold_eq(a_cp, 100) or fold_eq(a_cp, 109) or fold_eq(a_cp, 116):
        return j
    b_cp, b_len, b_p = char_at(s, end, j)
    if not b_len:
        return 0
    if ((fold_eq(a_cp, 108) and fold_eq(b_cp, 108)) or (fold_eq(a_cp, 118) and fold_eq(b_cp, 101)) or
            (fold_eq(a_cp, 114) and fold_eq(b_cp, 101))):
        return j + b_len
    return 0


@_kernel
def scan_ws(s, end, i):
    """The run of \\s from i: (j its end, last where its last character starts, crlf_end just past
    its last CR or LF, 0 if none)."""
    crlf_end = 0
    last = i
    k = i
    while k < end:
        cp, n, p = char_at(s, end, k)
        if not (p & P_WS):
            break
        last = k
        k += n
        if cp == 13 or cp == 10:
            crlf_end = k
    return k, last, crlf_end


@_inline
def ws_tail(j, last, i, end):
    """\\s+(?!\\S) then \\s."""
    if j == end:
        return end
    if last > i:
        return last
    return j


# ---- ASCII words, eight bytes at a time (portable SWAR, as the C file) ----------------------
_ONES = np.uint64(0x0101010101010101)
_H = np.uint64(0x8080808080808080)     # ST_BYTES(0x80)
_B7F = np.uint64(0x7F7F7F7F7F7F7F7F)   # ST_BYTES(0x7F)
_B20 = np.uint64(0x2020202020202020)   # ST_BYTES(0x20)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
# ST_BYTES(0x80 - lo), ST_BYTES(0x7F - hi) for the ranges A-Z, a-z
_UP_LO = np.uint64(0x0101010101010101 * (0x80 - 65))
_UP_HI = np.uint64(0x0101010101010101 * (0x7F - 90))
_LO_LO = np.uint64(0x0101010101010101 * (0x80 - 97))
_LO_HI = np.uint64(0x0101010101010101 * (0x7F - 122))
RUN_UPPER, RUN_LOWER, RUN_LETTER = 0, 1, 2


@_inline
def load8(s, p):
    """The eight bytes at s[p] as a little-endian word."""
    return (np.uint64(s[p]) | (np.uint64(s[p + 1]) << np.uint64(8)) | (np.uint64(s[p + 2]) << np.uint64(16)) |
            (np.uint64(s[p + 3]) << np.uint64(24)) | (np.uint64(s[p + 4]) << np.uint64(32)) |
            (np.uint64(s[p + 5]) << np.uint64(40)) | (np.uint64(s[p + 6]) << np.uint64(48)) |
            (np.uint64(s[p + 7]) << np.uint64(56)))


@_inline
def bytes_in(w, lo_c, hi_c):
    """Bytes of w in [lo, hi] (lo_c = ST_BYTES(0x80 - lo), hi_c = ST_BYTES(0x7F - hi)): bit 7 set."""
    x = w & _B7F
    return (x + lo_c) & ~(x + hi_c) & ~w & _H


@_inline
def first_byte(m):
    """Index of the first byte whose bit 7 is set in m (m != 0)."""
    return np.int64(trailing_zeros(m)) >> 3


@_inline
def run_mask(w, kind):
    if kind == RUN_UPPER:
        return bytes_in(w, _UP_LO, _UP_HI)
    if kind == RUN_LOWER:
        return bytes_in(w, _LO_LO, _LO_HI)
    return bytes_in(w | _B20, _LO_LO, _LO_HI)  # |0x20 maps A-Z onto a-z and no other byte


@_inline
def ascii_run(s, end, a, kind):
    """End of the maximal run of ASCII bytes of one kind from a."""
    while end - a >= 8:
        out = ~run_mask(load8(s, a), kind) & _H
        if out:
            return a + first_byte(out)
        a += 8
    while a < end:
        b = np.int64(s[a])
        if kind == RUN_UPPER:
            inside = 65 <= b <= 90
        elif kind == RUN_LOWER:
            inside = 97 <= b <= 122
        else:
            inside = 97 <= (b | 0x20) <= 122
        if not inside:
            break
        a += 1
    return a


@_inline
def ascii_stop(s, end, e):
    """The byte at e ends an ASCII word: the text ends there or goes on in ASCII."""
    return e == end or s[e] < 0x80


NO_WORD = -1


@_inline
def is_ascii_letter(b):
    return 97 <= (np.int64(b) | 0x20) <= 122


@_inline
def ascii_word_start(s, end, i):
    """The start of an ASCII word after an optional [^\\r\\n\\p{L}\\p{N}] (o200k, cl100k), or NO_WORD."""
    b = s[i]
    if is_ascii_letter(b):
        return i
    if b == 32:  # the common prefix, tested first
        return i + 1 if i + 1 < end and is_ascii_letter(s[i + 1]) else NO_WORD
    if (b >= 0x80 or (PREDS_BMP[b] & (P_L | P_N)) or b == 13 or b == 10 or i + 1 >= end or
            not is_ascii_letter(s[i + 1])):
        return NO_WORD
    return i + 1


@_inline
def o200k_ascii_word(s, end, w):
    """o200k's [A-Z]*[a-z]* from w (s[w] an ASCII letter) when an ASCII byte or the end follows
    it: its end; else 0."""
    if end - w >= 8:
        x = load8(s, w)
        not_up = ~bytes_in(x, _UP_LO, _UP_HI) & _H
        if not_up:
            u = first_byte(not_up)
            not_lo = ~bytes_in(x, _LO_LO, _LO_HI) & _H & (_ALL << np.uint64(8 * u))
            if not_lo:
                k = first_byte(not_lo)
                return 0 if (x >> np.uint64(8 * k)) & np.uint64(0x80) else w + k
    e = ascii_run(s, end, ascii_run(s, end, w, RUN_UPPER), RUN_LOWER)
    return e if ascii_stop(s, end, e) else 0


@_inline
def ascii_letters(s, end, w):
    """cl100k's and gpt2's [A-Za-z]+ from w (s[w] an ASCII letter) when an ASCII byte or the end
    follows it: its end; else 0."""
    if end - w >= 8:
        x = load8(s, w)
        out = ~run_mask(x, RUN_LETTER) & _H
        if out:
            k = first_byte(out)
            return 0 if (x >> np.uint64(8 * k)) & np.uint64(0x80) else w + k
    e = ascii_run(s, end, w, RUN_LETTER)
    return e if ascii_stop(s, end, e) else 0


@_inline
def digits_1_3(s, end, i, n0):
    """\\p{N}{1,3} from i, whose first character (a digit) is n0 bytes long."""
    e = i + n0
    for _ in range(2):
        cp, n, p = char_at(s, end, e)
        if not (p & P_N):
            break
        e += n
    return e


# ---- gpt2 (r50k_base, p50k_base) -----------------------------------------------------------
# '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
@_kernel
def piece_gpt2(s, end, i):
    w = i + (1 if s[i] == 32 else 0)
    if w < end and is_ascii_letter(s[w]):
        e = ascii_letters(s, end, w)
        if e:
            return e
    c_cp, c_len, c_p = char_at(s, end, i)
    if c_cp == 39:
        e = contraction(s, end, i, False)
        if e:
            return e
    k = i
    x_len, x_p = c_len, c_p
    if c_cp == 32:
        n_cp, n_len, n_p = char_at(s, end, i + 1)
        if n_p & (P_L | P_N | P_O):
            k = i + 1
            x_len, x_p = n_len, n_p
    if x_p & P_L:
        return run_of(s, end, k + x_len, P_L)
    if x_p & P_N:
        return run_of(s, end, k + x_len, P_N)
    if x_p & P_O:
        return run_of(s, end, k + x_len, P_O)
    j, last, crlf_end = scan_ws(s, end, i)
    return ws_tail(j, last, i, end)


# ---- cl100k --------------------------------------------------------------------------------
# '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|
# \s++$|\s*[\r\n]|\s+(?!\S)|\s
@_kernel
def piece_cl100k(s, end, i):
    w = i + (1 if s[i] == 32 else 0)
    if w < end and is_ascii_letter(s[w]):
        e = ascii_letters(s, end, w)
        if e:
            return e
    c_cp, c_len, c_p = char_at(s, end, i)
    if c_cp == 39:
        e = contraction(s, end, i, True)
        if e:
            return e
    if (c_p & P_PRE) and not (c_cp == 13 or c_cp == 10):
        n_cp, n_len, n_p = char_at(s, end, i + c_len)
        if n_p & P_L:
            return run_of(s, end, i + c_len + n_len, P_L)
    elif c_p & P_L:
        return run_of(s, end, i + c_len, P_L)
    if c_p & P_N:
        return digits_1_3(s, end, i, c_len)
    if c_cp == 32:
        n_cp, n_len, n_p = char_at(s, end, i + 1)
        if n_p & P_O:
            return run_crlf(s, end, run_of(s, end, i + 1 + n_len, P_O), False)
    if c_p & P_O:
        return run_crlf(s, end, run_of(s, end, i + c_len, P_O), False)
    j, last, crlf_end = scan_ws(s, end, i)
    if j == end:
        return end
    if crlf_end:
        return crlf_end
    return ws_tail(j, last, i, end)


# ---- o200k ---------------------------------------------------------------------------------
# U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}]; nothing is possessive.
@_inline
def o200k_upper_lower(s, end, k):
    """U*W+ from k: its end, or 0."""
    a = k
    last_w_end = 0
    while a < end and 65 <= s[a] <= 90:
        a += 1
    if a < end and 97 <= s[a] <= 122:
        a += 1
        while a < end and 97 <= s[a] <= 122:
            a += 1
        return run_of(s, end, a, P_W)
    while True:
        cp, n, p = char_at(s, end, a)
        if not (p & P_U):
            if p & P_W:
                return run_of(s, end, a + n, P_W)
            return last_w_end
        a += n
        if p & P_W:
            last_w_end = a


@_inline
def o200k_upper_then_lower(s, end, k):
    """U+W* from k: its end, or 0."""
    cp, n, p = char_at(s, end, k)
    if not (p & P_U):
        return 0
    a = run_of(s, end, k + n, P_U)
    return run_of(s, end, a, P_W)


@_inline
def with_contraction(s, end, e):
    if e >= end or s[e] != 39:  # contraction's first test, here to spare the call
        return e
    c = contraction(s, end, e, True)
    return c if c else e


@_kernel
def piece_o200k(s, end, i):
    w = ascii_word_start(s, end, i)
    if w != NO_WORD:
        e = o200k_ascii_word(s, end, w)
        if e:
            return with_contraction(s, end, e)
    o = i + (1 if s[i] == 32 else 0)
    if (o < end and s[o] < 0x80 and (PREDS_BMP[s[o]] & P_O) and
            (o + 1 == end or (s[o + 1] < 0x80 and not is_ascii_letter(s[o + 1])))):
        return run_crlf(s, end, run_of(s, end, o + 1, P_O), True)
    c_cp, c_len, c_p = char_at(s, end, i)
    pre = (c_p & P_PRE) and not (c_cp == 13 or c_cp == 10)
    if pre:
        e = o200k_upper_lower(s, end, i + c_len)
        if e:
            return with_contraction(s, end, e)
    e = o200k_upper_lower(s, end, i)
    if e:
        return with_contraction(s, end, e)
    if pre:
        e = o200k_upper_then_lower(s, end, i + c_len)
        if e:
            return with_contraction(s, end, e)
    e = o200k_upper_then_lower(s, end, i)
    if e:
        return with_contraction(s, end, e)
    if c_p & P_N:
        return digits_1_3(s, end, i, c_len)
    if c_cp == 32:
        n_cp, n_len, n_p = char_at(s, end, i + 1)
        if n_p & P_O:
            return run_crlf(s, end, run_of(s, end, i + 1 + n_len, P_O), True)
    if c_p & P_O:
        return run_crlf(s, end, run_of(s, end, i + c_len, P_O), True)
    j, last, crlf_end = scan_ws(s, end, i)
    if crlf_end:
        return crlf_end
    return ws_tail(j, last, i, end)


# ---- superbpe (SuperBPE's Stage 2: github.com/PythonNut/superbpe, extend_tokenizer.sh) -----
# \p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)   split "isolated": the matches, found
# left to right, are pieces, and so is each nonempty stretch of text between two of them.
@_kernel
def superbpe_match(s, end, i):
    """The match at i (its end), or 0 when none starts at i (the C file says why each branch)."""
    c_cp, c_len, c_p = char_at(s, end, i)
    if c_p & P_N:
        return digits_1_3(s, end, i, c_len)
    k = i
    x_cp, x_len, x_p = c_cp, c_len, c_p
    if c_cp == 32:
        k = i + 1
        x_cp, x_len, x_p = char_at(s, end, k)
    if x_p & P_O:
        y_cp, y_len, y_p = char_at(s, end, k + x_len)
        if y_p & P_O:
            return run_crlf(s, end, run_of(s, end, k + x_len + y_len, P_O), True)
    if c_cp == 32:
        j = i + 1
        while j < end and s[j] == 32:
            j += 1
        if j == end:
            return j
        n_cp, n_len, n_p = char_at(s, end, j)
        if n_p & P_WS:
            return j
        if j - i >= 2:
            return j - 1
    return 0


@_inline
def superbpe_starts(s, end, i):
    """Whether a match starts at i (i < end), from at most three characters."""
    c_cp, c_len, c_p = char_at(s, end, i)
    if c_p & P_N:
        return True
    if c_p & P_O:
        n_cp, n_len, n_p = char_at(s, end, i + c_len)
        return (n_p & P_O) != 0
    if c_cp != 32:
        return False  # a letter, or \s other than the space
    n_cp, n_len, n_p = char_at(s, end, i + 1)
    if not n_len or (n_p & P_WS):
        return True
    if not (n_p & P_O):
        return False
    m_cp, m_len, m_p = char_at(s, end, i + 1 + n_len)
    return (m_p & P_O) != 0


@_kernel
def piece_superbpe(s, end, i):
    e = superbpe_match(s, end, i)
    if e:
        return e
    # the stretch to the next match; ASCII letters start none and are skipped eight bytes at a time
    c_cp, c_len, c_p = char_at(s, end, i)
    k = i + c_len
    while k < end:
        b = np.int64(s[k])
        if 97 <= (b | 0x20) <= 122:
            k = ascii_run(s, end, k + 1, RUN_LETTER)
            continue
        if superbpe_starts(s, end, k):
            return k
        if b < 0x80:
            k += 1
        else:
            n_cp, n_len, n_p = char_at(s, end, k)
            k += n_len
    return end


# ---- script-specific variant (Faster Superword paper, Appendix A) --------------------------
#  ?\p{L}\p{M}*|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
@_kernel
def scan_single_letter(s, end, i):
    c_cp, c_len, c_p = char_at(s, end, i)
    if c_cp == 32:
        n_cp, n_len, n_p = char_at(s, end, i + 1)
        if n_p & P_L:
            return run_of(s, end, i + 1 + n_len, P_M)
        if n_p & P_O:
            return run_crlf(s, end, run_of(s, end, i + 1 + n_len, P_O), True)
    if c_p & P_L:
        return run_of(s, end, i + c_len, P_M)
    if c_p & P_N:
        return digits_1_3(s, end, i, c_len)
    if c_p & P_O:
        return run_crlf(s, end, run_of(s, end, i + c_len, P_O), True)
    j, last, crlf_end = scan_ws(s, end, i)
    if crlf_end:
        return crlf_end
    return ws_tail(j, last, i, end)


# ---- llama3 and qwen2 (HuggingFace tokenizers' Split, "isolated") -------------------------
# llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
#         \s*[\r\n]+|\s+(?!\S)|\s+        qwen2: the same with \p{N} for \p{N}{1,3}.
# Every character starts a match, so the pieces are the matches (the C file says why each branch).
@_inline
def piece_hf_words(s, end, i, three_digits):
    w = i + (1 if s[i] == 32 else 0)
    if w < end and is_ascii_letter(s[w]):
        e = ascii_letters(s, end, w)
        if e:
            return e
    c_cp, c_len, c_p = char_at(s, end, i)
    if c_cp == 39:
        e = contraction(s, end, i, True)
        if e:
            return e
    if (c_p & P_PRE) and not (c_cp == 13 or c_cp == 10):
        n_cp, n_len, n_p = char_at(s, end, i + c_len)
        if n_p & P_L:
            return run_of(s, end, i + c_len + n_len, P_L)
    elif c_p & P_L:
        return run_of(s, end, i + c_len, P_L)
    if c_p & P_N:
        return digits_1_3(s, end, i, c_len) if three_digits else i + c_len
    if c_cp == 32:
        n_cp, n_len, n_p = char_at(s, end, i + 1)
        if n_p & P_O:
            return run_crlf(s, end, run_of(s, end, i + 1 + n_len, P_O), False)
    if c_p & P_O:
        return run_crlf(s, end, run_of(s, end, i + c_len, P_O), False)
    j, last, crlf_end = scan_ws(s, end, i)
    if crlf_end:
        return crlf_end
    return ws_tail(j, last, i, end)


@_kernel
def piece_llama3(s, end, i):
    return piece_hf_words(s, end, i, True)


@_kernel
def piece_qwen2(s, end, i):
    return piece_hf_words(s, end, i, False)


# ---- deepseek_v3 (HuggingFace tokenizers' Sequence of three Splits, each "isolated") -------
# (a) \p{N}{1,3}; (b) [\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+; (c)
# [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
#  ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
# A piece lies inside one segment: a digit group, a CJK run or a run of neither; a character of
# another segment reads as the end of the text (ds_at). The C file says why.
DS_DIGITS, DS_CJK, DS_OTHER = 0, 1, 2


@_inline
def ds_segment(cp, p):
    if p & P_N:
        return DS_DIGITS
    if (0x4E00 <= cp <= 0x9FA5) or (0x3040 <= cp <= 0x30FF):
        return DS_CJK
    return DS_OTHER


@_inline
def ds_at(s, end, k, seg):
    """The character at k, or (0, 0, 0) at the end or past the segment seg."""
    cp, n, p = char_at(s, end, k)
    if n and ds_segment(cp, p) != seg:
        return np.int64(0), np.int64(0), np.int64(0)
    return cp, n, p


@_kernel
def ds_run(s, end, k, mask, seg):
    """End of the run of characters of segment seg having any of mask, from k."""
    while True:
        cp, n, p = ds_at(s, end, k, seg)
        if not (p & mask):
            return k
        k += n


@_kernel
def ds_match(s, end, i, c_cp, c_len, c_p, seg):
    """The match of (c) at i, whose character is c (of segment seg, not a digit), or 0."""
    k = i + c_len
    if c_cp < 0x80 and (c_p & P_PS) and k < end and is_ascii_letter(s[k]):
        return ascii_run(s, end, k + 1, RUN_LETTER)
    n_cp, n_len, n_p = ds_at(s, end, k, seg)
    if not (c_p & (P_L | P_PS)) and not (c_cp == 13 or c_cp == 10) and (n_p & (P_L | P_M)):
        return ds_run(s, end, k + n_len, P_L | P_M, seg)
    if c_p & (P_L | P_M):
        return ds_run(s, end, k, P_L | P_M, seg)
    if (c_cp == 32 and (n_p & P_PS)) or (c_p & P_PS):
        e = ds_run(s, end, k + n_len if c_cp == 32 else k, P_PS, seg)
        return run_crlf(s, end, e, False) if seg == DS_OTHER else e
    if c_p & P_WS:
        j, last, crlf_end = scan_ws(s, end, i)
        if crlf_end:
            return crlf_end
        x_cp, x_len, x_p = ds_at(s, end, j, seg)
        return ws_tail(j, last, i, end if x_len else j)
    return 0


@_inline
def ds_starts(s, end, k, x_len, x_p, seg):
    """Whether a match of (c) starts at k, whose character (x_len, x_p) is of segment seg."""
    if x_p & (P_L | P_M | P_PS | P_WS):
        return True
    n_cp, n_len, n_p = ds_at(s, end, k + x_len, seg)
    return (n_p & (P_L | P_M)) != 0


@_kernel
def piece_deepseek_v3(s, end, i):
    w = i + (1 if s[i] == 32 else 0)
    if w < end and is_ascii_letter(s[w]):
        e = ascii_letters(s, end, w)
        if e:
            return e
    c_cp, c_len, c_p = char_at(s, end, i)
    seg = ds_segment(c_cp, c_p)
    if seg == DS_DIGITS:
        return digits_1_3(s, end, i, c_len)
    e = ds_match(s, end, i, c_cp, c_len, c_p, seg)
    if e:
        return e
    k = i + c_len
    while True:
        x_cp, x_len, x_p = ds_at(s, end, k, seg)
        if not x_len or ds_starts(s, end, k, x_len, x_p, seg):
            return k
        k += x_len


@_kernel
def piece(scan, s, end, i):
    """The scanner scan (SCAN_*) at i: the C file's it->scan(s, end, i)."""
    if scan == SCAN_O200K:
        return piece_o200k(s, end, i)
    if scan == SCAN_CL100K:
        return piece_cl100k(s, end, i)
    if scan == SCAN_GPT2:
        return piece_gpt2(s, end, i)
    if scan == SCAN_SUPERBPE:
        return piece_superbpe(s, end, i)
    if scan == SCAN_LLAMA3:
        return piece_llama3(s, end, i)
    if scan == SCAN_QWEN2:
        return piece_qwen2(s, end, i)
    if scan == SCAN_DEEPSEEK_V3:
        return piece_deepseek_v3(s, end, i)
    return scan_single_letter(s, end, i)


# ---- script chunking (docs/design.md §5) ---------------------------------------------------
@_kernel
def next_chunk(s, end, i):
    """(the end of the chunk starting at i, its script: Common if it has none)."""
    cur = -1
    common_start = 0
    in_common = False
    k = i
    while k < end:
        if s[k] < 0x80:
            cp = np.int64(s[k])
            n = 1
        else:
            cp, n = utf8_decode(s, k)
        if cp < 0x10000:
            sc = np.int64(UCD_BMP_SCRIPT[cp])
        else:
            r = ucd_astral_find(cp)
            sc = np.int64(UCD_ASTRAL_SCRIPT[r]) if r >= 0 else np.int64(ST_SCRIPT_UNKNOWN)
        if sc == ST_SCRIPT_UNKNOWN or sc == ST_SCRIPT_COMMON:
            if not in_common:
                in_common = True
                common_start = k
        elif sc == ST_SCRIPT_INHERITED:
            pass  # stays with the preceding character
        elif cur < 0:
            cur = sc
            in_common = False
        elif sc == cur:
            in_common = False
        else:
            return (common_start if in_common else k), cur
        k += n
    return end, (ST_SCRIPT_COMMON if cur < 0 else cur)


# ---- the piece iterator ----------------------------------------------------------------------
@_kernel
def pieces_init(pt, s, length, it):
    """st__pieces_init"""
    it[IT_LEN] = length
    it[IT_I] = 0
    it[IT_CHUNK_END] = 0
    it[IT_SCAN] = pt.pattern
    if not (pt.flags & ST_PRETOK_SCRIPT_AWARE):
        it[IT_CHUNK_END] = length  # one chunk: the text


@_kernel
def pieces_next(pt, s, length, it):
    """st__pieces_next: the end of the next piece (call while it[IT_I] < length)."""
    i = it[IT_I]
    if i >= it[IT_CHUNK_END]:  # script-aware: the next chunk and its scanner
        chunk_end, script = next_chunk(s, length, i)
        it[IT_CHUNK_END] = chunk_end
        single = (pt.single_letter_scripts[script >> 5] >> np.uint32(script & 31)) & np.uint32(1)
        it[IT_SCAN] = SCAN_SINGLE_LETTER if single else pt.pattern
    e = piece(it[IT_SCAN], s, it[IT_CHUNK_END], i)
    it[IT_I] = e
    return e


@_kernel
def pieces_fill(pt, s, length, it, ends, cap):
    """st__pieces_fill: the ends of up to cap next pieces in ends[0..); their number (0 only at
    the end of the text)."""
    n = 0
    if pt.flags & ST_PRETOK_SCRIPT_AWARE:
        while n < cap and it[IT_I] < length:
            ends[n] = pieces_next(pt, s, length, it)
            n += 1
        return n
    i = it[IT_I]
    if pt.pattern == ST_PATTERN_O200K:
        while n < cap and i < length:
            i = piece_o200k(s, length, i)
            ends[n] = i
            n += 1
    elif pt.pattern == ST_PATTERN_CL100K:
        while n < cap and i < length:
            i = piece_cl100k(s, length, i)
            ends[n] = i
            n += 1
    elif pt.pattern == ST_PATTERN_SUPERBPE:
        while n < cap and i < length:
            i = piece_superbpe(s, length, i)
            ends[n] = i
            n += 1
    elif pt.pattern == ST_PATTERN_LLAMA3:
        while n < cap and i < length:
            i = piece_llama3(s, length, i)
            ends[n] = i
            n += 1
    elif pt.pattern == ST_PATTERN_QWEN2:
        while n < cap and i < length:
            i = piece_qwen2(s, length, i)
            ends[n] = i
            n += 1
    elif pt.pattern == ST_PATTERN_DEEPSEEK_V3:
        while n < cap and i < length:
            i = piece_deepseek_v3(s, length, i)
            ends[n] = i
            n += 1
    else:
        while n < cap and i < length:
            i = piece_gpt2(s, length, i)
            ends[n] = i
            n += 1
    it[IT_I] = i
    return n


@njit(cache=True, nogil=True)
def scan_all(pt, s, length, ends, cap):
    """Write piece ends to ends[0..cap) and count them all."""
    it = np.empty(ITER_FIELDS, np.int64)
    pieces_init(pt, s, length, it)
    n = 0
    if not (pt.flags & ST_PRETOK_SCRIPT_AWARE):  # the fill loops, without the iterator
        i = 0
        scan = pt.pattern
        while i < length:
            i = piece(scan, s, length, i)
            if n < cap:
                ends[n] = i
            n += 1
        return n
    while it[IT_I] < length:
        e = pieces_next(pt, s, length, it)
        if n < cap:
            ends[n] = e
        n += 1
    return n


@_kernel
def ends_to_codepoints(s, ends, n):
    """Rewrite byte ends as code point ends: one pass counting the bytes that start a character."""
    pos = 0
    cps = 0
    for k in range(n):
        e = np.int64(ends[k])
        while pos < e:
            if (s[pos] & 0xC0) != 0x80:
                cps += 1
            pos += 1
        ends[k] = cps


@njit(cache=True, nogil=True)
def join_pieces(pt, s, length, sep, out, cap):
    """st_pretokenize_join's loop: the pieces each followed by sep into out[0..cap) where they
    fit; the size of the whole."""
    it = np.empty(ITER_FIELDS, np.int64)
    pieces_init(pt, s, length, it)
    n = 0
    start = 0
    while it[IT_I] < length:
        e = pieces_next(pt, s, length, it)
        if n + (e - start) + 1 <= cap:
            for k in range(e - start):
                out[n + k] = s[start + k]
            out[n + (e - start)] = sep
        n += e - start + 1
        start = e
    return n


# ---- the handle ----------------------------------------------------------------------------
DEFAULT_SCRIPTS = b"Han,Hiragana,Katakana,Thai,Myanmar,Khmer,Lao"


def _name_message(p):
    """append_name: a script name as the caller wrote it, quoted."""
    plain = len(p) <= 64
    if plain:
        try:
            p.decode("utf-8")  # strict: no surrogates, no overlongs, as st_utf8_validate
        except UnicodeDecodeError:
            plain = False
    if plain and any(c < 0x20 or c == 0x7F or c == 0x22 or c == 0x5C for c in p):
        plain = False
    return quoted(p).encode("ascii") if not plain else b'"' + p + b'"'


def parse_scripts(words, lst, length, err):
    """parse_scripts: set the bits of the listed scripts in words (uint32[8]); a status."""
    lst = bytes(lst[:length])
    i = 0
    while i < length:
        j = lst.find(b",", i)
        if j < 0:
            j = length
        a, b = i, j  # trim spaces around the name
        while a < b and lst[a] == 0x20:
            a += 1
        while b > a and lst[b - 1] == 0x20:
            b -= 1
        if b > a:
            sid = script_from_name(lst[a:b], b - a)
            if sid < 0:
                return fail(err, ST_ERR_UNKNOWN_SCRIPT, ST_UNIT_BYTE, a,
                            b"unknown script " + _name_message(lst[a:b]), kind=ST_KIND_NONE, length=b - a)
            words[sid >> 5] |= np.uint32(1 << (sid & 31))
        i = j + 1
    return ST_OK


def pretokenizer_init(pattern, flags, scripts=None, scripts_len=None, err=None):
    """st__pretokenizer_init: (status, the Pretokenizer or None); err (an Err or None) filled on
    failure. scripts: bytes or a uint8 array (scripts_len of it, all by default), or None for
    the default set."""
    if not ST_PATTERN_GPT2 <= pattern <= ST_PATTERN_DEEPSEEK_V3:
        return fail(err, ST_ERR_UNKNOWN_PATTERN, ST_UNIT_NONE, 0, "pattern %d" % (pattern & 0xFFFFFFFF)), None
    if flags & ~ST_PRETOK_SCRIPT_AWARE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags"), None
    words = np.zeros(ST_SCRIPT_WORDS, np.uint32)
    if scripts is None:
        st = parse_scripts(words, DEFAULT_SCRIPTS, len(DEFAULT_SCRIPTS), err)
    else:
        st = parse_scripts(words, scripts, len(scripts) if scripts_len is None else scripts_len, err)
    if st != ST_OK:
        return st, None
    return ST_OK, Pretokenizer(int(pattern), int(flags), words)


# ---- tiktoken's pat_str strings (pretokenize.c's known_patterns) -----------------------------
KNOWN_PATTERNS = (
    # r50k_base, p50k_base
    (b"'(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s", ST_PATTERN_GPT2),
    # cl100k_base
    (b"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|"
     b"\\s*[\\r\\n]|\\s+(?!\\S)|\\s", ST_PATTERN_CL100K),
    # o200k_base
    (b"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
     b"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
     b"[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|"
     b"\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", ST_PATTERN_O200K),
    # SuperBPE's Stage 2 (split "isolated": the text between matches is a piece too)
    (b"\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*| +(?!\\S)", ST_PATTERN_SUPERBPE),
    # Llama 3's and Qwen 2's (HuggingFace's Split, isolated; the regexes match every character)
    (b"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     b"\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", ST_PATTERN_LLAMA3),
    (b"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     b"\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", ST_PATTERN_QWEN2),
    # DeepSeek V3's: three Splits in sequence, named by the last one's regex (CR and LF are the
    # characters themselves inside its classes); the first two are fixed
    (b"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
     b" ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+", ST_PATTERN_DEEPSEEK_V3),
)


def pattern_regex(pattern):
    """st__pattern_regex: the pat_str (bytes) of pattern's scanner, or None."""
    for r, p in KNOWN_PATTERNS:
        if p == pattern:
            return r
    return None


_EMPTY_U8 = np.zeros(16, np.uint8)
_EMPTY_U64 = np.zeros(1, np.uint64)


@export
def st_pattern_from_regex(pat, length, pattern, err):
    clear(err)
    if (pat is None and length) or pattern is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    text = bytes(pat[:length]) if length else b""
    for r, p in KNOWN_PATTERNS:
        if r == text:
            pattern.v = p
            return ST_OK
    return fail(err, ST_ERR_UNSUPPORTED_PATTERN, ST_UNIT_NONE, 0,
                "not one of tiktoken's r50k/p50k, cl100k or o200k patterns, SuperBPE's Stage-2 pattern or Llama 3's, "
                "Qwen 2's or DeepSeek V3's")


@export
def st_pretokenizer_new(pattern, flags, scripts, scripts_len, alloc, out, err):
    clear(err)
    if out is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    out.v = None
    st, pt = pretokenizer_init(pattern, flags, scripts, scripts_len, err)
    if st != ST_OK:
        return st
    out.v = pt
    return ST_OK


@export
def st_pretokenizer_free(pt):
    pass


@export
def st_pretokenize(pt, text, length, flags, ends, cap, n_pieces, err):
    clear(err)
    if pt is None or n_pieces is None or (text is None and length) or (ends is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    if flags & ~ST_OFFSETS_CODEPOINTS:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags")
    n_pieces.v = 0
    st = utf8_validate(text, length, err)
    if st != ST_OK:
        return st
    s = _EMPTY_U8 if text is None else text
    out = _EMPTY_U64 if ends is None else ends
    n = int(scan_all(pt, s, length, out, cap))
    n_pieces.v = n
    if n > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    if flags & ST_OFFSETS_CODEPOINTS:
        ends_to_codepoints(s, out, n)
    return ST_OK


@export
def st_pretokenize_count(pt, text, length, n_pieces, err):
    clear(err)
    if pt is None or n_pieces is None or (text is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    n_pieces.v = 0
    st = utf8_validate(text, length, err)
    if st != ST_OK:
        return st
    n_pieces.v = int(scan_all(pt, _EMPTY_U8 if text is None else text, length, _EMPTY_U64, 0))
    return ST_OK


@export
def st_pretokenize_join(pt, text, length, sep, out, cap, out_len, err):
    clear(err)
    if pt is None or out_len is None or (text is None and length) or (out is None and cap) or sep >= 0x80:
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    out_len.v = 0
    st = utf8_validate(text, length, err)
    if st != ST_OK:
        return st
    n = int(join_pieces(pt, _EMPTY_U8 if text is None else text, length, np.uint8(sep),
                        _EMPTY_U8 if out is None else out, cap))
    out_len.v = n
    if n > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK
