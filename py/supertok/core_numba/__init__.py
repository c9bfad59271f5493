"""The Numba port of the C core: the one deliberate second implementation (docs/design.md §3).

Each module mirrors one C file of core_c/src, in the same folder (base/, text/, formats/,
encode/), and reads side by side with it: text/utf8.py is core_c/src/text/utf8.c (and its
header), formats/vocab.py is core_c/src/formats/vocab.c, and so on. The golden vectors hold the
two together. Conventions every module follows:

- Kernels are `@njit(cache=True, nogil=True)` functions over numpy arrays and ints (no Python
  objects in loops), named as their C function without the `st__` prefix.
- A C struct is a `collections.namedtuple` with the C field names, of numpy arrays and ints
  (numba passes namedtuples to jitted code); a field the C code changes after construction is a
  one-element array. Constants keep their C names (ST_NO_TOKEN, ST_PATTERN_O200K, ...).
- The public functions of supertok.h (`st_*`) are plain Python functions decorated with
  @export, with the C arguments in the C order, as the Numba runtime
  (backends/numba_runtime.py) makes them: a byte input is a writable uint8 array with at least
  16 zero bytes after the length passed beside it; an int array input or an output array is a
  numpy array of the C type; NULL is None; an out-parameter is a Cell (`.v`); the st_error is
  an Err (base/status.py: err.fail(...)); a handle is whatever the constructor put in its
  Cell (a namedtuple or a small class). They return the st_status as an int, or the C result.
  The host layer (backends/c_api.py) calls them exactly as it calls the C functions.
"""
import importlib

EXPORTS = {}  # "st_name" -> the Python function implementing it

# The modules that define exports, imported on the first lookup (their kernels compile, or load
# from numba's cache, on first call).
MODULES = (
    "base.common", "text.utf8", "text.unicode", "text.pretokenize", "text.ube",
    "formats.vocab", "formats.model", "formats.export",
    "encode.encoding", "encode.model_encoding", "encode.pipeline", "encode.cut", "encode.decoder",
    "encode.unstable",
)


def export(fn):
    """Register fn as the implementation of the supertok.h function of its name."""
    EXPORTS[fn.__name__] = fn
    return fn


_imported = False


def lookup(name):
    """The implementation of st_name, or None if the port has none."""
    global _imported
    if not _imported:
        for m in MODULES:
            try:
                importlib.import_module(__name__ + "." + m)
            except ModuleNotFoundError as exc:
                if not exc.name.startswith(__name__):  # a missing module of the port: not ported yet
                    raise
        _imported = True
    return EXPORTS.get(name)
