"""supertok.train's Python surface, on every backend.

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
import os

import pytest
import supertok
from conftest import ROOT
from vectors_util import load as load_vectors

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
        pytest.fail("supertok.train does not exist: the Python training API is what these tests test")
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


def test_argument_errors_name_the_argument(backend):
    """An error about one argument names it in `argument` (the command line says its option), and
    its message in Python's terms."""
    train = _train()
    cases = [(dict(vocab_size=300, supermerges=3), "supermerges", "supermerges=3 applies only to algorithm='superbpe'"),
             (dict(vocab_size=300, algorithm="boundless", mode="hf"), "algorithm",
              "algorithm='boundless' needs mode='paper', not mode='hf'"),
             (dict(vocab_size=300, min_frequency=-1), "min_frequency", "min_frequency must be at least 0"),
             (dict(vocab_size=300, special_tokens=["a", "a"]), "special_tokens", "special_tokens[1] 'a' is given twice"),
             (dict(vocab_size=300, script_aware=True, scripts=["Klingon"]), "scripts", "unknown script name 'Klingon'")]
    for kw, argument, message in cases:
        with pytest.raises(ValueError) as info:
            train(iter(["some text"]), **kw)
        assert info.value.argument == argument and str(info.value).startswith(message), (kw, str(info.value))


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


# ---- superwords: the Python surface ------------------------------------------------------------------
# The merges and supermerges themselves are checked against the reference trainer by
# tests/test_train_vectors.py; here: arguments and their errors, progress, threads, sources read
# twice (a generator spooled), cancellation, and what the Encoding says about its supermerges.

PHRASES = ["of the", "in order to", "as well as", "at the same time", "on the other hand", "New York",
           "such as", "for example", "in the end", "by the way", "United Nations", "human rights"]
WORDS = ("people town river system report market school water letter garden music doctor window "
         "student country answer morning family winter story village engine theory animal").split()


def superword_docs(n=600, seed=11):
    """Documents with recurring multi-word phrases (so that supermerge candidates exist at a small
    vocabulary), made deterministically: sentences of words and phrases, some lines in other scripts."""
    import random
    rnd = random.Random(seed)
    docs = []
    for k in range(n):
        parts = []
        for _ in range(rnd.randint(4, 12)):
            parts.append(rnd.choice(PHRASES) if rnd.random() < 0.4 else rnd.choice(WORDS))
        line = " ".join(parts).capitalize() + rnd.choice([".", "!", "?", ", 2024."])
        if k % 7 == 0:
            line += " 人人生而自由 все люди"
        docs.append(line + "\n")
    return docs




SUPER = dict(vocab_size=800, special_tokens=("<|endoftext|>",))


def _strip_name(model):
    return b"\n".join(ln for ln in model.split(b"\n") if not ln.startswith(b"name "))


def _phases(records):
    out = []
    for r in records:
        if not out or out[-1] != r.phase:
            out.append(r.phase)
    return out


@pytest.mark.parametrize("algorithm,ngram_split", [("boundless", False), ("boundless", True),
                                                   ("superbpe", False), ("superbpe", True)])
def test_superword_progress_and_model(algorithm, ngram_split, backend):
    _skip_pywasm(backend)
    docs = superword_docs()
    records = []
    kw = dict(SUPER, algorithm=algorithm, ngram_split=ngram_split, progress=records.append)
    if algorithm == "superbpe":
        kw["supermerges"] = 40
    enc = _train()(iter(docs), **kw)
    want = ["count", "merge", "candidates"] + (["split"] if ngram_split else []) + ["supermerge"]
    assert _phases(records) == want
    for ph in want:  # each phase ends with one done record, its last
        mine = [r for r in records if r.phase == ph]
        assert [r.done for r in mine].count(True) == 1 and mine[-1].done, ph
    target = 800 - 243 - 1
    phase1 = _merges(_train()(iter(docs), **SUPER, progress=False))  # the same phase 1, as plain BPE
    made = len(phase1)  # this corpus runs out of pairs before the target
    merge_end = [r for r in records if r.phase == "merge"][-1]
    assert merge_end.target == target and merge_end.merges == made
    cand_end = [r for r in records if r.phase == "candidates"][-1]
    assert cand_end.documents == len(docs) and cand_end.bytes == sum(len(d.encode()) for d in docs)
    assert cand_end.candidates > 0
    last = records[-1]
    assert last.phase == "supermerge" and last.done
    r, s = len(enc.merges), len(enc.supermerges)
    assert last.supermerges == s and s > 0
    if algorithm == "boundless":
        # one step a vocabulary entry: every phase-1 merge replayed, or the target reached
        assert last.target == target and last.merges == r + s <= target and (r == made or r + s == target)
        assert _merges(enc) == phase1[:r]
    else:
        assert last.target == 40 and last.merges == s <= 40
        assert r == min(made, target - 40) and _merges(enc) == phase1[:r]
    # the model: ids, bytes and the training line
    A = 256
    assert enc.n_vocab == A + r + s + 1 and enc.encode_single_token("<|endoftext|>") == A + r + s
    import supertok as st
    for i, (left, right, count) in enumerate(enc.supermerges):
        assert left < A + r + i and right < A + r + i and count > 0
        tok = enc.decode_single_token_bytes(A + r + i)
        assert tok == enc.decode_single_token_bytes(left) + enc.decode_single_token_bytes(right)
        pieces = st.pretokenize(tok.decode("utf-8"), "o200k")
        assert len(pieces) >= 2 and all(any(ch.isalpha() for ch in p) for p in pieces), pieces
    head = [ln for ln in enc._model_data.decode().split("\n") if ln.startswith("training ")]
    assert head == ["training algorithm=%s mode=paper vocab_size=800 min_frequency=0%s ngram_split=%s%s" % (
        algorithm, " supermerges=40" if algorithm == "superbpe" else "", "yes" if ngram_split else "no",
        "" if not ngram_split else " c_min=%d max_len=30" % max(15, phase1[-1][2]))]


def test_superwords_threads_and_sources_give_one_model(tmp_path, backend):
    """Threads (1 or 3 counters per pass), a .txt path (read twice), a .jsonl.gz path and a
    generator (spooled during the first pass) give the same model, byte for byte but its name."""
    _skip_pywasm(backend)
    docs = superword_docs()
    txt = tmp_path / "udhr.txt"
    txt.write_text("".join(docs), encoding="utf-8")
    jsonl = tmp_path / "udhr.jsonl.gz"
    _write(jsonl, "".join(json.dumps({"text": d}) + "\n" for d in docs), "gz")
    opts = dict(SUPER, algorithm="boundless", ngram_split=True, progress=False)
    models = [_train()(str(txt), threads=1, **opts), _train()(str(txt), threads=3, **opts),
              _train()(str(jsonl), threads=2, **opts), _train()((d for d in docs), threads=2, **opts),
              _train()(iter(docs), threads=1, **opts)]
    first = _strip_name(models[0]._model_data)
    assert first.count(b"\nsupermerges ") == 1
    for m in models[1:]:
        assert _strip_name(m._model_data) == first


class _Spy:
    """Records the spool files supertok.train opens, to see them closed."""

    def __init__(self, monkeypatch):
        import tempfile
        from supertok import _train as t
        self.files = []
        real = tempfile.TemporaryFile

        def spy(*a, **kw):
            f = real(*a, **kw)
            self.files.append(f)
            return f
        monkeypatch.setattr(t.tempfile, "TemporaryFile", spy)


def test_generator_is_spooled_and_the_spool_goes(monkeypatch, backend):
    _skip_pywasm(backend)
    spy = _Spy(monkeypatch)
    docs = superword_docs()
    consumed = []

    def gen():
        for d in docs:
            consumed.append(d)
            yield d
    enc = _train()(gen(), **SUPER, algorithm="boundless", progress=False)
    assert consumed == docs  # read once
    assert len(spy.files) == 1 and spy.files[0].closed
    assert enc.supermerges
    # paths are read again, not spooled; bpe never spools
    _train()(iter(docs), **SUPER, progress=False)
    assert len(spy.files) == 1


def test_spool_goes_on_errors_and_ctrl_c(monkeypatch, backend):
    _skip_pywasm(backend)
    spy = _Spy(monkeypatch)
    docs = superword_docs()
    with pytest.raises(TypeError, match="document 5 is bytes"):
        _train()(iter(docs[:5] + [b"bytes"] + docs[5:]), **SUPER, algorithm="boundless", progress=False)
    assert len(spy.files) == 1 and spy.files[-1].closed
    for phase in ("count", "merge", "candidates", "split", "supermerge"):
        def stop(r, phase=phase):
            if r.phase == phase:
                raise KeyboardInterrupt
        with pytest.raises(KeyboardInterrupt):
            _train()(iter(docs), **SUPER, algorithm="superbpe", supermerges=20, ngram_split=True, progress=stop)
        assert spy.files[-1].closed, phase
    assert len(spy.files) == 6


def test_superword_errors(backend):
    _skip_pywasm(backend)
    train = _train()
    docs = ("some text",)
    cases = [
        (dict(algorithm="superbpe"), ValueError, "supermerges is required with algorithm='superbpe'"),
        (dict(algorithm="bpe", supermerges=3), ValueError, "supermerges=3 applies only to algorithm='superbpe'"),
        (dict(algorithm="boundless", supermerges=3), ValueError, "supermerges=3 applies only to"),
        (dict(ngram_split=True), ValueError, "ngram_split=True applies only to algorithm='boundless'"),
        (dict(algorithm="boundless", mode="hf"), ValueError, "needs mode='paper', not mode='hf'"),
        (dict(algorithm="superbpe", supermerges=58), ValueError, "supermerges=58 is more than the 57 merges"),
        (dict(algorithm="superbpe", supermerges=-1), ValueError, "supermerges must be at least 0"),
        (dict(algorithm="superbpe", supermerges=2.5), TypeError, "supermerges must be an int"),
        (dict(algorithm="super"), ValueError, "algorithm must be one of 'bpe', 'boundless', 'superbpe'"),
        (dict(algorithm="boundless", ngram_split="yes"), TypeError, "ngram_split must be True or False"),
    ]
    for kw, exc, msg in cases:
        with pytest.raises(exc) as info:
            train(iter(docs), vocab_size=300, progress=False, **kw)
        assert msg in str(info.value), (kw, str(info.value))
    # the limit itself is fine: SuperBPE(0, 57), all supermerges
    enc = train(iter(docs * 20), vocab_size=300, algorithm="superbpe", supermerges=57, progress=False)
    assert enc.merges == [] and len(enc.supermerges) <= 57


def test_merges_and_supermerges_come_from_the_core(tmp_path, backend):
    """Encoding.merges / .supermerges are read by the core (st_model_pairs), whatever the model's
    origin: trained, saved and loaded, pickled."""
    _skip_pywasm(backend)
    import pickle
    enc = _train()(iter(superword_docs()), **SUPER, algorithm="boundless", progress=False)
    path = tmp_path / "m.stmodel"
    enc.save(str(path))
    again = supertok.load_model(str(path))
    back = pickle.loads(pickle.dumps(enc))
    text = path.read_text(encoding="utf-8").split("\n")
    k = text.index("supermerges %d counts" % len(enc.supermerges))
    rows = [tuple(int(x) for x in ln.split()) for ln in text[k + 1:k + 1 + len(enc.supermerges)]]
    for e in (enc, again, back):
        assert e.supermerges == rows
        assert e.merges == enc.merges and len(e.merges) + len(e.supermerges) == 800 - 243 - 1
    assert supertok.load_model(os.path.join(ROOT, "vectors", "models", "bytes_small.stmodel")).merges[:2] == [
        (97, 98, None), (99, 100, None)]
    assert supertok.get_encoding("gpt2").supermerges == [] and supertok.get_encoding("gpt2").merges == []


def test_named_pipe_is_spooled(tmp_path, monkeypatch, backend):
    """A path that cannot be read twice (a named pipe, as `<(zcat ...)` gives) is spooled like a
    generator: the same model as from the regular file."""
    _skip_pywasm(backend)
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    import threading
    spy = _Spy(monkeypatch)
    docs = superword_docs()
    data = "".join(docs).encode("utf-8")
    txt = tmp_path / "c.txt"
    txt.write_bytes(data)
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as f:  # blocks until the trainer opens it
            f.write(data)
    w = threading.Thread(target=writer)
    w.start()
    try:
        enc = _train()([str(fifo)], **SUPER, algorithm="boundless", progress=False)
    finally:
        w.join(timeout=60)
    assert len(spy.files) == 1 and spy.files[0].closed
    want = _train()(str(txt), **SUPER, algorithm="boundless", progress=False)
    assert len(spy.files) == 1  # a regular file is read again, not spooled
    assert _strip_name(enc._model_data) == _strip_name(want._model_data) and enc.supermerges
