"""What the golden-vector runners share (test_vectors.py, test_encode_vectors.py,
test_ube_vectors.py, test_train_vectors.py, test_models.py, test_model_format.py): reading a
vectors file, the records a backend runs, and running a check over records with one report of
every failure.

A runner cannot pass on nothing: load() fails on a file without its `_meta` header, without a
record, or holding another number of records than its header's `records`; run_records() fails
when it is handed no record to run.

The vectors files are JSON Lines: a `{"_meta": {...}}` header, then one record a line.

pywasm interprets the module, so it runs a documented subset of each file (the header of each
vectors file or the runner's docstring says which). The runners split that subset in two: its
first PYWASM_FAST records (the generators put the short hand-written cases first) run in the fast
lane (`pytest -m "not slow"`), the rest under the `slow` marker; the full run (`pytest`) still
runs the whole subset. native and wasmtime run every record in both lanes (seconds).
"""
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = os.path.join(ROOT, "vectors")

PYWASM_HEAD = 200   # the default pywasm subset: record i when i < PYWASM_HEAD or i % PYWASM_STRIDE == 0
PYWASM_STRIDE = 5
PYWASM_FAST = 40    # how many records of a file's pywasm subset the fast lane runs
SHOWN = 12          # failures listed in a report

#: (backend, part) pairs a vector runner is parametrized with (see pytest_generate_tests in
#: conftest.py): "all" for native and wasmtime; pywasm's subset as "fast" and "rest" (slow).
PART_ALL, PART_FAST, PART_REST = "all", "fast", "rest"

_cache = {}


def path_of(*parts):
    """vectors/<parts...>"""
    return os.path.join(VECTORS, *parts)


def load(path):
    """(header, records) of one vectors file, parsed once per session: header is the
    {"_meta": {...}} line. Fails on a file that does not end with a newline, lacks the header,
    holds no record, or holds another number of records than the header's `records`."""
    if path not in _cache:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
        where = os.path.relpath(path, ROOT)
        assert lines[-1] == "", "%s does not end with a newline" % where
        rows = [json.loads(line) for line in lines[:-1]]
        assert rows and isinstance(rows[0], dict) and list(rows[0]) == ["_meta"], \
            "%s: the first line must be the {\"_meta\": {...}} header" % where
        header, records = rows[0], rows[1:]
        assert records, "%s holds no record after its header" % where
        said = header["_meta"].get("records")
        assert said is None or said == len(records), "%s: the header says %d records, the file holds %d" % (
            where, said, len(records))
        _cache[path] = (header, records)
    return _cache[path]


def meta(path):
    """The `_meta` object of a vectors file's header."""
    return load(path)[0]["_meta"]


def pywasm_default_subset(i, record):
    """The default pywasm subset: record i (counted from 0 after the header) when
    i < PYWASM_HEAD or i % PYWASM_STRIDE == 0."""
    return i < PYWASM_HEAD or i % PYWASM_STRIDE == 0


def select(records, backend, part=PART_ALL, runs=pywasm_default_subset, fast=PYWASM_FAST):
    """The (index, record) pairs a backend runs of a file's records: all of them on native and
    wasmtime; on pywasm those runs(i, record) keeps, cut by `part` into the fast lane's first
    `fast` ("fast") or the others ("rest"; "all": both)."""
    if backend != "pywasm":
        return list(enumerate(records))
    chosen = [(i, r) for i, r in enumerate(records) if runs(i, r)]
    if part == PART_FAST:
        return chosen[:fast]
    if part == PART_REST:
        return chosen[fast:]
    return chosen


def short_exc(exc):
    """An exception as Type('first line of its message'[, ...])."""
    lines = str(exc).split("\n")
    return "%s(%r%s)" % (type(exc).__name__, lines[0][:160], ", ..." if len(lines) > 1 else "")


def report(what, backend, failures, ran):
    """The message of a runner's failing assertion: how many of the records failed, and the
    first SHOWN failures."""
    return "%s on %s: %d of %d records fail\n%s%s" % (
        what, backend, len(failures), ran, "\n".join(failures[:SHOWN]),
        "\n... and %d more" % (len(failures) - SHOWN) if len(failures) > SHOWN else "")


def run_records(what, backend, chosen, check, describe):
    """Runs check(i, record) on every chosen (index, record) pair. check returns the record's
    problems (a list of strings, empty when it passes); an exception it raises is a problem too,
    so one broken record does not hide the others. describe(i, record) names a failing record.
    Fails when chosen is empty (a runner that read nothing must not pass) or when any record has
    a problem; returns the number of records run."""
    if not chosen:
        pytest.fail("%s on %s: no record selected to run" % (what, backend))
    failures = []
    for i, r in chosen:
        try:
            problems = check(i, r)
        except Exception as exc:  # noqa: BLE001 -- report every failing record, not just the first
            problems = ["raised %s" % short_exc(exc)]
        if problems:
            failures.append("%s\n    %s" % (describe(i, r), "\n    ".join(problems)))
    assert not failures, report(what, backend, failures, len(chosen))
    return len(chosen)
