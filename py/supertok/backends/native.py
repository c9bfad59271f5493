"""The native backend: the C core compiled into the cffi extension supertok._native."""
import weakref

from . import BackendUnavailable, id_list
from .._status import BUFFER_TOO_SMALL, INVALID_ARGUMENT, OK, raise_for_status
from .base import Backend, HandleCache

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

    def script_names(self):
        return [ffi.string(lib.st_script_name(i)).decode() for i in range(lib.st_script_count())]

    def script_of(self, cp):
        return lib.st_script_of(cp)

    def _fail(self, status, offset, what, items=None):
        raise_for_status(status, self.status_str, offset, what, items)

    def pretokenizer(self, pattern, flags, scripts):
        """A cached handle for (pattern id, flags, scripts as bytes or None)."""
        key = (pattern, flags, scripts)
        h = self._pretokenizers.get(key)
        if h is None:
            out = ffi.new("st_pretokenizer **")
            err = ffi.new("size_t *")
            sc = ffi.NULL if scripts is None else scripts
            st = lib.st_pretokenizer_new(pattern, flags, sc, 0 if scripts is None else len(scripts),
                                         ffi.NULL, out, err)
            if st != OK:
                self._fail(st, err[0], "pre-tokenizer options")
            h = ffi.gc(out[0], lib.st_pretokenizer_free)
            self._pretokenizers.put(key, h)
        return h

    def pretokenize_ends(self, handle, data, codepoints):
        cap = len(data)
        ends = self._alloc("size_t[]", cap or 1)
        n = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_pretokenize(handle, data, len(data), 1 if codepoints else 0, ends, cap, n, err)
        if st != OK:
            self._fail(st, err[0], "text")
        return ffi.unpack(ends, n[0])

    def pretokenize_join(self, handle, data, sep):
        """The text with byte sep after every piece (see st_pretokenize_join)."""
        cap = 2 * len(data)
        out = self._alloc("uint8_t[]", cap or 1)
        n = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_pretokenize_join(handle, data, len(data), sep, out, cap, n, err)
        if st != OK:
            self._fail(st, err[0], "text")
        return ffi.buffer(out, n[0])[:]

    def pretokenize_count(self, handle, data):
        n = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_pretokenize_count(handle, data, len(data), n, err)
        if st != OK:
            self._fail(st, err[0], "text")
        return n[0]

    def utf8_validate(self, data):
        err = ffi.new("size_t *")
        st = lib.st_utf8_validate(data, len(data), err)
        return None if st == OK else err[0]

    # -- encodings --
    def encoding_new(self, ranks, specials, pattern):
        out = ffi.new("st_encoding **")
        err = ffi.new("size_t *")
        in_spec = ffi.new("int *")
        st = lib.st_encoding_new_tiktoken(ranks, len(ranks), specials, len(specials), pattern, ffi.NULL,
                                          out, err, in_spec)
        if st != OK:
            self._fail(st, err[0], "special tokens" if in_spec[0] else "rank file")
        return ffi.gc(out[0], lib.st_encoding_free)

    def encoding_new_merges(self, alphabet, merges, specials, pattern):
        """merges: flat [left0, right0, left1, right1, ...]."""
        arr = ffi.new("uint32_t[]", merges) if merges else ffi.NULL
        out = ffi.new("st_encoding **")
        err = ffi.new("size_t *")
        in_spec = ffi.new("int *")
        st = lib.st_encoding_new_merges(alphabet, arr, len(merges) // 2, specials, len(specials), pattern,
                                        ffi.NULL, out, err, in_spec)
        if st != OK:
            self._fail(st, err[0], "special tokens" if in_spec[0] else "merge rules")
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

    def encoding_from_image(self, image):
        buf = ffi.new("uint64_t[]", (len(image) + 7) // 8)  # 8-byte aligned, kept alive below
        ffi.memmove(buf, image, len(image))
        out = ffi.new("st_encoding **")
        err = ffi.new("size_t *")
        st = lib.st_encoding_from_image(buf, len(image), ffi.NULL, out, err)
        if st != OK:
            self._fail(st, err[0], "vocabulary image")
        handle = ffi.gc(out[0], lib.st_encoding_free)
        self._images[handle] = buf  # the encoding borrows the image
        return handle

    def encoding_free(self, enc):
        ffi.release(enc)  # runs st_encoding_free now (the handle is an ffi.gc object); idempotent

    def save_image(self, enc):
        size = ffi.new("size_t *")
        lib.st_encoding_save_image(enc, ffi.NULL, 0, size)
        buf = ffi.new("uint8_t[]", size[0])
        st = lib.st_encoding_save_image(enc, buf, size[0], size)
        if st != OK:
            self._fail(st, None, "image")
        return ffi.buffer(buf, size[0])[:]

    def n_vocab(self, enc):
        return lib.st_encoding_n_vocab(enc)

    def special_ids(self, enc):
        return [lib.st_encoding_special_id(enc, i) for i in range(lib.st_encoding_n_special(enc))]

    def encode(self, enc, data, allowed, want_starts=False):
        cap = len(data)
        ids = self._alloc("uint32_t[]", cap or 1)
        starts = self._alloc("size_t[]", cap or 1) if want_starts else ffi.NULL
        n = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_encode(enc, data, len(data), allowed or ffi.NULL, len(allowed), ids, starts, cap, n, err)
        if st != OK:
            self._fail(st, err[0], "text")
        if want_starts:
            return id_list(ffi.buffer(ids, 4 * n[0]), n[0]), ffi.unpack(starts, n[0])
        return id_list(ffi.buffer(ids, 4 * n[0]), n[0])

    def encode_many(self, enc, datas, allowed):
        """Lists of ids for several UTF-8 texts, in one call that runs without the GIL."""
        offsets = [0]
        for d in datas:
            offsets.append(offsets[-1] + len(d))
        buf = b"".join(datas)
        cap = len(buf)
        ids = self._alloc("uint32_t[]", cap or 1)
        counts = self._alloc("size_t[]", len(datas) or 1)
        offs = ffi.new("size_t[]", offsets)
        n = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_encode_many(enc, buf, offs, len(datas), allowed or ffi.NULL, len(allowed), ids, cap, counts,
                                n, err)
        if st != OK:
            self._fail(st, err[0], "text")
        flat = id_list(ffi.buffer(ids, 4 * n[0]), n[0])
        out, k = [], 0
        for c in ffi.unpack(counts, len(datas)):
            out.append(flat[k:k + c])
            k += c
        return out

    def encode_count(self, enc, data, allowed):
        n = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_encode_count(enc, data, len(data), allowed or ffi.NULL, len(allowed), n, err)
        if st != OK:
            self._fail(st, err[0], "text")
        return n[0]

    def decode_bytes(self, enc, ids):
        n = len(ids)
        try:
            arr = ffi.new("uint32_t[]", ids) if n else ffi.NULL
        except OverflowError:  # ids outside u32: tiktoken's error and message
            raise OverflowError("out of range integral type conversion attempted") from None
        size = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_decode(enc, arr, n, ffi.NULL, 0, size, err)
        if st == BUFFER_TOO_SMALL:  # the size query
            buf = self._alloc("uint8_t[]", size[0])
            st = lib.st_decode(enc, arr, n, buf, size[0], size, err)
            if st == OK:
                return ffi.buffer(buf, size[0])[:]
        if st == OK:
            return b""
        self._fail(st, err[0], "ids", ids)  # KeyError for an id that is no token

    def token_bytes(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        ptr = ffi.new("uint8_t **")
        size = ffi.new("size_t *")
        st = lib.st_token_bytes(enc, token, ptr, size)
        if st != OK:
            self._fail(st, None, "token", token)  # KeyError
        return ffi.buffer(ptr[0], size[0])[:]

    def token_symbols(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        n = ffi.new("size_t *")
        st = lib.st_token_symbols(enc, token, ffi.NULL, 0, n)
        if st == BUFFER_TOO_SMALL:
            out = ffi.new("uint16_t[]", n[0])
            st = lib.st_token_symbols(enc, token, out, n[0], n)
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
        err = ffi.new("size_t *")
        st = lib.st_decode_text(enc, arr, n, flags, ffi.NULL, 0, size, err)
        if st == BUFFER_TOO_SMALL:
            buf = self._alloc("uint8_t[]", size[0])
            st = lib.st_decode_text(enc, arr, n, flags, buf, size[0], size, err)
            if st == OK:
                return ffi.buffer(buf, size[0])[:]
        if st == OK:
            return b""
        self._fail(st, err[0], "ids", ids)

    # -- UBE --
    def ube_encode_symbols(self, data):
        cap = len(data)
        out = self._alloc("uint16_t[]", cap or 1)
        n = ffi.new("size_t *")
        err = ffi.new("size_t *")
        st = lib.st_ube_encode_symbols(data, len(data), out, cap, n, err)
        if st != OK:
            self._fail(st, err[0], "text")
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
        err = ffi.new("size_t *")
        st = lib.st_ube_stream_feed(state, arr, n, flags, buf, cap, size, err)
        if st != OK:
            self._fail(st, err[0], "symbols")
        return ffi.buffer(buf, size[0])[:]
