#!/usr/bin/env python3
"""Does UBE make a tokenizer fairer across languages? The UBE paper's comparison, small, on our data.

Trains a byte-level (alphabet="bytes") and a UBE (alphabet="ube") BPE tokenizer at each of
--sizes (mode "paper", pattern o200k, every core) on one training file made of the same number
of bytes of each language of ../shared/corpora (--mib-per-language, whole lines; a language
whose file is shorter is topped up from its companion file: Hindi from hi_classical, Hebrew from
he_biblical). udhr.jsonl.xz is never trained on: it is the evaluation set.

Then evaluates all of them on the UDHR (udhr.jsonl.xz, one translation per record) with
supertok.evaluate, reference English, comparing UBE against bytes at each size (paired bootstrap
of ΔGini, --bootstrap resamples, seed 0; Wilcoxon signed-rank over the languages' mean token
counts with Holm and Benjamini-Hochberg), and saves the full report with its plots in
docs/fairness/. Finally it evaluates o200k_base, the largest UBE model and the two together
again and splits the evaluation's time into encoding and the rest (language facts, round-trip
audit, statistics).

Prints markdown tables on stdout (they become the fairness.py entry of bench/RESULTS.md) and
writes docs/fairness.md from the same numbers. Progress and training times go to stderr.

Run from the repository root:
    python bench/fairness.py            # 2 MiB per language, sizes 8192,16384,32768, bootstrap 10000
    python bench/fairness.py --quick    # smoke run: 0.2 MiB, sizes 1024,2048, bootstrap 200; writes nothing
"""
import argparse
import datetime
import lzma
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_CORPORA = os.path.join(ROOT, "..", "shared", "corpora")
OUT_DIR = os.path.join(ROOT, "docs", "fairness")
OUT_DOC = os.path.join(ROOT, "docs", "fairness.md")

# language: corpus files read in turn until the language has its bytes
LANGUAGES = [
    ("en", "English", ["en.txt.xz"]),
    ("de", "German", ["de.txt.xz"]),
    ("ru", "Russian", ["ru.txt.xz"]),
    ("el", "Greek", ["el.txt.xz"]),
    ("ar", "Arabic", ["ar.txt.xz"]),
    ("he", "Hebrew", ["he.txt.xz", "he_biblical.txt.xz"]),
    ("hi", "Hindi", ["hi.txt.xz", "hi_classical.txt.xz"]),
    ("zh", "Chinese", ["zh.txt.xz"]),
    ("ja", "Japanese", ["ja.txt.xz"]),
    ("ko", "Korean", ["ko.txt.xz"]),
    ("th", "Thai", ["th.txt.xz"]),
]


def log(msg):
    sys.stderr.write("fairness.py: %s\n" % msg)
    sys.stderr.flush()


def take_lines(corpora, files, budget):
    """Whole lines (their '\\n' kept) from FILES in turn, as many as fit BUDGET bytes of UTF-8.
    Returns (bytes, [(file, bytes taken from it)])."""
    out, used, taken = [], [], 0
    for name in files:
        path = os.path.join(corpora, name)
        if not os.path.exists(path):
            continue
        got = 0
        with lzma.open(path, "rb") as f:
            for line in f:
                if not line.endswith(b"\n"):
                    line += b"\n"
                if taken + len(line) > budget:
                    break
                out.append(line)
                taken += len(line)
                got += len(line)
        if got:
            used.append((name, got))
        if budget - taken < 4096:  # full (the next line did not fit)
            break
    return b"".join(out), used


def label(alphabet, size):
    return "%s-%s" % (alphabet, "%dk" % (size // 1024) if size % 1024 == 0 else str(size))


def fmt_p(p):
    return "%.2e" % p if p < 1e-3 else "%.4f" % p


def mib(n):
    return n / (1 << 20)


def timing_row(name, report, wall):
    """(name, encode wall, encode CPU, per-tokenizer work, corpus work, statistics, wall) of one
    evaluation: the per-tokenizer work is the round-trip audit with the vocabulary use (they grow
    with the text), the corpus work loading the corpus and its language facts (once per call)."""
    d = report.data
    res = d["results"].values()
    enc = sum(r["timing"]["encode_seconds"] for r in res)
    cpu = sum(r["timing"]["encode_cpu_seconds"] for r in res)
    audit = sum(r["timing"]["audit_seconds"] + r["timing"]["vocabulary_seconds"] for r in res)
    corpus = d["timing"]["load_seconds"] + d["timing"]["facts_seconds"]
    return name, enc, cpu, audit, corpus, d["timing"]["statistics_seconds"], wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib-per-language", type=float, default=None, help="MiB of each language (default 2; --quick 0.2)")
    ap.add_argument("--sizes", default=None, help="vocabulary sizes (default 8192,16384,32768; --quick 1024,2048)")
    ap.add_argument("--bootstrap", type=int, default=None, help="bootstrap resamples (default 10000; --quick 200)")
    ap.add_argument("--corpora", default=DEFAULT_CORPORA, help="the corpora folder (default ../shared/corpora)")
    ap.add_argument("--quick", action="store_true", help="smoke run: small sizes, a temporary output folder")
    args = ap.parse_args(argv)
    mib_each = args.mib_per_language if args.mib_per_language is not None else (0.2 if args.quick else 2.0)
    sizes = [int(s) for s in (args.sizes or ("1024,2048" if args.quick else "8192,16384,32768")).split(",")]
    bootstrap = args.bootstrap if args.bootstrap is not None else (200 if args.quick else 10000)
    threads = os.cpu_count() or 1

    corpora = os.path.normpath(args.corpora)
    udhr = os.path.join(corpora, "udhr.jsonl.xz")
    if not os.path.isdir(corpora) or not os.path.exists(udhr):
        print("fairness.py: skipped: the corpora folder %s (with udhr.jsonl.xz) is absent; put the shared corpora "
              "at ../shared/corpora or pass --corpora DIR" % corpora, file=sys.stderr)
        raise SystemExit(0)  # not a return: run_and_record would write an empty entry over the last run's

    sys.path.insert(0, os.path.join(ROOT, "py"))
    import supertok

    started = datetime.datetime.now()
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="supertok-fairness-") as tmp:
        # 1. the training text: the same bytes of each language, whole lines
        budget = int(mib_each * (1 << 20))
        train_path = os.path.join(tmp, "train.txt")
        taken = []
        with open(train_path, "wb") as out:
            for code, name, files in LANGUAGES:
                data, used = take_lines(corpora, files, budget)
                if not data:
                    log("%s: no corpus file, left out" % code)
                    continue
                out.write(data)
                taken.append((code, name, len(data), used))
        total = sum(t[2] for t in taken)
        log("training text: %d languages, %.2f MiB (%s)"
            % (len(taken), mib(total), ", ".join("%s %.2f" % (t[0], mib(t[2])) for t in taken)))

        # 2. train
        models, train_times = {}, {}
        for size in sizes:
            for alphabet in ("bytes", "ube"):
                lab = label(alphabet, size)
                t0, c0 = time.perf_counter(), time.process_time()
                enc = supertok.train(train_path, vocab_size=size, mode="paper", alphabet=alphabet, pattern="o200k",
                                     threads=threads, progress=False)
                train_times[lab] = (time.perf_counter() - t0, time.process_time() - c0)
                models[lab] = enc
                log("trained %s in %.1f s wall, %.1f s CPU (%d merges)"
                    % (lab, train_times[lab][0], train_times[lab][1], len(enc.merges)))

        # 3. evaluate on the UDHR
        labels = [label(a, s) for s in sizes for a in ("bytes", "ube")]
        comparisons = [(label("ube", s), label("bytes", s)) for s in sizes]
        log("evaluating %d tokenizers on %s (bootstrap %d)" % (len(labels), udhr, bootstrap))
        t0 = time.perf_counter()
        report = supertok.evaluate(udhr, [(models[lab], lab) for lab in labels], reference="eng",
                                   bootstrap=bootstrap, seed=0, threads=threads, comparisons=comparisons)
        eval_wall = time.perf_counter() - t0
        # the report goes into docs/: it names files as a reader can find them, not this machine's paths
        report.data["corpus"]["source"] = "udhr.jsonl.xz (the shared test corpora)"
        for t in report.data["tokenizers"]:
            t["source"] = "%s, trained by bench/fairness.py" % t["label"]
        out_dir = os.path.join(tmp, "fairness") if args.quick else OUT_DIR
        out_doc = os.path.join(tmp, "fairness.md") if args.quick else OUT_DOC
        written = report.save(out_dir)
        log("evaluated in %.1f s; wrote %d files in %s" % (eval_wall, len(written), out_dir))

        # 4c. the evaluation's own cost: o200k_base, the largest UBE model, and the two compared
        big = label("ube", max(sizes))
        cost = []
        for name, toks, comps in (("o200k_base", ["o200k_base"], None),
                                  (big, [(models[big], big)], None),
                                  ("%s vs o200k_base (1 comparison)" % big, [(models[big], big), "o200k_base"],
                                   [(big, "o200k_base")])):
            t0 = time.perf_counter()
            r = supertok.evaluate(udhr, toks, reference="eng", bootstrap=bootstrap, seed=0, threads=threads,
                                  comparisons=comps)
            cost.append(timing_row(name, r, time.perf_counter() - t0))
            log("timed the evaluation of %s" % name)

        d = report.data
        n_lang = len(report.languages)
        plot_names = [os.path.basename(p) for p in written if p.endswith(".png")]
        comp_index = {(c["a"], c["b"]): i for i, c in enumerate(d["comparisons"], 1)}

        # ---- tables ------------------------------------------------------------------------
        lines = []
        P = lines.append
        P("Training text: %s of each of %d languages (%s), whole lines, %.2f MiB in all; the same file for both "
          "alphabets. BPE, mode paper, pattern o200k, %d threads. Evaluated on the UDHR (udhr.jsonl.xz, %d "
          "translations, %d units), reference English, bootstrap %d resamples, seed 0."
          % ("%g MiB" % mib_each, len(taken), ", ".join(t[0] for t in taken), mib(total), threads, n_lang,
             d["corpus"]["units"], bootstrap))
        topped = [t for t in taken if len(t[3]) > 1]
        short = [t for t in taken if t[2] < budget - 4096]
        if topped:
            P("")
            P("Topped up from a second file: %s." % "; ".join(
                "%s: %s" % (t[0], ", ".join("%s %.2f MiB" % (f, mib(n)) for f, n in t[3])) for t in topped))
        if short:
            P("")
            P("Shorter than the others (their files ran out): %s."
              % ", ".join("%s %.2f MiB" % (t[0], mib(t[2])) for t in short))
        P("")
        P("Training time (wall / CPU s): %s." % ", ".join(
            "%s %.1f / %.1f" % (lab, train_times[lab][0], train_times[lab][1]) for lab in labels))
        P("")
        table_a = ["| vocab | Gini bytes | Gini UBE | change | ΔGini (UBE − bytes) | 95% interval | Wilcoxon p | "
                   "p (Holm) | p (BH) | UBE wins / ties / losses |",
                   "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
        for s in sizes:
            a, b = label("ube", s), label("bytes", s)
            c = report.compare(a, b)
            gb, gu = report.gini[b], report.gini[a]
            iv = c.get("interval")
            table_a.append("| %d | %.4f | %.4f | %+.1f%% | %+.4f | %s | %s | %s | %s | %d / %d / %d |" % (
                s, gb, gu, 100 * (gu - gb) / gb, c["delta_gini"], "[%+.4f, %+.4f]" % tuple(iv) if iv else "—",
                fmt_p(c["wilcoxon"]["pvalue"]), fmt_p(c["p_holm"]), fmt_p(c["p_bh"]), c["wins"], c["ties"],
                c["losses"]))
        P("### (a) Gini of the token premiums, UBE against byte-level (%d non-reference languages)" % (n_lang - 1))
        P("")
        lines += table_a
        P("")
        P("Wins: languages where UBE needs fewer tokens per unit than byte-level at the same size.")
        P("")

        groups = sorted({g for lab in labels for g in d["results"][lab]["groups"]["floor"]},
                        key=lambda g: (not g.isdigit(), g))
        table_b = ["| floor group | languages | " + " | ".join(labels) + " |", "|---|---:|" + "---:|" * len(labels)]
        for g in groups:
            first = d["results"][labels[0]]["groups"]["floor"].get(g, {})
            row = ["%s-byte" % g if g.isdigit() else "unknown", str(first.get("languages", 0))]
            for lab in labels:
                v = d["results"][lab]["groups"]["floor"].get(g)
                row.append("%.1f (%.2f)" % (v["mean_tokens"], v["mean_premium"]) if v else "—")
            table_b.append("| " + " | ".join(row) + " |")
        P("### (b) Mean tokens per unit by encoding-floor group (mean premium in brackets)")
        P("")
        lines += table_b
        P("")
        P("A unit is one line of a translation; a language's floor is the UTF-8 length most characters of its "
          "dominant script have. Means are over the group's languages.")
        P("")

        P("### (c) What the evaluation costs on the UDHR (%d languages), bootstrap %d" % (n_lang, bootstrap))
        P("")
        P("| evaluation | encode wall s | encode CPU s | audit and vocabulary use s (% of encode) | corpus: loading "
          "and language facts s (%) | statistics s (%) | evaluate() wall s |")
        P("|---|---:|---:|---:|---:|---:|---:|")
        verdicts = []
        for name, enc, cpu, audit, corpus_s, st, wall in cost:
            pct = (lambda x: 100 * x / enc) if enc else (lambda x: float("nan"))
            P("| %s | %.3f | %.3f | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f |"
              % (name, enc, cpu, audit, pct(audit), corpus_s, pct(corpus_s), st, pct(st), wall))
            verdicts.append((name, pct(audit), pct(audit + corpus_s + st)))
        P("")
        P("Against the target (everything but encoding under 10%% of the encoding time): the audit and vocabulary "
          "use take %s of encoding time; everything else included, %s. %s"
          % (", ".join("%s %.0f%%" % (n, a) for n, a, _ in verdicts),
             ", ".join("%s %.0f%%" % (n, t) for n, _, t in verdicts),
             "The target is met." if all(t < 10 for _, _, t in verdicts) else "The target is missed."))
        P("")
        P("Encode: the core's encode calls, every core (wall, and the process's CPU time). Audit and vocabulary "
          "use: decoding every unit and comparing it with its bytes, counting the ids used, dead merges and merge "
          "depths (for o200k_base this includes reading its rank file once). Corpus: reading and decompressing "
          "udhr.jsonl.xz and each language's bytes, characters and dominant script (once per call, whatever the "
          "number of tokenizers). Statistics: premiums, dispersion, the ΔGini bootstrap and the Wilcoxon tests "
          "(only the third row compares, so only it bootstraps). Measured once each, on a machine that may be "
          "shared.")
        body = "\n".join(lines)
        print(body)

        # ---- docs/fairness.md ------------------------------------------------------------------
        big_comp = comp_index.get((big, label("bytes", max(sizes))))
        doc = write_doc(report, sizes, taken, mib_each, bootstrap, started, table_a, table_b, plot_names,
                        big_comp, n_lang, topped, short, out_dir)
        with open(out_doc, "w", encoding="utf-8") as f:
            f.write(doc)
        log("wrote %s; %.0f s in all" % (out_doc, time.perf_counter() - t_start))
    return 0


def write_doc(report, sizes, taken, mib_each, bootstrap, started, table_a, table_b, plot_names, big_comp, n_lang,
              topped, short, out_dir):
    d = report.data
    rel = os.path.basename(out_dir)
    L = []
    P = L.append
    P("<!-- Generated by `python bench/fairness.py` from its last run: do not edit by hand, run it again. -->")
    P("")
    P("# Does UBE make tokenization fairer across languages? A small replication on our data")
    P("")
    P("Run: `python bench/fairness.py`, %s (supertok %s, %s backend)." % (started.strftime("%Y-%m-%d %H:%M"),
                                                                           d["supertok"], d["backend"]))
    P("")
    P("## What was run")
    P("")
    P("- Training text: %g MiB of UTF-8 (whole lines) from the start of each of %d languages' files in "
      "the shared test corpora (`--corpora`): %s, written to one file so that both alphabets train on identical text."
      % (mib_each, len(taken), ", ".join("%s (%s)" % (t[1], t[0]) for t in taken)))
    if topped:
        P("  %s: the main file is shorter, so it is topped up from %s."
          % (", ".join(t[1] for t in topped), ", ".join(t[3][-1][0] for t in topped)))
    if short:
        P("  Shorter than the others: %s." % ", ".join("%s %.2f MiB" % (t[1], mib(t[2])) for t in short))
    P("- Tokenizers: BPE, `mode=\"paper\"`, pattern o200k, every core, with `alphabet=\"bytes\"` and "
      "`alphabet=\"ube\"`, at vocabulary sizes %s." % ", ".join(str(s) for s in sizes))
    P("- Evaluation: `supertok.evaluate` on the UDHR (`udhr.jsonl.xz`: %d translations, none of it in the "
      "training text), reference English; token premium = mean tokens per unit over English's; Gini over the "
      "%d non-reference premiums; ΔGini (UBE − bytes) with a paired language bootstrap (%d resamples, seed 0, "
      "95%% percentile interval); Wilcoxon signed-rank over the languages' mean token counts, Holm and "
      "Benjamini-Hochberg across the %d comparisons." % (n_lang, n_lang - 1, bootstrap, len(sizes)))
    P("- Full report: [fairness/report.md](%s/report.md) ([HTML](%s/report.html), [JSON](%s/report.json))."
      % (rel, rel, rel))
    P("")
    P("## Gini, UBE against byte-level")
    P("")
    L.extend(table_a)
    P("")
    P("Wins: languages where UBE needs fewer tokens per unit than byte-level at the same size. A negative ΔGini "
      "means UBE spreads the cost more evenly.")
    P("")
    P("## Mean tokens per unit by encoding-floor group (mean premium in brackets)")
    P("")
    L.extend(table_b)
    P("")
    P("## Plots")
    P("")
    for name, caption in (("premium.png", "Token premium by language"), ("lorenz.png", "Lorenz curves"),
                          ("groups.png", "Mean premium by encoding-floor group")):
        if name in plot_names:
            P("- [%s](%s/%s)" % (caption, rel, name))
    dg = "delta-gini-%d.png" % big_comp if big_comp else None
    if dg and dg in plot_names:
        P("- [ΔGini bootstrap distribution, %s − %s](%s/%s)"
          % (label("ube", max(sizes)), label("bytes", max(sizes)), rel, dg))
    if not plot_names:
        P("- (no plots: matplotlib was not installed)")
    P("")
    P("## What it shows")
    P("")
    P(answer(report, sizes))
    P("")
    return "\n".join(L)


def answer(report, sizes):
    d = report.data
    parts = []
    lower, higher, unclear = [], [], []
    for s in sizes:
        c = report.compare(label("ube", s), label("bytes", s))
        iv = c.get("interval")
        desc = "%d (ΔGini %+.4f, 95%% interval [%+.4f, %+.4f])" % ((s, c["delta_gini"]) + tuple(iv)) if iv else \
            "%d (ΔGini %+.4f, no interval)" % (s, c["delta_gini"])
        if iv and iv[1] < 0:
            lower.append(desc)
        elif iv and iv[0] > 0:
            higher.append(desc)
        else:
            unclear.append(desc)
    if lower and not higher and not unclear:
        parts.append("Yes: on our data UBE lowers the Gini of the token premiums at every size tried, and the "
                     "bootstrap interval excludes zero each time: %s." % "; ".join(lower))
    else:
        if lower:
            parts.append("UBE lowers the Gini, with an interval below zero, at %s." % "; ".join(lower))
        if higher:
            parts.append("UBE raises the Gini, with an interval above zero, at %s." % "; ".join(higher))
        if unclear:
            parts.append("The interval includes zero, so no difference is shown, at %s." % "; ".join(unclear))
    rel = ["%d %+.1f%%" % (s, 100 * (report.gini[label("ube", s)] - report.gini[label("bytes", s)])
                          / report.gini[label("bytes", s)]) for s in sizes]
    parts.append("Relative to byte-level the Gini changes by %s." % ", ".join(rel))
    ws = []
    for s in sizes:
        c = report.compare(label("ube", s), label("bytes", s))
        ws.append("%d / %d / %d at %d (Wilcoxon p %s)"
                  % (c["wins"], c["ties"], c["losses"], s, fmt_p(c["wilcoxon"]["pvalue"])))
    parts.append("Language by language (%d languages), UBE needs fewer / as many / more tokens per unit than "
                 "byte-level in %s." % (len(report.languages), "; ".join(ws)))
    # floor groups at the largest size
    s = max(sizes)
    gb = d["results"][label("bytes", s)]["groups"]["floor"]
    gu = d["results"][label("ube", s)]["groups"]["floor"]
    ch = []
    for g in sorted(set(gb) & set(gu), key=lambda g: (not g.isdigit(), g)):
        if g.isdigit():
            ch.append("%s-byte %+.1f%% (%d languages)" % (
                g, 100 * (gu[g]["mean_tokens"] - gb[g]["mean_tokens"]) / gb[g]["mean_tokens"], gb[g]["languages"]))
    if ch:
        parts.append("The floor-group table says where it comes from: at %d, UBE changes the mean tokens per unit "
                     "by %s; UBE writes a 3-byte character as 2 base symbols instead of 3 and leaves text below "
                     "U+0800 as UTF-8, so the change should sit in the 3-byte group, and that is what the numbers "
                     "show." % (s, ", ".join(ch)))
    seq = {a: [report.gini[label(a, s)] for s in sorted(sizes)] for a in ("bytes", "ube")}
    gin = "; ".join("%s %s" % (a, " → ".join("%.4f" % g for g in v)) for a, v in seq.items())
    if len(sizes) > 1 and all(all(x < y for x, y in zip(v, v[1:])) for v in seq.values()):
        parts.append("For both alphabets the Gini grows with the vocabulary (%s), which fits the extra merges "
                     "serving the 11 training languages, English the reference among them, more than the other "
                     "UDHR languages." % gin)
    else:
        parts.append("The Gini by vocabulary size: %s." % gin)
    return " ".join(parts)


if __name__ == "__main__":
    import _results  # bench/RESULTS.md: this run's entry, in place of its earlier one
    sys.exit(_results.run_and_record(main, _results.keyed("fairness.py", options=("--mib-per-language", "--sizes"))))
