"""Exports: a model of merge rules as a tiktoken rank file and as a HuggingFace
tokenizer.json, loaded back by the libraries themselves (tiktoken and tokenizers, the pinned
versions of the test extra), not by supertok:

- a model trained on the vendored UDHR lines, exported both ways: tiktoken (the rank file read by
  tiktoken.load.load_tiktoken_bpe) and tokenizers (Tokenizer.from_file) give our ids on every
  line, special tokens included, and the exporter's own check says so;
- the same on the shared corpora when they are present (a model trained on a mix of them; the first
  300,000 characters of every file, every file whole with SUPERTOK_FULL_DIFF=1): the
  tokenizer.json gives our ids everywhere; for tiktoken, whose rank semantics may differ from
  our rules (docs/design.md §7), the exporter reports exactly the texts where it differs;
- rank semantics: the rules `a b`, `c d`, `ab c`, `abc d` give [ab, cd] for "abcd", ranks [abcd]:
  the tiktoken export is reported (ExportWarning, result.ok False, the text named), the HF one
  agrees;
- tokens with the same bytes (two merges making "abc") are reported and left out;
- refusals with the reason: UBE, supermerges, script-aware, a tiktoken vocabulary to hf, a bad
  format; and the command line `python -m supertok export`.
"""
import base64
import hashlib
import json
import lzma
import os
import subprocess
import sys
import warnings

import pytest
import supertok
from conftest import BACKENDS, CORPORA, ROOT, corpus_path
from vectors_util import load as load_vectors
from test_train_api import superword_docs

import tiktoken  # the test extra's pinned oracles: missing, they fail the run rather than skip it
import tiktoken.load
import tokenizers

FULL = bool(os.environ.get("SUPERTOK_FULL_DIFF"))
CORPUS_CHARS = 300_000  # per corpus file unless SUPERTOK_FULL_DIFF=1 (every file whole: about 12 min)
CORPUS_FILES = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else [])
                      if f.endswith(".txt.xz")) or ["en.txt.xz"]
PYWASM = "pywasm is an interpreter: training and exporting run on native and wasmtime"


def _skip_pywasm(backend):
    if backend == "pywasm":
        pytest.skip(PYWASM)


def udhr_lines():
    _, rows = load_vectors(os.path.join(ROOT, "vectors", "texts", "udhr.jsonl"))
    return [ln + "\n" for r in rows for ln in r["text"].split("\n") if ln.strip()]


_models = {}


def udhr_model(backend):
    if backend not in _models:
        _models[backend] = supertok.train(iter(udhr_lines()), vocab_size=3000, special_tokens=["<|endoftext|>"],
                                          progress=False)
    return _models[backend]


def tiktoken_from(path, enc, result):
    """A tiktoken.Encoding from the exported rank file, read by tiktoken's own loader (its hash given,
    so tiktoken's cache of files by path cannot hand back an older file)."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    ranks = tiktoken.load.load_tiktoken_bpe(str(path), expected_hash=digest)
    return tiktoken.Encoding("export-test", pat_str=result.pat_str, mergeable_ranks=ranks,
                             special_tokens=result.special_tokens)


def export(enc, path, fmt, sample):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = enc.export(str(path), fmt, sample=sample)
    return r, [x for x in w if issubclass(x.category, supertok.ExportWarning)]


@pytest.mark.parametrize("fmt", ["tiktoken", "hf"])
def test_udhr_model_exports_give_our_ids(fmt, tmp_path, backend):
    _skip_pywasm(backend)
    enc = udhr_model(backend)
    assert len(enc.merges) == 3000 - 243 - 1 and enc.supermerges == []
    lines = udhr_lines()
    texts = lines + ["<|endoftext|>" + lines[0] + "<|endoftext|>"]
    out = tmp_path / ("tok.tiktoken" if fmt == "tiktoken" else "tokenizer.json")
    result, warned = export(enc, out, fmt, texts)
    if fmt == "tiktoken":
        theirs = tiktoken_from(out, enc, result)
        got = [theirs.encode(t, allowed_special="all") for t in texts]
        assert theirs.n_vocab == enc.n_vocab
    else:
        tok = tokenizers.Tokenizer.from_file(str(out))
        got = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
        assert tok.decode(got[0]) == texts[0]
    want = [enc.encode(t, allowed_special="all") for t in texts]
    bad = [t for t, a, b in zip(texts, want, got) if a != b]
    assert not bad, "%d of %d texts differ, first %r" % (len(bad), len(texts), bad[0][:80])
    assert result.ok and result.checked and result.texts == len(texts) and result.mismatches == []
    assert result.duplicates == [] and not warned
    assert str(out) in result.summary() and "all %d sample texts" % len(texts) in result.summary()


def test_built_in_sample(tmp_path, backend):
    _skip_pywasm(backend)
    result, _ = export(udhr_model(backend), tmp_path / "t.json", "hf", None)
    assert result.checked and result.texts >= 20 and result.ok


# ---- the shared corpora ------------------------------------------------------------------------

def _head_lines(path, chars):
    with lzma.open(path, "rt", encoding="utf-8", newline="") as f:
        out, n = [], 0
        for line in f:
            out.append(line)
            n += len(line)
            if chars is not None and n >= chars:
                break
    return out


def _blocks(lines, size=20_000):
    block, n = [], 0
    for ln in lines:
        block.append(ln)
        n += len(ln)
        if n >= size:
            yield "".join(block)
            block, n = [], 0
    if block:
        yield "".join(block)


_corpus_models = {}


def corpus_exports(backend, tmp_dir):
    """A model trained on the first 200 kB of every corpus file (paper, bytes, o200k, 8,192 ids),
    exported both ways once per backend."""
    if backend not in _corpus_models:
        docs = []
        for name in CORPUS_FILES:
            docs += _head_lines(corpus_path(name), 200_000)
        enc = supertok.train(iter(docs), vocab_size=8192, special_tokens=["<|endoftext|>"], progress=False)
        paths = {"tiktoken": os.path.join(tmp_dir, "%s.tiktoken" % backend),
                 "hf": os.path.join(tmp_dir, "%s.tokenizer.json" % backend)}
        for fmt, p in paths.items():
            enc.export(p, fmt, check=False)
        _corpus_models[backend] = (enc, paths)
    return _corpus_models[backend]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("exports"))


@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_corpus_hf_gives_our_ids(name, backend, export_dir):
    _skip_pywasm(backend)
    path = corpus_path(name)
    enc, paths = corpus_exports(backend, export_dir)
    tok = tokenizers.Tokenizer.from_file(paths["hf"])
    for k, block in enumerate(_blocks(_head_lines(path, None if FULL else CORPUS_CHARS))):
        want = enc.encode_ordinary(block)
        got = tok.encode(block, add_special_tokens=False).ids
        if got != want:
            i = next((j for j, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
            raise AssertionError("%s block %d: tokenizers differs from token %d: ours %r, theirs %r (text %r)" % (
                name, k, i, want[i:i + 5], got[i:i + 5], enc.decode(want[max(0, i - 3):i + 5])))


@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_corpus_tiktoken_differences_are_reported(name, backend, export_dir):
    """tiktoken merges by rank: where its ids differ from ours, the exporter's check names exactly
    those texts (and no other)."""
    _skip_pywasm(backend)
    path = corpus_path(name)
    enc, paths = corpus_exports(backend, export_dir)
    blocks = list(_blocks(_head_lines(path, None if FULL else CORPUS_CHARS)))
    from supertok._export import ExportResult, _check
    result = ExportResult("tiktoken", paths["tiktoken"], enc._pat_str, dict(enc._special_tokens))
    _check(enc, "tiktoken", paths["tiktoken"], blocks, result)
    theirs = tiktoken_from(paths["tiktoken"], enc, result)
    differ = [b for b in blocks if theirs.encode_ordinary(b) != enc.encode_ordinary(b)]
    assert result.checked and result.texts == len(blocks)
    assert [m.text for m in result.mismatches] == differ
    for m in result.mismatches:
        assert m.ours == enc.encode_ordinary(m.text) and m.theirs == theirs.encode_ordinary(m.text)


# ---- rank semantics, duplicates, refusals ----------------------------------------------------------

SMALL = os.path.join(ROOT, "vectors", "models", "bytes_small.stmodel")


def test_rank_semantics_difference_is_reported(tmp_path, backend):
    _skip_pywasm(backend)
    enc = supertok.load_model(SMALL)  # rules a b, c d, ab c, abc d: ids 256-259
    assert enc.encode_ordinary("abcd") == [256, 257]
    texts = ["abcd", "the cat", "x abcd"]
    result, warned = export(enc, tmp_path / "small.tiktoken", "tiktoken", texts)
    theirs = tiktoken_from(tmp_path / "small.tiktoken", enc, result)
    assert theirs.encode_ordinary("abcd") == [259]  # tiktoken: the whole piece is a token
    assert not result.ok and result.checked and result.texts == 3
    assert [m.text for m in result.mismatches] == ["abcd", "x abcd"]
    assert result.mismatches[0].ours == [256, 257] and result.mismatches[0].theirs == [259]
    assert len(warned) == 1 and "2 of 3 sample texts" in str(warned[0].message) and "'abcd'" in str(warned[0].message)
    # HuggingFace's BPE merges by rule, as we do
    result, warned = export(enc, tmp_path / "small.json", "hf", texts)
    assert result.ok and not warned
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "small.json"))
    assert tok.encode("abcd", add_special_tokens=False).ids == [256, 257]
    assert tok.encode("<|endoftext|>", add_special_tokens=False).ids == [enc.eot_token]


def test_duplicate_token_bytes_are_reported(tmp_path, backend):
    _skip_pywasm(backend)
    a, b, c = ord("a"), ord("b"), ord("c")
    enc = supertok.load_model({"format": "supertok-merges", "version": 1, "name": "dups", "alphabet": "bytes",
                               "pattern": "o200k", "merges": [[a, b], [b, c], [256, c], [a, 257]],
                               "special_tokens": {}})
    assert enc.decode_single_token_bytes(258) == enc.decode_single_token_bytes(259) == b"abc"
    for fmt in ("tiktoken", "hf"):
        result, warned = export(enc, tmp_path / ("d." + fmt), fmt, ["abc", "xbc"])
        assert result.duplicates == [(259, 258)]
        assert result.ok and not warned  # neither text needs id 259
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "d.tiktoken"),
                                            expected_hash=hashlib.sha256((tmp_path / "d.tiktoken").read_bytes())
                                            .hexdigest())
    assert ranks[b"abc"] == 258 and 259 not in ranks.values() and len(ranks) == 259
    vocab = json.loads((tmp_path / "d.hf").read_text(encoding="utf-8"))["model"]["vocab"]
    assert vocab["abc"] == 258 and 259 not in vocab.values()


def test_refusals(tmp_path, backend):
    _skip_pywasm(backend)
    ube = supertok.load_model(os.path.join(ROOT, "vectors", "models", "ube_small.stmodel"))
    with pytest.raises(supertok.ExportError, match="UBE"):
        ube.export(str(tmp_path / "u"), "tiktoken")
    aware = supertok.train(iter(udhr_lines()[:50]), vocab_size=300, script_aware=True, progress=False)
    with pytest.raises(supertok.ExportError, match="script-aware"):
        aware.export(str(tmp_path / "s"), "hf")
    with pytest.raises(supertok.ExportError, match="ranks, no merge rules"):
        supertok.get_encoding("gpt2").export(str(tmp_path / "g"), "hf")
    with pytest.raises(supertok.ExportError, match="format must be one of"):
        udhr_model(backend).export(str(tmp_path / "x"), "sentencepiece")
    assert isinstance(supertok.ExportError("x"), ValueError)
    assert not os.listdir(tmp_path)  # nothing written


def test_superword_model_is_refused(tmp_path, backend):
    _skip_pywasm(backend)
    enc = supertok.train(iter(superword_docs()), vocab_size=600, algorithm="boundless", progress=False)
    assert enc.supermerges
    for fmt in ("tiktoken", "hf"):
        with pytest.raises(supertok.ExportError, match="supermerges"):
            enc.export(str(tmp_path / fmt), fmt)


def test_tiktoken_vocabulary_to_tiktoken(tmp_path, backend):
    """A shipped tiktoken encoding goes back out as its own rank file, byte for byte."""
    _skip_pywasm(backend)
    enc = supertok.get_encoding("r50k_base")
    result, warned = export(enc, tmp_path / "r50k.tiktoken", "tiktoken", ["hello world, it's 2024"])
    assert result.ok and not warned
    with open(os.path.join(ROOT, "py", "supertok", "vocab", "r50k_base.tiktoken"), "rb") as f:
        shipped = f.read()
    assert (tmp_path / "r50k.tiktoken").read_bytes() == shipped


# ---- the command line --------------------------------------------------------------------------

def run(backend, *args):
    e = dict(os.environ, SUPERTOK_BACKEND=backend)
    e.pop("SUPERTOK_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "supertok", "export"] + list(args), capture_output=True, env=e,
                          timeout=600)


@pytest.fixture
def fast():
    fast = [b for b in BACKENDS if b not in ("pywasm", "numba")]  # the CLI export trains first
    if not fast:
        pytest.skip(PYWASM)
    return fast[0]


def test_cli_export(tmp_path, fast):
    sample = tmp_path / "sample.txt"
    sample.write_text("abcd\nthe cat\n", encoding="utf-8")
    out = tmp_path / "tokenizer.json"
    r = run(fast, SMALL, "--format", "hf", "-o", str(out), "--sample", str(sample))
    err = r.stderr.decode()
    assert r.returncode == 0 and r.stdout == b"", err
    assert err == "supertok export: wrote %s (hf format); tokenizers %s gives our ids on all 2 sample texts\n" % (
        out, tokenizers.__version__), err
    assert tokenizers.Tokenizer.from_file(str(out)).encode("abcd").ids == [256, 257]
    # tiktoken: written, the difference listed, exit status 3
    out = tmp_path / "small.tiktoken"
    r = run(fast, SMALL, "--format", "tiktoken", "-o", str(out), "--sample", str(sample))
    err = r.stderr.decode()
    assert r.returncode == 3, err
    assert "gives other ids than ours on 1 of 2 sample texts" in err and "'abcd\\n'" in err, err
    assert "load_tiktoken_bpe(%r)" % str(out) in err and "Traceback" not in err
    lines = out.read_bytes().split(b"\n")
    assert lines[256] == base64.b64encode(b"ab") + b" 256"
    # --no-check: written, exit 0
    r = run(fast, SMALL, "--format", "tiktoken", "-o", str(out), "--no-check")
    assert r.returncode == 0 and "not checked" in r.stderr.decode()


def test_cli_export_errors(tmp_path, fast):
    ube = os.path.join(ROOT, "vectors", "models", "ube_small.stmodel")
    for args, needles in [((ube, "--format", "hf", "-o", str(tmp_path / "x")), ("UBE",)),
                          ((SMALL, "--format", "spm", "-o", str(tmp_path / "x")), ("--format", "invalid choice")),
                          ((SMALL, "--format", "hf"), ("-o",)),
                          ((str(tmp_path / "nope.stmodel"), "--format", "hf", "-o", str(tmp_path / "x")),
                           ("nope.stmodel", "cannot read")),
                          ((SMALL, "--format", "hf", "-o", str(tmp_path / "no" / "x")), ("does not exist",))]:
        r = run(fast, *args)
        err = r.stderr.decode()
        assert r.returncode == 2, (args, err)
        assert err.startswith("supertok: ") and err.count("\n") == 1 and "Traceback" not in err, err
        for n in needles:
            assert n in err, (n, err)
    assert not os.path.exists(tmp_path / "x")


# ---- the files as written ------------------------------------------------------------------------

def test_tokenizer_json_is_what_python_json_writes(tmp_path, backend):
    """The core writes tokenizer.json as Python's json.dumps(obj, ensure_ascii=False, indent=1) + "\\n"
    writes it (parsed and dumped again by the json module, the bytes are the same), with the model's
    tokens as GPT-2 byte-level strings (bytes_to_unicode), its rules, its pattern and its specials,
    whose texts hold every character JSON escapes."""
    _skip_pywasm(backend)
    from test_hardening_hfspecial import _gpt2_byte_chars
    chars = _gpt2_byte_chars()
    tricky = ["<|endoftext|>", 'q"uote', "back\\slash", "tab\there", "nl\nx", "\x00\x1f\x7f", "\b\f\r", "é中😀",
              "\u2028", " lead"]
    for enc in (supertok.train(iter(udhr_lines()[:200]), vocab_size=400, special_tokens=tricky, progress=False),
                supertok.load_model(SMALL)):
        out = tmp_path / "t.json"
        enc.export(str(out), "hf", check=False)
        data = out.read_bytes()
        obj = json.loads(data.decode("utf-8"))
        assert (json.dumps(obj, ensure_ascii=False, indent=1) + "\n").encode("utf-8") == data
        s = lambda i: "".join(chars[b] for b in enc.decode_single_token_bytes(i))  # noqa: E731
        ordinary = [i for i in range(enc.n_vocab) if i not in enc._special_tokens.values() or i in enc._shared_special_ids]
        assert obj["model"]["vocab"] == {s(i): i for i in ordinary}
        assert obj["model"]["merges"] == [[s(left), s(right)] for left, right, _ in enc.merges]
        assert obj["pre_tokenizer"]["pretokenizers"][0]["pattern"] == {"Regex": enc._pat_str}
        assert [(t["content"], t["id"]) for t in obj["added_tokens"]] == sorted(enc._special_tokens.items(),
                                                                                key=lambda kv: kv[1])


@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_shipped_rank_files_written_back(name, backend):
    """Every shipped tiktoken vocabulary (tiktoken's own files) is written back byte for byte."""
    _skip_pywasm(backend)
    enc = supertok.get_encoding(name)
    with open(os.path.join(ROOT, "py", "supertok", "vocab", name + ".tiktoken"), "rb") as f:
        assert supertok._get().encoding_export(enc._handle, 1) == f.read()


def test_ranks_model_file_is_refused_to_hf(tmp_path, backend):
    """A ranks model file is a tiktoken vocabulary too: no merge rules for a HuggingFace BPE model."""
    toks = [bytes([b]) for b in range(256)] + [b"ab"]
    ranks = (b"supertok-model 1\nname tiny\nkind ranks\nalphabet bytes\npattern o200k\nscript-aware no\n"
             b"tokens %d\n" % len(toks) + b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(toks))
             + b"specials 0\nend\n")
    enc = supertok.load_model(ranks)
    with pytest.raises(supertok.ExportError, match="ranks, no merge rules"):
        enc.export(str(tmp_path / "r.json"), "hf")
    assert supertok._get().encoding_export(enc._handle, 1) == ranks.split(b"tokens 257\n")[1].split(b"specials")[0]
