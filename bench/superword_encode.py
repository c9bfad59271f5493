#!/usr/bin/env python3
"""What superwords cost when encoding: a superword model against the same model with its
supermerges removed, on the same text (the target: within 1.5x).

    python bench/superword_encode.py                       # en, de, ru, zh, ja; BoundlessBPE, 32,768
    python bench/superword_encode.py --lang en --rounds 21 --algorithm superbpe --supermerges 4096

For each language: train on the first half of the corpus file's lines (`supertok.train`, paper
mode, o200k; script-aware for zh and ja, so Han and kana characters are pretokens that can join
into superwords), write the model and the same model without its `supermerges` section, then
encode the second half with both, the two taking turns round by round, and report CPU time
(time.process_time()) and wall time of each encode_ordinary call, median (min-max), the ratio of
the two per round, and how many fewer ids the superwords give. Before timing, the plain model's
ids must equal the superword model's ids with every supermerge token expanded back into its parts
(the exactness guard: the two models must be the same model but for the supermerges). Needs the
shared corpora (../shared/corpora or --corpora DIR).
"""
import argparse
import lzma
import os
import statistics
import sys
import tempfile
import time

import supertok

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT_AWARE = {"zh", "ja", "th"}


def strip_supermerges(model_text):
    """The model file without its supermerges section (its header line and its lines)."""
    lines = model_text.split("\n")
    out, skip = [], 0
    for line in lines:
        if skip:
            skip -= 1
            continue
        if line.startswith("supermerges "):
            skip = int(line.split()[1])
            continue
        out.append(line)
    return "\n".join(out)


def expand(enc, ids):
    """ids with every supermerge token replaced by its two parts, recursively."""
    n_regular = (512 if enc.alphabet == "ube" else 256) + len(enc.merges)
    sup = enc.supermerges
    out, stack = [], []
    for i in ids:
        stack.append(i)
        while stack:
            t = stack.pop()
            if n_regular <= t < n_regular + len(sup):
                left, right, _ = sup[t - n_regular]
                stack.append(right)
                stack.append(left)
            else:
                out.append(t)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lang", default="en,de,ru,zh,ja")
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--algorithm", default="boundless", choices=["boundless", "superbpe"])
    ap.add_argument("--supermerges", type=int, default=None, help="SuperBPE's s (default: vocab / 8)")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--save", default=None, metavar="DIR",
                    help="also write LANG.sw.stmodel, LANG.plain.stmodel and LANG.text there (for bench/superword_driver.c)")
    ap.add_argument("--corpora", default=os.environ.get("SUPERTOK_CORPORA", os.path.join(HERE, "..", "..", "shared", "corpora")))
    a = ap.parse_args()
    if not os.path.isdir(a.corpora):
        sys.exit("bench/superword_encode.py: no corpora at %s (--corpora DIR)" % a.corpora)
    print("command: `python bench/superword_encode.py %s`  " % " ".join(sys.argv[1:]))
    print("backend %s; load average %s at the start\n" % (supertok.backend(),
                                                        " ".join("%.2f" % x for x in os.getloadavg())))
    print("| language | model | supermerges | text bytes | ids plain | ids superword (fewer) | plain CPU s | superword CPU s | ratio CPU median (min-max) | ratio wall median |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for lang in a.lang.split(","):
        path = os.path.join(a.corpora, lang + ".txt.xz")
        if not os.path.exists(path):
            print("| %s | (absent: %s) |" % (lang, path))
            continue
        with lzma.open(path, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines(True)
        half = len(lines) // 2
        train, text = lines[:half], "".join(lines[half:])
        kw = dict(vocab_size=a.vocab, algorithm=a.algorithm, pattern="o200k", progress=False,
                  script_aware=lang in SCRIPT_AWARE, alphabet="ube" if lang in SCRIPT_AWARE else "bytes")
        if a.algorithm == "superbpe":
            kw["supermerges"] = a.supermerges or a.vocab // 8
        sw = supertok.train(iter(train), **kw)
        with tempfile.TemporaryDirectory() as tmp:
            p_sw, p_plain = os.path.join(tmp, "sw.stmodel"), os.path.join(tmp, "plain.stmodel")
            sw.save(p_sw)
            with open(p_sw, encoding="utf-8") as f:
                body = f.read()
            with open(p_plain, "w", encoding="utf-8") as f:
                f.write(strip_supermerges(body))
            sw = supertok.load_model(p_sw)
            plain = supertok.load_model(p_plain)
            if a.save:
                os.makedirs(a.save, exist_ok=True)
                for src, name in ((p_sw, "sw.stmodel"), (p_plain, "plain.stmodel")):
                    with open(src, "rb") as f, open(os.path.join(a.save, "%s.%s" % (lang, name)), "wb") as g:
                        g.write(f.read())
                with open(os.path.join(a.save, lang + ".text"), "w", encoding="utf-8", newline="") as f:
                    f.write(text)
        ids_sw, ids_plain = sw.encode_ordinary(text), plain.encode_ordinary(text)
        if expand(sw, ids_sw) != ids_plain:
            sys.exit("%s: the superword ids, expanded, differ from the plain model's: not the same model" % lang)
        cpu = {"sw": [], "plain": []}
        wall = {"sw": [], "plain": []}
        for r in range(a.rounds):
            order = [("sw", sw), ("plain", plain)] if r % 2 == 0 else [("plain", plain), ("sw", sw)]
            for name, enc in order:
                c0, w0 = time.process_time(), time.perf_counter()
                enc.encode_ordinary(text)
                cpu[name].append(time.process_time() - c0)
                wall[name].append(time.perf_counter() - w0)
        ratio = sorted(s / p for s, p in zip(cpu["sw"], cpu["plain"]))
        wratio = statistics.median(s / p for s, p in zip(wall["sw"], wall["plain"]))
        print("| %s | %s %s | %d | %d | %d | %d (%.1f%%) | %.3f | %.3f | **%.2fx** (%.2f-%.2f) | %.2fx |" % (
            lang, a.algorithm, "UBE script-aware" if lang in SCRIPT_AWARE else "bytes", len(sw.supermerges),
            len(text.encode("utf-8")), len(ids_plain), len(ids_sw), 100.0 * (1 - len(ids_sw) / len(ids_plain)),
            statistics.median(cpu["plain"]), statistics.median(cpu["sw"]), statistics.median(ratio), ratio[0],
            ratio[-1], wratio))
        sys.stdout.flush()
    print("\nload average %s at the end" % " ".join("%.2f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    _results.run_and_record(main, _results.keyed("superword_encode.py", options=("--lang", "--algorithm", "--supermerges", "--vocab")))
