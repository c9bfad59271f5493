"""Where the C core's encoder spends its time, per language, fresh and warm, with no Python in the
calls: the profile the encode speed work starts from, and what the span cache costs and gives.

    python bench/profile_encode.py                  # 8 languages + code, 250 KB slices (~3 min)
    python bench/profile_encode.py --langs en,zh --no-perf

It builds the core twice with make (as shipped, and with -DST_SPANS_ON=0: the pipeline without the
span cache) into a temporary folder, and bench/encode_driver.c against them, then:

1. Timing: both builds loaded side by side in one process encode the same slices of each corpus
   file in turns (which goes first alternates), each slice fresh and then warm (the same slice
   again): the median CPU ns a byte, and the median and quartiles of the ratio on each slice.
2. Profile (needs Linux `perf`; --no-perf skips it): the shipped build under `perf record`, one run
   fresh (every pass over the file's slices after the caches were emptied) and one warm (each slice
   then three times more), and the functions taking the most samples of the core's library.

o200k_base's rank file, one thread; the corpora as for bench/encode.py (../shared/corpora or
--corpora). Writes its tables to bench/RESULTS.md (--no-results: not).
"""
import argparse
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RANKS = os.path.join(ROOT, "py", "supertok", "vocab", "o200k_base.tiktoken")


def build(tmp):
    """The two libraries and the driver: (lib with spans, lib without, driver)."""
    libs = []
    for name, flags in (("shipped", "-O2"), ("no-spans", "-O2 -DST_SPANS_ON=0")):
        out = os.path.join(tmp, name)
        subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "core_c"), "BUILD=" + out, "CFLAGS=" + flags,
                        "shared"], check=True, stdout=subprocess.DEVNULL)
        libs.append(os.path.join(out, "libsupertok.so"))
    driver = os.path.join(tmp, "encode_driver")
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-I" + os.path.join(ROOT, "core_c", "include"),
                    os.path.join(HERE, "encode_driver.c"), "-ldl", "-o", driver], check=True)
    return libs[0], libs[1], driver


def perf_top(driver, lib, slice_bytes, mode, passes, path, tmp, top):
    """The `top` functions of lib by their share of lib's samples, as [(name, percent)]."""
    data = os.path.join(tmp, "perf.data")
    ctl, ack = os.path.join(tmp, "perf.ctl"), os.path.join(tmp, "perf.ack")
    for fifo in (ctl, ack):
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
    # sampling starts off (-D -1); the driver turns it on around the calls of the mode asked for
    env = dict(os.environ, PERF_CTL_FIFO=ctl, PERF_ACK_FIFO=ack)
    subprocess.run(["perf", "record", "-q", "-F", "4000", "-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack),
                    "-o", data, driver, RANKS, lib, "-", str(slice_bytes), mode, str(passes), path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym", "--stdio",
                          "--dsos", os.path.basename(os.path.realpath(lib)), "--percentage", "relative"],
                         check=True, capture_output=True, text=True).stdout
    rows = []
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            rows.append((m.group(2), float(m.group(1))))
    return rows[:top]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", default="en,zh,ja,ru,ar,ko,th,de,code")
    ap.add_argument("--slice", type=int, default=250_000, help="bytes a slice (default 250,000: 30 or more a file)")
    ap.add_argument("--corpora", default=os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--passes", type=int, default=3, help="passes over a file in each profiled run (default 3)")
    ap.add_argument("--top", type=int, default=8, help="functions a profile row shows (default 8)")
    ap.add_argument("--no-perf", action="store_true", help="the timing table only")
    args = ap.parse_args()
    if not os.path.isdir(args.corpora):
        print("no corpora folder at %s (--corpora DIR)" % args.corpora, file=sys.stderr)
        return 2
    use_perf = not args.no_perf and shutil.which("perf")
    tmp = tempfile.mkdtemp(prefix="profile_encode.")
    try:
        lib, lib_off, driver = build(tmp)
        files = []
        for lang in args.langs.split(","):
            src = os.path.join(args.corpora, lang + ".txt.xz")
            if not os.path.exists(src):
                print("%s: absent, skipped" % src, file=sys.stderr)
                continue
            path = os.path.join(tmp, lang + ".txt")
            with lzma.open(src) as f, open(path, "wb") as out:
                out.write(f.read())
            files.append((lang, path))
        print("o200k_base, the C core alone (bench/encode_driver.c), one thread, slices of %s bytes; CPU time.\n"
              % format(args.slice, ","))
        print("### The core's time, with the span cache and without it\n")
        print("CPU ns a byte, median over the slices; the ratio's median (quartiles) over the same slices, "
              "both builds in one process in turns. Warm: the same slice again right after.\n")
        print("| lang | slices | fresh, without | fresh, with | with / without | warm, without | warm, with | "
              "with / without |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for lang, path in files:
            print("  timing %s" % lang, file=sys.stderr)
            out = subprocess.run([driver, RANKS, lib_off, lib, str(args.slice), "ab", path], check=True,
                                 capture_output=True, text=True).stdout.split()
            n, fa, fb, fr, fq1, fq3, wa, wb, wr, wq1, wq3 = out[1:12]
            print("| %s | %s | %.2f | %.2f | %.3f (%.3f-%.3f) | %.2f | %.2f | %.3f (%.3f-%.3f) |"
                  % (lang, n, float(fa), float(fb), float(fr), float(fq1), float(fq3), float(wa), float(wb),
                     float(wr), float(wq1), float(wq3)))
        if not use_perf:
            print("\n(no profile: %s)" % ("--no-perf" if args.no_perf else "perf is not on this machine"))
            return 0
        print("\n### Profile: the functions with the most samples\n")
        print("`perf record -F 4000` of the shipped build; each function's share of the samples in the core's "
              "library (inlined functions count as their caller). %d passes over the file's slices, the caches "
              "emptied before each, each slice encoded 4 times: fresh samples the first call of each slice "
              "alone, warm the three after it.\n" % args.passes)
        print("| lang | mode | functions (share of the core's samples) |")
        print("|---|---|---|")
        for lang, path in files:
            for mode in ("fresh", "warm"):
                print("  profiling %s %s" % (lang, mode), file=sys.stderr)
                rows = perf_top(driver, lib, args.slice, mode, args.passes, path, tmp, args.top)
                print("| %s | %s | %s |" % (lang, mode, ", ".join("`%s` %.0f%%" % r for r in rows)))
        print("\nWhat the names are: `encode_ordinary_ranks` the batch loop of whole-piece lookups "
              "(pipeline.c); `fill_o200k`, `next_line`, `o200k_upper_lower` the pre-tokenizer "
              "(pretokenize.c); `st__merge_short`, `st__merge_heap` the merge loops (merge.c); "
              "`st__backtrack_encode`, `pair_ok` the backtracking encoder and `st__backtrack_build` "
              "its tables (backtrack.c); `cache_find` the piece cache; `encode_ordinary` the span "
              "cache's loop (its hash, lookup and copies inlined); `st_utf8_validate` the input check.")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, "profile_encode.py"))
