"""Counting at scale: supertok.count_pretokens in one process (one thread, every core) against
supertok.dask on a LocalCluster of 1 and of 2 worker processes, on one large text file made by
repeating the shared corpora; each run in a fresh process, so its peak memory is its own.
--peers: the same file counted by supertok beside HuggingFace tokenizers and rustbpe (each trained
to a vocabulary of the byte alphabet plus a handful of merges, the nearest those peers come to
counting alone). --sweep: a vocabulary sweep, supertok.train(vocab_size=[16384, 32768, 65536]),
against three separate supertok.train runs of the same sizes on the English training file.
--extend: a model of half the vocabulary extended to the whole (SuperBPE's Stage 2, min_count 5 and
1) beside plain BPE at the whole, on the English training file: time, memory, and the tokens a
held-out English sample takes.

    python bench/train_scale.py [--mib 1024 | --size 1GiB] [--rounds 3] [--corpora DIR] [--quick]
    python bench/train_scale.py --peers [--size 1GiB] [--rounds 3]
    python bench/train_scale.py --sweep [--algorithms bpe,boundless] [--sweep-sizes 16384,32768,65536]
    python bench/train_scale.py --extend [--sweep-sizes 32768]

Prints one table (wall time median with min and max over interleaved rounds, CPU time, MB/s, peak
resident memory, and whether the outputs agree) into bench/RESULTS.md (bench/_results.py), one
entry per mode and size. --quick: 32 MiB (--sweep: a 10 MB slice, sizes 4096,8192,16384), one
round, no entry written.
"""
import argparse
import json
import lzma
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import _results  # noqa: E402

DEFAULT_CORPORA = os.path.join(ROOT, "..", "shared", "corpora")
LANGS = ["en", "de", "ru", "el", "ar", "he", "hi", "zh", "ja", "ko", "th", "code"]
# --peers: the peers train to the byte alphabet plus this many merges, so the merge loop is negligible
PEER_MERGES = 8

# one run, in a child process: the counts' digest, times and this process's peak memory
CHILD = r"""
import hashlib, json, logging, os, sys, time
sys.path.insert(0, os.environ["SUPERTOK_PY"])
path, how = sys.argv[1], sys.argv[2]
extra = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
out = {}
if how in ("hf", "rustbpe"):
    with open(os.path.join(os.environ["SUPERTOK_PY"], "supertok", "vocab", "o200k_base.json"), encoding="utf-8") as f:
        pat = json.load(f)["pat_str"]
if how == "hf":
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pat), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=extra["vocab"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[], show_progress=False)
    t0, c0 = time.perf_counter(), time.process_time()
    tok.train([path], trainer=trainer)  # HF's own reader: lines, '\n' kept, fed to rayon
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out["merges"] = len(json.loads(tok.to_str())["model"]["merges"])
elif how == "rustbpe":
    import rustbpe
    seen = {}
    class Unique(logging.Handler):
        def emit(self, record):  # "Processed N sequences total, M unique": the end of its counting
            msg = record.getMessage()
            if msg.startswith("Processed ") and "at" not in seen:
                seen["at"] = (time.perf_counter() - t0, time.process_time() - c0)
                seen["msg"] = msg
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    root.addHandler(Unique())
    tok = rustbpe.Tokenizer()
    def lines():
        with open(path, encoding="utf-8", newline="") as f:
            yield from f
    t0, c0 = time.perf_counter(), time.process_time()
    tok.train_from_iterator(lines(), extra["vocab"], pattern=pat)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out["merges"] = len(tok.get_mergeable_ranks()) - 256
    if "msg" in seen:
        parts = seen["msg"].replace(",", "").split()
        out["documents"], out["distinct"] = int(parts[1]), int(parts[4])
        out["count_wall"], out["count_cpu"] = seen["at"]
elif how == "st-train":
    import supertok
    supertok.backend()
    t0, c0 = time.perf_counter(), time.process_time()
    enc = supertok.train(path, vocab_size=extra["vocab"], pattern="o200k", threads=None)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out["merges"] = len(enc.merges)
elif how in ("sweep", "separate"):
    import warnings
    import supertok
    supertok.backend()
    sizes, opts = extra["sizes"], extra["opts"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a size past what the text gives warns alike both ways
        t0, c0 = time.perf_counter(), time.process_time()
        if how == "sweep":
            encs = supertok.train(path, vocab_size=sizes, **opts)
        else:
            encs = [supertok.train(path, vocab_size=v, **opts) for v in sizes]
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out["models"] = [hashlib.sha256(e._model_data if isinstance(e._model_data, bytes) else e._model_data.encode()).hexdigest()
                     for e in encs]
    out["merges"] = [len(e.merges) + len(getattr(e, "supermerges", None) or []) for e in encs]
elif how in ("extend", "bpe-full"):
    import warnings
    import supertok
    supertok.backend()
    base = supertok.load_model(extra["base"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        if how == "extend":
            enc = supertok.train(path, vocab_size=extra["vocab"], extend=base, min_count=extra["min_count"], threads=None)
        else:
            enc = supertok.train(path, vocab_size=extra["vocab"], pattern="o200k", threads=None)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out["merges"] = len(enc.merges)
    with open(extra["sample"], encoding="utf-8") as f:
        ids = enc.encode(f.read())
    out["tokens"] = len(ids)
    out["multiword"] = sum(1 for i in range(base.n_vocab, enc.n_vocab)
                           if len(enc.decode_single_token_bytes(i).strip().split(b" ")) > 1)
elif how.startswith("dask-"):
    import distributed, supertok, supertok.dask
    n = int(how[5:])
    with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0") as cl, \
            distributed.Client(cl) as client:
        t0, c0 = time.perf_counter(), time.process_time()  # the cluster's start is not counting
        counts = supertok.dask.count_pretokens([path], client=client)  # about two shards a worker
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
else:
    import supertok
    supertok.backend()
    t0, c0 = time.perf_counter(), time.process_time()
    counts = supertok.count_pretokens(path, threads=None if how == "all" else 1)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
if how in ("one", "all") or how.startswith("dask-"):
    out.update(digest=hashlib.sha256(counts.to_bytes()).hexdigest(), documents=counts.documents,
               distinct=counts.distinct, pattern=counts.pattern)
peak = None
with open("/proc/self/status") as f:
    for ln in f:
        if ln.startswith("VmHWM:"):
            peak = int(ln.split()[1]) * 1024
out.update(wall=wall, cpu=cpu, peak=peak)
print(json.dumps(out))
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


def make_english(path, mib, corpora):
    """The first mib MiB of the English training file (en_train.txt.xz, 106.5 MiB: all of it when
    mib is larger), cut at a line end."""
    src = os.path.join(corpora, "en_train.txt.xz")
    if not os.path.exists(src):
        raise SystemExit("train_scale.py: no %s" % src)
    want = mib << 20
    with lzma.open(src, "rb") as fi, open(path, "wb") as fo:
        n = 0
        while n < want:
            block = fi.read(min(1 << 24, want - n))
            if not block:
                break
            fo.write(block)
            n += len(block)
        if n >= want:  # cut: the slice ends on a line end
            fo.flush()
            with open(path, "rb+") as f:
                f.seek(max(0, n - (1 << 20)))
                tail = f.read()
                n -= len(tail) - (tail.rfind(b"\n") + 1)
                f.truncate(n)
    return n


def run(path, how, extra=None):
    env = dict(os.environ, SUPERTOK_PY=os.path.join(ROOT, "py"))
    env.pop("RAYON_NUM_THREADS", None)  # the Rust peers' pool: every core, as supertok's threads=None
    env["TOKENIZERS_PARALLELISM"] = "true"
    cmd = [sys.executable, "-c", CHILD, path, how] + ([json.dumps(extra)] if extra is not None else [])
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        raise SystemExit("train_scale.py: the %s run failed:\n%s" % (how, p.stderr[-2000:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def spread(xs, fmt="%.2f"):
    """median [min, max]"""
    return (fmt + " [" + fmt + ", " + fmt + "]") % (statistics.median(xs), min(xs), max(xs))


def parse_size(s):
    """MiB from "64", "64MiB", "64M", "1GiB", "1G"."""
    m = re.fullmatch(r"\s*(\d+)\s*([MmGg]?)(?:i?[Bb])?\s*", s)
    if not m:
        raise argparse.ArgumentTypeError("a size such as 64MiB or 1GiB: %r" % s)
    return int(m.group(1)) << (10 if m.group(2).lower() == "g" else 0)


def machine_note(start_load):
    return ("The machine (%d cores) was shared with other agents' work while this ran (load average %s at the "
            "start, %s at the end): read the CPU columns and the ratios, not the absolute walls."
            % (os.cpu_count(), " ".join("%.2f" % x for x in start_load),
               " ".join("%.2f" % x for x in os.getloadavg())))


def main_scale(args, mib):
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


def version(dist):
    try:
        from importlib.metadata import version as v
        return v(dist)
    except Exception:
        return "?"


def main_peers(args, mib, start_load):
    vocab = 256 + PEER_MERGES
    configs = [
        ("all", "supertok.count_pretokens(path, threads=None)", None),
        ("st-train", "supertok.train(path, vocab_size=%d, threads=None)" % vocab, {"vocab": vocab}),
        ("hf", "HuggingFace tokenizers %s: Tokenizer(BPE()).train([path]), vocab_size=%d" % (version("tokenizers"), vocab),
         {"vocab": vocab}),
        ("rustbpe", "rustbpe %s: Tokenizer().train_from_iterator(lines, %d, pattern=o200k)" % (version("rustbpe"), vocab),
         {"vocab": vocab}),
    ]
    if args.tools:
        keep = args.tools.split(",")
        configs = [c for c in configs if c[0] in keep]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scale.txt")
        size = make_text(path, mib, args.corpora)
        print("train_scale.py: %d MiB of text in %s" % (size >> 20, path), file=sys.stderr)
        runs = {how: [] for how, _, _ in configs}
        for k in range(args.rounds):  # interleaved, the order rotating round by round
            order = configs[k % len(configs):] + configs[:k % len(configs)]
            for how, label, extra in order:
                r = run(path, how, extra)
                runs[how].append(r)
                print("train_scale.py: round %d, %s: %.1f s wall, %.1f s CPU, peak %.0f MiB" % (
                    k + 1, how, r["wall"], r["cpu"], (r["peak"] or 0) / (1 << 20)), file=sys.stderr)
    ref = runs.get("all", [None])[0]
    print("Counting the pretokens of %d MiB of text (%d bytes: the shared corpora's %d language files, repeated, "
          "one document a line) with every core (%d), supertok beside its peers; o200k's pattern everywhere "
          "(supertok's \"o200k\"; the peers get tiktoken's o200k pat_str from py/supertok/vocab/o200k_base.json). "
          "HuggingFace and rustbpe cannot count alone, so they train to %d tokens (the 256 bytes + %d merges: "
          "their counting, then pair counting over the distinct pretokens and %d merges, which are a small part); "
          "supertok.train to the same size is the row to set beside them (its default paper mode starts from 243 "
          "byte tokens, so it makes 21 merges at that size). HuggingFace: pre-tokenizer "
          "Sequence([Split(Regex(o200k), \"isolated\"), ByteLevel(add_prefix_space=False, use_regex=False)]), "
          "BpeTrainer(vocab_size=%d, initial_alphabet=ByteLevel.alphabet(), special_tokens=[]), trained from the "
          "file with train([path]) (its Rust reader: one sequence a line, rayon's pool of every core); rustbpe: "
          "fed the file's lines ('\\n' kept) from a Python generator (its buffer of 8,192, then rayon); its "
          "counting ends at its log line \"Processed N sequences total, M unique\". Each run is a fresh process; "
          "%d round(s), each running every tool once, the order rotating; wall and CPU (time.process_time(): every "
          "thread of the process) of the call alone, median [min, max]; MB/s = 10^6 bytes per second of median "
          "wall; peak = the process's VmHWM (largest of the rounds), the interpreter and the library included."
          % (size >> 20, size, len(LANGS), os.cpu_count(), vocab, PEER_MERGES, PEER_MERGES, vocab, args.rounds))
    print("")
    print(machine_note(start_load))
    print("")
    print("| tool | call | wall s | CPU s | MB/s (wall) | MB/s (CPU) | CPU ÷ supertok count | peak MiB | distinct pretokens | merges |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = statistics.median(r["cpu"] for r in runs["all"]) if "all" in runs else None
    for how, label, _ in configs:
        rs = runs[how]
        walls, cpus = [r["wall"] for r in rs], [r["cpu"] for r in rs]
        distinct = sorted({r.get("distinct") for r in rs if r.get("distinct") is not None})
        merges = sorted({r.get("merges") for r in rs if r.get("merges") is not None})
        name = {"all": "supertok count", "st-train": "supertok train", "hf": "HuggingFace", "rustbpe": "rustbpe"}[how]
        print("| %s | `%s` | %s | %s | %.1f | %.1f | %s | %.0f | %s | %s |" % (
            name, label, spread(walls), spread(cpus), size / statistics.median(walls) / 1e6,
            size / statistics.median(cpus) / 1e6,
            "%.2fx" % (statistics.median(cpus) / base) if base else "n/a",
            max(r["peak"] or 0 for r in rs) / (1 << 20),
            " / ".join("{:,}".format(d) for d in distinct) if distinct else "not exposed",
            " / ".join(str(m) for m in merges) if merges else "n/a"))
    print("")
    if ref is not None:
        print("supertok: %s pattern, %s documents, %s distinct pretokens; its counts identical across rounds: %s."
              % (ref["pattern"], "{:,}".format(ref["documents"]), "{:,}".format(ref["distinct"]),
                 "yes" if all(r["digest"] == ref["digest"] for r in runs["all"]) else "NO"))
    if "rustbpe" in runs and runs["rustbpe"][0].get("count_wall") is not None:
        rs = runs["rustbpe"]
        print("rustbpe's counting alone (to its \"Processed\" log line): wall %s s, CPU %s s; %s sequences, "
              "%s unique." % (spread([r["count_wall"] for r in rs]), spread([r["count_cpu"] for r in rs]),
                              "{:,}".format(rs[0]["documents"]), "{:,}".format(rs[0]["distinct"])))
    if ref is not None and "rustbpe" in runs and runs["rustbpe"][0].get("distinct") is not None:
        d = runs["rustbpe"][0]["distinct"]
        print("Distinct pretokens: supertok %s, rustbpe %s (%s)." % (
            "{:,}".format(ref["distinct"]), "{:,}".format(d), "the same" if d == ref["distinct"] else "DIFFERENT"))
    return 0


def main_sweep(args, start_load):
    sizes = [int(v) for v in args.sweep_sizes.split(",")] if args.sweep_sizes else (
        [4096, 8192, 16384] if args.quick else [16384, 32768, 65536])
    mib = args.mib or (10 if args.quick else 1024)
    algos = args.algorithms.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "en.txt")
        size = make_english(path, mib, args.corpora)
        print("train_scale.py: %.1f MiB of English in %s" % (size / (1 << 20), path), file=sys.stderr)
        configs = [(a, how) for a in algos for how in ("sweep", "separate")]
        runs = {c: [] for c in configs}
        for k in range(args.rounds):
            order = configs[k % len(configs):] + configs[:k % len(configs)]
            for alg, how in order:
                r = run(path, how, {"sizes": sizes, "opts": {"algorithm": alg, "pattern": "o200k", "threads": None}})
                runs[(alg, how)].append(r)
                print("train_scale.py: round %d, %s %s: %.1f s wall, %.1f s CPU" % (k + 1, alg, how, r["wall"], r["cpu"]),
                      file=sys.stderr)
    # the check: every model of every run, sweep or separate, byte for byte the same per size
    for alg in algos:
        ref = runs[(alg, "separate")][0]["models"]
        for how in ("sweep", "separate"):
            for r in runs[(alg, how)]:
                assert r["models"] == ref, "%s %s: the models differ from the separate runs' (%s vs %s)" % (
                    alg, how, r["models"], ref)
    print("A vocabulary sweep, `supertok.train(path, vocab_size=%s, algorithm=A, pattern=\"o200k\", threads=None)`, "
          "against three separate `supertok.train(path, vocab_size=V, ...)` calls one after another (the same "
          "sizes, in one process), on the first %.1f MiB (%d bytes) of the English training file "
          "(en_train.txt.xz, one document a line), every core (%d). Each run is a fresh process; %d round(s), "
          "each running every row once, the order rotating; wall and CPU (time.process_time(): every thread) "
          "of the calls, median [min, max]; peak = the process's VmHWM (largest of the rounds). Every model of "
          "every run was checked byte for byte (sha256 of the model file's text) against the separate runs' of "
          "the first round: identical (the script asserts it)."
          % (sizes, size / (1 << 20), size, os.cpu_count(), args.rounds))
    print("")
    print(machine_note(start_load))
    print("")
    print("| algorithm | run | wall s | CPU s | separate ÷ sweep (wall) | separate ÷ sweep (CPU) | peak MiB | merges (+ supermerges) per size | models |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for alg in algos:
        sep = runs[(alg, "separate")]
        for how in ("sweep", "separate"):
            rs = runs[(alg, how)]
            walls, cpus = [r["wall"] for r in rs], [r["cpu"] for r in rs]
            rw = statistics.median(r["wall"] for r in sep) / statistics.median(walls)
            rc = statistics.median(r["cpu"] for r in sep) / statistics.median(cpus)
            print("| %s | %s | %s | %s | %.2fx | %.2fx | %.0f | %s | %s |" % (
                alg, "sweep of %d" % len(sizes) if how == "sweep" else "%d separate runs" % len(sizes),
                spread(walls), spread(cpus), rw, rc, max(r["peak"] or 0 for r in rs) / (1 << 20),
                ", ".join("{:,}".format(m) for m in rs[0]["merges"]), "identical"))
    return 0


def main_extend(args, start_load):
    """Extension (SuperBPE Stage 2): a base of half the vocabulary extended to the whole, beside plain
    BPE at the whole vocabulary, on the English training file; tokens a held-out sample encodes to."""
    vocab = int(args.sweep_sizes or (8192 if args.quick else 32768))
    mib = args.mib or (10 if args.quick else 1024)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "en.txt")
        size = make_english(path, mib, args.corpora)
        with lzma.open(os.path.join(args.corpora, "en.txt.xz"), "rt", encoding="utf-8") as f:
            sample = f.read(1 << 20)  # held-out English (en.txt, not the training file)
        import warnings
        sys.path.insert(0, os.path.join(ROOT, "py"))
        import supertok
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = supertok.train(path, vocab_size=vocab // 2, pattern="o200k", progress=False)
        base_path = os.path.join(tmp, "base.stmodel")
        base.save(base_path)
        base_tokens = len(base.encode(sample))
        sample_path = os.path.join(tmp, "sample.txt")
        with open(sample_path, "w", encoding="utf-8") as f:
            f.write(sample)
        configs = [("extend", 5), ("extend", 1), ("bpe-full", None)]
        runs = {c: [] for c in configs}
        for k in range(args.rounds):
            order = configs[k % len(configs):] + configs[:k % len(configs)]
            for how, mc in order:
                r = run(path, how, {"base": base_path, "vocab": vocab, "min_count": mc, "sample": sample_path})
                runs[(how, mc)].append(r)
                print("train_scale.py: round %d, %s min_count=%s: %.1f s wall, %.1f s CPU" % (k + 1, how, mc, r["wall"],
                                                                                         r["cpu"]), file=sys.stderr)
    print("Extending a model (SuperBPE's Stage 2): `supertok.train(path, vocab_size=%d, extend=base, min_count=K, "
          "threads=None)` where base is `supertok.train(path, vocab_size=%d, pattern=\"o200k\")` (trained once, "
          "before the rounds), beside plain BPE `supertok.train(path, vocab_size=%d, pattern=\"o200k\", "
          "threads=None)`, on the first %.1f MiB (%d bytes) of the English training file (en_train.txt.xz, one "
          "document a line), every core (%d). Each run is a fresh process; %d round(s), the order rotating; wall "
          "and CPU of the train call, median [min, max]; peak = the process's VmHWM. Tokens: the first MiB of the "
          "held-out English file (en.txt.xz) encoded with the model (the base gives %s); multi-word tokens: the "
          "tokens the extension added that hold a space inside (not only a leading one)."
          % (vocab, vocab // 2, vocab, size / (1 << 20), size, os.cpu_count(), args.rounds, "{:,}".format(base_tokens)))
    print("")
    print(machine_note(start_load))
    print("")
    print("| run | wall s | CPU s | peak MiB | merges | held-out tokens | vs the base | multi-word tokens added |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for how, mc in configs:
        rs = runs[(how, mc)]
        name = "extend, min_count=%d" % mc if how == "extend" else "plain BPE at %d" % vocab
        print("| %s | %s | %s | %.0f | %s | %s | %.3fx | %s |" % (
            name, spread([r["wall"] for r in rs]), spread([r["cpu"] for r in rs]),
            max(r["peak"] or 0 for r in rs) / (1 << 20), "{:,}".format(rs[0]["merges"]), "{:,}".format(rs[0]["tokens"]),
            rs[0]["tokens"] / base_tokens, "{:,}".format(rs[0]["multiword"]) if how == "extend" else "—"))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=None,
                    help="size of the text in MiB (default 1024; --quick 32; --sweep: the first MiB of the "
                         "English file, default all of it)")
    ap.add_argument("--size", type=parse_size, default=None, help="the same as --mib, with a unit: 64MiB, 1GiB")
    ap.add_argument("--corpora", default=DEFAULT_CORPORA)
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; --quick 1)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--peers", action="store_true", help="supertok's counting beside HuggingFace and rustbpe")
    ap.add_argument("--tools", default=None, help="--peers: a subset of all,st-train,hf,rustbpe")
    ap.add_argument("--sweep", action="store_true", help="a vocabulary sweep against separate runs")
    ap.add_argument("--algorithms", default="bpe", help="--sweep: comma-separated (bpe, boundless, superbpe)")
    ap.add_argument("--sweep-sizes", default=None, help="--sweep: vocab sizes (default 16384,32768,65536); "
                    "--extend: the vocabulary extended to (default 32768; the base has half)")
    ap.add_argument("--extend", action="store_true", help="extending a model (SuperBPE Stage 2) beside plain BPE")
    args = ap.parse_args(argv)
    if args.size is not None:
        args.mib = args.size
    args.rounds = args.rounds or (1 if args.quick else 3)
    if not os.path.isdir(args.corpora):
        print("train_scale.py: skipped: no corpora folder at %s (pass --corpora DIR)" % args.corpora, file=sys.stderr)
        return 0
    start_load = os.getloadavg()
    if args.sweep:
        return main_sweep(args, start_load)
    if args.extend:
        return main_extend(args, start_load)
    mib = args.mib or (32 if args.quick else 1024)
    if args.peers:
        return main_peers(args, mib, start_load)
    return main_scale(args, mib)


if __name__ == "__main__":
    sys.exit(_results.run_and_record(main, _results.keyed(
        "train_scale.py", options=("--mib", "--size", "--tools", "--algorithms", "--sweep-sizes"),
        flags=("--peers", "--sweep", "--extend"))))
