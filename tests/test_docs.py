"""The documents a newcomer reads hold up on a fresh clone.

- the documents a user reads (README.md, docs/, bench/README.md and RESULTS.md, wasm/README.md,
  CHANGELOG.md, vectors/ READMEs) name no machine path (a home or work directory, /tmp), no
  `../shared` folder (a clone has neither) and no issue of the project's tracker;
- relative links in them point to files that exist, and a link's #anchor to a heading there;
- the README is a front page: at most 300 lines, its sections in place, a link to every guide,
  its test command the one CI runs, and each headline figure found in the bench/RESULTS.md entry
  (or the document) its row names;
- bench/RESULTS.md holds one copy of each table, each entry with its command and date, and every
  bench script that prints tables writes its entry there;
- every path in the README's layout table exists, and so does every file named in its
  descriptions (found under the row's folder);
- the design notes are the repository's own: no file cites the team's design document by its
  old name, every `docs/design.md §N` citation names a section that exists, and the sections
  are numbered 1, 2, 3, ... in order; their summary says what is built and what is not.
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
NO_SHARED = ["README.md", "CHANGELOG.md", "docs/*.md", "docs/formats/*.md", "bench/README.md",
             "bench/RESULTS.md", "wasm/README.md"]
# Documents that must name no machine path; the documents a user reads.
NO_MACHINE_PATHS = NO_SHARED + ["vectors/README.md", "vectors/*/README.md"]
USER_DOCS = NO_MACHINE_PATHS

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


def _anchors(path):
    """The #anchors of a markdown file's headings, as GitHub makes them."""
    with open(path, encoding="utf-8") as f:
        heads = re.findall(r"^#+ (.+?)\s*$", f.read(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("rel", _docs(NO_MACHINE_PATHS))
def test_relative_links_exist(rel):
    text = _read(rel)
    base = os.path.dirname(os.path.join(ROOT, rel))
    missing = []
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    for target in links:
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, rel)
        if not os.path.exists(full):
            missing.append(target)
        elif anchor and full.endswith(".md") and anchor not in _anchors(full):
            missing.append(target + " (no such heading)")
    assert not missing, "%s links to missing files or headings: %s" % (rel, missing)


ISSUE = re.compile(r"\bissues?\b", re.I)


@pytest.mark.parametrize("rel", _docs(USER_DOCS))
def test_no_issue_wording(rel):
    """A user reads what the project does, not which tracker issue asked for it."""
    bad = ["line %d: %s" % (n, line.strip()) for n, line in enumerate(_read(rel).split("\n"), 1)
           if ISSUE.search(line)]
    assert not bad, "%s speaks of issues:\n%s" % (rel, "\n".join(bad))


# ---- the README as a front page ----------------------------------------------------------------

README_SECTIONS = ["Install", "Run", "Test", "Quick start: Python", "Quick start: C", "Quick start: JavaScript",
                   "Backends", "Figures", "Layout"]
GUIDES = ["docs/python.md", "docs/training.md", "docs/ube.md", "docs/c-api.md", "docs/javascript.md",
          "docs/formats/model-format.md", "docs/formats/train-format.md", "docs/design.md", "wasm/README.md",
          "bench/README.md", "bench/RESULTS.md", "LICENSE", "CHANGELOG.md"]


def _section(text, title):
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(title), text, re.M | re.S)
    assert m, "README.md has no '## %s' section" % title
    return m.group(1)


def test_readme_is_a_front_page():
    text = _read("README.md")
    assert len(text.split("\n")) <= 301, "README.md has %d lines (at most 300)" % len(text.split("\n"))
    heads = re.findall(r"^## (.+)$", text, re.M)
    assert [h for h in heads if h in README_SECTIONS] == README_SECTIONS, heads
    for title in ("Quick start: Python", "Quick start: C", "Quick start: JavaScript"):
        code = re.findall(r"```\w*\n(.*?)```", _section(text, title), re.S)
        assert code and 3 <= len(code[0].strip().split("\n")) <= 15, (title, code)
    linked = set(re.findall(r"\]\(([^)#\s]+)", text))
    assert not [g for g in GUIDES if g not in linked], [g for g in GUIDES if g not in linked]


def test_readme_test_commands_are_the_fast_lane_then_what_ci_runs():
    """The README's Test section offers the fast lane first (`python -m pytest -m "not slow" -n 2`,
    on two pytest-xdist workers), then the full suite: .ci/run's pytest line, less the options CI
    adds for its log."""
    ci = [ln.strip() for ln in _read(".ci/run").split("\n") if re.match(r"\s*python -m pytest\b", ln)]
    assert ci, ".ci/run runs no 'python -m pytest'"
    ci_cmd = ci[0].split("#")[0].split()
    readme = [ln.strip() for ln in _section(_read("README.md"), "Test").split("\n")
              if re.match(r"\s{4}python -m pytest\b", ln)]
    assert len(readme) >= 2, "the README's Test section shows no fast lane and full suite: %s" % readme
    assert readme[0] == 'python -m pytest -m "not slow" -n 2', readme[0]
    mine = readme[1].split("#")[0].split()
    assert ci_cmd[:len(mine)] == mine and all(a.startswith("-") for a in ci_cmd[len(mine):]), (mine, ci_cmd)
    assert " ".join(ci_cmd) in _read("README.md"), "the README should quote CI's full command"


def _results_entries():
    """bench/RESULTS.md's level-2 sections: (heading, text)."""
    parts = _read("bench/RESULTS.md").split("\n## ")[1:]
    return [(p.split("\n", 1)[0], p) for p in parts]


def test_readme_figures_are_in_results():
    """Each figure of the README's Figures table (its decimal numbers, and grouped thousands) is
    in the bench/RESULTS.md entries whose names its last cell gives (a prefix names every entry it
    starts), or in the document it links."""
    rows = [ln for ln in _section(_read("README.md"), "Figures").split("\n") if ln.startswith("|")][2:]
    assert len(rows) >= 6, rows
    entries = _results_entries()
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        figure, source = cells[-2], cells[-1]
        link = re.match(r"\[[^]]*\]\(([^)#]+)", source)
        if link:
            where = _read(link.group(1))
        else:
            names = re.findall(r"`([^`]+)`", source)
            assert names, "a Figures row names no entry: %s" % row
            where = ""
            for name in names:
                found = [t for h, t in entries if h.startswith(name)]
                assert found, "bench/RESULTS.md has no entry %r" % name
                where += "\n".join(found)
        numbers = re.findall(r"\d+\.\d+|\d{1,3}(?:,\d{3})+", figure)
        assert numbers, "a Figures row has no number: %s" % row
        missing = [n for n in numbers if n not in where]
        assert not missing, "README figure %s not found where its row says: %s" % (missing, row)


# ---- bench/RESULTS.md ----------------------------------------------------------------------------

def test_results_one_entry_per_table():
    entries = _results_entries()
    assert len(entries) >= 10
    names = []
    for head, text in entries:
        if head.startswith("Notes: "):
            continue  # what was tried and measured once: no script's entry
        m = re.match(r"(.+), (?:committed )?(\d{4}-\d{2}-\d{2})", head)
        assert m, "a bench/RESULTS.md entry's heading is not 'NAME, DATE': %s" % head
        names.append(m.group(1))
        first = text.split("\n\n")[1] if "\n\n" in text else ""
        assert re.search(r"`[^`]*(?:python|node|cd) ", first), "entry %r states no command: %r" % (head, first)
    dup = sorted(set(n for n in names if names.count(n) > 1))
    assert not dup, "bench/RESULTS.md holds two copies of: %s" % dup


def test_bench_scripts_write_their_entries():
    scripts = [p for p in sorted(glob.glob(os.path.join(ROOT, "bench", "*.py")))
               if not os.path.basename(p).startswith("_")]
    assert len(scripts) >= 8
    unwired = []
    for p in scripts:
        with open(p, encoding="utf-8") as f:
            src = f.read()
        if "_results.run_and_record(" not in src and "_results.write_entry(" not in src:
            unwired.append(os.path.basename(p))
    assert not unwired, "bench scripts that do not write their entry in bench/RESULTS.md: %s" % unwired


def test_license_is_mit():
    text = _read("LICENSE")
    assert text.startswith("MIT License") and "the supertok authors" in text, text[:200]
    assert re.search(r'^license = "MIT"', _read("pyproject.toml"), re.M)


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


def test_design_says_what_is_built():
    """The summary before section 1 says which parts are built, as the repository has them: the
    JavaScript module (wasm/supertok.mjs) and the Numba backend (backends/numba_runtime.py over
    core_numba/), its trainer (core_numba/train/) included."""
    intro = _read("docs/design.md").split("\n## 1.", 1)[0]
    assert "are\nbuilt." in intro or "are built." in intro, intro
    assert os.path.exists(os.path.join(ROOT, "wasm", "supertok.mjs"))
    assert os.path.exists(os.path.join(ROOT, "py", "supertok", "backends", "numba_runtime.py"))
    assert os.path.exists(os.path.join(ROOT, "py", "supertok", "core_numba", "train", "trainer.py"))
    assert "Numba backend, its encoding and its trainer alike" in intro, intro
    for part in ("training", "superword phase", "superword encoding", "exports", "JavaScript module"):
        assert part in intro, "docs/design.md's summary does not list the %s among the built parts" % part
