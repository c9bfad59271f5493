"""tiktoken-compatible encodings on the supertok core.

`get_encoding(name)` and `encoding_for_model(model)` return an `Encoding` whose methods give the
same ids, bytes and errors as tiktoken 0.14 for the shipped vocabularies (r50k_base, p50k_base,
p50k_edit, cl100k_base, o200k_base). The rank files ship in supertok/vocab/ and are checked
against their sha256 when loaded; the C core parses them itself.
"""
import array
import base64
import codecs
import functools
import hashlib
import json
import lzma
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor

from . import _models
from ._status import SupertokError
from .backends import current as _current_backend

VOCAB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocab")
_PATTERN_IDS = {"r50k_base": 1, "p50k_base": 1, "cl100k_base": 2, "o200k_base": 3}

# Encodings derived from a shipped rank file with other special tokens (as tiktoken defines them).
_DERIVED = {
    "p50k_edit": ("p50k_base", {"<|endoftext|>": 50256, "<|fim_prefix|>": 50281,
                                "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283}),
}


def _raise_disallowed_special_token(token):
    # tiktoken's message, word for word: callers match on it
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


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


class Encoding:
    """One loaded vocabulary. Immutable; safe to share between threads."""

    def __init__(self, name, *, pat_str, special_tokens, pattern_id=None, ranks_file=None, sha256=None, image=None,
                 merges=None, alphabet="bytes", handle=None, _ranks_data=None):
        """A tiktoken vocabulary (ranks_file; image: (path of an xz-compressed vocabulary image,
        its sha256), used instead by backends that prefer images, i.e. pywasm), or a model of
        merge rules (merges: [(left, right), ...], rule i making id A + i; alphabet "bytes"
        (A = 256) or "ube" (A = 512); see load_model). pat_str must be one of tiktoken's
        patterns (the core has a scanner for each, and no regex engine): any other is a
        ValueError, never silently split some other way. _ranks_data: the rank file's bytes
        instead of its path (how an unpickled custom encoding is rebuilt)."""
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
                             "scanner for each of tiktoken's patterns, r50k/p50k, cl100k and o200k, and no "
                             "regex engine)" % (pat_str,)) from None
        if pattern_id is not None and pattern_id != pid:
            raise ValueError("pattern_id %r does not match pat_str (which is pattern %d)" % (pattern_id, pid))
        pattern_id = pid
        if alphabet not in _ALPHABETS:
            raise ValueError("alphabet must be 'bytes' or 'ube', not %r" % (alphabet,))
        self.alphabet = alphabet
        specials = b"".join(base64.b64encode(tok.encode("utf-8")) + b" %d\n" % i
                            for tok, i in sorted(special_tokens.items(), key=lambda kv: kv[1]))
        # what pickling needs to rebuild this encoding in another process (see __reduce__)
        self._pickle_name = None  # set by _load for a shipped encoding: pickled by name
        self._model_data = None  # set by load_model: pickled by the model file's text
        self._state = dict(pat_str=pat_str, special_tokens=self._special_tokens, pattern_id=pattern_id,
                           ranks_file=ranks_file, sha256=sha256, image=image, alphabet=alphabet)
        if handle is not None:  # built by the backend already (load_model from a model file)
            self._handle = handle
        elif merges is not None:
            flat = [x for pair in merges for x in pair]
            try:
                self._handle = self._backend.encoding_new_merges(_ALPHABETS[alphabet], flat, specials, pattern_id)
            except SupertokError as exc:
                raise _build_error(exc, None, special_tokens) from None
            self._state["merges"] = array.array("I", flat)  # 4 bytes an id, not a list of pairs
        elif _ranks_data is None and image is not None and self._backend.prefers_image:
            self._handle = self._backend.encoding_from_image(_read_checked(image[0], image[1], lzma.open))
        else:
            ranks = _read_checked(ranks_file, sha256, open) if _ranks_data is None else bytes(_ranks_data)
            try:
                self._handle = self._backend.encoding_new(ranks, specials, pattern_id)
            except SupertokError as exc:
                raise _build_error(exc, ranks_file if _ranks_data is None else None, special_tokens) from None
            if _ranks_data is not None:
                self._state["_ranks_data"] = ranks
            elif sha256 is None:  # pin the bytes that built it: a pickle must carry those bytes
                self._state["sha256"] = hashlib.sha256(ranks).hexdigest()
        self._special_ids = {tok.encode("utf-8"): i for tok, i in special_tokens.items()}
        self._special_by_id = {i: tok for tok, i in special_tokens.items()}
        self._special_token_values = set(special_tokens.values())
        self.n_vocab = self._backend.n_vocab(self._handle)
        self.max_token_value = self.n_vocab - 1

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
        state = dict(self._state)
        if "merges" not in state and "_ranks_data" not in state and state["ranks_file"] is not None:
            state["_ranks_data"] = _read_checked(state["ranks_file"], state["sha256"], open)
        return _unpickle, (self.name, state)

    def prepare(self):
        """Build now what encoding builds on first need (the backtracking encoder's tables: about
        100 ms and 16 MB for o200k_base, natively), to pay for it at start-up instead of on a
        first request. True when they are ready; False when this encoding never uses them (a
        vocabulary image, as pywasm loads, or a merge-rules model), which changes no id."""
        return self._backend.prepare(self._handle)

    # -- properties ---------------------------------------------------------------------------
    @property
    def eot_token(self):
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self):
        return set(self._special_tokens.keys())

    def is_special_token(self, token):
        return token in self._special_token_values

    # -- encoding -----------------------------------------------------------------------------
    def _policy(self, text, allowed_special, disallowed_special):
        """tiktoken's allowed_special / disallowed_special as the core's special-token policy
        (allowed ids, disallowed ids, flags): the core finds a disallowed special in the text
        and reports it (ST_ERR_DISALLOWED_SPECIAL). Allowed strings that are no special token
        are ignored, as tiktoken ignores them. tiktoken also refuses a disallowed string that is
        no special token at all; the core knows only tokens, so that rare case is checked here."""
        if not allowed_special and disallowed_special == "all":  # the default: the common case
            return _DEFAULT_POLICY
        flags = 0
        if allowed_special == "all":
            flags |= _ALLOW_ALL
            allowed = []
        else:
            allowed = sorted(self._special_tokens[t] for t in allowed_special if t in self._special_tokens)
        if disallowed_special == "all":
            return allowed, [], flags | _DISALLOW_REST
        disallowed = [self._special_tokens[t] for t in disallowed_special if t in self._special_tokens]
        if len(disallowed) != len(disallowed_special):  # strings that are no special token
            first = None
            for tok in disallowed_special:
                k = text.find(tok)
                if k >= 0 and (first is None or k < first[0] or (k == first[0] and len(tok) > len(first[1]))):
                    first = (k, tok)
            if first is not None:
                _raise_disallowed_special_token(first[1])
            disallowed = []
        return allowed, disallowed, flags

    def _core(self, fn, *args, **kw):
        """A backend encode call; the core's ST_ERR_DISALLOWED_SPECIAL becomes tiktoken's
        ValueError, built from the token the core names."""
        try:
            return fn(*args, **kw)
        except SupertokError as exc:
            if exc.name == "ST_ERR_DISALLOWED_SPECIAL":
                _raise_disallowed_special_token(self._special_by_id[exc.token])
            raise

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        data, _ = _to_utf8(text)
        try:  # inline rather than through _core: this is the per-call path of short texts
            return self._backend.encode(self._handle, data, allowed, disallowed=disallowed, special_flags=flags)
        except SupertokError as exc:
            if exc.name == "ST_ERR_DISALLOWED_SPECIAL":
                _raise_disallowed_special_token(self._special_by_id[exc.token])
            raise

    def encode_ordinary(self, text):
        data, _ = _to_utf8(text)
        return self._backend.encode(self._handle, data, [])

    def count(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """The number of tokens encode() would return, counted in the core with no list built."""
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        data, _ = _to_utf8(text)
        return self._core(self._backend.encode_count, self._handle, data, allowed, disallowed=disallowed,
                          special_flags=flags)

    def encode_with_offsets(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """(ids, starts): starts[i] is the character offset in text where token i starts; a
        token starting inside a character gets that character's offset (tiktoken's
        decode_with_offsets rule). Offsets index the text as given, lone surrogates included."""
        allowed, disallowed, flags = self._policy(text, allowed_special, disallowed_special)
        data, used = _to_utf8(text)
        ids, starts = self._core(self._backend.encode, self._handle, data, allowed, want_starts=True,
                                 disallowed=disallowed, special_flags=flags)
        if len(used) != len(text):
            # a surrogate pair became one character: map offsets back to the caller's indexing
            caller, i = [], 0
            for _ in used:
                caller.append(i)
                pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff"
                i += 2 if pair else 1
            starts = [caller[s] for s in starts]
        return ids, starts

    def encode_batch(self, text, *, num_threads=8, allowed_special=frozenset(), disallowed_special="all"):
        texts = list(text)
        policy = None
        for t in texts:  # the same policy for every text (only the Python-side check reads the text)
            policy = self._policy(t, allowed_special, disallowed_special)
        return self._encode_batch(texts, policy or ([], [], 0), num_threads)

    def encode_ordinary_batch(self, text, *, num_threads=8):
        return self._encode_batch(list(text), ([], [], 0), num_threads)

    def _encode_batch(self, texts, policy, num_threads):
        """Contiguous chunks, one per thread, each encoded by one core call: the native core
        releases the GIL for the whole chunk, so the chunks run in parallel (a wasm backend
        runs them one after another: its runtime has one thread)."""
        allowed, disallowed, flags = policy
        datas = [_to_utf8(t)[0] for t in texts]
        k = max(1, min(num_threads if self._backend.parallel else 1, len(datas)))
        size = -(-len(datas) // k) if datas else 0
        chunks = [datas[i:i + size] for i in range(0, len(datas), size)] if datas else []
        run = functools.partial(self._core, self._backend.encode_many, self._handle, allowed=allowed,
                                disallowed=disallowed, special_flags=flags)
        if len(chunks) <= 1:
            return [ids for c in chunks for ids in run(c)]
        with ThreadPoolExecutor(len(chunks)) as ex:
            return [ids for part in ex.map(run, chunks) for ids in part]

    def _map(self, fn, items, num_threads):
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
        b = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
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
        return self._backend.decode_bytes(self._handle, list(tokens))

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
            raise ValueError("token %d of a UBE model is a sequence of symbols, not bytes: "
                             "use token_symbols(%d), or decode() for text" % (token, token))
        return self._backend.token_bytes(self._handle, token)

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
            except OverflowError:
                pass  # an id outside uint32: the loop below raises tiktoken's error in tiktoken's order
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
        self._dec = self._ube = self._utf8 = None
        self._fed = 0  # ids fed so far: error indices count ids in the stream
        backend = encoding._backend
        if errors in ("replace", "strict"):
            self._dec = backend.decoder_new(encoding._handle, errors == "strict")
        elif encoding.alphabet == "ube":
            from .ube import UbeStreamDecoder
            if errors not in ("replace", "strict"):
                raise ValueError("a UBE model decodes with errors='replace' or 'strict', not %r" % (errors,))
            self._ube = UbeStreamDecoder(errors)
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
        if self._ube is None:
            return self._utf8.decode(self._enc.decode_bytes(tokens), final=False)
        out = []
        for t in tokens:
            if t in self._enc._special_token_values:
                out.append(self._ube.special())
                out.append(self._enc._backend.token_bytes(self._enc._handle, t).decode("utf-8"))
            else:
                out.append(self._ube.add(self._enc.token_symbols(t)))
        return "".join(out)

    def flush(self):
        """The end of the stream: an incomplete character left over decodes as U+FFFD (or
        raises under errors="strict"). The decoder may be fed on afterwards."""
        if self._dec is not None:
            return self._feed([], True)
        if self._ube is not None:
            return self._ube.flush()
        return self._utf8.decode(b"", final=True)


def _build_error(exc, ranks_file, special_tokens):
    """The core's report on a rank file, merge rules or special tokens, said in the caller's terms:
    the rank file and its line, or the special token (the core numbers the lines of the special
    tokens it is given, which are the tokens in order of id)."""
    if exc.name != "ST_ERR_MALFORMED_MODEL":
        return exc
    detail = exc.message
    if exc.input == 1 and exc.line:
        items = sorted(special_tokens.items(), key=lambda kv: kv[1])
        if exc.line > len(items):
            return exc
        tok, i = items[exc.line - 1]
        if re.match(r"rank \d+ is given to an earlier line too$", detail):
            others = [t for t, j in items if j == i and t != tok]
            detail = ("id %d is also the id of the special token %r" % (i, others[0]) if others
                      else "id %d is already the id of an ordinary token" % i)
        elif detail == "no token before the space":
            detail = "the token is empty"
        text = "special token %r (id %d): %s" % (tok, i, detail)
    elif exc.what == "rank file" and exc.line:
        text = "rank file %s, line %d: %s" % (ranks_file or "(given as bytes)", exc.line, detail)
    else:
        return exc
    new = SupertokError(exc.status, detail, exc.offset, exc.what, name=exc.name, token=exc.token, line=exc.line,
                        input=exc.input, unit=exc.unit)
    ValueError.__init__(new, "%s (%s)" % (text, exc.name))
    return new


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


def list_encoding_names():
    return ["r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]


def _load(encoding_name):
    """A new Encoding on the current backend (get_encoding caches these)."""
    if encoding_name in _DERIVED:
        base, specials = _DERIVED[encoding_name]
    elif encoding_name in _PATTERN_IDS:
        base, specials = encoding_name, None
    else:
        raise ValueError("Unknown encoding %s. supertok ships %s" % (encoding_name, ", ".join(list_encoding_names())))
    with open(os.path.join(VOCAB_DIR, base + ".json"), encoding="utf-8") as f:
        meta = json.load(f)
    image = None
    images = os.path.join(VOCAB_DIR, "images.json")
    if os.path.exists(images):
        with open(images, encoding="utf-8") as f:
            entry = json.load(f).get(encoding_name)
        if entry:
            image = (os.path.join(VOCAB_DIR, encoding_name + ".stimg.xz"), entry["sha256"])
    enc = Encoding(encoding_name, pat_str=meta["pat_str"], ranks_file=os.path.join(VOCAB_DIR, base + ".tiktoken"),
                   special_tokens=specials if specials is not None else meta["special_tokens"],
                   pattern_id=_PATTERN_IDS[base], sha256=meta["sha256"], image=image)
    enc._pickle_name = encoding_name  # shipped: pickled by name
    return enc


_ALPHABETS = {"bytes": 0, "ube": 1}
_UBE_STRICT = 2  # ST_UBE_STRICT
_PATTERN_BASE = {"gpt2": "r50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}
MODEL_FORMAT = "supertok-merges"


def load_model(model):
    """An Encoding from a model file: a path, its bytes, or a parsed JSON dict.

    The model file format (docs/model-format.md) is text starting "supertok-model 1"; the core
    parses and validates it (errors: ModelError naming the line and the field). The JSON models
    of merge rules convert to it first (_model_format.json_to_text):

    {"format": "supertok-merges", "version": 1, "name": str, "alphabet": "bytes" | "ube",
     "pattern": "gpt2" | "cl100k" | "o200k", "merges": [[left, right], ...],
     "special_tokens": {text: id}}

    Ids 0..A-1 are the base symbols (A = 256 bytes, or 512 UBE symbols); rule i joins two
    earlier ids into id A + i. A pair merges only when it is a rule, lowest rule first
    (docs/design.md §7). Errors name the file and the field."""
    from ._model_format import ModelError, ModelFormatError, is_text_model, json_to_text
    where, data = "model", None
    if isinstance(model, (bytes, bytearray)):
        data = bytes(model)
    elif not isinstance(model, dict):
        where = str(model)
        with open(model, "rb") as f:
            data = f.read()
    from_json = data is None or not is_text_model(data)
    if data is not None and from_json:
        try:
            model = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError("%s: not JSON (%s)" % (where, exc)) from None
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
    pattern_base = {1: "r50k_base", 2: "cl100k_base", 3: "o200k_base"}[meta["pattern"]]
    with open(os.path.join(VOCAB_DIR, pattern_base + ".json"), encoding="utf-8") as f:
        pat_str = json.load(f)["pat_str"]
    enc = Encoding(meta["name"], pat_str=pat_str, special_tokens=specials, pattern_id=meta["pattern"],
                   alphabet="ube" if meta["alphabet"] == 1 else "bytes", handle=handle)
    enc._model_data = data  # pickled by its model text
    return enc


def get_encoding(encoding_name):
    """The encoding on the current backend, loaded once per backend and name."""
    key = (encoding_name, id(_current_backend()))
    with _lock:
        enc = _cache.get(key)
        if enc is None:
            enc = _cache[key] = _load(encoding_name)
        return enc


def encoding_name_for_model(model_name):
    name = _models.MODEL_TO_ENCODING.get(model_name)
    if name is None:
        for prefix, enc in _models.MODEL_PREFIX_TO_ENCODING.items():
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
