"""The wasm backend: the same C core as supertok.wasm (wasm32, no imports), run by wasmtime
or by pywasm (a pure-Python interpreter: slow, but installs anywhere).

A runner knows how to call an export and move bytes in and out of the module's memory; the
backend on top is the same for both. One module instance per backend, used under a lock:
wasm instances are not re-entrant.

Everything the backend creates in the module's memory is freed: call buffers before the call
returns, and core objects (pre-tokenizers, encodings with their image, UBE stream states) when
their Python owner (_Handle) goes, or at once through encoding_free / _Handle.close.
"""
import atexit
import os
import struct
import threading
import weakref

from . import BackendUnavailable, id_list
from .._status import BUFFER_TOO_SMALL, INVALID_ARGUMENT, OK
from .base import Backend, HandleCache

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

    def memory_size(self):
        """Bytes of the module's linear memory (it grows, never shrinks)."""
        return self._mem.data_len(self._store)


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

    def memory_size(self):
        return len(self._mem.data)


class _Handle:
    """A core object in the module's memory (pre-tokenizer, encoding, UBE stream state), owned
    by Python. When this object goes, a finalizer queues its frees (it may run inside any call,
    the cyclic GC running where it likes, while the lock is held: so it only queues) and the
    next call does them; close() frees at once. frees: (export, pointer) pairs, in order (an
    encoding before the image it borrows)."""
    __slots__ = ("ptr", "_finalizer", "__weakref__")

    def __init__(self, backend, ptr, frees):
        self.ptr = ptr
        self._finalizer = weakref.finalize(self, backend._pending_free.append, frees)
        self._finalizer.atexit = False  # at exit the module goes anyway

    def __repr__(self):
        return "<wasm handle 0x%x>" % self.ptr


class _Locked:
    """`with backend._locked:` holds the module for one call, freeing what was queued first."""
    __slots__ = ("_b",)

    def __init__(self, backend):
        self._b = backend

    def __enter__(self):
        self._b._lock.acquire()
        try:
            self._b._drain_frees()
        except BaseException:
            self._b._lock.release()
            raise

    def __exit__(self, *exc):
        self._b._lock.release()


_ERR_SIZE = 256  # the error block: room for the st_error struct (152 bytes) of the C API to come


class WasmBackend(Backend):
    def __init__(self, runner):
        self._r = runner
        self.name = runner.name
        self.prefers_image = getattr(runner, "prefers_image", False)
        self._lock = threading.Lock()
        self._locked = _Locked(self)
        self._scratch = self._r.call("st_malloc", 16)  # out-params other than errors: 4 x u32
        self._err = self._r.call("st_malloc", _ERR_SIZE)  # every call's error report (_read_error)
        self._pretokenizers = HandleCache()
        # (export, pointer) frees of handles whose Python owner is gone (see _Handle)
        self._pending_free = []

    def _drain_frees(self):
        while self._pending_free:
            for fn, ptr in self._pending_free.pop():
                self._r.call(fn, ptr)

    def _own(self, ptr, *frees):
        """A _Handle for ptr, freed by the (export, pointer) pairs frees."""
        return _Handle(self, ptr, frees)

    def _release(self, handle):
        """Free a handle's objects now; idempotent."""
        info = handle._finalizer.detach()
        if info is not None:
            with self._locked:
                for fn, ptr in info[2][0]:
                    self._r.call(fn, ptr)
        handle.ptr = 0

    def memory_size(self):
        """Bytes of the module's linear memory (tests watch it for leaks)."""
        with self._locked:
            return self._r.memory_size()

    # -- memory helpers (wasm32: size_t and pointers are u32) --
    def _u32(self, ptr):
        return struct.unpack("<I", self._r.read(ptr, 4))[0]

    def _read_error(self):
        """(offset, input) of the last failed call, from the error block self._err that every
        fallible call is given. Today's C API: a size_t err_offset at self._err and, for the
        encoding constructors, an int "in specials" at self._err + 8 (input 1 = the special
        tokens). THE one place that reads errors: switching to the st_error struct changes
        this method (and the calls' last argument) only. The st_error layout to read then
        (fixed widths, the same in wasm32): status u32 @0, unit u32 @4, offset u64 @8, line u64
        @16, token u32 @24, input u32 @28, message char[120] @32 (152 bytes; _ERR_SIZE is 256)."""
        off, ins = struct.unpack("<I4xI", self._r.read(self._err, 12))
        return off, ins

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
        ptr = self._r.call("st_malloc", len(data) or 1)
        if not ptr:
            raise MemoryError("wasm module out of memory (%d bytes)" % len(data))
        self._r.write(ptr, data)
        return ptr

    def _alloc(self, size):
        ptr = self._r.call("st_malloc", size or 1)
        if not ptr:
            raise MemoryError("wasm module out of memory (%d bytes)" % size)
        return ptr

    def _free(self, *ptrs):
        for p in ptrs:
            if p:
                self._r.call("st_free", p)

    def _call_io(self, name, pre, data, mid, cap, unit, fmt):
        """The shape most core calls share: name(*pre, text, len, *mid, out, cap, &n, &err).
        Under the lock: data into the module, a block of cap units for the output; returns
        the output items, everything freed; raises on failure."""
        with self._locked:
            tp = self._put(data)
            op = 0
            try:
                op = self._alloc(unit * cap or unit)
                st = self._r.call(name, *pre, tp, len(data), *mid, op, cap, self._scratch, self._err)
                out = off = None
                if st == OK:
                    n = self._u32(self._scratch)
                    raw = self._r.read(op, unit * n)
                    out = raw if fmt is None else list(struct.unpack("<%d%s" % (n, fmt), raw))
                else:
                    off, _ = self._read_error()
            finally:
                self._free(op, tp)
        if st != OK:
            self._raise(st, off, "text")
        return out

    # -- library information --
    def version(self):
        with self._locked:
            return self._cstr(self._r.call("st_version_str"))

    def unicode_version(self):
        with self._locked:
            return self._cstr(self._r.call("st_unicode_version"))

    def status_str(self, status):
        with self._locked:
            return self._cstr(self._r.call("st_status_str", status))

    def script_names(self):
        with self._locked:
            n = self._r.call("st_script_count")
            return [self._cstr(self._r.call("st_script_name", i)) for i in range(n)]

    def script_of(self, cp):
        with self._locked:
            r = self._r.call("st_script_of", cp)
        return r - (1 << 32) if r >= (1 << 31) else r

    def _fail(self, status, offset, what, items=None):
        self._raise(status, offset, what, items)

    # -- pre-tokenizers --
    def pretokenizer(self, pattern, flags, scripts):
        key = (pattern, flags, scripts)
        h = self._pretokenizers.get(key)
        if h is None:
            with self._locked:
                sp = self._put(scripts) if scripts is not None else 0
                try:
                    st = self._r.call("st_pretokenizer_new", pattern, flags, sp,
                                      0 if scripts is None else len(scripts), 0, self._scratch, self._err)
                    if st == OK:
                        ptr = self._u32(self._scratch)
                        h = self._own(ptr, ("st_pretokenizer_free", ptr))
                    else:
                        off, _ = self._read_error()
                finally:
                    self._free(sp)
            if st != OK:
                self._raise(st, off, "pre-tokenizer options")
            self._pretokenizers.put(key, h)
        return h

    def pretokenize_ends(self, handle, data, codepoints):
        return self._call_io("st_pretokenize", (handle.ptr,), data, (1 if codepoints else 0,), len(data), 4, "I")

    def pretokenize_join(self, handle, data, sep):
        return self._call_io("st_pretokenize_join", (handle.ptr,), data, (sep,), 2 * len(data), 1, None)

    def pretokenize_count(self, handle, data):
        with self._locked:
            tp = self._put(data)
            try:
                st = self._r.call("st_pretokenize_count", handle.ptr, tp, len(data), self._scratch, self._err)
                n = self._u32(self._scratch)
                off = None if st == OK else self._read_error()[0]
            finally:
                self._free(tp)
        if st != OK:
            self._raise(st, off, "text")
        return n

    def utf8_validate(self, data):
        with self._locked:
            tp = self._put(data)
            try:
                st = self._r.call("st_utf8_validate", tp, len(data), self._err)
                off = None if st == OK else self._read_error()[0]
            finally:
                self._free(tp)
        return off

    # -- encodings --
    def encoding_new(self, ranks, specials, pattern):
        with self._locked:
            rp = self._put(ranks)
            sp = 0
            try:
                sp = self._put(specials)
                st = self._r.call("st_encoding_new_tiktoken", rp, len(ranks), sp, len(specials), pattern, 0,
                                  self._scratch, self._err, self._err + 8)
                h = self._u32(self._scratch)
                off, ins = (None, 0) if st == OK else self._read_error()
            finally:
                self._free(sp, rp)
        if st != OK:
            self._raise(st, off, "special tokens" if ins else "rank file")
        return self._own(h, ("st_encoding_free", h))

    def encoding_new_merges(self, alphabet, merges, specials, pattern):
        packed = struct.pack("<%dI" % len(merges), *merges)
        with self._locked:
            mp = self._put(packed) if merges else 0
            sp = 0
            try:
                sp = self._put(specials)
                st = self._r.call("st_encoding_new_merges", alphabet, mp, len(merges) // 2, sp, len(specials),
                                  pattern, 0, self._scratch, self._err, self._err + 8)
                h = self._u32(self._scratch)
                off, ins = (None, 0) if st == OK else self._read_error()
            finally:
                self._free(sp, mp)
        if st != OK:
            self._raise(st, off, "special tokens" if ins else "merge rules")
        return self._own(h, ("st_encoding_free", h))

    def encoding_from_image(self, image):
        """The image is written into the module's memory and stays there for the encoding's
        life (freed after it): nothing inside wasm reads it through at load (pywasm runs ~0.2M
        instructions/s)."""
        with self._locked:
            ip = self._put(image)
            st = None
            try:
                st = self._r.call("st_encoding_from_image", ip, len(image), 0, self._scratch, self._err)
                h = self._u32(self._scratch)
                off = None if st == OK else self._read_error()[0]
            finally:
                if st != OK:
                    self._free(ip)
        if st != OK:
            self._raise(st, off, "vocabulary image")
        return self._own(h, ("st_encoding_free", h), ("st_free", ip))

    def encoding_free(self, enc):
        self._release(enc)

    def alphabet(self, enc):
        with self._locked:
            return self._r.call("st_encoding_alphabet", enc.ptr)

    def prepare(self, enc):
        with self._locked:
            st = self._r.call("st_encoding_prepare", enc.ptr)
        if st == INVALID_ARGUMENT:  # an encoding that never uses the tables
            return False
        if st != OK:
            self._raise(st, None, "prepare")
        return True

    def save_image(self, enc):
        with self._locked:
            size_p = self._scratch
            self._r.call("st_encoding_save_image", enc.ptr, 0, 0, size_p)
            size = self._u32(size_p)
            op = self._alloc(size)
            try:
                st = self._r.call("st_encoding_save_image", enc.ptr, op, size, size_p)
                out = self._r.read(op, size) if st == OK else None
            finally:
                self._free(op)
        if st != OK:
            self._raise(st, None, "image")
        return out

    def n_vocab(self, enc):
        with self._locked:
            return self._r.call("st_encoding_n_vocab", enc.ptr)

    def special_ids(self, enc):
        with self._locked:
            n = self._r.call("st_encoding_n_special", enc.ptr)
            return [self._r.call("st_encoding_special_id", enc.ptr, i) for i in range(n)]

    def _put_allowed(self, allowed):
        return self._put(struct.pack("<%dI" % len(allowed), *allowed)) if allowed else 0

    def encode(self, enc, data, allowed, want_starts=False):
        with self._locked:
            tp = self._put(data)
            ap = ids = starts = 0
            try:
                ap = self._put_allowed(allowed)
                cap = len(data)
                ids = self._alloc(4 * cap)
                starts = self._alloc(4 * cap) if want_starts else 0
                st = self._r.call("st_encode", enc.ptr, tp, len(data), ap, len(allowed), ids, starts, cap,
                                  self._scratch, self._err)
                out = st_out = off = None
                if st == OK:
                    n = self._u32(self._scratch)
                    out = id_list(self._r.read(ids, 4 * n), n)
                    if want_starts:
                        st_out = list(struct.unpack("<%dI" % n, self._r.read(starts, 4 * n)))
                else:
                    off = self._read_error()[0]
            finally:
                self._free(starts, ids, ap, tp)
        if st != OK:
            self._raise(st, off, "text")
        return (out, st_out) if want_starts else out

    def encode_many(self, enc, datas, allowed):
        """One st_encode_many call for the batch (the module runs one call at a time)."""
        offsets = [0]
        for d in datas:
            offsets.append(offsets[-1] + len(d))
        buf = b"".join(datas)
        with self._locked:
            tp = self._put(buf)
            op = ap = ids = counts = 0
            try:
                op = self._put(struct.pack("<%dI" % len(offsets), *offsets))
                ap = self._put_allowed(allowed)
                cap = len(buf)
                ids = self._alloc(4 * cap)
                counts = self._alloc(4 * len(datas))
                st = self._r.call("st_encode_many", enc.ptr, tp, op, len(datas), ap, len(allowed), ids, cap, counts,
                                  self._scratch, self._err)
                flat = ns = off = None
                if st == OK:
                    n = self._u32(self._scratch)
                    flat = id_list(self._r.read(ids, 4 * n), n)
                    ns = struct.unpack("<%dI" % len(datas), self._r.read(counts, 4 * len(datas)))
                else:
                    off = self._read_error()[0]
            finally:
                self._free(counts, ids, ap, op, tp)
        if st != OK:
            self._raise(st, off, "text")
        out, k = [], 0
        for c in ns:
            out.append(flat[k:k + c])
            k += c
        return out

    def encode_count(self, enc, data, allowed):
        with self._locked:
            tp = self._put(data)
            ap = 0
            try:
                ap = self._put_allowed(allowed)
                st = self._r.call("st_encode_count", enc.ptr, tp, len(data), ap, len(allowed), self._scratch, self._err)
                n = self._u32(self._scratch)
                off = None if st == OK else self._read_error()[0]
            finally:
                self._free(ap, tp)
        if st != OK:
            self._raise(st, off, "text")
        return n

    def _decode_call(self, name, enc, ids, flags):
        """st_decode / st_decode_text (flags None: st_decode): size query, then the bytes."""
        try:
            packed = struct.pack("<%dI" % len(ids), *ids)
        except struct.error:  # ids outside u32: tiktoken's error and message
            raise OverflowError("out of range integral type conversion attempted") from None
        mid = () if flags is None else (flags,)
        with self._locked:
            ip = self._put(packed) if ids else 0
            try:
                size_p = self._scratch
                st = self._r.call(name, enc.ptr, ip, len(ids), *mid, 0, 0, size_p, self._err)
                out = b""
                if st == BUFFER_TOO_SMALL:  # the size query
                    size = self._u32(size_p)
                    op = self._alloc(size)
                    try:
                        st = self._r.call(name, enc.ptr, ip, len(ids), *mid, op, size, size_p, self._err)
                        if st == OK:
                            out = self._r.read(op, size)
                    finally:
                        self._free(op)
                off = None if st == OK else self._read_error()[0]
            finally:
                self._free(ip)
        if st != OK:
            self._raise(st, off, "ids", ids)  # KeyError for an id that is no token
        return out

    def decode_bytes(self, enc, ids):
        return self._decode_call("st_decode", enc, ids, None)

    def decode_text(self, enc, ids, flags):
        return self._decode_call("st_decode_text", enc, ids, flags)

    def token_bytes(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        with self._locked:
            ptr_p, size_p = self._scratch, self._scratch + 4
            st = self._r.call("st_token_bytes", enc.ptr, token, ptr_p, size_p)
            out = self._r.read(self._u32(ptr_p), self._u32(size_p)) if st == OK else None
        if st != OK:
            self._raise(st, None, "token", token)  # KeyError
        return out

    def token_symbols(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        with self._locked:
            n_p = self._scratch
            st = self._r.call("st_token_symbols", enc.ptr, token, 0, 0, n_p)
            out = []
            if st == BUFFER_TOO_SMALL:
                n = self._u32(n_p)
                op = self._alloc(2 * n)
                try:
                    st = self._r.call("st_token_symbols", enc.ptr, token, op, n, n_p)
                    if st == OK:
                        out = list(struct.unpack("<%dH" % n, self._r.read(op, 2 * n)))
                finally:
                    self._free(op)
        if st != OK:
            self._raise(st, None, "token", token)  # KeyError
        return out

    # -- UBE --
    def ube_encode_symbols(self, data):
        return self._call_io("st_ube_encode_symbols", (), data, (), len(data), 2, "H")

    def ube_stream_new(self):
        with self._locked:
            size = self._r.call("st_ube_stream_size")
            p = self._alloc(size)
            self._r.call("st_ube_stream_init", p)
        return self._own(p, ("st_free", p))

    def ube_stream_feed(self, state, symbols, flags):
        packed = struct.pack("<%dH" % len(symbols), *symbols)
        with self._locked:
            ip = self._put(packed)
            op = 0
            try:
                cap = 3 * len(symbols) + 3
                op = self._alloc(cap)
                st = self._r.call("st_ube_stream_feed", state.ptr, ip, len(symbols), flags, op, cap, self._scratch,
                                  self._err)
                if st == OK:
                    out = self._r.read(op, self._u32(self._scratch))
                else:
                    off = self._read_error()[0]
            finally:
                self._free(op, ip)
        if st != OK:
            self._raise(st, off, "symbols")
        return out
