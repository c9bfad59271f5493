"""The wasm backend: the same C core as supertok.wasm (wasm32, no imports), run by wasmtime
or by pywasm (a pure-Python interpreter: slow, but installs anywhere).

A runner knows how to call an export and move bytes in and out of the module's memory; the
backend on top is the same for both. One module instance per backend, used under a lock:
wasm instances are not re-entrant.
"""
import atexit
import os
import struct
import threading
import weakref

from . import BackendUnavailable, id_list
from .._status import OK, SupertokError

WASM_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "supertok.wasm")


def _module_bytes():
    try:
        with open(WASM_PATH, "rb") as f:
            return f.read()
    except OSError as exc:
        raise BackendUnavailable("supertok.wasm is missing from the package (%s)" % exc) from None


class WasmtimeRunner:
    name = "wasmtime"

    def __init__(self):
        try:
            import wasmtime
        except ImportError:
            raise BackendUnavailable("wasmtime is not installed (pip install wasmtime)") from None
        self._engine = wasmtime.Engine()
        self._store = wasmtime.Store(self._engine)
        self._module = wasmtime.Module(self._engine, _module_bytes())
        self._instance = wasmtime.Instance(self._store, self._module, [])
        self._exports = self._instance.exports(self._store)
        self._mem = self._exports["memory"]
        self._funcs = {}
        # wasmtime's finalizers fail if they run after interpreter teardown has begun: release
        # everything, in order, while the modules are still there
        atexit.register(self._close)

    def _close(self):
        self._funcs = self._mem = self._exports = None
        self._instance = self._store = self._module = self._engine = None

    def call(self, name, *args):
        f = self._funcs.get(name)
        if f is None:
            f = self._funcs[name] = self._exports[name]
        return f(self._store, *args)

    def read(self, ptr, n):
        return bytes(self._mem.read(self._store, ptr, ptr + n))

    def write(self, ptr, data):
        self._mem.write(self._store, data, ptr)


class PywasmRunner:
    name = "pywasm"
    prefers_image = True  # parsing a rank file in an interpreter takes minutes

    def __init__(self):
        try:
            import pywasm
        except ImportError:
            raise BackendUnavailable("pywasm is not installed (pip install pywasm)") from None
        import io
        self._rt = pywasm.core.Runtime()
        self._inst = self._rt.instance(pywasm.core.ModuleDesc.from_reader(io.BytesIO(_module_bytes())))
        self._mem = self._rt.exported_memory(self._inst, "memory")

    def call(self, name, *args):
        r = self._rt.invocate(self._inst, name, list(args))
        return (r[0] & 0xFFFFFFFF) if r else None

    def read(self, ptr, n):
        return bytes(self._mem.data[ptr:ptr + n])

    def write(self, ptr, data):
        self._mem.data[ptr:ptr + len(data)] = data


class _WasmPointer:
    """A pointer into the module's memory whose block is freed when this object goes."""
    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr


class WasmBackend:
    def __init__(self, runner):
        self._r = runner
        self.name = runner.name
        self.prefers_image = getattr(runner, "prefers_image", False)
        self._lock = threading.Lock()
        self._scratch = self._r.call("st_malloc", 16)  # out-params: 4 x u32
        self._pretokenizers = {}
        # Blocks whose Python owner is gone. A finalizer may run inside any call (the cyclic GC
        # runs where it likes) while the lock is held, so it only queues the pointer; the next
        # call frees it.
        self._pending_free = []

    def _drain_frees(self):
        while self._pending_free:
            self._r.call("st_free", self._pending_free.pop())

    # -- memory helpers (wasm32: size_t and pointers are u32) --
    def _u32(self, ptr):
        return struct.unpack("<I", self._r.read(ptr, 4))[0]

    def _cstr(self, ptr):
        out = bytearray()
        while True:
            chunk = self._r.read(ptr, 64)
            k = chunk.find(b"\0")
            if k >= 0:
                out += chunk[:k]
                return out.decode()
            out += chunk
            ptr += 64

    def _put(self, data):
        self._drain_frees()
        ptr = self._r.call("st_malloc", len(data) or 1)
        if not ptr:
            raise MemoryError("wasm module out of memory (%d bytes)" % len(data))
        self._r.write(ptr, data)
        return ptr

    def _call_io(self, name, pre, data, mid, cap, unit, fmt):
        """The shape most core calls share: name(*pre, text, len, *mid, out, cap, &n, &err).
        Under the lock: data into the module, a block of cap units for the output; returns
        (status, output items or None, error offset), everything freed."""
        with self._lock:
            tp = self._put(data)
            op = self._r.call("st_malloc", unit * cap or unit)
            n_p, err = self._scratch, self._scratch + 4
            try:
                st = self._r.call(name, *pre, tp, len(data), *mid, op, cap, n_p, err)
                n, off = self._u32(n_p), self._u32(err)
                out = None
                if st == OK:
                    raw = self._r.read(op, unit * n)
                    out = raw if fmt is None else list(struct.unpack("<%d%s" % (n, fmt), raw))
            finally:
                self._r.call("st_free", op)
                self._r.call("st_free", tp)
        if st != OK:
            self._fail(st, off, "text")
        return out

    def version(self):
        with self._lock:
            return self._cstr(self._r.call("st_version_str"))

    def unicode_version(self):
        with self._lock:
            return self._cstr(self._r.call("st_unicode_version"))

    def status_str(self, status):
        with self._lock:
            return self._cstr(self._r.call("st_status_str", status))

    def script_names(self):
        with self._lock:
            n = self._r.call("st_script_count")
            return [self._cstr(self._r.call("st_script_name", i)) for i in range(n)]

    def script_of(self, cp):
        with self._lock:
            r = self._r.call("st_script_of", cp)
        return r - (1 << 32) if r >= (1 << 31) else r

    def _fail(self, status, offset, what):
        raise SupertokError(status, self.status_str(status), offset, what)

    def pretokenizer(self, pattern, flags, scripts):
        key = (pattern, flags, scripts)
        h = self._pretokenizers.get(key)
        if h is None:
            with self._lock:
                sp = self._put(scripts) if scripts is not None else 0
                out, err = self._scratch, self._scratch + 4
                st = self._r.call("st_pretokenizer_new", pattern, flags, sp,
                                  0 if scripts is None else len(scripts), 0, out, err)
                if sp:
                    self._r.call("st_free", sp)
                h, off = self._u32(out), self._u32(err)
            if st != OK:
                self._fail(st, off, "pre-tokenizer options")
            self._pretokenizers[key] = h
        return h

    def pretokenize_ends(self, handle, data, codepoints):
        return self._call_io("st_pretokenize", (handle,), data, (1 if codepoints else 0,), len(data), 4, "I")

    def pretokenize_join(self, handle, data, sep):
        return self._call_io("st_pretokenize_join", (handle,), data, (sep,), 2 * len(data), 1, None)

    def pretokenize_count(self, handle, data):
        with self._lock:
            tp = self._put(data)
            n_p, err = self._scratch, self._scratch + 4
            try:
                st = self._r.call("st_pretokenize_count", handle, tp, len(data), n_p, err)
                n, off = self._u32(n_p), self._u32(err)
            finally:
                self._r.call("st_free", tp)
        if st != OK:
            self._fail(st, off, "text")
        return n

    def utf8_validate(self, data):
        with self._lock:
            tp = self._put(data)
            err = self._scratch + 4
            try:
                st = self._r.call("st_utf8_validate", tp, len(data), err)
                off = self._u32(err)
            finally:
                self._r.call("st_free", tp)
        return None if st == OK else off


def _encoding_methods():
    """Encoding calls of WasmBackend (kept apart from the pre-tokenizer ones above)."""

    def encoding_new(self, ranks, specials, pattern):
        with self._lock:
            rp = self._put(ranks)
            sp = self._put(specials)
            out, err, in_spec = self._scratch, self._scratch + 4, self._scratch + 8
            try:
                st = self._r.call("st_encoding_new_tiktoken", rp, len(ranks), sp, len(specials), pattern, 0,
                                  out, err, in_spec)
                h, off, ins = self._u32(out), self._u32(err), self._u32(in_spec)
            finally:
                self._r.call("st_free", sp)
                self._r.call("st_free", rp)
        if st != OK:
            self._fail(st, off, "special tokens" if ins else "rank file")
        return h

    def encoding_new_merges(self, alphabet, merges, specials, pattern):
        packed = struct.pack("<%dI" % len(merges), *merges)
        with self._lock:
            mp = self._put(packed) if merges else 0
            sp = self._put(specials)
            out, err, in_spec = self._scratch, self._scratch + 4, self._scratch + 8
            try:
                st = self._r.call("st_encoding_new_merges", alphabet, mp, len(merges) // 2, sp, len(specials),
                                  pattern, 0, out, err, in_spec)
                h, off, ins = self._u32(out), self._u32(err), self._u32(in_spec)
            finally:
                self._r.call("st_free", sp)
                if mp:
                    self._r.call("st_free", mp)
        if st != OK:
            self._fail(st, off, "special tokens" if ins else "merge rules")
        return h

    def alphabet(self, enc):
        with self._lock:
            return self._r.call("st_encoding_alphabet", enc)

    def prepare(self, enc):
        with self._lock:
            return self._r.call("st_encoding_prepare", enc)

    def encoding_from_image(self, image):
        """The image is written into the module's memory and stays there for the encoding's
        life: nothing inside wasm reads it through at load (pywasm runs ~0.2M instructions/s)."""
        with self._lock:
            ip = self._put(image)
            out, err = self._scratch, self._scratch + 4
            st = self._r.call("st_encoding_from_image", ip, len(image), 0, out, err)
            h, off = self._u32(out), self._u32(err)
            if st != OK:
                self._r.call("st_free", ip)
        if st != OK:
            self._fail(st, off, "vocabulary image")
        return h

    def save_image(self, enc):
        with self._lock:
            size_p = self._scratch
            self._r.call("st_encoding_save_image", enc, 0, 0, size_p)
            size = self._u32(size_p)
            op = self._r.call("st_malloc", size)
            st = self._r.call("st_encoding_save_image", enc, op, size, size_p)
            out = self._r.read(op, size) if st == OK else None
            self._r.call("st_free", op)
        if st != OK:
            self._fail(st, None, "image")
        return out

    def n_vocab(self, enc):
        with self._lock:
            return self._r.call("st_encoding_n_vocab", enc)

    def special_ids(self, enc):
        with self._lock:
            n = self._r.call("st_encoding_n_special", enc)
            return [self._r.call("st_encoding_special_id", enc, i) for i in range(n)]

    def encode(self, enc, data, allowed, want_starts=False):
        with self._lock:
            tp = self._put(data)
            ap = self._put(struct.pack("<%dI" % len(allowed), *allowed)) if allowed else 0
            cap = len(data)
            ids = self._r.call("st_malloc", 4 * cap or 4)
            starts = self._r.call("st_malloc", 4 * cap or 4) if want_starts else 0
            n_p, err = self._scratch, self._scratch + 4
            try:
                st = self._r.call("st_encode", enc, tp, len(data), ap, len(allowed), ids, starts, cap, n_p, err)
                n, off = self._u32(n_p), self._u32(err)
                out = st_out = None
                if st == OK:
                    out = id_list(self._r.read(ids, 4 * n), n)
                    if want_starts:
                        st_out = list(struct.unpack("<%dI" % n, self._r.read(starts, 4 * n)))
            finally:
                for p in (starts, ids, ap, tp):
                    if p:
                        self._r.call("st_free", p)
        if st != OK:
            self._fail(st, off, "text")
        return (out, st_out) if want_starts else out

    def encode_count(self, enc, data, allowed):
        with self._lock:
            tp = self._put(data)
            ap = self._put(struct.pack("<%dI" % len(allowed), *allowed)) if allowed else 0
            n_p, err = self._scratch, self._scratch + 4
            try:
                st = self._r.call("st_encode_count", enc, tp, len(data), ap, len(allowed), n_p, err)
                n, off = self._u32(n_p), self._u32(err)
            finally:
                for p in (ap, tp):
                    if p:
                        self._r.call("st_free", p)
        if st != OK:
            self._fail(st, off, "text")
        return n

    def decode_bytes(self, enc, ids):
        try:
            packed = struct.pack("<%dI" % len(ids), *ids)
        except struct.error:
            raise OverflowError("out of range integral type conversion attempted") from None
        with self._lock:
            ip = self._put(packed)
            size_p, err = self._scratch, self._scratch + 4
            try:
                st = self._r.call("st_decode", enc, ip, len(ids), 0, 0, size_p, err)
                size, off = self._u32(size_p), self._u32(err)
                out = b""
                if st == 4:  # the size query
                    op = self._r.call("st_malloc", size or 1)
                    st = self._r.call("st_decode", enc, ip, len(ids), op, size, size_p, err)
                    if st == OK:
                        out = self._r.read(op, size)
                    self._r.call("st_free", op)
            finally:
                self._r.call("st_free", ip)
        if st == 8:
            raise KeyError("Invalid token for decoding: %d" % ids[off])
        if st != OK:
            self._fail(st, off, "ids")
        return out

    def token_bytes(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        with self._lock:
            ptr_p, size_p = self._scratch, self._scratch + 4
            st = self._r.call("st_token_bytes", enc, token, ptr_p, size_p)
            out = self._r.read(self._u32(ptr_p), self._u32(size_p)) if st == OK else None
        if st != OK:
            raise KeyError(str(token))
        return out

    def token_symbols(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        with self._lock:
            n_p = self._scratch
            st = self._r.call("st_token_symbols", enc, token, 0, 0, n_p)
            n = self._u32(n_p)
            out = []
            if st == 4:
                op = self._r.call("st_malloc", 2 * n)
                st = self._r.call("st_token_symbols", enc, token, op, n, n_p)
                if st == OK:
                    out = list(struct.unpack("<%dH" % n, self._r.read(op, 2 * n)))
                self._r.call("st_free", op)
        if st != OK:
            raise KeyError(str(token))
        return out

    def decode_text(self, enc, ids, flags):
        try:
            packed = struct.pack("<%dI" % len(ids), *ids)
        except struct.error:
            raise OverflowError("out of range integral type conversion attempted") from None
        with self._lock:
            ip = self._put(packed) if ids else 0
            size_p, err = self._scratch, self._scratch + 4
            try:
                st = self._r.call("st_decode_text", enc, ip, len(ids), flags, 0, 0, size_p, err)
                size, off = self._u32(size_p), self._u32(err)
                out = b""
                if st == 4:
                    op = self._r.call("st_malloc", size or 1)
                    st = self._r.call("st_decode_text", enc, ip, len(ids), flags, op, size, size_p, err)
                    off = self._u32(err)
                    if st == OK:
                        out = self._r.read(op, size)
                    self._r.call("st_free", op)
            finally:
                if ip:
                    self._r.call("st_free", ip)
        return st, out, off

    def ube_encode_symbols(self, data):
        return self._call_io("st_ube_encode_symbols", (), data, (), len(data), 2, "H")

    def ube_stream_new(self):
        with self._lock:
            self._drain_frees()
            size = self._r.call("st_ube_stream_size")
            p = self._r.call("st_malloc", size)
            self._r.call("st_ube_stream_init", p)
        handle = _WasmPointer(p)
        weakref.finalize(handle, self._pending_free.append, p)
        return handle

    def ube_stream_feed(self, state, symbols, flags):
        packed = struct.pack("<%dH" % len(symbols), *symbols)
        with self._lock:
            ip = self._put(packed)
            cap = 3 * len(symbols) + 3
            op = self._r.call("st_malloc", cap)
            size_p, err = self._scratch, self._scratch + 4
            try:
                st = self._r.call("st_ube_stream_feed", state.ptr, ip, len(symbols), flags, op, cap, size_p, err)
                size, off = self._u32(size_p), self._u32(err)
                out = self._r.read(op, size) if st == OK else b""
            finally:
                self._r.call("st_free", op)
                self._r.call("st_free", ip)
        return st, out, off

    return {f.__name__: f for f in (ube_encode_symbols, ube_stream_new, ube_stream_feed,
                                    encoding_new, encoding_new_merges, alphabet, prepare, encoding_from_image, save_image, n_vocab,
                                    special_ids, encode, encode_count, decode_bytes, token_bytes, token_symbols,
                                    decode_text)}


for _name, _fn in _encoding_methods().items():
    setattr(WasmBackend, _name, _fn)
