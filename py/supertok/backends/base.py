"""The backend protocol: every operation a backend offers, the same on every backend.

A backend is a thin shell over the C core's calls (docs/design.md §3, §9): it converts Python bytes and
lists to the core's buffers, manages handles, and raises Python exceptions from the core's
status (through _status.raise_for_status, which maps status names, in one place). It holds no
rule of its own. It is two protocols: EncodingBackend (what supertok.Encoding calls) and
TrainingBackend (what supertok.train calls). c_api.CoreBackend implements both over a runtime
(cffi, wasmtime, pywasm); a new backend (numba) implements them and the tests hold it to the
others through the vectors.

Handles (pre-tokenizers, encodings, UBE stream states) are opaque objects owned by Python:
dropping the last reference frees what the core allocated for them.

Errors every method may raise: SupertokError (a core status, with .name, .offset and .what),
MemoryError, and the documented exceptions below; the messages are the core's st_status_str.
"""
import abc
import collections
import itertools
import operator
import os
import threading
import weakref

#: the widest values of the core's integer types that are the same on every backend
U32_MAX = (1 << 32) - 1
U64_MAX = (1 << 64) - 1
#: the core's size_t: 64 bits natively, 32 in the wasm32 module
SIZE_MAX_NATIVE = U64_MAX
SIZE_MAX_WASM32 = U32_MAX


def check_int(name, value, minimum=0, maximum=U64_MAX, ctype="uint64_t"):
    """The one check of an integer on its way into the core: an int (bool is refused; a numpy
    integer is taken by its __index__) from minimum to maximum, else TypeError / ValueError naming
    the parameter and its range. Every entry point that hands the core an integer a caller chose
    (train, the CLI, the backends' calls) goes through here, so no value is ever wrapped or
    truncated to the C type on one backend and refused on another."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            if isinstance(value, bool) or isinstance(value, float):
                raise TypeError
            value = operator.index(value)
        except TypeError:
            raise TypeError("%s must be an int, not %s" % (name, type(value).__name__)) from None
    if value < minimum:
        raise ValueError("%s must be at least %d, not %d" % (name, minimum, value))
    if value > maximum:
        if maximum == (1 << maximum.bit_length()) - 1:
            bound = "%d (2**%d - 1, the largest %s the core takes)" % (maximum, maximum.bit_length(), ctype)
        else:
            bound = "%d" % maximum
        raise ValueError("%s must be at most %s, not %d" % (name, bound, value))
    return value


def joined_with_ends(texts):
    """texts (bytes) as one buffer and the end offset of each, the (texts, ends[], n) form the core's
    list-taking calls use (st_counter_add_documents, st_trainer_set_specials, write_model)."""
    return b"".join(texts), list(itertools.accumulate(len(t) for t in texts))


#: the fields of st_cache_info, in order
CACHE_INFO_FIELDS = ("limit", "bytes", "hits", "misses", "max_piece", "span_hits", "span_misses")

#: the sections st_model_pairs lists (docs/formats/model-format.md)
PAIR_SECTIONS = ("merges", "supermerges")


def pair_triples(flat, counts):
    """[(left, right, count), ...] from the core's flat pair array [l0, r0, l1, r1, ...] and its
    counts (None when the section has no counts: every count is then None); what
    st_trainer_merges, st_trainer_supermerges and st_model_pairs give, on every backend."""
    if counts is None:
        counts = itertools.repeat(None)
    return list(zip(flat[0::2], flat[1::2], counts))


def check_section(section):
    """section as the bytes st_model_pairs takes (a C string: the caller ends it with NUL where the
    host does not); ValueError for another name."""
    if section not in PAIR_SECTIONS:
        raise ValueError("section must be one of %s, not %r" % (", ".join(PAIR_SECTIONS), section))
    return section.encode("ascii")


class _CoreHost(abc.ABC):
    """What both protocols share: the backend's name and properties, and the checks of integers
    on their way into the core. Safe to share between threads."""

    #: "native", "wasmtime" or "pywasm"
    name = None
    #: True where loading a prebuilt vocabulary image is far cheaper than parsing a rank file
    prefers_image = False
    #: True where calls from several threads run at once (the native core releases the GIL);
    #: False where they take turns (a wasm instance runs one call at a time)
    parallel = False
    #: True where a memoryview of the str's cached UTF-8 may stand for a text's bytes (the native
    #: core reads it in place); False where the bytes are copied anyway
    takes_views = False
    #: the largest value of the core's size_t on this backend
    size_max = SIZE_MAX_NATIVE

    def _u64(self, name, value, minimum=0):
        """value for a uint64_t parameter of the core (check_int)."""
        return check_int(name, value, minimum, U64_MAX, "uint64_t")

    def _size(self, name, value, minimum=0):
        """value for a size_t parameter of the core on this backend (check_int)."""
        return check_int(name, value, minimum, self.size_max, "size_t")

    # -- shared by implementations -----------------------------------------------------------
    def _raise(self, status, offset=None, what="", items=None):
        """raise_for_status with this backend's messages (looked up only when needed). Call
        it outside any lock the backend holds: status_str may take it."""
        from .._status import raise_for_status
        raise_for_status(status, self.status_str, offset, what, items)


class EncodingBackend(_CoreHost):
    """What an Encoding needs: library information, pre-tokenizers, encodings (load, encode,
    cut, decode), streaming decoders and UBE. supertok.Encoding and supertok.ube call nothing
    outside it."""

    # -- library information --------------------------------------------------------------
    @abc.abstractmethod
    def version(self):
        """The core's version string (st_version_str)."""

    @abc.abstractmethod
    def unicode_version(self):
        """The Unicode version of the core's property tables."""

    @abc.abstractmethod
    def status_str(self, status):
        """The core's message for a status number (st_status_str; "unknown status" if none)."""

    @abc.abstractmethod
    def status_name(self, status):
        """The status's name in the header ("ST_ERR_INVALID_UTF8", st_status_name)."""

    @abc.abstractmethod
    def script_names(self):
        """Script names by id (0 Unknown, 1 Common, 2 Inherited, ...)."""

    @abc.abstractmethod
    def script_of(self, cp):
        """The script id of code point cp (negative for a value that is no code point)."""

    # -- pre-tokenizers ----------------------------------------------------------------------
    @abc.abstractmethod
    def pattern_from_regex(self, pat):
        """The pattern id of tiktoken's pat_str pat (bytes; st_pattern_from_regex).
        SupertokError ST_ERR_UNSUPPORTED_PATTERN for a regex no scanner implements."""

    @abc.abstractmethod
    def pretokenizer(self, pattern, flags, scripts):
        """A handle for (pattern id, flags, comma-separated script names as bytes or None),
        cached per key (a bounded cache: see HandleCache). SupertokError naming
        "pre-tokenizer options" (ST_ERR_UNKNOWN_SCRIPT: offset of the bad name in scripts)."""

    @abc.abstractmethod
    def pretokenize_ends(self, handle, data, codepoints):
        """End offsets of the pieces of UTF-8 bytes data: code point offsets if codepoints,
        else byte offsets. SupertokError ("text") on invalid UTF-8, offset = its byte."""

    @abc.abstractmethod
    def pretokenize_join(self, handle, data, sep):
        """data with the byte sep written after every piece (st_pretokenize_join), as bytes."""

    @abc.abstractmethod
    def pretokenize_count(self, handle, data):
        """The number of pieces of data, counted in the core."""

    @abc.abstractmethod
    def utf8_validate(self, data):
        """None if data is valid UTF-8, else the byte offset of the first bad sequence."""

    # -- encodings ---------------------------------------------------------------------------
    @abc.abstractmethod
    def encoding_new(self, ranks, specials, pattern, flags=0, scripts=None):
        """An encoding handle from a tiktoken rank file (bytes), special tokens ("base64 id"
        lines, bytes) and a pre-tokenizer (pattern id, flags, scripts as in pretokenizer).
        SupertokError naming "rank file" or "special tokens" (ST_ERR_MALFORMED_MODEL: offset =
        the bad line's byte offset, line = its number)."""

    @abc.abstractmethod
    def encoding_new_merges(self, alphabet, merges, specials, pattern, flags=0, scripts=None):
        """An encoding handle from merge rules: alphabet 0 bytes / 1 UBE, merges flat
        [left0, right0, left1, right1, ...]. SupertokError naming "merge rules" (offset = the
        bad rule's index) or "special tokens"."""

    @abc.abstractmethod
    def encoding_new_model(self, data):
        """(handle, meta) from a model file's text (bytes; docs/formats/model-format.md), parsed and
        validated by the core. meta: name, kind ("rules"/"ranks"), alphabet (0/1), pattern (id),
        flags, scripts (bytes or None), supermerges ([(left, right, count or None), ...] from
        st_model_pairs). ModelError (what "model") naming the line and field."""

    @abc.abstractmethod
    def encoding_new_tokenizer_json(self, data):
        """(handle, meta) from a HuggingFace tokenizer.json's bytes, read and checked by the core
        (st_encoding_new_tokenizer_json). meta: pattern (id), added ({id: ST_ADDED_* flags} of its
        added tokens). ModelError (what "tokenizer.json") naming the field and its byte offset."""

    @abc.abstractmethod
    def model_pairs(self, data, section):
        """[(left id, right id, count or None), ...] of the "merges" or "supermerges" section of a
        model file's text (bytes; st_model_parse + st_model_pairs): [] for a section the model
        does not have or a ranks model. ModelError (what "model") for a file that does not parse."""

    @abc.abstractmethod
    def model_normalize(self, data):
        """The canonical text of a model file (st_model_parse + st_model_write)."""

    @abc.abstractmethod
    def model_write_rules(self, name, alphabet, pattern, merges, specials, comments):
        """A model file of merge rules in canonical text (bytes; st_model_write_rules): name (bytes),
        alphabet (0 bytes / 1 UBE), pattern (id), merges flat [left0, right0, ...] (uint32), specials
        [(UTF-8 text, id), ...] (ids uint32), comments [UTF-8 bytes, ...]. SupertokError (what
        "model fields") for a field the core refuses: .input 1 the name, 2 the specials, 3 the
        merges, 4 the comments (.offset the comment's index)."""

    @abc.abstractmethod
    def encoding_export(self, enc, format):
        """The encoding in another library's format (bytes; st_encoding_export): format 1 a tiktoken
        rank file, 2 a HuggingFace tokenizer.json. SupertokError (what "export") when the format
        cannot express the encoding: .kind says why (ST_KIND_EXPORT_*)."""

    @abc.abstractmethod
    def duplicate_tokens(self, enc):
        """[(id, lowest id with the same bytes), ...] of the ordinary tokens an export leaves out
        (st_encoding_duplicate_tokens)."""

    @abc.abstractmethod
    def encoding_from_image(self, image):
        """An encoding handle from a vocabulary image (bytes; the backend keeps its copy alive
        and frees it after the encoding). SupertokError naming "vocabulary image"."""

    @abc.abstractmethod
    def encoding_free(self, enc):
        """Free the encoding (and its image) now rather than when the handle is collected.
        Idempotent; the handle must not be used afterwards."""

    @abc.abstractmethod
    def save_image(self, enc):
        """The vocabulary image of a tiktoken encoding, as bytes (SupertokError otherwise)."""

    @abc.abstractmethod
    def save_compact(self, enc):
        """The compact vocabulary of a tiktoken encoding (st_encoding_save_compact; what the
        JavaScript module downloads), as bytes (SupertokError otherwise)."""

    @abc.abstractmethod
    def alphabet(self, enc):
        """0 for a byte alphabet, 1 for UBE."""

    @abc.abstractmethod
    def prepare(self, enc):
        """Build the backtracking encoder's tables now. True when ready, False when this
        encoding never uses them; MemoryError if the core ran out of memory."""

    @abc.abstractmethod
    def set_cache_size(self, enc, size):
        """Bound the encoding's piece cache to size bytes, 0 = off (st_encoding_set_cache_size;
        a size past what the core's size_t holds is clamped to its largest)."""

    @abc.abstractmethod
    def cache_info(self, enc):
        """The caches' figures (st_encoding_cache_info) as a dict: limit, bytes, hits,
        misses, max_piece, span_hits, span_misses."""

    @abc.abstractmethod
    def n_vocab(self, enc):
        """One more than the largest id."""

    @abc.abstractmethod
    def special_ids(self, enc):
        """The ids of the special tokens, in the core's order."""

    @abc.abstractmethod
    def shared_special_ids(self, enc):
        """The special ids that are an ordinary token's too (st_token_is_ordinary)."""

    # The special-token policy of the encode calls is the core's (st_special_policy of strings,
    # ST_SPECIAL_BY_TEXT): allowed (the strings recognised as specials, UTF-8 bytes), disallowed
    # (the strings refused, special tokens or not) and special_flags (ST_SPECIAL_ALLOW_ALL = 1,
    # ST_SPECIAL_DISALLOW_REST = 2: tiktoken's "all"); the core resolves the strings against the
    # encoding. A text holding a disallowed string raises SupertokError ST_ERR_DISALLOWED_SPECIAL
    # (kind ST_KIND_DISALLOWED_SPECIAL) with its byte offset, .length and .token (0xFFFFFFFF for a
    # string that is no special token).
    @abc.abstractmethod
    def encode(self, enc, data, allowed, want_starts=False, disallowed=(), special_flags=0):
        """Ids of UTF-8 bytes data under the special-token policy. With want_starts, (ids,
        code point offset where each token starts)."""

    @abc.abstractmethod
    def encode_piece(self, enc, data):
        """Ids of the bytes data (any bytes) merged as one piece: no pre-tokenizer, no special
        tokens (st_encode_piece). SupertokError ("piece") ST_ERR_NOT_ENCODABLE for a byte that is
        no token."""

    @abc.abstractmethod
    def encode_with_unstable(self, enc, data, allowed, disallowed=(), special_flags=0):
        """(stable ids, set of completion tuples) of UTF-8 bytes data under the special-token
        policy (st_unstable_new and its calls): the completions come from the core a batch at
        a time, so the module never holds them all."""

    @abc.abstractmethod
    def encode_many(self, enc, datas, allowed, disallowed=(), special_flags=0):
        """[ids of datas[0], ids of datas[1], ...] in one core call (native: without the GIL;
        wasm: one call into the module, the runtime having one thread)."""

    @abc.abstractmethod
    def encode_count(self, enc, data, allowed, disallowed=(), special_flags=0):
        """len(encode(enc, data, allowed, ...)), counted in the core with no list built."""

    @abc.abstractmethod
    def cut(self, enc, data, frm):
        """st_encoding_cut: the first offset >= frm (and > 0) where the UTF-8 text data may be cut
        so that the ids of the parts, joined, are the whole text's; len(data) if none."""

    @abc.abstractmethod
    def decode_bytes(self, enc, ids):
        """The bytes of the ids concatenated. KeyError("Invalid token for decoding: <id>") for
        an id that is no token; OverflowError for an id outside uint32 (tiktoken's errors)."""

    @abc.abstractmethod
    def decode_text(self, enc, ids, flags):
        """UTF-8 bytes of the text of ids through the UBE decoder (flags: ST_UBE_STRICT = 2).
        KeyError as decode_bytes; UbeDecodeError (strict) naming the id where the malformed
        run starts."""

    @abc.abstractmethod
    def token_bytes(self, enc, token):
        """The bytes of one token (a UBE token: its symbols, 2 bytes each). KeyError(str(token))
        for an id that is no token; OverflowError outside uint32."""

    @abc.abstractmethod
    def token_id(self, enc, data):
        """The id of the ordinary or special token whose bytes are exactly data, or None."""

    @abc.abstractmethod
    def token_symbols(self, enc, token):
        """The base symbols of an ordinary token. KeyError(str(token)) for a special token or
        an id that is no token; OverflowError outside uint32."""

    @abc.abstractmethod
    def cuts(self, enc, data, n_parts):
        """Ascending byte offsets that cut data into at most n_parts parts of about equal size,
        each where the core proves the parts' ids join to the whole's (st_encoding_cut); []
        if none."""

    @abc.abstractmethod
    def encode_parts(self, enc, data, cuts, allowed, disallowed=(), special_flags=0, count=False, pool=None,
                     want_starts=False):
        """encode() (encode_count() with count) of data cut at cuts, the parts after the first on
        pool (a concurrent.futures executor); None if a part fails (the caller then encodes the
        whole text, which raises its error)."""

    @abc.abstractmethod
    def encode_many_raw(self, enc, datas, allowed, disallowed=(), special_flags=0):
        """encode_many's results before the lists are made (what lists_of takes): a thread may
        run it without building Python lists while others encode."""

    @abc.abstractmethod
    def lists_of(self, raw):
        """The list of ids per text of encode_many_raw's result."""

    # -- streaming decoding (decoder.c) -----------------------------------------------------
    @abc.abstractmethod
    def decoder_new(self, enc, strict):
        """A streaming id decoder over enc (st_decoder_new; freed with the handle, which keeps
        enc alive); strict: malformed text raises instead of becoming U+FFFD."""

    @abc.abstractmethod
    def decoder_feed(self, dec, ids, final=False):
        """UTF-8 bytes completed by ids; final ends the stream. On an error the decoder is as
        before the call: SupertokError (what "decoder ids") ST_ERR_INVALID_TOKEN or
        ST_ERR_INVALID_UTF8 with offset = the id's index in the stream and .token;
        OverflowError for an id outside uint32."""

    @abc.abstractmethod
    def decoder_reset(self, dec):
        """Back to a fresh stream."""

    @abc.abstractmethod
    def decode_with_offsets(self, enc, ids):
        """(UTF-8 bytes, code point offset where each token starts) of a byte-level encoding
        (st_decode_with_offsets). SupertokError (what "decoder ids") naming the id's index;
        OverflowError for an id outside uint32."""

    # -- normalization -----------------------------------------------------------------------
    @abc.abstractmethod
    def normalize_nfc(self, data):
        """(NFC of UTF-8 bytes data, HuggingFace tokenizers' NFC, as UTF-8 bytes; for each output
        byte the byte offset in data of the start of the character it came from) by
        st_normalize_nfc. SupertokError for invalid UTF-8."""

    # -- UBE ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def ube_encode_symbols(self, data):
        """The routed UBE symbol stream of UTF-8 bytes data."""

    @abc.abstractmethod
    def ube_stream_new(self):
        """A fresh UBE stream-decoder state (freed with the handle)."""

    @abc.abstractmethod
    def ube_stream_feed(self, state, symbols, flags):
        """UTF-8 bytes of the characters completed by feeding symbols (flags: ST_UBE_FINAL = 1,
        ST_UBE_STRICT = 2). UbeDecodeError (strict) naming the symbol index; the state is
        unchanged unless the call succeeds."""


class TrainingBackend(_CoreHost):
    """What supertok.train needs: pretoken counters, trainers stepped to the end, the written
    model."""

    # -- training (docs/design.md §8; supertok.h "Training") ---------------------------------
    # Counters and trainers are owned by the caller and freed deterministically: counter_free /
    # trainer_free free at once (idempotent); a handle dropped without them is freed by its
    # finalizer. A counter is used by one thread at a time (natively without the GIL: each thread
    # feeds its own counter); a trainer likewise.
    @abc.abstractmethod
    def counter_new(self, pattern, flags, scripts):
        """A new pretoken counter with the pre-tokenizer (pattern id, flags, scripts as in
        pretokenizer). SupertokError naming "pre-tokenizer options" (an unknown script)."""

    @abc.abstractmethod
    def counter_free(self, counter):
        """Free the counter now (idempotent; the handle must not be used afterwards)."""

    @abc.abstractmethod
    def counter_add(self, counter, data, flags):
        """Count the pretokens of UTF-8 bytes data: one document, or one per line with flags
        ST_COUNT_LINES = 1 (each line ending after its '\\n'). SupertokError ("text")
        ST_ERR_INVALID_UTF8 with offset = the byte offset in data and line = the 1-based line
        (ST_COUNT_LINES); nothing of the call is counted then."""

    @abc.abstractmethod
    def counter_add_documents(self, counter, datas):
        """Count the documents datas (a list of UTF-8 bytes) in one call. SupertokError
        ("documents") ST_ERR_INVALID_UTF8 with input = the index of the bad document and offset
        the byte offset inside it; nothing of the call is counted then."""

    @abc.abstractmethod
    def counter_add_pretoken(self, counter, data, count):
        """Add count (a uint64) occurrences of the one pretoken data (UTF-8 bytes, not split)."""

    @abc.abstractmethod
    def counter_merge(self, into, frm):
        """into += frm (frm unchanged). SupertokError ST_ERR_INVALID_ARGUMENT for counters with
        different pre-tokenizers."""

    @abc.abstractmethod
    def counter_prune(self, counter, min_count):
        """Drop the pretokens counted fewer than min_count (a uint64) times (st_counter_prune)."""

    @abc.abstractmethod
    def counter_token_counts(self, counter, enc):
        """How often each id of enc occurs in the counted text, a list of n_vocab ints
        (st_counter_token_counts)."""

    @abc.abstractmethod
    def counter_stat(self, counter, what):
        """A statistic (ST_COUNTER_DOCUMENTS 0, _BYTES 1, _PRETOKENS 2, _UNIQUE 3, _KIND 4) as an int."""

    @abc.abstractmethod
    def counter_save(self, counter):
        """The counts as bytes (docs/formats/train-format.md)."""

    @abc.abstractmethod
    def counter_load(self, counter, data):
        """Add saved counts (bytes) into counter. SupertokError ("counts") ST_ERR_MALFORMED_MODEL
        with the byte offset, or ST_ERR_INVALID_ARGUMENT for another pre-tokenizer."""

    @abc.abstractmethod
    def trainer_new(self, counter, mode, alphabet, vocab_size, min_frequency, n_specials):
        """A phase-1 BPE trainer over a copy of the counter's counts (mode ST_TRAIN_PAPER 0 /
        ST_TRAIN_HF 1, alphabet ST_ALPHABET_*). SupertokError ("training options")
        ST_ERR_INVALID_ARGUMENT with the core's message for options it refuses."""

    @abc.abstractmethod
    def trainer_set_vocab_size(self, trainer, vocab_size):
        """Change a phase-1 BPE trainer's vocabulary size (st_trainer_set_vocab_size): a sweep."""

    @abc.abstractmethod
    def trainer_set_specials(self, trainer, specials):
        """The special tokens' texts (a list of UTF-8 bytes, as many as the trainer's n_specials),
        once, before the first step: in hf mode a special whose text is a token's byte-level string
        takes that token's place, as in HuggingFace's trainer (st_trainer_set_specials)."""

    @abc.abstractmethod
    def trainer_free(self, trainer):
        """Free the trainer now (idempotent)."""

    @abc.abstractmethod
    def trainer_step(self, trainer, max_merges):
        """One step (st_trainer_step): up to max_merges more merges, the number made (fewer: the
        phase ended; trainer_stat ST_TRAINER_STATE says what comes next); in ST_TRAINING_CANDIDATES
        it closes the pass over the texts and makes none."""

    @abc.abstractmethod
    def trainer_stat(self, trainer, what):
        """A statistic (ST_TRAINER_ALPHABET 0, _TARGET 1, _MERGES 2, _DONE 3, _WORDS 4, and for
        superwords _PHASE 5, _SUPERMERGES 6, _REGULAR 7, _CANDIDATES 8, _NGRAM_CMIN 9, _STEPS 10,
        ..., _STATE 18, _PASS_DOCUMENTS 19, _PASS_BYTES 20)."""

    @abc.abstractmethod
    def trainer_merges(self, trainer):
        """The merges so far: [(left id, right id, count), ...] in order."""

    # -- superwords: phase 2 (supertok.h "Superwords: phase 2") --------------------------------
    # The trainer says what it does next (trainer_stat ST_TRAINER_STATE 18: ST_TRAINING_MERGES 1,
    # _CANDIDATES 2, _SUPERMERGES 3, _DONE 4); in ST_TRAINING_CANDIDATES it wants the texts again,
    # through candidates counters it gives out and takes back, and the next trainer_step closes
    # that pass (the n-gram split, the start of phase 2). Calls out of that order are SupertokError
    # ST_ERR_INVALID_ARGUMENT with kind ST_KIND_OUT_OF_ORDER.
    @abc.abstractmethod
    def trainer_set_superwords(self, trainer, algorithm, supermerges, flags):
        """The algorithm (ST_ALGORITHM_BPE 0 / _BOUNDLESS 1 / _SUPERBPE 2), SuperBPE's s (a uint64;
        0 with the others) and flags (ST_SUPERWORDS_NGRAM_SPLIT 1), once, before the first step
        (st_trainer_set_superwords). SupertokError ("superwords") ST_ERR_INVALID_ARGUMENT with the
        core's message for options it refuses (hf mode, s above the target)."""

    @abc.abstractmethod
    def trainer_set_seed_merges(self, trainer, pairs, base_name, max_words, flags, min_count):
        """Seed merges of an extension (st_trainer_set_seed_merges): pairs a flat list of ids
        (left, right, ...), base_name bytes, max_words (0: no cap), flags (ST_EXTEND_COLON_SPACE 1)
        and min_count (recorded); once, before the first step. SupertokError ("training options")
        with the core's message for what it refuses."""

    @abc.abstractmethod
    def trainer_candidates_new(self, trainer):
        """A candidates counter for the pass over the texts (st_trainer_candidates_new; one per
        thread; counter_add, counter_add_documents, counter_stat and counter_free apply to it)."""

    @abc.abstractmethod
    def trainer_candidates_add(self, trainer, candidates):
        """Give a candidates counter back: its counts move to the trainer's pass
        (st_trainer_candidates_add), leaving it empty; it takes nothing more, and the caller
        still frees it."""

    @abc.abstractmethod
    def trainer_candidates_spec(self, trainer):
        """What a candidates counter needs, as bytes (st_trainer_candidates_spec; state
        ST_TRAINING_CANDIDATES): another process or machine makes the same counter from them with
        candidates_new, without the trainer (supertok.dask's candidates pass)."""

    @abc.abstractmethod
    def candidates_new(self, spec):
        """A candidates counter from a spec (st_candidates_new): the counter trainer_candidates_new
        gives, so its saved counts load into one of those. SupertokError ("candidates spec")
        ST_ERR_MALFORMED_MODEL, with the byte offset, for a malformed spec."""

    @abc.abstractmethod
    def trainer_supermerges(self, trainer):
        """The supermerges so far: [(left id, right id, count), ...], ids as in the written model."""

    @abc.abstractmethod
    def trainer_write_model(self, trainer, name, specials):
        """The trained model file (bytes; docs/formats/model-format.md): name (ASCII bytes) and the
        special tokens (a list of UTF-8 bytes), which take the ids after the merges."""


class Backend(EncodingBackend, TrainingBackend):
    """Both protocols: every backend implements them together (the host layer c_api.CoreBackend
    over a runtime)."""


# ---- fork -------------------------------------------------------------------------------------
# A child made by os.fork() has only the thread that forked; a lock another thread held at that
# moment would stay held in the child forever. Objects with locks register here: before the fork
# each may take its lock (so no call is half done in the child's copy), and after it the child
# gets new locks. The registry holds them weakly.

_at_fork = weakref.WeakSet()


def register_fork_state(obj):
    """obj has _fork_before(), _fork_after_parent() and _fork_after_child(), called around every
    os.fork() while obj lives."""
    _at_fork.add(obj)
    return obj


_held = []  # the objects whose _fork_before ran for the fork under way


def _fork_before():
    for obj in list(_at_fork):
        obj._fork_before()
        _held.append(obj)


def _fork_after(child):
    held = list(_held)
    del _held[:]
    for obj in list(_at_fork) if child else held:
        if child:
            obj._fork_after_child()
        else:
            obj._fork_after_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_fork_before, after_in_parent=lambda: _fork_after(False),
                        after_in_child=lambda: _fork_after(True))


class HandleCache:
    """A small thread-safe LRU cache of handles by key. Evicting an entry only drops the
    cache's reference: a caller still holding the handle keeps it alive, and the handle's own
    finalizer frees it when the last reference goes."""

    def __init__(self, size=64):
        self._size = size
        self._items = collections.OrderedDict()
        self._lock = threading.Lock()
        register_fork_state(self)

    # held only for a few dict operations, all under the GIL: the child just gets a new lock
    def _fork_before(self):
        pass

    def _fork_after_parent(self):
        pass

    def _fork_after_child(self):
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            h = self._items.get(key)
            if h is not None:
                self._items.move_to_end(key)
            return h

    def put(self, key, handle):
        with self._lock:
            self._items[key] = handle
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return handle

    def __len__(self):
        return len(self._items)
