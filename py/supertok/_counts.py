"""Pretoken counts as a public object: supertok.count_pretokens and supertok.Counts.

Counting is the part of training that scales with the corpus, and it is exact to split: the counts
of shards add up to the counts of the whole, whatever the split (docs/design.md §13). A Counts is
the core's saved counts (docs/formats/train-format.md, `.stcounts`) held as bytes, so it pickles,
travels between processes and machines, and adds exactly; supertok.train takes one (or
`.stcounts` paths) as its source. The core does the counting, the adding, the filtering and the
checking of every file; this module keeps the bytes and the handles.
"""
import os
import struct

from . import _pretokenizer
from ._catalogue import PATTERN_BY_ID
from ._status import SupertokError, argument_error
from .backends import current as _current_backend

_MAGIC = b"stcounts"
# the pre-tokenizer fields of the header (docs/formats/train-format.md, Layout): the pattern at
# 12, the flags at 16, the script set (256 bits) at 20; the core checks all of it when it loads
_HEADER = struct.Struct("<8sIII32s")
_DOCUMENTS, _BYTES, _PRETOKENS, _UNIQUE = 0, 1, 2, 3


class Counts:
    """Pretoken counts: how often each pretoken of a text occurs, under one pre-tokenizer.

    Made by supertok.count_pretokens, Counts.load or Counts.from_bytes; `a + b` and `sum(...)`
    add them exactly (counts of different pre-tokenizers are refused); `.filtered(k)` drops the
    pretokens seen fewer than k times; `.save(path)` writes the `.stcounts` file. Statistics:
    `documents`, `bytes` (of text read), `pretokens` (with multiplicity), `distinct`. The
    pre-tokenizer: `pattern`, `script_aware`, `scripts`."""

    __slots__ = ("_data", "_options", "documents", "bytes", "pretokens", "distinct")

    def __init__(self, *args, **kwargs):
        raise TypeError("Counts are made by supertok.count_pretokens, Counts.load or Counts.from_bytes")

    @classmethod
    def _of(cls, data, options, stats):
        self = object.__new__(cls)
        self._data, self._options = data, options
        self.documents, self.bytes, self.pretokens, self.distinct = stats
        return self

    @classmethod
    def from_bytes(cls, data, where="counts"):
        """Counts from the bytes of a `.stcounts` file, checked whole by the core (a damaged or
        truncated file: ValueError naming `where` and the byte offset)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("Counts.from_bytes takes bytes, not %s" % type(data).__name__)
        data = bytes(data)
        options = _header_options(data, where)
        backend = _current_backend()
        counter = _new_counter(backend, options)
        try:
            try:
                backend.counter_load(counter, data)
            except SupertokError as exc:
                raise ValueError("%s: not a valid counts file: %s" % (where, exc)) from None
            return cls._of(data, options, _stats(backend, counter))
        finally:
            backend.counter_free(counter)

    @classmethod
    def load(cls, path):
        """Counts from a `.stcounts` file (Counts.save writes one)."""
        where = os.fsdecode(os.fspath(path))
        with open(path, "rb") as f:
            return cls.from_bytes(f.read(), where)

    def to_bytes(self):
        """The `.stcounts` bytes: equal counts give equal bytes."""
        return self._data

    def save(self, path):
        """Write the `.stcounts` file (atomically; never over an input: supertok._output)."""
        from ._output import write
        write(os.fspath(path), self._data)

    @property
    def pattern(self):
        return PATTERN_BY_ID[self._options[0]]["name"]

    @property
    def script_aware(self):
        return bool(self._options[1] & _pretokenizer.SCRIPT_AWARE)

    @property
    def scripts(self):
        """The scripts split one letter per piece (script-aware counts), else None."""
        spec = self._options[2]
        return None if spec is None else spec.decode("ascii").split(",")

    def _combine(self, others, min_count=1):
        for c in others:
            if c._options != self._options:
                raise ValueError("counts of different pre-tokenizers do not add: %s and %s"
                                 % (self._describe(), c._describe()))
        return _merged(self._options, [c._data for c in (self,) + tuple(others)], min_count)

    def __add__(self, other):
        if not isinstance(other, Counts):
            return NotImplemented
        return self._combine([other])

    def __radd__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:  # sum()'s start
            return self
        return NotImplemented

    def filtered(self, min_count):
        """These counts without the pretokens seen fewer than min_count times (the UBE paper's
        per-shard filter: applied to shards before adding them, it is not whole-corpus BPE)."""
        min_count = _min_count(min_count)
        return self if min_count <= 1 else self._combine([], min_count)

    def token_counts(self, encoding):
        """How often each token id of `encoding` occurs in the counted text (a list, one int per
        id): each distinct pretoken encoded once in the core and its ids counted as often as it
        occurs; what the UBE paper's vocabulary diagnostics (active utilization, dead merges)
        read. Not for superword models: their supermerges join pretokens."""
        backend = _current_backend()
        counter = _new_counter(backend, self._options)
        try:
            backend.counter_load(counter, self._data)
            try:
                return backend.counter_token_counts(counter, encoding._handle)
            except SupertokError as exc:
                raise ValueError("token counts of %s: %s" % (encoding.name, exc.detail or exc)) from None
        finally:
            backend.counter_free(counter)

    def _describe(self):
        return "pattern %s%s" % (self.pattern, ", script-aware (%s)" % ",".join(self.scripts or ["default scripts"])
                                 if self.script_aware else "")

    def __eq__(self, other):
        return isinstance(other, Counts) and self._data == other._data

    def __hash__(self):
        return hash(self._data)

    def __reduce__(self):
        return (_from_pickle, (self._data,))

    def __repr__(self):
        return ("<supertok.Counts %s: %d documents, %d bytes, %d pretokens, %d distinct>"
                % (self._describe(), self.documents, self.bytes, self.pretokens, self.distinct))


def _from_pickle(data):
    return Counts.from_bytes(data)


def _stats(backend, counter):
    return tuple(backend.counter_stat(counter, k) for k in (_DOCUMENTS, _BYTES, _PRETOKENS, _UNIQUE))


def _new_counter(backend, options):
    pid, flags, spec = options
    try:
        return backend.counter_new(pid, flags, spec)
    except SupertokError as exc:
        raise _pretokenizer.named_script_error(exc, spec) from None


def _header_options(data, where):
    """The (pattern id, flags, scripts) a counts file declares, read from its header so a counter
    of that pre-tokenizer can load it (the core then checks the whole file)."""
    if len(data) < _HEADER.size or not data.startswith(_MAGIC):
        raise ValueError("%s: not a counts file (.stcounts): it does not start with %r"
                         % (where, _MAGIC.decode("ascii")))
    _, version, pattern, flags, bits = _HEADER.unpack_from(data)
    if version != 1:
        raise ValueError("%s: a counts file of version %d: this supertok reads pretoken counts, version 1"
                         % (where, version))
    if pattern not in PATTERN_BY_ID:
        raise ValueError("%s: unknown pattern %d in the counts file's header" % (where, pattern))
    spec = None
    if flags & _pretokenizer.SCRIPT_AWARE:
        names = _current_backend().script_names()
        ids = [i for i in range(256) if bits[i // 8] >> (i % 8) & 1]
        if any(i >= len(names) for i in ids):
            raise ValueError("%s: the counts file names a script this supertok does not know" % where)
        spec = ",".join(names[i] for i in ids).encode("ascii")
    return pattern, flags, spec


def _min_count(min_count):
    if not isinstance(min_count, int) or isinstance(min_count, bool) or min_count < 1:
        raise argument_error("min_count", "min_count is an int >= 1 (1 keeps every pretoken), not %r" % (min_count,))
    return min_count


def count_pretokens(source, *, pattern="o200k", script_aware=False, scripts=None, min_count=1, threads=None,
                    progress=None, text_column="text"):
    """Count the pretokens of a source in the core, on every core: supertok.Counts.

    source: what supertok.train reads (text, JSON-lines, Parquet and Arrow files, compressed or
    not, folders and glob patterns of them, or an iterable of str documents or of mappings). The pre-tokenizer: pattern, script_aware, scripts, as
    supertok.train takes them; text_column the field or column of JSON lines, Parquet and Arrow
    files and of mappings. min_count=k drops the pretokens seen fewer than k times in this
    source before returning: the UBE paper's per-shard singleton filter (Appendix B.1). Counting
    shards with it and adding them is not training on the whole corpus: a pretoken frequent
    overall but rare in each shard is lost (docs/design.md §13). threads and progress as in
    supertok.train (progress records have phase "count")."""
    from . import _train
    min_count = _min_count(min_count)
    backend = _current_backend()
    options = _pretokenizer.options(pattern, script_aware, scripts)
    counter = _train.count_source(backend, source, options, threads, progress, text_column)
    try:
        if min_count > 1:
            backend.counter_prune(counter, min_count)
        return _saved(backend, counter)
    finally:
        backend.counter_free(counter)


def _count_lines(data, *, pattern="o200k", script_aware=False, scripts=None):
    """The Counts of UTF-8 text whose every line is a document (its '\n' kept), counted in one
    core call as supertok.train counts a text file (supertok.dask's text shards)."""
    backend = _current_backend()
    counter = _new_counter(backend, _pretokenizer.options(pattern, script_aware, scripts))
    try:
        backend.counter_add(counter, data, 1)  # ST_COUNT_LINES
        return _saved(backend, counter)
    finally:
        backend.counter_free(counter)


def _merged(options, parts, min_count=1):
    """The Counts of several .stcounts files of one pre-tokenizer, all loaded (and checked) into
    one counter, pruned by min_count, saved once."""
    backend = _current_backend()
    counter = _new_counter(backend, options)
    try:
        _load_all(backend, counter, parts)
        if min_count > 1:
            backend.counter_prune(counter, min_count)
        return _saved(backend, counter)
    finally:
        backend.counter_free(counter)


def _load_all(backend, counter, parts):
    """Load (and check) every saved part into counter."""
    for i, p in enumerate(parts):
        try:
            backend.counter_load(counter, p)
        except SupertokError as exc:
            raise ValueError("counts %d of %d: %s" % (i + 1, len(parts), exc)) from None


def _sum_candidates(spec, parts):
    """The saved sum of saved candidates counts (version 2) of one eligible vocabulary: all loaded
    (and checked) into one counter made from the trainer's candidates spec, saved once
    (supertok.dask's reduction of the candidates pass)."""
    backend = _current_backend()
    counter = backend.candidates_new(spec)
    try:
        _load_all(backend, counter, parts)
        return backend.counter_save(counter)
    finally:
        backend.counter_free(counter)


def _sum_bytes(parts):
    """The .stcounts bytes of the sum of several .stcounts files (supertok.dask's reduction tasks)."""
    return _merged(_header_options(parts[0], "counts"), parts).to_bytes()


def _saved(backend, counter):
    """The Counts of a counter. Its pre-tokenizer is read back from the saved header, so counts
    of the same pre-tokenizer compare equal however their scripts were named."""
    data = backend.counter_save(counter)
    return Counts._of(data, _header_options(data, "counts"), _stats(backend, counter))


#: a model's token-count sidecar is its path with this after it (model.stmodel.token-counts.json)
TOKEN_COUNTS_SUFFIX = ".token-counts.json"


def token_counts_json(encoding, counts):
    """The sidecar's bytes: {"format": "supertok-token-counts", "version": 1, "model": name,
    "n_vocab": n, "counts": [one int per id]} (docs/training.md)."""
    import json
    return (json.dumps({"format": "supertok-token-counts", "version": 1, "model": encoding.name,
                        "n_vocab": encoding.n_vocab, "counts": list(counts)}, separators=(",", ":")) + "\n").encode()


def read_token_counts(path):
    """The counts list of a sidecar file, checked (ValueError naming the file otherwise)."""
    import json
    where = os.fsdecode(os.fspath(path))
    try:
        with open(path, "rb") as f:
            d = json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("%s: not a token-count file (%s)" % (where, exc)) from None
    counts = d.get("counts") if isinstance(d, dict) else None
    if (not isinstance(d, dict) or d.get("format") != "supertok-token-counts" or not isinstance(counts, list)
            or not all(type(c) is int and c >= 0 for c in counts)):
        raise ValueError("%s: not a supertok token-count file" % where)
    return counts
