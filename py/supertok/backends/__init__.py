"""Backend selection (docs/design.md §9).

Order: native (the compiled cffi extension), else wasm on wasmtime, else numba (a later
issue), else wasm on pywasm, which is pure Python and always present. SUPERTOK_BACKEND
forces one: native | wasm (wasmtime if installed, else pywasm) | wasmtime | pywasm.

The process's current backend lives here (current(), set_current()), below the package's
__init__, which re-exports them; supertok.encoding and supertok.ube import them from here.
"""
import os
import struct
import sys

KNOWN = ("native", "wasm", "wasmtime", "pywasm")

try:  # optional C helper, built with the package where a compiler is present (_lists.c)
    from .._lists import ids_to_list as _ids_to_list
except ImportError:
    _ids_to_list = None


def id_list(raw, n):
    """The list of the first n little-endian uint32 ids in the buffer raw."""
    if _ids_to_list is not None and sys.byteorder == "little":
        return _ids_to_list(raw, n)
    return list(struct.unpack("<%dI" % n, bytes(raw[:4 * n])))


class BackendUnavailable(RuntimeError):
    pass


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


def load(name):
    """Load the backend `name` or raise BackendUnavailable saying why."""
    if name == "native":
        from .native import NativeBackend
        return NativeBackend()
    if name == "wasmtime":
        from .wasm import WasmBackend, WasmtimeRunner
        return WasmBackend(WasmtimeRunner())
    if name == "pywasm":
        from .wasm import PywasmRunner, WasmBackend
        return WasmBackend(PywasmRunner())
    if name == "wasm":
        try:
            return load("wasmtime")
        except BackendUnavailable:
            return load("pywasm")
    raise BackendUnavailable("unknown backend %r: choose one of %s" % (name, ", ".join(KNOWN)))


def available():
    """Names of the backends that load here (each loaded once to find out)."""
    out = []
    for name in ("native", "wasmtime", "pywasm"):
        try:
            load(name)
        except BackendUnavailable:
            continue
        out.append(name)
    return out


def select():
    forced = os.environ.get("SUPERTOK_BACKEND", "").strip()
    if forced:
        if forced not in KNOWN:
            raise BackendUnavailable(
                "SUPERTOK_BACKEND=%r is not a backend: choose one of %s" % (forced, ", ".join(KNOWN)))
        try:
            return load(forced)
        except BackendUnavailable as exc:
            raise BackendUnavailable("SUPERTOK_BACKEND=%s was forced but cannot load: %s" % (forced, exc)) from None
    for name in ("native", "wasmtime", "pywasm"):
        try:
            return load(name)
        except BackendUnavailable:
            continue
    raise BackendUnavailable("no supertok backend could be loaded")
