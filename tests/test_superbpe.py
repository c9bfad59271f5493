"""The superbpe pattern (SuperBPE's Stage-2 pre-tokenizer, docs/design.md §5) against its own
oracle: HuggingFace tokenizers' Split(Regex(R), "isolated"), the pre-tokenizer SuperBPE trains its
Stage 2 with (github.com/PythonNut/superbpe, scripts/extend_tokenizer.sh), on every corpus file
and on generated strings, on every backend; and a model of merge rules over it: trained, loaded
and encoding lines thousands of bytes long (the pieces are whole lines) exactly as a plain
merge-rank BPE of each piece, in time linear in the text.

The regex module's isolated split (vectors/oracle.py) is the vectors' oracle; tokenizers is
checked against it here and in vectors/generate.py, and the core against both.
"""
import os
import random
import time

import pytest
import tokenizers  # the test extra pins tokenizers==0.23.3, as vectors/generate.py needs

import oracle
import supertok
from conftest import CORPORA, corpus_blocks, corpus_path

R = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"
FULL = bool(os.environ.get("SUPERTOK_FULL_DIFF"))
SAMPLE_CHARS = 150_000  # per corpus file in the sampled (CI) run
CORPUS_FILES = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else [])
                      if f.endswith(".txt.xz")) or ["en.txt.xz"]

_split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(R), "isolated")


def hf_pieces(text):
    return [p for p, _ in _split.pre_tokenize_str(text)]


def _first_difference(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "piece %d: tokenizers %r, core %r" % (k, x, y)
    return "tokenizers %d pieces, core %d" % (len(a), len(b))


def _check(text, where=""):
    want = hf_pieces(text)
    got = supertok.pretokenize(text, "superbpe")
    assert got == want, "%s %s" % (where, _first_difference(want, got))


def test_catalogue_pattern_is_the_reference_regex():
    assert supertok.PATTERNS["superbpe"] == 4
    assert oracle.PATTERNS["superbpe"] == R and "superbpe" in oracle.ISOLATED



@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_corpus_against_tokenizers(backend, name):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the corpus runs on native and wasmtime")
    path = corpus_path(name)
    for i, block in enumerate(corpus_blocks(path, 20_000, None if FULL else SAMPLE_CHARS)):
        _check(block, "%s block %d" % (name, i))
        assert hf_pieces(block) == oracle.pretokenize(block, "superbpe"), "%s block %d: the oracles" % (name, i)


# What the regex's alternatives turn on, and a little of everything else.
ALPHABET = (list(" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u3000\ufeff\u200b/!.,-_'\"#()[]{}<>@*~"
                 "0123456789٣४¹½Ⅻ aAzZéÉǅʰß\u0301\u0308\u064e\u094d德国日本かなカナ한국ไทยΑαБбאعह😀👍🏽🇫🇷𝐀")
            + ["  ", "   ", "\r\n", "!!", " !!", "...", "//", "\n/", "1234", "    x"])


def _random_texts(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40)))
    for _ in range(n // 10):  # arbitrary code points
        yield "".join(chr(rng.choice((rng.randrange(0x20, 0x800), rng.randrange(0xE000, 0x110000))))
                      for _ in range(rng.randrange(0, 20)))


def test_generated_strings_against_tokenizers(backend):
    n = 200 if backend == "pywasm" else 5000
    for text in _random_texts(n, 7):
        _check(text, "text %r:" % (text,))


@pytest.mark.parametrize("script_aware", [False, True])
def test_generated_strings_against_the_oracle(backend, script_aware):
    """Script-aware mode: chunks first, the isolated split inside each chunk (the oracle's chunker)."""
    n = 100 if backend == "pywasm" else 2000
    for text in _random_texts(n, 11 + script_aware):
        want = oracle.pretokenize(text, "superbpe", script_aware)
        assert supertok.pretokenize(text, "superbpe", script_aware) == want, repr(text)
        assert supertok.pretokenize_count(text, "superbpe", script_aware) == len(want)


# ---- a model of merge rules over superbpe ----------------------------------------------------

def _training_docs():
    rng = random.Random(3)
    words = ("the of and to in is was for on that with as by at from his her they we you it this "
             "tokenizer superword merge piece line text model").split()
    docs = []
    for _ in range(400):
        line = " ".join(rng.choice(words) for _ in range(rng.randrange(5, 30)))
        line += rng.choice([".", ",", "!!", " 1234", "...", ""]) + "\n"
        docs.append(line)
    return docs


@pytest.fixture(scope="module")
def trained_rules():
    """(the model file's bytes, its merges) of a small byte-level model trained with superbpe."""
    enc = supertok.train(iter(_training_docs()), vocab_size=420, pattern="superbpe")
    return enc


def _reference_bpe(piece, ranks):
    """A plain merge-rank BPE of one piece: its bytes, then, while any adjacent pair is a rule,
    the pair of the lowest rule index merged everywhere left to right (rule i makes id 256 + i)."""
    by_rank = {r: pair for pair, r in ranks.items()}
    ids = list(piece)
    while len(ids) > 1:
        r = min(ranks.get(pair, 1 << 30) for pair in zip(ids, ids[1:]))
        if r == 1 << 30:
            break
        ids = _merge_everywhere(ids, by_rank[r], 256 + r)
    return ids


def _merge_everywhere(ids, pair, new):
    out, k, n = [], 0, len(ids)
    while k < n:
        if k + 1 < n and ids[k] == pair[0] and ids[k + 1] == pair[1]:
            out.append(new)
            k += 2
        else:
            out.append(ids[k])
            k += 1
    return out


def _reference_bpe_by_rules(piece, merges):
    """The same BPE for long pieces: each rule in order, merged everywhere once. Equal to the
    above because a rule's parts are older ids than the rule, so a merge only makes pairs of
    later rules: once rule r has been applied, no pair of rule r or earlier appears again."""
    ids = list(piece)
    for i, (a, b, _) in enumerate(merges):
        if a in ids and b in ids:  # C-speed scans skip most rules
            ids = _merge_everywhere(ids, (a, b), 256 + i)
    return ids


def _reference_encode(text, merges, long=False):
    ranks = {(a, b): i for i, (a, b, _) in enumerate(merges)}
    out = []
    for p in supertok.pretokenize(text, "superbpe"):
        b = p.encode("utf-8")
        out += _reference_bpe_by_rules(b, merges) if long else _reference_bpe(b, ranks)
    return out


def _load(trained, tmp_path):
    path = tmp_path / "superbpe.model"
    trained.save(str(path))
    assert b"\npattern superbpe\n" in path.read_bytes()
    enc = supertok.load_model(str(path))
    assert enc.merges == trained.merges
    return enc


def test_model_loads_and_encodes_as_merge_rank_bpe(backend, trained_rules, tmp_path):
    merges = trained_rules.merges
    assert len(merges) > 100
    enc = _load(trained_rules, tmp_path)
    docs = _training_docs()
    texts = docs[:50] + [
        "".join(docs[:40]).replace("\n", " "),  # one line of a few thousand bytes: one piece
        "x" * 3000, " " * 3000 + "the", "!!" * 1000, "12345678901234567890", "",
        "the  of   and    to\n\n the\t!!\r\n/ 1234567 text",
    ]
    for t in texts:
        want = _reference_encode(t, merges)
        assert _reference_encode(t, merges, long=True) == want
        assert enc.encode(t) == want, repr(t[:80])
        assert enc.decode(want) == t


LONG_UNITS = {
    "words": None,  # lines of the training text joined: one piece of common words
    "one letter": "t",
    "no merges apply": "\u0436",
    "period": "tokenizer",
}


@pytest.mark.parametrize("kind", list(LONG_UNITS))
def test_long_line_encodes_in_linear_time(backend, trained_rules, tmp_path, kind):
    """A 1 MB line is one piece: the encoder's long-piece path. A 64 KB line against the
    reference BPE, and the 1 MB line timed against a quarter of it (linear: about 4x, quadratic
    16x) and decoded back."""
    if backend == "pywasm":
        pytest.skip("pywasm interprets ~0.2M instructions/s: large inputs run on native and wasmtime")
    enc = _load(trained_rules, tmp_path)
    unit = LONG_UNITS[kind] or "".join(_training_docs()).replace("\n", " ").replace("!!", "").replace(
        "...", "").replace(" 1234", "")
    big = unit * (1_000_000 // len(unit.encode()) + 1)
    pieces = supertok.pretokenize(big, "superbpe")
    assert len(pieces) <= 2 and len(pieces[0].encode()) > 900_000, [len(p) for p in pieces[:5]]
    mid = big[:65536]
    assert enc.encode(mid) == _reference_encode(mid, trained_rules.merges, long=True)

    def timed(text):
        t0 = time.perf_counter()
        ids = enc.encode(text)
        return time.perf_counter() - t0, ids

    # the best of a few runs, each on a text of its own (the piece cache keeps pieces)
    t_quarter = min(timed(big[k:k + len(big) // 4])[0] for k in range(3))
    t_big, ids = timed(big)
    t_big = min(t_big, timed(big[1:])[0])
    assert enc.decode(ids) == big
    assert t_big < 10 * max(t_quarter, 0.05), "1 MB took %.3f s, a quarter %.3f s" % (t_big, t_quarter)


def test_tokenizer_json_export_is_superbpes_pipeline(backend, trained_rules, tmp_path):
    """The tokenizer.json export writes the pattern as Split(Regex(R), "Isolated") then ByteLevel:
    SuperBPE's own pre-tokenizer. HuggingFace tokenizers, loading it, gives our ids (the export's
    check); a tiktoken rank file is refused (tiktoken keeps a regex's matches only)."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: this runs on native and wasmtime")
    import json
    sample = _training_docs()[:100] + ["".join(_training_docs()[:30]), "x  y   z\n\n!! 12345 ok //\r\n",
                                       "Тест 中文 😀 !!! \u00a0 end  "]
    out = tmp_path / "tokenizer.json"
    result = trained_rules.export(str(out), "hf", sample=sample)
    assert not result.mismatches, result
    pre = json.loads(out.read_text(encoding="utf-8"))["pre_tokenizer"]["pretokenizers"]
    assert pre[0]["type"] == "Split" and pre[0]["pattern"] == {"Regex": R} and pre[0]["behavior"] == "Isolated"
    assert pre[1]["type"] == "ByteLevel" and pre[1]["add_prefix_space"] is False and pre[1]["use_regex"] is False
    hf = tokenizers.Tokenizer.from_file(str(out))
    for t in sample:
        assert hf.encode(t, add_special_tokens=False).ids == trained_rules.encode(t), repr(t[:60])
    with pytest.raises(Exception, match="tiktoken keeps only a regex's matches"):
        trained_rules.export(str(tmp_path / "x.tiktoken"), "tiktoken")


def test_tiktoken_vocabulary_refuses_the_isolated_pattern(backend):
    """tiktoken encodes only its regex's matches; SuperBPE's Stage-2 regex splits 'isolated' (the text
    between matches is a piece too), so a tiktoken-style Encoding with it would not give tiktoken's
    ids: refused, naming why. A rules model with the pattern loads (test_model_file_records_...)."""
    from supertok._catalogue import pat_str
    ranks = {bytes([i]): i for i in range(256)}
    with pytest.raises(ValueError, match="tiktoken keeps only the matches"):
        supertok.Encoding("sbpe", pat_str=pat_str("superbpe"), mergeable_ranks=ranks, special_tokens={})
    enc = supertok.Encoding("o200k-bytes", pat_str=pat_str("o200k"), mergeable_ranks=ranks, special_tokens={})
    assert enc.encode("ab") == [97, 98]
