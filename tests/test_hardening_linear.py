"""Paper-mode training on long runs of one symbol, or of one repeated period, is linear in the run.

Paper mode counts a run of k equal symbols as floor(k / 2) of its pair (docs/design.md §8), so a
merge's window in the trainer reaches to the ends of the runs around its sites. Finding those
ends by rescanning the run from every site made a run of n symbols cost n^2 / 4 steps a merge:
'a' * 400,000 took 30 s of merge CPU, a 50 MB file of one byte did not finish. Checked here:

- time: 'a' * 1,000,000, 'abcdefghij' * 1,000,000 (10 MB, one pretoken) and '日本' * 1,000,000
  (6 MB) train in paper mode, each in a child process under a wall limit far above what the linear
  trainer needs (a few seconds at most on native and wasmtime) and far below what the quadratic one did
  (minutes each); the one-byte run's merges equal the naive reference trainer's
  (vectors/train_reference.py, which counts runs in linear time itself);
- exactness: on inputs the naive reference trains quickly, the merges and their counts equal its
  own, in paper mode and in hf mode, bytes and UBE alphabets: runs of odd and even lengths around
  the powers of two, repeated periods, Japanese, runs broken by other symbols, several documents,
  documents given more than once (counts above 1), and random corpora of long runs.

core_c/tests/test_train.c checks the same in C, and that the trainer's counted work doubles
when the run doubles (bench/train_growth.py measures the time up to 50 MB).
"""
import json
import os
import random
import subprocess
import sys

import pytest
import supertok
from conftest import ROOT


sys.path.insert(0, os.path.join(ROOT, "vectors"))
import train_reference as ref  # noqa: E402

#: the wall limit of one long training in a child process (import and backend load included);
#: the linear trainer takes under 2 s, the quadratic one took minutes for each input
WALL_LIMIT = 60

#: the child: trains one long line, built from its arguments, prints the merges as JSON
_CHILD = r"""
import json, sys, time
import supertok
unit, reps, vocab = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
enc = supertok.train(iter([unit * reps]), vocab_size=vocab, mode="paper", progress=False, threads=1)
print(json.dumps({"backend": supertok.backend(), "seconds": time.perf_counter() - t0,
                  "merges": [list(m) for m in enc.merges]}))
"""

LONG = [("a", 1_000_000), ("abcdefghij", 1_000_000), ("日本", 1_000_000)]


def _skip_pywasm(backend):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: these long runs run on native and wasmtime")


def _train_in_child(backend, unit, reps, vocab):
    env = dict(os.environ, SUPERTOK_BACKEND=backend)
    # the supertok this test imported (an installed one, or a source tree on PYTHONPATH)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(supertok.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, unit, str(reps), str(vocab)], env=env,
                             capture_output=True, text=True, encoding="utf-8", timeout=WALL_LIMIT)
    except subprocess.TimeoutExpired:
        pytest.fail("paper-mode training of %r * %d (%d bytes) on %s did not finish in %d s: the trainer's "
                    "work grows faster than the run" % (unit, reps, len(unit.encode()) * reps, backend, WALL_LIMIT))
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["backend"] == backend
    return [tuple(m) for m in res["merges"]]


@pytest.mark.parametrize("unit,reps", LONG, ids=["a", "abcdefghij", "nihon"])
def test_long_run_trains_in_linear_time(backend, unit, reps):
    _skip_pywasm(backend)
    vocab = 243 + 100
    merges = _train_in_child(backend, unit, reps, vocab)
    # the run's first merges: the pairs inside one period, reps times each (the pair across two
    # periods has one occurrence less), which make the period one token P; then P doubled,
    # floor(reps / 2) times, and so on while a run holds two pairs or more
    period = list(unit.encode())
    k = len(period) - 1
    assert [m[2] for m in merges[:k]] == [reps] * k
    if len(set(period)) == len(period):  # all symbols differ: the pairs left to right
        assert merges[:k] == [(period[0] if i == 0 else 256 + i - 1, period[i + 1], reps) for i in range(k)]
    tok, n = (period[0] if k == 0 else 256 + k - 1), reps
    while n // 2 >= 2:
        assert merges[k] == (tok, tok, n // 2)
        tok, k, n = 256 + k, k + 1, n // 2
    if unit == "a":  # the naive reference counts runs in linear time: cheap at this size
        assert merges == ref.train(None, vocab, counts={unit * reps: 1})


# ---- exactness against the naive reference ------------------------------------------------------

def _ones(ns):
    return [("a*%d" % n, ["a" * n]) for n in ns]


CASES = (
    _ones([2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 1001, 4095, 4096, 4097])
    + [("abcdefghij*%d" % k, ["abcdefghij" * k]) for k in (1, 2, 3, 7, 8, 9, 64, 65, 255, 256, 257)]
    + [("%s*%d" % (u, k), [u * k]) for u in ("ab", "aab", "aaab", "abb", "aaabbb") for k in (1, 2, 3, 16, 17, 100, 101)]
    + [("ja*%d" % k, ["日本語" * k]) for k in (1, 2, 5, 32, 33, 200, 201)]
    + [("ja-long*%d" % k, ["日本語のテキスト" * k]) for k in (3, 64, 65)]
    + [
        ("broken-1", ["a" * 7 + "b" + "a" * 8]),
        ("broken-2", ["a" * 9 + "b" * 9 + "a" * 10]),
        ("broken-3", ["aaaaxaaaaaxaaaaaaxaaaaaaa"]),
        ("broken-4", ["a" * 33 + "ab" * 17 + "b" * 16 + "a"]),
        ("broken-5", ["ba" + "a" * 40 + "ab" + "a" * 41 + "b"]),
        ("broken-6", ["abcdefghij" * 20 + "a" + "abcdefghij" * 21]),
        ("spaces", ["aaaa aaaaa aaaaaa aaaaaaa", "a" * 50 + " " + "a" * 51]),
        ("docs", ["a" * 5, "a" * 6, "a" * 7, "b" * 40 + "a" * 41, "abcdefghij" * 12]),
        ("counts", ["a" * 11] * 3 + ["a" * 12] * 2 + ["a" * 13]),
        ("counts-period", ["abcdefghij" * 30] * 4 + ["abcdefghij" * 31] + ["日本語" * 20] * 3),
        ("lines", ["a" * 100 + "\n" + "a" * 99 + "\n", "aab" * 40 + "\n"]),
    ]
)


def _check_against_reference(docs, mode, alphabet, extra=80):
    vocab = len(ref.alphabet_symbols(mode, alphabet)) + extra
    got = supertok.train(iter(docs), vocab_size=vocab, mode=mode, alphabet=alphabet, progress=False).merges
    want = ref.train(docs, vocab, mode=mode, alphabet=alphabet)
    assert [tuple(m) for m in got] == want


@pytest.mark.parametrize("mode,alphabet", [("paper", "bytes"), ("paper", "ube"), ("hf", "bytes")])
@pytest.mark.parametrize("name,docs", CASES, ids=[c[0] for c in CASES])
def test_runs_match_the_reference(backend, name, docs, mode, alphabet):
    _skip_pywasm(backend)
    _check_against_reference(docs, mode, alphabet)


def _random_run_docs(rng):
    units = ["a", "b", "ab", "abc", "aab", "日", "日本語", "abcdefghij", " a"]
    cuts = ["", "", " ", ".", "b", "a", "\n", "x"]
    docs = []
    for _ in range(rng.randint(1, 4)):
        docs.append("".join(rng.choice(units) * rng.randint(1, 150) + rng.choice(cuts)
                            for _ in range(rng.randint(1, 4))))
    docs += [d for d in docs if rng.random() < 0.4]  # some documents twice: counts above 1
    return docs


@pytest.mark.parametrize("seed", range(24))
def test_random_runs_match_the_reference(backend, seed):
    _skip_pywasm(backend)
    rng = random.Random(seed)
    mode, alphabet = rng.choice([("paper", "bytes"), ("paper", "bytes"), ("paper", "ube"), ("hf", "bytes")])
    _check_against_reference(_random_run_docs(rng), mode, alphabet, extra=rng.randint(5, 120))
