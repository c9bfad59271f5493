#!/usr/bin/env python3
"""Encoding with HuggingFace tokenizer.json files (Llama 3, Qwen 3, DeepSeek V3; GPT-2 on request):
supertok's loader against HuggingFace tokenizers, fastokens and, in Node, transformers.js and
@lenml/tokenizers, one thread, on the 8 corpus languages.

    python tools/fetch_hf_tokenizers.py      # the tokenizer.json files first (.cache/hf-tokenizers)
    python bench/hf_encode.py                # 3 models, 8 languages, 256 KiB slices, 5 rounds (~10 min, 2 cores)
    python bench/hf_encode.py --models llama3,qwen3,deepseek_v3,gpt2 --langs en,zh
    python bench/hf_encode.py --check-only   # exactness only: every tool against tokenizers on --check-kib of each file
    python bench/hf_encode.py --quick        # smoke run: 32 KiB, 2 rounds, en/zh/code (nothing written)

Tools (Python, one process, loaded once per model): `tokenizers` (`Tokenizer.from_file(path)`,
`encode(text, add_special_tokens=False).ids`: the reference), `fastokens` (`Tokenizer.from_file`,
`encode(text).ids`: no special tokens added, added tokens matched as tokenizers does), `supertok`
(`supertok.load_model(path)`, `encode(text, allowed_special="all")`; while load_model cannot read a
tokenizer.json, its column is skipped with a printed note). Node (wasm/bench/hf/hf_bench.mjs, run as
a subprocess when wasm/bench/hf/node_modules is installed: `npm ci --ignore-scripts` there):
transformers.js, @huggingface/tokenizers, @lenml/tokenizers and supertok's `fromTokenizerJson`.

One thread: RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false, FASTOKENS_BPE_THREADS=1 (fastokens
otherwise cuts calls of 64 KiB or more across a pool of all CPUs) are set before anything is
imported; fastokens' input and segment caches are left at their defaults (off unless set).

Per model and language (slices of the UTF-8 file cut at characters; a file too short for
rounds+1 slices, hi, gets smaller ones): a warm-up call on the file's last 16 KiB (never a timed
slice), then --rounds rounds; in round r every tool, the order rotating round by round, encodes
slice r (fresh: no tool has seen it) and right after the same slice again (warm). Each call is
timed by CPU time (time.process_time: every thread of the process) and wall time. Exactness
first: before timing, every tool's ids on the warm-up text and on a probe with the model's
special tokens are compared with tokenizers'; then every timed call's ids are compared with
tokenizers' ids of the same slice. A tool that differs is shown "not exact" with where, never
with a speed. Cells: CPU MB/s median (min-max) over the rounds, wall MB/s median, and the bold
ratio: the median over rounds of (tokenizers' CPU time / the tool's) in the same round (>1 is
faster than tokenizers; Node columns: tokenizers' median over the tool's median, as they run in
another process). MB = 10^6 bytes.

Load: each tool and model in a fresh process (--load-rounds, interleaved): the library is
imported, then the load is timed (CPU, wall), and the RSS it added (VmRSS after the load and a
first encode, minus before) and the process's peak (VmHWM) are read.
"""
import argparse
import hashlib
import json
import lzma
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from array import array

for _v in ("RAYON_NUM_THREADS", "FASTOKENS_BPE_THREADS", "OMP_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import _results  # noqa: E402  the machine line, and this run's entry in bench/RESULTS.md

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")
HF_DIR = os.environ.get("SUPERTOK_HF_TOKENIZERS") or os.path.join(ROOT, ".cache", "hf-tokenizers")
NODE_DIR = os.path.join(ROOT, "wasm", "bench", "hf")
LANGS = ["en", "zh", "ja", "ar", "ru", "el", "hi", "code"]
MODELS = ["llama3", "qwen3", "deepseek_v3"]
PY_TOOLS = ["tokenizers", "fastokens", "supertok"]
WARMUP_BYTES = 16384


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def tidy(msg):
    """A note without this machine's paths (RESULTS.md names none): the repository's relative."""
    for d in sorted({os.path.abspath(HF_DIR), ROOT}, key=len, reverse=True):
        rel = os.path.relpath(d, ROOT)
        msg = msg.replace(d + os.sep, "" if rel == "." else rel + os.sep).replace(d, rel)
    return msg


# ---- texts --------------------------------------------------------------------------------------

_FILES = {}


def corpus_bytes(lang):
    if lang not in _FILES:
        with lzma.open(os.path.join(CORPORA, lang + ".txt.xz")) as f:
            _FILES[lang] = f.read()
    return _FILES[lang]


def char_start(data, pos):
    while 0 < pos < len(data) and (data[pos] & 0xC0) == 0x80:
        pos += 1
    return min(pos, len(data))


def slices(lang, size, rounds):
    """rounds consecutive slices of size bytes from the start (smaller when the file, less its
    warm-up tail, is too short), cut at characters; and the warm-up text (the last 16 KiB)."""
    data = corpus_bytes(lang)
    body = len(data) - WARMUP_BYTES
    size = min(size, body // rounds)
    out = []
    for r in range(rounds):
        a, b = char_start(data, r * size), char_start(data, (r + 1) * size)
        out.append(data[a:b].decode("utf-8"))
    warm = data[char_start(data, len(data) - WARMUP_BYTES):].decode("utf-8")
    return out, warm


# ---- tools --------------------------------------------------------------------------------------

def model_path(model):
    return os.path.join(HF_DIR, model, "tokenizer.json")


def load_tool(name, path):
    """An encode function (str -> list of ids) for the tool on the tokenizer.json at path; raises
    with the reason when it cannot."""
    if name == "tokenizers":
        from tokenizers import Tokenizer
        t = Tokenizer.from_file(path)
        return lambda s: t.encode(s, add_special_tokens=False).ids
    if name == "fastokens":
        import fastokens
        t = fastokens.Tokenizer.from_file(path)
        return lambda s: t.encode(s, add_special_tokens=False).ids
    if name == "supertok":
        import supertok
        if not hasattr(supertok, "load_model"):
            raise RuntimeError("supertok has no load_model")
        e = supertok.load_model(path)
        return lambda s: e.encode(s, allowed_special="all")
    raise ValueError(name)


def tool_version(name):
    from importlib import metadata
    try:
        return "%s %s" % (name, metadata.version(name))
    except Exception:  # noqa: BLE001
        return name


def special_probe(path):
    """A text with the model's first added tokens between words (tokenizers' encode matches them)."""
    with open(path, encoding="utf-8") as f:
        added = json.load(f).get("added_tokens", [])
    toks = [a["content"] for a in added[:4]] + [a["content"] for a in added[-2:]]
    # U+FEFF after whitespace: JavaScript's \s holds it, Unicode's White_Space (tokenizers') does not
    # (on GPT-2's \s+(?!\S) the npm peers give "\n\n" one token where tokenizers gives two); U+0085 the reverse
    return "Hello" + " x ".join(toks) + " 12345 日本語\n\n  end\n\n\ufeffa  \ufeffb \x85 c"


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def describe_diff(a, ref, text):
    i = first_difference(a, ref)
    return "id #%d is %s, tokenizers %s (%d ids against %d)" % (
        i, a[i] if i < len(a) else "-", ref[i] if i < len(ref) else "-", len(a), len(ref))


# ---- the load worker: one tool, one model, a fresh process ---------------------------------------

def _status(key):
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith(key + ":"):
                return int(ln.split()[1]) * 1024
    return 0


def load_worker(tool, path):
    if tool == "tokenizers":
        import tokenizers  # noqa: F401
    elif tool == "fastokens":
        import fastokens  # noqa: F401
    else:
        import supertok  # noqa: F401
    rss0 = _status("VmRSS")
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        enc = load_tool(tool, path)
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}))
        return 0
    c1, w1 = time.process_time(), time.perf_counter()
    enc("warm up")
    print(json.dumps({"cpu": c1 - c0, "wall": w1 - w0, "rss_before": rss0, "rss_after": _status("VmRSS"),
                      "max_rss": _status("VmHWM")}))
    return 0


def measure_loads(models, tools, rounds):
    out = {m: {t: [] for t in tools} for m in models}
    for r in range(rounds):
        for m in models:
            order = tools[r % len(tools):] + tools[:r % len(tools)]
            for t in order:
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "load", t, model_path(m)],
                                   capture_output=True, text=True)
                try:
                    out[m][t].append(json.loads(p.stdout.strip().splitlines()[-1]))
                except (ValueError, IndexError):
                    out[m][t].append({"error": (p.stderr.strip().splitlines() or ["?"])[-1]})
    return out


# ---- formatting ---------------------------------------------------------------------------------

def med(xs):
    return statistics.median(xs)


def rng(xs, fmt="%.1f"):
    return (fmt + " (" + fmt + "-" + fmt + ")") % (med(xs), min(xs), max(xs))


def cell(runs, base_runs=None, base_median=None):
    """CPU MB/s median (min-max), wall MB/s, and the ratio to tokenizers."""
    mbs = [r["bytes"] / 1e6 / r["cpu"] for r in runs if r["cpu"] > 0]
    wall = [r["bytes"] / 1e6 / r["wall"] for r in runs if r["wall"] > 0]
    if not mbs:
        return "n/a"
    if base_runs is not None:
        ratio = med([b["cpu"] / r["cpu"] for b, r in zip(base_runs, runs) if r["cpu"] > 0])
    elif base_median is not None:
        ratio = base_median / med([r["cpu"] for r in runs])
    else:
        ratio = None
    s = "%s, wall %.1f" % (rng(mbs), med(wall))
    return s if ratio is None else "**%.2fx** %s" % (ratio, s)


def print_tables(models, langs, py_res, py_tools, node_res, node_tools, rounds, size, slice_sizes):
    cols = py_tools + node_tools
    for m in models:
        for mode in ("fresh", "warm"):
            print("\n### %s, %s text, 1 thread\n" % (m, mode))
            print("CPU MB/s median (min-max) over %d rounds, wall MB/s median; **ratio**: tokenizers' CPU time / the "
                  "tool's (>1: faster than tokenizers)\n" % rounds)
            print("| lang | KiB | " + " | ".join(cols) + " |")
            print("|---|---:|" + "---|" * len(cols))
            for lang in langs:
                base = py_res[m]["tokenizers"][lang][mode]
                row = ["%s" % lang, "%d" % round(slice_sizes[lang] / 1024)]
                for t in py_tools:
                    rec = py_res[m][t][lang]
                    if rec["exact"] is not True:
                        row.append("not exact: " + rec["exact"])
                    elif t == "tokenizers":
                        row.append(cell(rec[mode]))
                    else:
                        row.append(cell(rec[mode], base_runs=base))
                for t in node_tools:
                    rec = node_res.get(m, {}).get(t, {}).get(lang)
                    if rec is None:
                        row.append("n/a")
                    elif rec["exact"] is not True:
                        row.append("not exact: " + rec["exact"])
                    else:
                        row.append(cell(rec[mode], base_median=med([b["cpu"] for b in base])))
                print("| " + " | ".join(row) + " |")


def print_loads(loads, node_loads):
    print("\n### Load: tokenizer.json to a tokenizer, a fresh process each\n")
    print("CPU and wall ms median (min-max); RSS added by the load (and a first encode) and the process's "
          "peak (VmHWM; Node: maxRSS) in MiB, median\n")
    print("| model | tool | CPU ms | wall ms | RSS added MiB | peak MiB |")
    print("|---|---|---|---|---:|---:|")
    for m in loads:
        both = list(loads[m].items()) + list(node_loads.get(m, {}).items())
        for t, runs in both:
            ok = [r for r in runs if "cpu" in r]
            if not ok:
                why = [r.get("error") or r.get("skip") for r in runs][:1]
                print("| %s | %s | %s | | | |" % (m, t, tidy("failed: %s" % (why[0] if why else "?"))))
                continue
            print("| %s | %s | %s | %s | %.0f | %.0f |" % (
                m, t, rng([1000 * r["cpu"] for r in ok], "%.0f"), rng([1000 * r["wall"] for r in ok], "%.0f"),
                med([(r["rss_after"] - r["rss_before"]) / 2 ** 20 for r in ok]),
                med([r["max_rss"] / 2 ** 20 for r in ok])))


# ---- main ---------------------------------------------------------------------------------------

def run_node(work, args, models):
    node = shutil.which("node")
    if node is None or not os.path.isdir(os.path.join(NODE_DIR, "node_modules")):
        return None, "Node columns skipped: %s (cd wasm/bench/hf && npm ci --ignore-scripts)" % (
            "node is not on PATH" if node is None else "wasm/bench/hf/node_modules is not installed")
    cmd = [node, os.path.join(NODE_DIR, "hf_bench.mjs"), "--work", work, "--load-rounds", str(args.load_rounds)]
    log("running", " ".join(cmd[1:]))
    p = subprocess.run(cmd, capture_output=False, stdout=subprocess.PIPE, text=True, cwd=NODE_DIR)
    if p.returncode != 0:
        return None, "Node columns failed (status %d)" % p.returncode
    return json.loads(p.stdout.strip().splitlines()[-1]), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, of llama3,qwen3,deepseek_v3,gpt2")
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--kib", type=int, default=256, help="KiB per slice (default 256)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--load-rounds", type=int, default=3)
    ap.add_argument("--tools", default=",".join(PY_TOOLS), help="Python tools (tokenizers always runs)")
    ap.add_argument("--no-node", action="store_true", help="no Node columns")
    ap.add_argument("--no-load", action="store_true", help="no load table")
    ap.add_argument("--check-only", action="store_true", help="only check every tool's ids against tokenizers")
    ap.add_argument("--check-kib", type=int, default=1024, help="--check-only: KiB of each file (default 1024)")
    ap.add_argument("--keep-work", default=None, help="write the slices and ids for hf_bench.mjs here and keep them")
    ap.add_argument("--quick", action="store_true", help="smoke run: 32 KiB, 2 rounds, en/zh/code, 1 load round")
    ap.add_argument("--worker", nargs=3, metavar=("KIND", "TOOL", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return load_worker(args.worker[1], args.worker[2])
    if args.quick:
        args.kib, args.rounds, args.load_rounds = 32, 2, 1
        if args.langs == ",".join(LANGS):
            args.langs = "en,zh,code"
    models = [m for m in args.models.split(",") if m]
    langs = [lg for lg in args.langs.split(",") if lg]
    missing = [m for m in models if not os.path.exists(model_path(m))]
    if missing:
        log("the HuggingFace tokenizer.json files are not fetched (%s under %s): python tools/fetch_hf_tokenizers.py"
            % (", ".join(missing), HF_DIR))
        return 2
    if not os.path.isdir(CORPORA):
        log("the corpora are absent (%s; set SUPERTOK_CORPORA)" % CORPORA)
        return 2
    langs = [lg for lg in langs if os.path.exists(os.path.join(CORPORA, lg + ".txt.xz")) or log("no corpus %s" % lg)]

    tools = ["tokenizers"] + [t for t in args.tools.split(",") if t and t != "tokenizers"]
    notes = []
    size = args.kib * 1024
    texts = {lg: slices(lg, size if not args.check_only else args.check_kib * 1024, 1 if args.check_only else args.rounds)
             for lg in langs}
    slice_sizes = {lg: len(texts[lg][0][0].encode("utf-8")) for lg in langs}

    py_res, live_tools, n_ids = {}, None, {}
    work = args.keep_work or tempfile.mkdtemp(prefix="hf-bench-")
    os.makedirs(work, exist_ok=True)
    modes = ("fresh",) if args.check_only else ("fresh", "warm")
    manifest = {"models": {}, "langs": langs, "slices": {}, "warmup": {}, "expected": {}, "modes": list(modes)}
    for lg in langs:
        sl, warm = texts[lg]
        manifest["slices"][lg] = []
        for r, t in enumerate(sl):
            fn = "%s.%d.txt" % (lg, r)
            with open(os.path.join(work, fn), "w", encoding="utf-8") as f:
                f.write(t)
            manifest["slices"][lg].append(fn)
        manifest["warmup"][lg] = "%s.warm.txt" % lg
        with open(os.path.join(work, manifest["warmup"][lg]), "w", encoding="utf-8") as f:
            f.write(warm)

    for m in models:
        path = model_path(m)
        manifest["models"][m] = {"dir": os.path.dirname(path)}
        manifest["expected"][m] = {lg: [] for lg in langs}
        enc = {}
        for t in tools:
            try:
                enc[t] = load_tool(t, path)
            except Exception as e:  # noqa: BLE001
                msg = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])
                if t == "supertok":
                    notes.append("supertok skipped on %s: supertok.load_model cannot load a tokenizer.json yet (%s)"
                                 % (m, msg[:160]))
                else:
                    notes.append("%s skipped on %s: %s" % (t, m, msg[:160]))
                log(notes[-1])
        live = [t for t in tools if t in enc]
        live_tools = live if live_tools is None else [t for t in live_tools if t in live]
        # exactness before timing: the special-token probe and every language's warm-up text
        ref = enc["tokenizers"]
        exact = {t: True for t in live}
        probe = special_probe(path)
        with open(os.path.join(work, "%s.probe.txt" % m), "w", encoding="utf-8") as f:
            f.write(probe)
        with open(os.path.join(work, "%s.probe.ids" % m), "wb") as f:
            array("I", ref(probe)).tofile(f)
        manifest.setdefault("probe", {})[m] = {"text": "%s.probe.txt" % m, "ids": "%s.probe.ids" % m}
        for t in live[1:]:
            a, b = enc[t](probe), ref(probe)
            if a != b:
                exact[t] = "special-token probe: " + describe_diff(a, b, probe)
        res = {t: {} for t in live}
        for lg in langs:
            sl, warm = texts[lg]
            want = ref(warm)
            rec = {t: {"fresh": [], "warm": [], "exact": exact[t]} for t in live}
            for t in live[1:]:
                got = enc[t](warm)
                if got != want and rec[t]["exact"] is True:
                    rec[t]["exact"] = "warm-up text: " + describe_diff(got, want, warm)
            for r, text in enumerate(sl):
                nbytes = len(text.encode("utf-8"))
                order = live[r % len(live):] + live[:r % len(live)]
                ids = {}
                for t in order:
                    for mode in modes:
                        c0, w0 = time.process_time(), time.perf_counter()
                        got = enc[t](text)
                        w1, c1 = time.perf_counter(), time.process_time()
                        rec[t][mode].append({"cpu": c1 - c0, "wall": w1 - w0, "bytes": nbytes})
                        ids.setdefault((t, mode), got)
                refids = ids[("tokenizers", "fresh")]
                fn = "%s.%s.%d.ids" % (m, lg, r)
                with open(os.path.join(work, fn), "wb") as f:
                    array("I", refids).tofile(f)
                manifest["expected"][m][lg].append(fn)
                n_ids.setdefault((m, lg), len(refids))
                for (t, mode), got in ids.items():
                    if got != refids and rec[t]["exact"] is True:
                        rec[t]["exact"] = "%s round %d: %s" % (mode, r + 1, describe_diff(got, refids, text))
            for t in live:
                res[t][lg] = rec[t]
            log("%s %s (%d KiB x %d): %s" % (m, lg, slice_sizes[lg] // 1024, len(sl), ", ".join(
                "%s %s" % (t, "exact" if rec[t]["exact"] is True else "NOT EXACT") for t in live[1:])))
        py_res[m] = res
        del enc
    with open(os.path.join(work, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f)

    node_res, node_tools, node_loads, node_info = {}, [], {}, None
    if not args.no_node:
        node_info, why = run_node(work, argparse.Namespace(load_rounds=0 if (args.no_load or args.check_only)
                                                            else args.load_rounds), models)
        if node_info is None:
            notes.append(why)
            log(why)
        else:
            node_res = node_info["results"]
            node_tools = list(node_info["tools"])
            node_loads = node_info["load"]
            notes.extend(node_info["notes"])
    if not args.keep_work:
        shutil.rmtree(work, ignore_errors=True)

    loads = None
    if not args.no_load and not args.check_only:
        log("load: %d rounds" % args.load_rounds)
        loads = measure_loads(models, live_tools, args.load_rounds)

    # ---- output
    versions = [tool_version(t) for t in live_tools]
    if "supertok" in live_tools:
        import supertok
        versions[live_tools.index("supertok")] += " (imported from %s)" % os.path.relpath(
            os.path.dirname(os.path.abspath(supertok.__file__)), ROOT)
    if node_info:
        versions += ["node %s" % node_info["node"]] + list(node_info["tools"].values())
    print("Tools: %s. One thread (RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false, FASTOKENS_BPE_THREADS=1). "
          "Models: %s (tokenizer.json from tools/fetch_hf_tokenizers.py, sha256 in tests/data/hf_tokenizers.json)."
          % (", ".join(versions), ", ".join(models)))
    if notes:
        print("")
    for n in notes:
        print("- " + tidy(n))
    if args.check_only:
        print("\n### Exactness against tokenizers (ids of encode(text, add_special_tokens=False)), "
              "first %d KiB of each file\n" % args.check_kib)
        cols = live_tools[1:] + node_tools
        print("| model | lang | KiB | ids | " + " | ".join(cols) + " |")
        print("|---|---|---:|---:|" + "---|" * len(cols))
        for m in models:
            for lg in langs:
                row = [m, lg, "%d" % (slice_sizes[lg] // 1024), "%d" % n_ids[(m, lg)]]
                for t in live_tools[1:]:
                    e = py_res[m][t][lg]["exact"]
                    row.append("exact" if e is True else "NOT exact: " + e)
                for t in node_tools:
                    rec = node_res.get(m, {}).get(t, {}).get(lg)
                    row.append("n/a" if rec is None else ("exact" if rec["exact"] is True else "NOT exact: " + rec["exact"]))
                print("| " + " | ".join(row) + " |")
        return 0
    print_tables(models, langs, py_res, live_tools, node_res, node_tools, args.rounds, size, slice_sizes)
    if loads is not None:
        print_loads(loads, node_loads)
    return 0


if __name__ == "__main__":
    sys.exit(_results.run_and_record(main, _results.keyed("hf_encode.py", options=("--models", "--langs", "--check-kib"),
                                                          flags=("--check-only", "--no-node"))))
