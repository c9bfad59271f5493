#!/usr/bin/env python3
"""Encode speed of two builds of supertok side by side: a change's before and after.

    python bench/before_after.py --before /path/to/old/.venv/bin/python [--after python] \\
        [--encoding o200k_base] [--mib 1] [--rounds 4] [--calls 5] [--backend native]

Each interpreter must `import supertok` from its own build (for example a checkout of the old
commit with its own venv: `git worktree add ../base <commit>`, then `pip install -e ../base`
in a venv there). Every measurement runs in a fresh subprocess; the rounds alternate the order
(before, after; then after, before; ...) so that a drift of the shared machine's speed falls on
both alike. Inside a worker: the encoding is loaded, the input read, then `--calls` timed calls
of encode_ordinary, each timed in wall time (perf_counter) and in CPU time (process_time). The
first call of a process is reported apart as "fresh" (it builds what the encoder builds on
first need); the others are "warm". The driver checks that both builds return the same ids (a
hash of them) before printing any speed. MB = 10^6 bytes of UTF-8 input; figures are medians
over all rounds with min-max; the ratio is after/before of the medians (above 1: faster).

Inputs: ../shared/corpora/<lang>.txt.xz (or SUPERTOK_CORPORA), the first --mib MiB of each.
"""
import argparse
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")
LANGS = ["en", "zh", "ja", "ar", "ru", "el", "hi", "code"]

WORKER = r"""
import hashlib, json, os, sys, time
os.environ["SUPERTOK_BACKEND"] = sys.argv[3]
import supertok
enc = supertok.get_encoding(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f:
    text = f.read()
calls = int(sys.argv[4])
wall, cpu, ids = [], [], None
for _ in range(calls + 1):
    w0, c0 = time.perf_counter(), time.process_time()
    ids = enc.encode_ordinary(text)
    wall.append(time.perf_counter() - w0)
    cpu.append(time.process_time() - c0)
h = hashlib.sha256(b"".join(i.to_bytes(4, "little") for i in ids)).hexdigest()
print(json.dumps({"backend": supertok.backend(), "wall": wall, "cpu": cpu, "n": len(ids), "hash": h,
                  "file": supertok.__file__}))
"""


def corpus_text(lang, nbytes):
    with lzma.open(os.path.join(CORPORA, lang + ".txt.xz"), "rt", encoding="utf-8") as f:
        text = f.read(nbytes)
    return text.encode("utf-8")[:nbytes].decode("utf-8", "ignore")


def run(python, encoding, path, backend, calls):
    out = subprocess.run([python, "-c", WORKER, encoding, path, backend, str(calls)], capture_output=True,
                         text=True, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        sys.exit("worker failed (%s):\n%s" % (python, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt(mbs):
    return "%.1f (%.1f-%.1f)" % (statistics.median(mbs), min(mbs), max(mbs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="python whose `import supertok` is the old build")
    ap.add_argument("--after", default=sys.executable, help="python of the new build (default: this one)")
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--backend", default="native")
    ap.add_argument("--mib", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--langs", default=",".join(LANGS))
    args = ap.parse_args()
    builds = {"before": args.before, "after": args.after}
    tmp = tempfile.mkdtemp()
    print("encoding %s, backend %s, %.2f MiB per language, %d rounds x %d warm calls (+1 fresh) per build"
          % (args.encoding, args.backend, args.mib, args.rounds, args.calls))
    for name, py in builds.items():
        info = run(py, args.encoding, os.path.join(HERE, "before_after.py"), args.backend, 0)
        print("%s: %s (%s)" % (name, info["file"], info["backend"]))
    print()
    print("| lang | MB | warm wall MB/s before | after | ratio | warm CPU MB/s before | after | ratio "
          "| fresh wall MB/s before | after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lang in args.langs.split(","):
        path = os.path.join(CORPORA, lang + ".txt.xz")
        if not os.path.exists(path):
            print("| %s | absent (%s) |" % (lang, path))
            continue
        text = corpus_text(lang, int(args.mib * (1 << 20)))
        data_len = len(text.encode("utf-8"))
        inp = os.path.join(tmp, lang + ".txt")
        with open(inp, "w", encoding="utf-8") as f:
            f.write(text)
        res = {k: {"wall": [], "cpu": [], "fresh": []} for k in builds}
        hashes = set()
        for r in range(args.rounds):
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            for k in order:
                out = run(builds[k], args.encoding, inp, args.backend, args.calls)
                hashes.add(out["hash"])
                res[k]["fresh"].append(data_len / 1e6 / out["wall"][0])
                res[k]["wall"] += [data_len / 1e6 / t for t in out["wall"][1:]]
                res[k]["cpu"] += [data_len / 1e6 / t for t in out["cpu"][1:] if t > 0]
        if len(hashes) != 1:
            sys.exit("%s: the two builds returned different ids: no speed is reported" % lang)
        b, a = res["before"], res["after"]
        print("| %s | %.2f | %s | %s | %.2f | %s | %s | %.2f | %s | %s |" % (
            lang, data_len / 1e6, fmt(b["wall"]), fmt(a["wall"]),
            statistics.median(a["wall"]) / statistics.median(b["wall"]), fmt(b["cpu"]), fmt(a["cpu"]),
            statistics.median(a["cpu"]) / statistics.median(b["cpu"]), fmt(b["fresh"]), fmt(a["fresh"])))
        sys.stdout.flush()


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    _results.run_and_record(main, _results.keyed("before_after.py", options=("--backend", "--langs", "--encoding", "--mib")))
