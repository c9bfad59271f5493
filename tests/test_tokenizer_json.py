"""HuggingFace tokenizer.json models (st_encoding_new_tokenizer_json, docs/formats/tokenizer-json.md)
against their oracle, tokenizers itself (pinned in the test extra): ids (with every added token
matched, and with the special ones left as text), decode, and the errors for files the core does
not implement, on every backend.

Two sources of models: small ones trained here by tokenizers with each pre-tokenizer the core
implements, each normalizer, ignore_merges on and off, and added tokens of every kind (so the
tests run on a fresh clone), and the open models' own files (Llama 3, Qwen 3, DeepSeek V3, and
GPT-2's exported from r50k by tokenizers) when fetched (python tools/fetch_hf_tokenizers.py).
"""
import copy
import json
import os
import random

import pytest
import tokenizers
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers, AddedToken, Regex

import supertok
from supertok._model_format import ModelError
from conftest import CORPORA, corpus_blocks, corpus_path
from hf_models import hf_model_path

# The Split regexes of the open models' files, as they write them.
LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
DEEPSEEK = [r"\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
            "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
            "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"]

SAMPLE = [
    "The quick brown fox jumps over the lazy dog. It's 2025; we'll see 1234567 items!",
    "Die Würde des Menschen ist unantastbar. Ça va? Ñandú, señor — déjà vu.",
    "Все люди рождаются свободными и равными в своем достоинстве и правах.",
    "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心。日本語のテキスト、カタカナとひらがな。",
    "كل الناس يولدون أحراراً متساوين في الكرامة والحقوق. हिन्दी पाठ यहाँ है। ภาษาไทย",
    "def f(x):\n    return x**2  # squares\r\n\r\n\tif x >= 10: print('big')\n\n\n",
    "한국어 문장입니다. Ελληνικά κείμενα. עברית כאן. 🙂👍🏽 emoji and 100,000.50 dollars",
    "e\u0301 a\u0308 \u1100\u1161\u11a8 Å Ω \ufb01 \u212b combining and compatibility forms",
]


def adversarial(rng, n=60):
    """Strings at the patterns' edges: digit runs, whitespace runs, mixed scripts, contractions in
    any case, punctuation runs, private-use characters, combining marks, added tokens inside words."""
    atoms = ["1", "12", "123", "1234", "٣٤٥", "Ⅻ", " ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", " \n ",
             "'s", "'S", "'ll", "'LL", "'ve", "'d", "'x", "word", "Word", "WORD", "naïve", "e\u0301", "\u0301",
             "中文", "かな", "カナ", "한국", "Ω", "!!", "...", "?!", " -- ", "#", "@", "\U000f0000", "\ue000",
             "\u200d", "🙂", "x", "ab", ":", "://", "<", ">", "<|s|>", "<think>", "</think>", "<｜x｜>",
             "<a>", "<a><b>", "<L>", " <L> ", "<R>", "<R>  \n", "\u3000<LR>\u00a0", "  <SL>", "\x00", "\x7f", "_", "`", "A1", "a_b", "$5", "€", "©", "½"]
    out = []
    for _ in range(n):
        out.append("".join(rng.choice(atoms) for _ in range(rng.randint(1, 40))))
    return out


def _train(pre, normalizer=None, ignore_merges=False, added=True, vocab_size=700):
    tk = tokenizers.Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tk.pre_tokenizer = pre
    if normalizer is not None:
        tk.normalizer = normalizer
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False, special_tokens=[])
    tk.train_from_iterator(SAMPLE * 20 + adversarial(random.Random(1), 200), trainer=trainer)
    if added:
        tk.add_special_tokens([AddedToken("<|s|>", special=True, normalized=False),
                               AddedToken("<|e|>", special=True, normalized=False)])
        tk.add_tokens([AddedToken("<think>", special=False, normalized=False),
                       AddedToken("</think>", special=False, normalized=False),
                       AddedToken("<｜x｜>", special=False, normalized=True),
                       AddedToken("<a>", special=False, normalized=False),
                       AddedToken("<a><b>", special=True, normalized=False),
                       AddedToken("<L>", special=False, normalized=False, lstrip=True),
                       AddedToken("<R>", special=False, normalized=False, rstrip=True),
                       AddedToken("<LR>", special=False, normalized=True, lstrip=True, rstrip=True)])
        tk.add_special_tokens([AddedToken("<SL>", special=True, normalized=False, lstrip=True)])
    return tk


def _interpreted(backend):
    """pywasm interprets the module: it runs one small model's comparison and the malformed
    files; native and wasmtime run the same wasm-built core on everything."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the tokenizer.json models run on native and wasmtime")


def _byte_level(use_regex):
    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=use_regex)


def _split_then_byte_level(*regexes):
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r), "isolated") for r in regexes] + [_byte_level(False)])


PRE = {
    "gpt2": lambda: _byte_level(True),
    "llama3": lambda: _split_then_byte_level(LLAMA3),
    "qwen2": lambda: _split_then_byte_level(QWEN2),
    "deepseek_v3": lambda: _split_then_byte_level(*DEEPSEEK),
}

VARIANTS = [  # (pattern, NFC, ignore_merges)
    ("gpt2", False, False), ("gpt2", True, True), ("llama3", False, True), ("llama3", True, False),
    ("qwen2", True, False), ("qwen2", False, True), ("deepseek_v3", False, False), ("deepseek_v3", True, True),
]


def _ids(tk, text, specials_as_text=False):
    tk.encode_special_tokens = specials_as_text
    try:
        return tk.encode(text, add_special_tokens=False).ids
    finally:
        tk.encode_special_tokens = False


def _compare(enc, tk, texts, where):
    for text in texts:
        want = _ids(tk, text)
        got = enc.encode(text, allowed_special="all")
        assert got == want, "%s: %r\n tokenizers %s\n supertok   %s" % (where, text, want, got)
        # where each token starts, in characters of the text as given (before normalization)
        starts = [a for a, _ in tk.encode(text, add_special_tokens=False).offsets]
        assert enc.encode_with_offsets(text, allowed_special="all")[1] == starts, "%s: offsets of %r" % (where, text)
        want = _ids(tk, text, specials_as_text=True)
        got = enc.encode_ordinary(text)
        assert got == want, "%s (special tokens as text): %r\n tokenizers %s\n supertok   %s" % (where, text, want, got)
        assert enc.decode(got) == tk.decode(got, skip_special_tokens=False), "%s: decode of %r" % (where, text)


@pytest.mark.parametrize("pattern,nfc,ignore_merges", VARIANTS)
def test_small_models_against_tokenizers(backend, pattern, nfc, ignore_merges):
    if (pattern, nfc) != ("gpt2", False):
        _interpreted(backend)
    tk = _train(PRE[pattern](), normalizers.NFC() if nfc else None, ignore_merges)
    enc = supertok.load_model(tk.to_str().encode("utf-8"))
    assert enc.special_tokens_set == {"<|s|>", "<|e|>", "<a><b>", "<SL>"}
    texts = SAMPLE + adversarial(random.Random(hash((pattern, nfc, ignore_merges)) & 0xFFFF), 10 if backend == "pywasm" else 150)
    _compare(enc, tk, texts, "%s nfc=%s ignore_merges=%s" % (pattern, nfc, ignore_merges))


def test_pickles_by_the_file(backend):
    _interpreted(backend)
    import pickle
    tk = _train(PRE["gpt2"]())
    enc = supertok.load_model(tk.to_str().encode("utf-8"))
    again = pickle.loads(pickle.dumps(enc))
    assert again.encode(SAMPLE[0] + "<|s|>", allowed_special="all") == enc.encode(SAMPLE[0] + "<|s|>", allowed_special="all")


def test_loads_from_a_path_and_a_dict(backend, tmp_path):
    _interpreted(backend)
    tk = _train(PRE["gpt2"](), added=False)
    path = tmp_path / "tiny.json"
    tk.save(str(path))
    enc = supertok.load_model(str(path))
    assert enc.name == "tiny"
    assert supertok.load_model(json.loads(path.read_text("utf-8"))).encode(SAMPLE[1]) == enc.encode(SAMPLE[1])


# ---- files the core does not implement: each refused with the field named ----------------------

def _base():
    return json.loads(_train(PRE["llama3"]()).to_str())


def _mutate(path, value):
    def f(d):
        node = d
        for k in path[:-1]:
            node = node[k]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return f


def _set_added(field):
    def f(d):
        d["added_tokens"][0][field] = True
    return f


def _drop_byte(d):
    del d["model"]["vocab"]["Ġ"]
    d["model"]["merges"] = [m for m in d["model"]["merges"] if "Ġ" not in (m if isinstance(m, list) else m.split(" "))]


def _unknown_merge(d):
    d["model"]["merges"].insert(3, ["zzqq", "a"])


def _repeat_merge(d):
    d["model"]["merges"].append(d["model"]["merges"][0])


BAD = [
    ("model.type", _mutate(["model", "type"], "WordPiece"), "model.type: only BPE models are supported"),
    ("dropout", _mutate(["model", "dropout"], 0.1), "model.dropout"),
    ("prefix", _mutate(["model", "continuing_subword_prefix"], "##"), "model.continuing_subword_prefix"),
    ("normalizer", _mutate(["normalizer"], {"type": "Lowercase"}), 'normalizer: type "Lowercase" is not supported'),
    ("regex", _mutate(["pre_tokenizer", "pretokenizers", 0, "pattern", "Regex"], r"\w+|\s+"),
     "is not one the core implements"),
    ("behavior", _mutate(["pre_tokenizer", "pretokenizers", 0, "behavior"], "Removed"), "not Isolated"),
    ("pre type", _mutate(["pre_tokenizer"], {"type": "Whitespace"}), 'type "Whitespace" is not supported'),
    ("prefix space", _mutate(["pre_tokenizer", "pretokenizers", 1, "add_prefix_space"], True), "add_prefix_space"),
    ("decoder", _mutate(["decoder"], None), "decoder: none"),
    ("decoder type", _mutate(["decoder"], {"type": "WordPiece", "prefix": "##", "cleanup": True}), 'decoder: type "WordPiece"'),
    ("truncation", _mutate(["truncation"], {"max_length": 5, "strategy": "LongestFirst", "stride": 0, "direction": "Right"}),
     "truncation"),
    ("single_word", _set_added("single_word"), "sets single_word"),
    ("no byte", _drop_byte, "byte 32 has no token"),
    ("unknown merge part", _unknown_merge, "model.merges[3]: the left part \"zzqq\" is not in the vocabulary"),
    ("repeated merge", _repeat_merge, "repeats merge 0"),
    ("no model", _mutate(["model"], KeyError), "no model"),
    ("unknown field", _mutate(["extra"], 1), 'unknown field "extra"'),
]


@pytest.mark.parametrize("name,mutate,message", BAD, ids=[b[0] for b in BAD])
def test_unsupported_files_are_refused_naming_the_field(backend, name, mutate, message):
    _interpreted(backend)
    d = _base()
    mutate(d)
    with pytest.raises(ModelError) as info:
        supertok.load_model(json.dumps(d).encode("utf-8"))
    assert message in str(info.value)
    assert info.value.offset is not None


@pytest.mark.parametrize("data,message", [
    (b"", "expected an object"), (b"{", "the file ends"), (b'{"model": {"type": "BPE", "vocab": {"a": 1e3}, "merges": []}}', "whole number"),
    (b'{"model": "\\ud800"}', "lone high surrogate"), (b'{"model": "\xff"}', "invalid UTF-8"),
    (b"[" * 100000, "expected an object"), (b'{"model": ' + b"[" * 100000, "nested too deep"),
])
def test_malformed_json_is_refused_with_its_offset(backend, data, message):
    from supertok.encoding import _load_tokenizer_json  # the core's reader, whatever the bytes look like
    with pytest.raises(ModelError) as info:
        _load_tokenizer_json(data, "tokenizer.json")
    assert message in str(info.value)
    assert 0 <= info.value.offset <= len(data)


# ---- the open models' own files -----------------------------------------------------------------

OPEN_MODELS = ["llama3", "qwen3", "deepseek_v3", "gpt2"]
SAMPLE_CHARS = 60_000
CORPUS_FILES = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else [])
                      if f.endswith(".txt.xz")) or ["en.txt.xz"]


@pytest.fixture(scope="module", params=OPEN_MODELS)
def open_model(request):
    path = hf_model_path(request.param)
    return request.param, path, tokenizers.Tokenizer.from_file(path)


def test_open_models_on_adversarial_text(backend, open_model):
    _interpreted(backend)
    name, path, tk = open_model
    enc = supertok.load_model(path)
    _compare(enc, tk, SAMPLE + adversarial(random.Random(7), 30 if backend == "pywasm" else 200), name)


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_open_models_on_every_corpus_file(backend, open_model):
    _interpreted(backend)
    name, path, tk = open_model
    enc = supertok.load_model(path)
    for f in CORPUS_FILES:
        for i, block in enumerate(corpus_blocks(corpus_path(f), 20_000, SAMPLE_CHARS)):
            want = _ids(tk, block)
            got = enc.encode(block, allowed_special="all")
            if got != want:
                k = next((k for k, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
                raise AssertionError("%s on %s block %d: first difference at id %d: tokenizers %s, supertok %s (%r)"
                                     % (name, f, i, k, want[k:k + 5], got[k:k + 5], tk.decode(want[max(0, k - 5):k + 5])))


# ---- JavaScript: the same files in Node through the wasm module ----------------------------------

NODE_SCRIPT = r"""
import { fromTokenizerJson } from %s;
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
const enc = await fromTokenizerJson(readFileSync(job.path));
const out = job.texts.map((t) => [Array.from(enc.encode(t, { allowedSpecial: "all" })), Array.from(enc.encodeOrdinary(t))]);
process.stdout.write(JSON.stringify(out));
"""


def _node_ids(path, texts):
    import shutil
    import subprocess
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript module's checks need Node.js")
    module = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wasm", "supertok.mjs")
    script = NODE_SCRIPT % json.dumps("file://" + module)
    r = subprocess.run([node, "--input-type=module", "-e", script], input=json.dumps({"path": path, "texts": texts}),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_node_small_models(tmp_path):
    for pattern, nfc, ignore_merges in VARIANTS:
        tk = _train(PRE[pattern](), normalizers.NFC() if nfc else None, ignore_merges)
        path = str(tmp_path / ("%s.json" % pattern))
        tk.save(path)
        texts = SAMPLE + adversarial(random.Random(3), 60)
        for text, (all_ids, ordinary) in zip(texts, _node_ids(path, texts)):
            assert all_ids == _ids(tk, text), "Node, %s nfc=%s: %r" % (pattern, nfc, text)
            assert ordinary == _ids(tk, text, specials_as_text=True), "Node (specials as text), %s: %r" % (pattern, text)


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_node_open_models_on_every_corpus_file(open_model):
    name, path, tk = open_model
    texts = [block for f in CORPUS_FILES for block in corpus_blocks(corpus_path(f), 20_000, 40_000)]
    texts += SAMPLE + adversarial(random.Random(11), 100)
    for text, (all_ids, _) in zip(texts, _node_ids(path, texts)):
        want = _ids(tk, text)
        assert all_ids == want, "Node, %s: %r..." % (name, text[:80])


# ---- the span cache -----------------------------------------------------------------------------

#: Patterns whose ordinary text is cut into spans that the span cache remembers (cut.c's rules
#: hold for them): every pattern of a tokenizer.json model.
SPAN_PATTERNS = {"gpt2", "llama3", "qwen2", "deepseek_v3"}


@pytest.mark.parametrize("pattern,nfc,ignore_merges", VARIANTS)
def test_spans_of_small_models(backend, serial, pattern, nfc, ignore_merges):
    """A text of several kilobytes, with added tokens inside, encoded three times: each call's ids
    and offsets are tokenizers' (the second and third found in the span cache for the patterns
    with cut rules), and the same again among other text."""
    _interpreted(backend)
    tk = _train(PRE[pattern](), normalizers.NFC() if nfc else None, ignore_merges)
    enc = supertok.load_model(tk.to_str().encode("utf-8"))
    body = " ".join(SAMPLE) + "\n" + " ".join(adversarial(random.Random(4), 30))
    text = (body + " <|s|> " + body + "<L>  word <R> x\n") * 4
    want_ids, want_starts = _ids(tk, text), [a for a, _ in tk.encode(text, add_special_tokens=False).offsets]
    for call in range(3):
        assert enc.encode(text, allowed_special="all") == want_ids, (pattern, call)
        assert enc.encode_with_offsets(text, allowed_special="all")[1] == want_starts, (pattern, call)
    hits = enc.cache_info()["span_hits"]
    assert (hits > 0) == (pattern in SPAN_PATTERNS), (pattern, enc.cache_info())
    for before in ("x", " ", "\n", "<|e|>", "中文 "):
        other = before + text[: len(text) // 2] + before
        assert enc.encode(other, allowed_special="all") == _ids(tk, other), (pattern, before)


def test_spans_of_open_models(backend, serial, open_model):
    """An open model's text from the corpora (or the samples), twice: tokenizers' ids both times,
    the second from the span cache."""
    _interpreted(backend)
    name, path, tk = open_model
    enc = supertok.load_model(path)
    text = "\n".join(SAMPLE) * 30
    want = _ids(tk, text)
    assert enc.encode(text, allowed_special="all") == want
    first = enc.cache_info()
    assert enc.encode(text, allowed_special="all") == want
    again = enc.cache_info()
    assert again["span_hits"] > first["span_hits"] and again["span_misses"] == first["span_misses"], (name, again)


# ---- the compact form ---------------------------------------------------------------------------

@pytest.mark.parametrize("pattern,nfc,ignore_merges", VARIANTS[::2])
def test_compact_form_is_the_same_model(backend, pattern, nfc, ignore_merges):
    _interpreted(backend)
    tk = _train(PRE[pattern](), normalizers.NFC() if nfc else None, ignore_merges)
    enc = supertok.load_model(tk.to_str().encode("utf-8"))
    image = enc.save_compact()
    assert image[:8] == b"sthfvc\x00\x01"
    again = supertok.load_model(image)
    assert again.special_tokens_set == enc.special_tokens_set and again.n_vocab == enc.n_vocab
    assert again.save_compact() == image
    texts = SAMPLE + adversarial(random.Random(5), 20 if backend == "pywasm" else 80)
    _compare(again, tk, texts, "compact %s" % pattern)


def test_open_models_compact_form(backend, open_model):
    _interpreted(backend)
    name, path, tk = open_model
    image = supertok.load_model(path).save_compact()
    assert len(image) < os.path.getsize(path) / 3
    _compare(supertok.load_model(image), tk, SAMPLE + adversarial(random.Random(9), 60), "compact " + name)


def test_damaged_compact_images_are_refused_or_load(backend):
    _interpreted(backend)
    image = supertok.load_model(_train(PRE["deepseek_v3"](), vocab_size=400).to_str().encode("utf-8")).save_compact()
    rng = random.Random(2)
    cuts = sorted(set([0, 7, 8, 9, 20, 300, len(image) - 1] + [rng.randrange(len(image)) for _ in range(40)]))
    damaged = [image[:k] for k in cuts]
    for _ in range(150):
        b = bytearray(image)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(8, len(b))] = rng.randrange(256)
        damaged.append(bytes(b))
    from supertok.encoding import _load_tokenizer_json  # the core's reader, whatever the bytes look like
    for data in damaged:
        try:
            enc = _load_tokenizer_json(data, "model.stvc")
        except ModelError as exc:
            assert exc.offset is not None and 0 <= exc.offset <= len(data)
            continue
        enc.decode(enc.encode(SAMPLE[3], allowed_special="all"))  # a damaged image that loads still works


def _leb(x):
    o = bytearray()
    while True:
        b, x = x & 0x7F, x >> 7
        o.append(b | (0x80 if x else 0))
        if not x:
            return bytes(o)


def _image(n_ids, merges, added_id=0, spelled=()):
    """A compact image as core_c/tests/fuzz_tokenizer_json.c's hostile() builds one (gpt2's pattern,
    the bytes as ids 0..255; merges (left, right, made); spelled: (id, bytes) written out)."""
    m = bytearray(b"sthfvc\x00\x01") + _leb(1) + _leb(0) + _leb(n_ids) + _leb(len(merges)) + _leb(1 if added_id else 0)
    for b in range(256):
        m += _leb(b)
    prev = 0
    for left, right, made in merges:
        d = made - prev
        m += _leb(left) + _leb(right) + _leb(d << 1 if d >= 0 else ((-d) << 1) - 1)
        prev = made
    m += _leb(len(spelled))
    for tid, p in spelled:
        m += _leb(tid) + _leb(len(p)) + p
    if added_id:
        m += _leb(added_id) + _leb(1) + _leb(5) + b"<|s|>"
    return bytes(m)


_DERIVED = "compact image: the merges' tokens hold more bytes than an image of this size may"
_JOINED = "compact image: a merge does not make its parts' bytes joined"
HOSTILE = [  # the C core's reports, every backend's (found by fuzz_tokenizer_json)
    ("doubling", _image(256 + 30, [(97, 97, 256)] + [(255 + k, 255 + k, 256 + k) for k in range(1, 30)]), 548,
     _DERIVED + " (8 a byte)"),
    ("chain", _image(256 + 4000, [(97, 98, 256)] + [(255 + k, 99, 256 + k) for k in range(1, 4000)]), 16400,
     _DERIVED + " (8 a byte)"),
    ("made a byte", _image(260, [(97, 98, 256), (97, 98, 120)], 259), 8, _JOINED),
    ("made twice", _image(260, [(97, 98, 256), (97, 99, 256)], 259), 8, _JOINED),
    ("spelled otherwise", _image(260, [(97, 98, 256)], 259, [(256, b"ac")]), 8, _JOINED),
    ("spelled longer", _image(260, [(97, 98, 256)], 259, [(256, b"abc")]), 8, _JOINED),
    ("compared", _image(260, [(257, 97, 256)] * 200, 259, [(256, b"a" * 1000), (257, b"a" * 999)]), 8, _DERIVED),
    ("repeated pair", _image(260, [(97, 98, 256), (97, 98, 256)], 259), 0, "model.merges[1]: the pair repeats merge 0"),
    ("same bytes", _image(260, [(97, 98, 256), (97, 98, 257)], 259), 0,
     'model.vocab: the tokens cannot be stored (token "ab" has rank 256 on an earlier line)'),
]


@pytest.mark.parametrize("name,data,offset,message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_compact_images(backend, name, data, offset, message):
    _interpreted(backend)
    from supertok.encoding import _load_tokenizer_json
    with pytest.raises(ModelError) as info:
        _load_tokenizer_json(data, "model.stvc")
    assert info.value.detail == f"{message} at byte {offset}" and info.value.offset == offset
    assert supertok.load_model(_image(260, [(97, 98, 256)], 259, [(256, b"ab")])).encode("ab<|s|>", allowed_special="all") == [256, 259]


def test_repeated_merge_refused_at_its_offset(backend):
    _interpreted(backend)
    d = _base()
    ms = d["model"]["merges"]
    ms.insert(3, ms[1])
    d["model"]["merges"] = "@merges@"
    head, tail = json.dumps(d).split('"@merges@"')
    parts = [json.dumps(m) for m in ms]
    data = (head + "[" + ", ".join(parts) + "]" + tail).encode("utf-8")
    at = len(head) + 1 + sum(len(q) + 2 for q in parts[:3])  # merge 3's own offset (all ASCII: json.dumps escapes)
    with pytest.raises(ModelError) as info:
        supertok.load_model(data)
    assert info.value.detail == f"model.merges[3]: the pair repeats merge 1 at byte {at}"
    assert info.value.offset == at


def test_command_line_compact(tmp_path):
    import subprocess
    import sys
    tk = _train(PRE["qwen2"](), normalizers.NFC())
    src = tmp_path / "tokenizer.json"
    tk.save(str(src))
    out = tmp_path / "qwen.stvc"
    r = subprocess.run([sys.executable, "-m", "supertok", "compact", str(src), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "supertok", "encode", "--model", str(out), "--allowed-special", "all", "-"],
                       input=SAMPLE[3] + "<|s|>", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == _ids(tk, SAMPLE[3] + "<|s|>")
    r = subprocess.run([sys.executable, "-m", "supertok", "compact", str(out), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode != 0 and "destroy the input" in r.stderr


def test_long_texts_and_batches(backend):
    """A text long enough to be cut and encoded in parts on threads (native), and encode_batch."""
    _interpreted(backend)
    tk = _train(PRE["gpt2"](), normalizers.NFC())
    enc = supertok.load_model(tk.to_str().encode("utf-8"))
    rng = random.Random(4)
    text = " ".join(rng.choice(SAMPLE + adversarial(rng, 50)) for _ in range(6000))
    assert len(text.encode("utf-8")) > 300_000
    assert enc.encode(text, allowed_special="all") == _ids(tk, text)
    batch = SAMPLE + adversarial(rng, 40)
    assert enc.encode_batch(batch, allowed_special="all") == [_ids(tk, t) for t in batch]
    assert enc.encode_ordinary_batch(batch) == [_ids(tk, t, specials_as_text=True) for t in batch]
