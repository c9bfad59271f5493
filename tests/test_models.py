"""Merge-rules models (docs/design.md §7) and UBE models (docs/design.md §6) on every backend.

- vectors/models/encode.jsonl: encode_with_offsets(text, allowed_special=allowed) gives `ids`
  and `starts`; count() agrees.
- vectors/models/decode.jsonl: decode(ids) == text; under errors="strict" a UbeDecodeError whose
  index is strict_error (or the text when it is null); an incremental decoder fed one id at a
  time returns exactly `stream`, then `flush`.
- The models are vectors/models/*.json (the superword models: *.stmodel, model format version 2,
  script-aware for super_ube_small), loaded with supertok.load_model.
- A differential run against the reference of vectors/generate_models.py on generated text
  (hypothesis), the rules-versus-ranks example, load_model's errors, and the UBE model's
  byte-level calls (decode_single_token_bytes refuses, token_symbols answers).

pywasm runs the documented subset of each vectors file (tests/vectors_util.py) and no
differential run; the fast lane a few records of each model of that subset.
"""
import json
import os
import subprocess
import sys

import pytest
import supertok
import vectors_util
from conftest import ROOT
from vectors_util import PYWASM_HEAD, PYWASM_STRIDE
from vectors_util import load as load_vectors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

VEC_DIR = os.path.join(ROOT, "vectors", "models")
MODEL_NAMES = ("ube_small", "bytes_small", "super_bytes_small", "super_ube_small")
SUPER_MODELS = ("super_bytes_small", "super_ube_small")  # model files only (no JSON form)
PYWASM_MAX_CHARS = 3000  # pywasm (about a millisecond per character) skips the 2,000-word texts
PYWASM_SUPER_HEAD, PYWASM_SUPER_STRIDE = 60, 25  # pywasm's subset of the superword models' records
sys.path.insert(0, os.path.join(ROOT, "vectors"))


def _model_dict(name):
    if name in SUPER_MODELS:  # the reference's dict, read from the model file
        import generate_models
        with open(_model_path(name), encoding="utf-8") as f:
            return generate_models.model_from_text(f.read())
    with open(os.path.join(VEC_DIR, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


def _model_path(name):
    return os.path.join(VEC_DIR, name + (".stmodel" if name in SUPER_MODELS else ".json"))


_models = {}


def model(name, backend):
    key = (name, backend)
    if key not in _models:
        _models[key] = supertok.load_model(_model_path(name))
    return _models[key]


PYWASM_FAST_PER_MODEL = 10  # pywasm's fast lane: the first records of each model in its subset


def _selected(records, backend, part=vectors_util.PART_ALL):
    """vectors_util.select; on pywasm only texts of at most PYWASM_MAX_CHARS characters, and of the
    superword models' records only the first PYWASM_SUPER_HEAD of each model (their hand-written
    superword texts) and every PYWASM_SUPER_STRIDE-th after them; of that subset the fast lane
    runs the first PYWASM_FAST_PER_MODEL records of each model, the slow part the others."""
    if backend != "pywasm":
        return vectors_util.select(records, backend)
    out, seen = [], {}
    for i, r in enumerate(records):
        k = seen[r["model"]] = seen.get(r["model"], -1) + 1
        if len(r.get("text", "")) > PYWASM_MAX_CHARS:
            continue
        if r["model"] in SUPER_MODELS:
            if k < PYWASM_SUPER_HEAD or k % PYWASM_SUPER_STRIDE == 0:
                out.append((i, r))
        elif i < PYWASM_HEAD or i % PYWASM_STRIDE == 0:  # vectors_util.select's rule
            out.append((i, r))
    if part == vectors_util.PART_ALL:
        return out
    taken = {}
    fast = []
    for i, r in out:
        taken[r["model"]] = taken.get(r["model"], 0) + 1
        fast.append(taken[r["model"]] <= PYWASM_FAST_PER_MODEL)
    return [ir for ir, f in zip(out, fast) if f == (part == vectors_util.PART_FAST)]


def test_headers():
    for name, fields in (("encode.jsonl", {"model", "text", "allowed", "ids", "starts"}),
                         ("decode.jsonl", {"model", "ids", "text", "strict_error", "stream", "flush"})):
        header, records = load_vectors(os.path.join(VEC_DIR, name))
        meta = header["_meta"]
        assert meta["file"] == name and meta["part"] == "models"
        assert set(meta["fields"]) == fields
        assert all(set(r) == fields for r in records)
        assert {r["model"] for r in records} == set(MODEL_NAMES)
        assert len(records) >= 1000


def test_pywasm_fast_lane_covers_every_model():
    for name in ("encode.jsonl", "decode.jsonl"):
        _, records = load_vectors(os.path.join(VEC_DIR, name))
        fast = _selected(records, "pywasm", vectors_util.PART_FAST)
        rest = _selected(records, "pywasm", vectors_util.PART_REST)
        assert {r["model"] for _, r in fast} == set(MODEL_NAMES), name
        assert sorted(fast + rest) == sorted(_selected(records, "pywasm"))


def _check_encode_record(backend, r):
    enc = model(r["model"], backend)
    ids, starts = enc.encode_with_offsets(r["text"], allowed_special=set(r["allowed"]), disallowed_special=())
    n = enc.count(r["text"], allowed_special=set(r["allowed"]), disallowed_special=())
    if ids != r["ids"] or starts != r["starts"] or n != len(r["ids"]):
        return ["ids %s starts %s count %d; expected %s %s" % (ids[:10], starts[:10], n, r["ids"][:10], r["starts"][:10])]
    return []


def test_encode_vectors(backend, vector_part):
    _, records = load_vectors(os.path.join(VEC_DIR, "encode.jsonl"))
    vectors_util.run_records("vectors/models/encode.jsonl", backend, _selected(records, backend, vector_part),
                             lambda i, r: _check_encode_record(backend, r),
                             lambda i, r: "record %d (%s, %r)" % (i, r["model"], r["text"][:40]))


def _check_decode_record(backend, r):
    enc = model(r["model"], backend)
    got = enc.decode(r["ids"])
    try:
        strict = enc.decode(r["ids"], errors="strict")
        strict_error = None
    except supertok.UbeDecodeError as exc:
        strict, strict_error = None, exc.index
    except UnicodeDecodeError:  # a byte-level model decodes with CPython's codec
        strict, strict_error = None, "codec"
    d = enc.incremental_decoder()
    stream = [d.add(t) for t in r["ids"]]
    flush = d.flush()
    want_strict = r["strict_error"]
    if enc.alphabet == "bytes" and want_strict is not None:
        want_strict = "codec"
    problems = []
    if got != r["text"]:
        problems.append("decode %r, expected %r" % (got[:40], r["text"][:40]))
    if strict_error != want_strict or (strict_error is None and strict != r["text"]):
        problems.append("strict error %r, expected %r" % (strict_error, want_strict))
    if stream != r["stream"] or flush != r["flush"]:
        problems.append("stream %r + %r, expected %r + %r" % (stream[:6], flush, r["stream"][:6], r["flush"]))
    return problems


def test_decode_vectors(backend, vector_part):
    _, records = load_vectors(os.path.join(VEC_DIR, "decode.jsonl"))
    vectors_util.run_records("vectors/models/decode.jsonl", backend, _selected(records, backend, vector_part),
                             lambda i, r: _check_decode_record(backend, r),
                             lambda i, r: "record %d (%s, ids %s)" % (i, r["model"], r["ids"][:12]))


def test_not_stale():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "vectors", "generate_models.py"), "--check"],
                       capture_output=True, text=True)
    if r.returncode == 2:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stdout + r.stderr


def test_rules_not_ranks(backend):
    """docs/design.md §7: rules a b, c d, ab c, abc d give [ab, cd] for "abcd" (ranks would give [abcd])."""
    a, b, c, d = (ord(x) for x in "abcd")
    for alphabet in ("bytes", "ube"):
        base = 256 if alphabet == "bytes" else 512
        enc = supertok.load_model({"format": "supertok-merges", "version": 1, "alphabet": alphabet,
                                   "pattern": "o200k", "merges": [[a, b], [c, d], [base, c], [base + 2, d]]})
        assert enc.encode("abcd") == [base, base + 1]
        assert enc.encode("abc") == [base + 2]
        assert enc.decode([base + 3]) == "abcd"
        assert enc.n_vocab == base + 4


def test_ube_model_byte_calls(backend):
    enc = model("ube_small", backend)
    eot = enc.encode_single_token("<|endoftext|>")
    ids = enc.encode("中国 的")
    assert enc.token_symbols(ids[0]) == supertok.ube_encode_symbols("中国")
    with pytest.raises(ValueError, match="token_symbols"):
        enc.decode_single_token_bytes(ids[0])
    assert enc.decode_single_token_bytes(eot) == b"<|endoftext|>"
    assert enc.decode_bytes(ids) == "中国 的".encode("utf-8")
    with pytest.raises(KeyError):
        enc.token_symbols(eot)
    with pytest.raises(KeyError):
        enc.decode([enc.n_vocab + 5])
    with pytest.raises(ValueError, match="errors"):
        enc.decode(ids, errors="ignore")
    b = supertok._get()
    with pytest.raises(supertok.SupertokError):
        b.save_image(enc._handle)  # images hold tiktoken vocabularies only


BAD_MODELS = [
    ({"format": "x"}, "format"),
    ({"version": 2}, "version"),
    ({"alphabet": "utf16"}, "alphabet"),
    ({"pattern": "llama"}, "pattern"),
    ({"merges": {"a": 1}}, "merges"),
    ({"merges": [[1, 2, 3]]}, r"merges\[0\]"),
    ({"merges": [[97, -1]]}, r"merges\[0\]"),
    ({"merges": [[97, 98], [97, 600]]}, r"merges\[1\]"),   # a part not below its own id
    ({"merges": [[97, 98], [97, 98]]}, r"merges\[1\]"),    # the same pair twice
    ({"special_tokens": {"<|x|>": 3}}, "special"),         # a special on an ordinary id
    ({"special_tokens": ["<|x|>"]}, "special_tokens"),
]


@pytest.mark.parametrize("change,message", BAD_MODELS)
def test_load_model_errors(backend, change, message):
    m = {"format": "supertok-merges", "version": 1, "name": "bad", "alphabet": "ube", "pattern": "o200k",
         "merges": [[97, 98]], "special_tokens": {}}
    m.update(change)
    with pytest.raises(ValueError, match=message):
        supertok.load_model(m)


def test_load_model_file_errors(tmp_path):
    p = tmp_path / "m.json"
    p.write_text("{not json")
    with pytest.raises(ValueError, match="m.json: not JSON"):
        supertok.load_model(str(p))
    with pytest.raises(FileNotFoundError):
        supertok.load_model(str(tmp_path / "absent.json"))


# ---- differential against the reference ------------------------------------------------------

ALPHABET = ("abcdthengi \n\t.,!?'0123456789" "中国世界我们你好人民的是一不" "ですますのには"
            "한국어사람" "приветмир" "αβου" "éï" "😀👍" "\U00010000\u0800\u07ff")
# words and phrases the superword models' supermerges join (vectors/generate_models.py)
WORDS = (" of", " the", "of", "the", " as", " well", " in", " order", " to", " at", " end", " on", " top",
         " cat", " sat", " mat", " go", " la", "中国", "人民", "権利", "を", "有する", "すべて", "人は", "自由")


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_differential(backend, name):
    if backend == "pywasm":
        pytest.skip("pywasm: the vectors' subset only (an interpreter)")
    from generate_models import Reference
    ref = Reference(_model_dict(name))
    enc = model(name, backend)
    specials = list(_model_dict(name)["special_tokens"])
    examples = int(os.environ.get("SUPERTOK_HYPOTHESIS_EXAMPLES", "300"))

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.one_of(st.sampled_from(ALPHABET), st.sampled_from(specials), st.sampled_from(WORDS),
                              st.characters(blacklist_categories=("Cs",))), max_size=40).map("".join))
    def check(text):
        ids, starts = enc.encode_with_offsets(text, allowed_special="all")
        assert (ids, starts) == ref.encode(text, specials)
        assert enc.decode(ids) == text
        d = enc.incremental_decoder()
        assert "".join(d.add(t) for t in ids) + d.flush() == text

    check()


def test_cli_model(tmp_path):
    path = os.path.join(VEC_DIR, "ube_small.json")
    text = "中国 的 abcd 😀\n"
    r = subprocess.run([sys.executable, "-m", "supertok", "encode", "--model", path], input=text.encode(),
                       capture_output=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == supertok.load_model(path).encode(text)
    r = subprocess.run([sys.executable, "-m", "supertok", "decode", "--model", path], input=r.stdout,
                       capture_output=True)
    assert r.returncode == 0 and r.stdout.decode() == text
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "supertok-merges", "version": 1, "alphabet": "ube", "pattern": "o200k",
                               "merges": [[97, 9999]]}))
    r = subprocess.run([sys.executable, "-m", "supertok", "encode", "--model", str(bad)], input=b"x",
                       capture_output=True)
    assert r.returncode == 2 and b"merges[0]" in r.stderr


def test_prepare(backend):
    """Encoding.prepare builds the backtracking tables now where the encoding uses them."""
    enc = supertok.get_encoding("o200k_base")
    text = "中文字符串 Привет мир " + "a" * 100
    want = enc.encode(text)
    assert enc.prepare() is (backend != "pywasm")  # pywasm loads an image: merges only
    assert enc.prepare() is (backend != "pywasm")  # twice: nothing more to do
    assert enc.encode(text) == want
    assert model("ube_small", backend).prepare() is False



@pytest.mark.parametrize("name", SUPER_MODELS)
def test_superword_models_are_what_train_writes(backend, name, tmp_path):
    """supertok.train on the superword model's corpora with its options writes the same model file
    as the reference trainer did (vectors/generate_models.py), name and comment lines aside."""
    if backend == "pywasm":
        pytest.skip("pywasm: the vectors' subset only (an interpreter)")
    import generate_models
    import generate_train
    import train_reference
    spec = next(m for m in generate_models.SUPER_MODELS if m[0] == name)
    _, alphabet, pattern, script_aware, scripts, algorithm, s, wanted, specials, corpora = spec
    all_corpora, _ = generate_train.build_corpora()
    docs = [d for c in corpora for d in all_corpora[c]]
    opts = dict(vocab_size=len(train_reference.alphabet_symbols("paper", alphabet)) + len(specials) + wanted,
                alphabet=alphabet, pattern=pattern, script_aware=script_aware, scripts=scripts,
                special_tokens=tuple(specials), algorithm=algorithm)
    if s is not None:
        opts["supermerges"] = s
    enc = supertok.train(iter(docs), **opts)
    path = tmp_path / (name + ".stmodel")
    enc.save(str(path))

    def body(data):
        return [line for line in data.split(b"\n") if not line.startswith((b"name ", b"comment "))]

    with open(_model_path(name), "rb") as f:
        assert body(path.read_bytes()) == body(f.read())


def test_superword_model_refuses_encode_with_unstable(backend):
    # the last run of one-token words is unstable as a whole (more text can change every
    # supermerge in it), which tiktoken's (stable tokens, completions) contract cannot express
    enc = model("super_bytes_small", backend)
    assert enc.supermerges
    with pytest.raises(ValueError, match="without supermerges.*super_bytes_small"):
        enc.encode_with_unstable("of the")
    assert model("bytes_small", backend).encode_with_unstable("ab")[0] is not None
