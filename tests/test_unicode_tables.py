"""The generated Unicode tables against the pinned regex oracle, on all 0x110000 code points.

The generated file is parsed here independently of the generator, expanded to one class and one
script per code point, and compared with what regex itself answers; the core's own lookup
(st_script_of, BMP array + astral binary search) is compared with the same expansion. The
generator's second output, the Numba port's unicode_tables.bin, is parsed here too (its format is
in the generator's docstring) and must hold the same data as the C file, code point by code
point and name by name; the port's lookups over it (core_numba/text/unicode.py) are compared
with the expansion as well.
"""
import importlib.metadata
import os
import re
import struct
import subprocess
import sys

import pytest
import regex

import supertok

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLES = os.path.join(ROOT, "core_c", "src", "text", "unicode_tables.c")
TABLES_BIN = os.path.join(ROOT, "py", "supertok", "core_numba", "text", "unicode_tables.bin")
NCP = 0x110000

pytestmark = pytest.mark.skipif(importlib.metadata.version("regex") != "2024.11.6",
                                reason="the oracle must be regex==2024.11.6 (docs/design.md §4)")


def _array(src, name):
    m = re.search(r"const uint8_t %s\[0x10000\] = \{(.*?)\};" % name, src, re.S)
    return [int(x) for x in m.group(1).replace("\n", "").split(",") if x.strip()]


@pytest.fixture(scope="module")
def parsed():
    with open(TABLES, encoding="utf-8") as f:
        src = f.read()
    cls = _array(src, "st_ucd_bmp_class") + [0] * (NCP - 0x10000)
    scr = _array(src, "st_ucd_bmp_script") + [0] * (NCP - 0x10000)
    assert len(cls) == len(scr) == NCP
    prev_last = 0xFFFF
    for a, b, c, s in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+), (\d+), (\d+)\}", src):
        a, b = int(a, 16), int(b, 16)
        assert prev_last < a <= b < NCP, "astral ranges must be sorted and disjoint"
        prev_last = b
        for cp in range(a, b + 1):
            cls[cp], scr[cp] = int(c), int(s)
    names = re.search(r"st_ucd_script_names\[\d+\] = \{(.*?)\};", src, re.S).group(1)
    names = re.findall(r'"([^"]+)"', names)
    return cls, scr, names


def _c_aliases(src):
    body = re.search(r"st_ucd_script_aliases\[(\d+)\] = \{(.*?)\};", src, re.S)
    rows = [(a, int(sid)) for a, sid in re.findall(r'\{"([^"]+)", (\d+)\}', body.group(2))]
    assert len(rows) == int(body.group(1))
    return rows


def _parse_bin(raw):
    """unicode_tables.bin read by its documented format, independently of core_numba."""
    assert raw[:8] == b"STUCD\0\0\1", "magic and format version"
    version = raw[8:16].rstrip(b"\0").decode("ascii")
    n_astral, n_scripts, n_aliases, strings_len = struct.unpack_from("<4I", raw, 16)
    at = 32

    def take(fmt, count):
        nonlocal at
        vals = list(struct.unpack_from("<%d%s" % (count, fmt), raw, at))
        size = struct.calcsize("<%d%s" % (count, fmt))
        at += size + (-size % 4)
        return vals

    cls, scr = take("B", 0x10000), take("B", 0x10000)
    first, last = take("I", n_astral), take("I", n_astral)
    acls, ascr = take("B", n_astral), take("B", n_astral)
    name_off, alias_off, alias_sid = take("I", n_scripts + 1), take("I", n_aliases + 1), take("I", n_aliases)
    strings = raw[at:at + strings_len]
    assert at + strings_len == len(raw), "nothing after the strings"
    names = [strings[a:b].decode("ascii") for a, b in zip(name_off, name_off[1:])]
    aliases = [(strings[a:b].decode("ascii"), sid) for a, b, sid in zip(alias_off, alias_off[1:], alias_sid)]
    return version, cls, scr, list(zip(first, last, acls, ascr)), names, aliases


@pytest.fixture(scope="module")
def everything():
    return "".join(map(chr, range(NCP)))


def _members(prop, everything):
    out = set()
    for m in regex.finditer(r"%s+" % prop, everything):
        out.update(range(m.start(), m.end()))
    return out


def test_header_names_unicode_16(parsed):
    with open(TABLES, encoding="utf-8") as f:
        head = f.read(600)
    assert "GENERATED FILE" in head and "Unicode 16.0" in head
    assert supertok.unicode_version() == "16.0"


@pytest.mark.parametrize("prop,code", [(r"\p{Lu}", 1), (r"\p{Ll}", 2), (r"\p{Lt}", 3), (r"\p{Lm}", 4),
                                       (r"\p{Lo}", 5), (r"\p{M}", 6), (r"\p{N}", 7)])
def test_classes_match_regex(parsed, everything, prop, code):
    cls = parsed[0]
    want = _members(prop, everything)
    have = {cp for cp in range(NCP) if cls[cp] & 7 == code}
    assert have == want, "%s: %d extra, %d missing, e.g. %s" % (
        prop, len(have - want), len(want - have), [hex(c) for c in sorted(have ^ want)[:5]])


def test_white_space_matches_regex_backslash_s(parsed, everything):
    cls = parsed[0]
    want = _members(r"\s", everything)
    have = {cp for cp in range(NCP) if cls[cp] & 8}
    assert have == want
    # the space-like characters that are not \s must stay out
    for cp in (0xFEFF, 0x200B, 0x1C, 0x1D, 0x1E, 0x1F, 0x180E):
        assert cp not in have


@pytest.mark.parametrize("prop,bit", [(r"\p{P}", 16), (r"\p{S}", 32)])
def test_punctuation_symbol_bits_match_regex(parsed, everything, prop, bit):
    """Bits 4 and 5 of the class byte: \\p{P} and \\p{S} (DeepSeek V3's pattern names them)."""
    cls = parsed[0]
    want = _members(prop, everything)
    have = {cp for cp in range(NCP) if cls[cp] & bit}
    assert have == want


def test_scripts_match_regex(parsed, everything):
    cls, scr, names = parsed
    assert names[:3] == ["Unknown", "Common", "Inherited"]
    seen = [0] * NCP
    for sid, name in enumerate(names):
        for cp in _members(r"\p{Script=%s}" % name, everything):
            assert seen[cp] == 0
            seen[cp] = sid
    bad = [cp for cp in range(NCP) if seen[cp] != scr[cp]]
    assert not bad, "script differs at %s" % [hex(c) for c in bad[:10]]


def test_core_lookup_matches_table(parsed):
    """st_script_of (BMP array and astral binary search) on every code point."""
    scr = parsed[1]
    try:
        b = supertok.backends.load("native")
    except supertok.backends.BackendUnavailable:
        pytest.skip("the native backend is not built")
    bad = [cp for cp in range(NCP) if b.script_of(cp) != scr[cp]]
    assert not bad, [hex(c) for c in bad[:10]]
    assert b.script_of(NCP) == -1
    assert b.script_names() == parsed[2]


def test_binary_tables_match_c_tables(parsed):
    """unicode_tables.bin holds what unicode_tables.c holds: every code point's class and script,
    the script names and the aliases, and the Unicode version."""
    with open(TABLES, encoding="utf-8") as f:
        src = f.read()
    with open(TABLES_BIN, "rb") as f:
        version, cls, scr, ranges, names, aliases = _parse_bin(f.read())
    assert version == re.search(r'st_ucd_unicode_version\[\] = "([^"]+)"', src).group(1) == "16.0"
    cls += [0] * (NCP - 0x10000)
    scr += [0] * (NCP - 0x10000)
    prev_last = 0xFFFF
    for a, b, c, sc in ranges:
        assert prev_last < a <= b < NCP, "astral ranges must be sorted and disjoint"
        prev_last = b
        cls[a:b + 1] = [c] * (b - a + 1)
        scr[a:b + 1] = [sc] * (b - a + 1)
    bad = [cp for cp in range(NCP) if cls[cp] != parsed[0][cp] or scr[cp] != parsed[1][cp]]
    assert not bad, "the binary differs from unicode_tables.c at %s" % [hex(c) for c in bad[:10]]
    assert names == parsed[2]
    assert aliases == _c_aliases(src)


def test_numba_lookup_matches_table(parsed):
    """core_numba/text/unicode.py (the .bin loaded, ucd_class, ucd_script, st_script_of) on every
    code point."""
    pytest.importorskip("numba", reason="numba is not installed (pip install 'supertok[numba]')")
    import numpy as np
    from numba import njit
    from supertok.core_numba.text import unicode as U

    @njit
    def expand(n):
        c = np.zeros(n, np.uint8)
        s = np.zeros(n, np.uint8)
        for cp in range(n):
            c[cp] = U.ucd_class(cp)
            s[cp] = U.ucd_script(cp)
        return c, s

    cls, scr = expand(NCP)
    assert np.array_equal(cls, np.array(parsed[0], np.uint8)), "ucd_class"
    assert np.array_equal(scr, np.array(parsed[1], np.uint8)), "ucd_script"
    assert [n.decode() for n in U.UCD_SCRIPT_NAMES] == parsed[2]
    assert [U.st_script_of(cp) for cp in (0x41, 0x1F600, 0x10FFFF, NCP)] == [parsed[1][0x41], parsed[1][0x1F600],
                                                                            parsed[1][0x10FFFF], -1]
    assert U.st_unicode_version() == b"16.0"


@pytest.mark.parametrize("letter", list("sdmtlver"))
def test_contraction_case_folding(everything, letter):
    """The scanners assume (?i:x) matches only x, X, and for s also U+017F (pretokenize.c)."""
    want = {ord(letter), ord(letter.upper())} | ({0x17F} if letter == "s" else set())
    assert _members("(?i:%s)" % letter, everything) == want


def test_generated_file_is_fresh():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "core_c", "tools", "gen_unicode_tables.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_numba_cache_follows_the_binary(tmp_path, monkeypatch):
    """numba freezes the tables into its cached kernels, and keys a kernel on its own source file
    only: the port caches every kernel in a folder named by the digest of all its sources and of
    unicode_tables.bin (core_numba/__init__.py), so another binary makes another folder."""
    pytest.importorskip("numba", reason="numba is not installed (pip install 'supertok[numba]')")
    import shutil

    import supertok.core_numba as port
    from supertok.core_numba.text import unicode as U
    assert U.ucd_astral_find._cache._cache_path.split(os.sep)[-2] == "numba-" + port.DIGEST
    copy = tmp_path / "core_numba"
    shutil.copytree(port._HERE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(port, "_HERE", str(copy))
    assert port._digest() == port.DIGEST, "the same sources and data: the same folder"
    data = bytearray((copy / "text" / "unicode_tables.bin").read_bytes())
    data[-1] ^= 1
    (copy / "text" / "unicode_tables.bin").write_bytes(bytes(data))
    assert port._digest() != port.DIGEST, "another binary: another folder"
