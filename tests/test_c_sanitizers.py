"""The C core's own tests under AddressSanitizer and UndefinedBehaviorSanitizer.

Runs core_c/tests/run.sh: a warning-free build of the core (-std=c11 -pedantic -Wall -Wextra
-Werror), then the unit tests (test_core, test_encode), the golden vectors through the C API
(test_vectors), the random stress test with a fixed seed and the fuzz harnesses' replay drivers,
all built with -fsanitize=address,undefined. Skipped only when no
C compiler is found.
"""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_SH = os.path.join(ROOT, "core_c", "tests", "run.sh")


def _compiler():
    cc = os.environ.get("CC")
    if cc and shutil.which(cc):
        return cc
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    return None


@pytest.mark.slow  # builds the core several times with sanitizers and runs every C test (a minute or more)
def test_c_core_under_sanitizers(tmp_path):
    cc = _compiler()
    if cc is None:
        pytest.skip("no C compiler (cc/gcc/clang) on PATH: the C sanitizer tests need one")
    if shutil.which("sh") is None:
        pytest.skip("no POSIX sh to run core_c/tests/run.sh")
    env = dict(os.environ)
    env["CC"] = cc
    env["ST_TEST_BUILD_DIR"] = str(tmp_path)
    env.setdefault("STRESS_SEED", "1")
    env.setdefault("STRESS_ITERS", "1500")
    env.pop("ST_FUZZ_SECONDS", None)
    proc = subprocess.run(
        ["sh", RUN_SH],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=3600,  # a hang guard only, far from any real run (minutes on a busy 2-core machine)
    )
    out = proc.stdout
    assert proc.returncode == 0, "core_c/tests/run.sh failed (exit %d):\n%s" % (proc.returncode, out[-20000:])
    summaries = [line for line in out.splitlines() if re.fullmatch(r"\d+ passed, \d+ failed", line)]
    # test_core, stress, test_encode, test_vectors, test_decoder, test_model, test_tokenizer_json, test_export,
    # test_encode with backtracking on every piece, test_train, test_threads (and test_threads again under
    # ThreadSanitizer where the compiler has it)
    tsan = "test_threads under ThreadSanitizer" in out
    assert len(summaries) == 11 + tsan, out[-5000:]
    m = re.search(r"vectors/train: (\d+) of (\d+) cases reproduced", out)
    assert m and m.group(1) == m.group(2) and int(m.group(2)) > 0, "test_train: not every training vector reproduced"
    for line in summaries:
        assert line.endswith(" 0 failed"), line
    assert "all C tests passed" in out
