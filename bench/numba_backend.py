#!/usr/bin/env python3
"""The numba backend's start-up: cold compile per module, a warm process's first encode, and the
memory a loaded o200k_base takes, each beside the native backend.

    python bench/numba_backend.py            # ~3 min on 2 cores (one cold compile)
    python bench/numba_backend.py --rounds 5

- cold: `python -m supertok.core_numba.warm --per-module` in a fresh NUMBA_CACHE_DIR (every kernel
  the encoding protocol reaches compiles; CPU and wall time, and each module's compile seconds);
- warm process: a new process that imports supertok, loads o200k_base and encodes "hello world",
  with the cache warm; CPU time of the whole process (user + system, from the OS), median (min-max)
  over --rounds, numba beside native;
- memory: a process's peak RSS growth from loading o200k_base and encoding with it, measured after
  the same work on r50k_base (so the code it runs is loaded before), numba beside native.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import _results

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROBE = r"""
import os, resource, sys, time, json
import supertok
enc = supertok.get_encoding("o200k_base")
assert enc.encode("hello world") == [24912, 2375]
assert supertok.backend() == os.environ["SUPERTOK_BACKEND"]
print("ok")
"""

# the memory of a load alone: the code a load runs is loaded first (r50k_base), then o200k_base
MEMORY = r"""
import resource, json
import supertok
supertok.get_encoding("r50k_base").encode("hello world")
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
supertok.get_encoding("o200k_base").encode("hello world")
print(json.dumps({"load_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0}))
"""


def env_for(backend, cache):
    env = dict(os.environ, SUPERTOK_BACKEND=backend, NUMBA_CACHE_DIR=cache, SUPERTOK_QUIET="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "py")] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def timed(cmd, env):
    """(CPU seconds of the child, wall seconds, its last line of output)."""
    import resource
    import time
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit("%s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, r.stdout


def med(xs, fmt="%.2f"):
    xs = sorted(xs)
    return (fmt + " (" + fmt + "–" + fmt + ")") % (statistics.median(xs), xs[0], xs[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="supertok-numba-cache-")
    print("\n### Cold compile (a fresh NUMBA_CACHE_DIR; python -m supertok.core_numba.warm --per-module)\n")
    cpu, wall, out = timed([sys.executable, "-m", "supertok.core_numba.warm", "--per-module"], env_for("numba", cache))
    print("Whole process: %.1f s CPU, %.1f s wall.\n" % (cpu, wall))
    print("| module | compile seconds (wall, nested compiles counted once) |")
    print("|---|---:|")
    for line in out.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 3 and parts[-1] == "compiling":
            print("| %s | %s |" % (parts[0], parts[1]))
    rows = {}
    for _ in range(args.rounds):
        for backend in ("native", "numba"):
            cpu, wall, out = timed([sys.executable, "-c", PROBE], env_for(backend, cache))
            got = json.loads(timed([sys.executable, "-c", MEMORY], env_for(backend, cache))[2].strip().splitlines()[-1])
            r = rows.setdefault(backend, {"cpu": [], "wall": [], "kib": []})
            r["cpu"].append(cpu)
            r["wall"].append(wall)
            r["kib"].append(got["load_kib"])
    print("\n### A warm process: import, load o200k_base, encode \"hello world\" (%d rounds, interleaved)\n"
          % args.rounds)
    print("| backend | process CPU, s | wall, s | peak RSS growth loading o200k_base, MB |")
    print("|---|---:|---:|---:|")
    for backend in ("native", "numba"):
        r = rows[backend]
        print("| %s | %s | %s | %s |" % (backend, med(r["cpu"]), med(r["wall"]), med([k / 1024 for k in r["kib"]], "%.1f")))
    ratio = statistics.median(rows["numba"]["kib"]) / max(statistics.median(rows["native"]["kib"]), 1)
    print("\nnumba's RSS growth loading o200k_base is %.2fx native's." % ratio)
    return 0


if __name__ == "__main__":
    sys.exit(_results.run_and_record(main, "numba_backend.py"))
