"""Backend selection (DESIGN §9).

Order: native (the compiled cffi extension), else wasm on wasmtime, else numba (a later
issue), else wasm on pywasm, which is pure Python and always present. SUPERTOK_BACKEND
forces one: native | wasm (wasmtime if installed, else pywasm) | wasmtime | pywasm.
"""
import os

KNOWN = ("native", "wasm", "wasmtime", "pywasm")


class BackendUnavailable(RuntimeError):
    pass


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
