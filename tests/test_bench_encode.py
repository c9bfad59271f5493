"""bench/encode.py's smoke run (--quick), as CI runs it: no peer installed, with or without the
shared corpora (without them it reads the UDHR excerpts vendored in vectors/texts).

Besides supertok it times `_tamper`, tiktoken with one id changed: the exactness guard must show
it as "not exact" with the first differing token (100) and never with a speed, while supertok,
whose ids equal tiktoken's, gets a ratio in every table. A few seconds."""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("tiktoken")


@pytest.fixture(scope="module")
def quick():
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "encode.py"), "--quick", "--tools", "supertok,_tamper"],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def table_rows(text, title_start):
    """The header and the body rows (lists of cells) of the first markdown table after the
    heading that starts with title_start."""
    lines = text.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("#") and ln.lstrip("#").strip().startswith(title_start))
    i += 1
    while not lines[i].startswith("|"):
        i += 1
    rows = []
    while i < len(lines) and lines[i].startswith("|"):
        rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
        i += 1
    return rows[0], rows[2:]


def test_summary_has_both_modes_and_flags_the_wrong_tool(quick):
    header, body = table_rows(quick, "Summary")
    assert header[:4] == ["setting", "mode", "clock", "tiktoken"]
    assert "_tamper" in header
    modes = {(r[1], r[2]) for r in body}
    assert modes == {("fresh", "cpu"), ("fresh", "wall"), ("warm", "cpu"), ("warm", "wall")}
    for r in body:
        row = dict(zip(header, r))
        assert row["_tamper"] == "not exact", row
        if "supertok" in header:
            assert re.fullmatch(r"\d+\.\d\dx", row["supertok"]), row


def test_language_tables_show_the_first_difference_never_a_speed(quick):
    for title in ("1 thread, fresh text, CPU time", "1 thread, warm text, wall time"):
        header, body = table_rows(quick, title)
        assert header[:3] == ["lang", "MB", "tiktoken"]
        assert len(body) >= 2  # the languages, then the geometric mean
        for r in body:
            row = dict(zip(header, r))
            if row["lang"] == "geometric mean":
                assert row["_tamper"] == "not exact"
                continue
            assert row["_tamper"].startswith("not exact: token 100,"), row
            assert "MB/s" not in row["_tamper"] and "(" in row["_tamper"]  # "(n vs n tokens)", no speed
            assert re.fullmatch(r"\d+\.\d \(\d+\.\d–\d+\.\d\)", row["tiktoken"]), row
            if "supertok" in header:
                assert re.fullmatch(r"\*\*\d+\.\d\dx\*\* \d+\.\d \(\d+\.\d–\d+\.\d\)", row["supertok"]), row


def test_missing_peers_are_reported(quick):
    line = next(ln for ln in quick.splitlines() if ln.startswith("missing"))
    assert line.startswith("missing (not installed, skipped):")
