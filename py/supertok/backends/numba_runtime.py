"""The Numba runtime (runtime.py): the Numba port of the core (supertok.core_numba), driven by
the same host layer (c_api.py) as the C core.

The port's exports take numpy arrays where the C functions take pointers, so a frame makes
arrays: a byte input is copied into a writable uint8 array padded with 16 zero bytes (the
kernels read whole words past a key, as the C core does), an output is an empty array of the
C type, a cell a Cell, the error block an Err (core_numba/base/common.py). NULL is None. A
pointer the core hands back (st_model_pairs, st_model_name) is bytes or a Ptr.

Calls take turns (a lock in the frame): the port's encodings keep mutable scratch (caches,
lazily built tables) that the C core guards with atomics, and a turn per call is the simple
rule that keeps them whole. Kernels release the GIL, so other Python threads run meanwhile.
"""
import operator
import threading
import weakref

import numpy as np

from . import BackendUnavailable
from .base import SIZE_MAX_NATIVE, CACHE_INFO_FIELDS, register_fork_state

_SPECIAL_BY_TEXT = 8  # ST_SPECIAL_BY_TEXT
PAD = 16  # zero bytes after every byte input

_DTYPES = {"uint8_t": np.uint8, "char": np.uint8, "uint16_t": np.uint16, "uint32_t": np.uint32,
           "size_t": np.uint64, "uint64_t": np.uint64, "int": np.int64}


class Cell:
    """An out-parameter: the export sets .v."""
    __slots__ = ("v",)

    def __init__(self, v=0):
        self.v = v


class Ptr:
    """A pointer the port hands back: the array it points into (from index 0)."""
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


class Policy:
    """st_special_policy: the fields of supertok.h."""
    __slots__ = ("allowed", "n_allowed", "disallowed", "n_disallowed", "flags", "strings", "ends")

    def __init__(self, allowed, n_allowed, disallowed, n_disallowed, flags, strings, ends):
        self.allowed, self.n_allowed, self.disallowed, self.n_disallowed = allowed, n_allowed, disallowed, n_disallowed
        self.flags, self.strings, self.ends = flags, strings, ends


def padded(data):
    """data as a writable uint8 array with PAD zero bytes after it."""
    n = len(data)
    a = np.zeros(n + PAD, np.uint8)
    if n:
        a[:n] = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data
    return a


def _unwrap(p):
    return p.a if isinstance(p, Ptr) else p


class _Frame:
    __slots__ = ("n", "err", "_rt")

    def __init__(self, rt):
        from ..core_numba.base.common import Err
        self._rt = rt
        self.n = Cell()
        self.err = Err()

    def __enter__(self):
        self._rt._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._rt._lock.release()
        return None

    @staticmethod
    def bytes(data):
        return padded(data)

    @staticmethod
    def array(ctype, values):
        if not all(type(v) is int for v in values):  # as cffi: ints (and what has __index__) only
            values = [operator.index(v) for v in values]
        return np.array(values, dtype=_DTYPES[ctype])

    @staticmethod
    def out(ctype, n):
        if ctype == "st_cache_info":
            return np.zeros(len(CACHE_INFO_FIELDS), np.uint64)
        return np.zeros(n or 1, dtype=_DTYPES[ctype])

    @staticmethod
    def cell(ctype):
        return Cell(None if "*" in ctype else 0)

    @staticmethod
    def get(cell):
        v = cell.v
        return Ptr(v) if isinstance(v, np.ndarray) else v

    @staticmethod
    def read(ctype, p, n):
        return _unwrap(p)[:n].tolist()

    @staticmethod
    def read_packed(ctype, p, n):
        """n values of ctype as their little-endian bytes."""
        return _unwrap(p)[:n].astype(np.dtype(_DTYPES[ctype]).newbyteorder("<"), copy=False).tobytes()

    @staticmethod
    def packed(ctype, data):
        return np.frombuffer(data, np.dtype(_DTYPES[ctype]).newbyteorder("<")).astype(_DTYPES[ctype])

    @staticmethod
    def read_bytes(p, n):
        p = _unwrap(p)
        return bytes(p[:n]) if isinstance(p, (bytes, bytearray)) else p[:n].tobytes()

    @staticmethod
    def cstr(p):
        p = bytes(_unwrap(p))
        return p.split(b"\0", 1)[0].decode("ascii")

    def error(self):
        return self.err.as_tuple()

    @staticmethod
    def policy(allowed, disallowed, flags):
        if not allowed and not disallowed:
            return Policy(None, 0, None, 0, flags, None, None) if flags else None
        allowed, disallowed = tuple(allowed or ()), tuple(disallowed or ())
        ends, at = [], 0
        for s in allowed + disallowed:
            at += len(s)
            ends.append(at)
        return Policy(None, len(allowed), None, len(disallowed), flags | _SPECIAL_BY_TEXT,
                      padded(b"".join(allowed + disallowed)), np.array(ends, np.uint64))

    @staticmethod
    def cache_info(out):
        return [int(x) for x in out[:len(CACHE_INFO_FIELDS)]]


class _Handle:
    __slots__ = ("ptr", "_finalizer", "_keep", "__weakref__")

    def __init__(self, ptr, free, keep):
        self.ptr = ptr
        self._keep = keep
        self._finalizer = weakref.finalize(self, _free, free, ptr)
        self._finalizer.atexit = False

    def __repr__(self):
        return "<numba handle %r>" % type(self.ptr).__name__


def _free(free, ptr):
    if free is not None:
        free(ptr)


class NumbaRuntime:
    name = "numba"
    parallel = False  # calls take turns (see the module's docstring)
    prefers_image = False  # as native: a rank file's encoding builds the backtracking tables, an image's never
    takes_views = False  # the kernels take a text as a numpy array of its bytes (padded: a copy)
    size_max = SIZE_MAX_NATIVE
    NULL = None

    def __init__(self):
        try:
            import numba  # noqa: F401
        except ImportError as exc:
            raise BackendUnavailable("numba is not installed (pip install 'supertok[numba]'): %s" % exc) from None
        from .. import core_numba
        from ..core_numba import jit
        self._core = core_numba
        jit.show_progress()  # the first use compiles the kernels (a minute or two): say so on a terminal
        self._lock = threading.Lock()
        self._local = threading.local()
        register_fork_state(self)

    def _fork_before(self):
        self._lock.acquire()

    def _fork_after_parent(self):
        self._lock.release()

    def _fork_after_child(self):
        self._lock = threading.Lock()

    def frame(self):
        try:
            return self._local.frame
        except AttributeError:
            f = self._local.frame = _Frame(self)
            return f

    def fn(self, name):
        f = self._core.lookup(name)
        if f is None:
            raise NotImplementedError("the numba backend has no %s yet" % name)
        return f

    @staticmethod
    def alloc(size):
        return np.zeros(size + PAD, np.uint8)

    @staticmethod
    def write(p, data):
        p[:len(data)] = np.frombuffer(data, np.uint8)

    @staticmethod
    def free(p):
        pass

    def own(self, ptr, free, keep=None, also=()):
        return _Handle(ptr, self._core.lookup(free), keep)

    @staticmethod
    def release(handle):
        handle._finalizer()
        handle.ptr = None
