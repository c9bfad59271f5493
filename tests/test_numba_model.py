"""The Numba port's model files (core_numba/formats/model.py) against the C core: every model
file of the repository, canonical round trips, synthetic models for each section and check,
and a few thousand hostile files made from valid ones (truncated, lines dropped or repeated,
numbers bad or huge, ids out of range, bad headers, bad UTF-8, CRLF, trailing garbage, random
byte flips), each of which must give the C's status and every st_error field and message."""
import base64
import glob
import os
import random
import time

import pytest

from supertok import backends

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    NATIVE = backends.load("native")
except Exception as exc:  # pragma: no cover
    pytest.skip("no native backend: %s" % exc, allow_module_level=True)
try:
    import numba  # noqa: F401
except ImportError:  # pragma: no cover
    pytest.skip("numba is not installed", allow_module_level=True)


def _numba_backend():
    """The numba CoreBackend; while some modules of the port have not landed, one whose missing
    exports raise NotImplementedError when called (the model calls need none of them)."""
    try:
        return backends.load("numba")
    except NotImplementedError:
        from supertok.backends.c_api import CoreBackend
        from supertok.backends.numba_runtime import NumbaRuntime
        rt = NumbaRuntime()
        real = rt.fn

        def fn(name):
            try:
                return real(name)
            except NotImplementedError:
                def missing(*args):
                    raise NotImplementedError(name)
                return missing
        rt.fn = fn
        return CoreBackend(rt)


NUMBA = _numba_backend()


def _message(msg):
    return bytes(msg).split(b"\0", 1)[0]


def parse_report(b, data):
    """(status, error fields and message, canonical text or None, facts of the parsed model)."""
    with b._frame() as f:
        out = f.cell("st_model *")
        st = b._fn("st_model_parse")(f.bytes(data), len(data), b._null, out, f.err)
        m = f.get(out)
        err = f.error()
    err = tuple(err[:8]) + (_message(err[8]),)
    if st != 0:
        return st, err, None, None
    try:
        text = b.model_normalize(data)
        with b._frame() as f:
            fn = b._fn
            p = fn("st_model_name")(m, f.n)
            name = f.read_bytes(p, f.get(f.n))
            sc = fn("st_model_scripts")(m, f.n)
            scripts = None if sc == b._null else f.read_bytes(sc, f.get(f.n))
            facts = (name, scripts, fn("st_model_kind")(m), fn("st_model_alphabet")(m), fn("st_model_pattern")(m),
                     fn("st_model_pretokenizer_flags")(m) & 0xFFFFFFFF,
                     tuple(fn("st_model_count")(m, f.bytes(s + b"\0"))
                           for s in (b"merges", b"supermerges", b"tokens", b"specials", b"other")))
        pairs = tuple(tuple(b._pairs("st_model_pairs", m, section=s)) for s in (b"merges", b"supermerges", b"x"))
    finally:
        b._model_free(m)
    return st, err, text, facts + pairs


def check_same(data):
    a = parse_report(NUMBA, data)
    n = parse_report(NATIVE, data)
    assert a == n, "model %r\nnumba  %r\nnative %r" % (data[:300], a[:2], n[:2])
    return n


# ---- the models -----------------------------------------------------------------------------

def repo_models():
    out = []
    for pat in ("vectors/models/*.stmodel", "**/*.stmodel"):
        for p in sorted(glob.glob(os.path.join(ROOT, pat), recursive=True)):
            if p not in out and "/.git/" not in p:
                out.append(p)
    return out


def _ranks_model(n=300, specials=((b"<|endoftext|>", 400),), training=False):
    toks = [bytes([i]) for i in range(256)] + [b"ab", b"abc", b" the", b"\xe2\x82\xac"]
    toks = toks[:n]
    lines = ["supertok-model 1", "name ranks_small", "comment a ranks model", "kind ranks", "alphabet bytes",
             "pattern cl100k", "script-aware no", "tokens %d" % len(toks)]
    lines += ["%s %d" % (base64.b64encode(t).decode(), i * 2 + 1) for i, t in enumerate(toks)]
    lines.append("specials %d" % len(specials))
    lines += ["%d %s" % (i, t.decode()) for t, i in specials]
    lines.append("end")
    return ("\n".join(lines) + "\n").encode()


def _rules_model(version=1, training=None, scripts=None, specials=(), merges=None, supermerges=None, counts=False,
                 alphabet="bytes", comments=("hello", "wörld")):
    base = 512 if alphabet == "ube" else 256
    if merges is None:
        merges = [(97, 98), (base, 99), (32, 116), (base + 2, 104), (base + 3, 101), (120, 121)]
    lines = ["supertok-model %d" % version, "name rules_small"] + ["comment " + c for c in comments]
    if training:
        lines.append("training " + training)
    lines += ["kind rules", "alphabet " + alphabet, "pattern o200k"]
    if scripts is None:
        lines.append("script-aware no")
    else:
        lines += ["script-aware yes", "scripts " + scripts]
    lines.append("merges %d%s" % (len(merges), " counts" if counts else ""))
    lines += ["%d %d%s" % (a, b, " %d" % (1000 - i) if counts else "") for i, (a, b) in enumerate(merges)]
    if supermerges is not None:
        lines.append("supermerges %d%s" % (len(supermerges), " counts" if counts else ""))
        lines += ["%d %d%s" % (a, b, " %d" % (7 + i) if counts else "") for i, (a, b) in enumerate(supermerges)]
    lines.append("specials %d" % len(specials))
    lines += ["%d %s" % (i, t) for i, t in specials]
    lines.append("end")
    return ("\n".join(lines) + "\n").encode()


def _edited():
    """Models with one targeted edit: each of the checks the fuzzing reaches rarely."""
    r, k = _rules_model(), _ranks_model()
    t2 = _rules_model(version=2, training="algorithm=bpe mode=paper vocab_size=300 min_frequency=2 ngram_split=no")
    tr = b"training algorithm=bpe mode=paper vocab_size=300 min_frequency=2 ngram_split=no\n"
    return [
        _rules_model(counts=True).replace(b" 1000\n", b" 18446744073709551615\n"),
        _rules_model(counts=True).replace(b" 1000\n", b" 0\n"),
        _rules_model(counts=True).replace(b" 1000\n", b" 18446744073709551616\n"),
        r.replace(b"merges 6\n", b"merges 2096894\n"),
        r.replace(b"merges 6\n", b"merges 2096895\n"),
        _rules_model(supermerges=[(256, 257)]).replace(b"supermerges 1\n", b"supermerges 2096888\n"),
        _rules_model(supermerges=[(256, 257)]).replace(b"supermerges 1\n", b"supermerges 2096889\n"),
        r.replace(b"specials 0\n", b"specials 2097151\n"),
        r.replace(b"specials 0\n", b"specials 2097152\n"),
        k.replace(b"tokens 260\n", b"tokens 2147483647\n"),
        k.replace(b"tokens 260\n", b"tokens 2147483648\n"),
        k.replace(b"tokens 260\n", b"tokens 0\n"),
        k.replace(b"alphabet bytes", b"alphabet ube"),
        k.replace(b"specials 1\n", b"supermerges 1\n1 2\nspecials 1\n"),
        k.replace(b"specials 1\n400 ", b"specials 1\n2147483648 "),
        k.replace(b"specials 1\n400 ", b"specials 1\n9 "),
        k.replace(b"specials 1\n400 ", b"specials 1\n4294967295 "),
        k.replace(b" 519\n", b" 5190000\n"),
        k.replace(b" 519\n", b" 2147483648\n"),
        k.replace(b" 519\n", b" 5x\n"),
        k.replace(b" 519\n", b" 519 1\n"),
        k.replace(b" 519\n", b"  519\n"),
        k.replace(b" 519\n", b"\n"),
        k.replace(b" 519\n", b" 517\n"),
        k.replace(b"YWI= ", b"YWJ= "),
        k.replace(b"YWI= ", b"YW== "),
        k.replace(b"YWI= ", b"YWI "),
        k.replace(b"YWI= ", b"end "),
        k.replace(b"specials 1\n400 <|endoftext|>\n", b"specials 0\n"),
        r.replace(b"script-aware no\n", b"script-aware no\nscripts default\n"),
        r.replace(b"script-aware no\n", b"script-aware no\nscripts\x01\n"),
        r.replace(b"merges 6\n", b"merges 6 counts\n"),
        r.replace(b"merges 6\n", b"merges 6 count\n"),
        r.replace(b"merges 6\n", b"merges 6 counts \n"),
        r.replace(b"specials 0\n", b"specials 0 counts\n"),
        t2.replace(b"ngram_split=no", b"ngram_split=no extra=1"),
        t2.replace(b" ngram_split=no", b""),
        t2.replace(b" ngram_split=no", b" "),
        t2.replace(b"algorithm=bpe", b"algorithm=gpt"),
        t2.replace(b"algorithm=bpe", b"algorithm"),
        t2.replace(b"mode=paper", b"mode=hug"),
        t2.replace(b"vocab_size=300", b"vocab_size=0300"),
        t2.replace(b"training ", b"training"),
        t2.replace(b"training ", b"training\x01"),
        t2.replace(tr, b"comment  algorithm=bpe mode=paper vocab_size=1 min_frequency=0 ngram_split=no\n"
                       b"training \x01\n"),
        t2.replace(tr, b"training \r\n"),
        r.replace(b"comment hello\n", b"comment hello\ntraining algorithm=bpe\n"),
        r.replace(b"end\n", b"end\ncomment late\n"),
        r.replace(b"end\n", b"end"),
        r.replace(b"end\n", b"end \n"),
        r.replace(b"end\n", b"endx\n"),
        r.replace(b"name rules_small", b"name " + b"n" * 129),
        r.replace(b"name rules_small", b"name " + b"n" * 128),
        r.replace(b"name rules_small", b"name r\xc3\xa9"),
        r.replace(b"name rules_small", b"name  x"),
        r.replace(b"kind rules", b"kind\x7f"),
        r.replace(b"pattern o200k", b"pattern cl100k"),
        r.replace(b"pattern o200k", b"pattern gpt2"),
        r.replace(b"pattern o200k", b"pattern " + b"p" * 40),
        r.replace(b"comment hello", b"comment"),
        r.replace(b"comment hello", b"comment "),
        r.replace(b"comment hello", b"commentary hello"),
        r.replace(b"comment hello", b"train hello"),
    ]


def synthetic_models():
    return _edited() + [
        _ranks_model(),
        _ranks_model(specials=((b"<|a|>", 3), (b"<|b|>", 1000))),  # a rank taken, then a gap
        _rules_model(),
        _rules_model(counts=True, supermerges=[(256, 257), (258, 262)]),
        _rules_model(version=2, training="algorithm=bpe mode=hf vocab_size=300 min_frequency=2 ngram_split=no"),
        _rules_model(version=2, training="algorithm=superbpe mode=paper vocab_size=300 min_frequency=0 "
                                         "supermerges=10 ngram_split=yes c_min=2 max_len=4",
                     supermerges=[(256, 257)]),
        _rules_model(version=2, training="algorithm=boundless mode=hf vocab_size=1 min_frequency=0 ngram_split=no"),
        _rules_model(version=2, training="algorithm=bpe mode=paper vocab_size=300 min_frequency=2 ngram_split=yes"),
        _rules_model(version=2, training="algorithm=superbpe mode=paper vocab_size=3 min_frequency=0 ngram_split=no"),
        _rules_model(version=2, training="algorithm=bpe mode=paper vocab_size=18446744073709551615 "
                                         "min_frequency=18446744073709551616 ngram_split=no"),
        _rules_model(scripts="default"),
        _rules_model(scripts="none"),
        _rules_model(scripts="Latin,Greek,Han"),
        _rules_model(scripts="latin"),
        _rules_model(scripts="Latn"),
        _rules_model(scripts="Latin,Latin"),
        _rules_model(scripts="Latin,,Greek"),
        _rules_model(scripts="Klingon"),
        _rules_model(scripts="Latin,"),
        _rules_model(alphabet="ube", specials=[(600, "<|x|>"), (601, "a\\x20b\\tc\\\\\\n")]),
        _rules_model(alphabet="ube", specials=[(300, "<|x|>")]),
        _rules_model(specials=[(65, "A"), (256, "ab"), (262, "<|e|>")]),  # shared specials: their token's bytes
        _rules_model(specials=[(65, "B")]),
        _rules_model(specials=[(257, "abd")]),
        _rules_model(specials=[(257, "ab")]),
        _rules_model(specials=[(300, "\\x20pad\\x20"), (301, "\\x7F\\x01"), (302, "é")]),
        _rules_model(specials=[(300, "a"), (301, "a")]),
        _rules_model(specials=[(300, "\\q")]),
        _rules_model(specials=[(300, "\\x4")]),
        _rules_model(specials=[(300, "\\xC3")]),
        _rules_model(specials=[(300, "\\xc3\\xA9")]),
        _rules_model(specials=[(300, "x\\")]),
        _rules_model(specials=[(300, "")]),
        _rules_model(specials=[(200000, "far")]),
        _rules_model(specials=[(2097150, "max")]),
        _rules_model(specials=[(2097151, "over")]),
        _rules_model(specials=[(4294967295, "u32")]),
        _rules_model(specials=[(4294967296, "u33")]),
        _rules_model(merges=[]),
        _rules_model(merges=[(97, 98), (98, 97), (97, 98)]),
        _rules_model(merges=[(97, 98)], supermerges=[(97, 98)]),
        _rules_model(merges=[(97, 98)], supermerges=[(256, 258)]),
        _rules_model(merges=[(97, 256)]),
        _rules_model(merges=[(300, 1)]),
        # the token-bytes limit: each rule doubles the token before it
        _rules_model(merges=[(97, 97)] + [(256 + i, 256 + i) for i in range(30)]),
        _rules_model(merges=[(97, 97)] + [(256 + i, 256 + i) for i in range(20)],
                     supermerges=[(276 + i, 276 + i) for i in range(10)]),
    ]


def all_models():
    out = []
    for p in repo_models():
        with open(p, "rb") as fh:
            out.append(fh.read())
    return out + synthetic_models()


@pytest.mark.parametrize("path", repo_models(), ids=os.path.basename)
def test_repo_models_same_as_native(path):
    with open(path, "rb") as fh:
        data = fh.read()
    st, err, text, facts = check_same(data)
    assert st == 0, err
    assert check_same(text)[2] == text  # the canonical text is a fixed point


@pytest.mark.parametrize("k", range(len(synthetic_models())))
def test_synthetic_models_same_as_native(k):
    data = synthetic_models()[k]
    st, err, text, facts = check_same(data)
    if st == 0:
        assert check_same(text)[2] == text


# ---- hostile files ------------------------------------------------------------------------------

_NUMBERS = [b"", b"0", b"00", b"01", b"-1", b"+1", b"1a", b"a", b"1 1", b"1  1", b"255", b"256", b"511", b"512",
            b"2097150", b"2097151", b"2147483647", b"2147483648", b"4294967295", b"4294967296",
            b"18446744073709551615", b"18446744073709551616", b"99999999999999999999", b"100000000000000000000",
            b"123456789012345678901234567890", b"\xff", b"\xc3\xa9", b"counts", b"end", b"name", b"merges"]
_BYTES = [0, 9, 10, 13, 32, 0x30, 0x39, 0x3D, 0x41, 0x5C, 0x7F, 0x80, 0xC3, 0xFF]


def mutations(data, rng, n):
    lines = data.split(b"\n")[:-1]
    out = []
    L = len(lines)
    for i in range(L + 1):  # truncated after every line, and inside one
        out.append(b"\n".join(lines[:i]) + (b"\n" if i else b""))
        if i < L:
            out.append(b"\n".join(lines[:i + 1]))
    for i in range(L):
        out.append(b"\n".join(lines[:i] + lines[i + 1:]) + b"\n")  # a line dropped
        out.append(b"\n".join(lines[:i + 1] + lines[i:]) + b"\n")  # a line twice
    out.append(data.replace(b"\n", b"\r\n"))
    out.append(data + b"trailing garbage\n")
    out.append(data + b"\n")
    out.append(data[:-1])
    out.append(data.replace(b"supertok-model 1", b"supertok-model 3", 1))
    out.append(data.replace(b"supertok-model 1", b"supertok-model 01", 1))
    out.append(data.replace(b"supertok-model 1", b"supertok-model", 1))
    out.append(data.replace(b"supertok-model 1", b"supertok-model 1 ", 1))
    out.append(data.replace(b"supertok-model 2", b"supertok-model 1", 1))
    out.append(data.replace(b"supertok-model", b"Supertok-model", 1))
    out.append(b"\xef\xbb\xbf" + data)
    out.append(b"")
    while len(out) < n:
        r = rng.random()
        ls = list(lines)
        i = rng.randrange(L)
        if r < 0.45:  # one field of a line replaced
            fields = ls[i].split(b" ")
            j = rng.randrange(len(fields))
            fields[j] = rng.choice(_NUMBERS) if rng.random() < 0.8 else str(rng.randrange(-5, 2100000)).encode()
            ls[i] = b" ".join(fields)
        elif r < 0.55:  # a field added or removed
            fields = ls[i].split(b" ")
            if rng.random() < 0.5 or len(fields) < 2:
                fields.insert(rng.randrange(len(fields) + 1), rng.choice(_NUMBERS))
            else:
                del fields[rng.randrange(len(fields))]
            ls[i] = b" ".join(fields)
        elif r < 0.65:  # two lines swapped
            j = rng.randrange(L)
            ls[i], ls[j] = ls[j], ls[i]
        elif r < 0.72:  # bad UTF-8 or a control byte in a line
            k = rng.randrange(len(ls[i]) + 1)
            ls[i] = ls[i][:k] + rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xc3", b"\t", b"\r", b"\x00",
                                             b"\\", b"\\x", b"\\xZZ", b"=", b"  "]) + ls[i][k:]
        elif r < 0.77:  # a count line's number changed by a little
            for k, ln in enumerate(ls):
                if ln.split(b" ")[0] in (b"merges", b"supermerges", b"tokens", b"specials") and rng.random() < 0.5:
                    f = ln.split(b" ")
                    try:
                        f[1] = str(int(f[1]) + rng.choice([-2, -1, 1, 2, 1000])).encode()
                    except ValueError:
                        pass
                    ls[k] = b" ".join(f)
                    break
        else:  # random byte flips
            t = bytearray(b"\n".join(ls) + b"\n")
            for _ in range(rng.randrange(1, 4)):
                t[rng.randrange(len(t))] = rng.choice(_BYTES) if rng.random() < 0.7 else rng.randrange(256)
            out.append(bytes(t))
            continue
        out.append(b"\n".join(ls) + b"\n")
    return out


def _fuzz_bases():
    bases = [m for m in all_models() if len(m) < 20000]
    return bases


@pytest.mark.parametrize("k", range(len(_fuzz_bases())))
def test_hostile_models_same_as_native(k):
    data = _fuzz_bases()[k]
    rng = random.Random(1000 + k)
    cases = mutations(data, rng, 150)
    for case in cases:
        check_same(case)


def test_hostile_random_bytes_same_as_native():
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randrange(0, 64)
        check_same(b"supertok-model 1\n" + bytes(rng.randrange(256) for _ in range(n)))


# ---- st_model_write_rules ------------------------------------------------------------------------

def _write_rules(b, *args):
    try:
        return ("ok", b.model_write_rules(*args))
    except Exception as exc:  # the report, as the host layer raises it
        return (type(exc).__name__, str(exc), getattr(exc, "status", None), getattr(exc, "offset", None),
                getattr(exc, "line", None), getattr(exc, "input", None), getattr(exc, "detail", None))


@pytest.mark.parametrize("args", [
    (b"m", 0, 1, [97, 98, 256, 99], [(b"<|a|>", 300), (b"\x00 x ", 299), (b"<|a|>", 299)], [b"one", b"two"]),
    (b"m", 1, 3, [], [], []),
    (b"m", 2, 1, [], [], []),
    (b"m", 0, 0, [], [], []),
    (b"m", 0, 4, [], [], []),
    (b"", 0, 1, [], [], []),
    (b"a b", 0, 1, [], [], []),
    (b"x" * 129, 0, 1, [], [], []),
    (b"x" * 128, 0, 1, [], [], []),
    (b"m\x7f", 0, 1, [], [], []),
    (b"m", 0, 1, [], [], [b""]),
    (b"m", 0, 1, [], [], [b"ok", b"bad\n"]),
    (b"m", 0, 1, [], [], [b"\xff"]),
    (b"m", 0, 1, [], [(b"\\\n\r\t\x01 ", 5)], []),
])
def test_write_rules_same_as_native(args):
    assert _write_rules(NUMBA, *args) == _write_rules(NATIVE, *args)


def test_write_rules_round_trip():
    merges = [97, 98, 256, 99, 32, 116]
    text = NATIVE.model_write_rules(b"rt", 0, 3, merges, [(b"<|e|>", 400)], [b"c"])
    assert NUMBA.model_write_rules(b"rt", 0, 3, merges, [(b"<|e|>", 400)], [b"c"]) == text
    assert check_same(text)[2] == text


# ---- size -------------------------------------------------------------------------------------------

def _big_model(n, counts=True):
    rng = random.Random(5)
    seen = set()
    lines = ["supertok-model 1", "name big", "kind rules", "alphabet bytes", "pattern o200k", "script-aware no",
             "merges %d%s" % (n, " counts" if counts else "")]
    for i in range(n):
        own = 256 + i
        while True:
            a, b = rng.randrange(min(own, 300)), rng.randrange(own)
            if (a, b) not in seen:
                seen.add((a, b))
                break
        lines.append("%d %d %d" % (a, b, n - i) if counts else "%d %d" % (a, b))
    lines += ["specials 1", "%d <|endoftext|>" % (256 + n), "end"]
    return ("\n".join(lines) + "\n").encode()


def test_big_model_parses_fast():
    data = _big_model(150000)
    check_same(data[:5000].rsplit(b"\n", 1)[0] + b"\n")  # compiled (or loaded) first
    t = time.perf_counter()
    m = NUMBA._model_parse(data)
    took = time.perf_counter() - t
    NUMBA._model_free(m)
    assert took < 1.0, took
    assert NUMBA.model_normalize(data) == NATIVE.model_normalize(data)
    assert NUMBA.model_pairs(data, "merges") == NATIVE.model_pairs(data, "merges")


# ---- the writer's buffer, and NULL arguments -------------------------------------------------------

def _write_calls(b, data):
    m = b._model_parse(data)
    res = []
    try:
        with b._frame() as f:
            fn = b._fn("st_model_write")
            st = fn(m, b._null, 0, f.n)
            size = f.get(f.n)
            res.append((st, size))
            for cap in (1, 7, size - 1, size, size + 5):
                op = f.out("char", cap)
                st = fn(m, op, cap, f.n)
                res.append((st, f.get(f.n), f.read_bytes(op, min(cap, size))))
            res.append(fn(m, b._null, 3, f.n))
            res.append(fn(b._null, b._null, 0, f.n))
            res.append((b._fn("st_model_kind")(b._null), b._fn("st_model_alphabet")(b._null),
                        b._fn("st_model_pattern")(b._null), b._fn("st_model_pretokenizer_flags")(b._null),
                        b._fn("st_model_count")(b._null, f.bytes(b"merges\0"))))
            sc = b._fn("st_model_scripts")(b._null, f.n)
            res.append((sc == b._null, f.get(f.n)))
            p1, p2 = f.cell("const uint32_t *"), f.cell("const uint64_t *")
            res.append((b._fn("st_model_pairs")(m, f.bytes(b"tokens\0"), p1, p2), f.get(p1) == b._null,
                        f.get(p2) == b._null))
            res.append(b._fn("st_model_pairs")(m, f.bytes(b"merges\0"), b._null, b._null))
    finally:
        b._model_free(m)
    return res


@pytest.mark.parametrize("k", [0, 1, 3, 5])
def test_writer_buffer_and_nulls_same_as_native(k):
    data = (_rules_model(), _ranks_model(), _rules_model(scripts="none"),
            _rules_model(counts=True, supermerges=[(256, 257)]), _rules_model(scripts="Latin"),
            _rules_model(version=2, training="algorithm=superbpe mode=paper vocab_size=3 min_frequency=0 "
                                            "supermerges=1 ngram_split=yes c_min=1 max_len=2"))[k]
    assert _write_calls(NUMBA, data) == _write_calls(NATIVE, data)


# ---- encodings from models, and their exports --------------------------------------------------------

def encoding_report(b, data, exports=True):
    """st_encoding_new_model's status and report; for an encoding made, its exports (tiktoken,
    tokenizer.json, or the refusal) and duplicate tokens."""
    with b._frame() as f:
        out = f.cell("st_encoding *")
        st = b._fn("st_encoding_new_model")(f.bytes(data), len(data), b._null, out, f.err)
        h = f.get(out)
        err = f.error()
    err = tuple(err[:8]) + (_message(err[8]),)
    if st != 0:
        return st, err
    enc = b._rt.own(h, "st_encoding_free")
    res = [st, err]
    if exports:
        for fmt in (1, 2, 3):
            try:
                res.append(b.encoding_export(enc, fmt))
            except Exception as exc:
                res.append((type(exc).__name__, str(exc), getattr(exc, "kind", None)))
        res.append(b.duplicate_tokens(enc))
    b._rt.release(enc)
    return tuple(res)


def check_encoding_same(data, exports=True):
    a = encoding_report(NUMBA, data, exports)
    n = encoding_report(NATIVE, data, exports)
    assert a == n, "model %r\nnumba  %r\nnative %r" % (data[:300], a[:2], n[:2])
    return n


def export_models():
    dup = _rules_model(merges=[(97, 98), (256, 99), (98, 99), (97, 258), (32, 32), (260, 260)],
                       specials=[(300, "<|endoftext|>"), (301, 'q"uote'), (302, "back\\\\slash"), (303, "tab\\there"),
                                 (304, "nl\\nx"), (305, "\\x00\\x1F\\x7F"), (306, "\\x08\\x0C\\r"), (307, "é中😀"),
                                 (308, "\u2028"), (309, "\\x20lead")])
    shared = _rules_model(specials=[(65, "A"), (256, "ab"), (262, "<|e|>")])
    out = [dup, shared, dup.replace(b"pattern o200k", b"pattern gpt2"),
           dup.replace(b"pattern o200k", b"pattern cl100k")]
    out += [dup.replace(b"pattern o200k", b"pattern " + p) for p in (b"superbpe", b"llama3", b"qwen2", b"deepseek_v3")]
    out += [m for m in all_models() if parse_report(NATIVE, m)[0] == 0]
    return out


@pytest.mark.parametrize("k", range(len(export_models())))
def test_model_encodings_and_exports_same_as_native(k):
    check_encoding_same(export_models()[k])


def constructor_refusals():
    """Models that parse but that an encoding constructor refuses, or whose pre-tokenizer does."""
    k = _ranks_model()
    return [
        k.replace(b"YWI= ", b"YQ== "),  # two tokens with the same bytes
        k.replace(b"YWJj ", b"YWI= "),
        _ranks_model(specials=((b"a", 400),)),
        _ranks_model(specials=((b"<|x|>", 400), (b"<|y|>", 401))),
        _rules_model(specials=[(300, "a")]),
        _rules_model(specials=[(300, "<|a|>"), (301, "<|b|>"), (302, "ab")]),
        _rules_model(alphabet="ube", specials=[(600, "a")]),
        _rules_model(scripts="Latin"),
        _rules_model(scripts="none", specials=[(300, "x")]),
    ]


@pytest.mark.parametrize("k", range(len(constructor_refusals())))
def test_constructor_reports_on_the_file_same_as_native(k):
    check_encoding_same(constructor_refusals()[k])


@pytest.mark.parametrize("k", range(0, len(_fuzz_bases()), 3))
def test_hostile_models_encodings_same_as_native(k):
    data = _fuzz_bases()[k]
    for case in mutations(data, random.Random(5000 + k), 40):
        if check_same(case)[0] == 0:
            check_encoding_same(case, exports=False)


def _udhr_text():
    paths = sorted(glob.glob(os.path.join(ROOT, "vectors", "**", "*udhr*"), recursive=True))
    for p in paths:
        if os.path.isfile(p) and os.path.getsize(p) < 5_000_000:
            with open(p, "rb") as fh:
                return fh.read().decode("utf-8", "replace")[:200000]
    return ("Everyone has the right to life, liberty and security of person. Tout individu a droit à la vie, "
            "à la liberté et à la sûreté de sa personne. 人人生而自由，在尊严和权利上一律平等。") * 50


@pytest.mark.parametrize("kw", [dict(), dict(alphabet="ube"), dict(pattern="cl100k"), dict(script_aware=True),
                                dict(algorithm="superbpe", supermerges=20), dict(pattern="llama3"),
                                dict(pattern="deepseek_v3")], ids=str)
def test_trained_model_exports_same_as_native(kw):
    """A model trained by the C core (the default backend here), loaded by both: the same
    encoding reports, exports (or refusals) and duplicate tokens."""
    import supertok
    tricky = ["<|endoftext|>", 'q"uote', "back\\slash", "tab\there", "nl\nx", "\x00\x1f\x7f", "\b\f\r",
              "é中😀", "\u2028", " lead"]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = supertok.train(iter(_udhr_text().splitlines()), vocab_size=800, special_tokens=tricky, progress=False,
                             **kw)
    data = bytes(enc._model_data)
    check_same(data)
    check_encoding_same(data)


def _builtin(b, name):
    import supertok
    prev = supertok._set_backend(b)
    try:
        return supertok.get_encoding(name)
    finally:
        supertok._set_backend(prev)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_builtin_encodings_exports_same_as_native(name):
    """The exports of the large rank vocabularies (loaded as the port loads them: from images)."""
    a, n = _builtin(NUMBA, name), _builtin(NATIVE, name)
    for fmt in (1, 2):
        def run(enc):
            try:
                return enc._backend.encoding_export(enc._handle, fmt)
            except Exception as exc:
                return (type(exc).__name__, str(exc), getattr(exc, "kind", None))
        assert run(a) == run(n)
    assert a._backend.duplicate_tokens(a._handle) == n._backend.duplicate_tokens(n._handle)


def test_big_ranks_model_parses_fast():
    """o200k_base's rank file as a ranks model (200k token lines through read_tokens_kernel)."""
    path = os.path.join(ROOT, "py", "supertok", "vocab", "o200k_base.tiktoken")
    with open(path, "rb") as fh:
        ranks = fh.read()
    n = ranks.count(b"\n")
    data = (b"supertok-model 1\nname o200k\nkind ranks\nalphabet bytes\npattern o200k\nscript-aware no\n"
            b"tokens %d\n" % n + ranks + b"specials 2\n199999 <|endoftext|>\n200018 <|endofprompt|>\nend\n")
    check_same(_ranks_model())  # compiled (or loaded) first
    t = time.perf_counter()
    m = NUMBA._model_parse(data)
    took = time.perf_counter() - t
    NUMBA._model_free(m)
    assert took < 1.0, took
    assert check_same(data)[0] == 0
