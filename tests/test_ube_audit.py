"""Exhaustive UBE audit on native and wasmtime; pywasm is skipped (an
interpreter at about half a millisecond per symbol would need hours).

1. Every Unicode scalar value (all 1,112,064): in code point order (and the exact symbol total),
   each alone as its own same-alphabet run (every scalar followed by a character of the other
   path), and in a seeded random order (every kind of transition), also streamed with random
   splits. The routing reference is this file's, from the definition via CPython's codecs.
2. The official test files of Debian's `unicode-data` package (NormalizationTest.txt, plain or
   .bz2, GraphemeBreakTest.txt, emoji-test.txt, under /usr/share/unicode/): every string field
   of every line and every whole line round-trips; native also checks each string alone.
   Skipped with a message where the files are absent (apt-get install unicode-data).
3. All real text in ../shared/corpora: every .txt.xz file and every UDHR translation. CI runs a
   sample (the first SAMPLE_CHARS characters of each file, the first UDHR_SAMPLE characters of
   each translation); the full audit reads everything:
       SUPERTOK_FULL_DIFF=1 python -m pytest tests/test_ube_audit.py
"""
import bz2
import glob
import json
import lzma
import os
import random
import re

import pytest
import supertok
from conftest import CORPORA, corpus_blocks, corpus_path

FULL = bool(os.environ.get("SUPERTOK_FULL_DIFF"))
SAMPLE_CHARS = 100_000
UDHR_SAMPLE = 1_000
BLOCK_CHARS = 50_000
U = 256
SCALARS = list(range(0xD800)) + list(range(0xE000, 0x110000))
UNICODE_DIRS = ("/usr/share/unicode", "/usr/share/unicode-data", "/usr/share/unicode/ucd")

CORPUS_FILES = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else [])
                      if f.endswith(".txt.xz")) or ["en.txt.xz"]


@pytest.fixture(autouse=True)
def _no_pywasm(request):
    if "backend" in request.fixturenames and request.getfixturevalue("backend") == "pywasm":
        pytest.skip("pywasm is an interpreter: the exhaustive UBE audit runs on native and wasmtime")


# ---------------------------------------------------------------------------------------------
# Reference routing: per maximal run of one path, CPython's UTF-8 or UTF-16LE encoder (both
# encode character by character, so this is the per-character definition).

_PATH_RUN = re.compile("[\x00-\u07ff]+|[\u0800-\U0010ffff]+")
_ADD_U = U.__add__


def route_ref(text):
    out = []
    for m in _PATH_RUN.finditer(text):
        s = m.group()
        if s[0] < "\u0800":
            out += s.encode("utf-8")
        else:
            out += map(_ADD_U, s.encode("utf-16-le"))
    return out


def _first_difference(text, want, got):
    k = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    pos = 0
    for i, ch in enumerate(text):  # the character whose symbols hold index k
        pos += len(route_ref(ch))
        if pos > k:
            return "symbol %d (character %d, U+%04X): expected %s, core %s" % (
                k, i, ord(ch), want[k:k + 4], got[k:k + 4])
    return "lengths: expected %d symbols, core %d" % (len(want), len(got))


def _round_trip(text, where):
    want = route_ref(text)
    got = supertok.ube_encode_symbols(text)
    assert got == want, "%s: routing differs at %s" % (where, _first_difference(text, want, got))
    back = supertok.ube_decode_symbols(got)
    if back != text:
        k = next((i for i, (a, b) in enumerate(zip(text, back)) if a != b), min(len(text), len(back)))
        assert False, "%s: round trip differs at character %d: %r vs %r" % (
            where, k, text[k:k + 5], back[k:k + 5])
    return got


def _chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


# ---------------------------------------------------------------------------------------------
# 1. Every scalar value.


def test_every_scalar_in_order(backend):
    assert len(SCALARS) == 1_112_064
    total = 0
    for chunk in _chunks(SCALARS, 65_536):
        text = "".join(map(chr, chunk))
        syms = _round_trip(text, "scalars U+%04X..U+%04X" % (chunk[0], chunk[-1]))
        assert supertok.ube_decode_symbols(syms, errors="strict") == text
        total += len(syms)
    # 128 one-symbol, 1,920 two-symbol (UTF-8), 61,440 two-symbol (BMP UTF-16), 1,048,576 four
    assert total == 128 + 1_920 * 2 + 61_440 * 2 + 1_048_576 * 4


def test_every_scalar_alone(backend):
    """Each scalar followed by a character of the other path, so it is a run of its own."""
    for chunk in _chunks(SCALARS, 40_000):
        text = "".join(chr(c) + ("\u4e2d" if c < 0x800 else "|") for c in chunk)
        _round_trip(text, "scalars alone U+%04X..U+%04X" % (chunk[0], chunk[-1]))


def test_every_scalar_mixed_and_streamed(backend):
    order = SCALARS[:]
    random.Random(1112064).shuffle(order)
    rng = random.Random(4)
    for k, chunk in enumerate(_chunks(order, 50_000)):
        text = "".join(map(chr, chunk))
        syms = _round_trip(text, "shuffled scalars, chunk %d" % k)
        d = supertok.UbeStreamDecoder()
        out, i = [], 0
        while i < len(syms):
            step = rng.choice((1, 2, 3, 5, 7, rng.randrange(1, 40_000)))
            out.append(d.add(syms[i:i + step]))
            i += step
        out.append(d.flush())
        assert "".join(out) == text, "shuffled scalars, chunk %d: streamed decode differs" % k


# ---------------------------------------------------------------------------------------------
# 2. The Unicode Consortium's test files.


def _find(name):
    for d in UNICODE_DIRS:
        for cand in (name, name + ".bz2", name + ".gz"):
            hits = sorted(glob.glob(os.path.join(d, "**", cand), recursive=True))
            if hits:
                return hits[0]
    return None


def _read_lines(name):
    path = _find(name)
    if path is None:
        pytest.skip("%s not found under %s: install Debian's unicode-data package "
                    "(apt-get install unicode-data)" % (name, ", ".join(UNICODE_DIRS)))
    if path.endswith(".bz2"):
        with bz2.open(path, "rt", encoding="utf-8") as f:
            return f.read().split("\n")
    if path.endswith(".gz"):
        import gzip
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read().split("\n")
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def _cps(field):
    return "".join(chr(int(h, 16)) for h in field.split())


def _normalization_strings(lines):
    out = []
    for line in lines:
        out.append(line)
        data = line.split("#")[0]
        if data.strip() and not data.startswith("@"):
            fields = data.split(";")[:5]
            assert len(fields) == 5, line
            out += [_cps(f) for f in fields]
    return out


def _grapheme_strings(lines):
    out = []
    for line in lines:
        out.append(line)
        data = line.split("#")[0].strip()
        if data:
            toks = data.split()
            out.append("".join(chr(int(t, 16)) for t in toks if t not in ("\xf7", "\xd7")))
            cluster = []
            for t in toks[1:]:
                if t == "\xf7":
                    out.append("".join(cluster))
                    cluster = []
                elif t != "\xd7":
                    cluster.append(chr(int(t, 16)))
    return out


def _emoji_strings(lines):
    out = []
    for line in lines:
        out.append(line)
        data = line.split("#")[0]
        if ";" in data:
            out.append(_cps(data.split(";")[0]))
            comment = line.split("#", 1)[1].strip()
            out.append(comment.split(" E")[0])  # the literal emoji before its version
    return out


UNICODE_FILES = {
    "NormalizationTest.txt": (_normalization_strings, 19_000),
    "GraphemeBreakTest.txt": (_grapheme_strings, 600),
    "emoji-test.txt": (_emoji_strings, 4_000),
}


@pytest.mark.parametrize("name", sorted(UNICODE_FILES))
def test_unicode_test_file(backend, name):
    parse, min_lines = UNICODE_FILES[name]
    lines = _read_lines(name)
    strings = parse(lines)
    assert len(strings) > min_lines, "%s: only %d strings; is it the right file?" % (name, len(strings))
    joined = "\n".join(strings)
    _round_trip(joined, name + " (every string, joined)")
    if backend == "native":  # each string alone (a third of a millisecond per call on wasmtime)
        for i, s in enumerate(strings):
            syms = supertok.ube_encode_symbols(s)
            assert syms == route_ref(s) and supertok.ube_decode_symbols(syms) == s, \
                "%s string %d %r" % (name, i, s)


# ---------------------------------------------------------------------------------------------
# 3. Real text.



@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_corpus(backend, name):
    path = corpus_path(name)
    for i, block in enumerate(corpus_blocks(path, BLOCK_CHARS, None if FULL else SAMPLE_CHARS)):
        _round_trip(block, "%s block %d" % (name, i))


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_udhr_every_translation(backend):
    path = corpus_path("udhr.jsonl.xz")
    n = 0
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            text = rec["text"] if FULL else rec["text"][:UDHR_SAMPLE]
            _round_trip(text, "udhr %s" % rec["code"])
            n += 1
    assert n == 532
