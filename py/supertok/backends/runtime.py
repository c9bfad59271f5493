"""The runtime interface: what the one host layer (c_api.py) needs from a way of running the C
core, and nothing more. Three runtimes implement it: cffi (the compiled core, cffi_runtime.py),
and the wasm32 module under wasmtime or pywasm (wasm_runtime.py).

A runtime gives:
- fn(name): the callable of the C function `name` of supertok.h (arguments as the frame makes
  them; returns the C result as an int, or a pointer for functions returning one).
- frame(): a context manager for one sequence of calls; its value, the frame, makes the calls'
  arguments and reads their results:
    f.bytes(data)               an input byte string (bytes, bytearray, memoryview)
    f.array(ctype, values)      an input array of ints (ctype "uint32_t", "uint16_t", "size_t")
    f.out(ctype, n)             an output array of n items of ctype ("uint8_t", "uint16_t",
                                "uint32_t", "size_t", "char", "st_cache_info")
    f.cell(ctype)               one output value: an integer ctype or a pointer type
                                ("st_encoding *", "const uint32_t *")
    f.n                         a size_t cell every frame has (most calls' count)
    f.err                       the st_error block of the frame (every fallible call's last argument)
    f.get(cell)                 the value of a cell (an int; a pointer for a pointer cell)
    f.read(ctype, p, n)         n ints of ctype at p, as a list (ctype: "uint16_t", "uint32_t",
                                "size_t", "uint64_t"; "uint32_t" lists are made by the fast path)
    f.read_bytes(p, n)          n bytes at p
    f.cstr(p)                   the NUL-terminated string at p, decoded as ASCII
    f.error()                   the st_error report as the tuple _status.raise_error takes
    f.policy(allowed, disallowed, flags)   an st_special_policy (strings: ST_SPECIAL_BY_TEXT), or NULL
    f.cache_info(out)           the fields of an st_cache_info output, in CACHE_INFO_FIELDS order
  On wasm the frame holds the module's lock (an instance runs one call at a time) and hands out
  reusable blocks of its memory; natively it allocates per call and holds nothing: calls from
  several threads run at once (the core releases the GIL). Frames do not nest.
- alloc(size) / write(p, data) / free(p): a block of the core's heap (st_malloc) that outlives a
  frame (a vocabulary image the encoding borrows).
- own(ptr, free, keep=None, also=()): the handle of a core object, freed by the C function
  `free` (then the blocks in `also`) when the handle goes or at release(handle); keep: a Python
  object the core object borrows, kept alive as long as the handle. handle.ptr is the argument.
- release(handle): free now; idempotent.
- NULL, name, parallel, prefers_image, size_max; memory_size() where a runtime has one memory;
  takes_views: True where the core reads a memoryview of the caller's bytes in place (cffi).
"""
