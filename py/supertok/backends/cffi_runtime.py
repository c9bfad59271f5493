"""The cffi runtime (runtime.py): the C core compiled into the extension supertok._native.

cffi releases the GIL around every core call, so frames hold no lock: each thread has its own
frame (its count cell and st_error block made once), and every other argument is allocated for
the call. Pointers are cffi cdata; handles are freed by a finalizer at once (the core's free
functions may run on any thread).
"""
import threading
import weakref

from . import BackendUnavailable, id_list
from .base import CACHE_INFO_FIELDS, SIZE_MAX_NATIVE, joined_with_ends

try:
    from .._native import ffi, lib
except ImportError as exc:  # not built (no C compiler at install time) or not importable
    ffi = lib = None
    _why = str(exc)

_SPECIAL_BY_TEXT = 8  # ST_SPECIAL_BY_TEXT


class _Handle:
    """A core object owned by Python: `free(ptr)` then st_free of each block in `also` run when
    this object goes, or at release()."""
    __slots__ = ("ptr", "_finalizer", "_keep", "__weakref__")

    def __init__(self, ptr, free, keep, also):
        self.ptr = ptr
        self._keep = keep
        self._finalizer = weakref.finalize(self, _free_all, getattr(lib, free), ptr, also)
        self._finalizer.atexit = False

    def __repr__(self):
        return "<native handle %s>" % self.ptr


def _free_all(free, ptr, also):
    free(ptr)
    for p in also:
        lib.st_free(p)


class _Frame:
    __slots__ = ("n", "err", "_new", "_alloc")

    def __init__(self):
        self.n = ffi.new("size_t *")
        self.err = ffi.new("st_error *")
        self._new = ffi.new
        self._alloc = ffi.new_allocator(should_clear_after_alloc=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    @staticmethod
    def bytes(data):
        return data if type(data) is bytes else ffi.from_buffer(data)

    def array(self, ctype, values):
        return self._new(ctype + "[]", values) if values else ffi.NULL

    def out(self, ctype, n):
        return self._alloc(ctype + "[]", n or 1)

    def cell(self, ctype):
        return self._new(ctype + " *")

    @staticmethod
    def get(cell):
        return cell[0]

    @staticmethod
    def read(ctype, p, n):
        if ctype == "uint32_t":
            return id_list(ffi.buffer(p, 4 * n), n)
        return ffi.unpack(p, n)

    @staticmethod
    def read_bytes(p, n):
        return ffi.buffer(p, n)[:]

    @staticmethod
    def read_packed(ctype, p, n):
        """n values of ctype as their bytes (little-endian where the machine is: the hosts that
        take them back, packed(), run on the same machine)."""
        return ffi.buffer(p, ffi.sizeof(ctype) * n)[:]

    @staticmethod
    def packed(ctype, data):
        return ffi.from_buffer(ctype + "[]", data) if data else ffi.NULL

    @staticmethod
    def cstr(p):
        return ffi.string(p).decode("ascii")

    def error(self):
        e = self.err
        return (e.status, e.unit, e.offset, e.line, e.token, e.input, e.kind, e.length, ffi.string(e.message))

    def policy(self, allowed, disallowed, flags):
        return _policy(allowed, disallowed, flags)

    @staticmethod
    def cache_info(out):
        return [getattr(out[0], f) for f in CACHE_INFO_FIELDS]


_flag_policies = {}
_string_policies = {}  # (allowed, disallowed, flags) -> (policy, the arrays it points to)


def _policy(allowed, disallowed, flags):
    """An st_special_policy of strings (ST_SPECIAL_BY_TEXT; the arrays it points to kept alive
    with it), or NULL. A policy of flags alone (tiktoken's default: every special disallowed) is
    made once and shared: the core only reads it, and a short text must not pay for building
    it; a few sets of strings recur, so the last 64 are kept too."""
    if not allowed and not disallowed:
        if not flags:
            return ffi.NULL
        p = _flag_policies.get(flags)
        if p is None:
            p = _flag_policies[flags] = ffi.new("st_special_policy *", {"flags": flags})
        return p
    key = (tuple(allowed or ()), tuple(disallowed or ()), flags)
    got = _string_policies.get(key)
    if got is not None:
        return got[0]
    strings, ends = joined_with_ends(key[0] + key[1])
    ends = ffi.new("size_t[]", ends)
    buf = ffi.new("char[]", strings) if strings else ffi.NULL
    p = ffi.new("st_special_policy *", {"n_allowed": len(key[0]), "n_disallowed": len(key[1]),
                                        "flags": flags | _SPECIAL_BY_TEXT, "strings": buf, "ends": ends})
    if len(_string_policies) >= 64:
        _string_policies.clear()
    _string_policies[key] = (p, (buf, ends))
    return p


class CffiRuntime:
    name = "native"
    parallel = True  # the core runs without the GIL
    takes_views = True  # the core reads any buffer in place (ffi.from_buffer)
    prefers_image = False
    size_max = SIZE_MAX_NATIVE

    def __init__(self):
        if lib is None:
            raise BackendUnavailable("the native extension supertok._native is not built (%s)" % _why)
        self.NULL = ffi.NULL
        self._local = threading.local()

    def frame(self):
        """This thread's frame (made on its first call)."""
        try:
            return self._local.frame
        except AttributeError:
            f = self._local.frame = _Frame()
            return f

    @staticmethod
    def fn(name):
        return getattr(lib, name)

    @staticmethod
    def alloc(size):
        p = lib.st_malloc(size or 1)
        if p == ffi.NULL:
            raise MemoryError("out of memory (%d bytes)" % size)
        return p

    @staticmethod
    def write(p, data):
        ffi.memmove(p, data, len(data))

    @staticmethod
    def free(p):
        lib.st_free(p)

    @staticmethod
    def own(ptr, free, keep=None, also=()):
        return _Handle(ptr, free, keep, also)

    @staticmethod
    def release(handle):
        handle._finalizer()  # runs the frees now, once (a finalizer that has run does nothing)
        handle.ptr = ffi.NULL
