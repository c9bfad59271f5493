"""The Numba port's pretoken counters (core_numba/train/pretoken_counter.py, candidates.py, ngram.py,
token_counts.py) against the C core: counts files byte-identical on corpus text under several
pre-tokenizers and on adversarial texts; every error (status, st_error fields and message)
the same: bad UTF-8, bad flags and pretokens, hostile counts files (truncated, flipped bytes,
mismatched headers); merge, prune and token counts the same."""
import lzma
import os
import random

import pytest

from supertok import backends
from supertok._status import SupertokError

try:
    NATIVE = backends.load("native")
except Exception as exc:  # pragma: no cover
    pytest.skip("no native backend: %s" % exc, allow_module_level=True)
try:
    import numba  # noqa: F401
except ImportError:  # pragma: no cover
    pytest.skip("numba is not installed", allow_module_level=True)
NUMBA = backends.load("numba")

from conftest import CORPORA  # noqa: E402

BOTH = (NATIVE, NUMBA)
# (pattern, flags, scripts): o200k, cl100k, gpt2, llama3, deepseek_v3, and script-aware ones
PRETOKENIZERS = [(3, 0, None), (2, 0, None), (1, 0, None), (5, 0, None), (7, 0, None), (3, 1, None),
                 (2, 1, b"Han,Thai,Latin"), (4, 0, None)]


def _error(e):
    return (e.status, e.name, e.offset, e.line, e.input, e.unit, e.kind, e.length, e.detail, str(e))


def run(b, fn):
    """fn(b) -> its result, or the SupertokError's fields."""
    try:
        return ("ok", fn(b))
    except SupertokError as e:
        return ("error", _error(e))


def same(fn):
    """fn run on both backends gives the same result (or error); returns it."""
    a, n = run(NATIVE, fn), run(NUMBA, fn)
    assert a == n
    return a


def counts(b, texts, pt=(3, 0, None), lines=True, documents=False):
    c = b.counter_new(*pt)
    try:
        for t in texts:
            if documents:
                b.counter_add_documents(c, t)
            else:
                b.counter_add(c, t, 1 if lines else 0)
        return b.counter_save(c), [b.counter_stat(c, k) for k in range(5)]
    finally:
        b.counter_free(c)


def _corpus(name, size):
    path = os.path.join(CORPORA, name + ".txt.xz")
    if not os.path.exists(path):
        pytest.skip("no corpus %s" % path)
    with lzma.open(path) as f:
        data = f.read(size)
    return data[:data.rfind(b"\n") + 1]


@pytest.mark.parametrize("lang", ["en", "zh", "ja", "ar", "th", "ko", "code"])
def test_corpus_counts_are_identical(lang):
    data = _corpus(lang, 600 << 10)
    chunks = [data[i:i + 200_000] for i in range(0, len(data), 200_000)]  # cut anywhere: not whole lines
    chunks = [c for c in chunks if _valid(c)] or [data]
    for pt in PRETOKENIZERS:
        same(lambda b: counts(b, [data], pt))
        same(lambda b: counts(b, chunks, pt, lines=False))
    docs = data.splitlines(keepends=True)
    same(lambda b: counts(b, [docs[:3000], docs[3000:]], (3, 1, None), documents=True))


def _valid(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _adversarial(rng):
    cps = [0x20, 0x0A, 0x0D, 0x09, 0x27, 0x41, 0x61, 0x7A, 0x30, 0x39, 0x2E, 0x2F, 0xA0, 0xE9, 0x301, 0x3000,
           0x4E00, 0x3042, 0x30A2, 0x0E01, 0x0E31, 0x0627, 0x05D0, 0x1F600, 0x1F3FB, 0x200D, 0xFE0F, 0x10FFFD,
           0x2028, 0x85, 0x1100, 0xAC00, 0x0915, 0x094D]
    out = []
    for _ in range(rng.randint(0, 300)):
        r = rng.random()
        if r < 0.6:
            out.append(chr(rng.choice(cps)))
        elif r < 0.8:
            out.append(chr(rng.choice(cps)) * rng.randint(1, 40))
        elif r < 0.9:
            out.append(" " * rng.randint(1, 20) + "\n" * rng.randint(0, 3))
        else:
            out.append("'s 're 'LL 123456 ...!!")
    return "".join(out).encode()


def test_adversarial_texts_are_identical():
    rng = random.Random(5)
    texts = [_adversarial(rng) for _ in range(300)]
    texts += [b"", b"\n", b"\n\n\n", b"a" * 100_000, b" " * 70_000 + b"x", "人".encode() * 30_000,
              b"ab" * 40_000 + b"\n" * 5, "😀".encode() * 20_000, b"12345678901234567890" * 3000]
    for pt in PRETOKENIZERS:
        for lines in (True, False):
            same(lambda b: counts(b, texts, pt, lines=lines))
        same(lambda b: counts(b, [texts[:100], texts[100:], []], pt, documents=True))


BAD_UTF8 = [b"ok\xff", b"line\nline two \xc3\nthree", b"\xe2\x82", b"abc\n\xed\xa0\x80", b"\xf4\x90\x80\x80x",
            b"x" * 100 + b"\n\xc0\xaf"]


def test_text_errors_are_identical():
    def add(data, flags):
        def f(b):
            c = b.counter_new(3, 0, None)
            b.counter_add(c, b"before\n", 1)
            b.counter_add(c, data, flags)
            return b.counter_save(c)
        return f
    for data in BAD_UTF8:
        for flags in (0, 1, 2):
            same(add(data, flags))

    def docs(ds):
        def f(b):
            c = b.counter_new(2, 1, None)
            b.counter_add_documents(c, ds)
            return b.counter_save(c)
        return f
    for k, bad in enumerate(BAD_UTF8):
        same(docs([b"good one", b"", bad, b"bad later \xff"]))
        same(docs([b"a\xc3", b"\xa9"]))  # a character cut between documents

    def pretoken(data, count):
        def f(b):
            c = b.counter_new(3, 0, None)
            b.counter_add_pretoken(c, data, count)
            b.counter_add_pretoken(c, b"x", (1 << 64) - 5)
            b.counter_add_pretoken(c, data, count)
            return b.counter_save(c), b.counter_stat(c, 2)
        return f
    for data, count in ((b"", 1), (b"hello", 0), (b"hello", 3), (b"\xff", 1), (b"hi", 5), (b"hi", 4)):
        same(pretoken(data, count))
    for pt in ((9, 0, None), (3, 2, None), (3, 1, b"Nope"), (3, 1, b"Han, Latin"), (3, 1, b"")):
        same(lambda b: b.counter_save(b.counter_new(*pt)))


def test_decreasing_ends_and_nulls():
    """Calls the host never makes: the port's exports against the C's contract."""
    import numpy as np
    from supertok.backends.numba_runtime import Cell, padded
    from supertok.core_numba.base.common import Err
    from supertok.core_numba.train import pretoken_counter as PC
    out = Cell(None)
    assert PC.st_counter_new(3, 0, None, 0, None, out, Err()) == 0
    c = out.v
    err = Err()
    assert PC.st_counter_add_documents(c, padded(b"abcdef\xff"), np.array([3, 6, 2, 7], np.uint64), 4, err) == 1
    assert (err.unit, err.offset, err.input, err.line, err.message) == (4, 2, 2, 0, b"ends must not decrease")
    err = Err()
    assert PC.st_counter_add_documents(c, padded(b"abc\xffef"), np.array([3, 6, 2], np.uint64), 3, err) == 3
    assert (err.unit, err.offset, err.input) == (1, 0, 1)
    assert PC.st_counter_stat(c, 0) == 0 and PC.st_counter_add(None, None, 0, 0, err) == 1
    assert err.message == b"counter or text is NULL"
    assert PC.st_counter_stat(None, 4) == 0 and PC.st_counter_stat(c, 4) == 0 and PC.st_counter_stat(c, 9) == 0


def _saved(pt=(3, 0, None), texts=(b"the cat sat on the mat\nthe end\n",)):
    return counts(NATIVE, texts, pt)[0]


def test_hostile_counts_files_are_identical():
    good = _saved(texts=[b"the cat sat on the mat\nthe end \xc3\xa9t\xc3\xa9\n"])

    def load(data, pt=(3, 0, None)):
        def f(b):
            c = b.counter_new(*pt)
            b.counter_add(c, b"already here\n", 1)
            b.counter_load(c, data)
            return b.counter_save(c), b.counter_stat(c, 3)
        return f
    same(load(good))
    for n in range(len(good) + 1):
        same(load(good[:n]))
    rng = random.Random(3)
    for _ in range(400):
        d = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(d))
            d[i] = rng.choice([0, 1, 2, 0xFF, 0x80, 0xC3, d[i] ^ 1, rng.randrange(256)])
        same(load(bytes(d)))
    same(load(good, (2, 0, None)))
    same(load(good + b"extra"))
    same(load(good[:60] + b"\xff" * 8 + good[68:]))  # overflowing statistics
    aware = _saved((3, 1, b"Han"))
    same(load(aware, (3, 1, b"Han")))
    same(load(aware, (3, 1, None)))
    same(load(aware))
    for w in range(8):  # script bits
        d = bytearray(aware)
        d[20 + 4 * w + 3] |= 0x80
        same(load(bytes(d), (3, 1, b"Han")))
    same(load(b"not counts"))
    same(load(b""))


def test_merge_prune_token_counts_are_identical():
    import supertok
    data = _corpus("en", 200 << 10)
    half = len(data) // 2
    cut = data.rfind(b"\n", 0, half) + 1
    for pt in ((3, 0, None), (2, 1, None)):
        def merged(b):
            x, y = b.counter_new(*pt), b.counter_new(*pt)
            b.counter_add(x, data[:cut], 1)
            b.counter_add(y, data[cut:], 1)
            b.counter_merge(x, y)
            b.counter_merge(x, y)
            out = [b.counter_save(x)]
            for m in (0, 1, 2, 3, 10, 1 << 40):
                b.counter_prune(x, m)
                out.append(b.counter_save(x))
            b.counter_add(x, data[:cut], 1)  # counting after a prune: the hot cache was cleared
            out.append(b.counter_save(x))
            return out
        same(merged)
    # merge errors
    for a, bpt in (((3, 0, None), (2, 0, None)), ((3, 1, b"Han"), (3, 1, b"Thai")), ((3, 1, b"Han"), (3, 0, None))):
        same(lambda b: b.counter_merge(b.counter_new(*a), b.counter_new(*bpt)))

    def into_itself(b):
        x = b.counter_new(3, 0, None)
        b.counter_merge(x, x)
    same(into_itself)

    def overflow(b):
        x, y = b.counter_new(3, 0, None), b.counter_new(3, 0, None)
        b.counter_add_pretoken(x, b"a", (1 << 64) - 2)
        b.counter_add_pretoken(y, b"b", 2)
        b.counter_merge(x, y)
    same(overflow)

    # token counts: each backend's own encodings
    for name in ("o200k_base", "cl100k_base"):
        def tc(b):
            prev = supertok._set_backend(b)
            try:
                enc = supertok.get_encoding(name)
                c = b.counter_new(3 if name == "o200k_base" else 2, 0, None)
                b.counter_add(c, data, 1)
                return b.counter_token_counts(c, enc._handle)
            finally:
                supertok._set_backend(prev)
        same(tc)


def test_token_counts_of_trained_models(tmp_path):
    import supertok
    data = _corpus("de", 100 << 10)
    text = tmp_path / "t.txt"
    text.write_bytes(data)
    prev = supertok._set_backend(NATIVE)
    try:
        paths = []
        for k, kw in enumerate((dict(alphabet="ube", vocab_size=900), dict(vocab_size=600),
                                dict(vocab_size=600, algorithm="superbpe", supermerges=20))):
            p = tmp_path / ("m%d.stmodel" % k)
            p.write_bytes(supertok.train(str(text), **kw)._model_data)
            paths.append(p)
    finally:
        supertok._set_backend(prev)
    for p in paths:
        def tc(b):
            prev = supertok._set_backend(b)
            try:
                enc = supertok.load_model(str(p))
                c = b.counter_new(3, 0, None)
                b.counter_add(c, data + "ünïcödé 😀 x\n".encode(), 1)
                out = b.counter_token_counts(c, enc._handle)
                b.counter_add_pretoken(c, b"abc", (1 << 64) - 1 - b.counter_stat(c, 2))
                try:
                    b.counter_token_counts(c, enc._handle)
                except SupertokError as e:
                    return out, _error(e)
                return out
            finally:
                supertok._set_backend(prev)
        same(tc)
