"""The wasm runtimes (runtime.py): the same C core as supertok.wasm (wasm32, no imports), run by
wasmtime or by pywasm (a pure-Python interpreter: slow, but installs anywhere).

A runner (WasmtimeRunner, PywasmRunner) knows how to call an export and move bytes in and out of
the module's memory; WasmRuntime on top is the same for both. One module instance per runtime,
used under a lock: wasm instances are not re-entrant.

Everything made in the module's memory is freed or reused: a frame's inputs and outputs go
through a few reusable blocks (kept up to 1 MiB each, grown only when a call needs more; a
bigger call's blocks are freed when the frame ends); core objects (pre-tokenizers, encodings
with their image, decoders, UBE stream states) when their Python owner (_Handle) goes, or at
once through release().
"""
import atexit
import os
import struct
import sys
import threading
import weakref

from . import BackendUnavailable
from .base import SIZE_MAX_WASM32, CACHE_INFO_FIELDS, joined_with_ends, register_fork_state

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The module: in a source checkout, the one committed copy beside the core (core_c/supertok.wasm,
# so a checkout run in place never loads a stale copy); in an installed package, the copy the
# build put into it.
_CHECKOUT_WASM = os.path.join(os.path.dirname(os.path.dirname(_PACKAGE)), "core_c", "supertok.wasm")
WASM_PATH = _CHECKOUT_WASM if os.path.isfile(_CHECKOUT_WASM) else os.path.join(_PACKAGE, "supertok.wasm")


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

    def _types(self, name):
        """(the width bound of each parameter, the mask of the result or None) of export name."""
        got = self._wraps.get(name)
        if got is None:
            addr = [e for e in self._inst.exps if e.name == name][0].data.data
            ty = self._rt.machine.store.func[addr].type
            got = self._wraps[name] = (
                tuple(1 << (64 if t.data == 0x7E else 32) for t in ty.args),
                ((1 << (64 if ty.rets[0].data == 0x7E else 32)) - 1) if ty.rets else None)
        return got

    def call(self, name, *args):
        """pywasm takes a parameter's bits as a signed integer of its width (a uint64_t of 2**64 - 1
        is -1 there; wasmtime takes either): the unsigned values the host passes are reinterpreted;
        the result comes back unsigned, at its own width."""
        wraps, mask = self._types(name)
        r = self._rt.invocate(self._inst, name,
                              [a - w if isinstance(a, int) and a >= w >> 1 else a for a, w in zip(args, wraps)])
        return (r[0] & mask) if r else None

    call_u64 = call

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
    """A core object in the module's memory, owned by Python. When this object goes, a finalizer
    queues its frees (it may run inside any call, the cyclic GC running where it likes, while the
    lock is held: so it only queues) and the next frame does them; release() frees at once.
    frees: (export, pointer) pairs, in order (an encoding before the image it borrows). keep: a
    Python object this one borrows (a decoder's encoding handle), kept alive as long as it."""
    __slots__ = ("ptr", "_finalizer", "_keep", "__weakref__")

    def __init__(self, runtime, ptr, frees, keep=None):
        self.ptr = ptr
        self._keep = keep
        self._finalizer = weakref.finalize(self, runtime._pending_free.append, frees)
        self._finalizer.atexit = False  # at exit the module goes anyway

    def __repr__(self):
        return "<wasm handle 0x%x>" % self.ptr


# The core's st_error report (supertok.h): status u32, unit u32, offset u64, line u64, token u32,
# input u32, kind u32, length u32, message char[120]; fixed widths, so the same 160 bytes in
# wasm32 as natively.
_ERROR = struct.Struct("<IIQQIIII120s")
# st_special_policy in wasm32: allowed ptr, n_allowed, disallowed ptr, n_disallowed, flags,
# strings ptr, ends ptr
_POLICY = struct.Struct("<IIIIIII")
_SPECIAL_BY_TEXT = 8  # ST_SPECIAL_BY_TEXT
_N_BLOCKS = 6         # reusable blocks a frame hands out in turn
_KEEP = 1 << 20       # the largest block kept between frames
_CELLS = 8            # one-value outputs a frame holds (8 bytes each)
# wasm32 widths and struct codes of the C types the layer names
_WIDTH = {"uint8_t": (1, "B"), "char": (1, "B"), "uint16_t": (2, "H"), "uint32_t": (4, "I"), "int": (4, "i"),
          "size_t": (4, "I"), "uint64_t": (8, "Q"), "st_cache_info": (8 * len(CACHE_INFO_FIELDS), None)}


def _width(ctype):
    return (4, "I") if ctype.endswith("*") else _WIDTH[ctype]


class _WasmFrame:
    """The frame of WasmRuntime: entered, it holds the module's lock and does the frees queued by
    dropped handles; each bytes/array/out takes the next reusable block, each cell the next
    8-byte cell of the runtime's scratch area; leaving frees the blocks too big to keep."""
    __slots__ = ("_rt", "_r", "_next", "_cell", "_temps", "n", "err")

    def __init__(self, rt):
        self._rt = rt
        self._r = rt._r
        self._temps = []
        self.n = rt._scratch
        self.err = rt._err

    def __enter__(self):
        rt = self._rt
        rt._lock.acquire()
        try:
            rt._drain_frees()
        except BaseException:
            rt._lock.release()
            raise
        self._next = 0
        self._cell = 1  # cell 0 is n
        return self

    def __exit__(self, *exc):
        try:
            if self._temps:
                temps, self._temps = self._temps, []
                for p in temps:
                    self._r.call("st_free", p)
        finally:
            self._rt._lock.release()

    def _block(self, size):
        """The next reusable block, with room for size bytes (grown if needed, up to _KEEP; a
        bigger one is the frame's own, freed when it ends)."""
        rt = self._rt
        i = self._next
        self._next = i + 1
        size = size or 1
        if i < _N_BLOCKS and size <= rt._caps[i]:
            return rt._blocks[i]
        if i >= _N_BLOCKS or size > _KEEP:
            p = rt._malloc(size)
            self._temps.append(p)
            return p
        new = min(max(size, 2 * rt._caps[i], 256), _KEEP)
        p = rt._malloc(new)  # before the old block goes: on MemoryError it stays usable
        if rt._blocks[i]:
            self._r.call("st_free", rt._blocks[i])
        rt._blocks[i], rt._caps[i] = p, new
        return p

    def bytes(self, data):
        p = self._block(len(data))
        if data:
            self._r.write(p, data)
        return p

    def array(self, ctype, values):
        if not values:
            return 0
        w, code = _width(ctype)
        try:
            packed = struct.pack("<%d%s" % (len(values), code), *values)
        except struct.error:  # a value no such integer holds (tiktoken's error for an id)
            raise OverflowError("out of range integral type conversion attempted") from None
        return self.bytes(packed)

    def out(self, ctype, n):
        return self._block(_width(ctype)[0] * n)

    def cell(self, ctype):
        k = self._cell
        if k >= _CELLS:
            raise RuntimeError("a wasm frame holds %d cells" % _CELLS)
        self._cell = k + 1
        return self.n + 8 * k

    def get(self, cell):
        """A cell's value: every cell type the layer uses is 32 bits in wasm32 (size_t and
        pointers), but uint64_t ones, which it reads with read()."""
        return self._r.u32(cell)

    def read(self, ctype, p, n):
        if not n:
            return []
        if ctype == "uint32_t" or ctype == "size_t" or ctype.endswith("*"):
            return self._r.read_u32s(p, n)
        w, code = _width(ctype)
        return list(struct.unpack("<%d%s" % (n, code), self._r.read(p, w * n)))

    def read_bytes(self, p, n):
        return self._r.read(p, n)

    def read_packed(self, ctype, p, n):
        """n values of ctype as their little-endian bytes (wasm memory is little-endian)."""
        return self._r.read(p, _width(ctype)[0] * n) if n else b""

    def packed(self, ctype, data):
        return self.bytes(data) if data else 0

    def cstr(self, p):
        out = bytearray()
        while True:
            chunk = self._r.read(p, 64)
            k = chunk.find(b"\0")
            if k >= 0:
                out += chunk[:k]
                return out.decode("ascii")
            out += chunk
            p += 64

    def error(self):
        return _ERROR.unpack(self._r.read(self.err, _ERROR.size))

    def policy(self, allowed, disallowed, flags):
        """A policy of flags alone is written once and shared (a short text must not pay for it);
        one of strings is one block: the struct, the strings' ends, then the strings."""
        if not allowed and not disallowed:
            if not flags:
                return 0
            rt = self._rt
            p = rt._flag_policies.get(flags)
            if p is None:
                p = rt._flag_policies[flags] = rt._malloc(_POLICY.size)
                self._r.write(p, _POLICY.pack(0, 0, 0, 0, flags, 0, 0))
            return p
        allowed, disallowed = list(allowed or ()), list(disallowed or ())
        na, nd = len(allowed), len(disallowed)
        strings, ends = joined_with_ends(allowed + disallowed)
        ends = struct.pack("<%dI" % (na + nd), *ends)
        p = self._block(_POLICY.size + len(ends) + len(strings))
        ep = p + _POLICY.size
        sp = ep + len(ends)
        self._r.write(p, _POLICY.pack(0, na, 0, nd, flags | _SPECIAL_BY_TEXT, sp, ep) + ends + strings)
        return p

    def cache_info(self, out):
        n = len(CACHE_INFO_FIELDS)
        return list(struct.unpack("<%dQ" % n, self._r.read(out, 8 * n)))


class WasmRuntime:
    NULL = 0
    parallel = False  # the module runs one call at a time
    takes_views = False  # a text's bytes are copied into the module's memory anyway
    size_max = SIZE_MAX_WASM32

    def __init__(self, runner):
        self._r = runner
        self.name = runner.name
        self.prefers_image = getattr(runner, "prefers_image", False)
        self._lock = threading.Lock()
        register_fork_state(self)
        self._blocks = [0] * _N_BLOCKS
        self._caps = [0] * _N_BLOCKS
        self._scratch = self._malloc(8 * _CELLS)
        self._err = self._malloc(_ERROR.size)
        self._flag_policies = {}
        self._pending_free = []  # (export, pointer) frees of handles whose Python owner is gone
        self._frame = _WasmFrame(self)

    # os.fork(): the fork waits for a call in progress on another thread (the module's memory is
    # copied whole, never in the middle of a call); the child gets a free lock of its own
    def _fork_before(self):
        self._lock.acquire()

    def _fork_after_parent(self):
        self._lock.release()

    def _fork_after_child(self):
        self._lock = threading.Lock()

    def frame(self):
        """The runtime's one frame: entering it waits for the module (one thread at a time)."""
        return self._frame

    def fn(self, name):
        return self._r.func(name)

    def _malloc(self, size):
        p = self._r.call("st_malloc", size or 1)
        if not p:
            raise MemoryError("wasm module out of memory (%d bytes)" % size)
        return p

    def alloc(self, size):
        with self._lock:
            return self._malloc(size)

    def write(self, p, data):
        with self._lock:
            self._r.write(p, data)

    def free(self, p):
        with self._lock:
            self._r.call("st_free", p)

    def _drain_frees(self):
        while self._pending_free:
            for fn, ptr in self._pending_free.pop(0):
                self._r.call(fn, ptr)

    def own(self, ptr, free, keep=None, also=()):
        return _Handle(self, ptr, ((free, ptr),) + tuple(("st_free", p) for p in also), keep)

    def release(self, handle):
        info = handle._finalizer.detach()
        if info is not None:
            with self._lock:
                for fn, ptr in info[2][0]:
                    self._r.call(fn, ptr)
        handle.ptr = 0

    def memory_size(self):
        """Bytes of the module's linear memory (tests watch it for leaks)."""
        with self._lock:
            return self._r.memory_size()
