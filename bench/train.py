#!/usr/bin/env python3
"""BPE training speed: supertok.train against HuggingFace tokenizers, rustbpe and bpeasy; and supertok's
superword training (BoundlessBPE, SuperBPE: both phases) beside HuggingFace's BPE on the same data.

    python bench/train.py                  # the English training file whole and a 10 MB slice,
                                           # vocab 32,768 and 131,072, 1 thread and all cores, 3 rounds
    python bench/train.py --quick          # 10 MB slice, vocab 32,768, 1 round (a few minutes)
    python bench/train.py --sizes 10MB --vocab 32768 --threads 1,all --rounds 3 --tools rustbpe,bpeasy
    python bench/train.py --tools hf,supertok-paper,supertok-boundless,supertok-superbpe   # superwords
    python bench/train.py --quick --threads 1 --tools supertok-paper,supertok-paper-numba,rustbpe,supertok-boundless,supertok-boundless-numba
                                           # the numba backend (its kernels compiled beforehand:
                                           # python -m supertok.core_numba.warm)

Every tool trains on the same text with the same pre-tokenizer (tiktoken's o200k pat_str, from
py/supertok/vocab/o200k_base.json), byte-level, to the same vocab_size V; each measurement is a
fresh subprocess (so the peak resident memory is that tool's alone), and the tools take turns
round by round, the order rotating, so a drift of the shared machine touches all of them alike.
Wall time and CPU time (user + system of every thread: time.process_time() in the worker) of the
training call, split into counting and merging where the tool lets us see the boundary; peak
RSS of the child process (ru_maxrss from os.wait4). Then, on the 10 MB slice, whether the tools
agree merge for merge. bench/README.md says what each column means and how the split is made.

supertok-boundless and supertok-superbpe train superwords (paper mode): phase 1, a second pass over
the same file counting the supermerge candidates, the n-gram split with --ngram-split, and phase 2;
SuperBPE learns --supermerges supermerges (default: a tenth of the vocabulary). Their rows in the
main table time the whole training; a second table splits it by phase (from supertok.train's
progress reports: each phase ends at its record with done=True).
"""
import argparse
import json
import logging
import lzma
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _results import machine  # the machine line of bench/RESULTS.md entries (this folder is sys.path[0])

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def find_corpora():
    """SUPERTOK_CORPORA, else a shared/corpora folder next to the repository (or next to a parent
    folder of it, as for a git worktree kept one level deeper)."""
    if os.environ.get("SUPERTOK_CORPORA"):
        return os.environ["SUPERTOK_CORPORA"]
    up = ROOT
    for _ in range(3):
        up = os.path.dirname(up)
        cand = os.path.join(up, "shared", "corpora")
        if os.path.isdir(cand):
            return cand
    return os.path.join(ROOT, "..", "shared", "corpora")


CORPORA = find_corpora()
TRAIN_FILE = "en_train.txt.xz"
WORK = os.path.join(tempfile.gettempdir(), "supertok-bench-train")
SLICE_BYTES = 10_000_000
TOOLS = ["supertok-paper", "supertok-hf", "hf", "rustbpe", "bpeasy"]
SUPERWORD_TOOLS = ["supertok-boundless", "supertok-superbpe"]
EXTRA_TOOLS = SUPERWORD_TOOLS + ["supertok-%s-%s" % (kind, backend) for backend in ("wasmtime", "numba")
                                 for kind in ("paper", "hf", "boundless", "superbpe")]
# supertok.train's phases, in order (TrainProgress.phase)
PHASES = ["count", "merge", "candidates", "split", "supermerge"]
# bpeasy skips merges whose token would be longer than this many bytes; the other tools have no
# such limit, so it is set far above any token a vocabulary of these sizes makes.
BPEASY_MAX_TOKEN_LENGTH = 1_000_000


def o200k_pattern():
    with open(os.path.join(ROOT, "py", "supertok", "vocab", "o200k_base.json"), encoding="utf-8") as f:
        return json.load(f)["pat_str"]


# ---- the worker: one tool, one training, in its own process --------------------------------------

class Clock:
    """Wall and CPU time since the start of the training call, and the phase boundary."""

    def __init__(self):
        self.rss0 = memory("VmRSS")  # the interpreter and the tool's module, before training
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        self.boundary = None  # (wall, cpu) at the end of counting
        self.exhausted = None  # (wall, cpu) when the input iterator ran dry

    def now(self):
        return time.perf_counter() - self.w0, time.process_time() - self.c0

    def stop(self):
        """Right after the training call returns, before anything reads its result (HF's JSON,
        merge lists) and so adds to the high-water mark."""
        self.end = self.now()
        self.hwm = memory("VmHWM")
        return self.end


def memory(field):
    """This process's own resident memory (bytes) from /proc/self/status: VmHWM is the peak.
    Not ru_maxrss: on Linux a child's ru_maxrss also counts the copy of the driver it was forked
    from before exec, so every child would report at least the driver's size."""
    try:
        with open("/proc/self/status") as f:
            for ln in f:
                if ln.startswith(field + ":"):
                    return int(ln.split()[1]) * 1024
    except OSError:
        pass
    return None


def lines_of(path, clock):
    """The documents as the peers take them: one line each, its '\\n' kept (as HuggingFace reads a
    file). Records when the last one has been taken: for a peer fed from an iterator, that is the
    end of reading and pre-tokenizing, up to the last buffer still in flight."""
    with open(path, encoding="utf-8", newline="") as f:
        yield from f
    clock.exhausted = clock.now()


def gpt2_byte_decoder():
    """HF's byte-level characters back to bytes: bytes 33-126, 161-172 and 174-255 are their own
    code points; the other 68 take 256, 257, ... in byte order (docs/design.md §8)."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    chars, n = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + n)] = b
            n += 1
    return chars


def run_hf(path, vocab, clock, pat, args):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pat), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[], show_progress=False)
    clock.__init__()
    if args.hf_input == "file":
        tok.train([path], trainer=trainer)
    else:
        tok.train_from_iterator(lines_of(path, clock), trainer=trainer)
    wall, cpu = clock.stop()
    clock.boundary = clock.exhausted
    merges = json.loads(tok.to_str())["model"]["merges"]
    dec = gpt2_byte_decoder()
    pairs = []
    for m in merges:
        left, right = m if isinstance(m, list) else m.split(" ")
        pairs.append((bytes(dec[c] for c in left), bytes(dec[c] for c in right)))
    return wall, cpu, {"pairs": pairs, "note": "split: input iterator exhausted" if args.hf_input == "iterator" else ""}


def run_rustbpe(path, vocab, clock, pat, args):
    import rustbpe

    class Phase(logging.Handler):
        # rustbpe logs through Python's logging (pyo3-log): "Processed N sequences total, M unique"
        # ends the counting of pretokens; pair counting, the heap and the merges follow.
        def emit(self, record):
            msg = record.getMessage()
            if msg.startswith("Processed ") and clock.boundary is None:
                clock.boundary = clock.now()
                clock.unique = msg

    root = logging.getLogger()
    root.setLevel(logging.INFO)
    root.addHandler(Phase())
    tok = rustbpe.Tokenizer()
    clock.__init__()
    clock.unique = None
    tok.train_from_iterator(lines_of(path, clock), vocab, pattern=pat)
    wall, cpu = clock.stop()
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])
    return wall, cpu, {"tokens": [t for t, _ in ranks], "note": clock.unique or ""}


def run_bpeasy(path, vocab, clock, pat, args):
    import bpeasy
    clock.__init__()
    ranks = bpeasy.train_bpe(lines_of(path, clock), pat, BPEASY_MAX_TOKEN_LENGTH, vocab)
    wall, cpu = clock.stop()
    clock.boundary = clock.exhausted
    return wall, cpu, {"tokens": [t for t, _ in sorted(ranks.items(), key=lambda kv: kv[1])],
                       "note": "split: input iterator exhausted"}


def phase_of(args, kwargs):
    """(phase, done) of a progress report, whatever shape supertok.train gives it: a TrainProgress
    (an object with .phase and .done), a dict with "phase" (and "done"), a `phase` keyword, or a
    str argument. done is None when the report does not say."""
    if isinstance(kwargs.get("phase"), str):
        return kwargs["phase"], kwargs.get("done")
    for a in args:
        if isinstance(getattr(a, "phase", None), str):
            return a.phase, getattr(a, "done", None)
        if isinstance(a, dict) and isinstance(a.get("phase"), str):
            return a["phase"], a.get("done")
        if isinstance(a, str):
            return a, None
    return None, None


def run_supertok(path, vocab, clock, pat, args, kind, backend):
    os.environ["SUPERTOK_BACKEND"] = backend
    import supertok
    if not hasattr(supertok, "train"):
        raise RuntimeError("not available: this supertok has no train()")
    # Load the backend before the clock starts (for wasmtime: compiling the module), as importing
    # a peer loads its library before its clock starts.
    supertok.backend()
    phases = []  # (phase, time of its first report)
    count_done = []  # time of the report that says counting is done
    ends = {}  # phase -> (wall, cpu) of its record with done=True

    def progress(*a, **kw):
        ph, done = phase_of(a, kw)
        if ph is None:
            return
        at = clock.now()
        if not phases or phases[-1][0] != ph:
            phases.append((ph, at))
        if done and ph.lower().startswith("count") and not count_done:
            count_done.append(at)
        if done:
            ends[ph] = at

    if kind in ("paper", "hf"):
        opts = {"mode": kind}
    else:
        opts = {"mode": "paper", "algorithm": kind, "ngram_split": args.ngram_split}
        if kind == "superbpe":
            opts["supermerges"] = args.supermerges or vocab // 10
    if backend == "numba":
        # The port's kernels load from numba's cache on their first call (compiled beforehand by
        # `python -m supertok.core_numba.warm`): a small training of the same kind first, so the
        # clock times training and not loading, as for the other tools.
        small = os.path.join(WORK, "numba-warm.txt")
        with open(small, "w", encoding="utf-8") as f:
            f.write("the warm-up text, a few words to count and merge; " * 200)
        warm = dict(opts, supermerges=10) if "supermerges" in opts else opts
        supertok.train(small, vocab_size=300, pattern="o200k", threads=args.threads_now, **warm)
    clock.__init__()
    enc = supertok.train(path, vocab_size=vocab, pattern="o200k", threads=args.threads_now, progress=progress,
                         **opts)
    wall, cpu = clock.stop()
    # Counting ends at the report that says so (done=True in the "count" phase), else where the
    # first phase not named for counting begins (a little late: its first report may come after
    # some merging).
    if count_done:
        clock.boundary = count_done[0]
    else:
        for ph, at in phases:
            if not ph.lower().startswith("count"):
                clock.boundary = at
                break
    base = 256
    table = [bytes([i]) for i in range(base)]
    pairs, counts = [], []
    for left, right, count in enc.merges:
        pairs.append((table[left], table[right]))
        table.append(table[left] + table[right])
        counts.append(count)
    note = "phases: " + " > ".join(ph for ph, _ in phases) if phases else "no phase reported"
    # the time each phase took: from the end of the one before (the start of training for the first)
    per_phase, prev = {}, (0.0, 0.0)
    for ph in PHASES:
        if ph in ends:
            per_phase[ph] = (ends[ph][0] - prev[0], ends[ph][1] - prev[1])
            prev = ends[ph]
    out = {"pairs": pairs, "counts": counts, "note": note, "phases": per_phase}
    if kind not in ("paper", "hf"):
        out["supermerges"] = len(enc.supermerges)
        note += "; %s: %d regular merges + %d supermerges" % (kind, len(enc.merges), len(enc.supermerges))
        out["note"] = note
    return wall, cpu, out


def worker(args):
    pat = o200k_pattern()
    clock = Clock()
    clock.hwm = None
    tool = args.worker
    args.threads_now = args.worker_threads
    if tool == "hf":
        wall, cpu, out = run_hf(args.input, args.worker_vocab, clock, pat, args)
    elif tool == "rustbpe":
        wall, cpu, out = run_rustbpe(args.input, args.worker_vocab, clock, pat, args)
    elif tool == "bpeasy":
        wall, cpu, out = run_bpeasy(args.input, args.worker_vocab, clock, pat, args)
    elif tool.startswith("supertok-"):
        parts = tool.split("-")
        wall, cpu, out = run_supertok(args.input, args.worker_vocab, clock, pat, args, parts[1],
                                      parts[2] if len(parts) > 2 else "native")
    else:
        raise SystemExit("unknown tool %r" % tool)
    tokens = out.get("tokens")
    if tokens is None:
        tokens = [bytes([i]) for i in range(256)] + [a + b for a, b in out["pairs"]]
    res = {"wall": wall, "cpu": cpu, "merges": len(tokens) - 256 if "pairs" not in out else len(out["pairs"]),
           "note": out.get("note", ""), "hwm": clock.hwm, "rss0": clock.rss0}
    if "phases" in out:
        res["phases"] = out["phases"]
    if "supermerges" in out:
        res["supermerges"] = out["supermerges"]
    if clock.boundary is not None:
        res["count_wall"], res["count_cpu"] = clock.boundary
    if args.dump:
        with open(args.dump, "w", encoding="ascii") as f:
            json.dump({"tokens": [t.hex() for t in tokens],
                       "pairs": [[a.hex(), b.hex()] for a, b in out["pairs"]] if "pairs" in out else None,
                       "counts": out.get("counts")}, f)
    print("RESULT " + json.dumps(res))


# ---- the driver -----------------------------------------------------------------------------------

def prepare_inputs(sizes):
    """Decompress the training file once into a temp folder (outside the repository) and cut the
    10 MB slice at a line end. Reused across runs while the source file is unchanged."""
    src = os.path.join(CORPORA, TRAIN_FILE)
    if not os.path.exists(src):
        sys.exit("bench/train.py: %s is absent (set SUPERTOK_CORPORA or put shared/corpora next to "
                 "the repository)" % src)
    os.makedirs(WORK, exist_ok=True)
    whole = os.path.join(WORK, "en_train.txt")
    stamp = os.path.join(WORK, "en_train.stamp")
    key = "%d %d" % (os.path.getsize(src), int(os.path.getmtime(src)))
    if not (os.path.exists(whole) and os.path.exists(stamp) and open(stamp).read() == key):
        print("decompressing %s to %s ..." % (src, whole), file=sys.stderr)
        with lzma.open(src, "rb") as fi, open(whole + ".part", "wb") as fo:
            while True:
                block = fi.read(1 << 24)
                if not block:
                    break
                fo.write(block)
        os.replace(whole + ".part", whole)
        with open(stamp, "w") as f:
            f.write(key)
    out = {}
    if "whole" in sizes:
        out["whole"] = whole
    if "10MB" in sizes:
        path = os.path.join(WORK, "en_train.10MB.txt")
        with open(whole, "rb") as f:
            head = f.read(SLICE_BYTES)
        head = head[: head.rindex(b"\n") + 1]  # cut at a line end: whole documents only
        if not (os.path.exists(path) and os.path.getsize(path) == len(head)):
            with open(path, "wb") as f:
                f.write(head)
        out["10MB"] = path
    return out


def run_one(tool, path, vocab, threads, hf_input, dump=None, timeout=None, extra=()):
    env = dict(os.environ)
    env["RAYON_NUM_THREADS"] = str(threads)  # the Rust peers' thread pool (rayon)
    env["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tool, "--input", path,
           "--worker-vocab", str(vocab), "--worker-threads", str(threads), "--hf-input", hf_input] + list(extra)
    if dump:
        cmd += ["--dump", dump]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG if deadline else 0)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                p.returncode = -9
                return {"error": "timeout after %d s" % timeout}
            time.sleep(0.2)
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    lines = [ln for ln in stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        last = (stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
        if "not available" in last:
            return {"error": "not available"}
        return {"error": last[:160]}
    res = json.loads(lines[-1][len("RESULT "):])
    # The worker's own VmHWM; ru_maxrss only where /proc is absent (it can include the driver's
    # peak, inherited through fork: see memory()).
    res["rss"] = res.get("hwm") or ru.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return res


def available(tool):
    if tool.startswith("supertok-"):
        backend = tool.split("-")[2] if tool.count("-") == 2 else "native"
        code = "import os; os.environ['SUPERTOK_BACKEND'] = %r; import supertok; supertok.train" % backend
    else:
        code = "import " + {"hf": "tokenizers", "rustbpe": "rustbpe", "bpeasy": "bpeasy"}[tool]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True)
    return r.returncode == 0


def version_of(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        return "missing"


def load():
    return " ".join("%.2f" % x for x in os.getloadavg())


def spread(xs, fmt="%.2f"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    if len(xs) == 1:
        return fmt % xs[0]
    return (fmt + " (" + fmt + "–" + fmt + ")") % (statistics.median(xs), min(xs), max(xs))


def row_cells(results):
    ok = [r for r in results if "error" not in r]
    if not ok:
        return None, results[0]["error"] if results else "not run"
    split = all("count_wall" in r for r in ok)

    def get(k):
        return [r[k] for r in ok]

    cells = {
        "wall": spread(get("wall")),
        "cpu": spread(get("cpu")),
        "count": ("%s / %s" % (spread(get("count_wall")), spread(get("count_cpu")))) if split else "n/a",
        "merge": ("%s / %s" % (spread([r["wall"] - r["count_wall"] for r in ok]),
                               spread([r["cpu"] - r["count_cpu"] for r in ok]))) if split else "n/a",
        "rss": spread([r["rss"] / 1e6 for r in ok], "%.0f") + (
            " [%.0f]" % statistics.median([r["rss0"] / 1e6 for r in ok]) if all(r.get("rss0") for r in ok) else ""),
        "merges": "{:,}".format(ok[0]["merges"]) + (" + {:,} super".format(ok[0]["supermerges"])
                                                    if "supermerges" in ok[0] else ""),
        "cpu_med": statistics.median(get("cpu")),
    }
    errors = [r["error"] for r in results if "error" in r]
    return cells, ("%d failed: %s" % (len(errors), errors[0]) if errors else "")


# ---- agreement ------------------------------------------------------------------------------------

def word_counts(path, pat):
    import regex
    from collections import Counter
    rx = regex.compile(pat)
    c = Counter()
    with open(path, encoding="utf-8", newline="") as f:
        for line in f:
            c.update(rx.findall(line))
    return {w.encode("utf-8"): n for w, n in c.items()}


def bpe_split(word, ranks):
    """word (bytes) cut by the merges in `ranks` ((left, right) -> rank) applied in rank order:
    repeatedly the adjacent pair of lowest rank, leftmost first. Merges are ordered, and a merge
    only makes pairs of higher rank, so this is the same as replaying the merges one by one."""
    parts = [word[i:i + 1] for i in range(len(word))]
    while len(parts) > 1:
        best, at = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get((parts[i], parts[i + 1]))
            if r is not None and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts


def pairs_of(tokens):
    """The (left, right) of each merged token of a tokens-in-rank-order list (what rustbpe and
    bpeasy return): the token's bytes cut by the merges before it."""
    ranks, pairs = {}, []
    for r, t in enumerate(tokens[256:]):
        parts = bpe_split(t, ranks)
        if len(parts) != 2:
            return pairs  # not reconstructible from here on: compare no further
        ranks[(parts[0], parts[1])] = r
        pairs.append((parts[0], parts[1]))
    return pairs


def count_at(words, prefix, candidates, overlapping):
    """The counts of the candidate pairs after the merges `prefix`: tells a tie (equal counts, so
    the tools only broke it differently) from a real disagreement."""
    ranks = {p: r for r, p in enumerate(prefix)}
    want = {c: 0 for c in candidates}
    for w, n in words.items():
        parts = bpe_split(w, ranks)
        i = 0
        while i < len(parts) - 1:
            p = (parts[i], parts[i + 1])
            if p in want:
                want[p] += n
                if not overlapping and parts[i] == parts[i + 1]:
                    i += 1  # a run: (x, x) counts floor(k/2), as paper mode counts it
            i += 1
    return want


def compare(name_a, a, name_b, b, words_for, overlapping):
    """One line: where two tools' merge lists first differ, and whether that is a tie."""
    pa = [tuple(bytes.fromhex(x) for x in p) for p in a["pairs"]] if a["pairs"] else pairs_of([bytes.fromhex(t) for t in a["tokens"]])
    pb = [tuple(bytes.fromhex(x) for x in p) for p in b["pairs"]] if b["pairs"] else pairs_of([bytes.fromhex(t) for t in b["tokens"]])
    n = min(len(pa), len(pb))
    k = next((i for i in range(n) if pa[i] != pb[i]), n)
    if k == n:
        same = "identical" if len(pa) == len(pb) else "same first %d merges (%d vs %d made)" % (n, len(pa), len(pb))
        return "- %s vs %s: %s, merge for merge" % (name_a, name_b, same)
    line = "- %s vs %s: agree on the first %s merges; merge %d: %s makes %r + %r, %s makes %r + %r" % (
        name_a, name_b, "{:,}".format(k), k + 1, name_a, pa[k][0], pa[k][1], name_b, pb[k][0], pb[k][1])
    counts = count_at(words_for(), pa[:k], [pa[k], pb[k]], overlapping)
    ca, cb = counts[pa[k]], counts[pb[k]]
    line += "; %s counts then %s vs %s (%s)" % (
        "overlapping" if overlapping else "paper (runs non-overlapping)", "{:,}".format(ca), "{:,}".format(cb),
        "a tie, broken differently" if ca == cb else "NOT a tie")
    return line


def agreement(dumps, path, pat):
    cache = {}

    def words():
        if "w" not in cache:
            cache["w"] = word_counts(path, pat)
        return cache["w"]

    have = {t: json.load(open(f)) for t, f in dumps.items() if os.path.exists(f)}
    out = []
    for a, b, overlapping in [("rustbpe", "bpeasy", True), ("supertok-hf", "hf", True), ("hf", "rustbpe", True),
                              ("supertok-paper", "rustbpe", False)]:
        if a in have and b in have:
            out.append(compare(a, have[a], b, have[b], words, overlapping))
        else:
            out.append("- %s vs %s: not compared (%s missing)" % (a, b, " and ".join(t for t in (a, b) if t not in have)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="whole,10MB", help="inputs: whole (the 106.5 MiB file) and/or 10MB")
    ap.add_argument("--vocab", default="32768,131072", help="vocab sizes, comma-separated")
    ap.add_argument("--threads", default="1,all", help="thread counts, comma-separated; all = every core")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS),
                    help="comma-separated, from %s" % ", ".join(TOOLS + EXTRA_TOOLS))
    ap.add_argument("--quick", action="store_true", help="10 MB slice, vocab 32,768, 1 round (threads as given)")
    ap.add_argument("--no-check", action="store_true", help="skip the merge agreement check")
    ap.add_argument("--hf-input", choices=["iterator", "file"], default="iterator",
                    help="HF reads the lines from the same Python iterator as rustbpe and bpeasy "
                         "(default), or the file itself via Tokenizer.train([path])")
    ap.add_argument("--timeout", type=float, default=None, help="seconds before a measurement is killed")
    ap.add_argument("--supermerges", type=int, default=None,
                    help="supertok-superbpe's number of supermerges (default: a tenth of the vocab size)")
    ap.add_argument("--ngram-split", action="store_true",
                    help="supertok-boundless and supertok-superbpe split their candidates into n-grams first")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--worker-vocab", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    if args.quick:
        args.sizes, args.vocab, args.rounds = "10MB", "32768", 1
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    for s in sizes:
        if s not in ("whole", "10MB"):
            sys.exit("--sizes: %r is neither whole nor 10MB" % s)
    vocabs = [int(v) for v in args.vocab.split(",")]
    ncpu = os.cpu_count() or 1
    threads = []
    for t in args.threads.split(","):
        n = ncpu if t.strip() == "all" else int(t)
        if n not in threads:
            threads.append(n)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for t in tools:
        if t not in TOOLS + EXTRA_TOOLS:
            sys.exit("--tools: unknown tool %r (known: %s)" % (t, ", ".join(TOOLS + EXTRA_TOOLS)))
    present = [t for t in tools if available(t)]

    inputs = prepare_inputs(sizes)
    pat = o200k_pattern()
    print("# Training benchmark: byte-level BPE (phase 1%s), o200k pattern\n" % (
        " and superwords" if any(t in SUPERWORD_TOOLS or t.startswith(tuple(SUPERWORD_TOOLS)) for t in tools) else ""))
    print("command: `python bench/train.py%s`  " % "".join(" " + a for a in sys.argv[1:]))
    print("machine: %s; load average %s at the start  " % (machine(), load()))
    print("versions: supertok %s, tokenizers %s, rustbpe %s, bpeasy %s  " % (
        version_of("supertok"), version_of("tokenizers"), version_of("rustbpe"), version_of("bpeasy")))
    print("tools: %s%s  " % (", ".join(present) or "none",
                             "; not available: " + ", ".join(t for t in tools if t not in present)
                             if len(present) < len(tools) else ""))
    for name, path in inputs.items():
        with open(path, "rb") as f:
            nlines = sum(buf.count(b"\n") for buf in iter(lambda: f.read(1 << 24), b""))
        what = TRAIN_FILE + (" whole" if name == "whole" else ", its first 10 MB cut at a line end")
        print("input %s: %s, %s bytes, %s lines (one document each, its newline kept)  " % (
            name, what, "{:,}".format(os.path.getsize(path)), "{:,}".format(nlines)))
    print("cells: median (min–max) over %d round%s, seconds; count and merge are wall / CPU; "
          "CPU = user + system of every thread; peak RSS of the tool's own process in MB (10^6 bytes), "
          "[its RSS just before training: interpreter and imports]"
          % (args.rounds, "" if args.rounds == 1 else "s"))
    sys.stdout.flush()

    rows, notes, dumps_by_vocab = [], {}, {}
    for size in sizes:
        for vocab in vocabs:
            for nthreads in threads:
                results = {t: [] for t in tools}
                for rnd in range(args.rounds):
                    order = present[rnd % len(present):] + present[:rnd % len(present)] if present else []
                    for tool in order:
                        dump = None
                        if size == "10MB" and rnd == 0 and nthreads == threads[0] and not args.no_check:
                            dump = os.path.join(WORK, "merges.%s.%d.json" % (tool, vocab))
                            if os.path.exists(dump):
                                os.remove(dump)
                            dumps_by_vocab.setdefault(vocab, {})[tool] = dump
                        print("  %s V=%d threads=%d round %d: %s ..." % (size, vocab, nthreads, rnd + 1, tool),
                              file=sys.stderr, end="", flush=True)
                        extra = []
                        if args.supermerges is not None:
                            extra += ["--supermerges", str(args.supermerges)]
                        if args.ngram_split:
                            extra.append("--ngram-split")
                        r = run_one(tool, inputs[size], vocab, nthreads, args.hf_input, dump, args.timeout, extra)
                        print(" %s" % ("error: " + r["error"] if "error" in r else "%.1f s wall, %.1f s CPU"
                                       % (r["wall"], r["cpu"])), file=sys.stderr, flush=True)
                        results[tool].append(r)
                        if r.get("note"):
                            notes.setdefault(tool, r["note"])
                for t in tools:
                    rows.append((size, vocab, nthreads, t, results[t] if t in present else [{"error": "not available"}]))

    print("\n| input | vocab | threads | tool | wall s | CPU s | CPU ÷ rustbpe | CPU ÷ hf | count wall / CPU | "
          "merge wall / CPU | peak RSS MB [before] | merges |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    refs = {"rustbpe": {}, "hf": {}}  # the CPU medians the ratios divide by, per (input, V, threads)
    for size, vocab, nthreads, tool, res in rows:
        cells, _ = row_cells(res)
        if tool in refs and cells:
            refs[tool][(size, vocab, nthreads)] = cells["cpu_med"]
    failures = []
    for size, vocab, nthreads, tool, res in rows:
        cells, err = row_cells(res)
        th = "%d" % nthreads + (" (all)" if nthreads == ncpu and ncpu > 1 else "")
        if cells is None:
            print("| %s | %s | %s | %s | %s | | | | | | | |" % (size, "{:,}".format(vocab), th, tool, err))
            continue
        ratios = []
        for ref in ("rustbpe", "hf"):
            base = refs[ref].get((size, vocab, nthreads))
            ratios.append("%.2fx" % (cells["cpu_med"] / base) if base else "n/a")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            size, "{:,}".format(vocab), th, tool, cells["wall"], cells["cpu"], ratios[0], ratios[1],
            cells["count"], cells["merge"], cells["rss"], cells["merges"]))
        if err:
            failures.append("- %s, V=%d, %s threads, %s: %s" % (size, vocab, th, tool, err))
    if failures:
        print("\nsome rounds failed (their rows are of the rounds that ran):")
        print("\n".join(failures))
    phase_rows = [(size, vocab, nthreads, tool, res) for size, vocab, nthreads, tool, res in rows
                  if any("phases" in r and len(r["phases"]) > 2 for r in res if "error" not in r)]
    if phase_rows:
        print("\n### Superword training by phase\n")
        print("wall / CPU seconds, median (min–max); each phase from the end of the one before; split only with "
              "--ngram-split%s\n" % (" (on)" if args.ngram_split else " (off here)"))
        print("| input | vocab | threads | tool | " + " | ".join(PHASES) + " | total CPU ÷ hf CPU |")
        print("|---|---:|---:|---|" + "---:|" * (len(PHASES) + 1))
        for size, vocab, nthreads, tool, res in phase_rows:
            ok = [r for r in res if "error" not in r and "phases" in r]
            cells = []
            for ph in PHASES:
                got = [r["phases"][ph] for r in ok if ph in r["phases"]]
                cells.append("%s / %s" % (spread([w for w, _ in got]), spread([c for _, c in got])) if got else "–")
            base = refs["hf"].get((size, vocab, nthreads))
            ratio = "%.2fx" % (statistics.median([r["cpu"] for r in ok]) / base) if base and ok else "n/a"
            print("| %s | %s | %d | %s | %s | %s |" % (size, "{:,}".format(vocab), nthreads, tool, " | ".join(cells),
                                                       ratio))
    print("\nload average %s at the end" % load())
    if notes:
        print("\nwhat each tool reported (first run):")
        for t, n in notes.items():
            print("- %s: %s" % (t, n))

    if dumps_by_vocab:
        print("\n### Do the tools agree? (10 MB slice)\n")
        for vocab, dumps in dumps_by_vocab.items():
            print("vocab %s:" % "{:,}".format(vocab))
            for line in agreement(dumps, inputs["10MB"], pat):
                print(line)
    return 0


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, _results.keyed("train.py", options=("--sizes", "--vocab", "--threads", "--tools", "--supermerges", "--hf-input"), flags=("--ngram-split",))))
