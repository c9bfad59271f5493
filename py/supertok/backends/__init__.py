"""Backend selection (docs/design.md §9).

Order: native (the compiled cffi extension), else wasm on wasmtime, else numba (the Numba port
of the core, with numba installed), else wasm on pywasm, which is pure Python and always
present. SUPERTOK_BACKEND forces one: native | wasm (wasmtime if installed, else pywasm) |
wasmtime | numba | pywasm.

pywasm is thousands of times slower than the others, so a process that ends up on it without
having asked for it by name (SUPERTOK_BACKEND=pywasm) is told once, by a SlowBackendWarning
saying why the others did not load and how to get one; report() gives the same reasons.

The process's current backend lives here (current(), set_current()), below the package's
__init__, which re-exports them; supertok.encoding and supertok.ube import them from here.
"""
import os
import struct
import sys
import threading
import warnings

KNOWN = ("native", "wasm", "wasmtime", "numba", "pywasm")

try:  # optional C helper, built with the package where a compiler is present (_lists.c)
    from .._lists import ids_to_list as _ids_to_list
except ImportError:
    _ids_to_list = None
try:  # the str's own UTF-8, for the backends that read the caller's memory (utf8_view in _lists.c)
    from .._lists import utf8_view
except ImportError:
    utf8_view = None
try:  # a helper of a newer _lists than an installed build may hold
    from .._lists import ids_to_lists as _ids_to_lists
except ImportError:
    _ids_to_lists = None


def id_list(raw, n):
    """The list of the first n little-endian uint32 ids in the buffer raw."""
    if _ids_to_list is not None and sys.byteorder == "little":
        return _ids_to_list(raw, n)
    return list(struct.unpack("<%dI" % n, bytes(raw[:4 * n])))


def id_lists(raw, counts, size_t_bytes):
    """One list per text: the little-endian uint32 ids in the buffer raw, taken counts[k] for
    text k (counts: a list of ints, or a buffer of native size_t values of size_t_bytes each)."""
    if _ids_to_lists is not None and sys.byteorder == "little" and not isinstance(counts, list):
        return _ids_to_lists(raw, counts, len(counts) // size_t_bytes)
    if not isinstance(counts, list):
        counts = list(struct.unpack("=%d%s" % (len(counts) // size_t_bytes, "Q" if size_t_bytes == 8 else "I"),
                                    bytes(counts)))
    flat = id_list(raw, sum(counts))
    out, k = [], 0
    for c in counts:
        out.append(flat[k:k + c])
        k += c
    return out


class BackendUnavailable(RuntimeError):
    pass


class SlowBackendWarning(UserWarning):
    """The process runs on pywasm because no faster backend loads (issued once per process).
    Silence it with SUPERTOK_BACKEND=pywasm, or with warnings.filterwarnings("ignore",
    category=supertok.backends.SlowBackendWarning)."""


from .base import Backend  # noqa: E402, F401  (the protocol every backend implements)

_current = None


def current():
    """The backend of this process, selected on first use (select())."""
    global _current
    if _current is None:
        _current = select()
    return _current


def set_current(name):
    """Switch the backend of this process (tests use it to run every backend in turn);
    returns the previous backend object. `name` is a backend name or a backend object."""
    global _current
    prev = _current
    _current = load(name) if isinstance(name, str) else name
    return prev


_loaded = {}  # name -> the backend object load() made for it in this process
_load_lock = threading.Lock()


def _after_fork_in_child():
    global _load_lock
    _load_lock = threading.Lock()  # a thread of the parent may have held it; the backends stay


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def load(name):
    """The backend `name`, or BackendUnavailable saying why it does not load. One object per name
    and process, made on first use and kept: a wasm backend holds a whole module instance (wasmtime
    reserves 4 GiB of address space for its memory), so available(), report() and set_current()
    share it instead of making one each time. A backend that fails to load is tried again on the
    next call."""
    if name == "wasm":
        try:
            return load("wasmtime")
        except BackendUnavailable:
            return load("pywasm")
    b = _loaded.get(name)
    if b is not None:
        return b
    with _load_lock:
        b = _loaded.get(name)
        if b is None:
            b = _loaded[name] = _make(name)
    return b


def _make(name):
    """The backend `name`: the one host layer (c_api.CoreBackend) over that name's runtime."""
    from .c_api import CoreBackend
    if name == "native":
        from .cffi_runtime import CffiRuntime
        return CoreBackend(CffiRuntime())
    if name == "wasmtime":
        from .wasm_runtime import WasmRuntime, WasmtimeRunner
        try:
            return CoreBackend(WasmRuntime(WasmtimeRunner()))
        except BackendUnavailable:
            raise
        except Exception as exc:  # a wasmtime wheel whose runtime library does not load here
            raise BackendUnavailable("wasmtime is installed but does not run here (%s: %s)"
                                     % (type(exc).__name__, exc)) from None
    if name == "numba":
        try:
            from .numba_runtime import NumbaRuntime
        except ImportError as exc:  # numpy (or numba) is not installed: the numba extra is not
            raise BackendUnavailable("numba is not installed (pip install 'supertok[numba]'): %s" % exc) from None
        return CoreBackend(NumbaRuntime())
    if name == "pywasm":
        from .wasm_runtime import PywasmRunner, WasmRuntime
        return CoreBackend(WasmRuntime(PywasmRunner()))
    raise BackendUnavailable("unknown backend %r: choose one of %s" % (name, ", ".join(KNOWN)))


ORDER = ("native", "wasmtime", "numba", "pywasm")  # the selection order


def report():
    """[(name, None if it loads here else the reason it does not)] in the selection order, each
    backend loaded (load(): once per process) to find out (for `python -m supertok info` and bug
    reports)."""
    out = []
    for name in ORDER:
        try:
            load(name)
        except BackendUnavailable as exc:
            out.append((name, str(exc)))
        else:
            out.append((name, None))
    return out


def available():
    """Names of the backends that load here (each loaded to find out; load() keeps it)."""
    return [name for name, why in report() if why is None]


_warned_slow = False


def _outside_package_stacklevel():
    """The stacklevel, for a warnings.warn called by the caller of this function, of the first
    frame outside the supertok package: the warning then names the user's line."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1  # the caller of warnings.warn is stacklevel 1
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib"):  # warnings.warn skips these itself: not counted
            frame = frame.f_back
            continue
        if not os.path.abspath(name).startswith(pkg):
            break
        frame, level = frame.f_back, level + 1
    return level


def _warn_slow(reasons):
    """Once per process: say that the process runs on pywasm, why, and how to get a faster backend."""
    global _warned_slow
    if _warned_slow:
        return
    _warned_slow = True
    why = "; ".join("%s: %s" % (name, reasons[name]) for name in ORDER if name in reasons)
    warnings.warn(
        "supertok is running on pywasm, a pure-Python WebAssembly interpreter thousands of times "
        "slower than the other backends, because none of them loads here (%s). For a fast "
        "backend: pip install wasmtime (wheels for Linux, macOS and Windows on x86-64 and ARM64), "
        "or pip install numba (the numba backend), "
        "or install a C compiler (gcc or clang) and reinstall supertok for the native one. "
        "SUPERTOK_BACKEND=pywasm chooses pywasm and silences this warning." % why,
        SlowBackendWarning, stacklevel=_outside_package_stacklevel())


def warn_at_import():
    """At `import supertok`, with no backend forced: when no faster backend can even be
    imported (no native extension, no wasmtime package, no numba), the process will run on pywasm; say so
    then, once, instead of at the first call (a cheap check: nothing is loaded)."""
    if os.environ.get("SUPERTOK_BACKEND", "").strip():
        return
    import importlib.util
    reasons = {}
    for name, module, why in (("native", "supertok._native", "the native extension supertok._native is not built"),
                              ("wasmtime", "wasmtime", "wasmtime is not installed (pip install wasmtime)"),
                              ("numba", "numba", "numba is not installed (pip install 'supertok[numba]')")):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            return
        reasons[name] = why
    _warn_slow(reasons)


def select():
    forced = os.environ.get("SUPERTOK_BACKEND", "").strip()
    if forced:
        if forced not in KNOWN:
            raise BackendUnavailable(
                "SUPERTOK_BACKEND=%r is not a backend: choose one of %s" % (forced, ", ".join(KNOWN)))
        if forced == "wasm":
            order = ("wasmtime", "pywasm")
        else:
            order = (forced,)
    else:
        order = ORDER
    reasons = {}
    for name in order:
        try:
            b = load(name)
        except BackendUnavailable as exc:
            reasons[name] = str(exc)
            continue
        if name == "pywasm" and forced != "pywasm":
            _warn_slow(reasons)
        return b
    if forced:
        raise BackendUnavailable("SUPERTOK_BACKEND=%s was forced but cannot load: %s"
                                 % (forced, "; ".join(reasons.values())))
    raise BackendUnavailable("no supertok backend could be loaded: %s"
                             % "; ".join("%s: %s" % kv for kv in reasons.items()))
