"""supertok.dask: count pretokens on a Dask cluster, then train on the caller (docs/dask.md).

Counting is the part of training that grows with the text; it adds (docs/formats/train-format.md),
so it spreads over Dask's distributed scheduler: one task per shard of the sources, each counting
its shard in the core (supertok.count_pretokens) on a worker and returning the shard's counts as
bytes (the .stcounts format), then a tree of tasks on the workers adding them (`FAN_IN` at a
time), so that only the total comes back to the caller. The merge loop (supertok.train on that
Counts) is one process: it runs on the caller.

Superwords (algorithm "boundless" or "superbpe") need a second pass over the text once phase 1 is
done: the supermerge candidates. The trainer on the caller saves what a candidates counter needs
(its spec: the pre-tokenizer and the eligible vocabulary, st_trainer_candidates_spec), which is
sent to the cluster once (as a task's result, so that it is computed again if the workers holding
it die); one task per shard (the counting pass's shards) counts the shard's
candidates with a counter made from the spec (st_candidates_new), and a tree of tasks adds them on
the workers; the total comes back as bytes, is loaded into one of the trainer's own counters and
given back to it, and training goes on (phase 2).

Shards: a compressed file is one shard; an uncompressed file (.txt, or .jsonl) larger than
shard_bytes is cut in byte ranges of about shard_bytes, on line boundaries (`shard_ranges`: a
range [start, end) holds the lines that begin in it, so every line belongs to exactly one shard).
The documents are what supertok.train reads: each line of a text file with its '\\n' kept (the last
one without, if the file does not end with one), the string `text` field of each line of a JSON-
lines file.

min_count applies to each shard's counts (the per-shard filter: a pretoken seen fewer than
min_count times in a shard is dropped from that shard's counts before they are added), so the
result depends on how the sources were sharded when min_count > 1; with min_count=1 it equals
supertok.count_pretokens on the same sources, byte for byte.

Workers must be able to import supertok (the same version as the caller): a LocalCluster started
here inherits the caller's environment; a remote cluster needs it installed.

Importing supertok does not import this module (nor Dask): `import supertok.dask` does.
"""
import collections
import glob
import inspect
import io
import os
import sys
import time

import supertok
from . import _train as _T

try:
    import distributed
except ImportError as _exc:  # pragma: no cover - the message says what to install
    raise ImportError("supertok.dask needs Dask's distributed scheduler: pip install 'supertok[dask]' "
                      "(dask[distributed])") from _exc

__all__ = ["count_pretokens", "train", "shard_ranges", "DaskProgress"]

FAN_IN = 4  # counts added per reduction task
_SUPERWORDS = ("boundless", "superbpe")

DaskProgress = collections.namedtuple("DaskProgress", "shards_done shards bytes total_bytes elapsed rate done phase",
                                      defaults=("count",))
DaskProgress.__doc__ = """Counting on the cluster so far, given to a progress callback: shards_done of
shards counted, bytes of input (as stored on disk: compressed files count their compressed size) of
total_bytes, elapsed seconds since the tasks were submitted, rate in bytes a second, done on the last
record (the total is added up then); phase "count" (the pretokens) or "candidates" (superwords' second
pass, once per vocabulary size trained)."""


# ---- shards -----------------------------------------------------------------------------------

def shard_ranges(size, shard_bytes):
    """The byte ranges [(start, end), ...] cutting a file of `size` bytes in pieces of about
    shard_bytes: consecutive, covering [0, size). A range holds the lines that BEGIN in it (see
    _range_bytes), so every line of the file is in exactly one range, whatever the cuts."""
    if size <= 0:
        return [(0, 0)]
    n = max(1, -(-size // max(1, shard_bytes)))
    step = -(-size // n)
    return [(s, min(size, s + step)) for s in range(0, size, step)]


def _line_end(f, pos, size, block=1 << 16):
    """The offset just after the first '\\n' at or after pos (size if none)."""
    if pos >= size:
        return size
    f.seek(pos)
    while True:
        data = f.read(block)
        if not data:
            return size
        i = data.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(data)


def _range_bytes(f, start, end, size):
    """(offset, bytes) of the whole lines that begin in [start, end): a line begins at 0 or just
    after a '\\n'. The first begins just after the first '\\n' at or after start - 1 (at 0 when start
    is 0); the last ends at the first '\\n' at or after end - 1 (or the end of the file)."""
    first = 0 if start == 0 else _line_end(f, start - 1, size)
    last = _line_end(f, end - 1, size) if end > 0 else 0
    if first >= last:
        return first, b""
    f.seek(first)
    return first, f.read(last - first)


def _shards(paths, shard_bytes):
    """[(path, start, end, size)]: start None for a whole file."""
    out = []
    for p in paths:
        opener, _jsonl = _T._kind(p)
        size = os.path.getsize(p)
        if opener is open and size > shard_bytes:
            out += [(p, s, e, e - s) for s, e in shard_ranges(size, shard_bytes)]
        else:
            out.append((p, None, None, size))
    return out


def _paths(paths):
    """The list of files: a path or a list of them; a name with glob characters that is no file is
    expanded (sorted); then checked as supertok.train checks its sources."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise TypeError("paths must be a path (str or os.PathLike) or a list of paths, not %s"
                        % type(paths).__name__)
    out = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError("paths holds %s, not a path (str or os.PathLike)" % type(p).__name__)
        p = os.fsdecode(os.fspath(p))
        if not os.path.exists(p) and glob.has_magic(p):
            found = sorted(glob.glob(p))
            if not found:
                raise FileNotFoundError("no file matches %r" % p)
            out += found
        else:
            out.append(p)
    counted = [p for p in out if p.endswith(".stcounts")]
    if counted:
        raise ValueError("%r holds counts (.stcounts), not text: add it to the result with supertok.Counts.load "
                         "instead" % counted[0])
    return [src for _kind, src in _T._sources(out)]


# ---- tasks (run on the workers) ---------------------------------------------------------------

class ShardError(Exception):
    """A shard's failure as it crosses from a worker to the caller (every field in args, so it
    pickles whole); the caller raises it as supertok's SourceError."""


def _jsonl_docs(path, first, data, base_line):
    """The `text` of each line of a range of a JSON-lines file, checked by supertok.train's reader
    (its errors, with the line numbered in the file)."""
    try:
        for _kind, batch, _where in _T._jsonl_items(path, lambda _p, _m: io.BytesIO(data), _T.CHUNK):
            for doc in batch:
                yield doc.decode("utf-8", "surrogatepass")
    except _T.SourceError as exc:
        line = exc.line + base_line() if exc.line is not None else None
        msg = str(exc)
        if exc.line is not None:
            msg = msg.replace("%s: line %d:" % (path, exc.line), "%s: line %d:" % (path, line), 1)
        off = None
        if exc.offset is not None:
            off = exc.offset + first
            msg = msg.replace("(byte %d of the file)" % exc.offset, "(byte %d of the file)" % off)
        raise ShardError(msg, path, line, off) from None


def _shard_input(shard):
    """What a shard's documents are, as supertok.train reads them: ("file", path) for a whole file
    (its reader), ("lines", bytes) for a range of a text file (whole lines, checked to be UTF-8:
    counted in one core call, as train counts a file), ("documents", iterator of str) for a range
    of a JSON-lines file. Errors are ShardErrors naming the file and its line."""
    path, start, end, _size = shard
    if start is None:
        return "file", path
    with open(path, "rb") as f:
        first, data = _range_bytes(f, start, end, os.fstat(f.fileno()).st_size)
    if _T._kind(path)[1]:
        return "documents", _jsonl_docs(path, first, data, lambda: _T.lines_before(path, first))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        off = first + exc.start
        line = _T.lines_before(path, first) + data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise ShardError("%s: line %d: invalid UTF-8 at byte %d of the line (byte %d of the file)"
                         % (path, line, col, off), path, line, off) from None
    return "lines", data


def _count_shard(shard, pretokenizer, min_count):
    """The counts of one shard (supertok.Counts), filtered by min_count."""
    kind, src = _shard_input(shard)
    try:
        if kind == "lines":
            from ._counts import _count_lines
            counts = _count_lines(src, **pretokenizer)
        else:
            counts = supertok.count_pretokens(src, threads=1, progress=False, **pretokenizer)
    except _T.SourceError as exc:
        raise ShardError(str(exc), exc.path, exc.line, exc.offset) from None
    return counts.filtered(min_count) if min_count > 1 else counts


def _candidates_shard(shard, spec):
    """The supermerge candidates of one shard as saved counts (.stcounts version 2 bytes), counted
    by a counter made from the trainer's spec (st_candidates_new), the documents read as the
    counting pass read them."""
    from .backends import current
    backend = current()
    kind, src = _shard_input(shard)
    counter = backend.candidates_new(spec)
    try:
        if kind == "lines":
            backend.counter_add(counter, src, _T._COUNT_LINES)
        else:
            items = _T._items(_T._sources([src]), _T.CHUNK) if kind == "file" else _T._document_items(src, _T.CHUNK)
            try:
                for item in items:
                    _T._feed(backend, counter, item)
            except _T.SourceError as exc:
                raise ShardError(str(exc), exc.path, exc.line, exc.offset) from None
        return backend.counter_save(counter)
    finally:
        backend.counter_free(counter)


def _shard_task(shard, pretokenizer, min_count):
    """A task: one shard's counts as .stcounts bytes. (_count_shard is looked up when the task
    runs, so a test can replace it on the workers.)"""
    return _count_shard(shard, pretokenizer, min_count).to_bytes()


def _add_task(*parts):
    """A task: the sum of counts given as bytes, as bytes."""
    from ._counts import _sum_bytes
    return _sum_bytes(parts)  # loaded into one counter and saved once


def _spec_task(spec):
    """A task: the candidates spec, held on the workers for the pass's tasks."""
    return spec


def _candidates_task(shard, spec):
    """A task: one shard's candidates as bytes. (_candidates_shard is looked up when the task runs,
    so a test can replace it on the workers.)"""
    return _candidates_shard(shard, spec)


def _add_candidates_task(spec, *parts):
    """A task: the sum of candidates counts given as bytes, as bytes (one counter of the spec)."""
    from ._counts import _sum_candidates
    return _sum_candidates(spec, parts)


# ---- the caller --------------------------------------------------------------------------------

def _progress_fn(progress):
    if progress is None or progress is False:
        return None
    if progress is True:
        last = [0.0]

        def show(r):
            now = time.monotonic()
            if not r.done and now - last[0] < 0.2:  # a line updated a few times a second
                return
            last[0] = now
            sys.stderr.write("\rsupertok.dask%s: %d/%d shards, %s of %s, %.1fs, %s/s%s"
                             % ("" if r.phase == "count" else " " + r.phase, r.shards_done, r.shards,
                                _T._human(r.bytes), _T._human(r.total_bytes), r.elapsed,
                                _T._human(int(r.rate)), "\n" if r.done else ""))
            sys.stderr.flush()
        return show
    if not callable(progress):
        raise TypeError("progress must be None, True, False or a callable, not %s" % type(progress).__name__)
    return progress


def _source_error(exc):
    """A ShardError (or a SourceError that lost its fields on the way) as supertok's SourceError."""
    if isinstance(exc, ShardError):
        msg, path, line, offset = (tuple(exc.args) + (None,) * 4)[:4]
        return _T.SourceError(msg, path, line, None, offset)
    return exc


def _local_cluster(n_workers=None):
    return distributed.LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                                    processes=True, dashboard_address=":0")


class _Client:
    """The client to use: the one given (kept open), or a LocalCluster's, closed at the end."""

    def __init__(self, client):
        self.given = client
        self.cluster = self.client = None

    def __enter__(self):
        if self.given is not None:
            return self.given
        self.cluster = _local_cluster()
        self.client = distributed.Client(self.cluster)
        return self.client

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
            self.cluster.close()


def count_pretokens(paths, *, client=None, min_count=1, shard_bytes=None, progress=None, **pretokenizer):
    """Count the pretokens of files on a Dask cluster; returns a supertok.Counts.

    paths: a path or a list of paths, as supertok.train takes them (.txt and .jsonl, and their .gz,
    .xz and .bz2 forms); a name with glob characters (*, ?, [) that is no file is expanded.
    client: a distributed.Client, used as it is (not closed); None starts a LocalCluster of
    os.cpu_count() worker processes of one thread each, closed when done. min_count: each shard's
    counts keep only the pretokens seen at least min_count times in that shard (see the module's
    documentation). shard_bytes: uncompressed files larger than this are counted in ranges of
    about this many bytes, cut on line boundaries; None (the default) makes about two shards a
    worker (at least 16 MiB, at most 1 GiB each): every shard's counts are saved, sent and added,
    so fewer, larger shards cost less as long as every worker has work. progress: a callable given a DaskProgress as each
    shard is done, True for a line on standard error, None or False for nothing. pretokenizer:
    pattern, script_aware, scripts, as supertok.count_pretokens takes them.

    Errors in a shard (invalid UTF-8, a bad JSON line, an unreadable compressed file) are raised
    here as supertok's SourceError naming the file and the line in the file.
    """
    report, files = _count_args(paths, min_count, shard_bytes, progress, pretokenizer)
    with _Client(client) as c:
        counts, _shards_used = _count_on(c, files, min_count, shard_bytes, report, pretokenizer)
    return counts


def _count_args(paths, min_count, shard_bytes, progress, pretokenizer):
    """count_pretokens' arguments checked (before any cluster starts): (report, files)."""
    unknown = set(pretokenizer) - {"pattern", "script_aware", "scripts"}
    if unknown:
        raise TypeError("unexpected keyword argument%s: %s" % ("s" if len(unknown) > 1 else "",
                                                               ", ".join(sorted(unknown))))
    checks = [("min_count", min_count, 1)] + ([("shard_bytes", shard_bytes, 1)] if shard_bytes is not None else [])
    for name, value, low in checks:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError("%s must be an int of at least %d, not %r" % (name, low, value))
    report = _progress_fn(progress)
    files = _paths(paths)
    supertok._pretokenizer.options(pretokenizer.get("pattern", "o200k"), pretokenizer.get("script_aware", False),
                                   pretokenizer.get("scripts"))  # checked here, before the cluster starts
    return report, files


def _count_on(c, files, min_count, shard_bytes, report, pretokenizer):
    """The counts of files on the client's cluster, and the shards they were cut in: (Counts, shards)."""
    if shard_bytes is None:  # about two shards a worker
        workers = max(1, len(c.scheduler_info().get("workers", {})))
        size = sum(os.path.getsize(p) for p in files)
        shard_bytes = min(max(size // (2 * workers) + 1, 16 << 20), 1 << 30)
    shards = _shards(files, shard_bytes)
    data = _reduce_on(c, shards, lambda s: c.submit(_shard_task, s, pretokenizer, min_count, pure=False),
                      lambda parts: c.submit(_add_task, *parts, pure=False), report, "count")
    return supertok.Counts.from_bytes(data), shards


def _reduce_on(c, shards, submit_shard, submit_add, report, phase):
    """One task a shard (submit_shard(shard): its future), added by a tree of tasks on the workers
    (submit_add(futures): the future of their sum, FAN_IN at a time); progress as each shard is done;
    the total's bytes. A ShardError is raised as supertok's SourceError."""
    total_bytes = sum(s[3] for s in shards)
    t0 = time.monotonic()
    futures = [submit_shard(s) for s in shards]
    level = futures
    while len(level) > 1:
        level = [submit_add(level[i:i + FAN_IN]) for i in range(0, len(level), FAN_IN)]
    final = level[0]
    done = nbytes = 0
    try:
        size = {f.key: s[3] for f, s in zip(futures, shards)}
        for f in distributed.as_completed(futures):
            if f.status == "error":
                f.result()  # raises the task's error
            done += 1
            nbytes += size[f.key]
            if report is not None:
                el = time.monotonic() - t0
                report(DaskProgress(done, len(shards), nbytes, total_bytes, el, nbytes / el if el > 0 else 0.0,
                                    False, phase))
        data = final.result()
    except ShardError as exc:
        raise _source_error(exc) from None
    finally:
        for f in futures + [final]:
            f.release()
    if report is not None:
        el = time.monotonic() - t0
        report(DaskProgress(done, len(shards), nbytes, total_bytes, el, nbytes / el if el > 0 else 0.0, True, phase))
    return data


def train(paths, *, client=None, min_count=None, shard_bytes=None, count_progress=None, **train_kwargs):
    """Count the pretokens of files on a Dask cluster (count_pretokens), then train on the caller:
    supertok.train(counts, **train_kwargs). Returns the Encoding.

    train_kwargs: as supertok.train takes them (vocab_size, a size or a list of sizes, mode,
    alphabet, pattern, script_aware, scripts, special_tokens, min_frequency, algorithm, supermerges,
    ngram_split, threads, progress); the pre-tokenizer options go to the counting too.
    count_progress: count_pretokens' progress, also given the candidates pass's records (phase
    "candidates"). With min_count=1 the model is byte for byte supertok.train's on the same files.

    Superwords (algorithm "boundless" or "superbpe"): once phase 1 is done on the caller, the
    candidates pass runs on the cluster too (the trainer's candidates spec sent to the cluster once,
    one task per shard of the counting pass, the sums added on the workers), and the sum goes back to
    the trainer. min_count filters the pretoken counts of each shard, not the candidates.

    extend (supertok.train's extension, SuperBPE's Stage 2): the shards are counted with the
    superbpe pre-tokenizer (unless pattern says otherwise) and min_count defaults to 5 (1 otherwise);
    the model's training line records it.
    """
    unknown = set(train_kwargs) - (set(inspect.signature(supertok.train).parameters) - {"source"})
    if unknown:  # supertok.train's arguments only (the trainer here is its _train, which takes a hook too)
        raise TypeError("train() got unexpected keyword argument%s: %s" % ("s" if len(unknown) > 1 else "",
                                                                         ", ".join(sorted(unknown))))
    return _train(paths, client=client, min_count=min_count, shard_bytes=shard_bytes, count_progress=count_progress,
                  train_fn=_T._train, **train_kwargs)


def _train(paths, *, client, min_count, shard_bytes, count_progress, train_fn, **train_kwargs):
    """train() with the function that trains on the counts (the command line's names its options);
    train_fn(counts, candidates_pass=..., **train_kwargs) for superwords (supertok._train._train's
    hook: the second pass on the cluster)."""
    if "vocab_size" not in train_kwargs:
        raise TypeError("train() missing required keyword argument: 'vocab_size'")
    extending = train_kwargs.get("extend") is not None
    if min_count is None:
        min_count = _T.EXTEND_MIN_COUNT if extending else 1
    if extending:  # the Stage-2 pre-tokenizer, and the filter the counts went through, for the model
        if train_kwargs.get("pattern") is None:
            train_kwargs["pattern"] = _T.EXTEND_PATTERN
        train_kwargs["counted_min_count"] = min_count
    algorithm = train_kwargs.get("algorithm", "bpe")
    if algorithm in _SUPERWORDS:  # the superword options, checked before the counting
        _T._superword_args(algorithm, train_kwargs.get("supermerges"), train_kwargs.get("ngram_split", False),
                           train_kwargs.get("mode", "paper"))
    pre = {k: train_kwargs.pop(k) for k in ("pattern", "script_aware", "scripts") if k in train_kwargs}
    report, files = _count_args(paths, min_count, shard_bytes, count_progress, pre)
    if algorithm not in _SUPERWORDS:  # the cluster's part ends with the counting
        with _Client(client) as c:
            counts, _shards_used = _count_on(c, files, min_count, shard_bytes, report, pre)
        return train_fn(counts, **train_kwargs)  # the counts carry their pre-tokenizer
    with _Client(client) as c:
        counts, shards = _count_on(c, files, min_count, shard_bytes, report, pre)

        def candidates_pass(spec):
            """The candidates of every shard, counted on the workers from the trainer's spec, added there."""
            # sent once, as a task's result (not scattered: data scattered is lost with the workers that
            # hold it, a task's result is computed again), which the pass's tasks take from a worker
            where = c.submit(_spec_task, spec, pure=False)
            try:
                return _reduce_on(c, shards, lambda s: c.submit(_candidates_task, s, where, pure=False),
                                  lambda parts: c.submit(_add_candidates_task, where, *parts, pure=False), report,
                                  "candidates")
            finally:
                where.release()
        return train_fn(counts, candidates_pass=candidates_pass, **train_kwargs)
