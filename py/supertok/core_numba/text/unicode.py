"""Mirrors core_c/src/text/unicode.c, unicode.h and unicode_tables.h: a code point's class and
script, the script names and aliases, the Unicode version.

The data is not generated here: core_c/tools/gen_unicode_tables.py writes it twice from one
source, as core_c/src/text/unicode_tables.c for the C core and as unicode_tables.bin (beside
this file; its BINARY FORMAT is in the generator's docstring) for the port, and its --check
compares both. This module reads the .bin once at import with numpy.

Kernels (njit): ucd_astral_find (st_ucd_astral_find: an index into the ASTRAL_* arrays, or -1),
ucd_class, ucd_script (unicode.h's inline lookups). The tables are module globals, which numba
freezes into the kernels that read them, and so into its cache: a cache compiled from another
unicode_tables.bin would answer with the old tables, as numba keys its cache on the source file
alone. So the port's cache folder is named by a digest that covers the .bin (core_numba/__init__.py).
"""
import os

import numpy as np
from numba import njit

from .. import export

# -- unicode_tables.h --
ST_UCD_OTHER, ST_UCD_LU, ST_UCD_LL, ST_UCD_LT, ST_UCD_LM, ST_UCD_LO, ST_UCD_M, ST_UCD_N = range(8)
ST_UCD_CLASS_MASK = 7
ST_UCD_WHITE_SPACE = 8
ST_UCD_P = 16
ST_UCD_S = 32
ST_SCRIPT_UNKNOWN, ST_SCRIPT_COMMON, ST_SCRIPT_INHERITED = 0, 1, 2

TABLES_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unicode_tables.bin")
BIN_MAGIC = b"STUCD\0\0\1"
HEADER_SIZE = 32


def _load(raw, path):
    """The sections of unicode_tables.bin (its bytes raw) as numpy arrays."""
    if len(raw) < HEADER_SIZE or raw[:8] != BIN_MAGIC:
        raise ImportError("%s: not a unicode_tables.bin of format 1" % path)
    buf = np.frombuffer(raw, np.uint8)
    version = raw[8:16].rstrip(b"\0")
    n_astral, n_scripts, n_aliases, strings_len = (int(x) for x in np.frombuffer(raw, "<u4", 4, 16))
    at = HEADER_SIZE
    out = {}

    def take(name, dtype, count):
        nonlocal at
        size = np.dtype(dtype).itemsize * count
        out[name] = np.frombuffer(raw, dtype, count, at).astype(np.dtype(dtype).newbyteorder("="))
        at += size + (-size % 4)

    take("bmp_class", np.uint8, 0x10000)
    take("bmp_script", np.uint8, 0x10000)
    take("astral_first", "<u4", n_astral)
    take("astral_last", "<u4", n_astral)
    take("astral_class", np.uint8, n_astral)
    take("astral_script", np.uint8, n_astral)
    take("name_offsets", "<u4", n_scripts + 1)
    take("alias_offsets", "<u4", n_aliases + 1)
    take("alias_script", "<u4", n_aliases)
    strings = bytes(buf[at:at + strings_len])
    at += strings_len
    if at != len(raw) or int(out["alias_offsets"][-1]) != strings_len:
        raise ImportError("%s: size does not match its header" % path)
    return version, out, strings


with open(TABLES_PATH, "rb") as _f:
    _RAW = _f.read()
_VERSION, _T, _STRINGS = _load(_RAW, TABLES_PATH)

# st_ucd_* as numpy arrays
UCD_BMP_CLASS = _T["bmp_class"]
UCD_BMP_SCRIPT = _T["bmp_script"]
UCD_ASTRAL_FIRST = _T["astral_first"]
UCD_ASTRAL_LAST = _T["astral_last"]
UCD_ASTRAL_CLASS = _T["astral_class"]
UCD_ASTRAL_SCRIPT = _T["astral_script"]
UCD_ASTRAL_COUNT = len(UCD_ASTRAL_FIRST)
# st_ucd_script_names[k] and st_ucd_script_aliases[k] (name upper case, script id) as bytes
UCD_SCRIPT_NAMES = tuple(_STRINGS[int(a):int(b)] for a, b in zip(_T["name_offsets"][:-1], _T["name_offsets"][1:]))
UCD_SCRIPT_ALIASES = tuple((_STRINGS[int(a):int(b)], int(s)) for a, b, s in
                           zip(_T["alias_offsets"][:-1], _T["alias_offsets"][1:], _T["alias_script"]))
UCD_SCRIPT_COUNT = len(UCD_SCRIPT_NAMES)
UCD_UNICODE_VERSION = _VERSION


# -- unicode.h / unicode.c lookups --
@njit(cache=True, nogil=True)
def ucd_astral_find(cp):
    """st_ucd_astral_find: the index of the range holding cp (> U+FFFF), or -1 (NULL)."""
    lo = 0
    hi = UCD_ASTRAL_COUNT
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if cp < UCD_ASTRAL_FIRST[mid]:
            hi = mid
        elif cp > UCD_ASTRAL_LAST[mid]:
            lo = mid + 1
        else:
            return mid
    return -1


@njit(cache=True, nogil=True)
def ucd_class(cp):
    """st_ucd_class"""
    if cp < 0x10000:
        return np.int64(UCD_BMP_CLASS[cp])
    r = ucd_astral_find(cp)
    return np.int64(UCD_ASTRAL_CLASS[r]) if r >= 0 else np.int64(0)


@njit(cache=True, nogil=True)
def ucd_script(cp):
    """st_ucd_script"""
    if cp < 0x10000:
        return np.int64(UCD_BMP_SCRIPT[cp])
    r = ucd_astral_find(cp)
    return np.int64(UCD_ASTRAL_SCRIPT[r]) if r >= 0 else np.int64(ST_SCRIPT_UNKNOWN)




# -- the exports --
@export
def st_unicode_version():
    return UCD_UNICODE_VERSION


@export
def st_script_of(cp):
    if cp > 0x10FFFF:
        return -1
    return int(ucd_script(cp))


@export
def st_script_name(script):
    if script < 0 or script >= UCD_SCRIPT_COUNT:
        return None
    return UCD_SCRIPT_NAMES[script]


@export
def st_script_count():
    return UCD_SCRIPT_COUNT


def _alias_cmp(name, length, alias):
    """alias_cmp: a user-given name against an upper-case alias, ignoring case and '_', '-', ' '."""
    i = 0
    k = 0
    n_alias = len(alias)
    while True:
        while i < length and name[i] in (0x5F, 0x2D, 0x20):
            i += 1
        while k < n_alias and alias[k] == 0x5F:
            k += 1
        a = int(name[i]) if i < length else 0
        if i < length and a == 0:
            return -1  # an embedded NUL never matches
        if 0x61 <= a <= 0x7A:
            a -= 32
        b = alias[k] if k < n_alias else 0
        if a != b:
            return -1 if a < b else 1
        if not a:
            return 0
        i += 1
        k += 1


def script_from_name(name, length):
    """st_script_from_name over any indexable of byte values (bytes, a uint8 array)."""
    if name is None:
        return -1
    for alias, script in UCD_SCRIPT_ALIASES:
        if _alias_cmp(name, length, alias) == 0:
            return script
    return -1


@export
def st_script_from_name(name, length):
    if name is None:
        return -1
    return script_from_name(bytes(name[:length]), length)
