"""What an install lands on: the backend selection order, the one-time warning when the process
falls back to pywasm, and the package metadata that brings wasmtime where it has wheels.

The builds themselves (no C compiler -> wasmtime, the build naming the backend, the wheel's
contents) are checked by .ci/run, which builds and installs in fresh environments.
"""
import importlib.metadata
import os
import subprocess
import sys
import warnings

import pytest

from supertok import backends


class _Fake:
    def __init__(self, name):
        self.name = name


def _fake_load(loads):
    """A backends.load that gives a _Fake for the names in `loads` and refuses the others."""
    def load(name):
        if name in loads:
            return _Fake(name)
        raise backends.BackendUnavailable("%s refused by the test" % name)
    return load


@pytest.fixture
def selection(monkeypatch):
    """select() on fake backends, with the once-per-process warning flag reset."""
    monkeypatch.delenv("SUPERTOK_BACKEND", raising=False)
    monkeypatch.setattr(backends, "_warned_slow", False)

    def run(loads, forced=None):
        monkeypatch.setattr(backends, "load", _fake_load(loads))
        if forced:
            monkeypatch.setenv("SUPERTOK_BACKEND", forced)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = backends.select()
        return got.name, [w for w in caught if issubclass(w.category, backends.SlowBackendWarning)]
    return run


@pytest.mark.parametrize("loads, expect", [
    ({"native", "wasmtime", "pywasm"}, "native"),
    ({"wasmtime", "pywasm"}, "wasmtime"),
    ({"native", "pywasm"}, "native"),
])
def test_selection_prefers_native_then_wasmtime_without_warning(selection, loads, expect):
    name, slow = selection(loads)
    assert name == expect
    assert slow == []


def test_falling_back_to_pywasm_warns_once_with_reasons_and_remedy(selection):
    name, slow = selection({"pywasm"})
    assert name == "pywasm"
    assert len(slow) == 1
    text = str(slow[0].message)
    assert "native: native refused by the test" in text and "wasmtime: wasmtime refused by the test" in text
    assert "pip install wasmtime" in text and "C compiler" in text and "SUPERTOK_BACKEND=pywasm" in text
    assert slow[0].filename == os.path.abspath(__file__), "the warning should point at the caller"
    # once per process: a second selection (or a later one) stays quiet
    name, slow = selection({"pywasm"})
    assert name == "pywasm" and slow == []


def test_pywasm_by_name_does_not_warn_but_wasm_ending_on_pywasm_does(selection):
    name, slow = selection({"native", "wasmtime", "pywasm"}, forced="pywasm")
    assert name == "pywasm" and slow == []
    name, slow = selection({"native", "pywasm"}, forced="wasm")
    assert name == "pywasm" and len(slow) == 1


def test_forced_backend_that_does_not_load_names_the_reason(selection):
    with pytest.raises(backends.BackendUnavailable, match="SUPERTOK_BACKEND=wasmtime was forced but "
                       "cannot load: wasmtime refused by the test"):
        selection({"native", "pywasm"}, forced="wasmtime")


def test_report_gives_a_reason_for_each_backend_that_does_not_load(monkeypatch):
    monkeypatch.setattr(backends, "load", _fake_load({"wasmtime", "pywasm"}))
    assert backends.report() == [("native", "native refused by the test"),
                                 ("wasmtime", None), ("numba", "numba refused by the test"), ("pywasm", None)]
    assert backends.available() == ["wasmtime", "pywasm"]


def test_a_wasmtime_that_cannot_run_here_is_unavailable_not_a_crash(monkeypatch):
    from supertok.backends import wasm_runtime as wasm

    class Broken:
        def __init__(self):
            raise OSError("cannot load _wasmtime.so")
    monkeypatch.setattr(wasm, "WasmtimeRunner", Broken)
    monkeypatch.setattr(backends, "_loaded", {})  # load() keeps the backend it made: start afresh
    with pytest.raises(backends.BackendUnavailable, match=r"does not run here \(OSError: cannot load"):
        backends.load("wasmtime")


def test_the_pywasm_warning_in_a_real_process():
    """No native extension, no wasmtime and no numba importable: the process runs on pywasm and says
    so once on stderr, naming the reasons."""
    code = ("import sys; sys.modules['supertok._native'] = None; sys.modules['wasmtime'] = None\n"
            "sys.modules['numba'] = None\n"
            "import supertok\n"
            "print(supertok.backend()); print(supertok.backend())\n")
    env = {k: v for k, v in os.environ.items() if k != "SUPERTOK_BACKEND"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["pywasm", "pywasm"]
    assert r.stderr.count("SlowBackendWarning") == 1, r.stderr
    assert "supertok._native is not built" in r.stderr and "wasmtime is not installed" in r.stderr, r.stderr
    assert "numba is not installed" in r.stderr, r.stderr


def test_the_pywasm_warning_comes_at_import():
    """With neither faster backend importable, `import supertok` itself warns (once), naming the
    user's line, before any call; a forced backend does not."""
    code = ("import sys, warnings; sys.modules['supertok._native'] = None; sys.modules['wasmtime'] = None\n"
            "sys.modules['numba'] = None\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import supertok\n"
            "print(len(w), w[0].category.__name__ if w else '', w[0].filename if w else '')\n"
            "print(supertok.backend())\n")
    env = {k: v for k, v in os.environ.items() if k != "SUPERTOK_BACKEND"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.split("\n")[:2]
    assert first == "1 SlowBackendWarning <string>", r.stdout
    assert second == "pywasm" and "SlowBackendWarning" not in r.stderr, (r.stdout, r.stderr)
    r = subprocess.run([sys.executable, "-W", "error", "-c", "import sys; sys.modules['wasmtime'] = None\n"
                        "sys.modules['supertok._native'] = None\nimport supertok"],
                       env=dict(env, SUPERTOK_BACKEND="pywasm"), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def _requirements():
    try:
        return importlib.metadata.requires("supertok") or []
    except importlib.metadata.PackageNotFoundError:  # run from a tree that was never installed
        pytest.fail("supertok is not installed: pip install -e '.[test]'")


def test_wasmtime_is_a_dependency_exactly_where_it_has_wheels():
    from packaging.requirements import Requirement  # pytest depends on packaging

    reqs = [Requirement(r) for r in _requirements()]
    [wt] = [r for r in reqs if r.name == "wasmtime" and not (r.marker and "extra" in str(r.marker))]
    base = {"python_version": "3.11", "python_full_version": "3.11.7", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "os_name": "posix", "extra": ""}
    wheels = [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "x86_64"), ("darwin", "arm64"),
              ("win32", "AMD64"), ("win32", "ARM64")]
    none = [("linux", "ppc64le"), ("linux", "s390x"), ("linux", "armv7l"), ("linux", "i686"),
            ("freebsd14", "amd64"), ("emscripten", "wasm32"), ("win32", "x86")]
    for plat, machine in wheels + none:
        env = dict(base, sys_platform=plat, platform_machine=machine)
        assert wt.marker.evaluate(env) == ((plat, machine) in wheels), (plat, machine, str(wt.marker))
    assert wt.specifier.contains("50.0.1") and not wt.specifier.contains("38.0.0")


def test_the_wasm_toolchain_is_only_an_extra():
    from packaging.requirements import Requirement

    for r in map(Requirement, _requirements()):
        if r.name == "ziglang":
            assert r.marker is not None and ("extra == \"build\"" in str(r.marker)
                                             or "extra == \"dev\"" in str(r.marker)), str(r)
        if r.name == "pywasm":
            assert r.marker is None, "pywasm is the fallback every install has"


def _setup_py():
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "setup.py")
    spec = importlib.util.spec_from_file_location("_supertok_setup_py", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # defines the build hooks; setup() runs only as __main__
    return mod


class _Dist:
    def __init__(self, *install_requires):
        self.install_requires = list(install_requires)


@pytest.mark.parametrize("failed, requires, says", [
    ({}, ['wasmtime>=39; sys_platform == "nonesuch"'], "built the native backend"),
    ({"supertok._native": OSError("x")}, ["cffi", "wasmtime>=39"], "will run on wasmtime (the bundled"),
    ({"supertok._native": OSError("x")}, ['wasmtime>=39; sys_platform == "nonesuch"'], "will run on pywasm"),
])
def test_the_build_says_which_backend_the_install_will_use(monkeypatch, failed, requires, says):
    mod = _setup_py()
    said = []
    monkeypatch.setattr(mod, "_report", said.append)
    cmd = mod.optional_build_ext.__new__(mod.optional_build_ext)
    cmd._failed, cmd.distribution = dict(failed), _Dist(*requires)
    cmd._say_backend()
    assert len(said) == 1 and says in said[0], said
    if failed:
        assert "could not be built (OSError: x)" in said[0] and "install a C compiler" in said[0]


def test_the_build_names_the_failing_compiler_not_its_arguments():
    mod = _setup_py()
    exc = RuntimeError("Command '['/bin/false', '-O2', '-c', 'core_c/src/a.c', '-o', 'a.o']' returned "
                       "non-zero exit status 1.")
    assert mod._short(exc) == "/bin/false exited with status 1"
    assert mod._short(OSError("[Errno 2] No such file or directory: 'cc'")) == \
        "[Errno 2] No such file or directory: 'cc'"



ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE_WASM = os.path.join(ROOT, "core_c", "supertok.wasm")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def test_build_py_copies_the_core_wasm_into_the_package(tmp_path, monkeypatch):
    """The package has no wasm module of its own in git: setup.py's build_py copies the core's
    committed one (core_c/supertok.wasm) into what a wheel is made of, and leaves the build-time
    scripts out. (The command alone, on a Distribution made here: pyproject.toml wants a newer
    setuptools than a test environment may have; .ci/run builds real wheels.)"""
    from setuptools.dist import Distribution
    monkeypatch.chdir(ROOT)
    dist = Distribution({"name": "supertok", "script_name": "setup.py", "package_dir": {"": "py"},
                         "packages": ["supertok", "supertok.backends", "supertok.vocab"],
                         "package_data": {"supertok": ["catalogue.json"]}})
    cmd = _setup_py().build_py_runtime_only(dist)
    cmd.build_lib = str(tmp_path)
    cmd.ensure_finalized()
    cmd.run()
    pkg = tmp_path / "supertok"
    assert _read(pkg / "supertok.wasm") == _read(CORE_WASM)
    assert str(pkg / "supertok.wasm") in cmd.get_outputs()
    assert (pkg / "catalogue.json").exists() and (pkg / "__init__.py").exists()
    assert not (pkg / "_build_native.py").exists() and not (pkg / "_copy_wasm.py").exists()


def test_copy_wasm_writes_the_package_copy(tmp_path):
    """What an editable install and a checkout run in place use (py/supertok/_copy_wasm.py)."""
    out = _setup_py().copy_core_wasm(str(tmp_path))
    assert out == os.path.join(str(tmp_path), "supertok.wasm")
    assert _read(out) == _read(CORE_WASM)


@pytest.mark.slow
def test_a_wheel_built_without_a_compiler_ships_the_core_wasm(tmp_path):
    """pip's own build of the checkout (isolated, setuptools from PyPI) with no C compiler
    (CC=/bin/false): the wheel has no native extension and carries the core's module."""
    import zipfile
    env = dict(os.environ, CC="/bin/false")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), ROOT],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    [wheel] = tmp_path.glob("supertok-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert z.read("supertok/supertok.wasm") == _read(CORE_WASM)
    assert not [n for n in names if "_native" in n or n.endswith(("_copy_wasm.py", "_build_native.py"))], names


def test_every_package_folder_is_listed_for_the_wheel():
    """pyproject.toml lists the packages the wheel ships (no discovery: py/ holds build-only
    files); a new folder of the package missing there installs without it, and the installed
    package fails where it imports it (the numba backend's train/ once did)."""
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    py = os.path.join(ROOT, "py")
    found = set()
    for folder, dirs, files in os.walk(os.path.join(py, "supertok")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files:
            found.add(os.path.relpath(folder, py).replace(os.sep, "."))
    assert found == listed, ("not listed: %s; listed but absent: %s" % (sorted(found - listed), sorted(listed - found)))
