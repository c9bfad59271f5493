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
records of at most PYWASM_DECODE_MAX (120) symbols.

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
from conftest import PYWASM_HEAD, ROOT, load_vectors, select_for_backend

VEC_DIR = os.path.join(ROOT, "vectors", "ube")
EXPECTED_FILES = ("decode.jsonl", "routing.jsonl", "stream.jsonl")
PYWASM_DECODE_MAX = 120
META_KEYS = ("generated_by", "oracle", "part", "file", "records", "fields", "alphabet", "sources")
REQUIRED = {
    "routing.jsonl": {"text", "symbols", "symbol_string", "source"},
    "decode.jsonl": {"note", "symbols", "text_replace", "strict_error_index", "invalid_symbol_index"},
    "stream.jsonl": {"note", "symbols", "splits", "outputs", "flush"},
}
SHOWN = 15


def _load(name):
    return load_vectors(os.path.join(VEC_DIR, name))


def _selected(records, backend):
    return select_for_backend(records, backend)


def _index_of_error(exc):
    m = re.search(r"at (?:symbol )?index (\d+)|at symbol (\d+)", str(exc))
    return int(m.group(1) or m.group(2)) if m else None


def _report(name, failures, checked):
    assert not failures, "%d of %d records of %s fail:\n%s" % (
        len(failures), checked, name, "\n".join(failures[:SHOWN]))


def test_files_present():
    present = sorted(n for n in os.listdir(VEC_DIR) if n.endswith(".jsonl"))
    assert present == sorted(EXPECTED_FILES), "vectors/ube holds %s" % present


@pytest.mark.parametrize("name", EXPECTED_FILES)
def test_headers(name):
    header, records = _load(name)
    assert header and set(header) == {"_meta"}, "%s does not start with its _meta header" % name
    meta = header["_meta"]
    for k in META_KEYS:
        assert k in meta, "%s header lacks %s" % (name, k)
    assert meta["file"] == name and meta["part"] == "ube"
    assert meta["records"] == len(records)
    assert set(meta["fields"]) == REQUIRED[name]
    for i, r in enumerate(records):
        assert set(r) == REQUIRED[name], "%s record %d has fields %s" % (name, i, sorted(r))
    assert len(records) >= PYWASM_HEAD


def test_pywasm_subset_size():
    for name in EXPECTED_FILES:
        assert len(_selected(_load(name)[1], "pywasm")) >= 200, name


def test_routing_symbol_strings():
    _, records = _load("routing.jsonl")
    for i, r in enumerate(records):
        assert "".join(supertok.ube.symbol_to_str(s) for s in r["symbols"]) == r["symbol_string"], i
        assert [supertok.ube.str_to_symbol(c) for c in r["symbol_string"]] == r["symbols"], i


def test_routing_vectors(backend):
    _, records = _load("routing.jsonl")
    chosen = _selected(records, backend)
    failures = []
    for i, r in chosen:
        try:
            got = supertok.ube_encode_symbols(r["text"])
            if got != r["symbols"]:
                failures.append("record %d (%s) %r: expected %s, core %s"
                                % (i, r["source"], r["text"], r["symbols"], got))
                continue
            if backend == "pywasm" and len(got) > PYWASM_DECODE_MAX:
                continue
            for errors in ("replace", "strict"):
                back = supertok.ube_decode_symbols(r["symbols"], errors=errors)
                if back != r["text"]:
                    failures.append("record %d %r: decodes (%s) to %r" % (i, r["text"], errors, back))
        except Exception as exc:  # noqa: BLE001 -- report every failing record
            failures.append("record %d %r: raised %r" % (i, r["text"], exc))
    _report("routing.jsonl", failures, len(chosen))


def test_decode_vectors(backend):
    _, records = _load("decode.jsonl")
    chosen = _selected(records, backend)
    failures = []
    for i, r in chosen:
        syms, where = r["symbols"], "record %d (%s) symbols %s" % (i, r["note"], r["symbols"])
        if r["invalid_symbol_index"] is not None:
            for errors in ("replace", "strict"):
                try:
                    supertok.ube_decode_symbols(syms, errors=errors)
                    failures.append("%s: %s did not raise" % (where, errors))
                except ValueError as exc:
                    if _index_of_error(exc) != r["invalid_symbol_index"]:
                        failures.append("%s: expected invalid symbol at %d, got %s"
                                        % (where, r["invalid_symbol_index"], exc))
            continue
        got = supertok.ube_decode_symbols(syms)
        if got != r["text_replace"]:
            failures.append("%s: expected %r, core %r" % (where, r["text_replace"], got))
        try:
            strict = supertok.ube_decode_symbols(syms, errors="strict")
            if r["strict_error_index"] is not None:
                failures.append("%s: strict expected an error at %d, core returned %r"
                                % (where, r["strict_error_index"], strict))
            elif strict != r["text_replace"]:
                failures.append("%s: strict expected %r, core %r" % (where, r["text_replace"], strict))
        except ValueError as exc:
            if _index_of_error(exc) != r["strict_error_index"]:
                failures.append("%s: strict expected error index %s, core: %s"
                                % (where, r["strict_error_index"], exc))
    _report("decode.jsonl", failures, len(chosen))


def _feed(r):
    bounds = [0] + r["splits"] + [len(r["symbols"])]
    d = supertok.UbeStreamDecoder()
    outs = [d.add(r["symbols"][a:b]) for a, b in zip(bounds, bounds[1:])]
    return outs, d.flush()


def test_stream_vectors_concatenation(backend):
    """Any split gives the one-shot text (docs/design.md §6)."""
    _, records = _load("stream.jsonl")
    chosen = _selected(records, backend)
    failures = []
    for i, r in chosen:
        outs, fl = _feed(r)
        want = "".join(r["outputs"]) + r["flush"]
        if "".join(outs) + fl != want:
            failures.append("record %d (%s) symbols %s splits %s: expected %r, core %r"
                            % (i, r["note"], r["symbols"], r["splits"], want, "".join(outs) + fl))
    _report("stream.jsonl", failures, len(chosen))


def test_stream_vectors_per_add(backend):
    """Each add() returns what CPython's incremental decoders return for that piece."""
    _, records = _load("stream.jsonl")
    chosen = _selected(records, backend)
    failures = []
    for i, r in chosen:
        outs, fl = _feed(r)
        if outs != r["outputs"] or fl != r["flush"]:
            failures.append("record %d (%s) symbols %s splits %s: expected %r + flush %r, core %r "
                            "+ flush %r" % (i, r["note"], r["symbols"], r["splits"], r["outputs"],
                                            r["flush"], outs, fl))
    _report("stream.jsonl", failures, len(chosen))


def test_generator_not_stale():
    # Runs on a fresh clone: the generator reads the UDHR excerpts vendored in vectors/texts/.
    p = subprocess.run([sys.executable, os.path.join(ROOT, "vectors", "generate_ube.py"), "--check"],
                       check=False, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr + p.stdout
