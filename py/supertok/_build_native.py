"""cffi builder for the native backend: compiles the core (the files core_c/sources.txt lists) into
the extension `supertok._native`.

Used by setup.py (`pip install .`); the declarations are read from core_c/include/supertok.h
itself (header_cdef), and API mode compiles them against the same header. cffi releases the GIL around
every call, which the batch APIs rely on.
"""
import os
import re

from cffi import FFI

ROOT = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

HEADER = os.path.join(ROOT, "core_c", "include", "supertok.h")


def core_sources():
    """The core's sources as core_c/sources.txt lists them (comments and blank lines dropped)."""
    with open(os.path.join(ROOT, "core_c", "sources.txt"), encoding="utf-8") as f:
        lines = [ln.split("#", 1)[0].strip() for ln in f]
    return [os.path.join(ROOT, "core_c", ln) for ln in lines if ln]


def header_cdef(path=HEADER):
    """The public header as cffi declarations: comments, the preprocessor lines (but the
    integer #defines), the C++ guard and the ST_API macro go, the declarations stay, so the
    Python layer sees exactly the header (no second copy to drift)."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    text = re.sub(r"\bST_API\s+", "", text)  # the visibility macro: cffi needs plain declarations
    out = []
    for line in text.splitlines():
        words = line.split()
        if line.startswith("#"):
            if len(words) == 3 and words[0] == "#define" and words[2].rstrip("u").isdigit():
                out.append("#define %s %s" % (words[1], words[2].rstrip("u")))
            continue
        if line.strip() in ('extern "C" {', "}") and not line.startswith(" "):
            continue  # the C++ guard
        out.append(re.sub(r"\bST_API\s+", "", line))  # the visibility macro: not for cffi
    return "\n".join(out) + "\n"


CDEF = header_cdef()

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "supertok._native",
    '#include "supertok.h"',
    sources=core_sources(),
    include_dirs=[os.path.join(ROOT, "core_c", "include")],
    # hidden by default: the extension exports only its init function and the ST_API names,
    # none of the core's internal st__* / st_ucd_* symbols (tests/test_c_api.py checks)
    extra_compile_args=["-O2", "-std=c11", "-fvisibility=hidden"] if os.name != "nt" else ["/O2"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
