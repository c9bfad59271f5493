"""The Numba port's trainer against the C core on real text: the model file the numba backend
writes is byte for byte the native backend's, for each mode, alphabet, algorithm and
pre-tokenizer (BPE in paper and hf mode over bytes and UBE, BoundlessBPE, SuperBPE, the n-gram
split, script-aware pre-tokenizing, another pattern, special tokens, an extension of a model).

The text is a sample of the shared corpora (several scripts and code, ../shared/corpora or
SUPERTOK_CORPORA); without them the test skips with the corpus message. The golden vectors
(tests/test_train_vectors.py) hold both backends to the reference on the vendored UDHR excerpts;
this holds them to each other on larger, messier text, where ties, long words and rare
characters are many."""
import os
import warnings

import pytest

import supertok
from conftest import CORPORA, corpus_blocks, get_backend

LANGUAGES = ("en", "de", "ru", "zh", "ar", "hi", "ja", "code")
SAMPLE_CHARS = 150000  # each language's; about 2.5 MB of UTF-8 in all

CASES = {
    "paper-bytes-bpe": dict(vocab_size=2000),
    "paper-ube-bpe": dict(vocab_size=2600, alphabet="ube"),
    "hf-bytes-bpe-specials": dict(vocab_size=2000, mode="hf", special_tokens=["<|endoftext|>", "<|pad|>"]),
    "paper-bytes-cl100k": dict(vocab_size=1500, pattern="cl100k"),
    "paper-bytes-script-aware": dict(vocab_size=2000, script_aware=True),
    "paper-bytes-boundless": dict(vocab_size=4000, algorithm="boundless"),
    "paper-bytes-superbpe": dict(vocab_size=2000, algorithm="superbpe", supermerges=300),
    "paper-bytes-boundless-ngram-split": dict(vocab_size=4000, algorithm="boundless", ngram_split=True),
    "paper-ube-superbpe-ngram-split": dict(vocab_size=2600, alphabet="ube", algorithm="superbpe", supermerges=300,
                                           ngram_split=True),
}


@pytest.fixture(scope="module")
def documents():
    paths = [os.path.join(CORPORA, lang + ".txt.xz") for lang in LANGUAGES]
    if not all(os.path.exists(p) for p in paths):
        pytest.skip("corpus *.txt.xz is absent (../shared/corpora, or set SUPERTOK_CORPORA): the "
                    "corpus-based tests need it; the vectors cover the spec without it")
    docs = []
    for p in paths:
        for block in corpus_blocks(p, 4000, sample_chars=SAMPLE_CHARS):
            docs.extend(block.splitlines(keepends=True))
    return docs


def model_bytes(backend, docs, tmp_path, **kw):
    """The model file supertok.train writes on backend (its bytes), and the Encoding."""
    prev = supertok._set_backend(get_backend(backend))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", supertok.TrainWarning)  # a stop before vocab_size is compared too
            enc = supertok.train(iter(docs), threads=1, progress=False, **kw)
        path = os.path.join(tmp_path, backend + ".stmodel")
        enc.save(path)
        with open(path, "rb") as f:
            return f.read(), enc
    finally:
        supertok._set_backend(prev)


def _need_both():
    from supertok import backends
    missing = [b for b in ("native", "numba") if b not in backends.available()]
    if missing:
        pytest.skip("the numba port is compared with the native backend: %s missing here" % ", ".join(missing))


@pytest.mark.parametrize("case", sorted(CASES))
def test_numba_model_is_the_native_model(case, documents, tmp_path):
    _need_both()
    native, enc = model_bytes("native", documents, tmp_path, **CASES[case])
    port, _ = model_bytes("numba", documents, tmp_path, **CASES[case])
    assert len(enc.merges) > 500, "the sample trains too few merges to compare"
    if CASES[case].get("algorithm", "bpe") != "bpe":  # the n-gram split leaves fewer candidates
        assert len(enc.supermerges) > (5 if CASES[case].get("ngram_split") else 20), "too few supermerges to compare"
    assert port == native


def test_numba_extension_is_the_native_extension(documents, tmp_path):
    """An extension (extend=): the base model's merges replayed as seeds, then more; the same file."""
    _need_both()
    half = len(documents) // 2
    out = {}
    for backend in ("native", "numba"):
        _, base = model_bytes(backend, documents[:half], tmp_path, vocab_size=1200)
        out[backend], enc = model_bytes(backend, documents[half:], tmp_path, vocab_size=1800, extend=base)
    assert len(enc.merges) > 1000
    assert out["numba"] == out["native"]
