#!/usr/bin/env python3
"""Put ST_API in front of every public function declaration of core_c/include/supertok.h.

    python core_c/tools/apply_st_api.py           # rewrite the header in place (idempotent)
    python core_c/tools/apply_st_api.py --check   # exit 1 if a declaration lacks ST_API

Mechanical on purpose, so it can be re-run after any change to the header's signatures (a merge,
a new call): it finds each top-level declaration whose name starts with st_ and is followed by a
parameter list (not a typedef, struct or enum) and prefixes it with "ST_API " if it has no ST_API
yet. It also inserts the macro's definition (ST_API_BLOCK) after the #include lines when the header
lacks it. Nothing else in the header changes. check_api.py uses public_functions() to list the names.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "core_c", "include", "supertok.h")

ST_API_BLOCK = """\
/* ST_API marks every public function (and nothing else): the native builds compile with
 * -fvisibility=hidden, so a shared library exports exactly these names. On Windows define
 * ST_BUILDING_DLL when building supertok as a DLL and ST_USING_DLL when linking against one;
 * a static library needs neither. The wasm build exports by an explicit list (core_c/wasm_exports.txt)
 * and gets an empty ST_API. core_c/tools/apply_st_api.py adds it to new declarations. */
#ifndef ST_API
#if defined(__wasm__)
#define ST_API
#elif defined(_WIN32) || defined(__CYGWIN__)
#if defined(ST_BUILDING_DLL)
#define ST_API __declspec(dllexport)
#elif defined(ST_USING_DLL)
#define ST_API __declspec(dllimport)
#else
#define ST_API
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define ST_API __attribute__((visibility("default")))
#else
#define ST_API
#endif
#endif
"""


def _blank(text):
    """text with comments, string literals, preprocessor lines and the C++ guard's block replaced
    by spaces (newlines kept), so offsets in the result are offsets in text."""
    def spaces(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", spaces, text, flags=re.S)
    # preprocessor lines, with continuations
    text = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", spaces, text)
    # what is left of `extern "C" {` (the string is blanked) and its closing brace
    text = re.sub(r"\bextern\s+\{", spaces, text)
    return text


def declarations(text):
    """(start, end, name, has ST_API) of every top-level function declaration named st_* in
    text: start is the offset of its first character, end that of its ';'."""
    blank = _blank(text)
    # the closing brace of the C++ guard: a lone "}" at depth 0 after the extern block was blanked
    out = []
    depth = 0
    start = None
    i = 0
    while i < len(blank):
        c = blank[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = None
                i += 1
                continue
        elif depth == 0 and c == ";":
            if start is not None:
                stmt = blank[start:i]
                m = re.match(r"\s*(?:ST_API\s+)?([^()]*?)\b(st_\w+)\s*\(", stmt)
                first = stmt.split(None, 1)[0] if stmt.split() else ""
                if m and first not in ("typedef", "struct", "enum", "union"):
                    out.append((start, i, m.group(2), stmt.lstrip().startswith("ST_API")))
            start = None
        elif depth == 0 and start is None and not c.isspace():
            start = i
        i += 1
    return out


def public_functions(path=HEADER):
    """The names of the public functions declared in the header, in header order."""
    with open(path, encoding="utf-8") as f:
        return [name for _, _, name, _ in declarations(f.read())]


def apply(text):
    """text with the ST_API block and every missing ST_API added."""
    if "#define ST_API" not in text:
        includes = list(re.finditer(r"(?m)^#include[^\n]*\n", text))
        if not includes:
            raise SystemExit("apply_st_api: no #include line to put the ST_API block after")
        at = includes[-1].end()
        text = text[:at] + "\n" + ST_API_BLOCK + text[at:]
    for start, end, _name, has in reversed(declarations(text)):
        if not has:
            text = text[:start] + "ST_API " + _realign(text[start:end]) + text[end:]
    return text


def _realign(decl):
    """A declaration's continuation lines aligned after its '(' move right with it."""
    lines = decl.split("\n")
    col = lines[0].find("(") + 1
    for k in range(1, len(lines)):
        indent = len(lines[k]) - len(lines[k].lstrip(" "))
        if col > 0 and indent == col:
            lines[k] = " " * len("ST_API ") + lines[k]
    return "\n".join(lines)


def main():
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    missing = [name for _, _, name, has in declarations(text) if not has]
    if "--check" in sys.argv:
        if missing or "#define ST_API" not in text:
            print("supertok.h: declarations without ST_API: %s (run python core_c/tools/apply_st_api.py)"
                  % (", ".join(missing) or "(the ST_API block is missing)"))
            return 1
        print("supertok.h: all %d public functions carry ST_API" % len(declarations(text)))
        return 0
    new = apply(text)
    if new != text:
        with open(HEADER, "w", encoding="utf-8") as f:
            f.write(new)
    print("supertok.h: ST_API added to %d declarations (%d in all)" % (len(missing), len(declarations(new))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
