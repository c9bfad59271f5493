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


def _head(data, n):
    """data's first whole lines of about n bytes."""
    return data[:data.rfind(b"\n", 0, n) + 1]


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


# ---- candidates counters ------------------------------------------------------------------------
def _spec(data, pt, alphabet, algorithm, supermerges, vocab_size):
    """A candidates spec from a native trainer whose phase 1 ran on data."""
    b = NATIVE
    c = b.counter_new(*pt)
    b.counter_add(c, data, 1)
    t = b.trainer_new(c, 0, alphabet, vocab_size, 0, 0)
    try:
        b.trainer_set_superwords(t, algorithm, supermerges, 0)
        while b.trainer_stat(t, 18) == 1:  # ST_TRAINER_STATE: merging, until the candidates pass
            b.trainer_step(t, 1 << 20)
        return b.trainer_candidates_spec(t)
    finally:
        b.trainer_free(t)
        b.counter_free(c)


def _numba_cand(spec):
    """The port's candidates counter of a spec, made as st_candidates_new makes it (the spec's
    reader is candidates_spec.py's; here only its layout of the tokens)."""
    import numpy as np
    from supertok.core_numba.text.pretokenize import Pretokenizer
    from supertok.core_numba.train.candidates import counter_new_cand, vocab_fingerprint

    def le(o, n):
        return int.from_bytes(spec[o:o + n], "little")
    pattern, flags = le(12, 4), le(16, 4)
    scripts = np.array([le(20 + 4 * w, 4) for w in range(8)], np.uint32)
    algorithm, alphabet, supermerges, kept, fp = le(52, 4), le(56, 4), le(60, 8), le(68, 8), le(76, 8)
    base, sw = (512, 2) if alphabet == 1 else (256, 1)
    merges = np.frombuffer(spec[84:], "<u4").astype(np.uint32)
    assert vocab_fingerprint(alphabet, merges, kept) == fp
    toks = [bytes([i >> 8, i & 255]) if sw == 2 else bytes([i]) for i in range(base)]
    for i in range(kept):
        toks.append(toks[merges[2 * i]] + toks[merges[2 * i + 1]])
    seq = np.frombuffer(b"".join(toks), np.uint8)
    lens = np.array([len(x) for x in toks], np.uint32)
    off = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.uint64)
    from supertok.core_numba.text.pretokenize import pretokenizer_init
    _, dflt = pretokenizer_init(pattern, flags)
    if not (flags & 1):
        scripts = dflt.single_letter_scripts  # what st_counter_new gives (unused: not script-aware)
    st, c = counter_new_cand(Pretokenizer(pattern, flags, scripts), algorithm, alphabet, supermerges, kept, fp, seq,
                             off, lens, len(toks), None)
    assert st == 0
    return c


class _Port:
    """The port's counter exports on a Counter object, worded as the backend's methods."""

    def __init__(self):
        from supertok.core_numba.train import pretoken_counter as PC
        self.PC = PC

    def call(self, name, *args):
        from supertok.core_numba.base.common import Err
        err = Err()
        st = getattr(self.PC, name)(*args, err)
        if st:
            raise SupertokError(err.status, bytes(err.message).decode(), err.offset, detail=bytes(err.message).decode(), line=err.line,
                                input=err.input, unit=err.unit)
        return st

    def add(self, c, data, flags):
        from supertok.backends.numba_runtime import padded
        self.call("st_counter_add", c, padded(data), len(data), flags)

    def add_documents(self, c, docs):
        import numpy as np
        from supertok.backends.numba_runtime import padded
        ends = np.cumsum([len(d) for d in docs]).astype(np.uint64)
        self.call("st_counter_add_documents", c, padded(b"".join(docs)), ends, len(docs))

    def save(self, c):
        import numpy as np
        from supertok.backends.numba_runtime import Cell
        n = Cell()
        self.PC.st_counter_save(c, None, 0, n, None)
        out = np.zeros(n.v, np.uint8)
        self.call("st_counter_save", c, out, n.v, n)
        return out.tobytes()

    def load(self, c, data):
        from supertok.backends.numba_runtime import padded
        self.call("st_counter_load", c, padded(data), len(data))


def _errfields(e):
    return (e.status, e.offset if e.unit else None, e.line or None, e.input, e.unit, e.detail)


@pytest.mark.parametrize("lang, pt, alphabet, algorithm, sm", [
    ("en", (3, 0, None), 0, 1, 0), ("de", (2, 0, None), 1, 1, 0), ("ja", (3, 1, None), 0, 2, 40),
    ("zh", (3, 1, b"Han,Hiragana"), 1, 2, 40), ("th", (5, 0, None), 0, 1, 0)])
def test_candidates_counts_are_identical(lang, pt, alphabet, algorithm, sm):
    data = _corpus(lang, 300 << 10)
    spec = _spec(_head(data, 100 << 10), pt, alphabet, algorithm, sm, 400 if alphabet == 0 else 700)
    port = _Port()
    nat = NATIVE.candidates_new(spec)
    mine = _numba_cand(spec)
    lines = data.splitlines(keepends=True)
    half = len(lines) // 2
    NATIVE.counter_add(nat, b"".join(lines[:half]), 1)
    port.add(mine, b"".join(lines[:half]), 1)
    NATIVE.counter_add_documents(nat, lines[half:])
    port.add_documents(mine, lines[half:])
    NATIVE.counter_add(nat, _head(data, 5000), 0)
    port.add(mine, _head(data, 5000), 0)
    saved = NATIVE.counter_save(nat)
    assert port.save(mine) == saved
    assert NATIVE.counter_stat(nat, 4) == 1 and port.PC.st_counter_stat(mine, 4) == 1
    # merge and load of candidates
    nat2, mine2 = NATIVE.candidates_new(spec), _numba_cand(spec)
    NATIVE.counter_load(nat2, saved)
    port.load(mine2, saved)
    NATIVE.counter_merge(nat2, nat)
    port.call("st_counter_merge", mine2, mine)
    assert port.save(mine2) == NATIVE.counter_save(nat2)
    # what a candidates counter refuses, and a pretoken counter's file
    for fn_nat, fn_port in (
            (lambda: NATIVE.counter_prune(nat, 2), lambda: port.call("st_counter_prune", mine, 2)),
            (lambda: NATIVE.counter_add_pretoken(nat, b"x", 1),
             lambda: port.call("st_counter_add_pretoken", mine, _padded(b"x"), 1, 1)),
            (lambda: NATIVE.counter_load(nat, _saved(pt)), lambda: port.load(mine, _saved(pt))),
            (lambda: NATIVE.counter_load(NATIVE.counter_new(*pt), saved),
             lambda: port.load(_port_counter(pt), saved)),
            (lambda: NATIVE.counter_merge(nat, NATIVE.counter_new(*pt)),
             lambda: port.call("st_counter_merge", mine, _port_counter(pt)))):
        with pytest.raises(SupertokError) as a:
            fn_nat()
        with pytest.raises(SupertokError) as b:
            fn_port()
        assert _errfields(a.value) == _errfields(b.value)
    # hostile candidates files
    rng = random.Random(1)
    for k in range(300):
        d = bytearray(saved)
        if k < 140:
            d = d[:rng.randrange(len(d))]
        else:
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(d))
                d[i] = rng.choice([0, 1, 2, 0xFF, 0x80, d[i] ^ 1, rng.randrange(256)])
        r = []
        for do in (lambda: NATIVE.counter_load(NATIVE.candidates_new(spec), bytes(d)),
                   lambda: port.load(_numba_cand(spec), bytes(d))):
            try:
                do()
                r.append(None)
            except SupertokError as e:
                r.append(_errfields(e))
        assert r[0] == r[1]
    # another vocabulary's candidates
    other = _spec(_head(data, 100 << 10), pt, alphabet, algorithm, sm, 380 if alphabet == 0 else 690)
    with pytest.raises(SupertokError) as a:
        NATIVE.counter_load(NATIVE.candidates_new(other), saved)
    with pytest.raises(SupertokError) as b:
        port.load(_numba_cand(other), saved)
    assert _errfields(a.value) == _errfields(b.value)


def _padded(data):
    from supertok.backends.numba_runtime import padded
    return padded(data)


def _port_counter(pt):
    from supertok.backends.numba_runtime import Cell
    from supertok.core_numba.train import pretoken_counter as PC
    out = Cell(None)
    PC.st_counter_new(pt[0], pt[1], None if pt[2] is None else _padded(pt[2]), 0 if pt[2] is None else len(pt[2]),
                      None, out, None)
    return out.v


def _naive_split(cands, c_min, max_len):
    """docs/design.md §8's n-gram split, written plainly: {key: count}."""
    seqs = [(tuple(k.split(b"\xff")), n) for k, n in cands.items()]
    longest = [[0] * len(s) for s, _ in seqs]
    for n in range(1, max_len + 1):
        cnt, where = {}, []
        for j, (s, c) in enumerate(seqs):
            for k in range(len(s) - n + 1):
                if n > 1 and (longest[j][k] < n - 1 or longest[j][k + 1] < n - 1):
                    continue
                cnt[s[k:k + n]] = cnt.get(s[k:k + n], 0) + c
                where.append((j, k, s[k:k + n]))
        if not where:
            break
        kept = [(j, k) for j, k, g in where if cnt[g] >= c_min]
        for j, k in kept:
            longest[j][k] = n
        if not kept:
            break
    out = {}
    for j, (s, c) in enumerate(seqs):
        k = 0
        while k < len(s):
            n = longest[j][k]
            if n < 2:
                k += 1
                continue
            key = b"\xff".join(s[k:k + n])
            out[key] = out.get(key, 0) + c
            k += n
    return out


def _entries(c):
    from supertok.core_numba.train.pretoken_counter import counter_entry
    return {bytes(counter_entry(c, i)[0]): counter_entry(c, i)[1] for i in range(c.n)}


@pytest.mark.parametrize("c_min, max_len", [(15, 30), (2, 2), (3, 5), (1, 30), (1000, 30)])
def test_ngram_split_is_appendix_b(c_min, max_len):
    from supertok.core_numba.base.common import Err
    from supertok.core_numba.train.ngram import counter_split_ngrams
    data = _corpus("en", 300 << 10)
    spec = _spec(_head(data, 100 << 10), (3, 0, None), 0, 1, 0, 400)
    port = _Port()
    mine = _numba_cand(spec)
    port.add(mine, data, 1)
    st, split = counter_split_ngrams(mine, c_min, max_len, Err())
    assert st == 0
    ref = _naive_split(_entries(mine), c_min, max_len)
    assert _entries(split) == ref
    assert [int(x) for x in split.stats] == [int(mine.stats[0]), int(mine.stats[1]), sum(ref.values()), len(ref)]
    # a split counter takes no documents, is not split again, and saves and loads as version 2
    err = Err()
    assert port.PC.st_counter_add(split, _padded(b"more text"), 9, 0, err) == 1
    assert err.message == b"a split candidates counter counts no more documents (split after counting)"
    assert counter_split_ngrams(split, 15, 30, err)[0] == 1 and err.message == b"the candidates are split already"
    again = counter_split_ngrams(mine, c_min, max_len, Err())[1]
    port.load(again, port.save(split))
    assert _entries(again) == {k: 2 * v for k, v in ref.items()}
    with pytest.raises(SupertokError, match="another vocabulary, algorithm or n-gram split"):
        port.load(counter_split_ngrams(mine, c_min + 1, max_len, Err())[1], port.save(split))
    with pytest.raises(SupertokError, match="another vocabulary, algorithm or n-gram split"):
        port.load(mine, port.save(split))
    for bad in ((0, 30), (15, 1)):
        assert counter_split_ngrams(mine, *bad, err)[0] == 1
        assert err.message == b"c_min must be at least 1, max_len at least 2"
    assert counter_split_ngrams(_port_counter((3, 0, None)), 15, 30, err)[0] == 1


def test_eligibility_helpers():
    """candidates.py's helpers as the trainer calls them (has_letter, tokset_find)."""
    import numpy as np
    from supertok.core_numba.train.candidates import has_letter, tokset_init, tokset_find, ST__NO_TOKEN_ID

    def arr(b):
        return np.frombuffer(b + bytes(16), np.uint8).copy()
    for text, want in ((b"abc", 1), (b"123 !", 0), ("é".encode(), 1), ("人".encode(), 1), ("١٢".encode(), 0),
                       (b"", 0), ("\u0301".encode(), 0), ("𝒜".encode(), 1)):
        assert has_letter(arr(text), len(text)) == want
    toks = [b"ab", b"c", b"ab", "é".encode()]  # a sequence two ids spell: the smaller id is found
    lens = np.array([len(t) for t in toks], np.uint32)
    off = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.uint64)
    s = tokset_init(0, np.frombuffer(b"".join(toks), np.uint8), off, lens, len(toks))
    assert [tokset_find(s, arr(t), len(t)) for t in (b"ab", b"c", "é".encode(), b"x")] == [0, 1, 3, ST__NO_TOKEN_ID]
    ube = [bytes([0, 0x61]), bytes([1, 0xBA, 1, 0x4E])]  # 'a', and 人 (U+4EBA): UBE symbols 256 + 0xBA, 256 + 0x4E
    lens = np.array([len(t) for t in ube], np.uint32)
    off = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.uint64)
    s = tokset_init(1, np.frombuffer(b"".join(ube), np.uint8), off, lens, 2)
    assert [tokset_find(s, arr(t), len(t)) for t in (b"a", "人".encode(), b"b")] == [0, 1, ST__NO_TOKEN_ID]
