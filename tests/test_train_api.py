"""supertok.train's Python surface (issue 10, item 4), on every backend.

Expected merges come from the naive reference trainer (vectors/train_reference.py) and expected
ids from the reference rules encoder of vectors/generate_models.py, never from supertok:

- every kind of source gives the same merges as its documents: an iterable of str (an
  iterator, a generator; a list or tuple is a list of paths), a .txt path (one document per line, its '\\n' kept, '\\r\\n' included), a
  .jsonl path (the `text` field of each line), the .gz, .xz and .bz2 of both, a list of paths
  (their documents in order);
- vocab_size counts the alphabet that can occur, the merges and the special tokens (paper
  mode, vocab_size=2048, no specials: 1,805 merges), special tokens take the ids after the
  merges, and their text is counted as ordinary text;
- the returned Encoding encodes at once, as the rules model its merges make;
- the options are recorded in the saved model, so loading it gives the same pre-tokenizer;
- clear errors: hf with ube, vocab_size below the alphabet plus the specials, unknown mode,
  alphabet or pattern, a source that is neither text nor a path.

pywasm (an interpreter) takes about 90 s for one training, however small, so these tests run
on native and wasmtime; tests/test_train_vectors.py trains a few vector cases on pywasm.
"""
import bz2
import gzip
import json
import lzma

import pytest
import supertok
from conftest import ROOT, load_vectors

import train_reference
import vendor_udhr
from generate_models import Reference

CORPORA = None


def _corpus(name):
    global CORPORA
    if CORPORA is None:
        import os
        CORPORA = {r["corpus"]: r["documents"]
                   for r in load_vectors(os.path.join(ROOT, "vectors", "train", "corpora.jsonl"))[1]}
    return CORPORA[name]


def _train():
    train = getattr(supertok, "train", None)
    if train is None:
        pytest.fail("supertok.train does not exist (yet): issue 10 item 4, the Python training "
                    "API, is what these tests test")
    return train


def _merges(enc):
    return [tuple(m) for m in enc.merges]


_ref_cache = {}


def _ref(docs, **opts):
    """The reference's merges (cached: every backend asks for the same ones)."""
    key = (tuple(docs), tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                                     for k, v in opts.items())))
    if key not in _ref_cache:
        _ref_cache[key] = [tuple(m) for m in train_reference.train(list(docs), **opts)]
    return _ref_cache[key]


def _skip_pywasm(backend):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: one training takes it about 90 s, so the training "
                    "API tests run on native and wasmtime")


# A small multi-line text with CRLF, an empty line, a last line without '\n', several scripts.
TEXT = ("the cat sat on the mat\n" "the hat\r\n" "\n" "\u4e2d\u6587\u4e2d\u6587 \u0444\u0444\u0444\n"
        "na\u00efve the cat\n" "\U0001f642\U0001f642 end")


def _lines(text):
    """The documents of a .txt file with this text: each line with its '\\n'."""
    out = text.split("\n")
    return [d + "\n" for d in out[:-1]] + ([out[-1]] if out[-1] else [])


def _write(path, data, compress):
    opener = {None: open, "gz": gzip.open, "xz": lzma.open, "bz2": bz2.open}[compress]
    with opener(path, "wb") as f:
        f.write(data.encode("utf-8"))


OPTS = dict(vocab_size=243 + 25, mode="paper", alphabet="bytes")


def test_iterable_sources(backend):
    _skip_pywasm(backend)
    docs = _lines(TEXT)
    want = _ref(docs, **OPTS)
    assert len(want) > 10
    train = _train()
    assert _merges(train(iter(docs), **OPTS)) == want
    assert _merges(train((d for d in docs), **OPTS)) == want
    assert _merges(train(map(str, docs), **OPTS)) == want


@pytest.mark.parametrize("compress", [None, "gz", "xz", "bz2"])
def test_txt_and_jsonl_files(compress, tmp_path, backend):
    _skip_pywasm(backend)
    docs = _lines(TEXT)
    want = _ref(docs, **OPTS)
    suffix = "" if compress is None else "." + compress
    txt = tmp_path / ("corpus.txt" + suffix)
    _write(txt, TEXT, compress)
    jsonl = tmp_path / ("corpus.jsonl" + suffix)
    _write(jsonl, "".join(json.dumps({"text": d, "id": k}) + "\n" for k, d in enumerate(docs)),
           compress)
    train = _train()
    assert _merges(train(str(txt), **OPTS)) == want, "%s: one document per line, '\\n' kept" % txt.name
    assert _merges(train(str(jsonl), **OPTS)) == want, "%s: the text field of each line" % jsonl.name


def test_list_of_paths(tmp_path, backend):
    _skip_pywasm(backend)
    a, b = tmp_path / "a.txt", tmp_path / "b.jsonl"
    _write(a, TEXT, None)
    extra = ["\u0444\u0444\u0444 the the the", "\u4e2d\u6587 cat"]
    _write(b, "".join(json.dumps({"text": d}) + "\n" for d in extra), None)
    want = _ref(_lines(TEXT) + extra, **OPTS)
    assert _merges(_train()([str(a), str(b)], **OPTS)) == want


@pytest.mark.parametrize("mode,alphabet", [("paper", "bytes"), ("hf", "bytes"), ("paper", "ube")])
def test_vocab_size_counts_alphabet_merges_and_specials(mode, alphabet, backend):
    _skip_pywasm(backend)
    alpha = len(train_reference.alphabet_symbols(mode, alphabet))  # 243, 256, 478
    # all the vendored UDHR text: far more pairs than the budget
    docs = [t for use in vendor_udhr.USES for _, _, t in vendor_udhr.excerpts(use)]
    train = _train()
    enc = train(iter(docs), vocab_size=2048, mode=mode, alphabet=alphabet)
    assert len(enc.merges) == 2048 - alpha  # 1,805 in paper mode over bytes
    specials = ("<|endoftext|>", "<|pad|>")
    enc2 = train(iter(docs), vocab_size=2048, mode=mode, alphabet=alphabet, special_tokens=specials)
    assert len(enc2.merges) == 2048 - alpha - 2
    # the specials' text is counted as ordinary text: the merges are a prefix of the others
    assert _merges(enc2) == _merges(enc)[:len(enc2.merges)]
    A = 256 if alphabet == "bytes" else 512
    for k, s in enumerate(specials):
        assert enc2.encode_single_token(s) == A + len(enc2.merges) + k


def test_specials_in_the_text_are_counted_as_text(backend):
    _skip_pywasm(backend)
    docs = _corpus("specials_in_text")
    want = _ref(docs, vocab_size=243 + 1 + 20, special_tokens=("<|endoftext|>",))
    enc = _train()(iter(docs), vocab_size=243 + 1 + 20, special_tokens=("<|endoftext|>",))
    assert _merges(enc) == want
    assert _merges(enc) == _ref(docs, vocab_size=243 + 20)


@pytest.mark.parametrize("alphabet", ["bytes", "ube"])
def test_the_encoding_encodes_as_its_rules(alphabet, backend):
    _skip_pywasm(backend)
    docs = _corpus("udhr_mixed")
    alpha = len(train_reference.alphabet_symbols("paper", alphabet))
    specials = ("<|endoftext|>",)
    enc = _train()(iter(docs), vocab_size=alpha + 1 + 60, alphabet=alphabet, pattern="o200k",
                   special_tokens=specials)
    merges = _merges(enc)
    assert merges == _ref(docs, vocab_size=alpha + 1 + 60, alphabet=alphabet,
                          special_tokens=specials)
    A = 256 if alphabet == "bytes" else 512
    ref = Reference({"alphabet": alphabet, "pattern": "o200k",
                     "merges": [[l, r] for l, r, _ in merges],
                     "special_tokens": {specials[0]: A + len(merges)}})
    texts = [d for d in docs if d.strip()][:20] + [TEXT, "<|endoftext|>" + TEXT + "<|endoftext|>"]
    for t in texts:
        want = ref.encode(t, allowed=specials)[0]
        assert enc.encode(t, allowed_special="all") == want, repr(t[:60])
        assert enc.decode(want) == t


def test_empty_corpus(backend):
    _skip_pywasm(backend)
    for docs in ([], [""], ["", ""]):
        enc = _train()(iter(docs), vocab_size=300)
        assert _merges(enc) == []
        assert enc.encode_ordinary("abc") == [97, 98, 99]


def test_options_are_recorded_in_the_model(tmp_path, backend):
    _skip_pywasm(backend)
    docs = _corpus("cross_script") + _corpus("ube_text")
    opts = dict(vocab_size=len(train_reference.alphabet_symbols("paper", "ube")) + 30, alphabet="ube", pattern="cl100k", script_aware=True,
                scripts=["Han", "Latin"])
    enc = _train()(iter(docs), **opts)
    assert _merges(enc) == _ref(docs, **opts)
    path = tmp_path / "m.stmodel"
    enc.save(str(path))
    lines = path.read_text(encoding="utf-8").split("\n")
    for want in ("alphabet ube", "pattern cl100k", "script-aware yes", "kind rules"):
        assert want in lines, "the saved model lacks the line %r" % want
    scripts = [ln for ln in lines if ln.startswith("scripts ")]
    assert scripts and set(scripts[0][len("scripts "):].split(",")) == {"Han", "Latin"}
    again = supertok.load_model(str(path))
    for t in docs + [TEXT]:
        assert again.encode_ordinary(t) == enc.encode_ordinary(t)


def test_min_frequency(backend):
    _skip_pywasm(backend)
    docs = _corpus("runs") + _corpus("one_document")
    opts = dict(vocab_size=243 + 400, min_frequency=4)
    want = _ref(docs, **opts)
    assert 0 < len(want) < 400 and all(c >= 4 for _, _, c in want)
    assert _merges(_train()(iter(docs), **opts)) == want


def test_errors(backend):
    _skip_pywasm(backend)  # some checks reach the core: about 90 s on pywasm
    train = _train()
    docs = ("some text",)  # train(iter(docs), ...) each time: an iterator is used up
    with pytest.raises(ValueError, match="hf"):
        train(iter(docs), vocab_size=600, mode="hf", alphabet="ube")
    with pytest.raises(ValueError, match="vocab_size"):
        train(iter(docs), vocab_size=242, mode="paper", alphabet="bytes")
    with pytest.raises(ValueError, match="vocab_size"):
        train(iter(docs), vocab_size=243, special_tokens=("<|endoftext|>",))
    with pytest.raises(ValueError, match="vocab_size"):
        train(iter(docs), vocab_size=255, mode="hf")
    with pytest.raises(ValueError, match="mode"):
        train(iter(docs), vocab_size=600, mode="superbpe")
    with pytest.raises(ValueError, match="alphabet"):
        train(iter(docs), vocab_size=600, alphabet="utf16")
    with pytest.raises(ValueError, match="pattern"):
        train(iter(docs), vocab_size=600, pattern="o300k")
    with pytest.raises((TypeError, ValueError)):
        train(12345, vocab_size=600)
    with pytest.raises((TypeError, ValueError)):
        train([b"bytes are not documents"], vocab_size=600)
    # vocab_size exactly the alphabet (+ specials) is no error: no merge
    assert _merges(train(iter(docs), vocab_size=243)) == []
    assert _merges(train(iter(docs), vocab_size=257, mode="hf", special_tokens=("<|x|>",))) == []
