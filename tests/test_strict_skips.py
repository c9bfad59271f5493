"""--strict-skips (tests/conftest.py, as .ci/run passes it) on a probe run: a skip whose reason
tests/expected_skips.txt does not know fails the run and is named, an expected one is counted,
in one pytest process and on pytest-xdist workers (-n 2, as the README's commands and .ci/run run
the suite: the workers' reports reach the controller, which alone judges every skip)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

PROBE = '''import pytest


def test_unexpected():
    pytest.skip("a reason tests/expected_skips.txt does not know")


def test_expected():
    pytest.skip("pywasm: the vectors' subset only (an interpreter)")


def test_passes():
    pass
'''


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_an_unexpected_skip_fails_the_run(tmp_path, workers):
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE)
    env = dict(os.environ)
    # tests/conftest.py as a plugin (-p conftest): the probe lies outside tests/
    env["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, env.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "-rs",
                        "--strict-skips", "--rootdir", str(tmp_path), str(probe)] + workers,
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "1 passed, 2 skipped" in out, out
    assert "--strict-skips: 2 skips, 1 expected (tests/expected_skips.txt), 1 unexpected" in out, out
    assert "UNEXPECTED SKIP test_probe.py::test_unexpected: a reason tests/expected_skips.txt does not know" in out, out
    assert out.count("UNEXPECTED SKIP") == 1, out
