"""supertok.numba from a user's own @njit code: the ids and text it gives equal the ordinary API's
(Encoding.encode_ordinary, decode) for rank vocabularies, a UBE model and a superword model, on
the golden vectors' texts and on the corpora."""
import json
import os

import pytest

numba = pytest.importorskip("numba", reason="numba is not installed (pip install 'supertok[numba]')")
import numpy as np  # noqa: E402
from numba.typed import List  # noqa: E402

import supertok  # noqa: E402
from conftest import CORPORA, ROOT, get_backend  # noqa: E402

stn = pytest.importorskip("supertok.numba")


@numba.njit
def user_encode_all(enc, texts):
    """What a user writes: a jitted loop over texts that encodes each and counts the tokens."""
    out = List()
    total = 0
    for t in texts:
        ids = stn.encode(enc, t)
        total += ids.shape[0]
        out.append(ids)
    return out, total


@numba.njit
def user_round_trip(enc, t):
    return stn.decode(enc, stn.encode(enc, t))


def _on_numba(fn):
    prev = supertok._set_backend(get_backend("numba"))
    try:
        return fn()
    finally:
        supertok._set_backend(prev)


def _texts():
    texts = ["", "hello world", "Hello, world! 123 héllo 世界  \n\t<|endoftext|> \U0001F600", "a" * 3000, " " * 500]
    with open(os.path.join(ROOT, "vectors", "encode", "o200k_base.jsonl"), encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if "text" in rec:
                texts.append(rec["text"])
    return texts


def _check(encoding, texts):
    enc = stn.encoder(encoding)
    arrays = List([np.frombuffer(t.encode("utf-8"), np.uint8).copy() for t in texts])
    got, total = user_encode_all(enc, arrays)
    want = [encoding.encode_ordinary(t) for t in texts]
    assert [g.tolist() for g in got] == want
    assert total == sum(len(w) for w in want)
    for t, a in zip(texts, arrays):
        assert bytes(user_round_trip(enc, a)) == t.encode("utf-8")


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_user_njit_encode_equals_the_api(name):
    _check(_on_numba(lambda: supertok.get_encoding(name)), _texts())


@pytest.mark.parametrize("model", ["ube_small", "super_bytes_small", "super_ube_small", "bytes_small"])
def test_user_njit_encode_models(model):
    m = _on_numba(lambda: supertok.load_model(os.path.join(ROOT, "vectors", "models", model + ".stmodel")))
    _check(m, _texts())


def test_user_njit_encode_corpora():
    if not os.path.isdir(CORPORA):
        pytest.skip("corpus folder is absent (../shared/corpora, or set SUPERTOK_CORPORA): the "
                    "corpus-based tests need it; the vectors cover the spec without it")
    import lzma
    texts = []
    for name in sorted(os.listdir(CORPORA)):
        if name.endswith(".txt.xz"):
            with lzma.open(os.path.join(CORPORA, name), "rt", encoding="utf-8", errors="replace") as f:
                texts.append(f.read(100_000))
    if not texts:
        pytest.skip("corpus folder is absent (../shared/corpora, or set SUPERTOK_CORPORA): the "
                    "corpus-based tests need it; the vectors cover the spec without it")
    _check(_on_numba(lambda: supertok.get_encoding("o200k_base")), texts)


def test_user_njit_errors():
    enc = stn.encoder("o200k_base")
    with pytest.raises(ValueError, match="not valid UTF-8"):
        stn.encode(enc, np.frombuffer(b"ab\xffcd", np.uint8).copy())
    with pytest.raises(ValueError, match="no token"):
        stn.decode(enc, np.array([10 ** 7], np.int64))
    native = supertok.get_encoding("o200k_base") if supertok.backend() != "numba" else None
    if native is not None:
        with pytest.raises(ValueError, match="numba backend"):
            stn.encoder(native)


def test_the_docs_example_runs_as_written(capsys):
    """docs/python.md's example of supertok.numba in a user's @njit code, run as written: it prints
    what its comment says."""
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        doc = f.read()
    section = doc.split("### Encoding inside your own @njit code", 1)[1]
    lines, started = [], False
    for line in section.splitlines():
        if line.startswith("    "):
            started = True
            lines.append(line[4:])
        elif started and line.strip():
            break
    code = "\n".join(lines)
    assert "stn.encode" in code and "print(" in code, code
    want = code.rsplit("# ", 1)[1].strip()
    exec(compile(code, "docs/python.md", "exec"), {})
    assert capsys.readouterr().out.strip() == want
