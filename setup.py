"""Build hooks: the native backend is an optional cffi extension.

Where no C compiler is available the build of supertok._native fails, the failure is
reported, and the package installs anyway: it then runs on the bundled supertok.wasm.
The same holds for supertok._lists (fast id lists); without it the backends use ffi.unpack.
"""
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class optional_build_ext(build_ext):
    def run(self):
        try:
            super().run()
        except Exception as exc:  # no compiler, missing headers, ...
            self._skip(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._skip(exc)

    def _skip(self, exc):
        sys.stderr.write(
            "supertok: the native backend could not be built (%s); "
            "the package will use the wasm backend.\n" % (exc,))


setup(
    cmdclass={"build_ext": optional_build_ext},
    # optional too: lists of ids without a new int object per id (see the file's header)
    ext_modules=[Extension("supertok._lists", ["py/supertok/_lists.c"])],
    cffi_modules=["py/supertok/_build_native.py:ffibuilder"],
)
