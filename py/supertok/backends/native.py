"""The native backend: the C core compiled into the cffi extension supertok._native."""
from . import BackendUnavailable
from .._status import OK, SupertokError

try:
    from .._native import ffi, lib
except ImportError as exc:  # not built (no C compiler at install time) or not importable
    ffi = lib = None
    _why = str(exc)


class NativeBackend:
    name = "native"

    def __init__(self):
        if lib is None:
            raise BackendUnavailable("the native extension supertok._native is not built (%s)" % _why)
        self._alloc = ffi.new_allocator(should_clear_after_alloc=False)
        self._pretokenizers = {}

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

    def _fail(self, status, offset, what):
        raise SupertokError(status, self.status_str(status), offset, what)

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
            self._pretokenizers[key] = h
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
