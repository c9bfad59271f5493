"""Shared fixtures: every conformance test runs once per backend present.

SUPERTOK_TEST_BACKENDS=native,wasmtime limits the set (default: every backend that loads);
a backend that is named there but does not load fails the run rather than being skipped.

`pytest -m "not slow" -n 2` is the fast lane: every backend and every feature, a few minutes on 2
cores (-n 2: two pytest-xdist workers; the skip check below runs in the controller, which receives
every worker's reports).
Tests (or a test's pywasm runs: the slow_on_pywasm marker, and the golden-vector runners' pywasm
"rest", tests/vectors_util.py) that take long carry the `slow` marker; `pytest` runs them all.
"""
import lzma
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
import vectors_util  # noqa: E402
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


def pytest_generate_tests(metafunc):
    """Parametrizes the `backend` fixture over BACKENDS. A golden-vector runner (a test taking
    `vector_part` too, as test_unstable_differential's UDHR run does) gets pywasm twice: its
    documented subset's first records as "pywasm", which the fast lane runs, and the rest as
    "pywasm-rest", marked slow (tests/vectors_util.py)."""
    if "backend" not in metafunc.fixturenames:
        return
    if any("backend" in _argnames(m) for m in metafunc.definition.iter_markers("parametrize")):
        return  # the test parametrizes the fixture itself (indirect), with its own backends per case
    if "vector_part" not in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS, indirect=True)
        return
    params = []
    for name in BACKENDS:
        if name != "pywasm":
            params.append(pytest.param(name, vectors_util.PART_ALL, id=name))
        else:
            params.append(pytest.param(name, vectors_util.PART_FAST, id=name))
            params.append(pytest.param(name, vectors_util.PART_REST, id=name + "-rest", marks=pytest.mark.slow))
    metafunc.parametrize(("backend", "vector_part"), params, indirect=["backend"])


def pytest_collection_modifyitems(config, items):
    """Adds the slow marker to: a test marked slow_on_pywasm, on its pywasm runs (all of them, or,
    when the marker names parts of test ids, those whose id holds one of them); a test run with
    the piece cache off (the piece_cache fixture) on a backend other than the first of BACKENDS
    (the cache is the core's: one backend runs it off in the fast lane)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            continue
        mark = item.get_closest_marker("slow_on_pywasm")
        if mark is not None and "pywasm" in callspec.params.values():
            if not mark.args or any(part in callspec.id for part in mark.args):
                item.add_marker(pytest.mark.slow)
        if callspec.params.get("piece_cache") == "cache-off" and callspec.params.get("backend") != BACKENDS[0]:
            item.add_marker(pytest.mark.slow)


def _argnames(mark):
    names = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


@pytest.fixture
def backend(request):
    """Switch supertok to one backend for the test (parametrized by pytest_generate_tests);
    yields its name."""
    b = get_backend(request.param)
    prev = supertok._set_backend(b)
    try:
        yield request.param
    finally:
        supertok._set_backend(prev)


#: the piece cache's size when a test turns it on (the core's default, ST_CACHE_DEFAULT_BYTES)
PIECE_CACHE_ON = 24 << 20


@pytest.fixture
def serial():
    """One call at a time on one thread: a long text is not cut into parts for threads, so a call's
    caches (its block, its spans) are its own."""
    from supertok import encoding
    prev = encoding.set_parallel(threads=1, force=False)
    yield
    encoding.set_parallel(prev[0], force=prev[1], min_bytes=prev[2])


@pytest.fixture(params=["cache-on", "cache-off"])
def piece_cache(request):
    """Runs the test twice: with the encodings' piece cache on (the default size) and off (every
    piece merged). Yields a function that sets it on an encoding and returns the encoding; each
    encoding it touched gets its own size back at teardown (get_encoding shares them)."""
    size = PIECE_CACHE_ON if request.param == "cache-on" else 0
    if size == 0 and "backend" in request.fixturenames and request.getfixturevalue("backend") == "pywasm":
        pytest.skip("pywasm runs these with the piece cache on only (an interpreter): native and wasmtime "
                    "run both")
    touched = {}

    def apply(enc):
        if id(enc) not in touched:
            touched[id(enc)] = (enc, enc.cache_info()["limit"])
            enc.set_cache_size(size)
        return enc
    yield apply
    for enc, limit in touched.values():
        enc.set_cache_size(limit)


@pytest.fixture(params=["llama3", "qwen3", "deepseek_v3", "gpt2"])
def hf_tokenizer_json(request):
    """(name, path) of a HuggingFace tokenizer.json (tests/hf_models.py): the test runs once per
    model (Llama 3, Qwen 3, DeepSeek V3, GPT-2) and skips where the files are not fetched
    (python tools/fetch_hf_tokenizers.py)."""
    import hf_models
    return request.param, hf_models.hf_model_path(request.param)


def corpus_path(name):
    p = os.path.join(CORPORA, name)
    if not os.path.exists(p):
        pytest.skip("corpus %s is absent (../shared/corpora, or set SUPERTOK_CORPORA): the "
                    "corpus-based tests need it; the vectors cover the spec without it" % name)
    return p


def corpus_blocks(path, block_chars, sample_chars=None):
    """An xz corpus file's text in blocks of whole lines of about block_chars characters (so a
    mismatch names a small region); sample_chars: stop after about that many (None: all)."""
    block, size, total = [], 0, 0
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            block.append(line)
            size += len(line)
            total += len(line)
            if size >= block_chars:
                yield "".join(block)
                block, size = [], 0
            if sample_chars is not None and total >= sample_chars:
                break
    if block:
        yield "".join(block)


# ---- skips must be expected (.ci/run: python -m pytest --strict-skips) --------------------------
# Every skip's reason is matched against the patterns of tests/expected_skips.txt (one regular
# expression a line, each under a comment saying why that skip is expected). With --strict-skips a
# skip that matches none fails the run, naming the test and its reason, so a broken backend, a
# lost tool or a stale condition cannot hide as a skip.

EXPECTED_SKIPS = os.path.join(ROOT, "tests", "expected_skips.txt")


def pytest_addoption(parser):
    parser.addoption("--strict-skips", action="store_true", default=False,
                     help="fail the run on a skip whose reason matches no pattern of tests/expected_skips.txt")


def _expected_skip_patterns():
    import re
    pats = []
    with open(EXPECTED_SKIPS, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.lstrip().startswith("#"):
                pats.append(re.compile(line.strip()))
    return pats


_skips = []  # (where, reason)


def _skip_reason(report):
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        reason = str(lr[2])
    else:
        reason = str(lr)
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _skips.append((report.nodeid, _skip_reason(report)))


def pytest_collectreport(report):
    if report.skipped:
        _skips.append((report.nodeid, _skip_reason(report)))


def _is_xdist_worker(config):
    """True in a pytest-xdist worker (`-n 2`): its reports go to the controller, which runs every
    report through the hooks above (xdist forwards test reports, and collection reports that did not
    pass), so the controller alone holds every worker's skips and judges them."""
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session, exitstatus):
    if not session.config.getoption("--strict-skips") or _is_xdist_worker(session.config):
        return
    pats = _expected_skip_patterns()
    unexpected = [(w, r) for w, r in _skips if not any(p.search(r) for p in pats)]
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    write = tr.write_line if tr else print
    write("")
    write("--strict-skips: %d skips, %d expected (tests/expected_skips.txt), %d unexpected"
          % (len(_skips), len(_skips) - len(unexpected), len(unexpected)))
    for where, reason in unexpected:
        write("UNEXPECTED SKIP %s: %s" % (where, reason))
    if unexpected:
        write("--strict-skips: the run FAILS on %d unexpected skip(s): fix the cause, or add a pattern with "
              "a comment to tests/expected_skips.txt" % len(unexpected))
        if session.exitstatus == 0:
            session.exitstatus = 1
