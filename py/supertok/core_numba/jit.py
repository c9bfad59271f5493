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
    """(kernels with an entry in numba's cache, kernels, the port's cache folder)."""
    ks = kernels()
    warm, where = 0, None
    for k in ks:
        try:
            path = k._cache._cache_file._index_path
        except AttributeError:  # numba changed its internals: say nothing rather than guess
            return None, len(ks), None
        where = where or os.path.dirname(os.path.dirname(path))  # numba-<digest>/<module>/
        warm += os.path.exists(path)
    return warm, len(ks), where


class _Progress:
    """numba's compile events for the port's kernels: while a burst of compiling (a first call
    compiles the kernels it reaches, nested) has lasted more than a second, a line on the
    terminal counts the kernels compiled and the seconds, and says when the burst ends."""

    def __init__(self, stream):
        self.stream = stream
        self.depth = 0
        self.lock = threading.Lock()
        self.burst = None  # [start, kernels compiled, shown]

    def start(self, dispatcher):
        with self.lock:
            self.depth += 1
            if self.depth == 1 and self.burst is None:
                self.burst = [time.monotonic(), 0, False]
                threading.Thread(target=self._draw, args=(self.burst,), daemon=True).start()

    def end(self):
        with self.lock:
            self.depth -= 1
            burst = self.burst
            if burst is not None:
                burst[1] += 1
            if self.depth == 0 and burst is not None:
                self.burst = None
                if burst[2]:
                    self.stream.write("\rsupertok: compiled %d numba kernels in %.1f s (cached for later runs)%s\n"
                                      % (burst[1], time.monotonic() - burst[0], " " * 20))
                    self.stream.flush()

    def _draw(self, burst):
        while True:
            time.sleep(0.25)
            with self.lock:
                if self.burst is not burst:
                    return
                t = time.monotonic() - burst[0]
                if t >= 1.0:
                    burst[2] = True
                    self.stream.write("\rsupertok: compiling the numba backend (its first use here): %d kernels, "
                                      "%.0f s " % (burst[1], t))
                    self.stream.flush()


_progress_installed = False


def show_progress(stream=None):
    """On a terminal (stream: standard error), show the port's compiling as it happens
    (once per process; SUPERTOK_QUIET=1 turns it off)."""
    global _progress_installed
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    if _progress_installed or isatty is None or not isatty() or os.environ.get("SUPERTOK_QUIET"):
        return
    from numba.core import event

    progress = _Progress(stream)
    here = __package__ + "."

    class Listener(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__module__.startswith(here):
                progress.start(ev.data["dispatcher"])

        def on_end(self, ev):
            if ev.data["dispatcher"].py_func.__module__.startswith(here):
                progress.end()

    event.register("numba:compile", Listener())
    _progress_installed = True
