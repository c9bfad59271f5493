"""supertok.train: BPE training driven from Python (docs/design.md §8), phase 1 and superwords.

The C core counts pretokens (st_counter_*) and trains (st_trainer_*); this module only reads the
sources, hands their bytes to the core in big pieces, reports progress and turns the core's
reports into errors that name the file and the line. Counting natively runs one counter per thread
(cffi releases the GIL around each core call) and merges them at the end: counts add, so the model
is the same for any number of threads. Training runs the trainer a step of N merges at a time, so
progress is shown and Ctrl-C stops it between steps (the handles are freed, the KeyboardInterrupt
propagates).

Superwords (algorithm "boundless" or "superbpe", set on the trainer before its first step) read
the sources a second time when the trainer asks for them (its state ST_TRAINING_CANDIDATES, once
phase 1 is done): the trainer gives out candidates counters (one per thread) that count the runs
of eligible pretokens and takes them back; its next step does the n-gram split when asked and
starts phase 2, and the same steps follow. This module only follows the trainer's state. A path
is simply read again; the documents of an iterable, which may be one-shot, and a path that is no
regular file (a named pipe) are spooled to an anonymous temporary file during the first pass and
read back from it (_Spool).
"""
import bz2
import collections
import collections.abc
import gzip
import json
import lzma
import os
import pickle
import queue
import stat
import sys
import tempfile
import threading
import contextvars
import glob
import time
import zlib

from . import _pretokenizer
from ._status import SupertokError, argument_error
from .backends import current as _current_backend
from ._text import utf8_joining_pairs
from .backends.base import U64_MAX, check_int

# supertok.h
_COUNT_LINES = 1                       # ST_COUNT_LINES
_COUNTER_DOCUMENTS, _COUNTER_BYTES, _COUNTER_PRETOKENS, _COUNTER_UNIQUE = 0, 1, 2, 3
_TRAINER_ALPHABET, _TRAINER_TARGET, _TRAINER_MERGES, _TRAINER_WORDS = 0, 1, 2, 4
_TRAINER_SUPERMERGES, _TRAINER_CANDIDATES, _TRAINER_STEPS = 6, 8, 10
_TRAINER_STOP, _TRAINER_STOP_PHASE1 = 11, 12
# what the trainer does next (ST_TRAINER_STATE: ST_TRAINING_*), and the second pass's counts
_TRAINER_STATE, _TRAINER_PASS_DOCUMENTS, _TRAINER_PASS_BYTES = 18, 19, 20
_MERGING, _CANDIDATES, _SUPERMERGING, _DONE = 1, 2, 3, 4
_NGRAM_SPLIT = 1                        # ST_SUPERWORDS_NGRAM_SPLIT
_EXTEND_COLON_SPACE = 1                 # ST_EXTEND_COLON_SPACE
_TRAINER_SEED_MERGES, _TRAINER_BLOCKED = 21, 22
# SuperBPE's Stage 2 (docs/design.md §8): its pre-tokenizer, the cap on words a token, its
# colon-space block, and the defaults of the UBE paper's extension runs (Appendix D.3)
EXTEND_PATTERN, EXTEND_MAX_WORDS, EXTEND_MIN_COUNT, EXTEND_MIN_FREQUENCY = "superbpe", 4, 5, 2
# whether each phase ended short of what was asked, and how much it aimed for and made (the core
# decides; read once training is done)
_TRAINER_PHASE1_SHORT, _TRAINER_PHASE1_WANTED, _TRAINER_PHASE1_MADE = 13, 14, 15
_TRAINER_PHASE2_SHORT, _TRAINER_PHASE2_MADE = 16, 17
# ST_STOP_*: why a phase of training ended (the core sets it); the name a TrainWarning gives
_STOP_REASONS = {0: "interrupted", 2: "no_pair", 3: "min_frequency", 4: "no_candidate", 5: "limit", 6: "token_bytes",
                 7: "constraints"}
MAX_THREADS = 1024                      # the most counting threads train() starts
_ALGORITHMS = {"bpe": 0, "boundless": 1, "superbpe": 2}  # ST_ALGORITHM_BPE, _BOUNDLESS, _SUPERBPE
_MODES = {"paper": 0, "hf": 1}          # ST_TRAIN_PAPER, ST_TRAIN_HF
_ALPHABETS = {"bytes": 0, "ube": 1}     # ST_ALPHABET_BYTES, ST_ALPHABET_UBE
_BIG = 1 << 62                          # a vocab_size no alphabet reaches (asks the core its alphabet)

# How much text one core call gets: big enough that Python's share is noise, small enough that
# threads share the work, progress moves and Ctrl-C is answered within a fraction of a second.
# wasm: the backend's reusable block (1 MiB); pywasm interprets the module, so far less.
CHUNK = 1 << 20
PYWASM_CHUNK = 4 << 10
_COMPRESSED = {".gz": gzip.open, ".xz": lzma.open, ".lzma": lzma.open, ".bz2": bz2.open}
_JSONL = (".jsonl", ".ndjson")

TrainProgress = collections.namedtuple("TrainProgress",
                                       "phase documents bytes merges target elapsed done supermerges candidates kept",
                                       defaults=(0, None, None))
TrainProgress.__doc__ = """What supertok.train has done so far, given to a progress callback.

phase, in order: "count" (reading and counting the sources), "merge" (phase-1 training), and for
superwords (algorithm "boundless" or "superbpe") "candidates" (the second pass over the sources,
counting supermerge candidates), "split" (only with ngram_split=True: the n-gram split of the
candidates) and "supermerge" (phase 2). documents and bytes: counted so far in this pass (the
first pass's totals in the later phases); elapsed: seconds since the phase began; done: True on
the phase's last record.

merges and target: in "count" 0 and the merges vocab_size asks for (None while counting on
pywasm, where asking the core costs minutes); in "merge" and after it the phase-1 merges made
and that target (training may stop earlier: no pair left, or min_frequency); in "supermerge"
the phase-2 steps made and the steps wanted (boundless: the target, one vocabulary entry a step,
a replayed regular merge or a supermerge; superbpe: the supermerges asked for).
supermerges: supermerges made so far (phase "supermerge"; else 0). candidates: distinct
candidates once counted (at the end of "candidates", in "split" (after the split on its last
record) and "supermerge"; else None). kept: with algorithm "superbpe", the regular merges the
model keeps at most (vocab_size - alphabet - specials - supermerges: phase 1 still trains toward
target, as the reference does, and the model keeps the first `kept` of its merges); else None."""


class TrainWarning(UserWarning):
    """Training ended below the vocabulary size asked for, and why. `reason`, as the core reports
    it: "no_pair" (every pretoken is a single token: the text has no more pairs to merge),
    "min_frequency" (the best pair left occurs fewer than min_frequency times), "no_candidate"
    (superwords: no supermerge candidate pair left), "limit" (the model format's limit of
    2^21 - 1 ids), "token_bytes" (the next merge's token would take the model past the limit on
    a rules model's token bytes, docs/formats/model-format.md) or "constraints" (an extension: every
    pair left makes a token of more than four words or holding ': '). `phase`: "merge" (phase 1, the regular merges) or "supermerge" (phase 2);
    `made` and `wanted`: what that phase made and what vocab_size (and supermerges) asked of it.
    The model's comment says the same."""

    def __init__(self, message, reason, phase, made, wanted):
        super().__init__(message)
        self.reason, self.phase, self.made, self.wanted = reason, phase, made, wanted


class SourceError(ValueError):
    """A source that cannot be trained on: `path` (None for an iterable), `line` (1-based line of
    the file, or None), `index` (the document's index in an iterable, or None), `offset` (the byte
    offset of invalid UTF-8 in the file's (decompressed) text, or in the document or row, or None)
    and `row` (1-based row of a .parquet or Arrow file, counted across the whole file, or None)."""

    def __init__(self, message, path=None, line=None, index=None, offset=None, row=None):
        super().__init__(message)
        self.path, self.line, self.index, self.offset, self.row = path, line, index, offset, row


# ---- arguments ---------------------------------------------------------------------------------

# How messages name an argument with its value: Python's "vocab_size=300", or the caller's names
# while _train runs with option_names (the command line's {"vocab_size": "--vocab-size", ...}:
# "--vocab-size 300"). A context variable: threads training at once each keep their own.
_OPTION_NAMES = contextvars.ContextVar("supertok_option_names", default=None)


def _arg(name, value):
    """name=value as the messages of this training call say it (see _OPTION_NAMES)."""
    option = (_OPTION_NAMES.get() or {}).get(name)
    if option is None:
        return "%s=%r" % (name, value)
    return option if value is True else "%s %s" % (option, value)

def _int_arg(name, value, minimum, maximum=U64_MAX):
    """An int option, checked by the check every integer for the core goes through (the core
    takes vocab_size, min_frequency and supermerges as uint64: a larger value is a ValueError
    here, on every backend, never an OverflowError or a value wrapped modulo 2**64)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise argument_error(name, "%s must be an int, not %s" % (name, type(value).__name__), TypeError)
    try:
        return check_int(name, value, minimum, maximum, "uint64_t")
    except (TypeError, ValueError) as exc:
        raise argument_error(name, str(exc), type(exc)) from None


def _choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise argument_error(name, "%s must be one of %s, not %r" % (name, ", ".join(repr(c) for c in choices), value))
    return value


def _new_counter(backend, pid, flags, spec):
    """A pretoken counter with the pre-tokenizer (an unknown script: the ValueError naming it)."""
    try:
        return backend.counter_new(pid, flags, spec)
    except SupertokError as exc:
        raise _pretokenizer.named_script_error(exc, spec) from None


def _special_args(special_tokens):
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError("special_tokens must be a list of str, not a single %s (write [%r])"
                        % (type(special_tokens).__name__, special_tokens))
    try:
        items = list(special_tokens)
    except TypeError:
        raise TypeError("special_tokens must be a list of str, not %s" % type(special_tokens).__name__) from None
    out, seen = [], set()
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError("special_tokens[%d] must be a str, not %s" % (i, type(t).__name__))
        if not t:
            raise argument_error("special_tokens", "special_tokens[%d] is empty" % i)
        if t in seen:
            raise argument_error("special_tokens", "special_tokens[%d] %r is given twice" % (i, t))
        seen.add(t)
        try:
            out.append(utf8_joining_pairs(t))
        except UnicodeEncodeError as exc:
            raise argument_error("special_tokens", "special_tokens[%d] holds a lone surrogate at character %d, "
                                 "which is not UTF-8" % (i, exc.start)) from None
    return out


# The file names a folder (or a glob's folder) gives: text and JSON lines, maybe compressed, and
# the columnar files pyarrow reads. A path named directly is read whatever its name (text unless
# it says otherwise).
_TEXT_EXTS = (".txt",) + _JSONL
_TABLE_EXTS = {".parquet": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}
_FOLDER_EXTS = tuple(sorted(set(_TEXT_EXTS + tuple(e + c for e in _TEXT_EXTS for c in (".gz", ".xz", ".bz2"))
                                + tuple(_TABLE_EXTS))))
_TABLE_ROWS = 1024                      # rows of a record batch turned into documents at a time
_GLOB_MAGIC = ("*", "?", "[")
_SOURCE_TYPES = ("a path (str or os.PathLike; a file, a folder or a glob pattern), a list of paths, or an "
                 "iterable of str documents or of mappings (dicts, a datasets.Dataset)")


class _Path(str):
    """A file's path (a str, so it is used as one everywhere) that also carries the text_column its
    .jsonl records, or .parquet/.arrow rows, are read by."""
    __slots__ = ("column",)

    def __new__(cls, path, column):
        self = super().__new__(cls, path)
        self.column = column
        return self

    def __reduce__(self):
        return (_Path, (str(self), self.column))


def _folder_files(folder):
    """The files of a folder to train on, recursively, sorted by path: those whose names end in
    _FOLDER_EXTS, hidden files and folders (starting with '.') left out."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if not f.startswith(".") and f.lower().endswith(_FOLDER_EXTS):
                out.append(os.path.join(root, f))
    return sorted(out)


def _expand(where, p):
    """The files a path stands for: itself, a folder's files, or a glob pattern's matches (sorted;
    a matched folder gives its files; a matched file is read whatever its name; each file once)."""
    if os.path.isdir(p):
        files = _folder_files(p)
        if not files:
            raise SourceError("%s: the folder %r holds no file to train on (none named %s)"
                              % (where, p, ", ".join(_FOLDER_EXTS)), p)
        return files
    if not os.path.exists(p) and any(m in p for m in _GLOB_MAGIC):
        matches = sorted(glob.glob(p, recursive=True))
        if not matches:
            raise FileNotFoundError("%s: no file matches the pattern %r" % (where, p))
        out, seen = [], set()
        for m in matches:  # ** matches a folder and its files: each file once, where it first comes
            for f in _folder_files(m) if os.path.isdir(m) else [m]:
                if f not in seen:
                    seen.add(f)
                    out.append(f)
        if not out:
            raise SourceError("%s: the pattern %r matches only folders that hold no file to train on"
                              % (where, p), p)
        return out
    return [p]


def _text_column_arg(text_column):
    if not isinstance(text_column, str):
        raise argument_error("text_column", "text_column must be a str (the column or field holding the text), "
                             "not %s" % type(text_column).__name__, TypeError)
    if not text_column:
        raise argument_error("text_column", "text_column must not be empty")
    return text_column


def _sources(source, text_column="text"):
    """[("file", path), ...] or [("documents", iterable of str)], checked before any reading: a
    missing file, an empty folder, a pattern that matches nothing or a missing pyarrow is found
    before minutes of counting. Folders and glob patterns are expanded to their files; each path
    is a _Path carrying text_column."""
    column = _text_column_arg(text_column)
    if isinstance(source, (str, os.PathLike)):
        paths = [os.fspath(source)]
        where = ["source"]
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raise TypeError("source must be %s, not %s" % (_SOURCE_TYPES, type(source).__name__))
    elif isinstance(source, (list, tuple)):
        paths, where = [], []
        for i, p in enumerate(source):
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError("source[%d] is %s: a list or tuple of sources holds paths (str or os.PathLike); "
                                "pass documents as an iterator of str, e.g. iter(documents)"
                                % (i, type(p).__name__))
            paths.append(os.fspath(p))
            where.append("source[%d]" % i)
    elif isinstance(source, collections.abc.Mapping):
        # iterating a dict gives its keys: a datasets.DatasetDict gives "train", "test"...
        raise TypeError("source is a mapping (%s): pass one of its values (a split of a DatasetDict, e.g. "
                        "ds['train']), or an iterable of documents" % type(source).__name__)
    elif isinstance(source, collections.abc.Iterable):
        names = getattr(source, "column_names", None)  # a datasets.Dataset says its columns up front
        if isinstance(names, (list, tuple)) and names and all(isinstance(n, str) for n in names) \
                and column not in names:
            raise SourceError("source: the dataset has no column %r (its columns: %s); choose one with "
                              "text_column" % (column, ", ".join(repr(n) for n in names)))
        return [("documents", _document_texts(source, column))]
    else:
        raise TypeError("source must be %s, not %s" % (_SOURCE_TYPES, type(source).__name__))
    files = []
    for w, p in zip(where, paths):
        if isinstance(p, bytes):
            p = os.fsdecode(p)
        for f in _expand(w, p):
            if not os.path.exists(f):
                hint = (" (a list is a list of paths: to train on documents held in a list, pass iter(documents))"
                        if isinstance(source, (list, tuple)) else "")
                raise FileNotFoundError("%s: no such file: %r%s" % (w, f, hint))
            if _table_format(f):
                _pyarrow(f)  # a missing pyarrow is said before anything is read
            files.append(("file", _Path(f, column)))
    return files


def _document_texts(docs, column):
    """The documents of an iterable as str: its items when they are str, item[column] when they
    are mappings (dicts, the rows of a datasets.Dataset or IterableDataset). The first item says
    which; a later item of the other kind, a mapping without the column or whose value is no str
    is an error naming the document's index."""
    records = None
    for k, doc in enumerate(docs):
        if records is None:
            records = isinstance(doc, collections.abc.Mapping)
        if not records:
            yield doc  # _document_items checks it is a str
            continue
        if not isinstance(doc, collections.abc.Mapping):
            raise TypeError("source: document %d is %s, not a mapping like document 0" % (k, type(doc).__name__))
        try:
            text = doc[column]
        except KeyError:
            keys = ", ".join(repr(key) for key in list(doc)[:20])
            raise SourceError("source: document %d has no %r key (its keys: %s); choose the text's key with "
                              "text_column" % (k, column, keys or "none"), None, None, k) from None
        if not isinstance(text, str):
            raise SourceError("source: document %d: its %r value is %s, not a str"
                              % (k, column, type(text).__name__), None, None, k)
        yield text


# ---- reading ---------------------------------------------------------------------------------
# A work item is one core call: ("lines", text, where) with text whole lines (ST_COUNT_LINES), or
# ("documents", [bytes, ...], where). `where` maps the core's error positions back to the source:
# (path, byte offset of the text in the file) or (path or None, [line or index of each document]).
# A text file's line numbers are counted only for an error (lines_before): counting each chunk's
# newlines as it was read cost 3.5% of a whole BPE training.

def _kind(path):
    """(opener, jsonl?) by the file's name: .gz/.xz/.bz2 are streamed through their codec, and
    the name without it says JSON lines (.jsonl) or text (anything else)."""
    base, ext = os.path.splitext(path)
    opener = _COMPRESSED.get(ext.lower())
    if opener is None:
        opener, base = open, path
    return opener, os.path.splitext(base)[1].lower() in _JSONL


def _open(path, opener):
    try:
        return opener(path, "rb")
    except OSError as exc:
        raise OSError(exc.errno, "%s: cannot read: %s" % (path, exc.strerror or exc)) from None


# what a damaged or truncated compressed file raises while it is read: gzip zlib.error (bad deflate
# data) or BadGzipFile (an OSError), bz2 OSError, lzma LZMAError, any of them EOFError when cut short
_READ_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)


def _read_error(exc, path, line, offset):
    """The SourceError for a read that failed after offset bytes (line `line`) of the file's
    (decompressed) text."""
    compressed = _kind(path)[0] is not open
    damaged = compressed and getattr(exc, "errno", None) is None  # not an I/O error of the system
    detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return SourceError("%s: cannot read beyond byte %d (line %d) of the %stext: %s%s"
                       % (path, offset, line, "decompressed " if compressed else "",
                          "damaged or truncated compressed data: " if damaged else "", detail),
                       path, line, None, offset)


def lines_before(path, offset, block=1 << 20):
    """The newlines in the first `offset` bytes of the file's (decompressed) text: the number of
    the line at that offset, minus 1. For error reports only; a read that fails on the way (it
    succeeded before) gives the count so far."""
    n = 0
    try:
        with _kind(path)[0](path, "rb") as f:
            left = offset
            while left > 0:
                data = f.read(min(block, left))
                if not data:
                    break
                n += data.count(b"\n")
                left -= len(data)
    except _READ_ERRORS:
        pass
    return n


def _text_items(path, opener, chunk):
    """Whole lines of a text file in pieces of about chunk bytes (read as bytes, split on b'\\n'
    only: nothing is decoded here; a last line without '\\n' is a document too)."""
    with _open(path, opener) as f:
        offset, rest, pending = 0, [], 0
        while True:
            try:
                block = f.read(chunk)
            except _READ_ERRORS as exc:
                at = offset + pending
                raise _read_error(exc, path, lines_before(path, at) + 1, at) from None
            if not block:
                break
            cut = block.rfind(b"\n") + 1
            if not cut:  # no line ends in this block: keep it for the next
                rest.append(block)
                pending += len(block)
                continue
            text = b"".join(rest + [block[:cut]]) if rest else block[:cut]
            rest = [block[cut:]] if cut < len(block) else []
            pending = len(block) - cut
            yield ("lines", text, (path, offset))
            offset += len(text)
        if rest:
            yield ("lines", b"".join(rest), (path, offset))


def _jsonl_items(path, opener, chunk, column="text"):
    """The `column` field ("text" unless text_column says otherwise) of each line of a JSON-lines
    file, in batches of about chunk bytes. Blank lines are skipped; a line that is not a JSON
    object with a string `column` is an error naming the file and the line."""
    with _open(path, opener) as f:
        batch, lines, size, offset = [], [], 0, 0
        n = 0
        while True:
            try:
                raw = f.readline()
            except _READ_ERRORS as exc:
                raise _read_error(exc, path, n + 1, offset) from None
            if not raw:
                break
            n += 1
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except UnicodeDecodeError as exc:
                raise SourceError("%s: line %d: invalid UTF-8 at byte %d of the line (byte %d of the file)"
                                  % (path, n, exc.start, start + exc.start), path, n, None,
                                  start + exc.start) from None
            except ValueError as exc:
                raise SourceError("%s: line %d: not JSON (%s)" % (path, n, exc), path, n) from None
            text = record.get(column) if isinstance(record, dict) else None
            if not isinstance(text, str):
                what = ("has no %r field" % column if isinstance(record, dict) and column not in record else
                        "has a %r field that is %s, not a string" % (column, type(text).__name__)
                        if isinstance(record, dict) else "is %s, not a JSON object" % type(record).__name__)
                raise SourceError("%s: line %d: the record %s" % (path, n, what), path, n)
            try:
                data = utf8_joining_pairs(text)
            except UnicodeEncodeError as exc:
                raise SourceError("%s: line %d: the text holds a lone surrogate (U+%04X) at character %d, which "
                                  "is not UTF-8" % (path, n, ord(text[exc.start]), exc.start), path, n) from None
            batch.append(data)
            lines.append(n)
            size += len(data)
            if size >= chunk:
                yield ("documents", batch, (path, lines))
                batch, lines, size = [], [], 0
        if batch:
            yield ("documents", batch, (path, lines))


def _document_items(docs, chunk, batch_docs=4096):
    """Batches of an iterable of str documents, encoded to UTF-8 here."""
    batch, index, size = [], [], 0
    k = 0
    for k, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise TypeError("source: document %d is %s, not a str" % (k, type(doc).__name__))
        try:
            data = utf8_joining_pairs(doc)  # a surrogate pair is its character, as encode() takes it
        except UnicodeEncodeError as exc:
            raise SourceError("source: document %d holds a lone surrogate (U+%04X) at character %d, which is "
                              "not UTF-8" % (k, ord(doc[exc.start]), exc.start), None, None, k) from None
        batch.append(data)
        index.append(k)
        size += len(data)
        if size >= chunk or len(batch) >= batch_docs:
            yield ("documents", batch, (None, index))
            batch, index, size = [], [], 0
    if batch:
        yield ("documents", batch, (None, index))


# ---- .parquet and Arrow IPC files (pyarrow, an optional dependency) ------------------------------

def _table_format(path):
    """"parquet", "arrow" (an Arrow IPC file or stream: .arrow, .feather, .ipc) or None, by name."""
    return _TABLE_EXTS.get(os.path.splitext(path)[1].lower())


def _pyarrow(path):
    """pyarrow, imported only when a .parquet or Arrow file is read."""
    try:
        import pyarrow
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        ext = os.path.splitext(path)[1].lower()
        raise ImportError("%s: reading %s needs pyarrow: pip install 'supertok[arrow]'" % (path, ext),
                          name="pyarrow") from None
    return pyarrow


def _string_column(pa, path, schema, column):
    """The index of the text column in the file's schema, checked to hold strings."""
    names = list(schema.names)
    if column not in names:
        raise SourceError("%s: no column %r (its columns: %s); choose one with text_column"
                          % (path, column, ", ".join(repr(n) for n in names) or "none"), path)
    t = schema.field(column).type
    value = t.value_type if pa.types.is_dictionary(t) else t
    if not (pa.types.is_string(value) or pa.types.is_large_string(value)
            or getattr(pa.types, "is_string_view", lambda _: False)(value)):
        raise SourceError("%s: the column %r is of type %s, not strings (string or large_string)"
                          % (path, column, t), path)
    return names.index(column)


def _table_batches(pa, path, column):
    """The text column's arrays, a record batch at a time (never the whole file): row groups of a
    .parquet file, the record batches of an Arrow IPC file (memory-mapped) or stream."""
    if _table_format(path) == "parquet":
        import pyarrow.parquet as pq
        f = pq.ParquetFile(path)
        try:
            _string_column(pa, path, f.schema_arrow, column)
            for batch in f.iter_batches(batch_size=_TABLE_ROWS, columns=[column]):
                yield batch.column(0)
        finally:
            f.close()
        return
    import pyarrow.ipc  # noqa: F401 (pa.ipc)
    regular = _is_regular(path)
    with pa.memory_map(path, "r") if regular else open(path, "rb") as source:
        try:
            if not regular:  # a pipe: only the stream format can be read from it
                raise pa.ArrowInvalid("not seekable")
            reader = pa.ipc.open_file(source)
        except pa.ArrowInvalid:  # not the file format: the stream format
            if regular:
                source.seek(0)
            reader = pa.ipc.open_stream(source)
            i = _string_column(pa, path, reader.schema, column)
            for batch in reader:
                yield batch.column(i)
            return
        i = _string_column(pa, path, reader.schema, column)
        for k in range(reader.num_record_batches):
            yield reader.get_batch(k).column(i)


def _is_regular(path):
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _table_items(path, column, chunk):
    """The text column of a .parquet or Arrow IPC file, one document a row, in batches of about
    chunk bytes; a null is skipped (as a blank line of a .jsonl file). The strings are handed to
    the core as their bytes, never decoded here (the core checks their UTF-8: an error names the
    row, 1-based across the whole file)."""
    pa = _pyarrow(path)
    batch, rows, size, row = [], [], 0, 0
    try:
        for arr in _table_batches(pa, path, column):
            if pa.types.is_dictionary(arr.type):
                arr = arr.dictionary_decode()
            if getattr(pa.types, "is_string_view", lambda _: False)(arr.type):
                arr = arr.cast(pa.large_string())
            binary = pa.large_binary() if pa.types.is_large_string(arr.type) else pa.binary()
            for start in range(0, len(arr), _TABLE_ROWS):
                for data in arr.slice(start, _TABLE_ROWS).view(binary).to_pylist():
                    row += 1
                    if data is None:
                        continue
                    batch.append(data)
                    rows.append(row)
                    size += len(data)
                    if size >= chunk or len(batch) >= 4096:
                        yield ("documents", batch, (path, rows, "row"))
                        batch, rows, size = [], [], 0
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, SourceError):
            raise
        raise SourceError("%s: cannot read %s after row %d: %s"
                          % (path, "as Parquet" if _table_format(path) == "parquet" else "as Arrow IPC", row, exc),
                          path, None, None, None, row or None) from None
    if batch:
        yield ("documents", batch, (path, rows, "row"))


def _source_items(kind, src, chunk):
    if kind == "documents":
        return _document_items(src, chunk)
    column = getattr(src, "column", "text")
    path = str(src)
    if _table_format(path):
        return _table_items(path, column, chunk)
    opener, jsonl = _kind(path)
    return _jsonl_items(path, opener, chunk, column) if jsonl else _text_items(path, opener, chunk)


def _readable_twice(kind, src):
    """True for a regular file (read again for the second pass: text, JSON lines, .parquet, Arrow); an
    iterable of str or of mappings, or a path that is no regular file (a named pipe, /dev/stdin), goes
    through the spool."""
    if kind == "documents":
        return False
    try:
        return stat.S_ISREG(os.stat(src).st_mode)
    except OSError:
        return True  # let the second open report it


def _items(sources, chunk, spool=None):
    """The work items of the sources (the first pass); with a spool, those of the sources that cannot
    be read twice are also written to it, for the second pass."""
    for kind, src in sources:
        if spool is None or _readable_twice(kind, src):
            yield from _source_items(kind, src, chunk)
            continue
        n = 0
        for item in _source_items(kind, src, chunk):
            spool.write(item)
            n += 1
            yield item
        spool.counts.append(n)


def _items_again(sources, spool, chunk):
    """The same work items again (a superword sweep reads them once per size): regular files are
    read again, the others come back from the spool, in the same order."""
    if spool is not None:
        spool.rewind()
    k = 0
    for kind, src in sources:
        if spool is None or _readable_twice(kind, src):
            yield from _source_items(kind, src, chunk)
            continue
        yield from spool.items(spool.counts[k])
        k += 1


class _Spool:
    """The work items of sources that cannot be read twice (an iterable of str, which may be a
    one-shot generator; a named pipe), kept for the second pass in an anonymous temporary file
    (tempfile.TemporaryFile: on POSIX it has no name at all, and it is gone when closed or when the
    process ends, however it ends). Memory stays bounded: an item is written as it is counted and
    read back one at a time. Each item is pickled as it is: (kind, bytes or list of bytes, where)."""

    def __init__(self):
        self.f = tempfile.TemporaryFile(prefix="supertok-train-")
        self.counts = []  # items per spooled source, in order
        self.reading = False

    def write(self, item):
        pickle.dump(item, self.f, protocol=pickle.HIGHEST_PROTOCOL)

    def items(self, n):
        if not self.reading:
            self.f.flush()
            self.f.seek(0)
            self.reading = True
        for _ in range(n):
            yield pickle.load(self.f)

    def rewind(self):
        """The next items() starts again from the first item."""
        self.reading = False

    def close(self):
        self.f.close()


def _feed(backend, counter, item):
    """One core call for a work item; a core error becomes a SourceError naming where it is."""
    kind, data, where = item
    try:
        if kind == "lines":
            backend.counter_add(counter, data, _COUNT_LINES)
        else:
            backend.counter_add_documents(counter, data)
    except SupertokError as exc:
        raise _source_error(exc, kind, data, where) from None


def _source_error(exc, kind, data, where):
    if exc.name != "ST_ERR_INVALID_UTF8":
        return exc
    if kind == "lines":
        path, base = where
        off = exc.offset or 0
        line = lines_before(path, base) + 1 + data.count(b"\n", 0, off)
        col = off - (data.rfind(b"\n", 0, off) + 1)
        return SourceError("%s: line %d: invalid UTF-8 at byte %d of the line (byte %d of the file%s)"
                           % (path, line, col, base + off, "'s text" if _kind(path)[0] is not open else ""),
                           path, line, None, base + off)
    path, index = where[:2]
    k = exc.input if exc.input < len(index) else 0
    if path is None:
        return SourceError("source: document %d: invalid UTF-8 at byte %d" % (index[k], exc.offset or 0),
                           None, None, index[k], exc.offset)
    if where[2:] == ("row",):  # a .parquet or Arrow file: where = (path, [row, ...], "row")
        return SourceError("%s: row %d: the text is not valid UTF-8 (at byte %d)"
                           % (path, index[k], exc.offset or 0), path, None, None, exc.offset, index[k])
    return SourceError("%s: line %d: invalid UTF-8 in the text at byte %d" % (path, index[k], exc.offset or 0),
                       path, index[k], None, exc.offset)


# ---- counting ----------------------------------------------------------------------------------

class _Workers:
    """n threads, each feeding its own counter from one queue (natively the core runs without the
    GIL). The first failure in input order is the one reported; after a failure the rest of the
    queue is skipped.

    Stopping is the delicate part: a thread may be inside a core call on its counter, and the
    counter must not be freed (nor Python finalized) until it is out. Thread.join() is not trusted
    for this: on Python before 3.13, a join() interrupted by KeyboardInterrupt marks the thread
    finished although it still runs (threading's bpo-45274 handling releases a lock the running
    thread holds), so a second join() returns at once. Instead each thread says when it has made
    its last core call (finished[i], then a wake-up on `exits`), and close() waits for that, and
    then for the thread to be gone, through any number of KeyboardInterrupts, raising the first
    one only when all are done. Every blocking call of the main thread here is on a SimpleQueue
    (implemented in C: an interrupted get() loses nothing) or a sleep."""

    def __init__(self, backend, counters):
        self.backend = backend
        self.counters = counters
        self.q = queue.SimpleQueue()       # jobs; None stops a thread (put never blocks)
        self.room = queue.SimpleQueue()    # one token per job that may be queued or in a core call
        for _ in range(2 * len(counters)):
            self.room.put(None)
        self.exits = queue.SimpleQueue()   # a thread's last act: wakes close() up
        self.stats = [(0, 0)] * len(counters)
        self.finished = [False] * len(counters)
        self.errors = []
        self.failed = False
        self.threads = []
        self.stops = 0
        try:
            for i in range(len(counters)):
                t = threading.Thread(target=self._run, args=(i,), daemon=True, name="supertok-count-%d" % i)
                self.threads.append(t)
                t.start()
        except BaseException:
            # e.g. "can't start new thread" part-way: the threads started stop before the caller
            # frees their counters (a thread whose start failed is no longer listed; the last one
            # listed is thread len(threads) - 1, whose flag is finished[len(threads) - 1], not the
            # last counter's)
            last = len(self.threads) - 1
            if self.threads and not (self.threads[last] in threading.enumerate() or self.finished[last]):
                self.threads.pop()
            self.close(drain=True)
            raise

    def _run(self, i):
        b, c = self.backend, self.counters[i]
        try:
            while True:
                job = self.q.get()
                if job is None:
                    return
                try:
                    if not self.failed:
                        seq, item = job
                        _feed(b, c, item)
                        self.stats[i] = (b.counter_stat(c, _COUNTER_DOCUMENTS), b.counter_stat(c, _COUNTER_BYTES))
                except BaseException as exc:  # reported by the main thread (put / close)
                    self.errors.append((job[0], exc))
                    self.failed = True
                finally:
                    self.room.put(None)
        finally:
            self.finished[i] = True  # no core call on counters[i] after this
            self.exits.put(i)

    def put(self, seq, item):
        self.check()
        self.room.get()  # at most 2 jobs a thread waiting: reading stays just ahead of counting
        self.q.put((seq, item))

    def check(self):
        if self.failed:
            self.close()
            raise min(self.errors, key=lambda e: e[0])[1]

    def totals(self):
        return sum(s[0] for s in self.stats), sum(s[1] for s in self.stats)

    def close(self, drain=False):
        """Stop the threads (each finishes the core call it is in) and wait until every one has
        ended; a KeyboardInterrupt meanwhile is raised after that, not instead."""
        if drain:
            self.failed = True  # the queued items are skipped
        interrupt = None
        while True:
            try:
                if drain:
                    self.failed = True
                while self.stops < len(self.threads):
                    self.q.put(None)  # an extra None, if interrupted just after, is harmless
                    self.stops += 1
                self._wait()
                break
            except KeyboardInterrupt as exc:
                # Ctrl-C again: keep waiting (freeing a counter in use would crash), skip the rest
                interrupt = interrupt or exc
                drain = True
        self.threads = []
        if interrupt is not None:
            raise interrupt

    def _wait(self):
        n = len(self.threads)
        while not all(self.finished[:n]):
            try:
                self.exits.get(timeout=0.1)
            except queue.Empty:
                pass
        # past their last core call; now wait until the threads are gone (a few instructions)
        while any(t in threading.enumerate() for t in self.threads):
            time.sleep(0.001)


def _count(backend, items, counters, report):
    """Feed every work item into counters[0] (one thread) or spread over the counters (threads).
    When it returns or raises, no thread uses the counters any more."""
    if len(counters) == 1:
        c = counters[0]
        for item in items:
            _feed(backend, c, item)
            report(backend.counter_stat(c, _COUNTER_DOCUMENTS), backend.counter_stat(c, _COUNTER_BYTES))
        return
    workers = _Workers(backend, counters)
    try:
        for seq, item in enumerate(items):
            workers.put(seq, item)
            report(*workers.totals())
        workers.close()
        workers.check()
    except BaseException:
        workers.close(drain=True)  # waits for every thread, through further Ctrl-Cs
        raise
    report(*workers.totals())


# ---- training ------------------------------------------------------------------------------------

def _check_options(backend, counter, mode_id, alphabet_id, vocab_size, min_frequency, specials, mode, alphabet):
    """The number of merges vocab_size asks for, or a ValueError: options the core refuses (its
    message), or a vocab_size below the alphabet and the special tokens (naming the minimum)."""
    probe = None
    try:
        probe = backend.trainer_new(counter, mode_id, alphabet_id, _BIG, min_frequency, len(specials))
        n_alphabet = backend.trainer_stat(probe, _TRAINER_ALPHABET)
    except SupertokError as exc:
        if exc.name == "ST_ERR_OUT_OF_MEMORY":  # no fault of the options: the core's own error
            raise
        raise argument_error("mode", "%s, %s: %s" % (_arg("mode", mode), _arg("alphabet", alphabet),
                                                     exc.message or exc)) from None
    finally:
        if probe is not None:
            backend.trainer_free(probe)
    minimum = n_alphabet + len(specials)
    if vocab_size < minimum:
        raise argument_error("vocab_size", "%s is too small: the minimum is %d (the %d symbols of the %s alphabet in "
                             "%s mode%s), which learns no merge"
                             % (_arg("vocab_size", vocab_size), minimum, n_alphabet, alphabet, mode,
                            " + %d special tokens" % len(specials) if specials else ""))
    return vocab_size - minimum


def _superword_args(algorithm, supermerges, ngram_split, mode):
    """The algorithm's id, checked with supermerges, ngram_split and mode (errors name the argument)."""
    algorithm_id = _ALGORITHMS[_choice("algorithm", algorithm, tuple(_ALGORITHMS))]
    if not isinstance(ngram_split, bool):
        raise argument_error("ngram_split", "ngram_split must be True or False, not %r" % (ngram_split,), TypeError)
    if algorithm == "superbpe":
        if supermerges is None:
            raise argument_error("supermerges", "supermerges is required with %s: the number of supermerges to "
                                 "learn after the first vocab_size - supermerges regular merges"
                                 % _arg("algorithm", "superbpe"))
        _int_arg("supermerges", supermerges, 0)
    elif supermerges is not None:
        raise argument_error("supermerges", "%s applies only to %s (%s%s)"
                             % (_arg("supermerges", supermerges), _arg("algorithm", "superbpe"),
                                _arg("algorithm", algorithm), ": BoundlessBPE decides how many supermerges it makes"
                                if algorithm == "boundless" else " learns no supermerge"))
    if ngram_split and algorithm == "bpe":
        raise argument_error("ngram_split", "%s applies only to %s or %s (it splits their supermerge candidates); "
                             "%s has none" % (_arg("ngram_split", True), _arg("algorithm", "boundless"),
                                              _arg("algorithm", "superbpe"), _arg("algorithm", "bpe")))
    if algorithm != "bpe" and mode != "paper":
        raise argument_error("algorithm", "%s needs %s, not %s: HuggingFace tokenizers has no superwords for the hf "
                             "mode to match" % (_arg("algorithm", algorithm), _arg("mode", "paper"), _arg("mode", mode)))
    return algorithm_id


def _check_supermerges(supermerges, target, vocab_size):
    if supermerges is not None and supermerges > target:
        raise argument_error("supermerges", "%s is more than the %d merges %s leaves after the alphabet and the "
                             "special tokens" % (_arg("supermerges", supermerges), target,
                                                 _arg("vocab_size", vocab_size)))


def _steps(backend, trainer, on_step):
    """Step the trainer while its state stays what it is (a phase of merges), in steps of about a
    tenth of a second (progress moves, Ctrl-C is answered between steps); on_step(made so far)
    after each full step. Returns the number made."""
    made, step = 0, 16
    state = backend.trainer_stat(trainer, _TRAINER_STATE)
    while backend.trainer_stat(trainer, _TRAINER_STATE) == state:
        t = time.monotonic()
        n = backend.trainer_step(trainer, step)
        made += n
        if n < step:
            break
        on_step(made)
        dt = time.monotonic() - t
        if dt < 0.05 and step < 1 << 16:
            step *= 2
        elif dt > 0.2 and step > 1:
            step //= 2
    return made


def _merged(backend, counters):
    """counters[0] with the others added in and freed (the list keeps only it)."""
    total = counters[0]
    for c in counters[1:]:
        backend.counter_merge(total, c)
        backend.counter_free(c)
    del counters[1:]
    return total


def train(source, *, vocab_size, mode="paper", alphabet=None, pattern=None, script_aware=False,
          scripts=None, special_tokens=(), min_frequency=None, algorithm="bpe", supermerges=None, ngram_split=False,
          threads=None, progress=None, text_column="text", extend=None, seed_merges=None, min_count=None):
    """Train a byte-level (or UBE) BPE tokenizer and return it as an Encoding that encodes at once.

    source: a path (str or os.PathLike) or a list or tuple of paths: `.txt` (or any other name) is
    one document per line, its '\n' kept, as HuggingFace's trainer reads files (read as bytes and
    handed to the core whole; '\r\n' keeps its '\r'; a last line without '\n' is a document);
    `.jsonl` (or `.ndjson`) is the string `text_column` field of each line (blank lines skipped);
    `.gz`, `.xz` and `.bz2` of either are streamed through their codec, never read whole.
    `.parquet` and Arrow IPC files (`.arrow`, `.feather`, `.ipc`; the file or the stream format)
    give one document a row, the `text_column` column (a string or large_string column; a null
    is skipped), read a record batch at a time with pyarrow (an optional dependency: pip install
    'supertok[arrow]'). A folder stands for its files, recursively, sorted by path: those named
    .txt, .jsonl, .ndjson (maybe .gz, .xz or .bz2), .parquet, .arrow, .feather or .ipc, hidden
    files and folders left out (a folder with none is an error). A path with glob characters
    (*, ?, [) that is no existing file is a pattern (glob.glob, recursive=True: ** spans
    folders), its matches sorted; one that matches nothing is an error. A list may mix files,
    folders and patterns. Or any other iterable: of str documents (a generator, iter(list_of_str))
    or of mappings, each giving its `text_column` value as the document (dicts, a
    datasets.Dataset or IterableDataset, streaming included; its first item says which, and is
    not lost); a list is always a list of paths. Errors name the file and the line (invalid
    UTF-8: the byte offset too), the row of a .parquet or Arrow file (1-based across the file),
    the missing column (listing the columns) or its type, or the document's index (a lone
    surrogate, a mapping without the key or whose value is no str).

    text_column: the column of .parquet and Arrow files, the field of .jsonl lines and the key of
    mappings that holds the text ("text").

    vocab_size counts every id that can occur: the alphabet that can occur (243 bytes in paper mode,
    256 in hf mode, the reachable UBE symbols), the merges and the special tokens; so paper mode with
    vocab_size=2048 and no specials learns up to 1,805 merges. Training stops earlier when no pair
    is left or the best count is below min_frequency (superwords: also when no supermerge candidate
    pair is left), and before a merge whose token would take the model past the core's limit on a
    rules model's token bytes (16 MiB + 256 bytes a merge: docs/formats/model-format.md, Limits; only long
    runs of one symbol come near it); it then warns with a TrainWarning naming the reason (its
    `reason`: "no_pair", "min_frequency", "no_candidate", "limit", "token_bytes" or "constraints"), and the
    model's comment says it too.

    mode: "paper" (the Faster Superword paper's reference: non-overlapping counts of identical
    pairs, ties to the smallest (left, right) symbols) or "hf" (merge for merge HuggingFace
    tokenizers' BpeTrainer over ByteLevel.alphabet(); bytes alphabet only). alphabet: "bytes" or
    "ube" (Universal Byte-Level Encoding base symbols). pattern, script_aware, scripts: the
    pre-tokenizer, as supertok.pretokenize takes them; recorded in the model. special_tokens: texts
    that take the ids after the merges (they do not change counting).

    algorithm (docs/design.md §8): "bpe" (phase 1 only), "boundless" (BoundlessBPE: the phase-1
    merges replayed in order, a supermerge taken instead whenever its count is strictly greater
    than the next regular merge's, up to vocab_size) or "superbpe" (SuperBPE: the first
    vocab_size - supermerges regular merges, then `supermerges` supermerges; supermerges is
    required with it and refused with the others). Supermerges join whole pretokens that contain
    a letter ("of the", "in order to"); paper mode only (HuggingFace has no superwords). ngram_split:
    split the supermerge candidates by Appendix B's Apriori n-grams (c_min = max(count of the last
    phase-1 merge, 15), n-grams of at most 30 pretokens) before phase 2.

    Superwords read the source twice (phase 1, then a pass counting the supermerge candidates). A
    path to a regular file (text, JSON lines, .parquet, Arrow) is read again; the documents of an
    iterable, of str or of mappings (a generator is fine: it is consumed once), and a path that
    cannot be read twice (a named pipe), are spooled to an anonymous temporary file during the
    first pass, in batches, so memory stays bounded; the file takes about the size of their UTF-8
    on disk and is deleted when training ends, fails or is interrupted.

    threads: counting threads, natively (None: os.cpu_count()), in both passes; the counts, and so
    the model, are the same for any number. At most MAX_THREADS (1024; more is a ValueError): each
    thread has its own counter. If a thread cannot be started, those started are stopped and every
    counter freed before the error propagates. The wasm backends run one call at a time and
    ignore it.

    progress: None shows a live progress line on standard error when it is a terminal, nothing
    otherwise; True shows it always; False shows nothing; a callable is called with a TrainProgress
    (phase "count", "merge", then for superwords "candidates", "split" with ngram_split and
    "supermerge"; documents, bytes, merges, target, elapsed, done, supermerges, candidates) as the
    work goes on.

    Ctrl-C (KeyboardInterrupt) stops counting between core calls and training between steps; the
    counting threads are stopped and waited for (each finishes the core call it is in, a fraction
    of a second; a second Ctrl-C does not cut that wait short), the core's objects are freed, the
    spool deleted, and the exception propagates.

    The Encoding has `merges` ([(left id, right id, count), ...]; merge i makes id A + i, A = 256
    for bytes, 512 for UBE), `supermerges` (the same for supermerge i, which makes id A + len(merges)
    + i) and `save(path)`, which writes the model file supertok.load_model loads.

    extend: a trained BPE model (an Encoding of merge rules, or a model file's path) to extend, as
    SuperBPE's Stage 2 and the UBE paper's S-UBE / S-BBPE do (docs/training.md, "Extending a
    tokenizer"): the text is counted with the Stage-2 pre-tokenizer (pattern "superbpe", whose
    pieces span words), the first seed_merges merges of the model (None: all) are replayed in
    order, then merges go on to vocab_size, none making a token of more than four words or holding
    ': '. With extend, alphabet is the model's, pattern defaults to "superbpe", min_frequency to 2,
    and min_count to 5: pretokens (here: Stage-2 chunks) seen fewer than min_count times in the
    text are dropped before training (the text is one shard; counts given as Counts or .stcounts
    are used as they are, pruned where they were counted, and min_count then only says how, for
    the model file). mode paper, algorithm bpe. The model's training line records the base's name,
    the seed merges, the constraints and min_count.

    min_count (without extend): drop the pretokens seen fewer than min_count times in the text
    before training (the UBE paper's per-shard filter; 1, the default, keeps all).
    """
    return _train(source, vocab_size=vocab_size, mode=mode, alphabet=alphabet, pattern=pattern,
                  script_aware=script_aware, scripts=scripts, special_tokens=special_tokens,
                  min_frequency=min_frequency, algorithm=algorithm, supermerges=supermerges,
                  ngram_split=ngram_split, threads=threads, progress=progress, text_column=text_column,
                  extend=extend, seed_merges=seed_merges, min_count=min_count)


def _sweep_name(name, size, sizes):
    """The model name for one size: "{vocab_size}" in the name becomes the size; a sweep's models
    otherwise get "-SIZE" after it, so no two share a name."""
    if "{vocab_size}" in name:
        return name.replace("{vocab_size}", str(size))
    return "%s-%d" % (name, size) if sizes else name


def _check_threads(threads):
    if threads is not None:
        _int_arg("threads", threads, 1)
        if threads > MAX_THREADS:
            raise argument_error("threads", "%s is more than the maximum, %d (one counter and one thread each; this "
                                 "machine has %s cores)" % (_arg("threads", threads), MAX_THREADS,
                                                            os.cpu_count() or "an unknown number of"))


def _counting(backend, threads):
    """(counting threads, bytes a work item) on this backend: threads natively (None: every
    core), one call at a time on wasm, small items on pywasm (a livelier progress)."""
    n_threads = min(threads or os.cpu_count() or 1, MAX_THREADS) if backend.parallel else 1
    return n_threads, PYWASM_CHUNK if backend.name == "pywasm" else CHUNK


def _count_all(backend, items, counters, report, target):
    """Count the work items over counters (one per thread) and add them into counters[0], the
    total (the list keeps only it); progress records of phase "count", the last one done."""
    t0 = time.monotonic()

    def count_report(documents, nbytes, done=False):
        report(TrainProgress("count", documents, nbytes, 0, target, time.monotonic() - t0, done))

    _count(backend, items, counters, count_report)
    total = _merged(backend, counters)
    count_report(backend.counter_stat(total, _COUNTER_DOCUMENTS), backend.counter_stat(total, _COUNTER_BYTES), True)
    return total


def count_source(backend, source, options, threads, progress, text_column="text"):
    """A counter holding the pretoken counts of source (the caller frees it), counted as train
    counts: on `threads` threads natively, progress records of phase "count"
    (supertok.count_pretokens)."""
    pid, flags, spec = options
    _check_threads(threads)
    report = _progress_fn(progress)
    sources = _sources(source, text_column)
    n_threads, chunk = _counting(backend, threads)
    counters = []
    try:
        for _ in range(n_threads):
            counters.append(_new_counter(backend, pid, flags, spec))
        total = _count_all(backend, _items(sources, chunk, None), counters, report, None)
        del counters[:]
        return total
    finally:
        for c in counters:
            backend.counter_free(c)
        if isinstance(report, LiveProgress):
            report.close()


def _counts_given(source):
    """The supertok.Counts a training source is (one, or the sum of `.stcounts` paths), or None
    when it is text."""
    from ._counts import Counts
    if isinstance(source, Counts):
        return source
    paths = [source] if isinstance(source, (str, os.PathLike)) else source if isinstance(source, (list, tuple)) else []
    names = [os.fsdecode(os.fspath(p)) for p in paths if isinstance(p, (str, os.PathLike))]
    if not names or not any(n.endswith(".stcounts") for n in names):
        return None
    if not all(n.endswith(".stcounts") for n in names) or len(names) != len(paths):
        raise ValueError("source mixes counts files (.stcounts) with text: train on the counts of all of it (count "
                         "the text with supertok.count_pretokens and add the Counts)")
    return sum(Counts.load(n) for n in names)


def _train_as(option_names, source, **kw):
    """_train with its messages naming the arguments by option_names ({"vocab_size":
    "--vocab-size", ...}: the command line's options); errors name theirs in `argument`."""
    token = _OPTION_NAMES.set(option_names)
    try:
        return _train(source, **kw)
    finally:
        _OPTION_NAMES.reset(token)


def _extension_args(extend, seed_merges, algorithm, mode, alphabet):
    """(the base Encoding, the flat seed pairs, the base's name as bytes, its alphabet) of train's
    extend argument, checked (errors name the argument)."""
    from .encoding import Encoding, load_model
    if isinstance(extend, (str, os.PathLike)):
        base = load_model(extend)
    elif isinstance(extend, Encoding):
        base = extend
    else:
        raise argument_error("extend", "extend takes a trained model (a supertok.Encoding of merge rules, or a model "
                             "file's path), not %s" % type(extend).__name__, TypeError)
    merges = base.merges
    if base.supermerges or (not merges and base._model_data is None):
        raise argument_error("extend", "%r is not a BPE model of merge rules (%s): extend takes one trained with "
                             "algorithm='bpe' (supertok.train) or loaded from such a model file"
                             % (base.name, "it has supermerges" if base.supermerges else "a tiktoken vocabulary has "
                                "ranks, not merges"))
    if algorithm != "bpe":
        raise argument_error("algorithm", "extend trains BPE merges after the seed merges: %s does not apply"
                             % _arg("algorithm", algorithm))
    if mode != "paper":
        raise argument_error("mode", "extend trains in %s (its counts and ties), not %s"
                             % (_arg("mode", "paper"), _arg("mode", mode)))
    if alphabet is not None and alphabet != base.alphabet:
        raise argument_error("alphabet", "%s differs from the model extended, whose alphabet is %r (leave alphabet "
                             "out to take the model's)" % (_arg("alphabet", alphabet), base.alphabet))
    if seed_merges is None:
        seed_merges = len(merges)
    _int_arg("seed_merges", seed_merges, 0)
    if seed_merges > len(merges):
        raise argument_error("seed_merges", "%s is more than the %d merges of %r"
                             % (_arg("seed_merges", seed_merges), len(merges), base.name))
    flat = []
    for left, right, _count in merges[:seed_merges]:
        flat += (left, right)
    return base, flat, base.name.encode("ascii"), base.alphabet


def _train(source, *, vocab_size, mode="paper", alphabet=None, pattern=None, script_aware=False, scripts=None,
           special_tokens=(), min_frequency=None, algorithm="bpe", supermerges=None, ngram_split=False, threads=None,
           progress=None, name=None, text_column="text", extend=None, seed_merges=None, min_count=None,
           counted_min_count=None, candidates_pass=None):
    """train() with the model's name (the command line names it after its file); returns the
    Encoding (its model text is enc._model_data). counted_min_count: the per-shard min_count the
    counts given were pruned with (supertok.dask), for an extension's training line. candidates_pass:
    the second pass of superwords run elsewhere (supertok.dask: on a cluster's workers), so that
    counts can train them: a function given the trainer's candidates spec (bytes,
    st_trainer_candidates_spec) that returns the saved candidates counts of the whole text (.stcounts
    version 2 bytes), made by counters of that spec."""
    backend = _current_backend()
    ext = None
    if extend is not None:
        ext = _extension_args(extend, seed_merges, algorithm, mode, alphabet)
        alphabet = ext[3]
        pattern = EXTEND_PATTERN if pattern is None else pattern
        min_frequency = EXTEND_MIN_FREQUENCY if min_frequency is None else min_frequency
    elif seed_merges is not None:
        raise argument_error("seed_merges", "seed_merges applies only with extend (the model whose merges seed "
                             "training)")
    alphabet = "bytes" if alphabet is None else alphabet
    pattern = "o200k" if pattern is None else pattern
    min_frequency = 0 if min_frequency is None else min_frequency
    sizes = asked = None
    if isinstance(vocab_size, (list, tuple)):  # a sweep: count once, one model per size
        if not vocab_size:
            raise argument_error("vocab_size", "vocab_size is an int or a non-empty list of ints, not []")
        for v in vocab_size:
            _int_arg("vocab_size", v, 1)
        if len(set(vocab_size)) != len(vocab_size):
            raise argument_error("vocab_size", "vocab_size names a size twice: %r" % (list(vocab_size),))
        asked = list(vocab_size)
        sizes = sorted(asked)
        vocab_size = sizes[0]
    _int_arg("vocab_size", vocab_size, 1)
    mode_id = _MODES[_choice("mode", mode, tuple(_MODES))]
    alphabet_id = _ALPHABETS[_choice("alphabet", alphabet, tuple(_ALPHABETS))]
    algorithm_id = _superword_args(algorithm, supermerges, ngram_split, mode)
    pid, flags, spec = _pretokenizer.options(pattern, script_aware, scripts)
    given = _counts_given(source)
    if given is not None:
        if algorithm_id and candidates_pass is None:
            raise argument_error("algorithm", "algorithm=%r trains from the text: its supermerge candidates pass "
                                 "reads the documents again with the phase-1 model, which counts do not hold; pass "
                                 "the text files (or train algorithm='bpe' from counts)" % (algorithm,))
        if (pid, flags, spec) != given._options:
            if (pattern, script_aware, scripts) != (EXTEND_PATTERN if ext else "o200k", False, None):
                raise argument_error("pattern", "the counts were made with %s, not the pre-tokenizer asked for "
                                     "(pattern=%r, script_aware=%r, scripts=%r): leave those out to train with the "
                                     "counts' own" % (given._describe(), pattern, script_aware, scripts))
            pid, flags, spec = given._options
    if min_count is not None:
        _int_arg("min_count", min_count, 1)
    if given is not None:  # counts are used as given: pruned (or not) where they were counted
        recorded_min_count = counted_min_count or min_count or 1
        min_count = 1
    else:
        min_count = min_count or (EXTEND_MIN_COUNT if ext else 1)
        recorded_min_count = min_count
    specials = _special_args(special_tokens)
    _int_arg("min_frequency", min_frequency, 0)
    _check_threads(threads)
    if name is None:
        name = "supertok-%s-%s-{vocab_size}" % ("extend" if ext else mode if algorithm == "bpe" else algorithm,
                                                alphabet)
    if not (isinstance(name, str) and 1 <= len(_sweep_name(name, vocab_size, sizes)) <= 128
            and all("!" <= ch <= "~" for ch in _sweep_name(name, vocab_size, sizes))):
        raise argument_error("name", "name must be 1 to 128 printable ASCII characters without spaces, not %r"
                             % (name,))
    report = _progress_fn(progress)
    sources = _sources(source, text_column) if given is None else []
    s = supermerges or 0

    n_threads, chunk = _counting(backend, threads)
    counters, trainer, spool = [], None, None
    try:
        counters.append(_new_counter(backend, pid, flags, spec))
        # vocab_size and the options are checked before any reading, by the core: a trainer over no
        # counts says the alphabet (or refuses the options, e.g. hf with ube). On pywasm making a
        # trainer costs minutes (the core computes the reachable alphabet, interpreted), so there
        # the check waits for the real trainer.
        target = None
        if backend.name != "pywasm":
            target = _check_options(backend, counters[0], mode_id, alphabet_id, vocab_size, min_frequency, specials,
                                    mode, alphabet)
            _check_supermerges(supermerges, target, vocab_size)

        for _ in range(n_threads - 1):
            counters.append(_new_counter(backend, pid, flags, spec))
        if algorithm_id and not all(_readable_twice(kind, src) for kind, src in sources):
            spool = _Spool()  # the second pass reads those sources back from it
        if given is None:
            total = _count_all(backend, _items(sources, chunk, spool), counters, report, target)
        else:  # the counts, loaded into the counter the options were checked with (counted elsewhere:
            # their own progress said so)
            backend.counter_load(counters[0], given.to_bytes())
            total = _merged(backend, counters)
        pruned = None
        if min_count > 1:  # the text is one shard: the per-shard filter applies to all of it
            before = backend.counter_stat(total, _COUNTER_UNIQUE)
            backend.counter_prune(total, min_count)
            pruned = (min_count, before, backend.counter_stat(total, _COUNTER_UNIQUE))
        documents = backend.counter_stat(total, _COUNTER_DOCUMENTS)
        nbytes = backend.counter_stat(total, _COUNTER_BYTES)

        t0 = time.monotonic()
        # a superword sweep trains each size from the counts (phase 2 depends on the size); a BPE
        # sweep, and one size, from one trainer, and the counts go now
        per_size = sizes is not None and algorithm_id != 0

        def start(size):
            """A trainer for size over the counts, its options set: (trainer, target, kept)."""
            try:
                t = backend.trainer_new(total, mode_id, alphabet_id, size, min_frequency, len(specials))
            except SupertokError:  # not checked yet (pywasm): the same errors as the check gives
                _check_options(backend, total, mode_id, alphabet_id, size, min_frequency, specials, mode, alphabet)
                raise
            try:
                if specials:  # hf mode: a special whose text is a token's string takes its place, as in HF
                    backend.trainer_set_specials(t, specials)
                tgt = backend.trainer_stat(t, _TRAINER_TARGET)
                _check_supermerges(supermerges, tgt, size)  # pywasm: known only now
                if algorithm_id:
                    backend.trainer_set_superwords(t, algorithm_id, s, _NGRAM_SPLIT if ngram_split else 0)
                if ext:
                    if len(ext[1]) // 2 > tgt:
                        raise argument_error("vocab_size", "%s leaves %d merges after the alphabet and the special "
                                             "tokens, fewer than the %d seed merges of %r"
                                             % (_arg("vocab_size", size), tgt, len(ext[1]) // 2, ext[0].name))
                    backend.trainer_set_seed_merges(t, ext[1], ext[2], EXTEND_MAX_WORDS, _EXTEND_COLON_SPACE,
                                                    recorded_min_count)
            except BaseException:
                backend.trainer_free(t)
                raise
            return t, tgt, (tgt - s if algorithm == "superbpe" else None)

        trainer, target, kept = start(vocab_size)
        if not per_size:
            backend.counter_free(total)
            del counters[:]
        made = unique = None

        def tstat(what):
            return backend.trainer_stat(trainer, what)

        models = []
        for size in (sizes or [vocab_size]):
            last = size == (sizes or [vocab_size])[-1]
            if size != vocab_size and per_size:  # the next size of a superword sweep: a new trainer
                backend.trainer_free(trainer)
                trainer = None
                trainer, target, kept = start(size)
            elif size != vocab_size:  # a BPE sweep: the same trainer goes on to the next size
                backend.trainer_set_vocab_size(trainer, size)
                target = tstat(_TRAINER_TARGET)
            # the trainer's loop: each state is a phase of the progress records
            while True:
                state = tstat(_TRAINER_STATE)
                t0 = time.monotonic()
                if state == _MERGING:
                    before = tstat(_TRAINER_MERGES)  # a sweep's next size goes on from the last
                    report(TrainProgress("merge", documents, nbytes, before, target, 0.0, False, kept=kept))
                    made = before + _steps(backend, trainer, lambda m: report(
                        TrainProgress("merge", documents, nbytes, before + m, target, time.monotonic() - t0, False,
                                      kept=kept)))
                    report(TrainProgress("merge", documents, nbytes, made, target, time.monotonic() - t0, True,
                                         kept=kept))
                elif state == _CANDIDATES:
                    # the second pass: the texts again, into candidates counters the trainer gives (one
                    # per thread) and takes back
                    first = len(counters)  # counters[0] is the counts when a superword sweep keeps them

                    def candidates_report(docs, nb, done=False, unique=None):
                        report(TrainProgress("candidates", docs, nb, made, target, time.monotonic() - t0, done, 0,
                                             unique))

                    if candidates_pass is None:
                        for _ in range(n_threads):
                            counters.append(backend.trainer_candidates_new(trainer))
                        _count(backend, _items_again(sources, spool, chunk), counters[first:], candidates_report)
                    else:  # counted elsewhere from the spec: the sum, loaded into one of the trainer's counters
                        candidates_report(0, 0)
                        data = candidates_pass(backend.trainer_candidates_spec(trainer))
                        counters.append(backend.trainer_candidates_new(trainer))
                        backend.counter_load(counters[-1], data)
                        del data  # the counter holds them now
                    if spool is not None and last:
                        spool.close()
                        spool = None
                    while len(counters) > first:
                        c = counters.pop()
                        try:
                            backend.trainer_candidates_add(trainer, c)
                        finally:
                            backend.counter_free(c)
                    unique = tstat(_TRAINER_CANDIDATES)
                    candidates_report(tstat(_TRAINER_PASS_DOCUMENTS), tstat(_TRAINER_PASS_BYTES), True, unique)
                    t0 = time.monotonic()
                    if ngram_split:
                        report(TrainProgress("split", documents, nbytes, made, target, 0.0, False, 0, unique))
                    backend.trainer_step(trainer, 1)  # closes the pass: the n-gram split, phase 2 starts
                    unique = tstat(_TRAINER_CANDIDATES)
                    if ngram_split:
                        report(TrainProgress("split", documents, nbytes, made, target, time.monotonic() - t0, True, 0,
                                             unique))
                elif state == _SUPERMERGING:
                    steps = tstat(_TRAINER_STEPS)

                    def phase2(m, done=False):
                        report(TrainProgress("supermerge", documents, nbytes, m, steps, time.monotonic() - t0, done,
                                             tstat(_TRAINER_SUPERMERGES), unique))

                    phase2(0)
                    phase2(_steps(backend, trainer, phase2), True)
                else:
                    break
            # the phases that ended short of what was asked, as the core judges them: (reason, phase,
            # made, wanted)
            stops = []
            if tstat(_TRAINER_PHASE1_SHORT):
                stops.append((tstat(_TRAINER_STOP_PHASE1), "merge", tstat(_TRAINER_PHASE1_MADE),
                              tstat(_TRAINER_PHASE1_WANTED)))
            if tstat(_TRAINER_PHASE2_SHORT):
                stops.append((tstat(_TRAINER_STOP), "supermerge", tstat(_TRAINER_PHASE2_MADE), tstat(_TRAINER_STEPS),
                              "%d distinct candidates%s" % (tstat(_TRAINER_CANDIDATES),
                                                           " after the n-gram split" if ngram_split else "")))
            models.append(backend.trainer_write_model(trainer, _sweep_name(name, size, sizes).encode("ascii"), specials))
            for stop in stops:
                _warn_stop(stop, algorithm, size, min_frequency, supermerges, pruned)
        backend.trainer_free(trainer)
        trainer = None
    finally:
        if spool is not None:
            spool.close()
        for c in counters:
            backend.counter_free(c)
        if trainer is not None:
            backend.trainer_free(trainer)
        if isinstance(report, LiveProgress):
            report.close()
    from .encoding import load_model
    encodings = [load_model(m) for m in models]
    if not sizes:
        return encodings[0]
    by_size = dict(zip(sizes, encodings))
    return [by_size[v] for v in asked]  # in the order asked


def _warn_stop(stop, algorithm, vocab_size, min_frequency, supermerges, pruned=None):
    """A TrainWarning for a phase that made less than asked, with the core's reason."""
    code, phase, made, wanted = stop[:4]
    reason = _STOP_REASONS.get(code, "stop %d" % code)
    why = {"no_pair": "no pair left (every pretoken is a single token: more, or more varied, text gives more merges)",
           "min_frequency": "the best pair left occurs fewer than %s times" % _arg("min_frequency", min_frequency),
           "no_candidate": "no supermerge candidate pair left (%s)" % (stop[4] if len(stop) > 4 else ""),
           "limit": "the model format's limit of 2^21 - 1 ids",
           "constraints": "every pair left makes a token of more than four words or holding ': ' (the extension's "
                          "constraints)",
           "token_bytes": "the next merge's token would take the model past the limit on its tokens' bytes "
                          "(16 MiB + 256 bytes a merge: docs/formats/model-format.md, Limits)"}.get(reason, reason)
    if phase == "merge":
        what = "the %d merges %s asks for" % (wanted, _arg("vocab_size", vocab_size))
        if algorithm == "superbpe":
            what = ("the %d regular merges SuperBPE keeps (%s minus the alphabet, the special tokens and %s)"
                    % (wanted, _arg("vocab_size", vocab_size), _arg("supermerges", supermerges)))
        msg = "training stopped at %d of %s: %s" % (made, what, why)
    elif algorithm == "superbpe":
        msg = "training made %d of the %d supermerges asked for (%s): %s" % (made, wanted, _arg("supermerges", wanted),
                                                                             why)
    else:
        msg = ("training stopped at %d of the %d regular merges and supermerges %s asks for: %s"
               % (made, wanted, _arg("vocab_size", vocab_size), why))
    if pruned and reason in ("no_pair", "min_frequency", "constraints"):  # the filter may be why
        msg += ("; %s kept %d of the %d distinct pretokens (%s keeps all)"
                % (_arg("min_count", pruned[0]), pruned[2], pruned[1], _arg("min_count", 1)))
    import warnings
    warnings.warn(TrainWarning(msg, reason, phase, made, wanted), stacklevel=4)


# ---- progress display ----------------------------------------------------------------------------

def _progress_fn(progress):
    if progress is None:
        return LiveProgress(sys.stderr) if _isatty(sys.stderr) else _nothing
    if progress is False:
        return _nothing
    if progress is True:
        return LiveProgress(sys.stderr)
    if callable(progress):
        return progress
    raise TypeError("progress must be None, False, True or a callable taking a TrainProgress, not %s"
                    % type(progress).__name__)


def _nothing(record):
    pass


def _isatty(f):
    try:
        return f.isatty()
    except (AttributeError, ValueError):
        return False


def _human(n):
    for unit in ("", "k", "M", "G", "T"):
        if n < 1000 or unit == "T":
            return ("%d" % n) if unit == "" else ("%.1f%s" % (n, unit))
        n /= 1000.0


def _clock(seconds):
    seconds = int(seconds + 0.5)
    h, rem = divmod(seconds, 3600)
    return ("%d:%02d:%02d" % (h, rem // 60, rem % 60)) if h else ("%d:%02d" % (rem // 60, rem % 60))


def describe(r):
    """One line for a TrainProgress: what is done, the rate, and in the merge phases the ETA."""
    if r.phase in ("count", "candidates"):
        rate = r.bytes / r.elapsed if r.elapsed > 0 else 0
        line = "%s: %s documents, %sB, %sB/s, %.1f s" % ("counting" if r.phase == "count" else "candidates",
                                                          _human(r.documents), _human(r.bytes), _human(rate),
                                                          r.elapsed)
        if r.candidates is not None:
            line += ", %s distinct candidates" % _human(r.candidates)
        return line
    if r.phase == "split":
        if not r.done:
            return "splitting: %s candidates into n-grams ..." % _human(r.candidates or 0)
        return "splitting: %s candidates after the n-gram split, %.1f s" % (_human(r.candidates or 0), r.elapsed)
    rate = r.merges / r.elapsed if r.elapsed > 0 else 0
    pct = 100.0 * r.merges / r.target if r.target else 100.0
    eta = ""
    if not r.done and rate > 0 and r.target > r.merges:
        eta = ", ETA %s" % _clock((r.target - r.merges) / rate)
    if r.phase == "supermerge":
        return "supermerging: %d/%d steps (%.0f%%), %d supermerges, %s steps/s, %.1f s%s" % (
            r.merges, r.target, pct, r.supermerges, _human(rate), r.elapsed, eta)
    kept = "" if r.kept is None else ", SuperBPE keeps the first %d" % r.kept
    return "merging: %d/%d merges (%.0f%%)%s, %s merges/s, %.1f s%s" % (r.merges, r.target, pct, kept, _human(rate),
                                                                      r.elapsed, eta)


class LiveProgress:
    """A progress line redrawn in place on a terminal (at most ten times a second), a new line
    for each phase."""

    def __init__(self, stream, prefix="supertok train: "):
        self.stream = stream
        self.prefix = prefix
        self.last = 0.0
        self.phase = None
        self.width = 0

    def __call__(self, r):
        now = time.monotonic()
        if r.phase != self.phase:
            if self.phase is not None:
                self.stream.write("\n")
            self.phase, self.width = r.phase, 0
        elif not r.done and now - self.last < 0.1:
            return
        self.last = now
        line = self.prefix + describe(r)
        self.stream.write("\r" + line + " " * max(0, self.width - len(line)))
        self.width = len(line)
        self.stream.flush()

    def close(self):
        if self.phase is not None:
            self.stream.write("\n")
            self.stream.flush()
            self.phase = None
