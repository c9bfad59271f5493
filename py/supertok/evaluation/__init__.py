"""What a tokenizer costs each language: the UBE paper's token premium, its dispersion (Gini,
variance, Theil) and the tests comparing tokenizers (paired bootstrap of ΔGini, Wilcoxon
signed-rank with Holm and Benjamini-Hochberg), with vocabulary use and a round-trip audit.

    report = supertok.evaluate(corpus, ["o200k_base", "my.stmodel:mine"])
    report.save("report/")

The definitions and what each number means: docs/evaluation.md.
"""
import collections
import itertools
import os
import time

from . import measure, stats
from .corpus import SAMPLE, Corpus, CorpusError, load_corpus
from .report import Comparison, Report
from .tokenizers import TokenizerError, resolve

__all__ = ["evaluate", "Report", "Comparison", "Corpus", "CorpusError", "TokenizerError", "load_corpus", "SAMPLE"]

DEFAULT_TOKENIZERS = ("cl100k_base", "o200k_base")


def _reference(languages, reference):
    if reference in languages:
        return reference
    close = [lang for lang in languages if lang.startswith(reference + "_") or lang.startswith(reference + "-")]
    if len(close) == 1:  # "eng" names "eng_Latn" in a FLORES folder
        return close[0]
    raise CorpusError("the reference language %r is not in the corpus%s (it has %s)"
                      % (reference, " (%s all match it: name one)" % ", ".join(close) if close else "",
                         ", ".join(languages[:20]) + (", ..." if len(languages) > 20 else "")))


def _dispersion(values):
    """Gini, variance, Theil-T and Theil-L of the non-reference premiums; None where undefined
    (variance of one value, Theil-L of a zero premium)."""
    out = {}
    for key, fn in (("gini", stats.gini), ("variance", stats.variance), ("theil_t", stats.theil_t),
                    ("theil_l", stats.theil_l)):
        try:
            out[key] = fn(values)
        except ValueError:
            out[key] = None
    out["mean_premium"] = sum(values) / len(values) if values else None
    return out


def _groups(facts, langs, key):
    by = collections.OrderedDict()
    for lang in sorted(langs, key=lambda lang: str(facts[lang][key])):
        by.setdefault(str(facts[lang][key]), []).append(lang)
    return by


def _results(counted, corpus, facts, ref):
    langs = {}
    for lang in corpus.languages:
        counts = counted.tokens[lang]
        tokens = sum(counts)
        f = facts[lang]
        langs[lang] = {"tokens": tokens, "mean_tokens": tokens / f["units"],
                       "tokens_per_byte": tokens / f["bytes"] if f["bytes"] else None,
                       "tokens_per_char": tokens / f["chars"] if f["chars"] else None,
                       "bytes_per_token": f["bytes"] / tokens if tokens else None}
    ref_mean = langs[ref]["mean_tokens"]
    if not ref_mean:
        raise CorpusError("the reference language %s has no token: its units are empty, so no premium is defined" % ref)
    for v in langs.values():
        v["premium"] = v["mean_tokens"] / ref_mean
    r = {"languages": langs}
    r.update(_dispersion([langs[lang]["premium"] for lang in corpus.languages if lang != ref]))
    r["groups"] = {}
    for key in ("floor", "script"):
        r["groups"][key] = {g: {"languages": len(members),
                                "mean_tokens": sum(langs[m]["mean_tokens"] for m in members) / len(members),
                                "mean_premium": sum(langs[m]["premium"] for m in members) / len(members)}
                            for g, members in _groups(facts, corpus.languages, key).items()}
    return r


def _vocabulary(tokenizer, counted):
    ordinary, merge_ids, depth = tokenizer.vocabulary()
    used = counted.used
    # every used id is an ordinary token (the units are encoded as ordinary text)
    dead = merge_ids.unused(used) if hasattr(merge_ids, "unused") else sum(1 for i in merge_ids if i not in used)
    hist = collections.Counter(depth[i] for i in merge_ids) if depth else {}
    out = {"ordinary": ordinary, "used": len(used), "active_utilization": len(used) / ordinary if ordinary else None,
           "merges": len(merge_ids), "dead_merges": dead,
           "depth_histogram": {str(k): v for k, v in sorted(hist.items())}}
    if tokenizer.training_counts is not None:  # the UBE paper's diagnostics on the training text itself
        tc = tokenizer.training_counts
        seen = {i for i, n in enumerate(tc) if n}
        out["training"] = {"used": len(seen), "active_utilization": len(seen) / ordinary if ordinary else None,
                           "dead_merges": sum(1 for i in merge_ids if not (i < len(tc) and tc[i]))}
    return out


def _comparisons(pairs, results, languages, ref, bootstrap, seed):
    if not pairs:
        return [], {}
    nonref = [lang for lang in languages if lang != ref]
    rows = {lab: [results[lab]["languages"][lang]["premium"] for lang in nonref] for pair in pairs for lab in pair}
    boot = stats.bootstrap_gini(rows, rounds=bootstrap, seed=seed) if bootstrap and nonref else {}
    out, samples = [], {}
    for a, b in pairs:
        ra, rb = results[a]["languages"], results[b]["languages"]
        ma = [ra[lang]["mean_tokens"] for lang in languages]
        mb = [rb[lang]["mean_tokens"] for lang in languages]
        w = stats.wilcoxon(ma, mb)
        c = {"a": a, "b": b, "delta_gini": results[a]["gini"] - results[b]["gini"], "interval": None,
             "wilcoxon": {"statistic": float(w.statistic), "pvalue": float(w.pvalue), "n": w.n, "method": w.method},
             "wins": sum(x < y for x, y in zip(ma, mb)), "ties": sum(x == y for x, y in zip(ma, mb)),
             "losses": sum(x > y for x, y in zip(ma, mb))}
        if boot:
            delta = [x - y for x, y in zip(boot[a], boot[b])]
            c["interval"] = list(stats.interval(delta, 0.95))
            samples[(a, b)] = delta
        out.append(c)
    ps = [c["wilcoxon"]["pvalue"] for c in out]
    for c, h, bh in zip(out, stats.holm(ps), stats.benjamini_hochberg(ps)):
        c["p_holm"], c["p_bh"] = h, bh
    return out, samples


def progress_lines(stream, live):
    """A progress callback writing to stream: with live (a terminal), a line redrawn per batch of
    languages; in any case one line per tokenizer when its languages are encoded."""
    def show(e):
        if live:
            stream.write("\rsupertok evaluate: %s: %d/%d languages (%s)\x1b[K"
                         % (e["label"], e["done"], e["languages"], e["lang"]))
        if e["done"] == e["languages"]:
            stream.write("%ssupertok evaluate: %s: encoded %d languages\n"
                         % ("\r\x1b[K" if live else "", e["label"], e["languages"]))
        stream.flush()
    return show


def _progress_fn(progress):
    if progress is None or progress is False:
        return None
    if progress is True:
        import sys
        return progress_lines(sys.stderr, True)
    if not callable(progress):
        raise TypeError("progress is a callable, True or None, not %s" % type(progress).__name__)
    return progress


def evaluate(corpus=None, tokenizers=DEFAULT_TOKENIZERS, *, reference="eng", bootstrap=10000, seed=0, threads=None,
             comparisons=None, split=None, pattern=None, progress=None):
    """Measure tokenizers on a corpus and compare them (docs/evaluation.md).

    corpus: a path (aligned {"lang","id","text"} JSON lines, UDHR JSON lines, a FLORES-style
    folder of {lang}.{split} files), a mapping {lang: [units]}, or None for the shipped sample
    (the UDHR's 30 articles in 52 languages, aligned). tokenizers: encoding names, model files,
    tiktoken rank files, tokenizer.json files ("SPEC:LABEL" labels one), Encoding objects.
    reference: the language premiums are relative to. bootstrap: resamples for the ΔGini
    intervals (0: none); seed: theirs. threads: encoding threads (default: every core).
    comparisons: [(a, b), ...] labels to compare (default: every pair, in the order given).
    split: the split of a FLORES folder holding several. pattern: the pre-tokenizer of tiktoken
    rank files (default o200k). progress: True (a line on stderr) or a callable given a dict
    per language encoded."""
    from .. import _get, version
    backend = _get()
    if isinstance(tokenizers, (str, os.PathLike)) or not hasattr(tokenizers, "__iter__"):
        tokenizers = [tokenizers]
    toks = [resolve(t, pattern=pattern) for t in tokenizers]
    if not toks:
        raise ValueError("evaluate needs at least one tokenizer")
    labels = [t.label for t in toks]
    dup = [lab for lab, n in collections.Counter(labels).items() if n > 1]
    if dup:
        raise ValueError("two tokenizers have the label %r: label them (\"SPEC:LABEL\" or (tokenizer, label))" % dup[0])
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError("bootstrap is a number of resamples >= 0, not %r" % (bootstrap,))
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError("seed is an int >= 0, not %r" % (seed,))
    if threads is None:
        threads = os.cpu_count() or 1
    if comparisons is None:
        pairs = list(itertools.combinations(labels, 2))
    else:
        pairs = [tuple(p) for p in comparisons]
        for p in pairs:
            if len(p) != 2 or p[0] not in labels or p[1] not in labels or p[0] == p[1]:
                raise ValueError("a comparison is a pair of two tokenizer labels (%s), not %r" % (", ".join(labels), p))
    show = _progress_fn(progress)
    start = time.perf_counter()
    c = load_corpus(corpus, split=split)
    loaded = time.perf_counter()
    empty = [lang for lang in c.languages if not c.units[lang]]
    if empty:
        raise CorpusError("%s: the language %s has no unit" % (c.source, empty[0]))
    ref = _reference(c.languages, reference)
    try:  # imported now, not inside the first tokenizer's audit (numpy counts ids when it is there)
        import numpy  # noqa: F401
    except ImportError:
        pass
    t0 = time.perf_counter()
    datas = {lang: [u.encode("utf-8") for u in c.units[lang]] for lang in c.languages}
    facts = measure.language_facts(c, datas, backend)
    results, timing = {}, {"load_seconds": loaded - start, "facts_seconds": time.perf_counter() - t0}
    for tok in toks:
        def each(lang, done, n, label=tok.label):
            if show is not None:
                show({"phase": "encode", "label": label, "lang": lang, "done": done, "languages": n})
        tok.encode_wall = tok.encode_cpu = 0.0
        counted = measure.count(tok, c, datas, threads=threads, progress=each)
        r = _results(counted, c, facts, ref)
        tv = time.perf_counter()
        r["vocabulary"] = _vocabulary(tok, counted)
        tv = time.perf_counter() - tv
        r["round_trip"] = {"units": sum(f["units"] for f in facts.values()), "failed": counted.failed,
                           "failures": counted.failures}
        r["timing"] = {"encode_seconds": tok.encode_wall, "encode_cpu_seconds": tok.encode_cpu,
                       "audit_seconds": counted.seconds - tok.encode_wall, "vocabulary_seconds": tv}
        results[tok.label] = r
    t1 = time.perf_counter()
    comps, samples = _comparisons(pairs, results, c.languages, ref, bootstrap, seed)
    timing["statistics_seconds"] = time.perf_counter() - t1
    timing["total_seconds"] = time.perf_counter() - start
    data = {"format": "supertok-evaluation", "version": 1, "supertok": version(), "backend": backend.name,
            "corpus": c.describe(), "reference": ref, "bootstrap": bootstrap, "seed": seed, "threads": threads,
            "tokenizers": [t.describe() for t in toks], "languages": facts, "results": results,
            "comparisons": comps, "timing": timing}
    return Report(data, samples)
