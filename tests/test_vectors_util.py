"""The vector runners' shared helpers (tests/vectors_util.py) refuse to pass on nothing: a file
without its header, without records or with another count than its header says fails to load; a
run over no record fails; every failing record is reported; pywasm's fast and slow parts split its
subset without losing or repeating a record."""
import json

import pytest

import vectors_util


def _write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_load_reads_the_header_and_records(tmp_path):
    path = _write(tmp_path, "ok.jsonl", [{"_meta": {"records": 2}}, {"a": 1}, {"a": 2}])
    header, records = vectors_util.load(path)
    assert header == {"_meta": {"records": 2}} and records == [{"a": 1}, {"a": 2}]
    assert vectors_util.meta(path) == {"records": 2}


@pytest.mark.parametrize("rows, complaint", [
    ([{"_meta": {"records": 0}}], "holds no record"),
    ([{"a": 1}, {"a": 2}], "_meta"),
    ([{"_meta": {"records": 3}}, {"a": 1}, {"a": 2}], "says 3 records, the file holds 2"),
])
def test_load_refuses_a_file_it_cannot_trust(tmp_path, rows, complaint):
    path = _write(tmp_path, "bad.jsonl", rows)
    with pytest.raises(AssertionError, match=complaint):
        vectors_util.load(path)


def test_load_refuses_a_file_without_its_last_newline(tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_text('{"_meta": {}}\n{"a": 1}', encoding="utf-8")
    with pytest.raises(AssertionError, match="newline"):
        vectors_util.load(str(path))


def test_run_records_fails_on_no_record():
    with pytest.raises(pytest.fail.Exception, match="no record selected"):
        vectors_util.run_records("f.jsonl", "native", [], lambda i, r: [], lambda i, r: "")


def test_run_records_reports_every_failing_record():
    def check(i, r):
        if r == "boom":
            raise ValueError("broken\nsecond line")
        return [] if r == "good" else ["wrong: %s" % r]

    chosen = list(enumerate(["good", "bad", "boom", "good"]))
    with pytest.raises(AssertionError) as ei:
        vectors_util.run_records("f.jsonl", "wasmtime", chosen, check, lambda i, r: "record %d" % i)
    msg = str(ei.value)
    assert "f.jsonl on wasmtime: 2 of 4 records fail" in msg
    assert "record 1\n    wrong: bad" in msg and "record 2\n    raised ValueError('broken', ...)" in msg
    assert vectors_util.run_records("f.jsonl", "native", [(0, "good")], check, str) == 1


def test_pywasm_parts_split_its_subset():
    records = list(range(1000))
    subset = vectors_util.select(records, "pywasm")
    assert subset == [(i, i) for i in records if i < vectors_util.PYWASM_HEAD or i % vectors_util.PYWASM_STRIDE == 0]
    fast = vectors_util.select(records, "pywasm", vectors_util.PART_FAST)
    rest = vectors_util.select(records, "pywasm", vectors_util.PART_REST)
    assert len(fast) == vectors_util.PYWASM_FAST and fast + rest == subset
    assert vectors_util.select(records, "pywasm", vectors_util.PART_FAST, fast=3) == subset[:3]
    for backend in ("native", "wasmtime"):
        assert vectors_util.select(records, backend) == list(enumerate(records))
