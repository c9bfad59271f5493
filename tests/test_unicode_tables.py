"""The generated Unicode tables against the pinned regex oracle, on all 0x110000 code points.

The generated file is parsed here independently of the generator, expanded to one class and one
script per code point, and compared with what regex itself answers; the core's own lookup
(st_script_of, BMP array + astral binary search) is compared with the same expansion.
"""
import importlib.metadata
import os
import re
import subprocess
import sys

import pytest
import regex

import supertok

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLES = os.path.join(ROOT, "core_c", "src", "text", "unicode_tables.c")
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
    b = supertok.backends.load("native") if "native" in supertok.backends.available() else None
    if b is None:
        pytest.skip("the native backend is not built")
    bad = [cp for cp in range(NCP) if b.script_of(cp) != scr[cp]]
    assert not bad, [hex(c) for c in bad[:10]]
    assert b.script_of(NCP) == -1
    assert b.script_names() == parsed[2]


@pytest.mark.parametrize("letter", list("sdmtlver"))
def test_contraction_case_folding(everything, letter):
    """The scanners assume (?i:x) matches only x, X, and for s also U+017F (pretokenize.c)."""
    want = {ord(letter), ord(letter.upper())} | ({0x17F} if letter == "s" else set())
    assert _members("(?i:%s)" % letter, everything) == want


def test_generated_file_is_fresh():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "core_c", "tools", "gen_unicode_tables.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
