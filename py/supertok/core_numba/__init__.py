"""The Numba port of the C core: the one deliberate second implementation (docs/design.md §3).

Each module mirrors one C file of core_c/src, in the same folder (base/, text/, formats/,
encode/, train/), and reads side by side with it: text/utf8.py is core_c/src/text/utf8.c (and its
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
import hashlib
import importlib
import os

EXPORTS = {}  # "st_name" -> the Python function implementing it

# The modules that define exports, imported on the first lookup (their kernels compile, or load
# from numba's cache, on first call).
MODULES = (
    "base.common", "text.utf8", "text.unicode", "text.pretokenize", "text.ube", "text.normalize",
    "formats.vocab", "formats.model", "formats.export",
    "formats.json", "formats.tokenizer_json", "formats.hf_compact",
    "encode.encoding", "encode.model_encoding", "encode.hf_encoding", "encode.pipeline", "encode.cut", "encode.decoder",
    "encode.unstable",
    "train.pretoken_counter", "train.token_counts", "train.candidates", "train.ngram",
    "train.trainer", "train.candidates_spec",
)


# ---- numba's cache for the port ------------------------------------------------------------------
# numba keys a cached kernel on its own source file only, but a kernel has the kernels it calls
# (from other files) and the Unicode tables (unicode_tables.bin) compiled into it: a change to any
# of them would leave it stale. So every kernel of the port is cached in one folder named by the
# digest of all the port's sources and data (the source stamp too): any change makes a new folder.

_HERE = os.path.dirname(os.path.abspath(__file__))
_USER_API = os.path.join(os.path.dirname(_HERE), "numba.py")  # supertok.numba: kernels of its own


def _digest():
    h = hashlib.sha256()
    files = [("../numba.py", _USER_API)]
    for folder, dirs, names in os.walk(_HERE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files += [(os.path.relpath(os.path.join(folder, n), _HERE), os.path.join(folder, n))
                  for n in sorted(names) if n.endswith((".py", ".bin"))]
    for name, f in files:
        h.update(name.replace(os.sep, "/").encode() + b"\0")
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:20]


DIGEST = _digest()


def cache_roots():
    """Where the port's kernels may be cached, first choice first: NUMBA_CACHE_DIR when set; the
    package's own __pycache__; the user's cache folder (an installed package may be read-only)."""
    from numba.core import config
    roots = [config.CACHE_DIR] if config.CACHE_DIR else []
    roots.append(os.path.join(_HERE, "__pycache__"))
    roots.append(os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                              "supertok"))
    return roots


def _install_locator():
    from numba.core import caching

    class PortLocator(caching._CacheLocator):
        def __init__(self, py_func, py_file, root):
            self._lineno = py_func.__code__.co_firstlineno
            rel = os.path.splitext(os.path.relpath(py_file, os.path.dirname(_HERE)))[0]
            self._cache_path = os.path.join(root, "numba-" + DIGEST, rel.replace(os.sep, "."))

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return DIGEST

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            f = os.path.abspath(py_file)
            if not (f.startswith(_HERE + os.sep) or f == _USER_API):
                return None
            for root in cache_roots():
                self = cls(py_func, f, root)
                try:
                    self.ensure_cache_path()
                except OSError:
                    continue
                return self
            return None

    if not any(c.__name__ == "PortLocator" for c in caching.CacheImpl._locator_classes):
        caching.CacheImpl._locator_classes.insert(0, PortLocator)


try:
    _install_locator()
except ImportError:  # numba is not installed: the runtime says so when asked for
    pass


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
