#!/usr/bin/env python3
"""Generate the Unicode tables from the pinned `regex` module: one generator, two outputs.

    python core_c/tools/gen_unicode_tables.py            # rewrite both files
    python core_c/tools/gen_unicode_tables.py --check    # exit 1 if either committed file is stale

The outputs hold the same data:
  * core_c/src/text/unicode_tables.c                  the C core's tables (unicode_tables.h);
  * py/supertok/core_numba/text/unicode_tables.bin    the Numba port's (core_numba/text/unicode.py
                                                      loads it with numpy; BINARY FORMAT below).

Why `regex` and not unicodedata: the pre-tokenizers must reproduce tiktoken 0.14, whose regex
engine carries Unicode 16.0, and the test oracle is `regex==2024.11.6`, which agrees with it on
every code point (docs/design.md §4). CPython 3.11's unicodedata is Unicode 14.0, so it cannot be the
source. Every property is read by asking `regex` itself, so the table is the oracle's view by
construction, and tests/test_unicode_tables.py checks it again code point by code point.

Layout of the generated data (see unicode_tables.h):
  * st_ucd_bmp_class[0x10000]  class byte per BMP code point: low 3 bits = ST_UCD_* letter/mark/
                               number class, bit 3 = White_Space (what `\\s` matches), bit 4 =
                               \\p{P} (punctuation), bit 5 = \\p{S} (symbol);
  * st_ucd_bmp_script[0x10000] Script value per BMP code point (ids below);
  * st_ucd_astral[]            sorted, non-overlapping ranges above U+FFFF: first, last, class,
                               script; code points in no range are class 0, script Unknown.
  * st_ucd_script_names[]      canonical Script names by id; st_ucd_script_aliases[]: every alias
                               regex accepts, upper-cased, with its id, sorted by the alias.

BINARY FORMAT of unicode_tables.bin, a GENERATED FILE like unicode_tables.c (never edit it:
rerun this script; CI runs --check, which compares both outputs byte for byte). All integers
little-endian; every section starts at a multiple of 4 bytes, zero-padded:
  header, 32 bytes:
    0   char[8]    magic "STUCD\0\0\1" (the last byte is the format version, 1)
    8   char[8]    Unicode version, NUL-padded ("16.0")
    16  uint32     n_astral       number of astral ranges
    20  uint32     n_scripts      number of script names (= st_ucd_script_count)
    24  uint32     n_aliases      number of script aliases (= st_ucd_script_alias_count)
    28  uint32     strings_len    bytes of the string section
  then, in this order:
    uint8[0x10000]        bmp_class            (= st_ucd_bmp_class)
    uint8[0x10000]        bmp_script           (= st_ucd_bmp_script)
    uint32[n_astral]      astral_first         (st_ucd_astral[k].first)
    uint32[n_astral]      astral_last          (st_ucd_astral[k].last)
    uint8[n_astral]       astral_class         (st_ucd_astral[k].cls), padded to 4
    uint8[n_astral]       astral_script        (st_ucd_astral[k].script), padded to 4
    uint32[n_scripts + 1] name_offsets         script name k = strings[name_offsets[k]:name_offsets[k+1]]
    uint32[n_aliases + 1] alias_offsets        alias k = strings[alias_offsets[k]:alias_offsets[k+1]]
    uint32[n_aliases]     alias_script         (st_ucd_script_aliases[k].script), in the C order
    uint8[strings_len]    strings              the names then the aliases, ASCII, no terminators
  and nothing after (the file's size is checked by the reader).
"""
import importlib.metadata
import os
import struct
import sys

import regex
from regex import _regex

PINNED_REGEX = "2024.11.6"
UNICODE_VERSION = "16.0"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "src", "text", "unicode_tables.c")
OUT_BIN = os.path.join(HERE, "..", "..", "py", "supertok", "core_numba", "text", "unicode_tables.bin")
BIN_MAGIC = b"STUCD\0\0\1"

# Class codes: must match enum in unicode_tables.h.
CLASSES = [("Lu", 1), ("Ll", 2), ("Lt", 3), ("Lm", 4), ("Lo", 5), ("M", 6), ("N", 7)]
WS_BIT = 8
P_BIT = 16  # \p{P}: DeepSeek V3's pre-tokenizer names it (docs/design.md §5)
S_BIT = 32  # \p{S}
NCP = 0x110000


def script_names():
    """Script values known to regex, as (canonical name, [aliases]) with our own stable ids:
    0 Unknown, 1 Common, 2 Inherited, then every real script sorted by canonical name."""
    values = {}
    for alias, v in _regex.get_properties()["SCRIPT"][1].items():
        values.setdefault(v, []).append(alias)
    out = []
    for v, aliases in values.items():
        # The long name: the longest alias that is not a 4-letter ISO 15924 code, else the code.
        longs = [a for a in aliases if len(a) != 4]
        name = max(longs, key=len) if longs else aliases[0]
        canon = "_".join(w.capitalize() for w in name.split("_"))
        out.append((canon, sorted(aliases)))
    fixed = {"Unknown": 0, "Common": 1, "Inherited": 2}
    real = sorted((c, a) for c, a in out if c not in fixed)
    head = sorted(((c, a) for c, a in out if c in fixed), key=lambda x: fixed[x[0]])
    assert [c for c, _ in head] == ["Unknown", "Common", "Inherited"], head
    return head + real


def all_code_points():
    return "".join(map(chr, range(NCP)))


def compute(everything):
    cls = bytearray(NCP)
    for name, code in CLASSES:
        for m in regex.finditer(r"\p{%s}+" % name, everything):
            for cp in range(m.start(), m.end()):
                assert cls[cp] == 0, (hex(cp), name)
                cls[cp] = code
    for prop, bit in ((r"\s", WS_BIT), (r"\p{P}", P_BIT), (r"\p{S}", S_BIT)):
        for m in regex.finditer(prop + "+", everything):
            for cp in range(m.start(), m.end()):
                cls[cp] |= bit
    scripts = script_names()
    scr = bytearray(NCP)  # Unknown (0) by default
    for sid, (canon, aliases) in enumerate(scripts):
        if sid == 0:
            continue
        for m in regex.finditer(r"\p{Script=%s}+" % aliases[0], everything):
            for cp in range(m.start(), m.end()):
                scr[cp] = sid
    return cls, scr, scripts


def c_bytes(data, per_line=32):
    lines = []
    for i in range(0, len(data), per_line):
        lines.append("    " + ",".join(str(b) for b in data[i:i + per_line]) + ",")
    return "\n".join(lines)


def tables():
    """The data both outputs hold: (cls, scr, ranges, scripts, alias_rows)."""
    found = importlib.metadata.version("regex")
    if found != PINNED_REGEX:
        sys.exit("gen_unicode_tables: needs regex==%s (found %s)" % (PINNED_REGEX, found))
    cls, scr, scripts = compute(all_code_points())
    ranges = []  # (first, last, class, script) above the BMP, merged runs, class or script nonzero
    cp = 0x10000
    while cp < NCP:
        c, s = cls[cp], scr[cp]
        start = cp
        while cp + 1 < NCP and cls[cp + 1] == c and scr[cp + 1] == s:
            cp += 1
        if c or s:
            ranges.append((start, cp, c, s))
        cp += 1
    alias_rows = []
    for sid, (canon, aliases) in enumerate(scripts):
        names = {canon.upper()} | set(aliases)
        for a in sorted(names):
            alias_rows.append((a, sid))
    alias_rows.sort()
    return cls, scr, ranges, scripts, alias_rows


def render(data):
    """unicode_tables.c"""
    cls, scr, ranges, scripts, alias_rows = data
    o = []
    o.append("/* GENERATED FILE - DO NOT EDIT.")
    o.append(" * Made by: python core_c/tools/gen_unicode_tables.py")
    o.append(" * Source: the regex module %s (Unicode %s), queried code point by code point." % (PINNED_REGEX, UNICODE_VERSION))
    o.append(" * Layout and meaning: core_c/src/text/unicode_tables.h. */")
    o.append('#include "unicode_tables.h"')
    o.append("")
    o.append('const char st_ucd_unicode_version[] = "%s";' % UNICODE_VERSION)
    o.append("")
    o.append("const uint8_t st_ucd_bmp_class[0x10000] = {")
    o.append(c_bytes(cls[:0x10000]))
    o.append("};")
    o.append("")
    o.append("const uint8_t st_ucd_bmp_script[0x10000] = {")
    o.append(c_bytes(scr[:0x10000]))
    o.append("};")
    o.append("")
    o.append("const st_ucd_range st_ucd_astral[%d] = {" % len(ranges))
    for a, b, c, s in ranges:
        o.append("    {0x%X, 0x%X, %d, %d}," % (a, b, c, s))
    o.append("};")
    o.append("const size_t st_ucd_astral_count = %d;" % len(ranges))
    o.append("")
    o.append("const char *const st_ucd_script_names[%d] = {" % len(scripts))
    for canon, _ in scripts:
        o.append('    "%s",' % canon)
    o.append("};")
    o.append("const int st_ucd_script_count = %d;" % len(scripts))
    o.append("")
    o.append("/* Every alias regex accepts for a Script value, upper-cased, sorted for binary search. */")
    o.append("const st_ucd_alias st_ucd_script_aliases[%d] = {" % len(alias_rows))
    for a, sid in alias_rows:
        o.append('    {"%s", %d},' % (a, sid))
    o.append("};")
    o.append("const size_t st_ucd_script_alias_count = %d;" % len(alias_rows))
    o.append("")
    return "\n".join(o)


def _pad4(b):
    return b + b"\0" * (-len(b) % 4)


def render_bin(data):
    """unicode_tables.bin (BINARY FORMAT in the module's docstring): the same data as render's."""
    cls, scr, ranges, scripts, alias_rows = data
    names = [canon.encode("ascii") for canon, _ in scripts]
    aliases = [a.encode("ascii") for a, _ in alias_rows]
    strings = b"".join(names) + b"".join(aliases)
    offsets, at = [], 0
    for n in names + aliases:
        offsets.append(at)
        at += len(n)
    name_offsets = offsets[:len(names)] + [sum(map(len, names))]
    alias_offsets = offsets[len(names):] + [len(strings)]
    u32 = lambda xs: struct.pack("<%dI" % len(xs), *xs)  # noqa: E731
    out = [BIN_MAGIC, UNICODE_VERSION.encode("ascii").ljust(8, b"\0"),
           struct.pack("<4I", len(ranges), len(scripts), len(alias_rows), len(strings)),
           bytes(cls[:0x10000]), bytes(scr[:0x10000]),
           u32([r[0] for r in ranges]), u32([r[1] for r in ranges]),
           _pad4(bytes(r[2] for r in ranges)), _pad4(bytes(r[3] for r in ranges)),
           u32(name_offsets), u32(alias_offsets), u32([sid for _, sid in alias_rows]), strings]
    return b"".join(out)


def main():
    data = tables()
    outputs = [(OUT, render(data).encode("utf-8")), (OUT_BIN, render_bin(data))]
    if "--check" in sys.argv:
        stale = 0
        for path, want in outputs:
            try:
                with open(path, "rb") as f:
                    have = f.read()
            except FileNotFoundError:
                have = None
            if have != want:
                print("%s is stale: run python core_c/tools/gen_unicode_tables.py" % os.path.relpath(path))
                stale = 1
        if not stale:
            print("unicode_tables.c and unicode_tables.bin are up to date")
        return stale
    for path, want in outputs:
        with open(path, "wb") as f:
            f.write(want)
        print("wrote", os.path.relpath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
