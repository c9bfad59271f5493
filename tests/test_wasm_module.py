"""The shipped supertok.wasm: no imports, exactly the exports of core_c/wasm_exports.txt, the committed
module (core_c/supertok.wasm) and the same bytes as a rebuild from source with the pinned
toolchain."""
import importlib.util
import os
import subprocess
import sys

import pytest

from supertok.backends.wasm_runtime import WASM_PATH

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the one committed module (core_c/build_wasm.py writes it); the package loads a copy (setup.py)
CORE_WASM = os.path.join(ROOT, "core_c", "supertok.wasm")


def _module():
    wasmtime = pytest.importorskip("wasmtime")
    engine = wasmtime.Engine()
    return wasmtime.Module.from_file(engine, WASM_PATH)


def _listed_exports():
    with open(os.path.join(ROOT, "core_c", "wasm_exports.txt")) as f:
        return sorted(ln.strip() for ln in f if ln.strip() and not ln.startswith("#"))


def test_module_imports_nothing():
    assert [(i.module, i.name) for i in _module().imports] == []


def test_module_exports_exactly_the_list():
    assert sorted(e.name for e in _module().exports) == _listed_exports()


def test_pywasm_reads_the_module_imports_nothing():
    """Independent of wasmtime: pywasm's own parse of the import section."""
    import io

    import pywasm
    with open(WASM_PATH, "rb") as f:
        desc = pywasm.core.ModuleDesc.from_reader(io.BytesIO(f.read()))
    assert list(desc.imps) == []


def test_installed_package_ships_the_committed_module():
    """The module the package loads (a wheel's, an editable install's or `python setup.py
    copy_wasm`'s copy) is the committed one: a stale copy fails here."""
    with open(WASM_PATH, "rb") as a, open(CORE_WASM, "rb") as b:
        assert a.read() == b.read(), ("%s is not core_c/supertok.wasm: run python setup.py copy_wasm "
                                      "(or reinstall)" % WASM_PATH)


@pytest.mark.slow
def test_module_matches_a_rebuild_from_source():
    if os.environ.get("SUPERTOK_WASM_CHECKED") == "1":
        # .ci/run's first check, core_c/build_wasm.py --check, rebuilt and compared the module
        pytest.skip("the module was compared with a rebuild before pytest (.ci/run: build_wasm.py --check)")
    if importlib.util.find_spec("ziglang") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must rebuild the wasm module: pip install ziglang==0.14.1")
        pytest.skip("ziglang==0.14.1 is not installed: cannot rebuild the wasm module here")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "core_c", "build_wasm.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_wasm_size_recorded_in_readme():
    size = os.path.getsize(WASM_PATH)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "{:,} bytes".format(size) in readme, "README must state the .wasm size (%d bytes)" % size
