"""cffi builder for the native backend: compiles core_c/src into the extension `supertok._native`.

Used by setup.py (`pip install .`); the declarations are read from core_c/include/supertok.h
itself (header_cdef), and API mode compiles them against the same header. cffi releases the GIL around
every call, which the batch APIs rely on.
"""
import glob
import os
import re

from cffi import FFI

ROOT = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

HEADER = os.path.join(ROOT, "core_c", "include", "supertok.h")


def header_cdef(path=HEADER):
    """The public header as cffi declarations: comments, the preprocessor lines (but the
    integer #defines) and the C++ guard go, the declarations stay, so the Python layer sees
    exactly the header (no second copy to drift)."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    out = []
    for line in text.splitlines():
        words = line.split()
        if line.startswith("#"):
            if len(words) == 3 and words[0] == "#define" and words[2].rstrip("u").isdigit():
                out.append("#define %s %s" % (words[1], words[2].rstrip("u")))
            continue
        if line.strip() in ('extern "C" {', "}") and not line.startswith(" "):
            continue  # the C++ guard
        out.append(re.sub(r"^ST_API ", "", line))  # the visibility macro is not C cffi parses
    return "\n".join(out) + "\n"


CDEF = header_cdef()

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "supertok._native",
    '#include "supertok.h"',
    sources=sorted(glob.glob(os.path.join(ROOT, "core_c", "src", "*.c"))),
    include_dirs=[os.path.join(ROOT, "core_c", "include")],
    extra_compile_args=["-O2", "-std=c11"] if os.name != "nt" else ["/O2"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
