"""The Numba port's encoder (core_numba/encode: pipeline, merge, sink, special_policy, piece_cache,
superword_pass) against the C core: the same ids and offsets on real multilingual text (the shared
corpora), on adversarial text, on megabyte runs that stay linear; the same errors; and a timing
print of warm encode CPU time, numba against native.

Runs when both the native and the numba backends load (numba's kernels compile on first use, or
load from numba's cache)."""
import lzma
import os
import random
import time

import pytest

import supertok
from conftest import CORPORA, get_backend

try:
    _NAT = get_backend("native")
    _NB = get_backend("numba")
except Exception as exc:  # noqa: BLE001 (any reason a backend does not load)
    pytest.skip("the numba and native backends are both needed: %s" % exc, allow_module_level=True)

RANKS = ("o200k_base", "cl100k_base", "r50k_base", "p50k_base")
LANGS = ("en", "ru", "zh", "ar", "ja", "hi", "ko", "th", "el", "he", "de", "code")
_encs = {}


def enc(name, which):
    """name's encoding on backend which ("native" or "numba"), loaded once."""
    key = (name, which)
    if key not in _encs:
        prev = supertok._set_backend(_NAT if which == "native" else _NB)
        try:
            from supertok.encoding import _load
            _encs[key] = _load(name)
        finally:
            supertok._set_backend(prev)
    return _encs[key]


def both(name):
    return enc(name, "native"), enc(name, "numba")


def corpus(lang, size):
    path = os.path.join(CORPORA, lang + ".txt.xz")
    if not os.path.exists(path):
        pytest.skip("corpus %s is absent (../shared/corpora, or set SUPERTOK_CORPORA): the corpus-based "
                    "tests need it; the vectors cover the spec without it" % (lang + ".txt.xz"))
    with lzma.open(path) as f:
        data = f.read(size + 4)
    return data.decode("utf-8", errors="ignore")[: size // 2 if lang in ("zh", "ja", "ko", "th", "hi") else size]


@pytest.mark.parametrize("name", RANKS)
def test_corpora_ids(name):
    nat, nb = both(name)
    for lang in LANGS if name in ("o200k_base", "cl100k_base") else ("en", "ru", "zh", "code"):
        text = corpus(lang, 200_000)
        assert nb.encode(text) == nat.encode(text), (name, lang)


@pytest.mark.parametrize("name", ("o200k_base", "cl100k_base"))
def test_corpora_offsets_and_calls(name):
    nat, nb = both(name)
    for lang in ("en", "ru", "zh", "ja", "ar", "hi"):
        text = corpus(lang, 30_000)
        assert nb.encode_with_offsets(text) == nat.encode_with_offsets(text), (name, lang)
        assert nb.encode_ordinary(text) == nat.encode_ordinary(text)
        assert nb.count(text) == nat.count(text) if hasattr(nat, "count") else True
        parts = [text[k: k + 997] for k in range(0, len(text), 997)]
        assert nb.encode_batch(parts) == nat.encode_batch(parts)


ADVERSARIAL = [
    "", " ", "a", "\n", "\r\n\r\n", "   \t  \n\n  x", "hello world", "Hello, World! 123 4567 89",
    "<|endoftext|>", "x<|endoftext|>y", "<|endoftext", "<|endoftext|><|endoftext|>", "<|endofprompt|> <|fim_prefix|>",
    "é", "e\u0301\u0301\u0301", "😀" * 20, "👨‍👩‍👧‍👦", "\U0001F600a\U0001F600", "中" * 300, "한국어 텍스트입니다",
    "ﷺ" * 50, "\u200b\u200c\u200d" * 30, "'s 'S 're 've 'll 'd 'm 't", "I'M HERE'S", "1234567890" * 30,
    " " * 500 + "x", "\t" * 70, "a" * 65 + " " + "b" * 300, "aaaa bbbb" * 100, "ǅ ǈ ǋ", "İstanbul ıi",
    "\x00\x01\x02\x7f", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ab\u0300" * 40, "ثم قال: «مرحبا»", "नमस्ते दुनिया", "สวัสดีครับ",
    "The quick brown fox " * 40, "".join(chr(c) for c in range(0x20, 0x250)),
]


@pytest.mark.parametrize("name", RANKS)
def test_adversarial(name):
    nat, nb = both(name)
    rng = random.Random(7)
    texts = list(ADVERSARIAL)
    for _ in range(200):  # random mixtures of the above and random code points
        parts = rng.choices(ADVERSARIAL, k=rng.randint(1, 5))
        parts.append("".join(chr(rng.choice((rng.randint(0x20, 0x7F), rng.randint(0xA0, 0x3000),
                                              rng.randint(0x10000, 0x1F9FF)))) for _ in range(rng.randint(0, 30))))
        texts.append("".join(parts))
    for t in texts:
        assert nb.encode(t, allowed_special="all") == nat.encode(t, allowed_special="all"), t
        assert nb.encode_with_offsets(t, allowed_special="all") == nat.encode_with_offsets(t, allowed_special="all")
        assert nb.encode(t, disallowed_special=()) == nat.encode(t, disallowed_special=())


def _error(f):
    try:
        f()
    except Exception as exc:  # noqa: BLE001 (the same exception, whatever it is)
        return type(exc).__name__, str(exc), {k: v for k, v in vars(exc).items()}
    return None


@pytest.mark.parametrize("name", ("o200k_base", "cl100k_base"))
def test_errors_and_policies(name):
    nat, nb = both(name)
    cases = [
        ("hello <|endoftext|>", {}),
        ("a <|endofprompt|> b <|endoftext|>", {"allowed_special": {"<|endoftext|>"}}),
        ("x <|endoftext|>", {"allowed_special": {"<|endoftext|>"}, "disallowed_special": {"<|endoftext|>"}}),
        ("x <|foo|> y", {"disallowed_special": {"<|foo|>"}}),
        ("é<|endoftext|>", {"allowed_special": "all"}),
        ("<|endoftext|>", {"disallowed_special": ()}),
    ]
    for text, kw in cases:
        got = _error(lambda: nb.encode(text, **kw))
        want = _error(lambda: nat.encode(text, **kw))
        assert got == want, (text, kw)
        if got is None:
            assert nb.encode(text, **kw) == nat.encode(text, **kw)
        got = _error(lambda: nb.encode_batch(["fine", text], **kw))
        want = _error(lambda: nat.encode_batch(["fine", text], **kw))
        assert got == want, (text, kw)


def test_encode_piece_bytes():
    nat, nb = both("o200k_base")
    rng = random.Random(3)
    for n in (1, 2, 3, 9, 10, 11, 64, 65, 300, 5000):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert _NB.encode_piece(nb._handle, data) == _NAT.encode_piece(nat._handle, data)
        data = ("x" * n).encode()
        assert _NB.encode_piece(nb._handle, data) == _NAT.encode_piece(nat._handle, data)


MIXED = ("Unbelievable misunderstandings, Überraschungen und Kopfschmerzen. Привет, как дела? "
         "مرحبا بالعالم. 中华人民共和国成立于一九四九年。 def tokenize(self, text): return []\n"
         "東京都は日本の首都であり世界有数の大都市でもあります\n  indented line\n\n")


def test_cache_figures_as_native():
    """The caches' figures (st_encoding_cache_info: limit, bytes held, the piece cache's and the
    span cache's hits and misses) are the C core's after the same calls, made serially (natively a
    long text's parts would run in other blocks): spans found again, in other surroundings, with
    offsets and counts; the span log growing with the text seen (its entries kept), and lapping
    under a small limit. (Under 300 KiB the piece tables are 512 lines, whose number of sets C
    takes from the allocation's alignment: there the span cache's figures and the bytes only.)"""
    from supertok import encoding
    from supertok.encoding import _load
    prev = encoding.set_parallel(threads=1, force=False)
    try:
        rng = random.Random(5)
        words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzабвгдежзи") for _ in range(rng.randint(2, 12)))
                 for _ in range(2000)]

        def text(lines):
            return "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
                             for _ in range(lines)) + MIXED

        texts = [text(rng.randint(60, 120)) for _ in range(10)]
        assert len(texts[0]) >= 16384  # the first call makes piece tables of 1024 lines or more
        for limit in (None, 1 << 20, 300 << 10):
            nat, nb = [],  []
            for b, into in ((_NAT, nat), (_NB, nb)):
                p = supertok._set_backend(b)
                try:
                    into.append(_load("o200k_base"))
                finally:
                    supertok._set_backend(p)
            nat, nb = nat[0], nb[0]
            if limit is not None:
                nat.set_cache_size(limit)
                nb.set_cache_size(limit)
            calls = [(0, "ids"), (0, "ids"), (1, "offsets"), (0, "count"), (2, "x"), (1, "special")]
            calls += [(rng.randrange(len(texts)), rng.choice(("ids", "offsets", "count", "x", "special")))
                      for _ in range(30)]
            for k, how in calls:
                t = texts[k]
                if how == "ids":
                    assert nb.encode(t) == nat.encode(t)
                elif how == "offsets":
                    assert nb.encode_with_offsets(t) == nat.encode_with_offsets(t)
                elif how == "count":
                    assert nb.count(t) == nat.count(t)
                elif how == "x":
                    assert nb.encode("x" + t + "y") == nat.encode("x" + t + "y")
                else:
                    u = t[:5000] + "<|endoftext|>" + t
                    assert nb.encode(u, allowed_special="all") == nat.encode(u, allowed_special="all")
                a, b = nat.cache_info(), nb.cache_info()
                if limit == 300 << 10:
                    a = {f: a[f] for f in ("limit", "bytes", "span_hits", "span_misses")}
                    b = {f: b[f] for f in a}
                assert a == b, (limit, k, how)
            assert b["span_hits"] > 0
    finally:
        encoding.set_parallel(prev[0], force=prev[1], min_bytes=prev[2])


def _cpu(f, repeat=3):
    best = None
    for _ in range(repeat):
        t0 = time.process_time()
        f()
        t = time.process_time() - t0
        best = t if best is None else min(best, t)
    return best


def _pathological(kind, n):
    if kind == "letter":
        return "a" * n
    if kind == "digits":
        return "".join(str(k % 10) for k in range(n))
    if kind == "spaces":
        return " " * n
    rng = random.Random(11)
    return bytes(rng.randrange(256) for _ in range(n)).decode("utf-8", errors="replace")


@pytest.mark.parametrize("kind", ("letter", "digits", "spaces", "random"))
def test_megabyte_runs_linear(kind):
    nat, nb = both("o200k_base")
    big = _pathological(kind, 1 << 20)
    half = big[: len(big) // 2]
    assert nb.encode(big) == nat.encode(big)
    nb.encode(half)  # warm
    t_half = _cpu(lambda: nb.encode(half), 2)
    t_big = _cpu(lambda: nb.encode(big), 2)
    print("\n%s: numba 0.5 MB %.3f s, 1 MB %.3f s" % (kind, t_half, t_big))
    assert t_big < 3.0 * t_half + 0.05, (t_half, t_big)


def test_timing_print():
    """Warm encode CPU time, numba against native (a print: the figures depend on the machine)."""
    nat, nb = both("o200k_base")
    lines = []
    for lang in ("en", "ru", "zh", "ar", "ja", "hi", "code"):
        text = corpus(lang, 1 << 20)
        nat.encode(text)
        nb.encode(text)
        tn = _cpu(lambda: nat.encode(text))
        tb = _cpu(lambda: nb.encode(text))
        lines.append("%-5s native %.3f s  numba %.3f s  (%.2fx)" % (lang, tn, tb, tb / tn))
    print("\nwarm encode, o200k_base, CPU time:\n" + "\n".join(lines))
