#!/usr/bin/env python3
"""The cost of the Python host layer on short calls: encode("hello world") and friends, per call,
on the native and wasmtime backends, for this checkout and, with --before, another one side by
side.

    python bench/host_layer.py                                 # this checkout alone
    python bench/host_layer.py --before ../old/py             # ... against another build

--before names the `py` folder of another checkout whose native extension is built in place
(`git worktree add ../old <commit>; cd ../old/py && python supertok/_build_native.py`). Every
sample runs in a fresh subprocess, the builds alternating (before, after; then after, before) so
that a drift of the shared machine falls on both. In a worker, after one untimed call, each call
is repeated --calls times, timed in wall (perf_counter) and CPU time (process_time); a round is
one worker per build and backend. Cells: nanoseconds per call, median (min-max) over the rounds.
Before any timing, the ids of both builds are compared; a difference stops the run (exit 1).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import _results  # noqa: E402

CALLS = {
    "encode": "enc.encode('hello world')",
    "encode_ordinary": "enc.encode_ordinary('hello world')",
    "decode": "enc.decode([24912, 2375])",
    "count": "enc.count('hello world')",
    "encode_batch (3)": "enc.encode_batch(['hello world'] * 3, num_threads=1)",
}

WORKER = r"""
import json, os, sys, time
os.environ["SUPERTOK_BACKEND"] = sys.argv[1]
import supertok
enc = supertok.get_encoding("o200k_base")
calls = int(sys.argv[2])
out = {"file": supertok.__file__, "ids": enc.encode("hello world"), "cells": {}}
for name, code in json.loads(sys.argv[3]).items():
    f = eval("lambda: " + code)
    f()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        f()
    out["cells"][name] = ((time.perf_counter() - w0) / calls * 1e9, (time.process_time() - c0) / calls * 1e9)
print(json.dumps(out))
"""


def run(pypath, backend, calls):
    env = dict(os.environ, PYTHONPATH=pypath)
    p = subprocess.run([sys.executable, "-c", WORKER, backend, str(calls), json.dumps(CALLS)], env=env,
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit("worker failed (%s, %s):\n%s" % (pypath, backend, p.stderr[-2000:]))
    return json.loads(p.stdout)


def cell(xs):
    return "%d (%d-%d)" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", help="the py folder of the build to compare with")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--backends", default="native,wasmtime")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 2 rounds of 2,000 calls, nothing written")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.calls = 2, 2000
    builds = [("after", os.path.join(ROOT, "py"))]
    if a.before:
        builds.insert(0, ("before", os.path.abspath(a.before)))
    backends = a.backends.split(",")
    samples = {}  # (build, backend, call) -> [(wall, cpu), ...]
    files = {}
    for r in range(a.rounds):
        order = builds if r % 2 == 0 else builds[::-1]
        for backend in backends:
            for build, path in order:
                got = run(path, backend, a.calls)
                files[build] = got["file"]
                if got["ids"] != [24912, 2375]:
                    print("%s on %s: encode('hello world') gave %s, not tiktoken's [24912, 2375]"
                          % (build, backend, got["ids"]), file=sys.stderr)
                    return 1
                for name, v in got["cells"].items():
                    samples.setdefault((build, backend, name), []).append(v)
        print("round %d of %d done" % (r + 1, a.rounds), file=sys.stderr)
    for build, path in builds:
        p = subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        print("- %s: the build of commit %s" % (build, p.stdout.strip() or "?"))
    print()
    head = ["call", "backend"] + ["%s wall ns" % b for b, _ in builds] + ["%s CPU ns" % b for b, _ in builds]
    if a.before:
        head.append("after/before (CPU medians)")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in CALLS:
        for backend in backends:
            row = [name, backend]
            row += [cell([w for w, _ in samples[(b, backend, name)]]) for b, _ in builds]
            row += [cell([c for _, c in samples[(b, backend, name)]]) for b, _ in builds]
            if a.before:
                row.append("%.2f" % (statistics.median(c for _, c in samples[("after", backend, name)])
                                     / statistics.median(c for _, c in samples[("before", backend, name)])))
            print("| " + " | ".join(row) + " |")
    if "native" in backends and "wasmtime" in backends:
        print()
        print("wasmtime / native, this build's CPU medians: "
              + ", ".join("%s %.2fx" % (name, statistics.median(c for _, c in samples[("after", "wasmtime", name)])
                                        / statistics.median(c for _, c in samples[("after", "native", name)]))
                          for name in CALLS))
    return 0


def _shown_argv(argv):
    """argv as the entry shows it: --before's folder as the commit checked out there (a machine's
    path means nothing to a reader)."""
    out = list(argv)
    for i, a in enumerate(out[:-1]):
        if a == "--before":
            p = subprocess.run(["git", "-C", out[i + 1], "rev-parse", "--short", "HEAD"], capture_output=True,
                               text=True)
            out[i + 1] = "<a checkout of %s>/py" % (p.stdout.strip() or "the other build")
    return out


if __name__ == "__main__":
    sys.exit(_results.run_and_record(main, "host_layer.py", argv=_shown_argv(sys.argv[1:])))
