"""The golden pre-tokenizer vectors (vectors/pretokenize/*.jsonl) on every backend.

Every record's text must pre-tokenize to exactly its `pieces`, and pretokenize_spans must give
contiguous, non-empty (start, end) character spans covering the text whose slices are those
pieces. native and wasmtime run every record of every file.

pywasm is an interpreter (about a quarter of a millisecond per character), so it runs a fixed
subset: in each file, counting records from 0 after the header, record i runs when
i < PYWASM_HEAD (200) or i % PYWASM_STRIDE (5) == 0. The generator puts the short hand-written
cases first and the long UDHR lines last, so pywasm sees every short case of the first 200 and
a fifth of the rest (at least 200 records per file). The fast lane runs the subset's first
records on pywasm, the full run all of it (tests/vectors_util.py).

Also checked: every file starts with its `_meta` header and every record has the required
fields; `python vectors/generate.py --check` passes (the committed files are not stale).
"""
import os
import subprocess
import sys

import pytest
import supertok
import vectors_util
from conftest import CORPORA, ROOT
from vectors_util import PYWASM_HEAD

VEC_DIR = vectors_util.path_of("pretokenize")
EXPECTED_FILES = ("cl100k.jsonl", "deepseek_v3.jsonl", "gpt2.jsonl", "llama3.jsonl", "o200k.jsonl", "qwen2.jsonl",
                  "script_aware.jsonl", "superbpe.jsonl")
PATTERN_NAMES = ("gpt2", "cl100k", "o200k", "superbpe", "llama3", "qwen2", "deepseek_v3")
# the files of the isolated patterns hold their script-aware records too
ISOLATED_FILES = ("superbpe", "llama3", "qwen2", "deepseek_v3")
META_KEYS = ("generated_by", "oracle", "unicode", "part", "fields", "records")
REQUIRED = {"pattern", "script_aware", "scripts", "text", "pieces"}
SHOWN = vectors_util.SHOWN


def _load(name):
    return vectors_util.load(os.path.join(VEC_DIR, name))


def _describe(i, r):
    return "record %d: pattern=%s script_aware=%s scripts=%r text=%r" % (
        i, r["pattern"], r["script_aware"], r["scripts"], r["text"])


def test_files_present():
    present = sorted(n for n in os.listdir(VEC_DIR) if n.endswith(".jsonl"))
    assert present == sorted(EXPECTED_FILES), "vectors/pretokenize holds %s" % present


def _check_pretokenize_record(i, r):
    args = (r["text"], r["pattern"], r["script_aware"], r["scripts"])
    pieces = supertok.pretokenize(*args)
    spans = supertok.pretokenize_spans(*args)
    problems = []
    if pieces != r["pieces"]:
        problems.append("pretokenize:\n      expected %r\n      actual   %r" % (r["pieces"], pieces))
    pos, bad_spans = 0, False
    for a, b in spans:
        if a != pos or b <= a:
            bad_spans = True
        pos = b
    if bad_spans or pos != len(r["text"]):
        problems.append("spans %r are not contiguous non-empty spans covering the text" % (spans,))
    elif [r["text"][a:b] for a, b in spans] != r["pieces"]:
        problems.append("span slices %r differ from the expected pieces %r"
                        % ([r["text"][a:b] for a, b in spans], r["pieces"]))
    return problems


@pytest.mark.parametrize("name", EXPECTED_FILES)
def test_pretokenize_vectors(name, backend, vector_part):
    _, records = _load(name)
    chosen = vectors_util.select(records, backend, vector_part)
    vectors_util.run_records(name, backend, chosen, _check_pretokenize_record, _describe)


@pytest.mark.parametrize("name", EXPECTED_FILES)
def test_vector_file_format(name):
    header, records = _load(name)
    assert isinstance(header, dict) and list(header) == ["_meta"], \
        "%s: the first line must be the {\"_meta\": {...}} header" % name
    meta = header["_meta"]
    missing = [k for k in META_KEYS if k not in meta]
    assert not missing, "%s: header lacks %s" % (name, missing)
    assert meta["part"] == "pretokenize"
    assert meta["oracle"] == "regex==2024.11.6"
    assert meta["unicode"] == "16.0"
    assert len(records) >= PYWASM_HEAD
    stem = name[:-len(".jsonl")]
    bad = []
    for i, r in enumerate(records):
        why = None
        if not REQUIRED <= set(r):
            why = "missing fields %s" % sorted(REQUIRED - set(r))
        elif r["pattern"] not in PATTERN_NAMES:
            why = "unknown pattern"
        elif not isinstance(r["script_aware"], bool):
            why = "script_aware is not a bool"
        elif r["scripts"] is not None and not (
                isinstance(r["scripts"], list) and all(isinstance(s, str) for s in r["scripts"])):
            why = "scripts is neither null nor a list of names"
        elif not isinstance(r["text"], str) or not isinstance(r["pieces"], list) \
                or not all(isinstance(p, str) and p for p in r["pieces"]):
            why = "text/pieces of the wrong type, or an empty piece"
        elif "".join(r["pieces"]) != r["text"]:
            why = "pieces do not concatenate to the text"
        elif stem in ISOLATED_FILES and r["pattern"] != stem:
            why = "a %s.jsonl record must be pattern=%s" % (stem, stem)
        elif stem in PATTERN_NAMES and stem not in ISOLATED_FILES and (r["pattern"] != stem or r["script_aware"]
                                                                       or r["scripts"] is not None):
            why = "a %s.jsonl record must be pattern=%s, not script-aware" % (stem, stem)
        elif stem == "script_aware" and not r["script_aware"]:
            why = "a script_aware.jsonl record must be script-aware"
        if why:
            bad.append("record %d: %s" % (i, why))
    assert not bad, "%s:\n%s" % (name, "\n".join(bad[:SHOWN]))


def test_vectors_not_stale():
    # Runs on a fresh clone: the generator reads the UDHR excerpts vendored in vectors/texts/.
    proc = subprocess.run([sys.executable, os.path.join("vectors", "generate.py"), "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, "vectors/generate.py --check exited %d:\n%s%s" % (
        proc.returncode, proc.stdout, proc.stderr)


def test_vendored_udhr_excerpts_match_the_corpus():
    """vectors/texts/udhr.jsonl holds exactly the lines vectors/vendor_udhr.py selects from the
    full corpus (the generators read that file, not the corpus)."""
    if not os.path.exists(os.path.join(CORPORA, "udhr.jsonl.xz")):
        pytest.skip("../shared/corpora/udhr.jsonl.xz is absent: the check of the vendored UDHR "
                    "excerpts against the corpus needs it")
    env = dict(os.environ, SUPERTOK_CORPORA=CORPORA)
    proc = subprocess.run([sys.executable, os.path.join("vectors", "vendor_udhr.py"), "--check"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, "vectors/vendor_udhr.py --check exited %d:\n%s%s" % (
        proc.returncode, proc.stdout, proc.stderr)
