"""`python -m supertok train` run as a user runs it (a subprocess, SUPERTOK_BACKEND forced), once
per backend present.

- The model it writes is the one supertok.train makes in-process from the same file, and
  `encode --model` / `decode --model` with it give that encoding's ids and the text back.
- Piped, it writes one line per phase on standard error and nothing on standard output.
- Bad arguments and missing files are one `supertok: ...` line and exit status 2.
- Ctrl-C (SIGINT) while it reads a source stops it with exit status 130, one line, no traceback,
  and no model file (or temporary file) left behind.

pywasm interprets the module and makes a trainer in about two minutes: the training tests run on
native and wasmtime (tests/test_train_sources.py trains once on pywasm).
"""
import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import BACKENDS, ROOT
from vectors_util import load as load_vectors
from test_train_api import superword_docs

import supertok


PYWASM_TRAINS = "pywasm is an interpreter: training (minutes per trainer there) runs on native and wasmtime"
FAST = [b for b in BACKENDS if b not in ("pywasm", "numba")]


@pytest.fixture(params=BACKENDS)
def be(request):
    if request.param == "pywasm":
        pytest.skip(PYWASM_TRAINS)
    return request.param


@pytest.fixture
def fast():
    """One backend that trains in a moment (the first of native and wasmtime present)."""
    if not FAST:
        pytest.skip(PYWASM_TRAINS)
    return FAST[0]


def run(backend, *args, input=b"", **kw):
    e = dict(os.environ, SUPERTOK_BACKEND=backend)
    e.pop("SUPERTOK_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "supertok"] + list(args), input=input, capture_output=True,
                          env=e, timeout=600, **kw)


def fails(r, *needles, status=2):
    err = r.stderr.decode("utf-8")
    assert r.returncode == status, (r.returncode, err)
    assert err.startswith("supertok: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in err, (n, err)
    return err


def corpus(backend):
    _, rows = load_vectors(os.path.join(ROOT, "vectors", "texts", "udhr.jsonl"))
    lines = [ln for r in rows for ln in r["text"].split("\n") if ln.strip()]
    lines = lines[:4] if backend == "pywasm" else lines[:200]
    return "".join(ln + "\n" for ln in lines)


def test_train_then_encode_with_the_model(be, tmp_path):
    src = tmp_path / "corpus.txt"
    src.write_text(corpus(be), encoding="utf-8")
    model = tmp_path / "tok.stmodel"
    vocab = 300 if be == "pywasm" else 1000
    r = run(be, "train", str(src), "--vocab-size", str(vocab), "--alphabet", "ube",
            "--special-token", "<|endoftext|>", "-o", str(model))
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == b""
    # the same model as the Python API makes from the same file
    prev = supertok._set_backend(be)
    try:
        enc = supertok.train(str(src), vocab_size=vocab, alphabet="ube", special_tokens=["<|endoftext|>"],
                             progress=False)
        data = model.read_bytes()
        assert data.replace(b"name tok\n", b"name %s\n" % enc.name.encode()) == enc._model_data
        assert b"name tok\n" in data  # named after the file
        text = "Everyone has the right to life, liberty and security of person. 人人生而自由"
        want = enc.encode(text)
    finally:
        supertok._set_backend(prev)
    ids = json.loads(run(be, "encode", "--model", str(model), input=text.encode()).stdout)
    assert ids == want
    back = run(be, "decode", "--model", str(model), input=json.dumps(ids).encode())
    assert back.returncode == 0 and back.stdout.decode("utf-8") == text  # CPython's text, round trip


def test_piped_output_is_one_line_per_phase(be, tmp_path):
    src = tmp_path / "c.txt"
    text = corpus(be)
    src.write_text(text, encoding="utf-8")
    model = tmp_path / "m.stmodel"
    r = run(be, "train", str(src), "--vocab-size", "260", "-o", str(model))
    assert r.returncode == 0 and r.stdout == b""
    lines = r.stderr.decode().splitlines()
    assert len(lines) == 3, lines
    n_docs, n_bytes = text.count("\n"), len(text.encode("utf-8"))
    assert lines[0].startswith("supertok train: counted %d documents, " % n_docs), lines[0]
    assert lines[1].startswith("supertok train: learned ") and " merges of 17 in " in lines[1], lines[1]
    assert lines[2].startswith("supertok train: wrote %s (" % model), lines[2]
    assert "n_vocab %d" % supertok.load_model(str(model)).n_vocab in lines[2]
    assert n_bytes > 0
    # --progress off: nothing at all
    r = run(be, "train", str(src), "--vocab-size", "260", "-o", str(model), "--progress", "off")
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_live_progress_line(tmp_path, fast):
    """--progress on (what a terminal gets): one line per phase redrawn with '\\r', naming the phase,
    documents and bytes counted, merges done of the target and the rate."""
    be = fast
    src = tmp_path / "c.txt"
    text = corpus(be)
    src.write_text(text, encoding="utf-8")
    r = run(be, "train", str(src), "--vocab-size", "260", "-o", str(tmp_path / "m.stmodel"), "--progress", "on")
    assert r.returncode == 0 and r.stdout == b""
    lines = r.stderr.decode().split("\n")
    assert lines[-1] == "" and len(lines) == 4, lines
    count, merge, wrote = (ln.split("\r")[-1] for ln in lines[:3])
    assert lines[0].startswith("\rsupertok train: counting: ") and lines[1].startswith("\rsupertok train: merging: ")
    assert count.startswith("supertok train: counting: %d documents, " % text.count("\n")) and "B/s" in count
    assert merge.startswith("supertok train: merging: ") and "/17 merges (" in merge and "merges/s" in merge
    assert wrote.startswith("supertok train: wrote ")


def test_bad_arguments(tmp_path, fast):
    be = fast
    src = tmp_path / "c.txt"
    src.write_text("hello hello world\n", encoding="utf-8")
    out = str(tmp_path / "m.stmodel")
    fails(run(be, "train", str(src), "-o", out), "--vocab-size")
    fails(run(be, "train", str(src), "--vocab-size", "1000"), "-o")
    fails(run(be, "train", str(src), "--vocab-size", "ten", "-o", out), "--vocab-size", "'ten' is not a whole number")
    fails(run(be, "train", str(src), "--vocab-size", "100", "-o", out), "--vocab-size", "the minimum is 243")
    fails(run(be, "train", str(src), "--vocab-size", "300", "--mode", "hf", "--alphabet", "ube", "-o", out), "--mode")
    fails(run(be, "train", str(src), "--vocab-size", "300", "--mode", "bpe", "-o", out), "--mode")
    fails(run(be, "train", str(src), "--vocab-size", "300", "--scripts", "Han", "-o", out), "--scripts",
          "--script-aware")
    fails(run(be, "train", str(src), "--vocab-size", "300", "--script-aware", "--scripts", "Klingon", "-o", out),
          "--scripts", "Klingon")
    fails(run(be, "train", str(src), "--vocab-size", "300", "--special-token", "", "-o", out), "--special-token")
    fails(run(be, "train", str(src), "--vocab-size", "300", "--threads", "0", "-o", out), "--threads")
    fails(run(be, "train", str(src / "nope"), "--vocab-size", "300", "-o", out), "cannot read")
    fails(run(be, "train", str(tmp_path / "missing.txt"), "--vocab-size", "300", "-o", out), "missing.txt",
          "No such file")
    (tmp_path / "empty").mkdir()  # a folder stands for its files: none is an error
    fails(run(be, "train", str(tmp_path / "empty"), "--vocab-size", "300", "-o", out), "empty", "holds no file")
    fails(run(be, "train", str(src), "--vocab-size", "300", "-o", str(tmp_path / "no" / "m")), "does not exist")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nab\xff\n")
    fails(run(be, "train", str(bad), "--vocab-size", "300", "-o", out), str(bad), "line 2", "invalid UTF-8")
    assert not os.path.exists(out)


def _open_for_writing(fifo, p, timeout=60):
    """The FIFO opened for writing once process p has opened it for reading; a p that ends first,
    or never opens it, fails the test with what it printed (a plain open() would wait forever)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        if p.poll() is not None:
            out, err = p.communicate()
            pytest.fail("the trainer ended (exit %s) before it read the FIFO: %r %r" % (p.returncode, out, err))
        if time.monotonic() > deadline:
            p.kill()
            out, err = p.communicate()
            pytest.fail("the trainer did not open the FIFO in %d s: %r %r" % (timeout, out, err))
        time.sleep(0.05)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


@pytest.mark.parametrize("algorithm", ["bpe", "boundless"])
def test_ctrl_c_stops_cleanly(be, tmp_path, algorithm):
    """SIGINT while the trainer waits on a source that is still being written (a FIFO): exit 130, one
    line, no model and no temporary file in the output's directory."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    fifo = tmp_path / "slow.txt"
    os.mkfifo(fifo)
    outdir = tmp_path / "out"
    outdir.mkdir()
    e = dict(os.environ, SUPERTOK_BACKEND=be)
    e.pop("SUPERTOK_TRACEBACK", None)
    p = subprocess.Popen([sys.executable, "-m", "supertok", "train", str(fifo), "--vocab-size", "300",
                          "--threads", "2", "--algorithm", algorithm, "-o", str(outdir / "m.stmodel")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    w = _open_for_writing(fifo, p)  # once the trainer has opened it for reading
    try:
        w.write(b"hello world, the first lines of a long corpus\n" * 2000)
        w.flush()
        time.sleep(1.0)  # it has read what there is and waits for more
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        try:
            w.close()
        except BrokenPipeError:
            pass
    err = err.decode()
    assert p.returncode == 130, (p.returncode, err)
    assert err == "supertok: interrupted\n", err
    assert out == b""
    assert os.listdir(outdir) == []


def test_superword_train_then_encode(be, tmp_path):
    """--algorithm boundless --ngram-split: the same model as supertok.train, one line per phase when
    piped (count, merge, candidates, split, supermerge, wrote), and encode/decode --model with it."""
    src = tmp_path / "corpus.txt"
    text = "".join(superword_docs())
    src.write_text(text, encoding="utf-8")
    model = tmp_path / "super.stmodel"
    r = run(be, "train", str(src), "--vocab-size", "800", "--algorithm", "boundless", "--ngram-split",
            "--special-token", "<|endoftext|>", "-o", str(model))
    err = r.stderr.decode()
    assert r.returncode == 0 and r.stdout == b"", err
    lines = err.splitlines()
    # this small text runs out of pairs, then of candidates: two warnings say so
    warned = [line for line in lines if line.startswith("supertok train: warning: training ")]
    assert len(warned) == 2 and "no pair left" in warned[0] and "no supermerge candidate" in warned[1], warned
    assert "merges --vocab-size 800 asks for" in warned[0], warned  # the options, as the command line names them
    lines = [line for line in lines if line not in warned]
    assert len(lines) == 6, lines
    assert lines[0].startswith("supertok train: counted %d documents, " % text.count("\n")), lines[0]
    assert lines[1].startswith("supertok train: learned ") and " merges of 556 in " in lines[1], lines[1]
    assert lines[2].startswith("supertok train: counted candidates in %d documents, " % text.count("\n")), lines[2]
    assert " distinct candidates" in lines[2]
    assert lines[3].startswith("supertok train: split the candidates into n-grams: "), lines[3]
    assert lines[4].startswith("supertok train: learned ") and " steps of 556 in " in lines[4], lines[4]
    assert lines[5].startswith("supertok train: wrote %s (" % model) and " supermerges, 1 special token" in lines[5]
    prev = supertok._set_backend(be)
    try:
        enc = supertok.train(str(src), vocab_size=800, algorithm="boundless", ngram_split=True,
                             special_tokens=["<|endoftext|>"], progress=False)
        data = model.read_bytes()
        assert data.replace(b"name super\n", b"name %s\n" % enc.name.encode()) == enc._model_data
        assert b"\ntraining algorithm=boundless mode=paper vocab_size=800 " in data
        assert enc.supermerges and lines[4].startswith("supertok train: learned %d supermerges in %d steps" % (
            len(enc.supermerges), len(enc.merges) + len(enc.supermerges)))
        sample = "".join(text.splitlines(True)[:30])
        want = enc.encode(sample)
    finally:
        supertok._set_backend(prev)
    first_super = 256 + len(enc.merges)
    assert any(first_super <= i < first_super + len(enc.supermerges) for i in want), "no superword in the sample"
    ids = json.loads(run(be, "encode", "--model", str(model), input=sample.encode()).stdout)
    assert ids == want
    # small chunks of a superword model: cut only where a run of pretokens must end (a cut between
    # " of" and " the" would change the ids), so the ids are the whole text's
    for cmd in ("encode", "count"):
        r = run(be, cmd, "--model", str(model), "--chunk-size", "40", input=sample.encode())
        assert r.returncode == 0, r.stderr.decode()
        assert json.loads(r.stdout) == (want if cmd == "encode" else len(want))
    back = run(be, "decode", "--model", str(model), input=json.dumps(ids).encode())
    assert back.returncode == 0 and back.stdout.decode("utf-8") == sample


def test_superbpe_cli(be, tmp_path):
    src = tmp_path / "corpus.txt"
    src.write_text("".join(superword_docs()), encoding="utf-8")
    model = tmp_path / "sb.stmodel"
    r = run(be, "train", str(src), "--vocab-size", "800", "--algorithm", "superbpe", "--supermerges", "30",
            "-o", str(model), "--progress", "off")
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b""), r.stderr.decode()
    enc = supertok.load_model(str(model))
    phase1 = supertok.train(str(src), vocab_size=800, progress=False).merges
    assert enc.merges == phase1[:min(len(phase1), 800 - 243 - 30)] and 0 < len(enc.supermerges) <= 30
    assert b"\ntraining algorithm=superbpe mode=paper vocab_size=800 min_frequency=0 supermerges=30 ngram_split=no\n" \
        in model.read_bytes()


def test_superword_bad_arguments(tmp_path, fast):
    be = fast
    src = tmp_path / "c.txt"
    src.write_text("hello hello world\n", encoding="utf-8")
    out = str(tmp_path / "m.stmodel")
    base = ["train", str(src), "--vocab-size", "300", "-o", out]
    fails(run(be, *base, "--algorithm", "superbpe"), "--supermerges", "required with --algorithm superbpe")
    fails(run(be, *base, "--supermerges", "3"), "--supermerges", "applies only to --algorithm superbpe")
    fails(run(be, *base, "--algorithm", "boundless", "--supermerges", "3"), "--supermerges 3 applies only to")
    fails(run(be, *base, "--ngram-split"), "--ngram-split", "--algorithm boundless")
    fails(run(be, *base, "--algorithm", "boundless", "--mode", "hf"), "--algorithm", "needs --mode paper",
          "HuggingFace")
    fails(run(be, *base, "--algorithm", "superbpe", "--supermerges", "58"), "--supermerges",
          "more than the 57 merges --vocab-size 300 leaves")
    fails(run(be, *base, "--algorithm", "superbpe", "--supermerges", "-1"), "--supermerges", "must be at least 0")
    fails(run(be, *base, "--algorithm", "superbpe", "--supermerges", "x"), "--supermerges", "not a whole number")
    fails(run(be, *base, "--algorithm", "wordpiece"), "--algorithm", "invalid choice")
    assert not os.path.exists(out)


def test_superword_live_progress(tmp_path, fast):
    """--progress on: one redrawn line per phase, both phases of superword training named."""
    src = tmp_path / "c.txt"
    src.write_text("".join(superword_docs()), encoding="utf-8")
    r = run(fast, "train", str(src), "--vocab-size", "800", "--algorithm", "superbpe", "--supermerges", "20",
            "--ngram-split", "-o", str(tmp_path / "m.stmodel"), "--progress", "on")
    assert r.returncode == 0 and r.stdout == b"", r.stderr.decode()
    lines = [ln.split("\r")[-1] for ln in r.stderr.decode().split("\n")]
    # this small text runs out of pairs before SuperBPE's regular merges: a warning says so
    warned = [ln for ln in lines if ln.startswith("supertok train: warning: training stopped at ")]
    assert len(warned) == 1 and "no pair left" in warned[0], lines
    assert "(--vocab-size 800 minus the alphabet, the special tokens and --supermerges 20)" in warned[0], warned
    lines = [ln for ln in lines if ln not in warned]
    assert lines[-1] == "" and len(lines) == 7, lines
    heads = ["counting: ", "merging: ", "candidates: ", "splitting: ", "supermerging: ", "wrote "]
    for ln, head in zip(lines, heads):
        assert ln.startswith("supertok train: " + head), (head, ln)
    assert "distinct candidates" in lines[2] and "candidates after the n-gram split" in lines[3]
    assert "/20 steps (" in lines[4] and " supermerges, " in lines[4]
