#!/usr/bin/env python3
"""Per-call cost of short encodes and batches of short lines: every supertok backend present,
beside tiktoken, side by side in one process.

    python bench/short_calls.py                    # o200k_base, 10 B / 100 B / 1 KB, 7 rounds
    python bench/short_calls.py --pywasm --lang en # also pywasm (an interpreter: 3 texts, 40 lines)
    python bench/short_calls.py --quick            # a smoke run (a few seconds)

Inputs are real text from the shared corpora (../shared/corpora, or SUPERTOK_CORPORA): for
each language and size, --texts distinct pieces of about that many UTF-8 bytes (consecutive
slices of the file, cut at a character boundary), so no implementation is timed on one text
it has just seen. A missing language file is skipped with a message. The batch is --lines
real lines of at most 256 bytes, taken in turn from every language present.

Before any timing, every implementation's ids for every text and every line are compared with
tiktoken's; a mismatch stops the run (exit 1): a fast wrong answer is not a result.

Then --rounds rounds; in each round, every input is encoded by every implementation in turn
(the order rotating from round to round), one sample each: a sample is one encode() of each of
the input's texts, repeated (the same number of times in every round) until it lasts about
--sample-ms (wall: time.perf_counter, CPU: time.process_time), reported per call; for the
batch, one encode_batch (num_threads=1 and 8) and one loop of encode() over the lines. Cells
are median (min-max) over the rounds, microseconds per call (per line for the batch rows).
"""
import argparse
import hashlib
import lzma
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "py"))
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")
LANGS = ["en", "zh", "ja", "ar", "ru", "hi", "ko", "code"]


def tiktoken_offline():
    """tiktoken with no network: the shipped rank files under the names of its downloads."""
    cache = os.path.join(tempfile.gettempdir(), "supertok-bench-tiktoken")
    os.makedirs(cache, exist_ok=True)
    for name in ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]:
        url = "https://openaipublic.blob.core.windows.net/encodings/%s.tiktoken" % name
        dst = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
        if not os.path.exists(dst):
            shutil.copy(os.path.join(ROOT, "py", "supertok", "vocab", name + ".tiktoken"), dst)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    import tiktoken
    return tiktoken


def read_corpus(lang, nbytes):
    path = os.path.join(CORPORA, lang + ".txt.xz")
    if not os.path.exists(path):
        return None
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return f.read(nbytes)


def pieces(text, size, count):
    """count consecutive pieces of text of about size UTF-8 bytes each, cut at characters."""
    data = text.encode("utf-8")
    out, pos = [], 0
    while len(out) < count and pos < len(data):
        piece = data[pos:pos + size].decode("utf-8", "ignore")
        if piece.strip():
            out.append(piece)
        pos += size
    return out


def load_impls(encoding, with_pywasm):
    import supertok
    from supertok import backends
    impls = {"tiktoken": tiktoken_offline().get_encoding(encoding)}
    names = ["native", "wasmtime"] + (["pywasm"] if with_pywasm else [])
    for name in names:
        try:
            b = backends.load(name)
        except backends.BackendUnavailable as exc:
            print("# %s: not available here (%s)" % (name, exc), file=sys.stderr)
            continue
        prev = supertok._set_backend(b)
        try:
            impls["supertok-" + name] = supertok.get_encoding(encoding)
        finally:
            supertok._set_backend(prev)
    return impls


def check(impls, inputs, lines):
    """Every implementation's ids equal tiktoken's on every text and line, before any timing."""
    ref = impls["tiktoken"]
    for label, texts in inputs:
        for t in texts:
            want = ref.encode(t)
            for name, enc in impls.items():
                got = enc.encode(t)
                if got != want:
                    sys.exit("MISMATCH %s on %s (%r...): %r != tiktoken %r" % (name, label, t[:40], got[:20], want[:20]))
    want = ref.encode_batch(lines)
    for name, enc in impls.items():
        for nt in (1, 8):
            if enc.encode_batch(lines, num_threads=nt) != want:
                sys.exit("MISMATCH %s on encode_batch (num_threads=%d)" % (name, nt))


def sample(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def cell(xs):
    xs = [x * 1e6 for x in xs]
    med = statistics.median(xs)
    fmt = "%.1f" if med < 100 else "%.0f"
    return (fmt + " (" + fmt + "-" + fmt + ")") % (med, min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--sizes", default="10,100,1000", help="UTF-8 bytes per call (default 10,100,1000)")
    ap.add_argument("--lang", default=None, help="corpus languages (default %s)" % ",".join(LANGS))
    ap.add_argument("--texts", type=int, default=50, help="distinct texts per language and size (default 50)")
    ap.add_argument("--lines", type=int, default=4000, help="lines in the batch (default 4000)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sample-ms", type=float, default=10.0,
                    help="a short input's sample repeats its texts to last about this long (default 10)")
    ap.add_argument("--pywasm", action="store_true",
                    help="also time pywasm (a pure-Python interpreter; --texts at most 3, --lines at most 40)")
    ap.add_argument("--quick", action="store_true", help="smoke run: en and zh, 5 texts, 200 lines, 2 rounds")
    args = ap.parse_args()
    if args.quick:
        args.lang, args.texts, args.lines, args.rounds = args.lang or "en,zh", 5, 200, 2
    args.lang = args.lang or ",".join(LANGS)
    if args.pywasm:  # keep an interpreter's run in minutes (20 ms for 10 bytes, 0.7 s for 1 KB)
        args.texts, args.lines = min(args.texts, 3), min(args.lines, 40)
    if not os.path.isdir(CORPORA):
        print("the corpora are not in %s (set SUPERTOK_CORPORA)" % CORPORA, file=sys.stderr)
        return 2
    sizes = [int(x) for x in args.sizes.split(",")]
    inputs, per_lang_lines = [], []
    for lang in args.lang.split(","):
        text = read_corpus(lang, 4 * max(sizes) * args.texts + 400_000)
        if text is None:
            print("# %s: %s.txt.xz is absent from the corpora, skipped" % (lang, lang), file=sys.stderr)
            continue
        for size in sizes:
            inputs.append(("%s %d B" % (lang, size), pieces(text, size, args.texts)))
        per_lang_lines.append([ln for ln in text.split("\n") if ln.strip() and len(ln.encode("utf-8")) <= 256])
    lines = []
    for i in range(max((len(x) for x in per_lang_lines), default=0)):
        lines.extend(x[i] for x in per_lang_lines if i < len(x))
    lines = lines[:args.lines]

    impls = load_impls(args.encoding, args.pywasm)
    names = list(impls)
    for enc in impls.values():  # the first call builds tables: not a per-call cost
        enc.encode_batch(lines[:8])
        enc.encode("warm up")
    check(impls, inputs, lines)
    print("# ids equal tiktoken's on every text and line (%d inputs, %d lines)" % (len(inputs), len(lines)),
          file=sys.stderr)

    # a sample of a short input runs its texts `reps` times over, so that it lasts a few ms
    # (a timer reading is not a microsecond-exact thing); reps fixed per input and implementation
    reps = {}
    for label, texts in inputs:
        for name, enc in impls.items():
            w, _ = sample(lambda: [enc.encode(t) for t in texts])
            reps[(label, name)] = max(1, min(100, int(args.sample_ms / 1000 / max(w, 1e-9))))
    rows = [(label, texts, False) for label, texts in inputs]
    batch_rows = [("batch of %d lines, encode_batch 1 thread" % len(lines), 1),
                  ("batch of %d lines, encode_batch 8 threads" % len(lines), 8),
                  ("batch of %d lines, loop of encode()" % len(lines), 0)]
    wall = {}
    cpu = {}
    load0 = os.getloadavg()
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for label, texts, _ in rows:
            for name in order:
                enc = impls[name]
                k = reps[(label, name)]
                w, c = sample(lambda: [enc.encode(t) for _ in range(k) for t in texts])
                wall.setdefault((label, name), []).append(w / (k * len(texts)))
                cpu.setdefault((label, name), []).append(c / (k * len(texts)))
        for label, nt in batch_rows:
            for name in order:
                enc = impls[name]
                if nt:
                    w, c = sample(lambda: enc.encode_batch(lines, num_threads=nt))
                else:
                    w, c = sample(lambda: [enc.encode(t) for t in lines])
                wall.setdefault((label, name), []).append(w / len(lines))
                cpu.setdefault((label, name), []).append(c / len(lines))
        print("# round %d/%d done" % (r + 1, args.rounds), file=sys.stderr)
    load1 = os.getloadavg()

    import supertok
    tk_version = sys.modules["tiktoken"].__version__ if hasattr(sys.modules["tiktoken"], "__version__") else "?"
    try:
        import importlib.metadata as md
        tk_version = md.version("tiktoken")
        wt_version = md.version("wasmtime")
    except Exception:
        wt_version = "?"
    cpu_model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu_model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print("`python bench/short_calls.py %s`  " % " ".join(sys.argv[1:]))
    print("%s, %s (%d CPUs), Python %s, tiktoken %s, wasmtime %s, supertok %s, %s; load average %.1f at the "
          "start, %.1f at the end.  " % (platform.platform(), cpu_model, os.cpu_count(), platform.python_version(),
                                         tk_version, wt_version, supertok.__version__, args.encoding,
                                         load0[0], load1[0]))
    print("Microseconds per call (per line for the batch rows): wall median (min-max) over %d rounds; "
          "CPU time the same way after the slash. ids checked equal to tiktoken's first." % args.rounds)
    print()
    print("| input | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label in [x[0] for x in rows] + [x[0] for x in batch_rows]:
        cells = []
        for name in names:
            cells.append("%s / %s" % (cell(wall[(label, name)]), cell(cpu[(label, name)])))
        print("| %s | %s |" % (label, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, _results.keyed("short_calls.py", options=("--encoding", "--lang", "--sizes"), flags=("--pywasm",))))
