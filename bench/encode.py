#!/usr/bin/env python3
"""Encode throughput: supertok against tiktoken and every exact peer on PyPI, side by side.

    python bench/encode.py                      # everything (~15 min on 2 cores)
    python bench/encode.py --skip patho,growth,load,batch          # the fresh/warm tables alone
    python bench/encode.py --langs en,zh --tools supertok,fastokens --modes fresh --threads 1
    python bench/encode.py --quick              # a smoke run (tests use it; no peer needed)

Tools (a column each; tiktoken is the ratio base and always runs): tiktoken, supertok (native
backend), supertok-wasmtime, supertok-numba, quicktok-v1, toktok-rs, fastokens, bpe-openai, rs-bpe, kitoken,
tokie. A tool that is not installed is reported missing and skipped.

Each tool runs in its own long-lived worker subprocess (a peer's crash or abort cannot take the
table down: the cell says so and the worker is restarted), loaded once per thread setting; the
driver sends it one job at a time, so the tools are interleaved round by round (the order of the
tools rotates from round to round) and a drift of the shared machine touches every column alike.

Modes, per language file (LANGS, from the shared corpora):
- fresh: round r encodes slice r of the file (consecutive, non-overlapping slices of --mb MB
  from the start of the file, cut at character boundaries, the same in every process), so no
  cache of any tool has seen that text before the timed call. Every worker first encodes the
  last 16 KB of each file (never part of a slice), so one-time setup is not in round 1.
- warm: the same slice encoded again, right after the fresh call (the "first call" of warm).
Each call is timed by CPU time of the worker process (time.process_time(), which counts every
thread of a multi-threaded peer) and by wall time (time.perf_counter()).

Exactness before speed: the ids of every timed call are compared with tiktoken's ids for the
same text in the same round (a hash, then the ids themselves on a mismatch). A tool whose ids
differ on any round is shown as "not exact" with the first differing token and its byte offset,
never with a speed. (In fresh mode the ids checked are those of the timed call itself: checking
with an earlier call would warm the caches the mode is meant to keep cold.)

Cells: median MB/s (min-max over the rounds), MB = 10^6 bytes of UTF-8 input, and **ratio** =
median over the rounds of (tiktoken's time / the tool's time) in the same round, so >1 is faster
than tiktoken. The geometric-mean row is over the languages. Thread settings: "1" sets every
known thread knob (THREAD_VARS) to 1 and pins a tool that has none (NO_THREAD_KNOB) to one CPU;
"all" sets them to os.cpu_count().

Also (kept from before): pathological 1 MB inputs for every tool (a first call, then 3 timed
calls), growth of supertok on them at 100 KB / 1 MB / 4 MB, the time and memory of loading
o200k_base and of the first encode that builds the backtracking tables, and encode_batch scaling.
"""
import argparse
import hashlib
import json
import lzma
import math
import os
import random
import select
import statistics
import subprocess
import sys
import tempfile
import time
from array import array

import _results  # the machine line, and this run's entry in bench/RESULTS.md

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")
LANGS = ["en", "zh", "ja", "ar", "ru", "el", "hi", "code"]
PATHOLOGICAL = ["one_letter", "random_lower", "spaces_then_x", "newlines", "random_cjk", "digits", "punctuation"]
TOOLS = ["tiktoken", "supertok", "supertok-wasmtime", "supertok-numba", "quicktok-v1", "toktok-rs", "fastokens",
         "bpe-openai", "rs-bpe", "kitoken", "tokie"]
# what must import for a tool to count as installed
MODULES = {"tiktoken": "tiktoken", "supertok": "supertok._native", "supertok-wasmtime": "wasmtime",
           "supertok-numba": "numba",
           "quicktok-v1": "quicktok", "toktok-rs": "toktok", "fastokens": "fastokens",
           "bpe-openai": "bpe_openai", "rs-bpe": "rs_bpe", "kitoken": "kitoken", "tokie": "tokie",
           "_tamper": "tiktoken"}
DISTS = {"tiktoken": "tiktoken", "supertok": "supertok", "supertok-wasmtime": "wasmtime", "supertok-numba": "numba",
         "quicktok-v1": "quicktok-v1", "toktok-rs": "toktok-rs", "fastokens": "fastokens",
         "bpe-openai": "bpe-openai", "rs-bpe": "rs-bpe", "kitoken": "kitoken", "tokie": "tokie",
         "_tamper": "tiktoken"}
# every thread knob of the tools we know of: fastokens' pool, rayon (fastokens, kitoken, ...), OpenMP,
# and supertok's own (in case the host side grows one)
THREAD_VARS = ["FASTOKENS_BPE_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS", "SUPERTOK_THREADS",
               "SUPERTOK_ENCODE_THREADS"]
# tools whose thread count no variable sets: in the 1-thread setting their worker may use one CPU
NO_THREAD_KNOB = {"tokie"}
WARMUP_BYTES = 16384


# ---- inputs -------------------------------------------------------------------------------------

_FILES = {}


def corpus_bytes(lang):
    """The whole language file as UTF-8 bytes (cached per process). "udhr" is the UDHR excerpts
    vendored in vectors/texts (many scripts), so --quick runs on a fresh clone with no corpora."""
    if lang not in _FILES:
        if lang == "udhr":
            with open(os.path.join(ROOT, "vectors", "texts", "udhr.jsonl"), encoding="utf-8") as f:
                recs = [json.loads(ln) for ln in f if ln.strip()]
            _FILES[lang] = "\n".join(r["text"] for r in recs if "text" in r).encode("utf-8")
        else:
            with lzma.open(os.path.join(CORPORA, lang + ".txt.xz")) as f:
                _FILES[lang] = f.read()
    return _FILES[lang]


def char_start(data, pos):
    """The first character boundary at or after pos."""
    while 0 < pos < len(data) and (data[pos] & 0xC0) == 0x80:
        pos += 1
    return min(pos, len(data))


def slice_text(lang, index, size):
    """Slice index (0, 1, ...) of size bytes from the start of the file, cut at characters."""
    data = corpus_bytes(lang)
    a, b = char_start(data, index * size), char_start(data, (index + 1) * size)
    return data[a:b].decode("utf-8")


def tail_text(lang, size):
    data = corpus_bytes(lang)
    return data[char_start(data, max(0, len(data) - size)):].decode("utf-8")


def corpus_text(lang, nbytes):
    """The first nbytes of the file, cut at a character (the old 'lang' input)."""
    data = corpus_bytes(lang)
    return data[:nbytes].decode("utf-8", "ignore")


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
    """slice:LANG:INDEX:SIZE, tail:LANG:SIZE, lang:LANG:NBYTES or patho:KIND:NBYTES."""
    parts = spec.split(":")
    if parts[0] == "slice":
        return slice_text(parts[1], int(parts[2]), int(parts[3]))
    if parts[0] == "tail":
        return tail_text(parts[1], int(parts[2]))
    if parts[0] == "lang":
        return corpus_text(parts[1], int(parts[2]))
    return pathological_text(parts[1], int(parts[2]))


# ---- loading each tool ----------------------------------------------------------------------------

def tiktoken_env():
    """tiktoken, offline from the shipped rank files (no network)."""
    import shutil
    cache = os.path.join(tempfile.gettempdir(), "supertok-bench-tiktoken")
    os.makedirs(cache, exist_ok=True)
    for name in ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]:
        url = "https://openaipublic.blob.core.windows.net/encodings/%s.tiktoken" % name
        dst = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
        if not os.path.exists(dst):
            shutil.copy(os.path.join(ROOT, "py", "supertok", "vocab", name + ".tiktoken"), dst)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache


def rank_file(encoding):
    return os.path.join(ROOT, "py", "supertok", "vocab", encoding + ".tiktoken")


def byte_level_char(b):
    """GPT-2's byte-to-character map (the printable Latin-1 bytes stand for themselves, the rest
    take the code points from 256 upwards in byte order)."""
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, n = {}, 0
    for x in range(256):
        if x in keep:
            table[x] = chr(x)
        else:
            table[x] = chr(256 + n)
            n += 1
    return table


def hf_tokenizer_json(encoding):
    """A HuggingFace tokenizer.json for a tiktoken rank file (byte-level BPE; merges ordered by the
    rank of the merged token), for peers that load only that format (tokie). Made once, kept in
    the temporary directory."""
    path = os.path.join(tempfile.gettempdir(), "supertok-bench-%s-tokenizer.json" % encoding)
    if os.path.exists(path):
        return path
    import base64
    with open(os.path.join(ROOT, "py", "supertok", "vocab", encoding + ".json"), encoding="utf-8") as f:
        pat = json.load(f)["pat_str"]
    ranks = {}
    with open(rank_file(encoding), "rb") as f:
        for line in f:
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
    m = byte_level_char(0)
    name = {tok: "".join(m[b] for b in tok) for tok in ranks}
    merges = []
    for tok, rank in ranks.items():
        if len(tok) < 2:
            continue
        splits = [(tok[:i], tok[i:]) for i in range(1, len(tok)) if tok[:i] in ranks and tok[i:] in ranks]
        splits.sort(key=lambda lr: (ranks[lr[0]], ranks[lr[1]]))
        merges.extend((rank, name[a], name[b]) for a, b in splits)
    merges.sort(key=lambda x: x[0])
    spec = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pat}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {name[t]: r for t, r in ranks.items()},
                  "merges": [[a, b] for _, a, b in merges]},
    }
    tmp = path + ".%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False)
    os.replace(tmp, path)
    return path


def load_tool(tool, encoding):
    """A function text -> ids (any sequence of ints) for the tool, loaded offline."""
    if tool == "tiktoken":
        tiktoken_env()
        import tiktoken
        return tiktoken.get_encoding(encoding).encode_ordinary
    if tool in ("supertok", "supertok-native", "supertok-wasmtime", "supertok-numba"):
        os.environ["SUPERTOK_BACKEND"] = tool.split("-")[1] if "-" in tool else "native"
        import supertok
        return supertok.get_encoding(encoding).encode_ordinary
    if tool == "_tamper":
        # tiktoken with one id changed (token 100, or the last): the tests' proof that a wrong
        # answer is reported as "not exact" and never timed
        tiktoken_env()
        import tiktoken
        enc = tiktoken.get_encoding(encoding)

        def tamper(text):
            ids = enc.encode_ordinary(text)
            if ids:
                i = min(100, len(ids) - 1)
                ids[i] = (ids[i] + 1) % enc.n_vocab
            return ids
        return tamper
    if tool in ("quicktok-v1", "quicktok"):
        import quicktok
        return quicktok.get_encoding(encoding).encode
    if tool == "toktok-rs":
        import toktok
        return toktok._encoding(encoding).encode_ordinary
    if tool == "fastokens":
        import fastokens
        tok = fastokens.Tokenizer.from_tiktoken(rank_file(encoding), encoding=encoding)
        return lambda text: tok.encode_ordinary(text).ids
    if tool == "bpe-openai":
        from bpe_openai import _bindings
        return _bindings.tokenizer_for_encoding(encoding).encode
    if tool == "rs-bpe":
        from rs_bpe.bpe import openai
        return getattr(openai, encoding)().encode
    if tool == "kitoken":
        from kitoken import Kitoken
        enc = Kitoken.from_file(rank_file(encoding))
        return lambda text: enc.encode(text, False)
    if tool == "tokie":
        import tokie
        tok = tokie.Tokenizer.from_json(hf_tokenizer_json(encoding))
        return lambda text: tok.encode(text, add_special_tokens=False).ids
    raise ValueError(tool)


# ---- the long-lived worker: one tool, jobs from stdin, results on stdout --------------------------

def as_list(ids):
    return ids if isinstance(ids, list) else list(ids)


def serve(args):
    if args.pin and hasattr(os, "sched_setaffinity"):
        # a tool with no thread knob (tokie sizes its pool by the CPUs it may use): one CPU
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    t = time.perf_counter()
    fn = load_tool(args.serve, args.encoding)
    out = sys.stdout
    sys.stdout = sys.stderr  # a peer that prints must not break the protocol
    out.write(json.dumps({"ready": time.perf_counter() - t}) + "\n")
    out.flush()
    last = {}
    texts = {}
    for line in sys.stdin:
        job = json.loads(line)
        if job["op"] == "run":
            spec = job["input"]
            if spec not in texts:
                texts.clear()
                texts[spec] = make_input(spec)
            text = texts[spec]
            cpu, wall, digests = [], [], []
            last.clear()
            budget = job.get("budget")  # seconds: no further call once the calls so far took this long
            for k in range(job["calls"]):
                if budget is not None and k and sum(wall) > budget:
                    break
                c0, w0 = time.process_time(), time.perf_counter()
                try:
                    ids = fn(text)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as exc:  # pyo3's PanicException is a BaseException
                    last.clear()
                    cpu = None
                    err = ("%s: %s" % (type(exc).__name__, exc)).splitlines()[0][:140]
                    break
                w1, c1 = time.perf_counter(), time.process_time()
                cpu.append(c1 - c0)
                wall.append(w1 - w0)
                ids = as_list(ids)
                digests.append(hashlib.sha256(array("I", ids).tobytes()).hexdigest()[:16])
                last[k] = ids
            if cpu is None:
                reply = {"error": err}
            else:
                reply = {"cpu": cpu, "wall": wall, "digests": digests, "bytes": len(text.encode("utf-8")),
                         "tokens": len(last[0]) if last else 0}
        elif job["op"] == "dump":
            with open(job["path"], "wb") as f:
                array("I", last[job["call"]]).tofile(f)
            reply = {"ok": True}
        elif job["op"] == "offset":
            # tiktoken's worker: the byte offset where token i starts in the last call's text
            import tiktoken
            enc = tiktoken.get_encoding(args.encoding)
            ids = last[job["call"]][:job["token"]]
            reply = {"offset": len(enc.decode_bytes(ids))}
        else:
            reply = {"error": "unknown op"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


class Worker:
    """A tool's subprocess; restarted after a crash."""

    def __init__(self, tool, encoding, env, timeout):
        self.tool, self.encoding, self.env, self.timeout = tool, encoding, env, timeout
        self.proc = None
        self.load_time = None

    def start(self):
        self.err = tempfile.TemporaryFile(mode="w+")
        cmd = [sys.executable, os.path.abspath(__file__), "--serve", self.tool, "--encoding", self.encoding]
        if self.env.get("_BENCH_THREADS") == "1" and self.tool in NO_THREAD_KNOB:
            cmd.append("--pin")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     text=True, env=self.env)
        ready = self._read(self.timeout)
        if "ready" in ready:
            self.load_time = ready["ready"]
        return ready

    def _stderr_tail(self):
        self.err.seek(0)
        lines = [ln.strip() for ln in self.err.read().splitlines() if ln.strip()]
        return lines[-1][:140] if lines else "no message"

    def _read(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            self.stop()
            return {"error": "timeout after %d s" % timeout}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            msg = self._stderr_tail()
            self.proc = None
            return {"error": "crashed (exit %s): %s" % (code, msg)}
        return json.loads(line)

    def ask(self, job, timeout=None):
        if self.proc is None:
            ready = self.start()
            if "error" in ready:
                return ready
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the read below reports the crash
        return self._read(timeout or self.timeout)

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def thread_env(setting):
    env = dict(os.environ)
    n = "1" if setting == "1" else str(os.cpu_count() or 1)
    for var in THREAD_VARS:
        env[var] = n
    env["_BENCH_THREADS"] = setting
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(ROOT, "py"), env.get("PYTHONPATH")]))
    return env


def first_difference(workers, tool, call):
    """(token index, byte offset) of the first id where tool differs from tiktoken."""
    with tempfile.TemporaryDirectory() as d:
        pa, pb = os.path.join(d, "a"), os.path.join(d, "b")
        workers["tiktoken"].ask({"op": "dump", "call": call, "path": pa})
        workers[tool].ask({"op": "dump", "call": call, "path": pb})
        a, b = array("I"), array("I")
        with open(pa, "rb") as f:
            a.frombytes(f.read())
        with open(pb, "rb") as f:
            b.frombytes(f.read())
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    off = workers["tiktoken"].ask({"op": "offset", "call": call, "token": i}).get("offset", "?")
    return i, off, len(a), len(b)


def run_job(workers, tools, spec, calls, timeout, budget=None):
    """One job on every tool, in the given order; then the exactness check of every call."""
    job = {"op": "run", "input": spec, "calls": calls}
    if budget is not None:
        job["budget"] = budget
    res = {tool: workers[tool].ask(job, timeout) for tool in tools}
    base = res.get("tiktoken", {})
    for tool in tools:
        r = res[tool]
        if tool == "tiktoken" or "error" in r:
            continue
        if "digests" not in base:
            r["unchecked"] = True
            continue
        for k in range(min(len(r["digests"]), len(base["digests"]))):
            if r["digests"][k] != base["digests"][k]:
                i, off, na, nb = first_difference(workers, tool, k)
                r["mismatch"] = "not exact: token %s, byte %s (%s vs %s tokens)" % (
                    "{:,}".format(i), "{:,}".format(off) if isinstance(off, int) else off,
                    "{:,}".format(nb), "{:,}".format(na))
                break
    return res


# ---- statistics and tables -------------------------------------------------------------------------

def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summarize(rounds, tool, clock):
    """rounds: list of {tool: (bytes, cpu, wall) | error str | mismatch str}. Returns a dict."""
    mism = [r[tool] for r in rounds if isinstance(r.get(tool), str) and r[tool].startswith("not exact")]
    if mism:
        return {"bad": mism[0]}
    ok = [r for r in rounds if isinstance(r.get(tool), tuple)]
    if not ok:
        errs = [r[tool] for r in rounds if isinstance(r.get(tool), str)]
        return {"bad": errs[0] if errs else "no result"}
    errs = [r[tool] for r in rounds if isinstance(r.get(tool), str)]
    idx = 1 if clock == "cpu" else 2
    speeds = sorted(r[tool][0] / 1e6 / max(r[tool][idx], 1e-9) for r in ok)
    ratios = [r["tiktoken"][idx] / max(r[tool][idx], 1e-9) for r in ok if isinstance(r.get("tiktoken"), tuple)]
    return {"med": statistics.median(speeds), "lo": speeds[0], "hi": speeds[-1],
            "ratio": statistics.median(ratios) if ratios else None, "n": len(ok), "of": len(rounds),
            "err": errs[0] if errs else None}


def fmt(s, base=False):
    if "bad" in s:
        return s["bad"].replace("|", "/")
    out = "%.1f (%.1f–%.1f)" % (s["med"], s["lo"], s["hi"])
    if not base and s["ratio"] is not None:
        out = "**%.2fx** " % s["ratio"] + out
    if s["n"] < s["of"]:
        out += " [%d/%d rounds; the others: %s]" % (s["n"], s["of"], (s["err"] or "?").replace("|", "/")[:90])
    return out


def print_table(title, data, langs, tools, clock, nbytes):
    print("\n#### " + title + "\n")
    print("| lang | MB | " + " | ".join(tools) + " |")
    print("|---|---:|" + "---:|" * len(tools))
    for lang in langs:
        cells = [fmt(summarize(data[lang], t, clock), t == "tiktoken") for t in tools]
        print("| %s | %.2f | %s |" % (lang, nbytes[lang] / 1e6, " | ".join(cells)))
    gm = []
    for t in tools:
        rs = [summarize(data[lang], t, clock) for lang in langs]
        good = [s["ratio"] for s in rs if "bad" not in s and s["ratio"]]
        if t == "tiktoken":
            gm.append("1.00x")
        elif not good or len(good) < len(langs) and any("not exact" in s.get("bad", "") for s in rs):
            gm.append("not exact" if any("not exact" in s.get("bad", "") for s in rs) else "—")
        else:
            gm.append("**%.2fx**%s" % (geomean(good), "" if len(good) == len(langs) else " (%d langs)" % len(good)))
    print("| geometric mean | | %s |" % " | ".join(gm))


def geomeans(data, langs, tool, clock):
    rs = [summarize(data[lang], tool, clock) for lang in langs]
    if any("not exact" in s.get("bad", "") for s in rs):
        return None, "not exact"
    good = [s["ratio"] for s in rs if "bad" not in s and s["ratio"]]
    if not good:
        return None, "—"
    return geomean(good), "%.2fx%s" % (geomean(good), "" if len(good) == len(langs) else " (%d/%d)" % (len(good), len(langs)))


# ---- the fresh/warm tables ---------------------------------------------------------------------------

def fresh_warm(args, tools, langs, settings, modes):
    sizes = {}
    for lang in langs:
        n = len(corpus_bytes(lang))
        sizes[lang] = min(args.slice_bytes, (n - WARMUP_BYTES) // args.rounds)
    calls = 2 if "warm" in modes else 1
    results = {}  # (setting, mode) -> lang -> list of rounds
    loads = {}
    for setting in settings:
        env = thread_env(setting)
        workers = {t: Worker(t, args.encoding, env, args.timeout) for t in tools}
        for t in tools:
            ready = workers[t].start()
            loads[(setting, t)] = ready.get("ready", ready.get("error"))
            print("[%s threads] %s loaded: %s" % (setting, t, loads[(setting, t)]), file=sys.stderr, flush=True)
        for lang in langs:  # one-time setup of every tool, on text no round uses
            run_job(workers, tools, "tail:%s:%d" % (lang, WARMUP_BYTES), 1, args.timeout)
        for mode in modes:
            results[(setting, mode)] = {lang: [] for lang in langs}
        for rnd in range(args.rounds):
            t0 = time.time()
            for lang in langs:
                order = tools[rnd % len(tools):] + tools[:rnd % len(tools)]
                res = run_job(workers, order, "slice:%s:%d:%d" % (lang, rnd, sizes[lang]), calls, args.timeout)
                for mode in modes:
                    k = 0 if mode == "fresh" else 1
                    row = {}
                    for t in tools:
                        r = res[t]
                        if "error" in r:
                            row[t] = "error: " + r["error"]
                        elif "mismatch" in r:
                            row[t] = r["mismatch"]
                        else:
                            row[t] = (r["bytes"], r["cpu"][k], r["wall"][k])
                    results[(setting, mode)][lang].append(row)
            print("[%s threads] round %d/%d: %.0f s" % (setting, rnd + 1, args.rounds, time.time() - t0),
                  file=sys.stderr, flush=True)
        for w in workers.values():
            w.stop()
    nbytes = {lang: statistics.median(
        r["tiktoken"][0] for r in results[(settings[0], modes[0])][lang] if isinstance(r["tiktoken"], tuple))
        for lang in langs}
    return results, nbytes, loads


def report_fresh_warm(args, tools, langs, settings, modes, results, nbytes, loads):
    def name(s):
        return "1 thread" if s == "1" else "all cores (%d)" % (os.cpu_count() or 1)

    print("\n### Summary: geometric mean over %s of the ratio to tiktoken (same round)\n" % ", ".join(langs))
    print("| setting | mode | clock | " + " | ".join(tools) + " |")
    print("|---|---|---|" + "---:|" * len(tools))
    for s in settings:
        for m in modes:
            for clock in ("cpu", "wall"):
                cells = [geomeans(results[(s, m)], langs, t, clock)[1] if t != "tiktoken" else "1.00x" for t in tools]
                print("| %s | %s | %s | %s |" % (name(s), m, clock, " | ".join(cells)))

    for s in settings:
        for m in modes:
            for clock in ("cpu", "wall"):
                print_table("%s, %s text, %s time: MB/s median (min–max), **ratio to tiktoken**" % (
                    name(s), m, "CPU" if clock == "cpu" else "wall"), results[(s, m)], langs, tools, clock, nbytes)

    # where supertok stands against the fastest exact peer, per language (CPU time)
    me = "supertok" if "supertok" in tools else None
    peers = [t for t in tools if t not in ("tiktoken", "supertok", "supertok-wasmtime", "supertok-numba")]
    if me and peers:
        print("\n### supertok against the fastest exact peer (CPU time; ratios to tiktoken, same rounds)\n")
        print("| setting | mode | lang | supertok | fastest exact peer | supertok / peer |")
        print("|---|---|---|---:|---|---:|")
        for s in settings:
            for m in modes:
                for lang in langs:
                    mine = summarize(results[(s, m)][lang], me, "cpu")
                    best = None
                    for p in peers:
                        st = summarize(results[(s, m)][lang], p, "cpu")
                        if "bad" not in st and st["ratio"] and (best is None or st["ratio"] > best[1]):
                            best = (p, st["ratio"])
                    if "bad" in mine or best is None:
                        continue
                    print("| %s | %s | %s | %.2fx | %s %.2fx | %.2f |" % (
                        name(s), m, lang, mine["ratio"], best[0], best[1], mine["ratio"] / best[1]))

    print("\nload time of each worker (s): " + "; ".join(
        "%s/%s %s" % (t, s, ("%.2f" % v) if isinstance(v, float) else v) for (s, t), v in sorted(loads.items())))


# ---- the older sections ------------------------------------------------------------------------------

def worker(args):
    """One implementation, one input, --runs calls (used by the growth section)."""
    fn = load_tool(args.worker, args.encoding)
    text = make_input(args.input)
    nbytes = len(text.encode("utf-8"))
    ids = as_list(fn(text))
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t)
    print(json.dumps({"times": times, "bytes": nbytes, "tokens": len(ids)}))


def run_worker(impl, spec, encoding, runs, timeout=600):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", impl, "--input", spec,
           "--encoding", encoding, "--runs", str(runs)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=thread_env("1"))
    except subprocess.TimeoutExpired:
        return {"error": "timeout after %d s" % timeout}
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return {"error": last[:120]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def pathological(args, tools):
    """Every tool on 1 MB of each pathological input: a first call, then 3 timed calls; 1 thread."""
    env = thread_env("1")
    workers = {t: Worker(t, args.encoding, env, args.patho_timeout) for t in tools}
    rows = []
    run_job(workers, tools, "patho:random_cjk:3000", 1, args.patho_timeout)  # one-time setup, untimed
    for kind in PATHOLOGICAL:
        res = run_job(workers, tools, "patho:%s:%d" % (kind, 1_000_000), 4, args.patho_timeout, budget=5.0)
        rows.append((kind, res))
        print("patho %s done" % kind, file=sys.stderr, flush=True)
    for w in workers.values():
        w.stop()
    print("\n### Pathological inputs, 1 MB each (1 thread; a first call, then 3 timed calls)\n")
    print("Cells: MB/s of the 3 later calls, median (min–max), CPU time; **ratio** = median / "
          "tiktoken's; then the first call in seconds (CPU). Ids checked against tiktoken on every call. "
          "A call that takes over 5 s is not repeated; a job over %d s is stopped.\n" % args.patho_timeout)
    print("| input | " + " | ".join(tools) + " |")
    print("|---|" + "---:|" * len(tools))
    for kind, res in rows:
        base = res.get("tiktoken", {})
        cells = []
        for t in tools:
            r = res[t]
            if "error" in r:
                cells.append(("error: " + r["error"]).replace("|", "/"))
                continue
            if "mismatch" in r:
                cells.append(r["mismatch"])
                continue
            if len(r["cpu"]) < 2:
                cells.append("first %.2f s; not repeated (over 5 s)" % r["cpu"][0])
                continue
            sp = sorted(r["bytes"] / 1e6 / max(c, 1e-9) for c in r["cpu"][1:])
            cell = "%.1f (%.1f–%.1f)" % (statistics.median(sp), sp[0], sp[-1])
            if t != "tiktoken" and len(base.get("cpu", [])) > 1:
                cell = "**%.2fx** " % (statistics.median(base["cpu"][1:]) / statistics.median(r["cpu"][1:])) + cell
            if r.get("unchecked"):
                cell += " (unchecked: tiktoken failed)"
            cells.append(cell + "; first %.3f s" % r["cpu"][0])
        print("| %s | %s |" % (kind, " | ".join(cells)))


def load_stats(encoding):
    code = (
        "import os, time, resource\n"
        "os.environ['SUPERTOK_BACKEND'] = 'native'\n"
        "import supertok\n"
        "supertok.backend()  # the backend's own load is not the vocabulary's\n"
        "def rss():\n"
        "    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
        "r0 = rss(); t = time.perf_counter(); e = supertok.get_encoding(%r); dt = time.perf_counter() - t\n"
        "r1 = rss(); t = time.perf_counter(); e.prepare()\n"
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


def versions(tools):
    from importlib import metadata
    out = []
    for t in tools:
        try:
            out.append("%s %s" % (t, metadata.version(DISTS[t])))
        except metadata.PackageNotFoundError:
            out.append("%s ?" % t)
    return ", ".join(out)


def available(tool):
    r = subprocess.run([sys.executable, "-c", "import %s" % MODULES[tool]], capture_output=True,
                       env=thread_env("1"))
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--mb", type=float, default=1.0,
                    help="MB (10^6 bytes) per fresh slice (default 1; less when a file has too few)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds of the fresh/warm tables (default 7)")
    ap.add_argument("--langs", default=",".join(LANGS), help="comma-separated (default %(default)s)")
    ap.add_argument("--tools", default="all", help="comma-separated from: " + ",".join(TOOLS))
    ap.add_argument("--modes", default="fresh,warm", help="fresh,warm (default both)")
    ap.add_argument("--threads", default="1,all", help="thread settings: 1,all (default both)")
    ap.add_argument("--runs", type=int, default=5, help="timed calls in the batch scaling section")
    ap.add_argument("--timeout", type=int, default=300, help="seconds a worker may take for one job")
    ap.add_argument("--patho-timeout", type=int, default=20,
                    help="seconds a worker may take for one pathological input (default 20)")
    ap.add_argument("--corpora", help="the corpora folder (default: SUPERTOK_CORPORA or ../shared/corpora)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: en and zh (or the vendored UDHR text without corpora), 64 KB slices, "
                         "2 rounds, 1 thread, no other section")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: langs,patho,growth,load,batch")
    ap.add_argument("--serve")
    ap.add_argument("--pin", action="store_true")
    ap.add_argument("--worker")
    ap.add_argument("--input")
    args = ap.parse_args()
    global CORPORA
    if args.corpora:
        CORPORA = os.environ["SUPERTOK_CORPORA"] = os.path.abspath(args.corpora)
    if args.serve:
        return serve(args)
    if args.worker:
        return worker(args)

    sys.stdout.reconfigure(line_buffering=True)  # tables as they come, even if the run is stopped
    skip = set(filter(None, args.skip.split(",")))
    settings = [s for s in args.threads.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    if not set(settings) <= {"1", "all"} or not modes or not set(modes) <= {"fresh", "warm"}:
        ap.error("--threads takes 1,all and --modes fresh,warm")
    wanted = TOOLS if args.tools == "all" else [t for t in args.tools.split(",") if t]
    unknown = set(wanted) - set(TOOLS) - {"_tamper"}
    if unknown:
        ap.error("unknown tools: %s" % ", ".join(sorted(unknown)))
    if "tiktoken" not in wanted:
        wanted = ["tiktoken"] + wanted  # the ratio base and the exactness oracle
    langs = [x for x in args.langs.split(",") if x]
    args.slice_bytes = int(args.mb * 1e6)
    if args.quick:
        settings, args.rounds, args.slice_bytes = ["1"], 2, 65536
        skip |= {"patho", "growth", "load", "batch"}
        langs = ["en", "zh"]
    have_corpora = os.path.isdir(CORPORA)
    if not have_corpora:
        if not args.quick:
            print("no corpora at %s (set SUPERTOK_CORPORA or --corpora)" % CORPORA, file=sys.stderr)
            return 2
        langs = ["udhr"]
    else:
        missing_langs = [x for x in langs if x != "udhr" and not os.path.exists(os.path.join(CORPORA, x + ".txt.xz"))]
        for x in missing_langs:
            print("skipping %s: its corpus file is absent" % x)
        langs = [x for x in langs if x not in missing_langs]

    tools = [t for t in wanted if available(t)]
    missing = [t for t in wanted if t not in tools]
    if "tiktoken" not in tools:
        print("tiktoken is not installed: it is the oracle and the ratio base", file=sys.stderr)
        return 2
    print("# encode benchmark: %s, list output" % args.encoding)
    print("\nmachine: %s; load average %s" % (_results.machine(), " ".join("%.2f" % x for x in os.getloadavg())))
    print("date: %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    print("command: python bench/encode.py %s" % " ".join(sys.argv[1:]))
    print("tools: %s" % versions(tools))
    print("missing (not installed, skipped): %s" % (", ".join(missing) or "none"))
    print("thread settings: %s (%s set to 1 or to the core count)" % (", ".join(settings), ", ".join(THREAD_VARS)))
    t_start = time.time()

    if "langs" not in skip and langs:
        results, nbytes, loads = fresh_warm(args, tools, langs, settings, modes)
        print("fresh/warm: %d rounds, slices of up to %s bytes" % (args.rounds, "{:,}".format(args.slice_bytes)))
        report_fresh_warm(args, tools, langs, settings, modes, results, nbytes, loads)

    if "patho" not in skip:
        pathological(args, tools)

    if "growth" not in skip and "supertok" in tools:
        print("\n### Growth on pathological inputs (supertok native, seconds per call, median of 3)\n")
        print("| input | 100 KB | 1 MB | 4 MB | 4 MB / 1 MB |")
        print("|---|---:|---:|---:|---:|")
        for kind in PATHOLOGICAL:
            ts = []
            for size in (100_000, 1_000_000, 4_000_000):
                r = run_worker("supertok", "patho:%s:%d" % (kind, size), args.encoding, 3)
                ts.append(statistics.median(r["times"]) if "times" in r else float("nan"))
            print("| %s | %.4f | %.4f | %.4f | %.1fx |" % (kind, ts[0], ts[1], ts[2], ts[2] / ts[1]))

    if "load" not in skip and "supertok" in tools:
        times, rss, first, first_rss = load_stats(args.encoding)
        size = os.path.getsize(rank_file(args.encoding))
        print("\n### Loading %s (native, fresh process, 5 runs)\n" % args.encoding)
        print("- get_encoding: median %.1f ms (min %.1f, max %.1f), including the sha256 check"
              % (1e3 * statistics.median(times), 1e3 * min(times), 1e3 * max(times)))
        print("- resident memory added: median %.1f MB = %.2fx the rank file (%.1f MB)"
              % (statistics.median(rss) / 1e6, statistics.median(rss) / size, size / 1e6))
        print("- then enc.prepare() builds the backtracking tables (a first call no longer does: "
              "they are built once they pay, docs/design.md section 7): median %.1f ms (min %.1f, max %.1f), adding %.1f MB resident"
              % (1e3 * statistics.median(first), 1e3 * min(first), 1e3 * max(first),
                 statistics.median(first_rss) / 1e6))

    if "batch" not in skip and "supertok" in tools and have_corpora:
        print("\n### encode_ordinary_batch scaling (native, English lines, ~4 MB)\n")
        res = batch_scaling(args.encoding, args.runs)
        for threads, mb in res:
            print("- %d thread%s: %.1f MB/s (%.2fx)" % (threads, "" if threads == 1 else "s", mb, mb / res[0][1]))
    print("\nload average at the end: %s; total %.0f s" % (
        " ".join("%.2f" % x for x in os.getloadavg()), time.time() - t_start))
    return 0


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, _results.keyed("encode.py", options=("--encoding", "--langs", "--tools", "--modes", "--threads", "--skip", "--mb"))))
