"""The trainer's golden vectors (vectors/train/) on every backend.

Each case of vectors/train/merges.jsonl is the call

    supertok.train(iter(documents), vocab_size=..., mode=..., alphabet=..., pattern=...,
                   script_aware=..., scripts=..., special_tokens=..., min_frequency=...)

(superword cases, algorithm "boundless" or "superbpe", add algorithm=..., ngram_split=... and,
for superbpe, supermerges=s) on its corpus (vectors/train/corpora.jsonl; an iterator of the
documents: a list is a list of paths); the Encoding's `merges` and `supermerges` must equal the
case's exactly, as lists of (left_id, right_id, count) tuples. The expected merges come from
the naive reference trainer (vectors/train_reference.py), and in hf mode from HuggingFace
tokenizers too (the generator checks every hf case against it).

Also through the API, on every backend: the invariant BoundlessBPE(r, s) == SuperBPE(r, s) on
three corpora, and hf mode refusing superwords.

native and wasmtime train every case; pywasm (an interpreter: a training on these small corpora
takes it one to ten seconds) the cases the header's `pywasm_cases` lists: one per mode and
alphabet, and three superword cases; the fast lane seven of them (PYWASM_SLOW_CASES).

Also checked: the headers and record fields, properties every BPE merge list has (ids refer to
earlier ids, counts never increase, the vocabulary budget is respected), and
`python vectors/generate_train.py --check` (the committed files are not stale; it runs the
reference and the HuggingFace check, and needs only the vendored UDHR excerpts).
"""
import lzma
import os
import subprocess
import sys

import pytest
import supertok
from conftest import BACKENDS, ROOT, corpus_path
from vectors_util import load as load_vectors

VEC_DIR = os.path.join(ROOT, "vectors", "train")
CORPORA_FILE = os.path.join(VEC_DIR, "corpora.jsonl")
MERGES_FILE = os.path.join(VEC_DIR, "merges.jsonl")
CASE_KEYS = {"case", "corpus", "mode", "alphabet", "pattern", "script_aware", "scripts",
             "vocab_size", "min_frequency", "special_tokens", "merges", "alphabet_size",
             "algorithm", "supermerges_arg", "ngram_split", "supermerges"}
ALGORITHMS = ("bpe", "boundless", "superbpe")
META_KEYS = ("generated_by", "part", "file", "records", "fields", "oracle", "tokenizers")


def _corpora():
    return {r["corpus"]: r["documents"] for r in load_vectors(CORPORA_FILE)[1]}


def _cases():
    return load_vectors(MERGES_FILE)[1]


def _options(case):
    opts = dict(vocab_size=case["vocab_size"], mode=case["mode"], alphabet=case["alphabet"],
                pattern=case["pattern"], script_aware=case["script_aware"],
                scripts=case["scripts"], special_tokens=tuple(case["special_tokens"]),
                min_frequency=case["min_frequency"])
    if case["algorithm"] != "bpe":  # phase-1 cases call train without the superword arguments
        opts.update(algorithm=case["algorithm"], ngram_split=case["ngram_split"])
        if case["algorithm"] == "superbpe":
            opts["supermerges"] = case["supermerges_arg"]
    return opts


def _first_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return "merge %d: got %r, expected %r" % (i, g, w)
    return "got %d merges, expected %d" % (len(got), len(want))


def test_files_present():
    for path in (CORPORA_FILE, MERGES_FILE):
        assert os.path.exists(path), "%s is missing: run python vectors/generate_train.py" % path


def test_headers_and_fields():
    corpora = _corpora()
    for path, part_keys in ((CORPORA_FILE, {"corpus", "documents"}), (MERGES_FILE, CASE_KEYS)):
        meta, rows = load_vectors(path)
        assert set(meta) == {"_meta"}, path
        m = meta["_meta"]
        for k in META_KEYS:
            assert k in m, "%s: header lacks %s" % (path, k)
        assert m["part"] == "train" and m["file"] == os.path.basename(path)
        assert m["records"] == len(rows), path
        assert m["tokenizers"] == "0.23.3"
        for i, r in enumerate(rows):
            assert set(r) == part_keys, "%s record %d: keys %s" % (path, i, sorted(r))
    names = [c["case"] for c in _cases()]
    assert len(set(names)) == len(names), "case names are not unique"
    for c in _cases():
        assert c["corpus"] in corpora, c["case"]
        assert c["mode"] in ("paper", "hf") and c["alphabet"] in ("bytes", "ube"), c["case"]
        assert not (c["mode"] == "hf" and c["alphabet"] == "ube"), c["case"]
        assert c["pattern"] in ("gpt2", "cl100k", "o200k"), c["case"]
        assert c["algorithm"] in ALGORITHMS, c["case"]
        assert (c["supermerges_arg"] is not None) == (c["algorithm"] == "superbpe"), c["case"]
        if c["algorithm"] == "bpe":
            assert c["supermerges"] == [] and c["ngram_split"] is False, c["case"]
        else:
            assert c["mode"] == "paper", c["case"]  # HuggingFace has no superwords


def test_merge_lists_are_bpe():
    """Properties of any BPE merge list, on the expected data: each merge joins ids that
    exist before it, counts are positive and never increase (a new pair's occurrences each hold
    an occurrence of the token just made), min_frequency holds, and the number of merges stays
    within the budget vocab_size counts (hf: one more per special colliding with a token)."""
    meta = load_vectors(MERGES_FILE)[0]["_meta"]
    sizes = meta["alphabet_sizes"]
    for c in _cases():
        A = 256 if c["alphabet"] == "bytes" else 512
        assert c["alphabet_size"] == sizes["%s/%s" % (c["mode"], c["alphabet"])], c["case"]
        budget = c["vocab_size"] - c["alphabet_size"] - len(c["special_tokens"])
        slack = len(c["special_tokens"]) if c["mode"] == "hf" else 0
        assert len(c["merges"]) + len(c["supermerges"]) <= budget + slack, c["case"]
        prev = None
        for i, (left, right, count) in enumerate(c["merges"]):
            assert 0 <= left < A + i and 0 <= right < A + i, (c["case"], i)
            assert count >= max(1, c["min_frequency"]), (c["case"], i)
            assert prev is None or count <= prev, (c["case"], i)
            prev = count
        # supermerge k makes id A + len(merges) + k; SuperBPE asks for at most s of them
        first, prev = A + len(c["merges"]), None
        if c["algorithm"] == "superbpe":
            assert len(c["supermerges"]) <= c["supermerges_arg"], c["case"]
        for k, (left, right, count) in enumerate(c["supermerges"]):
            assert 0 <= left < first + k and 0 <= right < first + k, (c["case"], k)
            assert count >= max(1, c["min_frequency"]), (c["case"], k)
            assert prev is None or count <= prev, (c["case"], k)
            prev = count


def test_boundless_cases_have_their_superbpe_twin():
    """Every BoundlessBPE case without the n-gram split has a SuperBPE case with the s it ended
    with, and the same merges and supermerges (the invariant, on the expected data)."""
    by_name = {c["case"]: c for c in _cases()}
    n = 0
    for c in _cases():
        if c["algorithm"] != "boundless" or c["ngram_split"]:
            continue
        twin = by_name[c["case"][:-len("boundless")] + "superbpe-s%d" % len(c["supermerges"])]
        assert (twin["merges"], twin["supermerges"]) == (c["merges"], c["supermerges"]), c["case"]
        n += 1
    assert n >= 50


# pywasm's cases that stay out of the fast lane (a second each, the two on UDHR text 5-10 s):
# it keeps one case per mode and alphabet, the shared-id special and the three superword cases
PYWASM_SLOW_CASES = ("udhr_mixed/", "udhr_japanese/", "ties/", "crlf/", "specials_in_text/", "empty/")


def _case_params():
    """(case, backend) pairs: every case on native and wasmtime; on pywasm the cases the header's
    pywasm_cases lists (the longer ones marked slow)."""
    pywasm_cases = set(load_vectors(MERGES_FILE)[0]["_meta"]["pywasm_cases"])
    params = []
    for c in _cases():
        for b in BACKENDS:
            if b != "pywasm":
                params.append(pytest.param(c, b, id="%s-%s" % (c["case"], b)))
            elif c["case"] in pywasm_cases:
                slow = c["case"].startswith(PYWASM_SLOW_CASES)
                params.append(pytest.param(c, b, id="%s-%s" % (c["case"], b),
                                           marks=[pytest.mark.slow] if slow else []))
    return params


def test_pywasm_cases_exist():
    """Every case the header lists for pywasm is a case of the file (a renamed case must not
    silently drop out of pywasm's subset)."""
    listed = load_vectors(MERGES_FILE)[0]["_meta"]["pywasm_cases"]
    names = {c["case"] for c in _cases()}
    assert listed and not [n for n in listed if n not in names], [n for n in listed if n not in names]
    assert [n for n in listed if n.startswith(PYWASM_SLOW_CASES)], "PYWASM_SLOW_CASES names no listed case"


@pytest.mark.parametrize("case,backend", _case_params(), indirect=["backend"])
def test_train_case(case, backend):
    docs = _corpora()[case["corpus"]]
    enc = supertok.train(iter(docs), **_options(case))
    got = [tuple(m) for m in enc.merges]
    want = [tuple(m) for m in case["merges"]]
    assert got == want, "%s on %s: %s" % (case["case"], backend, _first_difference(got, want))
    if case["algorithm"] != "bpe" or hasattr(enc, "supermerges"):
        got = [tuple(m) for m in enc.supermerges]
        want = [tuple(m) for m in case["supermerges"]]
        assert got == want, "%s on %s: supermerges: %s" % (case["case"], backend,
                                                            _first_difference(got, want))


# The invariant through the API: BoundlessBPE ending with r regular merges and s supermerges
# gives the same merges, supermerges and counts as SuperBPE(s) with the same vocab_size.
INVARIANT_CORPORA = [("phrases", "bytes", False, 243 + 150), ("udhr_latin", "bytes", False, 243 + 150),
                     ("han_words", "ube", True, 478 + 150)]


@pytest.mark.slow_on_pywasm("phrases", "udhr_latin")  # 20 s each there; han_words takes 7 s
@pytest.mark.parametrize("corpus,alphabet,script_aware,vocab_size", INVARIANT_CORPORA,
                         ids=[c[0] for c in INVARIANT_CORPORA])
def test_boundless_equals_superbpe(backend, corpus, alphabet, script_aware, vocab_size):
    docs = _corpora()[corpus]
    train = supertok.train
    opts = dict(vocab_size=vocab_size, alphabet=alphabet, script_aware=script_aware)
    boundless = train(iter(docs), algorithm="boundless", **opts)
    s = len(boundless.supermerges)
    assert s > 0, "the corpus should make BoundlessBPE take supermerges"
    superbpe = train(iter(docs), algorithm="superbpe", supermerges=s, **opts)
    assert list(superbpe.merges) == list(boundless.merges)
    assert list(superbpe.supermerges) == list(boundless.supermerges)
    assert superbpe.n_vocab == boundless.n_vocab


def test_hf_mode_has_no_superwords(backend):
    train = supertok.train
    for algorithm, extra in (("boundless", {}), ("superbpe", {"supermerges": 2})):
        with pytest.raises(ValueError, match="(?i)hf|huggingface"):
            train(iter(["the cat the cat"]), vocab_size=300, mode="hf", algorithm=algorithm, **extra)


@pytest.mark.slow  # the naive reference trains all 572 cases again (and tokenizers the hf ones)
def test_train_vectors_not_stale():
    # Runs on a fresh clone: the generator reads the vendored UDHR excerpts, the reference
    # trainer and tokenizers (a test extra).
    proc = subprocess.run([sys.executable, os.path.join("vectors", "generate_train.py"), "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, "vectors/generate_train.py --check exited %d:\n%s%s" % (
        proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize("lang", ["en"])
def test_boundless_equals_superbpe_on_real_text(backend, lang):
    """The same invariant on 2 MB of real text with phase 1 at its target (2,000 merges), where
    BoundlessBPE's phase 2 leaves out most of its pairs as never to be chosen (below the smallest
    regular merge's count) and SuperBPE's by a threshold of its own: the models agree. (The vectors'
    corpora are too small for either as shipped; the C tests' build leaves pairs out on them.)"""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: training 2 MB three times runs on native, wasmtime or numba")
    path = corpus_path(lang + ".txt.xz")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        docs = f.read(2_000_000).splitlines(keepends=True)
    opts = dict(vocab_size=243 + 2000, pattern="o200k")
    assert len(supertok.train(iter(docs), **opts).merges) == 2000, "phase 1 should reach its target"
    boundless = supertok.train(iter(docs), algorithm="boundless", **opts)
    s = len(boundless.supermerges)
    assert s > 100, "the text should make BoundlessBPE take supermerges"
    superbpe = supertok.train(iter(docs), algorithm="superbpe", supermerges=s, **opts)
    assert list(superbpe.merges) == list(boundless.merges)
    assert list(superbpe.supermerges) == list(boundless.supermerges)
