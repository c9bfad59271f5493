"""Training under Ctrl-C and thread trouble, and training that stops short.

- Ctrl-C during multi-threaded counting: the counting threads must be stopped and waited for
  before their counters are freed (a worker still inside st_counter_add while the main thread
  frees its counter, or while Python finalizes, is a segfault). Checked with real SIGINTs at
  random moments, many times, from the command line and from the API, and with a second Ctrl-C
  while the threads finish their core call; and per phase, on every backend.
- threads has a documented maximum, and a thread that cannot be started leaves no thread
  running and no counter allocated.
- A training that ends below the size asked for says why (the core's ST_TRAINER_STOP): a
  TrainWarning, a line on the command line and a comment line in the model.

SUPERTOK_SIGINT_RUNS sets the number of interrupted runs of the two loops (default 24 each; each
loop also stops taking new runs after SIGINT_BUDGET seconds, and needs at least 20).
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest

import supertok
from supertok import _train
from supertok.backends import current

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the supertok this test imported (an installed one, or a source tree on PYTHONPATH), for the children
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(supertok.__file__)))
RUNS = int(os.environ.get("SUPERTOK_SIGINT_RUNS", "24"))
SIGINT_BUDGET = float(os.environ.get("SUPERTOK_SIGINT_BUDGET", "55"))  # seconds per loop
MIN_RUNS = 20


def _env():
    """The children's environment: the same supertok as this process, forced onto native (the
    backend with counting threads), so a child that cannot load it fails instead of quietly
    training on a wasm backend that has no threads."""
    if "native" not in supertok.backends.available():
        pytest.skip("the native backend does not load here")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PKG_ROOT, env.get("PYTHONPATH")) if p)
    env["SUPERTOK_BACKEND"] = "native"
    return env


def _udhr_texts():
    with open(os.path.join(ROOT, "vectors", "texts", "udhr.jsonl"), encoding="utf-8") as f:
        return [r["text"] for r in map(json.loads, f) if "text" in r]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 4 MB of multilingual text (the vendored UDHR excerpts, their words' letters shuffled
    so that there are many distinct pretokens: counting 8 copies takes about half a second, and
    the merges that follow several seconds, so a SIGINT before 1.0 s always comes before the
    model is written), in lines of about 1.3 MB:
    a work item is whole lines, so each core call takes long, and so does the wait for the
    threads' last calls when counting ends (where an interrupted join() used to free a counter
    in use)."""
    rng = random.Random(24)
    texts = _udhr_texts()
    lines, size = [], 0
    while size < 4_000_000:
        words = rng.choice(texts).split()
        rng.shuffle(words)
        for k in range(len(words)):
            w = words[k]
            if len(w) > 2:
                c = list(w + rng.choice(words))
                rng.shuffle(c)
                words[k] = "".join(c[:rng.randint(3, 12)])
        line = " ".join(words[:rng.randint(5, 60)]) + "\n"
        lines.append(line)
        size += len(line.encode("utf-8"))
    path = tmp_path_factory.mktemp("corpus") / "wide.txt"
    per = len(lines) // 3 + 1
    path.write_text("".join(" ".join(x.rstrip("\n") for x in lines[k:k + per]) + "\n"
                            for k in range(0, len(lines), per)), encoding="utf-8")
    return str(path)


@pytest.fixture
def trains(backend):
    """The backend fixture's backends that train in a moment (not pywasm)."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: one training takes it about 90 s, so these training tests run "
                    "on native and wasmtime")
    return backend


@pytest.fixture
def native():
    """The native backend (the one with counting threads) for the test."""
    from conftest import get_backend
    if "native" not in supertok.backends.available():
        pytest.skip("the native backend does not load here")
    prev = supertok._set_backend(get_backend("native"))
    try:
        yield current()
    finally:
        supertok._set_backend(prev)


def _count_threads():
    return [t.name for t in threading.enumerate() if t.name.startswith("supertok-count")]


class _Handles:
    """Wraps a backend's counter and trainer constructors and frees (on the instance) to see that
    every object made is freed."""

    MAKE = ("counter_new", "trainer_candidates_new", "trainer_new")
    FREE = ("counter_free", "trainer_free")

    def __init__(self, backend, monkeypatch):
        self.live = {}
        self.made = 0
        for name in self.MAKE:
            monkeypatch.setattr(backend, name, self._make(getattr(backend, name)), raising=False)
        for name in self.FREE:
            monkeypatch.setattr(backend, name, self._free(getattr(backend, name)), raising=False)

    def _make(self, f):
        def make(*args):
            h = f(*args)
            self.live[id(h)] = h
            self.made += 1
            return h
        return make

    def _free(self, f):
        def free(h):
            self.live.pop(id(h), None)
            return f(h)
        return free


# ---- Ctrl-C: real SIGINTs at random moments ----------------------------------------------------

@pytest.mark.slow  # Ctrl-C at random moments of several trainings in child processes
def test_cli_sigint_during_threaded_training(corpus, tmp_path):
    """python -m supertok train --threads 2 on a few-MB corpus (given 8 times: the counting pass
    then takes a good part of a second), SIGINT at a random moment 0.2-1.0 s in (never before
    the command is up: an interrupt while the interpreter starts is Python's), many times: exit
    status 130, "supertok: interrupted", no model and no temporary file; never a signal death."""
    rng = random.Random()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "x.stmodel"
    t_loop = time.monotonic()
    runs, failures = 0, []
    while runs < RUNS and (time.monotonic() - t_loop < SIGINT_BUDGET or runs < MIN_RUNS):
        algorithm = ["--algorithm", "boundless"] if runs % 3 == 2 else []
        err_path = tmp_path / "err.txt"
        with open(err_path, "wb") as err:
            t0 = time.monotonic()
            p = subprocess.Popen([sys.executable, "-m", "supertok", "train"] + [corpus] * 8 +
                                 ["--vocab-size", "1000000", "--threads", "2", "-o", str(out), "--progress", "on"]
                                 + algorithm, env=_env(), stdout=subprocess.DEVNULL, stderr=err)
        delay = rng.uniform(0.2, 1.0)
        while os.path.getsize(err_path) == 0 and p.poll() is None and time.monotonic() - t0 < 20:
            time.sleep(0.005)  # the first progress line: the command is counting
        time.sleep(max(0.0, t0 + delay - time.monotonic()))
        p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
        stderr = err_path.read_bytes().decode("utf-8", "replace")
        left = sorted(os.listdir(out_dir))
        if rc != 130 or "supertok: interrupted" not in stderr or left:
            failures.append("run %d (SIGINT at %.2f s%s): exit %s, files left %s, stderr ends %r"
                            % (runs, delay, " boundless" if algorithm else "", rc, left, stderr[-300:]))
            for f in left:
                os.remove(out_dir / f)
        runs += 1
    assert runs >= MIN_RUNS
    assert not failures, "%d of %d interrupted runs went wrong:\n%s" % (len(failures), runs, "\n".join(failures))


API_LOOP = r"""
import json, os, random, signal, sys, threading, time
import supertok
from supertok.backends import current

b = current()
assert b.name == "native", b.name
live, made = {}, [0]
def wrap(name, free):
    f = getattr(b, name)
    def g(*args):
        if free:
            live.pop(id(args[0]), None)
            return f(*args)
        h = f(*args)
        live[id(h)] = h
        made[0] += 1
        return h
    setattr(b, name, g)
for n in ("counter_new", "trainer_candidates_new", "trainer_new"):
    wrap(n, False)
for n in ("counter_free", "trainer_free"):
    wrap(n, True)

corpus, runs, budget, min_runs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rng = random.Random()
problems, done, t_loop = [], 0, time.monotonic()
while done < runs and (time.monotonic() - t_loop < budget or done < min_runs):
    delay = rng.uniform(0.2, 1.0)
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        supertok.train([corpus] * 8, vocab_size=1000000, threads=2, progress=False,
                       algorithm="boundless" if done % 3 == 2 else "bpe")
        problems.append("run %d: no KeyboardInterrupt" % done)
    except KeyboardInterrupt:
        pass
    timer.join()
    alive = [t.name for t in threading.enumerate() if t.name.startswith("supertok-count")]
    if alive or live:
        problems.append("run %d (SIGINT at %.2f s): threads alive %s, %d core objects not freed"
                        % (done, delay, alive, len(live)))
        live.clear()
    done += 1
print(json.dumps({"runs": done, "problems": problems, "made": made[0]}))
"""


@pytest.mark.slow  # Ctrl-C at random moments of several trainings in child processes
def test_api_sigint_during_threaded_training(corpus):
    """supertok.train(..., threads=2) in a subprocess, SIGINT at a random moment 0.2-1.0 s in,
    many times: KeyboardInterrupt each time, then no supertok-count thread left and every counter
    and trainer freed; the process never dies of a signal."""
    p = subprocess.run([sys.executable, "-c", API_LOOP, corpus, str(RUNS), str(SIGINT_BUDGET), str(MIN_RUNS)],
                       env=_env(), capture_output=True, timeout=300)
    assert p.returncode == 0, "exit %s (a negative one is a signal: -11 SIGSEGV); stderr ends %r" % (
        p.returncode, p.stderr.decode("utf-8", "replace")[-1500:])
    result = json.loads(p.stdout.decode().strip().splitlines()[-1])
    assert result["runs"] >= MIN_RUNS and result["made"] > 0
    assert not result["problems"], "\n".join(result["problems"])


# ---- Ctrl-C: a second one while the threads finish, and every phase on every backend ---------

def test_second_ctrl_c_waits_for_the_threads(native, monkeypatch, tmp_path):
    """Ctrl-C, then Ctrl-C again while a counting thread is still in a (slow) core call: train()
    raises KeyboardInterrupt only once every thread is out of the core and gone, and frees every
    counter (freeing one in use is the crash)."""
    b = native
    handles = _Handles(b, monkeypatch)
    busy = [0]
    lock = threading.Lock()
    real_add = b.counter_add

    def slow_add(counter, data, flags):
        with lock:
            busy[0] += 1
        try:
            time.sleep(0.6)  # the core call in progress when Ctrl-C comes (sleep releases the GIL)
            return real_add(counter, data, flags)
        finally:
            with lock:
                busy[0] -= 1

    monkeypatch.setattr(b, "counter_add", slow_add)
    path = tmp_path / "t.txt"
    path.write_text("".join("line %d of some text\n" % i for i in range(20000)))

    def progress(r):
        if r.phase == "count":
            deadline = time.monotonic() + 10
            while not busy[0] and time.monotonic() < deadline:  # a thread is inside its slow call
                time.sleep(0.005)
            assert busy[0], "no counting thread started its core call within 10 s"
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()  # the second Ctrl-C
            raise KeyboardInterrupt  # the first
    monkeypatch.setattr(_train, "CHUNK", 4096)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        supertok.train(str(path), vocab_size=1000, threads=2, progress=progress)
    waited = time.monotonic() - t0
    assert busy[0] == 0, "train() returned while %d core calls were still running" % busy[0]
    assert not _count_threads()
    assert not handles.live, "%d core objects not freed" % len(handles.live)
    assert waited >= 0.5  # it did wait for the slow call
    time.sleep(0.3)  # the second SIGINT has been delivered (and raised above), not pending


PHASES = ["count", "merge", "candidates", "split", "supermerge"]


@pytest.mark.parametrize("phase", PHASES)
def test_ctrl_c_in_each_phase(trains, phase, monkeypatch):
    """KeyboardInterrupt at the first progress record of each phase (counting, merging, the
    candidates pass, the n-gram split, supermerging): it propagates, no counting thread is left,
    every core object is freed, and the next training works (native with 2 threads; wasmtime)."""
    b = current()
    handles = _Handles(b, monkeypatch)
    texts = _udhr_texts()[:40]
    monkeypatch.setattr(_train, "CHUNK", 2048)  # many work items: the threads are busy

    def progress(r):
        if r.phase == phase:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        supertok.train(iter(texts), vocab_size=600, threads=2, algorithm="boundless", ngram_split=True,
                       progress=progress)
    assert not _count_threads()
    assert not handles.live, "%d core objects not freed" % len(handles.live)
    enc = supertok.train(iter(texts), vocab_size=600, threads=2, algorithm="boundless", progress=False)
    assert enc.decode(enc.encode(texts[0])) == texts[0]


# ---- threads: a bound, and no leak when a thread cannot start -----------------------------------

@pytest.mark.parametrize("threads", [1025, 5000, 10 ** 8])
def test_threads_above_the_maximum_is_refused_at_once(threads, monkeypatch, tmp_path):
    b = current()
    handles = _Handles(b, monkeypatch)
    path = tmp_path / "t.txt"
    path.write_text("hello world\n")
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=r"threads=%d is more than the maximum, 1024" % threads):
        supertok.train(str(path), vocab_size=300, threads=threads, progress=False)
    assert time.monotonic() - t0 < 1.0
    assert handles.made == 0  # refused before any counter was made


def test_threads_at_the_maximum_is_accepted(tmp_path):
    assert _train.MAX_THREADS == 1024
    assert "MAX_THREADS (1024" in supertok.train.__doc__
    path = tmp_path / "t.txt"
    path.write_text("hello world\n" * 10)
    enc = supertok.train(str(path), vocab_size=252, threads=_train.MAX_THREADS, progress=False)
    assert enc.merges


def test_cli_threads_above_the_maximum(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("hello world\n")
    p = subprocess.run([sys.executable, "-m", "supertok", "train", str(path), "--vocab-size", "300", "--threads",
                        "5000", "-o", str(tmp_path / "m.stmodel")], env=_env(), capture_output=True, timeout=60)
    assert p.returncode == 2
    assert b"--threads 5000 is more than the maximum, 1024" in p.stderr
    assert not (tmp_path / "m.stmodel").exists()


def _failing_start(monkeypatch, k):
    """threading.Thread.start fails after k starts, as when the process runs out of threads."""
    real = threading.Thread.start
    n = [0]

    def start(self):
        if n[0] >= k:
            raise RuntimeError("can't start new thread")
        n[0] += 1
        return real(self)
    monkeypatch.setattr(threading.Thread, "start", start)


@pytest.mark.parametrize("k, algorithm", [(0, "bpe"), (3, "bpe"), (7, "bpe"), (8 + 5, "boundless")])
def test_thread_start_failure_leaks_nothing(native, k, algorithm, monkeypatch, tmp_path):
    """8 threads, the (k+1)-th start fails (k = 8 + 5: in the candidates pass): the error
    propagates, the k threads started are stopped and gone, every counter and the trainer freed,
    and training works afterwards."""
    b = native
    path = tmp_path / "t.txt"
    path.write_text("".join("the cat sat on the mat %d times\n" % i for i in range(3000)))
    with monkeypatch.context() as m:
        handles = _Handles(b, m)
        _failing_start(m, k)
        with pytest.raises(RuntimeError, match="can't start new thread"):
            supertok.train(str(path), vocab_size=400, threads=8, algorithm=algorithm, progress=False)
        assert not _count_threads()
        assert not handles.live, "%d core objects not freed" % len(handles.live)
    enc = supertok.train(str(path), vocab_size=400, threads=8, algorithm=algorithm, progress=False)
    assert len(enc.merges) + len(enc.supermerges) == 400 - 243


# ---- training that stops short says why ----------------------------------------------------------

def _train_warned(*args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc = supertok.train(*args, progress=False, **kwargs)
    return enc, [w.message for w in caught if issubclass(w.category, supertok.TrainWarning)]


def _comments(enc):
    return [line[len("comment "):] for line in enc._model_data.decode().splitlines() if line.startswith("comment ")]


def test_no_warning_when_the_size_is_reached(trains):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = supertok.train(iter(["the cat sat on the mat\n"] * 5), vocab_size=250, progress=False)
    assert len(enc.merges) == 7
    assert len(_comments(enc)) == 1


def test_stop_no_pair(trains):
    enc, ws = _train_warned(iter(["ab ab ab cd\n"] * 5), vocab_size=1000)
    assert len(enc.merges) == 4
    (w,) = ws
    assert isinstance(w, UserWarning)
    assert (w.reason, w.phase, w.made, w.wanted) == ("no_pair", "merge", 4, 757)
    assert "training stopped at 4 of the 757 merges vocab_size=1000 asks for: no pair left" in str(w)
    assert _comments(enc)[1] == "stopped at 4 of 757 merges: no pair left (every pretoken is a single token)"


def test_stop_min_frequency(trains):
    enc, ws = _train_warned(iter(["ab ab ab cd\n"] * 5), vocab_size=1000, min_frequency=6)
    (w,) = ws
    assert (w.reason, w.phase, w.made, w.wanted) == ("min_frequency", "merge", 2, 757)
    assert "fewer than min_frequency=6 times" in str(w)
    assert _comments(enc)[1] == "stopped at 2 of 757 merges: the best pair left occurs fewer than min_frequency times"


def test_stop_no_candidate_superbpe(trains):
    enc, ws = _train_warned(iter(["hello\n", "world\n"] * 5), vocab_size=270, algorithm="superbpe", supermerges=5)
    assert [(w.reason, w.phase, w.made, w.wanted) for w in ws] == [("no_pair", "merge", 8, 22),
                                                                 ("no_candidate", "supermerge", 0, 5)]
    assert "the 22 regular merges SuperBPE keeps" in str(ws[0])
    assert "no supermerge candidate pair left (0 distinct candidates)" in str(ws[1])
    assert _comments(enc)[1:] == [
        "phase 1 stopped at 8 merges, below the 22 regular merges SuperBPE keeps: no pair left (every pretoken is "
        "a single token)", "stopped at 0 of 5 supermerges: no supermerge candidate pair left"]


def test_stop_no_candidate_boundless(trains):
    enc, ws = _train_warned(iter(["hello\n", "world\n"] * 5), vocab_size=270, algorithm="boundless",
                            ngram_split=True)
    assert [(w.reason, w.phase, w.made, w.wanted) for w in ws] == [("no_pair", "merge", 8, 27),
                                                                 ("no_candidate", "supermerge", 8, 27)]
    assert "after the n-gram split" in str(ws[1])
    assert _comments(enc)[1] == ("stopped at 8 regular merges + 0 supermerges of 27: no supermerge candidate pair "
                                 "left; phase 1 stopped at 8 merges: no pair left (every pretoken is a single token)")


def test_stop_min_frequency_in_phase_2(trains):
    """Phase 1 makes all SuperBPE keeps; the one candidate pair ("hello" + " world", 2 times) is
    below min_frequency."""
    docs = ["hello\n", " world\n"] * 50 + ["hello world\n"] * 2
    enc, ws = _train_warned(iter(docs), vocab_size=243 + 9 + 1, algorithm="superbpe", supermerges=1, min_frequency=3)
    assert [(w.reason, w.phase, w.made, w.wanted) for w in ws] == [("min_frequency", "supermerge", 0, 1)]
    assert _comments(enc)[1] == "stopped at 0 of 1 supermerges: the best pair left occurs fewer than min_frequency times"
    enc, ws = _train_warned(iter(docs), vocab_size=243 + 9 + 1, algorithm="superbpe", supermerges=1, min_frequency=2)
    assert ws == [] and len(enc.supermerges) == 1


def test_superbpe_progress_shows_the_regular_merges_kept(trains):
    """SuperBPE's phase 1 trains toward vocab_size's target (as the reference does: the n-gram
    split's c_min is the count of its last merge), and the progress says how many the model keeps:
    vocab_size - alphabet - specials - supermerges."""
    records = []
    texts = _udhr_texts()[:20]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", supertok.TrainWarning)  # few candidates in so little text
        enc = supertok.train(iter(texts), vocab_size=600, algorithm="superbpe", supermerges=50,
                             progress=records.append)
    merge = [r for r in records if r.phase == "merge"]
    assert merge and all(r.kept == 600 - 243 - 50 and r.target == 600 - 243 for r in merge)
    assert len(enc.merges) == min(merge[-1].merges, 600 - 243 - 50)
    assert "SuperBPE keeps the first 307" in _train.describe(merge[-1])
    assert all(r.kept is None for r in records if r.phase != "merge")


def test_cli_says_why_training_stopped(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello\nworld\n" * 5)
    out = tmp_path / "m.stmodel"
    p = subprocess.run([sys.executable, "-m", "supertok", "train", str(corpus), "--vocab-size", "270",
                        "--algorithm", "superbpe", "--supermerges", "5", "-o", str(out)],
                       env=_env(), capture_output=True, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert "learned 8 merges of 27 in" in err and "(SuperBPE keeps the first 8 of them" in err
    assert ("supertok train: warning: training stopped at 8 of the 22 regular merges SuperBPE keeps (--vocab-size "
            "270 minus the alphabet, the special tokens and --supermerges 5): no pair left") in err
    assert ("supertok train: warning: training made 0 of the 5 supermerges asked for (--supermerges 5): no "
            "supermerge candidate pair left") in err
    assert "comment stopped at 0 of 5 supermerges: no supermerge candidate pair left" in out.read_text()
    corpus.write_text("ab ab ab cd\n" * 5)
    p = subprocess.run([sys.executable, "-m", "supertok", "train", str(corpus), "--vocab-size", "1000",
                        "--min-frequency", "6", "-o", str(out)], env=_env(), capture_output=True, timeout=60)
    assert p.returncode == 0
    assert b"warning: training stopped at 2 of the 757 merges --vocab-size 1000 asks for: the best pair left occurs " \
           b"fewer than --min-frequency 6 times" in p.stderr


RLIMIT_TRAIN = r"""
import random, resource, sys
import supertok
rnd = random.Random(7)
words = set()
while len(words) < 300000:  # distinct pretokens: the counter's entries and key bytes pass 1 MiB
    words.add("".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)))
with open(sys.argv[1], "w") as f:
    f.write(" ".join(sorted(words)))
if sys.argv[2] != "none":
    vm = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + int(sys.argv[2]) * (1 << 20), resource.RLIM_INFINITY))
model = supertok.train(sys.argv[1], vocab_size=300, threads=1, mode="paper", progress=False)
print(len(model.merges), repr(model.merges))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm are Linux's")
def test_training_under_an_address_space_limit(tmp_path):
    """Natively a growing array of 1 MiB or more is asked at 64 MiB of address space (pages of its
    own, resident only where written, never copied to grow); a process whose address space is
    limited (RLIMIT_AS, or strict overcommit) cannot have that much, and training must then grow
    by the size it needs. With 128 MiB of address space left, the build that asked for 64 MiB
    only failed ("text: out of memory"); 300,000 distinct words need a few megabytes."""
    env = _env()
    env["MALLOC_ARENA_MAX"] = "1"  # one malloc arena: a thread's own arena reserves 64 MiB too
    out = []
    for limit in ("128", "none"):
        p = subprocess.run([sys.executable, "-c", RLIMIT_TRAIN, str(tmp_path / "words.txt"), limit], env=env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        out.append(p.stdout)
    assert out[0].split()[0] == "57"  # 300 less the paper mode's 243 symbols
    assert out[0] == out[1]
