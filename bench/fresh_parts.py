#!/usr/bin/env python3
"""Fresh text, by the kind of piece: supertok and the fastest exact peer on the two kinds of piece
a call on text never seen before meets, each alone.

    python bench/fresh_parts.py                         # en, de, ru; supertok and fastokens
    python bench/fresh_parts.py --langs en --mb 2 --runs 5
    python bench/fresh_parts.py --quick                 # a smoke run on the vendored UDHR excerpts

From the first --mb MB of each language file, the pieces of the o200k pattern (regex.findall of
o200k_base's pat_str), put end to end in the order first seen, make two texts:
- one-token: every piece whose bytes are one token of o200k_base (what the whole-piece lookup
  answers: most pieces of real text);
- new pieces: each distinct piece that is not one token, once (what the merge loop answers the
  first time a piece is seen, and a piece cache after).
Each tool encodes each text in a process of its own: the last 16 KB of the language file first
(the tool's setup out of the timing), then the text (first: no cache of the tool has seen any of
it), then the same text again (second). One thread (every thread knob of bench/encode.py set to
1). Cells: CPU ns a byte and a piece, the median (min-max) over --runs processes a tool, the tools
taking turns. The ids of every timed call are compared with tiktoken's; a tool that differs is
reported, never timed.
"""
import argparse
import base64
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from array import array

import encode  # the corpora, the tools' loaders and thread knobs of the encode benchmark
from encode import THREAD_VARS, corpus_bytes, load_tool

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCAB = os.path.join(ROOT, "py", "supertok", "vocab")
TOOLS = ["supertok", "fastokens"]


def worker(tool, text_path, warm_path):
    """One process: setup call, then the text twice; JSON on standard output."""
    fn = load_tool(tool, "o200k_base")
    with open(warm_path, encoding="utf-8") as f:
        fn(f.read())
    with open(text_path, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for call in ("first", "second"):
        c = time.process_time()
        ids = fn(text)
        out[call] = time.process_time() - c
        out[call + "_ids"] = hashlib.sha256(array("I", list(ids)).tobytes()).hexdigest()
    out["tokens"] = len(ids)
    print(json.dumps(out))
    return 0


def corpus_text(lang, mb):
    """The first mb MB of the language file (from a character's start) and its last 16 KB."""
    data = corpus_bytes(lang)
    return data[:int(mb * 1e6)].decode("utf-8", "ignore"), data[-16000:].decode("utf-8", "ignore")


def texts_of(head):
    """(one-token text, new-pieces text, their piece counts)."""
    import regex
    with open(os.path.join(VOCAB, "o200k_base.json"), encoding="utf-8") as f:
        pat = regex.compile(json.load(f)["pat_str"])
    with open(os.path.join(VOCAB, "o200k_base.tiktoken"), "rb") as f:
        tokens = {base64.b64decode(ln.split()[0]) for ln in f if ln.strip()}
    one, new, seen = [], [], set()
    for piece in pat.findall(head):
        if piece.encode("utf-8") in tokens:
            one.append(piece)
        elif piece not in seen:
            seen.add(piece)
            new.append(piece)
    return "".join(one), "".join(new), len(one), len(new)


def run_worker(tool, text_path, warm_path, env):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", tool, text_path, warm_path],
                       env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1][:160]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def cell(values, nbytes, npieces):
    if not values:
        return "n/a"
    med = statistics.median(values)
    return "%.1f (%.1f-%.1f) / %.0f" % (med / nbytes * 1e9, min(values) / nbytes * 1e9, max(values) / nbytes * 1e9,
                                        med / max(npieces, 1) * 1e9)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", default="en,de,ru")
    ap.add_argument("--mb", type=float, default=3.0, help="MB of each language file the texts come from (default 3)")
    ap.add_argument("--runs", type=int, default=3, help="processes a tool and text (default 3)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--quick", action="store_true", help="smoke run: the UDHR excerpts, 1 run, supertok alone")
    args = ap.parse_args()
    if args.quick:
        args.langs, args.runs, args.tools = "udhr", 1, "supertok"
    langs = args.langs.split(",")
    tools = [t for t in args.tools.split(",") if t]
    env = dict(os.environ)
    for v in THREAD_VARS:
        env[v] = "1"
    missing = []
    for t in tools + ["tiktoken"]:
        mod = "supertok._native" if t == "supertok" else t
        if subprocess.run([sys.executable, "-c", "import " + mod], env=env, capture_output=True).returncode:
            missing.append(t)
    if "tiktoken" in missing:
        print("tiktoken is not installed: it is the reference the ids are checked against", file=sys.stderr)
        return 2
    tools = [t for t in tools if t not in missing]
    print("Tools: %s%s. One thread; CPU time. Cells: ns a byte, median (min-max) over %d processes, "
          "then ns a piece.\n" % (", ".join(tools), " (not installed: %s)" % ", ".join(missing) if missing else "",
                                  args.runs))
    print("| lang | text | pieces | bytes | call | " + " | ".join(tools) + " | supertok / fastest peer |")
    print("|---|---|---:|---:|---|" + "---:|" * len(tools) + "---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for lang in langs:
            if lang != "udhr" and not os.path.exists(os.path.join(encode.CORPORA, lang + ".txt.xz")):
                print("  %s: no corpus file, skipped" % lang, file=sys.stderr)
                continue
            head, tail = corpus_text(lang, args.mb)
            one, new, n_one, n_new = texts_of(head)
            warm_path = os.path.join(tmp, lang + ".warm.txt")
            with open(warm_path, "w", encoding="utf-8") as f:
                f.write(tail)
            for kind, text, npieces in (("one-token", one, n_one), ("new pieces", new, n_new)):
                path = os.path.join(tmp, "%s.%s.txt" % (lang, kind.replace(" ", "_")))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                nbytes = len(text.encode("utf-8"))
                print("  %s %s: %d pieces, %d bytes" % (lang, kind, npieces, nbytes), file=sys.stderr)
                ref = run_worker("tiktoken", path, warm_path, env)
                if "error" in ref:
                    print("tiktoken failed: %s" % ref["error"], file=sys.stderr)
                    return 2
                times = {t: {"first": [], "second": []} for t in tools}
                wrong = {}
                for r in range(args.runs):
                    for t in tools[r % len(tools):] + tools[:r % len(tools)]:
                        got = run_worker(t, path, warm_path, env)
                        if "error" in got:
                            wrong[t] = got["error"]
                            continue
                        for call in ("first", "second"):
                            if got[call + "_ids"] != ref["first_ids"]:
                                wrong[t] = "not exact (%s call)" % call
                            times[t][call].append(got[call])
                for call in ("first", "second"):
                    cells = [wrong[t] if t in wrong else cell(times[t][call], nbytes, npieces) for t in tools]
                    ratio = ""
                    peers = [t for t in tools if t != "supertok" and t not in wrong and times[t][call]]
                    if "supertok" in tools and "supertok" not in wrong and peers:
                        best = min(statistics.median(times[t][call]) for t in peers)
                        ratio = "%.2f" % (best / statistics.median(times["supertok"][call]))
                    print("| %s | %s | %d | %d | %s | %s | %s |" % (lang, kind, npieces, nbytes, call,
                                                                  " | ".join(cells), ratio))
    print("\nsupertok / fastest peer: the peer's median time over supertok's (above 1: supertok is faster).")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(worker(*sys.argv[2:5]))
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, "fresh_parts.py"))
