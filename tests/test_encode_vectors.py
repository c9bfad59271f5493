"""The golden encode and decode vectors (vectors/encode/*.jsonl, vectors/decode/*.jsonl) on every
backend. The expectations come from tiktoken 0.14 and CPython's codecs (vectors/generate_encode.py);
this module needs neither: only the committed files.

Encode records: encode(text, allowed_special=..., disallowed_special=...) gives `ids` (or raises
`error`); count() with the same options gives len(ids) (or raises); encode_with_offsets() gives
the same ids and, where the record has them, the `starts`; and when no special token of the
encoding is allowed, encode_ordinary(text) gives the same ids. encode_batch and
encode_ordinary_batch run over the records with the default options.

Decode records: decode_bytes, decode (errors="replace") and decode_tokens_bytes on each id stream;
the incremental decoder fed each record's `splits` returns its `chunks`, then `final` from
flush(); invalid ids raise the recorded exception.

native and wasmtime run every record with every call. pywasm is an interpreter (about a
millisecond per character per encode call, several for byte-level merges of CJK text): it runs
the subset written in each header (`pywasm_subset`; vectors/generate_encode.py's pywasm_runs):
record i, counted from 0 after the header, when i < 200 or i % 10 == 0, and for encode records
only texts of at most 300 characters (so none of the very long pieces and few UDHR samples) --
at least 200 records per file; of the encode records it checks encode() on all of those and the
other calls (count, encode_with_offsets, encode_ordinary) on the first 200; encode_batch on the
first 20 records with the default options and at most 300 characters. The fast lane runs the
subset's first records on pywasm, the full run all of it (tests/vectors_util.py).
pywasm loads vocabularies from the packaged binary images (a fraction of a second each).

Also checked: every file's header and record fields, and that `python vectors/generate_encode.py
--check` passes (the committed files are not stale; it reads the UDHR excerpts vendored in
vectors/texts/, so it runs on a fresh clone).
"""
import json
import os
import subprocess
import sys

import pytest
import supertok
import vectors_util
from conftest import ROOT
from generate_encode import (ENCODE_FILES, ENCODINGS, PYWASM_HEAD, PYWASM_MAX_CHARS, pywasm_runs, record_ids,
                             record_text)
from vectors_util import short_exc as _exc

VEC = vectors_util.VECTORS
PARTS = ("encode", "decode")
SHOWN = vectors_util.SHOWN
PYWASM_BATCH = 20
PYWASM_BATCH_FAST = 5


def _load(part, name):
    """(header, records) of vectors/<part>/<name>.jsonl."""
    return vectors_util.load(vectors_util.path_of(part, name + ".jsonl"))


# pywasm's fast lane: fewer records of o200k_harmony, where every call that allows or disallows
# its 1,091 special tokens takes the interpreter about a second
PYWASM_FAST = {"o200k_harmony": 8}


def _selected(part, name, records, backend, vector_part=vectors_util.PART_ALL):
    return vectors_util.select(records, backend, vector_part, runs=lambda i, r: pywasm_runs(part, i, r),
                               fast=PYWASM_FAST.get(name, vectors_util.PYWASM_FAST))


def _options(v):
    return "all" if v == "all" else set(v)


def _diff(want, got):
    """A short description of how two id lists differ."""
    if not isinstance(got, list):
        return "expected %s, got %r" % (_short(want), got)
    for k, (a, b) in enumerate(zip(want, got)):
        if a != b:
            return "first difference at token %d: expected %s, got %s" % (
                k, _short(want[k:k + 8]), _short(got[k:k + 8]))
    return "expected %d ids %s, got %d ids %s" % (len(want), _short(want), len(got), _short(got))


def _short(ids):
    return repr(ids) if len(ids) <= 40 else repr(ids[:40])[:-1] + ", ...]"


def _describe(name, i, r):
    text = record_text(r)
    shown = repr(text) if len(text) <= 200 else "%r... (%d chars)" % (text[:80], len(text))
    return "%s record %d: text=%s allowed_special=%r disallowed_special=%r" % (
        name, i, shown, r["allowed_special"], r["disallowed_special"])


# ---------------------------------------------------------------------------------------------
# Encode


def _check_encode_record(enc, r, every_call=True):
    """Problems (strings) of one encode record on enc; encode() only unless every_call."""
    text = record_text(r)
    allowed, disallowed = _options(r["allowed_special"]), _options(r["disallowed_special"])
    problems = []
    calls = {"encode": lambda: enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)}
    if every_call:
        calls["count"] = lambda: enc.count(text, allowed_special=allowed, disallowed_special=disallowed)
        calls["encode_with_offsets"] = lambda: enc.encode_with_offsets(
            text, allowed_special=allowed, disallowed_special=disallowed)
    if "error" in r:
        for what, call in calls.items():
            try:
                got = call()
            except Exception as exc:  # noqa: BLE001 -- the type is what is checked
                if type(exc).__name__ != r["error"]:
                    problems.append("%s raised %s, expected %s" % (what, _exc(exc), r["error"]))
                continue
            problems.append("%s returned %s, expected %s" % (what, _short(got) if isinstance(got, list)
                                                              else repr(got)[:200], r["error"]))
        return problems
    want = record_ids(r)
    results = {}
    for what, call in calls.items():
        try:
            results[what] = call()
        except Exception as exc:  # noqa: BLE001 -- report every failing call
            problems.append("%s raised %s" % (what, _exc(exc)))
    if "encode" in results and results["encode"] != want:
        problems.append("encode: " + _diff(want, results["encode"]))
    if "count" in results and results["count"] != len(want):
        problems.append("count: expected %d, got %r" % (len(want), results["count"]))
    if "encode_with_offsets" in results:
        ids, starts = results["encode_with_offsets"]
        if ids != want:
            problems.append("encode_with_offsets ids: " + _diff(want, ids))
        elif "starts" in r and list(starts) != r["starts"]:
            problems.append("encode_with_offsets starts: " + _diff(r["starts"], list(starts)))
        elif len(starts) != len(ids):
            problems.append("encode_with_offsets: %d starts for %d ids" % (len(starts), len(ids)))
    specials = enc.special_tokens_set
    allowed_here = specials if allowed == "all" else allowed & specials
    if every_call and not allowed_here:
        try:
            got = enc.encode_ordinary(text)
            if got != want:
                problems.append("encode_ordinary: " + _diff(want, got))
        except Exception as exc:  # noqa: BLE001
            problems.append("encode_ordinary raised %s" % _exc(exc))
    return problems


@pytest.mark.parametrize("name", ENCODE_FILES)
def test_encode_vectors(name, backend, vector_part, piece_cache):
    _, records = _load("encode", name)
    chosen = _selected("encode", name, records, backend, vector_part)
    enc = piece_cache(supertok.get_encoding(name))
    vectors_util.run_records(
        "vectors/encode/%s.jsonl" % name, backend, chosen,
        lambda i, r: _check_encode_record(enc, r, every_call=backend != "pywasm" or i < PYWASM_HEAD),
        lambda i, r: _describe(name, i, r))


@pytest.mark.parametrize("name", ENCODE_FILES)
def test_encode_batch_vectors(name, backend, vector_part, piece_cache):
    """encode_batch / encode_ordinary_batch over the records with the default options: all of them;
    on pywasm the first PYWASM_BATCH of at most PYWASM_MAX_CHARS characters (the fast lane up to
    PYWASM_BATCH_FAST of those, the slow part the others)."""
    _, records = _load("encode", name)
    chosen = [r for r in records
              if r["allowed_special"] == [] and r["disallowed_special"] == "all" and "error" not in r]
    if backend == "pywasm":
        chosen = [r for r in chosen if len(record_text(r)) <= PYWASM_MAX_CHARS][:PYWASM_BATCH]
        k = min(PYWASM_BATCH_FAST, len(chosen) // 2)  # o200k_harmony has 5 such records: both parts get some
        chosen = chosen[:k] if vector_part == vectors_util.PART_FAST else chosen[k:]
    assert chosen, "vectors/encode/%s.jsonl: no record with the default options" % name
    enc = piece_cache(supertok.get_encoding(name))
    texts = [record_text(r) for r in chosen]
    wants = [record_ids(r) for r in chosen]
    for what, got in (("encode_batch", enc.encode_batch(texts)),
                      ("encode_ordinary_batch", enc.encode_ordinary_batch(texts))):
        assert len(got) == len(wants), "%s returned %d lists for %d texts" % (what, len(got), len(wants))
        bad = ["text %r: %s" % (t[:80], _diff(w, g)) for t, w, g in zip(texts, wants, got) if w != g]
        assert not bad, "%s on %s (%s): %d of %d texts differ\n%s" % (
            what, backend, name, len(bad), len(texts), "\n".join(bad[:SHOWN]))


# ---------------------------------------------------------------------------------------------
# Decode


def _check_decode_record(enc, r):
    ids, kind = r["ids"], r["kind"]
    problems = []
    try:
        if kind == "bytes":
            want = bytes.fromhex(r["bytes_hex"])
            got = enc.decode_bytes(ids)
            if got != want:
                problems.append("decode_bytes: expected %r, got %r" % (want[:120], got[:120]))
            got = enc.decode(ids)
            if got != r["text_replace"]:
                problems.append("decode: expected %r, got %r" % (r["text_replace"][:120], got[:120]))
            got = b"".join(enc.decode_tokens_bytes(ids))
            if got != want:
                problems.append("decode_tokens_bytes joined: expected %r, got %r" % (want[:120], got[:120]))
        elif kind == "incremental":
            dec = enc.incremental_decoder()
            chunks = [dec.add(s) for s in r["splits"]]
            final = dec.flush()
            if chunks != r["chunks"] or final != r["final"]:
                problems.append("incremental decoder: expected chunks %r final %r, got chunks %r final %r"
                                % (r["chunks"], r["final"], chunks, final))
        elif kind == "error":
            for what, call in (("decode_bytes", enc.decode_bytes), ("decode", enc.decode)):
                try:
                    got = call(ids)
                except Exception as exc:  # noqa: BLE001 -- the type is what is checked
                    if type(exc).__name__ != r["error"]:
                        problems.append("%s raised %s, expected %s" % (what, _exc(exc), r["error"]))
                    continue
                problems.append("%s returned %r, expected %s" % (what, got[:80], r["error"]))
        else:
            problems.append("unknown kind %r" % kind)
    except Exception as exc:  # noqa: BLE001 -- report every failing record
        problems.append("raised %s" % _exc(exc))
    return problems


@pytest.mark.parametrize("name", ENCODINGS)
def test_decode_vectors(name, backend, vector_part):
    _, records = _load("decode", name)
    chosen = _selected("decode", name, records, backend, vector_part)
    enc = supertok.get_encoding(name)
    vectors_util.run_records(
        "vectors/decode/%s.jsonl" % name, backend, chosen, lambda i, r: _check_decode_record(enc, r),
        lambda i, r: "%s record %d (%s): ids=%s" % (name, i, r["kind"], _short(r["ids"])))


# ---------------------------------------------------------------------------------------------
# Files and staleness

META_KEYS = ("generated_by", "oracle", "part", "file", "encoding", "records", "fields", "sources",
             "n_vocab", "pywasm_subset", "rank_file_sha256")


def test_files_present():
    for part in PARTS:
        d = os.path.join(VEC, part)
        present = sorted(n for n in os.listdir(d) if n.endswith(".jsonl")) if os.path.isdir(d) else []
        names = ENCODE_FILES if part == "encode" else ENCODINGS
        assert present == sorted(n + ".jsonl" for n in names), "vectors/%s holds %s" % (part, present)


def _encode_record_problem(name, r, n_vocab):
    texts = [k for k in ("text", "text_runs", "text_utf16_hex") if k in r]
    outs = [k for k in ("ids", "ids_runs", "error") if k in r]
    if len(texts) != 1:
        return "needs exactly one of text, text_runs, text_utf16_hex; has %s" % texts
    if len(outs) != 1:
        return "needs exactly one of ids, ids_runs, error; has %s" % outs
    if r.get("encoding") != name:
        return "encoding is %r" % r.get("encoding")
    for k in ("allowed_special", "disallowed_special"):
        v = r.get(k)
        if not (v == "all" or (isinstance(v, list) and all(isinstance(s, str) for s in v))):
            return "%s must be \"all\" or a list of str" % k
    extra = set(r) - {"encoding", "allowed_special", "disallowed_special", "starts"} - set(texts) - set(outs)
    if extra:
        return "unknown fields %s" % sorted(extra)
    if "error" in r and r["error"] != "ValueError":
        return "error %r" % r["error"]
    ids = record_ids(r)
    if ids is not None and not all(isinstance(x, int) and 0 <= x < n_vocab for x in ids):
        return "ids out of range"
    if "starts" in r:
        if "ids" not in r or "text" not in r or len(r["starts"]) != len(ids):
            return "starts needs ids and text, one start per id"
        if r["starts"] != sorted(r["starts"]) or (r["starts"] and not 0 <= r["starts"][-1] < len(r["text"])):
            return "starts must be non-decreasing offsets into text"
    return None


def _decode_record_problem(r):
    need = {"bytes": {"kind", "ids", "bytes_hex", "text_replace"},
            "incremental": {"kind", "ids", "splits", "chunks", "final"},
            "error": {"kind", "ids", "error"}}.get(r.get("kind"))
    if need is None:
        return "unknown kind %r" % r.get("kind")
    if set(r) != need:
        return "fields %s, expected %s" % (sorted(r), sorted(need))
    if r["kind"] == "incremental" and (
            [i for s in r["splits"] for i in s] != r["ids"] or len(r["chunks"]) != len(r["splits"])):
        return "splits must concatenate to ids, one chunk per split"
    if r["kind"] == "error" and r["error"] not in ("KeyError", "OverflowError"):
        return "error %r" % r["error"]
    return None


@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("name", ENCODINGS)
def test_vector_file_format(part, name):
    header, records = _load(part, name)
    assert isinstance(header, dict) and list(header) == ["_meta"], \
        "vectors/%s/%s.jsonl: the first line must be the {\"_meta\": {...}} header" % (part, name)
    meta = header["_meta"]
    missing = [k for k in META_KEYS if k not in meta]
    assert not missing, "%s/%s: header lacks %s" % (part, name, missing)
    assert meta["part"] == part and meta["encoding"] == name and meta["file"] == name + ".jsonl"
    assert meta["oracle"] == "tiktoken==0.14.0"
    with open(os.path.join(ROOT, "py", "supertok", "vocab", name + ".json"), encoding="utf-8") as f:
        vocab = json.load(f)
    assert meta["rank_file_sha256"] == vocab["sha256"]
    assert meta["n_vocab"] == vocab["n_vocab"]
    subset = [i for i, r in enumerate(records) if pywasm_runs(part, i, r)]
    assert len(subset) >= PYWASM_HEAD, "%s/%s: the pywasm subset has only %d records" % (part, name, len(subset))
    bad = []
    for i, r in enumerate(records):
        why = _encode_record_problem(name, r, meta["n_vocab"]) if part == "encode" else _decode_record_problem(r)
        if why:
            bad.append("record %d: %s" % (i, why))
    assert not bad, "vectors/%s/%s.jsonl:\n%s" % (part, name, "\n".join(bad[:SHOWN]))


def test_harmony_file_and_strings(backend):
    """vectors/encode/o200k_harmony.jsonl's header and records; and on each backend the special
    tokens of one id with two strings: both strings are that id (encode_single_token), and
    decoding the id gives the string tiktoken's decode gives (the header's decode_200018)."""
    header, records = _load("encode", "o200k_harmony")
    meta = header["_meta"]
    assert meta["encoding"] == "o200k_harmony"
    assert meta["oracle"] == "tiktoken==0.14.0"
    bad = [i for i, r in enumerate(records) if _encode_record_problem("o200k_harmony", r, meta["n_vocab"])]
    assert not bad, "vectors/encode/o200k_harmony.jsonl: bad records %s" % bad[:SHOWN]
    assert len([i for i, r in enumerate(records) if pywasm_runs("encode", i, r)]) >= PYWASM_HEAD
    enc = supertok.get_encoding("o200k_harmony")
    assert enc.n_vocab == meta["n_vocab"]
    assert enc._special_tokens == meta["special_tokens"]
    strings = [t for t, i in meta["special_tokens"].items() if i == 200018]
    assert len(strings) == 2
    for t in strings:
        assert enc.encode_single_token(t) == 200018
    assert enc.decode_single_token_bytes(200018) == meta["decode_200018"].encode("utf-8")
    assert enc.decode([200018]) == meta["decode_200018"]


def test_vectors_not_stale():
    # Runs on a fresh clone: the generator reads the UDHR excerpts vendored in vectors/texts/.
    proc = subprocess.run([sys.executable, os.path.join("vectors", "generate_encode.py"), "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, "vectors/generate_encode.py --check exited %d:\n%s%s" % (
        proc.returncode, proc.stdout, proc.stderr)
