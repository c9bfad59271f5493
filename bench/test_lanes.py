#!/usr/bin/env python3
"""How long the test lanes take: the fast lane (`python -m pytest -m "not slow" -n 2`, what the
README offers first) and, with --full, the whole suite (`python -m pytest -n 2`, as .ci/run runs
it), on the backends of SUPERTOK_TEST_BACKENDS (default: native, wasmtime, numba and pywasm, as .ci/run
sets them). -n 2: two pytest-xdist workers (--serial: one process, no -n).

    python bench/test_lanes.py              # the fast lane, once
    python bench/test_lanes.py --full       # the fast lane, then the whole suite
    python bench/test_lanes.py --no-results # print only

Each lane runs pytest in a child process from the repository root; the table gives its wall time
and the CPU time of the child and everything it started (user + system, from os.wait4's resource
usage: on a machine shared with other work wall time also counts the waits for a core, CPU time
does not), the load average (1 minute) before and after, and pytest's summary line. The table is
printed and written to bench/RESULTS.md in place of this script's earlier entry.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BACKENDS = "native,wasmtime,numba,pywasm"  # .ci/run's SUPERTOK_TEST_BACKENDS


def run_lane(args):
    """Wall seconds, CPU seconds (user + system of the child and its children) and the summary."""
    env = dict(os.environ)
    env.setdefault("SUPERTOK_TEST_BACKENDS", BACKENDS)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + args, cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    summary = next((ln.strip("= ") for ln in reversed(out.splitlines()) if " in " in ln and
                    ("passed" in ln or "failed" in ln)), "no summary line")
    return wall, usage.ru_utime + usage.ru_stime, summary, os.waitstatus_to_exitcode(status)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="also time the whole suite")
    ap.add_argument("--serial", action="store_true", help="one pytest process (no -n 2)")
    args = ap.parse_args()
    workers = [] if args.serial else ["-n", "2"]
    lanes = [("fast lane", ["-m", "not slow"] + workers)] + ([("whole suite", workers)] if args.full else [])
    print("Backends: %s; %d cores.\n" % (os.environ.get("SUPERTOK_TEST_BACKENDS", BACKENDS),
                                         os.cpu_count()))
    print("| lane | command | wall s | CPU s | load before, after | pytest |")
    print("|---|---|---|---|---|---|")
    worst = 0
    for name, extra in lanes:
        print("timing the %s ..." % name, file=sys.stderr, flush=True)
        load_before = os.getloadavg()[0]
        wall, cpu, summary, code = run_lane(extra)
        worst = worst or code
        print("| %s | `python -m pytest %s` | %.0f | %.0f | %.1f, %.1f | %s |"
              % (name, " ".join('"%s"' % a if " " in a else a for a in extra), wall, cpu, load_before,
                 os.getloadavg()[0], summary), flush=True)
    return 1 if worst else 0


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, _results.keyed("test_lanes.py", flags=("--full", "--serial"))))
