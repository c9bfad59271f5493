"""encode_with_unstable against tiktoken on real multilingual text: excerpts of the Universal
Declaration of Human Rights in many scripts (vectors/texts/udhr.jsonl), cut at several places
(inside a word, after a space, after punctuation, the whole excerpt), in cl100k_base and
o200k_base. The stable tokens and the set of completions must be tiktoken's exactly."""
import json
import os

import pytest

import supertok

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


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encode_with_unstable_matches_tiktoken_on_udhr(backend, tk, name):
    enc, theirs = supertok.get_encoding(name), tk[name]
    # pywasm interprets the module: a few excerpts there, every script on the others
    texts = _excerpts(1)[:3] if backend == "pywasm" else _excerpts(1)
    checked = 0
    for k, text in enumerate(texts):
        cuts = _cuts(text, k % 4 == 0)
        for cut in (cuts[:2] if backend == "pywasm" else cuts):
            stable, completions = enc.encode_with_unstable(cut)
            want_stable, want_completions = theirs.encode_with_unstable(cut)
            assert stable == want_stable, cut
            assert sorted(map(tuple, completions)) == sorted(map(tuple, want_completions)), cut
            assert len(set(map(tuple, completions))) == len(completions), cut  # no repeats
            checked += 1
    assert checked >= (4 if backend == "pywasm" else 120)
