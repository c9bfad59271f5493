"""The stepwise trainer through a backend (supertok.h, st_trainer_step and ST_TRAINER_STATE), as
every host drives it: phase-1 steps; for superwords the texts again into candidates counters the
trainer gives (any number of them: the same model) and takes back; the step that closes the pass;
phase-2 steps. Calls out of that order are SupertokError ST_ERR_INVALID_ARGUMENT with kind
ST_KIND_OUT_OF_ORDER and change nothing. Also: wasm/test/fixtures/train_models.json (the
models JavaScript's train() must reproduce) is what Python's train() gives today.

native and wasmtime (pywasm computes a trainer's alphabet for minutes)."""
import json
import os
import subprocess
import sys

import pytest

import supertok
from supertok import SupertokError
from supertok.backends import current

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MERGING, CANDIDATES, SUPERMERGING, DONE = 1, 2, 3, 4  # ST_TRAINING_*
STATE, PASS_DOCUMENTS, PASS_BYTES, CANDIDATE_COUNT, SUPERMERGES, PHASE = 18, 19, 20, 8, 6, 5  # ST_TRAINER_*
BOUNDLESS, SUPERBPE, NGRAM_SPLIT = 1, 2, 1
COUNTER_STATS = (0, 1, 2, 3)  # ST_COUNTER_DOCUMENTS, _BYTES, _PRETOKENS, _UNIQUE
DOCS = [d.encode() for d in ["the cat sat on the mat and the cat saw the dog",
                              "in order to see the cat, the dog sat on the mat",
                              "the dog and the cat sat in the sun in order to rest",
                              "of the cat and of the dog, the cat sat first"]] * 20


@pytest.fixture
def trains(backend):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: a trainer's alphabet takes it minutes, so the stepwise trainer's "
                    "tests run on native and wasmtime")
    return current()


def _trainer(b, algorithm, s=0, flags=0, vocab_size=243 + 200):
    c = b.counter_new(3, 0, None)  # o200k
    b.counter_add_documents(c, DOCS)
    t = b.trainer_new(c, 0, 0, vocab_size, 0, 0)
    b.counter_free(c)
    b.trainer_set_superwords(t, algorithm, s, flags)
    return t


def _run(b, t, n_counters, step=7):
    """The host's loop; the model file."""
    while True:
        state = b.trainer_stat(t, STATE)
        if state == DONE:
            break
        if state == CANDIDATES:
            ks = [b.trainer_candidates_new(t) for _ in range(n_counters)]
            for i, d in enumerate(DOCS):
                b.counter_add_documents(ks[i % n_counters], [d])
            for k in ks:
                b.trainer_candidates_add(t, k)
                b.counter_free(k)
        made = b.trainer_step(t, step)
        assert made <= step
    return b.trainer_write_model(t, b"states", [])


def _out_of_order(call):
    with pytest.raises(SupertokError) as info:
        call()
    assert info.value.name == "ST_ERR_INVALID_ARGUMENT" and info.value.kind == "ST_KIND_OUT_OF_ORDER", info.value
    return info.value


@pytest.mark.parametrize("algorithm,s,flags", [(BOUNDLESS, 0, 0), (SUPERBPE, 10, 0), (BOUNDLESS, 0, NGRAM_SPLIT),
                                               (SUPERBPE, 10, NGRAM_SPLIT)])
def test_any_number_of_counters_gives_one_model(trains, algorithm, s, flags):
    b = trains
    models, supermerges = [], []
    for n in (1, 3):
        t = _trainer(b, algorithm, s, flags)
        models.append(_run(b, t, n, step=1 if n == 1 else 1000))
        supermerges.append(b.trainer_supermerges(t))
        assert b.trainer_stat(t, PASS_DOCUMENTS) == len(DOCS)
        assert b.trainer_stat(t, PASS_BYTES) == sum(len(d) for d in DOCS)
        b.trainer_free(t)
    assert models[0] == models[1]
    assert supermerges[0] == supermerges[1] and len(supermerges[0]) > 0
    assert b"supermerges %d counts" % len(supermerges[0]) in models[0]


def test_the_states_in_order_and_misuse(trains):
    b = trains
    t = _trainer(b, SUPERBPE, 10, NGRAM_SPLIT)
    assert b.trainer_stat(t, STATE) == MERGING
    _out_of_order(lambda: b.trainer_candidates_new(t))
    assert b.trainer_step(t, 2) == 2
    _out_of_order(lambda: b.trainer_set_superwords(t, BOUNDLESS, 0, 0))
    while b.trainer_stat(t, STATE) == MERGING:
        b.trainer_step(t, 1000)
    assert b.trainer_stat(t, STATE) == CANDIDATES and b.trainer_stat(t, PHASE) == 1
    k, k2, k3 = b.trainer_candidates_new(t), b.trainer_candidates_new(t), b.trainer_candidates_new(t)
    b.counter_add_documents(k, DOCS[:2])
    b.counter_add_documents(k3, DOCS[2:3])
    assert b.counter_stat(k, 0) == 2 and b.counter_stat(k, 1) == sum(len(d) for d in DOCS[:2])
    assert b.counter_stat(k, 3) > 0
    b.trainer_candidates_add(t, k)
    unique = b.trainer_stat(t, CANDIDATE_COUNT)
    assert unique > 0 and b.trainer_stat(t, PASS_DOCUMENTS) == 2
    # a counter given back is left empty: its counts moved to the trainer's, into an empty pass
    # (k) or one that held counts already (k3)
    assert [b.counter_stat(k, s) for s in COUNTER_STATS] == [0, 0, 0, 0]
    b.trainer_candidates_add(t, k3)
    assert [b.counter_stat(k3, s) for s in COUNTER_STATS] == [0, 0, 0, 0]
    assert b.trainer_stat(t, PASS_DOCUMENTS) == 3 and b.trainer_stat(t, CANDIDATE_COUNT) >= unique
    unique = b.trainer_stat(t, CANDIDATE_COUNT)
    _out_of_order(lambda: b.trainer_candidates_add(t, k))             # given back twice
    _out_of_order(lambda: b.counter_add_documents(k, DOCS[:1]))       # fed after it was given back
    assert b.trainer_stat(t, PASS_DOCUMENTS) == 3 and b.trainer_stat(t, CANDIDATE_COUNT) == unique
    assert b.trainer_step(t, 100) == 0                                 # closes the pass
    assert b.trainer_stat(t, STATE) == SUPERMERGING and b.trainer_stat(t, PHASE) == 2
    _out_of_order(lambda: b.trainer_candidates_new(t))
    _out_of_order(lambda: b.trainer_candidates_add(t, k2))            # after the pass was closed
    while b.trainer_stat(t, STATE) != DONE:
        b.trainer_step(t, 1000)
    assert b.trainer_step(t, 5) == 0
    for c in (k, k2, k3):
        b.counter_free(c)
    b.trainer_free(t)


@pytest.mark.parametrize("algorithm,s,flags", [(BOUNDLESS, 0, 0), (SUPERBPE, 10, NGRAM_SPLIT)])
def test_a_counter_from_the_spec_counts_as_the_trainers(trains, algorithm, s, flags):
    """st_trainer_candidates_spec / st_candidates_new (supertok.dask's workers): a counter made from
    the trainer's spec, without the trainer, saves what the trainer's own counter saves; its saved
    candidates load into one of those, and the model is the one the trainer's counters give."""
    b = trains
    t, ref = _trainer(b, algorithm, s, flags), _trainer(b, algorithm, s, flags)
    _out_of_order(lambda: b.trainer_candidates_spec(t))  # phase 1 is not done
    for x in (t, ref):
        while b.trainer_stat(x, STATE) == MERGING:
            b.trainer_step(x, 1000)
    spec = b.trainer_candidates_spec(t)
    assert spec[:8] == b"stcandsp" and len(spec) >= 84
    k, own = b.candidates_new(spec), b.trainer_candidates_new(t)
    for c in (k, own):
        b.counter_add_documents(c, DOCS)
    assert b.counter_save(k) == b.counter_save(own)
    back = b.trainer_candidates_new(t)
    b.counter_load(back, b.counter_save(k))
    b.trainer_candidates_add(t, back)
    for c in (k, own, back):
        b.counter_free(c)
    while b.trainer_stat(t, STATE) != DONE:
        b.trainer_step(t, 1000)
    _out_of_order(lambda: b.trainer_candidates_spec(t))
    assert b.trainer_write_model(t, b"states", []) == _run(b, ref, 1)
    with pytest.raises(SupertokError) as info:
        b.candidates_new(spec[:-3])
    assert info.value.name == "ST_ERR_MALFORMED_MODEL" and info.value.offset == len(spec) - 3, info.value
    for x in (t, ref):
        b.trainer_free(x)


def test_refused_options(trains):
    b = trains
    c = b.counter_new(3, 0, None)
    b.counter_add_documents(c, DOCS)
    hf = b.trainer_new(c, 1, 0, 300, 0, 0)
    with pytest.raises(SupertokError) as info:
        b.trainer_set_superwords(hf, BOUNDLESS, 0, 0)
    assert info.value.name == "ST_ERR_INVALID_ARGUMENT" and info.value.kind == "ST_KIND_NONE"
    b.trainer_free(hf)
    t = b.trainer_new(c, 0, 0, 243 + 20, 0, 0)
    for args in ((SUPERBPE, 21, 0), (BOUNDLESS, 1, 0), (0, 0, NGRAM_SPLIT), (9, 0, 0)):
        with pytest.raises(SupertokError) as info:
            b.trainer_set_superwords(t, *args)
        assert info.value.name == "ST_ERR_INVALID_ARGUMENT" and info.value.kind == "ST_KIND_NONE", args
    b.trainer_set_superwords(t, SUPERBPE, 20, 0)  # s = the target
    _run(b, t, 2)
    assert len(b.trainer_supermerges(t)) <= 20
    b.trainer_free(t)
    b.counter_free(c)


def test_javascript_fixture_is_current(trains):
    """wasm/test/fixtures/train_models.json holds the models Python's train() writes today (else
    run python wasm/tools/train_fixture.py)."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "wasm", "tools", "train_fixture.py"), "--check"],
                       capture_output=True, text=True,
                       env=dict(os.environ, SUPERTOK_BACKEND=trains.name,
                                PYTHONPATH=os.path.dirname(os.path.dirname(supertok.__file__))))
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(ROOT, "wasm", "test", "fixtures", "train_models.json"), encoding="utf-8") as f:
        data = json.load(f)
    assert data["generated_by"] == "python wasm/tools/train_fixture.py"
    assert {c["options"].get("algorithm", "bpe") for c in data["cases"]} == {"bpe", "boundless", "superbpe"}
