"""Shared fixtures: every conformance test runs once per backend present.

SUPERTOK_TEST_BACKENDS=native,wasmtime limits the set (default: every backend that loads);
a backend that is named there but does not load fails the run rather than being skipped.
"""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "vectors"))
SHARED = os.path.join(ROOT, "..", "shared")
# The shared corpora (not in the repository: most of their text may not be redistributed).
# SUPERTOK_CORPORA points elsewhere; without them the corpus-based differential tests skip.
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(SHARED, "corpora")

import supertok  # noqa: E402
from supertok import backends as _backends  # noqa: E402

_loaded = {}


def _backend_names():
    forced = os.environ.get("SUPERTOK_TEST_BACKENDS")
    if forced:
        return [n.strip() for n in forced.split(",") if n.strip()]
    return _backends.available()


BACKENDS = _backend_names()


def get_backend(name):
    if name not in _loaded:
        _loaded[name] = _backends.load(name)
    return _loaded[name]


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Switch supertok to one backend for the test; yields its name."""
    b = get_backend(request.param)
    prev = supertok._set_backend(b)
    try:
        yield request.param
    finally:
        supertok._set_backend(prev)


def corpus_path(name):
    p = os.path.join(CORPORA, name)
    if not os.path.exists(p):
        pytest.skip("corpus %s is absent (../shared/corpora, or set SUPERTOK_CORPORA): the "
                    "corpus-based tests need it; the vectors cover the spec without it" % name)
    return p


# ---- golden vector files (JSONL: a header record, then one record per case) ----------------------

PYWASM_HEAD = 200   # pywasm runs records i < PYWASM_HEAD or i % PYWASM_STRIDE == 0 of each file
PYWASM_STRIDE = 5
_vector_cache = {}


def load_vectors(path):
    """(header, records) of one vectors file, parsed once per session."""
    if path not in _vector_cache:
        import json
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
        assert lines[-1] == "", "%s does not end with a newline" % path
        rows = [json.loads(line) for line in lines[:-1]]
        _vector_cache[path] = (rows[0] if rows else None, rows[1:])
    return _vector_cache[path]


def select_for_backend(records, backend):
    """(index, record) pairs a backend runs: all of them, or pywasm's documented subset."""
    if backend != "pywasm":
        return list(enumerate(records))
    return [(i, r) for i, r in enumerate(records) if i < PYWASM_HEAD or i % PYWASM_STRIDE == 0]
