#!/usr/bin/env python3
"""Build core_c/supertok.wasm from the core (the files core_c/sources.txt lists) with the
pinned toolchain.

    python core_c/build_wasm.py           # build and write the module
    python core_c/build_wasm.py --check   # rebuild into a temp file; exit 1 if it differs

core_c/supertok.wasm is the one committed copy of the module, beside the sources it is built
from: the hosts take it from there and keep no copy in git. The Python package gets it at build
time (setup.py copies it into the wheel, and into py/supertok/ for an editable install or
`python setup.py copy_wasm`); the npm package when packed (wasm/tools/copy-assets.mjs), and a
checkout's wasm/supertok.mjs reads it in place. So this build writes nothing outside core_c/.

The toolchain is Zig's clang from PyPI (`ziglang==0.14.1`, which pip alone installs), target
wasm32-freestanding, no libc: the core brings its own mem* and allocator (platform.c). The
export list is core_c/wasm_exports.txt, nothing else is exported, and the module must import nothing
(tests/test_wasm_module.py checks both). -mcpu=mvp keeps the module to WebAssembly 1.0 plus
nothing, so every runner (browsers, Node.js, wasmtime, pywasm) takes the same bytes.
"""
import importlib.metadata
import os
import subprocess
import sys
import tempfile

ZIG_VERSION = "0.14.1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "core_c", "supertok.wasm")


def exports():
    with open(os.path.join(ROOT, "core_c", "wasm_exports.txt")) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


def core_sources():
    """The core's sources as core_c/sources.txt lists them (comments and blank lines dropped),
    relative to the repository root."""
    with open(os.path.join(ROOT, "core_c", "sources.txt"), encoding="utf-8") as f:
        lines = [ln.split("#", 1)[0].strip() for ln in f]
    return [os.path.join("core_c", ln) for ln in lines if ln]


def build(out):
    try:
        found = importlib.metadata.version("ziglang")
    except importlib.metadata.PackageNotFoundError:
        sys.exit("build_wasm: needs ziglang==%s (pip install ziglang==%s)" % (ZIG_VERSION, ZIG_VERSION))
    if found != ZIG_VERSION:
        sys.exit("build_wasm: needs ziglang==%s, found %s" % (ZIG_VERSION, found))
    # relative paths keep the build independent of where the checkout lives
    sources = core_sources()
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", "wasm32-freestanding", "-mcpu=mvp",
           "-O2", "-std=c11", "-nostdlib", "-ffreestanding", "-fno-ident",
           "-Wl,--no-entry", "-Wl,--strip-all", "-Wl,-z,stack-size=262144"]
    cmd += ["-Wl,--export=" + name for name in exports() if name != "memory"]
    cmd += ["-o", out] + sources
    subprocess.run(cmd, check=True, cwd=ROOT)


def main():
    if "--check" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = os.path.join(tmp, "supertok.wasm")
            build(fresh)
            with open(fresh, "rb") as a, open(OUT, "rb") as b:
                if a.read() != b.read():
                    print("core_c/supertok.wasm differs from a rebuild: run python core_c/build_wasm.py")
                    return 1
        print("supertok.wasm matches a rebuild (%d bytes)" % os.path.getsize(OUT))
        return 0
    build(OUT)
    print("wrote core_c/supertok.wasm (%d bytes)" % os.path.getsize(OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
