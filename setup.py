"""Build hooks: the native backend is an optional cffi extension.

Where no C compiler works, building supertok._native fails and the package installs anyway: it
then runs the bundled supertok.wasm on wasmtime (a dependency where wasmtime has wheels) or, where
wasmtime has none, on pywasm. The same holds for supertok._lists (fast id lists), without which
the backends unpack ids with struct.

Either way the build says which backend the installed package will run on and why, as a Python
warning: pip (from 26 at least) forwards a build backend's warnings and shows them without -v
when it builds a local directory (`pip install .`, `pip wheel .`); older pips show them with -v.

The build runs in a new temporary directory, removed afterwards, unless one is given (e.g.
`setup.py build --build-base DIR`): a build/ left in the tree by an earlier build is never
reused, so no stale object or removed module reaches a wheel.

The wasm module is not kept in the Python package's folder: the one committed copy is the core's,
core_c/supertok.wasm (core_c/build_wasm.py writes it; the npm package takes it from there too).
build_py copies it into the package (py/supertok/_copy_wasm.py): into the wheel, and, for an
editable install, into py/supertok/ beside the sources, where an editable install's native
extension lands too. That copy is not committed (.gitignore).
"""
import atexit
import importlib.util
import os
import re
import shutil
import tempfile
import warnings

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

NATIVE = "supertok._native"
LISTS = "supertok._lists"

# Modules of the package the wheel does not ship: the cffi build script and the copy of the wasm
# module run at build time only (they stay in the sdist, and tests/test_c_api.py loads the cffi
# build script from the tree).
BUILD_ONLY_MODULES = {("supertok", "_build_native"), ("supertok", "_copy_wasm")}


class build_in_temp_dir(build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = None  # unset: finalize_options picks a new temporary directory

    def finalize_options(self):
        if self.build_base is None:
            self.build_base = tempfile.mkdtemp(prefix="supertok-build-")
            atexit.register(shutil.rmtree, self.build_base, True)
        super().finalize_options()


HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_WASM = os.path.join("supertok", "supertok.wasm")  # where the wasm backend loads it


def copy_core_wasm(package_dir):
    """core_c/supertok.wasm into package_dir, by py/supertok/_copy_wasm.py, loaded by its path
    (importing the package would load its backends, and the build needs none)."""
    path = os.path.join(HERE, "py", "supertok", "_copy_wasm.py")
    spec = importlib.util.spec_from_file_location("_supertok_copy_wasm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.copy_core_wasm(package_dir)


class build_py_runtime_only(build_py):
    def find_package_modules(self, package, package_dir):
        return [m for m in super().find_package_modules(package, package_dir)
                if (m[0], m[1]) not in BUILD_ONLY_MODULES]

    def run(self):
        super().run()  # in editable mode this copies nothing: the package is read in place
        root = os.path.join(HERE, "py") if self.editable_mode else self.build_lib
        copy_core_wasm(os.path.join(root, "supertok"))

    def get_outputs(self, include_bytecode=True):
        extra = [] if self.editable_mode else [os.path.join(self.build_lib, PACKAGE_WASM)]
        return super().get_outputs(include_bytecode) + extra


def _wasmtime_is_installed_with(dist):
    """Whether the dependencies bring wasmtime on this platform: the environment marker of the
    wasmtime requirement in pyproject.toml, evaluated here. None when it cannot be told."""
    for req in dist.install_requires or ():
        if req.split(";")[0].strip().startswith("wasmtime"):
            if ";" not in req:
                return True
            try:
                from packaging.markers import Marker  # setuptools >= 71 carries a copy
            except ImportError:
                return None
            return Marker(req.split(";", 1)[1]).evaluate()
    return False


def _short(exc):
    """The reason a build failed, in a line: the failing command's program, not its arguments."""
    text = str(exc)
    m = re.search(r"Command '\[\s*'([^']*)'.*returned non-zero exit status (-?\d+)", text, re.S)
    if m:
        return "%s exited with status %s" % m.groups()
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."


_reported = False


def _report(text):
    """One line pip shows without -v (see the module's docstring)."""
    global _reported
    if not _reported:
        _reported = True
        warnings.warn_explicit("supertok: " + text, UserWarning, "setup.py", 0)


class optional_build_ext(build_ext):
    def run(self):
        self._failed = {}
        try:
            super().run()
        except Exception as exc:  # no compiler at all, missing headers, ...
            for ext in self.extensions:
                self._failed.setdefault(ext.name, exc)
        self._say_backend()

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # the compiler or the linker failed on this extension
            self._failed[ext.name] = exc

    def _say_backend(self):
        why = self._failed.get(NATIVE)
        if why is None:
            text = "built the native backend (the C core as %s): supertok will run on native." % NATIVE
            if LISTS in self._failed:
                text += " (The optional helper %s was not built: %s.)" % (LISTS, _short(self._failed[LISTS]))
            _report(text)
            return
        wasmtime = _wasmtime_is_installed_with(self.distribution)
        if wasmtime:
            runs = ("supertok will run on wasmtime (the bundled wasm module; a dependency on this "
                    "platform), which is slower than native.")
        elif wasmtime is None:
            runs = ("supertok will run on wasmtime where it is installed, else on pywasm, a "
                    "pure-Python interpreter thousands of times slower than native.")
        else:
            runs = ("supertok will run on pywasm, a pure-Python interpreter thousands of times "
                    "slower than native (wasmtime has no wheel for this platform).")
        _report("the native backend could not be built (%s: %s). %s For the native backend, "
                "install a C compiler (gcc or clang) and reinstall."
                % (type(why).__name__, _short(why), runs))


if __name__ == "__main__":  # as setuptools runs it; tests/test_install.py imports the helpers
    setup(
        cmdclass={"build": build_in_temp_dir, "build_py": build_py_runtime_only,
                  "build_ext": optional_build_ext},
        # optional too: lists of ids without a new int object per id (see the file's header)
        ext_modules=[Extension(LISTS, ["py/supertok/_lists.c"])],
        cffi_modules=["py/supertok/_build_native.py:ffibuilder"],
    )
