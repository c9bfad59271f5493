"""Mirrors core_c/src/formats/json.c and json.h: a small strict JSON reader (RFC 8259) for the model
files other libraries write (formats/tokenizer_json.py): no tree, no recursion; the caller walks
the text with a position, reading the values it wants and skipping the rest. Strings are decoded
as serde_json decodes them; every error names its byte offset (ST_ERR_MALFORMED_MODEL,
ST_UNIT_BYTE).

The kernels work on the file's bytes s (a padded uint8 array) and its length n, and return a
message code (0: no error) with the offset of the error or the new position; MESSAGES words the
codes, as json.c's literals. The Python functions (the json.h calls) take a Json (s, n, err) and
fill the Err as st__json_error does.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..base.common import ST_OK, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE
from ..text.utf8 import utf8_byte, utf8_length, utf8_validate

ST_JSON_MAX_DEPTH = 512

MESSAGES = (
    "", "expected a string", "invalid UTF-8 in a string", "the file ends inside a string",
    "a control character inside a string (escape it)", "the file ends inside an escape",
    "a \\u escape needs four hex digits", "a lone low surrogate escape", "a lone high surrogate escape",
    "an unknown escape", "expected a number", "expected a whole number from 0 to 4294967295",
    "a number above 4294967295", "expected true or false", "expected an object", "expected an array",
    "the file ends inside an array or object", "expected ',' or a closing bracket", "expected ':' after a key",
    "the file ends inside a value", "nested too deep", "expected a value",
)
(J_OK, J_EXPECTED_STRING, J_BAD_UTF8, J_ENDS_STRING, J_CONTROL, J_ENDS_ESCAPE, J_HEX4, J_LONE_LOW, J_LONE_HIGH,
 J_UNKNOWN_ESCAPE, J_EXPECTED_NUMBER, J_WHOLE, J_ABOVE, J_BOOL, J_EXPECTED_OBJECT, J_EXPECTED_ARRAY, J_ENDS_ARRAY,
 J_COMMA, J_COLON, J_ENDS_VALUE, J_TOO_DEEP, J_EXPECTED_VALUE) = range(len(MESSAGES))

Json = namedtuple("Json", "s n err")  # st__json: the file's bytes (padded), its length, the report


@njit(cache=True, nogil=True)
def json_ws(s, n, i):
    """st__json_ws."""
    while i < n and (s[i] == 32 or s[i] == 10 or s[i] == 13 or s[i] == 9):
        i += 1
    return i


@njit(cache=True, nogil=True)
def hex4(s, p):
    """(ok, value) of four hex digits at s[p..]."""
    x = 0
    for k in range(4):
        c = np.int64(s[p + k])
        if 48 <= c <= 57:
            d = c - 48
        elif 97 <= c <= 102:
            d = c - 97 + 10
        elif 65 <= c <= 70:
            d = c - 65 + 10
        else:
            return False, 0
        x = (x << 4) | d
    return True, x


@njit(cache=True, nogil=True)
def put_utf8(cp, b, w, cap):
    """The UTF-8 of cp (st__utf8_encode) written at b[w..] where below cap; the new w."""
    k = utf8_length(cp)
    for j in range(k):
        if w < cap:
            b[w] = utf8_byte(cp, k, j)
        w += 1
    return w


@njit(cache=True, nogil=True)
def json_string_k(s, n, i, out, o0, cap):
    """st__json_string: the string at i decoded into out[o0 .. o0 + cap). (code, end or error
    offset, decoded length)."""
    p = json_ws(s, n, i)
    w = 0
    if p >= n or s[p] != 34:
        return J_EXPECTED_STRING, p, 0
    p += 1
    while True:
        a = p
        while p < n and s[p] != 34 and s[p] != 92 and s[p] >= 0x20:
            p += 1
        if p > a:
            bad, _ = utf8_validate(s[a:], p - a)
            if bad >= 0:
                return J_BAD_UTF8, a + bad, 0
            k = p - a
            if w < cap:
                m = k if k <= cap - w else cap - w
                out[o0 + w:o0 + w + m] = s[a:a + m]
            w += k
        if p >= n:
            return J_ENDS_STRING, p, 0
        c = s[p]
        if c == 34:
            break
        if c < 0x20:
            return J_CONTROL, p, 0
        if p + 1 >= n:
            return J_ENDS_ESCAPE, p, 0
        e = s[p + 1]
        x = -1
        if e == 34:
            x = 34
        elif e == 92:
            x = 92
        elif e == 47:
            x = 47
        elif e == 98:
            x = 8
        elif e == 102:
            x = 12
        elif e == 110:
            x = 10
        elif e == 114:
            x = 13
        elif e == 116:
            x = 9
        elif e == 117:
            ok = p + 6 <= n
            cp = 0
            if ok:
                ok, cp = hex4(s, p + 2)
            if not ok:
                return J_HEX4, p, 0
            if 0xDC00 <= cp <= 0xDFFF:
                return J_LONE_LOW, p, 0
            if 0xD800 <= cp <= 0xDBFF:
                ok2 = p + 12 <= n and s[p + 6] == 92 and s[p + 7] == 117
                lo = 0
                if ok2:
                    ok2, lo = hex4(s, p + 8)
                if not ok2 or lo < 0xDC00 or lo > 0xDFFF:
                    return J_LONE_HIGH, p, 0
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                p += 6
            w2 = put_utf8(cp, out[o0:], w, cap)
            w = w2
            p += 4
        else:
            return J_UNKNOWN_ESCAPE, p, 0
        if x >= 0:
            if w < cap:
                out[o0 + w] = x
            w += 1
        p += 2
    return J_OK, p + 1, w


@njit(cache=True, nogil=True)
def is_digit(c):
    return 48 <= c <= 57


@njit(cache=True, nogil=True)
def number_end(s, n, p):
    """The end of the number at p, or 0 if none is there."""
    if p < n and s[p] == 45:
        p += 1
    if p >= n or not is_digit(s[p]):
        return 0
    if s[p] == 48:
        p += 1
    else:
        while p < n and is_digit(s[p]):
            p += 1
    if p < n and s[p] == 46:
        p += 1
        if p >= n or not is_digit(s[p]):
            return 0
        while p < n and is_digit(s[p]):
            p += 1
    if p < n and (s[p] == 101 or s[p] == 69):
        p += 1
        if p < n and (s[p] == 43 or s[p] == 45):
            p += 1
        if p >= n or not is_digit(s[p]):
            return 0
        while p < n and is_digit(s[p]):
            p += 1
    return p


@njit(cache=True, nogil=True)
def json_u32_k(s, n, i):
    """st__json_u32: (code, end or error offset, value)."""
    p = json_ws(s, n, i)
    e = number_end(s, n, p)
    if not e:
        return J_EXPECTED_NUMBER, p, 0
    x = np.int64(0)
    for k in range(p, e):
        if not is_digit(s[k]) or (k == p and s[k] == 48 and e > p + 1):
            return J_WHOLE, p, 0
        x = x * 10 + (np.int64(s[k]) - 48)
        if x > 0xFFFFFFFF:
            return J_ABOVE, p, 0
    return J_OK, e, x


@njit(cache=True, nogil=True)
def word_at(s, n, p, w0, w1, w2, w3, w4, ln):
    if p + ln > n:
        return False
    for k in range(ln):
        c = w0 if k == 0 else w1 if k == 1 else w2 if k == 2 else w3 if k == 3 else w4
        if s[p + k] != c:
            return False
    return True


@njit(cache=True, nogil=True)
def is_true(s, n, p):
    return word_at(s, n, p, 116, 114, 117, 101, 0, 4)


@njit(cache=True, nogil=True)
def is_false(s, n, p):
    return word_at(s, n, p, 102, 97, 108, 115, 101, 5)


@njit(cache=True, nogil=True)
def is_null(s, n, p):
    return word_at(s, n, p, 110, 117, 108, 108, 0, 4)


@njit(cache=True, nogil=True)
def json_colon_k(s, n, i):
    p = json_ws(s, n, i)
    if p >= n or s[p] != 58:
        return J_COLON, p
    return J_OK, p + 1


@njit(cache=True, nogil=True)
def json_next_k(s, n, i, close, first):
    """st__json_next: (code, position or error offset, more)."""
    p = json_ws(s, n, i)
    if p < n and s[p] == close:
        return J_OK, p + 1, False
    if not first:
        if p >= n or s[p] != 44:
            return (J_ENDS_ARRAY if p >= n else J_COMMA), p, False
        p = json_ws(s, n, p + 1)
    if p >= n:
        return J_ENDS_ARRAY, p, False
    return J_OK, p, True


@njit(cache=True, nogil=True)
def json_open_k(s, n, i, open_):
    p = json_ws(s, n, i)
    if p >= n or s[p] != open_:
        return (J_EXPECTED_OBJECT if open_ == 123 else J_EXPECTED_ARRAY), p
    return J_OK, p + 1


@njit(cache=True, nogil=True)
def json_skip_k(s, n, i):
    """st__json_skip with no recursion: (code, end or error offset)."""
    kinds = np.zeros(ST_JSON_MAX_DEPTH // 64, np.uint64)
    no_out = np.zeros(1, np.uint8)
    depth = 0
    p = i
    want_value = True
    want_key = False
    while True:
        p = json_ws(s, n, p)
        if p >= n:
            return J_ENDS_VALUE, p
        c = s[p]
        if want_value:
            if want_key:
                code, q, _ = json_string_k(s, n, p, no_out, 0, 0)
                if code:
                    return code, q
                code, q = json_colon_k(s, n, q)
                if code:
                    return code, q
                p = q
                want_key = False
                continue
            if c == 123 or c == 91:
                if depth >= ST_JSON_MAX_DEPTH:
                    return J_TOO_DEEP, p
                bit = np.uint64(1) << np.uint64(depth % 64)
                if c == 123:
                    kinds[depth // 64] |= bit
                else:
                    kinds[depth // 64] &= ~bit
                depth += 1
                p += 1
                q = json_ws(s, n, p)
                if q < n and s[q] == (125 if c == 123 else 93):
                    depth -= 1
                    p = q + 1
                    want_value = False
                else:
                    want_key = c == 123
            elif c == 34:
                code, q, _ = json_string_k(s, n, p, no_out, 0, 0)
                if code:
                    return code, q
                p = q
                want_value = False
            elif is_true(s, n, p):
                p += 4
                want_value = False
            elif is_false(s, n, p):
                p += 5
                want_value = False
            elif is_null(s, n, p):
                p += 4
                want_value = False
            else:
                e = number_end(s, n, p)
                if not e:
                    return J_EXPECTED_VALUE, p
                p = e
                want_value = False
            if not want_value and depth == 0:
                break
            continue
        obj = (kinds[(depth - 1) // 64] >> np.uint64((depth - 1) % 64)) & np.uint64(1)
        if c == 44:
            p += 1
            want_value = True
            want_key = obj != 0
            continue
        if c == (125 if obj else 93):
            p += 1
            depth -= 1
            if depth == 0:
                break
            continue
        return J_COMMA, p
    return J_OK, p


# ---- json.h's calls (Python: they run a few times a section; the loops are the kernels') ----

def json_error(j, at, what):
    """st__json_error."""
    if j.err is not None:
        j.err.fail(ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, what)
    return ST_ERR_MALFORMED_MODEL


def _code(j, code, at):
    return ST_OK if code == J_OK else json_error(j, int(at), MESSAGES[code])


def ws(j, i):
    return int(json_ws(j.s, j.n, i))


def peek(j, i):
    """st__json_peek: (first byte of the value at i or 0, its position)."""
    i = ws(j, i)
    return (int(j.s[i]) if i < j.n else 0), i


def string(j, i, cap=0):
    """st__json_string: (status, new i, the first min(len, cap) decoded bytes, len)."""
    out = np.zeros(cap + 1, np.uint8)
    code, p, w = json_string_k(j.s, j.n, i, out, 0, cap)
    if code:
        return _code(j, code, p), i, b"", 0
    return ST_OK, int(p), out[:min(w, cap)].tobytes(), int(w)


def u32(j, i):
    code, p, x = json_u32_k(j.s, j.n, i)
    if code:
        return _code(j, code, p), i, 0
    return ST_OK, int(p), int(x)


def boolean(j, i):
    """st__json_bool: (status, new i, value)."""
    p = ws(j, i)
    if is_true(j.s, j.n, p):
        return ST_OK, p + 4, 1
    if is_false(j.s, j.n, p):
        return ST_OK, p + 5, 0
    return json_error(j, p, MESSAGES[J_BOOL]), i, 0


def null(j, i):
    """st__json_null: (1 and the position past it, or 0 and i)."""
    p = ws(j, i)
    if not is_null(j.s, j.n, p):
        return 0, i
    return 1, p + 4


def open_(j, i, c):
    code, p = json_open_k(j.s, j.n, i, ord(c))
    if code:
        return _code(j, code, p), i
    return ST_OK, int(p)


def next_(j, i, close, first):
    """st__json_next: (status, new i, more)."""
    code, p, more = json_next_k(j.s, j.n, i, ord(close), first)
    if code:
        return _code(j, code, p), i, 0
    return ST_OK, int(p), int(more)


def colon(j, i):
    code, p = json_colon_k(j.s, j.n, i)
    if code:
        return _code(j, code, p), i
    return ST_OK, int(p)


def skip(j, i):
    code, p = json_skip_k(j.s, j.n, i)
    if code:
        return _code(j, code, p), i
    return ST_OK, int(p)
