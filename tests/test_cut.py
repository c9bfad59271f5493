"""Cutting one long text for parallel encoding (st_encoding_cut, docs/design.md §7).

The oracle is regex.findall (pinned regex, vectors/oracle.py, with its script chunker): at every
place the core says a text may be cut, pre-tokenizing the parts separately and concatenating
must give exactly the pieces of the whole, on every corpus file and on generated adversarial
text, for each pattern, plain and script-aware. Then the ids: the parallel path (forced onto
short texts, in many parts) gives tiktoken's ids on the corpora, special tokens included, and
the serial ids for the script-aware and superword models.
"""
import glob
import lzma
import os
import random

import oracle
import pytest
import supertok
from conftest import CORPORA, ROOT, corpus_path
from supertok import encoding as E

PATTERN_IDS = {"gpt2": 1, "cl100k": 2, "o200k": 3}
CONFIGS = [(p, sa) for p in PATTERN_IDS for sa in (False, True)]
CORPUS_FILES = sorted(os.path.basename(f) for f in glob.glob(os.path.join(CORPORA, "*.txt.xz"))) or ["en.txt.xz"]
MODELS = sorted(glob.glob(os.path.join(ROOT, "vectors", "models", "*.stmodel")))
PLAIN_CHARS = 200_000   # of each corpus file, for the plain patterns
SCRIPT_CHARS = 40_000   # for the script-aware mode (its oracle chunker is a Python loop)

_text_cache = {}


def corpus_text(name, chars):
    key = (name, chars)
    if key not in _text_cache:
        with lzma.open(corpus_path(name), "rt", encoding="utf-8") as f:
            _text_cache[key] = f.read(chars)
    return _text_cache[key]


def _native_only(backend):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the cut tests run on native and wasmtime")


def _pretokenizer_handle(pattern, script_aware):
    """An encoding with no merges and no specials over the pre-tokenizer: the cut rules read only
    the pre-tokenizer (and the specials and supermerges, which it has none of)."""
    b = supertok.backends.current()
    return b, b.encoding_new_merges(0, [], b"", PATTERN_IDS[pattern], 1 if script_aware else 0)


def all_cuts(b, h, data):
    out, p = [], 1
    while True:
        p = b.cut(h, data, p)
        if p >= len(data):
            return out
        out.append(p)
        p += 1


def check_cuts(text, cuts, pattern, script_aware):
    """The pieces of the parts, concatenated, are the pieces of the whole (the parts decode: every
    cut is on a character boundary)."""
    data = text.encode("utf-8")
    bounds = [0] + cuts + [len(data)]
    assert bounds == sorted(set(bounds)), "cuts not strictly ascending inside the text"
    parts = [data[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])]
    got = [p for part in parts for p in oracle.pretokenize(part, pattern, script_aware)]
    want = oracle.pretokenize(text, pattern, script_aware)
    if got != want:
        k = next(i for i, (x, y) in enumerate(zip(got, want)) if x != y) if any(
            x != y for x, y in zip(got, want)) else min(len(got), len(want))
        at = sum(len(x.encode()) for x in want[:k])
        near = [c for c in cuts if abs(c - at) < 16]
        raise AssertionError("%s%s: pieces differ from piece %d (byte %d), cuts near it %r: whole %r, parts %r" % (
            pattern, " script-aware" if script_aware else "", k, at, near, want[max(0, k - 2):k + 3],
            got[max(0, k - 2):k + 3]))


@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.parametrize("pattern,script_aware", CONFIGS)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_cuts_on_corpus(backend, name, pattern, script_aware):
    """Every cut the core finds in the first part of each corpus file is a true piece boundary."""
    if backend != "native":
        pytest.skip("the cut rule is the core's, tested on the corpora natively (wasmtime: the generated texts)")
    text = corpus_text(name, SCRIPT_CHARS if script_aware else PLAIN_CHARS)
    b, h = _pretokenizer_handle(pattern, script_aware)
    cuts = all_cuts(b, h, text.encode("utf-8"))
    check_cuts(text, cuts, pattern, script_aware)
    if name in ("en.txt.xz", "de.txt.xz", "ru.txt.xz", "zh.txt.xz", "ja.txt.xz"):
        assert len(cuts) >= 20, "the rules found almost no cut in %s (%d)" % (name, len(cuts))


# Generated adversarial text: the characters around which the rules' conditions turn.
_ATOMS = (
    list("aZéßжΩ") + ["ǅ", "ʰ", "ª", "ー", "々", "中", "文", "の", "カ", "ก", "\u0e34", "ع", "ह", "\u093f"]
    + [" ", " ", " ", "\n", "\n", "\r", "\r\n", "\t", "\u00a0", "\u1680", "\u3000", "  "]
    + list("/.,!?'\"-()") + ["'s", "'S", "'ll", "'LL", "'ſ", "'ve", "'d", "'t", "'re", "'m"]
    + list("0123") + ["\u0301", "\u0663", "Ⅻ", "😀", "𝐀", "𠀀"]
    + ["hello", " world", "Hello", " THE", "\n\n", " \n", "\n ", ".\n", "/\n", ":\n/", "!\n"]
)


def _random_text(rng, n):
    return "".join(rng.choice(_ATOMS) for _ in range(n))


@pytest.mark.parametrize("pattern,script_aware", CONFIGS)
def test_cuts_on_generated_text(backend, pattern, script_aware):
    _native_only(backend)
    rng = random.Random(1200 + PATTERN_IDS[pattern] * 2 + script_aware)
    b, h = _pretokenizer_handle(pattern, script_aware)
    rounds = 1500 if backend == "native" else 150
    found = 0
    for _ in range(rounds):
        text = _random_text(rng, rng.randrange(1, 80))
        cuts = all_cuts(b, h, text.encode("utf-8"))
        found += len(cuts)
        check_cuts(text, cuts, pattern, script_aware)
    assert found > rounds, "the generated texts gave too few cuts to test anything (%d)" % found


@pytest.mark.parametrize("pattern", ["superbpe", "llama3", "qwen2", "deepseek_v3"])
@pytest.mark.parametrize("script_aware", [False, True])
def test_no_cut_for_split_patterns(backend, script_aware, pattern):
    """superbpe's pieces run through letters, spaces and line breaks; across a whole text the
    rules are not proved for llama3, qwen2 (a tokenizer.json model's added tokens) and
    deepseek_v3: st_encoding_cut gives no cut for them (docs/design.md §7) and the text is
    encoded whole."""
    _native_only(backend)
    b = supertok.backends.current()
    h = b.encoding_new_merges(0, [], b"", supertok.PATTERNS[pattern], 1 if script_aware else 0)
    rng = random.Random(77 + script_aware)
    for _ in range(200 if backend == "native" else 20):
        data = _random_text(rng, rng.randrange(1, 80)).encode("utf-8")
        assert all_cuts(b, h, data) == []
    assert all_cuts(b, h, ("Hello world.\nNext line here\n" * 50).encode()) == []


@pytest.mark.parametrize("pattern", ["llama3", "qwen2", "deepseek_v3"])
def test_rules_hold_within_text_for_tokenizer_json_patterns(backend, pattern):
    """llama3's, qwen2's and deepseek_v3's ordinary text (between special tokens) is cut into spans
    by the same two rules (cut.c: has_rules_within), which o200k's handle finds (the same code,
    CR/LF before a letter included): every such place is a piece boundary of llama3's and qwen2's
    regex and of DeepSeek's three splits too, on generated text (with DeepSeek's punctuation
    before letters, digit groups and kana among it) and the first part of the corpus files at
    hand."""
    _native_only(backend)
    b, h = _pretokenizer_handle("o200k", False)
    rng = random.Random(4100 + len(pattern))
    atoms = _ATOMS + ["゠", "・", "\u3099", "#x", ".Ab", "@B", "_a", "a.b", "x,\nY", " \r\nZ", "\t\nq", "$", "€",
                      "中a", "a中", "٣", "²", "\x00", "\u0085", "\u2028", "A'", "'a"]
    found = 0
    for _ in range(1500 if backend == "native" else 150):
        text = "".join(rng.choice(atoms) for _ in range(rng.randrange(1, 80)))
        cuts = all_cuts(b, h, text.encode("utf-8"))
        found += len(cuts)
        check_cuts(text, cuts, pattern, False)
    assert found > 1500 if backend == "native" else found > 150, found
    if backend == "native":
        for name in CORPUS_FILES[:4]:
            if os.path.exists(os.path.join(CORPORA, name)):
                text = corpus_text(name, 50_000)
                check_cuts(text, all_cuts(b, h, text.encode("utf-8")), pattern, False)


def test_cut_arguments(backend):
    _native_only(backend)
    b, h = _pretokenizer_handle("o200k", False)
    data = b"ab cd"
    assert b.cut(h, data, 0) == 2 and b.cut(h, data, 2) == 2 and b.cut(h, data, 3) == 5
    assert b.cut(h, data, 99) == 5
    assert b.cut(h, b"", 0) == 0
    assert b.cut(h, b"ab \xff cd", 0) == 2  # bytes around a candidate must decode; others are ignored
    assert b.cut(h, b"a\xff cd", 0) == 5


# ---- special tokens: no cut next to one ------------------------------------------------------

@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_no_cut_touches_a_special(backend, name):
    _native_only(backend)
    enc = supertok.get_encoding(name)
    b = supertok.backends.current()
    rng = random.Random(7)
    specials = sorted(enc.special_tokens_set)
    for _ in range(300):
        text = "".join(rng.choice(_ATOMS[:40] + specials) for _ in range(rng.randrange(1, 40)))
        data = text.encode()
        for c in all_cuts(b, enc._handle, data):
            for s in specials:
                t = s.encode()
                for x in range(max(0, c - len(t) - 1), c + 2):
                    if data.startswith(t, x):
                        assert not (x < c + 1 and x + len(t) > c - 1), (text, c, s)


# ---- ids: the parallel path forced onto short texts ------------------------------------------

@pytest.fixture
def forced():
    prev = E.set_parallel(8, force=True)
    try:
        yield
    finally:
        E.set_parallel(prev[0], force=prev[1], min_bytes=prev[2])


@pytest.fixture(scope="module")
def tk(tmp_path_factory):
    pytest.importorskip("tiktoken", reason="tiktoken (the oracle) is not installed")
    from generate_encode import tiktoken_offline
    return tiktoken_offline(str(tmp_path_factory.mktemp("tiktoken-cache")))


@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_parallel_ids_equal_tiktoken_on_corpus(backend, name, tk, forced):
    if backend != "native":
        pytest.skip("the parallel path is the native backend's (wasm backends encode serially)")
    text = corpus_text(name, PLAIN_CHARS)
    for enc_name in ("r50k_base", "cl100k_base", "o200k_base"):
        enc = supertok.get_encoding(enc_name)
        assert len(enc._backend.cuts(enc._handle, text.encode(), 8)) > 0 or name in ("th.txt.xz",)
        want = tk[enc_name].encode_ordinary(text)
        assert enc.encode_ordinary(text) == want, (name, enc_name)
        assert enc.encode(text, disallowed_special=()) == want, (name, enc_name)
        assert enc.count(text, disallowed_special=()) == len(want)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_parallel_ids_with_specials(backend, name, tk, forced):
    if backend != "native":
        pytest.skip("the parallel path is the native backend's (wasm backends encode serially)")
    enc = supertok.get_encoding(name)
    rng = random.Random(11)
    specials = sorted(enc.special_tokens_set)
    for _ in range(200):
        text = "".join(rng.choice(_ATOMS + specials) for _ in range(rng.randrange(1, 120)))
        assert enc.encode(text, allowed_special="all") == tk[name].encode(text, allowed_special="all"), text
        allowed = set(specials[:1])
        assert enc.encode(text, allowed_special=allowed, disallowed_special=()) == \
            tk[name].encode(text, allowed_special=allowed, disallowed_special=()), text
        try:
            want = tk[name].encode(text)
        except ValueError as exc:
            with pytest.raises(ValueError) as got:
                enc.encode(text)
            assert str(got.value) == str(exc)
        else:
            assert enc.encode(text) == want


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_parallel_ids_equal_serial_for_models(backend, path, forced):
    """Script-aware and superword models: the parallel path gives the serial ids."""
    if backend != "native":
        pytest.skip("the parallel path is the native backend's (wasm backends encode serially)")
    model = supertok.load_model(path)
    texts = [corpus_text(n, SCRIPT_CHARS) for n in ("en.txt.xz", "zh.txt.xz", "ja.txt.xz", "th.txt.xz", "code.txt.xz")
             if os.path.exists(os.path.join(CORPORA, n))]
    rng = random.Random(5)
    texts += [_random_text(rng, rng.randrange(1, 200)) for _ in range(300)]
    for text in texts:
        got = model.encode_ordinary(text)
        E.set_parallel(force=False, min_bytes=1 << 62)
        want = model.encode_ordinary(text)
        E.set_parallel(force=True)
        assert got == want, (os.path.basename(path), text[:200])


_MODEL_ATOMS = _ATOMS + [" of the", " the end of the", " as well as", "the cat sat on the mat", " in order to",
                         " on top of", " go go", "Tudu nguê", " dirêtu di", " diritu di", "中文的", "カタカナ",
                         "\nthe", ".\nof the", "\nTudu", "。\n中文", "\n\nthe cat"]


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_every_cut_keeps_model_ids(backend, path):
    """At every cut the core finds for a model (script-aware, superword), the ids of the two sides
    joined are the whole text's: a run of pretokens that supermerges could join never spans one."""
    _native_only(backend)
    model = supertok.load_model(path)
    b = supertok.backends.current()
    rng = random.Random(9)
    found = 0
    rounds = 400 if backend == "native" else 40
    for _ in range(rounds):
        text = "".join(rng.choice(_MODEL_ATOMS) for _ in range(rng.randrange(1, 60)))
        data = text.encode()
        bounds = [0] + all_cuts(b, model._handle, data) + [len(data)]
        found += len(bounds) - 2
        got = [i for a, c in zip(bounds, bounds[1:]) for i in model.encode_ordinary(data[a:c].decode())]
        assert got == model.encode_ordinary(text), (os.path.basename(path), text)
    assert found > rounds // 2, "too few cuts to test anything (%d)" % found


def test_parallel_path_is_taken_and_can_be_turned_off(backend, monkeypatch):
    """Forced, a short text goes through encode_parts (the test above is not vacuous); one
    thread, or a wasm backend, never does; below the size threshold neither."""
    _native_only(backend)
    enc = supertok.get_encoding("o200k_base")
    b = enc._backend
    calls = []
    if b.parallel:
        real = b.encode_parts
        monkeypatch.setattr(b, "encode_parts", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    text = "Hello world, this is a text.\nAnd a second line of it. " * 20
    prev = E.set_parallel(2, force=True)
    try:
        want = enc.encode_ordinary(text)
        assert enc.encode(text) == want and enc.count(text) == len(want)
        assert len(calls) == (3 if b.parallel else 0)
        assert all(len(c) >= 2 for c in calls)  # at least 4 parts when forced
        E.set_parallel(1)
        assert enc.encode(text) == want and len(calls) == (3 if b.parallel else 0)
        E.set_parallel(2, force=False)
        assert enc.encode(text) == want and len(calls) == (3 if b.parallel else 0)  # short: serial
    finally:
        E.set_parallel(prev[0], force=prev[1], min_bytes=prev[2])
    with pytest.raises(ValueError):
        E.set_parallel(0)


def test_parallel_offsets_equal_serial(backend, forced):
    """encode_with_offsets through the parallel path: the parts' character offsets shifted to the
    whole text's, lone surrogates included."""
    if backend != "native":
        pytest.skip("the parallel path is the native backend's (wasm backends encode serially)")
    enc = supertok.get_encoding("o200k_base")
    rng = random.Random(3)
    texts = [_random_text(rng, rng.randrange(1, 200)) for _ in range(200)]
    texts += ["a\ud800b c\n" * 30 + "\U0001f600 x\ndé " * 20]
    if os.path.exists(os.path.join(CORPORA, "ja.txt.xz")):
        texts.append(corpus_text("ja.txt.xz", SCRIPT_CHARS))
    for text in texts:
        got = enc.encode_with_offsets(text)
        E.set_parallel(force=False, min_bytes=1 << 62)
        want = enc.encode_with_offsets(text)
        E.set_parallel(force=True)
        assert got == want, text[:200]
