"""Mirrors core_c/src/encode/cut.c: st_encoding_cut, cut points for encoding one long text in
parts (docs/design.md §7, "Caches and parallelism"; the C file says why each rule holds).

The scan over the candidates is one kernel, encoding_cut(): the text s is a uint8 array (not
validated: characters are decoded here with bounds and validity checks), the vocabulary's
special strings are read from its arrays (specials_clear), the pre-tokenizer's fields are
passed as ints and its single-letter scripts as their uint32 words. cut_supported and
cut_within (C: st__cut_supported, st__cut_within) are the span cache's (pipeline.py): kernels
that take the encoding's Pretokenizer.
"""
import numpy as np
from numba import njit

from .. import export
from ..base.common import ST_OK, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, clear, fail
from ..formats.vocab import vocab_special_string
from ..text.unicode import ucd_class, ucd_script, ST_UCD_CLASS_MASK, ST_UCD_WHITE_SPACE, ST_UCD_LU, ST_UCD_LO, \
    ST_SCRIPT_UNKNOWN, ST_SCRIPT_COMMON, ST_SCRIPT_INHERITED
from ..text.pretokenize import ST_PATTERN_GPT2, ST_PATTERN_SUPERBPE, ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2, \
    ST_PATTERN_DEEPSEEK_V3, ST_PRETOK_SCRIPT_AWARE
from .encoding import ST__KIND_RULES

# How many characters the script-aware newline rule looks back for the line's last real-script
# character: beyond that the candidate is refused (bounds the work per candidate).
CUT_LOOKBACK = 32


@njit(cache=True, nogil=True)
def dec_fwd(s, length, i):
    """The valid UTF-8 character starting at s[i] (i < length): (its length 1-4, code point), or
    (0, 0) if the bytes there are no valid character (the rules of st_utf8_validate)."""
    b = np.int64(s[i])
    if b < 0x80:
        return 1, b
    lo, hi = 0x80, 0xBF
    if b >= 0xC2 and b <= 0xDF:
        need = 1
    elif b >= 0xE0 and b <= 0xEF:
        need = 2
        if b == 0xE0:
            lo = 0xA0
        elif b == 0xED:
            hi = 0x9F
    elif b >= 0xF0 and b <= 0xF4:
        need = 3
        if b == 0xF0:
            lo = 0x90
        elif b == 0xF4:
            hi = 0x8F
    else:
        return 0, 0
    if length - i <= need or s[i + 1] < lo or s[i + 1] > hi:
        return 0, 0
    for k in range(2, need + 1):
        if (s[i + k] & 0xC0) != 0x80:
            return 0, 0
    if need == 1:
        return 2, ((b & 0x1F) << 6) | (np.int64(s[i + 1]) & 0x3F)
    if need == 2:
        return 3, ((b & 0x0F) << 12) | ((np.int64(s[i + 1]) & 0x3F) << 6) | (np.int64(s[i + 2]) & 0x3F)
    return 4, (((b & 0x07) << 18) | ((np.int64(s[i + 1]) & 0x3F) << 12) | ((np.int64(s[i + 2]) & 0x3F) << 6)
               | (np.int64(s[i + 3]) & 0x3F))


@njit(cache=True, nogil=True)
def dec_back(s, length, i):
    """The valid character ending just before s[i] (i > 0): (its length, code point), or (0, 0)."""
    k = i - 1
    n = 1
    while n < 4 and k > 0 and (s[k] & 0xC0) == 0x80:
        k -= 1
        n += 1
    l, cp = dec_fwd(s, length, k)
    return (l, cp) if l == i - k else (0, 0)


@njit(cache=True, nogil=True)
def is_letter(cp):
    c = ucd_class(cp) & ST_UCD_CLASS_MASK
    return c >= ST_UCD_LU and c <= ST_UCD_LO


@njit(cache=True, nogil=True)
def is_ws(cp):
    return (ucd_class(cp) & ST_UCD_WHITE_SPACE) != 0


@njit(cache=True, nogil=True)
def real_script(sc):
    """A real script: neither Common, Inherited nor Unknown (which chunking counts as Common)."""
    return sc != ST_SCRIPT_UNKNOWN and sc != ST_SCRIPT_COMMON and sc != ST_SCRIPT_INHERITED


@njit(cache=True, nogil=True)
def variant_script(scripts, sc):
    return ((np.int64(scripts[sc >> 5]) >> (sc & 31)) & 1) != 0


@njit(cache=True, nogil=True)
def rule_letter_space(s, length, script_aware, p):
    """Rule "letter | space": s[p] is ' ' (checked by the caller) and the character before is a
    letter; script-aware, the character after the space is a letter of that letter's real
    script. (ok, lo, hi)."""
    la, a = dec_back(s, length, p)
    if not la or not is_letter(a):
        return False, 0, 0
    lo = p - la
    hi = p + 1
    if script_aware:
        if p + 1 >= length:
            return False, 0, 0
        lb, b = dec_fwd(s, length, p + 1)
        if not lb or not is_letter(b):
            return False, 0, 0
        sa = ucd_script(a)
        if not real_script(sa) or ucd_script(b) != sa:
            return False, 0, 0
        hi = p + 1 + lb
    return True, lo, hi


@njit(cache=True, nogil=True)
def rule_newline(s, length, script_aware, crlf, p):
    """Rule "newline | letter": s[p - 1] is '\\n' (checked by the caller; "\\r\\n" where crlf), a
    letter follows, and the character before the line break is no whitespace (or there is none);
    script-aware, the last real-script character before the break is of the letter's real
    script. (ok, lo, hi)."""
    lb, b = dec_fwd(s, length, p)
    if not lb or not is_letter(b):
        return False, 0, 0
    q = p - 1  # where the line break starts
    if crlf and q > 0 and s[q - 1] == 0x0D:
        q -= 1
    lo = q
    hi = p + lb
    if q > 0:
        la, a = dec_back(s, length, q)
        if not la or is_ws(a):
            return False, 0, 0
        lo = q - la
    if script_aware:
        sb = ucd_script(b)
        if not real_script(sb):
            return False, 0, 0
        k = q
        n = 0
        while n < CUT_LOOKBACK and k > 0:
            la, a = dec_back(s, length, k)
            if not la:
                return False, 0, 0
            k -= la
            sa = ucd_script(a)
            if real_script(sa):
                return sa == sb, k, hi
            n += 1
        return False, 0, 0  # no real script close enough before the break
    return True, lo, hi


@njit(cache=True, nogil=True)
def rule_scripts(s, length, scripts, p):
    """Rule "script | script" (script-aware only): the characters on both sides have real
    scripts, and either the scripts differ (a chunk boundary) or their chunk uses the
    single-letter variant, the left one is no whitespace and the right one a letter."""
    la, a = dec_back(s, length, p)
    if not la:
        return False, 0, 0
    lb, b = dec_fwd(s, length, p)
    if not lb:
        return False, 0, 0
    sa = ucd_script(a)
    sb = ucd_script(b)
    if not real_script(sa) or not real_script(sb):
        return False, 0, 0
    if sa == sb and not (variant_script(scripts, sa) and not is_ws(a) and is_letter(b)):
        return False, 0, 0
    return True, p - la, p + lb


special_string = vocab_special_string  # vocab.h's checked accessor (formats/vocab.py)


@njit(cache=True, nogil=True)
def specials_clear(v, s, length, lo, hi):
    """1 if no special token of the encoding (allowed or not: the cut does not depend on the
    policy) occurs in the text overlapping s[lo..hi), the characters the rule looked at."""
    for k in range(v.n_special + v.n_extra):  # every string of every special
        ok, sid, a, tl = special_string(v, k)
        if not ok:
            continue
        x = lo - tl + 1 if lo >= tl else 0
        while x < hi and tl <= length - x:
            if s[x] == v.bytes[a]:
                same = True
                for j in range(tl):
                    if s[x + j] != v.bytes[a + j]:
                        same = False
                        break
                if same:
                    return False
            x += 1
    return True


@njit(cache=True, nogil=True)
def rule_at(scripts, s, length, script_aware, superwords, crlf, p):
    """Whether a rule holds at p (0 < p < length, on a character boundary), and [lo, hi), the
    characters it looked at."""
    ok = False
    lo = hi = 0
    if s[p - 1] == 0x0A:
        ok, lo, hi = rule_newline(s, length, script_aware, crlf, p)
    if not ok and not superwords:
        if s[p] == 0x20:
            ok, lo, hi = rule_letter_space(s, length, script_aware, p)
        elif script_aware:
            ok, lo, hi = rule_scripts(s, length, scripts, p)
    return ok, lo, hi


@njit(cache=True, nogil=True)
def cut_at(v, scripts, s, length, script_aware, superwords, crlf, p):
    """1 if p (0 < p < length, on a character boundary) is a cut."""
    ok, lo, hi = rule_at(scripts, s, length, script_aware, superwords, crlf, p)
    return ok and specials_clear(v, s, length, lo, hi)


@njit(cache=True, nogil=True)
def encoding_cut(v, scripts, s, length, frm, script_aware, superwords, crlf):
    """The scan of st_encoding_cut: the first cut at or after frm (and > 0), else length."""
    p = frm if frm > 0 else 1
    while p < length:
        if (s[p] & 0xC0) != 0x80 and cut_at(v, scripts, s, length, script_aware, superwords, crlf, p):
            return p
        p += 1
    return length


@njit(cache=True, nogil=True)
def ctx_init(pattern, within=False):
    """ctx_init's verdict on the encoding's pattern: False when it has no proven rule (then no
    place is a cut). within: for ordinary text (st__cut_within), where llama3's, qwen2's and
    deepseek_v3's rules hold too (C: has_rules_within)."""
    # superbpe: letters, single spaces, single punctuation and line breaks all stay inside one piece
    # (the text between the regex's matches), so neither rule proves a boundary: no cut
    if pattern == ST_PATTERN_SUPERBPE:
        return False
    if within and (pattern == ST_PATTERN_LLAMA3 or pattern == ST_PATTERN_QWEN2 or pattern == ST_PATTERN_DEEPSEEK_V3):
        return True
    # llama3, qwen2, deepseek_v3 across a whole text: the rules are proved for the tiktoken
    # patterns only; no cut
    if pattern >= ST_PATTERN_LLAMA3:
        return False
    return True


@export
def st_encoding_cut(enc, text, length, frm, at, err):
    clear(err)
    if enc is None or at is None or (text is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0)
    at.v = length
    if frm >= length:  # no candidate from there (and frm may be any size_t)
        return ST_OK
    pt = enc.pt
    script_aware = (pt.flags & ST_PRETOK_SCRIPT_AWARE) != 0
    superwords = enc.kind == ST__KIND_RULES and enc.supers is not None and enc.supers.n > 0
    crlf = pt.pattern != ST_PATTERN_GPT2
    if not ctx_init(pt.pattern):
        return ST_OK
    at.v = int(encoding_cut(enc.vocab, np.asarray(pt.single_letter_scripts, np.uint32), text, np.int64(length),
                            np.int64(frm), script_aware, superwords, crlf))
    return ST_OK


@njit(cache=True, nogil=True)
def cut_supported(pt):
    """st__cut_supported: the encoding's pattern (pt, its Pretokenizer) has proven cut rules
    (st__cut_within finds places)."""
    return ctx_init(pt.pattern, True)


@njit(cache=True, nogil=True)
def cut_within(pt, superwords, s, length, frm, to):
    """st__cut_within: the first place p, frm <= p < to, where the ordinary text s[0 .. length)
    (text between special tokens: no special-token check is made) may be cut by the rules of
    st_encoding_cut: the pieces of s[0 .. p) and of s[p .. length), each pre-tokenized alone, are
    those of s. 0 if none. pt: the encoding's Pretokenizer; superwords: a superword model's."""
    if not ctx_init(pt.pattern, True):
        return 0
    script_aware = (pt.flags & ST_PRETOK_SCRIPT_AWARE) != 0
    crlf = pt.pattern != ST_PATTERN_GPT2
    if to > length:
        to = length
    p = frm if frm > 0 else 1
    # only the bytes a rule starts from: a line feed before the place, or a space at it
    while p < to:
        x = s[p]
        if (s[p - 1] == 0x0A or x == 0x20 or script_aware) and (x & 0xC0) != 0x80:
            ok, lo, hi = rule_at(pt.single_letter_scripts, s, length, script_aware, superwords, crlf, p)
            if ok:
                return p
        p += 1
    return 0
