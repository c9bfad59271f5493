"""What supertok does with the paths and processes around the core:

- an output path (`train -o`, `export -o`, Encoding.save, Encoding.export) is written as what it
  names: a regular file (or a symbolic link's target) replaced through a temporary file, a
  character device or a named pipe written straight (never replaced by a regular file), anything
  else refused with an error naming the path;
- an output that is the same file as an input (by device and inode: hard and symbolic links too)
  is refused before anything is read, and a location that cannot be written is found before the
  inputs are read;
- a damaged compressed training source is a SourceError naming the file and where;
- `--lines` reads a long line with no newline in linear time;
- encode_batch works in a child made by os.fork() or a multiprocessing "fork" pool after the
  parent used the thread pool (each fork is waited for with a time limit: a hang fails, it does
  not block the run);
- backends.load keeps one backend per name: available()/report() do not make a wasm module (and
  4 GiB of address space) each time;
- load_model takes a path, bytes or a binary file object, and refuses an int (no file
  descriptor is read or closed by accident).
"""
import bz2
import gzip
import lzma
import multiprocessing
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest

from conftest import BACKENDS, ROOT

import supertok
from supertok import backends

SMALL = os.path.join(ROOT, "vectors", "models", "bytes_small.stmodel")
TRAINS = [b for b in BACKENDS if b not in ("pywasm", "numba")]  # pywasm takes minutes to make a trainer; numba has none yet
CORPUS = "".join("the quick brown fox %d jumps over the lazy dog\n" % (i % 7) for i in range(300))


@pytest.fixture
def cli_backend():
    if not TRAINS:
        pytest.skip("training runs on native or wasmtime")
    return TRAINS[0]


def run(backend, *args, timeout=60):
    env = dict(os.environ, SUPERTOK_BACKEND=backend)
    env.pop("SUPERTOK_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "supertok"] + list(args), capture_output=True, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def fails(r, *needles, status=2):
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == status, (r.returncode, err)
    assert err.startswith("supertok: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)
    return err


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "corpus.txt"
    p.write_text(CORPUS, encoding="utf-8")
    return p


def _char_device(tmp_path):
    """(path of a character device made here, reader of what is written to it or None)."""
    path = str(tmp_path / "null")
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a null device of our own
        return path, None
    except (PermissionError, AttributeError, OSError):
        pass
    if not hasattr(os, "openpty"):
        pytest.skip("no way to make a character device here")
    master, slave = os.openpty()  # a terminal's slave side: a character device anyone can make
    name = os.ttyname(slave)
    got = []

    def reader():
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:
                return
            if not b:
                return
            got.append(b)
    threading.Thread(target=reader, daemon=True).start()
    return name, (got, master, slave)


class _FifoReader:
    """Reads a named pipe in a thread, without blocking forever when nothing is written."""

    def __init__(self, path, limit=30):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = b""
        self.limit = limit
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        import select
        end = time.monotonic() + self.limit
        while time.monotonic() < end:
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if not r:
                continue
            b = os.read(self.fd, 65536)
            if b:
                self.data += b
            elif self.data:
                break  # the writer came and went
            else:
                time.sleep(0.02)
        os.close(self.fd)

    def join(self):
        self.t.join(self.limit + 5)
        return self.data


# ---- output paths --------------------------------------------------------------------------------

def test_train_to_a_character_device_writes_it_and_leaves_it_a_device(cli_backend, corpus, tmp_path):
    dev, tty = _char_device(tmp_path)
    r = run(cli_backend, "train", str(corpus), "--vocab-size", "300", "-o", dev, "--progress", "off")
    assert r.returncode == 0, r.stderr.decode()
    assert stat.S_ISCHR(os.stat(dev).st_mode), "the device was replaced by a regular file"
    if tty is not None:
        time.sleep(0.3)
        assert b"supertok-model 1" in b"".join(tty[0])
        os.close(tty[2])
    # the API's writers too
    enc = supertok.load_model(SMALL)
    enc.save(dev)
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    res = enc.export(dev, "tiktoken", sample=["hello world\n"])
    assert stat.S_ISCHR(os.stat(dev).st_mode) and res.checked and res.ok, res.summary()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_train_to_a_named_pipe_writes_through_it(cli_backend, corpus, tmp_path):
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    r = run(cli_backend, "train", str(corpus), "--vocab-size", "300", "-o", fifo, "--progress", "off")
    got = reader.join()
    assert r.returncode == 0, r.stderr.decode()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the named pipe was replaced by a regular file"
    assert got.startswith(b"supertok-model 1\n"), got[:100]
    # Encoding.save through the pipe gives the model back whole
    enc = supertok.load_model(SMALL)
    reader = _FifoReader(fifo)
    enc.save(fifo)
    assert reader.join() == enc._model_data
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_symbolic_link_output_replaces_its_target_and_stays_a_link(cli_backend, corpus, tmp_path):
    target = tmp_path / "real.stmodel"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / "link.stmodel"
    os.symlink("real.stmodel", link)
    r = run(cli_backend, "train", str(corpus), "--vocab-size", "300", "-o", str(link), "--progress", "off")
    assert r.returncode == 0, r.stderr.decode()
    assert os.path.islink(link) and os.readlink(link) == "real.stmodel"
    assert target.read_bytes().startswith(b"supertok-model 1\n")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640  # the replaced file's permissions stay
    # a dangling link: its target is created, the link stays
    dangling = tmp_path / "dangling.stmodel"
    os.symlink("made.stmodel", dangling)
    supertok.load_model(SMALL).save(dangling)
    assert os.path.islink(dangling) and (tmp_path / "made.stmodel").read_bytes().startswith(b"supertok-model 1")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets here")
def test_an_output_that_is_no_file_is_refused_naming_it(cli_backend, corpus, tmp_path):
    sock_path = tmp_path / "s"
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(sock_path))
        r = run(cli_backend, "train", str(corpus), "--vocab-size", "300", "-o", str(sock_path), "--progress", "off")
        fails(r, str(sock_path), "socket")
        assert stat.S_ISSOCK(os.stat(sock_path).st_mode)
        r = run(cli_backend, "export", SMALL, "--format", "tiktoken", "-o", str(sock_path), "--no-check")
        fails(r, str(sock_path), "socket")
        with pytest.raises(OSError, match="socket") as ei:
            supertok.load_model(SMALL).save(sock_path)
        assert str(sock_path) in str(ei.value)
        assert stat.S_ISSOCK(os.stat(sock_path).st_mode)
    finally:
        s.close()
    d = tmp_path / "dir"
    d.mkdir()
    with pytest.raises(IsADirectoryError, match="directory"):
        supertok.load_model(SMALL).save(d)
    fails(run(cli_backend, "export", SMALL, "--format", "hf", "-o", str(d), "--no-check"), str(d), "directory")


# ---- outputs that are inputs ---------------------------------------------------------------------

def test_train_refuses_to_overwrite_its_corpus(cli_backend, corpus, tmp_path):
    before = corpus.read_bytes()
    hard = tmp_path / "hard.txt"
    os.link(corpus, hard)
    soft = tmp_path / "soft.txt"
    os.symlink(corpus.name, soft)
    other = tmp_path / "other.txt"
    other.write_text("another corpus\n", encoding="utf-8")
    for out in (corpus, hard, soft):
        r = run(cli_backend, "train", str(other), str(corpus), "--vocab-size", "300", "-o", str(out),
                "--progress", "off")
        fails(r, "same file", str(out), str(corpus))
        assert corpus.read_bytes() == before
    assert os.path.islink(soft)


def test_export_refuses_to_overwrite_its_model_or_sample(cli_backend, corpus, tmp_path):
    model = tmp_path / "m.stmodel"
    shutil.copy(SMALL, model)
    before = model.read_bytes()
    fails(run(cli_backend, "export", str(model), "--format", "tiktoken", "-o", str(model)), "same file")
    link = tmp_path / "m-link.stmodel"
    os.symlink(model.name, link)
    fails(run(cli_backend, "export", str(link), "--format", "hf", "-o", str(model)), "same file")
    assert model.read_bytes() == before
    sample = corpus.read_bytes()
    fails(run(cli_backend, "export", str(model), "--format", "tiktoken", "-o", str(corpus), "--sample", str(corpus)),
          "same file", str(corpus))
    assert corpus.read_bytes() == sample
    # the API knows the file a model was loaded from
    enc = supertok.load_model(model)
    with pytest.raises(ValueError, match="same file"):
        enc.export(model, "tiktoken", check=False)
    with pytest.raises(ValueError, match="same file"):
        enc.export(link, "hf", check=False)
    with pytest.raises(ValueError, match="same file"):
        enc.save(model)
    assert model.read_bytes() == before
    enc.save(tmp_path / "copy.stmodel")  # any other file is fine
    assert (tmp_path / "copy.stmodel").read_bytes() == before


@pytest.mark.skipif(not (sys.platform.startswith("linux") and hasattr(os, "mkfifo")),
                    reason="uses /proc (a directory where no file can be made) and a named pipe")
def test_an_unwritable_output_is_found_before_the_input_is_read(cli_backend, tmp_path):
    """The source is a named pipe nobody writes to: opening it would block for ever, so the run
    ends only if the output is checked first (for root too: /proc takes no new file)."""
    src = tmp_path / "never.txt"
    os.mkfifo(src)
    r = run(cli_backend, "train", str(src), "--vocab-size", "300", "-o", "/proc/supertok-test.stmodel", timeout=30)
    fails(r, "/proc/supertok-test.stmodel", "cannot write")
    assert b"counted" not in r.stderr
    r = run(cli_backend, "export", str(src), "--format", "hf", "-o", "/proc/supertok-test.json", timeout=30)
    fails(r, "/proc/supertok-test.json", "cannot write")


# ---- damaged compressed sources ------------------------------------------------------------------

def _damaged(tmp_path):
    text = CORPUS.encode() * 200  # 100 kB
    g = gzip.compress(text)
    out = []
    p = tmp_path / "bad-deflate.txt.gz"
    p.write_bytes(g[:20] + b"\0" * 50 + g[70:])  # zlib.error inside the deflate stream
    out.append(p)
    p = tmp_path / "bad-deflate.jsonl.gz"
    p.write_bytes(g[:20] + b"\0" * 50 + g[70:])
    out.append(p)
    big = "".join("line %d of a longer text, %s\n" % (i, "x" * (i % 50)) for i in range(120000)).encode()
    g = gzip.compress(big)
    p = tmp_path / "cut.txt.gz"
    p.write_bytes(g[:len(g) * 3 // 5])  # EOFError after more than a megabyte of text
    out.append(p)
    b = bz2.compress(text)
    p = tmp_path / "bad.txt.bz2"
    p.write_bytes(b[:20] + b"\xff" * 50 + b[70:])
    out.append(p)
    x = lzma.compress(text)
    p = tmp_path / "bad.txt.xz"
    p.write_bytes(x[:40] + b"\xff" * 50 + x[90:])
    out.append(p)
    return out


@pytest.mark.parametrize("backend_name", TRAINS or ["none"])
def test_a_damaged_compressed_source_names_the_file_and_where(backend_name, tmp_path):
    if backend_name == "none":
        pytest.skip("training runs on native or wasmtime")
    from supertok._train import SourceError
    prev = supertok._set_backend(backends.load(backend_name))
    try:
        for p in _damaged(tmp_path):
            with pytest.raises(SourceError) as ei:
                supertok.train(str(p), vocab_size=300, progress=False)
            e = ei.value
            assert str(e).startswith(str(p) + ": cannot read"), str(e)
            assert e.path == str(p) and e.line is not None and e.offset is not None, (e.path, e.line, e.offset)
            if p.name == "cut.txt.gz":
                assert e.offset >= 1 << 20 and e.line > 1000, (e.offset, e.line)
                assert "%d (line %d)" % (e.offset, e.line) in str(e)
    finally:
        supertok._set_backend(prev)


def test_cli_damaged_compressed_source(cli_backend, tmp_path):
    p = _damaged(tmp_path)[0]
    fails(run(cli_backend, "train", str(p), "--vocab-size", "300", "-o", str(tmp_path / "m.stmodel")),
          str(p), "cannot read", "damaged")
    assert not (tmp_path / "m.stmodel").exists()


# ---- --lines on a long line ----------------------------------------------------------------------

def test_lines_splits_like_split_and_across_blocks(tmp_path):
    from supertok import cli
    data = b"a" * 100000 + b"\n\nb\n" + b"c" * 200000 + b"\n" + b"d" * 70000
    p = tmp_path / "t.txt"
    for content in (data, data + b"\n", b"", b"\n", b"x"):
        p.write_bytes(content)
        got = [item for batch in cli._lines(str(p)) for item in batch]
        want = content.split(b"\n")
        if want and want[-1] == b"":
            want.pop()
        assert [ln for _, ln in got] == want
        assert [n for n, _ in got] == list(range(1, len(want) + 1))


def _cpu_lines(path):
    from supertok import cli
    t = time.process_time()
    for _ in cli._lines(str(path)):
        pass
    return time.process_time() - t


def test_lines_is_linear_in_a_line_without_newline(tmp_path):
    """A line of 4 MB and one of 32 MB, no newline: CPU time grows about 8 times (linear), not 64
    times (joining the line again at every 64 kB block). Best of a few runs each; the bound
    (24 times) leaves room for noise."""
    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    small.write_bytes(b"a" * (4 << 20))
    big.write_bytes(b"a" * (32 << 20))
    t_small = min(_cpu_lines(small) for _ in range(5))
    t_big = _cpu_lines(big)
    for _ in range(2):
        if t_big <= 24 * max(t_small, 1e-3):
            break
        t_big = min(t_big, _cpu_lines(big))
    assert t_big <= 24 * max(t_small, 1e-3), (t_small, t_big)


# ---- fork ------------------------------------------------------------------------------------------

def _in_child(fn, limit=15):
    """Run fn() in a child made by os.fork(); its exit status (0: fn returned True), or "hung"
    when it did not end within limit seconds (it is killed)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if fn() else 3
        except BaseException:
            code = 4
        finally:
            os._exit(code)
    end = time.monotonic() + limit
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "hung"


TEXT = "hello world, this is a line of text to encode "


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("backend_name", [b for b in BACKENDS if b != "pywasm"] or ["none"])
def test_encode_batch_in_a_forked_child(backend_name):
    if backend_name == "none":
        pytest.skip("native or wasmtime")
    prev = supertok._set_backend(backends.load(backend_name))
    try:
        enc = supertok.get_encoding("r50k_base")
        want = enc.encode(TEXT)
        for parent_n in (64, 1000):
            for child_n in (1, 2, 3, 8, 100):
                enc.encode_batch([TEXT] * parent_n)  # starts the pool's threads in the parent
                status = _in_child(lambda: enc.encode_batch([TEXT] * child_n) == [want] * child_n)
                assert status == 0, (parent_n, child_n, status)
        # a long text cut into parts that the pool encodes
        old = supertok.encoding.set_parallel(4, force=True)
        try:
            long_text = TEXT * 2000
            long_ids = enc.encode(long_text)
            status = _in_child(lambda: enc.encode(long_text) == long_ids)
            assert status == 0, ("parallel", status)
        finally:
            supertok.encoding.set_parallel(old[0], force=old[1], min_bytes=old[2])
    finally:
        supertok._set_backend(prev)


def _mp_encode(n):
    return supertok.get_encoding("r50k_base").encode_batch([TEXT] * n)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_encode_batch_in_a_multiprocessing_fork_pool():
    enc = supertok.get_encoding("r50k_base")
    want = enc.encode(TEXT)
    ctx = multiprocessing.get_context("fork")
    for attempt in range(3):
        enc.encode_batch([TEXT] * 256)
        pool = ctx.Pool(2)
        try:
            got = pool.map_async(_mp_encode, [1, 2, 3, 8]).get(timeout=20)
        except multiprocessing.TimeoutError:
            pytest.fail("encode_batch hung in a forked pool worker (attempt %d)" % attempt)
        finally:
            pool.terminate()
            pool.join()
        assert got == [[want] * n for n in (1, 2, 3, 8)]


# ---- backend loads ---------------------------------------------------------------------------------

def _vm_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1])
    return None


def test_backend_loads_are_kept_not_leaked():
    names = backends.available()
    assert names, "no backend loads here"
    for name in names:
        assert backends.load(name) is backends.load(name), name
    if not os.path.exists("/proc/self/status"):
        return
    before = _vm_kib()
    for _ in range(300):
        backends.available()
        backends.report()
        if "wasmtime" in names:
            backends.load("wasmtime")
    grown = _vm_kib() - before
    assert grown < 1 << 20, "address space grew by %d KiB over 300 loads" % grown  # wasmtime: 4 GiB each


# ---- load_model's argument -------------------------------------------------------------------------

def test_load_model_refuses_an_int_and_closes_nothing(tmp_path):
    fd = os.open(SMALL, os.O_RDONLY)
    try:
        with pytest.raises(TypeError, match="int"):
            supertok.load_model(fd)
        os.fstat(fd)  # still open: nothing took it for its own
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0
    finally:
        os.close(fd)
    with pytest.raises(TypeError, match="float"):
        supertok.load_model(1.5)


def test_load_model_takes_a_binary_file_object_and_leaves_it_open():
    import io
    import pathlib
    want = supertok.load_model(SMALL).encode("hello world")
    with open(SMALL, "rb") as f:
        enc = supertok.load_model(f)
        assert not f.closed
    assert enc.encode("hello world") == want
    with open(SMALL, "rb") as f:
        assert supertok.load_model(io.BytesIO(f.read())).encode("hello world") == want
    assert supertok.load_model(pathlib.Path(SMALL)).encode("hello world") == want
    with open(SMALL, encoding="utf-8") as f:
        with pytest.raises(TypeError, match="binary mode"):
            supertok.load_model(f)
