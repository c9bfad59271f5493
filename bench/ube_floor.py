#!/usr/bin/env python3
"""The encoding floor per script: base symbols per character before any merge, UBE against
plain byte-level (the UBE paper's motivation).

Over ../shared/corpora/udhr.jsonl.xz (532 translations of the Universal Declaration of Human
Rights), each record is assigned its dominant script (the first entry of its `scripts` field);
per script it sums, over that script's records,

  characters   len(text)                                  (code points)
  byte-level   len(text.encode("utf-8"))                  (one symbol per UTF-8 byte)
  UBE          len(supertok.ube_encode_symbols(text))     (UTF-8 below U+0800, UTF-16LE above)

and prints symbols per character (sum of symbols / sum of characters) as a markdown table
sorted by the byte-level figure, highest first. Before counting, each record's UBE symbol count
is checked against the count the definition gives (1 symbol below U+0080, 2 below U+0800, 2 in
the rest of the BMP, 4 above), and the symbols must decode back to the text; a mismatch stops
the run (a fast wrong answer is not a result).

Run from the repository root:  python bench/ube_floor.py [--backend native] [--corpora DIR]
"""
import argparse
import json
import lzma
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_CORPORA = os.path.join(ROOT, "..", "shared", "corpora")


def definition_count(text):
    n = 0
    for ch in text:
        cp = ord(ch)
        n += 1 if cp < 0x80 else 2 if cp < 0x10000 else 4
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default=None, help="native, wasmtime or pywasm (default: the package's)")
    ap.add_argument("--corpora", default=DEFAULT_CORPORA, help="folder holding udhr.jsonl.xz")
    args = ap.parse_args(argv)

    sys.path.insert(0, os.path.join(ROOT, "py"))
    import supertok
    if args.backend:
        from supertok import backends
        supertok._set_backend(backends.load(args.backend))
    backend = args.backend or "default"

    path = os.path.join(args.corpora, "udhr.jsonl.xz")
    if not os.path.exists(path):
        sys.stderr.write("ube_floor.py: %s is absent; put the shared corpora at ../shared/corpora "
                         "or pass --corpora\n" % os.path.normpath(path))
        return 2

    per = {}
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            text, script = r["text"], r["scripts"][0][0]
            syms = supertok.ube_encode_symbols(text)
            if len(syms) != definition_count(text):
                sys.exit("ube_floor.py: %s: %d UBE symbols, the definition gives %d"
                         % (r["code"], len(syms), definition_count(text)))
            if supertok.ube_decode_symbols(syms, errors="strict") != text:
                sys.exit("ube_floor.py: %s: the UBE symbols do not decode back to the text" % r["code"])
            row = per.setdefault(script, [0, 0, 0, 0])
            row[0] += 1
            row[1] += len(text)
            row[2] += len(text.encode("utf-8"))
            row[3] += len(syms)

    cmd = "python bench/ube_floor.py" + "".join(" " + shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    print("Command: `%s` (backend: %s; corpus: udhr.jsonl.xz of the corpora folder)\n" % (cmd, backend))
    print("Base symbols per character before any merge, per dominant script (the first entry of "
          "each record's `scripts`), summed over that script's translations.\n")
    print("| script | translations | characters | byte-level symbols/char | UBE symbols/char | UBE / byte-level |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = sorted(per.items(), key=lambda kv: (-kv[1][2] / kv[1][1], kv[0]))
    tot = [0, 0, 0, 0]
    for script, (n, chars, utf8, ube) in rows:
        print("| %s | %d | %d | %.3f | %.3f | %.3f |" % (script, n, chars, utf8 / chars, ube / chars, ube / utf8))
        tot = [a + b for a, b in zip(tot, (n, chars, utf8, ube))]
    n, chars, utf8, ube = tot
    print("| **all** | %d | %d | %.3f | %.3f | %.3f |" % (n, chars, utf8 / chars, ube / chars, ube / utf8))
    return 0


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, _results.keyed("ube_floor.py", options=("--backend",))))
