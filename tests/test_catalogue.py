"""The encoding catalogue, py/supertok/catalogue.json, against tiktoken 0.14's own tables, and the
Python package against the catalogue:

- every encoding tiktoken_ext.openai_public defines is in the catalogue, in tiktoken's order, with
  tiktoken's pat_str, special tokens (in tiktoken's order: o200k_harmony's reserved range is a
  rule in the file) and explicit_n_vocab, and reads the rank file tiktoken downloads for it;
- the model tables are tiktoken.model's, in order;
- the other copies of the same facts agree with it: the rank files' vocab/<name>.json and the
  JavaScript package's compact manifest (wasm/compact/manifest.json);
- supertok's names (PATTERNS, DEFAULT_SCRIPTS, list_encoding_names, supertok.model's tables) and
  loaded encodings are the catalogue's;
- the file keeps the one layout core_c/tools/gen_model_table.py writes, says what it is, and
  describes each of its parts.

The JavaScript module's reading of the same file is checked by wasm/test/catalogue.test.mjs.
"""
import json
import os

import pytest

import supertok
from supertok import _catalogue

pytest.importorskip("tiktoken", reason="tiktoken (the oracle) is not installed")
import tiktoken.model  # noqa: E402
import tiktoken_ext.openai_public as openai_public  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOGUE = _catalogue.read()


@pytest.fixture(scope="module")
def tiktoken_encodings():
    """{name: (constructor arguments, where the ranks come from)} of tiktoken's openai_public
    encodings, built without loading any rank file: its loaders are replaced by ones that record
    what they were asked to read."""
    out = {}
    saved = openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks
    asked = []

    def recorder(kind):
        def load(*args, **kwargs):
            asked.append((kind, (list(args) + list(kwargs.values()))[0]))  # the first file named
            return {}
        return load
    openai_public.load_tiktoken_bpe = recorder("rank file")
    openai_public.data_gym_to_mergeable_bpe_ranks = recorder("data gym")
    try:
        for name, make in openai_public.ENCODING_CONSTRUCTORS.items():
            del asked[:]
            args = make()
            out[name] = (args, list(asked))
    finally:
        openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = saved
    return out


def test_encodings_are_tiktokens(tiktoken_encodings):
    assert list(CATALOGUE["encodings"]) == list(tiktoken_encodings)
    for name, (args, asked) in tiktoken_encodings.items():
        entry = CATALOGUE["encodings"][name]
        assert args["name"] == name
        assert _catalogue.pat_str(entry["pattern"]) == args["pat_str"], name
        assert list(_catalogue.special_tokens(entry).items()) == list(args["special_tokens"].items()), name
        assert entry.get("explicit_n_vocab") == args.get("explicit_n_vocab"), name
        # the ranks: the rank file tiktoken downloads, by its name; gpt2's come from GPT-2's own
        # files, which hold r50k_base's ranks (tests/test_tiktoken_surface.py compares the two)
        kind, path = asked[-1]
        if kind == "rank file":
            assert path.rsplit("/", 1)[1] == entry["rank_file"] + ".tiktoken", name
        else:
            assert (name, entry["rank_file"]) == ("gpt2", "r50k_base")


def test_harmony_reserved_range_is_a_rule():
    entry = CATALOGUE["encodings"]["o200k_harmony"]
    rules = entry["special_token_ranges"]
    assert rules == [{"template": "<|reserved_{id}|>", "first": 200013, "last": 201087}]
    specials = _catalogue.special_tokens(entry)
    assert len(specials) == len(entry["special_tokens"]) + 201087 - 200013 + 1  # no string given twice
    assert specials["<|reserved_201087|>"] == 201087 and specials["<|endofprompt|>"] == 200018


def test_model_tables_are_tiktokens():
    assert list(CATALOGUE["model_to_encoding"].items()) == list(tiktoken.model.MODEL_TO_ENCODING.items())
    assert list(CATALOGUE["model_prefix_to_encoding"].items()) == list(tiktoken.model.MODEL_PREFIX_TO_ENCODING.items())
    assert set(CATALOGUE["model_to_encoding"].values()) <= set(CATALOGUE["encodings"])


def test_rank_file_metadata_agrees():
    """vocab/<rank file>.json (read by the JavaScript module's tiktoken-format loader) and the
    compact manifest give each rank file's encoding the catalogue's pattern and special tokens."""
    with open(os.path.join(ROOT, "wasm", "compact", "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    rank_files = sorted({e["rank_file"] for e in CATALOGUE["encodings"].values()})
    assert rank_files == ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"]
    for name in rank_files:
        entry = CATALOGUE["encodings"][name]
        with open(os.path.join(ROOT, "py", "supertok", "vocab", name + ".json"), encoding="utf-8") as f:
            meta = json.load(f)
        for where, m in (("vocab/%s.json" % name, meta), ("compact manifest's %s" % name, manifest[name])):
            assert m["pat_str"] == _catalogue.pat_str(entry["pattern"]), where
            assert list(m["special_tokens"].items()) == list(_catalogue.special_tokens(entry).items()), where


def test_python_names_are_the_catalogues():
    want = {}
    for name, p in CATALOGUE["patterns"].items():
        for n in [name] + p["aliases"]:
            want[n] = p["id"]
    assert list(supertok.PATTERNS.items()) == list(want.items())
    assert sorted(set(want.values())) == [1, 2, 3, 4, 5, 6, 7]
    assert supertok.DEFAULT_SCRIPTS == tuple(CATALOGUE["default_scripts"])
    assert supertok.list_encoding_names() == list(CATALOGUE["encodings"])
    assert supertok.model.MODEL_TO_ENCODING == CATALOGUE["model_to_encoding"]
    assert supertok.model.MODEL_PREFIX_TO_ENCODING == CATALOGUE["model_prefix_to_encoding"]


@pytest.mark.parametrize("name", list(CATALOGUE["encodings"]))
def test_loaded_encodings_are_the_catalogues(backend, name):
    entry = CATALOGUE["encodings"][name]
    enc = supertok.get_encoding(name)
    assert enc._pat_str == _catalogue.pat_str(entry["pattern"])
    assert list(enc._special_tokens.items()) == list(_catalogue.special_tokens(entry).items())
    assert enc.n_vocab == max([enc.max_token_value + 1] + list(_catalogue.special_tokens(entry).values()))
    if "explicit_n_vocab" in entry:
        assert enc.n_vocab == entry["explicit_n_vocab"]


def test_file_layout_and_self_description():
    with open(_catalogue.PATH, encoding="utf-8") as f:
        text = f.read()
    assert text == json.dumps(CATALOGUE, indent=1, ensure_ascii=False) + "\n", \
        "catalogue.json is not in the layout core_c/tools/gen_model_table.py writes (json.dumps, indent=1)"
    comment = CATALOGUE["comment"]
    for reader in ("supertok/_catalogue.py", "wasm/supertok.mjs", "vectors/oracle.py", "gen_model_table.py"):
        assert reader in comment, reader
    parts = [k for k in CATALOGUE if k not in ("comment", "fields")]
    assert sorted(CATALOGUE["fields"]) == sorted(parts)
    keys = {k for e in CATALOGUE["encodings"].values() for k in e}
    assert all(k in CATALOGUE["fields"]["encodings"] for k in keys), keys
    for e in CATALOGUE["encodings"].values():
        assert e["pattern"] in CATALOGUE["patterns"]
        assert os.path.exists(os.path.join(ROOT, "py", "supertok", "vocab", e["rank_file"] + ".tiktoken"))
        assert os.path.exists(os.path.join(ROOT, "py", "supertok", "vocab", e["image"] + ".stimg.xz"))
