"""supertok.count_pretokens and supertok.Counts: counts add exactly whatever the split, pickle,
save and load byte for byte, filter by min_count as the core's st_counter_prune does, and train
the same model as the text they were counted from."""
import os
import pickle
import random

import pytest

import supertok
from supertok import Counts, count_pretokens

WORDS = "the cat sat on a mat dog ran far away 人人 生而 自由 Добрый день".split()


def _docs(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) + "\n" for _ in range(n)]


def test_counts_add_up_whatever_the_split(backend):
    docs = _docs(300, 1)
    whole = count_pretokens(iter(docs), threads=1)
    parts = [count_pretokens(iter(docs[a:a + 70]), threads=2) for a in range(0, 300, 70)]
    assert sum(parts) == whole and parts[0] + parts[1] + sum(parts[2:]) == whole
    assert whole.to_bytes() == sum(reversed(parts)).to_bytes()
    assert (whole.documents, whole.bytes) == (300, sum(len(d.encode()) for d in docs))
    assert whole.pretokens == sum(len(supertok.pretokenize(d)) for d in docs)
    assert whole.distinct == len({p for d in docs for p in supertok.pretokenize(d)})


def test_save_load_pickle(tmp_path):
    c = count_pretokens(iter(_docs(100, 2)), pattern="cl100k")
    path = tmp_path / "c.stcounts"
    c.save(path)
    assert path.read_bytes() == c.to_bytes()
    back = Counts.load(path)
    assert back == c and back.pattern == "cl100k" and not back.script_aware and back.scripts is None
    assert pickle.loads(pickle.dumps(c)) == c
    assert repr(c).startswith("<supertok.Counts pattern cl100k: 100 documents")


def test_min_count_is_the_cores_prune():
    docs = _docs(200, 3) + ["unique words here\n"]
    c = count_pretokens(iter(docs))
    f = count_pretokens(iter(docs), min_count=3)
    assert f == c.filtered(3)
    # an independent count of the same pretokens
    seen = {}
    for d in docs:
        for p in supertok.pretokenize(d):
            seen[p] = seen.get(p, 0) + 1
    kept = {p: n for p, n in seen.items() if n >= 3}
    assert f.distinct == len(kept) and f.pretokens == sum(kept.values())
    assert (f.documents, f.bytes) == (c.documents, c.bytes)  # the text was read all the same
    assert c.filtered(1) is c
    with pytest.raises(ValueError, match="min_count is an int >= 1"):
        c.filtered(0)


@pytest.mark.parametrize("mode, alphabet", [("paper", "bytes"), ("paper", "ube"), ("hf", "bytes")])
def test_train_from_counts_is_train_from_text(tmp_path, mode, alphabet):
    docs = _docs(400, 4)
    text = tmp_path / "t.txt"
    text.write_text("".join(docs), encoding="utf-8")
    ref = supertok.train(str(text), vocab_size=700, mode=mode, alphabet=alphabet)
    counts = count_pretokens(str(text))
    assert supertok.train(counts, vocab_size=700, mode=mode, alphabet=alphabet)._model_data == ref._model_data
    halves = [tmp_path / "a.stcounts", tmp_path / "b.stcounts"]
    count_pretokens(iter(docs[:150])).save(halves[0])
    count_pretokens(iter(docs[150:])).save(halves[1])
    got = supertok.train([str(h) for h in halves], vocab_size=700, mode=mode, alphabet=alphabet)
    assert got._model_data == ref._model_data


def test_counts_keep_their_pre_tokenizer():
    docs = _docs(100, 5)
    c = count_pretokens(iter(docs), pattern="cl100k")
    assert supertok.train(c, vocab_size=400)._model_data == supertok.train(iter(docs), vocab_size=400,
                                                                          pattern="cl100k")._model_data
    with pytest.raises(ValueError, match="the counts were made with pattern cl100k"):
        supertok.train(c, vocab_size=400, pattern="gpt2")
    s = count_pretokens(iter(docs), script_aware=True, scripts=["Latin", "Han"])
    assert Counts.from_bytes(s.to_bytes()).scripts == ["Latin", "Han"] or set(s.scripts) == {"Latin", "Han"}
    assert s == Counts.from_bytes(s.to_bytes())
    with pytest.raises(ValueError, match="counts of different pre-tokenizers do not add"):
        c + s


def test_superwords_need_the_text():
    c = count_pretokens(iter(_docs(50, 6)))
    for algorithm, extra in (("boundless", {}), ("superbpe", {"supermerges": 10})):
        with pytest.raises(ValueError, match="candidates pass reads the documents again"):
            supertok.train(c, vocab_size=400, algorithm=algorithm, **extra)


def test_bad_counts(tmp_path):
    good = count_pretokens(iter(_docs(30, 7))).to_bytes()
    with pytest.raises(ValueError, match="not a counts file"):
        Counts.from_bytes(b"hello world, not counts" * 4)
    with pytest.raises(ValueError, match="x.stcounts: not a valid counts file"):
        p = tmp_path / "x.stcounts"
        p.write_bytes(good[:-3])
        Counts.load(p)
    with pytest.raises(TypeError, match="Counts are made by"):
        Counts()
    with pytest.raises(ValueError, match="mixes counts files"):
        supertok.train([str(tmp_path / "x.stcounts"), str(tmp_path / "t.txt")], vocab_size=300)
    with pytest.raises(TypeError):
        Counts.from_bytes("text")


def test_a_candidates_counter_is_not_pruned(backend):
    """The core refuses to prune supermerge candidates (min_count is for pretoken counts)."""
    from supertok._status import SupertokError
    b = supertok._get()
    enc = supertok.train(iter(_docs(100, 8)), vocab_size=300)
    pid, flags, spec = 3, 0, None
    counter = b.counter_new(pid, flags, spec)
    b.counter_add(counter, "".join(_docs(100, 8)).encode(), 1)
    trainer = b.trainer_new(counter, 0, 0, 300, 0, 0)
    try:
        b.trainer_set_superwords(trainer, 1, 0, 0)
        while b.trainer_stat(trainer, 18) == 1:  # ST_TRAINER_STATE: merging, until the candidates pass
            b.trainer_step(trainer, 1 << 20)
        assert b.trainer_stat(trainer, 18) == 2  # ST_TRAINING_CANDIDATES
        cand = b.trainer_candidates_new(trainer)
        with pytest.raises(SupertokError, match="candidates counter is not pruned"):
            b.counter_prune(cand, 2)
        b.counter_free(cand)
    finally:
        b.trainer_free(trainer)
        b.counter_free(counter)
    assert enc.n_vocab > 256


@pytest.mark.parametrize("alphabet", ["bytes", "ube"])
def test_token_counts_are_the_encoders(alphabet):
    """Counts.token_counts: how often each id occurs when the counted text is encoded, against
    encoding every document with the model (the oracle: the encoder itself)."""
    import collections
    docs = _docs(300, 9)
    counts = count_pretokens(iter(docs))
    for enc in (supertok.train(counts, vocab_size=900 if alphabet == "ube" else 500, alphabet=alphabet),
                supertok.get_encoding("o200k_base")):
        if enc.alphabet != alphabet and enc.name == "o200k_base" and alphabet == "ube":
            continue
        tc = counts.token_counts(enc)
        ref = collections.Counter(i for d in docs for i in enc.encode_ordinary(d))
        assert len(tc) == enc.n_vocab and sum(tc) == sum(ref.values())
        assert {i: n for i, n in enumerate(tc) if n} == dict(ref)


def test_token_counts_refuse_superword_models(tmp_path):
    docs = _docs(300, 10)
    text = tmp_path / "t.txt"
    text.write_text("".join(docs), encoding="utf-8")
    enc = supertok.train(str(text), vocab_size=600, algorithm="superbpe", supermerges=20)
    with pytest.raises(ValueError, match="supermerges join pretokens"):
        count_pretokens(str(text)).token_counts(enc)


def test_cli_token_counts_sidecar_and_evaluate(tmp_path):
    import json
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "py"))
    text = tmp_path / "t.txt"
    docs = _docs(300, 11)
    text.write_text("".join(docs), encoding="utf-8")
    out = str(tmp_path / "m-{vocab_size}.stmodel")
    p = subprocess.run([sys.executable, "-m", "supertok", "train", str(text), "--vocab-size", "400,600", "-o", out,
                        "--token-counts"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    from supertok._counts import read_token_counts
    counts = count_pretokens(str(text))
    for v in (400, 600):
        model = str(tmp_path / ("m-%d.stmodel" % v))
        enc = supertok.load_model(model)
        assert read_token_counts(model + ".token-counts.json") == counts.token_counts(enc)
        assert json.loads(open(model + ".token-counts.json").read())["model"] == "m-%d" % v
    r = supertok.evaluate({"eng": ["the cat"], "deu": ["über"]}, [str(tmp_path / "m-400.stmodel")], bootstrap=0)
    tc = counts.token_counts(supertok.load_model(str(tmp_path / "m-400.stmodel")))
    merges = range(256, supertok.load_model(str(tmp_path / "m-400.stmodel")).n_vocab)
    assert r.vocabulary["m-400"]["training"]["dead_merges"] == sum(1 for i in merges if not tc[i])
    p = subprocess.run([sys.executable, "-m", "supertok", "train", str(text), "--vocab-size", "600", "-o",
                        str(tmp_path / "s.stmodel"), "--token-counts", "--algorithm", "boundless"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 2 and "--token-counts: applies to BPE models" in p.stderr
