"""tiktoken-compatible encodings on the supertok core.

`get_encoding(name)` and `encoding_for_model(model)` return an `Encoding` whose methods give the
same ids, bytes and errors as tiktoken 0.14 for the shipped vocabularies (r50k_base, p50k_base,
p50k_edit, cl100k_base, o200k_base). The rank files ship in supertok/vocab/ and are checked
against their sha256 when loaded; the C core parses them itself.
"""
import array
import base64
import codecs
import collections.abc
import functools
import hashlib
import json
import lzma
import operator
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from . import _catalogue
from ._status import SupertokError
from . import backends as _backends
from .backends import current as _current_backend
from .backends.base import U32_MAX, check_int

VOCAB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocab")



# -- one long text on several cores (docs/design.md §7, "Caches and parallelism") --------------
# A text of at least _par_min bytes is cut where the core proves the parts' ids join to the
# whole's (st_encoding_cut) into about one part per thread, and the parts are encoded at once on
# a thread pool (the native core runs without the GIL); a wasm backend stays serial.
# SUPERTOK_THREADS sets the number of threads (default: the CPUs; 1: always serial);
# SUPERTOK_FORCE_PARALLEL=1 takes the parallel path on every text, in at least 4 parts (with at
# least 2 threads unless SUPERTOK_THREADS says 1), so the tests can run it on short texts
# (supertok.encoding.set_parallel() changes both at run time).
_PAR_MIN_DEFAULT = 256 * 1024  # below this the pool's hand-off costs about what the parts save


def _env_threads():
    v = os.environ.get("SUPERTOK_THREADS", "").strip()
    try:
        return max(1, int(v)) if v else (os.cpu_count() or 1)
    except ValueError:
        raise ValueError("SUPERTOK_THREADS must be a whole number, not %r" % v) from None


_par_force = os.environ.get("SUPERTOK_FORCE_PARALLEL", "") not in ("", "0")
# forced with no thread count given: two threads even on one CPU, so the path runs
_par_threads = max(2, _env_threads()) if _par_force and not os.environ.get("SUPERTOK_THREADS") else _env_threads()
_par_min = 1 if _par_force else _PAR_MIN_DEFAULT
_par_pool = None
_par_pool_lock = threading.Lock()


def set_parallel(threads=None, *, force=None, min_bytes=None):
    """Set how one long encode() call uses several cores: threads (1: serial; None: unchanged),
    force (True: every text takes the parallel path, in at least 4 parts, as the tests use it),
    min_bytes (the size from which a text is cut). Returns the previous (threads, force,
    min_bytes)."""
    global _par_threads, _par_force, _par_min
    prev = (_par_threads, _par_force, _par_min)
    with _par_pool_lock:
        if threads is not None:
            if int(threads) < 1:
                raise ValueError("threads must be at least 1")
            _par_threads = int(threads)
        if force is not None:
            _par_force = bool(force)
            if min_bytes is None:
                min_bytes = 1 if _par_force else _PAR_MIN_DEFAULT
        if min_bytes is not None:
            _par_min = max(1, int(min_bytes))
    return prev


def _shared_pool():
    """The process's pool for encode work (long texts' parts, encode_batch's chunks). Its tasks
    only run core calls and never wait for one another, so sharing it cannot deadlock; threads
    are started as the work needs them, up to 64 (no more are ever used at once than the
    callers' thread counts)."""
    global _par_pool
    if _par_pool is None:
        with _par_pool_lock:
            if _par_pool is None:
                _par_pool = ThreadPoolExecutor(64, thread_name_prefix="supertok-encode")
    return _par_pool


def _after_fork_in_child():
    """A child made by os.fork() has only the thread that forked: the pool's threads are gone, but
    the pool object would still count them as idle and hand them work nobody runs (encode_batch
    would wait forever). Drop the pool (the next call starts a new one) and renew the locks,
    which a thread of the parent may have held at the fork."""
    global _par_pool, _par_pool_lock, _lock
    _par_pool = None
    _par_pool_lock = threading.Lock()
    _lock = threading.Lock()


def _parallel_parts():
    """(number of parts, pool) for a long text: the pool's threads run all parts but the first."""
    if _par_threads <= 1:
        return 1, None
    parts = max(_par_threads, 4) if _par_force else _par_threads
    return parts, _shared_pool()


def _disallowed_special_error(token, offset=None, token_id=None):
    """tiktoken's ValueError for a disallowed special token in the text, its message word for word
    (callers match on it), with where it is for callers that say more (the command line names the
    line): `special` the string found, `offset` its index in the text, `token` its id (None for a
    string that is no special token of the encoding)."""
    exc = ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
    exc.special = token
    exc.offset = offset
    exc.token = token_id
    return exc


def _raise_disallowed_special_token(token):
    raise _disallowed_special_error(token)


def _text_index(text, data, at):
    """The index into text, as the caller gave it, of byte `at` of data, its UTF-8 from _to_utf8
    (where a surrogate pair of text is one character)."""
    n = len(bytes(data[:at]).decode("utf-8"))
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return n
    i = 0
    for _ in range(n):
        pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff"
        i += 2 if pair else 1
    return i


# ---- tiktoken's errors for arguments of the wrong type ----------------------------------------
# tiktoken converts arguments in its Rust extension (PyO3) and searches for disallowed special
# tokens with the `regex` module (else `re`); code that swaps the import may catch those errors,
# so supertok raises the same types with the same messages. These run on the error path only.

def _not_instance(obj, what):
    """PyO3's TypeError for an argument that is not a `what`."""
    if obj is None:
        return TypeError("'None' is not an instance of '%s'" % what)
    return TypeError("'%s' object is not an instance of '%s'" % (type(obj).__name__, what))


@functools.lru_cache(maxsize=1)
def _regex_module():
    try:
        import regex
        return regex
    except ImportError:
        import re
        return re


def _check_text(text, searched):
    """tiktoken's error for a text that is not a str: its special-token search raises first
    (`searched`: a disallowed set was non-empty), else the Rust extension's conversion."""
    if isinstance(text, str):
        return
    if searched:
        _regex_module().compile("(x)").search(text)  # raises the regex module's own TypeError
    raise _not_instance(text, "str")


def _check_id(token):
    """tiktoken's error for a token id that is no uint32 (PyO3's conversion)."""
    i = operator.index(token)  # TypeError: '<type>' object cannot be interpreted as an integer
    if not -(1 << 63) <= i < (1 << 63):
        raise OverflowError("Python int too large to convert to C long")
    if not 0 <= i < (1 << 32):
        raise OverflowError("out of range integral type conversion attempted")


def _is_sequence(obj):
    """CPython's PySequence_Check, which PyO3's Vec<u32> conversion asks: a type with item access
    that is no dict. A numpy array is one (tiktoken decodes it), a set or a generator is not."""
    return not isinstance(obj, dict) and (isinstance(obj, collections.abc.Sequence)
                                          or hasattr(type(obj), "__getitem__"))


def _check_ids_type(tokens):
    """tiktoken's error for a token list that is not a sequence (PyO3's Vec<u32>)."""
    if isinstance(tokens, str):
        raise TypeError("Can't extract `str` to `Vec`")
    if not _is_sequence(tokens):
        raise _not_instance(tokens, "Sequence")


def _check_ranks(values):
    """tiktoken's errors for ranks or special ids that are no uint32 (PyO3's conversion; the
    common case, plain ints in range, costs one pass)."""
    for v in values:
        if type(v) is not int or not 0 <= v <= 0xFFFFFFFF:
            _check_id(v)  # a bool or a numpy integer passes, as PyO3 takes them


def _check_ids(tokens):
    _check_ids_type(tokens)
    for t in tokens:
        _check_id(t)


def _num_threads(num_threads):
    """The batch calls' num_threads as tiktoken takes it (the max_workers of its thread pool):
    None is the pool's default, a value of 0 or less its ValueError, raised before any text is
    looked at (an empty batch included)."""
    if num_threads is None:
        return min(32, (os.cpu_count() or 1) + 4)  # ThreadPoolExecutor's default
    if num_threads <= 0:
        raise ValueError("max_workers must be greater than 0")
    return num_threads


# Rust's char::is_whitespace (Unicode White_Space), which str.isspace is not quite.
_REQUIRED = object()  # mergeable_ranks not given


# st_special_policy flags (supertok.h)
_ALLOW_ALL = 1
_DISALLOW_REST = 2
_DEFAULT_POLICY = ((), (), _DISALLOW_REST)  # tiktoken's defaults: nothing allowed, every special refused


def _to_utf8(text):
    """UTF-8 bytes of text, repairing lone surrogates exactly as tiktoken does: a surrogate
    pair becomes its code point, a lone surrogate becomes U+FFFD. Returns (bytes, text used)."""
    try:
        return text.encode("utf-8"), text
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return text.encode("utf-8"), text


def _utf8_data(text, backend):
    """text's UTF-8 for one core call: on a backend that reads the caller's memory (native), a view
    of the UTF-8 form CPython caches with the str (no copy, and none at all for ASCII text or a
    text encoded before); else, or for a str with lone surrogates, _to_utf8's bytes. The caller
    holds text for as long as it uses the view."""
    if backend.takes_views and _backends.utf8_view is not None and type(text) is str:
        try:
            return _backends.utf8_view(text)
        except UnicodeEncodeError:
            pass
    return _to_utf8(text)[0]


def _env_cache_size():
    """The piece cache size SUPERTOK_PIECE_CACHE asks for (bytes; 0 = off), or None when unset."""
    value = os.environ.get("SUPERTOK_PIECE_CACHE")
    if value is None or value.strip() == "":
        return None
    try:
        size = int(value)
    except ValueError:
        size = -1
    if size < 0:
        raise ValueError("SUPERTOK_PIECE_CACHE must be a number of bytes >= 0 (0 turns the piece cache "
                         "off), not %r" % value)
    return size


class Encoding:
    """One loaded vocabulary. Immutable; safe to share between threads."""

    def __init__(self, name, *, pat_str, mergeable_ranks=_REQUIRED, special_tokens, explicit_n_vocab=None,
                 pattern_id=None, ranks_file=None, sha256=None, image=None,
                 merges=None, alphabet="bytes", handle=None, _ranks_data=None):
        """tiktoken's constructor: Encoding(name, pat_str=, mergeable_ranks={bytes: rank},
        special_tokens={str: id}, explicit_n_vocab=None), checked as tiktoken checks it; the
        ranks become the core's rank-file input. Or supertok's own forms:
        a tiktoken vocabulary (ranks_file; image: (path of an xz-compressed vocabulary image,
        its sha256), used instead by backends that prefer images, i.e. pywasm), or a model of
        merge rules (merges: [(left, right), ...], rule i making id A + i; alphabet "bytes"
        (A = 256) or "ube" (A = 512); see load_model). pat_str must be one of tiktoken's
        patterns (the core has a scanner for each, and no regex engine): any other is a
        ValueError, never silently split some other way. _ranks_data: the rank file's bytes
        instead of its path (how an unpickled custom encoding is rebuilt)."""
        self._ranks_dict = None
        if mergeable_ranks is not _REQUIRED:
            # tiktoken's own checks, in its order and with its errors
            max_token_value = max(max(mergeable_ranks.values()), max(special_tokens.values(), default=0))
            if explicit_n_vocab:
                assert len(mergeable_ranks) + len(special_tokens) == explicit_n_vocab
                assert max_token_value == explicit_n_vocab - 1
            # then its Rust extension's conversions, ranks first: each a uint32, a float a
            # TypeError and a value outside uint32 an OverflowError (never truncated or wrapped)
            _check_ranks(mergeable_ranks.values())
            if _ranks_data is None and ranks_file is None:
                _ranks_data = b"".join(base64.b64encode(tok) + b" %d\n" % rank
                                       for tok, rank in sorted(mergeable_ranks.items(), key=lambda kv: kv[1]))
            self._ranks_dict = mergeable_ranks
        elif ranks_file is None and _ranks_data is None and merges is None and handle is None and image is None:
            raise TypeError("Encoding.__init__() missing 1 required keyword-only argument: 'mergeable_ranks'")
        _check_ranks(special_tokens.values())
        self.name = name
        self._pat_str = pat_str
        self._special_tokens = dict(special_tokens)
        self._backend = _current_backend()
        try:
            pid = self._backend.pattern_from_regex(pat_str.encode("utf-8"))
        except SupertokError as exc:
            if exc.name != "ST_ERR_UNSUPPORTED_PATTERN":
                raise
            raise ValueError("pat_str %r: no supertok pre-tokenizer implements this regex (supertok has a "
                             "scanner for each of tiktoken's patterns, r50k/p50k, cl100k and o200k, for "
                             "SuperBPE's Stage-2 pattern and for Llama 3's, Qwen 2's and DeepSeek V3's, and no "
                             "regex engine)" % (pat_str,)) from None
        if pattern_id is not None and pattern_id != pid:
            raise ValueError("pattern_id %r does not match pat_str (which is pattern %d)" % (pattern_id, pid))
        if handle is None and merges is None and _catalogue.PATTERN_BY_ID[pid]["split"]:
            # a tiktoken vocabulary: tiktoken encodes only the regex's matches, and this pattern's
            # pieces are the text between them too, so the ids would not be tiktoken's
            raise ValueError("pat_str %r splits %s (the text between its matches is a piece too, as HuggingFace's "
                             "Split does); tiktoken keeps only the matches, so a tiktoken vocabulary with it would "
                             "not give tiktoken's ids: use it in a model file (supertok.load_model)"
                             % (pat_str, _catalogue.PATTERN_BY_ID[pid]["split"]))
        pattern_id = pid
        if alphabet not in _ALPHABETS:
            raise ValueError("alphabet must be 'bytes' or 'ube', not %r" % (alphabet,))
        self.alphabet = alphabet
        # every (string, id) pair for the core, in the order given: an id may have several strings
        # (o200k_harmony's <|endofprompt|> and <|reserved_200018|>), the first is the one decoding
        # gives
        specials = b"".join(base64.b64encode(tok.encode("utf-8")) + b" %d\n" % i
                            for tok, i in special_tokens.items())
        # what pickling needs to rebuild this encoding in another process (see __reduce__)
        self._pickle_name = None  # set by _load for a shipped encoding: pickled by name
        self._model_data = None  # set by load_model: pickled by the model file's text
        self._tokenizer_json = None  # set by load_model from a tokenizer.json: pickled by its bytes
        self._supermerges = []  # set by load_model for a superword model
        # set by load_model from the model's pre-tokenizer flags (ST_PRETOK_SCRIPT_AWARE), as the
        # core parsed them: only a model file makes a script-aware encoding
        self._script_aware = False
        self._scripts = None  # its script list as the model gives it (b"Han,Thai"); None: the default set
        self._state = dict(pat_str=pat_str, special_tokens=self._special_tokens, pattern_id=pattern_id,
                           ranks_file=ranks_file, sha256=sha256, image=image, alphabet=alphabet)
        if handle is not None:  # built by the backend already (load_model from a model file)
            self._handle = handle
        elif merges is not None:
            flat = [x for pair in merges for x in pair]
            for k, x in enumerate(flat):  # ids are the core's uint32: never wrapped or truncated
                if type(x) is not int or not 0 <= x <= U32_MAX:
                    flat[k] = check_int("merges[%d][%d]" % (k // 2, k % 2), x, 0, U32_MAX, "uint32_t")
            try:
                self._handle = self._backend.encoding_new_merges(_ALPHABETS[alphabet], flat, specials, pattern_id)
            except SupertokError as exc:
                raise _named_load_error(exc, [(i, tok) for tok, i in special_tokens.items()], None, "merge rules") from None
            self._state["merges"] = array.array("I", flat)  # 4 bytes an id, not a list of pairs
        elif _ranks_data is None and image is not None and self._backend.prefers_image:
            self._handle = self._backend.encoding_from_image(_read_checked(image[0], image[1], lzma.open))
        else:
            ranks = _read_checked(ranks_file, sha256, open) if _ranks_data is None else bytes(_ranks_data)
            try:
                self._handle = self._backend.encoding_new(ranks, specials, pattern_id)
            except SupertokError as exc:
                where = ("mergeable_ranks" if self._ranks_dict is not None else
                         "rank file %s" % ranks_file if _ranks_data is None else "the rank file's bytes")
                raise _named_load_error(exc, [(i, tok) for tok, i in special_tokens.items()], self._ranks_dict, where) from None
            if _ranks_data is not None:
                self._state["_ranks_data"] = ranks
            elif sha256 is None:  # pin the bytes that built it: a pickle must carry those bytes
                self._state["sha256"] = hashlib.sha256(ranks).hexdigest()
        size = _env_cache_size()
        if size is not None:
            self._backend.set_cache_size(self._handle, size)
        self._special_ids = {tok.encode("utf-8"): i for tok, i in special_tokens.items()}
        self._special_by_id = {}  # an id's first string: the one decoding gives
        for tok, i in special_tokens.items():
            self._special_by_id.setdefault(i, tok)
        self._special_token_values = set(special_tokens.values())
        self.n_vocab = self._backend.n_vocab(self._handle)
        self.max_token_value = self.n_vocab - 1
        if explicit_n_vocab and mergeable_ranks is _REQUIRED:
            assert self.n_vocab == explicit_n_vocab
        self._sorted_token_bytes = None

    def __repr__(self):
        return "<Encoding %r>" % self.name

    def __reduce__(self):
        """Pickle support (multiprocessing, datasets.map(num_proc=...)): a shipped encoding
        pickles by name and unpickles through get_encoding on the unpickling process's
        backend; any other by what rebuilds it there: a model file's text, a model's merge rules, a custom rank
        file's bytes (read again now and checked against the sha256 of the bytes it was built
        from)."""
        if self._pickle_name is not None:
            return get_encoding, (self._pickle_name,)
        if self._model_data is not None:
            return load_model, (self._model_data,)
        if self._tokenizer_json is not None:
            return load_model, (self._tokenizer_json,)
        state = dict(self._state)
        if "merges" not in state and "_ranks_data" not in state and state["ranks_file"] is not None:
            state["_ranks_data"] = _read_checked(state["ranks_file"], state["sha256"], open)
        return _unpickle, (self.name, state)

    @functools.cached_property
    def merges(self):
        """The merge rules of a model of merge rules, in order: [(left id, right id, count), ...],
        rule i making id A + i; count is the pair's training count where the model records it
        (a trained model does), else None. [] for a tiktoken vocabulary (it has ranks, not rules).
        Read by the core from the model file (st_model_pairs)."""
        if self._model_data is not None:
            return self._backend.model_pairs(self._model_data, "merges")
        flat = self._state.get("merges")
        if flat is None:
            return []
        return [(flat[i], flat[i + 1], None) for i in range(0, len(flat), 2)]

    @property
    def supermerges(self):
        """The supermerges of a superword model, in order: [(left id, right id, count), ...],
        supermerge i making id A + len(merges) + i from two tokens (regular, base or earlier
        supermerge tokens); count is its training count where the model records it, else None.
        [] for any other encoding. Encoding applies them across pretokens (docs/design.md §7)."""
        return list(self._supermerges)

    def save_compact(self):
        """The compact image of an encoding loaded from a tokenizer.json (st_encoding_save_compact):
        bytes that supertok.load_model, JavaScript's loadModel and the C core load as the same
        model, without the JSON (docs/formats/tokenizer-json.md). Other encodings: ValueError."""
        if self._tokenizer_json is None:
            raise ValueError("save_compact: only an encoding loaded from a tokenizer.json has a compact image here "
                             "(a tiktoken vocabulary's is JavaScript's saveCompact)")
        return self._backend.save_compact(self._handle)

    def save(self, path):
        """Write the model file (docs/formats/model-format.md) that supertok.load_model (and the C core's
        st_encoding_new_model) loads back to this encoding: for a trained model, its merges with
        their counts, its pre-tokenizer options and its special tokens. Written to a temporary file
        beside path and renamed, so path is never left half-written. Only models of merge rules
        (trained, or loaded with load_model) have a model file; a tiktoken vocabulary does not.
        path may also name a character device or a named pipe (written straight); the file the
        encoding was loaded from is refused (SameFileError, a ValueError)."""
        if self._model_data is None:
            raise ValueError("%r has no model file to save: save() writes models of merge rules (supertok.train, "
                             "supertok.load_model); a tiktoken vocabulary is its rank file" % (self.name,))
        _write_atomic(path, self._model_data, self._inputs())

    def _inputs(self):
        """The files this encoding was read from, which its outputs must not overwrite."""
        src = getattr(self, "_model_source", None)
        return (src,) if src is not None else ()

    def export(self, path, format, *, sample=None, check=True):
        """Write this model as a tiktoken rank file (format="tiktoken") or a HuggingFace
        tokenizer.json (format="hf") at path, then check it: the sample texts (an iterable of str,
        e.g. the training text's lines; None: a built-in sample in many scripts) are encoded by this
        encoding and by the export loaded in tiktoken or tokenizers, and every text where the ids
        differ is reported (rank semantics can differ from rule semantics, docs/design.md §7).
        Returns an ExportResult (.ok, .mismatches, .summary(); a rank file holds no pattern and no
        special tokens: .pat_str and .special_tokens give them) and warns (ExportWarning) when it is
        not ok. Byte-level models without supermerges and not script-aware only: ExportError (a
        ValueError) says why another cannot go."""
        from ._export import export
        return export(self, path, format, sample=sample, check=check)

    def prepare(self):
        """Build now what encoding builds once it pays (the backtracking encoder's tables: about
        250 ms of CPU and 15 MB for o200k_base, natively; built during an encode once the pieces
        that want them have cost as much merge work), to pay for it at start-up instead. True when they are ready; False when this encoding never uses them (a
        vocabulary image, as pywasm loads, or a merge-rules model), which changes no id."""
        return self._backend.prepare(self._handle)

    def set_cache_size(self, size):
        """Bound the memory of the caches (the tokens of pieces already encoded and the ids of
        spans of text already encoded, kept across calls: a word seen before costs a lookup
        instead of a merge, a text seen before a lookup a span; docs/python.md, "The caches") to
        size bytes; 0 turns them off. The default is 24 MiB, or the SUPERTOK_PIECE_CACHE
        environment variable's value (bytes) when set as the encoding is made. Safe while other
        threads encode with this encoding; ids never change."""
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError("size must be an int (bytes), not %s" % type(size).__name__)
        if size < 0:
            raise ValueError("size must be >= 0 (bytes; 0 turns the cache off), not %d" % size)
        self._backend.set_cache_size(self._handle, size)

    def cache_info(self):
        """The caches' figures as a dict: limit (the bound, bytes; 0 = off), bytes (memory they
        hold now), hits and misses (pieces looked up since the encoding was made; a piece that is
        one token is not looked up, nor one in a span found), max_piece (the longest piece the
        piece cache holds, bytes), span_hits and span_misses (spans of text looked up)."""
        return self._backend.cache_info(self._handle)

    # -- properties ---------------------------------------------------------------------------
    @property
    def eot_token(self):
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self):
        return set(self._special_tokens.keys())

    def is_special_token(self, token):
        assert isinstance(token, int)
        return token in self._special_token_values

    @property
    def _mergeable_ranks(self):
        """tiktoken's {token bytes: rank} of the ordinary tokens: the dict given to the
        constructor, else read from the rank file on first use (about 0.2 s for o200k_base)."""
        if self._ranks_dict is None:
            self._ranks_dict = self._read_ranks()
        return self._ranks_dict

    def _read_ranks(self):
        from .load import parse_tiktoken_bpe
        st = self._state
        if st.get("_ranks_data") is not None:
            return parse_tiktoken_bpe(bytes(st["_ranks_data"]), "the rank file")
        if st.get("ranks_file") is not None:
            return parse_tiktoken_bpe(_read_checked(st["ranks_file"], st["sha256"], open), st["ranks_file"])
        if self.alphabet != "bytes":
            raise ValueError("encoding %r is a UBE model: its tokens are sequences of symbols, not bytes, "
                             "so it has no mergeable_ranks" % (self.name,))
        return {self._backend.token_bytes(self._handle, i): i for i in range(self.n_vocab)
                if i not in self._special_token_values or i in self._shared_special_ids}

    @functools.cached_property
    def _shared_special_ids(self):
        """The special ids that are an ordinary token's too, as the core says (in a model of
        merge rules a special whose text is a token's bytes may share its id:
        docs/formats/model-format.md, Specials; hf training makes such specials)."""
        return frozenset(self._backend.shared_special_ids(self._handle))

    def token_byte_values(self):
        """The bytes of every ordinary token, sorted (tiktoken's token_byte_values)."""
        return list(self._sorted_bytes())

    def _sorted_bytes(self):
        if self._sorted_token_bytes is None:
            self._sorted_token_bytes = sorted(self._mergeable_ranks)
        return self._sorted_token_bytes

    # -- encoding -----------------------------------------------------------------------------
    def _tiktoken_policy_errors(self, text, allowed_special, disallowed_special, core=True):
        """Raise what tiktoken raises for these arguments, in its order: its set arithmetic on
        allowed/disallowed_special, its search for a disallowed token (TypeError for a text
        that is no str), then its Rust extension's conversions. Called when an argument is
        not of the usual types; returns when tiktoken would raise nothing."""
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        if disallowed_special:
            if not isinstance(disallowed_special, frozenset):
                disallowed_special = frozenset(disallowed_special)
        if not isinstance(text, str) and disallowed_special:
            _regex_module().compile("(x)").search(text)  # the regex module's own TypeError
        if core:  # the Rust extension's conversions
            _check_text(text, False)
            if not isinstance(allowed_special, (set, frozenset)):
                raise _not_instance(allowed_special, "set")

    def _policy(self, text, allowed_special, disallowed_special):
        """tiktoken's allowed_special / disallowed_special as the core's special-token policy:
        (allowed, disallowed, flags), the strings as UTF-8 and "all" as a flag (ST_SPECIAL_*).
        The core resolves the strings against the encoding's specials (an allowed string that
        is none is ignored) and refuses a disallowed string found in the text, a special token
        or not (ST_KIND_DISALLOWED_SPECIAL). tiktoken's errors for arguments of other types are
        raised here, before the core is called."""
        if type(text) is not str or not isinstance(allowed_special, (set, frozenset)) and allowed_special != "all" \
                or not (disallowed_special == "all" or isinstance(disallowed_special, (set, frozenset, list, tuple))):
            self._tiktoken_policy_errors(text, allowed_special, disallowed_special)
            if not disallowed_special:  # tiktoken: any false value (None) disallows nothing
                disallowed_special = ()
        if not allowed_special and disallowed_special == "all":  # the default: the common case
            return _DEFAULT_POLICY
        flags = 0
        if allowed_special == "all":
            flags |= _ALLOW_ALL
            allowed = ()
        else:  # a member that is no str names no special token (tiktoken's set difference)
            allowed = [t.encode("utf-8", "surrogatepass") for t in allowed_special if isinstance(t, str)]
        if disallowed_special == "all":
            return allowed, (), flags | _DISALLOW_REST
        disallowed = []
        for t in disallowed_special:
            if not isinstance(t, str):
                _regex_module().escape(t)  # tiktoken escapes each for its search: the regex module's TypeError
                raise TypeError("disallowed_special holds %r, which is no str" % (t,))
            disallowed.append(t.encode("utf-8", "surrogatepass"))
        return allowed, disallowed, flags

    @staticmethod
    def _disallowed(exc, texts, datas):
        """tiktoken's ValueError for the core's ST_KIND_DISALLOWED_SPECIAL report on datas (the
        UTF-8 of texts, one after another as the core took them): the string found is the bytes at
        the report's offset and length (an id may have several strings), in the text holding it."""
        at = exc.offset
        for text, data in zip(texts, datas):
            if at < len(data):
                break
            at -= len(data)
        return _disallowed_special_error(bytes(data[at:at + exc.length]).decode("utf-8"), _text_index(text, data, at),
                                         exc.token)

    def _core(self, text, fn, data, *args, **kw):
        """A backend encode call fn(handle, data, ...) for text; the core's disallowed special
        becomes tiktoken's ValueError, built from the report's fields."""
        try:
            return fn(self._handle, data, *args, **kw)
        except SupertokError as exc:
            if exc.kind == "ST_KIND_DISALLOWED_SPECIAL":
                raise self._disallowed(exc, [text], [data]) from None
            raise

    def _core_many(self, fn, texts, datas, **kw):
        """_core for a call fn(handle, datas, ...) on several texts at once."""
        try:
            return fn(self._handle, datas, **kw)
        except SupertokError as exc:
            if exc.kind == "ST_KIND_DISALLOWED_SPECIAL":
                raise self._disallowed(exc, texts, datas) from None
            raise

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        data = _utf8_data(text, self._backend)
        if len(data) >= _par_min and self._backend.parallel:
            ids = self._encode_parallel(data, allowed, disallowed, flags)
            if ids is not None:
                return ids
        try:  # inline rather than through _core: this is the per-call path of short texts
            return self._backend.encode(self._handle, data, allowed, disallowed=disallowed, special_flags=flags)
        except SupertokError as exc:
            if exc.kind == "ST_KIND_DISALLOWED_SPECIAL":
                raise self._disallowed(exc, [text], [data]) from None
            raise

    def encode_ordinary(self, text):
        if type(text) is not str:
            _check_text(text, False)
        data = _utf8_data(text, self._backend)
        if len(data) >= _par_min and self._backend.parallel:
            ids = self._encode_parallel(data, [], (), 0)
            if ids is not None:
                return ids
        return self._backend.encode(self._handle, data, [])

    def _cut(self, data, frm):
        """The first byte offset >= frm (and > 0) where the UTF-8 text data may be cut so that the
        ids of the parts, joined, are the whole text's, for every special-token policy (the core's
        st_encoding_cut, from this encoding's pattern, mode and special tokens); len(data) if it
        proves no such place."""
        return self._backend.cut(self._handle, data, frm)

    def _encode_parallel(self, data, allowed, disallowed, flags, count=False, want_starts=False):
        """The ids (or, with count, their number) of data encoded in parts on several threads,
        cut where the core proves it changes nothing; None when there is no such cut, one thread
        is configured, or a part failed (the caller then encodes serially, which raises the
        whole text's error)."""
        parts, pool = _parallel_parts()
        if parts <= 1 or disallowed:
            # a disallowed string that is no special token may lie across a cut (the cuts are
            # proven for the encoding's specials only): the core searches the whole text
            return None
        cuts = self._backend.cuts(self._handle, data, parts)
        if not cuts:
            return None
        return self._backend.encode_parts(self._handle, data, cuts, allowed, disallowed=disallowed,
                                          special_flags=flags, count=count, pool=pool, want_starts=want_starts)

    def count(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """The number of tokens encode() would return, counted in the core with no list built."""
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        data = _utf8_data(text, self._backend)
        if len(data) >= _par_min and self._backend.parallel:
            n = self._encode_parallel(data, allowed, disallowed, flags, count=True)
            if n is not None:
                return n
        return self._core(text, self._backend.encode_count, data, allowed, disallowed=disallowed,
                          special_flags=flags)

    def encode_with_offsets(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """(ids, starts): starts[i] is the character offset in text where token i starts; a
        token starting inside a character gets that character's offset (tiktoken's
        decode_with_offsets rule). Offsets index the text as given, lone surrogates included."""
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        data, used = _to_utf8(text)
        got = None
        if len(data) >= _par_min and self._backend.parallel:
            got = self._encode_parallel(data, allowed, disallowed, flags, want_starts=True)
        if got is None:
            got = self._core(text, self._backend.encode, data, allowed, want_starts=True,
                             disallowed=disallowed, special_flags=flags)
        ids, starts = got
        if len(used) != len(text):
            # a surrogate pair became one character: map offsets back to the caller's indexing
            caller, i = [], 0
            for _ in used:
                caller.append(i)
                pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff"
                i += 2 if pair else 1
            starts = [caller[s] for s in starts]
        return ids, starts

    def encode_to_numpy(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """encode() as a numpy array of uint32 (numpy is imported here, as tiktoken does). A lone
        surrogate is a UnicodeEncodeError here, as in tiktoken (encode() repairs it)."""
        try:
            import numpy as np
        except ImportError:
            # tiktoken imports numpy after its Python-side checks: their errors come first
            self._tiktoken_policy_errors(text, allowed_special, disallowed_special, core=False)
            if isinstance(text, str):
                try:
                    self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
                except ValueError as exc:
                    if getattr(exc, "special", None) is not None:  # tiktoken finds it before importing
                        raise
                except Exception:  # noqa: BLE001 - tiktoken raises these only after the import
                    pass
            raise
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        data = self._strict_utf8(text, allowed, disallowed, flags)
        ids = self._core(text, self._backend.encode, data, allowed, disallowed=disallowed, special_flags=flags)
        return np.array(ids, dtype=np.uint32)

    def _strict_utf8(self, text, allowed, disallowed, flags):
        """text's UTF-8 for the calls where tiktoken takes no lone surrogate (encode_to_numpy,
        encode_with_unstable): their UnicodeEncodeError, unless the text also holds a disallowed
        special token, which tiktoken finds first (its ValueError)."""
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            error = exc
        if disallowed or flags & _DISALLOW_REST:  # the core's search, on the text as encode() takes it
            self._core(text, self._backend.encode_count, _to_utf8(text)[0], allowed, disallowed=disallowed,
                       special_flags=flags)
        raise error

    def encode_with_unstable(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """tiktoken's encode_with_unstable: (stable tokens, completions). The stable tokens encode
        a prefix of the text; each completion is a token sequence that, appended to them, decodes
        to bytes starting with the whole text (the ways the text's last, unstable, bytes could be
        tokenized once more text follows). Completions come sorted (tiktoken's are a set turned
        into a list, in no order). The core computes both (st_unstable_new and its calls)."""
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        if self.alphabet != "bytes":
            raise ValueError("encode_with_unstable works on byte-level encodings; %r is a UBE model" % (self.name,))
        if self._supermerges:
            # more text can lengthen the last run of one-token pretokens and change every
            # supermerge in it, not only the last piece's tokens: tiktoken's contract does not fit
            raise ValueError("encode_with_unstable works on encodings without supermerges; %r has %d "
                             "(more text can change the tokens of the whole last run of words)"
                             % (self.name, len(self._supermerges)))
        data = self._strict_utf8(text, allowed, disallowed, flags)  # a lone surrogate: as tiktoken's
        stable, completions = self._core(text, self._backend.encode_with_unstable, data, allowed,
                                         disallowed=disallowed, special_flags=flags)
        return stable, [list(c) for c in sorted(completions)]

    def _encode_single_piece(self, text_or_bytes):
        """tiktoken's _encode_single_piece: the merge of these bytes with no pre-tokenizer split
        and no special tokens (a str is taken as its UTF-8, bytes as they are)."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        elif not isinstance(text_or_bytes, bytes):
            raise _not_instance(text_or_bytes, "bytes")
        return self._backend.encode_piece(self._handle, text_or_bytes)

    def encode_batch(self, text, *, num_threads=8, allowed_special=frozenset(), disallowed_special="all"):
        if disallowed_special != "all" and not isinstance(disallowed_special, frozenset):
            frozenset(disallowed_special)  # tiktoken's encode_batch converts it, whatever it is
        num_threads = _num_threads(num_threads)
        texts = list(text)
        policy = None
        for t in texts:  # the same policy for every text (only the Python-side check reads the text)
            policy = self._policy(t, allowed_special, disallowed_special)
        return self._encode_batch(texts, policy or ([], [], 0), num_threads)

    def encode_ordinary_batch(self, text, *, num_threads=8):
        num_threads = _num_threads(num_threads)
        texts = list(text)
        for t in texts:
            if type(t) is not str:
                _check_text(t, False)
        return self._encode_batch(texts, ([], [], 0), num_threads)

    def _in_chunks(self, n, num_threads, run):
        """run(a, b) for contiguous chunks [a, b) of n items, one per thread (one chunk when the
        backend runs one call at a time): this thread runs the first, the shared pool the
        others, each a core call that drops the GIL natively; their results, in order."""
        k = max(1, min(int(num_threads) if self._backend.parallel else 1, n))
        size = -(-n // k) if n else 1
        bounds = [(a, min(a + size, n)) for a in range(0, n, size)]
        if len(bounds) <= 1:
            return [run(a, b) for a, b in bounds]
        pool = _shared_pool()
        later = [pool.submit(run, a, b) for a, b in bounds[1:]]
        return [run(*bounds[0])] + [f.result() for f in later]

    def _encode_batch(self, texts, policy, num_threads):
        """Contiguous chunks, one per thread, each encoded by one core call: the native core
        releases the GIL for the whole chunk, so the chunks run in parallel (a wasm backend
        runs them one after another: its runtime has one thread). The threads run the core
        alone (no list is built while another thread could be encoding); the lists are made at
        the end, in one C call per chunk."""
        allowed, disallowed, flags = policy
        datas = [_to_utf8(t)[0] for t in texts]

        def run(a, b):
            return self._core_many(self._backend.encode_many_raw, texts[a:b], datas[a:b], allowed=allowed,
                                   disallowed=disallowed, special_flags=flags)
        return [ids for out in self._in_chunks(len(datas), num_threads, run) for ids in self._backend.lists_of(out)]

    def _encode_ordinary_packed(self, datas, num_threads):
        """(the ids of every text, one after another, as bytes of little-endian uint32; each
        text's count) for UTF-8 texts encoded as ordinary text: encode_ordinary_batch without an
        int object per id, for callers that count millions of them (supertok.evaluate). Chunks
        run on threads as in encode_batch."""
        def run(a, b):
            return self._backend.encode_many_raw(self._handle, datas[a:b], [], (), 0, packed=True)
        outs = self._in_chunks(len(datas), num_threads, run)
        return b"".join(o[0] for o in outs), [c for o in outs for c in o[1]]

    def _decode_packed(self, packed):
        """The UTF-8 bytes of ids packed as _encode_ordinary_packed packs them (a UBE model:
        its text, malformed runs as U+FFFD)."""
        if self.alphabet == "ube":
            return self._backend.decode_text(self._handle, packed, 0)
        return self._backend.decode_bytes(self._handle, packed)

    def _map(self, fn, items, num_threads):
        num_threads = _num_threads(num_threads)
        items = list(items)
        if num_threads <= 1 or len(items) <= 1:
            return [fn(t) for t in items]
        # the native backend releases the GIL inside the core, so threads run in parallel
        with ThreadPoolExecutor(num_threads) as ex:
            return list(ex.map(fn, items))

    def encode_single_token(self, text_or_bytes):
        """The id of the token with exactly these bytes (tiktoken: any bytes, UTF-8 or not, and
        tokens the pre-tokenizer would split), looked up in the core. For a UBE model an
        ordinary token's bytes are its symbols: text (or UTF-8 bytes) is turned into them."""
        if isinstance(text_or_bytes, str):
            b = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, bytes):
            b = text_or_bytes
        else:
            raise _not_instance(text_or_bytes, "bytes")
        if b in self._special_ids:
            return self._special_ids[b]
        key = b
        if self.alphabet == "ube":
            if not _valid_utf8(b):
                raise KeyError(b)
            key = b"".join(s.to_bytes(2, "little") for s in self._backend.ube_encode_symbols(b))
        i = self._backend.token_id(self._handle, key)
        if i is None:
            raise KeyError(b)
        return i

    # -- decoding -----------------------------------------------------------------------------
    def decode_bytes(self, tokens):
        """The bytes of the tokens. For a UBE model, whose tokens are symbols rather than bytes,
        the UTF-8 of decode(tokens) (malformed runs as U+FFFD)."""
        if self.alphabet == "ube":
            return self.decode(tokens).encode("utf-8")
        if type(tokens) is not list:
            _check_ids_type(tokens)
        try:
            return self._backend.decode_bytes(self._handle, list(tokens))
        except (TypeError, OverflowError, ValueError, AttributeError):
            _check_ids(tokens)  # tiktoken's error for an id that is no uint32
        # every id is an integer in range behind __index__ (a numpy integer): as plain ints
        return self._backend.decode_bytes(self._handle, [operator.index(t) for t in tokens])

    def decode(self, tokens, errors="replace"):
        """Text of the tokens. For a UBE model: the tokens' base symbols through the UBE decoder
        (docs/design.md §6), each same-alphabet run as CPython decodes it, a special token flushing the
        run; errors is "replace" or "strict" (a ValueError naming the token where the malformed
        run starts)."""
        if self.alphabet != "ube":
            return self.decode_bytes(tokens).decode("utf-8", errors=errors)
        if errors not in ("replace", "strict"):
            raise ValueError("a UBE model decodes with errors='replace' or 'strict', not %r" % (errors,))
        tokens = list(tokens)
        # KeyError for an id that is no token; UbeDecodeError (strict) naming where text breaks
        return self._backend.decode_text(self._handle, tokens, _UBE_STRICT if errors == "strict" else 0).decode("utf-8")

    def token_symbols(self, token):
        """The base symbols of an ordinary token (bytes 0-255; for UBE also 256-511)."""
        return self._backend.token_symbols(self._handle, token)

    def decode_single_token_bytes(self, token):
        if self.alphabet == "ube" and token not in self._special_token_values:
            _check_id(token)
            raise ValueError("token %d of a UBE model is a sequence of symbols, not bytes: "
                             "use token_symbols(%d), or decode() for text" % (token, token))
        if type(token) is not int:
            _check_id(token)  # tiktoken's TypeError for an id that is no int (bool is one)
        try:
            return self._backend.token_bytes(self._handle, token)
        except (TypeError, OverflowError, ValueError, AttributeError):
            _check_id(token)  # tiktoken's error for an id that is no uint32
        return self._backend.token_bytes(self._handle, operator.index(token))

    def decode_tokens_bytes(self, tokens):
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens):
        """tiktoken's decode_with_offsets: (text, offsets), offsets[i] the character offset where
        token i starts (a token starting inside a character: that character's). Byte-level
        encodings decode in the core (st_decode_with_offsets) with tiktoken's errors: KeyError
        for an id that is no token, UnicodeDecodeError for bytes that are not UTF-8."""
        tokens = list(tokens)
        if self.alphabet != "ube":
            try:
                data, offsets = self._backend.decode_with_offsets(self._handle, tokens)
                return data.decode("utf-8"), offsets
            except (OverflowError, TypeError, AttributeError):
                pass  # an id that is no uint32: the loop below raises tiktoken's error in tiktoken's order
            except SupertokError as exc:
                if exc.name == "ST_ERR_INVALID_TOKEN":
                    raise KeyError(str(tokens[exc.offset])) from None
                if exc.name == "ST_ERR_INVALID_UTF8":
                    self.decode_bytes(tokens).decode("utf-8", errors="strict")  # CPython's own error
                raise
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for tb in token_bytes:
            offsets.append(max(0, text_len - (0x80 <= tb[0] < 0xC0)))
            text_len += sum(1 for c in tb if not 0x80 <= c < 0xC0)
        return b"".join(token_bytes).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch, *, errors="replace", num_threads=8):
        return self._map(functools.partial(self.decode, errors=errors), batch, num_threads)

    def decode_bytes_batch(self, batch, *, num_threads=8):
        return self._map(self.decode_bytes, batch, num_threads)

    def incremental_decoder(self, errors="replace"):
        return IncrementalDecoder(self, errors)


class IncrementalDecoder:
    """Feed ids one at a time (or many); each call returns the characters completed so far.
    Any split of an id stream gives the same text as Encoding.decode on the whole stream. The
    core's streaming decoder (st_decoder_*) holds the alphabet and the bytes of the one
    incomplete character (docs/design.md §6); a special token flushes it. errors: "replace" or "strict"
    (a byte-level encoding also takes CPython's other error handlers, decoded by its codec).
    After an error the decoder is as it was before the call that raised."""

    def __init__(self, encoding, errors="replace"):
        self._enc = encoding
        self._errors = errors
        self._dec = self._utf8 = None
        self._fed = 0  # ids fed so far: error indices count ids in the stream
        backend = encoding._backend
        codecs.lookup_error(errors)  # an unknown handler: the codecs' LookupError now, not at the first bad byte
        if errors in ("replace", "strict"):  # the core's decoder: either alphabet
            self._dec = backend.decoder_new(encoding._handle, errors == "strict")
        elif encoding.alphabet == "ube":  # UBE text is no UTF-8 byte stream for a codec to decode
            raise ValueError("a UBE model decodes with errors='replace' or 'strict', not %r" % (errors,))
        else:
            self._utf8 = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def _feed(self, tokens, final):
        try:
            out = self._enc._backend.decoder_feed(self._dec, tokens, final)
        except SupertokError as exc:
            k = exc.offset - self._fed  # index in this call (negative: a run begun in an earlier call)
            if exc.name == "ST_ERR_INVALID_TOKEN":
                raise KeyError("Invalid token for decoding: %d" % tokens[k]) from None
            if exc.name != "ST_ERR_INVALID_UTF8":
                raise
            if self._enc.alphabet == "ube":
                from .ube import UbeDecodeError
                raise UbeDecodeError("malformed UBE text: the ill-formed sequence starting in token %d (index %d "
                                     "of the stream) does not decode (errors='strict')" % (exc.token, exc.offset),
                                     exc.offset) from None
            data = self._enc.decode_bytes(tokens)
            start = len(self._enc.decode_bytes(tokens[:k])) if k > 0 else 0
            raise UnicodeDecodeError("utf-8", data, min(start, len(data)), min(start + 1, len(data)) or 0,
                                     "invalid UTF-8 starting in the token at index %d of the stream" % exc.offset
                                     ) from None
        self._fed += len(tokens)
        return out.decode("utf-8")

    def add(self, tokens):
        if isinstance(tokens, int):
            tokens = [tokens]
        if self._dec is not None:
            return self._feed(list(tokens), False)
        return self._utf8.decode(self._enc.decode_bytes(tokens), final=False)

    def flush(self):
        """The end of the stream: an incomplete character left over decodes as U+FFFD (or
        raises under errors="strict"). The decoder may be fed on afterwards."""
        if self._dec is not None:
            return self._feed([], True)
        return self._utf8.decode(b"", final=True)


def _named_load_error(exc, specials, ranks, where):
    """The core's report on a rank file or the special tokens, naming what the caller gave: the
    special token and its id, the token of mergeable_ranks and its rank, or the file and its line
    (the core counts lines of the text it was handed, which only a rank file's path makes
    meaningful to the caller). What was wrong is the report's kind, worded for the caller's
    arguments (an id is the caller's, the rank file's lines are the core's text)."""
    if exc.name != "ST_ERR_MALFORMED_MODEL" or not exc.line:
        return exc
    detail = exc.detail
    k = exc.line - 1
    if exc.input == 1 and 0 <= k < len(specials):
        i, tok = specials[k]
        detail = {"ST_KIND_ID_TAKEN": "id %d is taken by an ordinary token" % i,
                  "ST_KIND_ID_REPEATED": "id %d is given to another special token too" % i,
                  "ST_KIND_EMPTY_TOKEN": "the token is empty"}.get(exc.kind, detail)
        msg = "special token %r (id %d): %s" % (tok, i, detail)
    elif exc.input == 0:
        if exc.kind == "ST_KIND_ID_REPEATED":
            detail = "id %d is taken by another token" % exc.token
        if ranks is not None:
            items = sorted(ranks.items(), key=lambda kv: kv[1])
            if not 0 <= k < len(items):
                return exc
            msg = "%s: token %r (rank %d): %s" % (where, items[k][0], items[k][1], detail)
        else:
            msg = "%s, line %d: %s" % (where, exc.line, detail)
    else:
        return exc
    err = SupertokError(exc.status, msg, None, "", name=exc.name, token=exc.token, input=exc.input, kind=exc.kind,
                        detail=exc.detail)
    err.line = exc.line  # kept for callers; the message already names it
    return err


def _output_identity(path, st):
    from ._output import identity
    return identity(path, st)


def _write_atomic(path, data, inputs=()):
    """data into the file path (supertok._output.write: a regular file through a temporary file
    renamed over it, a device or a pipe straight, anything else refused; never one of inputs)."""
    from ._output import write
    write(path, data, inputs)


def _unpickle(name, state):
    state = dict(state)
    merges = state.pop("merges", None)
    if merges is not None:
        merges = list(zip(merges[0::2], merges[1::2]))
    return Encoding(name, merges=merges, **state)


def _read_checked(path, sha256, opener):
    with opener(path, "rb") as f:
        data = f.read()
    if sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise ValueError("%s: sha256 is %s, expected %s: the file is damaged or not the published one"
                             % (path, got, sha256))
    return data


def _valid_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


_cache = {}
_lock = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def list_encoding_names():
    """tiktoken 0.14's encoding names, in its order; supertok ships every one (gpt2 is r50k_base's
    ranks, o200k_harmony o200k_base's with the harmony special tokens)."""
    return list(_catalogue.ENCODINGS)


def _load(encoding_name):
    """A new Encoding on the current backend (get_encoding caches these), as the catalogue
    (catalogue.json) describes it: its rank file (checked against the sha256 in
    vocab/<rank file>.json), pattern and special tokens."""
    entry = _catalogue.ENCODINGS.get(encoding_name)
    if entry is None:
        raise ValueError("Unknown encoding %s.\nsupertok ships: %s" % (encoding_name, ", ".join(list_encoding_names())))
    base = entry["rank_file"]
    with open(os.path.join(VOCAB_DIR, base + ".json"), encoding="utf-8") as f:
        sha256 = json.load(f)["sha256"]
    image = None
    images = os.path.join(VOCAB_DIR, "images.json")
    if os.path.exists(images):
        with open(images, encoding="utf-8") as f:
            image_entry = json.load(f).get(entry["image"])
        if image_entry:
            image = (os.path.join(VOCAB_DIR, entry["image"] + ".stimg.xz"), image_entry["sha256"])
    pattern_id = _catalogue.PATTERNS[entry["pattern"]]
    enc = Encoding(encoding_name, pat_str=_catalogue.pat_str(entry["pattern"]),
                   ranks_file=os.path.join(VOCAB_DIR, base + ".tiktoken"),
                   special_tokens=_catalogue.special_tokens(entry), pattern_id=pattern_id, sha256=sha256,
                   image=image)
    enc._pickle_name = encoding_name  # shipped: pickled by name
    return enc


_ALPHABETS = {"bytes": 0, "ube": 1}
_UBE_STRICT = 2  # ST_UBE_STRICT
_PRETOK_SCRIPT_AWARE = 1  # ST_PRETOK_SCRIPT_AWARE
_ADDED_SPECIAL = 1  # ST_ADDED_SPECIAL
MODEL_FORMAT = "supertok-merges"


def _load_tokenizer_json(data, where):
    """An Encoding from a tokenizer.json's bytes (st_encoding_new_tokenizer_json)."""
    from ._model_format import ModelError
    backend = _current_backend()
    try:
        handle, meta = backend.encoding_new_tokenizer_json(data)
    except ModelError as exc:  # the file's name, and the byte offset in it: the core names the field
        at = "" if exc.offset is None else " at byte %d" % exc.offset
        raise ModelError(exc.status, backend.status_str(exc.status), exc.detail + at, 0, exc.offset, where) from None
    specials = {backend.token_bytes(handle, i).decode("utf-8"): i
                for i, flags in meta["added"].items() if flags & _ADDED_SPECIAL}
    name = os.path.basename(where)
    for ext in (".json", ".stvc"):
        if name.endswith(ext):
            name = name[:-len(ext)]
    enc = Encoding(name or "tokenizer", pat_str=_catalogue.PATTERN_BY_ID[meta["pattern"]]["pat_str"],
                   special_tokens=specials, pattern_id=meta["pattern"], handle=handle)
    enc._tokenizer_json = data  # pickled by the file's bytes
    enc._added_tokens = {backend.token_bytes(handle, i).decode("utf-8"): i for i in meta["added"]}
    return enc


def load_model(model):
    """An Encoding from a model file: a path (str or os.PathLike), its bytes, a binary file object
    (read from where it is, not closed), or a parsed JSON dict; anything else (an int is no file
    descriptor here) is a TypeError naming its type.

    The model file format (docs/formats/model-format.md) is text starting "supertok-model 1"; the core
    parses and validates it (errors: ModelError naming the line and the field). The JSON models
    of merge rules convert to it first (_model_format.json_to_text):

    {"format": "supertok-merges", "version": 1, "name": str, "alphabet": "bytes" | "ube",
     "pattern": "gpt2" | "cl100k" | "o200k", "merges": [[left, right], ...],
     "special_tokens": {text: id}}

    Ids 0..A-1 are the base symbols (A = 256 bytes, or 512 UBE symbols); rule i joins two
    earlier ids into id A + i. A pair merges only when it is a rule, lowest rule first
    (docs/design.md §7). Errors name the file and the field."""
    from ._model_format import ModelError, ModelFormatError, is_text_model, json_to_text
    where, data, source = "model", None, None
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif isinstance(model, (str, os.PathLike)):
        where = os.fsdecode(os.fspath(model))
        with open(model, "rb") as f:
            source = _output_identity(where, os.fstat(f.fileno()))
            data = f.read()
    elif hasattr(model, "read") and not isinstance(model, dict):  # a binary file object: read, not closed
        where = str(getattr(model, "name", "model"))
        data = model.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("load_model: the file object gave %s, not bytes: open the model file in binary mode "
                            "('rb')" % type(data).__name__)
        data = bytes(data)
    elif not isinstance(model, dict):
        raise TypeError("load_model takes a path (str or os.PathLike), the model's bytes, a binary file object or "
                        "a parsed JSON dict, not %s" % type(model).__name__)
    if data is not None and data[:8] == b"sthfvc\x00\x01":  # a tokenizer.json model's compact image
        return _load_tokenizer_json(data, where)
    from_json = data is None or not is_text_model(data)
    if from_json and (isinstance(model, dict) and "format" not in model
                      and any(k in model for k in ("model", "pre_tokenizer", "added_tokens"))
                      or data is not None and data.lstrip()[:1] == b"{" and b'"supertok-merges"' not in data
                      and any(k in data for k in (b'"model"', b'"pre_tokenizer"', b'"added_tokens"'))):
        # a HuggingFace tokenizer.json: read by the core from its bytes
        return _load_tokenizer_json(json.dumps(model).encode("utf-8") if data is None else data, where)
    if data is not None and from_json:
        model = _parse_json_model(data, where)
    if from_json:
        try:
            data = json_to_text(model)
        except ModelFormatError as exc:
            raise ValueError("%s: %s" % (where, exc)) from None
    backend = _current_backend()
    try:
        handle, meta = backend.encoding_new_model(data)
    except ModelError as exc:
        if from_json:  # the JSON's field is named; the converted text's line means nothing here
            raise ValueError("%s: %s" % (where, exc.detail)) from None
        raise ModelError(exc.status, backend.status_str(exc.status), exc.detail, exc.line, exc.offset,
                         where) from None
    specials = {backend.token_bytes(handle, i).decode("utf-8"): i for i in backend.special_ids(handle)}
    pat_str = _catalogue.PATTERN_BY_ID[meta["pattern"]]["pat_str"]
    enc = Encoding(meta["name"], pat_str=pat_str, special_tokens=specials, pattern_id=meta["pattern"],
                   alphabet="ube" if meta["alphabet"] == 1 else "bytes", handle=handle)
    enc._model_data = data  # pickled by its model text
    enc._model_source = source  # save() and export() must not overwrite it
    enc._supermerges = meta.get("supermerges") or []
    enc._script_aware = bool(meta["flags"] & _PRETOK_SCRIPT_AWARE)
    enc._scripts = meta["scripts"]
    return enc


def _parse_json_model(data, where):
    """The parsed JSON of a model file that is not in the text format, or a ValueError saying
    what the file is instead: a text model behind a byte order mark, a file that is neither
    format (damaged, or some other file), JSON that does not parse or nests too deeply."""
    from ._model_format import MAGIC
    bom = b"\xef\xbb\xbf"
    if data.startswith(bom + MAGIC):
        raise ValueError("%s: the model file starts with a UTF-8 byte order mark (EF BB BF) before "
                         "'supertok-model': remove it (a model file is plain UTF-8 starting with "
                         "'supertok-model 1', docs/formats/model-format.md)" % where)
    body = data[len(bom):] if data.startswith(bom) else data
    head = body.lstrip(b" \t\r\n")[:1]
    if head not in (b"{", b"["):
        raise ValueError("%s: not a supertok model: a model file starts with 'supertok-model 1' (the text "
                         "format, docs/formats/model-format.md) or '{' (a JSON model), this one with %r; is it "
                         "damaged or another kind of file?" % (where, data[:16]))
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError("%s: not JSON (%s)" % (where, exc)) from None
    except RecursionError:
        raise ValueError("%s: not a JSON model: its JSON nests deeper than the parser goes (a model's "
                         "JSON nests 3 levels)" % where) from None


def get_encoding(encoding_name):
    """The encoding on the current backend, loaded once per backend and name."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    key = (encoding_name, id(_current_backend()))
    with _lock:
        enc = _cache.get(key)
        if enc is None:
            enc = _cache[key] = _load(encoding_name)
        ENCODINGS[encoding_name] = enc
        return enc


ENCODINGS = {}  # name -> the Encoding get_encoding loaded last (tiktoken.registry.ENCODINGS)


def encoding_name_for_model(model_name):
    name = _catalogue.MODEL_TO_ENCODING.get(model_name)
    if name is None:
        for prefix, enc in _catalogue.MODEL_PREFIX_TO_ENCODING.items():
            if model_name.startswith(prefix):
                name = enc
                break
    if name is None:
        raise KeyError(
            f"Could not automatically map {model_name} to a tokeniser. "
            "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect.")
    return name


def encoding_for_model(model_name):
    name = encoding_name_for_model(model_name)
    if name not in list_encoding_names():
        raise KeyError("model %s uses the encoding %s, which supertok does not ship (it ships %s)"
                       % (model_name, name, ", ".join(list_encoding_names())))
    return get_encoding(name)
