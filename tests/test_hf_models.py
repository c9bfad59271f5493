"""tools/fetch_hf_tokenizers.py and the HuggingFace tokenizer.json files it fetches or exports.

- The GPT-2 export (built here from py/supertok/vocab/r50k_base.tiktoken by tokenizers, offline):
  tiktoken r50k_base's ids on the vendored UDHR lines, edge cases and <|endoftext|> (and, with the
  corpora, 256 KiB of each of the 8 corpus languages: slow); the bytes the tool writes are those
  tests/data/hf_tokenizers.json records (the export is deterministic); the tool skips a model
  already present, rebuilds a damaged file, and refuses one whose hash differs.
- The fetched files (skipped until `python tools/fetch_hf_tokenizers.py` has run): their sha256
  (tests/hf_models.py) and the facts the loader is written against (model, sizes, pre-tokenizers).
"""
import importlib.util
import json
import os

import pytest

from conftest import CORPORA, ROOT, corpus_blocks, corpus_path
from hf_models import HF_MODELS, expected, hf_model_path

tokenizers = pytest.importorskip("tokenizers")  # a pinned test dependency: never skips in CI
tiktoken = pytest.importorskip("tiktoken")

_spec = importlib.util.spec_from_file_location("fetch_hf_tokenizers", os.path.join(ROOT, "tools", "fetch_hf_tokenizers.py"))
fetch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fetch)

LANGS = ["en", "zh", "ja", "ar", "ru", "el", "hi", "code"]
EDGE = ["", " ", "  ", "\n\n\n", "hello world", " hello  world ", "I'm it's we'll they've you'd", "'S 'LL",
        "12345678901234567890", "a\u00a0b", "  \t\n x", "日本語のテキスト", "🤗🤗 emoji", "\u0000\u0001 ctl",
        "x" * 5000, " " * 3000 + "y", "Ünïcödé nörmälïzätïön", "tab\tsep\r\nline"]


@pytest.fixture(scope="module")
def gpt2():
    return fetch.build_gpt2()


@pytest.fixture(scope="module")
def r50k():
    return fetch.r50k_tiktoken()


def udhr_lines():
    with open(os.path.join(ROOT, "vectors", "texts", "udhr.jsonl"), encoding="utf-8") as f:
        return [r["text"] for r in map(json.loads, f) if "text" in r]


def test_data_file_records_every_model():
    data = expected()
    assert list(data) == HF_MODELS
    for name in HF_MODELS:
        files = data[name]["files"]
        assert set(files) == {"tokenizer.json", "tokenizer_config.json"}
        for rec in files.values():
            assert len(rec["sha256"]) == 64 and rec["bytes"] > 0
        assert ("3.7.2" in data[name]["source"]) == (name != "gpt2")


def test_gpt2_vocab_and_merges(gpt2):
    ranks = fetch.load_ranks()
    vocab, merges = fetch.vocab_and_merges(ranks)
    assert len(vocab) == len(ranks) == 50256 and sorted(vocab.values()) == list(range(50256))
    assert vocab["Ġthe"] == 262 and merges[0] == ("Ġ", "t")
    assert gpt2.get_vocab_size() == 50257 and gpt2.token_to_id("<|endoftext|>") == 50256


def test_gpt2_export_gives_r50k_ids(gpt2, r50k):
    texts = udhr_lines() + EDGE
    for text in texts:
        assert gpt2.encode(text, add_special_tokens=False).ids == r50k.encode_ordinary(text), text[:80]
    joined = "<|endoftext|>".join(texts[:50])
    assert gpt2.encode(joined, add_special_tokens=False).ids == r50k.encode(joined, allowed_special="all")
    assert gpt2.decode(r50k.encode_ordinary(texts[3])) == texts[3]


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
@pytest.mark.parametrize("lang", LANGS)
def test_gpt2_export_gives_r50k_ids_on_corpora(gpt2, r50k, lang):
    path = corpus_path(lang + ".txt.xz")
    for block in corpus_blocks(path, 32768, sample_chars=256 * 1024):
        a, b = gpt2.encode(block, add_special_tokens=False).ids, r50k.encode_ordinary(block)
        assert a == b, "%s: first difference at id %d" % (lang, next(i for i, (x, y) in enumerate(zip(a + [-1], b + [-1])) if x != y))


def test_tool_exports_the_recorded_gpt2(tmp_path, capsys):
    """The tool builds GPT-2 into an empty folder with the recorded hashes, then leaves it alone."""
    assert fetch.main(["--dir", str(tmp_path), "--only", "gpt2"]) == 0
    rec = expected()["gpt2"]["files"]
    for name, want in rec.items():
        assert fetch.sha256_file(str(tmp_path / "gpt2" / name)) == want["sha256"], name
    capsys.readouterr()
    assert fetch.main(["--dir", str(tmp_path), "--only", "gpt2"]) == 0
    assert "present, sha256 verified" in capsys.readouterr().err


def test_tool_rebuilds_a_damaged_file(tmp_path):
    assert fetch.main(["--dir", str(tmp_path), "--only", "gpt2"]) == 0
    p = tmp_path / "gpt2" / "tokenizer.json"
    p.write_text("{}")
    assert fetch.main(["--dir", str(tmp_path), "--only", "gpt2"]) == 0
    assert fetch.sha256_file(str(p)) == expected()["gpt2"]["files"]["tokenizer.json"]["sha256"]


def test_tool_refuses_a_changed_file(tmp_path, monkeypatch, capsys):
    """A file whose hash is not the recorded one stays out of the cache (left as .mismatch); exit 1."""
    wrong = expected()
    wrong["gpt2"]["files"]["tokenizer.json"]["sha256"] = "0" * 64
    monkeypatch.setattr(fetch, "load_expected", lambda: {"models": wrong})
    assert fetch.main(["--dir", str(tmp_path), "--only", "gpt2"]) == 1
    assert not (tmp_path / "gpt2" / "tokenizer.json").exists()
    assert (tmp_path / "gpt2" / "tokenizer.json.mismatch").exists()
    assert "a changed download or export" in capsys.readouterr().err


def test_tool_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SUPERTOK_HF_TOKENIZERS", str(tmp_path))
    assert fetch.cache_dir() == str(tmp_path)
    monkeypatch.delenv("SUPERTOK_HF_TOKENIZERS")
    assert fetch.cache_dir() == os.path.join(ROOT, ".cache", "hf-tokenizers")


# what the loader is written against (../shared/peers.md), for each fetched file
FACTS = {
    "llama3": dict(vocab=128000, merges=280147, added=256, ignore_merges=True, splits=1, normalizer=None),
    "qwen3": dict(vocab=151643, merges=151387, added=26, ignore_merges=False, splits=1, normalizer="NFC"),
    "deepseek_v3": dict(vocab=128000, merges=127741, added=818, ignore_merges=None, splits=3, normalizer="Sequence"),
    "gpt2": dict(vocab=50256, merges=108299, added=1, ignore_merges=False, splits=0, normalizer=None),
}


def test_fetched_file(hf_tokenizer_json):
    name, path = hf_tokenizer_json
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    facts = FACTS[name]
    assert d["model"]["type"] == "BPE"
    assert len(d["model"]["vocab"]) == facts["vocab"] and len(d["model"]["merges"]) == facts["merges"]
    assert len(d["added_tokens"]) == facts["added"] and d["model"].get("ignore_merges") == facts["ignore_merges"]
    assert (d["normalizer"] or {}).get("type") == facts["normalizer"]
    pre = d["pre_tokenizer"]
    parts = pre["pretokenizers"] if pre["type"] == "Sequence" else [pre]
    assert [p["type"] for p in parts] == ["Split"] * facts["splits"] + ["ByteLevel"]
    with open(hf_model_path(name, "tokenizer_config.json"), encoding="utf-8") as f:
        assert isinstance(json.load(f), dict)
    tok = tokenizers.Tokenizer.from_file(path)
    assert tok.decode(tok.encode("Hello world 123", add_special_tokens=False).ids) == "Hello world 123"
