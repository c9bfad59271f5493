"""The llama3, qwen2 and deepseek_v3 patterns (docs/design.md §5) against their reference:
HuggingFace tokenizers 0.23.3 splitting text with the pre-tokenizers of Llama 3's, Qwen 2/3's and
DeepSeek V3's tokenizer.json (Split(Regex(R), "Isolated"), and for DeepSeek a Sequence of three such
Splits), on every corpus file and on generated adversarial text (digit runs, mixed scripts,
whitespace runs with CR LF, U+00A0 and U+3000, combining marks, private use, controls), on every
backend; script-aware mode against the oracle's chunker; a model of merge rules over llama3
trained, loaded, encoding as a plain merge-rank BPE of each piece and exported to a tokenizer.json
that tokenizers reads back to our ids.

The regex module's isolated split (vectors/oracle.py) is the vectors' oracle; tokenizers is checked
against it here and in vectors/generate.py, and the core against both.
"""
import json
import os
import random

import pytest
import tokenizers  # the test extra pins tokenizers==0.23.3, as vectors/generate.py needs

import oracle
import supertok
from conftest import CORPORA, corpus_blocks, corpus_path

# The Split regexes exactly as the models' tokenizer.json files hold them (DeepSeek's third regex
# has CR and LF characters inside its classes, not escapes).
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
          r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
         r"\s*[\r\n]+|\s+(?!\S)|\s+")
DEEPSEEK_V3 = [
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^""" + "\r\n" + r"""\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|"""
    r""" ?[\p{P}\p{S}]+[""" + "\r\n" + r"""]*|\s*[""" + "\r\n" + r"""]+|\s+(?!\S)|\s+""",
]
REGEXES = {"llama3": [LLAMA3], "qwen2": [QWEN2], "deepseek_v3": DEEPSEEK_V3}
IDS = {"llama3": 5, "qwen2": 6, "deepseek_v3": 7}
NAMES = list(REGEXES)

FULL = bool(os.environ.get("SUPERTOK_FULL_DIFF"))
SAMPLE_CHARS = 100_000  # per corpus file and pattern in the sampled (CI) run
CORPUS_FILES = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else [])
                      if f.endswith(".txt.xz")) or ["en.txt.xz"]

_hf = {name: tokenizers.pre_tokenizers.Sequence([tokenizers.pre_tokenizers.Split(tokenizers.Regex(r), "isolated")
                                                 for r in rs]) for name, rs in REGEXES.items()}


def hf_pieces(text, name):
    return [p for p, _ in _hf[name].pre_tokenize_str(text)]


def _first_difference(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "piece %d: tokenizers %r, core %r" % (k, x, y)
    return "tokenizers %d pieces, core %d" % (len(a), len(b))


def _check(text, name, where=""):
    want = hf_pieces(text, name)
    got = supertok.pretokenize(text, name)
    assert got == want, "%s %s %s" % (name, where, _first_difference(want, got))


def test_catalogue_holds_the_models_regexes():
    """The catalogue's ids and regexes are the models' (deepseek_v3: its three regexes in pat_strs,
    the last also its pat_str); the oracle reads them; the core knows each pat_str, and, the split
    being "isolated", refuses it for a tiktoken vocabulary."""
    from supertok import _catalogue
    for name, rs in REGEXES.items():
        assert supertok.PATTERNS[name] == IDS[name]
        entry = _catalogue.PATTERN_BY_ID[IDS[name]]
        assert entry["name"] == name and entry["split"] == "isolated" and entry["pat_str"] == rs[-1]
        assert oracle.PATTERNS[name] == rs[-1] and name in oracle.ISOLATED
        with pytest.raises(ValueError, match="splits isolated"):
            supertok.Encoding("x", pat_str=rs[-1], mergeable_ranks={b"a": 0}, special_tokens={})
    assert _catalogue.read()["patterns"]["deepseek_v3"]["pat_strs"] == DEEPSEEK_V3
    assert oracle.SEQUENCES == {"deepseek_v3": DEEPSEEK_V3}
    assert supertok.PATTERNS["qwen3"] == IDS["qwen2"]


@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_corpus_against_tokenizers(backend, name):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the corpus runs on native and wasmtime")
    path = corpus_path(name)
    for i, block in enumerate(corpus_blocks(path, 20_000, None if FULL else SAMPLE_CHARS)):
        for pattern in NAMES:
            _check(block, pattern, "%s block %d" % (name, i))
            assert hf_pieces(block, pattern) == oracle.pretokenize(block, pattern), \
                "%s %s block %d: the oracles" % (pattern, name, i)


# What the alternatives turn on, and a little of everything else.
ALPHABET = (list(" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u3000\ufeff\u200b\x00\x01\x1f\x7f\xad"
                 "/!.,-_'\"#$%&()*+:;<=>?@[\\]^`{|}~\u00ab\u00bb\u2014\u20ac\u00a9\u3001\u3002\uff08"
                 "0123456789\u0663\u096a\u00b9\u00bd\u216b aAzZsStTlLdDmMvVeErR\u00e9\u00c9\u01c5\u02b0\u00df\u017f"
                 "\u0301\u0308\u064e\u094d\u20dd\u5fb7\u56fd\u65e5\u672c\u4e00\u9fa5\u9fa6\u3400\u304b\u306a\u30ab\u30ca"
                 "\u3040\u3099\u309b\u309c\u309f\u30a0\u30fb\u30fc\u30ff\u3100\ud55c\uad6d\u0e44\u0e17\u0e22"
                 "\u0391\u03b1\u0411\u0431\u05d0\u0639\u0939\ue000\uf8ff\ufdd0\uffff")
            + ["\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f1eb\U0001f1f7", "\U0001d400", "\U000f0000",
               "\U00020000", "\U0010ffff", "  ", "   ", "\r\n", "\r\n\r\n", " \r\n", "!!", " !!", "...", "//",
               "\n/", "1234", "12345678", "    x", "'s", "'LL", "'ve", "'Re", "'\u017f", "#if", "(x)"])


def _random_texts(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40)))
    for _ in range(n // 10):  # arbitrary code points, more of them near the CJK ranges
        yield "".join(chr(rng.choice((rng.randrange(0, 0x800), rng.randrange(0x3000, 0x3100),
                                      rng.randrange(0x4DF0, 0x4E10), rng.randrange(0x9F90, 0x9FB0),
                                      rng.randrange(0xE000, 0x110000))))
                      for _ in range(rng.randrange(0, 20)))


def _structured_texts():
    """Runs that make a scanner walk: digits of every length, whitespace runs of each kind before
    words, line breaks, other whitespace and the end, punctuation runs, marks, CJK runs cut by
    other characters, controls and private use alone and before letters."""
    out = []
    for n in range(1, 12):
        out += ["7" * n, "a" + "7" * n + "b", "\u0663" * n + "x", "\u65e5" + "1" * n + "\u65e5", " " + "9" * n]
    for ws in (" ", "\t", "\xa0", "\u3000", "\u2003", "\r\n", "\n", "\x85", " \n", "\n "):
        for n in (1, 2, 3, 7):
            run = ws * n
            out += [run, "a" + run + "b", "a" + run, run + "a", "a" + run + "\n", "a" + run + "\n\n" + run + "b",
                    "a" + run + "!!", "a" + run + "1", "a" + run + "\u65e5", "\u65e5" + run + "\u65e5",
                    "a" + run + "\u0301b", "a" + run + "\x01b"]
    for p in ("!", "#", "(", "\u00ab", "\u2014", "\u20ac", "\u3001", "\u30fb", "\u309b"):
        for n in (1, 2, 5):
            out += [p * n, p * n + "ab", " " + p * n + "ab", p * n + "\u00e9", p * n + "\r\n\r\nx", "x" + p * n + "\n"]
    for m in ("\u0301", "\u20dd", "\u094d", "\u3099"):
        out += [m, m * 3, "a" + m * 3, " " + m + "x", m + "\u65e5", "\x01" + m, "!" + m + "a"]
    for c in ("\x01", "\x00", "\u200b", "\ufeff", "\ue000", "\U000f0000", "\ufdd0"):
        out += [c, c * 5, c + "a", c * 3 + "abc", "a" + c + "b", " " + c + " ", c + "\u65e5", c + "1", c + "!a"]
    out += ["\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8123abc", "\u6771\u4eac\u30b9\u30ab\u30a4\u30c4\u30ea\u30fc\u306f634m",
            "\u4e2d\u6587abc\u4e2d\u6587", "\u30a2\u30fb\u30a4\u30fc", "\u304b\u3099\u309b", "\u9fa5\u9fa6\u9fff\u4e00",
            "Mixed \u0420\u0443\u0441 \u0639\u0631\u0628 \u0939\u093f\u0928\u094d\u0926\u0940 \u65e5\u672c 123 !!",
            "it's IT'S we'll WE'LL 'ſ x'd", "def f(x):\n    return x ** 2  # 1234\r\n\r\n",
            "http://example.com/a?b=1&c=22#d"]
    return out


def test_generated_strings_against_tokenizers(backend):
    n = 150 if backend == "pywasm" else 3000
    texts = list(_random_texts(n, 17)) + _structured_texts()[::7 if backend == "pywasm" else 1]
    for text in texts:
        for name in NAMES:
            _check(text, name, "text %r:" % (text,))


def test_long_runs_against_tokenizers(backend):
    """Texts of 64K characters of one repeated unit: each scanner walks long runs once (the C
    stress test counts the work at 1 MB)."""
    if backend == "pywasm":
        pytest.skip("pywasm interprets ~0.2M instructions/s: large inputs run on native and wasmtime")
    units = ["a", " ", "\n", "\r\n", "7", "!", "\u65e5", "\x01", "\ue000", "\u3000", "\xa0", "\u0301",
             " a", "  a", "\x01a", "#a", "!a", "a1", "\u65e51", "\u30fb\u30ab", " !", " \n", "'s"]
    for unit in units:
        text = unit * (65536 // len(unit))
        for name in NAMES:
            _check(text, name, "unit %r:" % (unit,))


@pytest.mark.parametrize("script_aware", [False, True])
def test_generated_strings_against_the_oracle(backend, script_aware):
    """Script-aware mode: chunks first, each pattern's split inside each chunk (the oracle's
    chunker; deepseek_v3's three splits run on each chunk as on a whole text)."""
    n = 60 if backend == "pywasm" else 1500
    for text in list(_random_texts(n, 23 + script_aware)) + _structured_texts()[::7 if backend == "pywasm" else 1]:
        for name in NAMES:
            want = oracle.pretokenize(text, name, script_aware)
            assert supertok.pretokenize(text, name, script_aware) == want, (name, text)
            assert supertok.pretokenize_count(text, name, script_aware) == len(want)


# ---- a model of merge rules over llama3 --------------------------------------------------------

def _training_docs():
    rng = random.Random(5)
    words = ("the of and to in is was for on that with as by at from his her they we you it this "
             "tokenizer merge piece line text model don't it's 2024 12345 \u65e5\u672c \u0434\u0430").split()
    return [" ".join(rng.choice(words) for _ in range(rng.randrange(5, 30))) + rng.choice([".", ",", "!!", ""]) + "\n"
            for _ in range(300)]


@pytest.fixture(scope="module")
def trained():
    """Small byte-level rules models trained with each pattern, by name."""
    return {name: supertok.train(iter(_training_docs()), vocab_size=340, pattern=name) for name in NAMES}


def _reference_encode(text, name, merges):
    """A plain merge-rank BPE of each piece (rule i makes id 256 + i)."""
    ranks = {(a, b): i for i, (a, b, _) in enumerate(merges)}
    out = []
    for p in supertok.pretokenize(text, name):
        ids = list(p.encode("utf-8"))
        while len(ids) > 1:
            r = min(ranks.get(pair, 1 << 30) for pair in zip(ids, ids[1:]))
            if r == 1 << 30:
                break
            a, b = next(pair for pair, k in ranks.items() if k == r)
            merged, k = [], 0
            while k < len(ids):
                if k + 1 < len(ids) and ids[k] == a and ids[k + 1] == b:
                    merged.append(256 + r)
                    k += 2
                else:
                    merged.append(ids[k])
                    k += 1
            ids = merged
        out += ids
    return out


def test_model_loads_and_encodes_as_merge_rank_bpe(backend, trained, tmp_path):
    """The model file names the pattern; loaded back it encodes each piece as a merge-rank BPE."""
    texts = _training_docs()[:30] + ["x  y   z\n\n!! 12345 ok //\r\n", "\u65e5\u672c\u8a9e 2024\u5e74 it's",
                                     "\x01abc \ue000 \u3000x", ""]
    for name in NAMES:
        path = tmp_path / ("%s.model" % name)
        trained[name].save(str(path))
        assert ("\npattern %s\n" % name).encode() in path.read_bytes()
        enc = supertok.load_model(str(path))
        assert enc.merges == trained[name].merges and len(enc.merges) > 50
        for t in texts:
            want = _reference_encode(t, name, enc.merges)
            assert enc.encode(t) == want, (name, t)
            assert enc.decode(want) == t


def test_exports(backend, trained, tmp_path):
    """Each pattern exports to a tokenizer.json whose pre-tokenizer is the model's (llama3, qwen2:
    its Split; deepseek_v3: its three Splits in sequence) then ByteLevel, and tokenizers gives our
    ids (the export's check); none exports to a tiktoken rank file (tiktoken ships none of the
    patterns)."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: this runs on native and wasmtime")
    sample = _training_docs()[:60] + ["x  y   z\n\n!! 12345 ok //\r\n", "\u0422\u0435\u0441\u0442 \u4e2d\u6587 "
                                      "\U0001f600 !!! \u00a0 end  ", "#include <x> 1234567 \u65e5\u672c\u8a9e\u30fb\x01a"]
    for name in NAMES:
        out = tmp_path / ("%s.json" % name)
        result = trained[name].export(str(out), "hf", sample=sample)
        assert not result.mismatches, result
        pre = json.loads(out.read_text(encoding="utf-8"))["pre_tokenizer"]["pretokenizers"]
        assert [p["type"] for p in pre] == ["Split"] * len(REGEXES[name]) + ["ByteLevel"]
        assert [p["pattern"] for p in pre[:-1]] == [{"Regex": r} for r in REGEXES[name]]
        assert all(p["behavior"] == "Isolated" and p["invert"] is False for p in pre[:-1])
        assert pre[-1]["add_prefix_space"] is False and pre[-1]["use_regex"] is False
        hf = tokenizers.Tokenizer.from_file(str(out))
        for t in sample:
            assert hf.encode(t, add_special_tokens=False).ids == trained[name].encode(t), (name, t)
        with pytest.raises(Exception, match="tiktoken does not ship"):
            trained[name].export(str(tmp_path / ("%s.tiktoken" % name)), "tiktoken")
