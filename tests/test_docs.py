"""The documents a newcomer reads hold up on a fresh clone.

- README.md, docs/*.md, bench/README.md and vectors/ READMEs name no machine path (a home or
  work directory, /tmp) and README.md, docs/*.md and bench/README.md no `../shared` folder:
  a clone has neither;
- every path in the README's layout table exists, and so does every file named in its
  descriptions (found under the row's folder);
- the design notes are the repository's own: no file cites the team's design document by its
  old name, every `docs/design.md §N` citation names a section that exists, and the sections
  are numbered 1, 2, 3, ... in order;
- relative links in those documents point to files that exist.
"""
import glob
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DESIGN = os.path.join(ROOT, "docs", "design.md")


def _read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def _docs(patterns):
    out = []
    for pat in patterns:
        out += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, pat)))
    return out


# Documents that must hold up without the team's shared folder next to the clone.
NO_SHARED = ["README.md", "docs/*.md", "bench/README.md"]
# Documents that must name no machine path.
NO_MACHINE_PATHS = NO_SHARED + ["vectors/README.md", "vectors/*/README.md"]

# An absolute path into a user's or a machine's own directories (not /usr/local and the like,
# which an install prefix legitimately names), or a home-relative one.
MACHINE_PATH = re.compile(r"(?<![\w.$}])(?:/(?:work|tmp|home|Users|root|mnt|scratch|srv)(?=/|\b)|~/)")
SHARED = re.compile(r"\.\./shared\b")


@pytest.mark.parametrize("rel", _docs(NO_MACHINE_PATHS))
def test_no_machine_paths(rel):
    bad = ["line %d: %s" % (n, line.strip()) for n, line in enumerate(_read(rel).split("\n"), 1)
           if MACHINE_PATH.search(line)]
    assert not bad, "%s names a machine path:\n%s" % (rel, "\n".join(bad))


@pytest.mark.parametrize("rel", _docs(NO_SHARED))
def test_no_shared_folder(rel):
    bad = ["line %d: %s" % (n, line.strip()) for n, line in enumerate(_read(rel).split("\n"), 1)
           if SHARED.search(line)]
    assert not bad, "%s points into ../shared, which a clone does not have:\n%s" % (rel, "\n".join(bad))


@pytest.mark.parametrize("rel", _docs(NO_MACHINE_PATHS))
def test_relative_links_exist(rel):
    text = _read(rel)
    base = os.path.dirname(os.path.join(ROOT, rel))
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same page
        path = target.split("#", 1)[0]
        if path and not os.path.exists(os.path.normpath(os.path.join(base, path))):
            missing.append(target)
    assert not missing, "%s links to missing files: %s" % (rel, missing)


# ---- the README's layout table -----------------------------------------------------------------

# File names in the descriptions are checked when they end like a source or data file.
FILE_NAME = re.compile(r"^[\w.\-/]*\w\.(?:\[ch\]|c|h|py|sh|md|txt|json|jsonl|toml|ini|in|ids|wasm|dict|stmodel|tiktoken)$")


def _layout_rows():
    text = _read("README.md")
    m = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, "README.md has no '## Layout' section"
    rows = [line for line in m.group(1).split("\n") if line.startswith("|")]
    assert len(rows) > 2 and re.match(r"^\|[-| ]+\|$", rows[1]), "the layout section holds no table"
    out = []
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 2, "layout row is not two cells: %s" % line
        out.append((re.findall(r"`([^`]+)`", cells[0]), re.findall(r"`([^`]+)`", cells[1])))
    return out


def _expand(name):
    """`platform.[ch]` stands for platform.c and platform.h."""
    if name.endswith(".[ch]"):
        return [name[:-4] + "c", name[:-4] + "h"]
    return [name]


def test_layout_table_paths_exist():
    rows = _layout_rows()
    assert len(rows) >= 10
    missing = []
    for paths, described in rows:
        assert paths, "a layout row names no path"
        for p in paths:
            if not os.path.exists(os.path.join(ROOT, p)):
                missing.append(p)
        dirs = [os.path.join(ROOT, p) for p in paths if os.path.isdir(os.path.join(ROOT, p))]
        for token in described:
            if not FILE_NAME.match(token):
                continue
            for name in _expand(token):
                if os.path.exists(os.path.join(ROOT, name)):
                    continue
                if any(glob.glob(os.path.join(d, "**", name), recursive=True) for d in dirs):
                    continue
                missing.append("%s (row %s)" % (name, ", ".join(paths)))
    assert not missing, "README.md's layout table names paths that do not exist: %s" % missing


# ---- the design notes ------------------------------------------------------------------------

OLD_NAME = "DESI" + "GN"  # spelled apart so this file does not cite it
OLD_CITATION = re.compile(r"\b%s(?:\s*§|\s+section\b|\.md\b|'s\b)|shared/%s\.md" % (OLD_NAME, OLD_NAME))
CITATION = re.compile(r"docs/design\.md`?\s*((?:§\d+(?:\s*[-–,]\s*)?)+)")
SKIP_DIRS = {".git", ".venv", "build", "dist", "__pycache__", "node_modules", ".tox", ".hypothesis",
             ".pytest_cache"}
TEXT_EXT = (".c", ".h", ".py", ".md", ".txt", ".toml", ".ini", ".in", ".sh", ".json", ".jsonl",
            ".stmodel", ".dict", ".cfg")


def _repo_files():
    """The repository's files: git's view (tracked and untracked, not ignored) where git works,
    else a walk that leaves out build and environment folders."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True, check=True).stdout
        files = sorted(set(f for f in out.decode("utf-8").split("\0") if f))
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, subdirs, names in os.walk(ROOT):
        subdirs[:] = [s for s in subdirs if s not in SKIP_DIRS and not s.endswith(".egg-info")]
        files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
    return sorted(files)


def _text_files():
    for rel in _repo_files():
        base = os.path.basename(rel)
        if not (rel.endswith(TEXT_EXT) or base in ("CMakeLists.txt", "Makefile", "run") or rel == ".ci/run"):
            continue
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            continue  # deleted but not yet committed
        with open(path, "rb") as f:
            raw = f.read()
        if b"\0" in raw:
            continue
        yield rel, raw.decode("utf-8", errors="replace")


def _design_sections():
    heads = re.findall(r"^## (\d+)\. ", _read("docs/design.md"), re.M)
    return [int(h) for h in heads]


def test_design_sections_numbered_in_order():
    secs = _design_sections()
    assert secs and secs == list(range(1, len(secs) + 1)), secs


def test_no_file_cites_the_old_design_document():
    bad = []
    for rel, text in _text_files():
        if rel == "tests/test_docs.py":
            continue
        for n, line in enumerate(text.split("\n"), 1):
            if OLD_CITATION.search(line):
                bad.append("%s:%d: %s" % (rel, n, line.strip()[:120]))
    assert not bad, ("cite the design notes as docs/design.md §N (the repository's own copy):\n"
                     + "\n".join(bad))


def test_design_citations_name_sections_that_exist():
    secs = set(_design_sections())
    bad, seen = [], 0
    for rel, text in _text_files():
        for n, line in enumerate(text.split("\n"), 1):
            for m in CITATION.finditer(line):
                for num in re.findall(r"§(\d+)", m.group(1)):
                    seen += 1
                    if int(num) not in secs:
                        bad.append("%s:%d: §%s" % (rel, n, num))
    assert seen > 20, "expected the code and docs to cite docs/design.md (found %d citations)" % seen
    assert not bad, "citations of docs/design.md sections that do not exist:\n" + "\n".join(bad)


def test_design_marks_what_is_not_built_yet():
    """The summary before section 1 says which parts are for later issues."""
    intro = _read("docs/design.md").split("\n## 1.", 1)[0]
    assert "are built;" in intro and "for later issues" in intro, intro
    built, later = intro.split("are built;", 1)
    for part in ("JavaScript", "Numba"):
        assert part in later, "docs/design.md's summary does not list the %s among the later parts" % part
    for part in ("training", "superword phase", "superword encoding", "exports"):
        assert part in built, "docs/design.md's summary does not list the %s among the built parts" % part
