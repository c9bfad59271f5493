"""The wasm backend: the same C core as supertok.wasm (wasm32, no imports), run by wasmtime
or by pywasm (a pure-Python interpreter: slow, but installs anywhere).

A runner knows how to call an export and move bytes in and out of the module's memory; the
backend on top is the same for both. One module instance per backend, used under a lock:
wasm instances are not re-entrant.

Everything the backend creates in the module's memory is freed or reused: a call's text and
outputs go through a few reusable blocks (WasmBackend._io: kept up to 1 MiB each, grown only
when a call needs more; a bigger call's blocks are freed when it returns); other call buffers
are freed before the call returns; core objects (pre-tokenizers, encodings with their image,
decoders, UBE stream states) when their Python owner (_Handle) goes, or at once through
encoding_free.

Every fallible call is given the backend's one st_error block as its last argument; the report
is read in one place (WasmBackend._read_error) and raised through _status.raise_error with the
same `what` names as the native backend.
"""
import atexit
import os
import struct
import sys
import threading
import weakref

from . import BackendUnavailable
from .._status import BUFFER_TOO_SMALL, INVALID_ARGUMENT, OK, raise_error
from .base import (SIZE_MAX_WASM32, CACHE_INFO_FIELDS, Backend, HandleCache, check_int, check_section,
                   joined_with_ends, pair_triples, register_fork_state)

WASM_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "supertok.wasm")


_U32 = struct.Struct("<I")
_LITTLE = sys.byteorder == "little"


def _refuse_args(name, args, bits):
    """The module's integer arguments are unsigned and 32 or 64 bits wide: a value outside that
    range is refused, never wrapped modulo 2**32 or 2**64 (the backend's methods check the values
    a caller chose first, naming them; this is the guard behind them)."""
    for k, (a, m) in enumerate(zip(args, bits)):
        if not isinstance(a, int) or not 0 <= a <= m:
            raise ValueError("argument %d of %s is %r, outside the module's %d-bit unsigned range (0 to %d)"
                             % (k, getattr(name, "__name__", name), a, m.bit_length(), m))
    raise ValueError("the arguments of %s do not fit its parameters" % getattr(name, "__name__", name))


def _module_bytes():
    try:
        with open(WASM_PATH, "rb") as f:
            return f.read()
    except OSError as exc:
        raise BackendUnavailable("supertok.wasm is missing from the package (%s)" % exc) from None


class WasmtimeRunner:
    """wasmtime through its C API. wasmtime's Python `Func.__call__` looks the function's type
    up, converts every argument through `Val` and builds a result list on every call: about
    80 us a call here, most of a short encode. So each export is bound once (_bind) to a
    closure that packs its arguments into one reusable wasmtime_val_raw_t array (one
    struct.pack_into, the kinds fixed from the export's type at bind time) and calls
    wasmtime_func_call_unchecked; memory is read and written with one ctypes copy at the
    memory's current base address. Where wasmtime's internals are not as expected (another
    wasmtime version), the public API is used instead: slower, same results."""
    name = "wasmtime"

    def __init__(self):
        try:
            import wasmtime
        except ImportError:
            raise BackendUnavailable("wasmtime is not installed (pip install wasmtime)") from None
        self._wt = wasmtime
        # On a 64-bit host a wasm32 memory fits in wasmtime's default 4 GiB reservation, so it
        # can stay where it is: then the host address of the memory is fixed and read/write go
        # through one memoryview, rebuilt only when the memory grows (see _grown).
        self._static = False
        config = None
        if sys.maxsize > 2 ** 32:
            try:
                config = wasmtime.Config()
                config.memory_reservation = 1 << 32
                config.memory_may_move = False
                self._static = True
            except Exception:  # an older wasmtime: the memory may move, read/write ask each time
                config, self._static = None, False
        self._engine = wasmtime.Engine(config) if config is not None else wasmtime.Engine()
        self._store = wasmtime.Store(self._engine)
        self._module = wasmtime.Module(self._engine, _module_bytes())
        self._instance = wasmtime.Instance(self._store, self._module, [])
        self._exports = self._instance.exports(self._store)
        self._mem = self._exports["memory"]
        self._funcs = {}
        self._fast = False
        try:
            self._init_fast()
            self._fast = True
        except Exception:  # another wasmtime's internals: the public API (slow, same results)
            self.read, self.write = self._read_public, self._write_public
            self.read_u32s, self.u32 = self._read_u32s_public, self._u32_public
        # wasmtime's finalizers fail if they run after interpreter teardown has begun: release
        # everything, in order, while the modules are still there
        atexit.register(self._close)

    def _init_fast(self):
        import ctypes
        from wasmtime import _ffi as ffi
        self._ffi = ffi
        dll = ffi.dll
        # dll[name] is a fresh function pointer: our argtypes do not touch wasmtime's own
        call = dll["wasmtime_func_call_unchecked"]
        call.restype = ctypes.c_void_p
        call.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        data = dll["wasmtime_memory_data"]
        data.restype = ctypes.c_void_p
        data.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        size = dll["wasmtime_memory_data_size"]
        size.restype = ctypes.c_size_t
        size.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._c_call, self._c_data, self._c_size = call, data, size
        self._ctx = ctypes.cast(self._store._context(), ctypes.c_void_p).value
        self._memaddr = ctypes.addressof(self._mem._memory)
        self._raw_t = ffi.wasmtime_val_raw_t
        self._trap_slot = (ctypes.c_void_p * 1)()
        self._view, self._size = memoryview(b""), 0
        self._refresh()
        # a first call proves the path works here before the backend relies on it
        if self._c_size(self._ctx, self._memaddr) <= 0 or \
                self._bind_fast("st_script_count", self._exports["st_script_count"])() <= 0:
            raise RuntimeError("wasmtime fast path check failed")

    def _close(self):
        self._view = memoryview(b"")
        self._size = 0
        self._funcs = self._mem = self._exports = None
        self._instance = self._store = self._module = self._engine = None

    def _bind(self, name):
        """A callable for export `name`: args in, the first result (as unsigned) or None out."""
        f = self._exports[name]
        self._funcs[name] = fn = self._bind_fast(name, f) if self._fast else self._bind_public(f)
        return fn

    def _bind_public(self, f):
        store = self._store
        ty = f.type(store)
        mask = [0xFFFFFFFF if str(r) == "i32" else 0xFFFFFFFFFFFFFFFF for r in ty.results][:1]

        bits = [0xFFFFFFFF if str(k) == "i32" else 0xFFFFFFFFFFFFFFFF for k in ty.params]

        def public(*args):
            if any(not 0 <= a <= m for a, m in zip(args, bits)):
                _refuse_args(f, args, bits)
            r = f(store, *args)
            return r & mask[0] if mask and r is not None else r
        return public

    def _bind_fast(self, name, f):
        import ctypes
        ty = f.type(self._store)
        kinds = [str(k) for k in ty.params]
        results = [str(k) for k in ty.results]
        if any(k not in ("i32", "i64") for k in kinds + results) or len(results) > 1:
            raise TypeError("export %s has a signature the fast path does not handle" % name)
        slots = max(len(kinds), len(results), 1)
        buf = (self._raw_t * slots)()
        addr = ctypes.addressof(buf)
        mv = memoryview(buf).cast("B")
        size = ctypes.sizeof(self._raw_t)
        # each slot is a 16-byte union; an i32 argument fills its first 4 bytes, an i64 its first 8
        fmt = "<" + "".join(("I%dx" % (size - 4)) if k == "i32" else ("Q%dx" % (size - 8)) for k in kinds)
        pack = struct.Struct(fmt).pack_into
        unpack = struct.Struct("<I" if results == ["i32"] else "<Q").unpack_from if results else None
        nparams = len(kinds)
        bits = [0xFFFFFFFF if k == "i32" else 0xFFFFFFFFFFFFFFFF for k in kinds]
        c_call, ctx, faddr, trap = self._c_call, self._ctx, ctypes.addressof(f._func), self._trap_slot
        taddr = ctypes.addressof(trap)
        runner = self

        def fast(*args):
            if len(args) != nparams:
                raise TypeError("%s takes %d arguments (%d given)" % (name, nparams, len(args)))
            try:
                pack(mv, 0, *args)
            except struct.error:  # a negative or too wide value: never wrapped (the backend names it)
                _refuse_args(name, args, bits)
            if c_call(ctx, faddr, addr, slots, taddr) or trap[0]:
                runner._raise_trap(name)
            return unpack(mv, 0)[0] if unpack else None
        fast._keep = (f, buf)  # the func and the array outlive every call
        return fast

    def _raise_trap(self, name):
        import ctypes
        ffi = self._ffi
        t = self._trap_slot[0]
        self._trap_slot[0] = None
        if t:
            raise self._wt.Trap._from_ptr(ctypes.cast(t, ctypes.POINTER(ffi.wasm_trap_t)))
        raise self._wt.WasmtimeError("wasm call %s failed" % name)

    def call(self, name, *args):
        f = self._funcs.get(name)
        if f is None:
            f = self._bind(name)
        return f(*args)

    def call_u64(self, name, *args):
        """call for an export returning a 64-bit value: the fast path and the public one already
        give i64 results whole (unsigned)."""
        return self.call(name, *args)

    def func(self, name):
        """The bound callable of export name (the backend keeps the ones of its hot paths)."""
        f = self._funcs.get(name)
        return f if f is not None else self._bind(name)

    def _refresh(self):
        """A memoryview of the whole memory as it is now (its size and host address)."""
        import ctypes
        size = self._c_size(self._ctx, self._memaddr)
        base = self._c_data(self._ctx, self._memaddr)
        self._view = memoryview((ctypes.c_ubyte * size).from_address(base)).cast("B")
        self._size = size

    def _span(self, ptr, n):
        """Make self._view cover [ptr, ptr + n): a memory that may move is looked up again
        each time; a fixed one only when it has grown past the view. IndexError outside it."""
        if not self._static or ptr + n > self._size:
            self._refresh()
        if ptr < 0 or n < 0 or ptr + n > self._size:
            raise IndexError("wasm memory access out of bounds (%d + %d)" % (ptr, n))

    def read(self, ptr, n):
        if not self._static or ptr + n > self._size or ptr < 0:
            self._span(ptr, n)
        return self._view[ptr:ptr + n].tobytes()

    def read_u32s(self, ptr, n):
        """n little-endian u32 at ptr as a list of ints, in one step."""
        if not self._static or ptr + 4 * n > self._size or ptr < 0:
            self._span(ptr, 4 * n)
        if _LITTLE:
            return self._view[ptr:ptr + 4 * n].cast("I").tolist()
        return list(struct.unpack_from("<%dI" % n, self._view, ptr))

    def u32(self, ptr):
        if not self._static or ptr + 4 > self._size or ptr < 0:
            self._span(ptr, 4)
        return _U32.unpack_from(self._view, ptr)[0]

    def write(self, ptr, data):
        n = len(data)
        if not self._static or ptr + n > self._size or ptr < 0:
            self._span(ptr, n)
        self._view[ptr:ptr + n] = data

    def _read_public(self, ptr, n):
        return bytes(self._mem.read(self._store, ptr, ptr + n))

    def _write_public(self, ptr, data):
        self._mem.write(self._store, data, ptr)

    def _read_u32s_public(self, ptr, n):
        return list(struct.unpack("<%dI" % n, self._read_public(ptr, 4 * n))) if n else []

    def _u32_public(self, ptr):
        return _U32.unpack(self._read_public(ptr, 4))[0]

    def memory_size(self):
        """Bytes of the module's linear memory (it grows, never shrinks)."""
        if self._fast:
            return self._c_size(self._ctx, self._memaddr)
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
        self._wraps = {}

    def _signed(self, name, args):
        """pywasm takes a parameter's bits as a signed integer of its width (a uint64_t of 2**64 - 1
        is -1 there; wasmtime takes either): the unsigned values the host passes, reinterpreted."""
        wraps = self._wraps.get(name)
        if wraps is None:
            addr = [e for e in self._inst.exps if e.name == name][0].data.data
            wraps = self._wraps[name] = tuple(
                1 << (64 if t.data == 0x7E else 32) for t in self._rt.machine.store.func[addr].type.args)
        return [a - w if isinstance(a, int) and a >= w >> 1 else a for a, w in zip(args, wraps)]

    def call(self, name, *args):
        r = self._rt.invocate(self._inst, name, self._signed(name, args))
        return (r[0] & 0xFFFFFFFF) if r else None

    def call_u64(self, name, *args):
        """call for an export returning a 64-bit value (call masks to 32 bits)."""
        r = self._rt.invocate(self._inst, name, self._signed(name, args))
        return (r[0] & 0xFFFFFFFFFFFFFFFF) if r else None

    def func(self, name):
        return lambda *args: self.call(name, *args)

    def read(self, ptr, n):
        return bytes(self._mem.data[ptr:ptr + n])

    def write(self, ptr, data):
        self._mem.data[ptr:ptr + len(data)] = data

    def read_u32s(self, ptr, n):
        return list(struct.unpack_from("<%dI" % n, self._mem.data, ptr)) if n else []

    def u32(self, ptr):
        return _U32.unpack_from(self._mem.data, ptr)[0]

    def memory_size(self):
        return len(self._mem.data)


class _Handle:
    """A core object in the module's memory (pre-tokenizer, encoding, decoder, UBE stream
    state), owned by Python. When this object goes, a finalizer queues its frees (it may run
    inside any call, the cyclic GC running where it likes, while the lock is held: so it only
    queues) and the next call does them; WasmBackend._release frees at once. frees: (export,
    pointer) pairs, in order (an encoding before the image it borrows). keep: a Python object
    this one borrows (a decoder's encoding handle), kept alive as long as it."""
    __slots__ = ("ptr", "_finalizer", "_keep", "__weakref__")

    def __init__(self, backend, ptr, frees, keep=None):
        self.ptr = ptr
        self._keep = keep
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
        b = self._b
        try:
            if b._temps:  # blocks too big to keep (WasmBackend._io)
                temps, b._temps = b._temps, []
                for p in temps:
                    b._r.call("st_free", p)
        finally:
            b._lock.release()


# The core's st_error report (supertok.h): status u32, unit u32, offset u64, line u64, token u32,
# input u32, kind u32, length u32, message char[120]; fixed widths, so the same 160 bytes in
# wasm32 as natively.
_ERROR = struct.Struct("<IIQQIIII120s")
_ERR_SIZE = _ERROR.size  # 160
# st_special_policy in wasm32: allowed ptr, n_allowed, disallowed ptr, n_disallowed, flags,
# strings ptr, ends ptr
_POLICY = struct.Struct("<IIIIIII")
_SPECIAL_BY_TEXT = 8  # ST_SPECIAL_BY_TEXT
_IN, _OUT, _OUT2, _OUT3 = range(4)  # WasmBackend._io's blocks
_N_BLOCKS = 4
_KEEP = 1 << 20  # the largest block kept between calls
_OFFSETS_CODEPOINTS = 1  # ST_OFFSETS_CODEPOINTS
_UNIT_CODEPOINT = 2      # ST_UNIT_CODEPOINT
_DECODER_STRICT = 2      # ST_UBE_STRICT
_DECODER_FINAL = 1       # ST_UBE_FINAL
_MODEL_KINDS = {1: "rules", 2: "ranks"}  # ST_MODEL_RULES, ST_MODEL_RANKS


def _pack_ids(ids):
    """ids as little-endian uint32; OverflowError (tiktoken's) for an id outside uint32."""
    try:
        return struct.pack("<%dI" % len(ids), *ids)
    except struct.error:
        raise OverflowError("out of range integral type conversion attempted") from None


class WasmBackend(Backend):
    size_max = SIZE_MAX_WASM32  # the module is wasm32
    def __init__(self, runner):
        self._r = runner
        self.name = runner.name
        self.prefers_image = getattr(runner, "prefers_image", False)
        self._lock = threading.Lock()
        self._locked = _Locked(self)
        register_fork_state(self)
        self._scratch = self._r.call("st_malloc", 16)  # out-params other than errors: 4 x u32
        self._unstable = weakref.WeakKeyDictionary()  # encoding handle -> its st_unstable handle
        # reusable blocks in the module's memory for a call's input and outputs (_io): a short
        # call writes its text and reads its ids with no st_malloc/st_free
        self._blocks = [0] * _N_BLOCKS
        self._caps = [0] * _N_BLOCKS
        self._temps = []
        # the exports of the per-call paths, bound once
        self._f_encode = self._r.func("st_encode")
        self._f_encode_many = self._r.func("st_encode_many")
        self._f_encode_count = self._r.func("st_encode_count")
        self._err = self._r.call("st_malloc", _ERR_SIZE)  # every call's st_error (_read_error)
        self._pretokenizers = HandleCache()
        # policies of flags alone, written once into the module and shared (the core only reads them)
        self._flag_policies = {}
        # (export, pointer) frees of handles whose Python owner is gone (see _Handle)
        self._pending_free = []

    # os.fork(): the fork waits for a call in progress on another thread (the module's memory is
    # copied whole, never in the middle of a call); the child gets a free lock of its own
    def _fork_before(self):
        self._lock.acquire()

    def _fork_after_parent(self):
        self._lock.release()

    def _fork_after_child(self):
        self._lock = threading.Lock()

    def _drain_frees(self):
        while self._pending_free:
            for fn, ptr in self._pending_free.pop(0):
                self._r.call(fn, ptr)

    def _own(self, ptr, *frees, keep=None):
        """A _Handle for ptr, freed by the (export, pointer) pairs frees."""
        return _Handle(self, ptr, frees, keep)

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
        return self._r.u32(ptr)

    def _u32s(self, ptr, n):
        return self._r.read_u32s(ptr, n) if n else []

    def _io(self, i, size):
        """The pointer of reusable block i (_IN, _OUT, _OUT2, _OUT3) with room for size bytes.
        Kept between calls and grown only when a call needs more, up to _KEEP bytes; a call
        that needs more gets a block of its own, freed when the lock is released (_Locked).
        Under the lock."""
        size = size or 1
        if size <= self._caps[i]:
            return self._blocks[i]
        if size > _KEEP:
            p = self._alloc(size)
            self._temps.append(p)
            return p
        new = min(max(size, 2 * self._caps[i], 256), _KEEP)
        p = self._alloc(new)  # before the old block goes: on MemoryError it stays usable
        if self._blocks[i]:
            self._r.call("st_free", self._blocks[i])
        self._blocks[i], self._caps[i] = p, new
        return p

    def _put_io(self, i, data):
        """data written into reusable block i; its pointer."""
        p = self._io(i, len(data))
        if data:
            self._r.write(p, data)
        return p

    def _read_error(self):
        """The st_error report of the last failed call, from the block self._err that every
        fallible call is given as its last argument: the tuple (status, unit, offset, line,
        token, input, kind, length, message bytes) of _status.raise_error. THE one place that
        reads errors; call it under the lock (the block is shared), raise outside it
        (_raise_error)."""
        return _ERROR.unpack(self._r.read(self._err, _ERR_SIZE))

    def _raise_error(self, err, what, items=None):
        """The exception for a failed call, from its st_error report (as native's _raise).
        Call it outside the lock: status_str takes it."""
        raise_error(err, self.status_str, what, items)

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
        if data:
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

    def _put_policy(self, allowed, disallowed, flags):
        """(pointer to an st_special_policy of strings (ST_SPECIAL_BY_TEXT) in the module or 0
        for none, pointer to free after the call or 0). One block: the struct, the strings' ends,
        then the strings (allowed, disallowed: UTF-8 bytes). A policy of flags alone is written
        once and shared (a short text must not pay for it). Under the lock."""
        if not allowed and not disallowed:
            if not flags:
                return 0, 0
            p = self._flag_policies.get(flags)
            if p is None:
                p = self._flag_policies[flags] = self._put(_POLICY.pack(0, 0, 0, 0, flags, 0, 0))
            return p, 0
        allowed, disallowed = list(allowed or ()), list(disallowed or ())
        na, nd = len(allowed), len(disallowed)
        strings, ends = joined_with_ends(allowed + disallowed)
        ends = struct.pack("<%dI" % (na + nd), *ends)
        p = self._alloc(_POLICY.size + len(ends) + len(strings))
        ep = p + _POLICY.size
        sp = ep + len(ends)
        self._r.write(p, _POLICY.pack(0, na, 0, nd, flags | _SPECIAL_BY_TEXT, sp, ep) + ends + strings)
        return p, p

    def _call_io(self, name, pre, data, mid, cap, unit, fmt):
        """The shape most core calls share: name(*pre, text, len, *mid, out, cap, &n, &err).
        Under the lock: data into the module, a block of cap units for the output; returns
        the output items, everything freed; raises ("text") on failure."""
        with self._locked:
            tp = self._put_io(_IN, data)
            op = self._io(_OUT, unit * cap)
            st = self._r.call(name, *pre, tp, len(data), *mid, op, cap, self._scratch, self._err)
            out = err = None
            if st == OK:
                n = self._u32(self._scratch)
                if fmt == "I":
                    out = self._u32s(op, n)
                else:
                    raw = self._r.read(op, unit * n)
                    out = raw if fmt is None else list(struct.unpack("<%d%s" % (n, fmt), raw))
            else:
                err = self._read_error()
        if err is not None:
            self._raise_error(err, "text")
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

    def status_name(self, status):
        """The status's name in the header ("ST_ERR_INVALID_UTF8"): the Python layer maps names."""
        with self._locked:
            p = self._r.call("st_status_name", status)
            return self._cstr(p) if p else "ST_ERR_%d" % status

    def script_names(self):
        with self._locked:
            n = self._r.call("st_script_count")
            return [self._cstr(self._r.call("st_script_name", i)) for i in range(n)]

    def script_of(self, cp):
        with self._locked:
            r = self._r.call("st_script_of", cp)
        return r - (1 << 32) if r >= (1 << 31) else r

    def _fail(self, status, offset, what, items=None):
        """For the calls without an st_error (st_encoding_prepare, st_model_write) or given
        none (st_token_bytes, st_token_symbols)."""
        self._raise(status, offset, what, items)

    # -- pre-tokenizers --
    def pattern_from_regex(self, pat):
        """The st_pattern id of tiktoken's pat_str pat (bytes); SupertokError
        ST_ERR_UNSUPPORTED_PATTERN for any other regex."""
        with self._locked:
            pp = self._put(pat)
            try:
                st = self._r.call("st_pattern_from_regex", pp, len(pat), self._scratch, self._err)
                out = self._u32(self._scratch)
                err = None if st == OK else self._read_error()
            finally:
                self._free(pp)
        if err is not None:
            self._raise_error(err, "pat_str")
        return out

    def pretokenizer(self, pattern, flags, scripts):
        """A cached handle for (pattern id, flags, scripts as bytes or None)."""
        key = (pattern, flags, scripts)
        h = self._pretokenizers.get(key)
        if h is None:
            with self._locked:
                sp = self._put(scripts) if scripts is not None else 0
                err = None
                try:
                    st = self._r.call("st_pretokenizer_new", pattern, flags, sp,
                                      0 if scripts is None else len(scripts), 0, self._scratch, self._err)
                    if st == OK:
                        ptr = self._u32(self._scratch)
                        h = self._own(ptr, ("st_pretokenizer_free", ptr))
                    else:
                        err = self._read_error()
                finally:
                    self._free(sp)
            if err is not None:
                self._raise_error(err, "pre-tokenizer options")
            self._pretokenizers.put(key, h)
        return h

    def pretokenize_ends(self, handle, data, codepoints):
        return self._call_io("st_pretokenize", (handle.ptr,), data, (1 if codepoints else 0,), len(data), 4, "I")

    def pretokenize_join(self, handle, data, sep):
        return self._call_io("st_pretokenize_join", (handle.ptr,), data, (sep,), 2 * len(data), 1, None)

    def pretokenize_count(self, handle, data):
        with self._locked:
            tp = self._put_io(_IN, data)
            st = self._r.call("st_pretokenize_count", handle.ptr, tp, len(data), self._scratch, self._err)
            n = self._u32(self._scratch)
            err = None if st == OK else self._read_error()
        if err is not None:
            self._raise_error(err, "text")
        return n

    def utf8_validate(self, data):
        with self._locked:
            tp = self._put_io(_IN, data)
            st = self._r.call("st_utf8_validate", tp, len(data), self._err)
            off = None if st == OK else self._read_error()[2]
        return off

    # -- encodings --
    def encoding_new(self, ranks, specials, pattern, flags=0, scripts=None):
        """A rank-file encoding with the pre-tokenizer (pattern id, flags, scripts)."""
        pt = self.pretokenizer(pattern, flags, scripts)  # copied by the core; cached here
        with self._locked:
            rp = self._put(ranks)
            sp = 0
            try:
                sp = self._put(specials)
                st = self._r.call("st_encoding_new_tiktoken", rp, len(ranks), sp, len(specials), pt.ptr, 0,
                                  self._scratch, self._err)
                h = self._u32(self._scratch)
                err = None if st == OK else self._read_error()
            finally:
                self._free(sp, rp)
        if err is not None:
            self._raise_error(err, "special tokens" if err[5] == 1 else "rank file")
        return self._own(h, ("st_encoding_free", h))

    def encoding_new_merges(self, alphabet, merges, specials, pattern, flags=0, scripts=None):
        """merges: flat [left0, right0, left1, right1, ...]."""
        packed = struct.pack("<%dI" % len(merges), *merges)
        pt = self.pretokenizer(pattern, flags, scripts)
        with self._locked:
            mp = self._put(packed) if merges else 0
            sp = 0
            try:
                sp = self._put(specials)
                st = self._r.call("st_encoding_new_merges", alphabet, mp, len(merges) // 2, sp, len(specials),
                                  pt.ptr, 0, self._scratch, self._err)
                h = self._u32(self._scratch)
                err = None if st == OK else self._read_error()
            finally:
                self._free(sp, mp)
        if err is not None:
            self._raise_error(err, "special tokens" if err[5] == 1 else "merge rules")
        return self._own(h, ("st_encoding_free", h))

    def encoding_from_image(self, image):
        """The image is written into the module's memory and stays there for the encoding's
        life (freed after it): nothing inside wasm reads it through at load (pywasm runs ~0.2M
        instructions/s). st_malloc's blocks are 8-byte aligned, as the image must be."""
        with self._locked:
            ip = self._put(image)
            st = err = None
            try:
                st = self._r.call("st_encoding_from_image", ip, len(image), 0, self._scratch, self._err)
                h = self._u32(self._scratch)
                err = None if st == OK else self._read_error()
            finally:
                if st != OK:
                    self._free(ip)
        if err is not None:
            self._raise_error(err, "vocabulary image")
        return self._own(h, ("st_encoding_free", h), ("st_free", ip))

    def encoding_free(self, enc):
        u = self._unstable.pop(enc, None)  # its st_unstable handle goes first: it points at enc
        if u is not None:
            self._release(u)
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
            self._fail(st, None, "prepare")
        return True

    def set_cache_size(self, enc, size):
        with self._locked:
            # past size_t: clamped, as documented
            st = self._r.call("st_encoding_set_cache_size", enc.ptr,
                              min(check_int("size", size, 0, 1 << 1000, "size_t"), self.size_max))
        if st != OK:
            self._fail(st, None, "cache size")

    def cache_info(self, enc):
        n = len(CACHE_INFO_FIELDS)
        with self._locked:
            p = self._io(_OUT3, 8 * n)
            st = self._r.call("st_encoding_cache_info", enc.ptr, p)
            words = self._u32s(p, 2 * n) if st == OK else None
        if st != OK:
            self._fail(st, None, "cache info")
        return {f: words[2 * k] | words[2 * k + 1] << 32 for k, f in enumerate(CACHE_INFO_FIELDS)}

    def save_image(self, enc):
        with self._locked:
            size_p = self._scratch
            st = self._r.call("st_encoding_save_image", enc.ptr, 0, 0, size_p, self._err)
            out = err = None
            if st in (OK, BUFFER_TOO_SMALL):
                size = self._u32(size_p)
                op = self._alloc(size)
                try:
                    st = self._r.call("st_encoding_save_image", enc.ptr, op, size, size_p, self._err)
                    if st == OK:
                        out = self._r.read(op, size)
                finally:
                    self._free(op)
            if st != OK:
                err = self._read_error()
        if err is not None:
            self._raise_error(err, "image")
        return out

    def n_vocab(self, enc):
        with self._locked:
            return self._r.call("st_encoding_n_vocab", enc.ptr)

    def special_ids(self, enc):
        with self._locked:
            n = self._r.call("st_encoding_n_special", enc.ptr)
            return [self._r.call("st_encoding_special_id", enc.ptr, i) for i in range(n)]

    def shared_special_ids(self, enc):
        with self._locked:
            ids = [self._r.call("st_encoding_special_id", enc.ptr, i)
                   for i in range(self._r.call("st_encoding_n_special", enc.ptr))]
            return [i for i in ids if self._r.call("st_token_is_ordinary", enc.ptr, i)]

    def encode(self, enc, data, allowed, want_starts=False, disallowed=(), special_flags=0):
        """Ids of UTF-8 data under the special-token policy (allowed, disallowed: the strings,
        UTF-8 bytes; ST_SPECIAL_* flags); with want_starts, also each token's start in code points."""
        cap = len(data)
        with self._locked:
            tp = self._put_io(_IN, data)
            pol, pp = self._put_policy(allowed, disallowed, special_flags)
            try:
                ids = self._io(_OUT, 4 * cap)
                starts = self._io(_OUT2, 4 * cap) if want_starts else 0
                st = self._f_encode(enc.ptr, tp, cap, pol, _OFFSETS_CODEPOINTS if want_starts else 0,
                                    ids, starts, cap, self._scratch, self._err)
                out = st_out = err = None
                if st == OK:
                    n = self._r.u32(self._scratch)
                    out = self._r.read_u32s(ids, n)
                    if want_starts:
                        st_out = self._r.read_u32s(starts, n)
                else:
                    err = self._read_error()
            finally:
                if pp:
                    self._free(pp)
        if err is not None:
            self._raise_error(err, "text")
        return (out, st_out) if want_starts else out

    def encode_piece(self, enc, data):
        cap = len(data)
        with self._locked:
            tp = self._put_io(_IN, data)
            ids = self._io(_OUT, 4 * cap)
            st = self._r.call("st_encode_piece", enc.ptr, tp, cap, ids, cap, self._scratch, self._err)
            out = err = None
            if st == OK:
                out = self._r.read_u32s(ids, self._r.u32(self._scratch))
            else:
                err = self._read_error()
        if err is not None:
            self._raise_error(err, "piece")
        return out

    def encode_with_unstable(self, enc, data, allowed, disallowed=(), special_flags=0):
        """The completions come a batch of at most 256 KiB of ids per call: the module never
        holds them all (pywasm's memory stops at 64 MiB). Each encoding keeps one st_unstable
        handle (its index of the tokens is a pass over the vocabulary: seconds on pywasm), used
        under the lock."""
        with self._locked:
            u = self._unstable.get(enc)
            err = None
            if u is None:
                st = self._r.call("st_unstable_new", enc.ptr, 0, self._scratch, self._err)
                if st == OK:
                    ptr = self._u32(self._scratch)
                    # not kept with enc: st_unstable_free reads nothing of the encoding
                    u = self._unstable[enc] = self._own(ptr, ("st_unstable_free", ptr))
                else:
                    err = self._read_error()
            if err is None:
                tp = self._put_io(_IN, data)
                pol, pp = self._put_policy(allowed, disallowed, special_flags)
                try:
                    st = self._r.call("st_unstable_encode", u.ptr, tp, len(data), pol, self._err)
                finally:
                    self._free(pp)
                if st == OK:
                    stable, completions, err = self._unstable_read(u.ptr)
                else:
                    err = self._read_error()
        if err is not None:
            self._raise_error(err, "text" if u is not None else "encoding")
        return stable, completions

    def _unstable_read(self, up):
        """(stable ids, set of completions, error report or None) of an st_unstable handle."""
        n_p, count_p = self._scratch, self._scratch + 4
        self._r.call("st_unstable_stable", up, 0, 0, n_p, 0)
        n = self._u32(n_p)
        ids = self._io(_OUT, 4 * n)
        self._r.call("st_unstable_stable", up, ids, n, n_p, 0)
        stable = self._u32s(ids, n)
        completions = set()
        length = self._r.call("st_unstable_length", up)
        if not length:
            return stable, completions, None
        cap, max_n = max(1 << 16, length), 1 << 12  # one completion always fits
        ids = self._io(_OUT, 4 * cap)
        lengths = self._io(_OUT2, 4 * max_n)
        while True:
            st = self._r.call("st_unstable_next", up, ids, cap, lengths, max_n, n_p, count_p, self._err)
            if st != OK:
                return stable, completions, self._read_error()
            count = self._u32(count_p)
            if not count:
                return stable, completions, None
            flat = self._u32s(ids, self._u32(n_p))
            at = 0
            for k in self._u32s(lengths, count):
                completions.add(tuple(flat[at:at + k]))
                at += k

    def encode_many(self, enc, datas, allowed, disallowed=(), special_flags=0):
        """One st_encode_many call for the batch (the module runs one call at a time)."""
        offsets = [0]
        for d in datas:
            offsets.append(offsets[-1] + len(d))
        buf = b"".join(datas)
        offs = struct.pack("<%dI" % len(offsets), *offsets)
        with self._locked:
            tp = self._put_io(_IN, buf)
            op = self._put_io(_OUT3, offs)
            pol, pp = self._put_policy(allowed, disallowed, special_flags)
            try:
                cap = len(buf)
                ids = self._io(_OUT, 4 * cap)
                counts = self._io(_OUT2, 4 * len(datas))
                st = self._f_encode_many(enc.ptr, tp, op, len(datas), pol, ids, cap, counts,
                                         self._scratch, self._err)
                flat = ns = err = None
                if st == OK:
                    n = self._r.u32(self._scratch)
                    flat = self._r.read_u32s(ids, n)
                    ns = self._u32s(counts, len(datas))
                else:
                    err = self._read_error()
            finally:
                if pp:
                    self._free(pp)
        if err is not None:
            self._raise_error(err, "text")
        out, k = [], 0
        for c in ns:
            out.append(flat[k:k + c])
            k += c
        return out

    def cut(self, enc, data, frm):
        """st_encoding_cut: the first offset >= frm (and > 0) where data may be cut, or len(data)."""
        frm = self._size("from", frm)
        with self._locked:
            tp = self._put_io(_IN, data)
            st = self._r.call("st_encoding_cut", enc.ptr, tp, len(data), frm, self._scratch, self._err)
            at = self._u32(self._scratch)
            err = None if st == OK else self._read_error()
        if err is not None:
            self._raise_error(err, "text")
        return at

    def encode_count(self, enc, data, allowed, disallowed=(), special_flags=0):
        with self._locked:
            tp = self._put_io(_IN, data)
            pol, pp = self._put_policy(allowed, disallowed, special_flags)
            try:
                st = self._f_encode_count(enc.ptr, tp, len(data), pol, self._scratch, self._err)
                n = self._u32(self._scratch)
                err = None if st == OK else self._read_error()
            finally:
                if pp:
                    self._free(pp)
        if err is not None:
            self._raise_error(err, "text")
        return n

    def _decode_call(self, name, enc, ids, flags):
        """st_decode / st_decode_text (flags None: st_decode): size query, then the bytes."""
        packed = _pack_ids(ids)
        mid = () if flags is None else (flags,)
        with self._locked:
            ip = self._put_io(_IN, packed) if ids else 0
            size_p = self._scratch
            # first into the output block as it is (most decodes fit), else again at the size reported
            cap = max(self._caps[_OUT], 1)
            op = self._io(_OUT, cap)
            st = self._r.call(name, enc.ptr, ip, len(ids), *mid, op, cap, size_p, self._err)
            if st == BUFFER_TOO_SMALL:
                cap = self._u32(size_p)
                op = self._io(_OUT, cap)
                st = self._r.call(name, enc.ptr, ip, len(ids), *mid, op, cap, size_p, self._err)
            out = b""
            if st == OK:
                out = self._r.read(op, self._u32(size_p))
            err = None if st == OK else self._read_error()
        if err is not None:
            self._raise_error(err, "ids", ids)  # KeyError for an id that is no token
        return out

    def decode_bytes(self, enc, ids):
        return self._decode_call("st_decode", enc, ids, None)

    def decode_text(self, enc, ids, flags):
        """UTF-8 bytes of st_decode_text; raises (KeyError, UbeDecodeError, ...) on failure."""
        return self._decode_call("st_decode_text", enc, ids, flags)

    def token_bytes(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        with self._locked:
            ptr_p, size_p = self._scratch, self._scratch + 4
            st = self._r.call("st_token_bytes", enc.ptr, token, ptr_p, size_p, 0)
            out = self._r.read(self._u32(ptr_p), self._u32(size_p)) if st == OK else None
        if st != OK:
            self._fail(st, None, "token", token)  # KeyError
        return out

    def token_id(self, enc, data):
        """The id of the ordinary or special token with exactly the bytes data, or None."""
        with self._locked:
            dp = self._put(data)
            try:
                st = self._r.call("st_token_id", enc.ptr, dp, len(data), self._scratch, 0)
                out = self._u32(self._scratch)
            finally:
                self._free(dp)
        return out if st == OK else None

    def token_symbols(self, enc, token):
        if not 0 <= token <= 0xFFFFFFFF:
            raise OverflowError("out of range integral type conversion attempted")
        with self._locked:
            n_p = self._scratch
            st = self._r.call("st_token_symbols", enc.ptr, token, 0, 0, n_p, 0)
            out = []
            if st == BUFFER_TOO_SMALL:
                n = self._u32(n_p)
                op = self._alloc(2 * n)
                try:
                    st = self._r.call("st_token_symbols", enc.ptr, token, op, n, n_p, 0)
                    if st == OK:
                        out = list(struct.unpack("<%dH" % n, self._r.read(op, 2 * n)))
                finally:
                    self._free(op)
        if st != OK:
            self._fail(st, None, "token", token)  # KeyError
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
        """UTF-8 bytes; raises (UbeDecodeError, ...) on failure, the state then unchanged."""
        try:
            packed = struct.pack("<%dH" % len(symbols), *symbols)
        except struct.error:  # a value no uint16 holds is no symbol either
            raise OverflowError("out of range integral type conversion attempted") from None
        with self._locked:
            ip = self._put(packed)
            op = 0
            try:
                cap = 3 * len(symbols) + 3
                op = self._alloc(cap)
                st = self._r.call("st_ube_stream_feed", state.ptr, ip, len(symbols), flags, op, cap, self._scratch,
                                  self._err)
                out = err = None
                if st == OK:
                    out = self._r.read(op, self._u32(self._scratch))
                else:
                    err = self._read_error()
            finally:
                self._free(op, ip)
        if err is not None:
            self._raise_error(err, "symbols")
        return out

    # -- streaming decoding and decode_with_offsets (decoder.c) --
    def decoder_new(self, enc, strict):
        """A streaming decoder over enc (kept alive with it); strict: malformed text raises."""
        with self._locked:
            st = self._r.call("st_decoder_new", enc.ptr, _DECODER_STRICT if strict else 0, 0, self._scratch,
                              self._err)
            ptr = self._u32(self._scratch)
            err = None if st == OK else self._read_error()
        if err is not None:
            self._raise_error(err, "decoder")
        return self._own(ptr, ("st_decoder_free", ptr), keep=enc)  # the decoder borrows the encoding

    def decoder_feed(self, dec, ids, final=False):
        """UTF-8 bytes completed by ids (a list of ints); final ends the stream. On an error
        the decoder is unchanged: SupertokError with status, offset (the id's index in the
        stream) and token; OverflowError for an id outside uint32."""
        packed = _pack_ids(ids)
        n = len(ids)
        flags = _DECODER_FINAL if final else 0
        with self._locked:
            ip = self._put(packed) if n else 0
            op = 0
            try:
                cap = 8 * n + 16
                op = self._alloc(cap)
                st = self._r.call("st_decoder_feed", dec.ptr, ip, n, flags, op, cap, self._scratch, self._err)
                if st == BUFFER_TOO_SMALL:  # nothing consumed; again with the size reported
                    self._free(op)
                    op = 0
                    cap = self._u32(self._scratch)
                    op = self._alloc(cap)
                    st = self._r.call("st_decoder_feed", dec.ptr, ip, n, flags, op, cap, self._scratch, self._err)
                out = err = None
                if st == OK:
                    out = self._r.read(op, self._u32(self._scratch))
                else:
                    err = self._read_error()
            finally:
                self._free(op, ip)
        if err is not None:
            self._raise_error(err, "decoder ids")
        return out

    def decoder_reset(self, dec):
        with self._locked:
            self._r.call("st_decoder_reset", dec.ptr)

    def decode_with_offsets(self, enc, ids):
        """(UTF-8 bytes, code point offsets) of st_decode_with_offsets; SupertokError (offset:
        the index of the id) otherwise; OverflowError for an id outside uint32."""
        packed = _pack_ids(ids)
        n = len(ids)
        with self._locked:
            ip = self._put(packed) if n else 0
            offs = op = 0
            try:
                offs = self._alloc(4 * n)
                size_p = self._scratch
                st = self._r.call("st_decode_with_offsets", enc.ptr, ip, n, _UNIT_CODEPOINT, 0, 0, size_p, offs,
                                  self._err)
                out = b""
                if st == BUFFER_TOO_SMALL:  # the size query
                    size = self._u32(size_p)
                    op = self._alloc(size)
                    st = self._r.call("st_decode_with_offsets", enc.ptr, ip, n, _UNIT_CODEPOINT, op, size, size_p,
                                      offs, self._err)
                    if st == OK:
                        out = self._r.read(op, size)
                offsets = err = None
                if st == OK:
                    offsets = self._u32s(offs, n)
                else:
                    err = self._read_error()
            finally:
                self._free(op, offs, ip)
        if err is not None:
            self._raise_error(err, "decoder ids")
        return out, offsets

    # -- model files (docs/formats/model-format.md) --
    def _model_parse(self, dp, n):
        """(model pointer, None) or (0, st_error report) for the model text at dp. Under the lock."""
        st = self._r.call("st_model_parse", dp, n, 0, self._scratch, self._err)
        if st != OK:
            return 0, self._read_error()
        return self._u32(self._scratch), None

    def _model_pairs(self, m, section):
        """[(left, right, count or None), ...] of a section of a parsed model (st_model_pairs).
        Under the lock."""
        sp = self._put(section + b"\0")
        try:
            k = self._r.call("st_model_pairs", m, sp, self._scratch, self._scratch + 4)
            return self._read_pairs(k, self._scratch, self._scratch + 4)
        finally:
            self._free(sp)

    def encoding_new_model(self, data):
        """(handle, meta) for a model file in the text format (bytes): the core parses and
        validates it. meta: name, kind ("rules"/"ranks"), alphabet (ST_ALPHABET_*), pattern (id),
        flags, scripts (bytes, or None for the default set)."""
        with self._locked:
            dp = self._put(data)
            m = 0
            try:
                m, err = self._model_parse(dp, len(data))
                meta = h = None
                if err is None:
                    len_p = self._scratch + 4
                    p = self._r.call("st_model_name", m, len_p)
                    name = self._r.read(p, self._u32(len_p)).decode("ascii")
                    sc = self._r.call("st_model_scripts", m, len_p)
                    scripts = self._r.read(sc, self._u32(len_p)) if sc else None
                    meta = {"name": name, "kind": _MODEL_KINDS[self._r.call("st_model_kind", m)],
                            "alphabet": self._r.call("st_model_alphabet", m),
                            "pattern": self._r.call("st_model_pattern", m),
                            "flags": self._r.call("st_model_pretokenizer_flags", m) & 0xFFFFFFFF,
                            "scripts": scripts, "supermerges": self._model_pairs(m, b"supermerges")}
                    st = self._r.call("st_encoding_from_model", m, 0, self._scratch, self._err)
                    if st == OK:
                        h = self._u32(self._scratch)
                    else:
                        err = self._read_error()
            finally:
                self._free(dp)
                if m:
                    self._r.call("st_model_free", m)
        if err is not None:
            self._raise_error(err, "model")
        return self._own(h, ("st_encoding_free", h)), meta

    def _read_pairs(self, n, pairs_p, counts_p):
        """pair_triples of n entries whose pointers the core wrote at pairs_p and counts_p (a NULL
        counts pointer: no counts). Under the lock."""
        if not n:
            return []
        flat = self._u32s(self._u32(pairs_p), 2 * n)
        cp = self._u32(counts_p)
        counts = struct.unpack("<%dQ" % n, self._r.read(cp, 8 * n)) if cp else None
        return pair_triples(flat, counts)

    def model_pairs(self, data, section):
        """[(left, right, count or None), ...] of a section of a model file (st_model_pairs)."""
        name = check_section(section)
        with self._locked:
            dp = self._put(data)
            m = 0
            out = None
            try:
                m, err = self._model_parse(dp, len(data))
                if err is None:
                    out = self._model_pairs(m, name)
            finally:
                self._free(dp)
                if m:
                    self._r.call("st_model_free", m)
        if err is not None:
            self._raise_error(err, "model")
        return out

    def model_normalize(self, data):
        """The canonical text of a model file (st_model_parse + st_model_write)."""
        with self._locked:
            dp = self._put(data)
            m = op = 0
            st = OK
            out = None
            try:
                m, err = self._model_parse(dp, len(data))
                if err is None:
                    size_p = self._scratch
                    self._r.call("st_model_write", m, 0, 0, size_p)
                    size = self._u32(size_p)
                    op = self._alloc(size)
                    st = self._r.call("st_model_write", m, op, size, size_p)
                    if st == OK:
                        out = self._r.read(op, size)
            finally:
                self._free(op, dp)
                if m:
                    self._r.call("st_model_free", m)
        if err is not None:
            self._raise_error(err, "model")
        if st != OK:
            self._fail(st, None, "model")
        return out

    def model_write_rules(self, name, alphabet, pattern, merges, specials, comments):
        """A model file of merge rules from its fields (st_model_write_rules)."""
        stext, sends = joined_with_ends([t for t, _ in specials])
        ctext, cends = joined_with_ends(comments)
        blocks = [name, struct.pack("<%dI" % len(merges), *merges), stext, struct.pack("<%dI" % len(sends), *sends),
                  struct.pack("<%dI" % len(specials), *[i for _, i in specials]), ctext,
                  struct.pack("<%dI" % len(cends), *cends)]
        with self._locked:
            ptrs = []
            op = 0
            out = err = None
            try:
                for b in blocks:
                    ptrs.append(self._put(b))
                np_, mp, sp, sep, sip, cp, cep = ptrs
                args = (np_, len(name), alphabet, pattern, mp, len(merges) // 2, sp, sep, sip, len(sends), cp, cep,
                        len(cends))
                size_p = self._scratch
                st = self._r.call("st_model_write_rules", *args, 0, 0, size_p, self._err)
                if st in (OK, BUFFER_TOO_SMALL):
                    size = self._u32(size_p)
                    op = self._alloc(size)
                    st = self._r.call("st_model_write_rules", *args, op, size, size_p, self._err)
                    if st == OK:
                        out = self._r.read(op, size)
                if st != OK:
                    err = self._read_error()
            finally:
                self._free(op, *ptrs)
        if err is not None:
            self._raise_error(err, "model fields")
        return out

    # -- exports to other libraries' formats (docs/formats/export.md) --
    def encoding_export(self, enc, format):
        with self._locked:
            size_p = self._scratch
            st = self._r.call("st_encoding_export", enc.ptr, format, 0, 0, size_p, self._err)
            out = err = None
            if st in (OK, BUFFER_TOO_SMALL):
                size = self._u32(size_p)
                op = self._alloc(size)
                try:
                    st = self._r.call("st_encoding_export", enc.ptr, format, op, size, size_p, self._err)
                    if st == OK:
                        out = self._r.read(op, size)
                finally:
                    self._free(op)
            if st != OK:
                err = self._read_error()
        if err is not None:
            self._raise_error(err, "export")
        return out

    def duplicate_tokens(self, enc):
        with self._locked:
            n_p = self._scratch
            st = self._r.call("st_encoding_duplicate_tokens", enc.ptr, 0, 0, n_p, self._err)
            flat = err = None
            if st in (OK, BUFFER_TOO_SMALL):
                n = self._u32(n_p)
                pp = self._alloc(8 * n)
                try:
                    st = self._r.call("st_encoding_duplicate_tokens", enc.ptr, pp, n, n_p, self._err)
                    if st == OK:
                        flat = self._u32s(pp, 2 * n)
                finally:
                    self._free(pp)
            if st != OK:
                err = self._read_error()
        if err is not None:
            self._raise_error(err, "export")
        return list(zip(flat[0::2], flat[1::2]))

    # -- training (docs/design.md §8): counters and phase-1 trainers --
    # The module runs one call at a time, so the threads of a training share one counter here and
    # the host feeds it in pieces of at most a reusable block (_KEEP): supertok.train cuts its
    # input so (whole lines, or batches of documents).
    def _new_handle(self, export, args, what, free):
        """(export)(*args, &out, &err) under the lock; a _Handle freed by `free`, or the error."""
        with self._locked:
            st = self._r.call(export, *args, self._scratch, self._err)
            ptr = self._u32(self._scratch)
            err = None if st == OK else self._read_error()
        if err is not None:
            self._raise_error(err, what)
        return self._own(ptr, (free, ptr))

    def counter_new(self, pattern, flags, scripts):
        if scripts is None:
            return self._new_handle("st_counter_new", (pattern, flags, 0, 0, 0), "pre-tokenizer options",
                                    "st_counter_free")
        with self._locked:
            sp = self._put(scripts)
            try:
                st = self._r.call("st_counter_new", pattern, flags, sp, len(scripts), 0, self._scratch, self._err)
                ptr = self._u32(self._scratch)
                err = None if st == OK else self._read_error()
            finally:
                self._free(sp)
        if err is not None:
            self._raise_error(err, "pre-tokenizer options")
        return self._own(ptr, ("st_counter_free", ptr))

    def counter_free(self, counter):
        self._release(counter)

    def _status_call(self, export, args, what):
        """export(*args, &err) under the lock, already given its inputs' pointers."""
        st = self._r.call(export, *args, self._err)
        return None if st == OK else self._read_error()

    def counter_add(self, counter, data, flags):
        with self._locked:
            tp = self._put_io(_IN, data)
            err = self._status_call("st_counter_add", (counter.ptr, tp, len(data), flags), "text")
        if err is not None:
            self._raise_error(err, "text")

    def counter_add_documents(self, counter, datas):
        buf, ends = joined_with_ends(datas)
        packed = struct.pack("<%dI" % len(ends), *ends)
        with self._locked:
            tp = self._put_io(_IN, buf)
            ep = self._put_io(_OUT, packed)
            err = self._status_call("st_counter_add_documents", (counter.ptr, tp, ep, len(ends)), "documents")
        if err is not None:
            self._raise_error(err, "documents")

    def counter_add_pretoken(self, counter, data, count):
        count = self._u64("count", count)
        with self._locked:
            tp = self._put_io(_IN, data)
            err = self._status_call("st_counter_add_pretoken", (counter.ptr, tp, len(data), count), "pretoken")
        if err is not None:
            self._raise_error(err, "pretoken")

    def counter_merge(self, into, frm):
        with self._locked:
            err = self._status_call("st_counter_merge", (into.ptr, frm.ptr), "counts")
        if err is not None:
            self._raise_error(err, "counts")

    def counter_stat(self, counter, what):
        with self._locked:
            return self._r.call_u64("st_counter_stat", counter.ptr, what)

    def counter_save(self, counter):
        with self._locked:
            size_p = self._scratch
            st = self._r.call("st_counter_save", counter.ptr, 0, 0, size_p, self._err)
            out = err = None
            if st in (OK, BUFFER_TOO_SMALL):
                size = self._u32(size_p)
                op = self._alloc(size)
                try:
                    st = self._r.call("st_counter_save", counter.ptr, op, size, size_p, self._err)
                    if st == OK:
                        out = self._r.read(op, size)
                finally:
                    self._free(op)
            if st != OK:
                err = self._read_error()
        if err is not None:
            self._raise_error(err, "counts")
        return out

    def counter_load(self, counter, data):
        with self._locked:
            dp = self._put(data)
            try:
                err = self._status_call("st_counter_load", (counter.ptr, dp, len(data)), "counts")
            finally:
                self._free(dp)
        if err is not None:
            self._raise_error(err, "counts")

    def trainer_new(self, counter, mode, alphabet, vocab_size, min_frequency, n_specials):
        vocab_size = self._u64("vocab_size", vocab_size)
        min_frequency = self._u64("min_frequency", min_frequency)
        n_specials = self._size("the number of special tokens", n_specials)
        return self._new_handle("st_trainer_new", (counter.ptr, mode, alphabet, vocab_size, min_frequency,
                                                   n_specials, 0), "training options", "st_trainer_free")

    def trainer_free(self, trainer):
        self._release(trainer)

    def trainer_set_specials(self, trainer, specials):
        text, ends = joined_with_ends(specials)
        packed = struct.pack("<%dI" % len(ends), *ends)
        with self._locked:
            tp = self._put_io(_IN, text)
            ep = self._put_io(_OUT, packed)
            err = self._status_call("st_trainer_set_specials", (trainer.ptr, tp, ep, len(ends)), "special tokens")
        if err is not None:
            self._raise_error(err, "special tokens")

    def trainer_step(self, trainer, max_merges):
        max_merges = self._size("max_merges", max_merges)
        with self._locked:
            st = self._r.call("st_trainer_step", trainer.ptr, max_merges, self._scratch, self._err)
            made = self._u32(self._scratch)
            err = None if st == OK else self._read_error()
        if err is not None:
            self._raise_error(err, "training")
        return made

    def trainer_stat(self, trainer, what):
        with self._locked:
            return self._r.call_u64("st_trainer_stat", trainer.ptr, what)

    def _trainer_pairs(self, export, trainer):
        with self._locked:
            pairs_p, counts_p = self._scratch, self._scratch + 4
            n = self._r.call(export, trainer.ptr, pairs_p, counts_p)
            return self._read_pairs(n, pairs_p, counts_p)

    def trainer_merges(self, trainer):
        return self._trainer_pairs("st_trainer_merges", trainer)

    def trainer_supermerges(self, trainer):
        return self._trainer_pairs("st_trainer_supermerges", trainer)

    # -- superwords: phase 2 --
    def counter_new_candidates(self, trainer, algorithm, supermerges):
        supermerges = self._u64("supermerges", supermerges)
        return self._new_handle("st_counter_new_candidates", (trainer.ptr, algorithm, supermerges, 0), "candidates",
                                "st_counter_free")

    def counter_split_ngrams(self, candidates, c_min, max_len):
        c_min, max_len = self._u64("c_min", c_min), self._size("max_len", max_len)
        return self._new_handle("st_counter_split_ngrams", (candidates.ptr, c_min, max_len, 0), "candidates",
                                "st_counter_free")

    def trainer_start_superwords(self, trainer, candidates, algorithm, supermerges):
        supermerges = self._u64("supermerges", supermerges)
        with self._locked:
            err = self._status_call("st_trainer_start_superwords", (trainer.ptr, candidates.ptr, algorithm,
                                                                      supermerges), "superwords")
        if err is not None:
            self._raise_error(err, "superwords")

    def trainer_write_model(self, trainer, name, specials):
        text, ends = joined_with_ends(specials)
        packed = struct.pack("<%dI" % len(ends), *ends)
        with self._locked:
            np_ = self._put(name)
            tp = ep = op = 0
            out = err = None
            try:
                tp = self._put(text)
                ep = self._put(packed)
                args = (trainer.ptr, np_, len(name), tp, ep, len(ends))
                size_p = self._scratch
                st = self._r.call("st_trainer_write_model", *args, 0, 0, size_p, self._err)
                if st in (OK, BUFFER_TOO_SMALL):
                    size = self._u32(size_p)
                    op = self._alloc(size)
                    st = self._r.call("st_trainer_write_model", *args, op, size, size_p, self._err)
                    if st == OK:
                        out = self._r.read(op, size)
                if st != OK:
                    err = self._read_error()
            finally:
                self._free(op, ep, tp, np_)
        if err is not None:
            self._raise_error(err, "trained model")
        return out
