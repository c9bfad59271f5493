"""Differential tests: the core's pieces against the oracle (regex.findall with tiktoken's
patterns, the isolated split of SuperBPE's Stage-2 regex for superbpe and of the llama3, qwen2 and
deepseek_v3 regexes (tests/test_superbpe.py and tests/test_hf_patterns.py hold those to
HuggingFace tokenizers), and the script chunker of vectors/oracle.py) on real multilingual text and on
generated strings. Zero mismatches allowed.

CI runs a sample. The full run, over every line of every corpus file and 100,000 generated
strings per case:
    SUPERTOK_FULL_DIFF=1 SUPERTOK_HYPOTHESIS_EXAMPLES=100000 python -m pytest tests/test_differential.py
"""
import json
import lzma
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oracle
import supertok
from conftest import CORPORA, corpus_blocks, corpus_path

FULL = bool(os.environ.get("SUPERTOK_FULL_DIFF"))
SAMPLE_CHARS = 150_000  # per corpus file in the sampled (CI) run
EXAMPLES = int(os.environ.get("SUPERTOK_HYPOTHESIS_EXAMPLES", "300"))
CASES = [(p, sa) for p in ("gpt2", "cl100k", "o200k", "superbpe", "llama3", "qwen2", "deepseek_v3")
         for sa in (False, True)]

CORPUS_FILES = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else [])
                      if f.endswith(".txt.xz")) or ["en.txt.xz"]



def _first_difference(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "piece %d: oracle %r, core %r" % (k, x, y)
    return "oracle %d pieces, core %d" % (len(a), len(b))


def _check(text, pattern, script_aware, scripts=None, where=""):
    want = oracle.pretokenize(text, pattern, script_aware, scripts)
    got = supertok.pretokenize(text, pattern, script_aware, scripts)
    assert got == want, "%s %s script_aware=%s %s" % (where, pattern, script_aware, _first_difference(want, got))


@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_corpus(backend, name):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the corpus runs on native and wasmtime")
    path = corpus_path(name)
    for i, block in enumerate(corpus_blocks(path, 20_000, None if FULL else SAMPLE_CHARS)):
        for pattern, sa in CASES:
            _check(block, pattern, sa, where="%s block %d" % (name, i))


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_udhr_every_translation(backend):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the corpus runs on native and wasmtime")
    path = corpus_path("udhr.jsonl.xz")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            text = rec["text"] if FULL else rec["text"][:2000]
            for pattern, sa in CASES:
                _check(text, pattern, sa, where="udhr %s" % rec["code"])


# Characters the patterns treat specially, mixed into arbitrary Unicode.
SPECIAL = list(" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
               "\ufeff\u200b\x1c\x1d\x1e\x1f\u180e"
               "'sSdDmMtTlLvVeErRſ’/!.,-_\"#"
               "0123456789٣४¹½Ⅻ"
               "aAzZéÉǅʰªß\u0301\u0308\u064e\u05b7\u093f\u094d"
               "德国日本中文かなカナ한국ไทยမြန်မာខ្មែរລາວ"
               "ΑαΩωБбЖжאבعربيहिन्दी"
               "😀👍🏽👨\u200d👩🇫🇷𝐀𠀀\U000e0080\ue000")
chars = st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=("Cs",)))
texts = st.text(alphabet=chars, max_size=40)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


@SETTINGS
@given(texts)
def test_generated_strings(text):
    """On the first backend (native when built); the vectors carry the checks to the others."""
    for pattern, sa in CASES:
        _check(text, pattern, sa)


@SETTINGS
@given(texts, st.lists(st.sampled_from(["Latin", "Han", "Greek", "Thai", "Arabic", "Common", "Hangul"]),
                       max_size=3))
def test_generated_script_lists(text, scripts):
    _check(text, "o200k", True, scripts)


# The scanners read ASCII words eight bytes at a time (pretokenize.c): pieces that start, end or
# cross the edges of those words, and the last bytes of a text, each run a different path.
EDGE_CLASSES = ["A", "Z", "a", "z", "Q", "m", "0", "9", " ", "  ", "\n", "\r\n", "\t", "'", "'s", "'LL",
                ",", ".", "/", "@", "[", "`", "{", "-", "é", "É", "ǅ", "Ж", "ж", "中", "\u0301", "\xa0", "٣"]


def _edge_texts():
    import random
    rng = random.Random(12)
    for n in range(0, 131):  # every length, mixed classes
        for _ in range(4):
            t = ""
            while len(t.encode()) < n:
                t += rng.choice(EDGE_CLASSES)
            yield t
    for lead in ("", " ", ",", "'", "\n", "é", "x "):  # a word of each length at each offset
        for pad in range(0, 9):
            for length in range(0, 20):
                for word in ("a" * length, "B" * length, "Cd" * (length // 2), "EFg" * (length // 3)):
                    for tail in ("", " ", "'s", "é", "\u0301", "Ж", "1", ",", "A", "a", "\n"):
                        yield "." * pad + lead + word + tail


def test_block_edges(backend):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: this runs on native and wasmtime")
    for text in _edge_texts():
        for pattern, sa in CASES:
            if not sa:
                _check(text, pattern, sa)
