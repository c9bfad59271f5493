#!/usr/bin/env python3
"""Encode throughput: supertok against tiktoken and quicktok-v1, side by side in one run.

    python bench/encode.py                      # o200k_base, every language file, pathological inputs
    python bench/encode.py --mib 1 --runs 5 --encoding o200k_base
    python bench/encode.py --quick              # a smoke run (tests use it)

Every measurement runs in its own subprocess (tiktoken raises pyo3's PanicException, a
BaseException, on a megabyte of spaces, and a crash must not take the table down). Inside it:
the vocabulary is loaded first, the input is read, one warm-up call, then --runs timed calls
of the list-returning encode, single thread. The driver checks that every implementation
returned the same ids (a hash of them) before printing any speed: a speedup on a wrong result
measures a different program. MB = 10^6 bytes of UTF-8 input. Reported: median MB/s and
min-max over the runs; ratios are of medians, to tiktoken measured in the same run.

Also: time to load o200k_base and the resident memory get_encoding adds (fresh process each),
then the time and memory of the first encode that builds the backtracking encoder's tables,
growth on 100 KB / 1 MB / 4 MB of the pathological inputs, and encode_batch scaling on 1..N
threads.
"""
import argparse
import hashlib
import json
import lzma
import os
import platform
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPORA = os.path.join(ROOT, "..", "shared", "corpora")
LANGS = ["en", "zh", "ja", "ar", "ru", "el", "hi", "code"]
PATHOLOGICAL = ["one_letter", "random_lower", "spaces_then_x", "newlines", "random_cjk", "digits", "punctuation"]
IMPLS = ["tiktoken", "quicktok", "supertok-native", "supertok-wasmtime"]


# ---- inputs -------------------------------------------------------------------------------------

def corpus_text(lang, nbytes):
    path = os.path.join(CORPORA, lang + ".txt.xz")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        text = f.read(nbytes)  # characters; cut to bytes below
    data = text.encode("utf-8")[:nbytes]
    return data.decode("utf-8", "ignore")


def pathological_text(kind, nbytes):
    rng = random.Random(1234)
    if kind == "one_letter":
        return "a" * nbytes
    if kind == "random_lower":
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(nbytes))
    if kind == "spaces_then_x":
        return " " * (nbytes - 1) + "x"
    if kind == "newlines":
        return "\n" * nbytes
    if kind == "random_cjk":
        return "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(nbytes // 3))
    if kind == "digits":
        return "".join(rng.choice("0123456789") for _ in range(nbytes))
    if kind == "punctuation":
        return "!" * nbytes
    raise ValueError(kind)


def make_input(spec):
    kind, name, nbytes = spec.split(":")
    nbytes = int(nbytes)
    return corpus_text(name, nbytes) if kind == "lang" else pathological_text(name, nbytes)


# ---- the worker: one implementation, one input ---------------------------------------------------

def tiktoken_env():
    """tiktoken, offline from the shipped rank files (no network)."""
    import hashlib as h
    import shutil
    import tempfile
    cache = os.path.join(tempfile.gettempdir(), "supertok-bench-tiktoken")
    os.makedirs(cache, exist_ok=True)
    for name in ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]:
        url = "https://openaipublic.blob.core.windows.net/encodings/%s.tiktoken" % name
        dst = os.path.join(cache, h.sha1(url.encode()).hexdigest())
        if not os.path.exists(dst):
            shutil.copy(os.path.join(ROOT, "py", "supertok", "vocab", name + ".tiktoken"), dst)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache


def load_impl(impl, encoding):
    if impl == "tiktoken":
        tiktoken_env()
        import tiktoken
        return tiktoken.get_encoding(encoding).encode_ordinary
    if impl == "quicktok":
        import quicktok
        return quicktok.get_encoding(encoding).encode
    if impl.startswith("supertok-"):
        os.environ["SUPERTOK_BACKEND"] = impl.split("-", 1)[1]
        import supertok
        return supertok.get_encoding(encoding).encode_ordinary
    raise ValueError(impl)


def worker(args):
    fn = load_impl(args.worker, args.encoding)
    text = make_input(args.input)
    nbytes = len(text.encode("utf-8"))
    ids = fn(text)  # warm-up, and the ids for the exactness check
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t)
    digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:16]
    print(json.dumps({"times": times, "bytes": nbytes, "tokens": len(ids), "digest": digest}))


def run_worker(impl, spec, encoding, runs, timeout=600):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", impl, "--input", spec,
           "--encoding", encoding, "--runs", str(runs)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout after %d s" % timeout}
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return {"error": last[:120]}
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---- the driver ----------------------------------------------------------------------------------

def available(impl):
    mod = {"tiktoken": "tiktoken", "quicktok": "quicktok", "supertok-native": "supertok._native",
           "supertok-wasmtime": "wasmtime"}[impl]
    r = subprocess.run([sys.executable, "-c", "import %s" % mod], capture_output=True)
    return r.returncode == 0


def mbps(res):
    ts = sorted(res["times"])
    mb = res["bytes"] / 1e6
    return mb / statistics.median(ts), mb / ts[-1], mb / ts[0]


def cell(res, base=None):
    if "error" in res:
        return "error: " + res["error"]
    med, lo, hi = mbps(res)
    out = "%.1f (%.1f–%.1f)" % (med, lo, hi)
    if base is not None and "error" not in base:
        out += " **%.2fx**" % (med / mbps(base)[0])
    return out


def table(rows, impls, title):
    print("\n### " + title + "\n")
    print("| input | bytes | " + " | ".join(impls) + " |")
    print("|---|---:|" + "---:|" * len(impls))
    for name, results in rows:
        base = results.get("tiktoken")
        nbytes = next((r["bytes"] for r in results.values() if "bytes" in r), 0)
        cells = [cell(results[i], None if i == "tiktoken" else base) for i in impls]
        print("| %s | %s | %s |" % (name, "{:,}".format(nbytes), " | ".join(cells)))


def check_same(name, results):
    digests = {impl: r["digest"] for impl, r in results.items() if "digest" in r}
    if len(set(digests.values())) > 1:
        sys.exit("EXACTNESS FAILURE on %s: the implementations returned different ids: %s" % (name, digests))


def load_stats(encoding):
    code = (
        "import os, time, resource\n"
        "os.environ['SUPERTOK_BACKEND'] = 'native'\n"
        "import supertok\n"
        "supertok.backend()  # the backend's own load is not the vocabulary's\n"
        "def rss():\n"
        "    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
        "r0 = rss(); t = time.perf_counter(); e = supertok.get_encoding(%r); dt = time.perf_counter() - t\n"
        "r1 = rss(); t = time.perf_counter(); e.encode_ordinary('\u4e2d\u6587\u5b57\u7b26\u4e32')\n"
        "dt2 = time.perf_counter() - t\n"
        "print(dt, r1 - r0, dt2, rss() - r1)\n" % encoding)
    times, rss, first, first_rss = [], [], [], []
    for _ in range(5):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        dt, drss, dt2, drss2 = r.stdout.split()
        times.append(float(dt))
        rss.append(int(drss))
        first.append(float(dt2))
        first_rss.append(int(drss2))
    return times, rss, first, first_rss


def batch_scaling(encoding, runs):
    code = (
        "import os, sys, time, lzma\n"
        "os.environ['SUPERTOK_BACKEND'] = 'native'\n"
        "sys.path.insert(0, %r)\n"
        "import supertok, encode as B\n"
        "e = supertok.get_encoding(%r)\n"
        "docs = B.corpus_text('en', 4_000_000).split('\\n')\n"
        "n = sum(len(d.encode()) for d in docs)\n"
        "for threads in range(1, os.cpu_count() + 1):\n"
        "    ts = []\n"
        "    for _ in range(%d):\n"
        "        t = time.perf_counter(); e.encode_ordinary_batch(docs, num_threads=threads); ts.append(time.perf_counter() - t)\n"
        "    ts.sort(); print(threads, n / 1e6 / ts[len(ts) // 2])\n" % (HERE, encoding, runs))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return [(int(a), float(b)) for a, b in (ln.split() for ln in r.stdout.strip().splitlines())]


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %s, %d cores, Python %s" % (platform.platform(), cpu, os.cpu_count(), platform.python_version())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--mib", type=float, default=1.0, help="bytes of each language file (MiB)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="64 KiB, 2 runs, two inputs: a smoke run")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: langs,patho,growth,load,batch")
    ap.add_argument("--worker")
    ap.add_argument("--input")
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    skip = set(filter(None, args.skip.split(",")))
    nbytes = 65536 if args.quick else int(args.mib * 1024 * 1024)
    runs = 2 if args.quick else args.runs
    impls = [i for i in IMPLS if available(i)]
    print("# encode benchmark: %s, single thread, list output" % args.encoding)
    print("\nmachine: %s" % machine())
    print("command: python bench/encode.py %s" % " ".join(sys.argv[1:]))
    print("implementations: %s (missing: %s)" % (", ".join(impls), ", ".join(sorted(set(IMPLS) - set(impls))) or "none"))
    print("cells: median MB/s (min–max over %d runs); **ratio** = median / tiktoken's median, same run" % runs)

    if "langs" not in skip:
        if not os.path.isdir(CORPORA):
            print("\n../shared/corpora is absent: skipping the language files")
        else:
            rows = []
            for lang in (["en", "zh"] if args.quick else LANGS):
                if not os.path.exists(os.path.join(CORPORA, lang + ".txt.xz")):
                    print("skipping %s: its corpus file is absent" % lang)
                    continue
                spec = "lang:%s:%d" % (lang, nbytes)
                results = {i: run_worker(i, spec, args.encoding, runs) for i in impls}
                check_same(lang, results)
                rows.append((lang, results))
            table(rows, impls, "Language files (first %s bytes of each)" % "{:,}".format(nbytes))

    if "patho" not in skip and not args.quick:
        rows = []
        for kind in PATHOLOGICAL:
            spec = "patho:%s:%d" % (kind, 1_000_000)
            results = {i: run_worker(i, spec, args.encoding, 3) for i in impls}
            check_same(kind, results)
            rows.append((kind, results))
        table(rows, impls, "Pathological inputs, 1 MB each (3 runs)")
        print("\nseconds per call (median):")
        for name, results in rows:
            print("- %s: %s" % (name, ", ".join(
                "%s %s" % (i, "error" if "error" in r else "%.3f s" % statistics.median(r["times"]))
                for i, r in results.items())))

    if "growth" not in skip and not args.quick:
        print("\n### Growth on pathological inputs (supertok-native, seconds per call, median of 3)\n")
        print("| input | 100 KB | 1 MB | 4 MB | 4 MB / 1 MB |")
        print("|---|---:|---:|---:|---:|")
        for kind in PATHOLOGICAL:
            ts = []
            for size in (100_000, 1_000_000, 4_000_000):
                r = run_worker("supertok-native", "patho:%s:%d" % (kind, size), args.encoding, 3)
                ts.append(statistics.median(r["times"]) if "times" in r else float("nan"))
            print("| %s | %.4f | %.4f | %.4f | %.1fx |" % (kind, ts[0], ts[1], ts[2], ts[2] / ts[1]))

    if "load" not in skip and not args.quick and "supertok-native" in impls:
        times, rss, first, first_rss = load_stats(args.encoding)
        size = os.path.getsize(os.path.join(ROOT, "py", "supertok", "vocab", args.encoding + ".tiktoken"))
        print("\n### Loading %s (native, fresh process, 5 runs)\n" % args.encoding)
        print("- get_encoding: median %.1f ms (min %.1f, max %.1f), including the sha256 check"
              % (1e3 * statistics.median(times), 1e3 * min(times), 1e3 * max(times)))
        print("- resident memory added: median %.1f MB = %.2fx the rank file (%.1f MB)"
              % (statistics.median(rss) / 1e6, statistics.median(rss) / size, size / 1e6))
        print("- then the first piece that wants the backtracking tables (a 5-character Chinese text) "
              "builds them: median %.1f ms (min %.1f, max %.1f), adding %.1f MB resident"
              % (1e3 * statistics.median(first), 1e3 * min(first), 1e3 * max(first),
                 statistics.median(first_rss) / 1e6))

    if "batch" not in skip and not args.quick and "supertok-native" in impls:
        print("\n### encode_ordinary_batch scaling (native, English lines, ~4 MB)\n")
        res = batch_scaling(args.encoding, runs)
        for threads, mb in res:
            print("- %d thread%s: %.1f MB/s (%.2fx)" % (threads, "" if threads == 1 else "s", mb, mb / res[0][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
