"""The UBE golden vectors (vectors/ube/*.jsonl) on every backend.

- routing.jsonl: ube_encode_symbols(text) == symbols, and the symbols decode back to text
  (replace and strict); symbol_string is the export form of the symbols.
- decode.jsonl: ube_decode_symbols(symbols) == text_replace; under errors="strict" a
  ValueError naming strict_error_index (or the text when it is null); a symbol outside 0..511
  raises ValueError naming invalid_symbol_index in both modes.
- stream.jsonl: a UbeStreamDecoder fed the pieces the split points cut returns exactly
  `outputs` (CPython's incremental decoders, run by run) and `flush`; the concatenation is the
  one-shot text.

native and wasmtime run every record. pywasm is an interpreter (about half a millisecond per
symbol), so it runs, in each file, record i (counted from 0 after the header) when
i < PYWASM_HEAD (200) or i % PYWASM_STRIDE (5) == 0, and in routing.jsonl it decodes back only
records of at most PYWASM_DECODE_MAX (120) symbols. The fast lane runs the subset's first
records on pywasm, the full run all of it (tests/vectors_util.py).

Also checked: the header of every file, and `python vectors/generate_ube.py --check` (the
committed files are not stale; it reads the UDHR excerpts vendored in vectors/texts/, so it runs
on a fresh clone).
"""
import os
import re
import subprocess
import sys

import pytest
import supertok
import vectors_util
from conftest import ROOT
from vectors_util import PYWASM_HEAD

VEC_DIR = vectors_util.path_of("ube")
EXPECTED_FILES = ("decode.jsonl", "routing.jsonl", "stream.jsonl")
PYWASM_DECODE_MAX = 120
META_KEYS = ("generated_by", "oracle", "part", "file", "records", "fields", "alphabet", "sources")
REQUIRED = {
    "routing.jsonl": {"text", "symbols", "symbol_string", "source"},
    "decode.jsonl": {"note", "symbols", "text_replace", "strict_error_index", "invalid_symbol_index"},
    "stream.jsonl": {"note", "symbols", "splits", "outputs", "flush"},
}


def _load(name):
    return vectors_util.load(os.path.join(VEC_DIR, name))


def _index_of_error(exc):
    m = re.search(r"at (?:symbol )?index (\d+)|at symbol (\d+)", str(exc))
    return int(m.group(1) or m.group(2)) if m else None


def test_files_present():
    present = sorted(n for n in os.listdir(VEC_DIR) if n.endswith(".jsonl"))
    assert present == sorted(EXPECTED_FILES), "vectors/ube holds %s" % present


@pytest.mark.parametrize("name", EXPECTED_FILES)
def test_headers(name):
    header, records = _load(name)
    meta = header["_meta"]
    for k in META_KEYS:
        assert k in meta, "%s header lacks %s" % (name, k)
    assert meta["file"] == name and meta["part"] == "ube"
    assert set(meta["fields"]) == REQUIRED[name]
    for i, r in enumerate(records):
        assert set(r) == REQUIRED[name], "%s record %d has fields %s" % (name, i, sorted(r))
    assert len(records) >= PYWASM_HEAD


def test_pywasm_subset_size():
    for name in EXPECTED_FILES:
        assert len(vectors_util.select(_load(name)[1], "pywasm")) >= 200, name


def test_routing_symbol_strings():
    _, records = _load("routing.jsonl")
    for i, r in enumerate(records):
        assert "".join(supertok.ube.symbol_to_str(s) for s in r["symbols"]) == r["symbol_string"], i
        assert [supertok.ube.str_to_symbol(c) for c in r["symbol_string"]] == r["symbols"], i


def test_routing_vectors(backend, vector_part):
    _, records = _load("routing.jsonl")

    def check(i, r):
        got = supertok.ube_encode_symbols(r["text"])
        if got != r["symbols"]:
            return ["expected %s, core %s" % (r["symbols"], got)]
        if backend == "pywasm" and len(got) > PYWASM_DECODE_MAX:
            return []
        problems = []
        for errors in ("replace", "strict"):
            back = supertok.ube_decode_symbols(r["symbols"], errors=errors)
            if back != r["text"]:
                problems.append("decodes (%s) to %r" % (errors, back))
        return problems

    vectors_util.run_records("vectors/ube/routing.jsonl", backend, vectors_util.select(records, backend, vector_part),
                             check, lambda i, r: "record %d (%s) %r" % (i, r["source"], r["text"]))


def test_decode_vectors(backend, vector_part):
    _, records = _load("decode.jsonl")

    def check(i, r):
        syms, problems = r["symbols"], []
        if r["invalid_symbol_index"] is not None:
            for errors in ("replace", "strict"):
                try:
                    supertok.ube_decode_symbols(syms, errors=errors)
                    problems.append("%s did not raise" % errors)
                except ValueError as exc:
                    if _index_of_error(exc) != r["invalid_symbol_index"]:
                        problems.append("%s: expected invalid symbol at %d, got %s"
                                        % (errors, r["invalid_symbol_index"], exc))
            return problems
        got = supertok.ube_decode_symbols(syms)
        if got != r["text_replace"]:
            problems.append("expected %r, core %r" % (r["text_replace"], got))
        try:
            strict = supertok.ube_decode_symbols(syms, errors="strict")
            if r["strict_error_index"] is not None:
                problems.append("strict expected an error at %d, core returned %r" % (r["strict_error_index"], strict))
            elif strict != r["text_replace"]:
                problems.append("strict expected %r, core %r" % (r["text_replace"], strict))
        except ValueError as exc:
            if _index_of_error(exc) != r["strict_error_index"]:
                problems.append("strict expected error index %s, core: %s" % (r["strict_error_index"], exc))
        return problems

    vectors_util.run_records("vectors/ube/decode.jsonl", backend, vectors_util.select(records, backend, vector_part),
                             check, lambda i, r: "record %d (%s) symbols %s" % (i, r["note"], r["symbols"]))


def _feed(r):
    bounds = [0] + r["splits"] + [len(r["symbols"])]
    d = supertok.UbeStreamDecoder()
    outs = [d.add(r["symbols"][a:b]) for a, b in zip(bounds, bounds[1:])]
    return outs, d.flush()


def _describe_stream(i, r):
    return "record %d (%s) symbols %s splits %s" % (i, r["note"], r["symbols"], r["splits"])


def test_stream_vectors_concatenation(backend, vector_part):
    """Any split gives the one-shot text (docs/design.md §6)."""
    _, records = _load("stream.jsonl")

    def check(i, r):
        outs, fl = _feed(r)
        want = "".join(r["outputs"]) + r["flush"]
        return [] if "".join(outs) + fl == want else ["expected %r, core %r" % (want, "".join(outs) + fl)]

    vectors_util.run_records("vectors/ube/stream.jsonl", backend, vectors_util.select(records, backend, vector_part),
                             check, _describe_stream)


def test_stream_vectors_per_add(backend, vector_part):
    """Each add() returns what CPython's incremental decoders return for that piece."""
    _, records = _load("stream.jsonl")

    def check(i, r):
        outs, fl = _feed(r)
        if outs != r["outputs"] or fl != r["flush"]:
            return ["expected %r + flush %r, core %r + flush %r" % (r["outputs"], r["flush"], outs, fl)]
        return []

    vectors_util.run_records("vectors/ube/stream.jsonl", backend, vectors_util.select(records, backend, vector_part),
                             check, _describe_stream)


def test_generator_not_stale():
    # Runs on a fresh clone: the generator reads the UDHR excerpts vendored in vectors/texts/.
    p = subprocess.run([sys.executable, os.path.join(ROOT, "vectors", "generate_ube.py"), "--check"],
                       check=False, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr + p.stdout
