"""UTF-8 validation across the validator's eight-byte blocks, against CPython's codec.

st_utf8_validate checks blocks of eight bytes at once when they hold ASCII and two- and
three-byte characters, carrying a character cut by a block's end into the next block (and the
E0/ED second-byte rules with it); anything else falls back to a check per character. These
texts mix valid characters of every length, the lead bytes with narrower second-byte ranges
(E0, ED, F0, F4), overlong leads (C0, C1) and stray bytes, at every alignment, so every kind of
error lands at every position of a block. The oracle is bytes.decode('utf-8'): valid, or the
start of the first bad sequence."""
import random

import pytest

import supertok

# code points whose encodings sit on the validator's edges: lengths 1-4, the first and last of
# each length, E0/ED/F0/F4 leads next to their forbidden second bytes, and common scripts
_EDGE_CPS = [0x00, 0x41, 0x7F, 0x80, 0x7FF, 0x800, 0x0FFF, 0x1000, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x3FFFF,
             0x40000, 0x10FFFF, 0x430, 0x627, 0x915, 0x94D, 0x4E2D, 0x1F600]


def _char(rng):
    k = rng.random()
    if k < 0.25:
        cp = rng.choice(_EDGE_CPS)
    elif k < 0.45:
        cp = rng.randrange(0x80)
    elif k < 0.6:
        cp = rng.randrange(0x80, 0x800)
    elif k < 0.75:
        cp = rng.choice((0x800, 0xD000, 0xE000, 0x900)) + rng.randrange(0x800)
    else:
        cp = rng.randrange(0x110000)
    if 0xD800 <= cp <= 0xDFFF:
        cp = 0x41
    return chr(cp).encode("utf-8")


def _junk(rng):
    k = rng.random()
    if k < 0.3:
        return bytes([rng.randrange(0x80, 0xC0)])  # a stray continuation byte
    if k < 0.5:
        return bytes([rng.choice((0xC0, 0xC1, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF))])  # edge leads
    if k < 0.7:
        cp = rng.randrange(0x800, 0x110000)
        return chr(0xE000 if 0xD800 <= cp <= 0xDFFF else cp).encode("utf-8")[:-1]  # a truncated character
    if k < 0.85:
        return bytes([0xED, rng.randrange(0xA0, 0xC0), rng.randrange(0x80, 0xC0)])  # a surrogate
    return bytes([0xE0, rng.randrange(0x80, 0xA0), rng.randrange(0x80, 0xC0)])  # overlong


def _texts(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        parts = [b"x" * rng.randrange(8)]  # every alignment of what follows
        while sum(map(len, parts)) < rng.randrange(4, 48):
            parts.append(_junk(rng) if rng.random() < 0.08 else _char(rng))
        yield b"".join(parts)


def _oracle(data):
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError as e:
        return e.start


def test_utf8_validate_matches_cpython_across_blocks(backend):
    b = supertok._get()
    n = 150 if backend == "pywasm" else 20000
    bad = [(t.hex(), b.utf8_validate(t), _oracle(t)) for t in _texts(n, 12) if b.utf8_validate(t) != _oracle(t)]
    assert not bad, bad[:5]
    # and some of them were invalid, at many positions (the test can fail)
    offsets = {_oracle(t) for t in _texts(2000, 12)}
    assert None in offsets and len(offsets) > 20


@pytest.mark.parametrize("n", [8, 16, 17, 64, 200])
def test_utf8_validate_long_runs_of_each_length(backend, n):
    """Long runs of one character length, with one bad byte at each position of two blocks."""
    b = supertok._get()
    slow = backend == "pywasm"  # an interpreter: a few of the characters and positions
    for ch in ("ж", "a😀ж") if slow else ("a", "ж", "क", "😀", "aж", "жक", "a😀ж"):
        text = (ch * n).encode("utf-8")[: n * 2]
        cut = text[: len(text.decode("utf-8", "ignore").encode("utf-8"))]
        assert b.utf8_validate(cut) is None
        for pos in range(0, min(len(cut), 16), 5 if slow else 1):
            for bad in (b"\xff", b"\x80", b"\xc0"):
                t = cut[:pos] + bad + cut[pos + 1:]
                assert b.utf8_validate(t) == _oracle(t), (t.hex(), pos)
