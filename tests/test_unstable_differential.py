"""encode_with_unstable against tiktoken on real multilingual text: excerpts of the Universal
Declaration of Human Rights in many scripts (vectors/texts/udhr.jsonl), cut at several places
(inside a word, after a space, after punctuation, the whole excerpt), in cl100k_base and
o200k_base. The stable tokens and the set of completions must be tiktoken's exactly."""
import json
import os

import pytest

import supertok
import vectors_util

tiktoken = pytest.importorskip("tiktoken", reason="tiktoken (the oracle) is not installed")

HERE = os.path.dirname(os.path.abspath(__file__))
UDHR = os.path.join(HERE, "..", "vectors", "texts", "udhr.jsonl")


@pytest.fixture(scope="module")
def tk(tmp_path_factory):
    from generate_encode import tiktoken_offline
    return tiktoken_offline(str(tmp_path_factory.mktemp("tiktoken-cache")), ["cl100k_base", "o200k_base"])


def _excerpts(per_script):
    """The first per_script excerpts of each script, from the records the encode vectors use."""
    seen, out = {}, []
    with open(UDHR, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("use") != "encode":
                continue
            if seen.get(r["script"], 0) < per_script:
                seen[r["script"]] = seen.get(r["script"], 0) + 1
                out.append(r["text"])
    assert len(out) >= 20, "read %d excerpts from %s" % (len(out), UDHR)
    return out


def _cuts(text, after_space):
    """The text cut inside its first third, just after a punctuation mark, whole, and with
    after_space just after a space: each end leaves a different kind of unstable tail (a space
    last has tens of thousands of completions, every token starting with a space: tiktoken
    takes a second for those, so only some texts are cut there)."""
    ends = {len(text), max(1, len(text) // 3)}
    space = text.find(" ", len(text) // 2)
    if space > 0 and after_space:
        ends.add(space + 1)
    for k in range(len(text) // 2, len(text)):
        if not text[k].isalnum() and not text[k].isspace():
            ends.add(k + 1)
            break
    return [text[:e] for e in sorted(ends)]


#: pywasm interprets the module: its subset is the first PYWASM_EXCERPTS excerpts, each cut at its
#: first PYWASM_CUTS ends (6 calls an encoding). There an encoding's first encode_with_unstable call
#: takes about 20 s of CPU (cl100k_base; o200k_base twice that), and a cut inside a Latin word or
#: just after a space 15 to 55 s more (tens of thousands of candidate completions), a cut in CJK text
#: a second or less. So the fast lane runs, on pywasm, cl100k_base's calls of the subset's excerpts
#: 1 and 2 that do not end in whitespace (Chinese and Korean: 3 calls, 1 to thousands of
#: completions); the slow lane runs the other 3 ("pywasm-rest", tests/conftest.py). o200k_base
#: (a minute for its first call alone, four in all) is not run there: its calls differ from
#: cl100k_base's only in data, and native and wasmtime (the same module and the same wasm host
#: code as pywasm) run every excerpt of both encodings in both lanes.
PYWASM_EXCERPTS, PYWASM_CUTS = 3, 2


def _calls(backend, vector_part):
    """The (excerpt number, cut text) pairs a backend checks: every excerpt and cut on native and
    wasmtime; pywasm's subset, or its fast or rest part."""
    texts = _excerpts(1)
    if backend == "pywasm":
        texts = texts[:PYWASM_EXCERPTS]
    calls = []
    for k, text in enumerate(texts):
        cuts = _cuts(text, k % 4 == 0)
        calls += [(k, cut) for cut in (cuts[:PYWASM_CUTS] if backend == "pywasm" else cuts)]
    if backend == "pywasm" and vector_part != vectors_util.PART_ALL:
        fast = [(k, cut) for k, cut in calls if k > 0 and not cut[-1].isspace()]
        calls = fast if vector_part == vectors_util.PART_FAST else [c for c in calls if c not in fast]
    return calls


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encode_with_unstable_matches_tiktoken_on_udhr(backend, vector_part, tk, name):
    if backend == "pywasm" and name != "cl100k_base":
        pytest.skip("pywasm is an interpreter: %s's excerpts run on native and wasmtime" % name)
    enc, theirs = supertok.get_encoding(name), tk[name]
    calls = _calls(backend, vector_part)
    for k, cut in calls:
        stable, completions = enc.encode_with_unstable(cut)
        want_stable, want_completions = theirs.encode_with_unstable(cut)
        assert stable == want_stable, cut
        assert sorted(map(tuple, completions)) == sorted(map(tuple, want_completions)), cut
        assert len(set(map(tuple, completions))) == len(completions), cut  # no repeats
    assert len(calls) >= (3 if backend == "pywasm" else 120)
