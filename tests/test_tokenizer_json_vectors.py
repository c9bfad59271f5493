"""The tokenizer.json golden vectors (vectors/tokenizer_json/, written by
vectors/generate_tokenizer_json.py from HuggingFace tokenizers) on every backend.

Each model vectors/tokenizer_json/<model>.json loads with supertok.load_model, and so does its
compact image (Encoding.save_compact); for every record of cases.jsonl, both give `ids` from
encode(text, allowed_special="all") (every added token matched), `ids_specials_as_text` from
encode_ordinary(text) (the special added tokens as text; the others still matched, as tokenizers'
encode_special_tokens does), and decode(ids) is `decoded`. native and wasmtime run every record;
pywasm (an interpreter) the default subset (tests/vectors_util.py); numba every record, through
its port of the reader.

Also checked: `python vectors/generate_tokenizer_json.py --check` passes (the committed files are
not stale) when tokenizers is installed.
"""
import os
import subprocess
import sys

import pytest
import supertok
import vectors_util
from conftest import ROOT

VEC_DIR = vectors_util.path_of("tokenizer_json")
CASES = os.path.join(VEC_DIR, "cases.jsonl")
MODELS = ("deepseek_v3_ignore_merges", "gpt2", "llama3_nfc_ignore_merges", "qwen2_nfc")
REQUIRED = {"model", "text", "ids", "ids_specials_as_text", "decoded"}


def _records():
    return vectors_util.load(CASES)[1]


def test_files_and_records():
    assert vectors_util.meta(CASES)["models"] == list(MODELS)
    for name in MODELS:
        size = os.path.getsize(os.path.join(VEC_DIR, name + ".json"))
        assert size < 40000, (name, size)
    recs = _records()
    assert {r["model"] for r in recs} == set(MODELS)
    for r in recs:
        assert set(r) == REQUIRED, r


_encodings = {}


def _encodings_of(backend, name):
    key = (backend, name)
    if key not in _encodings:
        with open(os.path.join(VEC_DIR, name + ".json"), "rb") as f:
            enc = supertok.load_model(f.read())
        _encodings[key] = (enc, supertok.load_model(enc.save_compact()))
    return _encodings[key]


def test_tokenizer_json_vectors(backend, vector_part):
    chosen = vectors_util.select(_records(), backend, vector_part)

    def check(i, r):
        problems = []
        for how, enc in zip(("file", "compact image"), _encodings_of(backend, r["model"])):
            got = enc.encode(r["text"], allowed_special="all")
            if got != r["ids"]:
                problems.append("%s: ids %s, want %s" % (how, got, r["ids"]))
            got = enc.encode_ordinary(r["text"])
            if got != r["ids_specials_as_text"]:
                problems.append("%s: ids with specials as text %s, want %s" % (how, got, r["ids_specials_as_text"]))
            got = enc.decode(r["ids"])
            if got != r["decoded"]:
                problems.append("%s: decode %r, want %r" % (how, got, r["decoded"]))
        return problems

    def describe(i, r):
        return "record %d (%s): %r" % (i, r["model"], r["text"][:80])

    vectors_util.run_records("tokenizer_json/cases.jsonl", backend, chosen, check, describe)


def test_generator_check():
    pytest.importorskip("tokenizers")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "vectors", "generate_tokenizer_json.py"), "--check"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert proc.returncode == 0, proc.stdout
