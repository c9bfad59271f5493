"""Copy the core's wasm module, core_c/supertok.wasm, into the package folder as supertok.wasm,
where the wasm backend loads it from.

The repository commits the module once, beside the core it is built from (core_c/build_wasm.py
writes it); the Python package keeps no copy in git (.gitignore). setup.py's build_py runs this
for a wheel (into the build folder) and for an editable install (into py/supertok/). A checkout
run in place needs no copy: the wasm runtime loads core_c/supertok.wasm when it is there
(backends/wasm_runtime.py), so it never runs a stale one.
Build-time only: the wheel leaves this file out (setup.py), the sdist keeps it (MANIFEST.in).
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CORE_WASM = os.path.join(os.path.dirname(os.path.dirname(HERE)), "core_c", "supertok.wasm")


def copy_core_wasm(package_dir=HERE):
    """Copy CORE_WASM to package_dir/supertok.wasm; returns the path written."""
    os.makedirs(package_dir, exist_ok=True)
    out = os.path.join(package_dir, "supertok.wasm")
    shutil.copyfile(CORE_WASM, out)
    return out


if __name__ == "__main__":
    print("copied %s to %s (%d bytes)" % (CORE_WASM, copy_core_wasm(), os.path.getsize(CORE_WASM)))
