"""NFC normalization (st_normalize_nfc, docs/design.md §4) on every backend, against the reference:
HuggingFace tokenizers 0.23.3's `NFC` normalizer (Qwen 2/3's tokenizer.json has one), whose
tables are Unicode 9.0.

Every scalar value alone and in its NFD form, random sequences of bases and marks, runs of
100,000 marks, the shared corpora, and the Unicode Consortium's NormalizationTest.txt (Debian's
unicode-data package). The offset map is checked everywhere: one entry per output byte, never
decreasing, each at the start of an input character.
"""
import bz2
import glob
import os
import random
import unicodedata

import pytest

from conftest import CORPORA, corpus_blocks, get_backend

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import normalizers  # noqa: E402

REF = normalizers.NFC()
SCALARS = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
UNICODE_DIRS = ("/usr/share/unicode", "/usr/share/unicode-data", "/usr/share/unicode/ucd")
PYWASM_SKIP = "pywasm interprets ~0.2M instructions/s: large inputs run on native and wasmtime"


def _skip_pywasm(backend):
    if backend == "pywasm":
        pytest.skip(PYWASM_SKIP)


def check_map(data, out, offs):
    assert len(offs) == len(out)
    prev = 0
    for k, o in enumerate(offs):
        assert prev <= o < len(data), (k, o, prev)
        assert data[o] & 0xC0 != 0x80, (k, o)
        prev = o
    # every byte of one output character maps to the same input character
    k = 0
    while k < len(out):
        n = 1 if out[k] < 0x80 else 2 if out[k] < 0xE0 else 3 if out[k] < 0xF0 else 4
        assert len(set(offs[k:k + n])) == 1, k
        k += n


def nfc(backend, text, with_map=True):
    data = text.encode("utf-8")
    out, offs = get_backend(backend).normalize_nfc(data)
    if with_map:
        check_map(data, out, offs)
    return out.decode("utf-8")


def check_batch(backend, texts, what):
    """texts joined by newlines in one call; on a mismatch, name the first text that differs."""
    joined = "\n".join(texts)
    if nfc(backend, joined) == REF.normalize_str(joined):
        return
    for t in texts:
        got, want = nfc(backend, t), REF.normalize_str(t)
        assert got == want, (what, [hex(ord(c)) for c in t], [hex(ord(c)) for c in got],
                             [hex(ord(c)) for c in want])
    raise AssertionError("%s: the batch differs but no text alone does" % what)


def test_every_scalar(backend):
    _skip_pywasm(backend)
    for i in range(0, len(SCALARS), 8192):
        check_batch(backend, SCALARS[i:i + 8192], "scalar")


def test_nfd_of_every_scalar(backend):
    _skip_pywasm(backend)
    texts = [d for d in (unicodedata.normalize("NFD", c) for c in SCALARS) if len(d) > 1]
    for i in range(0, len(texts), 4096):
        check_batch(backend, texts[i:i + 4096], "nfd")


def _marks_and_bases():
    marks = [c for c in SCALARS if unicodedata.combining(c)]
    bases = ["a", "e", "A", "o", "u", "\u1100", "\u1161", "\u11A8", "\u11A7", "\uAC00", "\uAC01",
             "\u0B47", "\u0B3E", "\u0B57", "\u0CC6", "\u0CC2", "\u0CD5", "\u0CCA", "\u00C0", "\u1E00",
             "\u0915", "\u0958", "\u0F40", "\u0F71", "\u0F72", "\u0F80", "\u0344", "\u0F73",
             "\U0001D158", "\U0001D165", "\U00011099", "\U000110BA", "\u03B1", "\u1F00", "x", " "]
    return marks, bases


def test_random_sequences(backend):
    """Marks and a few chosen bases; then any mix of characters with canonical decompositions,
    their parts, marks, Hangul jamo and syllables, and any scalar."""
    marks, bases = _marks_and_bases()
    rng = random.Random(7)
    texts = []
    count = 300 if backend == "pywasm" else 20000
    for _ in range(count):
        texts.append("".join(rng.choice(marks) if rng.random() < 0.55 else rng.choice(bases)
                             for _ in range(rng.randint(1, 14))))
    dec = [c for c in SCALARS if unicodedata.decomposition(c)[:1] not in ("", "<")]
    parts = sorted({p for c in dec for p in unicodedata.normalize("NFD", c)})
    hangul = [chr(c) for c in list(range(0x1100, 0x1113)) + list(range(0x1161, 0x1176)) +
              list(range(0x11A7, 0x11C3))] + [chr(0xAC00 + 28 * k) for k in range(0, 399, 7)]
    pools = (dec, marks, parts, hangul, SCALARS)
    for _ in range(count):
        texts.append("".join(rng.choice(pools[rng.randrange(5)]) for _ in range(rng.randint(1, 16))))
    for i in range(0, len(texts), 500):
        check_batch(backend, texts[i:i + 500], "random")


def test_runs_of_marks_after_letters(backend):
    """Letters followed by runs of marks, as Hindi's conjuncts are (the fast path takes a starter
    with no decomposition and marks that compose with nothing, in canonical order, as they are):
    marks in and out of order, marks that compose (nukta, acute) or decompose (U+0344), letters
    that compose with them or decompose, against the reference."""
    pool = ["\u0915", "\u0928", "\u0930", "\u093F", "\u094D", "\u093C", "\u0951", "\u0952", "\u0301",
            "\u0316", "\u0300", "\u0344", "\u05B0", "a", "\u00E9", " ", "\u0958", "\u0929", "\u0BBE",
            "\u0B95\u0BCD", "\u0645\u064E\u0651", "\u0E01\u0E34\u0E48"]
    rng = random.Random(17)
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 12)))
             for _ in range(300 if backend == "pywasm" else 20000)]
    for i in range(0, len(texts), 500):
        check_batch(backend, texts[i:i + 500], "marks after letters")


@pytest.mark.parametrize("base", ["a", "\u1100", "\u0301"])
def test_long_runs_of_marks(backend, base):
    """100,000 marks after one base (or none): tokenizers sorts and composes the whole run (no
    stream-safe cut); so does the core, in linear time."""
    _skip_pywasm(backend)
    rng = random.Random(1)
    pool = ["\u0301", "\u0316", "\u0300", "\u0327", "\u05B0", "\u0345", "\u1161", "\u0308", "\u0344"]
    for marks in (["\u0301"] * 100000, [rng.choice(pool[:5]) for _ in range(100000)],
                  [rng.choice(pool) for _ in range(100000)]):
        text = base + "".join(marks) + "b"
        assert nfc(backend, text) == REF.normalize_str(text)


def test_map_examples(backend):
    backend = get_backend(backend)
    data = "a\u0301\u0316b".encode()  # a + acute (230) + grave below (220): reordered, composed
    out, offs = backend.normalize_nfc(data)
    assert out.decode() == "\u00e1\u0316b"
    assert offs == [0, 0, 1, 1, 5]  # the grave below maps to the acute's start (the run's smallest)
    data = "x\U0001D160y".encode()  # a composition exclusion: three characters from one
    out, offs = backend.normalize_nfc(data)
    assert out.decode() == "x\U0001D158\U0001D165\U0001D16Ey"
    assert offs == [0] + [1] * 12 + [5]
    data = "\u0fa7x".encode()  # two starters from one character, neither composing: the fast path
    out, offs = backend.normalize_nfc(data)  # steps through the decomposition item by item
    assert out.decode() == "\u0fa6\u0fb7x"
    assert offs == [0] * 6 + [3]
    data = "plain ASCII and Latin-1 \u00e9\u00e8".encode()  # the fast path: unchanged
    out, offs = backend.normalize_nfc(data)
    assert out == data
    assert offs == [i if data[i] & 0xC0 != 0x80 else i - 1 for i in range(len(data))]
    assert backend.normalize_nfc(b"") == (b"", [])


def test_growth_past_the_first_guess(backend):
    """Output longer than the host's first buffer: the size query path (three times the input)."""
    text = "\U0001D160" * 50 + "\u0958" * 10
    assert nfc(backend, text) == REF.normalize_str(text)


def test_invalid_utf8(backend):
    import supertok
    with pytest.raises(supertok.SupertokError):
        get_backend(backend).normalize_nfc(b"ab\xffc")


def test_corpora(backend):
    _skip_pywasm(backend)
    files = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else []) if f.endswith(".txt.xz"))
    if not files:
        pytest.skip("corpus *.txt.xz is absent (../shared/corpora, or set SUPERTOK_CORPORA): the "
                    "corpus-based tests need it; the vectors cover the spec without it")
    for name in files:
        for block in corpus_blocks(os.path.join(CORPORA, name), 20000, sample_chars=200000):
            got, want = nfc(backend, block), REF.normalize_str(block)
            assert got == want, name
            # NFD first: everything recomposes
            d = unicodedata.normalize("NFD", block)
            assert nfc(backend, d, with_map=False) == REF.normalize_str(d), name


def _find(name):
    for d in UNICODE_DIRS:
        for cand in (name, name + ".bz2", name + ".gz"):
            hits = sorted(glob.glob(os.path.join(d, "**", cand), recursive=True))
            if hits:
                return hits[0]
    return None


def _read(name):
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


def _ages_up_to_9():
    ok = set()
    for line in _read("DerivedAge.txt"):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        rng, age = [x.strip() for x in line.split(";")]
        if tuple(map(int, age.split("."))) <= (9, 0):
            a, _, b = rng.partition("..")
            ok.update(range(int(a, 16), int(b or a, 16) + 1))
    return ok


def test_normalization_test_file(backend):
    """NormalizationTest.txt: every column equals tokenizers' NFC of it (whatever the file's
    version), and on the lines whose characters are all in Unicode 9.0, the file's own NFC
    invariants hold (c2 == NFC(c1) == NFC(c2) == NFC(c3), c4 == NFC(c4) == NFC(c5))."""
    _skip_pywasm(backend)
    lines = _read("NormalizationTest.txt")
    age9 = _ages_up_to_9()
    cols, conform = [], 0
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("@"):
            continue
        c = ["".join(chr(int(x, 16)) for x in f.split()) for f in line.split(";")[:5]]
        cols.extend(c)
        if all(ord(ch) in age9 for f in c for ch in f):
            got = [nfc(backend, f, with_map=False) for f in c]
            assert got[0] == got[1] == got[2] == c[1], line
            assert got[3] == got[4] == c[3], line
            conform += 1
    assert conform > 10000
    for i in range(0, len(cols), 5000):
        check_batch(backend, cols[i:i + 5000], "NormalizationTest.txt")


def test_generated_tables_are_fresh():
    """nfc_tables.c and nfc_tables.bin are what core_c/tools/gen_nfc_tables.py writes."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(root, "core_c", "tools", "gen_nfc_tables.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_tables_are_unicode_9():
    """The version the generator writes, and the probes that decide it: tokenizers composes the
    Unicode 9.0 pairs and nothing later, and knows 9.0's marks only."""
    from supertok.core_numba.text import normalize as port  # the .bin, read without numba's kernels
    assert port.NFC_UNICODE_VERSION == "9.0"
    assert REF.normalize_str("\U00011935\U00011930") == "\U00011935\U00011930"  # Dives Akuru, 13.0
    assert REF.normalize_str("a\u0d3b\u0334") == "a\u0d3b\u0334"  # U+0D3B (10.0): class 0 to tokenizers
    assert REF.normalize_str("a\u08d4\u0334") == "a\u0334\u08d4"  # U+08D4 (9.0): class 230, reordered


def test_public_function():
    import supertok
    want = "\u00e9 \u00e1\u0316 \U0001D158\U0001D165\U0001D16E"
    assert supertok.normalize_nfc("e\u0301 a\u0316\u0301 \U0001D160") == want
    assert supertok.normalize_nfc("\U00011935\U00011930") == "\U00011935\U00011930"  # Unicode 9.0
    with pytest.raises(ValueError, match="index 1"):
        supertok.normalize_nfc("a\ud800")
