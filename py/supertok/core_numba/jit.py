"""The port's compiled kernels as a whole: whether numba's cache holds them (`python -m
supertok info`), and a progress line on a terminal while the first use compiles them.

numba compiles a kernel on its first call and, with cache=True, writes it to its cache (the
__pycache__ folder beside the module, or NUMBA_CACHE_DIR); a later process loads it from there.
"""
import importlib
import os
import sys
import threading
import time

from . import MODULES


def kernels():
    """Every jitted function of the port's modules (imported here)."""
    from numba.core.registry import CPUDispatcher
    out = []
    for m in MODULES:
        try:
            mod = importlib.import_module(__package__ + "." + m)
        except ModuleNotFoundError:
            continue
        for v in vars(mod).values():
            if isinstance(v, CPUDispatcher) and v.__module__ == mod.__name__:
                out.append(v)
    return out


def cache_state():
    """(kernels with an entry in numba's cache, kernels, the cache folder of the first)."""
    ks = kernels()
    warm, where = 0, None
    for k in ks:
        try:
            path = k._cache._cache_file._index_path
        except AttributeError:  # numba changed its internals: say nothing rather than guess
            return None, len(ks), None
        where = where or os.path.dirname(path)
        warm += os.path.exists(path)
    return warm, len(ks), where


class compiling:
    """A context for work that may compile kernels: on a terminal (standard error), when it takes
    more than a second, a line says so and counts the kernels compiled, until it ends."""

    def __init__(self, what="the numba backend", stream=None):
        self.what = what
        self.stream = stream or sys.stderr
        self._done = threading.Event()
        self._thread = None

    def __enter__(self):
        isatty = getattr(self.stream, "isatty", None)
        if isatty is not None and isatty() and not os.environ.get("SUPERTOK_QUIET"):
            self._t0 = time.monotonic()
            self._thread = threading.Thread(target=self._draw, daemon=True)
            self._thread.start()
        return self

    def _count(self):
        ks = kernels()
        return sum(1 for k in ks if k.signatures), len(ks)

    def _draw(self):
        shown = False
        while not self._done.wait(0.25):
            t = time.monotonic() - self._t0
            if t < 1.0:
                continue
            made, total = self._count()
            self.stream.write("\rsupertok: compiling %s (first use; cached for later runs): %d of %d kernels, %.0f s "
                              % (self.what, made, total, t))
            self.stream.flush()
            shown = True
        if shown:
            self.stream.write("\rsupertok: compiled %s in %.1f s%s\n"
                              % (self.what, time.monotonic() - self._t0, " " * 40))
            self.stream.flush()

    def __exit__(self, *exc):
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        return None
