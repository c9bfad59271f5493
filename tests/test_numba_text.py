"""The Numba port's text side (core_numba/text/unicode.py, pretokenize.py) against the C core.

Both backends run through the one host layer (c_api.py), so every call below is the same call
on two implementations: piece ends (bytes and code points), joins, counts and every field of
the errors must agree. Covered: real multilingual text (the shared corpora; skipped when they
are absent), every pattern with script-aware mode off and on under several script lists,
invalid UTF-8 (lone surrogates included), empty text, the handle's errors, the piece iterator
the encoder walks, and megabyte runs of one character, whose time must stay linear.
"""
import lzma
import json
import time

import numpy as np
import pytest

from conftest import corpus_path

numba = pytest.importorskip("numba", reason="numba is not installed (pip install 'supertok[numba]')")

from supertok import backends  # noqa: E402
from supertok.backends.c_api import CoreBackend  # noqa: E402
from supertok.backends.numba_runtime import NumbaRuntime, padded  # noqa: E402


class _PartialRuntime(NumbaRuntime):
    """The numba runtime while the port is incomplete: an export not yet ported raises when
    called rather than when the backend is made (the text side needs none of them)."""

    def fn(self, name):
        f = self._core.lookup(name)
        if f is None:
            def missing(*args, _name=name):
                raise NotImplementedError("the numba backend has no %s yet" % _name)
            return missing
        return f


@pytest.fixture(scope="module")
def nat():
    try:
        return backends.load("native")
    except backends.BackendUnavailable as exc:
        pytest.skip("the native backend is not built (the port is compared with it): %s" % exc)


@pytest.fixture(scope="module")
def nb():
    try:
        return backends.load("numba")
    except NotImplementedError:
        return CoreBackend(_PartialRuntime())


PATTERNS = (1, 2, 3, 4, 5, 6, 7)  # ST_PATTERN_GPT2, CL100K, O200K, SUPERBPE, LLAMA3, QWEN2, DEEPSEEK_V3
# (flags, scripts): script-aware off, on with the default set and with other lists
MODES = ((0, None), (1, None), (1, b""), (1, b"Han"), (1, b"Latin, Greek,Cyrillic"),
         (1, b" thai ,Hiragana,KATAKANA,hangul,Arabic"), (1, b"Devanagari,Hebrew,Inherited,Common"))
CORPUS_FILES = ("en.txt.xz", "code.txt.xz", "de.txt.xz", "ru.txt.xz", "el.txt.xz", "grc.txt.xz", "ar.txt.xz",
                "he.txt.xz", "he_biblical.txt.xz", "hi.txt.xz", "hi_classical.txt.xz", "th.txt.xz", "zh.txt.xz",
                "zh_classical.txt.xz", "ja.txt.xz", "ko.txt.xz")
CORPUS_CHARS = 60_000


def outcome(fn, *args):
    """("ok", result) or the error's class, text and fields."""
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001 -- the two backends must fail alike
        return (type(exc).__name__, str(exc), sorted((k, v) for k, v in vars(exc).items() if k != "__traceback__"))


def same_everything(nat, nb, pattern, flags, scripts, data):
    """Every text call agrees on data; returns the byte ends."""
    hn, hb = nat.pretokenizer(pattern, flags, scripts), nb.pretokenizer(pattern, flags, scripts)
    what = "pattern %d flags %d scripts %r" % (pattern, flags, scripts)
    a, b = outcome(nat.pretokenize_ends, hn, data, False), outcome(nb.pretokenize_ends, hb, data, False)
    if a != b:  # name the first difference, not a million ends
        if a[0] == b[0] == "ok":
            k = next(k for k in range(min(len(a[1]), len(b[1])) + 1) if k >= min(len(a[1]), len(b[1])) or
                     a[1][k] != b[1][k])
            at = a[1][k - 1] if k else 0
            raise AssertionError("%s: ends differ at piece %d (byte %d): %r / %r; text there %r" % (
                what, k, at, a[1][k:k + 3], b[1][k:k + 3], data[max(0, at - 20):at + 40]))
        raise AssertionError("%s: %r / %r" % (what, a, b))
    assert outcome(nat.pretokenize_ends, hn, data, True) == outcome(nb.pretokenize_ends, hb, data, True), what
    assert outcome(nat.pretokenize_count, hn, data) == outcome(nb.pretokenize_count, hb, data), what
    assert outcome(nat.pretokenize_join, hn, data, 0x0A) == outcome(nb.pretokenize_join, hb, data, 0x0A), what
    return a[1] if a[0] == "ok" else None


def _corpus_text(name):
    with lzma.open(corpus_path(name), "rt", encoding="utf-8") as f:
        return f.read(CORPUS_CHARS)


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpora(nat, nb, name):
    data = _corpus_text(name).encode("utf-8")
    for pattern in PATTERNS:
        for flags, scripts in MODES:
            ends = same_everything(nat, nb, pattern, flags, scripts, data)
            assert ends and ends[-1] == len(data)


def test_udhr_every_script(nat, nb):
    """The UDHR's 532 translations (40 scripts), the head of each."""
    with lzma.open(corpus_path("udhr.jsonl.xz"), "rt", encoding="utf-8") as f:
        texts = [json.loads(line)["text"][:1500] for line in f if line.strip()]
    data = "\n\n".join(texts).encode("utf-8")
    for pattern in PATTERNS:
        for flags, scripts in MODES[:4]:
            same_everything(nat, nb, pattern, flags, scripts, data)


# Hand-made texts: the cases the scanners' branches turn on (contractions under case folding,
# U+017F, marks as prefixes, CR/LF runs, trailing spaces, digits, astral letters, Inherited and
# Common between scripts).
EDGE_TEXTS = [
    "", " ", "  ", "\n", "\r\n", " \n ", "a", "'", "'s", "'S", "'\u017f", "'ll", "'LL", "'lL", "'Ve", "'re'", "x's",
    "don't I'M you'RE we'VE it'\u017f", "Hello world", "hello   world  ", "  \r\n\r\n  x\n", "a\n\n\nb",
    "1234567 12 1", "١٢٣٤ ٥", "?!... ;; //\n\n", " ?!\r\n/x", "a/b//c\r\n/", "CamelCaseWORDS lowerUPPER ABCdef",
    "\u0301a \u0301\u0301 x\u0301\u0302y", "ǅungla ǅ", "ʰʰaʰ", "naïve Café résumé", "ΑΒΓ αβγ ΆΈ", "Привет, мир!",
    "德国HYDAC电磁球阀", "日本語のテキスト、カタカナ。", "ภาษาไทย ภาษา", "한국어 텍스트", "עִבְרִית", "हिन्दी भाषा",
    "😀😀 x😀", "𝐀𝐁𝐂 𝑎𝑏", "\U00020000\U00020001 a", "\U000E0100a", "\u2028\u2029\u00a0\u3000x \u0085y",
    "\ufeff\u200bx", "\x1c\x1d\x1e\x1fa", "a\tb\x0bc\x0cd", "x" * 9 + "'s" + "Y" * 17 + "z" * 8,
    "ABCDEFGHIJKLMNOPé abcdefghijk\u00e9 ABCDEFGH1", "Latin中文Latin中文", "abc αβγ abc", "a\u0301\u0302中",
    "中 中\n中", "!中", "a中b", "1中2", " \u0301", "x\u200d\u0301y", "\u0100" * 10 + "'ll",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_edge_texts(nat, nb, pattern):
    for flags, scripts in MODES:
        for t in EDGE_TEXTS:
            same_everything(nat, nb, pattern, flags, scripts, t.encode("utf-8"))


def test_random_mixtures(nat, nb):
    """Random strings over a pool of characters of every class the scanners test."""
    pool = list(" \t\n\r'/,.!?-_0123456789aZsStTlLvVeErRmMdD\u017f\u00e9\u00c9\u01c5\u02b0\u0301\u0300\u0663"
                "\u00a0\u2028\u3000中国\u3042\u30a2\u0e01\u0e34\u1000\u1780\u0e81\uac00\u05d0\u0627\u0905\u093f"
                "\U0001F600\U0001D400\U00020000\U000E0100\u200b\ufeff\u0085\u2160\u00bd")
    rng = np.random.default_rng(2026)
    for _ in range(150):
        t = "".join(rng.choice(pool, size=int(rng.integers(1, 60))))
        data = t.encode("utf-8")
        for pattern in PATTERNS:
            for flags, scripts in MODES[:4]:
                same_everything(nat, nb, pattern, flags, scripts, data)


INVALID = [b"\xed\xa0\x80", b"a\xed\xa0\x80b", b"abc\xed\xbf\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80",
           b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"abc\xe4\xb8",
           b"x\xf0\x9f\x98", b"\xc3", b"hello \xc3(", b"12345678\xe4\xb8\xad\xe4\xb8" + b"a" * 20,
           ("中" * 50).encode() + b"\xed\xa0\x80", b"a" * 100 + b"\x80"]


@pytest.mark.parametrize("data", INVALID, ids=[d[:12].hex() for d in INVALID])
def test_invalid_utf8(nat, nb, data):
    for pattern in PATTERNS:
        for flags, scripts in MODES[:2]:
            assert same_everything(nat, nb, pattern, flags, scripts, data) is None


def test_empty_text(nat, nb):
    for pattern in PATTERNS:
        for flags, scripts in MODES:
            assert same_everything(nat, nb, pattern, flags, scripts, b"") == []


@pytest.mark.parametrize("pattern,flags,scripts", [
    (0, 0, None), (4, 0, None), (-1, 0, None), (1, 2, None), (3, 0x80000001, None),
    (1, 1, b"Foo"), (2, 1, b"Han,,  , Nope "), (3, 1, "Latin,Xé".encode()), (3, 1, b"Latin,\"q\\"),
    (3, 1, b"Han,\xed\xa0\x80"), (1, 1, b"a\x00b"), (1, 1, b"Latin," + b"X" * 70), (1, 1, b"Latin,\x01"),
    (2, 0, b"Han_Latin"), (2, 0, b"Old-Italic, old italic,OLD_ITALIC,Ital, zyyy ,Qaac"), (2, 1, b",,,"),
    (2, 1, b"Latin," + "é".encode() * 40), (2, 1, "Lätin".encode() * 30),
])
def test_pretokenizer_options(nat, nb, pattern, flags, scripts):
    a = outcome(nat.pretokenizer, pattern, flags, scripts)
    b = outcome(nb.pretokenizer, pattern, flags, scripts)
    if a[0] == "ok" and b[0] == "ok":
        same_everything(nat, nb, pattern, flags, scripts, "Latin 中文 ΑΒΓ ไทย x".encode("utf-8"))
    else:
        assert a == b


def test_pattern_from_regex(nat, nb):
    from supertok.core_numba.text.pretokenize import KNOWN_PATTERNS
    for pat, pid in KNOWN_PATTERNS:
        assert outcome(nb.pattern_from_regex, pat) == outcome(nat.pattern_from_regex, pat) == ("ok", pid)
    for pat in (b"", b"\\s+", KNOWN_PATTERNS[0][0][:-1], KNOWN_PATTERNS[2][0] + b" "):
        a, b = outcome(nat.pattern_from_regex, pat), outcome(nb.pattern_from_regex, pat)
        assert a == b and a[0] != "ok"


def test_unicode_exports(nat, nb):
    assert nb.unicode_version() == nat.unicode_version() == "16.0"
    assert nb.script_names() == nat.script_names()
    cps = list(range(0, 0x110000, 97)) + [0x10000, 0xFFFF, 0x1F600, 0xE0100, 0xE01EF, 0x10FFFF, 0x110000, 0xFFFFFFFF]
    assert [nb.script_of(c) for c in cps] == [nat.script_of(c) for c in cps]
    for name in (b"Latin", b"latn", b"OLD_ITALIC", b"old italic", b"Old-Italic", b"_o_l_d_ital ic-", b"zyyy",
                 b"qaac", b"Nope", b"", b"La tin", b"Lat\x00in", b"Han ", b"Hanx", b"HA", b"\xc3\xa9"):
        got = []
        for b in (nat, nb):
            with b._frame() as f:
                got.append(b._fn("st_script_from_name")(f.bytes(name), len(name)))
        assert got[0] == got[1], (name, got)
    from supertok.core_numba import lookup
    from_name = lookup("st_script_from_name")
    assert from_name(padded(b"Latin"), 5) == nat.script_names().index("Latin")
    assert from_name(None, 3) == -1


def test_piece_iterator():
    """pieces_next and pieces_fill (any cap) give the pieces scan_all gives."""
    from supertok.core_numba.text import pretokenize as P
    data = ("Hello world's 123456 中文テキスト ไทย\r\n\r\n  x " * 40).encode("utf-8")
    s = padded(data)
    n = len(data)
    for pattern in PATTERNS:
        for flags, scripts in MODES[:4]:
            st, pt = P.pretokenizer_init(pattern, flags, scripts)
            assert st == 0
            want = np.zeros(n, np.uint64)
            count = P.scan_all(pt, s, n, want, n)
            want = want[:count].tolist()
            it = np.zeros(P.ITER_FIELDS, np.int64)
            P.pieces_init(pt, s, n, it)
            got = []
            while it[P.IT_I] < n:
                got.append(P.pieces_next(pt, s, n, it))
            assert got == want
            for cap in (1, 2, 7, 1000):
                P.pieces_init(pt, s, n, it)
                ends = np.zeros(cap, np.uint64)
                got = []
                while True:
                    k = P.pieces_fill(pt, s, n, it, ends, cap)
                    if not k:
                        break
                    got.extend(ends[:k].tolist())
                assert got == want, (pattern, flags, cap)


def test_pretokenizer_init_errors():
    from supertok.core_numba.base.common import Err
    from supertok.core_numba.text import pretokenize as P
    err = Err()
    st, pt = P.pretokenizer_init(9, 0, None, None, err)
    assert (st, pt) == (5, None) and err.message == b"pattern 9"
    err = Err()
    st, pt = P.pretokenizer_init(1, 1, b"Han, Foo", None, err)
    assert (st, pt, err.offset, err.length, err.unit) == (6, None, 5, 3, 1) and err.message == b'unknown script "Foo"'
    assert P.pretokenizer_init(3, 0)[0] == 0


def test_small_buffers():
    """st_pretokenize and st_pretokenize_join with too small an output: the size, and the status."""
    from supertok.core_numba import lookup
    from supertok.core_numba.base.common import Err
    from supertok.backends.numba_runtime import Cell
    from supertok.core_numba.text import pretokenize as P
    data = b"a b c"
    _, pt = P.pretokenizer_init(1, 0)
    err, n = Err(), Cell()
    assert lookup("st_pretokenize")(pt, padded(data), len(data), 0, np.zeros(2, np.uint64), 2, n, err) == 4
    assert n.v == 3 and err.status == 4
    out = np.zeros(4, np.uint8)
    assert lookup("st_pretokenize_join")(pt, padded(data), len(data), 0x7C, out, 4, n, err) == 4
    assert n.v == 8 and bytes(out[:2]) == b"a|"
    assert lookup("st_pretokenize_join")(pt, padded(data), len(data), 0x80, out, 4, n, err) == 1
    assert lookup("st_pretokenize")(pt, padded(data), len(data), 2, np.zeros(8, np.uint64), 8, n, err) == 1
    assert err.message == b"unknown flags"
    assert lookup("st_pretokenize")(pt, None, 0, 0, None, 0, n, err) == 0 and n.v == 0
    assert lookup("st_pretokenize")(pt, None, 3, 0, None, 0, n, err) == 1
    assert lookup("st_pretokenize_count")(None, padded(data), len(data), n, err) == 1


RUNS = {"letter": "a", "upper": "A", "digit": "7", "space": " ", "newline": "\n", "crlf": "\r\n", "cjk": "中",
        "punct": "!", "mark": "\u0301", "astral": "\U0001F600", "apostrophe": "'", "nbsp": "\u00a0"}


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_megabyte_runs_linear(nat, nb, kind):
    """1 MB of one character: the same pieces as the C core, in time linear in the length."""
    ch = RUNS[kind].encode("utf-8")
    big = ch * ((1 << 20) // len(ch))
    half = big[:len(big) // 2 // len(ch) * len(ch)]
    for pattern in PATTERNS:
        for flags, scripts in MODES[:3]:
            hn, hb = nat.pretokenizer(pattern, flags, scripts), nb.pretokenizer(pattern, flags, scripts)
            assert nb.pretokenize_count(hb, half) == nat.pretokenize_count(hn, half)
            assert nb.pretokenize_ends(hb, big, False) == nat.pretokenize_ends(hn, big, False)
            for attempt in range(3):  # a busy machine can stall one timing: measure again
                times = []
                for data in (half, big):
                    best = float("inf")
                    for _ in range(5):
                        t0 = time.perf_counter()
                        nb.pretokenize_count(hb, data)
                        best = min(best, time.perf_counter() - t0)
                    times.append(best)
                if times[1] < 0.05 or times[1] < 3.2 * times[0]:
                    break
            assert times[1] < 0.05 or times[1] < 3.2 * times[0], (kind, pattern, flags, times)


def test_nfc_starter_seconds_are_the_tables():
    """The NFC fast path's list of starters that compose as a second is the tables' (the C list
    is checked the same way in core_c/tests/test_core.c)."""
    from supertok.core_numba.text import normalize as nz
    want = [int(x) for x in nz.NFC_COMP_SECOND if nz.nfc_ccc(int(x)) == 0]
    assert list(nz.NFC_STARTER_SECONDS) == want
    assert all(nz.nfc_starter_second(x) for x in want)
    assert not any(nz.nfc_starter_second(x) for x in (0x300, 0x4E00, 0x0430, 0x09BF, 0x115B0))
