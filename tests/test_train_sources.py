"""supertok.train's sources, arguments, progress and results, on every backend (supertok/_train.py).

- Every source kind gives the same counts and the same model: a .txt file (one document per line,
  its '\\n' kept), a .jsonl file (the `text` field), both compressed (.gz, .xz, .bz2), and an
  iterable of str; '\\r\\n' keeps its '\\r'; a last line without '\\n' is a document.
- Errors name the file and the line (invalid UTF-8: the byte offset), or the document's index.
- vocab_size and the other arguments are checked before any reading.
- The progress callback sees both phases; the model saves and loads back to the same ids; 1, 2
  and 4 counting threads give the same model.

The expected document and byte counts come from CPython (str.splitlines, len of the UTF-8), the
expected alphabet sizes from the specification (docs/design.md §8: 243 bytes in paper mode, 256 in
hf mode); everything else compares supertok with itself across source kinds, threads and backends.
pywasm interprets the module: it runs the small cases only.
"""
import bz2
import gzip
import json
import lzma
import os

import pytest
import supertok
from conftest import BACKENDS, ROOT, get_backend
from vectors_util import load as load_vectors
from supertok._train import SourceError

PYWASM_SKIP = "pywasm interprets ~0.2M instructions/s: large inputs run on native and wasmtime"
# Making a trainer on pywasm takes about two minutes (the core finds the reachable alphabet by
# walking the code points, interpreted): there one test trains (test_pywasm_trains_as_the_others);
# the error tests, which stop while counting, run there too.
PYWASM_TRAINS = "pywasm is an interpreter: training (minutes per trainer there) runs on native and wasmtime"


def no_pywasm(backend):
    if backend == "pywasm":
        pytest.skip(PYWASM_TRAINS)


def _udhr_lines(limit=None):
    """Lines of the vendored UDHR excerpts (many scripts), each with its '\\n'."""
    _, rows = load_vectors(os.path.join(ROOT, "vectors", "texts", "udhr.jsonl"))
    out = []
    for r in rows:
        for line in r["text"].split("\n"):
            if line.strip():
                out.append(line + "\n")
    return out[:limit] if limit else out


# Small engineered documents: runs, CRLF, tabs, several scripts, an empty line (a document "\n").
SMALL = ["aaaaa bbb aaaaa\n", "hello hello world\r\n", "\n", "naïve café, 德国电磁阀\n", "abab abab\tabab\n",
         "Привет мир\n"]


def _small(backend):
    return SMALL if backend == "pywasm" else SMALL + _udhr_lines(60)


def _write_sources(tmp_path, docs):
    """The documents as every file kind: {name: path}."""
    text = "".join(docs).encode("utf-8")
    jsonl = "".join(json.dumps({"text": d, "id": i}) + "\n" for i, d in enumerate(docs)).encode("utf-8")
    files = {}
    for name, data in (("c.txt", text), ("c.jsonl", jsonl)):
        for ext, opener in (("", open), (".gz", gzip.open), (".xz", lzma.open), (".bz2", bz2.open)):
            p = tmp_path / (name + ext)
            with opener(p, "wb") as f:
                f.write(data)
            files[name + ext] = str(p)
    return files


def _record(records):
    def cb(r):
        records.append(r)
    return cb


def _train(source, **kw):
    kw.setdefault("vocab_size", 243 + 40)
    kw.setdefault("progress", False)
    return supertok.train(source, **kw)


def test_every_source_kind_gives_the_same_model(backend, tmp_path):
    no_pywasm(backend)
    docs = _small(backend)
    files = _write_sources(tmp_path, docs)
    want_bytes = len("".join(docs).encode("utf-8"))
    models = {}
    kinds = dict(files)
    kinds["iterable"] = iter(docs)
    kinds["generator"] = (d for d in docs)
    if backend == "pywasm":
        kinds = {k: kinds[k] for k in ("c.txt", "c.jsonl.gz", "c.txt.xz", "iterable")}
    for kind, src in kinds.items():
        records = []
        enc = _train(src, progress=_record(records))
        last = [r for r in records if r.phase == "count"][-1]
        assert last.done and (last.documents, last.bytes) == (len(docs), want_bytes), kind
        models[kind] = (enc.merges, enc._model_data)
    first = next(iter(models.values()))
    assert first[0], "the corpus is big enough for merges"
    for kind, m in models.items():
        assert m == first, kind
    # a list of paths is the files one after another: the same counts as their documents in one iterable
    enc = _train([files["c.txt"], files["c.jsonl.bz2"]])
    assert enc.merges == _train(iter(docs + docs)).merges


def test_crlf_and_last_line_without_newline(backend, tmp_path):
    no_pywasm(backend)
    raw = b"ab ab\r\ncd cd\r\n\r\nlast ab"
    p = tmp_path / "crlf.txt"
    p.write_bytes(raw)
    parts = raw.decode("utf-8").split("\n")  # CPython's split on '\n' only: the '\r' stays
    docs = [d + "\n" for d in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    assert docs == ["ab ab\r\n", "cd cd\r\n", "\r\n", "last ab"]
    records = []
    enc = _train(str(p), progress=_record(records))
    last = [r for r in records if r.phase == "count"][-1]
    assert (last.documents, last.bytes) == (4, len(raw))
    assert enc.merges == _train(iter(docs)).merges


def test_txt_is_read_in_many_pieces(backend, tmp_path, monkeypatch):
    """Pieces cut at line ends give the same counts as one piece (a line longer than a piece too)."""
    if backend == "pywasm":
        pytest.skip(PYWASM_SKIP)
    from supertok import _train as t
    docs = _udhr_lines(80) + ["x" * 5000 + " long line\n"] + _udhr_lines(20)
    p = tmp_path / "c.txt"
    p.write_bytes("".join(docs).encode("utf-8"))
    whole = _train(str(p)).merges
    monkeypatch.setattr(t, "CHUNK", 1000)
    assert _train(str(p)).merges == whole
    assert _train(iter(docs)).merges == whole


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_threads_give_the_same_model(backend, tmp_path, monkeypatch, threads):
    if backend == "pywasm":
        pytest.skip(PYWASM_SKIP)
    from supertok import _train as t
    monkeypatch.setattr(t, "CHUNK", 4096)  # many pieces, spread over the threads
    docs = _udhr_lines()
    p = tmp_path / "c.txt"
    p.write_bytes("".join(docs).encode("utf-8"))
    one = _train(iter(docs), vocab_size=600, threads=1)
    enc = _train(str(p), vocab_size=600, threads=threads)
    assert enc.merges == one.merges and enc._model_data == one._model_data
    assert _train(iter(docs), vocab_size=600, threads=threads).merges == one.merges


# ---- errors naming where ----------------------------------------------------------------------

@pytest.mark.parametrize("ext", ["", ".gz"])
def test_invalid_utf8_names_file_line_and_byte(backend, tmp_path, ext):
    raw = b"good line\nsecond\nab\xffcd\nmore\n"
    p = tmp_path / ("bad.txt" + ext)
    with (gzip.open if ext else open)(p, "wb") as f:
        f.write(raw)
    with pytest.raises(SourceError) as ei:
        _train(str(p))
    e = ei.value
    off = raw.index(b"\xff")
    assert (e.path, e.line, e.offset) == (str(p), 3, off)
    msg = str(e)
    assert str(p) in msg and "line 3" in msg and "byte 2 of the line" in msg and "byte %d" % off in msg


@pytest.mark.parametrize("ext", ["", ".gz"])
def test_invalid_utf8_past_the_first_read_names_its_line(backend, tmp_path, monkeypatch, ext):
    """Lines are counted only for an error (from the start of the file): a bad byte in a later
    read of a file many reads long is named by its line and byte all the same."""
    from supertok import _train as T
    monkeypatch.setattr(T, "CHUNK", 64)
    monkeypatch.setattr(T, "PYWASM_CHUNK", 64)
    lines = [b"line %d of the text, long enough to span reads\n" % k for k in range(40)]
    lines[29] = b"line 29 has a bad \xff byte here\n"
    raw = b"".join(lines)
    p = tmp_path / ("late.txt" + ext)
    with (gzip.open if ext else open)(p, "wb") as f:
        f.write(raw)
    with pytest.raises(SourceError) as ei:
        _train(str(p), threads=1)
    off = raw.index(b"\xff")
    assert (ei.value.path, ei.value.line, ei.value.offset) == (str(p), 30, off), str(ei.value)
    assert "line 30" in str(ei.value) and "byte 18 of the line" in str(ei.value), str(ei.value)


def test_jsonl_errors_name_file_and_line(backend, tmp_path):
    cases = [
        (b'{"text": "a"}\n{"txt": "b"}\n', 2, "no 'text' field"),
        (b'{"text": "a"}\n\n{"text": 3}\n', 3, "not a string"),
        (b'{"text": "a"}\n[1, 2]\n', 2, "not a JSON object"),
        (b'{"text": "a"}\n{"text": "b"\n', 2, "not JSON"),
        (b'{"text": "a"}\n{"text": "\\ud800x"}\n', 2, "lone surrogate"),
        (b'{"text": "a"}\n{"text": "b\xff"}\n', 2, "invalid UTF-8 at byte 11 of the line (byte 25 of the file)"),
    ]
    for k, (raw, line, needle) in enumerate(cases):
        p = tmp_path / ("bad%d.jsonl" % k)
        p.write_bytes(raw)
        with pytest.raises(SourceError) as ei:
            _train(str(p))
        assert ei.value.path == str(p) and ei.value.line == line, (raw, str(ei.value))
        assert str(p) in str(ei.value) and "line %d" % line in str(ei.value) and needle in str(ei.value), str(ei.value)


def test_iterable_errors_name_the_document(backend):
    with pytest.raises(SourceError) as ei:
        _train(iter(["ok", "fine", "bad \ud800 here"]))
    assert ei.value.index == 2 and "document 2" in str(ei.value) and "lone surrogate" in str(ei.value)
    assert "character 4" in str(ei.value)
    with pytest.raises(TypeError, match="document 1 is bytes"):
        _train(iter(["ok", b"bytes"]))


def test_bad_sources(backend, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        _train(str(tmp_path / "missing.txt"))
    (tmp_path / "x.txt").write_text("a\n")
    with pytest.raises(FileNotFoundError, match=r"source\[1\].*iter\(documents\)"):
        _train([str(tmp_path / "x.txt"), "hello world"])  # a list holds paths, not documents
    (tmp_path / "empty").mkdir()  # a folder stands for its files (tests/test_train_inputs.py): none is an error
    with pytest.raises(SourceError, match="holds no file"):
        _train(str(tmp_path / "empty"))
    with pytest.raises(TypeError, match="source"):
        _train(b"bytes are not a source")
    with pytest.raises(TypeError, match="source"):
        _train(42)
    with pytest.raises(TypeError, match=r"source\[0\]"):
        _train([42])
    p = tmp_path / "trunc.txt.gz"
    p.write_bytes(gzip.compress(b"abc\n" * 100)[:-12])
    with pytest.raises(SourceError, match="trunc.txt.gz: cannot read"):
        _train(str(p))


def test_empty_sources(backend, tmp_path):
    no_pywasm(backend)
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")
    for src in (str(p), iter([]), [], iter([""])):
        records = []
        enc = _train(src, progress=_record(records))
        assert enc.merges == []
        assert records[-1].phase == "merge" and records[-1].done and records[-1].merges == 0
        text = "hé"
        assert enc.encode(text) == list(text.encode("utf-8"))  # no merge: the bytes themselves
        assert enc.decode(enc.encode(text)) == text


# ---- arguments ---------------------------------------------------------------------------------

def test_vocab_size_errors_name_the_minimum(backend):
    no_pywasm(backend)
    docs = ["ab ab\n"]
    with pytest.raises(ValueError, match=r"vocab_size=100 is too small: the minimum is 243"):
        _train(iter(docs), vocab_size=100)
    with pytest.raises(ValueError, match=r"the minimum is 256"):
        _train(iter(docs), vocab_size=255, mode="hf")
    with pytest.raises(ValueError, match=r"the minimum is 245 .*2 special tokens"):
        _train(iter(docs), vocab_size=244, special_tokens=["<a>", "<b>"])
    with pytest.raises(ValueError, match=r"vocab_size=10 is too small: the minimum is \d+"):
        _train(iter(docs), vocab_size=10, alphabet="ube")
    with pytest.raises(ValueError, match="vocab_size must be at least 1"):
        _train(iter(docs), vocab_size=0)
    for bad in ("2048", 2048.0, True, None):
        with pytest.raises(TypeError, match="vocab_size must be an int"):
            _train(iter(docs), vocab_size=bad)
    assert _train(iter(docs), vocab_size=243).merges == []  # the minimum: no merge


def test_argument_errors(backend, tmp_path):
    docs = ["ab ab\n"]
    for kw, exc, needle in [
        ({"mode": "bpe"}, ValueError, "mode must be one of"),
        ({"alphabet": "utf16"}, ValueError, "alphabet must be one of"),
        ({"mode": "hf", "alphabet": "ube"}, ValueError, "mode='hf', alphabet='ube'") if backend != "pywasm" else
        ({"mode": "bpe"}, ValueError, "mode must be one of"),  # the core's refusal: a trainer (minutes on pywasm)
        ({"pattern": "llama"}, ValueError, "unknown pattern"),
        ({"scripts": ["Han"]}, ValueError, "script_aware=True"),
        ({"script_aware": True, "scripts": ["Klingon"]}, ValueError, "unknown script name 'Klingon'"),
        ({"script_aware": 1}, TypeError, "script_aware"),
        ({"special_tokens": "<|endoftext|>"}, TypeError, "special_tokens must be a list"),
        ({"special_tokens": ["<a>", "<a>"]}, ValueError, r"special_tokens\[1\]"),
        ({"special_tokens": [""]}, ValueError, r"special_tokens\[0\] is empty"),
        ({"special_tokens": [3]}, TypeError, r"special_tokens\[0\]"),
        ({"min_frequency": -1}, ValueError, "min_frequency"),
        ({"threads": 0}, ValueError, "threads must be at least 1"),
        ({"progress": "yes"}, TypeError, "progress"),
    ]:
        with pytest.raises(exc, match=needle):
            _train(iter(docs), **kw)
    # arguments are checked before any reading: the bad option is reported, not the missing file
    with pytest.raises(ValueError, match="mode"):
        _train(str(tmp_path / "missing.txt"), mode="bpe")


# ---- progress, interruption, results -----------------------------------------------------------------

def test_progress_callback_sees_both_phases(backend):
    no_pywasm(backend)
    docs = _small(backend)
    records = []
    enc = _train(iter(docs), vocab_size=243 + 30, progress=_record(records))
    phases = [r.phase for r in records]
    assert phases[0] == "count" and phases[-1] == "merge" and phases == sorted(phases)  # count first
    counts = [r for r in records if r.phase == "count"]
    merges = [r for r in records if r.phase == "merge"]
    assert counts[-1].done and not any(r.done for r in counts[:-1])
    assert counts[-1].documents == len(docs) and counts[-1].bytes == len("".join(docs).encode("utf-8"))
    assert merges[-1].done and merges[-1].merges == len(enc.merges)
    assert all(r.target == 30 for r in records)
    assert [r.merges for r in merges] == sorted(r.merges for r in merges)
    assert all(isinstance(r.elapsed, float) and r.elapsed >= 0 for r in records)


@pytest.mark.parametrize("phase", ["count", "merge"])
def test_keyboard_interrupt_propagates_and_frees(backend, phase):
    no_pywasm(backend)
    docs = _small(backend)

    def cb(r):
        if r.phase == phase:
            raise KeyboardInterrupt

    for _ in range(2):
        with pytest.raises(KeyboardInterrupt):
            _train(iter(docs), progress=cb)
    assert _train(iter(docs)).merges  # the backend is usable afterwards


def test_vocab_2048_learns_1805_merges_and_ids_follow(backend):
    if backend == "pywasm":
        pytest.skip(PYWASM_SKIP)
    docs = _udhr_lines()
    enc = _train(iter(docs), vocab_size=2048)
    assert len(enc.merges) == 2048 - 243  # the spec's example: 1,805 merges (the corpus has the pairs)
    for i, (left, right, count) in enumerate(enc.merges):
        assert left < 256 + i and right < 256 + i and count >= 1
    sp = _train(iter(docs), vocab_size=2048, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert len(sp.merges) == 1803 and sp.merges == enc.merges[:1803]
    assert sp.encode("<|endoftext|>", allowed_special="all") == [256 + 1803]
    assert sp.encode("<|pad|>", allowed_special="all") == [256 + 1804]
    assert sp.n_vocab == 256 + 1805


def test_ube_model(backend):
    no_pywasm(backend)
    docs = _small(backend)
    enc = _train(iter(docs), vocab_size=600, alphabet="ube")
    assert enc.alphabet == "ube" and enc.merges
    for i, (left, right, count) in enumerate(enc.merges):
        assert left < 512 + i and right < 512 + i
    text = "".join(docs[:4])
    assert enc.decode(enc.encode(text)) == text


def test_save_and_load_round_trip(backend, tmp_path):
    no_pywasm(backend)
    docs = _small(backend)
    kw = dict(vocab_size=243 + 30 + 1, special_tokens=["<|endoftext|>"])
    if backend != "pywasm":
        kw.update(script_aware=True, scripts=["Han"], pattern="cl100k")
    enc = _train(iter(docs), **kw)
    p = tmp_path / "m.stmodel"
    enc.save(p)
    assert p.read_bytes() == enc._model_data
    assert not [f for f in os.listdir(tmp_path) if f != "m.stmodel"]  # no temporary file left
    back = supertok.load_model(str(p))
    assert back.merges == enc.merges and all(c is not None for _, _, c in back.merges)
    assert (back.name, back.n_vocab, back.special_tokens_set) == (enc.name, enc.n_vocab, {"<|endoftext|>"})
    for text in docs[:4] + ["德国电磁阀 <|endoftext|> hello"]:
        assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
        assert back.decode(enc.encode(text, allowed_special="all")) == text
    with pytest.raises(ValueError, match="no model file"):
        supertok.get_encoding("r50k_base").save(tmp_path / "x")


def test_counter_backend_calls(backend):
    """The counter's own calls: merged halves equal the whole (saved bytes compared), save/load
    round-trips, documents and bytes as CPython counts them."""
    b = supertok._get()
    docs = [d.encode("utf-8") for d in _small(backend)]
    whole, a, c = (b.counter_new(3, 0, None) for _ in range(3))
    try:
        b.counter_add_documents(whole, docs)
        b.counter_add_documents(a, docs[:3])
        b.counter_add(c, b"".join(docs[3:]), 1)  # ST_COUNT_LINES: every document here is one line
        b.counter_merge(a, c)
        assert b.counter_save(a) == b.counter_save(whole)
        assert (b.counter_stat(whole, 0), b.counter_stat(whole, 1)) == (len(docs), sum(map(len, docs)))
        saved = b.counter_save(whole)
        fresh = b.counter_new(3, 0, None)
        b.counter_load(fresh, saved)
        assert b.counter_save(fresh) == saved
        b.counter_add_pretoken(fresh, b"hello", 1 << 40)  # 64-bit counts
        assert b.counter_stat(fresh, 2) == b.counter_stat(whole, 2) + (1 << 40)
        b.counter_free(fresh)
        b.counter_free(fresh)  # idempotent
        other = b.counter_new(2, 0, None)
        with pytest.raises(supertok.SupertokError):
            b.counter_merge(whole, other)  # another pre-tokenizer
        b.counter_free(other)
        with pytest.raises(supertok.SupertokError) as ei:
            b.counter_load(whole, saved[:len(saved) // 2])
        assert ei.value.name == "ST_ERR_MALFORMED_MODEL"
    finally:
        for h in (whole, a, c):
            b.counter_free(h)


def test_pywasm_trains_as_the_others(backend, tmp_path):
    """One training on every backend, pywasm included: a compressed file of engineered documents
    gives the model the first other backend gives (native and wasm are the same core)."""
    p = tmp_path / "c.txt.gz"
    with gzip.open(p, "wb") as f:
        f.write("".join(SMALL).encode("utf-8"))
    enc = _train(str(p), vocab_size=243 + 12)
    assert len(enc.merges) == 12
    others = [b for b in BACKENDS if b not in (backend, "pywasm", "numba")]  # a fast backend that trains, to compare with
    if others:
        prev = supertok._set_backend(get_backend(others[0]))
        try:
            assert _train(str(p), vocab_size=243 + 12)._model_data == enc._model_data
        finally:
            supertok._set_backend(prev)
    text = SMALL[0] + SMALL[3]
    assert enc.decode(enc.encode(text)) == text


def test_trainer_backend_calls(backend):
    """The trainer's own calls: stepping in small steps gives the merges of one big step, the
    statistics follow, trainer_merges is the model's merges section, frees are idempotent."""
    no_pywasm(backend)
    b = supertok._get()
    docs = [d.encode("utf-8") for d in _small(backend)]
    c = b.counter_new(3, 0, None)
    b.counter_add_documents(c, docs)
    one, steps = b.trainer_new(c, 0, 0, 243 + 25, 0, 1), b.trainer_new(c, 0, 0, 243 + 25, 0, 1)
    b.counter_free(c)  # the trainers copied the counts
    try:
        assert b.trainer_stat(one, 0) == 243 and b.trainer_stat(one, 1) == 24  # alphabet, target
        assert b.trainer_stat(one, 4) == len(set(p for d in docs for p in supertok.pretokenize(d.decode())))
        with pytest.raises(supertok.SupertokError):
            b.trainer_set_specials(one, [b"<a>", b"<b>"])  # one special was announced
        b.trainer_set_specials(one, [b"<|endoftext|>"])
        b.trainer_set_specials(steps, [b"<|endoftext|>"])
        assert b.trainer_step(one, 1000) == 24 and b.trainer_stat(one, 3) == 1
        made = [b.trainer_step(steps, k) for k in (1, 2, 3, 5, 100)]
        assert made == [1, 2, 3, 5, 13] and b.trainer_stat(steps, 2) == 24
        assert b.trainer_merges(steps) == b.trainer_merges(one)
        model = b.trainer_write_model(one, b"t", [b"<|endoftext|>"])
        enc = supertok.load_model(model)
        assert enc.merges == b.trainer_merges(one) and enc.name == "t"
        assert enc.encode("<|endoftext|>", allowed_special="all") == [256 + 24]
        with pytest.raises(supertok.SupertokError):
            b.trainer_write_model(one, b"t", [])  # n_specials must be the trainer's
    finally:
        for t in (one, steps):
            b.trainer_free(t)
            b.trainer_free(t)


def test_loaded_models_have_merges(backend):
    """Encoding.merges of a model without counts (vectors/models): its rules, count None; a tiktoken
    vocabulary has ranks, not rules."""
    with open(os.path.join(ROOT, "vectors", "models", "bytes_small.json"), encoding="utf-8") as f:
        want = [(a, b, None) for a, b in json.load(f)["merges"]]
    assert supertok.load_model(os.path.join(ROOT, "vectors", "models", "bytes_small.stmodel")).merges == want
    assert supertok.load_model(os.path.join(ROOT, "vectors", "models", "bytes_small.json")).merges == want
