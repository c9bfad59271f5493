"""bench/plot.py: its table parser on the committed bench/RESULTS.md (the standard library only),
then the rendering (with matplotlib, from the bench extra; skipped without it).

The parser's numbers are checked against the file's own text, read here line by line: every
ratio it finds equals the bold "N.NNx" its cell starts with, and the summary's geometric means
equal the per-language tables' "geometric mean" rows."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")
LANGS = ["en", "zh", "ja", "ar", "ru", "el", "hi", "code"]


def _plot():
    """bench/plot.py as a module (it puts bench/ on sys.path for _results.py: taken off again)."""
    path = list(sys.path)
    spec = importlib.util.spec_from_file_location("bench_plot", os.path.join(ROOT, "bench", "plot.py"))
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path[:] = path
    return mod


def _no_matplotlib(tmp_path):
    """An environment where importing matplotlib fails, as where it is not installed."""
    fake = tmp_path / "matplotlib"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    return dict(os.environ, PYTHONPATH=str(tmp_path))


@pytest.fixture(scope="module")
def plot():
    return _plot()


@pytest.fixture(scope="module")
def encode(plot):
    return plot.EncodeData(plot.encode_entry(plot.read_entries(RESULTS)))


def _raw_tables(heading, title_start):
    """The rows (lists of cell texts) of the table titled title_start in the entry HEADING, read
    from the file directly, not through the parser."""
    with open(RESULTS, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = lines.index("## " + heading)
    i = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("#### " + title_start))
    i = next(j for j in range(i, len(lines)) if lines[j].startswith("|"))
    rows = []
    while lines[i].startswith("|"):
        rows.append([c.strip() for c in lines[i].strip("|").split("|")])
        i += 1
    return rows[0], rows[2:]


def test_the_parser_needs_no_matplotlib(tmp_path):
    code = ("import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('p', sys.argv[1])\n"
            "p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)\n"
            "d = p.EncodeData(p.encode_entry(p.read_entries(sys.argv[2])))\n"
            "print(len(d.tools), len(d.languages))\n")
    proc = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, "bench", "plot.py"), RESULTS],
                          capture_output=True, text=True, cwd=ROOT, env=_no_matplotlib(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["10", "8"], proc.stdout


def test_encode_entry_tools_and_languages(encode):
    assert encode.entry.name == "encode.py"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", encode.entry.date), encode.entry.date
    assert "python bench/encode.py" in encode.entry.command
    assert "core" in encode.entry.machine, encode.entry.machine
    assert encode.tools[0] == "tiktoken"
    for tool in ("supertok", "fastokens", "toktok-rs", "quicktok-v1", "bpe-openai", "rs-bpe", "kitoken", "tokie"):
        assert tool in encode.tools
    assert encode.languages == LANGS
    assert set(encode.langs) == set(_plot().SETTINGS)


@pytest.mark.parametrize("setting,mode", [("1 thread", "fresh"), ("1 thread", "warm"),
                                          ("all cores", "fresh"), ("all cores", "warm")])
def test_every_parsed_ratio_is_the_cells_text(encode, setting, mode):
    table = encode.langs[(setting, mode)]
    header, rows = _raw_tables(encode.entry.heading, table.title.split(":")[0] + ":")
    assert header[2:] == encode.tools
    parsed = encode.ratios[(setting, mode)]
    assert [r[0] for r in rows] == LANGS + ["geometric mean"]
    seen = excluded = 0
    for row in rows:
        for tool, cell in zip(header[2:], row[2:]):
            r, why = parsed[row[0]][tool]
            m = re.match(r"(?:\*\*)?(\d+\.\d\d)x(?:\*\*)?(?: |$)", cell)
            if m:
                assert r is not None and "%.2fx" % r == m.group(1) + "x", (row[0], tool, cell, r)
                seen += 1
            else:
                assert r is None, (row[0], tool, cell, r)
                assert why == ("not exact" if cell.startswith("not exact") else cell)
                excluded += 1
    assert seen >= 8 * 9
    # tokie's ids differ in ja in every setting: it is excluded there, and from the geometric mean
    assert parsed["ja"]["tokie"] == (None, "not exact")
    assert parsed["geometric mean"]["tokie"] == (None, "not exact")
    assert excluded >= 2


def test_summary_is_the_tables_geometric_means(encode):
    for setting, mode in _plot().SETTINGS:
        assert encode.summary[(setting, mode, "cpu")] == encode.ratios[(setting, mode)]["geometric mean"], (setting, mode)


def test_train_entry_has_every_peer(plot):
    entry = plot.train_entry(plot.read_entries(RESULTS))
    table = plot.train_table(entry)
    tools = {r["tool"] for r in table.dicts()}
    assert {"hf", "rustbpe", "bpeasy"} <= tools and any(t.startswith("supertok") for t in tools), tools
    for r in table.dicts():
        assert plot.seconds(r["CPU s"]) == float(r["CPU s"].split()[0]) > 0


def test_without_matplotlib_it_says_what_to_install(tmp_path):
    """A matplotlib that fails to import stands for a missing one."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "plot.py"), "--no-results",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT,
                          env=_no_matplotlib(tmp_path), timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pip install -e '.[bench]'" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_render_is_deterministic(plot, tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pytest.skip("matplotlib is not installed: bench/plot.py's rendering needs the bench extra "
                    "(pip install -e '.[bench]')")
    ents = plot.read_entries(RESULTS)
    a = plot.render(ents, str(tmp_path / "a"))
    b = plot.render(ents, str(tmp_path / "b"))
    assert [x[0] for x in a] == [x[0] for x in b] == ["encode_1thread.png", "encode_all_cores.png",
                                                      "encode_summary.png", "train.png"]
    for name, _, where in a:
        data = (tmp_path / "a" / name).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) < 150_000, (name, len(data))
        assert data == (tmp_path / "b" / name).read_bytes(), "%s differs between two renders" % name
        assert where.startswith("the entry \"")
    body = plot.body(a, os.path.join(ROOT, "bench", "plots"), RESULTS)
    assert "![" in body and "(plots/encode_1thread.png)" in body
