#!/usr/bin/env python3
"""One long encode() call on one thread and on several, and encode_batch on many short texts.

    python bench/parallel_encode.py                        # o200k_base, 4 MiB of en, zh, code
    python bench/parallel_encode.py --lang en --mib 4 --rounds 9 --threads 2

Long calls: the first --mib MiB of each corpus file (repeated if shorter), encoded with
encode_ordinary serially (supertok.encoding.set_parallel(1)) and in parallel
(set_parallel(--threads)), the two taking turns round by round; wall time and CPU time
(time.process_time(), every thread of the process) of each call, median (min-max), and the
per-round ratio serial / parallel; and the best wall ratio the cuts allow, from each part's
CPU time encoded alone (sum / longest part), which the machine's other load does not change.
Before timing, the parallel ids must equal the serial ids
and tiktoken's where tiktoken loads offline (the shipped rank files).

Batch: the same text's lines (up to --lines of them) through encode_ordinary_batch with
num_threads 1 and --threads, taking turns, the same way.

The machine the numbers in bench/RESULTS.md were made on has 2 shared CPUs with other work running:
read the ratios from the same round, and CPU time beside wall time.
"""
import argparse
import lzma
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
import supertok  # noqa: E402
from supertok import encoding as E  # noqa: E402


def timed(fn, *args, **kw):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return out, time.perf_counter() - w, time.process_time() - c


def fmt(xs, scale=1000.0):
    return "%.1f (%.1f-%.1f)" % (statistics.median(xs) * scale, min(xs) * scale, max(xs) * scale)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=os.environ.get("SUPERTOK_CORPORA", os.path.join(HERE, "..", "..", "shared",
                                                                                          "corpora")))
    ap.add_argument("--lang", action="append")
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--mib", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--lines", type=int, default=20000)
    args = ap.parse_args()
    enc = supertok.get_encoding(args.encoding)
    enc.prepare()
    print("supertok %s, backend %s, %s, %d CPUs, parallel: %d threads; %d rounds" % (
        supertok.__version__ if hasattr(supertok, "__version__") else "", supertok.backend(), args.encoding,
        os.cpu_count() or 0, args.threads, args.rounds))
    print()
    print("| text | call | serial wall ms | parallel wall ms | wall ratio | serial CPU ms | parallel CPU ms | parts "
          "| best wall ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for lang in args.lang or ["en", "zh", "code"]:
        with lzma.open(os.path.join(args.corpora, lang + ".txt.xz"), "rt", encoding="utf-8") as f:
            raw = f.read()
        want = int(args.mib * (1 << 20))
        text = raw
        while len(text.encode()) < want:
            text += "\n" + raw
        data = text.encode()[:want]
        text = data.decode("utf-8", "ignore")
        # exactness first
        E.set_parallel(1)
        serial = enc.encode_ordinary(text)
        E.set_parallel(args.threads)
        par = enc.encode_ordinary(text)
        assert par == serial, "parallel ids differ from serial on %s" % lang
        cuts = enc._backend.cuts(enc._handle, text.encode(), args.threads)
        parts = len(cuts) + 1
        # how well the cuts balance the work, whatever else the machine runs: each part's CPU
        # time encoded alone (serially), the longest over the sum: the best wall ratio is sum /
        # longest
        bounds = [0] + cuts + [len(text.encode())]
        pieces = [text.encode()[a:b].decode() for a, b in zip(bounds, bounds[1:])]
        E.set_parallel(1)
        part_cpu = [min(timed(enc.encode_ordinary, p)[2] for _ in range(3)) for p in pieces]
        balance = sum(part_cpu) / max(part_cpu)
        sw, sc, pw, pc, ratio = [], [], [], [], []
        for _ in range(args.rounds):
            E.set_parallel(1)
            _, w1, c1 = timed(enc.encode_ordinary, text)
            E.set_parallel(args.threads)
            _, w2, c2 = timed(enc.encode_ordinary, text)
            sw.append(w1); sc.append(c1); pw.append(w2); pc.append(c2); ratio.append(w1 / w2)
        print("| %s %.1f MiB | encode_ordinary | %s | %s | %.2fx (%.2f-%.2f) | %s | %s | %d | %.2fx |" % (
            lang, args.mib, fmt(sw), fmt(pw), statistics.median(ratio), min(ratio), max(ratio), fmt(sc), fmt(pc),
            parts, balance))
        lines = [ln for ln in raw.split("\n") if ln][:args.lines]
        one = enc.encode_ordinary_batch(lines, num_threads=1)
        assert enc.encode_ordinary_batch(lines, num_threads=args.threads) == one
        sw, sc, pw, pc, ratio = [], [], [], [], []
        for _ in range(args.rounds):
            _, w1, c1 = timed(enc.encode_ordinary_batch, lines, num_threads=1)
            _, w2, c2 = timed(enc.encode_ordinary_batch, lines, num_threads=args.threads)
            sw.append(w1); sc.append(c1); pw.append(w2); pc.append(c2); ratio.append(w1 / w2)
        nbytes = sum(len(ln.encode()) for ln in lines)
        print("| %s %d lines, %.1f MiB | encode_ordinary_batch | %s | %s | %.2fx (%.2f-%.2f) | %s | %s | %d | |" % (
            lang, len(lines), nbytes / (1 << 20), fmt(sw), fmt(pw), statistics.median(ratio), min(ratio), max(ratio),
            fmt(sc), fmt(pc), args.threads))
    E.set_parallel(args.threads)


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    _results.run_and_record(main, _results.keyed("parallel_encode.py", options=("--lang", "--encoding", "--threads", "--mib")))
