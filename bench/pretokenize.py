#!/usr/bin/env python3
"""Pre-tokenizer throughput, side by side in one process (docs/design.md §11).

For each language file of ../shared/corpora and a set of pathological inputs, and for each
chosen pattern, this times on the same text:

  regex        regex.findall(pat_str, text), the oracle and the peer (pinned regex==2024.11.6)
  C native     the native backend's pretokenize_count on the UTF-8 bytes: the C scanner
               counting pieces (plus its UTF-8 validation pass; no str->UTF-8 encode, no list)
  pre native   supertok.pretokenize(text, ...) on the native backend: the list of str
  C wasmtime   the same count through supertok.wasm on wasmtime (includes copying the bytes
               into the module's memory)
  pre wasmtime supertok.pretokenize on wasmtime

Before timing, once per (input, pattern, mode), every backend's pieces are checked equal to
regex.findall's (the script-aware table checks against vectors/oracle.py's chunker); a mismatch
aborts the run. Throughput is MB/s with MB = 1e6 bytes of UTF-8 input; each cell is the median
over --runs runs with (min-max), and the ratio of its median to regex's median.

Run from the repository root:  python bench/pretokenize.py [--pattern o200k|gpt2|cl100k|all]
See bench/README.md.
"""
import argparse
import gc
import lzma
import os
import platform
import random
import shlex
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_CORPORA = os.path.join(ROOT, "..", "shared", "corpora")
LANGUAGES = ("en", "zh", "ja", "ar", "ru", "el", "hi", "ko", "th", "de", "he", "code")
SCRIPT_AWARE_DEFAULT = ("en", "zh", "ja", "th")
PATTERN_FILES = {"gpt2": "r50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}
PATHOLOGICAL_SEED = 20240611
MIB = 1 << 20

try:
    import regex
except ImportError:
    sys.exit("bench/pretokenize.py needs the regex module (pip install regex==2024.11.6)")

try:
    import supertok
    from supertok import backends as st_backends
except ImportError:
    sys.exit("bench/pretokenize.py needs supertok installed (pip install -e . in the repository root)")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- inputs

def fit(text, nbytes):
    """The longest prefix of text whose UTF-8 encoding is at most nbytes long."""
    data = text.encode("utf-8")
    if len(data) <= nbytes:
        return text
    return data[:nbytes].decode("utf-8", "ignore")  # drops a character cut in half


def read_corpus(path, nbytes):
    with lzma.open(path, "rt", encoding="utf-8") as f:
        text = f.read(nbytes)  # nbytes characters are at least nbytes bytes
    return fit(text, nbytes)


def repeat_to(unit, nbytes):
    return fit(unit * (nbytes // len(unit.encode("utf-8")) + 1), nbytes)


def pathological(nbytes):
    """Extra inputs (docs/design.md §11), each nbytes of UTF-8 (random CJK: the nearest multiple of 3)."""
    rng = random.Random(PATHOLOGICAL_SEED)
    cjk = "".join(chr(rng.randrange(0x4E00, 0xA000)) for _ in range(nbytes // 3))
    rng = random.Random(PATHOLOGICAL_SEED)
    junk = bytes(rng.getrandbits(8) for _ in range(nbytes)).decode("utf-8", "replace")
    return [
        ("patho: 'a' x N", repeat_to("a", nbytes)),
        ("patho: digits", repeat_to("0123456789", nbytes)),
        ("patho: spaces", repeat_to(" ", nbytes)),
        ("patho: newlines", repeat_to("\n", nbytes)),
        ("patho: '!' x N", repeat_to("!", nbytes)),
        ("patho: random CJK", cjk),
        ("patho: random bytes", fit(junk, nbytes)),
    ]


# ---------------------------------------------------------------- machine

def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average():
    try:
        return " ".join("%.2f" % x for x in os.getloadavg())
    except (AttributeError, OSError):
        return "n/a"


def dist_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "?"


# ---------------------------------------------------------------- timing

def timed_runs(methods, runs):
    """methods: list of (key, setup, fn). Round-robin over the methods, `runs` times, so that
    a drift of the machine touches every method alike. Returns {key: [seconds]}."""
    out = {key: [] for key, _, _ in methods}
    for _ in range(runs):
        for key, setup, fn in methods:
            setup()
            gc.collect()
            t0 = time.perf_counter()
            result = fn()
            dt = time.perf_counter() - t0
            del result  # freed outside the timed region
            out[key].append(dt)
    return out


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def guard(label, expected, got, who):
    if got != expected:
        i = first_difference(expected, got)
        lo = max(0, i - 3)
        sys.stderr.write(
            "\nEXACTNESS GUARD FAILED: %s on %s: %d pieces expected, %d got; first difference at "
            "piece %d\n  expected %r\n  got      %r\n"
            % (who, label, len(expected), len(got), i, expected[lo:i + 4], got[lo:i + 4]))
        sys.exit(1)


class Bench:
    def __init__(self, args):
        self.args = args
        self.backends = {}
        for name in ("native", "wasmtime"):
            try:
                self.backends[name] = st_backends.load(name)
            except st_backends.BackendUnavailable as exc:
                log("note: backend %s unavailable (%s); its columns show n/a" % (name, exc))
        if not self.backends:
            sys.exit("no supertok backend loads (neither native nor wasmtime)")
        self.oracle = None

    def pat_str(self, pattern):
        import json
        path = os.path.join(ROOT, "py", "supertok", "vocab", PATTERN_FILES[pattern] + ".json")
        with open(path, encoding="utf-8") as f:
            return json.load(f)["pat_str"]

    def load_oracle(self):
        if self.oracle is None:
            sys.path.insert(0, os.path.join(ROOT, "vectors"))
            import oracle
            self.oracle = oracle
        return self.oracle

    def expected(self, text, pattern, pat, script_aware):
        if not script_aware:
            return regex.findall(pat, text)
        return self.load_oracle().pretokenize(text, pattern, script_aware=True)

    def row(self, label, text, pattern, script_aware):
        pat = self.pat_str(pattern)
        data = text.encode("utf-8")
        flags = 1 if script_aware else 0
        pid = supertok.PATTERNS[pattern]
        expected = self.expected(text, pattern, pat, script_aware)
        methods = [("regex", lambda: None, lambda: regex.findall(pat, text))]
        if script_aware:
            # A second regex peer: the script-specific pattern over the whole text, no chunking.
            # It cuts letters one per piece as script-aware mode does in Han/Kana/Thai chunks,
            # but it is not script-aware output (other scripts get per-letter pieces too).
            spec = self.load_oracle().SCRIPT_SPECIFIC
            methods.append(("regex ss", lambda: None, lambda: regex.findall(spec, text)))
        for name, b in self.backends.items():
            h = b.pretokenizer(pid, flags, None)
            supertok._set_backend(b)
            guard(label, expected, supertok.pretokenize(text, pattern, script_aware), "supertok.pretokenize on " + name)
            n = b.pretokenize_count(h, data)
            if n != len(expected):
                sys.stderr.write("\nEXACTNESS GUARD FAILED: C count on %s for %s is %d, expected %d\n"
                                 % (name, label, n, len(expected)))
                sys.exit(1)
            methods.append(("C " + name, lambda: None, lambda b=b, h=h: b.pretokenize_count(h, data)))
            methods.append(("pre " + name, lambda b=b: supertok._set_backend(b),
                            lambda: supertok.pretokenize(text, pattern, script_aware)))
        times = timed_runs(methods, self.args.runs)
        mbs = {k: sorted(len(data) / 1e6 / t for t in v) for k, v in times.items()}
        return {"label": label, "bytes": len(data), "pieces": len(expected), "mbs": mbs}


def cell(mbs, key, base):
    v = mbs.get(key)
    if not v:
        return "n/a"
    med = statistics.median(v)
    s = "%s (%s–%s)" % (num(med), num(v[0]), num(v[-1]))
    if key != "regex":
        s += " **%.1fx**" % (med / statistics.median(base))
    return s


def num(x):
    return "%.0f" % x if x >= 100 else "%.1f" % x if x >= 10 else "%.2f" % x


COLUMNS = [("regex", "regex MB/s"), ("C native", "C scanner native MB/s (ratio)"),
           ("pre native", "pretokenize native MB/s (ratio)"),
           ("C wasmtime", "C scanner wasmtime MB/s (ratio)"),
           ("pre wasmtime", "pretokenize wasmtime MB/s (ratio)")]


SA_COLUMNS = COLUMNS[:1] + [("regex ss", "regex script-specific pattern MB/s (ratio)")] + COLUMNS[1:]


def print_table(title, rows, columns=COLUMNS):
    print()
    print("### " + title)
    print()
    print("| language | bytes | pieces | " + " | ".join(h for _, h in columns) + " |")
    print("|---|---:|---:|" + "---:|" * len(columns))
    for r in rows:
        cells = [cell(r["mbs"], k, r["mbs"]["regex"]) for k, _ in columns]
        print("| %s | %d | %d | %s |" % (r["label"], r["bytes"], r["pieces"], " | ".join(cells)))
    sys.stdout.flush()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pattern", default="o200k", choices=["gpt2", "cl100k", "o200k", "all"])
    p.add_argument("--mib", type=float, default=1.0, help="MiB of each corpus file to use (default 1)")
    p.add_argument("--runs", type=int, default=5, help="timed runs per cell (default 5)")
    p.add_argument("--patho-bytes", type=int, default=1_000_000,
                   help="size of each pathological input in UTF-8 bytes (default 1000000)")
    p.add_argument("--lang", default=",".join(LANGUAGES),
                   help="comma-separated corpus names (default: %s)" % ",".join(LANGUAGES))
    p.add_argument("--script-aware", action="store_true",
                   help="script-aware table over every language (default: only %s)" % ",".join(SCRIPT_AWARE_DEFAULT))
    p.add_argument("--no-script-aware", action="store_true", help="skip the script-aware table")
    p.add_argument("--no-patho", action="store_true", help="skip the pathological rows")
    p.add_argument("--corpora", default=DEFAULT_CORPORA, help="corpus folder (default ../shared/corpora)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 64 KiB per input, 1 run (overrides --mib, --runs, --patho-bytes)")
    args = p.parse_args(argv)
    if args.quick:
        args.mib, args.runs, args.patho_bytes = 1 / 16, 1, 65536
    if args.runs < 1:
        p.error("--runs must be at least 1")

    corpora = os.path.abspath(args.corpora)
    if not os.path.isdir(corpora):
        log("corpus folder %s is absent: this benchmark needs ../shared/corpora (or --corpora DIR)" % corpora)
        return 2

    patterns = ["gpt2", "cl100k", "o200k"] if args.pattern == "all" else [args.pattern]
    langs = [x.strip() for x in args.lang.split(",") if x.strip()]
    bench = Bench(args)
    started = time.time()

    nbytes = int(args.mib * MIB)
    texts = []
    for lang in langs:
        path = os.path.join(corpora, lang + ".txt.xz")
        if not os.path.isfile(path):
            log("skipping %s: %s is absent" % (lang, path))
            continue
        texts.append((lang, read_corpus(path, nbytes)))
    patho = [] if args.no_patho else pathological(args.patho_bytes)

    versions = ", ".join("%s core %s" % (n, b.version()) for n, b in bench.backends.items())
    rv = dist_version("regex")
    print("## supertok pre-tokenizer benchmark")
    print()
    print("- machine: %s; CPU: %s (%d logical CPUs; single thread used)"
          % (platform.platform(), cpu_model(), os.cpu_count() or 0))
    print("- Python %s (%s); regex %s%s; supertok %s (%s); wasmtime %s"
          % (platform.python_version(), platform.python_implementation(), rv,
             "" if rv == "2024.11.6" else " (NOT the pinned 2024.11.6)", supertok.__version__, versions,
             dist_version("wasmtime") if "wasmtime" in bench.backends else "not installed"))
    print("- load average at start: %s (other work on the machine skews the numbers; wide min–max shows it)"
          % load_average())
    print("- command: `cd %s && %s`" % (os.getcwd(), " ".join(shlex.quote(a) for a in [
        "python", os.path.relpath(os.path.abspath(__file__))] + (sys.argv[1:] if argv is None else argv))))
    print("- MB/s with MB = 1e6 bytes of UTF-8 input; each cell: median (min–max) over %d run%s; "
          "**ratio** = median / regex.findall median; corpus inputs: the first %g MiB of each file"
          % (args.runs, "" if args.runs == 1 else "s", args.mib))
    sys.stdout.flush()

    prev = supertok._set_backend(next(iter(bench.backends.values())))
    try:
        for pattern in patterns:
            rows = []
            for label, text in texts + patho:
                log("[%s] %s ..." % (pattern, label))
                rows.append(bench.row(label, text, pattern, False))
            print_table("pattern %s" % pattern, rows)
            if args.no_script_aware:
                continue
            sa = texts if args.script_aware else [t for t in texts if t[0] in SCRIPT_AWARE_DEFAULT]
            rows = []
            for label, text in sa + patho:
                log("[%s script-aware] %s ..." % (pattern, label))
                rows.append(bench.row(label, text, pattern, True))
            print_table("pattern %s, script-aware (default scripts); ratios to plain regex.findall "
                        "with the base pattern; exactness checked against vectors/oracle.py" % pattern,
                        rows, SA_COLUMNS)
    finally:
        supertok._set_backend(prev)
    print()
    print("total wall time %.0f s; load average at end: %s" % (time.time() - started, load_average()))
    return 0


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, _results.keyed("pretokenize.py", options=("--pattern", "--lang", "--mib"), flags=("--script-aware", "--no-script-aware", "--no-patho"))))
