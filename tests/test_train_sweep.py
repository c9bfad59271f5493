"""Vocabulary sweeps: supertok.train(source, vocab_size=[...]) counts once, trains once, and gives
each size the model a separate run gives, byte for byte (the core's st_trainer_set_vocab_size);
the command line writes one model per size."""
import os
import random
import subprocess
import sys
import warnings

import pytest

import supertok

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("the of and to in is that for it with as was on be by this are from at or an have not but "
         "Straße über Mädchen день мир человек 人人 生而 自由 平等").split()


def _docs(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) + rng.choice(["", "s", "ed", "ing"]) for _ in range(rng.randint(3, 20))) + "\n"
            for _ in range(n)]


@pytest.mark.parametrize("mode, alphabet", [("paper", "bytes"), ("paper", "ube"), ("hf", "bytes")])
def test_a_sweep_is_separate_runs(backend, mode, alphabet):
    if backend == "pywasm":  # about a minute each there; the trainer is the same core
        pytest.skip("pywasm is an interpreter: a sweep trains every size twice (the sweep and the separate "
                    "runs), which runs on native and wasmtime")
    docs = _docs(600, 1)
    sizes = [900, 400, 650]  # any order: the models come back in it
    kw = dict(mode=mode, alphabet=alphabet, special_tokens=["<|endoftext|>", "the"])
    if alphabet == "ube":
        sizes = [s + 300 for s in sizes]
    got = supertok.train(iter(docs), vocab_size=sizes, **kw)
    assert [e.name for e in got] == ["supertok-%s-%s-%d" % (mode, alphabet, v) for v in sizes]
    for enc, v in zip(got, sizes):
        assert enc._model_data == supertok.train(iter(docs), vocab_size=v, **kw)._model_data, v


def _reasons(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w.message.reason for w in caught if issubclass(w.category, supertok.TrainWarning)]


def test_a_sweep_past_what_the_text_gives_stops_as_each_run_does():
    docs = ["ab ab abc\n"] * 20  # a handful of merges, then no pair
    sizes = [244, 250, 400]
    got, reasons = _reasons(lambda: supertok.train(iter(docs), vocab_size=sizes))
    want = []
    for enc, v in zip(got, sizes):
        alone, r = _reasons(lambda: supertok.train(iter(docs), vocab_size=v))
        assert enc._model_data == alone._model_data
        want += r
    assert reasons == want and reasons.count("no_pair") == 2  # 250 and 400 ask for more than there is
    docs = _docs(300, 2)
    got = supertok.train(iter(docs), vocab_size=[300, 2000], min_frequency=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for enc, v in zip(got, [300, 2000]):
            assert enc._model_data == supertok.train(iter(docs), vocab_size=v, min_frequency=40)._model_data


def test_a_sweep_from_counts_and_names(tmp_path):
    docs = _docs(300, 3)
    counts = supertok.count_pretokens(iter(docs))
    got = supertok.train(counts, vocab_size=[500, 300])
    assert [e.name for e in got] == ["supertok-paper-bytes-500", "supertok-paper-bytes-300"]
    assert got[1]._model_data == supertok.train(iter(docs), vocab_size=300)._model_data
    from supertok._train import _train  # the command line's names: "{vocab_size}" in them, or "-SIZE" after
    assert [e.name for e in _train(counts, vocab_size=[500, 300], name="m-{vocab_size}-x")] == ["m-500-x", "m-300-x"]
    assert [e.name for e in _train(counts, vocab_size=[500, 300], name="m")] == ["m-500", "m-300"]


@pytest.mark.parametrize("sizes, message", [
    ([], "a non-empty list"),
    ([300, 300], "names a size twice"),
    ([300, 0], "vocab_size"),
])
def test_bad_sweeps(sizes, message):
    with pytest.raises(ValueError, match=message):
        supertok.train(iter(_docs(10, 4)), vocab_size=sizes)


@pytest.mark.parametrize("algorithm, extra", [("boundless", {}), ("superbpe", {"supermerges": 30})])
def test_superword_sweeps_are_separate_runs(tmp_path, algorithm, extra):
    """A superword sweep counts once and trains each size from the counts (phase 2 depends on the
    size), reading the text again per size: from a file, and from a generator through the spool."""
    docs = _docs(500, 7)
    path = tmp_path / "t.txt"
    path.write_text("".join(docs), encoding="utf-8")
    sizes = [700, 500]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in (lambda: str(path), lambda: (d for d in docs)):
            got = supertok.train(source(), vocab_size=sizes, algorithm=algorithm, **extra)
            for enc, v in zip(got, sizes):
                alone = supertok.train(source(), vocab_size=v, algorithm=algorithm, **extra)
                assert enc._model_data == alone._model_data, (algorithm, v)
    with pytest.raises(ValueError, match="candidates pass reads the documents again"):
        supertok.train(supertok.count_pretokens(str(path)), vocab_size=sizes, algorithm=algorithm, **extra)


def test_the_cores_size_change_is_checked(backend):
    """st_trainer_set_vocab_size refuses a size below what is made and a trainer with superwords."""
    from supertok._status import SupertokError
    b = supertok._get()
    counter = b.counter_new(3, 0, None)
    b.counter_add(counter, "".join(_docs(200, 5)).encode(), 1)
    trainer = b.trainer_new(counter, 0, 0, 600, 0, 0)
    try:
        b.trainer_step(trainer, 100)
        with pytest.raises(SupertokError, match="below what this trainer has already made"):
            b.trainer_set_vocab_size(trainer, 300)
        b.trainer_set_vocab_size(trainer, 800)
        assert b.trainer_stat(trainer, 1) == 800 - b.trainer_stat(trainer, 0)  # ST_TRAINER_TARGET
    finally:
        b.trainer_free(trainer)
    trainer = b.trainer_new(counter, 0, 0, 600, 0, 0)
    try:
        b.trainer_set_superwords(trainer, 1, 0, 0)
        with pytest.raises(SupertokError, match="phase-1 BPE only"):
            b.trainer_set_vocab_size(trainer, 700)
    finally:
        b.trainer_free(trainer)
        b.counter_free(counter)


def test_cli_sweep(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("".join(_docs(300, 6)), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "py"))
    out = str(tmp_path / "m-{vocab_size}.stmodel")
    p = subprocess.run([sys.executable, "-m", "supertok", "train", str(text), "--vocab-size", "600,400", "-o", out],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    for v in (400, 600):
        data = (tmp_path / ("m-%d.stmodel" % v)).read_bytes()
        from supertok._train import _train
        assert data == _train(str(text), vocab_size=v, name="m-%d" % v)._model_data
        assert "wrote %s" % out.replace("{vocab_size}", str(v)) in p.stderr
    p = subprocess.run([sys.executable, "-m", "supertok", "train", str(text), "--vocab-size", "600,400", "-o",
                        str(tmp_path / "m.stmodel")], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 2 and "put {vocab_size} in the output's name" in p.stderr
