"""supertok.dask: counting on a Dask cluster (a LocalCluster of two worker processes here) gives
the counts supertok.count_pretokens gives, and training on them the model supertok.train gives,
byte for byte, superwords too (their candidates pass on the workers); the shard ranges hold every
line once; min_count filters each shard; a worker that dies in a task (of either pass) is replaced
and the task run again; errors name the file and its line; the command line's --dask."""
import gzip
import json
import os
import random
import subprocess
import sys

import pytest

pytest.importorskip("distributed", reason="dask[distributed] is not installed (the test extra installs it)")

import distributed  # noqa: E402

import supertok  # noqa: E402
import supertok.dask as sd  # noqa: E402
from supertok._train import SourceError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_WORDS = ("the of and to in is that for it as with was on be by this are at from or an have not which "
          "but all were they one can their there been has more will would about if so no what out up "
          "Haus Straße über Mädchen schön naïve café déjà été λόγος ἀρχή καὶ θεὸς мир слово язык "
          "日本語 中文 한국어 שלום עולם مرحبا عالم नमस्ते 123 4567 3.14").split()


def _text(seed, n_lines):
    """Lines of words (Zipf-like choice, punctuation, some empty lines, '\\r\\n' now and then)."""
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(_WORDS))]
    lines = []
    for _ in range(n_lines):
        k = rng.choice((0, 1, 3, 8, 15, 40))
        words = rng.choices(_WORDS, weights, k=k)
        line = " ".join(words)
        if words and rng.random() < 0.3:
            line += rng.choice((".", ",", "!", "?", " ...", ";"))
        lines.append(line + ("\r\n" if rng.random() < 0.05 else "\n"))
    return "".join(lines)


@pytest.fixture(autouse=True)
def _runtime():
    """The process's backend (SUPERTOK_BACKEND, which the workers inherit too) counts and trains."""
    name = supertok.backend()
    if name == "pywasm":
        pytest.skip("pywasm is an interpreter: supertok.dask runs on native and wasmtime")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A .txt (~120 KB, no final newline), a .txt.gz and a .jsonl."""
    d = tmp_path_factory.mktemp("dask-corpus")
    a = d / "a.txt"
    a.write_bytes(_text(1, 2500).rstrip("\n").encode())
    b = d / "b.txt.gz"
    with gzip.open(b, "wb") as f:
        f.write(_text(2, 1200).encode())
    c = d / "c.jsonl"
    with open(c, "w", encoding="utf-8") as f:
        for i, line in enumerate(_text(3, 1500).splitlines(True)):
            f.write(json.dumps({"id": i, "text": line}) + "\n")
            if i % 97 == 0:
                f.write("\n")  # blank lines are skipped
    return [str(a), str(b), str(c)]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            yield c


# ---- shards (no cluster) ----------------------------------------------------------------------

def _random_file(rng):
    lines = []
    for _ in range(rng.randrange(0, 60)):
        lines.append(b"x" * rng.choice((0, 0, 1, 2, 5, rng.randrange(0, 300))) + b"\n")
    data = b"".join(lines)
    if rng.random() < 0.5:
        data += b"y" * rng.randrange(1, 50)  # a last line without '\n'
    if rng.random() < 0.2:
        data = b"\n" * rng.randrange(1, 10) + data
    return data


def test_shard_ranges_hold_every_line_once(tmp_path):
    rng = random.Random(28)
    path = tmp_path / "f.txt"
    for trial in range(400):
        data = _random_file(rng)
        path.write_bytes(data)
        shard_bytes = rng.choice((1, 2, 3, 7, 16, 50, 100, 1000, len(data) or 1, len(data) + 1))
        ranges = sd.shard_ranges(len(data), shard_bytes)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
        assert all(r[1] == s[0] for r, s in zip(ranges, ranges[1:])), ranges
        assert all(e - s <= shard_bytes for s, e in ranges if len(data))
        pieces = []
        with open(path, "rb") as f:
            for s, e in ranges:
                first, piece = sd._range_bytes(f, s, e, len(data))
                assert data[first:first + len(piece)] == piece
                if piece:  # whole lines: begins at a line's start, ends with '\n' or at the end
                    assert first == 0 or data[first - 1:first] == b"\n"
                    assert piece.endswith(b"\n") or first + len(piece) == len(data)
                    assert s <= first < e  # its first line begins in its range
                pieces.append(piece)
        assert b"".join(pieces) == data, (trial, data, shard_bytes, ranges)
        assert sum(p.count(b"\n") for p in pieces) == data.count(b"\n")


def test_import_supertok_does_not_import_dask():
    code = ("import sys, supertok; "
            "print('dask' in sys.modules, 'distributed' in sys.modules, 'supertok.dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]


def test_superword_options_checked_before_counting(corpus):
    """client=object() is never used: the options are refused first."""
    for kw, match in (({"algorithm": "superbpe"}, "supermerges is required"),
                      ({"algorithm": "boundless", "supermerges": 5}, "supermerges"),
                      ({"algorithm": "boundless", "mode": "hf"}, "needs mode='paper'")):
        with pytest.raises(ValueError, match=match):
            sd.train(corpus, client=object(), vocab_size=400, **kw)


# ---- counts -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shard_bytes", [64 << 20, 9000])
def test_counts_equal_single_process(client, corpus, shard_bytes):
    ref = supertok.count_pretokens(corpus)
    got = sd.count_pretokens(corpus, client=client, shard_bytes=shard_bytes)
    assert isinstance(got, supertok.Counts)
    assert got.to_bytes() == ref.to_bytes()
    assert (got.documents, got.bytes, got.pretokens, got.distinct) == (ref.documents, ref.bytes, ref.pretokens,
                                                                       ref.distinct)


def test_counts_pretokenizer_and_progress(client, corpus):
    records = []
    got = sd.count_pretokens(corpus[0], client=client, shard_bytes=20000, pattern="cl100k", progress=records.append)
    assert got.to_bytes() == supertok.count_pretokens(corpus[0], pattern="cl100k").to_bytes()
    n = len(sd._shards([corpus[0]], 20000))
    assert n > 3
    assert [r.shards_done for r in records] == list(range(1, n + 1)) + [n]
    assert records[-1].done and records[-1].bytes == records[-1].total_bytes == os.path.getsize(corpus[0])
    assert all(r.shards == n and r.rate >= 0 for r in records)


def test_error_names_the_file_and_its_line(client, tmp_path, corpus):
    text = open(corpus[0], "rb").read()
    lines = text.split(b"\n")
    k = len(lines) * 3 // 4
    lines[k] = lines[k][:3] + b"\xff" + lines[k][3:]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\n".join(lines))
    offset = sum(len(x) + 1 for x in lines[:k]) + 3
    for shard_bytes in (5000, 64 << 20):  # in a range of the file, or the whole file in one task
        with pytest.raises(SourceError) as info:
            sd.count_pretokens([corpus[1], str(bad)], client=client, shard_bytes=shard_bytes)
        exc = info.value
        assert (exc.path, exc.line, exc.offset) == (str(bad), k + 1, offset), str(exc)
        assert "%s: line %d: invalid UTF-8" % (bad, k + 1) in str(exc)
    # a JSON-lines file cut in ranges: the line of the file too
    rows = open(corpus[2], "rb").read().split(b"\n")
    rows[1000] = b'{"text": 5}'
    badj = tmp_path / "bad.jsonl"
    badj.write_bytes(b"\n".join(rows))
    with pytest.raises(SourceError, match=r"bad\.jsonl: line 1001: the record has a 'text' field that is int"):
        sd.count_pretokens(str(badj), client=client, shard_bytes=7000)
    with pytest.raises(FileNotFoundError):
        sd.count_pretokens(str(tmp_path / "missing.txt"), client=client)
    supertok.count_pretokens(corpus[0]).save(str(tmp_path / "a.stcounts"))
    with pytest.raises(ValueError, match=r"a\.stcounts' holds counts \(\.stcounts\), not text"):
        sd.count_pretokens([corpus[0], str(tmp_path / "a.stcounts")], client=client)


def test_default_local_cluster(corpus, monkeypatch):
    """client=None: a LocalCluster of os.cpu_count() processes, started and closed here."""
    monkeypatch.setattr(sd.os, "cpu_count", lambda: 1)
    before = set(distributed.client._global_clients) if hasattr(distributed.client, "_global_clients") else None
    got = sd.count_pretokens(corpus[:2], shard_bytes=30000)
    assert got.to_bytes() == supertok.count_pretokens(corpus[:2]).to_bytes()
    if before is not None:  # its client is closed and gone
        assert set(distributed.client._global_clients) <= before


def test_globs(client, corpus):
    d = os.path.dirname(corpus[0])
    got = sd.count_pretokens(os.path.join(d, "*.txt*"), client=client)
    assert got.to_bytes() == supertok.count_pretokens(sorted(corpus[:2])).to_bytes()


# ---- models -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,alphabet,vocab_size", [("paper", "bytes", 400), ("paper", "ube", 660),
                                                      ("hf", "bytes", 420)])
def test_model_identical(client, corpus, mode, alphabet, vocab_size):
    kw = dict(vocab_size=vocab_size, mode=mode, alphabet=alphabet, special_tokens=["<|end|>"], progress=False)
    ref = supertok.train(corpus, **kw)
    got = sd.train(corpus, client=client, shard_bytes=15000, **kw)
    assert got._model_data == ref._model_data
    assert len(got.merges) > 50


def _shard_docs(path, start, end):
    """The documents of the lines that begin in [start, end) of a text file, found here by the line
    starts (not by supertok.dask's reader)."""
    data = open(path, "rb").read()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10 and i + 1 < len(data)]
    docs = []
    for i, s in enumerate(starts):
        if start <= s < end:
            e = starts[i + 1] if i + 1 < len(starts) else len(data)
            docs.append(data[s:e].decode())
    return docs


def test_min_count_filters_each_shard(client, corpus):
    shard_bytes = 12000
    files = corpus[:2]
    parts = []
    for path, start, end, _size in sd._shards(files, shard_bytes):
        if start is None:
            parts.append(supertok.count_pretokens(path).filtered(2))
        else:
            parts.append(supertok.count_pretokens(iter(_shard_docs(path, start, end))).filtered(2))
    assert len(parts) > 5
    expected = sum(parts)
    got = sd.count_pretokens(files, client=client, min_count=2, shard_bytes=shard_bytes)
    assert got.to_bytes() == expected.to_bytes()
    assert got.distinct < supertok.count_pretokens(files).distinct
    kw = dict(vocab_size=380, progress=False)
    assert (sd.train(files, client=client, min_count=2, shard_bytes=shard_bytes, **kw)._model_data
            == supertok.train(expected, **kw)._model_data)


@pytest.mark.parametrize("alphabet", ["bytes", "ube"])
def test_extension_identical(client, corpus, alphabet):
    """extend= on the cluster: the shards counted with the superbpe pattern and filtered at min_count
    (5 by default) each, the model the one a single process trains from those counts; with min_count=1
    the one supertok.train gives on the files."""
    base = supertok.train(corpus, vocab_size=(243 if alphabet == "bytes" else 478) + 60, alphabet=alphabet,
                          progress=False)
    size = base.n_vocab + 80
    one = sd.train(corpus, client=client, min_count=1, vocab_size=size, extend=base, progress=False)
    assert one._model_data == supertok.train(corpus, vocab_size=size, extend=base, min_count=1,
                                             progress=False)._model_data
    shard_bytes, files = 12000, corpus[:2]  # text files: the test finds their shards' lines itself
    parts = []
    for path, start, end, _size in sd._shards(files, shard_bytes):
        source = path if start is None else iter(_shard_docs(path, start, end))
        parts.append(supertok.count_pretokens(source, pattern="superbpe").filtered(5))
    assert len(parts) > 5
    filtered = sd.train(files, client=client, shard_bytes=shard_bytes, vocab_size=size, extend=base, progress=False)
    expected = supertok.train(sum(parts), vocab_size=size, extend=base, progress=False)
    assert filtered.merges == expected.merges
    text = filtered._model_data.decode()
    assert "min_count=5 " in text and "\npattern superbpe\n" in text


# ---- superwords: the candidates pass on the workers ------------------------------------------------

_SUPERWORD_CASES = [("boundless", "bytes", 400, {}), ("superbpe", "ube", 660, {"supermerges": 60}),
                    ("boundless", "ube", 640, {"ngram_split": True}), ("superbpe", "bytes", 420, {"supermerges": 40})]


@pytest.mark.parametrize("algorithm,alphabet,vocab_size,extra", _SUPERWORD_CASES)
def test_superword_model_identical(client, corpus, algorithm, alphabet, vocab_size, extra):
    kw = dict(vocab_size=vocab_size, alphabet=alphabet, algorithm=algorithm, special_tokens=["<|end|>"],
              progress=False, **extra)
    ref = supertok.train(corpus, **kw)
    records = []
    got = sd.train(corpus, client=client, shard_bytes=15000, count_progress=records.append, **kw)
    assert got._model_data == ref._model_data
    assert len(got.supermerges) > 5
    # the candidates pass: a task per shard of the counting pass, its progress as the counting's
    n = len(sd._shards(corpus, 15000))
    cand = [r for r in records if r.phase == "candidates"]
    assert [r.shards_done for r in cand] == list(range(1, n + 1)) + [n]
    assert cand[-1].done and cand[-1].bytes == cand[-1].total_bytes == sum(os.path.getsize(p) for p in corpus)
    assert [r.phase for r in records] == ["count"] * (n + 1) + ["candidates"] * (n + 1)


def test_superword_sweep(client, corpus):
    """A sweep: the candidates pass runs once a size, each model that size's own training."""
    kw = dict(vocab_size=[420, 380], algorithm="boundless", progress=False)
    got = sd.train(corpus[:2], client=client, shard_bytes=20000, **kw)
    ref = supertok.train(corpus[:2], **kw)
    assert [e._model_data for e in got] == [e._model_data for e in ref]


def test_superword_min_count(client, corpus):
    """min_count filters each shard's pretoken counts (phase 1 trains on their sum), never the
    candidates: the model is phase 1 on the filtered sum, the candidates of all the text."""
    from supertok.backends import current
    from supertok import _train as T
    shard_bytes, files = 12000, corpus[:2]
    expected = sd.count_pretokens(files, client=client, min_count=2, shard_bytes=shard_bytes)
    backend = current()

    def local_pass(spec):  # the trainer's own counters are not at hand here: one of the spec's, fed locally
        counter = backend.candidates_new(spec)
        try:
            for item in T._items(T._sources(files), T.CHUNK):
                T._feed(backend, counter, item)
            return backend.counter_save(counter)
        finally:
            backend.counter_free(counter)
    for algorithm, extra in (("boundless", {}), ("superbpe", {"supermerges": 30})):
        kw = dict(vocab_size=380, algorithm=algorithm, progress=False, **extra)
        got = sd.train(files, client=client, min_count=2, shard_bytes=shard_bytes, **kw)
        ref = T._train(expected, candidates_pass=local_pass, **kw)
        assert got._model_data == ref._model_data
        assert got._model_data != supertok.train(files, **kw)._model_data  # the filter changed phase 1


# ---- a worker dies in a task ----------------------------------------------------------------------

def _install_killer(marker):
    """On a worker: the next shard task to run there first (the marker file does not exist yet)
    creates the marker and kills its worker process; every other run counts as usual. A restarted
    worker is a new process, without this."""
    import supertok.dask as mod
    count = mod._count_shard

    def killer(shard, pretokenizer, min_count):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return count(shard, pretokenizer, min_count)
        os.close(fd)
        os._exit(1)

    mod._count_shard = killer
    return True


def test_worker_killed_in_a_task_is_retried(client, corpus, tmp_path):
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this module
    marker = str(tmp_path / "killed")
    kw = dict(vocab_size=400, progress=False)
    ref = supertok.train(corpus, **kw)
    try:
        client.run(_install_killer, marker)
        got = sd.train(corpus, client=client, shard_bytes=10000, **kw)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        # the worker that did not die still has the killer (harmless now that the marker exists);
        # restart both so the other tests' workers are plain
        client.restart()
        client.wait_for_workers(2, timeout=60)
    assert os.path.exists(marker)  # a worker did die
    assert got._model_data == ref._model_data


def _install_candidates_killer(marker, spare_the_spec=False):
    """As _install_killer, for the candidates pass's shard tasks. spare_the_spec: not on the worker
    holding the spec (the other worker would fetch the spec from it: Dask retries connecting to a dead
    peer until its connect timeout, 30 s, before it asks for the spec again; correct, but slow)."""
    import supertok.dask as mod
    count, hold = mod._candidates_shard, mod._spec_task
    held = []

    def holder(spec):  # the task whose result is the spec, run on this worker: say so
        held.append(True)
        return hold(spec)

    def killer(shard, spec):
        if spare_the_spec and held:
            return count(shard, spec)
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return count(shard, spec)
        os.close(fd)
        os._exit(1)

    mod._candidates_shard, mod._spec_task = killer, holder
    return True


def test_worker_killed_in_the_candidates_pass(client, corpus, tmp_path):
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    marker = str(tmp_path / "killed")
    kw = dict(vocab_size=400, algorithm="boundless", progress=False)
    ref = supertok.train(corpus, **kw)
    try:
        client.run(_install_candidates_killer, marker, True)
        got = sd.train(corpus, client=client, shard_bytes=10000, **kw)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        client.restart()
        client.wait_for_workers(2, timeout=60)
    assert os.path.exists(marker)  # a worker did die, in the candidates pass
    assert got._model_data == ref._model_data


def test_the_only_worker_killed_in_the_candidates_pass(corpus, tmp_path):
    """The spec reaches the cluster as a task's result, not scattered: when the only worker holding it
    dies, the scheduler computes it again (scattered data would be lost, and the pass with it)."""
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    marker = str(tmp_path / "killed")
    kw = dict(vocab_size=660, alphabet="ube", algorithm="superbpe", supermerges=50, progress=False)
    try:
        with distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1,
                                      dashboard_address=":0") as cluster:
            with distributed.Client(cluster) as one:
                one.run(_install_candidates_killer, marker)
                got = sd.train(corpus[:2], client=one, shard_bytes=20000, **kw)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert os.path.exists(marker)
    assert got._model_data == supertok.train(corpus[:2], **kw)._model_data


# ---- the command line ------------------------------------------------------------------------------

def test_cli_dask(client, corpus, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "py")] + [p for p in [env.get("PYTHONPATH")] if p])
    out = tmp_path / "m.model"
    r = subprocess.run([sys.executable, "-m", "supertok", "train"] + corpus +
                       ["-o", str(out), "--vocab-size", "400", "--dask", client.scheduler.address,
                        "--progress", "off", "--special-token", "<|end|>"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    ref = supertok._train._train(corpus, vocab_size=400, special_tokens=["<|end|>"], progress=False, name="m")
    assert out.read_bytes() == ref._model_data
    # superwords: the candidates pass on the cluster too
    r = subprocess.run([sys.executable, "-m", "supertok", "train"] + corpus +
                       ["-o", str(out), "--vocab-size", "660", "--dask", client.scheduler.address, "--progress", "off",
                        "--algorithm", "superbpe", "--supermerges", "40", "--alphabet", "ube"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    ref = supertok._train._train(corpus, vocab_size=660, algorithm="superbpe", supermerges=40, alphabet="ube",
                                 progress=False, name="m")
    assert out.read_bytes() == ref._model_data
    for args, msg in ((["--seed-merges", "2"], "--seed-merges: applies only with --extend"),
                      (["--dask", "nowhere"], "--dask: is a scheduler's address"),
                      (["--dask", "local:0"], "local:N takes a number of processes of at least 1")):
        r = subprocess.run([sys.executable, "-m", "supertok", "train", corpus[0], "-o", str(tmp_path / "x.model"),
                            "--vocab-size", "300"] + args, capture_output=True, text=True, env=env)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
