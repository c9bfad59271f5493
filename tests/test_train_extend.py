"""Extending a trained tokenizer (SuperBPE's Stage 2; docs/design.md §8, docs/training.md).

Each case of vectors/train/extend.jsonl is the call

    supertok.train(iter(documents), vocab_size=..., extend=<the base model>, seed_merges=...,
                   pattern=..., min_count=..., min_frequency=...)

where the base model is the case's paper-mode BPE merges (o200k, trained on the same corpus by
the naive reference). The expected merges (the seeds with their counts at replay, then the new
ones) come from the naive reference (vectors/train_reference.py, train_extension), which checks
every candidate token against the four-word cap and the colon-space block.

Also through the API: the model file's training line, loading and encoding an extended model,
sweeps, the defaults, the refusals, and Counts as a source.
"""
import os
import subprocess
import sys

import pytest
import supertok
from conftest import BACKENDS, ROOT, get_backend
from vectors_util import load as load_vectors

VEC_DIR = os.path.join(ROOT, "vectors", "train")
EXTEND_FILE = os.path.join(VEC_DIR, "extend.jsonl")
CASE_KEYS = {"case", "corpus", "alphabet", "pattern", "base_merges", "seed_merges", "vocab_size", "min_count",
             "min_frequency", "max_words", "colon_space", "alphabet_size", "merges"}



@pytest.fixture
def api_backend(backend):
    """backend, but for the API tests (several trainings each) not pywasm, which runs one vector case."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the extension API tests run on native and wasmtime")
    return backend


def _corpora():
    return {r["corpus"]: r["documents"] for r in load_vectors(os.path.join(VEC_DIR, "corpora.jsonl"))[1]}


def _cases():
    return load_vectors(EXTEND_FILE)[1]


def _base(case):
    return supertok.load_model({"format": "supertok-merges", "version": 1, "name": "base-" + case["alphabet"],
                                "alphabet": case["alphabet"], "pattern": "o200k", "merges": case["base_merges"]})


def _symbols(merges, alphabet):
    A = 256 if alphabet == "bytes" else 512
    sym = {i: (i,) for i in range(A)}
    for i, (left, right, _count) in enumerate(merges):
        sym[A + i] = sym[left] + sym[right]
    return sym


def _words(symbols):
    words, prev = 0, 32
    for c in symbols:
        words += c != 32 and prev == 32
        prev = c
    return words


def test_file_and_properties():
    meta, rows = load_vectors(EXTEND_FILE)
    assert meta["_meta"]["records"] == len(rows) >= 30
    corpora = _corpora()
    bound = 0
    for c in rows:
        assert set(c) == CASE_KEYS, c["case"]
        assert c["corpus"] in corpora
        A = 256 if c["alphabet"] == "bytes" else 512
        seeds = c["base_merges"][:c["seed_merges"]]
        assert [m[:2] for m in c["merges"][:len(seeds)]] == seeds, c["case"]
        assert len(c["merges"]) <= c["vocab_size"] - c["alphabet_size"], c["case"]
        sym = _symbols(c["merges"], c["alphabet"])
        for i, (left, right, count) in enumerate(c["merges"]):
            assert 0 <= left < A + i and 0 <= right < A + i, (c["case"], i)
            if i >= len(seeds):
                token = sym[A + i]
                assert _words(token) <= 4 and not any(token[k:k + 2] == (58, 32) for k in range(len(token))), \
                    (c["case"], i)
                assert count >= max(1, c["min_frequency"]), (c["case"], i)
        # cases where the constraints change the result: a later merge's count exceeds an earlier one's
        # only when a better pair was blocked... count how many cases make multi-word tokens
        bound += any(_words(sym[A + i]) >= 2 for i in range(len(seeds), len(c["merges"])))
    assert bound >= 5, "the cases should make multi-word tokens"


def _case_params():
    params = []
    for c in _cases():
        for b in BACKENDS:
            if b == "pywasm" and not c["case"].startswith("colon_lines/extend-bytes/superbpe/base40-seeds40/"
                                                          "min-count-1/"):
                continue
            params.append(pytest.param(c, b, id="%s-%s" % (c["case"], b)))
    return params


@pytest.mark.filterwarnings("ignore::supertok.TrainWarning")  # small corpora run out of pairs: expected
@pytest.mark.parametrize("case,backend", _case_params(), indirect=["backend"])
def test_extend_case(case, backend):
    docs = _corpora()[case["corpus"]]
    enc = supertok.train(iter(docs), vocab_size=case["vocab_size"], extend=_base(case),
                         seed_merges=case["seed_merges"], pattern=case["pattern"], min_count=case["min_count"],
                         min_frequency=case["min_frequency"], progress=False)
    got = [list(m) for m in enc.merges]
    want = case["merges"]
    assert got == want, "%s on %s: first difference at %s" % (
        case["case"], backend, next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want))))


CONSTRAINED_TEXT = (["Name: Alice Smith\n", "at the end of the day we go home\n", "one two three four five six\n"] * 30
                    + ["Note: at the end of the day\n"] * 10)


def _small_base(alphabet="bytes"):
    return supertok.train(iter(CONSTRAINED_TEXT), vocab_size=(243 if alphabet == "bytes" else 478) + 30,
                          alphabet=alphabet, progress=False)


def test_model_file_records_the_extension(api_backend, tmp_path):
    base = _small_base()
    with pytest.warns(supertok.TrainWarning, match="constraints"):  # the cap and the block end it early here
        enc = supertok.train(iter(CONSTRAINED_TEXT), vocab_size=243 + 120, extend=base, progress=False)
    text = enc._model_data.decode()
    assert ("training algorithm=extend mode=paper vocab_size=363 min_frequency=2 base=%s seed_merges=30 max_words=4 "
            "colon_space=yes min_count=5 ngram_split=no\n" % base.name) in text
    assert "\npattern superbpe\n" in text
    path = tmp_path / "ext.stmodel"
    enc.save(path)
    again = supertok.load_model(path)
    assert again.merges == enc.merges
    assert again.encode("at the end of the day we go home\n") == enc.encode("at the end of the day we go home\n")
    with pytest.warns(supertok.TrainWarning) as caught:
        supertok.train(iter(CONSTRAINED_TEXT), vocab_size=243 + 400, extend=base, min_count=1, progress=False)
    assert [w.message.reason for w in caught] == ["constraints"]
    sym = _symbols(enc.merges, "bytes")
    longest = max(_words(sym[256 + i]) for i in range(30, len(enc.merges)))
    assert longest == 4, "the four-word cap binds on this text"
    ids = enc.encode("at the end of the day we go home\n")
    assert enc.decode(ids) == "at the end of the day we go home\n"
    assert all(_words(enc.decode_single_token_bytes(i)) <= 4 for i in ids)
    assert not any(b": " in enc.decode_single_token_bytes(i) for i in enc.encode("Name: Alice Smith\n"))


def test_defaults_and_sweep(api_backend):
    base = _small_base("ube")
    one = [supertok.train(iter(CONSTRAINED_TEXT), vocab_size=v, extend=base, progress=False) for v in (478 + 50,
                                                                                                     478 + 65)]
    sweep = supertok.train(iter(CONSTRAINED_TEXT), vocab_size=[478 + 65, 478 + 50], extend=base, progress=False)
    assert [e._model_data for e in sweep] == [one[1]._model_data, one[0]._model_data]
    assert one[0].alphabet == "ube"
    # min_count=1 keeps the chunks seen once, so more pairs count
    loose = supertok.train(iter(CONSTRAINED_TEXT + ["unique words here\n"]), vocab_size=478 + 50, extend=base,
                           min_count=1, progress=False)
    assert "min_count=1 " in loose._model_data.decode()


def test_counts_source(api_backend):
    base = _small_base()
    counts = supertok.count_pretokens(iter(CONSTRAINED_TEXT), pattern="superbpe", min_count=5)
    from_counts = supertok.train(counts, vocab_size=243 + 60, extend=base, progress=False)
    from_text = supertok.train(iter(CONSTRAINED_TEXT), vocab_size=243 + 60, extend=base, progress=False)
    assert from_counts.merges == from_text.merges
    assert "min_count=1 " in from_counts._model_data.decode()  # as given: pruned where counted
    with pytest.raises(ValueError, match="pattern"):
        supertok.train(counts, vocab_size=243 + 60, extend=base, pattern="o200k", progress=False)


def test_refusals(api_backend, tmp_path):
    base = _small_base()
    docs = CONSTRAINED_TEXT
    with pytest.raises(ValueError, match="seed_merges"):
        supertok.train(iter(docs), vocab_size=400, extend=base, seed_merges=31, progress=False)
    with pytest.raises(ValueError, match="seed_merges"):
        supertok.train(iter(docs), vocab_size=400, seed_merges=3, progress=False)
    with pytest.raises(ValueError, match="vocab_size"):
        supertok.train(iter(docs), vocab_size=243 + 20, extend=base, progress=False)
    with pytest.raises(ValueError, match="alphabet"):
        supertok.train(iter(docs), vocab_size=800, extend=base, alphabet="ube", progress=False)
    with pytest.raises(ValueError, match="mode"):
        supertok.train(iter(docs), vocab_size=400, extend=base, mode="hf", progress=False)
    with pytest.raises(ValueError, match="algorithm"):
        supertok.train(iter(docs), vocab_size=400, extend=base, algorithm="boundless", progress=False)
    with pytest.raises(ValueError, match="ranks, not merges"):
        supertok.train(iter(docs), vocab_size=400, extend=supertok.get_encoding("r50k_base"), progress=False)
    with pytest.raises(TypeError, match="extend"):
        supertok.train(iter(docs), vocab_size=400, extend=42, progress=False)
    boundless = supertok.train(iter(docs), vocab_size=243 + 40, algorithm="boundless", progress=False)
    if boundless.supermerges:
        with pytest.raises(ValueError, match="supermerges"):
            supertok.train(iter(docs), vocab_size=400, extend=boundless, progress=False)
    # a model file path works as well as an Encoding
    path = tmp_path / "base.stmodel"
    base.save(path)
    assert supertok.train(iter(docs), vocab_size=300, extend=str(path), progress=False).merges[:30] == \
        [(left, right, count) for (left, right, count) in
         supertok.train(iter(docs), vocab_size=300, extend=base, progress=False).merges[:30]]


def test_command_line(api_backend, tmp_path):
    """python -m supertok train --extend: the model supertok.train(extend=...) gives; --seed-merges,
    --min-count; errors name the option."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(CONSTRAINED_TEXT), encoding="utf-8")
    base_path = tmp_path / "base.stmodel"
    _small_base().save(base_path)
    out = tmp_path / "ext.stmodel"
    env = dict(os.environ, SUPERTOK_BACKEND=api_backend)  # the supertok these tests import (installed or in-tree)
    env.pop("SUPERTOK_TRACEBACK", None)
    r = subprocess.run([sys.executable, "-m", "supertok", "train", str(corpus), "--extend", str(base_path),
                        "--seed-merges", "20", "--min-count", "2", "--vocab-size", "300", "-o", str(out),
                        "--progress", "off"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    from supertok._train import _train
    ref = _train(str(corpus), vocab_size=300, extend=str(base_path), seed_merges=20, min_count=2, name="ext",
                 progress=False)
    assert out.read_bytes() == ref._model_data
    for args, msg in ((["--extend", str(base_path), "--seed-merges", "99"], "--seed-merges: "),
                      (["--extend", str(base_path), "--alphabet", "ube"], "--alphabet: "),
                      (["--extend", str(tmp_path / "missing.stmodel")], "missing.stmodel")):
        r = subprocess.run([sys.executable, "-m", "supertok", "train", str(corpus), "--vocab-size", "300", "-o",
                            str(tmp_path / "x.stmodel")] + args, capture_output=True, text=True, env=env)
        assert r.returncode != 0 and msg in r.stderr, (args, r.stderr)
        assert not (tmp_path / "x.stmodel").exists()


def test_numba_reads_the_extension_line():
    """The Numba port's model reader and writer (core_numba/formats/model.py, beside model.c) know
    algorithm=extend: an extended model written by the core is canonical to it, and a damaged
    training line is refused with the core's message."""
    from supertok.core_numba.formats import model as M
    prev = supertok._set_backend(get_backend("native" if "native" in BACKENDS else "wasmtime"))
    try:
        base = _small_base()
        enc = supertok.train(iter(CONSTRAINED_TEXT), vocab_size=243 + 60, extend=base, progress=False)
        data = enc._model_data
        damaged = data.replace(b" max_words=4 colon_space=yes", b" colon_space=yes")
        with pytest.raises(supertok.SupertokError) as core_error:
            supertok.load_model(damaged)
    finally:
        supertok._set_backend(prev)
    from supertok.backends.numba_runtime import Cell
    from supertok.core_numba.base.common import Err
    out, err = Cell(), Err()
    assert M.st_model_parse(data, len(data), None, out, err) == 0
    assert M.model_text(out.v) == data
    assert out.v.tr_algorithm == M.ST_ALGORITHM_EXTEND and out.v.tr_seed_merges == 30 and out.v.tr_max_words == 4
    assert M.st_model_parse(damaged, len(damaged), None, out, err) != 0
    assert err.message.decode() in str(core_error.value), (err.message, str(core_error.value))

