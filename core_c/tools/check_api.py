#!/usr/bin/env python3
"""The public API of the C core, checked in the places that list it.

    python core_c/tools/check_api.py              # header declarations all carry ST_API, and
                                                  # core_c/wasm_exports.txt == the header's functions + memory
    python core_c/tools/check_api.py --list       # print the public function names (header order)
    python core_c/tools/check_api.py --lib LIB.so # also: LIB exports exactly those names
    python core_c/tools/check_api.py --write-exports  # make core_c/wasm_exports.txt match the header:
                                                  # names kept in place, gone ones dropped, new
                                                  # ones appended in header order

The public functions are the ST_API declarations of core_c/include/supertok.h (apply_st_api.py
puts the macro there). A shared library must export those and nothing else: no internal st__*
or st_ucd_* symbol (the native builds compile with -fvisibility=hidden). Exit status 1 on any
difference, with the names that differ. tests/test_c_api.py runs the same checks.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apply_st_api  # noqa: E402

ROOT = apply_st_api.ROOT
HEADER = apply_st_api.HEADER
EXPORTS = os.path.join(ROOT, "core_c", "wasm_exports.txt")

# Symbols the linker defines in every ELF shared object (older binutils put them in .dynsym).
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start", "_DYNAMIC", "_GLOBAL_OFFSET_TABLE_"}


def header_functions(path=HEADER):
    """The public function names declared in the header, in header order."""
    return apply_st_api.public_functions(path)


def missing_st_api(path=HEADER):
    """Names of st_* function declarations in the header without ST_API in front."""
    with open(path, encoding="utf-8") as f:
        return [name for _, _, name, has in apply_st_api.declarations(f.read()) if not has]


def listed_exports(path=EXPORTS):
    """core_c/wasm_exports.txt's names, in file order."""
    with open(path) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]


def exported_symbols(lib):
    """The defined dynamic symbols of a shared library (nm -D --defined-only), minus the
    linker's own. Raises RuntimeError when there is no nm."""
    nm = shutil.which("nm")
    if not nm:
        raise RuntimeError("no nm on PATH (binutils)")
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            name = parts[-1].split("@")[0]  # drop a symbol version
            if name and name not in LINKER_SYMBOLS:
                names.add(name)
    return names


def internal(names):
    """The names among names that belong to the core's internals."""
    return sorted(n for n in names if n.startswith("st__") or n.startswith("st_ucd_"))


def check_exports_txt():
    """Problems with core_c/wasm_exports.txt against the header (an empty list when they agree)."""
    problems = []
    header = header_functions()
    listed = listed_exports()
    dup = sorted({n for n in listed if listed.count(n) > 1})
    if dup:
        problems.append("core_c/wasm_exports.txt lists twice: " + ", ".join(dup))
    want = set(header) | {"memory"}
    if set(listed) - want:
        problems.append("core_c/wasm_exports.txt lists names the header does not declare: "
                        + ", ".join(sorted(set(listed) - want)))
    if want - set(listed):
        problems.append("core_c/wasm_exports.txt lacks the header's: " + ", ".join(sorted(want - set(listed))))
    return problems


def write_exports(path=EXPORTS):
    """Rewrite exports.txt to the header's functions (plus memory) with the smallest change;
    returns (added, dropped)."""
    want = header_functions()
    with open(path) as f:
        lines = f.read().splitlines()
    keep, seen = [], set()
    for ln in lines:
        name = ln.strip()
        if name and not ln.lstrip().startswith("#"):
            if name in seen or (name != "memory" and name not in want):
                continue
            seen.add(name)
        keep.append(ln)
    added = [n for n in ["memory"] + want if n not in seen]
    dropped = sorted({ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")} - set(want)
                     - {"memory"})
    with open(path, "w") as f:
        f.write("\n".join(keep + added) + "\n")
    return added, dropped


def check_library(lib, extra=()):
    """Problems with a shared library's exports against the header (extra: names allowed besides
    the header's, e.g. a Python extension's PyInit_)."""
    exported = exported_symbols(lib)
    want = set(header_functions())
    problems = []
    bad = internal(exported)
    if bad:
        problems.append("%s exports internal symbols: %s" % (lib, ", ".join(bad)))
    other = sorted(exported - want - set(extra) - set(bad))
    if other:
        problems.append("%s exports names the header does not declare: %s" % (lib, ", ".join(other)))
    if want - exported:
        problems.append("%s lacks public functions: %s" % (lib, ", ".join(sorted(want - exported))))
    return problems


def main(argv):
    if "--list" in argv:
        print("\n".join(header_functions()))
        return 0
    if "--write-exports" in argv:
        added, dropped = write_exports()
        print("core_c/wasm_exports.txt: added %s; dropped %s" % (", ".join(added) or "none", ", ".join(dropped) or "none"))
    problems = []
    missing = missing_st_api()
    if missing:
        problems.append("supertok.h: declarations without ST_API (run core_c/tools/apply_st_api.py): "
                        + ", ".join(missing))
    problems += check_exports_txt()
    libs = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--lib"]
    for lib in libs:
        try:
            problems += check_library(lib)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
            problems.append("%s: cannot read its exports: %s" % (lib, exc))
    for p in problems:
        print("check_api: " + p)
    if problems:
        return 1
    n = len(header_functions())
    print("check_api: %d public functions in supertok.h, all with ST_API; core_c/wasm_exports.txt agrees" % n
          + "".join("; %s exports exactly them" % os.path.basename(lib) for lib in libs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
