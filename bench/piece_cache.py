"""The piece cache that lasts across calls (docs/design.md §7), before vs after: two builds side by
side, interleaved rounds, CPU time (time.process_time: every thread) and wall time.

    python bench/piece_cache.py --before MAIN/.venv/bin/python --after .venv/bin/python \
        [--langs en,zh,ru,ar,code] [--rounds 5]

Each python runs a worker (this file with --worker) that loads o200k_base and the corpora
($SUPERTOK_CORPORA), then times, on each request, one of:
  fresh1m  encode() of a 1 MiB slice (cut at a newline) never encoded in that worker before
  warm1m   encode() of the same 1 MiB slice again (encoded once, untimed, before round 1)
  fresh1k  encode_batch() of 1000 lines never encoded before (default num_threads)
  warm1k   encode_batch() of the same 1000 lines again
Rounds alternate the two workers (before, after, after, before, ...); the table gives, per case,
the median CPU ms (min-max) of each and the after/before ratio of medians, and checks that both
give the same ids. Wall time is printed beside CPU time; the machine is shared, so prefer CPU.
"""
import argparse
import json
import lzma
import os
import statistics
import subprocess
import sys
import time

MIB = 1 << 20
CASES = ("fresh1m", "warm1m", "fresh1k", "warm1k")


def worker(langs, rounds):
    import supertok
    enc = supertok.get_encoding("o200k_base")
    root = os.environ.get("SUPERTOK_CORPORA", "/work/shared/corpora")
    data = {}
    for lang in langs:
        raw = lzma.open(os.path.join(root, lang + ".txt.xz")).read()
        slices = []
        pos = 0
        for _ in range(rounds + 1):  # one per fresh round, the last for warm
            if pos + MIB > len(raw):
                pos = 0
            end = raw.rfind(b"\n", pos, pos + MIB) + 1 or pos + MIB
            slices.append(raw[pos:end].decode("utf-8", "replace"))
            pos = end
        lines = [ln for ln in raw[len(raw) // 2:].decode("utf-8", "replace").split("\n") if ln.strip()]
        batches = [lines[k * 1000:(k + 1) * 1000] for k in range(rounds + 1)]
        data[lang] = (slices, batches)
        enc.encode(slices[-1])  # warm: encoded once before its first timed round
        enc.encode_batch(batches[-1])
    print("ready", flush=True)
    for line in sys.stdin:
        case, lang, r = line.split()
        slices, batches = data[lang]
        r = int(r)
        if case == "fresh1m":
            fn = lambda: enc.encode(slices[r])  # noqa: E731
        elif case == "warm1m":
            fn = lambda: enc.encode(slices[-1])  # noqa: E731
        elif case == "fresh1k":
            fn = lambda: enc.encode_batch(batches[r])  # noqa: E731
        else:
            fn = lambda: enc.encode_batch(batches[-1])  # noqa: E731
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        c1, w1 = time.process_time(), time.perf_counter()
        print(json.dumps({"cpu": c1 - c0, "wall": w1 - w0, "check": hash(str(out))}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--before")
    ap.add_argument("--after")
    ap.add_argument("--langs", default="en,zh,ru,ar,code")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    a = ap.parse_args()
    langs = a.langs.split(",")
    if a.worker:
        return worker(langs, a.rounds)
    env = dict(os.environ, PYTHONHASHSEED="0")
    procs = {}
    for name, py in (("before", a.before), ("after", a.after)):
        procs[name] = subprocess.Popen([py, os.path.abspath(__file__), "--worker", "--langs", a.langs,
                                        "--rounds", str(a.rounds)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True, env=env, cwd="/")
    for p in procs.values():
        assert p.stdout.readline().strip() == "ready"
    res = {}
    for r in range(a.rounds):
        for lang in langs:
            for case in a.cases.split(","):
                order = ("before", "after") if (r + len(res)) % 2 == 0 else ("after", "before")
                for name in order:
                    p = procs[name]
                    p.stdin.write("%s %s %d\n" % (case, lang, r))
                    p.stdin.flush()
                    res.setdefault((lang, case, name), []).append(json.loads(p.stdout.readline()))
    for p in procs.values():
        p.stdin.close()
        p.wait()
    print("| lang | case | before CPU ms | after CPU ms | after/before CPU | before wall ms | after wall ms | same ids |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for lang in langs:
        for case in a.cases.split(","):
            b, f = res[(lang, case, "before")], res[(lang, case, "after")]

            def fmt(rows, key):
                xs = [1000 * x[key] for x in rows]
                return statistics.median(xs), "%.1f (%.1f-%.1f)" % (statistics.median(xs), min(xs), max(xs))
            bm, bs = fmt(b, "cpu")
            am, as_ = fmt(f, "cpu")
            _, bw = fmt(b, "wall")
            _, aw = fmt(f, "wall")
            same = all(x["check"] == y["check"] for x, y in zip(b, f))
            print("| %s | %s | %s | %s | %.2f | %s | %s | %s |" % (lang, case, bs, as_, am / bm, bw, aw,
                                                                  "yes" if same else "NO"))


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    _results.run_and_record(main, _results.keyed("piece_cache.py", options=("--langs",)))
