"""Counting at scale: supertok.count_pretokens in one process (one thread, every core) against
supertok.dask on a LocalCluster of 1 and of 2 worker processes, on one large text file made by
repeating the shared corpora; each run in a fresh process, so its peak memory is its own.

    python bench/train_scale.py [--mib 1024] [--rounds 3] [--corpora DIR] [--quick]

Prints one table (wall time median with min and max over interleaved rounds, the caller's CPU
time, MB/s, the caller's peak resident memory, and whether the counts are identical to the
one-thread run's, by digest) into bench/RESULTS.md (bench/_results.py). --quick: 32 MiB, one
round, no entry written.
"""
import argparse
import hashlib
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import _results  # noqa: E402

DEFAULT_CORPORA = os.path.join(ROOT, "..", "shared", "corpora")
LANGS = ["en", "de", "ru", "el", "ar", "he", "hi", "zh", "ja", "ko", "th", "code"]

# one run, in a child process: the counts' digest, times and this process's peak memory
CHILD = r"""
import hashlib, json, os, sys, time
sys.path.insert(0, os.environ["SUPERTOK_PY"])
import supertok
path, how = sys.argv[1], sys.argv[2]
t0, c0 = time.perf_counter(), time.process_time()
if how.startswith("dask-"):
    import distributed, supertok.dask
    n = int(how[5:])
    with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0") as cl, \
            distributed.Client(cl) as client:
        t0, c0 = time.perf_counter(), time.process_time()  # the cluster's start is not counting
        counts = supertok.dask.count_pretokens([path], client=client)  # about two shards a worker
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
else:
    counts = supertok.count_pretokens(path, threads=None if how == "all" else 1)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = None
with open("/proc/self/status") as f:
    for ln in f:
        if ln.startswith("VmHWM:"):
            peak = int(ln.split()[1]) * 1024
print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak, "digest": hashlib.sha256(counts.to_bytes()).hexdigest(),
                  "documents": counts.documents, "distinct": counts.distinct}))
"""


def make_text(path, mib, corpora):
    """Lines of the shared corpora, language after language, repeated up to mib MiB (whole lines)."""
    want = mib << 20
    parts = []
    for lang in LANGS:
        p = os.path.join(corpora, lang + ".txt.xz")
        if os.path.exists(p):
            with lzma.open(p, "rb") as f:
                parts.append(f.read())
    if not parts:
        raise SystemExit("train_scale.py: no corpus files in %s" % corpora)
    block = b"".join(parts)
    with open(path, "wb") as f:
        n = 0
        while n < want:
            take = block[:want - n]
            if len(take) < len(block):  # the last copy ends on a line end, never inside a character
                take = take[:take.rfind(b"\n") + 1]
                if not take:
                    break
            f.write(take)
            n += len(take)
    return n


def run(path, how):
    env = dict(os.environ, SUPERTOK_PY=os.path.join(ROOT, "py"))
    p = subprocess.run([sys.executable, "-c", CHILD, path, how], capture_output=True, text=True, env=env)
    if p.returncode:
        raise SystemExit("train_scale.py: the %s run failed:\n%s" % (how, p.stderr[-2000:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=None, help="size of the text (default 1024; --quick 32)")
    ap.add_argument("--corpora", default=DEFAULT_CORPORA)
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; --quick 1)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    mib = args.mib or (32 if args.quick else 1024)
    args.rounds = args.rounds or (1 if args.quick else 3)
    if not os.path.isdir(args.corpora):
        print("train_scale.py: skipped: no corpora folder at %s (pass --corpora DIR)" % args.corpora, file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scale.txt")
        size = make_text(path, mib, args.corpora)
        print("train_scale.py: %d MiB of text in %s" % (size >> 20, path), file=sys.stderr)
        configs = (("one", "one process, 1 thread"), ("all", "one process, every core (%d)" % os.cpu_count()),
                   ("dask-1", "Dask LocalCluster, 1 worker"), ("dask-2", "Dask LocalCluster, 2 workers"))
        runs = {how: [] for how, _ in configs}
        for k in range(args.rounds):  # interleaved: each round runs every configuration once
            for how, label in configs:
                r = run(path, how)
                runs[how].append(r)
                print("train_scale.py: round %d, %s: %.1f s" % (k + 1, label, r["wall"]), file=sys.stderr)
    ref = runs["one"][0]
    med = {how: statistics.median(r["wall"] for r in rs) for how, rs in runs.items()}
    print("Counting the pretokens (o200k) of %d MiB of text: the shared corpora's %s files, repeated; %d rounds, "
          "each running every configuration once in a fresh process; wall time median [min, max]; CPU is the "
          "caller's (median; Dask workers are other processes, so their CPU is not in it); MB/s = 10^6 bytes of "
          "text per second of median wall time; speedup of medians; the caller's peak memory is its VmHWM (the "
          "largest of the rounds)." % (size >> 20, len(LANGS), args.rounds))
    print("")
    print("| run | wall s | caller CPU s | MB/s | speedup on 1 thread / 1 worker | caller peak MiB | counts |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for how, label in configs:
        rs = runs[how]
        walls = [r["wall"] for r in rs]
        base = med["dask-1" if how.startswith("dask") else "one"]
        same = all(r["digest"] == ref["digest"] for r in rs)
        print("| %s | %.2f [%.2f, %.2f] | %.2f | %.1f | %.2fx | %.0f | %s |" % (
            label, med[how], min(walls), max(walls), statistics.median(r["cpu"] for r in rs),
            size / med[how] / 1e6, base / med[how], max(r["peak"] or 0 for r in rs) / (1 << 20),
            "identical" if same else "DIFFERENT"))
    print("")
    print("%d documents, %d distinct pretokens." % (ref["documents"], ref["distinct"]))
    return 0


if __name__ == "__main__":
    sys.exit(_results.run_and_record(main, "train_scale.py"))
