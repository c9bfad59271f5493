#!/usr/bin/env python3
"""How training time grows with one long run: paper mode beside hf mode, up to 50 MB.

    python bench/train_growth.py                          # native; 1, 5, 10, 25, 50 MB; 3 inputs
    python bench/train_growth.py --backends native,wasmtime --sizes 1,5,10
    python bench/train_growth.py --quick                  # 1 and 2 MB, for a smoke run

Paper mode counts a run of k equal symbols as floor(k / 2) of its pair, so the trainer's merge
windows reach to the ends of the runs around each merge site; this measures that a run costs
time linear in its length. Each input is one line with no newline (one document, one pretoken
under o200k): one byte repeated ('a'), a repeated period of ten letters ('abcdefghij') and
repeated Japanese ('日本語のテキスト', 24 bytes), cut to a whole number of periods at most the
size. It is written to a temporary .txt file and trained from the path, as the command line
does, with vocab_size 2048 (the run runs out of pairs first: a few dozen merges) and one
counting thread, each training in a fresh child process (which first trains on a few words, so
the backend's loading is not in the times).

Columns: merge CPU and wall (the phase-1 merges: from the "count" phase's last progress record
to the "merge" phase's), total CPU and wall (the whole supertok.train call: reading, counting,
merging), the merges made and why training stopped short of vocab_size (the TrainWarning's
reason: no_pair when the run has no pair left, token_bytes at the limit on the tokens' bytes that
keeps every model loadable), and per MB: total CPU and wall time / MB. CPU is time.process_time()
(every thread of the child); MB is 10^6 bytes. With --rounds N each cell is the fastest of N
trainings by CPU. Under the table, for each input, mode and backend: the per-MB CPU time at the
largest size divided by that at the smallest (about 1 when the growth is linear, the size ratio
when it is quadratic) and the least-squares slopes of total CPU and wall time against size, in
s/MB. CPU is the steadier measure on a shared machine: wall time also counts the waits for a
core.

The table is printed, and written to bench/RESULTS.md with the command, the date and the
machine, in place of this script's earlier entry there (bench/_results.py; not for --quick or
--no-results).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import _results

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

INPUTS = [("one byte", "a"), ("period", "abcdefghij"), ("japanese", "日本語のテキスト")]
VOCAB = 2048

_CHILD = r"""
import json, sys, time, warnings
import supertok
path, mode = sys.argv[1], sys.argv[2]
supertok.train(iter(["warm up warm up"]), vocab_size=300, mode=mode, progress=False)  # the backend loaded
marks = {}
def progress(r):
    if r.done:
        marks[r.phase] = (time.process_time(), time.perf_counter())
c0, w0 = time.process_time(), time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", supertok.TrainWarning)
    enc = supertok.train(path, vocab_size=int(sys.argv[3]), mode=mode, progress=progress, threads=1)
c1, w1 = time.process_time(), time.perf_counter()
stops = [w.message.reason for w in caught if isinstance(w.message, supertok.TrainWarning)]
print(json.dumps({"backend": supertok.backend(), "merges": len(enc.merges), "stopped": ",".join(stops) or "-",
                  "merge_cpu": marks["merge"][0] - marks["count"][0],
                  "merge_wall": marks["merge"][1] - marks["count"][1],
                  "cpu": c1 - c0, "wall": w1 - w0}))
"""




def write_input(path, unit, nbytes):
    u = unit.encode("utf-8")
    reps = nbytes // len(u)
    with open(path, "wb") as f:
        block = u * max(1, (1 << 20) // len(u))
        left = reps
        per = len(block) // len(u)
        while left:
            k = min(left, per)
            f.write(block[:k * len(u)])
            left -= k
    return reps * len(u)


def measure(backend, path, mode, timeout):
    env = dict(os.environ, SUPERTOK_BACKEND=backend)
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, path, mode, str(VOCAB)], env=env, capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        raise SystemExit("the %s child failed on %s (%s):\n%s" % (backend, path, mode, out.stderr))
    res = json.loads(out.stdout)
    if res["backend"] != backend:
        raise SystemExit("asked for backend %s, the child ran %s" % (backend, res["backend"]))
    return res


def slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,5,10,25,50", help="sizes in MB (10^6 bytes), comma-separated")
    ap.add_argument("--backends", default="native", help="comma-separated: native, wasmtime")
    ap.add_argument("--modes", default="paper,hf")
    ap.add_argument("--inputs", default=",".join(k for k, _ in INPUTS), help="one byte, period, japanese")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one training may take (then: did not finish)")
    ap.add_argument("--rounds", type=int, default=1, help="trainings per cell; the fastest (by CPU) is shown")
    ap.add_argument("--quick", action="store_true", help="sizes 1,2 (a smoke run)")
    ap.add_argument("--no-results", action="store_true", help="do not write bench/RESULTS.md")
    args = ap.parse_args()
    sizes = [1, 2] if args.quick else [float(s) for s in args.sizes.split(",")]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    wanted = [s.strip() for s in args.inputs.split(",")]
    inputs = [(k, u) for k, u in INPUTS if k in wanted]
    if len(inputs) != len(wanted):
        raise SystemExit("--inputs: choose from %s" % ", ".join(k for k, _ in INPUTS))

    command = "python bench/train_growth.py " + " ".join(sys.argv[1:])
    head = ["input", "MB", "backend", "mode", "merges", "stopped", "merge CPU s", "merge wall s", "total CPU s", "total wall s",
            "CPU s/MB", "wall s/MB"]
    rows, series = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, unit in inputs:
            for mb in sizes:
                path = os.path.join(tmp, "run.txt")
                nbytes = write_input(path, unit, int(mb * 1e6))
                for backend in backends:
                    for mode in modes:
                        runs = [measure(backend, path, mode, args.timeout) for _ in range(args.rounds)]
                        r = None if None in runs else min(runs, key=lambda x: x["cpu"])
                        size = nbytes / 1e6
                        if r is None:
                            row = [name, "%.2f" % size, backend, mode, "-", "-", "-", "-", "-",
                                   "did not finish in %g s" % args.timeout, "-", "-"]
                        else:
                            row = [name, "%.2f" % size, backend, mode, str(r["merges"]), r["stopped"], "%.3f" % r["merge_cpu"],
                                   "%.3f" % r["merge_wall"], "%.3f" % r["cpu"], "%.3f" % r["wall"],
                                   "%.4f" % (r["cpu"] / size), "%.4f" % (r["wall"] / size)]
                            series.setdefault((name, backend, mode), []).append((size, r["cpu"], r["wall"]))
                        rows.append(row)
                        print(" | ".join(row), file=sys.stderr, flush=True)

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines.append("")
    lines.append("| input | backend | mode | CPU s/MB, largest size / smallest | slope of total CPU (s/MB) | "
                 "slope of total wall (s/MB) |")
    lines.append("|---|---|---|---|---|---|")
    for (name, backend, mode), pts in series.items():
        if len(pts) < 2:
            continue
        (s0, c0, _), (s1, c1, _) = pts[0], pts[-1]
        ratio = (c1 / s1) / (c0 / s0) if c0 > 0 else float("nan")
        xs = [p[0] for p in pts]
        lines.append("| %s | %s | %s | %.2f (sizes %.0fx apart) | %.4f | %.4f |"
                     % (name, backend, mode, ratio, s1 / s0, slope(xs, [p[1] for p in pts]),
                        slope(xs, [p[2] for p in pts])))
    table = "\n".join(lines)
    print(table)

    if not (args.no_results or args.quick):
        path = _results.write_entry("train_growth.py", command, table)
        print("wrote its entry in %s" % os.path.relpath(path, ROOT), file=sys.stderr)


if __name__ == "__main__":
    main()
