"""The span cache (docs/design.md §7, core_c/src/encode/span_cache.h): a rank vocabulary's text,
cut into spans where the pattern proves the pieces on each side independent (cut.c), is found
span by span when it comes again. Every hit must give exactly the ids, offsets and counts that
encoding gives with the caches off (and tiktoken's), in any surroundings; the log stays within
its share of the limit however many times it laps; text with no place to cut is encoded
uncached and stays linear."""
import lzma
import os
import random
import time

import pytest

from conftest import ROOT, corpus_path
import sys

sys.path.insert(0, os.path.join(ROOT, "vectors"))
try:
    import tiktoken  # noqa: F401
    from generate_encode import tiktoken_offline
except ImportError:  # the oracle is optional: the tests then compare against the caches off
    tiktoken_offline = None

_tk = {}
PARAGRAPH = ("Unbelievable misunderstandings, Überraschungen und Kopfschmerzen. Привет, как дела? "
             "مرحبا بالعالم. 中华人民共和国成立于一九四九年。 def tokenize(self, text): return []\n"
             "東京都は日本の首都であり世界有数の大都市でもあります\n  indented line\n\n"
             "The 1234567 numbers, and 'quotes' don't break; it's fine.\r\n")


def _oracle(name, text, tmp_path):
    if tiktoken_offline is None:
        return None
    if name not in _tk:
        _tk.update(tiktoken_offline(str(tmp_path), names=("o200k_base", "cl100k_base", "r50k_base")))
    return _tk[name].encode(text, allowed_special="all")


def _new(backend, name="o200k_base"):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the span cache's texts run on native, wasmtime or numba")
    from supertok.encoding import _load
    return _load(name)


def _off(backend, name="o200k_base"):
    enc = _new(backend, name)
    enc.set_cache_size(0)
    return enc


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_twice_thrice(backend, serial, name, tmp_path):
    """The same text again finds every span the first call looked up, and looks up no piece."""
    enc, off = _new(backend, name), _off(backend, name)
    text = PARAGRAPH * 40
    want = off.encode(text)
    oracle = _oracle(name, text, tmp_path)
    if oracle is not None:
        assert want == oracle
    assert enc.encode(text) == want
    first = enc.cache_info()
    spans = first["span_hits"] + first["span_misses"]
    assert spans >= 10, first
    for _ in range(2):
        assert enc.encode(text) == want
    again = enc.cache_info()
    assert again["span_hits"] - first["span_hits"] == 2 * spans, (first, again)
    assert again["span_misses"] == first["span_misses"]
    assert (again["hits"], again["misses"]) == (first["hits"], first["misses"])
    assert enc.count(text) == len(want)
    assert 0 < again["bytes"] <= again["limit"] // 2


def test_offsets_and_counts_replayed(backend, serial):
    """Offsets (code points, through the span's token lengths) and counts (no ids buffer: the
    cache's own) of spans found are those of the caches off."""
    enc, off = _new(backend), _off(backend)
    text = "é" + PARAGRAPH * 30 + "🙂" * 50 + PARAGRAPH * 3
    want = off.encode_with_offsets(text)
    assert enc.encode_with_offsets(text) == want
    assert enc.count(text) == len(want[0])
    assert enc.encode_with_offsets(text) == want
    assert enc.encode(text) == want[0]
    hits = enc.cache_info()["span_hits"]
    assert enc.count(text) == len(want[0])
    assert enc.cache_info()["span_hits"] > hits


def test_spans_in_other_surroundings(backend, serial):
    """A paragraph seen alone, then inside other text (after letters, spaces, digits, a line
    break, a special token): every call gives the ids of the caches off."""
    enc, off = _new(backend), _off(backend)
    body = PARAGRAPH * 8
    enc.encode(body)
    for before in ("", "x", " ", "  ", "9", "\n", "word ", "<|endoftext|>", "中文", "a\r\n"):
        for after in ("", "x", " ", "\n", "?", "<|endoftext|>"):
            text = before + body + after + body
            assert enc.encode(text, allowed_special="all") == off.encode(text, allowed_special="all"), (before, after)
            assert enc.encode_ordinary(text) == off.encode_ordinary(text), (before, after)


def test_small_log_laps(backend, serial):
    """A limit that leaves the span cache its least log (64 KiB): many texts, each seen several
    times in a random order, lap the log again and again; ids always those of the caches off,
    memory within the block's share."""
    enc, off = _new(backend), _off(backend)
    limit = 300 << 10
    enc.set_cache_size(limit)
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzабвгдежзи") for _ in range(rng.randint(2, 12)))
             for _ in range(3000)]
    texts = []
    for _ in range(40):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 60))) for _ in range(rng.randint(5, 80))]
        texts.append("\n".join(lines))
    want = [off.encode(t) for t in texts]
    order = [rng.randrange(len(texts)) for _ in range(160)]
    for k in order:
        assert enc.encode(texts[k]) == want[k], k
        assert enc.cache_info()["bytes"] <= limit // 2
    info = enc.cache_info()
    assert info["span_hits"] > 0 and info["span_misses"] > 0, info


@pytest.mark.parametrize("text", [
    "a" * 60000,                                   # one letter: no place to cut
    " " * 60000,
    "1 " * 30000,                                  # spaces after digits: no rule holds
    "".join(chr(0x4E00 + (k * 7919) % 20000) for k in range(30000)),  # CJK with no line break
    ("x" * 9000 + " ") * 8,                        # a cut every 9,001 bytes, past ST_SPAN_MAX
    ("word " * 40 + "\n") * 300,
])
def test_texts_hard_to_cut(backend, serial, text):
    enc, off = _new(backend), _off(backend)
    want = off.encode(text)
    assert enc.encode(text) == want
    assert enc.encode(text) == want
    assert enc.encode_with_offsets(text) == off.encode_with_offsets(text)


def test_linear_without_cuts(serial):
    """No place to cut: each search for a span's end starts where the last stopped, so a text four
    times as long takes about four times as long (not sixteen)."""
    import supertok
    from supertok.encoding import _load
    if supertok.backend() != "native":
        pytest.skip("timed on the native backend only")
    enc = _load("o200k_base")

    def took(n):
        text = ("1 " * (n // 2))
        best = None
        for _ in range(3):
            t = time.perf_counter()
            enc.encode(text)
            d = time.perf_counter() - t
            best = d if best is None else min(best, d)
        return best

    small, big = took(200_000), took(800_000)
    assert big < 10 * small, (small, big)


LANGS = ["en", "zh", "ja", "ru", "ar", "ko", "th", "de", "code"]


@pytest.mark.parametrize("lang", LANGS)
def test_corpora_warm_equal_tiktoken(backend, serial, lang, tmp_path):
    """Real text in 9 languages, 256 KB each, encoded three times: every call equals tiktoken's."""
    path = corpus_path(lang + ".txt.xz")
    with lzma.open(path) as f:
        text = f.read(256_000).decode("utf-8", "ignore")
    enc = _new(backend)
    want = _oracle("o200k_base", text, tmp_path)
    if want is None:
        want = _off(backend).encode(text)
    for _ in range(3):
        assert enc.encode(text) == want
    info = enc.cache_info()
    # (a span whose index bucket was full may be lost: nearly all are found)
    assert info["span_hits"] >= 1.9 * info["span_misses"] > 0, info
