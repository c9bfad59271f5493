"""The C core's public API, as a C embedder sees it.

- every public function in core_c/include/supertok.h carries ST_API, and core_c/wasm_exports.txt lists
  exactly the header's functions (plus `memory`);
- the shared library built by core_c/Makefile exports exactly those names (no st__* or st_ucd_*),
  has a soname with the major version, installs with a pkg-config file that compiles a program;
- the example program (core_c/examples/encode_file.c) gives the ids the Python package gives;
- the cffi extension exports no internal symbol either; the CMake build gives the same library.

The build tests skip (with the reason) only when there is no C compiler, make, nm (or cmake, for
the CMake test).
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "core_c", "tools")
sys.path.insert(0, TOOLS)

import apply_st_api  # noqa: E402
import check_api  # noqa: E402

VOCAB = os.path.join(ROOT, "py", "supertok", "vocab", "o200k_base.tiktoken")

TEXT = (
    "Tokenizers in C: encode_file.c reads a rank file, 12,345 lines. "
    "Déjà vu, naïve café! Straße. Привет, как дела? Ελληνικά κείμενα. "
    "中文分词很难。日本語のテキスト、カタカナ。한국어 문장입니다. "
    "العربية نص. עברית. हिन्दी पाठ. ภาษาไทย. "
    "Emoji 🙂🚀 👩‍💻, tabs\t\tand  spaces \n\n<|endoftext|> stays text here.\r\n"
)


def _cc():
    cc = os.environ.get("CC")
    if cc and shutil.which(cc.split()[0]):
        return cc
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    return None


def _need_build_tools():
    if _cc() is None:
        pytest.skip("no C compiler (cc/gcc/clang) on PATH: the C library build tests need one")
    if shutil.which("make") is None:
        pytest.skip("no make on PATH: the C library build tests need GNU make")


def _need_nm():
    if shutil.which("nm") is None:
        pytest.skip("no nm on PATH (binutils): the export checks need it")


# ---- the header and the export list ----------------------------------------------------------


def test_every_public_declaration_carries_st_api():
    assert check_api.missing_st_api() == [], "run python core_c/tools/apply_st_api.py"


def test_exports_txt_equals_the_header_functions():
    names = check_api.header_functions()
    assert len(names) == len(set(names)) and len(names) > 30
    assert all(n.startswith("st_") and not n.startswith("st__") for n in names)
    assert check_api.check_exports_txt() == []
    assert sorted(check_api.listed_exports()) == sorted(names + ["memory"])


def test_apply_st_api_is_mechanical():
    """Idempotent on the header, and on a sample it marks declarations only (not typedefs,
    function-pointer members or the macro block), realigning continuation lines."""
    with open(check_api.HEADER, encoding="utf-8") as f:
        text = f.read()
    assert apply_st_api.apply(text) == text
    sample = (
        "#include <stddef.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
        "typedef struct st_a { void *(*alloc)(void *ctx, size_t n); int x; } st_a;\n"
        "typedef int (*st_cb)(int);\n"
        "/* st_fake(int) in a comment */\n"
        "const char *st_one(int status);\n"
        "st_status st_two(const char *a,\n"
        "                 size_t n);\n"
        "ST_API void st_three(void);\n"
        "#ifdef __cplusplus\n}\n#endif\n"
    )
    out = apply_st_api.apply(sample)
    assert "#define ST_API" in out
    body = out[out.index("#endif\n", out.index("#define ST_API")):]
    assert "ST_API const char *st_one(int status);" in body
    assert "ST_API st_status st_two(const char *a,\n                        size_t n);" in body
    assert "ST_API ST_API" not in body
    assert "ST_API typedef" not in body and "ST_API void *(*alloc)" not in body
    assert [n for _, _, n, _ in apply_st_api.declarations(out)] == ["st_one", "st_two", "st_three"]
    assert apply_st_api.apply(out) == out


def test_cffi_declarations_drop_the_macro():
    """The cffi build reads the header itself: ST_API must not reach cffi's parser."""
    pytest.importorskip("cffi", reason="cffi is not installed: the native build's cdef is not used")
    spec = importlib.util.spec_from_file_location(
        "_st_build_native", os.path.join(ROOT, "py", "supertok", "_build_native.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cdef = mod.header_cdef(check_api.HEADER)
    assert "ST_API" not in cdef
    for name in check_api.header_functions():
        assert name + "(" in cdef.replace(" (", "(")


# ---- the Make build -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def make_build(tmp_path_factory):
    """core_c built by its Makefile: the libraries and the example. SUPERTOK_CORE_BUILD names a
    build directory made already (.ci/run sets it to the one its `make -C core_c check` filled,
    so the library is not compiled twice); otherwise the Makefile builds into a temporary one."""
    _need_build_tools()
    prebuilt = os.environ.get("SUPERTOK_CORE_BUILD")
    if prebuilt:
        missing = [n for n in ("libsupertok.a", "encode_file", "encode_file_shared")
                   if not os.path.isfile(os.path.join(prebuilt, n))]
        assert not missing, "SUPERTOK_CORE_BUILD=%s lacks %s: run make -C core_c check" % (prebuilt, missing)
        return prebuilt
    build = tmp_path_factory.mktemp("core_c_build")
    env = dict(os.environ, CC=_cc())
    proc = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "core_c"), "BUILD=%s" % build,
                           "-j2", "all", "example"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return str(build)


def _shared_lib(build):
    libs = [p for p in os.listdir(build) if p.startswith("libsupertok.so.") and p.count(".") == 4]
    assert len(libs) == 1, os.listdir(build)
    return os.path.join(build, libs[0])


def test_make_builds_static_and_shared_libraries(make_build):
    assert os.path.isfile(os.path.join(make_build, "libsupertok.a"))
    lib = _shared_lib(make_build)
    with open(check_api.HEADER) as f:
        major = [ln.split()[2] for ln in f if ln.startswith("#define ST_VERSION_MAJOR")][0]
    assert os.readlink(os.path.join(make_build, "libsupertok.so.%s" % major)) == os.path.basename(lib)
    if shutil.which("readelf"):
        dyn = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True, check=True).stdout
        assert "[libsupertok.so.%s]" % major in dyn  # the soname carries the major version


def test_shared_library_exports_exactly_the_public_names(make_build):
    _need_nm()
    lib = _shared_lib(make_build)
    exported = check_api.exported_symbols(lib)
    assert check_api.internal(exported) == []
    assert exported == set(check_api.header_functions())
    assert check_api.check_library(lib) == []


def _run_example(make_build, exe, *args, text=TEXT):
    with tempfile.TemporaryDirectory() as scratch:  # not in the build directory, which may be CI's
        path = os.path.join(scratch, "input.txt")
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        return subprocess.run([os.path.join(make_build, exe)] + list(args) + [path], capture_output=True, text=True)


@pytest.mark.parametrize("exe", ["encode_file", "encode_file_shared"])
def test_example_gives_the_packages_ids(make_build, exe):
    import supertok

    want = supertok.get_encoding("o200k_base").encode_ordinary(TEXT)
    proc = _run_example(make_build, exe, VOCAB, "o200k")
    assert proc.returncode == 0, proc.stderr
    assert [int(x) for x in proc.stdout.split()] == want
    proc = _run_example(make_build, exe, "-c", VOCAB, "o200k")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(len(want))


def test_example_gives_tiktokens_ids_on_the_committed_sample(make_build):
    """The sample make check encodes, against the ids tiktoken gave for it (committed)."""
    examples = os.path.join(ROOT, "core_c", "examples")
    with open(os.path.join(examples, "sample.txt"), "rb") as f:
        sample = f.read()
    with open(os.path.join(examples, "sample.o200k_base.ids")) as f:
        want = [int(x) for x in f.read().split()]
    proc = _run_example(make_build, "encode_file", VOCAB, "o200k", text=sample)
    assert proc.returncode == 0, proc.stderr
    assert [int(x) for x in proc.stdout.split()] == want
    import supertok

    assert supertok.get_encoding("o200k_base").encode_ordinary(sample.decode("utf-8")) == want


def test_example_reports_errors(make_build, tmp_path):
    proc = _run_example(make_build, "encode_file", VOCAB, "o200k", text=b"abc \xe2\x82 def")
    assert proc.returncode == 1
    assert "invalid UTF-8" in proc.stderr and "byte offset 4" in proc.stderr, proc.stderr
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"YQ== 0\nYg== 1\n!!!! 2\n")
    proc = _run_example(make_build, "encode_file", str(bad), "gpt2")
    assert proc.returncode == 1
    # today's API reports the line's byte offset; with st_error its line number
    assert "malformed" in proc.stderr and ("byte offset 14" in proc.stderr or "line 3" in proc.stderr), proc.stderr
    proc = _run_example(make_build, "encode_file", VOCAB, "no-such-pattern")
    assert proc.returncode == 2 and "unknown PATTERN" in proc.stderr
    proc = subprocess.run([os.path.join(make_build, "encode_file"), str(tmp_path / "absent"), "o200k", "x"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "absent" in proc.stderr


def test_install_and_build_against_pkg_config(make_build, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.skip("no pkg-config on PATH: the installed-library test needs it")
    prefix = tmp_path / "prefix"
    env = dict(os.environ, CC=_cc())
    proc = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "core_c"), "BUILD=%s" % make_build,
                           "install", "PREFIX=%s" % prefix], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    env["PKG_CONFIG_PATH"] = str(prefix / "lib" / "pkgconfig")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "supertok"], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    exe = str(tmp_path / "encode_file")
    subprocess.run(_cc().split() + ["-std=c11", os.path.join(ROOT, "core_c", "examples", "encode_file.c")] + flags
                   + ["-Wl,-rpath,%s" % (prefix / "lib"), "-o", exe], check=True, env=env)
    text = tmp_path / "t.txt"
    text.write_text(TEXT, encoding="utf-8")
    proc = subprocess.run([exe, "-c", VOCAB, "o200k", str(text)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import supertok

    assert int(proc.stdout) == len(supertok.get_encoding("o200k_base").encode_ordinary(TEXT))


# ---- the cffi extension -----------------------------------------------------------------------


def test_cffi_extension_exports_no_internal_symbols():
    _need_nm()
    import supertok

    pkg = os.path.dirname(supertok.__file__)
    exts = [os.path.join(pkg, p) for p in os.listdir(pkg) if p.startswith("_native") and p.endswith(".so")]
    if not exts:
        pytest.skip("no native extension (supertok/_native*.so) in %s: built without a C compiler" % pkg)
    for ext in exts:
        exported = check_api.exported_symbols(ext)
        assert check_api.internal(exported) == [], ext
        public = set(check_api.header_functions())
        # the header's functions, and the module's init function: nothing else
        assert {n for n in exported if not n.startswith("PyInit_")} == public, ext


# ---- the CMake build (the same library, for CMake users) -----------------------------------------


@pytest.mark.slow  # a second build of the whole library
def test_cmake_build_matches_the_make_build(tmp_path):
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on PATH: core_c/CMakeLists.txt is not tried (the Make build is)")
    if _cc() is None:
        pytest.skip("no C compiler (cc/gcc/clang) on PATH: the C library build tests need one")
    _need_nm()
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    env = dict(os.environ, CC=_cc())
    for cmd in (["cmake", "-S", os.path.join(ROOT, "core_c"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 "-DCMAKE_INSTALL_PREFIX=%s" % prefix, "-DCMAKE_INSTALL_LIBDIR=lib"],
                ["cmake", "--build", str(build), "-j2"], ["cmake", "--install", str(build)]):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    lib = prefix / "lib" / "libsupertok.so"
    assert (prefix / "lib" / "libsupertok.a").is_file() and (prefix / "include" / "supertok.h").is_file()
    assert check_api.check_library(str(lib)) == []
    with open(prefix / "lib" / "pkgconfig" / "supertok.pc") as f:
        assert "prefix=%s\n" % prefix in f.read()
    proc = _run_example(build, "encode_file", VOCAB, "o200k")
    import supertok

    assert [int(x) for x in proc.stdout.split()] == supertok.get_encoding("o200k_base").encode_ordinary(TEXT)

    # a consumer as a CMake user writes one: find_package against the installed package, linking
    # the shared target (its rpath comes from CMake) and the static one
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(consumer LANGUAGES C)\n"
        "find_package(supertok 0.1 REQUIRED)\n"
        "add_executable(encode_shared %s)\ntarget_link_libraries(encode_shared PRIVATE supertok::supertok)\n"
        "add_executable(encode_static %s)\ntarget_link_libraries(encode_static PRIVATE supertok::supertok_static)\n"
        % ((os.path.join(ROOT, "core_c", "examples", "encode_file.c").replace("\\", "/"),) * 2))
    for cmd in (["cmake", "-S", str(consumer), "-B", str(consumer / "build"), "-DCMAKE_PREFIX_PATH=%s" % prefix],
                ["cmake", "--build", str(consumer / "build"), "-j2"]):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    for exe in ("encode_shared", "encode_static"):
        proc = _run_example(consumer / "build", exe, VOCAB, "o200k")
        assert [int(x) for x in proc.stdout.split()] == supertok.get_encoding("o200k_base").encode_ordinary(TEXT), exe


def test_cmake_builds_release_unless_told(tmp_path):
    """An unset CMAKE_BUILD_TYPE would compile with no -O at all; the project makes it Release."""
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on PATH: core_c/CMakeLists.txt is not tried (the Make build is)")
    if _cc() is None:
        pytest.skip("no C compiler (cc/gcc/clang) on PATH: the C library build tests need one")
    build = tmp_path / "build"
    proc = subprocess.run(["cmake", "-S", os.path.join(ROOT, "core_c"), "-B", str(build)],
                          env=dict(os.environ, CC=_cc()), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(build / "CMakeCache.txt") as f:
        assert "CMAKE_BUILD_TYPE:STRING=Release\n" in f.read()
