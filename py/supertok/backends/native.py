"""The native backend: the C core compiled into the cffi extension supertok._native."""
import weakref

from . import BackendUnavailable, id_list, id_lists
from .._status import BUFFER_TOO_SMALL, INVALID_ARGUMENT, OK, raise_error, raise_for_status
from .base import CACHE_INFO_FIELDS, Backend, HandleCache, check_int, check_section, joined_with_ends, pair_triples

try:
    from .._native import ffi, lib
except ImportError as exc:  # not built (no C compiler at install time) or not importable
    ffi = lib = None
    _why = str(exc)




class NativeBackend(Backend):
    name = "native"
    prefers_image = False
    parallel = True  # the core runs without the GIL

    def __init__(self):
        if lib is None:
            raise BackendUnavailable("the native extension supertok._native is not built (%s)" % _why)
        self._alloc = ffi.new_allocator(should_clear_after_alloc=False)
        self._pretokenizers = HandleCache()
        self._images = weakref.WeakKeyDictionary()

    def version(self):
        return ffi.string(lib.st_version_str()).decode()

    def unicode_version(self):
        return ffi.string(lib.st_unicode_version()).decode()

    def status_str(self, status):
        return ffi.string(lib.st_status_str(status)).decode()

    def status_name(self, status):
        """The status's name in the header ("ST_ERR_INVALID_UTF8"): the Python layer maps names."""
        p = lib.st_status_name(status)
        return ffi.string(p).decode() if p != ffi.NULL else "ST_ERR_%d" % status

    def script_names(self):
        return [ffi.string(lib.st_script_name(i)).decode() for i in range(lib.st_script_count())]

    def script_of(self, cp):
        return lib.st_script_of(cp)

    def _fail(self, status, offset, what, items=None):
        raise_for_status(status, self.status_str, offset, what, items)

    def _raise(self, err, what, items=None):
        """The exception for a failed call, from its st_error report (_status.raise_error)."""
        e = err[0]
        raise_error((e.status, e.unit, e.offset, e.line, e.token, e.input, e.kind, e.length, ffi.string(e.message)),
                    self.status_str, what, items)

    _flag_policies = {}
    _string_policies = {}  # (allowed, disallowed, flags) -> (policy, what it points to)

    @classmethod
    def _policy(cls, allowed, disallowed, flags):
        """An st_special_policy of strings (ST_SPECIAL_BY_TEXT; the arrays it points to kept
        alive with it), or NULL. A policy of flags alone (tiktoken's default: every special
        disallowed) is made once and shared: the core only reads it, and a short text must not
        pay for building it."""
        if not allowed and not disallowed:
            if not flags:
                return ffi.NULL, None
            p = cls._flag_policies.get(flags)
            if p is None:
                p = cls._flag_policies[flags] = ffi.new("st_special_policy *", {"flags": flags})
            return p, None
        key = (tuple(allowed or ()), tuple(disallowed or ()), flags)
        got = cls._string_policies.get(key)
        if got is not None:
            return got
        strings, ends = joined_with_ends(key[0] + key[1])
        ends = ffi.new("size_t[]", ends)
        buf = ffi.new("char[]", strings) if strings else ffi.NULL
        p = ffi.new("st_special_policy *", {"n_allowed": len(key[0]), "n_disallowed": len(key[1]),
                                            "flags": flags | lib.ST_SPECIAL_BY_TEXT, "strings": buf, "ends": ends})
        if len(cls._string_policies) >= 64:  # a few sets recur; any number may be passed
            cls._string_policies.clear()
        got = cls._string_policies[key] = (p, (buf, ends))
        return got

    def pattern_from_regex(self, pat):
        """The st_pattern id of tiktoken's pat_str pat (bytes); SupertokError
        ST_ERR_UNSUPPORTED_PATTERN for any other regex."""
        out = ffi.new("int *")
        err = ffi.new("st_error *")
        if lib.st_pattern_from_regex(pat, len(pat), out, err) != OK:
            self._raise(err, "pat_str")
        return out[0]

    def pretokenizer(self, pattern, flags, scripts):
        """A cached handle for (pattern id, flags, scripts as bytes or None)."""
        key = (pattern, flags, scripts)
        h = self._pretokenizers.get(key)
        if h is None:
            out = ffi.new("st_pretokenizer **")
            err = ffi.new("st_error *")
            sc = ffi.NULL if scripts is None else scripts
            st = lib.st_pretokenizer_new(pattern, flags, sc, 0 if scripts is None else len(scripts),
                                         ffi.NULL, out, err)
            if st != OK:
                self._raise(err, "pre-tokenizer options")
            h = ffi.gc(out[0], lib.st_pretokenizer_free)
            self._pretokenizers.put(key, h)
        return h

    def pretokenize_ends(self, handle, data, codepoints):
        cap = len(data)
        ends = self._alloc("size_t[]", cap or 1)
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_pretokenize(handle, data, len(data), 1 if codepoints else 0, ends, cap, n, err)
        if st != OK:
            self._raise(err, "text")
        return ffi.unpack(ends, n[0])

    def pretokenize_join(self, handle, data, sep):
        """The text with byte sep after every piece (see st_pretokenize_join)."""
        cap = 2 * len(data)
        out = self._alloc("uint8_t[]", cap or 1)
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_pretokenize_join(handle, data, len(data), sep, out, cap, n, err)
        if st != OK:
            self._raise(err, "text")
        return ffi.buffer(out, n[0])[:]

    def pretokenize_count(self, handle, data):
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_pretokenize_count(handle, data, len(data), n, err)
        if st != OK:
            self._raise(err, "text")
        return n[0]

    def utf8_validate(self, data):
        err = ffi.new("st_error *")
        st = lib.st_utf8_validate(data, len(data), err)
        return None if st == OK else err.offset

    # -- encodings --
    def encoding_new(self, ranks, specials, pattern, flags=0, scripts=None):
        """A rank-file encoding with the pre-tokenizer (pattern id, flags, scripts)."""
        pt = self.pretokenizer(pattern, flags, scripts)
        out = ffi.new("st_encoding **")
        err = ffi.new("st_error *")
        st = lib.st_encoding_new_tiktoken(ranks, len(ranks), specials, len(specials), pt, ffi.NULL, out, err)
        if st != OK:
            self._raise(err, "special tokens" if err.input == 1 else "rank file")
        return ffi.gc(out[0], lib.st_encoding_free)

    def encoding_new_merges(self, alphabet, merges, specials, pattern, flags=0, scripts=None):
        """merges: flat [left0, right0, left1, right1, ...]."""
        pt = self.pretokenizer(pattern, flags, scripts)
        arr = ffi.new("uint32_t[]", merges) if merges else ffi.NULL
        out = ffi.new("st_encoding **")
        err = ffi.new("st_error *")
        st = lib.st_encoding_new_merges(alphabet, arr, len(merges) // 2, specials, len(specials), pt, ffi.NULL,
                                        out, err)
        if st != OK:
            self._raise(err, "special tokens" if err.input == 1 else "merge rules")
        return ffi.gc(out[0], lib.st_encoding_free)

    def alphabet(self, enc):
        return lib.st_encoding_alphabet(enc)

    def prepare(self, enc):
        st = lib.st_encoding_prepare(enc)
        if st == INVALID_ARGUMENT:  # an encoding that never uses the tables
            return False
        if st != OK:
            self._fail(st, None, "prepare")
        return True

    def set_cache_size(self, enc, size):
        size = check_int("size", size, 0, 1 << 1000, "size_t")  # past size_t: clamped, as documented
        st = lib.st_encoding_set_cache_size(enc, min(size, self.size_max))
        if st != OK:
            self._fail(st, None, "cache size")

    def cache_info(self, enc):
        info = ffi.new("st_cache_info *")
        st = lib.st_encoding_cache_info(enc, info)
        if st != OK:
            self._fail(st, None, "cache info")
        return {f: getattr(info, f) for f in CACHE_INFO_FIELDS}

    def encoding_from_image(self, image):
        buf = ffi.new("uint64_t[]", (len(image) + 7) // 8)  # 8-byte aligned, kept alive below
        ffi.memmove(buf, image, len(image))
        out = ffi.new("st_encoding **")
        err = ffi.new("st_error *")
        st = lib.st_encoding_from_image(buf, len(image), ffi.NULL, out, err)
        if st != OK:
            self._raise(err, "vocabulary image")
        handle = ffi.gc(out[0], lib.st_encoding_free)
        self._images[handle] = buf  # the encoding borrows the image
        return handle

    def encoding_free(self, enc):
        ffi.release(enc)  # runs st_encoding_free now (the handle is an ffi.gc object); idempotent

    def save_image(self, enc):
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        lib.st_encoding_save_image(enc, ffi.NULL, 0, size, err)
        buf = ffi.new("uint8_t[]", size[0])
        st = lib.st_encoding_save_image(enc, buf, size[0], size, err)
        if st != OK:
            self._raise(err, "image")
        return ffi.buffer(buf, size[0])[:]

    def n_vocab(self, enc):
        return lib.st_encoding_n_vocab(enc)

    def special_ids(self, enc):
        return [lib.st_encoding_special_id(enc, i) for i in range(lib.st_encoding_n_special(enc))]

    def shared_special_ids(self, enc):
        return [i for i in self.special_ids(enc) if lib.st_token_is_ordinary(enc, i)]

    def encode(self, enc, data, allowed, want_starts=False, disallowed=(), special_flags=0):
        """Ids of UTF-8 data under the special-token policy (allowed, disallowed: the strings,
        UTF-8 bytes; ST_SPECIAL_* flags); with want_starts, also each token's start in code points."""
        cap = len(data)
        ids = self._alloc("uint32_t[]", cap or 1)
        starts = self._alloc("size_t[]", cap or 1) if want_starts else ffi.NULL
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        policy, _keep = self._policy(allowed, disallowed, special_flags)
        st = lib.st_encode(enc, data, len(data), policy, lib.ST_OFFSETS_CODEPOINTS if want_starts else 0, ids,
                           starts, cap, n, err)
        if st != OK:
            self._raise(err, "text")
        if want_starts:
            return id_list(ffi.buffer(ids, 4 * n[0]), n[0]), ffi.unpack(starts, n[0])
        return id_list(ffi.buffer(ids, 4 * n[0]), n[0])

    def encode_piece(self, enc, data):
        cap = len(data)
        ids = self._alloc("uint32_t[]", cap or 1)
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        if lib.st_encode_piece(enc, data, cap, ids, cap, n, err) != OK:
            self._raise(err, "piece")
        return id_list(ffi.buffer(ids, 4 * n[0]), n[0])

    def encode_with_unstable(self, enc, data, allowed, disallowed=(), special_flags=0):
        """A handle per call (its index of the tokens costs about a millisecond here), so that
        threads share nothing."""
        out = ffi.new("st_unstable **")
        err = ffi.new("st_error *")
        if lib.st_unstable_new(enc, ffi.NULL, out, err) != OK:
            self._raise(err, "encoding")
        u = ffi.gc(out[0], lib.st_unstable_free)
        policy, _keep = self._policy(allowed, disallowed, special_flags)
        if lib.st_unstable_encode(u, data, len(data), policy, err) != OK:
            self._raise(err, "text")
        n = ffi.new("size_t *")
        lib.st_unstable_stable(u, ffi.NULL, 0, n, ffi.NULL)
        cap = max(n[0], 1)
        ids = self._alloc("uint32_t[]", cap)
        lib.st_unstable_stable(u, ids, cap, n, ffi.NULL)
        stable = id_list(ffi.buffer(ids, 4 * n[0]), n[0])
        completions = set()
        if lib.st_unstable_length(u):
            cap = max(1 << 16, lib.st_unstable_length(u))  # one completion always fits
            ids = self._alloc("uint32_t[]", cap)
            lengths = self._alloc("uint32_t[]", 1 << 14)
            count = ffi.new("size_t *")
            while True:
                if lib.st_unstable_next(u, ids, cap, lengths, 1 << 14, n, count, err) != OK:
                    self._raise(err, "text")
                if not count[0]:
                    break
                flat = id_list(ffi.buffer(ids, 4 * n[0]), n[0])
                at = 0
                for k in ffi.unpack(lengths, count[0]):
                    completions.add(tuple(flat[at:at + k]))
                    at += k
        ffi.release(u)
        return stable, completions

    def cut(self, enc, data, frm):
        """st_encoding_cut: the first offset >= frm (and > 0) where data may be cut, or len(data)."""
        frm = self._size("from", frm)
        at = ffi.new("size_t *")
        err = ffi.new("st_error *")
        if lib.st_encoding_cut(enc, data, len(data), frm, at, err) != OK:
            self._raise(err, "text")
        return at[0]

    def cuts(self, enc, data, n_parts):
        """Ascending offsets that cut data into at most n_parts parts of about equal size, each
        where the core proves the parts' ids join to the whole's (st_encoding_cut); [] if none."""
        size, out, prev = len(data), [], 0
        at = ffi.new("size_t *")
        for k in range(1, n_parts):
            frm = max(size * k // n_parts, prev + 1)
            if frm >= size:
                break
            lib.st_encoding_cut(enc, data, size, frm, at, ffi.NULL)
            if at[0] >= size:  # none from frm to the end: none for any later part either
                break
            prev = at[0]
            out.append(prev)
        return out

    def encode_parts(self, enc, data, cuts, allowed, disallowed=(), special_flags=0, count=False, pool=None,
                     want_starts=False):
        """encode() (or encode_count() with count) of data cut at cuts (from cuts()), one core
        call per part, the parts after the first on pool (a concurrent.futures executor) while
        this thread runs the first; the core runs without the GIL, so they run in parallel. The
        ids of part k go to the shared buffer at its own byte offset (at most one id per byte)
        and are moved together at the end, so no part waits for another. None if any part fails:
        the caller encodes the whole text again, which gives the whole text's error."""
        size = len(data)
        bounds = [0] + list(cuts) + [size]
        src = ffi.from_buffer(data)
        ids = ffi.NULL if count else self._alloc("uint32_t[]", size or 1)
        starts = self._alloc("size_t[]", size or 1) if want_starts else None
        flags = lib.ST_OFFSETS_CODEPOINTS if want_starts else 0
        policy, _keep = self._policy(allowed, disallowed, special_flags)

        def run(k):
            a, b = bounds[k], bounds[k + 1]
            n = ffi.new("size_t *")
            if count:
                st = lib.st_encode_count(enc, src + a, b - a, policy, n, ffi.NULL)
            else:
                st = lib.st_encode(enc, src + a, b - a, policy, flags, ids + a,
                                   starts + a if starts is not None else ffi.NULL, b - a, n, ffi.NULL)
            return n[0] if st == OK else None

        others = range(1, len(bounds) - 1)
        later = pool.map(run, others) if pool is not None else None  # submitted now, run meanwhile
        first = run(0)
        counts = [first] + (list(later) if later is not None else [run(k) for k in others])
        if None in counts:
            return None
        if count:
            return sum(counts)
        pos = counts[0]
        for k in range(1, len(counts)):
            if bounds[k] != pos:
                ffi.memmove(ids + pos, ids + bounds[k], 4 * counts[k])
                if starts is not None:
                    ffi.memmove(starts + pos, starts + bounds[k], ffi.sizeof("size_t") * counts[k])
            pos += counts[k]
        out = id_list(ffi.buffer(ids, 4 * pos), pos)
        if starts is None:
            return out
        # each part's offsets count from its own start: add the characters before it
        at = ffi.unpack(starts, pos)
        i, chars = counts[0], 0
        for k in range(1, len(counts)):
            chars += len(data[bounds[k - 1]:bounds[k]].decode("utf-8"))
            c = counts[k]
            at[i:i + c] = [x + chars for x in at[i:i + c]]
            i += c
        return out, at

    def encode_many(self, enc, datas, allowed, disallowed=(), special_flags=0):
        """Lists of ids for several UTF-8 texts, in one call that runs without the GIL."""
        return self.lists_of(self.encode_many_raw(enc, datas, allowed, disallowed, special_flags))

    def encode_many_raw(self, enc, datas, allowed, disallowed=(), special_flags=0):
        """encode_many's core call alone: (ids, counts) as buffers, no Python list made, so a
        thread running it holds the GIL only to join the texts; lists_of makes the lists."""
        offsets = [0]
        for d in datas:
            offsets.append(offsets[-1] + len(d))
        buf = b"".join(datas)
        cap = len(buf)
        ids = self._alloc("uint32_t[]", cap or 1)
        counts = self._alloc("size_t[]", len(datas) or 1)
        offs = ffi.new("size_t[]", offsets)
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        policy, _keep = self._policy(allowed, disallowed, special_flags)
        st = lib.st_encode_many(enc, buf, offs, len(datas), policy, ids, cap, counts, n, err)
        if st != OK:
            self._raise(err, "text")
        return ffi.buffer(ids, 4 * n[0]), ffi.buffer(counts, ffi.sizeof("size_t") * len(datas))

    @staticmethod
    def lists_of(raw):
        """The lists of ids of encode_many_raw's output, one per text."""
        ids, counts = raw
        return id_lists(ids, counts, ffi.sizeof("size_t"))

    def encode_count(self, enc, data, allowed, disallowed=(), special_flags=0):
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        policy, _keep = self._policy(allowed, disallowed, special_flags)
        st = lib.st_encode_count(enc, data, len(data), policy, n, err)
        if st != OK:
            self._raise(err, "text")
        return n[0]

    def decode_bytes(self, enc, ids):
        n = len(ids)
        try:
            arr = ffi.new("uint32_t[]", ids) if n else ffi.NULL
        except OverflowError:  # ids outside u32: tiktoken's error and message
            raise OverflowError("out of range integral type conversion attempted") from None
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_decode(enc, arr, n, ffi.NULL, 0, size, err)
        if st == lib.ST_ERR_BUFFER_TOO_SMALL:  # the size query
            buf = self._alloc("uint8_t[]", size[0])
            st = lib.st_decode(enc, arr, n, buf, size[0], size, err)
            if st == OK:
                return ffi.buffer(buf, size[0])[:]
        if st == OK:
            return b""
        self._raise(err, "ids", ids)  # KeyError for an id that is no token

    def token_bytes(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        ptr = ffi.new("uint8_t **")
        size = ffi.new("size_t *")
        st = lib.st_token_bytes(enc, token, ptr, size, ffi.NULL)
        if st != OK:
            self._fail(st, None, "token", token)  # KeyError
        return ffi.buffer(ptr[0], size[0])[:]

    def token_id(self, enc, data):
        """The id of the ordinary or special token with exactly the bytes data, or None."""
        out = ffi.new("uint32_t *")
        st = lib.st_token_id(enc, data, len(data), out, ffi.NULL)
        return out[0] if st == OK else None

    def token_symbols(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        n = ffi.new("size_t *")
        st = lib.st_token_symbols(enc, token, ffi.NULL, 0, n, ffi.NULL)
        if st == lib.ST_ERR_BUFFER_TOO_SMALL:
            out = ffi.new("uint16_t[]", n[0])
            st = lib.st_token_symbols(enc, token, out, n[0], n, ffi.NULL)
            if st == OK:
                return ffi.unpack(out, n[0])
        if st == OK:
            return []
        self._fail(st, None, "token", token)  # KeyError

    def decode_text(self, enc, ids, flags):
        """UTF-8 bytes of st_decode_text; raises (KeyError, UbeDecodeError, ...) on failure."""
        n = len(ids)
        try:
            arr = ffi.new("uint32_t[]", ids) if n else ffi.NULL
        except OverflowError:
            raise OverflowError("out of range integral type conversion attempted") from None
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_decode_text(enc, arr, n, flags, ffi.NULL, 0, size, err)
        if st == lib.ST_ERR_BUFFER_TOO_SMALL:
            buf = self._alloc("uint8_t[]", size[0])
            st = lib.st_decode_text(enc, arr, n, flags, buf, size[0], size, err)
            if st == OK:
                return ffi.buffer(buf, size[0])[:]
        if st == OK:
            return b""
        self._raise(err, "ids", ids)

    # -- UBE --
    def ube_encode_symbols(self, data):
        cap = len(data)
        out = self._alloc("uint16_t[]", cap or 1)
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_ube_encode_symbols(data, len(data), out, cap, n, err)
        if st != OK:
            self._raise(err, "text")
        return ffi.unpack(out, n[0])

    def ube_stream_new(self):
        s = ffi.new("st_ube_stream *")
        lib.st_ube_stream_init(s)
        return s

    def ube_stream_feed(self, state, symbols, flags):
        """UTF-8 bytes; raises (UbeDecodeError, ...) on failure, the state then unchanged."""
        n = len(symbols)
        arr = ffi.new("uint16_t[]", symbols) if n else ffi.NULL
        cap = 3 * n + 3
        buf = self._alloc("uint8_t[]", cap)
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_ube_stream_feed(state, arr, n, flags, buf, cap, size, err)
        if st != OK:
            self._raise(err, "symbols")
        return ffi.buffer(buf, size[0])[:]

    # -- streaming decoding and decode_with_offsets (decoder.c) --
    def decoder_new(self, enc, strict):
        """A streaming decoder over enc (kept alive with it); strict: malformed text raises."""
        out = ffi.new("st_decoder **")
        err = ffi.new("st_error *")
        st = lib.st_decoder_new(enc, 2 if strict else 0, ffi.NULL, out, err)
        if st != OK:
            self._raise(err, "decoder")
        handle = ffi.gc(out[0], lib.st_decoder_free)
        self._images[handle] = enc  # the decoder borrows the encoding
        return handle

    def decoder_feed(self, dec, ids, final=False):
        """UTF-8 bytes completed by ids (a list of ints); final ends the stream. On an error
        the decoder is unchanged: SupertokError with status, offset (the id's index in the
        stream) and token; OverflowError for an id outside uint32."""
        n = len(ids)
        try:
            arr = ffi.new("uint32_t[]", ids) if n else ffi.NULL
        except OverflowError:
            raise OverflowError("out of range integral type conversion attempted") from None
        cap = 8 * n + 16
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        flags = 1 if final else 0
        buf = self._alloc("uint8_t[]", cap)
        st = lib.st_decoder_feed(dec, arr, n, flags, buf, cap, size, err)
        if st == BUFFER_TOO_SMALL:  # nothing consumed; again with the size reported
            cap = size[0]
            buf = self._alloc("uint8_t[]", cap)
            st = lib.st_decoder_feed(dec, arr, n, flags, buf, cap, size, err)
        if st != OK:
            self._raise(err, "decoder ids")
        return ffi.buffer(buf, size[0])[:]

    def decoder_reset(self, dec):
        lib.st_decoder_reset(dec)

    def decode_with_offsets(self, enc, ids):
        """(UTF-8 bytes, code point offsets) of st_decode_with_offsets; SupertokError (offset:
        the index of the id) otherwise; OverflowError for an id outside uint32."""
        n = len(ids)
        try:
            arr = ffi.new("uint32_t[]", ids) if n else ffi.NULL
        except OverflowError:
            raise OverflowError("out of range integral type conversion attempted") from None
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        offs = self._alloc("size_t[]", n or 1)
        st = lib.st_decode_with_offsets(enc, arr, n, 2, ffi.NULL, 0, size, offs, err)  # ST_UNIT_CODEPOINT
        if st == BUFFER_TOO_SMALL:
            buf = self._alloc("uint8_t[]", size[0])
            st = lib.st_decode_with_offsets(enc, arr, n, 2, buf, size[0], size, offs, err)
            if st == OK:
                return ffi.buffer(buf, size[0])[:], ffi.unpack(offs, n)
        if st == OK:
            return b"", ffi.unpack(offs, n)
        self._raise(err, "decoder ids")

    # -- model files (docs/formats/model-format.md) --
    def encoding_new_model(self, data):
        """(handle, meta) for a model file in the text format (bytes): the core parses and
        validates it. meta: name, kind ("rules"/"ranks"), alphabet (ST_ALPHABET_*), pattern (id),
        flags, scripts (bytes, or None for the default set)."""
        model = ffi.new("st_model **")
        err = ffi.new("st_error *")
        st = lib.st_model_parse(data, len(data), ffi.NULL, model, err)
        if st != OK:
            self._raise(err, "model")
        m = model[0]
        try:
            n = ffi.new("size_t *")
            name = ffi.buffer(lib.st_model_name(m, n), n[0])[:].decode("ascii")
            sc = lib.st_model_scripts(m, n)
            meta = {"name": name, "kind": {1: "rules", 2: "ranks"}[lib.st_model_kind(m)],
                    "alphabet": lib.st_model_alphabet(m), "pattern": lib.st_model_pattern(m),
                    "flags": lib.st_model_pretokenizer_flags(m),
                    "scripts": None if sc == ffi.NULL else ffi.buffer(sc, n[0])[:],
                    "supermerges": self._model_pairs(m, b"supermerges")}
            out = ffi.new("st_encoding **")
            st = lib.st_encoding_from_model(m, ffi.NULL, out, err)
            if st != OK:
                self._raise(err, "model")
            return ffi.gc(out[0], lib.st_encoding_free), meta
        finally:
            lib.st_model_free(m)

    def model_pairs(self, data, section):
        """[(left, right, count or None), ...] of a section of a model file (st_model_pairs)."""
        name = check_section(section)
        model = ffi.new("st_model **")
        err = ffi.new("st_error *")
        if lib.st_model_parse(data, len(data), ffi.NULL, model, err) != OK:
            self._raise(err, "model")
        try:
            return self._model_pairs(model[0], name)
        finally:
            lib.st_model_free(model[0])

    @staticmethod
    def _model_pairs(m, section):
        """[(left, right, count or None), ...] of a section of a parsed model (st_model_pairs)."""
        pairs = ffi.new("const uint32_t **")
        counts = ffi.new("const uint64_t **")
        k = lib.st_model_pairs(m, section, pairs, counts)
        if not k:
            return []
        return pair_triples(ffi.unpack(pairs[0], 2 * k), ffi.unpack(counts[0], k) if counts[0] != ffi.NULL else None)

    def model_normalize(self, data):
        """The canonical text of a model file (st_model_parse + st_model_write)."""
        model = ffi.new("st_model **")
        err = ffi.new("st_error *")
        st = lib.st_model_parse(data, len(data), ffi.NULL, model, err)
        if st != OK:
            self._raise(err, "model")
        try:
            size = ffi.new("size_t *")
            lib.st_model_write(model[0], ffi.NULL, 0, size)
            buf = ffi.new("char[]", size[0] or 1)
            st = lib.st_model_write(model[0], buf, size[0], size)
            if st != OK:
                self._fail(st, None, "model")
            return ffi.buffer(buf, size[0])[:]
        finally:
            lib.st_model_free(model[0])

    def model_write_rules(self, name, alphabet, pattern, merges, specials, comments):
        """A model file of merge rules from its fields (st_model_write_rules)."""
        stext, sends = joined_with_ends([t for t, _ in specials])
        ctext, cends = joined_with_ends(comments)
        args = (name, len(name), alphabet, pattern, ffi.new("uint32_t[]", merges) if merges else ffi.NULL,
                len(merges) // 2, stext, ffi.new("size_t[]", sends) if sends else ffi.NULL,
                ffi.new("uint32_t[]", [i for _, i in specials]) if specials else ffi.NULL, len(sends), ctext,
                ffi.new("size_t[]", cends) if cends else ffi.NULL, len(cends))
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_model_write_rules(*args, ffi.NULL, 0, size, err)
        if st not in (OK, BUFFER_TOO_SMALL):
            self._raise(err, "model fields")
        buf = self._alloc("char[]", size[0] or 1)
        if lib.st_model_write_rules(*args, buf, size[0], size, err) != OK:
            self._raise(err, "model fields")
        return ffi.buffer(buf, size[0])[:]

    # -- exports to other libraries' formats (docs/formats/export.md) --
    def encoding_export(self, enc, format):
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_encoding_export(enc, format, ffi.NULL, 0, size, err)
        if st not in (OK, BUFFER_TOO_SMALL):
            self._raise(err, "export")
        buf = self._alloc("char[]", size[0] or 1)
        if lib.st_encoding_export(enc, format, buf, size[0], size, err) != OK:
            self._raise(err, "export")
        return ffi.buffer(buf, size[0])[:]

    def duplicate_tokens(self, enc):
        n = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_encoding_duplicate_tokens(enc, ffi.NULL, 0, n, err)
        if st not in (OK, BUFFER_TOO_SMALL):
            self._raise(err, "export")
        if not n[0]:
            return []
        pairs = ffi.new("uint32_t[]", 2 * n[0])
        if lib.st_encoding_duplicate_tokens(enc, pairs, n[0], n, err) != OK:
            self._raise(err, "export")
        flat = ffi.unpack(pairs, 2 * n[0])
        return list(zip(flat[0::2], flat[1::2]))

    # -- training (docs/design.md §8): counters and phase-1 trainers --
    # cffi releases the GIL around every core call, so threads that each feed their own counter
    # count in parallel. Handles are ffi.gc objects: *_free runs the core's free at once (ffi.release,
    # idempotent), a dropped handle is freed by its finalizer.
    def counter_new(self, pattern, flags, scripts):
        out = ffi.new("st_counter **")
        err = ffi.new("st_error *")
        sc = ffi.NULL if scripts is None else scripts
        st = lib.st_counter_new(pattern, flags, sc, 0 if scripts is None else len(scripts), ffi.NULL, out, err)
        if st != OK:
            self._raise(err, "pre-tokenizer options")
        return ffi.gc(out[0], lib.st_counter_free)

    def counter_free(self, counter):
        ffi.release(counter)

    def counter_add(self, counter, data, flags):
        err = ffi.new("st_error *")
        if lib.st_counter_add(counter, ffi.from_buffer(data), len(data), flags, err) != OK:
            self._raise(err, "text")

    def counter_add_documents(self, counter, datas):
        buf, ends = joined_with_ends(datas)
        arr = ffi.new("size_t[]", ends) if ends else ffi.NULL
        err = ffi.new("st_error *")
        if lib.st_counter_add_documents(counter, buf, arr, len(ends), err) != OK:
            self._raise(err, "documents")

    def counter_add_pretoken(self, counter, data, count):
        count = self._u64("count", count)
        err = ffi.new("st_error *")
        if lib.st_counter_add_pretoken(counter, data, len(data), count, err) != OK:
            self._raise(err, "pretoken")

    def counter_merge(self, into, frm):
        err = ffi.new("st_error *")
        if lib.st_counter_merge(into, frm, err) != OK:
            self._raise(err, "counts")

    def counter_stat(self, counter, what):
        return lib.st_counter_stat(counter, what)

    def counter_save(self, counter):
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_counter_save(counter, ffi.NULL, 0, size, err)
        if st not in (OK, BUFFER_TOO_SMALL):
            self._raise(err, "counts")
        buf = self._alloc("uint8_t[]", size[0] or 1)
        if lib.st_counter_save(counter, buf, size[0], size, err) != OK:
            self._raise(err, "counts")
        return ffi.buffer(buf, size[0])[:]

    def counter_load(self, counter, data):
        err = ffi.new("st_error *")
        if lib.st_counter_load(counter, data, len(data), err) != OK:
            self._raise(err, "counts")

    def trainer_new(self, counter, mode, alphabet, vocab_size, min_frequency, n_specials):
        vocab_size = self._u64("vocab_size", vocab_size)
        min_frequency = self._u64("min_frequency", min_frequency)
        n_specials = self._size("the number of special tokens", n_specials)
        out = ffi.new("st_trainer **")
        err = ffi.new("st_error *")
        st = lib.st_trainer_new(counter, mode, alphabet, vocab_size, min_frequency, n_specials, ffi.NULL, out, err)
        if st != OK:
            self._raise(err, "training options")
        return ffi.gc(out[0], lib.st_trainer_free)

    def trainer_free(self, trainer):
        ffi.release(trainer)

    def trainer_set_specials(self, trainer, specials):
        text, ends = joined_with_ends(specials)
        arr = ffi.new("size_t[]", ends) if ends else ffi.NULL
        err = ffi.new("st_error *")
        if lib.st_trainer_set_specials(trainer, text, arr, len(ends), err) != OK:
            self._raise(err, "special tokens")

    def trainer_step(self, trainer, max_merges):
        max_merges = self._size("max_merges", max_merges)
        made = ffi.new("size_t *")
        err = ffi.new("st_error *")
        if lib.st_trainer_step(trainer, max_merges, made, err) != OK:
            self._raise(err, "training")
        return made[0]

    def trainer_stat(self, trainer, what):
        return lib.st_trainer_stat(trainer, what)

    def _pairs(self, fn, trainer):
        pairs = ffi.new("const uint32_t **")
        counts = ffi.new("const uint64_t **")
        n = fn(trainer, pairs, counts)
        if not n:
            return []
        return pair_triples(ffi.unpack(pairs[0], 2 * n), ffi.unpack(counts[0], n))

    def trainer_merges(self, trainer):
        return self._pairs(lib.st_trainer_merges, trainer)

    def trainer_supermerges(self, trainer):
        return self._pairs(lib.st_trainer_supermerges, trainer)

    # -- superwords: phase 2 --
    def counter_new_candidates(self, trainer, algorithm, supermerges):
        supermerges = self._u64("supermerges", supermerges)
        out = ffi.new("st_counter **")
        err = ffi.new("st_error *")
        if lib.st_counter_new_candidates(trainer, algorithm, supermerges, ffi.NULL, out, err) != OK:
            self._raise(err, "candidates")
        return ffi.gc(out[0], lib.st_counter_free)

    def counter_split_ngrams(self, candidates, c_min, max_len):
        c_min, max_len = self._u64("c_min", c_min), self._size("max_len", max_len)
        out = ffi.new("st_counter **")
        err = ffi.new("st_error *")
        if lib.st_counter_split_ngrams(candidates, c_min, max_len, ffi.NULL, out, err) != OK:
            self._raise(err, "candidates")
        return ffi.gc(out[0], lib.st_counter_free)

    def trainer_start_superwords(self, trainer, candidates, algorithm, supermerges):
        supermerges = self._u64("supermerges", supermerges)
        err = ffi.new("st_error *")
        if lib.st_trainer_start_superwords(trainer, candidates, algorithm, supermerges, err) != OK:
            self._raise(err, "superwords")

    def trainer_write_model(self, trainer, name, specials):
        text, ends = joined_with_ends(specials)
        arr = ffi.new("size_t[]", ends) if ends else ffi.NULL
        size = ffi.new("size_t *")
        err = ffi.new("st_error *")
        st = lib.st_trainer_write_model(trainer, name, len(name), text, arr, len(ends), ffi.NULL, 0, size, err)
        if st not in (OK, BUFFER_TOO_SMALL):
            self._raise(err, "trained model")
        buf = self._alloc("char[]", size[0] or 1)
        if lib.st_trainer_write_model(trainer, name, len(name), text, arr, len(ends), buf, size[0], size,
                                      err) != OK:
            self._raise(err, "trained model")
        return ffi.buffer(buf, size[0])[:]
