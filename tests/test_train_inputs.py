"""supertok.train on the inputs users have (supertok/_train.py): .parquet and Arrow IPC files (file
and stream format), folders, glob patterns, datasets.Dataset and iterables of mappings, and the
command line on folders and .parquet files.

The oracle is the same documents given as a .jsonl file (itself checked against .txt and
iterables of str in tests/test_train_sources.py): every input must give a byte-identical model
(enc._model_data), with algorithm "bpe" and with "boundless" (which reads the source twice).
The error tests check what the messages name: the file, the row or the document's index, the
columns. These tests are about reading, done in Python the same way for every backend: they run
on one backend that trains fast (native, else wasmtime).
"""
import json
import os
import subprocess
import sys

import pytest
import supertok
from conftest import BACKENDS, ROOT, get_backend
from vectors_util import load as load_vectors
from supertok._train import SourceError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
import pyarrow.ipc  # noqa: E402,F401 (pa.ipc)


FAST = [b for b in BACKENDS if b != "pywasm"]
VOCAB = 300


@pytest.fixture
def be():
    """One backend that trains in a moment (the first of native, wasmtime and numba present)."""
    if not FAST:
        pytest.skip("pywasm is an interpreter: these run on native, wasmtime or numba")
    prev = supertok._set_backend(get_backend(FAST[0]))
    try:
        yield FAST[0]
    finally:
        supertok._set_backend(prev)


def _docs():
    """Documents of several scripts and shapes: UDHR excerpts (each a line, with its '\\n'), runs,
    CRLF, an empty document and one without a newline."""
    _, rows = load_vectors(os.path.join(ROOT, "vectors", "texts", "udhr.jsonl"))
    lines = [ln + "\n" for r in rows for ln in r["text"].split("\n") if ln.strip()][:80]
    return ["aaaaa bbb aaaaa\n", "hello hello world\r\n", "", "naïve café, 德国电磁阀"] + lines


DOCS = _docs()


def _write_jsonl(path, docs):
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}) + "\n")
    return str(path)


def _train(source, **kw):
    kw.setdefault("vocab_size", VOCAB)
    kw.setdefault("progress", False)
    return supertok.train(source, **kw)._model_data


@pytest.fixture
def oracle(be, tmp_path):
    """The model of DOCS given as a .jsonl file, per algorithm."""
    path = _write_jsonl(tmp_path / "oracle.jsonl", DOCS)
    cache = {}

    def model(algorithm="bpe"):
        if algorithm not in cache:
            cache[algorithm] = _train(path, algorithm=algorithm)
        return cache[algorithm]
    return model


def _write_arrow(path, table, stream, max_chunksize=9):
    new = pa.ipc.new_stream if stream else pa.ipc.new_file
    with new(str(path), table.schema) as w:
        for b in table.to_batches(max_chunksize=max_chunksize):
            w.write_batch(b)
    return str(path)


def _table(docs, column="text", **more):
    return pa.table(dict({"id": list(range(len(docs)))}, **{column: docs}, **more))


# ---- the same model from every input -----------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["bpe", "boundless"])
def test_parquet_is_the_jsonl_model(oracle, tmp_path, algorithm):
    p = tmp_path / "data.parquet"
    pq.write_table(_table(DOCS), p, row_group_size=7)  # many row groups, so many batches
    assert pq.ParquetFile(p).num_row_groups > 5
    assert _train(str(p), algorithm=algorithm) == oracle(algorithm)


def test_parquet_large_string_dictionary_and_nulls(oracle, tmp_path):
    """large_string and dictionary-encoded columns give the same documents; a null row is skipped
    (as a blank line of a .jsonl file), and another text_column is read."""
    p = tmp_path / "large.parquet"
    pq.write_table(pa.table({"body": pa.array(DOCS, pa.large_string())}), p, row_group_size=5)
    assert _train(str(p), text_column="body") == oracle()
    with_nulls = []
    for d in DOCS:
        with_nulls += [d, None]
    p = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"text": pa.array([None] + with_nulls, pa.string())}), p, row_group_size=4)
    assert _train(str(p)) == oracle()
    p = _write_arrow(tmp_path / "dict.arrow", pa.table({"text": pa.array(DOCS).dictionary_encode()}), False)
    assert _train(p) == oracle()


# the stream format is read the same under every name: .arrow covers it
@pytest.mark.parametrize("ext, stream", [(".arrow", False), (".arrow", True), (".feather", False), (".ipc", False)],
                         ids=["arrow-file", "arrow-stream", "feather-file", "ipc-file"])
def test_arrow_ipc_is_the_jsonl_model(oracle, tmp_path, stream, ext):
    p = _write_arrow(tmp_path / ("data" + ext), _table(DOCS), stream)
    assert _train(p) == oracle()


def test_folder_and_glob_are_the_jsonl_model(oracle, tmp_path):
    """A folder's files, recursively and sorted by path, mixing kinds; hidden files and folders
    and unknown names left out. A glob pattern gives the same files; a list mixes them."""
    import gzip
    d = tmp_path / "corpus"
    (d / "b").mkdir(parents=True)
    (d / ".hidden").mkdir()
    parts = [DOCS[:20], DOCS[20:45], DOCS[45:70], DOCS[70:]]
    # sorted by path: corpus/a.jsonl.gz, corpus/b/c.parquet, corpus/b/d.arrow, corpus/e.jsonl
    with gzip.open(d / "a.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": t}) + "\n" for t in parts[0])
    pq.write_table(_table(parts[1]), d / "b" / "c.parquet", row_group_size=6)
    _write_arrow(d / "b" / "d.arrow", _table(parts[2]), True)
    _write_jsonl(d / "e.jsonl", parts[3])
    # left out: hidden, unknown extension
    _write_jsonl(d / ".hidden" / "x.jsonl", ["never read\n"] * 50)
    _write_jsonl(d / ".x.jsonl", ["never read\n"] * 50)
    (d / "notes.md").write_text("never read either " * 50)
    assert _train(str(d)) == oracle()
    # a pattern's matches, sorted; a matched file is read whatever its name, a matched folder gives its
    # files (** matches corpus/b and its files: each is read once)
    os.remove(d / "notes.md")
    assert _train(str(d / "**" / "*")) == oracle()
    assert _train(str(d / "**" / "*.*")) == oracle()
    assert _train([str(d / "a.jsonl.gz"), str(d / "b"), str(d / "e.*")]) == oracle()
    # the command line expands them the same way (test_cli_trains_from_a_folder_and_a_parquet)


def test_datasets_dataset_is_the_jsonl_model(oracle):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"id": list(range(len(DOCS))), "text": DOCS})
    assert _train(ds) == oracle()
    assert _train(ds.to_iterable_dataset(num_shards=2)) == oracle()  # streaming: an iterable of dicts
    ds2 = datasets.Dataset.from_dict({"content": DOCS})
    assert _train(ds2, text_column="content") == oracle()


@pytest.mark.parametrize("algorithm", ["bpe", "boundless"])
def test_generator_of_dicts_is_the_jsonl_model(oracle, algorithm):
    consumed = []

    def gen():  # one-shot: boundless reads it back from the spool; its first item is not lost
        for i, d in enumerate(DOCS):
            consumed.append(i)
            yield {"text": d, "n": i}
    assert _train(gen(), algorithm=algorithm) == oracle(algorithm)
    assert consumed == list(range(len(DOCS)))  # read once, even reading twice
    assert _train(iter(DOCS), algorithm=algorithm) == oracle(algorithm)  # iterables of str as before


# ---- errors ------------------------------------------------------------------------------------

def test_missing_and_non_string_columns(be, tmp_path):
    p = tmp_path / "data.parquet"
    pq.write_table(_table(DOCS[:10], "body", score=[0.5] * 10), p)
    with pytest.raises(SourceError) as ei:
        _train(str(p))
    msg = str(ei.value)
    assert str(p) in msg and "'text'" in msg and "'id', 'body', 'score'" in msg, msg
    assert ei.value.path == str(p)
    with pytest.raises(SourceError) as ei:
        _train(str(p), text_column="score")
    assert str(p) in str(ei.value) and "'score'" in str(ei.value) and "double" in str(ei.value)
    a = _write_arrow(tmp_path / "data.arrow", _table(DOCS[:10]), True)
    with pytest.raises(SourceError, match=r"data\.arrow.*'id'.*int64"):
        _train(a, text_column="id")
    with pytest.raises(SourceError, match=r"data\.arrow: no column 'nope' \(its columns: 'id', 'text'\)"):
        _train(a, text_column="nope")


def test_bad_text_column(be, tmp_path):
    p = _write_jsonl(tmp_path / "a.jsonl", DOCS[:5])
    for bad in (3, None, b"text", ["text"]):
        with pytest.raises(TypeError, match="text_column must be a str") as ei:
            _train(p, text_column=bad)
        assert ei.value.argument == "text_column"
    with pytest.raises(ValueError, match="text_column must not be empty"):
        _train(p, text_column="")
    # a .jsonl file is read by text_column too
    with pytest.raises(SourceError, match=r"a\.jsonl: line 1: the record has no 'body' field"):
        _train(p, text_column="body")


def test_invalid_utf8_names_the_row(be, tmp_path):
    """Arrow IPC strings are not validated when read: the core finds invalid UTF-8 and the error
    names the row, 1-based across the file's batches (nulls counted as rows)."""
    texts = ["fine\n"] * 12 + [None, b"ab\xffcd"]
    arr = pa.array([t.encode() if isinstance(t, str) else t for t in texts], pa.binary()).view(pa.string())
    p = _write_arrow(tmp_path / "bad.arrow", pa.table({"text": arr}), False, max_chunksize=5)
    with pytest.raises(SourceError) as ei:
        _train(p)
    assert str(ei.value).startswith("%s: row 14: the text is not valid UTF-8" % p), str(ei.value)
    assert (ei.value.path, ei.value.row, ei.value.offset) == (p, 14, 2)


def test_mapping_errors_name_the_document(be):
    with pytest.raises(SourceError) as ei:
        _train(iter([{"text": "a"}, {"text": "b"}, {"body": "c"}]))
    assert "document 2" in str(ei.value) and "'text'" in str(ei.value) and "'body'" in str(ei.value)
    assert ei.value.index == 2
    with pytest.raises(SourceError, match=r"document 1: its 'text' value is int, not a str"):
        _train(iter([{"text": "a"}, {"text": 5}]))
    with pytest.raises(SourceError, match=r"document 1: its 'text' value is NoneType"):
        _train(iter([{"text": "a"}, {"text": None}]))
    with pytest.raises(SourceError) as ei:
        _train(({"text": t} for t in ["ok", "fine", "bad \ud800 here"]))
    assert "document 2" in str(ei.value) and "lone surrogate" in str(ei.value) and ei.value.index == 2
    with pytest.raises(TypeError, match="document 1 is str, not a mapping"):
        _train(iter([{"text": "a"}, "b"]))
    with pytest.raises(TypeError, match="document 1 is dict, not a str"):
        _train(iter(["a", {"text": "b"}]))
    with pytest.raises(TypeError, match="DatasetDict"):
        _train({"train": ["a"]})
    datasets = pytest.importorskip("datasets")
    with pytest.raises(SourceError, match=r"no column 'text' \(its columns: 'body'\)"):
        _train(datasets.Dataset.from_dict({"body": ["a", "b"]}))


def test_empty_folder_and_unmatched_glob(be, tmp_path):
    d = tmp_path / "empty"
    (d / ".git").mkdir(parents=True)
    (d / ".git" / "x.txt").write_text("hidden\n")
    (d / "readme.md").write_text("unknown kind\n")
    with pytest.raises(SourceError, match="holds no file to train on") as ei:
        _train(str(d))
    assert str(d) in str(ei.value) and ei.value.path == str(d)
    with pytest.raises(FileNotFoundError, match="no file matches the pattern") as ei:
        _train(str(tmp_path / "*.parquet"))
    assert str(tmp_path / "*.parquet") in str(ei.value)
    _write_jsonl(tmp_path / "x.jsonl", DOCS[:3])
    with pytest.raises(FileNotFoundError, match=r"source\[1\].*no file matches"):
        _train([str(tmp_path / "*.jsonl"), str(tmp_path / "nope-*.txt")])


def test_without_pyarrow(be, tmp_path, monkeypatch):
    p = tmp_path / "data.parquet"
    pq.write_table(_table(DOCS[:5]), p)
    a = _write_arrow(tmp_path / "data.feather", _table(DOCS[:5]), False)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    for path, ext in ((str(p), ".parquet"), (a, ".feather")):
        with pytest.raises(ImportError) as ei:
            _train(path)
        assert str(ei.value) == "%s: reading %s needs pyarrow: pip install 'supertok[arrow]'" % (path, ext)
    # the other sources do not need it
    assert _train(_write_jsonl(tmp_path / "a.jsonl", DOCS)) == _train(iter(DOCS))


def test_damaged_parquet(be, tmp_path):
    p = tmp_path / "cut.parquet"
    pq.write_table(_table(DOCS), p)
    p.write_bytes(p.read_bytes()[:100])
    with pytest.raises(SourceError, match=r"cut\.parquet: cannot read as Parquet"):
        _train(str(p))


# ---- the command line --------------------------------------------------------------------------

def _run(backend, *args):
    e = dict(os.environ, SUPERTOK_BACKEND=backend)
    e.pop("SUPERTOK_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "supertok"] + list(args), capture_output=True, env=e,
                          timeout=600)


def test_cli_trains_from_a_folder_and_a_parquet(be, tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    pq.write_table(_table(DOCS[:40], "body"), d / "a.parquet", row_group_size=8)
    with open(d / "b.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"body": t}) + "\n" for t in DOCS[40:])
    want = supertok.train(iter(DOCS), vocab_size=VOCAB, progress=False)
    out = str(tmp_path / "m.stmodel")
    r = _run(be, "train", str(d), "--text-column", "body", "--vocab-size", str(VOCAB), "-o", out,
             "--progress", "off")
    assert r.returncode == 0, r.stderr
    got = supertok.load_model(out)
    assert got.merges == want.merges and got.n_vocab == want.n_vocab and len(want.merges) > 20
    r = _run(be, "train", str(d / "a.parquet"), "--text-column", "body", "--vocab-size", str(VOCAB), "-o", out,
             "--progress", "off")
    assert r.returncode == 0, r.stderr
    want = supertok.train(iter(DOCS[:40]), vocab_size=VOCAB, progress=False)
    assert supertok.load_model(out).merges == want.merges
    r = _run(be, "train", str(d / "a.parquet"), "--vocab-size", str(VOCAB), "-o", out)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.startswith("supertok: ") and err.count("\n") == 1, err
    assert "a.parquet" in err and "no column 'text'" in err and "'id', 'body'" in err
    (tmp_path / "empty").mkdir()
    r = _run(be, "train", str(tmp_path / "empty"), "--vocab-size", str(VOCAB), "-o", out)
    assert r.returncode == 2 and "holds no file" in r.stderr.decode()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_arrow_stream_from_a_pipe_is_spooled(oracle, tmp_path):
    """An Arrow stream read from a named pipe (no seeking, no second read): boundless reads it back
    from the spool."""
    import threading
    src = _write_arrow(tmp_path / "s.arrow", _table(DOCS), True)
    fifo = str(tmp_path / "pipe.arrow")
    os.mkfifo(fifo)

    def feed():
        with open(src, "rb") as f, open(fifo, "wb") as w:
            w.write(f.read())
    t = threading.Thread(target=feed, daemon=True)
    t.start()
    try:
        assert _train(fifo, algorithm="boundless") == oracle("boundless")
    finally:
        t.join(60)
